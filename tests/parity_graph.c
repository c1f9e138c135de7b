/* tests/parity_graph.c - the parity suite's cases for the graph's operations
 * (add, mul, slice, accumulate: backend.h): exact against cpu-ref, as their
 * contract is one add or one multiply per element. Sizes cross the CPU's
 * item blocks and the GPU's grid-stride bound; add and mul also run with
 * both inputs one buffer (x + x) and with one gradient not wanted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "parity_suite.h"

static const size_t graph_sizes[] = { 1, 31, 4097, 300001 };

/* add (scale) or mul of a and c over n, forward and backward; same: c is a */
static void merge_case(parity_fixture *f, uint64_t seed, int mul, size_t n, int same, int which)
{
    nn_backend *ref = &f->ref, *b = &f->tested[0];
    nn_rng r;
    char shape[80];
    float scale = 0.70710678f;
    nn_rng_seed(&r, seed);
    snprintf(shape, sizeof shape, "%s n=%zu%s grads=%d", mul ? "mul" : "add", n,
             same ? " (x, x)" : "", which);
    float *a = fbuf(n), *c = same ? a : fbuf(n), *dy = fbuf(n);
    float *y = fbuf(n), *da = fbuf(n), *dc = fbuf(n);
    fill(&r, a, n, -2, 2);
    if (!same)
        fill(&r, c, n, -2, 2);
    fill(&r, dy, n, -1, 1);
    float *ba = bk_copy(b, a, n * 4), *bc = same ? ba : bk_copy(b, c, n * 4);
    float *bdy = bk_copy(b, dy, n * 4), *by = bk_poison(b, n);
    float *bda = bk_poison(b, n), *bdc = bk_poison(b, n);
    float *want_a = which & 1 ? da : NULL, *want_c = which & 2 ? dc : NULL;
    float *got_a = which & 1 ? bda : NULL, *got_c = which & 2 ? bdc : NULL;
    if (mul) {
        expect_ok(ref, ref->ops->mul_forward(ref, n, a, c, y), "mul_forward");
        expect_ok(b, b->ops->mul_forward(b, n, ba, bc, by), "mul_forward");
        expect_ok(ref, ref->ops->mul_backward(ref, n, a, c, dy, want_a, want_c), "mul_backward");
        expect_ok(b, b->ops->mul_backward(b, n, ba, bc, bdy, got_a, got_c), "mul_backward");
    } else {
        expect_ok(ref, ref->ops->add_forward(ref, n, scale, a, c, y), "add_forward");
        expect_ok(b, b->ops->add_forward(b, n, scale, ba, bc, by), "add_forward");
        expect_ok(ref, ref->ops->add_backward(ref, n, scale, dy, want_a, want_c), "add_backward");
        expect_ok(b, b->ops->add_backward(b, n, scale, bdy, got_a, got_c), "add_backward");
    }
    expect_close_bk(b, mul ? "mul_forward" : "add_forward", shape, seed, y, by, n, PARITY_EXACT);
    if (got_a)
        expect_close_bk(b, "backward da", shape, seed, da, bda, n, PARITY_EXACT);
    if (got_c)
        expect_close_bk(b, "backward dc", shape, seed, dc, bdc, n, PARITY_EXACT);
    bk_free(b, ba); if (!same) bk_free(b, bc);
    bk_free(b, bdy); bk_free(b, by); bk_free(b, bda); bk_free(b, bdc);
    free(a); if (!same) free(c);
    free(dy); free(y); free(da); free(dc);
}

void test_graph_merge(void **state)
{
    parity_fixture *f = *state;
    int k = 0;
    for (int mul = 0; mul < 2; mul++)
        for (size_t s = 0; s < sizeof graph_sizes / sizeof graph_sizes[0]; s++)
            for (int same = 0; same < 2; same++, k++)
                merge_case(f, case_seed(f->seed, 40, k), mul, graph_sizes[s], same,
                           1 + (k % 3));  /* da only, dc only, both */
}

