/* src/jobs/ranks.c - this process's place among data-parallel ranks
 * (nnlab/ranks.h): joined once, through the ranks' module (backends/comm),
 * left at exit. The engine's training steps reach the same communicator
 * through engine_comm (engine_internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "comm/comm.h"
#include "engine_internal.h"
#include "nnlab/ranks.h"

static pthread_mutex_t ranks_lock = PTHREAD_MUTEX_INITIALIZER;
static nn_comm comm;
static int joined;               /* 1: comm is open (size may still be 1) */

int nn_ranks_launched(void)
{
    return nn_comm_launched();
}

int nn_ranks_available(char *why, size_t why_len)
{
    return nn_comm_available(why, why_len);
}

/* At exit, after every job: MPI_Finalize on the main thread. A rank that
 * failed alone does not come here: it aborts them all (nn_ranks_abort). */
/* Whether name is an executable file in a folder of $PATH. */
static int on_path(const char *name)
{
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        size_t len = strcspn(p, ":");
        char file[4096];
        struct stat st;
        if (len > 0 && (size_t)snprintf(file, sizeof file, "%.*s/%s", (int)len, p, name) < sizeof file &&
            stat(file, &st) == 0 && S_ISREG(st.st_mode) && access(file, X_OK) == 0)
            return 1;
        p += len + (p[len] == ':');
    }
    return 0;
}

int nn_ranks_can_start(char *why, size_t why_len)
{
    if (!nn_ranks_available(why, why_len))
        return 0;
    if (!on_path("mpirun")) {
        snprintf(why, why_len, "mpirun is not on PATH (Debian: openmpi-bin)");
        return 0;
    }
    return 1;
}

static void leave(void)
{
    if (joined && comm.ops)
        comm.ops->close(&comm);
    joined = 0;
}

void nn_ranks_info_get(nn_ranks_info *info)
{
    memset(info, 0, sizeof *info);
    info->size = info->local_size = 1;
    pthread_mutex_lock(&ranks_lock);
    if (joined) {
        info->rank = comm.rank, info->size = comm.size;
        info->local_rank = comm.local_rank, info->local_size = comm.local_size;
        memcpy(info->host, comm.host, sizeof info->host);
        memcpy(info->transport, comm.transport, sizeof info->transport);
        memcpy(info->library, comm.library, sizeof info->library);
    }
    pthread_mutex_unlock(&ranks_lock);
}

int nn_ranks_join(nn_ranks_info *info, char *err, size_t err_len)
{
    int rc = 0;
    pthread_mutex_lock(&ranks_lock);
    if (!joined && nn_comm_launched()) {
        rc = nn_comm_open(&comm, err, err_len);
        if (rc == 0) {
            joined = 1;
            atexit(leave);
        }
    }
    pthread_mutex_unlock(&ranks_lock);
    if (info)
        nn_ranks_info_get(info);
    return rc;
}

int nn_ranks_barrier(char *err, size_t err_len)
{
    nn_comm *c = engine_comm();
    if (c && c->ops->barrier(c) != 0)
        return nn_errorf(err, err_len, "%s", c->last_error);
    return 0;
}

void nn_ranks_abort(int code)
{
    nn_comm *c = engine_comm();
    if (c)
        c->ops->abort(c, code);
}

nn_comm *engine_comm(void)
{
    pthread_mutex_lock(&ranks_lock);
    nn_comm *c = joined && comm.size > 1 ? &comm : NULL;
    pthread_mutex_unlock(&ranks_lock);
    return c;
}
