/* backends/cpu/cpu_optim.c - sgd_step and adam_step of the fast CPU backend, in
 * items of EW_BLOCK elements. SGD is our own loops (vectorised at -O2); Adam
 * is an AVX2 loop with cpu-ref's arithmetic, operation for operation and
 * without fused multiply-adds, so its results are cpu-ref's to the bit
 * (NNLAB_NO_OWN_ADAM=1, or a CPU without AVX2, runs cpu-ref's loop on each
 * item instead). On a CPU with AVX-512 both loops run cpu_avx512.c's
 * 16-wide twins (the same arithmetic; NNLAB_NO_AVX512=1 keeps these).
 *
 * Why its own loop (small batches): under callgrind a batch-4 step
 * of mnist-mlp-128 (Adam on 101,770 parameters) spent 28% of its
 * instructions in cpu-ref's loop, which GCC vectorises four floats wide at
 * best and which computed the bias corrections (two pow calls) per item. */
#include "cpu_internal.h"

#include "cpu_adam_lanes.h"
#include "cpu_avx512.h"
#include "cpu_ref/cpu_ref.h"

#include <math.h>

/* cpu-ref's SGD in the same arithmetic order, one loop per case so that no
 * loop holds a branch: the first step (t = 1) stores g itself in the velocity
 * without reading it, as PyTorch creates its buffer. */
NN_AVX2_CLONES
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

/* One step's constants, as cpu-ref computes them (cpu_ref.c): the type is
 * cpu_avx512.h's, which the AVX-512 loop takes too. */
typedef nn_adam_consts adam_consts;

typedef struct optim_task {
    size_t n;
    float *param, *m, *v;   /* m: SGD's velocity, Adam's first moment */
    const float *grad;
    const nn_sgd_hyper *sgd;
    const nn_adam_hyper *adam;
    nn_backend *b;
    long t;
    adam_consts consts;          /* Adam: the step's constants, computed once */
} optim_task;

nn_sgd_consts nn_cpu_sgd_consts(const nn_sgd_hyper *h, long t)
{
    return (nn_sgd_consts){ .lr = h->lr, .wd = h->weight_decay, .mom = h->momentum,
                            .keep = 1.0f - h->dampening, .nesterov = h->nesterov != 0,
                            .first = t == 1 };
}

static void sgd_item(void *ctx, int item, int part)
{
    const optim_task *t = ctx;
    size_t lo, hi;
    (void)part;
    nn_cpu_ew_range(t->n, item, &lo, &hi);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (nn_cpu_avx512_kernels()) {
        const nn_sgd_consts c = nn_cpu_sgd_consts(t->sgd, t->t);
        nn_avx512_sgd(lo, hi, t->param, t->grad, t->m, &c);
        return;
    }
#endif
    sgd_range(lo, hi, t->param, t->grad, t->m, t->sgd, t->t);
}

nn_adam_consts nn_cpu_adam_consts(const nn_adam_hyper *h, long t)
{
    const double bc1 = 1.0 - pow(h->beta1, (double)t);
    const double bc2 = 1.0 - pow(h->beta2, (double)t);
    return (adam_consts){ .b1 = h->beta1, .b2 = h->beta2, .one_minus_b1 = 1.0f - h->beta1,
                          .one_minus_b2 = 1.0f - h->beta2, .eps = h->eps, .wd = h->weight_decay,
                          .step = (float)(h->lr / bc1), .inv_sqrt_bc2 = (float)(1.0 / sqrt(bc2)) };
}

static void adam_scalar(size_t lo, size_t hi, float *restrict p, const float *restrict g,
                        float *restrict m, float *restrict v, const adam_consts *c)
{
    for (size_t i = lo; i < hi; i++)
        nn_cpu_adam_one(p + i, g[i], m + i, v + i, c);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* adam_scalar eight floats at a time: the same operations in the same order
 * (no FMA: cpu-ref, compiled in ISO C mode, does not contract either). */
__attribute__((target("avx2"))) static void adam_avx2(size_t lo, size_t hi, float *p,
                                                      const float *g, float *m, float *v,
                                                      const adam_consts *c)
{
    const nn_adam_regs8 a = nn_cpu_adam_regs8(c);
    size_t i = lo;
    for (; i + 8 <= hi; i += 8)
        nn_cpu_adam_lanes8(p + i, _mm256_loadu_ps(g + i), m + i, v + i, &a);
    adam_scalar(i, hi, p, g, m, v, c);
}
#endif

static int own_adam_usable(void)
{
    return nn_cpu_switch_on(NN_CPU_SW_OWN_ADAM);
}

static void adam_item(void *ctx, int item, int part)
{
    const optim_task *t = ctx;
    size_t lo, hi;
    (void)part;
    nn_cpu_ew_range(t->n, item, &lo, &hi);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (own_adam_usable()) {
        if (nn_cpu_avx512_kernels())
            nn_avx512_adam(lo, hi, t->param, t->grad, t->m, t->v, &t->consts);
        else
            adam_avx2(lo, hi, t->param, t->grad, t->m, t->v, &t->consts);
        return;
    }
#endif
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
                     .t = step, .consts = nn_cpu_adam_consts(h, step) };
    nn_cpu_ew_run(b, n, 4.0, adam_item, &t);
    return 0;
}
