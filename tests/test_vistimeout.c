/* test_vistimeout.c: the vistimeout policy (and its lease design) on small
 * scenarios whose timelines are computed by hand, to the microsecond, from
 * the policy's rules.  Each test says how its numbers come about.
 *
 * Conventions of every scenario here: the coordinator ticks at the host's
 * start and every 5 s after it; a run of d with the default phases prepares
 * for d/10, mutates for 8d/10 (the mutation applies at 9d/10) and emits for
 * d/10; workers are claimed lowest index first, and worker index k runs
 * carry worker k + 1.  Host wake-ups: each tick of a ticker in (start, end)
 * counts, fired or not, so a run of length T with the coordinator alone
 * wakes floor((T - 1us) / 5 s) times; each timer that fires adds one. */
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

/* Seconds to microseconds, rounded (62.8 s is 62800000 us exactly). */
#define S(x) ((int64_t)((x) * 1e6 + 0.5))

/* Runs text under vistimeout with up to four key=value settings ("" ends),
 * keeping the trace. */
static void vt_run(const char *text, const char *const *kv, struct sim_result *res)
{
    simtest_run_kv(text, "vistimeout", kv, 1, 1, res);
}

static double metric(const struct sim_result *r, const char *name) { return simtest_metric(r, -1, name); }

static void expect_metric(const struct sim_result *r, const char *name, double want)
{
    double got = metric(r, name);
    if (got != want)
        fail_msg("%s: got %.0f, want %.0f", name, got, want);
}

/* Whether a record is of kind and its --trace detail contains part
 * (NULL: any). */
static int is_with(const struct trace_rec *t, const char *kind, const char *part)
{
    char detail[160];
    return simtest_is(t, kind) && (!part || strstr(simtest_detail(t, detail, sizeof detail), part));
}

/* The n-th (0-based) trace record of kind, whose detail contains part
 * (NULL: any); its time, or -1. */
static int64_t nth_at(const struct sim_result *r, const char *kind, const char *part, int n)
{
    for (size_t i = 0; i < r->ntrace; i++) {
        const struct trace_rec *t = &r->trace[i];
        if (!is_with(t, kind, part))
            continue;
        if (n-- == 0)
            return t->t_us;
    }
    return -1;
}

static int count_kind(const struct sim_result *r, const char *kind, const char *part)
{
    int n = 0;
    for (size_t i = 0; i < r->ntrace; i++)
        n += is_with(&r->trace[i], kind, part);
    return n;
}

/* The starts of runs, in order, against a list of instants. */
static void expect_starts(const struct sim_result *r, const int64_t *want, int n)
{
    int got = count_kind(r, "start", NULL);
    if (got != n)
        fail_msg("runs started: got %d, want %d", got, n);
    for (int i = 0; i < n; i++) {
        int64_t t = nth_at(r, "start", NULL, i);
        if (t != want[i])
            fail_msg("start %d: got %lld us, want %lld us", i, (long long)t, (long long)want[i]);
    }
}

/* --- a graceful stop ------------------------------------------------------------ */

/* One worker; events at 10m and 11m; a graceful stop at 11m30s (grace 5m,
 * back 7m later).  The first run (10m-12m) ends in the grace; the stopping
 * worker claims nothing more (on_stop), so the second event's row is still
 * PENDING at the restart (18m30s) and runs at once, as an event: latency
 * 18m30s + 2m - 11m = 9m30s.  (A claim during the grace would have left the
 * row RUNNING until the 30-minute visibility timeout.) */
static void test_graceful_stop_claims_nothing(void **state)
{
    (void)state;
    struct sim_result r;
    const char *kv[] = {"workers=1", "visibility_timeout=30m", NULL};
    vt_run("horizon 1h\n"
           "workflow w\n"
           "  consumer c subscribe t fifo runs 2m\n"
           "publish t at 10m\n"
           "publish t at 11m\n"
           "stop host at 11m30s grace 5m for 7m\n",
           kv, &r);
    const int64_t starts[] = {S(600), S(1110)};
    expect_starts(&r, starts, 2);
    assert_int_equal(count_kind(&r, "start", "reason=event"), 2);
    expect_metric(&r, "latency.max", S(570));
    expect_metric(&r, "processed", 2);
    expect_metric(&r, "runs_cutoff", 0);
    sim_result_free(&r);
}

