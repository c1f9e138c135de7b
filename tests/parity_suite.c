/* tests/parity_suite.c - the parity suite (see parity_suite.h): a backend
 * against cpu-ref, operation by operation.
 *
 * Every case draws its shapes and data from its own seed, derived from one
 * base seed (NNLAB_PARITY_SEED overrides it); a failure prints the seed, the
 * case, the shape and the worst element, so the case can be replayed.
 * Results must agree within abs + rel |ref|, per backend (the table below);
 * dropout masks and max pooling's forward are exact by contract.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <float.h>
#include <math.h>
#include <cmocka.h>

#include "parity_suite.h"

#define BASE_SEED 20240611ULL

/* ------------------------------------------------------------------------ */
/* The backends and their tolerances: the one place they are set.            */

static const parity_backend parity_backends[] = {
    {
        .name = "cpu",
        /* 2 threads runs every case; 1, and 3 (more threads than cores, uneven
         * splits), rerun the geometries that choose between threading paths */
        .variants = 3,
        .config = { { .threads = 2 }, { .threads = 1 }, { .threads = 3 } },
        .label = { "2 threads", "1 thread", "3 threads" },
        /* cpu-ref sums in double, cpu in float: long reductions are looser */
        .elementwise = { 1e-4, 1e-4 },
        .reduction = { 1e-3, 1e-3 },
        .pool_grad = { 1e-6, 1e-6 },
    },
    {
        .name = "gpu",
        .variants = 1,
        .config = { { .tf32 = 0 } },    /* plain FP32 products, as the CPU */
        .label = { "" },
        .elementwise = { 1e-4, 1e-4 },
        .reduction = { 1e-3, 1e-3 },
        .pool_grad = { 0.0, 0.0 },      /* it adds in cpu-ref's order */
    },
};

/* ------------------------------------------------------------------------ */
/* Fixture                                                                   */

int parity_group_teardown(void **state)
{
    parity_fixture *f = *state;
    if (f) {
        for (int v = PARITY_MAX_VARIANTS - 1; v >= 0; v--)
            nn_backend_close(&f->tested[v]);
        nn_backend_close(&f->ref);
        free(f);
    }
    *state = NULL;
    return 0;
}

static const parity_backend *parity_backend_named(const char *name)
{
    for (size_t i = 0; i < sizeof parity_backends / sizeof parity_backends[0]; i++)
        if (strcmp(parity_backends[i].name, name) == 0)
            return &parity_backends[i];
    return NULL;
}

int parity_group_setup(void **state, const char *name)
{
    const parity_backend *spec = parity_backend_named(name);
    parity_fixture *f = calloc(1, sizeof *f);
    if (!spec || !f) {
        fprintf(stderr, "# no parity table row for %s, or out of memory\n", name);
        free(f);
        return -1;
    }
    *state = f;
    f->spec = spec;
    char what[64];
    snprintf(what, sizeof what, "%s parity seed", name);
    f->seed = parity_seed_init(BASE_SEED, what);
    parity_report_as(name);
    nn_backend_config one = { .threads = 1 };
    if (nn_backend_open(&f->ref, nn_backend_find("cpu-ref"), &one) != 0) {
        fprintf(stderr, "# cpu-ref: %s\n", f->ref.last_error);
        parity_group_teardown(state);
        return -1;
    }
    const nn_backend_ops *ops = nn_backend_find(name);
    for (int v = 0; v < spec->variants; v++)
        if (nn_backend_open(&f->tested[v], ops, &spec->config[v]) != 0) {
            fprintf(stderr, "# cannot open %s (%s): %s\n", name, spec->label[v],
                    f->tested[v].last_error);
            parity_group_teardown(state);
            return -1;
        }
    return 0;
}

/* " (2 threads)", or "" for a backend opened one way */
static const char *variant_suffix(const parity_fixture *f, int v, char *buf, size_t len)
{
    const char *label = f->spec->label[v];
    if (label && *label)
        snprintf(buf, len, " (%s)", label);
    else
        buf[0] = '\0';
    return buf;
}

/* ------------------------------------------------------------------------ */
/* Memory operations                                                         */

void test_memory_ops(void **state)
{
    parity_fixture *f = *state;
    nn_backend *b = &f->tested[0];
    const size_t sizes[] = { 0, 1, 3, 64, 1000, 1 << 20 };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t bytes = sizes[k], n = bytes ? bytes : 1;
        void *p = NULL;
        expect_ok(b, b->ops->alloc(b, bytes, &p), "alloc");
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 64, 0);
        unsigned char *src = malloc(n), *back = malloc(n);
        assert_non_null(src);
        assert_non_null(back);
        memset(back, 0xab, n);
        expect_ok(b, b->ops->download(b, back, p, bytes), "download");
        for (size_t i = 0; i < bytes; i++)
            assert_int_equal(back[i], 0);      /* zeroed */
        for (size_t i = 0; i < n; i++)
            src[i] = (unsigned char)(i * 131 + 7);
        expect_ok(b, b->ops->upload(b, p, src, bytes), "upload");
        expect_ok(b, b->ops->download(b, back, p, bytes), "download");
        assert_memory_equal(src, back, bytes);
        expect_ok(b, b->ops->zero(b, p, bytes), "zero");
        expect_ok(b, b->ops->download(b, back, p, bytes), "download");
        for (size_t i = 0; i < bytes; i++)
            assert_int_equal(back[i], 0);
        expect_ok(b, b->ops->synchronize(b), "synchronize");
        b->ops->free(b, p);
        free(src);
        free(back);
    }
}

/* ------------------------------------------------------------------------ */
/* Linear                                                                    */

