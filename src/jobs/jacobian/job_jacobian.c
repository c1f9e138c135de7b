/* src/jobs/jacobian/job_jacobian.c - the Jacobian job kind (NN_JOB_JACOBIAN): the
 * preset's MLP on the job's backend, one of the four methods of
 * nnlab/jacobian.h, progress in the snapshot as rows of J done of val*out
 * (a step is a row of J), the result kept for nn_job_jacobian.
 *
 * The snapshot's phases for this kind: forward is the forward pass and
 * backward the method's passes with their read-back, both as mean
 * microseconds per row of J, so that they add up to us_per_step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine_internal.h"
#include "jacobian_internal.h"
#include "job_kind.h"

typedef struct jac_job {
    nn_job *job;
    double t0;                   /* the forward pass started */
    jac_lanes *lanes;            /* rows over host threads (NULL: one lane) */
} jac_job;

/* After each group of rows: the snapshot's progress, rate and ETA. */
static int on_rows(void *ctx, long rows_done)
{
    jac_job *jj = ctx;
    nn_snapshot *s = &jj->job->draft;
    double dt = nn_now() - jj->t0;
    s->step = rows_done;
    s->fraction_done = s->total_steps ? (double)rows_done / (double)s->total_steps : 1;
    s->elapsed_s = dt;
    if (dt > 0 && rows_done > 0) {
        s->samples_per_s = (double)rows_done / dt;
        s->eta_s = (double)(s->total_steps - rows_done) / s->samples_per_s;
        s->has_rate = 1;
    }
    snprintf(s->activity, sizeof s->activity, "%s: row %ld of %ld", nn_jac_method_name(jj->job->jac_method),
             rows_done, s->total_steps);
    engine_publish(jj->job);
    /* a pause waits here, between groups; its time is not the method's */
    double p0 = nn_now();
    int stop = engine_honour_requests(jj->job) == RUN_CANCELLED;
    jj->t0 += nn_now() - p0;
    return stop;
}

/* The other lanes, between their groups: wait out a pause (lane 0, in
 * on_rows, publishes it), stop on a cancel. */
static int on_lane_group(void *ctx)
{
    return engine_wait_while_paused(((jac_job *)ctx)->job) == RUN_CANCELLED;
}

/* Lane 0 between its passes: only whether the job is cancelled (no lock). */
static int on_cancel_check(void *ctx)
{
    return atomic_load(&((jac_job *)ctx)->job->cancel_requested) != 0;
}

/* Moves the run's host arrays into the job's result, under the lock, so
 * that a reader who sees DONE finds it. */
static void keep_result(nn_job *job, jac_run *r, double seconds, double warmup_s)
{
    nn_jac_result *o = &job->jacobian;
    memset(o, 0, sizeof *o);
    o->method = r->method;
    o->shape = r->s;
    o->val = r->val;
    o->in = r->in;
    o->out = r->out;
    o->x = r->x;
    o->params = r->host_params;
    o->n_params = r->n_params;
    o->blocks = r->blocks;
    r->x = r->host_params = r->blocks = NULL;
    o->offdiag_max = r->offdiag_max;
    o->offdiag_checked = r->offdiag_checked;
    o->seconds = seconds;
    o->forward_s = r->forward_s;
    o->warmup_s = warmup_s;
    o->rows_per_s = seconds > 0 ? (double)nn_jac_rows_total(&r->s, r->val) / seconds : 0;
    o->lanes = r->lanes;
    nn_jac_flops_of(&r->s, r->val, r->method, &o->flops);
}

static void finish(nn_job *job, jac_run *r, double seconds, double warmup_s)
{
    nn_snapshot *s = &job->draft;
    double rows = (double)s->total_steps;
    s->step = s->total_steps;           /* every lane's rows (lane 0 reported its own last) */
    s->fraction_done = 1;
    s->eta_s = 0;
    s->elapsed_s = seconds;
    s->us_per_step = seconds * 1e6 / rows;
    s->phase_us[NN_PHASE_FORWARD] = r->forward_s * 1e6 / rows;
    s->phase_us[NN_PHASE_BACKWARD] = (seconds - r->forward_s) * 1e6 / rows;
    s->phase_valid = 1u << NN_PHASE_FORWARD | 1u << NN_PHASE_BACKWARD;
    s->timed_steps = s->total_steps;
    s->has_switches = 1;
    s->graph = r->use_graph && !r->note[0];
    nn_strlcpy(s->note, r->note, sizeof s->note);
    pthread_mutex_lock(&job->lock);
    keep_result(job, r, seconds, warmup_s);
    job->has_jacobian = 1;
    s->state = NN_JOB_DONE;
    job->snap = *s;
    pthread_mutex_unlock(&job->lock);
}

