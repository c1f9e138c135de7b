/* src/core/engine.c - the training job: a trainer thread that owns the data, the
 * backend and the network, and publishes snapshots; see engine.h. */
#include "nnlab/engine.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "data.h"
#include "net.h"
#include "rng.h"

struct nn_job {
    nn_job_config cfg;           /* resolved: device, batch, epochs, lr, log_every set */
    const nn_backend_ops *ops;
    pthread_t thread;
    int thread_started;

    /* shared with readers, under lock */
    pthread_mutex_t lock;
    pthread_cond_t wake;         /* resume and cancel wake a paused trainer */
    nn_snapshot snap;
    nn_loss_point *points;       /* capacity fixed at start: no allocation while training */
    long n_points, cap_points;
    nn_epoch_result *epoch_results;
    int n_epoch_results, cap_epoch_results;

    atomic_int pause_requested;
    atomic_int cancel_requested;

    /* owned by the trainer thread */
    nn_snapshot mine;            /* the trainer's working copy, published after each step */
    nn_dataset data;
    nn_backend backend;
    int backend_open;
    nn_net net;
    int32_t *order;              /* (n_train) sample order of the current epoch */
    float *batch_x;              /* (batch, sample_floats) gathered on the host */
    int32_t *batch_y;            /* (batch) */
    float *batch_t;              /* (batch, target_width) */
    double *step_times;          /* bench: (timed steps) for the median */
    nn_rng shuffle_rng;
    double active_s;             /* training time so far, pauses excluded */
    double step_s_total;         /* time inside timed steps */

    /* A device backend (not host memory): the GPU paths and switches apply. */
    int device;
    int resident;                /* the data set lives in backend memory */
    int use_pinned;              /* batches staged in page-locked memory */
    int use_graph, graph_ready;  /* graphs asked for (and possible); one recorded */
    int dev_timing;              /* the backend times phases on its own clock */
    float *dev_train_x, *dev_val_x;   /* resident data set, backend memory */
    void *dev_train_y, *dev_val_y;    /* int32 labels or float targets */
    int32_t *dev_order;          /* (n_train) this epoch's order, backend memory */
    float *pin_x[2];             /* page-locked staging, two so that one fills */
    void *pin_y[2];              /*   while the other is read by the device */
    int pin_next;
    float step_stats[2];         /* sync_every_step: the accumulator, read each step */
    double dev_us[NN_TIMING_MARKS];   /* device-clock phase times of timed steps */
    long dev_n[NN_TIMING_MARKS];
    double graph_host_s;         /* host time of the compute part of graph-job steps */
    nn_backend_counters cnt_base;     /* counters when timing started */
    nn_backend_counters cnt_skip;     /* traffic outside steps (validation) since then */
};

/* Timing marks of a device step (backend.h timing_mark): mark p + 1 ends phase
 * p for copy, forward, backward and optimizer; a graph job marks the whole
 * compute part (replayed or eager) with MARK_GRAPH. */
#define MARK_GRAPH 6

const char *nn_job_state_name(nn_job_state s)
{
    static const char *const names[] = { "preparing", "running", "paused", "done", "cancelled", "failed" };
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

const char *nn_phase_name(enum nn_phase p)
{
    static const char *const names[] = { "copy", "forward", "backward", "optimizer", "sync" };
    return (unsigned)p < NN_PHASE_COUNT ? names[p] : "?";
}

void nn_job_config_init(nn_job_config *cfg, const nn_preset *p)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->preset = *p;
    cfg->seed = 1;
    cfg->data_on_device = 1;
    cfg->graph = 1;
}

/* ---- publishing ------------------------------------------------------------ */

static void publish(nn_job *job)
{
    pthread_mutex_lock(&job->lock);
    job->snap = job->mine;
    pthread_mutex_unlock(&job->lock);
}

static void publish_point(nn_job *job, const nn_loss_point *pt)
{
    pthread_mutex_lock(&job->lock);
    if (job->n_points < job->cap_points)
        job->points[job->n_points++] = *pt;
    job->mine.n_loss_points = job->n_points;
    job->mine.last_loss = pt->loss;
    job->snap = job->mine;
    pthread_mutex_unlock(&job->lock);
}

static void publish_epoch(nn_job *job, const nn_epoch_result *r)
{
    pthread_mutex_lock(&job->lock);
    if (job->n_epoch_results < job->cap_epoch_results)
        job->epoch_results[job->n_epoch_results++] = *r;
    job->mine.n_epoch_results = job->n_epoch_results;
    job->mine.last_epoch = *r;
    job->snap = job->mine;
    pthread_mutex_unlock(&job->lock);
}

static void fail(nn_job *job, const char *msg)
{
    job->mine.state = NN_JOB_FAILED;
    nn_strlcpy(job->mine.error, msg, sizeof job->mine.error);
    publish(job);
}

/* ---- preparation -------------------------------------------------------------- */

