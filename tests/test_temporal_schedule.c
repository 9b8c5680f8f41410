/* test_temporal_schedule.c: the temporal_schedule policy on timelines
 * computed by hand from Temporal's documentation of overlap policies, the
 * catch-up window, retry policies and activity timeouts, and the rules of
 * docs/policy-temporal_schedule.md.  A run of d that fails, fails at 0.9 d
 * (the end of its mutating phase). */
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
    simtest_run(text, "temporal_schedule", kv, 1, 1, r);
}

/* A schedule every 10 min whose workflow takes 25 min (longer than the
 * interval), for an hour:
 *  skip: 10m and 20m are skipped while the first runs; 30m starts; 40m and
 *    50m skipped: starts 0, 30m.
 *  buffer_one: 10m is buffered, 20m dropped; the buffered one starts when
 *    the first closes (25m), 30m is buffered, 40m dropped, it starts at 50m.
 *  buffer_all: every action runs, one after another: 0, 25m, 50m, 75m,
 *    100m, 125m (each 25 min later than the previous).
 *  cancel_other (a heartbeating activity learns of it): each action cuts
 *    the running one off: starts every 10 min, 5 cut off.
 *  terminate_other without heartbeats: the workflow closes, its activity
 *    runs on unseen: starts every 10 min, nothing cut off.
 *  allow_all: every 10 min. */
static void test_overlap_policies(void **state)
{
    (void)state;
    const char *text = "horizon 1h\n"
                       "drain 3h\n"
                       "workflow w\n"
                       "  producer p every 10m runs 25m publish t\n";
    struct sim_result r;
    run(text, "", &r);
    const int64_t skip[] = {0, MIN(30)};
    simtest_expect_starts(&r, -1, skip, 2);
    sim_result_free(&r);
    run(text, "overlap_policy=buffer_one", &r);
    const int64_t one[] = {0, MIN(25), MIN(50)};
    simtest_expect_starts(&r, -1, one, 3);
    assert_int_equal(simtest_nth(&r, "start", "due=00:30:00", 0), MIN(50));
    sim_result_free(&r);
    run(text, "overlap_policy=buffer_all", &r);
    const int64_t all[] = {0, MIN(25), MIN(50), MIN(75), MIN(100), MIN(125)};
    simtest_expect_starts(&r, -1, all, 6);
    /* the checker serves a due by the first start at or after it: 30m by 50m */
    simtest_expect_metric(&r, "lateness.max", (double)MIN(20));
    sim_result_free(&r);
    const char *every[] = {"overlap_policy=cancel_other heartbeat_timeout=30s", "overlap_policy=terminate_other",
                           "overlap_policy=allow_all"};
    const double cut[] = {5, 0, 0};
    for (int i = 0; i < 3; i++) {
        run(text, every[i], &r);
        const int64_t ten[] = {0, MIN(10), MIN(20), MIN(30), MIN(40), MIN(50)};
        simtest_expect_starts(&r, -1, ten, 6);
        simtest_expect_metric(&r, "runs_cutoff", cut[i]);
        sim_result_free(&r);
    }
}

/* cancel_other asks the open workflow to cancel and starts the new one once
 * it has closed (buffer.go ProcessBuffer keeps the start buffered until
 * then; a later action replaces it).  Every 10 min, workflows of 25 min,
 * actions at 0 ... 40m, no heartbeats:
 *  activity_cancellation=try_cancel (the SDK default): the workflow reports
 *    its cancellation at once and closes; its activity runs on unseen: a
 *    start every 10 min, nothing cut off.
 *  wait_cancellation_completed: the workflow waits for its activity, which
 *    never hears of the cancel (no heartbeats) and ends at 25m: 10m is
 *    buffered, replaced by 20m, which starts at 25m; 30m asks that one to
 *    cancel, 40m replaces 30m and starts when it ends at 50m.
 *  wait_cancellation_completed with heartbeat_timeout=30s: the activity
 *    learns of the cancel and stops: a start every 10 min, 4 cut off. */
