/* src/analysis/calibrate.c - measures a device through its op table; see calibrate.h.
 * Each figure is the best of a few repetitions: the machines are shared and
 * noisy, and the best run is the closest to what the hardware can do; how
 * far the repetitions of the main figures varied is kept as their spread
 * (calibration_quality.c judges it). The cache file is calibration_cache.c. */
#define _POSIX_C_SOURCE 200809L
#include "nnlab/calibrate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "util.h"

#define GEMM_N 1024                  /* sgemm side: 2.1 GFLOP a call */
#define STREAM_FLOATS (8u << 20)     /* 32 MiB in, 32 MiB out: far beyond any cache */
#define UPLOAD_BYTES (64u << 20)
#define REPEAT 5

typedef struct bench_ctx {
    nn_backend *b;
    float *x, *y, *w;                /* device buffers */
    void *host;                      /* UPLOAD_BYTES of host memory */
} bench_ctx;

/* ---- repetitions ------------------------------------------------------------ */

/* The times of a measurement's repetitions: its figure is the best, its
 * spread the median over the best, less one (with two, the slower over
 * the faster). */
typedef struct reps {
    int n;
    double t[REPEAT];
} reps;

static void reps_add(reps *r, double t)
{
    if (r->n < REPEAT)
        r->t[r->n++] = t;
}

static double reps_best(const reps *r)
{
    double best = r->t[0];
    for (int i = 1; i < r->n; i++)
        if (r->t[i] < best)
            best = r->t[i];
    return best;
}

static double reps_spread(const reps *r)
{
    double s[REPEAT];
    if (r->n < 2)
        return 0;
    memcpy(s, r->t, (size_t)r->n * sizeof s[0]);
    for (int i = 1; i < r->n; i++)       /* insertion sort: five values */
        for (int j = i; j > 0 && s[j] < s[j - 1]; j--) {
            double x = s[j];
            s[j] = s[j - 1];
            s[j - 1] = x;
        }
    return s[0] > 0 ? s[r->n / 2] / s[0] - 1.0 : 0;
}

/* ---- the measurements ------------------------------------------------------ */

static int gemm_gflops(nn_backend *b, const bench_ctx *c, double *out, double *spread)
{
    reps r = { 0 };
    double spent = 0;
    /* a slow device (the reference loops) gets fewer repetitions */
    for (int k = 0; k < REPEAT && spent < 1.0; k++) {
        double t0 = nn_now();
        if (b->ops->linear_forward(b, GEMM_N, GEMM_N, GEMM_N, c->x, c->w, NULL, c->y) != 0 ||
            b->ops->synchronize(b) != 0)
            return -1;
        double dt = nn_now() - t0;
        spent += dt;
        reps_add(&r, dt);
    }
    *out = 2.0 * GEMM_N * GEMM_N * (double)GEMM_N / reps_best(&r) * 1e-9;
    *spread = reps_spread(&r);
    return 0;
}

static int stream_gbps(nn_backend *b, const bench_ctx *c, double *out, double *spread)
{
    reps r = { 0 };
    for (int k = 0; k < REPEAT; k++) {
        double t0 = nn_now();
        if (b->ops->act_forward(b, NN_ACT_RELU, STREAM_FLOATS, c->x, c->y) != 0 || b->ops->synchronize(b) != 0)
            return -1;
        reps_add(&r, nn_now() - t0);
    }
    *out = 2.0 * STREAM_FLOATS * sizeof(float) / reps_best(&r) * 1e-9;
    *spread = reps_spread(&r);
    return 0;
}

/* Mean time of `count` tiny operations issued back to back (and, with sync,
 * each followed by a synchronise). */
static int tiny_op_us(nn_backend *b, const bench_ctx *c, int sync, double *out, double *spread)
{
    const int count = 2000;
    reps r = { 0 };
    for (int k = 0; k < REPEAT; k++) {
        double t0 = nn_now();
        for (int i = 0; i < count; i++)
            if (b->ops->act_forward(b, NN_ACT_RELU, 1, c->x, c->y) != 0 ||
                (sync && b->ops->synchronize(b) != 0))
                return -1;
        if (b->ops->synchronize(b) != 0)
            return -1;
        reps_add(&r, (nn_now() - t0) / count);
    }
    *out = reps_best(&r) * 1e6;
    *spread = reps_spread(&r);
    return 0;
}

