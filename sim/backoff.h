/* backoff.h: retry delays, shared by every policy that retries.
 *
 * Two shapes cover the seeds: an explicit table (the last entry repeats:
 * heartbeat's cron 30 s, 1 m, 5 m, 15 m, 60 m; its delivery queue 5 s,
 * 25 s, 2 m, 10 m) and an exponential base * coefficient^(n-1) with a cap
 * (wakeat's as-built 10 s doubling to 10 min; interval's option; Temporal's
 * retry policy, whose coefficient need not be whole).  Both can limit the
 * number of attempts.  Attempts are 1-based: attempt 1 is the first retry.
 *
 * The exponential shape grows until its cap however many attempts it takes
 * (no table to run out of), in integer arithmetic: the running delay is
 * kept in thousandths of a microsecond, so a fractional coefficient (1.5)
 * loses nothing from one step to the next, and a whole one (2) gives
 * exactly base * 2^(n-1).
 *
 * Either shape may retry its first attempt at once (backoff_first_at_once):
 * the kubelet restarts an exited container immediately the first time and
 * only then backs off (CrashLoopBackOff: at once, 10 s, 20 s ... 5 min), so
 * attempt 1 waits 0 and attempt n the shape's delay for n - 1. */
#ifndef SIM_BACKOFF_H
#define SIM_BACKOFF_H

#include <stdint.h>

#define BACKOFF_MAX_TABLE 16

struct backoff {
    int exponential;               /* 0: table, 1: base * coefficient^(n-1) capped */
    int64_t table_us[BACKOFF_MAX_TABLE];
    int ntable;
    int64_t base_us, cap_us;
    uint32_t coef_permille;        /* exponential: the coefficient x 1000 (2000: doubling) */
    uint32_t max_attempts;         /* 0: unlimited */
    int first_at_once;             /* attempt 1 waits 0, attempt n the shape's n - 1 */
};

/* The largest coefficient backoff_exp_coef takes, x 1000. */
#define BACKOFF_MAX_COEF_PERMILLE 1000000u

/* A table backoff from a 0-terminated list of delays. */
struct backoff backoff_table(const int64_t *delays_us, uint32_t max_attempts);
/* base * 2^(n-1), capped at cap. */
struct backoff backoff_exp(int64_t base_us, int64_t cap_us, uint32_t max_attempts);
/* base * (coef_permille / 1000)^(n-1), capped at cap; coef_permille in
 * [1000, BACKOFF_MAX_COEF_PERMILLE]. */
struct backoff backoff_exp_coef(int64_t base_us, int64_t cap_us, uint32_t coef_permille, uint32_t max_attempts);
/* b, but its first attempt at once and attempt n after b's delay for n - 1
 * (max_attempts still counts every attempt). */
struct backoff backoff_first_at_once(struct backoff b);
/* The delay before retry number attempt (>= 1). */
int64_t backoff_delay(const struct backoff *b, uint32_t attempt);
/* 1 when attempt exceeds the limit: give up. */
int backoff_exhausted(const struct backoff *b, uint32_t attempt);

#endif
