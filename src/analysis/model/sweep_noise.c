/* src/analysis/model/sweep_noise.c - a sweep's noise: each point's spread, when
 * it is measured again, and the crossover rule that calls a lead only
 * beyond the spread (a busy machine's batch 1 at 13.1k samples/s and batch
 * 2 at 4.1k were drawn as facts, and 141.9k against 141.6k decided a
 * crossover). See nnlab/sweep.h. */
#include "nnlab/sweep.h"
#include "sweep_internal.h"
#include "nnlab/verdict.h"

#include <math.h>
#include <string.h>

/* The index of the median of v[0..n) (n <= NN_SWEEP_MAX_REPEATS; with two,
 * the smaller: a busy machine only ever slows a step down). */
static int median_index(const double *v, int n)
{
    int best = 0;
    for (int i = 0; i < n; i++) {
        int below = 0, equal_before = 0;
        for (int j = 0; j < n; j++) {
            below += v[j] < v[i];
            equal_before += j < i && v[j] == v[i];
        }
        if (below + equal_before == (n - 1) / 2)
            best = i;
    }
    return best;
}

int nn_sweep_add_repetition(nn_sweep_point *pt, const nn_step_measure *m, double median_us, int first)
{
    if (first)
        pt->repeats = 0;
    if (pt->repeats >= NN_SWEEP_MAX_REPEATS)
        return 0;
    pt->rep_us[pt->repeats++] = m->step_us;
    if (pt->repeats == 1) {
        /* one job: half the gap between its mean and its median step (a few slow
         * steps pull the mean away from the median) */
        pt->spread_us = median_us > 0 ? 0.5 * fabs(m->step_us - median_us) : 0;
        return 1;
    }
    double lo = pt->rep_us[0], hi = pt->rep_us[0];
    for (int r = 1; r < pt->repeats; r++) {
        lo = fmin(lo, pt->rep_us[r]);
        hi = fmax(hi, pt->rep_us[r]);
    }
    pt->spread_us = 0.5 * (hi - lo);
    return median_index(pt->rep_us, pt->repeats) == pt->repeats - 1;
}

double nn_sweep_relative_spread(const nn_sweep *sw, int d, int i)
{
    const nn_sweep_point *p = &sw->pt[d][i];
    if (p->state != NN_POINT_DONE)
        return 0;
    if (p->predicted)                /* as sure as the calibration it is priced from (nnlab/verdict.h) */
        return sw->has_cal[d] ? nn_calibration_spread(&sw->cal[d]) : 0;
    if (!(p->measured.step_us > 0))
        return 0;
    return p->spread_us / p->measured.step_us;
}

int nn_sweep_wants_repeat(const nn_sweep *sw, int d, int i)
{
    const nn_sweep_point *p = &sw->pt[d][i];
    return p->state == NN_POINT_DONE && !p->predicted && !sw->external[d] && p->repeats > 0 &&
           p->repeats < NN_SWEEP_MAX_REPEATS && nn_sweep_relative_spread(sw, d, i) > NN_SWEEP_NOISE;
}

/* +1: the challenger is ahead beyond the noise; -1: behind beyond it; 0: a tie. */
static int compare(double base, double challenger, double noise)
{
    if (challenger - base > noise)
        return 1;
    if (base - challenger > noise)
        return -1;
    return 0;
}

int nn_crossover_index_noisy(const double *base, const double *challenger, const double *base_spread,
                             const double *challenger_spread, int n, int *tie)
{
    int from = -1;
    if (tie)
        *tie = -1;
    for (int i = 0; i < n; i++) {
        if (!isfinite(base[i]) || !isfinite(challenger[i]))
            continue;                /* not measured on both: says nothing */
        double noise = (base_spread ? base_spread[i] : 0) + (challenger_spread ? challenger_spread[i] : 0);
        int c = compare(base[i], challenger[i], noise);
        if (c == 0 && tie && *tie < 0)
            *tie = i;
        if (c > 0) {
            if (from < 0)
                from = i;
        } else {
            from = -1;               /* behind or tied again: the lead starts later */
        }
    }
    return from;
}

int nn_crossover_index(const double *base, const double *challenger, int n)
{
    return nn_crossover_index_noisy(base, challenger, NULL, NULL, n, NULL);
}

/* Device d's rates and their spreads in samples/s (NAN: not measured). */
static void rates_of(const nn_sweep *sw, int d, double *rate, double *spread)
{
    for (int i = 0; i < sw->n_batches; i++) {
        const nn_sweep_point *p = &sw->pt[d][i];
        rate[i] = p->state == NN_POINT_DONE ? p->rate : NAN;
        spread[i] = isfinite(rate[i]) ? rate[i] * nn_sweep_relative_spread(sw, d, i) : 0;
    }
}

int nn_sweep_crossover_noisy(const nn_sweep *sw, int base_dev, int challenger_dev, int *tie)
{
    double base[NN_SWEEP_MAX_BATCHES], challenger[NN_SWEEP_MAX_BATCHES];
    double base_spread[NN_SWEEP_MAX_BATCHES], challenger_spread[NN_SWEEP_MAX_BATCHES];
    if (tie)
        *tie = -1;
    if (base_dev < 0 || base_dev >= sw->n_devices || challenger_dev < 0 || challenger_dev >= sw->n_devices)
        return -1;
    rates_of(sw, base_dev, base, base_spread);
    rates_of(sw, challenger_dev, challenger, challenger_spread);
    return nn_crossover_index_noisy(base, challenger, base_spread, challenger_spread, sw->n_batches, tie);
}

int nn_sweep_crossover(const nn_sweep *sw, int base_dev, int challenger_dev)
{
    return nn_sweep_crossover_noisy(sw, base_dev, challenger_dev, NULL);
}