/* Mean seconds of one copy of `bytes` from host memory src, `count` copies
 * back to back and one synchronise (an upload from page-locked memory is
 * asynchronous: the synchronise is where its time shows). */
static int upload_cost(nn_backend *b, const bench_ctx *c, const void *src, size_t bytes, int count,
                       double *out_s)
{
    double best = 1e30;
    for (int r = 0; r < REPEAT; r++) {
        double t0 = nn_now();
        for (int i = 0; i < count; i++)
            if (b->ops->upload(b, c->x, src, bytes) != 0)
                return -1;
        if (b->ops->synchronize(b) != 0)
            return -1;
        double dt = (nn_now() - t0) / count;
        if (dt < best)
            best = dt;
    }
    *out_s = best;
    return 0;
}

/* A 4-byte download: the copy and the host's wait for it, which is what
 * reading the loss back every step costs. */
static int download_us(nn_backend *b, const bench_ctx *c, double *out)
{
    const int count = 1000;
    double best = 1e30;
    for (int r = 0; r < REPEAT; r++) {
        double t0 = nn_now();
        for (int i = 0; i < count; i++)
            if (b->ops->download(b, c->host, c->x, 4) != 0)
                return -1;
        double dt = (nn_now() - t0) / count;
        if (dt < best)
            best = dt;
    }
    *out = best * 1e6;
    return 0;
}

static double host_copy_gbps(void *dst, const void *src, double *spread)
{
    reps r = { 0 };
    for (int k = 0; k < REPEAT; k++) {
        double t0 = nn_now();
        memcpy(dst, src, UPLOAD_BYTES / 2);
        reps_add(&r, nn_now() - t0);
    }
    *spread = reps_spread(&r);
    return 2.0 * (UPLOAD_BYTES / 2) / reps_best(&r) * 1e-9;   /* read + write */
}

/* ---- optional slots: page-locked copies, graph replay ------------------------ */

static void add_note(nn_calibration *out, const char *what, const char *why)
{
    size_t used = strlen(out->note);
    snprintf(out->note + used, sizeof out->note - used, "%s%s: %s", used ? "; " : "", what, why);
}

/* Copies from page-locked memory, where the backend has it. A failure to get
 * such memory leaves has_pinned 0 with a note: pageable copies still work. */
static int measure_pinned(nn_backend *b, const bench_ctx *c, nn_calibration *out)
{
    void *pin = NULL;
    double small_s = 0, big_s = 1;
    if (!b->ops->host_alloc || !b->ops->host_free || !b->ops->host_wait)
        return 0;
    if (b->ops->host_alloc(b, UPLOAD_BYTES, &pin) != 0) {
        add_note(out, "no pinned figures", b->last_error);
        return 0;
    }
    int rc = upload_cost(b, c, pin, 4, 1000, &small_s) || upload_cost(b, c, pin, UPLOAD_BYTES, 2, &big_s) ||
             b->ops->host_wait(b, pin);
    b->ops->host_free(b, pin);
    if (rc != 0)
        return -1;
    out->has_pinned = 1;
    out->pinned_upload_us = small_s * 1e6;
    out->pinned_upload_gbps = UPLOAD_BYTES / big_s * 1e-9;
    return 0;
}

/* Records `nodes` tiny operations as a graph and returns the mean time of one
 * replay, replays issued back to back (the cost a replayed step pays). The
 * recording always ends dropped, so the backend is as it was. *recorded is 0
 * when the backend could not record (then last_error says why). */
