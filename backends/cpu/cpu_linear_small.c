/* backends/cpu/cpu_linear_small.c - a linear layer's products at small batches
 * (n up to SMALL_DW_MAX_N), by AVX2 kernels: the weight gradient
 * dw (out, in) = dy^T (out, n) . x (n, in), the forward
 * y (n, out) = x (n, in) . w^T + bias and the input gradient
 * dx (n, in) = dy (n, out) . w (out, in).
 *
 * Why (small batches): at batch 4 this product is an outer-product
 * sum of rank 4 whose result (784 x 128 floats in mnist-mlp-128, 400 KB) is
 * far larger than its inputs. OpenBLAS, given beta = 0, first clears the
 * whole result with memset (sgemm_beta), then packs x and runs its kernel
 * over a k of 4: under callgrind a batch-4 step of mnist-mlp-128 spent 24%
 * of its instructions in that memset and 10% in the packing. This kernel
 * writes each element of dw once, from registers. The forward has the
 * mirror problem: OpenBLAS packs all of w (read and written again) for a
 * product with 4 rows; the kernel below reads each row of w once. So does
 * the input gradient's (small_dx_tile): under perf, LeNet-5's batch-4 step
 * on two threads spent 4% of its samples in OpenBLAS's packing and kernel
 * for its linear layers' dx (400 x 120 and 120 x 84 weights, 4 rows);
 * with this kernel the backward went 55 -> 51 us, mnist-mlp-1000's (whose
 * Adam-fused backward still computes dx apart) 490 -> 415 us (decision 0164).
 *
 * How: a row of dw is 8 columns a ymm register; the n rows of x it reads
 * (n x in floats: 12.5 KB at batch 4) stay in L1 across the rows of dw. The
 * arithmetic is sgemm's: float, fused multiply-adds, summed over the batch
 * in order, so the parity tolerances hold; tests/parity-im2col.sh runs the
 * parity suite with NNLAB_NO_SMALL_DW=1 as well (OpenBLAS's path). On a CPU
 * with AVX-512 both products run cpu_avx512.c's 16-wide twins instead. */
#include "cpu_internal.h"

#include <stdlib.h>

#include "cpu_avx512.h"
#include "cpu_small_dw.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

int nn_cpu_small_dw_usable(int n)
{
    return nn_cpu_switch_on(NN_CPU_SW_SMALL_DW) && n >= 1 && n <= SMALL_DW_MAX_N;
}

#define KERNEL static inline __attribute__((always_inline, target("avx2,fma")))

_Static_assert(NN_AVX512_SMALL_MAX_N == SMALL_DW_MAX_N, "the AVX-512 twins' batch limit");

/* dw[o][i] for i in [0, in) and o in [lo, hi): sum over r < N of
 * dy[r][o] * x[r][i]. N is a constant at every call (below), so the loop
 * over the batch unrolls and its coefficients live in registers. */
KERNEL void small_dw_block(const int N, int in, int out, int lo, int hi, const float *dy,
                           const float *x, float *dw)
{
    for (int o = lo; o < hi; o++) {
        float coef[SMALL_DW_MAX_N];
        __m256 cv[SMALL_DW_MAX_N];
        nn_small_dw_coefs(N, dy, out, o, coef, cv);
        float *row = dw + (size_t)o * (size_t)in;
        int i = 0;
        for (; i + 8 <= in; i += 8)
            _mm256_storeu_ps(row + i, nn_small_dw_lanes8(N, cv, x, in, i));
        for (; i < in; i++)
            row[i] = nn_small_dw_one(N, coef, x, in, i);
    }
}

__attribute__((target("avx2,fma"))) void nn_cpu_small_dw_rows(int n, int in, int out,
                                                              const float *dy, const float *x,
                                                              float *dw, int lo, int hi)
{
    if (nn_cpu_avx512_kernels()) {
        nn_avx512_small_dw_rows(n, in, out, dy, x, dw, lo, hi);
        return;
    }
#define SMALL_DW(N) small_dw_block(N, in, out, lo, hi, dy, x, dw)
    NN_SMALL_N_CASES(n, SMALL_DW)     /* nn_cpu_small_dw_usable admits 1..SMALL_DW_MAX_N only */
#undef SMALL_DW
}

