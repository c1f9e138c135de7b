/* tests/test_gpu.c - the GPU backend (backends/cuda/, loaded as a module)
 * against the reference backend, cpu-ref: the parity suite
 * (tests/parity_suite.c) run on "gpu", then what only a device backend has:
 * pinned copies, gathering batches on the device, step graphs, the errors a
 * device reports late, and whole training runs through the engine with the
 * GPU switches, with their per-step accounting.
 *
 * Without a GPU (no module built, no driver, no device) the program prints
 * "1..0 # SKIP no GPU: <reason>" and exits 0: automake's TAP driver counts
 * that as one skipped test, not a pass. A GPU that is there but cannot be
 * used (a driver too old for the module, no code for the GPU, the driver
 * failing: the probe's NN_PROBE_UNUSABLE), or a module this build made that
 * cannot be loaded, is a failure, never a skip; NNLAB_REQUIRE_GPU=1 makes
 * every skip a failure too (the GPU machine sets it). With a GPU it is one
 * cmocka group.
 *
 * Device outputs are poisoned before each call, so an element the GPU did
 * not write fails. A recorded and replayed step (CUDA graph) must give the
 * numbers of the same step run eagerly; runs on cpu-ref and on the GPU from
 * one seed give the same loss curve to float rounding. */
#include "config.h"

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
#include "nnlab/device.h"
#include "nnlab/engine.h"
#include "nnlab/preset.h"
#include "rng.h"
#include "parity_suite.h"
#include "jacobian_check.h"
#include "gpu_conv_choice.h"

#ifndef FIXTURES_DIR
#define FIXTURES_DIR "tests/fixtures"
#endif
#ifndef PRESETS_SRCDIR
#define PRESETS_SRCDIR "presets"
#endif

static int group_setup(void **state)
{
    return parity_group_setup(state, "gpu");
}

/* ---- pinned copies ------------------------------------------------------------------------ */

/* Page-locked staging: uploads from it arrive, host_wait returns. */
static void test_pinned(void **state)
{
    parity_fixture *f = *state;
    nn_backend *b = &f->tested[0];
    const size_t n = 100000;
    float *pin = NULL, *back = fbuf(n);
    expect_ok(b, b->ops->host_alloc(b, n * sizeof(float), (void **)&pin), "host_alloc");
    float *d = bk_poison(b, n);
    for (int round = 0; round < 3; round++) {
        expect_ok(b, b->ops->host_wait(b, pin), "host_wait");
        for (size_t i = 0; i < n; i++)
            pin[i] = (float)(i * 3 + (size_t)round);
        expect_ok(b, b->ops->upload(b, d, pin, n * sizeof(float)), "upload");
        expect_ok(b, b->ops->host_wait(b, pin), "host_wait");
        bk_read(b, back, d, n * sizeof *back);
        for (size_t i = 0; i < n; i++)
            assert_true(back[i] == (float)(i * 3 + (size_t)round));
    }
    b->ops->host_free(b, pin);
    bk_free(b, d);
    free(back);
}

/* ---- gathering batches on the device ------------------------------------------------------ */

static void test_gather_rows(void **state)
{
    parity_fixture *f = *state;
    nn_backend *gpu = &f->tested[0];
    nn_rng r;
    nn_rng_seed(&r, case_seed(f->seed, 20, 0));
    const int rows = 5000, n = 97;
    const size_t xw = 3072, yw = 3;
    float *xs = fbuf((size_t)rows * xw), *ys = fbuf((size_t)rows * yw);
    float *x_ref = fbuf((size_t)n * xw), *y_ref = fbuf((size_t)n * yw);
    float *x = fbuf((size_t)n * xw), *y = fbuf((size_t)n * yw);
    int32_t idx[97];
    fill(&r, xs, (size_t)rows * xw, -1, 1);
    fill(&r, ys, (size_t)rows * yw, -1, 1);
    for (int i = 0; i < n; i++)
        idx[i] = (int32_t)nn_rng_below(&r, (uint64_t)rows);
    float *gxs = bk_copy(gpu, xs, (size_t)rows * xw * 4);
    float *gys = bk_copy(gpu, ys, (size_t)rows * yw * 4);
    int32_t *gidx = bk_copy(gpu, idx, sizeof idx);
    float *gx = bk_poison(gpu, (size_t)n * xw), *gy = bk_poison(gpu, (size_t)n * yw);
    for (int pass = 0; pass < 2; pass++) {     /* by index, then rows 1234.. in order */
        for (int i = 0; i < n; i++) {
            size_t row = pass ? (size_t)(1234 + i) : (size_t)idx[i];
            memcpy(x_ref + (size_t)i * xw, xs + row * xw, xw * 4);
            memcpy(y_ref + (size_t)i * yw, ys + row * yw, yw * 4);
        }
        expect_ok(gpu, gpu->ops->gather_rows(gpu, n, pass ? NULL : gidx, pass ? 1234 : 0, gxs, xw,
                                             gx, gys, yw, gy), "gather_rows");
        bk_read(gpu, x, gx, (size_t)n * xw * 4);
        bk_read(gpu, y, gy, (size_t)n * yw * 4);
        assert_memory_equal(x_ref, x, (size_t)n * xw * 4);
        assert_memory_equal(y_ref, y, (size_t)n * yw * 4);
    }
    bk_free(gpu, gxs); bk_free(gpu, gys); bk_free(gpu, gidx); bk_free(gpu, gx); bk_free(gpu, gy);
    free(xs); free(ys); free(x_ref); free(y_ref); free(x); free(y);
}

