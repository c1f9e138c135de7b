/* src/include/nnlab/race.h - one job raced, measured, on the devices that
 * are here (docs/ways.md "The measured jobs of a race"): which jobs a race
 * runs, the label of each (its device and its way: "cpu nnlab", "gpu
 * eager", "gpu graph") and the ratio of each pair of them (the framework
 * way beside them, and the verdicts: nnlab/race_ways.h). The lab's run
 * screen (ui/text/run.c, ui/panels/race_view.c) and `nnlab train --race`
 * (src/cli/cli_race.c) both read it, so that they run the same jobs and
 * print the same words and ratios. */
#ifndef NNLAB_RACE_H
#define NNLAB_RACE_H

#include <stddef.h>

#include "nnlab/calibrate.h"
#include "nnlab/device.h"
#include "nnlab/engine.h"
#include "nnlab/explain.h"
#include "nnlab/profile.h"

/* A CPU, and a GPU's two measured ways. */
#define NN_RACE_MAX_JOBS 3

/* One job of a race: the device, and the way a GPU runs it. */
typedef struct nn_race_job {
    char device[16];
    int gpu;                     /* the device computes on a GPU (nn_device_status.gpu) */
    int graph;                   /* the job's own graph switch: 1 graph, 0 eager; -1 the
                                    config's switches decide (the way fixed, or a CPU) */
    int ranks;                   /* a race of ranks (nn_race_plan_ranks): the ranks this
                                    job trains over, 1 or N; 0: not such a race */
    int batch;                   /*   and its batch, each rank's (0: the config's) */
} nn_race_job;

/* Whether cfg's GPU switches pick a way: any of graph, data_on_device,
 * pinned and sync_every_step away from nnlab's defaults (nn_preset_defaults:
 * graph, data on the device, no pinned copies, no sync). The lab's rule; the
 * CLI asks whether a switch was given on its command line instead. */
int nn_race_way_fixed(const nn_job_config *cfg);

/* The jobs of a race on n devices (1 or 2): each device once, but a GPU
 * with its way not fixed twice, eager then graph (the sweep's two measured
 * ways, nn_sweep_add_gpu_ways). Returns how many (at most
 * NN_RACE_MAX_JOBS), in the order one after the other runs them. */
int nn_race_plan(const nn_device_status *const *devices, int n, int way_fixed, nn_race_job *jobs);

/* The race of 1 rank against `ranks` on one device (docs/ranks.md): 1
 * rank at ranks x batch, then the ranks at batch each, so that every step
 * takes the same samples and the two train alike (the pairing `nnlab
 * sweep --ranks` and nn_ranks_predict use). One after the other: the ranks
 * take every core. Returns 2. */
int nn_race_plan_ranks(const nn_device_status *device, int ranks, int batch, nn_race_job *jobs);

/* Job j's config: base with j's device and, when it has one, its graph
 * switch (eager: no graph, the rest of base's switches, as the sweep's
 * eager way). */
void nn_race_job_config(const nn_race_job *j, const nn_job_config *base, nn_job_config *out);

/* The way job j runs its step: on a GPU graph or eager (the switches the
 * job reported, once it has: s may be NULL), on a CPU nnlab's own
 * (NN_WAY_EAGER, named "nnlab" there). */
nn_gpu_way nn_race_way(const nn_race_job *j, const nn_job_config *base, const nn_snapshot *s);
/* "graph", "eager", or "nnlab" on a CPU: the word beside the device. */
const char *nn_race_way_word(const nn_race_job *j, nn_gpu_way w);
/* The way word of a finished or running job from its snapshot alone:
 * "graph" or "eager" as a GPU job applied its switches, "nnlab" for a job
 * that has none (a CPU's), "ranks" for a job over ranks it started (their
 * count: launched_ranks). The exports' `way`. */
const char *nn_snapshot_way_word(const nn_snapshot *s);
/* "gpu graph", "gpu eager", "cpu nnlab", in a race of ranks "cpu 1 rank",
 * "cpu 2 ranks": every row, bar and curve's label. */
void nn_race_label(const nn_race_job *j, const nn_job_config *base, const nn_snapshot *s, char *buf, size_t len);

/* One pair of a race's jobs that both finished: "gpu graph 2.10x faster
 * than cpu nnlab: 1.23 s / 0.59 s", the ratio of the very times printed
 * (nn_race_ratio, with the decimals nn_race_decimals gives). Returns the
 * ratio, or 0 with "no ratio: <label> did not finish". */
double nn_race_pair_text(const char *label_a, const nn_snapshot *a, const char *label_b, const nn_snapshot *b,
                         char *buf, size_t len);

#endif
