/* backends/cpu/cpu_linear_adam.c - linear_backward_adam of the fast CPU backend:
 * a linear layer's backward at a small batch (n up to SMALL_DW_MAX_N) with
 * Adam's update of its weights and bias done in the weight gradient's pass.
 *
 * Why: at batch 4 a step of mnist-mlp-1000 (1.8 million parameters) is
 * memory traffic, not arithmetic. Run apart, the weight gradient writes
 * 7.2 MB that Adam reads back at once, and the step's arrays (weights,
 * gradients and both moments: 28.8 MB, with OpenBLAS's packing on top) no
 * longer fit a 32 MB L3: about 84 MB moved a step (counted, not measured), which at the 2 cores'
 * ~75 GB/s is the whole of its 1,125 us (docs/decisions/0161). Fused, the
 * gradient never reaches memory and the arrays a step touches are 21.6 MB.
 *
 * How: dx first, from w as it was (linear_backward with no dw); then each
 * row of w gets its gradient 8 (AVX2) or 16 (AVX-512) columns at a time in
 * a register, the small-batch kernel's chain (cpu_linear_small.c), and
 * Adam's update from that register (cpu_adam_lanes.h): the same operations
 * in the same order as the two ops run apart, so the same bits; the bias
 * likewise from its column sums. Rows are shared out among the threads.
 * NNLAB_NO_FUSED_ADAM=1 declines every call (the engine then runs the two
 * ops): tests/parity-fused-adam.sh trains both ways and compares. */
#include "cpu_adam_lanes.h"
#include "cpu_avx512.h"
#include "cpu_internal.h"
#include "cpu_small_dw.h"

#include <stdlib.h>

