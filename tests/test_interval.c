/* test_interval.c: the `interval` policy (seed 003) against timelines
 * computed by hand, to the microsecond, and against a small reference model
 * of its rules (the PRD's check loop, written here as plainly as possible:
 * every tick, in configuration order, start each due idle schedule whose
 * workflow has capacity; a run's end makes the next trigger its completion
 * plus the interval).
 *
 * Reading a timeline: a run of duration d has phases 10/80/10 % (prepare,
 * mutate, emit); a failing run fails at the end of mutating (0.9 d).  The
 * check loop ticks every second from the host's (re)start and runs once at
 * the start itself; a trigger at a non-whole second is picked up by the next
 * tick. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/util.h"
#include "tests/simtest.h"

#define S(n) ((int64_t)(n) * US_PER_S)
#define MIN(n) ((int64_t)(n) * US_PER_MIN)
#define MAX_RUNS 4096

/* Runs text under `interval` with "k=v,k=v" parameters (NULL: defaults),
 * keeping the trace. */
static void run_with(const char *text, const char *policy, const char *kvs, struct sim_result *res)
{
    simtest_run(text, policy, kvs, 1, 1, res);
}

static void run_text(const char *text, const char *kvs, struct sim_result *res)
{
    run_with(text, "interval", kvs, res);
}

static double m(const struct sim_result *r, const char *name)
{
    double v = -12345;
    assert_int_equal(metric_get(&r->ck, -1, name, &v), 0);
    return v;
}

/* Instants of the trace records of one kind ("start", "end") for handler h
 * (-1: any), in order. */
static int times_of(const struct sim_result *r, const char *kind, int64_t h, int64_t *out)
{
    int n = 0;
    for (size_t i = 0; i < r->ntrace; i++) {
        const struct trace_rec *t = &r->trace[i];
        if (!simtest_is(t, kind) || (h >= 0 && t->handler != h))
            continue;
        assert_true(n < MAX_RUNS);
        out[n++] = t->t_us;
    }
    return n;
}

static void expect_times(const struct sim_result *r, const char *kind, int64_t h, const int64_t *want, int nwant)
{
    int64_t got[MAX_RUNS];
    int n = times_of(r, kind, h, got);
    for (int i = 0; i < n && i < nwant; i++)
        if (got[i] != want[i])
            fail_msg("%s %d of handler %lld: got %lld us, want %lld us", kind, i, (long long)h, (long long)got[i],
                     (long long)want[i]);
    if (n != nwant)
        fail_msg("handler %lld: %d '%s' records, want %d", (long long)h, n, kind, nwant);
}

/* --- the PRD's note ------------------------------------------------------------ */

static const char *overrun = "start 2025-01-01T10:00:00Z\n"
                             "horizon 1h\n"
                             "workflow agent\n"
                             "  producer report every 5m runs 10m publish out\n";

/* "If an agent takes 10 minutes but interval is 5m, the next run is 15m
 * after the first started."  10:00 start, 10:10 end, 10:15 next trigger (a
 * tick: the loop ticks at whole seconds from 10:00), and so every 15 min;
 * the trigger at 11:00 is at the horizon, where the schedule ends. */
static void test_prd_note(void **state)
{
    (void)state;
    struct sim_result r;
    run_text(overrun, NULL, &r);
    static const int64_t starts[] = {0, MIN(15), MIN(30), MIN(45)};
    static const int64_t ends[] = {MIN(10), MIN(25), MIN(40), MIN(55)};
    expect_times(&r, "start", 0, starts, 4);
    expect_times(&r, "end", 0, ends, 4);
    assert_true(starts[1] - starts[0] == 15 * US_PER_MIN);
    assert_true(m(&r, "overlaps") == 0);
    assert_true(m(&r, "overlap_runs") == 0);
    sim_result_free(&r);
}

/* As built (anchor=start): the next trigger is start + 5m = 10:05, already
 * past when the run ends at 10:10, so the check at 10:10 (the run's end is
 * reported before that tick) starts it at once: every 10 minutes, never two
 * at once.  The trigger of the last run, 10:55, came before the horizon, so
 * it runs at 11:00. */
static void test_prd_note_anchor_start(void **state)
{
    (void)state;
    struct sim_result r;
    run_text(overrun, "anchor=start", &r);
    static const int64_t starts[] = {0, MIN(10), MIN(20), MIN(30), MIN(40), MIN(50), MIN(60)};
    expect_times(&r, "start", 0, starts, 7);
    assert_true(m(&r, "overlaps") == 0);
    assert_true(m(&r, "missed") == 6);
    sim_result_free(&r);
}

