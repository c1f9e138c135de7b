/* backends/backend.h - the one table of operations every backend implements
 * (nn_backend_ops). The operations themselves, with each one's contract, are
 * listed once in backend_ops.def, from which this table, every backend's
 * prototypes and every backend's table entries are made.
 *
 * The engine (src/) never touches numbers itself: it owns buffers obtained from
 * a backend and calls these operations on them. cpu-ref (backends/cpu_ref/cpu_ref.c) is
 * plain loops and the oracle every other backend is tested against; cpu
 * (backends/cpu_*.c, its table in cpu_blas.c) is the OpenBLAS fast path; the GPU
 * backend is a module.
 *
 * Conventions, shared by every backend:
 *  - float32, NCHW, contiguous. Pointers are backend memory (host memory for the
 *    CPU backends), obtained with ops->alloc.
 *  - Every operation returns 0 on success, or -1 with a message in
 *    b->last_error. Nothing here prints, exits or allocates during a step.
 *  - A device backend runs operations asynchronously, in call order: a
 *    failure found while the device runs them (an illegal address, a label
 *    out of range) is reported by the next download or synchronize.
 *  - Parameter gradients are overwritten, not accumulated, so "zero_grad" is
 *    implicit and costs nothing. Where a graph network uses a tensor or a
 *    shared parameter twice, the network writes the second gradient to
 *    scratch and adds it with `accumulate`.
 *  - Layouts follow PyTorch: linear w is (out, in), conv w is
 *    (c_out, c_in, k_h, k_w), each followed by its bias (out) or (c_out).
 *  - Loss operations *add* to a stats accumulator in backend memory, so that a
 *    GPU need not synchronise every step to report a running loss.
 *  - Buffers passed to one call never overlap (no in-place operations), so
 *    implementations may use restrict.
 *  - Optional pointers: a NULL bias in forward means no bias; NULL dx, dw or
 *    dbias in backward means that gradient is not wanted.
 */
#ifndef NNLAB_BACKEND_H
#define NNLAB_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#define NN_BACKEND_ERROR_LEN 512

enum nn_act { NN_ACT_RELU, NN_ACT_TANH, NN_ACT_MISH };

/* 2-D convolution geometry. conv1d is the same with h = 1, k_h = 1, pad_h = 0. */
typedef struct nn_conv_geom {
    int n;                       /* batch */
    int c_in, h_in, w_in;
    int c_out, h_out, w_out;     /* h_out = (h_in + 2 pad_h - k_h) / stride_h + 1 */
    int k_h, k_w;
    int stride_h, stride_w;
    int pad_h, pad_w;            /* zero padding */
} nn_conv_geom;

/* A convolution algorithm a device backend chose for one geometry and
 * direction (conv_algorithms), for Explain: which, whether it repeats bit
 * for bit, and its time as measured when it was chosen. */
enum nn_conv_direction { NN_CONV_FORWARD, NN_CONV_BACKWARD_DATA, NN_CONV_BACKWARD_FILTER };
typedef struct nn_conv_choice {
    nn_conv_geom g;
    enum nn_conv_direction direction;
    char algorithm[48];          /* the library's name, e.g. "BWD_FILTER_ALGO_0" */
    int deterministic;           /* 1: the same inputs give the same bits */
    double time_us;              /* measured when chosen (this run or the cached one) */
    int trials;                  /* algorithms timed in this run; 0: read from the cache file */
} nn_conv_choice;

/* Max pooling geometry: no padding, floor mode (PyTorch's defaults).
 * maxpool1d is h = 1, k_h = 1; "max over the length axis" is k_w = w_in. */
typedef struct nn_pool_geom {
    int n, c;
    int h_in, w_in, h_out, w_out;
    int k_h, k_w;
    int stride_h, stride_w;
} nn_pool_geom;

/* Batch norm over the features of a flat (n, c) batch, with ghost batches
 * (pytorch-tabnet's GBN): in training the batch is cut as torch.chunk(x,
 * ceil(n / virtual_batch)) cuts it (nn_ghost_chunk, backends/ghost_batch.h:
 * chunks of ceil(n / that) rows, the last one shorter, possibly fewer
 * chunks), virtual_batch 0 (or >= n) being one chunk of the whole batch. Each
 * chunk is normalised with its own mean and biased variance, as
 * BatchNorm1d in training: y = (x - mean) / sqrt(var + eps) * gamma + beta;
 * running (2c: mean, then var) is updated after each chunk, in order:
 * running = (1 - momentum) running + momentum stat, the variance's stat
 * unbiased (m/(m-1) of the biased one). In eval, y uses the running ones. */
typedef struct nn_bn_geom {
    int n, c;                    /* batch, features */
    int virtual_batch;           /* 0: the whole batch in one chunk */
    float momentum, eps;
} nn_bn_geom;

/* torch.optim.SGD semantics: g = grad + wd*p; v = g on the first step (t = 1,
 * no dampening: PyTorch creates the buffer as a copy of g), later
 * v = momentum*v + (1-dampening)*g; g = nesterov ? g + momentum*v : v; p -= lr*g.
 * Without momentum there is no v. */
