/* bench_cal.c: cron next-fire computations per second.
 *
 * A mix of 16 expressions (every 5 minutes to once in four years, fixed
 * times in DST hours, weekday ranges, day-of-month OR day-of-week) in four
 * zones with DST, each asked for its next fire after instants spread over
 * 2020-2030 (a fixed-seed table built before timing).  The loop is timed
 * REPS times and the median rate is printed on one line.  The figure is for
 * information: nothing fails on speed. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim/cal.h"
#include "sim/util.h"
#include "sim/rng.h"
#include "bench/bench_util.h"

#define REPS 5
#define STARTS (1u << 16) /* a power of two */
#define CALLS 2000000     /* per repetition */

static const char *const exprs[] = {
    "*/5 * * * *",      "0 * * * *",      "30 2 * * *",    "0 9 * * mon-fri",
    "15,45 8-18 * * *", "0 0 1 * *",      "@daily",        "@weekly",
    "0 12 13 * fri",    "*/15 9-17 * * 1-5", "0 6,18 * * *", "0 0 1 jan,jul *",
    "5 4 * * sun",      "0 22 * * 1-5",   "0 3 */2 * *",   "0 0 29 2 *",
};
#define NEXPR (sizeof exprs / sizeof exprs[0])

static const char *const zones[] = {"Europe/Berlin", "America/New_York", "Australia/Sydney", "America/Santiago"};
#define NZONE (sizeof zones / sizeof zones[0])

static int64_t starts[STARTS];

int main(void)
{
    struct cal_cron crons[NEXPR];
    const struct cal_zone *zs[NZONE];
    char err[256];
    for (size_t i = 0; i < NEXPR; i++) {
        if (cal_cron_parse(exprs[i], 0, &crons[i], err, sizeof err, NULL)) {
            fprintf(stderr, "bench_cal: '%s': %s\n", exprs[i], err);
            return 1;
        }
    }
    for (size_t i = 0; i < NZONE; i++) {
        if (cal_zone_get(zones[i], &zs[i], err, sizeof err)) {
            fprintf(stderr, "bench_cal: %s\n", err);
            return 1;
        }
    }
    struct rng seed = {2025};
    const int64_t lo = INT64_C(1577836800), span = INT64_C(10) * 365 * 86400; /* 2020-2030 */
    for (unsigned i = 0; i < STARTS; i++)
        starts[i] = lo + (int64_t)(rng_next(&seed) % (uint64_t)span);

    double rate[REPS];
    uint64_t sink = 0;
    for (int r = -1; r < REPS; r++) { /* r = -1 warms up */
        double t0 = now_s();
        for (unsigned i = 0; i < CALLS; i++) {
            const struct cal_cron *c = &crons[i % NEXPR];
            const struct cal_zone *z = zs[(i / NEXPR) % NZONE];
            sink += (uint64_t)cal_cron_next(c, z, starts[i & (STARTS - 1)]);
        }
        double dt = now_s() - t0;
        if (r >= 0)
            rate[r] = CALLS / dt;
    }
    qsort(rate, REPS, sizeof rate[0], cmp_double);
    printf("cal: cron_next  %.1f M/s (mix of %zu expressions, %zu zones)\n", rate[REPS / 2] / 1e6, NEXPR, NZONE);
    if (sink == 42)
        printf("\n"); /* keeps the results alive */
    cal_zone_cache_free();
    return 0;
}