/* The sum of a register's eight floats. */
KERNEL float hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

/* y[r][o] = x[r] . w[o] (+ bias[o]) for r < N and the P (1 or 2) rows of w
 * from o: each load of x serves both rows (why two: the AVX-512 twin's
 * comment; here only while 2N accumulators leave registers for the rest,
 * N <= 4). Each output is one chain over the columns in order, as with one
 * row at a time: the same bits. */
KERNEL void small_fwd_rows(const int N, const int P, int in, int out, int o, const float *x,
                           const float *w, const float *bias, float *y)
{
    const float *w0 = w + (size_t)o * (size_t)in, *w1 = P == 2 ? w0 + in : w0;
    __m256 acc[2][SMALL_DW_MAX_N];
#pragma GCC unroll 8
    for (int r = 0; r < N; r++)
        acc[0][r] = acc[1][r] = _mm256_setzero_ps();
    int i = 0;
    for (; i + 8 <= in; i += 8) {
        __m256 wv0 = _mm256_loadu_ps(w0 + i), wv1 = P == 2 ? _mm256_loadu_ps(w1 + i) : wv0;
#pragma GCC unroll 8
        for (int r = 0; r < N; r++) {
            __m256 xv = _mm256_loadu_ps(x + (size_t)r * (size_t)in + i);
            acc[0][r] = _mm256_fmadd_ps(wv0, xv, acc[0][r]);
            if (P == 2)
                acc[1][r] = _mm256_fmadd_ps(wv1, xv, acc[1][r]);
        }
    }
    for (int j = 0; j < P; j++) {
        const float *wo = j ? w1 : w0;
        for (int r = 0; r < N; r++) {
            float sum = hsum8(acc[j][r]);
            const float *xr = x + (size_t)r * (size_t)in;
            for (int c = i; c < in; c++)
                sum = __builtin_fmaf(wo[c], xr[c], sum);
            y[(size_t)r * (size_t)out + (size_t)(o + j)] = bias ? sum + bias[o + j] : sum;
        }
    }
}

/* y[r][o] = x[r] . w[o] (+ bias[o]) for r < N and o in [lo, hi): each row
 * of w is read once, for all N rows of x at a time (which stay in L1). */
KERNEL void small_fwd_block(const int N, int in, int out, int lo, int hi, const float *x,
                            const float *w, const float *bias, float *y)
{
    int o = lo;
    if (N <= 4)
        for (; o + 2 <= hi; o += 2)
            small_fwd_rows(N, 2, in, out, o, x, w, bias, y);
    for (; o < hi; o++)
        small_fwd_rows(N, 1, in, out, o, x, w, bias, y);
}

__attribute__((target("avx2,fma"))) void nn_cpu_small_fwd_rows(int n, int in, int out,
                                                               const float *x, const float *w,
                                                               const float *bias, float *y,
                                                               int lo, int hi)
{
    if (nn_cpu_avx512_kernels()) {
        nn_avx512_small_fwd_rows(n, in, out, x, w, bias, y, lo, hi);
        return;
    }
#define SMALL_FWD(N) small_fwd_block(N, in, out, lo, hi, x, w, bias, y)
    NN_SMALL_N_CASES(n, SMALL_FWD)    /* the same batches */
#undef SMALL_FWD
}

/* R rows (1..4) of dx (n, in) = dy (n, out) . w (out, in), columns
 * [c, c + 8 C) (C 1..3 registers a row): each element one FMA chain over
 * out, in order, from zero (sgemm's arithmetic, in another order than
 * OpenBLAS's blocking: within the parity tolerances). Each row of w is read
 * where it lies, 8 C columns at a time, and serves the R rows of dx. */
