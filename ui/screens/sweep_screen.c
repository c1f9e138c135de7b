/* ui/screens/sweep_screen.c - the batch sweep screen: samples/s against batch size
 * on a log axis, one curve per device, the point where the GPU overtakes
 * the CPU, the table of every point with its regime, the Explain panel for
 * the point picked (ui/panels/explain_panel.c), and the sweep's progress. The
 * runner and its rules are the analysis layer's (nnlab/sweep.h), the words
 * ui/text/sweep.c's; partial results stay when it is cancelled. Without a GPU
 * here, the GPU is swept as predicted for the settings' GPU profile
 * (ui_predicted_profile): three curves and columns, the three ways of
 * running its step, marked predicted. */
#include "draw.h"
#include "lab_state.h"
#include "panels/chart_view.h"
#include "panels/export_key.h"
#include "panels/job_keys.h"
#include "sweep_screen.h"
#include "text/format.h"
#include "nnlab/progress.h"
#include "setup_fields.h"
#include "panels/race_predicted.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The sweep's device d computes on a GPU (measured, or predicted: its
 * ways are the GPU's too). */
static int sweeps_gpu(const ui_lab *lab, const nn_sweep *sw, int d)
{
    const nn_device_status *st = ui_device_status(lab, sw->device[d]);
    return st && st->gpu;
}

/* The index of the sweep's baseline (the CPU every other device is compared
 * with: the first on a pool of CPU threads); -1 when it has none. */
static int sweep_baseline(const ui_lab *lab, const nn_sweep *sw)
{
    for (int d = 0; d < sw->n_devices; d++) {
        const nn_device_status *st = ui_device_status(lab, sw->device[d]);
        if (st && st->threaded && !sw->predicted[d])
            return d;
    }
    return -1;
}

static void add_skipped(ui_lab *lab, const char *dev, const char *why)
{
    ui_sweep_state *ss = ui_sweep_of(lab);
    size_t n = strlen(ss->skipped);
    snprintf(ss->skipped + n, sizeof ss->skipped - n, "%s%s skipped: %s", n ? "; " : "", dev, why);
}


/* The GPU is not here: predicted for the settings' profile, three ways; -1
 * when there is no profile (then it is skipped, with the reason). */
static int add_predicted_gpu(ui_lab *lab, nn_sweep *sw)
{
    ui_sweep_state *ss = ui_sweep_of(lab);
    if (!ss->has_profile) {
        add_skipped(lab, "gpu profile", ss->profile_err);
        return -1;
    }
    return nn_sweep_add_predicted(sw, &ss->profile);
}

/* A GPU that is here is compared with the settings' profile, point by point. */
static void set_gpu_profile(const ui_sweep_state *ss, nn_sweep *sw)
{
    if (sw->has_profile || nn_sweep_gpu_index(sw, -1) < 0)
        return;
    if (ss->has_profile)
        nn_sweep_set_profile(sw, &ss->profile);
}

/* The default profile (a GPU's framework figures, the CPU's framework
 * figures, a GPU not here), read as the sweep starts; NULL when it could not be. */
static const nn_gpu_profile *default_profile(const ui_lab *lab)
{
    const ui_sweep_state *ss = ui_sweep_of(lab);
    return ss->has_profile ? &ss->profile : NULL;
}

/* One device of the settings: a CPU with, when a GPU is swept too, its
 * framework way predicted; a GPU that is here, its eager and graph ways
 * side by side and its framework way predicted; a GPU not here, predicted. */
static void add_device(ui_lab *lab, nn_sweep *sw, const nn_device_status *dev, int with_gpu)
{
    const char *why = "";
    const nn_gpu_profile *prof = default_profile(lab);
    if (!dev->available) {
        if (!dev->gpu || add_predicted_gpu(lab, sw) != 0)   /* a GPU not here is predicted */
            add_skipped(lab, dev->name, dev->why);
        return;
    }
    const nn_calibration *cal = nn_cal_store_get(&lab->cals, dev->name, &why);
    if (dev->gpu && cal && prof && nn_sweep_add_gpu_ways(sw, cal, prof) == 0)
        return;
    nn_sweep_add_device(sw, dev->name, cal, why);
    if (with_gpu && cal && prof && !dev->gpu && dev->threaded && !dev->reference)
        (void)nn_sweep_add_framework_cpu(sw, cal, prof);
}

