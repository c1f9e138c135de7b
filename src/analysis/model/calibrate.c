/* src/analysis/model/calibrate.c - measures a device through its op table; see calibrate.h.
 * Each figure is timed in batches long enough to dwarf a launch, on the
 * device's own clock where it has one (calibrate_timing.c), repeated, and
 * is the best repetition: the best run is the closest to what the hardware
 * can do; how far the repetitions varied is kept as its spread. Then every
 * figure is checked (calibration_quality.c: rates against the device's
 * peak, the fixed cost of a product against the smallest product, the
 * repetitions against each other); a figure that fails is measured once
 * more, and one that fails again leaves the calibration contradictory with
 * its reason. The rate curves and the per-element costs are
 * calibrate_sizes.c; the cache file is calibration_cache.c. */
#define _POSIX_C_SOURCE 200809L
#include "nnlab/calibrate.h"
#include "nnlab/device.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "calibrate_internal.h"
#include "calibrate_products.h"
#include "cpu/cpu_info.h"
#include "util.h"
#include "xdg.h"

/* ---- the calls the main figures time ------------------------------------------------- */

static int call_gemm(nn_backend *b, const bench_ctx *c, const void *arg)
{
    (void)arg;
    return b->ops->linear_forward(b, GEMM_N, GEMM_N, GEMM_N, c->x, c->w, NULL, c->y);
}

/* a relu over *(const size_t *)arg elements */
static int call_relu(nn_backend *b, const bench_ctx *c, const void *arg)
{
    return b->ops->act_forward(b, NN_ACT_RELU, *(const size_t *)arg, c->x, c->y);
}

/* a tiny relu and the host's wait for it: one round trip */
static int call_relu_sync(nn_backend *b, const bench_ctx *c, const void *arg)
{
    (void)arg;
    return b->ops->act_forward(b, NN_ACT_RELU, 1, c->x, c->y) || b->ops->synchronize(b) ? -1 : 0;
}

typedef struct copy_arg {
    const void *src;
    size_t bytes;
} copy_arg;

static int call_upload(nn_backend *b, const bench_ctx *c, const void *arg)
{
    const copy_arg *a = arg;
    return b->ops->upload(b, c->x, a->src, a->bytes);
}

/* 4 bytes back to the host: the copy and the host's wait for it, which is
 * what reading the loss back every step costs */
static int call_download(nn_backend *b, const bench_ctx *c, const void *arg)
{
    (void)arg;
    return b->ops->download(b, c->host, c->x, 4);
}

static int call_graph(nn_backend *b, const bench_ctx *c, const void *arg)
{
    (void)c;
    (void)arg;
    return b->ops->graph_launch(b);
}

static int call_host_copy(nn_backend *b, const bench_ctx *c, const void *arg)
{
    (void)b;
    (void)arg;
    memcpy(c->host, (const char *)c->host + UPLOAD_BYTES / 2, UPLOAD_BYTES / 2);
    return 0;
}

/* Device work on the device's clock; round trips (what the host waits for
 * is the figure) and host memcpy on the host's. */
static const nn_cal_timing on_device = { 0, REPEAT, 0 }, on_host = { 1, REPEAT, 0 };

/* ---- the main figures ---------------------------------------------------------------- */

static int measure_gemm(nn_backend *b, const bench_ctx *c, nn_calibration *out)
{
    double s;
    if (nn_cal_time(b, c, call_gemm, NULL, &on_device, &s, &out->spread[NN_SPREAD_GEMM]) != 0)
        return -1;
    out->gemm_gflops = 2.0 * GEMM_N * GEMM_N * (double)GEMM_N / s * 1e-9;
    return 0;
}

static int measure_stream(nn_backend *b, const bench_ctx *c, nn_calibration *out)
{
    static const size_t n = STREAM_FLOATS;
    double s;
    if (nn_cal_time(b, c, call_relu, &n, &on_device, &s, &out->spread[NN_SPREAD_MEM]) != 0)
        return -1;
    out->mem_gbps = 2.0 * STREAM_FLOATS * sizeof(float) / s * 1e-9;
    return 0;
}

/* Tiny operations issued back to back: on a GPU the device's clock sees
 * the pace at which the host issues them. */
static int measure_op(nn_backend *b, const bench_ctx *c, nn_calibration *out)
{
    static const size_t one = 1;
    double s;
    if (nn_cal_time(b, c, call_relu, &one, &on_device, &s, &out->spread[NN_SPREAD_OP]) != 0)
        return -1;
    out->op_us = s * 1e6;
    return 0;
}

