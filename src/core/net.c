/* src/core/net.c - a sequential network on one backend; see net.h. */
#include "net.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "util.h"

/* ---- shapes and geometry ------------------------------------------------ */

static int layer_has_params(enum nn_layer_kind k)
{
    return k == NN_LAYER_LINEAR || k == NN_LAYER_CONV2D || k == NN_LAYER_CONV1D;
}

/* flatten and reshape only relabel the axes of contiguous NCHW data */
static int layer_is_view(enum nn_layer_kind k)
{
    return k == NN_LAYER_FLATTEN || k == NN_LAYER_RESHAPE;
}

static enum nn_act layer_act(enum nn_layer_kind k)
{
    return k == NN_LAYER_TANH ? NN_ACT_TANH : k == NN_LAYER_MISH ? NN_ACT_MISH : NN_ACT_RELU;
}

void nn_layer_conv_geom(const nn_layer_spec *s, int n, nn_conv_geom *g)
{
    int two_d = s->kind == NN_LAYER_CONV2D;
    memset(g, 0, sizeof *g);
    g->n = n;
    g->c_in = s->in_shape.dim[0];
    g->h_in = two_d ? s->in_shape.dim[1] : 1;
    g->w_in = two_d ? s->in_shape.dim[2] : s->in_shape.dim[1];
    g->c_out = s->out_shape.dim[0];
    g->h_out = two_d ? s->out_shape.dim[1] : 1;
    g->w_out = two_d ? s->out_shape.dim[2] : s->out_shape.dim[1];
    g->k_h = two_d ? s->kernel : 1;
    g->k_w = s->kernel;
    g->stride_h = two_d ? s->stride : 1;
    g->stride_w = s->stride;
    g->pad_h = two_d ? s->padding : 0;
    g->pad_w = s->padding;
}

void nn_layer_pool_geom(const nn_layer_spec *s, int n, nn_pool_geom *g)
{
    memset(g, 0, sizeof *g);
    g->n = n;
    g->c = s->in_shape.dim[0];
    if (s->kind == NN_LAYER_MAXPOOL2D) {
        g->h_in = s->in_shape.dim[1];
        g->w_in = s->in_shape.dim[2];
        g->h_out = s->out_shape.dim[1];
        g->w_out = s->out_shape.dim[2];
        g->k_h = g->k_w = s->kernel;
        g->stride_h = g->stride_w = s->stride;
        return;
    }
    /* 1-D: (C, L) as height 1; max over length is one window of the whole row */
    g->h_in = g->h_out = 1;
    g->w_in = s->in_shape.dim[1];
    g->k_h = g->stride_h = 1;
    if (s->kind == NN_LAYER_MAXLEN) {
        g->w_out = 1;
        g->k_w = g->stride_w = g->w_in;
    } else {
        g->w_out = s->out_shape.dim[1];
        g->k_w = s->kernel;
        g->stride_w = s->stride;
    }
}

static size_t weight_count(const nn_layer_spec *s)
{
    switch (s->kind) {
    case NN_LAYER_LINEAR: return (size_t)s->in * (size_t)s->out;
    case NN_LAYER_CONV2D: return (size_t)s->out * (size_t)s->in * (size_t)s->kernel * (size_t)s->kernel;
    case NN_LAYER_CONV1D: return (size_t)s->out * (size_t)s->in * (size_t)s->kernel;
    default: return 0;
    }
}

double nn_layer_forward_flops(const nn_layer_spec *s)
{
    double out = (double)nn_shape_count(&s->out_shape);
    switch (s->kind) {
    case NN_LAYER_LINEAR:
    case NN_LAYER_CONV2D:
    case NN_LAYER_CONV1D:
        /* each output element: a dot product of the weights of one output unit */
        return 2.0 * out * (double)weight_count(s) / (double)s->out;
    case NN_LAYER_MAXPOOL2D: return out * s->kernel * s->kernel;
    case NN_LAYER_MAXPOOL1D: return out * s->kernel;
    case NN_LAYER_MAXLEN: return (double)nn_shape_count(&s->in_shape);
    case NN_LAYER_FLATTEN:
    case NN_LAYER_RESHAPE: return 0.0;
    default: return out;     /* elementwise */
    }
}

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

/* PyTorch: kaiming_uniform_(a=sqrt(5)) gives bound = gain*sqrt(3/fan_in) with
 * gain = sqrt(2/(1+5)), i.e. 1/sqrt(fan_in); the bias uses the same bound. */