/* Sweep PyTorch: the framework way measured with PyTorch on the CPU and on
 * a GPU here that PyTorch sees (nn_sweep_add_pytorch); one that cannot be is
 * said beside the skipped devices and stays predicted. */
static void add_pytorch(ui_lab *lab, nn_sweep *sw, const nn_device_status *const *devs, int n)
{
    char err[NN_ERR_LEN];
    for (int i = 0; i < n; i++) {
        if (!devs[i]->available || devs[i]->reference)
            continue;
        if (nn_sweep_add_pytorch(sw, devs[i]->name, lab->chosen.preset_path, err, sizeof err) != 0)
            add_skipped(lab, "PyTorch", err);
    }
}

/* Starts a sweep of the settings; -1 (said on the status row) when it cannot. */
static int sweep_enter(ui_lab *lab)
{
    ui_sweep_state *ss = ui_sweep_of(lab);
    nn_job_config cfg;
    nn_sweep *sw = &lab->sweep;
    int batches[NN_SWEEP_MAX_BATCHES], with_gpu = 0;
    ui_setup_job_config(lab, &cfg);
    cfg.log_every = 0;               /* the preset's, as `nnlab bench`: no extra loss read-backs */
    nn_sweep_free(sw);
    int nb = nn_sweep_powers_of_two(lab->chosen.set.sweep_from, lab->chosen.set.sweep_to, batches, NN_SWEEP_MAX_BATCHES);
    if (lab->in_lesson && lab->n_lesson_batches > 0)   /* a lesson's sweep step: its own batch sizes */
        memcpy(batches, lab->lesson_batches, sizeof batches[0] * (size_t)(nb = lab->n_lesson_batches));
    nn_sweep_init(sw, &cfg, batches, nb, lab->chosen.set.sweep_steps, 3);
    ss->skipped[0] = '\0';
    /* the settings' GPU profile, as the race and Explain use */
    ss->has_profile = ui_predicted_profile(lab, &ss->profile, ss->profile_err, sizeof ss->profile_err) == 0;
    const nn_device_status *devs[NN_MAX_DEVICES];
    int n = ui_sweep_order(lab, devs, NN_MAX_DEVICES);
    for (int i = 0; i < n; i++)
        with_gpu |= devs[i]->gpu;
    for (int i = 0; i < n; i++)
        add_device(lab, sw, devs[i], with_gpu);
    if (lab->chosen.set.sweep_pytorch)
        add_pytorch(lab, sw, devs, n);
    set_gpu_profile(ss, sw);
    if (sw->n_devices == 0 || sw->n_batches == 0) {
        ui_set_message(lab, 1, "nothing to sweep: %s",
                       sw->n_devices ? "no batch size in the range" : ss->skipped);
        return -1;
    }
    lab->log_scale = 1;              /* samples/s spans decades */
    ss->follow = 1;           /* explain the latest point until a key picks one */
    nn_explainer_reset(&ss->explain, NULL, "");
    return 0;
}

static int n_predicted(const nn_sweep *sw)
{
    int n = 0;
    for (int d = 0; d < sw->n_devices; d++)
        n += sw->predicted[d];
    return n;
}

/* The chart says what each * covers: "batch (log2); gpu * predicted for
 * T4, cpu fw* from this CPU's calibration", shorter where the edge is
 * (the notes under the table say it in full): the CPU's part cut, then
 * left out, never claimed for the profile. */
static void star_note(const nn_sweep *sw, int width, char *buf, size_t len)
{
    int gpu_profile = 0, gpu_cal = 0, cpu = 0;
    for (int d = 0; d < sw->n_devices; d++)
        if (sw->predicted[d])
            *(!nn_sweep_device_is_gpu(sw, d) ? &cpu : sw->cal[d].profile ? &gpu_profile : &gpu_cal) = 1;
    for (int tier = 0; tier < 3; tier++) {
        const char *calib = tier == 0 ? "'s calibration" : "";
        int at = snprintf(buf, len, "batch (log2)%s", n_predicted(sw) > 0 ? ";" : "");
        if (gpu_profile && at > 0 && (size_t)at < len)
            at += snprintf(buf + at, len - (size_t)at, " gpu * predicted for %s,", sw->prof.name);
        if (gpu_cal && tier < 2 && at > 0 && (size_t)at < len)
            at += snprintf(buf + at, len - (size_t)at, " gpu fw* from this GPU%s,", calib);
        if (cpu && tier < 2 && at > 0 && (size_t)at < len)
            at += snprintf(buf + at, len - (size_t)at, " cpu fw* from this CPU%s,", calib);
        if (n_predicted(sw) > 0 && (tier == 2 ? !gpu_profile : !gpu_profile && !gpu_cal && !cpu) && at > 0 &&
            (size_t)at < len)
            at += snprintf(buf + at, len - (size_t)at, " * predicted,");
        if (at > 0 && (size_t)at <= len && buf[at - 1] == ',')
            buf[at - 1] = '\0';     /* the last part's comma */
        if ((int)strlen(buf) <= width)
            return;
    }
}

