/* src/include/nnlab/engine.h - the engine API every front end drives (the CLI in
 * src/cli/, the ncurses lab in ui/).
 *
 * A job = a preset + device + batch + epochs or steps + lr + seed + options.
 * nn_job_start runs it on its own pthread. The caller may read a consistent
 * snapshot at any moment; the trainer publishes one after every step under a
 * mutex held for a small memcpy, so reading never slows training. Pause,
 * resume and cancel are requests the trainer honours between steps.
 * A job may instead calibrate a device (NN_JOB_CALIBRATE): the same thread,
 * snapshot and cancel, and the result from nn_job_calibration.
 * Nothing here prints or exits: errors come back as a state and a message. */
#ifndef NNLAB_ENGINE_H
#define NNLAB_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "nnlab/calibrate.h"
#include "nnlab/preset.h"
#include "util.h"

typedef enum nn_job_state {
    NN_JOB_PREPARING,            /* loading data, building the network */
    NN_JOB_RUNNING,
    NN_JOB_PAUSED,
    NN_JOB_DONE,
    NN_JOB_CANCELLED,
    NN_JOB_FAILED,
    NN_JOB_DIVERGED              /* stopped: the training loss became NaN or inf
                                    (the snapshot's error says at which step) */
} nn_job_state;

/* The parts of a training step, timed separately (mean microseconds per step). */
enum nn_phase {
    NN_PHASE_COPY,               /* gather the batch and copy it to the device */
    NN_PHASE_FORWARD,
    NN_PHASE_BACKWARD,           /* loss and backpropagation */
    NN_PHASE_OPTIMIZER,
    NN_PHASE_SYNC,               /* wait for the device and read the loss back */
    NN_PHASE_ALLREDUCE,          /* ranks: the gradients summed over every rank (after
                                    the backward, before the optimiser; the host's clock) */
    NN_PHASE_COUNT
};

/* What a job does. */
enum nn_job_kind {
    NN_JOB_TRAIN,                /* train (or bench) the preset: the default */
    NN_JOB_CALIBRATE,            /* measure the device for the cost model (nnlab/calibrate.h) */
    NN_JOB_JACOBIAN,             /* the Jacobian of the preset's MLP (nnlab/jacobian.h) */
    NN_JOB_RANKS                 /* training over ranks this job starts: `nnlab train
                                    --ranks N` as a child (src/jobs/job_ranks.c); a
                                    training config with ranks > 1 runs as one */
};

/* The ranks a job may start (nn_job_config.ranks) and a snapshot shows one
 * by one (nn_snapshot.rank_rows): a lab's question ends before a cluster's. */
#define NN_RANKS_JOB_MAX 16

typedef struct nn_job_config {
    enum nn_job_kind kind;       /* NN_JOB_TRAIN (0) or NN_JOB_CALIBRATE; a calibration
                                    reads only device (or the preset's) and threads */
    nn_preset preset;            /* copied into the job */
    char device[16];             /* "" = the preset's */
    int batch;                   /* 0 = the preset's */
    int epochs;                  /* 0 = the preset's */
    long steps;                  /* > 0: stop after this many steps instead */
    double lr;                   /* 0 = the preset's */
    uint64_t seed;
    int threads;                 /* CPU threads, 0 = the cores free when it starts */
    char data_dir[NN_PATH_LEN];  /* "" = the preset's or the default */
    long log_every;              /* 0 = the preset's */
    int bench;                   /* time training steps only: no validation */
    long warmup;                 /* bench: untimed steps first */
    int no_validation;           /* skip validation at the end of each epoch */

    /* GPU teaching switches (docs/gpu-backend.md). Each changes only what it
     * names; a host-memory (CPU) device ignores all but sync_every_step. */
    int data_on_device;          /* 1: upload the data set once and gather each batch
                                    on the device; 0: copy each batch from host memory */
    int pinned;                  /* with data_on_device 0: copy from page-locked memory */
    int sync_every_step;         /* read the loss back after every step, like loss.item() */
    int no_overlap;              /* ranks: one blocking sum after the backward instead of
                                    buckets summed while it runs (the preset's overlap) */
    int graph;                   /* record one full-batch step as a CUDA graph and replay it */
    int tf32;                    /* allow TF32 tensor-core math (off: FP32 as the CPU) */
    int deterministic;           /* deterministic convolution algorithms only, so that a
                                    run repeats bit for bit (off: the fastest measured);
                                    a CPU device is deterministic either way */

    int ranks;                   /* training: > 1 starts that many ranks (processes that
                                    mpirun starts, each at this batch: NN_JOB_RANKS);
                                    0 or 1: this process trains alone (or as the rank a
                                    launcher made it: nnlab/ranks.h) */

    int cache_at_threads;        /* NN_JOB_CALIBRATE: cache the result under its thread
                                    count (nn_calibration_save_threads: a rank's), not as
                                    the device's own */

    /* NN_JOB_JACOBIAN: reads device, seed, threads, graph, tf32, deterministic and these */
    int jac_val;                 /* samples in the batch, 0 = the preset's [task] val */
    int jac_method;              /* enum nn_jac_method; init: the preset's [task] method */
} nn_job_config;

