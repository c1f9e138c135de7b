/* backends/cuda/emu/emu_dnn_find.cc - the cuDNN stand-in's find functions
 * (cudnnFindConvolution*AlgorithmEx), written from cuDNN's documentation:
 * every algorithm is tried on the buffers given, within the workspace
 * given, and the answer lists them fastest first, each with its status
 * (one needing more workspace than given: BAD_PARAM_SIZE_INSUFFICIENT),
 * its time in ms, workspace, determinism and math type. The output buffer's
 * contents are undefined afterwards: the stand-in leaves NaN there, so that
 * a caller who forgets to run its choice sees it. Refused during a stream
 * capture, as the queries are.
 *
 * The times are simulated, deterministic and of different costs, so that
 * the GPU module's choice can be tested without a GPU: the convolution's
 * multiply-adds times a factor per algorithm, in the spirit of a real GPU
 * (the non-deterministic filter gradient, cuDNN's wgrad_alg0, fastest; the
 * implicit GEMM forward without workspace faster than the heuristics' first
 * choice). find_trials() counts the algorithms timed. */
#include "emu_dnn_ref.h"

#include <algorithm>
#include <atomic>
#include <string.h>
#include <vector>

namespace nn_emu {

namespace {

std::atomic<unsigned long> trials_done(0);

/* ms per 10^9 multiply-adds; 0: the emulation does not run it. */
double speed_factor(int dir, int algo)
{
    /* IMPLICIT_GEMM, PRECOMP, GEMM, ..., WINOGRAD_NONFUSED (7) */
    static const double fwd[] = { 0.5, 1.0, 2.0, 0, 0, 0, 0, 0.3 };
    /* ALGO_0, ALGO_1, ..., WINOGRAD_NONFUSED (5) */
    static const double data[] = { 0.4, 1.0, 0, 0, 0, 0.3 };
    /* ALGO_0, ALGO_1, FFT, ALGO_3, WINOGRAD, WINOGRAD_NONFUSED (5) */
    static const double filter[] = { 0.2, 1.5, 0, 0.6, 0, 0.15 };
    const double *t[] = { fwd, data, filter };
    const int n[] = { 8, 6, 6 };
    return algo >= 0 && algo < n[dir] ? t[dir][algo] : 0.0;
}

double macs_of(const conv_shape &s)
{
    return (double)s.y.n * s.y.c * s.y.h * s.y.w * (double)s.w.c * s.w.h * s.w.w;
}

typedef int (*algo_fn)(const conv_shape &, int, algo_info *);

template <typename Perf, typename Algo>
cudnnStatus_t find(cudnnHandle_t h, int dir, algo_fn info_of, int count, const conv_shape &s,
                   void *out, size_t out_bytes, size_t ws_bytes, int requested, int *returned,
                   Perf *perf, const char *fn)
{
    if (!dnn_handle_valid(h))
        return dnn_fail(CUDNN_STATUS_BAD_PARAM, format("%s: not a cuDNN handle", fn));
    if (!returned || !perf || requested < 1)
        return dnn_fail(CUDNN_STATUS_BAD_PARAM, format("%s: no room for the answer", fn));
    if (unsafe_during_capture(fn) != cudaSuccess)
        return dnn_fail(CUDNN_STATUS_EXECUTION_FAILED,
                        format("%s during stream capture (it runs and times every algorithm)", fn));
    std::vector<Perf> all;
    for (int a = 0; a < count; a++) {
        algo_info info = { a, false, false, 0 };
        Perf p;
        memset(&p, 0, sizeof p);
        p.algo = (Algo)a;
        p.time = -1.0f;
        p.mathType = s.math;
        p.status = CUDNN_STATUS_NOT_SUPPORTED;
        if (info_of(s, a, &info) == 0 && info.supported && speed_factor(dir, a) > 0) {
            p.memory = info.workspace;
            p.determinism = info.deterministic ? CUDNN_DETERMINISTIC : CUDNN_NON_DETERMINISTIC;
            p.status = info.workspace > ws_bytes ? CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT : CUDNN_STATUS_SUCCESS;
        }
        if (p.status == CUDNN_STATUS_SUCCESS) {
            p.time = (float)(0.001 + macs_of(s) * 1e-9 * speed_factor(dir, a));
            trials_done++;
        }
        all.push_back(p);
    }
    std::stable_sort(all.begin(), all.end(), [](const Perf &a, const Perf &b) {
        bool ra = a.status == CUDNN_STATUS_SUCCESS, rb = b.status == CUDNN_STATUS_SUCCESS;
        return ra != rb ? ra : (ra && a.time < b.time);
    });
    int n = std::min<int>(requested, (int)all.size());
    std::copy(all.begin(), all.begin() + n, perf);
    *returned = n;
    /* undefined afterwards: NaN (all bits set), in stream order */
    if (cudaMemsetAsync(out, 0xff, out_bytes, h->stream) != cudaSuccess)
        return dnn_fail(CUDNN_STATUS_EXECUTION_FAILED, format("%s: the output is not device "
                                                              "memory of that size", fn));
    return CUDNN_STATUS_SUCCESS;
}

} /* namespace */

unsigned long find_trials()
{
    return trials_done.load();
}

} /* namespace nn_emu */

