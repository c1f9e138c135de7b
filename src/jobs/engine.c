/* src/jobs/engine.c - a job: its thread, the lock, publishing, pause and
 * cancel, and the API of nnlab/engine.h. What a job does is its kind's
 * (job_kind.h): the engine looks the kind up in the table and calls its
 * entry (resolve, size check, run, release), never asking which kind it is. */
#include "nnlab/engine.h"
#include "nnlab/device.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/calibrate_products.h"
#include "engine_internal.h"
#include "job_kind.h"
#include "xdg.h"

void nn_job_config_init(nn_job_config *cfg, const nn_preset *p)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->preset = *p;
    cfg->seed = 1;
    /* the preset's [gpu] switches: by default the data on the device and
     * CUDA graphs on, no sync every step, no TF32 (nn_preset_defaults) */
    cfg->data_on_device = p->data_on_device;
    cfg->pinned = p->pinned;
    cfg->sync_every_step = p->sync_every_step;
    cfg->graph = p->graph;
    cfg->tf32 = p->tf32;
    cfg->deterministic = p->deterministic;
    cfg->no_overlap = !p->overlap;
    cfg->kind = nn_job_kind_of_preset(p);
    cfg->jac_method = p->task_method;
}

/* ---- publishing ------------------------------------------------------------ */

/* What the open backend says of its threads now (the CPU backend revises
 * the count while the job runs); read on the job's thread, which issues the
 * ops that revise it. */
static void note_threads(nn_job *job)
{
    if (!job->backend.impl || job->backend.threads_now <= 0)
        return;
    job->draft.threads_now = job->backend.threads_now;
    nn_strlcpy(job->draft.threads_why, job->backend.threads_why, sizeof job->draft.threads_why);
}

void engine_publish(nn_job *job)
{
    note_threads(job);
    pthread_mutex_lock(&job->lock);
    job->snap = job->draft;
    pthread_mutex_unlock(&job->lock);
}

void engine_fail(nn_job *job, const char *msg)
{
    job->draft.state = NN_JOB_FAILED;
    nn_strlcpy(job->draft.error, msg, sizeof job->draft.error);
    engine_publish(job);
}

void engine_end(nn_job *job, nn_job_state state)
{
    job->draft.state = state;
    engine_publish(job);
}

void engine_backend_config(const nn_job_config *cfg, int threads, nn_backend_config *bc,
                           char *cache_path, size_t cache_len)
{
    memset(bc, 0, sizeof *bc);
    bc->threads = threads;
    bc->tf32 = cfg->tf32;
    bc->deterministic = cfg->deterministic;
    /* no cache folder (no $HOME): the algorithms are timed again next run */
    bc->conv_cache_path = nn_xdg_dir(NN_XDG_CACHE, "conv-algorithms.txt", cache_path, cache_len) == 0
                              ? cache_path : NULL;
}

int engine_open_backend(nn_job *job, int threads, char *err, size_t err_len)
{
    char cache[NN_PATH_LEN];
    nn_backend_config bc;
    engine_backend_config(&job->cfg, threads, &bc, cache, sizeof cache);
    bc.local_rank = job->local_rank;             /* one rank a GPU */
    if (nn_backend_open(&job->backend, job->ops, &bc) != 0)
        return nn_errorf(err, err_len, "device %s: %s", job->ops->name, job->backend.last_error);
    job->backend_open = 1;
    /* the CPU's products on OpenBLAS or BLIS as its calibration chose them,
     * and the job's own shapes at its batch that the calibration (each
     * preset's at its own batch) did not contest, contested now; a shape
     * not chosen (out of memory, table full) runs on OpenBLAS. Not under an
     * address-space limit: the contest's products would map OpenBLAS's
     * buffers (and BLIS) before the job's size check counts them, and a
     * buffer that does not fit is retried for ever */
    if (job->ops == &nn_backend_cpu && !job_memory_address_limited()) {
        (void)nn_products_use_cached(job->ops->name);
        int batch = job->cfg.batch > 0 ? job->cfg.batch : job->cfg.preset.batch;
        (void)nn_products_contest_job(&job->cfg.preset, batch, job->backend.threads_now);
    }
    return 0;
}

/* ---- the convolution algorithms chosen ------------------------------------------------ */

void engine_keep_conv_algorithms(nn_job *job)
{
    nn_backend *b = &job->backend;
    if (!job->backend_open || !b->ops->conv_algorithms)
        return;
    int n = b->ops->conv_algorithms(b, job->conv_draft, ENGINE_CONV_MAX);
    if (n < 0)
        return;                      /* Explain only: the step itself went well */
    pthread_mutex_lock(&job->lock);
    memcpy(job->conv, job->conv_draft, sizeof job->conv);
    job->n_conv = n < ENGINE_CONV_MAX ? n : ENGINE_CONV_MAX;
    pthread_mutex_unlock(&job->lock);
}

