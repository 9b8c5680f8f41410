/* test_crashpoints.c: crash points (sim/crashpoints.c, the engine's points
 * and positional crashes, the scenario lines that write them down).
 *
 * The properties that make the exploration trustworthy:
 *   - watching a run changes nothing it decides (same fingerprint);
 *   - the point a fork crashes at is the point its scenario line names: a
 *     point simulated with prefix sharing and the same point simulated from
 *     the start with its line added give the same run, fingerprint for
 *     fingerprint, for every point;
 *   - the parser's list of fact kinds for `after` is the engine's list of
 *     durable kinds;
 *   - on wakeat_crash_phases without its crash lines, wakeat passes at
 *     every point and phase_reset=always fails exactly at the points just
 *     after a mutation is recorded (and just before that run commits: the
 *     same state), with one double effect each. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sim/crashpoints.h"
#include "sim/jobs.h"
#include "sim/refs.h"
#include "sim/sim.h"
#include "sim/syntax.h"
#include "sim/util.h"
#include "tests/expect.h"
#include "tests/simtest.h"

/* --- helpers ----------------------------------------------------------------- */

static struct scenario *load(const char *path)
{
    struct scenario *s;
    struct diag d;
    if (scenario_parse_ex(path, &refs_builtin, &s, &d) != 0) {
        diag_print(&d);
        fail_msg("%s does not parse", path);
    }
    return s;
}

/* The parameters of a label: a registered policy or a variant of s. */
static const struct policy_ops *target(const struct scenario *s, const char *label, struct params *ps)
{
    const struct variant_def *v = NULL;
    for (uint16_t i = 0; i < s->nvariants; i++)
        if (!strcmp(s->variants[i].name, label))
            v = &s->variants[i];
    const struct policy_ops *ops = policy_find(v ? v->base : label);
    assert_non_null(ops);
    params_init(ps, ops);
    for (uint16_t i = 0; v && i < v->nkv; i++) {
        char msg[256];
        if (params_set(ps, v->kv[i].key, v->kv[i].value, msg, sizeof msg) != 0)
            fail_msg("%s", msg);
    }
    return ops;
}

/* max: the first max points only (0: the scenario's crashpoints line). */
static void explore(const struct scenario *s, const char *label, int rerun, int jobs, uint64_t max,
                    struct cp_result *r)
{
    struct params ps;
    const struct policy_ops *ops = target(s, label, &ps);
    struct cp_opts o = {.seed = s->seed, .from_us = s->crashpoints.line ? s->crashpoints.from_us : 0,
                        .to_us = s->crashpoints.line ? s->crashpoints.to_us : SIM_NEVER,
                        .max = max ? max : s->crashpoints.max, .down_us = s->crashpoints.down_us, .jobs = jobs,
                        .rerun = rerun};
    if (!o.down_us)
        o.down_us = cp_default_down(s);
    char err[512] = "";
    if (cp_explore(s, ops, &ps, &o, r, err, sizeof err) != 0)
        fail_msg("cp_explore: %s", err);
}

/* A scenario file with the lines of path that do not start with one of
 * the prefixes; its path in out (a temporary file the caller removes). */
static void strip_lines(const char *path, const char *const *prefixes, char *out, size_t n)
{
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    snprintf(out, n, "/tmp/simrun-cp-%ld.scn", (long)getpid());
    FILE *o = fopen(out, "w");
    assert_non_null(o);
    char line[4096];
    while (fgets(line, sizeof line, in)) {
        int skip = 0;
        for (int k = 0; prefixes[k]; k++)
            skip |= !strncmp(line, prefixes[k], strlen(prefixes[k]));
        if (!skip)
            fputs(line, o);
    }
    fclose(in);
    fclose(o);
}

/* --- the engine ---------------------------------------------------------------- */

static int count_points(void *ctx, const struct sim_point *p)
{
    ++*(uint64_t *)ctx;
    assert_true(p->index > 0);
    return -1;
}

/* A probe that never crashes changes nothing: the same fingerprint and
 * metrics as a plain run, for every bundled scenario it is tried on. */
