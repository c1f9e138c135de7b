/* backends/ghost_batch.h - how batch norm cuts a batch into ghost batches
 * (backend.h nn_bn_geom), shared by every backend, the CUDA sources
 * included: pytorch-tabnet's GBN calls x.chunk(ceil(n / vbs)), and
 * torch.chunk(k) makes chunks of ceil(n / k) rows, the last one shorter and
 * possibly fewer than k of them (n = 6, k = 4: chunks of 2, 2, 2). */
#ifndef NNLAB_GHOST_BATCH_H
#define NNLAB_GHOST_BATCH_H

#include <stdio.h>

#ifdef __CUDACC__
#define NN_GB_FN static inline __host__ __device__
#else
#define NN_GB_FN static inline
#endif

/* Rows per chunk: the whole batch when virtual_batch is 0 or >= n. */
NN_GB_FN int nn_ghost_chunk(int n, int virtual_batch)
{
    if (virtual_batch <= 0 || virtual_batch >= n)
        return n;
    int k = (n + virtual_batch - 1) / virtual_batch;
    return (n + k - 1) / k;
}

/* The number of chunks of size nn_ghost_chunk (the last may be shorter). */
NN_GB_FN int nn_ghost_chunks(int n, int virtual_batch)
{
    int s = nn_ghost_chunk(n, virtual_batch);
    return s > 0 ? (n + s - 1) / s : 0;
}

/* Why a batch norm call cannot run, into why (0 when it can): a bad shape,
 * or in training a chunk of one row, whose variance PyTorch refuses. */
static inline int nn_bn_geom_problem(const char *op, int n, int c, int virtual_batch,
                                     float eps, int training, char *why, size_t len)
{
    if (n < 1 || c < 1 || virtual_batch < 0 || !(eps > 0.0f))
        return snprintf(why, len, "%s: bad geometry (n %d, c %d, virtual_batch %d, eps %g)", op,
                        n, c, virtual_batch, (double)eps), 1;
    int s = nn_ghost_chunk(n, virtual_batch), last = n - (nn_ghost_chunks(n, virtual_batch) - 1) * s;
    if (training && (s < 2 || last < 2 || (virtual_batch == 0 && n < 2))) {
        if (virtual_batch == 0)
            return snprintf(why, len, "%s: a batch of %d row: batch norm over the whole batch needs "
                            "2 or more rows in training (as PyTorch)", op, n), 1;
        return snprintf(why, len, "%s: a batch of %d in ghost batches of %d leaves a chunk of 1 row: "
                        "training needs 2 or more per chunk (as PyTorch)", op, n, virtual_batch), 1;
    }
    return 0;
}

#endif
