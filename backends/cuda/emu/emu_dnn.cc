/* backends/cuda/emu/emu_dnn.cc - the cuDNN stand-in's handle, descriptors and
 * algorithm queries, written from cuDNN's documentation of its legacy
 * convolution API (the calls themselves are in emu_dnn_run.cc):
 *
 * - a 4-d tensor or filter descriptor holds float data in NCHW or NHWC
 *   layout (other types are not emulated: CUDNN_STATUS_NOT_SUPPORTED), with
 *   at most 2^31 - 1 elements, cuDNN's limit (CUDNN_STATUS_NOT_SUPPORTED);
 * - the output of a convolution is 1 + (in + 2 pad - ((filter - 1) dilation
 *   + 1)) / stride per spatial dimension;
 * - the algorithm queries (_v7) return every algorithm, best first, with its
 *   status, workspace, determinism and math type. The emulation offers, per
 *   direction, one algorithm without workspace and others that need some
 *   (sizes in line with what the algorithm would keep: precomputed offsets,
 *   an unfolded input, per-filter partial sums), marks the non-deterministic
 *   ones as cuDNN does (backward-data algorithm 0, backward-filter 0 and 3:
 *   they add with atomics, and the stand-in adds in a random order), lists
 *   a TF32 tensor-core entry first when the descriptor's math type allows
 *   tensor cores, and reports FFT, fused Winograd and direct algorithms as
 *   not supported. The Winograd non-fused algorithms run, fastest of all
 *   in the find's trials and with their inputs rounded to TF32's 10-bit
 *   mantissa, as cuDNN 9.19's lost FP32 accuracy on an H100 and an H200
 *   whatever the math type (docs/decisions/0112-no-winograd-nonfused-in-fp32.md): the GPU module must not
 *   choose them in FP32. A query is refused during a strict stream capture. */
#include "emu_dnn_ref.h"

#include <limits.h>
#include <string.h>

