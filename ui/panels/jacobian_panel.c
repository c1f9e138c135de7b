/* ui/panels/jacobian_panel.c - see jacobian_panel.h. */
#include "jacobian_panel.h"
#include "draw.h"
#include "text/format.h"
#include "screens/setup_fields.h"
#include "race_predicted.h"

#include <stdio.h>
#include <string.h>

#include "nnlab/jacobian.h"
#include "nnlab/profile.h"
#include "util.h"

int ui_jacobian_run(const ui_lab *lab)
{
    return !nn_job_traits_of(lab->run.cfg.kind)->trains;
}

static const nn_job_config *run_cfg(const ui_lab *lab)
{
    return &lab->run.cfg;
}

/* The network, the val and the method of the run. */
static int run_shape(const ui_lab *lab, nn_jac_shape *s, long *val, enum nn_jac_method *m)
{
    const nn_job_config *c = run_cfg(lab);
    char err[NN_ERR_LEN];
    *val = c->jac_val > 0 ? c->jac_val : c->preset.task_val;
    *m = (enum nn_jac_method)c->jac_method;
    return nn_jac_shape_from_preset(&c->preset, c->preset.name, s, err, sizeof err);
}

void ui_jacobian_status(const nn_snapshot *s, char *buf, size_t len)
{
    char done[16], total[16], rate[16] = "-", el[16], eta[16] = "-";
    ui_fmt_si((double)s->step, done, sizeof done);
    ui_fmt_si((double)s->total_steps, total, sizeof total);
    ui_fmt_duration(s->elapsed_s, el, sizeof el);
    if (s->has_rate) {
        ui_fmt_si(s->samples_per_s, rate, sizeof rate);
        ui_fmt_duration(s->eta_s, eta, sizeof eta);
    }
    if (nn_job_state_ended(s->state))   /* nothing left to come: no ETA, and room for the rest */
        snprintf(buf, len, "rows %s/%s  %s rows/s  %s", done, total, rate, el);
    else
        snprintf(buf, len, "rows %s/%s  %s rows/s  %s  ETA %s", done, total, rate, el, eta);
}

void ui_jacobian_title(const ui_lab *lab, char *buf, size_t len)
{
    const ui_run *r = &lab->run;
    nn_jac_shape s;
    long val = 0;
    enum nn_jac_method m = NN_JAC_ROWS;
    run_shape(lab, &s, &val, &m);
    snprintf(buf, len, "nnlab - %s on %s%s%s: Jacobian by %s at val %ld", r->cfg.preset.name, r->j[0].device,
             r->n_jobs == 2 ? " and " : "", r->n_jobs == 2 ? r->j[1].device : "", nn_jac_method_name(m), val);
}

/* The predicted sweep for the run's network: this machine's cached CPU
 * calibration against the GPU's (a profile's when none is cached), the
 * framework's per-operation cost from the default profile. Kept for the
 * last network (in the run screen's state). 0, or -1 with why. */
/* The names the survey gives the CPU the sweep is predicted for (the
 * baseline) and the GPU ("" when it lists none: the profile stands in). */
static void sweep_devices(const ui_lab *lab, const char **cpu, const char **gpu)
{
    const nn_device_status *c = ui_device_baseline(lab), *g = ui_device_gpu(lab);
    *cpu = c ? c->name : "";
    *gpu = g ? g->name : "";
}

