/* src/core/layers/graph.c - the network as a graph (nnlab/layer.h): which
 * layer feeds which, resolved from the `input`, `inputs` and `weights` keys
 * as written. Inputs are always earlier layers (the checker refuses anything
 * else), so layer order is a topological order and every walk here is one
 * pass over the list. */
#include "layer_kind.h"

int nn_layer_source(const nn_layer_spec *layers, int i, int j)
{
    int ref = layers[i].input[j];
    if (ref == NN_FROM_DATA)
        return -1;
    return ref > 0 ? ref - 1 : i - 1;   /* 0: the previous layer, the data for layer1 */
}

int nn_layer_source_root(const nn_layer_spec *layers, int i, int j)
{
    int src = nn_layer_source(layers, i, j);
    while (src >= 0 && nn_layer_is_view(&layers[src]))
        src = nn_layer_source(layers, src, 0);
    return src;
}

int nn_layer_needs_dx(const nn_layer_spec *layers, int i, int j)
{
    return nn_layer_source_root(layers, i, j) >= 0;
}

int nn_layer_needs_any_dx(const nn_layer_spec *layers, int i)
{
    for (int j = 0; j < nn_layer_n_inputs(&layers[i]); j++)
        if (nn_layer_needs_dx(layers, i, j))
            return 1;
    return 0;
}

int nn_layer_is_chain(const nn_layer_spec *layers, int n)
{
    for (int i = 0; i < n; i++)
        if (nn_layer_n_inputs(&layers[i]) != 1 || nn_layer_source(layers, i, 0) != i - 1)
            return 0;
    return 1;
}

int nn_layer_param_owner(const nn_layer_spec *layers, int i)
{
    /* the checker allows only earlier owners, so this ends */
    while (layers[i].weights > 0 && layers[i].weights - 1 < i)
        i = layers[i].weights - 1;
    return i;
}

int nn_layer_block_shared(const nn_layer_spec *layers, int n, int i)
{
    int owner = nn_layer_param_owner(layers, i);
    for (int j = 0; j < n; j++)
        if (j != i && nn_layer_param_owner(layers, j) == owner)
            return 1;
    return 0;
}
