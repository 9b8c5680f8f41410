/* test_suggest.c: "did you mean" (sim/suggest.c).
 *
 * - the distance against a plain recursive model (Levenshtein with
 *   adjacent swaps, case-blind) on every pair of a set of words;
 * - which candidate is suggested: the closest, the first of equals, none
 *   past the limit for the word's length, never the word itself;
 * - the messages of the places that use it: commands, options, policies,
 *   parameters, metrics, scenario directives and handler options. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/policy.h"
#include "sim/refs.h"
#include "sim/scenario.h"
#include "sim/suggest.h"
#include "tests/expect.h"

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* The model: the optimal string alignment distance, recursively. */
static int model(const char *a, size_t la, const char *b, size_t lb)
{
    if (la == 0)
        return (int)lb;
    if (lb == 0)
        return (int)la;
    int cost = lower(a[la - 1]) != lower(b[lb - 1]);
    int d = model(a, la - 1, b, lb) + 1;
    int x = model(a, la, b, lb - 1) + 1;
    if (x < d)
        d = x;
    x = model(a, la - 1, b, lb - 1) + cost;
    if (x < d)
        d = x;
    if (la > 1 && lb > 1 && lower(a[la - 1]) == lower(b[lb - 2]) && lower(a[la - 2]) == lower(b[lb - 1])) {
        x = model(a, la - 2, b, lb - 2) + 1;
        if (x < d)
            d = x;
    }
    return d;
}

static void test_distance_against_model(void **state)
{
    static const char *const w[] = {"", "a", "ab", "ba", "abc", "acb", "run", "rnu", "RUN", "report", "repotr",
                                    "poll", "pol", "period", "perdio", "kitten", "sitting", "latency.p99"};
    size_t n = sizeof w / sizeof w[0];
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < n; k++) {
            char ctx[64];
            snprintf(ctx, sizeof ctx, "'%s' vs '%s'", w[i], w[k]);
            EXPECT_I64(suggest_distance(w[i], w[k]), model(w[i], strlen(w[i]), w[k], strlen(w[k])), ctx);
        }
    EXPECT_I64(suggest_distance("kitten", "sitting"), 3, "kitten");
    EXPECT_I64(suggest_distance("rnu", "run"), 1, "a swap costs one");
    char longw[SUGGEST_MAX_LEN + 2];
    memset(longw, 'a', sizeof longw - 1);
    longw[sizeof longw - 1] = 0;
    EXPECT_I64(suggest_distance(longw, "a"), SUGGEST_MAX_LEN + 1, "too long");
}

static const char *best(const char *word, const char *const *cands)
{
    struct suggest sg;
    suggest_init(&sg, word);
    for (; *cands; cands++)
        suggest_add(&sg, *cands);
    return suggest_result(&sg);
}

static void test_choice(void **state)
{
    static const char *const cmds[] = {"run", "check", "report", "diff", "validate", "policies", NULL};
    EXPECT_STR(best("rnu", cmds), "run", "swap");
    EXPECT_STR(best("chek", cmds), "check", "delete");
    EXPECT_STR(best("Report", cmds), "report", "case only");
    EXPECT_STR(best("polices", cmds), "policies", "insert");
    assert_null(best("frobnicate", cmds));
    assert_null(best("x", cmds));               /* one letter suggests nothing */
    assert_null(best("run", cmds));             /* the word itself is no suggestion */
    static const char *const ties[] = {"abd", "abe", NULL};
    EXPECT_STR(best("abc", ties), "abd", "ties go to the first");
    static const char *const lim[] = {"abcdefgh", NULL};
    EXPECT_STR(best("abcdexyh", lim), "abcdefgh", "2 for 8 bytes");
    assert_null(best("abcdxyzh", lim));         /* 3 is too far for 8 bytes */
    char msg[64] = "unknown 'rnu'";
    struct suggest sg;
    suggest_init(&sg, "rnu");
    suggest_add(&sg, "run");
    suggest_append(&sg, msg, sizeof msg);
    EXPECT_STR(msg, "unknown 'rnu'; did you mean 'run'?", "appended");
    char small[20] = "unknown 'rnu'";
    suggest_append(&sg, small, sizeof small);
    EXPECT_STR(small, "unknown 'rnu'", "left alone when it does not fit");
}

/* The registry's and the references' messages. */
static void test_messages(void **state)
{
    char msg[1024];
    assert_int_equal(policy_check_name("pol", msg, sizeof msg), -1);
    EXPECT_HAS(msg, "unknown policy 'pol' (valid: oracle, poll", "policy");
    EXPECT_HAS(msg, "; did you mean 'poll'?", "policy");
    assert_int_equal(policy_check_param("poll", "perod", "1m", msg, sizeof msg), -1);
    EXPECT_HAS(msg, "(valid: period); did you mean 'period'?", "parameter");
    struct scenario_metric mi;
    assert_int_equal(refs_builtin.metric(NULL, "latncy.p99", &mi, msg, sizeof msg), SCN_REF_UNKNOWN);
    EXPECT_HAS(msg, "; did you mean 'latency.p99'?", "metric");
    assert_int_equal(refs_builtin.metric(NULL, "zzzzzz", &mi, msg, sizeof msg), SCN_REF_UNKNOWN);
    assert_null(strstr(msg, "did you mean"));
}

static void parse_err(const char *text, const char *want)
{
    struct scenario *s = NULL;
    struct diag d;
    if (scenario_parse_buf_ex("t.scn", text, strlen(text), &refs_builtin, &s, &d) == 0) {
        scenario_free(s);
        fail_msg("parsed: %s", text);
    }
    EXPECT_HAS(d.msg, want, text);
}

static void test_scenario_messages(void **state)
{
    parse_err("horizon 1d\nworkflw w\n", "unknown directive 'workflw' (valid: ");
    parse_err("horizon 1d\nworkflw w\n", "; did you mean 'workflow'?");
    parse_err("horizn 1d\n", "; did you mean 'horizon'?");
    parse_err("horizon 1d\nworkflow w\n  producer p evry 1m runs 1s\n", "; did you mean 'every'?");
    parse_err("horizon 1d\nworkflow w\n  consumer c subscribe t fifo runz 1s\n", "; did you mean 'runs'?");
    parse_err("horizon 1d\nworkflow w\n  producer p every 1m runs 1s\nset pol.period=1m\n", "; did you mean 'poll'?");
    parse_err("horizon 1d\nworkflow w\n  producer p every 1m runs 1s\nvariant fast poll period=1s\n"
              "expect fats lost == 0\n",
              "; the scenario's variants: fast); did you mean 'fast'?");
    parse_err("horizon 1d\nworkflow w\n  producer p every 1m runs 1s\nexpect poll lots == 0\n",
              "; did you mean 'lost'?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_distance_against_model),
        cmocka_unit_test(test_choice),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_scenario_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
