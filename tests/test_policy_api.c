/* test_policy_api.c: what sim/policy_api.h gives a policy, asked by a probe
 * policy whose hooks record what they saw: the topology, schedules read
 * with a policy's options, the calendar, the two workload properties;
 * sim_alarm (idempotent, SIM_NEVER, clamped to now, gone at a crash and a
 * graceful stop, one wake-up per firing); the on_stop hook (once per
 * graceful stop, never at a crash); which run records and items are kept
 * (RUN RECORDS AND ITEMS). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cal.h"
#include "sim/sim.h"
#include "sim/util.h"
#include "tests/expect.h"
#include "tests/simtest.h"

/* --- the probe policy ------------------------------------------------------
 * Each test sets the knobs below; the hooks record into `log`. */

struct policy {
    struct sim *sim;
    int alarm;
};

static void (*on_start_fn)(struct policy *p, int restart, int64_t now_us);
static void (*on_timer_fn)(struct policy *p, uint32_t tag, int64_t now_us);
static void (*on_end_fn)(struct policy *p, const struct run_result *r, int64_t now_us);

#define LOG_MAX 64
static struct {
    int n;
    char what[LOG_MAX][64];
} plog;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
    assert_true(plog.n < LOG_MAX);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(plog.what[plog.n++], sizeof plog.what[0], fmt, ap);
    va_end(ap);
}

/* The log as one string, "a; b; c". */
static const char *log_str(void)
{
    static char buf[LOG_MAX * 66];
    buf[0] = 0;
    for (int i = 0; i < plog.n; i++) {
        if (i)
            strcat(buf, "; ");
        strcat(buf, plog.what[i]);
    }
    return buf;
}

/* Whole seconds as "1d2h3m4s" (the parts that are not 0), "0" for 0. */
static const char *t_str(int64_t t_us)
{
    static char buf[4][48];
    static int k;
    k = (k + 1) % 4;
    int64_t sec = t_us / US_PER_S;
    static const struct { int64_t n; char unit; } parts[] = {{86400, 'd'}, {3600, 'h'}, {60, 'm'}, {1, 's'}};
    char *b = buf[k];
    size_t used = 0;
    b[0] = 0;
    for (int i = 0; i < 4; i++) {
        if (sec / parts[i].n)
            used += (size_t)snprintf(b + used, sizeof buf[k] - used, "%" PRId64 "%c", sec / parts[i].n, parts[i].unit);
        sec %= parts[i].n;
    }
    return used ? b : "0";
}

static struct policy *probe_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct policy *p = xcalloc(1, sizeof *p);
    p->sim = sim;
    p->alarm = sim_alarm_new(sim, 1, 0);
    return p;
}
static void probe_destroy(struct policy *p)
{
    logf_("destroy %s", t_str(sim_now(p->sim)));
    free(p);
}
static void probe_start(struct policy *p, int restart, int64_t now_us)
{
    logf_("start%s %s", restart ? "(restart)" : "", t_str(now_us));
    if (on_start_fn)
        on_start_fn(p, restart, now_us);
}
static void probe_publish(struct policy *p, uint32_t h, uint64_t item, int64_t now_us) {}
static void probe_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now_us)
{
    logf_("timer %u %s", tag, t_str(now_us));
    if (on_timer_fn)
        on_timer_fn(p, tag, now_us);
}
static void probe_end(struct policy *p, const struct run_result *r, int64_t now_us)
{
    logf_("end %s", t_str(now_us));
    if (on_end_fn)
        on_end_fn(p, r, now_us);
}
static void probe_stop(struct policy *p, int64_t now_us)
{
    struct run_req rq = RUN_REQ_INIT;
    logf_("stop %s accepting=%d start=%" PRIu64, t_str(now_us), sim_accepting(p->sim), sim_run_start(p->sim, &rq));
}