static int graph_replay_us(nn_backend *b, const bench_ctx *c, int nodes, int *recorded, double *out)
{
    const int replays = 200;
    double best = 1e30;
    *recorded = 0;
    if (b->ops->graph_begin(b) != 0)
        return 0;
    int failed = 0;
    for (int i = 0; i < nodes && !failed; i++)
        failed = b->ops->act_forward(b, NN_ACT_RELU, 1, c->x, c->y) != 0;
    /* graph_end ends the recording even after a failed call, and keeps nothing then */
    if (b->ops->graph_end(b) != 0 || failed) {
        b->ops->graph_drop(b);
        return 0;
    }
    *recorded = 1;
    int rc = 0;
    for (int r = 0; r < REPEAT && rc == 0; r++) {
        double t0 = nn_now();
        for (int i = 0; i < replays && rc == 0; i++)
            rc = b->ops->graph_launch(b);
        if (rc == 0)
            rc = b->ops->synchronize(b);
        double dt = (nn_now() - t0) / replays;
        if (dt < best)
            best = dt;
    }
    b->ops->graph_drop(b);
    *out = best * 1e6;
    return rc;
}

/* Graph replay: a graph of GRAPH_SMALL and one of GRAPH_BIG tiny nodes; the
 * difference per node is the replay cost of a node, the rest the launch. A
 * backend that cannot record leaves has_graph 0 with a note, as the engine
 * then runs its steps eagerly. */
#define GRAPH_SMALL 1
#define GRAPH_BIG 129
static int measure_graph(nn_backend *b, const bench_ctx *c, nn_calibration *out)
{
    double small = 0, big = 0;
    int recorded = 0;
    if (!b->ops->graph_begin || !b->ops->graph_end || !b->ops->graph_launch || !b->ops->graph_drop)
        return 0;
    if (graph_replay_us(b, c, GRAPH_SMALL, &recorded, &small) != 0)
        return -1;
    if (recorded && graph_replay_us(b, c, GRAPH_BIG, &recorded, &big) != 0)
        return -1;
    if (!recorded) {
        add_note(out, "no graph figures", b->last_error);
        return 0;
    }
    out->has_graph = 1;
    out->graph_node_us = (big - small) / (GRAPH_BIG - GRAPH_SMALL);
    if (out->graph_node_us < 0)         /* noise on a shared machine */
        out->graph_node_us = 0;
    out->graph_launch_us = small - GRAPH_SMALL * out->graph_node_us;
    return 0;
}

/* ---- rate curves --------------------------------------------------------------- */

/* Linear layers of the presets, by FLOPs: conv1d-regression's first layer at
 * batch 1, LeNet's classifier at batch 4, the MNIST MLPs at batches 1, 4 and
 * 64, LeNet-5's first linear at 64; 1024^3 (the peak) is the last point. */
static const int linear_shapes[][3] = {       /* n, in, out */
    { 1, 84, 16 }, { 4, 400, 10 }, { 1, 784, 128 }, { 4, 784, 128 },
    { 64, 400, 120 }, { 64, 784, 128 }, { 64, 1000, 1000 },
};
#define N_LINEAR_SHAPES (int)(sizeof linear_shapes / sizeof linear_shapes[0])
/* LeNet's first convolution (3 -> 6 channels, 5x5, 32x32 images): few
 * output channels make its product the narrowest, the rate of a first
 * convolutional layer */
static const int conv_batches[] = { 1, 4, 16, 64, 256 };
#define N_CONV_BATCHES (int)(sizeof conv_batches / sizeof conv_batches[0])
/* A point takes about POINT_S; a call slower than SLOW_CALL_S ends its curve
 * there (a slow device, the reference loops, prices larger calls at the
 * largest rate measured). */
#define POINT_S 0.02
#define SLOW_CALL_S 0.25

typedef int (*call_fn)(nn_backend *b, const bench_ctx *c, const void *arg);

/* Seconds of one call in a stream of back-to-back calls (a GPU overlaps
 * issuing one with running the last), best of a few rounds. */
