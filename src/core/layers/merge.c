/* src/core/layers/merge.c - add and mul: two inputs of the same shape, any
 * rank, no parameters. Keys: inputs = layerA, layerB (the two; both may be
 * the same layer); add's scale (default 1): y = scale (a + b), TabNet's
 * residual (x + f(x)) sqrt(0.5). mul: y = a * b. */
#include "layer_kind.h"

#include <stdio.h>

/* the second input's shape arrives in l->in2_shape (the checker fills it) */
static int infer_same(const nn_checker *c, int i, nn_layer_spec *l, nn_shape in, nn_shape *out)
{
    char a[64], b[64];
    if (l->kind == NN_LAYER_ADD && l->scale == 0)
        l->scale = 1.0f;
    if (in.rank == l->in2_shape.rank && nn_shape_count(&in) == nn_shape_count(&l->in2_shape)) {
        int same = 1;
        for (int d = 0; d < in.rank; d++)
            same &= in.dim[d] == l->in2_shape.dim[d];
        if (same) {
            *out = in;
            return 0;
        }
    }
    nn_shape_format(&in, a, sizeof a);
    nn_shape_format(&l->in2_shape, b, sizeof b);
    return nn_layer_error(c, i, l, "inputs", "the first gives %s, the second %s: %s needs two inputs of the same shape",
                          a, b, nn_layer_kind_name(l->kind));
}

static void fill_defaults(nn_layer_spec *s)
{
    if (s->kind == NN_LAYER_ADD && s->scale == 0)
        s->scale = 1.0f;
}

static void label(const nn_layer_spec *s, char *buf, size_t len)
{
    if (s->kind == NN_LAYER_ADD && s->scale != 1.0f)
        snprintf(buf, len, "add x%.4g", (double)s->scale);
    else
        snprintf(buf, len, "%s", nn_layer_kind_name(s->kind));
}

/* add: an add and a scale per output forward, backward a scale per input
 * gradient (2 reads, 1 write forward; 1 read, 2 writes back); mul: one
 * multiply forward, two back (reads a, b, dy; writes da, db). Priced as a
 * streaming elementwise op (relu's class), each no faster than its bytes. */
static void cost(const nn_layer_spec *s, double n, int need_dx, nn_layer_cost *c)
{
    double outs = n * (double)nn_shape_count(&s->out_shape);
    int mul = s->kind == NN_LAYER_MUL;
    c->op_class = NN_OP_RELU;
    c->elems = outs;
    c->fwd = (nn_op_cost){ outs * (mul ? 1.0 : 2.0), 4.0 * 3.0 * outs };
    if (need_dx)
        c->bwd = (nn_op_cost){ outs * 2.0, 4.0 * (mul ? 5.0 : 3.0) * outs };
}

static int add_forward(const nn_layer_call *c, const float *x, float *y)
{
    return c->b->ops->add_forward(c->b, c->count, c->s->scale, x, c->x2, y);
}

static int add_backward(const nn_layer_call *c, const float *x, const float *y, const float *dy,
                        float *dx)
{
    (void)x;
    (void)y;
    return c->b->ops->add_backward(c->b, c->count, c->s->scale, dy, dx, c->dx2);
}

static int mul_forward(const nn_layer_call *c, const float *x, float *y)
{
    return c->b->ops->mul_forward(c->b, c->count, x, c->x2, y);
}

static int mul_backward(const nn_layer_call *c, const float *x, const float *y, const float *dy,
                        float *dx)
{
    (void)y;
    return c->b->ops->mul_backward(c->b, c->count, x, c->x2, dy, dx, c->dx2);
}

const nn_layer_def nn_layer_add_def = {
    .name = "add",
    .keys = NN_KEY(NN_KEY_INPUTS) | NN_KEY(NN_KEY_SCALE),
    .required = NN_KEY(NN_KEY_INPUTS),
    .fill_defaults = fill_defaults,
    .infer = infer_same,
    .label = label,
    .cost = cost,
    .forward = add_forward,
    .backward = add_backward,
};

const nn_layer_def nn_layer_mul_def = {
    .name = "mul",
    .keys = NN_KEY(NN_KEY_INPUTS),
    .required = NN_KEY(NN_KEY_INPUTS),
    .infer = infer_same,
    .label = label,
    .cost = cost,
    .forward = mul_forward,
    .backward = mul_backward,
};
