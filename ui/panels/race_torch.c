/* ui/panels/race_torch.c - see race_torch.h.
 *
 * Why after the race: on a 2-core machine PyTorch beside nnlab's running job
 * would slow both, and the figures compared would not be the ones each way
 * reaches alone. The helper's process runs on a thread (nn_torch_job); the
 * UI loop only polls it. */
#include "draw.h"
#include "lab_state.h"
#include "race_torch.h"

#include <math.h>
#include <stdio.h>

#include "nnlab/device.h"
#include "util.h"

#define TORCH_STEPS 20               /* PyTorch's timed steps a lane, as `train --race` */
#define TORCH_WARMUP 3

void ui_race_torch_arm(ui_lab *lab, ui_race_torch *t, int has_ways)
{
    ui_race_torch_stop(t);
    t->next = NN_LANE_FW_CPU;
    t->armed = has_ways && lab->chosen.set.sweep_pytorch;
}

/* A GPU job really racing here (not a predicted lane) */
static int gpu_here(const ui_run *r)
{
    for (int k = 0; k < r->n_jobs; k++)
        if (r->j[k].way.gpu)
            return 1;
    return 0;
}

static const char *lane_device(const ui_run *r, int lane)
{
    if (lane == NN_LANE_FW_GPU)
        return "gpu";
    for (int k = 0; k < r->n_jobs; k++)
        if (!r->j[k].way.gpu)
            return r->j[k].device;
    return "cpu";
}

static void start_lane(ui_lab *lab, ui_race_torch *t)
{
    const ui_run *r = &lab->run;
    char err[NN_ERR_LEN];
    nn_torch_request req = {
        .preset_path = lab->chosen.preset_path, .device = lane_device(r, t->next),
        .batch = r->cfg.batch > 0 ? r->cfg.batch : r->cfg.preset.batch, .steps = TORCH_STEPS,
        .warmup = TORCH_WARMUP, .threads = r->cfg.threads,
    };
    t->lane = t->next;
    t->next = t->lane == NN_LANE_FW_CPU && gpu_here(r) ? NN_LANE_FW_GPU : -1;
    if (!(t->job = nn_torch_job_start(&req, err, sizeof err))) {
        ui_set_message(lab, 1, "the framework way stays predicted: %s", err);
        return;
    }
    ui_set_message(lab, 0, "the race has ended: %s measures the framework way on %s (%d steps)",
                   lab->chosen.set.pytorch_label, req.device, TORCH_STEPS);
}

/* A finished lane into w: measured, or predicted still with the reason said. */
static void collect(ui_lab *lab, ui_race_torch *t, nn_race_ways *w, enum nn_torch_status status,
                    const nn_torch_result *res, const char *err)
{
    nn_race_lane *l = &w->lane[t->lane];
    if (status == NN_TORCH_OK) {
        char source[96];
        nn_torch_source(&res->python, source, sizeof source);
        /* its spread: half the gap between its mean and median step, as the CLI's */
        double spread = res->us_per_step > 0 ? 0.5 * fabs(res->us_per_step_mean - res->us_per_step) /
                                                   res->us_per_step : 0;
        nn_race_lane_measure(l, res->us_per_step, spread, source);
        ui_set_message(lab, 0, "%s: %.0f us a step, %s", l->label, res->us_per_step, source);
    } else if (status != NN_TORCH_CANCELLED) {
        ui_set_message(lab, 1, "%s not measured (it stays predicted): %s", l->label, err);
    }
}

int ui_race_torch_poll(ui_lab *lab, ui_race_torch *t, nn_race_ways *w)
{
    if (!t->armed)
        return 0;
    if (!t->job) {
        if (ui_run_active(&lab->run))
            return 0;
        if (lab->run.cancelled || t->next < 0) {
            t->armed = 0;            /* a cancelled race measures nothing more */
            return 0;
        }
        start_lane(lab, t);
        return 1;
    }
    enum nn_torch_status status;
    nn_torch_result res;
    char err[NN_ERR_LEN];
    if (!nn_torch_job_done(t->job, &status, &res, err, sizeof err))
        return 0;
    nn_torch_job_free(t->job);
    t->job = NULL;
    collect(lab, t, w, status, &res, err);
    if (status == NN_TORCH_CANCELLED)
        t->armed = 0;
    return 1;
}

int ui_race_torch_busy(const ui_race_torch *t)
{
    return t->job != NULL;
}

void ui_race_torch_stop(ui_race_torch *t)
{
    if (t->job) {
        nn_torch_job_cancel(t->job);
        nn_torch_job_free(t->job);
    }
    t->job = NULL;
    t->armed = 0;
}
