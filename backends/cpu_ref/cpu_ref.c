/* backends/cpu_ref/cpu_ref.c - the reference backend: plain loops, one thread.
 *
 * This file is the oracle every other backend is tested against, so each
 * operation is written the way its definition reads, its forward and backward
 * next to each other, with sums that matter (dot products, losses, gradient
 * reductions) accumulated in double. The elementwise operations, dropout,
 * losses and optimiser steps are also what the OpenBLAS backend calls
 * (cpu_ref.h), so those loops are kept branch-light and use restrict pointers
 * to let the compiler vectorise them.
 *
 * The windowed operations (convolution, max pooling) are in cpu_ref_conv.c.
 *
 * Every buffer passed to one call must be distinct (restrict): in-place calls
 * such as act_forward(x, x) are not supported.
 */
#include "geom_check.h"
#include "cpu_ref.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dropout_hash.h"
#include "mish.h"
#include "util.h"

/* ------------------------------------------------------------------------ */
/* Memory: host memory, 64-byte aligned and zeroed.                          */

int nn_ref_alloc(nn_backend *b, size_t bytes, void **out)
{
    /* A zero-byte request still gets a real pointer: NULL means "skipped" to
     * several operations (dx, dlogits), so it must never stand for a buffer. */
    void *p = nn_alloc_aligned(bytes ? bytes : 1);
    if (!p) {
        *out = NULL;
        return nn_backend_fail(b, "out of host memory allocating %zu bytes", bytes);
    }
    *out = p;
    return 0;
}

void nn_ref_free(nn_backend *b, void *p)
{
    (void)b;
    nn_free_aligned(p);
}

int nn_ref_upload(nn_backend *b, void *dst, const void *src, size_t bytes)
{
    (void)b;
    memcpy(dst, src, bytes);
    return 0;
}

int nn_ref_download(nn_backend *b, void *dst, const void *src, size_t bytes)
{
    (void)b;
    memcpy(dst, src, bytes);
    return 0;
}

int nn_ref_zero(nn_backend *b, void *p, size_t bytes)
{
    (void)b;
    memset(p, 0, bytes);
    return 0;
}