static int fused_adam_usable(int n)
{
    return nn_cpu_switch_on(NN_CPU_SW_FUSED_ADAM) && nn_cpu_small_dw_usable(n);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define KERNEL static inline __attribute__((always_inline, target("avx2,fma")))

/* Rows [lo, hi) of w: each element's gradient, sum over r < N of
 * dy[r][o] x[r][i] (a product, then FMAs in batch order, as
 * cpu_linear_small.c's small_dw_block), then its Adam update. */
KERNEL void small_dw_adam_block(const int N, int in, int out, int lo, int hi, const float *dy,
                                const float *x, float *w, float *m, float *v,
                                const nn_adam_consts *c)
{
    const nn_adam_regs8 a = nn_cpu_adam_regs8(c);
    for (int o = lo; o < hi; o++) {
        float coef[SMALL_DW_MAX_N];
        __m256 cv[SMALL_DW_MAX_N];
        nn_small_dw_coefs(N, dy, out, o, coef, cv);
        const size_t row = (size_t)o * (size_t)in;
        int i = 0;
        for (; i + 8 <= in; i += 8)
            nn_cpu_adam_lanes8(w + row + i, nn_small_dw_lanes8(N, cv, x, in, i), m + row + i,
                               v + row + i, &a);
        for (; i < in; i++)
            nn_cpu_adam_one(w + row + i, nn_small_dw_one(N, coef, x, in, i), m + row + i,
                            v + row + i, c);
    }
}

__attribute__((target("avx2,fma"))) static void dw_adam_rows(int n, int in, int out,
                                                             const float *dy, const float *x,
                                                             float *w, float *m, float *v,
                                                             const nn_adam_consts *c, int lo,
                                                             int hi)
{
    if (nn_cpu_avx512_kernels()) {
        nn_avx512_small_dw_adam_rows(n, in, out, dy, x, w, m, v, c, lo, hi);
        return;
    }
#define SMALL_DW_ADAM(N) small_dw_adam_block(N, in, out, lo, hi, dy, x, w, m, v, c)
    NN_SMALL_N_CASES(n, SMALL_DW_ADAM)  /* fused_adam_usable admits 1..SMALL_DW_MAX_N only */
#undef SMALL_DW_ADAM
}

/* The bias over outputs [lo, hi): its gradient the column sum of dy from 0
 * in row order (cpu_linear.c's column_sums), then Adam. */
static void bias_adam(int n, int out, const float *dy, float *bias, float *m, float *v,
                      const nn_adam_consts *c, int lo, int hi)
{
    if (nn_cpu_avx512_kernels()) {
        nn_avx512_bias_adam(n, out, dy, bias, m, v, c, lo, hi);
        return;
    }
    for (int o = lo; o < hi; o++) {
        float g = 0.0f;
        for (int r = 0; r < n; r++)
            g += dy[(size_t)r * (size_t)out + (size_t)o];
        nn_cpu_adam_one(bias + o, g, m + o, v + o, c);
    }
}

#else /* not x86-64 with GCC or clang: nn_cpu_small_dw_usable says no, so every call declines */

static void dw_adam_rows(int n, int in, int out, const float *dy, const float *x, float *w,
                         float *m, float *v, const nn_adam_consts *c, int lo, int hi)
{
    (void)n, (void)in, (void)out, (void)dy, (void)x, (void)w, (void)m, (void)v, (void)c;
    (void)lo, (void)hi;
    abort();
}

static void bias_adam(int n, int out, const float *dy, float *bias, float *m, float *v,
                      const nn_adam_consts *c, int lo, int hi)
{
    (void)n, (void)out, (void)dy, (void)bias, (void)m, (void)v, (void)c, (void)lo, (void)hi;
    abort();
}

#endif

/* Items: `blocks` blocks of rows of w, then the bias (when there is one). */
typedef struct fused_task {
    int n, in, out, blocks, with_bias;
    const float *x, *dy;
    float *w, *m, *v;
    nn_adam_consts consts;
} fused_task;

static void fused_item(void *ctx, int item, int part)
{
    const fused_task *t = ctx;
    const size_t weights = (size_t)t->out * (size_t)t->in;
    (void)part;
    if (item == t->blocks) {
        bias_adam(t->n, t->out, t->dy, t->w + weights, t->m + weights, t->v + weights, &t->consts,
                  0, t->out);
        return;
    }
    size_t lo, hi;
    nn_cpu_split_range((size_t)t->out, item, t->blocks, 1, &lo, &hi);
    if (hi > lo)
        dw_adam_rows(t->n, t->in, t->out, t->dy, t->x, t->w, t->m, t->v, &t->consts, (int)lo,
                     (int)hi);
}

int nn_cpu_linear_backward_adam(nn_backend *b, int n, int in, int out, const float *x,
                                const float *dy, float *dx, float *param, int with_bias, float *m,
                                float *v, const nn_adam_hyper *h, long t)
{
    if (n <= 0 || in <= 0 || out <= 0)
        return nn_backend_fail(b, "linear_backward_adam: bad shape n=%d in=%d out=%d", n, in, out);
    if (t < 1)
        return nn_backend_fail(b, "linear_backward_adam: step %ld, steps count from 1", t);
    if (!fused_adam_usable(n))
        return NN_OP_DECLINED;
    /* dx from the weights as they are, before the update below */
    if (dx && nn_cpu_linear_backward(b, n, in, out, x, param, dy, dx, NULL, NULL) != 0)
        return -1;
    /* Adam's pass weighs about as much as the products' (arithmetic: ~4 MACs an element) */
    const double work = (double)out * (double)in * (double)(n + 4);
    const int threads = nn_cpu_threads_for(b, work, PAR_MIN_MACS);
    fused_task task = { .n = n, .in = in, .out = out, .with_bias = with_bias, .x = x, .dy = dy,
                        .w = param, .m = m, .v = v, .consts = nn_cpu_adam_consts(h, t) };
    task.blocks = threads == 1 ? 1 : 2 * threads;
    if (task.blocks > out)
        task.blocks = out;
    nn_cpu_par_for(b, threads, task.blocks + (with_bias ? 1 : 0), fused_item, &task);
    return 0;
}
