/* src/core/engine.c - the training job: a trainer thread that owns the data, the
 * backend and the network, publishes snapshots, and runs the training loop; see
 * engine.h. The parts of a step live beside it (engine_internal.h). */
#include "nnlab/engine.h"
#include "nnlab/device.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

const char *nn_job_state_name(nn_job_state s)
{
    static const char *const names[] = { "preparing", "running", "paused", "done", "cancelled", "failed",
                                         "diverged" };
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

int nn_job_state_ended(nn_job_state s)
{
    return s == NN_JOB_DONE || s == NN_JOB_CANCELLED || s == NN_JOB_FAILED || s == NN_JOB_DIVERGED;
}

const char *nn_phase_name(enum nn_phase p)
{
    static const char *const names[] = { "copy", "forward", "backward", "optimizer", "sync" };
    return (unsigned)p < NN_PHASE_COUNT ? names[p] : "?";
}

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
    if (p->task == NN_TASK_JACOBIAN)
        cfg->kind = NN_JOB_JACOBIAN;
    cfg->jac_method = p->task_method;
}

/* ---- publishing ------------------------------------------------------------ */

void engine_publish(nn_job *job)
{
    pthread_mutex_lock(&job->lock);
    job->snap = job->mine;
    pthread_mutex_unlock(&job->lock);
}

void engine_fail(nn_job *job, const char *msg)
{
    job->mine.state = NN_JOB_FAILED;
    nn_strlcpy(job->mine.error, msg, sizeof job->mine.error);
    engine_publish(job);
}

/* ---- preparation -------------------------------------------------------------- */

/* The backend first: its convolution workspace completes the memory
 * estimate, checked before the data set (the largest part) is loaded; then
 * the batch against the training set the files actually hold. */
static int prepare(nn_job *job, char *err, size_t err_len)
{
    nn_job_config *c = &job->cfg;
    nn_backend_config bc = { .threads = c->threads, .tf32 = c->tf32 };
    nn_memory_estimate m;

    if (nn_backend_open(&job->backend, job->ops, &bc) != 0)
        return nn_errorf(err, err_len, "device %s: %s", job->ops->name, job->backend.last_error);
    job->backend_open = 1;
    engine_memory_estimate(c, job->ops, &job->backend, &m);
    if (nn_job_check_sizes(c, &m, NULL, err, err_len) != 0)
        return -1;
    if (nn_data_for_preset(&c->preset, c->data_dir[0] ? c->data_dir : NULL, c->seed,
                           &job->data, err, err_len) != 0)
        return -1;
    nn_strlcpy(job->mine.data_name, job->data.name, sizeof job->mine.data_name);
    nn_strlcpy(job->mine.data_desc, job->data.description, sizeof job->mine.data_desc);
    job->mine.data_synthetic = job->data.synthetic;
    if (engine_check_batch_rows(NULL, c->batch, job->data.n_train, job->data.name, err, err_len) != 0)
        return -1;
    if (nn_net_create(&job->net, &job->backend, &c->preset, c->batch, c->seed, err, err_len) != 0)
        return -1;
    job->mine.n_params = nn_net_param_count(&job->net);
    nn_rng_seed(&job->shuffle_rng, c->seed ^ 0x5eed5eedULL);
    if (engine_batch_prepare(job, err, err_len) != 0 || engine_stats_prepare(job, err, err_len) != 0)
        return -1;
    return engine_device_prepare(job, err, err_len);
}

/* The step count, from --steps, the bench's warm-up and steps, or the epochs. */
static void plan_steps(nn_job *job)
{
    nn_snapshot *s = &job->mine;
    s->steps_per_epoch = (job->data.n_train + job->cfg.batch - 1) / job->cfg.batch;
    if (job->cfg.bench)
        s->total_steps = job->cfg.warmup + job->cfg.steps;
    else if (job->cfg.steps > 0)
        s->total_steps = job->cfg.steps;
    else
        s->total_steps = s->steps_per_epoch * job->cfg.epochs;
    s->epochs = (int)((s->total_steps + s->steps_per_epoch - 1) / s->steps_per_epoch);
}