static int init_params(nn_net *net, uint64_t seed, char *err, size_t err_len)
{
    float *host = nn_alloc_aligned(net->n_params * sizeof(float));
    nn_rng rng;
    if (!host)
        return nn_errorf(err, err_len, "out of host memory for %zu initial parameters", net->n_params);
    nn_rng_seed(&rng, seed);
    for (int i = 0; i < net->n_layers; i++) {
        const nn_layer *l = &net->layers[i];
        if (!layer_has_params(l->spec.kind))
            continue;
        float bound = 1.0f / sqrtf((float)(l->n_weights / (size_t)l->spec.out));
        float *w = host + l->param_offset;
        for (size_t j = 0; j < l->n_weights + l->n_bias; j++)
            w[j] = nn_rng_range(&rng, -bound, bound);
    }
    int rc = net->b->ops->upload(net->b, net->params, host, net->n_params * sizeof(float));
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
        if (layer_has_params(l->spec.kind)) {
            l->n_weights = weight_count(&l->spec);
            l->n_bias = (size_t)l->spec.out;
            /* keep each layer's block 16-float aligned for vector loads */
            l->param_offset = offset;
            offset += (l->n_weights + l->n_bias + 15) & ~(size_t)15;
            net->n_trainable += l->n_weights + l->n_bias;
        }
        if (l->out_floats > *widest)
            *widest = l->out_floats;
    }
    net->n_params = offset;
    return 0;
}

static int alloc_buffers(nn_net *net, const nn_preset *p, size_t widest, char *err, size_t err_len)
{
    size_t nb = (size_t)net->max_batch;
    size_t pbytes = net->n_params * sizeof(float);
    if (net_alloc(net, pbytes, (void **)&net->params, "parameters", err, err_len) ||
        net_alloc(net, pbytes, (void **)&net->grads, "gradients", err, err_len) ||
        net_alloc(net, pbytes, (void **)&net->opt_a, "optimiser state", err, err_len) ||
        (p->opt == NN_OPT_ADAM &&
         net_alloc(net, pbytes, (void **)&net->opt_b, "optimiser state", err, err_len)))
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
    for (int i = 0; i < net->n_layers; i++) {
        nn_layer *l = &net->layers[i];
        if (layer_is_view(l->spec.kind))
            continue;
        char what[64];
        snprintf(what, sizeof what, "the output of layer %d (%s)", i + 1, nn_layer_kind_name(l->spec.kind));
        if (net_alloc(net, nb * l->out_floats * sizeof(float), (void **)&l->y, what, err, err_len))
            return -1;
    }
    return 0;
}

static int alloc_workspace(nn_net *net, char *err, size_t err_len)
{
    net->ws_bytes = 0;
    for (int i = 0; i < net->n_layers; i++) {
        const nn_layer_spec *s = &net->layers[i].spec;
        if (s->kind != NN_LAYER_CONV2D && s->kind != NN_LAYER_CONV1D)
            continue;
        nn_conv_geom g;
        nn_layer_conv_geom(s, net->max_batch, &g);
        size_t need = net->b->ops->conv2d_workspace(net->b, &g);
        if (need > net->ws_bytes)
            net->ws_bytes = need;
    }
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
                     net->targets, net->grad_a, net->ws, net->stats };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i])
            o->free(net->b, bufs[i]);
    for (int i = 0; i < net->n_layers; i++)
        if (net->layers[i].y)
            o->free(net->b, net->layers[i].y);
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

static int layer_forward(nn_net *net, int i, int n, int training, long step, const float *x)
{
    nn_backend *b = net->b;
    const nn_backend_ops *o = b->ops;
    nn_layer *l = &net->layers[i];
    const nn_layer_spec *s = &l->spec;
    const float *w = net->params + l->param_offset;
    size_t count = (size_t)n * l->out_floats;

    switch (s->kind) {
    case NN_LAYER_LINEAR:
        return o->linear_forward(b, n, s->in, s->out, x, w, w + l->n_weights, l->y);
    case NN_LAYER_CONV2D:
    case NN_LAYER_CONV1D: {
        nn_conv_geom g;
        nn_layer_conv_geom(s, n, &g);
        return o->conv2d_forward(b, &g, x, w, w + l->n_weights, l->y, net->ws);
    }
    case NN_LAYER_MAXPOOL2D:
    case NN_LAYER_MAXPOOL1D:
    case NN_LAYER_MAXLEN: {
        nn_pool_geom g;
        nn_layer_pool_geom(s, n, &g);
        return o->maxpool2d_forward(b, &g, x, l->y);
    }
    case NN_LAYER_RELU:
    case NN_LAYER_TANH:
    case NN_LAYER_MISH:
        return o->act_forward(b, layer_act(s->kind), count, x, l->y);
    case NN_LAYER_DROPOUT:
        /* at evaluation dropout is the identity (p = 0 copies) */
        return o->dropout_forward(b, count, training ? s->p : 0.0f, net->seed,
                                  dropout_counter(step, i), x, l->y);
    default:
        return 0;
    }
}

