/* src/analysis/report/export_svg.c - a run's curves or a sweep as an SVG for a
 * slide; see nnlab/export_svg.h. Everything is drawn from the numbers the
 * other writers export (the loss points, the epoch results, the sweep's
 * rates and its crossover rule), in a fixed 1280x720 frame. */
#include "nnlab/export_svg.h"
#include "nnlab/race.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "util.h"

#define TITLE_PX 34
#define LABEL_PX 28
#define TICK_PX 22
#define LINE_PX 4
#define SVG_MAX_TICKS 12

/* Colour-blind-safe (Okabe and Ito), dark enough on a projector's white. */
static const char *const colours[] = { "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9" };
#define N_COLOURS (int)(sizeof colours / sizeof colours[0])
#define PAST_COLOUR "#808080"

/* A plot's frame in pixels and the ranges its axes show. */
typedef struct svg_plot {
    double x0, y0, w, h;
    double xmin, xmax, ymin, ymax;
    int xlog, ylog;              /* base-2 batches, base-10 rates */
    int xwhole;                  /* x counts whole things (epochs): whole ticks */
} svg_plot;

/* ---- text and numbers ---------------------------------------------------------------------- */

/* s escaped for XML text or an attribute; control bytes left out. */
static void svg_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '&')
            fputs("&amp;", f);
        else if (c == '<')
            fputs("&lt;", f);
        else if (c == '>')
            fputs("&gt;", f);
        else if (c == '"')
            fputs("&quot;", f);
        else if (c >= 0x20 && c != 0x7f)
            fputc(c, f);
    }
}

static void svg_text(FILE *f, double x, double y, int px, const char *anchor, const char *extra, const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"%s\"%s>", x, y, px, anchor, extra);
    svg_escaped(f, s);
    fputs("</text>\n", f);
}

static double axis_value(double v, int is_log)
{
    return is_log ? log(v) : v;
}

static double px_x(const svg_plot *p, double x)
{
    double lo = axis_value(p->xmin, p->xlog), hi = axis_value(p->xmax, p->xlog);
    return p->x0 + (axis_value(x, p->xlog) - lo) / (hi > lo ? hi - lo : 1) * p->w;
}

static double px_y(const svg_plot *p, double y)
{
    double lo = axis_value(p->ymin, p->ylog), hi = axis_value(p->ymax, p->ylog);
    return p->y0 + p->h - (axis_value(y, p->ylog) - lo) / (hi > lo ? hi - lo : 1) * p->h;
}

/* Linear ticks at 1, 2 or 5 times a power of ten, at most about six of
 * them; whole numbers only on an axis of counts (epochs). */
static int linear_ticks(double lo, double hi, int whole, double *t, int max)
{
    double raw = (hi - lo) / 5, mag = pow(10, floor(log10(raw > 0 ? raw : 1)));
    double step = raw / mag <= 1 ? mag : raw / mag <= 2 ? 2 * mag : raw / mag <= 5 ? 5 * mag : 10 * mag;
    if (whole && step < 1)
        step = 1;
    int n = 0;
    for (double v = ceil(lo / step) * step; v <= hi + step * 1e-9 && n < max; v += step)
        t[n++] = fabs(v) < step * 1e-9 ? 0 : v;
    return n;
}

/* Log ticks at each power of base in range (and 2 and 5 times a power of
 * ten when the range is under two decades). */
static int log_ticks(double lo, double hi, int base, double *t, int max)
{
    int n = 0;
    for (double v = pow(base, floor(log(lo) / log(base))); v <= hi * 1.0001 && n < max; v *= base) {
        if (v >= lo * 0.9999)
            t[n++] = v;
        if (base == 10 && hi / lo < 100)
            for (int m = 2; m <= 5 && n < max; m += 3)
                if (v * m >= lo && v * m <= hi)
                    t[n++] = v * m;
    }
    return n;
}

