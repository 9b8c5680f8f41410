/* test_pgqueue.c: the pgqueue policy and its flavours on timelines computed
 * by hand from the documentation and defaults of pg-boss, graphile-worker,
 * River and Oban (docs/policy-pgqueue.md).  Loops tick from the host's
 * start: pg-boss polls every 2 s, graphile's sweep every 9 min, Oban's
 * Lifeline (when configured: sweep=on) every minute. */
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
#define MIN(x) ((int64_t)(x) * 60 * US_PER_S)

static void run(const char *text, const char *kv, struct sim_result *r)
{
    simtest_run(text, "pgqueue", kv, 1, 1, r);
}

static const char *one_job(const char *runs)
{
    static char buf[256];
    snprintf(buf, sizeof buf,
             "horizon 1h\n"
             "drain 12h\n"
             "workflow w\n"
             "  consumer c subscribe t fifo runs %s\n"
             "publish t at 0\n",
             runs);
    return buf;
}

/* Oban's Lifeline rescuing a job that still runs (hexpm/hexpm PR #1825:
 * rescue_after 6 min, interval 1 min, a 20 min job).  The sweep at 7m (the
 * first after attempted_at + 6m) makes the row available; the notifier
 * wakes an idle producer, which runs it again at once (attempt 2); the same
 * at 14m (attempt 3).  Attempt 1 completes at 20m; attempts 2 and 3 still
 * run and commit at 27m and 34m: two duplicates.  With the default 60 min,
 * one run; without the Lifeline (Oban's default: it is a plugin to
 * configure), rescue_after changes nothing: one run. */
static void test_oban_lifeline(void **state)
{
    (void)state;
    struct sim_result r;
    run(one_job("20m"), "flavour=oban sweep=on rescue_after=6m", &r);
    const int64_t starts[] = {0, MIN(7), MIN(14)};
    simtest_expect_starts(&r, -1, starts, 3);
    simtest_expect_metric(&r, "duplicates", 2);
    assert_int_equal(simtest_count(&r, "note", "rescued"), 2);
    sim_result_free(&r);
    run(one_job("20m"), "flavour=oban sweep=on", &r);
    simtest_expect_metric(&r, "runs", 1);
    sim_result_free(&r);
    run(one_job("20m"), "flavour=oban rescue_after=6m", &r);
    simtest_expect_metric(&r, "runs", 1);
    assert_int_equal(simtest_count(&r, "note", "rescued"), 0);
    sim_result_free(&r);
}

/* graphile-worker's 4-hour lock (graphile/worker#169): a 6 h job on two
 * workers.  The sweep (every 9 min here) first finds the lock older than
 * 4 h at 4h03m and clears it; worker 1 takes the job at once (LISTEN): two
 * executions, overlapping from 4h03m to 6h (1h57m). */
static void test_graphile_lock(void **state)
{
    (void)state;
    struct sim_result r;
    run(one_job("6h"), "flavour=graphile workers=2", &r);
    const int64_t starts[] = {0, MIN(243)};
    simtest_expect_starts(&r, -1, starts, 2);
    simtest_expect_metric(&r, "duplicates", 1);
    simtest_expect_metric(&r, "overlaps", (double)MIN(117));
    sim_result_free(&r);
}

/* pg-boss's 15 min expiry (timgit/pg-boss#529) on a 40 min job: the worker
 * polls at 2 s and starts it; at 15m02s it abandons the handler (still
 * running), fails the job, and retries it at once (retryDelay 0): attempt 2
 * on the same worker; at 30m02s attempt 3, the last (retryLimit 2), which
 * is abandoned at 45m02s and the job ends failed.  The abandoned handlers
 * run on and commit at 40m02s, 55m02s and 1h10m02s: two duplicates, but
 * none of their results reaches the row (src/manager.ts races the handler
 * against the expiry and drops a late result).  expireInSeconds = 6 h: one
 * run. */
