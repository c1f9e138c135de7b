/* ui/screens/dashboard.c - the run screen: the charts (ui/panels/run_chart.c), the
 * validation table, one progress row and one
 * phase bar per job, the side-by-side summary, the machine's CPU and GPU,
 * and the Explain panel (ui/panels/explain_panel.c) beside them or, on a narrow
 * terminal, in the chart's place while `e` shows it. Data comes from
 * ui/text/run.c copies; nothing here holds an engine lock. */
#include "draw.h"
#include "lab_state.h"
#include "panels/job_keys.h"
#include "dashboard.h"
#include "text/format.h"
#include "setup_fields.h"
#include "nnlab/progress.h"
#include "nnlab/divergence.h"
#include "panels/jacobian_run.h"
#include "panels/run_view.h"
#include "panels/race_predicted.h"
#include "panels/race_view.h"
#include "panels/rank_rows.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYS_PERIOD_S 1.0             /* /proc/stat and NVML: once a second */

/* Starts a run of the settings; -1 (said on the status row) when it cannot. */
static int run_enter(ui_lab *lab)
{
    nn_job_config cfg;
    char err[NN_ERR_LEN];
    const char *names[2];
    const nn_device_status *dev[2] = { NULL, NULL };
    ui_dashboard_state *ds = ui_dashboard_of(lab);
    ui_ranks_pred_stop(&ds->ranks_pred);           /* whatever run came before, */
    ui_ranks_pred_settle(&ds->ranks_pred);         /* and its calibration: none beside this run */
    int predicted = ui_predicted_run_start(lab);   /* a GPU not here: raced as predicted */
    if (predicted != 0) {
        if (predicted < 0)
            return -1;
        lab->log_scale = 0;
        ui_explain_jobs_init(lab, ds);
        ds->has_ways = ui_race_ways_init(lab, &ds->ways);   /* the framework way races beside it */
        if (ds->has_ways)
            ui_predicted_lanes_from(&lab->run, &ds->ways);
        ui_race_torch_arm(lab, &ds->torch, ds->has_ways);
        return 0;
    }
    int n = ui_settings_devices(&lab->chosen.set, names);
    for (int k = 0; k < n; k++)
        if (!(dev[k] = ui_device_status(lab, names[k]))) {
            ui_set_message(lab, 1, "cannot start: %s: not a device here", names[k]);
            return -1;
        }
    ui_setup_job_config(lab, &cfg);
    ui_run_free(&lab->run);
    if (ui_run_start(&lab->run, &cfg, dev[0], dev[1], lab->chosen.set.sequential, err, sizeof err) != 0) {
        ui_run_free(&lab->run);
        ui_set_message(lab, 1, "cannot start: %s", err);
        return -1;
    }
    lab->log_scale = 0;
    ui_explain_jobs_init(lab, ds);
    ui_ranks_pred_start(lab, &ds->ranks_pred);          /* a race of ranks: the model's figure beside */
    ds->has_ways = ui_race_ways_init(lab, &ds->ways);   /* a race with a GPU: the framework pair beside */
    ui_race_torch_arm(lab, &ds->torch, ds->has_ways);
    return 0;
}

int ui_dashboard_ways(const ui_lab *lab, nn_race_ways *out)
{
    const ui_dashboard_state *ds = ui_dashboard_of(lab);
    if (!ds->has_ways)
        return 0;
    ui_race_ways_now(&lab->run, &ds->ways, out);   /* the lanes measured so far in place */
    return 1;
}

static int run_active(const ui_lab *lab)
{
    return ui_run_active(&lab->run);
}

static void run_stop(ui_lab *lab)
{
    ui_race_torch_stop(&ui_dashboard_of(lab)->torch);
    ui_ranks_pred_stop(&ui_dashboard_of(lab)->ranks_pred);
    ui_run_free(&lab->run);          /* cancels and waits for the trainers */
}

/* The race's framework lanes measured with PyTorch once its jobs ended: a
 * measured lane leaves the predicted bars and the verdicts rest on it. */
static void poll_torch(ui_lab *lab)
{
    ui_dashboard_state *ds = ui_dashboard_of(lab);
    if (!ui_race_torch_poll(lab, &ds->torch, &ds->ways))
        return;
    ui_predicted_lanes_from(&lab->run, &ds->ways);
    lab->dirty |= UI_D_JOBS | UI_D_SIDE | UI_D_STATUS;
}

