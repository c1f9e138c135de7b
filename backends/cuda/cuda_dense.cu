/* backends/cuda/cuda_dense.cu - the products: linear layers with cuBLAS
 * (cublasSgemm, FP32) and convolutions with cuDNN.
 *
 * cuBLAS is column-major and our buffers are row-major (backend.h): a
 * row-major (r, c) matrix is the column-major (c, r) matrix, its transpose, so
 *   y  (n,out) = x . w^T   is  y^T  = op_T(w) . x^T     Sgemm(T, N, out, n, in)
 *   dx (n,in)  = dy . w    is  dx^T = w^T . dy^T        Sgemm(N, N, in, n, out)
 *   dw (out,in) = dy^T . x is  dw^T = x^T . op_T(dy^T)  Sgemm(N, T, in, out, n)
 * with every leading dimension the row length.
 *
 * Convolution: one plan per geometry (descriptors and, per direction, cuDNN's
 * candidate algorithms), made the first time the geometry is seen and
 * kept (GPU_PLANS of them, the least recently used evicted, never one a
 * recording uses). The engine asks conv2d_workspace for each layer at the
 * job's largest batch before the first step, so those plans are made then:
 * their candidates may use up to GPU_CONV_WORKSPACE_CAP, the plan reports the
 * largest of them (so that whichever runs fits), and the engine allocates the
 * largest once. A geometry first met in a call (a partial last batch) gets
 * candidates that fit in the largest workspace reported so far. The first
 * call of each direction outside a recording takes the algorithm remembered
 * for the geometry, or times the candidates and keeps the fastest
 * (cuda_conv_algo.cu); one that will not run falls back to the others in
 * rank order (PyTorch's try-all); a recording only replays what was chosen.
 * With the deterministic switch only deterministic algorithms are
 * candidates, so that a run repeats bit for bit; with TF32 off, only FMA
 * math (plain FP32). The bias and its gradient are our own kernels
 * (gpu_bias_planes, gpu_conv_bias_grad), not cudnnAddTensor and
 * cudnnConvolutionBackwardBias, whose calc_bias_diff kernel took 25% of a
 * LeNet step on an H200. */
#include "geom_check.h"
#include "cuda_backend.h"

#include <string.h>

/* ---- linear --------------------------------------------------------------------------- */

int gpu_linear_forward(nn_backend *b, int n, int in, int out, const float *x, const float *w,
                       const float *bias, float *y)
{
    gpu_state *s = gpu_of(b);
    const float one = 1.0f, zero = 0.0f;
    if (n <= 0 || in <= 0 || out <= 0)
        return gpu_fail(b, "linear_forward: bad shape n=%d in=%d out=%d", n, in, out);
    if (gpu_blas(b, cublasSgemm(s->blas, CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, &one, w, in, x,
                                in, &zero, y, out),
                 "linear_forward", "cublasSgemm", "computing y (%dx%d) = x (%dx%d) . w^T", n, out,
                 n, in))
        return -1;
    gpu_count_library(b);
    return bias ? gpu_bias_rows(b, "linear_forward", n, out, bias, y) : 0;
}

int gpu_linear_backward(nn_backend *b, int n, int in, int out, const float *x, const float *w,
                        const float *dy, float *dx, float *dw, float *dbias)
{
    gpu_state *s = gpu_of(b);
    const float one = 1.0f, zero = 0.0f;
    if (n <= 0 || in <= 0 || out <= 0)
        return gpu_fail(b, "linear_backward: bad shape n=%d in=%d out=%d", n, in, out);
    if (dx) {
        if (gpu_blas(b, cublasSgemm(s->blas, CUBLAS_OP_N, CUBLAS_OP_N, in, n, out, &one, w, in,
                                    dy, out, &zero, dx, in),
                     "linear_backward", "cublasSgemm", "computing dx (%dx%d) = dy (%dx%d) . w",
                     n, in, n, out))
            return -1;
        gpu_count_library(b);
    }
    if (dw) {
        if (gpu_blas(b, cublasSgemm(s->blas, CUBLAS_OP_N, CUBLAS_OP_T, in, out, n, &one, x, in,
                                    dy, out, &zero, dw, in),
                     "linear_backward", "cublasSgemm", "computing dw (%dx%d) = dy^T . x (%dx%d)",
                     out, in, n, in))
            return -1;
        gpu_count_library(b);
    }
    return dbias ? gpu_bias_grad(b, "linear_backward", n, out, dy, dbias) : 0;
}

