/* test_heartbeat.c: the heartbeat policy (seed 004) against timelines
 * computed by hand, to the microsecond: the seed's coalescing example, wakes
 * held during a run, the system-event queue (eviction, context keys, crash
 * loss), the retry after a failed run, the cron engine (error backoff, timer
 * re-arming, missed fires, AND of the day fields), active hours, and the
 * delivery queue (backoff offsets, start-up retries, the recovery budget, a
 * crash between deliver and ack).  Each test states the timeline it expects
 * and why. */
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

#define MS(x) ((int64_t)(x) * US_PER_MS)
#define SEC(x) ((int64_t)(x) * US_PER_S)
#define MIN(x) ((int64_t)(x) * US_PER_MIN)
#define HR(x) ((int64_t)(x) * US_PER_H)

/* Runs text under heartbeat with up to four "key=value" settings (NULL
 * ends the list), keeping the trace. */
static void run_hb(const char *text, const char *const *kv, struct sim_result *res)
{
    simtest_run_kv(text, "heartbeat", kv, 1, 1, res);
}

static double m(const struct sim_result *r, const char *name) { return simtest_metric(r, -1, name); }

/* The trace records of one kind (and handler, -1 any) whose --trace
 * detail contains `has` (NULL: any), in order; returns how many, the first
 * max in out. */
static int records(const struct sim_result *r, const char *kind, int64_t h, const char *has,
                   const struct trace_rec **out, int max)
{
    int n = 0;
    for (size_t i = 0; i < r->ntrace; i++) {
        const struct trace_rec *t = &r->trace[i];
        char detail[160];
        if (!simtest_is(t, kind) || (h >= 0 && t->handler != h) ||
            (has && !strstr(simtest_detail(t, detail, sizeof detail), has)))
            continue;
        if (n < max)
            out[n] = t;
        n++;
    }
    return n;
}

/* Asserts that the records of a kind happen exactly at want[0..n). */
static void expect_times(const struct sim_result *r, const char *kind, int64_t h, const char *has,
                         const int64_t *want, int n)
{
    const struct trace_rec *got[64];
    int k = records(r, kind, h, has, got, 64);
    for (int i = 0; i < k && i < n; i++) {
        char detail[160];
        if (got[i]->t_us != want[i])
            print_error("%s #%d (%s): at %lld, want %lld\n", kind, i, simtest_detail(got[i], detail, sizeof detail),
                        (long long)got[i]->t_us, (long long)want[i]);
        assert_int_equal(got[i]->t_us, want[i]);
    }
    assert_int_equal(k, n);
}

/* The seed's example (seed 004 "Wake Coalescing"): "t=0ms requestWake
 * ('interval') → pending = interval; t=50ms requestWake('cron') → pending =
 * cron (upgraded); t=250ms flush() → executes once, reason='cron'".  Here
 * t=0 is the first heartbeat (at 30m: every = 30m, the first one interval
 * after start-up) and the cron job fires at 30m00.050.  One flush at
 * 30m00.250: the job's run (reason cron, serving its fire at 30m00.050),
 * then the agent's check with reason cron.  A third request, a publish at
 * 30m00.200 (`hook`, priority 3), falls in the same window, which is not
 * extended: the flush is still at 30m00.250 and the check's reason is now
 * the hook's (event); the job's run comes first (100 ms) and the check takes
 * the event at 30m00.350. */
static void test_seed_coalescing_example(void **state)
{
    (void)state;
    const char *base = "horizon 1h\n"
                       "drain 0\n"
                       "workflow agent\n"
                       "  producer job at 30m50ms runs 100ms publish log\n"
                       "  consumer check subscribe inbox fifo runs 500ms\n";
    struct sim_result r;
    run_hb(base, NULL, &r);
    const int64_t job = 0, check = 1;
    const struct trace_rec *s[4];
    assert_int_equal(records(&r, "start", -1, NULL, s, 4), 2);
    assert_int_equal(s[0]->handler, job);
    assert_int_equal(s[0]->t_us, MIN(30) + MS(250));
    assert_int_equal(s[0]->reason, REASON_CRON);
    assert_int_equal(s[0]->due_us, MIN(30) + MS(50));
    assert_int_equal(s[1]->handler, check);
    assert_int_equal(s[1]->t_us, MIN(30) + MS(350));
    assert_int_equal(s[1]->reason, REASON_CRON);
    /* Wake-ups: the cron timer re-armed every minute up to 30m (30), its
     * fire at 30m00.050, the heartbeat at 30m, the flush at 30m00.250. */
    assert_true(m(&r, "wakeups") == 33);
    sim_result_free(&r);

    char text[512];
    snprintf(text, sizeof text, "%spublish inbox at 30m200ms\n", base);
    run_hb(text, NULL, &r);
    assert_int_equal(records(&r, "start", -1, NULL, s, 4), 2);
    assert_int_equal(s[0]->t_us, MIN(30) + MS(250));
    assert_int_equal(s[1]->t_us, MIN(30) + MS(350));
    assert_int_equal(s[1]->reason, REASON_EVENT);
    assert_int_equal(s[1]->taken, 1);
    assert_true(m(&r, "latency.max") == MS(650)); /* 30m00.200 -> 30m00.850 */
    sim_result_free(&r);
}

