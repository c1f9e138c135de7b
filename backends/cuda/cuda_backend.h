/* backends/cuda/cuda_backend.h - what the GPU module's files share: the
 * backend's state, the checks that turn a CUDA, cuBLAS or cuDNN status into a
 * message in b->last_error, and the launch accounting.
 *
 *   cuda_module.cu   probe, open/close, memory and copies, graphs, timing,
 *                    counters, the op table and the module's two exports
 *   cuda_dense.cu    linear (cuBLAS) and convolution (cuDNN, one plan per shape)
 *   cuda_conv_algo.cu which algorithm each convolution runs: timed by cuDNN,
 *                    kept per geometry for the process and in a file
 *   cuda_kernels.cu  our own kernels: activations, dropout, losses,
 *                    optimisers, bias add, batch gather
 *   cuda_reduce.cu   the bias gradients (conv and linear), our own reductions
 *   cuda_pool.cu     max pooling
 *   cuda_merge.cu    the graph's: add, mul, slice, accumulate
 *   cuda_tab.cu      batch norm (ghost batches), GLU, sparsemax
 *
 * CUDA C compiled by nvcc (as C++; no other C++), or by the host C++
 * compiler for the emulated GPU (NN_CUDA_EMULATION, below). Every
 * operation runs on the backend's one stream, in call order; nothing waits for
 * the device except download, synchronize, host_wait and timing_collect(wait).
 * Every symbol is hidden except the two exports (-fvisibility=hidden). */
#ifndef NNLAB_CUDA_BACKEND_H
#define NNLAB_CUDA_BACKEND_H

#include <stddef.h>
#include <stdint.h>

/* ---- CUDA, or its emulation --------------------------------------------------
 * nvcc builds nnlab-cuda.so against the toolkit. With NN_CUDA_EMULATION the
 * same files compile with the host C++ compiler into nnlab-cuda-emu.so, which
 * runs the kernels on the CPU and stands in for cuBLAS and cuDNN (emu/, and
 * docs/gpu-backend.md "The emulated GPU"): the GPU code is tested where
 * there is no GPU. Each kernel launch goes through NN_LAUNCH so that it
 * means the same in both. */
#ifdef NN_CUDA_EMULATION
#include "emu/cuda_emu.h"
#define NN_LAUNCH(kernel, grid, block, shared_bytes, stream, ...)                        \
    nn_emu_launch(kernel, #kernel, grid, block, shared_bytes, stream, __VA_ARGS__)
#define NN_GPU_SUMMARY "emulated CUDA on the CPU, for tests (module " NN_GPU_EMU_MODULE_FILE \
    "): the GPU code with cuBLAS and cuDNN stand-ins; not a GPU"
#else
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#define NN_LAUNCH(kernel, grid, block, shared_bytes, stream, ...)                        \
    kernel<<<(grid), (block), (shared_bytes), (stream)>>>(__VA_ARGS__)
#define NN_GPU_SUMMARY "CUDA: cuBLAS, cuDNN and own kernels (module " NN_GPU_MODULE_FILE ")"
#endif

extern "C" {
#include "backend.h"
}

#define GPU_THREADS 256              /* threads per block of the elementwise kernels */
#define GPU_MAX_BLOCKS 4096          /* beyond this, grid-stride loops */
#define GPU_RED_BLOCKS 1024          /* blocks of the loss reductions (one partial each) */
#define GPU_PLANS 64                 /* convolution geometries remembered */
#define GPU_PLANS_SPARE 8            /* never pinned by a recording: room for eager calls */
#define GPU_ALGO_CANDIDATES 8        /* cuDNN's algorithms kept per direction, ranked */
#define GPU_PINNED 16                /* page-locked buffers tracked */
#define GPU_TIMING_SLOTS 256         /* steps whose timing events may be in flight */
#define GPU_BLAS_WORKSPACE ((size_t)32 << 20)     /* cuBLAS's, set so that graphs can record it */
#define GPU_CONV_WORKSPACE_CAP ((size_t)256 << 20) /* the most one convolution may ask for */
#define GPU_CONV_CHOICES 512         /* algorithm choices remembered (geometry x direction) */
#define GPU_BIAS_PARTIALS 65536      /* floats of the conv bias gradient's partial sums */
#define GPU_BIAS_SLICES 64           /* the most slices one channel's sum is cut into */

/* Every thread of a grid walks [0, n), a grid's width at a time: a kernel
 * stays right whatever grid it is launched with. */
#define GRID_STRIDE(i, n)                                                              \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);            \
         i += (size_t)gridDim.x * blockDim.x)

