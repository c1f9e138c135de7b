/* backends/backend.h - the one table of operations every backend implements.
 *
 * The engine (src/) never touches numbers itself: it owns buffers obtained from
 * a backend and calls these operations on them. cpu-ref (backends/cpu_ref.c) is
 * plain loops and the oracle every other backend is tested against; cpu
 * (backends/cpu_blas.c) is the OpenBLAS fast path; the GPU backend is a module.
 *
 * Conventions, shared by every backend:
 *  - float32, NCHW, contiguous. Pointers are backend memory (host memory for the
 *    CPU backends), obtained with ops->alloc.
 *  - Every operation returns 0 on success, or -1 with a message in
 *    b->last_error. Nothing here prints, exits or allocates during a step.
 *  - Parameter gradients are overwritten, not accumulated: in a sequential
 *    network each parameter is used exactly once per step, so "zero_grad" is
 *    implicit and costs nothing.
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

/* Max pooling geometry: no padding, floor mode (PyTorch's defaults).
 * maxpool1d is h = 1, k_h = 1; "max over the length axis" is k_w = w_in. */
typedef struct nn_pool_geom {
    int n, c;
    int h_in, w_in, h_out, w_out;
    int k_h, k_w;
    int stride_h, stride_w;
} nn_pool_geom;

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
    int threads;                 /* CPU threads; 0 = all cores */
} nn_backend_config;

typedef struct nn_backend nn_backend;

typedef struct nn_backend_ops {
    const char *name;            /* "cpu-ref", "cpu", "gpu" */
    const char *summary;         /* one line for `nnlab devices` */
    int host_memory;             /* buffers are plain host memory: the engine may
                                    gather a batch straight into them */

    /* 0 when the backend can be opened here; otherwise -1 and the reason. */
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

    /* Bytes of scratch the convolution needs for this geometry (the engine
     * allocates the largest once per job and passes it to every call). */
    size_t (*conv2d_workspace)(nn_backend *b, const nn_conv_geom *g);
    int (*conv2d_forward)(nn_backend *b, const nn_conv_geom *g,
                          const float *x, const float *w, const float *bias,
                          float *y, void *ws);
    /* dx skipped when NULL (first layer) */
    int (*conv2d_backward)(nn_backend *b, const nn_conv_geom *g,
                           const float *x, const float *w, const float *dy,
                           float *dx, float *dw, float *dbias, void *ws);

    int (*maxpool2d_forward)(nn_backend *b, const nn_pool_geom *g,
                             const float *x, float *y);
    /* Routes dy to the first position (row-major within the window) whose x
     * equals y, as PyTorch does; dx is fully overwritten. */
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
} nn_backend_ops;

struct nn_backend {
    const nn_backend_ops *ops;
    void *impl;                  /* the backend's own state */
    char last_error[NN_BACKEND_ERROR_LEN];
};

/* The backends compiled into the program, NULL-terminated. */
extern const nn_backend_ops nn_backend_cpu_ref;
extern const nn_backend_ops nn_backend_cpu;
extern const nn_backend_ops *const nn_builtin_backends[];

/* Finds a backend by name; NULL when unknown. */
const nn_backend_ops *nn_backend_find(const char *name);

/* Opens ops into b (b->ops set, b->last_error cleared). On failure returns -1
 * with the reason in b->last_error. */
int nn_backend_open(nn_backend *b, const nn_backend_ops *ops, const nn_backend_config *cfg);
void nn_backend_close(nn_backend *b);

/* Formats into b->last_error and returns -1: the one way backends report. */
int nn_backend_fail(nn_backend *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
