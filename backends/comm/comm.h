/* backends/comm/comm.h - data-parallel communication: the one table of
 * operations that ranks use to add up their gradients, and the loader of the
 * module that implements it on an existing engine (Open MPI's libmpi, in
 * backends/comm/comm_mpi.c, built as nnlab-mpi.so when configure finds MPI).
 *
 * Why a module: nnlab links no MPI library, so it builds and runs where none
 * is installed (as with the GPU module, backends/backend.c); the module is
 * opened only by a process that an MPI launcher (mpirun, srun) started, or
 * that asks for ranks. No communication of our own: MPI moves the bytes.
 *
 * Conventions:
 *  - Every operation returns 0 on success, or -1 with a message in
 *    c->last_error (naming the operation and the engine's own words).
 *  - Buffers are host memory. A GPU's gradients go through NCCL inside the
 *    GPU module, which uses this table only to hand its unique id around
 *    (broadcast).
 *  - Sums are in place, over float32, in the same order on every rank, so
 *    that every rank ends with the same bits (MPI_Allreduce guarantees the
 *    same result on every rank; the buckets are always started in the same
 *    order).
 *  - A rank that dies ends the job: the engine (MPI's default error handler,
 *    mpirun) stops the others; nothing here waits forever for a dead peer
 *    unless the engine does.
 */
#ifndef NNLAB_COMM_H
#define NNLAB_COMM_H

#include <stddef.h>

#define NN_COMM_ERROR_LEN 512
#define NN_COMM_ABI 1
/* The module's file, looked for where the GPU module is (backend.c's folders). */
#define NN_COMM_MODULE_FILE "nnlab-mpi.so"
/* Its one exported function, which returns its table. */
#define NN_COMM_MODULE_SYMBOL "nn_comm_module_ops"

typedef struct nn_comm nn_comm;

/* A started sum (iallreduce_sum), finished by wait. -1: none. */
typedef int nn_comm_request;

typedef struct nn_comm_ops {
    int abi;                     /* NN_COMM_ABI: a module built for another is refused */
    const char *name;            /* "mpi" */

    /* Joins the job the launcher started: rank, size, local_rank,
     * local_size, host and transport filled in. Called once per process. */
    int (*open)(nn_comm *c);
    /* Leaves it (MPI_Finalize); safe after a failed open. */
    void (*close)(nn_comm *c);

    /* buf[0..n) summed over every rank, in place; returns when done. */
    int (*allreduce_sum)(nn_comm *c, float *buf, size_t n);
    /* The same, started: *req is finished by wait. buf must not be read
     * or written until then. test progresses the engine (MPI_Test), so
     * that a sum moves while the caller computes; *done set when finished. */
    int (*iallreduce_sum)(nn_comm *c, float *buf, size_t n, nn_comm_request *req);
    int (*test)(nn_comm *c, nn_comm_request req, int *done);
    int (*wait)(nn_comm *c, nn_comm_request req);
    /* Small sums of doubles (a step's loss, the validation's counts). */
    int (*allreduce_sum_f64)(nn_comm *c, double *buf, size_t n);
    /* bytes from root to every rank (the initial parameters, NCCL's id). */
    int (*broadcast)(nn_comm *c, void *buf, size_t bytes, int root);
    int (*barrier)(nn_comm *c);
    /* Ends every rank now with code (MPI_Abort): a rank that failed alone. */
    void (*abort)(nn_comm *c, int code);
} nn_comm_ops;

struct nn_comm {
    const nn_comm_ops *ops;
    int rank, size;              /* this process's rank of size */
    int local_rank, local_size;  /* among the ranks on this host (thread counts) */
    char host[64];               /* this host's name */
    char transport[64];          /* how the sums travel, in the engine's words:
                                    "shared memory", "tcp", ... */
    char library[128];           /* the engine and its version, e.g. "Open MPI v4.1.4" */
    char last_error[NN_COMM_ERROR_LEN];
    void *impl;                  /* the module's own state */
};

/* Whether this process was started by an MPI launcher (mpirun's, Slurm's
 * or PMIx's environment variables), so that it must join its ranks. */
int nn_comm_launched(void);

/* Loads the module (once per process) and opens c. 0, or -1 with the
 * reason in err: no module built ("nnlab was built without MPI: install
 * libopenmpi-dev and rebuild"), a library missing, an old module. */
int nn_comm_open(nn_comm *c, char *err, size_t err_len);

/* Whether the module loads (once per process), without opening it: 1, or
 * 0 with the reason in why (the same words as nn_comm_open's). */
int nn_comm_available(char *why, size_t why_len);

/* The module's entry, as dlsym finds it. */
typedef const struct nn_comm_ops *(*nn_comm_module_fn)(void);

#endif
