/* src/analysis/model/calibrate_products.c - OpenBLAS against BLIS on each product
 * shape the presets issue, for the CPU device's calibration: the faster per
 * shape, by nn_blas_choose's margin, goes into the calibration (and its
 * cache) and into the backend's table (backends/cpu/cpu_blis.h), which every
 * product reads.
 *
 * The shapes: the forward, input gradient and weight gradient of every
 * linear and convolution layer of every preset at its own batch
 * (nn_blas_linear_shapes, nn_blas_conv_shapes: the shapes the backend looks
 * its products up by). Each is timed straight on the two libraries, on one
 * thread as the backend runs them inside its pool, not through a device's
 * table: samples of back-to-back calls, the libraries alternated so that a
 * burst of other load hits both, the median of each, within
 * PRODUCT_BUDGET_S a shape. A shape whose product takes only a few times a
 * 1x1x1 product's time (measured here, for both libraries) is not
 * contested: its time is the call's fixed cost, and which library wins is
 * noise; OpenBLAS keeps it. */
#define _POSIX_C_SOURCE 200809L
#include "calibrate_products.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_blis.h"
#include "nnlab/preset.h"
#include "util.h"

#define PRODUCT_BUDGET_S 0.05      /* per shape, both libraries */
#define PRODUCT_SAMPLE_S 2e-4      /* a sample: calls back to back for at least this */
#define PRODUCT_SAMPLES 15         /* per library at most */
#define CONTEST_CALLS 5.0          /* contested only when slower than this many 1x1x1 calls */
#define OVERHEAD_SAMPLES 7
#define OVERHEAD_CALLS 200

/* ---- the shapes ------------------------------------------------------------------------ */

static int same_shape(const nn_blas_shape *a, const nn_blas_shape *b)
{
    return a->m == b->m && a->n == b->n && a->k == b->k && a->ta == b->ta && a->tb == b->tb;
}

/* s added to list[0..n) unless there; the new count (max at most) */
static int add_shape(nn_blas_shape *list, int n, int max, const nn_blas_shape *s)
{
    for (int i = 0; i < n; i++)
        if (same_shape(&list[i], s))
            return n;
    if (n < max && s->m > 0 && s->n > 0 && s->k > 0)
        list[n++] = *s;
    return n;
}

int nn_preset_product_shapes(const nn_preset *p, int batch, nn_blas_shape *list, int n, int max)
{
    for (int i = 0; i < p->n_layers; i++) {
        const nn_layer_spec *l = &p->layers[i];
        nn_blas_shape s[NN_BLAS_PRODUCTS];
        const nn_shape *in = &l->in_shape, *out = &l->out_shape;
        if (l->kind == NN_LAYER_LINEAR)
            nn_blas_linear_shapes(batch, l->in, l->out, s);
        else if (l->kind == NN_LAYER_CONV2D && in->rank == 3 && out->rank == 3)
            nn_blas_conv_shapes(batch, out->dim[0], out->dim[1] * out->dim[2],
                                in->dim[0] * l->kernel * l->kernel, s);
        else if (l->kind == NN_LAYER_CONV1D && in->rank == 2 && out->rank == 2)
            nn_blas_conv_shapes(batch, out->dim[0], out->dim[1], in->dim[0] * l->kernel, s);
        else
            continue;
        for (int j = 0; j < NN_BLAS_PRODUCTS; j++)
            n = add_shape(list, n, max, &s[j]);
    }
    return n;
}

/* Every listed preset's shapes at its own batch (a preset that does not
 * load is skipped: `nnlab presets` says why). */
static int all_preset_shapes(nn_blas_shape *list, int max)
{
    enum { MAX_PRESETS = 64 };
    nn_preset_entry *e = calloc(MAX_PRESETS, sizeof *e);
    nn_preset *p = malloc(sizeof *p);
    char err[NN_ERR_LEN];
    int left_out = 0, n = 0;
    int count = e && p ? nn_preset_list(e, MAX_PRESETS, &left_out, err, sizeof err) : -1;
    for (int i = 0; i < count; i++)
        if (!e[i].error[0] && !e[i].shadowed && nn_preset_load(e[i].path, p, err, sizeof err) == 0)
            n = nn_preset_product_shapes(p, p->batch, list, n, max);
    free(e);
    free(p);
    return n;
}

