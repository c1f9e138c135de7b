/* src/include/nnlab/layer.h - one layer of a sequential network: its kind, its
 * settings and shapes, and what it costs. Every kind is defined once, in the
 * layer table (src/core/layers/): its INI keys, shape inference, parameters,
 * FLOPs and bytes, op class, forward and backward. The functions below are
 * the table's public face, so that the preset reader, the network, the cost
 * model, explain and the lab all use the same numbers. */
#ifndef NNLAB_LAYER_H
#define NNLAB_LAYER_H

#include <stddef.h>

/* A per-sample shape (the batch axis excluded): (features), (C, L) or (C, H, W). */
typedef struct nn_shape {
    int rank;                    /* 1, 2 or 3 */
    int dim[3];
} nn_shape;

/* NN_LAYER_LINEAR, NN_LAYER_CONV2D, ...: one per line of layer_kinds.def, in
 * its order, where each kind's keys are noted. */
enum nn_layer_kind {
#define NN_KIND(KIND, name) NN_LAYER_##KIND,
#include "nnlab/layer_kinds.def"
    NN_LAYER_KIND_COUNT
};

/* linear's init key: PyTorch's default (kaiming_uniform with a = sqrt(5),
 * the bias U(+-1/sqrt(in))), or xavier_normal_ with `gain` (no bias init:
 * pytorch-tabnet's layers have none). */
enum nn_layer_init { NN_INIT_DEFAULT, NN_INIT_XAVIER_NORMAL };

typedef struct nn_layer_spec {
    enum nn_layer_kind kind;
    int in, out;                 /* linear: features; conv: channels */
    int kernel, stride, padding;
    float p;                     /* dropout probability */
    nn_shape shape;              /* reshape target */
    /* TabNet's keys; 0 is "not given" for each (the default) */
    int no_bias;                 /* linear: 1 for "bias = false" */
    int init;                    /* linear: enum nn_layer_init */
    float gain;                  /* linear, xavier_normal: its gain (0: 1) */
    float momentum, eps;         /* batchnorm (0: 0.1, 1e-5) */
    int virtual_batch;           /* batchnorm: ghost batch rows (0: the whole batch) */
    float sparsity;              /* sparsemax: lambda of the entropy term */
    nn_shape in_shape, out_shape;/* filled by shape inference */
    /* The graph (docs/decisions/0037-networks-are-graphs.md): where the inputs come from, as written:
     * 0 = the previous layer (the data for layer1), N = [layerN] (1-based),
     * NN_FROM_DATA = the data. Only two-input kinds use input[1]. */
    int input[2];
    int weights;                 /* N: share [layerN]'s parameters; 0: own */
    float scale;                 /* add: y = scale (a + b); 0 until filled (1) */
    int from, to;                /* slice: features [from, to) */
    nn_shape in2_shape;          /* two-input kinds: the second input's, filled */
} nn_layer_spec;

#define NN_FROM_DATA (-1)

/* FLOPs and the float32 bytes an operation must read and write (cost.h has
 * the counting rules). */
typedef struct nn_op_cost {
    double flops;
    double bytes;
} nn_op_cost;

/* What an operation is, for pricing (explain.h): a matrix product runs at
 * the rate measured for products of its size, every other op at the cost
 * per element measured for its kind (calibrate.h), each no faster than its
 * bytes at the streaming bandwidth. */
typedef enum nn_op_class {
    NN_OP_NONE,                  /* a view (flatten, reshape): no operation; also the
                                    layers no calibration measures yet (batchnorm, glu,
                                    sparsemax): their FLOPs at the peak, their bytes */
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

/* One layer's share of a training step, for a whole batch. */
typedef struct nn_layer_cost {
    char label[48];              /* "conv2d 3->6 k5", "relu" */
    nn_shape out_shape;
    size_t params;
    nn_op_cost fwd, bwd;         /* for the whole batch */
    nn_op_class op_class;        /* how fwd and bwd are priced (each one call) */
    double elems;                /* elements the per-element cost applies to (not for
                                    matrix products or views) */
    char wiring[64];             /* a graph's: "<- layer3, layer5", "weights of layer2";
                                    "" for a layer reading the one before with its own */
} nn_layer_cost;

/* "linear", "conv2d", ...: the INI name of a kind ("?" if out of range). */
const char *nn_layer_kind_name(enum nn_layer_kind k);

/* "3x32x32", "400" */
void nn_shape_format(const nn_shape *s, char *buf, size_t len);
/* The number of values; -1 for a malformed shape or one that overflows a long. */
long nn_shape_count(const nn_shape *s);

/* Trainable parameters of a layer whose shapes are inferred: weights, then
 * bias (each 0 for a parameter-free kind). */
size_t nn_layer_weights(const nn_layer_spec *s);
size_t nn_layer_bias(const nn_layer_spec *s);
size_t nn_layer_params(const nn_layer_spec *s);

/* 1 for flatten and reshape: they relabel the axes of their input and do no work. */
int nn_layer_is_view(const nn_layer_spec *s);

/* The first layer that is not a view. No layer before it does work, so it
 * need not compute its input's gradient: the engine skips it and the cost
 * model does not count it (for an MLP that is the largest product of the
 * backward pass). */
int nn_layer_first_working(const nn_layer_spec *layers, int n);

/* ---- the network as a graph (src/core/layers/graph.c) ----------------------
 * A layer's inputs are earlier layers, so the layer order is a topological
 * order and a network has no cycles; the last layer is the output. */

/* 2 for the two-input kinds (add, mul), else 1. */
int nn_layer_n_inputs(const nn_layer_spec *s);
/* The 0-based layer feeding input j of layer i, or -1 for the data. */
int nn_layer_source(const nn_layer_spec *layers, int i, int j);
/* Follows views (flatten, reshape) back to the layer that owns the buffer
 * layer i's input j reads: -1 when that is the data. */
int nn_layer_source_root(const nn_layer_spec *layers, int i, int j);
/* 1 when layer i's backward must compute the gradient of its input j: the
 * input is not the data itself or a view of it (nn_layer_first_working's rule
 * for a chain). */
int nn_layer_needs_dx(const nn_layer_spec *layers, int i, int j);
/* 1 when any input of layer i needs its gradient. */
int nn_layer_needs_any_dx(const nn_layer_spec *layers, int i);
/* 1 when every layer reads the one before it (a sequential network). */
int nn_layer_is_chain(const nn_layer_spec *layers, int n);
/* The 0-based layer whose parameters layer i uses: i itself, or the owner
 * its `weights` key names (followed to the end). */
int nn_layer_param_owner(const nn_layer_spec *layers, int i);
/* 1 when layer i's parameter block has another user among the n layers (its
 * owner's block named by some layer's `weights`): its gradient is then a sum
 * of several backwards, so no one layer's backward may update it alone (the
 * fused Adam: the engine's offer_adam, the model's nn_cost_fuse_adam). */
int nn_layer_block_shared(const nn_layer_spec *layers, int n, int i);

/* Fills c with what layer s costs over a batch of `batch` samples; need_dx
 * says whether its backward computes the input gradient (see above). */
void nn_layer_cost_model(const nn_layer_spec *s, int batch, int need_dx, nn_layer_cost *c);

#endif
