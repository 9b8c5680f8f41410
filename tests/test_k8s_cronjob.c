/* test_k8s_cronjob.c: the k8s_cronjob policy on timelines computed by hand
 * from the Kubernetes documentation's own examples and the controller rules
 * in docs/policy-k8s_cronjob.md.  Each test says how its numbers come
 * about.  Runs of d with the default phases commit at start + d. */
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
    simtest_run(text, "k8s_cronjob", kv, 1, 1, r);
}

/* The documentation's example: an every-minute CronJob whose controller is
 * down from 08:29:00 to 10:21:00 (here: `crash server`, the controller
 * manager; pods are unaffected).  Fires 08:00 ... 08:28 run on time (29).
 * v1: the first pass after the restart (10:21:00) counts the unmet fires
 * 08:29 ... 10:21 = 113 > 100: FailedNeedsStart, no Job, and since
 * lastScheduleTime stays at 08:28 the count only grows: no Job ever again.
 * With startingDeadlineSeconds=200 only the fires after 10:17:40 count
 * (10:18 ... 10:21, 4): the Job for 10:21 starts at 10:21:00, then one a
 * minute (the 10 s passes are aligned with the minutes).  v2 does the same
 * as the deadline case without one: a warning, and the most recent fire. */
static const char *outage = "start 2025-01-01T08:00:00Z\n"
                            "horizon 2h30m\n"
                            "workflow w\n"
                            "  producer p cron \"* * * * *\" runs 5s publish t\n"
                            "crash server at 29m for 1h52m\n";

static void test_docs_outage_v1(void **state)
{
    (void)state;
    struct sim_result r;
    run(outage, "controller=v1", &r);
    simtest_expect_metric(&r, "runs", 29);
    simtest_expect_metric(&r, "dues", 150);
    simtest_expect_metric(&r, "missed", 121);
    assert_int_equal(simtest_count(&r, "note", "FailedNeedsStart"), 1);
    sim_result_free(&r);

    run(outage, "controller=v1 starting_deadline_seconds=200", &r);
    simtest_expect_metric(&r, "runs", 29 + 9);
    assert_int_equal(simtest_nth(&r, "start", NULL, 29), MIN(141));
    assert_int_equal(simtest_nth(&r, "start", "due=02:21:00", 0), MIN(141));
    simtest_expect_metric(&r, "missed", 150 - 38);
    sim_result_free(&r);

    run(outage, "", &r); /* v2 */
    simtest_expect_metric(&r, "runs", 29 + 9);
    assert_int_equal(simtest_nth(&r, "start", NULL, 29), MIN(141));
    assert_int_equal(simtest_count(&r, "note", "TooManyMissedTimes"), 1);
    /* v2 requeues 100 ms after each fire */
    assert_int_equal(simtest_nth(&r, "start", NULL, 30), MIN(142) + 100 * US_PER_MS);
    sim_result_free(&r);
}

/* v2 after an outage, on a schedule whose intervals differ (the review's
 * case, utils.go mostRecentScheduleTime since 1.28): "0 9,17 * * *", the
 * controller down from day 1 08:00 to day 2 08:00.  lastScheduleTime is
 * 0d17:00; at the restart t1 = 1d09:00, t2 = 1d17:00, the gap 8 h, 23 h
 * elapsed: n = 23 / 8 + 1 = 3, the search starts at t1 + (3 - 2) * 8 h =
 * 1d17:00 and its next fire, 2d09:00, is after now: no Job ("No unmet start
 * times"); the next one is 2d09:00's, 100 ms after it.  The old model
 * started 1d17:00's Job at 2d08:00.  v1 walks every fire and starts the
 * most recent (1d17:00) at its pass at 2d08:00. */
static const char *irregular = "start 2025-01-06T00:00:00Z\n"
                               "timezone UTC\n"
                               "horizon 3d\n"
                               "workflow w\n"
                               "  producer p cron \"0 9,17 * * *\" runs 1m publish t\n"
                               "crash server at 1d08:00 for 24h\n";