/* --- a run that outlives the visibility timeout ------------------------------- */

static const char *overrun = "horizon 1h\n"
                             "drain 1h\n"
                             "workflow w\n"
                             "  consumer c subscribe t fifo runs 8m\n"
                             "publish t at 1m\n";

/* One event at 60 s; worker 0 claims it at once and sets available_at =
 * 60 + 300 = 360 s.  The run (480 s) mutates at 60 + 432 = 492 s and commits
 * at 540 s.  At 360 s the row is claimable again: the server's timer at the
 * earliest available_at fires (one wake-up) and worker 1 claims it while the
 * first run is still going.  Nothing is cached yet (the first run mutates
 * at 492 s), so the second run replays from the start: it mutates at
 * 792 s (a double effect) and commits at 840 s (a duplicate).  Its claim set
 * available_at to 660 s, but the first commit at 540 s completed the row.
 * Overlap [360, 540): 180 s.  Wake-ups: 1439 ticks in 2 h + 1 timer. */
static void test_overrun_duplicates(void **state)
{
    (void)state;
    struct sim_result r;
    vt_run(overrun, NULL, &r);
    const int64_t starts[] = {S(60), S(360)};
    expect_starts(&r, starts, 2);
    assert_int_equal(nth_at(&r, "start", "reason=event", 0), S(60));
    assert_int_equal(nth_at(&r, "start", "reason=recover", 0), S(360));
    assert_int_equal(nth_at(&r, "end", "committed", 0), S(540));
    assert_int_equal(nth_at(&r, "end", "committed", 1), S(840));
    expect_metric(&r, "processed", 1);
    expect_metric(&r, "duplicates", 1);
    expect_metric(&r, "double_effects", 1);
    expect_metric(&r, "overlaps", (double)S(180));
    expect_metric(&r, "overlap_runs", 1);
    expect_metric(&r, "latency.max", (double)S(480));
    expect_metric(&r, "wakeups", 1440);
    sim_result_free(&r);
}

/* heartbeat_extend: the worker's heartbeats (every 10 s from its start at
 * 0: 70 s ... 530 s, 47 of them; the one due at 540 s is cancelled by the
 * commit, which came first) keep available_at at now + 45 s, ahead of the
 * clock: one run, no duplicate.  Wake-ups 1439 + 47.  The same with the
 * as-built 60 s timeout (claim: 120 s; first heartbeat 70 s -> 115 s). */
static void test_overrun_heartbeat(void **state)
{
    (void)state;
    const char *const a[] = {"heartbeat_extend=on", NULL};
    const char *const b[] = {"heartbeat_extend=on", "visibility_timeout=60s", NULL};
    const char *const *sets[] = {a, b};
    for (int i = 0; i < 2; i++) {
        struct sim_result r;
        vt_run(overrun, sets[i], &r);
        const int64_t starts[] = {S(60)};
        expect_starts(&r, starts, 1);
        expect_metric(&r, "duplicates", 0);
        expect_metric(&r, "overlaps", 0);
        expect_metric(&r, "wakeups", 1439 + 47);
        sim_result_free(&r);
    }
}

/* design=lease: locked_until = 90 s at the claim, extended to now + 30 s by
 * the same 47 heartbeats; the watchdog never finds an orphan.  Wake-ups:
 * 7199 watchdog ticks (1 s) + 1439 scheduler ticks + 47 heartbeats. */
static void test_overrun_lease(void **state)
{
    (void)state;
    const char *const kv[] = {"design=lease", NULL};
    struct sim_result r;
    vt_run(overrun, kv, &r);
    const int64_t starts[] = {S(60)};
    expect_starts(&r, starts, 1);
    expect_metric(&r, "duplicates", 0);
    expect_metric(&r, "wakeups", 7199 + 1439 + 47);
    sim_result_free(&r);
}

/* Memoization: a run of 330 s from 60 s mutates at 60 + 297 = 357 s, before
 * the re-claim at 360 s, so its mutate step is cached: the second run
 * resumes at emitting (33 s) and commits at 393 s without mutating again.
 * The first commits at 390 s.  One duplicate, no double effect, overlap
 * [360, 390). */
