/* src/analysis/report/export_svg.c - a run's curves or a sweep as an SVG for a
 * slide; see nnlab/export_svg.h. Everything is drawn from the numbers the
 * other writers export (the loss points, the epoch results, the sweep's
 * rates and its matching pairs), in a fixed 1280x720 frame laid out by
 * svg_draw.c. */
#include "nnlab/export_svg.h"
#include "nnlab/palette.h"
#include "nnlab/race.h"
#include "svg_draw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "util.h"

#define PAST_COLOUR "#808080"
#define PAST_DASH "14 8"

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

/* A job's name on the slide: its device, and beside several jobs the name
 * the ratios give it ("gpu eager", "cpu 1 rank"; nn_export_job_name), as the
 * lab labels them. */
static void job_label(const nn_export_run *run, int k, char *buf, size_t len)
{
    const nn_snapshot *s = run->job[k].snap;
    if (!s)
        snprintf(buf, len, "?");
    else if (run->n_jobs > 1)
        nn_export_job_name(&run->job[k], buf, len);
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
    svg_range_add(0, &loss->xmin, &loss->xmax);
    for (int k = 0; k < n; k++) {
        for (int i = 0; i < s[k].nl; i++)
            svg_range_add(s[k].lx[i], &loss->xmin, &loss->xmax), svg_range_add(s[k].ly[i], &loss->ymin, &loss->ymax);
        for (int i = 0; i < s[k].na; i++)
            svg_range_add(s[k].ax[i], &acc->xmin, &acc->xmax), svg_range_add(s[k].ay[i], &acc->ymin, &acc->ymax);
    }
    svg_range_finish(&loss->xmin, &loss->xmax, 0);
    svg_range_finish(&loss->ymin, &loss->ymax, 0);
    svg_range_add(0, &acc->xmin, &acc->xmax);
    svg_range_finish(&acc->xmin, &acc->xmax, 0);
    svg_range_finish(&acc->ymin, &acc->ymax, 0);
}

/* ---- a race of ways: each lane's time for the job's steps ---------------------------------------- */

#define RACE_PX 22
#define RACE_SOURCE_PX 18
#define RACE_RIGHT (NN_SVG_WIDTH - SVG_MARGIN)

/* The two verdicts, the framework pair's first, at the panel's top. */
static void race_verdicts(FILE *f, const svg_plot *p, const nn_race_ways *w)
{
    char v[96], line[160];
    nn_race_verdict_short(w, NN_LANE_FW_CPU, NN_LANE_FW_GPU, v, sizeof v);
    snprintf(line, sizeof line, "framework way: %s", v);
    svg_text_fit(f, p->x0, p->y0 + 24, RACE_PX, SVG_MIN_PX, "start", p->x0, RACE_RIGHT,
                 " font-weight=\"bold\" class=\"verdict\"", line);
    nn_race_verdict_short(w, NN_LANE_NNLAB_CPU, NN_LANE_NNLAB_GPU, v, sizeof v);
    snprintf(line, sizeof line, "nnlab's own code: %s", v);
    svg_text_fit(f, p->x0, p->y0 + 52, RACE_PX, SVG_MIN_PX, "start", p->x0, RACE_RIGHT, " class=\"verdict\"", line);
}

/* Lane k's row: its name, step and time, its source, and a bar as long as
 * its time on the panel's log axis in the series' colour (dashed: predicted). */
static void race_lane(FILE *f, const svg_plot *p, const nn_race_lane *l, long steps, int k, double top)
{
    char line[96], step[32];
    double y = top + k * 90.0, t = (double)steps * l->step_us * 1e-6;
    int series = nn_series_of(l->gpu, 0, l->way, l->measured && l->way == NN_WAY_FRAMEWORK);
    nn_race_step_text(l->step_us, step, sizeof step);
    snprintf(line, sizeof line, "%s%s  %s, %.3g s", l->label, l->measured ? "" : "*", step, t);
    svg_text_fit(f, p->x0, y + 24, RACE_PX, SVG_MIN_PX, "start", p->x0, RACE_RIGHT, " class=\"lane\"", line);
    svg_text_fit(f, p->x0, y + 48, RACE_SOURCE_PX, RACE_SOURCE_PX, "start", p->x0, RACE_RIGHT,
                 " class=\"lane-source\"", l->source);
    fprintf(f, "<rect class=\"lane-bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"18\" fill=\"%s\"%s/>\n",
            p->x0, y + 58, fmax(svg_px_x(p, t) - p->x0, 2.0), nn_palette(series)->hex,
            l->measured ? "" : " fill-opacity=\"0.45\" stroke=\"#000000\" stroke-dasharray=\"6 4\"");
}