static const struct policy_ops probe_ops = {
    .abi = POLICY_ABI, .name = "probe", .summary = "test", .seeds = "test", .promise = PROMISE_NONE,
    .create = probe_create, .destroy = probe_destroy, .start = probe_start, .on_publish = probe_publish,
    .on_timer = probe_timer, .on_run_end = probe_end, .on_stop = probe_stop,
};

/* Simulates text under the probe (ops: probe_ops unless given). */
static void run_probe(const char *text, const struct policy_ops *ops, struct sim_result *r)
{
    struct scenario *s = simtest_parse("probe.scn", text);
    struct params ps = {0};
    struct sim_opts o = {.seed = 1};
    plog.n = 0;
    sim_run(s, ops ? ops : &probe_ops, &ps, &o, r);
    assert_int_equal(r->status, SIM_OK);
    scenario_free(s);
}

static void reset_knobs(void)
{
    on_start_fn = NULL;
    on_timer_fn = NULL;
    on_end_fn = NULL;
}

/* --- what a policy may know ---------------------------------------------------
 * Topic order is first use: a has t (tick's output), u, w; b has inbox
 * (once's source), v. */
static const char *world_text = "start 2025-01-03T00:00:00Z\n" /* a Friday */
                                "timezone Europe/Berlin\n"
                                "horizon 200d\n"
                                "workflow a x 3\n"
                                "  producer tick every 10m runs 1s publish t\n"
                                "  consumer c subscribe t,u correlate t u runs 1s\n"
                                "  consumer e subscribe w fifo runs 1s\n"
                                "workflow b\n"
                                "  producer once at 1h runs 1s source inbox\n"
                                "  producer nightly cron \"0 9 13 * 5\" runs 1s publish v\n"
                                "  producer never_and cron \"0 0 30 2 5\" runs 1s publish v\n"
                                "  consumer d subscribe inbox,v fifo runs 1s\n"
                                "source inbox poisson 1/h keys 5\n"
                                "publish u rate 1/h keys 10\n"
                                "publish w rate 1/h keys 3\n"
                                "publish w at 1h\n"
                                "publish v at 2h\n";

