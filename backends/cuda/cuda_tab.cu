/* backends/cuda/cuda_tab.cu - the GPU backend's batch norm (ghost batches),
 * GLU and sparsemax kernels: TabNet's single-input layers (backend.h has the
 * contracts, backends/cpu_ref/cpu_ref_tab.c the reference arithmetic).
 *
 * Every sum runs in a fixed order in one thread (no float atomics), so a call
 * gives the same bits eager or replayed. Batch norm: a thread per (chunk,
 * feature) normalises or writes dx, recomputing its chunk's statistics; a
 * thread per feature walks the chunks in order for what must be in order
 * (the running update) or summed over the batch (dgamma, dbeta). Sparsemax:
 * a thread per row, tau by Michelot's iteration as the fast CPU backend.
 * Rows are TabNet's few dozen features: simple before fast here. */
#include "cuda_backend.h"
#include "ghost_batch.h"

#include <math.h>

static unsigned tab_blocks(size_t n)
{
    size_t blocks = (n + GPU_THREADS - 1) / GPU_THREADS;
    return blocks < 1 ? 1 : blocks > GPU_MAX_BLOCKS ? GPU_MAX_BLOCKS : (unsigned)blocks;
}

/* ---- batch norm --------------------------------------------------------------- */

/* Mean and biased variance of feature f over rows [r0, r1), two passes. */
__device__ static void bn_stats(const float *x, int c, int f, int r0, int r1, float *mean, float *var)
{
    float s = 0.0f, q = 0.0f;
    for (int i = r0; i < r1; i++)
        s += x[(size_t)i * c + f];
    *mean = s / (float)(r1 - r0);
    for (int i = r0; i < r1; i++) {
        float d = x[(size_t)i * c + f] - *mean;
        q += d * d;
    }
    *var = q / (float)(r1 - r0);
}

/* Thread (chunk, f): y of its chunk; in eval one chunk, the running statistics. */
__global__ void bn_forward_kernel(nn_bn_geom g, int training, int s, const float *__restrict__ x,
                                  const float *__restrict__ gamma, const float *__restrict__ beta,
                                  const float *__restrict__ running, float *__restrict__ y)
{
    size_t total = (size_t)((g.n + s - 1) / s) * g.c;
    GRID_STRIDE(k, total) {
        int f = (int)(k % (size_t)g.c), r0 = (int)(k / (size_t)g.c) * s;
        int r1 = r0 + s < g.n ? r0 + s : g.n;
        float mean = running[f], var = running[g.c + f];
        if (training)
            bn_stats(x, g.c, f, r0, r1, &mean, &var);
        float invstd = 1.0f / sqrtf(var + g.eps);
        for (int i = r0; i < r1; i++) {
            size_t e = (size_t)i * g.c + f;
            y[e] = (x[e] - mean) * invstd * gamma[f] + beta[f];
        }
    }
}

/* Thread f: the running statistics, chunk after chunk (after the forward kernel). */
__global__ void bn_running_kernel(nn_bn_geom g, int s, const float *__restrict__ x,
                                  float *__restrict__ running)
{
    GRID_STRIDE(k, (size_t)g.c) {
        int f = (int)k;
        for (int r0 = 0; r0 < g.n; r0 += s) {
            int r1 = r0 + s < g.n ? r0 + s : g.n, m = r1 - r0;
            float mean, var;
            bn_stats(x, g.c, f, r0, r1, &mean, &var);
            running[f] = (1.0f - g.momentum) * running[f] + g.momentum * mean;
            running[g.c + f] = (1.0f - g.momentum) * running[g.c + f] +
                               g.momentum * var * (float)m / (float)(m - 1);
        }
    }
}