static int time_call(nn_backend *b, const bench_ctx *c, call_fn call, const void *arg, double *out_s)
{
    double t0 = nn_now();
    if (call(b, c, arg) != 0 || b->ops->synchronize(b) != 0)    /* warm-up, and a first estimate */
        return -1;
    double first = nn_now() - t0, best = first;
    if (first > SLOW_CALL_S) {
        *out_s = first;
        return 0;
    }
    int reps = (int)(POINT_S / 3 / (first > 1e-7 ? first : 1e-7));
    reps = reps < 1 ? 1 : reps > 2000 ? 2000 : reps;
    for (int r = 0; r < (first > POINT_S ? 1 : 3); r++) {
        t0 = nn_now();
        for (int i = 0; i < reps; i++)
            if (call(b, c, arg) != 0)
                return -1;
        if (b->ops->synchronize(b) != 0)
            return -1;
        double dt = (nn_now() - t0) / reps;
        if (dt < best)
            best = dt;
    }
    *out_s = best;
    return 0;
}

/* Buffers of the curves, carved from the context's: every operand of a call
 * in its own region (the op table forbids overlap). x and y hold 16 Mi
 * floats, w 1 Mi. */
#define REGION (4u << 20)            /* floats */

static int call_linear_fwd(nn_backend *b, const bench_ctx *c, const void *arg)
{
    const int *s = arg;
    return b->ops->linear_forward(b, s[0], s[1], s[2], c->x, c->w, c->y + 3 * REGION, c->y);
}

static int call_linear_bwd(nn_backend *b, const bench_ctx *c, const void *arg)
{
    const int *s = arg;
    return b->ops->linear_backward(b, s[0], s[1], s[2], c->x, c->w, c->y, c->x + REGION, c->y + REGION,
                                   c->y + 3 * REGION);
}

typedef struct conv_arg {
    nn_conv_geom g;
    void *ws;
} conv_arg;

static int call_conv_fwd(nn_backend *b, const bench_ctx *c, const void *arg)
{
    const conv_arg *a = arg;
    return b->ops->conv2d_forward(b, &a->g, c->x, c->w, c->w + 4096, c->y, a->ws);
}

static int call_conv_bwd(nn_backend *b, const bench_ctx *c, const void *arg)
{
    const conv_arg *a = arg;
    return b->ops->conv2d_backward(b, &a->g, c->x, c->w, c->y, c->x + REGION, c->y + REGION,
                                   c->y + REGION + 4096, a->ws);
}

/* One point: flops per call, and the rate of its work beyond the fixed cost
 * of a call. Noise can make a call look no slower than the 1x1x1 one; its
 * work is then taken as a tenth of the call. */
static void add_point(nn_rate_curve *curve, double flops, double call_s, double fixed_us)
{
    double work_us = call_s * 1e6 - fixed_us;
    if (work_us < 0.1 * call_s * 1e6)
        work_us = 0.1 * call_s * 1e6;
    curve->flops[curve->n] = flops;
    curve->gflops[curve->n] = flops / work_us * 1e-3;
    curve->n++;
}

static int linear_curves(nn_backend *b, const bench_ctx *c, nn_calibration *out)
{
    static const int one[3] = { 1, 1, 1 };
    double s;
    if (time_call(b, c, call_linear_fwd, one, &s) != 0)
        return -1;
    out->matrix_op_us = s * 1e6;
    for (int i = 0; i < N_LINEAR_SHAPES; i++) {
        const int *sh = linear_shapes[i];
        double macs = (double)sh[0] * sh[1] * sh[2], outs = (double)sh[0] * sh[2];
        if (time_call(b, c, call_linear_fwd, sh, &s) != 0)
            return -1;
        add_point(&out->linear_fwd, 2.0 * macs + outs, s, out->matrix_op_us);   /* as cost.c counts */
        int slow = s > SLOW_CALL_S;
        if (time_call(b, c, call_linear_bwd, sh, &s) != 0)
            return -1;
        add_point(&out->linear_bwd, 4.0 * macs + outs, s, out->matrix_op_us);
        if (slow || s > SLOW_CALL_S)
            return 0;
    }
    /* the peak, measured already */
    double peak_flops = 2.0 * GEMM_N * GEMM_N * (double)GEMM_N;
    add_point(&out->linear_fwd, peak_flops + (double)GEMM_N * GEMM_N,
              peak_flops / (out->gemm_gflops * 1e9) + out->matrix_op_us * 1e-6, out->matrix_op_us);
    return 0;
}

