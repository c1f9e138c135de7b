/* src/jobs/train/engine_stats.c - per-step statistics: the sums of the timed steps,
 * the bench's median, the phase times (the device's clock where it has one),
 * the backend's counters per step, and rate and ETA; see engine_internal.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train_internal.h"

int engine_stats_prepare(nn_job *job, char *err, size_t err_len)
{
    job->tot.warmup = job->cfg.bench ? job->cfg.warmup : 0;
    if (!job->cfg.bench)
        return 0;
    job->tot.step_times = malloc((size_t)job->cfg.steps * sizeof(double));
    if (!job->tot.step_times)
        return nn_errorf(err, err_len, "out of host memory for %ld step times", job->cfg.steps);
    return 0;
}

void engine_stats_release(nn_job *job)
{
    free(job->tot.step_times);
    job->tot.step_times = NULL;
}

void engine_read_counters(nn_job *job, nn_backend_counters *c)
{
    nn_backend *b = &job->backend;
    memset(c, 0, sizeof *c);
    if (b->ops->counters)
        b->ops->counters(b, c);
}

void engine_stats_add_step(nn_job *job, int n, double dt, const double t[NN_PHASE_COUNT],
                           double t_graph)
{
    engine_totals *tot = &job->tot;
    tot->steps++;
    tot->active_s += dt;
    if (tot->steps <= tot->warmup)
        return;
    for (int p = 0; p < NN_PHASE_COUNT; p++)
        tot->phase_s[p] += t[p];
    if (tot->step_times)
        tot->step_times[tot->timed] = dt;
    tot->step_s_total += dt;
    tot->graph_host_s += t_graph;
    tot->overlap_s += job->step_overlap_s;
    tot->samples += n;
    tot->timed++;
}

/* A device runs behind the host: the waits (loss read-backs, the final one)
 * are part of the steps' time, so that the mean step time is the real rate. */
void engine_stats_add_wait(nn_job *job, double dt, int timed_step)
{
    engine_totals *tot = &job->tot;
    tot->active_s += dt;
    if (job->device && timed_step) {
        tot->step_s_total += dt;
        tot->phase_s[NN_PHASE_SYNC] += dt;
    }
}

