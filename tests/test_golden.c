/* test_golden.c: golden runs of the baselines, with every metric computed
 * by hand from the policy's rules (the reasoning is in the comments), and
 * the engine's determinism. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/util.h"
#include "tests/simtest.h"

static void run_text(const char *text, const char *policy, const char *kv, struct sim_result *res)
{
    simtest_run(text, policy, kv, 0, 0, res);
}

static double m(const struct sim_result *r, const char *name) { return simtest_metric(r, -1, name); }

#define S(n) ((double)(n) * 1e6)
/* Percentiles are read from histograms with a relative error under 0.4 %. */
#define NEAR(v, want) assert_true((v) >= (want) * 0.996 && (v) <= (want) * 1.004)

/* A producer every 20 min (runs 50 s, publishes 2) and a FIFO consumer
 * (runs 10 s); horizon 1 h, drain 1 h. */
static const char *two_step =
    "horizon 1h\n"
    "drain 1h\n"
    "workflow w\n"
    "  producer p every 20m runs 50s publish t 2\n"
    "  consumer c subscribe t fifo runs 10s\n";

/* oracle: the producer fires at 0, 20m, 40m (three timer wake-ups) and
 * commits at 50s, 20m50s, 40m50s, publishing two items each.  The first
 * item starts a consumer run at once (committed 10 s later); the second
 * waits for it and commits 10 s after that.  Latencies 10,10,10,20,20,20 s:
 * p50 (3rd of 6) = 10 s, p99 = max = 20 s, mean 15 s.  Runs 3 + 6. */
static void test_oracle_two_step(void **state)
{
    (void)state;
    struct sim_result r;
    run_text(two_step, "oracle", NULL, &r);
    assert_int_equal(r.status, SIM_OK);
    assert_true(m(&r, "published") == 6);
    assert_true(m(&r, "processed") == 6);
    assert_true(m(&r, "lost") == 0);
    assert_true(m(&r, "runs") == 9);
    assert_true(m(&r, "runs_empty") == 0);
    assert_true(m(&r, "busy_loops") == 0);
    assert_true(m(&r, "wakeups") == 3);
    assert_true(m(&r, "dues") == 3);
    assert_true(m(&r, "missed") == 0);
    assert_true(m(&r, "lateness.max") == 0);
    NEAR(m(&r, "latency.p50"), S(10));
    NEAR(m(&r, "latency.p99"), S(20));
    assert_true(m(&r, "latency.max") == S(20));
    assert_true(m(&r, "latency.mean") == S(15));
    assert_true(m(&r, "duplicates") == 0);
    assert_true(m(&r, "overlaps") == 0);
    sim_result_free(&r);
}

/* poll (period 1m): the host polls at 0 and at every minute until the end
 * at 2h (ticks 1m..119m: 119 wake-ups; the tick at 2h is the end).  The
 * consumer runs at all 120 polls: at 1m, 21m and 41m it takes the two items
 * published at 50s, 20m50s, 40m50s (latency 20 s each: committed at
 * 1m10s...), the other 117 runs are empty and have no new input since the
 * previous run: 117 busy loops.  The producer runs at its dues 0, 20m, 40m
 * on time.  Runs 3 + 120. */
static void test_poll_two_step(void **state)
{
    (void)state;
    struct sim_result r;
    run_text(two_step, "poll", NULL, &r);
    assert_int_equal(r.status, SIM_OK);
    assert_true(m(&r, "published") == 6);
    assert_true(m(&r, "processed") == 6);
    assert_true(m(&r, "runs") == 123);
    assert_true(m(&r, "runs_empty") == 117);
    assert_true(m(&r, "busy_loops") == 117);
    assert_true(m(&r, "wakeups") == 119);
    assert_true(m(&r, "missed") == 0);
    assert_true(m(&r, "lateness.max") == 0);
    NEAR(m(&r, "latency.p50"), S(20));
    assert_true(m(&r, "latency.max") == S(20));
    assert_true(m(&r, "overlaps") == 0);
    sim_result_free(&r);
}

/* poll with period 30m: polls at 0, 30m, 60m, 90m (ticks 30m, 60m, 90m:
 * 3 wake-ups; 120m is the end).  Producer: due 0 served at 0; due 20m
 * served at 30m (lateness 10m, within its period [20m, 40m)); due 40m served
 * at 60m (lateness 20m, outside [40m, 60m): missed).  Its commits at 50s,
 * 30m50s, 60m50s; the consumer takes each pair at the next poll: 30m (wait
 * 29m10s + 10s run = 29m20s), 60m (29m20s), 90m (29m20s).  Consumer runs: 4
 * polls, one empty (at 0, no input: a busy loop). */
