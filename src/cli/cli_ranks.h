/* src/cli/cli_ranks.h - train and bench over data-parallel ranks (cli_ranks.c). */
#ifndef NNLAB_CLI_RANKS_H
#define NNLAB_CLI_RANKS_H

#include "cli_common.h"
#include "nnlab/engine.h"
#include "nnlab/ranks.h"

/* train's and bench's status of a diverged job (cli_train.c's) */
enum { CLI_RANKS_EXIT_DIVERGED = 3 };

/* Before a job: --ranks N (N > 1) in a process no launcher started runs
 * mpirun -np N on this program with argv (the command's, argv[0] its name)
 * less --ranks (one line and CLI_EXIT_USAGE when
 * mpirun or the ranks' module is missing); a process a launcher started
 * joins its ranks, a rank above 0 made silent (its stdout closed, o's
 * outputs off). 1 when the command is over, with its status in *rc; 0 to go
 * on, with this process's place in ranks. */
int cli_ranks_start(int argc, char **argv, cli_options *o, const char *device, nn_ranks_info *ranks,
                    int *rc);
/* After the job: a rank's failure said with its rank and every rank ended
 * (MPI_Abort); a job that ended well waits for every rank, then rank 0
 * writes --save-params atomically; a rank above 0 says nothing more. 1 when
 * that is all, with the status in *rc; 0: report the job as usual. */
int cli_ranks_end(nn_job *job, const cli_options *o, const nn_snapshot *s, const nn_ranks_info *ranks,
                  int *rc);
/* The summary's line and the JSON's fields of the ranks (one rank: the
 * JSON's say 1 and null). */
void cli_ranks_text(const nn_snapshot *s);
void cli_ranks_json(const nn_snapshot *s);

/* --progress-lines: s as one line of JSON on stdout, flushed: {"progress":
 * 1, "rank", "ranks", "state", "step", "steps", "epoch", "loss",
 * "elapsed_s", "samples_per_s", "us_per_step", "allreduce_us"} (null where
 * not known yet; the loss is the ranks' agreed one), at most every quarter
 * second since *last (which it updates) unless the job has ended. Every
 * rank prints its own; mpirun forwards them all. */
void cli_progress_line(const nn_snapshot *s, double *last);

#endif