int ui_jacobian_sweep(const ui_lab *lab, ui_jacobian_kept *jk, const nn_jac_shape *s, const nn_jac_sweep **out,
                      const char **why)
{
    const char *cpu_name, *gpu_name;
    nn_calibration cpu, gpu;
    nn_gpu_profile prof;
    char err[NN_ERR_LEN];
    if (jk->have && memcmp(&jk->shape, s, sizeof jk->shape) == 0) {
        *out = &jk->sweep;
        return 0;
    }
    sweep_devices(lab, &cpu_name, &gpu_name);
    if (!cpu_name[0] || nn_calibration_load(cpu_name, &cpu) != 0) {
        *why = "the CPU is not calibrated yet (`nnlab calibrate`, or run a training preset once)";
        return -1;
    }
    int have_profile = ui_predicted_profile(lab, &prof, err, sizeof err) == 0;   /* the settings' */
    if (!gpu_name[0] || nn_calibration_load(gpu_name, &gpu) != 0) {
        if (!have_profile) {
            *why = "no GPU calibration and no GPU profile found";
            return -1;
        }
        nn_profile_calibration(&prof, &gpu);
    }
    nn_jac_framework fw = { 0, 0 };
    if (have_profile) {
        fw.cpu_op_us = prof.framework_op_us;
        fw.gpu_op_us = nn_profile_framework_gpu_us(&prof);
    }
    nn_jac_sweep_predict(s, NULL, 0, &cpu, &gpu, &fw, &jk->sweep);
    jk->shape = *s;
    jk->have = 1;
    *out = &jk->sweep;
    return 0;
}

/* The sweep's columns that fit in width: a 15-column label, then 9 a val;
 * the window holds the run's val (the first val at or above it). */
typedef struct val_window {
    int first, n;
} val_window;

static val_window fit_vals(const nn_jac_sweep *sw, long val, int width)
{
    val_window v = { 0, (width - 15) / 9 };
    int at = 0;
    if (v.n >= sw->n || v.n < 1) {
        v.n = v.n < 1 ? 1 : sw->n;
        return v;
    }
    while (at + 1 < sw->n && sw->val[at] < val)
        at++;
    v.first = at >= v.n ? at - v.n + 1 : 0;
    return v;
}

/* One line of the sweep: a label, then the seconds at each val shown. */
static void sweep_line(ui_text *t, int style, const char *label, val_window v, const double *sec)
{
    char row[512];
    int n = snprintf(row, sizeof row, "%-15s", label);
    for (int i = v.first; i < v.first + v.n && n < (int)sizeof row - 10; i++)
        n += snprintf(row + n, sizeof row - (size_t)n, " %8.3g", sec[i]);
    ui_text_addf(t, style, "%s", row);
}

static void sweep_verdict(ui_text *t, int width, const nn_jac_sweep *sw, enum nn_jac_way w, int m)
{
    char label[32], line[160];
    snprintf(label, sizeof label, "%s%s", nn_jac_method_name((enum nn_jac_method)m),
             w == NN_JAC_WAY_FRAMEWORK ? " fw" : "");
    /* in a column when the row has room, else "label:" before it: one row either way */
    for (int pad = 14; pad >= 0; pad -= 14) {
        if (sw->gpu_overtakes[w][m])
            snprintf(line, sizeof line, "%-*s%s GPU overtakes CPU at val %ld (predicted)", pad, label, pad ? "" : ":",
                     sw->gpu_overtakes[w][m]);
        else
            snprintf(line, sizeof line, "%-*s%s CPU faster up to val %ld (predicted)", pad, label, pad ? "" : ":",
                     sw->val[sw->n - 1]);
        if ((int)strlen(line) <= width)
            break;
    }
    ui_text_wrap(t, sw->gpu_overtakes[w][m] ? UI_TS_OK : UI_TS_NORMAL, width, UI_TEXT_ROWS, line);
}

/* nnlab's passes for every method, then the run's method as a framework
 * runs it eagerly (the seed's own experiment for rows), then the verdicts
 * ("fw": the framework's). */
