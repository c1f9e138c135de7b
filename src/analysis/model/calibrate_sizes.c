/* src/analysis/model/calibrate_sizes.c - how fast operations run at their own
 * sizes: the rate curves of linear layers and convolutions (GFLOP/s by
 * FLOPs per call, the fixed cost of a call taken off) and the cost per
 * element of every other operation, measured through the op table. See
 * calibrate.h; the main figures and the orchestration are calibrate.c. */
#define _POSIX_C_SOURCE 200809L
#include "calibrate_internal.h"

#include <stdint.h>
#include <string.h>

#include "util.h"

/* ---- rate curves --------------------------------------------------------------- */

/* Linear layers of the presets, by FLOPs: conv1d-regression's first layer at
 * batch 1, LeNet's classifier at batch 4, the MNIST MLPs at batches 1, 4 and
 * 64, LeNet-5's first linear at 64; 1024^3 (the peak) is the last point. */
static const int linear_shapes[][3] = {       /* n, in, out */
    { 1, 84, 16 }, { 4, 400, 10 }, { 1, 784, 128 }, { 4, 784, 128 },
    { 64, 400, 120 }, { 64, 784, 128 }, { 64, 1000, 1000 },
};
#define N_LINEAR_SHAPES (int)(sizeof linear_shapes / sizeof linear_shapes[0])
/* LeNet's first convolution (3 -> 6 channels, 5x5, 32x32 images): few
 * output channels make its product the narrowest, the rate of a first
 * convolutional layer */
static const int conv_batches[] = { 1, 4, 16, 64, 256 };
#define N_CONV_BATCHES (int)(sizeof conv_batches / sizeof conv_batches[0])
/* A call slower than NN_CAL_SLOW_CALL_S ends its curve there (a slow
 * device, the reference loops, prices larger calls at the largest rate
 * measured). */
#define SLOW_CALL_S NN_CAL_SLOW_CALL_S

typedef nn_cal_call_fn call_fn;

/* Seconds of one call in a stream of back-to-back calls (a GPU overlaps
 * issuing one with running the last), best of five batches; the
 * batches' spread widens *widest. */
static int time_call(nn_backend *b, const bench_ctx *c, call_fn call, const void *arg, double *out_s,
                     double *widest)
{
    /* Five batches, not three: each curve is the widest of 8-17 figures, and on
     * an idle 2-core VM one batch in three of a 10-20 us call was hit by a
     * neighbour often enough that the median of three varied 17-31% in 3 of 4
     * calibrations (contradictory); the median of five kept 6 of 6 within 5%,
     * and two spinning processes still push it past 40%. */
    static const nn_cal_timing timing = { 0, 5, 0 };
    double spread = 0;
    if (nn_cal_time(b, c, call, arg, &timing, out_s, &spread) != 0)
        return -1;
    if (spread > *widest)
        *widest = spread;
    return 0;
}

/* Buffers of the curves, carved from the context's: every operand of a call
 * in its own region (the op table forbids overlap). x and y hold 16 Mi
 * floats, w 1 Mi. */
#define REGION (4u << 20)            /* floats */

static int call_linear_fwd(nn_backend *b, const bench_ctx *c, const void *arg)
{
    const int *s = arg;
    return b->ops->linear_forward(b, s[0], s[1], s[2], c->x, c->w, c->y + 3 * REGION, c->y);
}

static int call_linear_bwd(nn_backend *b, const bench_ctx *c, const void *arg)
{
    const int *s = arg;
    return b->ops->linear_backward(b, s[0], s[1], s[2], c->x, c->w, c->y, c->x + REGION, c->y + REGION,
                                   c->y + 3 * REGION);
}

typedef struct conv_arg {
    nn_conv_geom g;
    void *ws;
} conv_arg;

static int call_conv_fwd(nn_backend *b, const bench_ctx *c, const void *arg)
{
    const conv_arg *a = arg;
    return b->ops->conv2d_forward(b, &a->g, c->x, c->w, c->w + 4096, c->y, a->ws);
}

static int call_conv_bwd(nn_backend *b, const bench_ctx *c, const void *arg)
{
    const conv_arg *a = arg;
    return b->ops->conv2d_backward(b, &a->g, c->x, c->w, c->y, c->x + REGION, c->y + REGION,
                                   c->y + REGION + 4096, a->ws);
}

