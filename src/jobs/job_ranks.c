/* src/jobs/job_ranks.c - the ranks job kind: a training (or bench) job over
 * N data-parallel ranks started from a process that is not a rank (the
 * lab). Its ranks are processes mpirun starts, so the job is a child:
 * `nnlab train|bench --ranks N --progress-lines ...` on this very program
 * (as the ranks' sweep runs its points, ranks_run.c), whose mpirun forwards
 * every rank's progress lines (ranks_lines.h). Rank 0's lines fill the
 * snapshot as a local job's steps do (the step, the agreed loss, the rate,
 * the measured step's parts); every rank's fills its row. Decision 0157.
 *
 * Why a child and not threads of the lab: a rank must be a process a
 * launcher made (Open MPI's, so that the same job runs on a cluster), and
 * the lab stays the one process the user started, whatever a rank does.
 * Cancel ends the child's process group (mpirun passes SIGTERM to its
 * ranks); pause is refused (a paused rank would hold every other in its
 * next sum). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine_internal.h"
#include "job_kind.h"
#include "nnlab/ranks.h"
#include "ranks_lines.h"
#include "torch_child.h"

/* A training job ends when its steps do; the deadline only stops a child
 * that outlived any job the lab would start (a week). */
#define RANKS_TIMEOUT_S (7 * 24 * 3600.0)

typedef struct ranks_run {
    nn_job *job;
    long points_seen;            /* rank 0's loss points taken into the job */
    int epochs_seen;
    int heard_rank0;
    ranks_line last0;            /* rank 0's last line */
} ranks_run;

/* ---- the child's arguments ---------------------------------------------------------------- */

typedef struct ranks_argv {
    char *a[64];
    int n;
    char text[24][32];           /* the numbers' text */
    int n_text;
} ranks_argv;

static void arg(ranks_argv *v, const char *s)
{
    if (v->n < (int)(sizeof v->a / sizeof v->a[0]) - 1)
        v->a[v->n++] = (char *)s;
}

/* "--name VALUE", the value printed by fmt (the lr to its last digit). */
static void arg_text(ranks_argv *v, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void arg_text(ranks_argv *v, const char *name, const char *fmt, ...)
{
    if (v->n_text >= (int)(sizeof v->text / sizeof v->text[0]))
        return;
    char *t = v->text[v->n_text++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t, sizeof v->text[0], fmt, ap);
    va_end(ap);
    arg(v, name);
    arg(v, t);
}

/* The GPU's switches as the CLI takes them (a CPU ignores them). */
static void arg_switches(ranks_argv *v, const nn_job_config *c)
{
    arg(v, c->data_on_device ? "--data-on-device" : "--no-data-on-device");
    arg(v, c->graph ? "--graph" : "--no-graph");
    if (c->pinned)
        arg(v, "--pinned");
    if (c->sync_every_step)
        arg(v, "--sync-every-step");
    if (c->tf32)
        arg(v, "--tf32");
    if (c->deterministic)
        arg(v, "--deterministic");
    if (c->no_overlap)
        arg(v, "--no-overlap");
}

/* `exe train|bench --preset INI ... --ranks N --progress-lines --quiet`:
 * every setting of the job, the batch each rank's. */
static void build_argv(ranks_argv *v, const char *exe, const char *ini, const nn_job_config *c)
{
    memset(v, 0, sizeof *v);
    arg(v, exe);
    arg(v, c->bench ? "bench" : "train");
    arg(v, "--preset");
    arg(v, ini);
    arg(v, "--device");
    arg(v, c->device);
    arg_text(v, "--batch", "%ld", (long)c->batch);
    arg_text(v, "--epochs", "%ld", (long)c->epochs);
    if (c->steps > 0)
        arg_text(v, "--steps", "%ld", (long)c->steps);
    if (c->bench)
        arg_text(v, "--warmup", "%ld", (long)c->warmup);
    arg_text(v, "--lr", "%.17g", c->lr);
    arg_text(v, "--seed", "%llu", (unsigned long long)c->seed);
    arg_text(v, "--log-every", "%ld", (long)c->log_every);
    if (c->threads > 0)
        arg_text(v, "--threads", "%ld", (long)c->threads);
    if (c->data_dir[0]) {
        arg(v, "--data");
        arg(v, c->data_dir);
    }
    if (c->no_validation && !c->bench)
        arg(v, "--no-validation");
    arg_switches(v, c);
    arg_text(v, "--ranks", "%ld", (long)c->ranks);
    arg(v, "--progress-lines");
    arg(v, "--quiet");
    v->a[v->n] = NULL;
}

/* The job's preset, as it is now (the lab's edits included), in a private
 * file the child reads: its path in path, or -1 with the reason. */
static int write_preset(const nn_preset *p, char *path, size_t len, char *err, size_t err_len)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, len, "%s/nnlab-ranks-XXXXXX.ini", dir && dir[0] ? dir : "/tmp");
    int fd = mkstemps(path, 4);
    if (fd < 0)
        return nn_errorf(err, err_len, "%s: cannot make the ranks' preset file", path);
    close(fd);
    if (nn_preset_save(path, p, err, err_len) != 0) {
        unlink(path);
        return -1;
    }
    return 0;
}

