/* ui/text/run.h - one training run as the dashboard shows it: one job, or the
 * same job on two devices side by side, either racing (at once, sharing
 * the CPU) or one after the other (fair timing). A GPU that is here races
 * in both its measured ways, eager and graph, unless the settings fix one
 * (nnlab/race.h): then a run has three jobs. The UI thread polls it:
 * each poll copies the snapshot and the loss points it has not seen yet, so
 * drawing never holds an engine lock. No curses here. */
#ifndef NNLAB_UI_RUN_H
#define NNLAB_UI_RUN_H

#include "nnlab/device.h"
#include "nnlab/engine.h"
#include "nnlab/predicted.h"
#include "nnlab/race.h"

/* A CPU and a GPU's two ways (nn_race_plan). */
#define UI_RUN_MAX_JOBS NN_RACE_MAX_JOBS

/* What a poll found new (bits). */
enum {
    UI_RUN_PROGRESS = 1,             /* a snapshot changed: progress, rate, phases */
    UI_RUN_POINTS = 2,               /* new loss points or epoch results */
    UI_RUN_STATE = 4                 /* a job started, paused, ended */
};

typedef struct ui_run_job {
    char device[16];
    nn_race_job way;                 /* its device and, on a GPU, its own graph switch */
    char label[24];                  /* "gpu eager", "cpu nnlab" in a race with a GPU; else the device */
    int threads;                     /* asked of the job: 0 the engine's choice (the
                                        cores free), else its share of a race */
    nn_job *job;                     /* NULL before it starts (sequential) and after it is freed */
    int started, ended;
    nn_snapshot snap;                /* the last copy */
    nn_loss_point *pts;              /* the loss points seen so far */
    long n_pts, cap_pts;
    nn_epoch_result *eps;
    int n_eps, cap_eps;
    double t_start, t_end;           /* nn_now() at start and when the end was seen */
    char error[NN_ERR_LEN];          /* could not start, or failed */
} ui_run_job;

typedef struct ui_run {
    int n_jobs;                      /* 1, or up to UI_RUN_MAX_JOBS side by side */
    int sequential;                  /* side by side: each starts when the one before ends */
    int ways;                        /* a GPU runs in both its ways (eager, graph) */
    int labelled;                    /* a GPU in the race: each job's label says its way */
    int paused, cancelled;
    int cores;                       /* a race: the cores it shared out (ui_race_threads) */
    int ranks_race;                  /* cfg.ranks > 1: 1 rank against N (nn_race_plan_ranks) */
    nn_job_config cfg;               /* device set per job */
    ui_run_job j[UI_RUN_MAX_JOBS];
    int has_predicted;               /* a GPU not here races j[0] as predicted */
    nn_predicted_gpu predicted;      /*   (ui/panels/race_predicted.c) */
    int n_fw_lanes;                  /* the framework way raced beside it, predicted: */
    nn_predicted_gpu fw_lane[2];     /*   on the CPU and on the GPU (nnlab/race_ways.h) */
} ui_run;

/* The CPU threads of each of n jobs racing on `cores` cores, so that each
 * has cores of its own: a job on a device whose trainer runs on one thread
 * (the reference, or a GPU, whose host thread issues the work) takes one
 * core; the jobs on a pool of threads (nn_device_status.threaded) share the
 * rest equally, at least one thread each. Sets threads[k] (1 for the
 * one-thread devices). */
void ui_race_threads(const nn_device_status *const *devices, int n, int cores, int *threads);

/* Starts the run (the first job, or all when racing) on the devices the
 * survey gave (nnlab/device.h). dev1 NULL: one job. Two devices: the jobs
 * nn_race_plan gives, a GPU in both its ways unless cfg's switches fix one
 * (nn_race_way_fixed). Racing with cfg->threads 0, each job gets its share
 * (ui_race_threads: a GPU job's host thread takes one core).
 * Returns -1 with the reason when the first job cannot start. */
int ui_run_start(ui_run *r, const nn_job_config *cfg, const nn_device_status *dev0, const nn_device_status *dev1,
                 int sequential, char *err, size_t err_len);
/* Copies what is new; starts the second job of a sequential run. Returns
 * UI_RUN_* bits. */
unsigned ui_run_poll(ui_run *r);
/* Why the run cannot pause now (a running job's kind refuses: ranks), or NULL. */
const char *ui_run_no_pause(const ui_run *r);
/* Pauses every running job, or resumes them. */
void ui_run_toggle_pause(ui_run *r);
/* Asks every job to stop (collected by the next polls). */
void ui_run_cancel(ui_run *r);
/* 1 while a job is preparing, running or paused, or one is still to start. */
int ui_run_active(const ui_run *r);
/* Cancels what still runs, waits, and frees everything. */
void ui_run_free(ui_run *r);

/* Wall time (start to end as the UI saw it, data loading included), or the
 * time so far while it runs; 0 before it starts. */
double ui_run_wall(const ui_run_job *j);

/* What job k of a run says while it has not started: a later job of a
 * sequential run "waiting: starts when cpu ends (one after the other)", or
 * once the run was cancelled before its turn "not run: cancelled while cpu
 * ran" (the job before it, by its label). "" for a job that started. */
void ui_run_not_started_text(const ui_run *r, int k, char *buf, size_t len);

#endif