float *nn_net_forward(nn_net *net, int n, int training, long step)
{
    float *cur = net->x;
    for (int i = 0; i < net->n_layers; i++) {
        nn_layer *l = &net->layers[i];
        net->in_ptr[i] = cur;
        if (layer_is_view(l->spec.kind)) {
            net->out_ptr[i] = cur;
            continue;
        }
        if (layer_forward(net, i, n, training, step, cur) != 0)
            return NULL;
        net->out_ptr[i] = l->y;
        cur = l->y;
    }
    return cur;
}

float *nn_net_dout(nn_net *net)
{
    return net->grad_a;
}

int nn_net_loss(nn_net *net, int n, const float *out, float *dout)
{
    nn_backend *b = net->b;
    if (net->loss == NN_LOSS_XENT)
        return b->ops->softmax_xent(b, n, net->classes, out, net->labels, dout, net->stats);
    return b->ops->mse(b, n, net->target_width, out, net->targets, dout, net->stats);
}

/* Backpropagates layer i from dy into dx (dx NULL: the input's gradient is not needed). */
static int layer_backward(nn_net *net, int i, int n, long step, const float *dy, float *dx)
{
    nn_backend *b = net->b;
    const nn_backend_ops *o = b->ops;
    nn_layer *l = &net->layers[i];
    const nn_layer_spec *s = &l->spec;
    const float *x = net->in_ptr[i], *y = net->out_ptr[i];
    const float *w = net->params + l->param_offset;
    float *dw = net->grads + l->param_offset;
    size_t count = (size_t)n * l->out_floats;

    switch (s->kind) {
    case NN_LAYER_LINEAR:
        return o->linear_backward(b, n, s->in, s->out, x, w, dy, dx, dw, dw + l->n_weights);
    case NN_LAYER_CONV2D:
    case NN_LAYER_CONV1D: {
        nn_conv_geom g;
        nn_layer_conv_geom(s, n, &g);
        return o->conv2d_backward(b, &g, x, w, dy, dx, dw, dw + l->n_weights, net->ws);
    }
    default:
        break;
    }
    if (!dx)        /* a parameter-free first layer: nothing to propagate */
        return 0;
    switch (s->kind) {
    case NN_LAYER_MAXPOOL2D:
    case NN_LAYER_MAXPOOL1D:
    case NN_LAYER_MAXLEN: {
        nn_pool_geom g;
        nn_layer_pool_geom(s, n, &g);
        return o->maxpool2d_backward(b, &g, x, y, dy, dx);
    }
    case NN_LAYER_RELU:
    case NN_LAYER_TANH:
    case NN_LAYER_MISH:
        return o->act_backward(b, layer_act(s->kind), count, x, y, dy, dx);
    case NN_LAYER_DROPOUT:
        return o->dropout_backward(b, count, s->p, net->seed, dropout_counter(step, i), dy, dx);
    default:
        return 0;
    }
}

/* The input gradient of layer i is needed only when a layer before it does
 * work (a leading flatten is a view): skipping it saves the largest product
 * of an MLP's backward pass. */
static int first_working_layer(const nn_net *net)
{
    int i = 0;
    while (i < net->n_layers && layer_is_view(net->layers[i].spec.kind))
        i++;
    return i;
}

int nn_net_backward(nn_net *net, int n, long step, const float *dout)
{
    const float *dy = dout;
    int first = first_working_layer(net);
    for (int i = net->n_layers - 1; i >= 0; i--) {
        if (layer_is_view(net->layers[i].spec.kind))
            continue;       /* the gradient keeps its buffer, only its shape changes */
        float *dx = NULL;
        if (i > first)
            dx = dy == net->grad_a ? net->grad_b : net->grad_a;
        if (layer_backward(net, i, n, step, dy, dx) != 0)
            return -1;
        dy = dx;
    }
    return 0;
}

int nn_net_optimize(nn_net *net, const nn_preset *p, float lr)
{
    nn_backend *b = net->b;
    net->opt_t++;
    if (p->opt == NN_OPT_ADAM) {
        nn_adam_hyper h = { lr, p->beta1, p->beta2, p->eps, p->weight_decay };
        return b->ops->adam_step(b, net->n_params, net->params, net->grads, net->opt_a,
                                 net->opt_b, &h, net->opt_t);
    }
    nn_sgd_hyper h = { lr, p->momentum, p->dampening, p->weight_decay, p->nesterov };
    return b->ops->sgd_step(b, net->n_params, net->params, net->grads, net->opt_a, &h,
                            net->opt_t);
}