/* Without the window (coalesce=0) the two requests flush apart: the check
 * at 30m (interval, an empty run), the job at its fire 30m00.050. */
static void test_no_window(void **state)
{
    (void)state;
    static const char *const kv[] = {"coalesce=0", NULL};
    struct sim_result r;
    run_hb("horizon 1h\n"
           "drain 0\n"
           "workflow agent\n"
           "  producer job at 30m50ms runs 100ms publish log\n"
           "  consumer check subscribe inbox fifo runs 500ms\n",
           kv, &r);
    const int64_t want_check[] = {MIN(30), MIN(30) + MS(150)};
    expect_times(&r, "start", 1, NULL, want_check, 2);
    const int64_t want_job[] = {MIN(30) + MS(50)};
    expect_times(&r, "start", 0, NULL, want_job, 1);
    sim_result_free(&r);
}

/* A wake during a run is held, not lost ("Execution Mutex"): events at 45m
 * and 45m00.400; the first flush is at 45m00.250 and its run lasts 500 ms,
 * to 45m00.750; the second event's window would end at 45m00.650, already
 * past, so it flushes as the run ends.  Latencies 750 ms and 850 ms.  A wake
 * whose window is still open when the run ends waits for the window's end
 * (the second part). */
static void test_wake_during_run(void **state)
{
    (void)state;
    struct sim_result r;
    run_hb("horizon 1h\n"
           "drain 0\n"
           "workflow agent\n"
           "  consumer check subscribe inbox fifo runs 500ms\n"
           "publish inbox at 45m\n"
           "publish inbox at 45m400ms\n",
           NULL, &r);
    /* Heartbeat at 30m (empty run), the two events. */
    const int64_t want[] = {MIN(30) + MS(250), MIN(45) + MS(250), MIN(45) + MS(750)};
    expect_times(&r, "start", 0, NULL, want, 3);
    assert_true(m(&r, "processed") == 2);
    assert_true(m(&r, "latency.max") == MS(850));
    assert_true(m(&r, "latency.mean") == MS(800));
    assert_true(m(&r, "overlaps") == 0);
    sim_result_free(&r);

    /* A 1 s run from 45m00.250 to 45m01.250 and an event at 45m01.100: its
     * window ends at 45m01.350, after the run: the flush waits for it. */
    run_hb("horizon 1h\n"
           "drain 0\n"
           "workflow agent\n"
           "  consumer check subscribe inbox fifo runs 1s\n"
           "publish inbox at 45m\n"
           "publish inbox at 45m1s100ms\n",
           NULL, &r);
    const int64_t want2[] = {MIN(30) + MS(250), MIN(45) + MS(250), MIN(45) + MS(1350)};
    expect_times(&r, "start", 0, NULL, want2, 3);
    sim_result_free(&r);
}

/* A burst of 60 events while the agent is busy: the queue keeps 50 and
 * evicts the oldest 10 (items 1..10; item 0 is being processed).  The run
 * from 1h00m00.250 ends at 1h10m00.250 and the held wake flushes at once:
 * the next run takes the 50 survivors. */
