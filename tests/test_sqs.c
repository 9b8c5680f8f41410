/* test_sqs.c: the sqs policy on timelines computed by hand from the SQS
 * documentation (visibility timeout, redrive policy, ChangeMessageVisibility,
 * short and long polling) and the rules of docs/policy-sqs.md.  Defaults:
 * 4 consumers, long polling (20 s), visibility timeout 30 s. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/util.h"
#include "tests/simtest.h"

#define S(x) ((int64_t)((x) * 1e6 + 0.5))

static void run(const char *text, const char *kv, struct sim_result *r)
{
    simtest_run(text, "sqs", kv, 1, 1, r);
}

/* One message, a handler that takes 100 s, the default 30 s visibility
 * timeout, maxReceiveCount 3.  Consumer 0 receives it at 0; it is visible
 * again at 30 s and consumer 1 (long-polling) receives it at once (receive
 * count 2), consumer 2 at 60 s (3); at 90 s the next receive finds its
 * count at the limit: it moves to the dead-letter queue.  The three copies
 * still run to their ends (100, 130, 160 s) and commit: two duplicates.
 * With heartbeats (ChangeMessageVisibility every 10 s) one run. */
static void test_redelivery_and_dlq(void **state)
{
    (void)state;
    const char *text = "horizon 10m\n"
                       "drain 10m\n"
                       "workflow w\n"
                       "  consumer c subscribe t fifo runs 100s\n"
                       "publish t at 0\n";
    struct sim_result r;
    run(text, "max_receive_count=3", &r);
    const int64_t starts[] = {0, S(30), S(60)};
    simtest_expect_starts(&r, -1, starts, 3);
    assert_int_equal(simtest_nth(&r, "note", "dead-letter", 0), S(90));
    simtest_expect_metric(&r, "duplicates", 2);
    simtest_expect_metric(&r, "processed", 1);
    simtest_expect_metric(&r, "overlap_runs", 2);
    sim_result_free(&r);
    run(text, "heartbeat=10s", &r);
    simtest_expect_metric(&r, "runs", 1);
    simtest_expect_metric(&r, "duplicates", 0);
    sim_result_free(&r);
}

/* A delete must carry the latest receipt handle: "otherwise, the request
 * succeeds, but the message will not be deleted" (DeleteMessage).  One
 * 100 s message, 30 s timeout, 4 consumers: received at 0, 30, 60 and
 * 90 s (receipts 1 to 4).  At 100 s consumer 0 commits with receipt 1: the
 * message stays, visible again at 120 s (90 + 30), when consumer 0
 * receives it (receipt 5) and finds its item processed: an empty run,
 * whose delete carries the latest receipt.  The three runs of 30, 60 and
 * 90 s processed the item while the first did: three duplicates.  With
 * stale_delete=deletes the delete at 100 s removes it: four runs. */
static void test_stale_receipt(void **state)
{
    (void)state;
    const char *text = "horizon 10m\n"
                       "drain 10m\n"
                       "workflow w\n"
                       "  consumer c subscribe t fifo runs 100s\n"
                       "publish t at 0\n";
    struct sim_result r;
    run(text, "", &r);
    const int64_t starts[] = {0, S(30), S(60), S(90), S(120)};
    simtest_expect_starts(&r, -1, starts, 5);
    simtest_expect_metric(&r, "duplicates", 3);
    simtest_expect_metric(&r, "runs_empty", 1);
    simtest_expect_metric(&r, "processed", 1);
    sim_result_free(&r);
    run(text, "stale_delete=deletes", &r);
    simtest_expect_starts(&r, -1, starts, 4);
    simtest_expect_metric(&r, "runs", 4);
    simtest_expect_metric(&r, "duplicates", 3);
    sim_result_free(&r);
}

/* ChangeMessageVisibility past the 12 h ceiling is rejected, not cut to
 * it.  A 13 h message, timeout 1 h, extended by 1 h every 25 min: the
 * call at 10h50m sets 11h50m; the one at 11h15m would set 12h15m, past
 * 12 h after the receive: rejected, so the message is visible at 11h50m
 * and consumer 1 receives it then (clamped, it would have been 12h). */
static void test_visibility_ceiling(void **state)
{
    (void)state;
    const char *text = "horizon 12h30m\n"
                       "drain 0\n"
                       "workflow w\n"
                       "  consumer c subscribe t fifo runs 13h\n"
                       "publish t at 0\n";
    struct sim_result r;
    run(text, "visibility_timeout=1h heartbeat=25m heartbeat_visibility=1h consumers=2", &r);
    const int64_t starts[] = {0, S(11 * 3600 + 50 * 60)};
    simtest_expect_starts(&r, -1, starts, 2);
    sim_result_free(&r);
}

