/* backends/backend.h - the one table of operations every backend implements.
 *
 * The engine (src/) never touches numbers itself: it owns buffers obtained from
 * a backend and calls these operations on them. cpu-ref (backends/cpu_ref.c) is
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
} nn_backend_config;

/* The op table's ABI. The GPU backend is a module built on its own and loaded
 * at run time (backends/cuda/, docs/gpu-backend.md), so the loader checks that
 * it was built against this header. Bump it on any change to nn_backend_ops,
 * struct nn_backend, nn_backend_config or a struct they pass. */
#define NN_BACKEND_ABI 6

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

    /* 0 when the backend can be opened here; otherwise the reason in why and
     * NN_PROBE_ABSENT when there is no such device here (no driver, no
     * device: a test skips), or NN_PROBE_UNUSABLE when there is one that
     * cannot be used (a driver too old for this build, no code for this
     * GPU, the driver failing: something to fix, which a test must not
     * skip). Callers that only ask "available?" test for 0. */
    int (*probe)(char *why, size_t why_len);
    int (*open)(nn_backend *b, const nn_backend_config *cfg);
    void (*close)(nn_backend *b);

    /* memory */
    int (*alloc)(nn_backend *b, size_t bytes, void **out);   /* 64-byte aligned, zeroed */
    void (*free)(nn_backend *b, void *p);
    int (*upload)(nn_backend *b, void *dst, const void *src_host, size_t bytes);
    int (*download)(nn_backend *b, void *dst_host, const void *src, size_t bytes);
    int (*zero)(nn_backend *b, void *p, size_t bytes);
    int (*synchronize)(nn_backend *b);

    /* y (n,out) = x (n,in) . w^T + bias */
    int (*linear_forward)(nn_backend *b, int n, int in, int out,
                          const float *x, const float *w, const float *bias, float *y);
    /* dx (n,in) = dy . w (skipped when dx is NULL); dw (out,in) = dy^T . x;
     * dbias (out) = sum over n of dy */
    int (*linear_backward)(nn_backend *b, int n, int in, int out,
                           const float *x, const float *w, const float *dy,
                           float *dx, float *dw, float *dbias);

    /* Bytes of scratch the convolution needs for this geometry, into *bytes
     * (the engine asks for every layer before the first step, allocates the
     * largest once per job and passes it to every call). -1 with the reason
     * when this backend cannot run the geometry (a bad geometry; on the GPU,
     * a tensor of 2^31 elements or more, cuDNN's limit), so that a job is
     * refused before its first step; *bytes is then 0. */
    int (*conv2d_workspace)(nn_backend *b, const nn_conv_geom *g, size_t *bytes);
    int (*conv2d_forward)(nn_backend *b, const nn_conv_geom *g,
                          const float *x, const float *w, const float *bias,
                          float *y, void *ws);
    /* dx skipped when NULL (first layer) */
    int (*conv2d_backward)(nn_backend *b, const nn_conv_geom *g,
                           const float *x, const float *w, const float *dy,
                           float *dx, float *dw, float *dbias, void *ws);

    /* y is the window's maximum; a window holding a NaN gives NaN (the bits
     * of its last NaN), as torch.nn.functional.max_pool2d. */
    int (*maxpool2d_forward)(nn_backend *b, const nn_pool_geom *g,
                             const float *x, float *y);
    /* Routes each window's dy to PyTorch's argmax of that window (aten's
     * max_pool2d kernels, CPU and CUDA: scanning row-major from -inf, a
     * position is taken when its x is greater than the best so far or is
     * NaN): the first of equal maxima, the last NaN of a window that has
     * one, the first position of a window of -inf. y is the forward's
     * output for this x (a backend may search for it rather than recompute
     * the maximum). Overlapping windows add up; dx is fully overwritten.
     * Every backend, the GPU's included (own kernels, not cuDNN), follows
     * this rule exactly. */
    int (*maxpool2d_backward)(nn_backend *b, const nn_pool_geom *g,
                              const float *x, const float *y, const float *dy,
                              float *dx);

    /* Backward reads x for relu and mish and y for tanh; the other may be NULL. */
    int (*act_forward)(nn_backend *b, enum nn_act act, size_t n,
                       const float *x, float *y);
    int (*act_backward)(nn_backend *b, enum nn_act act, size_t n,
                        const float *x, const float *y, const float *dy, float *dx);

    /* Inverted dropout, p in [0, 1]: element i is kept when
     * nn_dropout_keep(seed, counter, i, p) (backends/dropout_hash.h), and
     * scaled by 1.0f/(1.0f-p) computed in float (p = 1 gives zeros). The mask
     * is recomputed in backward rather than stored. */
    int (*dropout_forward)(nn_backend *b, size_t n, float p, uint64_t seed,
                           uint64_t counter, const float *x, float *y);
    int (*dropout_backward)(nn_backend *b, size_t n, float p, uint64_t seed,
                            uint64_t counter, const float *dy, float *dx);

    /* Softmax cross-entropy, mean over the n samples. stats[0] += loss,
     * stats[1] += number of samples whose argmax (first max) equals the label.
     * dlogits = (softmax - onehot)/n, skipped when NULL. */
    int (*softmax_xent)(nn_backend *b, int n, int classes, const float *logits,
                        const int32_t *labels, float *dlogits, float *stats);
    /* Mean squared error over n*width elements. stats[0] += loss;
     * dpred = 2 (pred - target) / (n*width), skipped when NULL. */
    int (*mse)(nn_backend *b, int n, int width, const float *pred,
               const float *target, float *dpred, float *stats);

    /* One step over a flat parameter arena of n floats; t counts the steps
     * from 1 (t < 1 is an error). */
    int (*sgd_step)(nn_backend *b, size_t n, float *param, const float *grad,
                    float *velocity, const nn_sgd_hyper *h, long t);
    int (*adam_step)(nn_backend *b, size_t n, float *param, const float *grad,
                     float *m, float *v, const nn_adam_hyper *h, long t);

    /* ---- The graph's operations (src/core/layers/merge.c, slice.c). The two
     * inputs a and c may be the same buffer (x + x); outputs overlap nothing. */
    /* y = scale * (a + c) over n values, computed as scale * (a + c) in float */
    int (*add_forward)(nn_backend *b, size_t n, float scale, const float *a, const float *c,
                       float *y);
    /* da = dc = scale * dy; either skipped when NULL */
    int (*add_backward)(nn_backend *b, size_t n, float scale, const float *dy, float *da,
                        float *dc);
    /* y = a * c over n values */
    int (*mul_forward)(nn_backend *b, size_t n, const float *a, const float *c, float *y);
    /* da = dy * c, dc = dy * a; either skipped when NULL */
    int (*mul_backward)(nn_backend *b, size_t n, const float *a, const float *c, const float *dy,
                        float *da, float *dc);
    /* y (rows, to - from) = columns [from, to) of x (rows, width);
     * 0 <= from < to <= width */
    int (*slice_forward)(nn_backend *b, int rows, int width, int from, int to, const float *x,
                         float *y);
    /* dx (rows, width) = dy in columns [from, to), 0 in the others (fully written) */
    int (*slice_backward)(nn_backend *b, int rows, int width, int from, int to, const float *dy,
                          float *dx);
    /* dst += src over n values: the gradient of a tensor read by several
     * layers, or of a parameter shared by several, summed */
    int (*accumulate)(nn_backend *b, size_t n, const float *src, float *dst);
    /* ---- TabNet's single-input layers (src/core/layers/norm.c, glu.c,
     * sparsemax.c). Flat inputs: rows of features. ---- */

    /* Batch norm (nn_bn_geom). Training: a chunk of 1 row is an error (as
     * PyTorch's "Expected more than 1 value per channel"); running is read
     * and updated. Eval (training 0): only read. */
    int (*batchnorm_forward)(nn_backend *b, const nn_bn_geom *g, int training, const float *x,
                             const float *gamma, const float *beta, float *running, float *y);
    /* The training forward's gradient: the chunks' statistics are recomputed
     * from x (no buffer kept between the calls). dx = gamma invstd (dy -
     * mean_chunk(dy) - xhat mean_chunk(dy xhat)); dgamma = sum dy xhat and
     * dbeta = sum dy over the whole batch. dx skipped when NULL. */
    int (*batchnorm_backward)(nn_backend *b, const nn_bn_geom *g, const float *x,
                              const float *gamma, const float *dy, float *dx, float *dgamma,
                              float *dbeta);
    /* GLU over rows of 2*half features: y[i][j] = x[i][j] sigmoid(x[i][half + j]),
     * y is (n, half). */
    int (*glu_forward)(nn_backend *b, int n, int half, const float *x, float *y);
    int (*glu_backward)(nn_backend *b, int n, int half, const float *x, const float *dy,
                        float *dx);
    /* Sparsemax of each row of d values (Martins & Astudillo 2016): the
     * Euclidean projection onto the simplex, y = max(x - tau, 0) with tau
     * from the sort-based rule (support: the k largest with 1 + k x_(k) >
     * their sum; tau = (that sum - 1) / k). */
    int (*sparsemax_forward)(nn_backend *b, int n, int d, const float *x, float *y);
    /* Its exact Jacobian-vector product from the output y (S = {j: y_j > 0}):
     * with v = dy + sparsity * dH/dy, dx_j = v_j - mean_S(v) on S, 0 off it.
     * H is the entropy term below, its gradient
     * -(log(y + 1e-15) + y / (y + 1e-15)) / n; sparsity 0: v = dy. */
    int (*sparsemax_backward)(nn_backend *b, int n, int d, const float *y, const float *dy,
                              float sparsity, float *dx);
    /* stats[0] += sparsity * mean over rows of -sum_j y log(y + 1e-15):
     * pytorch-tabnet's "- lambda_sparse * M_loss", added like a loss. */
    int (*sparsemax_entropy)(nn_backend *b, int n, int d, const float *y, float sparsity,
                             float *stats);

    /* ---- Optional operations: NULL where a backend has no use for them (the
     * CPU backends leave them all NULL). Callers check before calling. ---- */

    /* One line about the device for `nnlab devices` (name, memory, versions);
     * called only after probe succeeded. */
    int (*describe)(char *buf, size_t len);

    /* Page-locked host memory. An upload from it is asynchronous: before the
     * host rewrites such a buffer it calls host_wait, which returns once the
     * device has read every upload issued from that buffer. */
    int (*host_alloc)(nn_backend *b, size_t bytes, void **out);
    void (*host_free)(nn_backend *b, void *p);
    int (*host_wait)(nn_backend *b, const void *p);

    /* Gathers a batch from a data set resident in backend memory: row i of x
     * (n, x_width) is row idx[i] of xs (rows, x_width), or row first + i when
     * idx is NULL (idx is backend memory). ys/y do the same for rows of
     * y_width 4-byte words (int32 labels or float targets); skipped when ys is
     * NULL. No index is checked: the caller owns the data set. */
    int (*gather_rows)(nn_backend *b, int n, const int32_t *idx, long first,
                       const float *xs, size_t x_width, float *x,
                       const void *ys, size_t y_width, void *y);

    /* The values of the training step about to run (nn_step_values), given
     * before every training step, run eagerly or replayed, and never while
     * recording. Run eagerly, an operation uses its own arguments, so a
     * backend without graphs has no use for them: the CPU backends leave
     * set_step NULL. A backend with graphs keeps them where recorded
     * operations read them at replay (see below); t < 1 is an error. */
    int (*set_step)(nn_backend *b, const nn_step_values *v);

    /* Step graphs (CUDA Graphs); a backend that has them has set_step.
     * Between graph_begin and graph_end the calls of one training step are
     * recorded, not run. graph_launch runs the recording as the step whose
     * values set_step gave last: a recorded dropout call keeps its offset
     * (counter - dropout_base) and the optimiser its t - opt_t, both taken
     * from the values set before the recording, and adds them to the values
     * of the replayed step; buffers, shapes and every other argument stay as
     * recorded. Steps run eagerly in between need nothing more than their
     * set_step. graph_end fails (and keeps nothing) when a recorded call
     * cannot be recorded; graph_drop discards a recording.
     * relaxed 0 records strictly (CUDA's thread-local capture: a call that
     * is unsafe while recording, such as an allocation or a library
     * initialising itself, fails the recording); 1 in the relaxed mode,
     * where such calls run, unrecorded. Libraries initialise and choose
     * their algorithms on first use, which cannot be recorded: a step that
     * uses them runs once eagerly (with the same shapes) before it is
     * recorded (the GPU module refuses a convolution never run). */
    int (*graph_begin)(nn_backend *b, int relaxed);
    int (*graph_end)(nn_backend *b);
    int (*graph_launch)(nn_backend *b);
    void (*graph_drop)(nn_backend *b);

    /* Cumulative counters since open. */
    void (*counters)(nn_backend *b, nn_backend_counters *out);

    /* Phase timing on the device's own clock, without waiting for it. Mark 0
     * starts a step; mark m in 1..NN_TIMING_MARKS-1 ends the part of the step
     * since the previous mark of that step (marks may be skipped, not
     * reordered). timing_collect, called between steps, adds the time
     * (microseconds) of every interval ending at mark m into us[m] and counts
     * it in n[m], for the steps the device has finished (all of them when
     * wait is set), and returns how many steps it added, or -1. Marks made
     * while recording a graph are ignored. Timing never makes the host wait
     * in timing_mark: a backend keeps the marks of a bounded number of
     * uncollected steps (the GPU: 256) and leaves a step untimed when that
     * many are in flight (it is then in no n[m] and not counted). */
    int (*timing_mark)(nn_backend *b, int mark);
    int (*timing_collect)(nn_backend *b, int wait, double us[NN_TIMING_MARKS],
                          long n[NN_TIMING_MARKS]);

    /* The convolution algorithms chosen since open (NULL on the CPU
     * backends): up to cap of them into out, one per geometry and direction
     * that ran; returns how many there are (more than cap: the rest left
     * out), or -1 with last_error. Never inside a recording's capture. */
    int (*conv_algorithms)(nn_backend *b, nn_conv_choice *out, int cap);
} nn_backend_ops;

struct nn_backend {
    const nn_backend_ops *ops;
    void *impl;                  /* the backend's own state */
    char last_error[NN_BACKEND_ERROR_LEN];
    int host_threads;            /* the host threads its ops run on, once open: nn_backend_open
                                    sets 1 and a backend that runs ops on a pool of its own
                                    says how many (a caller may then run independent work
                                    side by side on as many backends of one thread each) */
};

/* The backends compiled into the program, NULL-terminated. */
extern const nn_backend_ops nn_backend_cpu_ref;
extern const nn_backend_ops nn_backend_cpu;
extern const nn_backend_ops *const nn_builtin_backends[];

/* Every backend name nnlab knows, in the order `nnlab devices` lists them:
 * the built-in ones, then "gpu" (the module). NULL-terminated. */
extern const char *const nn_backend_names[];

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

/* Opens ops into b (b->ops set, b->last_error cleared). On failure returns -1
 * with the reason in b->last_error. */
int nn_backend_open(nn_backend *b, const nn_backend_ops *ops, const nn_backend_config *cfg);
void nn_backend_close(nn_backend *b);

/* Formats into b->last_error and returns -1: the one way backends report. */
int nn_backend_fail(nn_backend *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
