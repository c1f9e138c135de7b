/* src/jobs/train/engine_device.c - training steps on a device backend (the GPU
 * module): the data set resident in device memory or batches staged in
 * page-locked memory, one full-batch step recorded as a graph and replayed,
 * and phase times on the device's own clock; see engine_internal.h and
 * docs/gpu-backend.md. */
#include <string.h>

#include "train_internal.h"

/* ---- preparation: switches, resident data, page-locked staging ------------------- */

/* Allocates backend memory for `what` and uploads bytes from host into it. */
static int upload_new(nn_job *job, const void *host, size_t bytes, void **out, const char *what,
                      char *err, size_t err_len)
{
    nn_backend *b = &job->backend;
    if (b->ops->alloc(b, bytes, out) != 0 || b->ops->upload(b, *out, host, bytes) != 0)
        return nn_errorf(err, err_len, "uploading %s (%.1f MB) to %s: %s (--no-data-on-device "
                         "copies each batch instead)", what, (double)bytes / 1e6, b->ops->name,
                         b->last_error);
    return 0;
}

static int upload_dataset(nn_job *job, char *err, size_t err_len)
{
    const nn_dataset *d = &job->data;
    size_t sf = d->sample_floats * sizeof(float), yw = engine_label_words(d) * 4;
    const void *ty = d->classes > 0 ? (const void *)d->train_y : (const void *)d->train_t;
    const void *vy = d->classes > 0 ? (const void *)d->val_y : (const void *)d->val_t;
    nn_backend *b = &job->backend;
    if (upload_new(job, d->train_x, (size_t)d->n_train * sf, (void **)&job->dev_train_x,
                   "the training set", err, err_len) != 0 ||
        upload_new(job, ty, (size_t)d->n_train * yw, &job->dev_train_y, "the training labels",
                   err, err_len) != 0)
        return -1;
    if (d->n_val > 0 &&
        (upload_new(job, d->val_x, (size_t)d->n_val * sf, (void **)&job->dev_val_x,
                    "the validation set", err, err_len) != 0 ||
         upload_new(job, vy, (size_t)d->n_val * yw, &job->dev_val_y, "the validation labels",
                    err, err_len) != 0))
        return -1;
    if (b->ops->alloc(b, (size_t)d->n_train * sizeof(int32_t), (void **)&job->dev_order) != 0)
        return nn_errorf(err, err_len, "allocating the sample order on %s: %s", b->ops->name,
                         b->last_error);
    return 0;
}

static int alloc_pinned(nn_job *job, char *err, size_t err_len)
{
    nn_backend *b = &job->backend;
    const nn_dataset *d = &job->data;
    size_t nb = (size_t)job->cfg.batch;
    for (int k = 0; k < 2; k++)
        if (b->ops->host_alloc(b, nb * d->sample_floats * sizeof(float), (void **)&job->pin_x[k]) != 0 ||
            b->ops->host_alloc(b, nb * engine_label_words(d) * 4, &job->pin_y[k]) != 0)
            return nn_errorf(err, err_len, "allocating page-locked batch buffers on %s: %s",
                             b->ops->name, b->last_error);
    return 0;
}

int engine_device_prepare(nn_job *job, char *err, size_t err_len)
{
    const nn_backend_ops *o = job->ops;
    nn_snapshot *s = &job->draft;
    job->device = !o->host_memory;
    s->sync_every_step = job->cfg.sync_every_step;
    if (!job->device)
        return 0;
    s->has_switches = 1;
    job->resident = job->cfg.data_on_device && o->gather_rows;
    job->use_pinned = !job->resident && job->cfg.pinned && o->host_alloc && o->host_wait;
    job->use_graph = job->cfg.graph && o->graph_begin && o->graph_end && o->graph_launch &&
                     o->graph_drop && o->set_step && !job->device_ranks;
    job->dev_timing = o->timing_mark && o->timing_collect;
    s->data_on_device = job->resident;
    s->pinned = job->use_pinned;
    s->graph = job->use_graph;
    s->tf32 = job->cfg.tf32;
    s->has_counters = o->counters != NULL;
    s->steps_async = !job->cfg.sync_every_step;
    if (job->cfg.data_on_device && !job->resident)
        nn_strlcpy(s->note, "this device cannot gather batches itself: each batch is copied",
                   sizeof s->note);
    if (job->cfg.graph && job->device_ranks)
        nn_strlcpy(s->note, "ranks on the GPU: no CUDA graph (the sum runs between the backward and "
                   "the optimiser, which one replay cannot part); one NCCL sum after the backward",
                   sizeof s->note);
    if (job->resident && upload_dataset(job, err, err_len) != 0)
        return -1;
    if (job->use_pinned && alloc_pinned(job, err, err_len) != 0)
        return -1;
    return 0;
}

