/* src/analysis/model/framework.c - a framework's step on the CPU and on a
 * GPU: the forms, their fits and the CPU's prediction from a CPU
 * calibration; see nnlab/framework.h (the GPU form is priced by nn_explain
 * with the framework way's options). */
#include "nnlab/framework.h"

#include <math.h>
#include <string.h>

#define MAX_COLS 8

/* A sample's threads beyond the first (a calibration without them ran one):
 * PyTorch's pool is woken for every op, and its kernels gain less from more
 * threads than nnlab's calibrated rates do. */
static int extra_threads(const nn_framework_sample *s)
{
    return s->threads > 1 ? s->threads - 1 : 0;
}

nn_framework_cpu nn_framework_cpu_shipped(void)
{
    return (nn_framework_cpu){ .step_us = NN_FRAMEWORK_CPU_STEP_US,
                               .op_ratio = NN_FRAMEWORK_CPU_OP_RATIO,
                               .elem_passes = NN_FRAMEWORK_CPU_ELEM_PASSES,
                               .param_passes = NN_FRAMEWORK_CPU_PARAM_PASSES,
                               .work_ratio = NN_FRAMEWORK_CPU_WORK_RATIO,
                               .thread_op_ratio = NN_FRAMEWORK_CPU_THREAD_OP_RATIO,
                               .thread_work_ratio = NN_FRAMEWORK_CPU_THREAD_WORK_RATIO,
                               .arith_ratio = NN_FRAMEWORK_CPU_ARITH_RATIO };
}

double nn_framework_cpu_form(const nn_framework_sample *s, const nn_framework_cpu *fc)
{
    double per_op = fc->op_ratio + fc->thread_op_ratio * extra_threads(s);
    double kernels = fc->work_ratio + fc->thread_work_ratio * extra_threads(s);
    return fc->step_us + per_op * s->ops * s->op_us + fc->elem_passes * s->elem_us +
           fc->param_passes * s->param_us + kernels * s->nnlab_us + fc->arith_ratio * s->arith_us + s->fresh_us;
}

/* Solves the k x k system a x = b by Gaussian elimination with partial
 * pivoting; -1 when it is singular. */
static int solve(int k, double a[MAX_COLS][MAX_COLS], double b[MAX_COLS], double x[MAX_COLS])
{
    for (int c = 0; c < k; c++) {
        int piv = c;
        for (int r = c + 1; r < k; r++)
            if (fabs(a[r][c]) > fabs(a[piv][c]))
                piv = r;
        if (fabs(a[piv][c]) < 1e-300)
            return -1;
        for (int j = 0; j < k; j++) {
            double t = a[c][j];
            a[c][j] = a[piv][j];
            a[piv][j] = t;
        }
        double t = b[c];
        b[c] = b[piv];
        b[piv] = t;
        for (int r = c + 1; r < k; r++) {
            double f = a[r][c] / a[c][c];
            for (int j = c; j < k; j++)
                a[r][j] -= f * a[c][j];
            b[r] -= f * b[c];
        }
    }
    for (int r = k - 1; r >= 0; r--) {
        double s = b[r];
        for (int j = r + 1; j < k; j++)
            s -= a[r][j] * x[j];
        x[r] = s / a[r][r];
    }
    return 0;
}

/* One least-squares problem on relative errors: sample i's columns
 * (cols[i * k + c]) and what the form takes as given (given[i]), both
 * divided by its measured step; the target is 1. */
typedef struct rel_problem {
    int n, k;
    const double *cols, *given, *measured;
} rel_problem;

/* Least squares on the free columns only (the others held at 0). */
static int fit_free(const rel_problem *pr, const int *free_col, double *x)
{
    double a[MAX_COLS][MAX_COLS] = { { 0 } }, b[MAX_COLS] = { 0 }, y[MAX_COLS] = { 0 };
    int idx[MAX_COLS], k = 0;
    for (int c = 0; c < pr->k; c++)
        if (free_col[c])
            idx[k++] = c;
    for (int i = 0; i < pr->n; i++) {
        double m = pr->measured[i];
        const double *row = pr->cols + (size_t)i * pr->k;
        for (int r = 0; r < k; r++) {
            for (int c = 0; c < k; c++)
                a[r][c] += row[idx[r]] / m * row[idx[c]] / m;
            b[r] += row[idx[r]] / m * (1 - pr->given[i] / m);
        }
    }
    if (k > 0 && solve(k, a, b, y) != 0)
        return -1;
    memset(x, 0, (size_t)pr->k * sizeof *x);
    for (int r = 0; r < k; r++)
        x[idx[r]] = y[r];
    return 0;
}