static void test_pgboss_expire(void **state)
{
    (void)state;
    struct sim_result r;
    run(one_job("40m"), "", &r);
    const int64_t starts[] = {S(2), MIN(15) + S(2), MIN(30) + S(2)};
    simtest_expect_starts(&r, -1, starts, 3);
    simtest_expect_metric(&r, "duplicates", 2);
    assert_int_equal(simtest_count(&r, "note", "failed after 3 attempts"), 1);
    sim_result_free(&r);
    run(one_job("40m"), "rescue_after=6h", &r);
    simtest_expect_metric(&r, "runs", 1);
    sim_result_free(&r);
}

/* pg-boss: a 20 min job with retryDelay 1 h.  Abandoned at 15m02s, it is
 * retried at 1h15m02s (found by the 2 s poll) although its first handler
 * committed at 20m02s: that late result does not complete the row. */
static void test_pgboss_late_result(void **state)
{
    (void)state;
    struct sim_result r;
    run(one_job("20m"), "retry_delay=1h", &r);
    const int64_t starts[] = {S(2), MIN(75) + S(2)};
    simtest_expect_starts(&r, -1, starts, 2);
    sim_result_free(&r);
}

/* pg-boss's worker loop (src/worker.ts run()) waits pollingIntervalSeconds
 * from before its fetch unless at most 100 ms remain: 20 jobs of 100 ms
 * published at 10m run one per 2 s (10m, 10m02s ... 10m38s); jobs of
 * 1.95 s follow each other at once.  A NOTIFY (notify on) ends the wait;
 * with fetch_after_job=at_once the 20 jobs run back to back. */
static void test_pgboss_loop(void **state)
{
    (void)state;
    const char *burst = "horizon 1h\n"
                        "drain 1h\n"
                        "workflow w\n"
                        "  consumer c subscribe t fifo runs %s\n"
                        "publish t burst %d at 10m over 0s\n";
    char text[256];
    struct sim_result r;
    snprintf(text, sizeof text, burst, "100ms", 20);
    run(text, "", &r);
    int64_t starts[20];
    for (int i = 0; i < 20; i++)
        starts[i] = MIN(10) + S(2 * i);
    simtest_expect_starts(&r, -1, starts, 20);
    sim_result_free(&r);
    run(text, "fetch_after_job=at_once", &r);
    for (int i = 0; i < 20; i++)
        starts[i] = MIN(10) + S(0.1 * i);
    simtest_expect_starts(&r, -1, starts, 20);
    sim_result_free(&r);
    snprintf(text, sizeof text, burst, "1950ms", 3);
    run(text, "", &r);
    const int64_t near[] = {MIN(10), MIN(10) + S(1.95), MIN(10) + S(3.9)};
    simtest_expect_starts(&r, -1, near, 3);
    sim_result_free(&r);
    run("horizon 1h\n"
        "drain 1h\n"
        "workflow w\n"
        "  consumer c subscribe t fifo runs 100ms\n"
        "publish t at 10m\n"
        "publish t at 10m500ms\n",
        "notify=on", &r);
    const int64_t woken[] = {MIN(10), MIN(10) + S(0.5)};
    simtest_expect_starts(&r, -1, woken, 2);
    sim_result_free(&r);
}

/* River: a job that ignores nothing of JobTimeout (1 min) and takes 3 h is
 * cancelled at 1 min, every attempt.  With JobTimeout -1 (never) River
 * never rescues it (job_rescuer.go; CHANGELOG 0.40.0, 0.41.1): one run.
 * Before 0.40.0 (rescue_untimed=yes) the rescuer (every 30 s, after 1 h)
 * made it retryable at 1h00m30s, to run 1 s (+-10 %) later, which the 1 s
 * poll finds at 1h00m31s or 1h00m32s; again an hour after that: three
 * executions. */
