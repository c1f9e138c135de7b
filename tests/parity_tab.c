/* tests/parity_tab.c - the parity suite's cases for TabNet's single-input
 * layers (parity_suite.h): batch norm with ghost batches (training, eval,
 * the running statistics), GLU, and sparsemax with its sparsity term,
 * against cpu-ref on random shapes and data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "parity_suite.h"

/* Forward in training (running updated), backward, then an eval forward
 * with the running statistics it left: each against cpu-ref. */
static void bn_case(parity_fixture *f, int v, uint64_t seed, const nn_bn_geom *g, int with_dx)
{
    nn_backend *ref = &f->ref, *b = &f->tested[v];
    const size_t m = (size_t)g->n * g->c, c = (size_t)g->c;
    char shape[96];
    nn_rng r;
    nn_rng_seed(&r, seed);
    snprintf(shape, sizeof shape, "batchnorm n=%d c=%d vb=%d%s%s", g->n, g->c, g->virtual_batch,
             with_dx ? "" : " no dx", f->spec->label[v][0] ? " " : "");
    strncat(shape, f->spec->label[v], sizeof shape - strlen(shape) - 1);
    float *x = fbuf(m), *gamma = fbuf(c), *beta = fbuf(c), *run = fbuf(2 * c), *dy = fbuf(m);
    float *y = fbuf(m), *dx = fbuf(m), *dg = fbuf(c), *db = fbuf(c);
    fill(&r, x, m, -2, 3);
    fill(&r, gamma, c, 0.5f, 1.5f);
    fill(&r, beta, c, -1, 1);
    fill(&r, run, c, -0.5f, 0.5f);
    fill(&r, run + c, c, 0.5f, 2.0f);
    fill(&r, dy, m, -1, 1);
    float *bx = bk_copy(b, x, m * 4), *bg = bk_copy(b, gamma, c * 4), *bb = bk_copy(b, beta, c * 4);
    float *brun = bk_copy(b, run, 2 * c * 4), *bdy = bk_copy(b, dy, m * 4);
    float *by = bk_poison(b, m), *bdx = bk_poison(b, m), *bdg = bk_poison(b, c), *bdb = bk_poison(b, c);
    expect_ok(ref, ref->ops->batchnorm_forward(ref, g, 1, x, gamma, beta, run, y), "batchnorm_forward");
    expect_ok(b, b->ops->batchnorm_forward(b, g, 1, bx, bg, bb, brun, by), "batchnorm_forward");
    expect_close_bk(b, "batchnorm_forward y", shape, seed, y, by, m, f->spec->reduction);
    expect_close_bk(b, "batchnorm_forward running", shape, seed, run, brun, 2 * c, f->spec->reduction);
    expect_ok(ref, ref->ops->batchnorm_backward(ref, g, x, gamma, dy, with_dx ? dx : NULL, dg, db),
              "batchnorm_backward");
    expect_ok(b, b->ops->batchnorm_backward(b, g, bx, bg, bdy, with_dx ? bdx : NULL, bdg, bdb),
              "batchnorm_backward");
    if (with_dx)
        expect_close_bk(b, "batchnorm_backward dx", shape, seed, dx, bdx, m, f->spec->reduction);
    expect_close_bk(b, "batchnorm_backward dgamma", shape, seed, dg, bdg, c, f->spec->reduction);
    expect_close_bk(b, "batchnorm_backward dbeta", shape, seed, db, bdb, c, f->spec->reduction);
    expect_ok(ref, ref->ops->batchnorm_forward(ref, g, 0, x, gamma, beta, run, y), "batchnorm eval");
    expect_ok(b, b->ops->batchnorm_forward(b, g, 0, bx, bg, bb, brun, by), "batchnorm eval");
    expect_close_bk(b, "batchnorm eval y", shape, seed, y, by, m, f->spec->reduction);
    bk_free(b, bx); bk_free(b, bg); bk_free(b, bb); bk_free(b, brun); bk_free(b, bdy);
    bk_free(b, by); bk_free(b, bdx); bk_free(b, bdg); bk_free(b, bdb);
    free(x); free(gamma); free(beta); free(run); free(dy); free(y); free(dx); free(dg); free(db);
}

