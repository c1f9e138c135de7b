/* ui/text/run.c - a run of one job or several side by side; see run.h. */
#define _GNU_SOURCE             /* sched_getaffinity, CPU_COUNT */
#include "run.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

void ui_race_threads(const nn_device_status *const *devices, int n, int cores, int *threads)
{
    int threaded = 0, left = cores;
    for (int k = 0; k < n; k++) {
        threaded += devices[k]->threaded;
        left -= !devices[k]->threaded;
    }
    for (int k = 0; k < n; k++) {
        int share = threaded > 0 ? left / threaded : 1;
        threads[k] = !devices[k]->threaded ? 1 : share > 1 ? share : 1;
    }
}

/* The cores this process may run on. */
static int usable_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static int start_job(ui_run *r, int k, char *err, size_t err_len)
{
    ui_run_job *j = &r->j[k];
    nn_job_config cfg;
    nn_race_job_config(&j->way, &r->cfg, &cfg);   /* its device, and its way on a GPU */
    cfg.threads = j->threads;
    j->started = 1;
    j->t_start = nn_now();
    j->job = nn_job_start(&cfg, err, err_len);
    if (!j->job) {
        nn_strlcpy(j->error, err, sizeof j->error);
        j->ended = 1;
        j->t_end = j->t_start;
        j->snap.state = NN_JOB_FAILED;
        nn_strlcpy(j->snap.error, err, sizeof j->snap.error);
        return -1;
    }
    if (r->paused)
        nn_job_pause(j->job);
    return 0;
}

/* A job's label: with a GPU in the race its device and way ("gpu eager",
 * "cpu nnlab"; the switches it applied once it said), else its device. */
static void label_job(const ui_run *r, ui_run_job *j)
{
    if (r->labelled)
        nn_race_label(&j->way, &r->cfg, j->started ? &j->snap : NULL, j->label, sizeof j->label);
    else
        nn_strlcpy(j->label, j->device, sizeof j->label);
}

/* The jobs of the run: one device as it is; two, as nn_race_plan says (a
 * GPU in both its ways unless the switches fix one), each labelled by its
 * device and way when a GPU's ways are split. */
static void plan_jobs(ui_run *r, const nn_device_status *const *dev, int n_dev, const nn_device_status **job_dev)
{
    nn_race_job jobs[UI_RUN_MAX_JOBS];
    /* a race of training jobs only: a Jacobian's rows have no eager and graph pair to time */
    int trains = nn_job_traits_of(nn_job_kind_of_preset(&r->cfg.preset))->trains;
    if (r->ranks_race) {             /* 1 rank against N on the first device */
        r->n_jobs = nn_race_plan_ranks(dev[0], r->cfg.ranks, r->cfg.batch, jobs);
        n_dev = 1;
        r->labelled = 1;
    } else {
        r->n_jobs = nn_race_plan(dev, n_dev, n_dev < 2 || !trains || nn_race_way_fixed(&r->cfg), jobs);
    }
    r->ways = r->n_jobs > n_dev && !r->ranks_race;
    for (int k = 0; k < n_dev; k++)
        r->labelled |= n_dev > 1 && dev[k]->gpu;
    for (int k = 0; k < r->n_jobs; k++) {
        ui_run_job *j = &r->j[k];
        j->way = jobs[k];
        nn_strlcpy(j->device, jobs[k].device, sizeof j->device);
        label_job(r, j);
        job_dev[k] = !strcmp(jobs[k].device, dev[0]->name) ? dev[0] : dev[n_dev - 1];
        j->snap.state = NN_JOB_PREPARING;
        j->threads = r->cfg.threads;
    }
}

int ui_run_start(ui_run *r, const nn_job_config *cfg, const nn_device_status *dev0, const nn_device_status *dev1,
                 int sequential, char *err, size_t err_len)
{
    const nn_device_status *dev[2] = { dev0, dev1 }, *job_dev[UI_RUN_MAX_JOBS];
    memset(r, 0, sizeof *r);
    r->cfg = *cfg;
    r->ranks_race = cfg->ranks > 1 && nn_job_traits_of(nn_job_kind_of_preset(&cfg->preset))->trains;
    plan_jobs(r, dev, dev1 ? 2 : 1, job_dev);
    /* ranks take every core: their race is one lane after the other */
    r->sequential = r->n_jobs > 1 ? sequential || r->ranks_race : 0;
    if (r->n_jobs > 1 && !r->sequential && cfg->threads == 0) {
        /* racing: each its own cores, not all of them each */
        int threads[UI_RUN_MAX_JOBS];
        r->cores = usable_cores();
        ui_race_threads(job_dev, r->n_jobs, r->cores, threads);
        for (int k = 0; k < r->n_jobs; k++)
            r->j[k].threads = threads[k];
    }
    if (start_job(r, 0, err, err_len) != 0)
        return -1;
    for (int k = 1; k < r->n_jobs && !r->sequential; k++)
        (void)start_job(r, k, err, err_len);   /* a failure shows in its own row */
    return 0;
}

/* Grows *buf to hold need items; 0 or -1 (the UI thread may allocate). */
static int grow(void **buf, long *cap, long need, size_t item)
{
    if (need <= *cap)
        return 0;
    long n = *cap ? *cap : 256;
    while (n < need)
        n *= 2;
    void *p = realloc(*buf, (size_t)n * item);
    if (!p)
        return -1;
    *buf = p;
    *cap = n;
    return 0;
}

