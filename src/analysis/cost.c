/* src/analysis/cost.c - the cost model of a training step; see cost.h for the rules. */
#include "nnlab/cost.h"

#include <stdio.h>
#include <string.h>

#define F 4.0                    /* bytes per float32 */

static int has_params(enum nn_layer_kind k)
{
    return k == NN_LAYER_LINEAR || k == NN_LAYER_CONV2D || k == NN_LAYER_CONV1D;
}

static int is_view(enum nn_layer_kind k)
{
    return k == NN_LAYER_FLATTEN || k == NN_LAYER_RESHAPE;
}

/* FLOPs per element of an elementwise forward pass */
static double elementwise_flops(enum nn_layer_kind k)
{
    return k == NN_LAYER_MISH ? 6.0 : 1.0;
}

static void add(nn_op_cost *to, nn_op_cost c)
{
    to->flops += c.flops;
    to->bytes += c.bytes;
}

/* A matrix-shaped layer: `rows` output rows of `cols` outputs, each a dot
 * product of length k, with a bias per output column. Linear: rows = N,
 * cols = out, k = in. Convolution: rows = N*h_out*w_out, cols = c_out,
 * k = c_in*k_h*k_w (what im2col turns it into). */
static void matrix_layer(nn_layer_cost *c, double rows, double cols, double k, double in_floats,
                         int need_dx)
{
    double weights = cols * k, outs = rows * cols, macs = outs * k;
    c->params = (size_t)(weights + cols);
    c->fwd.flops = 2.0 * macs + outs;
    c->fwd.bytes = F * (in_floats + weights + cols + outs);
    /* dW = dy^T x, db = sum dy, and dx = dy W when a working layer precedes */
    c->bwd.flops = 2.0 * macs + outs;
    c->bwd.bytes = F * (outs + in_floats + weights) + F * (outs + cols);
    if (need_dx) {
        c->bwd.flops += 2.0 * macs;
        c->bwd.bytes += F * (outs + weights + in_floats);
    }
}

const char *nn_op_class_name(nn_op_class c)
{
    static const char *const names[NN_OP_CLASSES] = {
        "none", "linear", "conv", "relu", "tanh", "mish", "dropout", "pool2x2", "pool",
        "softmax_xent", "mse", "sgd", "adam"
    };
    return (unsigned)c < NN_OP_CLASSES ? names[c] : "?";
}

/* The class of a layer that is not a matrix product or a view. */
static nn_op_class elementwise_class(const nn_layer_spec *s)
{
    switch (s->kind) {
    case NN_LAYER_RELU: return NN_OP_RELU;
    case NN_LAYER_TANH: return NN_OP_TANH;
    case NN_LAYER_MISH: return NN_OP_MISH;
    case NN_LAYER_DROPOUT: return NN_OP_DROPOUT;
    case NN_LAYER_MAXPOOL2D:
        return s->kernel == 2 && s->stride == 2 ? NN_OP_POOL2X2 : NN_OP_POOL;
    default: return NN_OP_POOL;   /* maxpool1d, maxlen */
    }
}

static void layer_label(const nn_layer_spec *s, char *buf, size_t len)
{
    const char *kind = nn_layer_kind_name(s->kind);
    if (has_params(s->kind) && s->kind != NN_LAYER_LINEAR)
        snprintf(buf, len, "%s %d->%d k%d", kind, s->in, s->out, s->kernel);
    else if (s->kind == NN_LAYER_LINEAR)
        snprintf(buf, len, "%s %d->%d", kind, s->in, s->out);
    else if (s->kind == NN_LAYER_MAXPOOL2D || s->kind == NN_LAYER_MAXPOOL1D)
        snprintf(buf, len, "%s %d", kind, s->kernel);
    else
        snprintf(buf, len, "%s", kind);
}

