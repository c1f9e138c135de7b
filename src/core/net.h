/* src/core/net.h - a network built from a preset's layer list on one
 * backend (a chain, or a graph whose inputs are earlier layers: layer order
 * is the forward order, its reverse the backward's): flat parameter, gradient and optimiser-state arenas, activation
 * buffers sized for the job's batch, and one training step as a sequence of
 * backend operations. Everything is allocated in nn_net_create; a step
 * allocates nothing. */
#ifndef NNLAB_NET_H
#define NNLAB_NET_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "nnlab/preset.h"

typedef struct nn_layer {
    nn_layer_spec spec;
    size_t in_floats, out_floats;    /* per sample */
    size_t n_weights, n_bias;        /* parameters, 0 for parameter-free layers */
    size_t param_offset;             /* into the arenas: weights, then bias */
    size_t n_state, state_offset;    /* untrained state (nn_layer_def.state) in net->state */
    float *y;                        /* own output buffer (max_batch, out_floats); NULL when aliased */
    int param_owner;                 /* the layer whose parameters it uses (itself, or by weights =) */
    int source[2];                   /* the layers its inputs read (0-based), -1: the batch */
    int root[2];                     /*   the same with views followed: whose gradient buffer */
    float *dy;                       /* a graph's: the gradient of its output (max_batch,
                                        out_floats); a view's is its root's; NULL in a chain */
    int grads_final_here;            /* the first user in layer order of its parameter block:
                                        after its backward the block's gradient is final */
    int block_shared;                /* its parameter block has another user (weights =) */
} nn_layer;

typedef struct nn_net {
    nn_backend *b;
    int n_layers;
    nn_layer layers[NN_MAX_LAYERS];
    int first_working;               /* layers before it are views: it needs no input
                                        gradient (nn_layer_first_working) */
    int max_batch;
    size_t sample_floats;            /* input floats per sample */
    int classes;                     /* > 0: cross-entropy over classes */
    int target_width;                /* MSE width */
    enum nn_loss_kind loss;

    size_t n_params;                 /* arena length: parameters plus alignment padding */
    size_t n_trainable;              /* parameters proper */
    float *params, *grads;           /* (n_params) flat arenas, backend memory */
    float *opt_a, *opt_b;            /* SGD: velocity, NULL; Adam: m, v */
    long opt_t;                      /* optimiser steps taken (t of SGD and Adam) */
    size_t n_state;                  /* state arena length (16-float aligned blocks) */
    float *state;                    /* (n_state) the layers' state: running statistics */

    float *x;                        /* (max_batch, sample_floats) input batch */
    int32_t *labels;                 /* (max_batch) classification labels */
    float *targets;                  /* (max_batch, target_width) regression targets */
    float *grad_a, *grad_b;          /* ping-pong activation gradients (max_batch, widest) */
    void *ws;                        /* convolution workspace, the largest any layer needs */
    size_t ws_bytes;
    float *stats;                    /* (2) loss accumulator: sum of batch losses, correct count */

    /* Where each layer read and wrote in the last forward (aliases resolved). */
    const float *in_ptr[NN_MAX_LAYERS];
    float *out_ptr[NN_MAX_LAYERS];

    uint64_t seed;                   /* dropout masks */
    long sample_offset;              /* a data-parallel rank's first sample in the global
                                        batch: its dropout masks are those of samples
                                        sample_offset.. of one rank's (0: a plain job) */

    int graph;                       /* not a chain (nn_layer_is_chain): each layer's output
                                        has its gradient buffer (dy), grad_a and grad_b are
                                        the scratch of gradients to be summed */
    float *param_scratch;            /* (the largest shared block): a shared parameter's
                                        second gradient, summed with accumulate */
    size_t param_scratch_floats;

    /* Set by a caller that acts on each block of gradients as soon as the
     * backward has finished it (data-parallel ranks start its sum): called
     * with the owner layer of the block, in backward order. NULL: none. */
    void (*grads_ready)(void *ctx, int owner);
    void *grads_ready_ctx;

    /* Adam fused into the next backward (nn_net_fuse_adam): its step's
     * hyperparameters and t, and the layers whose blocks that backward
     * updated, which nn_net_optimize then skips. */
    int fuse_adam;
    nn_adam_hyper fused_h;
    long fused_t;
    unsigned char adam_done[NN_MAX_LAYERS];
    int fused_layers;                /* how many, in the last backward */
} nn_net;