static void test_cancel_other(void **state)
{
    (void)state;
    const char *text = "horizon 45m\n"
                       "drain 2h\n"
                       "workflow w\n"
                       "  producer p every 10m runs 25m publish t\n";
    struct sim_result r;
    const int64_t ten[] = {0, MIN(10), MIN(20), MIN(30), MIN(40)};
    run(text, "overlap_policy=cancel_other", &r);
    simtest_expect_starts(&r, -1, ten, 5);
    simtest_expect_metric(&r, "runs_cutoff", 0);
    sim_result_free(&r);
    run(text, "overlap_policy=cancel_other activity_cancellation=wait_cancellation_completed", &r);
    const int64_t waited[] = {0, MIN(25), MIN(50)};
    simtest_expect_starts(&r, -1, waited, 3);
    assert_int_equal(simtest_nth(&r, "start", "due=00:20:00", 0), MIN(25));
    assert_int_equal(simtest_nth(&r, "start", "due=00:40:00", 0), MIN(50));
    assert_int_equal(simtest_count(&r, "start", "due=00:10:00"), 0);
    simtest_expect_metric(&r, "runs_cutoff", 0);
    sim_result_free(&r);
    run(text, "overlap_policy=cancel_other activity_cancellation=wait_cancellation_completed heartbeat_timeout=30s",
        &r);
    simtest_expect_starts(&r, -1, ten, 5);
    simtest_expect_metric(&r, "runs_cutoff", 4);
    sim_result_free(&r);
}

/* The catch-up window: every minute, the service down from 1h to 1h03m.
 * When the schedule wakes at 1h03m the action times 1h00 ... 1h03 are due.
 * With the default window (1 year) all four are started under the overlap
 * policy: skip runs 1h00 (5 s) and skips the other three (117 runs for 120
 * actions); buffer_all runs all four back to back.  With catchup_window=10s (issue temporalio/sdk-java#2189:
 * an unset window sent as 0, clamped to 10 s) the three older than 10 s are
 * dropped: only 1h03 runs. */
static void test_catchup_window(void **state)
{
    (void)state;
    const char *text = "horizon 2h\n"
                       "workflow w\n"
                       "  producer p every 1m runs 5s publish t\n"
                       "crash server at 1h for 3m\n";
    struct sim_result r;
    run(text, "", &r);
    assert_int_equal(simtest_nth(&r, "start", "due=01:00:00", 0), MIN(63));
    simtest_expect_metric(&r, "runs", 117);
    sim_result_free(&r);
    run(text, "overlap_policy=buffer_all", &r);
    assert_int_equal(simtest_nth(&r, "start", "due=01:02:00", 0), MIN(63) + S(10));
    simtest_expect_metric(&r, "runs", 120);
    sim_result_free(&r);
    run(text, "catchup_window=10s", &r);
    assert_int_equal(simtest_count(&r, "start", "due=01:00:00"), 0);
    assert_int_equal(simtest_nth(&r, "start", "due=01:03:00", 0), MIN(63));
    simtest_expect_metric(&r, "runs", 117);
    simtest_expect_metric(&r, "missed", 3);
    sim_result_free(&r);
}

/* The default retry policy: initial 1 s, coefficient 2, maximum 100 s.  An
 * activity of 1 s that always fails (at 0.9 s): attempts at 0, 0.9 + 1,
 * + 0.9 + 2, + 0.9 + 4, + 0.9 + 8 s = 0, 1.9, 4.8, 9.7, 18.6 s; with
 * maximum_attempts 5 that is all.  The delays then go 16, 32, 64, 100,
 * 100 s: the 9th attempt starts 0.9 s + 100 s after the 8th. */