/* Blocks for n elements, GPU_THREADS each, at most `cap`. */
static inline unsigned blocks_for(size_t n, unsigned cap)
{
    size_t blocks = (n + GPU_THREADS - 1) / GPU_THREADS;
    if (blocks < 1)
        blocks = 1;
    return blocks > cap ? cap : (unsigned)blocks;
}

/* The three directions of a convolution, each with its own algorithm. */
enum gpu_conv_dir_kind { GPU_CONV_FWD, GPU_CONV_BWD_DATA, GPU_CONV_BWD_FILTER, GPU_CONV_DIRS };

/* One of cuDNN's algorithms for a direction, as it will run. */
typedef struct gpu_conv_algo {
    int algo;                        /* a cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t */
    cudnnMathType_t math;            /* set on the descriptor before it runs */
    size_t ws;                       /* workspace it needs */
    int deterministic;               /* cuDNN says the same inputs give the same bits */
} gpu_conv_algo;

/* A direction's candidates, ranked (cuDNN's heuristic order, deterministic
 * and FMA math first; only deterministic ones with the switch), and the one
 * chosen: the first call outside a recording takes the choice remembered
 * for the geometry (this process or the cache file), else times every
 * candidate (cudnnFind*AlgorithmEx) and runs the fastest; one that cannot
 * run falls back to the others in rank order (PyTorch's try-all). */
typedef struct gpu_conv_dir {
    gpu_conv_algo cand[GPU_ALGO_CANDIDATES];
    int n;
    int chosen;                      /* index into cand; -1 until one has run */
    float ms;                        /* its time as measured when chosen; < 0: not timed */
    int trials;                      /* algorithms timed in this process; 0: remembered */
} gpu_conv_dir;

/* One remembered choice: a geometry's direction under one set of switches. */
typedef struct gpu_conv_choice {
    nn_conv_geom g;
    int dir, tf32, deterministic;    /* the key, with g */
    int algo, math, algo_deterministic;
    float ms;
    int trials;                      /* timed in this process (0: read from the file) */
    int ran;                         /* chosen by a plan of this process: conv_algorithms lists it */
} gpu_conv_choice;

/* One convolution geometry: its cuDNN descriptors and ranked algorithms,
 * made once (cudnnGet*Algorithm_v7's heuristics), never while recording. */
typedef struct gpu_conv_plan {
    int used;
    int pinned;                      /* a recording uses it: not evicted until graph_drop */
    unsigned long long last_use;     /* for eviction when the table is full */
    nn_conv_geom g;
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    gpu_conv_dir dir[GPU_CONV_DIRS];
    size_t ws;                       /* the largest workspace of every candidate: any may run */
} gpu_conv_plan;

/* Faults a test can ask for with NNLAB_GPU_INJECT (a comma-separated list of
 * these names), read when the backend opens: the fallbacks for the GPU's
 * first run, exercised on purpose. */
enum gpu_inject {
    GPU_INJECT_CAPTURE_STRICT = 1 << 0,  /* "capture-strict": strict recordings fail */
    GPU_INJECT_CAPTURE = 1 << 1,         /* "capture": every recording fails */
    GPU_INJECT_ALGO_FIRST = 1 << 2,      /* "algo-first": each direction's first candidate fails */
    GPU_INJECT_ALGO_ALL = 1 << 3         /* "algo-all": every candidate fails */
};

/* A page-locked host buffer and the event after the last upload from it. */
typedef struct gpu_pinned {
    char *p;
    size_t bytes;
    cudaEvent_t read;
    int pending;                     /* an upload was issued since the last wait */
} gpu_pinned;

/* The step values (backend.h set_step) as recorded kernels read them. */
typedef struct gpu_step_values {
    unsigned long long dropout_base;
    long long opt_t;
} gpu_step_values;

/* The arguments of the kernel that writes the step values, laid out as a
 * kernel node's parameters want them (cudaKernelNodeParams.kernelParams
 * points at params, and params at dst and v). */
typedef struct gpu_step_node_args {
    gpu_step_values *dst;
    gpu_step_values v;
    void *params[2];
} gpu_step_node_args;

/* The timing events of one step (see timing_mark in backend.h). */
typedef struct gpu_timing_slot {
    cudaEvent_t ev[NN_TIMING_MARKS];
    unsigned marks;                  /* bit m: ev[m] recorded */
} gpu_timing_slot;