int nn_ref_synchronize(nn_backend *b)
{
    (void)b;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Linear: y = x . w^T + bias.                                               */

int nn_ref_linear_forward(nn_backend *b, int n, int in, int out,
                          const float *restrict x,     /* (n, in) */
                          const float *restrict w,     /* (out, in) */
                          const float *restrict bias,  /* (out) or NULL */
                          float *restrict y)           /* (n, out) */
{
    if (n <= 0 || in <= 0 || out <= 0)
        return nn_backend_fail(b, "linear_forward: bad shape n=%d in=%d out=%d", n, in, out);
    for (size_t i = 0; i < (size_t)n; i++) {
        const float *xi = x + i * (size_t)in;
        for (size_t o = 0; o < (size_t)out; o++) {
            const float *wo = w + o * (size_t)in;
            double acc = bias ? bias[o] : 0.0;
            for (size_t k = 0; k < (size_t)in; k++)
                acc += (double)xi[k] * wo[k];
            y[i * (size_t)out + o] = (float)acc;
        }
    }
    return 0;
}

int nn_ref_linear_backward(nn_backend *b, int n, int in, int out,
                           const float *restrict x,    /* (n, in) */
                           const float *restrict w,    /* (out, in) */
                           const float *restrict dy,   /* (n, out) */
                           float *restrict dx,         /* (n, in) or NULL */
                           float *restrict dw,         /* (out, in) or NULL */
                           float *restrict dbias)      /* (out) or NULL */
{
    if (n <= 0 || in <= 0 || out <= 0)
        return nn_backend_fail(b, "linear_backward: bad shape n=%d in=%d out=%d", n, in, out);
    const size_t N = (size_t)n, IN = (size_t)in, OUT = (size_t)out;

    /* dx[i][k] = sum_o dy[i][o] w[o][k] */
    if (dx)
        for (size_t i = 0; i < N; i++)
            for (size_t k = 0; k < IN; k++) {
                double acc = 0.0;
                for (size_t o = 0; o < OUT; o++)
                    acc += (double)dy[i * OUT + o] * w[o * IN + k];
                dx[i * IN + k] = (float)acc;
            }

    /* dw[o][k] = sum_i dy[i][o] x[i][k] */
    if (dw)
        for (size_t o = 0; o < OUT; o++)
            for (size_t k = 0; k < IN; k++) {
                double acc = 0.0;
                for (size_t i = 0; i < N; i++)
                    acc += (double)dy[i * OUT + o] * x[i * IN + k];
                dw[o * IN + k] = (float)acc;
            }

    /* dbias[o] = sum_i dy[i][o] */
    if (dbias)
        for (size_t o = 0; o < OUT; o++) {
            double acc = 0.0;
            for (size_t i = 0; i < N; i++)
                acc += dy[i * OUT + o];
            dbias[o] = (float)acc;
        }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Activations.                                                              */

/* mish's math is backends/mish.h's reference, which the GPU kernels share. */

int nn_ref_act_forward(nn_backend *b, enum nn_act act, size_t n,
                       const float *restrict x, float *restrict y)
{
    switch (act) {
    case NN_ACT_RELU:
        /* written so that a NaN passes through, as torch.relu does */
        for (size_t i = 0; i < n; i++)
            y[i] = x[i] < 0.0f ? 0.0f : x[i];
        return 0;
    case NN_ACT_TANH:
        for (size_t i = 0; i < n; i++)
            y[i] = tanhf(x[i]);
        return 0;
    case NN_ACT_MISH:
        for (size_t i = 0; i < n; i++)
            y[i] = nn_mish_ref(x[i]);
        return 0;
    }
    return nn_backend_fail(b, "act_forward: unknown activation %d", (int)act);
}

int nn_ref_act_backward(nn_backend *b, enum nn_act act, size_t n,
                        const float *restrict x, const float *restrict y,
                        const float *restrict dy, float *restrict dx)
{
    switch (act) {
    case NN_ACT_RELU:
        /* 0 at x == 0, as PyTorch; dy is loaded unconditionally so that the
         * select vectorises */
        for (size_t i = 0; i < n; i++) {
            float d = dy[i];
            dx[i] = x[i] > 0.0f ? d : 0.0f;
        }
        return 0;
    case NN_ACT_TANH:
        /* tanh' = 1 - tanh^2, from the saved output */
        for (size_t i = 0; i < n; i++)
            dx[i] = dy[i] * (1.0f - y[i] * y[i]);
        return 0;
    case NN_ACT_MISH:
        for (size_t i = 0; i < n; i++)
            dx[i] = dy[i] * nn_mish_grad_ref(x[i]);
        return 0;
    }
    return nn_backend_fail(b, "act_backward: unknown activation %d", (int)act);
}

/* ------------------------------------------------------------------------ */
/* Inverted dropout, the mask a pure function of (seed, counter, i).         */

/* p == 1 drops everything (PyTorch returns zeros); anything outside [0, 1] is
 * an error. The scale is computed in float, the same way on every backend. */
static int dropout_check(nn_backend *b, const char *op, float p)
{
    if (!(p >= 0.0f && p <= 1.0f))
        return nn_backend_fail(b, "%s: probability %g outside [0, 1]", op, (double)p);
    return 0;
}

int nn_ref_dropout_forward(nn_backend *b, size_t n, float p, uint64_t seed,
                           uint64_t counter, const float *restrict x, float *restrict y)
{
    if (dropout_check(b, "dropout_forward", p) != 0)
        return -1;
    if (p == 0.0f) {
        memcpy(y, x, n * sizeof *y);
        return 0;
    }
    const float scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
    for (size_t i = 0; i < n; i++) {
        float v = x[i] * scale;
        y[i] = nn_dropout_keep(seed, counter, i, p) ? v : 0.0f;
    }
    return 0;
}

int nn_ref_dropout_backward(nn_backend *b, size_t n, float p, uint64_t seed,
                            uint64_t counter, const float *restrict dy, float *restrict dx)
{
    if (dropout_check(b, "dropout_backward", p) != 0)
        return -1;
    if (p == 0.0f) {
        memcpy(dx, dy, n * sizeof *dx);
        return 0;
    }
    const float scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
    for (size_t i = 0; i < n; i++) {
        float v = dy[i] * scale;
        dx[i] = nn_dropout_keep(seed, counter, i, p) ? v : 0.0f;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Losses: each adds to stats (backend memory) and writes its gradient.     */

int nn_ref_softmax_xent(nn_backend *b, int n, int classes,
                        const float *restrict logits,   /* (n, classes) */
                        const int32_t *restrict labels, /* (n) */
                        float *restrict dlogits,        /* (n, classes) or NULL */
                        float *restrict stats)          /* [0] loss, [1] correct */
{
    if (n <= 0 || classes <= 0)
        return nn_backend_fail(b, "softmax_xent: bad shape n=%d classes=%d", n, classes);
    /* Check every label before writing anything, so a failed call leaves
     * dlogits and stats as they were. */
    for (int i = 0; i < n; i++)
        if (labels[i] < 0 || labels[i] >= classes)
            return nn_backend_fail(b, "softmax_xent: label %ld of sample %d is outside [0, %d)",
                                   (long)labels[i], i, classes);

    const size_t C = (size_t)classes;
    const double inv_n = 1.0 / n;
    double loss = 0.0;
    long correct = 0;
    for (size_t i = 0; i < (size_t)n; i++) {
        const float *l = logits + i * C;
        const size_t label = (size_t)labels[i];
        /* the max, for stability, and its first position, for accuracy */
        size_t arg = 0;
        for (size_t c = 1; c < C; c++)
            if (l[c] > l[arg])
                arg = c;
        const double mx = l[arg];
        double sum = 0.0;
        for (size_t c = 0; c < C; c++)
            sum += exp((double)l[c] - mx);
        /* -log softmax[label] = log(sum e^(l - max)) - (l[label] - max) */
        loss += log(sum) - ((double)l[label] - mx);
        correct += arg == label;
        if (dlogits) {
            float *d = dlogits + i * C;
            const double inv_sum = 1.0 / sum;
            for (size_t c = 0; c < C; c++)
                d[c] = (float)((exp((double)l[c] - mx) * inv_sum - (c == label)) * inv_n);
        }
    }
    stats[0] += (float)(loss * inv_n);
    stats[1] += (float)correct;
    return 0;
}

int nn_ref_mse(nn_backend *b, int n, int width,
               const float *restrict pred,     /* (n, width) */
               const float *restrict target,   /* (n, width) */
               float *restrict dpred,          /* (n, width) or NULL */
               float *restrict stats)          /* [0] loss */
{
    if (n <= 0 || width <= 0)
        return nn_backend_fail(b, "mse: bad shape n=%d width=%d", n, width);
    const size_t m = (size_t)n * (size_t)width;
    const double inv_m = 1.0 / (double)m;
    double sum = 0.0;
    for (size_t i = 0; i < m; i++) {
        double d = (double)pred[i] - target[i];
        sum += d * d;
    }
    if (dpred) {
        const float scale = (float)(2.0 * inv_m);
        for (size_t i = 0; i < m; i++)
            dpred[i] = scale * (pred[i] - target[i]);
    }
    stats[0] += (float)(sum * inv_m);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Optimisers over the flat parameter arena.                                 */

/* torch.optim.SGD. Without momentum the velocity is neither read nor written
 * (it may be NULL) and dampening plays no part, as in PyTorch. With momentum
 * the first step (t = 1) stores g itself, undamped, without reading the old
 * velocity: PyTorch creates its buffer then as a copy of g. */
int nn_ref_sgd_step(nn_backend *b, size_t n, float *restrict param,
                    const float *restrict grad, float *restrict velocity,
                    const nn_sgd_hyper *h, long t)
{
    if (t < 1)
        return nn_backend_fail(b, "sgd_step: step %ld, steps count from 1", t);
    const float lr = h->lr, wd = h->weight_decay, mom = h->momentum;
    const float keep = 1.0f - h->dampening;

    if (mom == 0.0f) {
        for (size_t i = 0; i < n; i++)
            param[i] -= lr * (grad[i] + wd * param[i]);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        float g = grad[i] + wd * param[i];
        float v = t == 1 ? g : mom * velocity[i] + keep * g;
        velocity[i] = v;
        param[i] -= lr * (h->nesterov ? g + mom * v : v);
    }
    return 0;
}

/* torch.optim.Adam (L2 weight decay into the gradient, not AdamW), in the
 * form of PyTorch's implementation: step = lr / (1 - b1^t),
 * denom = sqrt(v) / sqrt(1 - b2^t) + eps, p -= step * m / denom.
 * The bias corrections are computed once per call in double. */
int nn_ref_adam_step(nn_backend *b, size_t n, float *restrict param,
                     const float *restrict grad, float *restrict m, float *restrict v,
                     const nn_adam_hyper *h, long t)
{
    if (t < 1)
        return nn_backend_fail(b, "adam_step: step %ld, steps count from 1", t);
    const float b1 = h->beta1, b2 = h->beta2, eps = h->eps, wd = h->weight_decay;
    const double bc1 = 1.0 - pow(h->beta1, (double)t);
    const double bc2 = 1.0 - pow(h->beta2, (double)t);
    const float step = (float)(h->lr / bc1);
    const float inv_sqrt_bc2 = (float)(1.0 / sqrt(bc2));

    for (size_t i = 0; i < n; i++) {
        float g = grad[i] + wd * param[i];
        float mi = b1 * m[i] + (1.0f - b1) * g;
        float vi = b2 * v[i] + (1.0f - b2) * g * g;
        m[i] = mi;
        v[i] = vi;
        param[i] -= step * mi / (sqrtf(vi) * inv_sqrt_bc2 + eps);
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The table.                                                                */

int nn_ref_probe(char *why, size_t why_len)
{
    if (why && why_len)
        why[0] = '\0';
    return 0;   /* plain C: always available */
}

int nn_ref_open(nn_backend *b, const nn_backend_config *cfg)
{
    (void)cfg;  /* one thread, whatever cfg->threads says */
    b->impl = NULL;
    return 0;
}

void nn_ref_close(nn_backend *b)
{
    b->impl = NULL;
}

const nn_backend_ops nn_backend_cpu_ref = {
    .name = "cpu-ref",
    .summary = "reference: plain C loops, one thread (the test oracle)",
    .host_memory = 1,
    /* nn_ref_<op> in every slot but the optional (`none`) ones */
#define NN_REF_SLOT_own(op) .op = nn_ref_##op,
#define NN_REF_SLOT_ref NN_REF_SLOT_own
#define NN_REF_SLOT_none(op)
#define NN_REF_SLOT_cpu(op)
#define NN_REF_SLOT_host(op)
#define NN_OP(ret, op, params, cpu) NN_REF_SLOT_##cpu(op)
#include "backend_ops.def"
};
