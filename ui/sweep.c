/* ui/sweep.c - the batch sweep runner and its crossover finder; see sweep.h. */
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int ui_sweep_batches(int from, int to, int *out, int max)
{
    int n = 0;
    long b = 1;
    if (from < 1)
        from = 1;
    while (b < from)
        b *= 2;
    for (; b <= to && n < max; b *= 2)
        out[n++] = (int)b;
    return n;
}

int ui_sweep_crossover(const double *base, const double *challenger, int n)
{
    int from = -1;
    for (int i = 0; i < n; i++) {
        if (!isfinite(base[i]) || !isfinite(challenger[i]))
            continue;                /* not measured on both: says nothing */
        if (challenger[i] > base[i]) {
            if (from < 0)
                from = i;
        } else {
            from = -1;               /* fell behind again: the lead starts later */
        }
    }
    return from;
}

void ui_sweep_init(ui_sweep *sw, const nn_job_config *base, int from, int to, long steps, long warmup)
{
    memset(sw, 0, sizeof *sw);
    sw->base = *base;
    sw->base.bench = 1;
    sw->base.steps = steps > 0 ? steps : 20;
    sw->base.warmup = warmup >= 0 ? warmup : 3;
    sw->base.epochs = 0;
    sw->n_batches = ui_sweep_batches(from, to, sw->batch, UI_SWEEP_MAX_BATCHES);
    sw->latest_dev = sw->latest_batch = -1;
    for (int d = 0; d < UI_SWEEP_MAX_DEVICES; d++)
        for (int i = 0; i < UI_SWEEP_MAX_BATCHES; i++) {
            sw->rate[d][i] = NAN;
            sw->us_step[d][i] = NAN;
            sw->regime[d][i] = -1;
        }
}

void ui_sweep_add_device(ui_sweep *sw, const char *device, const nn_calibration *cal, const char *why)
{
    if (sw->n_devices == UI_SWEEP_MAX_DEVICES)
        return;
    int d = sw->n_devices++;
    snprintf(sw->device[d], sizeof sw->device[0], "%s", device);
    sw->has_cal[d] = cal != NULL;
    if (cal)
        sw->cal[d] = *cal;
    else
        snprintf(sw->cal_why[d], sizeof sw->cal_why[0], "%s", why && why[0] ? why : "none measured");
}

void ui_sweep_explain_point(ui_sweep *sw, int d, int i, const nn_snapshot *s)
{
    static nn_explanation e;         /* 7 KB, UI thread only: kept off the stack */
    sw->latest_dev = d;
    sw->latest_batch = i;
    nn_measure_step(s, &sw->measured[d][i]);
    if (nn_observe_inputs(s, &sw->inputs[d][i]) != 0) {
        sw->regime[d][i] = -1;
        return;
    }
    if (!sw->has_cal[d])
        return;
    nn_explain_inputs_run(&sw->base.preset, &sw->cal[d], &sw->inputs[d][i], &e);
    sw->regime[d][i] = (signed char)e.regime;
}

int ui_sweep_active(const ui_sweep *sw)
{
    return sw->started && !sw->finished;
}

/* Starts point `next` (batch-major: every device at batch 1, then at 2, ...,
 * so that a cancelled sweep still compares the devices it reached). A job
 * that cannot start is recorded as failed and the next one tried. */
static void start_next(ui_sweep *sw)
{
    char err[NN_ERR_LEN];
    while (sw->next < sw->n_batches * sw->n_devices) {
        int i = sw->next / sw->n_devices, d = sw->next % sw->n_devices;
        nn_job_config cfg = sw->base;
        sw->next++;
        cfg.batch = sw->batch[i];
        snprintf(cfg.device, sizeof cfg.device, "%s", sw->device[d]);
        sw->job = nn_job_start(&cfg, err, sizeof err);
        if (sw->job) {
            sw->cur_dev = d;
            sw->cur_batch = i;
            sw->state[d][i] = UI_PT_RUNNING;
            memset(&sw->snap, 0, sizeof sw->snap);
            return;
        }
        sw->state[d][i] = UI_PT_FAILED;
        snprintf(sw->last_error, sizeof sw->last_error, "%s batch %d: %s", sw->device[d], sw->batch[i], err);
    }
    sw->finished = 1;
    sw->t_end = nn_now();
}

/* Records the finished job's median step as samples/s. */
static void collect(ui_sweep *sw)
{
    int d = sw->cur_dev, i = sw->cur_batch;
    nn_job_wait(sw->job);
    nn_job_snapshot(sw->job, &sw->snap);
    double us = nn_measured_step_us(&sw->snap);
    if (sw->snap.state == NN_JOB_DONE && us > 0) {
        sw->us_step[d][i] = us;
        sw->rate[d][i] = sw->batch[i] * 1e6 / us;
        sw->state[d][i] = UI_PT_DONE;
        ui_sweep_explain_point(sw, d, i, &sw->snap);
    } else if (sw->snap.state == NN_JOB_CANCELLED) {
        sw->state[d][i] = UI_PT_CANCELLED;
    } else {
        sw->state[d][i] = UI_PT_FAILED;
        snprintf(sw->last_error, sizeof sw->last_error, "%s batch %d: %s", sw->device[d], sw->batch[i],
                 sw->snap.error[0] ? sw->snap.error : "no timed steps");
    }
    nn_job_free(sw->job);
    sw->job = NULL;
}

int ui_sweep_poll(ui_sweep *sw)
{
    if (sw->finished)
        return 0;
    if (!sw->started) {
        sw->started = 1;
        sw->t_start = nn_now();
        start_next(sw);
        return UI_SWEEP_PROGRESS | UI_SWEEP_RESULTS;
    }
    if (!sw->job)
        return 0;
    nn_snapshot s;
    nn_job_snapshot(sw->job, &s);
    int changed = memcmp(&s, &sw->snap, sizeof s) != 0;
    sw->snap = s;
    if (s.state == NN_JOB_DONE || s.state == NN_JOB_FAILED || s.state == NN_JOB_CANCELLED) {
        collect(sw);
        if (sw->cancelled) {
            sw->finished = 1;
            sw->t_end = nn_now();
        } else {
            start_next(sw);
        }
        return UI_SWEEP_PROGRESS | UI_SWEEP_RESULTS;
    }
    return changed ? UI_SWEEP_PROGRESS : 0;
}

/* Asks the running job to stop; ui_sweep_poll collects it, so the screen
 * never waits for a long step. */
void ui_sweep_cancel(ui_sweep *sw)
{
    if (!sw->started || sw->finished || sw->cancelled)
        return;
    sw->cancelled = 1;
    for (int d = 0; d < sw->n_devices; d++)
        for (int i = 0; i < sw->n_batches; i++)
            if (sw->state[d][i] == UI_PT_PENDING)
                sw->state[d][i] = UI_PT_CANCELLED;
    if (sw->job) {
        nn_job_cancel(sw->job);
        return;
    }
    sw->finished = 1;
    sw->t_end = nn_now();
}

void ui_sweep_free(ui_sweep *sw)
{
    if (sw->job) {
        nn_job_free(sw->job);        /* cancels and waits */
        sw->job = NULL;
    }
}
