/* backends/comm/comm_load.c - whether a launcher started this process, and
 * the loader of the ranks' module nnlab-mpi.so (comm.h). nnlab links no MPI
 * library: the module is found where the GPU module is (backend.c's
 * nn_module_dirs) and opened with dlopen, once per process. */
#include "config.h"

#include "comm.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"

#ifndef NN_BUILD_COMM_DIR
#define NN_BUILD_COMM_DIR ""
#endif

/* A variable that holds a whole number above 1. */
static int env_above_one(const char *name)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return 0;
    long n = strtol(v, &end, 10);
    return *end == '\0' && n > 1;
}

static int env_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

/* mpirun (Open MPI's and MPICH's hydra), PMIx, Slurm's srun: each says how
 * many processes it started; one alone is a plain job. */
int nn_comm_launched(void)
{
    if (env_set("OMPI_COMM_WORLD_SIZE"))
        return env_above_one("OMPI_COMM_WORLD_SIZE");
    if (env_set("PMI_SIZE"))
        return env_above_one("PMI_SIZE");
    if (env_set("PMIX_RANK") && env_set("PMIX_SIZE"))
        return env_above_one("PMIX_SIZE");
    if (env_set("SLURM_PROCID") && env_set("SLURM_NTASKS"))
        return env_above_one("SLURM_NTASKS");
    return 0;
}

/* snprintf that may cut a long reason (a folder's name) short. */
static void say(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

static pthread_once_t comm_once = PTHREAD_ONCE_INIT;
static const nn_comm_ops *comm_ops;
static char comm_why[NN_COMM_ERROR_LEN];

/* Opens the module at path: 0 with comm_ops set, else -1 with comm_why. */
static int load_at(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);   /* MPI's own plugins need its symbols */
    if (!h) {
        const char *e = dlerror();
        say(comm_why, sizeof comm_why, "cannot load %s: %s (Debian: libopenmpi-dev and "
                 "openmpi-bin)", path, e ? e : "unknown error");
        return -1;
    }
    void *sym = dlsym(h, NN_COMM_MODULE_SYMBOL);
    if (!sym) {
        say(comm_why, sizeof comm_why, "%s is not an nnlab ranks module (no %s)", path,
                 NN_COMM_MODULE_SYMBOL);
        dlclose(h);
        return -1;
    }
    nn_comm_module_fn fn;
    memcpy(&fn, &sym, sizeof fn);    /* dlsym's object pointer to a function pointer */
    const nn_comm_ops *o = fn();
    if (!o || o->abi != NN_COMM_ABI) {
        say(comm_why, sizeof comm_why, "%s was built for ranks ABI %d, this nnlab needs %d: "
                 "rebuild or reinstall it", path, o ? o->abi : -1, NN_COMM_ABI);
        dlclose(h);
        return -1;
    }
    comm_ops = o;
    return 0;
}

static void load_module(void)
{
    char dirs[NN_MODULE_DIRS_MAX][NN_MODULE_DIR_LEN];
    int n = nn_module_dirs(NN_BUILD_COMM_DIR[0] ? NN_BUILD_COMM_DIR : NULL, dirs, NN_MODULE_DIRS_MAX);
    for (int i = 0; i < n; i++) {
        char path[NN_MODULE_DIR_LEN + 32];
        snprintf(path, sizeof path, "%.*s/%s", NN_MODULE_DIR_LEN - 1, dirs[i], NN_COMM_MODULE_FILE);
        if (access(path, F_OK) == 0)
            if (load_at(path) == 0 || comm_why[0])
                return;
    }
#ifdef NN_COMM_MODULE_BUILT
    say(comm_why, sizeof comm_why, "the ranks module %s is not in %s%s (NNLAB_MODULE_DIR "
             "names its folder)", NN_COMM_MODULE_FILE, n ? dirs[0] : "any folder",
             n > 1 ? " or the others looked in" : "");
#else
    say(comm_why, sizeof comm_why, "nnlab was built without MPI: install libopenmpi-dev and "
             "openmpi-bin, and rebuild");
#endif
}

int nn_comm_available(char *why, size_t why_len)
{
    pthread_once(&comm_once, load_module);
    if (!comm_ops && why && why_len)
        say(why, why_len, "%s", comm_why);
    return comm_ops != NULL;
}

int nn_comm_open(nn_comm *c, char *err, size_t err_len)
{
    memset(c, 0, sizeof *c);
    if (!nn_comm_available(err, err_len))
        return -1;
    c->ops = comm_ops;
    c->size = 1;
    if (comm_ops->open(c) != 0) {
        say(err, err_len, "joining the ranks: %s", c->last_error);
        comm_ops->close(c);
        c->ops = NULL;
        return -1;
    }
    return 0;
}