void test_batchnorm(void **state)
{
    parity_fixture *f = *state;
    /* TabNet's (1024 in chunks of 128, 68 and 84 features), torch.chunk's
     * uneven splits (6 in 4 -> 2+2+2; 1000 by 128 -> 8 of 125; 300 by 128 ->
     * 100s), the whole batch, and features past one CPU item (64) */
    static const nn_bn_geom fixed[] = {
        { 1024, 68, 128, 0.02f, 1e-5f }, { 1024, 84, 128, 0.01f, 1e-5f }, { 6, 3, 2, 0.1f, 1e-5f },
        { 1000, 5, 128, 0.1f, 1e-3f }, { 300, 130, 128, 0.3f, 1e-5f }, { 64, 7, 0, 0.1f, 1e-5f },
        { 2, 1, 0, 1.0f, 1e-5f }, { 129, 70, 64, 0.05f, 1e-5f },
    };
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
        for (int v = 0; v < f->spec->variants; v++)
            bn_case(f, v, case_seed(f->seed, 40, (int)k), &fixed[k], k % 3 != 2);
    for (int k = 0; k < 12; k++) {
        uint64_t seed = case_seed(f->seed, 41, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        nn_bn_geom g = { rnd(&r, 2, 700), rnd(&r, 1, 150), rnd(&r, 0, 3) ? rnd(&r, 2, 200) : 0,
                         0.1f, 1e-5f };
        char why[256];
        if (nn_bn_geom_problem("t", g.n, g.c, g.virtual_batch, g.eps, 1, why, sizeof why))
            g.virtual_batch = 0;         /* a chunk of 1 row: the whole batch instead */
        bn_case(f, 0, seed, &g, 1);
    }
}

/* A chunk of one row in training is refused (as PyTorch), by every backend. */
void test_batchnorm_refuses_single_rows(void **state)
{
    parity_fixture *f = *state;
    nn_backend *b = &f->tested[0];
    nn_bn_geom g = { 5, 2, 2, 0.1f, 1e-5f };   /* chunks 2, 2, 1 */
    float *bx = bk_poison(b, 10), *bp = bk_poison(b, 2), *brun = bk_poison(b, 4), *by = bk_poison(b, 10);
    assert_int_equal(b->ops->batchnorm_forward(b, &g, 1, bx, bp, bp, brun, by), -1);
    assert_non_null(strstr(b->last_error, "chunk of 1 row"));
    bk_free(b, bx); bk_free(b, bp); bk_free(b, brun); bk_free(b, by);
}

void test_glu(void **state)
{
    parity_fixture *f = *state;
    nn_backend *ref = &f->ref, *b = &f->tested[0];
    for (int k = 0; k < 10; k++) {
        uint64_t seed = case_seed(f->seed, 42, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        int n = k == 0 ? 1024 : rnd(&r, 1, 600), half = k == 0 ? 34 : rnd(&r, 1, 200);
        size_t mi = (size_t)n * 2 * half, mo = (size_t)n * half;
        char shape[64];
        snprintf(shape, sizeof shape, "glu n=%d half=%d", n, half);
        float *x = fbuf(mi), *dy = fbuf(mo), *y = fbuf(mo), *dx = fbuf(mi);
        /* the last two cases reach the far tails, where a backend's own
         * exponential is clamped (cpu_tab.c: e^t to t = 87) */
        float range = k >= 8 ? 120.0f : 6.0f;
        fill(&r, x, mi, -range, range);
        fill(&r, dy, mo, -1, 1);
        float *bx = bk_copy(b, x, mi * 4), *bdy = bk_copy(b, dy, mo * 4);
        float *by = bk_poison(b, mo), *bdx = bk_poison(b, mi);
        expect_ok(ref, ref->ops->glu_forward(ref, n, half, x, y), "glu_forward");
        expect_ok(b, b->ops->glu_forward(b, n, half, bx, by), "glu_forward");
        expect_close_bk(b, "glu_forward", shape, seed, y, by, mo, f->spec->elementwise);
        expect_ok(ref, ref->ops->glu_backward(ref, n, half, x, dy, dx), "glu_backward");
        expect_ok(b, b->ops->glu_backward(b, n, half, bx, bdy, bdx), "glu_backward");
        expect_close_bk(b, "glu_backward", shape, seed, dx, bdx, mi, f->spec->elementwise);
        bk_free(b, bx); bk_free(b, bdy); bk_free(b, by); bk_free(b, bdx);
        free(x); free(dy); free(y); free(dx);
    }
}

/* A NaN gate gives a NaN, on every backend (a clamp inside a fast
 * exponential must not turn it into a number); the far tails give 1 and 0. */
void test_glu_nan_and_tails(void **state)
{
    parity_fixture *f = *state;
    nn_backend *b = &f->tested[0];
    const float x[6] = { 1.0f, 2.0f, 3.0f, NAN, 200.0f, -200.0f };   /* a | gate */
    const float dy[3] = { 1.0f, 1.0f, 1.0f };
    float y[3], dx[6];
    float *bx = bk_copy(b, x, sizeof x), *bdy = bk_copy(b, dy, sizeof dy);
    float *by = bk_poison(b, 3), *bdx = bk_poison(b, 6);
    expect_ok(b, b->ops->glu_forward(b, 1, 3, bx, by), "glu_forward");
    expect_ok(b, b->ops->glu_backward(b, 1, 3, bx, bdy, bdx), "glu_backward");
    bk_read(b, y, by, sizeof y);
    bk_read(b, dx, bdx, sizeof dx);
    assert_true(isnan(y[0]) && isnan(dx[0]) && isnan(dx[3]));
    assert_true(y[1] == 2.0f && dx[1] == 1.0f && dx[4] == 0.0f);
    assert_true(fabsf(y[2]) < 1e-30f && fabsf(dx[2]) < 1e-30f && fabsf(dx[5]) < 1e-30f);
    bk_free(b, bx); bk_free(b, bdy); bk_free(b, by); bk_free(b, bdx);
}

/* Inputs with ties and wide and narrow spreads: the support from all to one. */
static void fill_sparsemax_inputs(nn_rng *r, float *x, size_t m, int k)
{
    float spread = k % 4 == 0 ? 0.05f : k % 4 == 1 ? 1.0f : k % 4 == 2 ? 4.0f : 30.0f;
    fill(r, x, m, -spread, spread);
    if (k % 5 == 4)
        for (size_t i = 0; i < m; i += 3)
            x[i] = 0.25f;            /* ties, inside and at the support's edge */
}

void test_sparsemax(void **state)
{
    parity_fixture *f = *state;
    nn_backend *ref = &f->ref, *b = &f->tested[0];
    for (int k = 0; k < 16; k++) {
        uint64_t seed = case_seed(f->seed, 43, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        int n = k == 0 ? 1024 : rnd(&r, 1, 500), d = k == 0 ? 84 : k == 1 ? 1 : rnd(&r, 2, 300);
        float lambda = k % 2 ? 1e-3f : k % 4 == 2 ? 0.5f : 0.0f;
        size_t m = (size_t)n * d;
        char shape[80];
        snprintf(shape, sizeof shape, "sparsemax n=%d d=%d sparsity=%g", n, d, (double)lambda);
        float *x = fbuf(m), *dy = fbuf(m), *y = fbuf(m), *dx = fbuf(m);
        fill_sparsemax_inputs(&r, x, m, k);
        fill(&r, dy, m, -1, 1);
        float st_ref[1] = { 0.5f }, st[1] = { 0.5f };
        float *bx = bk_copy(b, x, m * 4), *bdy = bk_copy(b, dy, m * 4), *bst = bk_copy(b, st, 4);
        float *by = bk_poison(b, m), *bdx = bk_poison(b, m);
        expect_ok(ref, ref->ops->sparsemax_forward(ref, n, d, x, y), "sparsemax_forward");
        expect_ok(b, b->ops->sparsemax_forward(b, n, d, bx, by), "sparsemax_forward");
        expect_close_bk(b, "sparsemax_forward", shape, seed, y, by, m, f->spec->elementwise);
        /* the backward reads the support from y: give both the reference's */
        bk_free(b, by);
        by = bk_copy(b, y, m * 4);
        expect_ok(ref, ref->ops->sparsemax_backward(ref, n, d, y, dy, lambda, dx), "sparsemax_backward");
        expect_ok(b, b->ops->sparsemax_backward(b, n, d, by, bdy, lambda, bdx), "sparsemax_backward");
        expect_close_bk(b, "sparsemax_backward", shape, seed, dx, bdx, m, f->spec->reduction);
        expect_ok(ref, ref->ops->sparsemax_entropy(ref, n, d, y, lambda, st_ref), "sparsemax_entropy");
        expect_ok(b, b->ops->sparsemax_entropy(b, n, d, by, lambda, bst), "sparsemax_entropy");
        expect_close_bk(b, "sparsemax_entropy", shape, seed, st_ref, bst, 1, f->spec->reduction);
        bk_free(b, bx); bk_free(b, bdy); bk_free(b, bst); bk_free(b, by); bk_free(b, bdx);
        free(x); free(dy); free(y); free(dx);
    }
}
