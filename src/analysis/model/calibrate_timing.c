/* src/analysis/model/calibrate_timing.c - how the calibration times a figure:
 * batches of back-to-back calls, long enough to dwarf the clock's own cost
 * and the launch of the first call, repeated, on the device's own clock
 * where it has one (a GPU's CUDA events: backend ops clock_start and
 * clock_stop) and on the host's elsewhere. See calibrate_internal.h, and
 * docs/decisions/0101-calibration-timed-on-device-clock.md for why events. */
#define _POSIX_C_SOURCE 200809L
#include "calibrate_internal.h"

#include <string.h>

#include "util.h"

/* A batch of n calls: seconds on the chosen clock. */
static int time_batch(nn_backend *b, const bench_ctx *c, nn_cal_call_fn call, const void *arg, int device_clock,
                      long n, double *out_s)
{
    double t0 = 0, us = 0;
    if (device_clock ? b->ops->clock_start(b) != 0 : (t0 = nn_now(), 0))
        return -1;
    for (long i = 0; i < n; i++)
        if (call(b, c, arg) != 0)
            return -1;
    if (device_clock) {
        if (b->ops->clock_stop(b, &us) != 0)
            return -1;
        *out_s = us * 1e-6;
        return 0;
    }
    if (b->ops->synchronize(b) != 0)
        return -1;
    *out_s = nn_now() - t0;
    return 0;
}

#define MAX_BATCH_CALLS 1000000L

/* Calls a batch needs to last at least target seconds, from a batch of
 * *calls calls that took *s; grows the batch (timing it again) while the
 * estimate falls short. *calls and *s end as the last batch timed. */
static int size_batch(nn_backend *b, const bench_ctx *c, nn_cal_call_fn call, const void *arg, int device_clock,
                      double target, long *calls, double *s)
{
    for (int tries = 0; tries < 8 && *s < target && *calls < MAX_BATCH_CALLS; tries++) {
        double per = *s / (double)*calls;
        long want = per > 0 ? (long)(1.2 * target / per) + 1 : *calls * 8;
        if (want < 2 * *calls)
            want = 2 * *calls;              /* grow at least twofold: the estimate may be low */
        *calls = want > MAX_BATCH_CALLS ? MAX_BATCH_CALLS : want;
        if (time_batch(b, c, call, arg, device_clock, *calls, s) != 0)
            return -1;
    }
    return 0;
}

static void sort(double *v, int n)
{
    for (int i = 1; i < n; i++)             /* insertion sort: a handful of values */
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
}

#define MAX_REPS 16

int nn_cal_time(nn_backend *b, const bench_ctx *c, nn_cal_call_fn call, const void *arg, const nn_cal_timing *t,
                double *per_call_s, double *spread)
{
    int device_clock = !t->host_clock && b->ops->clock_start && b->ops->clock_stop;
    double target = device_clock ? NN_CAL_DEVICE_BATCH_S : NN_CAL_HOST_BATCH_S, s = 0, v[MAX_REPS];
    long calls = t->min_calls > 0 ? t->min_calls : 1;
    int reps = t->reps > 0 ? t->reps : NN_CAL_REPS;
    reps = reps > MAX_REPS ? MAX_REPS : reps;
    /* a device's first call pays its library's start-up: untimed */
    if (!b->ops->host_memory && (call(b, c, arg) != 0 || b->ops->synchronize(b) != 0))
        return -1;
    if (time_batch(b, c, call, arg, device_clock, calls, &s) != 0)
        return -1;
    if (s / (double)calls > NN_CAL_SLOW_CALL_S) {   /* a slow device (the reference loops): once */
        *per_call_s = s / (double)calls;
        *spread = 0;
        return 0;
    }
    if (size_batch(b, c, call, arg, device_clock, target, &calls, &s) != 0)
        return -1;
    for (int r = 0; r < reps; r++)
        if (time_batch(b, c, call, arg, device_clock, calls, &v[r]) != 0)
            return -1;
    sort(v, reps);
    *per_call_s = v[0] / (double)calls;
    *spread = v[0] > 0 ? v[reps / 2] / v[0] - 1.0 : 0;
    return 0;
}
