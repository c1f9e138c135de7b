/* src/core/preset_graph.c - the graph's rules for a preset's layers
 * (preset_schema.h): where each layer's inputs and shared weights come from,
 * and that the output uses every layer. A layer may read only earlier layers
 * (or the data), so the list order is a topological order and a cycle can
 * only be written as a reference to the layer itself or a later one: that is
 * what the messages say. */
#include "preset_schema.h"
#include "layer_kind.h"

#include <stdio.h>
#include <string.h>

/* The key a layer's inputs are written under. */
static const char *input_key(const nn_layer_spec *l)
{
    return nn_layer_n_inputs(l) == 2 ? "inputs" : "input";
}

static int check_ref(const nn_checker *c, const nn_preset *p, int i, const char *key, int ref,
                     const char *what)
{
    const nn_layer_spec *l = &p->layers[i];
    if (ref > p->n_layers)
        return nn_layer_error(c, i, l, key, "no [layer%d]: the preset has layer1 .. layer%d", ref,
                              p->n_layers);
    if (ref == i + 1)
        return nn_layer_error(c, i, l, key, "names the layer itself: %s must be an earlier layer (a network has no cycles)",
                              what);
    if (ref > i + 1)
        return nn_layer_error(c, i, l, key, "[layer%d] comes later: %s must be an earlier layer (a network has no cycles)",
                              ref, what);
    return 0;
}

static nn_shape source_shape(const nn_preset *p, int i, int j)
{
    int src = nn_layer_source(p->layers, i, j);
    return src < 0 ? nn_preset_input_shape(p) : p->layers[src].out_shape;
}

int nn_graph_check_inputs(const nn_checker *c, nn_preset *p, int i)
{
    nn_layer_spec *l = &p->layers[i];
    int n = nn_layer_n_inputs(l);
    for (int j = 0; j < n; j++) {
        int ref = l->input[j];
        if (n == 1 && j == 0 && ref == 0)
            continue;                    /* the previous layer, or the data */
        if (ref != NN_FROM_DATA && check_ref(c, p, i, input_key(l), ref, "an input") != 0)
            return -1;
    }
    l->in_shape = source_shape(p, i, 0);
    if (n == 2)
        l->in2_shape = source_shape(p, i, 1);
    return 0;
}

static void describe(const nn_layer_spec *l, char *buf, size_t len)
{
    const nn_layer_def *d = nn_layer_def_of(l->kind);
    if (d && d->label)
        d->label(l, buf, len);
    else
        snprintf(buf, len, "%s", nn_layer_kind_name(l->kind));
}

/* Same kind and the same parameter shapes: in, out and the window. */
static int same_params(const nn_layer_spec *a, const nn_layer_spec *b)
{
    return a->kind == b->kind && a->in == b->in && a->out == b->out && a->kernel == b->kernel &&
           nn_layer_weights(a) == nn_layer_weights(b) && nn_layer_bias(a) == nn_layer_bias(b);
}

int nn_graph_check_weights(const nn_checker *c, const nn_preset *p, int i)
{
    const nn_layer_spec *l = &p->layers[i];
    char mine[64], theirs[64];
    if (l->weights == 0)
        return 0;
    if (l->weights == NN_FROM_DATA)
        return nn_layer_error(c, i, l, "weights", "the data has no weights: name a layer, like layer2");
    if (check_ref(c, p, i, "weights", l->weights, "the layer whose weights it shares") != 0)
        return -1;
    const nn_layer_spec *owner = &p->layers[l->weights - 1];
    if (same_params(owner, l))
        return 0;
    describe(l, mine, sizeof mine);
    describe(owner, theirs, sizeof theirs);
    if (owner->kind != l->kind)
        return nn_layer_error(c, i, l, "weights", "[layer%d] is of type %s, this one of type %s: only layers of the same type share weights",
                              l->weights, nn_layer_kind_name(owner->kind), nn_layer_kind_name(l->kind));
    return nn_layer_error(c, i, l, "weights", "[layer%d] is %s, this one %s: shared weights need the same shapes",
                          l->weights, theirs, mine);
}

int nn_graph_check_used(const nn_checker *c, const nn_preset *p)
{
    char used[NN_MAX_LAYERS] = { 0 };
    int last = p->n_layers - 1;
    used[last] = 1;
    for (int i = last; i >= 0; i--) {
        if (!used[i])
            continue;
        for (int j = 0; j < nn_layer_n_inputs(&p->layers[i]); j++) {
            int src = nn_layer_source(p->layers, i, j);
            if (src >= 0)
                used[src] = 1;
        }
    }
    for (int i = 0; i < last; i++)
        if (!used[i])
            return nn_layer_error(c, i, &p->layers[i], "type", "the output ([layer%d], the last layer) does not use this layer: name it in a later layer's input or inputs, or remove it",
                                  last + 1);
    return 0;
}