/* The check loop's granularity: a 10m00.3s run ends 300 ms past a tick; its
 * next trigger, 5 minutes later, is picked up by the next tick, 700 ms
 * late.  Run k starts at 901k s (0, 15m01s, 30m02s, 45m03s); the fifth
 * trigger, 3604.3 s, is past the horizon.  With check_interval=10s the
 * trigger at 900.3 s waits for the tick at 910 s: run k at 910k s. */
static void test_check_granularity(void **state)
{
    (void)state;
    const char *text = "horizon 1h\n"
                       "workflow agent\n"
                       "  producer report every 5m runs 10m300ms publish out\n";
    struct sim_result r;
    run_text(text, NULL, &r);
    static const int64_t starts[] = {0, S(901), S(1802), S(2703)};
    static const int64_t ends[] = {S(600) + 300000, S(1501) + 300000, S(2402) + 300000, S(3303) + 300000};
    expect_times(&r, "start", 0, starts, 4);
    expect_times(&r, "end", 0, ends, 4);
    sim_result_free(&r);
    run_text(text, "check_interval=10s", &r);
    static const int64_t starts10[] = {0, S(910), S(1820), S(2730)};
    expect_times(&r, "start", 0, starts10, 4);
    sim_result_free(&r);
}

/* The first trigger is immediate, whatever the nominal offset: the run at 0
 * serves no nominal instant (the first, 30m, is after it); it ends at 1m and
 * the next trigger is 1h01m: runs at 0, 1h01m, 2h02m (3h03m is past the
 * horizon).  Dues 30m, 1h30m, 2h30m: the first two are served 31 and 32
 * minutes late, within their period; 2h30m by no run: missed 1, and its
 * lateness is censored (infinite), so lateness.max is too; the served
 * ones' maximum is 32 minutes. */
static void test_first_trigger_immediate(void **state)
{
    (void)state;
    struct sim_result r;
    run_text("horizon 3h\n"
             "workflow agent\n"
             "  producer p every 1h offset 30m runs 1m publish out\n",
             NULL, &r);
    static const int64_t starts[] = {0, MIN(61), MIN(122)};
    expect_times(&r, "start", 0, starts, 3);
    assert_true(m(&r, "dues") == 3);
    assert_true(isinf(m(&r, "lateness.max")));
    assert_true(r.ck.total.lateness.max_us == MIN(32));
    assert_true(r.ck.total.lateness.count == 2 && r.ck.total.lateness.censored == 1);
    assert_true(m(&r, "missed") == 1);
    sim_result_free(&r);
}

/* --- consumers ------------------------------------------------------------------ */

/* Three items published at 30 s.  Polls: 0 (nothing pending: skipped, next
 * 1m), 1m (takes item 0, one item per run; ends 1m01s, next 2m01s), 2m01s
 * (item 1, ends 2m02s), 3m02s (item 2, ends 3m03s), then skipped polls.
 * Latencies 31 s, 92 s, 153 s. */
static const char *three_items = "horizon 1h\n"
                                 "drain 0\n"
                                 "workflow inbox\n"
                                 "  consumer c subscribe t fifo runs 1s\n"
                                 "publish t at 30s count 3\n";

static void test_consumer_one_item_per_run(void **state)
{
    (void)state;
    struct sim_result r;
    run_text(three_items, NULL, &r);
    static const int64_t starts[] = {MIN(1), MIN(2) + S(1), MIN(3) + S(2)};
    expect_times(&r, "start", 0, starts, 3);
    assert_true(m(&r, "processed") == 3);
    assert_true(m(&r, "runs_empty") == 0);
    assert_true(m(&r, "busy_loops") == 0);
    assert_true(m(&r, "latency.max") == (double)S(153));
    assert_true(m(&r, "latency.mean") == (double)S(92));
    assert_true(m(&r, "wakeups") == 3599);
    sim_result_free(&r);
}

/* no_work=run: the polls with nothing pending are empty runs (idle
 * duration 0: they end as they start, and the next is a minute later): at
 * 0, and from 4m03s every minute while before 1h (4m03s + 55 * 60 s =
 * 59m03s): 1 + 56 = 57 empty runs, all busy loops, 60 runs in all.  The
 * item runs keep their instants. */
