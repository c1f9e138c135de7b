/* src/core/net.c - a network on one backend; see net.h. A chain keeps its
 * two ping-pong gradient buffers; a graph gives each layer's output its own
 * gradient buffer, written by the first reader met going backward and summed
 * into (accumulate) by the others (docs/decisions/0038-graph-gradient-buffers.md). */
#include "net.h"
#include "layer_kind.h"
#include "dropout_hash.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "util.h"

size_t nn_net_param_count(const nn_net *net)
{
    return net->n_trainable;
}

/* ---- creation ------------------------------------------------------------ */

static int net_alloc(nn_net *net, size_t bytes, void **out, const char *what,
                     char *err, size_t err_len)
{
    *out = NULL;
    if (bytes == 0)
        return 0;
    if (net->b->ops->alloc(net->b, bytes, out) != 0)
        return nn_errorf(err, err_len, "allocating %s (%zu bytes) on %s: %s", what, bytes,
                         net->b->ops->name, net->b->last_error);
    return 0;
}

/* Each kind's init (nn_layer_def.init; PyTorch's default without one) into
 * host copies of the parameter and state arenas, then one upload of each. */
static int init_params(nn_net *net, uint64_t seed, char *err, size_t err_len)
{
    float *host = nn_alloc_aligned((net->n_params + net->n_state) * sizeof(float));
    float *state = host + net->n_params;
    nn_rng rng;
    if (!host)
        return nn_errorf(err, err_len, "out of host memory for %zu initial parameters", net->n_params);
    nn_rng_seed(&rng, seed);
    for (int i = 0; i < net->n_layers; i++) {
        const nn_layer *l = &net->layers[i];
        const nn_layer_def *d = nn_layer_def_of(l->spec.kind);
        float *w = host + l->param_offset, *st = l->n_state ? state + l->state_offset : NULL;
        if (l->param_owner != i && !st)
            continue;                /* shared: initialised once, by its owner */
        if (d->init)
            d->init(&l->spec, &rng, w, st);
        else
            nn_layer_init_default(&l->spec, &rng, w);
    }
    int rc = net->b->ops->upload(net->b, net->params, host, net->n_params * sizeof(float));
    if (rc == 0 && net->n_state)
        rc = net->b->ops->upload(net->b, net->state, state, net->n_state * sizeof(float));
    nn_free_aligned(host);
    if (rc != 0)
        return nn_errorf(err, err_len, "uploading the initial parameters: %s", net->b->last_error);
    return 0;
}

static int plan_layers(nn_net *net, const nn_preset *p, size_t *widest)
{
    size_t offset = 0;
    *widest = net->sample_floats;
    net->n_layers = p->n_layers;
    for (int i = 0; i < p->n_layers; i++) {
        nn_layer *l = &net->layers[i];
        memset(l, 0, sizeof *l);
        l->spec = p->layers[i];
        l->in_floats = (size_t)nn_shape_count(&l->spec.in_shape);
        l->out_floats = (size_t)nn_shape_count(&l->spec.out_shape);
        l->n_weights = nn_layer_weights(&l->spec);
        l->n_bias = nn_layer_bias(&l->spec);
        l->param_owner = nn_layer_param_owner(p->layers, i);
        l->block_shared = nn_layer_block_shared(p->layers, p->n_layers, i);
        for (int j = 0; j < 2; j++) {
            int two = nn_layer_n_inputs(&l->spec) == 2;
            l->source[j] = j && !two ? -1 : nn_layer_source(p->layers, i, j);
            l->root[j] = j && !two ? -1 : nn_layer_source_root(p->layers, i, j);
        }
        if (l->n_weights + l->n_bias > 0) {
            int seen = 0;            /* an earlier user of the same block */
            for (int j = 0; j < i && !seen; j++)
                seen = net->layers[j].param_owner == l->param_owner &&
                       net->layers[j].n_weights + net->layers[j].n_bias > 0;
            l->grads_final_here = !seen;
        }
        if (l->param_owner != i) {
            /* weights = layerN: the owner's block, counted once */
            l->param_offset = net->layers[l->param_owner].param_offset;
            if (l->n_weights + l->n_bias > net->param_scratch_floats)
                net->param_scratch_floats = l->n_weights + l->n_bias;
        } else if (l->n_weights + l->n_bias > 0) {
            /* keep each layer's block 16-float aligned for vector loads */
            l->param_offset = offset;
            offset += (l->n_weights + l->n_bias + 15) & ~(size_t)15;
            net->n_trainable += l->n_weights + l->n_bias;
        }
        const nn_layer_def *d = nn_layer_def_of(l->spec.kind);
        if (d->state) {              /* running statistics: beside the parameters, untrained */
            d->state(&l->spec, &l->n_state);
            l->state_offset = net->n_state;
            net->n_state += (l->n_state + 15) & ~(size_t)15;
        }
        if (l->out_floats > *widest)
            *widest = l->out_floats;
    }
    net->n_params = offset;
    net->first_working = nn_layer_first_working(p->layers, p->n_layers);
    net->graph = !nn_layer_is_chain(p->layers, p->n_layers);
    return 0;
}