/* ---- timing ------------------------------------------------------------------------------ */

typedef struct operands {
    nn_blas_shape s;
    float *a, *b, *c;
    int lda, ldb, ldc;
} operands;

static int operands_alloc(operands *o, const nn_blas_shape *s)
{
    o->s = *s;
    o->lda = s->ta ? s->m : s->k;            /* row-major: A stored (k, m) when transposed */
    o->ldb = s->tb ? s->k : s->n;
    o->ldc = s->n;
    size_t na = (size_t)s->m * s->k, nb = (size_t)s->k * s->n, nc = (size_t)s->m * s->n;
    o->a = malloc(na * sizeof *o->a);
    o->b = malloc(nb * sizeof *o->b);
    o->c = calloc(nc, sizeof *o->c);
    if (!o->a || !o->b || !o->c)
        return -1;
    for (size_t i = 0; i < na; i++)
        o->a[i] = 0.01f * (float)(i % 97);
    for (size_t i = 0; i < nb; i++)
        o->b[i] = 0.01f * (float)(i % 89);
    return 0;
}

static void operands_free(operands *o)
{
    free(o->a);
    free(o->b);
    free(o->c);
}

/* Seconds a call, over `calls` calls back to back. */
static double per_call_s(const operands *o, int lib, int calls)
{
    double t0 = nn_now();
    for (int i = 0; i < calls; i++)
        nn_blas_sgemm(lib, &o->s, 1.0f, o->a, o->lda, o->b, o->ldb, 0.0f, o->c, o->ldc);
    return (nn_now() - t0) / calls;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A 1x1x1 product's time on each library, in microseconds. */
static int measure_call_us(double call_us[2])
{
    const nn_blas_shape one = { .m = 1, .n = 1, .k = 1 };
    operands o;
    double t[2][OVERHEAD_SAMPLES];
    int rc = operands_alloc(&o, &one);
    for (int r = 0; rc == 0 && r < OVERHEAD_SAMPLES; r++)
        for (int lib = 0; lib < 2; lib++)
            t[lib][r] = per_call_s(&o, lib, OVERHEAD_CALLS);
    for (int lib = 0; rc == 0 && lib < 2; lib++)
        call_us[lib] = 1e6 * median(t[lib], OVERHEAD_SAMPLES);
    operands_free(&o);
    return rc;
}

/* Both libraries on o, alternated, until the budget is spent: their median
 * GFLOP/s. The first call of each is untimed (its packing buffers). */
static void race(const operands *o, double budget_s, double gflops[2])
{
    const double flops = 2.0 * o->s.m * o->s.n * o->s.k;
    double t[2][PRODUCT_SAMPLES];
    per_call_s(o, NN_BLAS_BLIS, 1);
    double first = per_call_s(o, NN_BLAS_OPENBLAS, 1);
    int calls = first > 0 ? (int)ceil(PRODUCT_SAMPLE_S / first) : 1;
    if (calls < 1)
        calls = 1;
    double end = nn_now() + budget_s;
    int n = 0;
    while (n < PRODUCT_SAMPLES && (n < 3 || nn_now() < end)) {
        for (int j = 0; j < 2; j++) {           /* odd rounds run BLIS first */
            int lib = n % 2 ? 1 - j : j;
            t[lib][n] = per_call_s(o, lib, calls);
        }
        n++;
    }
    for (int lib = 0; lib < 2; lib++) {
        double m = median(t[lib], n);
        gflops[lib] = m > 0 ? flops / m * 1e-9 : 0;
    }
}

int nn_product_race(const nn_blas_shape *s, double budget_s, double gflops[2])
{
    operands o;
    int rc = operands_alloc(&o, s);
    if (rc == 0)
        race(&o, budget_s, gflops);
    operands_free(&o);
    return rc;
}

/* The contest of one shape into out (its shape and threads already set). */
static int contest(const double call_us[2], double budget_s, nn_product_choice *out)
{
    const nn_blas_shape s = { .m = out->m, .n = out->n, .k = out->k, .ta = out->ta, .tb = out->tb };
    operands o;
    int rc = operands_alloc(&o, &s);
    if (rc == 0) {
        per_call_s(&o, NN_BLAS_OPENBLAS, 1);
        double alone = per_call_s(&o, NN_BLAS_OPENBLAS, 1);
        double fixed = call_us[0] > call_us[1] ? call_us[0] : call_us[1];
        if (alone * 1e6 < CONTEST_CALLS * fixed) {
            out->openblas_gflops = 2.0 * s.m * s.n * s.k / alone * 1e-9;
            out->blis_gflops = 0;            /* not contested */
        } else {
            double g[2];
            race(&o, budget_s, g);
            out->openblas_gflops = g[NN_BLAS_OPENBLAS];
            out->blis_gflops = g[NN_BLAS_BLIS];
        }
        out->chosen = nn_blas_choose(out->openblas_gflops, out->blis_gflops, 1);
    }
    operands_free(&o);
    return rc;
}

/* ---- the calibration's part --------------------------------------------------------------- */

int nn_cal_products(nn_calibration *out, char *note, size_t note_len)
{
    char why[160];
    out->n_products = 0;
    if (note && note_len)
        note[0] = '\0';
    if (nn_blis_status(why, sizeof why) != 0 || nn_blas_forced(NULL, 0) >= 0) {
        if (nn_blas_forced(NULL, 0) >= 0)
            snprintf(why, sizeof why, "products not contested: NNLAB_BLAS=%s",
                     nn_blas_lib_name(nn_blas_forced(NULL, 0)));
        if (note && note_len)
            nn_strlcpy(note, why, note_len);
        return 0;                /* OpenBLAS runs every product: nothing to choose */
    }
    nn_blas_shape shapes[NN_MAX_PRODUCTS];
    int n = all_preset_shapes(shapes, NN_MAX_PRODUCTS);
    if (measure_call_us(out->product_call_us) != 0)
        return -1;
    for (int i = 0; i < n; i++) {
        nn_product_choice *c = &out->products[out->n_products];
        *c = (nn_product_choice){ .m = shapes[i].m, .n = shapes[i].n, .k = shapes[i].k,
                                  .ta = shapes[i].ta, .tb = shapes[i].tb,
                                  .threads = out->threads };
        if (contest(out->product_call_us, PRODUCT_BUDGET_S, c) != 0)
            return -1;
        out->n_products++;
    }
    nn_products_install(out);
    return 0;
}

#define JOB_BUDGET_S 0.02          /* per shape, as a job opens: its prepare time */

int nn_products_contest_job(const nn_preset *p, int batch, int threads)
{
    if (nn_blis_status(NULL, 0) != 0 || nn_blas_forced(NULL, 0) >= 0)
        return 0;
    nn_blas_shape *shapes = malloc(NN_MAX_PRODUCTS * sizeof *shapes);
    double call_us[2];
    int n = shapes ? nn_preset_product_shapes(p, batch, shapes, 0, NN_MAX_PRODUCTS) : 0;
    int contested = 0, measured = 0, rc = shapes ? 0 : -1;
    for (int i = 0; rc == 0 && i < n; i++) {
        if (nn_blas_known(&shapes[i], threads))
            continue;
        /* the calls' fixed costs only when a shape is to be contested: a job
         * whose shapes a job before it chose opens without timing anything */
        if (!measured && (rc = measure_call_us(call_us)) != 0)
            break;
        measured = 1;
        nn_product_choice c = { .m = shapes[i].m, .n = shapes[i].n, .k = shapes[i].k,
                                .ta = shapes[i].ta, .tb = shapes[i].tb, .threads = threads };
        rc = contest(call_us, JOB_BUDGET_S, &c);
        if (rc == 0 && nn_blas_remember(&shapes[i], threads, c.chosen) == 0)
            contested++;
    }
    free(shapes);
    return rc == 0 ? contested : -1;
}

void nn_products_install(const nn_calibration *c)
{
    for (int i = 0; i < c->n_products; i++) {
        const nn_product_choice *p = &c->products[i];
        const nn_blas_shape s = { .m = p->m, .n = p->n, .k = p->k, .ta = p->ta, .tb = p->tb };
        if (nn_blas_remember(&s, p->threads, p->chosen) != 0)
            return;              /* the table is full: the rest stay on OpenBLAS */
    }
}

int nn_products_use_cached(const char *device)
{
    nn_calibration *c = malloc(sizeof *c);
    int n = -1;
    if (c && nn_calibration_load(device, c) == 0) {
        nn_products_install(c);
        n = c->n_products;
    }
    free(c);
    return n;
}
