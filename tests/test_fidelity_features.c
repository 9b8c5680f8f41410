/* test_fidelity_features.c: the scenario features real systems' tests need.
 *
 * Parsing of the new lines (schedule changes, busy agents, deadlines,
 * deterministic and empty-run failures, handler triggers with a delay,
 * seconds in cron, as-written schedules); the nominal instants of changed
 * schedules, as the checker and as a policy at a given instant see them;
 * the engine's deterministic failures, empty-run failures and deadlines;
 * the policy API's sim_busy, sim_deadline, on_schedule_change and
 * on_trigger_ex, through a probe policy; the configuration grammars. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/grammar.h"
#include "sim/metric.h"
#include "sim/sim.h"
#include "sim/util.h"
#include "tests/expect.h"
#include "tests/simtest.h"

static double metric(const struct sim_result *r, const char *name)
{
    double v = 0;
    assert_int_equal(metric_get(&r->ck, -1, name, &v), 0);
    return v;
}

/* --- parsing --------------------------------------------------------------------- */

static void test_parse_lines(void **state)
{
    (void)state;
    struct scenario *s = simtest_parse("p.scn", "horizon 1d\n"
                                                "workflow w\n"
                                                "  producer p every 1h runs 1s publish t\n"
                                                "  producer q cron \"*/30 * * * * *\" seconds runs 1s publish t\n"
                                                "  producer r every \"5M\" as-written runs 1s publish t\n"
                                                "  consumer c subscribe t fifo runs 1s\n"
                                                "change w.p every 10m at 3h\n"
                                                "disable w.p at 1h\n"
                                                "enable w.p at 2h\n"
                                                "fail w.c transient first 2\n"
                                                "fail w.c logic attempts 3,5 in preparing empty\n"
                                                "trigger w.c at 5m delay 100ms\n"
                                                "trigger w at 6m\n"
                                                "busy w at 10m for 5m\n"
                                                "deadline w.c 5m per phase fail logic\n");
    const struct workflow_def *wf = &s->wfs[0];
    const struct schedule *p = &wf->handlers[0].sched;
    assert_int_equal(p->nchanges, 3);
    EXPECT_I64(p->changes[0].at_us, US_PER_H, "sorted: disable first");
    assert_int_equal(p->changes[0].op, SCHED_OP_DISABLE);
    assert_int_equal(p->changes[1].op, SCHED_OP_ENABLE);
    assert_int_equal(p->changes[2].op, SCHED_OP_SET);
    EXPECT_I64(p->changes[2].every_us, 10 * US_PER_MIN, "new period");
    const struct schedule *q = &wf->handlers[1].sched;
    assert_int_equal(q->kind, SCHED_CRON);
    assert_true(q->cron.seconds == (UINT64_C(1) | UINT64_C(1) << 30));
    const struct schedule *r = &wf->handlers[2].sched;
    assert_int_equal(r->kind, SCHED_NONE);
    assert_int_equal(r->raw_kind, SCHED_EVERY);
    assert_int_equal(r->as_written, 1);
    EXPECT_STR(r->value, "5M", "as written");
    assert_int_equal(s->has_as_written, 1);
    const struct handler_def *c = &wf->handlers[3];
    assert_int_equal(c->nfails, 2);
    assert_int_equal(c->fails[0].first_n, 2);
    assert_int_equal(c->fails[1].attempts, (1u << 2) | (1u << 4));
    assert_int_equal(c->fails[1].empty, 1);
    assert_int_equal(c->fails[1].phase, PHASE_PREPARING);
    EXPECT_I64(c->deadline_us, 5 * US_PER_MIN, "deadline");
    assert_int_equal(c->deadline_per_phase, 1);
    assert_int_equal(c->deadline_fail, FAIL_LOGIC);
    assert_int_equal(s->ntriggers, 2);
    assert_int_equal(s->triggers[0].handler, 3);
    EXPECT_I64(s->triggers[0].delay_us, 100 * US_PER_MS, "trigger delay");
    assert_int_equal(s->triggers[1].handler, -1);
    EXPECT_I64(s->triggers[1].delay_us, -1, "no delay");
    assert_int_equal(s->nbusy, 1);
    EXPECT_I64(s->busy[0].for_us, 5 * US_PER_MIN, "busy for");
    scenario_free(s);
}

/* --- changed schedules ------------------------------------------------------------ */