typedef struct gpu_state {
    int device;                      /* the GPU: a rank's local rank modulo those visible */

    /* Data-parallel ranks (cuda_ranks.cu): joined by ranks_open, left at close. */
    int ranks_joined, rank, ranks;
    void *nccl_comm;                 /* ncclComm_t (a real GPU) */
    cudaStream_t sum_stream;         /* the sums allreduce_start starts (a real GPU) */
    cudaEvent_t sum_after, sum_done; /* the work a started sum waits for; the sums' end */
    int sums_started;                /* since the last allreduce_finish */
    nn_host_allreduce_fn host_allreduce;     /* the emulated GPU's stand-in's sum */
    void *host_ctx;

    int tf32;
    int deterministic;               /* nn_backend_config.deterministic */
    unsigned inject;                 /* enum gpu_inject bits (NNLAB_GPU_INJECT) */
    cudaStream_t stream;             /* non-blocking: graphs record only such streams */
    cublasHandle_t blas;
    cudnnHandle_t dnn;
    void *blas_ws;                   /* (GPU_BLAS_WORKSPACE) */

    /* Deterministic loss reductions: each block writes a partial, the last
     * block to finish sums them in block order and adds to stats. */
    double *partials;                /* (GPU_RED_BLOCKS, 2) */
    unsigned int *blocks_done;       /* (1), back to 0 after each reduction */

    /* A failure a kernel found (a label out of range): claimed on the device,
     * described in mapped host memory, reported after the next wait. */
    int *fault_claim;                /* (1) device */
    volatile int *fault_host;        /* (4) mapped: set, sample, value, limit */
    int *fault_dev;                  /* fault_host as the device sees it */

    /* Step graphs. The recording's first node (step_node) writes the values
     * of the step set last into step_dev, where the recorded kernels that
     * depend on the step read them; each launch first sets that node's
     * arguments. set_step is refused while recording, so that step holds
     * the values recorded calls keep their offsets from. */
    int capturing;
    nn_step_values step;             /* set last (set_step) */
    gpu_step_values *step_dev;       /* (1) device */
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaGraphNode_t step_node;       /* a node of graph */

    /* Counters: live, and what the recording holds while recording. */
    nn_backend_counters live, recorded;
    nn_backend_counters *count;      /* &live, or &recorded while recording */

    gpu_conv_plan plans[GPU_PLANS];
    unsigned long long plan_clock;
    int plans_pinned;                /* plans a recording uses (at most GPU_PLANS - GPU_PLANS_SPARE) */
    size_t ws_limit;                 /* largest workspace conv2d_workspace reported */

    /* The algorithm choices (cuda_conv_algo.cu): those of the cache file whose
     * key is this GPU's, then each made here; written back at close when one
     * was added. */
    gpu_conv_choice *choices;        /* (GPU_CONV_CHOICES) host */
    int n_choices;
    int choices_added;
    char *conv_cache_path;           /* NULL: no file */

    float *bias_partials;            /* (GPU_BIAS_PARTIALS) the conv bias gradient's slices */

    gpu_pinned pinned[GPU_PINNED];

    /* Timing: a ring of the steps whose events are in flight. When it is full
     * a new step goes untimed (dropping) rather than make the host wait. */
    gpu_timing_slot slots[GPU_TIMING_SLOTS];
    int slots_made;                  /* events created */
    long t_head, t_tail;             /* steps started, steps collected */
    int t_dropping;                  /* the step started last is not timed */

    /* The calibration's clock (clock_start, clock_stop): two events, made
     * at the first clock_start. */
    cudaEvent_t clock_ev[2];
    int clock_made;
} gpu_state;

static inline gpu_state *gpu_of(nn_backend *b)
{
    return (gpu_state *)b->impl;
}

/* ---- reporting (cuda_module.cu) --------------------------------------------- */

/* Formats into b->last_error; returns -1. The module's own nn_backend_fail:
 * the module links nothing of the program. */
