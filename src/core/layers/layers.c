/* src/core/layers/layers.c - the layer table (layer_kind.h): the entries by
 * kind, the keys of [layerN], and the public queries of nnlab/layer.h that
 * answer from it. */
#include "layer_kind.h"
#include "util.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define F 4.0                    /* bytes per float32 */

/* Indexed by kind: an explicit list (nnlab/layer_kinds.def), not
 * self-registration. */
static const nn_layer_def *const table[NN_LAYER_KIND_COUNT] = {
#define NN_KIND(KIND, name) [NN_LAYER_##KIND] = &nn_layer_##name##_def,
#include "nnlab/layer_kinds.def"
};

const nn_layer_def *nn_layer_def_of(enum nn_layer_kind k)
{
    return (unsigned)k < NN_LAYER_KIND_COUNT ? table[k] : NULL;
}

const char *nn_layer_kind_name(enum nn_layer_kind k)
{
    const nn_layer_def *d = nn_layer_def_of(k);
    return d ? d->name : "?";
}

/* ---- keys ---------------------------------------------------------------------- */

/* `in` is optional for every kind: inferred when absent, checked when given. */
#define LF(f) offsetof(nn_layer_spec, f)
const nn_layer_key_def nn_layer_keys[NN_LAYER_KEY_COUNT] = {
    [NN_KEY_IN] = { "in", NN_V_INT, LF(in), NN_CLOSED(1, NN_MAX_DIM), 0 },
    [NN_KEY_OUT] = { "out", NN_V_INT, LF(out), NN_CLOSED(1, NN_MAX_DIM), 0 },
    [NN_KEY_KERNEL] = { "kernel", NN_V_INT, LF(kernel), NN_CLOSED(1, NN_MAX_DIM), 0 },
    [NN_KEY_STRIDE] = { "stride", NN_V_INT, LF(stride), NN_CLOSED(1, NN_MAX_DIM), 0 },
    [NN_KEY_PADDING] = { "padding", NN_V_INT, LF(padding), NN_CLOSED(0, NN_MAX_DIM), 0 },
    [NN_KEY_P] = { "p", NN_V_FLOAT, LF(p), NN_UNIT_HALF_OPEN, 0 },
    [NN_KEY_SHAPE] = { "shape", NN_V_SHAPE, LF(shape), NN_CLOSED(0, 0) /* unused */, 0 },
    [NN_KEY_INPUT] = { "input", NN_V_LAYER, LF(input), NN_CLOSED(0, 0) /* unused */, 1 },
    [NN_KEY_INPUTS] = { "inputs", NN_V_LAYERS, LF(input), NN_CLOSED(0, 0) /* unused */, 0 },
    [NN_KEY_WEIGHTS] = { "weights", NN_V_LAYER, LF(weights), NN_CLOSED(0, 0) /* unused */, 1 },
    [NN_KEY_SCALE] = { "scale", NN_V_FLOAT, LF(scale), NN_ABOVE(0), 1 },
    [NN_KEY_FROM] = { "from", NN_V_INT, LF(from), NN_CLOSED(0, NN_MAX_DIM), 0 },
    [NN_KEY_TO] = { "to", NN_V_INT, LF(to), NN_CLOSED(1, NN_MAX_DIM), 0 },
    [NN_KEY_BIAS] = { "bias", NN_V_NOT_BOOL, LF(no_bias), NN_CLOSED(0, 0) /* unused */, 1 },
    [NN_KEY_INIT] = { "init", NN_V_INIT, LF(init), NN_CLOSED(0, 0) /* unused */, 1 },
    [NN_KEY_GAIN] = { "gain", NN_V_FLOAT, LF(gain), NN_ABOVE(0), 1 },
    [NN_KEY_MOMENTUM] = { "momentum", NN_V_FLOAT, LF(momentum), { 0, 1, 1, 0 } /* (0, 1] */, 1 },
    [NN_KEY_VIRTUAL_BATCH] = { "virtual_batch", NN_V_INT, LF(virtual_batch), NN_CLOSED(0, NN_MAX_DIM), 1 },
    [NN_KEY_EPS] = { "eps", NN_V_FLOAT, LF(eps), NN_ABOVE(0), 1 },
    [NN_KEY_SPARSITY] = { "sparsity", NN_V_FLOAT, LF(sparsity), NN_AT_LEAST(0), 1 },
};

const nn_layer_key_def *nn_find_layer_key(const char *key)
{
    for (int k = 0; k < NN_LAYER_KEY_COUNT; k++)
        if (strcmp(nn_layer_keys[k].key, key) == 0)
            return &nn_layer_keys[k];
    return NULL;
}

