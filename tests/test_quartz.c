/* test_quartz.c: the quartz policy on timelines computed by hand from the
 * Quartz documentation (misfires, instructions, clustering) and the rules of
 * docs/policy-quartz.md.  The misfire handler runs every
 * misfire_threshold (60 s) from the scheduler's start. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/util.h"
#include "tests/simtest.h"

#define S(x) ((int64_t)((x) * 1e6 + 0.5))
#define MIN(x) ((int64_t)(x) * 60 * US_PER_S)

static void run(const char *text, const char *kv, struct sim_result *r)
{
    simtest_run(text, "quartz", kv, 1, 1, r);
}

/* A CronTrigger every minute; the scheduler is down from 10m to 12m30s
 * (dues 10m, 11m, 12m pass) and from 20m to 20m40s.  At 12m30s the trigger's
 * nextFireTime (10m) is more than misfireThreshold (60 s) late: a misfire,
 * handled at start-up.  smart (= fire_once_now for a cron trigger): one run
 * at 12m30s, serving 12m; 10m and 11m missed.  do_nothing: the next cron
 * time after now, 13m: 12m missed too.  ignore: every missed time fires
 * at once (three runs at 12m30s).  At 20m40s the 20m fire is 40 s late,
 * under the threshold: it simply fires late, under every instruction. */
static void test_misfire_instructions(void **state)
{
    (void)state;
    const char *text = "horizon 30m\n"
                       "workflow w\n"
                       "  producer p cron \"* * * * *\" runs 1s publish t\n"
                       "crash host at 10m for 2m30s\n"
                       "crash host at 20m for 40s\n";
    const char *sets[] = {"job_store=jdbc", "job_store=jdbc misfire_instruction=fire_once_now",
                          "job_store=jdbc misfire_instruction=fire_now"};
    for (int i = 0; i < 3; i++) {
        struct sim_result r;
        run(text, sets[i], &r);
        assert_int_equal(simtest_nth(&r, "start", "due=00:12:00", 0), S(750));
        assert_int_equal(simtest_count(&r, "start", "due=00:10:00"), 0);
        assert_int_equal(simtest_nth(&r, "start", "due=00:20:00", 0), S(1240));
        simtest_expect_metric(&r, "missed", 2);
        simtest_expect_metric(&r, "runs", 28);
        sim_result_free(&r);
    }
    struct sim_result r;
    run(text, "job_store=jdbc misfire_instruction=do_nothing", &r);
    assert_int_equal(simtest_count(&r, "start", "due=00:12:00"), 0);
    assert_int_equal(simtest_nth(&r, "start", NULL, 10), MIN(13));
    simtest_expect_metric(&r, "missed", 3);
    sim_result_free(&r);
    run(text, "job_store=jdbc misfire_instruction=ignore", &r);
    assert_int_equal(simtest_nth(&r, "start", "due=00:10:00", 0), S(750));
    assert_int_equal(simtest_nth(&r, "start", "due=00:11:00", 0), S(750));
    assert_int_equal(simtest_nth(&r, "start", "due=00:12:00", 0), S(750));
    simtest_expect_metric(&r, "runs", 30);
    sim_result_free(&r);
}

/* The tutorial's SimpleTrigger example: every 15 s, down for 5 minutes
 * (10m to 15m).  ignore: the 20 missed fires and the one due at 15m all
 * fire, ten at a time on the ten threads, as threads free (1 s runs):
 * 10 at 15m00s, 10 at 15m01s, 1 at 15m02s.  smart (repeat forever:
 * RESCHEDULE_NEXT_WITH_REMAINING_COUNT): the next time on the grid after
 * now, 15m15s.  fire_now (RESCHEDULE_NOW_WITH_REMAINING_REPEAT_COUNT): now,
 * and the series goes on from there. */
