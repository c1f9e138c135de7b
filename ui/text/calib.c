/* ui/text/calib.c - a calibration as an engine job; see calib.h. */
#include "calib.h"

#include <stdio.h>
#include <string.h>

int ui_calib_start(ui_calib_run *c, const char *device, int threads, char *err, size_t err_len)
{
    nn_job_config cfg;
    nn_job_config_calibration(&cfg, device, threads);
    memset(c, 0, sizeof *c);
    snprintf(c->device, sizeof c->device, "%s", device);
    char why[NN_ERR_LEN];
    c->job = nn_job_start(&cfg, why, sizeof why);
    if (!c->job) {
        snprintf(err, err_len, "calibrating %s: %s", device, why);
        return -1;
    }
    return 0;
}

int ui_calib_poll(ui_calib_run *c, double *fraction, char *what, size_t what_len)
{
    nn_snapshot s;
    if (!c->job)
        return 1;
    nn_job_snapshot(c->job, &s);
    *fraction = s.fraction_done;
    snprintf(what, what_len, "%s", s.state == NN_JOB_PREPARING && !s.activity[0] ? "starting" : s.activity);
    return nn_job_state_ended(s.state);
}

void ui_calib_times(ui_calib_run *c, nn_job_times *t)
{
    nn_snapshot s;
    if (!c->job) {
        nn_job_times_at(0, 0, 0, 0, t);
        return;
    }
    nn_job_snapshot(c->job, &s);
    nn_job_times_of(&s, t);
}

int ui_calib_finish(ui_calib_run *c, nn_calibration *cal, char *note, size_t note_len, char *err,
                    size_t err_len)
{
    nn_snapshot s;
    if (note_len)
        note[0] = '\0';
    if (!c->job) {
        snprintf(err, err_len, "no calibration was running");
        return -1;
    }
    nn_job_state st = nn_job_wait(c->job);
    nn_job_snapshot(c->job, &s);
    int rc = st == NN_JOB_DONE ? nn_job_calibration(c->job, cal) : -1;
    if (rc == 0 && s.note[0])
        snprintf(note, note_len, "%s: %s", c->device, s.note);
    else if (rc != 0)
        snprintf(err, err_len, "%s", st == NN_JOB_FAILED && s.error[0] ? s.error
                                     : st == NN_JOB_CANCELLED ? "calibration cancelled" : "calibration failed");
    nn_job_free(c->job);
    c->job = NULL;
    return rc;
}
