/* src/jobs/sweep_run.c - the batch sweep's runner (nnlab/sweep.h): each of
 * its points a bench training job, one at a time, batch-major, started,
 * polled and collected here; what a point means (recorded, explained, the
 * crossover and doubling rules) is src/analysis/model/sweep.c's. */
#include "nnlab/sweep.h"

#include <stdio.h>
#include <string.h>

#include "sweep_torch.h"

/* A point whose job could not start: recorded as failed, with why. */
static void record_failure(nn_sweep *sw, int d, int i, const char *why)
{
    nn_snapshot failed;
    memset(&failed, 0, sizeof failed);
    failed.state = NN_JOB_FAILED;
    nn_strlcpy(failed.error, why, sizeof failed.error);
    nn_sweep_record(sw, d, i, &failed);
}

/* ---- the runner ------------------------------------------------------------------------------- */

int nn_sweep_active(const nn_sweep *sw)
{
    return sw->started && !sw->finished;
}

static void finish(nn_sweep *sw)
{
    sw->finished = 1;
    sw->t_end = nn_now();
}

/* Starts point (d, i)'s job (a repetition when the point has runs
 * already: it stays drawn as measured meanwhile); 0, or -1 with err. */
static int start_point(nn_sweep *sw, int d, int i, char *err, size_t err_len)
{
    nn_job_config cfg = sw->base;
    cfg.batch = sw->batch[i];
    snprintf(cfg.device, sizeof cfg.device, "%s", sw->device[d]);
    if (sw->graph_switch[d] >= 0)
        cfg.graph = sw->graph_switch[d];   /* the device's own way: eager or graph */
    sw->job = nn_job_start(&cfg, err, err_len);
    if (!sw->job)
        return -1;
    sw->cur_dev = d;
    sw->cur_batch = i;
    if (sw->pt[d][i].repeats == 0)
        sw->pt[d][i].state = NN_POINT_RUNNING;
    memset(&sw->snap, 0, sizeof sw->snap);
    return 0;
}

/* Starts the last point again when its repetitions disagree, else point
 * `next` (batch-major). A job that cannot start is recorded as failed and
 * the next one tried. */
static void start_next(nn_sweep *sw)
{
    char err[NN_ERR_LEN];
    if (sw->again) {
        sw->again = 0;
        if (start_point(sw, sw->cur_dev, sw->cur_batch, err, sizeof err) == 0)
            return;                  /* a repetition that cannot start: the point keeps its run */
    }
    while (sw->next < sw->n_batches * sw->n_devices) {
        int i = sw->next / sw->n_devices, d = sw->next % sw->n_devices;
        sw->next++;
        if (sw->pytorch[d]) {        /* PyTorch's step, on a thread (sweep_torch.c) */
            if (nn_sweep_torch_start(sw, d, i, err, sizeof err) == 0)
                return;
            record_failure(sw, d, i, err);
            continue;
        }
        if (sw->predicted[d] || sw->external[d])
            continue;                /* the model's points, or the caller's: no job */
        if (start_point(sw, d, i, err, sizeof err) == 0)
            return;
        record_failure(sw, d, i, err);
    }
    finish(sw);
}

/* Records the finished job's point and frees the job. */
static void collect(nn_sweep *sw)
{
    nn_job_wait(sw->job);
    nn_job_snapshot(sw->job, &sw->snap);
    int n = nn_job_conv_algorithms(sw->job, sw->conv, NN_SWEEP_CONV_MAX);
    sw->n_conv = n < NN_SWEEP_CONV_MAX ? n : NN_SWEEP_CONV_MAX;
    nn_sweep_record(sw, sw->cur_dev, sw->cur_batch, &sw->snap);
    sw->again = nn_sweep_wants_repeat(sw, sw->cur_dev, sw->cur_batch);
    nn_job_free(sw->job);
    sw->job = NULL;
}

int nn_sweep_poll(nn_sweep *sw)
{
    if (sw->finished)
        return 0;
    if (!sw->started) {
        sw->started = 1;
        sw->t_start = nn_now();
        start_next(sw);
        return NN_SWEEP_PROGRESS | NN_SWEEP_RESULTS;
    }
    if (sw->torch_run) {
        if (!nn_sweep_torch_poll(sw))
            return 0;
        if (sw->cancelled)
            finish(sw);
        else
            start_next(sw);
        return NN_SWEEP_PROGRESS | NN_SWEEP_RESULTS;
    }
    if (!sw->job)
        return 0;
    nn_snapshot s;
    nn_job_snapshot(sw->job, &s);
    int changed = memcmp(&s, &sw->snap, sizeof s) != 0;
    sw->snap = s;
    if (nn_job_state_ended(s.state)) {   /* a diverged point is a failed one */
        collect(sw);
        if (sw->cancelled)
            finish(sw);
        else
            start_next(sw);
        return NN_SWEEP_PROGRESS | NN_SWEEP_RESULTS;
    }
    return changed ? NN_SWEEP_PROGRESS : 0;
}

void nn_sweep_wait(nn_sweep *sw)
{
    if (sw->job)
        nn_job_wait(sw->job);
    nn_sweep_torch_wait(sw);
}

/* Asks the running job to stop; nn_sweep_poll collects it, so that the lab
 * never waits for a long step. */
void nn_sweep_cancel(nn_sweep *sw)
{
    if (!sw->started || sw->finished || sw->cancelled)
        return;
    sw->cancelled = 1;
    for (int d = 0; d < sw->n_devices; d++)
        for (int i = 0; i < sw->n_batches; i++)
            if (sw->pt[d][i].state == NN_POINT_PENDING)
                sw->pt[d][i].state = NN_POINT_CANCELLED;
    if (sw->job) {
        nn_job_cancel(sw->job);
        return;
    }
    if (sw->torch_run) {
        nn_sweep_torch_cancel(sw);   /* the helper stops within 0.1 s; poll collects it */
        return;
    }
    finish(sw);
}

void nn_sweep_free(nn_sweep *sw)
{
    if (sw->torch_run) {
        nn_sweep_torch_cancel(sw);
        nn_sweep_torch_wait(sw);
        nn_sweep_torch_poll(sw);     /* records it cancelled and frees it */
    }
    if (sw->job) {
        nn_job_free(sw->job);        /* cancels and waits */
        sw->job = NULL;
    }
}
