/* src/analysis/model/explain.c - see explain.h. */
#include "nnlab/explain.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

/* An elementwise op's calibrated cost per element, 0 for another class or
 * where the calibration has none. */
static double elem_ns_of(const nn_calibration *cal, nn_op_class k, int bwd)
{
    return k > NN_OP_CONV && k < NN_OP_CLASSES ? cal->elem_ns[k][bwd] : 0;
}

/* The time of an op's arithmetic: a matrix product's FLOPs at the rate of
 * its size, another op's elements at its measured cost per element; the
 * FLOPs at the sgemm peak where the calibration has neither. */
static double arithmetic_us(nn_op_cost c, const nn_calibration *cal, nn_op_class k, int bwd, double elems)
{
    const nn_rate_curve *curve = curve_of(cal, k, bwd);
    double ns = elem_ns_of(cal, k, bwd);
    if (k == NN_OP_NONE)
        ns = cal->calls.layer_ns;    /* a layer's own kernels (a profile's figure; 0: its bytes) */
    if (!curve && ns > 0)
        return elems * ns * 1e-3;
    double rate = rate_of(cal, curve, c.flops);
    return rate > 0 ? c.flops / (rate * 1e3) : 0;
}

/* The rate a larger call of the same kind reaches: the best rate of the
 * curve at this size or any larger one measured (the peak without a curve).
 * A larger batch makes every product a larger call, so the time beyond the
 * FLOPs at this rate is what it would amortise. */
static double large_call_rate(const nn_calibration *cal, nn_op_class k, int bwd, double flops)
{
    const nn_rate_curve *curve = curve_of(cal, k, bwd);
    double r = rate_of(cal, curve, flops);
    for (int i = 0; curve && i < curve->n; i++)
        if (curve->flops[i] > flops && curve->gflops[i] > r)
            r = curve->gflops[i];
    return r;
}

/* 1 when an elementwise op's calibrated cost per element (measured over
 * NN_ELEM_CALIBRATION cache-resident elements) already holds its memory
 * traffic: its bytes at the streaming bandwidth are then no floor (an Adam
 * step over 102k parameters: 64 us by its bytes, 15-26 measured). */
static int measured_with_its_bytes(const nn_calibration *cal, nn_op_class k, int bwd, double elems)
{
    return elem_ns_of(cal, k, bwd) > 0 && elems > 0 && elems <= NN_ELEM_CALIBRATION;
}

/* One op's work: the larger of its arithmetic and its bytes at the streaming
 * bandwidth. Its arithmetic is never faster than its FLOPs at the peak (the
 * fastest rate calibrated), so compute_us, all FLOPs at the peak, is a floor
 * of the work and of the prediction; so is memory_us. Returns the op's work;
 * a matrix product's shortfall (its work beyond what it would take run as
 * fast as a larger call: what being small costs it) is added to
 * shortfall_us. */
static double add_work(nn_explanation *e, nn_op_cost c, const nn_calibration *cal, nn_op_class k, int bwd,
                       double elems)
{
    if (c.bytes <= 0 && c.flops <= 0)
        return 0;                    /* no such op: a view, or a first layer's backward */
    double t_peak = e->peak_gflops > 0 ? c.flops / (e->peak_gflops * 1e3) : 0;
    double t_flops = arithmetic_us(c, cal, k, bwd, elems);
    double t_bytes = cal->mem_gbps > 0 ? c.bytes / (cal->mem_gbps * 1e3) : 0;
    if (t_flops < t_peak)
        t_flops = t_peak;
    if (measured_with_its_bytes(cal, k, bwd, elems) && t_bytes > t_flops)
        t_bytes = t_flops;
    double work = t_flops > t_bytes ? t_flops : t_bytes;
    e->work_us += work;
    if (k >= 0 && k < NN_OP_CLASSES)
        e->class_work_us[k] += work;
    e->sized_compute_us += t_flops;
    e->compute_us += t_peak;
    e->memory_us += t_bytes;
    if (k == NN_OP_LINEAR || k == NN_OP_CONV) {
        double r = large_call_rate(cal, k, bwd, c.flops), t_large = r > 0 ? c.flops / (r * 1e3) : 0;
        if (t_large < t_bytes)
            t_large = t_bytes;
        e->products_us += work;
        e->shortfall_us += work > t_large ? work - t_large : 0;
    }
    return work;
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
    e->optimizer_us = add_work(e, c->optimizer, cal, c->optimizer_class, 0, (double)c->params);
    /* a matrix product's fixed cost beyond issuing it (a thread wake-up, the
     * BLAS call's own set-up): the smallest product's time less a tiny op's */
    double extra = cal->matrix_op_us - cal->op_us;
    e->fixed_us = e->matrix_calls * (extra > 0 ? extra : 0);
}