static int measure_sync(nn_backend *b, const bench_ctx *c, nn_calibration *out)
{
    double s;
    if (nn_cal_time(b, c, call_relu_sync, NULL, &on_host, &s, &out->spread[NN_SPREAD_SYNC]) != 0)
        return -1;
    out->sync_us = s * 1e6;
    return 0;
}

static int measure_host_copy(nn_backend *b, const bench_ctx *c, nn_calibration *out)
{
    double s;
    if (nn_cal_time(b, c, call_host_copy, NULL, &on_host, &s, &out->spread[NN_SPREAD_HOST_COPY]) != 0)
        return -1;
    out->host_copy_gbps = 2.0 * (UPLOAD_BYTES / 2) / s * 1e-9;   /* read + write */
    return 0;
}

/* Seconds of one upload of `bytes` from src, uploads back to back: a
 * pageable copy makes the host wait (its clock), one from page-locked
 * memory is the device's work (its clock). */
static int upload_s(nn_backend *b, const bench_ctx *c, const void *src, size_t bytes, int pinned, double *out_s)
{
    copy_arg a = { src, bytes };
    double spread;
    return nn_cal_time(b, c, call_upload, &a, pinned ? &on_device : &on_host, out_s, &spread);
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
    int rc = upload_s(b, c, pin, 4, 1, &small_s) || upload_s(b, c, pin, UPLOAD_BYTES, 1, &big_s) ||
             b->ops->host_wait(b, pin);
    b->ops->host_free(b, pin);
    if (rc != 0)
        return -1;
    out->has_pinned = 1;
    out->pinned_upload_us = small_s * 1e6;
    out->pinned_upload_gbps = UPLOAD_BYTES / big_s * 1e-9;
    return 0;
}

/* Records `nodes` tiny operations as a graph and returns the time of one
 * replay, replays issued back to back (the cost a replayed step pays). The
 * recording always ends dropped, so the backend is as it was. *recorded is 0
 * when the backend could not record (then last_error says why). */
