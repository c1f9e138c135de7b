/* src/analysis/report/progress.c - a job's times and history, once for every front
 * end; see nnlab/progress.h. */
#include "nnlab/progress.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- a job's times -------------------------------------------------------------------- */

static double time_or_zero(double s)
{
    return s > 0 && isfinite(s) ? s : 0.0;
}

/* elapsed_s of which val_s validated; the per step the training's. */
static void times_split(double elapsed_s, double val_s, long steps, long total_steps, int ended,
                        nn_job_times *t)
{
    memset(t, 0, sizeof *t);
    t->steps = steps;
    t->total_steps = total_steps;
    t->elapsed_s = time_or_zero(elapsed_s);
    t->val_s = time_or_zero(val_s) < t->elapsed_s ? time_or_zero(val_s) : t->elapsed_s;
    t->train_s = t->elapsed_s - t->val_s;
    t->ended = ended;
    if (steps > 0 && t->train_s > 0) {
        t->has_per_step = 1;
        t->per_step_s = t->train_s / (double)steps;
    }
    if (ended) {
        t->has_remaining = 1;        /* nothing is left of a job that ended */
    } else if (steps > 0 && t->elapsed_s > 0) {
        long left = total_steps > steps ? total_steps - steps : 0;
        t->has_remaining = 1;        /* at the pace so far, validations in */
        t->remaining_s = (double)left * t->elapsed_s / (double)steps;
    }
    t->total_s = t->elapsed_s + t->remaining_s;
}

void nn_job_times_at(double elapsed_s, long steps, long total_steps, int ended, nn_job_times *t)
{
    times_split(elapsed_s, 0.0, steps, total_steps, ended, t);
}

/* A calibration has no steps: its remaining time is its elapsed time at the
 * pace of the fraction done so far. */
static void calibration_times(const nn_snapshot *s, nn_job_times *t)
{
    double f = s->fraction_done;
    nn_job_times_at(s->elapsed_s, 0, 0, nn_job_state_ended(s->state), t);
    if (!t->ended && f > 0 && f <= 1 && t->elapsed_s > 0) {
        t->has_remaining = 1;
        t->remaining_s = t->elapsed_s * (1 - f) / f;
        t->total_s = t->elapsed_s + t->remaining_s;
    }
}

void nn_job_times_of(const nn_snapshot *s, nn_job_times *t)
{
    int ended = nn_job_state_ended(s->state);
    if (nn_job_traits_of(s->kind)->progress_by_fraction) {
        calibration_times(s, t);
        return;
    }
    times_split(s->elapsed_s, s->val_s, s->step, s->total_steps, ended, t);
    if (s->timed_steps > 0 && s->us_per_step > 0) {
        t->has_per_step = 1;         /* the phase bar's statistic: the timed steps' mean */
        t->per_step_s = s->us_per_step * 1e-6;
    }
    if (s->state == NN_JOB_PAUSED || s->state == NN_JOB_PREPARING) {
        t->has_remaining = 0;        /* a paused job's end is not coming */
        t->remaining_s = 0.0;
        t->total_s = t->elapsed_s;
    }
}

void nn_job_times_of_epoch(const nn_epoch_result *e, long total_steps, nn_job_times *t)
{
    times_split(e->time_s, e->val_s, e->step, total_steps, e->step >= total_steps, t);
}

/* ---- formats ---------------------------------------------------------------------------- */

void nn_format_clock(double s, char *buf, size_t len)
{
    if (!isfinite(s) || s < 0 || s > 359999999.0) {
        snprintf(buf, len, "?");
        return;
    }
    long t = (long)(s + 0.5);        /* rounded, as Keras's "52s" beside it (tqdm cuts) */
    if (t >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, len, "%02ld:%02ld", t / 60, t % 60);
}

void nn_format_elapsed_remaining(const nn_job_times *t, char *buf, size_t len)
{
    char el[24], rem[24];
    nn_format_clock(t->elapsed_s, el, sizeof el);
    nn_format_clock(t->has_remaining ? t->remaining_s : NAN, rem, sizeof rem);
    snprintf(buf, len, "%s<%s", el, rem);
}

/* Keras's rule (Progbar._format_time): whole seconds from one second, whole
 * milliseconds from one, else whole microseconds. */
void nn_format_per_step(double s, char *buf, size_t len)
{
    if (!isfinite(s) || s <= 0)
        snprintf(buf, len, "-/step");
    else if (s >= 1.0)
        snprintf(buf, len, "%.0fs/step", s);
    else if (s >= 1e-3)
        snprintf(buf, len, "%.0fms/step", s * 1e3);
    else
        snprintf(buf, len, "%.0fus/step", s * 1e6);
}

void nn_format_keras(const nn_job_times *t, char *buf, size_t len)
{
    char per[24];
    nn_format_per_step(t->has_per_step ? t->per_step_s : NAN, per, sizeof per);
    if (t->val_s > 0)                /* seconds rounded as nn_format_clock rounds */
        snprintf(buf, len, "%lds %s, validation %lds", (long)(t->train_s + 0.5), per, (long)(t->val_s + 0.5));
    else
        snprintf(buf, len, "%lds %s", (long)(t->train_s + 0.5), per);
}

void nn_format_steps_line(const nn_snapshot *s, char *buf, size_t len)
{
    nn_job_times t;
    char val[48] = "";
    nn_job_times_of(s, &t);
    if (t.val_s > 0)
        snprintf(val, sizeof val, ", validation %.2f s", t.val_s);
    if (s->has_rate)
        snprintf(buf, len, "%ld steps: training %.2f s (%.0f samples/s)%s", s->step, t.train_s, s->samples_per_s,
                 val);
    else
        snprintf(buf, len, "%ld steps: training %.2f s%s", s->step, t.train_s, val);
}

