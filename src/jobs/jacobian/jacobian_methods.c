/* src/jobs/jacobian/jacobian_methods.c - the four ways to J (nnlab/jacobian.h), each
 * a loop of the passes in jacobian.c.
 *
 * A one-hot cotangent costs no upload per pass: each method keeps one buffer
 * holding its 1s and passes windows into it, at offsets chosen so that the
 * window reads as the cotangent wanted (the comment at each buffer says
 * why). Only rows on a GPU moves its 1 (two 4-byte uploads a group), so that
 * one recorded graph of a group's passes replays with the same pointers. */
#include "jacobian_internal.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* The one-hot buffer: r->sz.onehot floats (nn_jac_sizes_of: each method's
 * length, below), 1 at first, first + stride, ... (count of them), built on
 * the host and uploaded once. */
static int onehot_setup(jac_run *r, size_t first, size_t stride, size_t count)
{
    nn_backend *b = r->b;
    size_t len = r->sz.onehot;
    float *h = calloc(len, sizeof *h);
    void *p = NULL;
    if (!h)
        return nn_backend_fail(b, "out of host memory for %zu cotangent floats", len);
    for (size_t i = 0; i < count; i++)
        h[first + i * stride] = 1.0f;
    int rc = b->ops->alloc(b, len * sizeof(float), &p);
    if (rc == 0) {
        r->onehot = p;
        rc = b->ops->upload(b, r->onehot, h, len * sizeof(float));
    }
    free(h);
    return rc;
}

static int report(jac_run *r, long rows_done)
{
    return r->progress && r->progress(r->ctx, rows_done) ? 1 : 0;
}

/* rows' groups, over one lane or several: adds this lane's rows to the
 * shared count; lane 0 reports it, the others honour a pause or a cancel;
 * any lane's stop stops all. */
static int report_rows(jac_run *r, long rows)
{
    jac_shared *sh = r->shared;
    long done = atomic_fetch_add(&sh->rows_done, rows) + rows;
    if (atomic_load(&sh->stop))
        return 1;
    int stop = r->lane == 0 ? report(r, done) : r->hold && r->hold(r->ctx) ? 1 : 0;
    if (stop)
        atomic_store(&sh->stop, 1);
    return stop;
}

/* ---- rows: PyTorch's vectorize=False ------------------------------------------ */

/* Why between passes: a group is `out` passes over the whole batch, which at
 * val 100000 take seconds, and a cancel must be honoured within a second
 * and the clock keep running. Each pass looks (every JAC_CHECK_S, so that
 * small passes pay no lock); lane 0 also publishes the rows done so far,
 * this group's passes in (every JAC_BEAT_S), which honours a pause too. */
#define JAC_CHECK_S 0.05
#define JAC_BEAT_S 0.25

/* 1: stop (a cancel, or another lane's stop). */
static int between_passes(jac_run *r, int passes_done)
{
    double now = nn_now();
    if (atomic_load(&r->shared->stop))
        return 1;
    if (now - r->checked_at < JAC_CHECK_S)
        return 0;
    r->checked_at = now;
    if (r->lane != 0)
        return r->hold && r->hold(r->ctx) ? 1 : 0;
    if (now - r->beat_at < JAC_BEAT_S)
        return r->cancelled && r->cancelled(r->ctx) ? 1 : 0;
    r->beat_at = now;
    return report(r, atomic_load(&r->shared->rows_done) + passes_done);
}

/* Samples a rows pass covers at a time. Why: one pass over val 100000
 * samples took most of a second on two busy cores, and a cancel must be
 * honoured within one; only one sample of a pass carries a gradient (its
 * one-hot row), so the pass splits by samples into independent parts, with
 * a look for a cancel between them. A recorded pass stays whole. */
#define JAC_PASS_SAMPLES 8192

/* JAC_PASS_SAMPLES, or NNLAB_JAC_PASS_SAMPLES (a test's: small parts at a
 * small val check that the parts add up to the whole pass). */
static int pass_samples(void)
{
    const char *v = getenv("NNLAB_JAC_PASS_SAMPLES");
    long n = v && *v ? strtol(v, NULL, 10) : 0;
    return n >= 1 && n <= JAC_PASS_SAMPLES ? (int)n : JAC_PASS_SAMPLES;
}

/* The pass with gradient g into dx, in parts of JAC_PASS_SAMPLES samples:
 * 0, -1 on an error, 1 when stopped between parts. */