static const char *direction_name(enum nn_conv_direction d)
{
    switch (d) {
    case NN_CONV_FORWARD: return "forward";
    case NN_CONV_BACKWARD_DATA: return "backward-data";
    case NN_CONV_BACKWARD_FILTER: return "backward-filter";
    }
    return "?";
}

static void conv_info_of(const nn_conv_choice *c, nn_conv_algorithm_info *out)
{
    memset(out, 0, sizeof *out);
    out->n = c->g.n, out->c_in = c->g.c_in, out->h_in = c->g.h_in, out->w_in = c->g.w_in;
    out->c_out = c->g.c_out, out->k_h = c->g.k_h, out->k_w = c->g.k_w;
    out->stride = c->g.stride_w, out->pad = c->g.pad_w;
    nn_strlcpy(out->direction, direction_name(c->direction), sizeof out->direction);
    nn_strlcpy(out->algorithm, c->algorithm, sizeof out->algorithm);
    out->deterministic = c->deterministic;
    out->time_us = c->time_us;
    out->from_cache = c->trials == 0;
}

int nn_job_conv_algorithms(nn_job *job, nn_conv_algorithm_info *out, int cap)
{
    pthread_mutex_lock(&job->lock);
    int n = job->n_conv;
    for (int i = 0; i < n && i < cap; i++)
        conv_info_of(&job->conv[i], &out[i]);
    pthread_mutex_unlock(&job->lock);
    return n;
}

/* ---- between steps: requests (the loss and validation: train/engine_loss.c) --------------- */

run_result engine_honour_requests(nn_job *job)
{
    if (atomic_load(&job->cancel_requested))
        return RUN_CANCELLED;
    if (!atomic_load(&job->pause_requested))
        return RUN_GO_ON;
    job->draft.state = NN_JOB_PAUSED;
    engine_publish(job);
    run_result rc = engine_wait_while_paused(job);
    job->draft.state = NN_JOB_RUNNING;
    return rc;
}

run_result engine_wait_while_paused(nn_job *job)
{
    pthread_mutex_lock(&job->lock);
    while (atomic_load(&job->pause_requested) && !atomic_load(&job->cancel_requested))
        pthread_cond_wait(&job->wake, &job->lock);
    pthread_mutex_unlock(&job->lock);
    return atomic_load(&job->cancel_requested) ? RUN_CANCELLED : RUN_GO_ON;
}

/* ---- the thread ------------------------------------------------------------------ */

static void block_signals(void)
{
    /* Signals belong to the front end (the UI restores the terminal). A
     * fault raised by this thread itself is delivered to this thread whatever
     * the mask says, and blocked it would kill the process without running
     * the front end's handler: leave those open so the terminal comes back. */
    sigset_t mask;
    sigfillset(&mask);
    sigdelset(&mask, SIGSEGV);
    sigdelset(&mask, SIGBUS);
    sigdelset(&mask, SIGFPE);
    sigdelset(&mask, SIGILL);
    sigdelset(&mask, SIGABRT);
    pthread_sigmask(SIG_BLOCK, &mask, NULL);
}

/* The one availability rule (nnlab/device.h), on the job's thread. */
static int device_usable(nn_job *job)
{
    char err[NN_ERR_LEN];
    if (nn_device_require(job->ops->name, err, sizeof err) == 0)
        return 1;
    engine_fail(job, err);
    return 0;
}

static void *job_thread(void *arg)
{
    nn_job *job = arg;
    block_signals();
    if (!device_usable(job))
        return NULL;
    job_kind_of(job->cfg.kind)->run(job);    /* resolve_config refused an unknown kind */
    return NULL;
}

/* ---- the API -------------------------------------------------------------------- */

/* The device, the preset's unless given; the rest is the kind's. */
static int resolve_config(nn_job_config *c, const nn_job_config *in, char *err, size_t err_len)
{
    *c = *in;
    /* training over ranks from a process that is not one: they are
     * processes a launcher starts, the ranks kind's child (job_ranks.c) */
    c->kind = job_kind_run_as(c);
    const nn_job_kind_def *kind = job_kind_of(c->kind);
    if (!c->device[0])
        nn_strlcpy(c->device, c->preset.device, sizeof c->device);
    if (!kind)
        return nn_errorf(err, err_len, "job kind %d: expected training, calibration, jacobian or ranks", (int)c->kind);
    return kind->resolve(c, err, err_len);
}

/* The backend by name, on the caller's thread: an unknown name or a GPU
 * module that cannot be loaded is refused at once. Whether the device can
 * run is asked on the job's own thread (device_usable): the GPU's probe
 * initialises the CUDA runtime, which a front end's thread (the lab's UI)
 * must never do. */
