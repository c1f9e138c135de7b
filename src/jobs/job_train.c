/* src/jobs/job_train.c - the training kind (NN_JOB_TRAIN, and the bench):
 * the config from the preset, the preparation (backend, sizes, data set,
 * network, device), the loop over epochs and steps, and what it holds
 * released. A step's parts are train/ (train_internal.h); the loop reads
 * their named results (run_result) and ends the job in the state they say. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "job_kind.h"
#include "nnlab/device.h"
#include "nnlab/explain.h"
#include "train/train_internal.h"

/* The largest batch a config may ask for (the data set bounds it first). */
#define TRAIN_BATCH_MAX 1048576L

/* The batch, epochs, learning rate and log interval: the preset's unless
 * given; the GPU switches by the one rule (nnlab/device.h). */
static int resolve(nn_job_config *c, char *err, size_t err_len)
{
    const nn_preset *p = &c->preset;
    if (c->batch == 0)
        c->batch = p->batch;
    if (c->epochs == 0)
        c->epochs = p->epochs;
    if (c->lr == 0)
        c->lr = p->lr;
    if (c->log_every == 0)
        c->log_every = p->log_every;
    if (c->batch < 1 || c->batch > TRAIN_BATCH_MAX)
        return nn_errorf(err, err_len, "batch %d: expected 1..%ld", c->batch, TRAIN_BATCH_MAX);
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
    if (job_check_threads(c, err, err_len) != 0)
        return -1;
    if (nn_job_switches_check(c, err, err_len) != 0)
        return -1;
    return 0;
}

/* ---- preparation ------------------------------------------------------------------ */

/* The backend first: its convolution workspace completes the memory
 * estimate, checked before the data set (the largest part) is loaded; then
 * the batch against the training set the files actually hold. */
static int prepare(nn_job *job, char *err, size_t err_len)
{
    nn_job_config *c = &job->cfg;
    nn_memory_estimate m;
    int threads = c->threads;

    if (engine_ranks_prepare(job, &threads, err, err_len) != 0)
        return -1;
    if (engine_open_backend(job, threads, err, err_len) != 0 ||
        engine_ranks_device_open(job, err, err_len) != 0)
        return -1;
    job_memory_estimate(c, job->ops, &job->backend, &m);
    if (nn_job_check_sizes(c, &m, NULL, err, err_len) != 0)
        return -1;
    nn_data_watch_cancel(&job->cancel_requested);   /* a slow gzip file stops at a cancel */
    int rc = nn_data_for_preset(&c->preset, c->data_dir[0] ? c->data_dir : NULL, c->seed, &job->data,
                                err, err_len);
    nn_data_watch_cancel(NULL);
    if (rc != 0)
        return -1;
    nn_strlcpy(job->draft.data_name, job->data.name, sizeof job->draft.data_name);
    nn_strlcpy(job->draft.data_desc, job->data.description, sizeof job->draft.data_desc);
    job->draft.data_synthetic = job->data.synthetic;
    if (engine_check_batch_rows(job->ranks > 1 ? "the global batch (ranks x batch)" : NULL,
                                (int)job->global_batch, job->data.n_train, job->data.name, err,
                                err_len) != 0)
        return -1;
    if (nn_net_create(&job->net, &job->backend, &c->preset, c->batch, c->seed, err, err_len) != 0 ||
        engine_ranks_share_params(job, err, err_len) != 0 ||
        engine_ranks_buckets_prepare(job, err, err_len) != 0)
        return -1;
    job->draft.n_params = nn_net_param_count(&job->net);
    nn_rng_seed(&job->shuffle_rng, c->seed ^ 0x5eed5eedULL);
    if (engine_batch_prepare(job, err, err_len) != 0 || engine_stats_prepare(job, err, err_len) != 0)
        return -1;
    return engine_device_prepare(job, err, err_len);
}