/* ---- the lines, into the snapshot ------------------------------------------------------------ */

/* Room for one more item in *buf (n of *cap used), doubling from first: 0,
 * or -1 (out of memory: the item is dropped, the rest kept). */
static int room_for_one(void **buf, long n, long *cap, size_t item, long first)
{
    if (n < *cap)
        return 0;
    long c = *cap ? 2 * *cap : first;
    void *p = realloc(*buf, (size_t)c * item);
    if (!p)
        return -1;
    *buf = p;
    *cap = c;
    return 0;
}

/* The histories grow under the lock: readers copy them under it. */
static int add_point(nn_job *job, const nn_loss_point *pt)
{
    pthread_mutex_lock(&job->lock);
    int ok = room_for_one((void **)&job->points, job->n_points, &job->cap_points, sizeof *pt, 256) == 0;
    if (ok)
        job->points[job->n_points++] = *pt;
    pthread_mutex_unlock(&job->lock);
    return ok;
}

static int add_epoch(nn_job *job, const nn_epoch_result *e)
{
    pthread_mutex_lock(&job->lock);
    long cap = job->cap_epoch_results;
    int ok = room_for_one((void **)&job->epoch_results, job->n_epoch_results, &cap, sizeof *e, 16) == 0;
    job->cap_epoch_results = (int)cap;
    if (ok)
        job->epoch_results[job->n_epoch_results++] = *e;
    pthread_mutex_unlock(&job->lock);
    return ok;
}

/* Rank 0's loss points and validations beyond those taken: one point a
 * line that says more were made (the lines come four a second, so several
 * of the child's points may fold into one, at the line's step). */
static void take_history(ranks_run *run, const ranks_line *l)
{
    nn_snapshot *s = &run->job->draft;
    if (l->has_loss && l->loss_points > run->points_seen) {
        nn_loss_point pt = { .step = l->step, .epoch = l->epoch, .loss = (float)l->loss, .time_s = l->elapsed_s };
        pt.step_in_epoch = l->steps_per_epoch > 0 && l->epoch > 0 ? l->step - (long)(l->epoch - 1) * l->steps_per_epoch
                                                                   : l->step;
        if (add_point(run->job, &pt)) {
            s->n_loss_points++;
            s->last_loss = pt.loss;
        }
        run->points_seen = l->loss_points;
    }
    if (l->has_val && l->epochs_done > run->epochs_seen) {
        nn_epoch_result e = { .epoch = l->epoch, .step = l->step, .val_loss = (float)l->val_loss,
                              .val_accuracy = (float)l->val_accuracy, .has_accuracy = l->has_accuracy,
                              .time_s = l->elapsed_s };
        if (add_epoch(run->job, &e)) {
            s->n_epoch_results++;
            s->last_epoch = e;
        }
        run->epochs_seen = l->epochs_done;
    }
}

