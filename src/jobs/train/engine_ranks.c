/* src/jobs/train/engine_ranks.c - a training job as one of several
 * data-parallel ranks (docs/ranks.md): joining them, rank 0's initial
 * parameters shared, and after every backward the gradients averaged over
 * the ranks before the optimiser, so that every rank takes the same step;
 * see train_internal.h. MPI moves the bytes (backends/comm). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm/comm.h"
#include "nnlab/ranks.h"
#include "train_internal.h"

/* Threads per rank: the cores shared among the ranks on this host. */
static int threads_per_rank(int local_size)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long t = cores > 0 && local_size > 0 ? cores / local_size : 1;
    return t < 1 ? 1 : (int)t;
}

int engine_ranks_prepare(nn_job *job, int *threads, char *err, size_t err_len)
{
    nn_snapshot *s = &job->draft;
    nn_ranks_info info;
    job->rank = 0, job->ranks = 1;
    job->global_batch = job->cfg.batch;
    if (nn_ranks_join(&info, err, err_len) != 0)
        return -1;
    job->comm = engine_comm();
    if (job->comm) {
        const nn_backend_ops *o = job->ops;
        if (!o->host_memory && !(o->ranks_id && o->ranks_open && o->allreduce_sum))
            return nn_errorf(err, err_len, "--device %s with %d ranks: this device cannot sum "
                             "gradients over ranks", o->name, info.size);
        job->rank = info.rank, job->ranks = info.size;
        job->local_rank = info.local_rank;
        job->global_batch = (long)info.size * job->cfg.batch;
        if (*threads == 0)
            *threads = threads_per_rank(info.local_size);
        const char *check = getenv("NNLAB_RANKS_CHECK");
        job->ranks_check = check && strcmp(check, "1") == 0;
        nn_strlcpy(s->comm_transport, info.transport, sizeof s->comm_transport);
        nn_strlcpy(s->comm_library, info.library, sizeof s->comm_library);
    }
    s->ranks = job->ranks, s->rank = job->rank;
    s->global_batch = job->global_batch;
    return 0;
}

/* ---- ranks on a device: the device's own collective library (NCCL) ---------------- */

/* The emulated GPU's stand-in for NCCL sums through the host: the MPI
 * comm's sum of its arena (host memory there). */
static int host_sum(void *ctx, float *buf, size_t n, char *err, size_t err_len)
{
    nn_comm *c = ctx;
    if (c->ops->allreduce_sum(c, buf, n) != 0)
        return nn_errorf(err, err_len, "%s", c->last_error);
    return 0;
}

/* Every rank's failure agreed before any waits for another: 0 when all
 * succeeded; else -1, err holding this rank's reason or the count. */
static int agree(nn_job *job, int failed, char *err, size_t err_len)
{
    nn_comm *c = job->comm;
    double bad = failed;
    if (c->ops->allreduce_sum_f64(c, &bad, 1) != 0)
        return nn_errorf(err, err_len, "rank %d: %s", job->rank, c->last_error);
    if (bad > 0 && !failed)
        return nn_errorf(err, err_len, "%.0f other rank(s) could not join the device's sums", bad);
    return bad > 0 ? -1 : 0;
}

/* NCCL loaded on every rank, rank 0's communicator id shared through MPI,
 * and every rank joined, one rank a GPU. */
int engine_ranks_device_open(nn_job *job, char *err, size_t err_len)
{
    nn_backend *b = &job->backend;
    nn_comm *c = job->comm;
    if (!c || job->ops->host_memory)
        return 0;
    nn_ranks_config rc = { .rank = job->rank, .size = job->ranks, .host_allreduce = host_sum, .host_ctx = c };
    int failed = b->ops->ranks_id(b, job->rank == 0 ? rc.id : NULL) != 0;
    if (failed)
        nn_errorf(err, err_len, "%s", b->last_error);
    if (agree(job, failed, err, err_len) != 0)
        return -1;
    if (c->ops->broadcast(c, rc.id, sizeof rc.id, 0) != 0)
        return nn_errorf(err, err_len, "rank %d: sharing the communicator's id: %s", job->rank,
                         c->last_error);
    failed = b->ops->ranks_open(b, &rc) != 0;
    if (failed)
        nn_errorf(err, err_len, "%s", b->last_error);
    if (agree(job, failed, err, err_len) != 0)
        return -1;
    job->device_ranks = 1;
    return 0;
}