KERNEL void small_dx_tile(const float *dy, int out, const float *w, int in, float *dx, int c,
                          const int R, const int C)
{
    __m256 acc[4][3];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 3
        for (int j = 0; j < C; j++)
            acc[r][j] = _mm256_setzero_ps();
    for (int k = 0; k < out; k++) {
        const float *wk = w + (size_t)k * (size_t)in + (size_t)c;
        __m256 wv[3];
#pragma GCC unroll 3
        for (int j = 0; j < C; j++)
            wv[j] = _mm256_loadu_ps(wk + 8 * j);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            __m256 s = _mm256_broadcast_ss(dy + (size_t)r * (size_t)out + (size_t)k);
#pragma GCC unroll 3
            for (int j = 0; j < C; j++)
                acc[r][j] = _mm256_fmadd_ps(s, wv[j], acc[r][j]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 3
        for (int j = 0; j < C; j++)
            _mm256_storeu_ps(dx + (size_t)r * (size_t)in + (size_t)c + 8 * (size_t)j, acc[r][j]);
}

/* R rows of dx, columns [lo, hi): 24 at a time, then whole registers, then
 * single columns, each the same chain. */
KERNEL void small_dx_rows(const float *dy, int out, const float *w, int in, float *dx, int lo,
                          int hi, const int R)
{
    int c = lo;
    for (; c + 24 <= hi; c += 24)
        small_dx_tile(dy, out, w, in, dx, c, R, 3);
    if (c + 16 <= hi)
        small_dx_tile(dy, out, w, in, dx, c, R, 2), c += 16;
    if (c + 8 <= hi)
        small_dx_tile(dy, out, w, in, dx, c, R, 1), c += 8;
    for (; c < hi; c++)
        for (int r = 0; r < R; r++) {
            float acc = 0.0f;
            for (int k = 0; k < out; k++)
                acc = __builtin_fmaf(dy[(size_t)r * (size_t)out + (size_t)k],
                                     w[(size_t)k * (size_t)in + (size_t)c], acc);
            dx[(size_t)r * (size_t)in + (size_t)c] = acc;
        }
}

__attribute__((target("avx2,fma"))) void nn_cpu_small_dx_cols(int n, int in, int out,
                                                              const float *dy, const float *w,
                                                              float *dx, int lo, int hi)
{
    if (nn_cpu_avx512_kernels()) {
        nn_avx512_small_dx_cols(n, in, out, dy, w, dx, lo, hi);
        return;
    }
    int r = 0;
    for (; r + 4 <= n; r += 4)
        small_dx_rows(dy + (size_t)r * (size_t)out, out, w, in, dx + (size_t)r * (size_t)in, lo,
                      hi, 4);
    const float *dyr = dy + (size_t)r * (size_t)out;
    float *dxr = dx + (size_t)r * (size_t)in;
    switch (n - r) {
    case 1: small_dx_rows(dyr, out, w, in, dxr, lo, hi, 1); break;
    case 2: small_dx_rows(dyr, out, w, in, dxr, lo, hi, 2); break;
    case 3: small_dx_rows(dyr, out, w, in, dxr, lo, hi, 3); break;
    default: break;
    }
}

#else

int nn_cpu_small_dw_usable(int n)
{
    (void)n;
    return 0;
}

void nn_cpu_small_dw_rows(int n, int in, int out, const float *dy, const float *x, float *dw,
                          int lo, int hi)
{
    (void)n, (void)in, (void)out, (void)dy, (void)x, (void)dw, (void)lo, (void)hi;
    abort();        /* unreachable: nn_cpu_small_dw_usable says no */
}

void nn_cpu_small_fwd_rows(int n, int in, int out, const float *x, const float *w,
                           const float *bias, float *y, int lo, int hi)
{
    (void)n, (void)in, (void)out, (void)x, (void)w, (void)bias, (void)y, (void)lo, (void)hi;
    abort();        /* unreachable: nn_cpu_small_dw_usable says no */
}

void nn_cpu_small_dx_cols(int n, int in, int out, const float *dy, const float *w, float *dx,
                          int lo, int hi)
{
    (void)n, (void)in, (void)out, (void)dy, (void)w, (void)dx, (void)lo, (void)hi;
    abort();        /* unreachable: nn_cpu_small_dw_usable says no */
}

#endif