void engine_stats_skip(nn_job *job, const nn_backend_counters *c0, const nn_backend_counters *c1)
{
    nn_backend_counters *k = &job->tot.cnt_skip;
#define SKIP(f) k->f += c1->f - c0->f
    SKIP(kernels); SKIP(library_calls); SKIP(graph_launches); SKIP(graph_nodes);
    SKIP(h2d_copies); SKIP(h2d_bytes); SKIP(d2h_copies); SKIP(d2h_bytes); SKIP(syncs);
#undef SKIP
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void engine_stats_median(nn_job *job)
{
    engine_totals *tot = &job->tot;
    if (!tot->step_times || tot->timed <= 0)
        return;
    qsort(tot->step_times, (size_t)tot->timed, sizeof(double), compare_double);
    job->draft.us_per_step_median = tot->step_times[tot->timed / 2] * 1e6;
}

/* The backend's counters over the timed steps, less validation, per step. */
static void step_counters(nn_job *job)
{
    nn_backend_counters now;
    const nn_backend_counters *a = &job->tot.cnt_base, *k = &job->tot.cnt_skip;
    nn_step_counters *c = &job->draft.per_step;
    const double inv = 1.0 / (double)job->tot.timed;
    engine_read_counters(job, &now);
#define PER_STEP(f) ((double)(now.f - a->f - k->f) * inv)
    c->kernels = PER_STEP(kernels);
    c->library_calls = PER_STEP(library_calls);
    c->graph_launches = PER_STEP(graph_launches);
    c->graph_nodes = PER_STEP(graph_nodes);
    c->h2d_copies = PER_STEP(h2d_copies);
    c->h2d_bytes = PER_STEP(h2d_bytes);
    c->d2h_copies = PER_STEP(d2h_copies);
    c->d2h_bytes = PER_STEP(d2h_bytes);
    c->syncs = PER_STEP(syncs);
#undef PER_STEP
    c->launches = c->kernels + c->library_calls + c->graph_launches;
}

/* The graph part of a graph job: the device's time of it, else the host's. */
static void graph_time(nn_job *job)
{
    nn_snapshot *s = &job->draft;
    const engine_totals *tot = &job->tot;
    s->has_graph_us = 0;
    if (job->dev_timing && tot->dev_n[MARK_GRAPH] > 0) {
        s->graph_us = tot->dev_us[MARK_GRAPH] / (double)tot->dev_n[MARK_GRAPH];
        s->has_graph_us = 1;
    } else if (!job->dev_timing && job->use_graph) {
        s->graph_us = tot->graph_host_s / (double)tot->timed * 1e6;
        s->has_graph_us = 1;
    }
}

/* Phase times of a device job: the device's clock where it timed them (mark
 * p + 1 ends phase p), the host's for sync (time spent waiting) and where the
 * backend has no timer. A graph job has no separate forward, backward and
 * optimizer: they are one replay, graph_us. */
static void device_phases(nn_job *job)
{
    nn_snapshot *s = &job->draft;
    const engine_totals *tot = &job->tot;
    unsigned valid = 1u << NN_PHASE_SYNC;
    s->phase_us[NN_PHASE_SYNC] = s->host_phase_us[NN_PHASE_SYNC];
    for (int p = NN_PHASE_COPY; p < NN_PHASE_COUNT; p++) {
        /* sync is the host's wait; the all-reduce a phase of device ranks only */
        if (p == NN_PHASE_SYNC || (p == NN_PHASE_ALLREDUCE && !job->device_ranks))
            continue;
        s->phase_us[p] = 0.0;
        if (job->dev_timing) {
            int m = engine_phase_mark(p);
            if (tot->dev_n[m] > 0) {
                s->phase_us[p] = tot->dev_us[m] / (double)tot->dev_n[m];
                valid |= 1u << p;
            }
        } else if (p == NN_PHASE_COPY || !job->use_graph) {
            s->phase_us[p] = s->host_phase_us[p];
            valid |= 1u << p;
        }
    }
    graph_time(job);
    s->phase_valid = valid;
    s->phase_device_clock = job->dev_timing;
}

/* Means over the timed steps. */
static void timed_means(nn_job *job)
{
    nn_snapshot *s = &job->draft;
    const engine_totals *tot = &job->tot;
    for (int p = 0; p < NN_PHASE_COUNT; p++)
        s->host_phase_us[p] = tot->phase_s[p] / (double)tot->timed * 1e6;
    if (job->device) {
        device_phases(job);
    } else {
        for (int p = 0; p < NN_PHASE_COUNT; p++)
            s->phase_us[p] = s->host_phase_us[p];
        s->phase_valid = (1u << NN_PHASE_COUNT) - 1;
        s->adam_fused_layers = job->net.fused_layers;
        if (job->ranks <= 1)         /* one rank sums nothing */
            s->phase_valid &= ~(1u << NN_PHASE_ALLREDUCE);
    }
    s->us_per_step = tot->step_s_total / (double)tot->timed * 1e6;
    /* a GPU's sums run on a stream of their own: their time in flight is
     * the device's, not timed apart (NaN: not known) */
    s->overlap_us = job->device_ranks ? NAN : tot->overlap_s / (double)tot->timed * 1e6;
    s->timed_steps = tot->timed;
    if (s->has_counters)
        step_counters(job);
}

void engine_stats_update(nn_job *job)
{
    nn_snapshot *s = &job->draft;
    const engine_totals *tot = &job->tot;
    s->step = tot->steps;
    s->fraction_done = s->total_steps > 0 ? (double)tot->steps / (double)s->total_steps : 0.0;
    s->elapsed_s = tot->active_s;
    s->val_s = tot->val_s;
    if (tot->timed > 0)
        timed_means(job);
    if (tot->active_s > 0 && tot->steps > 0) {
        s->has_rate = 1;
        s->samples_per_s = tot->step_s_total > 0 ? (double)tot->samples / tot->step_s_total : 0;
        s->eta_s = (double)(s->total_steps - tot->steps) * tot->active_s / (double)tot->steps;
    }
}
