/* src/calibrate.c - measures a device through its op table; see calibrate.h.
 * Each figure is the best of a few repetitions: the machines are shared and
 * noisy, and the best run is the closest to what the hardware can do. */
#define _POSIX_C_SOURCE 200809L
#include "calibrate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
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

void nn_machine_description(char *buf, size_t len)
{
    char line[512], model[256] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "model name", 10) == 0) {
                char *colon = strchr(line, ':');
                if (colon) {
                    nn_strlcpy(model, colon + 2, sizeof model);
                    model[strcspn(model, "\n")] = '\0';
                }
                break;
            }
        fclose(f);
    }
    snprintf(buf, len, "%s, %ld cores", model, sysconf(_SC_NPROCESSORS_ONLN));
}

/* ---- the measurements ------------------------------------------------------ */

static int gemm_gflops(nn_backend *b, const bench_ctx *c, double *out)
{
    double best = 1e30, spent = 0;
    /* a slow device (the reference loops) gets fewer repetitions */
    for (int r = 0; r < REPEAT && spent < 1.0; r++) {
        double t0 = nn_now();
        if (b->ops->linear_forward(b, GEMM_N, GEMM_N, GEMM_N, c->x, c->w, NULL, c->y) != 0 ||
            b->ops->synchronize(b) != 0)
            return -1;
        double dt = nn_now() - t0;
        spent += dt;
        if (dt < best)
            best = dt;
    }
    *out = 2.0 * GEMM_N * GEMM_N * (double)GEMM_N / best * 1e-9;
    return 0;
}

static int stream_gbps(nn_backend *b, const bench_ctx *c, double *out)
{
    double best = 1e30;
    for (int r = 0; r < REPEAT; r++) {
        double t0 = nn_now();
        if (b->ops->act_forward(b, NN_ACT_RELU, STREAM_FLOATS, c->x, c->y) != 0 || b->ops->synchronize(b) != 0)
            return -1;
        double dt = nn_now() - t0;
        if (dt < best)
            best = dt;
    }
    *out = 2.0 * STREAM_FLOATS * sizeof(float) / best * 1e-9;
    return 0;
}

/* Mean time of `count` tiny operations issued back to back (and, with sync,
 * each followed by a synchronise). */
static int tiny_op_us(nn_backend *b, const bench_ctx *c, int sync, double *out)
{
    const int count = 2000;
    double best = 1e30;
    for (int r = 0; r < REPEAT; r++) {
        double t0 = nn_now();
        for (int i = 0; i < count; i++)
            if (b->ops->act_forward(b, NN_ACT_RELU, 1, c->x, c->y) != 0 ||
                (sync && b->ops->synchronize(b) != 0))
                return -1;
        if (b->ops->synchronize(b) != 0)
            return -1;
        double dt = (nn_now() - t0) / count;
        if (dt < best)
            best = dt;
    }
    *out = best * 1e6;
    return 0;
}

