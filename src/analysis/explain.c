/* src/analysis/explain.c - see explain.h. */
#include "nnlab/explain.h"

#include <stdio.h>
#include <string.h>

const char *nn_regime_name(nn_regime r)
{
    static const char *const names[] = { "overhead-bound", "memory-bound", "compute-bound" };
    return (unsigned)r < 3 ? names[r] : "?";
}

/* ---- work: the roofline, with the rate of a matrix product's own size ------------ */

/* The curve that prices an op of class k in direction bwd; NULL: the peak. */
static const nn_rate_curve *curve_of(const nn_calibration *cal, nn_op_class k, int bwd)
{
    if (k == NN_OP_LINEAR)
        return bwd ? &cal->linear_bwd : &cal->linear_fwd;
    if (k == NN_OP_CONV)
        return bwd ? &cal->conv_bwd : &cal->conv_fwd;
    return NULL;
}

/* GFLOP/s of one call of `flops` on curve (the sgemm peak without one) */
static double rate_of(const nn_calibration *cal, const nn_rate_curve *curve, double flops)
{
    double r = curve ? nn_curve_gflops(curve, flops) : 0;
    return r > 0 ? r : cal->gemm_gflops;
}

/* The time of an op's arithmetic: a matrix product's FLOPs at the rate of
 * its size, another op's elements at its measured cost per element; the
 * FLOPs at the sgemm peak where the calibration has neither. */
static double arithmetic_us(nn_op_cost c, const nn_calibration *cal, nn_op_class k, int bwd, double elems)
{
    const nn_rate_curve *curve = curve_of(cal, k, bwd);
    double ns = k > NN_OP_CONV && k < NN_OP_CLASSES ? cal->elem_ns[k][bwd] : 0;
    if (!curve && ns > 0)
        return elems * ns * 1e-3;
    double rate = rate_of(cal, curve, c.flops);
    return rate > 0 ? c.flops / (rate * 1e3) : 0;
}

/* One op's work: the larger of its arithmetic and its bytes at the streaming
 * bandwidth. Its arithmetic is never faster than its FLOPs at the peak (the
 * fastest rate calibrated), so compute_us, all FLOPs at the peak, is a floor
 * of the work and of the prediction; so is memory_us. */
static void add_work(nn_explanation *e, nn_op_cost c, const nn_calibration *cal, nn_op_class k, int bwd,
                     double elems)
{
    if (c.bytes <= 0 && c.flops <= 0)
        return;                      /* no such op: a view, or a first layer's backward */
    double t_peak = e->peak_gflops > 0 ? c.flops / (e->peak_gflops * 1e3) : 0;
    double t_flops = arithmetic_us(c, cal, k, bwd, elems);
    double t_bytes = cal->mem_gbps > 0 ? c.bytes / (cal->mem_gbps * 1e3) : 0;
    if (t_flops < t_peak)
        t_flops = t_peak;
    e->work_us += t_flops > t_bytes ? t_flops : t_bytes;
    e->sized_compute_us += t_flops;
    e->compute_us += t_peak;
    e->memory_us += t_bytes;
}

/* Work of every op, and the calls of matrix products (each fwd and bwd is one). */
static void price_work(nn_explanation *e, const nn_calibration *cal)
{
    const nn_cost *c = &e->cost;
    e->peak_gflops = nn_calibration_peak_gflops(cal);
    for (int i = 0; i < c->n_layers; i++) {
        const nn_layer_cost *l = &c->layers[i];
        add_work(e, l->fwd, cal, l->op_class, 0, l->elems);
        add_work(e, l->bwd, cal, l->op_class, 1, l->elems);
        if (l->op_class == NN_OP_LINEAR || l->op_class == NN_OP_CONV)
            e->matrix_calls += (l->fwd.bytes > 0) + (l->bwd.bytes > 0);
    }
    /* a loss (with its gradient) and an optimiser step are one call each */
    add_work(e, c->loss, cal, c->loss_class, 0, c->loss_elems);
    add_work(e, c->optimizer, cal, c->optimizer_class, 0, (double)c->params);
    /* a matrix product's fixed cost beyond issuing it (a thread wake-up, the
     * BLAS call's own set-up): the smallest product's time less a tiny op's */
    double extra = cal->matrix_op_us - cal->op_us;
    e->fixed_us = e->matrix_calls * (extra > 0 ? extra : 0);
}

