/* test_facts.c: the trace shows every fact the checker counts.
 *
 * The engine's fact layer (sim/sim_int.h) is the only code that tells the
 * checker, folds the fingerprint and writes the trace.  This test holds it
 * to that: every scenario in scenarios/ is simulated under every
 * registered policy and every variant the scenario defines (with the
 * scenario's `set` lines), with the trace kept, and the counts the trace
 * can show are compared with the checker's, per handler template where
 * the checker has them:
 *
 *   publish records              published
 *   drop records                 dropped (items dropped and never processed)
 *   start records                runs; those of a consumer with taken = 0: runs_empty
 *   end records, by outcome      runs_failed, runs_crashed, runs_cutoff
 *   deliver records              deliveries, dup_deliveries, undelivered
 *   crash, restart records       crashes; crashes that restarted
 *   timer records + wakeups'
 *   counts                       wakeups (of the whole scenario)
 *
 * and every run that starts ends.  Across all runs every kind of record
 * but the note (no policy writes notes) must appear at least once, so that
 * the comparison covers every fact the engine produces; a few small
 * scenarios written here cover the facts the bundled ones may not (a
 * publish to a volatile policy whose host is down, a graceful stop, a
 * trigger).
 *
 * Run time: about 2 s at -O2 for all of it (mail.scn under poll, some
 * 165 000 runs, is the largest trace). */
#include <glob.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/sim.h"
#include "sim/util.h"
#include "tests/simtest.h"

/* Per handler template: the counts as the trace shows them. */
struct counts {
    uint64_t published, dropped, runs, runs_empty, failed, crashed, cutoff;
    uint64_t deliveries, dup_deliveries, undelivered;
};

/* One result id's delivery attempts. */
struct attempt {
    uint64_t id;
    uint32_t tmpl;
    int ok;
    size_t seq;
};

static uint64_t seen[FACT_KIND_END];  /* records of each kind, over all runs */

