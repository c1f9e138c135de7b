/* src/include/nnlab/verdict.h - the one rule that says which device is
 * faster: a lead is called only beyond the two figures' spreads together
 * (the sweep's crossover rule), never on a calibration marked
 * contradictory, never with a side missing. The race of ways
 * (nnlab/race_ways.h), the sweep's pairs and write-up line (nnlab/sweep.h)
 * and the lab all decide through it, so no two screens disagree. */
#ifndef NNLAB_VERDICT_H
#define NNLAB_VERDICT_H

#include "nnlab/calibrate.h"

enum nn_verdict_kind {
    NN_VERDICT_GPU_FASTER,
    NN_VERDICT_GPU_SLOWER,
    NN_VERDICT_TOO_CLOSE,        /* within the two figures' spreads */
    NN_VERDICT_CONTRADICTORY,    /* a figure rests on a contradictory calibration */
    NN_VERDICT_MISSING           /* a side is not priced */
};

typedef struct nn_verdict {
    int kind;                    /* enum nn_verdict_kind */
    double ratio;                /* the slower over the faster (>= 1); 0 when not called */
    double cpu_us, gpu_us;
} nn_verdict;

/* The GPU's step against the CPU's, each with its relative spread (0.04 =
 * 4%): ahead only when the gap is wider than cpu_us x cpu_spread + gpu_us x
 * gpu_spread. Returns out->kind. */
int nn_verdict_of(double cpu_us, double cpu_spread, double gpu_us, double gpu_spread, int contradictory,
                  nn_verdict *out);

/* "gpu faster", "gpu slower", "too close", "contradictory", "missing" */
const char *nn_verdict_kind_name(int kind);

/* The relative spread of a calibration's figures: the widest of its
 * repetitions' spreads (a profile's figures: 0, taken as given; NULL: 0). */
double nn_calibration_spread(const nn_calibration *c);
/* 1 when c is marked contradictory (nn_calibration_quality); NULL: 0. */
int nn_calibration_contradictory(const nn_calibration *c);

#endif