/* ---- overheads: issuing, copies, synchronisation ------------------------------------ */

/* Operations of the step proper (what a graph records): one per working layer
 * forward and per backward, the loss, the optimiser. */
static int compute_ops(const nn_cost *c)
{
    int ops = 2;
    for (int i = 0; i < c->n_layers; i++)
        ops += (c->layers[i].fwd.bytes > 0) + (c->layers[i].bwd.bytes > 0);
    return ops;
}

/* Operations issued per step outside the step proper: the gather of a batch
 * from a resident data set is a kernel; uploads are copies (copy_us). */
static int copy_ops(const nn_explain_options *opt)
{
    return !opt->host_memory && opt->data_on_device ? 1 : 0;
}

static void price_issue(nn_explanation *e, const nn_calibration *cal, const nn_explain_options *opt)
{
    int step_ops = compute_ops(&e->cost), outside = copy_ops(opt);
    e->priced_graph = opt->graph && !opt->host_memory && cal->has_graph;
    if (!e->priced_graph) {
        e->ops = opt->launches_per_step > 0 ? opt->launches_per_step : step_ops + outside;
        e->issue_us = e->ops * cal->op_us;
        if (!opt->host_memory && cal->has_graph) {
            /* the same step recorded: one launch and a node per op instead of a launch per op */
            int recordable = e->ops - outside > 0 ? e->ops - outside : 0;
            double saving = recordable * cal->op_us - (cal->graph_launch_us + recordable * cal->graph_node_us);
            e->graph_saving_us = saving > 0 ? saving : 0;
        }
        return;
    }
    /* the backend's launches include the graph launch itself */
    int eager = opt->launches_per_step > 0 ? opt->launches_per_step - 1 : outside;
    e->graph_nodes = opt->graph_nodes_per_step > 0 ? opt->graph_nodes_per_step : step_ops;
    e->ops = eager + 1;
    e->issue_us = eager * cal->op_us + cal->graph_launch_us + e->graph_nodes * cal->graph_node_us;
}

/* The batch into the device's memory. In host memory, or from a resident
 * data set, it is a gather (read and write the batch); otherwise the host
 * gathers it into a staging buffer and copies it up as samples and labels. */
static void price_copy(nn_explanation *e, const nn_calibration *cal, const nn_explain_options *opt)
{
    double bytes = e->cost.input_bytes;
    if (opt->host_memory || opt->data_on_device) {
        double bw = opt->host_memory ? cal->host_copy_gbps : cal->mem_gbps;
        e->copy_us = bw > 0 ? 2.0 * bytes / (bw * 1e3) : 0;
        return;
    }
    e->priced_pinned = opt->pinned && cal->has_pinned;
    double fixed = e->priced_pinned ? cal->pinned_upload_us : cal->upload_us;
    double bw = e->priced_pinned ? cal->pinned_upload_gbps : cal->upload_gbps;
    e->copy_us = 2.0 * fixed + (bw > 0 ? bytes / (bw * 1e3) : 0) +
                 (cal->host_copy_gbps > 0 ? 2.0 * bytes / (cal->host_copy_gbps * 1e3) : 0);
}

/* Reading the loss back is a download and the wait for it; a calibration
 * from before downloads were measured has only the tiny op's round trip. */
static double sync_cost(const nn_calibration *cal, const nn_explain_options *opt)
{
    if (!opt->sync_every_step)
        return 0;
    return cal->download_us > 0 ? cal->download_us : cal->sync_us;
}

