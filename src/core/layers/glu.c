/* src/core/layers/glu.c - glu: the gated linear unit of pytorch-tabnet's
 * GLU_Layer, y = a * sigmoid(b) where a and b are the first and second
 * halves of each sample's features. Flat input of an even count; no keys,
 * no parameters; out = in / 2. */
#include "layer_kind.h"

#include <stdio.h>

static int infer(const nn_checker *c, int i, nn_layer_spec *l, nn_shape in, nn_shape *out)
{
    long half = in.dim[0] / 2;
    if (nn_layer_need_rank(c, i, l, in, 1))
        return -1;
    if (in.dim[0] % 2)
        return nn_layer_error(c, i, l, "type", "splits its input in two halves, but %s %d features",
                              nn_layer_from(i), in.dim[0]);
    return nn_layer_out_shape(c, i, l, 1, &half, out);
}

static void label(const nn_layer_spec *s, char *buf, size_t len)
{
    snprintf(buf, len, "glu %d->%d", s->in_shape.dim[0], s->out_shape.dim[0]);
}

/* Per output: the sigmoid (exp, add, divide) and a product, 4 FLOPs over
 * two reads and a write; backward 6 FLOPs, reading both halves and dy,
 * writing both halves of dx. */
static void cost(const nn_layer_spec *s, double n, int need_dx, nn_layer_cost *c)
{
    const double F = 4.0, outs = n * s->out_shape.dim[0];
    c->fwd = (nn_op_cost){ 4.0 * outs, F * 3.0 * outs };
    if (need_dx)
        c->bwd = (nn_op_cost){ 6.0 * outs, F * 5.0 * outs };
    c->op_class = NN_OP_NONE;
    c->elems = outs;
}

static int forward(const nn_layer_call *c, const float *x, float *y)
{
    return c->b->ops->glu_forward(c->b, c->n, c->s->out_shape.dim[0], x, y);
}

static int backward(const nn_layer_call *c, const float *x, const float *y, const float *dy,
                    float *dx)
{
    (void)y;
    return c->b->ops->glu_backward(c->b, c->n, c->s->out_shape.dim[0], x, dy, dx);
}

const nn_layer_def nn_layer_glu_def = {
    .name = "glu",
    .infer = infer,
    .label = label,
    .cost = cost,
    .forward = forward,
    .backward = backward,
};