static void draw_chart(ui_lab *lab)
{
    const nn_sweep *sw = &lab->sweep;
    double (*rate)[NN_SWEEP_MAX_BATCHES] = ui_sweep_of(lab)->rate;
    double bx[NN_SWEEP_MAX_BATCHES], vline[NN_SWEEP_MAX_DEVICES];
    char names[NN_SWEEP_MAX_DEVICES][24];
    ui_series s[NN_SWEEP_MAX_DEVICES];
    ui_axis ax, ay;
    ui_axis_begin(&ax, 2);
    ui_axis_begin(&ay, lab->log_scale ? 10 : 0);
    for (int i = 0; i < sw->n_batches; i++) {
        bx[i] = sw->batch[i];
        ui_axis_include(&ax, bx[i]);
        for (int d = 0; d < sw->n_devices; d++) {
            rate[d][i] = sw->pt[d][i].rate;
            ui_axis_include(&ay, rate[d][i]);
        }
    }
    for (int d = 0; d < sw->n_devices; d++) {
        ui_sweep_column_name(sw, d, names[d], sizeof names[d]);
        int series = nn_sweep_series(sw, d);     /* the slide's colour and dash too */
        s[d] = (ui_series){ bx, rate[d], sw->n_batches, 1, UI_PALETTE0 + series, names[d], nn_palette(series)->glyph,
                            sw->predicted[d] };
    }
    ui_axis_finish(&ax, 0);
    ui_axis_finish(&ay, 1);
    /* where each matching pair's GPU overtakes its CPU (nn_sweep_pairs) */
    nn_sweep_pair pairs[2 * NN_SWEEP_MAX_DEVICES];
    int np = nn_sweep_pairs(sw, pairs, 2 * NN_SWEEP_MAX_DEVICES), nv = 0;
    for (int k = 0; k < np && nv < NN_SWEEP_MAX_DEVICES; k++)
        if (sweeps_gpu(lab, sw, pairs[k].challenger) && pairs[k].crossover >= 0)
            vline[nv++] = sw->batch[pairs[k].crossover];
    char x_title[NN_NAME_LEN + 96];
    star_note(sw, lab->layout.chart.w - 8, x_title, sizeof x_title);   /* an edge's corner stays */
    ui_chart_view(lab, lab->layout.chart, lab->log_scale ? "samples/s (log)" : "samples/s", x_title,
                  &ax, &ay, s, sw->n_devices, vline, nv);
}

/* The crossovers (up to `rows` rows when they wrap); returns the rows used. */
static int draw_crossover_line(ui_lab *lab, ui_rect in, int y, int rows)
{
    char line[640];
    int style = ui_sweep_crossover_text(&lab->sweep, sweep_baseline(lab, &lab->sweep), line, sizeof line);
    int need = ui_wrapped_rows(in.w, 8, line);
    return ui_put_wrapped(y, in.x, in.w, need < rows ? need : rows, ui_attr(lab, style == UI_TS_OK ? UI_OK : UI_DIM),
                          line);
}

/* The notes under the table: the crossover, what * means when a device is
 * predicted, the regime legend when there is room, then a failure or the
 * devices left out. */