/* One arena of `floats` in backend memory from rank 0 to every rank,
 * through the host. */
static int share(nn_job *job, float *arena, size_t floats, char *err, size_t err_len)
{
    nn_backend *b = &job->backend;
    nn_comm *c = job->comm;
    size_t bytes = floats * sizeof(float);
    float *host = nn_alloc_aligned(bytes);
    if (!host)
        return nn_errorf(err, err_len, "out of host memory to share %zu parameters", floats);
    int rc = b->ops->download(b, host, arena, bytes);
    if (rc == 0 && c->ops->broadcast(c, host, bytes, 0) != 0)
        rc = nn_errorf(err, err_len, "rank %d: sharing rank 0's parameters: %s", job->rank,
                       c->last_error);
    else if (rc == 0)
        rc = b->ops->upload(b, arena, host, bytes);
    else
        nn_errorf(err, err_len, "reading the parameters: %s", b->last_error);
    nn_free_aligned(host);
    return rc;
}

int engine_ranks_share_params(nn_job *job, char *err, size_t err_len)
{
    nn_net *net = &job->net;
    if (!job->comm)
        return 0;
    net->sample_offset = (long)job->rank * job->cfg.batch;
    if (share(job, net->params, net->n_params, err, err_len) != 0)
        return -1;
    return net->n_state ? share(job, net->state, net->n_state, err, err_len) : 0;
}

int engine_ranks_share_state(nn_job *job)
{
    nn_net *net = &job->net;
    char err[NN_ERR_LEN];
    if (!job->comm || !net->n_state)
        return 0;
    if (share(job, net->state, net->n_state, err, sizeof err) != 0)
        return nn_backend_fail(&job->backend, "%s", err);
    return 0;
}

int engine_ranks_sum(nn_job *job, double *v, size_t n)
{
    nn_comm *c = job->comm;
    if (!c)
        return 0;
    if (c->ops->allreduce_sum_f64(c, v, n) != 0)
        return nn_backend_fail(&job->backend, "rank %d: %s", job->rank, c->last_error);
    return 0;
}

/* ---- buckets: the sums started while the backward goes on ------------------------ */

/* A bucket's size: its blocks are gathered, last layer first, until it holds
 * this many floats (256 KiB; DDP's first bucket is 1 MiB, its others 25 MiB:
 * nnlab's nets are small, and a smaller bucket shows the overlap). */
#define BUCKET_FLOATS 65536

typedef struct rank_bucket {
    size_t lo, hi;               /* the arena's floats [lo, hi) */
    int blocks, left;            /* its parameter blocks, those not final yet this step */
    nn_comm_request req;         /* started: its sum; -1 before */
} rank_bucket;

struct engine_buckets {
    rank_bucket b[NN_MAX_LAYERS];
    int n, next;                 /* buckets; the next to start (in order on every rank) */
    int bucket_of[NN_MAX_LAYERS];     /* an owner layer's bucket */
    int n_here;                  /* this step's samples on this rank */
    double first_start;          /* when this step's first sum started (0: none yet) */
    int failed;                  /* a start or test failed: said after the backward */
};

/* The buckets over the arena, last layer first (the order the backward
 * finishes them), each a contiguous range; the first reaches the arena's
 * end and the last its start, so that the padding between blocks is summed
 * too. The same plan on every rank: the sums start in the same order. */
static void plan_buckets(const nn_net *net, engine_buckets *eb)
{
    rank_bucket *cur = NULL;
    memset(eb, 0, sizeof *eb);
    for (int i = net->n_layers - 1; i >= 0; i--) {
        const nn_layer *l = &net->layers[i];
        size_t floats = l->n_weights + l->n_bias;
        eb->bucket_of[i] = -1;
        if (l->param_owner != i || floats == 0)
            continue;
        if (!cur || cur->hi - cur->lo >= BUCKET_FLOATS) {
            cur = &eb->b[eb->n++];
            cur->hi = eb->n == 1 ? net->n_params : eb->b[eb->n - 2].lo;
        }
        cur->lo = l->param_offset;
        cur->blocks++;
        eb->bucket_of[i] = eb->n - 1;
    }
    if (eb->n > 0)
        eb->b[eb->n - 1].lo = 0;
}

