/* src/core/engine_internal.h - what the engine's files share, private to them:
 * the job, and the functions each file gives the others.
 *
 *   engine.c          the job's thread, publishing, the training loop, the API
 *   engine_loss.c     the loss read back: points, divergence, validation
 *   engine_batch.c    the epoch's sample order and gathering a batch on the host
 *   engine_host.c     one training step on a host-memory (CPU) backend
 *   engine_device.c   a device backend: resident data, page-locked staging,
 *                     graph record and replay, phase timing on the device's clock
 *   engine_stats.c    per-step statistics: phase sums, the median, the
 *                     backend's counters per step, rate and ETA
 *   engine_memory.c   sizes checked before memory is taken: the estimate,
 *                     the memory available, the batch against the data set
 *   job_calibrate.c   the calibration job kind (NN_JOB_CALIBRATE)
 *   job_jacobian.c    the Jacobian job kind (NN_JOB_JACOBIAN; the computation
 *                     is jacobian*.c behind jacobian_internal.h)
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

/* Timing marks of a device step (backend.h timing_mark): mark p + 1 ends phase
 * p for copy, forward, backward and optimizer; a graph job marks the whole
 * compute part (replayed or eager) with MARK_GRAPH. */
#define MARK_GRAPH 6

/* Sums over a job's steps, owned by the trainer thread (engine_stats.c). */
typedef struct engine_totals {
    long steps;                  /* steps done */
    long warmup;                 /* bench: untimed steps first (0 otherwise) */
    long timed;                  /* steps after the warm-up */
    long samples;                /* samples in the timed steps */
    double phase_s[NN_PHASE_COUNT];   /* host time per phase of the timed steps */
    double *step_times;          /* bench: (timed steps) seconds each, for the median */
    double active_s;             /* training time so far, pauses excluded */
    double step_s_total;         /* time inside timed steps */
    double graph_host_s;         /* host time of the compute part of graph-job steps */
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

    atomic_int pause_requested;
    atomic_int cancel_requested;

    /* owned by the trainer thread */
    nn_snapshot mine;            /* the trainer's working copy, published after each step */
    nn_dataset data;
    nn_backend backend;
    int backend_open;
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
};

/* ---- engine.c ----------------------------------------------------------------- */

/* Publishes the trainer's working snapshot (job->mine) under the lock. */
void engine_publish(nn_job *job);
/* Ends the job as FAILED with msg, published. */
void engine_fail(nn_job *job, const char *msg);
/* Between steps: blocks while a pause is requested (the snapshot PAUSED);
 * returns 1 when the job must stop. */
int engine_honour_requests(nn_job *job);
/* Its wait alone, for a thread of the job's own that publishes nothing (a
 * Jacobian lane): returns once the job is resumed or cancelled, 1 when
 * cancelled. */
int engine_wait_while_paused(nn_job *job);

/* ---- engine_loss.c -------------------------------------------------------------- */

/* After a step: 2 when its loss is known to be NaN or inf (a host-memory
 * backend, or sync_every_step; the snapshot then says at which step), 0
 * otherwise, -1 on a backend error. */
int engine_check_step_loss(nn_job *job);
/* Publishes the mean loss of the last `interval` steps (none when 0), read
 * back from the backend; 2 when it is not finite, -1 on error. */
int engine_report_loss(nn_job *job, int epoch, long step_in_epoch, long interval);
/* Validates at the end of an epoch (unless the job skips it): 0, 1 when
 * cancelled, -1 on error. */
int engine_run_validation(nn_job *job, int epoch);

/* ---- engine_memory.c ------------------------------------------------------------ */

/* nn_job_memory_estimate with the job's backend table and, once open, the
 * backend itself (b: its convolution workspace counts; NULL: not yet). */
void engine_memory_estimate(const nn_job_config *cfg, const nn_backend_ops *ops, nn_backend *b,
                            nn_memory_estimate *m);
/* Refuses a batch larger than the rows of the training set (what: its name, or NULL). */
int engine_check_batch_rows(const char *batch_key, int batch, long rows, const char *what,
                            char *err, size_t err_len);

/* ---- job_calibrate.c ----------------------------------------------------------- */

/* The trainer thread's body for a calibration job. */
void engine_calibrate(nn_job *job);