/* The step count, from --steps, the bench's warm-up and steps, or the epochs. */
static void plan_steps(nn_job *job)
{
    nn_snapshot *s = &job->draft;
    s->steps_per_epoch = (job->data.n_train + job->global_batch - 1) / job->global_batch;
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
    long per_epoch = job->draft.steps_per_epoch / job->cfg.log_every + 1;
    long cap_points = per_epoch * job->draft.epochs;
    nn_loss_point *points = calloc((size_t)cap_points, sizeof *points);
    nn_epoch_result *results = calloc((size_t)job->draft.epochs, sizeof *results);
    if (!points || !results) {
        free(points);
        free(results);
        return nn_errorf(err, err_len, "out of memory for the loss history (%ld points)", cap_points);
    }
    pthread_mutex_lock(&job->lock);
    job->points = points;
    job->cap_points = cap_points;
    job->epoch_results = results;
    job->cap_epoch_results = job->draft.epochs;
    pthread_mutex_unlock(&job->lock);
    return 0;
}

/* ---- the loop ------------------------------------------------------------------- */

/* One step of the global batch at position pos of the epoch's order (this
 * rank's share: samples rank x batch .. of it); RUN_DIVERGED when its loss
 * is known to be non-finite. */
static run_result run_step(nn_job *job, long pos)
{
    long left = job->data.n_train - pos;
    long n_global = left < job->global_batch ? left : job->global_batch;
    long mine = n_global - (long)job->rank * job->cfg.batch;
    int n = (int)(mine < 0 ? 0 : mine < job->cfg.batch ? mine : job->cfg.batch);
    job->step_n_global = (int)n_global;
    pos += n > 0 ? (long)job->rank * job->cfg.batch : 0;
    double t[NN_PHASE_COUNT] = { 0 }, t_graph = 0.0, start = nn_now();
    long step = job->tot.steps;
    if (nn_net_set_step(&job->net, step) != 0)
        return RUN_ERROR;
    int rc = job->device ? engine_device_step(job, pos, n, step, t, &t_graph)
                         : engine_host_step(job, pos, n, step, t);
    if (rc != 0)
        return RUN_ERROR;
    /* samples: the global batch's, so that samples/s is the ranks' together */
    engine_stats_add_step(job, job->ranks > 1 ? (int)n_global : n, nn_now() - start, t, t_graph);
    return engine_check_step_loss(job);
}

/* Timing after the warm-up, the device's finished timings, the
 * convolution algorithms once the first step chose them (a step ends
 * outside any recording), the snapshot. */
