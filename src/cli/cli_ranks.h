/* src/cli/cli_ranks.h - train and bench over data-parallel ranks (cli_ranks.c). */
#ifndef NNLAB_CLI_RANKS_H
#define NNLAB_CLI_RANKS_H

#include "cli_common.h"
#include "nnlab/engine.h"
#include "nnlab/ranks.h"

/* --ranks N (N > 1): runs mpirun -np N on this program with argv (the
 * command's, argv[0] its name) less --ranks, and returns its exit status;
 * one line and CLI_EXIT_USAGE when device is a GPU, or mpirun or the ranks'
 * module is missing. */
int cli_ranks_launch(int argc, char **argv, const cli_options *o, const char *device);
/* Joins the ranks when a launcher started this process; a rank above 0 is
 * made silent (its stdout closed, o's outputs off). 0, or an exit status
 * after a one-line error. */
int cli_ranks_join(cli_options *o, nn_ranks_info *info);
/* After a job that ended well: waits for every rank, then writes the
 * parameters to path (NULL: none; rank 0's only) atomically. 0, or an exit
 * status after a one-line error. */
int cli_ranks_save(nn_job *job, const char *path, const nn_ranks_info *info);

#endif