/* ---- job_jacobian.c ------------------------------------------------------------ */

/* The trainer thread's body for a Jacobian job. */
void engine_jacobian(nn_job *job);
/* engine_memory_estimate's parts for a Jacobian job (all but available):
 * nn_jac_sizes_of at the job's val and method; host_memory: the backend's
 * buffers are host memory too (a CPU device). */
void engine_jacobian_estimate(const nn_job_config *cfg, int host_memory, nn_memory_estimate *m);
/* nn_job_check_sizes for a Jacobian job: val_key names its val. */
int engine_jacobian_check_sizes(const nn_job_config *cfg, const nn_memory_estimate *m, const char *val_key,
                                char *err, size_t err_len);

/* ---- engine_batch.c ---------------------------------------------------------- */

/* The order and the host staging buffers of the job's batch. */
int engine_batch_prepare(nn_job *job, char *err, size_t err_len);
void engine_batch_release(nn_job *job);
/* 4-byte words per label row: 1 (a class) or the target width. */
size_t engine_label_words(const nn_dataset *d);
/* A new random order of the training samples for the next epoch. */
void engine_shuffle(nn_job *job);
/* Copies samples idx[0..n) (or first..first+n when idx is NULL) of one split
 * into bx and by (labels) or bt (targets). */
void engine_gather_host(const nn_dataset *d, const float *xs, const int32_t *ys, const float *ts,
                        const int32_t *idx, long first, int n, float *bx, int32_t *by, float *bt);
/* The same into the network's input buffers: straight into them when the
 * backend's memory is host memory, else through the host staging buffers
 * and an upload. */
int engine_load_batch(nn_job *job, const float *xs, const int32_t *ys, const float *ts,
                      const int32_t *idx, long first, int n);

/* ---- engine_host.c ----------------------------------------------------------- */

/* One training step on n samples from position pos of the epoch's order, on
 * a host-memory backend; the phase times are added to t[]. */
int engine_host_step(nn_job *job, long pos, int n, long step, double t[NN_PHASE_COUNT]);

/* ---- engine_device.c --------------------------------------------------------- */

/* Decides which GPU switches apply on this backend, records them in the
 * snapshot, and sets up what they need (resident data, page-locked buffers). */
int engine_device_prepare(nn_job *job, char *err, size_t err_len);
/* Frees the device-side buffers and the recorded graph (the backend stays open). */
void engine_device_release(nn_job *job);
/* One training step on a device; host times go to t[] (a graph job's compute
 * part to *t_graph), device times are marked for engine_device_collect. */
int engine_device_step(nn_job *job, long pos, int n, long step, double t[NN_PHASE_COUNT],
                       double *t_graph);
/* Validation rows first..first+n of the resident set into the network's inputs. */
int engine_device_val_batch(nn_job *job, long first, int n);
/* Folds the device-clock phase times the device has finished (all of them
 * with wait) into the job's totals. */
int engine_device_collect(nn_job *job, int wait);
/* After the warm-up: waits for those steps and starts the timing afresh. */
int engine_device_start_timing(nn_job *job);

/* ---- engine_stats.c ---------------------------------------------------------- */

/* The bench's array of step times. */
int engine_stats_prepare(nn_job *job, char *err, size_t err_len);
void engine_stats_release(nn_job *job);
/* The backend's counters (zeros when it keeps none). */
void engine_read_counters(nn_job *job, nn_backend_counters *c);
/* Counts one step of n samples that took dt seconds (t: its phases, t_graph:
 * its graph part); steps after the warm-up are timed. */
void engine_stats_add_step(nn_job *job, int n, double dt, const double t[NN_PHASE_COUNT],
                           double t_graph);
/* A wait for the device outside a step (a loss read-back, the final
 * synchronise), dt seconds: part of the steps' time on a device. */
void engine_stats_add_wait(nn_job *job, double dt, int timed_step);
/* Leaves the traffic between counters c0 and c1 (validation) out of the per-step counts. */
void engine_stats_skip(nn_job *job, const nn_backend_counters *c0, const nn_backend_counters *c1);
/* The bench's median step time, once the steps are done. */
void engine_stats_median(nn_job *job);
/* Fills the snapshot's progress, phase times, counters, rate and ETA. */
void engine_stats_update(nn_job *job);

#endif
