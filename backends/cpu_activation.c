/* backends/cpu_activation.c - act_forward and act_backward of the fast CPU
 * backend (relu, tanh, mish), in items of EW_BLOCK elements. Our own loops,
 * written so that GCC vectorises them at -O2 (cpu-ref's are the same
 * arithmetic, but -O2 only vectorises loops of a known trip count, and relu's
 * select on random signs is a mispredicted branch per element); tanh's
 * forward is cpu-ref's loop on each item.
 */
#include "cpu_internal.h"

#include <stdint.h>
#include <string.h>

#include "cpu_ref.h"

/* mish with one exp instead of exp, log1p and tanh: with e = e^x and
 * n = e (e + 2) = (1 + e)^2 - 1,
 *   tanh(softplus(x)) = ((1+e)^2 - 1) / ((1+e)^2 + 1) = n / (n + 2)
 *   mish'(x) = s + x sigmoid(x) (1 - s^2) = n/(n+2) + 4 x e (1+e) / (n+2)^2.
 * There is no cancellation for x -> -inf (n ~ 2e), and above x = 20 both are
 * exactly x and 1 in float (before e^2 could overflow). */
/* e^x for x in [-87, 20] (callers clamp), without a branch or a call, so
 * that FOR_EACH_8 vectorises the loops around it: x = n ln2 + r, n rounded to
 * nearest by adding and subtracting 1.5 * 2^23, e^r by Cephes' degree-6
 * polynomial on |r| <= ln2/2 (relative error about 2e-7), 2^n built in the
 * exponent bits. glibc's expf, called once per element, made mish 40% of the
 * conv1d-regression step. */
static inline float exp_clamped(float x)
{
    const float round_big = 12582912.0f;
    const float n = (x * 1.44269504088896341f + round_big) - round_big;
    const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    const int32_t bits = ((int32_t)n + 127) * (1 << 23);
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

/* x clamped to exp_clamped's domain [-87, 20]; a NaN becomes -87, since
 * converting NaN to an integer there is undefined (the result still carries
 * the NaN through x itself). */
static inline float exp_domain(float x)
{
    return x > -87.0f ? (x < 20.0f ? x : 20.0f) : -87.0f;
}

/* mish(x) = x tanh(log(1 + e^x)) = x n / (n + 2), n = e^x (e^x + 2): one
 * exponential. Above 20, mish(x) = x to float precision (and e^2x would
 * overflow near 44); below -87 it is x e^x, which underflows: x * 0 there,
 * which is also cpu-ref's NaN at -inf. A NaN propagates through x. */
static inline float mish_fwd_1(float x)
{
    const float xc = exp_domain(x);
    const float e = exp_clamped(xc), n = e * (e + 2.0f);
    const float y = x * n / (n + 2.0f);
    return x > 20.0f ? x : x < -87.0f ? x * 0.0f : y;
}

/* d/dx mish = n/(n+2) + 4 x e^x (1 + e^x) / (n+2)^2: 1 above 20, 0 below
 * -87, and NaN at +-inf as in cpu-ref (inf * 0 there) */
static inline float mish_grad_1(float x)
{
    const float xc = exp_domain(x);
    const float e = exp_clamped(xc), n = e * (e + 2.0f), d = 1.0f / (n + 2.0f);
    const float g = n * d + 4.0f * x * e * (1.0f + e) * d * d;
    return x > 20.0f ? x * 0.0f + 1.0f : x < -87.0f ? x * 0.0f : g;
}

typedef struct act_task {
    nn_backend *b;
    size_t n;
    enum nn_act act;
    const float *x, *y, *dy;
    float *out;
} act_task;

/* The loops, over [lo, hi); restrict parameters, which is what lets the
 * compiler vectorise them. */
static void relu_fwd(size_t lo, size_t hi, const float *restrict x, float *restrict y)
{
    FOR_EACH_8(i, lo, hi, y[i] = x[i] < 0.0f ? 0.0f : x[i]);   /* a NaN passes, as torch.relu */
}

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

static void tanh_bwd(size_t lo, size_t hi, const float *restrict y, const float *restrict dy,
                     float *restrict dx)
{
    FOR_EACH_8(i, lo, hi, dx[i] = dy[i] * (1.0f - y[i] * y[i]));   /* from the saved output */
}

static void mish_fwd(size_t lo, size_t hi, const float *restrict x, float *restrict y)
{
    FOR_EACH_8(i, lo, hi, y[i] = mish_fwd_1(x[i]));
}

static void mish_bwd(size_t lo, size_t hi, const float *restrict x, const float *restrict dy,
                     float *restrict dx)
{
    FOR_EACH_8(i, lo, hi, dx[i] = dy[i] * mish_grad_1(x[i]));
}

static void act_forward_item(void *ctx, int item, int part)
{
    const act_task *t = ctx;
    size_t lo, hi;
    (void)part;
    nn_cpu_ew_range(t->n, item, &lo, &hi);
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
