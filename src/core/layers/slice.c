/* src/core/layers/slice.c - slice: features [from, to) of a flat input
 * (TabNet splits a transformer's output into its d and a parts). Keys: from,
 * to. No parameters; backward scatters dy into its columns and zeroes the
 * rest of dx. */
#include "layer_kind.h"

#include <stdio.h>

static int infer(const nn_checker *c, int i, nn_layer_spec *l, nn_shape in, nn_shape *out)
{
    long d = l->to - l->from;
    if (nn_layer_need_rank(c, i, l, in, 1))
        return -1;
    if (l->to > in.dim[0])
        return nn_layer_error(c, i, l, "to", "past the end: %s %d features", nn_layer_from(i), in.dim[0]);
    if (l->from >= l->to)
        return nn_layer_error(c, i, l, "from", "must be below to = %d (features [from, to))", l->to);
    return nn_layer_out_shape(c, i, l, 1, &d, out);
}

static void label(const nn_layer_spec *s, char *buf, size_t len)
{
    snprintf(buf, len, "slice [%d:%d]", s->from, s->to);
}

/* a copy: no FLOPs; forward reads and writes the slice, backward reads dy
 * and writes the whole of dx. Priced as a streaming elementwise op. */
static void cost(const nn_layer_spec *s, double n, int need_dx, nn_layer_cost *c)
{
    double outs = n * (double)(s->to - s->from), ins = n * (double)nn_shape_count(&s->in_shape);
    c->op_class = NN_OP_RELU;
    c->elems = outs;
    c->fwd = (nn_op_cost){ 0, 4.0 * 2.0 * outs };
    if (need_dx) {
        c->bwd = (nn_op_cost){ 0, 4.0 * (outs + ins) };
        c->elems = ins;
    }
}

static int forward(const nn_layer_call *c, const float *x, float *y)
{
    const nn_layer_spec *s = c->s;
    return c->b->ops->slice_forward(c->b, c->n, s->in_shape.dim[0], s->from, s->to, x, y);
}

static int backward(const nn_layer_call *c, const float *x, const float *y, const float *dy,
                    float *dx)
{
    const nn_layer_spec *s = c->s;
    (void)x;
    (void)y;
    return c->b->ops->slice_backward(c->b, c->n, s->in_shape.dim[0], s->from, s->to, dy, dx);
}

const nn_layer_def nn_layer_slice_def = {
    .name = "slice",
    .keys = NN_KEY(NN_KEY_FROM) | NN_KEY(NN_KEY_TO),
    .required = NN_KEY(NN_KEY_TO),
    .infer = infer,
    .label = label,
    .cost = cost,
    .forward = forward,
    .backward = backward,
};