/* Rank 0's figures are the job's: the step is every rank's step. */
static void take_rank0(ranks_run *run, const ranks_line *l)
{
    nn_snapshot *s = &run->job->draft;
    if (s->state == NN_JOB_PREPARING && l->state == NN_JOB_RUNNING)
        s->state = NN_JOB_RUNNING;
    s->step = l->step;
    s->total_steps = l->steps;
    s->steps_per_epoch = l->steps_per_epoch;
    s->epoch = l->epoch;
    s->fraction_done = l->steps > 0 ? (double)l->step / (double)l->steps : 0;
    s->elapsed_s = l->elapsed_s;
    s->has_rate = l->has_rate;
    s->samples_per_s = l->samples_per_s;
    s->eta_s = l->eta_s;
    s->timed_steps = l->timed_steps;
    s->us_per_step = l->us_per_step;
    s->phase_valid = 0;
    for (int p = 0; p < NN_PHASE_COUNT; p++)
        if (l->part_valid & (1u << p)) {
            s->host_phase_us[p] = s->phase_us[p] = l->part_us[p];
            s->phase_valid |= 1u << p;
        }
    take_history(run, l);
    run->last0 = *l;
    run->heard_rank0 = 1;
}

static void on_line(const char *text, void *ctx)
{
    ranks_run *run = ctx;
    nn_snapshot *s = &run->job->draft;
    ranks_line l;
    if (ranks_line_parse(text, s->launched_ranks, &l) != 0 || l.ranks != s->launched_ranks)
        return;                      /* not one of this job's ranks' lines */
    if (l.rank < NN_RANKS_JOB_MAX) {
        nn_rank_progress *r = &s->rank_rows[l.rank];
        r->heard = 1;
        r->state = l.state;
        r->step = l.step;
        r->steps = l.steps;
        r->elapsed_s = l.elapsed_s;
        r->us_per_step = l.us_per_step;
        r->has_allreduce = l.has_allreduce;
        r->allreduce_us = l.allreduce_us;
        r->samples_per_s = l.has_rate ? l.samples_per_s : 0;
    }
    if (l.rank == 0)
        take_rank0(run, &l);
    engine_publish(run->job);
}

static int child_cancelled(void *ctx)
{
    return atomic_load(&((nn_job *)ctx)->cancel_requested);
}

/* ---- the run ------------------------------------------------------------------------------ */

/* What the child's stderr says of its end, in this order: mpirun's line that
 * a rank ended on a signal ("mpirun noticed that process rank 1 ... exited
 * on signal 9"), the cause, which the other ranks' words (a rank stopped by
 * mpirun says it was cancelled) only follow; else the last line of nnlab's
 * own ("nnlab: rank 1 of 2: ..."); else the last line with words in it.
 * mpirun's banners come in either order: a rank killed while another is
 * still starting can have "a non-zero exit code. Per user-direction, the job
 * has been aborted." last, after the line that names the rank (seen once in
 * CI's sanitizer build, 2026-11-29). */
static void child_message(const torch_child *c, char *buf, size_t len)
{
    const char *s = c->err_tail, *signal_end = NULL, *own = NULL, *worded = NULL;
    for (const char *line = s; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] == '\n')) {
        size_t n = strcspn(line, "\n");
        if (n > 7 && strncmp(line, "nnlab: ", 7) == 0)
            own = line;
        const char *rank = strstr(line, "noticed that process rank ");
        if (rank && rank < line + n) {
            const char *on_signal = strstr(rank, "on signal");
            if (on_signal && on_signal < line + n)
                signal_end = line;
        }
        for (size_t i = 0; i < n; i++)
            if (isalnum((unsigned char)line[i])) {
                worded = line;
                break;
            }
    }
    const char *pick = signal_end ? signal_end : own ? own : worded;
    if (!pick) {
        buf[0] = '\0';
        return;
    }
    snprintf(buf, len, "%.*s", (int)strcspn(pick, "\n"), pick);
}