void nn_format_headline(const nn_snapshot *s, char *buf, size_t len)
{
    nn_job_times t;
    char clock[24], keras[48];
    nn_job_times_of(s, &t);
    nn_format_clock(t.elapsed_s, clock, sizeof clock);
    nn_format_keras(&t, keras, sizeof keras);
    switch (s->state) {
    case NN_JOB_DONE:
        snprintf(buf, len, "done in %s (%s)", clock, keras);
        break;
    case NN_JOB_CANCELLED:
    case NN_JOB_DIVERGED:
        snprintf(buf, len, "%s after %s (%s, %ld of %ld steps)", nn_job_state_name(s->state), clock, keras,
                 s->step, s->total_steps);
        break;
    case NN_JOB_FAILED:
        snprintf(buf, len, "failed after %s", clock);
        break;
    default:
        nn_format_elapsed_remaining(&t, clock, sizeof clock);
        snprintf(buf, len, "%s %s", nn_job_state_name(s->state), clock);
    }
}

/* ---- a race ----------------------------------------------------------------------------- */

double nn_shown_ratio(double slow_s, double fast_s, int decimals)
{
    double scale = pow(10.0, decimals);
    double slow = round(slow_s * scale) / scale, fast = round(fast_s * scale) / scale;
    return fast > 0 ? slow / fast : 0.0;
}

int nn_race_decimals(const nn_snapshot *a, const nn_snapshot *b)
{
    nn_job_times ta, tb;
    int d = 2;
    nn_job_times_of(a, &ta);
    nn_job_times_of(b, &tb);
    double fast = ta.total_s < tb.total_s ? ta.total_s : tb.total_s;
    while (d < 4 && fast > 0 && fast * pow(10.0, d) < 100.0)
        d++;                         /* 0.0123 s: 0.0123, three digits */
    return d;
}

double nn_race_ratio(const nn_snapshot *a, const nn_snapshot *b, int *faster)
{
    nn_job_times ta, tb;
    *faster = 0;
    if (a->state != NN_JOB_DONE || b->state != NN_JOB_DONE)
        return 0.0;
    nn_job_times_of(a, &ta);
    nn_job_times_of(b, &tb);
    if (!(ta.total_s > 0) || !(tb.total_s > 0))
        return 0.0;
    *faster = tb.total_s < ta.total_s;
    int d = nn_race_decimals(a, b);
    return *faster ? nn_shown_ratio(ta.total_s, tb.total_s, d) : nn_shown_ratio(tb.total_s, ta.total_s, d);
}

/* ---- the per-epoch history -------------------------------------------------------------- */

/* The loss points of epoch `epoch` from *i on: their weighted mean (each
 * point covers the steps since the one before in its epoch), the last
 * point's step and time; *i moves past them. Returns how many there were. */
static long epoch_points(const nn_loss_point *pts, long n, long *i, int epoch, nn_epoch_row *row)
{
    double sum = 0, steps = 0;
    long prev = 0, count = 0;
    for (; *i < n && pts[*i].epoch == epoch; (*i)++, count++) {
        const nn_loss_point *p = &pts[*i];
        double covers = (double)(p->step_in_epoch - prev);
        prev = p->step_in_epoch;
        sum += (double)p->loss * covers;
        steps += covers;
        row->step = p->step;
        row->time_s = p->time_s;
    }
    if (steps > 0) {
        row->has_train_loss = 1;
        row->train_loss = sum / steps;
    }
    return count;
}

int nn_epoch_history(const nn_loss_point *pts, long n_pts, const nn_epoch_result *eps, int n_eps,
                     nn_epoch_row *out, int max)
{
    long i = 0;
    int j = 0, n = 0;
    double before = 0.0;
    while (n < max && (i < n_pts || j < n_eps)) {
        int epoch = i < n_pts ? pts[i].epoch : eps[j].epoch;
        if (j < n_eps && eps[j].epoch < epoch)
            epoch = eps[j].epoch;
        nn_epoch_row *r = &out[n];
        memset(r, 0, sizeof *r);
        r->epoch = epoch;
        epoch_points(pts, n_pts, &i, epoch, r);
        for (; j < n_eps && eps[j].epoch == epoch; j++) {   /* one per epoch */
            r->has_val = 1;
            r->val_loss = eps[j].val_loss;
            r->has_accuracy = eps[j].has_accuracy;
            r->val_accuracy = eps[j].val_accuracy;
            r->step = eps[j].step;
            r->time_s = eps[j].time_s;
        }
        r->seconds = r->time_s - before;
        before = r->time_s;
        n++;
    }
    return n;
}

/* ---- a sweep ---------------------------------------------------------------------------- */

void nn_sweep_times(const nn_sweep *sw, double now, nn_job_times *t)
{
    long done = 0, total = 0;
    for (int d = 0; d < sw->n_devices; d++) {
        if (sw->predicted[d] || sw->external[d])
            continue;                /* a prediction, or the caller's measurement, runs no job */
        for (int i = 0; i < sw->n_batches; i++) {
            int st = sw->pt[d][i].state;
            total++;
            done += st == NN_POINT_DONE || st == NN_POINT_FAILED;
        }
    }
    double elapsed = !sw->started ? 0.0 : (sw->finished ? sw->t_end : now) - sw->t_start;
    nn_job_times_at(elapsed, done, total, sw->finished, t);
}