/* The backend, the run and, for rows on several host threads, its lanes
 * (the backend reopened with one thread: each lane is a thread). */
static int open_run(nn_job *job, jac_job *jj, jac_run *r, char *err, size_t err_len)
{
    nn_job_config *c = &job->cfg;
    enum nn_jac_method m = (enum nn_jac_method)c->jac_method;
    nn_jac_shape shape;
    if (nn_jac_shape_from_preset(&c->preset, c->preset.name, &shape, err, err_len) != 0 ||
        engine_open_backend(job, c->threads, err, err_len) != 0)
        return -1;
    int lanes = jac_lanes_count(&job->backend, m, c->graph, c->jac_val);
    if (lanes > 1) {
        nn_backend_close(&job->backend);
        job->backend_open = 0;
        if (engine_open_backend(job, 1, err, err_len) != 0)
            return -1;
        if (!(jj->lanes = calloc(1, sizeof *jj->lanes)))
            return nn_errorf(err, err_len, "jacobian: out of memory for %d lanes", lanes);
    }
    job->draft.total_steps = nn_jac_rows_total(&shape, c->jac_val);
    job->draft.jac_lanes = lanes;
    job->draft.n_params = nn_jac_shape_params(&shape);
    if (jac_prepare(r, &job->backend, &shape, c->jac_val, m, c->seed, c->graph, err, err_len) != 0)
        return -1;
    r->progress = on_rows;
    r->hold = on_lane_group;
    r->cancelled = on_cancel_check;
    r->ctx = jj;
    return lanes > 1 ? jac_lanes_open(jj->lanes, lanes, r, c->seed, err, err_len) : 0;
}

/* The forward pass, then the method: RUN_GO_ON, RUN_CANCELLED or RUN_ERROR. */
static run_result compute(jac_run *r, jac_lanes *lanes)
{
    double t = nn_now();
    if (jac_forward(r, &r->acts) != 0 || r->b->ops->synchronize(r->b) != 0)
        return RUN_ERROR;
    r->forward_s = nn_now() - t;
    run_result rc = lanes ? jac_lanes_run(lanes, r) : jac_run_method(r);
    if (rc == RUN_GO_ON && r->b->ops->synchronize(r->b) != 0)
        return RUN_ERROR;
    return rc;
}

/* The warm-up's rows: only a cancel is honoured (its progress is not the
 * job's: the timed run reports from row 0). */
static int on_warmup_rows(void *ctx, long rows_done)
{
    (void)rows_done;
    return engine_honour_requests(((jac_job *)ctx)->job) == RUN_CANCELLED;
}

/* A test's hook (tests/cli_jacobian.sh): NNLAB_TEST_WARMUP_DELAY_MS makes
 * the first calls that much slower, as a GPU's start-up is, so that a test
 * can check the delay lands in warmup_s and not in the timed seconds. */
static void test_slow_first_calls(void)
{
    const char *env = getenv("NNLAB_TEST_WARMUP_DELAY_MS");
    long ms;
    if (env && nn_parse_long(env, &ms) == 0 && ms > 0 && ms <= 10000)
        usleep((useconds_t)ms * 1000);
}

/* Untimed, before the clock starts, what a first run pays once: library
 * handles, each op's first call, plan trials and (a GPU) a recording. A
 * device runs the forward pass and the whole method; a CPU, whose first
 * calls cost little beside a method that may take long, the forward pass.
 * The timed run then overwrites what it computed. */
static run_result warm_up(nn_job *job, jac_job *jj, jac_run *r, double *warmup_s)
{
    double t = nn_now();
    snprintf(job->draft.activity, sizeof job->draft.activity, "%s: warming up",
             nn_jac_method_name(job->jac_method));
    engine_publish(job);
    run_result rc = RUN_GO_ON;
    if (!job->ops->host_memory) {
        r->progress = on_warmup_rows;
        rc = compute(r, jj->lanes);
        r->progress = on_rows;
    } else if (jac_forward(r, &r->acts) != 0 || r->b->ops->synchronize(r->b) != 0) {
        rc = RUN_ERROR;
    }
    test_slow_first_calls();
    *warmup_s = nn_now() - t;
    return rc;
}

static void release(jac_job *jj, jac_run *r)
{
    if (jj->lanes) {
        jac_lanes_close(jj->lanes);
        free(jj->lanes);
        jj->lanes = NULL;
    }
    jac_release(r);
}

