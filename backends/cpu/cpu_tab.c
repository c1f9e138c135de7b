/* backends/cpu/cpu_tab.c - the fast CPU backend's batch norm (ghost batches),
 * GLU and sparsemax (backend.h has the contracts, cpu_ref_tab.c the
 * reference arithmetic). Batch norm runs in items of (FEAT_BLOCK features,
 * one ghost batch), with the rows read along the features so that the inner
 * loops are contiguous; each item leaves its chunk's sums in a scratch, and
 * the running statistics and the gamma and beta gradients are then summed
 * over the chunks in order on one thread (the reference's order); GLU and
 * sparsemax in items of rows. Sums in float. Sparsemax finds tau without a
 * sort by Michelot's iteration (tau from the elements above the last tau
 * until none drops out), which ends on the sort's support exactly; its sums
 * run in 16 lanes (cpu_tab_kernels.inc). */
#include "cpu_internal.h"
#include "ghost_batch.h"
#include "mish.h"

#include <math.h>
#include <stdlib.h>

#define FEAT_BLOCK 64        /* features per batch norm item (stack accumulators) */
#define ROW_BLOCK 64         /* rows per GLU and sparsemax item */
#define SPARSEMAX_LANES 16   /* Michelot's partial sums: element j in lane j % 16 */

/* ---- the tasks: batch norm's (feature blocks x ghost batches), the rows' ----- */

typedef struct bn_task {
    const nn_bn_geom *g;
    int training;
    const float *x, *gamma, *beta, *dy;
    float *running, *y, *dx, *dgamma, *dbeta;
    int chunk, chunks, fblocks;  /* rows per ghost batch, ghost batches, feature blocks */
    float *sums;        /* (chunks, 2, c): forward mean and var; backward sdyx and sdy */
} bn_task;

/* Item -> its features [f0, f0 + w) and its ghost batch's rows [r0, r1). */
static void bn_item(const bn_task *t, int item, int *f0, int *w, int *r0, int *r1)
{
    const int c = t->g->c, fb = item % t->fblocks, ch = item / t->fblocks;
    *f0 = fb * FEAT_BLOCK;
    *w = c - *f0 < FEAT_BLOCK ? c - *f0 : FEAT_BLOCK;
    *r0 = ch * t->chunk;
    *r1 = *r0 + t->chunk < t->g->n ? *r0 + t->chunk : t->g->n;
}

typedef struct row_task {
    int n, width;                /* rows; GLU: half, sparsemax: d */
    float sparsity;
    const float *x, *y, *dy;
    float *out;
} row_task;

static void row_range(const row_task *t, int item, int *lo, int *hi)
{
    *lo = item * ROW_BLOCK;
    *hi = t->n - *lo < ROW_BLOCK ? t->n : *lo + ROW_BLOCK;
}

/* sigmoid(g) = 1 / (1 + e^-g) with mish.h's branch-free exponential, so that
 * the GLU loops vectorise: glibc's expf, called once per element, was 18%
 * of a tabnet-regression step's instructions at batch 128 (callgrind: 85 M
 * of 482 M over 42 steps; the rest of expf's calls made the data set). e^t is exact in form up to t = 88 (2^127 scale), so -g is
 * clamped to [-87, 87]: below, sigmoid is 1 to float precision; above, it
 * is e^-87 ~ 1.6e-38 where the true value is smaller still, a difference
 * under float's smallest normal. A NaN g gives a NaN (the clamp alone would
 * turn it into -87). */
static inline float glu_sigmoid(float g)
{
    float t = -g;
    t = t > -87.0f ? (t < 87.0f ? t : 87.0f) : -87.0f;
    const float s = 1.0f / (1.0f + nn_mish_exp_clamped(t));
    return g != g ? g : s;   /* (not "g == g ? s : g": gcc 12 vectorises only this form) */
}

/* The per-item kernels of batch norm and GLU, twice (cpu_tab_kernels.inc):
 * the baseline's (4 floats a vector), and the same C for AVX-512 (16) where
 * the CPU runs it (nn_cpu_avx512_kernels), named _avx512. The same
 * operations in the same order (no contraction in ISO C mode: cpu_avx512.c's
 * guard), so the same bits. */
