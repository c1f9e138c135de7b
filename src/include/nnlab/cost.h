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
 *    engine skips it (nn_layer_first_working, layer.h);
 *  - flatten and reshape are free views.
 * Each layer's share is the layer table's (nn_layer_cost_model, layer.h): the
 * setup screen, explain and this model use the same numbers. */
#ifndef NNLAB_COST_H
#define NNLAB_COST_H

#include <stddef.h>

#include "nnlab/layer.h"
#include "nnlab/preset.h"

/* "relu", "pool2x2", ...: the names of the calibration cache */
const char *nn_op_class_name(nn_op_class c);

typedef struct nn_cost {
    int batch;
    int n_layers;
    nn_layer_cost layers[NN_MAX_LAYERS];
    size_t params;
    nn_op_cost forward;          /* the layers' forward passes (part of the total) */
    nn_op_cost loss;             /* loss and its gradient */
    nn_op_cost optimizer;        /* one step over the arena */
    nn_op_cost total;            /* forward + backward + loss + optimiser */
    double input_bytes;          /* the batch copied to the device: samples and labels */
    nn_op_class loss_class, optimizer_class;
    double loss_elems;           /* logits or predictions; the optimiser's are the params */
    double adam_fused_params;    /* parameters whose Adam update nn_cost_fuse_adam moved into
                                    their layer's backward (0: none) */
} nn_cost;

/* Models one training step of p (already checked) at batch size `batch`. */
void nn_cost_model(const nn_preset *p, int batch, nn_cost *out);

/* The step as a device that fuses Adam into the linear layers' backward runs
 * it (the fast CPU backend at small batches, decision 0161; the caller knows
 * when: nn_calibration.fused_adam_max_batch): a linear layer whose block is
 * its own and shared by no other has its gradient never stored, so its
 * backward writes no dw or dbias and the optimiser reads no gradient for
 * those parameters. The FLOPs do not change. Nothing for SGD. */
void nn_cost_fuse_adam(const nn_preset *p, nn_cost *c);

/* FLOPs of one sample's forward pass (the whole network). */
double nn_cost_forward_flops_per_sample(const nn_preset *p);

#endif
