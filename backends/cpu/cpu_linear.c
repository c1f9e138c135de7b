/* backends/cpu/cpu_linear.c - linear_forward and linear_backward of the fast CPU
 * backend: y = x . w^T + bias and its backward, as OpenBLAS sgemms whose
 * outputs are cut into blocks along their longer side, the blocks (and the
 * bias gradient's column sums) run as one parallel loop (cpu_threads.c).
 * Each product runs on the library the calibration chose for its whole
 * shape (cpu_blis.h), every block of it on the same one.
 */
#include "cpu_blis.h"
#include "cpu_internal.h"

#include <cblas.h>
#include <string.h>

/* The small input gradient's blocks of columns are multiples of the AVX-512
 * kernel's tile (64 columns), so that no tile is cut; the AVX2 kernel takes
 * any range. */
#define SMALL_DX_COLS 64

/* Row-major C (m, n) = op(A) op(B) + beta C, cut into `blocks` blocks. */
typedef struct gemm_args {
    enum CBLAS_TRANSPOSE ta, tb;
    int m, n, k;
    const float *a;
    int lda;
    const float *b;
    int ldb;
    float beta;
    float *c;
    int ldc;
    int blocks;
    int lib;                     /* enum nn_blas_lib, for the whole product's shape */
} gemm_args;

/* Blocks worth cutting C into: enough for every thread to claim about two,
 * none smaller than PAR_MIN_MACS, none narrower than 16 (the sgemm kernel). */
static int gemm_blocks(const nn_backend *b, const gemm_args *g)
{
    double macs = (double)g->m * g->n * g->k;
    int t = nn_cpu_threads_for(b, macs, PAR_MIN_MACS);
    if (t == 1)
        return 1;
    int blocks = 2 * t;
    if (macs / blocks < PAR_MIN_MACS)
        blocks = (int)(macs / PAR_MIN_MACS);
    int side = (g->n >= g->m ? g->n : g->m) / 16;
    if (blocks > side)
        blocks = side;
    return blocks < 1 ? 1 : blocks;
}

/* One block of C: rows [0, m) and columns [n0, n0 + n) of op(B), or the
 * other way round, as one product of the chosen library. */
static void gemm_run(const gemm_args *g, int m, int n, const float *a, const float *b,
                     float *c)
{
    const nn_blas_shape s = { .m = m, .n = n, .k = g->k, .ta = g->ta == CblasTrans,
                              .tb = g->tb == CblasTrans };
    nn_blas_sgemm(g->lib, &s, 1.0f, a, g->lda, b, g->ldb, g->beta, c, g->ldc);
}

static void gemm_block(const gemm_args *g, int block)
{
    size_t lo, hi;
    if (g->blocks == 1) {
        gemm_run(g, g->m, g->n, g->a, g->b, g->c);
    } else if (g->n >= g->m) {
        /* columns of C: columns of op(B) */
        nn_cpu_split_range((size_t)g->n, block, g->blocks, 16, &lo, &hi);
        if (hi <= lo)
            return;
        const float *b = g->tb == CblasNoTrans ? g->b + lo : g->b + lo * (size_t)g->ldb;
        gemm_run(g, g->m, (int)(hi - lo), g->a, b, g->c + lo);
    } else {
        /* rows of C: rows of op(A) */
        nn_cpu_split_range((size_t)g->m, block, g->blocks, 16, &lo, &hi);
        if (hi <= lo)
            return;
        const float *a = g->ta == CblasNoTrans ? g->a + lo * (size_t)g->lda : g->a + lo;
        gemm_run(g, (int)(hi - lo), g->n, a, g->b, g->c + lo * (size_t)g->ldc);
    }
}

/* Items: the blocks of up to two gemms, then `dx_blocks` blocks of columns
 * of a small batch's input gradient and `dw_blocks` blocks of rows of its
 * weight gradient (cpu_linear_small.c), then `sum_blocks` blocks of the
 * column sums dbias[o] = sum over rows of dy[:, o]. */
typedef struct linear_task {
    gemm_args g[2];
    int ngemm;
    const float *dy;
    size_t rows, cols;
    float *dbias;
    int sum_blocks;
    const float *x;              /* the small weight gradient's input (rows, in) */
    float *dw;                   /*   and its output (cols, in) */
    int in, dw_blocks;
    const float *w;              /* the small input gradient's weights (cols, in) */
    float *dx;                   /*   and its output (rows, in) */
    int dx_blocks;
} linear_task;

