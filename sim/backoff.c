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

struct backoff backoff_exp_coef(int64_t base_us, int64_t cap_us, uint32_t coef_permille, uint32_t max_attempts)
{
    SIM_ASSERT(base_us > 0 && cap_us >= base_us);
    SIM_ASSERT(coef_permille >= 1000 && coef_permille <= BACKOFF_MAX_COEF_PERMILLE);
    return (struct backoff){.exponential = 1, .base_us = base_us, .cap_us = cap_us,
                            .coef_permille = coef_permille, .max_attempts = max_attempts};
}

struct backoff backoff_exp(int64_t base_us, int64_t cap_us, uint32_t max_attempts)
{
    return backoff_exp_coef(base_us, cap_us, 2000, max_attempts);
}

struct backoff backoff_first_at_once(struct backoff b)
{
    b.first_at_once = 1;
    return b;
}

int64_t backoff_delay(const struct backoff *b, uint32_t attempt)
{
    SIM_ASSERT(attempt >= 1);
    if (b->first_at_once) {
        if (attempt == 1)
            return 0;
        attempt--;
    }
    if (!b->exponential)
        return b->table_us[attempt <= (uint32_t)b->ntable ? attempt - 1 : (uint32_t)b->ntable - 1];
    if (b->coef_permille == 1000)
        return b->base_us;
    /* In thousandths of a microsecond: below the cap the value is under
     * 2^63 * 1000 and a step multiplies it by at most 10^6, well inside 128
     * bits; growth stops at the cap, so the loop ends after at most
     * log(cap / base) / log(coefficient) steps. */
    const unsigned __int128 cap = (unsigned __int128)b->cap_us * 1000;
    unsigned __int128 d = (unsigned __int128)b->base_us * 1000;
    for (uint32_t k = 1; k < attempt && d < cap; k++)
        d = d * b->coef_permille / 1000;
    return d < cap ? (int64_t)(d / 1000) : b->cap_us;
}

int backoff_exhausted(const struct backoff *b, uint32_t attempt)
{
    return b->max_attempts && attempt > b->max_attempts;
}
