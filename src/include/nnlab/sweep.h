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
 * Every device of a sweep is one way of running the step on one device
 * (framework, eager - "nnlab" on a CPU - or graph: docs/ways.md) with its
 * source. A GPU that is not here can be swept as predicted
 * (nn_sweep_add_predicted): the three ways of running its step (explain.h),
 * priced by a GPU profile, each a device of the sweep whose points are the
 * model's, never measured, marked so (`predicted`) for every front end to
 * say. A GPU that is here is measured eager and graph side by side
 * (nn_sweep_add_gpu_ways); the framework way is predicted on both devices
 * (nn_sweep_add_framework_cpu, _gpu), or measured by the framework itself
 * through the hook nn_sweep_add_external. Crossovers are read per matching
 * pair (nn_sweep_pairs), beyond the points' noise. The crossover and
 * doubling rules read predicted rates as they read measured ones. */
#ifndef NNLAB_SWEEP_H
#define NNLAB_SWEEP_H

#include "nnlab/calibrate.h"
#include "nnlab/engine.h"
#include "nnlab/explain.h"
#include "nnlab/observe.h"
#include "nnlab/profile.h"

#define NN_SWEEP_MAX_BATCHES 64
/* cpu, cpu-ref, the CPU's framework way, a GPU's eager and graph ways measured
 * and its framework way predicted (or its three ways predicted), and room for
 * the framework way measured on each device (nn_sweep_add_external) */
#define NN_SWEEP_MAX_DEVICES 10
/* A point is run again while its repetitions disagree (nn_sweep_wants_repeat),
 * at most this many times in all. */
#define NN_SWEEP_MAX_REPEATS 3
/* Repetitions disagree when the point's spread is more than this fraction
 * of its step. */
#define NN_SWEEP_NOISE 0.10

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
    /* the noise (src/analysis/model/sweep_noise.c) */
    int repeats;                 /* jobs that measured it (1 unless its repetitions disagreed) */
    double rep_us[NN_SWEEP_MAX_REPEATS];   /* each one's mean step */
    double spread_us;            /* half the range of rep_us, or with one job half the gap
                                    between its mean and median step (the snapshot keeps
                                    no other spread: nn_step_measure holds means only); 0
                                    for a predicted point. measured.step_us is the median
                                    repetition's */
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
    int predicted[NN_SWEEP_MAX_DEVICES]; /* no job: the model's points (a GPU profile's, a GPU's
                                            or the CPU's own calibration's: nn_sweep_source_text) */
    int way[NN_SWEEP_MAX_DEVICES];       /* every device's enum nn_gpu_way (docs/ways.md): on a CPU
                                            NN_WAY_EAGER is nnlab's own step ("nnlab") */
    int has_profile;                     /* prof: the profile of the predicted devices, or the one */
    nn_gpu_profile prof;                 /*   a measured GPU's points are compared with */
    nn_sweep_point pt[NN_SWEEP_MAX_DEVICES][NN_SWEEP_MAX_BATCHES];
    char last_error[NN_ERR_LEN + 64];    /* "device batch N: " + the last failed job's error */
    int latest_dev, latest_batch;        /* the last point measured (DONE); -1 before any */

    /* the ways (src/analysis/model/sweep_ways.c) */
    int graph_switch[NN_SWEEP_MAX_DEVICES];   /* a measured device's own --graph: 1, 0; -1: base's */
    int external[NN_SWEEP_MAX_DEVICES];       /* no nnlab job: the caller records its points */
    char measured_with[NN_SWEEP_MAX_DEVICES][32];   /* external: "PyTorch 2.11" */
    int way_fixed;               /* 1: the ways were picked for the devices (eager and graph
                                    side by side); 0: the base's switches decide a GPU's way */
    int pytorch[NN_SWEEP_MAX_DEVICES];  /* external, measured by the runner with PyTorch
                                           (nn_sweep_add_pytorch, src/jobs/sweep_torch.c) */
    char preset_path[NN_PATH_LEN];      /*   the preset's file PyTorch's helper reads */
    void *torch_run;             /* the PyTorch point running on a thread of its own, or NULL */

    /* the runner */
    int again;                   /* the last point collected runs again (its repetitions
                                    disagree) */
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
/* Whether the sweep's device d computes on a GPU (measured, emulated or
 * predicted from a profile): from the device's kind (nnlab/device.h), never
 * its name. */
