/* tests/test_parity.c - the OpenBLAS backend ("cpu") against the reference
 * backend ("cpu-ref"), operation by operation, on fresh random inputs and
 * random shapes.
 *
 * Every case draws its shapes and data from its own seed, derived from one
 * base seed (NNLAB_PARITY_SEED overrides it); a failure prints the seed, the
 * case, the shape and the worst element, so the case can be replayed. Buffers
 * are malloc'ed at their exact size (the convolution workspace too, at the
 * size conv2d_workspace reports), so that AddressSanitizer catches any
 * overrun. Results must agree within abs + rel |ref| (llm.c's
 * validate_result); the reference sums in double, cpu in float, so long
 * reductions get a looser tolerance. "cpu" runs with 2 threads, and again
 * with 1 and 3, which must agree too.
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

#include "backend.h"
#include "rng.h"
#include "parity_util.h"

#define BASE_SEED 20240611ULL

typedef struct fixture {
    nn_backend ref;     /* cpu-ref, the oracle */
    nn_backend cpu;     /* cpu, 2 threads */
    nn_backend cpu1;    /* cpu, 1 thread */
    nn_backend cpu3;    /* cpu, 3 threads: more threads than cores, uneven splits */
    uint64_t seed;
} fixture;

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */

static const char *label(const fixture *f, const nn_backend *fast)
{
    return fast == &f->cpu1 ? "1 thread" : fast == &f->cpu3 ? "3 threads" : "2 threads";
}

/* ------------------------------------------------------------------------ */
/* Fixture                                                                   */

static int open_cpu(nn_backend *b, int threads)
{
    nn_backend_config cfg = { .threads = threads };
    const nn_backend_ops *ops = nn_backend_find("cpu");
    if (!ops || nn_backend_open(b, ops, &cfg) != 0) {
        fprintf(stderr, "# cannot open cpu with %d threads: %s\n", threads, b->last_error);
        return -1;
    }
    return 0;
}

static int group_setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    f->seed = parity_seed_init(BASE_SEED, "parity seed");
    parity_report_as("cpu", 1);
    nn_backend_config one = { .threads = 1 };
    if (nn_backend_open(&f->ref, nn_backend_find("cpu-ref"), &one) != 0 ||
        open_cpu(&f->cpu, 2) != 0 || open_cpu(&f->cpu1, 1) != 0 || open_cpu(&f->cpu3, 3) != 0) {
        fprintf(stderr, "# %s\n", f->ref.last_error);
        return -1;
    }
    *state = f;
    return 0;
}

static int group_teardown(void **state)
{
    fixture *f = *state;
    if (f) {
        nn_backend_close(&f->cpu3);
        nn_backend_close(&f->cpu1);
        nn_backend_close(&f->cpu);
        nn_backend_close(&f->ref);
        free(f);
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Memory operations                                                         */

static void test_memory_ops(void **state)
{
    fixture *f = *state;
    nn_backend *b = &f->cpu;
    const size_t sizes[] = { 1, 3, 64, 1000, 1 << 20 };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t bytes = sizes[k];
        void *p = NULL;
        expect_ok(b, b->ops->alloc(b, bytes, &p), "alloc");
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 64, 0);
        unsigned char *c = p;
        for (size_t i = 0; i < bytes; i++)
            assert_int_equal(c[i], 0);

        unsigned char *src = malloc(bytes), *back = malloc(bytes);
        assert_non_null(src);
        assert_non_null(back);
        for (size_t i = 0; i < bytes; i++)
            src[i] = (unsigned char)(i * 131 + 7);
        expect_ok(b, b->ops->upload(b, p, src, bytes), "upload");
        expect_ok(b, b->ops->download(b, back, p, bytes), "download");
        assert_memory_equal(src, back, bytes);
        expect_ok(b, b->ops->zero(b, p, bytes), "zero");
        for (size_t i = 0; i < bytes; i++)
            assert_int_equal(c[i], 0);
        expect_ok(b, b->ops->synchronize(b), "synchronize");
        b->ops->free(b, p);
        free(src);
        free(back);
    }
}

/* ------------------------------------------------------------------------ */
/* Linear                                                                    */

