/* src/core/layers/conv.c - conv2d on (C,H,W) and conv1d on (C,L), the latter
 * as a conv2d of height 1: one backend op for both.
 * Keys: in (channels, inferred when absent), out, kernel, stride (1),
 * padding (0). Weights (out, in, k[, k]), bias (out). */
#include "layer_kind.h"

#include <stdio.h>
#include <string.h>

static void fill_defaults(nn_layer_spec *s)
{
    if (s->stride == 0)
        s->stride = 1;
}

/* out = (in + 2*pad - k)/stride + 1 per axis. rank: 3 for conv2d, 2 for conv1d */
static int infer_rank(const nn_checker *c, int i, nn_layer_spec *l, nn_shape in, int rank, nn_shape *out)
{
    long d[3] = { l->out, 0, 0 };
    if (nn_layer_need_rank(c, i, l, in, rank) || nn_layer_check_in(c, i, l, in))
        return -1;
    for (int a = 1; a < rank; a++) {
        long padded = (long)in.dim[a] + 2L * l->padding;
        if (padded < l->kernel) {
            char s[64];
            nn_shape_format(&in, s, sizeof s);
            return nn_layer_error(c, i, l, "kernel", "larger than the padded input (%s %s, padding %d)",
                                  nn_layer_from(i), s, l->padding);
        }
        d[a] = (padded - l->kernel) / l->stride + 1;
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

/* conv1d is the same op with height 1 */
static int is_2d(const nn_layer_spec *s) { return s->kind == NN_LAYER_CONV2D; }

/* the taps of one output channel over one input channel: k*k or k */
static size_t taps(const nn_layer_spec *s)
{
    return (size_t)s->kernel * (is_2d(s) ? (size_t)s->kernel : 1);
}

static void params(const nn_layer_spec *s, size_t *weights, size_t *bias)
{
    *weights = (size_t)s->out * (size_t)s->in * taps(s);
    *bias = (size_t)s->out;
}

static void label(const nn_layer_spec *s, char *buf, size_t len)
{
    snprintf(buf, len, "%s %d->%d k%d", nn_layer_kind_name(s->kind), s->in, s->out, s->kernel);
}

/* What im2col makes of it: rows = N*h_out*w_out, cols = c_out, k = c_in*k_h*k_w. */
static void cost(const nn_layer_spec *s, double n, int need_dx, nn_layer_cost *c)
{
    double positions = n * (double)nn_shape_count(&s->out_shape) / s->out;
    nn_cost_matrix(c, positions, s->out, (double)s->in * (double)taps(s),
                   n * (double)nn_shape_count(&s->in_shape), need_dx);
    c->op_class = NN_OP_CONV;
}

/* The backend geometry of a batch of n; 1-D is height 1. */
static void geometry(const nn_layer_spec *s, int n, nn_conv_geom *g)
{
    int two_d = is_2d(s);
    memset(g, 0, sizeof *g);
    g->n = n;
    g->c_in = s->in_shape.dim[0];
    g->h_in = two_d ? s->in_shape.dim[1] : 1;
    g->w_in = two_d ? s->in_shape.dim[2] : s->in_shape.dim[1];
    g->c_out = s->out_shape.dim[0];
    g->h_out = two_d ? s->out_shape.dim[1] : 1;
    g->w_out = two_d ? s->out_shape.dim[2] : s->out_shape.dim[1];
    g->k_h = two_d ? s->kernel : 1;
    g->k_w = s->kernel;
    g->stride_h = two_d ? s->stride : 1;
    g->stride_w = s->stride;
    g->pad_h = two_d ? s->padding : 0;
    g->pad_w = s->padding;
}

static int workspace(nn_backend *b, const nn_layer_spec *s, int n, size_t *bytes)
{
    nn_conv_geom g;
    geometry(s, n, &g);
    return b->ops->conv2d_workspace(b, &g, bytes);
}

static int forward(const nn_layer_call *c, const float *x, float *y)
{
    nn_conv_geom g;
    geometry(c->s, c->n, &g);
    return c->b->ops->conv2d_forward(c->b, &g, x, c->w, c->bias, y, c->ws);
}

static int backward(const nn_layer_call *c, const float *x, const float *y, const float *dy,
                    float *dx)
{
    nn_conv_geom g;
    (void)y;
    geometry(c->s, c->n, &g);
    return c->b->ops->conv2d_backward(c->b, &g, x, c->w, dy, dx, c->dw, c->dbias, c->ws);
}

#define CONV_KEYS (NN_KEY(NN_KEY_IN) | NN_KEY(NN_KEY_OUT) | NN_KEY(NN_KEY_KERNEL) | \
                   NN_KEY(NN_KEY_STRIDE) | NN_KEY(NN_KEY_PADDING))
#define CONV_REQUIRED (NN_KEY(NN_KEY_OUT) | NN_KEY(NN_KEY_KERNEL))

const nn_layer_def nn_layer_conv2d_def = {
    .name = "conv2d",
    .keys = CONV_KEYS,
    .required = CONV_REQUIRED,
    .fill_defaults = fill_defaults,
    .infer = infer2d,
    .params = params,
    .label = label,
    .cost = cost,
    .workspace = workspace,
    .forward = forward,
    .backward = backward,
};

const nn_layer_def nn_layer_conv1d_def = {
    .name = "conv1d",
    .keys = CONV_KEYS,
    .required = CONV_REQUIRED,
    .fill_defaults = fill_defaults,
    .infer = infer1d,
    .params = params,
    .label = label,
    .cost = cost,
    .workspace = workspace,
    .forward = forward,
    .backward = backward,
};
