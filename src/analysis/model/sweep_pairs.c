/* src/analysis/model/sweep_pairs.c - a sweep's crossovers per matching pair: a
 * framework's CPU against its GPU (the write-ups' lesson), nnlab's CPU
 * against nnlab's GPU (eager, graph), any other device against the first;
 * the one sentence the CLI and the lab print for each, and the write-up's
 * own figure beside the framework pair. See nnlab/sweep.h. */
#include "nnlab/sweep.h"
#include "nnlab/verdict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A CPU device of the framework way, of the same kind of source as GPU
 * device g when there is one (measured by the framework, or predicted);
 * -1 when none. */
static int framework_cpu(const nn_sweep *sw, int g)
{
    int any = -1;
    for (int d = 0; d < sw->n_devices; d++) {
        if (nn_sweep_device_is_gpu(sw, d) || sw->way[d] != NN_WAY_FRAMEWORK)
            continue;
        if (sw->external[d] == sw->external[g])
            return d;
        if (any < 0)
            any = d;
    }
    return any;
}

/* nnlab's CPU: the first CPU measured by nnlab on a pool of threads
 * ("cpu"), else any CPU measured by nnlab; -1 when none. */
static int nnlab_cpu(const nn_sweep *sw)
{
    int any = -1;
    for (int d = 0; d < sw->n_devices; d++) {
        if (nn_sweep_device_is_gpu(sw, d) || sw->predicted[d] || sw->external[d] || sw->way[d] != NN_WAY_EAGER)
            continue;
        if (nn_sweep_device_is_cpu(sw, d))
            return d;
        if (any < 0)
            any = d;
    }
    return any;
}

static void add_pair(const nn_sweep *sw, nn_sweep_pair *out, int *n, int max, int kind, int base, int challenger)
{
    if (*n >= max || base < 0 || challenger < 0 || base == challenger)
        return;
    nn_sweep_pair *p = &out[(*n)++];
    p->kind = kind;
    p->base = base;
    p->challenger = challenger;
    p->predicted = sw->predicted[base] || sw->predicted[challenger];
    /* a predicted side priced from a contradictory calibration decides nothing */
    p->contradictory = (sw->predicted[base] && sw->has_cal[base] && nn_calibration_contradictory(&sw->cal[base])) ||
                       (sw->predicted[challenger] && sw->has_cal[challenger] &&
                        nn_calibration_contradictory(&sw->cal[challenger]));
    p->crossover = p->contradictory ? -1 : nn_sweep_crossover_noisy(sw, base, challenger, &p->tie);
    if (p->contradictory)
        p->tie = -1;
}

static int in_pairs(const nn_sweep_pair *p, int n, int d)
{
    for (int k = 0; k < n; k++)
        if (p[k].base == d || p[k].challenger == d)
            return 1;
    return 0;
}

int nn_sweep_pairs(const nn_sweep *sw, nn_sweep_pair *out, int max)
{
    static const nn_gpu_way order[NN_GPU_WAYS] = { NN_WAY_FRAMEWORK, NN_WAY_GRAPH, NN_WAY_EAGER };
    int n = 0;
    for (int k = 0; k < NN_GPU_WAYS; k++)
        for (int g = 0; g < sw->n_devices; g++) {
            if (!nn_sweep_device_is_gpu(sw, g) || sw->way[g] != (int)order[k])
                continue;
            if (order[k] == NN_WAY_FRAMEWORK)
                add_pair(sw, out, &n, max, NN_PAIR_FRAMEWORK, framework_cpu(sw, g), g);
            else
                add_pair(sw, out, &n, max, NN_PAIR_NNLAB, nnlab_cpu(sw), g);
        }
    /* the rest against the first, as every device was before the ways (cpu-ref
     * against cpu); a CPU's framework way has no other match */
    int paired = n;
    for (int d = 1; d < sw->n_devices; d++)
        if (!in_pairs(out, paired, d) && (nn_sweep_device_is_gpu(sw, d) || sw->way[d] != NN_WAY_FRAMEWORK))
            add_pair(sw, out, &n, max, NN_PAIR_OTHER, 0, d);
    return n;
}