/* dy's sums over rows [r0, r1) of feature f: sum dy and sum dy xhat. */
__device__ static void bn_dy_sums(const float *x, const float *dy, int c, int f, int r0, int r1,
                                  float mean, float invstd, float *sdy, float *sdyx)
{
    *sdy = *sdyx = 0.0f;
    for (int i = r0; i < r1; i++) {
        size_t e = (size_t)i * c + f;
        *sdy += dy[e];
        *sdyx += dy[e] * (x[e] - mean) * invstd;
    }
}

__global__ void bn_backward_kernel(nn_bn_geom g, int s, const float *__restrict__ x,
                                   const float *__restrict__ gamma, const float *__restrict__ dy,
                                   float *__restrict__ dx)
{
    size_t total = (size_t)((g.n + s - 1) / s) * g.c;
    GRID_STRIDE(k, total) {
        int f = (int)(k % (size_t)g.c), r0 = (int)(k / (size_t)g.c) * s;
        int r1 = r0 + s < g.n ? r0 + s : g.n, m = r1 - r0;
        float mean, var, sdy, sdyx;
        bn_stats(x, g.c, f, r0, r1, &mean, &var);
        float invstd = 1.0f / sqrtf(var + g.eps);
        bn_dy_sums(x, dy, g.c, f, r0, r1, mean, invstd, &sdy, &sdyx);
        for (int i = r0; i < r1; i++) {
            size_t e = (size_t)i * g.c + f;
            float xhat = (x[e] - mean) * invstd;
            dx[e] = gamma[f] * invstd * (dy[e] - sdy / (float)m - xhat * sdyx / (float)m);
        }
    }
}

/* Thread f: dgamma and dbeta over the whole batch, chunk after chunk. */
__global__ void bn_param_grad_kernel(nn_bn_geom g, int s, const float *__restrict__ x,
                                     const float *__restrict__ dy, float *dgamma, float *dbeta)
{
    GRID_STRIDE(k, (size_t)g.c) {
        int f = (int)k;
        float dg = 0.0f, db = 0.0f;
        for (int r0 = 0; r0 < g.n; r0 += s) {
            int r1 = r0 + s < g.n ? r0 + s : g.n;
            float mean, var, sdy, sdyx;
            bn_stats(x, g.c, f, r0, r1, &mean, &var);
            bn_dy_sums(x, dy, g.c, f, r0, r1, mean, 1.0f / sqrtf(var + g.eps), &sdy, &sdyx);
            dg += sdyx;
            db += sdy;
        }
        if (dgamma)
            dgamma[f] = dg;
        if (dbeta)
            dbeta[f] = db;
    }
}

static int bn_check(nn_backend *b, const char *op, const nn_bn_geom *g, int training)
{
    char why[256];
    if (nn_bn_geom_problem(op, g->n, g->c, g->virtual_batch, g->eps, training, why, sizeof why))
        return gpu_fail(b, "%s", why);
    return 0;
}

int gpu_batchnorm_forward(nn_backend *b, const nn_bn_geom *g, int training, const float *x,
                          const float *gamma, const float *beta, float *running, float *y)
{
    if (bn_check(b, "batchnorm_forward", g, training) != 0)
        return -1;
    const int s = training ? nn_ghost_chunk(g->n, g->virtual_batch) : g->n;
    const size_t items = (size_t)((g->n + s - 1) / s) * g->c;
    NN_LAUNCH(bn_forward_kernel, tab_blocks(items), GPU_THREADS, 0, gpu_of(b)->stream, *g,
              training, s, x, gamma, beta, running, y);
    if (gpu_launched(b, "batchnorm_forward", "bn_forward_kernel") != 0)
        return -1;
    if (!training)
        return 0;
    NN_LAUNCH(bn_running_kernel, tab_blocks((size_t)g->c), GPU_THREADS, 0, gpu_of(b)->stream, *g,
              s, x, running);
    return gpu_launched(b, "batchnorm_forward", "bn_running_kernel");
}