static int upload_cost(nn_backend *b, const bench_ctx *c, size_t bytes, int count, double *out_s)
{
    double best = 1e30;
    for (int r = 0; r < REPEAT; r++) {
        double t0 = nn_now();
        for (int i = 0; i < count; i++)
            if (b->ops->upload(b, c->x, c->host, bytes) != 0)
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

static double host_copy_gbps(void *dst, const void *src)
{
    double best = 1e30;
    for (int r = 0; r < REPEAT; r++) {
        double t0 = nn_now();
        memcpy(dst, src, UPLOAD_BYTES / 2);
        double dt = nn_now() - t0;
        if (dt < best)
            best = dt;
    }
    return 2.0 * (UPLOAD_BYTES / 2) / best * 1e-9;   /* read + write */
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

/* Measures the opened backend b into out (all but the one-thread gemm). */
static int measure(nn_backend *b, nn_calibration *out, nn_progress_fn progress, void *ctx,
                   char *err, size_t err_len)
{
    bench_ctx c;
    double small_s = 0, big_s = 1;
    int rc = alloc_buffers(b, &c, err, err_len);
    if (rc == 0) {
        report(progress, ctx, 0.1, "sgemm");
        rc = gemm_gflops(b, &c, &out->gemm_gflops);
    }
    if (rc == 0) {
        report(progress, ctx, 0.4, "memory bandwidth");
        rc = stream_gbps(b, &c, &out->mem_gbps);
    }
    if (rc == 0) {
        report(progress, ctx, 0.5, "operation and synchronisation latency");
        rc = tiny_op_us(b, &c, 0, &out->op_us) || tiny_op_us(b, &c, 1, &out->sync_us);
    }
    if (rc == 0) {
        report(progress, ctx, 0.6, "copies to the device");
        rc = upload_cost(b, &c, 4, 1000, &small_s) || upload_cost(b, &c, UPLOAD_BYTES, 2, &big_s);
        out->upload_us = small_s * 1e6;
        out->upload_gbps = UPLOAD_BYTES / big_s * 1e-9;
    }
    if (rc == 0)
        out->host_copy_gbps = host_copy_gbps(c.host, (char *)c.host + UPLOAD_BYTES / 2);
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
    if (rc == 0 && gemm_gflops(&b, &c, &out->gemm_gflops_1thread) != 0)
        rc = nn_errorf(err, err_len, "calibrating %s: %s", ops->name, b.last_error);
    free_buffers(&c);
    nn_backend_close(&b);
    return rc;
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
    if (nn_backend_open(&b, ops, &cfg) != 0)
        return nn_errorf(err, err_len, "device %s: %s", ops->name, b.last_error);
    int rc = measure(&b, out, progress, ctx, err, err_len);
    nn_backend_close(&b);
    if (rc == 0) {
        report(progress, ctx, 0.8, "sgemm on one thread");
        rc = measure_one_thread(ops, out, err, err_len);
    }
    report(progress, ctx, 1.0, "done");
    return rc;
}

/* ---- the cache -------------------------------------------------------------------- */

int nn_calibration_path(const char *device, char *path, size_t len)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (xdg && xdg[0] == '/')
        n = snprintf(path, len, "%s/nnlab/calibration-%s.txt", xdg, device);
    else if (home && home[0])
        n = snprintf(path, len, "%s/.cache/nnlab/calibration-%s.txt", home, device);
    else
        return -1;
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* The fields of the cache file, in order. */
#define CAL_FIELDS(X)                                                          \
    X(gemm_gflops) X(gemm_gflops_1thread) X(mem_gbps) X(op_us) X(sync_us)      \
    X(upload_us) X(upload_gbps) X(host_copy_gbps)

static int fill_calibration(FILE *f, const void *ctx)
{
    const nn_calibration *c = ctx;
    if (fprintf(f, "# nnlab calibration: `nnlab calibrate --device %s` remakes it\n", c->device) < 0 ||
        fprintf(f, "device = %s\nmachine = %s\ncreated = %lld\n", c->device, c->machine, c->created) < 0)
        return -1;
#define WRITE_FIELD(name) if (fprintf(f, #name " = %.6g\n", c->name) < 0) return -1;
    CAL_FIELDS(WRITE_FIELD)
#undef WRITE_FIELD
    return 0;
}

int nn_calibration_save(const nn_calibration *c, char *err, size_t err_len)
{
    char path[4096];
    if (nn_calibration_path(c->device, path, sizeof path) != 0)
        return nn_errorf(err, err_len, "no cache folder: neither XDG_CACHE_HOME nor HOME is set");
    return nn_write_atomic(path, fill_calibration, c, err, err_len);
}

static void parse_line(nn_calibration *c, const char *key, const char *value)
{
    double v;
    if (!strcmp(key, "device"))
        nn_strlcpy(c->device, value, sizeof c->device);
    else if (!strcmp(key, "machine"))
        nn_strlcpy(c->machine, value, sizeof c->machine);
    else if (!strcmp(key, "created") && nn_parse_double(value, &v) == 0)
        c->created = (long long)v;
#define READ_FIELD(name) else if (!strcmp(key, #name) && nn_parse_double(value, &v) == 0) c->name = v;
    CAL_FIELDS(READ_FIELD)
#undef READ_FIELD
}

int nn_calibration_load(const char *device, nn_calibration *out)
{
    char path[4096], line[512], here[256];
    FILE *f;
    if (nn_calibration_path(device, path, sizeof path) != 0 || !(f = fopen(path, "r")))
        return -1;
    memset(out, 0, sizeof *out);
    while (fgets(line, sizeof line, f)) {
        char *eq = strstr(line, " = ");
        if (line[0] == '#' || !eq)
            continue;
        *eq = '\0';
        eq[3 + strcspn(eq + 3, "\n")] = '\0';
        parse_line(out, line, eq + 3);
    }
    fclose(f);
    nn_machine_description(here, sizeof here);
    /* another machine's figures would explain nothing here */
    if (strcmp(out->machine, here) != 0 || strcmp(out->device, device) != 0 || out->gemm_gflops <= 0)
        return -1;
    return 0;
}
