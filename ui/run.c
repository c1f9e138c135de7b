/* ui/run.c - a run of one job or two side by side; see run.h. */
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
    nn_job_config cfg = r->cfg;
    nn_strlcpy(cfg.device, j->device, sizeof cfg.device);
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

int ui_run_start(ui_run *r, const nn_job_config *cfg, const nn_device_status *dev0, const nn_device_status *dev1,
                 int sequential, char *err, size_t err_len)
{
    memset(r, 0, sizeof *r);
    r->cfg = *cfg;
    r->n_jobs = dev1 ? 2 : 1;
    r->sequential = dev1 ? sequential : 0;
    nn_strlcpy(r->j[0].device, dev0->name, sizeof r->j[0].device);
    if (dev1)
        nn_strlcpy(r->j[1].device, dev1->name, sizeof r->j[1].device);
    for (int k = 0; k < r->n_jobs; k++) {
        r->j[k].snap.state = NN_JOB_PREPARING;
        r->j[k].threads = cfg->threads;
    }
    if (r->n_jobs == 2 && !r->sequential && cfg->threads == 0) {
        /* racing: each its own cores, not both all of them */
        const nn_device_status *devices[2] = { dev0, dev1 };
        int threads[2];
        r->cores = usable_cores();
        ui_race_threads(devices, 2, r->cores, threads);
        r->j[0].threads = threads[0];
        r->j[1].threads = threads[1];
    }
    if (start_job(r, 0, err, err_len) != 0)
        return -1;
    if (r->n_jobs == 2 && !r->sequential)
        (void)start_job(r, 1, err, err_len);   /* its failure shows in its own row */
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
    for (int k = 0; k < r->n_jobs; k++)
        bits |= poll_job(&r->j[k]);
    if (r->n_jobs == 2 && r->sequential && r->j[0].ended && !r->j[1].started && !r->cancelled) {
        (void)start_job(r, 1, err, sizeof err);
        bits |= UI_RUN_STATE;
    }
    return bits;
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
            return 1;                /* the second of a sequential run is still to come */
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
    if (j->started)
        snprintf(buf, len, "%s", "");
    else if (r->cancelled)
        snprintf(buf, len, "not run: cancelled while %s ran (one after the other)", r->j[0].device);
    else
        snprintf(buf, len, "waiting: starts when %s ends (one after the other)", r->j[0].device);
}