static void test_poll_slow(void **state)
{
    (void)state;
    struct sim_result r;
    run_text(two_step, "poll", "period=30m", &r);
    assert_true(m(&r, "wakeups") == 3);
    assert_true(m(&r, "runs") == 7);
    assert_true(m(&r, "runs_empty") == 1);
    assert_true(m(&r, "busy_loops") == 1);
    assert_true(m(&r, "missed") == 1);
    NEAR(m(&r, "lateness.p50"), S(600));
    assert_true(m(&r, "lateness.max") == S(1200));
    assert_true(m(&r, "latency.max") == S(29 * 60 + 20));
    NEAR(m(&r, "latency.p50"), S(29 * 60 + 20));
    sim_result_free(&r);
}

/* A digest at 09:00 (UTC zone): items published at 01:00 and 05:00 are due
 * at 09:00; the oracle wakes once then (one timer), takes both, commits at
 * 09:00:05.  Latencies 8h00m05s and 4h00m05s. */
static void test_oracle_digest(void **state)
{
    (void)state;
    struct sim_result r;
    run_text("horizon 12h\n"
             "workflow w\n"
             "  consumer d subscribe t digest 09:00 runs 5s\n"
             "publish t at 1h\n"
             "publish t at 5h\n",
             "oracle", NULL, &r);
    assert_true(m(&r, "processed") == 2);
    assert_true(m(&r, "runs") == 1);
    assert_true(m(&r, "wakeups") == 1);
    assert_true(m(&r, "latency.max") == S(8 * 3600 + 5));
    NEAR(m(&r, "latency.p50"), S(4 * 3600 + 5));
    sim_result_free(&r);
}

/* A host crash in the middle of a consumer's mutation: the run is cut; the
 * item stays pending (topics are durable) and the oracle runs it again at
 * the restart.  Item at 1h, run 10m (prepare 1m, mutate 8m, emit 1m); crash
 * at 1h05m for 5m; restart at 1h10m; the new run commits at 1h20m: latency
 * 20m, one crashed run, recovery_time 0 (it starts at the restart). */
static void test_oracle_crash(void **state)
{
    (void)state;
    struct sim_result r;
    run_text("horizon 4h\n"
             "workflow w\n"
             "  consumer c subscribe t fifo runs 10m\n"
             "publish t at 1h\n"
             "crash host at 1h05m for 5m\n",
             "oracle", NULL, &r);
    assert_true(m(&r, "processed") == 1);
    assert_true(m(&r, "runs") == 2);
    assert_true(m(&r, "runs_crashed") == 1);
    assert_true(m(&r, "latency.max") == S(20 * 60));
    assert_true(m(&r, "double_effects") == 0);
    assert_int_equal(r.ck.ncrashes, 1);
    assert_true(r.ck.crashes[0].recovery_time_us == 0);
    assert_true(r.ck.crashes[0].ok);
    sim_result_free(&r);
}

/* The same crash after the mutation (crash at 1h09m30s, mutated at 1h09m):
 * the oracle resumes the run at emitting (1m), so the mutation is not
 * applied again: commit at 1h10m + 1m + ... restart 1h14m30s, commit at
 * 1h15m30s, latency 15m30s, no double effect.  poll reruns it from scratch
 * and applies the mutation twice. */
static void test_crash_after_mutation(void **state)
{
    (void)state;
    const char *text = "horizon 4h\n"
                       "workflow w\n"
                       "  consumer c subscribe t fifo runs 10m\n"
                       "publish t at 1h\n"
                       "crash host at 1h09m30s for 5m\n";
    struct sim_result r;
    run_text(text, "oracle", NULL, &r);
    assert_true(m(&r, "processed") == 1);
    assert_true(m(&r, "double_effects") == 0);
    assert_true(m(&r, "latency.max") == S(15 * 60 + 30));
    sim_result_free(&r);
    run_text(text, "poll", NULL, &r);
    assert_true(m(&r, "processed") == 1);
    assert_true(m(&r, "double_effects") == 1);
    assert_int_equal(r.ck.crashes[0].ok, 0);
    sim_result_free(&r);
}

/* A graceful stop: the item's run (1h .. 1h10m) is still active when the
 * 2-minute grace after the stop at 1h05m runs out, so it is cut off at
 * 1h07m; the host restarts at 1h35m and the oracle runs the item again
 * (commit 1h45m: latency 45m).  With a 10-minute grace the run ends at
 * 1h10m, the stop completes then, and nothing is cut off (latency 10m). */