static void draw_notes(ui_lab *lab, ui_rect in, int y, int cell)
{
    ui_sweep_state *ss = ui_sweep_of(lab);
    const nn_sweep *sw = &lab->sweep;
    char note[NN_TEXT_LEN];
    int left = in.y + in.h - y;
    if (left > 16)
        left = 16;                   /* every pair's crossover with its ties, then the write-up's line */
    if (left >= 4)
        left--;                      /* a blank row before the notes */
    y = in.y + in.h - left;
    /* the crossovers of every pair, whole, at word breaks: the other notes give way */
    int used = draw_crossover_line(lab, in, y, left);
    y += used;
    left -= used;
    /* the write-up's own figure (as the CLI's), then what * means: each
     * whole or not at all (the chart's edge says what * means too) */
    nn_sweep_writeup_text(sw, note, sizeof note);
    int need = note[0] ? ui_wrapped_rows(in.w, 16, note) : 0;
    if (need > 0 && need <= left) {
        y += ui_put_wrapped(y, in.x, in.w, need, ui_attr(lab, UI_DIM), note);
        left -= need;
    }
    ui_sweep_predicted_note(sw, note, sizeof note);
    need = note[0] ? ui_wrapped_rows(in.w, 16, note) : 0;
    if (need > 0 && need <= left) {
        y += ui_put_wrapped(y, in.x, in.w, need, ui_attr(lab, UI_OK), note);
        left -= need;
    }
    const char *legend = cell < UI_SWEEP_CELL_WIDE ? "regime: o overhead, m memory, c compute-bound"
                                                  : "regime: ovh overhead, mem memory, cmp compute-bound";
    int legend_rows = ui_wrapped_rows(in.w, 2, legend);
    if (left - legend_rows >= 2) {   /* a failure or the devices left out keep two rows */
        y += ui_put_wrapped(y, in.x, in.w, legend_rows, ui_attr(lab, UI_DIM), legend);
        left -= legend_rows;
    }
    if (sw->last_error[0])
        ui_put_wrapped(y, in.x, in.w, left, ui_attr(lab, UI_ERROR), sw->last_error);
    else if (ss->skipped[0])
        ui_put_wrapped(y, in.x, in.w, left, ui_attr(lab, UI_DIM), ss->skipped);
}

#define PREDICTED_CELL 8            /* a blank and a 7-character name or samples/s */
#define RATIO_W 10                  /* the graph to cpu ratio: a blank and its 9-letter name */

typedef struct table_fit {
    int order[NN_SWEEP_MAX_DEVICES]; /* ui_sweep_column_order */
    int n, shown;                    /* the columns; the first `shown` of order fit */
    int cell, ratio;                 /* a measured column's width; the gpu/cpu column */
} table_fit;

static int column_width(const nn_sweep *sw, const table_fit *t, int d)
{
    return sw->predicted[d] || sw->external[d] ? PREDICTED_CELL : t->cell;
}

/* Which columns fit in w: a measured column shares the room with its
 * regime; a predicted one holds its samples/s alone; the ratio goes first,
 * then the last columns of the order, then the measured ones' regimes. */
static void fit_table(const nn_sweep *sw, int w, int ratio, table_fit *t)
{
    int n = ui_sweep_column_order(sw, t->order), measured = 0, used;
    for (int k = 0; k < n; k++)
        measured += !sw->predicted[t->order[k]] && !sw->external[t->order[k]];
    t->n = t->shown = n;
    t->ratio = ratio;
    for (;;) {
        int others = t->shown - measured;
        t->cell = ui_sweep_cell_width(w - others * PREDICTED_CELL, measured, t->ratio);
        used = 6 + t->ratio * RATIO_W;
        for (int k = 0; k < t->shown; k++)
            used += column_width(sw, t, t->order[k]);
        if (used <= w || (t->shown <= measured && !t->ratio))
            break;
        if (t->ratio)
            t->ratio = 0;
        else
            t->shown--;
    }
    if (used > w)
        t->cell = PREDICTED_CELL;   /* still too narrow: every column its samples/s alone */
}

/* The columns that did not fit said on the box's bottom edge, as a list
 * says what it hides: " ▶ 2 more columns (wider) ". */
static void hidden_columns_marker(ui_lab *lab, ui_rect box, int hidden)
{
    char m[64];
    if (hidden <= 0)
        return;
    snprintf(m, sizeof m, " %s %d more column%s (wider) ", lab->utf8 ? "\u25b6" : ">", hidden, hidden > 1 ? "s" : "");
    int cols = ui_text_cols(m);
    if (cols + 4 <= box.w)
        ui_put(box.y + box.h - 1, box.x + box.w - 2 - cols, cols, ui_attr(lab, UI_KEY), m);
}