/* The replay contract of backend.h: a recorded step replayed runs as the step
 * set_step gave last (its dropout counter that step's base plus the offset
 * recorded, its t that step's); a step run eagerly in between needs nothing
 * but its own set_step. */
static void test_graph_replay(void **state)
{
    parity_fixture *f = *state;
    nn_backend *gpu = &f->tested[0], *ref = &f->ref;
    if (!gpu->ops->graph_begin) {
        skip();
        return;
    }
    assert_non_null(gpu->ops->set_step);         /* graphs need the step's values */
    nn_rng r;
    nn_rng_seed(&r, case_seed(f->seed, 21, 0));
    const size_t n = 50000;
    const uint64_t dseed = 99, step0 = 5, layer = 2, stride = 64;   /* any stride: the caller's */
    const float p = 0.3f;
    const parity_tol tol = f->spec->elementwise;
    nn_sgd_hyper h = { .lr = 0.01f, .momentum = 0.9f, .dampening = 0.1f };
    float *x = fbuf(n), *grad = fbuf(n), *w_ref = fbuf(n), *v_ref = fbuf(n), *y_ref = fbuf(n);
    fill(&r, x, n, -1, 1);
    fill(&r, grad, n, -1, 1);
    fill(&r, w_ref, n, -1, 1);
    memset(v_ref, 0, n * 4);
    float *gx = bk_copy(gpu, x, n * 4), *gg = bk_copy(gpu, grad, n * 4);
    float *gw = bk_copy(gpu, w_ref, n * 4), *gv = bk_copy(gpu, v_ref, n * 4);
    float *gy = bk_poison(gpu, n);

    nn_step_values sv = { .dropout_base = step0 * stride, .opt_t = 1 };
    expect_ok(gpu, gpu->ops->set_step(gpu, &sv), "set_step");
    expect_ok(gpu, gpu->ops->graph_begin(gpu, 0), "graph_begin");
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
        expect_ok(ref, ref->ops->dropout_forward(ref, n, p, dseed, counter, x, y_ref),
                  "dropout_forward");
        expect_ok(ref, ref->ops->sgd_step(ref, n, w_ref, grad, v_ref, &h, k + 1), "sgd_step");
        char shape[64];
        snprintf(shape, sizeof shape, "replay %ld of a dropout + sgd step", k);
        expect_close_bk(gpu, "replayed dropout", shape, 0, y_ref, gy, n, PARITY_EXACT);
        expect_close_bk(gpu, "replayed sgd param", shape, 0, w_ref, gw, n, tol);
        expect_close_bk(gpu, "replayed sgd velocity", shape, 0, v_ref, gv, n, tol);
    }
    gpu->ops->graph_drop(gpu);
    bk_free(gpu, gx); bk_free(gpu, gg); bk_free(gpu, gw); bk_free(gpu, gv); bk_free(gpu, gy);
    free(x); free(grad); free(w_ref); free(v_ref); free(y_ref);
}

/* The capture modes of graph_begin: an allocation while recording (unsafe:
 * it synchronises) fails a strict recording and runs, unrecorded, in a
 * relaxed one. The engine retries a failed strict recording relaxed. */
