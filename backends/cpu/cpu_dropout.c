/* backends/cpu/cpu_dropout.c - dropout_forward and dropout_backward of the fast
 * CPU backend: the mask of backends/dropout_hash.h, recomputed in backward,
 * in items of EW_BLOCK elements.
 *
 * Why a vector loop: the hash is two 64-bit multiplies an element, which
 * the compiler leaves scalar on x86-64's baseline; at batch 256
 * mnist-mlp-1000's two dropout layers (forward and backward, 1 M elements a
 * step) took ~5% of its step under perf. The AVX2 loop hashes four
 * elements a register, its 64-bit multiplies made of 32-bit ones: integer
 * arithmetic, so the same mask, and the same scaling, so the same bits
 * (NNLAB_NO_DROPOUT_SIMD=1 keeps the scalar loop; the parity suite checks
 * both against cpu-ref, tests/parity-im2col.sh).
 */
#include "cpu_internal.h"

#include <stdint.h>
#include <string.h>

#include "dropout_hash.h"

/* The mask of backends/dropout_hash.h with the per-call key hoisted: one
 * mix per element, the same elements as cpu-ref. */
static void dropout_range(size_t lo, size_t hi, float p, uint64_t seed, uint64_t counter,
                          const float *restrict x, float *restrict y)
{
    const float scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
    const uint32_t threshold = nn_dropout_threshold(p);
    const uint64_t key = nn_dropout_key(seed, counter);
    for (size_t i = lo; i < hi; i++) {
        float v = x[i] * scale;
        y[i] = nn_dropout_bits(key, i) >= threshold ? v : 0.0f;
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define KERNEL static inline __attribute__((always_inline, target("avx2")))

/* a * b mod 2^64 per lane, b given as its 32-bit halves */
KERNEL __m256i mul64(__m256i a, __m256i b_lo, __m256i b_hi)
{
    __m256i lo = _mm256_mul_epu32(a, b_lo);
    __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), b_lo),
                                     _mm256_mul_epu32(a, b_hi));
    return _mm256_add_epi64(lo, _mm256_slli_epi64(cross, 32));
}

/* nn_mix64 per lane, then the top 24 bits (nn_dropout_bits) */
KERNEL __m256i bits4(__m256i z)
{
    const __m256i c1_lo = _mm256_set1_epi64x(0x1ce4e5b9), c1_hi = _mm256_set1_epi64x(0xbf58476d);
    const __m256i c2_lo = _mm256_set1_epi64x(0x133111eb), c2_hi = _mm256_set1_epi64x(0x94d049bb);
    z = mul64(_mm256_xor_si256(z, _mm256_srli_epi64(z, 30)), c1_lo, c1_hi);
    z = mul64(_mm256_xor_si256(z, _mm256_srli_epi64(z, 27)), c2_lo, c2_hi);
    return _mm256_srli_epi64(_mm256_xor_si256(z, _mm256_srli_epi64(z, 31)), 40);
}

/* dropout_range eight elements a step: the lanes' keep masks (bits >=
 * threshold, as bits > threshold - 1: both under 2^25, so the signed compare
 * is exact) packed to 32-bit lanes in element order. */
__attribute__((target("avx2"))) static void dropout_avx2(size_t lo, size_t hi, float p,
                                                         uint64_t seed, uint64_t counter,
                                                         const float *x, float *y)
{
    const float scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
    const uint32_t threshold = nn_dropout_threshold(p);
    const uint64_t key = nn_dropout_key(seed, counter);
    const __m256i below = _mm256_set1_epi64x((long long)threshold - 1);
    const __m256i step4 = _mm256_set1_epi64x((long long)(4 * NN_GOLDEN64));
    const __m256i order = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
    const __m256 vscale = _mm256_set1_ps(scale);
    size_t i = lo;
    /* z of element j: key + (j + 1) golden, mod 2^64 */
    __m256i z0 = _mm256_setr_epi64x((long long)(key + (i + 1) * NN_GOLDEN64),
                                    (long long)(key + (i + 2) * NN_GOLDEN64),
                                    (long long)(key + (i + 3) * NN_GOLDEN64),
                                    (long long)(key + (i + 4) * NN_GOLDEN64));
    for (; i + 8 <= hi; i += 8) {
        __m256i z1 = _mm256_add_epi64(z0, step4);
        __m256i k0 = _mm256_cmpgt_epi64(bits4(z0), below), k1 = _mm256_cmpgt_epi64(bits4(z1), below);
        __m256 both = _mm256_shuffle_ps(_mm256_castsi256_ps(k0), _mm256_castsi256_ps(k1),
                                        _MM_SHUFFLE(2, 0, 2, 0));
        __m256 keep = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(_mm256_castps_si256(both), order));
        __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), vscale);
        _mm256_storeu_ps(y + i, _mm256_and_ps(keep, v));
        z0 = _mm256_add_epi64(z1, step4);
    }
    dropout_range(i, hi, p, seed, counter, x, y);
}
#endif

typedef struct dropout_task {
    size_t n;
    float p;
    uint64_t seed, counter;
    const float *in;
    float *out;
} dropout_task;

static void dropout_item(void *ctx, int item, int part)
{
    const dropout_task *t = ctx;
    size_t lo, hi;
    (void)part;
    nn_cpu_ew_range(t->n, item, &lo, &hi);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (nn_cpu_switch_on(NN_CPU_SW_DROPOUT_SIMD)) {
        dropout_avx2(lo, hi, t->p, t->seed, t->counter, t->in, t->out);
        return;
    }
#endif
    dropout_range(lo, hi, t->p, t->seed, t->counter, t->in, t->out);
}

/* forward and backward are the same masked scaling (of x, or of dy) */
static int dropout(nn_backend *b, const char *op, size_t n, float p, uint64_t seed,
                   uint64_t counter, const float *in, float *out)
{
    if (!(p >= 0.0f && p <= 1.0f))
        return nn_backend_fail(b, "%s: probability %g outside [0, 1]", op, (double)p);
    if (p == 0.0f) {
        memcpy(out, in, n * sizeof *out);
        return 0;
    }
    dropout_task t = { .n = n, .p = p, .seed = seed, .counter = counter, .in = in, .out = out };
    nn_cpu_ew_run(b, n, 4.0, dropout_item, &t);
    return 0;
}

int nn_cpu_dropout_forward(nn_backend *b, size_t n, float p, uint64_t seed, uint64_t counter,
                           const float *x, float *y)
{
    return dropout(b, "dropout_forward", n, p, seed, counter, x, y);
}

int nn_cpu_dropout_backward(nn_backend *b, size_t n, float p, uint64_t seed, uint64_t counter,
                            const float *dy, float *dx)
{
    return dropout(b, "dropout_backward", n, p, seed, counter, dy, dx);
}
