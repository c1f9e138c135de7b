/* ui/calib.h - measuring a calibration on first use on a background thread,
 * so that the lab keeps drawing while it runs. Which devices need one, and
 * keeping and caching the result, is the analysis layer's store
 * (nn_cal_store in nnlab/calibrate.h). The thread reports progress into a
 * mutex-protected struct that the UI thread polls; nothing here draws
 * (ui/calib_dialog.c does). The lab starts a calibration only from the
 * setup screen, where no job runs: it measures the machine, and a training
 * job beside it would spoil both.
 *
 * This thread is the lab's second thread model beside the engine's jobs;
 * once the engine runs calibrations as a job kind (start, poll the
 * snapshot's progress, take the result), these three functions become
 * that job's and the store does not change. */
#ifndef NNLAB_UI_CALIB_H
#define NNLAB_UI_CALIB_H

#include <pthread.h>

#include "nnlab/calibrate.h"
#include "util.h"

/* ---- measuring on a background thread ------------------------------------------- */

typedef struct ui_calib_run {
    pthread_t thread;
    int running;                 /* the thread exists and is not joined yet */
    pthread_mutex_t mu;          /* guards the progress fields below */
    double fraction;
    char what[64];
    int finished;
    /* the thread's own until finished is seen under mu */
    char device[16];
    int threads;
    int rc;
    nn_calibration cal;
    char err[NN_ERR_LEN];
} ui_calib_run;

/* Starts measuring device; -1 with the reason when no thread could start. */
int ui_calib_start(ui_calib_run *c, const char *device, int threads, char *err, size_t err_len);
/* Copies the progress; returns 1 once the measurement has ended. */
int ui_calib_poll(ui_calib_run *c, double *fraction, char *what, size_t what_len);
/* Waits for the thread (a few seconds at most) and returns its result: 0
 * with *cal, or -1 with the reason. Safe to call when nothing runs (-1). */
int ui_calib_finish(ui_calib_run *c, nn_calibration *cal, char *err, size_t err_len);

#endif
