/* src/include/nnlab/ranks_sweep.h - the ranks' sweep (`nnlab sweep
 * --ranks 1,2,4`): for every per-rank batch B and rank count N, the step of
 * N ranks at B measured (each point a real run: `nnlab bench --ranks N`,
 * MPI's ranks on this machine), one rank's step at N x B measured beside it
 * (the same samples a step), what the ranks bought (speedup, efficiency,
 * the all-reduce's share of their step) and the model's prediction of the
 * same (nnlab/link.h), and where more ranks stop paying. The rules here;
 * the runs are src/jobs/ranks_run.c's; the front ends print. */
#ifndef NNLAB_RANKS_SWEEP_H
#define NNLAB_RANKS_SWEEP_H

#include <stddef.h>

#include "nnlab/calibrate.h"
#include "nnlab/link.h"
#include "nnlab/preset.h"

#define NN_RANKS_MAX_COUNTS 8
#define NN_RANKS_MAX_BATCHES 12

enum nn_ranks_cell_state { NN_RANKS_NOT_RUN, NN_RANKS_DONE, NN_RANKS_FAILED };

/* One bench run's figures (measured). */
typedef struct nn_ranks_run {
    int state;                   /* enum nn_ranks_cell_state */
    double step_us;              /* median us a step over its timed steps */
    double step_mean_us;         /* mean us a step: the statistic of its phases */
    double allreduce_us;         /* its all-reduce phase, mean a step (0 for one rank) */
    int threads;                 /* each rank's threads */
    char error[256];             /* a failed run's last line */
} nn_ranks_run;

typedef struct nn_ranks_cell {
    nn_ranks_run ranks;          /* N ranks at B each */
    nn_ranks_run one;            /* one rank at N x B (for N = 1 the same run) */
    double speedup;              /* one.step_us / ranks.step_us: the same samples */
    double efficiency;           /* speedup / N */
    double allreduce_share;      /* ranks.allreduce_us / ranks.step_mean_us: both means */
    nn_ranks_prediction predicted;   /* the model's, over the sweep's link */
} nn_ranks_cell;

typedef struct nn_ranks_sweep {
    char preset_arg[NN_PATH_LEN];    /* as given: the children take it as given */
    nn_preset p;
    char device[16];
    int n_counts, counts[NN_RANKS_MAX_COUNTS];     /* ascending, 1 first when given */
    int n_batches, batches[NN_RANKS_MAX_BATCHES];  /* each rank's */
    long steps, warmup;
    nn_link link;                /* the predicted figures' link */
    int overlap;
    int has_prediction;          /* cal given: predicted figures beside */
    nn_calibration cal;          /* this CPU at the one rank's threads (its every core) */
    /* The measured ranks share this host's cores: each count's ranks are
     * priced at the threads each runs (nn_ranks_threads_each over cal's
     * threads), with this CPU calibrated at them, and their turns on a core */
    int rank_threads[NN_RANKS_MAX_COUNTS];
    double timeshare[NN_RANKS_MAX_COUNTS];
    nn_calibration rank_cal[NN_RANKS_MAX_COUNTS];
    nn_ranks_cell cell[NN_RANKS_MAX_COUNTS][NN_RANKS_MAX_BATCHES];
} nn_ranks_sweep;

/* "1,2,4": ascending, each 1..4096, at most NN_RANKS_MAX_COUNTS, no repeat;
 * 0, or -1 with err naming the bad element. */
int nn_ranks_parse_counts(const char *list, int *counts, int *n, char *err, size_t err_len);

/* The model's figure beside a measured pair of runs on this host (a
 * sweep's cell, the lab's race of 1 rank against N): `ranks` ranks at
 * rank_batch sharing its cores (rank_cal: this CPU at a rank's threads,
 * slowed by timeshare: nn_ranks_threads_each) against one rank at ranks x
 * rank_batch on every core (cal), the data in host memory, over l. */
void nn_ranks_predict_here(const nn_preset *p, int rank_batch, int ranks, const nn_calibration *cal,
                           const nn_calibration *rank_cal, double timeshare, const nn_link *l, int overlap,
                           nn_ranks_prediction *out);

/* A cell's speedup, efficiency and share from its runs, and its prediction
 * (when the sweep has a calibration); called as each cell's runs end. */
void nn_ranks_cell_finish(nn_ranks_sweep *sw, int c, int b);

/* Where more ranks stop paying at batch index b, in one sentence: "at 4 a
 * rank, 2 ranks are 0.62x one rank on the same 8 samples: ranks do not pay
 * here (measured)" or "at 256 a rank, ranks pay up to 2 (1.71x, efficiency
 * 86%); 4 are slower than 2 (1.20x)". Counts not measured are left out. */
void nn_ranks_sweep_words(const nn_ranks_sweep *sw, int b, char *buf, size_t len);

/* Runs every cell (src/jobs/ranks_run.c): for each batch, each count's
 * `nnlab bench --ranks N` and one rank's bench at N x B, alternating, each
 * a child process of this program whose JSON is read; progress(sw, c, b,
 * ctx) after each cell; cancelled(ctx) stops between and inside runs. A
 * failed run fails its cell only (its last line kept). 0, or -1 with err
 * when this program cannot be found to run. */
int nn_ranks_sweep_run(nn_ranks_sweep *sw, void (*progress)(const nn_ranks_sweep *, int, int, void *),
                       int (*cancelled)(void *), void *ctx, char *err, size_t err_len);

#endif