void parity_linear_case(parity_fixture *f, int v, uint64_t seed, int n, int in, int out,
                        int with_bias, int with_dx)
{
    nn_backend *ref = &f->ref, *b = &f->tested[v];
    char shape[128], suffix[32];
    snprintf(shape, sizeof shape, "linear n=%d in=%d out=%d bias=%d dx=%d%s", n, in, out,
             with_bias, with_dx, variant_suffix(f, v, suffix, sizeof suffix));
    nn_rng r;
    nn_rng_seed(&r, seed);
    size_t nx = (size_t)n * in, nw = (size_t)out * in, ny = (size_t)n * out, nb = (size_t)out;
    float *x = fbuf(nx), *w = fbuf(nw), *bias = fbuf(nb), *dy = fbuf(ny);
    fill(&r, x, nx, -1, 1);
    fill(&r, w, nw, -1, 1);
    fill(&r, bias, nb, -1, 1);
    fill(&r, dy, ny, -1, 1);
    float *y_ref = fbuf(ny), *dx_ref = fbuf(nx), *dw_ref = fbuf(nw), *db_ref = fbuf(nb);
    float *bx = bk_copy(b, x, nx * 4), *bw = bk_copy(b, w, nw * 4), *bb = bk_copy(b, bias, nb * 4);
    float *bdy = bk_copy(b, dy, ny * 4), *by = bk_poison(b, ny), *bdx = bk_poison(b, nx);
    float *bdw = bk_poison(b, nw), *bdb = bk_poison(b, nb);
    const parity_tol tol = f->spec->elementwise, sum_tol = f->spec->reduction;

    expect_ok(ref, ref->ops->linear_forward(ref, n, in, out, x, w, with_bias ? bias : NULL,
                                            y_ref), "linear_forward");
    expect_ok(b, b->ops->linear_forward(b, n, in, out, bx, bw, with_bias ? bb : NULL, by),
              "linear_forward");
    expect_close_bk(b, "linear_forward y", shape, seed, y_ref, by, ny, tol);

    expect_ok(ref, ref->ops->linear_backward(ref, n, in, out, x, w, dy, with_dx ? dx_ref : NULL,
                                             dw_ref, db_ref), "linear_backward");
    expect_ok(b, b->ops->linear_backward(b, n, in, out, bx, bw, bdy, with_dx ? bdx : NULL, bdw,
                                         bdb), "linear_backward");
    if (with_dx)
        expect_close_bk(b, "linear_backward dx", shape, seed, dx_ref, bdx, nx, tol);
    expect_close_bk(b, "linear_backward dw", shape, seed, dw_ref, bdw, nw, sum_tol);
    expect_close_bk(b, "linear_backward dbias", shape, seed, db_ref, bdb, nb, sum_tol);

    float *bufs[] = { bx, bw, bb, bdy, by, bdx, bdw, bdb };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        bk_free(b, bufs[i]);
    free(x); free(w); free(bias); free(dy); free(y_ref); free(dx_ref); free(dw_ref); free(db_ref);
}