/* Fills cfg with the preset's defaults: seed 1, warmup 0, and the GPU
 * switches of its [gpu] section (without one: the data on the device and
 * CUDA graphs on, no sync every step, no TF32). A preset whose [task] kind
 * is jacobian gives kind NN_JOB_JACOBIAN and its method. */
void nn_job_config_init(nn_job_config *cfg, const nn_preset *p);

typedef struct nn_loss_point {
    long step;                   /* global step at which the interval ended (1-based) */
    int epoch;                   /* 1-based */
    long step_in_epoch;          /* 1-based, as the write-ups print it */
    float loss;                  /* mean training loss over the interval */
    double time_s;               /* the job's training time when it was reported (the
                                    snapshot's elapsed_s then): a wall-clock x axis */
} nn_loss_point;

typedef struct nn_epoch_result {
    int epoch;                   /* 1-based; the last may be partial with --steps */
    long step;                   /* global step when it was measured */
    float val_loss;
    float val_accuracy;          /* classification only */
    int has_accuracy;
    double time_s;               /* the job's training time once validated (its
                                    validation included) */
    double val_s;                /* the validations' part of time_s, this one's included */
} nn_epoch_result;

/* What a device backend did per timed step, on average, counted by the
 * backend itself (nn_backend_counters). */
typedef struct nn_step_counters {
    double launches;             /* what the host issued: kernels + library calls + graph launches */
    double kernels;              /* own kernels and memsets */
    double library_calls;        /* cuBLAS and cuDNN calls */
    double graph_launches;
    double graph_nodes;          /* kernels and library calls run inside those graphs */
    double h2d_copies, h2d_bytes;
    double d2h_copies, d2h_bytes;
    double syncs;                /* host waits for the device */
} nn_step_counters;

/* One rank of a job that started its ranks (NN_JOB_RANKS), as its last
 * progress line said it (`nnlab train --progress-lines`): every figure
 * measured by that rank. */
typedef struct nn_rank_progress {
    int heard;                   /* a line came from it (0: nothing yet) */
    nn_job_state state;
    long step, steps;            /* its steps done and to do */
    double elapsed_s;            /* its training time so far */
    double us_per_step;          /* its mean step; 0 until a step was timed */
    double allreduce_us;         /* of which it waited for the sum; valid when
                                    has_allreduce */
    int has_allreduce;
    double samples_per_s;        /* the global batch's samples a second, as it saw
                                    them (every rank takes every step); 0 unknown */
} nn_rank_progress;