#define TAB_NAME(name) name
#include "cpu_tab_kernels.inc"
#undef TAB_NAME
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)   /* clang has no #pragma GCC target */
#pragma GCC push_options
#pragma GCC target("avx512f")
#define TAB_NAME(name) name##_avx512
#include "cpu_tab_kernels.inc"
#undef TAB_NAME
#pragma GCC pop_options
#define TAB_WIDE() nn_cpu_avx512_kernels()
#else
#define bn_forward_item_avx512 bn_forward_item
#define bn_backward_item_avx512 bn_backward_item
#define glu_forward_item_avx512 glu_forward_item
#define glu_backward_item_avx512 glu_backward_item
#define sparsemax_forward_item_avx512 sparsemax_forward_item
#define TAB_WIDE() 0
#endif

/* ---- batch norm ------------------------------------------------------------- */

/* The running statistics updated chunk by chunk, in order. */
static void bn_running_update(const bn_task *t)
{
    const nn_bn_geom *g = t->g;
    float *rm = t->running, *rv = t->running + g->c;
    for (int ch = 0; ch < t->chunks; ch++) {
        const int r0 = ch * t->chunk, m = (r0 + t->chunk < g->n ? t->chunk : g->n - r0);
        const float *mean = t->sums + (size_t)ch * 2 * (size_t)g->c, *var = mean + g->c;
        for (int j = 0; j < g->c; j++) {
            rm[j] = (1.0f - g->momentum) * rm[j] + g->momentum * mean[j];
            rv[j] = (1.0f - g->momentum) * rv[j] + g->momentum * var[j] * (float)m / (float)(m - 1);
        }
    }
}

/* dgamma and dbeta: the chunks' sums added in chunk order. */
static void bn_grad_sums(const bn_task *t)
{
    const int c = t->g->c;
    for (int j = 0; j < c; j++) {
        float dg = 0.0f, db = 0.0f;
        for (int ch = 0; ch < t->chunks; ch++) {
            dg += t->sums[(size_t)ch * 2 * (size_t)c + (size_t)j];
            db += t->sums[(size_t)ch * 2 * (size_t)c + (size_t)c + (size_t)j];
        }
        if (t->dgamma)
            t->dgamma[j] = dg;
        if (t->dbeta)
            t->dbeta[j] = db;
    }
}

/* Items of (feature block, ghost batch): a batch of 4096 in ghost batches of
 * 128 is 32 chunks, so a layer of 68 features keeps every thread busy (in
 * items of feature blocks alone it was one block of 64 and one of 4, and a
 * layer of 34 features one item for all the threads). after runs on this
 * thread once the items are done: the sums over the chunks, in order. */
static int bn_run(nn_backend *b, const char *op, bn_task *t, item_fn fn,
                  void (*after)(const bn_task *))
{
    char why[256];
    const nn_bn_geom *g = t->g;
    if (nn_bn_geom_problem(op, g->n, g->c, g->virtual_batch, g->eps, t->training, why, sizeof why))
        return nn_backend_fail(b, "%s", why);
    /* out of training the running statistics normalise: any rows split will do */
    t->chunk = t->training ? nn_ghost_chunk(g->n, g->virtual_batch) : (g->n < 128 ? g->n : 128);
    t->chunks = (g->n + t->chunk - 1) / t->chunk;
    t->fblocks = (g->c + FEAT_BLOCK - 1) / FEAT_BLOCK;
    t->sums = NULL;
    if (t->training) {
        t->sums = malloc((size_t)t->chunks * 2 * (size_t)g->c * sizeof *t->sums);
        if (!t->sums)
            return nn_backend_fail(b, "%s: out of memory for %d chunks' sums of %d features", op,
                                   t->chunks, g->c);
    }
    double work = 4.0 * g->n * (double)g->c;
    nn_cpu_par_for(b, nn_cpu_threads_for(b, work, PAR_MIN_ELEMS), t->chunks * t->fblocks, fn, t);
    if (t->training)
        after(t);
    free(t->sums);
    return 0;
}

int nn_cpu_batchnorm_forward(nn_backend *b, const nn_bn_geom *g, int training, const float *x,
                             const float *gamma, const float *beta, float *running, float *y)
{
    bn_task t = { .g = g, .training = training, .x = x, .gamma = gamma, .beta = beta,
                  .running = running, .y = y };
    return bn_run(b, "batchnorm_forward", &t, TAB_WIDE() ? bn_forward_item_avx512 : bn_forward_item,
                  bn_running_update);
}

