/* src/jobs/train/engine_loss.c - what the trainer reads back of the loss: the
 * running loss published as points every log_every steps, a loss that
 * became NaN or inf (the job then stops as diverged), and validation at the
 * end of an epoch; see train_internal.h. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>

#include "train_internal.h"

/* ---- publishing ------------------------------------------------------------ */

static void publish_point(nn_job *job, const nn_loss_point *pt)
{
    pthread_mutex_lock(&job->lock);
    if (job->n_points < job->cap_points)
        job->points[job->n_points++] = *pt;
    job->draft.n_loss_points = job->n_points;
    job->draft.last_loss = pt->loss;
    job->snap = job->draft;
    pthread_mutex_unlock(&job->lock);
}

static void publish_epoch(nn_job *job, const nn_epoch_result *r)
{
    pthread_mutex_lock(&job->lock);
    if (job->n_epoch_results < job->cap_epoch_results)
        job->epoch_results[job->n_epoch_results++] = *r;
    job->draft.n_epoch_results = job->n_epoch_results;
    job->draft.last_epoch = *r;
    job->snap = job->draft;
    pthread_mutex_unlock(&job->lock);
}

/* Reads the running loss sum and clears it: the only point where the trainer
 * waits for the device outside validation. */
static int take_running_loss(nn_job *job, float *sum)
{
    nn_backend *b = &job->backend;
    float stats[2];
    if (b->ops->download(b, stats, job->net.stats, sizeof stats) != 0 ||
        b->ops->zero(b, job->net.stats, sizeof stats) != 0)
        return -1;
    *sum = stats[0];
    if (job->comm) {                 /* the ranks' mean of their batches' losses */
        double all = stats[0];
        if (engine_ranks_sum(job, &all, 1) != 0)
            return -1;
        *sum = (float)(all / job->ranks);
    }
    return 0;
}

/* ---- divergence -------------------------------------------------------------------- */

/* A non-finite loss ends the job: nothing after it means anything, and the
 * remaining epochs would only burn time. exact: the loss was read back after
 * the very step that made it so; otherwise it was read back only now (a
 * device reads it every log_every steps), so it happened by this step.
 * RUN_DIVERGED when sum is not finite, else RUN_GO_ON. */
static run_result check_finite(nn_job *job, float sum, int exact)
{
    nn_snapshot *s = &job->draft;
    if (isfinite(sum))
        return RUN_GO_ON;
    s->diverged_step = job->tot.steps;
    s->diverged_exact = exact;
    s->diverged_loss = sum;
    nn_errorf(s->error, sizeof s->error, "loss became %s %s step %ld (lr %g): training stopped; "
              "try a smaller learning rate", isnan(sum) ? "NaN" : "inf", exact ? "at" : "by",
              job->tot.steps, job->cfg.lr);
    return RUN_DIVERGED;
}

/* The step just run, when its loss is known without waiting for a device:
 * on a host-memory backend the running sum is a read of host memory; with
 * sync_every_step the step has read it back already. The sum was finite
 * after the step before (or cleared), so a non-finite sum is this step's. */
/* Ranks: every step, the loss summed over the ranks (finite on all, or
 * diverged on all) and a stop asked of any rank (mpirun passes a signal on
 * to each, which may see it a step apart): all stop at the same step, and
 * none waits for a sum another left. */
static run_result ranks_check_step(nn_job *job)
{
    nn_backend *b = &job->backend;
    float stats[2];
    if (b->ops->download(b, stats, job->net.stats, sizeof stats) != 0)
        return RUN_ERROR;
    double v[2] = { stats[0], atomic_load(&job->cancel_requested) ? 1.0 : 0.0 };
    if (engine_ranks_sum(job, v, 2) != 0)
        return RUN_ERROR;
    if (v[1] > 0)
        atomic_store(&job->cancel_requested, 1);
    return check_finite(job, (float)v[0], 1);
}

run_result engine_check_step_loss(nn_job *job)
{
    nn_backend *b = &job->backend;
    float stats[2];
    if (job->comm)
        return ranks_check_step(job);
    if (job->cfg.sync_every_step)
        return check_finite(job, job->step_stats[0], 1);
    if (!job->ops->host_memory)
        return RUN_GO_ON;
    if (b->ops->download(b, stats, job->net.stats, sizeof stats) != 0)
        return RUN_ERROR;
    return check_finite(job, stats[0], 1);
}