namespace nn_emu {

namespace {

std::set<const void *> &objects()
{
    static std::set<const void *> *o = new std::set<const void *>;
    return *o;
}

thread_local std::string last_message;

template <typename T> cudnnStatus_t create(T **out)
{
    guard g(lock());
    if (!out)
        return CUDNN_STATUS_BAD_PARAM;
    *out = new T;
    objects().insert(*out);
    return CUDNN_STATUS_SUCCESS;
}

template <typename T> cudnnStatus_t destroy(T *d)
{
    guard g(lock());
    if (!objects().erase(d))
        return CUDNN_STATUS_BAD_PARAM;
    delete d;
    return CUDNN_STATUS_SUCCESS;
}

/* Packed strides of a layout: NCHW, or NHWC (channels innermost). */
tensor4 packed(cudnnTensorFormat_t layout, int n, int c, int h, int w)
{
    tensor4 t = { n, c, h, w, 0, 0, 0, 0 };
    if (layout == CUDNN_TENSOR_NCHW) {
        t.sw = 1;
        t.sh = w;
        t.sc = (long long)h * w;
        t.sn = (long long)c * h * w;
    } else {
        t.sc = 1;
        t.sw = c;
        t.sh = (long long)w * c;
        t.sn = (long long)h * w * c;
    }
    return t;
}

cudnnStatus_t shape_problem(cudnnTensorFormat_t layout, cudnnDataType_t type, int n, int c, int h,
                            int w, const char *fn)
{
    if (layout != CUDNN_TENSOR_NCHW && layout != CUDNN_TENSOR_NHWC)
        return dnn_fail(CUDNN_STATUS_BAD_PARAM, format("%s: unknown layout", fn));
    if (n <= 0 || c <= 0 || h <= 0 || w <= 0)
        return dnn_fail(CUDNN_STATUS_BAD_PARAM, format("%s: dimensions (%d, %d, %d, %d) must be "
                                                       "positive", fn, n, c, h, w));
    if (type != CUDNN_DATA_FLOAT)
        return dnn_fail(CUDNN_STATUS_NOT_SUPPORTED, format("%s: only float data is emulated", fn));
    if ((unsigned long long)n * c * h * w > INT_MAX)
        return dnn_fail(CUDNN_STATUS_NOT_SUPPORTED,
                        format("%s: (%d, %d, %d, %d) is %llu elements, more than cuDNN's limit of "
                               "2^31 - 1", fn, n, c, h, w, (unsigned long long)n * c * h * w));
    return CUDNN_STATUS_SUCCESS;
}

enum { WS_NONE, WS_OFFSETS, WS_UNFOLDED, WS_PARTIALS };

size_t workspace_of(int kind, const conv_shape &s)
{
    size_t taps = (size_t)s.w.c * s.w.h * s.w.w, outputs = (size_t)s.y.h * s.y.w;
    switch (kind) {
    case WS_OFFSETS:     /* an input offset per filter tap */
        return taps * 8;
    case WS_UNFOLDED:    /* one sample's input unfolded (im2col), floats */
        return taps * outputs * 4;
    case WS_PARTIALS:    /* a partial sum per filter element */
        return (size_t)s.w.n * taps * 4;
    default:
        return 0;
    }
}

struct algo_row {
    int algo;
    bool supported, deterministic;
    int workspace;
    bool lossy;
};

/* Best first (cuDNN's heuristics' order, as the emulation ranks them). */
const algo_row fwd_rows[] = {
    { CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, true, true, WS_OFFSETS, false },
    { CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, true, true, WS_NONE, false },
    { CUDNN_CONVOLUTION_FWD_ALGO_GEMM, true, true, WS_UNFOLDED, false },
    { CUDNN_CONVOLUTION_FWD_ALGO_DIRECT, false, true, WS_NONE, false },
    { CUDNN_CONVOLUTION_FWD_ALGO_FFT, false, true, WS_NONE, false },
    { CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING, false, true, WS_NONE, false },
    { CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, false, true, WS_NONE, false },
    { CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, true, true, WS_UNFOLDED, true },
};
const algo_row bwd_data_rows[] = {
    { CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, true, true, WS_UNFOLDED, false },
    { CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, true, false, WS_NONE, false },
    { CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT, false, true, WS_NONE, false },
    { CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING, false, true, WS_NONE, false },
    { CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD, false, true, WS_NONE, false },
    { CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED, true, true, WS_UNFOLDED, true },
};
const algo_row bwd_filter_rows[] = {
    { CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, true, true, WS_UNFOLDED, false },
    { CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, true, false, WS_NONE, false },
    { CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, true, false, WS_PARTIALS, false },
    { CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT, false, true, WS_NONE, false },
    { CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD, false, true, WS_NONE, false },
    { CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED, true, true, WS_UNFOLDED, true },
    { CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING, false, true, WS_NONE, false },
};

template <size_t N> int find_algo(const algo_row (&rows)[N], const conv_shape &s, int algo, algo_info *out)
{
    for (const algo_row &r : rows)
        if (r.algo == algo) {
            *out = algo_info{ r.algo, r.supported, r.deterministic,
                              r.supported ? workspace_of(r.workspace, s) : 0, r.lossy };
            return 0;
        }
    return -1;
}

/* Fills perf (any of the three perf types) from rows, a tensor-core entry
 * first when the math type allows tensor cores. */
template <typename Perf, typename Algo, size_t N>
void fill_perf(const algo_row (&rows)[N], const conv_shape &s, int requested, int *returned, Perf *perf)
{
    bool tensor_cores = s.math != CUDNN_FMA_MATH;
    int n = 0;
    for (int pass = tensor_cores ? 0 : 1; pass < 2; pass++)
        for (size_t i = 0; i < N && n < requested; i++) {
            if (pass == 0 && i > 0)
                break;                   /* the tensor-core variant of the best one */
            Perf p;
            memset(&p, 0, sizeof p);
            p.algo = (Algo)rows[i].algo;
            p.status = rows[i].supported ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_NOT_SUPPORTED;
            p.time = -1.0f;              /* heuristics: not measured */
            p.memory = rows[i].supported ? workspace_of(rows[i].workspace, s) : 0;
            p.determinism = rows[i].deterministic ? CUDNN_DETERMINISTIC : CUDNN_NON_DETERMINISTIC;
            p.mathType = pass == 0 ? CUDNN_TENSOR_OP_MATH : s.math;
            perf[n++] = p;
        }
    *returned = n;
}

template <typename Perf, typename Algo, size_t N>
cudnnStatus_t query(cudnnHandle_t h, const algo_row (&rows)[N], const conv_shape &s, int requested,
                    int *returned, Perf *perf, const char *fn)
{
    if (!dnn_handle_valid(h))
        return dnn_fail(CUDNN_STATUS_BAD_PARAM, format("%s: not a cuDNN handle", fn));
    if (!returned || !perf || requested < 1)
        return dnn_fail(CUDNN_STATUS_BAD_PARAM, format("%s: no room for the answer", fn));
    if (unsafe_during_capture(fn) != cudaSuccess)
        return dnn_fail(CUDNN_STATUS_EXECUTION_FAILED,
                        format("%s during stream capture (the emulation forbids it: a query may "
                               "initialise kernels or allocate)", fn));
    fill_perf<Perf, Algo>(rows, s, requested, returned, perf);
    return CUDNN_STATUS_SUCCESS;
}

} /* namespace */

cudnnStatus_t dnn_fail(cudnnStatus_t st, const std::string &why)
{
    last_message = why;
    diag("cuDNN stand-in: %s: %s", cudnnGetErrorString(st), why.c_str());
    return st;
}

bool dnn_handle_valid(cudnnHandle_t h)
{
    return h && objects().count(h);
}

int fwd_algo(const conv_shape &s, int algo, algo_info *out)
{
    return find_algo(fwd_rows, s, algo, out);
}

int bwd_data_algo(const conv_shape &s, int algo, algo_info *out)
{
    return find_algo(bwd_data_rows, s, algo, out);
}

int bwd_filter_algo(const conv_shape &s, int algo, algo_info *out)
{
    return find_algo(bwd_filter_rows, s, algo, out);
}

cudnnStatus_t tensor_of(cudnnTensorDescriptor_t d, const char *fn, const char *what, tensor4 *out)
{
    if (!d || !objects().count(d) || !d->set)
        return dnn_fail(CUDNN_STATUS_BAD_PARAM, format("%s: %s is not a set tensor descriptor", fn, what));
    *out = d->t;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t conv_shape_of(cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                            cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y,
                            const char *fn, conv_shape *out)
{
    cudnnStatus_t st;
    if ((st = tensor_of(x, fn, "the input", &out->x)) || (st = tensor_of(y, fn, "the output", &out->y)))
        return st;
    if (!w || !objects().count(w) || !w->set || !conv || !objects().count(conv) || !conv->set)
        return dnn_fail(CUDNN_STATUS_BAD_PARAM, format("%s: the filter or convolution descriptor "
                                                       "is not set", fn));
    out->w = w->t;
    out->p = conv->p;
    out->math = conv->math;
    int n, c, h, wo;
    if ((st = cudnnGetConvolution2dForwardOutputDim(conv, x, w, &n, &c, &h, &wo)))
        return st;
    if (n != out->y.n || c != out->y.c || h != out->y.h || wo != out->y.w)
        return dnn_fail(CUDNN_STATUS_BAD_PARAM,
                        format("%s: the output is described as (%d, %d, %d, %d), the convolution "
                               "gives (%d, %d, %d, %d)", fn, out->y.n, out->y.c, out->y.h,
                               out->y.w, n, c, h, wo));
    return CUDNN_STATUS_SUCCESS;
}

} /* namespace nn_emu */

using namespace nn_emu;

size_t cudnnGetVersion(void)
{
    return 90000;          /* the API the stand-in follows: cuDNN 9's legacy convolutions */
}

const char *cudnnGetErrorString(cudnnStatus_t status)
{
    switch (status) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_BAD_PARAM_NULL_POINTER: return "CUDNN_STATUS_BAD_PARAM_NULL_POINTER";
    case CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT: return "CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT";
    case CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH: return "CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_INTERNAL_ERROR: return "CUDNN_STATUS_INTERNAL_ERROR";
    case CUDNN_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
    }
    return "CUDNN_STATUS_UNKNOWN";
}