static int reverse_in_parts(jac_run *r, const float *g, float *dx, int passes_done)
{
    const int part_n = pass_samples();
    if (r->recording || r->val <= part_n)
        return jac_reverse(r, &r->acts, r->val, g, dx) != 0 ? -1 : 0;
    const size_t out = (size_t)r->s.width[r->s.n_linear], in = (size_t)r->s.width[0];
    for (int s0 = 0; s0 < r->val; s0 += part_n) {
        int m = r->val - s0 < part_n ? r->val - s0 : part_n;
        jac_acts part = { .n = m };
        for (int l = 0; l <= r->s.n_linear; l++)
            part.a[l] = r->acts.a[l] + (size_t)s0 * (size_t)r->s.width[l];
        for (int l = 0; l < r->s.n_linear; l++)
            part.pre[l] = r->acts.pre[l] ? r->acts.pre[l] + (size_t)s0 * (size_t)r->s.width[l + 1] : NULL;
        if (jac_reverse(r, &part, m, g + (size_t)s0 * out, dx + (size_t)s0 * in) != 0)
            return -1;
        if (s0 + m < r->val && between_passes(r, passes_done))
            return 1;
    }
    return 0;
}

/* One group: the C passes of rows p0 .. p0+C-1. The buffer T holds a single
 * 1 at C-1+p0, so the window T + (C-1-c) is one-hot at flat row p0+c.
 * 0, -1 on an error, 1 when stopped between passes. */
static int rows_group(jac_run *r)
{
    size_t per = (size_t)r->val * (size_t)r->in;
    for (int c = 0; c < r->chunk; c++) {
        int rc = reverse_in_parts(r, r->onehot + (r->chunk - 1 - c), r->dx + (size_t)c * per, c);
        if (rc != 0)
            return rc;
        if (!r->recording && c + 1 < r->chunk && between_passes(r, c + 1))
            return 1;
    }
    return 0;
}

/* Records a group's passes as a step graph (strictly, then relaxed, as the
 * training engine does); 0 when recorded, else the note says why not. */
static int rows_record(jac_run *r)
{
    nn_backend *b = r->b;
    nn_step_values v = { 0, 1 };
    for (int relaxed = 0; relaxed <= 1; relaxed++) {
        if (b->ops->set_step(b, &v) != 0 || b->ops->graph_begin(b, relaxed) != 0)
            continue;
        r->recording = 1;            /* a recording is whole: nothing between its passes */
        int rc = rows_group(r);
        r->recording = 0;
        if (rc != 0) {
            b->ops->graph_drop(b);
            continue;
        }
        if (b->ops->graph_end(b) == 0)
            return 0;
    }
    nn_strlcpy(r->note, b->last_error, sizeof r->note);
    return -1;
}

/* Moves the buffer's 1 to `to` (nothing when it is there). */
static int move_one(jac_run *r, long to)
{
    const float zero = 0.0f, one = 1.0f;
    nn_backend *b = r->b;
    if (to == r->one_at)
        return 0;
    if (b->ops->upload(b, r->onehot + r->one_at, &zero, sizeof zero) ||
        b->ops->upload(b, r->onehot + to, &one, sizeof one))
        return -1;
    r->one_at = to;
    return 0;
}

/* This lane's groups: lane, lane + lanes, ... (every group alone). */
static run_result rows_method(jac_run *r)
{
    long total = nn_jac_rows_total(&r->s, r->val), C = r->chunk;
    int graph = 0;
    if (onehot_setup(r, (size_t)C - 1, 1, 1) != 0)
        return RUN_ERROR;
    r->one_at = C - 1;
    for (long p0 = (long)r->lane * C; p0 < total; p0 += (long)r->lanes * C) {
        if (move_one(r, C - 1 + p0) != 0)
            return RUN_ERROR;
        /* the first group runs eagerly: libraries choose their algorithms
         * on first use, which a recording cannot hold (backend.h) */
        if (r->use_graph && p0 == C && !graph)
            graph = rows_record(r) == 0;
        int rc = graph ? r->b->ops->graph_launch(r->b) : rows_group(r);
        if (rc > 0) {
            atomic_store(&r->shared->stop, 1);
            return RUN_CANCELLED;
        }
        if (rc != 0 || jac_read_dx(r, (size_t)C * (size_t)r->val * (size_t)r->in) != 0)
            return RUN_ERROR;
        jac_take_rows(r, p0, (int)C);
        if (report_rows(r, C))
            return RUN_CANCELLED;
    }
    if (graph)
        r->b->ops->graph_drop(r->b);
    return RUN_GO_ON;
}

/* ---- batched: vectorize=True's analogue ---------------------------------------- */

/* The batch's saved activations repeated chunk times, copied (vmap
 * broadcasts them; no FLOPs). */
