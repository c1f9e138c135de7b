/* backends/cuda/cuda_ranks.cu - data-parallel ranks on GPUs (backend_ops.def's
 * ranks_id, ranks_open, allreduce_sum, allreduce_start, allreduce_finish,
 * ranks_close): one rank a GPU, the gradients summed by NCCL device memory
 * to device memory, on the module's stream after the backward, or bucket by
 * bucket on a stream of the sums' own while the backward goes on. docs/ranks.md says how the engine uses them.
 *
 * NCCL is loaded with dlopen at the first ranks_id, never linked: a job of
 * one rank, and nnlab on a machine without NCCL, never need it (as nnlab
 * itself links no CUDA library). NNLAB_NCCL_LIBRARY names another file to
 * load (a test points it at a missing one to see the refusal).
 *
 * The emulated GPU (NN_CUDA_EMULATION) has no NCCL: its device memory is
 * host memory, so its stand-in waits for the stream and sums through the
 * host_allreduce the engine gives ranks_open (MPI's sum); it loads
 * NNLAB_NCCL_LIBRARY only when that is set, so that the missing library's
 * refusal runs there too. */
#include "cuda_backend.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef NN_CUDA_EMULATION
#include <nccl.h>
static_assert(sizeof(ncclUniqueId) == NN_RANKS_ID_BYTES, "NN_RANKS_ID_BYTES is NCCL's id");
#endif

#define NCCL_FILE "libnccl.so.2"

static pthread_once_t nccl_once = PTHREAD_ONCE_INIT;
static char nccl_why[NN_BACKEND_ERROR_LEN];  /* empty: loaded (or not needed) */
static void *nccl_handle;

#ifndef NN_CUDA_EMULATION
/* The NCCL functions the module calls, as dlsym found them. */
static struct {
    ncclResult_t (*get_unique_id)(ncclUniqueId *id);
    ncclResult_t (*comm_init_rank)(ncclComm_t *comm, int size, ncclUniqueId id, int rank);
    ncclResult_t (*all_reduce)(const void *send, void *recv, size_t count, ncclDataType_t type,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
    ncclResult_t (*comm_destroy)(ncclComm_t comm);
    const char *(*error_string)(ncclResult_t r);
    ncclResult_t (*get_version)(int *version);
} nccl;

static int nccl_symbol(void **fn, const char *name, const char *file)
{
    *fn = dlsym(nccl_handle, name);
    if (*fn)
        return 0;
    snprintf(nccl_why, sizeof nccl_why, "%s has no %s: not an NCCL 2 library", file, name);
    return -1;
}

/* Stops at the first missing function; nccl_why names it. */
static void nccl_symbols(const char *file)
{
    (void)(nccl_symbol((void **)&nccl.get_unique_id, "ncclGetUniqueId", file) ||
           nccl_symbol((void **)&nccl.comm_init_rank, "ncclCommInitRank", file) ||
           nccl_symbol((void **)&nccl.all_reduce, "ncclAllReduce", file) ||
           nccl_symbol((void **)&nccl.comm_destroy, "ncclCommDestroy", file) ||
           nccl_symbol((void **)&nccl.error_string, "ncclGetErrorString", file) ||
           nccl_symbol((void **)&nccl.get_version, "ncclGetVersion", file));
}
#endif

/* Loads NCCL once per process; the reason it could not be into nccl_why. */
static void nccl_load(void)
{
    const char *named = getenv("NNLAB_NCCL_LIBRARY");
    const char *file = named && *named ? named : NCCL_FILE;
#ifdef NN_CUDA_EMULATION
    if (!(named && *named))
        return;                 /* the stand-in needs no library */
#endif
    nccl_handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!nccl_handle) {
        const char *e = dlerror();
        snprintf(nccl_why, sizeof nccl_why, "NCCL, which sums the GPUs' gradients, could not be "
                 "loaded: %s (install NCCL, e.g. Debian's libnccl2, or name its library in "
                 "NNLAB_NCCL_LIBRARY)", e ? e : file);
        return;
    }
#ifndef NN_CUDA_EMULATION
    nccl_symbols(file);
#endif
}

static int nccl_ready(nn_backend *b, const char *op)
{
    pthread_once(&nccl_once, nccl_load);
    return nccl_why[0] ? gpu_fail(b, "%s: %s", op, nccl_why) : 0;
}