static void test_river(void **state)
{
    (void)state;
    struct sim_result r;
    run(one_job("3h"), "flavour=river max_attempts=3", &r);
    simtest_expect_metric(&r, "runs", 3);
    simtest_expect_metric(&r, "runs_cutoff", 3);
    simtest_expect_metric(&r, "processed", 0);
    sim_result_free(&r);
    run(one_job("3h"), "flavour=river job_timeout_seconds=-1", &r);
    simtest_expect_metric(&r, "runs", 1);
    simtest_expect_metric(&r, "duplicates", 0);
    sim_result_free(&r);
    run(one_job("3h"), "flavour=river job_timeout_seconds=-1 rescue_untimed=yes", &r);
    int64_t second = simtest_nth(&r, "start", NULL, 1);
    assert_true(second == MIN(60) + S(31) || second == MIN(60) + S(32));
    simtest_expect_metric(&r, "duplicates", 2);
    sim_result_free(&r);
}

/* River's rescue threshold (client.go): JobTimeout + 1 h whenever
 * JobTimeout is set above 0, 1 h with the default.  A worker killed at
 * 10m05s under a 10 s job started at 10m: with JobTimeout 5 min the row is
 * rescued by the first rescuer tick after 1h15m (1h15m30s) and run 1 s
 * (+-10 %) later by the poll; with the default, at 1h10m30s. */
static void test_river_rescue_threshold(void **state)
{
    (void)state;
    const char *text = "horizon 1h\n"
                       "drain 12h\n"
                       "workflow w\n"
                       "  consumer c subscribe t fifo runs 10s\n"
                       "publish t at 10m\n"
                       "crash worker 0 at 10m05s for 1m\n";
    struct sim_result r;
    run(text, "flavour=river job_timeout_seconds=300", &r);
    int64_t second = simtest_nth(&r, "start", NULL, 1);
    assert_true(second == MIN(75) + S(31) || second == MIN(75) + S(32));
    sim_result_free(&r);
    run(text, "flavour=river", &r);
    second = simtest_nth(&r, "start", NULL, 1);
    assert_true(second == MIN(70) + S(31) || second == MIN(70) + S(32));
    sim_result_free(&r);
}

/* What a handler does with its timeout's signal.  River's JobTimeout
 * cancels Work's context and waits for Work to return: a 5 min job that
 * ignores its context keeps its worker and completes at 5m (one run, no
 * cutoff); one that honours it is cut off at 1 min.  pg-boss abandons the
 * handler either way: one that honours its AbortSignal stops, so the
 * three attempts of a 40 min job are all cut off and nothing commits
 * twice. */
static void test_handler_cancel(void **state)
{
    (void)state;
    struct sim_result r;
    run(one_job("5m"), "flavour=river handler_cancel=ignores max_attempts=1", &r);
    simtest_expect_metric(&r, "runs", 1);
    simtest_expect_metric(&r, "runs_cutoff", 0);
    simtest_expect_metric(&r, "processed", 1);
    sim_result_free(&r);
    run(one_job("5m"), "flavour=river max_attempts=1", &r);
    simtest_expect_metric(&r, "runs_cutoff", 1);
    simtest_expect_metric(&r, "processed", 0);
    sim_result_free(&r);
    run(one_job("40m"), "handler_cancel=honours", &r);
    const int64_t starts[] = {S(2), MIN(15) + S(2), MIN(30) + S(2)};
    simtest_expect_starts(&r, -1, starts, 3);
    simtest_expect_metric(&r, "runs_cutoff", 3);
    simtest_expect_metric(&r, "duplicates", 0);
    sim_result_free(&r);
}

/* pg-boss fetches by created_on, which a retry keeps (src/plans.ts
 * fetchNextJob: priority desc, created_on, id): two 20 min jobs created at
 * 0 and 1 s on one worker.  The first is taken at the 2 s poll and expires
 * at 15m02s; its retry (retryDelay 0) goes ahead of the second job, which
 * waits until the last attempt of the first expires at 30m02s and the
 * worker polls at 30m04s (fetching by run_at, which the retry moves, the
 * second job would start at 15m02s). */