/* dbias[o] = sum over the rows of dy[:, o], for o in [lo, hi) */
static void column_sums(const float *restrict dy, size_t rows, size_t cols, size_t lo,
                        size_t hi, float *restrict dbias)
{
    memset(dbias + lo, 0, (hi - lo) * sizeof *dbias);
    for (size_t i = 0; i < rows; i++) {
        const float *restrict r = dy + i * cols;
        FOR_EACH_8(o, lo, hi, dbias[o] += r[o]);
    }
}

static void linear_item(void *ctx, int item, int part)
{
    linear_task *t = ctx;
    (void)part;
    for (int i = 0; i < t->ngemm; i++) {
        if (item < t->g[i].blocks) {
            gemm_block(&t->g[i], item);
            return;
        }
        item -= t->g[i].blocks;
    }
    size_t lo, hi;
    if (item < t->dx_blocks) {
        nn_cpu_split_range((size_t)t->in, item, t->dx_blocks, SMALL_DX_COLS, &lo, &hi);
        if (hi > lo)
            nn_cpu_small_dx_cols((int)t->rows, t->in, (int)t->cols, t->dy, t->w, t->dx, (int)lo,
                                 (int)hi);
        return;
    }
    item -= t->dx_blocks;
    if (item < t->dw_blocks) {
        nn_cpu_split_range(t->cols, item, t->dw_blocks, 1, &lo, &hi);
        nn_cpu_small_dw_rows((int)t->rows, t->in, (int)t->cols, t->dy, t->x, t->dw, (int)lo,
                             (int)hi);
        return;
    }
    item -= t->dw_blocks;
    nn_cpu_split_range(t->cols, item, t->sum_blocks, 16, &lo, &hi);
    if (hi > lo)
        column_sums(t->dy, t->rows, t->cols, lo, hi, t->dbias);
}

/* Blocks for a small-batch product of `macs` multiply-adds: about two for
 * each thread it is worth, at most `widest` (its rows or column tiles). */
static int small_blocks(const nn_backend *b, double macs, size_t widest)
{
    int threads = nn_cpu_threads_for(b, macs, PAR_MIN_MACS);
    size_t blocks = threads == 1 ? 1 : 2 * (size_t)threads;
    return (int)(blocks < widest ? blocks : widest);
}

static void linear_run(nn_backend *b, linear_task *t)
{
    int count = t->sum_blocks;
    double macs = 0.0;
    for (int i = 0; i < t->ngemm; i++) {
        const gemm_args *g = &t->g[i];
        const nn_blas_shape whole = { .m = g->m, .n = g->n, .k = g->k,
                                      .ta = g->ta == CblasTrans, .tb = g->tb == CblasTrans };
        t->g[i].lib = nn_blas_pick(&whole, b->threads_now);
        t->g[i].blocks = gemm_blocks(b, &t->g[i]);
        count += t->g[i].blocks;
        macs += (double)t->g[i].m * t->g[i].n * t->g[i].k;
    }
    /* the small products: rows x cols x in multiply-adds each */
    double small_macs = (double)t->rows * t->cols * t->in;
    if (t->dx_blocks) {
        t->dx_blocks = small_blocks(b, small_macs, (t->in + SMALL_DX_COLS - 1) / SMALL_DX_COLS);
        count += t->dx_blocks;
        macs += small_macs;
    }
    if (t->dw_blocks) {
        t->dw_blocks = small_blocks(b, small_macs, t->cols);
        count += t->dw_blocks;
        macs += small_macs;
    }
    if (t->sum_blocks)
        macs += (double)t->rows * t->cols;
    nn_cpu_par_for(b, nn_cpu_threads_for(b, macs, PAR_MIN_MACS), count, linear_item, t);
}

/* The forward at a small batch (cpu_linear_small.c), in blocks of columns. */
typedef struct small_fwd_task {
    int n, in, out, blocks;
    const float *x, *w, *bias;
    float *y;
} small_fwd_task;

