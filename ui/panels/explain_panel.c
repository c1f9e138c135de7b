/* ui/panels/explain_panel.c - the Explain panel: for each running job, or for the
 * sweep point selected, the cost model's predicted step and its split, the
 * measured step and its phases, the regime, why and what would help; the
 * calibration's age and quality; the three ways a GPU would run the step,
 * predicted for the profile of the GPU the job runs on when one ships
 * (else the default, marked so); and at the preset's own batch what
 * its original experiment measured beside the prediction for the same job.
 * A point of a GPU that is not here is predicted and says so. It sits
 * beside the charts when the terminal has room (ui/text/layout.c) and otherwise
 * replaces the chart while `e` has it shown. The text is ui/text/explain_text.c's;
 * this file only gathers and draws it. */
#include "draw.h"
#include "lab_state.h"
#include "explain_panel.h"
#include "screens/sweep_screen.h"
#include "screens/dashboard.h"
#include "text/format.h"
#include "race_predicted.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Appends src's rows to dst (as many as it holds). */
static void append_text(ui_text *dst, const ui_text *src)
{
    for (int i = 0; i < src->n; i++)
        ui_text_addf(dst, src->style[i], "%s", src->line[i]);
}

/* The panel's whole text, scrolled when it is longer than the panel
 * (PgUp PgDn, ui/panels/job_keys.c): nothing is cut to fit. */
