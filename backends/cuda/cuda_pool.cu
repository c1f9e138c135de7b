/* backends/cuda/cuda_pool.cu - max pooling (no padding, floor mode), our
 * own kernels, following backends/cpu_ref/cpu_ref_conv.c: a NaN wins a window's
 * maximum, and its gradient goes to the *first* maximum among ties, or the
 * *last* NaN, as PyTorch and cpu-ref route it (cuDNN promises neither).
 * No atomics: the same call twice gives the same bits. */
#include "geom_check.h"
#include "cuda_backend.h"

#include <math.h>

static int pool_check(nn_backend *b, const char *op, const nn_pool_geom *g)
{
    char why[192];
    return nn_pool_geom_problem(op, g, why, sizeof why) ? gpu_fail(b, "%s", why) : 0;
}

/* One thread per output: the window's maximum, a NaN winning (as PyTorch). */
__global__ void maxpool_forward_kernel(nn_pool_geom g, const float *__restrict__ x,
                                       float *__restrict__ y)
{
    size_t total = (size_t)g.n * g.c * g.h_out * g.w_out;
    GRID_STRIDE(o, total) {
        int ow = (int)(o % (size_t)g.w_out);
        size_t r = o / (size_t)g.w_out;
        int oh = (int)(r % (size_t)g.h_out);
        size_t plane = r / (size_t)g.h_out;
        const float *win = x + plane * g.h_in * g.w_in + (size_t)oh * g.stride_h * g.w_in +
                           (size_t)ow * g.stride_w;
        float best = win[0];
        for (int kh = 0; kh < g.k_h; kh++)
            for (int kw = 0; kw < g.k_w; kw++) {
                float v = win[(size_t)kh * g.w_in + kw];
                if (v > best || isnan(v))
                    best = v;
            }
        y[o] = best;
    }
}

/* Where a window routes its gradient (PyTorch's argmax, see cpu_ref_conv.c
 * window_argmax): the last NaN when its maximum v is NaN, else the first
 * position (row-major) equal to v. (-1, -1) when none is (y not from x). */
__device__ static void window_route(const float *win, int w_in, int k_h, int k_w, float v,
                                    int *fh, int *fw)
{
    *fh = -1;
    *fw = -1;
    for (int kh = 0; kh < k_h; kh++)
        for (int kw = 0; kw < k_w; kw++) {
            float x = win[(size_t)kh * w_in + kw];
            if (isnan(v) ? isnan(x) : (x == v && *fh < 0)) {
                *fh = kh;
                *fw = kw;
            }
        }
}

/* One thread per input element, gathering: for every window that covers it
 * (output rows and columns in ascending order, as cpu-ref adds them), it
 * takes dy when it is the position the window routes its gradient to.
 * No atomics, so overlapping windows add up in cpu-ref's order exactly. */
__global__ void maxpool_backward_kernel(nn_pool_geom g, const float *__restrict__ x,
                                        const float *__restrict__ y,
                                        const float *__restrict__ dy, float *__restrict__ dx)
{
    size_t total = (size_t)g.n * g.c * g.h_in * g.w_in;
    GRID_STRIDE(i, total) {
        int iw = (int)(i % (size_t)g.w_in);
        size_t r = i / (size_t)g.w_in;
        int ih = (int)(r % (size_t)g.h_in);
        size_t plane = r / (size_t)g.h_in;
        const float *xp = x + plane * g.h_in * g.w_in;
        /* windows oh with oh*stride_h <= ih <= oh*stride_h + k_h - 1 */
        int lo_h = ih - g.k_h + 1 <= 0 ? 0 : (ih - g.k_h + g.stride_h) / g.stride_h;
        int hi_h = min(ih / g.stride_h, g.h_out - 1);
        int lo_w = iw - g.k_w + 1 <= 0 ? 0 : (iw - g.k_w + g.stride_w) / g.stride_w;
        int hi_w = min(iw / g.stride_w, g.w_out - 1);
        float acc = 0.0f;
        for (int oh = lo_h; oh <= hi_h; oh++)
            for (int ow = lo_w; ow <= hi_w; ow++) {
                size_t o = (plane * g.h_out + oh) * g.w_out + ow;
                float v = y[o];
                const float *win = xp + (size_t)oh * g.stride_h * g.w_in + (size_t)ow * g.stride_w;
                int fh, fw;
                window_route(win, g.w_in, g.k_h, g.k_w, v, &fh, &fw);
                if (fh >= 0 && oh * g.stride_h + fh == ih && ow * g.stride_w + fw == iw)
                    acc += dy[o];
            }
        dx[i] = acc;
    }
}