using namespace nn_emu;

cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(
    cudnnHandle_t h, cudnnTensorDescriptor_t xd, const void *x, cudnnFilterDescriptor_t wd,
    const void *w, cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t yd, void *y,
    int requested, int *returned, cudnnConvolutionFwdAlgoPerf_t *perf, void *ws, size_t ws_bytes)
{
    guard g(lock());
    const char *fn = "cudnnFindConvolutionForwardAlgorithmEx";
    conv_shape s;
    (void)x;
    (void)w;
    (void)ws;
    if (cudnnStatus_t st = conv_shape_of(xd, wd, conv, yd, fn, &s))
        return st;
    return find<cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgo_t>(
        h, 0, fwd_algo, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, s, y, s.y.span() * 4, ws_bytes, requested,
        returned, perf, fn);
}

cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithmEx(
    cudnnHandle_t h, cudnnFilterDescriptor_t wd, const void *w, cudnnTensorDescriptor_t dyd,
    const void *dy, cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t dxd, void *dx,
    int requested, int *returned, cudnnConvolutionBwdDataAlgoPerf_t *perf, void *ws,
    size_t ws_bytes)
{
    guard g(lock());
    const char *fn = "cudnnFindConvolutionBackwardDataAlgorithmEx";
    conv_shape s;
    (void)w;
    (void)dy;
    (void)ws;
    if (cudnnStatus_t st = conv_shape_of(dxd, wd, conv, dyd, fn, &s))
        return st;
    return find<cudnnConvolutionBwdDataAlgoPerf_t, cudnnConvolutionBwdDataAlgo_t>(
        h, 1, bwd_data_algo, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, s, dx, s.x.span() * 4, ws_bytes,
        requested, returned, perf, fn);
}

cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithmEx(
    cudnnHandle_t h, cudnnTensorDescriptor_t xd, const void *x, cudnnTensorDescriptor_t dyd,
    const void *dy, cudnnConvolutionDescriptor_t conv, cudnnFilterDescriptor_t dwd, void *dw,
    int requested, int *returned, cudnnConvolutionBwdFilterAlgoPerf_t *perf, void *ws,
    size_t ws_bytes)
{
    guard g(lock());
    const char *fn = "cudnnFindConvolutionBackwardFilterAlgorithmEx";
    conv_shape s;
    (void)x;
    (void)dy;
    (void)ws;
    if (cudnnStatus_t st = conv_shape_of(xd, dwd, conv, dyd, fn, &s))
        return st;
    return find<cudnnConvolutionBwdFilterAlgoPerf_t, cudnnConvolutionBwdFilterAlgo_t>(
        h, 2, bwd_filter_algo, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, s, dw, s.w.span() * 4,
        ws_bytes, requested, returned, perf, fn);
}