int nn_sweep_device_is_gpu(const nn_sweep *sw, int d);
/* Whether it is the fast CPU backend (threaded, in host memory): the CPU
 * whose framework way a sweep may predict beside its own step. */
int nn_sweep_device_is_cpu(const nn_sweep *sw, int d);

/* Adds a GPU that is not here as predicted for prof: one device "gpu" per
 * way of running its step (nnlab graph, nnlab eager, framework eager, in
 * that order), their points explained at once. -1 when there is no room
 * for the three. */
int nn_sweep_add_predicted(nn_sweep *sw, const nn_gpu_profile *prof);
/* A measured GPU's points get prof's prediction for the same inputs too
 * (profile_us), to show beside the measurement with the error. */
void nn_sweep_set_profile(nn_sweep *sw, const nn_gpu_profile *prof);

/* A device with its way and, when not measured by nnlab, its source:
 * "cpu nnlab", "gpu graph", "cpu framework (predicted from this CPU's
 * calibration)", "gpu framework (predicted for T4)", "gpu framework
 * (measured with PyTorch 2.11)". */
void nn_sweep_device_label(const nn_sweep *sw, int d, char *buf, size_t len);
/* The GPU of the sweep: the measured "gpu" device of way w when there is
 * one (w < 0: the first measured), else the first measured, else the
 * predicted one of way w (w < 0: the first predicted); -1 when none. */
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

/* ---- the ways on both devices (src/analysis/model/sweep_ways.c, docs/ways.md) --------------------

 * A way is how a step is run: `framework` (as PyTorch or Keras run it
 * eagerly: every op pays the framework's host cost, the loss is read back
 * every step, every batch is copied), `eager` (nnlab's own launches; on a
 * CPU nnlab's own step, named "nnlab") and `graph` (a GPU only: one
 * recorded step, the data on the device). Every device of a sweep has one
 * (way[d]) and a source: measured by nnlab, predicted (predicted[d]: a GPU
 * profile's, a GPU's own calibration's, or the CPU's calibration with the
 * framework's fitted figures), or measured by the framework itself
 * (external[d], measured_with[d]). */

/* "nnlab" (a CPU's own step), "framework", "eager", "graph" */
const char *nn_sweep_way_word(const nn_sweep *sw, int d);
/* "measured", "predicted for T4", "predicted from this CPU's calibration",
 * "predicted from this GPU's calibration", "measured with PyTorch 2.11" */
void nn_sweep_source_text(const nn_sweep *sw, int d, char *buf, size_t len);

/* The framework way on the CPU, predicted (nnlab/framework.h) from cal
 * (the CPU's calibration) and prof's [framework] figures; prof becomes the
 * sweep's profile when it has none. -1 when there is no room. */
int nn_sweep_add_framework_cpu(nn_sweep *sw, const nn_calibration *cal, const nn_gpu_profile *prof);
/* A GPU that is here: its eager and graph ways measured side by side (two
 * devices "gpu", each job with its own graph switch), then its framework
 * way predicted from the same calibration (cal; the framework's host cost
 * per op from prof). -1 when there is no room for the three. */
int nn_sweep_add_gpu_ways(nn_sweep *sw, const nn_calibration *cal, const nn_gpu_profile *prof);
/* The framework way alone on a GPU that is here, predicted from its
 * calibration (after a device measured in the one way the switches pick). */
int nn_sweep_add_framework_gpu(nn_sweep *sw, const nn_calibration *cal, const nn_gpu_profile *prof);

/* The hook for a framework measured for real (the `torch` runner): a device
 * of way `way` on `device` ("cpu", "gpu") whose points no nnlab job
 * measures: the caller times the framework's step (PyTorch's, on that
 * device, for sw->base.preset at each sw->batch[i]) and records each point
 * with nn_sweep_record_external; the runner skips it, every front end labels
 * it "measured with <tool>" (tool: "PyTorch 2.11"), and its points pair with
 * the other device's framework way like measured ones. Returns the device
 * index, or -1 when there is no room. */
int nn_sweep_add_external(nn_sweep *sw, const char *device, nn_gpu_way way, const char *tool);
/* Point (d, i) of an external device: its step (mean us) and spread (us,
 * 0 when unknown); step_us <= 0 records a failure with why. */
void nn_sweep_record_external(nn_sweep *sw, int d, int i, double step_us, double spread_us, const char *why);