static void test_reclaim_uses_cached_step(void **state)
{
    (void)state;
    struct sim_result r;
    vt_run("horizon 1h\n"
           "drain 1h\n"
           "workflow w\n"
           "  consumer c subscribe t fifo runs 5m30s\n"
           "publish t at 1m\n",
           NULL, &r);
    const int64_t starts[] = {S(60), S(360)};
    expect_starts(&r, starts, 2);
    assert_int_equal(count_kind(&r, "start", "resume"), 1);
    assert_int_equal(nth_at(&r, "end", "committed", 0), S(390));
    assert_int_equal(nth_at(&r, "end", "committed", 1), S(393));
    expect_metric(&r, "duplicates", 1);
    expect_metric(&r, "double_effects", 0);
    expect_metric(&r, "overlaps", (double)S(30));
    expect_metric(&r, "latency.max", (double)S(330));
    sim_result_free(&r);
}

/* --- crashes ---------------------------------------------------------------------- */

static const char *worker_crash = "horizon 2h\n"
                                  "drain 1h\n"
                                  "workflow w\n"
                                  "  consumer c subscribe t fifo runs 1m\n"
                                  "publish t at 5s\n"
                                  "crash worker 0 at 6s for 1s\n";

/* Worker 0 claims the event at 5 s (available_at 305 s) and crashes at 6 s;
 * it is back at 7 s but the row is RUNNING until 305 s, when the server's
 * timer finds it and worker 0 runs it again: start 305 s, commit 365 s.
 * recovery_time = 305 - 7 = 298 s; latency 360 s. */
static void test_worker_crash_vistimeout(void **state)
{
    (void)state;
    struct sim_result r;
    vt_run(worker_crash, NULL, &r);
    const int64_t starts[] = {S(5), S(305)};
    expect_starts(&r, starts, 2);
    assert_int_equal(nth_at(&r, "start", "reason=recover", 0), S(305));
    expect_metric(&r, "runs_crashed", 1);
    expect_metric(&r, "recovery_time", (double)S(298));
    expect_metric(&r, "latency.max", (double)S(360));
    expect_metric(&r, "lost", 0);
    expect_metric(&r, "recovery_ok", 1);
    sim_result_free(&r);
}

/* design=lease: locked_until = 35 s; the crash at 6 s comes before the
 * first heartbeat (10 s).  The watchdog tick at 35 s finds the orphan: a
 * failed attempt, retry after backoff(1) = 1 s; the tick at 36 s makes the
 * row PENDING and worker 0 (the lowest idle) claims it: start 36 s,
 * recovery 29 s, latency 36 + 60 - 5 = 91 s.  As built (timeout 60 s,
 * heartbeat extension): available_at 65 s, no heartbeat before the crash:
 * re-claimed at 65 s, recovery 58 s. */
static void test_worker_crash_lease_and_asbuilt(void **state)
{
    (void)state;
    struct sim_result r;
    const char *const lease[] = {"design=lease", NULL};
    vt_run(worker_crash, lease, &r);
    const int64_t starts[] = {S(5), S(36)};
    expect_starts(&r, starts, 2);
    assert_int_equal(nth_at(&r, "start", "reason=retry", 0), S(36));
    expect_metric(&r, "recovery_time", (double)S(29));
    expect_metric(&r, "latency.max", (double)S(91));
    sim_result_free(&r);

    const char *const built[] = {"visibility_timeout=60s", "heartbeat_extend=on", NULL};
    vt_run(worker_crash, built, &r);
    const int64_t starts2[] = {S(5), S(65)};
    expect_starts(&r, starts2, 2);
    expect_metric(&r, "recovery_time", (double)S(58));
    sim_result_free(&r);
}

/* A crash after the mutation: the run (5 s .. 65 s) mutates at 59 s and the
 * worker dies at 60 s.  The re-claim at 305 s resumes at emitting (6 s):
 * commit at 311 s, no double effect. */
