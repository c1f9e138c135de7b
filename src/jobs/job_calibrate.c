/* src/jobs/job_calibrate.c - the calibration job kind: nn_calibrate
 * (src/analysis/model/calibrate.c) run on the job's thread, its progress published
 * in the snapshot like a training step's, the result cached and kept for
 * nn_job_calibration; see engine.h.
 *
 * Why a job kind rather than a thread of its own in each front end: the lab
 * and the CLI then share one thread model, one cancel and one rule for the
 * cache, and the lab draws a calibration's progress as it draws training's. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "engine_internal.h"
#include "job_kind.h"
#include "nnlab/calibrate.h"

typedef struct calib_run {
    nn_job *job;
    double t0;
} calib_run;

/* nn_calibrate's progress callback, on the job's thread, between measurements.
 * It cannot stop the measurement (the callback returns nothing), so a cancel
 * is honoured when nn_calibrate returns. */
static void on_progress(void *ctx, double fraction, const char *what)
{
    calib_run *run = ctx;
    nn_snapshot *s = &run->job->draft;
    s->fraction_done = fraction;
    nn_strlcpy(s->activity, what ? what : "", sizeof s->activity);
    s->elapsed_s = nn_now() - run->t0;
    engine_publish(run->job);
}

/* Keeps the result (and DONE) under the lock, so that a reader who sees DONE
 * finds the result. */
static void end_done(nn_job *job, const nn_calibration *cal)
{
    pthread_mutex_lock(&job->lock);
    job->calibration = *cal;
    job->has_calibration = 1;
    job->draft.state = NN_JOB_DONE;
    job->snap = job->draft;
    pthread_mutex_unlock(&job->lock);
}

static void run(nn_job *job)
{
    char err[NN_ERR_LEN] = "";
    calib_run run = { job, nn_now() };
    nn_calibration cal;

    if (atomic_load(&job->cancel_requested)) {
        engine_end(job, NN_JOB_CANCELLED);
        return;
    }
    job->draft.state = NN_JOB_RUNNING;
    nn_strlcpy(job->draft.activity, "starting", sizeof job->draft.activity);
    engine_publish(job);
    if (nn_calibrate(job->ops->name, job->cfg.threads, &cal, on_progress, &run, err, sizeof err) != 0) {
        engine_fail(job, err);
        return;
    }
    job->draft.elapsed_s = nn_now() - run.t0;
    if (atomic_load(&job->cancel_requested)) {
        engine_end(job, NN_JOB_CANCELLED);     /* measured, but a cancelled job keeps nothing */
        return;
    }
    /* the one place a fresh calibration is cached, whichever front end asked */
    if ((job->cfg.cache_at_threads ? nn_calibration_save_threads(&cal, err, sizeof err)
                                   : nn_calibration_save(&cal, err, sizeof err)) != 0)
        nn_errorf(job->draft.note, sizeof job->draft.note, "calibration not cached: %s", err);
    end_done(job, &cal);
}

int nn_job_calibration(nn_job *job, nn_calibration *out)
{
    pthread_mutex_lock(&job->lock);
    int ok = job->has_calibration;
    if (ok)
        *out = job->calibration;
    pthread_mutex_unlock(&job->lock);
    return ok ? 0 : -1;
}

/* Only the device and its threads: the rest of a config is training's. */
static int resolve(nn_job_config *c, char *err, size_t err_len)
{
    return job_check_threads(c, err, err_len);
}

/* A calibration measures with buffers of its own choosing, a few MB
 * (calibrate_sizes.c): no estimate, no size check, nothing kept but the
 * result, which is the job's own. */
void nn_job_config_calibration(nn_job_config *cfg, const char *device, int threads)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->kind = NN_JOB_CALIBRATE;
    snprintf(cfg->device, sizeof cfg->device, "%s", device ? device : "");
    cfg->threads = threads;
}

const nn_job_kind_def job_kind_calibrate = {
    .traits = { .kind = NN_JOB_CALIBRATE, .name = "calibrate", .size_label = "batch",
                .size_key = "[train] batch", .size_max = 1048576L, .progress_by_fraction = 1,
                .view = NN_VIEW_CALIBRATION },
    .preset_task = -1,
    .resolve = resolve,
    .run = run,
};