static int attempt_cmp(const void *pa, const void *pb)
{
    const struct attempt *a = pa, *b = pb;
    if (a->id != b->id)
        return a->id < b->id ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* deliveries, dup_deliveries, undelivered from the deliver records: a
 * success of a result delivered before is a duplicate; a result with
 * attempts and no success is undelivered (in the template of its first
 * attempt). */
static void count_deliveries(struct attempt *at, size_t n, struct counts *c)
{
    qsort(at, n, sizeof *at, attempt_cmp);
    for (size_t i = 0; i < n;) {
        size_t e = i;
        uint64_t ok = 0;
        for (; e < n && at[e].id == at[i].id; e++) {
            if (!at[e].ok)
                continue;
            c[at[e].tmpl].deliveries++;
            if (ok++)
                c[at[e].tmpl].dup_deliveries++;
        }
        if (!ok)
            c[at[i].tmpl].undelivered++;
        i = e;
    }
}

/* The counts the trace shows: per template into c, the rest in *wakeups,
 * *crashes, *restarts; starts minus ends in *open. */
static void count_trace(const struct world *w, const struct sim_result *r, struct counts *c, uint64_t *wakeups,
                        uint64_t *crashes, uint64_t *restarts, int64_t *open)
{
    struct attempt *at = xcalloc(r->ntrace ? r->ntrace : 1, sizeof *at);
    size_t nat = 0;
    for (size_t i = 0; i < r->ntrace; i++) {
        const struct trace_rec *t = &r->trace[i];
        assert_true(t->kind < FACT_KIND_END && fact_kind_name((enum fact_kind)t->kind));
        seen[t->kind]++;
        struct counts *hc = t->handler >= 0 ? &c[w->h[t->handler].tmpl] : NULL;
        switch ((enum fact_kind)t->kind) {
        case FACT_PUBLISH: hc->published++; break;
        case FACT_DROP: hc->dropped++; break;
        case FACT_RUN_START:
            hc->runs++;
            hc->runs_empty += t->taken == 0 && world_hdef(w, (uint32_t)t->handler)->kind == H_CONSUMER;
            ++*open;
            break;
        case FACT_RUN_END:
            hc->failed += t->outcome == OUT_FAILED;
            hc->crashed += t->outcome == OUT_CRASHED;
            hc->cutoff += t->outcome == OUT_CUTOFF;
            --*open;
            break;
        case FACT_DELIVERY:
            at[nat] = (struct attempt){t->result, w->h[t->handler].tmpl, t->ok, i};
            nat++;
            break;
        case FACT_TIMER: ++*wakeups; break;
        case FACT_WAKEUPS: *wakeups += t->count; break;
        case FACT_CRASH: ++*crashes; break;
        case FACT_RESTART: ++*restarts; break;
        default: break;
        }
    }
    count_deliveries(at, nat, c);
    free(at);
}

#define SAME(what, trace, checker)                                                                        \
    do {                                                                                                  \
        uint64_t t_ = (trace), c_ = (checker);                                                            \
        if (t_ != c_)                                                                                     \
            fail_msg("%s under %s: %s: the trace shows %" PRIu64 ", the checker counts %" PRIu64, s->path, \
                     label, (what), t_, c_);                                                              \
    } while (0)

/* Simulates s under ops with ps and compares the trace with the checker. */
static void check_run(const struct scenario *s, const char *label, const struct policy_ops *ops,
                      const struct params *ps)
{
    struct sim_opts o = {.seed = s->seed, .keep_trace = 1};
    struct sim_result r;
    sim_run(s, ops, ps, &o, &r);
    assert_true(r.ntrace < 10000000); /* not cut at the kept trace's limit */
    struct world w;
    world_build(&w, s);
    struct counts *c = xcalloc(w.ntmpl ? w.ntmpl : 1, sizeof *c);
    uint64_t wakeups = 0, crashes = 0, restarts = 0, restarted = 0;
    int64_t open = 0;
    count_trace(&w, &r, c, &wakeups, &crashes, &restarts, &open);

    const struct checker_result *ck = &r.ck;
    SAME("runs that never ended", (uint64_t)open, 0);
    SAME("wakeups", wakeups, ck->total.wakeups);
    SAME("crashes", crashes, ck->ncrashes);
    for (uint32_t k = 0; k < ck->ncrashes; k++)
        restarted += ck->crashes[k].restart_us != SIM_NEVER;
    SAME("restarts", restarts, restarted);
    SAME("templates", w.ntmpl, ck->ntmpl);
    for (uint32_t t = 0; t < w.ntmpl; t++) {
        const struct metrics *m = &ck->per_tmpl[t];
        char what[200], name[132];
        world_tmpl_name(&w, t, name, sizeof name);
#define PER(field, metric)                                           \
    do {                                                             \
        snprintf(what, sizeof what, "%s of %s", #metric, name);      \
        SAME(what, c[t].field, m->metric);                           \
    } while (0)
        PER(published, published);
        PER(dropped, dropped);
        PER(runs, runs);
        PER(runs_empty, runs_empty);
        PER(failed, runs_failed);
        PER(crashed, runs_crashed);
        PER(cutoff, runs_cutoff);
        PER(deliveries, deliveries);
        PER(dup_deliveries, dup_deliveries);
        PER(undelivered, undelivered);
#undef PER
    }
    free(c);
    world_free(&w);
    sim_result_free(&r);
}

static void apply(struct params *ps, const struct param_kv *kv, uint16_t n)
{
    char msg[256];
    for (uint16_t i = 0; i < n; i++)
        if (params_set(ps, kv[i].key, kv[i].value, msg, sizeof msg) != 0)
            fail_msg("%s", msg);
}

/* The scenario under every registered policy, then under each of its
 * variants, with the parameters `simrun run` would give them (the
 * defaults, the `set` lines for the base policy, then for the variant,
 * then the variant's own pairs).  Returns the number of runs. */
static int check_scenario(const struct scenario *s)
{
    int n = 0;
    for (int v = -1; v < (int)s->nvariants; v++) {
        for (int i = 0; i < (v < 0 ? policy_registry_count : 1); i++) {
            const struct variant_def *var = v < 0 ? NULL : &s->variants[v];
            const struct policy_ops *ops = var ? policy_find(var->base) : policy_registry[i];
            assert_non_null(ops);
            const char *label = var ? var->name : ops->name;
            struct params ps;
            params_init(&ps, ops);
            for (uint16_t k = 0; k < s->nsets; k++)
                if (!strcmp(s->sets[k].policy, ops->name))
                    apply(&ps, s->sets[k].kv, s->sets[k].nkv);
            if (var) {
                for (uint16_t k = 0; k < s->nsets; k++)
                    if (!strcmp(s->sets[k].policy, label))
                        apply(&ps, s->sets[k].kv, s->sets[k].nkv);
                apply(&ps, var->kv, var->nkv);
            }
            check_run(s, label, ops, &ps);
            n++;
        }
    }
    return n;
}

static void test_bundled_scenarios(void **state)
{
    (void)state;
    glob_t g;
    assert_int_equal(glob("scenarios/*.scn", 0, NULL, &g), 0);
    assert_true(g.gl_pathc >= 30);
    int runs = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct scenario *s;
        struct diag d;
        if (scenario_parse(g.gl_pathv[i], &s, &d) != 0) {
            diag_print(&d);
            fail_msg("cannot parse %s", g.gl_pathv[i]);
        }
        runs += check_scenario(s);
        scenario_free(s);
    }
    printf("%zu scenarios, %d runs: the trace shows what the checker counts\n", g.gl_pathc, runs);
    globfree(&g);
}

/* Facts the bundled scenarios may lack: an event published to a policy
 * that keeps items in memory while its host is down (dropped at once), a
 * graceful stop that cuts runs off, manual triggers, failing deliveries. */
static const char *const extra[] = {
    "name pub-while-down\nhorizon 1h\ndrain 10m\nworkflow agent\n"
    "  consumer check subscribe inbox fifo runs 10s\n"
    "publish inbox at 10m\npublish inbox rate 60/h\ncrash host at 9m for 5m\n",
    "name stop-cuts-off\nhorizon 2h\ndrain 10m\nworkflow w\n"
    "  producer p every 10m runs 5m publish t\n  consumer c subscribe t fifo runs 20m\n"
    "stop host at 35m grace 1m for 10m\ntrigger w at 50m\ntrigger w at 1h05m\n",
    "name delivery\nhorizon 3h\ndrain 0\nworkflow agent\n  producer flaky every 20m runs 1s publish log\n"
    "  consumer check subscribe inbox fifo runs 1s\npublish inbox rate 9/h\n"
    "fail agent.check delivery 50%\nfail agent.flaky transient 30%\n",
};

static void test_extra_scenarios(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
        struct scenario *s = simtest_parse("extra.scn", extra[i]);
        check_scenario(s);
        scenario_free(s);
    }
}