/* How the child ended, as the job's end. */
static void finish(ranks_run *run, const torch_child *c, const char *exe)
{
    nn_job *job = run->job;
    char last[NN_ERR_LEN], msg[NN_ERR_LEN];
    if (c->cancelled) {
        engine_end(job, NN_JOB_CANCELLED);
        return;
    }
    if (c->spawn_errno) {
        nn_errorf(msg, sizeof msg, "cannot run %s for the ranks", exe);
        engine_fail(job, msg);
        return;
    }
    child_message(c, last, sizeof last);
    if (run->heard_rank0 && run->last0.state == NN_JOB_DIVERGED) {
        nn_strlcpy(job->draft.error, run->last0.error, sizeof job->draft.error);
        job->draft.diverged_step = run->last0.step;
        engine_end(job, NN_JOB_DIVERGED);
    } else if (c->timed_out) {
        engine_fail(job, "the ranks ran past a week: ended");
    } else if (c->exit_code != 0 || c->signal) {
        if (run->heard_rank0 && run->last0.state == NN_JOB_FAILED && run->last0.error[0])
            snprintf(msg, sizeof msg, "%s", run->last0.error);
        else if (last[0])
            snprintf(msg, sizeof msg, "%s", last);
        else
            snprintf(msg, sizeof msg, "the ranks ended with %s %d and no message",
                     c->signal ? "signal" : "exit status", c->signal ? c->signal : c->exit_code);
        engine_fail(job, msg);
    } else if (!run->heard_rank0) {
        engine_fail(job, "the ranks finished without a progress line from rank 0");
    } else {
        engine_end(job, NN_JOB_DONE);
    }
}

static void run(nn_job *job)
{
    char exe[PATH_MAX], ini[PATH_MAX], err[NN_ERR_LEN];
    ranks_argv v;
    ranks_run r = { .job = job };
    torch_child *c = calloc(1, sizeof *c);
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (!c || n <= 0) {
        engine_fail(job, !c ? "out of memory for the ranks' child" : "cannot find this program to start its ranks");
        free(c);
        return;
    }
    exe[n] = '\0';
    if (write_preset(&job->cfg.preset, ini, sizeof ini, err, sizeof err) != 0) {
        engine_fail(job, err);
        free(c);
        return;
    }
    job->draft.launched_ranks = job->draft.ranks = job->cfg.ranks;   /* what a reader sees while they start */
    job->draft.global_batch = (long)job->cfg.ranks * job->cfg.batch;
    engine_publish(job);
    build_argv(&v, exe, ini, &job->cfg);
    torch_child_run_lines(v.a, RANKS_TIMEOUT_S, child_cancelled, job, on_line, &r, c);
    unlink(ini);
    finish(&r, c, exe);
    free(c);
}

/* Training's checks, then the ranks': 2..NN_RANKS_JOB_MAX, and this machine
 * able to start them (said before anything starts). */
static int resolve(nn_job_config *c, char *err, size_t err_len)
{
    char why[NN_ERR_LEN];
    if (job_kind_train.resolve(c, err, err_len) != 0)
        return -1;
    if (c->ranks < 2 || c->ranks > NN_RANKS_JOB_MAX)
        return nn_errorf(err, err_len, "ranks %d: expected 2..%d", c->ranks, NN_RANKS_JOB_MAX);
    if (!nn_ranks_can_start(why, sizeof why))
        return nn_errorf(err, err_len, "ranks %d: %s", c->ranks, why);
    return 0;
}

/* Each rank holds what one job of its batch holds, all of them on this host
 * (mpirun starts them here): host memory must hold N of them. A GPU rank's
 * device parts are its own GPU's. */
static void estimate(const nn_job_config *cfg, const nn_backend_ops *ops, nn_backend *b, nn_memory_estimate *m)
{
    job_kind_train.estimate(cfg, ops, b, m);
    m->copies = cfg->ranks > 1 ? cfg->ranks : 1;
    m->host *= m->copies;
}

static int check_sizes(const nn_job_config *cfg, const nn_memory_estimate *m, const char *size_key, char *err,
                       size_t err_len)
{
    return job_kind_train.check_sizes(cfg, m, size_key, err, err_len);
}

const nn_job_kind_def job_kind_ranks = {
    .traits = { .kind = NN_JOB_RANKS, .name = "ranks", .trains = 1, .size_label = "batch",
                .size_key = "[train] batch", .size_max = 1048576L,   /* training's (job_train.c) */ .view = NN_VIEW_STEPS,
                .no_pause = "ranks cannot pause: each waits for the others in every sum (c cancels)" },
    .preset_task = -1,
    .resolve = resolve,
    .estimate = estimate,
    .check_sizes = check_sizes,
    .run = run,
};
