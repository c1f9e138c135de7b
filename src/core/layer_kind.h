/* src/core/layer_kind.h - the layer table: everything a layer kind is, in one
 * entry (kann's ops, as a table). Each entry lives in src/core/layers/ with
 * its family (linear.c, conv.c, pool.c, activation.c, dropout.c, view.c,
 * norm.c, glu.c, sparsemax.c, merge.c, slice.c); nnlab/layer_kinds.def
 * lists the kinds once, and the enum, the externs below and layers.c's table
 * come from it. The preset reader and checker, the network and the cost
 * model only walk the table: adding a kind is its line in
 * nnlab/layer_kinds.def, its entry in layers/<family>.c, and its backend
 * ops. Private to src/core. */
#ifndef NNLAB_LAYER_KIND_H
#define NNLAB_LAYER_KIND_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "nnlab/layer.h"
#include "preset_schema.h"
#include "rng.h"

/* ---- INI keys -------------------------------------------------------------- */

/* The keys of [layerN] besides `type`, in the order messages list them and the
 * writer writes them. A kind names the keys it takes and those it must give. */
enum nn_layer_key {
    NN_KEY_IN, NN_KEY_OUT, NN_KEY_KERNEL, NN_KEY_STRIDE, NN_KEY_PADDING, NN_KEY_P, NN_KEY_SHAPE,
    /* the graph's: input (every one-input kind), weights (every kind with
     * parameters): nn_layer_keys_of adds them; inputs, scale, from, to are
     * the kinds' own */
    NN_KEY_INPUT, NN_KEY_INPUTS, NN_KEY_WEIGHTS, NN_KEY_SCALE, NN_KEY_FROM, NN_KEY_TO,
    NN_KEY_BIAS, NN_KEY_INIT, NN_KEY_GAIN, NN_KEY_MOMENTUM, NN_KEY_VIRTUAL_BATCH, NN_KEY_EPS,
    NN_KEY_SPARSITY,
    NN_LAYER_KEY_COUNT
};
#define NN_KEY(k) (1u << (k))

typedef struct nn_layer_key_def {
    const char *key;
    enum nn_vtype type;
    size_t off;                  /* into nn_layer_spec */
    nn_range r;
    int zero_unset;              /* 0 in the spec means "not given": the checker skips it,
                                    the writer leaves it out (the TabNet keys) */
} nn_layer_key_def;

extern const nn_layer_key_def nn_layer_keys[NN_LAYER_KEY_COUNT];
/* The key named `key`, or NULL. */
const nn_layer_key_def *nn_find_layer_key(const char *key);
/* NN_KEY() bits of the keys kind k takes: its own plus the graph's. */
unsigned nn_layer_keys_of(enum nn_layer_kind k);
/* 1 when a layer of kind k takes the key named `key` (besides type). */
int nn_layer_takes_key(enum nn_layer_kind k, const char *key);

/* ---- one call of forward or backward ------------------------------------------ */

/* What the network hands a kind's forward or backward: the backend, the layer,
 * the batch and the buffers it keeps for the layer. */
/* Adam applied by a layer's backward to its own parameter block (weights,
 * then bias, as the arena holds them), when the network fuses the
 * optimiser into the backward (nn_net_fuse_adam). */
typedef struct nn_layer_adam {
    float *param, *m, *v;        /* the block in the parameter and moment arenas */
    const nn_adam_hyper *h;
    long t;
    int *done;                   /* set to 1 by a backward that applied it */
} nn_layer_adam;

typedef struct nn_layer_call {
    nn_backend *b;
    const nn_layer_spec *s;
    int n;                       /* samples in the batch */
    size_t count;                /* n * output values per sample: elementwise ops */
    const float *w, *bias;       /* (weights), (bias); NULL without parameters */
    float *dw, *dbias;           /* their gradients, written (not added to) by backward */
    void *ws;                    /* the convolution workspace */
    float *state;                /* the layer's state (nn_layer_def.state); NULL: none */
    int training;                /* dropout drops only when training */
    uint64_t seed, counter;      /* dropout's mask: seed, and a counter unique per (step, layer) */
    const float *x2;             /* two-input kinds: the second input */
    float *dx2;                  /*   and its gradient in backward (NULL: not wanted) */
    /* In backward, when set, the layer may apply Adam to its block at once
     * through a fused op instead of writing dw and dbias, and says so in
     * *adam->done; it may as well write the gradients (the optimiser then
     * runs as usual). NULL: write them. */
    const nn_layer_adam *adam;
} nn_layer_call;

/* ---- the entry --------------------------------------------------------------- */

