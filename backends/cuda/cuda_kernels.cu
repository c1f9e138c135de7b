/* backends/cuda/cuda_kernels.cu - the GPU backend's own kernels: where no
 * cuBLAS or cuDNN call fits the op table's contract (backend.h) exactly.
 *
 * Each follows the reference loop of backends/cpu_ref/cpu_ref.c, in float, with the
 * same edge rules (NaN through relu, pooling's gradient to the first maximum
 * or the last NaN, p = 1 dropout, SGD's first step). Sums are made in a
 * fixed order (no float atomics), so the same call twice, eager or replayed
 * from a graph, gives the same bits.
 * Elementwise kernels use grid-stride loops over size_t indices.
 *
 * Why not cuDNN for activations: cudnnActivationBackward reads both x and
 * y, which the contract lets a caller pass as NULL. One launch either way.
 * Max pooling is in cuda_pool.cu, the bias gradients in cuda_reduce.cu. */
#include "geom_check.h"
#include "cuda_backend.h"

#include <math.h>

#include "dropout_hash.h"
#include "mish.h"          /* nn_mish_ref, nn_mish_grad_ref: cpu-ref's formula */

/* ---- bias: add per row (linear forward); its sums are in cuda_reduce.cu ---- */

__global__ void bias_rows_kernel(size_t total, int out, const float *__restrict__ bias,
                                 float *__restrict__ y)
{
    GRID_STRIDE(i, total)
        y[i] += bias[i % (size_t)out];
}

int gpu_bias_rows(nn_backend *b, const char *op, int n, int out, const float *bias, float *y)
{
    size_t total = (size_t)n * (size_t)out;
    NN_LAUNCH(bias_rows_kernel, blocks_for(total, GPU_MAX_BLOCKS), GPU_THREADS, 0, gpu_of(b)->stream,
              total, out, bias, y);
    return gpu_launched(b, op, "bias_rows_kernel");
}

/* y (n, c, hw) += bias[c]: the convolution's bias, in place of cudnnAddTensor
 * (its op_generic_tensor_kernel was 5% of LeNet's kernel time at batch 4 on
 * an H200). One add per element, as cuDNN's alpha = beta = 1: the same bits. */
__global__ void bias_planes_kernel(size_t total, size_t hw, int c, const float *__restrict__ bias,
                                   float *__restrict__ y)
{
    GRID_STRIDE(i, total)
        y[i] += bias[(i / hw) % (size_t)c];
}

int gpu_bias_planes(nn_backend *b, const char *op, int n, int c, size_t hw, const float *bias,
                    float *y)
{
    size_t total = (size_t)n * (size_t)c * hw;
    NN_LAUNCH(bias_planes_kernel, blocks_for(total, GPU_MAX_BLOCKS), GPU_THREADS, 0,
              gpu_of(b)->stream, total, hw, c, bias, y);
    return gpu_launched(b, op, "bias_planes_kernel");
}

/* ---- activations --------------------------------------------------------------------- */

__global__ void act_forward_kernel(int act, size_t n, const float *__restrict__ x,
                                   float *__restrict__ y)
{
    GRID_STRIDE(i, n) {
        float v = x[i];
        if (act == NN_ACT_RELU)
            y[i] = v < 0.0f ? 0.0f : v;      /* a NaN passes, as torch.relu */
        else if (act == NN_ACT_TANH)
            y[i] = tanhf(v);
        else
            y[i] = nn_mish_ref(v);
    }
}

__global__ void act_backward_kernel(int act, size_t n, const float *__restrict__ x,
                                    const float *__restrict__ y, const float *__restrict__ dy,
                                    float *__restrict__ dx)
{
    GRID_STRIDE(i, n) {
        if (act == NN_ACT_RELU)
            dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
        else if (act == NN_ACT_TANH)
            dx[i] = dy[i] * (1.0f - y[i] * y[i]);
        else
            dx[i] = dy[i] * nn_mish_grad_ref(x[i]);
    }
}

static int act_known(enum nn_act act)
{
    return act == NN_ACT_RELU || act == NN_ACT_TANH || act == NN_ACT_MISH;
}