static void test_simple_trigger(void **state)
{
    (void)state;
    const char *text = "horizon 20m\n"
                       "workflow w\n"
                       "  producer p every 15s runs 1s publish t\n"
                       "crash host at 10m for 5m\n";
    struct sim_result r;
    run(text, "job_store=jdbc misfire_instruction=ignore", &r);
    assert_int_equal(simtest_count(&r, "start", NULL), 80);
    assert_int_equal(simtest_nth(&r, "start", "due=00:10:00", 0), MIN(15));
    assert_int_equal(simtest_nth(&r, "start", "due=00:12:30", 0), MIN(15) + S(1));
    assert_int_equal(simtest_nth(&r, "start", "due=00:15:00", 0), MIN(15) + S(2));
    sim_result_free(&r);
    run(text, "job_store=jdbc", &r);
    assert_int_equal(simtest_nth(&r, "start", NULL, 40), MIN(15) + S(15));
    simtest_expect_metric(&r, "runs", 59);
    sim_result_free(&r);
    run(text, "job_store=jdbc misfire_instruction=fire_now", &r);
    assert_int_equal(simtest_nth(&r, "start", NULL, 40), MIN(15));
    simtest_expect_metric(&r, "runs", 60);
    sim_result_free(&r);
}

/* @DisallowConcurrentExecution, every minute, 100 s runs: the trigger is
 * BLOCKED while the job runs.  0 -> ends 1m40s; the 1m fire is 40 s late,
 * under the threshold: fires at once.  It ends at 3m20s: the 2m fire is 80 s
 * late, a misfire, left to the handler, which at 4m (its pass every 60 s)
 * applies fire_once_now: a run at 4m, serving 4m.  And so on: 0, 1m40s, 4m,
 * 5m40s, 8m.  Without the annotation every minute starts a run. */
static void test_disallow_concurrent(void **state)
{
    (void)state;
    const char *text = "horizon 10m\n"
                       "workflow w\n"
                       "  producer p cron \"* * * * *\" runs 100s publish t\n";
    struct sim_result r;
    run(text, "job_store=jdbc disallow_concurrent=true", &r);
    const int64_t starts[] = {0, S(100), MIN(4), S(340), MIN(8), S(580)};
    simtest_expect_starts(&r, -1, starts, 6);
    assert_int_equal(simtest_nth(&r, "start", "due=00:01:00", 0), S(100));
    simtest_expect_metric(&r, "overlaps", 0);
    sim_result_free(&r);
    run(text, "", &r);
    simtest_expect_metric(&r, "runs", 10);
    sim_result_free(&r);
}

/* Twelve one-shot triggers due at 0 and ten threads; the jobs take 70 s.
 * Ten fire at 0.  When threads free (70 s) the other two are 70 s late: a
 * misfire.  smart (FIRE_NOW for a one-shot), JDBC store: the handler's pass
 * at 120 s fires them.  do_nothing (a SimpleTrigger has no DO_NOTHING:
 * RESCHEDULE_NEXT_WITH_*_COUNT, and a past one-shot has no next time): they
 * never run, in either store. */
static void test_thread_starvation(void **state)
{
    (void)state;
    const char *text = "horizon 10m\n"
                       "workflow w x 12\n"
                       "  producer p at 0 runs 70s publish t\n";
    struct sim_result r;
    run(text, "job_store=jdbc", &r);
    simtest_expect_metric(&r, "runs", 12);
    assert_int_equal(simtest_nth(&r, "start", NULL, 10), MIN(2));
    simtest_expect_metric(&r, "lateness.max", (double)MIN(2));
    sim_result_free(&r);
    run(text, "misfire_instruction=do_nothing", &r);
    simtest_expect_metric(&r, "runs", 10);
    simtest_expect_metric(&r, "missed", 2);
    sim_result_free(&r);
    run(text, "thread_count=12", &r);
    simtest_expect_metric(&r, "lateness.max", 0);
    sim_result_free(&r);
}

/* Cluster fail-over (two nodes, check-in every 7.5 s): node 0 runs the job
 * due at 0 and dies at 2m.  Its last check-in was at 120 s; it counts as
 * failed once a live node's check-in is later than 120 + 7.5 + 7.5 = 135 s:
 * node 1's at 142.5 s recovers its fired trigger.  With requestsRecovery the
 * job runs again at once (serving 0); without, it is dropped. */
