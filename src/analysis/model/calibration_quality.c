/* src/analysis/model/calibration_quality.c - whether a calibration can be trusted:
 * the one set of checks (rates above the device's peak, a fixed cost above
 * the smallest call, repetitions that disagree, figures that contradict each
 * other) the calibration, the cache, the CLI and the lab apply, and the
 * line every front end shows wherever a calibration is used (its source,
 * age and quality). See calibrate.h and docs/decisions/0102-calibration-checks-contradictory.md. */
#include "nnlab/calibrate.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

const char *nn_spread_name(int figure)
{
    static const char *const names[NN_SPREADS] = { "sgemm", "sgemm on one thread", "streaming", "issue one op",
                                                   "op + synchronise", "host memcpy", "linear layers",
                                                   "convolutions", "per element" };
    return figure >= 0 && figure < NN_SPREADS ? names[figure] : "?";
}

const char *nn_cal_quality_name(int q)
{
    static const char *const names[] = { "good", "noisy", "contradictory" };
    return q >= 0 && q <= NN_CAL_CONTRADICTORY ? names[q] : "?";
}

/* The figure that varied most; its index. */
static int widest_spread(const nn_calibration *c)
{
    int worst = 0;
    for (int k = 1; k < NN_SPREADS; k++)
        if (c->spread[k] > c->spread[worst])
            worst = k;
    return worst;
}

/* Slack for noise in the contradiction checks: a thread more must not be
 * slower by more than this, and a relu over 32 MiB reads and writes as a
 * memcpy does, so it cannot be this much slower than one. A product's
 * fixed cost may exceed the smallest product's time by the repetitions'
 * own tolerance, and so may a GPU's rate its 1024^3 sgemm's when its peak
 * is unknown. A CPU's peak is one core's FMA loop timed once (a moment of
 * another program's load lowers it) or, without FMA, an estimate whose clock
 * may be the nominal one: a CPU's rate may exceed it by half. */
#define ONE_THREAD_SLACK 1.15
#define STREAM_VS_MEMCPY 0.25
#define FIXED_COST_SLACK (1.0 + NN_CAL_MAX_SPREAD)
#define SGEMM_PEAK_SLACK (1.0 + NN_CAL_MAX_SPREAD)
#define CPU_PEAK_SLACK 1.5

/* Where the failures go: at most max, all counted. */
typedef struct failures {
    nn_cal_failure *out;
    int max, n;
} failures;