int gpu_batchnorm_backward(nn_backend *b, const nn_bn_geom *g, const float *x, const float *gamma,
                           const float *dy, float *dx, float *dgamma, float *dbeta)
{
    if (bn_check(b, "batchnorm_backward", g, 1) != 0)
        return -1;
    const int s = nn_ghost_chunk(g->n, g->virtual_batch);
    const size_t items = (size_t)((g->n + s - 1) / s) * g->c;
    if (dx) {
        NN_LAUNCH(bn_backward_kernel, tab_blocks(items), GPU_THREADS, 0, gpu_of(b)->stream, *g, s,
                  x, gamma, dy, dx);
        if (gpu_launched(b, "batchnorm_backward", "bn_backward_kernel") != 0)
            return -1;
    }
    if (!dgamma && !dbeta)
        return 0;
    NN_LAUNCH(bn_param_grad_kernel, tab_blocks((size_t)g->c), GPU_THREADS, 0, gpu_of(b)->stream,
              *g, s, x, dy, dgamma, dbeta);
    return gpu_launched(b, "batchnorm_backward", "bn_param_grad_kernel");
}

/* ---- GLU ------------------------------------------------------------------------ */

__global__ void glu_forward_kernel(size_t total, int half, const float *__restrict__ x,
                                   float *__restrict__ y)
{
    GRID_STRIDE(k, total) {
        size_t i = k / (size_t)half, j = k % (size_t)half;
        const float *row = x + i * 2 * half;
        y[k] = row[j] / (1.0f + expf(-row[half + j]));
    }
}

__global__ void glu_backward_kernel(size_t total, int half, const float *__restrict__ x,
                                    const float *__restrict__ dy, float *__restrict__ dx)
{
    GRID_STRIDE(k, total) {
        size_t i = k / (size_t)half, j = k % (size_t)half;
        const float *row = x + i * 2 * half;
        float *drow = dx + i * 2 * half;
        float s = 1.0f / (1.0f + expf(-row[half + j]));
        drow[j] = dy[k] * s;
        drow[half + j] = dy[k] * row[j] * s * (1.0f - s);
    }
}

int gpu_glu_forward(nn_backend *b, int n, int half, const float *x, float *y)
{
    if (n < 0 || half < 1)
        return gpu_fail(b, "glu_forward: bad shape (n %d, half %d)", n, half);
    size_t total = (size_t)n * (size_t)half;
    if (total == 0)
        return 0;
    NN_LAUNCH(glu_forward_kernel, tab_blocks(total), GPU_THREADS, 0, gpu_of(b)->stream, total,
              half, x, y);
    return gpu_launched(b, "glu_forward", "glu_forward_kernel");
}

int gpu_glu_backward(nn_backend *b, int n, int half, const float *x, const float *dy, float *dx)
{
    if (n < 0 || half < 1)
        return gpu_fail(b, "glu_backward: bad shape (n %d, half %d)", n, half);
    size_t total = (size_t)n * (size_t)half;
    if (total == 0)
        return 0;
    NN_LAUNCH(glu_backward_kernel, tab_blocks(total), GPU_THREADS, 0, gpu_of(b)->stream, total,
              half, x, dy, dx);
    return gpu_launched(b, "glu_backward", "glu_backward_kernel");
}

/* ---- sparsemax ---------------------------------------------------------------------- */

/* Michelot's iteration (backends/cpu/cpu_tab.c): tau from the elements above the
 * previous tau until their count stops falling; z = x - top. */
__device__ static float sparsemax_tau(const float *x, int d, float top)
{
    float tau = -INFINITY;
    int kept = d + 1;
    for (;;) {
        float sum = 0.0f;
        int k = 0;
        for (int j = 0; j < d; j++) {
            float v = x[j] - top;
            if (v > tau) {
                sum += v;
                k++;
            }
        }
        if (k == kept || k == 0)
            return tau;
        kept = k;
        tau = (sum - 1.0f) / (float)k;
    }
}