static void test_graceful_stop(void **state)
{
    (void)state;
    struct sim_result r;
    run_text("horizon 4h\n"
             "workflow w\n"
             "  consumer c subscribe t fifo runs 10m\n"
             "publish t at 1h\n"
             "stop host at 1h05m grace 2m for 30m\n",
             "oracle", NULL, &r);
    assert_true(m(&r, "runs_cutoff") == 1);
    assert_true(m(&r, "runs_crashed") == 0);
    assert_true(m(&r, "processed") == 1);
    assert_true(m(&r, "latency.max") == S(45 * 60));
    assert_true(m(&r, "crashes") == 1);
    sim_result_free(&r);
    run_text("horizon 4h\n"
             "workflow w\n"
             "  consumer c subscribe t fifo runs 10m\n"
             "publish t at 1h\n"
             "stop host at 1h05m grace 10m for 30m\n",
             "oracle", NULL, &r);
    assert_true(m(&r, "runs_cutoff") == 0);
    assert_true(m(&r, "latency.max") == S(10 * 60));
    sim_result_free(&r);
}

/* The run limit bounds *live* runs: a producer every second whose runs
 * last a day has a run more alive each second, and is stopped at 1000. */
static void test_run_limit(void **state)
{
    (void)state;
    struct scenario *s = simtest_parse("limit.scn", "horizon 1h\nworkflow w\n  producer p every 1s runs 1d publish t 1\n");
    const struct policy_ops *ops = policy_find("oracle");
    struct params ps;
    params_init(&ps, ops);
    struct sim_opts o = {.seed = 1, .max_runs = 1000};
    struct sim_result r;
    sim_run(s, ops, &ps, &o, &r);
    assert_int_equal(r.status, SIM_EVENT_LIMIT);
    assert_non_null(strstr(r.status_msg, "run limit"));
    assert_true(m(&r, "runs") == 1000);
    sim_result_free(&r);
    scenario_free(s);
}

/* ... while runs that end make room: poll every second for an hour starts
 * 3600 runs, under a limit of 100 live ones. */
static void test_run_limit_live(void **state)
{
    (void)state;
    struct scenario *s = simtest_parse("limit.scn", "horizon 1h\ndrain 0s\nworkflow w\n  consumer c subscribe t fifo runs 1s\n");
    const struct policy_ops *ops = policy_find("poll");
    struct params ps;
    params_init(&ps, ops);
    char msg[128];
    assert_int_equal(params_set(&ps, "period", "1s", msg, sizeof msg), 0);
    struct sim_opts o = {.seed = 1, .max_runs = 100};
    struct sim_result r;
    sim_run(s, ops, &ps, &o, &r);
    assert_int_equal(r.status, SIM_OK);
    assert_true(m(&r, "runs") >= 3600);
    sim_result_free(&r);
    scenario_free(s);
}

/* The item limit bounds *live* items: 500 events to two subscribers whose
 * runs outlast the horizon stop at 600 pending items; with short runs the
 * same limit lets all 1000 through. */
static void test_item_limit(void **state)
{
    (void)state;
    static const char *text[2] = {
        "horizon 1d\nworkflow w\n  consumer a subscribe t fifo runs 2d\n"
        "  consumer b subscribe t fifo runs 2d\npublish t rate 500/d\n",
        "horizon 1d\nworkflow w\n  consumer a subscribe t fifo runs 1s\n"
        "  consumer b subscribe t fifo runs 1s\npublish t rate 500/d\n"};
    for (int k = 0; k < 2; k++) {
        struct scenario *s = simtest_parse("items.scn", text[k]);
        const struct policy_ops *ops = policy_find("oracle");
        struct params ps;
        params_init(&ps, ops);
        struct sim_opts o = {.seed = 1, .max_items = 600};
        struct sim_result r;
        sim_run(s, ops, &ps, &o, &r);
        if (k == 0) {
            assert_int_equal(r.status, SIM_EVENT_LIMIT);
            assert_non_null(strstr(r.status_msg, "item limit"));
            assert_true(m(&r, "published") == 600);
        } else {
            assert_int_equal(r.status, SIM_OK);
            assert_true(m(&r, "published") == 1000);
        }
        sim_result_free(&r);
        scenario_free(s);
    }
}

/* The memory budget: items that pile up (runs that outlast the horizon)
 * reach a budget of 4 MiB; the run stops with memory-limit there, naming
 * the line that published them.  Twice: the stop is deterministic. */