static void fail(failures *f, int figure, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(failures *f, int figure, const char *fmt, ...)
{
    if (f->n < f->max) {
        va_list ap;
        va_start(ap, fmt);
        f->out[f->n].figure = figure;
        vsnprintf(f->out[f->n].why, sizeof f->out[f->n].why, fmt, ap);
        va_end(ap);
    }
    f->n++;
}

/* The bound no rate may pass, and its words; 0 when there is none. */
static double rate_bound(const nn_calibration *c, char *how, size_t len)
{
    if (c->device_peak_gflops > 0 && c->threads > 0) {
        snprintf(how, len, "the CPU's peak %.0f GFLOP/s x %.1f (%s)",
                 c->device_peak_gflops, CPU_PEAK_SLACK, c->device_peak_how);
        return c->device_peak_gflops * CPU_PEAK_SLACK;
    }
    if (c->device_peak_gflops > 0) {
        snprintf(how, len, "the device's peak %.0f GFLOP/s (%s)", c->device_peak_gflops, c->device_peak_how);
        return c->device_peak_gflops;
    }
    if (c->threads == 0 && c->gemm_gflops > 0) {   /* a GPU that gave no peak: its large sgemm */
        snprintf(how, len, "the 1024^3 sgemm's %.0f GFLOP/s + %.0f%% (the device gave no peak)", c->gemm_gflops,
                 100.0 * (SGEMM_PEAK_SLACK - 1));
        return c->gemm_gflops * SGEMM_PEAK_SLACK;
    }
    return 0;
}

/* (a) no rate above the device's peak */
static void check_rates(const nn_calibration *c, failures *f)
{
    char how[192];
    double bound = rate_bound(c, how, sizeof how);
    static const struct { const char *name; size_t off; int figure; } curves[] = {
        { "linear forward", offsetof(nn_calibration, linear_fwd), NN_SPREAD_LINEAR },
        { "linear backward", offsetof(nn_calibration, linear_bwd), NN_SPREAD_LINEAR },
        { "conv forward", offsetof(nn_calibration, conv_fwd), NN_SPREAD_CONV },
        { "conv backward", offsetof(nn_calibration, conv_bwd), NN_SPREAD_CONV },
    };
    if (bound <= 0)
        return;
    if (c->device_peak_gflops > 0 && c->gemm_gflops > bound)
        fail(f, NN_SPREAD_GEMM, "sgemm at %.0f GFLOP/s is above %s", c->gemm_gflops, how);
    for (size_t k = 0; k < sizeof curves / sizeof curves[0]; k++) {
        const nn_rate_curve *cv = (const nn_rate_curve *)((const char *)c + curves[k].off);
        for (int i = 0; i < cv->n; i++)
            if (cv->gflops[i] > bound) {
                fail(f, curves[k].figure, "%s at %.3g FLOPs a call ran at %.0f GFLOP/s, above %s", curves[k].name,
                     cv->flops[i], cv->gflops[i], how);
                break;
            }
    }
}

double nn_calibration_smallest_product_us(const nn_calibration *c)
{
    if (c->smallest_product_us > 0 || c->linear_fwd.n == 0 || !(c->linear_fwd.gflops[0] > 0))
        return c->smallest_product_us;
    /* a cache or a file without it: undo add_point (calibrate_sizes.c), which
     * took the fixed cost off the call, or a tenth of the call as its work
     * when the fixed cost was 90% of the call or more */
    double work_us = c->linear_fwd.flops[0] / c->linear_fwd.gflops[0] * 1e-3;
    return 9.0 * work_us < c->matrix_op_us ? 10.0 * work_us : work_us + c->matrix_op_us;
}

/* (b) a product's fixed cost agrees with the smallest product's time */
static void check_fixed_cost(const nn_calibration *c, failures *f)
{
    double smallest = nn_calibration_smallest_product_us(c);
    if (c->matrix_op_us < 0)
        fail(f, NN_SPREAD_LINEAR, "matrix_op_us %.3g us is below 0", c->matrix_op_us);
    else if (smallest > 0 && c->matrix_op_us > FIXED_COST_SLACK * smallest)
        fail(f, NN_SPREAD_LINEAR, "matrix_op_us %.3g us (a 1x1x1 product) is above the smallest product's "
             "measured time, %.3g us (%.3g FLOPs) + %.0f%%: a fixed cost cannot exceed the whole call",
             c->matrix_op_us, smallest, c->linear_fwd.flops[0], 100.0 * (FIXED_COST_SLACK - 1));
}

/* (c) repetitions that agree */
static void check_spreads(const nn_calibration *c, failures *f)
{
    for (int k = 0; k < NN_SPREADS; k++)
        if (c->spread[k] > NN_CAL_MAX_SPREAD)
            fail(f, k, "%s: repetitions varied %.0f%%, more than %.0f%%%s", nn_spread_name(k), 100.0 * c->spread[k],
                 100.0 * NN_CAL_MAX_SPREAD, c->remeasured & (1u << k) ? " (measured twice)" : "");
}

/* Figures that cannot all be true on a CPU (a GPU's streaming is in its
 * own memory, which the host's memcpy says nothing of). */
static void check_cpu(const nn_calibration *c, failures *f)
{
    if (c->threads == 0)
        return;
    if (c->threads > 1 && c->gemm_gflops_1thread > ONE_THREAD_SLACK * c->gemm_gflops)
        fail(f, NN_SPREAD_GEMM_1THREAD, "sgemm ran faster on one thread (%.1f GFLOP/s) than on %d (%.1f): the "
             "machine was busy", c->gemm_gflops_1thread, c->threads, c->gemm_gflops);
    if (c->host_copy_gbps > 0 && c->mem_gbps < STREAM_VS_MEMCPY * c->host_copy_gbps)
        fail(f, NN_SPREAD_MEM, "streaming at %.1f GB/s is far below the host's memcpy at %.1f GB/s: the "
             "machine was busy", c->mem_gbps, c->host_copy_gbps);
}

int nn_calibration_check(const nn_calibration *c, nn_cal_failure *out, int max)
{
    failures f = { out, out ? max : 0, 0 };
    if (c->profile)
        return 0;
    check_cpu(c, &f);
    check_rates(c, &f);
    check_fixed_cost(c, &f);
    check_spreads(c, &f);
    return f.n;
}

int nn_calibration_quality(const nn_calibration *c, char *why, size_t why_len)
{
    nn_cal_failure first;
    if (why && why_len)
        why[0] = '\0';
    int n = nn_calibration_check(c, &first, 1);
    if (n == 0)
        return NN_CAL_GOOD;
    if (why && why_len)
        snprintf(why, why_len, n > 1 ? "%s (and %d more)" : "%s", first.why, n - 1);
    return NN_CAL_CONTRADICTORY;
}

/* "12 s", "3 min", "2 h", "5 days" */
static void age_text(long long seconds, char *buf, size_t len)
{
    if (seconds < 0)
        seconds = 0;
    if (seconds < 120)
        snprintf(buf, len, "%lld s", seconds);
    else if (seconds < 2 * 3600)
        snprintf(buf, len, "%lld min", seconds / 60);
    else if (seconds < 2 * 86400)
        snprintf(buf, len, "%lld h", seconds / 3600);
    else
        snprintf(buf, len, "%lld days", seconds / 86400);
}

void nn_calibration_describe(const nn_calibration *c, long long now, char *buf, size_t len)
{
    char why[NN_ERR_LEN], age[32];
    if (c->profile) {
        snprintf(buf, len, "%s (a GPU profile)", c->note);
        return;
    }
    age_text(now - c->created, age, sizeof age);
    int q = nn_calibration_quality(c, why, sizeof why);
    if (q == NN_CAL_GOOD)
        snprintf(buf, len, "measured %s ago, good (repetitions within %.0f%%)", age,
                 100.0 * c->spread[widest_spread(c)]);
    else
        snprintf(buf, len, "measured %s ago, %s: %s", age, nn_cal_quality_name(q), why);
}