void cudnnGetLastErrorString(char *message, size_t max_size)
{
    if (!message || !max_size)
        return;
    snprintf(message, max_size, "%s", last_message.c_str());
    last_message.clear();
}

cudnnStatus_t cudnnCreate(cudnnHandle_t *handle)
{
    return create(handle);
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t handle)
{
    return destroy(handle);
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream)
{
    guard g(lock());
    cudaError_t e = cudaSuccess;
    if (!dnn_handle_valid(handle))
        return CUDNN_STATUS_BAD_PARAM;
    if (!stream_of(stream, &e))
        return dnn_fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetStream: not a stream");
    handle->stream = stream;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d) { return create(d); }
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) { return destroy(d); }
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d) { return create(d); }
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) { return destroy(d); }
cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d) { return create(d); }
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) { return destroy(d); }

cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, cudnnTensorFormat_t format,
                                         cudnnDataType_t type, int n, int c, int h, int w)
{
    guard g(lock());
    if (!objects().count(d))
        return CUDNN_STATUS_BAD_PARAM;
    if (cudnnStatus_t st = shape_problem(format, type, n, c, h, w, "cudnnSetTensor4dDescriptor"))
        return st;
    d->type = type;
    d->t = packed(format, n, c, h, w);
    d->set = true;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t type,
                                         cudnnTensorFormat_t format, int k, int c, int h, int w)
{
    guard g(lock());
    if (!objects().count(d))
        return CUDNN_STATUS_BAD_PARAM;
    if (cudnnStatus_t st = shape_problem(format, type, k, c, h, w, "cudnnSetFilter4dDescriptor"))
        return st;
    d->type = type;
    d->t = packed(format, k, c, h, w);      /* KCRS or KRSC */
    d->set = true;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int pad_h, int pad_w,
                                              int u, int v, int dilation_h, int dilation_w,
                                              cudnnConvolutionMode_t mode, cudnnDataType_t compute)
{
    guard g(lock());
    if (!objects().count(d))
        return CUDNN_STATUS_BAD_PARAM;
    if (pad_h < 0 || pad_w < 0 || u <= 0 || v <= 0 || dilation_h <= 0 || dilation_w <= 0 ||
        (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION))
        return dnn_fail(CUDNN_STATUS_BAD_PARAM,
                        format("cudnnSetConvolution2dDescriptor: pad (%d, %d), stride (%d, %d), "
                               "dilation (%d, %d), mode %d", pad_h, pad_w, u, v, dilation_h,
                               dilation_w, (int)mode));
    if (compute != CUDNN_DATA_FLOAT)
        return dnn_fail(CUDNN_STATUS_NOT_SUPPORTED,
                        "cudnnSetConvolution2dDescriptor: only float computation is emulated");
    d->p = conv_params{ pad_h, pad_w, u, v, dilation_h, dilation_w, mode == CUDNN_CROSS_CORRELATION };
    d->compute = compute;
    d->set = true;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t math)
{
    guard g(lock());
    if (!objects().count(d) || (math != CUDNN_DEFAULT_MATH && math != CUDNN_TENSOR_OP_MATH &&
                                math != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION && math != CUDNN_FMA_MATH))
        return CUDNN_STATUS_BAD_PARAM;
    d->math = math;           /* tensor-core math accepted; the stand-in computes in FP32 */
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(cudnnConvolutionDescriptor_t conv,
                                                    cudnnTensorDescriptor_t x,
                                                    cudnnFilterDescriptor_t w, int *n, int *c,
                                                    int *h, int *wo)
{
    guard g(lock());
    const char *fn = "cudnnGetConvolution2dForwardOutputDim";
    tensor4 xt;
    if (cudnnStatus_t st = tensor_of(x, fn, "the input", &xt))
        return st;
    if (!objects().count(conv) || !conv->set || !objects().count(w) || !w->set || !n || !c || !h || !wo)
        return dnn_fail(CUDNN_STATUS_BAD_PARAM, format("%s: a descriptor is not set", fn));
    const conv_params &p = conv->p;
    const tensor4 &f = w->t;
    if (f.c != xt.c)
        return dnn_fail(CUDNN_STATUS_BAD_PARAM, format("%s: the filter has %d input channels, the "
                                                       "input %d", fn, f.c, xt.c));
    int span_h = (f.h - 1) * p.dil_h + 1, span_w = (f.w - 1) * p.dil_w + 1;
    int num_h = xt.h + 2 * p.pad_h - span_h, num_w = xt.w + 2 * p.pad_w - span_w;
    if (num_h < 0 || num_w < 0)
        return dnn_fail(CUDNN_STATUS_BAD_PARAM, format("%s: the filter is larger than the padded "
                                                       "input", fn));
    *n = xt.n;
    *c = f.n;
    *h = 1 + num_h / p.u;
    *wo = 1 + num_w / p.v;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t h, cudnnTensorDescriptor_t x,
                                                     cudnnFilterDescriptor_t w,
                                                     cudnnConvolutionDescriptor_t conv,
                                                     cudnnTensorDescriptor_t y, int requested,
                                                     int *returned, cudnnConvolutionFwdAlgoPerf_t *perf)
{
    guard g(lock());
    const char *fn = "cudnnGetConvolutionForwardAlgorithm_v7";
    conv_shape s;
    if (cudnnStatus_t st = conv_shape_of(x, w, conv, y, fn, &s))
        return st;
    return query<cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgo_t>(h, fwd_rows, s, requested,
                                                                           returned, perf, fn);
}

cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(cudnnHandle_t h, cudnnFilterDescriptor_t w,
                                                          cudnnTensorDescriptor_t dy,
                                                          cudnnConvolutionDescriptor_t conv,
                                                          cudnnTensorDescriptor_t dx, int requested,
                                                          int *returned,
                                                          cudnnConvolutionBwdDataAlgoPerf_t *perf)
{
    guard g(lock());
    const char *fn = "cudnnGetConvolutionBackwardDataAlgorithm_v7";
    conv_shape s;
    if (cudnnStatus_t st = conv_shape_of(dx, w, conv, dy, fn, &s))
        return st;
    return query<cudnnConvolutionBwdDataAlgoPerf_t, cudnnConvolutionBwdDataAlgo_t>(
        h, bwd_data_rows, s, requested, returned, perf, fn);
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnTensorDescriptor_t dy,
    cudnnConvolutionDescriptor_t conv, cudnnFilterDescriptor_t dw, int requested, int *returned,
    cudnnConvolutionBwdFilterAlgoPerf_t *perf)
{
    guard g(lock());
    const char *fn = "cudnnGetConvolutionBackwardFilterAlgorithm_v7";
    conv_shape s;
    if (cudnnStatus_t st = conv_shape_of(x, dw, conv, dy, fn, &s))
        return st;
    return query<cudnnConvolutionBwdFilterAlgoPerf_t, cudnnConvolutionBwdFilterAlgo_t>(
        h, bwd_filter_rows, s, requested, returned, perf, fn);
}

/* The workspace an algorithm needs for a shape (the three getters). */
static cudnnStatus_t workspace_answer(cudnnHandle_t h, int found, const algo_info &info,
                                      size_t *bytes, const char *fn)
{
    if (!dnn_handle_valid(h) || !bytes)
        return dnn_fail(CUDNN_STATUS_BAD_PARAM, format("%s: bad handle or result pointer", fn));
    if (found != 0 || !info.supported)
        return dnn_fail(CUDNN_STATUS_NOT_SUPPORTED, format("%s: algorithm %d is not available "
                                                           "here", fn, info.algo));
    *bytes = info.workspace;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t h, cudnnTensorDescriptor_t x,
                                                      cudnnFilterDescriptor_t w,
                                                      cudnnConvolutionDescriptor_t conv,
                                                      cudnnTensorDescriptor_t y,
                                                      cudnnConvolutionFwdAlgo_t algo, size_t *bytes)
{
    guard g(lock());
    const char *fn = "cudnnGetConvolutionForwardWorkspaceSize";
    conv_shape s;
    algo_info info = { (int)algo, false, false, 0 };
    if (cudnnStatus_t st = conv_shape_of(x, w, conv, y, fn, &s))
        return st;
    return workspace_answer(h, fwd_algo(s, algo, &info), info, bytes, fn);
}

cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(cudnnHandle_t h,
                                                           cudnnFilterDescriptor_t w,
                                                           cudnnTensorDescriptor_t dy,
                                                           cudnnConvolutionDescriptor_t conv,
                                                           cudnnTensorDescriptor_t dx,
                                                           cudnnConvolutionBwdDataAlgo_t algo,
                                                           size_t *bytes)
{
    guard g(lock());
    const char *fn = "cudnnGetConvolutionBackwardDataWorkspaceSize";
    conv_shape s;
    algo_info info = { (int)algo, false, false, 0 };
    if (cudnnStatus_t st = conv_shape_of(dx, w, conv, dy, fn, &s))
        return st;
    return workspace_answer(h, bwd_data_algo(s, algo, &info), info, bytes, fn);
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(cudnnHandle_t h,
                                                             cudnnTensorDescriptor_t x,
                                                             cudnnTensorDescriptor_t dy,
                                                             cudnnConvolutionDescriptor_t conv,
                                                             cudnnFilterDescriptor_t dw,
                                                             cudnnConvolutionBwdFilterAlgo_t algo,
                                                             size_t *bytes)
{
    guard g(lock());
    const char *fn = "cudnnGetConvolutionBackwardFilterWorkspaceSize";
    conv_shape s;
    algo_info info = { (int)algo, false, false, 0 };
    if (cudnnStatus_t st = conv_shape_of(x, dw, conv, dy, fn, &s))
        return st;
    return workspace_answer(h, bwd_filter_algo(s, algo, &info), info, bytes, fn);
}