int gpu_act_forward(nn_backend *b, enum nn_act act, size_t n, const float *x, float *y)
{
    if (!act_known(act))
        return gpu_fail(b, "act_forward: unknown activation %d", (int)act);
    if (n == 0)
        return 0;
    NN_LAUNCH(act_forward_kernel, blocks_for(n, GPU_MAX_BLOCKS), GPU_THREADS, 0, gpu_of(b)->stream,
              (int)act, n, x, y);
    return gpu_launched(b, "act_forward", "act_forward_kernel");
}

int gpu_act_backward(nn_backend *b, enum nn_act act, size_t n, const float *x, const float *y,
                     const float *dy, float *dx)
{
    if (!act_known(act))
        return gpu_fail(b, "act_backward: unknown activation %d", (int)act);
    if ((act == NN_ACT_TANH && !y) || (act != NN_ACT_TANH && !x))
        return gpu_fail(b, "act_backward: %s needs its %s", act == NN_ACT_TANH ? "tanh" : "relu/mish",
                        act == NN_ACT_TANH ? "output y" : "input x");
    if (n == 0)
        return 0;
    NN_LAUNCH(act_backward_kernel, blocks_for(n, GPU_MAX_BLOCKS), GPU_THREADS, 0, gpu_of(b)->stream,
              (int)act, n, x, y, dy, dx);
    return gpu_launched(b, "act_backward", "act_backward_kernel");
}

/* ---- dropout: the mask of backends/dropout_hash.h, the same bits as the CPU ---- */

/* Run eagerly, step is NULL and counter the call's own; recorded in a graph,
 * counter is the call's offset from the step's base, read from step at
 * replay (gpu_recorded_step). The key is per call, one mix per element after
 * it, as on the CPU. */
__global__ void dropout_kernel(size_t n, uint32_t threshold, float scale, uint64_t seed,
                               unsigned long long counter, const gpu_step_values *step,
                               const float *__restrict__ in, float *__restrict__ out)
{
    uint64_t c = step ? (uint64_t)(step->dropout_base + counter) : (uint64_t)counter;
    uint64_t key = nn_dropout_key(seed, c);
    GRID_STRIDE(i, n) {
        float v = in[i] * scale;
        out[i] = nn_dropout_bits(key, i) >= threshold ? v : 0.0f;
    }
}

/* Forward and backward are the same map (scale what is kept), on x or dy.
 * p = 0 keeps everything with scale 1 (x * 1 is x: cpu-ref's copy). */
static int dropout(nn_backend *b, const char *op, size_t n, float p, uint64_t seed,
                   uint64_t counter, const float *in, float *out)
{
    if (!(p >= 0.0f && p <= 1.0f))
        return gpu_fail(b, "%s: probability %g outside [0, 1]", op, (double)p);
    if (n == 0)
        return 0;
    const float scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
    NN_LAUNCH(dropout_kernel, blocks_for(n, GPU_MAX_BLOCKS), GPU_THREADS, 0, gpu_of(b)->stream,
              n, nn_dropout_threshold(p), scale, seed, gpu_counter_arg(b, counter),
              gpu_recorded_step(b), in, out);
    return gpu_launched(b, op, "dropout_kernel");
}

int gpu_dropout_forward(nn_backend *b, size_t n, float p, uint64_t seed, uint64_t counter,
                        const float *x, float *y)
{
    return dropout(b, "dropout_forward", n, p, seed, counter, x, y);
}

int gpu_dropout_backward(nn_backend *b, size_t n, float p, uint64_t seed, uint64_t counter,
                         const float *dy, float *dx)
{
    return dropout(b, "dropout_backward", n, p, seed, counter, dy, dx);
}

/* ---- losses: one launch, a deterministic sum into stats ------------------------------ */

/* Sums v (one per thread) over the block in a fixed tree order; thread 0 gets it. */
__device__ static double block_sum(double v, double *shared)
{
    shared[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            shared[threadIdx.x] += shared[threadIdx.x + s];
        __syncthreads();
    }
    double r = shared[0];
    __syncthreads();
    return r;
}