typedef struct nn_snapshot {
    enum nn_job_kind kind;
    nn_job_state state;
    char error[NN_ERR_LEN];      /* FAILED: why; DIVERGED: "loss became NaN at step N" */
    long diverged_step;          /* DIVERGED: the global step (1-based) at which the loss
                                    was found non-finite; */
    int diverged_exact;          /*   1: that step made it so; 0: it was read back
                                    only then (a device reads the loss every log_every
                                    steps), so it happened by that step */
    double diverged_loss;        /* DIVERGED: the loss read then (NaN or inf) */
    double fraction_done;        /* 0..1: steps done of total_steps, or how far a
                                    calibration has come */
    char activity[NN_TEXT_LEN];  /* a calibration: what it is measuring now ("" training) */
    char data_name[NN_NAME_LEN];
    char data_desc[NN_TEXT_LEN];
    int data_synthetic;
    char device[16];
    int batch, epochs;
    int epoch;                   /* current epoch, 1-based (0 while preparing) */
    long step, total_steps, steps_per_epoch;
    double prepare_s;            /* loading data and building the net */
    double elapsed_s;            /* training time so far, pauses excluded */
    double samples_per_s, eta_s; /* valid when has_rate */
    int has_rate;
    float last_loss;             /* last reported interval's mean; valid when n_loss_points > 0 */
    long n_loss_points;
    int n_epoch_results;
    nn_epoch_result last_epoch;  /* valid when n_epoch_results > 0 */
    double phase_us[NN_PHASE_COUNT];   /* mean per step over the timed steps; bit p of
                                          phase_valid says whether phase p was measured */
    unsigned phase_valid;
    int phase_device_clock;      /* copy, forward, backward and optimizer were timed on the
                                    device's clock (CUDA events); sync is always the host's
                                    time spent waiting. With --graph, forward, backward and
                                    optimizer run as one graph: graph_us, not phase_us */
    double host_phase_us[NN_PHASE_COUNT];  /* the host's time per phase (on a GPU: issuing) */
    double graph_us;             /* device time of the replayed step; valid when has_graph_us */
    int has_graph_us;
    int steps_async;             /* steps were not waited for one by one (a GPU without
                                    sync_every_step): us_per_step_median times issuing, and
                                    the mean us_per_step (which includes every wait) is the
                                    figure to use */
    double us_per_step;          /* mean over the timed steps */
    double us_per_step_median;   /* bench: median over the timed steps */
    long timed_steps;
    size_t n_params;
    int threads;                 /* the threads asked for (0: the device chooses) */
    int threads_now;             /* a CPU device: the threads taking part now, which it
                                    revises as other programs come and go; 0: n/a */
    char threads_why[128];       /* why that many, in words */
    int adam_fused_layers;       /* a CPU job: layers whose Adam update ran inside their
                                    backward in the last step (nn_net_fuse_adam): the
                                    backward phase holds it, the optimizer the rest */

    /* The GPU teaching switches as applied; valid when has_switches (a device
     * backend; sync_every_step applies everywhere). note says why one asked
     * for did not apply, or for a calibration why it was not cached ("" when
     * none). */
    int has_switches;
    int data_on_device, pinned, graph, tf32;
    int sync_every_step;
    char note[NN_TEXT_LEN];

    /* Per-step accounting from the backend; valid when has_counters. */
    int has_counters;
    nn_step_counters per_step;

    /* The validations' time so far, part of elapsed_s: a headline's per-step
     * time and samples/s are the training steps' alone (nnlab/progress.h). */
    double val_s;
    /* A Jacobian job: the host threads running whole passes side by side
     * (nn_jac_result's lanes, known once it runs; 0 before). */
    int jac_lanes;

    /* Data-parallel training (nnlab/ranks.h): ranks > 1 when the job runs as
     * rank `rank` of them; batch is then each rank's, global_batch ranks x
     * batch; the all-reduce phase is the time the step waited for the sum. */
    int ranks, rank;
    long global_batch;
    char comm_transport[64];
    char comm_library[128];
    int overlap;                 /* the sums overlapped the backward (buckets) */
    double overlap_us;           /*   then: the mean time per step from the first bucket
                                    started to the backward's end, while sums were in
                                    flight beside it; part of the backward phase (NaN on
                                    a GPU: its sums run on a stream of their own, their
                                    time in flight the device's, not timed apart) */

    /* A job that started its ranks (NN_JOB_RANKS): how many (0 for any other
     * job), and each one's progress, the first NN_RANKS_JOB_MAX of them. The
     * rest of the snapshot (step, loss, rate, phases) is rank 0's, which
     * speaks for them all: the loss is the ranks' agreed one, samples/s the
     * global batch's, and the step is the same step on every rank. */
    int launched_ranks;
    nn_rank_progress rank_rows[NN_RANKS_JOB_MAX];
} nn_snapshot;