static void world_checks(struct policy *p, int restart, int64_t now_us)
{
    struct sim *sim = p->sim;
    const struct sim_topo *t = sim_topo(sim);
    EXPECT_U64(t->ninst, 4, "instances");
    EXPECT_U64(t->nh, 13, "handlers");
    static const uint32_t first[] = {0, 3, 6, 9, 13};
    for (int i = 0; i <= 4; i++)
        EXPECT_U64(t->inst_first_h[i], first[i], "inst_first_h");
    EXPECT_U64(t->h_inst[4], 1, "h_inst of a[1].c");
    EXPECT_U64(t->h_inst[12], 3, "h_inst of b.d");
    EXPECT_I64(t->h_kind[3], H_PRODUCER, "a[1].tick");
    EXPECT_I64(t->h_kind[5], H_CONSUMER, "a[1].e");
    char nm[64];
    sim_handler_name(sim, 4, nm, sizeof nm);
    EXPECT_STR(nm, "a[1].c", "name");
    sim_handler_name(sim, 10, nm, sizeof nm);
    EXPECT_STR(nm, "b.nightly", "name");

    struct sim_sched_info si;
    sim_sched_info(sim, 0, &si);
    EXPECT_I64(si.kind, SIM_SCHED_EVERY, "tick kind");
    EXPECT_I64(si.every_us, 10 * US_PER_MIN, "tick period");
    sim_sched_info(sim, 9, &si);
    EXPECT_I64(si.kind, SIM_SCHED_AT, "once kind");
    sim_sched_info(sim, 10, &si);
    EXPECT_I64(si.kind, SIM_SCHED_CRON, "nightly kind");
    EXPECT_I64(si.cron_days_or, 1, "nightly: both day fields restricted");
    sim_sched_info(sim, 1, &si);
    EXPECT_I64(si.kind, SIM_SCHED_NONE, "a consumer has no schedule");

    /* "0 9 13 * 5" in Berlin: 09:00 on the 13th or on a Friday; the start is
     * Friday 3 January, 01:00 in Berlin, so 09:00 is at 8h. */
    EXPECT_I64(sim_sched_next(sim, 10, 0, 1), 8 * US_PER_H, "nightly, cron's OR");
    struct sim_sched_opts o = {0};
    EXPECT_I64(sim_sched_next_opt(sim, 10, 0, 1, &o), 8 * US_PER_H, "no options: the same");
    EXPECT_I64(sim_sched_next_opt(sim, 10, 0, 1, NULL), 8 * US_PER_H, "NULL options: the same");
    o.days_and = 1; /* Friday the 13th: 13 June 2025, 09:00 CEST = 07:00Z */
    EXPECT_I64(sim_sched_next_opt(sim, 10, 0, 1, &o), 3871 * US_PER_H, "nightly, AND");
    EXPECT_I64(sim_sched_next_opt(sim, 11, 0, 1, &o), SIM_NEVER, "30 February under AND never fires");
    /* With OR it fires on Fridays of February: 7 February, 00:00 in Berlin. */
    EXPECT_I64(sim_sched_next(sim, 11, 0, 1), 839 * US_PER_H, "Fridays of February, OR");
    const struct cal_zone *utc;
    char err[64];
    assert_int_equal(cal_zone_get("UTC", &utc, err, sizeof err), 0);
    o = (struct sim_sched_opts){.zone = utc};
    EXPECT_I64(sim_sched_next_opt(sim, 10, 0, 1, &o), 9 * US_PER_H, "nightly in UTC");
    EXPECT_I64(sim_sched_next_opt(sim, 0, 5 * US_PER_MIN, 0, &o), 10 * US_PER_MIN, "every: zone has no effect");
    EXPECT_I64(sim_sched_next_opt(sim, 1, 0, 1, &o), SIM_NEVER, "consumer");

    EXPECT_I64(sim_utc_s(sim, 90 * US_PER_S + 999999), 1735862400 + 90, "utc of 90.999999 s");
    EXPECT_STR(cal_zone_name(sim_zone(sim)), "Europe/Berlin", "zone");

    /* Keys: u by a keyed publish; w by a keyed and an unkeyed one; t by the
     * producer alone; inbox by a keyed source; v by an unkeyed publish. */
    EXPECT_I64(sim_topic_keyed(sim, 1, 1), 1, "a.u");
    EXPECT_I64(sim_topic_keyed(sim, 7, 1), 1, "a.u, another instance");
    EXPECT_I64(sim_topic_keyed(sim, 2, 2), 0, "a.w");
    EXPECT_I64(sim_topic_keyed(sim, 0, 0), 0, "a.t");
    EXPECT_I64(sim_topic_keyed(sim, 12, 0), 1, "b.inbox");
    EXPECT_I64(sim_topic_keyed(sim, 9, 1), 0, "b.v");
    uint16_t ca = 99, cb = 99;
    EXPECT_I64(sim_correlates(sim, 4, &ca, &cb), 1, "a[1].c correlates");
    EXPECT_I64(ca, 0, "corr a = t");
    EXPECT_I64(cb, 1, "corr b = u");
    ca = cb = 99;
    EXPECT_I64(sim_correlates(sim, 2, &ca, &cb), 0, "a.e does not");
    EXPECT_I64(sim_correlates(sim, 0, &ca, &cb), 0, "a producer does not");
    EXPECT_I64(ca, 99, "untouched");
    EXPECT_I64(sim_horizon(sim), 200 * US_PER_DAY, "horizon");
    logf_("checked");
}

static void test_world_accessors(void **state)
{
    (void)state;
    reset_knobs();
    on_start_fn = world_checks;
    struct sim_result r;
    run_probe(world_text, NULL, &r);
    EXPECT_STR(log_str(), "start 0; checked; destroy 201d", "log");
    sim_result_free(&r);
}