static void test_graph_capture_modes(void **state)
{
    parity_fixture *f = *state;
    nn_backend *gpu = &f->tested[0];
    void *p = NULL;
    expect_ok(gpu, gpu->ops->graph_begin(gpu, 0), "graph_begin (strict)");
    int alloc_rc = gpu->ops->alloc(gpu, 4096, &p);
    int end_rc = gpu->ops->graph_end(gpu);
    print_message("# strict: alloc %d, graph_end %d: %s\n", alloc_rc, end_rc, gpu->last_error);
    assert_true(alloc_rc != 0 || end_rc != 0);
    gpu->ops->graph_drop(gpu);
    if (p)
        gpu->ops->free(gpu, p);
    p = NULL;
    expect_ok(gpu, gpu->ops->graph_begin(gpu, 1), "graph_begin (relaxed)");
    expect_ok(gpu, gpu->ops->alloc(gpu, 4096, &p), "alloc while recording relaxed");
    expect_ok(gpu, gpu->ops->graph_end(gpu), "graph_end (relaxed)");
    gpu->ops->graph_drop(gpu);
    gpu->ops->free(gpu, p);
    expect_ok(gpu, gpu->ops->synchronize(gpu), "synchronize");
}

/* ---- convolution plans: tried before recording, pinned while recorded --------------------- */

/* A backend opened with NNLAB_GPU_INJECT=faults (a fault on purpose). */
static void open_injected(nn_backend *b, const char *faults)
{
    nn_backend_config cfg = { .tf32 = 0 };
    setenv("NNLAB_GPU_INJECT", faults, 1);
    int rc = nn_backend_open(b, nn_backend_find("gpu"), &cfg);
    unsetenv("NNLAB_GPU_INJECT");
    if (rc != 0)
        fail_msg("opening gpu with NNLAB_GPU_INJECT=%s: %s", faults, b->last_error);
}

/* PyTorch's try-all: when cuDNN's first candidate of each direction fails,
 * the next one runs and the numbers are still cpu-ref's; when every one
 * fails, the call says so. */
static void test_conv_try_all(void **state)
{
    parity_fixture *f = *state, g = *f;
    nn_conv_geom geom = conv_geom(8, 3, 32, 32, 6, 5, 1, 0);   /* LeNet's first */
    open_injected(&g.tested[0], "algo-first");
    parity_conv_case(&g, 0, case_seed(f->seed, 22, 0), &geom, 1, 1);
    nn_backend_close(&g.tested[0]);

    open_injected(&g.tested[0], "algo-all");
    nn_backend *b = &g.tested[0];
    size_t ws_bytes = 0, nx = 8 * 3 * 32 * 32, nw = 6 * 3 * 5 * 5, ny = 8 * 6 * 28 * 28;
    expect_ok(b, b->ops->conv2d_workspace(b, &geom, &ws_bytes), "conv2d_workspace");
    void *ws = bk_alloc(b, ws_bytes);
    float *x = bk_poison(b, nx), *w = bk_poison(b, nw), *y = bk_poison(b, ny);
    b->last_error[0] = '\0';
    assert_int_equal(b->ops->conv2d_forward(b, &geom, x, w, NULL, y, ws), -1);
    print_message("# %s\n", b->last_error);
    assert_non_null(strstr(b->last_error, "forward algorithms ran"));
    bk_free(b, ws); bk_free(b, x); bk_free(b, w); bk_free(b, y);
    nn_backend_close(b);
}

/* Buffers of one convolution geometry in GPU memory, random inputs. */
typedef struct conv_bufs {
    nn_conv_geom g;
    size_t nx, nw, ny;
    float *x, *w, *dy, *y, *dw;
    void *ws;
} conv_bufs;

static void conv_bufs_make(nn_backend *b, nn_rng *r, const nn_conv_geom *g, conv_bufs *c)
{
    c->g = *g;
    c->nx = (size_t)g->n * g->c_in * g->h_in * g->w_in;
    c->nw = (size_t)g->c_out * g->c_in * g->k_h * g->k_w;
    c->ny = (size_t)g->n * g->c_out * g->h_out * g->w_out;
    float *h = fbuf(c->nx + c->nw + c->ny);
    fill(r, h, c->nx + c->nw + c->ny, -1, 1);
    c->x = bk_copy(b, h, c->nx * 4);
    c->w = bk_copy(b, h + c->nx, c->nw * 4);
    c->dy = bk_copy(b, h + c->nx + c->nw, c->ny * 4);
    c->y = bk_poison(b, c->ny);
    c->dw = bk_poison(b, c->nw);
    size_t ws_bytes = 0;
    expect_ok(b, b->ops->conv2d_workspace(b, g, &ws_bytes), "conv2d_workspace");
    c->ws = bk_alloc(b, ws_bytes);
    free(h);
}