static void test_worker_crash_after_mutation(void **state)
{
    (void)state;
    struct sim_result r;
    vt_run("horizon 2h\n"
           "drain 1h\n"
           "workflow w\n"
           "  consumer c subscribe t fifo runs 1m\n"
           "publish t at 5s\n"
           "crash worker 0 at 60s for 1s\n",
           NULL, &r);
    const int64_t starts[] = {S(5), S(305)};
    expect_starts(&r, starts, 2);
    assert_int_equal(count_kind(&r, "start", "resume"), 1);
    assert_int_equal(nth_at(&r, "end", "committed", 0), S(311));
    expect_metric(&r, "double_effects", 0);
    expect_metric(&r, "duplicates", 0);
    expect_metric(&r, "latency.max", (double)S(306));
    sim_result_free(&r);
}

/* A host crash: everything volatile is gone, the row is not.  Claimed at
 * 10 s (available_at 310 s), the host is down from 20 s to 30 s; at the
 * restart the row is still RUNNING, and the server's timer re-claims it at
 * 310 s: recovery 280 s. */
static void test_host_crash_rows_survive(void **state)
{
    (void)state;
    struct sim_result r;
    vt_run("horizon 2h\n"
           "drain 1h\n"
           "workflow w\n"
           "  consumer c subscribe t fifo runs 2m\n"
           "publish t at 10s\n"
           "crash host at 20s for 10s\n",
           NULL, &r);
    const int64_t starts[] = {S(10), S(310)};
    expect_starts(&r, starts, 2);
    expect_metric(&r, "recovery_time", (double)S(280));
    expect_metric(&r, "lost", 0);
    sim_result_free(&r);
}

/* A server crash from 100 s to 200 s: the event at 150 s becomes a row but
 * its notification is lost and nobody can claim; at 200 s the workers
 * reconnect and poll: start 200 s, commit 201 s, latency 51 s. */
static void test_server_crash(void **state)
{
    (void)state;
    struct sim_result r;
    vt_run("horizon 10m\n"
           "drain 10m\n"
           "workflow w\n"
           "  consumer c subscribe t fifo runs 1s\n"
           "publish t at 150s\n"
           "crash server at 100s for 100s\n",
           NULL, &r);
    const int64_t starts[] = {S(200)};
    expect_starts(&r, starts, 1);
    expect_metric(&r, "latency.max", (double)S(51));
    expect_metric(&r, "recovery_time", 0);
    expect_metric(&r, "lost", 0);
    sim_result_free(&r);
}

/* --- notification and polling -------------------------------------------------- */

static const char *one_event = "horizon 10m\n"
                               "drain 10m\n"
                               "workflow w\n"
                               "  consumer c subscribe t fifo runs 1s\n"
                               "publish t at 90s\n";

/* notify=on: claimed at 90 s, latency 1 s; the only wake-ups are the 239
 * coordinator ticks in 20 min.  notify=broken, one worker polling every
 * 60 s from its start: polls at 60 s (nothing) and 120 s (claims), then at
 * once after the run (121 s, nothing) and every 60 s after it: 181 ...
 * 1141 s (17); the one due at 1201 s is past the end.  Latency 31 s,
 * wake-ups 239 + 19.  Four workers: worker 0's timer fires first at 120 s
 * and takes the event; each worker polls 19 times: 239 + 76. */
static void test_notify_vs_polling(void **state)
{
    (void)state;
    struct sim_result r;
    vt_run(one_event, NULL, &r);
    expect_metric(&r, "latency.max", (double)S(1));
    expect_metric(&r, "wakeups", 239);
    sim_result_free(&r);

    const char *const one[] = {"notify=broken", "workers=1", NULL};
    vt_run(one_event, one, &r);
    const int64_t starts[] = {S(120)};
    expect_starts(&r, starts, 1);
    expect_metric(&r, "latency.max", (double)S(31));
    expect_metric(&r, "wakeups", 239 + 19);
    sim_result_free(&r);

    const char *const four[] = {"notify=off", NULL};
    vt_run(one_event, four, &r);
    expect_starts(&r, starts, 1);
    expect_metric(&r, "wakeups", 239 + 76);
    sim_result_free(&r);
}

/* --- sleeping, retries, failing for good --------------------------------------- */