/* min sum ((given + cols . x) / measured - 1)^2 (the GPU form's host-bound
 * branch: every step of the recorded run is, see nn_framework_gpu_form), none of x negative: a
 * figure whose estimate is negative is held at 0 and the others fitted
 * again (a cost cannot be negative; the data then say it is too small to
 * tell from 0). */
static int fit_nonnegative(const rel_problem *pr, double *x)
{
    int free_col[MAX_COLS];
    if (pr->n < pr->k || pr->k > MAX_COLS)
        return -1;
    for (int c = 0; c < pr->k; c++)
        free_col[c] = 1;
    for (int round = 0; round < pr->k; round++) {
        int worst = -1;
        if (fit_free(pr, free_col, x) != 0)
            return -1;
        for (int c = 0; c < pr->k; c++)
            if (free_col[c] && x[c] < 0 && (worst < 0 || x[c] < x[worst]))
                worst = c;
        if (worst < 0)
            return 0;
        free_col[worst] = 0;
    }
    return fit_free(pr, free_col, x);
}

/* The root mean square and the largest |relative error| of the fitted x. */
static void rel_errors(const rel_problem *pr, const double *x, double *rms, double *max)
{
    double sq = 0;
    *max = 0;
    for (int i = 0; i < pr->n; i++) {
        double pred = pr->given[i];
        for (int c = 0; c < pr->k; c++)
            pred += pr->cols[(size_t)i * pr->k + c] * x[c];
        double rel = (pred - pr->measured[i]) / pr->measured[i];
        sq += rel * rel;
        if (fabs(rel) > *max)
            *max = fabs(rel);
    }
    *rms = pr->n > 0 ? sqrt(sq / pr->n) : 0;
}

#define MAX_FIT_SAMPLES 512

/* Whether the samples ran more than one thread count: only then can the
 * thread figures be told apart from op_ratio and work_ratio. */
static int threads_vary(const nn_framework_sample *s, int n)
{
    for (int i = 1; i < n; i++)
        if (s[i].threads != s[0].threads)
            return 1;
    return 0;
}

int nn_framework_fit_cpu(const nn_framework_sample *s, int n, nn_framework_fit *out)
{
    double cols[MAX_FIT_SAMPLES * MAX_COLS], given[MAX_FIT_SAMPLES], measured[MAX_FIT_SAMPLES];   /* 40 kB */
    double x[MAX_COLS];
    memset(out, 0, sizeof *out);
    if (n < 1 || n > MAX_FIT_SAMPLES)
        return -1;
    int k = threads_vary(s, n) ? 8 : 6;
    for (int i = 0; i < n; i++) {    /* x = (step_us, op_ratio, elem_passes, param_passes, work_ratio,
                                        arith_ratio, thread_op_ratio, thread_work_ratio) */
        double *row = cols + (size_t)i * k, dispatch = s[i].ops * s[i].op_us;
        row[0] = 1;
        row[1] = dispatch;
        row[2] = s[i].elem_us;
        row[3] = s[i].param_us;
        row[4] = s[i].nnlab_us;
        row[5] = s[i].arith_us;
        if (k == 8) {
            row[6] = dispatch * extra_threads(&s[i]);
            row[7] = s[i].nnlab_us * extra_threads(&s[i]);
        }
        given[i] = s[i].fresh_us;   /* priced by the calibration, not fitted */
        measured[i] = s[i].framework_us;
    }
    rel_problem pr = { n, k, cols, given, measured };
    if (fit_nonnegative(&pr, x) != 0)
        return -1;
    out->fc = (nn_framework_cpu){ .step_us = x[0], .op_ratio = x[1], .elem_passes = x[2],
                                  .param_passes = x[3], .work_ratio = x[4], .arith_ratio = x[5],
                                  .thread_op_ratio = k == 8 ? x[6] : 0, .thread_work_ratio = k == 8 ? x[7] : 0 };
    out->n = n;
    rel_errors(&pr, x, &out->rms_rel, &out->max_rel);
    return 0;
}