static int64_t dues[64];
static int ndues;
static int keep_due(void *ctx, int64_t t)
{
    (void)ctx;
    if (ndues < 64)
        dues[ndues] = t;
    ndues++;
    return 0;
}

static void test_changed_dues(void **state)
{
    (void)state;
    struct scenario *s = simtest_parse("c.scn", "horizon 4h\n"
                                                "workflow w\n"
                                                "  producer p every 30m runs 1s publish t\n"
                                                "disable w.p at 1h10m\n"
                                                "enable w.p at 2h10m\n"
                                                "change w.p every 20m at 3h05m\n");
    const struct schedule *sc = &s->wfs[0].handlers[0].sched;
    ndues = 0;
    schedule_dues(s, sc, 0, s->horizon_us, keep_due, NULL);
    /* 0 30m 1h | disabled | 2h30m 3h (the grid again) | 3h05m 3h25m 3h45m */
    static const int64_t want[] = {0, 30, 60, 150, 180, 185, 205, 225};
    assert_int_equal(ndues, 8);
    for (int i = 0; i < 8; i++)
        EXPECT_I64(dues[i], want[i] * US_PER_MIN, "due");
    /* As a policy sees it at 1h: the schedule as of then, no future. */
    EXPECT_I64(schedule_next_asof(s, sc, US_PER_H, 0, US_PER_H, NULL), 90 * US_PER_MIN, "at 1h");
    EXPECT_I64(schedule_next_asof(s, sc, 80 * US_PER_MIN, 0, 80 * US_PER_MIN, NULL), SIM_NEVER, "disabled");
    EXPECT_I64(schedule_next(s, sc, 80 * US_PER_MIN, 0), 150 * US_PER_MIN, "the checker sees the enable");
    struct sched_state st;
    schedule_state_at(sc, 200 * US_PER_MIN, &st);
    assert_int_equal(st.enabled, 1);
    EXPECT_I64(st.every_us, 20 * US_PER_MIN, "the new period");
    EXPECT_I64(st.changed_us, 185 * US_PER_MIN, "changed at");
    EXPECT_I64(schedule_period_at(s, sc, 185 * US_PER_MIN), 20 * US_PER_MIN, "period");
    scenario_free(s);
}

/* The last due <= t (sim_sched_prev) walks the same instants as the dues:
 * for every minute and every due of schedules changed between every and
 * cron, paused and resumed, it is the latest due the walk gives <= t; as
 * of an instant before a change it is the schedule as it was then. */
static void test_changed_prev(void **state)
{
    (void)state;
    struct scenario *s = simtest_parse("p.scn", "horizon 6h\n"
                                                "workflow w\n"
                                                "  producer p every 1h runs 1s publish t\n"
                                                "change w.p cron \"*/20 * * * *\" at 2h05m\n"
                                                "disable w.p at 3h10m\n"
                                                "enable w.p at 3h50m\n"
                                                "change w.p every 45m at 4h10m\n");
    const struct schedule *sc = &s->wfs[0].handlers[0].sched;
    ndues = 0;
    schedule_dues(s, sc, 0, s->horizon_us, keep_due, NULL);
    assert_true(ndues > 8 && ndues < 64);
    for (int64_t t = 0; t < s->horizon_us; t += US_PER_MIN / 2) {
        int64_t want = -1;
        for (int i = 0; i < ndues && dues[i] <= t; i++)
            want = dues[i];
        EXPECT_I64(schedule_prev_asof(s, sc, t, SIM_NEVER), want, "prev");
    }
    /* At 1h30m nothing has changed yet: the hourly grid, extended. */
    EXPECT_I64(schedule_prev_asof(s, sc, 150 * US_PER_MIN, 90 * US_PER_MIN), 120 * US_PER_MIN, "as of 1h30m");
    /* After the change to every 20 minutes (from 2h05m: 2h20m, 2h40m). */
    EXPECT_I64(schedule_prev_asof(s, sc, 150 * US_PER_MIN, 150 * US_PER_MIN), 140 * US_PER_MIN, "as of 2h30m");
    scenario_free(s);
}

/* --- failures and deadlines ----------------------------------------------------------- */