typedef struct nn_sgd_hyper {
    float lr, momentum, dampening, weight_decay;
    int nesterov;
} nn_sgd_hyper;

/* torch.optim.Adam semantics (L2 weight decay added to the gradient, not AdamW):
 * m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
 * p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps), t counting from 1. */
typedef struct nn_adam_hyper {
    float lr, beta1, beta2, eps, weight_decay;
} nn_adam_hyper;

typedef struct nn_backend_config {
    int threads;                 /* CPU threads; 0 = the cores free now (cpu_threads.c) */
    int tf32;                    /* GPU: allow TF32 tensor-core math for float32
                                    products (off: plain FP32, as the CPU) */
    int deterministic;           /* GPU: deterministic convolution algorithms only, so
                                    that a run repeats bit for bit (PyTorch's
                                    cudnn.deterministic); off: the fastest measured */
    const char *conv_cache_path; /* GPU: the file that keeps the convolution
                                    algorithms chosen (read at open, written at close
                                    when new ones were chosen); NULL: none */
    int local_rank;              /* GPU: this process's rank among the data-parallel
                                    ranks on its host (0 for a plain job): the GPU it
                                    uses is local_rank modulo the GPUs it sees, one
                                    rank a GPU (docs/ranks.md) */
} nn_backend_config;

/* Data-parallel ranks on a device (ranks_id, ranks_open, allreduce_sum):
 * the bytes of a communicator's id, which rank 0 makes and the caller hands
 * to every rank (NCCL's ncclUniqueId is 128 bytes). */
#define NN_RANKS_ID_BYTES 128

/* The host's sum over the ranks of buf[0..n) in place (the MPI comm's),
 * which only the emulated GPU's stand-in for NCCL calls: its device memory
 * is host memory. 0, or -1 with the reason in err. */
typedef int (*nn_host_allreduce_fn)(void *ctx, float *buf, size_t n, char *err, size_t err_len);

typedef struct nn_ranks_config {
    int rank, size;                       /* this process's rank of size */
    unsigned char id[NN_RANKS_ID_BYTES];  /* rank 0's ranks_id, the same on every rank */
    nn_host_allreduce_fn host_allreduce;  /* the emulation's sum; a real GPU ignores it */
    void *host_ctx;
} nn_ranks_config;

/* The op table's ABI. The GPU backend is a module built on its own and loaded
 * at run time (backends/cuda/, docs/gpu-backend.md), so the loader checks that
 * it was built against this header. Bump the first number on any change to
 * nn_backend_ops, struct nn_backend, nn_backend_config or a struct they pass;
 * an operation added to or removed from backend_ops.def changes the second
 * by itself (NN_BACKEND_OP_COUNT, below). */
#define NN_BACKEND_ABI (8 * 1000 + NN_BACKEND_OP_COUNT)

/* The values a training step's operations take from the step itself, given
 * to set_step before the step runs. The caller picks them (src/core/net.c):
 * in that step every dropout call passes counter = dropout_base + an offset of
 * its own (one per layer and direction), and the optimiser passes t = opt_t. */
typedef struct nn_step_values {
    uint64_t dropout_base;       /* the step's dropout counters start here */
    long opt_t;                  /* the optimiser's t of the step, from 1 */
} nn_step_values;

/* What a device backend has done since it was opened, counted by itself.
 * The engine reads it around steps for the per-step accounting. */
typedef struct nn_backend_counters {
    uint64_t kernels;            /* own kernel launches and memsets */
    uint64_t library_calls;      /* cuBLAS and cuDNN calls: each launches one kernel or more */
    uint64_t graph_launches;     /* step graphs launched (each one launch) */
    uint64_t graph_nodes;        /* kernels and library calls replayed inside those graphs */
    uint64_t h2d_copies, h2d_bytes;
    uint64_t d2h_copies, d2h_bytes;
    uint64_t syncs;              /* times the host waited for the device */
} nn_backend_counters;

/* What an optional fused op returns when it does not fuse the shape it was
 * given and touched nothing: the caller runs the plain ops instead. */
#define NN_OP_DECLINED 1

/* What a probe that fails returns (nn_backend_ops.probe). */
#define NN_PROBE_ABSENT (-1)
#define NN_PROBE_UNUSABLE (-2)

/* Marks per step for timing_mark (backends record the time at each mark). */
#define NN_TIMING_MARKS 8

typedef struct nn_backend nn_backend;

typedef struct nn_backend_ops {
    const char *name;            /* "cpu-ref", "cpu", "gpu" */
    const char *summary;         /* one line for `nnlab devices` */
    int host_memory;             /* buffers are plain host memory: the engine may
                                    gather a batch straight into them */

    /* The operations, in backend_ops.def's order: one function pointer per
     * entry, each entry's contract written beside it there. */
#define NN_OP(ret, op, params, cpu) ret(*op) params;
#include "backend_ops.def"
} nn_backend_ops;

