/* tests/test_emu_dnn.cc - test_emu's cases of the cuDNN stand-in
 * (backends/cuda/emu/emu_dnn*.cc): the convolution's arithmetic and checks,
 * the algorithm queries, and the find functions' simulated timings. */
#include "emu/cuda_emu.h"
#include "test_emu.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern "C" {
#include <cmocka.h>
}

namespace nn_emu {
unsigned long find_trials();     /* emu_dnn_ref.h */
}

/* ---- cuDNN ------------------------------------------------------------------------------------ */

struct dnn_fixture {
    cudnnHandle_t h;
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
};

/* x (1, 1, 3, 3), w (1, 1, 2, 2), pad 1, stride 2: y (1, 1, 2, 2). */
static void dnn_setup(dnn_fixture *f, cudnnConvolutionMode_t mode)
{
    assert_int_equal(cudnnCreate(&f->h), CUDNN_STATUS_SUCCESS);
    cudnnCreateTensorDescriptor(&f->x);
    cudnnCreateTensorDescriptor(&f->y);
    cudnnCreateFilterDescriptor(&f->w);
    cudnnCreateConvolutionDescriptor(&f->conv);
    assert_int_equal(cudnnSetTensor4dDescriptor(f->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 3, 3), 0);
    assert_int_equal(cudnnSetTensor4dDescriptor(f->y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 2, 2), 0);
    assert_int_equal(cudnnSetFilter4dDescriptor(f->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 1, 1, 2, 2), 0);
    assert_int_equal(cudnnSetConvolution2dDescriptor(f->conv, 1, 1, 2, 2, 1, 1, mode, CUDNN_DATA_FLOAT), 0);
}

static void dnn_teardown(dnn_fixture *f)
{
    cudnnDestroyTensorDescriptor(f->x);
    cudnnDestroyTensorDescriptor(f->y);
    cudnnDestroyFilterDescriptor(f->w);
    cudnnDestroyConvolutionDescriptor(f->conv);
    cudnnDestroy(f->h);
}

void test_conv_forward(void **state)
{
    (void)state;
    const float x[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 }, w[4] = { 1, 10, 100, 1000 }, one = 1, zero = 0;
    /* padded x: row -1 and column -1 are 0; output (i, j) covers rows 2i-1..2i, columns 2j-1..2j */
    const float cross[4] = { 1000 * 1, 100 * 2 + 1000 * 3, 10 * 4 + 1000 * 7, 1 * 5 + 10 * 6 + 100 * 8 + 1000 * 9 };
    const float flipped[4] = { 1 * 1, 10 * 2 + 1 * 3, 100 * 4 + 1 * 7, 1000 * 5 + 100 * 6 + 10 * 8 + 1 * 9 };
    for (int m = 0; m < 2; m++) {
        dnn_fixture f;
        dnn_setup(&f, m ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION);
        float *dx = device_floats(9), *dw = device_floats(4), *dy = device_floats(4), y[4];
        cudaMemcpyAsync(dx, x, sizeof x, cudaMemcpyHostToDevice, 0);
        cudaMemcpyAsync(dw, w, sizeof w, cudaMemcpyHostToDevice, 0);
        assert_int_equal(cudnnConvolutionForward(f.h, &one, f.x, dx, f.w, dw, f.conv,
                                                 CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0,
                                                 &zero, f.y, dy), CUDNN_STATUS_SUCCESS);
        cudaMemcpyAsync(y, dy, sizeof y, cudaMemcpyDeviceToHost, 0);
        assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
        assert_memory_equal(y, m ? flipped : cross, sizeof y);
        /* an algorithm that needs workspace, given too little */
        assert_int_equal(cudnnConvolutionForward(f.h, &one, f.x, dx, f.w, dw, f.conv,
                                                 CUDNN_CONVOLUTION_FWD_ALGO_GEMM, NULL, 0, &zero,
                                                 f.y, dy), CUDNN_STATUS_BAD_PARAM);
        assert_int_equal(cudnnConvolutionForward(f.h, &one, f.x, dx, f.w, dw, f.conv,
                                                 CUDNN_CONVOLUTION_FWD_ALGO_FFT, NULL, 0, &zero,
                                                 f.y, dy), CUDNN_STATUS_NOT_SUPPORTED);
        /* in place */
        assert_int_equal(cudnnConvolutionForward(f.h, &one, f.x, dx, f.w, dw, f.conv,
                                                 CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0,
                                                 &zero, f.y, dx), CUDNN_STATUS_BAD_PARAM);
        dnn_teardown(&f);
        cudaFree(dx);
        cudaFree(dw);
        cudaFree(dy);
    }
}