static void test_cluster_failover(void **state)
{
    (void)state;
    const char *text = "horizon 30m\n"
                       "workflow w\n"
                       "  producer p every 10m runs 5m publish t\n"
                       "crash worker 0 at 2m for 1m\n";
    struct sim_result r;
    run(text, "clustered=true requests_recovery=true", &r);
    const int64_t starts[] = {0, S(142.5), MIN(10), MIN(20)};
    simtest_expect_starts(&r, -1, starts, 4);
    assert_int_equal(simtest_nth(&r, "start", "reason=recover", 0), S(142.5));
    simtest_expect_metric(&r, "duplicates", 0);
    sim_result_free(&r);
    run(text, "clustered=true", &r);
    simtest_expect_metric(&r, "runs", 3);
    simtest_expect_metric(&r, "runs_crashed", 1);
    sim_result_free(&r);
}

/* A consumer's job is scheduled by a one-shot trigger at each event. */
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
    sim_result_free(&r);
}

/* Every thread busy and the only other trigger BLOCKED: nothing can
 * misfire, so the handler has no pass to make (a BLOCKED trigger has no
 * fire time in the index; taking its place as a time once overflowed and
 * armed the handler for the past, a pass at the same instant forever: a
 * livelock at 1m).  One thread, every minute, 90 s runs, disallowed
 * concurrency: 0 ends at 90 s, the 1m fire is 30 s late: at once; it ends at
 * 180 s, the 2m fire exactly 60 s late, not over the threshold: at once; it
 * ends at 270 s, the 3m fire is misfired: the pass at 300 s reschedules it
 * to the grid's next time, 6m.  Three runs every 6 minutes: 30 in the hour. */
static void test_disallow_one_thread(void **state)
{
    (void)state;
    const char *text = "horizon 1h\n"
                       "workflow w\n"
                       "  producer p every 1m runs 90s publish t\n";
    struct sim_result r;
    run(text, "job_store=jdbc disallow_concurrent=true thread_count=1", &r);
    const int64_t starts[] = {0, S(90), S(180), MIN(6), S(450), S(540), MIN(12)};
    for (int i = 0; i < 7; i++)
        assert_int_equal(simtest_nth(&r, "start", NULL, i), starts[i]);
    simtest_expect_metric(&r, "runs", 30);
    simtest_expect_metric(&r, "overlaps", 0);
    sim_result_free(&r);
}

/* A fleet on a pool: 200 instances every 10 minutes, jobs of 20 to 40 s,
 * each with a consumer of its own feed (6 events an hour), the host down
 * at 3h00m10s for 5 minutes (the jobs then running die with it; their
 * fired-trigger rows outlive the crash).  On 50 threads the triggers fire
 * in waves and the fourth misfires; on 500 every trigger has a thread; a
 * cluster of three nodes loses node 1 at 2h00m10s.  Many runs end in any
 * order, rows are recovered from the middle of the fired-trigger table, and
 * many triggers are due at one instant: the figures (and the fingerprint,
 * which covers every run) are those of the implementation that scanned
 * every fired-trigger row at each run's end. */