static int prepare_buffers(nn_job *job, char *err, size_t err_len)
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
    if (job->cfg.bench) {
        job->step_times = malloc((size_t)job->cfg.steps * sizeof(double));
        if (!job->step_times)
            return nn_errorf(err, err_len, "out of host memory for %ld step times", job->cfg.steps);
    }
    return 0;
}

/* ---- a device backend: switches, resident data, page-locked staging ------------- */

static size_t label_words(const nn_dataset *d)
{
    return d->classes > 0 ? 1 : (size_t)d->target_width;
}

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
    size_t sf = d->sample_floats * sizeof(float), yw = label_words(d) * 4;
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
            b->ops->host_alloc(b, nb * label_words(d) * 4, &job->pin_y[k]) != 0)
            return nn_errorf(err, err_len, "allocating page-locked batch buffers on %s: %s",
                             b->ops->name, b->last_error);
    return 0;
}

/* Decides which switches apply on this backend, records them in the
 * snapshot, and sets up what they need. */
static int prepare_device(nn_job *job, char *err, size_t err_len)
{
    const nn_backend_ops *o = job->ops;
    nn_snapshot *s = &job->mine;
    job->device = !o->host_memory;
    s->sync_every_step = job->cfg.sync_every_step;
    if (!job->device)
        return 0;
    s->has_switches = 1;
    job->resident = job->cfg.data_on_device && o->gather_rows;
    job->use_pinned = !job->resident && job->cfg.pinned && o->host_alloc && o->host_wait;
    job->use_graph = job->cfg.graph && o->graph_begin && o->graph_end && o->graph_launch &&
                     o->graph_advance && o->graph_drop;
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
    if (job->resident && upload_dataset(job, err, err_len) != 0)
        return -1;
    if (job->use_pinned && alloc_pinned(job, err, err_len) != 0)
        return -1;
    return 0;
}

static int prepare(nn_job *job, char *err, size_t err_len)
{
    nn_job_config *c = &job->cfg;
    nn_backend_config bc = { .threads = c->threads, .tf32 = c->tf32 };

    if (nn_data_for_preset(&c->preset, c->data_dir[0] ? c->data_dir : NULL, c->seed,
                           &job->data, err, err_len) != 0)
        return -1;
    nn_strlcpy(job->mine.data_name, job->data.name, sizeof job->mine.data_name);
    nn_strlcpy(job->mine.data_desc, job->data.description, sizeof job->mine.data_desc);
    job->mine.data_synthetic = job->data.synthetic;
    if (nn_backend_open(&job->backend, job->ops, &bc) != 0)
        return nn_errorf(err, err_len, "device %s: %s", job->ops->name, job->backend.last_error);
    job->backend_open = 1;
    if (nn_net_create(&job->net, &job->backend, &c->preset, c->batch, c->seed, err, err_len) != 0)
        return -1;
    job->mine.n_params = nn_net_param_count(&job->net);
    nn_rng_seed(&job->shuffle_rng, c->seed ^ 0x5eed5eedULL);
    if (prepare_buffers(job, err, err_len) != 0)
        return -1;
    return prepare_device(job, err, err_len);
}

/* ---- one step ------------------------------------------------------------------ */

static void shuffle(nn_job *job)
{
    for (long i = job->data.n_train - 1; i > 0; i--) {
        long j = (long)nn_rng_below(&job->shuffle_rng, (uint64_t)i + 1);
        int32_t t = job->order[i];
        job->order[i] = job->order[j];
        job->order[j] = t;
    }
}

/* Gathers samples idx[0..n) (or first..first+n) of one split into the
 * network's input buffers: straight into them when the backend's memory is
 * host memory, else into host staging buffers that are then uploaded. */