/* The drift this layer ended: an item published to heartbeat (which keeps
 * items in memory) while its host is down is dropped at once; the checker
 * counted it, and now the trace shows it too. */
static void test_publish_while_down_is_traced(void **state)
{
    (void)state;
    struct sim_result r;
    simtest_run(extra[0], "heartbeat", NULL, 1, 1, &r);
    uint64_t down = 0;
    for (size_t i = 0; i < r.ntrace; i++) {
        const struct trace_rec *t = &r.trace[i];
        if (t->kind == FACT_DROP && t->cause == DROP_CRASH && t->t_us > 9 * US_PER_MIN && t->t_us < 14 * US_PER_MIN)
            down++;
    }
    assert_true(down >= 4); /* 10m (two events), 11m, 12m, 13m */
    assert_true(r.ck.total.dropped >= down);
    sim_result_free(&r);
}

/* Every kind of record appeared (the note excepted: no policy writes one). */
static void test_every_kind_seen(void **state)
{
    (void)state;
    for (int k = 0; k < FACT_KIND_END; k++) {
        const char *name = fact_kind_name((enum fact_kind)k);
        if (!name || k == FACT_NOTE)
            continue;
        assert_int_equal(fact_kind_parse(name), k);
        if (!seen[k])
            fail_msg("no '%s' record in any run: the test does not cover that fact", name);
    }
}

/* The case: the drop that the checker counts in
 * scenarios/heartbeat_crash.scn is on a --trace line. */
static void test_heartbeat_crash_drop_traced(void **state)
{
    (void)state;
    struct scenario *s;
    struct diag d;
    assert_int_equal(scenario_parse("scenarios/heartbeat_crash.scn", &s, &d), 0);
    struct params ps;
    params_init(&ps, policy_find("heartbeat"));
    FILE *tf = tmpfile();
    assert_non_null(tf);
    struct sim_opts o = {.seed = s->seed, .trace = tf, .label = "heartbeat"};
    struct sim_result r;
    sim_run(s, policy_find("heartbeat"), &ps, &o, &r);
    rewind(tf);
    char line[512];
    uint64_t drops = 0;
    while (fgets(line, sizeof line, tf))
        drops += strstr(line, " agent.check drop     item=") != NULL;
    fclose(tf);
    assert_true(r.ck.total.dropped == 1);
    assert_true(drops == r.ck.total.dropped);
    sim_result_free(&r);
    scenario_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bundled_scenarios),
        cmocka_unit_test(test_extra_scenarios),
        cmocka_unit_test(test_publish_while_down_is_traced),
        cmocka_unit_test(test_every_kind_seen),
        cmocka_unit_test(test_heartbeat_crash_drop_traced),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    cal_zone_cache_free();
    return rc;
}