/* Each block leaves its two partial sums; the last block to finish (the
 * threadFenceReduction pattern) adds all partials in block order, so the
 * result does not depend on which block finished when. atomicInc with the
 * limit gridDim.x - 1 puts the counter back to 0 for the next launch. */
__device__ static void finish_sums(double a, double c, double scale_a, float *stats, int two,
                                   double *partials, unsigned int *blocks_done)
{
    __shared__ int last;
    if (threadIdx.x == 0) {
        partials[2 * blockIdx.x] = a;
        partials[2 * blockIdx.x + 1] = c;
        __threadfence();
        last = atomicInc(blocks_done, gridDim.x - 1) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        volatile double *p = partials;   /* written by other blocks: past L1 */
        double sa = 0.0, sc = 0.0;
        for (unsigned k = 0; k < gridDim.x; k++) {
            sa += p[2 * k];
            sc += p[2 * k + 1];
        }
        stats[0] += (float)(sa * scale_a);
        if (two)
            stats[1] += (float)sc;
    }
}

/* Softmax cross-entropy, one row per thread (classes are few). A label out of
 * range is claimed once and described in mapped host memory; that row is
 * skipped (its gradient zeroed), and the next wait reports it. */
__global__ void softmax_xent_kernel(int n, int classes, const float *__restrict__ logits,
                                    const int32_t *__restrict__ labels, float *dlogits,
                                    float inv_n_f, double inv_n, float *stats, double *partials,
                                    unsigned int *blocks_done, int *fault_claim, int *fault)
{
    __shared__ double shared[GPU_THREADS];
    double loss = 0.0, correct = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float *l = logits + (size_t)i * classes;
        float *d = dlogits ? dlogits + (size_t)i * classes : NULL;
        int label = labels[i];
        if (label < 0 || label >= classes) {
            if (atomicCAS(fault_claim, 0, 1) == 0) {
                fault[1] = i;
                fault[2] = label;
                fault[3] = classes;
                __threadfence_system();
                fault[0] = 1;
            }
            if (d)
                for (int c = 0; c < classes; c++)
                    d[c] = 0.0f;
            continue;
        }
        int arg = 0;                      /* first maximum: the accuracy's argmax */
        for (int c = 1; c < classes; c++)
            if (l[c] > l[arg])
                arg = c;
        const float mx = l[arg];
        float sum = 0.0f;
        for (int c = 0; c < classes; c++)
            sum += expf(l[c] - mx);
        /* -log softmax[label] = log(sum e^(l - max)) - (l[label] - max) */
        loss += (double)logf(sum) - ((double)l[label] - (double)mx);
        correct += arg == label;
        if (d) {
            const float inv_sum = 1.0f / sum;
            for (int c = 0; c < classes; c++)
                d[c] = (expf(l[c] - mx) * inv_sum - (c == label ? 1.0f : 0.0f)) * inv_n_f;
        }
    }
    loss = block_sum(loss, shared);
    correct = block_sum(correct, shared);
    finish_sums(loss, correct, inv_n, stats, 1, partials, blocks_done);
}

int gpu_softmax_xent(nn_backend *b, int n, int classes, const float *logits,
                     const int32_t *labels, float *dlogits, float *stats)
{
    gpu_state *s = gpu_of(b);
    if (n <= 0 || classes <= 0)
        return gpu_fail(b, "softmax_xent: bad shape n=%d classes=%d", n, classes);
    NN_LAUNCH(softmax_xent_kernel, blocks_for((size_t)n, GPU_RED_BLOCKS), GPU_THREADS, 0, s->stream,
              n, classes, logits, labels, dlogits, (float)(1.0 / n), 1.0 / n, stats, s->partials,
              s->blocks_done, s->fault_claim, s->fault_dev);
    return gpu_launched(b, "softmax_xent", "softmax_xent_kernel");
}