static void gather_host(const nn_dataset *d, const float *xs, const int32_t *ys, const float *ts,
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

static int load_batch(nn_job *job, const float *xs, const int32_t *ys, const float *ts,
                      const int32_t *idx, long first, int n)
{
    const nn_dataset *d = &job->data;
    nn_backend *b = &job->backend;
    int direct = b->ops->host_memory;
    size_t sf = d->sample_floats, tw = (size_t)d->target_width;
    float *bx = direct ? job->net.x : job->batch_x;
    int32_t *by = direct ? job->net.labels : job->batch_y;
    float *bt = direct ? job->net.targets : job->batch_t;
    gather_host(d, xs, ys, ts, idx, first, n, bx, by, bt);
    if (direct)
        return 0;
    if (b->ops->upload(b, job->net.x, bx, (size_t)n * sf * sizeof(float)) != 0)
        return -1;
    if (ys)
        return b->ops->upload(b, job->net.labels, by, (size_t)n * sizeof(int32_t));
    return b->ops->upload(b, job->net.targets, bt, (size_t)n * tw * sizeof(float));
}

/* One training step on n samples starting at position pos of the epoch's
 * order; phase times are added to t[]. */
static int train_step(nn_job *job, long pos, int n, long step, double t[NN_PHASE_COUNT])
{
    nn_net *net = &job->net;
    nn_backend *b = &job->backend;
    const nn_dataset *d = &job->data;
    double t0 = nn_now(), t1, t2, t3, t4;

    if (load_batch(job, d->train_x, d->train_y, d->train_t, job->order + pos, 0, n) != 0)
        return -1;
    t1 = nn_now();
    const float *out = nn_net_forward(net, n, 1, step);
    if (!out)
        return -1;
    t2 = nn_now();
    if (nn_net_loss(net, n, out, nn_net_dout(net)) != 0 ||
        nn_net_backward(net, n, step, nn_net_dout(net)) != 0)
        return -1;
    t3 = nn_now();
    if (nn_net_optimize(net, &job->cfg.preset, (float)job->cfg.lr) != 0)
        return -1;
    t4 = nn_now();
    if (b->ops->synchronize(b) != 0 ||
        (job->cfg.sync_every_step &&
         b->ops->download(b, job->step_stats, net->stats, sizeof job->step_stats) != 0))
        return -1;
    double t5 = nn_now();
    t[NN_PHASE_COPY] += t1 - t0;
    t[NN_PHASE_FORWARD] += t2 - t1;
    t[NN_PHASE_BACKWARD] += t3 - t2;
    t[NN_PHASE_OPTIMIZER] += t4 - t3;
    t[NN_PHASE_SYNC] += t5 - t4;
    return 0;
}

/* ---- one step on a device backend ----------------------------------------------- */

static int mark(nn_job *job, int m)
{
    nn_backend *b = &job->backend;
    return job->dev_timing ? b->ops->timing_mark(b, m) : 0;
}

/* The batch into net->x and the labels or targets: gathered on the device
 * from the resident set (after uploading this epoch's order with the epoch's
 * first batch), or gathered on the host and copied, from page-locked memory
 * or plain (pageable) memory. */
static int copy_batch_device(nn_job *job, long pos, int n)
{
    const nn_dataset *d = &job->data;
    nn_backend *b = &job->backend;
    nn_net *net = &job->net;
    void *y = d->classes > 0 ? (void *)net->labels : (void *)net->targets;
    size_t yw = label_words(d);
    if (job->resident) {
        const void *ys = job->dev_train_y;
        if (pos == 0 &&
            b->ops->upload(b, job->dev_order, job->order, (size_t)d->n_train * sizeof(int32_t)) != 0)
            return -1;
        return b->ops->gather_rows(b, n, job->dev_order + pos, 0, job->dev_train_x,
                                   d->sample_floats, net->x, ys, yw, y);
    }
    if (job->use_pinned) {
        int k = job->pin_next;
        job->pin_next ^= 1;
        /* the device may still be reading what this buffer held two steps ago */
        if (b->ops->host_wait(b, job->pin_x[k]) != 0 || b->ops->host_wait(b, job->pin_y[k]) != 0)
            return -1;
        gather_host(d, d->train_x, d->train_y, d->train_t, job->order + pos, 0, n, job->pin_x[k],
                    (int32_t *)job->pin_y[k], (float *)job->pin_y[k]);
        if (b->ops->upload(b, net->x, job->pin_x[k], (size_t)n * d->sample_floats * sizeof(float)) != 0)
            return -1;
        return b->ops->upload(b, y, job->pin_y[k], (size_t)n * yw * 4);
    }
    return load_batch(job, d->train_x, d->train_y, d->train_t, job->order + pos, 0, n);
}

/* Forward, loss and backward, optimiser: issued one by one. split: mark the
 * end of each on the device's clock (an eager job); a graph job's eager
 * steps (a partial batch) are timed as one, like its replays. */
static int step_eager(nn_job *job, int n, long step, int split, double *t_fwd, double *t_bwd)
{
    nn_net *net = &job->net;
    const float *out = nn_net_forward(net, n, 1, step);
    if (!out || (split && mark(job, NN_PHASE_FORWARD + 1) != 0))
        return -1;
    *t_fwd = nn_now();
    if (nn_net_loss(net, n, out, nn_net_dout(net)) != 0 ||
        nn_net_backward(net, n, step, nn_net_dout(net)) != 0 ||
        (split && mark(job, NN_PHASE_BACKWARD + 1) != 0))
        return -1;
    *t_bwd = nn_now();
    if (nn_net_optimize(net, &job->cfg.preset, (float)job->cfg.lr) != 0 ||
        (split && mark(job, NN_PHASE_OPTIMIZER + 1) != 0))
        return -1;
    return 0;
}

/* Records forward, loss, backward and optimiser of one full batch as a graph.
 * When the backend cannot (or a call fails while recording), the job goes on
 * eagerly and the snapshot's note says why. */
static void record_step(nn_job *job, int n, long step)
{
    nn_backend *b = &job->backend;
    nn_net *net = &job->net;
    long t_saved = net->opt_t;
    char why[NN_BACKEND_ERROR_LEN] = "";
    if (b->ops->graph_begin(b) != 0) {
        nn_strlcpy(why, b->last_error, sizeof why);
    } else {
        const float *out = nn_net_forward(net, n, 1, step);
        int failed = !out || nn_net_loss(net, n, out, nn_net_dout(net)) != 0 ||
                     nn_net_backward(net, n, step, nn_net_dout(net)) != 0 ||
                     nn_net_optimize(net, &job->cfg.preset, (float)job->cfg.lr) != 0;
        if (failed)
            nn_strlcpy(why, b->last_error, sizeof why);
        net->opt_t = t_saved;       /* recording is not a step; each replay is */
        if (b->ops->graph_end(b) != 0 && !why[0])
            nn_strlcpy(why, b->last_error, sizeof why);
        if (!why[0]) {
            job->graph_ready = 1;
            return;
        }
        b->ops->graph_drop(b);
    }
    job->use_graph = 0;
    job->mine.graph = 0;
    nn_errorf(job->mine.note, sizeof job->mine.note, "no CUDA graph, steps run eagerly: %s", why);
}

/* One training step on a device. The host times go to t[] (a graph job's
 * compute part to *t_graph); the device times are marked for timing_collect.
 * Only sync_every_step waits here. */
static int train_step_device(nn_job *job, long pos, int n, long step, double t[NN_PHASE_COUNT],
                             double *t_graph)
{
    nn_net *net = &job->net;
    nn_backend *b = &job->backend;
    double t0 = nn_now(), t1, t2 = 0, t3 = 0, t4, t5;

    if (mark(job, 0) != 0 || copy_batch_device(job, pos, n) != 0 || mark(job, NN_PHASE_COPY + 1) != 0)
        return -1;
    t1 = nn_now();
    int full = n == job->cfg.batch;
    if (job->use_graph && full && !job->graph_ready)
        record_step(job, n, step);
    int graph_job = job->use_graph;
    if (graph_job && full && job->graph_ready) {
        if (b->ops->graph_launch(b) != 0)
            return -1;
        net->opt_t++;
    } else {
        if (step_eager(job, n, step, !graph_job, &t2, &t3) != 0)
            return -1;
        /* the recording stays in step with the steps run without it */
        if (job->graph_ready && b->ops->graph_advance(b) != 0)
            return -1;
    }
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
        t[NN_PHASE_OPTIMIZER] += t4 - t3;
    }
    t[NN_PHASE_SYNC] += t5 - t4;
    return 0;
}

