/* backends/cpu_blas.c - the fast CPU backend ("cpu"): OpenBLAS sgemm for every
 * matrix product, im2col convolution, and a small thread pool of our own that
 * runs every parallel loop.
 *
 * Why our own threads rather than OpenBLAS's: the gemms of a training step are
 * mostly small (LeNet's first convolution is 6 x 784 x 75 per sample), and
 * OpenBLAS either keeps them on one thread or splits them badly (a
 * 4 x 1000 x 784 product runs slower on two threads than on one). Splitting
 * the *batch* between threads, each running im2col and a one-thread sgemm on
 * data that stays in its own L2 cache, scales; and the same pool runs the
 * pooling, activation, dropout and optimiser loops. So OpenBLAS is set to one
 * thread and every parallel region is ours.
 *
 * Every parallel operation is a list of items (chunks of samples, blocks of a
 * gemm's output, ranges of elements) that the threads claim one at a time, the
 * caller included: a worker that wakes late, or shares its core with another
 * program, just does fewer. What an item computes never depends on the thread
 * that runs it, and partial sums are added up in a fixed order, so results are
 * the same from run to run.
 *
 * Every buffer passed to one call must be distinct, as for cpu-ref.
 */
#include "geom_check.h"
#include "cpu_ref.h"

#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_conv_direct.h"
#include "dropout_hash.h"
#include "util.h"

/* ------------------------------------------------------------------------ */
/* Tuning, measured on a 2-core Zen 3. These only move work between threads  */
/* and gemm calls; the parity test checks every path they choose.            */

#define MAX_THREADS 64
/* A waiting thread spins this long before it sleeps on a condition variable:
 * longer than the gap between two operations of a step, short enough not to
 * hold a core for long once the trainer stops. After SPIN_PAUSE_NS it yields
 * the core on every round, so a UI thread is not kept waiting. */
#define SPIN_NS 200000
#define SPIN_PAUSE_NS 20000
/* Work below which a parallel item is not worth a thread: a wake-up and a
 * claim cost about a microsecond, i.e. ~50k multiply-adds. */
#define PAR_MIN_MACS 150000.0
#define PAR_MIN_ELEMS 16384
/* Elements per item of an elementwise loop. */
#define EW_BLOCK 16384
/* Target size of one im2col chunk in floats (256 KiB, half a core's L2), so
 * that the gemm reads the columns im2col has just written from cache.
 * (Overridable at build time only so that the tests can force every path.) */
#ifndef COL_TARGET_FLOATS
#define COL_TARGET_FLOATS 65536
#endif
/* Partial weight gradients of a convolution: the batch's chunks are grouped
 * into this many slots, each with its own partial sum, added in slot order,
 * so that the sum does not depend on which thread ran which slot. */
#define CONV_SLOTS 8

/* for (i = lo; i < hi; i++) body, the bulk in blocks of a fixed 8. GCC's -O2
 * vectorises only loops whose trip count it knows, so this is how our loops
 * (on restrict pointers) get SIMD without -O3 or intrinsics. */
