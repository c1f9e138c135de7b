/* ui/panels/race_predicted.c - a predicted GPU racing the real CPU job (the
 * settings' field and the device rule: predicted_field.c); see race_predicted.h. */
#include "draw.h"
#include "lab_state.h"
#include "race_predicted.h"
#include "screens/setup_fields.h"
#include "text/format.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nnlab/predicted.h"
#include "nnlab/race_ways.h"
#include "util.h"
#include "nnlab/progress.h"

/* The real device of the run: the other one asked for, else the baseline. */
static const nn_device_status *real_device(const ui_lab *lab, const char *const names[2], int n)
{
    for (int k = 0; k < n; k++)
        if (!ui_predicted_stands_in(lab, names[k]))
            return ui_device_status(lab, names[k]);
    return ui_device_baseline(lab);
}

int ui_predicted_run_start(ui_lab *lab)
{
    const char *names[2];
    int n = ui_settings_devices(&lab->chosen.set, names), stands_in = 0;
    nn_gpu_profile prof;
    nn_predicted_gpu g;
    nn_job_config cfg;
    char err[NN_ERR_LEN];
    for (int k = 0; k < n; k++)
        stands_in += ui_predicted_stands_in(lab, names[k]);
    if (!stands_in)
        return 0;
    const nn_device_status *dev = real_device(lab, names, n);
    ui_setup_job_config(lab, &cfg);
    if (ui_predicted_profile(lab, &prof, err, sizeof err) != 0 || nn_predicted_gpu_init(&g, &cfg, &prof) != 0) {
        ui_set_message(lab, 1, "cannot predict the GPU: %s", err);
        return -1;
    }
    ui_run_free(&lab->run);
    if (!dev || ui_run_start(&lab->run, &cfg, dev, NULL, 0, err, sizeof err) != 0) {
        ui_run_free(&lab->run);
        ui_set_message(lab, 1, "cannot start: %s", dev ? err : "no CPU device here");
        return -1;
    }
    lab->run.has_predicted = 1;
    lab->run.predicted = g;
    /* its way beside the predicted ones: nnlab's own CPU step ("cpu nnlab") */
    lab->run.labelled = 1;
    nn_race_label(&lab->run.j[0].way, &lab->run.cfg, NULL, lab->run.j[0].label, sizeof lab->run.j[0].label);
    ui_set_message(lab, 0, "no GPU here: %s nnlab races predicted lanes (*): the GPU's for %s", dev->name,
                   g.profile);
    return 1;
}

void ui_predicted_lanes_from(ui_run *r, const nn_race_ways *w)
{
    static const int lanes[2] = { NN_LANE_FW_CPU, NN_LANE_FW_GPU };
    r->n_fw_lanes = 0;
    if (!r->has_predicted)
        return;
    for (int k = 0; k < 2; k++) {
        const nn_race_lane *l = &w->lane[lanes[k]];
        nn_predicted_gpu *g = &r->fw_lane[r->n_fw_lanes];
        if (!l->present || l->measured)
            continue;
        memset(g, 0, sizeof *g);
        g->cpu = lanes[k] == NN_LANE_FW_CPU;
        /* the GPU profile a GPU lane is priced for; none for this CPU's */
        if (!g->cpu)
            nn_strlcpy(g->profile, r->predicted.profile, sizeof g->profile);
        nn_strlcpy(g->label, l->source, sizeof g->label);
        g->way = l->way;
        g->step_s = l->step_us * 1e-6;
        r->n_fw_lanes++;
    }
}

int ui_predicted_rows(const ui_lab *lab)
{
    return lab->run.has_predicted ? 2 + lab->run.n_fw_lanes : 0;
}

#define LANE_LABEL_W 11               /* "gpu graph* " */

/* The predicted lanes' clock: the time since the real job started (they go
 * on after it ends, each to its own end), stopped where the job was
 * cancelled or failed. */
