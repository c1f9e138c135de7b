/* ui/panels/jacobian_run.c - see jacobian_run.h. The figures come from
 * nnlab/jacobian.h and nnlab/engine.h (one home each); this file picks them
 * for the run screen and the export. */
#include "jacobian_run.h"
#include "draw.h"
#include "jacobian_panel.h"
#include "run_view.h"
#include "text/format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nnlab/export.h"
#include "nnlab/jacobian.h"
#include "nnlab/progress.h"

/* The run's network, val and method (the setup's, resolved as the job does). */
static int run_shape(const ui_lab *lab, nn_jac_shape *s, long *val, enum nn_jac_method *m)
{
    const nn_job_config *c = &lab->run.cfg;
    char err[NN_ERR_LEN];
    *val = c->jac_val > 0 ? c->jac_val : c->preset.task_val;
    *m = (enum nn_jac_method)c->jac_method;
    return nn_jac_shape_from_preset(&c->preset, c->preset.name, s, err, sizeof err);
}

/* "predicted 16 d 19 h" for the job's device from the lab's calibration. */
static void prediction_text(ui_lab *lab, const ui_run_job *j, char *buf, size_t len)
{
    nn_job_config cfg = lab->run.cfg;
    const char *why;
    const nn_calibration *cal = nn_cal_store_get(&lab->cals, j->device, &why);
    double s;
    char clock[24];
    buf[0] = '\0';
    nn_strlcpy(cfg.device, j->device, sizeof cfg.device);
    if (!cal || nn_job_predict_s(&cfg, cal, &s) != 0)
        return;
    nn_format_clock(s, clock, sizeof clock);
    snprintf(buf, len, "  predicted %s", clock);
}

void ui_jacobian_job_line(ui_lab *lab, const ui_run_job *j, int y, int x, int w)
{
    nn_jac_shape s;
    nn_jac_flops f;
    long val;
    enum nn_jac_method m;
    char lanes[32] = "", pred[48];
    if (run_shape(lab, &s, &val, &m) != 0)
        return;
    nn_jac_flops_of(&s, val, m, &f);
    if (j->snap.jac_lanes > 1)
        snprintf(lanes, sizeof lanes, "  %d lanes", j->snap.jac_lanes);
    prediction_text(lab, j, pred, sizeof pred);
    ui_putf(y, x, w, ui_attr(lab, UI_DIM), "  %s, val %ld%s  FLOPs %.3g  %.1f%% on zeros%s", nn_jac_method_name(m),
            val, lanes, f.total, f.total > 0 ? 100 * f.zero / f.total : 0.0, pred);
}

const char *ui_jacobian_keys(int running)
{
    return running ? "p pause  c cancel  e explain  x export  Esc back  ? help  q quit"
                   : "finished: Enter/Esc back  e explain  x export  ? help  q quit";
}

int ui_jacobian_key_unused(ui_lab *lab, int ch)
{
    if (ch != 'l' && ch != 's')
        return 0;
    ui_set_message(lab, 0, "%c: a Jacobian job has no loss to %s", ch, ch == 'l' ? "scale" : "smooth");
    return 1;
}

/* The first job's figures: its result once done (a copy, freed by the caller). */
static void export_of(ui_lab *lab, ui_jacobian_kept *jk, nn_jac_export *x, nn_jac_result *res, int *has_res)
{
    const ui_run_job *j = &lab->run.j[0];
    const nn_jac_sweep *sw = NULL;
    const char *why;
    memset(x, 0, sizeof *x);
    run_shape(lab, &x->shape, &x->val, &x->method);
    x->preset = lab->run.cfg.preset.name;
    x->device = j->device;
    x->state = j->started ? nn_job_state_name(j->snap.state) : "not run";
    x->rows_done = j->snap.step;
    x->elapsed_s = j->snap.elapsed_s;
    *has_res = j->job && j->snap.state == NN_JOB_DONE && nn_job_jacobian(j->job, res) == 0;
    x->result = *has_res ? res : NULL;
    if (ui_jacobian_sweep(lab, jk, &x->shape, &sw, &why) == 0)
        x->sweep = sw;
}

void ui_jacobian_export(ui_lab *lab, ui_dashboard_state *ds)
{
    char dir[NN_PATH_LEN], csv[NN_PATH_LEN + 96], json[NN_PATH_LEN + 96], err[NN_ERR_LEN];
    nn_jac_export x;
    nn_jac_result res;
    int has_res;
    if (nn_export_dir(dir, sizeof dir) != 0) {
        ui_set_message(lab, 1, "export: no folder (neither XDG_DATA_HOME nor HOME is set)");
        return;
    }
    export_of(lab, &ds->jacobian, &x, &res, &has_res);
    int rc = nn_jac_export_files(dir, &x, (long long)time(NULL), csv, json, sizeof csv, err, sizeof err);
    if (has_res)
        nn_jac_result_free(&res);
    if (rc != 0) {
        ui_set_message(lab, 1, "export failed: %s", err);
        return;
    }
    size_t n = strlen(csv);
    if (n > 4)
        csv[n - 4] = '\0';           /* ".csv" */
    ui_set_message(lab, 0, "exported %s.{csv,json}%s", csv, ui_run_active(&lab->run) ? " (so far)" : "");
}

void ui_run_tell_cancel_end(ui_lab *lab)
{
    const ui_run *r = &lab->run;
    char head[160];
    if (!r->cancelled || ui_run_active(r) || r->n_jobs < 1)
        return;
    const ui_run_job *j = r->j[0].started ? &r->j[0] : &r->j[1];
    if (!nn_job_traits_of(j->snap.kind)->trains)
        snprintf(head, sizeof head, "cancelled after %ld of %ld rows of J", j->snap.step, j->snap.total_steps);
    else
        nn_format_headline(&j->snap, head, sizeof head);
    ui_set_message(lab, 0, "%s", head);
}

static void jacobian_title(ui_lab *lab, char *buf, size_t len)
{
    ui_jacobian_title(lab, buf, len);
}

static int jacobian_key(ui_lab *lab, int ch)
{
    return ui_jacobian_key_unused(lab, ch);
}

static void jacobian_draw_main(ui_lab *lab, ui_dashboard_state *ds, ui_rect box)
{
    ui_jacobian_draw_main(lab, &ds->jacobian, box);
}

static void jacobian_draw_explain(ui_lab *lab, ui_dashboard_state *ds, ui_rect box, int replaces)
{
    ui_jacobian_draw_explain(lab, &ds->jacobian, box, replaces);
}

static void jacobian_draw_side(ui_lab *lab, ui_dashboard_state *ds, ui_rect box)
{
    (void)ds;
    ui_jacobian_draw_side(lab, box);
}

const ui_run_view ui_jacobian_view = {
    .title = jacobian_title,
    .draw_main = jacobian_draw_main,
    .main_dirty = UI_D_JOBS,         /* its rows of J move with the job row */
    .draw_explain = jacobian_draw_explain,
    .draw_side = jacobian_draw_side,
    .job_status = ui_jacobian_status,
    .job_line = ui_jacobian_job_line,
    .keys = ui_jacobian_keys,
    .key = jacobian_key,
    .export_run = ui_jacobian_export,
};
