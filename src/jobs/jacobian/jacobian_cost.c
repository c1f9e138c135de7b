/* src/jobs/jacobian/jacobian_cost.c - what each Jacobian method computes
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
#include "nnlab/device.h"

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

/* How a method's calls are issued. nnlab: each call at the device's op cost,
 * rows' groups replayed as one recorded graph where the device has graphs.
 * A framework in eager mode (PyTorch's torch.autograd.functional.jacobian):
 * no graph; every operation also pays the framework's host cost on this
 * device, and a pass issues more operations than its kernels, as counted
 * in PyTorch's code for one reverse pass of vectorize=False:
 *   - each linear layer's backward is two (a transpose view and the mm);
 *   - around the layers, FRAMEWORK_PASS_OPS: the output element read (a
 *     view and a select), autograd.grad's cotangent for it (ones_like), the
 *     select's backward (zeros of the output's size, a select, a copy_ of
 *     the 1) and the view's backward; FRAMEWORK_PASS_KERNELS of them launch
 *     a kernel (ones, zeros, copy_), and the zeros fill n*out floats. */
#define FRAMEWORK_PASS_OPS 7
#define FRAMEWORK_PASS_KERNELS 3

typedef struct issuing {
    const nn_calibration *c;
    double call_us;              /* the fixed cost of one kernel call */
    double framework_us;         /* a framework's host cost per operation here (0: nnlab) */
    int graph;                   /* rows' groups replay a recorded graph */
    int framework;
} issuing;

static issuing issuing_of(const nn_calibration *c, int graph, int framework, double framework_us)
{
    issuing w = { c, c->op_us, 0, graph && c->has_graph && !framework, framework };
    if (framework) {
        w.framework_us = framework_us > 0 ? framework_us : 0;
        w.call_us += w.framework_us;
    }
    return w;
}

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

/* One product of n rows, in to out (a pass's input gradient alone, or the
 * forward's): priced at the linear-forward curve, whose calls are one
 * product each (the backward curve's calls make dW and dx both). */
static double product_s(const nn_calibration *c, double fixed_us, double n, double in, double out)
{
    double flops = 2 * n * in * out, rate = nn_curve_gflops(&c->linear_fwd, flops);
    if (!(rate > 0))
        rate = c->gemm_gflops;
    if (!(rate > 0) || rate > nn_calibration_peak_gflops(c))
        rate = nn_calibration_peak_gflops(c);
    /* a product's fixed cost beyond issuing it, as explain.c prices it:
     * matrix_op_us is a whole tiny product, its issue included */
    double extra = c->matrix_op_us - c->op_us;
    return call_s(fixed_us + (extra > 0 ? extra : 0), flops, rate, 4 * (n * out + in * out + n * in), c->mem_gbps);
}

static double tanh_s(const nn_calibration *c, double fixed_us, double n)
{
    double t = call_s(fixed_us, 0, 0, 12 * n, c->mem_gbps), ns = c->elem_ns[NN_OP_TANH][1];
    return ns > 0 && n * ns * 1e-9 > t ? n * ns * 1e-9 : t;
}

/* One reverse (or tangent) pass over n rows, each call at fixed_us. */
static double layers_s(const nn_jac_shape *s, const nn_calibration *c, double fixed_us, double n)
{
    double t = 0;
    for (int l = 0; l < s->n_linear; l++) {
        t += product_s(c, fixed_us, n, s->width[l], s->width[l + 1]);
        if (s->tanh_after[l])
            t += tanh_s(c, fixed_us, n * s->width[l + 1]);
    }
    return t;
}

/* A pass over n rows as w issues it; a framework's adds its own operations
 * and the fill of its cotangent (n rows of `out`). */
static double pass_s(const nn_jac_shape *s, const issuing *w, double n)
{
    double t = layers_s(s, w->c, w->call_us, n);
    if (w->framework) {
        double views = s->n_linear + FRAMEWORK_PASS_OPS - FRAMEWORK_PASS_KERNELS;
        t += views * w->framework_us * 1e-6 + (FRAMEWORK_PASS_KERNELS - 1) * w->call_us * 1e-6 +
             call_s(w->call_us, 0, 0, 4 * n * s->width[s->n_linear], w->c->mem_gbps);
    }
    return t;
}

/* Reading `floats` back: a copy on a device, nothing on host memory. A
 * framework keeps its result on the device (it returns a device tensor). */
static double readback_s(const issuing *w, double floats)
{
    const nn_calibration *c = w->c;
    if (w->framework || (!c->profile && !nn_device_kind_of(c->device).gpu))
        return 0;
    return c->download_us * 1e-6 + (c->upload_gbps > 0 ? 4 * floats / (c->upload_gbps * 1e9) : 0);
}

/* rows: val groups of one sample's outputs; nnlab moves the cotangent's 1
 * with two tiny uploads a group. */
static double rows_s(const nn_jac_shape *s, double v, const issuing *w)
{
    const nn_calibration *c = w->c;
    double k = s->width[s->n_linear], in = s->width[0], group;
    if (w->graph)
        group = c->graph_launch_us * 1e-6 + k * layers_s(s, c, c->graph_node_us, v);
    else
        group = k * pass_s(s, w, v);
    if (!w->framework)
        group += readback_s(w, k * v * in) + 2 * (c->upload_us * 1e-6);
    return v * group;
}