/* Parameter arenas: parameters, gradients, one state arena (SGD's velocity,
 * Adam's m), a second for Adam's v. */
static int param_arenas(const nn_preset *p)
{
    return p->opt == NN_OPT_ADAM ? 4 : 3;
}

/* The batch's buffers, in floats (4 bytes each, labels included): what
 * alloc_buffers takes besides the arenas. */
static double batch_floats(const nn_net *net, size_t widest)
{
    double nb = net->max_batch, f = nb * (double)net->sample_floats + nb * 2.0 * (double)widest + 2;
    f += net->loss == NN_LOSS_XENT ? nb : nb * net->target_width;
    for (int i = 0; i < net->n_layers; i++)
        if (!nn_layer_is_view(&net->layers[i].spec))
            f += nb * (double)net->layers[i].out_floats * (net->graph ? 2.0 : 1.0);  /* y, dy */
    return f;
}

/* The largest workspace a layer asks for at the net's batch; -1 naming the
 * layer when the backend cannot run one (a tensor past cuDNN's 2^31 elements). */
static int workspace_bytes(const nn_net *net, size_t *most, char *err, size_t err_len)
{
    *most = 0;
    for (int i = 0; i < net->n_layers; i++) {
        const nn_layer_spec *s = &net->layers[i].spec;
        const nn_layer_def *d = nn_layer_def_of(s->kind);
        size_t need = 0;
        if (d->workspace && d->workspace(net->b, s, net->max_batch, &need) != 0) {
            char label[64];
            if (d->label)
                d->label(s, label, sizeof label);
            else
                nn_strlcpy(label, nn_layer_kind_name(s->kind), sizeof label);
            return nn_errorf(err, err_len, "layer %d (%s) at batch %d on %s: %s", i + 1, label,
                             net->max_batch, net->b->ops->name, net->b->last_error);
        }
        if (need > *most)
            *most = need;
    }
    return 0;
}

void nn_net_bytes_of(const nn_preset *p, int max_batch, nn_backend *b, nn_net_bytes *out)
{
    nn_net net;                      /* the plan only (about 9 KB) */
    size_t widest;
    memset(out, 0, sizeof *out);
    out->big_layer = -1;
    if (p->n_layers < 1 || p->n_layers > NN_MAX_LAYERS || max_batch < 1)
        return;
    memset(&net, 0, sizeof net);
    net.b = b;
    net.max_batch = max_batch;
    net.loss = p->loss;
    net.target_width = p->targets;
    nn_shape in = nn_preset_input_shape(p);
    net.sample_floats = (size_t)nn_shape_count(&in);
    plan_layers(&net, p, &widest);
    out->params = ((double)net.n_params * param_arenas(p) + (double)net.param_scratch_floats +
                   (double)net.n_state) * sizeof(float);
    out->batch = batch_floats(&net, widest) * sizeof(float);
    out->init_host = ((double)net.n_params + (double)net.n_state) * sizeof(float);
    size_t ws = 0;
    if (b && workspace_bytes(&net, &ws, NULL, 0) != 0)
        ws = 0;                      /* a layer the backend refuses: nn_net_create says which */
    out->workspace = (double)ws;
    for (int i = 0; i < net.n_layers; i++) {
        if (net.layers[i].param_owner != i)
            continue;                /* shared: counted with its owner */
        double bytes = (double)(net.layers[i].n_weights + net.layers[i].n_bias) * sizeof(float) *
                       param_arenas(p);
        if (bytes > 0 && bytes > out->big_layer_bytes) {
            out->big_layer = i;
            out->big_layer_bytes = bytes;
        }
    }
}

