/* test_script.c: the consumers' scripts (sim/script.c).
 *
 * A run start gathers only the pending items its script reads
 * (script_needs), not the whole backlog.  The property: for every script
 * kind, random pending items (publish order, bursts at one instant, keys
 * and topics), random instants and every max_take from 0 to 12,
 * script_eval over the first script_needs(max_take) items takes exactly
 * what it takes over all of them and asks the same wake; and script_due
 * over the first script_needs(1) answers as over all.  The model is the
 * script given everything, which is what a run start passed before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/rng.h"
#include "sim/scenario.h"
#include "sim/script.h"
#include "sim/util.h"

#define MAXN 300

static const char *const consumers[] = {
    "fifo", "batch 1 or 1m", "batch 5 or 30s", "batch 40 or 10m", "window 45s", "window 2h", "digest 09:00",
    "correlate a b",
};

static struct scenario *parse_with(const char *script)
{
    char text[512];
    snprintf(text, sizeof text,
             "name s\nstart 2025-03-29T00:00:00Z\ntimezone Europe/Berlin\nhorizon 3d\n"
             "workflow w\n  consumer c subscribe a,b %s runs 1s\n",
             script);
    struct scenario *s;
    struct diag d;
    if (scenario_parse_buf("s.scn", text, strlen(text), &s, &d) != 0)
        fail_msg("'%s' does not parse", script);
    return s;
}

/* n pending items in publish order: gaps of 0 (a burst) to 20 minutes,
 * or, for half the lists, to 10 seconds (a batch fills before it times out). */
static uint32_t make_items(struct rng *r, struct script_item *it, int64_t *last_us)
{
    uint32_t n = (uint32_t)rng_below(r, MAXN + 1);
    int64_t t = (int64_t)rng_below(r, (uint64_t)6 * 3600 * US_PER_S);
    uint64_t gap = rng_below(r, 2) ? (uint64_t)20 * 60 * US_PER_S : (uint64_t)10 * US_PER_S;
    for (uint32_t i = 0; i < n; i++) {
        if (rng_below(r, 3))
            t += (int64_t)rng_below(r, gap);
        it[i] = (struct script_item){t, (uint32_t)rng_below(r, 6), (uint16_t)rng_below(r, 2)};
    }
    *last_us = t;
    return n;
}

/* Fisher-Yates, from r. */
static void shuffle(struct rng *r, struct script_item *it, uint32_t n)
{
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = (uint32_t)rng_below(r, i);
        struct script_item t = it[i - 1];
        it[i - 1] = it[j];
        it[j] = t;
    }
}

/* For every max_take from 0 to 12: script_eval over script_needs's prefix,
 * and over a prefix script_enough accepts, decides as over all n items. */
static void check_prefixes(const struct script *sc, const struct scenario *s, const struct script_item *it,
                           uint32_t n, int64_t now, struct rng *r, const char *what, uint64_t *checked,
                           uint64_t *shorter, uint64_t *enough)
{
    static uint32_t take_all[MAXN], take_pre[MAXN];
    for (uint32_t mt = 0; mt <= 12; mt++) {
        uint32_t need = script_needs(sc, mt);
        uint32_t np = n < need ? n : need;
        int64_t w_all, w_pre;
        uint32_t na = script_eval(sc, s, it, n, now, mt, take_all, &w_all);
        uint32_t npre = script_eval(sc, s, it, np, now, mt, take_pre, &w_pre);
        if (na != npre || w_all != w_pre || memcmp(take_all, take_pre, na * sizeof *take_all) != 0)
            fail_msg("%s, %u items, max_take %u: %u taken (wake %lld) over all, %u (wake %lld) over %u",
                     what, n, mt, na, (long long)w_all, npre, (long long)w_pre, np);
        (*checked)++;
        *shorter += np < n;
        /* a start stops gathering at the first chunk the script
         * calls enough: any such prefix decides as everything */
        uint32_t cut = 1 + (uint32_t)rng_below(r, np ? np : 1);
        while (cut < np && !script_enough(sc, s, it, cut, now))
            cut++;
        if (cut < np) {
            npre = script_eval(sc, s, it, cut, now, mt, take_pre, &w_pre);
            if (na != npre || w_all != w_pre || memcmp(take_all, take_pre, na * sizeof *take_all) != 0)
                fail_msg("%s, %u items, max_take %u: %u taken (wake %lld) over all, %u (wake %lld) over "
                         "the %u script_enough called enough",
                         what, n, mt, na, (long long)w_all, npre, (long long)w_pre, cut);
            (*enough)++;
        }
    }
}

