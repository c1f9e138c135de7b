/* ui/calib.h - the lab's calibrations: which devices have one (in memory,
 * or in the cache of src/include/nnlab/calibrate.h), and measuring one on first use on a
 * background thread, so that the lab keeps drawing while it runs. The
 * thread reports progress into a mutex-protected struct that the UI thread
 * polls; nothing here draws (ui/calib_dialog.c does). The lab starts a
 * calibration only from the setup screen, where no job runs: it measures
 * the machine, and a training job beside it would spoil both. */
#ifndef NNLAB_UI_CALIB_H
#define NNLAB_UI_CALIB_H

#include <pthread.h>

#include "nnlab/calibrate.h"
#include "util.h"

#define UI_CAL_MAX_DEVICES 8

enum ui_cal_state {
    UI_CAL_UNKNOWN,              /* not looked for yet */
    UI_CAL_OK,                   /* cal holds it (from the cache or measured) */
    UI_CAL_MISSING,              /* no cache (or another machine's): measure it */
    UI_CAL_FAILED                /* measuring failed: why (tried again at the next start) */
};

typedef struct ui_cal_entry {
    char device[16];
    int state;                   /* enum ui_cal_state */
    nn_calibration cal;
    char why[NN_ERR_LEN];
} ui_cal_entry;

typedef struct ui_cal_store {
    int n;
    ui_cal_entry e[UI_CAL_MAX_DEVICES];
} ui_cal_store;

/* 1 when device has no calibration in memory or in the cache (the cache is
 * read the first time a device is asked about, and after a failure). */
int ui_cal_needed(ui_cal_store *st, const char *device);
/* The calibration of device, or NULL with *why saying why there is none. */
const nn_calibration *ui_cal_get(ui_cal_store *st, const char *device, const char **why);
/* Keeps a measured calibration (cal), or the reason measuring failed (cal NULL). */
void ui_cal_record(ui_cal_store *st, const char *device, const nn_calibration *cal, const char *why);

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