/* A heartbeat after the timeout ended (the message visible, not yet
 * received again) changes nothing: the message is no longer in flight.
 * Two consumers; a (100 s) and b (45 s) received at 0; a's heartbeat at
 * 40 s comes 10 s after its timeout: consumer 1, free at 45 s, receives a
 * then (had the heartbeat extended it to 70 s, at 70 s). */
static void test_lapsed_heartbeat(void **state)
{
    (void)state;
    const char *text = "horizon 10m\n"
                       "drain 10m\n"
                       "workflow w\n"
                       "  consumer a subscribe ta fifo runs 100s\n"
                       "  consumer b subscribe tb fifo runs 45s\n"
                       "publish ta at 0\n"
                       "publish tb at 0\n";
    struct sim_result r;
    run(text, "heartbeat=40s consumers=2", &r);
    const int64_t starts[] = {0, S(45), S(100)}; /* a's: the third, consumer 0's, finds it processed */
    simtest_expect_starts(&r, 0, starts, 3);
    sim_result_free(&r);
}

/* A poison message: its handler always fails (here at 0.9 s).  Not deleted,
 * it reappears every 30 s: received at 0, 30 and 60 s; at 90 s its count
 * (3) is at maxReceiveCount: dead-lettered, its item lost.  Without a
 * redrive policy it is received every 30 s until retention. */
static void test_poison_message(void **state)
{
    (void)state;
    const char *text = "horizon 10m\n"
                       "drain 0\n"
                       "workflow w\n"
                       "  consumer c subscribe t fifo runs 1s\n"
                       "publish t at 0\n"
                       "fail w.c transient 100%\n";
    struct sim_result r;
    run(text, "max_receive_count=3", &r);
    const int64_t starts[] = {0, S(30), S(60)};
    simtest_expect_starts(&r, -1, starts, 3);
    simtest_expect_metric(&r, "dropped", 1);
    sim_result_free(&r);
    run(text, "", &r);
    simtest_expect_metric(&r, "runs", 20);
    simtest_expect_metric(&r, "dropped", 0);
    sim_result_free(&r);
}

/* Short polling on an empty queue: one receive per round trip (50 ms):
 * 1199 wake-ups in a minute (the one at 60 s is the end).  Long polling
 * (20 s): a receive every 20 s, 2 wake-ups. */
static void test_polling(void **state)
{
    (void)state;
    const char *text = "horizon 1m\n"
                       "drain 0\n"
                       "workflow w\n"
                       "  consumer c subscribe t fifo runs 1s\n";
    struct sim_result r;
    run(text, "wait_time=0 consumers=1", &r);
    simtest_expect_metric(&r, "wakeups", 1199);
    sim_result_free(&r);
    run(text, "consumers=1", &r);
    simtest_expect_metric(&r, "wakeups", 2);
    sim_result_free(&r);
}

/* A batch (spring-cloud-aws#196): ten messages at 0, two consumers, batches
 * of up to 10, 5 s each.  Each consumer's long poll returns with the first
 * message it sees (one each at 0); at 5 s consumer 0 receives the other
 * eight, whose timeouts end at 35 s; it has reached the 6th of them.  At
 * 35 s consumer 1 receives the three that are visible again while consumer
 * 0 still holds them: three duplicates.  Five runs are of a message
 * received before (consumer 1's three, and consumer 0's last two). */
static void test_batch(void **state)
{
    (void)state;
    const char *text = "horizon 10m\n"
                       "drain 10m\n"
                       "workflow w\n"
                       "  consumer c subscribe t fifo runs 5s\n"
                       "publish t burst 10 at 0\n";
    struct sim_result r;
    run(text, "max_messages=10 consumers=2", &r);
    simtest_expect_metric(&r, "runs", 13);
    simtest_expect_metric(&r, "duplicates", 3);
    assert_int_equal(simtest_count(&r, "start", "reason=retry"), 5);
    sim_result_free(&r);
    run(text, "max_messages=10 consumers=2 visibility_timeout=2m", &r);
    simtest_expect_metric(&r, "duplicates", 0);
    sim_result_free(&r);
}

/* A consumer that dies (crash worker 0 at 10 s) leaves its message
 * invisible until its timeout (30 s from the receive at 0): another
 * consumer receives it at 30 s.  Producers' fires are messages sent by an
 * outside scheduler: one sent while the host is down is there at the
 * restart. */
