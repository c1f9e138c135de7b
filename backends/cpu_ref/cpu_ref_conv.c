/* backends/cpu_ref/cpu_ref_conv.c - the reference backend's windowed operations:
 * 2-D convolution (forward, and backward as three sums: the input, the
 * weight and the bias gradients) and max pooling, as direct loops that read
 * like their definitions, sums accumulated in double. The rest of the
 * backend, and the rules every operation here follows, are in cpu_ref.c. */
#include "geom_check.h"
#include "cpu_ref.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* 2-D convolution (cross-correlation, as PyTorch), direct loops.            */
/* x (n, c_in, h_in, w_in), w (c_out, c_in, k_h, k_w), y (n, c_out, h_out, w_out) */

/* Checks the geometry and that the output size is the one the formula gives:
 * a wrong h_out here is an engine bug that would otherwise read out of bounds. */
static int conv_geom_check(nn_backend *b, const char *op, const nn_conv_geom *g)
{
    char why[192];
    return nn_conv_geom_problem(op, g, why, sizeof why) ? nn_backend_fail(b, "%s", why) : 0;
}

int nn_ref_conv2d_workspace(nn_backend *b, const nn_conv_geom *g, size_t *bytes)
{
    *bytes = 0;     /* direct loops, no im2col */
    return conv_geom_check(b, "conv2d_workspace", g);
}

int nn_ref_conv2d_forward(nn_backend *b, const nn_conv_geom *g,
                          const float *restrict x, const float *restrict w,
                          const float *restrict bias,   /* (c_out) or NULL */
                          float *restrict y, void *ws)
{
    (void)ws;
    if (conv_geom_check(b, "conv2d_forward", g) != 0)
        return -1;
    const size_t HI = (size_t)g->h_in, WI = (size_t)g->w_in;
    const size_t HO = (size_t)g->h_out, WO = (size_t)g->w_out;
    const size_t KH = (size_t)g->k_h, KW = (size_t)g->k_w, CI = (size_t)g->c_in;

    /* y[n][co][oh][ow] = bias[co] + sum_{ci,kh,kw} w[co][ci][kh][kw] x[n][ci][ih][iw],
     * ih = oh*stride_h - pad_h + kh (terms outside the input are the zero padding) */
    for (int n = 0; n < g->n; n++)
        for (int co = 0; co < g->c_out; co++)
            for (int oh = 0; oh < g->h_out; oh++)
                for (int ow = 0; ow < g->w_out; ow++) {
                    double acc = bias ? bias[co] : 0.0;
                    for (int ci = 0; ci < g->c_in; ci++) {
                        const float *xp = x + ((size_t)n * CI + (size_t)ci) * HI * WI;
                        const float *wp = w + ((size_t)co * CI + (size_t)ci) * KH * KW;
                        for (int kh = 0; kh < g->k_h; kh++) {
                            int ih = oh * g->stride_h - g->pad_h + kh;
                            if (ih < 0 || ih >= g->h_in)
                                continue;
                            for (int kw = 0; kw < g->k_w; kw++) {
                                int iw = ow * g->stride_w - g->pad_w + kw;
                                if (iw < 0 || iw >= g->w_in)
                                    continue;
                                acc += (double)wp[(size_t)kh * KW + (size_t)kw] *
                                       xp[(size_t)ih * WI + (size_t)iw];
                            }
                        }
                    }
                    y[(((size_t)n * (size_t)g->c_out + (size_t)co) * HO + (size_t)oh) * WO +
                      (size_t)ow] = (float)acc;
                }
    return 0;
}

