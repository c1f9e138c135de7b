/* src/jobs/sweep_torch.c - a sweep's framework way measured for real with
 * PyTorch (nn_sweep_add_pytorch, nnlab/sweep.h): each point is PyTorch's
 * step of the preset at that batch on that device, timed by its helper
 * (src/jobs/torch_step.c) in a process of its own, on a thread of its own
 * (nn_torch_job, src/jobs/torch_job.c) so that the sweep's runner never
 * waits: it starts one point at a time, polls it and records it
 * (sweep_run.c). */
#include "nnlab/sweep.h"
#include "nnlab/device.h"

#include "nnlab/torch_step.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep_torch.h"

typedef struct torch_point {
    nn_torch_job *job;
    int d, i;
} torch_point;

int nn_sweep_add_pytorch(nn_sweep *sw, const char *device, const char *preset_path, char *err,
                         size_t err_len)
{
    nn_torch_python py;
    if (nn_torch_find(&py, err, err_len) != NN_TORCH_OK)
        return -1;
    if (nn_device_kind_of(device).gpu && !py.cuda) {
        snprintf(err, err_len, "PyTorch (%s) sees no CUDA device: its GPU step cannot be measured",
                 py.path);
        return -1;
    }
    int d = nn_sweep_add_external(sw, device, NN_WAY_FRAMEWORK, py.label);
    if (d < 0) {
        snprintf(err, err_len, "the sweep has no room for PyTorch's %s step", device);
        return -1;
    }
    sw->pytorch[d] = 1;
    nn_strlcpy(sw->preset_path, preset_path, sizeof sw->preset_path);
    return 0;
}

int nn_sweep_torch_start(nn_sweep *sw, int d, int i, char *err, size_t err_len)
{
    torch_point *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, err_len, "out of memory for PyTorch's point");
        return -1;
    }
    nn_torch_request req = {
        .preset_path = sw->preset_path, .device = sw->device[d], .batch = sw->batch[i],
        .steps = sw->base.steps, .warmup = sw->base.warmup, .threads = sw->base.threads,
    };
    t->d = d;
    t->i = i;
    if (!(t->job = nn_torch_job_start(&req, err, err_len))) {
        free(t);
        return -1;
    }
    sw->torch_run = t;
    sw->cur_dev = d;
    sw->cur_batch = i;
    sw->pt[d][i].state = NN_POINT_RUNNING;
    return 0;
}

int nn_sweep_torch_poll(nn_sweep *sw)
{
    torch_point *t = sw->torch_run;
    enum nn_torch_status status;
    nn_torch_result res;
    char err[NN_ERR_LEN];
    if (!t || !nn_torch_job_done(t->job, &status, &res, err, sizeof err))
        return 0;
    if (status == NN_TORCH_OK)
        nn_sweep_record_external(sw, t->d, t->i, res.us_per_step,   /* spread: as a job's */
                                 0.5 * fabs(res.us_per_step_mean - res.us_per_step), "");
    else if (status == NN_TORCH_CANCELLED)
        sw->pt[t->d][t->i].state = NN_POINT_CANCELLED;
    else
        nn_sweep_record_external(sw, t->d, t->i, 0, 0, err);
    nn_torch_job_free(t->job);
    free(t);
    sw->torch_run = NULL;
    return 1;
}

void nn_sweep_torch_cancel(nn_sweep *sw)
{
    torch_point *t = sw->torch_run;
    if (t)
        nn_torch_job_cancel(t->job);
}

void nn_sweep_torch_wait(nn_sweep *sw)
{
    torch_point *t = sw->torch_run;
    if (t)
        nn_torch_job_wait(t->job);   /* the next poll records it */
}
