/* backends/cpu/cpu_avx512.h - the AVX-512 variants of the fast CPU backend's own
 * kernels, beside the AVX2 ones they replace when the CPU
 * and the OS run AVX-512 (nn_cpu_avx512_kernels, cpu_features.c) and
 * NNLAB_NO_AVX512 is not set.
 *
 * The bodies are in cpu_avx512_kernels.inc, compiled twice: for real in
 * cpu_avx512.c (target avx512f, the entry points below), and in
 * tests/test_avx512_emu.c against SIMDe's portable _mm512_* intrinsics, so
 * that a machine without AVX-512 (this one, CI) checks their logic against
 * cpu-ref. That test defines NN_AVX512_EMU and gets the same functions as
 * static ones of its own.
 *
 * Each variant keeps its AVX2 twin's arithmetic, so that their results are
 * the same bits where the twin's order allows it: Adam and SGD (cpu-ref's
 * operations, no FMA), relu and tanh's gradient, the small-batch weight
 * gradient, the narrow and the small-batch input gradients and the direct
 * convolution's forward and input gradient (one FMA chain per output, in
 * the same order). The
 * small-batch forward and the convolution's weight gradient sum their lanes
 * in another order: within the parity suite's tolerance, not the same bits. */
#ifndef NNLAB_CPU_AVX512_H
#define NNLAB_CPU_AVX512_H

#include <stddef.h>

#include "backend.h"       /* nn_adam_hyper, nn_sgd_hyper */

/* One Adam step's constants, as cpu-ref computes them (cpu_optim.c). */
typedef struct nn_adam_consts {
    float b1, b2, one_minus_b1, one_minus_b2, eps, wd, step, inv_sqrt_bc2;
} nn_adam_consts;

/* One SGD step's constants and its case (cpu_optim.c's sgd_range). */
typedef struct nn_sgd_consts {
    float lr, wd, mom, keep;     /* keep: 1 - dampening */
    int nesterov, first;         /* first: t == 1, the velocity is g itself */
} nn_sgd_consts;

/* A step's constants from its hyperparameters (cpu_optim.c), for the AVX2
 * loops, these, and the emulated test alike. */
nn_adam_consts nn_cpu_adam_consts(const nn_adam_hyper *h, long t);
nn_sgd_consts nn_cpu_sgd_consts(const nn_sgd_hyper *h, long t);

/* The direct convolution's rows per block (cpu_conv_direct.c's MR_MAX). */
#define NN_AVX512_CONV_MR 6
/* The small-batch products' largest batch (cpu_internal.h's SMALL_DW_MAX_N). */
#define NN_AVX512_SMALL_MAX_N 8

#ifndef NN_AVX512_EMU
/* Elementwise, over [lo, hi): */
void nn_avx512_adam(size_t lo, size_t hi, float *p, const float *g, float *m, float *v,
                    const nn_adam_consts *c);
void nn_avx512_sgd(size_t lo, size_t hi, float *p, const float *g, float *v,
                   const nn_sgd_consts *c);
void nn_avx512_relu_fwd(size_t lo, size_t hi, const float *x, float *y);
void nn_avx512_relu_bwd(size_t lo, size_t hi, const float *x, const float *dy, float *dx);
void nn_avx512_tanh_bwd(size_t lo, size_t hi, const float *y, const float *dy, float *dx);

/* cpu_linear_small.c's products for rows [lo, hi) of dw or outputs [lo, hi)
 * of y, n in 1..NN_AVX512_SMALL_MAX_N. */
void nn_avx512_small_dw_rows(int n, int in, int out, const float *dy, const float *x, float *dw,
                             int lo, int hi);
void nn_avx512_small_fwd_rows(int n, int in, int out, const float *x, const float *w,
                              const float *bias, float *y, int lo, int hi);
/* cpu_linear_adam.c's fused weight gradient and Adam for rows [lo, hi) of w
 * (the bits of small_dw_rows, then adam), and the bias's for [lo, hi). */
void nn_avx512_small_dw_adam_rows(int n, int in, int out, const float *dy, const float *x,
                                  float *w, float *m, float *v, const nn_adam_consts *c, int lo,
                                  int hi);
void nn_avx512_bias_adam(int n, int out, const float *dy, float *bias, float *m, float *v,
                         const nn_adam_consts *c, int lo, int hi);

/* cpu_linear_narrow.c's dx rows [lo, hi) for in a multiple of 4 up to 24. */
void nn_avx512_narrow_dx(const float *dy, int out, const float *w, float *dx, int in, size_t lo,
                         size_t hi);

/* cpu_linear_small.c's input gradient dx (n, in) = dy (n, out) . w (out, in)
 * for columns [lo, hi) of dx, every row n (any n; the backend calls it for
 * 1..NN_AVX512_SMALL_MAX_N). */
void nn_avx512_small_dx_cols(int n, int in, int out, const float *dy, const float *w, float *dx,
                             int lo, int hi);

/* cpu_conv_direct.c's taps_rows: out[m][q] = sum_r w[m][r] in[offs[r] + q]
 * for rows [0, rows) and positions [q0, q1) (multiples of 16). */
void nn_avx512_conv_taps(int rows, size_t kr, const float *w, const int *offs, const float *in,
                         float *out, size_t ld_out, size_t q0, size_t q1);

/* cpu_conv_direct.c's wgrad_block for every pair of taps r, r + 1 < K (an
 * odd last one paired with itself), in order: acc[m][8r..8r+8) and
 * acc[m][8r+8..8r+16) (rows ld_acc apart) += the dot products over positions
 * [0, n) (a multiple of 16) of dy's rows m < mr (ld_dy apart) with x +
 * offs[r] and x + offs[r + 1], folded into 8 lanes. */
void nn_avx512_conv_wgrad(int mr, size_t K, const int *offs, const float *x, const float *dy,
                          size_t ld_dy, size_t n, float *acc, size_t ld_acc);
#endif

#endif