static void test_fleet_pool(void **state)
{
    (void)state;
    const char *host = "horizon 6h\n"
                       "seed 1\n"
                       "workflow wf x 200\n"
                       "  producer fetch every 10m runs uniform(20s,40s) source feed\n"
                       "  consumer handle subscribe feed fifo runs exp(2s)\n"
                       "source feed poisson 6/h\n"
                       "crash host at 10810s for 5m\n";
    char cluster[512];
    snprintf(cluster, sizeof cluster, "%scrash worker 1 at 7210s for 2m\n", host);
    const struct {
        const char *text, *kv;
        uint64_t fp;
        double runs, missed, crashed, processed, lateness_max, latency_p99;
    } cases[] = {
        {host, "job_store=jdbc thread_count=50", 0x54aaa33b2ec25483u, 7463, 2770, 50, 4531, INFINITY, 3565158399.0},
        {host, "job_store=jdbc thread_count=500", 0xef403cf8ddfbc513u, 13426, 0, 200, 7019, 0, 954204159},
        {host, "job_store=jdbc thread_count=50 disallow_concurrent=true misfire_instruction=ignore", 0xf7c4ce3d9caefa26u, 11880,
         0, 50, 7031, 383363325, 757071871},
        {cluster, "clustered=true nodes=3 thread_count=50 requests_recovery=true", 0x4cfda72089fe2847u, 12946, 50,
         200, 7024, 626489112, 757071871},
        {cluster, "clustered=true nodes=3 thread_count=500", 0x704203f09434c61cu, 13409, 0, 267, 7019, 0,
         1038090239},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sim_result r;
        run(cases[i].text, cases[i].kv, &r);
        if (r.fingerprint != cases[i].fp)
            fail_msg("%s: fingerprint %016" PRIx64 ", want %016" PRIx64, cases[i].kv, r.fingerprint, cases[i].fp);
        simtest_expect_metric(&r, "runs", cases[i].runs);
        simtest_expect_metric(&r, "missed", cases[i].missed);
        simtest_expect_metric(&r, "runs_crashed", cases[i].crashed);
        simtest_expect_metric(&r, "processed", cases[i].processed);
        simtest_expect_metric(&r, "lateness.max", cases[i].lateness_max);
        simtest_expect_metric(&r, "latency.p99", cases[i].latency_p99);
        simtest_expect_metric(&r, "duplicates", 0);
        sim_result_free(&r);
    }
}

/* thread_count goes up to a million (a thread costs nothing until it runs
 * a job): a pool of a million serves twelve one-shot triggers on time. */
static void test_thread_count_range(void **state)
{
    (void)state;
    const char *text = "horizon 10m\n"
                       "workflow w x 12\n"
                       "  producer p at 0 runs 70s publish t\n";
    struct sim_result r;
    run(text, "thread_count=1000000", &r);
    simtest_expect_metric(&r, "runs", 12);
    simtest_expect_metric(&r, "lateness.max", 0);
    sim_result_free(&r);
    const struct policy_ops *ops = policy_find("quartz");
    assert_non_null(ops);
    struct params ps;
    char msg[256];
    params_init(&ps, ops);
    assert_int_equal(params_set(&ps, "thread_count", "1000000", msg, sizeof msg), 0);
    assert_int_not_equal(params_set(&ps, "thread_count", "1000001", msg, sizeof msg), 0);
}

/* pauseTrigger and resumeTrigger (disable, enable): the trigger keeps its
 * nextFireTime while paused.  Every 10 minutes, paused at 5m: its next fire
 * stays 10m.  Resumed at 14m30s, 4m30s past it, over the threshold: the
 * misfire instruction applies at once (smart = FIRE_ONCE_NOW for a cron
 * trigger): a run at 14m30s.  Resumed at 10m30s, within the threshold: it
 * simply fires late, at 10m30s.  Neither serves a due (10m was no due of the
 * disabled schedule).  do_nothing: the next cron time, 20m.  Resumed at 8m,
 * before 10m: on time. */
static void test_pause_resume(void **state)
{
    (void)state;
    const char *head = "horizon 30m\n"
                       "workflow w\n"
                       "  producer p cron \"*/10 * * * *\" runs 1s publish t\n"
                       "disable w.p at 5m\n";
    char text[256];
    struct sim_result r;
    snprintf(text, sizeof text, "%senable w.p at 14m30s\n", head);
    run(text, "", &r);
    const int64_t late[] = {0, S(870), MIN(20)};
    simtest_expect_starts(&r, -1, late, 3);
    simtest_expect_metric(&r, "duplicates", 0);
    sim_result_free(&r);
    run(text, "misfire_instruction=do_nothing", &r);
    const int64_t skip[] = {0, MIN(20)};
    simtest_expect_starts(&r, -1, skip, 2);
    sim_result_free(&r);
    snprintf(text, sizeof text, "%senable w.p at 10m30s\n", head);
    run(text, "", &r);
    const int64_t within[] = {0, S(630), MIN(20)};
    simtest_expect_starts(&r, -1, within, 3);
    assert_int_equal(simtest_count(&r, "start", "due=-"), 1);
    sim_result_free(&r);
    snprintf(text, sizeof text, "%senable w.p at 8m\n", head);
    run(text, "", &r);
    const int64_t ontime[] = {0, MIN(10), MIN(20)};
    simtest_expect_starts(&r, -1, ontime, 3);
    assert_int_equal(simtest_nth(&r, "start", "due=00:10:00", 0), MIN(10));
    sim_result_free(&r);
}