static void sweep_text(const ui_lab *lab, ui_jacobian_kept *jk, const nn_jac_shape *s, enum nn_jac_method run_m,
                       long val, int width, ui_text *t)
{
    const nn_jac_sweep *sw;
    const char *why = "";
    char label[32], row[512];
    const char *name[2];
    sweep_devices(lab, &name[0], &name[1]);
    if (ui_jacobian_sweep(lab, jk, s, &sw, &why) != 0) {
        snprintf(row, sizeof row, "val sweep: %s", why);
        ui_text_wrap(t, UI_TS_DIM, width, UI_TEXT_ROWS, row);
        return;
    }
    snprintf(row, sizeof row, "val sweep, seconds, predicted (CPU: this machine; GPU: %s)", sw->gpu_name);
    ui_text_wrap(t, UI_TS_BOLD, width, UI_TEXT_ROWS, row);
    val_window v = fit_vals(sw, val, width);
    if (v.n < sw->n) {               /* the columns that do not fit: said, not cut */
        snprintf(row, sizeof row, "vals %ld to %ld of %ld to %ld shown: wider, or `nnlab jacobian --sweep`",
                 sw->val[v.first], sw->val[v.first + v.n - 1], sw->val[0], sw->val[sw->n - 1]);
        ui_text_wrap(t, UI_TS_DIM, width, UI_TEXT_ROWS, row);
    }
    int n = snprintf(row, sizeof row, "%-15s", "val");
    for (int i = v.first; i < v.first + v.n && n < (int)sizeof row - 10; i++)
        n += snprintf(row + n, sizeof row - (size_t)n, " %8ld", sw->val[i]);
    ui_text_addf(t, UI_TS_DIM, "%s", row);
    for (int m = 0; m < NN_JAC_METHOD_COUNT; m++)
        for (int d = 0; d < 2; d++) {
            snprintf(label, sizeof label, "%-11s %s", d ? "" : nn_jac_method_name((enum nn_jac_method)m),
                     name[d][0] ? name[d] : d ? "GPU" : "CPU");
            sweep_line(t, UI_TS_NORMAL, label, v,
                       d ? sw->gpu_s[NN_JAC_WAY_NNLAB][m] : sw->cpu_s[NN_JAC_WAY_NNLAB][m]);
        }
    ui_text_addf(t, UI_TS_DIM, "%s as a framework runs it eagerly (fw):", nn_jac_method_name(run_m));
    for (int d = 0; d < 2; d++) {
        snprintf(label, sizeof label, "%12s%s", "", name[d][0] ? name[d] : d ? "GPU" : "CPU");
        sweep_line(t, UI_TS_NORMAL, label, v,
                   d ? sw->gpu_s[NN_JAC_WAY_FRAMEWORK][run_m] : sw->cpu_s[NN_JAC_WAY_FRAMEWORK][run_m]);
    }
    sweep_verdict(t, width, sw, NN_JAC_WAY_FRAMEWORK, (int)run_m);
    for (int m = 0; m < NN_JAC_METHOD_COUNT; m++)
        sweep_verdict(t, width, sw, NN_JAC_WAY_NNLAB, m);
}

/* Each job's rows of J so far (or its time, done), then the FLOPs. */
static void jobs_text(const ui_lab *lab, const nn_jac_shape *s, long val, enum nn_jac_method m, int width,
                      ui_text *t)
{
    const ui_run *r = &lab->run;
    char a[16], b[16], line[256];
    nn_jac_flops f;
    for (int k = 0; k < r->n_jobs; k++) {
        const nn_snapshot *sn = &r->j[k].snap;
        ui_fmt_si((double)sn->step, a, sizeof a);
        ui_fmt_si((double)sn->total_steps, b, sizeof b);
        if (sn->state == NN_JOB_DONE)
            snprintf(line, sizeof line, "%-8s all %s rows of J in %.4g s: %.3g rows/s", r->j[k].device, b,
                     sn->elapsed_s, sn->samples_per_s > 0 ? sn->samples_per_s : (double)sn->total_steps / sn->elapsed_s);
        else
            snprintf(line, sizeof line, "%-8s rows done %s of %s, %.1f s so far", r->j[k].device, a, b, sn->elapsed_s);
        ui_text_wrap(t, UI_TS_NORMAL, width, UI_TEXT_ROWS, line);
    }
    nn_jac_flops_of(s, val, m, &f);
    snprintf(line, sizeof line, "FLOPs %.3g in %.0f passes over %.0f rows: %.1f%% on J's zero blocks", f.total,
             f.passes, f.pass_rows, f.total > 0 ? 100 * f.zero / f.total : 0);
    ui_text_wrap(t, UI_TS_NORMAL, width, UI_TEXT_ROWS, line);
}

