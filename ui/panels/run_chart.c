/* ui/panels/run_chart.c - the run screen's charts: the training loss (smoothed with
 * `s`, and said so) and the validation loss per epoch, with a dotted line at
 * each epoch's end; the validation accuracy beside them for a classifier.
 * One job, or two one after the other, are drawn by step; two side by side
 * by seconds of training (the points' time_s), so that a race's curves
 * separate as the jobs did. Every figure comes from the engine's points and
 * the library's rules (nnlab/progress.h); the data is ui/text/run.c's copy. */
#include "draw.h"
#include "lab_state.h"
#include "panels/chart_view.h"
#include "run_view.h"
#include "race_view.h"
#include "nnlab/divergence.h"
#include "screens/dashboard.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnlab/progress.h"

#define MAX_MARKS 128                /* epoch markers drawn, all jobs together */

/* One job's curves as the charts want them. */
typedef struct curves {
    double *tx, *ty;                 /* training loss points */
    double *vx, *vy, *ay;            /* per epoch: validation loss, accuracy (%) */
    int n_acc;
} curves;

static double point_x(int by_time, long step, double time_s)
{
    return by_time ? time_s : (double)step;
}

static int alloc_curves(const ui_run_job *j, curves *c)
{
    c->tx = malloc(((size_t)j->n_pts + 1) * sizeof(double));
    c->ty = malloc(((size_t)j->n_pts + 1) * sizeof(double));
    c->vx = malloc(((size_t)j->n_eps + 1) * sizeof(double));
    c->vy = malloc(((size_t)j->n_eps + 1) * sizeof(double));
    c->ay = malloc(((size_t)j->n_eps + 1) * sizeof(double));
    return c->tx && c->ty && c->vx && c->vy && c->ay ? 0 : -1;
}

static int make_curves(const ui_run_job *j, int by_time, int smooth, curves *c, ui_axis *ay_loss, ui_axis *ay_acc)
{
    if (alloc_curves(j, c) != 0)
        return -1;
    for (long i = 0; i < j->n_pts; i++) {
        c->tx[i] = point_x(by_time, j->pts[i].step, j->pts[i].time_s);
        c->ty[i] = j->pts[i].loss;
    }
    if (smooth)
        ui_ema(c->ty, (int)j->n_pts, UI_SMOOTH_WEIGHT, c->ty);
    for (long i = 0; i < j->n_pts; i++)
        ui_axis_include(ay_loss, c->ty[i]);
    c->n_acc = 0;
    for (int i = 0; i < j->n_eps; i++) {
        c->vx[i] = point_x(by_time, j->eps[i].step, j->eps[i].time_s);
        c->vy[i] = j->eps[i].val_loss;
        ui_axis_include(ay_loss, c->vy[i]);
        if (j->eps[i].has_accuracy) {
            c->ay[i] = 100.0 * j->eps[i].val_accuracy;
            ui_axis_include(ay_acc, c->ay[i]);
            c->n_acc++;
        } else {
            c->ay[i] = NAN;
        }
    }
    return 0;
}

static void free_curves(curves *c)
{
    free(c->tx);
    free(c->ty);
    free(c->vx);
    free(c->vy);
    free(c->ay);
}

/* Where each epoch a job has finished ended (the history's rule: its
 * validation, else its last loss point); the last row is left out, as it
 * may be the epoch under way or the end of the run. */
static int epoch_marks(const ui_run_job *j, int by_time, double *out, int max)
{
    nn_epoch_row rows[MAX_MARKS];
    int n = nn_epoch_history(j->pts, j->n_pts, j->eps, j->n_eps, rows, MAX_MARKS), m = 0;
    for (int i = 0; i + 1 < n && m < max; i++)
        out[m++] = point_x(by_time, rows[i].step, rows[i].time_s);
    return m;
}

/* The x axis spans the whole run, so the curves grow rightwards: the steps
 * planned, or by seconds the longer job's whole time (elapsed + remaining). */
static void x_axis(const ui_run *r, int by_time, ui_axis *ax)
{
    *ax = (ui_axis){ 0, 1, 0 };
    for (int k = 0; k < r->n_jobs; k++) {
        nn_job_times t;
        nn_job_times_of(&r->j[k].snap, &t);
        double hi = by_time ? t.total_s : (double)r->j[k].snap.total_steps;
        if (hi > ax->hi)
            ax->hi = hi;
    }
}

/* A job whose loss became NaN or inf stopped there, or one whose loss is
 * blowing up (nnlab/divergence.h: the rule and the sentence the CLI prints
 * too): said across the top of the chart, which ends where the loss stopped
 * meaning anything. */
static void draw_divergence_banner(ui_lab *lab, ui_rect box)
{
    const ui_run *r = &lab->run;
    ui_rect in = ui_rect_inner(box);
    int y = in.y;
    for (int k = 0; k < r->n_jobs && y < in.y + in.h; k++) {
        const ui_run_job *j = &r->j[k];
        nn_divergence d;
        char text[NN_TEXT_LEN];
        if (!nn_divergence_of(&j->snap, j->pts, j->n_pts, &d))
            continue;
        /* the finding on one row, what to do on the next: neither is cut
         * where the chart is narrow (at 80x24 too) */
        nn_divergence_text(&d, text, sizeof text);
        char *advice = strstr(text, " - ");
        if (advice)
            *advice = '\0', advice += 3;
        mvhline(y, in.x, ' ', in.w);
        ui_putf(y++, in.x, in.w, ui_attr(lab, UI_ERROR) | A_REVERSE, "%s: %s", ui_race_label(r, k), text);
        if (advice && y < in.y + in.h) {
            mvhline(y, in.x, ' ', in.w);
            ui_put(y++, in.x, in.w, ui_attr(lab, UI_ERROR) | A_REVERSE, advice);
        }
    }
}

