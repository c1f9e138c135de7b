/* src/core/layers/dropout.c - dropout: key p in [0, 1); any shape, no
 * parameters. The mask is a pure function of (seed, counter, index)
 * (backends/dropout_hash.h), recomputed in backward instead of stored; the
 * network gives each (step, layer) its own counter. At evaluation it is the
 * identity (p = 0 copies). */
#include "layer_kind.h"

/* a compare and a scale per element, counted as 1 like the activations */
static void cost(const nn_layer_spec *s, double n, int need_dx, nn_layer_cost *c)
{
    nn_cost_elementwise(c, n * (double)nn_shape_count(&s->out_shape), 1.0, need_dx, NN_OP_DROPOUT);
}

static int forward(const nn_layer_call *c, const float *x, float *y)
{
    return c->b->ops->dropout_forward(c->b, c->count, c->training ? c->s->p : 0.0f, c->seed,
                                      c->counter, x, y);
}

static int backward(const nn_layer_call *c, const float *x, const float *y, const float *dy,
                    float *dx)
{
    (void)x;
    (void)y;
    return c->b->ops->dropout_backward(c->b, c->count, c->s->p, c->seed, c->counter, dy, dx);
}

const nn_layer_def nn_layer_dropout_def = {
    .name = "dropout",
    .keys = NN_KEY(NN_KEY_P),
    .required = NN_KEY(NN_KEY_P),
    .infer = nn_layer_same_shape,
    .cost = cost,
    .forward = forward,
    .backward = backward,
};
