/* tests/test_parity.c - the OpenBLAS backend ("cpu") against the reference
 * backend ("cpu-ref"): the parity suite (tests/parity_suite.c) run on cpu,
 * opened with 2, 1 and 3 threads (its row of the suite's table), then what
 * only a multi-threaded CPU backend has to show: a workspace that depends on
 * the geometry alone, any thread count agreeing with cpu-ref, and the same
 * bits from run to run. tests/parity-im2col.sh runs this program again with
 * the direct convolution kernels switched off.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "parity_suite.h"

/* tested[] as the suite's table opens cpu */
enum { CPU_2_THREADS, CPU_1_THREAD, CPU_3_THREADS };

static int group_setup(void **state)
{
    return parity_group_setup(state, "cpu");
}

/* The workspace reported must be all the op touches (checked by ASan through
 * the exact-size buffers above) and must not depend on anything but the
 * geometry: asking twice gives the same, and a larger batch never needs less. */
static void test_conv2d_workspace(void **state)
{
    parity_fixture *f = *state;
    nn_backend *b = &f->tested[CPU_2_THREADS];
    for (int k = 0; k < 50; k++) {
        nn_rng r;
        nn_rng_seed(&r, case_seed(f->seed, 6, k));
        nn_conv_geom g = random_conv(&r, k % 2, 64);
        size_t a = 0, a2 = 0, a_big = 0;
        expect_ok(b, b->ops->conv2d_workspace(b, &g, &a), "conv2d_workspace");
        expect_ok(b, b->ops->conv2d_workspace(b, &g, &a2), "conv2d_workspace");
        assert_int_equal(a, a2);
        assert_true(a > 0);
        nn_conv_geom big = g;
        big.n = g.n * 2;
        expect_ok(b, b->ops->conv2d_workspace(b, &big, &a_big), "conv2d_workspace");
        assert_true(a_big >= a);
    }
}

/* cpu's Adam (an AVX2 loop, cpu_optim.c) does cpu-ref's operations in
 * cpu-ref's order: its results are cpu-ref's to the bit, not only within the
 * suite's tolerance. Sizes off the vector's 8 and off an item's block. */
static void test_adam_same_bits(void **state)
{
    parity_fixture *f = *state;
    nn_backend *ref = &f->ref, *b = &f->tested[CPU_2_THREADS];
    const nn_adam_hyper h = { .lr = 0.01f, .beta1 = 0.8f, .beta2 = 0.99f, .eps = 1e-8f,
                              .weight_decay = 1e-2f };
    static const size_t sizes[] = { 7, 16389, 101770 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s], bytes = n * sizeof(float);
        nn_rng r;
        nn_rng_seed(&r, case_seed(f->seed, 18, (int)s));
        float *host[4], *dev[4];             /* param, grad, m, v */
        for (int k = 0; k < 4; k++) {
            host[k] = malloc(bytes);
            assert_non_null(host[k]);
            for (size_t i = 0; i < n; i++)
                host[k][i] = k == 3 ? (float)nn_rng_uniform(&r) : (float)(2.0 * nn_rng_uniform(&r) - 1.0);
            dev[k] = bk_copy(b, host[k], bytes);
        }
        for (long t = 1; t <= 3; t++) {
            expect_ok(ref, ref->ops->adam_step(ref, n, host[0], host[1], host[2], host[3], &h, t),
                      "adam_step");
            expect_ok(b, b->ops->adam_step(b, n, dev[0], dev[1], dev[2], dev[3], &h, t), "adam_step");
        }
        for (int k = 0; k < 4; k++) {
            if (k != 1)
                assert_memory_equal(host[k], dev[k], bytes);
            bk_free(b, dev[k]);
            free(host[k]);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Thread counts: 1, 2 and 3 threads agree with cpu-ref (and so each other). */

static void test_thread_counts(void **state)
{
    parity_fixture *f = *state;
    const int variant[] = { CPU_1_THREAD, CPU_2_THREADS, CPU_3_THREADS };
    for (int k = 0; k < 6; k++) {
        uint64_t seed = case_seed(f->seed, 16, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        int n = rnd(&r, 1, 300), in = rnd(&r, 1, 300), out = rnd(&r, 1, 300);
        nn_conv_geom g = random_conv(&r, k % 2, 12);
        for (int t = 0; t < 3; t++) {
            parity_linear_case(f, variant[t], seed, n, in, out, 1, 1);
            parity_conv_case(f, variant[t], seed, &g, 1, 1);
        }
    }
    /* the big products of mnist-mlp-1000 and LeNet at batch 256 */
    nn_conv_geom lenet1 = conv_geom(64, 3, 32, 32, 6, 5, 1, 0);
    for (int t = 0; t < 3; t += 2) {
        parity_linear_case(f, variant[t], case_seed(f->seed, 17, t), 256, 784, 1000, 1, 1);
        parity_conv_case(f, variant[t], case_seed(f->seed, 17, t), &lenet1, 1, 0);
    }
}

/* The threads claim work in whatever order they get to it, but partial sums
 * are added in a fixed order: the same call twice gives the same bits. */
static void test_deterministic(void **state)
{
    parity_fixture *f = *state;
    nn_backend *b = &f->tested[CPU_3_THREADS];
    nn_rng r;
    nn_rng_seed(&r, case_seed(f->seed, 18, 0));
    nn_conv_geom g = conv_geom(37, 6, 14, 14, 16, 5, 1, 0);
    size_t nx = (size_t)g.n * g.c_in * g.h_in * g.w_in, nw = (size_t)g.c_out * g.c_in * 25;
    size_t ny = (size_t)g.n * g.c_out * g.h_out * g.w_out;
    float *x = fbuf(nx), *w = fbuf(nw), *dy = fbuf(ny);
    fill(&r, x, nx, -1, 1);
    fill(&r, w, nw, -1, 1);
    fill(&r, dy, ny, -1, 1);
    float *dw[2] = { fbuf(nw), fbuf(nw) }, *db[2] = { fbuf(16), fbuf(16) };
    float *lw[2] = { fbuf(120 * 400), fbuf(120 * 400) }, *lin_w = fbuf(120 * 400);
    fill(&r, lin_w, 120 * 400, -1, 1);
    size_t ws_bytes = 0;
    expect_ok(b, b->ops->conv2d_workspace(b, &g, &ws_bytes), "conv2d_workspace");
    void *ws = malloc(ws_bytes);
    assert_non_null(ws);
    for (int k = 0; k < 2; k++) {
        expect_ok(b, b->ops->conv2d_backward(b, &g, x, w, dy, NULL, dw[k], db[k], ws),
                  "conv2d_backward");
        /* linear: x as (37, 400) inputs, dy as (37, 120) gradients */
        expect_ok(b, b->ops->linear_backward(b, 37, 400, 120, x, lin_w, dy, NULL, lw[k], NULL),
                  "linear_backward");
    }
    assert_memory_equal(dw[0], dw[1], nw * sizeof(float));
    assert_memory_equal(db[0], db[1], 16 * sizeof(float));
    assert_memory_equal(lw[0], lw[1], 120 * 400 * sizeof(float));
    free(ws); free(x); free(w); free(dy); free(lin_w);
    for (int k = 0; k < 2; k++) {
        free(dw[k]); free(db[k]); free(lw[k]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        PARITY_SUITE_TESTS,
        cmocka_unit_test(test_conv2d_workspace),
        cmocka_unit_test(test_adam_same_bits),
        cmocka_unit_test(test_thread_counts),
        cmocka_unit_test(test_deterministic),
    };
    return cmocka_run_group_tests(tests, group_setup, parity_group_teardown);
}
