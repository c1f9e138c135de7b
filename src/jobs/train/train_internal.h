/* src/jobs/train/train_internal.h - the training kind's step machinery,
 * private to src/jobs (job_train.c runs the loop over these):
 *
 *   engine_loss.c     the loss read back: points, divergence, validation
 *   engine_batch.c    the epoch's sample order and gathering a batch on the host
 *   engine_host.c     one training step on a host-memory (CPU) backend
 *   engine_device.c   a device backend: resident data, page-locked staging,
 *                     graph record and replay, phase timing on the device's clock
 *   engine_stats.c    per-step statistics: phase sums, the median, the
 *                     backend's counters per step, rate and ETA
 *   train_memory.c    the training kind's memory estimate and size check
 *
 * Their state is the job's training part (engine_internal.h, struct nn_job). */
#ifndef NNLAB_TRAIN_INTERNAL_H
#define NNLAB_TRAIN_INTERNAL_H

#include "engine_internal.h"

/* ---- engine_loss.c -------------------------------------------------------------- */

/* After a step: RUN_DIVERGED when its loss is known to be NaN or inf (a
 * host-memory backend, or sync_every_step; the snapshot then says at which
 * step), RUN_GO_ON otherwise, RUN_ERROR on a backend error. */
run_result engine_check_step_loss(nn_job *job);
/* Publishes the mean loss of the last `interval` steps (none when 0), read
 * back from the backend; RUN_DIVERGED when it is not finite, RUN_ERROR on
 * a backend error. */
run_result engine_report_loss(nn_job *job, int epoch, long step_in_epoch, long interval);
/* Validates at the end of an epoch (unless the job skips it): RUN_GO_ON,
 * RUN_CANCELLED, or RUN_ERROR. */
run_result engine_run_validation(nn_job *job, int epoch);

/* ---- train_memory.c ------------------------------------------------------------ */

/* The training kind's estimate and size check (job_kind.h). */
void train_estimate(const nn_job_config *cfg, const nn_backend_ops *ops, nn_backend *b,
                    nn_memory_estimate *m);
int train_check_sizes(const nn_job_config *cfg, const nn_memory_estimate *m, const char *batch_key,
                      char *err, size_t err_len);
/* Refuses a batch larger than the rows of the training set (what: its name, or NULL). */
int engine_check_batch_rows(const char *batch_key, int batch, long rows, const char *what,
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

/* ---- engine_ranks.c ---------------------------------------------------------- */

/* Joins the ranks when launched and sets the job's rank, ranks, threads per
 * rank and the snapshot's fields; refuses a device backend that cannot sum
 * over ranks. */
int engine_ranks_prepare(nn_job *job, int *threads, char *err, size_t err_len);
/* Ranks on a device (after its backend opened): the device's collective
 * library joined on every rank (NCCL on the GPU), every rank failing alike. */
int engine_ranks_device_open(nn_job *job, char *err, size_t err_len);
/* Rank 0's initial parameters and layer state to every rank (as DDP does). */
int engine_ranks_share_params(nn_job *job, char *err, size_t err_len);
/* Rank 0's layer state (batch norm's running statistics, which each rank
 * updates from its own share) to every rank, before a validation, as
 * DDP's broadcast_buffers: every rank validates with the same network. */
int engine_ranks_share_state(nn_job *job);
/* The buckets the sums are started in while the backward runs (unless
 * no_overlap), planned once the network is made; released with the job. */
int engine_ranks_buckets_prepare(nn_job *job, char *err, size_t err_len);
void engine_ranks_release(nn_job *job);
/* Before a step's backward: this rank's n samples, every bucket waiting. */
int engine_ranks_begin_step(nn_job *job, int n);
/* The gradient arena, this rank's n of the step's step_n_global samples,
 * averaged over the ranks: each rank's scaled by n / step_n_global, then
 * summed: with buckets, those not started yet started and all waited for
 * (step_overlap_s: how long sums were in flight during the backward);
 * without, one blocking sum. Nothing for a plain job. */
int engine_ranks_reduce_grads(nn_job *job, int n);
/* NNLAB_RANKS_CHECK=1: fails the step when a rank's parameters differ
 * from rank 0's. */
int engine_ranks_check_same(nn_job *job);
/* v[0..n) summed over the ranks (nothing for a plain job). */
int engine_ranks_sum(nn_job *job, double *v, size_t n);

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