/* Mean squared error: squares summed in double (as cpu-ref), the gradient in float. */
__global__ void mse_kernel(size_t m, const float *__restrict__ pred,
                           const float *__restrict__ target, float *dpred, float scale,
                           double inv_m, float *stats, double *partials,
                           unsigned int *blocks_done)
{
    __shared__ double shared[GPU_THREADS];
    double sum = 0.0;
    GRID_STRIDE(i, m) {
        double d = (double)pred[i] - (double)target[i];
        sum += d * d;
        if (dpred)
            dpred[i] = scale * (pred[i] - target[i]);
    }
    sum = block_sum(sum, shared);
    finish_sums(sum, 0.0, inv_m, stats, 0, partials, blocks_done);
}

int gpu_mse(nn_backend *b, int n, int width, const float *pred, const float *target,
            float *dpred, float *stats)
{
    gpu_state *s = gpu_of(b);
    if (n <= 0 || width <= 0)
        return gpu_fail(b, "mse: bad shape n=%d width=%d", n, width);
    const size_t m = (size_t)n * (size_t)width;
    const double inv_m = 1.0 / (double)m;
    NN_LAUNCH(mse_kernel, blocks_for(m, GPU_RED_BLOCKS), GPU_THREADS, 0, s->stream,
              m, pred, target, dpred, (float)(2.0 * inv_m), inv_m, stats, s->partials,
              s->blocks_done);
    return gpu_launched(b, "mse", "mse_kernel");
}

/* ---- optimisers: one fused kernel each over the flat arena ----------------------------- */

/* torch.optim.SGD as cpu-ref: the first step (t = 1) stores g, undamped.
 * t0: the call's t, or recorded in a graph its offset from the step's t,
 * read from step at replay (gpu_recorded_step). */
__global__ void sgd_kernel(size_t n, float *__restrict__ param, const float *__restrict__ grad,
                           float *__restrict__ velocity, float lr, float wd, float mom,
                           float keep, int nesterov, long long t0, const gpu_step_values *step)
{
    const long long t = step ? step->opt_t + t0 : t0;
    if (mom == 0.0f) {
        GRID_STRIDE(i, n)
            param[i] -= lr * (grad[i] + wd * param[i]);
        return;
    }
    GRID_STRIDE(i, n) {
        float g = grad[i] + wd * param[i];
        float v = t == 1 ? g : mom * velocity[i] + keep * g;
        velocity[i] = v;
        param[i] -= lr * (nesterov ? g + mom * v : v);
    }
}

int gpu_sgd_step(nn_backend *b, size_t n, float *param, const float *grad, float *velocity,
                 const nn_sgd_hyper *h, long t)
{
    if (t < 1)
        return gpu_fail(b, "sgd_step: step %ld, steps count from 1", t);
    if (n == 0)
        return 0;
    NN_LAUNCH(sgd_kernel, blocks_for(n, GPU_MAX_BLOCKS), GPU_THREADS, 0, gpu_of(b)->stream,
              n, param, grad, velocity, h->lr, h->weight_decay, h->momentum, 1.0f - h->dampening,
              h->nesterov, gpu_t_arg(b, t), gpu_recorded_step(b));
    return gpu_launched(b, "sgd_step", "sgd_kernel");
}

/* torch.optim.Adam as cpu-ref. The bias corrections depend on t, which a
 * replay reads from step (t0 as in sgd_kernel), so each block's thread 0
 * computes them (in double, as cpu-ref does once per call) from that t. */
__global__ void adam_kernel(size_t n, float *__restrict__ param, const float *__restrict__ grad,
                            float *__restrict__ m, float *__restrict__ v, float lr, float b1,
                            float b2, float eps, float wd, long long t0, const gpu_step_values *step)
{
    __shared__ float step_size, inv_sqrt_bc2;
    if (threadIdx.x == 0) {
        const long long t = step ? step->opt_t + t0 : t0;
        const double bc1 = 1.0 - pow((double)b1, (double)t);
        const double bc2 = 1.0 - pow((double)b2, (double)t);
        step_size = (float)((double)lr / bc1);
        inv_sqrt_bc2 = (float)(1.0 / sqrt(bc2));
    }
    __syncthreads();
    GRID_STRIDE(i, n) {
        float g = grad[i] + wd * param[i];
        float mi = b1 * m[i] + (1.0f - b1) * g;
        float vi = b2 * v[i] + (1.0f - b2) * g * g;
        m[i] = mi;
        v[i] = vi;
        param[i] -= step_size * mi / (sqrtf(vi) * inv_sqrt_bc2 + eps);
    }
}