/* RAMJobStore (job_store=ram, the default): no misfire handler; a misfired
 * trigger gets its instruction when a free thread acquires it
 * (acquireNextTriggers: applyMisfire).  25 cron triggers every 5 minutes,
 * 90 s jobs, ten threads: 10 at 0; at 90 s the 15 left are misfired, moved
 * to now (FIRE_ONCE_NOW) and 10 fire; the 5 left are misfired again at
 * 180 s and fire then (the JDBC store: 10 at 0, 10 and 5 at the handler's
 * passes, 120 s and 240 s).  Twelve one-shots on ten threads: the two left
 * fire at 70 s.  One thread, every minute, 90 s jobs, disallowed
 * concurrency: the 3m fire is misfired at 270 s and rescheduled to the
 * grid's next time, 5m (the JDBC store's pass at 300 s: 6m). */
static void test_ram_store(void **state)
{
    (void)state;
    struct sim_result r;
    run("horizon 5m\nworkflow flow x 25\n  producer run cron \"*/5 * * * *\" runs 90s publish t\n", "", &r);
    assert_int_equal(simtest_count(&r, "start", NULL), 25);
    assert_int_equal(simtest_nth(&r, "start", NULL, 10), S(90));
    assert_int_equal(simtest_nth(&r, "start", NULL, 19), S(90));
    assert_int_equal(simtest_nth(&r, "start", NULL, 20), S(180));
    simtest_expect_metric(&r, "lateness.max", (double)S(180));
    sim_result_free(&r);
    run("horizon 5m\nworkflow flow x 25\n  producer run cron \"*/5 * * * *\" runs 90s publish t\n", "job_store=jdbc",
        &r);
    assert_int_equal(simtest_nth(&r, "start", NULL, 10), MIN(2));
    assert_int_equal(simtest_nth(&r, "start", NULL, 20), MIN(4));
    sim_result_free(&r);
    run("horizon 10m\nworkflow w x 12\n  producer p at 0 runs 70s publish t\n", "", &r);
    assert_int_equal(simtest_nth(&r, "start", NULL, 10), S(70));
    simtest_expect_metric(&r, "lateness.max", (double)S(70));
    sim_result_free(&r);
    run("horizon 1h\nworkflow w\n  producer p every 1m runs 90s publish t\n", "disallow_concurrent=true thread_count=1",
        &r);
    const int64_t starts[] = {0, S(90), S(180), MIN(5), S(390), S(480), MIN(10)};
    for (int i = 0; i < 7; i++)
        assert_int_equal(simtest_nth(&r, "start", NULL, i), starts[i]);
    sim_result_free(&r);
}

/* RAMJobStore across a host restart: the triggers were in memory; the
 * application registers them again at the start, each from its schedule's
 * first time from then: no misfire, no catch-up.  Every minute, down from
 * 10m to 12m30s: the next run at 13m (the JDBC store: at 12m30s).  A job
 * running at the crash is not recovered, requests_recovery or not. */
static void test_ram_restart(void **state)
{
    (void)state;
    const char *text = "horizon 30m\n"
                       "workflow w\n"
                       "  producer p cron \"* * * * *\" runs 1s publish t\n"
                       "crash host at 10m for 2m30s\n";
    struct sim_result r;
    run(text, "", &r);
    assert_int_equal(simtest_nth(&r, "start", NULL, 10), MIN(13));
    simtest_expect_metric(&r, "missed", 3);
    sim_result_free(&r);
    run(text, "misfire_instruction=ignore", &r);
    assert_int_equal(simtest_nth(&r, "start", NULL, 10), MIN(13));
    sim_result_free(&r);
    run("horizon 30m\nworkflow w\n  producer p every 10m runs 5m publish t\ncrash host at 2m for 1m\n",
        "requests_recovery=true", &r);
    simtest_expect_metric(&r, "runs", 3);
    assert_int_equal(simtest_count(&r, "start", "reason=recover"), 0);
    sim_result_free(&r);
}