static void model_layer(const nn_layer_spec *s, double n, int need_dx, nn_layer_cost *c)
{
    double in = n * (double)nn_shape_count(&s->in_shape);
    double out = n * (double)nn_shape_count(&s->out_shape);
    memset(c, 0, sizeof *c);
    layer_label(s, c->label, sizeof c->label);
    c->out_shape = s->out_shape;
    switch (s->kind) {
    case NN_LAYER_LINEAR:
        matrix_layer(c, n, s->out, s->in, in, need_dx);
        c->op_class = NN_OP_LINEAR;
        return;
    case NN_LAYER_CONV2D:
    case NN_LAYER_CONV1D: {
        double positions = out / s->out;         /* N * h_out * w_out */
        double k = (double)s->in * s->kernel * (s->kind == NN_LAYER_CONV2D ? s->kernel : 1);
        matrix_layer(c, positions, s->out, k, in, need_dx);
        c->op_class = NN_OP_CONV;
        return;
    }
    case NN_LAYER_MAXPOOL2D:
    case NN_LAYER_MAXPOOL1D:
    case NN_LAYER_MAXLEN: {
        /* every input element of a window is compared once; backward
         * recomputes the argmax and writes the whole dx */
        double window = s->kind == NN_LAYER_MAXPOOL2D ? (double)s->kernel * s->kernel
                      : s->kind == NN_LAYER_MAXPOOL1D ? (double)s->kernel
                      : (double)s->in_shape.dim[1];
        c->fwd = (nn_op_cost){ out * window, F * (in + out) };
        c->op_class = elementwise_class(s);
        c->elems = in;
        if (need_dx)
            c->bwd = (nn_op_cost){ out * window, F * (2.0 * in + 2.0 * out) };
        return;
    }
    case NN_LAYER_FLATTEN:
    case NN_LAYER_RESHAPE:
        return;
    default:                                      /* relu, tanh, mish, dropout */
        c->fwd = (nn_op_cost){ out * elementwise_flops(s->kind), F * 2.0 * out };
        c->op_class = elementwise_class(s);
        c->elems = out;
        if (need_dx)
            c->bwd = (nn_op_cost){ out * (elementwise_flops(s->kind) + 1.0), F * 3.0 * out };
        return;
    }
}

static nn_op_cost loss_cost(const nn_preset *p, double n)
{
    if (p->loss == NN_LOSS_XENT) {
        double elems = n * nn_preset_classes(p);
        /* softmax (max, exp, sum, divide: 5 per element) and its gradient (2) */
        return (nn_op_cost){ 7.0 * elems, F * (2.0 * elems + n) };
    }
    double elems = n * p->targets;
    return (nn_op_cost){ 5.0 * elems, F * 3.0 * elems };
}

static nn_op_cost optimizer_cost(const nn_preset *p, double params)
{
    if (p->opt == NN_OPT_ADAM)      /* reads p g m v, writes p m v */
        return (nn_op_cost){ 15.0 * params, F * 7.0 * params };
    if (p->momentum > 0)            /* reads p g v, writes p v */
        return (nn_op_cost){ 6.0 * params, F * 5.0 * params };
    return (nn_op_cost){ 4.0 * params, F * 3.0 * params };
}

void nn_cost_model(const nn_preset *p, int batch, nn_cost *out)
{
    double n = batch;
    int first = 0;
    memset(out, 0, sizeof *out);
    out->batch = batch;
    out->n_layers = p->n_layers;
    while (first < p->n_layers && is_view(p->layers[first].kind))
        first++;
    for (int i = 0; i < p->n_layers; i++) {
        nn_layer_cost *c = &out->layers[i];
        /* the first working layer needs no input gradient; without
         * parameters it has no backward at all */
        model_layer(&p->layers[i], n, i > first, c);
        out->params += c->params;
        add(&out->total, c->fwd);
        add(&out->total, c->bwd);
    }
    out->loss = loss_cost(p, n);
    out->loss_class = p->loss == NN_LOSS_XENT ? NN_OP_SOFTMAX_XENT : NN_OP_MSE;
    out->loss_elems = n * (p->loss == NN_LOSS_XENT ? nn_preset_classes(p) : p->targets);
    out->optimizer = optimizer_cost(p, (double)out->params);
    out->optimizer_class = p->opt == NN_OPT_ADAM ? NN_OP_ADAM : NN_OP_SGD;
    add(&out->total, out->loss);
    add(&out->total, out->optimizer);
    nn_shape in = nn_preset_input_shape(p);
    out->input_bytes = F * n * (double)nn_shape_count(&in) +
                       (p->loss == NN_LOSS_XENT ? 4.0 * n : F * n * p->targets);
}

double nn_cost_forward_flops_per_sample(const nn_preset *p)
{
    nn_cost c;
    double sum = 0;
    nn_cost_model(p, 1, &c);
    for (int i = 0; i < c.n_layers; i++)
        sum += c.layers[i].fwd.flops;
    return sum;
}
