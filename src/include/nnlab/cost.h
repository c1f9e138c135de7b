/* src/include/nnlab/cost.h - the cost model of one training step: per layer, the FLOPs of
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

#include "nnlab/preset.h"

typedef struct nn_op_cost {
    double flops;
    double bytes;
} nn_op_cost;

/* What an operation is, for pricing (explain.h): a matrix product runs at
 * the rate measured for products of its size, every other op at the cost
 * per element measured for its kind (calibrate.h), each no faster than its
 * bytes at the streaming bandwidth. */
typedef enum nn_op_class {
    NN_OP_NONE,                  /* a view (flatten, reshape): no operation */
    NN_OP_LINEAR,                /* one linear_forward / linear_backward call */
    NN_OP_CONV,                  /* one conv2d_forward / conv2d_backward call */
    NN_OP_RELU,                  /* elements: the outputs */
    NN_OP_TANH,
    NN_OP_MISH,
    NN_OP_DROPOUT,
    NN_OP_POOL2X2,               /* 2x2 max pooling, stride 2; elements: the inputs */
    NN_OP_POOL,                  /* any other window (1-D pools, max over length); the inputs */
    NN_OP_SOFTMAX_XENT,          /* elements: the logits */
    NN_OP_MSE,                   /* elements: the predictions */
    NN_OP_SGD,                   /* elements: the parameters (with momentum or without) */
    NN_OP_ADAM,
    NN_OP_CLASSES
} nn_op_class;

/* "relu", "pool2x2", ...: the names of the calibration cache */
const char *nn_op_class_name(nn_op_class c);

typedef struct nn_layer_cost {
    char label[48];              /* "conv2d 3->6 k5", "relu" */
    nn_shape out_shape;
    size_t params;
    nn_op_cost fwd, bwd;         /* for the whole batch */
    nn_op_class op_class;        /* how fwd and bwd are priced (each one call) */
    double elems;                /* elements the per-element cost applies to (not for
                                    matrix products or views) */
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
    nn_op_class loss_class, optimizer_class;
    double loss_elems;           /* logits or predictions; the optimiser's are the params */
} nn_cost;

/* Models one training step of p (already checked) at batch size `batch`. */
void nn_cost_model(const nn_preset *p, int batch, nn_cost *out);

/* FLOPs of one sample's forward pass (the whole network). */
double nn_cost_forward_flops_per_sample(const nn_preset *p);

#endif