static void draw_table(ui_lab *lab)
{
    const nn_sweep *sw = &lab->sweep;
    ui_rect box = lab->layout.side, in = ui_rect_inner(box);
    int c = sweep_baseline(lab, sw), g = nn_sweep_gpu_index(sw, NN_WAY_GRAPH), y = in.y, x, sel_d, sel_i;
    table_fit t;
    fit_table(sw, in.w, c >= 0 && g >= 0, &t);
    if (ui_explain_sweep_selected(lab, ui_sweep_of(lab), &sel_d, &sel_i) != 0)
        sel_d = sel_i = -1;
    /* the title said shorter in a narrow box, never cut */
    ui_box(lab, box, box.w >= 41 ? "samples/s and regime per batch size" : "samples/s, regime by batch");
    x = in.x + ui_putf(y, in.x, 6, A_BOLD, "%6s", "batch");
    for (int k = 0; k < t.shown; k++) {
        char name[16];
        int d = t.order[k], w = column_width(sw, &t, d);
        ui_sweep_column_name(sw, d, name, sizeof name);
        x += ui_putf(y, x, w, A_BOLD, "%*s", w, name);
    }
    if (t.ratio)     /* a space before, so that it never runs into the last column's name */
        ui_putf(y, x, RATIO_W, A_BOLD, "%*s", RATIO_W, sw->predicted[g] ? "grph*/cpu" : "gpu/cpu");
    y++;
    int cross = ui_sweep_gpu_crossover(sw, c), rows = in.h - 5;   /* the header and four note rows stay */
    int first = 0, shown = sw->n_batches;
    if (shown > rows) {              /* a window on the picked point; its last row says what is hidden */
        shown = rows > 1 ? rows - 1 : 0;
        first = sel_i >= shown ? sel_i - shown + 1 : 0;
    }
    for (int i = first; i < first + shown; i++, y++) {
        attr_t a = i == cross ? ui_attr(lab, UI_OK) | A_BOLD : A_NORMAL;
        x = in.x + ui_putf(y, in.x, 6, a, "%6d", sw->batch[i]);
        for (int k = 0; k < t.shown; k++) {
            char v[32];
            int d = t.order[k], w = column_width(sw, &t, d);
            ui_sweep_cell_text(sw, d, i, w, v, sizeof v);
            /* the point the Explain panel is about */
            x += ui_put(y, x, w, d == sel_d && i == sel_i ? ui_attr(lab, UI_SELECTED) : a, v);
        }
        if (t.ratio && isfinite(sw->pt[c][i].rate) && isfinite(sw->pt[g][i].rate))
            ui_putf(y, x, 9, a, "%8.2fx", sw->pt[g][i].rate / sw->pt[c][i].rate);
    }
    if (shown < sw->n_batches && rows > 0)
        ui_putf(y++, in.x, in.w, ui_attr(lab, UI_KEY), "%s %d above, %s %d below (arrows)", lab->utf8 ? "\u25b2" : "^",
                first, lab->utf8 ? "\u25bc" : "v", sw->n_batches - first - shown);
    draw_notes(lab, in, y, t.cell);
    hidden_columns_marker(lab, box, t.n - t.shown);
}

static void draw_progress(ui_lab *lab)
{
    const nn_sweep *sw = &lab->sweep;
    ui_rect box = lab->layout.jobs, in = ui_rect_inner(box);
    char bar[512], line[256], el[48];
    nn_job_times t;                  /* the library's figures, as the CLI's sweep line */
    nn_sweep_times(sw, nn_now(), &t);
    long done = t.steps, total = t.total_steps;
    if (sw->finished)
        nn_format_clock(t.elapsed_s, el, sizeof el);
    else
        nn_format_elapsed_remaining(&t, el, sizeof el);
    if (sw->finished)
        snprintf(line, sizeof line, "%s: %ld of %ld points in %s", sw->cancelled ? "cancelled" : "done", done,
                 total, el);
    else if (sw->job)
        snprintf(line, sizeof line, "%ld/%ld  %s  %s batch %d: %s, step %ld/%ld  (%ld timed + %ld warm-up)",
                 done, total, el, sw->device[sw->cur_dev], sw->batch[sw->cur_batch],
                 nn_job_state_name(sw->snap.state), sw->snap.step, sw->snap.total_steps, sw->base.steps,
                 sw->base.warmup);
    else
        snprintf(line, sizeof line, "%ld/%ld  %s", done, total, el);
    ui_box(lab, box, "Sweep: one bench job at a time");
    int bw = in.w / 3;
    ui_bar_text(bar, sizeof bar, bw, total ? (double)done / (double)total : 0, lab->utf8);
    ui_put(in.y, in.x, bw, ui_attr(lab, UI_SERIES0), bar);
    char fitted[256];                /* whole parts: the timed steps go first, then the step */
    ui_fit_parts(line, in.w - bw - 1, fitted, sizeof fitted);
    ui_put(in.y, in.x + bw + 1, in.w - bw - 1, A_NORMAL, fitted);
}