typedef struct nn_job nn_job;

/* A training job's trained parameters, once it ended (nn_job_wait): the
 * layers' blocks in order (weights, then bias; a shared block once), into
 * out[0..cap). Returns their count (more than cap: only cap copied), or -1
 * when the job holds no network or reading them failed. */
long nn_job_read_params(nn_job *job, float *out, long cap);

/* ---- sizes, checked before anything is allocated ---------------------------------- */

/* What a training job of cfg will hold in memory, worked out from the preset,
 * the batch and the data set's kind and sizes before anything is allocated:
 * the CLI, the lab's setup screen and the engine itself use it alike. Bytes. */
typedef struct nn_memory_estimate {
    double params;               /* parameters, gradients and the optimiser's state */
    double batch;                /* a batch's buffers: input, labels, each layer's
                                    output, activation gradients, host staging */
    double workspace;            /* the convolution workspace (known once the backend
                                    is open: 0 in an estimate made before) */
    double data;                 /* the data set held in host memory (both splits),
                                    and its sample order */
    double fixed;                /* a training job's pages besides its arrays
                                    (NN_JOB_FIXED_BYTES; 0 for a Jacobian's) */
    int device;                  /* 1: a device with its own memory (a GPU) holds the
                                    parameters, the batch and the workspace */
    double host;                 /* what host memory must hold: everything on a CPU
                                    device; on a GPU the data set and the staging */
    double available;            /* host memory available now (MemAvailable, or a
                                    cgroup's limit or an address-space limit's room
                                    when lower); 0: unknown */
    double library;              /* address space the threads and libraries map for
                                    themselves, not memory the job fills: for each
                                    thread that runs an sgemm (cpu device) OpenBLAS's
                                    buffer, and before the backend opens each thread's
                                    stack and malloc arena. Counted against an
                                    address-space limit only (address_room), never
                                    against available; the threads an earlier job
                                    of the process started are not counted again
                                    (their mappings stay and are reused) */
    int library_threads;         /*   the job's threads (the backend's, once open;
                                    else --threads, else every online core) */
    double address_room;         /* what an address-space limit (ulimit -v, RLIMIT_AS)
                                    leaves now, beyond what the process maps; -1: none */
    long train_rows;             /* training samples the data set gives (MNIST 60000,
                                    CIFAR-10 50000, random: rows; files in a folder
                                    may hold fewer, checked again once loaded) */
    int big_layer;               /* the layer with the most parameters (0-based), -1 none */
    double big_layer_bytes;      /*   its part of params */
    int copies;                  /* processes on this host that each hold params, batch,
                                    workspace, data and fixed: a job over N ranks, N
                                    (host is their sum; a device's parts are each rank's
                                    own GPU's); 0 or 1: this process alone */
} nn_memory_estimate;

/* What a training job touches besides the arrays the estimate adds up, the
 * same whatever the network's size or thread count: the code and library
 * pages its steps fault in, the BLAS packing buffers' first pages, its
 * threads' stacks, the histories. Measured 5.4-6.4 MB on the x86-64 build
 * (the peak resident set of jobs from 37 MB to 2.8 GB, less the estimate's
 * arrays and less what the process held when it checked the sizes); 8 MiB
 * leaves room for another BLAS build's blocking. */
#define NN_JOB_FIXED_BYTES (8.0 * 1024 * 1024)

/* Fills m for cfg (batch 0: the preset's). Quick: arithmetic and one read
 * of /proc/meminfo. A Jacobian job (kind NN_JOB_JACOBIAN; its val and
 * method, 0: the preset's [task] val) fills params with the parameters on
 * the backend, batch with the method's buffers there, data with the host
 * arrays (the input, J's blocks, host copies and staging), from
 * nn_jac_sizes_of (nnlab/jacobian.h); train_rows 0 and big_layer -1. */
void nn_job_memory_estimate(const nn_job_config *cfg, nn_memory_estimate *m);

/* The address space an address-space limit (ulimit -v, RLIMIT_AS) leaves
 * beyond what the process maps now, in bytes; -1 without a limit. */
