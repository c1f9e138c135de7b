/* src/core/layers/sparsemax.c - sparsemax over each sample's features
 * (TabNet's attentive mask): the projection onto the simplex, its exact
 * gradient, and with key sparsity = lambda the term pytorch-tabnet adds to
 * its training loss, lambda * mean over samples of -sum_j M log(M + 1e-15)
 * (its "- lambda_sparse * M_loss"): added to the loss by aux_loss, its
 * gradient by backward. Flat input, same shape out, no parameters. */
#include "layer_kind.h"

#include <stdio.h>

static int infer(const nn_checker *c, int i, nn_layer_spec *l, nn_shape in, nn_shape *out)
{
    if (nn_layer_need_rank(c, i, l, in, 1))
        return -1;
    *out = in;
    return 0;
}

static void label(const nn_layer_spec *s, char *buf, size_t len)
{
    if (s->sparsity != 0)
        snprintf(buf, len, "sparsemax %d l%g", s->out_shape.dim[0], (double)s->sparsity);
    else
        snprintf(buf, len, "sparsemax %d", s->out_shape.dim[0]);
}

/* Per element: the maximum, a few passes finding tau (counted as 3 of 2
 * FLOPs), the output: 10 FLOPs over a read and a write; the entropy term 4
 * more and a read. Backward: the support's mean and dx, 4 FLOPs (the entropy's
 * gradient 5 more) over reads of y and dy and a write. */
static void cost(const nn_layer_spec *s, double n, int need_dx, nn_layer_cost *c)
{
    const double F = 4.0, outs = n * s->out_shape.dim[0], aux = s->sparsity != 0;
    c->fwd = (nn_op_cost){ (10.0 + 4.0 * aux) * outs, F * (2.0 + aux) * outs };
    if (need_dx)
        c->bwd = (nn_op_cost){ (4.0 + 5.0 * aux) * outs, F * 3.0 * outs };
    c->op_class = NN_OP_NONE;
    c->elems = outs;
}

static int forward(const nn_layer_call *c, const float *x, float *y)
{
    return c->b->ops->sparsemax_forward(c->b, c->n, c->s->out_shape.dim[0], x, y);
}

static int backward(const nn_layer_call *c, const float *x, const float *y, const float *dy,
                    float *dx)
{
    (void)x;
    if (!dx)
        return 0;            /* no parameters: nothing else to compute */
    return c->b->ops->sparsemax_backward(c->b, c->n, c->s->out_shape.dim[0], y, dy,
                                         c->s->sparsity, dx);
}

static int aux_loss(const nn_layer_call *c, const float *y, float *stats)
{
    if (c->s->sparsity == 0)
        return 0;
    return c->b->ops->sparsemax_entropy(c->b, c->n, c->s->out_shape.dim[0], y, c->s->sparsity,
                                        stats);
}

const nn_layer_def nn_layer_sparsemax_def = {
    .name = "sparsemax",
    .keys = NN_KEY(NN_KEY_SPARSITY),
    .infer = infer,
    .label = label,
    .cost = cost,
    .forward = forward,
    .backward = backward,
    .aux_loss = aux_loss,
};
