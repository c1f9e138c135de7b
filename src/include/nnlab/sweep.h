/* src/include/nnlab/sweep.h - the batch sweep, for `nnlab sweep`, `nnlab explain`
 * (a sweep of one point) and the lab's sweep screen alike: bench jobs
 * (nn_job_config.bench) at each batch size on each device, one at a time,
 * batch-major (every device at the first batch, then at the second: a
 * cancelled sweep still compares the devices it reached). Each point keeps
 * its measured step (nn_measure_step), its samples/s, what its explanation
 * depends on and, with a calibration, its regime and predicted step. The
 * rules that read the results live here too: the crossover and Horace He's
 * doubling ratio. The runner is driven by polling (the lab's UI loop) or by
 * waiting on it (the CLI); nothing here prints or draws.
 *
 * A GPU that is not here can be swept as predicted (nn_sweep_add_predicted):
 * the three ways of running its step (explain.h), priced by a GPU profile,
 * each a device of the sweep whose points are the model's, never measured,
 * marked so (`predicted`) for every front end to say. The crossover and
 * doubling rules read their rates as they read measured ones. */
#ifndef NNLAB_SWEEP_H
#define NNLAB_SWEEP_H

#include "nnlab/calibrate.h"
#include "nnlab/engine.h"
#include "nnlab/explain.h"
#include "nnlab/observe.h"
#include "nnlab/profile.h"

#define NN_SWEEP_MAX_BATCHES 64
#define NN_SWEEP_MAX_DEVICES 6       /* cpu, cpu-ref, and a GPU's three ways predicted */

enum nn_point_state { NN_POINT_PENDING, NN_POINT_RUNNING, NN_POINT_DONE, NN_POINT_FAILED, NN_POINT_CANCELLED };

typedef struct nn_sweep_point {
    int state;                   /* enum nn_point_state */
    nn_step_measure measured;    /* DONE: the step (its mean and its parts) */
    double rate;                 /* samples/s at the measured step; NAN unless DONE */
    int has_inputs;              /* in is what the point's explanation depends on */
    nn_explain_inputs in;
    int has_model;               /* explained (the device has a calibration): */
    nn_regime regime;            /*   its regime */
    double predicted_us;         /*   and its predicted step */
    int predicted;               /* a predicted device's point: rate is the model's, nothing
                                    was measured (measured.timed_steps is 0) */
    double profile_us;           /* a measured GPU point beside a profile (nn_sweep_set_profile):
                                    the profile's prediction for the same inputs; 0: none */
} nn_sweep_point;

/* The convolution algorithms a sweep keeps of its last point (LeNet: 6). */
#define NN_SWEEP_CONV_MAX 64

typedef struct nn_sweep {
    nn_job_config base;          /* preset, lr, threads, switches; batch and device set per job */
    int n_batches, batch[NN_SWEEP_MAX_BATCHES];
    int n_devices;
    char device[NN_SWEEP_MAX_DEVICES][16];
    int has_cal[NN_SWEEP_MAX_DEVICES];   /* 0: no calibration, cal_why says why */
    nn_calibration cal[NN_SWEEP_MAX_DEVICES];
    char cal_why[NN_SWEEP_MAX_DEVICES][NN_ERR_LEN];
    int predicted[NN_SWEEP_MAX_DEVICES]; /* no job: the model priced by a GPU profile */
    int way[NN_SWEEP_MAX_DEVICES];       /* predicted: its enum nn_gpu_way */
    int has_profile;                     /* prof: the profile of the predicted devices, or the one */
    nn_gpu_profile prof;                 /*   a measured GPU's points are compared with */
    nn_sweep_point pt[NN_SWEEP_MAX_DEVICES][NN_SWEEP_MAX_BATCHES];
    char last_error[NN_ERR_LEN + 64];    /* "device batch N: " + the last failed job's error */
    int latest_dev, latest_batch;        /* the last point measured (DONE); -1 before any */

    /* the runner */
    int next;                    /* points started so far, batch-major */
    int cur_dev, cur_batch;      /* the running point */
    nn_job *job;
    nn_snapshot snap;            /* of the running job; once it ended, its last */
    nn_conv_algorithm_info conv[NN_SWEEP_CONV_MAX];   /* the last ended job's convolution */
    int n_conv;                  /*   algorithms (a GPU's; nn_job_conv_algorithms) */
    int started, finished, cancelled;
    long n_failed;               /* points failed so far */
    double t_start, t_end;       /* nn_now() */
} nn_sweep;