/* The bytes nnlab's cost model gives the layers that are not matrix
 * products (activations, pools, dropout, batch norms, adds): PyTorch runs
 * each as its own unfused kernels. */
static double elementwise_bytes(const nn_cost *c)
{
    double bytes = 0;
    for (int i = 0; i < c->n_layers; i++) {
        const nn_layer_cost *l = &c->layers[i];
        if (l->op_class != NN_OP_LINEAR && l->op_class != NN_OP_CONV)
            bytes += l->fwd.bytes + l->bwd.bytes;
    }
    return bytes;
}

/* nnlab's calibrated arithmetic of the per-element layers (activations,
 * dropout, pools: elements x the calibration's ns an element, forward and
 * backward), without their bytes. */
static double per_element_arith_us(const nn_cost *c, const nn_calibration *cal)
{
    double us = 0;
    for (int i = 0; i < c->n_layers; i++) {
        nn_op_class k = c->layers[i].op_class;
        if (k >= NN_OP_RELU && k <= NN_OP_POOL)
            us += c->layers[i].elems * (cal->elem_ns[k][0] + cal->elem_ns[k][1]) * 1e-3;
    }
    return us;
}

/* glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64 bits: a block this large is
 * always mapped on its own, and unmapped on free. */
#define GLIBC_MMAP_CEILING (32.0 * 1024 * 1024)

/* Bytes of batch tensors of shape s (channels first) with the channels
 * padded to a multiple of block, as oneDNN's blocked layouts hold them. */
static double blocked_bytes(int batch, const nn_shape *s, double block)
{
    long per_sample = nn_shape_count(s);
    int channels = s->dim[0];
    if (per_sample <= 0 || channels <= 0)
        return 0;
    double padded = ceil(channels / block) * block;
    return 4.0 * batch * ((double)per_sample / channels) * padded;
}

static double mapped_fresh(double bytes)
{
    return bytes >= GLIBC_MMAP_CEILING ? bytes : 0;
}

double nn_framework_fresh_bytes(const nn_preset *p, const nn_cost *c, double vector_floats)
{
    double bytes = 0;
    int first = nn_layer_first_working(p->layers, p->n_layers);
    if (!(vector_floats >= 1))
        return 0;
    for (int i = 0; i < c->n_layers && i < p->n_layers; i++) {
        if (c->layers[i].op_class != NN_OP_CONV)
            continue;
        bytes += 2 * mapped_fresh(blocked_bytes(c->batch, &c->layers[i].out_shape, vector_floats));
        if (i != first) {
            int src = nn_layer_source(p->layers, i, 0);
            nn_shape in = src < 0 ? nn_preset_input_shape(p) : c->layers[src].out_shape;
            bytes += mapped_fresh(blocked_bytes(c->batch, &in, vector_floats));
        }
    }
    return bytes;
}

int nn_framework_cpu_sample_of(const nn_preset *p, int batch, const nn_calibration *cpu_cal,
                               nn_framework_sample *out, nn_explanation *nnlab_out)
{
    nn_explain_options opt;
    nn_explanation e;
    memset(&opt, 0, sizeof opt);
    memset(out, 0, sizeof *out);
    opt.host_memory = 1;         /* nnlab's own CPU step, as the sweep's cpu rows run it, */
    opt.unfused = 1;             /* but with Adam's pass apart, as the framework runs it */
    nn_explain(p, batch, cpu_cal, &opt, &e);
    if (nnlab_out)
        *nnlab_out = e;
    if (!(e.predicted_us > 0) || !(cpu_cal->mem_gbps > 0) || !(cpu_cal->op_us >= 0))
        return -1;
    out->ops = nn_framework_ops(p, &e.cost);
    out->op_us = cpu_cal->op_us;
    out->elem_us = elementwise_bytes(&e.cost) / (cpu_cal->mem_gbps * 1e3);
    out->param_us = 4.0 * (double)e.cost.params / (cpu_cal->mem_gbps * 1e3);
    out->nnlab_us = e.predicted_us;
    out->threads = cpu_cal->threads > 0 ? cpu_cal->threads : 1;
    out->linear_us = e.class_work_us[NN_OP_LINEAR];
    out->conv_us = e.class_work_us[NN_OP_CONV];
    for (int k = NN_OP_RELU; k <= NN_OP_MSE; k++)
        out->act_us += e.class_work_us[k];
    out->other_us = e.class_work_us[NN_OP_NONE];
    out->arith_us = per_element_arith_us(&e.cost, cpu_cal);
    out->fresh_us = nn_framework_fresh_bytes(p, &e.cost, cpu_cal->vector_floats) / 4096.0 * cpu_cal->fresh_page_us;
    return 0;
}

