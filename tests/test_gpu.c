/* tests/test_gpu.c - the GPU backend (backends/cuda/, loaded as a module)
 * against the reference backend, cpu-ref: operation by operation on fresh
 * random inputs, then whole training runs through the engine.
 *
 * Without a GPU (no module, no driver, no device) the program prints
 * "1..0 # SKIP no GPU: <reason>" and exits 0: automake's TAP driver counts
 * that as one skipped test, not a pass. With a GPU it is one cmocka group.
 *
 * As tests/test_parity.c: every case draws its data from its own seed
 * (NNLAB_PARITY_SEED replays a run); results agree within abs + rel |ref|
 * (1e-4 for elementwise results and dot products, 1e-3 for reductions over a
 * batch); device outputs are poisoned before each call, so an element the
 * GPU did not write fails. Dropout masks are compared exactly: CPU and GPU
 * compute them with the same hash. A recorded and replayed step (CUDA graph)
 * must give the numbers of the same step run eagerly. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "backend.h"
#include "nnlab/engine.h"
#include "nnlab/preset.h"
#include "rng.h"
#include "parity_util.h"

#ifndef PRESETS_SRCDIR
#define PRESETS_SRCDIR "presets"
#endif

#define BASE_SEED 20241121ULL

typedef struct fixture {
    nn_backend ref;     /* cpu-ref, the oracle */
    nn_backend gpu;
    uint64_t seed;
} fixture;

/* ---- helpers ----------------------------------------------------------------------------- */

/* Device buffers: a copy of host data, or n floats of poison. */
static float *dev_copy(fixture *f, const void *host, size_t bytes)
{
    nn_backend *g = &f->gpu;
    void *p = NULL;
    expect_ok(g, g->ops->alloc(g, bytes, &p), "alloc");
    expect_ok(g, g->ops->upload(g, p, host, bytes), "upload");
    return p;
}

static float *dev_poison(fixture *f, size_t n)
{
    float *host = fbuf(n);
    for (size_t i = 0; i < n; i++)
        host[i] = (i & 1) ? NAN : 1e30f;
    float *p = dev_copy(f, host, n * sizeof(float));
    free(host);
    return p;
}

static void dev_read(fixture *f, float *host, const float *dev, size_t n)
{
    nn_backend *g = &f->gpu;
    expect_ok(g, g->ops->download(g, host, dev, n * sizeof(float)), "download");
}

static void dev_free(fixture *f, void *p)
{
    if (p)
        f->gpu.ops->free(&f->gpu, p);
}

/* ---- fixture ------------------------------------------------------------------------------ */

static int group_setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    nn_backend_config one = { .threads = 1 };
    if (!f)
        return -1;
    f->seed = parity_seed_init(BASE_SEED, "gpu parity seed");
    parity_report_as("gpu", 0);
    if (nn_backend_open(&f->ref, nn_backend_find("cpu-ref"), &one) != 0) {
        fprintf(stderr, "# cpu-ref: %s\n", f->ref.last_error);
        return -1;
    }
    if (nn_backend_open(&f->gpu, nn_backend_find("gpu"), NULL) != 0) {
        fprintf(stderr, "# gpu: %s\n", f->gpu.last_error);
        return -1;
    }
    *state = f;
    return 0;
}

static int group_teardown(void **state)
{
    fixture *f = *state;
    if (f) {
        nn_backend_close(&f->gpu);
        nn_backend_close(&f->ref);
        free(f);
    }
    return 0;
}

/* ---- memory ----------------------------------------------------------------------------- */

static void test_memory_ops(void **state)
{
    fixture *f = *state;
    nn_backend *b = &f->gpu;
    const size_t sizes[] = { 0, 1, 3, 64, 1000, 1 << 20 };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t bytes = sizes[k], n = bytes ? bytes : 1;
        void *p = NULL;
        expect_ok(b, b->ops->alloc(b, bytes, &p), "alloc");
        assert_non_null(p);
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
        assert_memory_equal(src, back, bytes ? bytes : 0);
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

/* Page-locked staging: uploads from it arrive, host_wait returns. */
static void test_pinned(void **state)
{
    fixture *f = *state;
    nn_backend *b = &f->gpu;
    const size_t n = 100000;
    float *pin = NULL, *back = fbuf(n);
    expect_ok(b, b->ops->host_alloc(b, n * sizeof(float), (void **)&pin), "host_alloc");
    float *d = dev_poison(f, n);
    for (int round = 0; round < 3; round++) {
        expect_ok(b, b->ops->host_wait(b, pin), "host_wait");
        for (size_t i = 0; i < n; i++)
            pin[i] = (float)(i * 3 + (size_t)round);
        expect_ok(b, b->ops->upload(b, d, pin, n * sizeof(float)), "upload");
        expect_ok(b, b->ops->host_wait(b, pin), "host_wait");
        dev_read(f, back, d, n);
        for (size_t i = 0; i < n; i++)
            assert_true(back[i] == (float)(i * 3 + (size_t)round));
    }
    b->ops->host_free(b, pin);
    dev_free(f, d);
    free(back);
}

/* ---- linear ----------------------------------------------------------------------------- */

static void linear_case(fixture *f, uint64_t seed, int n, int in, int out, int with_bias, int with_dx)
{
    char shape[128];
    snprintf(shape, sizeof shape, "linear n=%d in=%d out=%d bias=%d dx=%d", n, in, out,
             with_bias, with_dx);
    nn_rng r;
    nn_rng_seed(&r, seed);
    size_t nx = (size_t)n * in, nw = (size_t)out * in, ny = (size_t)n * out;
    float *x = fbuf(nx), *w = fbuf(nw), *bias = fbuf((size_t)out), *dy = fbuf(ny);
    fill(&r, x, nx, -1, 1);
    fill(&r, w, nw, -1, 1);
    fill(&r, bias, (size_t)out, -1, 1);
    fill(&r, dy, ny, -1, 1);
    float *y_ref = fbuf(ny), *y = fbuf(ny), *dx_ref = fbuf(nx), *dx = fbuf(nx);
    float *dw_ref = fbuf(nw), *dw = fbuf(nw), *db_ref = fbuf((size_t)out), *db = fbuf((size_t)out);
    float *gx = dev_copy(f, x, nx * 4), *gw = dev_copy(f, w, nw * 4), *gb = dev_copy(f, bias, (size_t)out * 4);
    float *gdy = dev_copy(f, dy, ny * 4), *gy = dev_poison(f, ny), *gdx = dev_poison(f, nx);
    float *gdw = dev_poison(f, nw), *gdb = dev_poison(f, (size_t)out);
    nn_backend *ref = &f->ref, *gpu = &f->gpu;

    expect_ok(ref, ref->ops->linear_forward(ref, n, in, out, x, w, with_bias ? bias : NULL, y_ref),
              "linear_forward");
    expect_ok(gpu, gpu->ops->linear_forward(gpu, n, in, out, gx, gw, with_bias ? gb : NULL, gy),
              "linear_forward");
    dev_read(f, y, gy, ny);
    expect_close("linear_forward y", shape, seed, y_ref, y, ny, TOL_ABS, TOL_REL);

    expect_ok(ref, ref->ops->linear_backward(ref, n, in, out, x, w, dy, with_dx ? dx_ref : NULL,
                                             dw_ref, db_ref), "linear_backward");
    expect_ok(gpu, gpu->ops->linear_backward(gpu, n, in, out, gx, gw, gdy, with_dx ? gdx : NULL,
                                             gdw, gdb), "linear_backward");
    if (with_dx) {
        dev_read(f, dx, gdx, nx);
        expect_close("linear_backward dx", shape, seed, dx_ref, dx, nx, TOL_ABS, TOL_REL);
    }
    dev_read(f, dw, gdw, nw);
    dev_read(f, db, gdb, (size_t)out);
    expect_close("linear_backward dw", shape, seed, dw_ref, dw, nw, TOL_SUM_ABS, TOL_SUM_REL);
    expect_close("linear_backward dbias", shape, seed, db_ref, db, (size_t)out, TOL_SUM_ABS, TOL_SUM_REL);

    void *devs[] = { gx, gw, gb, gdy, gy, gdx, gdw, gdb };
    for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++)
        dev_free(f, devs[i]);
    free(x); free(w); free(bias); free(dy); free(y_ref); free(y);
    free(dx_ref); free(dx); free(dw_ref); free(dw); free(db_ref); free(db);
}