/* Copies the loss points and epoch results the job has published beyond ours. */
static int copy_new(ui_run_job *j)
{
    int got = 0;
    if (j->snap.n_loss_points > j->n_pts &&
        grow((void **)&j->pts, &j->cap_pts, j->snap.n_loss_points, sizeof *j->pts) == 0) {
        long n = nn_job_loss_points(j->job, j->n_pts, j->pts + j->n_pts, j->cap_pts - j->n_pts);
        j->n_pts += n;
        got |= n > 0;
    }
    long cap = j->cap_eps;
    if (j->snap.n_epoch_results > j->n_eps &&
        grow((void **)&j->eps, &cap, j->snap.n_epoch_results, sizeof *j->eps) == 0) {
        j->cap_eps = (int)cap;
        int n = nn_job_epoch_results(j->job, j->n_eps, j->eps + j->n_eps, j->cap_eps - j->n_eps);
        j->n_eps += n;
        got |= n > 0;
    }
    return got;
}

static unsigned poll_job(ui_run_job *j)
{
    nn_snapshot s;
    unsigned bits = 0;
    if (!j->job || j->ended)
        return 0;
    nn_job_snapshot(j->job, &s);
    if (memcmp(&s, &j->snap, sizeof s) != 0)
        bits |= UI_RUN_PROGRESS;
    if (s.state != j->snap.state)
        bits |= UI_RUN_STATE;
    j->snap = s;
    if (copy_new(j))
        bits |= UI_RUN_POINTS;
    if (nn_job_state_ended(s.state)) {
        /* the trainer published its last snapshot before returning: join it,
         * take what it published last, and keep the copy */
        nn_job_wait(j->job);
        nn_job_snapshot(j->job, &j->snap);
        copy_new(j);
        j->ended = 1;
        j->t_end = nn_now();
        if (s.state == NN_JOB_FAILED || s.state == NN_JOB_DIVERGED)
            nn_strlcpy(j->error, j->snap.error, sizeof j->error);
        bits |= UI_RUN_STATE | UI_RUN_POINTS | UI_RUN_PROGRESS;
    }
    return bits;
}

unsigned ui_run_poll(ui_run *r)
{
    unsigned bits = 0;
    char err[NN_ERR_LEN];
    for (int k = 0; k < r->n_jobs; k++) {
        bits |= poll_job(&r->j[k]);
        label_job(r, &r->j[k]);
    }
    /* one after the other: the next starts once the one before it ended */
    for (int k = 1; k < r->n_jobs && r->sequential && !r->cancelled; k++)
        if (r->j[k - 1].ended && !r->j[k].started) {
            (void)start_job(r, k, err, sizeof err);
            bits |= UI_RUN_STATE;
            break;
        }
    return bits;
}

const char *ui_run_no_pause(const ui_run *r)
{
    for (int k = 0; k < r->n_jobs; k++) {
        const nn_job_traits *t = nn_job_traits_of(r->j[k].snap.kind);
        if (r->j[k].started && !r->j[k].ended && t->no_pause)
            return t->no_pause;
    }
    return NULL;
}

void ui_run_toggle_pause(ui_run *r)
{
    r->paused = !r->paused;
    for (int k = 0; k < r->n_jobs; k++) {
        if (!r->j[k].job || r->j[k].ended)
            continue;
        if (r->paused)
            nn_job_pause(r->j[k].job);
        else
            nn_job_resume(r->j[k].job);
    }
}

void ui_run_cancel(ui_run *r)
{
    r->cancelled = 1;
    for (int k = 0; k < r->n_jobs; k++)
        if (r->j[k].job && !r->j[k].ended)
            nn_job_cancel(r->j[k].job);
}

int ui_run_active(const ui_run *r)
{
    for (int k = 0; k < r->n_jobs; k++) {
        if (r->j[k].started && !r->j[k].ended)
            return 1;
        if (!r->j[k].started && !r->cancelled)
            return 1;                /* a later job of a sequential run is still to come */
    }
    return 0;
}

void ui_run_free(ui_run *r)
{
    for (int k = 0; k < r->n_jobs; k++) {
        nn_job_free(r->j[k].job);    /* cancels and waits when still running */
        free(r->j[k].pts);
        free(r->j[k].eps);
    }
    memset(r, 0, sizeof *r);
}

double ui_run_wall(const ui_run_job *j)
{
    if (!j->started)
        return 0.0;
    return (j->ended ? j->t_end : nn_now()) - j->t_start;
}

void ui_run_not_started_text(const ui_run *r, int k, char *buf, size_t len)
{
    const ui_run_job *j = &r->j[k];
    const char *before = "?";
    for (int i = 0; i < k; i++)       /* the job that ran (or runs) last before it */
        if (r->j[i].started)
            before = r->j[i].label[0] ? r->j[i].label : r->j[i].device;
    if (j->started)
        snprintf(buf, len, "%s", "");
    else if (r->cancelled)
        snprintf(buf, len, "not run: cancelled while %s ran (one after the other)", before);
    else if (k > 0)
        snprintf(buf, len, "waiting: starts when %s ends (one after the other)",
                 r->j[k - 1].label[0] ? r->j[k - 1].label : r->j[k - 1].device);
    else
        snprintf(buf, len, "%s", "waiting");
}