static void test_watching_changes_nothing(void **state)
{
    (void)state;
    static const char *const files[] = {"scenarios/wakeat_crash_phases.scn", "scenarios/nightly.scn",
                                        "scenarios/heartbeat_crash.scn", "scenarios/vistimeout_worker_crash.scn",
                                        "scenarios/interval_crash.scn"};
    static const char *const pols[] = {"oracle", "poll", "wakeat", "vistimeout", "interval", "heartbeat"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        struct scenario *s = load(files[f]);
        for (size_t k = 0; k < sizeof pols / sizeof pols[0]; k++) {
            struct params ps;
            const struct policy_ops *ops = target(s, pols[k], &ps);
            struct sim_result a, b;
            struct sim_opts plain = {.seed = s->seed};
            sim_run(s, ops, &ps, &plain, &a);
            uint64_t npoints = 0;
            struct sim_probe pr = {.ctx = &npoints, .point = count_points};
            struct sim_opts watched = {.seed = s->seed, .probe = &pr};
            sim_run(s, ops, &ps, &watched, &b);
            if (a.fingerprint != b.fingerprint || a.events != b.events)
                fail_msg("%s under %s: watching changed the run", files[f], pols[k]);
            EXPECT_U64(b.ck.total.published, a.ck.total.published, files[f]);
            assert_true(npoints > 0);
            sim_result_free(&a);
            sim_result_free(&b);
        }
        scenario_free(s);
    }
}

/* `first` crashes before anything at its instant, even an instant at which
 * nothing else happens; `after` waits for its fact, and without it there is
 * no crash. */
static void test_positional_crashes(void **state)
{
    (void)state;
    static const char body[] = "name p\nhorizon 2h\n"
                               "workflow w\n  consumer c subscribe t fifo runs 100s\n"
                               "publish t at 10m\n";
    char text[1024];
    struct sim_result r;
    snprintf(text, sizeof text, "%scrash host at 17m first for 1m\n", body);
    simtest_run(text, "wakeat", NULL, 1, 1, &r);
    EXPECT_U64(r.ck.ncrashes, 1, "first at an empty instant crashes");
    EXPECT_I64(r.ck.crashes[0].at_us, 17 * US_PER_MIN, "at its instant");
    sim_result_free(&r);
    /* After the mutation at 10m + 90 s: the run is cut in phase mutated. */
    snprintf(text, sizeof text, "%scrash host at 11m30s after mutation of w.c for 1m\n", body);
    simtest_run(text, "wakeat", NULL, 1, 1, &r);
    EXPECT_U64(r.ck.ncrashes, 1, "after mutation");
    EXPECT_U64(r.ck.total.runs_crashed, 1, "the run is crashed");
    EXPECT_U64(r.ck.total.double_effects, 0, "wakeat resumes it at emitting");
    sim_result_free(&r);
    simtest_run(text, "wakeat", "phase_reset=always", 1, 1, &r);
    EXPECT_U64(r.ck.total.double_effects, 1, "phase_reset=always applies it again");
    sim_result_free(&r);
    /* No second mutation at that instant: no crash. */
    snprintf(text, sizeof text, "%scrash host at 11m30s after mutation 2 of w.c for 1m\n", body);
    simtest_run(text, "wakeat", NULL, 1, 1, &r);
    EXPECT_U64(r.ck.ncrashes, 0, "no such fact, no crash");
    sim_result_free(&r);
}

/* --- the scenario lines -------------------------------------------------------------- */

static void parse_fails(const char *tail, const char *msg)
{
    char text[1024];
    snprintf(text, sizeof text,
             "name p\nhorizon 2h\nworkflow w x 2\n  consumer c subscribe t fifo runs 1m\npublish t at 10m\n%s", tail);
    struct scenario *s;
    struct diag d;
    if (scenario_parse_buf_ex("p.scn", text, strlen(text), &refs_builtin, &s, &d) == 0) {
        scenario_free(s);
        fail_msg("'%s' parsed", tail);
    }
    EXPECT_HAS(d.msg, msg, tail);
}