int gpu_adam_step(nn_backend *b, size_t n, float *param, const float *grad, float *m, float *v,
                  const nn_adam_hyper *h, long t)
{
    if (t < 1)
        return gpu_fail(b, "adam_step: step %ld, steps count from 1", t);
    if (n == 0)
        return 0;
    NN_LAUNCH(adam_kernel, blocks_for(n, GPU_MAX_BLOCKS), GPU_THREADS, 0, gpu_of(b)->stream,
              n, param, grad, m, v, h->lr, h->beta1, h->beta2, h->eps, h->weight_decay,
              gpu_t_arg(b, t), gpu_recorded_step(b));
    return gpu_launched(b, "adam_step", "adam_kernel");
}

/* ---- gathering a batch from a resident data set ----------------------------------------- */

/* x rows then y rows, in one launch; reads coalesced along each row. */
__global__ void gather_kernel(int n, const int32_t *__restrict__ idx, long first,
                              const float *__restrict__ xs, size_t x_width, float *__restrict__ x,
                              const uint32_t *__restrict__ ys, size_t y_width,
                              uint32_t *__restrict__ y)
{
    const size_t nx = (size_t)n * x_width, ny = ys ? (size_t)n * y_width : 0;
    GRID_STRIDE(k, nx + ny) {
        if (k < nx) {
            size_t i = k / x_width, c = k % x_width;
            size_t row = idx ? (size_t)idx[i] : (size_t)(first + (long)i);
            x[k] = xs[row * x_width + c];
        } else {
            size_t k2 = k - nx, i = k2 / y_width, c = k2 % y_width;
            size_t row = idx ? (size_t)idx[i] : (size_t)(first + (long)i);
            y[k2] = ys[row * y_width + c];
        }
    }
}

int gpu_gather_rows(nn_backend *b, int n, const int32_t *idx, long first, const float *xs,
                    size_t x_width, float *x, const void *ys, size_t y_width, void *y)
{
    if (n <= 0 || x_width == 0 || (ys && y_width == 0) || first < 0)
        return gpu_fail(b, "gather_rows: bad shape n=%d x_width=%zu y_width=%zu first=%ld", n,
                        x_width, y_width, first);
    size_t total = (size_t)n * (x_width + (ys ? y_width : 0));
    NN_LAUNCH(gather_kernel, blocks_for(total, GPU_MAX_BLOCKS), GPU_THREADS, 0, gpu_of(b)->stream,
              n, idx, first, xs, x_width, x, (const uint32_t *)ys, y_width, (uint32_t *)y);
    return gpu_launched(b, "gather_rows", "gather_kernel");
}

/* ---- step graphs ------------------------------------------------------------------------- */

/* The first node of a recorded step: the values of the step it runs as. */
__global__ void step_values_kernel(gpu_step_values *dst, gpu_step_values v)
{
    *dst = v;
}

static gpu_step_values device_values(const nn_step_values *v)
{
    gpu_step_values d;
    d.dropout_base = (unsigned long long)v->dropout_base;
    d.opt_t = (long long)v->opt_t;
    return d;
}

int gpu_write_step_values(nn_backend *b)
{
    gpu_state *s = gpu_of(b);
    NN_LAUNCH(step_values_kernel, 1, 1, 0, s->stream, s->step_dev, device_values(&s->step));
    return gpu_launched(b, "graph_begin", "step_values_kernel");
}

void gpu_step_node_params(gpu_state *s, gpu_step_node_args *args, cudaKernelNodeParams *p)
{
    args->dst = s->step_dev;
    args->v = device_values(&s->step);
    args->params[0] = &args->dst;
    args->params[1] = &args->v;
    *p = cudaKernelNodeParams();        /* value-initialised: every field zero */
    p->func = (void *)step_values_kernel;
    p->gridDim = dim3(1, 1, 1);
    p->blockDim = dim3(1, 1, 1);
    p->sharedMemBytes = 0;
    p->kernelParams = args->params;
    p->extra = NULL;
}