static void draw_accuracy(ui_lab *lab, ui_rect box, const ui_run *r, const curves *c, const ui_axis *ax,
                          ui_axis *ay, int by_time)
{
    ui_series s[UI_RUN_MAX_JOBS];
    int ns = 0;
    char names[UI_RUN_MAX_JOBS][32];
    ui_axis_finish(ay, 0);
    if (ay->lo < 0)
        ay->lo = 0;                  /* widened round a lone point: kept to what a share can be */
    if (ay->hi > 100)
        ay->hi = 100;
    for (int k = 0; k < r->n_jobs; k++) {
        if (!c[k].ay)
            continue;
        snprintf(names[k], sizeof names[k], "%s", ui_race_label(r, k));
        s[ns++] = (ui_series){ c[k].vx, c[k].ay, r->j[k].n_eps, 1, ui_race_role(k, 1), names[k], 0, 0 };
    }
    ui_chart_view_text(lab, box, "val accuracy %", by_time ? "seconds" : "step", ax, ay, s, ns, NULL, 0,
                       "after the first epoch");
}

/* The session's earlier runs, dimmed and labelled by their settings, when
 * `o` shows them (by step: a race's curves are by seconds). Their y values
 * widen the axis; the x axis stays the current run's. */
static int past_series(ui_lab *lab, ui_dashboard_state *ds, ui_axis *ay, ui_series *s, int max)
{
    double (*xs)[UI_OVERLAY_POINTS] = ds->past_x, (*ys)[UI_OVERLAY_POINTS] = ds->past_y;
    int n = 0;
    for (int i = 0; lab->past.shown && i < lab->past.n && n < max; i++, n++) {
        const ui_past_run *p = &lab->past.run[i];
        for (long k = 0; k < p->n_pts; k++) {
            xs[i][k] = (double)p->pts[k].step;
            ys[i][k] = p->pts[k].loss;
            ui_axis_include(ay, ys[i][k]);
        }
        s[n] = (ui_series){ xs[i], ys[i], (int)p->n_pts, 1, UI_DIM,
                            ui_overlay_label(&lab->past, i, lab->run.cfg.preset.name), 0, 0 };
    }
    return n;
}

static void loss_title(const ui_lab *lab, char *buf, size_t len)
{
    snprintf(buf, len, "loss%s", lab->log_scale ? " (log)" : "");
}

void ui_run_charts_draw(ui_lab *lab, ui_dashboard_state *ds)
{
    ui_run *r = &lab->run;
    int by_time = r->n_jobs >= 2, ns = 0, nv = 0;
    ui_series s[2 * UI_RUN_MAX_JOBS + UI_OVERLAY_MAX];
    curves c[UI_RUN_MAX_JOBS] = { { 0 } };
    char names[2 * UI_RUN_MAX_JOBS][32], title[96], x_title[64];
    double marks[MAX_MARKS];
    ui_axis ax, ay, ay_acc;
    ui_rect loss, acc;
    ui_split_charts(lab->layout.chart, &loss, &acc);
    if (nn_preset_classes(&r->cfg.preset) <= 0)
        loss = lab->layout.chart, acc = (ui_rect){ 0, 0, 0, 0 };   /* no accuracy to show */
    ui_axis_begin(&ay, lab->log_scale ? 10 : 0);
    ui_axis_begin(&ay_acc, 0);
    x_axis(r, by_time, &ax);
    for (int k = 0; k < r->n_jobs; k++) {
        const ui_run_job *j = &r->j[k];
        if (make_curves(j, by_time, ds->smooth, &c[k], &ay, &ay_acc) != 0) {
            free_curves(&c[k]);          /* out of memory: this job's curves are left out */
            c[k] = (curves){ 0 };
            continue;
        }
        snprintf(names[2 * k], sizeof names[0], "%s", ui_race_label(r, k));
        snprintf(names[2 * k + 1], sizeof names[0], "%s val", ui_race_label(r, k));
        s[ns++] = (ui_series){ c[k].tx, c[k].ty, (int)j->n_pts, 1, ui_race_role(k, 0), names[2 * k], 0, 0 };
        nv += epoch_marks(j, by_time, marks + nv, MAX_MARKS - nv);
    }
    /* the validation points after every training curve: a legend cut short
     * by a narrow chart still names each job's curve */
    for (int k = 0; k < r->n_jobs; k++)
        if (c[k].vx)
            s[ns++] = (ui_series){ c[k].vx, c[k].vy, r->j[k].n_eps, 1, ui_race_role(k, 1), names[2 * k + 1], 0, 0 };
    if (!by_time)
        ns += past_series(lab, ds, &ay, s + ns, 2 * UI_RUN_MAX_JOBS + UI_OVERLAY_MAX - ns);
    ui_axis_finish(&ay, 0);
    loss_title(lab, title, sizeof title);
    /* the smoothing on the bottom edge: the top one keeps its room for the legend's names */
    snprintf(x_title, sizeof x_title, "%s%s", by_time ? "seconds of training" : "step",
             ds->smooth ? ", smoothed (EMA 0.6)" : "");
    ui_chart_view(lab, loss, title, x_title, &ax, &ay, s, ns, marks, nv);
    if (acc.w > 0)
        draw_accuracy(lab, acc, r, c, &ax, &ay_acc, by_time);
    for (int k = 0; k < UI_RUN_MAX_JOBS; k++)
        free_curves(&c[k]);
    draw_divergence_banner(lab, loss);
}