static void test_pgboss_retry_order(void **state)
{
    (void)state;
    const char *text = "horizon 2h\n"
                       "drain 2h\n"
                       "workflow w\n"
                       "  consumer c subscribe t fifo runs 20m\n"
                       "publish t at 0\n"
                       "publish t at 1s\n";
    struct sim_result r;
    run(text, "", &r);
    assert_int_equal(simtest_nth(&r, "start", "reason=retry", 0), MIN(15) + S(2));
    assert_int_equal(simtest_nth(&r, "start", "reason=retry", 1), MIN(30) + S(2));
    assert_int_equal(simtest_nth(&r, "start", "reason=event", 1), MIN(30) + S(4));
    sim_result_free(&r);
}

/* Oban with more than 20 attempts scales the attempt to 20 before its
 * curve (Oban.Backoff.jittery_clamped: round(attempt / max_attempts * 20)):
 * with max_attempts 40, the 10th failure waits 15 + 2^5 s (+ up to 10 %),
 * not 15 + 2^10 s; the 2nd 15 + 2^1 s. */
static void test_oban_clamped_backoff(void **state)
{
    (void)state;
    const char *text = "horizon 2h\n"
                       "drain 2h\n"
                       "workflow w\n"
                       "  consumer c subscribe t fifo runs 1s\n"
                       "publish t at 0\n"
                       "fail w.c transient 100%\n";
    struct sim_result r;
    run(text, "flavour=oban max_attempts=40", &r);
    int64_t gap2 = simtest_nth(&r, "start", NULL, 2) - simtest_nth(&r, "start", NULL, 1);
    int64_t gap10 = simtest_nth(&r, "start", NULL, 10) - simtest_nth(&r, "start", NULL, 9);
    assert_true(gap2 >= S(0.9) + S(17) && gap2 <= S(0.9) + S(18.7) + S(2));
    assert_true(gap10 >= S(0.9) + S(47) && gap10 <= S(0.9) + S(51.7) + S(2));
    sim_result_free(&r);
}

/* graphile-worker's backoff, exp(min(attempts, 10)) s, found by the 2 s
 * poll: a job at 10.5 s that fails at 0.9 s: attempt 2 may run from
 * 11.4 + e = 14.12 s, found at the 16 s poll; attempt 3 from 16.9 + e^2 =
 * 24.29 s, at 26 s; attempt 4 from 26.9 + e^3 = 46.99 s, at 48 s.  pg-boss
 * (no LISTEN, 2 s poll) first sees the job at the 12 s poll. */
static void test_retry_and_polling(void **state)
{
    (void)state;
    const char *text = "horizon 1h\n"
                       "drain 1h\n"
                       "workflow w\n"
                       "  consumer c subscribe t fifo runs 1s\n"
                       "publish t at 10500ms\n"
                       "fail w.c transient 100%\n";
    struct sim_result r;
    run(text, "flavour=graphile max_attempts=4", &r);
    const int64_t starts[] = {S(10.5), S(16), S(26), S(48)};
    simtest_expect_starts(&r, -1, starts, 4);
    sim_result_free(&r);
    run(text, "max_attempts=1", &r);
    const int64_t pb[] = {S(12)};
    simtest_expect_starts(&r, -1, pb, 1);
    sim_result_free(&r);
    run(text, "max_attempts=1 notify=on", &r);
    const int64_t on[] = {S(10.5)};
    simtest_expect_starts(&r, -1, on, 1);
    sim_result_free(&r);
}

/* A worker killed under a job (graphile/worker#198): its lock stays for
 * 4 h, and the job waits for the sweep (on its last attempt, for ever);
 * Oban with its Lifeline configured
 * runs it again after 60 min, and without it (Oban's default) never. */
static void test_crashed_worker(void **state)
{
    (void)state;
    const char *text = "horizon 1h\n"
                       "drain 12h\n"
                       "workflow w\n"
                       "  consumer c subscribe t fifo runs 10s\n"
                       "publish t at 10m\n"
                       "crash worker 0 at 10m05s for 1m\n";
    struct sim_result r;
    run(text, "flavour=graphile", &r);
    assert_int_equal(simtest_nth(&r, "start", NULL, 1), MIN(252));
    sim_result_free(&r);
    /* Its last attempt: the cleared row is never available again
     * (attempts < max_attempts is part of is_available). */
    run(text, "flavour=graphile max_attempts=1", &r);
    simtest_expect_metric(&r, "runs", 1);
    simtest_expect_metric(&r, "processed", 0);
    assert_int_equal(simtest_count(&r, "note", "rescued"), 1);
    sim_result_free(&r);
    run(text, "flavour=oban sweep=on", &r);
    assert_int_equal(simtest_nth(&r, "start", NULL, 1), MIN(71));
    sim_result_free(&r);
    run(text, "flavour=oban", &r);
    simtest_expect_metric(&r, "runs", 1);
    simtest_expect_metric(&r, "processed", 0);
    sim_result_free(&r);
}

