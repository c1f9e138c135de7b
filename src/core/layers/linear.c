/* src/core/layers/linear.c - linear: y = x W^T + b on flat input.
 * Keys: in (inferred when absent), out. Weights (out, in), bias (out). */
#include "layer_kind.h"

#include <stdio.h>

static int infer(const nn_checker *c, int i, nn_layer_spec *l, nn_shape in, nn_shape *out)
{
    long d = l->out;
    if (nn_layer_need_rank(c, i, l, in, 1) || nn_layer_check_in(c, i, l, in))
        return -1;
    return nn_layer_out_shape(c, i, l, 1, &d, out);
}

static void params(const nn_layer_spec *s, size_t *weights, size_t *bias)
{
    *weights = (size_t)s->in * (size_t)s->out;
    *bias = (size_t)s->out;
}

static void label(const nn_layer_spec *s, char *buf, size_t len)
{
    snprintf(buf, len, "linear %d->%d", s->in, s->out);
}

/* rows = the batch, cols = out, dot products of length in */
static void cost(const nn_layer_spec *s, double n, int need_dx, nn_layer_cost *c)
{
    nn_cost_matrix(c, n, s->out, s->in, n * s->in, need_dx);
    c->op_class = NN_OP_LINEAR;
}

static int forward(const nn_layer_call *c, const float *x, float *y)
{
    return c->b->ops->linear_forward(c->b, c->n, c->s->in, c->s->out, x, c->w, c->bias, y);
}

static int backward(const nn_layer_call *c, const float *x, const float *y, const float *dy,
                    float *dx)
{
    (void)y;
    return c->b->ops->linear_backward(c->b, c->n, c->s->in, c->s->out, x, c->w, dy, dx, c->dw,
                                      c->dbias);
}

const nn_layer_def nn_layer_linear_def = {
    .name = "linear",
    .keys = NN_KEY(NN_KEY_IN) | NN_KEY(NN_KEY_OUT),
    .required = NN_KEY(NN_KEY_OUT),
    .infer = infer,
    .params = params,
    .label = label,
    .cost = cost,
    .forward = forward,
    .backward = backward,
};