double nn_address_room(void);

/* Refuses, with a one-line message, a batch larger than the training set and
 * a job whose host memory exceeds what is available (naming what drives it:
 * the batch, a layer's key or [data] rows, with the bytes needed and
 * available). batch_key names the batch as the caller's user gave it:
 * "--batch" gives "--batch 1000000: ...", "x.ini: [train] batch =" gives
 * "x.ini: [train] batch = 1000000: ..."; NULL: "batch 1000000: ...".
 * A Jacobian job is named by its val the same way ("--val", "x.ini: [task]
 * val ="; NULL: "[task] val = 100000: needs ~1.3 GB of memory (method
 * batched: parameters 35 KB, buffers 1.1 GB, host arrays 800 MB), 500 MB
 * available"). Then, under an address-space limit (ulimit -v), the job's
 * memory and the libraries' own buffers against the room it leaves:
 * "address space: needs ~783 MB (memory 363 MB; up to 2 threads' own
 * buffers, stacks and arenas 419 MB, OpenBLAS's 134 MB each among them),
 * ulimit -v leaves 631 MB: use fewer --threads or raise ulimit -v".
 * Returns 0 when the job fits. nn_job_start runs it too. */
int nn_job_check_sizes(const nn_job_config *cfg, const nn_memory_estimate *m, const char *batch_key,
                       char *err, size_t err_len);

/* ---- the time a job will take, predicted before it starts ---------------------------- */

/* A job predicted to take longer than this is not started without a word:
 * the lab shows the prediction and asks (y/n), the CLI prints it first. */
#define NN_JOB_ASK_S 600.0

/* The seconds a job of cfg (not yet resolved: 0 = the preset's) is
 * predicted to take on its device, whose figures are cal (its calibration,
 * or a GPU profile's), by the kind's own prediction (job_kind.h): training,
 * its steps x the cost model's step (validation left out); a Jacobian, its
 * method at its val (nn_jac_predict_s). 0 with *seconds set, -1 when the
 * kind predicts nothing. */
int nn_job_predict_s(const nn_job_config *cfg, const nn_calibration *cal, double *seconds);

/* The one sentence both front ends show before such a job: "predicted to
 * take 3:12:05 (the cost model, from cpu's calibration): over 10 minutes". */
void nn_job_prediction_text(double seconds, const char *device, char *buf, size_t len);

/* "13.2 TB", "1.5 GB", "820 MB", "64 KB" (powers of 1000): the figure the
 * messages use. */
void nn_format_bytes(double bytes, char *buf, size_t len);

/* Validates cfg and starts the trainer thread. NULL with a message when cfg
 * is unusable before anything starts (an unknown device, a GPU module that
 * cannot be loaded, a bad batch). Errors found later end the job in
 * NN_JOB_FAILED: a device that cannot run here (asked on the job's own
 * thread, as the GPU's probe initialises the CUDA runtime, which a front
 * end's thread must not), data files, memory. */
nn_job *nn_job_start(const nn_job_config *cfg, char *err, size_t err_len);
/* The config of a job that calibrates device on threads (0: all cores) for
 * the cost model (nnlab/calibrate.h); a calibration reads nothing else. */
void nn_job_config_calibration(nn_job_config *cfg, const char *device, int threads);

void nn_job_snapshot(nn_job *job, nn_snapshot *out);

/* Copies loss points [from, from+max) (fewer if not yet recorded); returns how many. */
long nn_job_loss_points(nn_job *job, long from, nn_loss_point *out, long max);
/* Copies epoch results [from, from+max); returns how many. */
int nn_job_epoch_results(nn_job *job, int from, nn_epoch_result *out, int max);

void nn_job_pause(nn_job *job);
void nn_job_resume(nn_job *job);
void nn_job_cancel(nn_job *job);

/* A calibration job's result, once its state is NN_JOB_DONE: 0 and *out, or
 * -1 (not done yet, cancelled, failed, or a training job). The job has
 * already written it to the device's cache (nn_calibration_save); when that
 * failed, the result is still here and the snapshot's note says why it was
 * not cached. A calibration honours cancel before it starts measuring and
 * when it ends (the result is then dropped and nothing cached): nn_calibrate
 * cannot be stopped part way, so a cancel waits for it (a few seconds on the
 * cpu devices). Pause does not apply to a calibration. */