static void linear_case(fixture *f, nn_backend *fast, uint64_t seed, int n, int in, int out,
                        int with_bias, int with_dx)
{
    char shape[128];
    snprintf(shape, sizeof shape, "linear n=%d in=%d out=%d bias=%d dx=%d (%s)",
             n, in, out, with_bias, with_dx, label(f, fast));
    nn_rng r;
    nn_rng_seed(&r, seed);
    size_t nx = (size_t)n * in, nw = (size_t)out * in, ny = (size_t)n * out;
    float *x = fbuf(nx), *w = fbuf(nw), *bias = fbuf((size_t)out), *dy = fbuf(ny);
    fill(&r, x, nx, -1, 1);
    fill(&r, w, nw, -1, 1);
    fill(&r, bias, (size_t)out, -1, 1);
    fill(&r, dy, ny, -1, 1);
    float *y_ref = fbuf(ny), *y = fbuf(ny);
    float *dx_ref = fbuf(nx), *dx = fbuf(nx), *dw_ref = fbuf(nw), *dw = fbuf(nw);
    float *db_ref = fbuf((size_t)out), *db = fbuf((size_t)out);

    const float *bp = with_bias ? bias : NULL;
    expect_ok(&f->ref, f->ref.ops->linear_forward(&f->ref, n, in, out, x, w, bp, y_ref),
              "linear_forward");
    expect_ok(fast, fast->ops->linear_forward(fast, n, in, out, x, w, bp, y), "linear_forward");
    expect_close("linear_forward y", shape, seed, y_ref, y, ny, TOL_ABS, TOL_REL);

    expect_ok(&f->ref, f->ref.ops->linear_backward(&f->ref, n, in, out, x, w, dy,
                                                   with_dx ? dx_ref : NULL, dw_ref, db_ref),
              "linear_backward");
    expect_ok(fast, fast->ops->linear_backward(fast, n, in, out, x, w, dy,
                                               with_dx ? dx : NULL, dw, db),
              "linear_backward");
    if (with_dx)
        expect_close("linear_backward dx", shape, seed, dx_ref, dx, nx, TOL_ABS, TOL_REL);
    expect_close("linear_backward dw", shape, seed, dw_ref, dw, nw, TOL_SUM_ABS, TOL_SUM_REL);
    expect_close("linear_backward dbias", shape, seed, db_ref, db, (size_t)out,
                 TOL_SUM_ABS, TOL_SUM_REL);

    free(x); free(w); free(bias); free(dy); free(y_ref); free(y);
    free(dx_ref); free(dx); free(dw_ref); free(dw); free(db_ref); free(db);
}