/* Windows that tile the input (stride = window, LeNet's 2x2 stride 2): one
 * thread per window routes once and writes its whole tile, dy at the routed
 * position and 0 elsewhere; the last row and column of windows also clear
 * the rows and columns floor mode leaves uncovered. The gathering kernel
 * above has 4 threads route the same 2x2 window, each reading it again
 * (kernels.txt on an H200: 69 us a call at batch 1024, PyTorch's 37). Each
 * input gets the one window's dy or nothing: the same bits as that kernel
 * (0 + dy, as its sum starts from 0). */
__global__ void maxpool_backward_tiles_kernel(nn_pool_geom g, const float *__restrict__ x,
                                              const float *__restrict__ y,
                                              const float *__restrict__ dy,
                                              float *__restrict__ dx)
{
    size_t windows = (size_t)g.n * g.c * g.h_out * g.w_out;
    GRID_STRIDE(o, windows) {
        int ow = (int)(o % (size_t)g.w_out);
        size_t r = o / (size_t)g.w_out;
        int oh = (int)(r % (size_t)g.h_out);
        size_t plane = r / (size_t)g.h_out;
        int h0 = oh * g.k_h, w0 = ow * g.k_w;
        int h1 = oh == g.h_out - 1 ? g.h_in : h0 + g.k_h;
        int w1 = ow == g.w_out - 1 ? g.w_in : w0 + g.k_w;
        const float *xp = x + plane * g.h_in * g.w_in;
        float *dxp = dx + plane * g.h_in * g.w_in;
        int fh, fw;
        window_route(xp + (size_t)h0 * g.w_in + w0, g.w_in, g.k_h, g.k_w, y[o], &fh, &fw);
        float grad = 0.0f + dy[o];
        for (int ih = h0; ih < h1; ih++)
            for (int iw = w0; iw < w1; iw++)
                dxp[(size_t)ih * g.w_in + iw] =
                    fh >= 0 && ih == h0 + fh && iw == w0 + fw ? grad : 0.0f;
    }
}

int gpu_maxpool2d_forward(nn_backend *b, const nn_pool_geom *g, const float *x, float *y)
{
    if (pool_check(b, "maxpool2d_forward", g) != 0)
        return -1;
    size_t total = (size_t)g->n * g->c * g->h_out * g->w_out;
    NN_LAUNCH(maxpool_forward_kernel, blocks_for(total, GPU_MAX_BLOCKS), GPU_THREADS, 0,
              gpu_of(b)->stream, *g, x, y);
    return gpu_launched(b, "maxpool2d_forward", "maxpool_forward_kernel");
}

int gpu_maxpool2d_backward(nn_backend *b, const nn_pool_geom *g, const float *x, const float *y,
                           const float *dy, float *dx)
{
    if (pool_check(b, "maxpool2d_backward", g) != 0)
        return -1;
    if (g->stride_h == g->k_h && g->stride_w == g->k_w) {
        size_t windows = (size_t)g->n * g->c * g->h_out * g->w_out;
        NN_LAUNCH(maxpool_backward_tiles_kernel, blocks_for(windows, GPU_MAX_BLOCKS), GPU_THREADS,
                  0, gpu_of(b)->stream, *g, x, y, dy, dx);
        return gpu_launched(b, "maxpool2d_backward", "maxpool_backward_tiles_kernel");
    }
    size_t total = (size_t)g->n * g->c * g->h_in * g->w_in;
    NN_LAUNCH(maxpool_backward_kernel, blocks_for(total, GPU_MAX_BLOCKS), GPU_THREADS, 0,
              gpu_of(b)->stream, *g, x, y, dy, dx);
    return gpu_launched(b, "maxpool2d_backward", "maxpool_backward_kernel");
}

