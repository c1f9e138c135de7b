/* src/core/layers/linear.c - linear: y = x W^T + b on flat input.
 * Keys: in (inferred when absent), out; bias = false (no bias, as
 * pytorch-tabnet's Linear(..., bias=False)); init = xavier_normal with gain
 * (torch.nn.init.xavier_normal_). Weights (out, in), bias (out). */
#include "layer_kind.h"

#include <math.h>
#include <stdio.h>

static int infer(const nn_checker *c, int i, nn_layer_spec *l, nn_shape in, nn_shape *out)
{
    long d = l->out;
    if (nn_layer_need_rank(c, i, l, in, 1) || nn_layer_check_in(c, i, l, in))
        return -1;
    if (l->gain != 0 && l->init != NN_INIT_XAVIER_NORMAL)
        return nn_layer_error(c, i, l, "gain", "applies only with init = xavier_normal");
    return nn_layer_out_shape(c, i, l, 1, &d, out);
}

static void params(const nn_layer_spec *s, size_t *weights, size_t *bias)
{
    *weights = (size_t)s->in * (size_t)s->out;
    *bias = s->no_bias ? 0 : (size_t)s->out;
}

/* xavier_normal_: N(0, std^2), std = gain sqrt(2 / (fan_in + fan_out)); a
 * bias, if any, PyTorch's default. */
static void init(const nn_layer_spec *s, nn_rng *rng, float *w, float *state)
{
    (void)state;
    if (s->init != NN_INIT_XAVIER_NORMAL) {
        nn_layer_init_default(s, rng, w);
        return;
    }
    float gain = s->gain != 0 ? s->gain : 1.0f;
    float std = gain * sqrtf(2.0f / (float)(s->in + s->out));
    size_t n = (size_t)s->in * (size_t)s->out;
    for (size_t j = 0; j < n; j++)
        w[j] = std * nn_rng_normal(rng);
    float bound = 1.0f / sqrtf((float)s->in);
    for (size_t j = 0; !s->no_bias && j < (size_t)s->out; j++)
        w[n + j] = nn_rng_range(rng, -bound, bound);
}

static void label(const nn_layer_spec *s, char *buf, size_t len)
{
    snprintf(buf, len, "linear %d->%d%s", s->in, s->out, s->no_bias ? " no bias" : "");
}

/* rows = the batch, cols = out, dot products of length in */
static void cost(const nn_layer_spec *s, double n, int need_dx, nn_layer_cost *c)
{
    nn_cost_matrix(c, n, s->out, s->in, n * s->in, need_dx);
    if (s->no_bias) {            /* no bias to add, read, or sum the gradient of */
        c->fwd.flops -= n * s->out;
        c->fwd.bytes -= 4.0 * s->out;
        c->bwd.flops -= n * s->out;
        c->bwd.bytes -= 4.0 * (n * s->out + s->out);
    }
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
    if (c->adam && c->b->ops->linear_backward_adam) {
        const nn_layer_adam *a = c->adam;
        int rc = c->b->ops->linear_backward_adam(c->b, c->n, c->s->in, c->s->out, x, dy, dx,
                                                 a->param, c->bias != NULL, a->m, a->v, a->h,
                                                 a->t);
        if (rc != NN_OP_DECLINED) {
            if (rc == 0)
                *a->done = 1;
            return rc;
        }
    }
    return c->b->ops->linear_backward(c->b, c->n, c->s->in, c->s->out, x, c->w, dy, dx, c->dw,
                                      c->dbias);
}

const nn_layer_def nn_layer_linear_def = {
    .name = "linear",
    .keys = NN_KEY(NN_KEY_IN) | NN_KEY(NN_KEY_OUT) | NN_KEY(NN_KEY_BIAS) | NN_KEY(NN_KEY_INIT) |
            NN_KEY(NN_KEY_GAIN),
    .required = NN_KEY(NN_KEY_OUT),
    .infer = infer,
    .params = params,
    .init = init,
    .label = label,
    .cost = cost,
    .forward = forward,
    .backward = backward,
};