static void run(nn_job *job)
{
    char err[NN_ERR_LEN] = "";
    jac_run r;
    jac_job jj = { job, 0, NULL };
    double t0 = nn_now();
    memset(&r, 0, sizeof r);
    job->jac_method = job->cfg.jac_method;
    int rc = open_run(job, &jj, &r, err, sizeof err);
    if (rc != 0) {
        release(&jj, &r);
        engine_fail(job, err);
        return;
    }
    job->draft.prepare_s = nn_now() - t0;
    job->draft.state = NN_JOB_RUNNING;
    double warmup_s = 0;
    run_result rc_run = warm_up(job, &jj, &r, &warmup_s);
    jj.t0 = nn_now();
    if (rc_run == RUN_GO_ON)
        rc_run = compute(&r, jj.lanes);
    switch (rc_run) {
    case RUN_ERROR:
        nn_errorf(err, sizeof err, "jacobian on %s: %s", job->ops->name, job->backend.last_error);
        engine_fail(job, err);
        break;
    case RUN_GO_ON: finish(job, &r, nn_now() - jj.t0, warmup_s); break;
    default: engine_end(job, NN_JOB_CANCELLED); break;   /* a Jacobian never diverges */
    }
    release(&jj, &r);
}

/* The result kept for the job's readers. */
static void release_result(nn_job *job)
{
    nn_jac_result_free(&job->jacobian);
}

int nn_job_jacobian(nn_job *job, nn_jac_result *out)
{
    int rc = -1;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&job->lock);
    if (job->has_jacobian) {
        const nn_jac_result *j = &job->jacobian;
        size_t nx = (size_t)j->val * (size_t)j->in, nb = nx * (size_t)j->out;
        *out = *j;
        out->x = malloc(nx * sizeof(float));
        out->params = malloc(j->n_params * sizeof(float));
        out->blocks = malloc(nb * sizeof(float));
        if (out->x && out->params && out->blocks) {
            memcpy(out->x, j->x, nx * sizeof(float));
            memcpy(out->params, j->params, j->n_params * sizeof(float));
            memcpy(out->blocks, j->blocks, nb * sizeof(float));
            rc = 0;
        } else {
            nn_jac_result_free(out);
        }
    }
    pthread_mutex_unlock(&job->lock);
    return rc;
}

/* ---- the size check before a job starts (nn_job_check_sizes) ------------------ */

/* The job's val: cfg's, or the preset's [task] val before the config is resolved. */
static long job_val(const nn_job_config *cfg)
{
    return cfg->jac_val > 0 ? cfg->jac_val : cfg->preset.task_val;
}

static enum nn_jac_method job_method(const nn_job_config *cfg)
{
    int m = cfg->jac_method;
    return m >= 0 && m < NN_JAC_METHOD_COUNT ? (enum nn_jac_method)m : NN_JAC_ROWS;
}

/* The lanes rows may run on host memory (jacobian_lanes.c), at most: the
 * threads asked for, else every online core (the free cores, which the
 * backend picks, are no more), no more than val or JAC_MAX_LANES. cpu-ref
 * runs one; it is counted as the cpu backend would be. */
static long lanes_bound(const nn_job_config *cfg, long val)
{
    long n = cfg->threads > 0 ? cfg->threads : sysconf(_SC_NPROCESSORS_ONLN);
    if (n > JAC_MAX_LANES)
        n = JAC_MAX_LANES;
    return n < 1 ? 1 : n < val ? n : val;
}

/* The kind's estimate (job_kind.h): nn_jac_sizes_of at the job's val and
 * method; the backend's buffers are host memory too on a CPU device (an
 * unknown one counts as host memory: the larger figure). A network the job
 * cannot take or a val out of range is refused on its own terms (resolve):
 * nothing to estimate. Rows on host memory counts every lane's own buffers
 * and host arrays. */
static void estimate(const nn_job_config *cfg, const nn_backend_ops *ops, nn_backend *b,
                     nn_memory_estimate *m)
{
    nn_jac_shape s;
    nn_jac_memory j;
    char err[NN_ERR_LEN];
    long val = job_val(cfg);
    int host_memory = !ops || ops->host_memory;
    (void)b;                     /* no workspace: the estimate is whole before the backend opens */
    m->device = !host_memory;
    if (val < 1 || val > NN_JAC_MAX_VAL ||
        nn_jac_shape_from_preset(&cfg->preset, cfg->preset.name, &s, err, sizeof err) != 0)
        return;
    nn_jac_memory_of(&s, val, job_method(cfg), &j);
    long more = job_method(cfg) == NN_JAC_ROWS && host_memory ? lanes_bound(cfg, val) - 1 : 0;
    m->params = j.params * (double)(more + 1);
    m->batch = (j.device - j.params) * (double)(more + 1);
    m->data = j.host + j.lane_host * (double)more;
    m->host = m->device ? m->data : m->params + m->batch + m->data;
}

