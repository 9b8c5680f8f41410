/* test_example_policy.c: the example policy of docs/writing-a-policy.md
 * (examples/policy/fifo_now.c), compiled into this test and simulated on a
 * small scenario with a crash and a graceful stop.  It is not in the
 * built-in registry: a policy is a const struct policy_ops, which sim_run
 * takes from anywhere. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <inttypes.h>
#include <string.h>

#include "examples/policy/fifo_now.c"
#include "sim/sim.h"
#include "tests/expect.h"
#include "tests/simtest.h"

#define S(n) ((int64_t)(n) * US_PER_S)

/* A producer every 10 minutes (runs 30 s, publishes one event) and a FIFO
 * consumer (runs 20 s).  The hand-computed timeline:
 *  - 0, 10m, ..., 50m: the producer runs at its fire, the consumer 30 s
 *    later for 20 s (latency 20 s);
 *  - 1h00m: the producer's run is crashed at 1h00m10s; nothing was
 *    committed, so next_due stays 1h00m;
 *  - 1h10m10s (restart): the producer runs for 1h00m, then at once (its
 *    run ended at 1h10m40s) for 1h10m; each event is taken 20 s after it;
 *  - 1h20m: as before;
 *  - 1h30m: its run ends at 1h30m30s within the stop's grace (stop at
 *    1h30m15s); its event is published to a stopping host, which starts
 *    nothing (on_stop); the host goes down as the run ends;
 *  - 1h35m15s (restart): the consumer takes that event (latency 5m05s);
 *  - 1h40m, 1h50m: as before; no fire at or after the 2h horizon.
 * 12 fires, 12 events, all processed, none missed; 13 producer runs (one
 * crashed) and 12 consumer runs; 10 alarms fired (10m to 1h00m, 1h20m,
 * 1h30m, 1h40m, 1h50m). */
static const char *text = "horizon 2h\n"
                          "drain 10m\n"
                          "workflow w\n"
                          "  producer p every 10m runs 30s publish t\n"
                          "  consumer c subscribe t fifo runs 20s\n"
                          "crash host at 1h00m10s for 10m\n"
                          "stop host at 1h30m15s grace 1m for 5m\n";

static double m(const struct sim_result *r, const char *name) { return simtest_metric(r, -1, name); }

static void test_fifo_now(void **state)
{
    (void)state;
    struct scenario *s = simtest_parse("example.scn", text);
    struct params ps;
    params_init(&ps, &policy_fifo_now);
    struct sim_opts o = {.seed = s->seed, .keep_trace = 1};
    struct sim_result r;
    sim_run(s, &policy_fifo_now, &ps, &o, &r);
    assert_int_equal(r.status, SIM_OK);
    EXPECT_I64(m(&r, "dues"), 12, "dues");
    EXPECT_I64(m(&r, "missed"), 0, "missed");
    EXPECT_I64(m(&r, "published"), 12, "published");
    EXPECT_I64(m(&r, "processed"), 12, "processed");
    EXPECT_I64(m(&r, "lost"), 0, "lost");
    EXPECT_I64(m(&r, "duplicates"), 0, "duplicates");
    EXPECT_I64(m(&r, "runs"), 25, "runs");
    EXPECT_I64(m(&r, "runs_crashed"), 1, "runs_crashed");
    EXPECT_I64(m(&r, "runs_cutoff"), 0, "runs_cutoff");
    EXPECT_I64(m(&r, "runs_empty"), 0, "runs_empty");
    EXPECT_I64(m(&r, "overlaps"), 0, "overlaps");
    EXPECT_I64(m(&r, "wakeups"), 10, "wakeups");
    EXPECT_I64(m(&r, "latency.max"), S(305), "latency.max");
    EXPECT_I64(m(&r, "recovery_ok"), 1, "recovery_ok");
    /* The producer's starts: the restart serves the crashed fire first. */
    static const int64_t want[] = {0, 600, 1200, 1800, 2400, 3000, 3600, 4210, 4240, 4800, 5400, 6000, 6600};
    int n = 0;
    for (size_t i = 0; i < r.ntrace; i++) {
        const struct trace_rec *t = &r.trace[i];
        if (t->kind != FACT_RUN_START || t->handler != 0)
            continue;
        assert_true(n < 13);
        EXPECT_I64(t->t_us, S(want[n]), "producer start");
        n++;
    }
    EXPECT_I64(n, 13, "producer runs");
    sim_result_free(&r);
    scenario_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_now),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