static void tick_label(double v, char *buf, size_t len)
{
    if (fabs(v) >= 1e6)
        snprintf(buf, len, "%gM", v / 1e6);
    else if (fabs(v) >= 1e4)
        snprintf(buf, len, "%gk", v / 1000);
    else
        snprintf(buf, len, "%g", v);
}

/* ---- frames, axes, curves -------------------------------------------------------------------- */

static void svg_open(FILE *f, const char *title)
{
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\" fill=\"#000000\">\n<title>",
            NN_SVG_WIDTH, NN_SVG_HEIGHT, NN_SVG_WIDTH, NN_SVG_HEIGHT);
    svg_escaped(f, title);
    fprintf(f, "</title>\n<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", NN_SVG_WIDTH, NN_SVG_HEIGHT);
    svg_text(f, NN_SVG_WIDTH / 2.0, 48, TITLE_PX, "middle", " font-weight=\"bold\" class=\"title\"", title);
}

/* The frame, the ticks with their labels and both axes' labels. */
static void svg_axes(FILE *f, const svg_plot *p, const char *xlabel, const char *ylabel)
{
    double t[SVG_MAX_TICKS];
    char lab[32];
    int n = p->xlog ? log_ticks(p->xmin, p->xmax, 2, t, SVG_MAX_TICKS)
                    : linear_ticks(p->xmin, p->xmax, p->xwhole, t, SVG_MAX_TICKS);
    fprintf(f, "<g class=\"axes\" stroke=\"#000000\" stroke-width=\"2\" fill=\"none\">\n"
               "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n</g>\n", p->x0, p->y0, p->w, p->h);
    for (int i = 0; i < n; i++) {
        double x = px_x(p, t[i]);
        tick_label(t[i], lab, sizeof lab);
        fprintf(f, "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\" "
                   "stroke-width=\"2\"/>\n", x, p->y0 + p->h, x, p->y0 + p->h + 8);
        svg_text(f, x, p->y0 + p->h + 34, TICK_PX, "middle", " class=\"tick-label\"", lab);
    }
    n = p->ylog ? log_ticks(p->ymin, p->ymax, 10, t, SVG_MAX_TICKS)
                : linear_ticks(p->ymin, p->ymax, 0, t, SVG_MAX_TICKS);
    for (int i = 0; i < n; i++) {
        double y = px_y(p, t[i]);
        tick_label(t[i], lab, sizeof lab);
        fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d0d0d0\" "
                   "stroke-width=\"1\"/>\n", p->x0, y, p->x0 + p->w, y);
        svg_text(f, p->x0 - 10, y + 8, TICK_PX, "end", " class=\"tick-label\"", lab);
    }
    svg_text(f, p->x0 + p->w / 2, p->y0 + p->h + 72, LABEL_PX, "middle", " class=\"axis-label\"", xlabel);
    char rot[96];
    snprintf(rot, sizeof rot, " class=\"axis-label\" transform=\"rotate(-90 %.1f %.1f)\"", p->x0 - 78,
             p->y0 + p->h / 2);
    svg_text(f, p->x0 - 78, p->y0 + p->h / 2, LABEL_PX, "middle", rot, ylabel);
}

typedef struct svg_style {
    const char *colour;
    int dashed, dimmed;
    const char *label;
} svg_style;