static void test_consumer_no_work_run(void **state)
{
    (void)state;
    struct sim_result r;
    run_text(three_items, "no_work=run", &r);
    int64_t got[MAX_RUNS];
    int n = times_of(&r, "start", 0, got);
    assert_int_equal(n, 60);
    assert_true(got[0] == 0 && got[1] == MIN(1) && got[2] == MIN(2) + S(1) && got[3] == MIN(3) + S(2));
    assert_true(got[4] == MIN(4) + S(3) && got[59] == MIN(59) + S(3));
    assert_true(m(&r, "runs_empty") == 57);
    assert_true(m(&r, "busy_loops") == 57);
    assert_true(m(&r, "latency.max") == (double)S(153));
    sim_result_free(&r);
}

/* --- crashes and stops ---------------------------------------------------------- */

static const char *crash6h = "horizon 6h\n"
                             "workflow agent\n"
                             "  producer sync every 10m runs 2m publish out\n"
                             "crash host at 1h01m for 5m\n";

/* Runs at 0, 12m, 24m, 36m, 48m, 1h00m; the crash at 1h01m cuts the sixth
 * (in its mutating phase: no mutation).  Its status stays `running`: no run
 * after the restart.  Dues every 10 m: 36 in 6 h, 72 in 12 h; the ones from
 * 1h10m are never served, nor is 50m within its period: missed 30 and 66,
 * growing by 6 an hour with the horizon. */
static void test_crash_stuck(void **state)
{
    (void)state;
    struct sim_result r;
    run_text(crash6h, NULL, &r);
    static const int64_t starts[] = {0, MIN(12), MIN(24), MIN(36), MIN(48), MIN(60)};
    expect_times(&r, "start", 0, starts, 6);
    assert_true(m(&r, "stuck") == 1);
    assert_true(m(&r, "missed") == 30);
    assert_true(m(&r, "recovery_ok") == 0);
    assert_true(r.ck.recovery_time_max_us == -1);
    /* Ticks in (0, 1h01m) and (1h06m, 30h): 3659 + 104039. */
    assert_true(m(&r, "wakeups") == 3659 + 104039);
    sim_result_free(&r);

    run_text("horizon 12h\n"
             "workflow agent\n"
             "  producer sync every 10m runs 2m publish out\n"
             "crash host at 1h01m for 5m\n",
             NULL, &r);
    assert_true(m(&r, "dues") == 72);
    assert_true(m(&r, "missed") == 66);
    assert_true(m(&r, "stuck") == 1);
    sim_result_free(&r);
}

/* recover=reset: the restart at 1h06m sets the status back to idle; the
 * persisted next_run_at (1h00m) is past, so the check at the restart instant
 * runs it (recovery_time 0); then every 12 minutes. */
static void test_crash_reset(void **state)
{
    (void)state;
    struct sim_result r;
    run_text(crash6h, "recover=reset", &r);
    int64_t got[MAX_RUNS];
    int n = times_of(&r, "start", 0, got);
    assert_int_equal(n, 31);
    assert_true(got[6] == MIN(66));
    assert_true(got[7] == MIN(78));
    assert_true(got[30] == MIN(66 + 24 * 12));
    assert_true(m(&r, "stuck") == 0);
    assert_true(m(&r, "recovery_ok") == 1);
    assert_true(r.ck.recovery_time_max_us == 0);
    sim_result_free(&r);
}

/* A crash while the schedule is idle: next_run_at is durable, so the
 * restart does not run it early.  Run 0-1m, next 11m; crash at 5m, back at
 * 7m: the check at 7m finds nothing due; runs at 11m and 22m. */
static void test_crash_idle_keeps_next_run_at(void **state)
{
    (void)state;
    struct sim_result r;
    run_text("horizon 30m\n"
             "workflow agent\n"
             "  producer p every 10m runs 1m publish out\n"
             "crash host at 5m for 2m\n",
             NULL, &r);
    static const int64_t starts[] = {0, MIN(11), MIN(22)};
    expect_times(&r, "start", 0, starts, 3);
    assert_true(m(&r, "stuck") == 0);
    sim_result_free(&r);
}

/* Graceful stops (interval_stop.scn): the run of 1h00m ends within the
 * 10-minute grace of the stop at 1h01m, so its completion is written (next
 * 1h20m) and the restart at 1h31m runs it at once; the run of 3h11m is cut
 * off 30 s after the stop at 3h12m and its schedule stays `running`. */
