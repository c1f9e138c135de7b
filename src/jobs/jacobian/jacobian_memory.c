/* src/jobs/jacobian/jacobian_memory.c - what a Jacobian job allocates, per method
 * (nnlab/jacobian.h nn_jac_sizes_of). jac_prepare (jacobian.c) and the
 * methods (jacobian_methods.c) allocate exactly these sizes, and the size
 * check before a job starts (job_jacobian.c, through nn_job_check_sizes)
 * adds them up: one function, so the check cannot drift from the code. */
#include "nnlab/jacobian.h"

#include <string.h>

static size_t widest(const nn_jac_shape *s)
{
    int w = 0;
    for (int l = 0; l <= s->n_linear; l++)
        if (s->width[l] > w)
            w = s->width[l];
    return (size_t)w;
}

/* Activations over n rows: every layer's input a[l] (the last layer's
 * output included) and, before each tanh, the linear output pre[l]. */
static size_t act_floats(const nn_jac_shape *s, size_t n)
{
    size_t f = 0;
    for (int l = 0; l <= s->n_linear; l++)
        f += n * (size_t)s->width[l];
    for (int l = 0; l < s->n_linear; l++)
        if (s->tanh_after[l])
            f += n * (size_t)s->width[l + 1];
    return f;
}

/* The cotangent buffer each method keeps its 1s in; the layouts are
 * explained at each method (jacobian_methods.c): rows a single 1 moving in
 * a window of chunk floats; batched chunk 1s a step of val*out+1 apart;
 * per-sample val 1s a step of out apart; forward one (val, in) tangent. */
static size_t onehot_floats(enum nn_jac_method m, size_t val, size_t in, size_t out, size_t chunk)
{
    size_t vk = val * out;
    switch (m) {
    case NN_JAC_ROWS: return vk + chunk - 1;
    case NN_JAC_BATCHED: return (chunk + 1) * vk - chunk;
    case NN_JAC_PER_SAMPLE: return vk + out - 1;
    default: return val * in;
    }
}

void nn_jac_sizes_of(const nn_jac_shape *s, long val, enum nn_jac_method m, nn_jac_sizes *z)
{
    size_t v = val > 0 ? (size_t)val : 0, in = (size_t)s->width[0], out = (size_t)s->width[s->n_linear];
    memset(z, 0, sizeof *z);
    z->chunk = nn_jac_chunk(s, val, m);
    size_t C = (size_t)z->chunk;
    z->pass_rows = (long)(m == NN_JAC_BATCHED ? C * v : v);
    z->params = z->host_params = nn_jac_shape_params(s);
    z->acts = act_floats(s, v);
    z->rep = m == NN_JAC_BATCHED ? act_floats(s, C * v) : 0;
    z->scratch = (size_t)z->pass_rows * widest(s);
    /* a group's results: rows and batched chunk cotangents of (val, in);
     * per-sample out of them; forward one (val, out) per tangent */
    size_t groups = m == NN_JAC_PER_SAMPLE ? out : m == NN_JAC_FORWARD ? 1 : C;
    z->dx = z->host_dx = groups * v * (m == NN_JAC_FORWARD ? out : in);
    z->onehot = onehot_floats(m, v, in, out, C);
    z->x = v * in;
    z->blocks = v * out * in;
    /* the one-hot buffer is built on the host and uploaded; batched first
     * repeats each layer's activations through a host copy of one layer */
    z->staging = z->onehot;
    if (m == NN_JAC_BATCHED && v * widest(s) > z->staging)
        z->staging = v * widest(s);
}

void nn_jac_memory_of(const nn_jac_shape *s, long val, enum nn_jac_method m, nn_jac_memory *out)
{
    nn_jac_sizes z;
    nn_jac_sizes_of(s, val, m, &z);
    out->device = (double)sizeof(float) * (double)(z.params + z.acts + z.rep + 2 * z.scratch + z.dx + z.onehot);
    out->params = (double)sizeof(float) * (double)z.params;
    out->host = (double)sizeof(float) * (double)(z.x + z.blocks + z.host_params + z.host_dx + z.staging);
    out->result = (double)sizeof(float) * (double)(z.x + z.params + z.blocks);
    out->lane_host = out->host - (double)sizeof(float) * (double)z.blocks;
}