/* Reads the running loss sum and clears it: the only point where the trainer
 * waits for the device outside validation. */
static int take_running_loss(nn_job *job, float *sum)
{
    nn_backend *b = &job->backend;
    float stats[2];
    if (b->ops->download(b, stats, job->net.stats, sizeof stats) != 0 ||
        b->ops->zero(b, job->net.stats, sizeof stats) != 0)
        return -1;
    *sum = stats[0];
    return 0;
}

/* Returns 0, 1 when cancelled part way, -1 on a backend error. */
static int validate(nn_job *job, nn_epoch_result *r)
{
    const nn_dataset *d = &job->data;
    nn_backend *b = &job->backend;
    double loss = 0.0, correct = 0.0;
    long seen = 0;
    for (long first = 0; first < d->n_val; first += job->cfg.batch) {
        int n = (int)(d->n_val - first < job->cfg.batch ? d->n_val - first : job->cfg.batch);
        float stats[2];
        if (atomic_load(&job->cancel_requested))
            return 1;
        if (b->ops->zero(b, job->net.stats, sizeof stats) != 0)
            return -1;
        if (job->resident) {
            void *y = d->classes > 0 ? (void *)job->net.labels : (void *)job->net.targets;
            if (b->ops->gather_rows(b, n, NULL, first, job->dev_val_x, d->sample_floats, job->net.x,
                                    job->dev_val_y, label_words(d), y) != 0)
                return -1;
        } else if (load_batch(job, d->val_x, d->val_y, d->val_t, NULL, first, n) != 0) {
            return -1;
        }
        const float *out = nn_net_forward(&job->net, n, 0, 0);
        if (!out || nn_net_loss(&job->net, n, out, NULL) != 0 ||
            b->ops->download(b, stats, job->net.stats, sizeof stats) != 0)
            return -1;
        loss += (double)stats[0] * n;   /* the op adds the batch mean */
        correct += stats[1];
        seen += n;
    }
    if (b->ops->zero(b, job->net.stats, 2 * sizeof(float)) != 0)
        return -1;
    r->val_loss = seen ? (float)(loss / (double)seen) : NAN;
    r->has_accuracy = d->classes > 0;
    r->val_accuracy = seen && d->classes > 0 ? (float)(correct / (double)seen) : 0.0f;
    return 0;
}

/* ---- pause, cancel, progress --------------------------------------------------- */