static void slice_case(parity_fixture *f, uint64_t seed, int rows, int width, int from, int to)
{
    nn_backend *ref = &f->ref, *b = &f->tested[0];
    nn_rng r;
    char shape[80];
    size_t nx = (size_t)rows * (size_t)width, ny = (size_t)rows * (size_t)(to - from);
    nn_rng_seed(&r, seed);
    snprintf(shape, sizeof shape, "slice rows=%d width=%d [%d:%d]", rows, width, from, to);
    float *x = fbuf(nx), *dy = fbuf(ny), *y = fbuf(ny), *dx = fbuf(nx);
    fill(&r, x, nx, -2, 2);
    fill(&r, dy, ny, -1, 1);
    float *bx = bk_copy(b, x, nx * 4), *bdy = bk_copy(b, dy, ny * 4);
    float *by = bk_poison(b, ny), *bdx = bk_poison(b, nx);
    expect_ok(ref, ref->ops->slice_forward(ref, rows, width, from, to, x, y), "slice_forward");
    expect_ok(b, b->ops->slice_forward(b, rows, width, from, to, bx, by), "slice_forward");
    expect_close_bk(b, "slice_forward", shape, seed, y, by, ny, PARITY_EXACT);
    expect_ok(ref, ref->ops->slice_backward(ref, rows, width, from, to, dy, dx), "slice_backward");
    expect_ok(b, b->ops->slice_backward(b, rows, width, from, to, bdy, bdx), "slice_backward");
    expect_close_bk(b, "slice_backward", shape, seed, dx, bdx, nx, PARITY_EXACT);
    /* by hand: the slice is x's columns, dx is dy there and 0 elsewhere */
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < width; j++) {
            float want = j >= from && j < to ? dy[(size_t)i * (size_t)(to - from) + (size_t)(j - from)] : 0.0f;
            if (dx[(size_t)i * (size_t)width + (size_t)j] != want)
                fail_msg("cpu-ref slice_backward %s: dx[%d][%d] wrong", shape, i, j);
            if (j >= from && j < to && y[(size_t)i * (size_t)(to - from) + (size_t)(j - from)] !=
                                           x[(size_t)i * (size_t)width + (size_t)j])
                fail_msg("cpu-ref slice_forward %s: y[%d][%d] wrong", shape, i, j);
        }
    bk_free(b, bx); bk_free(b, bdy); bk_free(b, by); bk_free(b, bdx);
    free(x); free(dy); free(y); free(dx);
}

void test_graph_slice(void **state)
{
    parity_fixture *f = *state;
    static const int cases[][4] = {     /* rows, width, from, to */
        { 1, 1, 0, 1 }, { 7, 34, 17, 34 }, { 128, 68, 0, 34 }, { 5, 84, 83, 84 },
        { 1024, 68, 34, 68 }, { 3, 1000, 1, 999 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        slice_case(f, case_seed(f->seed, 41, (int)k), cases[k][0], cases[k][1], cases[k][2],
                   cases[k][3]);
}

void test_graph_accumulate(void **state)
{
    parity_fixture *f = *state;
    nn_backend *ref = &f->ref, *b = &f->tested[0];
    for (size_t s = 0; s < sizeof graph_sizes / sizeof graph_sizes[0]; s++) {
        uint64_t seed = case_seed(f->seed, 42, (int)s);
        size_t n = graph_sizes[s];
        nn_rng r;
        char shape[48];
        nn_rng_seed(&r, seed);
        snprintf(shape, sizeof shape, "accumulate n=%zu", n);
        float *src = fbuf(n), *dst = fbuf(n);
        fill(&r, src, n, -1, 1);
        fill(&r, dst, n, -1, 1);
        float *bsrc = bk_copy(b, src, n * 4), *bdst = bk_copy(b, dst, n * 4);
        expect_ok(ref, ref->ops->accumulate(ref, n, src, dst), "accumulate");
        expect_ok(b, b->ops->accumulate(b, n, bsrc, bdst), "accumulate");
        expect_close_bk(b, "accumulate", shape, seed, dst, bdst, n, PARITY_EXACT);
        bk_free(b, bsrc); bk_free(b, bdst);
        free(src); free(dst);
    }
    /* an out-of-range slice is refused with a message */
    float *d = bk_poison(b, 16);
    assert_int_equal(b->ops->slice_forward(b, 2, 4, 3, 5, d, d + 8), -1);
    assert_int_equal(b->ops->slice_backward(b, 2, 4, 2, 2, d, d + 8), -1);
    assert_non_null(strstr(b->last_error, "out of range"));
    bk_free(b, d);
}
