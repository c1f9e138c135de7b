/* ui/explain_panel.c - the Explain panel: for each running job, or for the
 * sweep point selected, the cost model's predicted step and its split, the
 * measured step and its phases, the regime, why and what would help; the
 * calibration's age and quality; the three ways a GPU would run the step,
 * predicted for the default GPU profile; and at the preset's own batch what
 * its original experiment measured beside the prediction for the same job.
 * A point of a GPU that is not here is predicted and says so. It sits
 * beside the charts when the terminal has room (ui/layout.c) and otherwise
 * replaces the chart while `e` has it shown. The text is ui/explain_text.c's;
 * this file only gathers and draws it. */
#include "ui.h"
#include "sweep_screen.h"
#include "dashboard.h"
#include "format.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* The convolution algorithms the panel lists at most (LeNet has 6). */
#define UI_CONV_MAX 32

static attr_t style_attr(const ui_lab *lab, int style)
{
    switch (style) {
    case UI_TS_BOLD: return A_BOLD;
    case UI_TS_DIM: return ui_attr(lab, UI_DIM);
    case UI_TS_OK: return ui_attr(lab, UI_OK);
    case UI_TS_ERROR: return ui_attr(lab, UI_ERROR);
    default: return A_NORMAL;
    }
}

static int draw_text(const ui_lab *lab, const ui_text *t, int y, int x, int w)
{
    for (int i = 0; i < t->n; i++)
        ui_put(y + i, x, w, style_attr(lab, t->style[i]), t->line[i]);
    return t->n;
}

void ui_explain_toggle(ui_lab *lab)
{
    if (lab->layout.explain.w > 0) {
        ui_set_message(lab, 0, "the Explain panel is shown beside the charts at this size");
        return;
    }
    lab->explain_shown = !lab->explain_shown;
    lab->dirty |= UI_D_CHART | UI_D_EXPLAIN;
}

/* ---- what the panel says beyond the model ---------------------------------------------- */

/* The default GPU profile, read once (UI thread only); NULL when there is none. */
static const nn_gpu_profile *default_profile(void)
{
    static nn_gpu_profile prof;
    static int tried, found;
    char err[NN_ERR_LEN];
    if (!tried) {
        tried = 1;
        found = nn_profile_find(nn_profile_default_name(), &prof, err, sizeof err) == 0;
    }
    return found ? &prof : NULL;
}

/* The three ways predicted for prof at batch, kept for the last (preset,
 * batch, profile) asked: the panel is drawn many times a second. */
static void ways_for(const nn_preset *p, int batch, const nn_gpu_profile *prof, ui_explain_context *ctx)
{
    static char key[NN_NAME_LEN * 2 + 16];
    static double us[NN_GPU_WAYS];
    static nn_explanation e[NN_GPU_WAYS];
    char now[sizeof key];
    snprintf(now, sizeof now, "%s/%d/%s", p->name, batch, prof->id);
    if (strcmp(now, key) != 0) {
        nn_profile_predict(p, batch, prof, e);
        for (int w = 0; w < NN_GPU_WAYS; w++)
            us[w] = e[w].predicted_us;
        snprintf(key, sizeof key, "%s", now);
    }
    memcpy(ctx->way_us, us, sizeof us);
    ctx->has_ways = 1;
    ctx->profile_name = prof->name;
}

/* The write-up's job beside a job of batch and epochs: compared only when it
 * is the write-up's own, else shown as the original's (nn_writeup_text). */
static void writeup_for(const nn_preset *p, int batch, int epochs, const nn_gpu_profile *prof,
                        ui_explain_context *ctx)
{
    static char key[NN_NAME_LEN * 2 + 48];
    static nn_writeup w;
    static int has;
    char now[sizeof key];
    snprintf(now, sizeof now, "%s/%s/%d/%d", p->name, prof ? prof->id : "", batch, epochs);
    if (strcmp(now, key) != 0) {
        has = nn_writeup_for_job(p, batch, epochs, prof, &w) == 0;
        snprintf(key, sizeof key, "%s", now);
    }
    ctx->has_writeup = has;
    ctx->writeup = w;
}

/* ---- the dashboard ------------------------------------------------------------------ */

