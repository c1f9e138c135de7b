/* src/analysis/calibrate.c - measures a device through its op table; see calibrate.h.
 * Each figure is the best of a few repetitions: the machines are shared and
 * noisy, and the best run is the closest to what the hardware can do; how
 * far the repetitions of the main figures varied is kept as their spread
 * (calibration_quality.c judges it). The rate curves and the per-element
 * costs are calibrate_sizes.c; the cache file is calibration_cache.c. */
#define _POSIX_C_SOURCE 200809L
#include "nnlab/calibrate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "calibrate_internal.h"
#include "util.h"
#include "xdg.h"

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
    /* a device's first product pays its library's start-up: untimed */
    if (!b->ops->host_memory && (b->ops->linear_forward(b, GEMM_N, GEMM_N, GEMM_N, c->x, c->w, NULL, c->y) != 0 ||
                                 b->ops->synchronize(b) != 0))
        return -1;
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
    if (b->ops->graph_begin(b, 0) != 0)
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
        rc = nn_cal_linear_curves(b, &c, out);
    }
    if (rc == 0) {
        report(progress, ctx, 0.6, "convolutions by size");
        rc = nn_cal_conv_curves(b, &c, out);
    }
    if (rc == 0) {
        report(progress, ctx, 0.8, "elementwise operations");
        rc = nn_cal_elem_costs(b, &c, out);
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
    char conv_cache[NN_PATH_LEN];
    /* the fastest convolution algorithms (the default), from the same cache
     * file as a training job's, so that a calibration times them once */
    nn_backend_config cfg = { .threads = threads };
    if (nn_xdg_dir(NN_XDG_CACHE, "conv-algorithms.txt", conv_cache, sizeof conv_cache) == 0)
        cfg.conv_cache_path = conv_cache;
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