static int alloc_buffers(nn_net *net, const nn_preset *p, size_t widest, char *err, size_t err_len)
{
    size_t nb = (size_t)net->max_batch;
    size_t pbytes = net->n_params * sizeof(float);
    if (net_alloc(net, pbytes, (void **)&net->params, "parameters", err, err_len) ||
        net_alloc(net, pbytes, (void **)&net->grads, "gradients", err, err_len) ||
        net_alloc(net, pbytes, (void **)&net->opt_a, "optimiser state", err, err_len) ||
        (p->opt == NN_OPT_ADAM &&
         net_alloc(net, pbytes, (void **)&net->opt_b, "optimiser state", err, err_len)) ||
        net_alloc(net, net->n_state * sizeof(float), (void **)&net->state, "layer state", err, err_len))
        return -1;
    if (net_alloc(net, nb * net->sample_floats * sizeof(float), (void **)&net->x, "input batch", err, err_len) ||
        net_alloc(net, nb * 2 * widest * sizeof(float), (void **)&net->grad_a, "activation gradients", err, err_len) ||
        net_alloc(net, 2 * sizeof(float), (void **)&net->stats, "loss accumulator", err, err_len))
        return -1;
    net->grad_b = net->grad_a + nb * widest;
    if (net->loss == NN_LOSS_XENT) {
        if (net_alloc(net, nb * sizeof(int32_t), (void **)&net->labels, "labels", err, err_len))
            return -1;
    } else if (net_alloc(net, nb * (size_t)net->target_width * sizeof(float), (void **)&net->targets,
                         "targets", err, err_len)) {
        return -1;
    }
    if (net_alloc(net, net->param_scratch_floats * sizeof(float), (void **)&net->param_scratch,
                  "shared parameters' gradient scratch", err, err_len))
        return -1;
    for (int i = 0; i < net->n_layers; i++) {
        nn_layer *l = &net->layers[i];
        if (nn_layer_is_view(&l->spec))
            continue;
        char what[64];
        snprintf(what, sizeof what, "the output of layer %d (%s)", i + 1, nn_layer_kind_name(l->spec.kind));
        if (net_alloc(net, nb * l->out_floats * sizeof(float), (void **)&l->y, what, err, err_len))
            return -1;
        snprintf(what, sizeof what, "the gradient of layer %d (%s)", i + 1, nn_layer_kind_name(l->spec.kind));
        if (net->graph && net_alloc(net, nb * l->out_floats * sizeof(float), (void **)&l->dy, what,
                                    err, err_len))
            return -1;
    }
    /* a view's gradient is its root's: the same values, relabelled */
    for (int i = 0; net->graph && i < net->n_layers; i++) {
        const nn_layer_spec *specs = p->layers;
        if (nn_layer_is_view(&specs[i])) {
            int root = nn_layer_source_root(specs, i, 0);
            net->layers[i].dy = root >= 0 ? net->layers[root].dy : NULL;
        }
    }
    return 0;
}

/* The largest workspace any layer needs at the largest batch, allocated once.
 * A layer the backend cannot run at that batch (a tensor beyond cuDNN's 2^31
 * elements) refuses the job here, before its first step, naming the layer. */
static int alloc_workspace(nn_net *net, char *err, size_t err_len)
{
    if (workspace_bytes(net, &net->ws_bytes, err, err_len) != 0)
        return -1;
    return net_alloc(net, net->ws_bytes, &net->ws, "convolution workspace", err, err_len);
}