static void test_retry_policy(void **state)
{
    (void)state;
    const char *text = "horizon 1h\n"
                       "drain 1h\n"
                       "workflow w\n"
                       "  producer p at 0 runs 1s publish t\n"
                       "fail w.p transient 100%\n";
    struct sim_result r;
    run(text, "max_attempts=5", &r);
    const int64_t starts[] = {0, S(1.9), S(4.8), S(9.7), S(18.6)};
    simtest_expect_starts(&r, -1, starts, 5);
    sim_result_free(&r);
    run(text, "max_attempts=10", &r);
    assert_int_equal(simtest_nth(&r, "start", NULL, 8) - simtest_nth(&r, "start", NULL, 7), S(100.9));
    assert_int_equal(simtest_nth(&r, "start", NULL, 9) - simtest_nth(&r, "start", NULL, 8), S(100.9));
    sim_result_free(&r);
}

/* maximum_interval unset is 100 x initial_interval, not a fixed 100 s:
 * initial 10 s, a 100 ms activity failing at 90 ms, 8 attempts: the
 * delays are 10, 20, 40, 80, 160, 320, 640 s (all under 1000 s).  Set to
 * 100 s explicitly, the last four wait 100 s. */
static void test_retry_max_default(void **state)
{
    (void)state;
    const char *text = "horizon 2h\n"
                       "drain 2h\n"
                       "workflow w\n"
                       "  producer p at 0 runs 100ms publish t\n"
                       "fail w.p transient 100%\n";
    struct sim_result r;
    run(text, "retry_initial=10s max_attempts=8", &r);
    const int64_t starts[] = {0, S(10.09), S(30.18), S(70.27), S(150.36), S(310.45), S(630.54), S(1270.63)};
    simtest_expect_starts(&r, -1, starts, 8);
    sim_result_free(&r);
    run(text, "retry_initial=10s retry_max_interval=100s max_attempts=8", &r);
    assert_int_equal(simtest_nth(&r, "start", NULL, 7) - simtest_nth(&r, "start", NULL, 6), S(100.09));
    assert_int_equal(simtest_nth(&r, "start", NULL, 4) - simtest_nth(&r, "start", NULL, 3), S(80.09));
    sim_result_free(&r);
}

/* The delays keep growing until maximum_interval, however many attempts
 * that takes (the server computes initial * coefficient^(n-1) afresh each
 * time): initial 1 ms, maximum 1 h, a 100 ms activity failing at 90 ms.
 * The 17th retry waits 1 ms x 2^16 = 65.536 s, the 19th 262.144 s (a table
 * cut at 16 entries stopped at 16.384 s). */
static void test_retry_growth(void **state)
{
    (void)state;
    const char *text = "horizon 2h\n"
                       "drain 2h\n"
                       "workflow w\n"
                       "  producer p at 0 runs 100ms publish t\n"
                       "fail w.p transient 100%\n";
    struct sim_result r;
    run(text, "retry_initial=1ms retry_max_interval=1h max_attempts=20", &r);
    assert_int_equal(simtest_count(&r, "start", NULL), 20);
    assert_int_equal(simtest_nth(&r, "start", NULL, 17) - simtest_nth(&r, "start", NULL, 16), S(0.09) + S(65.536));
    assert_int_equal(simtest_nth(&r, "start", NULL, 19) - simtest_nth(&r, "start", NULL, 18), S(0.09) + S(262.144));
    sim_result_free(&r);
}

/* backoff_coefficient is a double: 1.5 gives delays of 1, 1.5, 2.25 and
 * 3.375 s (initial 1 s, a 100 ms activity failing at 90 ms). */
static void test_retry_fractional(void **state)
{
    (void)state;
    const char *text = "horizon 1h\n"
                       "drain 1h\n"
                       "workflow w\n"
                       "  producer p at 0 runs 100ms publish t\n"
                       "fail w.p transient 100%\n";
    struct sim_result r;
    run(text, "retry_coefficient=1.5 max_attempts=5", &r);
    const int64_t starts[] = {0, S(1.09), S(2.68), S(5.02), S(8.485)};
    simtest_expect_starts(&r, -1, starts, 5);
    sim_result_free(&r);
}

/* The server refuses a maximum interval below the initial one (Validate),
 * unless one attempt is all it allows; an unset maximum (0) or an equal
 * one goes. */