static void draw_panel_text(ui_lab *lab, ui_rect box, const ui_text *all)
{
    ui_text_draw_scrolled(lab, all, box, &lab->explain_scroll, "PgDn", "PgUp");
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

/* The three ways predicted for prof at batch, priced again only when the
 * (preset, batch, profile) differs from the one kept in pr. */
static void ways_for(const nn_preset *p, int batch, const nn_gpu_profile *prof, ui_explain_priced *pr,
                     ui_explain_context *ctx)
{
    char now[sizeof pr->ways_key];
    snprintf(now, sizeof now, "%s/%d/%s", p->name, batch, prof->id);
    if (strcmp(now, pr->ways_key) != 0) {
        nn_explanation e[NN_GPU_WAYS];
        nn_profile_predict(p, batch, prof, e);
        for (int w = 0; w < NN_GPU_WAYS; w++)
            pr->way_us[w] = e[w].predicted_us;
        snprintf(pr->ways_key, sizeof pr->ways_key, "%s", now);
    }
    memcpy(ctx->way_us, pr->way_us, sizeof pr->way_us);
    ctx->has_ways = 1;
    ctx->profile_name = prof->name;
}

/* The write-up's job beside a job of batch and epochs: compared only when it
 * is the write-up's own, else shown as the original's (nn_writeup_text).
 * Looked up again only when its inputs differ from those kept in pr. */
static void writeup_for(const nn_preset *p, int batch, int epochs, const nn_gpu_profile *prof,
                        ui_explain_priced *pr, ui_explain_context *ctx)
{
    char now[sizeof pr->writeup_key];
    snprintf(now, sizeof now, "%s/%s/%d/%d", p->name, prof ? prof->id : "", batch, epochs);
    if (strcmp(now, pr->writeup_key) != 0) {
        pr->has_writeup = nn_writeup_for_job(p, batch, epochs, prof, &pr->writeup) == 0;
        snprintf(pr->writeup_key, sizeof pr->writeup_key, "%s", now);
    }
    ctx->has_writeup = pr->has_writeup;
    ctx->writeup = pr->writeup;
}

/* ---- the dashboard ------------------------------------------------------------------ */

/* The profile a job on `device` is compared with: the profile of that GPU
 * when one ships (nn_profile_for_device, the CLI's rule too), else the
 * default. *mark is NULL for the GPU's own profile or a CPU job, else the
 * words that say no profile matches this GPU. The match is looked up again
 * only when the GPU's description changes. */
static const nn_gpu_profile *profile_for_job(const ui_lab *lab, const ui_dashboard_state *ds, ui_explain_job *kj,
                                             const char *device, const char **mark)
{
    const nn_device_status *st = ui_gpu_here(lab, device);
    *mark = NULL;
    if (st) {
        if (strcmp(kj->matched_for, st->description) != 0) {
            snprintf(kj->matched_for, sizeof kj->matched_for, "%s", st->description);
            kj->has_prof = nn_profile_for_device(st->description, &kj->prof) == 0;
        }
        if (kj->has_prof)
            return &kj->prof;
        *mark = "no profile of this GPU";
    }
    return ds->has_default ? &ds->default_prof : NULL;
}

/* Job j's convolution algorithms, read from the job (under its lock) only
 * when its step or state moved since the last read. */
static void conv_for(const ui_run_job *j, ui_explain_job *kj, ui_explain_context *ctx)
{
    if (!j->job)
        return;
    if (!kj->conv_read || kj->conv_step != j->snap.step || kj->conv_state != (int)j->snap.state) {
        int n = nn_job_conv_algorithms(j->job, kj->conv, UI_CONV_MAX);
        kj->n_conv = n < UI_CONV_MAX ? n : UI_CONV_MAX;
        kj->conv_step = j->snap.step;
        kj->conv_state = (int)j->snap.state;
        kj->conv_read = 1;
    }
    ctx->conv = kj->conv;
    ctx->n_conv = kj->n_conv;
}

void ui_explain_jobs_init(ui_lab *lab, ui_dashboard_state *ds)
{
    char err[NN_ERR_LEN];
    /* the settings' GPU profile (as the race and the sweep), read at each run */
    ds->has_default = ui_predicted_profile(lab, &ds->default_prof, err, sizeof err) == 0;
    for (int k = 0; k < UI_RUN_MAX_JOBS; k++) {
        const char *why = "";
        const nn_calibration *cal = NULL;
        if (k < lab->run.n_jobs)
            cal = nn_cal_store_get(&lab->cals, lab->run.j[k].device, &why);
        nn_explainer_reset(&ds->explain[k], cal, why);
        ds->explain_job[k].conv_read = 0;   /* a new job: its list is read again */
    }
}

int ui_explain_jobs_update(ui_lab *lab, ui_dashboard_state *ds)
{
    int changed = 0;
    for (int k = 0; k < lab->run.n_jobs; k++) {
        nn_explain_inputs in;
        if (nn_observe_inputs(&lab->run.j[k].snap, &in) == 0)
            changed |= nn_explainer_update(&ds->explain[k], &lab->run.cfg.preset, &in);
    }
    return changed;
}

/* Job k's context: what was priced and read is kept in ds and done again
 * only when its inputs change; calib holds the calibration's line, which
 * says its age and so is written at each frame. */
static void job_context(ui_lab *lab, ui_dashboard_state *ds, int k, ui_explain_context *ctx, char *calib,
                        size_t calib_len)
{
    const ui_run *r = &lab->run;
    const ui_run_job *j = &r->j[k];
    const nn_explainer *x = &ds->explain[k];
    ui_explain_job *kj = &ds->explain_job[k];
    const char *mark;
    const nn_gpu_profile *prof = profile_for_job(lab, ds, kj, j->device, &mark);
    memset(ctx, 0, sizeof *ctx);
    conv_for(j, kj, ctx);
    if (x->has_cal) {
        nn_calibration_describe(&x->cal, (long long)time(NULL), calib, calib_len);
        ctx->calibration = calib;
    }
    if (prof)
        ways_for(&r->cfg.preset, r->cfg.batch, prof, &kj->priced, ctx);
    if (prof && mark) {              /* "T4 (no profile of this GPU)" */
        snprintf(kj->label, sizeof kj->label, "%s (%s)", prof->name, mark);
        ctx->profile_name = kj->label;
    }
    writeup_for(&r->cfg.preset, r->cfg.batch, r->cfg.epochs, prof, &kj->priced, ctx);
}

void ui_explain_draw_run(ui_lab *lab, ui_dashboard_state *ds)
{
    const ui_run *r = &lab->run;
    int replaces;
    ui_rect box = ui_explain_rect(&lab->layout, lab->explain_shown, &replaces), in = ui_rect_inner(box);
    if (in.w <= 0 || in.h <= 0)
        return;
    ui_box(lab, box, replaces ? "Explain (e: back to the chart)" : "Explain: model vs measured");
    ui_text *t = &ds->explain_text, *all = &ds->explain_all;
    all->n = 0;
    for (int k = 0; k < r->n_jobs; k++) {
        const ui_run_job *j = &r->j[k];
        ui_explain_context ctx;
        char calib[NN_ERR_LEN];
        nn_step_measure m;
        nn_measure_step(&j->snap, &m);
        job_context(lab, ds, k, &ctx, calib, sizeof calib);
        ui_explain_format_in(&ds->explain[k], &ctx, j->device, r->cfg.batch, &m, in.w, UI_TEXT_ROWS, t);
        if (k > 0)
            ui_text_addf(all, UI_TS_NORMAL, "%s", "");   /* a blank row between the two jobs */
        append_text(all, t);
    }
    draw_panel_text(lab, box, all);
}

/* ---- the sweep ---------------------------------------------------------------------- */

/* The point explained: the latest measured while following, else the one
 * the keys moved to; -1 when there is none yet. */
int ui_explain_sweep_selected(const ui_lab *lab, const ui_sweep_state *ss, int *d, int *i)
{
    const nn_sweep *sw = &lab->sweep;
    *d = ss->follow ? sw->latest_dev : ss->sel_dev;
    *i = ss->follow ? sw->latest_batch : ss->sel_batch;
    return *d >= 0 && *d < sw->n_devices && *i >= 0 && *i < sw->n_batches ? 0 : -1;
}

/* Points x at the calibration of device d (kept while it is the same
 * device and the same kind of figures: measured, or a profile's). */
static void sweep_explain_for(const ui_lab *lab, ui_sweep_state *ss, int d)
{
    const nn_sweep *sw = &lab->sweep;
    nn_explainer *x = &ss->explain;
    if (!sw->has_cal[d])
        nn_explainer_reset(x, NULL, sw->cal_why[d]);
    else if (!x->has_cal || strcmp(x->cal.device, sw->cal[d].device) != 0 || x->cal.profile != sw->cal[d].profile)
        nn_explainer_reset(x, &sw->cal[d], NULL);
}

/* Point (d, i)'s context: a predicted point is labelled with its way and
 * profile; the ways at its batch (the predicted devices' points, or the
 * default profile's); the write-up at the preset's batch; a measured GPU
 * point's profile prediction. label and calib hold the strings. */
static void sweep_context(const nn_sweep *sw, ui_sweep_state *ss, int d, int i, ui_explain_context *ctx,
                          char *label, size_t label_len, char *calib, size_t calib_len)
{
    const nn_gpu_profile *prof = sw->has_profile ? &sw->prof : ss->has_profile ? &ss->profile : NULL;
    memset(ctx, 0, sizeof *ctx);
    if (sw->predicted[d] || sw->external[d]) {   /* the device and its way (nnlab/sweep.h) */
        snprintf(label, label_len, "%s %s%s", sw->device[d], nn_sweep_way_word(sw, d),
                 sw->predicted[d] && !sw->cal[d].profile ? " (predicted)" : "");
        ctx->label = label;
        ctx->predicted_for = sw->predicted[d] && sw->cal[d].profile ? sw->prof.name : NULL;
    }
    if (sw->has_cal[d]) {
        nn_calibration_describe(&sw->cal[d], (long long)time(NULL), calib, calib_len);
        ctx->calibration = calib;
    }
    if (prof)
        ways_for(&sw->base.preset, sw->batch[i], prof, &ss->priced, ctx);
    ctx->profile_us = sw->pt[d][i].profile_us;
    writeup_for(&sw->base.preset, sw->batch[i], sw->base.preset.epochs, prof, &ss->priced, ctx);
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

void ui_explain_draw_sweep(ui_lab *lab, ui_sweep_state *ss)
{
    const nn_sweep *sw = &lab->sweep;
    int replaces, d, i;
    ui_rect box = ui_explain_rect(&lab->layout, lab->explain_shown, &replaces), in = ui_rect_inner(box);
    if (in.w <= 0 || in.h <= 0)
        return;
    ui_box(lab, box, replaces ? "Explain (e: back to the chart)" : "Explain the selected point");
    if (ui_explain_sweep_selected(lab, ss, &d, &i) != 0) {
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
    sweep_explain_for(lab, ss, d);
    if (pt->has_inputs)              /* the same inputs, so the same regime and prediction as the table's */
        (void)nn_explainer_update(&ss->explain, &sw->base.preset, &pt->in);
    sweep_context(sw, ss, d, i, &ctx, label, sizeof label, calib, sizeof calib);
    ui_explain_format_in(&ss->explain, &ctx, sw->device[d], sw->batch[i], &pt->measured, in.w, UI_TEXT_ROWS,
                         &ss->explain_text);
    draw_panel_text(lab, box, &ss->explain_text);
}

int ui_explain_sweep_key(ui_lab *lab, ui_sweep_state *ss, int ch)
{
    const nn_sweep *sw = &lab->sweep;
    int d, i;
    if (ch != KEY_UP && ch != KEY_DOWN && ch != KEY_LEFT && ch != KEY_RIGHT)
        return 0;
    if (sw->n_devices == 0 || sw->n_batches == 0)
        return 1;
    if (ui_explain_sweep_selected(lab, ss, &d, &i) != 0)
        d = 0, i = 0;
    if (ch == KEY_UP)
        i = i > 0 ? i - 1 : 0;
    else if (ch == KEY_DOWN)
        i = i + 1 < sw->n_batches ? i + 1 : i;
    else if (ch == KEY_LEFT)
        d = d > 0 ? d - 1 : 0;
    else
        d = d + 1 < sw->n_devices ? d + 1 : d;
    ss->follow = 0;                  /* the user picked: stop following the latest */
    ss->sel_dev = d;
    ss->sel_batch = i;
    lab->dirty |= UI_D_SIDE | UI_D_EXPLAIN;
    return 1;
}