/* One point: flops per call, and the rate of its work beyond the fixed cost
 * of a call. Noise can make a call look no slower than the 1x1x1 one; its
 * work is then taken as a tenth of the call. */
static void add_point(nn_rate_curve *curve, double flops, double call_s, double fixed_us)
{
    double work_us = call_s * 1e6 - fixed_us;
    if (work_us < 0.1 * call_s * 1e6)
        work_us = 0.1 * call_s * 1e6;
    curve->flops[curve->n] = flops;
    curve->gflops[curve->n] = flops / work_us * 1e-3;
    curve->n++;
}

int nn_cal_linear_curves(nn_backend *b, const bench_ctx *c, nn_calibration *out)
{
    static const int one[3] = { 1, 1, 1 };
    double s, *widest = &out->spread[NN_SPREAD_LINEAR];
    memset(&out->linear_fwd, 0, sizeof out->linear_fwd);
    memset(&out->linear_bwd, 0, sizeof out->linear_bwd);
    *widest = 0;
    if (time_call(b, c, call_linear_fwd, one, &s, widest) != 0)
        return -1;
    out->matrix_op_us = s * 1e6;
    for (int i = 0; i < N_LINEAR_SHAPES; i++) {
        const int *sh = linear_shapes[i];
        double macs = (double)sh[0] * sh[1] * sh[2], outs = (double)sh[0] * sh[2];
        if (time_call(b, c, call_linear_fwd, sh, &s, widest) != 0)
            return -1;
        if (i == 0) {
            out->smallest_product_us = s * 1e6;
            /* A fixed cost cannot exceed a whole call. cuBLAS 13.1 runs the
             * degenerate 1x1x1 product another way than the presets' smallest
             * (on an H200 17.9 and 19.1 us against 13.8 and 14.7, in two
             * calibrations; on an H100 14.9 against 9.6): the smallest call
             * measured is then the fixed cost's bound, and its figure. */
            if (out->smallest_product_us < out->matrix_op_us)
                out->matrix_op_us = out->smallest_product_us;
        }
        add_point(&out->linear_fwd, 2.0 * macs + outs, s, out->matrix_op_us);   /* as cost.c counts */
        int slow = s > SLOW_CALL_S;
        if (time_call(b, c, call_linear_bwd, sh, &s, widest) != 0)
            return -1;
        add_point(&out->linear_bwd, 4.0 * macs + outs, s, out->matrix_op_us);
        if (slow || s > SLOW_CALL_S)
            return 0;
    }
    /* the peak, measured already */
    double peak_flops = 2.0 * GEMM_N * GEMM_N * (double)GEMM_N;
    add_point(&out->linear_fwd, peak_flops + (double)GEMM_N * GEMM_N,
              peak_flops / (out->gemm_gflops * 1e9) + out->matrix_op_us * 1e-6, out->matrix_op_us);
    return 0;
}

int nn_cal_conv_curves(nn_backend *b, const bench_ctx *c, nn_calibration *out)
{
    double *widest = &out->spread[NN_SPREAD_CONV];
    memset(&out->conv_fwd, 0, sizeof out->conv_fwd);
    memset(&out->conv_bwd, 0, sizeof out->conv_bwd);
    *widest = 0;
    for (int i = 0; i < N_CONV_BATCHES; i++) {
        conv_arg a = { .g = { .n = conv_batches[i], .c_in = 3, .h_in = 32, .w_in = 32, .c_out = 6,
                              .h_out = 28, .w_out = 28, .k_h = 5, .k_w = 5, .stride_h = 1, .stride_w = 1 } };
        double macs = (double)a.g.n * 6 * 784 * 75, outs = (double)a.g.n * 6 * 784, s_fwd = 0, s_bwd = 0;
        size_t ws = 0;
        if (b->ops->conv2d_workspace(b, &a.g, &ws) != 0 || b->ops->alloc(b, ws ? ws : 64, &a.ws) != 0)
            return -1;
        int rc = time_call(b, c, call_conv_fwd, &a, &s_fwd, widest) ||
                 time_call(b, c, call_conv_bwd, &a, &s_bwd, widest);
        b->ops->free(b, a.ws);
        if (rc != 0)
            return -1;
        add_point(&out->conv_fwd, 2.0 * macs + outs, s_fwd, out->matrix_op_us);
        add_point(&out->conv_bwd, 4.0 * macs + outs, s_bwd, out->matrix_op_us);   /* with dx */
        if (s_fwd > SLOW_CALL_S || s_bwd > SLOW_CALL_S)
            break;
    }
    return 0;
}

