/* backends/cpu/cpu_linear_narrow.c - linear_backward's input gradient when the
 * input is narrow: dx (n, in) = dy (n, out) . w (out, in) for in a multiple
 * of 4 up to 24, by an AVX2 kernel.
 *
 * Why: the Jacobian's reverse passes are exactly this product,
 * 100 x 400 . 400 x 20, forty thousand times at val 100. OpenBLAS packs dy
 * on every call (a fifth of the time in perf) and its micro-tiles fit a
 * 20-wide result badly: it ran them at 28 GFLOP/s on one core where this
 * kernel runs at 38 (the same harness, side by side).
 *
 * How: a row of dx is held in registers, eight columns a ymm register and a
 * last four in an xmm one (on cores that split 256-bit operations, a 4-wide
 * tail costs half an 8-wide one: 20 columns take 5 half-operations, not 6);
 * four rows share every load of a row of w, which is read where it lies
 * (no copy, no packing). The arithmetic is sgemm's: float, fused
 * multiply-adds, summed over out in order, so the parity tolerances hold.
 * On a CPU with AVX-512, cpu_avx512.c's twin runs instead: a row in one or
 * two zmm registers, the last one masked (the same results). */
#include "cpu_avx512.h"
#include "cpu_internal.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define NARROW_MAX_IN 24
#define NARROW_ROWS 4

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define KERNEL static inline __attribute__((always_inline, target("avx2,fma")))

int nn_cpu_narrow_dx_usable(int in)
{
    /* NNLAB_NO_NARROW_DX=1 keeps sgemm: the parity tests run both paths. */
    return nn_cpu_switch_on(NN_CPU_SW_NARROW_DX) && in >= 4 && in <= NARROW_MAX_IN && in % 4 == 0;
}

/* R rows (1..4) of dx with V 8-wide vectors and T (0 or 1) 4-wide tail a
 * row: in = 8V + 4T. Constant arguments at every call, so the loops unroll
 * and the accumulators live in registers. */
KERNEL void narrow_rows(const float *dy, int out, const float *w, float *dx, const int R, const int V,
                        const int T)
{
    const int in = 8 * V + 4 * T;
    __m256 acc[NARROW_ROWS][3];
    __m128 tail[NARROW_ROWS];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
#pragma GCC unroll 3
        for (int v = 0; v < V; v++)
            acc[r][v] = _mm256_setzero_ps();
        tail[r] = _mm_setzero_ps();
    }
    for (int k = 0; k < out; k++) {
        const float *wk = w + (size_t)k * (size_t)in;
        __m256 wv[3];
        __m128 wt = T ? _mm_loadu_ps(wk + 8 * V) : _mm_setzero_ps();
#pragma GCC unroll 3
        for (int v = 0; v < V; v++)
            wv[v] = _mm256_loadu_ps(wk + 8 * v);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            __m256 s = _mm256_broadcast_ss(dy + (size_t)r * (size_t)out + k);
#pragma GCC unroll 3
            for (int v = 0; v < V; v++)
                acc[r][v] = _mm256_fmadd_ps(s, wv[v], acc[r][v]);
            if (T)
                tail[r] = _mm_fmadd_ps(_mm256_castps256_ps128(s), wt, tail[r]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
        float *d = dx + (size_t)r * (size_t)in;
#pragma GCC unroll 3
        for (int v = 0; v < V; v++)
            _mm256_storeu_ps(d + 8 * v, acc[r][v]);
        if (T)
            _mm_storeu_ps(d + 8 * V, tail[r]);
    }
}

/* Rows [lo, hi) of dx, four at a time, at one width. */
KERNEL void narrow_span(const float *dy, int out, const float *w, float *dx, size_t lo, size_t hi,
                        const int V, const int T)
{
    const size_t in = (size_t)(8 * V + 4 * T);
    size_t i = lo;
    for (; i + NARROW_ROWS <= hi; i += NARROW_ROWS)
        narrow_rows(dy + i * (size_t)out, out, w, dx + i * in, NARROW_ROWS, V, T);
    for (; i < hi; i++)
        narrow_rows(dy + i * (size_t)out, out, w, dx + i * in, 1, V, T);
}

/* One instance per width, so that each is compiled with its constants. */
#define NARROW_WIDTH(V, T)                                                                            \
    __attribute__((target("avx2,fma"))) static void narrow_##V##_##T(const float *dy, int out,      \
                                                                      const float *w, float *dx,     \
                                                                      size_t lo, size_t hi)          \
    {                                                                                                 \
        narrow_span(dy, out, w, dx, lo, hi, V, T);                                                    \
    }
NARROW_WIDTH(0, 1)
NARROW_WIDTH(1, 0)
NARROW_WIDTH(1, 1)
NARROW_WIDTH(2, 0)
NARROW_WIDTH(2, 1)
NARROW_WIDTH(3, 0)

typedef void (*narrow_fn)(const float *dy, int out, const float *w, float *dx, size_t lo, size_t hi);

/* The instance for in = 4, 8, ..., 24. */
static narrow_fn narrow_for(int in)
{
    static const narrow_fn by_quarter[] = { narrow_0_1, narrow_1_0, narrow_1_1, narrow_2_0, narrow_2_1,
                                            narrow_3_0 };
    return by_quarter[in / 4 - 1];
}

typedef struct narrow_task {
    narrow_fn fn;
    const float *dy, *w;
    float *dx;
    int n, in, out, parts;
} narrow_task;

static void narrow_item(void *ctx, int item, int part)
{
    const narrow_task *t = ctx;
    size_t lo, hi;
    (void)part;
    nn_cpu_split_range((size_t)t->n, item, t->parts, NARROW_ROWS, &lo, &hi);
    if (hi <= lo)
        return;
    if (nn_cpu_avx512_kernels())
        nn_avx512_narrow_dx(t->dy, t->out, t->w, t->dx, t->in, lo, hi);
    else
        t->fn(t->dy, t->out, t->w, t->dx, lo, hi);
}

int nn_cpu_narrow_dx(nn_backend *b, int n, int in, int out, const float *dy, const float *w,
                     float *dx)
{
    if (!nn_cpu_narrow_dx_usable(in))
        return nn_backend_fail(b, "linear_backward: no narrow kernel for in=%d", in);
    int parts = nn_cpu_threads_for(b, (double)n * in * out, PAR_MIN_MACS);
    narrow_task t = { narrow_for(in), dy, w, dx, n, in, out, parts };
    nn_cpu_par_for(b, parts, parts, narrow_item, &t);
    return 0;
}

#else /* not x86-64 with GCC or clang: sgemm does it */

int nn_cpu_narrow_dx_usable(int in)
{
    (void)in;
    return 0;
}

int nn_cpu_narrow_dx(nn_backend *b, int n, int in, int out, const float *dy, const float *w,
                     float *dx)
{
    (void)n, (void)out, (void)dy, (void)w, (void)dx;
    return nn_backend_fail(b, "linear_backward: no narrow kernel for in=%d", in);
}

#endif
