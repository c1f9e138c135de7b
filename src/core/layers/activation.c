/* src/core/layers/activation.c - relu, tanh and mish: elementwise, any shape,
 * no keys, no parameters. One backend op (act_forward/act_backward) takes
 * the function as an argument. FLOPs per element forward (cost.h): relu 1,
 * tanh 1, mish 6 (exp, log1p, tanh, mul); backward one more. */
#include "layer_kind.h"

static void act_cost(const nn_layer_spec *s, double n, int need_dx, double flops,
                     nn_op_class op_class, nn_layer_cost *c)
{
    nn_cost_elementwise(c, n * (double)nn_shape_count(&s->out_shape), flops, need_dx, op_class);
}

static int act_forward(const nn_layer_call *c, enum nn_act act, const float *x, float *y)
{
    return c->b->ops->act_forward(c->b, act, c->count, x, y);
}

static int act_backward(const nn_layer_call *c, enum nn_act act, const float *x, const float *y,
                        const float *dy, float *dx)
{
    return c->b->ops->act_backward(c->b, act, c->count, x, y, dy, dx);
}

/* ---- relu ---- */

static void relu_cost(const nn_layer_spec *s, double n, int need_dx, nn_layer_cost *c)
{
    act_cost(s, n, need_dx, 1.0, NN_OP_RELU, c);
}

static int relu_forward(const nn_layer_call *c, const float *x, float *y)
{
    return act_forward(c, NN_ACT_RELU, x, y);
}

static int relu_backward(const nn_layer_call *c, const float *x, const float *y, const float *dy,
                         float *dx)
{
    return act_backward(c, NN_ACT_RELU, x, y, dy, dx);
}

const nn_layer_def nn_layer_relu_def = {
    .name = "relu",
    .infer = nn_layer_same_shape,
    .cost = relu_cost,
    .forward = relu_forward,
    .backward = relu_backward,
};

/* ---- tanh ---- */

static void tanh_cost(const nn_layer_spec *s, double n, int need_dx, nn_layer_cost *c)
{
    act_cost(s, n, need_dx, 1.0, NN_OP_TANH, c);
}

static int tanh_forward(const nn_layer_call *c, const float *x, float *y)
{
    return act_forward(c, NN_ACT_TANH, x, y);
}

static int tanh_backward(const nn_layer_call *c, const float *x, const float *y, const float *dy,
                         float *dx)
{
    return act_backward(c, NN_ACT_TANH, x, y, dy, dx);
}

const nn_layer_def nn_layer_tanh_def = {
    .name = "tanh",
    .infer = nn_layer_same_shape,
    .cost = tanh_cost,
    .forward = tanh_forward,
    .backward = tanh_backward,
};

/* ---- mish: x * tanh(softplus(x)) ---- */

static void mish_cost(const nn_layer_spec *s, double n, int need_dx, nn_layer_cost *c)
{
    act_cost(s, n, need_dx, 6.0, NN_OP_MISH, c);
}

static int mish_forward(const nn_layer_call *c, const float *x, float *y)
{
    return act_forward(c, NN_ACT_MISH, x, y);
}

static int mish_backward(const nn_layer_call *c, const float *x, const float *y, const float *dy,
                         float *dx)
{
    return act_backward(c, NN_ACT_MISH, x, y, dy, dx);
}

const nn_layer_def nn_layer_mish_def = {
    .name = "mish",
    .infer = nn_layer_same_shape,
    .cost = mish_cost,
    .forward = mish_forward,
    .backward = mish_backward,
};
