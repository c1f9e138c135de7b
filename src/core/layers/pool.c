/* src/core/layers/pool.c - max pooling: maxpool2d on (C,H,W), maxpool1d on
 * (C,L), and maxlen, the max over the whole length ((C,L) -> (C)). All three
 * are the backend's one pooling op: 1-D is height 1, maxlen one window of the
 * whole row. Keys (the pools): kernel, stride (= kernel, PyTorch's default).
 * No parameters. */
#include "layer_kind.h"

#include <stdio.h>
#include <string.h>

#define F 4.0                    /* bytes per float32 */

static void fill_defaults(nn_layer_spec *s)
{
    if (s->stride == 0)
        s->stride = s->kernel;   /* windows do not overlap */
}

/* out = (in - k)/stride + 1, floored like PyTorch's default ceil_mode=False */
static int infer_rank(const nn_checker *c, int i, nn_layer_spec *l, nn_shape in, int rank, nn_shape *out)
{
    long d[3] = { in.dim[0], 0, 0 };
    if (nn_layer_need_rank(c, i, l, in, rank))
        return -1;
    for (int a = 1; a < rank; a++) {
        if (in.dim[a] < l->kernel) {
            char s[64];
            nn_shape_format(&in, s, sizeof s);
            return nn_layer_error(c, i, l, "kernel", "larger than the input (%s %s)", nn_layer_from(i), s);
        }
        d[a] = (in.dim[a] - l->kernel) / l->stride + 1;
    }
    return nn_layer_out_shape(c, i, l, rank, d, out);
}

static int infer2d(const nn_checker *c, int i, nn_layer_spec *l, nn_shape in, nn_shape *out)
{
    return infer_rank(c, i, l, in, 3, out);
}

static int infer1d(const nn_checker *c, int i, nn_layer_spec *l, nn_shape in, nn_shape *out)
{
    return infer_rank(c, i, l, in, 2, out);
}

static int infer_maxlen(const nn_checker *c, int i, nn_layer_spec *l, nn_shape in, nn_shape *out)
{
    long d = in.dim[0];
    if (nn_layer_need_rank(c, i, l, in, 2))
        return -1;
    return nn_layer_out_shape(c, i, l, 1, &d, out);
}

static void label(const nn_layer_spec *s, char *buf, size_t len)
{
    snprintf(buf, len, "%s %d", nn_layer_kind_name(s->kind), s->kernel);
}

/* Every input element of a window is compared once; backward recomputes the
 * argmax and writes the whole dx. The per-element price applies to the inputs. */
static void pool_cost(const nn_layer_spec *s, double n, int need_dx, double window,
                      nn_op_class op_class, nn_layer_cost *c)
{
    double in = n * (double)nn_shape_count(&s->in_shape);
    double out = n * (double)nn_shape_count(&s->out_shape);
    c->fwd = (nn_op_cost){ out * window, F * (in + out) };
    c->op_class = op_class;
    c->elems = in;
    if (need_dx)
        c->bwd = (nn_op_cost){ out * window, F * (2.0 * in + 2.0 * out) };
}

/* 2x2 windows at stride 2 are calibrated apart: the common case, and fast */
static void cost2d(const nn_layer_spec *s, double n, int need_dx, nn_layer_cost *c)
{
    nn_op_class k = s->kernel == 2 && s->stride == 2 ? NN_OP_POOL2X2 : NN_OP_POOL;
    pool_cost(s, n, need_dx, (double)s->kernel * s->kernel, k, c);
}

static void cost1d(const nn_layer_spec *s, double n, int need_dx, nn_layer_cost *c)
{
    pool_cost(s, n, need_dx, (double)s->kernel, NN_OP_POOL, c);
}

static void cost_maxlen(const nn_layer_spec *s, double n, int need_dx, nn_layer_cost *c)
{
    pool_cost(s, n, need_dx, (double)s->in_shape.dim[1], NN_OP_POOL, c);
}