#define FOR_EACH_8(i, lo, hi, body)                                  \
    do {                                                             \
        size_t i##_blk = (lo);                                       \
        for (; i##_blk + 8 <= (hi); i##_blk += 8)                    \
            for (size_t i##_j = 0; i##_j < 8; i##_j++) {             \
                const size_t i = i##_blk + i##_j;                    \
                body;                                                \
            }                                                        \
        for (size_t i = i##_blk; i < (hi); i++) {                    \
            body;                                                    \
        }                                                            \
    } while (0)

/* ------------------------------------------------------------------------ */
/* The thread pool.                                                          */

/* A task runs as fn(ctx, part, parts) on every thread, part 0 on the caller. */
typedef void (*task_fn)(void *ctx, int part, int parts);

typedef struct pool {
    int n;                        /* threads, the caller included */
    int started;                  /* workers actually created */
    pthread_t workers[MAX_THREADS];
    pthread_mutex_t mu;
    pthread_cond_t wake;          /* a new task (epoch moved) or quit */
    pthread_cond_t done;          /* busy reached 0 */
    atomic_uint epoch;            /* bumped once per task */
    atomic_int busy;              /* workers still running the current task */
    atomic_int quit;
    task_fn fn;                   /* written by the caller before the epoch moves */
    void *ctx;
} pool;

typedef struct worker_arg {
    pool *p;
    int part;
} worker_arg;

typedef struct cpu_state {
    int threads;
    pool pool;
    worker_arg args[MAX_THREADS];
} cpu_state;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static double now_ns(void)
{
    return nn_now() * 1e9;
}

/* The spin phase of a wait: pause for SPIN_PAUSE_NS, then yield the core to
 * anything else runnable (the UI thread) until SPIN_NS; returns 1 when the
 * waiter should block instead. */
typedef struct spinner {
    double start;
    unsigned rounds;
} spinner;

static int spin_then_block(spinner *sp)
{
    cpu_relax();
    if ((++sp->rounds & 63) != 0)
        return 0;
    double elapsed = now_ns() - sp->start;
    if (elapsed > SPIN_NS)
        return 1;
    if (elapsed > SPIN_PAUSE_NS)
        sched_yield();
    return 0;
}

static void *worker_main(void *arg)
{
    worker_arg *wa = arg;
    pool *p = wa->p;
    unsigned seen = 0;      /* the epoch pool_start began with, before any task */
    for (;;) {
        spinner sp = { now_ns(), 0 };
        unsigned e;
        while ((e = atomic_load_explicit(&p->epoch, memory_order_acquire)) == seen &&
               !atomic_load_explicit(&p->quit, memory_order_relaxed)) {
            if (spin_then_block(&sp)) {
                /* The caller moves the epoch under the mutex, so checking it
                 * again under the mutex cannot miss a wake-up. */
                pthread_mutex_lock(&p->mu);
                while (atomic_load(&p->epoch) == seen && !atomic_load(&p->quit))
                    pthread_cond_wait(&p->wake, &p->mu);
                pthread_mutex_unlock(&p->mu);
            }
        }
        if (atomic_load(&p->quit))
            return NULL;
        seen = e;
        p->fn(p->ctx, wa->part, p->n);
        if (atomic_fetch_sub_explicit(&p->busy, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

/* Runs fn on every thread of the pool and returns when all are done. */
static void pool_run(pool *p, task_fn fn, void *ctx)
{
    if (p->n <= 1) {
        fn(ctx, 0, 1);
        return;
    }
    p->fn = fn;
    p->ctx = ctx;
    atomic_store_explicit(&p->busy, p->n - 1, memory_order_relaxed);
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add_explicit(&p->epoch, 1, memory_order_release);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);

    fn(ctx, 0, p->n);

    spinner sp = { now_ns(), 0 };
    while (atomic_load_explicit(&p->busy, memory_order_acquire) != 0) {
        if (spin_then_block(&sp)) {
            pthread_mutex_lock(&p->mu);
            while (atomic_load(&p->busy) != 0)
                pthread_cond_wait(&p->done, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

static void pool_stop(pool *p)
{
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->quit, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->started; i++)
        pthread_join(p->workers[i], NULL);
    p->started = 0;
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
}

/* n threads in all: n - 1 workers. Returns 0, or an errno value. */
static int pool_start(cpu_state *s, int n)
{
    pool *p = &s->pool;
    p->n = n;
    p->started = 0;
    atomic_init(&p->epoch, 0);
    atomic_init(&p->busy, 0);
    atomic_init(&p->quit, 0);
    p->fn = NULL;
    p->ctx = NULL;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);

    /* Workers never take signals: those belong to the UI thread. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int err = 0;
    for (int i = 1; i < n; i++) {
        s->args[i].p = p;
        s->args[i].part = i;
        err = pthread_create(&p->workers[i - 1], NULL, worker_main, &s->args[i]);
        if (err)
            break;
        p->started++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err)
        pool_stop(p);
    return err;
}

static cpu_state *state(nn_backend *b)
{
    return b->impl;
}

/* Threads worth using for `work` units when each should get at least
 * `min_per_thread` of them. */
static int threads_for(const nn_backend *b, double work, double min_per_thread)
{
    const cpu_state *s = b->impl;
    int t = s->threads;
    if (t > 1 && work < min_per_thread * t)
        t = (int)(work / min_per_thread);
    return t < 1 ? 1 : t;
}

/* A parallel loop: fn(ctx, item, part) for every item in [0, count), the items
 * claimed one at a time by at most `parts` threads; part (< parts) indexes the
 * running thread's scratch. */
typedef void (*item_fn)(void *ctx, int item, int part);

typedef struct par_loop {
    item_fn fn;
    void *ctx;
    int count, parts;
    atomic_int next;
} par_loop;

static void par_loop_part(void *arg, int part, int parts)
{
    par_loop *l = arg;
    (void)parts;
    if (part >= l->parts)
        return;
    int i;
    while ((i = atomic_fetch_add_explicit(&l->next, 1, memory_order_relaxed)) < l->count)
        l->fn(l->ctx, i, part);
}

static void par_for(nn_backend *b, int parts, int count, item_fn fn, void *ctx)
{
    if (parts > count)
        parts = count;
    if (parts <= 1) {
        for (int i = 0; i < count; i++)
            fn(ctx, i, 0);
        return;
    }
    par_loop l = { .fn = fn, .ctx = ctx, .count = count, .parts = parts };
    atomic_init(&l.next, 0);
    pool_run(&state(b)->pool, par_loop_part, &l);
}

/* Splits [0, len) into `parts` pieces whose boundaries are multiples of
 * `align` (except the end); piece `part` is [*lo, *hi), possibly empty. */
static void split_range(size_t len, int part, int parts, size_t align, size_t *lo, size_t *hi)
{
    size_t units = (len + align - 1) / align;
    size_t u0 = units * (size_t)part / (size_t)parts;
    size_t u1 = units * (size_t)(part + 1) / (size_t)parts;
    *lo = u0 * align < len ? u0 * align : len;
    *hi = u1 * align < len ? u1 * align : len;
}

/* ------------------------------------------------------------------------ */
/* Lifetime.                                                                 */

static int blas_probe(char *why, size_t why_len)
{
    /* linked at build time: if we are running, OpenBLAS is here */
    if (why && why_len)
        why[0] = '\0';
    return 0;
}

static int blas_open(nn_backend *b, const nn_backend_config *cfg)
{
    int threads = cfg ? cfg->threads : 0;
    if (threads < 0)
        return nn_backend_fail(b, "cpu: %d threads asked for", threads);
    if (threads == 0) {
        long procs = sysconf(_SC_NPROCESSORS_ONLN);
        threads = procs > 0 ? (int)procs : 1;
    }
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;

    cpu_state *s = calloc(1, sizeof *s);
    if (!s)
        return nn_backend_fail(b, "cpu: out of memory");
    s->threads = threads;
    /* OpenBLAS runs inside our threads, one thread each (see the top). */
    openblas_set_num_threads(1);
    int err = pool_start(s, threads);
    if (err) {
        free(s);
        return nn_backend_fail(b, "cpu: cannot start %d threads: %s", threads, strerror(err));
    }
    b->impl = s;
    return 0;
}

static void blas_close(nn_backend *b)
{
    cpu_state *s = b->impl;
    if (s) {
        pool_stop(&s->pool);
        free(s);
    }
    b->impl = NULL;
}

/* ------------------------------------------------------------------------ */
/* Linear: y = x . w^T + bias and its backward, as sgemms whose outputs are  */
/* cut into blocks along their longer side.                                  */

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
} gemm_args;

/* Blocks worth cutting C into: enough for every thread to claim about two,
 * none smaller than PAR_MIN_MACS, none narrower than 16 (the sgemm kernel). */
static int gemm_blocks(const nn_backend *b, const gemm_args *g)
{
    double macs = (double)g->m * g->n * g->k;
    int t = threads_for(b, macs, PAR_MIN_MACS);
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

static void gemm_block(const gemm_args *g, int block)
{
    size_t lo, hi;
    if (g->blocks == 1) {
        cblas_sgemm(CblasRowMajor, g->ta, g->tb, g->m, g->n, g->k, 1.0f, g->a, g->lda,
                    g->b, g->ldb, g->beta, g->c, g->ldc);
    } else if (g->n >= g->m) {
        /* columns of C: columns of op(B) */
        split_range((size_t)g->n, block, g->blocks, 16, &lo, &hi);
        if (hi <= lo)
            return;
        const float *b = g->tb == CblasNoTrans ? g->b + lo : g->b + lo * (size_t)g->ldb;
        cblas_sgemm(CblasRowMajor, g->ta, g->tb, g->m, (int)(hi - lo), g->k, 1.0f, g->a, g->lda,
                    b, g->ldb, g->beta, g->c + lo, g->ldc);
    } else {
        /* rows of C: rows of op(A) */
        split_range((size_t)g->m, block, g->blocks, 16, &lo, &hi);
        if (hi <= lo)
            return;
        const float *a = g->ta == CblasNoTrans ? g->a + lo * (size_t)g->lda : g->a + lo;
        cblas_sgemm(CblasRowMajor, g->ta, g->tb, (int)(hi - lo), g->n, g->k, 1.0f, a, g->lda,
                    g->b, g->ldb, g->beta, g->c + lo * (size_t)g->ldc, g->ldc);
    }
}

/* Items: the blocks of up to two gemms, then `sum_blocks` blocks of the
 * column sums dbias[o] = sum over rows of dy[:, o]. */
typedef struct linear_task {
    gemm_args g[2];
    int ngemm;
    const float *dy;
    size_t rows, cols;
    float *dbias;
    int sum_blocks;
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
    split_range(t->cols, item, t->sum_blocks, 16, &lo, &hi);
    if (hi > lo)
        column_sums(t->dy, t->rows, t->cols, lo, hi, t->dbias);
}

static void linear_run(nn_backend *b, linear_task *t)
{
    int count = t->sum_blocks;
    double macs = 0.0;
    for (int i = 0; i < t->ngemm; i++) {
        t->g[i].blocks = gemm_blocks(b, &t->g[i]);
        count += t->g[i].blocks;
        macs += (double)t->g[i].m * t->g[i].n * t->g[i].k;
    }
    if (t->sum_blocks)
        macs += (double)t->rows * t->cols;
    par_for(b, threads_for(b, macs, PAR_MIN_MACS), count, linear_item, t);
}

static int blas_linear_forward(nn_backend *b, int n, int in, int out,
                               const float *x,     /* (n, in) */
                               const float *w,     /* (out, in) */
                               const float *bias,  /* (out) or NULL */
                               float *y)           /* (n, out) */
{
    if (n <= 0 || in <= 0 || out <= 0)
        return nn_backend_fail(b, "linear_forward: bad shape n=%d in=%d out=%d", n, in, out);
    /* the bias preloaded into every row of y, then y += x . w^T */
    if (bias)
        for (size_t i = 0; i < (size_t)n; i++)
            memcpy(y + i * (size_t)out, bias, (size_t)out * sizeof *y);
    linear_task t = {
        .g[0] = { CblasNoTrans, CblasTrans, n, out, in, x, in, w, in, bias ? 1.0f : 0.0f,
                  y, out, 1 },
        .ngemm = 1,
    };
    linear_run(b, &t);
    return 0;
}

static int blas_linear_backward(nn_backend *b, int n, int in, int out,
                                const float *x,    /* (n, in) */
                                const float *w,    /* (out, in) */
                                const float *dy,   /* (n, out) */
                                float *dx,         /* (n, in) or NULL */
                                float *dw,         /* (out, in) or NULL */
                                float *dbias)      /* (out) or NULL */
{
    if (n <= 0 || in <= 0 || out <= 0)
        return nn_backend_fail(b, "linear_backward: bad shape n=%d in=%d out=%d", n, in, out);
    linear_task t = { .dy = dy, .rows = (size_t)n, .cols = (size_t)out, .dbias = dbias };
    if (dx)     /* dx (n, in) = dy (n, out) . w (out, in) */
        t.g[t.ngemm++] = (gemm_args){ CblasNoTrans, CblasNoTrans, n, in, out, dy, out, w, in,
                                      0.0f, dx, in, 1 };
    if (dw)     /* dw (out, in) = dy^T (out, n) . x (n, in) */
        t.g[t.ngemm++] = (gemm_args){ CblasTrans, CblasNoTrans, out, in, n, dy, out, x, in,
                                      0.0f, dw, in, 1 };
    if (dbias)
        t.sum_blocks = threads_for(b, (double)n * out, PAR_MIN_ELEMS);
    linear_run(b, &t);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Convolution: im2col + sgemm, over chunks of samples or tiles of rows.     */
/*                                                                           */
/* Per chunk, an im2col matrix                                                */
/*   col (K, L),  K = c_in k_h k_w,  L = its output positions                 */
/* and one sgemm per product:                                                 */
/*   forward   y   (c_out, L)  = w (c_out, K) . col                           */
/*   filter    dw (c_out, K)  += dy (c_out, L) . col^T                        */
/*   data      col (K, L)      = w^T . dy, then col2im into dx                */
/* The chunk is sized for the cache (COL_TARGET_FLOATS of col):              */
/*  - small images (LeNet's second convolution, the conv1d presets) batch    */
/*    nb samples into one gemm, so 16 x 100 x 150 per sample becomes          */
/*    16 x 400 x 150 and the conv1d's 8 x 16 x 3 becomes 8 x 21840 x 3. y and */
/*    dy are then staged through buf, in (c_out, sample, HW) order;           */
/*  - a sample whose col alone is over the target (16 channels, 5x5 kernel,  */
/*    20x20 output) is cut into tiles of output rows, each a gemm writing     */
/*    straight into y's rows; this bounds the workspace for large images.     */
/*    (LeNet's first convolution, 75 x 784 = 230 KiB per sample, stays whole: */
/*    cutting it in two measured no faster.)                                  */
/* Forward items are chunks (or tiles); backward items are CONV_SLOTS runs of */
/* consecutive chunks, each summing its own partial dw and dbias, added up in */
/* slot order at the end. A 1x1 / stride 1 / unpadded convolution of one     */
/* sample per chunk skips im2col: x itself is the column matrix.              */
/*                                                                           */
/* Workspace: per thread col (+ buf), then per slot dw + dbias.               */

typedef struct conv_plan {
    size_t K, HW;
    int threads;        /* threads taking part */
    int nb;             /* samples per chunk */
    int chunks;         /* ceil(n / nb) */
    int rows;           /* output rows per tile (h_out: no tiling) */
    int tiles;          /* ceil(h_out / rows); > 1 only when nb = 1 */
    int slots;          /* backward items: min(chunks, CONV_SLOTS) */
    int direct;         /* 1x1 / stride 1 / no pad, one sample: no im2col */
    size_t col_floats;  /* per thread: K nb rows w_out, or 0 */
    size_t buf_floats;  /* per thread: c_out nb HW when nb > 1, else 0 */
    size_t thread_stride;
    size_t slot_floats; /* per slot: dw (c_out K) + dbias (c_out) */
    size_t slot_stride;
} conv_plan;

static size_t round16(size_t floats)    /* keeps every area 64-byte aligned */
{
    return (floats + 15) & ~(size_t)15;
}

static int conv_check(nn_backend *b, const char *op, const nn_conv_geom *g)
{
    char why[192];
    return nn_conv_geom_problem(op, g, why, sizeof why) ? nn_backend_fail(b, "%s", why) : 0;
}

/* A pure function of the geometry and the thread count, so that the
 * workspace size and the operations agree. */
static conv_plan conv_plan_for(const nn_backend *b, const nn_conv_geom *g)
{
    conv_plan p;
    const size_t WO = (size_t)g->w_out, HO = (size_t)g->h_out;
    p.K = (size_t)g->c_in * (size_t)g->k_h * (size_t)g->k_w;
    p.HW = HO * WO;
    double macs = (double)g->n * (double)g->c_out * (double)p.K * (double)p.HW;
    p.threads = threads_for(b, macs, PAR_MIN_MACS);
    p.direct = g->k_h == 1 && g->k_w == 1 && g->stride_h == 1 && g->stride_w == 1 &&
               g->pad_h == 0 && g->pad_w == 0;
    size_t fit = COL_TARGET_FLOATS / (p.K * p.HW);
    if (fit >= 2 && g->n >= 2) {
        /* batch samples, but leave every thread a chunk */
        if (p.threads > g->n)
            p.threads = g->n;
        size_t per_thread = ((size_t)g->n + (size_t)p.threads - 1) / (size_t)p.threads;
        p.nb = (int)(fit < per_thread ? fit : per_thread);
        if (p.nb > 1)
            p.direct = 0;   /* batched: im2col is the transposing copy */
    } else {
        p.nb = 1;
    }
    p.chunks = (g->n + p.nb - 1) / p.nb;
    p.rows = (int)HO;
    if (p.nb == 1 && !p.direct && p.K * p.HW > COL_TARGET_FLOATS) {
        size_t rows = COL_TARGET_FLOATS / (p.K * WO);
        p.rows = rows < 1 ? 1 : (int)rows;
    }
    p.tiles = (g->h_out + p.rows - 1) / p.rows;
    if (p.threads > p.chunks * p.tiles)
        p.threads = p.chunks * p.tiles;
    p.slots = p.chunks < CONV_SLOTS ? p.chunks : CONV_SLOTS;
    p.col_floats = p.direct ? 0 : round16(p.K * (size_t)p.nb * (size_t)p.rows * WO);
    p.buf_floats = p.nb > 1 ? round16((size_t)g->c_out * (size_t)p.nb * p.HW) : 0;
    p.thread_stride = p.col_floats + p.buf_floats;
    p.slot_floats = (size_t)g->c_out * p.K + (size_t)g->c_out;
    p.slot_stride = round16(p.slot_floats);
    return p;
}

static size_t conv_ws_floats(const conv_plan *p)
{
    return (size_t)p->threads * p->thread_stride + (size_t)p->slots * p->slot_stride;
}


/* Copies and zero-fills of short runs (one output row: 28 floats in LeNet).
 * A memcpy call per row costs more than the copy, so whole 8- and 4-float
 * blocks go through fixed-size memcpy, which the compiler inlines as moves. */
static inline void copy_run(float *restrict d, const float *restrict s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        memcpy(d + i, s + i, 8 * sizeof *d);
    if (n & 4) {
        memcpy(d + i, s + i, 4 * sizeof *d);
        i += 4;
    }
    if (n & 2) {
        memcpy(d + i, s + i, 2 * sizeof *d);
        i += 2;
    }
    if (n & 1)
        d[i] = s[i];
}

static inline void zero_run(float *d, size_t n)
{
    static const float zeros[8];
    copy_run(d, zeros, n < 8 ? n : 0);
    if (n >= 8)
        memset(d, 0, n * sizeof *d);
}

/* d[i] += s[i] */
static inline void add_run(float *restrict d, const float *restrict s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (size_t j = 0; j < 8; j++)   /* a fixed 8: vectorised at -O2 */
            d[i + j] += s[i + j];
    for (; i < n; i++)
        d[i] += s[i];
}

/* sum of n floats, in 8 interleaved partial sums (vectorised at -O2) */
static inline float sum_run(const float *s, size_t n)
{
    float acc[8] = { 0 };
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (size_t j = 0; j < 8; j++)
            acc[j] += s[i + j];
    float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < n; i++)
        sum += s[i];
    return sum;
}

/* The output columns [ow0, ow1) whose input column ow*sw + off lies inside
 * [0, w_in), off = kw - pad_w. */
static inline void valid_cols(int w_in, int w_out, int sw, int off, int *ow0, int *ow1)
{
    int lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
    int hi = w_in - 1 - off < 0 ? 0 : (w_in - 1 - off) / sw + 1;
    if (hi > w_out)
        hi = w_out;
    if (lo > hi)
        lo = hi;
    *ow0 = lo;
    *ow1 = hi;
}

/* The im2col of output rows [r0, r1) of samples x[0 .. nb) (each
 * (c_in, h_in, w_in)) into col (K, nb*R*w_out), R = r1 - r0: row (ci, kh, kw),
 * column s*R*w_out + (oh - r0)*w_out + ow. */
static void im2col(const nn_conv_geom *g, const float *x, int nb, int r0, int r1, float *col)
{
    const int WO = g->w_out, HI = g->h_in, WI = g->w_in;
    const int sh = g->stride_h, sw = g->stride_w;
    const size_t RW = (size_t)(r1 - r0) * (size_t)WO, ld = (size_t)nb * RW;
    const size_t plane = (size_t)HI * (size_t)WI, sample = (size_t)g->c_in * plane;
    const size_t step = (size_t)sh * (size_t)WI;
    size_t row = 0;
    for (int ci = 0; ci < g->c_in; ci++)
        for (int kh = 0; kh < g->k_h; kh++)
            for (int kw = 0; kw < g->k_w; kw++, row++) {
                /* output rows [oh0, oh1) and columns [ow0, ow1) read inside the
                 * image; the rest of the row is the zero padding */
                const int offh = kh - g->pad_h, off = kw - g->pad_w;
                int oh0, oh1, ow0, ow1;
                valid_cols(HI, g->h_out, sh, offh, &oh0, &oh1);
                valid_cols(WI, WO, sw, off, &ow0, &ow1);
                oh0 = oh0 < r0 ? r0 : oh0 > r1 ? r1 : oh0;
                oh1 = oh1 > r1 ? r1 : oh1 < oh0 ? oh0 : oh1;
                const int full = sw == 1 && ow0 == 0 && ow1 == WO;
                for (int s = 0; s < nb; s++) {
                    float *dst = col + row * ld + (size_t)s * RW;
                    if (oh0 > r0)
                        zero_run(dst, (size_t)(oh0 - r0) * (size_t)WO);
                    if (oh1 < r1)
                        zero_run(dst + (size_t)(oh1 - r0) * (size_t)WO,
                                 (size_t)(r1 - oh1) * (size_t)WO);
                    if (oh1 <= oh0)
                        continue;
                    dst += (size_t)(oh0 - r0) * (size_t)WO;
                    /* input row oh*sh + offh, column ow*sw + off */
                    const float *src = x + (size_t)s * sample + (size_t)ci * plane +
                                       (size_t)(oh0 * sh + offh) * (size_t)WI;
                    if (full) {
                        for (int oh = oh0; oh < oh1; oh++, dst += WO, src += step)
                            copy_run(dst, src + off, (size_t)WO);
                        continue;
                    }
                    for (int oh = oh0; oh < oh1; oh++, dst += WO, src += step) {
                        if (ow0 > 0)
                            zero_run(dst, (size_t)ow0);
                        if (sw == 1)
                            copy_run(dst + ow0, src + ow0 + off, (size_t)(ow1 - ow0));
                        else
                            for (int ow = ow0; ow < ow1; ow++)
                                dst[ow] = src[ow * sw + off];
                        if (ow1 < WO)
                            zero_run(dst + ow1, (size_t)(WO - ow1));
                    }
                }
            }
}

/* The adjoint of im2col: adds col's entries (laid out as above) into dx at
 * their input positions. dx is not cleared here. */
static void col2im(const nn_conv_geom *g, const float *col, int nb, int r0, int r1, float *dx)
{
    const int WO = g->w_out, HI = g->h_in, WI = g->w_in;
    const int sh = g->stride_h, sw = g->stride_w;
    const size_t RW = (size_t)(r1 - r0) * (size_t)WO, ld = (size_t)nb * RW;
    const size_t plane = (size_t)HI * (size_t)WI, sample = (size_t)g->c_in * plane;
    const size_t step = (size_t)sh * (size_t)WI;
    size_t row = 0;
    for (int ci = 0; ci < g->c_in; ci++)
        for (int kh = 0; kh < g->k_h; kh++)
            for (int kw = 0; kw < g->k_w; kw++, row++) {
                const int offh = kh - g->pad_h, off = kw - g->pad_w;
                int oh0, oh1, ow0, ow1;
                valid_cols(HI, g->h_out, sh, offh, &oh0, &oh1);
                valid_cols(WI, WO, sw, off, &ow0, &ow1);
                if (oh0 < r0)
                    oh0 = r0;
                if (oh1 > r1)
                    oh1 = r1;
                if (oh1 <= oh0 || ow1 <= ow0)
                    continue;
                for (int s = 0; s < nb; s++) {
                    const float *src = col + row * ld + (size_t)s * RW +
                                       (size_t)(oh0 - r0) * (size_t)WO;
                    float *dst = dx + (size_t)s * sample + (size_t)ci * plane +
                                 (size_t)(oh0 * sh + offh) * (size_t)WI;
                    for (int oh = oh0; oh < oh1; oh++, src += WO, dst += step) {
                        if (sw == 1)
                            add_run(dst + ow0 + off, src + ow0, (size_t)(ow1 - ow0));
                        else
                            for (int ow = ow0; ow < ow1; ow++)
                                dst[ow * sw + off] += src[ow];
                    }
                }
            }
}

/* dw and dbias = the sum of the slots' partials (slot i at slot0 + i *
 * stride: c_out x K weights, then c_out biases), added in slot order so the
 * result does not depend on which thread ran which slot. */
static void sum_conv_slots(const float *slot0, int slots, size_t stride, size_t c_out, size_t K,
                           float *dw, float *dbias)
{
    const size_t wn = c_out * K;
    if (dw) {
        memcpy(dw, slot0, wn * sizeof *dw);
        for (int i = 1; i < slots; i++)
            add_run(dw, slot0 + (size_t)i * stride, wn);
    }
    if (dbias) {
        memcpy(dbias, slot0 + wn, c_out * sizeof *dbias);
        for (int i = 1; i < slots; i++)
            add_run(dbias, slot0 + (size_t)i * stride + wn, c_out);
    }
}

/* ------------------------------------------------------------------------ */
/* Direct convolution (cpu_conv_direct.c): stride 1, few output channels.    */
/*                                                                          */
/* Workspace: the shared tables (tap offsets; the transposed weights for dx),  */
/* then one area per thread (padded inputs, wide outputs or output gradients),  */
/* then the slots of partial weight gradients, as for im2col.                 */

/* Floats of padded input and margined output gradient per backward chunk:
 * half a core's L2, so the weight-gradient sweeps read them from cache. */
#define DIRECT_CHUNK_FLOATS 32768

typedef struct dconv_plan {
    dconv_dims d;
    int threads;
    int row_parts;        /* forward items per sample (rows split when n < threads) */
    int nb;               /* backward samples per chunk */
    int chunks, slots;
    size_t table_floats;  /* offs (K ints), offs_t (Kt ints), w_t (c_in Kt) */
    size_t thread_stride; /* max(forward: xp + yw, backward: nb (xp + dyp) + dxp) */
    size_t slot_stride;   /* dw (c_out K) + dbias (c_out) */
} dconv_plan;

static dconv_plan dconv_plan_for(const nn_backend *b, const nn_conv_geom *g)
{
    dconv_plan p;
    nn_direct_conv_dims(g, &p.d);
    const dconv_dims *d = &p.d;
    double macs = (double)g->n * (double)g->c_out * (double)d->K * (double)g->h_out * g->w_out;
    p.threads = threads_for(b, macs, PAR_MIN_MACS);
    /* fewer samples than threads: split each sample's output rows too */
    p.row_parts = g->n < p.threads ? (p.threads + g->n - 1) / g->n : 1;
    if (p.row_parts > g->h_out)
        p.row_parts = g->h_out;
    size_t per_sample = d->xp_floats + d->dyp_floats;
    size_t fit = DIRECT_CHUNK_FLOATS / per_sample;
    size_t per_thread = ((size_t)g->n + (size_t)p.threads - 1) / (size_t)p.threads;
    p.nb = (int)(fit < 1 ? 1 : fit < per_thread ? fit : per_thread);
    p.chunks = (g->n + p.nb - 1) / p.nb;
    p.slots = p.chunks < CONV_SLOTS ? p.chunks : CONV_SLOTS;
    p.table_floats = round16(d->K + d->Kt + (size_t)g->c_in * d->Kt);
    size_t fwd = d->xp_floats + d->yw_floats;
    size_t bwd = (size_t)p.nb * per_sample + d->dxp_floats + nn_direct_conv_wgrad_floats(g, d);
    p.thread_stride = round16(fwd > bwd ? fwd : bwd);
    p.slot_stride = round16((size_t)g->c_out * d->K + (size_t)g->c_out);
    return p;
}

static size_t dconv_ws_floats(const dconv_plan *p)
{
    return p->table_floats + (size_t)p->threads * p->thread_stride +
           (size_t)p->slots * p->slot_stride;
}

typedef struct dconv_task {
    const nn_conv_geom *g;
    dconv_plan plan;
    const float *x, *w, *bias, *dy;
    float *y, *dx, *dw, *dbias;
    const int *offs, *offs_t;
    const float *w_t;
    float *threads_ws, *slots_ws;
} dconv_task;

static void dconv_task_layout(dconv_task *t, void *ws, int with_dx)
{
    float *f = ws;
    int *offs = ws;
    const dconv_dims *d = &t->plan.d;
    nn_direct_conv_tables(t->g, d, t->w, offs, with_dx ? offs + d->K : NULL,
                          with_dx ? f + d->K + d->Kt : NULL);
    t->offs = offs;
    t->offs_t = offs + d->K;
    t->w_t = f + d->K + d->Kt;
    t->threads_ws = f + t->plan.table_floats;
    t->slots_ws = t->threads_ws + (size_t)t->plan.threads * t->plan.thread_stride;
}

/* Forward of item = sample * row_parts + part: its output rows. */
static void dconv_forward_item(void *ctx, int item, int part)
{
    const dconv_task *t = ctx;
    const nn_conv_geom *g = t->g;
    const dconv_plan *p = &t->plan;
    const dconv_dims *d = &p->d;
    float *xp = t->threads_ws + (size_t)part * p->thread_stride;
    float *yw = xp + d->xp_floats;
    const size_t s = (size_t)(item / p->row_parts);
    const int rp = item % p->row_parts;
    const int oh0 = g->h_out * rp / p->row_parts, oh1 = g->h_out * (rp + 1) / p->row_parts;
    const size_t in_sample = (size_t)g->c_in * (size_t)g->h_in * (size_t)g->w_in;
    const size_t out_sample = (size_t)g->c_out * (size_t)g->h_out * (size_t)g->w_out;
    size_t q0, q1;
    nn_direct_conv_rows(d, oh0, oh1, &q0, &q1);
    nn_direct_conv_pad_input(g, d, t->x + s * in_sample, xp);
    nn_direct_conv_forward(g, d, t->w, t->offs, xp, yw, q0, q1);
    nn_direct_conv_store(g, d, yw, t->bias, t->y + s * out_sample, oh0, oh1);
}

static void dconv_forward(nn_backend *b, const nn_conv_geom *g, const float *x, const float *w,
                          const float *bias, float *y, void *ws)
{
    dconv_task t = { .g = g, .plan = dconv_plan_for(b, g), .x = x, .w = w, .bias = bias, .y = y };
    dconv_task_layout(&t, ws, 0);
    par_for(b, t.plan.threads, g->n * t.plan.row_parts, dconv_forward_item, &t);
}

/* Backward of slot `item`: its chunks' dx, and its partial dw and dbias. */
static void dconv_backward_item(void *ctx, int item, int part)
{
    const dconv_task *t = ctx;
    const nn_conv_geom *g = t->g;
    const dconv_plan *p = &t->plan;
    const dconv_dims *d = &p->d;
    float *xps = t->threads_ws + (size_t)part * p->thread_stride;
    float *dyps = xps + (size_t)p->nb * d->xp_floats;
    float *dxp = dyps + (size_t)p->nb * d->dyp_floats;
    float *acc = dxp + d->dxp_floats;
    float *dw_slot = t->slots_ws + (size_t)item * p->slot_stride;
    float *db_slot = dw_slot + (size_t)g->c_out * d->K;
    const size_t CO = (size_t)g->c_out, HW = (size_t)g->h_out * (size_t)g->w_out;
    const size_t in_sample = (size_t)g->c_in * (size_t)g->h_in * (size_t)g->w_in;
    const size_t out_sample = CO * HW;
    size_t c0, c1;
    split_range((size_t)p->chunks, item, p->slots, 1, &c0, &c1);
    const size_t s0 = c0 * (size_t)p->nb;
    const size_t s1 = c1 * (size_t)p->nb < (size_t)g->n ? c1 * (size_t)p->nb : (size_t)g->n;

    if (t->dbias)
        for (size_t co = 0; co < CO; co++) {
            double acc = 0.0;
            for (size_t s = s0; s < s1; s++)
                acc += sum_run(t->dy + s * out_sample + co * HW, HW);
            db_slot[co] = (float)acc;
        }
    memset(dw_slot, 0, CO * d->K * sizeof *dw_slot);
    for (size_t s = s0; s < s1; s += (size_t)p->nb) {
        const int nb = (int)(s1 - s < (size_t)p->nb ? s1 - s : (size_t)p->nb);
        for (int j = 0; j < nb; j++) {
            nn_direct_conv_pad_input(g, d, t->x + (s + (size_t)j) * in_sample,
                                     xps + (size_t)j * d->xp_floats);
            nn_direct_conv_widen(g, d, t->dy + (s + (size_t)j) * out_sample,
                                 dyps + (size_t)j * d->dyp_floats);
        }
        if (t->dw)
            nn_direct_conv_weight_grad(g, d, t->offs, xps, dyps, nb, dw_slot, acc);
        if (t->dx)
            for (int j = 0; j < nb; j++)
                nn_direct_conv_input_grad(g, d, t->w_t, t->offs_t, dyps + (size_t)j * d->dyp_floats,
                                          dxp, t->dx + (s + (size_t)j) * in_sample);
    }
}

static void dconv_backward(nn_backend *b, const nn_conv_geom *g, const float *x, const float *w,
                           const float *dy, float *dx, float *dw, float *dbias, void *ws)
{
    dconv_task t = { .g = g, .plan = dconv_plan_for(b, g), .x = x, .w = w, .dy = dy, .dx = dx,
                     .dw = dw, .dbias = dbias };
    const dconv_plan *p = &t.plan;
    dconv_task_layout(&t, ws, dx != NULL);
    par_for(b, p->threads, p->slots, dconv_backward_item, &t);

    sum_conv_slots(t.slots_ws, p->slots, p->slot_stride, (size_t)g->c_out, p->d.K, dw, dbias);
}

static size_t blas_conv2d_workspace(nn_backend *b, const nn_conv_geom *g)
{
    if (g->n <= 0 || g->c_in <= 0 || g->c_out <= 0 || g->h_out <= 0 || g->w_out <= 0 ||
        g->k_h <= 0 || g->k_w <= 0)
        return 0;   /* the operation itself reports the bad geometry */
    if (nn_direct_conv_usable(g)) {
        dconv_plan p = dconv_plan_for(b, g);
        return dconv_ws_floats(&p) * sizeof(float);
    }
    conv_plan p = conv_plan_for(b, g);
    return conv_ws_floats(&p) * sizeof(float);
}

typedef struct conv_task {
    const nn_conv_geom *g;
    conv_plan plan;
    const float *x, *w, *bias, *dy;
    float *y, *dx, *dw, *dbias;
    float *ws;
} conv_task;

/* Forward of item = chunk * tiles + tile. */
static void conv_forward_item(void *ctx, int item, int part)
{
    const conv_task *t = ctx;
    const nn_conv_geom *g = t->g;
    const conv_plan *p = &t->plan;
    float *col = t->ws + (size_t)part * p->thread_stride;  /* (K, L) */
    float *buf = col + p->col_floats;                       /* (c_out, nb*HW) */
    const size_t CO = (size_t)g->c_out, HW = p->HW, WO = (size_t)g->w_out;
    const size_t in_sample = (size_t)g->c_in * (size_t)g->h_in * (size_t)g->w_in;
    const size_t out_sample = CO * HW;
    const size_t s = (size_t)(item / p->tiles) * (size_t)p->nb;
    const int r0 = item % p->tiles * p->rows;
    const int r1 = r0 + p->rows < g->h_out ? r0 + p->rows : g->h_out;
    const int nb = (int)((size_t)g->n - s < (size_t)p->nb ? (size_t)g->n - s : (size_t)p->nb);
    const float *xs = t->x + s * in_sample;
    const float *cols = xs;
    if (!p->direct) {
        im2col(g, xs, nb, r0, r1, col);
        cols = col;
    }
    if (nb == 1) {
        /* straight into rows [r0, r1) of y, the bias preloaded */
        const size_t L = (size_t)(r1 - r0) * WO;
        float *ys = t->y + s * out_sample + (size_t)r0 * WO;
        if (t->bias)
            for (size_t co = 0; co < CO; co++)
                for (size_t i = 0; i < L; i++)
                    ys[co * HW + i] = t->bias[co];
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)CO, (int)L, (int)p->K,
                    1.0f, t->w, (int)p->K, cols, (int)L, t->bias ? 1.0f : 0.0f, ys, (int)HW);
        return;
    }
    const size_t L = (size_t)nb * HW;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)CO, (int)L, (int)p->K,
                1.0f, t->w, (int)p->K, cols, (int)L, 0.0f, buf, (int)L);
    /* buf (c_out, nb, HW) -> y (nb, c_out, HW), adding the bias */
    for (int j = 0; j < nb; j++) {
        float *ys = t->y + (s + (size_t)j) * out_sample;
        for (size_t co = 0; co < CO; co++) {
            const float *src = buf + co * L + (size_t)j * HW;
            float *dst = ys + co * HW;
            const float bv = t->bias ? t->bias[co] : 0.0f;
            for (size_t i = 0; i < HW; i++)
                dst[i] = src[i] + bv;
        }
    }
}

static int blas_conv2d_forward(nn_backend *b, const nn_conv_geom *g,
                               const float *x,     /* (n, c_in, h_in, w_in) */
                               const float *w,     /* (c_out, c_in, k_h, k_w) */
                               const float *bias,  /* (c_out) or NULL */
                               float *y,           /* (n, c_out, h_out, w_out) */
                               void *ws)           /* conv2d_workspace(g) bytes */
{
    if (conv_check(b, "conv2d_forward", g) != 0)
        return -1;
    if (!ws)
        return nn_backend_fail(b, "conv2d_forward: no workspace");
    if (nn_direct_conv_usable(g)) {
        dconv_forward(b, g, x, w, bias, y, ws);
        return 0;
    }
    conv_task t = { .g = g, .plan = conv_plan_for(b, g), .x = x, .w = w, .bias = bias, .y = y,
                    .ws = ws };
    par_for(b, t.plan.threads, t.plan.chunks * t.plan.tiles, conv_forward_item, &t);
    return 0;
}

/* Backward of slot `item`: its chunks' dx, and its partial dw and dbias. */
static void conv_backward_item(void *ctx, int item, int part)
{
    const conv_task *t = ctx;
    const nn_conv_geom *g = t->g;
    const conv_plan *p = &t->plan;
    float *col = t->ws + (size_t)part * p->thread_stride;  /* (K, L) */
    float *buf = col + p->col_floats;                       /* dyT (c_out, nb*HW) */
    float *dw_slot = t->ws + (size_t)p->threads * p->thread_stride +
                     (size_t)item * p->slot_stride;         /* (c_out, K) */
    float *db_slot = dw_slot + (size_t)g->c_out * p->K;     /* (c_out) */
    const size_t CO = (size_t)g->c_out, HW = p->HW, K = p->K, WO = (size_t)g->w_out;
    const size_t in_sample = (size_t)g->c_in * (size_t)g->h_in * (size_t)g->w_in;
    const size_t out_sample = CO * HW;
    size_t c0, c1;
    split_range((size_t)p->chunks, item, p->slots, 1, &c0, &c1);
    const size_t s0 = c0 * (size_t)p->nb;
    const size_t s1 = c1 * (size_t)p->nb < (size_t)g->n ? c1 * (size_t)p->nb : (size_t)g->n;

    if (t->dbias) {
        /* per sample and channel in float (short sums), across samples in double */
        for (size_t co = 0; co < CO; co++) {
            double acc = 0.0;
            for (size_t s = s0; s < s1; s++)
                acc += sum_run(t->dy + s * out_sample + co * HW, HW);
            db_slot[co] = (float)acc;
        }
    }
    int first = 1;
    for (size_t s = s0; s < s1; s += (size_t)p->nb) {
        const int nb = (int)(s1 - s < (size_t)p->nb ? s1 - s : (size_t)p->nb);
        const float *xs = t->x + s * in_sample;
        const float *dys = t->dy + s * out_sample;
        float *dxs = t->dx ? t->dx + s * in_sample : NULL;
        if (nb > 1) {
            /* batched: dy (nb, c_out, HW) -> dyT (c_out, nb, HW), one gemm each */
            const size_t L = (size_t)nb * HW;
            for (int j = 0; j < nb; j++)
                for (size_t co = 0; co < CO; co++)
                    memcpy(buf + co * L + (size_t)j * HW, dys + (size_t)j * out_sample + co * HW,
                           HW * sizeof *buf);
            if (t->dw) {
                im2col(g, xs, nb, 0, g->h_out, col);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)CO, (int)K, (int)L,
                            1.0f, buf, (int)L, col, (int)L, first ? 0.0f : 1.0f, dw_slot, (int)K);
                first = 0;
            }
            if (dxs) {
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)K, (int)L, (int)CO,
                            1.0f, t->w, (int)K, buf, (int)L, 0.0f, col, (int)L);
                memset(dxs, 0, (size_t)nb * in_sample * sizeof *dxs);
                col2im(g, col, nb, 0, g->h_out, dxs);
            }
            continue;
        }
        if (p->direct) {
            /* 1x1: dw += dy_s . x_s^T, dx_s = w^T . dy_s */
            if (t->dw) {
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)CO, (int)K, (int)HW,
                            1.0f, dys, (int)HW, xs, (int)HW, first ? 0.0f : 1.0f, dw_slot,
                            (int)K);
                first = 0;
            }
            if (dxs)
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)K, (int)HW, (int)CO,
                            1.0f, t->w, (int)K, dys, (int)HW, 0.0f, dxs, (int)HW);
            continue;
        }
        /* one sample in tiles of rows: dy's rows [r0, r1) are a (c_out, L)
         * block of dy_s with leading dimension HW */
        if (dxs)
            memset(dxs, 0, in_sample * sizeof *dxs);
        for (int r0 = 0; r0 < g->h_out; r0 += p->rows) {
            const int r1 = r0 + p->rows < g->h_out ? r0 + p->rows : g->h_out;
            const size_t L = (size_t)(r1 - r0) * WO;
            const float *dyr = dys + (size_t)r0 * WO;
            if (t->dw) {
                im2col(g, xs, 1, r0, r1, col);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)CO, (int)K, (int)L,
                            1.0f, dyr, (int)HW, col, (int)L, first ? 0.0f : 1.0f, dw_slot,
                            (int)K);
                first = 0;
            }
            if (dxs) {
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)K, (int)L, (int)CO,
                            1.0f, t->w, (int)K, dyr, (int)HW, 0.0f, col, (int)L);
                col2im(g, col, 1, r0, r1, dxs);
            }
        }
    }
}