static const char *sleep_retry = "horizon 1h\n"
                                 "drain 1h\n"
                                 "workflow w\n"
                                 "  consumer later subscribe t window 10m runs 5s\n"
                                 "  consumer flaky subscribe u fifo runs 2s\n"
                                 "publish t at 1m\n"
                                 "publish u at 1m\n"
                                 "fail w.flaky transient 100%\n";

/* later: claimed at 60 s, its script takes nothing and asks for 660 s: an
 * empty run, the row sleeps until 660 s, the server's timer finds it then:
 * start 660 s, commit 665 s, latency 605 s.
 * flaky: every run fails at the end of mutating (1.8 s).  Retry n waits
 * 2^(n-1) s: runs at 60, 62.8, 66.6, 72.4, 82.2 s; the fifth failure
 * (84 s) reaches max_attempts = 5 and the job fails; its event stays
 * unprocessed and is counted (stranded, lost), not dropped: its latency is
 * censored, so the scenario's latency.max is infinite and later's is 605 s. */
static void test_sleep_and_retry(void **state)
{
    (void)state;
    struct sim_result r;
    vt_run(sleep_retry, NULL, &r);
    const int64_t starts[] = {S(60), S(60), S(62.8), S(66.6), S(72.4), S(82.2), S(660)};
    expect_starts(&r, starts, 7);
    assert_int_equal(nth_at(&r, "start", "reason=wake", 0), S(660));
    assert_int_equal(count_kind(&r, "start", "reason=retry"), 4);
    assert_int_equal(nth_at(&r, "end", "failed", 4), S(84));
    expect_metric(&r, "runs_failed", 5);
    expect_metric(&r, "runs_empty", 1);
    expect_metric(&r, "processed", 1);
    expect_metric(&r, "stranded", 1);
    expect_metric(&r, "dropped", 0);
    expect_metric(&r, "latency.max", INFINITY);
    assert_true(simtest_metric(&r, 0, "latency.max") == (double)S(605));
    sim_result_free(&r);
}

/* design=lease: retries and wakes go through the 1 s watchdog, so each
 * retry starts at the first whole second at or after its retry_at: 63, 67,
 * 73, 83 s; the wake at 660 s is a tick. */
static void test_sleep_and_retry_lease(void **state)
{
    (void)state;
    const char *const kv[] = {"design=lease", NULL};
    struct sim_result r;
    vt_run(sleep_retry, kv, &r);
    const int64_t starts[] = {S(60), S(60), S(63), S(67), S(73), S(83), S(660)};
    expect_starts(&r, starts, 7);
    expect_metric(&r, "runs_failed", 5);
    assert_true(simtest_metric(&r, 0, "latency.max") == (double)S(605));
    sim_result_free(&r);
}

/* attempts=claims: the sleep's claim counts.  A window job that fails at
 * every run: claim 1 at 60 s sleeps; claim 2 at 660 s fails (attempts 2:
 * retry after 2 s at 663.8 s), claim 3 (attempts 3, 4 s: 669.6 s), claim 4
 * (attempts 4, 8 s: 679.4 s), claim 5 fails with attempts 5: the job
 * fails after 4 failed runs instead of 5.  A failure of class internal
 * fails the job at once. */
static void test_attempts_claims_and_internal(void **state)
{
    (void)state;
    const char *text = "horizon 1h\n"
                       "drain 1h\n"
                       "workflow w\n"
                       "  consumer sleepy subscribe v window 10m runs 2s\n"
                       "publish v at 1m\n"
                       "fail w.sleepy transient 100%\n";
    const char *const kv[] = {"attempts=claims", NULL};
    struct sim_result r;
    vt_run(text, kv, &r);
    const int64_t starts[] = {S(60), S(660), S(663.8), S(669.6), S(679.4)};
    expect_starts(&r, starts, 5);
    expect_metric(&r, "runs_failed", 4);
    sim_result_free(&r);

    vt_run("horizon 1h\n"
           "workflow w\n"
           "  consumer c subscribe t fifo runs 2s\n"
           "publish t at 1m\n"
           "fail w.c internal 100%\n",
           NULL, &r);
    expect_metric(&r, "runs", 1);
    expect_metric(&r, "runs_failed", 1);
    expect_metric(&r, "lost", 1);
    sim_result_free(&r);
}

/* --- producers --------------------------------------------------------------------- */

