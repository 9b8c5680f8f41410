/* rng.h: deterministic random streams split from one master seed.
 *
 * Every purpose (each publish stream of each instance, each source, each
 * handler's durations, each handler's faults, the crash schedule, the
 * policy) draws from its own stream, keyed by (seed, purpose, index), so
 * that changing the policy never changes the workload it sees (common random
 * numbers).  A stream is SplitMix64 over a per-stream key: eight bytes of
 * state, so millions of handlers cost little.  Floating point appears only
 * inside a draw, which is rounded to integer microseconds at once. */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <stdint.h>

enum rng_purpose {
    RNG_PUBLISH = 1, RNG_SOURCE, RNG_DURATION, RNG_FAULT, RNG_CRASH, RNG_POLICY, RNG_KEYS
};

struct rng { uint64_t s; };

static inline uint64_t rng_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static inline struct rng rng_stream(uint64_t seed, enum rng_purpose purpose, uint64_t a, uint64_t b)
{
    uint64_t k = rng_mix(seed ^ UINT64_C(0x5851f42d4c957f2d));
    k = rng_mix(k ^ ((uint64_t)purpose * UINT64_C(0x9e3779b97f4a7c15)));
    k = rng_mix(k ^ (a * UINT64_C(0xd1b54a32d192ed03)));
    k = rng_mix(k ^ (b * UINT64_C(0x8cb92ba72f3d8dd7)));
    return (struct rng){k};
}

static inline uint64_t rng_next(struct rng *r)
{
    r->s += UINT64_C(0x9e3779b97f4a7c15);
    return rng_mix(r->s);
}

/* Uniform in [0, n) without modulo bias worth measuring (n < 2^63). */
static inline uint64_t rng_below(struct rng *r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* Uniform in (0, 1]. */
static inline double rng_unit(struct rng *r)
{
    return (double)((rng_next(r) >> 11) + 1) * (1.0 / 9007199254740992.0);
}

/* Exponential with the given mean, in whole microseconds. */
int64_t rng_exp_us(struct rng *r, double mean_us);

#endif