/* The framework way measured for real with PyTorch on `device` ("cpu" or
 * "gpu"): an external device (above) whose points the runner measures
 * itself, one at a time in the batch-major order like its jobs, each by
 * PyTorch's helper in a process of its own (nnlab/torch_step.h) started
 * from a thread, so that polling never waits. preset_path is the preset's
 * file. 0, or -1 with err: no python3 with torch, a GPU PyTorch cannot see,
 * no room. */
int nn_sweep_add_pytorch(nn_sweep *sw, const char *device, const char *preset_path, char *err,
                         size_t err_len);

/* Whether a front end lists device d's calibration: not for a device that
 * shares another's (the CPU's framework way, a GPU's second way, the three
 * ways of one profile) nor for one measured by the framework itself. */
int nn_sweep_lists_calibration(const nn_sweep *sw, int d);

/* ---- crossovers per matching pair ---------------------------------------------------------- */

enum nn_pair_kind {
    NN_PAIR_FRAMEWORK,           /* a framework's CPU against its GPU: the write-ups' lesson */
    NN_PAIR_NNLAB,               /* nnlab's CPU against nnlab's GPU (eager, graph): careful code */
    NN_PAIR_OTHER                /* any other device against the first (cpu-ref against cpu) */
};

typedef struct nn_sweep_pair {
    int kind;                    /* enum nn_pair_kind */
    int base, challenger;        /* devices: the CPU, the GPU (or the other) */
    int predicted;               /* either side's points are the model's */
    int contradictory;           /* a predicted side priced from a contradictory calibration:
                                    no crossover is named (nnlab/verdict.h) */
    int crossover;               /* nn_sweep_crossover_noisy; -1: no crossover */
    int tie;                     /* the first batch index where the two are within their
                                    combined spread (a tie, not a crossover); -1: none */
} nn_sweep_pair;

/* The matching pairs of the sweep, framework pairs first, then nnlab's
 * (graph, eager), then the others; returns the count (at most max). */
int nn_sweep_pairs(const nn_sweep *sw, nn_sweep_pair *out, int max);
/* "framework", "nnlab", "other" */
const char *nn_pair_kind_name(int kind);
/* The one sentence the CLI and the lab both print for a pair's crossover
 * (without the devices): "overtakes from batch 16 on", "is faster at every
 * batch swept", "does not overtake at the batches swept", "ties within the
 * noise from batch 8" (a cancelled sweep adds "of those measured"). */
void nn_sweep_crossover_words(const nn_sweep *sw, const nn_sweep_pair *p, char *buf, size_t len);
/* The write-up's own figure beside the framework pair, when the preset
 * carries one (measured_cpu_s, measured_gpu_s at its batch): "the write-up
 * at batch 4: CPU 50 s, GPU 94 s (the GPU 1.88x slower)"; "" without. */
void nn_sweep_writeup_text(const nn_sweep *sw, char *buf, size_t len);

/* ---- noise (src/analysis/model/sweep_noise.c) -------------------------------------------------- */

/* The spread of point (d, i) as a fraction of its step (0: none known); a
 * predicted point's is its calibration's (nn_calibration_spread: a profile's
 * 0), so that the crossovers call a lead between predicted figures only
 * beyond what the calibration is sure of. */
double nn_sweep_relative_spread(const nn_sweep *sw, int d, int i);
/* Point (d, i) was measured and its repetitions disagree (a relative
 * spread above NN_SWEEP_NOISE) with fewer than NN_SWEEP_MAX_REPEATS runs:
 * the runner measures it again. */
int nn_sweep_wants_repeat(const nn_sweep *sw, int d, int i);
/* The crossover rule beyond the noise: rates within their combined spread
 * (base_spread, challenger_spread: samples/s, 0 when unknown) are a tie,
 * neither ahead nor behind; a lead starts only beyond it, and a tie after a
 * lead ends it. *tie (may be NULL): the first index tied, or -1. With no
 * spreads it is nn_crossover_index. */
int nn_crossover_index_noisy(const double *base, const double *challenger, const double *base_spread,
                             const double *challenger_spread, int n, int *tie);
/* The same on a sweep's devices, their points' spreads. */
int nn_sweep_crossover_noisy(const nn_sweep *sw, int base_dev, int challenger_dev, int *tie);

#endif
