/* backends/mish.h - mish's math, once for every backend: the reference
 * formula that cpu-ref and the GPU kernels (nvcc, or g++ for the emulated
 * module) compute, and the CPU backend's one-exponential form of it.
 * Plain C that nvcc also compiles (NN_HOSTDEV marks it for both sides, as
 * in dropout_hash.h). */
#ifndef NNLAB_MISH_H
#define NNLAB_MISH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifndef NN_HOSTDEV
#ifdef __CUDACC__
#define NN_HOSTDEV __host__ __device__
#else
#define NN_HOSTDEV
#endif
#endif

/* ---- the reference ---------------------------------------------------------------------- */

/* mish(x) = x tanh(softplus(x)), softplus(x) = log(1 + e^x) written as
 * log1p(e^-|x|) + max(x, 0) so that it neither overflows nor loses the small
 * tail. The derivative, with s = tanh(softplus(x)) and softplus' = sigmoid:
 *   d/dx = s + x sigmoid(x) (1 - s^2).
 * sigmoid reuses e = e^-|x|: 1/(1+e) for x >= 0, e/(1+e) below. */
static inline NN_HOSTDEV float nn_mish_ref(float x)
{
    float e = expf(-fabsf(x));
    float s = tanhf(log1pf(e) + fmaxf(x, 0.0f));
    return x * s;
}

static inline NN_HOSTDEV float nn_mish_grad_ref(float x)
{
    float e = expf(-fabsf(x));
    float s = tanhf(log1pf(e) + fmaxf(x, 0.0f));
    float r = 1.0f / (1.0f + e);
    float sig = x >= 0.0f ? r : e * r;
    return s + x * sig * (1.0f - s * s);
}

/* ---- the CPU backend's form: one exponential, no branch --------------------------------- */

/* The same function with one exp instead of exp, log1p and tanh: with
 * e = e^x and n = e (e + 2) = (1 + e)^2 - 1,
 *   tanh(softplus(x)) = ((1+e)^2 - 1) / ((1+e)^2 + 1) = n / (n + 2)
 *   mish'(x) = s + x sigmoid(x) (1 - s^2) = n/(n+2) + 4 x e (1+e) / (n+2)^2.
 * There is no cancellation for x -> -inf (n ~ 2e), and above x = 20 both are
 * exactly x and 1 in float (before e^2 could overflow). Host code: the
 * backends/cpu/cpu_activation.c loops vectorise around it. */

/* e^x for x in [-87, 20] (mish's callers clamp; the form holds to 88, where
 * 2^n reaches 2^127: cpu_tab.c's sigmoid uses it to 87), without a branch or a call, so
 * that the loops around it vectorise: x = n ln2 + r, n rounded to nearest by
 * adding and subtracting 1.5 * 2^23, e^r by Cephes' degree-6 polynomial on
 * |r| <= ln2/2 (relative error about 2e-7), 2^n built in the exponent bits.
 * glibc's expf, called once per element, made mish 40% of the
 * conv1d-regression step. */
static inline float nn_mish_exp_clamped(float x)
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

/* x clamped to nn_mish_exp_clamped's domain [-87, 20]; a NaN becomes -87,
 * since converting NaN to an integer there is undefined (the result still
 * carries the NaN through x itself). */
static inline float nn_mish_exp_domain(float x)
{
    return x > -87.0f ? (x < 20.0f ? x : 20.0f) : -87.0f;
}

/* mish(x) = x n / (n + 2). Above 20, mish(x) = x to float precision (and
 * e^2x would overflow near 44); below -87 it is x e^x, which underflows:
 * x * 0 there, which is also the reference's NaN at -inf. A NaN propagates
 * through x. */
static inline float nn_mish_fast(float x)
{
    const float xc = nn_mish_exp_domain(x);
    const float e = nn_mish_exp_clamped(xc), n = e * (e + 2.0f);
    const float y = x * n / (n + 2.0f);
    return x > 20.0f ? x : x < -87.0f ? x * 0.0f : y;
}

/* d/dx mish = n/(n+2) + 4 x e^x (1 + e^x) / (n+2)^2: 1 above 20, 0 below
 * -87, and NaN at +-inf as in the reference (inf * 0 there) */
static inline float nn_mish_grad_fast(float x)
{
    const float xc = nn_mish_exp_domain(x);
    const float e = nn_mish_exp_clamped(xc), n = e * (e + 2.0f), d = 1.0f / (n + 2.0f);
    const float g = n * d + 4.0f * x * e * (1.0f + e) * d * d;
    return x > 20.0f ? x * 0.0f + 1.0f : x < -87.0f ? x * 0.0f : g;
}

#endif