static void test_linear(void **state)
{
    fixture *f = *state;
    /* edges: ones, odd sizes, the presets' layers */
    static const int fixed[][3] = {
        { 1, 1, 1 }, { 1, 300, 1 }, { 300, 1, 1 }, { 1, 1, 300 }, { 7, 13, 5 },
        { 4, 400, 120 }, { 4, 84, 10 }, { 32, 784, 128 }, { 17, 1, 20 }, { 300, 299, 301 },
    };
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
        linear_case(f, &f->cpu, case_seed(f->seed, 1, (int)k), fixed[k][0], fixed[k][1],
                    fixed[k][2], 1, 1);
    for (int k = 0; k < 16; k++) {
        uint64_t seed = case_seed(f->seed, 2, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        int n = rnd(&r, 1, 300), in = rnd(&r, 1, 300), out = rnd(&r, 1, 300);
        linear_case(f, &f->cpu, seed, n, in, out, k % 4 != 1, k % 3 != 2);
    }
}

/* ------------------------------------------------------------------------ */
/* Convolution                                                               */

/* Forward and backward of one geometry on `fast` against cpu-ref, with a
 * workspace of exactly the reported size. */
static void conv_case(fixture *f, nn_backend *fast, uint64_t seed, const nn_conv_geom *g,
                      int with_bias, int with_dx)
{
    char shape[192];
    char extra[64];
    snprintf(extra, sizeof extra, " bias=%d dx=%d (%s)", with_bias, with_dx, label(f, fast));
    conv_shape(shape, sizeof shape, g, extra);
    nn_rng r;
    nn_rng_seed(&r, seed);
    size_t nx = (size_t)g->n * g->c_in * g->h_in * g->w_in;
    size_t nw = (size_t)g->c_out * g->c_in * g->k_h * g->k_w;
    size_t ny = (size_t)g->n * g->c_out * g->h_out * g->w_out;
    float *x = fbuf(nx), *w = fbuf(nw), *bias = fbuf((size_t)g->c_out), *dy = fbuf(ny);
    fill(&r, x, nx, -1, 1);
    fill(&r, w, nw, -1, 1);
    fill(&r, bias, (size_t)g->c_out, -1, 1);
    fill(&r, dy, ny, -1, 1);
    float *y_ref = fbuf(ny), *y = fbuf(ny), *dx_ref = fbuf(nx), *dx = fbuf(nx);
    float *dw_ref = fbuf(nw), *dw = fbuf(nw);
    float *db_ref = fbuf((size_t)g->c_out), *db = fbuf((size_t)g->c_out);

    size_t ref_ws_bytes = f->ref.ops->conv2d_workspace(&f->ref, g);
    size_t ws_bytes = fast->ops->conv2d_workspace(fast, g);
    void *ref_ws = malloc(ref_ws_bytes ? ref_ws_bytes : 1), *ws = malloc(ws_bytes ? ws_bytes : 1);
    assert_non_null(ref_ws);
    assert_non_null(ws);

    const float *bp = with_bias ? bias : NULL;
    expect_ok(&f->ref, f->ref.ops->conv2d_forward(&f->ref, g, x, w, bp, y_ref, ref_ws),
              "conv2d_forward");
    expect_ok(fast, fast->ops->conv2d_forward(fast, g, x, w, bp, y, ws), "conv2d_forward");
    expect_close("conv2d_forward y", shape, seed, y_ref, y, ny, TOL_ABS, TOL_REL);

    expect_ok(&f->ref, f->ref.ops->conv2d_backward(&f->ref, g, x, w, dy,
                                                   with_dx ? dx_ref : NULL, dw_ref, db_ref,
                                                   ref_ws), "conv2d_backward");
    expect_ok(fast, fast->ops->conv2d_backward(fast, g, x, w, dy, with_dx ? dx : NULL, dw, db,
                                               ws), "conv2d_backward");
    if (with_dx)
        expect_close("conv2d_backward dx", shape, seed, dx_ref, dx, nx, TOL_ABS, TOL_REL);
    expect_close("conv2d_backward dw", shape, seed, dw_ref, dw, nw, TOL_SUM_ABS, TOL_SUM_REL);
    expect_close("conv2d_backward dbias", shape, seed, db_ref, db, (size_t)g->c_out,
                 TOL_SUM_ABS, TOL_SUM_REL);

    free(ref_ws); free(ws);
    free(x); free(w); free(bias); free(dy); free(y_ref); free(y);
    free(dx_ref); free(dx); free(dw_ref); free(dw); free(db_ref); free(db);
}

static void test_conv2d_random(void **state)
{
    fixture *f = *state;
    for (int k = 0; k < 40; k++) {
        uint64_t seed = case_seed(f->seed, 3, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        nn_conv_geom g = random_conv(&r, 0, 6);
        conv_case(f, &f->cpu, seed, &g, k % 5 != 3, k % 4 != 1);
    }
}

static void test_conv1d_random(void **state)
{
    fixture *f = *state;
    for (int k = 0; k < 30; k++) {
        uint64_t seed = case_seed(f->seed, 4, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        nn_conv_geom g = random_conv(&r, 1, 40);
        conv_case(f, &f->cpu, seed, &g, k % 5 != 3, k % 4 != 1);
    }
}

/* The presets' convolutions, and geometries chosen to hit each path of the
 * im2col scheme: one sample per gemm, several samples per gemm with a
 * shorter last chunk, the 1x1 shortcut, batches smaller than the threads. */
static void test_conv2d_presets_and_chunks(void **state)
{
    fixture *f = *state;
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
        /* the direct kernels (cpu_conv_direct.c; tests/parity-im2col.sh runs
         * these through im2col instead) */
        conv_geom(1, 2, 30, 30, 13, 3, 1, 1),    /* rows split between threads, 6+6+1 channels */
        conv_geom(3, 3, 28, 28, 32, 5, 1, 2),    /* 32 channels, an odd tap count, padding */
        conv_geom(2, 1, 40, 40, 7, 7, 1, 0),     /* 7x7, one input channel */
        conv_geom(5, 4, 16, 16, 5, 2, 1, 0),     /* an even kernel, 16 of 17 columns */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        conv_case(f, &f->cpu, case_seed(f->seed, 5, (int)k), &cases[k], 1, 1);
        conv_case(f, &f->cpu1, case_seed(f->seed, 5, (int)k), &cases[k], 1, 1);
        conv_case(f, &f->cpu3, case_seed(f->seed, 5, (int)k), &cases[k], 1, 0);
    }
}

/* The workspace reported must be all the op touches (checked by ASan through
 * the exact-size buffers above) and must not depend on anything but the
 * geometry: asking twice gives the same, and a larger batch never needs less. */
static void test_conv2d_workspace(void **state)
{
    fixture *f = *state;
    nn_backend *b = &f->cpu;
    for (int k = 0; k < 50; k++) {
        nn_rng r;
        nn_rng_seed(&r, case_seed(f->seed, 6, k));
        nn_conv_geom g = random_conv(&r, k % 2, 64);
        size_t a = b->ops->conv2d_workspace(b, &g), a2 = b->ops->conv2d_workspace(b, &g);
        assert_int_equal(a, a2);
        assert_true(a > 0);
        nn_conv_geom big = g;
        big.n = g.n * 2;
        assert_true(b->ops->conv2d_workspace(b, &big) >= a);
    }
}

/* ------------------------------------------------------------------------ */
/* Max pooling                                                               */

static void pool_case(fixture *f, nn_backend *fast, uint64_t seed, const nn_pool_geom *g,
                      int ties)
{
    char shape[160];
    snprintf(shape, sizeof shape, "maxpool n=%d c=%d %dx%d -> %dx%d k=%dx%d stride=%dx%d ties=%d",
             g->n, g->c, g->h_in, g->w_in, g->h_out, g->w_out, g->k_h, g->k_w, g->stride_h,
             g->stride_w, ties);
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
    fill(&r, dy, ny, -1, 1);
    /* garbage in dx: backward must overwrite all of it */
    fill(&r, dx, nx, 100, 200);

    expect_ok(&f->ref, f->ref.ops->maxpool2d_forward(&f->ref, g, x, y_ref), "maxpool2d_forward");
    expect_ok(fast, fast->ops->maxpool2d_forward(fast, g, x, y), "maxpool2d_forward");
    expect_close("maxpool2d_forward y", shape, seed, y_ref, y, ny, 0, 0);
    expect_ok(&f->ref, f->ref.ops->maxpool2d_backward(&f->ref, g, x, y_ref, dy, dx_ref),
              "maxpool2d_backward");
    expect_ok(fast, fast->ops->maxpool2d_backward(fast, g, x, y, dy, dx), "maxpool2d_backward");
    expect_close("maxpool2d_backward dx", shape, seed, dx_ref, dx, nx, 1e-6, 1e-6);

    free(x); free(dy); free(y_ref); free(y); free(dx_ref); free(dx);
}

static void test_maxpool(void **state)
{
    fixture *f = *state;
    int k = 0;
    for (int rep = 0; rep < 24; rep++, k++) {
        uint64_t seed = case_seed(f->seed, 7, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        nn_pool_geom g = random_pool(&r, rep);
        pool_case(f, &f->cpu, seed, &g, rep % 2 == 0);
    }
    /* the presets' pools at a batch large enough to be split between threads */
    const nn_pool_geom presets[] = {
        pool_geom(64, 6, 28, 28, 2, 2, 2, 2),
        pool_geom(64, 16, 10, 10, 2, 2, 2, 2),
        pool_geom(512, 8, 1, 16, 1, 3, 1, 3),
        pool_geom(512, 16, 1, 5, 1, 5, 1, 1),
        pool_geom(3, 2, 9, 11, 3, 3, 3, 3),      /* non-overlapping 3x3 windows */
        pool_geom(2, 2, 7, 9, 2, 2, 3, 4),       /* gaps between the windows */
    };
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
        pool_case(f, &f->cpu, case_seed(f->seed, 8, (int)i), &presets[i], 1);
        pool_case(f, &f->cpu3, case_seed(f->seed, 8, (int)i), &presets[i], 0);
    }
}

/* NaN handling follows cpu-ref (and PyTorch): a NaN in a window wins the
 * forward, and its gradient is dropped. */
static void test_maxpool_nan(void **state)
{
    fixture *f = *state;
    nn_pool_geom g = pool_geom(2, 3, 6, 7, 2, 2, 2, 2);
    nn_pool_geom g2 = pool_geom(2, 3, 6, 7, 3, 3, 1, 2);
    nn_pool_geom g3 = pool_geom(2, 3, 1, 16, 1, 3, 1, 3);
    const nn_pool_geom *gs[] = { &g, &g2, &g3 };
    for (int k = 0; k < 3; k++) {
        uint64_t seed = case_seed(f->seed, 9, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        size_t nx = (size_t)gs[k]->n * gs[k]->c * gs[k]->h_in * gs[k]->w_in;
        size_t ny = (size_t)gs[k]->n * gs[k]->c * gs[k]->h_out * gs[k]->w_out;
        float *x = fbuf(nx), *dy = fbuf(ny), *y_ref = fbuf(ny), *y = fbuf(ny);
        float *dx_ref = fbuf(nx), *dx = fbuf(nx);
        fill(&r, x, nx, -1, 1);
        fill(&r, dy, ny, -1, 1);
        for (size_t i = 0; i < nx; i += 5)
            x[i] = NAN;
        nn_backend *ref = &f->ref, *cpu = &f->cpu;
        expect_ok(ref, ref->ops->maxpool2d_forward(ref, gs[k], x, y_ref), "maxpool2d_forward");
        expect_ok(cpu, cpu->ops->maxpool2d_forward(cpu, gs[k], x, y), "maxpool2d_forward");
        expect_close("maxpool2d_forward (NaN)", "nan", seed, y_ref, y, ny, 0, 0);
        expect_ok(ref, ref->ops->maxpool2d_backward(ref, gs[k], x, y_ref, dy, dx_ref),
                  "maxpool2d_backward");
        expect_ok(cpu, cpu->ops->maxpool2d_backward(cpu, gs[k], x, y, dy, dx),
                  "maxpool2d_backward");
        expect_close("maxpool2d_backward (NaN)", "nan", seed, dx_ref, dx, nx, 0, 0);
        free(x); free(dy); free(y_ref); free(y); free(dx_ref); free(dx);
    }
}

/* ------------------------------------------------------------------------ */
/* Activations                                                               */

static void test_activations(void **state)
{
    fixture *f = *state;
    static const enum nn_act acts[] = { NN_ACT_RELU, NN_ACT_TANH, NN_ACT_MISH };
    static const char *names[] = { "relu", "tanh", "mish" };
    static const size_t sizes[] = { 1, 7, 16, 1000, 65537, 300001 };
    int k = 0;
    for (size_t a = 0; a < 3; a++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++, k++) {
            uint64_t seed = case_seed(f->seed, 10, k);
            nn_rng r;
            nn_rng_seed(&r, seed);
            size_t n = sizes[s];
            char shape[64];
            snprintf(shape, sizeof shape, "%s n=%zu", names[a], n);
            float *x = fbuf(n), *dy = fbuf(n), *y_ref = fbuf(n), *y = fbuf(n);
            float *dx_ref = fbuf(n), *dx = fbuf(n);
            fill_act_inputs(&r, x, n);
            fill(&r, dy, n, -1, 1);
            nn_backend *ref = &f->ref, *cpu = &f->cpu;
            expect_ok(ref, ref->ops->act_forward(ref, acts[a], n, x, y_ref), "act_forward");
            expect_ok(cpu, cpu->ops->act_forward(cpu, acts[a], n, x, y), "act_forward");
            expect_close("act_forward", shape, seed, y_ref, y, n, TOL_ABS, TOL_REL);
            expect_ok(ref, ref->ops->act_backward(ref, acts[a], n, x, y_ref, dy, dx_ref),
                      "act_backward");
            expect_ok(cpu, cpu->ops->act_backward(cpu, acts[a], n, x, y, dy, dx),
                      "act_backward");
            expect_close("act_backward", shape, seed, dx_ref, dx, n, TOL_ABS, TOL_REL);
            free(x); free(dy); free(y_ref); free(y); free(dx_ref); free(dx);
        }
}

/* The edges of the activations' fast paths: cpu's mish clamps its exponent
 * to [-87, 20] and special-cases beyond; the infinities and NaN must come out
 * as cpu-ref's. */
static void test_activation_edges(void **state)
{
    fixture *f = *state;
    static const float xs[] = {
        NAN, INFINITY, -INFINITY, -FLT_MAX, -1e30f, -1000.0f, -104.0f, -88.0f, -87.0f,
        -86.99f, -50.0f, -20.0f, -5.0f, -1.1924f, -1e-30f, -0.0f, 0.0f, 1e-38f, 1e-3f, 0.5f,
        3.0f, 19.99f, 20.0f, 20.01f, 30.0f, 44.0f, 45.0f, 88.0f, 1000.0f, 1e30f, FLT_MAX,
    };
    static const enum nn_act acts[] = { NN_ACT_RELU, NN_ACT_TANH, NN_ACT_MISH };
    static const char *names[] = { "relu edges", "tanh edges", "mish edges" };
    const size_t n = sizeof xs / sizeof xs[0];
    float dy[sizeof xs / sizeof xs[0]];
    float y_ref[sizeof xs / sizeof xs[0]], y[sizeof xs / sizeof xs[0]];
    float dx_ref[sizeof xs / sizeof xs[0]], dx[sizeof xs / sizeof xs[0]];
    for (size_t i = 0; i < n; i++)
        dy[i] = i % 2 ? 0.5f : -2.0f;
    for (size_t a = 0; a < 3; a++) {
        nn_backend *ref = &f->ref, *cpu = &f->cpu;
        expect_ok(ref, ref->ops->act_forward(ref, acts[a], n, xs, y_ref), "act_forward");
        expect_ok(cpu, cpu->ops->act_forward(cpu, acts[a], n, xs, y), "act_forward");
        expect_close("act_forward", names[a], 0, y_ref, y, n, TOL_ABS, TOL_REL);
        expect_ok(ref, ref->ops->act_backward(ref, acts[a], n, xs, y_ref, dy, dx_ref),
                  "act_backward");
        expect_ok(cpu, cpu->ops->act_backward(cpu, acts[a], n, xs, y, dy, dx), "act_backward");
        expect_close("act_backward", names[a], 0, dx_ref, dx, n, TOL_ABS, TOL_REL);
    }
}

/* ------------------------------------------------------------------------ */
/* Dropout: the mask is a shared pure function, so results are identical.    */

static void test_dropout(void **state)
{
    fixture *f = *state;
    static const float ps[] = { 0.0f, 0.2f, 0.5f, 0.999f, 1.0f };
    static const size_t sizes[] = { 1, 33, 100000 };
    int k = 0;
    for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++, k++) {
            uint64_t seed = case_seed(f->seed, 11, k);
            nn_rng r;
            nn_rng_seed(&r, seed);
            size_t n = sizes[s];
            uint64_t dseed = nn_rng_u64(&r), counter = nn_rng_u64(&r) >> 20;
            char shape[64];
            snprintf(shape, sizeof shape, "dropout n=%zu p=%g", n, (double)ps[pi]);
            float *x = fbuf(n), *y_ref = fbuf(n), *y = fbuf(n), *dx_ref = fbuf(n), *dx = fbuf(n);
            fill(&r, x, n, -2, 2);
            nn_backend *ref = &f->ref, *cpu = &f->cpu;
            expect_ok(ref, ref->ops->dropout_forward(ref, n, ps[pi], dseed, counter, x, y_ref),
                      "dropout_forward");
            expect_ok(cpu, cpu->ops->dropout_forward(cpu, n, ps[pi], dseed, counter, x, y),
                      "dropout_forward");
            expect_close("dropout_forward", shape, seed, y_ref, y, n, 0, 0);
            expect_ok(ref, ref->ops->dropout_backward(ref, n, ps[pi], dseed, counter, x, dx_ref),
                      "dropout_backward");
            expect_ok(cpu, cpu->ops->dropout_backward(cpu, n, ps[pi], dseed, counter, x, dx),
                      "dropout_backward");
            expect_close("dropout_backward", shape, seed, dx_ref, dx, n, 0, 0);
            free(x); free(y_ref); free(y); free(dx_ref); free(dx);
        }
}

/* ------------------------------------------------------------------------ */
/* Losses                                                                    */

static void test_softmax_xent(void **state)
{
    fixture *f = *state;
    for (int k = 0; k < 12; k++) {
        uint64_t seed = case_seed(f->seed, 12, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        int n = k == 0 ? 1 : rnd(&r, 1, 300), classes = k == 1 ? 1 : rnd(&r, 1, 20);
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
        nn_backend *ref = &f->ref, *cpu = &f->cpu;
        expect_ok(ref, ref->ops->softmax_xent(ref, n, classes, logits, labels,
                                              with_grad ? d_ref : NULL, st_ref), "softmax_xent");
        expect_ok(cpu, cpu->ops->softmax_xent(cpu, n, classes, logits, labels,
                                              with_grad ? d : NULL, st), "softmax_xent");
        expect_close("softmax_xent stats", shape, seed, st_ref, st, 2, TOL_SUM_ABS, TOL_SUM_REL);
        if (with_grad)
            expect_close("softmax_xent dlogits", shape, seed, d_ref, d, m, TOL_ABS, TOL_REL);
        free(logits); free(d_ref); free(d); free(labels);
    }
}

static void test_mse(void **state)
{
    fixture *f = *state;
    for (int k = 0; k < 12; k++) {
        uint64_t seed = case_seed(f->seed, 13, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        int n = rnd(&r, 1, 4096), width = rnd(&r, 1, 5);
        size_t m = (size_t)n * width;
        char shape[64];
        snprintf(shape, sizeof shape, "mse n=%d width=%d", n, width);
        float *pred = fbuf(m), *target = fbuf(m), *d_ref = fbuf(m), *d = fbuf(m);
        fill(&r, pred, m, -3, 3);
        fill(&r, target, m, -3, 3);
        float st_ref[1] = { 0.25f }, st[1] = { 0.25f };
        int with_grad = k % 3 != 2;
        nn_backend *ref = &f->ref, *cpu = &f->cpu;
        expect_ok(ref, ref->ops->mse(ref, n, width, pred, target, with_grad ? d_ref : NULL,
                                     st_ref), "mse");
        expect_ok(cpu, cpu->ops->mse(cpu, n, width, pred, target, with_grad ? d : NULL, st),
                  "mse");
        expect_close("mse stats", shape, seed, st_ref, st, 1, TOL_SUM_ABS, TOL_SUM_REL);
        if (with_grad)
            expect_close("mse dpred", shape, seed, d_ref, d, m, TOL_ABS, TOL_REL);
        free(pred); free(target); free(d_ref); free(d);
    }
}

/* ------------------------------------------------------------------------ */
/* Optimisers: several steps, fresh gradients each time.                     */

static void test_sgd(void **state)
{
    fixture *f = *state;
    static const nn_sgd_hyper hs[] = {
        { .lr = 0.01f },                                         /* plain, no velocity */
        { .lr = 0.001f, .momentum = 0.9f },                      /* the LeNet presets */
        { .lr = 0.05f, .momentum = 0.8f, .dampening = 0.1f, .weight_decay = 1e-2f },
        { .lr = 0.05f, .momentum = 0.9f, .weight_decay = 5e-4f, .nesterov = 1 },
    };
    static const size_t sizes[] = { 1, 1001, 62006, 200003 };
    int k = 0;
    for (size_t h = 0; h < sizeof hs / sizeof hs[0]; h++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++, k++) {
            uint64_t seed = case_seed(f->seed, 14, k);
            nn_rng r;
            nn_rng_seed(&r, seed);
            size_t n = sizes[s];
            float *p_ref = fbuf(n), *g = fbuf(n), *v_ref = fbuf(n), *v = fbuf(n);
            fill(&r, p_ref, n, -1, 1);
            float *p = copy_of(p_ref, n);
            /* stale velocities, different on each side: step 1 must not read them */
            fill(&r, v_ref, n, -1, 1);
            fill(&r, v, n, -1, 1);
            int with_v = hs[h].momentum != 0.0f;
            nn_backend *ref = &f->ref, *cpu = &f->cpu;
            /* compared after every step: step 1 stores g, later steps damp it */
            for (long t = 1; t <= 4; t++) {
                fill(&r, g, n, -1, 1);
                expect_ok(ref, ref->ops->sgd_step(ref, n, p_ref, g, with_v ? v_ref : NULL,
                                                  &hs[h], t), "sgd_step");
                expect_ok(cpu, cpu->ops->sgd_step(cpu, n, p, g, with_v ? v : NULL, &hs[h], t),
                          "sgd_step");
                char shape[128];
                snprintf(shape, sizeof shape,
                         "sgd n=%zu momentum=%g dampening=%g nesterov=%d t=%ld", n,
                         (double)hs[h].momentum, (double)hs[h].dampening, hs[h].nesterov, t);
                expect_close("sgd param", shape, seed, p_ref, p, n, TOL_ABS, TOL_REL);
                if (with_v)
                    expect_close("sgd velocity", shape, seed, v_ref, v, n, TOL_ABS, TOL_REL);
            }
            free(p_ref); free(p); free(g); free(v_ref); free(v);
        }
}

static void test_adam(void **state)
{
    fixture *f = *state;
    static const nn_adam_hyper hs[] = {
        { .lr = 0.001f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-7f },  /* Keras defaults */
        { .lr = 0.01f, .beta1 = 0.8f, .beta2 = 0.99f, .eps = 1e-8f, .weight_decay = 1e-2f },
    };
    static const size_t sizes[] = { 1, 101770, 300001 };
    int k = 0;
    for (size_t h = 0; h < sizeof hs / sizeof hs[0]; h++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++, k++) {
            uint64_t seed = case_seed(f->seed, 15, k);
            nn_rng r;
            nn_rng_seed(&r, seed);
            size_t n = sizes[s];
            char shape[64];
            snprintf(shape, sizeof shape, "adam n=%zu lr=%g", n, (double)hs[h].lr);
            float *p_ref = fbuf(n), *g = fbuf(n);
            float *m_ref = fbuf(n), *v_ref = fbuf(n), *m = fbuf(n), *v = fbuf(n);
            fill(&r, p_ref, n, -1, 1);
            float *p = copy_of(p_ref, n);
            memset(m_ref, 0, n * sizeof *m_ref);
            memset(v_ref, 0, n * sizeof *v_ref);
            memset(m, 0, n * sizeof *m);
            memset(v, 0, n * sizeof *v);
            nn_backend *ref = &f->ref, *cpu = &f->cpu;
            for (long t = 1; t <= 5; t++) {
                fill(&r, g, n, -1, 1);
                expect_ok(ref, ref->ops->adam_step(ref, n, p_ref, g, m_ref, v_ref, &hs[h], t),
                          "adam_step");
                expect_ok(cpu, cpu->ops->adam_step(cpu, n, p, g, m, v, &hs[h], t), "adam_step");
            }
            expect_close("adam param", shape, seed, p_ref, p, n, TOL_ABS, TOL_REL);
            expect_close("adam m", shape, seed, m_ref, m, n, TOL_ABS, TOL_REL);
            expect_close("adam v", shape, seed, v_ref, v, n, TOL_ABS, TOL_REL);
            free(p_ref); free(p); free(g); free(m_ref); free(v_ref); free(m); free(v);
        }
}

/* ------------------------------------------------------------------------ */
/* Thread counts: 1, 2 and 3 threads agree with cpu-ref (and so each other). */

static void test_thread_counts(void **state)
{
    fixture *f = *state;
    nn_backend *fast[] = { &f->cpu1, &f->cpu, &f->cpu3 };
    for (int k = 0; k < 6; k++) {
        uint64_t seed = case_seed(f->seed, 16, k);
        nn_rng r;
        nn_rng_seed(&r, seed);
        int n = rnd(&r, 1, 300), in = rnd(&r, 1, 300), out = rnd(&r, 1, 300);
        nn_conv_geom g = random_conv(&r, k % 2, 12);
        for (int t = 0; t < 3; t++) {
            linear_case(f, fast[t], seed, n, in, out, 1, 1);
            conv_case(f, fast[t], seed, &g, 1, 1);
        }
    }
    /* the big products of mnist-mlp-1000 and LeNet at batch 256 */
    nn_conv_geom lenet1 = conv_geom(64, 3, 32, 32, 6, 5, 1, 0);
    for (int t = 0; t < 3; t += 2) {
        linear_case(f, fast[t], case_seed(f->seed, 17, t), 256, 784, 1000, 1, 1);
        conv_case(f, fast[t], case_seed(f->seed, 17, t), &lenet1, 1, 0);
    }
}

/* The threads claim work in whatever order they get to it, but partial sums
 * are added in a fixed order: the same call twice gives the same bits. */
static void test_deterministic(void **state)
{
    fixture *f = *state;
    nn_backend *b = &f->cpu3;
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
    size_t ws_bytes = b->ops->conv2d_workspace(b, &g);
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

/* ------------------------------------------------------------------------ */
/* Errors are reported, not crashed on.                                      */

static void test_errors(void **state)
{
    fixture *f = *state;
    nn_backend *b = &f->cpu;
    float x[64] = { 0 }, y[64] = { 0 };
    char ws[4096];

    b->last_error[0] = '\0';
    assert_int_equal(b->ops->linear_forward(b, 0, 3, 3, x, x, NULL, y), -1);
    assert_true(b->last_error[0] != '\0');

    nn_conv_geom g = conv_geom(1, 1, 4, 4, 1, 3, 1, 0);
    g.h_out = 3;    /* wrong: the geometry gives 2 */
    b->last_error[0] = '\0';
    assert_int_equal(b->ops->conv2d_forward(b, &g, x, x, NULL, y, ws), -1);
    assert_non_null(strstr(b->last_error, "geometry gives"));
    assert_int_equal(b->ops->conv2d_backward(b, &g, x, x, y, y, y, y, ws), -1);

    nn_pool_geom pg = pool_geom(1, 1, 4, 4, 2, 2, 2, 2);
    pg.w_out = 3;
    assert_int_equal(b->ops->maxpool2d_forward(b, &pg, x, y), -1);
    assert_int_equal(b->ops->maxpool2d_backward(b, &pg, x, y, y, x), -1);

    assert_int_equal(b->ops->act_forward(b, (enum nn_act)99, 4, x, y), -1);
    assert_int_equal(b->ops->dropout_forward(b, 4, 1.5f, 1, 1, x, y), -1);
    assert_int_equal(b->ops->dropout_backward(b, 4, -0.5f, 1, 1, x, y), -1);
    nn_adam_hyper h = { .lr = 0.001f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f };
    assert_int_equal(b->ops->adam_step(b, 4, x, y, x + 8, x + 16, &h, 0), -1);
    nn_sgd_hyper sh = { .lr = 0.01f, .momentum = 0.9f };
    b->last_error[0] = '\0';
    assert_int_equal(b->ops->sgd_step(b, 4, x, y, x + 8, &sh, 0), -1);
    assert_non_null(strstr(b->last_error, "sgd_step"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_ops),
        cmocka_unit_test(test_linear),
        cmocka_unit_test(test_conv2d_random),
        cmocka_unit_test(test_conv1d_random),
        cmocka_unit_test(test_conv2d_presets_and_chunks),
        cmocka_unit_test(test_conv2d_workspace),
        cmocka_unit_test(test_maxpool),
        cmocka_unit_test(test_maxpool_nan),
        cmocka_unit_test(test_activations),
        cmocka_unit_test(test_activation_edges),
        cmocka_unit_test(test_dropout),
        cmocka_unit_test(test_softmax_xent),
        cmocka_unit_test(test_mse),
        cmocka_unit_test(test_sgd),
        cmocka_unit_test(test_adam),
        cmocka_unit_test(test_thread_counts),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