/* The sweep's next instant with several rows executing, claimed at
 * different times and rescued over and over (Oban, rescue_after 6 min,
 * the Lifeline every minute, 8 workers): each row is rescued at the first
 * Lifeline tick after its latest claim + 6 min, whatever the others do,
 * until its first attempt completes (20 min after its first claim).  The
 * third row's rescue at 18 min finds all 8 workers busy with the 8
 * attempts so far: it waits for the first worker to finish, at 20 min. */
static void test_staggered_rescues(void **state)
{
    (void)state;
    struct sim_result r;
    run("horizon 1h\n"
        "drain 12h\n"
        "workflow w\n"
        "  consumer c subscribe t fifo runs 20m\n"
        "publish t at 0\n"
        "publish t at 2m\n"
        "publish t at 4m\n",
        "flavour=oban sweep=on rescue_after=6m workers=8", &r);
    const int64_t starts[] = {0, MIN(2), MIN(4), MIN(7), MIN(9), MIN(11), MIN(14), MIN(16), MIN(20)};
    simtest_expect_starts(&r, -1, starts, 9);
    assert_int_equal(simtest_count(&r, "note", "rescued"), 6);
    sim_result_free(&r);
}

/* The cron plugins: a schedule every 10 min during an outage of the host
 * from 15m to 42m30s.  pg-boss sends a missed fire only while it is under
 * 60 s old (src/timekeeper.ts shouldSendIt): the 40m fire is 2m30s old at
 * the first check, so nothing is sent: runs for 0, 10m, 50m.  An outage to
 * 40m30s: the 40m fire is 30 s old, sent at 40m30s.  Oban's cron does not
 * backfill: 0, 10m, 50m. */
static void test_cron(void **state)
{
    (void)state;
    const char *text = "horizon 1h\n"
                       "workflow w\n"
                       "  producer p every 10m runs 1s publish t\n"
                       "crash host at 15m for 27m30s\n";
    struct sim_result r;
    run(text, "", &r);
    assert_int_equal(simtest_count(&r, "start", "due=00:40:00"), 0);
    simtest_expect_metric(&r, "runs", 3);
    sim_result_free(&r);
    run("horizon 1h\n"
        "workflow w\n"
        "  producer p every 10m runs 1s publish t\n"
        "crash host at 15m for 25m30s\n",
        "", &r);
    assert_int_equal(simtest_nth(&r, "start", "due=00:40:00", 0), MIN(40) + S(30));
    simtest_expect_metric(&r, "runs", 4);
    sim_result_free(&r);
    run(text, "flavour=oban", &r);
    assert_int_equal(simtest_count(&r, "start", "due=00:40:00"), 0);
    simtest_expect_metric(&r, "runs", 3);
    sim_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oban_lifeline),
        cmocka_unit_test(test_oban_clamped_backoff),
        cmocka_unit_test(test_graphile_lock),
        cmocka_unit_test(test_pgboss_retry_order),
        cmocka_unit_test(test_pgboss_expire),
        cmocka_unit_test(test_pgboss_late_result),
        cmocka_unit_test(test_pgboss_loop),
        cmocka_unit_test(test_river),
        cmocka_unit_test(test_river_rescue_threshold),
        cmocka_unit_test(test_handler_cancel),
        cmocka_unit_test(test_retry_and_polling),
        cmocka_unit_test(test_crashed_worker),
        cmocka_unit_test(test_staggered_rescues),
        cmocka_unit_test(test_cron),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
