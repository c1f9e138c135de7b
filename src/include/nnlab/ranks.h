/* src/include/nnlab/ranks.h - data-parallel training's ranks, as a front end
 * sees them: whether a launcher (mpirun, srun) started this process as one
 * of several, joining them, and where the engine is missing. A job started
 * in a process that joined runs as its rank (docs/ranks.md): each rank its
 * share of every batch, the gradients summed over the ranks every step. */
#ifndef NNLAB_RANKS_H
#define NNLAB_RANKS_H

#include <stddef.h>

typedef struct nn_ranks_info {
    int rank, size;              /* this process's rank of size (0 of 1: a plain job) */
    int local_rank, local_size;  /* among the ranks on this host */
    char host[64];
    char transport[64];          /* how the sums travel: "shared memory", "tcp", ... */
    char library[128];           /* e.g. "Open MPI v4.1.4" */
} nn_ranks_info;

/* Whether a launcher started this process as one of more than one. */
int nn_ranks_launched(void);

/* Whether the ranks' module (nnlab-mpi.so) loads: 1, or 0 with the one-line
 * reason in why (built without MPI, the module or libmpi missing). */
int nn_ranks_available(char *why, size_t why_len);

/* Whether this machine can start ranks itself (`--ranks N`, the lab's
 * ranks setting): the module loads and mpirun is on PATH. 1, or 0 with the
 * one-line reason in why. */
int nn_ranks_can_start(char *why, size_t why_len);

/* Joins the ranks once per process when launched (left at exit), and says
 * which this is: 0 (a process not launched: rank 0 of 1), or -1 with the
 * reason in err. */
int nn_ranks_join(nn_ranks_info *info, char *err, size_t err_len);

/* This process's place: rank 0 of 1 until it joined. */
void nn_ranks_info_get(nn_ranks_info *info);

/* Waits for every rank (0, or -1 with the reason in err). */
int nn_ranks_barrier(char *err, size_t err_len);

/* Ends every rank now with code: a failure of this one alone. */
void nn_ranks_abort(int code);

#endif
