/* backends/geom_check.h - the geometry checks every backend makes before a
 * convolution or a pooling: a wrong output size is an engine bug that would
 * otherwise read or write out of bounds. Header-only so that the GPU module,
 * which links nothing of the program, shares them too. */
#ifndef NNLAB_GEOM_CHECK_H
#define NNLAB_GEOM_CHECK_H

#include <stdio.h>

#include "backend.h"

/* 0 when g is valid; otherwise -1 with "op: why" in msg. */
static inline int nn_conv_geom_problem(const char *op, const nn_conv_geom *g, char *msg, size_t len)
{
    if (g->n <= 0 || g->c_in <= 0 || g->c_out <= 0 || g->h_in <= 0 || g->w_in <= 0 ||
        g->k_h <= 0 || g->k_w <= 0 || g->stride_h <= 0 || g->stride_w <= 0 ||
        g->pad_h < 0 || g->pad_w < 0) {
        snprintf(msg, len, "%s: bad geometry n=%d c_in=%d %dx%d c_out=%d k=%dx%d stride=%dx%d pad=%dx%d",
                 op, g->n, g->c_in, g->h_in, g->w_in, g->c_out, g->k_h, g->k_w, g->stride_h,
                 g->stride_w, g->pad_h, g->pad_w);
        return -1;
    }
    int hp = g->h_in + 2 * g->pad_h, wp = g->w_in + 2 * g->pad_w;
    if (hp < g->k_h || wp < g->k_w) {
        snprintf(msg, len, "%s: kernel %dx%d larger than padded input %dx%d", op, g->k_h, g->k_w, hp, wp);
        return -1;
    }
    int h_out = (hp - g->k_h) / g->stride_h + 1, w_out = (wp - g->k_w) / g->stride_w + 1;
    if (g->h_out != h_out || g->w_out != w_out) {
        snprintf(msg, len, "%s: output is %dx%d, the geometry gives %dx%d", op, g->h_out, g->w_out,
                 h_out, w_out);
        return -1;
    }
    return 0;
}

/* The most elements cuDNN takes in one tensor: its descriptors keep sizes
 * and strides in int, and its documentation limits a tensor to 2 Gi
 * elements. A tensor of 2^31 elements or more is refused. */
#define NN_CUDNN_MAX_ELEMENTS 2147483647LL

/* 0 when no tensor of g (x, y, w) holds more than `limit` elements; otherwise
 * -1 with "op: x (n, c, h, w) has N elements; <who> takes at most limit in
 * one tensor: ..." in msg, naming the largest batch that fits (or saying
 * that none does when w alone is too large). g must be valid. */
static inline int nn_conv_geom_size_problem(const char *op, const nn_conv_geom *g, long long limit,
                                            const char *who, char *msg, size_t len)
{
    const long long x1 = (long long)g->c_in * g->h_in * g->w_in;     /* per sample */
    const long long y1 = (long long)g->c_out * g->h_out * g->w_out;
    const long long nw = (long long)g->c_out * g->c_in * g->k_h * g->k_w;
    const long long x = x1 * g->n, y = y1 * g->n;
    if (nw > limit) {
        snprintf(msg, len, "%s: w (%d, %d, %d, %d) has %lld elements; %s takes at most %lld in one "
                 "tensor, at any batch", op, g->c_out, g->c_in, g->k_h, g->k_w, nw, who, limit);
        return -1;
    }
    if (x <= limit && y <= limit)
        return 0;
    const int is_x = x >= y;
    const long long fits = limit / (is_x ? x1 : y1);
    char tail[64];
    if (fits > 0)
        snprintf(tail, sizeof tail, "a batch of at most %lld fits", fits);
    else
        snprintf(tail, sizeof tail, "not even one sample fits");
    snprintf(msg, len, "%s: %s (n=%d, c=%d, %dx%d) has %lld elements; %s takes at most %lld in one "
             "tensor: %s", op, is_x ? "x" : "y", g->n, is_x ? g->c_in : g->c_out,
             is_x ? g->h_in : g->h_out, is_x ? g->w_in : g->w_out, is_x ? x : y, who, limit, tail);
    return -1;
}

/* No padding, floor mode. 0 when g is valid; otherwise -1 with "op: why" in msg. */
static inline int nn_pool_geom_problem(const char *op, const nn_pool_geom *g, char *msg, size_t len)
{
    if (g->n <= 0 || g->c <= 0 || g->h_in <= 0 || g->w_in <= 0 || g->k_h <= 0 || g->k_w <= 0 ||
        g->stride_h <= 0 || g->stride_w <= 0 || g->k_h > g->h_in || g->k_w > g->w_in) {
        snprintf(msg, len, "%s: bad geometry n=%d c=%d %dx%d k=%dx%d stride=%dx%d", op, g->n, g->c,
                 g->h_in, g->w_in, g->k_h, g->k_w, g->stride_h, g->stride_w);
        return -1;
    }
    int h_out = (g->h_in - g->k_h) / g->stride_h + 1, w_out = (g->w_in - g->k_w) / g->stride_w + 1;
    if (g->h_out != h_out || g->w_out != w_out) {
        snprintf(msg, len, "%s: output is %dx%d, the geometry gives %dx%d", op, g->h_out, g->w_out,
                 h_out, w_out);
        return -1;
    }
    return 0;
}

#endif