static int batched_repeat(jac_run *r)
{
    nn_backend *b = r->b;
    for (int l = 0; l <= r->s.n_linear; l++) {
        size_t n = (size_t)r->val * (size_t)r->s.width[l];
        float *h = malloc(n * sizeof *h);
        int rc = h ? b->ops->download(b, h, r->acts.a[l], n * sizeof *h)
                   : nn_backend_fail(b, "out of host memory for the activations");
        for (int c = 0; rc == 0 && c < r->chunk; c++)
            rc = b->ops->upload(b, r->rep.a[l] + (size_t)c * n, h, n * sizeof *h);
        free(h);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* C cotangents stacked: (C*val, out) whose c-th (val, out) block is one-hot
 * at flat row p0 + c. U holds 1s at c*(vK+1) + A, A = vK - C; the window
 * U + (A - p0) reads as that stack (one step of vK+1 per block moves the 1
 * by one row), for every p0 that starts a whole group. */
static run_result batched_method(jac_run *r)
{
    long vk = nn_jac_rows_total(&r->s, r->val), C = r->chunk, A = vk - C;
    size_t per = (size_t)C * (size_t)r->val * (size_t)r->in;
    if (batched_repeat(r) != 0 || onehot_setup(r, (size_t)A, (size_t)vk + 1, (size_t)C) != 0)
        return RUN_ERROR;
    for (long p0 = 0; p0 < vk; p0 += C) {
        if (jac_reverse(r, &r->rep, (int)C * r->val, r->onehot + (A - p0), r->dx) != 0 ||
            jac_read_dx(r, per) != 0)
            return RUN_ERROR;
        jac_take_rows(r, p0, (int)C);
        if (report(r, p0 + C))
            return RUN_CANCELLED;
    }
    return RUN_GO_ON;
}

/* ---- per-sample: independence exploited ---------------------------------------- */

/* Cotangent k: 1 at output k of every sample. V holds 1s at j*out + A,
 * A = out - 1; the window V + (A - k) reads as it. */
static run_result per_sample_method(jac_run *r)
{
    long K = r->out, A = K - 1;
    size_t per = (size_t)r->val * (size_t)r->in;
    if (onehot_setup(r, (size_t)A, (size_t)K, (size_t)r->val) != 0)
        return RUN_ERROR;
    for (long k = 0; k < K; k++) {
        if (jac_reverse(r, &r->acts, r->val, r->onehot + (A - k), r->dx + (size_t)k * per) != 0)
            return RUN_ERROR;
        if (report(r, (k + 1) * r->val))
            return RUN_CANCELLED;
    }
    if (jac_read_dx(r, (size_t)K * per) != 0)
        return RUN_ERROR;
    for (long k = 0; k < K; k++)
        for (int i = 0; i < r->val; i++)
            for (int d = 0; d < r->in; d++)
                r->blocks[((size_t)i * (size_t)K + (size_t)k) * (size_t)r->in + (size_t)d] =
                    r->host_dx[((size_t)k * (size_t)r->val + (size_t)i) * (size_t)r->in + (size_t)d];
    return RUN_GO_ON;
}

/* ---- forward: one tangent per input dimension ------------------------------------ */

/* The tangent of input dimension d: (val, in), 1 in column d. */
static int tangent_column(jac_run *r, int d)
{
    size_t n = (size_t)r->val * (size_t)r->in;
    float *h = calloc(n, sizeof *h);
    if (!h)
        return nn_backend_fail(r->b, "out of host memory for a tangent");
    for (int i = 0; i < r->val; i++)
        h[(size_t)i * (size_t)r->in + (size_t)d] = 1.0f;
    int rc = r->b->ops->upload(r->b, r->onehot, h, n * sizeof *h);
    free(h);
    return rc;
}

static run_result forward_method(jac_run *r)
{
    size_t K = (size_t)r->out;
    if (onehot_setup(r, 0, 1, 0) != 0)
        return RUN_ERROR;
    for (int d = 0; d < r->in; d++) {
        if (tangent_column(r, d) != 0 || jac_tangent(r, r->onehot) != 0 ||
            jac_read_dx(r, (size_t)r->val * K) != 0)
            return RUN_ERROR;
        for (size_t p = 0; p < (size_t)r->val * K; p++)
            r->blocks[p * (size_t)r->in + (size_t)d] = r->host_dx[p];
        if (report(r, (long)((double)r->val * (double)K * (d + 1) / r->in)))
            return RUN_CANCELLED;
    }
    return RUN_GO_ON;
}

run_result jac_run_method(jac_run *r)
{
    switch (r->method) {
    case NN_JAC_ROWS:
        return rows_method(r);
    case NN_JAC_BATCHED:
        return batched_method(r);
    case NN_JAC_PER_SAMPLE:
        return per_sample_method(r);
    case NN_JAC_FORWARD:
        return forward_method(r);
    default:
        nn_backend_fail(r->b, "jacobian: unknown method %d", (int)r->method);
        return RUN_ERROR;
    }
}