static int conv_curves(nn_backend *b, const bench_ctx *c, nn_calibration *out)
{
    for (int i = 0; i < N_CONV_BATCHES; i++) {
        conv_arg a = { .g = { .n = conv_batches[i], .c_in = 3, .h_in = 32, .w_in = 32, .c_out = 6,
                              .h_out = 28, .w_out = 28, .k_h = 5, .k_w = 5, .stride_h = 1, .stride_w = 1 } };
        double macs = (double)a.g.n * 6 * 784 * 75, outs = (double)a.g.n * 6 * 784, s_fwd = 0, s_bwd = 0;
        size_t ws = b->ops->conv2d_workspace(b, &a.g);
        if (b->ops->alloc(b, ws ? ws : 64, &a.ws) != 0)
            return -1;
        int rc = time_call(b, c, call_conv_fwd, &a, &s_fwd) || time_call(b, c, call_conv_bwd, &a, &s_bwd);
        b->ops->free(b, a.ws);
        if (rc != 0)
            return -1;
        add_point(&out->conv_fwd, 2.0 * macs + outs, s_fwd, out->matrix_op_us);
        add_point(&out->conv_bwd, 4.0 * macs + outs, s_bwd, out->matrix_op_us);   /* with dx */
        if (s_fwd > SLOW_CALL_S || s_bwd > SLOW_CALL_S)
            break;
    }
    return 0;
}

/* ---- per-element costs ---------------------------------------------------------- */

#define ELEMS NN_ELEM_CALIBRATION

typedef struct elem_arg {
    nn_op_class cls;
    int bwd;
} elem_arg;

/* 2x2 pooling of ELEMS inputs: 64 planes of 64 x 64; any other window: rows
 * of 16 in threes (conv1d-regression's pool) */
static nn_pool_geom pool_geom(nn_op_class cls)
{
    if (cls == NN_OP_POOL2X2)
        return (nn_pool_geom){ .n = 16, .c = 4, .h_in = 64, .w_in = 64, .h_out = 32, .w_out = 32,
                               .k_h = 2, .k_w = 2, .stride_h = 2, .stride_w = 2 };
    return (nn_pool_geom){ .n = ELEMS / 128, .c = 8, .h_in = 1, .w_in = 16, .h_out = 1, .w_out = 5,
                           .k_h = 1, .k_w = 3, .stride_h = 1, .stride_w = 3 };
}

/* One call of the op of class a->cls over ELEMS elements. Operands: x, y,
 * dy, dx in their own regions; labels (zeros: a valid class) after them. */
static int call_elem(nn_backend *b, const bench_ctx *c, const void *arg)
{
    const elem_arg *a = arg;
    float *x = c->x, *y = c->y, *dy = c->y + REGION, *dx = c->x + REGION, *v = c->x + 2 * REGION;
    const int32_t *labels = (const int32_t *)(c->y + 2 * REGION);
    static const nn_sgd_hyper sgd = { 0.001f, 0.9f, 0.0f, 0.0f, 0 };
    static const nn_adam_hyper adam = { 0.001f, 0.9f, 0.999f, 1e-8f, 0.0f };
    static const enum nn_act act[] = { [NN_OP_RELU] = NN_ACT_RELU, [NN_OP_TANH] = NN_ACT_TANH,
                                       [NN_OP_MISH] = NN_ACT_MISH };
    switch (a->cls) {
    case NN_OP_RELU: case NN_OP_TANH: case NN_OP_MISH:
        return a->bwd ? b->ops->act_backward(b, act[a->cls], ELEMS, x, y, dy, dx)
                      : b->ops->act_forward(b, act[a->cls], ELEMS, x, y);
    case NN_OP_DROPOUT:
        return a->bwd ? b->ops->dropout_backward(b, ELEMS, 0.2f, 1, 1, dy, dx)
                      : b->ops->dropout_forward(b, ELEMS, 0.2f, 1, 1, x, y);
    case NN_OP_POOL2X2: case NN_OP_POOL: {
        nn_pool_geom g = pool_geom(a->cls);
        return a->bwd ? b->ops->maxpool2d_backward(b, &g, x, y, dy, dx) : b->ops->maxpool2d_forward(b, &g, x, y);
    }
    case NN_OP_SOFTMAX_XENT:
        return b->ops->softmax_xent(b, ELEMS / 16, 16, x, labels, dx, v);
    case NN_OP_MSE:
        return b->ops->mse(b, ELEMS / 16, 16, x, y, dx, v);
    case NN_OP_SGD:
        return b->ops->sgd_step(b, ELEMS, x, y, v, &sgd, 2);
    case NN_OP_ADAM:
        return b->ops->adam_step(b, ELEMS, x, y, v, dx, &adam, 2);
    default:
        return 0;
    }
}

