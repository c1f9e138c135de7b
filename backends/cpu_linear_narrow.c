/* backends/cpu_linear_narrow.c - linear_backward's input gradient when the
 * input is narrow: dx (n, in) = dy (n, out) . w (out, in) for in <= 24, as an
 * AVX2 kernel. Each row of dx is held in three 8-lane registers, w copied
 * into rows of 24 floats (zero beyond in), and four rows share every load.
 *
 * Why: OpenBLAS packs w on every call and its micro-tiles fit a 20-wide
 * product badly. The Jacobian's reverse passes (issue 13) are exactly that,
 * 100 x 400 . 400 x 20 forty thousand times at val 100: sgemm ran them at
 * about 27 GFLOP/s, a third of one core's peak, its packing a fifth of the
 * time. The same arithmetic as sgemm (float, fused multiply-adds, summed
 * over out in order), so the parity suite's tolerances hold.
 */
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
    /* NNLAB_NO_NARROW_DX=1 keeps sgemm: the parity tests run both paths.
     * Atomic: threads may race to compute it, and all compute the same. */
    static _Atomic int enabled = -1;
    if (enabled < 0) {
        __builtin_cpu_init();
        const char *off = getenv("NNLAB_NO_NARROW_DX");
        enabled = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                  !(off && *off && strcmp(off, "0") != 0);
    }
    return enabled && in >= 1 && in <= NARROW_MAX_IN;
}

/* w (out, in) copied into rows of 24 floats, zero beyond in: every load is
 * then a whole vector (masked loads are slow on some x86 cores). */
static float *padded_w(const float *w, int in, int out)
{
    float *p = nn_alloc_aligned((size_t)out * NARROW_MAX_IN * sizeof *p);
    if (!p)
        return NULL;
    for (int k = 0; k < out; k++) {
        memcpy(p + (size_t)k * NARROW_MAX_IN, w + (size_t)k * in, (size_t)in * sizeof *p);
        memset(p + (size_t)k * NARROW_MAX_IN + in, 0, (size_t)(NARROW_MAX_IN - in) * sizeof *p);
    }
    return p;
}

/* One row's three vectors into dx's `in` columns. */
KERNEL void store_row(float *d, int in, __m256 a, __m256 b, __m256 c)
{
    float tmp[NARROW_MAX_IN];
    _mm256_storeu_ps(tmp, a);
    _mm256_storeu_ps(tmp + 8, b);
    _mm256_storeu_ps(tmp + 16, c);
    memcpy(d, tmp, (size_t)in * sizeof *d);
}

/* Four rows of dx from four rows of dy and the padded w (pw). */
KERNEL void narrow_rows4(const float *dy, int out, const float *pw, int in, float *dx)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, b0 = a0, b1 = a0, b2 = a0;
    __m256 c0 = a0, c1 = a0, c2 = a0, d0 = a0, d1 = a0, d2 = a0;
    const float *y0 = dy, *y1 = dy + out, *y2 = dy + 2 * (size_t)out, *y3 = dy + 3 * (size_t)out;
    for (int k = 0; k < out; k++) {
        const float *wk = pw + (size_t)k * NARROW_MAX_IN;
        __m256 w0 = _mm256_load_ps(wk), w1 = _mm256_load_ps(wk + 8), w2 = _mm256_load_ps(wk + 16);
        __m256 s = _mm256_broadcast_ss(y0 + k);
        a0 = _mm256_fmadd_ps(s, w0, a0), a1 = _mm256_fmadd_ps(s, w1, a1), a2 = _mm256_fmadd_ps(s, w2, a2);
        s = _mm256_broadcast_ss(y1 + k);
        b0 = _mm256_fmadd_ps(s, w0, b0), b1 = _mm256_fmadd_ps(s, w1, b1), b2 = _mm256_fmadd_ps(s, w2, b2);
        s = _mm256_broadcast_ss(y2 + k);
        c0 = _mm256_fmadd_ps(s, w0, c0), c1 = _mm256_fmadd_ps(s, w1, c1), c2 = _mm256_fmadd_ps(s, w2, c2);
        s = _mm256_broadcast_ss(y3 + k);
        d0 = _mm256_fmadd_ps(s, w0, d0), d1 = _mm256_fmadd_ps(s, w1, d1), d2 = _mm256_fmadd_ps(s, w2, d2);
    }
    store_row(dx, in, a0, a1, a2);
    store_row(dx + in, in, b0, b1, b2);
    store_row(dx + 2 * (size_t)in, in, c0, c1, c2);
    store_row(dx + 3 * (size_t)in, in, d0, d1, d2);
}

KERNEL void narrow_row1(const float *dy, int out, const float *pw, int in, float *dx)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0;
    for (int k = 0; k < out; k++) {
        const float *wk = pw + (size_t)k * NARROW_MAX_IN;
        __m256 s = _mm256_broadcast_ss(dy + k);
        a0 = _mm256_fmadd_ps(s, _mm256_load_ps(wk), a0);
        a1 = _mm256_fmadd_ps(s, _mm256_load_ps(wk + 8), a1);
        a2 = _mm256_fmadd_ps(s, _mm256_load_ps(wk + 16), a2);
    }
    store_row(dx, in, a0, a1, a2);
}

__attribute__((target("avx2,fma")))
static void narrow_range(const float *dy, int out, const float *pw, int in, float *dx, size_t lo,
                         size_t hi)
{
    size_t i = lo;
    for (; i + NARROW_ROWS <= hi; i += NARROW_ROWS)
        narrow_rows4(dy + i * (size_t)out, out, pw, in, dx + i * (size_t)in);
    for (; i < hi; i++)
        narrow_row1(dy + i * (size_t)out, out, pw, in, dx + i * (size_t)in);
}

#else

int nn_cpu_narrow_dx_usable(int in)
{
    (void)in;
    return 0;
}

static float *padded_w(const float *w, int in, int out)
{
    (void)w, (void)in, (void)out;
    return NULL;
}

static void narrow_range(const float *dy, int out, const float *pw, int in, float *dx, size_t lo,
                         size_t hi)
{
    (void)dy, (void)out, (void)pw, (void)in, (void)dx, (void)lo, (void)hi;
}

#endif

typedef struct narrow_task {
    const float *dy, *w;
    float *dx;
    int n, in, out, parts;
} narrow_task;

static void narrow_item(void *ctx, int item, int part)
{
    const narrow_task *t = ctx;
    (void)part;
    size_t lo, hi;
    nn_cpu_split_range((size_t)t->n, item, t->parts, NARROW_ROWS, &lo, &hi);
    if (hi > lo)
        narrow_range(t->dy, t->out, t->w, t->in, t->dx, lo, hi);
}

int nn_cpu_narrow_dx(nn_backend *b, int n, int in, int out, const float *dy, const float *w,
                     float *dx)
{
    double macs = (double)n * in * out;
    int parts = nn_cpu_threads_for(b, macs, PAR_MIN_MACS);
    float *pw = padded_w(w, in, out);
    if (!pw)
        return nn_backend_fail(b, "linear_backward: out of memory for %d x %d weights", out, in);
    narrow_task t = { dy, pw, dx, n, in, out, parts };
    nn_cpu_par_for(b, parts, parts, narrow_item, &t);
    nn_free_aligned(pw);
    return 0;
}