static void small_fwd_item(void *ctx, int item, int part)
{
    const small_fwd_task *t = ctx;
    size_t lo, hi;
    (void)part;
    nn_cpu_split_range((size_t)t->out, item, t->blocks, 1, &lo, &hi);
    nn_cpu_small_fwd_rows(t->n, t->in, t->out, t->x, t->w, t->bias, t->y, (int)lo, (int)hi);
}

static void small_forward(nn_backend *b, small_fwd_task *t)
{
    int threads = nn_cpu_threads_for(b, (double)t->n * t->in * t->out, PAR_MIN_MACS);
    t->blocks = threads == 1 ? 1 : 2 * threads;
    if (t->blocks > t->out)
        t->blocks = t->out;
    nn_cpu_par_for(b, threads, t->blocks, small_fwd_item, t);
}

int nn_cpu_linear_forward(nn_backend *b, int n, int in, int out,
                          const float *x,     /* (n, in) */
                          const float *w,     /* (out, in) */
                          const float *bias,  /* (out) or NULL */
                          float *y)           /* (n, out) */
{
    if (n <= 0 || in <= 0 || out <= 0)
        return nn_backend_fail(b, "linear_forward: bad shape n=%d in=%d out=%d", n, in, out);
    if (nn_cpu_small_dw_usable(n)) {     /* cpu_linear_small.c says why */
        small_fwd_task t = { .n = n, .in = in, .out = out, .x = x, .w = w, .bias = bias, .y = y };
        small_forward(b, &t);
        return 0;
    }
    /* the bias preloaded into every row of y, then y += x . w^T */
    if (bias)
        for (size_t i = 0; i < (size_t)n; i++)
            memcpy(y + i * (size_t)out, bias, (size_t)out * sizeof *y);
    linear_task t = {
        .g[0] = { CblasNoTrans, CblasTrans, n, out, in, x, in, w, in, bias ? 1.0f : 0.0f,
                  y, out, 1, NN_BLAS_OPENBLAS },
        .ngemm = 1,
    };
    linear_run(b, &t);
    return 0;
}

int nn_cpu_linear_backward(nn_backend *b, int n, int in, int out,
                           const float *x,    /* (n, in) */
                           const float *w,    /* (out, in) */
                           const float *dy,   /* (n, out) */
                           float *dx,         /* (n, in) or NULL */
                           float *dw,         /* (out, in) or NULL */
                           float *dbias)      /* (out) or NULL */
{
    if (n <= 0 || in <= 0 || out <= 0)
        return nn_backend_fail(b, "linear_backward: bad shape n=%d in=%d out=%d", n, in, out);
    linear_task t = { .dy = dy, .rows = (size_t)n, .cols = (size_t)out, .dbias = dbias,
                      .in = in };
    if (dx && nn_cpu_narrow_dx_usable(in)) {     /* cpu_linear_narrow.c says why */
        if (nn_cpu_narrow_dx(b, n, in, out, dy, w, dx) != 0)
            return -1;
        dx = NULL;
    }
    if (dx && nn_cpu_small_dw_usable(n)) {       /* cpu_linear_small.c says why */
        t.w = w;
        t.dx = dx;
        t.dx_blocks = 1;         /* linear_run sizes it */
        dx = NULL;
    }
    if (dx)     /* dx (n, in) = dy (n, out) . w (out, in) */
        t.g[t.ngemm++] = (gemm_args){ CblasNoTrans, CblasNoTrans, n, in, out, dy, out, w, in,
                                      0.0f, dx, in, 1, NN_BLAS_OPENBLAS };
    if (dw && nn_cpu_small_dw_usable(n)) {     /* cpu_linear_small.c says why */
        t.x = x;
        t.dw = dw;
        t.dw_blocks = 1;         /* linear_run sizes it */
    } else if (dw)     /* dw (out, in) = dy^T (out, n) . x (n, in) */
        t.g[t.ngemm++] = (gemm_args){ CblasTrans, CblasNoTrans, out, in, n, dy, out, x, in,
                                      0.0f, dw, in, 1, NN_BLAS_OPENBLAS };
    if (dbias)
        t.sum_blocks = nn_cpu_threads_for(b, (double)n * out, PAR_MIN_ELEMS);
    linear_run(b, &t);
    return 0;
}