static void test_queue_eviction(void **state)
{
    (void)state;
    struct sim_result r;
    run_hb("horizon 3h\n"
           "drain 0\n"
           "workflow agent\n"
           "  consumer check subscribe inbox fifo runs 10m\n"
           "publish inbox at 1h\n"
           "publish inbox burst 60 at 1h01m\n",
           NULL, &r);
    const struct trace_rec *d[16];
    assert_int_equal(records(&r, "drop", 0, NULL, d, 16), 10);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(d[i]->item, i + 1);
        assert_int_equal(d[i]->cause, DROP_EVICTED);
        assert_int_equal(d[i]->t_us, HR(1) + MIN(1));
    }
    const struct trace_rec *s[8];
    assert_int_equal(records(&r, "start", 0, "taken=50", s, 8), 1);
    assert_int_equal(s[0]->t_us, HR(1) + MIN(10) + MS(250));
    assert_true(m(&r, "dropped") == 10);
    assert_true(m(&r, "processed") == 51);
    sim_result_free(&r);

    static const char *const cap[] = {"queue_cap=5", NULL};
    run_hb("horizon 3h\n"
           "drain 0\n"
           "workflow agent\n"
           "  consumer check subscribe inbox fifo runs 10m\n"
           "publish inbox at 1h\n"
           "publish inbox burst 60 at 1h01m\n",
           cap, &r);
    assert_true(m(&r, "dropped") == 55);
    sim_result_free(&r);
}

/* Context keys: a burst whose events all carry key 1 (`keys 1`) leaves only
 * the newest in the queue; unkeyed streams (their events numbered from 0
 * each) never replace one another. */
static void test_context_key(void **state)
{
    (void)state;
    struct sim_result r;
    run_hb("horizon 3h\n"
           "drain 0\n"
           "workflow agent\n"
           "  consumer check subscribe inbox fifo runs 10m\n"
           "publish inbox at 1h keys 1\n"
           "publish inbox burst 30 at 1h01m keys 1\n",
           NULL, &r);
    assert_true(m(&r, "dropped") == 29);
    assert_true(m(&r, "processed") == 2);
    const struct trace_rec *d[32];
    assert_int_equal(records(&r, "drop", 0, NULL, d, 32), 29);
    assert_int_equal(d[28]->item, 29); /* item 30, the newest, survives */
    sim_result_free(&r);

    static const char *const off[] = {"context_key=false", NULL};
    run_hb("horizon 3h\n"
           "drain 0\n"
           "workflow agent\n"
           "  consumer check subscribe inbox fifo runs 10m\n"
           "publish inbox at 1h keys 1\n"
           "publish inbox burst 30 at 1h01m keys 1\n",
           off, &r);
    assert_true(m(&r, "dropped") == 0);
    sim_result_free(&r);

    run_hb("horizon 3h\n"
           "drain 0\n"
           "workflow agent\n"
           "  consumer check subscribe inbox fifo runs 10m\n"
           "publish inbox at 1h\n"
           "publish inbox at 1h01m\n"
           "publish inbox at 1h02m\n",
           NULL, &r);
    assert_true(m(&r, "dropped") == 0);
    assert_true(m(&r, "processed") == 3);
    sim_result_free(&r);
}

/* A crash with events queued (seed "No persistence"): at 2h an event and a
 * one-shot job's fire wait for the flush at 2h00m00.250; the host crashes at
 * 2h00m00.100.  The event is lost, and the job (disabled in jobs.json when it
 * fired) never runs.  Recovery is not ok. */
static void test_crash_loses_queue(void **state)
{
    (void)state;
    struct sim_result r;
    run_hb("horizon 1d\n"
           "workflow agent\n"
           "  producer once at 2h runs 1m publish log\n"
           "  consumer check subscribe inbox fifo runs 10s\n"
           "publish inbox at 2h\n"
           "crash host at 2h100ms for 5m\n",
           NULL, &r);
    const struct trace_rec *s[64];
    assert_int_equal(records(&r, "start", 0, NULL, s, 64), 0);
    assert_true(m(&r, "lost") == 1);
    assert_true(m(&r, "missed") == 1);
    assert_int_equal(r.ck.ncrashes, 1);
    assert_int_equal(r.ck.crashes[0].lost, 1);
    assert_int_equal(r.ck.crashes[0].ok, 0);
    /* Heartbeats at 30m, 1h, 1h30m; after the restart (2h05m00.100) the
     * first heartbeat is one interval later, flushed at 2h35m00.350. */
    int n = records(&r, "start", 1, NULL, s, 64);
    assert_true(n > 4);
    assert_int_equal(s[2]->t_us, HR(1) + MIN(30) + MS(250));
    assert_int_equal(s[3]->t_us, HR(2) + MIN(35) + MS(350));
    sim_result_free(&r);
}

/* A failed run (seed "Auto-Retry on Failure"): the event at 1h is drained at
 * 1h00m00.250 into a 1 s run that fails at 900 ms (end of mutating); the
 * event went with the failed call and is dropped; one second after the
 * session ends (1h00m02.150) the agent asks for a `retry` wake, which
 * flushes at 1h00m02.400 and runs the check again, with nothing to take. */