/* Builds the network of p (already checked by nn_preset_check) on backend b,
 * for batches of at most max_batch, and initialises the parameters like
 * PyTorch (kaiming-uniform a=sqrt(5) weights, U(+-1/sqrt(fan_in)) biases, or
 * the kind's own init: xavier_normal, batch norm's 1 and 0) and the layers'
 * state from seed. On failure returns -1, frees what it made, message in err. */
int nn_net_create(nn_net *net, nn_backend *b, const nn_preset *p, int max_batch,
                  uint64_t seed, char *err, size_t err_len);
void nn_net_destroy(nn_net *net);

/* Forward over the n samples in net->x; training enables dropout and batch
 * norm's batch statistics (and updates its running ones). step makes
 * the dropout mask unique per step. Returns the output (n, out) in backend
 * memory, or NULL with the backend's message. */
float *nn_net_forward(nn_net *net, int n, int training, long step);

/* Gives the backend the values of training step `step` (backend.h set_step):
 * its dropout counters' base and the optimiser's next t. Called before every
 * training step, run eagerly or replayed from a graph. */
int nn_net_set_step(nn_net *net, long step);

/* Adds the loss of output `out` against labels/targets to net->stats, and
 * when dout is given (training) the layers' own terms (nn_layer_def.aux_loss,
 * from their outputs of the last forward) and the loss gradient into dout.
 * nn_net_backward backpropagates through every layer into net->grads. */
int nn_net_loss(nn_net *net, int n, const float *out, float *dout);
int nn_net_backward(nn_net *net, int n, long step, const float *dout);

/* Lets the next nn_net_backward apply Adam itself to the blocks of the layers
 * that have a fused op for it (linear layers at small batches on the fast
 * CPU backend), with the hyper-parameters nn_net_optimize will be given (p,
 * lr); nn_net_optimize then updates only the rest. The caller promises that
 * nothing reads the gradients between the two (data-parallel ranks, which
 * sum them, never call it). The results are the same bits either way. */
void nn_net_fuse_adam(nn_net *net, const nn_preset *p, float lr);

/* One optimiser step over the whole arena with the preset's hyper-parameters
 * (lr as given, so that a job can override it). */
int nn_net_optimize(nn_net *net, const nn_preset *p, float lr);

/* The gradient of the loss w.r.t. the network output lives here after
 * nn_net_loss (the first ping-pong buffer). */
float *nn_net_dout(nn_net *net);

/* Trainable parameter count (no padding). */
size_t nn_net_param_count(const nn_net *net);

/* The bytes nn_net_create allocates for p (checked) at max_batch, worked out
 * by the same plan without allocating: the engine's memory estimate
 * (nnlab/engine.h nn_job_memory_estimate) adds these up. */
typedef struct nn_net_bytes {
    double params;               /* parameters, gradients and the optimiser's state */
    double batch;                /* input, labels or targets, each layer's output,
                                    the activation gradients */
    double workspace;            /* the convolutions' (b's); 0 when b is NULL */
    double init_host;            /* the host copy the initial parameters and state are
                                    drawn into before their upload (net.c): held with the
                                    arenas while the network is made, whatever the device */
    int big_layer;               /* the layer with the most parameters (0-based), -1: none */
    double big_layer_bytes;      /*   its part of params */
} nn_net_bytes;
/* b: the backend whose convolution workspace counts (NULL: not counted). */
void nn_net_bytes_of(const nn_preset *p, int max_batch, nn_backend *b, nn_net_bytes *out);

#endif
