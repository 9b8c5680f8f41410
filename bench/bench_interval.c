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
    struct diag d;
    if (scenario_parse_buf("interval_year.scn", year, strlen(year), &s, &d) != 0) {
        diag_print(&d);
        return 2;
    }
    const struct policy_ops *ops = policy_find("interval");
    if (!ops) {
        fprintf(stderr, "bench_interval: no policy 'interval'\n");
        return 3;
    }
    struct params ps;
    params_init(&ps, ops);
    double wall[REPS], wakeups = 0, runs = 0;
    uint64_t fp = 0, events = 0;
    for (int r = 0; r < REPS; r++) {
        struct sim_opts o = {.seed = s->seed};
        struct sim_result res;
        double t0 = now_s();
        sim_run(s, ops, &ps, &o, &res);
        wall[r] = now_s() - t0;
        if (res.status != SIM_OK || (r && (res.fingerprint != fp || res.events != events))) {
            fprintf(stderr, "bench_interval: the year is not deterministic or did not complete\n");
            return 3;
        }
        fp = res.fingerprint;
        events = res.events;
        metric_get(&res.ck, -1, "wakeups", &wakeups);
        metric_get(&res.ck, -1, "runs", &runs);
        sim_result_free(&res);
    }
    qsort(wall, REPS, sizeof wall[0], cmp_double);
    printf("interval: a year of a 1 s check loop with one daily job: %.2f ms wall (median of %d), "
           "%.0f wake-ups, %" PRIu64 " events, %.0f runs\n",
           wall[REPS / 2] * 1e3, REPS, wakeups, events, runs);
    scenario_free(s);
    cal_zone_cache_free();
    return 0;
}