static int find_device(nn_job *job, char *err, size_t err_len)
{
    job->ops = nn_backend_find(job->cfg.device);
    if (!job->ops && nn_device_require(job->cfg.device, err, err_len) == 0)
        return nn_errorf(err, err_len, "device %s: not available", job->cfg.device);
    return job->ops ? 0 : -1;
}

/* A job too large for the machine, or a batch larger than the training
 * set, is refused before its thread starts (a training job checks again
 * once its backend is open, with the workspace). A kind with no size
 * check has nothing to estimate. */
static int check_sizes(nn_job *job, char *err, size_t err_len)
{
    nn_memory_estimate m;
    if (!job_kind_of(job->cfg.kind)->check_sizes)
        return 0;
    job_memory_estimate(&job->cfg, job->ops, NULL, &m);
    return nn_job_check_sizes(&job->cfg, &m, NULL, err, err_len) != 0 ? -1 : 0;
}

nn_job *nn_job_start(const nn_job_config *cfg, char *err, size_t err_len)
{
    nn_job *job = calloc(1, sizeof *job);
    if (!job) {
        nn_errorf(err, err_len, "out of memory for a job");
        return NULL;
    }
    if (resolve_config(&job->cfg, cfg, err, err_len) != 0 || find_device(job, err, err_len) != 0 ||
        check_sizes(job, err, err_len) != 0) {
        free(job);
        return NULL;
    }
    pthread_mutex_init(&job->lock, NULL);
    pthread_cond_init(&job->wake, NULL);
    job->draft.kind = job->cfg.kind;
    job->draft.state = NN_JOB_PREPARING;
    nn_strlcpy(job->draft.device, job->ops->name, sizeof job->draft.device);
    job->draft.batch = job->cfg.batch;
    job->draft.epochs = job->cfg.epochs;
    job->draft.threads = job->cfg.threads;
    job->snap = job->draft;
    int rc = pthread_create(&job->thread, NULL, job_thread, job);
    if (rc != 0) {
        nn_errorf(err, err_len, "cannot start the trainer thread: %s", strerror(rc));
        nn_job_free(job);
        return NULL;
    }
    job->thread_started = 1;
    return job;
}

void nn_job_snapshot(nn_job *job, nn_snapshot *out)
{
    pthread_mutex_lock(&job->lock);
    *out = job->snap;
    pthread_mutex_unlock(&job->lock);
}

long nn_job_loss_points(nn_job *job, long from, nn_loss_point *out, long max)
{
    long n = 0;
    pthread_mutex_lock(&job->lock);
    if (from >= 0 && from < job->n_points) {
        n = job->n_points - from < max ? job->n_points - from : max;
        memcpy(out, job->points + from, (size_t)n * sizeof *out);
    }
    pthread_mutex_unlock(&job->lock);
    return n;
}

int nn_job_epoch_results(nn_job *job, int from, nn_epoch_result *out, int max)
{
    int n = 0;
    pthread_mutex_lock(&job->lock);
    if (from >= 0 && from < job->n_epoch_results) {
        n = job->n_epoch_results - from < max ? job->n_epoch_results - from : max;
        memcpy(out, job->epoch_results + from, (size_t)n * sizeof *out);
    }
    pthread_mutex_unlock(&job->lock);
    return n;
}

void nn_job_pause(nn_job *job)
{
    atomic_store(&job->pause_requested, 1);
}

static void wake_trainer(nn_job *job)
{
    pthread_mutex_lock(&job->lock);
    pthread_cond_broadcast(&job->wake);
    pthread_mutex_unlock(&job->lock);
}

void nn_job_resume(nn_job *job)
{
    atomic_store(&job->pause_requested, 0);
    wake_trainer(job);
}

void nn_job_cancel(nn_job *job)
{
    atomic_store(&job->cancel_requested, 1);
    wake_trainer(job);
}

nn_job_state nn_job_wait(nn_job *job)
{
    if (job->thread_started) {
        pthread_join(job->thread, NULL);
        job->thread_started = 0;
    }
    return job->snap.state;
}

/* What the job's thread took: its kind's part first, while the backend
 * that holds some of it is still open. */
static void release_thread_state(nn_job *job)
{
    const nn_job_kind_def *kind = job_kind_of(job->cfg.kind);
    if (kind && kind->release)
        kind->release(job);
    if (job->backend_open) {
        job_memory_threads_started(job->backend.host_threads);
        nn_backend_close(&job->backend);
    }
    job->backend_open = 0;
}

void nn_job_free(nn_job *job)
{
    if (!job)
        return;
    if (job->thread_started) {
        nn_job_cancel(job);
        nn_job_wait(job);
    }
    release_thread_state(job);
    free(job->points);
    free(job->epoch_results);
    pthread_mutex_destroy(&job->lock);
    pthread_cond_destroy(&job->wake);
    free(job);
}