/* Blocks while a pause is requested; returns 1 when the job must stop. */
static int honour_requests(nn_job *job)
{
    if (atomic_load(&job->cancel_requested))
        return 1;
    if (!atomic_load(&job->pause_requested))
        return 0;
    job->mine.state = NN_JOB_PAUSED;
    publish(job);
    pthread_mutex_lock(&job->lock);
    while (atomic_load(&job->pause_requested) && !atomic_load(&job->cancel_requested))
        pthread_cond_wait(&job->wake, &job->lock);
    pthread_mutex_unlock(&job->lock);
    job->mine.state = NN_JOB_RUNNING;
    return atomic_load(&job->cancel_requested);
}

static void read_counters(nn_job *job, nn_backend_counters *c)
{
    nn_backend *b = &job->backend;
    memset(c, 0, sizeof *c);
    if (b->ops->counters)
        b->ops->counters(b, c);
}

/* The backend's counters over the timed steps, less validation, per step. */
static void step_counters(nn_job *job, long timed)
{
    nn_backend_counters now;
    const nn_backend_counters *a = &job->cnt_base, *k = &job->cnt_skip;
    nn_step_counters *c = &job->mine.per_step;
    const double inv = 1.0 / (double)timed;
    read_counters(job, &now);
#define PER_STEP(f) ((double)(now.f - a->f - k->f) * inv)
    c->kernels = PER_STEP(kernels);
    c->library_calls = PER_STEP(library_calls);
    c->graph_launches = PER_STEP(graph_launches);
    c->graph_nodes = PER_STEP(graph_nodes);
    c->h2d_copies = PER_STEP(h2d_copies);
    c->h2d_bytes = PER_STEP(h2d_bytes);
    c->d2h_copies = PER_STEP(d2h_copies);
    c->d2h_bytes = PER_STEP(d2h_bytes);
    c->syncs = PER_STEP(syncs);
#undef PER_STEP
    c->launches = c->kernels + c->library_calls + c->graph_launches;
}

/* Phase times of a device job: the device's clock where it timed them (mark
 * p + 1 ends phase p), the host's for sync (time spent waiting) and where the
 * backend has no timer. A graph job has no separate forward, backward and
 * optimizer: they are one replay, graph_us. */
static void device_phases(nn_job *job, long timed)
{
    nn_snapshot *s = &job->mine;
    unsigned valid = 1u << NN_PHASE_SYNC;
    int graph_job = job->use_graph;
    s->phase_us[NN_PHASE_SYNC] = s->host_phase_us[NN_PHASE_SYNC];
    for (int p = NN_PHASE_COPY; p <= NN_PHASE_OPTIMIZER; p++) {
        s->phase_us[p] = 0.0;
        if (job->dev_timing) {
            if (job->dev_n[p + 1] > 0) {
                s->phase_us[p] = job->dev_us[p + 1] / (double)job->dev_n[p + 1];
                valid |= 1u << p;
            }
        } else if (p == NN_PHASE_COPY || !graph_job) {
            s->phase_us[p] = s->host_phase_us[p];
            valid |= 1u << p;
        }
    }
    s->has_graph_us = 0;
    if (job->dev_timing && job->dev_n[MARK_GRAPH] > 0) {
        s->graph_us = job->dev_us[MARK_GRAPH] / (double)job->dev_n[MARK_GRAPH];
        s->has_graph_us = 1;
    } else if (!job->dev_timing && graph_job) {
        s->graph_us = job->graph_host_s / (double)timed * 1e6;
        s->has_graph_us = 1;
    }
    s->phase_valid = valid;
    s->phase_device_clock = job->dev_timing;
}

static void update_progress(nn_job *job, long done_steps, long samples, const double t[NN_PHASE_COUNT],
                            long timed)
{
    nn_snapshot *s = &job->mine;
    s->step = done_steps;
    s->elapsed_s = job->active_s;
    if (timed > 0) {
        for (int p = 0; p < NN_PHASE_COUNT; p++)
            s->host_phase_us[p] = t[p] / (double)timed * 1e6;
        if (job->device) {
            device_phases(job, timed);
        } else {
            for (int p = 0; p < NN_PHASE_COUNT; p++)
                s->phase_us[p] = s->host_phase_us[p];
            s->phase_valid = (1u << NN_PHASE_COUNT) - 1;
        }
        s->us_per_step = job->step_s_total / (double)timed * 1e6;
        s->timed_steps = timed;
        if (s->has_counters)
            step_counters(job, timed);
    }
    if (job->active_s > 0 && done_steps > 0) {
        s->has_rate = 1;
        s->samples_per_s = job->step_s_total > 0 ? (double)samples / job->step_s_total : 0;
        s->eta_s = (double)(s->total_steps - done_steps) * job->active_s / (double)done_steps;
    }
}

/* ---- the loops ------------------------------------------------------------------ */

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int record_loss_point(nn_job *job, int epoch, long step, long step_in_epoch, long interval)
{
    float sum;
    if (interval <= 0)
        return 0;
    if (take_running_loss(job, &sum) != 0)
        return -1;
    nn_loss_point pt = { step, epoch, step_in_epoch, sum / (float)interval };
    publish_point(job, &pt);
    return 0;
}

