/* backends/cpu/cpu_internal.h - what the files of the fast CPU backend ("cpu")
 * share; nothing outside backends/cpu_*.c includes it.
 *
 * The backend, file by file (its op table is backends/cpu/cpu_blas.c):
 *   cpu_threads.c          open/close, the thread pool and the parallel loops
 *   cpu_thread_choice.c    how many threads take part, revised as other programs come and go
 *   cpu_features.c         whether our own AVX2 kernels may run
 *   cpu_linear.c           linear_forward/backward: sgemms cut into blocks
 *   cpu_linear_narrow.c      ... the input gradient of a narrow layer (AVX2)
 *   cpu_linear_small.c       ... the forward and weight gradient at small batches (AVX2)
 *   cpu_conv.c             conv2d_workspace/forward/backward: picks a path and
 *                          calls it (the paths never call back: what both
 *                          share is below, nn_cpu_sum_conv_slots)
 *   cpu_conv_im2col.c        the im2col + sgemm path (any geometry)
 *   cpu_conv_direct_run.c    the direct path's threading (narrow, stride 1)
 *   cpu_conv_direct.c        ... and its AVX2 kernels (+ _chan.c: the channel form)
 *   cpu_maxpool.c          maxpool2d_forward/backward
 *   cpu_activation.c       act_forward/backward (relu, tanh, mish)
 *   cpu_dropout.c          dropout_forward/backward
 *   cpu_merge.c            add, mul, accumulate (slice is cpu-ref's)
 *   cpu_optim.c            sgd_step, adam_step
 *   cpu_tab.c              batchnorm, glu and sparsemax (TabNet's layers); the
 *                          sparsity term's sum is cpu-ref's
 * Memory and the losses are cpu-ref's own functions (cpu_ref.c): plain
 * loops are already the best a CPU does there.
 *
 * Every parallel operation is a list of items (chunks of samples, blocks of a
 * gemm's output, ranges of elements) that the pool's threads claim one at a
 * time, the caller included. What an item computes never depends on the
 * thread that runs it, and partial sums are added up in a fixed order, so
 * results are the same from run to run. Every buffer passed to one call must
 * be distinct, as for cpu-ref. */
#ifndef NNLAB_CPU_INTERNAL_H
#define NNLAB_CPU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "backend.h"

/* ------------------------------------------------------------------------ */
/* Tuning, measured on 2-core Zen 3 and Zen 5 machines. These only move     */
/* work between threads and gemm calls; the parity test checks every path   */
/* they choose.                                                              */

/* Work below which a parallel item is not worth a thread. A parallel region
 * with the pool's workers spinning (cpu_threads.c) costs 0.07-0.15 us on the
 * 2-core Zen 5 (20,000 in a row: 0.07 with two empty items, 0.15 with two
 * whose loops did next to nothing),
 * where the first pool's blocking wake-ups cost about a microsecond; 30k
 * multiply-adds are ~0.3 us of one core's sgemm at batch 4's sizes. Measured
 * on the steps (decision 0164): LeNet-5 at batch 4 on two threads 92 ->
 * 85 us with these against 150k and 16,384; 60k and 6,000 gave 88-90. */
#define PAR_MIN_MACS 30000.0
#define PAR_MIN_ELEMS 3000
/* Elements per item of an elementwise loop. */
#define EW_BLOCK 16384
/* Partial weight gradients of a convolution: the batch's chunks are grouped
 * into this many slots, each with its own partial sum, added in slot order,
 * so that the sum does not depend on which thread ran which slot. */
#define CONV_SLOTS 8

/* A loop of ours compiled twice, for the baseline x86-64 (4 floats a vector)
 * and for AVX2 (8), the loader picking one by the CPU (GCC's target_clones,
 * an ifunc). Only for loops without FMA or reordered sums in them (ISO C:
 * no contraction), so both give the same bits: on a CPU without AVX-512 the
 * elementwise passes otherwise ran four floats at a time (SGD was 11% of
 * lenet5-cifar10's step at batch 4 with NNLAB_NO_AVX512=1: perf). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NN_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define NN_AVX2_CLONES
#endif

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
/* Parallel loops (cpu_threads.c).                                           */

/* One item of a parallel loop; part (< the loop's parts) indexes the running
 * thread's scratch. */