/* Leaving the run: it joins the session's earlier runs (`o` overlays them). */
static void run_leave(ui_lab *lab)
{
    ui_run_cancel(&lab->run);
    ui_overlay_keep(&lab->past, &lab->run, lab->run.cfg.lr > 0 ? lab->run.cfg.lr : lab->run.cfg.preset.lr);
    run_stop(lab);
}

static void run_close(ui_lab *lab)
{
    run_stop(lab);
    ui_ranks_pred_settle(&ui_dashboard_of(lab)->ranks_pred);
    ui_overlay_free(&lab->past);
}

/* New data marks panels pending (drawn at the next frame slot); a change of
 * state is drawn at once. */
/* A job that just diverged is said on the status row as well. */
static void tell_divergence(ui_lab *lab, const nn_job_state before[UI_RUN_MAX_JOBS])
{
    const ui_run *r = &lab->run;
    for (int k = 0; k < r->n_jobs; k++)
        if (r->j[k].snap.state == NN_JOB_DIVERGED && before[k] != NN_JOB_DIVERGED)
            ui_set_message(lab, 1, "%s: %s", ui_race_label(r, k), r->j[k].snap.error);
}

static void run_poll(ui_lab *lab, double now)
{
    if (now - lab->sys_at >= SYS_PERIOD_S) {
        ui_sysinfo_sample(&lab->sys);
        lab->sys_at = now;
        lab->dirty |= UI_D_SYS;
    }
    nn_job_state before[UI_RUN_MAX_JOBS];
    for (int k = 0; k < UI_RUN_MAX_JOBS; k++)
        before[k] = lab->run.j[k].snap.state;
    unsigned bits = ui_run_poll(&lab->run);
    if (bits & UI_RUN_STATE) {
        tell_divergence(lab, before);
        ui_run_tell_cancel_end(lab);     /* "cancelling..." ends */
    }
    if (bits & UI_RUN_POINTS)
        lab->pending |= UI_D_CHART | UI_D_SIDE;
    if (bits & UI_RUN_PROGRESS)
        lab->pending |= UI_D_JOBS | UI_D_EXPLAIN;   /* the measured step moves */
    if (bits & UI_RUN_STATE)
        lab->dirty |= UI_D_TITLE | UI_D_JOBS | UI_D_SIDE | UI_D_CHART | UI_D_STATUS | UI_D_EXPLAIN;
    /* the model runs again only when the job's batch, device, switches
     * or launch count changed, not on every snapshot */
    if ((bits & (UI_RUN_PROGRESS | UI_RUN_STATE)) && ui_explain_jobs_update(lab, ui_dashboard_of(lab)))
        lab->dirty |= UI_D_EXPLAIN;
    if (ui_predicted_moving(lab))    /* predicted lanes go on at the model's pace */
        lab->pending |= UI_D_JOBS;
    poll_torch(lab);
    if (ui_ranks_pred_poll(lab, &ui_dashboard_of(lab)->ranks_pred))
        lab->dirty |= UI_D_SIDE | UI_D_STATUS;
}

/* ---- job rows ----------------------------------------------------------------------- */

static const char *state_tag(const ui_run *r, const ui_run_job *j)
{
    if (!j->started)
        return r->cancelled ? "not run" : "waiting";
    return nn_job_state_name(j->snap.state);
}

