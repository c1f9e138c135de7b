/* src/include/nnlab/race_ways.h - a race of ways: the write-ups' question
 * first, like for like, then what careful code does (docs/ways.md, "The race
 * of ways").
 *
 * The write-ups ran one framework eagerly on the CPU and on the GPU; nnlab's
 * own CPU step and its best GPU way are another pair. A race therefore has
 * four lanes: the framework way on the CPU and on the GPU, nnlab's CPU step,
 * nnlab's GPU way. Each lane is measured (an nnlab job, PyTorch) or predicted
 * (this machine's calibration, a GPU profile), says which, and carries its
 * figure's relative spread. The verdict of a pair is one rule for every
 * front end (nn_verdict_of, nnlab/verdict.h): a lead is called only beyond the two figures'
 * spreads, and never on a calibration marked contradictory. The lab's run
 * screen and `nnlab train --race[-predicted]` both read this file. */
#ifndef NNLAB_RACE_WAYS_H
#define NNLAB_RACE_WAYS_H

#include <stddef.h>
#include <stdio.h>

#include "nnlab/calibrate.h"
#include "nnlab/explain.h"
#include "nnlab/preset.h"
#include "nnlab/profile.h"
#include "nnlab/verdict.h"

enum nn_lane_id {
    NN_LANE_FW_CPU,              /* the framework way on the CPU */
    NN_LANE_FW_GPU,              /* the framework way on the GPU */
    NN_LANE_NNLAB_CPU,           /* nnlab's own CPU step */
    NN_LANE_NNLAB_GPU,           /* nnlab's GPU way (the best: graph, unless switches say otherwise) */
    NN_LANES
};

typedef struct nn_race_lane {
    int present;                 /* 1: priced or measured; 0: why says why not */
    int gpu;                     /* on the GPU */
    int way;                     /* enum nn_gpu_way (a CPU's nnlab step: NN_WAY_EAGER) */
    int measured;                /* 1 measured here, 0 predicted */
    int contradictory;           /* rests on a calibration marked contradictory */
    double step_us;              /* the step, microseconds */
    double spread;               /* its relative spread (0.04 = 4%) */
    char label[32];              /* "cpu framework", "gpu framework", "cpu nnlab", "gpu graph" */
    char source[NN_TEXT_LEN];    /* "measured", "measured with PyTorch 2.11", "predicted from this
                                    CPU's calibration", "predicted for T4" */
    char why[NN_TEXT_LEN];       /* not present: why */
} nn_race_lane;

typedef struct nn_race_ways {
    int batch;
    nn_race_lane lane[NN_LANES];
} nn_race_ways;

/* The four lanes predicted: the framework's and nnlab's CPU step from
 * cpu_cal (NULL: not priced, said in why), the GPU's from gpu_cal (this
 * GPU's own calibration) or else prof, nnlab's GPU in way (NN_WAY_GRAPH:
 * the best; a job's switches may pick eager). prof NULL (no profile
 * found): the GPU's lanes are not priced, the framework's CPU figures are
 * the fitted ones. A caller then replaces what it measured
 * (nn_race_lane_measure). */
void nn_race_ways_predict(nn_race_ways *w, const nn_preset *p, int batch, const nn_calibration *cpu_cal,
                          const nn_calibration *gpu_cal, const nn_gpu_profile *prof, nn_gpu_way gpu_way);

/* A lane measured here: its step, its spread and its source ("measured",
 * "measured with PyTorch 2.11"). */
void nn_race_lane_measure(nn_race_lane *l, double step_us, double spread, const char *source);

/* ---- the verdict ------------------------------------------------------------------------- */

/* The pair's verdict in one sentence, `who` first ("as a framework runs
 * it", "nnlab"): "as a framework runs it: the GPU is 2.62x slower than the
 * CPU at batch 4 (CPU 1165 us predicted from this CPU's calibration, GPU
 * 3050 us predicted for T4)"; "... too close to call at batch 32: CPU 1560
 * vs GPU 1541 us, within their spreads (10%, 0%)"; "... cannot call: the
 * CPU's figure rests on a calibration marked contradictory (the machine was
 * busy): calibrate again". Returns the verdict's kind. */
int nn_race_verdict_text(const nn_race_ways *w, int cpu_lane, int gpu_lane, const char *who, char *buf,
                         size_t len);

/* The same verdict in a few words, for a narrow panel: "GPU 1.44x slower",
 * "GPU 6.53x faster", "too close to call", "cannot call: recalibrate" (a
 * contradictory calibration), "no verdict: cpu framework not priced". */
int nn_race_verdict_short(const nn_race_ways *w, int cpu_lane, int gpu_lane, char *buf, size_t len);

/* The two verdicts in the order a class reads them: the framework pair
 * (the write-ups' question), then nnlab's. */
void nn_race_ways_summary(const nn_race_ways *w, char *framework, size_t flen, char *nnlab, size_t nlen);

/* "1.68 ms/step", "840 us/step", "-": a lane's step as every front end
 * prints it. */
void nn_race_step_text(double us, char *buf, size_t len);

/* ---- exports ------------------------------------------------------------------------------ */

/* "ways": every lane (label, device, way, source, measured, us_per_step,
 * spread, steps and the time they take: total_steps x the step), and
 * "verdicts": the framework pair's and nnlab's (kind, ratio, text), after
 * indent spaces, with a trailing comma unless last. 0, or -1 when a write
 * failed. */
int nn_race_ways_json(FILE *f, const nn_race_ways *w, long total_steps, int indent, int last);
#endif