void test_linear(void **state)
{
    parity_fixture *f = *state;
    /* edges: ones, odd sizes, the presets' layers, a tall thin product */
    static const int fixed[][3] = {
        { 1, 1, 1 }, { 1, 300, 1 }, { 300, 1, 1 }, { 1, 1, 300 }, { 7, 13, 5 },
        { 4, 400, 120 }, { 4, 84, 10 }, { 32, 784, 128 }, { 17, 1, 20 }, { 300, 299, 301 },
        { 4096, 16, 1 },
        /* narrow inputs (in a multiple of 4 up to 24: cpu_linear_narrow.c's
         * kernel, at every width it has): the Jacobian's 100 x 400 . 400 x 20,
         * odd rows, a split over threads, widths beside its range */
        { 100, 20, 400 }, { 9, 24, 33 }, { 5, 8, 7 }, { 3, 4, 1 }, { 2003, 12, 50 }, { 6, 16, 9 },
        { 1, 20, 3 }, { 3, 17, 1 }, { 6, 25, 9 }, { 7, 28, 5 },
        /* small batches (1..8: cpu_linear_small.c's forward, weight and
         * input gradients, at every batch it has), widths off the vector's
         * 8 and the input gradient's 64-column tile, a split over threads,
         * and 9 just beyond its range */
        { 1, 784, 128 }, { 2, 1000, 10 }, { 3, 35, 17 }, { 5, 1, 40 }, { 6, 7, 3 },
        { 8, 784, 1000 }, { 8, 3, 300 }, { 9, 784, 128 }, { 4, 1000, 1000 }, { 7, 129, 65 },
    };
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
        parity_linear_case(f, 0, case_seed(f->seed, 1, (int)k), fixed[k][0], fixed[k][1],
                           fixed[k][2], 1, 1);
    for (int k = 0; k < 16; k++) {
        uint64_t seed = case_seed(f->seed, 2, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        int n = rnd(&r, 1, 300), in = rnd(&r, 1, 300), out = rnd(&r, 1, 300);
        parity_linear_case(f, 0, seed, n, in, out, k % 4 != 1, k % 3 != 2);
    }
}

/* ------------------------------------------------------------------------ */
/* Convolution                                                               */

/* Forward and backward of one geometry on variant v against cpu-ref, each
 * with a workspace of exactly the size it reports. */
void parity_conv_case(parity_fixture *f, int v, uint64_t seed, const nn_conv_geom *g,
                      int with_bias, int with_dx)
{
    nn_backend *ref = &f->ref, *b = &f->tested[v];
    char shape[192], extra[64], suffix[32];
    snprintf(extra, sizeof extra, " bias=%d dx=%d%s", with_bias, with_dx,
             variant_suffix(f, v, suffix, sizeof suffix));
    conv_shape(shape, sizeof shape, g, extra);
    nn_rng r;
    nn_rng_seed(&r, seed);
    size_t nx = (size_t)g->n * g->c_in * g->h_in * g->w_in;
    size_t nw = (size_t)g->c_out * g->c_in * g->k_h * g->k_w;
    size_t ny = (size_t)g->n * g->c_out * g->h_out * g->w_out, nb = (size_t)g->c_out;
    float *x = fbuf(nx), *w = fbuf(nw), *bias = fbuf(nb), *dy = fbuf(ny);
    fill(&r, x, nx, -1, 1);
    fill(&r, w, nw, -1, 1);
    fill(&r, bias, nb, -1, 1);
    fill(&r, dy, ny, -1, 1);
    float *y_ref = fbuf(ny), *dx_ref = fbuf(nx), *dw_ref = fbuf(nw), *db_ref = fbuf(nb);
    size_t ref_ws_bytes = 0, ws_bytes = 0;
    expect_ok(ref, ref->ops->conv2d_workspace(ref, g, &ref_ws_bytes), "conv2d_workspace");
    expect_ok(b, b->ops->conv2d_workspace(b, g, &ws_bytes), "conv2d_workspace");
    void *ref_ws = malloc(ref_ws_bytes ? ref_ws_bytes : 1);
    assert_non_null(ref_ws);
    void *ws = bk_alloc(b, ws_bytes);
    float *bx = bk_copy(b, x, nx * 4), *bw = bk_copy(b, w, nw * 4), *bb = bk_copy(b, bias, nb * 4);
    float *bdy = bk_copy(b, dy, ny * 4), *by = bk_poison(b, ny), *bdx = bk_poison(b, nx);
    float *bdw = bk_poison(b, nw), *bdb = bk_poison(b, nb);
    const parity_tol tol = f->spec->elementwise, sum_tol = f->spec->reduction;

    expect_ok(ref, ref->ops->conv2d_forward(ref, g, x, w, with_bias ? bias : NULL, y_ref,
                                            ref_ws), "conv2d_forward");
    expect_ok(b, b->ops->conv2d_forward(b, g, bx, bw, with_bias ? bb : NULL, by, ws),
              "conv2d_forward");
    expect_close_bk(b, "conv2d_forward y", shape, seed, y_ref, by, ny, tol);

    expect_ok(ref, ref->ops->conv2d_backward(ref, g, x, w, dy, with_dx ? dx_ref : NULL, dw_ref,
                                             db_ref, ref_ws), "conv2d_backward");
    expect_ok(b, b->ops->conv2d_backward(b, g, bx, bw, bdy, with_dx ? bdx : NULL, bdw, bdb, ws),
              "conv2d_backward");
    if (with_dx)
        expect_close_bk(b, "conv2d_backward dx", shape, seed, dx_ref, bdx, nx, tol);
    expect_close_bk(b, "conv2d_backward dw", shape, seed, dw_ref, bdw, nw, sum_tol);
    expect_close_bk(b, "conv2d_backward dbias", shape, seed, db_ref, bdb, nb, sum_tol);

    void *bufs[] = { ws, bx, bw, bb, bdy, by, bdx, bdw, bdb };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        bk_free(b, bufs[i]);
    free(ref_ws);
    free(x); free(w); free(bias); free(dy); free(y_ref); free(dx_ref); free(dw_ref); free(db_ref);
}

void test_conv2d_random(void **state)
{
    parity_fixture *f = *state;
    for (int k = 0; k < 40; k++) {
        uint64_t seed = case_seed(f->seed, 3, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        nn_conv_geom g = random_conv(&r, 0, 6);
        parity_conv_case(f, 0, seed, &g, k % 5 != 3, k % 4 != 1);
    }
}

void test_conv1d_random(void **state)
{
    parity_fixture *f = *state;
    for (int k = 0; k < 30; k++) {
        uint64_t seed = case_seed(f->seed, 4, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        nn_conv_geom g = random_conv(&r, 1, 40);
        parity_conv_case(f, 0, seed, &g, k % 5 != 3, k % 4 != 1);
    }
}

/* The presets' convolutions, and geometries chosen to hit each path of the
 * cpu backend's schemes (cpu_conv_im2col.c, cpu_conv_direct_run.c): one
 * sample per gemm, several samples per gemm with a shorter last chunk, the
 * 1x1 shortcut, batches smaller than the threads. Every variant runs them
 * (the last of several without dx). */
void test_conv2d_presets_and_chunks(void **state)
{
    parity_fixture *f = *state;
    const nn_conv_geom cases[] = {
        conv_geom(4, 3, 32, 32, 6, 5, 1, 0),     /* LeNet conv1 */
        conv_geom(4, 6, 14, 14, 16, 5, 1, 0),    /* LeNet conv2 */
        conv_geom(9, 6, 14, 14, 16, 5, 1, 0),    /* several samples per gemm */
        conv_geom(1, 3, 32, 32, 6, 5, 1, 0),     /* batch 1: fewer samples than threads */
        conv_geom(11, 8, 18, 18, 5, 3, 1, 1),    /* K*HW = 18432: 3 per chunk, remainders */
        conv_geom(37, 1, 1, 16, 8, 3, 1, 1),     /* conv1d-regression, first conv */
        conv_geom(37, 8, 1, 5, 16, 3, 1, 1),     /* conv1d-regression, second conv */
        conv_geom(3, 16, 64, 64, 8, 1, 1, 0),    /* 1x1, one sample per gemm: no im2col */
        conv_geom(5, 4, 6, 6, 7, 1, 1, 0),       /* 1x1, batched: im2col is a copy */
        conv_geom(2, 16, 40, 40, 16, 1, 1, 0),   /* 1x1, one sample per thread */
        conv_geom(3, 4, 9, 9, 3, 1, 2, 0),       /* 1x1, strided */
        conv_geom(2, 2, 7, 9, 3, 3, 2, 2),       /* stride 2 with padding 2 */
        conv_geom(3, 5, 5, 3, 4, 5, 1, 2),       /* kernel as large as the padded input */
        conv_geom(2, 16, 20, 20, 8, 5, 1, 2),    /* K*HW = 160000: tiles of 8 output rows */
        conv_geom(2, 16, 29, 29, 6, 5, 2, 2),    /* tiles, stride 2, padding 2 */
        /* the cpu's direct kernels (cpu_conv_direct.c; tests/parity-im2col.sh
         * runs these through im2col instead) */
        conv_geom(1, 2, 30, 30, 13, 3, 1, 1),    /* rows split between threads, 6+6+1 channels */
        conv_geom(3, 3, 28, 28, 32, 5, 1, 2),    /* 32 channels, an odd tap count, padding */
        conv_geom(2, 1, 40, 40, 7, 7, 1, 0),     /* 7x7, one input channel */
        conv_geom(5, 4, 16, 16, 5, 2, 1, 0),     /* an even kernel, 16 of 17 columns */
    };
    const int variants = f->spec->variants;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int v = 0; v < variants; v++)
            parity_conv_case(f, v, case_seed(f->seed, 5, (int)k), &cases[k], 1,
                             variants == 1 || v < variants - 1);
    /* LeNet's first convolution at a large batch */
    const nn_conv_geom lenet_256 = conv_geom(256, 3, 32, 32, 6, 5, 1, 0);
    parity_conv_case(f, 0, case_seed(f->seed, 5, 19), &lenet_256, 1, 1);
}

/* ------------------------------------------------------------------------ */
/* Max pooling                                                               */

static void pool_shape(char *s, size_t len, const nn_pool_geom *g, const char *extra)
{
    snprintf(s, len, "maxpool n=%d c=%d %dx%d -> %dx%d k=%dx%d stride=%dx%d%s", g->n, g->c,
             g->h_in, g->w_in, g->h_out, g->w_out, g->k_h, g->k_w, g->stride_h, g->stride_w,
             extra);
}

/* Forward and backward of one pooling on variant v; x as drawn (with ties:
 * on a coarse grid, so the first-maximum rule decides; with nan: every fifth
 * element NaN, which wins the forward and takes the gradient when it is the
 * window's last NaN). */
static void pool_run(parity_fixture *f, int v, uint64_t seed, const char *shape,
                     const nn_pool_geom *g, const float *x, const float *dy, parity_tol dx_tol)
{
    nn_backend *ref = &f->ref, *b = &f->tested[v];
    size_t nx = (size_t)g->n * g->c * g->h_in * g->w_in;
    size_t ny = (size_t)g->n * g->c * g->h_out * g->w_out;
    float *y_ref = fbuf(ny), *dx_ref = fbuf(nx);
    float *bx = bk_copy(b, x, nx * 4), *bdy = bk_copy(b, dy, ny * 4);
    float *by = bk_poison(b, ny), *bdx = bk_poison(b, nx);   /* backward must overwrite all */
    expect_ok(ref, ref->ops->maxpool2d_forward(ref, g, x, y_ref), "maxpool2d_forward");
    expect_ok(b, b->ops->maxpool2d_forward(b, g, bx, by), "maxpool2d_forward");
    expect_close_bk(b, "maxpool2d_forward y", shape, seed, y_ref, by, ny, PARITY_EXACT);
    expect_ok(ref, ref->ops->maxpool2d_backward(ref, g, x, y_ref, dy, dx_ref),
              "maxpool2d_backward");
    expect_ok(b, b->ops->maxpool2d_backward(b, g, bx, by, bdy, bdx), "maxpool2d_backward");
    expect_close_bk(b, "maxpool2d_backward dx", shape, seed, dx_ref, bdx, nx, dx_tol);
    bk_free(b, bx); bk_free(b, bdy); bk_free(b, by); bk_free(b, bdx);
    free(y_ref); free(dx_ref);
}

static void pool_case(parity_fixture *f, int v, uint64_t seed, const nn_pool_geom *g, int ties)
{
    char shape[160], extra[48], suffix[32];
    snprintf(extra, sizeof extra, " ties=%d%s", ties, variant_suffix(f, v, suffix, sizeof suffix));
    pool_shape(shape, sizeof shape, g, extra);
    nn_rng r;
    nn_rng_seed(&r, seed);
    size_t nx = (size_t)g->n * g->c * g->h_in * g->w_in;
    size_t ny = (size_t)g->n * g->c * g->h_out * g->w_out;
    float *x = fbuf(nx), *dy = fbuf(ny);
    if (ties)
        fill_ties(&r, x, nx);
    else
        fill(&r, x, nx, -1, 1);
    fill(&r, dy, ny, -1, 1);
    pool_run(f, v, seed, shape, g, x, dy, f->spec->pool_grad);
    free(x); free(dy);
}

void test_maxpool(void **state)
{
    parity_fixture *f = *state;
    for (int k = 0; k < 24; k++) {
        uint64_t seed = case_seed(f->seed, 7, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        nn_pool_geom g = random_pool(&r, k);
        pool_case(f, 0, seed, &g, k % 2 == 0);
    }
    /* the presets' pools at a batch large enough to be split between
     * threads; on a backend opened several ways, again on the last */
    const nn_pool_geom presets[] = {
        pool_geom(64, 6, 28, 28, 2, 2, 2, 2),
        pool_geom(64, 16, 10, 10, 2, 2, 2, 2),
        pool_geom(512, 8, 1, 16, 1, 3, 1, 3),
        pool_geom(512, 16, 1, 5, 1, 5, 1, 1),
        pool_geom(3, 2, 9, 11, 3, 3, 3, 3),      /* non-overlapping 3x3 windows */
        pool_geom(2, 2, 7, 9, 2, 2, 3, 4),       /* gaps between the windows */
    };
    const int last = f->spec->variants - 1;
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
        pool_case(f, 0, case_seed(f->seed, 8, (int)i), &presets[i], 1);
        if (last > 0)
            pool_case(f, last, case_seed(f->seed, 8, (int)i), &presets[i], 0);
    }
}

/* NaN handling follows cpu-ref (and PyTorch): a NaN in a window wins the
 * forward, and its gradient goes to the window's last NaN; both exact.
 * test_maxpool_nan_rule checks that rule itself on windows made by hand. */
void test_maxpool_nan(void **state)
{
    parity_fixture *f = *state;
    const nn_pool_geom gs[] = {
        pool_geom(2, 3, 6, 7, 2, 2, 2, 2),
        pool_geom(2, 3, 6, 7, 3, 3, 1, 2),
        pool_geom(2, 3, 1, 16, 1, 3, 1, 3),
        /* rows of 22 windows: the AVX2 loop's blocks of 8 and 4, those
         * holding a NaN handed to the scalar loop, and its tail */
        pool_geom(2, 3, 6, 45, 2, 2, 2, 2),
    };
    for (int k = 0; k < (int)(sizeof gs / sizeof gs[0]); k++) {
        uint64_t seed = case_seed(f->seed, 9, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        size_t nx = (size_t)gs[k].n * gs[k].c * gs[k].h_in * gs[k].w_in;
        size_t ny = (size_t)gs[k].n * gs[k].c * gs[k].h_out * gs[k].w_out;
        float *x = fbuf(nx), *dy = fbuf(ny);
        fill(&r, x, nx, -1, 1);
        fill(&r, dy, ny, -1, 1);
        /* every 5th; in the wide case only rows 2-3 of each plane, so
         * that some blocks of 8 windows hold no NaN */
        for (size_t i = 0; i < nx; i += 5)
            if (gs[k].w_in < 45 || (i / (size_t)gs[k].w_in) % (size_t)gs[k].h_in / 2 == 1)
                x[i] = NAN;
        char shape[160];
        pool_shape(shape, sizeof shape, &gs[k], " nan");
        pool_run(f, 0, seed, shape, &gs[k], x, dy, PARITY_EXACT);
        free(x); free(dy);
    }
}

/* One pooling made by hand: x, dy, and the y and dx PyTorch gives (NaN
 * compares equal to NaN here). */
typedef struct pool_by_hand {
    const char *what;
    nn_pool_geom g;
    float x[24], dy[8], y[8], dx[24];
} pool_by_hand;

static void expect_by_hand(const char *name, const char *what, const char *out, const float *want,
                           const float *got, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(isnan(want[i]) ? isnan(got[i]) : memcmp(&want[i], &got[i], sizeof got[i]) == 0))
            fail_msg("%s on %s: %s[%zu] is %g, PyTorch gives %g", what, name, out, i,
                     (double)got[i], (double)want[i]);
}

static void pool_by_hand_run(nn_backend *b, const char *name, const pool_by_hand *c)
{
    const nn_pool_geom *g = &c->g;
    size_t nx = (size_t)g->n * g->c * g->h_in * g->w_in;
    size_t ny = (size_t)g->n * g->c * g->h_out * g->w_out;
    float y[8], dx[24];
    float *bx = bk_copy(b, c->x, nx * 4), *bdy = bk_copy(b, c->dy, ny * 4);
    float *by = bk_poison(b, ny), *bdx = bk_poison(b, nx);
    expect_ok(b, b->ops->maxpool2d_forward(b, g, bx, by), "maxpool2d_forward");
    expect_ok(b, b->ops->maxpool2d_backward(b, g, bx, by, bdy, bdx), "maxpool2d_backward");
    bk_read(b, y, by, ny * 4);
    bk_read(b, dx, bdx, nx * 4);
    expect_by_hand(name, c->what, "y", c->y, y, ny);
    expect_by_hand(name, c->what, "dx", c->dx, dx, nx);
    bk_free(b, bx); bk_free(b, bdy); bk_free(b, by); bk_free(b, bdx);
}

/* PyTorch's rule (aten's max_pool2d kernels: a position is taken when it is
 * greater than the best so far or NaN) on windows made by hand, for cpu-ref
 * and the backend under test, through each of cpu's paths: 2x2 stride 2,
 * windows apart, windows that overlap. The gradient goes to the first of
 * equal maxima and to the last NaN. */
void test_maxpool_nan_rule(void **state)
{
    parity_fixture *f = *state;
    const float N = NAN, I = INFINITY;
    const pool_by_hand cases[] = {
        { "2x2 windows: NaN first, NaN last, two NaNs, NaN and +inf, a tie, all -inf",
          pool_geom(1, 1, 2, 12, 2, 2, 2, 2),
          /* row 0 then row 1; window k is columns 2k, 2k+1 of both rows */
          { N, 1, 1, 2, N, 5, I, N, 2, 2, -I, -I,
            2, 3, 3, N, N, 1, I, -I, 1, 2, -I, -I },
          { 1, 2, 3, 4, 5, 6 }, { N, N, N, N, 2, -I },
          { 1, 0, 0, 0, 0, 0, 0, 4, 5, 0, 6, 0,
            0, 0, 0, 2, 3, 0, 0, 0, 0, 0, 0, 0 } },
        { "3-wide windows apart: two NaNs, NaN between infinities",
          pool_geom(1, 1, 1, 7, 1, 3, 1, 3),
          { N, 3, N, I, N, -I, 5 }, { 1, 2 }, { N, N },
          { 0, 0, 1, 0, 2, 0, 0 } },
        { "3-wide windows overlapping: a NaN last of one window and first of two, a tie",
          pool_geom(1, 1, 1, 7, 1, 3, 1, 1),
          { 1, N, 2, N, 0, 4, 4 }, { 1, 10, 100, 1000, 10000 }, { N, N, N, N, 4 },
          { 0, 1, 0, 1110, 0, 10000, 0 } },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        pool_by_hand_run(&f->ref, "cpu-ref", &cases[k]);
        for (int v = 0; v < f->spec->variants; v++)
            pool_by_hand_run(&f->tested[v], f->spec->name, &cases[k]);
    }
}

/* ------------------------------------------------------------------------ */
/* Activations                                                               */

/* Forward and backward of one activation over n inputs x; the backward gets
 * only what the contract says it reads (x for relu and mish, y for tanh). */
static void act_run(parity_fixture *f, uint64_t seed, const char *shape, enum nn_act act,
                    const float *x, const float *dy, size_t n)
{
    nn_backend *ref = &f->ref, *b = &f->tested[0];
    const parity_tol tol = f->spec->elementwise;
    float *y_ref = fbuf(n), *dx_ref = fbuf(n);
    float *bx = bk_copy(b, x, n * 4), *bdy = bk_copy(b, dy, n * 4);
    float *by = bk_poison(b, n), *bdx = bk_poison(b, n);
    expect_ok(ref, ref->ops->act_forward(ref, act, n, x, y_ref), "act_forward");
    expect_ok(b, b->ops->act_forward(b, act, n, bx, by), "act_forward");
    expect_close_bk(b, "act_forward", shape, seed, y_ref, by, n, tol);
    expect_ok(ref, ref->ops->act_backward(ref, act, n, x, y_ref, dy, dx_ref), "act_backward");
    const int tanh_ = act == NN_ACT_TANH;
    expect_ok(b, b->ops->act_backward(b, act, n, tanh_ ? NULL : bx, tanh_ ? by : NULL, bdy, bdx),
              "act_backward");
    expect_close_bk(b, "act_backward", shape, seed, dx_ref, bdx, n, tol);
    bk_free(b, bx); bk_free(b, bdy); bk_free(b, by); bk_free(b, bdx);
    free(y_ref); free(dx_ref);
}

static const enum nn_act acts[] = { NN_ACT_RELU, NN_ACT_TANH, NN_ACT_MISH };
static const char *const act_names[] = { "relu", "tanh", "mish" };

void test_activations(void **state)
{
    parity_fixture *f = *state;
    static const size_t sizes[] = { 1, 7, 16, 1000, 65537, 300001 };
    int k = 0;
    for (size_t a = 0; a < 3; a++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++, k++) {
            uint64_t seed = case_seed(f->seed, 10, k);
            nn_rng r;
            nn_rng_seed(&r, seed);
            size_t n = sizes[s];
            char shape[64];
            snprintf(shape, sizeof shape, "%s n=%zu", act_names[a], n);
            float *x = fbuf(n), *dy = fbuf(n);
            fill_act_inputs(&r, x, n);
            fill(&r, dy, n, -1, 1);
            act_run(f, seed, shape, acts[a], x, dy, n);
            free(x); free(dy);
        }
}

/* The edges of the activations' fast paths (cpu's mish clamps its exponent
 * to [-87, 20] and special-cases beyond): the infinities and NaN must come
 * out as cpu-ref's. */
void test_activation_edges(void **state)
{
    parity_fixture *f = *state;
    static const float xs[] = {
        NAN, INFINITY, -INFINITY, -FLT_MAX, -1e30f, -1000.0f, -104.0f, -88.0f, -87.0f,
        -86.99f, -50.0f, -20.0f, -5.0f, -1.1924f, -1e-30f, -0.0f, 0.0f, 1e-38f, 1e-3f, 0.5f,
        3.0f, 19.99f, 20.0f, 20.01f, 30.0f, 44.0f, 45.0f, 88.0f, 1000.0f, 1e30f, FLT_MAX,
    };
    const size_t n = sizeof xs / sizeof xs[0];
    float dy[sizeof xs / sizeof xs[0]];
    for (size_t i = 0; i < n; i++)
        dy[i] = i % 2 ? 0.5f : -2.0f;
    for (size_t a = 0; a < 3; a++) {
        char shape[32];
        snprintf(shape, sizeof shape, "%s edges", act_names[a]);
        act_run(f, 0, shape, acts[a], xs, dy, n);
    }
}

/* ------------------------------------------------------------------------ */
/* Dropout: the mask is a shared pure function, so results are identical.    */

void test_dropout(void **state)
{
    parity_fixture *f = *state;
    nn_backend *ref = &f->ref, *b = &f->tested[0];
    static const float ps[] = { 0.0f, 0.2f, 0.5f, 0.999f, 1.0f };
    static const size_t sizes[] = { 1, 33, 100000 };
    int k = 0;
    for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++, k++) {
            uint64_t seed = case_seed(f->seed, 11, k);
            nn_rng r;
            nn_rng_seed(&r, seed);
            size_t n = sizes[s];
            const float p = ps[pi];
            uint64_t dseed = nn_rng_u64(&r), counter = nn_rng_u64(&r) >> 20;
            char shape[64];
            snprintf(shape, sizeof shape, "dropout n=%zu p=%g", n, (double)p);
            float *x = fbuf(n), *y_ref = fbuf(n), *dx_ref = fbuf(n);
            fill(&r, x, n, -2, 2);
            float *bx = bk_copy(b, x, n * 4), *by = bk_poison(b, n), *bdx = bk_poison(b, n);
            expect_ok(ref, ref->ops->dropout_forward(ref, n, p, dseed, counter, x, y_ref),
                      "dropout_forward");
            expect_ok(b, b->ops->dropout_forward(b, n, p, dseed, counter, bx, by),
                      "dropout_forward");
            expect_close_bk(b, "dropout_forward", shape, seed, y_ref, by, n, PARITY_EXACT);
            expect_ok(ref, ref->ops->dropout_backward(ref, n, p, dseed, counter, x, dx_ref),
                      "dropout_backward");
            expect_ok(b, b->ops->dropout_backward(b, n, p, dseed, counter, bx, bdx),
                      "dropout_backward");
            expect_close_bk(b, "dropout_backward", shape, seed, dx_ref, bdx, n, PARITY_EXACT);
            bk_free(b, bx); bk_free(b, by); bk_free(b, bdx);
            free(x); free(y_ref); free(dx_ref);
        }
}

/* ------------------------------------------------------------------------ */
/* Losses                                                                    */

/* Case k: n = 1 first, 100000 last (a reduction over many blocks), one class
 * once, the rest random. The stats accumulator starts non-zero (losses add
 * to it) and, after two more calls, must hold three calls' sums. */
void test_softmax_xent(void **state)
{
    parity_fixture *f = *state;
    nn_backend *ref = &f->ref, *b = &f->tested[0];
    for (int k = 0; k < 13; k++) {
        uint64_t seed = case_seed(f->seed, 12, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        int n = k == 0 ? 1 : k == 12 ? 100000 : rnd(&r, 1, 300);
        int classes = k == 1 ? 1 : rnd(&r, 1, 20);
        size_t m = (size_t)n * classes;
        char shape[64];
        snprintf(shape, sizeof shape, "softmax_xent n=%d classes=%d", n, classes);
        float *logits = fbuf(m), *d_ref = fbuf(m);
        int32_t *labels = malloc((size_t)n * sizeof *labels);
        assert_non_null(labels);
        fill(&r, logits, m, -8, 8);
        for (int i = 0; i < n; i++)
            labels[i] = (int32_t)nn_rng_below(&r, (uint64_t)classes);
        float st_ref[2] = { 1.5f, 3.0f }, st[2] = { 1.5f, 3.0f };
        int with_grad = k % 3 != 2;
        float *bl = bk_copy(b, logits, m * 4), *bd = bk_poison(b, m), *bst = bk_copy(b, st, 8);
        int32_t *blab = bk_copy(b, labels, (size_t)n * 4);
        expect_ok(ref, ref->ops->softmax_xent(ref, n, classes, logits, labels,
                                              with_grad ? d_ref : NULL, st_ref), "softmax_xent");
        expect_ok(b, b->ops->softmax_xent(b, n, classes, bl, blab, with_grad ? bd : NULL, bst),
                  "softmax_xent");
        expect_close_bk(b, "softmax_xent stats", shape, seed, st_ref, bst, 2, f->spec->reduction);
        if (with_grad)
            expect_close_bk(b, "softmax_xent dlogits", shape, seed, d_ref, bd, m,
                            f->spec->elementwise);
        for (int again = 0; again < 2; again++) {
            expect_ok(ref, ref->ops->softmax_xent(ref, n, classes, logits, labels, NULL, st_ref),
                      "softmax_xent");
            expect_ok(b, b->ops->softmax_xent(b, n, classes, bl, blab, NULL, bst), "softmax_xent");
        }
        expect_close_bk(b, "softmax_xent stats after 3 calls", shape, seed, st_ref, bst, 2,
                        f->spec->reduction);
        bk_free(b, bl); bk_free(b, bd); bk_free(b, bst); bk_free(b, blab);
        free(logits); free(d_ref); free(labels);
    }
}

/* Case k: random sizes, then 300000 rows and a single row. */
void test_mse(void **state)
{
    parity_fixture *f = *state;
    nn_backend *ref = &f->ref, *b = &f->tested[0];
    for (int k = 0; k < 14; k++) {
        uint64_t seed = case_seed(f->seed, 13, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        int n = k == 12 ? 300000 : k == 13 ? 1 : rnd(&r, 1, 4096), width = rnd(&r, 1, 5);
        size_t m = (size_t)n * width;
        char shape[64];
        snprintf(shape, sizeof shape, "mse n=%d width=%d", n, width);
        float *pred = fbuf(m), *target = fbuf(m), *d_ref = fbuf(m);
        fill(&r, pred, m, -3, 3);
        fill(&r, target, m, -3, 3);
        float st_ref[1] = { 0.25f }, st[1] = { 0.25f };
        int with_grad = k % 3 != 2;
        float *bp = bk_copy(b, pred, m * 4), *bt = bk_copy(b, target, m * 4);
        float *bd = bk_poison(b, m), *bst = bk_copy(b, st, 4);
        expect_ok(ref, ref->ops->mse(ref, n, width, pred, target, with_grad ? d_ref : NULL,
                                     st_ref), "mse");
        expect_ok(b, b->ops->mse(b, n, width, bp, bt, with_grad ? bd : NULL, bst), "mse");
        expect_close_bk(b, "mse stats", shape, seed, st_ref, bst, 1, f->spec->reduction);
        if (with_grad)
            expect_close_bk(b, "mse dpred", shape, seed, d_ref, bd, m, f->spec->elementwise);
        bk_free(b, bp); bk_free(b, bt); bk_free(b, bd); bk_free(b, bst);
        free(pred); free(target); free(d_ref);
    }
}

/* ------------------------------------------------------------------------ */
/* Optimisers: several steps, fresh gradients each time.                     */

static void sgd_case(parity_fixture *f, uint64_t seed, const nn_sgd_hyper *h, size_t n)
{
    nn_backend *ref = &f->ref, *b = &f->tested[0];
    const parity_tol tol = f->spec->elementwise;
    nn_rng r;
    nn_rng_seed(&r, seed);
    float *p_ref = fbuf(n), *g = fbuf(n), *v_ref = fbuf(n), *v = fbuf(n);
    fill(&r, p_ref, n, -1, 1);
    float *bp = bk_copy(b, p_ref, n * 4), *bg = bk_poison(b, n);
    /* stale velocities, different on each side: step 1 must not read them */
    fill(&r, v_ref, n, -1, 1);
    fill(&r, v, n, -1, 1);
    float *bv = bk_copy(b, v, n * 4);
    int with_v = h->momentum != 0.0f;
    /* compared after every step: step 1 stores g, later steps damp it */
    for (long t = 1; t <= 4; t++) {
        fill(&r, g, n, -1, 1);
        expect_ok(b, b->ops->upload(b, bg, g, n * 4), "upload");
        expect_ok(ref, ref->ops->sgd_step(ref, n, p_ref, g, with_v ? v_ref : NULL, h, t),
                  "sgd_step");
        expect_ok(b, b->ops->sgd_step(b, n, bp, bg, with_v ? bv : NULL, h, t), "sgd_step");
        char shape[128];
        snprintf(shape, sizeof shape, "sgd n=%zu momentum=%g dampening=%g nesterov=%d t=%ld",
                 n, (double)h->momentum, (double)h->dampening, h->nesterov, t);
        expect_close_bk(b, "sgd param", shape, seed, p_ref, bp, n, tol);
        if (with_v)
            expect_close_bk(b, "sgd velocity", shape, seed, v_ref, bv, n, tol);
    }
    bk_free(b, bp); bk_free(b, bg); bk_free(b, bv);
    free(p_ref); free(g); free(v_ref); free(v);
}

void test_sgd(void **state)
{
    parity_fixture *f = *state;
    static const nn_sgd_hyper hs[] = {
        { .lr = 0.01f },                                         /* plain, no velocity */
        { .lr = 0.001f, .momentum = 0.9f },                      /* the LeNet presets */
        { .lr = 0.05f, .momentum = 0.8f, .dampening = 0.1f, .weight_decay = 1e-2f },
        { .lr = 0.05f, .momentum = 0.9f, .weight_decay = 5e-4f, .nesterov = 1 },
    };
    static const size_t sizes[] = { 1, 1001, 62006, 200003 };
    int k = 0;
    for (size_t h = 0; h < sizeof hs / sizeof hs[0]; h++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++, k++)
            sgd_case(f, case_seed(f->seed, 14, k), &hs[h], sizes[s]);
}

static void adam_case(parity_fixture *f, uint64_t seed, const nn_adam_hyper *h, size_t n)
{
    nn_backend *ref = &f->ref, *b = &f->tested[0];
    const parity_tol tol = f->spec->elementwise;
    nn_rng r;
    nn_rng_seed(&r, seed);
    char shape[64];
    snprintf(shape, sizeof shape, "adam n=%zu lr=%g", n, (double)h->lr);
    float *p_ref = fbuf(n), *g = fbuf(n), *m_ref = fbuf(n), *v_ref = fbuf(n);
    fill(&r, p_ref, n, -1, 1);
    memset(m_ref, 0, n * sizeof *m_ref);
    memset(v_ref, 0, n * sizeof *v_ref);
    float *bp = bk_copy(b, p_ref, n * 4), *bm = bk_copy(b, m_ref, n * 4);
    float *bv = bk_copy(b, v_ref, n * 4), *bg = bk_poison(b, n);
    for (long t = 1; t <= 5; t++) {
        fill(&r, g, n, -1, 1);
        expect_ok(b, b->ops->upload(b, bg, g, n * 4), "upload");
        expect_ok(ref, ref->ops->adam_step(ref, n, p_ref, g, m_ref, v_ref, h, t), "adam_step");
        expect_ok(b, b->ops->adam_step(b, n, bp, bg, bm, bv, h, t), "adam_step");
    }
    expect_close_bk(b, "adam param", shape, seed, p_ref, bp, n, tol);
    expect_close_bk(b, "adam m", shape, seed, m_ref, bm, n, tol);
    expect_close_bk(b, "adam v", shape, seed, v_ref, bv, n, tol);
    bk_free(b, bp); bk_free(b, bm); bk_free(b, bv); bk_free(b, bg);
    free(p_ref); free(g); free(m_ref); free(v_ref);
}

void test_adam(void **state)
{
    parity_fixture *f = *state;
    static const nn_adam_hyper hs[] = {
        { .lr = 0.001f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-7f },  /* Keras defaults */
        { .lr = 0.01f, .beta1 = 0.8f, .beta2 = 0.99f, .eps = 1e-8f, .weight_decay = 1e-2f },
    };
    static const size_t sizes[] = { 1, 101770, 300001 };
    int k = 0;
    for (size_t h = 0; h < sizeof hs / sizeof hs[0]; h++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++, k++)
            adam_case(f, case_seed(f->seed, 15, k), &hs[h], sizes[s]);
}

/* ------------------------------------------------------------------------ */
/* Errors are reported, not crashed on: each call fails its checks before    */
/* touching a buffer.                                                        */

void test_errors(void **state)
{
    parity_fixture *f = *state;
    nn_backend *b = &f->tested[0];
    float *d = bk_poison(b, 64);
    void *ws = bk_alloc(b, 4096);

    b->last_error[0] = '\0';
    assert_int_equal(b->ops->linear_forward(b, 0, 3, 3, d, d, NULL, d), -1);
    assert_non_null(strstr(b->last_error, "linear_forward"));

    nn_conv_geom g = conv_geom(1, 1, 4, 4, 1, 3, 1, 0);
    g.h_out = 3;    /* wrong: the geometry gives 2 */
    b->last_error[0] = '\0';
    assert_int_equal(b->ops->conv2d_forward(b, &g, d, d, NULL, d, ws), -1);
    assert_non_null(strstr(b->last_error, "geometry gives"));
    assert_int_equal(b->ops->conv2d_backward(b, &g, d, d, d, d, d, d, ws), -1);

    nn_pool_geom pg = pool_geom(1, 1, 4, 4, 2, 2, 2, 2);
    pg.w_out = 3;
    assert_int_equal(b->ops->maxpool2d_forward(b, &pg, d, d), -1);
    assert_int_equal(b->ops->maxpool2d_backward(b, &pg, d, d, d, d), -1);

    assert_int_equal(b->ops->act_forward(b, (enum nn_act)99, 4, d, d + 8), -1);
    assert_int_equal(b->ops->dropout_forward(b, 4, 1.5f, 1, 1, d, d + 8), -1);
    assert_int_equal(b->ops->dropout_backward(b, 4, -0.5f, 1, 1, d, d + 8), -1);
    nn_adam_hyper h = { .lr = 0.001f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f };
    assert_int_equal(b->ops->adam_step(b, 4, d, d + 8, d + 16, d + 24, &h, 0), -1);
    nn_sgd_hyper sh = { .lr = 0.01f, .momentum = 0.9f };
    b->last_error[0] = '\0';
    assert_int_equal(b->ops->sgd_step(b, 4, d, d + 8, d + 16, &sh, 0), -1);
    assert_non_null(strstr(b->last_error, "sgd_step"));
    bk_free(b, ws);
    bk_free(b, d);
}