static void test_graceful_stop(void **state)
{
    (void)state;
    const char *text = "horizon 5h\n"
                       "drain 0\n"
                       "workflow agent\n"
                       "  producer sync every 15m runs 5m publish out\n"
                       "stop host at 1h01m grace 10m for 30m\n"
                       "stop host at 3h12m for 30m\n";
    struct sim_result r;
    run_text(text, NULL, &r);
    static const int64_t starts[] = {0, MIN(20), MIN(40), MIN(60), MIN(91), MIN(111), MIN(131), MIN(151), MIN(171),
                                     MIN(191)};
    expect_times(&r, "start", 0, starts, 10);
    assert_true(m(&r, "runs_cutoff") == 1);
    assert_true(m(&r, "stuck") == 1);
    sim_result_free(&r);
    run_text(text, "recover=reset", &r);
    static const int64_t starts_reset[] = {0,        MIN(20),  MIN(40),  MIN(60),  MIN(91),  MIN(111), MIN(131),
                                           MIN(151), MIN(171), MIN(191), MIN(222), MIN(242), MIN(262), MIN(282)};
    expect_times(&r, "start", 0, starts_reset, 14);
    assert_true(m(&r, "stuck") == 0);
    sim_result_free(&r);
}

/* --- capacity, triggers, errors ------------------------------------------------- */

/* max_concurrent=2, three 10-minute jobs every hour (interval_capacity.scn):
 * a and b at 0, 1h10m, 2h20m; c when they end: 10m, 1h20m, 2h30m. */
static void test_capacity_two(void **state)
{
    (void)state;
    struct sim_result r;
    run_text("horizon 3h\n"
             "workflow agent\n"
             "  producer a every 1h runs 10m publish out\n"
             "  producer b every 1h runs 10m publish out\n"
             "  producer c every 1h runs 10m publish out\n",
             "max_concurrent=2", &r);
    static const int64_t ab[] = {0, MIN(70), MIN(140)};
    static const int64_t c[] = {MIN(10), MIN(80), MIN(150)};
    expect_times(&r, "start", 0, ab, 3);
    expect_times(&r, "start", 1, ab, 3);
    expect_times(&r, "start", 2, c, 3);
    assert_true(m(&r, "missed") == 0);
    sim_result_free(&r);
}

/* Manual trigger (trigger(agentName): the first schedule, respecting
 * max_concurrent).  p runs 0-1m; q waits for capacity and runs 1m-2m.  The
 * trigger at 30m runs p at once (next: 31m + 1h = 1h31m); q runs at 1h02m;
 * the trigger at 1h02m30s finds the agent at capacity and does nothing.
 * Then p 1h31m, 2h32m; q 2h03m; the next triggers (3h04m, 3h33m) are past
 * the horizon. */
static void test_manual_trigger(void **state)
{
    (void)state;
    struct sim_result r;
    run_text("horizon 3h\n"
             "drain 0\n"
             "workflow agent\n"
             "  producer p every 1h runs 1m publish out\n"
             "  producer q every 1h runs 1m publish out\n"
             "trigger agent at 30m\n"
             "trigger agent at 1h02m30s\n",
             NULL, &r);
    static const int64_t p[] = {0, MIN(30), MIN(91), MIN(152)};
    static const int64_t q[] = {MIN(1), MIN(62), MIN(123)};
    expect_times(&r, "start", 0, p, 4);
    expect_times(&r, "start", 1, q, 3);
    assert_true(m(&r, "overlaps") == 0);
    sim_result_free(&r);
}

/* A schedule that always fails (at 54 s of its 1-minute run).  Without
 * backoff: every 10m54s.  backoff=exp: waits 10m, 20m, 40m, then the 1h
 * cap: starts 0, 654 s, 1908 s, 4362 s, 8016 s, 11670 s.  backoff_max
 * below the interval is the interval. */
static void test_backoff(void **state)
{
    (void)state;
    const char *text = "horizon 3h20m\n"
                       "drain 0\n"
                       "workflow ops\n"
                       "  producer flaky every 10m runs 1m publish out\n"
                       "fail ops.flaky transient 100%\n";
    struct sim_result r;
    run_text(text, NULL, &r);
    int64_t got[MAX_RUNS];
    int n = times_of(&r, "start", 0, got);
    assert_int_equal(n, 19); /* 654k < 12000 s: k <= 18 */
    for (int i = 0; i < n; i++)
        assert_true(got[i] == S(654) * i);
    sim_result_free(&r);
    run_text(text, "backoff=exp", &r);
    static const int64_t starts[] = {0, S(654), S(1908), S(4362), S(8016), S(11670)};
    expect_times(&r, "start", 0, starts, 6);
    assert_true(m(&r, "runs_failed") == 6);
    sim_result_free(&r);
    run_text(text, "backoff=exp,backoff_max=5m", &r);
    assert_int_equal(times_of(&r, "start", 0, got), 19);
    sim_result_free(&r);
}

