/* backends/cpu/cpu_activation.c - act_forward and act_backward of the fast CPU
 * backend (relu, tanh, mish), in items of EW_BLOCK elements. Our own loops,
 * written so that GCC vectorises them at -O2 (cpu-ref's are the same
 * arithmetic, but -O2 only vectorises loops of a known trip count, and relu's
 * select on random signs is a mispredicted branch per element); tanh's
 * forward is cpu-ref's loop on each item. relu and tanh's gradient run
 * cpu_avx512.c's twins where the CPU has AVX-512 (the same results).
 */
#include "cpu_internal.h"

#include <stdint.h>
#include <string.h>

#include "cpu_avx512.h"
#include "cpu_ref/cpu_ref.h"
#include "mish.h"          /* nn_mish_fast, nn_mish_grad_fast */

typedef struct act_task {
    nn_backend *b;
    size_t n;
    enum nn_act act;
    const float *x, *y, *dy;
    float *out;
} act_task;

/* The loops, over [lo, hi); restrict parameters, which is what lets the
 * compiler vectorise them. */
NN_AVX2_CLONES
static void relu_fwd(size_t lo, size_t hi, const float *restrict x, float *restrict y)
{
    FOR_EACH_8(i, lo, hi, y[i] = x[i] < 0.0f ? 0.0f : x[i]);   /* a NaN passes, as torch.relu */
}

NN_AVX2_CLONES
static void relu_bwd(size_t lo, size_t hi, const float *restrict x, const float *restrict dy,
                     float *restrict dx)
{
    /* 0 at x == 0, as PyTorch; dy loaded unconditionally, or the select
     * would be a conditional load, which does not vectorise */
    FOR_EACH_8(i, lo, hi, {
        float d = dy[i];
        dx[i] = x[i] > 0.0f ? d : 0.0f;
    });
}

NN_AVX2_CLONES
static void tanh_bwd(size_t lo, size_t hi, const float *restrict y, const float *restrict dy,
                     float *restrict dx)
{
    FOR_EACH_8(i, lo, hi, dx[i] = dy[i] * (1.0f - y[i] * y[i]));   /* from the saved output */
}

NN_AVX2_CLONES
static void mish_fwd(size_t lo, size_t hi, const float *restrict x, float *restrict y)
{
    FOR_EACH_8(i, lo, hi, y[i] = nn_mish_fast(x[i]));
}

NN_AVX2_CLONES
static void mish_bwd(size_t lo, size_t hi, const float *restrict x, const float *restrict dy,
                     float *restrict dx)
{
    FOR_EACH_8(i, lo, hi, dx[i] = dy[i] * nn_mish_grad_fast(x[i]));
}

/* The AVX-512 twins of relu and tanh's gradient (cpu_avx512.h) where the CPU
 * runs them: 1 when one ran. Mish keeps the loops above, which GCC
 * vectorises at the baseline width around its polynomial. */
static int act_avx512(enum nn_act act, int backward, size_t lo, size_t hi, const act_task *t)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (!nn_cpu_avx512_kernels() || act == NN_ACT_MISH || (act == NN_ACT_TANH && !backward))
        return 0;
    if (!backward)
        nn_avx512_relu_fwd(lo, hi, t->x, t->out);
    else if (act == NN_ACT_RELU)
        nn_avx512_relu_bwd(lo, hi, t->x, t->dy, t->out);
    else
        nn_avx512_tanh_bwd(lo, hi, t->y, t->dy, t->out);
    return 1;
#else
    (void)act, (void)backward, (void)lo, (void)hi, (void)t;
    return 0;
#endif
}

static void act_forward_item(void *ctx, int item, int part)
{
    const act_task *t = ctx;
    size_t lo, hi;
    (void)part;
    nn_cpu_ew_range(t->n, item, &lo, &hi);
    if (act_avx512(t->act, 0, lo, hi, t))
        return;
    if (t->act == NN_ACT_RELU)
        relu_fwd(lo, hi, t->x, t->out);
    else if (t->act == NN_ACT_MISH)
        mish_fwd(lo, hi, t->x, t->out);
    else
        nn_ref_act_forward(t->b, t->act, hi - lo, t->x + lo, t->out + lo);
}

static void act_backward_item(void *ctx, int item, int part)
{
    const act_task *t = ctx;
    size_t lo, hi;
    (void)part;
    nn_cpu_ew_range(t->n, item, &lo, &hi);
    if (act_avx512(t->act, 1, lo, hi, t))
        return;
    if (t->act == NN_ACT_RELU)
        relu_bwd(lo, hi, t->x, t->dy, t->out);
    else if (t->act == NN_ACT_TANH)
        tanh_bwd(lo, hi, t->y, t->dy, t->out);
    else
        mish_bwd(lo, hi, t->x, t->dy, t->out);
}

/* an element's cost against a plain copy */
static double act_cost(enum nn_act act)
{
    return act == NN_ACT_RELU ? 1.0 : 10.0;
}

int nn_cpu_act_forward(nn_backend *b, enum nn_act act, size_t n, const float *x, float *y)
{
    if (act != NN_ACT_RELU && act != NN_ACT_TANH && act != NN_ACT_MISH)
        return nn_backend_fail(b, "act_forward: unknown activation %d", (int)act);
    act_task t = { .b = b, .n = n, .act = act, .x = x, .out = y };
    nn_cpu_ew_run(b, n, act_cost(act), act_forward_item, &t);
    return 0;
}

int nn_cpu_act_backward(nn_backend *b, enum nn_act act, size_t n, const float *x,
                        const float *y, const float *dy, float *dx)
{
    if (act != NN_ACT_RELU && act != NN_ACT_TANH && act != NN_ACT_MISH)
        return nn_backend_fail(b, "act_backward: unknown activation %d", (int)act);
    act_task t = { .b = b, .n = n, .act = act, .x = x, .y = y, .dy = dy, .out = dx };
    nn_cpu_ew_run(b, n, act_cost(act), act_backward_item, &t);
    return 0;
}