static void draw_job(ui_lab *lab, int k, int y, int x, int w)
{
    const ui_run *r = &lab->run;
    const ui_run_job *j = &r->j[k];
    char status[160], bar[512];
    const char *tag = state_tag(r, j);
    int lc = ui_race_label_width(r) + 1;   /* the label's column: "gpu eager" whole */
    ui_put(y, x, lc - 1, A_BOLD, ui_race_label(r, k));
    if (!j->started) {
        ui_run_not_started_text(r, k, status, sizeof status);
        ui_put_wrapped(y, x + lc, w - lc, 2, ui_attr(lab, UI_DIM), status);
        return;
    }
    if (j->snap.state == NN_JOB_FAILED) {
        ui_putf(y, x + lc, w - lc, ui_attr(lab, UI_ERROR), "failed: %s", j->error[0] ? j->error : j->snap.error);
        return;
    }
    if (j->snap.state == NN_JOB_DIVERGED) {   /* what it ran until then stays below */
        ui_putf(y, x + lc, w - lc, ui_attr(lab, UI_ERROR), "DIVERGED: %s", j->snap.error);
        ui_run_view_of(lab)->job_line(lab, j, y + 1, x, w - 1);
        return;
    }
    /* label, a 10-column bar, " 100% ", the state: the rest for the status, its parts whole */
    const ui_run_view *view = ui_run_view_of(lab);
    ui_fmt_job_status_fit(&j->snap, w - lc - 10 - 6 - 12, status, sizeof status);
    if (view->job_status) {          /* the view's own counts (a Jacobian's rows of J), whole parts */
        char own[160];
        view->job_status(&j->snap, own, sizeof own);
        ui_fit_parts(own, w - lc - 10 - 6 - 12, status, sizeof status);
    }
    double frac = j->snap.total_steps > 0 ? (double)j->snap.step / (double)j->snap.total_steps : 0;
    int bw = w - lc - 6 - (int)strlen(status) - 12;
    if (bw < 10)
        bw = 10;
    ui_bar_text(bar, sizeof bar, bw, frac, lab->utf8);
    ui_put(y, x + lc, bw, ui_attr(lab, ui_race_role(k, 0)), bar);
    ui_putf(y, x + lc + bw, w - lc - bw - 11, A_NORMAL, " %3.0f%% %s", 100.0 * frac, status);   /* the tag's 11 after */
    enum ui_role tr = j->snap.state == NN_JOB_PAUSED || j->snap.state == NN_JOB_CANCELLED ? UI_ERROR : UI_OK;
    int tx = x + w - 11;
    ui_putf(y, tx, 11, ui_attr(lab, tr), " %10s", tag);
    view->job_line(lab, j, y + 1, x, w - 1);
}

static void draw_jobs(ui_lab *lab)
{
    ui_rect box = lab->layout.jobs, in = ui_rect_inner(box);
    ui_box(lab, box, lab->run.n_jobs >= 2     ? "Jobs, side by side"
                     : lab->run.has_predicted ? "Job, and the ways predicted"
                                              : "Job");
    int y = in.y, end = in.y + in.h;
    for (int k = 0; k < lab->run.n_jobs && y + 1 < end; k++) {
        mvhline(y, in.x, ' ', in.w);
        mvhline(y + 1, in.x, ' ', in.w);
        draw_job(lab, k, y, in.x, in.w);
        y += 2;
        /* a job over ranks: a row a rank under it (the rows left over, the
         * jobs after it keeping theirs) */
        int want = ui_rank_rows_wanted(&lab->run, k), left = end - y - 2 * (lab->run.n_jobs - 1 - k);
        int rows = want < left ? want : left;
        for (int i = 0; i < rows; i++)
            mvhline(y + i, in.x, ' ', in.w);
        ui_rank_rows_draw(lab, &lab->run.j[k], y, in.x, in.w, rows);
        y += rows > 0 ? rows : 0;
    }
    if (ui_predicted_rows(lab) && y + 1 < end)
        ui_predicted_draw(lab, y, in.x, in.w);
}

/* ---- the machine -------------------------------------------------------------------- */

/* One character per core (a sparkline) when the cores do not fit as bars. */
static void draw_cpu_compact(ui_lab *lab, const ui_sysinfo *si, int y, int x, int w)
{
    static const char *const levels[8] = { "\u2581", "\u2582", "\u2583", "\u2584",
                                            "\u2585", "\u2586", "\u2587", "\u2588" };
    double sum = 0;
    for (int i = 0; i < si->n_cpus; i++)
        sum += si->cpu_pct[i];
    x += ui_putf(y, x, w, A_NORMAL, "avg %3.0f%% ", sum / si->n_cpus);
    for (int i = 0; i < si->n_cpus && x < COLS - 1; i++, x++) {
        int l = (int)(si->cpu_pct[i] / 100.0 * 7.999);
        char d[2] = { (char)('0' + (si->cpu_pct[i] >= 95 ? 9 : (int)(si->cpu_pct[i] / 10))), 0 };
        ui_put(y, x, 1, ui_attr(lab, UI_SERIES0), lab->utf8 ? levels[l < 0 ? 0 : l] : d);
    }
}

