/* bench_interval.c: a year of the `interval` policy's 1 s check loop with
 * one daily job (the shape of scenarios/interval_year.scn).
 *
 * The host wakes 31.5 million times (every tick is a wake-up), but the
 * engine's ticker only costs an event when the policy arms it: at the next
 * trigger, and each second while the job's 5-minute run is active.  The
 * benchmark simulates the year REPS times, checks that every repetition
 * has the same fingerprint, and prints one line: the median wall time, the
 * wake-ups the checker counted, and the events the engine popped. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/sim.h"
#include "sim/util.h"
#include "bench/bench_util.h"

#define REPS 7

static const char *year = "name interval_year\n"
                          "horizon 365d\n"
                          "drain 0\n"
                          "workflow agent\n"
                          "  producer report every 1d runs 5m publish out\n";

int main(void)
{
    struct scenario *s;
    const struct policy_ops *ops;
    struct params ps;
    int rc = bench_load("bench_interval", "interval_year.scn", year, "interval", &s, &ops, &ps);
    if (rc)
        return rc;
    double median, wakeups = 0, runs = 0;
    struct sim_result res;
    rc = bench_repeat("bench_interval", s, ops, &ps, REPS, &median, &res);
    if (rc == 0) {
        metric_get(&res.ck, -1, "wakeups", &wakeups);
        metric_get(&res.ck, -1, "runs", &runs);
        printf("interval: a year of a 1 s check loop with one daily job: %.2f ms wall (median of %d), "
               "%.0f wake-ups, %" PRIu64 " events, %.0f runs\n",
               median * 1e3, REPS, wakeups, res.events, runs);
        sim_result_free(&res);
    }
    scenario_free(s);
    cal_zone_cache_free();
    return rc;
}
