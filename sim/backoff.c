/* backoff.c: see backoff.h. */
#include "sim/backoff.h"

#include "sim/util.h"

struct backoff backoff_table(const int64_t *delays_us, uint32_t max_attempts)
{
    struct backoff b = {.max_attempts = max_attempts};
    while (delays_us[b.ntable] && b.ntable < BACKOFF_MAX_TABLE) {
        b.table_us[b.ntable] = delays_us[b.ntable];
        b.ntable++;
    }
    SIM_ASSERT(b.ntable > 0);
    return b;
}

struct backoff backoff_exp(int64_t base_us, int64_t cap_us, uint32_t max_attempts)
{
    SIM_ASSERT(base_us > 0 && cap_us >= base_us);
    return (struct backoff){.exponential = 1, .base_us = base_us, .cap_us = cap_us, .max_attempts = max_attempts};
}

int64_t backoff_delay(const struct backoff *b, uint32_t attempt)
{
    SIM_ASSERT(attempt >= 1);
    if (!b->exponential)
        return b->table_us[attempt <= (uint32_t)b->ntable ? attempt - 1 : (uint32_t)b->ntable - 1];
    int64_t d = b->base_us;
    /* Doubling stops at the cap, so it cannot overflow. */
    for (uint32_t k = 1; k < attempt && d < b->cap_us; k++)
        d = d > b->cap_us / 2 ? b->cap_us : d * 2;
    return d < b->cap_us ? d : b->cap_us;
}

int backoff_exhausted(const struct backoff *b, uint32_t attempt)
{
    return b->max_attempts && attempt > b->max_attempts;
}
