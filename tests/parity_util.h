/* tests/parity_util.h - helpers of the parity suite (tests/parity_suite.c),
 * which compares a backend under test with the reference backend, cpu-ref,
 * and of the backend-specific tests beside it (tests/test_parity.c for cpu,
 * tests/test_gpu.c for the GPU).
 *
 * Cases draw random inputs and shapes from per-case seeds derived from one
 * base seed (NNLAB_PARITY_SEED overrides it). This module holds the seeds,
 * exact-size random host buffers, buffers in the tested backend's memory,
 * the abs + rel comparison with its worst-element report, and the
 * convolution and pooling geometry builders. It is plain C11; failures go
 * through cmocka's fail_msg (so the includes cmocka needs come first), and it
 * defines no tests.
 */
#ifndef NNLAB_TESTS_PARITY_UTIL_H
#define NNLAB_TESTS_PARITY_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "rng.h"

/* A tolerance: |got - ref| <= abs + rel |ref| (llm.c's validate_result). */
typedef struct parity_tol {
    double abs, rel;
} parity_tol;

/* For results that are exact by contract (dropout masks, max pooling's
 * forward): the same hash, the same comparisons. */
#define PARITY_EXACT ((parity_tol){ 0.0, 0.0 })

/* ---- seeds ------------------------------------------------------------------------------- */

/* The run's base seed: NNLAB_PARITY_SEED when set and not empty, otherwise
 * default_seed. Prints "# <what> <seed> (NNLAB_PARITY_SEED replays it)" to
 * stderr and remembers the seed for expect_close's messages. */
uint64_t parity_seed_init(uint64_t default_seed, const char *what);

/* The seed of case k of test number `test`, from the base seed. */
uint64_t case_seed(uint64_t base, int test, int k);

/* ---- expect_close's report --------------------------------------------------------------- */

/* How expect_close names the backend under test ("cpu", "gpu"; default
 * "cpu"). */
void parity_report_as(const char *tested);

/* ---- host buffers ------------------------------------------------------------------------ */

/* n floats, malloc'ed at exactly that size (1 byte for n = 0), so that
 * AddressSanitizer sees the first byte past the end; fails the test when out
 * of memory. free() it. */
float *fbuf(size_t n);

/* p[0..n) uniform in [lo, hi) */
void fill(nn_rng *r, float *p, size_t n, float lo, float hi);

/* values on a coarse grid (0, 0.5, 1, 1.5), so that maxima tie and the
 * "first maximum" rule of max pooling is exercised */
void fill_ties(nn_rng *r, float *p, size_t n);

/* an fbuf holding a copy of src[0..n) */
float *copy_of(const float *src, size_t n);

/* ---- buffers in the tested backend's memory ------------------------------------------- */

/* For a backend of host memory (ops->host_memory) these are malloc'ed at
 * exactly their size, like fbuf, so that AddressSanitizer catches an overrun;
 * otherwise they come from ops->alloc. Data moves through ops->upload and
 * ops->download either way. Each fails the test on error. */
void *bk_alloc(nn_backend *b, size_t bytes);
void bk_free(nn_backend *b, void *p);            /* NULL is fine */

/* a buffer holding a copy of host[0..bytes) */
void *bk_copy(nn_backend *b, const void *host, size_t bytes);

/* n floats of poison (NaN and 1e30 by turns): an output element the backend
 * does not write fails the comparison */
float *bk_poison(nn_backend *b, size_t n);

/* host[0..bytes) = src's contents */
void bk_read(nn_backend *b, void *host, const void *src, size_t bytes);

/* uniform in [lo, hi] */
int rnd(nn_rng *r, int lo, int hi);

/* activation inputs: mostly the interesting range [-6, 6), some far out
 * (mish's tails, [-100, 100)), exact zeros */
void fill_act_inputs(nn_rng *r, float *x, size_t n);

/* ---- checks ------------------------------------------------------------------------------ */

/* Fails the test, naming the worst element, when any |got - ref| exceeds
 * tol.abs + tol.rel |ref| (a NaN on one side only always fails). `what` and
 * `shape` name the case, seed is its case seed. */
void expect_close(const char *what, const char *shape, uint64_t seed, const float *ref,
                  const float *got, size_t n, parity_tol tol);

/* The same for n floats in b's memory at src (read back first). */
void expect_close_bk(nn_backend *b, const char *what, const char *shape, uint64_t seed,
                     const float *ref, const float *src, size_t n, parity_tol tol);

/* Fails the test with b's last error when rc is not 0. */
void expect_ok(nn_backend *b, int rc, const char *what);

/* ---- geometries -------------------------------------------------------------------------- */

/* Sets h_out and w_out from the rest of g. */
void conv_fix_output(nn_conv_geom *g);

/* A square kernel k, stride and padding; h = 1 makes it a conv1d (kernel,
 * stride 1 and no padding along h). */
nn_conv_geom conv_geom(int n, int c_in, int h, int w, int c_out, int k, int stride, int pad);

/* A random geometry: batch 1..max_n, 1..16 channels in and out, kernels 1, 3
 * or 5, stride 1..2, padding 0..2; conv1d: h = 1, otherwise rectangular
 * inputs and now and then a rectangular kernel. */
nn_conv_geom random_conv(nn_rng *r, int conv1d, int max_n);

/* "conv n=.. c_in=.. HxW -> c_out=.. HxW k=.. stride=.. pad=..", then extra. */
void conv_shape(char *s, size_t len, const nn_conv_geom *g, const char *extra);

/* Max pooling with a kh x kw window and strides sh, sw; no padding. */
nn_pool_geom pool_geom(int n, int c, int h, int w, int kh, int kw, int sh, int sw);

/* A random max-pooling case of kind % 6 (batch 1..8, 1..16 channels):
 * 0, 1: 2x2 stride 2; 2: 1-D, 3 stride 3; 3: max over the whole length;
 * 4: overlapping 3x3 stride 2; 5: rectangular window and strides. */
nn_pool_geom random_pool(nn_rng *r, int kind);

#endif