/* One polyline per finite stretch of (xs, ys). */
static void svg_curve(FILE *f, const svg_plot *p, const double *xs, const double *ys, int n, const svg_style *s)
{
    int open = 0;
    for (int i = 0; i < n; i++) {
        int ok = isfinite(xs[i]) && isfinite(ys[i]) && (!p->xlog || xs[i] > 0) && (!p->ylog || ys[i] > 0);
        if (ok && !open) {
            fprintf(f, "<polyline class=\"%s\" data-label=\"", s->dimmed ? "curve past" : "curve");
            svg_escaped(f, s->label);
            fprintf(f, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"%d\" stroke-linejoin=\"round\"%s%s "
                       "points=\"", s->colour, s->dimmed ? LINE_PX - 1 : LINE_PX,
                    s->dashed ? " stroke-dasharray=\"14 8\"" : "", s->dimmed ? " stroke-opacity=\"0.45\"" : "");
            open = 1;
        } else if (!ok && open) {
            fputs("\"/>\n", f);
            open = 0;
        }
        if (ok)
            fprintf(f, "%.1f,%.1f ", px_x(p, xs[i]), px_y(p, ys[i]));
    }
    if (open)
        fputs("\"/>\n", f);
}

/* Legend entry k of a row-major grid under the plots. */
static void svg_legend(FILE *f, int k, int columns, double top, const svg_style *s)
{
    double colw = (NN_SVG_WIDTH - 160.0) / columns, x = 120 + (k % columns) * colw, y = top + (k / columns) * 34;
    fprintf(f, "<line class=\"legend-swatch\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
               "stroke-width=\"%d\"%s%s/>\n", x, y - 8, x + 44, y - 8, s->colour, LINE_PX,
            s->dashed ? " stroke-dasharray=\"14 8\"" : "", s->dimmed ? " stroke-opacity=\"0.45\"" : "");
    svg_text(f, x + 54, y, TICK_PX, "start", " class=\"legend\"", s->label);
}

static void range_add(double v, double *lo, double *hi)
{
    if (!isfinite(v))
        return;
    if (v < *lo)
        *lo = v;
    if (v > *hi)
        *hi = v;
}

/* A range with room: a lone value widened, a linear one from 0 when near. */
static void range_finish(double *lo, double *hi, int is_log)
{
    if (*lo > *hi)
        *lo = 0, *hi = 1;
    if (is_log) {
        *lo /= 1.25;
        *hi *= 1.25;
        return;
    }
    if (*hi - *lo < 1e-12)
        *hi = *lo + (*lo ? fabs(*lo) * 0.1 : 1);
    if (*lo > 0 && *lo < (*hi - *lo) * 0.5)
        *lo = 0;
}

/* ---- a run -------------------------------------------------------------------------------------- */

typedef struct run_series {
    double *lx, *ly;             /* loss against the step */
    int nl;
    double *ax, *ay;             /* accuracy (or validation loss) against the epoch */
    int na;
} run_series;

static int series_of(const nn_loss_point *pts, long n_pts, const nn_epoch_result *eps, int n_eps, int accuracy,
                     run_series *s)
{
    s->nl = n_pts > 0 ? (int)n_pts : 0;
    s->na = n_eps > 0 ? n_eps : 0;
    s->lx = malloc(sizeof(double) * (size_t)(2 * s->nl + 1));
    s->ax = malloc(sizeof(double) * (size_t)(2 * s->na + 1));
    if (!s->lx || !s->ax)
        return -1;
    s->ly = s->lx + s->nl;
    s->ay = s->ax + s->na;
    for (int i = 0; i < s->nl; i++)
        s->lx[i] = (double)pts[i].step, s->ly[i] = pts[i].loss;
    for (int i = 0; i < s->na; i++)
        s->ax[i] = eps[i].epoch, s->ay[i] = accuracy ? 100.0 * eps[i].val_accuracy : eps[i].val_loss;
    return 0;
}

static void series_free(run_series *s)
{
    free(s->lx);
    free(s->ax);
}

/* A job's name on the slide: its device, and beside several jobs its way
 * too ("gpu eager", "gpu graph", "cpu nnlab"; nnlab/race.h), as the lab
 * labels them. */
static void job_label(const nn_export_run *run, int k, char *buf, size_t len)
{
    const nn_snapshot *s = run->job[k].snap;
    if (!s)
        snprintf(buf, len, "?");
    else if (run->n_jobs > 1)
        snprintf(buf, len, "%s %s", s->device, nn_snapshot_way_word(s));
    else
        snprintf(buf, len, "%s", s->device);
}

