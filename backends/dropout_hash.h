/* backends/dropout_hash.h - the dropout mask as a pure function of
 * (seed, counter, index), shared by every backend so that CPU and GPU drop the
 * same elements. counter is unique per (step, layer); see src/core/net.c.
 * Plain C that nvcc also compiles (NN_HOSTDEV marks it for both sides). */
#ifndef NNLAB_DROPOUT_HASH_H
#define NNLAB_DROPOUT_HASH_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define NN_HOSTDEV __host__ __device__
#else
#define NN_HOSTDEV
#endif

#define NN_GOLDEN64 0x9e3779b97f4a7c15ULL

/* splitmix64's finaliser: a strong 64-bit mix. */
static inline NN_HOSTDEV uint64_t nn_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* nn_mix64's inverse (each step undone: an xor-shift by k is undone by
 * xoring the shifts by k, 2k, ...; a multiplication by the inverse mod 2^64). */
static inline NN_HOSTDEV uint64_t nn_unmix64(uint64_t z)
{
    z = z ^ (z >> 31) ^ (z >> 62);
    z *= 0x319642b2d24d8ec3ULL;
    z = z ^ (z >> 27) ^ (z >> 54);
    z *= 0x96de1b173f119089ULL;
    return z ^ (z >> 30) ^ (z >> 60);
}

/* The part that depends only on the call: computed once per call. */
static inline NN_HOSTDEV uint64_t nn_dropout_key(uint64_t seed, uint64_t counter)
{
    return nn_mix64(seed ^ nn_mix64(counter * NN_GOLDEN64));
}

/* 24 uniform bits for element i: splitmix64's stream started at key, so one
 * mix per element. */
static inline NN_HOSTDEV uint32_t nn_dropout_bits(uint64_t key, uint64_t i)
{
    return (uint32_t)(nn_mix64(key + (i + 1) * NN_GOLDEN64) >> 40);
}

/* The seed that makes a call's element i draw what element i + shift of
 * the same call with seed draws: bits(key', i) = bits(key, i + shift) when
 * key' = key + shift * NN_GOLDEN64, and the key is a bijection of the seed.
 * A data-parallel rank r whose batch is samples r*B.. of the global batch
 * shifts by r*B*(floats per sample), so that its masks are those one rank
 * would draw for the whole global batch. shift 0 gives seed back. */
static inline NN_HOSTDEV uint64_t nn_dropout_seed_shifted(uint64_t seed, uint64_t counter,
                                                          uint64_t shift)
{
    if (shift == 0)
        return seed;
    uint64_t key = nn_dropout_key(seed, counter) + shift * NN_GOLDEN64;
    return nn_unmix64(key) ^ nn_mix64(counter * NN_GOLDEN64);
}

/* Element i is kept when its bits, read as u = bits / 2^24 in [0, 1), satisfy
 * u >= p, i.e. bits >= ceil(p 2^24) (exact in float: p 2^24 only shifts the
 * exponent). p = 1 keeps nothing. */
static inline NN_HOSTDEV uint32_t nn_dropout_threshold(float p)
{
    return (uint32_t)ceilf(p * 16777216.0f);
}

static inline NN_HOSTDEV int nn_dropout_keep(uint64_t seed, uint64_t counter, uint64_t i, float p)
{
    return nn_dropout_bits(nn_dropout_key(seed, counter), i) >= nn_dropout_threshold(p);
}

#endif