static void test_linear(void **state)
{
    fixture *f = *state;
    static const int fixed[][3] = {
        { 1, 1, 1 }, { 1, 300, 1 }, { 300, 1, 1 }, { 1, 1, 300 }, { 7, 13, 5 },
        { 4, 400, 120 }, { 4, 84, 10 }, { 32, 784, 128 }, { 4096, 16, 1 }, { 300, 299, 301 },
    };
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
        linear_case(f, case_seed(f->seed, 1, (int)k), fixed[k][0], fixed[k][1], fixed[k][2], 1, 1);
    for (int k = 0; k < 16; k++) {
        uint64_t seed = case_seed(f->seed, 2, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        int n = rnd(&r, 1, 300), in = rnd(&r, 1, 300), out = rnd(&r, 1, 300);
        linear_case(f, seed, n, in, out, k % 4 != 1, k % 3 != 2);
    }
}

/* ---- convolution ------------------------------------------------------------------------ */

/* Forward and backward of one geometry, with a workspace of exactly the size
 * the GPU reported for it. */
static void conv_case(fixture *f, uint64_t seed, const nn_conv_geom *g, int with_bias, int with_dx)
{
    char shape[192], extra[32];
    snprintf(extra, sizeof extra, " bias=%d dx=%d", with_bias, with_dx);
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
    float *y_ref = fbuf(ny), *y = fbuf(ny), *dx_ref = fbuf(nx), *dx = fbuf(nx);
    float *dw_ref = fbuf(nw), *dw = fbuf(nw), *db_ref = fbuf(nb), *db = fbuf(nb);
    nn_backend *ref = &f->ref, *gpu = &f->gpu;

    size_t ws_bytes = gpu->ops->conv2d_workspace(gpu, g);
    void *ws = NULL;
    expect_ok(gpu, gpu->ops->alloc(gpu, ws_bytes, &ws), "alloc workspace");
    float *gx = dev_copy(f, x, nx * 4), *gw = dev_copy(f, w, nw * 4), *gb = dev_copy(f, bias, nb * 4);
    float *gdy = dev_copy(f, dy, ny * 4), *gy = dev_poison(f, ny), *gdx = dev_poison(f, nx);
    float *gdw = dev_poison(f, nw), *gdb = dev_poison(f, nb);

    expect_ok(ref, ref->ops->conv2d_forward(ref, g, x, w, with_bias ? bias : NULL, y_ref, NULL),
              "conv2d_forward");
    expect_ok(gpu, gpu->ops->conv2d_forward(gpu, g, gx, gw, with_bias ? gb : NULL, gy, ws),
              "conv2d_forward");
    dev_read(f, y, gy, ny);
    expect_close("conv2d_forward y", shape, seed, y_ref, y, ny, TOL_ABS, TOL_REL);

    expect_ok(ref, ref->ops->conv2d_backward(ref, g, x, w, dy, with_dx ? dx_ref : NULL, dw_ref,
                                             db_ref, NULL), "conv2d_backward");
    expect_ok(gpu, gpu->ops->conv2d_backward(gpu, g, gx, gw, gdy, with_dx ? gdx : NULL, gdw, gdb, ws),
              "conv2d_backward");
    if (with_dx) {
        dev_read(f, dx, gdx, nx);
        expect_close("conv2d_backward dx", shape, seed, dx_ref, dx, nx, TOL_ABS, TOL_REL);
    }
    dev_read(f, dw, gdw, nw);
    dev_read(f, db, gdb, nb);
    expect_close("conv2d_backward dw", shape, seed, dw_ref, dw, nw, TOL_SUM_ABS, TOL_SUM_REL);
    expect_close("conv2d_backward dbias", shape, seed, db_ref, db, nb, TOL_SUM_ABS, TOL_SUM_REL);

    void *devs[] = { ws, gx, gw, gb, gdy, gy, gdx, gdw, gdb };
    for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++)
        dev_free(f, devs[i]);
    free(x); free(w); free(bias); free(dy); free(y_ref); free(y);
    free(dx_ref); free(dx); free(dw_ref); free(dw); free(db_ref); free(db);
}

