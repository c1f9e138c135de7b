/* src/include/nnlab/predicted.h - a GPU that is not here, racing a real job:
 * its step priced by a GPU profile (profile.h) with the one cost model
 * (explain.h), the way the job's switches choose, and where it would be
 * after any time. The lab's race against a predicted GPU and `nnlab train
 * --race-predicted` both read it, so that the bar and the line agree; every
 * figure it gives is predicted for the profile, never measured, and says so
 * (label). */
#ifndef NNLAB_PREDICTED_H
#define NNLAB_PREDICTED_H

#include <stddef.h>

#include "nnlab/engine.h"
#include "nnlab/explain.h"
#include "nnlab/profile.h"

typedef struct nn_predicted_gpu {
    char profile[NN_NAME_LEN];   /* the profile's name: "T4" */
    char label[NN_TEXT_LEN];     /* "predicted for T4": beside every figure */
    int way;                     /* enum nn_gpu_way the switches choose */
    double step_s;               /* the predicted step (the model's, seconds) */
    int rows;                    /* a Jacobian job: its steps are rows of J, step_s a
                                    row's share of the whole job's predicted time */
    int cpu;                     /* the lane is this CPU's, predicted from its
                                    calibration, not a GPU profile's */
} nn_predicted_gpu;

/* The way a job's switches run a GPU step: a CUDA graph (graph), else
 * nnlab eager. */
nn_gpu_way nn_predicted_way(const nn_job_config *cfg);

/* The GPU prof predicts for cfg's job (its preset, batch, 0: the preset's)
 * run the way its switches choose, with its data_on_device, pinned and
 * sync_every_step. A Jacobian job is priced as `nnlab jacobian --sweep`
 * prices it (nn_jac_predict_s at its val and method, rows replayed as a
 * graph), its rows the steps. 0, or -1 when the model gives no positive
 * step. */
int nn_predicted_gpu_init(nn_predicted_gpu *g, const nn_job_config *cfg, const nn_gpu_profile *prof);

/* Where the predicted GPU is elapsed_s seconds after it started a job of
 * total_steps steps: the steps its predicted step allows (never more than
 * total), the fraction done, the time it would take in all and what is
 * left; ended once it would have done them all. */
typedef struct nn_predicted_progress {
    long steps, total_steps;
    double fraction;             /* 0..1 */
    double elapsed_s;            /* min(elapsed, total): the predicted GPU's own time */
    double total_s;              /* total_steps x step_s */
    double remaining_s;
    int ended;
} nn_predicted_progress;

void nn_predicted_progress_at(const nn_predicted_gpu *g, double elapsed_s, long total_steps,
                              nn_predicted_progress *out);

/* Its progress in one line, the label first (a line cut short still says
 * it): "predicted for T4: step 120/1875, 00:01<00:03, 2.1ms/step, nnlab
 * graph", or once ended "predicted for T4: done in 4.1 s (2.1ms/step),
 * nnlab graph". */
void nn_predicted_status(const nn_predicted_gpu *g, const nn_predicted_progress *p, char *buf, size_t len);

/* Its pace in the unit of its steps: "2.1ms/step", a Jacobian's
 * "7.87k rows/s". */
void nn_predicted_pace(const nn_predicted_gpu *g, char *buf, size_t len);

#endif
