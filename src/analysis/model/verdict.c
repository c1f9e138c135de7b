/* src/analysis/model/verdict.c - which device is faster, by one rule; see
 * nnlab/verdict.h. */
#include "nnlab/verdict.h"

#include <math.h>
#include <string.h>

int nn_verdict_of(double cpu_us, double cpu_spread, double gpu_us, double gpu_spread, int contradictory,
                  nn_verdict *out)
{
    memset(out, 0, sizeof *out);
    out->cpu_us = cpu_us;
    out->gpu_us = gpu_us;
    if (!(isfinite(cpu_us) && cpu_us > 0 && isfinite(gpu_us) && gpu_us > 0))
        return out->kind = NN_VERDICT_MISSING;
    if (contradictory)
        return out->kind = NN_VERDICT_CONTRADICTORY;
    /* the sweep's rule (nn_crossover_index_noisy): ahead only beyond both spreads */
    double noise = cpu_us * fmax(cpu_spread, 0) + gpu_us * fmax(gpu_spread, 0);
    if (fabs(cpu_us - gpu_us) <= noise)
        return out->kind = NN_VERDICT_TOO_CLOSE;
    out->ratio = gpu_us > cpu_us ? gpu_us / cpu_us : cpu_us / gpu_us;
    return out->kind = gpu_us > cpu_us ? NN_VERDICT_GPU_SLOWER : NN_VERDICT_GPU_FASTER;
}

const char *nn_verdict_kind_name(int kind)
{
    static const char *const names[] = { "gpu faster", "gpu slower", "too close", "contradictory", "missing" };
    return kind >= 0 && kind <= NN_VERDICT_MISSING ? names[kind] : "?";
}

double nn_calibration_spread(const nn_calibration *c)
{
    double s = 0;
    if (!c || c->profile)
        return 0;
    for (int k = 0; k < NN_SPREADS; k++)
        if (isfinite(c->spread[k]) && c->spread[k] > s)
            s = c->spread[k];
    return s;
}

int nn_calibration_contradictory(const nn_calibration *c)
{
    char why[8];
    return c && nn_calibration_quality(c, why, sizeof why) == NN_CAL_CONTRADICTORY;
}