static void test_deterministic_failures(void **state)
{
    (void)state;
    struct sim_result r;
    /* oracle retries at once: attempts 1 and 3 fail, 2 and 4 commit. */
    simtest_run("horizon 1h\nworkflow w\n  producer p every 10m runs 1s publish t\n"
                "fail w.p transient attempts 1,3\n",
                "oracle", NULL, 0, 1, &r);
    EXPECT_I64((int64_t)metric(&r, "runs_failed"), 2, "attempts 1 and 3");
    EXPECT_I64((int64_t)metric(&r, "runs"), 8, "6 dues + 2 retries");
    sim_result_free(&r);
    /* first 3 on a consumer: only runs with work count and fail. */
    simtest_run("horizon 1h\nworkflow w\n  consumer c subscribe t fifo runs 1s\npublish t at 1m\n"
                "fail w.c transient first 3\n",
                "oracle", NULL, 0, 1, &r);
    EXPECT_I64((int64_t)metric(&r, "runs_failed"), 3, "first 3");
    EXPECT_I64((int64_t)metric(&r, "processed"), 1, "the fourth commits");
    sim_result_free(&r);
    /* empty: runs that took nothing fail too (poll runs every consumer). */
    simtest_run("horizon 10m\ndrain 0\nworkflow w\n  consumer c subscribe t fifo runs 1s\n"
                "fail w.c transient first 2 empty\n",
                "poll", NULL, 0, 1, &r);
    EXPECT_I64((int64_t)metric(&r, "runs_failed"), 2, "two empty runs failed");
    sim_result_free(&r);
}

static void test_deadlines(void **state)
{
    (void)state;
    struct sim_result r;
    /* A 10s run with a 3s deadline fails at 3s; the oracle retries at once. */
    simtest_run("horizon 10s\ndrain 0\nworkflow w\n  producer p at 0 runs 10s publish t\n"
                "deadline w.p 3s fail internal\n",
                "oracle", NULL, 1, 1, &r);
    int64_t first_end = -1;
    for (size_t i = 0; i < r.ntrace && first_end < 0; i++)
        if (simtest_is(&r.trace[i], "end"))
            first_end = r.trace[i].t_us;
    EXPECT_I64(first_end, 3 * US_PER_S, "cut at the deadline");
    EXPECT_I64((int64_t)metric(&r, "runs_failed"), 3, "three attempts in 10s");
    sim_result_free(&r);
    /* Per phase: prepare 1s, mutate 8s, emit 1s; 5s per phase cuts the mutate. */
    simtest_run("horizon 1m\ndrain 0\nworkflow w\n  producer p at 0 runs 10s publish t\n"
                "deadline w.p 5s per phase fail logic\n",
                "poll", "period=1h", 1, 1, &r);
    int64_t end = -1;
    for (size_t i = 0; i < r.ntrace && end < 0; i++)
        if (simtest_is(&r.trace[i], "end"))
            end = r.trace[i].t_us;
    EXPECT_I64(end, 6 * US_PER_S, "1s prepare + 5s of mutate");
    EXPECT_I64((int64_t)metric(&r, "double_effects"), 0, "no mutation");
    sim_result_free(&r);
}

/* --- the policy API, through a probe ------------------------------------------------------ */

struct policy {
    struct sim *sim;
};

#define LOG_MAX 32
static char plog[LOG_MAX][80];
static int nlog;
static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
    assert_true(nlog < LOG_MAX);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(plog[nlog++], sizeof plog[0], fmt, ap);
    va_end(ap);
}

static struct policy *probe_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct policy *p = xcalloc(1, sizeof *p);
    p->sim = sim;
    return p;
}
static void probe_destroy(struct policy *p) { free(p); }
static void probe_start(struct policy *p, int restart, int64_t now_us)
{
    for (int k = 0; k < 3; k++)
        sim_timer_at(p->sim, (k + 1) * 10 * US_PER_MIN, 1, 0);
}
static void probe_publish(struct policy *p, uint32_t h, uint64_t item, int64_t now_us) {}
static void probe_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now_us)
{
    logf_("%" PRId64 "m busy=%d", now_us / US_PER_MIN, sim_busy(p->sim, 0));
}
static void probe_end(struct policy *p, const struct run_result *r, int64_t now_us) {}
static void probe_change(struct policy *p, uint32_t h, int64_t now_us)
{
    struct sim_sched_info si;
    sim_sched_info(p->sim, h, &si);
    logf_("change %u at %" PRId64 "m disabled=%d next=%" PRId64 "m", h, now_us / US_PER_MIN, si.disabled,
          si.disabled ? -1 : sim_sched_next(p->sim, h, now_us, 1) / US_PER_MIN);
}
static void probe_trigger_ex(struct policy *p, const struct sim_trigger *t, int64_t now_us)
{
    logf_("trigger inst %u handler %d delay %" PRId64, t->inst, t->handler == UINT32_MAX ? -1 : (int)t->handler,
          t->delay_us);
}