/* Errors in one schedule do not stop another of the same agent: flaky
 * fails at 54 s, steady (next in configuration order) starts at the check
 * at 54 s, when flaky's end frees the agent.  steady: 54 s-1m54s, next
 * 11m54s; flaky: next 10m54s, 10m54s-11m48s, next 21m48s; steady at
 * 11m54s (it was due at 11m54s and the agent is free again at 11m48s). */
static void test_error_isolation(void **state)
{
    (void)state;
    struct sim_result r;
    run_text("horizon 20m\n"
             "drain 0\n"
             "workflow ops\n"
             "  producer flaky every 10m runs 1m publish out\n"
             "  producer steady every 10m runs 1m publish out\n"
             "fail ops.flaky transient 100%\n",
             NULL, &r);
    static const int64_t flaky[] = {0, S(654)};
    static const int64_t steady[] = {S(54), S(714)};
    expect_times(&r, "start", 0, flaky, 2);
    expect_times(&r, "start", 1, steady, 2);
    sim_result_free(&r);
}

/* Cron and one-shot schedules: skipped by default; with cron=run, the first
 * fire, then the first fire after the completion (anchor completion) or
 * after the start (anchor=start).  Hourly fires, 90-minute runs: 0, 2h, 4h;
 * as built from the start: 0, then 1h is past at the end (1h30m): 1h30m,
 * then 2h is past at 3h: 3h, 4h30m. */
static void test_cron(void **state)
{
    (void)state;
    const char *text = "horizon 5h\n"
                       "drain 0\n"
                       "workflow agent\n"
                       "  producer d cron \"0 * * * *\" runs 90m publish out\n";
    struct sim_result r;
    int64_t got[MAX_RUNS];
    run_text(text, NULL, &r);
    assert_int_equal(times_of(&r, "start", -1, got), 0);
    assert_true(m(&r, "missed") == 5);
    sim_result_free(&r);
    run_text(text, "cron=run", &r);
    static const int64_t a[] = {0, MIN(120), MIN(240)};
    expect_times(&r, "start", 0, a, 3);
    sim_result_free(&r);
    run_text(text, "cron=run,anchor=start", &r);
    static const int64_t b[] = {0, MIN(90), MIN(180), MIN(270)};
    expect_times(&r, "start", 0, b, 4);
    assert_true(m(&r, "overlaps") == 0);
    sim_result_free(&r);
}

/* Jitter: each next trigger is completion + 10m + a uniform 0..60 s (10 %),
 * picked up by the next whole-second tick, so each gap from an end to the
 * next start is within [10m, 11m]; the draws come from the policy's stream,
 * so the run is reproducible. */
static void test_jitter(void **state)
{
    (void)state;
    const char *text = "horizon 2d\n"
                       "workflow agent\n"
                       "  producer p every 10m runs 1m publish out\n";
    struct sim_result r, again;
    run_text(text, "jitter=10", &r);
    run_text(text, "jitter=10", &again);
    assert_true(r.fingerprint == again.fingerprint);
    int64_t st[MAX_RUNS], en[MAX_RUNS];
    int n = times_of(&r, "start", 0, st);
    assert_int_equal(times_of(&r, "end", 0, en), n);
    assert_true(n > 200);
    int longer = 0;
    for (int i = 1; i < n; i++) {
        int64_t gap = st[i] - en[i - 1];
        if (gap < MIN(10) || gap > MIN(11))
            fail_msg("gap %d: %lld us", i, (long long)gap);
        longer += gap > MIN(10);
    }
    assert_true(longer > n / 2);
    sim_result_free(&r);
    sim_result_free(&again);
    run_text(text, NULL, &r);
    n = times_of(&r, "start", 0, st);
    for (int i = 1; i < n; i++)
        assert_true(st[i] - st[i - 1] == MIN(11));
    sim_result_free(&r);
}

/* --- the reference model ---------------------------------------------------------- */

struct model_sched {
    int64_t iv_s, dur_s, next_s, end_s;
    int running, inst;
};

