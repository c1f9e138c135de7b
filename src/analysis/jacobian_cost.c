/* src/analysis/jacobian_cost.c - what each Jacobian method computes
 * (nnlab/jacobian.h): FLOPs of the forward pass and of the derivative
 * passes, and the part spent on J's zero blocks, the waste the lesson is
 * about.
 *
 * Counting rules (cost.h's): a multiply-add is 2 FLOPs; a bias add 1 per
 * output; tanh 1 per element forward; its derivative from the saved output
 * 3 per element (y*y, 1 - that, times the incoming gradient). A reverse pass
 * computes the input gradient only (no parameter gradients: autograd.grad
 * with inputs = x prunes them), so its linear layers cost 2*n*in*out each. */
#include "nnlab/jacobian.h"

#include "util.h"

#include <stdio.h>
#include <string.h>

static double forward_flops(const nn_jac_shape *s, double n)
{
    double f = 0;
    for (int l = 0; l < s->n_linear; l++) {
        double in = s->width[l], out = s->width[l + 1];
        f += n * (2 * in * out + out);
        if (s->tanh_after[l])
            f += n * out;
    }
    return f;
}

/* One reverse (or tangent) pass over n rows: the same products and tanh
 * derivatives either way. */
static double pass_flops(const nn_jac_shape *s, double n)
{
    double f = 0;
    for (int l = 0; l < s->n_linear; l++) {
        double in = s->width[l], out = s->width[l + 1];
        f += n * 2 * in * out;
        if (s->tanh_after[l])
            f += n * 3 * out;
    }
    return f;
}

void nn_jac_flops_of(const nn_jac_shape *s, long val, enum nn_jac_method m, nn_jac_flops *out)
{
    double v = (double)val, in = s->width[0], k = s->width[s->n_linear];
    memset(out, 0, sizeof *out);
    out->forward = forward_flops(s, v);
    out->pass_rows = v;
    switch (m) {
    case NN_JAC_ROWS:
    case NN_JAC_BATCHED:
        /* one one-hot cotangent per row of J, each over the whole batch:
         * only sample i's row of a pass is non-zero */
        out->passes = v * k;
        out->derivative = out->passes * pass_flops(s, v);
        out->zero = out->passes * pass_flops(s, v - 1);
        break;
    case NN_JAC_PER_SAMPLE:
        out->passes = k;
        out->derivative = k * pass_flops(s, v);
        break;
    case NN_JAC_FORWARD:
        out->passes = in;
        out->derivative = in * pass_flops(s, v);
        break;
    default:
        break;
    }
    out->total = out->forward + out->derivative;
}

int nn_jac_chunk(const nn_jac_shape *s, long val, enum nn_jac_method m)
{
    long total = nn_jac_rows_total(s, val);
    if (m == NN_JAC_ROWS)
        return s->width[s->n_linear];          /* one sample's outputs a group */
    if (m != NN_JAC_BATCHED)
        return 1;
    long c = 4L * 1024 * 1024 / total;
    if (c < 1)
        c = 1;
    while (total % c != 0)
        c--;
    return (int)c;
}

/* ---- prediction ------------------------------------------------------------------ */

/* One call: its fixed cost, its FLOPs at the rate, its bytes at the
 * bandwidth, whichever is slowest (seconds). fixed_us: a launch, or a graph
 * node when replayed. */
static double call_s(double fixed_us, double flops, double gflops, double bytes, double gbps)
{
    double t = fixed_us * 1e-6;
    if (gflops > 0 && flops / (gflops * 1e9) > t)
        t = flops / (gflops * 1e9);
    if (gbps > 0 && bytes / (gbps * 1e9) > t)
        t = bytes / (gbps * 1e9);
    return t;
}

static double product_s(const nn_calibration *c, double fixed_us, double n, double in, double out)
{
    double flops = 2 * n * in * out, rate = nn_curve_gflops(&c->linear_bwd, flops);
    if (!(rate > 0))
        rate = c->gemm_gflops;
    if (!(rate > 0) || rate > nn_calibration_peak_gflops(c))
        rate = nn_calibration_peak_gflops(c);
    return call_s(fixed_us + c->matrix_op_us, flops, rate, 4 * (n * out + in * out + n * in), c->mem_gbps);
}

static double tanh_s(const nn_calibration *c, double fixed_us, double n)
{
    double t = call_s(fixed_us, 0, 0, 12 * n, c->mem_gbps), ns = c->elem_ns[NN_OP_TANH][1];
    return ns > 0 && n * ns * 1e-9 > t ? n * ns * 1e-9 : t;
}

/* One reverse (or tangent) pass over n rows, each call at fixed_us. */
static double pass_s(const nn_jac_shape *s, const nn_calibration *c, double fixed_us, double n)
{
    double t = 0;
    for (int l = 0; l < s->n_linear; l++) {
        t += product_s(c, fixed_us, n, s->width[l], s->width[l + 1]);
        if (s->tanh_after[l])
            t += tanh_s(c, fixed_us, n * s->width[l + 1]);
    }
    return t;
}

