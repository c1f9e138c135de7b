/* src/analysis/model/cost.c - the cost model of a training step; see cost.h for the
 * rules. Each layer's share comes from the layer table (nn_layer_cost_model,
 * layer.h); this file adds the loss, the optimiser and the input copy. */
#include "nnlab/cost.h"

#include <stdio.h>
#include <string.h>

#define F 4.0                    /* bytes per float32 */

static void add(nn_op_cost *to, nn_op_cost c)
{
    to->flops += c.flops;
    to->bytes += c.bytes;
}

const char *nn_op_class_name(nn_op_class c)
{
    static const char *const names[NN_OP_CLASSES] = {
        "none", "linear", "conv", "relu", "tanh", "mish", "dropout", "pool2x2", "pool",
        "softmax_xent", "mse", "sgd", "adam"
    };
    return (unsigned)c < NN_OP_CLASSES ? names[c] : "?";
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

/* "<- layer3, layer5" when a layer does not read the one before; "weights of
 * layer2" when it shares them. */
static void wiring(const nn_preset *p, int i, char *buf, size_t len)
{
    const nn_layer_spec *l = &p->layers[i];
    int n = nn_layer_n_inputs(l), used = 0;
    buf[0] = '\0';
    if (n == 2 || nn_layer_source(p->layers, i, 0) != i - 1) {
        for (int j = 0; j < n && used >= 0 && (size_t)used < len; j++) {
            int src = nn_layer_source(p->layers, i, j);
            char ref[16];
            if (src < 0)
                snprintf(ref, sizeof ref, "data");
            else
                snprintf(ref, sizeof ref, "layer%d", src + 1);
            used += snprintf(buf + used, len - (size_t)used, "%s%s", j ? ", " : "<- ", ref);
        }
    }
    if (used < 0 || (size_t)used >= len)
        return;                      /* full: what fits is kept */
    if (l->weights > 0)
        snprintf(buf + used, len - (size_t)used, "%sweights of layer%d", used ? "; " : "", l->weights);
}

/* 1 when the backward pass (layers bottom up, a layer's inputs in order)
 * meets another reader of root's gradient before input j of layer i: that
 * reader wrote the gradient, so this one adds to it (net.c's rule). */
static int sums_into(const nn_preset *p, int i, int j, int root)
{
    for (int k = p->n_layers - 1; k >= i; k--) {
        if (nn_layer_is_view(&p->layers[k]))
            continue;                /* a view writes no gradient */
        for (int m = 0; m < nn_layer_n_inputs(&p->layers[k]) && (k > i || m < j); m++)
            if (nn_layer_source_root(p->layers, k, m) == root)
                return 1;
    }
    return 0;
}

/* Backward's extra work in a graph: a gradient added into a tensor's by
 * each reader after the first (read two, write one), and a shared
 * parameter's (the same, per sharing layer). Charged to the reader or the
 * sharer. */
static void add_sums(const nn_preset *p, int i, double n, nn_layer_cost *c)
{
    const nn_layer_spec *l = &p->layers[i];
    for (int j = 0; j < nn_layer_n_inputs(l) && !nn_layer_is_view(l); j++) {
        int root = nn_layer_source_root(p->layers, i, j);
        if (root >= 0 && sums_into(p, i, j, root)) {
            double elems = n * (double)nn_shape_count(j ? &l->in2_shape : &l->in_shape);
            c->bwd.flops += elems;
            c->bwd.bytes += F * 3.0 * elems;
        }
    }
    if (l->weights > 0) {
        double params = (double)nn_layer_params(l);
        c->bwd.flops += params;
        c->bwd.bytes += F * 3.0 * params;
        c->params = 0;               /* counted with the layer that owns them */
    }
}

void nn_cost_model(const nn_preset *p, int batch, nn_cost *out)
{
    double n = batch;
    memset(out, 0, sizeof *out);
    out->batch = batch;
    out->n_layers = p->n_layers;
    for (int i = 0; i < p->n_layers; i++) {
        nn_layer_cost *c = &out->layers[i];
        /* a layer reading the data (or a view of it) needs no input
         * gradient; without parameters it has no backward at all */
        nn_layer_cost_model(&p->layers[i], batch, nn_layer_needs_any_dx(p->layers, i), c);
        add_sums(p, i, n, c);
        wiring(p, i, c->wiring, sizeof c->wiring);
        out->params += c->params;
        add(&out->forward, c->fwd);
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

/* The engine's rule (offer_adam, src/core/net.c): a linear layer whose
 * parameter block no other layer uses. */
static int adam_fusable(const nn_preset *p, int i)
{
    return p->layers[i].kind == NN_LAYER_LINEAR && !nn_layer_block_shared(p->layers, p->n_layers, i);
}

void nn_cost_fuse_adam(const nn_preset *p, nn_cost *c)
{
    double fused = 0;
    if (p->opt != NN_OPT_ADAM)
        return;
    for (int i = 0; i < p->n_layers && i < c->n_layers; i++) {
        if (!adam_fusable(p, i) || c->layers[i].params == 0)
            continue;
        double params = (double)c->layers[i].params;
        c->layers[i].bwd.bytes -= F * params;        /* dw and dbias never written */
        fused += params;
    }
    c->optimizer.bytes -= F * fused;                 /* nor read back by the optimiser */
    c->total.bytes -= 2.0 * F * fused;
    c->adam_fused_params = fused;
}

double nn_cost_forward_flops_per_sample(const nn_preset *p)
{
    nn_cost c;
    nn_cost_model(p, 1, &c);
    return c.forward.flops;
}
