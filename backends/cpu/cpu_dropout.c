/* backends/cpu/cpu_dropout.c - dropout_forward and dropout_backward of the fast
 * CPU backend: the mask of backends/dropout_hash.h, recomputed in backward,
 * in items of EW_BLOCK elements.
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
