/* src/jobs/train/engine_batch.c - the epoch's sample order and gathering a batch on
 * the host; see engine_internal.h. */
#include <stdlib.h>
#include <string.h>

#include "train_internal.h"

int engine_batch_prepare(nn_job *job, char *err, size_t err_len)
{
    const nn_dataset *d = &job->data;
    size_t b = (size_t)job->cfg.batch;
    job->order = malloc((size_t)d->n_train * sizeof *job->order);
    job->batch_x = malloc(b * d->sample_floats * sizeof(float));
    if (d->classes > 0)
        job->batch_y = malloc(b * sizeof(int32_t));
    else
        job->batch_t = malloc(b * (size_t)d->target_width * sizeof(float));
    if (!job->order || !job->batch_x || (!job->batch_y && !job->batch_t))
        return nn_errorf(err, err_len, "out of host memory for the batch buffers (batch %zu)", b);
    for (long i = 0; i < d->n_train; i++)
        job->order[i] = (int32_t)i;
    return 0;
}

void engine_batch_release(nn_job *job)
{
    free(job->order);
    free(job->batch_x);
    free(job->batch_y);
    free(job->batch_t);
}

size_t engine_label_words(const nn_dataset *d)
{
    return d->classes > 0 ? 1 : (size_t)d->target_width;
}

/* Fisher-Yates from the job's own generator: the same seed, the same order
 * on every backend. */
void engine_shuffle(nn_job *job)
{
    for (long i = job->data.n_train - 1; i > 0; i--) {
        long j = (long)nn_rng_below(&job->shuffle_rng, (uint64_t)i + 1);
        int32_t t = job->order[i];
        job->order[i] = job->order[j];
        job->order[j] = t;
    }
}

void engine_gather_host(const nn_dataset *d, const float *xs, const int32_t *ys, const float *ts,
                        const int32_t *idx, long first, int n, float *bx, int32_t *by, float *bt)
{
    size_t sf = d->sample_floats, tw = (size_t)d->target_width;
    for (int i = 0; i < n; i++) {
        long s = idx ? idx[i] : first + i;
        memcpy(bx + (size_t)i * sf, xs + (size_t)s * sf, sf * sizeof(float));
        if (ys)
            by[i] = ys[s];
        else
            memcpy(bt + (size_t)i * tw, ts + (size_t)s * tw, tw * sizeof(float));
    }
}

int engine_load_batch(nn_job *job, const float *xs, const int32_t *ys, const float *ts,
                      const int32_t *idx, long first, int n)
{
    const nn_dataset *d = &job->data;
    nn_backend *b = &job->backend;
    int direct = b->ops->host_memory;
    size_t sf = d->sample_floats, tw = (size_t)d->target_width;
    float *bx = direct ? job->net.x : job->batch_x;
    int32_t *by = direct ? job->net.labels : job->batch_y;
    float *bt = direct ? job->net.targets : job->batch_t;
    engine_gather_host(d, xs, ys, ts, idx, first, n, bx, by, bt);
    if (direct)
        return 0;
    if (b->ops->upload(b, job->net.x, bx, (size_t)n * sf * sizeof(float)) != 0)
        return -1;
    if (ys)
        return b->ops->upload(b, job->net.labels, by, (size_t)n * sizeof(int32_t));
    return b->ops->upload(b, job->net.targets, bt, (size_t)n * tw * sizeof(float));
}
