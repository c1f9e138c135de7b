/* backends/cpu_ref/cpu_ref_graph.c - the reference backend's graph operations (add,
 * mul, slice, accumulate: backend.h), forward and backward side by side.
 * Plain loops that GCC vectorises; the OpenBLAS backend uses them as they are
 * (cpu_ref.h). The two inputs of add and mul may be one buffer, so only the
 * outputs are restrict. */
#include "cpu_ref.h"

#include <string.h>

int nn_ref_add_forward(nn_backend *b, size_t n, float scale, const float *a, const float *c,
                       float *restrict y)
{
    (void)b;
    for (size_t i = 0; i < n; i++)
        y[i] = scale * (a[i] + c[i]);
    return 0;
}

int nn_ref_add_backward(nn_backend *b, size_t n, float scale, const float *restrict dy,
                        float *restrict da, float *restrict dc)
{
    (void)b;
    if (da)
        for (size_t i = 0; i < n; i++)
            da[i] = scale * dy[i];
    if (dc)
        for (size_t i = 0; i < n; i++)
            dc[i] = scale * dy[i];
    return 0;
}

int nn_ref_mul_forward(nn_backend *b, size_t n, const float *a, const float *c, float *restrict y)
{
    (void)b;
    for (size_t i = 0; i < n; i++)
        y[i] = a[i] * c[i];
    return 0;
}

int nn_ref_mul_backward(nn_backend *b, size_t n, const float *a, const float *c,
                        const float *restrict dy, float *restrict da, float *restrict dc)
{
    (void)b;
    if (da)
        for (size_t i = 0; i < n; i++)
            da[i] = dy[i] * c[i];
    if (dc)
        for (size_t i = 0; i < n; i++)
            dc[i] = dy[i] * a[i];
    return 0;
}

static int slice_check(nn_backend *b, const char *op, int rows, int width, int from, int to)
{
    if (rows < 0 || from < 0 || to <= from || to > width)
        return nn_backend_fail(b, "%s: columns [%d, %d) of %d (rows %d) out of range", op, from,
                               to, width, rows);
    return 0;
}

int nn_ref_slice_forward(nn_backend *b, int rows, int width, int from, int to,
                         const float *restrict x, float *restrict y)
{
    size_t w = (size_t)(to - from);
    if (slice_check(b, "slice_forward", rows, width, from, to) != 0)
        return -1;
    for (int r = 0; r < rows; r++)
        memcpy(y + (size_t)r * w, x + (size_t)r * (size_t)width + (size_t)from, w * sizeof *y);
    return 0;
}

int nn_ref_slice_backward(nn_backend *b, int rows, int width, int from, int to,
                          const float *restrict dy, float *restrict dx)
{
    size_t w = (size_t)(to - from);
    if (slice_check(b, "slice_backward", rows, width, from, to) != 0)
        return -1;
    memset(dx, 0, (size_t)rows * (size_t)width * sizeof *dx);
    for (int r = 0; r < rows; r++)
        memcpy(dx + (size_t)r * (size_t)width + (size_t)from, dy + (size_t)r * w, w * sizeof *dx);
    return 0;
}

int nn_ref_accumulate(nn_backend *b, size_t n, const float *restrict src, float *restrict dst)
{
    (void)b;
    for (size_t i = 0; i < n; i++)
        dst[i] += src[i];
    return 0;
}