static void test_v2_irregular_outage(void **state)
{
    (void)state;
    const int64_t ms100 = 100 * US_PER_MS;
    struct sim_result r;
    run(irregular, "", &r);
    const int64_t starts[] = {MIN(9 * 60) + ms100, MIN(17 * 60) + ms100, MIN(57 * 60) + ms100,
                              MIN(65 * 60) + ms100};
    simtest_expect_starts(&r, -1, starts, 4);
    simtest_expect_metric(&r, "missed", 2);
    assert_int_equal(simtest_count(&r, "note", "No unmet start times"), 1);
    sim_result_free(&r);
    run(irregular, "controller=v1", &r);
    const int64_t starts1[] = {MIN(9 * 60), MIN(17 * 60), MIN(56 * 60), MIN(57 * 60), MIN(65 * 60)};
    simtest_expect_starts(&r, -1, starts1, 5);
    sim_result_free(&r);
}

/* The same search when a Forbid Job ends after spanning several fires: the
 * CronJob is created at 10:00, its first Job (17:00) runs 39 h, to 2d08:00
 * (+100 ms).  There lastScheduleTime is 0d17:00: n = 3 as above, the search
 * from 1d17:00 finds nothing, and 1d17:00 is dropped; 2d09:00's Job starts
 * 100 ms after its fire. */
static void test_v2_irregular_forbid(void **state)
{
    (void)state;
    const char *text = "start 2025-01-06T10:00:00Z\n"
                       "timezone UTC\n"
                       "horizon 2d\n"
                       "workflow w\n"
                       "  producer p cron \"0 9,17 * * *\" runs 39h publish t\n";
    struct sim_result r;
    run(text, "concurrency_policy=Forbid", &r);
    const int64_t starts[] = {MIN(7 * 60) + 100 * US_PER_MS, MIN(47 * 60) + 100 * US_PER_MS};
    simtest_expect_starts(&r, -1, starts, 2);
    assert_int_equal(simtest_count(&r, "note", "No unmet start times"), 1);
    sim_result_free(&r);
}

/* Fires less than a minute apart (every 30 s for 5 min): v2 names a Job
 * after the fire's Unix minute (getJobName, getTimeHashInMinutes), so the
 * fire at :30 finds its name taken by the Job of :00 and creates none: Jobs
 * at 0, 60.1, 120.1, 180.1, 240.1 s only, where the old model ran 10.
 * With Jobs of 45 s the :00 Job is still active at :30 (inActiveListByName:
 * skipped) and finished when it ends at :45, whose sync finds :30 again:
 * AlreadyExists, no Job either.  v1 named Jobs by the second: 10 runs. */
static void test_v2_one_job_a_minute(void **state)
{
    (void)state;
    const char *text = "start 2025-01-06T00:00:00Z\n"
                       "horizon 5m\n"
                       "workflow w\n"
                       "  producer p every 30s runs 1s publish t\n";
    const int64_t ms100 = 100 * US_PER_MS;
    const int64_t starts[] = {0, MIN(1) + ms100, MIN(2) + ms100, MIN(3) + ms100, MIN(4) + ms100};
    struct sim_result r;
    run(text, "", &r);
    simtest_expect_starts(&r, -1, starts, 5);
    assert_int_equal(simtest_count(&r, "note", "Job name taken"), 5);
    sim_result_free(&r);
    run(text, "controller=v1", &r);
    simtest_expect_metric(&r, "runs", 10);
    sim_result_free(&r);

    const char *longer = "start 2025-01-06T00:00:00Z\n"
                         "horizon 5m\n"
                         "workflow w\n"
                         "  producer p every 30s runs 45s publish t\n";
    run(longer, "", &r);
    simtest_expect_starts(&r, -1, starts, 5);
    simtest_expect_metric(&r, "overlaps", 0);
    sim_result_free(&r);
}

