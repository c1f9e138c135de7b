/* src/core/layers/norm.c - batchnorm: BatchNorm1d over the features of a
 * flat input, with ghost batches (pytorch-tabnet's GBN) when virtual_batch
 * is set. Keys: in (filled), momentum (0.1), virtual_batch (0: the whole
 * batch), eps (1e-5). Parameters gamma (in, init 1) and beta (in, init 0);
 * state: the running mean (init 0) and variance (init 1), updated in
 * training, used in eval (backend.h nn_bn_geom has the arithmetic).
 * Flat inputs only: a convolution's channels (BatchNorm2d) are not offered;
 * TabNet does not need them. */
#include "layer_kind.h"

#include <stdio.h>

#define DEFAULT_MOMENTUM 0.1f    /* torch.nn.BatchNorm1d's */
#define DEFAULT_EPS 1e-5f

static int infer(const nn_checker *c, int i, nn_layer_spec *l, nn_shape in, nn_shape *out)
{
    if (nn_layer_need_rank(c, i, l, in, 1) || nn_layer_check_in(c, i, l, in))
        return -1;
    *out = in;
    return 0;
}

static void params(const nn_layer_spec *s, size_t *weights, size_t *bias)
{
    *weights = (size_t)s->in;    /* gamma */
    *bias = (size_t)s->in;       /* beta */
}

static void state(const nn_layer_spec *s, size_t *floats)
{
    *floats = 2 * (size_t)s->in; /* running mean, running var */
}

static void init(const nn_layer_spec *s, nn_rng *rng, float *w, float *st)
{
    (void)rng;
    for (int f = 0; f < s->in; f++) {
        w[f] = 1.0f;
        w[s->in + f] = 0.0f;
        st[f] = 0.0f;
        st[s->in + f] = 1.0f;
    }
}

static void label(const nn_layer_spec *s, char *buf, size_t len)
{
    if (s->virtual_batch)
        snprintf(buf, len, "batchnorm %d vb%d", s->in, s->virtual_batch);
    else
        snprintf(buf, len, "batchnorm %d", s->in);
}

/* Per element, training: mean and variance (3 FLOPs over 2 reads of x),
 * normalise and scale (4 FLOPs, a read and a write). Backward recomputes the
 * statistics, sums dy and dy xhat (4 more over a read of x and dy) and
 * writes dx (6 more, reading x and dy again). */
static void cost(const nn_layer_spec *s, double n, int need_dx, nn_layer_cost *c)
{
    const double F = 4.0, outs = n * s->in, per_feature = F * 4.0 * s->in;
    c->fwd = (nn_op_cost){ 7.0 * outs, F * 4.0 * outs + per_feature };
    c->bwd = (nn_op_cost){ 7.0 * outs, F * 4.0 * outs + per_feature };
    if (need_dx) {
        c->bwd.flops += 6.0 * outs;
        c->bwd.bytes += F * 3.0 * outs;
    }
    c->op_class = NN_OP_NONE;
    c->elems = outs;
}

static nn_bn_geom geom(const nn_layer_call *c)
{
    const nn_layer_spec *s = c->s;
    return (nn_bn_geom){ .n = c->n, .c = s->in, .virtual_batch = s->virtual_batch,
                         .momentum = s->momentum != 0 ? s->momentum : DEFAULT_MOMENTUM,
                         .eps = s->eps != 0 ? s->eps : DEFAULT_EPS };
}

static int forward(const nn_layer_call *c, const float *x, float *y)
{
    nn_bn_geom g = geom(c);
    return c->b->ops->batchnorm_forward(c->b, &g, c->training, x, c->w, c->bias, c->state, y);
}

static int backward(const nn_layer_call *c, const float *x, const float *y, const float *dy,
                    float *dx)
{
    nn_bn_geom g = geom(c);
    (void)y;
    return c->b->ops->batchnorm_backward(c->b, &g, x, c->w, dy, dx, c->dw, c->dbias);
}

const nn_layer_def nn_layer_batchnorm_def = {
    .name = "batchnorm",
    .keys = NN_KEY(NN_KEY_IN) | NN_KEY(NN_KEY_MOMENTUM) | NN_KEY(NN_KEY_VIRTUAL_BATCH) |
            NN_KEY(NN_KEY_EPS),
    .infer = infer,
    .params = params,
    .init = init,
    .state = state,
    .label = label,
    .cost = cost,
    .forward = forward,
    .backward = backward,
};
