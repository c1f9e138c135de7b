/* backends/cpu_optim.c - sgd_step and adam_step of the fast CPU backend, in
 * items of EW_BLOCK elements. SGD is our own loops (vectorised at -O2); Adam
 * (a square root per element, memory-bound) is cpu-ref's loop on each item.
 */
#include "cpu_internal.h"

#include "cpu_ref.h"

/* cpu-ref's SGD in the same arithmetic order, one loop per case so that no
 * loop holds a branch: the first step (t = 1) stores g itself in the velocity
 * without reading it, as PyTorch creates its buffer. */
static void sgd_range(size_t lo, size_t hi, float *restrict p, const float *restrict g,
                      float *restrict v, const nn_sgd_hyper *h, long t)
{
    const float lr = h->lr, wd = h->weight_decay, mom = h->momentum;
    const float keep = 1.0f - h->dampening;
    if (mom == 0.0f)
        FOR_EACH_8(i, lo, hi, p[i] -= lr * (g[i] + wd * p[i]));
    else if (t == 1 && !h->nesterov)
        FOR_EACH_8(i, lo, hi, {
            float gi = g[i] + wd * p[i];
            v[i] = gi;
            p[i] -= lr * gi;
        });
    else if (t == 1)
        FOR_EACH_8(i, lo, hi, {
            float gi = g[i] + wd * p[i];
            v[i] = gi;
            p[i] -= lr * (gi + mom * gi);
        });
    else if (!h->nesterov)
        FOR_EACH_8(i, lo, hi, {
            float vi = mom * v[i] + keep * (g[i] + wd * p[i]);
            v[i] = vi;
            p[i] -= lr * vi;
        });
    else
        FOR_EACH_8(i, lo, hi, {
            float gi = g[i] + wd * p[i];
            float vi = mom * v[i] + keep * gi;
            v[i] = vi;
            p[i] -= lr * (gi + mom * vi);
        });
}

typedef struct optim_task {
    size_t n;
    float *param, *m, *v;   /* m: SGD's velocity, Adam's first moment */
    const float *grad;
    const nn_sgd_hyper *sgd;
    const nn_adam_hyper *adam;
    nn_backend *b;
    long t;
} optim_task;

static void sgd_item(void *ctx, int item, int part)
{
    const optim_task *t = ctx;
    size_t lo, hi;
    (void)part;
    nn_cpu_ew_range(t->n, item, &lo, &hi);
    sgd_range(lo, hi, t->param, t->grad, t->m, t->sgd, t->t);
}

static void adam_item(void *ctx, int item, int part)
{
    const optim_task *t = ctx;
    size_t lo, hi;
    (void)part;
    nn_cpu_ew_range(t->n, item, &lo, &hi);
    nn_ref_adam_step(t->b, hi - lo, t->param + lo, t->grad + lo, t->m + lo, t->v + lo, t->adam,
                     t->t);
}

int nn_cpu_sgd_step(nn_backend *b, size_t n, float *param, const float *grad, float *velocity,
                    const nn_sgd_hyper *h, long step)
{
    if (step < 1)
        return nn_backend_fail(b, "sgd_step: step %ld, steps count from 1", step);
    optim_task t = { .n = n, .param = param, .grad = grad, .m = velocity, .sgd = h, .b = b,
                     .t = step };
    nn_cpu_ew_run(b, n, 2.0, sgd_item, &t);
    return 0;
}

int nn_cpu_adam_step(nn_backend *b, size_t n, float *param, const float *grad, float *m,
                     float *v, const nn_adam_hyper *h, long step)
{
    if (step < 1)
        return nn_backend_fail(b, "adam_step: step %ld, steps count from 1", step);
    optim_task t = { .n = n, .param = param, .grad = grad, .m = m, .v = v, .adam = h, .b = b,
                     .t = step };
    nn_cpu_ew_run(b, n, 4.0, adam_item, &t);
    return 0;
}