void engine_device_release(nn_job *job)
{
    nn_backend *b = &job->backend;
    void *dev[] = { job->dev_train_x, job->dev_train_y, job->dev_val_x, job->dev_val_y,
                    job->dev_order };
    if (job->graph_ready)
        b->ops->graph_drop(b);
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        if (dev[i])
            b->ops->free(b, dev[i]);
    for (int k = 0; k < 2; k++) {
        if (job->pin_x[k])
            b->ops->host_free(b, job->pin_x[k]);
        if (job->pin_y[k])
            b->ops->host_free(b, job->pin_y[k]);
    }
}

/* ---- the batch ----------------------------------------------------------------------- */

static int mark(nn_job *job, int m)
{
    nn_backend *b = &job->backend;
    return job->dev_timing ? b->ops->timing_mark(b, m) : 0;
}

/* Gathers on the host into the page-locked buffer the device is not reading,
 * and copies from it. */
static int copy_batch_pinned(nn_job *job, long pos, int n, void *y)
{
    const nn_dataset *d = &job->data;
    nn_backend *b = &job->backend;
    int k = job->pin_next;
    job->pin_next ^= 1;
    /* the device may still be reading what this buffer held two steps ago */
    if (b->ops->host_wait(b, job->pin_x[k]) != 0 || b->ops->host_wait(b, job->pin_y[k]) != 0)
        return -1;
    engine_gather_host(d, d->train_x, d->train_y, d->train_t, job->order + pos, 0, n, job->pin_x[k],
                       (int32_t *)job->pin_y[k], (float *)job->pin_y[k]);
    if (b->ops->upload(b, job->net.x, job->pin_x[k], (size_t)n * d->sample_floats * sizeof(float)) != 0)
        return -1;
    return b->ops->upload(b, y, job->pin_y[k], (size_t)n * engine_label_words(d) * 4);
}

/* The batch into net->x and the labels or targets: gathered on the device
 * from the resident set (after uploading this epoch's order with the epoch's
 * first batch), or gathered on the host and copied, from page-locked memory
 * or plain (pageable) memory. */
static int copy_batch(nn_job *job, long pos, int n)
{
    const nn_dataset *d = &job->data;
    nn_backend *b = &job->backend;
    nn_net *net = &job->net;
    void *y = d->classes > 0 ? (void *)net->labels : (void *)net->targets;
    if (job->resident) {
        /* the epoch's first global batch: a rank's position in it is rank x batch */
        if (pos < job->global_batch &&
            b->ops->upload(b, job->dev_order, job->order, (size_t)d->n_train * sizeof(int32_t)) != 0)
            return -1;
        return b->ops->gather_rows(b, n, job->dev_order + pos, 0, job->dev_train_x,
                                   d->sample_floats, net->x, job->dev_train_y,
                                   engine_label_words(d), y);
    }
    if (job->use_pinned)
        return copy_batch_pinned(job, pos, n, y);
    return engine_load_batch(job, d->train_x, d->train_y, d->train_t, job->order + pos, 0, n);
}

int engine_device_val_batch(nn_job *job, long first, int n)
{
    const nn_dataset *d = &job->data;
    nn_backend *b = &job->backend;
    void *y = d->classes > 0 ? (void *)job->net.labels : (void *)job->net.targets;
    return b->ops->gather_rows(b, n, NULL, first, job->dev_val_x, d->sample_floats, job->net.x,
                               job->dev_val_y, engine_label_words(d), y);
}