/* grads[lo, hi) weighted by this rank's share of the global batch, n of
 * step_n_global samples: the mean of the global batch is the sum over the
 * ranks of (n_r / n) x rank r's mean (a full step's weight is 1 / ranks);
 * a rank without samples adds zeros. */
static void weigh_grads(nn_job *job, size_t lo, size_t hi, int n)
{
    float *g = job->net.grads;
    float w = job->step_n_global > 0 ? (float)n / (float)job->step_n_global : 0.0f;
    for (size_t i = lo; i < hi; i++)
        g[i] = n > 0 ? g[i] * w : 0.0f;
}

/* A device's bucket: weighed and started on the device (its sum runs on a
 * stream of its own beside the backward's; allreduce_finish waits). */
static int start_device_bucket(nn_job *job, engine_buckets *eb, const rank_bucket *bk)
{
    nn_backend *b = &job->backend;
    int n = eb->n_here;
    float w = n > 0 && job->step_n_global > 0 ? (float)n / (float)job->step_n_global : 0.0f;
    if (b->ops->allreduce_start(b, bk->hi - bk->lo, job->net.grads + bk->lo, w) != 0)
        return nn_backend_fail(b, "rank %d: starting a bucket's sum on the GPU: %s", job->rank, b->last_error);
    return 0;
}

/* Starts bucket k's sum: its floats weighted by this rank's share first. */
static int start_bucket(nn_job *job, engine_buckets *eb, int k)
{
    rank_bucket *bk = &eb->b[k];
    nn_comm *c = job->comm;
    float *g = job->net.grads;
    if (job->device_ranks)
        return start_device_bucket(job, eb, bk);
    weigh_grads(job, bk->lo, bk->hi, eb->n_here);
    if (eb->first_start == 0.0)
        eb->first_start = nn_now();
    if (c->ops->iallreduce_sum(c, g + bk->lo, bk->hi - bk->lo, &bk->req) != 0)
        return nn_backend_fail(&job->backend, "rank %d: starting a bucket's sum: %s", job->rank,
                               c->last_error);
    return 0;
}

/* Starts the buckets that are final, in order, then moves the started
 * ones on (MPI progresses a non-blocking sum inside its calls). */
static int start_ready(nn_job *job, engine_buckets *eb)
{
    nn_comm *c = job->comm;
    while (eb->next < eb->n && eb->b[eb->next].left == 0)
        if (start_bucket(job, eb, eb->next++) != 0)
            return -1;
    if (job->device_ranks)
        return 0;                    /* the device's sums move on by themselves */
    for (int k = 0; k < eb->next; k++) {
        int done = 0;
        if (eb->b[k].req >= 0 && c->ops->test(c, eb->b[k].req, &done) != 0)
            return nn_backend_fail(&job->backend, "rank %d: %s", job->rank, c->last_error);
        if (done)
            eb->b[k].req = -1;
    }
    return 0;
}

/* nn_net's grads_ready: the owner's block is final. */
static void block_ready(void *ctx, int owner)
{
    nn_job *job = ctx;
    engine_buckets *eb = job->buckets;
    int k = eb->bucket_of[owner];
    if (k < 0 || eb->failed)
        return;
    eb->b[k].left--;
    if (start_ready(job, eb) != 0)
        eb->failed = 1;
}

int engine_ranks_begin_step(nn_job *job, int n)
{
    engine_buckets *eb = job->buckets;
    if (!eb)
        return 0;
    eb->next = 0;
    eb->n_here = n;
    eb->first_start = 0.0;
    eb->failed = 0;
    for (int k = 0; k < eb->n; k++) {
        eb->b[k].left = eb->b[k].blocks;
        eb->b[k].req = -1;
    }
    return 0;
}

/* After the backward: the buckets not started yet (all of them on a rank
 * without samples this step), then every sum waited for. */