static void draw_cpu(ui_lab *lab, const ui_sysinfo *si, int y, int x, int w, int rows)
{
    const int cell = 19;             /* "12 [||||||||] 100% " */
    int per_row = (w - 5) / cell;
    ui_put(y, x, 4, A_BOLD, "CPU");
    if (!si->has_cpu) {
        ui_put(y, x + 5, w - 5, ui_attr(lab, UI_DIM), si->cpu_why[0] ? si->cpu_why : "measuring...");
        return;
    }
    if (per_row < 1 || si->n_cpus > per_row * rows) {
        draw_cpu_compact(lab, si, y, x + 5, w - 5);
        return;
    }
    for (int i = 0; i < si->n_cpus; i++) {
        char bar[64];
        int r = i / per_row, c = i % per_row;
        ui_bar_text(bar, sizeof bar, 8, si->cpu_pct[i] / 100.0, 0);
        for (char *p = bar; *p; p++)
            *p = *p == '#' ? '|' : ' ';   /* htop's look */
        ui_putf(y + r, x + 5 + c * cell, cell, A_NORMAL, "%2d [", i);
        ui_put(y + r, x + 9 + c * cell, 8, ui_attr(lab, UI_SERIES0), bar);
        ui_putf(y + r, x + 17 + c * cell, cell - 12, A_NORMAL, "]%4.0f%%", si->cpu_pct[i]);
    }
}

/* The GPU's row, and below it NVML's note; without NVML its reason takes
 * both rows, wrapped at words (the note is about NVML's figures). */
static void draw_gpu(ui_lab *lab, const ui_gpu_info *g, int y, int x, int w)
{
    char line[320], mem[64] = "mem n/a", clk[64] = "clocks n/a", util[32] = "util n/a";
    ui_put(y, x, 4, A_BOLD, "GPU");
    if (!g->valid) {
        snprintf(line, sizeof line, "n/a: %s", g->why);
        ui_put_wrapped(y, x + 5, w - 5, 2, ui_attr(lab, UI_DIM), line);
        return;
    }
    const char *note = w - 5 >= (int)strlen(UI_NVML_NOTE) ? UI_NVML_NOTE : UI_NVML_NOTE_SHORT;
    ui_put(y + 1, x + 5, w - 5, ui_attr(lab, UI_DIM), note);
    if (g->has_util)
        snprintf(util, sizeof util, "util %u%%", g->util_gpu);
    if (g->has_mem)
        snprintf(mem, sizeof mem, "mem %.1f/%.1f GiB", g->mem_used / 1073741824.0, g->mem_total / 1073741824.0);
    if (g->has_clocks)
        snprintf(clk, sizeof clk, "SM %u MHz, mem %u MHz", g->clock_sm, g->clock_mem);
    snprintf(line, sizeof line, "%s  %s  %s  %s", g->name, util, mem, clk);
    ui_put(y, x + 5, w - 5, A_NORMAL, line);
}

void ui_draw_sysinfo(ui_lab *lab, ui_rect box)
{
    ui_rect in = ui_rect_inner(box);
    ui_box(lab, box, "Machine");
    if (in.h < 3)
        return;
    draw_cpu(lab, &lab->sys, in.y, in.x, in.w, in.h - 2);
    draw_gpu(lab, &lab->sys.gpu, in.y + in.h - 2, in.x, in.w);
}

/* ---- the screen --------------------------------------------------------------------- */

static void draw_title(ui_lab *lab)
{
    char t[8192];                    /* room for every name the format can take (ASan builds check it) */
    ui_run_view_of(lab)->title(lab, t, sizeof t);
    ui_draw_title(lab, t);
}

