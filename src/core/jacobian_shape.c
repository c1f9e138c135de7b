/* src/core/jacobian_shape.c - what a preset's [task] of kind jacobian reads
 * (nnlab/jacobian.h): the method names and the network as a shape. The
 * preset code checks them here; the job itself is src/jobs/jacobian/. */
#include "nnlab/jacobian.h"

#include <string.h>

#include "util.h"

static const char *const method_names[NN_JAC_METHOD_COUNT] = { "rows", "batched", "per-sample",
                                                               "forward" };

const char *nn_jac_method_name(enum nn_jac_method m)
{
    return (unsigned)m < NN_JAC_METHOD_COUNT ? method_names[m] : "?";
}

int nn_jac_method_find(const char *s)
{
    for (int m = 0; m < NN_JAC_METHOD_COUNT; m++)
        if (s && strcmp(s, method_names[m]) == 0)
            return m;
    return -1;
}

const char *nn_jac_method_list(void)
{
    return "rows, batched, per-sample or forward";
}

/* A linear layer, optionally followed by one tanh. */
static int add_layer(const nn_layer_spec *l, const char *where, int i, nn_jac_shape *s, char *err,
                     size_t err_len)
{
    if (l->kind == NN_LAYER_TANH) {
        if (s->n_linear == 0 || s->tanh_after[s->n_linear - 1])
            return nn_errorf(err, err_len, "%s: [layer%d] type = tanh: a jacobian task takes a tanh "
                             "only right after a linear layer", where, i + 1);
        s->tanh_after[s->n_linear - 1] = 1;
        return 0;
    }
    if (l->kind != NN_LAYER_LINEAR)
        return nn_errorf(err, err_len, "%s: [layer%d] type = %s: a jacobian task takes linear and "
                         "tanh layers", where, i + 1, nn_layer_kind_name(l->kind));
    if (s->n_linear == NN_JAC_MAX_LINEAR)
        return nn_errorf(err, err_len, "%s: [layer%d]: a jacobian task takes at most %d linear layers",
                         where, i + 1, NN_JAC_MAX_LINEAR);
    if (s->n_linear == 0)
        s->width[0] = l->in;
    s->width[++s->n_linear] = l->out;
    return 0;
}

int nn_jac_shape_from_preset(const nn_preset *p, const char *where, nn_jac_shape *s, char *err,
                             size_t err_len)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < p->n_layers; i++)
        if (add_layer(&p->layers[i], where, i, s, err, err_len) != 0)
            return -1;
    if (s->n_linear == 0)
        return nn_errorf(err, err_len, "%s: a jacobian task needs at least one linear layer", where);
    return 0;
}

size_t nn_jac_shape_params(const nn_jac_shape *s)
{
    size_t n = 0;
    for (int l = 0; l < s->n_linear; l++)
        n += (size_t)s->width[l + 1] * ((size_t)s->width[l] + 1);
    return n;
}

long nn_jac_rows_total(const nn_jac_shape *s, long val)
{
    return val * s->width[s->n_linear];
}