static void test_crashes(void **state)
{
    (void)state;
    struct sim_result r;
    run("horizon 10m\n"
        "workflow w\n"
        "  consumer c subscribe t fifo runs 20s\n"
        "publish t at 0\n"
        "crash worker 0 at 10s for 1m\n",
        "", &r);
    const int64_t starts[] = {0, S(30)};
    simtest_expect_starts(&r, -1, starts, 2);
    sim_result_free(&r);
    run("horizon 1h\n"
        "workflow w\n"
        "  producer p every 10m runs 1s publish t\n"
        "crash host at 15m for 10m\n",
        "", &r);
    assert_int_equal(simtest_nth(&r, "start", "due=00:20:00", 0), S(25 * 60));
    simtest_expect_metric(&r, "runs", 6);
    sim_result_free(&r);
}

/* Lowest index first, checked against a brute-force model: 2000
 * long-polling consumers, bursts of 10 s messages that never outnumber the
 * idle consumers, so each message of a burst goes at once to the lowest
 * consumer whose run has ended (model: busy_until[k] < t, k ascending).
 * `crash worker K` at an instant kills a run exactly when the model has K
 * busy then; probed for boundary and scattered K at two instants. */
#define ORDER_CONSUMERS 2000
static const struct { int64_t at; int n; } order_bursts[] = {
    {0, 700}, {S(4), 500}, {S(11), 300}, {S(12.5), 600}, {S(17), 900},
};

static int order_model_busy(uint32_t k, int64_t t)
{
    static int64_t start[ORDER_CONSUMERS], until[ORDER_CONSUMERS];
    for (uint32_t i = 0; i < ORDER_CONSUMERS; i++)
        start[i] = until[i] = -1;
    for (size_t b = 0; b < sizeof order_bursts / sizeof order_bursts[0]; b++) {
        int left = order_bursts[b].n;
        for (uint32_t i = 0; i < ORDER_CONSUMERS && left > 0; i++)
            if (until[i] < order_bursts[b].at) {
                if (order_bursts[b].at <= t) {
                    start[i] = order_bursts[b].at;
                    until[i] = order_bursts[b].at + S(10);
                }
                left--;
            }
        assert_int_equal(left, 0); /* no burst outnumbers the idle consumers */
    }
    return start[k] >= 0 && start[k] <= t && t < until[k];
}

static void test_many_consumers_order(void **state)
{
    (void)state;
    static const uint32_t ks[] = {0, 1, 298, 299, 300, 450, 699, 700, 701, 1001, 1199, 1200,
                                  1201, 1399, 1400, 1500, 1799, 1800, 1999};
    static const int64_t ats[] = {S(5), S(18)};
    char text[1024], kv[64];
    snprintf(kv, sizeof kv, "consumers=%d", ORDER_CONSUMERS);
    for (size_t a = 0; a < sizeof ats / sizeof ats[0]; a++)
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
            int len = snprintf(text, sizeof text, "horizon 1m\ndrain 1m\nworkflow w\n"
                                                  "  consumer c subscribe t fifo runs 10s\n");
            for (size_t b = 0; b < sizeof order_bursts / sizeof order_bursts[0]; b++)
                len += snprintf(text + len, sizeof text - (size_t)len, "publish t burst %d at %lldms\n",
                                order_bursts[b].n, (long long)(order_bursts[b].at / 1000));
            snprintf(text + len, sizeof text - (size_t)len, "crash worker %u at %lldms for 1s\n", ks[i],
                     (long long)(ats[a] / 1000));
            struct sim_result r;
            run(text, kv, &r);
            double crashed = simtest_metric(&r, -1, "runs_crashed");
            if (crashed != order_model_busy(ks[i], ats[a]))
                fail_msg("crash worker %u at %lld us: %.0f runs crashed, the model says %d", ks[i],
                         (long long)ats[a], crashed, order_model_busy(ks[i], ats[a]));
            simtest_expect_metric(&r, "processed", 2000 + 1000);
            simtest_expect_metric(&r, "duplicates", 0);
            sim_result_free(&r);
        }
}

/* Many consumers waiting, with short and long polling, worker and server
 * crashes, batches and a zero visibility timeout (one message received by
 * many consumers in one dispatch): exact counts and fingerprints, computed
 * by the policy when it scanned every consumer at every event; the set of
 * waiting consumers that replaced the scan must give the same runs. */