/* The histories are sized once the step count is known, before training
 * starts: one point per log interval plus one per epoch end. */
static int alloc_histories(nn_job *job, char *err, size_t err_len)
{
    long per_epoch = job->mine.steps_per_epoch / job->cfg.log_every + 1;
    long cap_points = per_epoch * job->mine.epochs;
    nn_loss_point *points = calloc((size_t)cap_points, sizeof *points);
    nn_epoch_result *results = calloc((size_t)job->mine.epochs, sizeof *results);
    if (!points || !results) {
        free(points);
        free(results);
        return nn_errorf(err, err_len, "out of memory for the loss history (%ld points)", cap_points);
    }
    pthread_mutex_lock(&job->lock);
    job->points = points;
    job->cap_points = cap_points;
    job->epoch_results = results;
    job->cap_epoch_results = job->mine.epochs;
    pthread_mutex_unlock(&job->lock);
    return 0;
}

/* ---- between steps: requests (the loss and validation: engine_loss.c) --------------- */

int engine_honour_requests(nn_job *job)
{
    if (atomic_load(&job->cancel_requested))
        return 1;
    if (!atomic_load(&job->pause_requested))
        return 0;
    job->mine.state = NN_JOB_PAUSED;
    engine_publish(job);
    int cancelled = engine_wait_while_paused(job);
    job->mine.state = NN_JOB_RUNNING;
    return cancelled;
}

int engine_wait_while_paused(nn_job *job)
{
    pthread_mutex_lock(&job->lock);
    while (atomic_load(&job->pause_requested) && !atomic_load(&job->cancel_requested))
        pthread_cond_wait(&job->wake, &job->lock);
    pthread_mutex_unlock(&job->lock);
    return atomic_load(&job->cancel_requested);
}

/* ---- the loop ------------------------------------------------------------------- */

/* One step of the batch at position pos of the epoch's order; 2 when its
 * loss is known to be non-finite. */
static int run_step(nn_job *job, long pos)
{
    long left = job->data.n_train - pos;
    int n = (int)(left < job->cfg.batch ? left : job->cfg.batch);
    double t[NN_PHASE_COUNT] = { 0 }, t_graph = 0.0, start = nn_now();
    long step = job->tot.steps;
    if (nn_net_set_step(&job->net, step) != 0)
        return -1;
    int rc = job->device ? engine_device_step(job, pos, n, step, t, &t_graph)
                         : engine_host_step(job, pos, n, step, t);
    if (rc != 0)
        return -1;
    engine_stats_add_step(job, n, nn_now() - start, t, t_graph);
    return engine_check_step_loss(job);
}

/* Timing after the warm-up, the device's finished timings, the snapshot. */
static int after_step(nn_job *job)
{
    const engine_totals *tot = &job->tot;
    if (job->device && tot->warmup > 0 && tot->steps == tot->warmup &&
        engine_device_start_timing(job) != 0)
        return -1;
    if (job->device && engine_device_collect(job, 0) != 0)
        return -1;
    engine_stats_update(job);
    engine_publish(job);
    return 0;
}

/* The rest of the epoch's loss, then validation. */
static int end_epoch(nn_job *job, int epoch, long in_epoch, long since_report)
{
    int rc = engine_report_loss(job, epoch, in_epoch, since_report);
    if (rc != 0)
        return rc;
    return engine_run_validation(job, epoch);   /* its time counts as training's */
}

