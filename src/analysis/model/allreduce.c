/* src/analysis/model/allreduce.c - the ring all-reduce priced over a link,
 * its figures fitted to timed sums, and the step of N data-parallel ranks
 * predicted from the cost model; see nnlab/link.h. */
#include "nnlab/link.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- the ring's price ---------------------------------------------------------------------- */

double nn_allreduce_hops_us(const nn_link *l, int ranks)
{
    return ranks > 1 ? 2.0 * (ranks - 1) * l->hop_us : 0.0;
}

double nn_allreduce_bytes_us(const nn_link *l, int ranks, double bytes)
{
    if (ranks <= 1 || !(l->bandwidth_gbps > 0))
        return 0.0;
    /* GB/s is 1e3 bytes a microsecond */
    return 2.0 * (ranks - 1) / ranks * bytes / (l->bandwidth_gbps * 1e3);
}

double nn_allreduce_us(const nn_link *l, int ranks, double bytes)
{
    return nn_allreduce_hops_us(l, ranks) + nn_allreduce_bytes_us(l, ranks, bytes);
}

/* ---- the fit --------------------------------------------------------------------------------- */

/* us = a + s x bytes, each point weighted by 1/us^2 (relative error): the
 * normal equations of a weighted line. */
static int weighted_line(const double *x, const double *y, int n, double *a, double *s)
{
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        if (!(y[i] > 0) || !(x[i] >= 0))
            return -1;
        double w = 1.0 / (y[i] * y[i]);
        sw += w;
        sx += w * x[i];
        sy += w * y[i];
        sxx += w * x[i] * x[i];
        sxy += w * x[i] * y[i];
    }
    double det = sw * sxx - sx * sx;
    if (!(det > 1e-12 * sw * sxx))
        return -1;                   /* one size only (det 0 but for rounding): no slope to find */
    *s = (sw * sxy - sx * sy) / det;
    *a = (sy - *s * sx) / sw;
    return 0;
}

int nn_link_fit(const double *bytes, const double *us, int n, int ranks, nn_link *l, double *rms_error)
{
    double a, s;
    if (n < 2 || ranks < 2 || weighted_line(bytes, us, n, &a, &s) != 0 || a < 0 || !(s > 0))
        return -1;
    l->hop_us = a / (2.0 * (ranks - 1));
    l->bandwidth_gbps = 2.0 * (ranks - 1) / ranks / (s * 1e3);
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double rel = (nn_allreduce_us(l, ranks, bytes[i]) - us[i]) / us[i];
        sum += rel * rel;
    }
    if (rms_error)
        *rms_error = sqrt(sum / n);
    return 0;
}

/* ---- a step of N ranks ----------------------------------------------------------------------- */

/* The backward's share of a step's arithmetic: the sums of the layers it
 * finishes first can run while it computes the rest. */
static double backward_share(const nn_cost *c)
{
    double bwd = 0;
    for (int i = 0; i < c->n_layers; i++)
        bwd += c->layers[i].bwd.flops;
    return c->total.flops > 0 ? bwd / c->total.flops : 0.0;
}

int nn_ranks_threads_each(int ranks, int cores, double *timeshare)
{
    if (cores < 1)
        cores = 1;
    if (ranks < 1)
        ranks = 1;
    if (timeshare)
        *timeshare = ranks > cores ? (double)ranks / cores : 1.0;
    return ranks >= cores ? 1 : cores / ranks;
}

/* The step of N ranks, each rank priced with rank_cal and its turns on a
 * core; `hide`: the sums may run behind the backward. */
static void predict(const nn_preset *p, int rank_batch, int ranks, const nn_calibration *cal,
                    const nn_calibration *rank_cal, double timeshare, const nn_explain_options *opt,
                    const nn_link *l, int hide, nn_ranks_prediction *out)
{
    nn_explanation one, all;
    nn_explain_options rank_opt = *opt;
    memset(out, 0, sizeof *out);
    out->ranks = ranks < 1 ? 1 : ranks;
    out->rank_batch = rank_batch;
    out->global_batch = out->ranks * rank_batch;
    /* ranks sum the gradients before the optimiser: none fuses Adam (nn_net_fuse_adam) */
    rank_opt.unfused = opt->unfused || out->ranks > 1;
    nn_explain(p, rank_batch, rank_cal ? rank_cal : cal, &rank_opt, &one);
    nn_explain(p, out->global_batch, cal, opt, &all);
    out->gradient_bytes = 4.0 * (double)one.cost.params;
    /* ranks taking turns on a core each wait for the others' share of it */
    out->rank_step_us = one.predicted_us * (timeshare > 1.0 ? timeshare : 1.0);
    out->hops_us = nn_allreduce_hops_us(l, out->ranks);
    out->bytes_us = nn_allreduce_bytes_us(l, out->ranks, out->gradient_bytes);
    out->allreduce_us = out->hops_us + out->bytes_us;
    out->backward_us = out->rank_step_us * backward_share(&one.cost);
    out->exposed_us = out->allreduce_us;
    if (hide && out->ranks > 1) {
        /* the last layers' sums start as soon as their gradients are done;
         * the first layer's (the last bucket's) hops are always waited for */
        double hidden_left = out->allreduce_us - out->backward_us;
        out->exposed_us = hidden_left > out->hops_us ? hidden_left : out->hops_us;
    }
    out->step_us = out->rank_step_us + out->exposed_us;
    out->one_rank_us = all.predicted_us;
    out->speedup = out->step_us > 0 ? out->one_rank_us / out->step_us : 0.0;
    out->efficiency = out->speedup / out->ranks;
    out->allreduce_share = out->step_us > 0 ? out->exposed_us / out->step_us : 0.0;
}

void nn_ranks_predict(const nn_preset *p, int rank_batch, int ranks, const nn_calibration *cal,
                      const nn_explain_options *opt, const nn_link *l, int overlap, nn_ranks_prediction *out)
{
    predict(p, rank_batch, ranks, cal, cal, 1.0, opt, l, overlap, out);
}

/* CPU ranks of one host add their sums up with the cores they compute on,
 * and Open MPI moves a started sum on only inside its own calls: nothing
 * hides behind the backward. Measured here (mnist-mlp-128, 2 ranks at 64
 * on 2 cores): the buckets made the step slower, 413-420 us against
 * 349-374 with one sum after the backward. */
void nn_ranks_predict_shared(const nn_preset *p, int rank_batch, int ranks, const nn_calibration *cal,
                             const nn_calibration *rank_cal, double timeshare, const nn_explain_options *opt,
                             const nn_link *l, int overlap, nn_ranks_prediction *out)
{
    predict(p, rank_batch, ranks, cal, rank_cal, timeshare, opt, l, overlap && !opt->host_memory, out);
}

void nn_ranks_words(const nn_ranks_prediction *r, char *buf, size_t len)
{
    if (r->ranks <= 1) {
        snprintf(buf, len, "one rank: no all-reduce");
        return;
    }
    if (r->speedup < 1.0)
        snprintf(buf, len, "%d ranks are %.2fx one rank's speed on the same %d samples: the all-reduce "
                 "(%.0f%% of their step) costs more than splitting the batch saves",
                 r->ranks, r->speedup, r->global_batch, 100.0 * r->allreduce_share);
    else
        snprintf(buf, len, "%d ranks are %.2fx as fast as one rank on the same %d samples (efficiency "
                 "%.0f%%): the all-reduce is %.0f%% of their step",
                 r->ranks, r->speedup, r->global_batch, 100.0 * r->efficiency, 100.0 * r->allreduce_share);
}
