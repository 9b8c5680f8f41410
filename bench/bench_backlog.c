/* bench_backlog.c: what a consumer's run start costs with a backlog behind it.
 *
 * A start hands its script the pending items it reads (script_needs,
 * script_enough), not the whole backlog.  Two shapes where the backlog is
 * large and the script reads little of it:
 *  - interval takes one item per run (max_take 1) from a burst of 100 000
 *    events, over two days (about 4 000 runs, each behind ~98 000 items);
 *  - oracle runs a `window 10m` consumer fed 20 events/s for six hours
 *    (about 430 000 runs, each behind ~12 000 items waiting out their
 *    window).
 * Gathering the backlog at each start made these quadratic: 2.1 s and
 * (for a whole day) 218 s of CPU.  Each shape runs REPS times; the line
 * printed gives the median wall time, the runs, and the time per run.
 * Every repetition must have the same fingerprint. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/util.h"
#include "bench/bench_util.h"

#define REPS 5

struct shape {
    const char *name, *policy, *text;
};

static const struct shape shapes[] = {
    {"interval, 1 item per run, burst of 100 000", "interval",
     "name backlog\nhorizon 2d\nseed 1\nworkflow w\n  consumer c subscribe t fifo runs 100ms\n"
     "publish t burst 100000 at 1h\n"},
    {"oracle, window 10m, 20 events/s", "oracle",
     "name window\nhorizon 6h\nseed 1\nworkflow w\n  consumer c subscribe t window 10m runs 10ms\n"
     "publish t poisson 20/s\n"},
};

static int bench_one(const struct shape *sh)
{
    struct scenario *s;
    struct diag d;
    if (scenario_parse_buf("backlog.scn", sh->text, strlen(sh->text), &s, &d) != 0) {
        diag_print(&d);
        return 2;
    }
    const struct policy_ops *ops = policy_find(sh->policy);
    if (!ops) {
        fprintf(stderr, "bench_backlog: no policy '%s'\n", sh->policy);
        scenario_free(s);
        return 3;
    }
    struct params ps;
    params_init(&ps, ops);
    double wall[REPS], runs = 0;
    uint64_t fp = 0;
    for (int r = 0; r < REPS; r++) {
        struct sim_opts o = {.seed = s->seed};
        struct sim_result res;
        double t0 = now_s();
        sim_run(s, ops, &ps, &o, &res);
        wall[r] = now_s() - t0;
        if (res.status != SIM_OK || (r && res.fingerprint != fp)) {
            fprintf(stderr, "bench_backlog: %s is not deterministic or did not complete\n", sh->name);
            sim_result_free(&res);
            scenario_free(s);
            return 3;
        }
        fp = res.fingerprint;
        metric_get(&res.ck, -1, "runs", &runs);
        sim_result_free(&res);
    }
    qsort(wall, REPS, sizeof wall[0], cmp_double);
    printf("backlog: %-45s %8.2f ms wall (median of %d), %8.0f runs, %6.0f ns per run\n", sh->name,
           wall[REPS / 2] * 1e3, REPS, runs, runs > 0 ? wall[REPS / 2] * 1e9 / runs : 0.0);
    scenario_free(s);
    return 0;
}

int main(void)
{
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        int rc = bench_one(&shapes[k]);
        if (rc)
            return rc;
    }
    cal_zone_cache_free();
    return 0;
}
