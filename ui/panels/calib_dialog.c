/* ui/panels/calib_dialog.c - calibrating on first use: before a run or a sweep on
 * a device the lab has no calibration for, it measures the device (a few
 * seconds, an engine job of the calibration kind: ui/text/calib.c) under a box
 * with a progress bar; the job caches the result. Then it
 * starts what was asked for. The training job starts only
 * once the measurement has ended: both would use the same cores. A failure
 * is shown in a box over the job, which runs anyway without a prediction. */
#include "panels/calib_dialog.h"
#include "draw.h"
#include "lab_state.h"
#include "text/format.h"

#include <stdio.h>
#include <string.h>

int ui_calibrating_now(const ui_lab *lab)
{
    return lab->calib.active;
}

/* The calibrations ended: shows what failed, and returns what waited for
 * them (the main loop starts it). */
static ui_action carry_on(ui_lab *lab)
{
    ui_calibrating *c = &lab->calib;
    ui_action after = c->after;
    c->active = 0;
    c->after = UI_ACT_HANDLED;
    lab->dialog = UI_DLG_NONE;
    lab->dirty |= UI_D_ALL;
    if (c->failed[0] || ui_text_cols(c->warning) > lab->cols - 2) {
        lab->dialog = UI_DLG_CALIB_FAILED;   /* what failed, or a note the status row has no room for */
        lab->dirty |= UI_D_OVERLAY;
    } else if (c->warning[0]) {
        ui_set_message(lab, 1, "%s", c->warning);
    }
    return after;
}

static void add_failure(ui_calibrating *c, const char *err)
{
    size_t n = strlen(c->failed);
    snprintf(c->failed + n, sizeof c->failed - n, "%s%s", n ? "; " : "", err);
}

/* Starts measuring the next device of the queue; 0, or -1 when none is left. */
static int start_next(ui_lab *lab)
{
    ui_calibrating *c = &lab->calib;
    char err[NN_ERR_LEN];
    while (c->at < c->n_queue) {
        const char *dev = c->queue[c->at];
        c->fraction = 0;
        snprintf(c->what, sizeof c->what, "starting");
        snprintf(c->times, sizeof c->times, "00:00<?");
        if (ui_calib_start(&c->run, dev, 0, err, sizeof err) == 0)
            return 0;
        nn_cal_store_record(&lab->cals, dev, NULL, err);
        add_failure(c, err);
        c->at++;
    }
    return -1;
}

ui_action ui_calibrate_then(ui_lab *lab, int after, const char *const *devices, int n)
{
    ui_calibrating *c = &lab->calib;
    if (c->active)
        return UI_ACT_HANDLED;       /* one at a time: the dialog is up */
    memset(c, 0, sizeof *c);
    c->after = after;
    c->n_queue = nn_cal_store_missing(&lab->cals, devices, n, c->queue, NN_CAL_STORE_DEVICES);
    c->active = 1;
    if (c->n_queue == 0 || start_next(lab) != 0)
        return carry_on(lab);
    lab->dialog = UI_DLG_CALIBRATE;
    lab->dirty |= UI_D_OVERLAY;
    return UI_ACT_HANDLED;
}

/* The measurement of queue[at] ended: the store keeps it (and caches it), or the reason. */
static void collect(ui_lab *lab)
{
    ui_calibrating *c = &lab->calib;
    nn_calibration cal;
    char err[NN_ERR_LEN];
    int rc = ui_calib_finish(&c->run, &cal, c->warning, sizeof c->warning, err, sizeof err);
    if (nn_cal_store_collect(&lab->cals, c->queue[c->at], rc, &cal, err) != 0)
        add_failure(c, err);
}

ui_action ui_calibrate_poll(ui_lab *lab)
{
    ui_calibrating *c = &lab->calib;
    if (!c->active)
        return UI_ACT_HANDLED;
    double fraction = c->fraction;
    char what[sizeof c->what];
    int done = ui_calib_poll(&c->run, &fraction, what, sizeof what);
    if (fraction != c->fraction || strcmp(what, c->what) != 0) {
        nn_job_times t;
        c->fraction = fraction;
        snprintf(c->what, sizeof c->what, "%s", what);
        ui_calib_times(&c->run, &t);     /* moved on with the fraction */
        nn_format_elapsed_remaining(&t, c->times, sizeof c->times);
        lab->dirty |= UI_D_OVERLAY;
    }
    if (!done)
        return UI_ACT_HANDLED;
    collect(lab);
    c->at++;
    if (start_next(lab) == 0) {
        lab->dirty |= UI_D_OVERLAY;
        return UI_ACT_HANDLED;
    }
    return carry_on(lab);
}