unsigned nn_layer_keys_of(enum nn_layer_kind kind)
{
    const nn_layer_def *d = nn_layer_def_of(kind);
    nn_layer_spec probe = { .kind = kind };
    unsigned keys;
    if (!d)
        return 0;
    keys = d->keys;
    if (nn_layer_n_inputs(&probe) == 1)
        keys |= NN_KEY(NN_KEY_INPUT);
    if (d->params)
        keys |= NN_KEY(NN_KEY_WEIGHTS);
    return keys;
}

int nn_layer_takes_key(enum nn_layer_kind kind, const char *key)
{
    const nn_layer_key_def *k = nn_find_layer_key(key);
    return k && (nn_layer_keys_of(kind) & NN_KEY(k - nn_layer_keys)) != 0;
}

void nn_layer_key_list(enum nn_layer_kind kind, int required, char *buf, size_t len)
{
    const nn_layer_def *d = nn_layer_def_of(kind);
    const char *names[NN_LAYER_KEY_COUNT + 1];
    unsigned mask = d ? (required ? d->required : nn_layer_keys_of(kind)) : 0;
    int n = 0;
    if (!required)
        names[n++] = "type";
    for (int k = 0; k < NN_LAYER_KEY_COUNT; k++)
        if (mask & NN_KEY(k))
            names[n++] = nn_layer_keys[k].key;
    nn_join_names(names, n, buf, len);
}

/* ---- public queries ----------------------------------------------------------- */

static void param_counts(const nn_layer_spec *s, size_t *weights, size_t *bias)
{
    const nn_layer_def *d = nn_layer_def_of(s->kind);
    *weights = *bias = 0;
    if (d && d->params)
        d->params(s, weights, bias);
}

size_t nn_layer_weights(const nn_layer_spec *s)
{
    size_t w, b;
    param_counts(s, &w, &b);
    return w;
}

size_t nn_layer_bias(const nn_layer_spec *s)
{
    size_t w, b;
    param_counts(s, &w, &b);
    return b;
}

size_t nn_layer_params(const nn_layer_spec *s)
{
    size_t w, b;
    param_counts(s, &w, &b);
    return w + b;
}

int nn_layer_n_inputs(const nn_layer_spec *s)
{
    return s->kind == NN_LAYER_ADD || s->kind == NN_LAYER_MUL ? 2 : 1;
}

int nn_layer_is_view(const nn_layer_spec *s)
{
    const nn_layer_def *d = nn_layer_def_of(s->kind);
    return d && d->view;
}

int nn_layer_first_working(const nn_layer_spec *layers, int n)
{
    int i = 0;
    while (i < n && nn_layer_is_view(&layers[i]))
        i++;
    return i;
}

void nn_layer_cost_model(const nn_layer_spec *s, int batch, int need_dx, nn_layer_cost *c)
{
    const nn_layer_def *d = nn_layer_def_of(s->kind);
    memset(c, 0, sizeof *c);
    c->out_shape = s->out_shape;
    c->params = nn_layer_params(s);
    if (!d) {
        nn_strlcpy(c->label, "?", sizeof c->label);
        return;
    }
    if (d->label)
        d->label(s, c->label, sizeof c->label);
    else
        nn_strlcpy(c->label, d->name, sizeof c->label);
    if (d->cost)
        d->cost(s, (double)batch, need_dx, c);
}

/* PyTorch: kaiming_uniform_(a=sqrt(5)) gives bound = gain*sqrt(3/fan_in) with
 * gain = sqrt(2/(1+5)), i.e. 1/sqrt(fan_in); the bias uses the same bound. */
void nn_layer_init_default(const nn_layer_spec *s, nn_rng *rng, float *w)
{
    size_t weights, bias;
    param_counts(s, &weights, &bias);
    if (weights == 0)
        return;
    float bound = 1.0f / sqrtf((float)(weights / (size_t)s->out));
    for (size_t j = 0; j < weights + bias; j++)
        w[j] = nn_rng_range(rng, -bound, bound);
}

/* ---- cost.h's rules, shared by the kinds ----------------------------------------- */

void nn_cost_matrix(nn_layer_cost *c, double rows, double cols, double k, double in_floats,
                    int need_dx)
{
    double weights = cols * k, outs = rows * cols, macs = outs * k;
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

void nn_cost_elementwise(nn_layer_cost *c, double outs, double flops, int need_dx,
                         nn_op_class op_class)
{
    c->fwd = (nn_op_cost){ outs * flops, F * 2.0 * outs };
    c->op_class = op_class;
    c->elems = outs;
    if (need_dx)
        c->bwd = (nn_op_cost){ outs * (flops + 1.0), F * 3.0 * outs };
}