static double predict_way(const nn_jac_shape *s, long val, enum nn_jac_method m, const issuing *w)
{
    double v = (double)val, k = s->width[s->n_linear], in = s->width[0];
    double t = layers_s(s, w->c, w->call_us, v);   /* the forward pass, priced as a pass */
    switch (m) {
    case NN_JAC_ROWS:
        return t + rows_s(s, v, w);
    case NN_JAC_BATCHED: {
        double c = nn_jac_chunk(s, val, m);
        return t + v * k / c * (pass_s(s, w, c * v) + readback_s(w, c * v * in));
    }
    case NN_JAC_PER_SAMPLE:
        return t + k * pass_s(s, w, v) + readback_s(w, k * v * in);
    case NN_JAC_FORWARD:
        return t + in * (pass_s(s, w, v) + readback_s(w, v * k));
    default:
        return 0;
    }
}

double nn_jac_predict_s(const nn_jac_shape *s, long val, enum nn_jac_method m,
                        const nn_calibration *cal, int graph)
{
    issuing w = issuing_of(cal, graph, 0, 0);
    return predict_way(s, val, m, &w);
}

double nn_jac_predict_framework_s(const nn_jac_shape *s, long val, enum nn_jac_method m,
                                  const nn_calibration *cal, double framework_op_us)
{
    issuing w = issuing_of(cal, 0, 1, framework_op_us);
    return predict_way(s, val, m, &w);
}

const char *nn_jac_way_name(enum nn_jac_way w)
{
    return w == NN_JAC_WAY_NNLAB ? "nnlab" : w == NN_JAC_WAY_FRAMEWORK ? "framework eager" : "?";
}

/* The first val from which the GPU stays faster (0: not within the sweep). */
static long overtakes(const nn_jac_sweep *sw, const double *cpu, const double *gpu)
{
    long from = 0;
    for (int i = sw->n - 1; i >= 0 && gpu[i] < cpu[i]; i--)
        from = sw->val[i];
    return from;
}

void nn_jac_sweep_predict(const nn_jac_shape *s, const long *vals, int n, const nn_calibration *cpu,
                          const nn_calibration *gpu, const nn_jac_framework *fw, nn_jac_sweep *out)
{
    static const long dflt[] = { 10, 20, 50, 100, 200, 500, 1000, 2000, 5000 };
    memset(out, 0, sizeof *out);
    if (!vals) {
        vals = dflt;
        n = (int)(sizeof dflt / sizeof dflt[0]);
    }
    out->n = n < NN_JAC_SWEEP_MAX ? n : NN_JAC_SWEEP_MAX;
    out->framework = *fw;
    nn_strlcpy(out->gpu_name, gpu->profile ? gpu->note : gpu->machine, sizeof out->gpu_name);
    for (int i = 0; i < out->n; i++)
        out->val[i] = vals[i];
    for (int m = 0; m < NN_JAC_METHOD_COUNT; m++) {
        enum nn_jac_method jm = (enum nn_jac_method)m;
        for (int i = 0; i < out->n; i++) {
            out->cpu_s[NN_JAC_WAY_NNLAB][m][i] = nn_jac_predict_s(s, vals[i], jm, cpu, 0);
            out->gpu_s[NN_JAC_WAY_NNLAB][m][i] = nn_jac_predict_s(s, vals[i], jm, gpu, 1);
            out->cpu_s[NN_JAC_WAY_FRAMEWORK][m][i] = nn_jac_predict_framework_s(s, vals[i], jm, cpu, fw->cpu_op_us);
            out->gpu_s[NN_JAC_WAY_FRAMEWORK][m][i] = nn_jac_predict_framework_s(s, vals[i], jm, gpu, fw->gpu_op_us);
        }
        for (int w = 0; w < NN_JAC_WAYS; w++)
            out->gpu_overtakes[w][m] = overtakes(out, out->cpu_s[w][m], out->gpu_s[w][m]);
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

/* One way's verdict as a clause: "from val 200 on" / "at no val up to 5000". */
static void verdict_clause(const nn_jac_sweep *sw, enum nn_jac_way w, int m, char *buf, size_t len)
{
    if (sw->gpu_overtakes[w][m])
        snprintf(buf, len, "from val %ld on", sw->gpu_overtakes[w][m]);
    else
        snprintf(buf, len, "at no val up to %ld", sw->val[sw->n - 1]);
}

/* The first val of the sweep at or above val (its last when none). */
static int sweep_index(const nn_jac_sweep *sw, long val)
{
    int i = 0;
    while (i < sw->n - 1 && sw->val[i] < val)
        i++;
    return i;
}

void nn_jac_sweep_verdict(const nn_jac_sweep *sw, enum nn_jac_method m, long val, char *buf, size_t len)
{
    char fw[48], own[48];
    int i = sweep_index(sw, val);
    const double *fc = sw->cpu_s[NN_JAC_WAY_FRAMEWORK][m], *fg = sw->gpu_s[NN_JAC_WAY_FRAMEWORK][m];
    verdict_clause(sw, NN_JAC_WAY_FRAMEWORK, (int)m, fw, sizeof fw);
    verdict_clause(sw, NN_JAC_WAY_NNLAB, (int)m, own, sizeof own);
    snprintf(buf, len, "Predicted (GPU: %s): run by a framework in eager mode, %s on the GPU overtakes this "
             "machine's CPU %s (at val %ld: CPU %.3g s, GPU %.3g s: each of its operations costs the host %.3g us "
             "on the CPU, %.3g us on a GPU, however little it computes); with nnlab's own passes, %s.",
             sw->gpu_name, nn_jac_method_name(m), fw, sw->val[i], fc[i], fg[i], sw->framework.cpu_op_us,
             sw->framework.gpu_op_us, own);
}