/* ---- per-element costs ---------------------------------------------------------- */

#define ELEMS NN_ELEM_CALIBRATION

typedef struct elem_arg {
    nn_op_class cls;
    int bwd;
} elem_arg;

/* 2x2 pooling of ELEMS inputs: 64 planes of 64 x 64; any other window: rows
 * of 16 in threes (conv1d-regression's pool) */
static nn_pool_geom pool_geom(nn_op_class cls)
{
    if (cls == NN_OP_POOL2X2)
        return (nn_pool_geom){ .n = 16, .c = 4, .h_in = 64, .w_in = 64, .h_out = 32, .w_out = 32,
                               .k_h = 2, .k_w = 2, .stride_h = 2, .stride_w = 2 };
    return (nn_pool_geom){ .n = ELEMS / 128, .c = 8, .h_in = 1, .w_in = 16, .h_out = 1, .w_out = 5,
                           .k_h = 1, .k_w = 3, .stride_h = 1, .stride_w = 3 };
}

/* One call of the op of class a->cls over ELEMS elements. Operands: x, y,
 * dy, dx in their own regions; labels (zeros: a valid class) after them. */
static int call_elem(nn_backend *b, const bench_ctx *c, const void *arg)
{
    const elem_arg *a = arg;
    float *x = c->x, *y = c->y, *dy = c->y + REGION, *dx = c->x + REGION, *v = c->x + 2 * REGION;
    const int32_t *labels = (const int32_t *)(c->y + 2 * REGION);
    static const nn_sgd_hyper sgd = { 0.001f, 0.9f, 0.0f, 0.0f, 0 };
    static const nn_adam_hyper adam = { 0.001f, 0.9f, 0.999f, 1e-8f, 0.0f };
    static const enum nn_act act[] = { [NN_OP_RELU] = NN_ACT_RELU, [NN_OP_TANH] = NN_ACT_TANH,
                                       [NN_OP_MISH] = NN_ACT_MISH };
    switch (a->cls) {
    case NN_OP_RELU: case NN_OP_TANH: case NN_OP_MISH:
        return a->bwd ? b->ops->act_backward(b, act[a->cls], ELEMS, x, y, dy, dx)
                      : b->ops->act_forward(b, act[a->cls], ELEMS, x, y);
    case NN_OP_DROPOUT:
        return a->bwd ? b->ops->dropout_backward(b, ELEMS, 0.2f, 1, 1, dy, dx)
                      : b->ops->dropout_forward(b, ELEMS, 0.2f, 1, 1, x, y);
    case NN_OP_POOL2X2: case NN_OP_POOL: {
        nn_pool_geom g = pool_geom(a->cls);
        return a->bwd ? b->ops->maxpool2d_backward(b, &g, x, y, dy, dx) : b->ops->maxpool2d_forward(b, &g, x, y);
    }
    case NN_OP_SOFTMAX_XENT:
        return b->ops->softmax_xent(b, ELEMS / 16, 16, x, labels, dx, v);
    case NN_OP_MSE:
        return b->ops->mse(b, ELEMS / 16, 16, x, y, dx, v);
    case NN_OP_SGD:
        return b->ops->sgd_step(b, ELEMS, x, y, v, &sgd, 2);
    case NN_OP_ADAM:
        return b->ops->adam_step(b, ELEMS, x, y, v, dx, &adam, 2);
    default:
        return 0;
    }
}

int nn_cal_elem_costs(nn_backend *b, const bench_ctx *c, nn_calibration *out)
{
    double *widest = &out->spread[NN_SPREAD_ELEM];
    *widest = 0;
    if (b->ops->zero(b, c->y + 2 * REGION, ELEMS * sizeof(int32_t)) != 0)
        return -1;
    for (int k = NN_OP_RELU; k < NN_OP_CLASSES; k++) {
        int directions = k < NN_OP_SOFTMAX_XENT ? 2 : 1;   /* a loss or a step is one call */
        for (int d = 0; d < directions; d++) {
            elem_arg a = { (nn_op_class)k, d };
            double s;
            if (time_call(b, c, call_elem, &a, &s, widest) != 0)
                return -1;
            out->elem_ns[k][d] = s * 1e9 / ELEMS;
        }
    }
    return 0;
}