static void sweep_draw(ui_lab *lab, unsigned dirty)
{
    if (dirty & UI_D_TITLE) {
        char t[256];
        snprintf(t, sizeof t, "nnlab - batch sweep of %s: batch %d..%d, %ld timed steps per point",
                 lab->sweep.base.preset.name, lab->chosen.set.sweep_from, lab->chosen.set.sweep_to, lab->sweep.base.steps);
        ui_draw_title(lab, t);
    }
    int replaces;
    ui_rect ex = ui_explain_rect(&lab->layout, lab->explain_shown, &replaces);
    if ((dirty & UI_D_CHART) && !replaces)
        draw_chart(lab);
    if ((dirty & (UI_D_EXPLAIN | UI_D_SIDE | (replaces ? UI_D_CHART : 0u))) && ex.w > 0)
        ui_explain_draw_sweep(lab, ui_sweep_of(lab));  /* a new point or a new selection shows in the table too */
    if (dirty & UI_D_SIDE)
        draw_table(lab);
    if (dirty & UI_D_JOBS)
        draw_progress(lab);
    if (dirty & UI_D_STATUS)
        ui_draw_status(lab, nn_sweep_active(&lab->sweep)
                                ? "c cancel  arrows pick a point  e explain  l log y  x export  Esc back  ? help"
                                : lab->in_lesson
                                ? "finished: Enter/Esc the lesson  arrows pick  e explain  l log y  x export  ? help"
                                : "finished: Enter/Esc setup  arrows pick  e explain  l log y  x export  L lessons  ? help");
}

static int sweep_active(const ui_lab *lab)
{
    return nn_sweep_active(&lab->sweep);
}

static void sweep_stop(ui_lab *lab)
{
    nn_sweep_cancel(&lab->sweep);
    nn_sweep_free(&lab->sweep);
    memset(&lab->sweep, 0, sizeof lab->sweep);
}

static void sweep_poll(ui_lab *lab, double now)
{
    (void)now;
    int bits = nn_sweep_poll(&lab->sweep);
    if (bits & NN_SWEEP_RESULTS)
        lab->dirty |= UI_D_CHART | UI_D_SIDE | UI_D_JOBS | UI_D_STATUS | UI_D_EXPLAIN;
    if (bits & NN_SWEEP_PROGRESS)
        lab->pending |= UI_D_JOBS;
}

ui_action ui_sweep_screen_key(ui_lab *lab, int ch)
{
    if (ui_explain_sweep_key(lab, ui_sweep_of(lab), ch))   /* the arrows pick the point explained */
        return UI_ACT_HANDLED;
    if (ch == 'c') {
        if (sweep_active(lab)) {
            nn_sweep_cancel(&lab->sweep);
            ui_set_message(lab, 0, "sweep cancelled; the points measured stay");
            lab->dirty |= UI_D_SIDE | UI_D_JOBS;
        }
        return UI_ACT_HANDLED;
    }
    if (ch == 'x') {
        ui_export_sweep(lab);
        lab->dirty |= UI_D_STATUS;
        return UI_ACT_HANDLED;
    }
    return ui_job_screen_key(lab, ch, sweep_active(lab));
}

static const char *const sweep_help[] = {
    "  c           cancel (points stay)      l   log / linear samples/s",
    "  arrows      the point to explain      e   Explain panel / chart",
    "  x           export CSV + JSON         Enter Esc   back to setup",
    NULL,
};

const ui_screen_def ui_sweep_screen = {
    .name = "sweep",
    .help_title = "Batch sweep",
    .help = sweep_help,
    .state_size = sizeof(ui_sweep_state),
    .close = sweep_stop,
    .enter = sweep_enter,
    .leave = sweep_stop,
    .draw = sweep_draw,
    .key = ui_sweep_screen_key,
    .poll = sweep_poll,
    .active = sweep_active,
};