typedef void (*item_fn)(void *ctx, int item, int part);

/* Threads worth using for `work` units when each should get at least
 * `min_per_thread` of them. */
int nn_cpu_threads_for(const nn_backend *b, double work, double min_per_thread);

/* fn(ctx, item, part) for every item in [0, count), the items claimed one at
 * a time by at most `parts` threads. */
void nn_cpu_par_for(nn_backend *b, int parts, int count, item_fn fn, void *ctx);

/* cpu_thread_choice.c: how many threads take part (its opening comment says
 * the rule and why). */
typedef struct nn_thread_choice nn_thread_choice;
/* asked: the config's threads (0: ours to choose, revised as the job runs);
 * NULL when out of memory. */
nn_thread_choice *nn_cpu_choice_open(int asked, int max_threads);
void nn_cpu_choice_close(nn_thread_choice *c);
/* The most it may choose: the pool's threads, what sizes plan for. */
int nn_cpu_choice_largest(const nn_thread_choice *c);
/* Between operations, on the issuing thread: at most once a window, the
 * load read and the count revised; 1 when it was (nn_cpu_choice_now then
 * says the count and why), 0 when no window ended. */
int nn_cpu_choice_tick(nn_thread_choice *c);
/* At a training step's start (set_step), on the issuing thread: the count
 * measured (nn_thread_trial_step, at most the load's count); 1 when it or
 * its words changed (nn_cpu_choice_now says them), 0 when not (most steps),
 * -1 when the count was asked for (never revised). */
int nn_cpu_choice_step(nn_thread_choice *c);
/* The count now, and why in words. */
int nn_cpu_choice_now(nn_thread_choice *c, char *why, size_t why_len);

/* The measured choice's state (cpu_thread_choice.c's opening comment): the
 * steps timed at the load's count, then at the powers of two below it while
 * a smaller count is faster; the fastest kept; run again every few seconds
 * or when the load's count changes. Zeroed to start. */
typedef struct nn_thread_trial {
    int cap;                     /* the load's count at the last step */
    int trying;                  /* the count being timed; 0: no trial running */
    int best;                    /* the trial's fastest count so far */
    double best_s, try_s;        /* their fastest step (s) */
    int samples;                 /* steps timed at `trying` */
    int pick;                    /* the last trial's answer; 0: none yet */
    double pick_s;
    int running;                 /* the count the step now running was given */
    double last_start, began, next;  /* the last step's start, the trial's, the next trial's */
    long steps;
} nn_thread_trial;
/* A training step starts at `now` (seconds) with the load's count `cap`:
 * the step that just ended is timed, and the count for the one starting
 * returned (1..cap). A pure function of its arguments and state: tests
 * feed it simulated steps. */
int nn_thread_trial_step(nn_thread_trial *t, int cap, double now);
/* The rule, on the other programs' busy cores of the windows so far
 * (others[n - 1] the latest): a core is taken when it was busy in each of
 * the last few windows; at least 1 of allowed. why: in words. */
int nn_cpu_thread_rule(int allowed, const double others[], int n, char *why, size_t why_len);

/* The cores other programs kept busy over a probe: each core's busy share
 * (busy[c] of total[c] ticks) added up, less this process's own `own` ticks
 * in cores (its threads, e.g. a pool still spinning down, are not another
 * program's load); never below 0. */
double nn_cpu_others_busy(int cores, const double busy[], const double total[], double own);

/* For tests (tests/test_threads.c): while hold is set, the workers join no
 * operation, as when other programs have their cores; each operation must
 * still end, run by the threads that take part. */
void nn_cpu_hold_workers(nn_backend *b, int hold);

/* The CPU backend's switches: which of our own kernels may run. Each is on
 * when the CPU has AVX2 and FMA and its environment variable (which keeps
 * the portable path, so that the parity tests run both and anyone can
 * compare them) is unset or "0"; a few need more (cpu_features.c's table).
 * Read once, all together, the first time any is asked, in one place
 * (cpu_features.c): the kernels look them up, they keep no copy. */
