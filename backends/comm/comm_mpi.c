/* backends/comm/comm_mpi.c - comm.h's table on MPI (Open MPI's libmpi, or
 * any MPI 3 library), built as the module nnlab-mpi.so that
 * backends/comm/comm_load.c opens. The only file of nnlab that links libmpi.
 *
 * Threads: the job runs on its own thread, while the process joined its
 * ranks (MPI_Init_thread) on whichever thread asked first and leaves them
 * at exit on the main thread. So calls come from more than one thread, one
 * at a time: MPI_THREAD_SERIALIZED is asked for, and a library that gives
 * less is refused. */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"

/* Requests in flight at once: one per bucket of a step's gradients. */
#define COMM_MAX_REQUESTS 256

typedef struct comm_mpi {
    MPI_Comm world;              /* a duplicate of MPI_COMM_WORLD: ours alone */
    MPI_Request req[COMM_MAX_REQUESTS];
    int initialised_here;        /* this module called MPI_Init_thread */
} comm_mpi;

static int fail(nn_comm *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(nn_comm *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->last_error, sizeof c->last_error, fmt, ap);
    va_end(ap);
    return -1;
}

/* An MPI call's failure in MPI's own words. */
static int mpi_fail(nn_comm *c, const char *op, int rc)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error %d", rc);
    return fail(c, "%s (rank %d of %d): %s", op, c->rank, c->size, text);
}

/* src into dst[len], cut when longer (a host's or library's name). */
static void copy_text(char *dst, size_t len, const char *src)
{
    size_t n = strlen(src);
    if (n >= len)
        n = len - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static comm_mpi *state_of(nn_comm *c)
{
    return (comm_mpi *)c->impl;
}

/* ---- joining -------------------------------------------------------------- */

/* The library's name and version, first line only ("Open MPI v4.1.4, ..."). */
static void read_library(nn_comm *c)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    if (MPI_Get_library_version(v, &len) != MPI_SUCCESS) {
        snprintf(c->library, sizeof c->library, "MPI");
        return;
    }
    v[strcspn(v, ",\n")] = '\0';
    copy_text(c->library, sizeof c->library, v);
}

/* How the sums travel, from Open MPI's choice of transports (its mca
 * settings, OMPI_MCA_btl / OMPI_MCA_pml in the environment mpirun passes on;
 * --mca btl tcp,self sets the former): "tcp" when shared memory is left
 * out, "shared memory" when every rank is on this host, else "network". */
static void read_transport(nn_comm *c)
{
    const char *btl = getenv("OMPI_MCA_btl");
    const char *pml = getenv("OMPI_MCA_pml");
    const char *word = c->local_size == c->size ? "shared memory" : "network";
    if (pml && strstr(pml, "ucx"))
        word = "ucx";
    else if (btl && *btl && btl[0] != '^' && !strstr(btl, "vader") && !strstr(btl, "sm"))
        word = strstr(btl, "tcp") ? "tcp" : btl;
    else if (btl && btl[0] == '^' && strstr(btl, "vader"))
        word = "tcp";
    copy_text(c->transport, sizeof c->transport, word);
}

static int local_ranks(nn_comm *c, comm_mpi *m)
{
    MPI_Comm local;
    int rc = MPI_Comm_split_type(m->world, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &local);
    if (rc != MPI_SUCCESS)
        return mpi_fail(c, "MPI_Comm_split_type", rc);
    if ((rc = MPI_Comm_rank(local, &c->local_rank)) != MPI_SUCCESS ||
        (rc = MPI_Comm_size(local, &c->local_size)) != MPI_SUCCESS)
        return mpi_fail(c, "MPI_Comm_rank (local)", rc);
    return MPI_Comm_free(&local) == MPI_SUCCESS ? 0 : fail(c, "MPI_Comm_free failed");
}

static int init_mpi(nn_comm *c, comm_mpi *m)
{
    int already = 0, provided = MPI_THREAD_SINGLE;
    MPI_Initialized(&already);
    if (!already) {
        int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
        if (rc != MPI_SUCCESS)
            return mpi_fail(c, "MPI_Init_thread", rc);
        m->initialised_here = 1;
    } else {
        MPI_Query_thread(&provided);
    }
    if (provided < MPI_THREAD_SERIALIZED)
        return fail(c, "MPI gives thread level %d, nnlab needs MPI_THREAD_SERIALIZED (%d): the job "
                    "runs on a thread of its own", provided, MPI_THREAD_SERIALIZED);
    /* a failure returns its code (and the job names its rank) rather than
     * aborting inside MPI; a dead peer still ends the job through mpirun */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &m->world);
    if (rc != MPI_SUCCESS)
        return mpi_fail(c, "MPI_Comm_dup", rc);
    MPI_Comm_set_errhandler(m->world, MPI_ERRORS_RETURN);
    return 0;
}