/* Forbid with a Job longer than the period (every 5 min, 7 min): the fire at
 * 5m is skipped (JobAlreadyActive) but stays unmet; when the Job ends at 7m
 * its end syncs the CronJob and the Job for 5m starts at once (v2), and so
 * on: starts at 0, 7, 14, 21, 28 min, each serving the latest fire before
 * it (0, 5, 10, 20, 25).  The checker serves each due by the first start at
 * or after it: 15 by the start at 21 (6 min late, the most), and 15 is
 * missed (nothing starts in [15, 20)).  Under v1 the end is seen
 * by the next 10 s pass: the same instants (all multiples of 10 s). */
static void test_forbid_long_job(void **state)
{
    (void)state;
    const char *text = "horizon 30m\n"
                       "workflow w\n"
                       "  producer p every 5m runs 7m publish t\n";
    const char *sets[] = {"concurrency_policy=Forbid", "concurrency_policy=Forbid controller=v1"};
    for (int i = 0; i < 2; i++) {
        struct sim_result r;
        run(text, sets[i], &r);
        const int64_t starts[] = {0, MIN(7), MIN(14), MIN(21), MIN(28)};
        simtest_expect_starts(&r, -1, starts, 5);
        assert_int_equal(simtest_nth(&r, "start", "due=00:10:00", 0), MIN(14));
        assert_int_equal(simtest_nth(&r, "start", "due=00:20:00", 0), MIN(21));
        simtest_expect_metric(&r, "overlaps", 0);
        simtest_expect_metric(&r, "lateness.max", (double)MIN(6));
        simtest_expect_metric(&r, "missed", 1);
        sim_result_free(&r);
    }
}

/* Replace: at each fire the running Job is deleted (its pod killed, cut
 * off) and a new one starts: starts every 5 min, 5 cut off, no overlap.
 * Allow: they overlap (7 min each, one every 5 min). */
static void test_replace_and_allow(void **state)
{
    (void)state;
    const char *text = "horizon 30m\n"
                       "drain 10m\n"
                       "workflow w\n"
                       "  producer p every 5m runs 7m publish t\n";
    struct sim_result r;
    run(text, "concurrency_policy=Replace", &r);
    simtest_expect_metric(&r, "runs", 6);
    simtest_expect_metric(&r, "runs_cutoff", 5);
    assert_int_equal(simtest_nth(&r, "end", "cutoff", 0), MIN(5) + 100 * US_PER_MS);
    sim_result_free(&r);
    run(text, "", &r);
    simtest_expect_metric(&r, "runs", 6);
    simtest_expect_metric(&r, "runs_cutoff", 0);
    simtest_expect_metric(&r, "missed", 0);
    sim_result_free(&r);
}

/* The fall-back of 2023-10-29 in Europe/Berlin (issue #121594): robfig/cron
 * matches 02:00 wall time at 00:00Z (CEST) and again at 01:00Z (CET); both
 * Jobs serve the day's one nominal due: a duplicate.  (The first fire, on
 * the 28th at the start, runs at the controller's first sync; the others
 * 100 ms after their fire.)  The cronie calendar fires once a day. */
static void test_dst_fall_back_twice(void **state)
{
    (void)state;
    const char *text = "start 2023-10-28T00:00:00Z\n"
                       "timezone Europe/Berlin\n"
                       "horizon 2d\n"
                       "workflow w\n"
                       "  producer p cron \"0 2 * * *\" runs 50m publish t\n";
    struct sim_result r;
    run(text, "", &r);
    const int64_t starts[] = {0, S(86400 + 100e-3), S(86400 + 3600 + 100e-3)};
    simtest_expect_starts(&r, -1, starts, 3);
    simtest_expect_metric(&r, "dues", 2);
    simtest_expect_metric(&r, "duplicates", 1);
    sim_result_free(&r);
    run(text, "calendar=cronie", &r);
    simtest_expect_metric(&r, "runs", 2);
    simtest_expect_metric(&r, "duplicates", 0);
    sim_result_free(&r);
}

/* Suspension ("missed Jobs are scheduled immediately" on unsuspend): every
 * 10 min, suspended from 25m for 1h.  Fires 30m ... 1h20m are not started;
 * v2 syncs at the unsuspend (1h25m) and starts the most recent one (1h20m);
 * then 1h30m.  v1 counts the 6 unmet fires (<= 100) and does the same at the
 * pass at 1h25m.  Suspended until 2h25m (in the drain) with a limit of 5,
 * v1 finds the 10 fires 30m ... 1h50m unmet there and never runs again. */
