/* tests/parity_suite.h - the one parity suite: every operation of a backend
 * under test against the reference backend, cpu-ref, on fresh random inputs
 * and random shapes. Each backend's test program runs it once:
 * tests/test_parity.c for "cpu", tests/test_gpu.c for "gpu"; each adds the
 * tests only its backend has (thread counts; pinned copies, graphs, runs).
 *
 * The suite's cases are the same for every backend; what differs per backend
 * (the ways it is opened, its tolerances) is one table in parity_suite.c.
 * Buffers of the tested backend are poisoned before each call, so an element
 * it did not write fails, and on a backend of host memory they are malloc'ed
 * at their exact size (the convolution workspace too, at the size
 * conv2d_workspace reports), so that AddressSanitizer catches any overrun.
 */
#ifndef NNLAB_TESTS_PARITY_SUITE_H
#define NNLAB_TESTS_PARITY_SUITE_H

#include <stdint.h>

#include "backend.h"
#include "ghost_batch.h"
#include "parity_util.h"

#define PARITY_MAX_VARIANTS 3

/* A backend under test: how the suite opens it and how close it must come
 * to cpu-ref. */
typedef struct parity_backend {
    const char *name;                                  /* as nn_backend_find knows it */
    int variants;                                      /* ways of opening it */
    nn_backend_config config[PARITY_MAX_VARIANTS];     /* [0] runs every case */
    const char *label[PARITY_MAX_VARIANTS];            /* named in case shapes, or "" */
    parity_tol elementwise;    /* elementwise results, dot products of a few hundred terms */
    parity_tol reduction;      /* sums over a batch: dw, dbias, the losses */
    parity_tol pool_grad;      /* max pooling's dx */
} parity_backend;

typedef struct parity_fixture {
    nn_backend ref;                             /* cpu-ref, the oracle */
    nn_backend tested[PARITY_MAX_VARIANTS];     /* the backend, once per variant */
    const parity_backend *spec;
    uint64_t seed;                              /* the run's base seed */
} parity_fixture;

/* A cmocka group setup for the backend called `name` (its row of the table),
 * and the matching teardown. */
int parity_group_setup(void **state, const char *name);
int parity_group_teardown(void **state);

/* One linear or convolution case (forward and backward) on variant v. */
void parity_linear_case(parity_fixture *f, int v, uint64_t seed, int n, int in, int out,
                        int with_bias, int with_dx);
void parity_conv_case(parity_fixture *f, int v, uint64_t seed, const nn_conv_geom *g,
                      int with_bias, int with_dx);

void test_memory_ops(void **state);
void test_linear(void **state);
void test_conv2d_random(void **state);
void test_conv1d_random(void **state);
void test_conv2d_presets_and_chunks(void **state);
void test_maxpool(void **state);
void test_maxpool_nan(void **state);
void test_maxpool_nan_rule(void **state);
void test_activations(void **state);
void test_activation_edges(void **state);
void test_dropout(void **state);
void test_softmax_xent(void **state);
void test_mse(void **state);
void test_sgd(void **state);
void test_adam(void **state);
void test_errors(void **state);
/* parity_bias.c: the bias gradients at awkward sizes */
void test_bias_grad_sizes(void **state);
/* parity_graph.c */
void test_graph_merge(void **state);
void test_graph_slice(void **state);
void test_graph_accumulate(void **state);
/* parity_tab.c: TabNet's single-input layers */
void test_batchnorm(void **state);
void test_batchnorm_refuses_single_rows(void **state);
void test_glu(void **state);
void test_glu_nan_and_tails(void **state);
void test_sparsemax(void **state);

/* The suite, for a test program's CMUnitTest array. */
#define PARITY_SUITE_TESTS                                                              \
    cmocka_unit_test(test_memory_ops), cmocka_unit_test(test_linear),                  \
    cmocka_unit_test(test_conv2d_random), cmocka_unit_test(test_conv1d_random),        \
    cmocka_unit_test(test_conv2d_presets_and_chunks), cmocka_unit_test(test_maxpool),  \
    cmocka_unit_test(test_maxpool_nan), cmocka_unit_test(test_maxpool_nan_rule),        \
    cmocka_unit_test(test_activations),                                                \
    cmocka_unit_test(test_activation_edges), cmocka_unit_test(test_dropout),           \
    cmocka_unit_test(test_softmax_xent), cmocka_unit_test(test_mse),                   \
    cmocka_unit_test(test_sgd), cmocka_unit_test(test_adam), cmocka_unit_test(test_errors), \
    cmocka_unit_test(test_graph_merge), cmocka_unit_test(test_graph_slice),             \
    cmocka_unit_test(test_graph_accumulate),                                            \
    cmocka_unit_test(test_batchnorm), cmocka_unit_test(test_batchnorm_refuses_single_rows), \
    cmocka_unit_test(test_glu), cmocka_unit_test(test_glu_nan_and_tails),                  \
    cmocka_unit_test(test_sparsemax),                                                  \
    cmocka_unit_test(test_bias_grad_sizes)

#endif
