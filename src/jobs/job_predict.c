/* src/jobs/job_predict.c - the time a job will take, predicted before it
 * starts (nnlab/engine.h nn_job_predict_s): dispatched to the kind's own
 * prediction through the job table, as the memory estimate is, so that the
 * lab's question and the CLI's line before a long job come from one place. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "job_kind.h"

/* The table of a built-in device by name; NULL for the GPU (its module is
 * not loaded for a prediction): the kinds price it as a device. */
static const nn_backend_ops *ops_for_prediction(const char *name)
{
    for (const nn_backend_ops *const *p = nn_builtin_backends; *p; p++)
        if (strcmp((*p)->name, name) == 0)
            return *p;
    return NULL;
}

int nn_job_predict_s(const nn_job_config *cfg, const nn_calibration *cal, double *seconds)
{
    const nn_job_kind_def *kind = job_kind_of(cfg->kind);
    const char *dev = cfg->device[0] ? cfg->device : cfg->preset.device;
    *seconds = 0;
    if (!kind || !kind->predict_s || !cal)
        return -1;
    double s = kind->predict_s(cfg, ops_for_prediction(dev), cal);
    if (!(s >= 0) || !isfinite(s))
        return -1;
    *seconds = s;
    return 0;
}

void nn_job_prediction_text(double seconds, const char *device, char *buf, size_t len)
{
    long t = (long)(seconds + 0.5);
    char when[48];
    if (t >= 86400)
        snprintf(when, sizeof when, "%ld d %ld h", t / 86400, t / 3600 % 24);
    else if (t >= 3600)
        snprintf(when, sizeof when, "%ld h %02ld min", t / 3600, t / 60 % 60);
    else
        snprintf(when, sizeof when, "%ld min %02ld s", t / 60, t % 60);
    snprintf(buf, len, "predicted to take %s on %s (the cost model, from its calibration)%s", when, device,
             seconds > NN_JOB_ASK_S ? ": over 10 minutes" : "");
}
