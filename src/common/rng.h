/* src/common/rng.h - a small seeded generator (splitmix64) so a run is reproducible:
 * the same seed gives the same initial weights, data order and synthetic data. */
#ifndef NNLAB_RNG_H
#define NNLAB_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct nn_rng {
    uint64_t state;
} nn_rng;

static inline void nn_rng_seed(nn_rng *r, uint64_t seed)
{
    r->state = seed * 0x2545f4914f6cdd1dULL + 0x9e3779b97f4a7c15ULL;
}

static inline uint64_t nn_rng_u64(nn_rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* uniform in [0, 1) with 53 random bits */
static inline double nn_rng_uniform(nn_rng *r)
{
    return (double)(nn_rng_u64(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* uniform in [lo, hi) */
static inline float nn_rng_range(nn_rng *r, float lo, float hi)
{
    return (float)(lo + (hi - lo) * nn_rng_uniform(r));
}

/* uniform integer in [0, n) (n > 0); the modulo bias is < n / 2^64 */
static inline uint64_t nn_rng_below(nn_rng *r, uint64_t n)
{
    return nn_rng_u64(r) % n;
}

/* standard normal (Box-Muller; one of the pair is dropped for simplicity) */
static inline float nn_rng_normal(nn_rng *r)
{
    double u1 = nn_rng_uniform(r), u2 = nn_rng_uniform(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

#endif