/* "lenet-cifar10: cpu nnlab vs gpu graph, batch 64, lr 0.01" */
static void run_title(const nn_export_run *run, double lr, char *buf, size_t len)
{
    int at = snprintf(buf, len, "%s: ", run->preset);
    for (int k = 0, first = 1; k < run->n_jobs && at > 0 && (size_t)at < len; k++)
        if (run->job[k].snap) {
            char label[48];
            job_label(run, k, label, sizeof label);
            at += snprintf(buf + at, len - (size_t)at, "%s%s", first ? "" : " vs ", label);
            first = 0;
        }
    if (run->ways && at > 0 && (size_t)at < len)
        at += snprintf(buf + at, len - (size_t)at, ", a race of ways");
    const nn_snapshot *s = run->job[0].snap ? run->job[0].snap : run->job[1].snap;
    if (s && at > 0 && (size_t)at < len)
        at += snprintf(buf + at, len - (size_t)at, ", batch %d", s->batch);
    if (lr > 0 && at > 0 && (size_t)at < len)
        snprintf(buf + at, len - (size_t)at, ", lr %g", lr);
}

static int run_has_accuracy(const nn_export_run *run)
{
    for (int k = 0; k < run->n_jobs; k++)
        for (int i = 0; run->job[k].snap && i < run->job[k].n_eps; i++)
            if (run->job[k].eps[i].has_accuracy)
                return 1;
    return 0;
}

/* The ranges of every series, the past ones too. */
static void run_ranges(const run_series *s, int n, svg_plot *loss, svg_plot *acc)
{
    loss->xmin = acc->xmin = loss->ymin = acc->ymin = INFINITY;
    loss->xmax = acc->xmax = loss->ymax = acc->ymax = -INFINITY;
    range_add(0, &loss->xmin, &loss->xmax);
    for (int k = 0; k < n; k++) {
        for (int i = 0; i < s[k].nl; i++)
            range_add(s[k].lx[i], &loss->xmin, &loss->xmax), range_add(s[k].ly[i], &loss->ymin, &loss->ymax);
        for (int i = 0; i < s[k].na; i++)
            range_add(s[k].ax[i], &acc->xmin, &acc->xmax), range_add(s[k].ay[i], &acc->ymin, &acc->ymax);
    }
    range_finish(&loss->xmin, &loss->xmax, 0);
    range_finish(&loss->ymin, &loss->ymax, 0);
    range_add(0, &acc->xmin, &acc->xmax);
    range_finish(&acc->xmin, &acc->xmax, 0);
    range_finish(&acc->ymin, &acc->ymax, 0);
}

/* ---- a race of ways: each lane's time for the job's steps ---------------------------------------- */

#define RACE_PX 22
#define RACE_SOURCE_PX 18

/* The two verdicts, the framework pair's first, at the panel's top. */
static void race_verdicts(FILE *f, const svg_plot *p, const nn_race_ways *w)
{
    char v[96], line[160];
    nn_race_verdict_short(w, NN_LANE_FW_CPU, NN_LANE_FW_GPU, v, sizeof v);
    snprintf(line, sizeof line, "framework way: %s", v);
    svg_text(f, p->x0, p->y0 + 24, RACE_PX, "start", " font-weight=\"bold\" class=\"verdict\"", line);
    nn_race_verdict_short(w, NN_LANE_NNLAB_CPU, NN_LANE_NNLAB_GPU, v, sizeof v);
    snprintf(line, sizeof line, "nnlab's own code: %s", v);
    svg_text(f, p->x0, p->y0 + 52, RACE_PX, "start", " class=\"verdict\"", line);
}

/* Lane k's row: its name, step and time, its source, and a bar as long as
 * its time on the panel's log axis (dashed: predicted). */