static void test_retry_after_failure(void **state)
{
    (void)state;
    struct sim_result r;
    run_hb("horizon 2h\n"
           "drain 0\n"
           "workflow agent\n"
           "  consumer check subscribe inbox fifo runs 1s\n"
           "publish inbox at 1h\n"
           "fail agent.check transient 100%\n",
           NULL, &r);
    const int64_t want[] = {MIN(30) + MS(250), HR(1) + MS(250), HR(1) + MS(2400), HR(1) + MIN(30) + MS(250)};
    expect_times(&r, "start", 0, NULL, want, 4);
    const struct trace_rec *s[4];
    assert_int_equal(records(&r, "start", 0, "reason=retry", s, 4), 1);
    assert_int_equal(s[0]->taken, 0);
    assert_true(m(&r, "dropped") == 1);
    assert_true(m(&r, "runs_failed") == 1);
    assert_true(m(&r, "deliveries") == 0);
    sim_result_free(&r);
}

/* The agent holds what it drained until a run takes it, and offers a
 * consumer all it holds at every session.  A window consumer of an hour fed
 * an event a minute holds about 60 items (more than the agent keeps before
 * it forgets taken ones in a pass of its own): each is taken once, at the
 * first session after its hour (sessions come at every event, and every
 * 30 minutes after the horizon), none twice.
 * With failures, on_failure=requeue loses nothing, as it puts back the
 * flush's items, and drop loses the items of each failed call. */
static void test_held_items(void **state)
{
    (void)state;
    const char *text = "horizon 3h\n"
                       "drain 2h\n"
                       "workflow agent\n"
                       "  consumer w subscribe inbox window 1h runs 2s\n"
                       "  consumer f subscribe other fifo runs 1s\n"
                       "publish inbox rate 60/h\n"
                       "publish other rate 30/h\n";
    struct sim_result r;
    run_hb(text, NULL, &r);
    assert_true(m(&r, "published") == 270 && m(&r, "processed") == 270);
    assert_true(m(&r, "duplicates") == 0 && m(&r, "lost") == 0);
    const struct metrics *w = &r.ck.per_tmpl[0];
    assert_true(w->processed == 180);
    /* after the horizon no event wakes it: the last hour's items wait for
     * the 30-minute heartbeat */
    assert_true(w->latency.max_us >= HR(1) && w->latency.max_us <= HR(1) + MIN(30) + SEC(3));
    sim_result_free(&r);

    char failing[512];
    snprintf(failing, sizeof failing, "%sfail agent.w transient 30%%\n", text);
    const char *requeue[] = {"on_failure=requeue", NULL};
    run_hb(failing, requeue, &r);
    assert_true(m(&r, "runs_failed") > 10);
    assert_true(m(&r, "processed") == 270 && m(&r, "lost") == 0 && m(&r, "duplicates") == 0);
    sim_result_free(&r);
    run_hb(failing, NULL, &r);
    assert_true(m(&r, "runs_failed") > 10 && m(&r, "dropped") > 10);
    assert_true(m(&r, "processed") + m(&r, "dropped") == 270 && m(&r, "duplicates") == 0);
    sim_result_free(&r);
}

/* The cron error backoff sequence (seed "Error Backoff": 30 s, 1 m, 5 m,
 * 15 m, 60 m, then 60 m again).  A job due every 20 s fails every run, 900 ms
 * after it starts; each fire is served 250 ms later (the coalescing window).
 *   fire 0            run 0.250     fails 1.150     next max(20, 1.150+30)      = 31.150
 *   fire 31.150       run 31.400    fails 32.300    next max(40, 32.300+60)     = 92.300
 *   fire 92.300       run 92.550    fails 93.450    next 93.450+300             = 393.450
 *   fire 393.450      run 393.700   fails 394.600   next 394.600+900            = 1294.600
 *   fire 1294.600     run 1294.850  fails 1295.750  next 1295.750+3600          = 4895.750
 *   fire 4895.750     run 4896.000  fails 4896.900  next 4896.900+3600          = 8496.900
 *   fire 8496.900     run 8497.150  (horizon 3h = 10800 s: the last)
 * As built (cron_backoff=none) it runs at every fire: 0.250, 20.250, ... */