/* Returns 0, 1 when cancelled, 2 when the loss diverged, -1 on error. */
static int train_epoch(nn_job *job, int epoch)
{
    long in_epoch = 0, since_report = 0;
    int rc;
    job->mine.epoch = epoch;
    engine_shuffle(job);
    for (long pos = 0; pos < job->data.n_train && job->tot.steps < job->mine.total_steps;
         pos += job->cfg.batch) {
        /* a cancel still reports the steps run since the last report, so
         * the run ends with the loss of what it trained */
        if (engine_honour_requests(job)) {
            rc = engine_report_loss(job, epoch, in_epoch, since_report);
            return rc != 0 ? rc : 1;
        }
        if ((rc = run_step(job, pos)) != 0)
            return rc;
        in_epoch++, since_report++;
        if (since_report == job->cfg.log_every) {
            if ((rc = engine_report_loss(job, epoch, in_epoch, since_report)) != 0)
                return rc;
            since_report = 0;
        }
        if (after_step(job) != 0)
            return -1;
    }
    return end_epoch(job, epoch, in_epoch, since_report);
}

/* A device runs behind the host: the last steps may still be running, and
 * their time is the steps'. */
static int finish_steps(nn_job *job)
{
    nn_backend *b = &job->backend;
    if (job->device) {
        double d0 = nn_now();
        if (b->ops->synchronize(b) != 0)
            return -1;
        engine_stats_add_wait(job, nn_now() - d0, job->tot.timed > 0);
        if (engine_device_collect(job, 1) != 0)
            return -1;
    }
    engine_stats_median(job);
    engine_stats_update(job);
    return 0;
}

/* Trains epoch by epoch until total_steps; returns 1 when cancelled, 2 when
 * the loss diverged (the steps' figures still final), -1 on error. */
