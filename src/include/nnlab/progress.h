/* src/include/nnlab/progress.h - a job's times as a class reads them, worked
 * out and written once for every front end: elapsed and remaining as tqdm
 * prints them (`00:18<00:12`), the time per step as Keras does (`52s
 * 28ms/step`), a race's ratio from the very times shown, the per-epoch
 * history (epoch, training loss, validation, seconds) and a sweep's times.
 * The CLI's progress lines and JSON and the lab's bars, summary and exports
 * all read these: no front end divides a time by a step count itself. */
#ifndef NNLAB_PROGRESS_H
#define NNLAB_PROGRESS_H

#include <stddef.h>

#include "nnlab/engine.h"
#include "nnlab/sweep.h"

/* ---- a job's times -------------------------------------------------------------------- */

typedef struct nn_job_times {
    long steps, total_steps;     /* done, and planned */
    double elapsed_s;            /* the job's time so far (the snapshot's elapsed_s: pauses and
                                    preparation left out, validation in) */
    double val_s;                /* the validations' part of it (0: none ran) */
    double train_s;              /* the rest: the training steps' time */
    /* The one rule of the headlines: a per-step time and samples/s are the
     * training steps' alone, the statistic of the phase bar (the mean over
     * the timed steps); validation is shown apart, labelled. */
    int has_per_step;            /* a step has run: */
    double per_step_s;           /*   the training step: the snapshot's mean over the timed
                                    steps (us_per_step) when it has one, else train_s / steps */
    int has_remaining;           /* running with a step done, or ended: */
    double remaining_s;          /*   the steps left at the job's pace so far, elapsed / steps
                                    (the validations to come are part of it; 0 once ended) */
    double total_s;              /*   elapsed + remaining: the job's whole time */
    int ended;
} nn_job_times;

/* The times at `elapsed_s` seconds after `steps` of `total_steps` steps, no
 * validation among them; an ended job has none remaining (total = elapsed,
 * however many steps ran). */
void nn_job_times_at(double elapsed_s, long steps, long total_steps, int ended, nn_job_times *t);
/* The times of a snapshot; a paused job has no remaining time (it waits).
 * A calibration's remaining time is its elapsed time at the pace of its
 * fraction done (it has no steps). */
void nn_job_times_of(const nn_snapshot *s, nn_job_times *t);
/* The times of the job when it published epoch result e (its time_s, step). */
void nn_job_times_of_epoch(const nn_epoch_result *e, long total_steps, nn_job_times *t);

/* tqdm's interval: "00:18", "12:03", "1:02:03"; "?" for a negative or
 * non-finite time (tqdm's unknown remaining). */
void nn_format_clock(double s, char *buf, size_t len);
/* tqdm's "elapsed<remaining": "00:18<00:12"; "00:18<?" with no rate yet. */
void nn_format_elapsed_remaining(const nn_job_times *t, char *buf, size_t len);
/* Keras's time per step: "28ms/step", "450us/step", "2s/step"; "-/step"
 * when none. */
void nn_format_per_step(double s, char *buf, size_t len);
/* Keras's line end: "52s 28ms/step" (whole seconds of training, then per
 * step); with validation, its time apart: "48s 28ms/step, validation 4s". */
void nn_format_keras(const nn_job_times *t, char *buf, size_t len);
/* A finished job's headline, its whole time first: "done in 00:52 (52s
 * 28ms/step)", "done in 00:12 (11s 604us/step, validation 1s)";
 * "cancelled after 00:07 (...)", "diverged after ...", "failed". */
void nn_format_headline(const nn_snapshot *s, char *buf, size_t len);
/* The figures a summary line gives after the headline: "500 steps: training
 * 0.11 s (18991 samples/s), validation 0.18 s" (validation only when one
 * ran); samples/s is the snapshot's, of the timed training steps. */
void nn_format_steps_line(const nn_snapshot *s, char *buf, size_t len);

/* ---- a race ----------------------------------------------------------------------------- */

/* How many times longer the slower of two ended jobs took than the faster,
 * from the very times a front end shows (nn_job_times_of: the whole time of
 * each, rounded to nn_race_decimals), so that the ratio beside "17.68 s /
 * 1.87 s" is 9.45, what a reader gets dividing them; *faster gets 0 or 1.
 * 0 when either did not finish its steps (done) or a time is 0: a ratio of
 * a cut-short job would compare unequal work. */
double nn_race_ratio(const nn_snapshot *a, const nn_snapshot *b, int *faster);
/* The decimals a race shows both its times with: 2, more when the faster
 * took under a second (three significant digits, at most 4 decimals). */
int nn_race_decimals(const nn_snapshot *a, const nn_snapshot *b);
/* slow / fast, each rounded to `decimals` first: 0 when fast rounds to 0. */
double nn_shown_ratio(double slow_s, double fast_s, int decimals);

/* ---- the per-epoch history -------------------------------------------------------------- */

typedef struct nn_epoch_row {
    int epoch;
    long step;                   /* global step at the epoch's end */
    int has_train_loss;
    double train_loss;           /* the mean training loss of the epoch's steps (the loss
                                    points weighted by the steps each covers) */
    int has_val;                 /* validated at the epoch's end: */
    double val_loss;
    int has_accuracy;
    double val_accuracy;         /* 0..1 */
    double time_s;               /* training time at the epoch's end (its validation in) */
    double seconds;              /* the epoch's own time */
} nn_epoch_row;

/* One row per epoch that has loss points or a validation, in order, from a
 * job's loss points and epoch results; returns how many (at most max).
 * An epoch without validation (bench, --no-validation) ends at its last
 * loss point. */
int nn_epoch_history(const nn_loss_point *pts, long n_pts, const nn_epoch_result *eps, int n_eps,
                     nn_epoch_row *out, int max);

/* ---- a sweep ---------------------------------------------------------------------------- */

/* A sweep's times at `now` (nn_now()): elapsed since it started, remaining
 * at the mean time of the points run so far (none before the first ends),
 * steps counting points (jobs) done of those to run. */
void nn_sweep_times(const nn_sweep *sw, double now, nn_job_times *t);

#endif