/* ---- convolution plans ------------------------------------------------------------------ */

/* cpu-ref's check (a wrong output size is an engine bug), then cuDNN's size
 * limit: a tensor of 2^31 elements or more is refused here, with the batch
 * that would fit, rather than by a descriptor call's BAD_PARAM. */
static int conv_check(nn_backend *b, const char *op, const nn_conv_geom *g)
{
    char why[320];
    if (nn_conv_geom_problem(op, g, why, sizeof why) ||
        nn_conv_geom_size_problem(op, g, NN_CUDNN_MAX_ELEMENTS, "cuDNN", why, sizeof why))
        return gpu_fail(b, "%s", why);
    return 0;
}

static void plan_release(gpu_conv_plan *p)
{
    if (p->x)
        cudnnDestroyTensorDescriptor(p->x);
    if (p->y)
        cudnnDestroyTensorDescriptor(p->y);
    if (p->w)
        cudnnDestroyFilterDescriptor(p->w);
    if (p->conv)
        cudnnDestroyConvolutionDescriptor(p->conv);
    memset(p, 0, sizeof *p);
}

void gpu_plans_destroy(gpu_state *s)
{
    for (int i = 0; i < GPU_PLANS; i++)
        if (s->plans[i].used)
            plan_release(&s->plans[i]);
    s->plans_pinned = 0;
}

void gpu_plans_unpin(gpu_state *s)
{
    for (int i = 0; i < GPU_PLANS; i++)
        s->plans[i].pinned = 0;
    s->plans_pinned = 0;
}

/* ---- ranking cuDNN's candidates --------------------------------------------------------- */

/* One entry of cuDNN's answer, whichever direction (the three perf structs
 * differ only in the type of algo). */
typedef struct algo_perf {
    int algo;
    cudnnStatus_t status;
    size_t memory;
    cudnnDeterminism_t determinism;
    cudnnMathType_t math;
} algo_perf;

#define TO_ALGO_PERF(perf, got, out)                                                        \
    for (int i_ = 0; i_ < (got); i_++) {                                                    \
        (out)[i_].algo = (int)(perf)[i_].algo;                                              \
        (out)[i_].status = (perf)[i_].status;                                               \
        (out)[i_].memory = (perf)[i_].memory;                                               \
        (out)[i_].determinism = (perf)[i_].determinism;                                     \
        (out)[i_].math = (perf)[i_].mathType;                                               \
    }

/* Which of cuDNN's candidates may run: with TF32 off, FMA math first, then
 * the default (executed with the descriptor set to FMA, so no TF32 either). */
static int math_rank(const gpu_state *s, cudnnMathType_t m)
{
    if (s->tf32)
        return 0;
    if (m == CUDNN_FMA_MATH)
        return 0;
    if (m == CUDNN_DEFAULT_MATH)
        return 1;
    return -1;
}

static cudnnMathType_t run_math(const gpu_state *s, cudnnMathType_t chosen)
{
    return s->tf32 ? chosen : CUDNN_FMA_MATH;
}

/* Appends perf[i] to d unless the same algorithm with the same math is there. */
static void add_candidate(const gpu_state *s, gpu_conv_dir *d, const algo_perf *a)
{
    cudnnMathType_t math = run_math(s, a->math);
    for (int k = 0; k < d->n; k++)
        if (d->cand[k].algo == a->algo && d->cand[k].math == math)
            return;
    if (d->n < GPU_ALGO_CANDIDATES) {
        d->cand[d->n].algo = a->algo;
        d->cand[d->n].math = math;
        d->cand[d->n].ws = a->memory;
        d->cand[d->n].deterministic = a->determinism == CUDNN_DETERMINISTIC;
        d->n++;
    }
}