static uint64_t lcg(uint64_t *s)
{
    *s = *s * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    return *s >> 33;
}

/* The PRD's loop, tick by tick (whole seconds), for interval producers
 * whose durations are multiples of 10 s (so every run ends at a tick, and
 * the engine reports the end before that tick's check).  Records each
 * start; returns the highest number of runs of one workflow at once. */
static int model_run(struct model_sched *s, int n, int ninst, int mc, int64_t horizon_s, int64_t end_s,
                     int64_t (*starts)[256], int *nstarts)
{
    int running[16] = {0}, peak = 0;
    for (int i = 0; i < n; i++) {
        s[i].next_s = 0;
        s[i].running = 0;
        nstarts[i] = 0;
    }
    for (int64_t t = 0; t < end_s; t++) {
        for (int i = 0; i < n; i++) {
            if (s[i].running && s[i].end_s == t) {
                s[i].running = 0;
                running[s[i].inst]--;
                s[i].next_s = t + s[i].iv_s;
            }
        }
        for (int i = 0; i < n; i++) {
            if (s[i].running || s[i].next_s > t || s[i].next_s >= horizon_s || running[s[i].inst] >= mc)
                continue;
            s[i].running = 1;
            s[i].end_s = t + s[i].dur_s;
            running[s[i].inst]++;
            if (running[s[i].inst] > peak)
                peak = running[s[i].inst];
            assert_true(nstarts[i] < 256);
            starts[i][nstarts[i]++] = t;
        }
    }
    (void)ninst;
    return peak;
}

/* Random agents (1-4 workflows of 1-5 interval schedules, intervals 30 s to
 * 20 min, runs 10 s to 15 min, max_concurrent 1-3) against the model: the
 * same start instants for every schedule, and never more than
 * max_concurrent runs of a workflow at once. */
static void test_model(void **state)
{
    (void)state;
    uint64_t seed = 42;
    for (int trial = 0; trial < 40; trial++) {
        struct model_sched s[20];
        int n = 0, ninst = 1 + (int)(lcg(&seed) % 4), mc = 1 + (int)(lcg(&seed) % 3);
        char text[4096];
        size_t off = (size_t)snprintf(text, sizeof text, "horizon 2h\ndrain 30m\n");
        for (int w = 0; w < ninst; w++) {
            off += (size_t)snprintf(text + off, sizeof text - off, "workflow w%d\n", w);
            int k = 1 + (int)(lcg(&seed) % 5);
            for (int j = 0; j < k; j++, n++) {
                s[n].inst = w;
                s[n].iv_s = 30 + (int64_t)(lcg(&seed) % 1171);
                s[n].dur_s = 10 * (1 + (int64_t)(lcg(&seed) % 90));
                off += (size_t)snprintf(text + off, sizeof text - off,
                                        "  producer p%d every %llds runs %llds publish out\n", j,
                                        (long long)s[n].iv_s, (long long)s[n].dur_s);
            }
        }
        static int64_t want[20][256];
        int nwant[20];
        int peak = model_run(s, n, ninst, mc, 7200, 9000, want, nwant);
        assert_true(peak <= mc);
        char kv[32];
        snprintf(kv, sizeof kv, "max_concurrent=%d", mc);
        struct sim_result r;
        run_text(text, kv, &r);
        for (int i = 0; i < n; i++) {
            int64_t w_us[256];
            for (int k = 0; k < nwant[i]; k++)
                w_us[k] = S(want[i][k]);
            expect_times(&r, "start", i, w_us, nwant[i]);
        }
        if (mc == 1)
            assert_true(m(&r, "overlaps") == 0);
        sim_result_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prd_note),
        cmocka_unit_test(test_prd_note_anchor_start),
        cmocka_unit_test(test_check_granularity),
        cmocka_unit_test(test_first_trigger_immediate),
        cmocka_unit_test(test_consumer_one_item_per_run),
        cmocka_unit_test(test_consumer_no_work_run),
        cmocka_unit_test(test_crash_stuck),
        cmocka_unit_test(test_crash_reset),
        cmocka_unit_test(test_crash_idle_keeps_next_run_at),
        cmocka_unit_test(test_graceful_stop),
        cmocka_unit_test(test_capacity_two),
        cmocka_unit_test(test_manual_trigger),
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_error_isolation),
        cmocka_unit_test(test_cron),
        cmocka_unit_test(test_jitter),
        cmocka_unit_test(test_model),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    cal_zone_cache_free();
    return rc;
}