/* The powers of two in [from, to] (from rounded up to one); returns the count. */
int nn_sweep_powers_of_two(int from, int to, int *out, int max);

/* Prepares a sweep of these batch sizes (at most NN_SWEEP_MAX_BATCHES kept)
 * on no device yet; nothing starts. steps <= 0: 20 timed steps; warmup < 0: 3. */
void nn_sweep_init(nn_sweep *sw, const nn_job_config *base, const int *batches, int n_batches, long steps,
                   long warmup);
/* Adds a device with its calibration (NULL: none, for `why`), which names
 * each point's regime and predicted step. -1 when the sweep has
 * NN_SWEEP_MAX_DEVICES already. */
int nn_sweep_add_device(nn_sweep *sw, const char *device, const nn_calibration *cal, const char *why);

/* Adds a GPU that is not here as predicted for prof: one device "gpu" per
 * way of running its step (nnlab graph, nnlab eager, framework eager, in
 * that order), their points explained at once. -1 when there is no room
 * for the three. */
int nn_sweep_add_predicted(nn_sweep *sw, const nn_gpu_profile *prof);
/* A measured GPU's points get prof's prediction for the same inputs too
 * (profile_us), to show beside the measurement with the error. */
void nn_sweep_set_profile(nn_sweep *sw, const nn_gpu_profile *prof);

/* "cpu", "gpu"; a predicted device: "gpu nnlab graph (predicted for T4)". */
void nn_sweep_device_label(const nn_sweep *sw, int d, char *buf, size_t len);
/* The GPU of the sweep: the measured "gpu" device when there is one, else
 * the predicted one of way w (w < 0: the first predicted); -1 when none. */
int nn_sweep_gpu_index(const nn_sweep *sw, int way);

/* Records point (d, i) from the last snapshot of its job: DONE when a step
 * was timed (its measured step, samples/s, inputs and, with a calibration,
 * its explanation), else CANCELLED or FAILED (last_error says why). The
 * runner calls it as each job ends; public so that a test can feed the
 * same measurements to every front end. */
void nn_sweep_record(nn_sweep *sw, int d, int i, const nn_snapshot *s);

enum { NN_SWEEP_PROGRESS = 1, NN_SWEEP_RESULTS = 2 };

/* Starts the next point when none runs, collects a finished one; returns
 * NN_SWEEP_PROGRESS when the running job moved, NN_SWEEP_RESULTS when a
 * point ended (measured or not) and the next started. Never waits. */
int nn_sweep_poll(nn_sweep *sw);
/* Waits until the running point's job ends (nothing when none runs); the
 * next nn_sweep_poll collects it. */
void nn_sweep_wait(nn_sweep *sw);
/* Stops the running job; measured points stay, the rest are marked cancelled. */
void nn_sweep_cancel(nn_sweep *sw);
int nn_sweep_active(const nn_sweep *sw);
/* Cancels and waits for a job still running. */
void nn_sweep_free(nn_sweep *sw);

/* ---- reading the results ------------------------------------------------------------------ */

/* The index of device name, or -1. */
int nn_sweep_device_index(const nn_sweep *sw, const char *name);

/* Where the challenger overtakes the base for good (a predicted device's
 * rates are the model's: the answer is then a prediction). Points not measured on
 * both (failed, cancelled, pending) say nothing and are skipped; the answer
 * is the first index from which the challenger is faster (samples/s,
 * strictly) at every later point measured on both. -1 when it is not ahead
 * at the last point measured on both, or none is. The rule on bare rates
 * (NAN: not measured), and on a sweep's devices. */
int nn_crossover_index(const double *base, const double *challenger, int n);
int nn_sweep_crossover(const nn_sweep *sw, int base_dev, int challenger_dev);

/* Horace He's doubling ratio at point (d, i): step time at b over step time
 * at b/2. 1.0: doubling the batch did not lengthen the step (fixed costs per
 * step, overhead-bound); 2.0: it doubled it (the work grows with the batch).
 * 0 when b/2 was not measured too. */
double nn_sweep_doubling(const nn_sweep *sw, int d, int i);

/* The full explanation of point (d, i), as its regime and predicted step
 * came from; -1 when the point has no model. */
int nn_sweep_explain(const nn_sweep *sw, int d, int i, nn_explanation *out);

#endif
