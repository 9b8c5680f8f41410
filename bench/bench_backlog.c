/* bench_backlog.c: what a consumer's run start, or the question of when it
 * is due, costs with a backlog behind it.
 *
 * A start hands its script the pending items it reads (script_needs,
 * script_enough), not the whole backlog; sim_script_due reads the oldest
 * (script_due_needs).  Three shapes where the backlog is large and the
 * script reads little of it:
 *  - interval takes one item per run (max_take 1) from a burst of 100 000
 *    events, over two days (about 4 000 runs, each behind ~98 000 items);
 *  - oracle runs a `window 10m` consumer fed 20 events/s for six hours
 *    (about 430 000 runs, each behind ~12 000 items waiting out their
 *    window);
 *  - oracle asking, at each of 50 000 events an hour, when a `batch 5000
 *    or 1h` consumer is due (the count and the oldest item tell);
 *  - oracle and wakeat with a `correlate a b` consumer, a at 1 000 events
 *    an hour and b at 10, for a day: most events never pair, and each
 *    publish asks (oracle) or starts a run (wakeat); the engine counts the
 *    keys that have both topics pending (sim_load.c), so neither reads the
 *    unmatched backlog unless a pair is there;
 *  - heartbeat with the window shape above, whose agent offers every
 *    session all it holds (~12 000 items): the start reads the offer only
 *    as far as the script does, and the agent forgets taken items from the
 *    front.
 * Gathering the backlog at each start made the first two quadratic: 2.1 s
 * and (for a whole day) 218 s of CPU; counting a batch by gathering it cost
 * 7.5 s a day for the third; sorting the backlog at each publish, 7.9 s
 * (oracle) and 7.9 s (wakeat) for the correlate day; offering and pruning
 * every held item, 10.1 s for heartbeat's six hours.  Each shape runs REPS
 * times; the line
 * printed gives the median wall time, the runs, the engine's events, and
 * the time per event.
 * Every repetition must have the same fingerprint. */
#include <inttypes.h>
#include <stdio.h>

#include "sim/sim.h"
#include "sim/util.h"
#include "bench/bench_util.h"

#define REPS 5

#define CORRELATE_DAY                                                                                   \
    "name correlate\nhorizon 1d\nseed 1\nworkflow w\n  consumer c subscribe a,b correlate a b runs 1ms\n"     \
    "publish a rate 1000/h\npublish b rate 10/h\n"

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
    {"oracle, batch 5000 or 1h, 50 000 events/h", "oracle",
     "name batch\nhorizon 6h\nseed 1\nworkflow w\n  consumer c subscribe t batch 5000 or 1h runs 1s\n"
     "publish t rate 50000/h\n"},
    {"oracle, correlate, 1 000 + 10 events/h, a day", "oracle", CORRELATE_DAY},
    {"wakeat, correlate, 1 000 + 10 events/h, a day", "wakeat", CORRELATE_DAY},
    {"heartbeat, window 10m, 20 events/s", "heartbeat",
     "name window\nhorizon 6h\nseed 1\nworkflow w\n  consumer c subscribe t window 10m runs 10ms\n"
     "publish t poisson 20/s\n"},
};

static int bench_one(const struct shape *sh)
{
    struct scenario *s;
    const struct policy_ops *ops;
    struct params ps;
    int rc = bench_load("bench_backlog", "backlog.scn", sh->text, sh->policy, &s, &ops, &ps);
    if (rc)
        return rc;
    double median, runs = 0;
    struct sim_result res;
    rc = bench_repeat("bench_backlog", s, ops, &ps, REPS, &median, &res);
    if (rc == 0) {
        metric_get(&res.ck, -1, "runs", &runs);
        printf("backlog: %-45s %8.2f ms wall (median of %d), %8.0f runs, %8" PRIu64 " events, %5.0f ns per event\n",
               sh->name, median * 1e3, REPS, runs, res.events, res.events ? median * 1e9 / (double)res.events : 0.0);
        sim_result_free(&res);
    }
    scenario_free(s);
    return rc;
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