__global__ void sparsemax_forward_kernel(int n, int d, const float *__restrict__ x,
                                         float *__restrict__ y)
{
    GRID_STRIDE(i, (size_t)n) {
        const float *row = x + i * d;
        float top = row[0];
        for (int j = 1; j < d; j++)
            top = row[j] > top ? row[j] : top;
        float tau = sparsemax_tau(row, d, top);
        for (int j = 0; j < d; j++) {
            float v = row[j] - top - tau;
            y[i * d + j] = v > 0.0f ? v : 0.0f;
        }
    }
}

/* d/dy of -y log(y + 1e-15) */
__device__ static float entropy_grad(float y)
{
    return -(logf(y + 1e-15f) + y / (y + 1e-15f));
}

__global__ void sparsemax_backward_kernel(int n, int d, const float *__restrict__ y,
                                          const float *__restrict__ dy, float aux,
                                          float *__restrict__ dx)
{
    GRID_STRIDE(i, (size_t)n) {
        const float *yr = y + i * d, *dyr = dy + i * d;
        float *dxr = dx + i * d;
        float sum = 0.0f;
        int support = 0;
        for (int j = 0; j < d; j++) {
            float v = yr[j] > 0.0f ? dyr[j] + (aux > 0.0f ? aux * entropy_grad(yr[j]) : 0.0f) : 0.0f;
            dxr[j] = v;
            sum += v;
            support += yr[j] > 0.0f;
        }
        float mean = support ? sum / (float)support : 0.0f;
        for (int j = 0; j < d; j++)
            dxr[j] = yr[j] > 0.0f ? dxr[j] - mean : 0.0f;
    }
}

/* One block: each thread sums its rows' entropies, then a fixed tree. */
__global__ void sparsemax_entropy_kernel(int n, int d, const float *__restrict__ y,
                                         float scale, float *stats)
{
    __shared__ double shared[GPU_THREADS];
    double h = 0.0;
    for (size_t k = threadIdx.x; k < (size_t)n * d; k += blockDim.x)
        h -= (double)y[k] * log((double)y[k] + 1e-15);
    shared[threadIdx.x] = h;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            shared[threadIdx.x] += shared[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        stats[0] += (float)(shared[0] * scale);
}

int gpu_sparsemax_forward(nn_backend *b, int n, int d, const float *x, float *y)
{
    if (n < 0 || d < 1)
        return gpu_fail(b, "sparsemax_forward: bad shape (n %d, d %d)", n, d);
    if (n == 0)
        return 0;
    NN_LAUNCH(sparsemax_forward_kernel, tab_blocks((size_t)n), GPU_THREADS, 0, gpu_of(b)->stream,
              n, d, x, y);
    return gpu_launched(b, "sparsemax_forward", "sparsemax_forward_kernel");
}

int gpu_sparsemax_backward(nn_backend *b, int n, int d, const float *y, const float *dy,
                           float sparsity, float *dx)
{
    if (n < 1 || d < 1 || !(sparsity >= 0.0f))
        return gpu_fail(b, "sparsemax_backward: bad arguments (n %d, d %d, sparsity %g)", n, d,
                        (double)sparsity);
    NN_LAUNCH(sparsemax_backward_kernel, tab_blocks((size_t)n), GPU_THREADS, 0, gpu_of(b)->stream,
              n, d, y, dy, sparsity / (float)n, dx);
    return gpu_launched(b, "sparsemax_backward", "sparsemax_backward_kernel");
}

int gpu_sparsemax_entropy(nn_backend *b, int n, int d, const float *y, float sparsity, float *stats)
{
    if (n < 1 || d < 1 || !(sparsity >= 0.0f))
        return gpu_fail(b, "sparsemax_entropy: bad arguments (n %d, d %d, sparsity %g)", n, d,
                        (double)sparsity);
    NN_LAUNCH(sparsemax_entropy_kernel, 1, GPU_THREADS, 0, gpu_of(b)->stream, n, d, y,
              (float)sparsity / (float)n, stats);
    return gpu_launched(b, "sparsemax_entropy", "sparsemax_entropy_kernel");
}