/* How many operations backend_ops.def lists (a part of NN_BACKEND_ABI). */
enum {
#define NN_OP(ret, op, params, cpu) NN_BACKEND_OP_##op,
#include "backend_ops.def"
    NN_BACKEND_OP_COUNT
};

struct nn_backend {
    const nn_backend_ops *ops;
    void *impl;                  /* the backend's own state */
    char last_error[NN_BACKEND_ERROR_LEN];
    int host_threads;            /* the host threads its ops run on, once open: nn_backend_open
                                    sets 1 and a backend that runs ops on a pool of its own
                                    says how many (a caller may then run independent work
                                    side by side on as many backends of one thread each) */
    int threads_now;             /* the host threads taking part now, which a backend may
                                    revise while it runs (the fast CPU backend does, as
                                    other programs come and go: cpu_thread_choice.c); set
                                    and read on the thread that issues the ops; 0: none */
    char threads_why[128];       /* why that many, in words ("" when not said) */
};

/* The backends compiled into the program, NULL-terminated. */
extern const nn_backend_ops nn_backend_cpu_ref;
extern const nn_backend_ops nn_backend_cpu;
extern const nn_backend_ops *const nn_builtin_backends[];

/* Every backend name nnlab knows, in the order `nnlab devices` lists them:
 * the built-in ones, then "gpu" (the module). NULL-terminated. */
extern const char *const nn_backend_names[];

/* OpenBLAS's own buffer: every thread that runs an sgemm maps one of these
 * (blas_memory_alloc). Debian's 0.3.21 x86_64 build: 128 MiB, measured with
 * `strace -f -e trace=mmap nnlab train --preset tabnet-regression --steps 2`:
 * one mmap(NULL, 134217728, PROT_READ|PROT_WRITE) by the job's thread and
 * one by each pool worker. When that mapping fails it falls back to
 * malloc(134221824) (the "134 MB mallocs" a hung job showed) and retries
 * both forever: 19,799 rounds in 8 s under ulimit -v 700000, a thread no
 * signal ends. It is address space, mostly never touched: it counts against
 * an address-space limit (ulimit -v), not against the memory available. */
#define NN_OPENBLAS_BUFFER_BYTES 134217728.0

/* Address space the library under a backend maps for itself for each host
 * thread that runs its ops, beside the buffers the backend is asked for:
 * NN_OPENBLAS_BUFFER_BYTES for the fast CPU backend, 0 for the others
 * (cpu-ref's plain loops, a GPU's libraries map device memory). */
double nn_backend_library_bytes(const nn_backend_ops *ops);

/* Finds a backend by name; NULL when unknown or, for "gpu", when the module
 * cannot be loaded. "gpu" loads the module on first use (see
 * nn_backend_find_why). */
const nn_backend_ops *nn_backend_find(const char *name);

/* The same, with the reason in why when it returns NULL: an unknown name, or
 * why the GPU module is not there: not built, not found (the folders
 * searched), a library it needs is missing (the loader's message), or a
 * module of another ABI. Whether a device is present is the table's probe.
 * The module is looked for in $NNLAB_MODULE_DIR when set, else in the
 * installed folder, else in the build tree. Thread-safe; loaded once. */
const nn_backend_ops *nn_backend_find_why(const char *name, char *why, size_t why_len);
/* 1 when ops is the emulated GPU module (NNLAB_GPU_EMULATION): a device
 * whose kernels run on this machine's CPU cores. */
int nn_backend_emulated(const nn_backend_ops *ops);

/* The file name of the GPU module, and the symbols it exports: an int equal
 * to NN_BACKEND_ABI, and a function returning its table. */
#define NN_GPU_MODULE_FILE "nnlab-cuda.so"
#define NN_GPU_MODULE_ABI_SYMBOL "nn_backend_module_abi"
#define NN_GPU_MODULE_OPS_SYMBOL "nn_backend_module_ops"
typedef const nn_backend_ops *(*nn_backend_module_fn)(void);

/* The folders a run-time module (the GPU's, the ranks' nnlab-mpi.so) is
 * looked for in, in order, into dirs[0..max): each folder of
 * $NNLAB_MODULE_DIR (':' between folders) when it is set, the only places
 * then; else the installed $(pkglibdir), then build_dir, a folder of the
 * build tree, only for a program that runs from inside the build tree.
 * Returns the count. */
#define NN_MODULE_DIRS_MAX 8
#define NN_MODULE_DIR_LEN 1024
int nn_module_dirs(const char *build_dir, char dirs[][NN_MODULE_DIR_LEN], int max);

/* Opens ops into b (b->ops set, b->last_error cleared). On failure returns -1
 * with the reason in b->last_error. */
int nn_backend_open(nn_backend *b, const nn_backend_ops *ops, const nn_backend_config *cfg);
void nn_backend_close(nn_backend *b);

/* Formats into b->last_error and returns -1: the one way backends report. */
int nn_backend_fail(nn_backend *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
