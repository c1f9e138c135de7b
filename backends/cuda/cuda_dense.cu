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
 * Convolution: one plan per geometry (descriptors and the three algorithms),
 * made the first time the geometry is seen and kept (GPU_PLANS of them, the
 * least recently used evicted). The engine asks conv2d_workspace for each
 * layer at the job's largest batch before the first step, so those plans are
 * made then, may use up to GPU_CONV_WORKSPACE_CAP, and the engine allocates
 * the largest once. A geometry first met in a call (a partial last batch)
 * gets algorithms that fit in the largest workspace reported so far.
 * Among cuDNN's heuristic choices, deterministic algorithms come first, so
 * that a run repeats bit for bit; with TF32 off, only FMA math (plain FP32). */
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
    if (p->bias)
        cudnnDestroyTensorDescriptor(p->bias);
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

/* The first candidate (cuDNN's order: fastest expected first) that succeeded,
 * fits in limit and may run, preferring deterministic ones and FMA math.
 * Returns its index or -1. The three perf structs differ only in type, so a
 * macro picks from any of them. */
#define PICK_ALGO(s, perf, got, limit, out_index)                                           \
    do {                                                                                    \
        (out_index) = -1;                                                                   \
        for (int pass_ = 0; pass_ < 4 && (out_index) < 0; pass_++)                          \
            for (int i_ = 0; i_ < (got) && (out_index) < 0; i_++) {                         \
                int rank_ = math_rank((s), (perf)[i_].mathType);                            \
                if ((perf)[i_].status != CUDNN_STATUS_SUCCESS || (perf)[i_].memory > (limit) || \
                    rank_ < 0 || rank_ != (pass_ & 1) ||                                     \
                    (pass_ < 2 && (perf)[i_].determinism != CUDNN_DETERMINISTIC))            \
                    continue;                                                               \
                (out_index) = i_;                                                           \
            }                                                                               \
    } while (0)

static cudnnMathType_t run_math(const gpu_state *s, cudnnMathType_t chosen)
{
    return s->tf32 ? chosen : CUDNN_FMA_MATH;
}