static void race_lane(FILE *f, const svg_plot *p, const nn_race_lane *l, long steps, int k, double top)
{
    char line[96], step[32];
    double y = top + k * 90.0, t = (double)steps * l->step_us * 1e-6;
    nn_race_step_text(l->step_us, step, sizeof step);
    snprintf(line, sizeof line, "%s%s  %s, %.3g s", l->label, l->measured ? "" : "*", step, t);
    svg_text(f, p->x0, y + 24, RACE_PX, "start", " class=\"lane\"", line);
    svg_text(f, p->x0, y + 48, RACE_SOURCE_PX, "start", " class=\"lane-source\"", l->source);
    fprintf(f, "<rect class=\"lane-bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"18\" fill=\"%s\"%s/>\n",
            p->x0, y + 58, fmax(px_x(p, t) - p->x0, 2.0), colours[k % N_COLOURS],
            l->measured ? "" : " fill-opacity=\"0.45\" stroke=\"#000000\" stroke-dasharray=\"6 4\"");
}

/* The right panel of a race of ways: the verdicts, then every lane priced
 * or measured, its time for the job's steps on a log axis of seconds. */
static void race_draw(FILE *f, const nn_race_ways *w, long steps)
{
    svg_plot p = { 790, 90, 450, 420, INFINITY, -INFINITY, 0, 1, 1, 0, 0 };
    double t[SVG_MAX_TICKS];
    char lab[32], xlabel[64];
    for (int k = 0; k < NN_LANES; k++)
        if (w->lane[k].present && steps > 0)
            range_add((double)steps * w->lane[k].step_us * 1e-6, &p.xmin, &p.xmax);
    if (!(p.xmax > 0))
        return;
    p.xmin = pow(10, floor(log10(p.xmin / 2)));   /* whole decades: every bar starts inside */
    p.xmax = pow(10, ceil(log10(p.xmax * 1.2)));
    race_verdicts(f, &p, w);
    for (int k = 0, row = 0; k < NN_LANES; k++)
        if (w->lane[k].present)
            race_lane(f, &p, &w->lane[k], steps, row++, p.y0 + 60);
    int n = log_ticks(p.xmin, p.xmax, 10, t, SVG_MAX_TICKS);
    for (int i = 0; i < n; i++) {
        tick_label(t[i], lab, sizeof lab);
        svg_text(f, px_x(&p, t[i]), p.y0 + p.h + 34, TICK_PX, "middle", " class=\"tick-label\"", lab);
    }
    fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\" "
               "stroke-width=\"2\"/>\n", p.x0, p.y0 + p.h, p.x0 + p.w, p.y0 + p.h);
    snprintf(xlabel, sizeof xlabel, "seconds for %ld steps (log)", steps);
    svg_text(f, p.x0 + p.w / 2, p.y0 + p.h + 72, LABEL_PX, "middle", " class=\"axis-label\"", xlabel);
}

static void run_draw(FILE *f, const nn_export_run *run, const nn_svg_past *past, int n_past, run_series *s,
                     int accuracy)
{
    svg_plot loss = { 150, 90, 450, 420, 0, 0, 0, 0, 0, 0, 0 }, acc = { 790, 90, 450, 420, 0, 0, 0, 0, 0, 0, 1 };
    svg_style st[NN_SVG_MAX_PAST + 2];
    int n = 0, legend = 0;
    run_ranges(s, n_past + run->n_jobs, &loss, &acc);
    if (accuracy)
        acc.ymin = 0, acc.ymax = acc.ymax > 100 ? acc.ymax : 100;
    svg_axes(f, &loss, "training step", "training loss (mean per sample)");
    if (run->ways)                   /* a race of ways: its lanes in the validation's place */
        race_draw(f, run->ways, run->ways_steps);
    else
        svg_axes(f, &acc, "epoch", accuracy ? "validation accuracy (%)" : "validation loss (mean per sample)");
    for (int k = 0; k < n_past; k++)
        st[n++] = (svg_style){ PAST_COLOUR, 1, 1, past[k].label };
    char labels[NN_EXPORT_MAX_JOBS][48];
    for (int k = 0; k < run->n_jobs; k++) {
        job_label(run, k, labels[k], sizeof labels[k]);
        st[n++] = (svg_style){ colours[k % N_COLOURS], 0, 0, labels[k] };
    }
    for (int k = 0; k < n; k++) {
        svg_curve(f, &loss, s[k].lx, s[k].ly, s[k].nl, &st[k]);
        if (!run->ways)
            svg_curve(f, &acc, s[k].ax, s[k].ay, s[k].na, &st[k]);
    }
    for (int k = n_past; k < n; k++)         /* the current run first, then the past */
        svg_legend(f, legend++, 3, 630, &st[k]);
    for (int k = 0; k < n_past && legend < 6; k++)
        svg_legend(f, legend++, 3, 630, &st[k]);
}