/* --- sim_alarm ------------------------------------------------------------------ */

static int timers_seen;

/* Sets the alarm for 10 s, queues a timer for 10 s after it, and sets the
 * alarm for 10 s again: the alarm keeps its place, before the timer. */
static void idem_start(struct policy *p, int restart, int64_t now_us)
{
    sim_alarm(p->sim, p->alarm, 10 * US_PER_S);
    sim_timer_at(p->sim, 10 * US_PER_S, 2, 0);
    for (int i = 0; i < 1000; i++)
        sim_alarm(p->sim, p->alarm, 10 * US_PER_S);
    EXPECT_I64(sim_alarm_at(p->sim, p->alarm), 10 * US_PER_S, "armed");
}

static void test_alarm_idempotent(void **state)
{
    (void)state;
    reset_knobs();
    on_start_fn = idem_start;
    struct sim_result r;
    run_probe("horizon 1m\ndrain 0\nworkflow w\n  consumer c subscribe t fifo runs 1s\n", NULL, &r);
    EXPECT_STR(log_str(), "start 0; timer 1 10s; timer 2 10s; destroy 1m", "log");
    /* Events: the alarm, the timer, the horizon and the end. */
    EXPECT_U64(r.events, 4, "events");
    EXPECT_I64(simtest_metric(&r, -1, "wakeups"), 2, "wake-ups: one per firing");
    sim_result_free(&r);
}

/* A new instant replaces the pending one; SIM_NEVER disarms; a past
 * instant is now; a fired alarm is disarmed before on_timer runs, so it
 * can be set again at the same instant. */
static void moves_start(struct policy *p, int restart, int64_t now_us)
{
    int a2 = sim_alarm_new(p->sim, 3, 0), a3 = sim_alarm_new(p->sim, 4, 0);
    EXPECT_I64(sim_alarm_at(p->sim, a2), SIM_NEVER, "a new alarm is disarmed");
    sim_alarm(p->sim, p->alarm, 10 * US_PER_S);
    sim_alarm(p->sim, p->alarm, 20 * US_PER_S); /* moved */
    sim_alarm(p->sim, a2, 15 * US_PER_S);
    sim_alarm(p->sim, a2, SIM_NEVER); /* disarmed */
    EXPECT_I64(sim_alarm_at(p->sim, a2), SIM_NEVER, "disarmed");
    sim_alarm(p->sim, a3, 30 * US_PER_S);
    timers_seen = 0;
}

static void moves_timer(struct policy *p, uint32_t tag, int64_t now_us)
{
    EXPECT_I64(sim_alarm_at(p->sim, p->alarm), SIM_NEVER, "disarmed (before on_timer when it is the one firing)");
    if (tag == 1 && timers_seen++ == 0)
        sim_alarm(p->sim, p->alarm, now_us); /* once more, now */
    if (tag == 4) {
        sim_alarm(p->sim, p->alarm, 5 * US_PER_S); /* the past: now */
        EXPECT_I64(sim_alarm_at(p->sim, p->alarm), now_us, "clamped to now");
    }
}

static void test_alarm_moves(void **state)
{
    (void)state;
    reset_knobs();
    on_start_fn = moves_start;
    on_timer_fn = moves_timer;
    struct sim_result r;
    run_probe("horizon 1m\ndrain 0\nworkflow w\n  consumer c subscribe t fifo runs 1s\n", NULL, &r);
    EXPECT_STR(log_str(), "start 0; timer 1 20s; timer 1 20s; timer 4 30s; timer 1 30s; destroy 1m", "log");
    EXPECT_I64(simtest_metric(&r, -1, "wakeups"), 4, "wake-ups");
    sim_result_free(&r);
}

/* Alarms vanish at a crash: the one set for 1 m by the first host never
 * fires; the restarted host's own alarm does. */
