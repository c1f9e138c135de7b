/* src/include/nnlab/export.h - a run or a sweep written as CSV and JSON, for
 * slides and handouts: the lab's export key and the CLI's --csv and --json
 * (`nnlab sweep`, the history of `nnlab train --json`) write through these,
 * so a figure reads the same in every file. Nothing here prints to a
 * terminal: writers take a FILE and return -1 when a write failed. */
#ifndef NNLAB_EXPORT_H
#define NNLAB_EXPORT_H

#include <stddef.h>
#include <stdio.h>

#include "nnlab/engine.h"
#include "nnlab/race_ways.h"
#include "nnlab/sweep.h"

/* One job of a run: its last snapshot and what it published. */
typedef struct nn_export_job {
    const nn_snapshot *snap;
    const nn_loss_point *pts;
    long n_pts;
    const nn_epoch_result *eps;
    int n_eps;
    int threads;                 /* the threads it was given (0: the engine's choice) */
    const char *name;            /* the run's own name for it, as its screen labels it
                                    ("cpu 1 rank" in a race of ranks); NULL: its device
                                    and way (nn_export_job_name) */
} nn_export_job;

/* The jobs a run exports at most: a CPU and a GPU's two ways (nnlab/race.h). */
#define NN_EXPORT_MAX_JOBS 3

/* A run: one job, or several side by side (raced, or one after the other),
 * and a race of ways' lanes beside them (nnlab/race_ways.h). */
typedef struct nn_export_run {
    const char *preset;
    int n_jobs;                  /* 1 to NN_EXPORT_MAX_JOBS */
    int sequential;              /* several jobs: 1 one after the other, 0 raced */
    nn_export_job job[NN_EXPORT_MAX_JOBS];
    const nn_race_ways *ways;    /* a race against a GPU: its four lanes (measured ones
                                    filled in), NULL when none */
    long ways_steps;             /*   the steps each lane is timed for */
} nn_export_run;

/* A job's name in the ratios and on the slide: its own name where the run
 * gave one, else "device way" ("gpu graph", "cpu nnlab"; a job over ranks it
 * started "cpu 2 ranks"). */
void nn_export_job_name(const nn_export_job *j, char *buf, size_t len);

/* ---- JSON pieces -------------------------------------------------------------------------- */

/* s as a JSON string, quotes included (quotes, backslashes and control
 * characters escaped). */
void nn_json_string(FILE *f, const char *s);
/* v, or null when not finite. */
void nn_json_number(FILE *f, double v);
/* The per-epoch history (nn_epoch_history) as a JSON array of objects
 * {"epoch", "step", "train_loss", "val_loss", "val_accuracy", "time_s",
 * "seconds"} (null where absent), one per line after `indent` spaces. */
void nn_json_history(FILE *f, const nn_loss_point *pts, long n_pts, const nn_epoch_result *eps, int n_eps,
                     int indent);

/* ---- a run --------------------------------------------------------------------------------- */

/* CSV, one row per loss point (kind "loss") and per epoch (kind "epoch":
 * the history row): device,kind,epoch,step,time_s,seconds,train_loss,
 * val_loss,val_accuracy,way,source,us_per_step (empty where absent); a race
 * of ways adds a row a lane (kind "lane": step the steps, time_s their
 * time at the lane's step, its way, source and step). 0, or -1 when a
 * write failed. */
int nn_export_run_csv(FILE *f, const nn_export_run *run);
/* JSON: the preset, whether the jobs raced, each job's figures (state,
 * headline, times, samples/s, threads), history and loss points, a race's
 * ratio from the same times (nn_race_ratio), and a race of ways' "ways" and
 * "verdicts" (nn_race_ways_json). 0, or -1. */
int nn_export_run_json(FILE *f, const nn_export_run *run);

/* ---- a sweep ------------------------------------------------------------------------------- */

/* CSV, one row per measured or predicted point: device,batch,us_per_step,
 * samples_per_s,doubling,regime,source,way,profile,profile_us,crossover. */
int nn_export_sweep_csv(FILE *f, const nn_sweep *sw);
/* JSON: the points, each device's calibration (its age at `now`, seconds
 * since the epoch) and the crossovers. */
int nn_export_sweep_json(FILE *f, const nn_sweep *sw, long long now);

/* ---- files ----------------------------------------------------------------------------------- */

/* The folder exports go to: $XDG_DATA_HOME/nnlab/exports, else
 * ~/.local/share/nnlab/exports (the XDG base directories; a relative
 * XDG_DATA_HOME is ignored). 0, or -1 when neither variable is usable. */
int nn_export_dir(char *dir, size_t len);

/* Writes STEM.csv and STEM.json in dir (created if needed), each replaced
 * atomically: the run (run != NULL) or the sweep. stem is made of the
 * preset's name as a file stem (nn_file_stem: no '/', no "..", so nothing
 * is written outside dir), "run" or "sweep" and the local time ("lenet-run-
 * 20261124-021500"). Both or neither: when the JSON cannot be written the
 * CSV is removed. Sets csv_path and json_path; 0, or -1 with a one-line
 * message naming the file. */
int nn_export_files(const char *dir, const nn_export_run *run, const nn_sweep *sw, long long now,
                    char *csv_path, char *json_path, size_t path_len, char *err, size_t err_len);

/* The same for any export: STEM = PRESET-WHAT-TIME, each file written by
 * its filler from ctx (0, or -1 on a write error), both or neither. */
typedef int (*nn_export_fill_fn)(FILE *f, const void *ctx);
int nn_export_pair(const char *dir, const char *preset, const char *what, long long now, nn_export_fill_fn csv,
                   nn_export_fill_fn json, const void *ctx, char *csv_path, char *json_path, size_t path_len,
                   char *err, size_t err_len);

#endif