int gpu_fail(nn_backend *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* 0 when the status is success; otherwise -1 with
 * "op: fn failed: NAME: description (while doing)". */
int gpu_cuda(nn_backend *b, cudaError_t e, const char *op, const char *fn,
             const char *doing, ...) __attribute__((format(printf, 5, 6)));
int gpu_blas(nn_backend *b, cublasStatus_t st, const char *op, const char *fn,
             const char *doing, ...) __attribute__((format(printf, 5, 6)));
int gpu_dnn(nn_backend *b, cudnnStatus_t st, const char *op, const char *fn,
            const char *doing, ...) __attribute__((format(printf, 5, 6)));

/* After an NN_LAUNCH: checks it (cudaGetLastError) and counts it. */
int gpu_launched(nn_backend *b, const char *op, const char *kernel);

/* A cuBLAS or cuDNN call that launched work. */
static inline void gpu_count_library(nn_backend *b)
{
    gpu_of(b)->count->library_calls++;
}

/* What a kernel whose result depends on the step reads. Run eagerly: NULL,
 * and the call's own counter and t. While recording: the device's step
 * values, and the call's offsets from the values set before the recording
 * (unsigned arithmetic: the offset wraps, the sum comes back right), so that
 * a replay computes its own step's counter and t. */
static inline const gpu_step_values *gpu_recorded_step(nn_backend *b)
{
    gpu_state *s = gpu_of(b);
    return s->capturing ? s->step_dev : NULL;
}

static inline unsigned long long gpu_counter_arg(nn_backend *b, uint64_t counter)
{
    gpu_state *s = gpu_of(b);
    return s->capturing ? (unsigned long long)(counter - s->step.dropout_base) : counter;
}

static inline long long gpu_t_arg(nn_backend *b, long t)
{
    gpu_state *s = gpu_of(b);
    return s->capturing ? (long long)t - (long long)s->step.opt_t : (long long)t;
}

/* ---- the operations ------------------------------------------------------------ */

/* gpu_<op> for every entry of backend_ops.def, with the signature of its slot
 * in nn_backend_ops (the table: cuda_module.cu's ops_init). They live in
 * cuda_module.cu (probe, open/close, memory, page-locked buffers, describe),
 * cuda_dense.cu (linear, convolution), cuda_kernels.cu (pooling,
 * activations, dropout, losses, optimisers, gather_rows), cuda_merge.cu
 * (add, mul, slice, accumulate), cuda_tab.cu (batch norm, GLU, sparsemax)
 * and cuda_graph.cu (set_step, step graphs, counters, timing). */
#define NN_GPU_PROTO_own(ret, op, params) ret gpu_##op params;
#define NN_GPU_PROTO_ref NN_GPU_PROTO_own
#define NN_GPU_PROTO_none NN_GPU_PROTO_own
#define NN_GPU_PROTO_cpu NN_GPU_PROTO_own
#define NN_GPU_PROTO_host(ret, op, params)      /* the fast CPU backend's only */
#define NN_OP(ret, op, params, cpu) NN_GPU_PROTO_##cpu(ret, op, params)
#include "backend_ops.def"

/* ---- cuda_dense.cu ------------------------------------------------------------- */

void gpu_plans_destroy(gpu_state *s);

/* ---- cuda_conv_algo.cu ------------------------------------------------------------ */

/* The remembered choices: the file read at open (a missing file or another
 * key: none), written at close when one was added. 0, or -1 with a message. */
int gpu_choices_open(nn_backend *b, const nn_backend_config *cfg);
int gpu_choices_close(nn_backend *b);
/* The remembered choice of p's direction d, as an index into its candidates
 * (-1: none, or one no longer offered); marks it as ran. */
int gpu_choice_find(gpu_state *s, gpu_conv_plan *p, int d);
/* Remembers candidate k of p's direction d as chosen. */
void gpu_choice_keep(gpu_state *s, const gpu_conv_plan *p, int d, int k);
/* Times p's direction d with cuDNN (cudnnFind*AlgorithmEx) on the call's
 * buffers; ms[k] the time of candidate k (< 0: not timed). The output
 * buffer is left undefined. Returns how many were timed, -1 if the find failed. */
int gpu_conv_time(gpu_state *s, gpu_conv_plan *p, int d, const void *x, const void *w,
                  const void *dy, void *out, void *ws, float ms[GPU_ALGO_CANDIDATES]);
const char *gpu_conv_algo_name(int d, int algo);
int gpu_conv_algorithms(nn_backend *b, nn_conv_choice *out, int cap);
/* Releases the pins of a recording (graph_drop, a recording that failed). */
void gpu_plans_unpin(gpu_state *s);

/* ---- cuda_kernels.cu ------------------------------------------------------------- */

int gpu_bias_rows(nn_backend *b, const char *op, int n, int out, const float *bias, float *y);
/* y (n, c, hw) += bias[c]: the convolution's bias */
int gpu_bias_planes(nn_backend *b, const char *op, int n, int c, size_t hw, const float *bias,
                    float *y);
int gpu_bias_grad(nn_backend *b, const char *op, int n, int out, const float *dy, float *db);
/* db[c] = sum over samples and positions of dy (n, c, hw): the conv bias
 * gradient, our own reduction (never cudnnConvolutionBackwardBias). */
int gpu_conv_bias_grad(nn_backend *b, const char *op, int n, int c, size_t hw, const float *dy,
                       float *db);
/* Launches the kernel that writes the values set last into step_dev: the
 * first node of a recording (graph_begin). */
int gpu_write_step_values(nn_backend *b);
/* The parameters of that kernel with the values set last, into p (which
 * points into args): each launch gives them to the recording's step node. */
void gpu_step_node_params(gpu_state *s, gpu_step_node_args *args, cudaKernelNodeParams *p);

#endif