static void crash_start(struct policy *p, int restart, int64_t now_us)
{
    sim_alarm(p->sim, p->alarm, restart ? now_us + US_PER_MIN : US_PER_MIN);
}

static void test_alarm_gone_at_crash(void **state)
{
    (void)state;
    reset_knobs();
    on_start_fn = crash_start;
    struct sim_result r;
    run_probe("horizon 1h\ndrain 0\nworkflow w\n  consumer c subscribe t fifo runs 1s\ncrash host at 30s for 1m\n",
              NULL, &r);
    EXPECT_STR(log_str(), "start 0; destroy 30s; start(restart) 1m30s; timer 1 2m30s; destroy 1h", "log");
    EXPECT_I64(simtest_metric(&r, -1, "wakeups"), 1, "wake-ups");
    sim_result_free(&r);
}

/* Alarms vanish at a graceful stop, and setting one while stopping does
 * nothing: the producer's run (0 to 40 s) ends in the grace. */
static void stop_start(struct policy *p, int restart, int64_t now_us)
{
    if (restart)
        return;
    struct run_req rq = RUN_REQ_INIT;
    assert_true(sim_run_start(p->sim, &rq) != 0);
    sim_alarm(p->sim, p->alarm, 30 * US_PER_S);
}

static void stop_end(struct policy *p, const struct run_result *r, int64_t now_us)
{
    EXPECT_I64(sim_alarm_at(p->sim, p->alarm), SIM_NEVER, "gone at the stop");
    sim_alarm(p->sim, p->alarm, now_us + US_PER_S);
    EXPECT_I64(sim_alarm_at(p->sim, p->alarm), SIM_NEVER, "not set while stopping");
}

static const char *stop_text = "horizon 1h\ndrain 0\nworkflow w\n  producer p every 1h runs 40s publish t\n"
                               "  consumer c subscribe t fifo runs 1s\nstop host at 20s grace 1m for 10m\n";

static void test_alarm_gone_at_stop(void **state)
{
    (void)state;
    reset_knobs();
    on_start_fn = stop_start;
    on_end_fn = stop_end;
    struct sim_result r;
    run_probe(stop_text, NULL, &r);
    EXPECT_STR(log_str(), "start 0; stop 20s accepting=0 start=0; end 40s; destroy 40s; start(restart) 10m20s; destroy 1h",
               "log");
    EXPECT_I64(simtest_metric(&r, -1, "wakeups"), 0, "wake-ups");
    sim_result_free(&r);
}

/* --- on_stop ----------------------------------------------------------------------- */

/* Once per graceful stop, at its instant, before the run ends of its grace;
 * with nothing active the host goes down at once. */
static void test_on_stop_once_per_stop(void **state)
{
    (void)state;
    reset_knobs();
    on_start_fn = stop_start;
    struct sim_result r;
    run_probe("horizon 1h\ndrain 0\nworkflow w\n  producer p every 1h runs 40s publish t\n"
              "  consumer c subscribe t fifo runs 1s\n"
              "stop host at 20s grace 1m for 10m\nstop host at 30m for 5m\n",
              NULL, &r);
    EXPECT_STR(log_str(),
               "start 0; stop 20s accepting=0 start=0; end 40s; destroy 40s; start(restart) 10m20s; "
               "stop 30m accepting=0 start=0; destroy 30m; start(restart) 35m; destroy 1h",
               "log");
    EXPECT_I64(simtest_metric(&r, -1, "crashes"), 2, "stops are recorded as crashes");
    sim_result_free(&r);
}

/* A crash is no stop: on_stop is never called, and the active run is
 * crashed without on_run_end. */
