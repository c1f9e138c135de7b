/* backends/dropout_hash.h - the dropout mask as a pure function of
 * (seed, counter, index), shared by every backend so that CPU and GPU drop the
 * same elements. counter is unique per (step, layer); see src/net.c.
 * Plain C that nvcc also compiles (NN_HOSTDEV marks it for both sides). */
#ifndef NNLAB_DROPOUT_HASH_H
#define NNLAB_DROPOUT_HASH_H

#include <stdint.h>

#ifdef __CUDACC__
#define NN_HOSTDEV __host__ __device__
#else
#define NN_HOSTDEV
#endif

/* splitmix64's finaliser: a strong 64-bit mix, cheap enough per element. */
static inline NN_HOSTDEV uint64_t nn_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A uniform float in [0, 1) from the top 24 bits of the hash. */
static inline NN_HOSTDEV float nn_dropout_uniform(uint64_t seed, uint64_t counter, uint64_t i)
{
    uint64_t h = nn_mix64(seed ^ nn_mix64(counter * 0x9e3779b97f4a7c15ULL + i));
    return (float)(h >> 40) * (1.0f / 16777216.0f);
}

static inline NN_HOSTDEV int nn_dropout_keep(uint64_t seed, uint64_t counter, uint64_t i, float p)
{
    return nn_dropout_uniform(seed, counter, i) >= p;
}

#endif