int nn_export_run_svg(FILE *f, const nn_export_run *run, double lr, const nn_svg_past *past, int n_past)
{
    run_series s[NN_SVG_MAX_PAST + 2];
    char title[NN_TEXT_LEN];
    int accuracy = run_has_accuracy(run), n = 0, rc = 0;
    n_past = n_past < NN_SVG_MAX_PAST ? n_past : NN_SVG_MAX_PAST;
    memset(s, 0, sizeof s);
    for (int k = 0; k < n_past && rc == 0; k++, n++)
        rc = series_of(past[k].pts, past[k].n_pts, past[k].eps, past[k].n_eps, accuracy, &s[n]);
    for (int k = 0; k < run->n_jobs && rc == 0; k++, n++) {
        const nn_export_job *j = &run->job[k];
        rc = series_of(j->snap ? j->pts : NULL, j->snap ? j->n_pts : 0, j->eps, j->snap ? j->n_eps : 0, accuracy,
                       &s[n]);
    }
    if (rc == 0) {
        run_title(run, lr, title, sizeof title);
        svg_open(f, title);
        run_draw(f, run, past, n_past, s, accuracy);
        fputs("</svg>\n", f);
    }
    for (int k = 0; k < n; k++)
        series_free(&s[k]);
    return rc != 0 || ferror(f) ? -1 : 0;
}

/* ---- a sweep ----------------------------------------------------------------------------------- */

static void sweep_rates(const nn_sweep *sw, int d, double *xs, double *ys)
{
    for (int i = 0; i < sw->n_batches; i++) {
        const nn_sweep_point *p = &sw->pt[d][i];
        xs[i] = sw->batch[i];
        ys[i] = p->state == NN_POINT_DONE || p->predicted ? p->rate : NAN;
    }
}

/* A ring on the challenger's point where it overtakes the first device. */
static void sweep_crossover(FILE *f, const svg_plot *p, const nn_sweep *sw, int d, const char *colour, int row)
{
    int i = nn_sweep_crossover(sw, 0, d);
    char text[96];
    if (i < 0 || !isfinite(sw->pt[d][i].rate))
        return;
    double x = px_x(p, sw->batch[i]), y = px_y(p, sw->pt[d][i].rate);
    fprintf(f, "<circle class=\"crossover\" data-batch=\"%d\" cx=\"%.1f\" cy=\"%.1f\" r=\"13\" fill=\"none\" "
               "stroke=\"%s\" stroke-width=\"%d\"/>\n", sw->batch[i], x, y, colour, LINE_PX);
    snprintf(text, sizeof text, "%s%s%s overtakes %s at batch %d", sw->device[d], sw->predicted[d] ? " " : "",
             sw->predicted[d] ? nn_gpu_way_key((nn_gpu_way)sw->way[d]) : "", sw->device[0], sw->batch[i]);
    svg_text(f, x + 18, y - 18 - 26 * row, TICK_PX, "start", " class=\"crossover-label\" font-weight=\"bold\"", text);
}