static double lanes_elapsed(const ui_run *r)
{
    const ui_run_job *j = &r->j[0];
    if (!j->started)
        return 0;
    if (j->ended && j->snap.state != NN_JOB_DONE)
        return ui_run_wall(j);
    return nn_now() - j->t_start;
}

int ui_predicted_moving(const ui_lab *lab)
{
    const ui_run *r = &lab->run;
    nn_predicted_progress p;
    if (!r->has_predicted || !r->j[0].started || r->j[0].snap.total_steps <= 0)
        return 0;
    double t = lanes_elapsed(r);
    nn_predicted_progress_at(&r->predicted, t, r->j[0].snap.total_steps, &p);
    int moving = !p.ended;
    for (int k = 0; k < r->n_fw_lanes; k++) {
        nn_predicted_progress_at(&r->fw_lane[k], t, r->j[0].snap.total_steps, &p);
        moving |= !p.ended;
    }
    return moving;
}

/* A predicted lane's row: "gpu fw*    ███░░ 31% step 7661/25000, 2ms/step
 * predicted for T4", the source dropped where the row is too narrow (the
 * note under the lanes says it), the bar narrowed first. */
static void draw_lane(ui_lab *lab, const char *name, const nn_predicted_gpu *g, const char *source, double t,
                      long total, int y, int x, int w)
{
    nn_predicted_progress p;
    char bar[256], per[32], status[96];
    nn_predicted_progress_at(g, t, total, &p);
    nn_predicted_pace(g, per, sizeof per);
    if (p.ended)
        snprintf(status, sizeof status, "done in %.3g s (%s)", p.total_s, per);
    else
        snprintf(status, sizeof status, "step %ld/%ld, %s", p.steps, p.total_steps, per);
    int room = w - LANE_LABEL_W - 5 - (int)strlen(status) - 1;
    int with_source = room - 1 - (int)strlen(source) >= 6;
    int bw = with_source ? room - 1 - (int)strlen(source) : room;
    bw = bw > 20 ? 20 : bw < 6 ? 6 : bw;
    mvhline(y, x, ' ', w);
    ui_put(y, x, LANE_LABEL_W, A_BOLD, name);
    ui_bar_text(bar, sizeof bar, bw, p.fraction, lab->utf8);
    ui_put(y, x + LANE_LABEL_W, bw, ui_attr(lab, UI_DIM), bar);
    ui_putf(y, x + LANE_LABEL_W + bw, w - LANE_LABEL_W - bw, ui_attr(lab, UI_DIM), " %3.0f%% %s%s%s",
            100.0 * p.fraction, status, with_source ? " " : "", with_source ? source : "");
}

void ui_predicted_draw(ui_lab *lab, int y, int x, int w)
{
    const ui_run *r = &lab->run;
    char name[16];
    double t = lanes_elapsed(r);
    long total = r->j[0].snap.total_steps;
    draw_lane(lab, r->predicted.way == NN_WAY_GRAPH ? "gpu graph*" : "gpu eager*", &r->predicted,
              r->predicted.label, t, total, y, x, w);
    for (int k = 0; k < r->n_fw_lanes; k++) {
        const nn_predicted_gpu *g = &r->fw_lane[k];
        snprintf(name, sizeof name, "%s fw*", g->cpu ? "cpu" : "gpu");
        draw_lane(lab, name, g, g->cpu ? "predicted from this CPU's calibration" : g->label, t, total, y + 1 + k,
                  x, w);
    }
    y += 1 + r->n_fw_lanes;
    mvhline(y, x, ' ', w);
    int cpu_lane = r->n_fw_lanes > 0 && r->fw_lane[0].cpu;
    if (r->n_fw_lanes > 0)
        ui_putf(y, x, w, ui_attr(lab, UI_DIM), "  * predicted, not measured (gpu: %s%s)", r->predicted.profile,
                cpu_lane ? "; cpu fw: this CPU's calibration" : "");
    else
        ui_putf(y, x, w, ui_attr(lab, UI_DIM), "  * no GPU here: the model's step for %s, nothing measured",
                r->predicted.profile);
}