static void test_memory_budget(void **state)
{
    (void)state;
    struct scenario *s = simtest_parse("mem.scn", "horizon 1d\nworkflow w\n  consumer c subscribe t fifo runs 2d\n"
                                                  "publish t rate 100000/d\n");
    const struct policy_ops *ops = policy_find("oracle");
    struct params ps;
    params_init(&ps, ops);
    struct sim_opts o = {.seed = 1, .max_memory = 4u << 20};
    uint64_t fp = 0;
    for (int k = 0; k < 2; k++) {
        struct sim_result r;
        sim_run(s, ops, &ps, &o, &r);
        assert_int_equal(r.status, SIM_MEMORY_LIMIT);
        assert_int_equal(r.status_line, 4);
        assert_non_null(strstr(r.status_msg, "memory limit"));
        assert_true(m(&r, "published") > 1000 && m(&r, "published") < 100000);
        assert_true(r.peak_memory > (4u << 20) && r.peak_memory < (8u << 20));
        assert_true(k == 0 || r.fingerprint == fp);
        fp = r.fingerprint;
        sim_result_free(&r);
    }
    scenario_free(s);
}

/* What does not grow with the horizon stays within a small budget: a month
 * of a crash every few seconds (crash records are aggregated as they
 * happen), and a producer due every 20 us (runs end and are forgotten). */
static void test_memory_flat(void **state)
{
    (void)state;
    static const char *text[2] = {
        "horizon 30d\nworkflow w\n  consumer c subscribe t fifo runs 1s\npublish t poisson 1/h\n"
        "crash host random mtbf 1s mttr 1s\n",
        "horizon 1m\ndrain 0\nworkflow w\n  producer p every 20us runs 0 publish t\n"
        "  consumer c subscribe t fifo runs 0\n"};
    for (int k = 0; k < 2; k++) {
        struct scenario *s = simtest_parse("flat.scn", text[k]);
        const struct policy_ops *ops = policy_find("oracle");
        struct params ps;
        params_init(&ps, ops);
        struct sim_opts o = {.seed = 1, .max_memory = 8u << 20};
        struct sim_result r;
        sim_run(s, ops, &ps, &o, &r);
        assert_int_equal(r.status, SIM_OK);
        if (k == 0)
            assert_true(m(&r, "crashes") > 500000);
        else
            assert_true(m(&r, "runs") >= 3000000);
        sim_result_free(&r);
        scenario_free(s);
    }
}

/* The estimate before a run: a burst names its line, a large fleet its
 * workflow. */
static void test_memory_estimate(void **state)
{
    (void)state;
    struct scenario *s = simtest_parse("est.scn", "horizon 1h\nworkflow w\n  consumer c subscribe t fifo runs 1s\n"
                                                  "publish t burst 1000000 at 0\n");
    int line = 0;
    char why[200];
    uint64_t b = sim_memory_estimate(s, &line, why, sizeof why);
    assert_int_equal(line, 4);
    assert_true(b > 50u << 20 && b < 1000u << 20);
    scenario_free(s);
    s = simtest_parse("est.scn", "horizon 1h\nworkflow w x 100000\n  consumer c subscribe t fifo runs 1s\n"
                                 "publish t at 0\n");
    b = sim_memory_estimate(s, &line, why, sizeof why);
    assert_int_equal(line, 2);
    assert_true(b > 10u << 20);
    scenario_free(s);
}

/* Determinism: the same inputs give the same fingerprint and metrics; a
 * different seed gives another trace; the workload does not depend on the
 * policy (common random numbers). */
static void test_determinism(void **state)
{
    (void)state;
    const char *text = "horizon 2d\n"
                       "seed 9\n"
                       "workflow w x 3\n"
                       "  producer p every 7m runs exp(30s) source s\n"
                       "  consumer c subscribe s batch 5 or 20m runs uniform(1s,9s)\n"
                       "source s poisson 30/h\n"
                       "crash host random mtbf 10h mttr 10m\n"
                       "fail w.c transient 5%\n";
    struct sim_result a, b, c;
    run_text(text, "poll", NULL, &a);
    run_text(text, "poll", NULL, &b);
    assert_true(a.fingerprint == b.fingerprint);
    assert_true(a.events == b.events);
    assert_memory_equal(&a.ck.total.published, &b.ck.total.published,
                        offsetof(struct metrics, latency) - offsetof(struct metrics, published));
    run_text(text, "oracle", NULL, &c);
    assert_true(c.fingerprint != a.fingerprint);
    sim_result_free(&a);
    sim_result_free(&b);
    sim_result_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle_two_step),   cmocka_unit_test(test_poll_two_step),
        cmocka_unit_test(test_poll_slow),         cmocka_unit_test(test_oracle_digest),
        cmocka_unit_test(test_oracle_crash),      cmocka_unit_test(test_crash_after_mutation),
        cmocka_unit_test(test_determinism),       cmocka_unit_test(test_graceful_stop),
        cmocka_unit_test(test_run_limit),
        cmocka_unit_test(test_run_limit_live),
        cmocka_unit_test(test_item_limit),
        cmocka_unit_test(test_memory_budget),
        cmocka_unit_test(test_memory_flat),
        cmocka_unit_test(test_memory_estimate),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    cal_zone_cache_free();
    return rc;
}