static void conv_bufs_free(nn_backend *b, conv_bufs *c)
{
    void *p[] = { c->x, c->w, c->dy, c->y, c->dw, c->ws };
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        bk_free(b, p[i]);
}

/* forward and the weight gradient of c, run or recorded */
static int conv_step(nn_backend *b, conv_bufs *c)
{
    return b->ops->conv2d_forward(b, &c->g, c->x, c->w, NULL, c->y, c->ws) != 0 ||
           b->ops->conv2d_backward(b, &c->g, c->x, c->w, c->dy, NULL, c->dw, NULL, c->ws) != 0;
}

/* A convolution is recorded only after it ran once (its plan made and its
 * algorithms tried outside the recording), and the plans a recording uses
 * are pinned: more geometries than the plan table holds, run eagerly
 * between, evict none of them, and the replay still gives the eager
 * numbers. */
static void test_conv_plans_and_recording(void **state)
{
    parity_fixture *f = *state;
    nn_backend *gpu = &f->tested[0];
    nn_rng r;
    nn_rng_seed(&r, case_seed(f->seed, 23, 0));
    conv_bufs c;
    nn_conv_geom g = conv_geom(3, 2, 9, 13, 4, 3, 1, 1);
    conv_bufs_make(gpu, &r, &g, &c);

    /* planned (conv2d_workspace) but never run: the recording refuses it */
    expect_ok(gpu, gpu->ops->graph_begin(gpu, 0), "graph_begin");
    gpu->last_error[0] = '\0';
    assert_int_not_equal(conv_step(gpu, &c), 0);
    print_message("# %s\n", gpu->last_error);
    assert_non_null(strstr(gpu->last_error, "run the step once eagerly"));
    gpu->ops->graph_end(gpu);       /* nothing was recorded: either way, dropped */
    gpu->ops->graph_drop(gpu);

    /* run once, record, then 70 other geometries eagerly */
    expect_ok(gpu, conv_step(gpu, &c) ? -1 : 0, "conv eagerly");
    float *y0 = fbuf(c.ny), *dw0 = fbuf(c.nw);
    bk_read(gpu, y0, c.y, c.ny * 4);
    bk_read(gpu, dw0, c.dw, c.nw * 4);
    expect_ok(gpu, gpu->ops->graph_begin(gpu, 0), "graph_begin");
    int rec_rc = conv_step(gpu, &c);
    expect_ok(gpu, gpu->ops->graph_end(gpu), "graph_end");
    assert_int_equal(rec_rc, 0);
    for (int k = 0; k < 70; k++) {
        conv_bufs o;
        nn_conv_geom og = conv_geom(1, 1, 4, 4 + k, 1, 3, 1, 0);
        conv_bufs_make(gpu, &r, &og, &o);
        expect_ok(gpu, conv_step(gpu, &o) ? -1 : 0, "another geometry eagerly");
        conv_bufs_free(gpu, &o);
    }
    expect_ok(gpu, gpu->ops->zero(gpu, c.y, c.ny * 4), "zero");    /* the replay writes them again */
    expect_ok(gpu, gpu->ops->zero(gpu, c.dw, c.nw * 4), "zero");
    expect_ok(gpu, gpu->ops->graph_launch(gpu), "graph_launch");
    /* the same algorithms: y exactly; dw too unless the one that ran adds
     * with atomics, so within the tolerance of a sum over the batch */
    expect_close_bk(gpu, "replayed conv y", "n=3 c_in=2 9x13 k3 pad 1", 0, y0, c.y, c.ny,
                    PARITY_EXACT);
    expect_close_bk(gpu, "replayed conv dw", "n=3 c_in=2 9x13 k3 pad 1", 0, dw0, c.dw, c.nw,
                    f->spec->reduction);
    gpu->ops->graph_drop(gpu);

    /* still planned and tried: recording it again needs no eager run */
    expect_ok(gpu, gpu->ops->graph_begin(gpu, 0), "graph_begin");
    rec_rc = conv_step(gpu, &c);
    expect_ok(gpu, gpu->ops->graph_end(gpu), "graph_end after the evictions");
    assert_int_equal(rec_rc, 0);
    gpu->ops->graph_drop(gpu);
    conv_bufs_free(gpu, &c);
    free(y0); free(dw0);
}

