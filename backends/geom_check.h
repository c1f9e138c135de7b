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