const char *nn_pair_kind_name(int kind)
{
    static const char *const names[] = { "framework", "nnlab", "other" };
    return kind >= 0 && kind <= NN_PAIR_OTHER ? names[kind] : "?";
}

void nn_sweep_crossover_words(const nn_sweep *sw, const nn_sweep_pair *p, char *buf, size_t len)
{
    const char *when = sw->cancelled ? " measured before the cancel" : " swept";
    char tie[64] = "";
    if (p->contradictory) {
        snprintf(buf, len, "cannot be called: a predicted side rests on a calibration marked contradictory "
                 "(calibrate again)");
        return;
    }
    if (p->tie >= 0)
        snprintf(tie, sizeof tie, " (a tie within the noise at batch %d)", sw->batch[p->tie]);
    if (p->crossover == 0)
        snprintf(buf, len, "is faster at every batch%s", when);
    else if (p->crossover > 0)
        snprintf(buf, len, "overtakes from batch %d on%s", sw->batch[p->crossover], tie);
    else
        snprintf(buf, len, "does not overtake at the batches%s%s", when, tie);
}

/* The framework pair's points at batch b: their steps and relative spreads,
 * and whether the pair rests on a contradictory calibration; -1 unless both
 * are there. */
static int framework_steps_at(const nn_sweep *sw, int b, double *cpu_us, double *gpu_us, double *cpu_spread,
                              double *gpu_spread, int *contradictory)
{
    nn_sweep_pair pairs[2 * NN_SWEEP_MAX_DEVICES];
    int n = nn_sweep_pairs(sw, pairs, 2 * NN_SWEEP_MAX_DEVICES);
    for (int k = 0; k < n; k++) {
        if (pairs[k].kind != NN_PAIR_FRAMEWORK)
            continue;
        for (int i = 0; i < sw->n_batches; i++) {
            const nn_sweep_point *c = &sw->pt[pairs[k].base][i], *g = &sw->pt[pairs[k].challenger][i];
            if (sw->batch[i] != b || c->state != NN_POINT_DONE || g->state != NN_POINT_DONE)
                continue;
            *cpu_us = sw->batch[i] * 1e6 / c->rate;
            *gpu_us = sw->batch[i] * 1e6 / g->rate;
            *cpu_spread = nn_sweep_relative_spread(sw, pairs[k].base, i);
            *gpu_spread = nn_sweep_relative_spread(sw, pairs[k].challenger, i);
            *contradictory = pairs[k].contradictory;
            return 0;
        }
    }
    return -1;
}

void nn_sweep_writeup_text(const nn_sweep *sw, char *buf, size_t len)
{
    const nn_preset *p = &sw->base.preset;
    double cpu_us, gpu_us, cpu_spread, gpu_spread;
    int contradictory;
    buf[0] = '\0';
    if (!(p->measured_cpu_s > 0) || !(p->measured_gpu_s > 0))
        return;
    double ratio = p->measured_gpu_s / p->measured_cpu_s;
    int n = snprintf(buf, len, "the write-up at batch %d: CPU %.4g s, GPU %.4g s (the GPU %.2fx %s)", p->batch,
                     p->measured_cpu_s, p->measured_gpu_s, ratio >= 1 ? ratio : 1 / ratio,
                     ratio >= 1 ? "slower" : "faster");
    if (n < 0 || (size_t)n >= len || framework_steps_at(sw, p->batch, &cpu_us, &gpu_us, &cpu_spread, &gpu_spread, &contradictory) != 0)
        return;
    nn_verdict v;
    static const char *const said[] = { "the GPU faster", "the GPU slower", "too close to call: within their "
                                        "spreads", "not called: a contradictory calibration", "-" };
    nn_verdict_of(cpu_us, cpu_spread, gpu_us, gpu_spread, contradictory, &v);
    snprintf(buf + n, len - (size_t)n, "; the framework way here: CPU %.0f us, GPU %.0f us a step (%s)", cpu_us,
             gpu_us, said[v.kind]);
}