/* The fixed cost of the copies alone (what does not grow with the batch). */
static double copy_fixed_us(const nn_explanation *e, const nn_calibration *cal, const nn_explain_options *opt)
{
    if (opt->host_memory || opt->data_on_device)
        return 0;
    return 2.0 * (e->priced_pinned ? cal->pinned_upload_us : cal->upload_us);
}

/* ---- the regime and the advice ------------------------------------------------------ */

/* "41 launches x 4.10 us = 168.1 us" or the graph's equivalent, and the
 * other fixed costs that are there, into buf. */
static void describe_overheads(const nn_explanation *e, const nn_calibration *cal, const nn_explain_options *opt,
                               char *buf, size_t len)
{
    int n;
    if (e->priced_graph)
        n = snprintf(buf, len, "one graph of %d nodes: %.1f + %d x %.2f us%s = %.1f us", e->graph_nodes,
                     cal->graph_launch_us, e->graph_nodes, cal->graph_node_us,
                     e->ops > 1 ? " plus the launches outside it" : "", e->issue_us);
    else
        n = snprintf(buf, len, "%d %s x %.2f us = %.1f us", e->ops, opt->host_memory ? "ops" : "launches",
                     cal->op_us, e->issue_us);
    if (n < 0 || (size_t)n >= len)
        return;
    if (e->fixed_us > 0) {
        int m = snprintf(buf + n, len - (size_t)n, ", %d matrix products x %.2f us fixed = %.1f us",
                         e->matrix_calls, e->fixed_us / e->matrix_calls, e->fixed_us);
        if (m < 0 || (size_t)(n + m) >= len)
            return;
        n += m;
    }
    if (e->sync_us > 0) {
        int m = snprintf(buf + n, len - (size_t)n, ", a loss read-back %.1f us", e->sync_us);
        if (m < 0 || (size_t)(n + m) >= len)
            return;
        n += m;
    }
    double copies = copy_fixed_us(e, cal, opt);
    if (copies > 0)
        snprintf(buf + n, len - (size_t)n, ", 2 copies %.1f us fixed", copies);
}

/* The arithmetic: its FLOPs, the time they take at the rates calibrated for
 * ops of their sizes, and what rate that is on average against the peak
 * (one FLOP time, with the units that make it). */
static void describe_arithmetic(const nn_explanation *e, char *buf, size_t len)
{
    double mflop = e->cost.total.flops * 1e-6;
    double rate = e->sized_compute_us > 0 ? mflop / e->sized_compute_us : 0;   /* MFLOP/us = TFLOP/s */
    snprintf(buf, len, "%.1f MFLOP per step take %.1f us at the rates measured for ops of these sizes "
             "(%.1f GFLOP/s on average, %.0f%% of the %.0f GFLOP/s peak)",
             mflop, e->sized_compute_us, rate * 1e3, e->peak_gflops > 0 ? 100.0 * rate * 1e3 / e->peak_gflops : 0,
             e->peak_gflops);
}

static void name_regime(nn_explanation *e, const nn_calibration *cal, const nn_explain_options *opt)
{
    double fixed = e->issue_us + e->sync_us + e->fixed_us + copy_fixed_us(e, cal, opt);
    char parts[256];
    if (fixed >= e->work_us) {
        e->regime = NN_REGIME_OVERHEAD;
        describe_overheads(e, cal, opt, parts, sizeof parts);
        snprintf(e->why, sizeof e->why,
                 "%s: %.1f us of fixed cost of %.1f us predicted: overhead-bound; the work (arithmetic "
                 "or bytes, per op the larger) is %.1f us",
                 parts, fixed, e->predicted_us, e->work_us);
    } else if (e->memory_us > e->sized_compute_us) {
        e->regime = NN_REGIME_MEMORY;
        snprintf(e->why, sizeof e->why,
                 "%.1f MB moved per step = %.1f us at %.1f GB/s > %.1f us of arithmetic: memory-bound",
                 e->cost.total.bytes * 1e-6, e->memory_us, cal->mem_gbps, e->sized_compute_us);
    } else {
        e->regime = NN_REGIME_COMPUTE;
        describe_arithmetic(e, parts, sizeof parts);
        snprintf(e->why, sizeof e->why, "%s > %.1f us of memory traffic: compute-bound", parts, e->memory_us);
    }
}