static void test_crash_lines(void **state)
{
    (void)state;
    struct scenario *s = simtest_parse("p.scn", "name p\nhorizon 2h\nworkflow w x 2\n"
                                                "  consumer c subscribe t fifo runs 1m\npublish t at 10m\n"
                                                "crash host at 10m first for 1m\n"
                                                "crash host at 20m after end 2 of w[1].c for 1m\n"
                                                "crash host for 1m after durable at 30m\n"
                                                "crashpoints from 5m to 1h max 40 down 2m\n"
                                                "expect wakeat crashpoints recovery_ok == true\n"
                                                "expect wakeat crashpoints recovery_time <= 5m\n");
    assert_int_equal(s->ncrashes, 3);
    assert_int_equal(s->crashes[0].pos, CRASH_POS_FIRST);
    assert_int_equal(s->crashes[1].pos, CRASH_POS_AFTER);
    EXPECT_STR(s->crashes[1].pos_kind, "end", "kind");
    assert_int_equal(s->crashes[1].pos_nth, 2);
    assert_int_equal(s->crashes[1].pos_wf, 0);
    assert_int_equal(s->crashes[1].pos_inst, 1);
    assert_int_equal(s->crashes[1].pos_h, 0);
    EXPECT_I64(s->crashes[1].down_us, US_PER_MIN, "for");
    EXPECT_STR(s->crashes[2].pos_kind, "durable", "kind without of");
    assert_int_equal(s->crashes[2].pos_wf, -1);
    EXPECT_I64(s->crashes[2].at_us, 30 * US_PER_MIN, "clauses in any order");
    assert_int_equal(s->crashpoints.max, 40);
    EXPECT_I64(s->crashpoints.from_us, 5 * US_PER_MIN, "from");
    EXPECT_I64(s->crashpoints.to_us, US_PER_H, "to");
    EXPECT_I64(s->crashpoints.down_us, 2 * US_PER_MIN, "down");
    assert_int_equal(s->expects[0].crashpoints, 1);
    EXPECT_STR(s->expects[0].metric, "recovery_ok", "metric");
    EXPECT_I64((int64_t)s->expects[1].value, 5 * US_PER_MIN, "a duration");
    scenario_free(s);

    parse_fails("crash host at 0 first for 1m\n", "before the deploy");
    parse_fails("crash worker 1 at 5m first for 1m\n", "places a host crash only");
    parse_fails("crash host at 5m after timer for 1m\n", "unknown fact kind 'timer'");
    parse_fails("crash host at 5m after end of w[2].c for 1m\n", "no instance 2 of workflow 'w'");
    parse_fails("crash host at 5m after end of w.x for 1m\n", "unknown handler 'x'");
    parse_fails("crash host random mtbf 1h mttr 1m first\n", "no position");
    parse_fails("crashpoints from 1h to 10m\n", "ends ('to') before it starts");
    parse_fails("crashpoints max 3\ncrashpoints max 4\n", "a second 'crashpoints' line");
    parse_fails("expect wakeat crashpoints latency.p99 < 1m\n", "unknown crashpoints metric 'latency.p99'");
    parse_fails("expect wakeat crashpoints lost for w.c == 0\n", "'for' does not apply");
}

/* The kinds `after` accepts are exactly the engine's durable kinds. */
static void test_after_kinds_are_durable_kinds(void **state)
{
    (void)state;
    for (int k = 0; k < FACT_KIND_END; k++) {
        const char *name = fact_kind_name((enum fact_kind)k);
        if (!name)
            continue;
        char text[512];
        snprintf(text, sizeof text, "name p\nhorizon 1h\nworkflow w\n  consumer c subscribe t fifo runs 1m\n"
                                    "crash host at 5m after %s for 1m\n", name);
        struct scenario *s;
        struct diag d;
        int rc = scenario_parse_buf("p.scn", text, strlen(text), &s, &d);
        if ((rc == 0) != fact_kind_durable((enum fact_kind)k))
            fail_msg("kind '%s': parser %s, engine %s", name, rc == 0 ? "accepts" : "refuses",
                     fact_kind_durable((enum fact_kind)k) ? "durable" : "not durable");
        if (rc == 0)
            scenario_free(s);
    }
}

