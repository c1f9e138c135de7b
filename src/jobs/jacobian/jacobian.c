/* src/jobs/jacobian/jacobian.c - the Jacobian job's network on a backend: the
 * parameters as nn.Linear initialises them, the forward pass, one reverse
 * pass and one tangent pass through the op table (so cpu-ref, cpu and the
 * GPU run the same code), and folding a group's results into J's blocks.
 * The methods that drive these are jacobian_methods.c. */
#include "jacobian_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "util.h"

static int dev_alloc(jac_run *r, size_t floats, float **out, char *err, size_t err_len)
{
    void *p = NULL;
    if (r->b->ops->alloc(r->b, (floats ? floats : 1) * sizeof(float), &p) != 0)
        return nn_errorf(err, err_len, "jacobian: %zu floats on %s: %s", floats, r->b->ops->name,
                         r->b->last_error);
    *out = p;
    return 0;
}

static void dev_free(jac_run *r, float **p)
{
    if (*p)
        r->b->ops->free(r->b, *p);
    *p = NULL;
}

/* PyTorch's nn.Linear: kaiming_uniform_(a = sqrt(5)) gives the weights
 * U(-1/sqrt(in), 1/sqrt(in)), and the bias the same bound. The input is
 * torch.rand's U(0, 1), from a stream of its own so that it does not move
 * when the network changes. */
static void init_host(jac_run *r, uint64_t seed)
{
    nn_rng rng;
    float *p = r->host_params;
    nn_rng_seed(&rng, seed);
    for (int l = 0; l < r->s.n_linear; l++) {
        size_t n = (size_t)r->s.width[l + 1] * ((size_t)r->s.width[l] + 1);
        float bound = 1.0f / sqrtf((float)r->s.width[l]);
        for (size_t j = 0; j < n; j++)
            *p++ = nn_rng_range(&rng, -bound, bound);
    }
    nn_rng_seed(&rng, seed ^ 0x6a09e667f3bcc908ULL);
    for (size_t i = 0; i < (size_t)r->val * (size_t)r->in; i++)
        r->x[i] = (float)nn_rng_uniform(&rng);
}

static int alloc_acts(jac_run *r, jac_acts *a, int n, char *err, size_t err_len)
{
    a->n = n;
    for (int l = 0; l <= r->s.n_linear; l++)
        if (dev_alloc(r, (size_t)n * (size_t)r->s.width[l], &a->a[l], err, err_len) != 0)
            return -1;
    for (int l = 0; l < r->s.n_linear; l++)
        if (r->s.tanh_after[l] &&
            dev_alloc(r, (size_t)n * (size_t)r->s.width[l + 1], &a->pre[l], err, err_len) != 0)
            return -1;
    return 0;
}

static void free_acts(jac_run *r, jac_acts *a)
{
    for (int l = 0; l <= NN_JAC_MAX_LINEAR; l++)
        dev_free(r, &a->a[l]);
    for (int l = 0; l < NN_JAC_MAX_LINEAR; l++)
        dev_free(r, &a->pre[l]);
}

static int upload(jac_run *r, void *dst, const void *src, size_t bytes, const char *what, char *err,
                  size_t err_len)
{
    if (r->b->ops->upload(r->b, dst, src, bytes) != 0)
        return nn_errorf(err, err_len, "jacobian: uploading %s: %s", what, r->b->last_error);
    return 0;
}

/* The parameters and the input, on the host and on the backend. */
static int setup_network(jac_run *r, uint64_t seed, char *err, size_t err_len)
{
    size_t nx = r->sz.x;
    r->n_params = r->sz.params;
    r->host_params = malloc(r->sz.host_params * sizeof(float));
    r->x = malloc(nx * sizeof(float));
    r->blocks = calloc(r->sz.blocks, sizeof(float));
    if (!r->host_params || !r->x || !r->blocks)
        return nn_errorf(err, err_len, "jacobian: out of host memory for val = %d", r->val);
    init_host(r, seed);
    if (dev_alloc(r, r->n_params, &r->params, err, err_len) != 0 ||
        upload(r, r->params, r->host_params, r->n_params * sizeof(float), "the parameters", err, err_len))
        return -1;
    float *p = r->params;
    for (int l = 0; l < r->s.n_linear; l++) {
        r->w[l] = p;
        p += (size_t)r->s.width[l + 1] * (size_t)r->s.width[l];
        r->bias[l] = p;
        p += r->s.width[l + 1];
    }
    if (alloc_acts(r, &r->acts, r->val, err, err_len) != 0)
        return -1;
    return upload(r, r->acts.a[0], r->x, nx * sizeof(float), "the input", err, err_len);
}