int nn_net_create(nn_net *net, nn_backend *b, const nn_preset *p, int max_batch,
                  uint64_t seed, char *err, size_t err_len)
{
    size_t widest;
    nn_shape in = nn_preset_input_shape(p);
    memset(net, 0, sizeof *net);
    net->b = b;
    net->max_batch = max_batch;
    net->seed = seed;
    net->loss = p->loss;
    net->sample_floats = (size_t)nn_shape_count(&in);
    net->classes = nn_preset_classes(p);
    net->target_width = p->targets;
    if (max_batch < 1 || p->n_layers < 1)
        return nn_errorf(err, err_len, "a network needs a batch >= 1 and at least one layer");
    plan_layers(net, p, &widest);
    if (alloc_buffers(net, p, widest, err, err_len) != 0 ||
        alloc_workspace(net, err, err_len) != 0 ||
        init_params(net, seed, err, err_len) != 0) {
        nn_net_destroy(net);
        return -1;
    }
    return 0;
}

void nn_net_destroy(nn_net *net)
{
    if (!net->b)
        return;
    const nn_backend_ops *o = net->b->ops;
    void *bufs[] = { net->params, net->grads, net->opt_a, net->opt_b, net->x, net->labels,
                     net->targets, net->grad_a, net->ws, net->stats, net->param_scratch,
                     net->state };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i])
            o->free(net->b, bufs[i]);
    for (int i = 0; i < net->n_layers; i++) {
        nn_layer *l = &net->layers[i];
        if (l->y)
            o->free(net->b, l->y);
        if (l->dy && !nn_layer_is_view(&l->spec))
            o->free(net->b, l->dy);
    }
    memset(net, 0, sizeof *net);
}

/* ---- one step -------------------------------------------------------------- */

/* Dropout counters are unique per (step, layer): the step's base, a multiple
 * of the stride, plus the layer. The stride is the net's own business: the
 * backend learns each step's base through set_step (nn_net_set_step). */
#define STEP_COUNTER_STRIDE 64
_Static_assert(NN_MAX_LAYERS <= STEP_COUNTER_STRIDE, "dropout counters of two layers collide");

static uint64_t dropout_counter(long step, int layer)
{
    return (uint64_t)step * STEP_COUNTER_STRIDE + (uint64_t)layer;
}

int nn_net_set_step(nn_net *net, long step)
{
    nn_backend *b = net->b;
    nn_step_values v = { .dropout_base = dropout_counter(step, 0), .opt_t = net->opt_t + 1 };
    return b->ops->set_step ? b->ops->set_step(b, &v) : 0;
}

/* What layer i's forward or backward gets: its parameters (the owner's block
 * when shared), gradients and the shared buffers, for a batch of n. */
static nn_layer_call layer_call(nn_net *net, int i, int n, int training, long step)
{
    const nn_layer *l = &net->layers[i];
    float *w = net->params + l->param_offset, *dw = net->grads + l->param_offset;
    int has_params = l->n_weights > 0, has_bias = l->n_bias > 0;
    return (nn_layer_call){
        .b = net->b, .s = &l->spec, .n = n, .count = (size_t)n * l->out_floats,
        .w = has_params ? w : NULL, .bias = has_bias ? w + l->n_weights : NULL,
        .dw = has_params ? dw : NULL, .dbias = has_bias ? dw + l->n_weights : NULL,
        .ws = net->ws, .state = l->n_state ? net->state + l->state_offset : NULL,
        .training = training,
        .seed = nn_dropout_seed_shifted(net->seed, dropout_counter(step, i),
                                        (uint64_t)net->sample_offset * l->out_floats),
        .counter = dropout_counter(step, i),
    };
}

/* The buffer layer i's input j reads: a layer's output, or the batch. */
static float *input_of(nn_net *net, int i, int j)
{
    int src = net->layers[i].source[j];
    return src < 0 ? net->x : net->out_ptr[src];
}