static void test_on_stop_not_at_crash(void **state)
{
    (void)state;
    reset_knobs();
    on_start_fn = stop_start;
    struct sim_result r;
    run_probe("horizon 1h\ndrain 0\nworkflow w\n  producer p every 1h runs 40s publish t\n"
              "  consumer c subscribe t fifo runs 1s\ncrash host at 20s for 10m\n",
              NULL, &r);
    EXPECT_STR(log_str(), "start 0; destroy 20s; start(restart) 10m20s; destroy 1h", "log");
    EXPECT_I64(simtest_metric(&r, -1, "runs_crashed"), 1, "crashed run");
    sim_result_free(&r);
}

/* on_stop is optional: without it the stop goes the same way. */
static void test_on_stop_optional(void **state)
{
    (void)state;
    reset_knobs();
    on_start_fn = stop_start;
    struct policy_ops ops = probe_ops;
    ops.on_stop = NULL;
    struct sim_result r;
    run_probe(stop_text, &ops, &r);
    EXPECT_STR(log_str(), "start 0; end 40s; destroy 40s; start(restart) 10m20s; destroy 1h", "log");
    sim_result_free(&r);
}

/* --- run records and items: what is kept ------------------------------------
 * Items 0 (c) and 1 (d) are published at 10s, 2 and 3 at 30s.  At 20s runs
 * 1 (c, takes item 0) and 2 (d, takes item 1) start, and the policy holds
 * run 2; both commit at 21s.  Run 1 is kept as c's latest, naming item 0,
 * but item 0 goes when run 1's on_run_end returns (a committed run kept
 * only as the latest holds no item); item 1 stays while run 2 is held.  At
 * 40s runs 3 (c) and 4 (d) start: run 1 goes; run 2 stays while held. */
static const char *kept_text = "horizon 1h\nworkflow w\n  consumer c subscribe t fifo runs 1s\n"
                               "  consumer d subscribe t fifo runs 1s\npublish t at 10s\npublish t at 30s\n";

static void kept_start(struct policy *p, int restart, int64_t now_us)
{
    sim_timer_at(p->sim, 20 * US_PER_S, 1, 0);
    sim_timer_at(p->sim, 40 * US_PER_S, 2, 0);
    /* Wakes of a tag said to name a handler, whose arg names none: the
     * engine's prefetch of what they wake must check it. */
    sim_declare_handler_tag(p->sim, 5);
    sim_timer_at(p->sim, 30 * US_PER_S, 5, UINT64_C(1) << 40);
    sim_alarm(p->sim, sim_alarm_new(p->sim, 5, (uint64_t)UINT32_MAX - 1), 31 * US_PER_S);
}

static void kept_timer(struct policy *p, uint32_t tag, int64_t now_us)
{
    struct sim *sim = p->sim;
    if (tag == 5) {
        if (now_us != 30 * US_PER_S)
            return;
        EXPECT_I64(sim_run_kept(sim, 1), 1, "run 1, c's latest");
        uint32_t n;
        const uint64_t *t = sim_run_taken(sim, 1, &n);
        EXPECT_U64(n, 1, "run 1 still names its item");
        EXPECT_U64(t[0], 0, "item 0");
        EXPECT_I64(sim_item(sim, 0)->state, ITEM_GONE, "a committed latest run holds no item");
        EXPECT_I64(sim_item(sim, 1)->state, ITEM_DONE, "a held run's item stays");
        logf_("latest");
        return;
    }
    struct run_req rq = RUN_REQ_INIT;
    rq.handler = 0;
    uint64_t rc = sim_run_start(sim, &rq);
    rq.handler = 1;
    uint64_t rd = sim_run_start(sim, &rq);
    if (tag == 1) {
        EXPECT_U64(rc, 1, "run of c");
        EXPECT_U64(rd, 2, "run of d");
        sim_run_hold(sim, rd);
        EXPECT_I64(sim_item(sim, 0)->state, ITEM_PENDING, "reserved, not yet committed");
        return;
    }
    /* A hint, in range or not, changes nothing. */
    sim_prefetch_handler(sim, 0);
    sim_prefetch_handler(sim, UINT32_MAX);
    /* Run 1 was c's latest; run 3 took its place. */
    EXPECT_I64(sim_run_kept(sim, 1), 0, "run 1 after run 3 started");
    EXPECT_I64(sim_item(sim, 0)->state, ITEM_GONE, "item 0 with it");
    EXPECT_U64(sim_item(sim, 0)->consumer, UINT32_MAX, "a gone item has no consumer");
    EXPECT_I64(sim_run_kept(sim, 2), 1, "run 2 is held");
    struct sim_run_info ri;
    sim_run_get(sim, 2, &ri);
    EXPECT_I64(ri.outcome, OUT_COMMITTED, "run 2's record");
    uint32_t n;
    const uint64_t *t = sim_run_taken(sim, 2, &n);
    EXPECT_U64(n, 1, "its reservation");
    EXPECT_U64(t[0], 1, "item 1");
    EXPECT_I64(sim_item(sim, 1)->state, ITEM_DONE, "held by run 2's reservation");
    sim_run_release(sim, 2);
    EXPECT_I64(sim_run_kept(sim, 2), 0, "released");
    EXPECT_I64(sim_item(sim, 1)->state, ITEM_GONE, "item 1 with it");
    EXPECT_I64(sim_run_kept(sim, 4), 1, "an active run");
    logf_("checked");
}