/* Returns 0, 1 when cancelled, -1 on error. */
static int run_validation(nn_job *job, int epoch, long step)
{
    nn_epoch_result r = { .epoch = epoch, .step = step };
    if (job->cfg.bench || job->cfg.no_validation || job->data.n_val == 0)
        return 0;
    int rc = validate(job, &r);
    if (rc == 0)
        publish_epoch(job, &r);
    return rc;
}

/* Device jobs: folds the device-clock phase times the device has finished
 * (all of them with wait) into the job's. */
static int collect_timing(nn_job *job, int wait)
{
    nn_backend *b = &job->backend;
    double us[NN_TIMING_MARKS] = { 0 };
    long n[NN_TIMING_MARKS] = { 0 };
    if (!job->dev_timing)
        return 0;
    if (b->ops->timing_collect(b, wait, us, n) < 0)
        return -1;
    for (int m = 0; m < NN_TIMING_MARKS; m++) {
        job->dev_us[m] += us[m];
        job->dev_n[m] += n[m];
    }
    return 0;
}

/* Device jobs, after the warm-up steps: wait for them, so that the timed
 * steps neither inherit their work nor their timings and counts. */
static int start_timing(nn_job *job)
{
    nn_backend *b = &job->backend;
    if (b->ops->synchronize(b) != 0 || collect_timing(job, 1) != 0)
        return -1;
    memset(job->dev_us, 0, sizeof job->dev_us);
    memset(job->dev_n, 0, sizeof job->dev_n);
    read_counters(job, &job->cnt_base);
    memset(&job->cnt_skip, 0, sizeof job->cnt_skip);
    return 0;
}

/* A device runs behind the host: the waits (loss read-backs, the final one)
 * are part of the steps' time, so that the mean step time is the real rate. */
static void add_wait(nn_job *job, double dt, double t[NN_PHASE_COUNT], int timed_step)
{
    job->active_s += dt;
    if (job->device && timed_step) {
        job->step_s_total += dt;
        t[NN_PHASE_SYNC] += dt;
    }
}

/* Trains epoch by epoch until total_steps; returns 1 when cancelled, -1 on error. */
static int train_loop(nn_job *job)
{
    nn_snapshot *s = &job->mine;
    nn_backend *b = &job->backend;
    double t[NN_PHASE_COUNT] = { 0 };
    long step = 0, samples = 0, timed = 0;
    long warmup = job->cfg.bench ? job->cfg.warmup : 0;

    if (job->device)
        read_counters(job, &job->cnt_base);
    for (int epoch = 1; step < s->total_steps; epoch++) {
        long in_epoch = 0, since_report = 0;
        s->epoch = epoch;
        shuffle(job);
        for (long pos = 0; pos < job->data.n_train && step < s->total_steps; pos += job->cfg.batch) {
            if (honour_requests(job))
                return 1;
            int n = (int)(job->data.n_train - pos < job->cfg.batch ? job->data.n_train - pos : job->cfg.batch);
            double tw[NN_PHASE_COUNT] = { 0 }, tg = 0.0, start = nn_now();
            int rc = job->device ? train_step_device(job, pos, n, step, tw, &tg)
                                 : train_step(job, pos, n, step, tw);
            if (rc != 0)
                return -1;
            double dt = nn_now() - start;
            step++, in_epoch++, since_report++;
            job->active_s += dt;
            if (step > warmup) {
                for (int p = 0; p < NN_PHASE_COUNT; p++)
                    t[p] += tw[p];
                if (job->step_times)
                    job->step_times[timed] = dt;
                job->step_s_total += dt;
                job->graph_host_s += tg;
                samples += n;
                timed++;
            }
            if (since_report == job->cfg.log_every) {
                double r0 = nn_now();
                if (record_loss_point(job, epoch, step, in_epoch, since_report) != 0)
                    return -1;
                add_wait(job, nn_now() - r0, t, step > warmup);
                since_report = 0;
            }
            if (job->device && warmup > 0 && step == warmup && start_timing(job) != 0)
                return -1;
            if (job->device && collect_timing(job, 0) != 0)
                return -1;
            update_progress(job, step, samples, t, timed);
            publish(job);
        }
        double v0 = nn_now();
        if (record_loss_point(job, epoch, step, in_epoch, since_report) != 0)
            return -1;
        add_wait(job, nn_now() - v0, t, step > warmup);
        v0 = nn_now();
        nn_backend_counters c0, c1;
        if (job->device)
            read_counters(job, &c0);
        int rc = run_validation(job, epoch, step);
        if (rc != 0)
            return rc;
        if (job->device) {
            read_counters(job, &c1);
#define SKIP(f) job->cnt_skip.f += c1.f - c0.f
            SKIP(kernels); SKIP(library_calls); SKIP(graph_launches); SKIP(graph_nodes);
            SKIP(h2d_copies); SKIP(h2d_bytes); SKIP(d2h_copies); SKIP(d2h_bytes); SKIP(syncs);
#undef SKIP
        }
        job->active_s += nn_now() - v0;
    }
    if (job->device) {
        /* the last steps may still be running: their time is the steps' */
        double d0 = nn_now();
        if (b->ops->synchronize(b) != 0)
            return -1;
        add_wait(job, nn_now() - d0, t, timed > 0);
        if (collect_timing(job, 1) != 0)
            return -1;
    }
    if (job->step_times && timed > 0) {
        qsort(job->step_times, (size_t)timed, sizeof(double), compare_double);
        s->us_per_step_median = job->step_times[timed / 2] * 1e6;
    }
    update_progress(job, step, samples, t, timed);
    return 0;
}