/* ---- timing ---------------------------------------------------------------------------------- */

/* Timing never makes the host wait: with more steps marked than the ring
 * holds and none collected, the extra steps go untimed (no wait, no sync),
 * and collecting afterwards finds fewer steps than were marked. */
static void test_timing_never_waits(void **state)
{
    parity_fixture *f = *state;
    nn_backend *b = &f->tested[0];
    double us[NN_TIMING_MARKS] = { 0 };
    long n[NN_TIMING_MARKS] = { 0 };
    nn_backend_counters c0, c1;
    expect_ok(b, b->ops->timing_collect(b, 1, us, n) < 0 ? -1 : 0, "timing_collect");
    memset(n, 0, sizeof n);
    b->ops->counters(b, &c0);
    for (int i = 0; i < 300; i++)
        if (b->ops->timing_mark(b, 0) != 0 || b->ops->timing_mark(b, 1) != 0)
            fail_msg("timing_mark: %s", b->last_error);
    b->ops->counters(b, &c1);
    int k = b->ops->timing_collect(b, 1, us, n);
    print_message("# 300 steps marked, %d timed, %llu waits while marking\n", k,
                  (unsigned long long)(c1.syncs - c0.syncs));
    assert_int_equal(c1.syncs, c0.syncs);
    assert_true(k > 0 && k < 300);
    assert_int_equal(n[1], k);
    /* once collected, steps are timed again */
    expect_ok(b, b->ops->timing_mark(b, 0), "timing_mark");
    expect_ok(b, b->ops->timing_mark(b, 1), "timing_mark");
    assert_int_equal(b->ops->timing_collect(b, 1, us, n), 1);
}

/* ---- errors ------------------------------------------------------------------------------- */

