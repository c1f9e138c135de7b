/* backends/cpu/cpu_fma_peak.c - one core's float32 FMA peak, measured.
 *
 * Why: the estimate of cpu_info.c multiplies the FLOPs a cycle of the family
 * and model cpuid reports by the clock the kernel reports. In a virtual
 * machine both can be wrong: this project's machine reports a generic
 * family 23 model 1 (Zen, 16 FLOP/cycle) at a nominal 2.00 GHz, and OpenBLAS
 * then ran one core's sgemm at 132% of that "peak", which made the check
 * "sgemm below half the peak" meaningless. A loop of independent FMAs, timed,
 * is the peak the core gives this process, whatever it reports.
 *
 * The loop keeps 12 accumulators of 8 floats: more than an FMA's latency (4-5
 * cycles) times the FMA pipes (2) of any x86 core, so the pipes never wait.
 * nn_cpu_fma_peak_measured runs the AVX2 width: the width OpenBLAS's Zen and
 * Haswell kernels use, what its sgemm is set against. On a CPU without FMA it
 * gives 0 (unknown).
 *
 * nn_cpu_fma_peak_widest also runs the same loop 16 floats wide where our
 * AVX-512 kernels run (nn_cpu_avx512_kernels) and takes the faster: those
 * kernels are held to it. On the 2-core Zen 5 of 2026-11-29 the AVX2 loop
 * gave 136 GFLOP/s and our direct convolution ran 198-205 GFLOP/s on one
 * thread, so a one-thread calibration was marked contradictory (a rate above
 * 1.5x the peak) in one run of two. */
#include "cpu_info.h"
#include "cpu_internal.h"

#include <pthread.h>
#include <time.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define FMA_ACCUMULATORS 12

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* iters rounds of 12 independent 8-lane FMAs; the sum keeps the compiler from
 * dropping them. Twelve named accumulators, not an array: GCC keeps an array
 * of vectors in memory, and the loop then times store-to-load forwarding. */
__attribute__((target("avx2,fma"), noinline)) static float fma_rounds(long iters)
{
    const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    __m256 c0 = _mm256_set1_ps(0), c1 = _mm256_set1_ps(1), c2 = _mm256_set1_ps(2);
    __m256 c3 = _mm256_set1_ps(3), c4 = _mm256_set1_ps(4), c5 = _mm256_set1_ps(5);
    __m256 c6 = _mm256_set1_ps(6), c7 = _mm256_set1_ps(7), c8 = _mm256_set1_ps(8);
    __m256 c9 = _mm256_set1_ps(9), c10 = _mm256_set1_ps(10), c11 = _mm256_set1_ps(11);
    for (long i = 0; i < iters; i++) {
        c0 = _mm256_fmadd_ps(c0, a, b);
        c1 = _mm256_fmadd_ps(c1, a, b);
        c2 = _mm256_fmadd_ps(c2, a, b);
        c3 = _mm256_fmadd_ps(c3, a, b);
        c4 = _mm256_fmadd_ps(c4, a, b);
        c5 = _mm256_fmadd_ps(c5, a, b);
        c6 = _mm256_fmadd_ps(c6, a, b);
        c7 = _mm256_fmadd_ps(c7, a, b);
        c8 = _mm256_fmadd_ps(c8, a, b);
        c9 = _mm256_fmadd_ps(c9, a, b);
        c10 = _mm256_fmadd_ps(c10, a, b);
        c11 = _mm256_fmadd_ps(c11, a, b);
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
                             _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7)));
    s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11)));
    float out[8];
    _mm256_storeu_ps(out, s);
    return out[0] + out[7];
}

/* The same 12 chains 16 floats wide. */
__attribute__((target("avx512f"), noinline)) static float fma_rounds_512(long iters)
{
    const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
    __m512 c0 = _mm512_set1_ps(0), c1 = _mm512_set1_ps(1), c2 = _mm512_set1_ps(2);
    __m512 c3 = _mm512_set1_ps(3), c4 = _mm512_set1_ps(4), c5 = _mm512_set1_ps(5);
    __m512 c6 = _mm512_set1_ps(6), c7 = _mm512_set1_ps(7), c8 = _mm512_set1_ps(8);
    __m512 c9 = _mm512_set1_ps(9), c10 = _mm512_set1_ps(10), c11 = _mm512_set1_ps(11);
    for (long i = 0; i < iters; i++) {
        c0 = _mm512_fmadd_ps(c0, a, b);
        c1 = _mm512_fmadd_ps(c1, a, b);
        c2 = _mm512_fmadd_ps(c2, a, b);
        c3 = _mm512_fmadd_ps(c3, a, b);
        c4 = _mm512_fmadd_ps(c4, a, b);
        c5 = _mm512_fmadd_ps(c5, a, b);
        c6 = _mm512_fmadd_ps(c6, a, b);
        c7 = _mm512_fmadd_ps(c7, a, b);
        c8 = _mm512_fmadd_ps(c8, a, b);
        c9 = _mm512_fmadd_ps(c9, a, b);
        c10 = _mm512_fmadd_ps(c10, a, b);
        c11 = _mm512_fmadd_ps(c11, a, b);
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
                             _mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11)));
    return _mm512_reduce_add_ps(s);
}

/* The best of seven timed runs of `rounds` (iters rounds of 12 FMAs of
 * `lanes` floats: 96 MFLOP at 8 lanes, 2-3 ms on today's cores; the best: an
 * interruption only ever slows a run). */
static double measure_gflops(float (*rounds)(long), int lanes)
{
    const long iters = 500000;
    const double flops = (double)iters * FMA_ACCUMULATORS * lanes * 2;
    volatile float sink = rounds(iters / 10);   /* wake the core and its clock */
    double best = 0;
    for (int r = 0; r < 7; r++) {
        double t0 = now_s();
        sink = rounds(iters);
        double dt = now_s() - t0;
        if (dt > 0 && flops / dt / 1e9 > best)
            best = flops / dt / 1e9;
    }
    (void)sink;
    return best;
}

static double measured, widest;
static pthread_once_t measured_once = PTHREAD_ONCE_INIT, widest_once = PTHREAD_ONCE_INIT;

static void measure_once(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        measured = measure_gflops(fma_rounds, 8);
}

double nn_cpu_fma_peak_measured(void)
{
    if (pthread_once(&measured_once, measure_once) != 0)
        return 0;
    return measured;
}

static void measure_widest_once(void)
{
    widest = nn_cpu_fma_peak_measured();
    if (widest > 0 && nn_cpu_avx512_kernels()) {
        double wide = measure_gflops(fma_rounds_512, 16);
        if (wide > widest)
            widest = wide;
    }
}

double nn_cpu_fma_peak_widest(void)
{
    if (pthread_once(&widest_once, measure_widest_once) != 0)
        return 0;
    return widest;
}

#else

double nn_cpu_fma_peak_measured(void)
{
    return 0;
}

double nn_cpu_fma_peak_widest(void)
{
    return 0;
}

#endif
