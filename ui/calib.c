/* ui/calib.c - the lab's calibrations and the background measurement; see
 * calib.h. */
#include "calib.h"

#include <stdio.h>
#include <string.h>

/* The entry of device, added (UNKNOWN) when new; NULL when the store is full. */
static ui_cal_entry *entry_of(ui_cal_store *st, const char *device)
{
    for (int i = 0; i < st->n; i++)
        if (!strcmp(st->e[i].device, device))
            return &st->e[i];
    if (st->n == UI_CAL_MAX_DEVICES)
        return NULL;
    ui_cal_entry *e = &st->e[st->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->device, sizeof e->device, "%s", device);
    return e;
}

/* Reads the cache once for an entry not settled yet. */
static void look_up(ui_cal_entry *e)
{
    if (e->state == UI_CAL_OK)
        return;
    if (nn_calibration_load(e->device, &e->cal) == 0) {
        e->state = UI_CAL_OK;
        e->why[0] = '\0';
    } else if (e->state == UI_CAL_UNKNOWN) {
        e->state = UI_CAL_MISSING;
        snprintf(e->why, sizeof e->why, "%s has not been calibrated on this machine", e->device);
    }
}

int ui_cal_needed(ui_cal_store *st, const char *device)
{
    ui_cal_entry *e = entry_of(st, device);
    if (!e)
        return 0;                    /* more devices than the lab has: nothing to measure */
    look_up(e);
    return e->state != UI_CAL_OK;
}

const nn_calibration *ui_cal_get(ui_cal_store *st, const char *device, const char **why)
{
    ui_cal_entry *e = entry_of(st, device);
    if (!e) {
        *why = "too many devices";
        return NULL;
    }
    if (e->state == UI_CAL_UNKNOWN)
        look_up(e);
    if (e->state == UI_CAL_OK)
        return &e->cal;
    *why = e->why;
    return NULL;
}

void ui_cal_record(ui_cal_store *st, const char *device, const nn_calibration *cal, const char *why)
{
    ui_cal_entry *e = entry_of(st, device);
    if (!e)
        return;
    if (cal) {
        e->cal = *cal;
        e->state = UI_CAL_OK;
        e->why[0] = '\0';
    } else {
        e->state = UI_CAL_FAILED;
        snprintf(e->why, sizeof e->why, "%s", why && why[0] ? why : "calibration failed");
    }
}

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
