/* backends/cpu/cpu_blis.h - which BLAS library runs each matrix product of the
 * fast CPU backend: OpenBLAS (linked) or BLIS (Debian's libblis.so.4,
 * loaded at run time when it is there), chosen per product shape by the
 * calibration (src/analysis/model/calibrate_products.c measures, this keeps the
 * table the products read). backends/cpu/cpu_blis.c has the why. */
#ifndef NNLAB_CPU_BLIS_H
#define NNLAB_CPU_BLIS_H

#include <stddef.h>

enum nn_blas_lib { NN_BLAS_OPENBLAS, NN_BLAS_BLIS, NN_BLAS_LIBS };

/* "openblas", "blis" */
const char *nn_blas_lib_name(int lib);

/* One product as the backend issues it, row-major: C (m, n) = op(A) op(B),
 * op(A) (m, k); ta and tb 1 when that operand is transposed. */
typedef struct nn_blas_shape {
    int m, n, k;
    int ta, tb;
} nn_blas_shape;

/* The products of a layer at batch n, by which the table knows them (the
 * backend looks its products up by these, the calibration measures them):
 * [NN_BLAS_FWD] the forward, [NN_BLAS_DX] the input gradient,
 * [NN_BLAS_DW] the weight gradient. A linear layer (in -> out): y (n, out) =
 * x . w^T, dx (n, in) = dy . w, dw (out, in) = dy^T . x. An im2col
 * convolution, its K = c_in k_h k_w and hw output positions a sample, as if
 * the whole batch were one product: y (c_out, n hw) = w (c_out, K) . col,
 * col (K, n hw) = w^T . dy, dw (c_out, K) = dy . col^T. */
enum { NN_BLAS_FWD, NN_BLAS_DX, NN_BLAS_DW, NN_BLAS_PRODUCTS };
void nn_blas_linear_shapes(int n, int in, int out, nn_blas_shape s[NN_BLAS_PRODUCTS]);
void nn_blas_conv_shapes(int n, int c_out, int hw, int K, nn_blas_shape s[NN_BLAS_PRODUCTS]);

/* ---- BLIS, loaded once on first use ------------------------------------- */

/* 0 when BLIS is loaded and usable; -1 with why in words ("BLIS not used:
 * libblis.so.4 not found"). Never fatal: OpenBLAS runs everything then. */
int nn_blis_status(char *why, size_t why_len);
/* Its version ("0.9.0") and the kernels its run-time dispatch picked
 * ("zen"); "" when not loaded. */
const char *nn_blis_version(void);
const char *nn_blis_arch(void);
/* The threads BLIS runs a product on, as OpenBLAS's: the backend sets both
 * (cpu_threads.c); BLIS gets the count when it loads if it loads later.
 * nn_blis_threads: what BLIS says now, 0 when not loaded. */
void nn_blis_set_threads(int threads);
int nn_blis_threads(void);

/* Whether products may run on BLIS here (loaded, and NNLAB_BLAS not
 * "openblas"): 1 or 0, and in words why not, or how it is used ("every
 * product: NNLAB_BLAS=blis", "per product shape, as the calibration
 * chose"). For `nnlab devices` and the "cpu" object of the JSON. */
int nn_blis_used(char *why, size_t why_len);

/* ---- the products ------------------------------------------------------- */

/* C = alpha op(A) op(B) + beta C (row-major, leading dimensions lda, ldb,
 * ldc) by `lib`; BLIS asked for when it is not loaded runs on OpenBLAS. */
void nn_blas_sgemm(int lib, const nn_blas_shape *s, float alpha, const float *a, int lda,
                   const float *b, int ldb, float beta, float *c, int ldc);

/* NNLAB_BLAS, read once: -1 when unset (the table chooses), else the
 * library forced ("openblas", "blis"; any other value is ignored, with
 * why saying so). */
int nn_blas_forced(char *why, size_t why_len);

/* The library for a product of shape s issued with `threads` threads:
 * NNLAB_BLAS's when set, else the table's choice, else OpenBLAS. No
 * allocation, no lock: called by every product. */
int nn_blas_pick(const nn_blas_shape *s, int threads);

/* 1 when the table holds a choice for (s, threads), whichever it is. */
int nn_blas_known(const nn_blas_shape *s, int threads);

/* Remembers the choice for (s, threads), replacing an earlier one; -1 when
 * the table is full (NN_BLAS_TABLE entries: far more than any job's
 * shapes). Safe beside nn_blas_pick on other threads. */
#define NN_BLAS_TABLE 1024
int nn_blas_remember(const nn_blas_shape *s, int threads, int lib);
/* Forgets every choice (for tests). */
void nn_blas_forget(void);

/* ---- the rule (pure) ---------------------------------------------------- */

/* BLIS must beat OpenBLAS by more than this share to be chosen: a smaller
 * lead is within a shared machine's noise, and OpenBLAS is the library
 * everything else was measured and tested with. */
#define NN_BLAS_MARGIN 0.05
/* The faster of the two rates (GFLOP/s; 0 or less: not measured): OpenBLAS
 * unless BLIS is available and its rate is more than NN_BLAS_MARGIN above
 * OpenBLAS's (ties, and a rate missing on either side, keep OpenBLAS). */
int nn_blas_choose(double openblas_gflops, double blis_gflops, int blis_available);

#endif