static void test_cron_backoff_sequence(void **state)
{
    (void)state;
    const char *text = "horizon 3h\n"
                       "drain 0\n"
                       "workflow agent\n"
                       "  producer flaky every 20s runs 1s publish log\n"
                       "fail agent.flaky transient 100%\n";
    struct sim_result r;
    run_hb(text, NULL, &r);
    const int64_t want[] = {MS(250), MS(31400), MS(92550), MS(393700), MS(1294850), MS(4896000), MS(8497150)};
    expect_times(&r, "start", 0, NULL, want, 7);
    const struct trace_rec *s[8];
    records(&r, "start", 0, NULL, s, 8);
    assert_int_equal(s[1]->due_us, MS(31150));
    sim_result_free(&r);

    static const char *const none[] = {"cron_backoff=none", NULL};
    run_hb(text, none, &r);
    const int64_t want2[] = {MS(250), MS(20250), MS(40250)};
    const struct trace_rec *s2[600];
    assert_int_equal(records(&r, "start", 0, NULL, s2, 600), 540);
    for (int i = 0; i < 3; i++)
        assert_int_equal(s2[i]->t_us, want2[i]);
    sim_result_free(&r);
}

/* The cron timer is set at most 60 s ahead ("Timer Drift Protection"): a
 * one-shot at 10m with nothing else wakes the host at 1m, 2m, ... 10m (ten
 * cron timers, the last its fire) and at the flush 10m00.250: 11 wake-ups;
 * with cron_rearm=1h, two.  Heartbeats off. */
static void test_cron_rearm_wakeups(void **state)
{
    (void)state;
    const char *text = "horizon 1h\n"
                       "drain 0\n"
                       "workflow agent\n"
                       "  producer once at 10m runs 1s publish log\n";
    static const char *const kv1[] = {"heartbeat_on=false", NULL};
    static const char *const kv2[] = {"heartbeat_on=false", "cron_rearm=1h", NULL};
    struct sim_result r;
    run_hb(text, kv1, &r);
    assert_true(m(&r, "wakeups") == 11);
    const int64_t want[] = {MIN(10) + MS(250)};
    expect_times(&r, "start", 0, NULL, want, 1);
    sim_result_free(&r);
    run_hb(text, kv2, &r);
    assert_true(m(&r, "wakeups") == 2);
    expect_times(&r, "start", 0, NULL, want, 1);
    sim_result_free(&r);
    /* With the heartbeat (every 30m; 1h is the end): its tick at 30m and
     * the flush timer at 30m00.250 (which finds nothing to run). */
    run_hb(text, NULL, &r);
    assert_true(m(&r, "wakeups") == 13);
    sim_result_free(&r);
}

/* Fires missed while down are skipped at start-up: a daily 06:00 job, the
 * host down 05:59 to 06:09 on day 2 (1d05:59): runs at 06:00:00.250 on days
 * 1 and 3 only. */
static void test_missed_fire_skipped(void **state)
{
    (void)state;
    static const char *const kv[] = {"heartbeat_on=false", NULL};
    struct sim_result r;
    run_hb("horizon 3d\n"
           "drain 0\n"
           "workflow agent\n"
           "  producer daily cron \"0 6 * * *\" runs 1m publish log\n"
           "crash host at 1d05:59 for 10m\n",
           kv, &r);
    const int64_t want[] = {HR(6) + MS(250), 2 * US_PER_DAY + HR(6) + MS(250)};
    expect_times(&r, "start", 0, NULL, want, 2);
    assert_true(m(&r, "missed") == 1);
    sim_result_free(&r);
}

/* dom_dow=and (as built): "0 9 13 * 5" fires only on Friday the 13th; from
 * 2025-01-01 the first is 13 June, day 163 (31+28+31+30+31+12), at
 * 163d09:00:00, run 250 ms later.  Under cron's OR it first fires on Friday
 * 3 January (2d09:00). */
static void test_dom_dow_and(void **state)
{
    (void)state;
    const char *text = "start 2025-01-01T00:00:00Z\n"
                       "horizon 200d\n"
                       "drain 0\n"
                       "workflow agent\n"
                       "  producer fri13 cron \"0 9 13 * 5\" runs 1m publish log\n";
    static const char *const and_kv[] = {"dom_dow=and", "heartbeat_on=false", NULL};
    static const char *const or_kv[] = {"heartbeat_on=false", NULL};
    struct sim_result r;
    run_hb(text, and_kv, &r);
    const int64_t want[] = {163 * US_PER_DAY + HR(9) + MS(250)};
    expect_times(&r, "start", 0, NULL, want, 1);
    sim_result_free(&r);
    run_hb(text, or_kv, &r);
    const struct trace_rec *s[64];
    assert_true(records(&r, "start", 0, NULL, s, 64) > 30);
    assert_int_equal(s[0]->t_us, 2 * US_PER_DAY + HR(9) + MS(250));
    sim_result_free(&r);

    /* A day-of-month that never meets the month under AND never fires. */
    run_hb("horizon 30d\n"
           "workflow agent\n"
           "  producer never cron \"0 9 31 4 1\" runs 1m publish log\n",
           and_kv, &r);
    assert_true(m(&r, "runs") == 0);
    sim_result_free(&r);
}

