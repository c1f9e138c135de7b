/* src/analysis/calibration_quality.c - whether a calibration can be trusted:
 * the one rule (noisy repetitions, figures that contradict each other) the
 * cache, the CLI and the lab apply, and the line every front end shows
 * wherever a calibration is used (its source, age and quality). See
 * calibrate.h. */
#include "nnlab/calibrate.h"

#include <stdio.h>
#include <string.h>

const char *nn_spread_name(int figure)
{
    static const char *const names[NN_SPREADS] = { "sgemm", "sgemm on one thread", "streaming", "issue one op",
                                                   "op + synchronise", "host memcpy" };
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
 * memcpy does, so it cannot be this much slower than one. */
#define ONE_THREAD_SLACK 1.15
#define STREAM_VS_MEMCPY 0.25

int nn_calibration_quality(const nn_calibration *c, char *why, size_t why_len)
{
    if (why && why_len)
        why[0] = '\0';
    if (c->profile)
        return NN_CAL_GOOD;
    if (c->threads > 1 && c->gemm_gflops_1thread > ONE_THREAD_SLACK * c->gemm_gflops) {
        snprintf(why, why_len, "sgemm ran faster on one thread (%.1f GFLOP/s) than on %d (%.1f): the "
                 "machine was busy", c->gemm_gflops_1thread, c->threads, c->gemm_gflops);
        return NN_CAL_CONTRADICTORY;
    }
    if (c->host_copy_gbps > 0 && c->mem_gbps < STREAM_VS_MEMCPY * c->host_copy_gbps) {
        snprintf(why, why_len, "streaming at %.1f GB/s is far below the host's memcpy at %.1f GB/s: the "
                 "machine was busy", c->mem_gbps, c->host_copy_gbps);
        return NN_CAL_CONTRADICTORY;
    }
    int k = widest_spread(c);
    if (c->spread[k] > NN_CAL_MAX_SPREAD) {
        snprintf(why, why_len, "%s varied %.0f%% between its repetitions (more than %.0f%%): the machine "
                 "was busy", nn_spread_name(k), 100.0 * c->spread[k], 100.0 * NN_CAL_MAX_SPREAD);
        return NN_CAL_NOISY;
    }
    return NN_CAL_GOOD;
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
