/* ui/sweep.h - the batch sweep: bench-mode jobs (nn_job_config.bench) at
 * batch sizes from..to (powers of two) on each chosen device, one job at a
 * time, and the samples/s each reached. The runner drives the engine from
 * the UI thread's loop (ui_sweep_poll); nothing here draws, so the results
 * and the crossover finder are testable (tests/test_ui_text.c). */
#ifndef NNLAB_UI_SWEEP_H
#define NNLAB_UI_SWEEP_H

#include "nnlab/engine.h"
#include "explain_text.h"

#define UI_SWEEP_MAX_BATCHES 24      /* 1 .. 2^23 */
#define UI_SWEEP_MAX_DEVICES 3

enum ui_point_state { UI_PT_PENDING, UI_PT_RUNNING, UI_PT_DONE, UI_PT_FAILED, UI_PT_CANCELLED };

typedef struct ui_sweep {
    nn_job_config base;              /* preset, lr, threads; batch and device set per job */
    int n_batches, batch[UI_SWEEP_MAX_BATCHES];
    int n_devices;
    char device[UI_SWEEP_MAX_DEVICES][16];
    char skipped[NN_TEXT_LEN];       /* devices left out and why, for the screen */

    double rate[UI_SWEEP_MAX_DEVICES][UI_SWEEP_MAX_BATCHES];     /* samples/s; NAN until measured */
    double us_step[UI_SWEEP_MAX_DEVICES][UI_SWEEP_MAX_BATCHES];  /* the mean (nn_measured_step_us) */
    nn_step_measure measured[UI_SWEEP_MAX_DEVICES][UI_SWEEP_MAX_BATCHES];
    unsigned char state[UI_SWEEP_MAX_DEVICES][UI_SWEEP_MAX_BATCHES];
    char last_error[NN_ERR_LEN + 64];    /* "device batch N: " + the job's error */

    /* Explain: each device's calibration (has_cal 0: none, cal_why says why),
     * and per measured point what its explanation depends on and its regime */
    int has_cal[UI_SWEEP_MAX_DEVICES];
    nn_calibration cal[UI_SWEEP_MAX_DEVICES];
    char cal_why[UI_SWEEP_MAX_DEVICES][NN_ERR_LEN];
    nn_explain_inputs inputs[UI_SWEEP_MAX_DEVICES][UI_SWEEP_MAX_BATCHES];
    signed char regime[UI_SWEEP_MAX_DEVICES][UI_SWEEP_MAX_BATCHES];   /* nn_regime; -1: none */
    int latest_dev, latest_batch;    /* the last point measured; -1 before any */

    int next;                        /* points started so far, batch-major */
    int cur_dev, cur_batch;          /* the running point */
    nn_job *job;
    nn_snapshot snap;                /* of the running job */
    int started, finished, cancelled;
    double t_start, t_end;           /* nn_now() */
} ui_sweep;

/* The powers of two in [from, to] (from rounded up to one); returns the count. */
int ui_sweep_batches(int from, int to, int *out, int max);

/* Where the challenger overtakes the base for good: the first index from
 * which every point measured on both has challenger > base. -1 when the
 * challenger is not ahead at the last point measured on both (or none is). */
int ui_sweep_crossover(const double *base, const double *challenger, int n);

/* Prepares a sweep (nothing starts yet). */
void ui_sweep_init(ui_sweep *sw, const nn_job_config *base, int from, int to, long steps, long warmup);
/* Adds a device to sweep, with its calibration (NULL: none, for `why`),
 * which names each point's regime. */
void ui_sweep_add_device(ui_sweep *sw, const char *device, const nn_calibration *cal, const char *why);

/* Names the regime of point (d, i) measured with snapshot s (its last);
 * called when a point is collected, public for the tests. */
void ui_sweep_explain_point(ui_sweep *sw, int d, int i, const nn_snapshot *s);

enum { UI_SWEEP_PROGRESS = 1, UI_SWEEP_RESULTS = 2 };

/* Starts the next point when none runs, collects a finished one; returns
 * UI_SWEEP_PROGRESS when the running job moved, UI_SWEEP_RESULTS when a
 * point was measured (or failed) and the next started. */
int ui_sweep_poll(ui_sweep *sw);
/* Stops the running job; measured points stay, the rest are marked cancelled. */
void ui_sweep_cancel(ui_sweep *sw);
int ui_sweep_active(const ui_sweep *sw);
void ui_sweep_free(ui_sweep *sw);

#endif