static void conv_input_grad(const nn_conv_geom *g, const float *restrict w, const float *restrict dy,
                            float *restrict dx)
{
    const size_t HI = (size_t)g->h_in, WI = (size_t)g->w_in;
    const size_t HO = (size_t)g->h_out, WO = (size_t)g->w_out;
    const size_t KH = (size_t)g->k_h, KW = (size_t)g->k_w;
    const size_t CI = (size_t)g->c_in, CO = (size_t)g->c_out;
    /* dx[n][ci][ih][iw] = sum over every (co, kh, kw) whose output position
     * oh = (ih + pad_h - kh) / stride_h is a whole number inside the output,
     * of w[co][ci][kh][kw] dy[n][co][oh][ow]. Written as a gather, one sum per
     * dx element, so it is accumulated in double like the forward. */
    for (int n = 0; n < g->n; n++)
        for (int ci = 0; ci < g->c_in; ci++)
            for (int ih = 0; ih < g->h_in; ih++)
                for (int iw = 0; iw < g->w_in; iw++) {
                    double acc = 0.0;
                    for (int co = 0; co < g->c_out; co++) {
                        const float *dyp = dy + ((size_t)n * CO + (size_t)co) * HO * WO;
                        const float *wp = w + ((size_t)co * CI + (size_t)ci) * KH * KW;
                        for (int kh = 0; kh < g->k_h; kh++) {
                            int th = ih + g->pad_h - kh;
                            if (th < 0 || th % g->stride_h != 0 || th / g->stride_h >= g->h_out)
                                continue;
                            int oh = th / g->stride_h;
                            for (int kw = 0; kw < g->k_w; kw++) {
                                int tw = iw + g->pad_w - kw;
                                if (tw < 0 || tw % g->stride_w != 0 ||
                                    tw / g->stride_w >= g->w_out)
                                    continue;
                                int ow = tw / g->stride_w;
                                acc += (double)wp[(size_t)kh * KW + (size_t)kw] *
                                       dyp[(size_t)oh * WO + (size_t)ow];
                            }
                        }
                    }
                    dx[(((size_t)n * CI + (size_t)ci) * HI + (size_t)ih) * WI + (size_t)iw] =
                        (float)acc;
                }
}

static void conv_weight_grad(const nn_conv_geom *g, const float *restrict x, const float *restrict dy,
                             float *restrict dw)
{
    const size_t HI = (size_t)g->h_in, WI = (size_t)g->w_in;
    const size_t HO = (size_t)g->h_out, WO = (size_t)g->w_out;
    const size_t KH = (size_t)g->k_h, KW = (size_t)g->k_w;
    const size_t CI = (size_t)g->c_in, CO = (size_t)g->c_out;
    /* dw[co][ci][kh][kw] = sum_{n,oh,ow} dy[n][co][oh][ow] x[n][ci][ih][iw] */
    for (int co = 0; co < g->c_out; co++)
        for (int ci = 0; ci < g->c_in; ci++)
            for (int kh = 0; kh < g->k_h; kh++)
                for (int kw = 0; kw < g->k_w; kw++) {
                    double acc = 0.0;
                    for (int n = 0; n < g->n; n++) {
                        const float *xp = x + ((size_t)n * CI + (size_t)ci) * HI * WI;
                        const float *dyp = dy + ((size_t)n * CO + (size_t)co) * HO * WO;
                        for (int oh = 0; oh < g->h_out; oh++) {
                            int ih = oh * g->stride_h - g->pad_h + kh;
                            if (ih < 0 || ih >= g->h_in)
                                continue;
                            for (int ow = 0; ow < g->w_out; ow++) {
                                int iw = ow * g->stride_w - g->pad_w + kw;
                                if (iw < 0 || iw >= g->w_in)
                                    continue;
                                acc += (double)dyp[(size_t)oh * WO + (size_t)ow] *
                                       xp[(size_t)ih * WI + (size_t)iw];
                            }
                        }
                    }
                    dw[(((size_t)co * CI + (size_t)ci) * KH + (size_t)kh) * KW + (size_t)kw] =
                        (float)acc;
                }
}

static void conv_bias_grad(const nn_conv_geom *g, const float *restrict dy, float *restrict dbias)
{
    const size_t HO = (size_t)g->h_out, WO = (size_t)g->w_out, CO = (size_t)g->c_out;
    /* dbias[co] = sum_{n,oh,ow} dy[n][co][oh][ow] */
    for (size_t co = 0; co < CO; co++) {
        double acc = 0.0;
        for (size_t n = 0; n < (size_t)g->n; n++) {
            const float *dyp = dy + (n * CO + co) * HO * WO;
            for (size_t k = 0; k < HO * WO; k++)
                acc += dyp[k];
        }
        dbias[co] = (float)acc;
    }
}

