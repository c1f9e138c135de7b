/* bench/opbench.c - times LeNet's convolution and pooling ops, one by one,
 * through a backend's op table: the tool behind the tuning constants of
 * backends/cpu_conv*.c and backends/cpu/cpu_maxpool.c.
 *
 *   make bench/opbench
 *   bench/opbench [BATCH [DEVICE [THREADS [FILTER]]]]
 *
 * Prints the median of 25 calls per op, in µs and GFLOP/s (useful FLOPs:
 * 2 per multiply-add of the convolution itself). FILTER keeps the ops whose
 * name contains it. NNLAB_NO_DIRECT_CONV=1 compares the im2col path.
 * A benchmark: run it alone on the machine. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"

#define REPEATS 25

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static float *filled(size_t n)
{
    float *p = malloc(n * sizeof *p + 64);
    if (!p) {
        fprintf(stderr, "opbench: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        p[i] = (float)((i * 2654435761u) % 1000u) / 1000.0f - 0.5f;
    return p;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct bench {
    nn_backend *b;
    const char *filter;
} bench;

typedef int (*op_fn)(const bench *k, void *arg);

static void time_op(const bench *k, const char *name, double flops, op_fn fn, void *arg)
{
    if (k->filter && !strstr(name, k->filter))
        return;
    double t[REPEATS];
    for (int r = 0; r < REPEATS; r++) {
        double t0 = now_us();
        if (fn(k, arg) != 0) {
            fprintf(stderr, "opbench: %s: %s\n", name, k->b->last_error);
            exit(1);
        }
        t[r] = now_us() - t0;
    }
    qsort(t, REPEATS, sizeof t[0], by_value);
    double med = t[REPEATS / 2];
    if (flops > 0)
        printf("%-18s %10.1f us %8.1f GFLOP/s\n", name, med, flops / med * 1e-3);
    else
        printf("%-18s %10.1f us\n", name, med);
}

typedef struct conv_args {
    nn_conv_geom g;
    float *x, *w, *bias, *y, *dy, *dx, *dw;
    void *ws;
    int with_dx;
} conv_args;

static int conv_fwd(const bench *k, void *arg)
{
    conv_args *c = arg;
    return k->b->ops->conv2d_forward(k->b, &c->g, c->x, c->w, c->bias, c->y, c->ws);
}

static int conv_bwd(const bench *k, void *arg)
{
    conv_args *c = arg;
    size_t nw = (size_t)c->g.c_out * c->g.c_in * c->g.k_h * c->g.k_w;
    return k->b->ops->conv2d_backward(k->b, &c->g, c->x, c->w, c->dy, c->with_dx ? c->dx : NULL,
                                      c->dw, c->dw + nw, c->ws);
}

typedef struct pool_args {
    nn_pool_geom g;
    float *x, *y, *dy, *dx;
} pool_args;

static int pool_fwd(const bench *k, void *arg)
{
    pool_args *p = arg;
    return k->b->ops->maxpool2d_forward(k->b, &p->g, p->x, p->y);
}

static int pool_bwd(const bench *k, void *arg)
{
    pool_args *p = arg;
    return k->b->ops->maxpool2d_backward(k->b, &p->g, p->x, p->y, p->dy, p->dx);
}

static void conv_suite(const bench *k, const char *name, nn_conv_geom g)
{
    conv_args c = { .g = g };
    size_t nx = (size_t)g.n * g.c_in * g.h_in * g.w_in;
    size_t ny = (size_t)g.n * g.c_out * g.h_out * g.w_out;
    size_t nw = (size_t)g.c_out * g.c_in * g.k_h * g.k_w;
    c.x = filled(nx), c.dx = filled(nx), c.y = filled(ny), c.dy = filled(ny);
    c.w = filled(nw), c.dw = filled(nw + (size_t)g.c_out), c.bias = filled((size_t)g.c_out);
    size_t ws_bytes = 0;
    if (k->b->ops->conv2d_workspace(k->b, &g, &ws_bytes) != 0) {
        fprintf(stderr, "opbench: %s: %s\n", name, k->b->last_error);
        exit(1);
    }
    c.ws = filled(ws_bytes / sizeof(float) + 16);
    double flops = 2.0 * (double)ny * (double)(nw / (size_t)g.c_out);
    char label[64];
    snprintf(label, sizeof label, "%s fwd", name);
    time_op(k, label, flops, conv_fwd, &c);
    snprintf(label, sizeof label, "%s bwd dw", name);
    time_op(k, label, flops, conv_bwd, &c);
    c.with_dx = 1;
    snprintf(label, sizeof label, "%s bwd dx+dw", name);
    time_op(k, label, 2 * flops, conv_bwd, &c);
    free(c.x), free(c.dx), free(c.y), free(c.dy), free(c.w), free(c.dw), free(c.bias), free(c.ws);
}

static void pool_suite(const bench *k, const char *name, nn_pool_geom g)
{
    pool_args p = { .g = g };
    size_t nx = (size_t)g.n * g.c * g.h_in * g.w_in, ny = (size_t)g.n * g.c * g.h_out * g.w_out;
    p.x = filled(nx), p.dx = filled(nx), p.y = filled(ny), p.dy = filled(ny);
    if (k->b->ops->maxpool2d_forward(k->b, &g, p.x, p.y) != 0) {   /* y consistent with x */
        fprintf(stderr, "opbench: %s: %s\n", name, k->b->last_error);
        exit(1);
    }
    char label[64];
    snprintf(label, sizeof label, "%s fwd", name);
    time_op(k, label, 0, pool_fwd, &p);
    snprintf(label, sizeof label, "%s bwd", name);
    time_op(k, label, 0, pool_bwd, &p);
    free(p.x), free(p.dx), free(p.y), free(p.dy);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 256;
    const char *device = argc > 2 ? argv[2] : "cpu";
    nn_backend_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.threads = argc > 3 ? atoi(argv[3]) : 0;
    if (n < 1) {
        fprintf(stderr, "usage: opbench [BATCH [DEVICE [THREADS [FILTER]]]]\n");
        return 2;
    }
    char why[256];
    const nn_backend_ops *ops = nn_backend_find_why(device, why, sizeof why);
    if (!ops) {
        fprintf(stderr, "opbench: %s\n", why);
        return 1;
    }
    if (!ops->host_memory) {
        fprintf(stderr, "opbench: %s computes in device memory; this tool times host-memory "
                        "backends (cpu, cpu-ref)\n", device);
        return 1;
    }
    nn_backend backend;
    memset(&backend, 0, sizeof backend);
    if (nn_backend_open(&backend, ops, &cfg) != 0) {
        fprintf(stderr, "opbench: %s: %s\n", device, backend.last_error);
        return 1;
    }
    bench k = { .b = &backend, .filter = argc > 4 ? argv[4] : NULL };
    printf("# %s, batch %d, threads %d%s\n", device, n, cfg.threads,
           getenv("NNLAB_NO_DIRECT_CONV") ? ", NNLAB_NO_DIRECT_CONV" : "");
    conv_suite(&k, "conv1", (nn_conv_geom){ n, 3, 32, 32, 6, 28, 28, 5, 5, 1, 1, 0, 0 });
    conv_suite(&k, "conv2", (nn_conv_geom){ n, 6, 14, 14, 16, 10, 10, 5, 5, 1, 1, 0, 0 });
    pool_suite(&k, "pool1", (nn_pool_geom){ n, 6, 28, 28, 14, 14, 2, 2, 2, 2 });
    pool_suite(&k, "pool2", (nn_pool_geom){ n, 16, 10, 10, 5, 5, 2, 2, 2, 2 });
    nn_backend_close(&backend);
    return 0;
}