#ifndef NN_CUDA_EMULATION
/* 0 on ncclSuccess; otherwise -1 with "op: fn failed: NCCL's words (doing)". */
static int nccl_check(nn_backend *b, ncclResult_t r, const char *op, const char *fn, const char *doing)
{
    if (r == ncclSuccess)
        return 0;
    return gpu_fail(b, "%s: %s failed: %s (%s)", op, fn, nccl.error_string(r), doing);
}
#endif

int gpu_ranks_id(nn_backend *b, unsigned char *id)
{
    if (nccl_ready(b, "ranks_id") != 0 || !id)
        return nccl_why[0] ? -1 : 0;
#ifdef NN_CUDA_EMULATION
    memset(id, 0, NN_RANKS_ID_BYTES);
    snprintf((char *)id, NN_RANKS_ID_BYTES, "emulated");
    return 0;
#else
    ncclUniqueId u;
    if (nccl_check(b, nccl.get_unique_id(&u), "ranks_id", "ncclGetUniqueId",
                   "making the communicator's id on rank 0"))
        return -1;
    memcpy(id, &u, NN_RANKS_ID_BYTES);
    return 0;
#endif
}

int gpu_ranks_open(nn_backend *b, const nn_ranks_config *cfg)
{
    gpu_state *s = gpu_of(b);
    if (nccl_ready(b, "ranks_open") != 0)
        return -1;
    if (s->ranks_joined)
        return gpu_fail(b, "ranks_open: already joined (rank %d of %d)", s->rank, s->ranks);
#ifdef NN_CUDA_EMULATION
    if (!cfg->host_allreduce)
        return gpu_fail(b, "ranks_open: the emulated GPU sums through the host, and no "
                        "host_allreduce was given");
    s->host_allreduce = cfg->host_allreduce;
    s->host_ctx = cfg->host_ctx;
#else
    ncclUniqueId u;
    ncclComm_t comm = NULL;
    char doing[96];
    memcpy(&u, cfg->id, NN_RANKS_ID_BYTES);
    snprintf(doing, sizeof doing, "rank %d of %d joining on GPU %d", cfg->rank, cfg->size, s->device);
    if (gpu_cuda(b, cudaSetDevice(s->device), "ranks_open", "cudaSetDevice", "selecting GPU %d",
                 s->device) ||
        nccl_check(b, nccl.comm_init_rank(&comm, cfg->size, u, cfg->rank), "ranks_open",
                   "ncclCommInitRank", doing))
        return -1;
    s->nccl_comm = comm;
    if (gpu_cuda(b, cudaStreamCreateWithFlags(&s->sum_stream, cudaStreamNonBlocking), "ranks_open",
                 "cudaStreamCreateWithFlags", "the stream the started sums run on") ||
        gpu_cuda(b, cudaEventCreateWithFlags(&s->sum_after, cudaEventDisableTiming), "ranks_open",
                 "cudaEventCreateWithFlags", "the event a started sum waits for") ||
        gpu_cuda(b, cudaEventCreateWithFlags(&s->sum_done, cudaEventDisableTiming), "ranks_open",
                 "cudaEventCreateWithFlags", "the event the sums end with"))
        return -1;
#endif
    s->rank = cfg->rank, s->ranks = cfg->size;
    s->ranks_joined = 1;
    return 0;
}

/* x[i] *= scale, or 0 when scale is 0 (a rank without samples adds zeros,
 * whatever its arena held): as the CPU ranks weigh their gradients. */
__global__ void ranks_scale_kernel(size_t n, float scale, float *__restrict__ x)
{
    GRID_STRIDE(i, n)
        x[i] = scale == 0.0f ? 0.0f : x[i] * scale;
}

/* The scale kernel in stream order (what both sums start with). */
static int scale_grads(nn_backend *b, gpu_state *s, size_t n, float *buf, float scale, const char *op)
{
    if (scale == 1.0f)
        return 0;
    NN_LAUNCH(ranks_scale_kernel, blocks_for(n, GPU_MAX_BLOCKS), GPU_THREADS, 0, s->stream, n, scale, buf);
    return gpu_launched(b, op, "ranks_scale_kernel");
}