enum nn_cpu_switch {
    NN_CPU_SW_AVX512,                /* NNLAB_NO_AVX512: the AVX-512 twins (and AVX512F, saved by the OS) */
    NN_CPU_SW_DIRECT_CONV,           /* NNLAB_NO_DIRECT_CONV: the direct convolution, not im2col */
    NN_CPU_SW_DX_SCATTER,            /* NNLAB_NO_DX_SCATTER: its input gradient's scatter form (not with AVX-512) */
    NN_CPU_SW_CONV_CHAN,             /* NNLAB_NO_CONV_CHAN: its channel form (not with AVX-512) */
    NN_CPU_SW_NARROW_DX,             /* NNLAB_NO_NARROW_DX: linear_backward's dx for narrow inputs */
    NN_CPU_SW_SMALL_DW,              /* NNLAB_NO_SMALL_DW: the weight gradient of small batches */
    NN_CPU_SW_POOL_SIMD,             /* NNLAB_NO_POOL_SIMD: the max-pool gradient on masks */
    NN_CPU_SW_OWN_ADAM,              /* NNLAB_NO_OWN_ADAM: our Adam */
    NN_CPU_SW_FUSED_ADAM,            /* NNLAB_NO_FUSED_ADAM: Adam fused into the weight gradient */
    NN_CPU_SW_DROPOUT_SIMD,          /* NNLAB_NO_DROPOUT_SIMD: dropout's mask hashed four at a time */
    NN_CPU_SW_COUNT
};

/* cpu_features.c: whether switch s is on (above). */
int nn_cpu_switch_on(enum nn_cpu_switch s);

/* cpu_features.c: whether the AVX-512 variants of those kernels
 * (cpu_avx512.h) run in their place: the own kernels may run, the CPU has
 * AVX512F and the OS saves its state, and NNLAB_NO_AVX512 is unset or "0".
 * (cpu_info.h's nn_cpu_kernels_name says which path runs.) */
int nn_cpu_avx512_kernels(void);

/* cpu_linear_narrow.c: dx (n, in) = dy (n, out) . w (out, in) by an AVX2
 * kernel when in is narrow (a multiple of 4 up to 24) and the CPU has AVX2
 * and FMA (and NNLAB_NO_NARROW_DX is not set): usable tells, the other runs
 * it. */
int nn_cpu_narrow_dx_usable(int in);
int nn_cpu_narrow_dx(nn_backend *b, int n, int in, int out, const float *dy, const float *w,
                     float *dx);

/* cpu_linear_small.c: dw (out, in) = dy^T (out, n) . x (n, in) by an AVX2
 * kernel for batches n up to SMALL_DW_MAX_N when the CPU has AVX2 and FMA
 * (and NNLAB_NO_SMALL_DW is not set): usable tells; rows computes the rows
 * [lo, hi) of dw, writing each element once (no clearing pass). */
#define SMALL_DW_MAX_N 8
int nn_cpu_small_dw_usable(int n);
void nn_cpu_small_dw_rows(int n, int in, int out, const float *dy, const float *x, float *dw,
                          int lo, int hi);
/* ... and the forward's y (n, out) = x (n, in) . w (out, in)^T (+ bias), the
 * columns [lo, hi) of y, under the same condition. */
void nn_cpu_small_fwd_rows(int n, int in, int out, const float *x, const float *w,
                           const float *bias, float *y, int lo, int hi);
/* ... and the input gradient dx (n, in) = dy (n, out) . w (out, in), the
 * columns [lo, hi) of dx, under the same condition. */
void nn_cpu_small_dx_cols(int n, int in, int out, const float *dy, const float *w, float *dx,
                          int lo, int hi);

/* Splits [0, len) into `parts` pieces whose boundaries are multiples of
 * `align` (except the end); piece `part` is [*lo, *hi), possibly empty. */
void nn_cpu_split_range(size_t len, int part, int parts, size_t align, size_t *lo, size_t *hi);

/* An elementwise loop over [0, n) in items of nn_cpu_ew_block(n) elements:
 * fn gets the item's range from nn_cpu_ew_range. `cost` weighs an element
 * against a plain copy (mish is ~10). */
void nn_cpu_ew_run(nn_backend *b, size_t n, double cost, item_fn fn, void *ctx);

/* EW_BLOCK, but an array shorter than two blocks is cut in two halves (a
 * multiple of 16 floats first): as one block and its remainder, or as one
 * item, it left a second thread idle or waiting on the first. Every loop run
 * so is elementwise, so no result depends on where the items end. */
