/* backends/cuda/emu/emu_dnn_run.cc - the cuDNN stand-in's calls that compute:
 * the convolution forward and its three backward functions, and AddTensor,
 * checked as cuDNN documents them and as a GPU would fault:
 *
 * - descriptors set, float, and the output's shape the one the convolution
 *   gives (CUDNN_STATUS_BAD_PARAM otherwise); the bias gradient 1 x K x 1 x 1
 *   for dy's K channels; AddTensor's A of C's size or 1 along each dimension;
 * - the algorithm one the queries list as supported (else
 *   CUDNN_STATUS_NOT_SUPPORTED), and a workspace of at least what it needs
 *   (CUDNN_STATUS_BAD_PARAM), whose pointer and the size given lie in one
 *   device allocation;
 * - alpha and beta read from host memory at the call; the output not read
 *   when beta is 0; no output overlapping an input or the workspace (in
 *   place is not supported by these functions);
 * - every buffer, as far as its descriptor's strides reach, inside one
 *   allocation of the emulated device: checked at the call (a fault, as an
 *   illegal address on a GPU) and again when it runs.
 * The work is queued on the handle's stream (or recorded while it
 * captures) and runs in stream order; it overwrites the workspace it needs,
 * as a real algorithm's scratch use would. */
#include "emu_dnn_ref.h"

#include <stdint.h>
#include <string.h>

#include <vector>

namespace nn_emu {

namespace {

enum which { FORWARD, BACKWARD_DATA, BACKWARD_FILTER, BACKWARD_BIAS, ADD_TENSOR };

/* A copy of p's n floats rounded to TF32 (10 mantissa bits, to nearest). */
const float *to_tf32(const float *p, size_t n, std::vector<float> *copy)
{
    copy->resize(n);
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &p[i], 4);
        if ((u & 0x7f800000u) != 0x7f800000u)       /* finite: round the low 13 bits away */
            u = (u + 0x1000u) & ~0x1fffu;
        memcpy(&(*copy)[i], &u, 4);
    }
    return copy->data();
}

struct buffer {
    const void *p;
    size_t bytes;
    const char *what;
};

struct dnn_call {
    which op;
    conv_shape s;                /* bias: x is dy, y is db; AddTensor: x is A, y is C */
    buffer in1, in2, out;        /* see issue_* for which is which */
    float alpha, beta;
    void *ws = nullptr;
    size_t ws_need = 0, ws_given = 0;
    bool shuffled = false;       /* a non-deterministic algorithm: sums in a random order */
    bool lossy = false;          /* inputs rounded to TF32 first (algo_info::lossy) */
    int algo = -1;

    int check(std::string *why) const
    {
        for (const buffer *b : { &in1, &in2, &out })
            if (b->bytes && check_range(b->p, b->bytes, MEM_ANY, b->what, why))
                return -1;
        return ws_given && check_range(ws, ws_given, MEM_DEVICE, "the workspace", why) ? -1 : 0;
    }

    cudaError_t run(std::string *why) const
    {
        if (check(why))
            return cudaErrorIllegalAddress;
        if (ws_need)
            memset(ws, 0xa7, ws_need < ((size_t)4 << 20) ? ws_need : ((size_t)4 << 20));
        const float *a = (const float *)in1.p, *b = (const float *)in2.p;
        float *o = (float *)out.p;
        std::vector<float> a_tf32, b_tf32;
        if (lossy) {
            a = to_tf32(a, in1.bytes / sizeof(float), &a_tf32);
            b = to_tf32(b, in2.bytes / sizeof(float), &b_tf32);
        }
        switch (op) {
        case FORWARD:
            conv_forward(s.p, s.x, a, s.w, b, s.y, o, alpha, beta);
            break;
        case BACKWARD_DATA: {
            permutation k_order(shuffled ? (uint64_t)s.y.c : 1);
            conv_backward_data(s.p, s.w, a, s.y, b, s.x, o, alpha, beta, shuffled ? &k_order : nullptr);
            break;
        }
        case BACKWARD_FILTER: {
            permutation n_order(shuffled ? (uint64_t)s.x.n : 1);
            conv_backward_filter(s.p, s.x, a, s.y, b, s.w, o, alpha, beta,
                                 shuffled ? &n_order : nullptr);
            break;
        }
        case BACKWARD_BIAS:
            conv_backward_bias(s.x, a, s.y, o, alpha, beta);
            break;
        case ADD_TENSOR:
            add_tensor(s.x, a, s.y, o, alpha, beta);
            break;
        }
        return cudaSuccess;
    }
};

buffer buf(const void *p, const tensor4 &t, const char *what)
{
    return buffer{ p, t.span() * sizeof(float), what };
}

bool overlap(const void *a, size_t na, const void *b, size_t nb)
{
    const char *x = (const char *)a, *y = (const char *)b;
    return na && nb && x < y + nb && y < x + na;
}