/* The histories are sized once the step count is known, before training
 * starts: one point per log interval plus one per epoch end. */
static int alloc_histories(nn_job *job, char *err, size_t err_len)
{
    long per_epoch = job->mine.steps_per_epoch / job->cfg.log_every + 1;
    long cap_points = per_epoch * job->mine.epochs;
    nn_loss_point *points = calloc((size_t)cap_points, sizeof *points);
    nn_epoch_result *results = calloc((size_t)job->mine.epochs, sizeof *results);
    if (!points || !results) {
        free(points);
        free(results);
        return nn_errorf(err, err_len, "out of memory for the loss history (%ld points)", cap_points);
    }
    pthread_mutex_lock(&job->lock);
    job->points = points;
    job->cap_points = cap_points;
    job->epoch_results = results;
    job->cap_epoch_results = job->mine.epochs;
    pthread_mutex_unlock(&job->lock);
    return 0;
}

static void block_signals(void)
{
    /* Signals belong to the front end (the UI restores the terminal). A
     * fault raised by this thread itself is delivered to this thread whatever
     * the mask says, and blocked it would kill the process without running
     * the front end's handler: leave those open so the terminal comes back. */
    sigset_t mask;
    sigfillset(&mask);
    sigdelset(&mask, SIGSEGV);
    sigdelset(&mask, SIGBUS);
    sigdelset(&mask, SIGFPE);
    sigdelset(&mask, SIGILL);
    sigdelset(&mask, SIGABRT);
    pthread_sigmask(SIG_BLOCK, &mask, NULL);
}

static void *trainer(void *arg)
{
    nn_job *job = arg;
    char err[NN_ERR_LEN] = "";
    double t0 = nn_now();

    block_signals();
    if (prepare(job, err, sizeof err) != 0) {
        fail(job, err);
        return NULL;
    }
    job->mine.prepare_s = nn_now() - t0;
    job->mine.steps_per_epoch = (job->data.n_train + job->cfg.batch - 1) / job->cfg.batch;
    if (job->cfg.bench)
        job->mine.total_steps = job->cfg.warmup + job->cfg.steps;
    else if (job->cfg.steps > 0)
        job->mine.total_steps = job->cfg.steps;
    else
        job->mine.total_steps = job->mine.steps_per_epoch * job->cfg.epochs;
    job->mine.epochs = (int)((job->mine.total_steps + job->mine.steps_per_epoch - 1) / job->mine.steps_per_epoch);
    if (alloc_histories(job, err, sizeof err) != 0) {
        fail(job, err);
        return NULL;
    }
    job->mine.state = NN_JOB_RUNNING;
    publish(job);

    int rc = train_loop(job);
    if (rc < 0) {
        nn_errorf(err, sizeof err, "training on %s: %s", job->ops->name, job->backend.last_error);
        fail(job, err);
        return NULL;
    }
    job->mine.state = rc > 0 ? NN_JOB_CANCELLED : NN_JOB_DONE;
    publish(job);
    return NULL;
}

/* ---- the API -------------------------------------------------------------------- */

static int resolve_config(nn_job_config *c, const nn_job_config *in, char *err, size_t err_len)
{
    *c = *in;
    const nn_preset *p = &c->preset;
    if (!c->device[0])
        nn_strlcpy(c->device, p->device, sizeof c->device);
    if (c->batch == 0)
        c->batch = p->batch;
    if (c->epochs == 0)
        c->epochs = p->epochs;
    if (c->lr == 0)
        c->lr = p->lr;
    if (c->log_every == 0)
        c->log_every = p->log_every;
    if (c->batch < 1 || c->batch > 1048576)
        return nn_errorf(err, err_len, "batch %d: expected 1..1048576", c->batch);
    if (c->epochs < 1)
        return nn_errorf(err, err_len, "epochs %d: expected at least 1", c->epochs);
    if (c->steps < 0 || (c->bench && c->steps < 1))
        return nn_errorf(err, err_len, "steps %ld: expected at least 1", c->steps);
    if (c->warmup < 0)
        return nn_errorf(err, err_len, "warmup %ld: expected 0 or more", c->warmup);
    if (!(c->lr > 0) || !isfinite(c->lr))
        return nn_errorf(err, err_len, "learning rate %g: expected a positive number", c->lr);
    if (c->log_every < 1)
        return nn_errorf(err, err_len, "log_every %ld: expected at least 1", c->log_every);
    if (c->threads < 0)
        return nn_errorf(err, err_len, "threads %d: expected 0 (all cores) or more", c->threads);
    if (c->pinned && c->data_on_device)
        return nn_errorf(err, err_len, "pinned copies each batch from page-locked memory: it needs "
                         "the data set off the device (--no-data-on-device)");
    return 0;
}

