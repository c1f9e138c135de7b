/* src/cost.h - the cost model of one training step: per layer, the FLOPs of
 * forward and backward, the bytes each operation must read and write, and the
 * parameter count; then the loss and the optimiser over the flat arena.
 *
 * Counting rules (the unit tests check LeNet against numbers worked by hand):
 *  - a multiply-add is 2 FLOPs; a comparison, an add or a max is 1; relu is 1
 *    per element, tanh 1, mish 6 (exp, log1p, tanh, mul) forward; backward of
 *    an activation costs as much as its forward plus one multiply;
 *  - bytes are the float32 tensors an operation reads plus those it writes,
 *    each counted once per call (what a kernel must move at least);
 *  - the first working layer does not compute its input gradient, as the
 *    engine skips it (src/net.c);
 *  - flatten and reshape are free views. */
#ifndef NNLAB_COST_H
#define NNLAB_COST_H

#include <stddef.h>

#include "preset.h"

typedef struct nn_op_cost {
    double flops;
    double bytes;
} nn_op_cost;

typedef struct nn_layer_cost {
    char label[48];              /* "conv2d 3->6 k5", "relu" */
    nn_shape out_shape;
    size_t params;
    nn_op_cost fwd, bwd;         /* for the whole batch */
} nn_layer_cost;

typedef struct nn_cost {
    int batch;
    int n_layers;
    nn_layer_cost layers[NN_MAX_LAYERS];
    size_t params;
    nn_op_cost loss;             /* loss and its gradient */
    nn_op_cost optimizer;        /* one step over the arena */
    nn_op_cost total;            /* forward + backward + loss + optimiser */
    double input_bytes;          /* the batch copied to the device: samples and labels */
} nn_cost;

/* Models one training step of p (already checked) at batch size `batch`. */
void nn_cost_model(const nn_preset *p, int batch, nn_cost *out);

/* FLOPs of one sample's forward pass (the whole network). */
double nn_cost_forward_flops_per_sample(const nn_preset *p);

#endif