int gpu_allreduce_sum(nn_backend *b, size_t n, float *buf, float scale)
{
    gpu_state *s = gpu_of(b);
    if (!s->ranks_joined)
        return gpu_fail(b, "allreduce_sum: ranks_open was not called");
    if (s->capturing)
        return gpu_fail(b, "allreduce_sum: not while recording a graph (the sum runs between replays)");
    if (n == 0)
        return 0;
    if (scale_grads(b, s, n, buf, scale, "allreduce_sum") != 0)
        return -1;
#ifdef NN_CUDA_EMULATION
    /* the stand-in: the device's work so far done, then the host's sum of
     * the arena (host memory here), on the calling thread, in call order */
    char err[NN_BACKEND_ERROR_LEN - 64];
    if (gpu_cuda(b, cudaStreamSynchronize(s->stream), "allreduce_sum", "cudaStreamSynchronize",
                 "finishing the gradients before the host sums them"))
        return -1;
    s->live.syncs++;
    if (s->host_allreduce(s->host_ctx, buf, n, err, sizeof err) != 0)
        return gpu_fail(b, "allreduce_sum: the emulated NCCL's sum through the host: %s", err);
#else
    if (nccl_check(b, nccl.all_reduce(buf, buf, n, ncclFloat32, ncclSum, (ncclComm_t)s->nccl_comm,
                                      s->stream),
                   "allreduce_sum", "ncclAllReduce", "summing the gradients over the ranks"))
        return -1;
#endif
    gpu_count_library(b);
    return 0;
}

int gpu_allreduce_start(nn_backend *b, size_t n, float *buf, float scale)
{
    gpu_state *s = gpu_of(b);
    if (!s->ranks_joined)
        return gpu_fail(b, "allreduce_start: ranks_open was not called");
    if (s->capturing)
        return gpu_fail(b, "allreduce_start: not while recording a graph");
    if (n == 0)
        return 0;
#ifdef NN_CUDA_EMULATION
    /* the stand-in cannot sum beside the device's work: it sums now, as allreduce_sum */
    return gpu_allreduce_sum(b, n, buf, scale);
#else
    if (scale_grads(b, s, n, buf, scale, "allreduce_start") != 0 ||
        gpu_cuda(b, cudaEventRecord(s->sum_after, s->stream), "allreduce_start", "cudaEventRecord",
                 "marking the gradients a bucket sums") ||
        gpu_cuda(b, cudaStreamWaitEvent(s->sum_stream, s->sum_after, 0), "allreduce_start",
                 "cudaStreamWaitEvent", "the sum waiting for its gradients") ||
        nccl_check(b, nccl.all_reduce(buf, buf, n, ncclFloat32, ncclSum, (ncclComm_t)s->nccl_comm,
                                      s->sum_stream),
                   "allreduce_start", "ncclAllReduce", "summing a bucket of gradients over the ranks"))
        return -1;
    s->sums_started++;
    gpu_count_library(b);
    return 0;
#endif
}

int gpu_allreduce_finish(nn_backend *b)
{
    gpu_state *s = gpu_of(b);
    if (!s->ranks_joined)
        return gpu_fail(b, "allreduce_finish: ranks_open was not called");
#ifndef NN_CUDA_EMULATION
    if (s->sums_started > 0 &&
        (gpu_cuda(b, cudaEventRecord(s->sum_done, s->sum_stream), "allreduce_finish", "cudaEventRecord",
                  "marking the sums' end") ||
         gpu_cuda(b, cudaStreamWaitEvent(s->stream, s->sum_done, 0), "allreduce_finish", "cudaStreamWaitEvent",
                  "the optimiser waiting for the sums")))
        return -1;
#endif
    s->sums_started = 0;
    return 0;
}

void gpu_ranks_close(nn_backend *b)
{
    gpu_state *s = gpu_of(b);
    if (!s || !s->ranks_joined)
        return;
#ifndef NN_CUDA_EMULATION
    if (s->nccl_comm) {
        cudaStreamSynchronize(s->stream);
        if (s->sum_stream)
            cudaStreamSynchronize(s->sum_stream);
        cudaGetLastError();
        nccl.comm_destroy((ncclComm_t)s->nccl_comm);
        s->nccl_comm = NULL;
    }
    if (s->sum_stream)
        cudaStreamDestroy(s->sum_stream);
    if (s->sum_after)
        cudaEventDestroy(s->sum_after);
    if (s->sum_done)
        cudaEventDestroy(s->sum_done);
    s->sum_stream = NULL;
    s->sum_after = s->sum_done = NULL;
#endif
    s->ranks_joined = 0;
}