static const struct policy_ops probe_ops = {
    .abi = POLICY_ABI, .name = "probe", .summary = "test", .seeds = "test", .promise = PROMISE_NONE,
    .create = probe_create, .destroy = probe_destroy, .start = probe_start, .on_publish = probe_publish,
    .on_timer = probe_timer, .on_run_end = probe_end, .on_schedule_change = probe_change,
    .on_trigger_ex = probe_trigger_ex,
};

static void test_api_hooks(void **state)
{
    (void)state;
    struct scenario *s = simtest_parse("h.scn", "horizon 1h\n"
                                                "workflow w\n"
                                                "  producer p every 30m runs 1s publish t\n"
                                                "  consumer c subscribe t fifo runs 1s\n"
                                                "disable w.p at 5m\n"
                                                "change w.p every 7m at 25m\n"
                                                "trigger w.c at 15m delay 250ms\n"
                                                "trigger w at 16m\n"
                                                "busy w at 20m for 5m\n"
                                                "deadline w.c 2m\n");
    struct params ps = {0};
    struct sim_opts o = {.seed = 1};
    struct sim_result r;
    nlog = 0;
    sim_run(s, &probe_ops, &ps, &o, &r);
    static const char *const want[] = {
        "change 0 at 5m disabled=1 next=-1m", "10m busy=0", "trigger inst 0 handler 1 delay 250000",
        "trigger inst 0 handler -1 delay -1", "20m busy=1", "change 0 at 25m disabled=1 next=-1m", "30m busy=0",
    };
    for (int i = 0; i < nlog; i++)
        print_message("%s\n", plog[i]);
    assert_int_equal(nlog, 7);
    for (int i = 0; i < 7; i++)
        EXPECT_STR(plog[i], want[i], "event");
    sim_result_free(&r);
    scenario_free(s);
}

/* --- grammars --------------------------------------------------------------------------- */

struct notes {
    int n;
    struct gr_note last;
};
static void keep_note(void *ctx, const struct gr_note *n)
{
    struct notes *ns = ctx;
    ns->n++;
    ns->last = *n;
}

/* Reads the one producer of text under grammar g: verdict notes, and the
 * resolved schedule in *out. */
static int read_one(const char *text, int g, struct schedule *out, struct notes *ns)
{
    struct scenario *s = simtest_parse("g.scn", text);
    struct scenario copy;
    memset(ns, 0, sizeof *ns);
    int rej = grammar_apply(s, g, &copy, keep_note, ns);
    *out = copy.wfs[0].handlers[0].sched;
    out->changes = NULL;
    grammar_release(&copy);
    scenario_free(s);
    return rej;
}