/* Whether algorithm algo of direction d keeps FP32's accuracy. cuDNN 9.19's
 * Winograd non-fused algorithms (FWD_WINOGRAD_NONFUSED, BWD_DATA and
 * BWD_FILTER _WINOGRAD_NONFUSED) do not, whatever the math type: on an H100
 * and an H200 they were 1e-3 to 5e-3 of the largest value off a double
 * reference (LeNet's first convolution at batches 1 and 4, its second at
 * batch 1, with FMA math as with the default: docs/runs.md, "A wrong
 * gradient on a real GPU"), where every other algorithm was within 1e-5. The
 * timed choice picked them at random, whenever their trial was the fastest,
 * and the parity suite failed one run in two there. With TF32 allowed the
 * user accepted that precision, and they may run. */
static int keeps_fp32(int d, int algo)
{
    switch (d) {
    case GPU_CONV_FWD: return algo != CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
    case GPU_CONV_BWD_DATA: return algo != CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
    default: return algo != CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
    }
}

/* d's candidates from cuDNN's answer (fastest expected first): those that
 * succeeded, fit in limit, keep FP32's accuracy unless TF32 is allowed
 * (keeps_fp32) and may run, in four passes (deterministic FMA,
 * deterministic default math, then the non-deterministic ones the same way;
 * with the deterministic switch, the first two only). Timing picks among
 * them; the order is the fallbacks' when the fastest will not run. */
static void rank_candidates(const gpu_state *s, int dir, const algo_perf *perf, int got,
                            size_t limit, gpu_conv_dir *d)
{
    d->n = 0;
    d->chosen = -1;
    d->ms = -1.0f;
    d->trials = 0;
    for (int pass = 0; pass < (s->deterministic ? 2 : 4); pass++)
        for (int i = 0; i < got; i++) {
            const algo_perf *a = &perf[i];
            int rank = math_rank(s, a->math);
            int deterministic = a->determinism == CUDNN_DETERMINISTIC;
            if (a->status != CUDNN_STATUS_SUCCESS || a->memory > limit || rank < 0 ||
                rank != (pass & 1) || deterministic != (pass < 2) ||
                (!s->tf32 && !keeps_fp32(dir, a->algo)))
                continue;
            add_candidate(s, d, a);
        }
}

static const char *const dir_name[GPU_CONV_DIRS] = { "forward", "backward-data", "backward-filter" };

/* The three directions' candidates (cudnnGet*Algorithm_v7: heuristics, no
 * trial runs; the trial is the first call, conv_run). Never while recording:
 * the queries are not capturable. */
