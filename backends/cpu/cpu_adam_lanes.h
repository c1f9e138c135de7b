/* backends/cpu/cpu_adam_lanes.h - one Adam update of eight floats (AVX2) and of
 * one (plain C), cpu-ref's operations in cpu-ref's order and without fused
 * multiply-adds (the library is compiled in ISO C mode: nothing contracts),
 * so that every caller gives cpu-ref's bits: cpu_optim.c's adam_step over
 * the arena and cpu_linear_adam.c's update fused into the weight gradient.
 * The AVX-512 twin is cpu_avx512_kernels.inc's adam_lanes512. */
#ifndef NNLAB_CPU_ADAM_LANES_H
#define NNLAB_CPU_ADAM_LANES_H

#include <math.h>

#include "cpu_avx512.h"    /* nn_adam_consts */

/* p[0] updated by Adam, its gradient g, its moments m[0] and v[0] */
static inline void nn_cpu_adam_one(float *p, float g, float *m, float *v, const nn_adam_consts *c)
{
    float gi = g + c->wd * *p;
    float mi = c->b1 * *m + c->one_minus_b1 * gi;
    float vi = c->b2 * *v + c->one_minus_b2 * gi * gi;
    *m = mi;
    *v = vi;
    *p -= c->step * mi / (sqrtf(vi) * c->inv_sqrt_bc2 + c->eps);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* Adam's constants, a register each. */
typedef struct nn_adam_regs8 {
    __m256 b1, b2, nb1, nb2, eps, wd, step, isb;
} nn_adam_regs8;

static inline __attribute__((always_inline, target("avx2"))) nn_adam_regs8
nn_cpu_adam_regs8(const nn_adam_consts *c)
{
    return (nn_adam_regs8){ _mm256_set1_ps(c->b1), _mm256_set1_ps(c->b2),
                            _mm256_set1_ps(c->one_minus_b1), _mm256_set1_ps(c->one_minus_b2),
                            _mm256_set1_ps(c->eps), _mm256_set1_ps(c->wd),
                            _mm256_set1_ps(c->step), _mm256_set1_ps(c->inv_sqrt_bc2) };
}

/* nn_cpu_adam_one on the eight floats from p, m and v, whose gradient is g */
static inline __attribute__((always_inline, target("avx2"))) void
nn_cpu_adam_lanes8(float *p, __m256 g, float *m, float *v, const nn_adam_regs8 *a)
{
    __m256 pi = _mm256_loadu_ps(p);
    __m256 gi = _mm256_add_ps(g, _mm256_mul_ps(a->wd, pi));
    __m256 mi = _mm256_add_ps(_mm256_mul_ps(a->b1, _mm256_loadu_ps(m)), _mm256_mul_ps(a->nb1, gi));
    __m256 vi = _mm256_add_ps(_mm256_mul_ps(a->b2, _mm256_loadu_ps(v)),
                              _mm256_mul_ps(_mm256_mul_ps(a->nb2, gi), gi));
    _mm256_storeu_ps(m, mi);
    _mm256_storeu_ps(v, vi);
    __m256 den = _mm256_add_ps(_mm256_mul_ps(_mm256_sqrt_ps(vi), a->isb), a->eps);
    _mm256_storeu_ps(p, _mm256_sub_ps(pi, _mm256_div_ps(_mm256_mul_ps(a->step, mi), den)));
}
#endif

#endif