void test_conv_algorithms(void **state)
{
    (void)state;
    dnn_fixture f;
    dnn_setup(&f, CUDNN_CROSS_CORRELATION);
    cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int got = 0, zero_ws = 0, with_ws = 0, nondet = 0;
    assert_int_equal(cudnnSetConvolutionMathType(f.conv, CUDNN_FMA_MATH), 0);
    assert_int_equal(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                         f.h, f.x, f.y, f.conv, f.w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &got, perf), 0);
    for (int i = 0; i < got; i++)
        if (perf[i].status == CUDNN_STATUS_SUCCESS) {
            zero_ws += perf[i].memory == 0;
            with_ws += perf[i].memory > 0;
            nondet += perf[i].determinism == CUDNN_NON_DETERMINISTIC;
            assert_int_equal(perf[i].mathType, CUDNN_FMA_MATH);
            size_t bytes = 0;
            assert_int_equal(cudnnGetConvolutionBackwardFilterWorkspaceSize(f.h, f.x, f.y, f.conv, f.w,
                                                                            perf[i].algo, &bytes), 0);
            assert_int_equal(bytes, perf[i].memory);
        }
    assert_true(zero_ws >= 1 && with_ws >= 1 && nondet >= 1);
    /* a query during a strict capture spoils it */
    cudaStream_t s = new_stream();
    cudaGraph_t g = NULL;
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    assert_int_not_equal(cudnnGetConvolutionBackwardFilterAlgorithm_v7(f.h, f.x, f.y, f.conv, f.w, 1, &got,
                                                                       perf), 0);
    assert_int_equal(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
    cudaStreamDestroy(s);
    /* cuDNN's limit of 2^31 - 1 elements */
    assert_int_equal(cudnnSetTensor4dDescriptor(f.x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 700000, 3, 32, 32),
                     CUDNN_STATUS_NOT_SUPPORTED);
    dnn_teardown(&f);
}


/* cudnnFindConvolutionForwardAlgorithmEx: every algorithm within the
 * workspace timed (simulated, the same times each call), fastest first; one
 * needing more workspace listed as refused; the output left NaN; each timed
 * algorithm counted; refused during a capture. */
void test_conv_find(void **state)
{
    (void)state;
    dnn_fixture f;
    dnn_setup(&f, CUDNN_CROSS_CORRELATION);
    float *x = device_floats(9), *w = device_floats(4), *y = device_floats(4), *ws = device_floats(1024);
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT], again[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int got = 0, got2 = 0;
    assert_int_equal(cudnnSetConvolutionMathType(f.conv, CUDNN_FMA_MATH), 0);
    unsigned long before = nn_emu::find_trials();
    assert_int_equal(cudnnFindConvolutionForwardAlgorithmEx(f.h, f.x, x, f.w, w, f.conv, f.y, y,
                                                            CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got,
                                                            perf, NULL, 0), 0);
    assert_int_equal(perf[0].status, CUDNN_STATUS_SUCCESS);
    assert_int_equal(perf[0].algo, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM);   /* no workspace */
    assert_int_equal(perf[1].status, CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT);
    assert_int_equal(nn_emu::find_trials() - before, 1);
    assert_int_equal(cudnnFindConvolutionForwardAlgorithmEx(f.h, f.x, x, f.w, w, f.conv, f.y, y,
                                                            CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got,
                                                            perf, ws, 4096), 0);
    assert_int_equal(cudnnFindConvolutionForwardAlgorithmEx(f.h, f.x, x, f.w, w, f.conv, f.y, y,
                                                            CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got2,
                                                            again, ws, 4096), 0);
    assert_int_equal(got, got2);
    int ran = 0;
    for (int i = 0; i < got; i++) {
        assert_int_equal(perf[i].algo, again[i].algo);
        assert_true(perf[i].time == again[i].time);
        if (perf[i].status == CUDNN_STATUS_SUCCESS) {
            ran++;
            assert_true(perf[i].time > 0);
            assert_true(i == 0 || perf[i].time >= perf[i - 1].time);
        }
    }
    assert_int_equal(ran, 4);      /* IMPLICIT_GEMM, PRECOMP, GEMM, WINOGRAD_NONFUSED */
    float back[4];
    assert_int_equal(cudaMemcpyAsync(back, y, sizeof back, cudaMemcpyDeviceToHost, 0), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
    for (int i = 0; i < 4; i++)
        assert_true(isnan(back[i]));
    cudaStream_t s = new_stream();
    cudaGraph_t g = NULL;
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    assert_int_not_equal(cudnnFindConvolutionForwardAlgorithmEx(f.h, f.x, x, f.w, w, f.conv, f.y, y,
                                                                1, &got, perf, ws, 4096), 0);
    assert_int_equal(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
    cudaStreamDestroy(s);
    dnn_teardown(&f);
    cudaFree(x);
    cudaFree(w);
    cudaFree(y);
    cudaFree(ws);
}
