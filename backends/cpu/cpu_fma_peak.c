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

/* name(iters): iters rounds of 12 independent FMAs of `lanes` floats in
 * vectors V (intrinsics P##_...: _mm256 or _mm512), built for isa; the sum
 * keeps the compiler from dropping them. Twelve named accumulators, not an
 * array: GCC keeps an array of vectors in memory, and the loop then times
 * store-to-load forwarding. */
#define FMA_ROUNDS(name, isa, V, P, lanes)                                                      \
    __attribute__((target(isa), noinline)) static float name(long iters)                      \
    {                                                                                          \
        const V a = P##_set1_ps(0.999999f), b = P##_set1_ps(1e-7f);                            \
        V c0 = P##_set1_ps(0), c1 = P##_set1_ps(1), c2 = P##_set1_ps(2), c3 = P##_set1_ps(3);  \
        V c4 = P##_set1_ps(4), c5 = P##_set1_ps(5), c6 = P##_set1_ps(6), c7 = P##_set1_ps(7);  \
        V c8 = P##_set1_ps(8), c9 = P##_set1_ps(9), c10 = P##_set1_ps(10);                     \
        V c11 = P##_set1_ps(11);                                                               \
        for (long i = 0; i < iters; i++) {                                                     \
            c0 = P##_fmadd_ps(c0, a, b);                                                       \
            c1 = P##_fmadd_ps(c1, a, b);                                                       \
            c2 = P##_fmadd_ps(c2, a, b);                                                       \
            c3 = P##_fmadd_ps(c3, a, b);                                                       \
            c4 = P##_fmadd_ps(c4, a, b);                                                       \
            c5 = P##_fmadd_ps(c5, a, b);                                                       \
            c6 = P##_fmadd_ps(c6, a, b);                                                       \
            c7 = P##_fmadd_ps(c7, a, b);                                                       \
            c8 = P##_fmadd_ps(c8, a, b);                                                       \
            c9 = P##_fmadd_ps(c9, a, b);                                                       \
            c10 = P##_fmadd_ps(c10, a, b);                                                     \
            c11 = P##_fmadd_ps(c11, a, b);                                                     \
        }                                                                                      \
        V s = P##_add_ps(P##_add_ps(P##_add_ps(c0, c1), P##_add_ps(c2, c3)),                   \
                         P##_add_ps(P##_add_ps(c4, c5), P##_add_ps(c6, c7)));                  \
        s = P##_add_ps(s, P##_add_ps(P##_add_ps(c8, c9), P##_add_ps(c10, c11)));               \
        float out[lanes];                                                                      \
        P##_storeu_ps(out, s);                                                                 \
        return out[0] + out[lanes - 1];                                                        \
    }

FMA_ROUNDS(fma_rounds, "avx2,fma", __m256, _mm256, 8)
FMA_ROUNDS(fma_rounds_512, "avx512f", __m512, _mm512, 16)

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
