/* arrival.h: generators for arrival processes (publish lines and sources).
 *
 * A generator yields the instants of one `struct arrival` in order, lazily,
 * from its own random stream, and stops at the horizon.  It depends on
 * nothing but the scenario and its stream, so every policy sees the same
 * arrivals (common random numbers). */
#ifndef SIM_ARRIVAL_H
#define SIM_ARRIVAL_H

#include <stdint.h>

#include "sim/rng.h"
#include "sim/scenario.h"

struct arr_gen {
    const struct arrival *a;
    const struct scenario *s;
    struct rng r;                  /* instants */
    struct rng rk;                 /* keys (a stream of its own, so keys never shift times) */
    uint64_t k;                    /* index of the next arrival */
    int64_t next_us;               /* SIM_NEVER when exhausted */
    int64_t end_us;                /* min(to, horizon) */
};

void arr_init(struct arr_gen *g, const struct arrival *a, const struct scenario *s, struct rng r, struct rng rk);
/* Returns the key of the arrival at g->next_us and advances to the next. */
uint32_t arr_take(struct arr_gen *g);

#endif