static void advise_overhead(nn_explanation *e, const nn_calibration *cal, const nn_explain_options *opt)
{
    if (opt->host_memory) {
        snprintf(e->advice, sizeof e->advice,
                 "a larger batch: the %.1f us of fixed cost per step is paid once for all %d samples",
                 e->issue_us + e->sync_us + e->fixed_us, e->cost.batch);
    } else if (e->graph_saving_us > 0) {
        snprintf(e->advice, sizeof e->advice,
                 "a CUDA graph would save ~%.0f us (one launch of %.1f us and %.2f us a node instead of "
                 "%.2f us a launch); a larger batch adds work at almost no extra cost",
                 e->graph_saving_us, cal->graph_launch_us, cal->graph_node_us, cal->op_us);
    } else if (!e->priced_graph && !cal->has_graph) {
        snprintf(e->advice, sizeof e->advice,
                 "replaying the step as one CUDA graph would save most of the %.0f us of launches; "
                 "a larger batch adds work at almost no extra cost",
                 e->issue_us);
    } else if (e->sync_us > 0 && e->sync_us >= e->issue_us) {
        snprintf(e->advice, sizeof e->advice,
                 "reading the loss back every step costs %.1f us: read it only when reporting", e->sync_us);
    } else if (!opt->data_on_device && copy_fixed_us(e, cal, opt) >= e->issue_us) {
        snprintf(e->advice, sizeof e->advice,
                 "the two copies cost %.1f us before any work: keep the data set on the device",
                 copy_fixed_us(e, cal, opt));
    } else {
        snprintf(e->advice, sizeof e->advice,
                 "a larger batch: the %.1f us of fixed cost per step is paid once for all %d samples",
                 e->issue_us + e->sync_us + e->fixed_us, e->cost.batch);
    }
}

static void advise(nn_explanation *e, const nn_calibration *cal, const nn_explain_options *opt)
{
    double opt_share = e->cost.optimizer.bytes > 0 && e->cost.total.bytes > 0
                       ? e->cost.optimizer.bytes / e->cost.total.bytes : 0;
    switch (e->regime) {
    case NN_REGIME_OVERHEAD:
        advise_overhead(e, cal, opt);
        break;
    case NN_REGIME_MEMORY:
        if (opt_share > 0.5)
            snprintf(e->advice, sizeof e->advice,
                     "the optimiser's pass over %zu parameters is %.0f%% of the bytes; a larger batch "
                     "amortises it",
                     e->cost.params, 100.0 * opt_share);
        else
            snprintf(e->advice, sizeof e->advice,
                     "elementwise layers dominate the traffic; fusing them with the layer before would "
                     "halve it");
        break;
    case NN_REGIME_COMPUTE:
        if (e->sized_compute_us > 1.5 * e->compute_us)
            snprintf(e->advice, sizeof e->advice,
                     "the products are small: they run at %.0f%% of the peak; a larger batch makes them "
                     "larger and faster per FLOP",
                     100.0 * e->compute_us / e->sized_compute_us);
        else
            snprintf(e->advice, sizeof e->advice,
                     "the step is arithmetic at the device's peak: only a faster device (more FLOP/s) helps");
        break;
    }
}

void nn_explain(const nn_preset *p, int batch, const nn_calibration *cal,
                const nn_explain_options *opt, nn_explanation *out)
{
    memset(out, 0, sizeof *out);
    nn_cost_model(p, batch, &out->cost);
    price_work(out, cal);
    price_issue(out, cal, opt);
    price_copy(out, cal, opt);
    out->sync_us = sync_cost(cal, opt);
    out->predicted_us = out->issue_us + out->copy_us + out->sync_us + out->fixed_us + out->work_us;
    name_regime(out, cal, opt);
    advise(out, cal, opt);
}
