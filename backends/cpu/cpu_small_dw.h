/* backends/cpu/cpu_small_dw.h - the small-batch weight gradient's chain in AVX2,
 * dw[o][i] = sum over r < N of dy[r][o] x[r][i] (a product, then FMAs in
 * batch order), shared by cpu_linear_small.c (the gradient into memory) and
 * cpu_linear_adam.c (the gradient straight into Adam's update): one
 * definition, so that the two give the same bits. N is a constant at every
 * call, so the batch loops unroll. The AVX-512 twin is
 * cpu_avx512_kernels.inc's small_dw_lanes512. */
#ifndef NNLAB_CPU_SMALL_DW_H
#define NNLAB_CPU_SMALL_DW_H

#include <stddef.h>
#include <stdlib.h>

#include "cpu_internal.h"  /* SMALL_DW_MAX_N */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define NN_SMALL_DW_KERNEL static inline __attribute__((always_inline, target("avx2,fma")))

/* CALL(N) with the batch n as a constant N, 1..SMALL_DW_MAX_N (callers admit
 * no other, so any other aborts): each small-batch kernel's dispatch, so that
 * its batch loops unroll (AVX-512: cpu_avx512_kernels.inc's SMALL512_CASES). */
#define NN_SMALL_N_CASES(n, CALL)                                                                 \
    switch (n) {                                                                                  \
    case 1: CALL(1); break;                                                                       \
    case 2: CALL(2); break;                                                                       \
    case 3: CALL(3); break;                                                                       \
    case 4: CALL(4); break;                                                                       \
    case 5: CALL(5); break;                                                                       \
    case 6: CALL(6); break;                                                                       \
    case 7: CALL(7); break;                                                                       \
    case 8: CALL(8); break;                                                                       \
    default: abort();                                                                             \
    }

/* Row o's coefficients dy[r][o], r < N: as floats and broadcast. */
NN_SMALL_DW_KERNEL void nn_small_dw_coefs(const int N, const float *dy, int out, int o,
                                          float coef[SMALL_DW_MAX_N], __m256 cv[SMALL_DW_MAX_N])
{
#pragma GCC unroll 8
    for (int r = 0; r < N; r++) {
        coef[r] = dy[(size_t)r * (size_t)out + (size_t)o];
        cv[r] = _mm256_set1_ps(coef[r]);
    }
}

/* The gradient of columns [i, i + 8) of the row. */
NN_SMALL_DW_KERNEL __m256 nn_small_dw_lanes8(const int N, const __m256 cv[SMALL_DW_MAX_N],
                                             const float *x, int in, int i)
{
    __m256 acc = _mm256_mul_ps(cv[0], _mm256_loadu_ps(x + i));
#pragma GCC unroll 8
    for (int r = 1; r < N; r++)
        acc = _mm256_fmadd_ps(cv[r], _mm256_loadu_ps(x + (size_t)r * (size_t)in + i), acc);
    return acc;
}

/* The gradient of column i alone: the same chain in scalar FMAs. */
NN_SMALL_DW_KERNEL float nn_small_dw_one(const int N, const float coef[SMALL_DW_MAX_N],
                                         const float *x, int in, int i)
{
    float acc = coef[0] * x[i];
    for (int r = 1; r < N; r++)
        acc = __builtin_fmaf(coef[r], x[(size_t)r * (size_t)in + i], acc);
    return acc;
}
#endif

#endif