/* Active hours crossing midnight (22:00-06:00, UTC): heartbeats every hour
 * from 01:00 to 23:00; inside the window: 01:00-05:00 and 22:00, 23:00. */
static void test_active_hours_overnight(void **state)
{
    (void)state;
    static const char *const kv[] = {"every=1h", "active_start=22:00", "active_end=06:00", NULL};
    struct sim_result r;
    run_hb("horizon 1d\n"
           "drain 0\n"
           "workflow agent\n"
           "  consumer check subscribe inbox fifo runs 1s\n",
           kv, &r);
    const int64_t want[] = {HR(1) + MS(250), HR(2) + MS(250), HR(3) + MS(250), HR(4) + MS(250),
                            HR(5) + MS(250), HR(22) + MS(250), HR(23) + MS(250)};
    expect_times(&r, "start", 0, NULL, want, 7);
    sim_result_free(&r);
}

/* A manual trigger is a `manual` wake: flush 250 ms later. */
static void test_manual_trigger(void **state)
{
    (void)state;
    struct sim_result r;
    run_hb("horizon 1h\n"
           "drain 0\n"
           "workflow agent\n"
           "  consumer check subscribe inbox fifo runs 1s\n"
           "trigger agent at 10m\n",
           NULL, &r);
    const struct trace_rec *s[4];
    assert_int_equal(records(&r, "start", 0, "reason=manual", s, 4), 1);
    assert_int_equal(s[0]->t_us, MIN(10) + MS(250));
    sim_result_free(&r);
}

/* Delivery retries at the backoff offsets (seed "Retry Backoff": 5 s, 25 s,
 * 2 m, 10 m).  Seed 38 makes the report's first three attempts fail and the
 * fourth succeed; the report commits at 11m00.250.  As designed: attempts at
 * 11m00.250, +5 s, +25 s, +2 m.  As built (startup): one attempt, then one
 * per start-up after the entry's backoff: restarts at 1h01m, 2h01m, 3h01m ->
 * 1h01m05s, 2h01m25s, 3h03m (delivered). */
static void test_delivery_offsets(void **state)
{
    (void)state;
    const char *text = "horizon 4h\n"
                       "seed 38\n"
                       "workflow agent\n"
                       "  producer report at 10m runs 1m publish log\n"
                       "fail agent.report delivery 50%\n"
                       "crash host at 1h for 1m\n"
                       "crash host at 2h for 1m\n"
                       "crash host at 3h for 1m\n";
    const int64_t t0 = MIN(11) + MS(250);
    struct sim_result r;
    run_hb(text, NULL, &r);
    const int64_t want_f[] = {t0, t0 + SEC(5), t0 + SEC(30)};
    expect_times(&r, "deliver", 0, "failed", want_f, 3);
    const int64_t want_ok[] = {t0 + SEC(150)};
    expect_times(&r, "deliver", 0, "delivered", want_ok, 1);
    assert_true(m(&r, "deliveries") == 1);
    sim_result_free(&r);

    static const char *const st[] = {"delivery_retry=startup", NULL};
    run_hb(text, st, &r);
    const int64_t want_f2[] = {t0, HR(1) + MIN(1) + SEC(5), HR(2) + MIN(1) + SEC(25)};
    expect_times(&r, "deliver", 0, "failed", want_f2, 3);
    const int64_t want_ok2[] = {HR(3) + MIN(3)};
    expect_times(&r, "deliver", 0, "delivered", want_ok2, 1);
    sim_result_free(&r);

    /* With max_retries=2 the third failure (at the second start-up) moves
     * the entry to failed/: no fourth attempt, never delivered. */
    static const char *const st2[] = {"delivery_retry=startup", "max_retries=2", NULL};
    run_hb(text, st2, &r);
    expect_times(&r, "deliver", 0, "failed", want_f2, 3);
    expect_times(&r, "deliver", 0, "delivered", NULL, 0);
    assert_true(m(&r, "deliveries") == 0);
    assert_true(m(&r, "undelivered") == 1);
    sim_result_free(&r);
}