static void test_prefix_decides_as_everything(void **state)
{
    (void)state;
    struct rng r = rng_stream(20251128, RNG_POLICY, 0, 0);
    static struct script_item it[MAXN];
    static uint32_t take_all[MAXN];
    uint64_t checked = 0, shorter = 0, enough = 0;
    for (size_t k = 0; k < sizeof consumers / sizeof *consumers; k++) {
        struct scenario *s = parse_with(consumers[k]);
        const struct script *sc = &s->wfs[0].handlers[0].script;
        for (int trial = 0; trial < 400; trial++) {
            int64_t last;
            uint32_t n = make_items(&r, it, &last);
            /* now: within ten minutes of the first item, or up to 30 h after the last */
            int64_t first = n ? it[0].publish_us : 0;
            int64_t now = rng_below(&r, 2) ? first + (int64_t)rng_below(&r, (uint64_t)600 * US_PER_S)
                                           : last + (int64_t)rng_below(&r, (uint64_t)30 * 3600 * US_PER_S);
            if (now < last)
                now = last; /* every pending item was published by now */
            uint32_t need1 = script_due_needs(sc);
            uint32_t np1 = n < need1 ? n : need1;
            int64_t due = script_due(sc, s, it, n, n, now);
            assert_int_equal(due, script_due(sc, s, it, np1, n, now));
            /* the model: the earliest instant at which script_eval takes something */
            int64_t w;
            if (script_eval(sc, s, it, n, now, 1, take_all, &w) > 0)
                assert_int_equal(due, now);
            else if (sc->kind != SCRIPT_CORRELATE)
                assert_int_equal(due, w == SIM_NEVER || n == 0 ? SIM_NEVER : w);
            /* Then in any order (a policy's offer): the scripts read their
             * list by position, so the bounds hold for it as well. */
            for (int order = 0; order < 2; order++) {
                if (order == 1)
                    shuffle(&r, it, n);
                check_prefixes(sc, s, it, n, now, &r, consumers[k], &checked, &shorter, &enough);
            }
        }
        scenario_free(s);
    }
    /* the bound was below the backlog in most cases, so the property was tested */
    assert_true(shorter > checked / 2);
    assert_true(enough > checked / 20);
}

/* What the bound is, per kind: all for correlate and for max_take 0;
 * else the items it may take and the next, and a batch's size. */
static void test_needs(void **state)
{
    (void)state;
    struct scenario *s = parse_with("batch 40 or 10m");
    const struct script *sc = &s->wfs[0].handlers[0].script;
    assert_int_equal(script_needs(sc, 0), UINT32_MAX);
    assert_int_equal(script_needs(sc, 1), 41);
    assert_int_equal(script_needs(sc, 100), 101);
    scenario_free(s);
    s = parse_with("fifo");
    sc = &s->wfs[0].handlers[0].script;
    assert_int_equal(script_needs(sc, 1), 2);
    assert_int_equal(script_needs(sc, UINT32_MAX - 1), UINT32_MAX);
    scenario_free(s);
    s = parse_with("correlate a b");
    assert_int_equal(script_needs(&s->wfs[0].handlers[0].script, 1), UINT32_MAX);
    scenario_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefix_decides_as_everything),
        cmocka_unit_test(test_needs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