/* The right panel of a race of ways: the verdicts, then every lane priced
 * or measured, its time for the job's steps on a log axis of seconds. */
static void race_draw(FILE *f, const nn_race_ways *w, long steps)
{
    svg_plot p = { 790, 90, 450, 420, INFINITY, -INFINITY, 0, 1, 1, 0, 0 };
    double t[SVG_MAX_TICKS];
    char xlabel[64];
    for (int k = 0; k < NN_LANES; k++)
        if (w->lane[k].present && steps > 0)
            svg_range_add((double)steps * w->lane[k].step_us * 1e-6, &p.xmin, &p.xmax);
    if (!(p.xmax > 0))
        return;
    p.xmin = pow(10, floor(log10(p.xmin / 2)));   /* whole decades: every bar starts inside */
    p.xmax = pow(10, ceil(log10(p.xmax * 1.2)));
    race_verdicts(f, &p, w);
    for (int k = 0, row = 0; k < NN_LANES; k++)
        if (w->lane[k].present)
            race_lane(f, &p, &w->lane[k], steps, row++, p.y0 + 60);
    svg_x_tick_labels(f, &p, t, svg_log_ticks(p.xmin, p.xmax, 10, t, SVG_MAX_TICKS));
    fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\" "
               "stroke-width=\"2\"/>\n", p.x0, p.y0 + p.h, p.x0 + p.w, p.y0 + p.h);
    snprintf(xlabel, sizeof xlabel, "seconds for %ld steps (log)", steps);
    svg_text_fit(f, p.x0 + p.w / 2, p.y0 + p.h + 72, SVG_LABEL_PX, SVG_MIN_PX, "middle", p.x0 - 40, RACE_RIGHT,
                 " class=\"axis-label\"", xlabel);
}

/* The legend at the foot of the canvas, as many rows as it needs (at most
 * max_rows: the entries that do not fit are left out, the past ones first). */
static void foot_legend(FILE *f, const svg_style *st, int n, int max_rows)
{
    double left = 120, right = NN_SVG_WIDTH - 40;
    int rows;
    while ((rows = svg_legend(f, st, n, left, right, 0, 0)) > max_rows && n > 1)
        n--;
    svg_legend(f, st, n, left, right, NN_SVG_HEIGHT - 10 - rows * SVG_LEGEND_ROW, 1);
}

/* A snapshot's series: its device and way. */
static int snap_series(const nn_snapshot *s)
{
    return nn_device_series(s->device, s->has_switches && s->graph ? NN_WAY_GRAPH : NN_WAY_EAGER, 0);
}

/* Job k's colour: its series', or beside a job of the same series another. */
static const char *job_colour(const nn_export_run *run, int k)
{
    int series = run->job[k].snap ? snap_series(run->job[k].snap) : 0, shared = 0;
    for (int j = 0; j < k; j++)
        shared |= run->job[j].snap && snap_series(run->job[j].snap) == series;
    return nn_palette(shared ? (series + 1 + k) % NN_SERIES_COUNT : series)->hex;
}