void ui_explain_jobs_init(ui_lab *lab)
{
    for (int k = 0; k < 2; k++) {
        const char *why = "";
        const nn_calibration *cal = NULL;
        if (k < lab->run.n_jobs)
            cal = nn_cal_store_get(&lab->cals, lab->run.j[k].device, &why);
        nn_explainer_reset(&ui_dashboard_of(lab)->explain[k], cal, why);
    }
}

int ui_explain_jobs_update(ui_lab *lab)
{
    int changed = 0;
    for (int k = 0; k < lab->run.n_jobs; k++) {
        nn_explain_inputs in;
        if (nn_observe_inputs(&lab->run.j[k].snap, &in) == 0)
            changed |= nn_explainer_update(&ui_dashboard_of(lab)->explain[k], &lab->run.cfg.preset, &in);
    }
    return changed;
}

void ui_explain_draw_run(ui_lab *lab)
{
    static ui_text t;                /* 12 KB: kept off the stack (UI thread only) */
    const ui_run *r = &lab->run;
    int replaces;
    ui_rect box = ui_explain_rect(&lab->layout, lab->explain_shown, &replaces), in = ui_rect_inner(box);
    if (in.w <= 0 || in.h <= 0)
        return;
    ui_box(lab, box, replaces ? "Explain (e: back to the chart)" : "Explain: model vs measured");
    int y = in.y, per_job = r->n_jobs == 2 ? (in.h - 1) / 2 : in.h;
    for (int k = 0; k < r->n_jobs; k++) {
        const ui_run_job *j = &r->j[k];
        const nn_explainer *x = &ui_dashboard_of(lab)->explain[k];
        const nn_gpu_profile *prof = default_profile();
        ui_explain_context ctx;
        char calib[NN_ERR_LEN];
        nn_step_measure m;
        static nn_conv_algorithm_info conv[UI_CONV_MAX];
        nn_measure_step(&j->snap, &m);
        memset(&ctx, 0, sizeof ctx);
        if (j->job) {
            int n = nn_job_conv_algorithms(j->job, conv, UI_CONV_MAX);
            ctx.conv = conv;
            ctx.n_conv = n < UI_CONV_MAX ? n : UI_CONV_MAX;
        }
        if (x->has_cal) {
            nn_calibration_describe(&x->cal, (long long)time(NULL), calib, sizeof calib);
            ctx.calibration = calib;
        }
        if (prof)
            ways_for(&r->cfg.preset, r->cfg.batch, prof, &ctx);
        writeup_for(&r->cfg.preset, r->cfg.batch, r->cfg.epochs, prof, &ctx);
        ui_explain_format_in(x, &ctx, j->device, r->cfg.batch, &m, in.w, per_job, &t);
        draw_text(lab, &t, y, in.x, in.w);
        y += per_job + 1;            /* a blank row between the two jobs */
    }
}

/* ---- the sweep ---------------------------------------------------------------------- */

/* The point explained: the latest measured while following, else the one
 * the keys moved to; -1 when there is none yet. */
int ui_explain_sweep_selected(const ui_lab *lab, int *d, int *i)
{
    const nn_sweep *sw = &lab->sweep;
    *d = ui_sweep_of(lab)->follow ? sw->latest_dev : ui_sweep_of(lab)->sel_dev;
    *i = ui_sweep_of(lab)->follow ? sw->latest_batch : ui_sweep_of(lab)->sel_batch;
    return *d >= 0 && *d < sw->n_devices && *i >= 0 && *i < sw->n_batches ? 0 : -1;
}

/* Points x at the calibration of device d (kept while it is the same
 * device and the same kind of figures: measured, or a profile's). */
static void sweep_explain_for(ui_lab *lab, int d)
{
    const nn_sweep *sw = &lab->sweep;
    nn_explainer *x = &ui_sweep_of(lab)->explain;
    if (!sw->has_cal[d])
        nn_explainer_reset(x, NULL, sw->cal_why[d]);
    else if (!x->has_cal || strcmp(x->cal.device, sw->cal[d].device) != 0 || x->cal.profile != sw->cal[d].profile)
        nn_explainer_reset(x, &sw->cal[d], NULL);
}

/* Point (d, i)'s context: a predicted point is labelled with its way and
 * profile; the ways at its batch (the predicted devices' points, or the
 * default profile's); the write-up at the preset's batch; a measured GPU
 * point's profile prediction. label and calib hold the strings. */