/* Every attempt fails: after 5 retries (6 attempts: 0, +5 s, +25 s, +2 m,
 * +10 m, +10 m) the entry moves to failed/: undelivered. */
static void test_delivery_to_failed(void **state)
{
    (void)state;
    struct sim_result r;
    run_hb("horizon 2h\n"
           "workflow agent\n"
           "  producer report at 10m runs 1m publish log\n"
           "fail agent.report delivery 100%\n",
           NULL, &r);
    const int64_t t0 = MIN(11) + MS(250);
    const int64_t want[] = {t0, t0 + SEC(5), t0 + SEC(30), t0 + SEC(150), t0 + SEC(750), t0 + SEC(1350)};
    expect_times(&r, "deliver", 0, "failed", want, 6);
    assert_true(m(&r, "undelivered") == 1);
    assert_true(m(&r, "deliveries") == 0);
    sim_result_free(&r);
}

/* The recovery budget: three reports (10m, 20m, 30m) whose deliveries always
 * fail wait, as built, for the next start-up with one failure each.  The
 * host restarts at 1h01m; each entry waits 5 s after the previous one:
 * 1h01m05s, 1h01m10s, 1h01m15s.  With an 8 s budget the third is deferred:
 * 5 s had been spent before the second (< 8 s), 10 s before the third. */
static void test_recovery_budget(void **state)
{
    (void)state;
    const char *text = "horizon 2h\n"
                       "workflow agent\n"
                       "  producer a at 10m runs 1m publish log\n"
                       "  producer b at 20m runs 1m publish log\n"
                       "  producer c at 30m runs 1m publish log\n"
                       "fail agent.a delivery 100%\n"
                       "fail agent.b delivery 100%\n"
                       "fail agent.c delivery 100%\n"
                       "crash host at 1h for 1m\n";
    static const char *const kv1[] = {"delivery_retry=startup", NULL};
    static const char *const kv2[] = {"delivery_retry=startup", "recover_budget=8s", NULL};
    const int64_t r0 = HR(1) + MIN(1);
    struct sim_result r;
    run_hb(text, kv1, &r);
    const int64_t want[] = {MIN(11) + MS(250), MIN(21) + MS(250), MIN(31) + MS(250), r0 + SEC(5), r0 + SEC(10),
                            r0 + SEC(15)};
    expect_times(&r, "deliver", -1, NULL, want, 6);
    sim_result_free(&r);
    run_hb(text, kv2, &r);
    expect_times(&r, "deliver", -1, NULL, want, 5);
    assert_true(m(&r, "undelivered") == 3);
    sim_result_free(&r);
}

/* A crash between deliver and ack (seed: "delivery succeeds but the process
 * crashes before ack() — on next startup it will re-send once"): delivered
 * at 11m00.250, ack due at 11m02.250, crash at 11m01s, restart 12m01s:
 * delivered again at once; one duplicate delivery.  Without the gap the ack
 * is immediate and nothing repeats. */
static void test_ack_crash_duplicate(void **state)
{
    (void)state;
    const char *text = "horizon 2h\n"
                       "workflow agent\n"
                       "  producer report at 10m runs 1m publish log\n"
                       "crash host at 11m1s for 1m\n";
    static const char *const kv[] = {"ack_delay=2s", NULL};
    struct sim_result r;
    run_hb(text, kv, &r);
    const int64_t want[] = {MIN(11) + MS(250), MIN(12) + SEC(1)};
    expect_times(&r, "deliver", 0, "delivered", want, 2);
    assert_true(m(&r, "deliveries") == 2);
    assert_true(m(&r, "dup_deliveries") == 1);
    sim_result_free(&r);
    run_hb(text, NULL, &r);
    assert_true(m(&r, "deliveries") == 1);
    assert_true(m(&r, "dup_deliveries") == 0);
    sim_result_free(&r);
}

/* Runs with nothing to report end with the ack token and deliver nothing:
 * only the run that took an event is delivered. */
static void test_ack_token_no_delivery(void **state)
{
    (void)state;
    struct sim_result r;
    run_hb("horizon 2h\n"
           "drain 0\n"
           "workflow agent\n"
           "  consumer check subscribe inbox fifo runs 1s\n"
           "publish inbox at 40m\n",
           NULL, &r);
    assert_true(m(&r, "runs") == 4); /* heartbeats 30m, 1h, 1h30m and the event */
    assert_true(m(&r, "runs_empty") == 3);
    assert_true(m(&r, "deliveries") == 1);
    sim_result_free(&r);
}

