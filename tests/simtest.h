/* simtest.h: the one way the tests simulate a scenario written inline.
 *
 * Include after <cmocka.h>.  simtest_parse parses a scenario text (failing
 * the test with the diagnostic if it does not parse); simtest_run resolves a
 * policy's parameters from "key=value" pairs and simulates.  Everything is
 * static inline, so a test that does not use a helper does not warn. */
#ifndef TESTS_SIMTEST_H
#define TESTS_SIMTEST_H

#include <stdio.h>
#include <string.h>

#include "sim/refs.h"
#include "sim/sim.h"

static inline struct scenario *simtest_parse(const char *name, const char *text)
{
    struct scenario *s;
    struct diag d;
    int rc = scenario_parse_buf_ex(name, text, strlen(text), &refs_builtin, &s, &d);
    if (rc != 0)
        diag_print(&d);
    assert_int_equal(rc, 0);
    return s;
}

/* Simulates text under policy at the scenario's seed.  kvs: "key=value"
 * pairs separated by commas or spaces (NULL or "": the defaults).
 * keep_trace: collect the trace in res.  want_ok: fail the test unless the
 * run ended normally (no livelock, no event limit). */
static inline void simtest_run(const char *text, const char *policy, const char *kvs, int keep_trace, int want_ok,
                               struct sim_result *res)
{
    struct scenario *s = simtest_parse("test.scn", text);
    const struct policy_ops *ops = policy_find(policy);
    assert_non_null(ops);
    struct params ps;
    params_init(&ps, ops);
    for (const char *p = kvs; p && *p;) {
        char k[64], v[64], msg[256];
        int used = 0;
        while (*p == ' ' || *p == ',')
            p++;
        if (!*p)
            break;
        assert_int_equal(sscanf(p, "%63[^=]=%63[^, ]%n", k, v, &used), 2);
        if (params_set(&ps, k, v, msg, sizeof msg) != 0)
            fail_msg("%s", msg);
        p += used;
    }
    struct sim_opts o = {.seed = s->seed, .keep_trace = keep_trace};
    sim_run(s, ops, &ps, &o, res);
    scenario_free(s);
    if (want_ok)
        assert_int_equal(res->status, SIM_OK);
}

/* The same, with the pairs as a NULL-terminated array. */
static inline void simtest_run_kv(const char *text, const char *policy, const char *const *kv, int keep_trace,
                                  int want_ok, struct sim_result *res)
{
    char buf[1024] = "";
    for (int i = 0; kv && kv[i]; i++) {
        assert_true(strlen(buf) + strlen(kv[i]) + 2 < sizeof buf);
        strcat(buf, kv[i]);
        strcat(buf, " ");
    }
    simtest_run(text, policy, buf, keep_trace, want_ok, res);
}

/* The detail a --trace line shows for a record (sim/trace.h's formatter,
 * without names: topics and workflows as numbers), for matching its text. */
static inline const char *simtest_detail(const struct trace_rec *t, char *buf, size_t n)
{
    trace_format_detail(t, NULL, buf, n);
    return buf;
}

/* Whether a record is of the kind named kind ("start", "end", ...). */
static inline int simtest_is(const struct trace_rec *t, const char *kind)
{
    const char *name = fact_kind_name((enum fact_kind)t->kind);
    return name && !strcmp(name, kind);
}

/* Whether trace record t is of kind and its detail contains part (NULL:
 * any). */
static inline int simtest_is_with(const struct trace_rec *t, const char *kind, const char *part)
{
    char detail[200];
    return simtest_is(t, kind) && (!part || strstr(simtest_detail(t, detail, sizeof detail), part));
}

/* The time of the n-th (0-based) record of kind whose detail contains part
 * (NULL: any), -1 if there are not that many. */
static inline int64_t simtest_nth(const struct sim_result *r, const char *kind, const char *part, int n)
{
    for (size_t i = 0; i < r->ntrace; i++)
        if (simtest_is_with(&r->trace[i], kind, part) && n-- == 0)
            return r->trace[i].t_us;
    return -1;
}

/* Records of kind whose detail contains part. */
static inline int simtest_count(const struct sim_result *r, const char *kind, const char *part)
{
    int n = 0;
    for (size_t i = 0; i < r->ntrace; i++)
        n += simtest_is_with(&r->trace[i], kind, part);
    return n;
}

/* Fails unless the run starts (of handler h, -1: any) are exactly want[0..n). */
static inline void simtest_expect_starts(const struct sim_result *r, int32_t h, const int64_t *want, int n)
{
    int k = 0;
    for (size_t i = 0; i < r->ntrace; i++) {
        const struct trace_rec *t = &r->trace[i];
        if (!simtest_is(t, "start") || (h >= 0 && t->handler != h))
            continue;
        if (k >= n)
            fail_msg("more than %d starts: start %d at %lld us", n, k, (long long)t->t_us);
        if (t->t_us != want[k])
            fail_msg("start %d: got %lld us, want %lld us", k, (long long)t->t_us, (long long)want[k]);
        k++;
    }
    if (k != n)
        fail_msg("starts: got %d, want %d", k, n);
}

/* Fails unless metric name (whole scenario) is want. */
static inline void simtest_expect_metric(const struct sim_result *r, const char *name, double want)
{
    double v = -12345;
    assert_int_equal(metric_get(&r->ck, -1, name, &v), 0);
    if (v != want)
        fail_msg("%s: got %.0f, want %.0f", name, v, want);
}

/* A whole-scenario metric (tmpl -1) or one handler template's. */
static inline double simtest_metric(const struct sim_result *r, int tmpl, const char *name)
{
    double v = -12345;
    assert_int_equal(metric_get(&r->ck, tmpl, name, &v), 0);
    return v;
}

#endif