void ui_calibrate_draw(ui_lab *lab)
{
    ui_calibrating *c = &lab->calib;
    char bar[512], path[512] = "the cache";
    if (lab->dialog == UI_DLG_CALIB_FAILED) {
        int w = lab->cols - 8 < 76 ? lab->cols - 8 : 76;
        ui_rect box = { (lab->cols - w) / 2, lab->rows / 2 - 4, w, 9 }, in = ui_rect_inner(box);
        int failed = c->failed[0] != '\0';
        ui_box(lab, box, failed ? "Calibration failed" : "Calibrated, with a note");
        ui_put_wrapped(in.y, in.x + 1, in.w - 2, 4, ui_attr(lab, UI_ERROR), failed ? c->failed : c->warning);
        ui_put_wrapped(in.y + 4, in.x + 1, in.w - 2, 2, A_NORMAL,
                       failed ? "The job runs anyway; the Explain panel has no prediction for this device."
                              : "The job runs with this calibration; the Explain panel uses it.");
        ui_put(in.y + 6, in.x + 1, in.w - 2, ui_attr(lab, UI_KEY), "any key closes");
        return;
    }
    if (!c->active || c->at >= c->n_queue)
        return;
    const char *dev = c->queue[c->at];
    int w = lab->cols - 8 < 70 ? lab->cols - 8 : 70;
    ui_rect box = { (lab->cols - w) / 2, lab->rows / 2 - 4, w, 9 }, in = ui_rect_inner(box);
    char title[64];
    snprintf(title, sizeof title, "Calibrating %s (first use)", dev);
    ui_box(lab, box, title);
    if (nn_calibration_path(dev, path, sizeof path) != 0)
        snprintf(path, sizeof path, "the cache");
    ui_putf(in.y, in.x + 1, in.w - 2, A_NORMAL, "Measuring what %s can do, once, to explain each step's time.", dev);
    char kept[sizeof path + 16], fitted[sizeof kept + 8];
    snprintf(kept, sizeof kept, "kept in %s", path);
    ui_fit_path(kept, in.w - 2, lab->utf8, fitted, sizeof fitted);   /* its file name whole */
    ui_put(in.y + 1, in.x + 1, in.w - 2, ui_attr(lab, UI_DIM), fitted);
    int tw = (int)strlen(c->times) + 1, bw = in.w - 2 - 6 - tw;
    ui_bar_text(bar, sizeof bar, bw, c->fraction, lab->utf8);
    ui_put(in.y + 3, in.x + 1, bw, ui_attr(lab, UI_SERIES0), bar);
    ui_putf(in.y + 3, in.x + 1 + bw, 6 + tw, A_NORMAL, " %3.0f%% %s", 100.0 * c->fraction, c->times);
    ui_putf(in.y + 4, in.x + 1, in.w - 2, A_NORMAL, "now: %s", c->what);
    if (c->n_queue > 1)
        ui_putf(in.y + 5, in.x + 1, in.w - 2, ui_attr(lab, UI_DIM), "device %d of %d", c->at + 1, c->n_queue);
    ui_put(in.y + 6, in.x + 1, in.w - 2, ui_attr(lab, UI_KEY),
           c->after != UI_ACT_HANDLED ? "Esc: do not start the job afterwards   q quit"
                                      : "the job will not start   q quit");
}

ui_action ui_calibrate_key(ui_lab *lab, int ch)
{
    ui_calibrating *c = &lab->calib;
    if (lab->dialog == UI_DLG_CALIB_FAILED) {
        lab->dialog = UI_DLG_NONE;   /* any key closes it */
        lab->dirty |= UI_D_ALL;
        return UI_ACT_HANDLED;
    }
    if (ch == 27 && c->after != UI_ACT_HANDLED) {
        /* the measurement cannot be stopped halfway; it ends in seconds and is kept */
        c->after = UI_ACT_HANDLED;
        ui_set_message(lab, 0, "the job will not start; the calibration finishes and is kept");
        lab->dirty |= UI_D_OVERLAY;
    } else if (ch == 'q') {
        return UI_ACT_QUIT;          /* the job is cancelled and waited for on the way out */
    }
    return UI_ACT_HANDLED;
}

void ui_calibrate_free(ui_lab *lab)
{
    nn_calibration cal;
    char note[NN_ERR_LEN], err[NN_ERR_LEN];
    if (lab->calib.active && lab->calib.run.job) {
        nn_job_cancel(lab->calib.run.job);   /* quitting: the result is dropped */
        (void)ui_calib_finish(&lab->calib.run, &cal, note, sizeof note, err, sizeof err);
    }
    lab->calib.active = 0;
}