/* Cron fires at DST changes follow Quartz's CronExpression (CAL_DST_QUARTZ),
 * America/New_York.  Fall back, 2025-11-02 04:00Z-08:00Z: every 15 minutes
 * fires 12 times, silent for the first pass of 01:xx (05:00Z-05:45Z), and
 * a daily 01:30 fires at its second occurrence, 06:30Z (2h30m in).  Spring
 * forward, 2025-03-09: a daily 02:30 is skipped that day. */
static void test_cron_dst(void **state)
{
    (void)state;
    struct sim_result r;
    run("start 2025-11-02T04:00:00Z\ntimezone America/New_York\nhorizon 4h\nworkflow w\n"
        "  producer every15 cron \"*/15 * * * *\" runs 1s publish t\n"
        "  producer at130 cron \"30 1 * * *\" runs 1s publish t2\n",
        "", &r);
    const int64_t q15[] = {0, MIN(15), MIN(30), MIN(45), MIN(120), MIN(135), MIN(150), MIN(165),
                           MIN(180), MIN(195), MIN(210), MIN(225)};
    simtest_expect_starts(&r, 0, q15, 12);
    const int64_t at130[] = {MIN(150)};
    simtest_expect_starts(&r, 1, at130, 1);
    sim_result_free(&r);
    run("start 2025-03-09T05:00:00Z\ntimezone America/New_York\nhorizon 3h\nworkflow w\n"
        "  producer at230 cron \"30 2 * * *\" runs 1s publish t\n",
        "", &r);
    assert_int_equal(simtest_count(&r, "start", NULL), 0);
    sim_result_free(&r);
}

/* A database outage (JDBC store, crash server): the scheduler thread's
 * acquisitions fail and are retried every dbRetryInterval (15 s) from the
 * outage's start; the misfire handler keeps its 60 s rhythm.  Every minute,
 * down from 10m for 2m30s: at 12m30s the 10m fire is misfired, left to the
 * handler, whose pass at 13m fires once now (serving 13m): 10m, 11m, 12m
 * missed (a pass the moment the database came back ran at 12m30s).  Down
 * for 20 s: the thread's retry at 10m30s fires the 10m trigger late. */
static void test_db_outage(void **state)
{
    (void)state;
    const char *head = "horizon 20m\nworkflow w\n  producer p cron \"* * * * *\" runs 1s publish t\n";
    char text[256];
    struct sim_result r;
    snprintf(text, sizeof text, "%scrash server at 10m for 2m30s\n", head);
    run(text, "job_store=jdbc", &r);
    assert_int_equal(simtest_nth(&r, "start", NULL, 10), MIN(13));
    simtest_expect_metric(&r, "missed", 3);
    sim_result_free(&r);
    snprintf(text, sizeof text, "%scrash server at 10m for 20s\n", head);
    run(text, "job_store=jdbc", &r);
    assert_int_equal(simtest_nth(&r, "start", "due=00:10:00", 0), S(630));
    sim_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_misfire_instructions),
        cmocka_unit_test(test_simple_trigger),
        cmocka_unit_test(test_disallow_concurrent),
        cmocka_unit_test(test_thread_starvation),
        cmocka_unit_test(test_cluster_failover),
        cmocka_unit_test(test_consumer),
        cmocka_unit_test(test_disallow_one_thread),
        cmocka_unit_test(test_fleet_pool),
        cmocka_unit_test(test_thread_count_range),
        cmocka_unit_test(test_pause_resume),
        cmocka_unit_test(test_ram_store),
        cmocka_unit_test(test_ram_restart),
        cmocka_unit_test(test_cron_dst),
        cmocka_unit_test(test_db_outage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