/* The errors only a device has (the suite checks the rest). */
static void test_device_errors(void **state)
{
    parity_fixture *f = *state;
    nn_backend *b = &f->tested[0];
    float *d = bk_poison(b, 64);

    /* out of memory names the size and what was free */
    void *huge = NULL;
    b->last_error[0] = '\0';
    assert_int_equal(b->ops->alloc(b, (size_t)1 << 50, &huge), -1);
    assert_null(huge);
    print_message("# %s\n", b->last_error);
    assert_non_null(strstr(b->last_error, "free"));

    /* a label out of range is found on the device and reported by the next wait */
    int32_t labels[4] = { 0, 1, 7, 2 };
    int32_t *gl = bk_copy(b, labels, sizeof labels);
    float *st = bk_poison(b, 2);
    expect_ok(b, b->ops->zero(b, st, 8), "zero");
    expect_ok(b, b->ops->softmax_xent(b, 4, 3, d, gl, NULL, st), "softmax_xent (launch)");
    b->last_error[0] = '\0';
    assert_int_equal(b->ops->synchronize(b), -1);
    print_message("# %s\n", b->last_error);
    assert_non_null(strstr(b->last_error, "label 7"));
    expect_ok(b, b->ops->synchronize(b), "synchronize after the report");   /* reported once */
    bk_free(b, gl);
    bk_free(b, st);
    bk_free(b, d);

    /* a tensor beyond cuDNN's 2^31 elements: refused by the workspace query
     * (before any step), with the batch that fits, not reported as 0 bytes */
    nn_conv_geom g = { .n = 456523, .c_in = 3, .h_in = 32, .w_in = 32, .c_out = 6, .h_out = 28,
                       .w_out = 28, .k_h = 5, .k_w = 5, .stride_h = 1, .stride_w = 1 };
    size_t ws = 1;
    b->last_error[0] = '\0';
    assert_int_equal(b->ops->conv2d_workspace(b, &g, &ws), -1);
    assert_int_equal(ws, 0);
    print_message("# %s\n", b->last_error);
    assert_non_null(strstr(b->last_error, "a batch of at most 456522 fits"));
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

/* A test fixture, looked for in NNLAB_FIXTURES_DIR first (a bundle away from
 * the source tree). */
static void load_fixture(const char *name, nn_preset *p)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    const char *dir = getenv("NNLAB_FIXTURES_DIR");
    snprintf(path, sizeof path, "%s/%s.ini", dir && *dir ? dir : FIXTURES_DIR, name);
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
static void curve_of(const char *preset, nn_preset *loaded)
{
    nn_preset p = *loaded;
    nn_job_config cfg;
    nn_loss_point a[64], b[64];
    nn_snapshot sa, sb;
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

static void curve_case(const char *preset)
{
    nn_preset p;
    load_shipped(preset, &p);
    curve_of(preset, &p);
}

/* A graph network (tests/fixtures/graph-net.ini: a branch, a shared weight,
 * a tensor read by several layers; add, mul, slice): gradients summed on the
 * device (accumulate), recorded in a CUDA graph like the rest. */
static void test_curve_graph_net(void **state)
{
    nn_preset p;
    (void)state;
    load_fixture("graph-net", &p);
    curve_of("graph-net", &p);
}

/* TabNet's single-input layers (tests/fixtures/tab-layers.ini): ghost batch
 * norm's running statistics as state, sparsemax's loss term added on the
 * device, validated in eval mode each epoch of 8 steps, as a graph: the same
 * curve and validation loss as cpu-ref. */
static void test_curve_tab_layers(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    nn_loss_point a[64], b[64];
    nn_snapshot sa, sb;
    load_fixture("tab-layers", &p);
    nn_job_config_init(&cfg, &p);
    cfg.steps = 80;
    cfg.log_every = 4;
    cfg.seed = 13;
    strcpy(cfg.device, "cpu-ref");
    long na = run_job(&cfg, a, 64, &sa);
    strcpy(cfg.device, "gpu");
    long nb = run_job(&cfg, b, 64, &sb);
    assert_true(na >= 20);
    expect_same_curve("tab-layers, cpu-ref vs gpu", a, na, b, nb, 1e-3, 2e-3);
    assert_float_equal(sa.last_epoch.val_loss, sb.last_epoch.val_loss,
                       1e-3 + 2e-3 * sa.last_epoch.val_loss);
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

/* A graph job runs its first full batch eagerly and records the second (so
 * that cuDNN and cuBLAS initialise outside the recording); a strict
 * recording that fails is retried relaxed, and when both fail the job runs
 * eagerly; the note says which. The numbers are the eager ones throughout. */
static void test_graph_warmup_and_fallbacks(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    nn_loss_point base[16], pts[16];
    nn_snapshot s0, s;
    load_shipped("lenet-cifar10", &p);
    nn_job_config_init(&cfg, &p);
    strcpy(cfg.device, "gpu");
    cfg.batch = 32;
    cfg.steps = 4;
    cfg.log_every = 1;
    cfg.seed = 3;
    cfg.no_validation = 1;
    cfg.bench = 1;                   /* every step timed and counted */
    cfg.warmup = 0;
    cfg.graph = 0;
    long n0 = run_job(&cfg, base, 16, &s0);
    cfg.graph = 1;
    long n = run_job(&cfg, pts, 16, &s);
    print_message("# graph: %.2f launches of the graph per step, note \"%s\"\n",
                  s.per_step.graph_launches, s.note);
    assert_int_equal(s.graph, 1);
    assert_string_equal(s.note, "");
    assert_true(fabs(s.per_step.graph_launches - 0.75) < 1e-9);   /* steps 2, 3, 4 */
    expect_same_curve("eager vs graph", base, n0, pts, n, 1e-6, 1e-5);

    setenv("NNLAB_GPU_INJECT", "capture-strict", 1);
    n = run_job(&cfg, pts, 16, &s);
    unsetenv("NNLAB_GPU_INJECT");
    print_message("# strict recordings refused: note \"%s\"\n", s.note);
    assert_int_equal(s.graph, 1);
    assert_non_null(strstr(s.note, "relaxed capture mode"));
    expect_same_curve("eager vs graph recorded relaxed", base, n0, pts, n, 1e-6, 1e-5);

    setenv("NNLAB_GPU_INJECT", "capture", 1);
    n = run_job(&cfg, pts, 16, &s);
    unsetenv("NNLAB_GPU_INJECT");
    print_message("# every recording refused: note \"%s\"\n", s.note);
    assert_int_equal(s.graph, 0);
    assert_non_null(strstr(s.note, "no CUDA graph"));
    assert_non_null(strstr(s.note, "relaxed"));
    assert_true(s.per_step.graph_launches == 0.0);
    expect_same_curve("eager vs no graph after two refusals", base, n0, pts, n, 1e-6, 1e-5);
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

/* A race beside the emulated GPU shares this machine's cores (its kernels
 * run on them); beside a real GPU it does not: the status says which. */
static void test_on_host_cores(void **state)
{
    nn_device_status st;
    const char *emu = getenv("NNLAB_GPU_EMULATION");
    (void)state;
    assert_int_equal(nn_device_status_of("gpu", &st), 0);
    assert_false(st.host_memory);
    assert_int_equal(st.on_host_cores, emu && *emu ? 1 : 0);
}

/* The Jacobian job: every method on the GPU against finite
 * differences and each other (rows replaying its recorded group of reverse
 * passes), and the same J as cpu-ref from the same seed. */
static void test_jacobian_methods(void **state)
{
    nn_jac_result g, ref;
    (void)state;
    jac_check_device("gpu", 6);
    jac_check_run("gpu", 9, NN_JAC_ROWS, 1, &g);
    if (!jac_check_last.graph)
        fail_msg("rows on the GPU did not replay a graph: %s", jac_check_last.note);
    jac_check_run("cpu-ref", 9, NN_JAC_ROWS, 0, &ref);
    assert_true(nn_jac_max_diff(&g, &ref) <= 1e-5);
    nn_jac_result_free(&g);
    nn_jac_result_free(&ref);
}

/* When the GPU cannot be tested: a skip when there is none here, a failure
 * when there is one that cannot be used or when NNLAB_REQUIRE_GPU=1 says
 * that this machine must have one. In TAP: a plan of no tests with a SKIP
 * directive skips the whole file; one case "not ok" fails it. */
static int no_gpu(char *why, const char *failure)
{
    const char *req = getenv("NNLAB_REQUIRE_GPU");
    int required = req && *req && strcmp(req, "0") != 0;
    for (char *c = why; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '#')
            *c = ' ';
    if (failure) {
        printf("1..1\nnot ok 1 - %s: %s\n", failure, why);
        return 1;
    }
    if (required) {
        printf("1..1\nnot ok 1 - no GPU, and NNLAB_REQUIRE_GPU=%s requires one: %s\n", req, why);
        return 1;
    }
    printf("1..0 # SKIP no GPU: %s\n", why);
    return 0;
}

int main(void)
{
    char why[NN_BACKEND_ERROR_LEN];
    const nn_backend_ops *gpu = nn_backend_find_why("gpu", why, sizeof why);
    if (!gpu) {
#ifdef NN_GPU_MODULE_BUILT
        return no_gpu(why, "this build's GPU module cannot be loaded");
#else
        return no_gpu(why, NULL);   /* no module: configured without CUDA */
#endif
    }
    int rc = gpu->probe ? gpu->probe(why, sizeof why) : 0;
    if (rc != 0)
        return no_gpu(why, rc == NN_PROBE_UNUSABLE ? "a GPU is here but cannot be used" : NULL);
    const struct CMUnitTest tests[] = {
        PARITY_SUITE_TESTS,
        cmocka_unit_test(test_pinned),
        cmocka_unit_test(test_gather_rows),
        cmocka_unit_test(test_graph_replay),
        cmocka_unit_test(test_graph_capture_modes),
        cmocka_unit_test(test_conv_try_all),
        cmocka_unit_test(test_conv_plans_and_recording),
        GPU_CONV_CHOICE_TESTS,
        cmocka_unit_test(test_timing_never_waits),
        cmocka_unit_test(test_device_errors),
        cmocka_unit_test(test_curve_lenet_cifar10),
        cmocka_unit_test(test_curve_mnist_mlp_128),
        cmocka_unit_test(test_curve_graph_net),
        cmocka_unit_test(test_curve_tab_layers),
        cmocka_unit_test(test_switches_same_numbers),
        cmocka_unit_test(test_graph_warmup_and_fallbacks),
        cmocka_unit_test(test_step_accounting),
        cmocka_unit_test(test_on_host_cores),
        cmocka_unit_test(test_jacobian_methods),
    };
    return cmocka_run_group_tests(tests, group_setup, parity_group_teardown);
}
