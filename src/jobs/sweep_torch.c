/* src/jobs/sweep_torch.c - a sweep's framework way measured for real with
 * PyTorch (nn_sweep_add_pytorch, nnlab/sweep.h): each point is PyTorch's
 * step of the preset at that batch on that device, timed by its helper
 * (src/jobs/torch_step.c) in a process of its own.
 *
 * Why a thread: the helper takes seconds (importing torch, warming up, the
 * timed steps) and nn_torch_step blocks until it ends, while the sweep's
 * runner must never wait: the lab polls it from its UI loop. The thread
 * owns one point at a time; the runner starts it, polls `done`, records the
 * point and joins it (sweep_run.c). A cancel reaches the helper through the
 * request's `cancelled` callback, which the runner polls every 100 ms. */
#include "nnlab/sweep.h"
#include "nnlab/device.h"

#include "nnlab/torch_step.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep_torch.h"

typedef struct torch_point {
    pthread_t thread;
    nn_torch_request req;
    nn_torch_result res;
    enum nn_torch_status status;
    char err[NN_ERR_LEN];
    char device[16];
    atomic_int done, cancel;
    int joined;                  /* the runner has joined the thread */
    int d, i;
} torch_point;

static void join_once(torch_point *t)
{
    if (!t->joined)
        pthread_join(t->thread, NULL);
    t->joined = 1;
}

static int point_cancelled(void *ctx)
{
    torch_point *t = ctx;
    return atomic_load(&t->cancel);
}

static void *point_thread(void *arg)
{
    torch_point *t = arg;
    t->status = nn_torch_step(&t->req, &t->res, t->err, sizeof t->err);
    atomic_store(&t->done, 1);
    return NULL;
}

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
    nn_strlcpy(t->device, sw->device[d], sizeof t->device);
    t->d = d;
    t->i = i;
    t->req = (nn_torch_request){
        .preset_path = sw->preset_path, .device = t->device, .batch = sw->batch[i],
        .steps = sw->base.steps, .warmup = sw->base.warmup, .threads = sw->base.threads,
        .cancelled = point_cancelled, .ctx = t,
    };
    int rc = pthread_create(&t->thread, NULL, point_thread, t);
    if (rc != 0) {
        snprintf(err, err_len, "cannot start PyTorch's point: %s", strerror(rc));
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
    if (!t || !atomic_load(&t->done))
        return 0;
    join_once(t);
    if (t->status == NN_TORCH_OK)
        nn_sweep_record_external(sw, t->d, t->i, t->res.us_per_step,   /* spread: as a job's */
                                 0.5 * fabs(t->res.us_per_step_mean - t->res.us_per_step), "");
    else if (t->status == NN_TORCH_CANCELLED)
        sw->pt[t->d][t->i].state = NN_POINT_CANCELLED;
    else
        nn_sweep_record_external(sw, t->d, t->i, 0, 0, t->err);
    free(t);
    sw->torch_run = NULL;
    return 1;
}

void nn_sweep_torch_cancel(nn_sweep *sw)
{
    torch_point *t = sw->torch_run;
    if (t)
        atomic_store(&t->cancel, 1);
}

void nn_sweep_torch_wait(nn_sweep *sw)
{
    torch_point *t = sw->torch_run;
    if (t)
        join_once(t);                /* the next poll records it */
}