static void test_retry_max_below_initial(void **state)
{
    (void)state;
    const struct policy_ops *ops = policy_find("temporal_schedule");
    assert_non_null(ops);
    struct params ps;
    char msg[256];
    params_init(&ps, ops);
    assert_int_equal(params_check(ops, &ps, msg, sizeof msg), -1);
    assert_int_equal(params_set(&ps, "retry_initial", "10s", msg, sizeof msg), 0);
    assert_int_equal(params_check(ops, &ps, msg, sizeof msg), -1); /* unset maximum: 100 x initial */
    assert_int_equal(params_set(&ps, "retry_max_interval", "10s", msg, sizeof msg), 0);
    assert_int_equal(params_check(ops, &ps, msg, sizeof msg), -1);
    assert_int_equal(params_set(&ps, "retry_max_interval", "9999ms", msg, sizeof msg), 0);
    assert_int_equal(params_check(ops, &ps, msg, sizeof msg), params_index(&ps, "retry_max_interval"));
    assert_non_null(strstr(msg, "retry_max_interval (9s999ms) is below retry_initial (10s)"));
    assert_non_null(strstr(msg, "MaximumInterval cannot be less than InitialInterval"));
    /* One attempt only: the server validates nothing more. */
    assert_int_equal(params_set(&ps, "max_attempts", "1", msg, sizeof msg), 0);
    assert_int_equal(params_check(ops, &ps, msg, sizeof msg), -1);
    assert_int_equal(params_set(&ps, "max_attempts", "2", msg, sizeof msg), 0);
    assert_int_equal(params_check(ops, &ps, msg, sizeof msg), params_index(&ps, "retry_max_interval"));
}

/* The coefficient's text: up to three decimal places, at least 1, shown
 * back as written. */
static void test_coefficient_param(void **state)
{
    (void)state;
    const struct policy_ops *ops = policy_find("temporal_schedule");
    assert_non_null(ops);
    struct params ps;
    params_init(&ps, ops);
    assert_int_equal(params_get(&ps, "retry_coefficient"), 2000);
    char msg[256], buf[512];
    assert_int_equal(params_set(&ps, "retry_coefficient", "1.25", msg, sizeof msg), 0);
    assert_int_equal(params_get(&ps, "retry_coefficient"), 1250);
    params_format(&ps, buf, sizeof buf);
    assert_non_null(strstr(buf, "retry_coefficient=1.25"));
    assert_int_equal(params_set(&ps, "retry_coefficient", "3", msg, sizeof msg), 0);
    assert_int_equal(params_get(&ps, "retry_coefficient"), 3000);
    const char *bad[] = {"1.2345", "0.5", "abc", "1.", ".5", "", "1e3", "101", "-2", "1.5x", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(params_set(&ps, "retry_coefficient", bad[i], msg, sizeof msg), -1);
        assert_non_null(strstr(msg, "retry_coefficient"));
    }
    assert_int_equal(params_set(&ps, "retry_coefficient", "1.2345", msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "at most 3 decimal places"));
    assert_int_equal(params_set(&ps, "retry_coefficient", "0.5", msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "out of range 1..100"));
}

/* start_to_close shorter than the work (4 min for 10 min): at 4m the service
 * fails the attempt and retries it after 1 s (4m01s) while the first still
 * runs; at 8m01s again (retry at 8m03s, after 2 s).  With maximum_attempts 3
 * the third attempt's timeout (12m03s) fails the workflow.  Every attempt
 * still runs to its end and commits: three commits of one action, two
 * duplicates, overlapping. */
static void test_start_to_close(void **state)
{
    (void)state;
    const char *text = "horizon 1h\n"
                       "drain 1h\n"
                       "workflow w\n"
                       "  producer p at 0 runs 10m publish t\n";
    struct sim_result r;
    run(text, "start_to_close=4m max_attempts=3", &r);
    const int64_t starts[] = {0, MIN(4) + S(1), MIN(8) + S(3)};
    simtest_expect_starts(&r, -1, starts, 3);
    simtest_expect_metric(&r, "duplicates", 2);
    simtest_expect_metric(&r, "overlap_runs", 2);
    assert_int_equal(simtest_count(&r, "note", "timed out"), 3);
    sim_result_free(&r);
}