/* Publishes the mean loss of the last `interval` steps (none when 0); the
 * wait for it counts as the steps' time on a device. RUN_DIVERGED when
 * that loss is not finite. */
run_result engine_report_loss(nn_job *job, int epoch, long step_in_epoch, long interval)
{
    double r0 = nn_now();
    float sum;
    if (interval > 0) {
        if (take_running_loss(job, &sum) != 0)
            return RUN_ERROR;
        if (check_finite(job, sum, interval == 1) != RUN_GO_ON)
            return RUN_DIVERGED;
        nn_loss_point pt = { job->tot.steps, epoch, step_in_epoch, sum / (float)interval,
                             job->tot.active_s + (nn_now() - r0) };
        publish_point(job, &pt);
    }
    engine_stats_add_wait(job, nn_now() - r0, job->tot.steps > job->tot.warmup);
    return RUN_GO_ON;
}

/* RUN_GO_ON, RUN_CANCELLED part way, or RUN_ERROR on a backend error. */
static run_result validate(nn_job *job, nn_epoch_result *r)
{
    const nn_dataset *d = &job->data;
    nn_backend *b = &job->backend;
    double loss = 0.0, correct = 0.0, seen = 0.0;
    if (engine_ranks_share_state(job) != 0)
        return RUN_ERROR;
    long stride = (long)job->cfg.batch * job->ranks;      /* ranks: each its share */
    for (long first = (long)job->rank * job->cfg.batch; first < d->n_val; first += stride) {
        int n = (int)(d->n_val - first < job->cfg.batch ? d->n_val - first : job->cfg.batch);
        float stats[2];
        if (!job->comm && atomic_load(&job->cancel_requested))
            return RUN_CANCELLED;    /* ranks finish it together */
        if (b->ops->zero(b, job->net.stats, sizeof stats) != 0)
            return RUN_ERROR;
        int rc = job->resident ? engine_device_val_batch(job, first, n)
                               : engine_load_batch(job, d->val_x, d->val_y, d->val_t, NULL, first, n);
        if (rc != 0)
            return RUN_ERROR;
        const float *out = nn_net_forward(&job->net, n, 0, 0);
        if (!out || nn_net_loss(&job->net, n, out, NULL) != 0 ||
            b->ops->download(b, stats, job->net.stats, sizeof stats) != 0)
            return RUN_ERROR;
        loss += (double)stats[0] * n;   /* the op adds the batch mean */
        correct += stats[1];
        seen += n;
    }
    double sums[3] = { loss, correct, seen };
    if (b->ops->zero(b, job->net.stats, 2 * sizeof(float)) != 0 || engine_ranks_sum(job, sums, 3) != 0)
        return RUN_ERROR;
    r->val_loss = sums[2] > 0 ? (float)(sums[0] / sums[2]) : NAN;
    r->has_accuracy = d->classes > 0;
    r->val_accuracy = sums[2] > 0 && d->classes > 0 ? (float)(sums[1] / sums[2]) : 0.0f;
    return RUN_GO_ON;
}

/* Validates at the end of an epoch, its device traffic left out of the
 * per-step counts: RUN_GO_ON, RUN_CANCELLED or RUN_ERROR. */
run_result engine_run_validation(nn_job *job, int epoch)
{
    nn_epoch_result r = { .epoch = epoch, .step = job->tot.steps };
    nn_backend_counters c0, c1;
    if (job->cfg.bench || job->cfg.no_validation || job->data.n_val == 0)
        return RUN_GO_ON;
    if (job->device)
        engine_read_counters(job, &c0);
    double v0 = nn_now();
    run_result rc = validate(job, &r);
    /* the job's time includes validation (the write-ups' times do), kept
     * apart too: the per-step figures are the training steps' alone */
    double dv = nn_now() - v0;
    job->tot.active_s += dv;
    job->tot.val_s += dv;
    job->draft.val_s = job->tot.val_s;
    if (rc != RUN_GO_ON)
        return rc;
    r.time_s = job->draft.elapsed_s = job->tot.active_s;
    r.val_s = job->tot.val_s;
    publish_epoch(job, &r);
    if (job->device) {
        engine_read_counters(job, &c1);
        engine_stats_skip(job, &c0, &c1);
    }
    return RUN_GO_ON;
}