static void test_grammars(void **state)
{
    (void)state;
    struct schedule sc;
    struct notes ns;
    const char *iv = "horizon 1d\nworkflow w\n  producer p every 1h30m runs 1s publish t\n";
    assert_int_equal(read_one(iv, GRAMMAR_KEEPAI, &sc, &ns), 1);
    assert_non_null(strstr(ns.last.msg, "Invalid interval format"));
    assert_int_equal(read_one(iv, GRAMMAR_SIMRUN, &sc, &ns), 0);
    EXPECT_I64(sc.every_us, 90 * US_PER_MIN, "simrun reads 1h30m");
    assert_int_equal(read_one(iv, GRAMMAR_ALICE, &sc, &ns), 0);
    EXPECT_I64(sc.every_us, 90 * US_PER_MIN, "Open Alice reads 1h30m");
    assert_int_equal(read_one(iv, GRAMMAR_HERDCTL, &sc, &ns), 0);
    assert_int_equal(ns.last.verdict, GR_FALLBACK);
    assert_int_equal(sc.kind, SCHED_AT);
    const char *up = "horizon 1d\nworkflow w\n  producer p every \" 5 M \" as-written runs 1s publish t\n";
    assert_int_equal(read_one(up, GRAMMAR_HERDCTL, &sc, &ns), 0);
    EXPECT_I64(sc.every_us, 5 * US_PER_MIN, "herdctl: blanks and a capital unit");
    assert_int_equal(read_one(up, GRAMMAR_SIMRUN, &sc, &ns), 1);
    const char *bad = "horizon 1d\nworkflow w\n  producer p cron \"not a cron\" as-written runs 1s publish t\n";
    assert_int_equal(read_one(bad, GRAMMAR_KEEPAI, &sc, &ns), 0);
    assert_int_equal(sc.kind, SCHED_EVERY);
    EXPECT_I64(sc.every_us, 60 * US_PER_S, "keep.ai: 60 s");
    assert_int_equal(read_one(bad, GRAMMAR_KAGZI, &sc, &ns), 1);
    assert_int_equal(read_one(bad, GRAMMAR_KAGZI_BEFORE, &sc, &ns), 0);
    assert_int_equal(sc.kind, SCHED_NONE);
    const char *six = "horizon 1d\nworkflow w\n  producer p cron \"*/10 * * * * *\" as-written runs 1s publish t\n";
    assert_int_equal(read_one(six, GRAMMAR_KAGZI, &sc, &ns), 0);
    assert_int_equal(sc.kind, SCHED_CRON);
    assert_int_equal(read_one(six, GRAMMAR_KEEPAI, &sc, &ns), 0);
    assert_int_equal(sc.kind, SCHED_CRON);
    assert_int_equal(read_one(six, GRAMMAR_HERDCTL, &sc, &ns), 0);
    assert_int_equal(sc.kind, SCHED_NONE);
    const char *even = "horizon 1d\nworkflow w\n  producer p cron \"0 0 */2 * *\" runs 1s publish t\n";
    assert_int_equal(read_one(even, GRAMMAR_ALICE, &sc, &ns), 0);
    assert_true((sc.cron.mdays & 0x6) == 0x4); /* the 2nd, not the 1st */
    assert_int_equal(sc.cron.day_or, 0);

    char k[64], v[64], msg[400];
    assert_int_equal(grammar_param(GRAMMAR_ALICE, "heartbeat", "every", "1d", k, sizeof k, v, sizeof v, msg,
                                   sizeof msg), GR_FALLBACK);
    EXPECT_STR(v, "0", "no timer");
    assert_int_equal(grammar_param(GRAMMAR_ALICE, "heartbeat", "every", "1h30m", k, sizeof k, v, sizeof v, msg,
                                   sizeof msg), GR_OK);
    EXPECT_STR(v, "5400s", "1h30m");
    assert_int_equal(grammar_param(GRAMMAR_OPENCLAW, "heartbeat", "active_end", "24:30", k, sizeof k, v, sizeof v,
                                   msg, sizeof msg), GR_FALLBACK);
    EXPECT_STR(k, "active_hours", "always active");
    assert_int_equal(grammar_param(GRAMMAR_OPENCLAW, "heartbeat", "active_end", "24:00", k, sizeof k, v, sizeof v,
                                   msg, sizeof msg), GR_OK);
    assert_int_equal(grammar_param(GRAMMAR_KEEPAI, "wakeat", "tick", "1h30m", k, sizeof k, v, sizeof v, msg,
                                   sizeof msg), GR_OK);
    assert_int_equal(grammar_find("openclaw"), GRAMMAR_OPENCLAW);
    assert_int_equal(grammar_find("nosuch"), -1);
}

/* Every built-in variant resolves: its settings fit its policy, its grammar
 * exists. */
static void test_variants_resolve(void **state)
{
    (void)state;
    int n = 0;
    for (int i = 0; i < policy_registry_count; i++) {
        const struct policy_ops *ops = policy_registry[i];
        for (int k = 0; k < ops->nvariants; k++) {
            const struct policy_ops *found = NULL;
            assert_ptr_equal(policy_variant_find(ops->variants[k].name, &found), &ops->variants[k]);
            assert_ptr_equal(found, ops);
            assert_null(policy_find(ops->variants[k].name));
            struct params ps;
            char msg[256];
            params_init(&ps, ops);
            if (policy_variant_apply(&ops->variants[k], &ps, msg, sizeof msg) != 0)
                fail_msg("%s: %s", ops->variants[k].name, msg);
            n++;
        }
    }
    assert_int_equal(n, 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_lines),          cmocka_unit_test(test_changed_dues),
        cmocka_unit_test(test_changed_prev),
        cmocka_unit_test(test_deterministic_failures), cmocka_unit_test(test_deadlines),
        cmocka_unit_test(test_api_hooks),            cmocka_unit_test(test_grammars),
        cmocka_unit_test(test_variants_resolve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