/* The worker dies at 2m under a 10 min activity.  With heartbeat_timeout
 * 30 s the service finds out at 2m30s and retries after 1 s, when the
 * worker is back (3m).  Without heartbeats only start_to_close (1 h) finds
 * it: the retry starts at 1h00m01s. */
static void test_heartbeat_timeout(void **state)
{
    (void)state;
    const char *text = "horizon 3h\n"
                       "drain 1h\n"
                       "workflow w\n"
                       "  producer p at 0 runs 10m publish t\n"
                       "crash worker 0 at 2m for 1m\n";
    struct sim_result r;
    run(text, "heartbeat_timeout=30s", &r);
    const int64_t hb[] = {0, MIN(3)};
    simtest_expect_starts(&r, -1, hb, 2);
    sim_result_free(&r);
    run(text, "", &r);
    const int64_t stc[] = {0, MIN(60) + S(1)};
    simtest_expect_starts(&r, -1, stc, 2);
    sim_result_free(&r);
}

/* Jitter: each action is delayed by a deterministic amount in [0, jitter),
 * never past the next nominal time; the same every run. */
static void test_jitter(void **state)
{
    (void)state;
    const char *text = "horizon 5h\n"
                       "workflow w\n"
                       "  producer p every 1h runs 1s publish t\n";
    struct sim_result r, r2;
    run(text, "jitter=10m", &r);
    run(text, "jitter=10m", &r2);
    for (int i = 0; i < 5; i++) {
        int64_t t = simtest_nth(&r, "start", NULL, i);
        assert_true(t >= MIN(60 * i) && t < MIN(60 * i + 10));
        assert_int_equal(t, simtest_nth(&r2, "start", NULL, i));
    }
    simtest_expect_metric(&r, "missed", 0);
    sim_result_free(&r);
    sim_result_free(&r2);
}

/* Jitter longer than the interval: the service draws from [0, min(jitter,
 * time to the next nominal time)), evenly, in whole milliseconds.  Every
 * 10 min with jitter=1h, for a day: each action falls within its own 10
 * minutes, on a whole millisecond, spread over them (about half in the
 * second half), not piled up just before the next nominal time.  The last
 * one (23:50) has no following nominal time (the schedule ends at the
 * horizon, as a spec's end time ends it): its range is the whole hour. */
static void test_jitter_over_interval(void **state)
{
    (void)state;
    const char *text = "horizon 1d\n"
                       "workflow w\n"
                       "  producer p every 10m runs 1s publish t\n";
    struct sim_result r;
    run(text, "jitter=1h", &r);
    int n = simtest_count(&r, "start", NULL), late = 0, last_s = 0;
    assert_int_equal(n, 144);
    for (int i = 0; i < n - 1; i++) {
        int64_t off = simtest_nth(&r, "start", NULL, i) - MIN(10 * i);
        assert_true(off >= 0 && off < MIN(10));
        assert_int_equal(off % US_PER_MS, 0);
        late += off >= MIN(5);
        last_s += off >= MIN(10) - US_PER_S;
    }
    assert_in_range(late, 50, 94);
    assert_true(last_s <= 3);
    int64_t off = simtest_nth(&r, "start", NULL, n - 1) - MIN(1430);
    assert_true(off >= 0 && off < MIN(60) && off % US_PER_MS == 0);
    sim_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overlap_policies),
        cmocka_unit_test(test_cancel_other),
        cmocka_unit_test(test_catchup_window),
        cmocka_unit_test(test_retry_policy),
        cmocka_unit_test(test_retry_growth),
        cmocka_unit_test(test_retry_fractional),
        cmocka_unit_test(test_coefficient_param),
        cmocka_unit_test(test_retry_max_default),
        cmocka_unit_test(test_start_to_close),
        cmocka_unit_test(test_heartbeat_timeout),
        cmocka_unit_test(test_jitter),
        cmocka_unit_test(test_jitter_over_interval),
        cmocka_unit_test(test_retry_max_below_initial),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