float *nn_net_forward(nn_net *net, int n, int training, long step)
{
    for (int i = 0; i < net->n_layers; i++) {
        nn_layer *l = &net->layers[i];
        const nn_layer_def *d = nn_layer_def_of(l->spec.kind);
        float *x = input_of(net, i, 0);
        net->in_ptr[i] = x;
        if (d->view) {
            net->out_ptr[i] = x;
            continue;
        }
        nn_layer_call c = layer_call(net, i, n, training, step);
        if (nn_layer_n_inputs(&l->spec) == 2)
            c.x2 = input_of(net, i, 1);
        if (d->forward(&c, x, l->y) != 0)
            return NULL;
        net->out_ptr[i] = l->y;
    }
    return net->out_ptr[net->n_layers - 1];
}

float *nn_net_dout(nn_net *net)
{
    float *last = net->graph ? net->layers[net->n_layers - 1].dy : NULL;
    return last ? last : net->grad_a;
}

int nn_net_loss(nn_net *net, int n, const float *out, float *dout)
{
    nn_backend *b = net->b;
    int rc = net->loss == NN_LOSS_XENT
                 ? b->ops->softmax_xent(b, n, net->classes, out, net->labels, dout, net->stats)
                 : b->ops->mse(b, n, net->target_width, out, net->targets, dout, net->stats);
    /* training only: the layers' own terms (sparsemax's sparsity), as
     * pytorch-tabnet adds them to its training loss and not to its metrics */
    for (int i = 0; rc == 0 && dout && i < net->n_layers; i++) {
        const nn_layer_def *d = nn_layer_def_of(net->layers[i].spec.kind);
        nn_layer_call c = layer_call(net, i, n, 1, 0);
        if (d->aux_loss)
            rc = d->aux_loss(&c, net->out_ptr[i], net->stats);
    }
    return rc;
}

/* Parameters used by several layers: the first backward met (the last user)
 * writes the owner's gradient, the others write the scratch, summed in by
 * param_sum. written[] is per owner. */
static int param_target(nn_net *net, int i, nn_layer_call *c, unsigned char *written)
{
    const nn_layer *l = &net->layers[i];
    if (l->n_weights == 0)
        return 0;
    if (!written[l->param_owner]) {
        written[l->param_owner] = 1;
        return 0;
    }
    c->dw = net->param_scratch;
    c->dbias = l->n_bias > 0 ? net->param_scratch + l->n_weights : NULL;
    return 1;
}

static int param_sum(nn_net *net, int i)
{
    const nn_layer *l = &net->layers[i];
    return net->b->ops->accumulate(net->b, l->n_weights + l->n_bias, net->param_scratch,
                                   net->grads + l->param_offset);
}

/* Layer i's backward ran: its block's gradient is final when no layer
 * before it uses the block. */
static void grads_done(nn_net *net, int i)
{
    const nn_layer *l = &net->layers[i];
    if (net->grads_ready && l->grads_final_here)
        net->grads_ready(net->grads_ready_ctx, l->param_owner);
}

/* The layer call's fused Adam for layer i, into *a, when it may have one:
 * fusion asked for, and the block its own and no other layer's (a shared
 * block's gradient is a sum of several backwards). */
static void offer_adam(nn_net *net, int i, nn_layer_call *c, nn_layer_adam *a, int *done)
{
    const nn_layer *l = &net->layers[i];
    *done = 0;
    if (!net->fuse_adam || l->n_weights == 0 || l->block_shared)
        return;
    *a = (nn_layer_adam){ .param = net->params + l->param_offset,
                          .m = net->opt_a + l->param_offset, .v = net->opt_b + l->param_offset,
                          .h = &net->fused_h, .t = net->fused_t, .done = done };
    c->adam = a;
}

static void note_adam(nn_net *net, int i, int done)
{
    if (done) {
        net->adam_done[i] = 1;
        net->fused_layers++;
    }
}