static void test_suspend_window(void **state)
{
    (void)state;
    const char *text = "horizon 2h\n"
                       "workflow w\n"
                       "  producer p cron \"*/10 * * * *\" runs 1m publish t\n";
    struct sim_result r;
    run(text, "suspend=true suspend_at=25m suspend_for=1h", &r);
    const int64_t starts[] = {0, MIN(10) + 100 * US_PER_MS, MIN(20) + 100 * US_PER_MS, MIN(85),
                              MIN(90) + 100 * US_PER_MS,
                              MIN(100) + 100 * US_PER_MS, MIN(110) + 100 * US_PER_MS};
    simtest_expect_starts(&r, -1, starts, 7);
    assert_int_equal(simtest_nth(&r, "start", "due=01:20:00", 0), MIN(85));
    sim_result_free(&r);
    run(text, "controller=v1 suspend=true suspend_at=25m suspend_for=1h", &r);
    simtest_expect_metric(&r, "runs", 7);
    assert_int_equal(simtest_nth(&r, "start", NULL, 3), MIN(85));
    sim_result_free(&r);
    run(text, "controller=v1 suspend=true suspend_at=25m suspend_for=2h missed_limit=5", &r);
    simtest_expect_metric(&r, "runs", 3);
    sim_result_free(&r);
}

/* A failing Job: pods are replaced after 10 s, 20 s, 40 s, 80 s, 160 s and
 * 320 s, and the Job fails after backoffLimit = 6 such retries: 7 pods.  A
 * pod of 1 s fails at 0.9 s (end of mutating): starts 0, 10.9, 31.8, 72.7,
 * 153.6, 314.5, 635.4 s.  With backoffLimit = 7 the 7th retry waits
 * 640 s capped at MaxJobPodFailureBackOff = 10 min: 635.4 + 0.9 + 600 =
 * 1236.3 s (the Job docs' six minutes would give 996.3 s). */
static void test_job_backoff(void **state)
{
    (void)state;
    const char *text = "horizon 1h\n"
                       "workflow w\n"
                       "  producer p at 0 runs 1s publish t\n"
                       "fail w.p transient 100%\n";
    struct sim_result r;
    run(text, "", &r);
    const int64_t starts[] = {0, S(10.9), S(31.8), S(72.7), S(153.6), S(314.5), S(635.4)};
    simtest_expect_starts(&r, -1, starts, 7);
    assert_int_equal(simtest_count(&r, "start", "reason=retry"), 6);
    sim_result_free(&r);
    run(text, "backoff_limit=7", &r);
    simtest_expect_metric(&r, "runs", 8);
    assert_int_equal(simtest_nth(&r, "start", NULL, 7), S(1236.3));
    sim_result_free(&r);
}

/* restartPolicy OnFailure: the pod stays and the kubelet restarts its
 * container, at once the first time, then after 10 s, 20 s, 40 s, 80 s
 * (CrashLoopBackOff); the Job fails when the restart count reaches
 * backoffLimit = 6 (pastBackoffLimitOnFailure), so after 6 failed runs,
 * not 7.  Runs of 1 s fail at 0.9 s: starts 0, 0.9, 1.8 + 10 = 11.8, 12.7 +
 * 20 = 32.7, 33.6 + 40 = 73.6, 74.5 + 80 = 154.5; the 6th restart, at
 * 155.4 + 160 = 315.4 s, fails the Job. */