static int comm_open(nn_comm *c)
{
    comm_mpi *m = calloc(1, sizeof *m);
    int len = 0;
    if (!m)
        return fail(c, "out of memory for the MPI state");
    c->impl = m;
    for (int i = 0; i < COMM_MAX_REQUESTS; i++)
        m->req[i] = MPI_REQUEST_NULL;
    if (init_mpi(c, m) != 0)
        return -1;
    int rc = MPI_Comm_rank(m->world, &c->rank);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_size(m->world, &c->size);
    if (rc != MPI_SUCCESS)
        return mpi_fail(c, "MPI_Comm_rank", rc);
    if (local_ranks(c, m) != 0)
        return -1;
    char host[MPI_MAX_PROCESSOR_NAME] = "";
    if (MPI_Get_processor_name(host, &len) != MPI_SUCCESS)
        snprintf(host, sizeof host, "?");
    copy_text(c->host, sizeof c->host, host);
    read_library(c);
    read_transport(c);
    return 0;
}

static void comm_close(nn_comm *c)
{
    comm_mpi *m = state_of(c);
    int finalized = 0;
    if (!m)
        return;
    MPI_Finalized(&finalized);
    if (!finalized && m->world != MPI_COMM_NULL && m->world != 0)
        MPI_Comm_free(&m->world);
    if (!finalized && m->initialised_here)
        MPI_Finalize();
    free(m);
    c->impl = NULL;
}

/* ---- the sums ---------------------------------------------------------------- */

/* MPI counts are ints: a larger buffer goes in pieces. */
#define COMM_CHUNK ((size_t)1 << 30)

static int comm_allreduce_sum(nn_comm *c, float *buf, size_t n)
{
    comm_mpi *m = state_of(c);
    for (size_t at = 0; at < n; at += COMM_CHUNK) {
        int count = (int)(n - at < COMM_CHUNK ? n - at : COMM_CHUNK);
        int rc = MPI_Allreduce(MPI_IN_PLACE, buf + at, count, MPI_FLOAT, MPI_SUM, m->world);
        if (rc != MPI_SUCCESS)
            return mpi_fail(c, "MPI_Allreduce", rc);
    }
    return 0;
}

static int comm_iallreduce_sum(nn_comm *c, float *buf, size_t n, nn_comm_request *req)
{
    comm_mpi *m = state_of(c);
    *req = -1;
    if (n > COMM_CHUNK)
        return fail(c, "MPI_Iallreduce: a bucket of %zu floats is over %zu", n, COMM_CHUNK);
    int slot = 0;
    while (slot < COMM_MAX_REQUESTS && m->req[slot] != MPI_REQUEST_NULL)
        slot++;
    if (slot == COMM_MAX_REQUESTS)
        return fail(c, "MPI_Iallreduce: more than %d sums in flight", COMM_MAX_REQUESTS);
    int rc = MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, m->world, &m->req[slot]);
    if (rc != MPI_SUCCESS)
        return mpi_fail(c, "MPI_Iallreduce", rc);
    *req = slot;
    return 0;
}

static int comm_test(nn_comm *c, nn_comm_request req, int *done)
{
    comm_mpi *m = state_of(c);
    *done = 1;
    if (req < 0 || req >= COMM_MAX_REQUESTS)
        return 0;
    int rc = MPI_Test(&m->req[req], done, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(c, "MPI_Test", rc);
}

static int comm_wait(nn_comm *c, nn_comm_request req)
{
    comm_mpi *m = state_of(c);
    if (req < 0 || req >= COMM_MAX_REQUESTS)
        return 0;
    int rc = MPI_Wait(&m->req[req], MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(c, "MPI_Wait", rc);
}

static int comm_allreduce_sum_f64(nn_comm *c, double *buf, size_t n)
{
    int rc = MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_DOUBLE, MPI_SUM, state_of(c)->world);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(c, "MPI_Allreduce (doubles)", rc);
}

static int comm_broadcast(nn_comm *c, void *buf, size_t bytes, int root)
{
    comm_mpi *m = state_of(c);
    for (size_t at = 0; at < bytes; at += COMM_CHUNK) {
        int count = (int)(bytes - at < COMM_CHUNK ? bytes - at : COMM_CHUNK);
        int rc = MPI_Bcast((char *)buf + at, count, MPI_BYTE, root, m->world);
        if (rc != MPI_SUCCESS)
            return mpi_fail(c, "MPI_Bcast", rc);
    }
    return 0;
}

static int comm_barrier(nn_comm *c)
{
    int rc = MPI_Barrier(state_of(c)->world);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(c, "MPI_Barrier", rc);
}

static void comm_abort(nn_comm *c, int code)
{
    MPI_Abort(MPI_COMM_WORLD, code);
    (void)c;
}

static const nn_comm_ops mpi_ops = {
    .abi = NN_COMM_ABI,
    .name = "mpi",
    .open = comm_open,
    .close = comm_close,
    .allreduce_sum = comm_allreduce_sum,
    .iallreduce_sum = comm_iallreduce_sum,
    .test = comm_test,
    .wait = comm_wait,
    .allreduce_sum_f64 = comm_allreduce_sum_f64,
    .broadcast = comm_broadcast,
    .barrier = comm_barrier,
    .abort = comm_abort,
};

/* The module's one entry (comm.h NN_COMM_MODULE_SYMBOL). */
const nn_comm_ops *nn_comm_module_ops(void);
const nn_comm_ops *nn_comm_module_ops(void)
{
    return &mpi_ops;
}