static int check_sizes(const nn_job_config *cfg, const nn_memory_estimate *m, const char *val_key,
                       char *err, size_t err_len)
{
    char what[NN_TEXT_LEN], need[16], avail[16], parts[3][16];
    const char *method = nn_jac_method_name(job_method(cfg));
    if (m->available <= 0 || m->host <= m->available)
        return 0;
    snprintf(what, sizeof what, "%s %ld", val_key ? val_key : "[task] val =", job_val(cfg));
    nn_format_bytes(m->host, need, sizeof need);
    nn_format_bytes(m->available, avail, sizeof avail);
    nn_format_bytes(m->params, parts[0], sizeof parts[0]);
    nn_format_bytes(m->batch, parts[1], sizeof parts[1]);
    nn_format_bytes(m->data, parts[2], sizeof parts[2]);
    if (m->device) {                 /* the parameters and the buffers are the device's */
        nn_format_bytes(m->params + m->batch, parts[1], sizeof parts[1]);
        return nn_errorf(err, err_len, "%s: needs ~%s of host memory (method %s: host arrays %s; "
                         "%s more on the device), %s available", what, need, method, parts[2], parts[1],
                         avail);
    }
    return nn_errorf(err, err_len, "%s: needs ~%s of memory (method %s: parameters %s, buffers %s, "
                     "host arrays %s), %s available", what, need, method, parts[0], parts[1], parts[2],
                     avail);
}

/* The kind's prediction (job_kind.h): its method at its val on cal's
 * device, priced as one lane (rows on several host threads runs faster by
 * up to their number). */
static double predict_s(const nn_job_config *cfg, const nn_backend_ops *ops, const nn_calibration *cal)
{
    nn_jac_shape s;
    char err[NN_ERR_LEN];
    long val = job_val(cfg);
    if (val < 1 || val > NN_JAC_MAX_VAL ||
        nn_jac_shape_from_preset(&cfg->preset, cfg->preset.name, &s, err, sizeof err) != 0)
        return -1;
    return nn_jac_predict_s(&s, val, job_method(cfg), cal, cfg->graph && !(ops && ops->host_memory));
}

/* ---- the kind ---------------------------------------------------------------------- */

/* val and the method (the preset's unless given), and a network of linear
 * and tanh layers; the batch is val. */
static int resolve(nn_job_config *c, char *err, size_t err_len)
{
    nn_jac_shape s;
    if (c->jac_val == 0)
        c->jac_val = c->preset.task_val;
    if (c->jac_val < 1 || c->jac_val > NN_JAC_MAX_VAL)
        return nn_errorf(err, err_len, "val %d: expected 1..%d", c->jac_val, NN_JAC_MAX_VAL);
    if (c->jac_method < 0 || c->jac_method >= NN_JAC_METHOD_COUNT)
        return nn_errorf(err, err_len, "method %d: expected %s", c->jac_method, nn_jac_method_list());
    if (nn_jac_shape_from_preset(&c->preset, c->preset.name, &s, err, err_len) != 0)
        return -1;
    c->batch = c->jac_val;
    return job_check_threads(c, err, err_len);
}

static const char *method_name(int method)
{
    return nn_jac_method_name((enum nn_jac_method)method);
}

static void task_line(int method, long size, char *buf, size_t len)
{
    snprintf(buf, len, "Jacobian by %s at val %ld", method_name(method), size);
}

const nn_job_kind_def job_kind_jacobian = {
    .traits = { .kind = NN_JOB_JACOBIAN, .name = "jacobian", .has_method = 1, .size_label = "val",
                .size_key = "[task] val", .size_max = NN_JAC_MAX_VAL, .n_methods = NN_JAC_METHOD_COUNT,
                .method_name = method_name, .default_method = NN_JAC_ROWS, .task_line = task_line, .view = NN_VIEW_JACOBIAN },
    .preset_task = NN_TASK_JACOBIAN,
    .resolve = resolve,
    .estimate = estimate,
    .check_sizes = check_sizes,
    .run = run,
    .release = release_result,
    .predict_s = predict_s,
};