static void test_restart_on_failure(void **state)
{
    (void)state;
    const char *text = "horizon 1h\n"
                       "workflow w\n"
                       "  producer p at 0 runs 1s publish t\n"
                       "fail w.p transient 100%\n";
    struct sim_result r;
    run(text, "restart_policy=on_failure", &r);
    const int64_t starts[] = {0, S(0.9), S(11.8), S(32.7), S(73.6), S(154.5)};
    simtest_expect_starts(&r, -1, starts, 6);
    assert_int_equal(simtest_nth(&r, "note", "BackoffLimitExceeded", 0), S(315.4));
    sim_result_free(&r);
    /* The Job controller (the controller manager) down from 1 min to
     * 1h01m: a 10 min run fails at 9 min and the kubelet restarts it at
     * once (count 1, backoffLimit 1); nobody fails the Job until the
     * controller is back and kills that run (cut off). */
    const char *down = "horizon 1h\n"
                       "workflow w\n"
                       "  producer p at 0 runs 10m publish t\n"
                       "fail w.p transient 100%\n"
                       "crash server at 1m for 1h\n";
    run(down, "restart_policy=on_failure backoff_limit=1", &r);
    assert_int_equal(simtest_nth(&r, "start", NULL, 1), MIN(9));
    assert_int_equal(simtest_nth(&r, "note", "BackoffLimitExceeded", 0), MIN(61));
    simtest_expect_metric(&r, "runs_cutoff", 1);
    sim_result_free(&r);
}

/* The cluster's capacity: 12 CronJobs due at 0, room for 10 pods of 1 min:
 * 10 start at 0, 2 wait (Pending) until pods end at 1m. */
static void test_capacity(void **state)
{
    (void)state;
    const char *text = "horizon 10m\n"
                       "workflow w x 12\n"
                       "  producer p at 0 runs 1m publish t\n";
    struct sim_result r;
    run(text, "cluster_capacity=10", &r);
    simtest_expect_metric(&r, "runs", 12);
    simtest_expect_metric(&r, "lateness.max", (double)MIN(1));
    assert_int_equal(simtest_nth(&r, "start", NULL, 10), MIN(1));
    sim_result_free(&r);
}

/* Consumers are Deployments: each event is processed at once. */
static void test_consumer(void **state)
{
    (void)state;
    const char *text = "horizon 1h\n"
                       "workflow w\n"
                       "  consumer c subscribe t fifo runs 2s\n"
                       "publish t at 10m\n"
                       "publish t at 20m\n";
    struct sim_result r;
    run(text, "", &r);
    const int64_t starts[] = {MIN(10), MIN(20)};
    simtest_expect_starts(&r, -1, starts, 2);
    simtest_expect_metric(&r, "latency.max", (double)S(2));
    sim_result_free(&r);
}

/* A Deployment's container that exits on every event is restarted by the
 * kubelet at once the first time, then after 10 s, 20 s, 40 s
 * (CrashLoopBackOff, kubeGenericRuntimeManager.doBackOff: no back-off entry
 * before the first exit).  Runs of 2 s fail at 1.8 s: starts at 10 min,
 * +1.8, +3.6 + 10, +15.4 + 20, +37.2 + 40 s (the next, +159 s, is past the
 * horizon). */
static void test_consumer_crash_loop(void **state)
{
    (void)state;
    const char *text = "horizon 12m\n"
                       "drain 0s\n"
                       "workflow w\n"
                       "  consumer c subscribe t fifo runs 2s\n"
                       "publish t at 10m\n"
                       "fail w.c transient 100%\n";
    struct sim_result r;
    run(text, "", &r);
    const int64_t starts[] = {MIN(10), MIN(10) + S(1.8), MIN(10) + S(13.6), MIN(10) + S(35.4), MIN(10) + S(77.2)};
    simtest_expect_starts(&r, -1, starts, 5);
    sim_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_docs_outage_v1),
        cmocka_unit_test(test_v2_irregular_outage),
        cmocka_unit_test(test_v2_irregular_forbid),
        cmocka_unit_test(test_v2_one_job_a_minute),
        cmocka_unit_test(test_forbid_long_job),
        cmocka_unit_test(test_replace_and_allow),
        cmocka_unit_test(test_dst_fall_back_twice),
        cmocka_unit_test(test_suspend_window),
        cmocka_unit_test(test_job_backoff),
        cmocka_unit_test(test_restart_on_failure),
        cmocka_unit_test(test_capacity),
        cmocka_unit_test(test_consumer),
        cmocka_unit_test(test_consumer_crash_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