cudnnStatus_t scalars(const void *alpha, const void *beta, dnn_call *c, const char *fn)
{
    if (!alpha || !beta)
        return dnn_fail(CUDNN_STATUS_BAD_PARAM, format("%s: alpha or beta is NULL", fn));
    c->alpha = *(const float *)alpha;      /* float data: float scaling parameters */
    c->beta = *(const float *)beta;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t with_algorithm(int found, const algo_info &info, void *ws, size_t given,
                             const char *fn, dnn_call *c)
{
    if (found != 0 || !info.supported)
        return dnn_fail(CUDNN_STATUS_NOT_SUPPORTED,
                        format("%s: algorithm %d is not available for this convolution (the "
                               "_v7 query lists which are)", fn, info.algo));
    if (given < info.workspace || (info.workspace && !ws))
        return dnn_fail(CUDNN_STATUS_BAD_PARAM,
                        format("%s: algorithm %d needs %zu bytes of workspace, %zu given at %p", fn,
                               info.algo, info.workspace, given, ws));
    c->ws = ws;
    c->ws_need = info.workspace;
    c->ws_given = ws ? given : 0;
    c->shuffled = !info.deterministic;
    c->lossy = info.lossy;
    c->algo = info.algo;
    return CUDNN_STATUS_SUCCESS;
}

/* Checks the buffers and queues the call on the handle's stream. */
cudnnStatus_t submit(cudnnHandle_t h, const dnn_call &c, const char *fn)
{
    if (overlap(c.out.p, c.out.bytes, c.in1.p, c.in1.bytes) ||
        overlap(c.out.p, c.out.bytes, c.in2.p, c.in2.bytes) ||
        overlap(c.ws, c.ws_given, c.in1.p, c.in1.bytes) ||
        overlap(c.ws, c.ws_given, c.in2.p, c.in2.bytes) ||
        overlap(c.ws, c.ws_given, c.out.p, c.out.bytes))
        return dnn_fail(CUDNN_STATUS_BAD_PARAM, format("%s: the output overlaps an input or the "
                                                       "workspace (not supported in place)", fn));
    std::string why;
    if (c.check(&why) != 0) {
        fault(cudaErrorIllegalAddress, format("%s: %s", fn, why.c_str()));
        return dnn_fail(CUDNN_STATUS_EXECUTION_FAILED, format("%s: %s", fn, why.c_str()));
    }
    cudaError_t e = cudaSuccess;
    nn_emu_stream *st = stream_of(h->stream, &e);
    if (st && first_use_spoils_capture(st, &h->used,
                                       c.algo >= 0 ? format("%s (algorithm %d)", fn, c.algo) : fn))
        e = cudaErrorStreamCaptureInvalidated;
    else if (st)
        e = enqueue(st, library_op([c](std::string *w) { return c.run(w); }));
    if (e != cudaSuccess)
        return dnn_fail(CUDNN_STATUS_EXECUTION_FAILED,
                        format("%s: its kernel could not be queued: %s", fn, cudaGetErrorName(e)));
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t begin(cudnnHandle_t h, const void *alpha, const void *beta, dnn_call *c, const char *fn)
{
    if (!dnn_handle_valid(h))
        return dnn_fail(CUDNN_STATUS_BAD_PARAM, format("%s: not a cuDNN handle", fn));
    return scalars(alpha, beta, c, fn);
}

} /* namespace */
} /* namespace nn_emu */

using namespace nn_emu;

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *alpha, cudnnTensorDescriptor_t xd,
                                      const void *x, cudnnFilterDescriptor_t wd, const void *w,
                                      cudnnConvolutionDescriptor_t conv,
                                      cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_bytes,
                                      const void *beta, cudnnTensorDescriptor_t yd, void *y)
{
    guard g(lock());
    const char *fn = "cudnnConvolutionForward";
    dnn_call c = {};
    algo_info info = { (int)algo, false, false, 0 };
    cudnnStatus_t st;
    c.op = FORWARD;
    if ((st = begin(h, alpha, beta, &c, fn)) || (st = conv_shape_of(xd, wd, conv, yd, fn, &c.s)) ||
        (st = with_algorithm(fwd_algo(c.s, algo, &info), info, ws, ws_bytes, fn, &c)))
        return st;
    c.in1 = buf(x, c.s.x, "x");
    c.in2 = buf(w, c.s.w, "w");
    c.out = buf(y, c.s.y, "y");
    return submit(h, c, fn);
}

cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t h, const void *alpha,
                                           cudnnFilterDescriptor_t wd, const void *w,
                                           cudnnTensorDescriptor_t dyd, const void *dy,
                                           cudnnConvolutionDescriptor_t conv,
                                           cudnnConvolutionBwdDataAlgo_t algo, void *ws,
                                           size_t ws_bytes, const void *beta,
                                           cudnnTensorDescriptor_t dxd, void *dx)
{
    guard g(lock());
    const char *fn = "cudnnConvolutionBackwardData";
    dnn_call c = {};
    algo_info info = { (int)algo, false, false, 0 };
    cudnnStatus_t st;
    c.op = BACKWARD_DATA;
    if ((st = begin(h, alpha, beta, &c, fn)) || (st = conv_shape_of(dxd, wd, conv, dyd, fn, &c.s)) ||
        (st = with_algorithm(bwd_data_algo(c.s, algo, &info), info, ws, ws_bytes, fn, &c)))
        return st;
    c.in1 = buf(w, c.s.w, "w");
    c.in2 = buf(dy, c.s.y, "dy");
    c.out = buf(dx, c.s.x, "dx");
    return submit(h, c, fn);
}

cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t h, const void *alpha,
                                             cudnnTensorDescriptor_t xd, const void *x,
                                             cudnnTensorDescriptor_t dyd, const void *dy,
                                             cudnnConvolutionDescriptor_t conv,
                                             cudnnConvolutionBwdFilterAlgo_t algo, void *ws,
                                             size_t ws_bytes, const void *beta,
                                             cudnnFilterDescriptor_t dwd, void *dw)
{
    guard g(lock());
    const char *fn = "cudnnConvolutionBackwardFilter";
    dnn_call c = {};
    algo_info info = { (int)algo, false, false, 0 };
    cudnnStatus_t st;
    c.op = BACKWARD_FILTER;
    if ((st = begin(h, alpha, beta, &c, fn)) || (st = conv_shape_of(xd, dwd, conv, dyd, fn, &c.s)) ||
        (st = with_algorithm(bwd_filter_algo(c.s, algo, &info), info, ws, ws_bytes, fn, &c)))
        return st;
    c.in1 = buf(x, c.s.x, "x");
    c.in2 = buf(dy, c.s.y, "dy");
    c.out = buf(dw, c.s.w, "dw");
    return submit(h, c, fn);
}

cudnnStatus_t cudnnConvolutionBackwardBias(cudnnHandle_t h, const void *alpha,
                                           cudnnTensorDescriptor_t dyd, const void *dy,
                                           const void *beta, cudnnTensorDescriptor_t dbd, void *db)
{
    guard g(lock());
    const char *fn = "cudnnConvolutionBackwardBias";
    dnn_call c = {};
    cudnnStatus_t st;
    c.op = BACKWARD_BIAS;
    if ((st = begin(h, alpha, beta, &c, fn)) || (st = tensor_of(dyd, fn, "dy", &c.s.x)) ||
        (st = tensor_of(dbd, fn, "db", &c.s.y)))
        return st;
    if (c.s.y.n != 1 || c.s.y.c != c.s.x.c || c.s.y.h != 1 || c.s.y.w != 1)
        return dnn_fail(CUDNN_STATUS_BAD_PARAM,
                        format("%s: db is (%d, %d, %d, %d), dy's %d channels need (1, %d, 1, 1)", fn,
                               c.s.y.n, c.s.y.c, c.s.y.h, c.s.y.w, c.s.x.c, c.s.x.c));
    c.in1 = buf(dy, c.s.x, "dy");
    c.in2 = buffer{ nullptr, 0, "" };
    c.out = buf(db, c.s.y, "db");
    return submit(h, c, fn);
}

cudnnStatus_t cudnnAddTensor(cudnnHandle_t h, const void *alpha, cudnnTensorDescriptor_t ad,
                             const void *a, const void *beta, cudnnTensorDescriptor_t cd, void *cp)
{
    guard g(lock());
    const char *fn = "cudnnAddTensor";
    dnn_call c = {};
    cudnnStatus_t st;
    c.op = ADD_TENSOR;
    if ((st = begin(h, alpha, beta, &c, fn)) || (st = tensor_of(ad, fn, "A", &c.s.x)) ||
        (st = tensor_of(cd, fn, "C", &c.s.y)))
        return st;
    const tensor4 &A = c.s.x, &C = c.s.y;
    if ((A.n != C.n && A.n != 1) || (A.c != C.c && A.c != 1) || (A.h != C.h && A.h != 1) ||
        (A.w != C.w && A.w != 1))
        return dnn_fail(CUDNN_STATUS_BAD_PARAM,
                        format("%s: A (%d, %d, %d, %d) does not broadcast to C (%d, %d, %d, %d)", fn,
                               A.n, A.c, A.h, A.w, C.n, C.c, C.h, C.w));
    c.in1 = buf(a, A, "A");
    c.in2 = buffer{ nullptr, 0, "" };
    c.out = buf(cp, C, "C");
    return submit(h, c, fn);
}
