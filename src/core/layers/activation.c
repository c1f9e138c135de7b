/* src/core/layers/activation.c - relu, tanh and mish: elementwise, any shape,
 * no keys, no parameters. One backend op (act_forward/act_backward) takes
 * the function as an argument, so the three entries share their functions
 * and differ only in the row of act_kinds below. */
#include "layer_kind.h"

/* What differs between the activations: the backend's function, the FLOPs
 * per element forward (cost.h: relu 1, tanh 1, mish 6 for exp, log1p, tanh
 * and mul; backward one more) and the op class it is priced as. */
typedef struct act_kind {
    enum nn_layer_kind kind;
    enum nn_act act;
    double flops;
    nn_op_class op_class;
} act_kind;

static const act_kind act_kinds[] = {
    { NN_LAYER_RELU, NN_ACT_RELU, 1.0, NN_OP_RELU },
    { NN_LAYER_TANH, NN_ACT_TANH, 1.0, NN_OP_TANH },
    { NN_LAYER_MISH, NN_ACT_MISH, 6.0, NN_OP_MISH },
};

/* The row of s's kind; every activation entry below has one. */
static const act_kind *act_kind_of(const nn_layer_spec *s)
{
    for (size_t i = 0; i < sizeof act_kinds / sizeof act_kinds[0]; i++)
        if (act_kinds[i].kind == s->kind)
            return &act_kinds[i];
    return &act_kinds[0];            /* unreachable: only activation entries point here */
}

static void act_cost(const nn_layer_spec *s, double n, int need_dx, nn_layer_cost *c)
{
    const act_kind *k = act_kind_of(s);
    nn_cost_elementwise(c, n * (double)nn_shape_count(&s->out_shape), k->flops, need_dx, k->op_class);
}

static int act_forward(const nn_layer_call *c, const float *x, float *y)
{
    return c->b->ops->act_forward(c->b, act_kind_of(c->s)->act, c->count, x, y);
}

static int act_backward(const nn_layer_call *c, const float *x, const float *y, const float *dy,
                        float *dx)
{
    return c->b->ops->act_backward(c->b, act_kind_of(c->s)->act, c->count, x, y, dy, dx);
}

#define ACTIVATION_DEF(type_name)                                                      \
    {                                                                                  \
        .name = type_name, .infer = nn_layer_same_shape, .cost = act_cost,             \
        .forward = act_forward, .backward = act_backward,                              \
    }

const nn_layer_def nn_layer_relu_def = ACTIVATION_DEF("relu");
const nn_layer_def nn_layer_tanh_def = ACTIVATION_DEF("tanh");
const nn_layer_def nn_layer_mish_def = ACTIVATION_DEF("mish");   /* x * tanh(softplus(x)) */