int nn_ref_conv2d_backward(nn_backend *b, const nn_conv_geom *g,
                           const float *restrict x, const float *restrict w,
                           const float *restrict dy,
                           float *restrict dx,      /* like x, or NULL */
                           float *restrict dw,      /* like w, or NULL */
                           float *restrict dbias,   /* (c_out) or NULL */
                           void *ws)
{
    (void)ws;
    if (conv_geom_check(b, "conv2d_backward", g) != 0)
        return -1;
    if (dx)
        conv_input_grad(g, w, dy, dx);
    if (dw)
        conv_weight_grad(g, x, dy, dw);
    if (dbias)
        conv_bias_grad(g, dy, dbias);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Max pooling: no padding, floor mode. x (n, c, h_in, w_in), y (n, c, h_out, w_out). */

static int pool_geom_check(nn_backend *b, const char *op, const nn_pool_geom *g)
{
    char why[192];
    return nn_pool_geom_problem(op, g, why, sizeof why) ? nn_backend_fail(b, "%s", why) : 0;
}

int nn_ref_maxpool2d_forward(nn_backend *b, const nn_pool_geom *g,
                             const float *restrict x, float *restrict y)
{
    if (pool_geom_check(b, "maxpool2d_forward", g) != 0)
        return -1;
    const size_t HI = (size_t)g->h_in, WI = (size_t)g->w_in;
    const size_t HO = (size_t)g->h_out, WO = (size_t)g->w_out;
    for (size_t plane = 0; plane < (size_t)g->n * (size_t)g->c; plane++) {
        const float *xp = x + plane * HI * WI;
        float *yp = y + plane * HO * WO;
        for (size_t oh = 0; oh < HO; oh++)
            for (size_t ow = 0; ow < WO; ow++) {
                const float *win = xp + oh * (size_t)g->stride_h * WI + ow * (size_t)g->stride_w;
                float best = win[0];
                for (size_t kh = 0; kh < (size_t)g->k_h; kh++)
                    for (size_t kw = 0; kw < (size_t)g->k_w; kw++) {
                        float v = win[kh * WI + kw];
                        if (v > best || isnan(v))   /* a NaN wins (the last), as in PyTorch */
                            best = v;
                    }
                yp[oh * WO + ow] = best;
            }
    }
    return 0;
}

/* The offset (kh * row + kw) of the position the gradient of one window goes
 * to: PyTorch's argmax (aten's max_pool2d kernels, CPU and CUDA), which scans
 * the window in row-major order from -inf and moves to a position whose value
 * is greater than the best so far or is NaN. So among equal maxima the first
 * wins, and in a window with NaNs the last NaN. Computed from x alone, as
 * PyTorch's forward computes its indices. */
static size_t window_argmax(const float *win, size_t row, size_t k_h, size_t k_w)
{
    float best = -INFINITY;
    size_t at = 0;                  /* a window of -inf: its first position */
    for (size_t kh = 0; kh < k_h; kh++)
        for (size_t kw = 0; kw < k_w; kw++) {
            float v = win[kh * row + kw];
            if (v > best || isnan(v)) {
                best = v;
                at = kh * row + kw;
            }
        }
    return at;
}

int nn_ref_maxpool2d_backward(nn_backend *b, const nn_pool_geom *g,
                              const float *restrict x, const float *restrict y,
                              const float *restrict dy, float *restrict dx)
{
    (void)y;    /* the reference finds the argmax from x, as PyTorch's forward does */
    if (pool_geom_check(b, "maxpool2d_backward", g) != 0)
        return -1;
    const size_t HI = (size_t)g->h_in, WI = (size_t)g->w_in;
    const size_t HO = (size_t)g->h_out, WO = (size_t)g->w_out;
    const size_t KH = (size_t)g->k_h, KW = (size_t)g->k_w;
    /* Positions in no window (floor mode leftovers) and non-maxima get 0;
     * overlapping windows (stride < k) add up at a shared maximum. */
    memset(dx, 0, (size_t)g->n * (size_t)g->c * HI * WI * sizeof *dx);
    for (size_t plane = 0; plane < (size_t)g->n * (size_t)g->c; plane++) {
        const float *xp = x + plane * HI * WI;
        float *dxp = dx + plane * HI * WI;
        for (size_t oh = 0; oh < HO; oh++)
            for (size_t ow = 0; ow < WO; ow++) {
                size_t o = plane * HO * WO + oh * WO + ow;
                size_t base = oh * (size_t)g->stride_h * WI + ow * (size_t)g->stride_w;
                dxp[base + window_argmax(xp + base, WI, KH, KW)] += dy[o];
            }
    }
    return 0;
}