/* The backend geometry of a batch of n. */
static void geometry2d(const nn_layer_spec *s, int n, nn_pool_geom *g)
{
    memset(g, 0, sizeof *g);
    g->n = n;
    g->c = s->in_shape.dim[0];
    g->h_in = s->in_shape.dim[1];
    g->w_in = s->in_shape.dim[2];
    g->h_out = s->out_shape.dim[1];
    g->w_out = s->out_shape.dim[2];
    g->k_h = g->k_w = s->kernel;
    g->stride_h = g->stride_w = s->stride;
}

/* (C, L) as height 1; window `kernel` (maxlen: the whole row, 0) */
static void geometry1d(const nn_layer_spec *s, int n, int kernel, nn_pool_geom *g)
{
    memset(g, 0, sizeof *g);
    g->n = n;
    g->c = s->in_shape.dim[0];
    g->h_in = g->h_out = 1;
    g->w_in = s->in_shape.dim[1];
    g->k_h = g->stride_h = 1;
    if (kernel == 0) {
        g->w_out = 1;
        g->k_w = g->stride_w = g->w_in;
    } else {
        g->w_out = s->out_shape.dim[1];
        g->k_w = kernel;
        g->stride_w = s->stride;
    }
}

static int run_forward(const nn_layer_call *c, const nn_pool_geom *g, const float *x, float *y)
{
    return c->b->ops->maxpool2d_forward(c->b, g, x, y);
}

static int run_backward(const nn_layer_call *c, const nn_pool_geom *g, const float *x,
                        const float *y, const float *dy, float *dx)
{
    return c->b->ops->maxpool2d_backward(c->b, g, x, y, dy, dx);
}

static int forward2d(const nn_layer_call *c, const float *x, float *y)
{
    nn_pool_geom g;
    geometry2d(c->s, c->n, &g);
    return run_forward(c, &g, x, y);
}

static int backward2d(const nn_layer_call *c, const float *x, const float *y, const float *dy, float *dx)
{
    nn_pool_geom g;
    geometry2d(c->s, c->n, &g);
    return run_backward(c, &g, x, y, dy, dx);
}

static int forward1d(const nn_layer_call *c, const float *x, float *y)
{
    nn_pool_geom g;
    geometry1d(c->s, c->n, c->s->kernel, &g);
    return run_forward(c, &g, x, y);
}

static int backward1d(const nn_layer_call *c, const float *x, const float *y, const float *dy, float *dx)
{
    nn_pool_geom g;
    geometry1d(c->s, c->n, c->s->kernel, &g);
    return run_backward(c, &g, x, y, dy, dx);
}

static int forward_maxlen(const nn_layer_call *c, const float *x, float *y)
{
    nn_pool_geom g;
    geometry1d(c->s, c->n, 0, &g);
    return run_forward(c, &g, x, y);
}

static int backward_maxlen(const nn_layer_call *c, const float *x, const float *y, const float *dy,
                           float *dx)
{
    nn_pool_geom g;
    geometry1d(c->s, c->n, 0, &g);
    return run_backward(c, &g, x, y, dy, dx);
}

#define POOL_KEYS (NN_KEY(NN_KEY_KERNEL) | NN_KEY(NN_KEY_STRIDE))

const nn_layer_def nn_layer_maxpool2d_def = {
    .name = "maxpool2d",
    .keys = POOL_KEYS,
    .required = NN_KEY(NN_KEY_KERNEL),
    .fill_defaults = fill_defaults,
    .infer = infer2d,
    .label = label,
    .cost = cost2d,
    .forward = forward2d,
    .backward = backward2d,
};

const nn_layer_def nn_layer_maxpool1d_def = {
    .name = "maxpool1d",
    .keys = POOL_KEYS,
    .required = NN_KEY(NN_KEY_KERNEL),
    .fill_defaults = fill_defaults,
    .infer = infer1d,
    .label = label,
    .cost = cost1d,
    .forward = forward1d,
    .backward = backward1d,
};

const nn_layer_def nn_layer_maxlen_def = {
    .name = "maxlen",
    .infer = infer_maxlen,
    .cost = cost_maxlen,
    .forward = forward_maxlen,
    .backward = backward_maxlen,
};