static void kept_end(struct policy *p, const struct run_result *r, int64_t now_us)
{
    /* In its own on_run_end a run is readable, latest of its handler or not. */
    EXPECT_I64(sim_run_kept(p->sim, r->run), 1, "in on_run_end");
    struct sim_run_info ri;
    sim_run_get(p->sim, r->run, &ri);
    EXPECT_I64(ri.active, 0, "ended");
    uint32_t n;
    const uint64_t *t = sim_run_taken(p->sim, r->run, &n);
    for (uint32_t i = 0; i < n; i++)
        EXPECT_I64(sim_item(p->sim, t[i])->state, ITEM_DONE, "a committed run's items, in its on_run_end");
}

/* Runs the kept scenario (with `extra` lines after it); prefetched says
 * whether the engine prefetched. */
static void kept_run(const char *extra, int prefetched)
{
    reset_knobs();
    on_start_fn = kept_start;
    on_timer_fn = kept_timer;
    on_end_fn = kept_end;
    char text[512];
    snprintf(text, sizeof text, "%s%s", kept_text, extra);
    struct sim_result r;
    run_probe(text, NULL, &r);
    EXPECT_I64(r.prefetched, prefetched, "prefetched");
    EXPECT_STR(log_str(),
               "start 0; timer 1 20s; end 21s; end 21s; timer 5 30s; latest; timer 5 31s; timer 2 40s; checked; end 41s; "
               "end 41s; destroy 1d1h",
               "log");
    EXPECT_I64(simtest_metric(&r, -1, "processed"), 4, "processed");
    sim_result_free(&r);
}

static void test_run_records_kept(void **state)
{
    (void)state;
    kept_run("", 0);
}

/* The same in a fleet whose live state is past the prefetch threshold
 * (100 000 idle instances besides): run 1 then waits in the engine's retire
 * queue instead of being freed at once, which no reader may tell. */
static void test_run_records_kept_fleet(void **state)
{
    (void)state;
    kept_run("workflow idle x 100000\n  consumer z subscribe u fifo runs 1s\n", 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_world_accessors),
        cmocka_unit_test(test_alarm_idempotent),
        cmocka_unit_test(test_alarm_moves),
        cmocka_unit_test(test_alarm_gone_at_crash),
        cmocka_unit_test(test_alarm_gone_at_stop),
        cmocka_unit_test(test_on_stop_once_per_stop),
        cmocka_unit_test(test_on_stop_not_at_crash),
        cmocka_unit_test(test_on_stop_optional),
        cmocka_unit_test(test_run_records_kept),
        cmocka_unit_test(test_run_records_kept_fleet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