int nn_job_calibration(nn_job *job, nn_calibration *out);

/* A convolution algorithm the device chose for one convolution shape and
 * direction, as Explain lists it (the backend's nn_conv_choice, which public
 * headers cannot see). */
typedef struct nn_conv_algorithm_info {
    int n, c_in, h_in, w_in;     /* the input: batch, channels, height, width */
    int c_out, k_h, k_w;         /* the filters: c_out of k_h x k_w */
    int stride, pad;             /* stride and padding along the width */
    char direction[16];          /* "forward", "backward-data", "backward-filter" */
    char algorithm[48];          /* the library's name, e.g. "BWD_FILTER_ALGO_0" */
    int deterministic;           /* 1: the same inputs give the same bits */
    double time_us;              /* measured when it was chosen */
    int from_cache;              /* 1: read from the cache file, not timed in this run */
} nn_conv_algorithm_info;

/* The convolution algorithms a training job's device chose (a GPU; none on
 * a CPU), known after its first step: up to cap into out; returns how many
 * there are (more than cap: the rest left out), 0 when none (yet). */
int nn_job_conv_algorithms(nn_job *job, nn_conv_algorithm_info *out, int cap);

/* Waits for the trainer to finish; returns the final state. */
nn_job_state nn_job_wait(nn_job *job);
/* Waits (cancelling first if still running) and frees everything. */
void nn_job_free(nn_job *job);

/* How a front end shows a job while it runs and after: each front end keeps
 * one view per value (the lab's: ui/panels/run_views.c), so that a new kind
 * with a new look adds a value here and a view there, and nothing else in a
 * front end asks which kind a job is. */
enum nn_job_view {
    NN_VIEW_STEPS,               /* loss curves, phases of a step, samples/s */
    NN_VIEW_JACOBIAN,            /* rows of J, FLOPs, the waste, the val sweep */
    NN_VIEW_CALIBRATION,         /* a fraction done and what is being measured */
    NN_VIEW_COUNT
};

/* What a front end needs to know of a job kind, so that it never compares
 * kinds: its name, whether it trains (epochs, steps, learning rate, the loss
 * chart, the phases, a batch sweep), the methods it offers, the name, preset
 * key and largest value of its size (a batch, or a Jacobian's val), how its
 * progress is counted and which view shows it. */
typedef struct nn_job_traits {
    enum nn_job_kind kind;
    const char *name;            /* "train", "calibrate", "jacobian" */
    int trains;                  /* takes training steps */
    int has_method;              /* offers a method choice (n_methods of them) */
    const char *size_label;      /* "batch" or "val" */
    const char *size_key;        /* "[train] batch" or "[task] val" */
    long size_max;               /* the largest size allowed */
    int n_methods;               /* has_method: the methods, numbered from 0 */
    const char *(*method_name)(int method);   /* has_method: "rows", "batched", ... */
    int default_method;          /* has_method: the one a new setting starts on */
    /* A kind that trains nothing: what a job of it computes, in one line
     * ("Jacobian by rows at val 100"); NULL for training. */
    void (*task_line)(int method, long size, char *buf, size_t len);
    int progress_by_fraction;    /* its progress is the snapshot's fraction_done, not
                                    steps of total_steps (a calibration) */
    const char *no_pause;        /* why a job of this kind cannot pause (NULL: it can);
                                    nn_job_pause is then a no-op the front end words */
    enum nn_job_view view;       /* how a front end shows it */
} nn_job_traits;

const nn_job_traits *nn_job_traits_of(enum nn_job_kind kind);
/* The kind of job a preset describes (its [task]). */
enum nn_job_kind nn_job_kind_of_preset(const nn_preset *p);

const char *nn_job_state_name(nn_job_state s);
/* 1 when a job in state s has ended: done, cancelled, failed or diverged. */
int nn_job_state_ended(nn_job_state s);
const char *nn_phase_name(enum nn_phase p);

#endif
