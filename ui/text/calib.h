/* ui/text/calib.h - measuring a calibration on first use as an engine job of
 * the calibration kind (nnlab/engine.h), so that the lab keeps drawing
 * while it runs and has one thread model: jobs. Which devices need one,
 * and keeping the result, is the analysis layer's store (nn_cal_store in
 * nnlab/calibrate.h); the job caches what it measured. Nothing here draws
 * (ui/panels/calib_dialog.c does). The lab starts a calibration only from the
 * setup screen, where no job runs: it measures the machine, and a training
 * job beside it would spoil both. */
#ifndef NNLAB_UI_CALIB_H
#define NNLAB_UI_CALIB_H

#include <stddef.h>

#include "nnlab/calibrate.h"
#include "nnlab/engine.h"
#include "nnlab/progress.h"
#include "util.h"

typedef struct ui_calib_run {
    nn_job *job;                 /* NULL when nothing runs */
    char device[16];
} ui_calib_run;

/* Starts measuring device; -1 with the reason when the job cannot start. */
int ui_calib_start(ui_calib_run *c, const char *device, int threads, char *err, size_t err_len);
/* Copies the progress; returns 1 once the measurement has ended. */
int ui_calib_poll(ui_calib_run *c, double *fraction, char *what, size_t what_len);
/* Its times (nnlab/progress.h: elapsed, and remaining at the pace of the
 * fraction done); zero when nothing runs. */
void ui_calib_times(ui_calib_run *c, nn_job_times *t);
/* Waits for the job (a few seconds at most) and returns its result: 0 with
 * *cal (note: "" or why it was not cached), or -1 with the reason. Safe to
 * call when nothing runs (-1). */
int ui_calib_finish(ui_calib_run *c, nn_calibration *cal, char *note, size_t note_len, char *err,
                    size_t err_len);

#endif