static void sweep_context(const nn_sweep *sw, int d, int i, ui_explain_context *ctx, char *label, size_t label_len,
                          char *calib, size_t calib_len)
{
    const nn_gpu_profile *prof = sw->has_profile ? &sw->prof : default_profile();
    memset(ctx, 0, sizeof *ctx);
    if (sw->predicted[d]) {
        snprintf(label, label_len, "gpu %s", nn_gpu_way_key((nn_gpu_way)sw->way[d]));
        ctx->label = label;
        ctx->predicted_for = sw->prof.name;
    }
    if (sw->has_cal[d]) {
        nn_calibration_describe(&sw->cal[d], (long long)time(NULL), calib, calib_len);
        ctx->calibration = calib;
    }
    if (prof)
        ways_for(&sw->base.preset, sw->batch[i], prof, ctx);
    ctx->profile_us = sw->pt[d][i].profile_us;
    writeup_for(&sw->base.preset, sw->batch[i], sw->base.preset.epochs, prof, ctx);
}

static const char *point_state(int state)
{
    switch (state) {
    case NN_POINT_RUNNING: return "being measured";
    case NN_POINT_FAILED: return "failed";
    case NN_POINT_CANCELLED: return "cancelled";
    default: return "not measured yet";
    }
}

void ui_explain_draw_sweep(ui_lab *lab)
{
    static ui_text t;
    const nn_sweep *sw = &lab->sweep;
    int replaces, d, i;
    ui_rect box = ui_explain_rect(&lab->layout, lab->explain_shown, &replaces), in = ui_rect_inner(box);
    if (in.w <= 0 || in.h <= 0)
        return;
    ui_box(lab, box, replaces ? "Explain (e: back to the chart)" : "Explain the selected point");
    if (ui_explain_sweep_selected(lab, &d, &i) != 0) {
        ui_put(in.y, in.x, in.w, ui_attr(lab, UI_DIM), "no point measured yet");
        return;
    }
    const nn_sweep_point *pt = &sw->pt[d][i];
    if (pt->state != NN_POINT_DONE) {
        ui_putf(in.y, in.x, in.w, A_BOLD, "%s, batch %d: %s", sw->device[d], sw->batch[i], point_state(pt->state));
        ui_put(in.y + 1, in.x, in.w, ui_attr(lab, UI_DIM), "Up Down Left Right pick another point");
        return;
    }
    ui_explain_context ctx;
    char label[48], calib[NN_ERR_LEN];
    sweep_explain_for(lab, d);
    if (pt->has_inputs)              /* the same inputs, so the same regime and prediction as the table's */
        (void)nn_explainer_update(&ui_sweep_of(lab)->explain, &sw->base.preset, &pt->in);
    sweep_context(sw, d, i, &ctx, label, sizeof label, calib, sizeof calib);
    ui_explain_format_in(&ui_sweep_of(lab)->explain, &ctx, sw->device[d], sw->batch[i], &pt->measured, in.w, in.h,
                         &t);
    draw_text(lab, &t, in.y, in.x, in.w);
}

int ui_explain_sweep_key(ui_lab *lab, int ch)
{
    const nn_sweep *sw = &lab->sweep;
    int d, i;
    if (ch != KEY_UP && ch != KEY_DOWN && ch != KEY_LEFT && ch != KEY_RIGHT)
        return 0;
    if (sw->n_devices == 0 || sw->n_batches == 0)
        return 1;
    if (ui_explain_sweep_selected(lab, &d, &i) != 0)
        d = 0, i = 0;
    if (ch == KEY_UP)
        i = i > 0 ? i - 1 : 0;
    else if (ch == KEY_DOWN)
        i = i + 1 < sw->n_batches ? i + 1 : i;
    else if (ch == KEY_LEFT)
        d = d > 0 ? d - 1 : 0;
    else
        d = d + 1 < sw->n_devices ? d + 1 : d;
    ui_sweep_of(lab)->follow = 0;           /* the user picked: stop following the latest */
    ui_sweep_of(lab)->sel_dev = d;
    ui_sweep_of(lab)->sel_batch = i;
    lab->dirty |= UI_D_SIDE | UI_D_EXPLAIN;
    return 1;
}
