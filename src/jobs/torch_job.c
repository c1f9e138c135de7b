/* src/jobs/torch_job.c - PyTorch's step (nn_torch_step) on a thread of its
 * own: see nnlab/torch_step.h.
 *
 * Why a thread: the helper takes seconds (importing torch, warming up, the
 * timed steps) and nn_torch_step blocks until it ends, while its callers
 * (the sweep's runner, the lab's race) must never wait. A cancel reaches the
 * helper through the request's `cancelled` callback, polled every 100 ms. */
#include "nnlab/torch_step.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnlab/preset.h"
#include "util.h"

struct nn_torch_job {
    pthread_t thread;
    nn_torch_request req;
    char preset_path[NN_PATH_LEN], device[16];
    nn_torch_result res;
    enum nn_torch_status status;
    char err[NN_ERR_LEN];
    atomic_int done, cancel;
    int joined;
};

static int job_cancelled(void *ctx)
{
    nn_torch_job *j = ctx;
    return atomic_load(&j->cancel);
}

static void *job_thread(void *arg)
{
    nn_torch_job *j = arg;
    j->status = nn_torch_step(&j->req, &j->res, j->err, sizeof j->err);
    atomic_store(&j->done, 1);
    return NULL;
}

nn_torch_job *nn_torch_job_start(const nn_torch_request *req, char *err, size_t err_len)
{
    nn_torch_job *j = calloc(1, sizeof *j);
    if (!j) {
        snprintf(err, err_len, "out of memory for PyTorch's step");
        return NULL;
    }
    nn_strlcpy(j->preset_path, req->preset_path ? req->preset_path : "", sizeof j->preset_path);
    nn_strlcpy(j->device, req->device ? req->device : "cpu", sizeof j->device);
    j->req = *req;
    j->req.preset_path = j->preset_path;
    j->req.device = j->device;
    j->req.cancelled = job_cancelled;   /* the caller cancels through nn_torch_job_cancel */
    j->req.ctx = j;
    int rc = pthread_create(&j->thread, NULL, job_thread, j);
    if (rc != 0) {
        snprintf(err, err_len, "cannot start PyTorch's step: %s", strerror(rc));
        free(j);
        return NULL;
    }
    return j;
}

static void join_once(nn_torch_job *j)
{
    if (!j->joined)
        pthread_join(j->thread, NULL);
    j->joined = 1;
}

int nn_torch_job_done(nn_torch_job *j, enum nn_torch_status *status, nn_torch_result *out, char *err,
                      size_t err_len)
{
    if (!atomic_load(&j->done))
        return 0;
    join_once(j);
    *status = j->status;
    if (j->status == NN_TORCH_OK)
        *out = j->res;
    nn_strlcpy(err, j->err, err_len);
    return 1;
}

void nn_torch_job_wait(nn_torch_job *j)
{
    join_once(j);
}

void nn_torch_job_cancel(nn_torch_job *j)
{
    if (j)
        atomic_store(&j->cancel, 1);
}

void nn_torch_job_free(nn_torch_job *j)
{
    if (!j)
        return;
    join_once(j);
    free(j);
}