static int elem_costs(nn_backend *b, const bench_ctx *c, nn_calibration *out)
{
    if (b->ops->zero(b, c->y + 2 * REGION, ELEMS * sizeof(int32_t)) != 0)
        return -1;
    for (int k = NN_OP_RELU; k < NN_OP_CLASSES; k++) {
        int directions = k < NN_OP_SOFTMAX_XENT ? 2 : 1;   /* a loss or a step is one call */
        for (int d = 0; d < directions; d++) {
            elem_arg a = { (nn_op_class)k, d };
            double s;
            if (time_call(b, c, call_elem, &a, &s) != 0)
                return -1;
            out->elem_ns[k][d] = s * 1e9 / ELEMS;
        }
    }
    return 0;
}

/* ---- orchestration ------------------------------------------------------------ */

static int alloc_buffers(nn_backend *b, bench_ctx *c, char *err, size_t err_len)
{
    size_t big = UPLOAD_BYTES > STREAM_FLOATS * sizeof(float) ? UPLOAD_BYTES : STREAM_FLOATS * sizeof(float);
    size_t gemm = (size_t)GEMM_N * GEMM_N * sizeof(float);
    memset(c, 0, sizeof *c);
    c->b = b;
    if (b->ops->alloc(b, big, (void **)&c->x) != 0 || b->ops->alloc(b, big, (void **)&c->y) != 0 ||
        b->ops->alloc(b, gemm, (void **)&c->w) != 0)
        return nn_errorf(err, err_len, "calibrating %s: allocating %zu bytes: %s", b->ops->name, big,
                         b->last_error);
    c->host = nn_alloc_aligned(UPLOAD_BYTES);
    if (!c->host)
        return nn_errorf(err, err_len, "calibrating: out of host memory (%u bytes)", UPLOAD_BYTES);
    return 0;
}

static void free_buffers(bench_ctx *c)
{
    if (c->x)
        c->b->ops->free(c->b, c->x);
    if (c->y)
        c->b->ops->free(c->b, c->y);
    if (c->w)
        c->b->ops->free(c->b, c->w);
    nn_free_aligned(c->host);
}

static void report(nn_progress_fn progress, void *ctx, double f, const char *what)
{
    if (progress)
        progress(ctx, f, what);
}

/* The copies: pageable and page-locked uploads, a download. */
static int measure_copies(nn_backend *b, const bench_ctx *c, nn_calibration *out)
{
    double small_s = 0, big_s = 1;
    if (upload_cost(b, c, c->host, 4, 1000, &small_s) != 0 ||
        upload_cost(b, c, c->host, UPLOAD_BYTES, 2, &big_s) != 0)
        return -1;
    out->upload_us = small_s * 1e6;
    out->upload_gbps = UPLOAD_BYTES / big_s * 1e-9;
    return download_us(b, c, &out->download_us) || measure_pinned(b, c, out) ? -1 : 0;
}

