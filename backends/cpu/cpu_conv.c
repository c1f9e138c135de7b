/* backends/cpu/cpu_conv.c - conv2d_workspace, conv2d_forward and conv2d_backward
 * of the fast CPU backend. Each geometry takes one of two paths:
 *  - the direct kernels (cpu_conv_direct_run.c, kernels in cpu_conv_direct.c
 *    and cpu_conv_direct_chan.c)
 *    when nn_direct_conv_usable() says so: stride 1, a kernel larger than
 *    1x1, few output channels, a CPU with AVX2 and FMA, and
 *    NNLAB_NO_DIRECT_CONV not set;
 *  - otherwise im2col + sgemm (cpu_conv_im2col.c), which wins on wide layers.
 * Both sum their backward's partial weight gradients in slots, added in slot
 * order (nn_cpu_sum_conv_slots, cpu_internal.h). Calls go one way: this file
 * calls the paths, never the reverse.
 */
#include "cpu_internal.h"

#include "cpu_conv_direct.h"
#include "geom_check.h"

static int conv_check(nn_backend *b, const char *op, const nn_conv_geom *g)
{
    char why[192];
    return nn_conv_geom_problem(op, g, why, sizeof why) ? nn_backend_fail(b, "%s", why) : 0;
}

int nn_cpu_conv2d_workspace(nn_backend *b, const nn_conv_geom *g, size_t *bytes)
{
    *bytes = 0;
    if (conv_check(b, "conv2d_workspace", g) != 0)
        return -1;
    *bytes = nn_direct_conv_usable(g) ? nn_cpu_direct_workspace(b, g) : nn_cpu_im2col_workspace(b, g);
    return 0;
}

int nn_cpu_conv2d_forward(nn_backend *b, const nn_conv_geom *g,
                          const float *x,     /* (n, c_in, h_in, w_in) */
                          const float *w,     /* (c_out, c_in, k_h, k_w) */
                          const float *bias,  /* (c_out) or NULL */
                          float *y,           /* (n, c_out, h_out, w_out) */
                          void *ws)           /* conv2d_workspace(g) bytes */
{
    if (conv_check(b, "conv2d_forward", g) != 0)
        return -1;
    if (!ws)
        return nn_backend_fail(b, "conv2d_forward: no workspace");
    if (nn_direct_conv_usable(g))
        nn_cpu_direct_forward(b, g, x, w, bias, y, ws);
    else
        nn_cpu_im2col_forward(b, g, x, w, bias, y, ws);
    return 0;
}

int nn_cpu_conv2d_backward(nn_backend *b, const nn_conv_geom *g,
                           const float *x,    /* (n, c_in, h_in, w_in) */
                           const float *w,    /* (c_out, c_in, k_h, k_w) */
                           const float *dy,   /* (n, c_out, h_out, w_out) */
                           float *dx,         /* like x, or NULL */
                           float *dw,         /* like w, or NULL */
                           float *dbias,      /* (c_out) or NULL */
                           void *ws)          /* conv2d_workspace(g) bytes */
{
    if (conv_check(b, "conv2d_backward", g) != 0)
        return -1;
    if (!ws)
        return nn_backend_fail(b, "conv2d_backward: no workspace");
    if (nn_direct_conv_usable(g))
        nn_cpu_direct_backward(b, g, x, w, dy, dx, dw, dbias, ws);
    else
        nn_cpu_im2col_backward(b, g, x, w, dy, dx, dw, dbias, ws);
    return 0;
}
