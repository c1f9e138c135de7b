/* backends/cuda/cuda_merge.cu - the graph's operations on the GPU (backend.h):
 * add, mul, slice and accumulate, forward and backward side by side. Each
 * element is computed as backends/cpu_ref/cpu_ref_graph.c computes it (one add, one
 * multiply: nothing for nvcc to contract into a fused multiply-add), so the
 * GPU gives the CPU's bits. Grid-stride loops over size_t indices; a
 * gradient that is not wanted (NULL) is skipped by a flag, in one launch. */
#include "cuda_backend.h"

static unsigned merge_blocks(size_t n)
{
    size_t blocks = (n + GPU_THREADS - 1) / GPU_THREADS;
    if (blocks < 1)
        blocks = 1;
    return blocks > GPU_MAX_BLOCKS ? GPU_MAX_BLOCKS : (unsigned)blocks;
}

/* ---- add: y = scale (a + c); da = dc = scale dy ---- */

/* a and c may be one buffer (x + x): not __restrict__ */
__global__ void add_forward_kernel(size_t n, float scale, const float *a, const float *c,
                                   float *__restrict__ y)
{
    GRID_STRIDE(i, n)
        y[i] = scale * (a[i] + c[i]);
}

__global__ void add_backward_kernel(size_t n, float scale, const float *__restrict__ dy,
                                    float *__restrict__ da, float *__restrict__ dc)
{
    GRID_STRIDE(i, n) {
        float g = scale * dy[i];
        if (da)
            da[i] = g;
        if (dc)
            dc[i] = g;
    }
}

int gpu_add_forward(nn_backend *b, size_t n, float scale, const float *a, const float *c, float *y)
{
    if (n == 0)
        return 0;
    NN_LAUNCH(add_forward_kernel, merge_blocks(n), GPU_THREADS, 0, gpu_of(b)->stream, n, scale, a,
              c, y);
    return gpu_launched(b, "add_forward", "add_forward_kernel");
}

int gpu_add_backward(nn_backend *b, size_t n, float scale, const float *dy, float *da, float *dc)
{
    if (n == 0 || (!da && !dc))
        return 0;
    NN_LAUNCH(add_backward_kernel, merge_blocks(n), GPU_THREADS, 0, gpu_of(b)->stream, n, scale,
              dy, da, dc);
    return gpu_launched(b, "add_backward", "add_backward_kernel");
}

/* ---- mul: y = a c; da = dy c, dc = dy a ---- */

__global__ void mul_forward_kernel(size_t n, const float *a, const float *c, float *__restrict__ y)
{
    GRID_STRIDE(i, n)
        y[i] = a[i] * c[i];
}

__global__ void mul_backward_kernel(size_t n, const float *a, const float *c,
                                    const float *__restrict__ dy, float *__restrict__ da,
                                    float *__restrict__ dc)
{
    GRID_STRIDE(i, n) {
        float g = dy[i];
        if (da)
            da[i] = g * c[i];
        if (dc)
            dc[i] = g * a[i];
    }
}

int gpu_mul_forward(nn_backend *b, size_t n, const float *a, const float *c, float *y)
{
    if (n == 0)
        return 0;
    NN_LAUNCH(mul_forward_kernel, merge_blocks(n), GPU_THREADS, 0, gpu_of(b)->stream, n, a, c, y);
    return gpu_launched(b, "mul_forward", "mul_forward_kernel");
}

int gpu_mul_backward(nn_backend *b, size_t n, const float *a, const float *c, const float *dy,
                     float *da, float *dc)
{
    if (n == 0 || (!da && !dc))
        return 0;
    NN_LAUNCH(mul_backward_kernel, merge_blocks(n), GPU_THREADS, 0, gpu_of(b)->stream, n, a, c,
              dy, da, dc);
    return gpu_launched(b, "mul_backward", "mul_backward_kernel");
}

/* ---- slice: columns [from, to) of (rows, width) ---- */

static int slice_check(nn_backend *b, const char *op, int rows, int width, int from, int to)
{
    if (rows < 0 || from < 0 || to <= from || to > width)
        return gpu_fail(b, "%s: columns [%d, %d) of %d (rows %d) out of range", op, from, to,
                        width, rows);
    return 0;
}

__global__ void slice_forward_kernel(size_t total, int width, int from, int w,
                                     const float *__restrict__ x, float *__restrict__ y)
{
    GRID_STRIDE(i, total) {
        size_t r = i / (size_t)w, k = i % (size_t)w;
        y[i] = x[r * (size_t)width + (size_t)from + k];
    }
}

/* every element of dx written: dy's inside the slice, 0 outside */
__global__ void slice_backward_kernel(size_t total, int width, int from, int to,
                                      const float *__restrict__ dy, float *__restrict__ dx)
{
    GRID_STRIDE(i, total) {
        size_t r = i / (size_t)width;
        int k = (int)(i % (size_t)width);
        dx[i] = k >= from && k < to ? dy[r * (size_t)(to - from) + (size_t)(k - from)] : 0.0f;
    }
}

int gpu_slice_forward(nn_backend *b, int rows, int width, int from, int to, const float *x, float *y)
{
    size_t total = (size_t)rows * (size_t)(to - from);
    if (slice_check(b, "slice_forward", rows, width, from, to) != 0)
        return -1;
    if (total == 0)
        return 0;
    NN_LAUNCH(slice_forward_kernel, merge_blocks(total), GPU_THREADS, 0, gpu_of(b)->stream, total,
              width, from, to - from, x, y);
    return gpu_launched(b, "slice_forward", "slice_forward_kernel");
}

int gpu_slice_backward(nn_backend *b, int rows, int width, int from, int to, const float *dy,
                       float *dx)
{
    size_t total = (size_t)rows * (size_t)width;
    if (slice_check(b, "slice_backward", rows, width, from, to) != 0)
        return -1;
    if (total == 0)
        return 0;
    NN_LAUNCH(slice_backward_kernel, merge_blocks(total), GPU_THREADS, 0, gpu_of(b)->stream, total,
              width, from, to, dy, dx);
    return gpu_launched(b, "slice_backward", "slice_backward_kernel");
}

/* ---- accumulate: dst += src ---- */

__global__ void accumulate_kernel(size_t n, const float *__restrict__ src, float *__restrict__ dst)
{
    GRID_STRIDE(i, n)
        dst[i] += src[i];
}

int gpu_accumulate(nn_backend *b, size_t n, const float *src, float *dst)
{
    if (n == 0)
        return 0;
    NN_LAUNCH(accumulate_kernel, merge_blocks(n), GPU_THREADS, 0, gpu_of(b)->stream, n, src, dst);
    return gpu_launched(b, "accumulate", "accumulate_kernel");
}
