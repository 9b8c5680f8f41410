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

/* A whole-scenario metric (tmpl -1) or one handler template's. */
static inline double simtest_metric(const struct sim_result *r, int tmpl, const char *name)
{
    double v = -12345;
    assert_int_equal(metric_get(&r->ck, tmpl, name, &v), 0);
    return v;
}

#endif