static int copy_ops(const nn_explain_options *opt);

/* The kind of call an op is (calibrate.h): what its fixed time is. */
static enum nn_call_kind call_kind(nn_op_class k, int bwd)
{
    if (k == NN_OP_NONE)
        return NN_CALL_LAYER;
    if (k == NN_OP_CONV)
        return bwd ? NN_CALL_CONV_BWD : NN_CALL_CONV_FWD;
    if (k == NN_OP_LINEAR)
        return bwd ? NN_CALL_LINEAR_BWD : NN_CALL_LINEAR_FWD;
    return NN_CALL_OTHER;
}

/* Elements of a layer's output for the whole batch. */
static double output_elements(const nn_layer_cost *l, int batch)
{
    double n = batch;
    for (int d = 0; d < l->out_shape.rank && d < 3; d++)
        n *= l->out_shape.dim[d];
    return n;
}

/* One call's device time beyond its work at the library's rate: its fixed
 * time, and its reductions, which grew on the H200 as the square root of
 * the rows reduced: a linear layer's or a layer's bias gradient over the
 * batch, a convolution's over its output elements (calc_bias_diff in
 * kernels.txt). A convolution's backward call beyond a size also pays its
 * FLOPs beyond it at a slow rate: there cuDNN took a slow deterministic
 * filter-gradient algorithm (kernels.txt: 54% of LeNet's kernel time at
 * batch 1024), which the calibration's conv_bwd curve shows as its rate
 * falling from 2963 to 1213 GFLOP/s past 23 MFLOP a call. */
static double call_us(const nn_call_costs *calls, enum nn_call_kind kind, const nn_layer_cost *l, double flops,
                      int batch)
{
    double rows = kind == NN_CALL_CONV_BWD ? output_elements(l, batch) : batch;
    double t = calls->device_us[kind] + sqrt(rows) * calls->reduce_us[kind];
    double beyond = flops - calls->conv_bwd_slow_flops;
    if (kind == NN_CALL_CONV_BWD && calls->conv_bwd_slow_gflops > 0 && beyond > 0)
        t += beyond / (calls->conv_bwd_slow_gflops * 1e3);
    return t;
}

/* A profile's fixed time of each call on the device, by its kind (the
 * recorded H200 run: a cuDNN convolution's backward runs three or more
 * kernels, each a few microseconds at least, whatever its size), and the
 * library calls whose host cost eager pays. Nothing without such figures. */
static void price_calls(nn_explanation *e, const nn_calibration *cal, const nn_explain_options *opt)
{
    const nn_cost *c = &e->cost;
    if (!cal->calls.has)
        return;
    for (int i = 0; i < c->n_layers; i++)
        for (int bwd = 0; bwd < 2; bwd++) {
            const nn_layer_cost *l = &c->layers[i];
            nn_op_cost oc = bwd ? l->bwd : l->fwd;
            if (oc.bytes <= 0 && oc.flops <= 0)
                continue;            /* a view, or a first layer's backward */
            enum nn_call_kind kind = call_kind(l->op_class, bwd);
            e->calls_us += call_us(&cal->calls, kind, l, oc.flops, c->batch);
            if (kind <= NN_CALL_LINEAR_BWD)
                e->library_calls[kind >= NN_CALL_LINEAR_FWD]++;
        }
    /* the loss, the optimiser and (data on the device) the gather: own kernels */
    e->calls_us += (2 + copy_ops(opt)) * cal->calls.device_us[NN_CALL_OTHER];
    e->library_us = e->library_calls[0] * cal->calls.library_host_us[0] +
                    e->library_calls[1] * cal->calls.library_host_us[1];
}