typedef struct nn_layer_def {
    const char *name;            /* the INI type */
    unsigned keys, required;     /* NN_KEY() bits: the keys it takes, those it must give */
    int view;                    /* relabels its input's axes: no work, no buffer of its own */

    /* After the reader read the keys: defaults that depend on other keys (a
     * pool's stride is its kernel). NULL: none. */
    void (*fill_defaults)(nn_layer_spec *s);
    /* Shape inference: checks what arrives (rank, `in`, which it fills when
     * absent) and gives the output shape; errors name [layer i+1] and a key. */
    int (*infer)(const nn_checker *c, int i, nn_layer_spec *s, nn_shape in, nn_shape *out);
    /* Parameters: weights, then bias, in the flat arena. NULL: none. */
    void (*params)(const nn_layer_spec *s, size_t *weights, size_t *bias);
    /* Initial parameters into w (weights, then bias, in the host copy of the
     * arena) and the initial state into state (NULL without state), drawing
     * from rng. NULL: PyTorch's default, U(+-1/sqrt(fan_in)) for both, fan_in
     * = weights / out. */
    void (*init)(const nn_layer_spec *s, nn_rng *rng, float *w, float *state);
    /* State: floats the layer keeps between steps that are not trained
     * (batch norm's running mean and variance), into *floats. Updated by a
     * training forward, read by an eval forward. NULL: none. */
    void (*state)(const nn_layer_spec *s, size_t *floats);
    /* A term the layer adds to the training loss: stats[0] += it, in backend
     * memory as the loss ops add theirs, from the layer's output y of the
     * last forward; its gradient is the layer backward's own business.
     * NULL: none. */
    int (*aux_loss)(const nn_layer_call *c, const float *y, float *stats);
    /* "conv2d 3->6 k5". NULL: the name alone. */
    void (*label)(const nn_layer_spec *s, char *buf, size_t len);
    /* FLOPs and bytes of forward and backward over n samples, the op class and
     * the elements a per-element price applies to (cost.h's rules). NULL: free. */
    void (*cost)(const nn_layer_spec *s, double n, int need_dx, nn_layer_cost *c);
    /* Bytes of backend workspace for a batch of n into *bytes; -1 when the
     * backend cannot run the layer at that batch (b->last_error says why).
     * NULL: none. */
    int (*workspace)(nn_backend *b, const nn_layer_spec *s, int n, size_t *bytes);
    /* The backend calls. backward gets dx NULL when the input gradient is not
     * needed; a kind without parameters is then not called at all. */
    int (*forward)(const nn_layer_call *c, const float *x, float *y);
    int (*backward)(const nn_layer_call *c, const float *x, const float *y, const float *dy,
                    float *dx);
} nn_layer_def;

/* The entry of kind k; NULL when k is not a kind. */
const nn_layer_def *nn_layer_def_of(enum nn_layer_kind k);

/* The entries, one per kind: nn_layer_<name>_def for each line of
 * nnlab/layer_kinds.def. */
#define NN_KIND(KIND, name) extern const nn_layer_def nn_layer_##name##_def;
#include "nnlab/layer_kinds.def"

/* ---- helpers the entries share ---------------------------------------------- */

/* "type, in and out": the keys kind k takes, or (required) those it must give. */
void nn_layer_key_list(enum nn_layer_kind k, int required, char *buf, size_t len);

/* Shape inference's messages: "WHERE: [layerN] key = value: why", the value
 * read back from the spec (the kind's name for "type"). */
int nn_layer_error(const nn_checker *c, int i, const nn_layer_spec *l, const char *key,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* "the data gives" for the first layer, "the previous layer gives" after;
 * "layer3 gives" when the checker set another source for layer i with
 * nn_layer_set_from (0-based source, -1: the data). */
const char *nn_layer_from(int i);
void nn_layer_set_from(int i, int source);
/* The input must have this rank; the message says which layer to add. */
int nn_layer_need_rank(const nn_checker *c, int i, const nn_layer_spec *l, nn_shape in, int rank);
/* `in` against what arrives (features, or channels): filled when absent (0). */
int nn_layer_check_in(const nn_checker *c, int i, nn_layer_spec *l, nn_shape in);
/* *out = d[0..rank), or an error when that is more than NN_MAX_VALUES values. */
int nn_layer_out_shape(const nn_checker *c, int i, const nn_layer_spec *l, int rank,
                       const long *d, nn_shape *out);

/* The infer of an elementwise kind: the output has the input's shape. */
int nn_layer_same_shape(const nn_checker *c, int i, nn_layer_spec *l, nn_shape in, nn_shape *out);

/* PyTorch's default initialisation, which nn_layer_def.init NULL stands
 * for: U(+-1/sqrt(fan_in)) for weights and bias alike, fan_in = weights /
 * out, w holding the weights, then the bias. */
void nn_layer_init_default(const nn_layer_spec *s, nn_rng *rng, float *w);

/* cost.h's rules for the two shapes of work. A matrix-shaped layer: `rows`
 * output rows of `cols` outputs, each a dot product of length k, plus a bias
 * per column. An elementwise one: `flops` per output forward, one more
 * backward. */
void nn_cost_matrix(nn_layer_cost *c, double rows, double cols, double k, double in_floats,
                    int need_dx);
void nn_cost_elementwise(nn_layer_cost *c, double outs, double flops, int need_dx,
                         nn_op_class op_class);

#endif
