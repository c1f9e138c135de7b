/* ui/panels/ranks_predicted.c - the prediction beside the race of ranks;
 * see ranks_predicted.h. */
#include "panels/ranks_predicted.h"

#include <stdio.h>
#include <string.h>

#include "draw.h"
#include "nnlab/calibrate.h"
#include "nnlab/ranks_sweep.h"
#include "util.h"

/* The CPU the race ran on: the prediction is this CPU's (a GPU's ranks are
 * each a device of their own, which the race does not measure here). */
#define RP_DEVICE "cpu"

/* No figure: the summary says none, the status row why (too long for the panel). */
static void fail(ui_lab *lab, ui_ranks_pred *rp, const char *why)
{
    rp->state = UI_RP_FAILED;
    nn_strlcpy(rp->why, why, sizeof rp->why);
    ui_set_message(lab, 1, "ranks predicted: none: %s", why);
}

/* Both calibrations in hand: the figure. */
static void predict(ui_lab *lab, ui_ranks_pred *rp, const nn_calibration *rank_cal)
{
    const char *why = NULL;
    char err[NN_ERR_LEN];
    nn_link l;
    const nn_calibration *cal = nn_cal_store_get(&lab->cals, RP_DEVICE, &why);
    if (!cal) {
        fail(lab, rp, why && why[0] ? why : "no calibration of the cpu");
        return;
    }
    if (nn_link_find(nn_link_default_name(0), &l, err, sizeof err) != 0) {
        fail(lab, rp, err);
        return;
    }
    nn_strlcpy(rp->link, l.name, sizeof rp->link);
    nn_ranks_predict_here(&lab->run.cfg.preset, rp->rank_batch, rp->ranks, cal, rank_cal, rp->timeshare, &l,
                          rp->overlap, &rp->pred);
    if (rp->pred.step_us > 0 && rp->pred.one_rank_us > 0)
        rp->state = UI_RP_DONE;
    else
        fail(lab, rp, "the model gives no step");
}

void ui_ranks_pred_start(ui_lab *lab, ui_ranks_pred *rp)
{
    const ui_run *r = &lab->run;
    const char *why = NULL;
    ui_ranks_pred_stop(rp);
    ui_ranks_pred_settle(rp);        /* no calibration beside the run */
    if (!r->ranks_race || r->n_jobs < 2 || nn_device_kind_of(r->j[1].device).gpu)
        return;                      /* UI_RP_NONE */
    rp->ranks = r->j[1].way.ranks;
    rp->rank_batch = r->j[1].way.batch;
    rp->overlap = !r->cfg.no_overlap;
    const nn_calibration *cal = nn_cal_store_get(&lab->cals, RP_DEVICE, &why);
    if (!cal) {
        fail(lab, rp, why && why[0] ? why : "no calibration of the cpu");
        return;
    }
    /* the engine's rule for a rank's threads, over the cores the CPU's calibration ran on */
    rp->threads = nn_ranks_threads_each(rp->ranks, cal->threads, &rp->timeshare);
    nn_calibration rank_cal;
    if (rp->threads == cal->threads)
        predict(lab, rp, cal);
    else if (nn_calibration_load_threads(RP_DEVICE, rp->threads, &rank_cal) == 0 &&
             nn_calibration_quality(&rank_cal, NULL, 0) == NN_CAL_GOOD)
        predict(lab, rp, &rank_cal);
    else
        rp->state = UI_RP_WAITING;
}

/* The calibration at a rank's threads, once the race's lanes are done. */
static void start_calibration(ui_lab *lab, ui_ranks_pred *rp)
{
    nn_job_config cfg;
    char err[NN_ERR_LEN];
    nn_job_config_calibration(&cfg, RP_DEVICE, rp->threads);
    cfg.cache_at_threads = 1;
    rp->calib = nn_job_start(&cfg, err, sizeof err);
    if (!rp->calib)
        fail(lab, rp, err);
    else
        rp->state = UI_RP_CALIBRATING;
}

int ui_ranks_pred_poll(ui_lab *lab, ui_ranks_pred *rp)
{
    nn_snapshot s;
    nn_calibration rank_cal;
    const ui_run *r = &lab->run;
    if (rp->leftover) {              /* a cancelled calibration that has ended by now */
        nn_job_snapshot(rp->leftover, &s);
        if (nn_job_state_ended(s.state))
            ui_ranks_pred_settle(rp);
    }
    if (rp->state == UI_RP_WAITING && !ui_run_active(r)) {
        /* only for a race run to its end: a failed or cancelled one has no pair to price */
        if (r->j[0].snap.state == NN_JOB_DONE && r->j[1].snap.state == NN_JOB_DONE)
            start_calibration(lab, rp);
        else
            rp->state = UI_RP_NONE;
        return 1;
    }
    if (rp->state != UI_RP_CALIBRATING)
        return 0;
    nn_job_snapshot(rp->calib, &s);
    if (!nn_job_state_ended(s.state))
        return 0;
    nn_job_wait(rp->calib);
    if (nn_job_calibration(rp->calib, &rank_cal) == 0)
        predict(lab, rp, &rank_cal);
    else
        fail(lab, rp, s.error[0] ? s.error : "the calibration did not finish");
    nn_job_free(rp->calib);
    rp->calib = NULL;
    return 1;
}

void ui_ranks_pred_stop(ui_ranks_pred *rp)
{
    nn_job *left = rp->leftover;
    if (rp->calib) {                 /* it ends by itself; the UI does not wait for it */
        nn_job_cancel(rp->calib);
        if (left)
            nn_job_free(left);       /* two at once: the older one first */
        left = rp->calib;
    }
    memset(rp, 0, sizeof *rp);       /* UI_RP_NONE: nothing beside the next run until it starts one */
    rp->leftover = left;
}

void ui_ranks_pred_settle(ui_ranks_pred *rp)
{
    nn_job_free(rp->leftover);       /* waits for it; NULL: nothing */
    rp->leftover = NULL;
}

int ui_ranks_pred_rows(const ui_ranks_pred *rp)
{
    return rp->state == UI_RP_NONE ? 0 : 2;
}

void ui_ranks_pred_draw(ui_lab *lab, const ui_ranks_pred *rp, ui_rect in, int y)
{
    const char *s = rp->threads == 1 ? "" : "s";
    if (rp->state == UI_RP_NONE)
        return;
    ui_putf(y++, in.x, in.w, A_BOLD, "Predicted (cost model)");
    switch (rp->state) {
    case UI_RP_WAITING: ui_putf(y, in.x, in.w, ui_attr(lab, UI_DIM), " calibrates %d thread%s", rp->threads, s); break;
    case UI_RP_CALIBRATING:
        ui_putf(y, in.x, in.w, ui_attr(lab, UI_DIM), " calibrating %d thread%s", rp->threads, s);
        break;
    case UI_RP_DONE:
        ui_putf(y, in.x, in.w, ui_attr(lab, UI_DIM), " %d ranks %.2fx one rank", rp->ranks, rp->pred.speedup);
        break;
    default: ui_putf(y, in.x, in.w, ui_attr(lab, UI_ERROR), " none (status row: why)");
    }
}