/* Reading `floats` back: a copy on a device, nothing on host memory. */
static double readback_s(const nn_calibration *c, double floats)
{
    if (!c->profile && strcmp(c->device, "gpu") != 0)
        return 0;
    return c->download_us * 1e-6 + (c->upload_gbps > 0 ? 4 * floats / (c->upload_gbps * 1e9) : 0);
}

double nn_jac_predict_s(const nn_jac_shape *s, long val, enum nn_jac_method m,
                        const nn_calibration *cal, int graph)
{
    double v = (double)val, k = s->width[s->n_linear], in = s->width[0], groups;
    double t = pass_s(s, cal, cal->op_us, v);      /* the forward pass, priced as a pass */
    switch (m) {
    case NN_JAC_ROWS:
        groups = v;                                /* one sample's outputs a group */
        if (graph && cal->has_graph)
            t += groups * (cal->graph_launch_us * 1e-6 + k * pass_s(s, cal, cal->graph_node_us, v));
        else
            t += groups * k * pass_s(s, cal, cal->op_us, v);
        return t + groups * (readback_s(cal, k * v * in) + 2 * (cal->upload_us * 1e-6));
    case NN_JAC_BATCHED: {
        double c = nn_jac_chunk(s, val, m);
        groups = v * k / c;
        return t + groups * (pass_s(s, cal, cal->op_us, c * v) + readback_s(cal, c * v * in));
    }
    case NN_JAC_PER_SAMPLE:
        return t + k * pass_s(s, cal, cal->op_us, v) + readback_s(cal, k * v * in);
    case NN_JAC_FORWARD:
        return t + in * (pass_s(s, cal, cal->op_us, v) + readback_s(cal, v * k));
    default:
        return 0;
    }
}

void nn_jac_sweep_predict(const nn_jac_shape *s, const long *vals, int n, const nn_calibration *cpu,
                          const nn_calibration *gpu, nn_jac_sweep *out)
{
    static const long dflt[] = { 10, 20, 50, 100, 200, 500, 1000, 2000, 5000 };
    memset(out, 0, sizeof *out);
    if (!vals) {
        vals = dflt;
        n = (int)(sizeof dflt / sizeof dflt[0]);
    }
    out->n = n < NN_JAC_SWEEP_MAX ? n : NN_JAC_SWEEP_MAX;
    nn_strlcpy(out->gpu_name, gpu->profile ? gpu->note : gpu->machine, sizeof out->gpu_name);
    for (int m = 0; m < NN_JAC_METHOD_COUNT; m++) {
        for (int i = 0; i < out->n; i++) {
            out->val[i] = vals[i];
            out->cpu_s[m][i] = nn_jac_predict_s(s, vals[i], (enum nn_jac_method)m, cpu, 0);
            out->gpu_s[m][i] = nn_jac_predict_s(s, vals[i], (enum nn_jac_method)m, gpu, 1);
        }
        /* the first val from which the GPU stays faster */
        for (int i = out->n - 1; i >= 0 && out->gpu_s[m][i] < out->cpu_s[m][i]; i--)
            out->gpu_overtakes[m] = out->val[i];
    }
}

void nn_jac_explain(const nn_jac_shape *s, long val, enum nn_jac_method m, char *buf, size_t len)
{
    nn_jac_flops f, fwd;
    nn_jac_flops_of(s, val, m, &f);
    nn_jac_flops_of(s, val, NN_JAC_FORWARD, &fwd);
    double share = f.total > 0 ? 100 * f.zero / f.total : 0;
    if (f.zero > 0)
        snprintf(buf, len, "%.3g%% of these FLOPs multiply zeros: %s runs %.0f reverse passes, one per "
                 "output element, each over the whole batch of %ld, but sample i's outputs depend only "
                 "on sample i's input, so %ld of every %ld rows of each pass compute J's zero blocks; "
                 "the work grows as val^2. per-sample (one pass per output, %.0f passes) and forward "
                 "(one tangent pass) remove the waste: forward needs %.3g FLOPs, %.0fx fewer.",
                 share, nn_jac_method_name(m), f.passes, val, val - 1, val, (double)s->width[s->n_linear],
                 fwd.total, fwd.total > 0 ? f.total / fwd.total : 0);
    else {
        nn_jac_flops rows;
        nn_jac_flops_of(s, val, NN_JAC_ROWS, &rows);
        snprintf(buf, len, "No FLOP of %s multiplies J's zero blocks: it uses the independence of the "
                 "samples (%.0f pass%s over the batch of %ld). rows, PyTorch's vectorize=False, would "
                 "spend %.3g%% of its FLOPs on zeros here.",
                 nn_jac_method_name(m), f.passes, f.passes == 1 ? "" : "es", val,
                 rows.total > 0 ? 100 * rows.zero / rows.total : 0);
    }
}
