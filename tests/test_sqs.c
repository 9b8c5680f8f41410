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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_redelivery_and_dlq),
        cmocka_unit_test(test_poison_message),
        cmocka_unit_test(test_polling),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_crashes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