/* Dues every 61 s: 0, 61, ..., 549 s; the coordinator ticks at multiples of
 * 5 s, so the fires start 0, 4, 3, 2, 1, 0, 4, 3, 2, 1 s late. */
static void test_producer_lateness(void **state)
{
    (void)state;
    struct sim_result r;
    vt_run("horizon 10m\n"
           "workflow w\n"
           "  producer p every 61s runs 2s publish t\n"
           "  consumer c subscribe t fifo runs 1s\n",
           NULL, &r);
    const int64_t want[] = {S(0), S(65), S(125), S(185), S(245), S(305), S(370), S(430), S(490), S(550)};
    for (int i = 0; i < 10; i++)
        assert_int_equal(nth_at(&r, "start", "reason=schedule", i), want[i]);
    expect_metric(&r, "dues", 10);
    expect_metric(&r, "missed", 0);
    expect_metric(&r, "lateness.max", (double)S(4));
    expect_metric(&r, "lateness.mean", (double)S(2));
    expect_metric(&r, "processed", 10);
    sim_result_free(&r);
}

static const char *catchup = "horizon 1h\n"
                             "drain 1h\n"
                             "workflow w\n"
                             "  producer p every 1m runs 1s publish t\n"
                             "  consumer c subscribe t fifo runs 1s\n"
                             "crash server at 10m30s for 20m\n";

/* The server is down from 10m30s to 30m30s: dues 11m .. 30m (20) are not
 * fired.  max_catchup = 0 (no limit): all 20 become jobs at the restart and
 * the four workers take them in row order, four a second (the consumer's
 * jobs, created later, queue behind them): 11m..14m start at 30m30s, 27m..30m
 * at 30m34s; 60 runs of p.
 * max_catchup = 5: 20 > 5, so the tick at 30m30s skips to the 16th missed
 * due (26m) and moves the cursor to 30m30s; then one fire per tick: 26m at
 * 30m35s, 27m at 30m40s, ... 30m at 30m55s, and 31m is due on time at
 * 31m00s: 11 + 5 + 29 = 45 runs.  max_catchup = 50: 20 <= 50, one per
 * tick from 30m30s (11m) to 32m05s (30m), then 31m at 32m10s, 32m at
 * 32m15s: 60 runs. */
static void test_catchup(void **state)
{
    (void)state;
    struct sim_result r;
    vt_run(catchup, NULL, &r);
    assert_int_equal(count_kind(&r, "start", "reason=schedule"), 60);
    assert_int_equal(nth_at(&r, "start", "due=00:11:00", 0), S(30 * 60 + 30));
    assert_int_equal(nth_at(&r, "start", "due=00:14:00", 0), S(30 * 60 + 30));
    assert_int_equal(nth_at(&r, "start", "due=00:15:00", 0), S(30 * 60 + 31));
    assert_int_equal(nth_at(&r, "start", "due=00:30:00", 0), S(30 * 60 + 34));
    sim_result_free(&r);

    const char *const five[] = {"max_catchup=5", NULL};
    vt_run(catchup, five, &r);
    assert_int_equal(count_kind(&r, "start", "reason=schedule"), 45);
    assert_int_equal(count_kind(&r, "start", "due=00:25:00"), 0);
    assert_int_equal(nth_at(&r, "start", "due=00:26:00", 0), S(30 * 60 + 35));
    assert_int_equal(nth_at(&r, "start", "due=00:30:00", 0), S(30 * 60 + 55));
    assert_int_equal(nth_at(&r, "start", "due=00:31:00", 0), S(31 * 60));
    sim_result_free(&r);

    const char *const fifty[] = {"max_catchup=50", NULL};
    vt_run(catchup, fifty, &r);
    assert_int_equal(count_kind(&r, "start", "reason=schedule"), 60);
    assert_int_equal(nth_at(&r, "start", "due=00:11:00", 0), S(30 * 60 + 30));
    assert_int_equal(nth_at(&r, "start", "due=00:30:00", 0), S(32 * 60 + 5));
    assert_int_equal(nth_at(&r, "start", "due=00:31:00", 0), S(32 * 60 + 10));
    assert_int_equal(nth_at(&r, "start", "due=00:33:00", 0), S(33 * 60));
    sim_result_free(&r);
}