static int backward_chain(nn_net *net, int n, long step, const float *dout)
{
    unsigned char written[NN_MAX_LAYERS] = { 0 };
    const float *dy = dout;
    int first = net->first_working;
    for (int i = net->n_layers - 1; i >= 0; i--) {
        const nn_layer *l = &net->layers[i];
        const nn_layer_def *d = nn_layer_def_of(l->spec.kind);
        if (d->view)
            continue;       /* the gradient keeps its buffer, only its shape changes */
        float *dx = NULL;
        if (i > first)
            dx = dy == net->grad_a ? net->grad_b : net->grad_a;
        /* without parameters and without dx to compute, nothing to do */
        nn_layer_call c = layer_call(net, i, n, 1, step);
        int shared = param_target(net, i, &c, written), done;
        nn_layer_adam adam;
        offer_adam(net, i, &c, &adam, &done);
        if ((dx || l->n_weights > 0) && d->backward(&c, net->in_ptr[i], net->out_ptr[i], dy, dx) != 0)
            return -1;
        note_adam(net, i, done);
        if (shared && param_sum(net, i) != 0)
            return -1;
        grads_done(net, i);
        dy = dx;
    }
    return 0;
}

/* Where layer i's backward writes the gradient of its inputs: straight into
 * the input's buffer when it is the first reader met going backward, else
 * into scratch (grad_a, grad_b) that is then summed in (*sum_into). */
static void input_targets(nn_net *net, int i, unsigned char *written, float *dx[2], float *sum_into[2])
{
    for (int j = 0; j < 2; j++)
        dx[j] = sum_into[j] = NULL;
    for (int j = 0; j < nn_layer_n_inputs(&net->layers[i].spec); j++) {
        int root = net->layers[i].root[j];
        if (root < 0)
            continue;                /* the data: no gradient */
        if (!written[root]) {
            written[root] = 1;
            dx[j] = net->layers[root].dy;
        } else {
            dx[j] = j == 0 ? net->grad_a : net->grad_b;
            sum_into[j] = net->layers[root].dy;
        }
    }
}

static int backward_graph(nn_net *net, int n, long step)
{
    unsigned char written[NN_MAX_LAYERS] = { 0 }, params_written[NN_MAX_LAYERS] = { 0 };
    int last = net->n_layers - 1;
    int out_root = nn_layer_is_view(&net->layers[last].spec) ? net->layers[last].root[0] : last;
    if (out_root >= 0)
        written[out_root] = 1;       /* the loss wrote the output's gradient */
    for (int i = last; i >= 0; i--) {
        const nn_layer *l = &net->layers[i];
        const nn_layer_def *d = nn_layer_def_of(l->spec.kind);
        float *dx[2], *sum_into[2];
        if (d->view)
            continue;                /* its gradient is its root's buffer */
        input_targets(net, i, written, dx, sum_into);
        nn_layer_call c = layer_call(net, i, n, 1, step);
        c.x2 = nn_layer_n_inputs(&l->spec) == 2 ? input_of(net, i, 1) : NULL;
        c.dx2 = dx[1];
        int shared = param_target(net, i, &c, params_written), done;
        nn_layer_adam adam;
        offer_adam(net, i, &c, &adam, &done);
        if ((dx[0] || dx[1] || l->n_weights > 0) &&
            d->backward(&c, net->in_ptr[i], net->out_ptr[i], l->dy, dx[0]) != 0)
            return -1;
        note_adam(net, i, done);
        for (int j = 0; j < 2; j++) {
            const nn_shape *in = j ? &l->spec.in2_shape : &l->spec.in_shape;
            size_t count = (size_t)n * (size_t)nn_shape_count(in);
            if (sum_into[j] && net->b->ops->accumulate(net->b, count, dx[j], sum_into[j]) != 0)
                return -1;
        }
        if (shared && param_sum(net, i) != 0)
            return -1;
        grads_done(net, i);
    }
    return 0;
}

int nn_net_backward(nn_net *net, int n, long step, const float *dout)
{
    net->fused_layers = 0;
    memset(net->adam_done, 0, sizeof net->adam_done);
    return net->graph ? backward_graph(net, n, step) : backward_chain(net, n, step, dout);
}