/* Measures the opened backend b into out (all but the one-thread gemm). */
static int measure(nn_backend *b, nn_calibration *out, nn_progress_fn progress, void *ctx,
                   char *err, size_t err_len)
{
    bench_ctx c;
    int rc = alloc_buffers(b, &c, err, err_len);
    if (rc == 0) {
        report(progress, ctx, 0.05, "sgemm");
        rc = gemm_gflops(b, &c, &out->gemm_gflops, &out->spread[NN_SPREAD_GEMM]);
    }
    if (rc == 0) {
        report(progress, ctx, 0.15, "memory bandwidth");
        rc = stream_gbps(b, &c, &out->mem_gbps, &out->spread[NN_SPREAD_MEM]);
    }
    if (rc == 0) {
        report(progress, ctx, 0.2, "operation and synchronisation latency");
        rc = tiny_op_us(b, &c, 0, &out->op_us, &out->spread[NN_SPREAD_OP]) ||
             tiny_op_us(b, &c, 1, &out->sync_us, &out->spread[NN_SPREAD_SYNC]);
    }
    if (rc == 0) {
        report(progress, ctx, 0.25, "copies to and from the device");
        rc = measure_copies(b, &c, out);
    }
    if (rc == 0) {
        report(progress, ctx, 0.3, "graph replay");
        rc = measure_graph(b, &c, out);
    }
    if (rc == 0) {
        report(progress, ctx, 0.35, "linear layers by size");
        rc = linear_curves(b, &c, out);
    }
    if (rc == 0) {
        report(progress, ctx, 0.6, "convolutions by size");
        rc = conv_curves(b, &c, out);
    }
    if (rc == 0) {
        report(progress, ctx, 0.8, "elementwise operations");
        rc = elem_costs(b, &c, out);
    }
    if (rc == 0)
        out->host_copy_gbps = host_copy_gbps(c.host, (char *)c.host + UPLOAD_BYTES / 2,
                                             &out->spread[NN_SPREAD_HOST_COPY]);
    if (rc != 0 && err && !err[0])
        nn_errorf(err, err_len, "calibrating %s: %s", b->ops->name, b->last_error);
    free_buffers(&c);
    return rc ? -1 : 0;
}

/* sgemm on one thread: only meaningful where the thread count is a setting */
static int measure_one_thread(const nn_backend_ops *ops, nn_calibration *out, char *err, size_t err_len)
{
    nn_backend b;
    nn_backend_config one = { .threads = 1 };
    bench_ctx c;
    if (!ops->host_memory)
        return 0;
    if (nn_backend_open(&b, ops, &one) != 0)
        return nn_errorf(err, err_len, "calibrating %s: %s", ops->name, b.last_error);
    int rc = alloc_buffers(&b, &c, err, err_len);
    if (rc == 0 && gemm_gflops(&b, &c, &out->gemm_gflops_1thread, &out->spread[NN_SPREAD_GEMM_1THREAD]) != 0)
        rc = nn_errorf(err, err_len, "calibrating %s: %s", ops->name, b.last_error);
    free_buffers(&c);
    nn_backend_close(&b);
    return rc;
}

/* The threads the device ran with, which the quality rule compares the
 * one-thread sgemm against: what was asked (all cores for 0) on the CPU
 * device; the reference loops run one whatever is asked; 0 for a GPU. */
static int threads_used(const nn_backend_ops *ops, int threads)
{
    if (!ops->host_memory)
        return 0;
    if (!strcmp(ops->name, "cpu-ref"))
        return 1;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return threads > 0 ? threads : n > 0 ? (int)n : 1;
}

int nn_calibrate(const char *device, int threads, nn_calibration *out,
                 nn_progress_fn progress, void *ctx, char *err, size_t err_len)
{
    const nn_backend_ops *ops = nn_backend_find(device);
    nn_backend b;
    nn_backend_config cfg = { .threads = threads };
    if (err && err_len)
        err[0] = '\0';
    memset(out, 0, sizeof *out);
    if (!ops)
        return nn_errorf(err, err_len, "unknown device '%s'", device);
    nn_strlcpy(out->device, ops->name, sizeof out->device);
    nn_machine_description(out->machine, sizeof out->machine);
    out->created = (long long)time(NULL);
    out->threads = threads_used(ops, threads);
    if (nn_backend_open(&b, ops, &cfg) != 0)
        return nn_errorf(err, err_len, "device %s: %s", ops->name, b.last_error);
    int rc = measure(&b, out, progress, ctx, err, err_len);
    nn_backend_close(&b);
    if (rc == 0) {
        report(progress, ctx, 0.9, "sgemm on one thread");
        rc = measure_one_thread(ops, out, err, err_len);
    }
    report(progress, ctx, 1.0, "done");
    return rc;
}
