/* src/analysis/report/calibration_store.c - which calibration a front end uses for
 * a device: for the CLI the cached one or one measured now, for the lab the
 * store of what it has in memory, in the cache, or why not; see calibrate.h. */
#include "nnlab/calibrate.h"

#include <stdio.h>
#include <string.h>

#include "util.h"

/* A cached calibration is used when it is good; one that is not (cached
 * marked) is measured again. */
int nn_calibration_get(const char *device, int threads, int remeasure, nn_progress_fn progress, void *ctx,
                       nn_calibration *out, char *err, size_t err_len, char *warning, size_t warning_len)
{
    char why[NN_ERR_LEN];
    if (warning && warning_len)
        warning[0] = '\0';
    if (!remeasure && nn_calibration_load(device, out) == 0 && nn_calibration_quality(out, NULL, 0) == NN_CAL_GOOD)
        return 0;
    if (nn_calibrate(device, threads, out, progress, ctx, err, err_len) != 0)
        return -1;
    if (nn_calibration_save(out, why, sizeof why) != 0) {
        nn_errorf(warning, warning_len, "calibration not cached: %s", why);
        return 0;
    }
    int q = nn_calibration_quality(out, why, sizeof why);
    if (q != NN_CAL_GOOD)
        nn_errorf(warning, warning_len, "the calibration of %s is %s: %s; its figures may be off (cached marked "
                  "so: measured again next time, or now with `nnlab calibrate`)", device, nn_cal_quality_name(q), why);
    return 0;
}

int nn_calibration_get_threads(const char *device, int threads, int remeasure, nn_progress_fn progress, void *ctx,
                               nn_calibration *out, char *err, size_t err_len, char *warning, size_t warning_len)
{
    char why[NN_ERR_LEN];
    if (warning && warning_len)
        warning[0] = '\0';
    if (!remeasure && nn_calibration_load_threads(device, threads, out) == 0 &&
        nn_calibration_quality(out, NULL, 0) == NN_CAL_GOOD)
        return 0;
    if (nn_calibrate(device, threads, out, progress, ctx, err, err_len) != 0)
        return -1;
    if (nn_calibration_save_threads(out, why, sizeof why) != 0)
        nn_errorf(warning, warning_len, "calibration at %d threads not cached: %s", threads, why);
    return 0;
}

/* ---- the lab's store ------------------------------------------------------------------- */

/* The entry of device, added (UNKNOWN) when new; NULL when the store is full. */
static nn_cal_entry *entry_of(nn_cal_store *st, const char *device)
{
    for (int i = 0; i < st->n; i++)
        if (!strcmp(st->e[i].device, device))
            return &st->e[i];
    if (st->n == NN_CAL_STORE_DEVICES)
        return NULL;
    nn_cal_entry *e = &st->e[st->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->device, sizeof e->device, "%s", device);
    return e;
}

/* Reads the cache for an entry not settled yet. */
static void look_up(nn_cal_entry *e)
{
    if (e->state == NN_CAL_OK)
        return;
    char why[NN_ERR_LEN];
    if (nn_calibration_load(e->device, &e->cal) == 0) {
        int q = nn_calibration_quality(&e->cal, why, sizeof why);
        if (q == NN_CAL_GOOD) {
            e->state = NN_CAL_OK;
            e->why[0] = '\0';
            return;
        }
        /* cached marked: measured again at first use (once a session: what
         * is measured then is kept, whatever its quality) */
        e->state = NN_CAL_MISSING;
        snprintf(e->why, sizeof e->why, "the cached calibration of %s is %s (%.400s): measure it again", e->device,
                 nn_cal_quality_name(q), why);
    } else if (e->state == NN_CAL_UNKNOWN) {
        e->state = NN_CAL_MISSING;
        snprintf(e->why, sizeof e->why, "%s has not been calibrated on this machine", e->device);
    }
}

int nn_cal_store_needed(nn_cal_store *st, const char *device)
{
    nn_cal_entry *e = entry_of(st, device);
    if (!e)
        return 0;                    /* more devices than the store holds: nothing to measure */
    look_up(e);
    return e->state != NN_CAL_OK;
}

int nn_cal_store_missing(nn_cal_store *st, const char *const *devices, int n, char out[][16], int max)
{
    int k = 0;
    for (int i = 0; i < n && k < max; i++)
        if (nn_cal_store_needed(st, devices[i]))
            snprintf(out[k++], 16, "%s", devices[i]);
    return k;
}

const nn_calibration *nn_cal_store_get(nn_cal_store *st, const char *device, const char **why)
{
    nn_cal_entry *e = entry_of(st, device);
    if (!e) {
        *why = "too many devices";
        return NULL;
    }
    if (e->state == NN_CAL_UNKNOWN)
        look_up(e);
    if (e->state == NN_CAL_OK)
        return &e->cal;
    *why = e->why;
    return NULL;
}

void nn_cal_store_record(nn_cal_store *st, const char *device, const nn_calibration *cal, const char *why)
{
    nn_cal_entry *e = entry_of(st, device);
    if (!e)
        return;
    if (cal) {
        e->cal = *cal;
        e->state = NN_CAL_OK;
        e->why[0] = '\0';
    } else {
        e->state = NN_CAL_FAILED;
        snprintf(e->why, sizeof e->why, "%s", why && why[0] ? why : "calibration failed");
    }
}

int nn_cal_store_collect(nn_cal_store *st, const char *device, int rc, const nn_calibration *cal, const char *err)
{
    nn_cal_store_record(st, device, rc == 0 ? cal : NULL, rc == 0 ? NULL : err);
    return rc;
}