static void run_draw(ui_lab *lab, unsigned dirty)
{
    int replaces;
    ui_dashboard_state *ds = ui_dashboard_of(lab);
    ui_rect ex = ui_explain_rect(&lab->layout, lab->explain_shown, &replaces);
    if (dirty & UI_D_TITLE)
        draw_title(lab);
    const ui_run_view *view = ui_run_view_of(lab);   /* the job's kind's panels (run_view.h) */
    if ((dirty & (UI_D_CHART | view->main_dirty)) && !replaces)
        view->draw_main(lab, ds, lab->layout.chart);
    if ((dirty & (UI_D_EXPLAIN | (replaces ? UI_D_CHART : 0u))) && ex.w > 0)
        view->draw_explain(lab, ds, ex, replaces);
    if (dirty & UI_D_SIDE)
        view->draw_side(lab, ds, lab->layout.side);
    if (dirty & UI_D_JOBS)
        draw_jobs(lab);
    if (dirty & UI_D_SYS)
        ui_draw_sysinfo(lab, lab->layout.sys);
    if (dirty & UI_D_STATUS)
        ui_draw_status(lab, view->keys(ui_run_active(&lab->run)));
}

ui_action ui_dashboard_key(ui_lab *lab, int ch)
{
    ui_run *r = &lab->run;
    const ui_run_view *view = ui_run_view_of(lab);
    if (view->key && view->key(lab, ch))
        return UI_ACT_HANDLED;
    if (ch == 's') {
        ui_dashboard_of(lab)->smooth = !ui_dashboard_of(lab)->smooth;
        ui_set_message(lab, 0, ui_dashboard_of(lab)->smooth ? "training loss smoothed (EMA 0.6; s: raw)" : "training loss raw");
        lab->dirty |= UI_D_CHART;
        return UI_ACT_HANDLED;
    }
    if (ch == 'c') {
        if (ui_run_active(r)) {
            ui_run_cancel(r);        /* collected by the next polls */
            ui_set_message(lab, 0, "cancelling...");
        }
        return UI_ACT_HANDLED;
    }
    if (ch == 'o') {
        lab->past.shown = !lab->past.shown;
        if (lab->past.n == 0)
            ui_set_message(lab, 0, "no earlier run in this session yet (o: overlay them once there are)");
        else
            ui_set_message(lab, 0, lab->past.shown ? "%d earlier run%s dimmed on the loss chart (o hides)"
                                                   : "earlier runs hidden (o shows)", lab->past.n,
                           lab->past.n > 1 ? "s" : "");
        lab->dirty |= UI_D_CHART | UI_D_STATUS;
        return UI_ACT_HANDLED;
    }
    if (ch == 'x') {
        view->export_run(lab, ui_dashboard_of(lab));
        lab->dirty |= UI_D_STATUS;
        return UI_ACT_HANDLED;
    }
    if (ch != 'p')
        return ui_job_screen_key(lab, ch, ui_run_active(r));
    if (ui_run_active(r) && ui_run_no_pause(r)) {
        ui_set_message(lab, 1, "%s", ui_run_no_pause(r));
        return UI_ACT_HANDLED;
    }
    if (ui_run_active(r)) {
        ui_run_toggle_pause(r);
        ui_set_message(lab, 0, r->paused ? "paused (p resumes)" : "resumed");
    }
    return UI_ACT_HANDLED;
}

static const char *const run_help[] = {
    "  p           pause / resume            c   cancel",
    "  l           log / linear loss axis    Enter Esc  back to setup",
    "  e           Explain panel for the chart (beside it from 130 columns)",
    "  s           smoothed / raw training loss   x   export CSV + JSON + SVG",
    "  o           overlay the session's earlier runs, dimmed (as TensorBoard)",
    "              (x: to $XDG_DATA_HOME/nnlab/exports, path on the status row)",
    "  a Jacobian run: no loss (no l, s); x writes its own CSV + JSON",
    "  a job predicted over 10 minutes asks first: y start  n not now",
    "  cpu + gpu: a row, a bar and a curve a job (cpu nnlab, gpu eager, gpu",
    "  graph); at the end each pair's ratio, the framework way predicted",
    NULL,
};

const ui_screen_def ui_run_screen = {
    .name = "run",
    .help_title = "Run dashboard",
    .help = run_help,
    .state_size = sizeof(ui_dashboard_state),
    .close = run_close,
    .enter = run_enter,
    .leave = run_leave,
    .draw = run_draw,
    .key = ui_dashboard_key,
    .poll = run_poll,
    .active = run_active,
};