static int train_loop(nn_job *job)
{
    if (job->device)
        engine_read_counters(job, &job->tot.cnt_base);
    for (int epoch = 1; job->tot.steps < job->mine.total_steps; epoch++) {
        int rc = train_epoch(job, epoch);
        if (rc == 2)
            return finish_steps(job) != 0 ? -1 : 2;
        if (rc != 0)
            return rc;
    }
    return finish_steps(job);
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

static void train(nn_job *job)
{
    char err[NN_ERR_LEN] = "";
    double t0 = nn_now();

    if (prepare(job, err, sizeof err) != 0) {
        engine_fail(job, err);
        return;
    }
    job->mine.prepare_s = nn_now() - t0;
    plan_steps(job);
    if (alloc_histories(job, err, sizeof err) != 0) {
        engine_fail(job, err);
        return;
    }
    job->mine.state = NN_JOB_RUNNING;
    engine_publish(job);

    int rc = train_loop(job);
    if (rc < 0) {
        nn_errorf(err, sizeof err, "training on %s: %s", job->ops->name, job->backend.last_error);
        engine_fail(job, err);
        return;
    }
    job->mine.state = rc == 2 ? NN_JOB_DIVERGED : rc > 0 ? NN_JOB_CANCELLED : NN_JOB_DONE;
    engine_publish(job);
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

static void *trainer(void *arg)
{
    nn_job *job = arg;
    block_signals();
    if (!device_usable(job))
        return NULL;
    if (job->cfg.kind == NN_JOB_CALIBRATE)
        engine_calibrate(job);
    else if (job->cfg.kind == NN_JOB_JACOBIAN)
        engine_jacobian(job);
    else
        train(job);
    return NULL;
}

/* ---- the API -------------------------------------------------------------------- */

static int check_threads(const nn_job_config *c, char *err, size_t err_len)
{
    if (c->threads < 0)
        return nn_errorf(err, err_len, "threads %d: expected 0 (all cores) or more", c->threads);
    return 0;
}

/* A Jacobian job: val and the method (the preset's unless given), and a
 * network of linear and tanh layers. */
static int resolve_jacobian(nn_job_config *c, char *err, size_t err_len)
{
    nn_jac_shape s;
    if (c->jac_val == 0)
        c->jac_val = c->preset.task_val;
    if (c->jac_val < 1 || c->jac_val > NN_JAC_MAX_VAL)
        return nn_errorf(err, err_len, "val %d: expected 1..%d", c->jac_val, NN_JAC_MAX_VAL);
    if (c->jac_method < 0 || c->jac_method >= NN_JAC_METHOD_COUNT)
        return nn_errorf(err, err_len, "method %d: expected %s", c->jac_method, nn_jac_method_list());
    if (nn_jac_shape_from_preset(&c->preset, c->preset.name, &s, err, err_len) != 0)
        return -1;
    c->batch = c->jac_val;
    return check_threads(c, err, err_len);
}

static int resolve_config(nn_job_config *c, const nn_job_config *in, char *err, size_t err_len)
{
    *c = *in;
    const nn_preset *p = &c->preset;
    if (!c->device[0])
        nn_strlcpy(c->device, p->device, sizeof c->device);
    if (c->kind == NN_JOB_CALIBRATE)
        return check_threads(c, err, err_len);      /* the rest is training's */
    if (c->kind == NN_JOB_JACOBIAN)
        return resolve_jacobian(c, err, err_len);
    if (c->kind != NN_JOB_TRAIN)
        return nn_errorf(err, err_len, "job kind %d: expected training, calibration or jacobian", (int)c->kind);
    if (c->batch == 0)
        c->batch = p->batch;
    if (c->epochs == 0)
        c->epochs = p->epochs;
    if (c->lr == 0)
        c->lr = p->lr;
    if (c->log_every == 0)
        c->log_every = p->log_every;
    if (c->batch < 1 || c->batch > 1048576)
        return nn_errorf(err, err_len, "batch %d: expected 1..1048576", c->batch);
    if (c->epochs < 1)
        return nn_errorf(err, err_len, "epochs %d: expected at least 1", c->epochs);
    if (c->steps < 0 || (c->bench && c->steps < 1))
        return nn_errorf(err, err_len, "steps %ld: expected at least 1", c->steps);
    if (c->warmup < 0)
        return nn_errorf(err, err_len, "warmup %ld: expected 0 or more", c->warmup);
    if (!(c->lr > 0) || !isfinite(c->lr))
        return nn_errorf(err, err_len, "learning rate %g: expected a positive number", c->lr);
    if (c->log_every < 1)
        return nn_errorf(err, err_len, "log_every %ld: expected at least 1", c->log_every);
    if (check_threads(c, err, err_len) != 0)
        return -1;
    if (nn_job_switches_check(c, err, err_len) != 0)
        return -1;
    return 0;
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

/* A training or Jacobian job too large for the machine, or a batch larger
 * than the training set, is refused before its thread starts (the trainer
 * checks again once its backend is open, with the workspace). */
static int check_sizes(nn_job *job, char *err, size_t err_len)
{
    nn_memory_estimate m;
    if (job->cfg.kind == NN_JOB_CALIBRATE)
        return 0;
    engine_memory_estimate(&job->cfg, job->ops, NULL, &m);
    return nn_job_check_sizes(&job->cfg, &m, NULL, err, err_len);
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
    job->mine.kind = job->cfg.kind;
    job->mine.state = NN_JOB_PREPARING;
    nn_strlcpy(job->mine.device, job->ops->name, sizeof job->mine.device);
    job->mine.batch = job->cfg.batch;
    job->mine.epochs = job->cfg.epochs;
    job->mine.threads = job->cfg.threads;
    job->snap = job->mine;
    int rc = pthread_create(&job->thread, NULL, trainer, job);
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

static void release_trainer_state(nn_job *job)
{
    if (job->backend_open)
        engine_device_release(job);
    nn_net_destroy(&job->net);
    if (job->backend_open)
        nn_backend_close(&job->backend);
    nn_data_free(&job->data);
    engine_batch_release(job);
    engine_stats_release(job);
}

void nn_job_free(nn_job *job)
{
    if (!job)
        return;
    if (job->thread_started) {
        nn_job_cancel(job);
        nn_job_wait(job);
    }
    release_trainer_state(job);
    nn_jac_result_free(&job->jacobian);
    free(job->points);
    free(job->epoch_results);
    pthread_mutex_destroy(&job->lock);
    pthread_cond_destroy(&job->wake);
    free(job);
}