/* Instants written by cp_fmt_us read back exactly. */
static void test_instants_round_trip(void **state)
{
    (void)state;
    static const int64_t v[] = {1, 999, 1000, 1001, US_PER_S + 1, 3 * US_PER_H + 90 * US_PER_S + 1,
                                45 * US_PER_MIN + 250 * US_PER_MS, 3 * US_PER_DAY + 7, INT64_C(86399999999)};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char b[64];
        int64_t back;
        cp_fmt_us(v[i], b, sizeof b);
        assert_int_equal(scn_parse_duration(b, &back, NULL, 0), 0);
        EXPECT_I64(back, v[i], b);
    }
}

/* --- the exploration ----------------------------------------------------------------- */

static void same_points(const struct cp_result *a, const struct cp_result *b, const char *what)
{
    assert_int_equal(a->npts, b->npts);
    EXPECT_U64(a->base.fingerprint, b->base.fingerprint, what);
    for (size_t i = 0; i < a->npts; i++) {
        const struct cp_point *p = &a->pts[i], *q = &b->pts[i];
        assert_true(p->out.done && q->out.done);
        if (p->out.fingerprint != q->out.fingerprint) {
            char line[512];
            cp_point_line(a, p, a->down_us, line, sizeof line);
            fail_msg("%s: point %u (%s) differs", what, p->no, line);
        }
        assert_int_equal(p->out.fail, q->out.fail);
        assert_int_equal(p->out.double_effects, q->out.double_effects);
        assert_int_equal(p->out.lost, q->out.lost);
    }
}

/* Prefix sharing gives what simulating each point from its scenario line
 * gives, with one child or several (the first 30 points of each case: a
 * fork under the sanitizers is slow). */