static int blas_conv2d_backward(nn_backend *b, const nn_conv_geom *g,
                                const float *x,    /* (n, c_in, h_in, w_in) */
                                const float *w,    /* (c_out, c_in, k_h, k_w) */
                                const float *dy,   /* (n, c_out, h_out, w_out) */
                                float *dx,         /* like x, or NULL */
                                float *dw,         /* like w, or NULL */
                                float *dbias,      /* (c_out) or NULL */
                                void *ws)          /* conv2d_workspace(g) bytes */
{
    if (conv_check(b, "conv2d_backward", g) != 0)
        return -1;
    if (!ws)
        return nn_backend_fail(b, "conv2d_backward: no workspace");
    if (nn_direct_conv_usable(g)) {
        dconv_backward(b, g, x, w, dy, dx, dw, dbias, ws);
        return 0;
    }
    conv_task t = { .g = g, .plan = conv_plan_for(b, g), .x = x, .w = w, .dy = dy, .dx = dx,
                    .dw = dw, .dbias = dbias, .ws = ws };
    const conv_plan *p = &t.plan;
    par_for(b, p->threads, p->slots, conv_backward_item, &t);

    sum_conv_slots(t.ws + (size_t)p->threads * p->thread_stride, p->slots, p->slot_stride,
                   (size_t)g->c_out, p->K, dw, dbias);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Max pooling, in items of whole (sample, channel) planes.                  */
/* NaN semantics as cpu-ref and PyTorch: a NaN in the window wins.            */

static int pool_check(nn_backend *b, const char *op, const nn_pool_geom *g)
{
    char why[192];
    return nn_pool_geom_problem(op, g, why, sizeof why) ? nn_backend_fail(b, "%s", why) : 0;
}

/* written without && or || so that it compiles to a select, not a branch */
static inline float max_nan(float best, float v)
{
    return ((v > best) | (v != v)) ? v : best;
}

/* y[ow] = max of the 2x2 window (r0, r1)[2 ow .. 2 ow + 1], in row-major order */
static inline float max2x2(const float *r0, const float *r1, size_t c)
{
    float m = max_nan(r0[c], r0[c + 1]);
    m = max_nan(m, r1[c]);
    return max_nan(m, r1[c + 1]);
}

static void max2x2_row(const float *restrict r0, const float *restrict r1, float *restrict y,
                       size_t WO)
{
    size_t ow = 0;
    for (; ow + 8 <= WO; ow += 8)
        for (size_t j = 0; j < 8; j++)   /* a fixed 8: vectorised at -O2 */
            y[ow + j] = max2x2(r0, r1, 2 * (ow + j));
    for (; ow < WO; ow++)
        y[ow] = max2x2(r0, r1, 2 * ow);
}

static void maxpool_forward_planes(const nn_pool_geom *g, const float *x, float *y,
                                   size_t p0, size_t p1)
{
    const size_t HI = (size_t)g->h_in, WI = (size_t)g->w_in;
    const size_t HO = (size_t)g->h_out, WO = (size_t)g->w_out;
    const size_t SH = (size_t)g->stride_h, SW = (size_t)g->stride_w;
    const size_t KH = (size_t)g->k_h, KW = (size_t)g->k_w;
    for (size_t plane = p0; plane < p1; plane++) {
        const float *xp = x + plane * HI * WI;
        float *yp = y + plane * HO * WO;
        if (KH == 2 && KW == 2 && SH == 2 && SW == 2) {
            for (size_t oh = 0; oh < HO; oh++)
                max2x2_row(xp + 2 * oh * WI, xp + (2 * oh + 1) * WI, yp + oh * WO, WO);
            continue;
        }
        for (size_t oh = 0; oh < HO; oh++)
            for (size_t ow = 0; ow < WO; ow++) {
                const float *win = xp + oh * SH * WI + ow * SW;
                float m = win[0];
                for (size_t kh = 0; kh < KH; kh++)
                    for (size_t kw = 0; kw < KW; kw++)
                        m = max_nan(m, win[kh * WI + kw]);
                yp[oh * WO + ow] = m;
            }
    }
}

/* cond ? v : 0.0f as a bit mask, without a branch (and without 0 * v, which
 * would turn an infinite gradient into NaN) */
static inline float keep_if(int cond, float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    u &= (uint32_t)0 - (uint32_t)cond;
    memcpy(&v, &u, sizeof v);
    return v;
}

static void maxpool_backward_planes(const nn_pool_geom *g, const float *x, const float *y,
                                    const float *dy, float *dx, size_t p0, size_t p1)
{
    const size_t HI = (size_t)g->h_in, WI = (size_t)g->w_in;
    const size_t HO = (size_t)g->h_out, WO = (size_t)g->w_out;
    const size_t SH = (size_t)g->stride_h, SW = (size_t)g->stride_w;
    const size_t KH = (size_t)g->k_h, KW = (size_t)g->k_w;
    for (size_t plane = p0; plane < p1; plane++) {
        const float *xp = x + plane * HI * WI;
        const float *yp = y + plane * HO * WO, *dyp = dy + plane * HO * WO;
        float *dxp = dx + plane * HI * WI;
        if (KH == 2 && KW == 2 && SH == 2 && SW == 2) {
            /* non-overlapping windows: every dx inside one is written once;
             * only the floor-mode leftovers (odd last row/column) need zeros */
            for (size_t oh = 0; oh < HO; oh++) {
                const float *r0 = xp + 2 * oh * WI, *r1 = r0 + WI;
                float *d0 = dxp + 2 * oh * WI, *d1 = d0 + WI;
                for (size_t ow = 0; ow < WO; ow++) {
                    /* branch-free: where the maximum sits is data, and a
                     * mispredicted branch per window made this loop 10% of
                     * LeNet's step at batch 4 */
                    const float m = yp[oh * WO + ow], d = dyp[oh * WO + ow];
                    const size_t c = 2 * ow;
                    const int a = r0[c] == m;
                    const int bb = (r0[c + 1] == m) & !a;
                    const int cc = (r1[c] == m) & !(a | bb);
                    const int dd = (r1[c + 1] == m) & !(a | bb | cc);
                    d0[c] = keep_if(a, d);
                    d0[c + 1] = keep_if(bb, d);
                    d1[c] = keep_if(cc, d);
                    d1[c + 1] = keep_if(dd, d);
                }
                if (WI > 2 * WO) {
                    d0[WI - 1] = 0.0f;
                    d1[WI - 1] = 0.0f;
                }
            }
            if (HI > 2 * HO)
                memset(dxp + (HI - 1) * WI, 0, WI * sizeof *dxp);
            continue;
        }
        memset(dxp, 0, HI * WI * sizeof *dxp);
        if (SH >= KH && SW >= KW) {
            /* windows that do not overlap (conv1d-regression's 3-wide pool
             * with stride 3): each position is written at most once, so the
             * first match can be selected without a branch */
            for (size_t oh = 0; oh < HO; oh++)
                for (size_t ow = 0; ow < WO; ow++) {
                    const float m = yp[oh * WO + ow], d = dyp[oh * WO + ow];
                    const size_t base = oh * SH * WI + ow * SW;
                    int found = 0;
                    for (size_t kh = 0; kh < KH; kh++)
                        for (size_t kw = 0; kw < KW; kw++) {
                            const size_t at = base + kh * WI + kw;
                            const int hit = (xp[at] == m) & !found;
                            dxp[at] = keep_if(hit, d);
                            found |= hit;
                        }
                }
            continue;
        }
        for (size_t oh = 0; oh < HO; oh++)
            for (size_t ow = 0; ow < WO; ow++) {
                const float m = yp[oh * WO + ow];
                const size_t base = oh * SH * WI + ow * SW;
                /* the first position in row-major window order whose x equals
                 * y; none when y is NaN, and that gradient is dropped */
                for (size_t kh = 0; kh < KH; kh++)
                    for (size_t kw = 0; kw < KW; kw++)
                        if (xp[base + kh * WI + kw] == m) {
                            dxp[base + kh * WI + kw] += dyp[oh * WO + ow];
                            goto next;
                        }
            next:;
            }
    }
}

typedef struct pool_task {
    const nn_pool_geom *g;
    const float *x, *y, *dy;
    float *out;     /* y for forward, dx for backward */
    size_t planes;
    int items;
} pool_task;

static void maxpool_forward_item(void *ctx, int item, int part)
{
    const pool_task *t = ctx;
    size_t lo, hi;
    (void)part;
    split_range(t->planes, item, t->items, 1, &lo, &hi);
    maxpool_forward_planes(t->g, t->x, t->out, lo, hi);
}

static void maxpool_backward_item(void *ctx, int item, int part)
{
    const pool_task *t = ctx;
    size_t lo, hi;
    (void)part;
    split_range(t->planes, item, t->items, 1, &lo, &hi);
    maxpool_backward_planes(t->g, t->x, t->y, t->dy, t->out, lo, hi);
}

/* items of about EW_BLOCK input elements */
static void pool_run_items(nn_backend *b, pool_task *t, item_fn fn)
{
    const nn_pool_geom *g = t->g;
    double elems = (double)g->n * g->c * g->h_in * g->w_in;
    t->planes = (size_t)g->n * (size_t)g->c;
    double items = elems / EW_BLOCK;
    t->items = items < 1.0 ? 1 : items > (double)t->planes ? (int)t->planes : (int)items;
    par_for(b, threads_for(b, elems, PAR_MIN_ELEMS), t->items, fn, t);
}

static int blas_maxpool2d_forward(nn_backend *b, const nn_pool_geom *g,
                                  const float *x,   /* (n, c, h_in, w_in) */
                                  float *y)         /* (n, c, h_out, w_out) */
{
    if (pool_check(b, "maxpool2d_forward", g) != 0)
        return -1;
    pool_task t = { .g = g, .x = x, .out = y };
    pool_run_items(b, &t, maxpool_forward_item);
    return 0;
}

static int blas_maxpool2d_backward(nn_backend *b, const nn_pool_geom *g,
                                   const float *x, const float *y, const float *dy,
                                   float *dx)
{
    if (pool_check(b, "maxpool2d_backward", g) != 0)
        return -1;
    pool_task t = { .g = g, .x = x, .y = y, .dy = dy, .out = dx };
    pool_run_items(b, &t, maxpool_backward_item);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Elementwise operations, in items of EW_BLOCK elements. Our own loops,    */
/* written so that GCC vectorises them at -O2 (cpu-ref's are the same        */
/* arithmetic, but -O2 only vectorises loops of a known trip count, and       */
/* relu's select on random signs is a mispredicted branch per element);       */
/* tanh's forward and Adam (a square root per element, memory-bound) are the  */
/* cpu-ref loops on each item.                                                */

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

enum ew_kind { EW_ACT_FWD, EW_ACT_BWD, EW_DROP, EW_SGD, EW_ADAM };

typedef struct ew_task {
    enum ew_kind kind;
    nn_backend *b;
    size_t n;
    enum nn_act act;
    const float *x, *y, *dy;
    float *out;
    float p;
    uint64_t seed, counter;
    float *param, *m, *v;
    const float *grad;
    const nn_sgd_hyper *sgd;
    const nn_adam_hyper *adam;
    long t;
} ew_task;

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

/* cpu-ref's SGD in the same arithmetic order, one loop per case so that no
 * loop holds a branch: the first step (t = 1) stores g itself in the velocity
 * without reading it, as PyTorch creates its buffer. */
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

static void ew_item(void *ctx, int item, int part)
{
    const ew_task *t = ctx;
    (void)part;
    const size_t lo = (size_t)item * EW_BLOCK;
    const size_t hi = t->n - lo < EW_BLOCK ? t->n : lo + EW_BLOCK;
    switch (t->kind) {
    case EW_ACT_FWD:
        if (t->act == NN_ACT_RELU)
            relu_fwd(lo, hi, t->x, t->out);
        else if (t->act == NN_ACT_MISH)
            mish_fwd(lo, hi, t->x, t->out);
        else
            nn_ref_act_forward(t->b, t->act, hi - lo, t->x + lo, t->out + lo);
        break;
    case EW_ACT_BWD:
        if (t->act == NN_ACT_RELU)
            relu_bwd(lo, hi, t->x, t->dy, t->out);
        else if (t->act == NN_ACT_TANH)
            tanh_bwd(lo, hi, t->y, t->dy, t->out);
        else
            mish_bwd(lo, hi, t->x, t->dy, t->out);
        break;
    case EW_DROP:
        dropout_range(lo, hi, t->p, t->seed, t->counter, t->x, t->out);
        break;
    case EW_SGD:
        sgd_range(lo, hi, t->param, t->grad, t->m, t->sgd, t->t);
        break;
    case EW_ADAM:
        nn_ref_adam_step(t->b, hi - lo, t->param + lo, t->grad + lo, t->m + lo, t->v + lo,
                         t->adam, t->t);
        break;
    }
}

/* `cost` weighs an element against a plain copy (mish is ~10) */
static void ew_run(ew_task *t, double cost)
{
    int items = (int)((t->n + EW_BLOCK - 1) / EW_BLOCK);
    par_for(t->b, threads_for(t->b, (double)t->n * cost, PAR_MIN_ELEMS), items, ew_item, t);
}

static double act_cost(enum nn_act act)
{
    return act == NN_ACT_RELU ? 1.0 : 10.0;
}

static int blas_act_forward(nn_backend *b, enum nn_act act, size_t n,
                            const float *x, float *y)
{
    if (act != NN_ACT_RELU && act != NN_ACT_TANH && act != NN_ACT_MISH)
        return nn_backend_fail(b, "act_forward: unknown activation %d", (int)act);
    ew_task t = { .kind = EW_ACT_FWD, .b = b, .n = n, .act = act, .x = x, .out = y };
    ew_run(&t, act_cost(act));
    return 0;
}

static int blas_act_backward(nn_backend *b, enum nn_act act, size_t n,
                             const float *x, const float *y, const float *dy, float *dx)
{
    if (act != NN_ACT_RELU && act != NN_ACT_TANH && act != NN_ACT_MISH)
        return nn_backend_fail(b, "act_backward: unknown activation %d", (int)act);
    ew_task t = { .kind = EW_ACT_BWD, .b = b, .n = n, .act = act, .x = x, .y = y, .dy = dy,
                  .out = dx };
    ew_run(&t, act_cost(act));
    return 0;
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
    ew_task t = { .kind = EW_DROP, .b = b, .n = n, .p = p, .seed = seed, .counter = counter,
                  .x = in, .out = out };
    ew_run(&t, 4.0);
    return 0;
}

static int blas_dropout_forward(nn_backend *b, size_t n, float p, uint64_t seed,
                                uint64_t counter, const float *x, float *y)
{
    return dropout(b, "dropout_forward", n, p, seed, counter, x, y);
}

static int blas_dropout_backward(nn_backend *b, size_t n, float p, uint64_t seed,
                                 uint64_t counter, const float *dy, float *dx)
{
    return dropout(b, "dropout_backward", n, p, seed, counter, dy, dx);
}

static int blas_sgd_step(nn_backend *b, size_t n, float *param, const float *grad,
                         float *velocity, const nn_sgd_hyper *h, long step)
{
    if (step < 1)
        return nn_backend_fail(b, "sgd_step: step %ld, steps count from 1", step);
    ew_task t = { .kind = EW_SGD, .b = b, .n = n, .param = param, .grad = grad,
                  .m = velocity, .sgd = h, .t = step };
    ew_run(&t, 2.0);
    return 0;
}

static int blas_adam_step(nn_backend *b, size_t n, float *param, const float *grad,
                          float *m, float *v, const nn_adam_hyper *h, long step)
{
    if (step < 1)
        return nn_backend_fail(b, "adam_step: step %ld, steps count from 1", step);
    ew_task t = { .kind = EW_ADAM, .b = b, .n = n, .param = param, .grad = grad,
                  .m = m, .v = v, .adam = h, .t = step };
    ew_run(&t, 4.0);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The table.                                                                */

const nn_backend_ops nn_backend_cpu = {
    .name = "cpu",
    .summary = "OpenBLAS sgemm and im2col, all cores (own thread pool)",
    .host_memory = 1,
    .probe = blas_probe,
    .open = blas_open,
    .close = blas_close,

    .alloc = nn_ref_alloc,
    .free = nn_ref_free,
    .upload = nn_ref_upload,
    .download = nn_ref_download,
    .zero = nn_ref_zero,
    .synchronize = nn_ref_synchronize,

    .linear_forward = blas_linear_forward,
    .linear_backward = blas_linear_backward,
    .conv2d_workspace = blas_conv2d_workspace,
    .conv2d_forward = blas_conv2d_forward,
    .conv2d_backward = blas_conv2d_backward,
    .maxpool2d_forward = blas_maxpool2d_forward,
    .maxpool2d_backward = blas_maxpool2d_backward,
    .act_forward = blas_act_forward,
    .act_backward = blas_act_backward,
    .dropout_forward = blas_dropout_forward,
    .dropout_backward = blas_dropout_backward,
    .softmax_xent = nn_ref_softmax_xent,
    .mse = nn_ref_mse,
    .sgd_step = blas_sgd_step,
    .adam_step = blas_adam_step,
};
