/* src/explain.c - see explain.h. */
#include "explain.h"

#include <stdio.h>
#include <string.h>

const char *nn_regime_name(nn_regime r)
{
    static const char *const names[] = { "overhead-bound", "memory-bound", "compute-bound" };
    return (unsigned)r < 3 ? names[r] : "?";
}

/* One op's time on the roofline, in microseconds. */
static double roofline_us(nn_op_cost c, const nn_calibration *cal)
{
    double t_flops = cal->gemm_gflops > 0 ? c.flops / (cal->gemm_gflops * 1e3) : 0;
    double t_bytes = cal->mem_gbps > 0 ? c.bytes / (cal->mem_gbps * 1e3) : 0;
    return t_flops > t_bytes ? t_flops : t_bytes;
}

/* Operations the engine issues per step: one per working layer forward and
 * per backward, the loss, the optimiser, the batch copies, a synchronise. */
static int count_ops(const nn_cost *c, const nn_explain_options *opt)
{
    int ops = 2 + 1;                              /* loss, optimiser, synchronise */
    for (int i = 0; i < c->n_layers; i++)
        ops += (c->layers[i].fwd.bytes > 0) + (c->layers[i].bwd.bytes > 0);
    if (!opt->host_memory)
        ops += 2;                                 /* samples and labels */
    return ops;
}

static void add_work(nn_explanation *e, nn_op_cost c, const nn_calibration *cal)
{
    e->work_us += roofline_us(c, cal);
    if (cal->gemm_gflops > 0)
        e->compute_us += c.flops / (cal->gemm_gflops * 1e3);
    if (cal->mem_gbps > 0)
        e->memory_us += c.bytes / (cal->mem_gbps * 1e3);
}

static void price(nn_explanation *e, const nn_calibration *cal, const nn_explain_options *opt)
{
    const nn_cost *c = &e->cost;
    for (int i = 0; i < c->n_layers; i++) {
        add_work(e, c->layers[i].fwd, cal);
        add_work(e, c->layers[i].bwd, cal);
    }
    add_work(e, c->loss, cal);
    add_work(e, c->optimizer, cal);

    e->ops = opt->launches_per_step > 0 ? opt->launches_per_step : count_ops(c, opt);
    e->issue_us = e->ops * cal->op_us;
    if (opt->host_memory || opt->data_on_device) {
        /* a gather within the device's own memory: read and write the batch */
        double bw = opt->host_memory ? cal->host_copy_gbps : cal->mem_gbps;
        e->copy_us = bw > 0 ? 2.0 * c->input_bytes / (bw * 1e3) : 0;
    } else {
        e->copy_us = 2.0 * cal->upload_us +
                     (cal->upload_gbps > 0 ? c->input_bytes / (cal->upload_gbps * 1e3) : 0);
    }
    e->sync_us = opt->sync_every_step ? cal->sync_us : 0;
    e->predicted_us = e->issue_us + e->copy_us + e->sync_us + e->work_us;
}

static void name_regime(nn_explanation *e, const nn_calibration *cal, const nn_explain_options *opt)
{
    double fixed = e->issue_us + e->sync_us + (opt->host_memory ? 0 : 2.0 * cal->upload_us);
    if (fixed >= e->work_us) {
        e->regime = NN_REGIME_OVERHEAD;
        snprintf(e->why, sizeof e->why,
                 "%d ops x %.2f us = %.1f us%s of %.1f us predicted: overhead-bound; "
                 "the arithmetic is %.2f us at the %.0f GFLOP/s peak",
                 e->ops, cal->op_us, e->issue_us,
                 opt->sync_every_step ? " plus a synchronise" : "", e->predicted_us,
                 e->compute_us, cal->gemm_gflops);
    } else if (e->memory_us > e->compute_us) {
        e->regime = NN_REGIME_MEMORY;
        snprintf(e->why, sizeof e->why,
                 "%.1f MB moved per step = %.1f us at %.1f GB/s > %.1f us of FLOPs at %.0f GFLOP/s: "
                 "memory-bound",
                 e->cost.total.bytes * 1e-6, e->memory_us, cal->mem_gbps, e->compute_us, cal->gemm_gflops);
    } else {
        e->regime = NN_REGIME_COMPUTE;
        snprintf(e->why, sizeof e->why,
                 "%.1f MFLOP per step = %.1f us at %.0f GFLOP/s > %.1f us of memory traffic: compute-bound",
                 e->cost.total.flops * 1e-6, e->compute_us, cal->gemm_gflops, e->memory_us);
    }
}

static void advise(nn_explanation *e, const nn_explain_options *opt)
{
    double opt_share = e->cost.optimizer.bytes > 0 && e->cost.total.bytes > 0
                       ? e->cost.optimizer.bytes / e->cost.total.bytes : 0;
    switch (e->regime) {
    case NN_REGIME_OVERHEAD:
        if (!opt->host_memory)
            snprintf(e->advice, sizeof e->advice,
                     "replaying the step as one CUDA graph would save most of the %.0f us of launches; "
                     "a larger batch adds work at almost no extra cost",
                     e->issue_us);
        else
            snprintf(e->advice, sizeof e->advice,
                     "a larger batch: the %.1f us of fixed cost per step is paid once for all %d samples",
                     e->issue_us + e->sync_us, e->cost.batch);
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
    price(out, cal, opt);
    name_regime(out, cal, opt);
    advise(out, opt);
}