int nn_cpu_batchnorm_backward(nn_backend *b, const nn_bn_geom *g, const float *x,
                              const float *gamma, const float *dy, float *dx, float *dgamma,
                              float *dbeta)
{
    bn_task t = { .g = g, .training = 1, .x = x, .gamma = gamma, .dy = dy, .dx = dx,
                  .dgamma = dgamma, .dbeta = dbeta };
    return bn_run(b, "batchnorm_backward", &t, TAB_WIDE() ? bn_backward_item_avx512 : bn_backward_item,
                  bn_grad_sums);
}

/* ---- rows: GLU and sparsemax ----------------------------------------------------- */

static void rows_run(nn_backend *b, row_task *t, double cost, item_fn fn)
{
    int items = (t->n + ROW_BLOCK - 1) / ROW_BLOCK;
    double work = cost * t->n * (double)t->width;
    nn_cpu_par_for(b, nn_cpu_threads_for(b, work, PAR_MIN_ELEMS), items, fn, t);
}

int nn_cpu_glu_forward(nn_backend *b, int n, int half, const float *x, float *y)
{
    if (n < 0 || half < 1)
        return nn_backend_fail(b, "glu_forward: bad shape (n %d, half %d)", n, half);
    row_task t = { .n = n, .width = half, .x = x, .out = y };
    rows_run(b, &t, 10.0, TAB_WIDE() ? glu_forward_item_avx512 : glu_forward_item);
    return 0;
}

int nn_cpu_glu_backward(nn_backend *b, int n, int half, const float *x, const float *dy,
                        float *dx)
{
    if (n < 0 || half < 1)
        return nn_backend_fail(b, "glu_backward: bad shape (n %d, half %d)", n, half);
    row_task t = { .n = n, .width = half, .x = x, .dy = dy, .out = dx };
    rows_run(b, &t, 10.0, TAB_WIDE() ? glu_backward_item_avx512 : glu_backward_item);
    return 0;
}

/* -(log(y + 1e-15) + y / (y + 1e-15)): the entropy term's gradient */
static float entropy_grad(float y)
{
    return -(logf(y + 1e-15f) + y / (y + 1e-15f));
}

static void sparsemax_backward_item(void *ctx, int item, int part)
{
    const row_task *t = ctx;
    const int d = t->width;
    const float aux = t->sparsity / (float)t->n;
    int lo, hi;
    (void)part;
    row_range(t, item, &lo, &hi);
    for (int i = lo; i < hi; i++) {
        const float *restrict y = t->y + (size_t)i * d, *restrict dy = t->dy + (size_t)i * d;
        float *restrict dx = t->out + (size_t)i * d;
        float sum = 0.0f;
        int support = 0;
        for (int j = 0; j < d; j++) {
            dx[j] = y[j] > 0.0f ? dy[j] + (aux > 0.0f ? aux * entropy_grad(y[j]) : 0.0f) : 0.0f;
            sum += dx[j];
            support += y[j] > 0.0f;
        }
        float mean = support ? sum / (float)support : 0.0f;
        for (int j = 0; j < d; j++)
            dx[j] = y[j] > 0.0f ? dx[j] - mean : 0.0f;
    }
}

int nn_cpu_sparsemax_forward(nn_backend *b, int n, int d, const float *x, float *y)
{
    if (n < 0 || d < 1)
        return nn_backend_fail(b, "sparsemax_forward: bad shape (n %d, d %d)", n, d);
    row_task t = { .n = n, .width = d, .x = x, .out = y };
    rows_run(b, &t, 8.0, TAB_WIDE() ? sparsemax_forward_item_avx512 : sparsemax_forward_item);
    return 0;
}

int nn_cpu_sparsemax_backward(nn_backend *b, int n, int d, const float *y, const float *dy,
                              float sparsity, float *dx)
{
    if (n < 1 || d < 1 || !(sparsity >= 0.0f))
        return nn_backend_fail(b, "sparsemax_backward: bad arguments (n %d, d %d, sparsity %g)", n,
                               d, (double)sparsity);
    row_task t = { .n = n, .width = d, .sparsity = sparsity, .y = y, .dy = dy, .out = dx };
    rows_run(b, &t, sparsity > 0.0f ? 10.0 : 2.0, sparsemax_backward_item);
    return 0;
}
