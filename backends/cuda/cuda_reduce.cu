/* backends/cuda/cuda_reduce.cu - the bias gradients: our own reductions, in
 * a fixed order (no float atomics), so that the same call twice gives the
 * same bits, eager or replayed.
 *
 * The convolution's (dy is (n, c, h, w)) replaces cudnnConvolutionBackwardBias:
 * its calc_bias_diff_nchw_packed kernel took 1.44 ms of a 3.95 ms LeNet step
 * at batch 1024 on an H200, where PyTorch's reduce_kernel took 0.04 ms
 * (../shared/gpu-h200/kernels.txt). A block per channel and slice, reads
 * coalesced along each sample's plane; a channel is cut into slices when
 * there are too few channels to fill the GPU (LeNet's 6 and 16 channels over
 * 1024 x 28 x 28 values), whose partial sums a second kernel adds in slice
 * order. A ones-vector cublasSgemv would read dy as a (n*c, hw) matrix and
 * still need a second pass over the n samples per channel: two launches
 * either way, and ours keeps the order fixed and known.
 *
 * The linear layer's (dy is (n, out)) was already ours: a block per 32
 * columns, reads coalesced along the rows (2.9 us a call on the H200). */
#include "cuda_backend.h"

/* db[o] = sum_i dy[i][o] (dy is (n, out)): a block takes 32 columns; its 32
 * row lanes each sum every 32nd row (reads coalesced along the columns), then
 * lane sums are added in lane order: a fixed order, no atomics. */
__global__ void bias_grad_kernel(int n, int out, const float *__restrict__ dy,
                                 float *__restrict__ db)
{
    __shared__ float lane[32][33];
    int o = blockIdx.x * 32 + threadIdx.x;
    float acc = 0.0f;
    if (o < out)
        for (int i = threadIdx.y; i < n; i += 32)
            acc += dy[(size_t)i * out + o];
    lane[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && o < out) {
        float sum = 0.0f;
        for (int k = 0; k < 32; k++)
            sum += lane[k][threadIdx.x];
        db[o] = sum;
    }
}

int gpu_bias_grad(nn_backend *b, const char *op, int n, int out, const float *dy, float *db)
{
    dim3 block(32, 32);
    NN_LAUNCH(bias_grad_kernel, (unsigned)((out + 31) / 32), block, 0, gpu_of(b)->stream,
              n, out, dy, db);
    return gpu_launched(b, op, "bias_grad_kernel");
}

/* ---- the convolution's bias gradient --------------------------------------------------- */

#define BIAS_BLOCK 256               /* threads of a channel's block (a power of two) */
#define BIAS_TARGET_BLOCKS 256       /* blocks that keep a large GPU busy (132 SMs on an H200) */
#define BIAS_MIN_SLICE 4096          /* values below which a slice is not worth a block */

/* out[c * slices + sl] = the sum of slice sl of channel c's n * hw values,
 * value e being dy[((e / hw) * channels + c) * hw + e % hw]: consecutive
 * threads read consecutive values of a plane. The block's lanes are added
 * by a tree in a fixed order. */
__global__ void channel_sum_kernel(int n, int channels, size_t hw, int slices,
                                   const float *__restrict__ dy, float *__restrict__ out)
{
    __shared__ float lane[BIAS_BLOCK];
    int c = blockIdx.x, sl = blockIdx.y;
    size_t len = (size_t)n * hw;
    size_t lo = len * sl / slices, hi = len * (sl + 1) / slices;
    float acc = 0.0f;
    for (size_t e = lo + threadIdx.x; e < hi; e += BIAS_BLOCK) {
        size_t i = e / hw;
        acc += dy[(i * channels + c) * hw + (e - i * hw)];
    }
    lane[threadIdx.x] = acc;
    __syncthreads();
    for (int half = BIAS_BLOCK / 2; half > 0; half /= 2) {
        if ((int)threadIdx.x < half)
            lane[threadIdx.x] += lane[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[(size_t)c * slices + sl] = lane[0];
}

/* db[c] = channel c's slices added in slice order. */
__global__ void slices_sum_kernel(int channels, int slices, const float *__restrict__ partials,
                                  float *__restrict__ db)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= channels)
        return;
    float sum = 0.0f;
    for (int sl = 0; sl < slices; sl++)
        sum += partials[(size_t)c * slices + sl];
    db[c] = sum;
}

/* Slices per channel: enough blocks to fill the GPU, each of at least
 * BIAS_MIN_SLICE values, within the partial sums' buffer. A function of the
 * shape only, so the order of the sums is too. */
static int bias_slices(int n, int c, size_t hw)
{
    size_t len = (size_t)n * hw;
    size_t s = (size_t)(BIAS_TARGET_BLOCKS + c - 1) / (size_t)c;
    if (s > len / BIAS_MIN_SLICE)
        s = len / BIAS_MIN_SLICE;
    if (s > GPU_BIAS_SLICES)
        s = GPU_BIAS_SLICES;
    if (s > (size_t)(GPU_BIAS_PARTIALS / c))
        s = (size_t)(GPU_BIAS_PARTIALS / c);
    return s < 1 ? 1 : (int)s;
}

int gpu_conv_bias_grad(nn_backend *b, const char *op, int n, int c, size_t hw, const float *dy,
                       float *db)
{
    gpu_state *s = gpu_of(b);
    if (n <= 0 || c <= 0 || hw == 0)
        return gpu_fail(b, "%s: bad bias gradient shape n=%d c=%d hw=%zu", op, n, c, hw);
    int slices = bias_slices(n, c, hw);
    dim3 grid((unsigned)c, (unsigned)slices);
    NN_LAUNCH(channel_sum_kernel, grid, BIAS_BLOCK, 0, s->stream, n, c, hw, slices, dy,
              slices == 1 ? db : s->bias_partials);
    if (gpu_launched(b, op, "channel_sum_kernel") != 0)
        return -1;
    if (slices == 1)
        return 0;
    NN_LAUNCH(slices_sum_kernel, (unsigned)((c + GPU_THREADS - 1) / GPU_THREADS), GPU_THREADS, 0,
              s->stream, c, slices, s->bias_partials, db);
    return gpu_launched(b, op, "slices_sum_kernel");
}