static int finish_buckets(nn_job *job, engine_buckets *eb)
{
    nn_comm *c = job->comm;
    if (eb->failed)
        return -1;
    /* a device's host issues ahead of it: its time from the first start says nothing */
    job->step_overlap_s = eb->first_start > 0.0 && !job->device_ranks ? nn_now() - eb->first_start : 0.0;
    while (eb->next < eb->n)
        if (start_bucket(job, eb, eb->next++) != 0)
            return -1;
    if (job->device_ranks) {
        nn_backend *b = &job->backend;
        if (b->ops->allreduce_finish(b) != 0)
            return nn_backend_fail(b, "rank %d: waiting for the GPU's sums: %s", job->rank, b->last_error);
        return 0;
    }
    for (int k = 0; k < eb->n; k++)
        if (eb->b[k].req >= 0 && c->ops->wait(c, eb->b[k].req) != 0)
            return nn_backend_fail(&job->backend, "rank %d: waiting for a bucket's sum: %s",
                                   job->rank, c->last_error);
    return 0;
}

int engine_ranks_buckets_prepare(nn_job *job, char *err, size_t err_len)
{
    nn_snapshot *s = &job->draft;
    if (!job->comm || job->cfg.no_overlap)
        return 0;
    if (job->device_ranks && (!job->backend.ops->allreduce_start || !job->backend.ops->allreduce_finish))
        return 0;                    /* a device that only sums after the backward */
    job->buckets = malloc(sizeof *job->buckets);
    if (!job->buckets)
        return nn_errorf(err, err_len, "out of memory for the gradient buckets");
    plan_buckets(&job->net, job->buckets);
    job->net.grads_ready = block_ready;
    job->net.grads_ready_ctx = job;
    s->overlap = 1;
    return 0;
}

void engine_ranks_release(nn_job *job)
{
    free(job->buckets);
    job->buckets = NULL;
}

int engine_ranks_reduce_grads(nn_job *job, int n)
{
    nn_net *net = &job->net;
    nn_comm *c = job->comm;
    if (!c)
        return 0;
    if (job->buckets)
        return finish_buckets(job, job->buckets);
    if (job->device_ranks) {         /* weighed and summed on the device */
        nn_backend *b = &job->backend;
        float w = n > 0 && job->step_n_global > 0 ? (float)n / (float)job->step_n_global : 0.0f;
        if (b->ops->allreduce_sum(b, net->n_params, net->grads, w) != 0)
            return nn_backend_fail(b, "rank %d: summing the gradients on the GPU: %s", job->rank,
                                   b->last_error);
        return 0;
    }
    weigh_grads(job, 0, net->n_params, n);
    if (c->ops->allreduce_sum(c, net->grads, net->n_params) != 0)
        return nn_backend_fail(&job->backend, "rank %d: summing the gradients: %s", job->rank,
                               c->last_error);
    return 0;
}

/* FNV-1a over the parameters' bytes. */
static uint64_t params_hash(const float *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n * sizeof(float); i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

/* NNLAB_RANKS_CHECK=1 (the tests): after every step, rank 0's hash of the
 * parameters to every rank, and the count of ranks whose own differs summed:
 * a rank that took another step fails the job on every rank, naming it. */
int engine_ranks_check_same(nn_job *job)
{
    nn_comm *c = job->comm;
    nn_net *net = &job->net;
    if (!c || !job->ranks_check)
        return 0;
    uint64_t mine, first;
    if (job->ops->host_memory)
        mine = params_hash(net->params, net->n_params);
    else {                           /* a device's parameters, read back */
        nn_backend *b = &job->backend;
        float *host = malloc(net->n_params * sizeof *host);
        if (!host || b->ops->download(b, host, net->params, net->n_params * sizeof *host) != 0) {
            free(host);
            return nn_backend_fail(b, "NNLAB_RANKS_CHECK: reading the parameters back");
        }
        mine = params_hash(host, net->n_params);
        free(host);
    }
    first = mine;
    if (c->ops->broadcast(c, &first, sizeof first, 0) != 0)
        return nn_backend_fail(&job->backend, "rank %d: %s", job->rank, c->last_error);
    double differ[2] = { mine != first, mine != first ? job->rank : 0 };
    if (engine_ranks_sum(job, differ, 2) != 0)
        return -1;
    if (differ[0] > 0)
        return nn_backend_fail(&job->backend, "NNLAB_RANKS_CHECK: after step %ld the parameters of "
                               "%.0f rank(s) differ from rank 0's (e.g. rank %.0f)", job->tot.steps + 1,
                               differ[0], differ[1]);
    return 0;
}