static int after_step(nn_job *job)
{
    const engine_totals *tot = &job->tot;
    if (tot->steps == 1)
        engine_keep_conv_algorithms(job);
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
static run_result end_epoch(nn_job *job, int epoch, long in_epoch, long since_report)
{
    run_result rc = engine_report_loss(job, epoch, in_epoch, since_report);
    if (rc != RUN_GO_ON)
        return rc;
    return engine_run_validation(job, epoch);   /* its time counts as training's */
}

static run_result train_epoch(nn_job *job, int epoch)
{
    long in_epoch = 0, since_report = 0;
    run_result rc;
    job->draft.epoch = epoch;
    engine_shuffle(job);
    for (long pos = 0; pos < job->data.n_train && job->tot.steps < job->draft.total_steps;
         pos += job->global_batch) {
        /* a cancel still reports the steps run since the last report, so
         * the run ends with the loss of what it trained */
        if (engine_honour_requests(job) == RUN_CANCELLED) {
            rc = engine_report_loss(job, epoch, in_epoch, since_report);
            return rc != RUN_GO_ON ? rc : RUN_CANCELLED;
        }
        if ((rc = run_step(job, pos)) != RUN_GO_ON)
            return rc;
        in_epoch++, since_report++;
        if (since_report == job->cfg.log_every) {
            if ((rc = engine_report_loss(job, epoch, in_epoch, since_report)) != RUN_GO_ON)
                return rc;
            since_report = 0;
        }
        if (after_step(job) != 0)
            return RUN_ERROR;
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

/* Trains epoch by epoch until total_steps; a loss that diverged still
 * leaves the steps' figures final. */
static run_result train_loop(nn_job *job)
{
    if (job->device)
        engine_read_counters(job, &job->tot.cnt_base);
    for (int epoch = 1; job->tot.steps < job->draft.total_steps; epoch++) {
        run_result rc = train_epoch(job, epoch);
        if (rc == RUN_DIVERGED)
            return finish_steps(job) != 0 ? RUN_ERROR : RUN_DIVERGED;
        if (rc != RUN_GO_ON)
            return rc;
    }
    return finish_steps(job) != 0 ? RUN_ERROR : RUN_GO_ON;
}

/* ---- the run ----------------------------------------------------------------------- */

static void run(nn_job *job)
{
    char err[NN_ERR_LEN] = "";
    double t0 = nn_now();

    if (prepare(job, err, sizeof err) != 0) {
        if (atomic_load(&job->cancel_requested))
            engine_end(job, NN_JOB_CANCELLED);    /* the load stopped for it: no failure */
        else
            engine_fail(job, err);
        return;
    }
    job->draft.prepare_s = nn_now() - t0;
    plan_steps(job);
    if (alloc_histories(job, err, sizeof err) != 0) {
        engine_fail(job, err);
        return;
    }
    job->draft.state = NN_JOB_RUNNING;
    engine_publish(job);

    run_result rc = train_loop(job);
    engine_keep_conv_algorithms(job);   /* with the shapes of a partial batch and validation */
    switch (rc) {
    case RUN_ERROR:
        nn_errorf(err, sizeof err, "training on %s: %s", job->ops->name, job->backend.last_error);
        engine_fail(job, err);
        break;
    case RUN_DIVERGED: engine_end(job, NN_JOB_DIVERGED); break;
    case RUN_CANCELLED: engine_end(job, NN_JOB_CANCELLED); break;
    case RUN_GO_ON: engine_end(job, NN_JOB_DONE); break;
    }
}

long nn_job_read_params(nn_job *job, float *out, long cap)
{
    nn_net *net = &job->net;
    nn_backend *b = &job->backend;
    long at = 0;
    if (job->cfg.kind != NN_JOB_TRAIN || !net->b || !net->params || job->thread_started)
        return -1;
    for (int i = 0; i < net->n_layers; i++) {
        const nn_layer *l = &net->layers[i];
        long floats = (long)(l->n_weights + l->n_bias);
        if (l->param_owner != i || floats == 0)
            continue;
        long take = at >= cap ? 0 : cap - at < floats ? cap - at : floats;
        if (take > 0 && b->ops->download(b, out + at, net->params + l->param_offset,
                                         (size_t)take * sizeof(float)) != 0)
            return -1;
        at += floats;
    }
    return at;
}

/* Everything the job's thread took for training; the backend, which the
 * engine closes next, is still open. */
static void release(nn_job *job)
{
    if (job->backend_open)
        engine_device_release(job);
    engine_ranks_release(job);
    nn_net_destroy(&job->net);
    nn_data_free(&job->data);
    engine_batch_release(job);
    engine_stats_release(job);
}

/* The kind's prediction (job_kind.h): the job's steps at the cost model's
 * step for its switches (validation left out: the model prices steps). */
static double train_predict_s(const nn_job_config *cfg, const nn_backend_ops *ops, const nn_calibration *cal)
{
    const nn_preset *p = &cfg->preset;
    int batch = cfg->batch > 0 ? cfg->batch : p->batch;
    int epochs = cfg->epochs > 0 ? cfg->epochs : p->epochs;
    long steps = cfg->steps > 0 ? cfg->steps : nn_preset_steps_per_epoch(p, batch) * epochs;
    nn_explain_options opt;
    nn_explanation e;
    memset(&opt, 0, sizeof opt);
    opt.host_memory = ops && ops->host_memory;
    opt.data_on_device = cfg->data_on_device;
    opt.pinned = cfg->pinned;
    opt.sync_every_step = cfg->sync_every_step;
    opt.graph = cfg->graph;
    nn_explain(p, batch, cal, &opt, &e);
    return e.predicted_us > 0 ? (double)steps * e.predicted_us * 1e-6 : -1;
}

const nn_job_kind_def job_kind_train = {
    .traits = { .kind = NN_JOB_TRAIN, .name = "train", .trains = 1, .size_label = "batch",
                .size_key = "[train] batch", .size_max = TRAIN_BATCH_MAX, .view = NN_VIEW_STEPS },
    .preset_task = NN_TASK_TRAIN,
    .resolve = resolve,
    .estimate = train_estimate,
    .check_sizes = train_check_sizes,
    .run = run,
    .release = release,
    .predict_s = train_predict_s,
};
