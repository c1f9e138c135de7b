/* backends/cuda/emu/emu_dnn_ref.h - what the cuDNN stand-in's files share:
 * the objects behind its handles, the convolution's shape and algorithms
 * (emu_dnn.cc), and the arithmetic (emu_dnn_conv.cc) on plain shapes, which
 * emu_dnn_run.cc calls once a call's descriptors, buffers and workspace
 * have passed its checks. */
#ifndef NNLAB_EMU_DNN_REF_H
#define NNLAB_EMU_DNN_REF_H

#include "emu_internal.h"

namespace nn_emu {

/* A 4-d tensor (or a filter: n = output channels, c = input channels, h x w
 * the kernel), strides in elements. */
struct tensor4 {
    int n, c, h, w;
    long long sn, sc, sh, sw;
    /* Elements from the first to the last one, inclusive. */
    size_t span() const
    {
        return (size_t)(1 + (n - 1) * sn + (c - 1) * sc + (h - 1) * sh + (w - 1) * sw);
    }
    size_t index(int in, int ic, int ih, int iw) const
    {
        return (size_t)(in * sn + ic * sc + ih * sh + iw * sw);
    }
};

struct conv_params {
    int pad_h, pad_w, u, v, dil_h, dil_w;   /* u, v: the strides */
    bool cross;                             /* cross-correlation, else the flipped filter */
};

} /* namespace nn_emu */

/* The objects behind the stand-in's handles. */
struct nn_emu_dnn {
    cudaStream_t stream = nullptr;     /* the legacy stream until cudnnSetStream */
    std::set<std::string> used;        /* routines run (NNLAB_EMU_LAZY_INIT) */
};

struct nn_emu_tensor_desc {
    bool set = false;
    cudnnDataType_t type = CUDNN_DATA_FLOAT;
    nn_emu::tensor4 t = {};
};

struct nn_emu_filter_desc {
    bool set = false;
    cudnnDataType_t type = CUDNN_DATA_FLOAT;
    nn_emu::tensor4 t = {};
};

struct nn_emu_conv_desc {
    bool set = false;
    nn_emu::conv_params p = {};
    cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};

namespace nn_emu {

/* The shapes of one convolution, checked: x (n, c, h, w) by w (k, c, r, s)
 * gives y (n, k, ho, wo). */
struct conv_shape {
    tensor4 x, w, y;
    conv_params p;
    cudnnMathType_t math;
};

/* What an algorithm needs, in the emulation (emu_dnn.cc). */
struct algo_info {
    int algo;
    bool supported, deterministic;
    size_t workspace;            /* bytes, for the shape asked about */
    bool lossy = false;          /* below FP32's accuracy whatever the math type (Winograd
                                    non-fused, as cuDNN 9.19 on Hopper): inputs rounded to TF32 */
};
int fwd_algo(const conv_shape &s, int algo, algo_info *out);
int bwd_data_algo(const conv_shape &s, int algo, algo_info *out);
int bwd_filter_algo(const conv_shape &s, int algo, algo_info *out);

/* Algorithms the find functions timed since the process began
 * (emu_dnn_find.cc): what a test counts to see that a choice was reused. */
unsigned long find_trials();

/* Keeps why for cudnnGetLastErrorString, prints it, returns st. */
cudnnStatus_t dnn_fail(cudnnStatus_t st, const std::string &why);
bool dnn_handle_valid(cudnnHandle_t h);
/* The checked shape of x * w -> y under conv, or a failure status. */
cudnnStatus_t conv_shape_of(cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                            cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y,
                            const char *fn, conv_shape *out);
/* A set 4-d float tensor descriptor's shape, or a failure status. */
cudnnStatus_t tensor_of(cudnnTensorDescriptor_t d, const char *fn, const char *what, tensor4 *out);

/* Each computes out = alpha * result + beta * out, with out not read when
 * beta is 0 (cuDNN's rule for its scaling parameters). An order, when
 * given, is the order of one sum (a non-deterministic algorithm's). */
void conv_forward(const conv_params &p, const tensor4 &xd, const float *x, const tensor4 &wd,
                  const float *w, const tensor4 &yd, float *y, float alpha, float beta);
void conv_backward_data(const conv_params &p, const tensor4 &wd, const float *w, const tensor4 &dyd,
                        const float *dy, const tensor4 &dxd, float *dx, float alpha, float beta,
                        const permutation *k_order);
void conv_backward_filter(const conv_params &p, const tensor4 &xd, const float *x,
                          const tensor4 &dyd, const float *dy, const tensor4 &dwd, float *dw,
                          float alpha, float beta, const permutation *n_order);
void conv_backward_bias(const tensor4 &dyd, const float *dy, const tensor4 &dbd, float *db,
                        float alpha, float beta);
/* c = alpha * a + beta * c, a broadcast along its dimensions of size 1. */
void add_tensor(const tensor4 &ad, const float *a, const tensor4 &cd, float *c, float alpha,
                float beta);

} /* namespace nn_emu */

#endif