/* A framework's step before its copy and read-back: its host's issue plus
 * the share of the device's time not hidden behind it, never less than the
 * device's time itself. */
static int framework_host_bound(const nn_explanation *e, const nn_explain_options *opt)
{
    double device = e->fixed_us + e->calls_us + e->work_us;
    return e->issue_us + opt->framework_device_ratio * device >= device;
}

static double framework_core_us(const nn_explanation *e, const nn_explain_options *opt)
{
    double device = e->fixed_us + e->calls_us + e->work_us;
    return framework_host_bound(e, opt) ? e->issue_us + opt->framework_device_ratio * device : device;
}

/* The step: its parts added up; eager on a GPU whose profile gives the
 * calls' device times, the host issues while the device runs, so the step
 * waits for the longer of the two before its copies and its read-back. */
static double predict_step(nn_explanation *e, const nn_calibration *cal, const nn_explain_options *opt)
{
    double device = e->fixed_us + e->calls_us + e->work_us;
    e->overlapped = cal->calls.has && !e->priced_graph && !opt->host_memory && !opt->framework;
    if (e->overlapped) {
        e->issue_us += e->library_us;
        return (e->issue_us > device ? e->issue_us : device) + e->copy_us + e->sync_us;
    }
    if (opt->framework)          /* the host issues while the device works (nnlab/framework.h) */
        return framework_core_us(e, opt) + e->copy_us + e->sync_us;
    return e->issue_us + e->copy_us + e->sync_us + device;
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

/* The chunks a batch norm over ghost batches cuts the batch into (PyTorch's
 * torch.chunk, as pytorch-tabnet's GBN): each normalised on its own, a
 * forward and a backward each. */
static int ghost_chunks(const nn_layer_spec *s, int batch)
{
    if (s->kind != NN_LAYER_BATCHNORM || s->virtual_batch <= 0 || batch <= s->virtual_batch)
        return 1;
    return (batch + s->virtual_batch - 1) / s->virtual_batch;
}

int nn_framework_conv_layers(const nn_cost *c)
{
    int n = 0;
    for (int i = 0; i < c->n_layers; i++)
        n += c->layers[i].op_class == NN_OP_CONV && c->layers[i].fwd.bytes > 0;
    return n;
}

int nn_framework_ops(const nn_preset *p, const nn_cost *c)
{
    int ops = 4, tensors = 0;        /* the loss: forward and backward, two kernels each */
    for (int i = 0; i < c->n_layers; i++) {
        const nn_layer_cost *l = &c->layers[i];
        if (l->fwd.bytes <= 0)
            continue;                /* a view */
        const nn_layer_spec *s = &p->layers[i];
        if (nn_layer_weights(s) > 0) {
            /* the layer and its bias; dW, db and dx (not for a layer reading the
             * data); a layer using another's weights (l->params 0) still runs
             * them, its optimiser tensors are its owner's */
            int bias = nn_layer_bias(s) > 0;
            ops += 1 + bias + 1 + bias + nn_layer_needs_any_dx(p->layers, i);
            tensors += l->params > 0 ? 1 + bias : 0;
        } else {
            ops += 1 + (l->bwd.bytes > 0);
        }
        ops += 2 * (ghost_chunks(s, c->batch) - 1);
    }
    int per_tensor = p->opt == NN_OPT_ADAM ? 6 : p->momentum > 0 ? 3 : 1;
    return ops + tensors * (per_tensor + 1);     /* + zeroing each gradient */
}

/* Operations issued per step outside the step proper: the gather of a batch
 * from a resident data set is a kernel; uploads are copies (copy_us). */
static int copy_ops(const nn_explain_options *opt)
{
    return !opt->host_memory && opt->data_on_device && !opt->framework ? 1 : 0;
}

static void price_issue(nn_explanation *e, const nn_preset *p, const nn_calibration *cal,
                        const nn_explain_options *opt)
{
    int step_ops = opt->framework ? nn_framework_ops(p, &e->cost) : compute_ops(&e->cost), outside = copy_ops(opt);
    e->priced_graph = opt->graph && !opt->framework && !opt->host_memory && cal->has_graph;
    if (!e->priced_graph) {
        e->ops = opt->launches_per_step > 0 ? opt->launches_per_step : step_ops + outside;
        e->issue_us = e->ops * (cal->op_us + (opt->framework ? opt->framework_op_us : 0));
        if (opt->framework)      /* nnlab/framework.h's GPU form: its host */
            e->issue_us += opt->framework_step_us + nn_framework_conv_layers(&e->cost) * opt->framework_conv_us;
        if (!opt->host_memory && !opt->framework && cal->has_graph) {
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
    if (opt->framework && opt->data_on_device)
        return;                  /* a framework indexes a batch already there: a view */
    if (opt->host_memory || opt->data_on_device) {
        double bw = opt->host_memory ? cal->host_copy_gbps : cal->mem_gbps;
        e->copy_us = bw > 0 ? 2.0 * bytes / (bw * 1e3) : 0;
        return;
    }
    e->priced_pinned = opt->pinned && cal->has_pinned;
    double fixed = e->priced_pinned ? cal->pinned_upload_us : cal->upload_us;
    double bw = e->priced_pinned ? cal->pinned_upload_gbps : cal->upload_gbps;
    e->copy_us = 2.0 * fixed + (bw > 0 ? bytes / (bw * 1e3) : 0);
    if (!opt->framework && cal->host_copy_gbps > 0)   /* a framework's .to(device) of a batch as it is */
        e->copy_us += 2.0 * bytes / (cal->host_copy_gbps * 1e3);
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

/* Appends to buf (n characters used so far, of len); stops quietly when full. */
static void appendf(char *buf, size_t len, size_t *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void appendf(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
    va_list ap;
    if (*n >= len)
        return;
    va_start(ap, fmt);
    int m = vsnprintf(buf + *n, len - *n, fmt, ap);
    va_end(ap);
    *n = m < 0 ? len : *n + (size_t)m;
}

/* "18 launches x 2.50 us = 45.0 us" (a framework's: "x (2.50 + 10.00 us of
 * framework)"), or the graph's equivalent. */
static void describe_issue(const nn_explanation *e, const nn_calibration *cal, const nn_explain_options *opt,
                           char *buf, size_t len, size_t *n)
{
    if (e->priced_graph)
        appendf(buf, len, n, "one graph of %d nodes: %.1f + %d x %.2f us%s = %.1f us", e->graph_nodes,
                cal->graph_launch_us, e->graph_nodes, cal->graph_node_us,
                e->ops > 1 ? " plus the launches outside it" : "", e->issue_us);
    else if (opt->framework)
        appendf(buf, len, n, "the framework's host: %.1f us a step + %d ops x (%.2f launch + %.2f us) + %d "
                "convolutions x %.1f us = %.1f us", opt->framework_step_us, e->ops, cal->op_us,
                opt->framework_op_us, nn_framework_conv_layers(&e->cost), opt->framework_conv_us, e->issue_us);
    else
        appendf(buf, len, n, "%d %s x %.2f us = %.1f us", e->ops, opt->host_memory ? "ops" : "launches",
                cal->op_us, e->issue_us);
}

/* What a larger batch would amortise, each part that is there with its
 * numbers, into buf. */
static void describe_overheads(const nn_explanation *e, const nn_calibration *cal, const nn_explain_options *opt,
                               char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    describe_issue(e, cal, opt, buf, len, &n);
    if (e->fixed_us > 0)
        appendf(buf, len, &n, ", %d matrix products x %.2f us fixed = %.1f us", e->matrix_calls,
                e->fixed_us / e->matrix_calls, e->fixed_us);
    if (e->calls_us > 0)
        appendf(buf, len, &n, ", the calls' fixed kernel times and reductions %.1f us", e->calls_us);
    if (e->library_us > 0 && e->overlapped)
        appendf(buf, len, &n, " (cuDNN and cuBLAS calls' host cost %.1f us of the issue)", e->library_us);
    if (e->sync_us > 0)
        appendf(buf, len, &n, ", a loss read-back %.1f us", e->sync_us);
    double copies = copy_fixed_us(e, cal, opt);
    if (copies > 0)
        appendf(buf, len, &n, ", 2 copies %.1f us fixed", copies);
    if (e->shortfall_us >= 0.05 && e->products_us > 0)
        appendf(buf, len, &n, ", small products %.1f us slower than larger calls run (at %.0f%% of that rate)",
                e->shortfall_us, 100.0 * (e->products_us - e->shortfall_us) / e->products_us);
    if (e->optimizer_us >= 0.05)
        appendf(buf, len, &n, ", the optimiser's pass %.1f us", e->optimizer_us);
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

/* Issuing, the products' fixed cost and the calls' device times; eager
 * overlapped (predict_step), the longer of the host's issue and the rest. */
static double fixed_part_us(const nn_explanation *e)
{
    double device = e->fixed_us + e->calls_us;
    if (e->overlapped)
        return e->issue_us > device ? e->issue_us : device;
    return e->issue_us + device;
}

/* The rule of explain.h: overhead-bound when what a larger batch would
 * amortise is at least half the step. */
static void name_regime(nn_explanation *e, const nn_calibration *cal, const nn_explain_options *opt)
{
    char parts[384];
    double share = 1, fixed = fixed_part_us(e);
    if (opt->framework && framework_host_bound(e, opt)) {
        share = opt->framework_device_ratio;   /* the device's time counts in part */
        fixed = e->issue_us + share * (e->fixed_us + e->calls_us);
    } else if (opt->framework) {
        fixed = e->fixed_us + e->calls_us;     /* the issue hidden behind the device */
    }
    e->overhead_us = fixed + e->sync_us + copy_fixed_us(e, cal, opt) + share * (e->shortfall_us + e->optimizer_us);
    e->scaling_us = e->predicted_us > e->overhead_us ? e->predicted_us - e->overhead_us : 0;
    if (e->overhead_us >= e->scaling_us) {
        e->regime = NN_REGIME_OVERHEAD;
        describe_overheads(e, cal, opt, parts, sizeof parts);
        snprintf(e->why, sizeof e->why,
                 "per step whatever the batch: %s: %.1f of %.1f us predicted: overhead-bound; the work "
                 "that grows with the batch is %.1f us",
                 parts, e->overhead_us, e->predicted_us, e->scaling_us);
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
                 "a larger batch: the %.1f us a step costs whatever its size is paid once for all %d samples",
                 e->overhead_us, e->cost.batch);
    } else if (opt->framework) {
        snprintf(e->advice, sizeof e->advice,
                 "the framework's host overhead is %.0f us of the step (%d ops, each launched and %.2f us "
                 "more): data on the device, no read-back and one recorded graph remove most of it; so "
                 "would a larger batch", e->issue_us, e->ops, opt->framework_op_us);
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
                 "a larger batch: the %.1f us a step costs whatever its size is paid once for all %d samples",
                 e->overhead_us, e->cost.batch);
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

/* The line Explain adds when its calibration failed the checks
 * (calibration_quality.c): its figures cannot all be true, so neither can
 * a prediction made of them. */
static void calibration_caveat(nn_explanation *e, const nn_calibration *cal)
{
    char why[320];
    if (nn_calibration_quality(cal, why, sizeof why) != NN_CAL_CONTRADICTORY)
        return;
    snprintf(e->caveat, sizeof e->caveat, "the calibration is contradictory (%.300s): this prediction rests on "
             "figures that cannot all be true; measure again with `nnlab calibrate`", why);
}

void nn_explain(const nn_preset *p, int batch, const nn_calibration *cal,
                const nn_explain_options *opt, nn_explanation *out)
{
    memset(out, 0, sizeof *out);
    nn_cost_model(p, batch, &out->cost);
    /* nnlab's own step on a device that fuses Adam at this batch (the CPU) */
    if (!opt->unfused && opt->host_memory && cal->fused_adam_max_batch >= batch)
        nn_cost_fuse_adam(p, &out->cost);
    price_work(out, cal);
    price_issue(out, p, cal, opt);
    price_calls(out, cal, opt);
    price_copy(out, cal, opt);
    out->sync_us = sync_cost(cal, opt);
    out->predicted_us = predict_step(out, cal, opt);
    name_regime(out, cal, opt);
    advise(out, cal, opt);
    calibration_caveat(out, cal);
}