static void run_draw(FILE *f, const nn_export_run *run, const nn_svg_past *past, int n_past, run_series *s,
                     int accuracy)
{
    svg_plot loss = { 150, 90, 450, 420, 0, 0, 0, 0, 0, 0, 0 }, acc = { 790, 90, 450, 420, 0, 0, 0, 0, 0, 0, 1 };
    svg_style st[NN_SVG_MAX_PAST + 2], legend[NN_SVG_MAX_PAST + 2];
    int n = 0, nl = 0;
    run_ranges(s, n_past + run->n_jobs, &loss, &acc);
    if (accuracy)
        acc.ymin = 0, acc.ymax = acc.ymax > 100 ? acc.ymax : 100;
    svg_axes(f, &loss, "training step", "training loss (mean per sample)");
    if (run->ways)                   /* a race of ways: its lanes in the validation's place */
        race_draw(f, run->ways, run->ways_steps);
    else
        svg_axes(f, &acc, "epoch", accuracy ? "validation accuracy (%)" : "validation loss (mean per sample)");
    for (int k = 0; k < n_past; k++)
        st[n++] = (svg_style){ PAST_COLOUR, PAST_DASH, 1, past[k].label };
    char labels[NN_EXPORT_MAX_JOBS][48];
    for (int k = 0; k < run->n_jobs; k++) {
        job_label(run, k, labels[k], sizeof labels[k]);
        st[n++] = (svg_style){ job_colour(run, k), NULL, 0, labels[k] };
    }
    for (int k = 0; k < n; k++) {
        svg_curve(f, &loss, s[k].lx, s[k].ly, s[k].nl, &st[k]);
        if (!run->ways)
            svg_curve(f, &acc, s[k].ax, s[k].ay, s[k].na, &st[k]);
    }
    for (int k = n_past; k < n; k++)         /* the current run first, then the past */
        legend[nl++] = st[k];
    for (int k = 0; k < n_past; k++)
        legend[nl++] = st[k];
    foot_legend(f, legend, nl, 3);
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

#define NOTE_PX 20
#define NOTE_ROW 26.0
#define MAX_NOTES 4
#define MAX_NOTE_LINES 6

/* Each source of a sweep's devices that is not nnlab measuring them here
 * ("predicted for T4", "predicted from this CPU's calibration", "measured
 * with PyTorch 2.11"): its stars on the legend and the devices it covers. */
typedef struct sweep_notes {
    int n;
    char source[MAX_NOTES][NN_TEXT_LEN];
    int of[NN_SWEEP_MAX_DEVICES];  /* device d's note; -1: measured by nnlab */
    char name[NN_SWEEP_MAX_DEVICES][NN_TEXT_LEN];     /* "gpu graph" */
    char label[NN_SWEEP_MAX_DEVICES][NN_TEXT_LEN];    /* "gpu graph**" */
    char full[NN_SWEEP_MAX_DEVICES][NN_TEXT_LEN];     /* "gpu graph (predicted for T4)" */
} sweep_notes;

static void sweep_notes_of(const nn_sweep *sw, sweep_notes *nt)
{
    nt->n = 0;
    for (int d = 0; d < sw->n_devices; d++) {
        char src[NN_TEXT_LEN];
        int j = 0;
        nn_sweep_source_text(sw, d, src, sizeof src);
        nn_sweep_device_label(sw, d, nt->full[d], sizeof nt->full[d]);
        nn_strlcpy(nt->name[d], nt->full[d], sizeof nt->name[d]);
        char *paren = strstr(nt->name[d], " (");
        if (paren)
            *paren = '\0';       /* the source goes to the note */
        while (j < nt->n && strcmp(nt->source[j], src) != 0)
            j++;
        if (strcmp(src, "measured") == 0 || (j == nt->n && nt->n == MAX_NOTES))
            j = -1;
        else if (j == nt->n)
            snprintf(nt->source[nt->n++], sizeof nt->source[0], "%s", src);
        nt->of[d] = j;
        snprintf(nt->label[d], sizeof nt->label[d], "%s%.*s", j < 0 && paren ? nt->full[d] : nt->name[d], j + 1,
                 "****");
    }
}

/* The notes' lines: "** predicted for T4: gpu graph, gpu eager, gpu
 * framework", each wrapped to the legend's width. */
static int sweep_note_lines(const nn_sweep *sw, const sweep_notes *nt, char (*lines)[160])
{
    int n = 0;
    for (int j = 0; j < nt->n && n < MAX_NOTE_LINES; j++) {
        char text[640];
        int at = snprintf(text, sizeof text, "%.*s %s:", j + 1, "****", nt->source[j]);
        for (int d = 0, first = 1; d < sw->n_devices && at > 0 && (size_t)at < sizeof text; d++)
            if (nt->of[d] == j) {
                at += snprintf(text + at, sizeof text - (size_t)at, "%s %s", first ? "" : ",", nt->name[d]);
                first = 0;
            }
        n += svg_wrap(text, NN_SVG_WIDTH - 160.0, NOTE_PX, lines + n, MAX_NOTE_LINES - n);
    }
    return n;
}

static void sweep_rates(const nn_sweep *sw, int d, double *xs, double *ys)
{
    for (int i = 0; i < sw->n_batches; i++) {
        const nn_sweep_point *p = &sw->pt[d][i];
        xs[i] = sw->batch[i];
        ys[i] = p->state == NN_POINT_DONE || p->predicted ? p->rate : NAN;
    }
}

static void sweep_ranges(const nn_sweep *sw, svg_plot *p)
{
    double xs[NN_SWEEP_MAX_BATCHES], ys[NN_SWEEP_MAX_BATCHES];
    p->xmin = p->ymin = INFINITY;
    p->xmax = p->ymax = -INFINITY;
    for (int d = 0; d < sw->n_devices; d++) {
        sweep_rates(sw, d, xs, ys);
        for (int i = 0; i < sw->n_batches; i++)
            if (isfinite(ys[i]) && ys[i] > 0)
                svg_range_add(xs[i], &p->xmin, &p->xmax), svg_range_add(ys[i], &p->ymin, &p->ymax);
    }
    if (p->xmin > p->xmax)
        p->xmin = 1, p->xmax = 2, p->ymin = 1, p->ymax = 10;
    svg_range_finish(&p->xmin, &p->xmax, 1);
    svg_range_finish(&p->ymin, &p->ymax, 1);
}

/* ---- the crossovers: a ring on each, one label per batch and base ---------------------------------- */

typedef struct cross_group {
    int i, base, n, who[NN_SWEEP_MAX_DEVICES];
} cross_group;

/* The matching pairs' crossovers (nn_sweep_pairs, as the screen and the
 * JSON), a pair on a contradictory calibration naming none: a ring on each
 * challenger's point, the challengers that overtake one base at one batch
 * grouped under one label. Returns the groups. */
static int cross_groups(FILE *f, const svg_plot *p, const nn_sweep *sw, cross_group *g, int max)
{
    nn_sweep_pair pairs[2 * NN_SWEEP_MAX_DEVICES];
    int np = nn_sweep_pairs(sw, pairs, 2 * NN_SWEEP_MAX_DEVICES), ng = 0;
    for (int k = 0; k < np; k++) {
        int i = pairs[k].crossover, c = pairs[k].challenger, j = 0;
        if (pairs[k].contradictory || i < 0 || !isfinite(sw->pt[c][i].rate) || !(sw->pt[c][i].rate > 0))
            continue;
        fprintf(f, "<circle class=\"crossover\" data-batch=\"%d\" cx=\"%.1f\" cy=\"%.1f\" r=\"13\" fill=\"none\" "
                   "stroke=\"%s\" stroke-width=\"%d\"/>\n", sw->batch[i], svg_px_x(p, sw->batch[i]),
                svg_px_y(p, sw->pt[c][i].rate), nn_palette(nn_sweep_series(sw, c))->hex, SVG_LINE_PX);
        while (j < ng && !(g[j].i == i && g[j].base == pairs[k].base))
            j++;
        if (j == ng && ng == max)
            continue;
        if (j == ng)
            g[ng++] = (cross_group){ i, pairs[k].base, 0, { 0 } };
        g[j].who[g[j].n++] = c;
    }
    return ng;
}

/* "gpu eager and gpu graph overtake cpu nnlab at batch 16" */
static void cross_text(const nn_sweep *sw, const sweep_notes *nt, const cross_group *g, char *buf, size_t len)
{
    int at = 0;
    for (int k = 0; k < g->n && at >= 0 && (size_t)at < len; k++)
        at += snprintf(buf + at, len - (size_t)at, "%s%s", k == 0 ? "" : k == g->n - 1 ? " and " : ", ",
                       nt->name[g->who[k]]);
    if (at < 0 || (size_t)at >= len)
        return;
    if (g->i == 0)
        snprintf(buf + at, len - (size_t)at, " %s faster than %s at every batch swept", g->n > 1 ? "are" : "is",
                 nt->name[g->base]);
    else
        snprintf(buf + at, len - (size_t)at, " %s %s at batch %d", g->n > 1 ? "overtake" : "overtakes",
                 nt->name[g->base], sw->batch[g->i]);
}

/* Whether a label's box lies inside the plot and clear of those placed. */
static int box_free(const svg_plot *p, const svg_box *b, const svg_box *placed, int n)
{
    if (b->l < p->x0 + 6 || b->r > p->x0 + p->w - 6 || b->t < p->y0 + 6 || b->b > p->y0 + p->h - 6)
        return 0;
    for (int k = 0; k < n; k++) {
        svg_box grown = { placed[k].l - 4, placed[k].t - 4, placed[k].r + 4, placed[k].b + 4 };
        if (svg_boxes_overlap(b, &grown))
            return 0;
    }
    return 1;
}

/* A label beside its ring, above or below it, further out while it would
 * touch a label placed before; joined to the ring by a leader line once it
 * is away from it. */
static void cross_label(FILE *f, const svg_plot *p, double x, double y, const char *text, svg_box *placed, int *n)
{
    static const double dy[] = { -18, 38, -46, 66, -74, 94, -102, 122, -130, 150, -158, 178 };
    char out[256];
    int px = svg_fit(text, p->w - 24, SVG_TICK_PX, SVG_MIN_PX, 1, out, sizeof out);
    double w = svg_text_width(out, px, 1), lx = x + 18, ly = y - 18;
    const char *anchor = x + 18 + w <= p->x0 + p->w - 6 ? "start" : "end";
    svg_box b = { 0, 0, 0, 0 };
    int k = 0, found = 0;
    for (; k < (int)(sizeof dy / sizeof dy[0]) && !found; k++)
        for (int side = 0; side < 2 && !found; side++) {
            lx = side == 0 ? (anchor[0] == 's' ? x + 18 : x - 18) : p->x0 + p->w / 2;
            ly = y + dy[k];
            b = svg_text_box(lx, ly, px, w, side == 0 ? anchor : "middle");
            found = box_free(p, &b, placed, *n);
            if (found && side == 1)
                anchor = "middle";
        }
    if (!found) {                /* no room beside it: the plot's top, stacked */
        anchor = "start";
        lx = p->x0 + 12;
        ly = p->y0 + 30 + 28.0 * *n;
        b = svg_text_box(lx, ly, px, w, anchor);
    }
    if (!found || fabs(ly - y) > 40 || strcmp(anchor, "middle") == 0) {
        double tx = fmin(fmax(x, b.l), b.r), ty = ly < y ? b.b : b.t;
        fprintf(f, "<line class=\"leader\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444444\" "
                   "stroke-width=\"1.5\"/>\n", x, y + (ty < y ? -13 : 13), tx, ty);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"%s\" class=\"crossover-label\" "
               "font-weight=\"bold\">", lx, ly, px, anchor);
    svg_escaped(f, out);
    fputs("</text>\n", f);
    if (*n < 2 * NN_SWEEP_MAX_DEVICES)
        placed[(*n)++] = b;
}

static void sweep_crossovers(FILE *f, const svg_plot *p, const nn_sweep *sw, const sweep_notes *nt)
{
    cross_group g[2 * NN_SWEEP_MAX_DEVICES];
    svg_box placed[2 * NN_SWEEP_MAX_DEVICES];
    int ng = cross_groups(f, p, sw, g, 2 * NN_SWEEP_MAX_DEVICES), n = 0;
    char text[512];
    for (int k = 0; k < ng; k++) {
        int c = g[k].who[0];
        cross_text(sw, nt, &g[k], text, sizeof text);
        cross_label(f, p, svg_px_x(p, sw->batch[g[k].i]), svg_px_y(p, sw->pt[c][g[k].i].rate), text, placed, &n);
    }
}

/* The plot above a legend as tall as it needs: the devices (their notes'
 * stars) and the notes saying what each star covers. */
static void sweep_draw(FILE *f, const nn_sweep *sw)
{
    sweep_notes nt;
    svg_style st[NN_SWEEP_MAX_DEVICES];
    char lines[MAX_NOTE_LINES][160];
    double xs[NN_SWEEP_MAX_BATCHES], ys[NN_SWEEP_MAX_BATCHES], left = 120, right = NN_SVG_WIDTH - 40;
    sweep_notes_of(sw, &nt);
    for (int d = 0; d < sw->n_devices; d++)
        st[d] = (svg_style){ nn_palette(nn_sweep_series(sw, d))->hex, nn_series_dash(sw->predicted[d]), 0,
                             nt.label[d] };
    int nl = sweep_note_lines(sw, &nt, lines), rows = svg_legend(f, st, sw->n_devices, left, right, 0, 0);
    double top = NN_SVG_HEIGHT - 10 - rows * SVG_LEGEND_ROW - nl * NOTE_ROW;
    svg_plot p = { 170, 90, 1040, fmax(top - 88 - 90, 200), 0, 0, 0, 0, 1, 1, 0 };
    sweep_ranges(sw, &p);
    svg_axes(f, &p, "batch size (samples per step, log2)", "samples/s (log)");
    for (int d = 0; d < sw->n_devices; d++) {
        svg_style curve = st[d];
        curve.label = nt.full[d];    /* the curve says its source in full */
        sweep_rates(sw, d, xs, ys);
        svg_curve(f, &p, xs, ys, sw->n_batches, &curve);
    }
    svg_legend(f, st, sw->n_devices, left, right, top, 1);
    for (int k = 0; k < nl; k++)
        svg_text_fit(f, left, top + rows * SVG_LEGEND_ROW + NOTE_PX * 0.8 + k * NOTE_ROW, NOTE_PX, NOTE_PX, "start",
                     left, right, " class=\"legend-note\"", lines[k]);
    sweep_crossovers(f, &p, sw, &nt);
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