static void sweep_draw(FILE *f, const nn_sweep *sw)
{
    svg_plot p = { 170, 90, 1040, 390, 0, 0, 0, 0, 1, 1, 0 };
    double xs[NN_SWEEP_MAX_BATCHES], ys[NN_SWEEP_MAX_BATCHES];
    char labels[NN_SWEEP_MAX_DEVICES][NN_TEXT_LEN];
    p.xmin = p.ymin = INFINITY;
    p.xmax = p.ymax = -INFINITY;
    for (int d = 0; d < sw->n_devices; d++) {
        sweep_rates(sw, d, xs, ys);
        for (int i = 0; i < sw->n_batches; i++)
            if (isfinite(ys[i]) && ys[i] > 0)
                range_add(xs[i], &p.xmin, &p.xmax), range_add(ys[i], &p.ymin, &p.ymax);
    }
    if (p.xmin > p.xmax)
        p.xmin = 1, p.xmax = 2, p.ymin = 1, p.ymax = 10;
    range_finish(&p.xmin, &p.xmax, 1);
    range_finish(&p.ymin, &p.ymax, 1);
    svg_axes(f, &p, "batch size (samples per step, log2)", "samples/s (log)");
    for (int d = 0, crossings = 0; d < sw->n_devices; d++) {
        svg_style st = { colours[d % N_COLOURS], sw->predicted[d], 0, labels[d] };
        nn_sweep_device_label(sw, d, labels[d], sizeof labels[d]);
        sweep_rates(sw, d, xs, ys);
        svg_curve(f, &p, xs, ys, sw->n_batches, &st);
        svg_legend(f, d, 2, 610, &st);
        if (d > 0 && nn_sweep_crossover(sw, 0, d) >= 0)
            sweep_crossover(f, &p, sw, d, st.colour, crossings++);
    }
}

int nn_export_sweep_svg(FILE *f, const nn_sweep *sw)
{
    char title[NN_TEXT_LEN];
    int at = snprintf(title, sizeof title, "%s: samples/s by batch, ", sw->base.preset.name);
    for (int d = 0; d < sw->n_devices && at > 0 && (size_t)at < sizeof title; d++)
        if (d == 0 || strcmp(sw->device[d], sw->device[d - 1]) != 0)   /* a predicted GPU's ways: once */
            at += snprintf(title + at, sizeof title - (size_t)at, "%s%s%s", d ? " vs " : "", sw->device[d],
                           sw->predicted[d] && sw->has_profile ? " (predicted)" : "");
    if (sw->n_batches > 0 && at > 0 && (size_t)at < sizeof title)
        snprintf(title + at, sizeof title - (size_t)at, ", batch %d-%d", sw->batch[0], sw->batch[sw->n_batches - 1]);
    svg_open(f, title);
    sweep_draw(f, sw);
    fputs("</svg>\n", f);
    return ferror(f) ? -1 : 0;
}

/* ---- the file ---------------------------------------------------------------------------------- */

typedef struct svg_ctx {
    const nn_export_run *run;
    double lr;
    const nn_svg_past *past;
    int n_past;
    const nn_sweep *sw;
} svg_ctx;

static int fill_svg(FILE *f, const void *p)
{
    const svg_ctx *c = p;
    return c->run ? nn_export_run_svg(f, c->run, c->lr, c->past, c->n_past) : nn_export_sweep_svg(f, c->sw);
}

int nn_export_svg_file(const char *path, const nn_export_run *run, double lr, const nn_svg_past *past, int n_past,
                       const nn_sweep *sw, char *err, size_t err_len)
{
    svg_ctx c = { run, lr, past, n_past, sw };
    if (!run && !sw)
        return nn_errorf(err, err_len, "%s: nothing to write", path);
    return nn_write_atomic(path, fill_svg, &c, err, err_len);
}