static int plan_algorithms(nn_backend *b, const char *op, gpu_conv_plan *p, size_t limit)
{
    gpu_state *s = gpu_of(b);
    cudnnConvolutionFwdAlgoPerf_t fwd[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    cudnnConvolutionBwdDataAlgoPerf_t bwd_data[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    cudnnConvolutionBwdFilterAlgoPerf_t bwd_filter[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int got = 0, k;
    const nn_conv_geom *g = &p->g;

    if (gpu_dnn(b, cudnnSetConvolutionMathType(p->conv, s->tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH),
                op, "cudnnSetConvolutionMathType", "choosing the math of a convolution"))
        return -1;

    if (gpu_dnn(b, cudnnGetConvolutionForwardAlgorithm_v7(s->dnn, p->x, p->w, p->conv, p->y,
                                                          CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, fwd),
                op, "cudnnGetConvolutionForwardAlgorithm_v7", "choosing the forward algorithm"))
        return -1;
    PICK_ALGO(s, fwd, got, limit, k);
    if (k < 0)
        return gpu_fail(b, "%s: cuDNN offers no FP32 forward algorithm for n=%d c_in=%d %dx%d "
                        "k=%dx%d within %zu bytes of workspace", op, g->n, g->c_in, g->h_in,
                        g->w_in, g->k_h, g->k_w, limit);
    p->fwd = fwd[k].algo;
    p->fwd_math = run_math(s, fwd[k].mathType);
    p->ws = fwd[k].memory;

    if (gpu_dnn(b, cudnnGetConvolutionBackwardDataAlgorithm_v7(s->dnn, p->w, p->y, p->conv, p->x,
                                                               CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                                               &got, bwd_data),
                op, "cudnnGetConvolutionBackwardDataAlgorithm_v7", "choosing the backward-data algorithm"))
        return -1;
    PICK_ALGO(s, bwd_data, got, limit, k);
    if (k < 0)
        return gpu_fail(b, "%s: cuDNN offers no FP32 backward-data algorithm within %zu bytes of "
                        "workspace", op, limit);
    p->bwd_data = bwd_data[k].algo;
    p->bwd_data_math = run_math(s, bwd_data[k].mathType);
    if (bwd_data[k].memory > p->ws)
        p->ws = bwd_data[k].memory;

    if (gpu_dnn(b, cudnnGetConvolutionBackwardFilterAlgorithm_v7(s->dnn, p->x, p->y, p->conv, p->w,
                                                                 CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                                                                 &got, bwd_filter),
                op, "cudnnGetConvolutionBackwardFilterAlgorithm_v7",
                "choosing the backward-filter algorithm"))
        return -1;
    PICK_ALGO(s, bwd_filter, got, limit, k);
    if (k < 0)
        return gpu_fail(b, "%s: cuDNN offers no FP32 backward-filter algorithm within %zu bytes of "
                        "workspace", op, limit);
    p->bwd_filter = bwd_filter[k].algo;
    p->bwd_filter_math = run_math(s, bwd_filter[k].mathType);
    if (bwd_filter[k].memory > p->ws)
        p->ws = bwd_filter[k].memory;
    return 0;
}

static int plan_describe(nn_backend *b, const char *op, gpu_conv_plan *p)
{
    const nn_conv_geom *g = &p->g;
    int n, c, h, w;
    if (gpu_dnn(b, cudnnCreateTensorDescriptor(&p->x), op, "cudnnCreateTensorDescriptor", "describing x") ||
        gpu_dnn(b, cudnnCreateTensorDescriptor(&p->y), op, "cudnnCreateTensorDescriptor", "describing y") ||
        gpu_dnn(b, cudnnCreateTensorDescriptor(&p->bias), op, "cudnnCreateTensorDescriptor", "describing the bias") ||
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
        gpu_dnn(b, cudnnSetTensor4dDescriptor(p->bias, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, g->c_out,
                                              1, 1),
                op, "cudnnSetTensor4dDescriptor", "describing the bias (%d)", g->c_out) ||
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

/* The plan of g, made when missing. asked: conv2d_workspace is asking (the
 * caller will allocate what it reports); otherwise the algorithms must fit in
 * the largest workspace reported so far. NULL on failure, message set. */
static gpu_conv_plan *plan_for(nn_backend *b, const char *op, const nn_conv_geom *g, int asked)
{
    gpu_state *s = gpu_of(b);
    gpu_conv_plan *slot = NULL;
    for (int i = 0; i < GPU_PLANS; i++) {
        gpu_conv_plan *p = &s->plans[i];
        if (p->used && memcmp(&p->g, g, sizeof *g) == 0) {
            p->last_use = ++s->plan_clock;
            return p;
        }
        if (!slot || (slot->used && (!p->used || p->last_use < slot->last_use)))
            slot = p;
    }
    if (conv_check(b, op, g) != 0)
        return NULL;
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
    gpu_state *s = gpu_of(b);
    const float one = 1.0f, zero = 0.0f;
    gpu_conv_plan *p = plan_for(b, "conv2d_forward", g, 0);
    if (!p)
        return -1;
    if (gpu_dnn(b, cudnnSetConvolutionMathType(p->conv, p->fwd_math), "conv2d_forward",
                "cudnnSetConvolutionMathType", "setting the forward math") ||
        gpu_dnn(b, cudnnConvolutionForward(s->dnn, &one, p->x, x, p->w, w, p->conv, p->fwd, ws,
                                           p->ws, &zero, p->y, y),
                "conv2d_forward", "cudnnConvolutionForward",
                "computing y (%d, %d, %d, %d) with algorithm %d", g->n, g->c_out, g->h_out,
                g->w_out, (int)p->fwd))
        return -1;
    gpu_count_library(b);
    if (!bias)
        return 0;
    if (gpu_dnn(b, cudnnAddTensor(s->dnn, &one, p->bias, bias, &one, p->y, y), "conv2d_forward",
                "cudnnAddTensor", "adding the bias (%d)", g->c_out))
        return -1;
    gpu_count_library(b);
    return 0;
}

int gpu_conv2d_backward(nn_backend *b, const nn_conv_geom *g, const float *x, const float *w,
                        const float *dy, float *dx, float *dw, float *dbias, void *ws)
{
    gpu_state *s = gpu_of(b);
    const float one = 1.0f, zero = 0.0f;
    gpu_conv_plan *p = plan_for(b, "conv2d_backward", g, 0);
    if (!p)
        return -1;
    if (dx) {
        if (gpu_dnn(b, cudnnSetConvolutionMathType(p->conv, p->bwd_data_math), "conv2d_backward",
                    "cudnnSetConvolutionMathType", "setting the backward-data math") ||
            gpu_dnn(b, cudnnConvolutionBackwardData(s->dnn, &one, p->w, w, p->y, dy, p->conv,
                                                    p->bwd_data, ws, p->ws, &zero, p->x, dx),
                    "conv2d_backward", "cudnnConvolutionBackwardData",
                    "computing dx (%d, %d, %d, %d) with algorithm %d", g->n, g->c_in, g->h_in,
                    g->w_in, (int)p->bwd_data))
            return -1;
        gpu_count_library(b);
    }
    if (dw) {
        if (gpu_dnn(b, cudnnSetConvolutionMathType(p->conv, p->bwd_filter_math), "conv2d_backward",
                    "cudnnSetConvolutionMathType", "setting the backward-filter math") ||
            gpu_dnn(b, cudnnConvolutionBackwardFilter(s->dnn, &one, p->x, x, p->y, dy, p->conv,
                                                      p->bwd_filter, ws, p->ws, &zero, p->w, dw),
                    "conv2d_backward", "cudnnConvolutionBackwardFilter",
                    "computing dw (%d, %d, %d, %d) with algorithm %d", g->c_out, g->c_in, g->k_h,
                    g->k_w, (int)p->bwd_filter))
            return -1;
        gpu_count_library(b);
    }
    if (dbias) {
        if (gpu_dnn(b, cudnnConvolutionBackwardBias(s->dnn, &one, p->y, dy, &zero, p->bias, dbias),
                    "conv2d_backward", "cudnnConvolutionBackwardBias", "computing dbias (%d)",
                    g->c_out))
            return -1;
        gpu_count_library(b);
    }
    return 0;
}