/* cron_tz=utc: "0 9 * * *" meant in Berlin (UTC+1 in January) fires at
 * 09:00 UTC, one hour late by the schedule's own clock. */
static void test_cron_utc(void **state)
{
    (void)state;
    const char *text = "start 2025-01-06T00:00:00Z\n"
                       "timezone Europe/Berlin\n"
                       "horizon 2d\n"
                       "workflow w\n"
                       "  producer p cron \"0 9 * * *\" runs 1s publish t\n"
                       "  consumer c subscribe t fifo runs 1s\n";
    struct sim_result r;
    vt_run(text, NULL, &r);
    expect_metric(&r, "lateness.max", 0);
    sim_result_free(&r);
    const char *const kv[] = {"cron_tz=utc", NULL};
    vt_run(text, kv, &r);
    expect_metric(&r, "lateness.max", (double)S(3600));
    expect_metric(&r, "missed", 0);
    sim_result_free(&r);
}

/* Correlation: the job of the second event of a pair takes both; the first
 * one's job takes nothing.  Orders at 0 and 10 s, payments at 5 and 15 s:
 * pairs committed at 6 s and 16 s, no duplicate. */
static void test_correlate(void **state)
{
    (void)state;
    struct sim_result r;
    vt_run("horizon 1m\n"
           "workflow w\n"
           "  consumer m subscribe o,p correlate o p runs 1s\n"
           "publish o at 0\n"
           "publish o at 10s\n"
           "publish p at 5s\n"
           "publish p at 15s\n",
           NULL, &r);
    expect_metric(&r, "processed", 4);
    expect_metric(&r, "duplicates", 0);
    expect_metric(&r, "runs_empty", 2);
    expect_metric(&r, "latency.max", (double)S(6));
    sim_result_free(&r);
}

static void test_params(void **state)
{
    (void)state;
    const struct policy_ops *ops = policy_find("vistimeout");
    assert_non_null(ops);
    struct params ps;
    params_init(&ps, ops);
    char msg[256];
    assert_int_equal(params_get(&ps, "visibility_timeout"), S(300));
    assert_int_equal(params_get(&ps, "workers"), 4);
    assert_int_not_equal(params_set(&ps, "workers", "0", msg, sizeof msg), 0);
    assert_int_not_equal(params_set(&ps, "notify", "maybe", msg, sizeof msg), 0);
    assert_int_not_equal(params_set(&ps, "visibility_timeout", "0", msg, sizeof msg), 0);
    assert_int_equal(params_set(&ps, "design", "lease", msg, sizeof msg), 0);
    for (int i = 0; i < ops->nparams; i++)
        assert_true(ops->params[i].source && ops->params[i].source[0]);
    /* The registry order puts it after wakeat. */
    int at = -1, wakeat = -1;
    for (int i = 0; i < policy_registry_count; i++) {
        if (policy_registry[i] == ops)
            at = i;
        if (strcmp(policy_registry[i]->name, "wakeat") == 0)
            wakeat = i;
    }
    assert_true(at == 3 && wakeat == 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graceful_stop_claims_nothing),
        cmocka_unit_test(test_overrun_duplicates),
        cmocka_unit_test(test_overrun_heartbeat),
        cmocka_unit_test(test_overrun_lease),
        cmocka_unit_test(test_reclaim_uses_cached_step),
        cmocka_unit_test(test_worker_crash_vistimeout),
        cmocka_unit_test(test_worker_crash_lease_and_asbuilt),
        cmocka_unit_test(test_worker_crash_after_mutation),
        cmocka_unit_test(test_host_crash_rows_survive),
        cmocka_unit_test(test_server_crash),
        cmocka_unit_test(test_notify_vs_polling),
        cmocka_unit_test(test_sleep_and_retry),
        cmocka_unit_test(test_sleep_and_retry_lease),
        cmocka_unit_test(test_attempts_claims_and_internal),
        cmocka_unit_test(test_producer_lateness),
        cmocka_unit_test(test_catchup),
        cmocka_unit_test(test_cron_utc),
        cmocka_unit_test(test_correlate),
        cmocka_unit_test(test_params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