double nn_framework_cpu_step_us(const nn_preset *p, int batch, const nn_calibration *cpu_cal,
                                const nn_gpu_profile *prof, nn_explanation *nnlab_out)
{
    nn_framework_sample s;
    if (nn_framework_cpu_sample_of(p, batch, cpu_cal, &s, nnlab_out) != 0)
        return 0;
    return nn_framework_cpu_form(&s, &prof->framework_cpu);
}

/* ---- the GPU ------------------------------------------------------------------------ */

int nn_framework_gpu_sample_of(const nn_preset *p, int batch, const nn_calibration *gpu_cal,
                               nn_framework_batch batch_way, nn_framework_gpu_sample *out)
{
    nn_explain_options opt;
    nn_explanation e;
    nn_framework_gpu none = { 0, 0, 0, 0 };
    nn_gpu_way_options(NN_WAY_FRAMEWORK, &none, &opt);
    opt.data_on_device = batch_way == NN_FRAMEWORK_BATCH_ON_DEVICE;
    nn_explain(p, batch, gpu_cal, &opt, &e);
    memset(out, 0, sizeof *out);
    out->ops = e.ops;
    out->conv_layers = nn_framework_conv_layers(&e.cost);
    out->launch_us = gpu_cal->op_us;
    /* the copy is priced, not fitted: the calibration's pageable upload, as
     * the framework way's prediction adds it */
    out->given_us = e.sync_us + (opt.data_on_device ? 0 : e.copy_us);
    out->device_us = e.fixed_us + e.calls_us + e.work_us;
    return isfinite(out->device_us) && out->ops > 0 ? 0 : -1;
}

double nn_framework_gpu_form(const nn_framework_gpu_sample *s, const nn_framework_gpu *fw)
{
    double host = fw->step_us + s->ops * (s->launch_us + fw->op_us) + s->conv_layers * fw->conv_us;
    double core = host + fw->device_ratio * s->device_us;
    return s->given_us + (core > s->device_us ? core : s->device_us);
}

int nn_framework_fit_gpu(const nn_framework_gpu_sample *s, int n, nn_framework_gpu_fit *out)
{
    double cols[MAX_FIT_SAMPLES * 4], given[MAX_FIT_SAMPLES], measured[MAX_FIT_SAMPLES];   /* 24 kB */
    double x[4];
    memset(out, 0, sizeof *out);
    if (n < 4 || n > MAX_FIT_SAMPLES)
        return -1;
    for (int i = 0; i < n; i++) {    /* x = (step_us, op_us, conv_us, device_ratio) */
        cols[i * 4] = 1;
        cols[i * 4 + 1] = s[i].ops;
        cols[i * 4 + 2] = s[i].conv_layers;
        cols[i * 4 + 3] = s[i].device_us;
        given[i] = s[i].given_us + s[i].ops * s[i].launch_us;
        measured[i] = s[i].framework_us;
    }
    rel_problem pr = { n, 4, cols, given, measured };
    if (fit_nonnegative(&pr, x) != 0)
        return -1;
    out->fw = (nn_framework_gpu){ x[0], x[1], x[2], x[3] };
    out->n = n;
    rel_errors(&pr, x, &out->rms_rel, &out->max_rel);
    return 0;
}
