/* ui/calib.c - the background measurement of a calibration; see calib.h. */
#include "calib.h"

#include <stdio.h>
#include <string.h>

/* ---- the thread ------------------------------------------------------------------ */

/* nn_calibrate's progress callback, on the calibration thread. */
static void on_progress(void *ctx, double fraction, const char *what)
{
    ui_calib_run *c = ctx;
    pthread_mutex_lock(&c->mu);
    c->fraction = fraction;
    snprintf(c->what, sizeof c->what, "%s", what ? what : "");
    pthread_mutex_unlock(&c->mu);
}

static void *calib_main(void *arg)
{
    ui_calib_run *c = arg;
    char err[NN_ERR_LEN];
    nn_calibration cal;
    int rc = nn_calibrate(c->device, c->threads, &cal, on_progress, c, err, sizeof err);
    pthread_mutex_lock(&c->mu);
    c->rc = rc;
    c->cal = cal;
    snprintf(c->err, sizeof c->err, "%s", rc ? err : "");
    c->finished = 1;
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

int ui_calib_start(ui_calib_run *c, const char *device, int threads, char *err, size_t err_len)
{
    memset(c, 0, sizeof *c);
    snprintf(c->device, sizeof c->device, "%s", device);
    snprintf(c->what, sizeof c->what, "starting");
    c->threads = threads;
    int rc = pthread_mutex_init(&c->mu, NULL);
    if (rc != 0) {
        snprintf(err, err_len, "calibrating %s: %s", device, strerror(rc));
        return -1;
    }
    rc = pthread_create(&c->thread, NULL, calib_main, c);
    if (rc != 0) {
        pthread_mutex_destroy(&c->mu);
        snprintf(err, err_len, "calibrating %s: no thread: %s", device, strerror(rc));
        return -1;
    }
    c->running = 1;
    return 0;
}

int ui_calib_poll(ui_calib_run *c, double *fraction, char *what, size_t what_len)
{
    if (!c->running)
        return 1;
    pthread_mutex_lock(&c->mu);
    *fraction = c->fraction;
    snprintf(what, what_len, "%s", c->what);
    int done = c->finished;
    pthread_mutex_unlock(&c->mu);
    return done;
}

int ui_calib_finish(ui_calib_run *c, nn_calibration *cal, char *err, size_t err_len)
{
    if (!c->running) {
        snprintf(err, err_len, "no calibration was running");
        return -1;
    }
    int rc = pthread_join(c->thread, NULL);
    c->running = 0;
    pthread_mutex_destroy(&c->mu);
    if (rc != 0) {
        snprintf(err, err_len, "calibrating %s: %s", c->device, strerror(rc));
        return -1;
    }
    if (c->rc != 0) {
        snprintf(err, err_len, "%s", c->err[0] ? c->err : "calibration failed");
        return -1;
    }
    *cal = c->cal;
    return 0;
}