static int plan_algorithms(nn_backend *b, const char *op, gpu_conv_plan *p, size_t limit)
{
    gpu_state *s = gpu_of(b);
    cudnnConvolutionFwdAlgoPerf_t fwd[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    cudnnConvolutionBwdDataAlgoPerf_t bwd_data[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    cudnnConvolutionBwdFilterAlgoPerf_t bwd_filter[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    algo_perf pf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT], pd[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    algo_perf pw[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    const algo_perf *perf[GPU_CONV_DIRS] = { pf, pd, pw };
    int got[GPU_CONV_DIRS] = { 0, 0, 0 };
    const nn_conv_geom *g = &p->g;

    if (gpu_dnn(b, cudnnSetConvolutionMathType(p->conv, s->tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH),
                op, "cudnnSetConvolutionMathType", "choosing the math of a convolution") ||
        gpu_dnn(b, cudnnGetConvolutionForwardAlgorithm_v7(s->dnn, p->x, p->w, p->conv, p->y,
                                                          CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                          &got[GPU_CONV_FWD], fwd),
                op, "cudnnGetConvolutionForwardAlgorithm_v7", "listing the forward algorithms") ||
        gpu_dnn(b, cudnnGetConvolutionBackwardDataAlgorithm_v7(s->dnn, p->w, p->y, p->conv, p->x,
                                                               CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                                               &got[GPU_CONV_BWD_DATA], bwd_data),
                op, "cudnnGetConvolutionBackwardDataAlgorithm_v7",
                "listing the backward-data algorithms") ||
        gpu_dnn(b, cudnnGetConvolutionBackwardFilterAlgorithm_v7(s->dnn, p->x, p->y, p->conv, p->w,
                                                                 CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                                                                 &got[GPU_CONV_BWD_FILTER], bwd_filter),
                op, "cudnnGetConvolutionBackwardFilterAlgorithm_v7",
                "listing the backward-filter algorithms"))
        return -1;
    TO_ALGO_PERF(fwd, got[GPU_CONV_FWD], pf);
    TO_ALGO_PERF(bwd_data, got[GPU_CONV_BWD_DATA], pd);
    TO_ALGO_PERF(bwd_filter, got[GPU_CONV_BWD_FILTER], pw);
    p->ws = 0;
    for (int d = 0; d < GPU_CONV_DIRS; d++) {
        rank_candidates(s, d, perf[d], got[d], limit, &p->dir[d]);
        if (p->dir[d].n == 0)
            return gpu_fail(b, "%s: cuDNN offers no FP32 %s%s algorithm for n=%d c_in=%d %dx%d "
                            "k=%dx%d within %zu bytes of workspace", op,
                            s->deterministic ? "deterministic " : "", dir_name[d], g->n, g->c_in,
                            g->h_in, g->w_in, g->k_h, g->k_w, limit);
        for (int k = 0; k < p->dir[d].n; k++)
            if (p->dir[d].cand[k].ws > p->ws)
                p->ws = p->dir[d].cand[k].ws;
    }
    return 0;
}

static int plan_describe(nn_backend *b, const char *op, gpu_conv_plan *p)
{
    const nn_conv_geom *g = &p->g;
    int n, c, h, w;
    if (gpu_dnn(b, cudnnCreateTensorDescriptor(&p->x), op, "cudnnCreateTensorDescriptor", "describing x") ||
        gpu_dnn(b, cudnnCreateTensorDescriptor(&p->y), op, "cudnnCreateTensorDescriptor", "describing y") ||
        gpu_dnn(b, cudnnCreateFilterDescriptor(&p->w), op, "cudnnCreateFilterDescriptor", "describing w") ||
        gpu_dnn(b, cudnnCreateConvolutionDescriptor(&p->conv), op, "cudnnCreateConvolutionDescriptor",
                "describing the convolution"))
        return -1;
    if (gpu_dnn(b, cudnnSetTensor4dDescriptor(p->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, g->n, g->c_in,
                                              g->h_in, g->w_in),
                op, "cudnnSetTensor4dDescriptor", "describing x (%d, %d, %d, %d)", g->n, g->c_in,
                g->h_in, g->w_in) ||
        gpu_dnn(b, cudnnSetTensor4dDescriptor(p->y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, g->n, g->c_out,
                                              g->h_out, g->w_out),
                op, "cudnnSetTensor4dDescriptor", "describing y (%d, %d, %d, %d)", g->n, g->c_out,
                g->h_out, g->w_out) ||
        gpu_dnn(b, cudnnSetFilter4dDescriptor(p->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, g->c_out,
                                              g->c_in, g->k_h, g->k_w),
                op, "cudnnSetFilter4dDescriptor", "describing w (%d, %d, %d, %d)", g->c_out,
                g->c_in, g->k_h, g->k_w) ||
        gpu_dnn(b, cudnnSetConvolution2dDescriptor(p->conv, g->pad_h, g->pad_w, g->stride_h,
                                                   g->stride_w, 1, 1, CUDNN_CROSS_CORRELATION,
                                                   CUDNN_DATA_FLOAT),
                op, "cudnnSetConvolution2dDescriptor", "describing pad %dx%d stride %dx%d",
                g->pad_h, g->pad_w, g->stride_h, g->stride_w))
        return -1;
    if (gpu_dnn(b, cudnnGetConvolution2dForwardOutputDim(p->conv, p->x, p->w, &n, &c, &h, &w), op,
                "cudnnGetConvolution2dForwardOutputDim", "checking the output size"))
        return -1;
    if (n != g->n || c != g->c_out || h != g->h_out || w != g->w_out)
        return gpu_fail(b, "%s: cuDNN gives an output of (%d, %d, %d, %d), the geometry says "
                        "(%d, %d, %d, %d)", op, n, c, h, w, g->n, g->c_out, g->h_out, g->w_out);
    return 0;
}

/* The slot a new plan takes: a free one, else the least recently used plan
 * that no recording uses (GPU_PLANS_SPARE are never pinned, so there is one). */
static gpu_conv_plan *free_slot(gpu_state *s)
{
    gpu_conv_plan *slot = NULL;
    for (int i = 0; i < GPU_PLANS; i++) {
        gpu_conv_plan *p = &s->plans[i];
        if (!p->used)
            return p;
        if (!p->pinned && (!slot || p->last_use < slot->last_use))
            slot = p;
    }
    return slot;
}

/* While recording, the plans the recording uses are pinned: evicting one and
 * making it again would query cuDNN inside the capture (which cannot be
 * recorded), and cuDNN does not promise that a captured call outlives its
 * descriptors. The pins go with the recording (gpu_plans_unpin). */
static int pin(nn_backend *b, const char *op, gpu_conv_plan *p)
{
    gpu_state *s = gpu_of(b);
    if (!s->capturing || p->pinned)
        return 0;
    if (s->plans_pinned >= GPU_PLANS - GPU_PLANS_SPARE)
        return gpu_fail(b, "%s: a recorded step may use at most %d convolution geometries", op,
                        GPU_PLANS - GPU_PLANS_SPARE);
    p->pinned = 1;
    s->plans_pinned++;
    return 0;
}

/* The plan of g, made when missing (never while recording: a step runs once
 * eagerly first, which makes its plans and tries their algorithms). asked:
 * conv2d_workspace is asking (the caller will allocate what it reports);
 * otherwise every candidate must fit in the largest workspace reported so
 * far. NULL on failure, message set. */
static gpu_conv_plan *plan_for(nn_backend *b, const char *op, const nn_conv_geom *g, int asked)
{
    gpu_state *s = gpu_of(b);
    for (int i = 0; i < GPU_PLANS; i++) {
        gpu_conv_plan *p = &s->plans[i];
        if (p->used && memcmp(&p->g, g, sizeof *g) == 0) {
            p->last_use = ++s->plan_clock;
            return pin(b, op, p) == 0 ? p : NULL;
        }
    }
    if (conv_check(b, op, g) != 0)
        return NULL;
    if (s->capturing) {
        gpu_fail(b, "%s: convolution n=%d c_in=%d %dx%d -> c_out=%d met for the first time while "
                 "recording: run the step once eagerly before recording it", op, g->n, g->c_in,
                 g->h_in, g->w_in, g->c_out);
        return NULL;
    }
    gpu_conv_plan *slot = free_slot(s);
    if (slot->used)
        plan_release(slot);
    slot->g = *g;
    if (plan_describe(b, op, slot) != 0 ||
        plan_algorithms(b, op, slot, asked ? GPU_CONV_WORKSPACE_CAP : s->ws_limit) != 0) {
        plan_release(slot);
        return NULL;
    }
    slot->used = 1;
    slot->last_use = ++s->plan_clock;
    return slot;
}

/* ---- running a direction: the chosen algorithm, or try them all once ----------------- */

/* The buffers of one convolution call. */
typedef struct conv_args {
    const float *x, *w, *dy;
    float *y, *dx, *dw;
    void *ws;
} conv_args;

/* Candidate k of direction d, with its math; cuDNN's status. */
static cudnnStatus_t conv_launch(gpu_state *s, gpu_conv_plan *p, int d, int k, const conv_args *a)
{
    const float one = 1.0f, zero = 0.0f;
    const gpu_conv_algo *c = &p->dir[d].cand[k];
    cudnnStatus_t st = cudnnSetConvolutionMathType(p->conv, c->math);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    if (d == GPU_CONV_FWD)
        return cudnnConvolutionForward(s->dnn, &one, p->x, a->x, p->w, a->w, p->conv,
                                       (cudnnConvolutionFwdAlgo_t)c->algo, a->ws, p->ws, &zero,
                                       p->y, a->y);
    if (d == GPU_CONV_BWD_DATA)
        return cudnnConvolutionBackwardData(s->dnn, &one, p->w, a->w, p->y, a->dy, p->conv,
                                            (cudnnConvolutionBwdDataAlgo_t)c->algo, a->ws, p->ws,
                                            &zero, p->x, a->dx);
    return cudnnConvolutionBackwardFilter(s->dnn, &one, p->x, a->x, p->y, a->dy, p->conv,
                                          (cudnnConvolutionBwdFilterAlgo_t)c->algo, a->ws, p->ws,
                                          &zero, p->w, a->dw);
}

/* The order the first call tries the candidates in: the one remembered or
 * timed fastest first, then the others in rank order. */
static int attempt_order(nn_backend *b, gpu_conv_plan *p, int d, const conv_args *a, int *order)
{
    gpu_state *s = gpu_of(b);
    gpu_conv_dir *dir = &p->dir[d];
    float ms[GPU_ALGO_CANDIDATES];
    int first = gpu_choice_find(s, p, d);
    if (first < 0) {
        void *out = d == GPU_CONV_FWD ? (void *)a->y : d == GPU_CONV_BWD_DATA ? (void *)a->dx
                                                                                : (void *)a->dw;
        int timed = gpu_conv_time(s, p, d, a->x, a->w, a->dy, out, a->ws, ms);
        for (int k = 0; timed > 0 && k < dir->n; k++)
            if (ms[k] >= 0 && (first < 0 || ms[k] < ms[first]))
                first = k;
        if (first >= 0) {
            dir->ms = ms[first];
            dir->trials = timed;
        }
    }
    int n = 0;
    if (first >= 0)
        order[n++] = first;
    for (int k = 0; k < dir->n; k++)
        if (k != first)
            order[n++] = k;
    return n;
}

/* The first call of a direction outside a recording: the candidates in
 * attempt_order, keeping the first that runs (PyTorch's try-all: an
 * algorithm cuDNN lists may still refuse this GPU or these strides). Every
 * candidate writes the whole output (beta 0), so a failed one (or the
 * timing's trials) leaves nothing behind. */
static int conv_try_all(nn_backend *b, const char *op, gpu_conv_plan *p, int d, const conv_args *a)
{
    gpu_state *s = gpu_of(b);
    gpu_conv_dir *dir = &p->dir[d];
    int order[GPU_ALGO_CANDIDATES];
    int n = attempt_order(b, p, d, a, order);
    cudnnStatus_t first = CUDNN_STATUS_SUCCESS;
    for (int i = 0; i < n; i++) {
        int k = order[i];
        int injected = (s->inject & GPU_INJECT_ALGO_ALL) || (i == 0 && (s->inject & GPU_INJECT_ALGO_FIRST));
        cudnnStatus_t st = injected ? CUDNN_STATUS_NOT_SUPPORTED : conv_launch(s, p, d, k, a);
        if (st == CUDNN_STATUS_SUCCESS && cudaPeekAtLastError() == cudaSuccess) {
            dir->chosen = k;
            if (i > 0)
                dir->ms = -1.0f;     /* the timed one did not run: this one is untimed */
            gpu_choice_keep(s, p, d, k);
            return 0;
        }
        cudaGetLastError();
        if (i == 0)
            first = st;
    }
    return gpu_fail(b, "%s: none of cuDNN's %d %s algorithms ran for n=%d c_in=%d %dx%d k=%dx%d (the "
                    "first said %s%s)", op, dir->n, dir_name[d], p->g.n, p->g.c_in, p->g.h_in,
                    p->g.w_in, p->g.k_h, p->g.k_w, cudnnGetErrorString(first),
                    s->inject ? ", NNLAB_GPU_INJECT" : "");
}

/* Direction d with its chosen algorithm; the first time, the try-all. A
 * direction never tried cannot be tried while recording (a failed try would
 * leave its work in the recording). */
static int conv_run(nn_backend *b, const char *op, gpu_conv_plan *p, int d, const conv_args *a)
{
    gpu_state *s = gpu_of(b);
    gpu_conv_dir *dir = &p->dir[d];
    if (dir->chosen < 0) {
        if (s->capturing)
            return gpu_fail(b, "%s: the %s algorithm of n=%d c_in=%d %dx%d has not run yet: run the "
                            "step once eagerly before recording it", op, dir_name[d], p->g.n,
                            p->g.c_in, p->g.h_in, p->g.w_in);
        if (conv_try_all(b, op, p, d, a) != 0)
            return -1;
    } else if (gpu_dnn(b, conv_launch(s, p, d, dir->chosen, a), op, "cudnnConvolution",
                       "the %s pass of n=%d c_in=%d %dx%d with algorithm %d", dir_name[d], p->g.n,
                       p->g.c_in, p->g.h_in, p->g.w_in, dir->cand[dir->chosen].algo)) {
        return -1;
    }
    gpu_count_library(b);
    return 0;
}

/* ---- convolution ----------------------------------------------------------------------- */

int gpu_conv2d_workspace(nn_backend *b, const nn_conv_geom *g, size_t *bytes)
{
    gpu_state *s = gpu_of(b);
    gpu_conv_plan *p = plan_for(b, "conv2d_workspace", g, 1);
    *bytes = 0;
    if (!p)
        return -1;      /* refused before the first step, not hidden as "0 bytes" */
    if (p->ws > s->ws_limit)
        s->ws_limit = p->ws;
    *bytes = p->ws;
    return 0;
}

int gpu_conv2d_forward(nn_backend *b, const nn_conv_geom *g, const float *x, const float *w,
                       const float *bias, float *y, void *ws)
{
    gpu_conv_plan *p = plan_for(b, "conv2d_forward", g, 0);
    if (!p)
        return -1;
    conv_args a = { x, w, NULL, y, NULL, NULL, ws };
    if (conv_run(b, "conv2d_forward", p, GPU_CONV_FWD, &a) != 0)
        return -1;
    return bias ? gpu_bias_planes(b, "conv2d_forward", g->n, g->c_out, (size_t)g->h_out * g->w_out,
                                  bias, y)
                : 0;
}

int gpu_conv2d_backward(nn_backend *b, const nn_conv_geom *g, const float *x, const float *w,
                        const float *dy, float *dx, float *dw, float *dbias, void *ws)
{
    gpu_conv_plan *p = plan_for(b, "conv2d_backward", g, 0);
    if (!p)
        return -1;
    conv_args a = { x, w, dy, NULL, dx, dw, ws };
    if ((dx && conv_run(b, "conv2d_backward", p, GPU_CONV_BWD_DATA, &a) != 0) ||
        (dw && conv_run(b, "conv2d_backward", p, GPU_CONV_BWD_FILTER, &a) != 0))
        return -1;
    return dbias ? gpu_conv_bias_grad(b, "conv2d_backward", g->n, g->c_out,
                                      (size_t)g->h_out * g->w_out, dy, dbias)
                 : 0;
}