int jac_prepare(jac_run *r, nn_backend *b, const nn_jac_shape *s, int val, enum nn_jac_method m,
                uint64_t seed, int graph, char *err, size_t err_len)
{
    memset(r, 0, sizeof *r);
    r->b = b;
    r->s = *s;
    r->method = m;
    r->val = val;
    r->in = s->width[0];
    r->out = s->width[s->n_linear];
    r->lanes = 1;
    atomic_init(&r->own.rows_done, 0);
    atomic_init(&r->own.stop, 0);
    r->shared = &r->own;
    if (val < 1 || val > NN_JAC_MAX_VAL)
        return nn_errorf(err, err_len, "val %d: expected 1..%d", val, NN_JAC_MAX_VAL);
    r->use_graph = graph && m == NN_JAC_ROWS && b->ops->graph_begin && b->ops->set_step;
    nn_jac_sizes_of(s, val, m, &r->sz);
    if (setup_network(r, seed, err, err_len) != 0)
        return -1;
    r->chunk = r->sz.chunk;
    r->dx_floats = r->sz.dx;
    r->host_dx = malloc(r->sz.host_dx * sizeof(float));
    if (!r->host_dx)
        return nn_errorf(err, err_len, "jacobian: out of host memory for val = %d", val);
    if (dev_alloc(r, r->sz.scratch, &r->s0, err, err_len) || dev_alloc(r, r->sz.scratch, &r->s1, err, err_len) ||
        dev_alloc(r, r->dx_floats, &r->dx, err, err_len))
        return -1;
    if (m == NN_JAC_BATCHED && alloc_acts(r, &r->rep, (int)r->sz.pass_rows, err, err_len) != 0)
        return -1;
    return 0;
}

void jac_release(jac_run *r)
{
    if (!r->b)
        return;
    free_acts(r, &r->acts);
    free_acts(r, &r->rep);
    dev_free(r, &r->params);
    dev_free(r, &r->onehot);
    dev_free(r, &r->s0);
    dev_free(r, &r->s1);
    dev_free(r, &r->dx);
    free(r->host_dx);
    free(r->host_params);
    free(r->x);
    free(r->blocks);
    r->host_dx = r->host_params = r->x = r->blocks = NULL;
}

int jac_forward(jac_run *r, jac_acts *a)
{
    const nn_backend_ops *o = r->b->ops;
    for (int l = 0; l < r->s.n_linear; l++) {
        int in = r->s.width[l], out = r->s.width[l + 1];
        float *y = r->s.tanh_after[l] ? a->pre[l] : a->a[l + 1];
        if (o->linear_forward(r->b, a->n, in, out, a->a[l], r->w[l], r->bias[l], y) != 0)
            return -1;
        if (r->s.tanh_after[l] &&
            o->act_forward(r->b, NN_ACT_TANH, (size_t)a->n * (size_t)out, y, a->a[l + 1]) != 0)
            return -1;
    }
    return 0;
}

/* Backward through the layers from the last: a tanh's derivative from its
 * saved output, then the linear layer's input gradient alone (dw and dbias
 * NULL: PyTorch's autograd.grad with inputs = x prunes them too). */
int jac_reverse(jac_run *r, const jac_acts *a, int n, const float *g, float *dx)
{
    const nn_backend_ops *o = r->b->ops;
    const float *cur = g;
    for (int l = r->s.n_linear - 1; l >= 0; l--) {
        int in = r->s.width[l], out = r->s.width[l + 1];
        if (r->s.tanh_after[l]) {
            float *next = cur == r->s0 ? r->s1 : r->s0;
            if (o->act_backward(r->b, NN_ACT_TANH, (size_t)n * (size_t)out, NULL, a->a[l + 1], cur,
                                next) != 0)
                return -1;
            cur = next;
        }
        float *next = l == 0 ? dx : cur == r->s0 ? r->s1 : r->s0;
        if (o->linear_backward(r->b, n, in, out, a->a[l], r->w[l], cur, next, NULL, NULL) != 0)
            return -1;
        cur = next;
    }
    return 0;
}

/* Forward mode: a linear layer maps the tangent by its weights alone (no
 * bias), a tanh scales it by 1 - y^2, which is what its backward computes. */
int jac_tangent(jac_run *r, const float *t)
{
    const nn_backend_ops *o = r->b->ops;
    const float *cur = t;
    int n = r->val;
    for (int l = 0; l < r->s.n_linear; l++) {
        int in = r->s.width[l], out = r->s.width[l + 1];
        int last = l == r->s.n_linear - 1;
        float *next = last && !r->s.tanh_after[l] ? r->dx : cur == r->s0 ? r->s1 : r->s0;
        if (o->linear_forward(r->b, n, in, out, cur, r->w[l], NULL, next) != 0)
            return -1;
        cur = next;
        if (r->s.tanh_after[l]) {
            next = last ? r->dx : cur == r->s0 ? r->s1 : r->s0;
            if (o->act_backward(r->b, NN_ACT_TANH, (size_t)n * (size_t)out, NULL, r->acts.a[l + 1],
                                cur, next) != 0)
                return -1;
            cur = next;
        }
    }
    return 0;
}

int jac_read_dx(jac_run *r, size_t floats)
{
    return r->b->ops->download(r->b, r->host_dx, r->dx, floats * sizeof(float));
}

void jac_take_rows(jac_run *r, long p0, int count)
{
    size_t per = (size_t)r->val * (size_t)r->in;
    for (int c = 0; c < count; c++) {
        long p = p0 + c;
        int i = (int)(p / r->out);
        const float *g = r->host_dx + (size_t)c * per;
        for (int j = 0; j < r->val; j++)
            for (int d = 0; d < r->in; d++) {
                float v = g[(size_t)j * (size_t)r->in + (size_t)d];
                if (j == i)
                    r->blocks[(size_t)p * (size_t)r->in + (size_t)d] = v;
                else if (!(fabs(v) <= r->offdiag_max))
                    r->offdiag_max = isnan(v) ? INFINITY : fabs(v);
            }
    }
    r->offdiag_checked = 1;
}