static void test_conv(void **state)
{
    fixture *f = *state;
    const nn_conv_geom presets[] = {
        conv_geom(4, 3, 32, 32, 6, 5, 1, 0),     /* LeNet conv1, batch 4 */
        conv_geom(4, 6, 14, 14, 16, 5, 1, 0),    /* LeNet conv2 */
        conv_geom(256, 3, 32, 32, 6, 5, 1, 0),   /* LeNet at a large batch */
        conv_geom(37, 1, 1, 16, 8, 3, 1, 1),     /* conv1d-regression */
        conv_geom(37, 8, 1, 5, 16, 3, 1, 1),
        conv_geom(3, 16, 64, 64, 8, 1, 1, 0),    /* 1x1 */
        conv_geom(2, 2, 7, 9, 3, 3, 2, 2),       /* stride 2 with padding 2 */
        conv_geom(3, 5, 5, 3, 4, 5, 1, 2),       /* kernel as large as the padded input */
    };
    for (size_t k = 0; k < sizeof presets / sizeof presets[0]; k++)
        conv_case(f, case_seed(f->seed, 3, (int)k), &presets[k], 1, 1);
    for (int k = 0; k < 40; k++) {
        uint64_t seed = case_seed(f->seed, 4, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        nn_conv_geom g = random_conv(&r, k % 3 == 0, 8);
        conv_case(f, seed, &g, k % 5 != 3, k % 4 != 1);
    }
}

/* ---- pooling ------------------------------------------------------------------------------ */

/* ties: values on a coarse grid, so the first-maximum rule decides; nan: some
 * NaNs, which win the forward and lose their gradient. Exact comparison: the
 * GPU adds in cpu-ref's order. */
static void pool_case(fixture *f, uint64_t seed, const nn_pool_geom *g, int ties, int nan)
{
    char shape[160];
    snprintf(shape, sizeof shape, "maxpool n=%d c=%d %dx%d k=%dx%d stride=%dx%d ties=%d nan=%d",
             g->n, g->c, g->h_in, g->w_in, g->k_h, g->k_w, g->stride_h, g->stride_w, ties, nan);
    nn_rng r;
    nn_rng_seed(&r, seed);
    size_t nx = (size_t)g->n * g->c * g->h_in * g->w_in;
    size_t ny = (size_t)g->n * g->c * g->h_out * g->w_out;
    float *x = fbuf(nx), *dy = fbuf(ny), *y_ref = fbuf(ny), *y = fbuf(ny);
    float *dx_ref = fbuf(nx), *dx = fbuf(nx);
    if (ties)
        fill_ties(&r, x, nx);
    else
        fill(&r, x, nx, -1, 1);
    if (nan)
        for (size_t i = 0; i < nx; i += 5)
            x[i] = NAN;
    fill(&r, dy, ny, -1, 1);
    float *gx = dev_copy(f, x, nx * 4), *gdy = dev_copy(f, dy, ny * 4);
    float *gy = dev_poison(f, ny), *gdx = dev_poison(f, nx);
    nn_backend *ref = &f->ref, *gpu = &f->gpu;
    expect_ok(ref, ref->ops->maxpool2d_forward(ref, g, x, y_ref), "maxpool2d_forward");
    expect_ok(gpu, gpu->ops->maxpool2d_forward(gpu, g, gx, gy), "maxpool2d_forward");
    dev_read(f, y, gy, ny);
    expect_close("maxpool2d_forward y", shape, seed, y_ref, y, ny, 0, 0);
    expect_ok(ref, ref->ops->maxpool2d_backward(ref, g, x, y_ref, dy, dx_ref), "maxpool2d_backward");
    expect_ok(gpu, gpu->ops->maxpool2d_backward(gpu, g, gx, gy, gdy, gdx), "maxpool2d_backward");
    dev_read(f, dx, gdx, nx);
    expect_close("maxpool2d_backward dx", shape, seed, dx_ref, dx, nx, 0, 0);
    dev_free(f, gx); dev_free(f, gdy); dev_free(f, gy); dev_free(f, gdx);
    free(x); free(dy); free(y_ref); free(y); free(dx_ref); free(dx);
}

static void test_maxpool(void **state)
{
    fixture *f = *state;
    for (int k = 0; k < 24; k++) {
        uint64_t seed = case_seed(f->seed, 5, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        nn_pool_geom g = random_pool(&r, k);
        pool_case(f, seed, &g, k % 2 == 0, 0);
    }
    const nn_pool_geom presets[] = {
        pool_geom(64, 6, 28, 28, 2, 2, 2, 2), pool_geom(64, 16, 10, 10, 2, 2, 2, 2),
        pool_geom(512, 8, 1, 16, 1, 3, 1, 3), pool_geom(512, 16, 1, 5, 1, 5, 1, 1),
    };
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        pool_case(f, case_seed(f->seed, 6, (int)i), &presets[i], 1, 0);
    nn_pool_geom a = pool_geom(2, 3, 6, 7, 2, 2, 2, 2), b = pool_geom(2, 3, 6, 7, 3, 3, 1, 2);
    pool_case(f, case_seed(f->seed, 7, 0), &a, 0, 1);
    pool_case(f, case_seed(f->seed, 7, 1), &b, 0, 1);
}

/* ---- activations and dropout -------------------------------------------------------------- */

static void test_activations(void **state)
{
    fixture *f = *state;
    static const enum nn_act acts[] = { NN_ACT_RELU, NN_ACT_TANH, NN_ACT_MISH };
    static const char *names[] = { "relu", "tanh", "mish" };
    static const size_t sizes[] = { 1, 7, 1000, 65537, 300001 };
    int k = 0;
    for (size_t a = 0; a < 3; a++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++, k++) {
            uint64_t seed = case_seed(f->seed, 8, k);
            nn_rng r;
            nn_rng_seed(&r, seed);
            size_t n = sizes[si];
            char shape[64];
            snprintf(shape, sizeof shape, "%s n=%zu", names[a], n);
            float *x = fbuf(n), *dy = fbuf(n), *y_ref = fbuf(n), *y = fbuf(n), *dx_ref = fbuf(n), *dx = fbuf(n);
            fill_act_inputs(&r, x, n);
            fill(&r, dy, n, -1, 1);
            float *gx = dev_copy(f, x, n * 4), *gdy = dev_copy(f, dy, n * 4);
            float *gy = dev_poison(f, n), *gdx = dev_poison(f, n);
            nn_backend *ref = &f->ref, *gpu = &f->gpu;
            expect_ok(ref, ref->ops->act_forward(ref, acts[a], n, x, y_ref), "act_forward");
            expect_ok(gpu, gpu->ops->act_forward(gpu, acts[a], n, gx, gy), "act_forward");
            dev_read(f, y, gy, n);
            expect_close("act_forward", shape, seed, y_ref, y, n, TOL_ABS, TOL_REL);
            expect_ok(ref, ref->ops->act_backward(ref, acts[a], n, x, y_ref, dy, dx_ref), "act_backward");
            /* the contract: relu and mish read x only, tanh y only */
            expect_ok(gpu, gpu->ops->act_backward(gpu, acts[a], n, acts[a] == NN_ACT_TANH ? NULL : gx,
                                                  acts[a] == NN_ACT_TANH ? gy : NULL, gdy, gdx),
                      "act_backward");
            dev_read(f, dx, gdx, n);
            expect_close("act_backward", shape, seed, dx_ref, dx, n, TOL_ABS, TOL_REL);
            dev_free(f, gx); dev_free(f, gdy); dev_free(f, gy); dev_free(f, gdx);
            free(x); free(dy); free(y_ref); free(y); free(dx_ref); free(dx);
        }
}

static void test_dropout(void **state)
{
    fixture *f = *state;
    static const float ps[] = { 0.0f, 0.2f, 0.5f, 0.999f, 1.0f };
    static const size_t sizes[] = { 1, 33, 100000 };
    int k = 0;
    for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++, k++) {
            uint64_t seed = case_seed(f->seed, 9, k);
            nn_rng r;
            nn_rng_seed(&r, seed);
            size_t n = sizes[si];
            uint64_t dseed = nn_rng_u64(&r), counter = nn_rng_u64(&r) >> 20;
            char shape[64];
            snprintf(shape, sizeof shape, "dropout n=%zu p=%g", n, (double)ps[pi]);
            float *x = fbuf(n), *y_ref = fbuf(n), *y = fbuf(n), *dx_ref = fbuf(n), *dx = fbuf(n);
            fill(&r, x, n, -2, 2);
            float *gx = dev_copy(f, x, n * 4), *gy = dev_poison(f, n), *gdx = dev_poison(f, n);
            nn_backend *ref = &f->ref, *gpu = &f->gpu;
            expect_ok(ref, ref->ops->dropout_forward(ref, n, ps[pi], dseed, counter, x, y_ref), "dropout_forward");
            expect_ok(gpu, gpu->ops->dropout_forward(gpu, n, ps[pi], dseed, counter, gx, gy), "dropout_forward");
            dev_read(f, y, gy, n);
            expect_close("dropout_forward", shape, seed, y_ref, y, n, 0, 0);
            expect_ok(ref, ref->ops->dropout_backward(ref, n, ps[pi], dseed, counter, x, dx_ref), "dropout_backward");
            expect_ok(gpu, gpu->ops->dropout_backward(gpu, n, ps[pi], dseed, counter, gx, gdx), "dropout_backward");
            dev_read(f, dx, gdx, n);
            expect_close("dropout_backward", shape, seed, dx_ref, dx, n, 0, 0);
            dev_free(f, gx); dev_free(f, gy); dev_free(f, gdx);
            free(x); free(y_ref); free(y); free(dx_ref); free(dx);
        }
}

/* ---- losses ------------------------------------------------------------------------------ */

static void test_softmax_xent(void **state)
{
    fixture *f = *state;
    for (int k = 0; k < 12; k++) {
        uint64_t seed = case_seed(f->seed, 10, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        int n = k == 0 ? 1 : k == 3 ? 100000 : rnd(&r, 1, 300), classes = k == 1 ? 1 : rnd(&r, 1, 20);
        size_t m = (size_t)n * classes;
        char shape[64];
        snprintf(shape, sizeof shape, "softmax_xent n=%d classes=%d", n, classes);
        float *logits = fbuf(m), *d_ref = fbuf(m), *d = fbuf(m);
        int32_t *labels = malloc((size_t)n * sizeof *labels);
        assert_non_null(labels);
        fill(&r, logits, m, -8, 8);
        for (int i = 0; i < n; i++)
            labels[i] = (int32_t)nn_rng_below(&r, (uint64_t)classes);
        float st_ref[2] = { 1.5f, 3.0f }, st[2] = { 1.5f, 3.0f };   /* they add */
        int with_grad = k % 3 != 2;
        float *gl = dev_copy(f, logits, m * 4), *gd = dev_poison(f, m), *gst = dev_copy(f, st, 8);
        int32_t *glab = (int32_t *)dev_copy(f, labels, (size_t)n * 4);
        nn_backend *ref = &f->ref, *gpu = &f->gpu;
        expect_ok(ref, ref->ops->softmax_xent(ref, n, classes, logits, labels, with_grad ? d_ref : NULL,
                                              st_ref), "softmax_xent");
        expect_ok(gpu, gpu->ops->softmax_xent(gpu, n, classes, gl, glab, with_grad ? gd : NULL, gst),
                  "softmax_xent");
        dev_read(f, st, gst, 2);
        expect_close("softmax_xent stats", shape, seed, st_ref, st, 2, TOL_SUM_ABS, TOL_SUM_REL);
        if (with_grad) {
            dev_read(f, d, gd, m);
            expect_close("softmax_xent dlogits", shape, seed, d_ref, d, m, TOL_ABS, TOL_REL);
        }
        /* twice more: the reduction's counter is back at zero after each call */
        for (int again = 0; again < 2; again++) {
            expect_ok(ref, ref->ops->softmax_xent(ref, n, classes, logits, labels, NULL, st_ref), "softmax_xent");
            expect_ok(gpu, gpu->ops->softmax_xent(gpu, n, classes, gl, glab, NULL, gst), "softmax_xent");
        }
        dev_read(f, st, gst, 2);
        expect_close("softmax_xent stats after 3 calls", shape, seed, st_ref, st, 2, TOL_SUM_ABS, TOL_SUM_REL);
        dev_free(f, gl); dev_free(f, gd); dev_free(f, gst); dev_free(f, glab);
        free(logits); free(d_ref); free(d); free(labels);
    }
}

static void test_mse(void **state)
{
    fixture *f = *state;
    for (int k = 0; k < 12; k++) {
        uint64_t seed = case_seed(f->seed, 11, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        int n = k == 0 ? 1 : k == 1 ? 300000 : rnd(&r, 1, 4096), width = rnd(&r, 1, 5);
        size_t m = (size_t)n * width;
        char shape[64];
        snprintf(shape, sizeof shape, "mse n=%d width=%d", n, width);
        float *pred = fbuf(m), *target = fbuf(m), *d_ref = fbuf(m), *d = fbuf(m);
        fill(&r, pred, m, -3, 3);
        fill(&r, target, m, -3, 3);
        float st_ref[1] = { 0.25f }, st[1] = { 0.25f };
        int with_grad = k % 3 != 2;
        float *gp = dev_copy(f, pred, m * 4), *gt = dev_copy(f, target, m * 4), *gd = dev_poison(f, m);
        float *gst = dev_copy(f, st, 4);
        nn_backend *ref = &f->ref, *gpu = &f->gpu;
        expect_ok(ref, ref->ops->mse(ref, n, width, pred, target, with_grad ? d_ref : NULL, st_ref), "mse");
        expect_ok(gpu, gpu->ops->mse(gpu, n, width, gp, gt, with_grad ? gd : NULL, gst), "mse");
        dev_read(f, st, gst, 1);
        expect_close("mse stats", shape, seed, st_ref, st, 1, TOL_SUM_ABS, TOL_SUM_REL);
        if (with_grad) {
            dev_read(f, d, gd, m);
            expect_close("mse dpred", shape, seed, d_ref, d, m, TOL_ABS, TOL_REL);
        }
        dev_free(f, gp); dev_free(f, gt); dev_free(f, gd); dev_free(f, gst);
        free(pred); free(target); free(d_ref); free(d);
    }
}

/* ---- optimisers ---------------------------------------------------------------------------- */

static void test_sgd(void **state)
{
    fixture *f = *state;
    static const nn_sgd_hyper hs[] = {
        { .lr = 0.01f },
        { .lr = 0.001f, .momentum = 0.9f },
        { .lr = 0.05f, .momentum = 0.8f, .dampening = 0.1f, .weight_decay = 1e-2f },
        { .lr = 0.05f, .momentum = 0.9f, .weight_decay = 5e-4f, .nesterov = 1 },
    };
    static const size_t sizes[] = { 1, 1001, 62006, 200003 };
    int k = 0;
    for (size_t h = 0; h < sizeof hs / sizeof hs[0]; h++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++, k++) {
            uint64_t seed = case_seed(f->seed, 12, k);
            nn_rng r;
            nn_rng_seed(&r, seed);
            size_t n = sizes[si];
            float *p_ref = fbuf(n), *g = fbuf(n), *v_ref = fbuf(n), *p = fbuf(n), *v = fbuf(n);
            fill(&r, p_ref, n, -1, 1);
            fill(&r, v_ref, n, -1, 1);   /* stale velocities, different on each side */
            fill(&r, v, n, -1, 1);
            int with_v = hs[h].momentum != 0.0f;
            float *gp = dev_copy(f, p_ref, n * 4), *gv = dev_copy(f, v, n * 4), *gg = dev_poison(f, n);
            nn_backend *ref = &f->ref, *gpu = &f->gpu;
            for (long t = 1; t <= 4; t++) {
                char shape[128];
                snprintf(shape, sizeof shape, "sgd n=%zu momentum=%g dampening=%g nesterov=%d t=%ld", n,
                         (double)hs[h].momentum, (double)hs[h].dampening, hs[h].nesterov, t);
                fill(&r, g, n, -1, 1);
                nn_backend *gb = gpu;
                expect_ok(gb, gb->ops->upload(gb, gg, g, n * 4), "upload");
                expect_ok(ref, ref->ops->sgd_step(ref, n, p_ref, g, with_v ? v_ref : NULL, &hs[h], t), "sgd_step");
                expect_ok(gpu, gpu->ops->sgd_step(gpu, n, gp, gg, with_v ? gv : NULL, &hs[h], t), "sgd_step");
                dev_read(f, p, gp, n);
                expect_close("sgd param", shape, seed, p_ref, p, n, TOL_ABS, TOL_REL);
                if (with_v) {
                    dev_read(f, v, gv, n);
                    expect_close("sgd velocity", shape, seed, v_ref, v, n, TOL_ABS, TOL_REL);
                }
            }
            dev_free(f, gp); dev_free(f, gv); dev_free(f, gg);
            free(p_ref); free(g); free(v_ref); free(p); free(v);
        }
}

static void test_adam(void **state)
{
    fixture *f = *state;
    static const nn_adam_hyper hs[] = {
        { .lr = 0.001f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-7f },
        { .lr = 0.01f, .beta1 = 0.8f, .beta2 = 0.99f, .eps = 1e-8f, .weight_decay = 1e-2f },
    };
    static const size_t sizes[] = { 1, 101770, 300001 };
    int k = 0;
    for (size_t h = 0; h < sizeof hs / sizeof hs[0]; h++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++, k++) {
            uint64_t seed = case_seed(f->seed, 13, k);
            nn_rng r;
            nn_rng_seed(&r, seed);
            size_t n = sizes[si];
            char shape[64];
            snprintf(shape, sizeof shape, "adam n=%zu lr=%g", n, (double)hs[h].lr);
            float *p_ref = fbuf(n), *g = fbuf(n), *m_ref = calloc(n, 4), *v_ref = calloc(n, 4);
            float *p = fbuf(n), *m = fbuf(n), *v = fbuf(n);
            assert_non_null(m_ref);
            assert_non_null(v_ref);
            fill(&r, p_ref, n, -1, 1);
            float *gp = dev_copy(f, p_ref, n * 4), *gm = dev_copy(f, m_ref, n * 4);
            float *gv = dev_copy(f, v_ref, n * 4), *gg = dev_poison(f, n);
            nn_backend *ref = &f->ref, *gpu = &f->gpu;
            for (long t = 1; t <= 5; t++) {
                fill(&r, g, n, -1, 1);
                expect_ok(gpu, gpu->ops->upload(gpu, gg, g, n * 4), "upload");
                expect_ok(ref, ref->ops->adam_step(ref, n, p_ref, g, m_ref, v_ref, &hs[h], t), "adam_step");
                expect_ok(gpu, gpu->ops->adam_step(gpu, n, gp, gg, gm, gv, &hs[h], t), "adam_step");
            }
            dev_read(f, p, gp, n);
            dev_read(f, m, gm, n);
            dev_read(f, v, gv, n);
            expect_close("adam param", shape, seed, p_ref, p, n, TOL_ABS, TOL_REL);
            expect_close("adam m", shape, seed, m_ref, m, n, TOL_ABS, TOL_REL);
            expect_close("adam v", shape, seed, v_ref, v, n, TOL_ABS, TOL_REL);
            dev_free(f, gp); dev_free(f, gm); dev_free(f, gv); dev_free(f, gg);
            free(p_ref); free(g); free(m_ref); free(v_ref); free(p); free(m); free(v);
        }
}

/* ---- gather and graphs -------------------------------------------------------------------- */

static void test_gather_rows(void **state)
{
    fixture *f = *state;
    nn_backend *gpu = &f->gpu;
    nn_rng r;
    nn_rng_seed(&r, case_seed(f->seed, 14, 0));
    const int rows = 5000, n = 97;
    const size_t xw = 3072, yw = 3;
    float *xs = fbuf((size_t)rows * xw), *ys = fbuf((size_t)rows * yw);
    float *x_ref = fbuf((size_t)n * xw), *y_ref = fbuf((size_t)n * yw), *x = fbuf((size_t)n * xw), *y = fbuf((size_t)n * yw);
    int32_t idx[97];
    fill(&r, xs, (size_t)rows * xw, -1, 1);
    fill(&r, ys, (size_t)rows * yw, -1, 1);
    for (int i = 0; i < n; i++)
        idx[i] = (int32_t)nn_rng_below(&r, (uint64_t)rows);
    float *gxs = dev_copy(f, xs, (size_t)rows * xw * 4), *gys = dev_copy(f, ys, (size_t)rows * yw * 4);
    int32_t *gidx = (int32_t *)dev_copy(f, idx, sizeof idx);
    float *gx = dev_poison(f, (size_t)n * xw), *gy = dev_poison(f, (size_t)n * yw);
    for (int pass = 0; pass < 2; pass++) {     /* by index, then rows 1234.. in order */
        for (int i = 0; i < n; i++) {
            size_t row = pass ? (size_t)(1234 + i) : (size_t)idx[i];
            memcpy(x_ref + (size_t)i * xw, xs + row * xw, xw * 4);
            memcpy(y_ref + (size_t)i * yw, ys + row * yw, yw * 4);
        }
        expect_ok(gpu, gpu->ops->gather_rows(gpu, n, pass ? NULL : gidx, pass ? 1234 : 0, gxs, xw, gx,
                                             gys, yw, gy), "gather_rows");
        dev_read(f, x, gx, (size_t)n * xw);
        dev_read(f, y, gy, (size_t)n * yw);
        assert_memory_equal(x_ref, x, (size_t)n * xw * 4);
        assert_memory_equal(y_ref, y, (size_t)n * yw * 4);
    }
    dev_free(f, gxs); dev_free(f, gys); dev_free(f, gidx); dev_free(f, gx); dev_free(f, gy);
    free(xs); free(ys); free(x_ref); free(y_ref); free(x); free(y);
}

/* The replay contract of backend.h: a recorded step replayed runs as the step
 * set_step gave last (its dropout counter that step's base plus the offset
 * recorded, its t that step's); a step run eagerly in between needs nothing
 * but its own set_step. */
static void test_graph_replay(void **state)
{
    fixture *f = *state;
    nn_backend *gpu = &f->gpu, *ref = &f->ref;
    if (!gpu->ops->graph_begin) {
        skip();
        return;
    }
    assert_non_null(gpu->ops->set_step);         /* graphs need the step's values */
    nn_rng r;
    nn_rng_seed(&r, case_seed(f->seed, 15, 0));
    const size_t n = 50000;
    const uint64_t dseed = 99, step0 = 5, layer = 2, stride = 64;   /* any stride: the caller's */
    const float p = 0.3f;
    nn_sgd_hyper h = { .lr = 0.01f, .momentum = 0.9f, .dampening = 0.1f };
    float *x = fbuf(n), *grad = fbuf(n), *w_ref = fbuf(n), *v_ref = fbuf(n), *y_ref = fbuf(n);
    float *y = fbuf(n), *w = fbuf(n), *v = fbuf(n);
    fill(&r, x, n, -1, 1);
    fill(&r, grad, n, -1, 1);
    fill(&r, w_ref, n, -1, 1);
    memset(v_ref, 0, n * 4);
    float *gx = dev_copy(f, x, n * 4), *gg = dev_copy(f, grad, n * 4), *gw = dev_copy(f, w_ref, n * 4);
    float *gv = dev_copy(f, v_ref, n * 4), *gy = dev_poison(f, n);

    nn_step_values sv = { .dropout_base = step0 * stride, .opt_t = 1 };
    expect_ok(gpu, gpu->ops->set_step(gpu, &sv), "set_step");
    expect_ok(gpu, gpu->ops->graph_begin(gpu), "graph_begin");
    expect_ok(gpu, gpu->ops->dropout_forward(gpu, n, p, dseed, step0 * stride + layer, gx, gy),
              "dropout_forward (recorded)");
    expect_ok(gpu, gpu->ops->sgd_step(gpu, n, gw, gg, gv, &h, 1), "sgd_step (recorded)");
    expect_ok(gpu, gpu->ops->graph_end(gpu), "graph_end");

    for (long k = 0; k < 5; k++) {
        uint64_t counter = (step0 + (uint64_t)k) * stride + layer;
        sv = (nn_step_values){ .dropout_base = (step0 + (uint64_t)k) * stride, .opt_t = k + 1 };
        expect_ok(gpu, gpu->ops->set_step(gpu, &sv), "set_step");
        if (k == 3) {       /* run eagerly: the recording needs nothing more */
            expect_ok(gpu, gpu->ops->dropout_forward(gpu, n, p, dseed, counter, gx, gy), "dropout_forward");
            expect_ok(gpu, gpu->ops->sgd_step(gpu, n, gw, gg, gv, &h, k + 1), "sgd_step");
        } else {
            expect_ok(gpu, gpu->ops->graph_launch(gpu), "graph_launch");
        }
        expect_ok(ref, ref->ops->dropout_forward(ref, n, p, dseed, counter, x, y_ref), "dropout_forward");
        expect_ok(ref, ref->ops->sgd_step(ref, n, w_ref, grad, v_ref, &h, k + 1), "sgd_step");
        char shape[64];
        snprintf(shape, sizeof shape, "replay %ld of a dropout + sgd step", k);
        dev_read(f, y, gy, n);
        expect_close("replayed dropout", shape, 0, y_ref, y, n, 0, 0);
        dev_read(f, w, gw, n);
        dev_read(f, v, gv, n);
        expect_close("replayed sgd param", shape, 0, w_ref, w, n, TOL_ABS, TOL_REL);
        expect_close("replayed sgd velocity", shape, 0, v_ref, v, n, TOL_ABS, TOL_REL);
    }
    gpu->ops->graph_drop(gpu);
    dev_free(f, gx); dev_free(f, gg); dev_free(f, gw); dev_free(f, gv); dev_free(f, gy);
    free(x); free(grad); free(w_ref); free(v_ref); free(y_ref); free(y); free(w); free(v);
}

/* ---- errors ------------------------------------------------------------------------------- */

static void test_errors(void **state)
{
    fixture *f = *state;
    nn_backend *b = &f->gpu;
    float *d = dev_poison(f, 64);

    b->last_error[0] = '\0';
    assert_int_equal(b->ops->linear_forward(b, 0, 3, 3, d, d, NULL, d), -1);
    assert_non_null(strstr(b->last_error, "linear_forward"));

    nn_conv_geom g = conv_geom(1, 1, 4, 4, 1, 3, 1, 0);
    g.h_out = 3;
    assert_int_equal(b->ops->conv2d_forward(b, &g, d, d, NULL, d, NULL), -1);
    assert_non_null(strstr(b->last_error, "geometry gives"));
    nn_pool_geom pg = pool_geom(1, 1, 4, 4, 2, 2, 2, 2);
    pg.w_out = 3;
    assert_int_equal(b->ops->maxpool2d_forward(b, &pg, d, d), -1);
    assert_int_equal(b->ops->act_forward(b, (enum nn_act)99, 4, d, d), -1);
    assert_int_equal(b->ops->dropout_forward(b, 4, 1.5f, 1, 1, d, d), -1);
    nn_sgd_hyper sh = { .lr = 0.01f, .momentum = 0.9f };
    assert_int_equal(b->ops->sgd_step(b, 4, d, d, d, &sh, 0), -1);

    /* out of memory names the size and what was free */
    void *huge = NULL;
    b->last_error[0] = '\0';
    assert_int_equal(b->ops->alloc(b, (size_t)1 << 50, &huge), -1);
    assert_null(huge);
    print_message("# %s\n", b->last_error);
    assert_non_null(strstr(b->last_error, "free"));

    /* a label out of range is found on the device and reported by the next wait */
    int32_t labels[4] = { 0, 1, 7, 2 };
    int32_t *gl = (int32_t *)dev_copy(f, labels, sizeof labels);
    float *st = dev_poison(f, 2);
    expect_ok(b, b->ops->zero(b, st, 8), "zero");
    expect_ok(b, b->ops->softmax_xent(b, 4, 3, d, gl, NULL, st), "softmax_xent (launch)");
    b->last_error[0] = '\0';
    assert_int_equal(b->ops->synchronize(b), -1);
    print_message("# %s\n", b->last_error);
    assert_non_null(strstr(b->last_error, "label 7"));
    expect_ok(b, b->ops->synchronize(b), "synchronize after the report");   /* reported once */
    dev_free(f, gl);
    dev_free(f, st);
    dev_free(f, d);
}

/* ---- whole runs through the engine ------------------------------------------------------------ */

/* NNLAB_PRESETS_DIR first: on the GPU machine this program runs from a
 * bundle, away from the source tree it was built in (docs/gpu-backend.md). */
static void load_shipped(const char *name, nn_preset *p)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    const char *dir = getenv("NNLAB_PRESETS_DIR");
    snprintf(path, sizeof path, "%s/%s.ini", dir && *dir ? dir : PRESETS_SRCDIR, name);
    if (nn_preset_load(path, p, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* Runs cfg to the end: its loss points (at most max) and final snapshot. */
static long run_job(const nn_job_config *cfg, nn_loss_point *pts, long max, nn_snapshot *s)
{
    char err[NN_ERR_LEN] = "";
    nn_job *job = nn_job_start(cfg, err, sizeof err);
    if (!job)
        fail_msg("nn_job_start on %s: %s", cfg->device, err);
    nn_job_wait(job);
    nn_job_snapshot(job, s);
    long n = nn_job_loss_points(job, 0, pts, max);
    nn_job_free(job);
    if (s->state != NN_JOB_DONE)
        fail_msg("job on %s ended %s: %s", cfg->device, nn_job_state_name(s->state), s->error);
    return n;
}

static void expect_same_curve(const char *what, const nn_loss_point *a, long na, const nn_loss_point *b,
                              long nb, double abs_tol, double rel_tol)
{
    assert_int_equal(na, nb);
    double worst = 0.0;
    for (long i = 0; i < na; i++) {
        assert_int_equal(a[i].step, b[i].step);
        double d = fabs((double)a[i].loss - b[i].loss), tol = abs_tol + rel_tol * fabs((double)a[i].loss);
        if (d / tol > worst)
            worst = d / tol;
        if (d > tol)
            fail_msg("%s: point %ld (step %ld): %.7f vs %.7f", what, i, a[i].step, (double)a[i].loss,
                     (double)b[i].loss);
    }
    print_message("# %s: %ld points, worst difference %.3g of the tolerance\n", what, na, worst);
}

/* 200 steps from the same seed on cpu-ref and on the GPU (default switches:
 * data on the device, CUDA graph): the same data order, weights and dropout
 * masks, so the curves agree to float rounding. */
static void curve_case(const char *preset)
{
    nn_preset p;
    nn_job_config cfg;
    nn_loss_point a[64], b[64];
    nn_snapshot sa, sb;
    load_shipped(preset, &p);
    nn_job_config_init(&cfg, &p);
    cfg.steps = 200;
    cfg.log_every = 10;
    cfg.seed = 11;
    cfg.no_validation = 1;
    strcpy(cfg.device, "cpu-ref");
    long na = run_job(&cfg, a, 64, &sa);
    strcpy(cfg.device, "gpu");
    long nb = run_job(&cfg, b, 64, &sb);
    assert_true(na >= 20);
    if (sb.note[0])
        print_message("# note: %s\n", sb.note);
    char what[96];
    snprintf(what, sizeof what, "%s, cpu-ref vs gpu", preset);
    expect_same_curve(what, a, na, b, nb, 1e-3, 2e-3);
}

static void test_curve_lenet_cifar10(void **state)
{
    (void)state;
    curve_case("lenet-cifar10");
}

static void test_curve_mnist_mlp_128(void **state)
{
    (void)state;
    curve_case("mnist-mlp-128");
}

/* The switches change how the step reaches the GPU, not what it computes:
 * graph or eager, data resident or copied (pageable or pinned), loss read
 * every step or not: the same numbers. At batch 7000 each epoch of the
 * 60000 samples ends on a partial batch, which a graph job runs eagerly
 * (between replays): 30 steps cross three of them. */
static void test_switches_same_numbers(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    nn_loss_point base[128], pts[128];
    nn_snapshot s0, s;
    load_shipped("mnist-mlp-128", &p);
    nn_job_config_init(&cfg, &p);
    strcpy(cfg.device, "gpu");
    cfg.batch = 7000;            /* 60000 = 8 x 7000 + 4000: each epoch ends on a partial batch */
    cfg.steps = 30;
    cfg.log_every = 1;
    cfg.seed = 5;
    cfg.no_validation = 1;
    cfg.graph = 0;
    long n0 = run_job(&cfg, base, 128, &s0);
    assert_int_equal(s0.graph, 0);
    struct { const char *what; int graph, resident, pinned, sync; } v[] = {
        { "graph", 1, 1, 0, 0 },
        { "graph, copied batches", 1, 0, 0, 0 },
        { "eager, pinned batches", 0, 0, 1, 0 },
        { "graph, pinned batches, sync every step", 1, 0, 1, 1 },
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        cfg.graph = v[i].graph;
        cfg.data_on_device = v[i].resident;
        cfg.pinned = v[i].pinned;
        cfg.sync_every_step = v[i].sync;
        long n = run_job(&cfg, pts, 128, &s);
        if (s.note[0])
            print_message("# %s: note: %s\n", v[i].what, s.note);
        assert_int_equal(s.graph, v[i].graph);
        assert_int_equal(s.data_on_device, v[i].resident);
        assert_int_equal(s.pinned, v[i].pinned);
        char what[96];
        snprintf(what, sizeof what, "eager vs %s", v[i].what);
        expect_same_curve(what, base, n0, pts, n, 1e-6, 1e-5);
    }
}

/* The backend's own counts: an eager step issues every operation, a graph
 * step one launch; resident data copies nothing per step, copied batches two
 * copies (samples and labels). */
static void test_step_accounting(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    nn_snapshot eager, graph, copied;
    load_shipped("lenet-cifar10", &p);
    nn_job_config_init(&cfg, &p);
    strcpy(cfg.device, "gpu");
    cfg.bench = 1;
    cfg.steps = 50;
    cfg.warmup = 5;
    cfg.graph = 0;
    nn_loss_point pts[8];
    run_job(&cfg, pts, 8, &eager);
    cfg.graph = 1;
    run_job(&cfg, pts, 8, &graph);
    cfg.data_on_device = 0;
    run_job(&cfg, pts, 8, &copied);
    print_message("# eager: %.1f launches (%.1f kernels, %.1f library calls), %.2f copies to, %.2f from, "
                  "%.2f waits per step; graph: %.2f launches, %.1f nodes; copied: %.2f copies to\n",
                  eager.per_step.launches, eager.per_step.kernels, eager.per_step.library_calls,
                  eager.per_step.h2d_copies, eager.per_step.d2h_copies, eager.per_step.syncs,
                  graph.per_step.launches, graph.per_step.graph_nodes, copied.per_step.h2d_copies);
    assert_true(eager.has_counters && graph.has_counters);
    assert_true(eager.per_step.launches > 10);
    assert_true(graph.per_step.graph_launches > 0.99 && graph.per_step.graph_launches < 1.01);
    assert_true(graph.per_step.launches < 3);            /* the gather and the graph */
    assert_true(graph.per_step.graph_nodes > 10);
    assert_true(eager.per_step.h2d_copies < 0.1);        /* the order, once an epoch */
    assert_true(copied.per_step.h2d_copies > 1.99);
    assert_true(eager.phase_device_clock);
    assert_true(eager.phase_valid & (1u << NN_PHASE_FORWARD));
    assert_false(graph.phase_valid & (1u << NN_PHASE_FORWARD));
    assert_true(graph.has_graph_us && graph.graph_us > 0);
    assert_true(eager.steps_async);
}

int main(void)
{
    char why[NN_BACKEND_ERROR_LEN];
    const nn_backend_ops *gpu = nn_backend_find_why("gpu", why, sizeof why);
    if (!gpu || (gpu->probe && gpu->probe(why, sizeof why) != 0)) {
        /* TAP: a plan of no tests with a SKIP directive skips the whole file */
        for (char *c = why; *c; c++)
            if (*c == '\n' || *c == '\r' || *c == '#')
                *c = ' ';
        printf("1..0 # SKIP no GPU: %s\n", why);
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_ops),
        cmocka_unit_test(test_pinned),
        cmocka_unit_test(test_linear),
        cmocka_unit_test(test_conv),
        cmocka_unit_test(test_maxpool),
        cmocka_unit_test(test_activations),
        cmocka_unit_test(test_dropout),
        cmocka_unit_test(test_softmax_xent),
        cmocka_unit_test(test_mse),
        cmocka_unit_test(test_sgd),
        cmocka_unit_test(test_adam),
        cmocka_unit_test(test_gather_rows),
        cmocka_unit_test(test_graph_replay),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_curve_lenet_cifar10),
        cmocka_unit_test(test_curve_mnist_mlp_128),
        cmocka_unit_test(test_switches_same_numbers),
        cmocka_unit_test(test_step_accounting),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