static inline size_t nn_cpu_ew_block(size_t n)
{
    if (n >= 2 * (size_t)EW_BLOCK)
        return EW_BLOCK;
    const size_t half = ((n + 1) / 2 + 15) & ~(size_t)15;
    return half ? half : 16;
}

static inline void nn_cpu_ew_range(size_t n, int item, size_t *lo, size_t *hi)
{
    const size_t block = nn_cpu_ew_block(n);
    *lo = (size_t)item * block;
    *hi = n - *lo < block ? n : *lo + block;
}

/* ------------------------------------------------------------------------ */
/* Short runs of floats, shared by the convolution paths.                    */

static inline size_t nn_cpu_round16(size_t floats)    /* keeps every area 64-byte aligned */
{
    return (floats + 15) & ~(size_t)15;
}

/* d[i] += s[i] */
static inline void nn_cpu_add_run(float *restrict d, const float *restrict s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (size_t j = 0; j < 8; j++)   /* a fixed 8: vectorised at -O2 */
            d[i + j] += s[i + j];
    for (; i < n; i++)
        d[i] += s[i];
}

/* sum of n floats, in 8 interleaved partial sums (vectorised at -O2) */
static inline float nn_cpu_sum_run(const float *s, size_t n)
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

/* dw and dbias = the sum of the slots' partials (slot i at slot0 + i *
 * stride: c_out x K weights, then c_out biases), in slot order, so that the
 * result does not depend on which thread ran which slot. Both convolution
 * paths end their backward with it. */
static inline void nn_cpu_sum_conv_slots(const float *slot0, int slots, size_t stride,
                                         size_t c_out, size_t K, float *dw, float *dbias)
{
    const size_t wn = c_out * K;
    if (dw) {
        memcpy(dw, slot0, wn * sizeof *dw);
        for (int i = 1; i < slots; i++)
            nn_cpu_add_run(dw, slot0 + (size_t)i * stride, wn);
    }
    if (dbias) {
        memcpy(dbias, slot0 + wn, c_out * sizeof *dbias);
        for (int i = 1; i < slots; i++)
            nn_cpu_add_run(dbias, slot0 + (size_t)i * stride + wn, c_out);
    }
}

/* ------------------------------------------------------------------------ */
/* The two convolution paths (cpu_conv.c chooses). Each path's workspace is a */
/* pure function of the geometry and the thread count.                       */


size_t nn_cpu_im2col_workspace(const nn_backend *b, const nn_conv_geom *g);
void nn_cpu_im2col_forward(nn_backend *b, const nn_conv_geom *g, const float *x, const float *w,
                           const float *bias, float *y, void *ws);
void nn_cpu_im2col_backward(nn_backend *b, const nn_conv_geom *g, const float *x,
                            const float *w, const float *dy, float *dx, float *dw,
                            float *dbias, void *ws);

size_t nn_cpu_direct_workspace(const nn_backend *b, const nn_conv_geom *g);
void nn_cpu_direct_forward(nn_backend *b, const nn_conv_geom *g, const float *x, const float *w,
                           const float *bias, float *y, void *ws);
void nn_cpu_direct_backward(nn_backend *b, const nn_conv_geom *g, const float *x,
                            const float *w, const float *dy, float *dx, float *dw,
                            float *dbias, void *ws);

/* ------------------------------------------------------------------------ */
/* The operations: nn_cpu_<op> for each entry of backend_ops.def marked      */
/* `own`, with the signature of its slot in nn_backend_ops; the `ref` ones   */
/* are cpu-ref's (cpu_ref.h), the `none` ones NULL.                          */

#define NN_CPU_PROTO_own(ret, op, params) ret nn_cpu_##op params;
#define NN_CPU_PROTO_ref(ret, op, params)
#define NN_CPU_PROTO_none(ret, op, params)
#define NN_CPU_PROTO_cpu(ret, op, params) ret nn_cpu_##op params;
#define NN_CPU_PROTO_host NN_CPU_PROTO_cpu
#define NN_OP(ret, op, params, cpu) NN_CPU_PROTO_##cpu(ret, op, params)
#include "backend_ops.def"

#endif
