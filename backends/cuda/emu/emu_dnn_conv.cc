/* backends/cuda/emu/emu_dnn_conv.cc - the arithmetic of the cuDNN stand-in,
 * from the definitions in cuDNN's documentation (cudnnConvolutionForward and
 * its backward functions, with any padding, stride and dilation, in both
 * convolution modes), in FP32 with FP32 accumulation as cuDNN's FP32
 * configuration. Long sums (the filter and bias gradients) add each
 * sample's partial sum, as a GPU reduction adds blocks' partials. The loops
 * run only on buffers whose whole extent emu_dnn_run.cc has checked, so the
 * sanitizers leave them out (they are most of a sanitizer run's time). */
#include "emu_dnn_ref.h"

#include <algorithm>

namespace nn_emu {

namespace {

/* The output columns ow whose input column ow*v - pad + off lies in [0, w_in). */
void column_range(int w_in, int w_out, int v, int pad, int off, int *lo, int *hi)
{
    int a = pad - off, b = w_in - 1 + pad - off;
    *lo = a <= 0 ? 0 : (a + v - 1) / v;
    *hi = b < 0 ? -1 : b / v;
    if (*hi > w_out - 1)
        *hi = w_out - 1;
}

/* The filter tap that input offset (r, s) meets: flipped in convolution mode. */
int tap(const conv_params &p, int r, int extent)
{
    return p.cross ? r : extent - 1 - r;
}

void store(float *out, float result, float alpha, float beta)
{
    *out = alpha * result + (beta != 0.0f ? beta * *out : 0.0f);
}

} /* namespace */

NN_EMU_UNCHECKED
void conv_forward(const conv_params &p, const tensor4 &xd, const float *x, const tensor4 &wd,
                  const float *w, const tensor4 &yd, float *y, float alpha, float beta)
{
    std::vector<float> acc((size_t)yd.h * yd.w);
    for (int n = 0; n < yd.n; n++)
        for (int k = 0; k < yd.c; k++) {
            std::fill(acc.begin(), acc.end(), 0.0f);
            for (int c = 0; c < wd.c; c++)
                for (int r = 0; r < wd.h; r++)
                    for (int s = 0; s < wd.w; s++) {
                        const float wv = w[wd.index(k, c, tap(p, r, wd.h), tap(p, s, wd.w))];
                        const int off = s * p.dil_w;
                        int lo, hi;
                        column_range(xd.w, yd.w, p.v, p.pad_w, off, &lo, &hi);
                        for (int oh = 0; oh < yd.h; oh++) {
                            int ih = oh * p.u - p.pad_h + r * p.dil_h;
                            if (ih < 0 || ih >= xd.h)
                                continue;
                            const float *row = x + xd.index(n, c, ih, 0);
                            float *a = &acc[(size_t)oh * yd.w];
                            for (int ow = lo; ow <= hi; ow++)
                                a[ow] += wv * row[(ow * p.v - p.pad_w + off) * xd.sw];
                        }
                    }
            for (int oh = 0; oh < yd.h; oh++)
                for (int ow = 0; ow < yd.w; ow++)
                    store(&y[yd.index(n, k, oh, ow)], acc[(size_t)oh * yd.w + ow], alpha, beta);
        }
}

NN_EMU_UNCHECKED
void conv_backward_data(const conv_params &p, const tensor4 &wd, const float *w, const tensor4 &dyd,
                        const float *dy, const tensor4 &dxd, float *dx, float alpha, float beta,
                        const permutation *k_order)
{
    std::vector<float> acc((size_t)dxd.h * dxd.w);
    for (int n = 0; n < dxd.n; n++)
        for (int c = 0; c < dxd.c; c++) {
            std::fill(acc.begin(), acc.end(), 0.0f);
            for (int kk = 0; kk < dyd.c; kk++) {
                int k = k_order ? (int)k_order->at((uint64_t)kk) : kk;
                for (int r = 0; r < wd.h; r++)
                    for (int s = 0; s < wd.w; s++) {
                        const float wv = w[wd.index(k, c, tap(p, r, wd.h), tap(p, s, wd.w))];
                        const int off = s * p.dil_w;
                        int lo, hi;
                        column_range(dxd.w, dyd.w, p.v, p.pad_w, off, &lo, &hi);
                        for (int oh = 0; oh < dyd.h; oh++) {
                            int ih = oh * p.u - p.pad_h + r * p.dil_h;
                            if (ih < 0 || ih >= dxd.h)
                                continue;
                            const float *g = dy + dyd.index(n, k, oh, 0);
                            float *a = &acc[(size_t)ih * dxd.w];
                            for (int ow = lo; ow <= hi; ow++)
                                a[ow * p.v - p.pad_w + off] += wv * g[ow * dyd.sw];
                        }
                    }
            }
            for (int ih = 0; ih < dxd.h; ih++)
                for (int iw = 0; iw < dxd.w; iw++)
                    store(&dx[dxd.index(n, c, ih, iw)], acc[(size_t)ih * dxd.w + iw], alpha, beta);
        }
}

/* One filter tap's gradient over sample n: sum over the output positions. */
NN_EMU_UNCHECKED
static float filter_tap_sum(const conv_params &p, const tensor4 &xd, const float *x,
                            const tensor4 &dyd, const float *dy, int n, int k, int c, int r, int s)
{
    const int off = s * p.dil_w;
    int lo, hi;
    column_range(xd.w, dyd.w, p.v, p.pad_w, off, &lo, &hi);
    float part = 0.0f;
    for (int oh = 0; oh < dyd.h; oh++) {
        int ih = oh * p.u - p.pad_h + r * p.dil_h;
        if (ih < 0 || ih >= xd.h)
            continue;
        const float *g = dy + dyd.index(n, k, oh, 0);
        const float *row = x + xd.index(n, c, ih, 0);
        for (int ow = lo; ow <= hi; ow++)
            part += g[ow * dyd.sw] * row[(ow * p.v - p.pad_w + off) * xd.sw];
    }
    return part;
}

NN_EMU_UNCHECKED
void conv_backward_filter(const conv_params &p, const tensor4 &xd, const float *x,
                          const tensor4 &dyd, const float *dy, const tensor4 &dwd, float *dw,
                          float alpha, float beta, const permutation *n_order)
{
    for (int k = 0; k < dwd.n; k++)
        for (int c = 0; c < dwd.c; c++)
            for (int r = 0; r < dwd.h; r++)
                for (int s = 0; s < dwd.w; s++) {
                    float total = 0.0f;
                    for (int nn = 0; nn < xd.n; nn++) {
                        int n = n_order ? (int)n_order->at((uint64_t)nn) : nn;
                        total += filter_tap_sum(p, xd, x, dyd, dy, n, k, c, r, s);
                    }
                    store(&dw[dwd.index(k, c, tap(p, r, dwd.h), tap(p, s, dwd.w))], total, alpha,
                          beta);
                }
}

NN_EMU_UNCHECKED
void conv_backward_bias(const tensor4 &dyd, const float *dy, const tensor4 &dbd, float *db,
                        float alpha, float beta)
{
    for (int k = 0; k < dyd.c; k++) {
        float total = 0.0f;
        for (int n = 0; n < dyd.n; n++) {
            float part = 0.0f;
            for (int h = 0; h < dyd.h; h++)
                for (int w = 0; w < dyd.w; w++)
                    part += dy[dyd.index(n, k, h, w)];
            total += part;
        }
        store(&db[dbd.index(0, k, 0, 0)], total, alpha, beta);
    }
}

NN_EMU_UNCHECKED
void add_tensor(const tensor4 &ad, const float *a, const tensor4 &cd, float *c, float alpha,
                float beta)
{
    for (int n = 0; n < cd.n; n++)
        for (int ch = 0; ch < cd.c; ch++)
            for (int h = 0; h < cd.h; h++)
                for (int w = 0; w < cd.w; w++) {
                    float v = a[ad.index(ad.n == 1 ? 0 : n, ad.c == 1 ? 0 : ch, ad.h == 1 ? 0 : h,
                                         ad.w == 1 ? 0 : w)];
                    store(&c[cd.index(n, ch, h, w)], v, alpha, beta);
                }
}

} /* namespace nn_emu */
