/* src/include/nnlab/observe.h - what a job's snapshot says, read once for every
 * front end: the measured step (one statistic for the total and its parts)
 * and what an explanation of the job depends on (the switches the engine
 * applied, the launches the backend counted). The CLI's explain and sweep,
 * the lab's Explain panel, its dashboard and its sweep all read a snapshot
 * through these functions, so they cannot disagree about it. */
#ifndef NNLAB_OBSERVE_H
#define NNLAB_OBSERVE_H

#include "nnlab/calibrate.h"
#include "nnlab/engine.h"
#include "nnlab/explain.h"
#include "nnlab/preset.h"

/* ---- the measured step ---------------------------------------------------------------- */

/* The parts of a measured step: the engine's phases, and for a job that
 * replays a CUDA graph the replay, which holds forward, backward and
 * optimizer in one. */
enum { NN_PART_GRAPH = NN_PHASE_COUNT, NN_STEP_PARTS };

/* The statistic of every measured step figure nnlab shows: the mean over the
 * timed steps. The engine times each phase as a mean per step, so the total
 * is the mean too, and the parts add up to it. */
#define NN_STEP_STAT "mean"

typedef struct nn_step_measure {
    long timed_steps;            /* 0: no step timed yet, and nothing below is valid */
    double step_us;              /* mean microseconds per step (every wait included) */
    /* Mean microseconds per step of each part, on the clock that timed the
     * step (the host's): they add up to step_us, up to the cost of reading
     * the clock. On a GPU a part is the host's time issuing it (sync: its
     * time waiting for the device); the device's own times are the
     * snapshot's phase_us when phase_device_clock. */
    double part_us[NN_STEP_PARTS];
    unsigned part_valid;         /* bit p: part p was measured */
    int adam_fused_layers;       /* > 0: the backward part holds those layers' Adam update */
} nn_step_measure;

void nn_measure_step(const nn_snapshot *s, nn_step_measure *out);
/* The mean step of s in microseconds; 0 while no step is timed. */
double nn_measured_step_us(const nn_snapshot *s);
/* "copy", "forward", "backward", "optimizer", "sync", "all-reduce", "graph" */
const char *nn_step_part_name(int part);
/* The part's name as a measured step shows it: "backward+adam" where the
 * backward held Adam's update of some layers (the optimizer part is then
 * the rest of the parameters'), else nn_step_part_name. */
const char *nn_step_part_label(const nn_step_measure *m, int part);
/* The same as a JSON or CSV key: "allreduce" for the all-reduce, so that
 * "phases.allreduce_us" reads as one name. */
const char *nn_step_part_key(int part);

/* The model and the measurement disagree when one step is more than this
 * many times the other: the model's reasons are then not the step's. */
#define NN_MODEL_OFF_BY 2.0

/* The why of e against the step m measured: e->why when no step is timed
 * or the two agree within NN_MODEL_OFF_BY; else what the measured parts
 * show first ("measured 72 us/step, 0.14x the model's 513: its parts
 * forward 9.1, backward 12, optimizer 50 us, the optimizer the largest;
 * the model's optimiser's pass 395.7 us is 7.9x the measured 50"), then
 * the model's own reasons as the model's. */
void nn_explain_why_measured(const nn_explanation *e, const nn_step_measure *m, char *buf, size_t len);
/* Its first half alone ("measured 72 us/step, ... the measured 50"): 1, or
 * 0 with buf "" when no step is timed or the two agree within
 * NN_MODEL_OFF_BY. */
int nn_explain_measured_part(const nn_explanation *e, const nn_step_measure *m, char *buf, size_t len);

/* ---- what an explanation depends on --------------------------------------------------- */

/* Besides the preset and the calibration. */
typedef struct nn_explain_inputs {
    char device[16];
    int batch;
    nn_explain_options opt;      /* the switches as applied, the launches as counted */
} nn_explain_inputs;

/* The inputs a job's snapshot gives; -1 while it is still preparing (the
 * switches are not decided yet) or when it never started. The rule: a
 * device backend reports the switches it applied (has_switches) and the
 * others compute in host memory, where a batch is gathered where the data
 * already is (priced as data on the device); launches and graph nodes are
 * the backend's counts once a step is timed, else the model's estimate. */
int nn_observe_inputs(const nn_snapshot *s, nn_explain_inputs *in);

int nn_explain_inputs_equal(const nn_explain_inputs *a, const nn_explain_inputs *b);

/* nn_explain of p for these inputs. */
void nn_explain_inputs_run(const nn_preset *p, const nn_calibration *cal, const nn_explain_inputs *in,
                           nn_explanation *out);

/* ---- one explanation kept up to date ------------------------------------------------------ */

/* A job's explanation, run again only when its inputs change (the lab polls
 * a running job many times a second). */
typedef struct nn_explainer {
    int has_cal;
    nn_calibration cal;
    char no_cal_why[NN_ERR_LEN]; /* has_cal 0: why there is none */
    int valid;                   /* e explains `in` */
    nn_explain_inputs in;
    nn_explanation e;
    long recomputed;             /* times the model ran (the tests count them) */
} nn_explainer;

/* Forgets the explanation; cal NULL: there is no calibration, for `why`. */
void nn_explainer_reset(nn_explainer *x, const nn_calibration *cal, const char *why);
/* Runs the model for in when it differs from what x explains (and there is
 * a calibration); returns 1 when it ran. */
int nn_explainer_update(nn_explainer *x, const nn_preset *p, const nn_explain_inputs *in);

#endif