static void test_fork_equals_rerun(void **state)
{
    (void)state;
    static const struct { const char *file, *label; } cases[] = {
        {"scenarios/wakeat_crash_phases.scn", "wakeat-reset"},
        {"scenarios/vistimeout_crashpoints.scn", "vistimeout-short"},
        {"scenarios/interval_crashpoints.scn", "interval"},
        {"scenarios/heartbeat_crashpoints.scn", "heartbeat"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct scenario *s = load(cases[c].file);
        struct cp_result fork1, fork3, rerun;
        explore(s, cases[c].label, 0, 1, 30, &fork1);
        explore(s, cases[c].label, 0, 3, 30, &fork3);
        explore(s, cases[c].label, 1, 2, 30, &rerun);
        assert_true(fork1.npts > 10);
        same_points(&fork1, &fork3, cases[c].file);
        same_points(&fork1, &rerun, cases[c].file);
        cp_result_free(&fork1);
        cp_result_free(&fork3);
        cp_result_free(&rerun);
        scenario_free(s);
    }
}

/* The case, without the hand-placed crash lines. */
static void test_wakeat_crash_phases_found(void **state)
{
    (void)state;
    static const char *const drop[] = {"crash ", "expect ", "crashpoints ", NULL};
    char path[64];
    strip_lines("scenarios/wakeat_crash_phases.scn", drop, path, sizeof path);
    struct scenario *s = load(path);
    struct cp_result ok, reset;
    explore(s, "wakeat", 0, 2, 0, &ok);
    explore(s, "wakeat-reset", 0, 2, 0, &reset);
    assert_true(ok.npts >= 60);
    EXPECT_U64(ok.nfail, 0, "wakeat fails nowhere");
    size_t after_mutation = 0;
    for (size_t i = 0; i < reset.npts; i++) {
        const struct cp_point *p = &reset.pts[i];
        int after_mut = p->side == CP_AFTER && p->tr.kind == FACT_MUTATION;
        int before_commit = p->side == CP_BEFORE && p->tr.kind == FACT_RUN_END && p->tr.detail == OUT_COMMITTED;
        after_mutation += (size_t)after_mut;
        if (after_mut || before_commit) {
            assert_true(p->out.fail);
            EXPECT_I64(p->out.double_effects, 1, "a double effect");
        } else if (p->out.fail) {
            char line[512];
            cp_point_line(&reset, p, reset.down_us, line, sizeof line);
            fail_msg("wakeat-reset fails at %s", line);
        }
    }
    EXPECT_U64(after_mutation, 8, "one point after each of the 8 mutations");
    EXPECT_U64(reset.nfail, 16, "after each mutation and before each commit");
    cp_result_free(&ok);
    cp_result_free(&reset);
    scenario_free(s);
    unlink(path);
}

/* The window and max choose the points; a point's run is kept on demand. */
static void test_window_and_max(void **state)
{
    (void)state;
    struct scenario *s = load("scenarios/vistimeout_crashpoints.scn");
    struct params ps;
    const struct policy_ops *ops = target(s, "vistimeout", &ps);
    struct cp_opts o = {.seed = s->seed, .from_us = 20 * US_PER_MIN, .to_us = 30 * US_PER_MIN, .max = 5,
                        .down_us = US_PER_MIN, .jobs = 2, .keep_results = 1};
    struct cp_result r;
    char err[256];
    assert_int_equal(cp_explore(s, ops, &ps, &o, &r, err, sizeof err), 0);
    assert_int_equal(r.npts, 5);
    assert_true(r.truncated);
    for (size_t i = 0; i < r.npts; i++) {
        assert_true(r.pts[i].t_us >= o.from_us && r.pts[i].t_us < o.to_us);
        assert_non_null(r.pts[i].res);
        EXPECT_U64(r.pts[i].res->fingerprint, r.pts[i].out.fingerprint, "kept result");
        if (i)
            assert_true(r.pts[i].sp > r.pts[i - 1].sp);
    }
    cp_result_free(&r);
    scenario_free(s);
}

/* --- job tables --------------------------------------------------------------------- */

static uint64_t writes[8];
static size_t nwrites;

static void wrote(void *ctx, uint64_t id, const struct job *row)
{
    (void)ctx;
    assert_true(nwrites < 8);
    writes[nwrites++] = id * 10 + row->status;
}

static void test_job_writes_are_watched(void **state)
{
    (void)state;
    struct jobtab t;
    jobs_init(&t, jobs_heap_realloc, NULL);
    struct job j = {.status = JOB_PENDING, .available_us = 5, .item = UINT64_MAX};
    jobs_add(&t, &j);
    assert_int_equal(nwrites, 0);
    jobs_watch(&t, wrote);
    jobs_add(&t, &j);
    jobs_update(&t, 0, JOB_RUNNING, 9);
    jobs_update(&t, 1, JOB_COMPLETED, 9);
    assert_int_equal(nwrites, 3);
    EXPECT_U64(writes[0], 10 + JOB_PENDING, "add");
    EXPECT_U64(writes[1], 0 + JOB_RUNNING, "update");
    EXPECT_U64(writes[2], 10 + JOB_COMPLETED, "update");
    jobs_free(&t);
}

/* The hook sees the row written even after the table forgot rows at its
 * front and moved the rest down (jobs_forget_below). */
static uint64_t seen_avail[300];

static void wrote_avail(void *ctx, uint64_t id, const struct job *row)
{
    (void)ctx;
    assert_true(id < 300);
    seen_avail[id] = (uint64_t)row->available_us;
}

static void test_job_writes_after_forgetting(void **state)
{
    (void)state;
    struct jobtab t;
    jobs_init(&t, jobs_heap_realloc, NULL);
    jobs_watch(&t, wrote_avail);
    for (uint64_t i = 0; i < 300; i++) {
        struct job j = {.status = JOB_PENDING, .available_us = (int64_t)(1000 + i), .item = UINT64_MAX};
        jobs_add(&t, &j);
        if (i >= 100) {
            jobs_update(&t, i - 100, JOB_COMPLETED, (int64_t)(5000 + i - 100));
            jobs_forget_below(&t, i - 99);
        }
    }
    for (uint64_t i = 0; i < 200; i++)
        EXPECT_U64(seen_avail[i], 5000 + i, "the completed row's write");
    for (uint64_t i = 200; i < 300; i++)
        EXPECT_U64(seen_avail[i], 1000 + i, "the added row");
    jobs_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_watching_changes_nothing),
        cmocka_unit_test(test_positional_crashes),
        cmocka_unit_test(test_crash_lines),
        cmocka_unit_test(test_after_kinds_are_durable_kinds),
        cmocka_unit_test(test_instants_round_trip),
        cmocka_unit_test(test_fork_equals_rerun),
        cmocka_unit_test(test_wakeat_crash_phases_found),
        cmocka_unit_test(test_window_and_max),
        cmocka_unit_test(test_job_writes_are_watched),
        cmocka_unit_test(test_job_writes_after_forgetting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