static void test_many_consumers_golden(void **state)
{
    (void)state;
    const char *text = "horizon 10m\n"
                       "drain 2m\n"
                       "seed 7\n"
                       "workflow w x 40\n"
                       "  producer p every 30s runs 500ms\n"
                       "  consumer c subscribe t fifo runs exp(3s)\n"
                       "publish t poisson 600/h\n"
                       "publish t burst 300 at 1m over 2s\n"
                       "crash worker 3 at 90s for 20s\n"
                       "crash worker 250 at 2m for 1m\n"
                       "crash server at 4m for 30s\n"
                       "crash host at 7m for 10s\n";
    static const struct {
        const char *kv;
        double processed, runs, wakeups, duplicates;
        uint64_t fp;
    } cases[] = {
        {"consumers=500", 15991, 16829, 14862, 0, UINT64_C(0x1b2e8770cf2100cc)},
        {"consumers=500 wait_time=0", 15991, 16828, 6113319, 0, UINT64_C(0x86a2be2612d83d85)},
        {"consumers=300 wait_time=0 receive_rtt=7ms max_messages=3 visibility_timeout=1s stale_delete=deletes", 15991, 22198, 21551340,
         4559, UINT64_C(0x571b10818d724f4f)},
        /* the two above under the API's rule: a delete with an earlier receipt leaves the message */
        {"consumers=300 wait_time=0 receive_rtt=7ms max_messages=3 visibility_timeout=1s", 15991, 23766, 21532986,
         4650, UINT64_C(0x834d079a50d3bde0)},
        {"consumers=300 wait_time=0 max_messages=10 visibility_timeout=0 max_receive_count=4", 10137, 40449, 3576826,
         2704, UINT64_C(0xa0f3c942fb3c1e61)},
        {"consumers=300 max_messages=10 visibility_timeout=0 max_receive_count=4", 20, 67164, 10487, 2400,
         UINT64_C(0x6598430920c94ca9)},
        {"consumers=300 wait_time=0 max_messages=10 visibility_timeout=0 max_receive_count=4 stale_delete=deletes", 10073, 40005, 3583220,
         2623, UINT64_C(0x7f400e9767646570)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sim_result r;
        run(text, cases[i].kv, &r);
        simtest_expect_metric(&r, "processed", cases[i].processed);
        simtest_expect_metric(&r, "runs", cases[i].runs);
        simtest_expect_metric(&r, "wakeups", cases[i].wakeups);
        simtest_expect_metric(&r, "duplicates", cases[i].duplicates);
        if (r.fingerprint != cases[i].fp)
            fail_msg("%s: fingerprint %016llx, want %016llx", cases[i].kv, (unsigned long long)r.fingerprint,
                     (unsigned long long)cases[i].fp);
        sim_result_free(&r);
    }
}

/* The pool goes up to a million consumers (a fleet of a million instances
 * with one each), not one more; a million, each long polling, take a few
 * bursts, lowest index first (worker 65535 is idle when it crashes, the
 * server's outage is short of the wait). */
static void test_million_consumers(void **state)
{
    (void)state;
    const struct policy_ops *ops = policy_find("sqs");
    assert_non_null(ops);
    struct params ps;
    char msg[256];
    params_init(&ps, ops);
    assert_int_equal(params_set(&ps, "consumers", "1000000", msg, sizeof msg), 0);
    assert_int_not_equal(params_set(&ps, "consumers", "1000001", msg, sizeof msg), 0);
    struct sim_result r;
    run("horizon 1m\n"
        "workflow w\n"
        "  consumer c subscribe t fifo runs 1s\n"
        "publish t burst 5 at 10s\n"
        "publish t burst 3 at 10500ms\n"
        "crash worker 65535 at 20s for 5s\n"
        "crash server at 30s for 5s\n",
        "consumers=1000000", &r);
    simtest_expect_metric(&r, "processed", 8);
    simtest_expect_metric(&r, "runs", 8);
    simtest_expect_metric(&r, "runs_crashed", 0);
    sim_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_redelivery_and_dlq),
        cmocka_unit_test(test_stale_receipt),
        cmocka_unit_test(test_visibility_ceiling),
        cmocka_unit_test(test_lapsed_heartbeat),
        cmocka_unit_test(test_poison_message),
        cmocka_unit_test(test_polling),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_crashes),
        cmocka_unit_test(test_many_consumers_order),
        cmocka_unit_test(test_many_consumers_golden),
        cmocka_unit_test(test_million_consumers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