static int find_device(nn_job *job, char *err, size_t err_len)
{
    char why[NN_BACKEND_ERROR_LEN];
    job->ops = nn_backend_find_why(job->cfg.device, why, sizeof why);
    if (!job->ops) {
        if (strcmp(job->cfg.device, "gpu") == 0)
            return nn_errorf(err, err_len, "device gpu: not available: %s", why);
        return nn_errorf(err, err_len, "unknown device '%s' (expected cpu, cpu-ref or gpu)", job->cfg.device);
    }
    if (job->ops->probe && job->ops->probe(why, sizeof why) != 0)
        return nn_errorf(err, err_len, "device %s: not available: %s", job->ops->name, why);
    return 0;
}

nn_job *nn_job_start(const nn_job_config *cfg, char *err, size_t err_len)
{
    nn_job *job = calloc(1, sizeof *job);
    if (!job) {
        nn_errorf(err, err_len, "out of memory for a job");
        return NULL;
    }
    if (resolve_config(&job->cfg, cfg, err, err_len) != 0 || find_device(job, err, err_len) != 0) {
        free(job);
        return NULL;
    }
    pthread_mutex_init(&job->lock, NULL);
    pthread_cond_init(&job->wake, NULL);
    job->mine.state = NN_JOB_PREPARING;
    nn_strlcpy(job->mine.device, job->ops->name, sizeof job->mine.device);
    job->mine.batch = job->cfg.batch;
    job->mine.epochs = job->cfg.epochs;
    job->mine.threads = job->cfg.threads;
    job->snap = job->mine;
    int rc = pthread_create(&job->thread, NULL, trainer, job);
    if (rc != 0) {
        nn_errorf(err, err_len, "cannot start the trainer thread: %s", strerror(rc));
        nn_job_free(job);
        return NULL;
    }
    job->thread_started = 1;
    return job;
}

void nn_job_snapshot(nn_job *job, nn_snapshot *out)
{
    pthread_mutex_lock(&job->lock);
    *out = job->snap;
    pthread_mutex_unlock(&job->lock);
}

long nn_job_loss_points(nn_job *job, long from, nn_loss_point *out, long max)
{
    long n = 0;
    pthread_mutex_lock(&job->lock);
    if (from >= 0 && from < job->n_points) {
        n = job->n_points - from < max ? job->n_points - from : max;
        memcpy(out, job->points + from, (size_t)n * sizeof *out);
    }
    pthread_mutex_unlock(&job->lock);
    return n;
}

int nn_job_epoch_results(nn_job *job, int from, nn_epoch_result *out, int max)
{
    int n = 0;
    pthread_mutex_lock(&job->lock);
    if (from >= 0 && from < job->n_epoch_results) {
        n = job->n_epoch_results - from < max ? job->n_epoch_results - from : max;
        memcpy(out, job->epoch_results + from, (size_t)n * sizeof *out);
    }
    pthread_mutex_unlock(&job->lock);
    return n;
}

void nn_job_pause(nn_job *job)
{
    atomic_store(&job->pause_requested, 1);
}

static void wake_trainer(nn_job *job)
{
    pthread_mutex_lock(&job->lock);
    pthread_cond_broadcast(&job->wake);
    pthread_mutex_unlock(&job->lock);
}

void nn_job_resume(nn_job *job)
{
    atomic_store(&job->pause_requested, 0);
    wake_trainer(job);
}

void nn_job_cancel(nn_job *job)
{
    atomic_store(&job->cancel_requested, 1);
    wake_trainer(job);
}

nn_job_state nn_job_wait(nn_job *job)
{
    if (job->thread_started) {
        pthread_join(job->thread, NULL);
        job->thread_started = 0;
    }
    return job->snap.state;
}

static void release_trainer_state(nn_job *job)
{
    if (job->backend_open) {
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
    nn_net_destroy(&job->net);
    if (job->backend_open)
        nn_backend_close(&job->backend);
    nn_data_free(&job->data);
    free(job->order);
    free(job->batch_x);
    free(job->batch_y);
    free(job->batch_t);
    free(job->step_times);
}

void nn_job_free(nn_job *job)
{
    if (!job)
        return;
    if (job->thread_started) {
        nn_job_cancel(job);
        nn_job_wait(job);
    }
    release_trainer_state(job);
    free(job->points);
    free(job->epoch_results);
    pthread_mutex_destroy(&job->lock);
    pthread_cond_destroy(&job->wake);
    free(job);
}