static int graph_replay_us(nn_backend *b, const bench_ctx *c, int nodes, int *recorded, double *out)
{
    double s = 0, spread;
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
    int rc = nn_cal_time(b, c, call_graph, NULL, &on_device, &s, &spread);
    b->ops->graph_drop(b);
    *out = s * 1e6;
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

/* The copies: pageable and page-locked uploads, a download. */
static int measure_copies(nn_backend *b, const bench_ctx *c, nn_calibration *out)
{
    double small_s = 0, big_s = 1, down_s = 0, spread;
    if (upload_s(b, c, c->host, 4, 0, &small_s) != 0 || upload_s(b, c, c->host, UPLOAD_BYTES, 0, &big_s) != 0 ||
        nn_cal_time(b, c, call_download, NULL, &on_host, &down_s, &spread) != 0)
        return -1;
    out->upload_us = small_s * 1e6;
    out->upload_gbps = UPLOAD_BYTES / big_s * 1e-9;
    out->download_us = down_s * 1e6;
    return measure_pinned(b, c, out);
}

/* ---- the device's peak ------------------------------------------------------------------ */

/* The bound the checks hold every rate to: the GPU's from its facts (the
 * backend's peak_gflops), the CPU's from cpu_info.h's FMA estimate a core x
 * the threads it ran on; 0 with a note when the device does not say. */
static void device_peak(nn_backend *b, nn_calibration *out)
{
    if (b->ops->host_memory) {
        nn_cpu_info ci;
        nn_cpu_info_read(&ci);
        int threads = out->threads > 0 ? out->threads : 1;
        /* the cores' own FMA loop (holds where cpuid's model does not), at the
         * widest vectors our kernels run: the AVX-512 convolution passes the
         * AVX2 loop's rate */
        double measured = nn_cpu_fma_peak_widest();
        if (measured > 0) {
            out->device_peak_gflops = measured * threads;
            snprintf(out->device_peak_how, sizeof out->device_peak_how,
                     "%d threads x %.1f GFLOP/s (one core's FMA loop at %s, measured)", threads, measured,
                     measured > nn_cpu_fma_peak_measured() ? "AVX-512" : "AVX2");
            return;
        }
        if (ci.peak_gflops_core <= 0)
            return;
        out->device_peak_gflops = ci.peak_gflops_core * threads;
        snprintf(out->device_peak_how, sizeof out->device_peak_how, "%d threads x %d FLOP/cycle x %.2f GHz",
                 threads, ci.flops_per_cycle, ci.clock_ghz);
    } else if (b->ops->peak_gflops) {
        if (b->ops->peak_gflops(b, &out->device_peak_gflops, out->device_peak_how, sizeof out->device_peak_how))
            add_note(out, "no peak from the device", b->last_error);
    }
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

typedef int (*figure_fn)(nn_backend *b, const bench_ctx *c, nn_calibration *out);

/* The figures in the order they are measured: the spread each keeps (the
 * unit a failed check measures again; -1: none, measured in the first pass
 * only), what the progress says, and where it is then. */
static const struct {
    int figure;
    const char *what;
    double at;
    figure_fn fn;
} figures[] = {
    { NN_SPREAD_GEMM, "sgemm", 0.05, measure_gemm },
    { NN_SPREAD_MEM, "memory bandwidth", 0.15, measure_stream },
    { NN_SPREAD_OP, "operation latency", 0.2, measure_op },
    { NN_SPREAD_SYNC, "synchronisation latency", 0.22, measure_sync },
    { -1, "copies to and from the device", 0.25, measure_copies },
    { -1, "graph replay", 0.3, measure_graph },
    { NN_SPREAD_LINEAR, "linear layers by size", 0.35, nn_cal_linear_curves },
    { NN_SPREAD_CONV, "convolutions by size", 0.6, nn_cal_conv_curves },
    { NN_SPREAD_ELEM, "elementwise operations", 0.8, nn_cal_elem_costs },
    { NN_SPREAD_HOST_COPY, "host memcpy", 0.85, measure_host_copy },
};
#define N_FIGURES (int)(sizeof figures / sizeof figures[0])
#define ALL_FIGURES (~0u)

/* The largest batch (from 1, up to 64) at which the backend fuses Adam into a
 * linear layer's backward: asked of linear_backward_adam itself on a 16x16
 * layer in the scratch buffers (zeroed first, used by nothing after), so the
 * model prices what the backend does without knowing its rule. */
#define FUSE_PROBE_MAX_BATCH 64
#define FUSE_PROBE_WIDTH 16

static int probe_fused_adam(nn_backend *b, const bench_ctx *c, nn_calibration *out)
{
    const size_t block = FUSE_PROBE_WIDTH * (FUSE_PROBE_WIDTH + 1);   /* weights, bias */
    const size_t acts = (size_t)FUSE_PROBE_MAX_BATCH * FUSE_PROBE_WIDTH;
    const nn_adam_hyper h = { 1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f };
    float *param = c->w, *m = c->w + block, *v = c->w + 2 * block;
    out->fused_adam_max_batch = 0;
    if (!b->ops->linear_backward_adam)
        return 0;
    if (b->ops->zero(b, c->x, acts * sizeof(float)) != 0 ||
        b->ops->zero(b, c->y, acts * sizeof(float)) != 0 ||
        b->ops->zero(b, c->w, 3 * block * sizeof(float)) != 0)
        return -1;
    for (int n = 1; n <= FUSE_PROBE_MAX_BATCH; n++) {
        int rc = b->ops->linear_backward_adam(b, n, FUSE_PROBE_WIDTH, FUSE_PROBE_WIDTH, c->x, c->y,
                                              NULL, param, 1, m, v, &h, 1);
        if (rc == NN_OP_DECLINED)
            break;
        if (rc != 0)
            return -1;
        out->fused_adam_max_batch = n;
    }
    return 0;
}

/* Measures the figures of `mask` (bits of enum nn_spread_figure; ALL_FIGURES
 * the first time, with the device's peak) on the opened backend b. */
static int measure(nn_backend *b, unsigned mask, nn_calibration *out, nn_progress_fn progress, void *ctx,
                   char *err, size_t err_len)
{
    bench_ctx c;
    int rc = alloc_buffers(b, &c, err, err_len);
    if (rc == 0 && mask == ALL_FIGURES)
        device_peak(b, out);
    for (int i = 0; i < N_FIGURES && rc == 0; i++) {
        if (mask != ALL_FIGURES && (figures[i].figure < 0 || !(mask & (1u << figures[i].figure))))
            continue;
        report(progress, ctx, mask == ALL_FIGURES ? figures[i].at : 0.92, figures[i].what);
        rc = figures[i].fn(b, &c, out);
    }
    if (rc == 0 && mask == ALL_FIGURES)
        rc = probe_fused_adam(b, &c, out);
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
    double s;
    if (!ops->host_memory)
        return 0;
    if (nn_backend_open(&b, ops, &one) != 0)
        return nn_errorf(err, err_len, "calibrating %s: %s", ops->name, b.last_error);
    int rc = alloc_buffers(&b, &c, err, err_len);
    if (rc == 0 && nn_cal_time(&b, &c, call_gemm, NULL, &on_device, &s, &out->spread[NN_SPREAD_GEMM_1THREAD]) != 0)
        rc = nn_errorf(err, err_len, "calibrating %s: %s", ops->name, b.last_error);
    if (rc == 0)
        out->gemm_gflops_1thread = 2.0 * GEMM_N * GEMM_N * (double)GEMM_N / s * 1e-9;
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
    if (nn_device_kind_of(ops->name).reference)
        return 1;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return threads > 0 ? threads : n > 0 ? (int)n : 1;
}

/* One pass: the backend opened, the figures of mask measured, closed; the
 * one-thread sgemm after it (its own backend) when asked. */
static int measure_pass(const nn_backend_ops *ops, const nn_backend_config *cfg, unsigned mask,
                        nn_calibration *out, nn_progress_fn progress, void *ctx, char *err, size_t err_len)
{
    nn_backend b;
    if (nn_backend_open(&b, ops, cfg) != 0)
        return nn_errorf(err, err_len, "device %s: %s", ops->name, b.last_error);
    int rc = measure(&b, mask, out, progress, ctx, err, err_len);
    nn_backend_close(&b);
    if (rc == 0 && (mask & (1u << NN_SPREAD_GEMM_1THREAD))) {
        report(progress, ctx, mask == ALL_FIGURES ? 0.9 : 0.95, "sgemm on one thread");
        rc = measure_one_thread(ops, out, err, err_len);
    }
    return rc;
}

/* The figures the failed checks name, with those computed from them: the
 * linear curve's last point is the sgemm, the curves take a product's fixed
 * cost off, the one-thread sgemm and streaming are judged against the
 * sgemm and the host's memcpy. */
static unsigned to_measure_again(const nn_calibration *out)
{
    nn_cal_failure fails[2 * NN_SPREADS];
    int n = nn_calibration_check(out, fails, 2 * NN_SPREADS);
    unsigned mask = 0;
    for (int i = 0; i < n && i < 2 * NN_SPREADS; i++)
        mask |= 1u << fails[i].figure;
    if (mask & (1u << NN_SPREAD_GEMM_1THREAD))
        mask |= 1u << NN_SPREAD_GEMM;
    if (mask & (1u << NN_SPREAD_MEM))
        mask |= 1u << NN_SPREAD_HOST_COPY;
    if (mask & (1u << NN_SPREAD_GEMM))
        mask |= 1u << NN_SPREAD_LINEAR;
    if (mask & (1u << NN_SPREAD_LINEAR))
        mask |= 1u << NN_SPREAD_CONV;
    return mask;
}

int nn_calibrate_ops(const nn_backend_ops *ops, int threads, nn_calibration *out, nn_progress_fn progress,
                     void *ctx, char *err, size_t err_len)
{
    char conv_cache[NN_PATH_LEN];
    /* the fastest convolution algorithms (the default), from the same cache
     * file as a training job's, so that a calibration times them once */
    nn_backend_config cfg = { .threads = threads };
    if (nn_xdg_dir(NN_XDG_CACHE, "conv-algorithms.txt", conv_cache, sizeof conv_cache) == 0)
        cfg.conv_cache_path = conv_cache;
    nn_strlcpy(out->device, ops->name, sizeof out->device);
    nn_machine_description(out->machine, sizeof out->machine);
    out->created = (long long)time(NULL);
    out->threads = threads_used(ops, threads);
    out->device_clock = ops->clock_start && ops->clock_stop;
    int rc = measure_pass(ops, &cfg, ALL_FIGURES, out, progress, ctx, err, err_len);
    unsigned again = rc == 0 ? to_measure_again(out) : 0;
    if (again) {                      /* once more; what fails again stays, named by the checks */
        out->remeasured = again;
        rc = measure_pass(ops, &cfg, again, out, progress, ctx, err, err_len);
    }
    if (rc == 0 && ops->host_memory && nn_cal_fresh_pages(out) != 0)
        add_note(out, "no fresh-page figure", "mapping or unmapping 64 MiB failed");
    if (rc == 0 && ops == &nn_backend_cpu) {     /* the backend whose products read the table */
        report(progress, ctx, 0.98, "OpenBLAS against BLIS, product by product");
        if (nn_cal_products(out, NULL, 0) != 0)
            rc = nn_errorf(err, err_len, "cpu: out of memory timing the products");
    }
    report(progress, ctx, 1.0, "done");
    return rc;
}

int nn_calibrate(const char *device, int threads, nn_calibration *out,
                 nn_progress_fn progress, void *ctx, char *err, size_t err_len)
{
    const nn_backend_ops *ops = nn_backend_find(device);
    if (err && err_len)
        err[0] = '\0';
    memset(out, 0, sizeof *out);
    if (!ops)
        return nn_errorf(err, err_len, "unknown device '%s'", device);
    return nn_calibrate_ops(ops, threads, out, progress, ctx, err, err_len);
}