/* The whole panel's text, scrolled when longer than the panel (PgUp PgDn
 * while the Explain panel is not shown, ui/panels/job_keys.c). */
void ui_jacobian_draw_main(ui_lab *lab, ui_jacobian_kept *jk, ui_rect box)
{
    ui_text *t = &jk->text;
    ui_rect in = ui_rect_inner(box);
    nn_jac_shape s;
    long val;
    enum nn_jac_method m;
    char title[96];
    if (in.w <= 0 || in.h <= 0 || run_shape(lab, &s, &val, &m) != 0)
        return;
    snprintf(title, sizeof title, "Jacobian (val %ld, %s)", val, nn_jac_method_name(m));
    ui_box(lab, box, title);
    t->n = 0;
    jobs_text(lab, &s, val, m, in.w, t);
    ui_text_addf(t, UI_TS_NORMAL, "%s", "");
    sweep_text(lab, jk, &s, m, val, in.w, t);
    ui_text_draw_scrolled(lab, t, box, &lab->main_scroll, "PgDn", "PgUp");
}

void ui_jacobian_draw_side(ui_lab *lab, ui_rect box)
{
    ui_rect in = ui_rect_inner(box);
    nn_jac_shape s;
    long val;
    enum nn_jac_method m;
    if (in.w <= 0 || in.h <= 0 || run_shape(lab, &s, &val, &m) != 0)
        return;
    ui_box(lab, box, "Methods: FLOPs");
    int y = in.y;
    for (int k = 0; k < NN_JAC_METHOD_COUNT && y + 1 < in.y + in.h; k++) {
        nn_jac_flops f;
        nn_jac_flops_of(&s, val, (enum nn_jac_method)k, &f);
        ui_putf(y++, in.x, in.w, k == (int)m ? A_BOLD : A_NORMAL, "%-10s %9.3g", nn_jac_method_name((enum nn_jac_method)k),
                f.total);
        ui_putf(y++, in.x, in.w, ui_attr(lab, UI_DIM), "  %.1f%% on zeros", f.total > 0 ? 100 * f.zero / f.total : 0);
    }
}

void ui_jacobian_draw_explain(ui_lab *lab, ui_jacobian_kept *jk, ui_rect box, int replaces)
{
    ui_text *t = &jk->text;          /* drawn before the next panel fills it again */
    ui_rect in = ui_rect_inner(box);
    nn_jac_shape s;
    long val;
    enum nn_jac_method m;
    char why[1024];
    if (in.w <= 0 || in.h <= 0 || run_shape(lab, &s, &val, &m) != 0)
        return;
    ui_box(lab, box, replaces ? "Explain (e: back)" : "Explain: the waste");
    t->n = 0;
    nn_jac_explain(&s, val, m, why, sizeof why);
    ui_text_wrap(t, UI_TS_NORMAL, in.w, UI_TEXT_ROWS, why);
    const nn_jac_sweep *sw;
    const char *skip = "";
    if (ui_jacobian_sweep(lab, jk, &s, &sw, &skip) == 0) {
        nn_jac_sweep_verdict(sw, m, val, why, sizeof why);
        ui_text_addf(t, UI_TS_NORMAL, "%s", "");
        ui_text_wrap(t, UI_TS_DIM, in.w, UI_TEXT_ROWS, why);
    }
    ui_text_draw_scrolled(lab, t, box, &lab->explain_scroll, "PgDn", "PgUp");
}