/* A digest consumer is served at the first agent run after its time: with
 * heartbeats every 30m, a 09:10 digest waits for 09:30. */
static void test_wake_at_next_heartbeat(void **state)
{
    (void)state;
    struct sim_result r;
    run_hb("horizon 12h\n"
           "drain 0\n"
           "workflow agent\n"
           "  consumer daily subscribe news digest 09:10 runs 5s\n"
           "publish news at 2h\n",
           NULL, &r);
    const struct trace_rec *s[4];
    assert_int_equal(records(&r, "start", 0, "taken=1", s, 4), 1);
    assert_int_equal(s[0]->t_us, HR(9) + MIN(30) + MS(250));
    assert_true(m(&r, "latency.max") == HR(7) + MIN(30) + SEC(5) + MS(250));
    sim_result_free(&r);
}

/* Every parameter names its source; defaults are the seed's. */
static void test_params(void **state)
{
    (void)state;
    const struct policy_ops *ops = policy_find("heartbeat");
    assert_non_null(ops);
    assert_int_equal(ops->promise, PROMISE_WORKFLOW);
    assert_int_equal(ops->items_volatile, 1);
    for (int i = 0; i < ops->nparams; i++)
        assert_true(ops->params[i].source && ops->params[i].source[0]);
    struct params ps;
    params_init(&ps, ops);
    assert_true(params_get(&ps, "every") == MIN(30));
    assert_true(params_get(&ps, "coalesce") == MS(250));
    assert_true(params_get(&ps, "retry_delay") == SEC(1));
    assert_true(params_get(&ps, "queue_cap") == 50);
    assert_true(params_get(&ps, "cron_rearm") == SEC(60));
    assert_true(params_get(&ps, "max_retries") == 5);
    assert_true(params_get(&ps, "recover_budget") == SEC(60));
    char msg[256];
    assert_int_equal(params_set(&ps, "active_start", "24:30", msg, sizeof msg), -1);
    assert_int_equal(params_set(&ps, "active_tz", "Mars/Base", msg, sizeof msg), -1);
    assert_int_equal(params_set(&ps, "active_tz", "Asia/Shanghai", msg, sizeof msg), 0);
}

/* The same inputs give the same trace. */
static void test_determinism(void **state)
{
    (void)state;
    const char *text = "horizon 2d\n"
                       "seed 7\n"
                       "workflow w x 3\n"
                       "  producer p every 7m runs exp(30s) source s\n"
                       "  producer q cron \"*/13 * * * *\" runs 2s publish t\n"
                       "  consumer c subscribe s,t batch 5 or 20m runs uniform(1s,9s)\n"
                       "source s poisson 30/h keys 4\n"
                       "crash host random mtbf 10h mttr 10m\n"
                       "fail w.c transient 5%\n"
                       "fail w.p delivery 20%\n";
    struct sim_result a, b;
    run_hb(text, NULL, &a);
    run_hb(text, NULL, &b);
    assert_true(a.fingerprint == b.fingerprint);
    assert_true(a.events == b.events);
    assert_true(m(&a, "published") == m(&a, "processed") + m(&a, "lost"));
    assert_true(m(&a, "overlaps") == 0);
    sim_result_free(&a);
    sim_result_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_coalescing_example),
        cmocka_unit_test(test_no_window),
        cmocka_unit_test(test_wake_during_run),
        cmocka_unit_test(test_queue_eviction),
        cmocka_unit_test(test_context_key),
        cmocka_unit_test(test_crash_loses_queue),
        cmocka_unit_test(test_retry_after_failure), cmocka_unit_test(test_held_items),
        cmocka_unit_test(test_cron_backoff_sequence),
        cmocka_unit_test(test_cron_rearm_wakeups),
        cmocka_unit_test(test_missed_fire_skipped),
        cmocka_unit_test(test_dom_dow_and),
        cmocka_unit_test(test_active_hours_overnight),
        cmocka_unit_test(test_manual_trigger),
        cmocka_unit_test(test_delivery_offsets),
        cmocka_unit_test(test_delivery_to_failed),
        cmocka_unit_test(test_recovery_budget),
        cmocka_unit_test(test_ack_crash_duplicate),
        cmocka_unit_test(test_ack_token_no_delivery),
        cmocka_unit_test(test_wake_at_next_heartbeat),
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_determinism),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    cal_zone_cache_free();
    return rc;
}