/* ---- the compute part: eager, or recorded once and replayed ------------------------- */

/* Forward, loss and backward, optimiser: issued one by one. split: mark the
 * end of each on the device's clock (an eager job); a graph job's eager
 * steps (a partial batch) are timed as one, like its replays. */
static int step_eager(nn_job *job, int n, long step, int split, double *t_fwd, double *t_bwd,
                      double *t_sum)
{
    nn_net *net = &job->net;
    /* the buckets the backward starts, fresh for this step (a rank's) */
    if (job->device_ranks && engine_ranks_begin_step(job, n) != 0)
        return -1;
    /* a rank past the epoch's last global batch has no samples: it adds zeros */
    const float *out = n > 0 ? nn_net_forward(net, n, 1, step) : net->x;
    if (!out || (split && mark(job, engine_phase_mark(NN_PHASE_FORWARD)) != 0))
        return -1;
    *t_fwd = nn_now();
    if (n > 0 && (nn_net_loss(net, n, out, nn_net_dout(net)) != 0 ||
                  nn_net_backward(net, n, step, nn_net_dout(net)) != 0))
        return -1;
    if (split && mark(job, engine_phase_mark(NN_PHASE_BACKWARD)) != 0)
        return -1;
    *t_bwd = *t_sum = nn_now();
    if (job->device_ranks) {         /* the ranks' sum on the device, between backward and optimiser */
        if (engine_ranks_reduce_grads(job, n) != 0 ||
            (split && mark(job, engine_phase_mark(NN_PHASE_ALLREDUCE)) != 0))
            return -1;
        *t_sum = nn_now();
    }
    if (nn_net_optimize(net, &job->cfg.preset, (float)job->cfg.lr) != 0 ||
        (split && mark(job, engine_phase_mark(NN_PHASE_OPTIMIZER)) != 0) ||
        engine_ranks_check_same(job) != 0)
        return -1;
    return 0;
}

/* One recording of forward, loss, backward and optimiser of a full batch, in
 * the strict or the relaxed capture mode: 0 when it is recorded, else -1
 * with the reason in why (and nothing kept). */
static int record_once(nn_job *job, int n, long step, int relaxed, char *why, size_t why_len)
{
    nn_backend *b = &job->backend;
    nn_net *net = &job->net;
    long t_saved = net->opt_t;
    why[0] = '\0';
    if (b->ops->graph_begin(b, relaxed) != 0) {
        nn_strlcpy(why, b->last_error, why_len);
        return -1;
    }
    const float *out = nn_net_forward(net, n, 1, step);
    int failed = !out || nn_net_loss(net, n, out, nn_net_dout(net)) != 0 ||
                 nn_net_backward(net, n, step, nn_net_dout(net)) != 0 ||
                 nn_net_optimize(net, &job->cfg.preset, (float)job->cfg.lr) != 0;
    if (failed)
        nn_strlcpy(why, b->last_error, why_len);
    net->opt_t = t_saved;       /* recording is not a step; each replay is */
    if (b->ops->graph_end(b) != 0 && !why[0])
        nn_strlcpy(why, b->last_error, why_len);
    if (!why[0])
        return 0;
    b->ops->graph_drop(b);
    return -1;
}

/* Records the step (the job's second full batch: the first ran eagerly, so
 * that cuDNN and cuBLAS initialised and chose their algorithms outside the
 * recording, as PyTorch's warm-up before capture). A strict recording that
 * fails is tried once in the relaxed mode, where calls that are unsafe while
 * recording run unrecorded; when that fails too the job goes on eagerly. The
 * snapshot's note says which, and why. */
static void record_step(nn_job *job, int n, long step)
{
    char strict[NN_BACKEND_ERROR_LEN], relaxed[NN_BACKEND_ERROR_LEN];
    if (record_once(job, n, step, 0, strict, sizeof strict) == 0) {
        job->graph_ready = 1;
        return;
    }
    if (record_once(job, n, step, 1, relaxed, sizeof relaxed) == 0) {
        job->graph_ready = 1;
        nn_errorf(job->draft.note, sizeof job->draft.note, "CUDA graph recorded in relaxed capture "
                  "mode; the strict recording failed: %s", strict);
        return;
    }
    job->use_graph = 0;
    job->draft.graph = 0;
    nn_errorf(job->draft.note, sizeof job->draft.note, "no CUDA graph, steps run eagerly: %s "
              "(relaxed: %s)", strict, relaxed);
}

