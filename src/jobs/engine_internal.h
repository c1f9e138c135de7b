/* src/jobs/engine_internal.h - what the job engine and its kinds share,
 * private to src/jobs: the job, the named results its loops return, and the
 * engine's services a kind may call.
 *
 *   engine.c          the job's thread, the lock, publishing, pause and
 *                     cancel, the API; a job's kind is called through its
 *                     entry in the table (job_kind.h, job_kinds.c)
 *   job_memory.c      what the machine has, and a kind's estimate and size
 *                     check behind nn_job_memory_estimate and nn_job_check_sizes
 *   job_train.c       the training kind: its loop; the step machinery is
 *                     train/ (train_internal.h)
 *   job_calibrate.c   the calibration kind
 *   jacobian/         the Jacobian kind (job_jacobian.c) and its computation
 *   sweep_run.c       the batch sweep's runner: a bench training job per point
 *
 * Everything a step touches is allocated before the first step (the
 * *_prepare functions); a step allocates nothing (tests/test_engine.c). */
#ifndef NNLAB_ENGINE_INTERNAL_H
#define NNLAB_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "data.h"
#include "net.h"
#include "nnlab/engine.h"
#include "nnlab/jacobian.h"
#include "rng.h"
#include "run_result.h"

/* Timing marks of a device step (backend.h timing_mark), in step order, as
 * the backend wants them: mark 0 starts it, engine_phase_mark(p) ends phase
 * p (copy 1, forward 2, backward 3, a device rank's all-reduce 4, optimizer
 * 5); a graph job marks the whole compute part (replayed or eager) with
 * MARK_GRAPH. */
#define MARK_GRAPH 6
static inline int engine_phase_mark(int p)
{
    return p == NN_PHASE_ALLREDUCE ? 4 : p == NN_PHASE_OPTIMIZER ? 5 : p + 1;
}

/* The convolution algorithms a job keeps for Explain (one per shape and
 * direction: LeNet has 6). */
#define ENGINE_CONV_MAX 64

typedef struct engine_buckets engine_buckets;

/* Sums over a training job's steps, owned by its thread (train/engine_stats.c). */
typedef struct engine_totals {
    long steps;                  /* steps done */
    long warmup;                 /* bench: untimed steps first (0 otherwise) */
    long timed;                  /* steps after the warm-up */
    long samples;                /* samples in the timed steps */
    double phase_s[NN_PHASE_COUNT];   /* host time per phase of the timed steps */
    double *step_times;          /* bench: (timed steps) seconds each, for the median */
    double active_s;             /* training time so far, pauses excluded */
    double step_s_total;         /* time inside timed steps */
    double val_s;                /* validation, within active_s */
    double graph_host_s;         /* host time of the compute part of graph-job steps */
    double overlap_s;            /* ranks: sums in flight during the timed steps' backward */
    double dev_us[NN_TIMING_MARKS];   /* device-clock phase times of timed steps */
    long dev_n[NN_TIMING_MARKS];
    nn_backend_counters cnt_base;     /* counters when timing started */
    nn_backend_counters cnt_skip;     /* traffic outside steps (validation) since then */
} engine_totals;

struct nn_job {
    nn_job_config cfg;           /* resolved: device, batch, epochs, lr, log_every set */
    const nn_backend_ops *ops;
    pthread_t thread;
    int thread_started;

    /* shared with readers, under lock */
    pthread_mutex_t lock;
    pthread_cond_t wake;         /* resume and cancel wake a paused trainer */
    nn_snapshot snap;
    nn_loss_point *points;       /* capacity fixed at start: no allocation while training */
    long n_points, cap_points;
    nn_epoch_result *epoch_results;
    int n_epoch_results, cap_epoch_results;

    nn_calibration calibration;  /* a calibration job's result, once has_calibration */
    int has_calibration;
    nn_jac_result jacobian;      /* a Jacobian job's result, once has_jacobian */
    int has_jacobian;
    int jac_method;              /* a Jacobian job's method (the trainer's copy) */

    nn_conv_choice conv[ENGINE_CONV_MAX];   /* the device's choices, for Explain */
    int n_conv;

    atomic_int pause_requested;
    atomic_int cancel_requested;

    /* owned by the job's thread */
    nn_snapshot draft;           /* the snapshot being written: the thread updates it
                                    without the lock, field by field, as a step goes;
                                    engine_publish copies it whole into snap under the
                                    lock, so a reader never sees half a step */
    nn_backend backend;          /* opened by the kind's run, closed by the engine */
    nn_conv_choice conv_draft[ENGINE_CONV_MAX];   /* read from the backend, then kept */
    int backend_open;

