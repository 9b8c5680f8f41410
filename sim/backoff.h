/* backoff.h: retry delays, shared by every policy that retries.
 *
 * Two shapes cover the seeds: an explicit table (the last entry repeats:
 * heartbeat's cron 30 s, 1 m, 5 m, 15 m, 60 m; its delivery queue 5 s,
 * 25 s, 2 m, 10 m) and an exponential base * 2^(n-1) with a cap (wakeat's
 * as-built 10 s doubling to 10 min; interval's option).  Both can limit the
 * number of attempts.  Attempts are 1-based: attempt 1 is the first retry. */
#ifndef SIM_BACKOFF_H
#define SIM_BACKOFF_H

#include <stdint.h>

#define BACKOFF_MAX_TABLE 16

struct backoff {
    int exponential;               /* 0: table, 1: base * 2^(n-1) capped */
    int64_t table_us[BACKOFF_MAX_TABLE];
    int ntable;
    int64_t base_us, cap_us;
    uint32_t max_attempts;         /* 0: unlimited */
};

/* A table backoff from a 0-terminated list of delays. */
struct backoff backoff_table(const int64_t *delays_us, uint32_t max_attempts);
struct backoff backoff_exp(int64_t base_us, int64_t cap_us, uint32_t max_attempts);
/* The delay before retry number attempt (>= 1). */
int64_t backoff_delay(const struct backoff *b, uint32_t attempt);
/* 1 when attempt exceeds the limit: give up. */
int backoff_exhausted(const struct backoff *b, uint32_t attempt);

#endif