/* The compute part of a step: the recorded graph for a full batch once there
 * is one, else eagerly. The first full batch of a graph job runs eagerly (the
 * warm-up), the second is recorded and replayed. Sets t_fwd and t_bwd when it
 * ran eagerly. The step's values (nn_net_set_step) were given before, so a
 * replay runs this step. */
static int compute_step(nn_job *job, int n, long step, double *t_fwd, double *t_bwd, double *t_sum)
{
    nn_net *net = &job->net;
    nn_backend *b = &job->backend;
    int full = n == job->cfg.batch;
    if (job->use_graph && full && !job->graph_ready) {
        if (job->graph_warm)
            record_step(job, n, step);
        job->graph_warm = 1;
    }
    int graph_job = job->use_graph;
    if (graph_job && full && job->graph_ready) {
        if (b->ops->graph_launch(b) != 0)
            return -1;
        net->opt_t++;
        return 0;
    }
    /* a recording needs nothing more: the next replay reads its step's values */
    return step_eager(job, n, step, !graph_job, t_fwd, t_bwd, t_sum);
}

/* Only sync_every_step waits here. */
int engine_device_step(nn_job *job, long pos, int n, long step, double t[NN_PHASE_COUNT],
                       double *t_graph)
{
    nn_net *net = &job->net;
    nn_backend *b = &job->backend;
    double t0 = nn_now(), t1, t2 = 0, t3 = 0, t3s = 0, t4, t5;

    if (mark(job, 0) != 0 || copy_batch(job, pos, n) != 0 || mark(job, engine_phase_mark(NN_PHASE_COPY)) != 0)
        return -1;
    t1 = nn_now();
    if (compute_step(job, n, step, &t2, &t3, &t3s) != 0)
        return -1;
    int graph_job = job->use_graph;
    if (graph_job && mark(job, MARK_GRAPH) != 0)
        return -1;
    t4 = nn_now();
    if (job->cfg.sync_every_step &&
        b->ops->download(b, job->step_stats, net->stats, sizeof job->step_stats) != 0)
        return -1;
    t5 = nn_now();
    t[NN_PHASE_COPY] += t1 - t0;
    if (graph_job) {
        *t_graph += t4 - t1;
    } else {
        t[NN_PHASE_FORWARD] += t2 - t1;
        t[NN_PHASE_BACKWARD] += t3 - t2;
        t[NN_PHASE_ALLREDUCE] += t3s - t3;
        t[NN_PHASE_OPTIMIZER] += t4 - t3s;
    }
    t[NN_PHASE_SYNC] += t5 - t4;
    return 0;
}

/* ---- timing on the device's clock ------------------------------------------------------- */

int engine_device_collect(nn_job *job, int wait)
{
    nn_backend *b = &job->backend;
    double us[NN_TIMING_MARKS] = { 0 };
    long n[NN_TIMING_MARKS] = { 0 };
    if (!job->dev_timing)
        return 0;
    if (b->ops->timing_collect(b, wait, us, n) < 0)
        return -1;
    for (int m = 0; m < NN_TIMING_MARKS; m++) {
        job->tot.dev_us[m] += us[m];
        job->tot.dev_n[m] += n[m];
    }
    return 0;
}

/* The timed steps neither inherit the warm-up's work nor its timings and counts. */
int engine_device_start_timing(nn_job *job)
{
    nn_backend *b = &job->backend;
    if (b->ops->synchronize(b) != 0 || engine_device_collect(job, 1) != 0)
        return -1;
    memset(job->tot.dev_us, 0, sizeof job->tot.dev_us);
    memset(job->tot.dev_n, 0, sizeof job->tot.dev_n);
    engine_read_counters(job, &job->tot.cnt_base);
    memset(&job->tot.cnt_skip, 0, sizeof job->tot.cnt_skip);
    return 0;
}