    /* a training job's (job_train.c, train/) */
    nn_dataset data;
    nn_net net;
    int32_t *order;              /* (n_train) sample order of the current epoch */
    float *batch_x;              /* (batch, sample_floats) gathered on the host */
    int32_t *batch_y;            /* (batch) */
    float *batch_t;              /* (batch, target_width) */
    nn_rng shuffle_rng;
    float step_stats[2];         /* sync_every_step: the accumulator, read each step */
    engine_totals tot;

    /* A device backend (not host memory): the GPU paths and switches apply. */
    int device;
    int resident;                /* the data set lives in backend memory */
    int use_pinned;              /* batches staged in page-locked memory */
    int use_graph, graph_ready;  /* graphs asked for (and possible); one recorded */
    int graph_warm;              /* a full batch ran eagerly: the next one is recorded */
    int dev_timing;              /* the backend times phases on its own clock */
    float *dev_train_x, *dev_val_x;   /* resident data set, backend memory */
    void *dev_train_y, *dev_val_y;    /* int32 labels or float targets */
    int32_t *dev_order;          /* (n_train) this epoch's order, backend memory */
    float *pin_x[2];             /* page-locked staging, two so that one fills */
    void *pin_y[2];              /*   while the other is read by the device */
    int pin_next;

    /* Data-parallel ranks (train/engine_ranks.c): NULL for a plain job. */
    struct nn_comm *comm;
    int local_rank;              /* among the ranks on this host: a GPU rank's GPU */
    int device_ranks;            /* the ranks sum on the device (ranks_open joined) */
    int rank, ranks;             /* this job's rank of ranks (0 of 1: plain) */
    long global_batch;           /* ranks x batch */
    int step_n_global;           /* the samples of this step over every rank */
    int ranks_check;             /* NNLAB_RANKS_CHECK=1: the parameters compared every step */
    struct engine_buckets *buckets;   /* the sums overlapped with the backward, or NULL */
    double step_overlap_s;       /* this step: sums in flight during its backward */
};

/* ---- engine.c ----------------------------------------------------------------- */

/* Publishes the job thread's draft snapshot (job->draft) under the lock. */
void engine_publish(nn_job *job);
/* Ends the job as FAILED with msg, published. */
void engine_fail(nn_job *job, const char *msg);
/* Ends the job in state (DONE, CANCELLED, DIVERGED), published. */
void engine_end(nn_job *job, nn_job_state state);
/* The backend configuration of a job of cfg on `threads` threads: its TF32
 * and deterministic switches, and the convolution algorithms' cache file
 * ($XDG_CACHE_HOME/nnlab/conv-algorithms.txt) in cache_path, which must
 * outlive the open. */
void engine_backend_config(const nn_job_config *cfg, int threads, nn_backend_config *bc,
                           char *cache_path, size_t cache_len);
/* Opens the job's backend with `threads` threads and the job's switches. */
int engine_open_backend(nn_job *job, int threads, char *err, size_t err_len);
/* Keeps the convolution algorithms the backend chose so far, for
 * nn_job_conv_algorithms (none on a backend without conv_algorithms). Never
 * inside a recording. */
void engine_keep_conv_algorithms(nn_job *job);
/* Between steps: blocks while a pause is requested (the snapshot PAUSED);
 * RUN_CANCELLED when the job must stop, else RUN_GO_ON. */
run_result engine_honour_requests(nn_job *job);
/* Its wait alone, for a thread of the job's own that publishes nothing (a
 * Jacobian lane): returns once the job is resumed or cancelled,
 * RUN_CANCELLED when cancelled. */
run_result engine_wait_while_paused(nn_job *job);

/* ---- ranks.c ------------------------------------------------------------------- */

/* The communicator of the ranks this process joined, or NULL when it runs
 * alone (not launched, or one rank). */
struct nn_comm *engine_comm(void);

/* ---- job_kinds.c ------------------------------------------------------------- */

/* Refuses a negative thread count (every kind reads threads). */
int job_check_threads(const nn_job_config *c, char *err, size_t err_len);

/* ---- job_memory.c ------------------------------------------------------------ */

/* nn_job_memory_estimate with the job's backend table and, once open, the
 * backend itself (b: its workspace counts; NULL: not yet): the kind's
 * estimate and the memory available. */
void job_memory_estimate(const nn_job_config *cfg, const nn_backend_ops *ops, nn_backend *b,
                         nn_memory_estimate *m);

/* A job's backend of `threads` host threads closes: their malloc arenas and
 * OpenBLAS buffers, mapped as it ran, stay in the process and serve the
 * next jobs' threads, so the estimates that follow count only threads
 * beyond the most run so far. Said at the close, not at the start: the
 * check once the backend is open must still count the buffers its first
 * products will map. */
void job_memory_threads_started(int threads);

/* Whether an address-space limit (ulimit -v, RLIMIT_AS) holds. */
int job_memory_address_limited(void);

#endif
