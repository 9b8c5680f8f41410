/* test_scenario.c: the scenario parser (sim/scenario.c) and the schedules
 * (sim/schedule.c).
 *
 * - every .scn file in tests/good parses, and two of them are checked field by
 *   field (values in us, topic indices, defaults);
 * - every .scn file in tests/bad fails where its first line says:
 *   `# error: [FILE:]LINE:COL: MESSAGE-SUBSTRING` (FILE, relative to
 *   tests/bad, when the error is inside a trace file);
 * - scn_parse_duration on valid and invalid input;
 * - the reference callbacks (struct scenario_refs): none at all, and a fake
 *   registry that sees its context and whose messages land at the right
 *   line:col;
 * - schedule_dues / schedule_next / schedule_period_at for every, at and
 *   cron, including a cron in Europe/Berlin across the spring DST change;
 * - robustness: truncations and random byte mutations of the good files
 *   must parse or fail cleanly (under ASan this finds memory errors).
 *
 * Run from the repository root (tests/run_tests.sh does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cal.h"
#include "sim/refs.h"
#include "sim/scenario.h"
#include "sim/syntax.h"
#include "sim/util.h"
#include "sim/rng.h"

#include "tests/expect.h"

#define S(x) ((int64_t)(x) * US_PER_S)

/* --- helpers ------------------------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    *len = n;
    return buf;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The sorted paths of dir/ *.scn; returns how many (at most max). */
static int list_scn(const char *dir, char **out, int max)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        size_t l = strlen(e->d_name);
        if (l > 4 && !strcmp(e->d_name + l - 4, ".scn")) {
            out[n] = malloc(strlen(dir) + l + 2);
            sprintf(out[n], "%s/%s", dir, e->d_name);
            n++;
        }
    }
    closedir(d);
    qsort(out, (size_t)n, sizeof *out, cmp_str);
    return n;
}

static struct scenario *parse_ok(const char *path)
{
    struct scenario *s = NULL;
    struct diag d;
    if (scenario_parse_ex(path, &refs_builtin, &s, &d) != 0) {
        diag_print(&d);
        fail_msg("%s does not parse", path);
    }
    return s;
}

static int parse_text(const char *text, struct scenario **s, struct diag *d)
{
    return scenario_parse_buf_ex("tests/inline.scn", text, strlen(text), &refs_builtin, s, d);
}

/* --- (a) good files ----------------------------------------------------------------- */

static void test_good_files_parse(void **state)
{
    (void)state;
    char *files[256];
    int n = list_scn("tests/good", files, 256);
    assert_true(n >= 4);
    for (int i = 0; i < n; i++) {
        struct scenario *s = parse_ok(files[i]);
        assert_string_equal(s->path, files[i]);
        assert_true(s->horizon_us > 0);
        assert_true(s->nwfs > 0);
        scenario_free(s);
        free(files[i]);
    }
}

static void test_good_mail(void **state)
{
    (void)state;
    struct scenario *s = parse_ok("tests/good/mail.scn");
    assert_string_equal(s->name, "mail-demo");
    assert_int_equal(s->start_utc_s, INT64_C(1741305600));
    assert_string_equal(cal_zone_name(s->zone), "Europe/Berlin");
    assert_int_equal(s->horizon_us, 3 * US_PER_DAY);
    assert_int_equal(s->drain_us, 12 * US_PER_H);
    assert_int_equal(s->seed, 42);
    assert_int_equal(s->recovery_bound_us, 30 * US_PER_MIN);
    assert_int_equal(s->nwfs, 2);
    assert_int_equal(s->ninstances, 11);
    assert_int_equal(s->nhandler_instances, 10 * 7 + 2);

    /* Hash: the file's bytes, then the trace file's. */
    size_t l1, l2;
    char *b1 = slurp("tests/good/mail.scn", &l1), *b2 = slurp("tests/good/events.txt", &l2);
    assert_non_null(b1);
    assert_non_null(b2);
    assert_true(s->hash == sim_fnv(sim_fnv(SIM_FNV_INIT, b1, l1), b2, l2));
    free(b1);
    free(b2);

    const struct workflow_def *m = &s->wfs[0];
    assert_string_equal(m->name, "mail");
    assert_int_equal(m->count, 10);
    assert_int_equal(m->nhandlers, 7);
    assert_int_equal(m->ntopics, 4);
    assert_string_equal(m->topics[0], "inbox");
    assert_string_equal(m->topics[1], "reports");
    assert_string_equal(m->topics[2], "out");
    assert_string_equal(m->topics[3], "alerts");

    const struct handler_def *h = &m->handlers[0];
    assert_string_equal(h->name, "poll");
    assert_int_equal(h->kind, H_PRODUCER);
    assert_int_equal(h->sched.kind, SCHED_EVERY);
    assert_int_equal(h->sched.every_us, 5 * US_PER_MIN);
    assert_int_equal(h->sched.offset_us, US_PER_MIN);
    assert_string_equal(h->sched.text, "every 5m offset 1m");
    assert_int_equal(h->runs.kind, DIST_UNIFORM);
    assert_int_equal(h->runs.a_us, S(2));
    assert_int_equal(h->runs.b_us, S(10));
    assert_int_equal(h->idle.kind, DIST_FIXED);
    assert_int_equal(h->idle.a_us, 0);
    assert_int_equal(h->split_pct[0], 10);
    assert_int_equal(h->split_pct[1], 80);
    assert_int_equal(h->split_pct[2], 10);
    assert_int_equal(h->source, 0);
    assert_int_equal(h->out_topic, 0);
    assert_int_equal(h->emit_n, 0);
    assert_int_equal(h->line, 12);

    h = &m->handlers[1];
    assert_string_equal(h->name, "rep");
    assert_int_equal(h->sched.kind, SCHED_CRON);
    assert_string_equal(cal_zone_name(h->sched.zone), "America/New_York");
    assert_string_equal(h->sched.text, "cron \"0 9 * * 1-5\" tz America/New_York");
    assert_int_equal(h->out_topic, 1);
    assert_int_equal(h->emit_n, 2);
    assert_int_equal(h->source, -1);
    assert_int_equal(h->runs.kind, DIST_FIXED);
    assert_int_equal(h->runs.a_us, S(1));

    h = &m->handlers[2];
    assert_int_equal(h->sched.kind, SCHED_AT);
    assert_int_equal(h->sched.at_us, 26 * US_PER_H);
    assert_int_equal(h->out_topic, 2);
    assert_int_equal(h->emit_n, 1);

    h = &m->handlers[3];
    assert_string_equal(h->name, "digest");
    assert_int_equal(h->kind, H_CONSUMER);
    assert_int_equal(h->sched.kind, SCHED_NONE);
    assert_int_equal(h->nsub, 1);
    assert_int_equal(h->sub[0], 0);
    assert_int_equal(h->script.kind, SCRIPT_DIGEST);
    assert_int_equal(h->script.digest_min, 9 * 60);

    h = &m->handlers[4];
    assert_string_equal(h->name, "triage");
    assert_int_equal(h->script.kind, SCRIPT_FIFO);
    assert_int_equal(h->runs.kind, DIST_EXP);
    assert_int_equal(h->runs.a_us, 300 * US_PER_MS);
    assert_int_equal(h->runs.b_us, 0);
    assert_int_equal(h->idle.kind, DIST_FIXED);
    assert_int_equal(h->idle.a_us, 10 * US_PER_MS);
    assert_int_equal(h->split_pct[0], 20);
    assert_int_equal(h->split_pct[1], 70);
    assert_int_equal(h->nfails, 2);
    assert_int_equal(h->fails[0].cls, FAIL_TRANSIENT);
    assert_int_equal(h->fails[0].ppm, 20000);
    assert_int_equal(h->fails[0].phase, PHASE_MUTATING);
    assert_int_equal(h->fails[1].cls, FAIL_INDETERMINATE);
    assert_int_equal(h->fails[1].ppm, 5000);
    assert_int_equal(h->fails[1].phase, PHASE_MUTATED);

    h = &m->handlers[5]; /* indented with a tab */
    assert_string_equal(h->name, "b");
    assert_int_equal(h->nsub, 2);
    assert_int_equal(h->sub[0], 0);
    assert_int_equal(h->sub[1], 3);
    assert_int_equal(h->script.kind, SCRIPT_BATCH);
    assert_int_equal(h->script.batch_n, 10);
    assert_int_equal(h->script.batch_us, US_PER_H);

    h = &m->handlers[6];
    assert_int_equal(h->script.kind, SCRIPT_WINDOW);
    assert_int_equal(h->script.window_us, S(30));
    assert_int_equal(h->sub[0], 1);

    const struct workflow_def *sh = &s->wfs[1];
    assert_string_equal(sh->name, "shop");
    assert_int_equal(sh->count, 1);
    assert_int_equal(sh->ntopics, 2);
    assert_string_equal(sh->topics[0], "orders");
    assert_string_equal(sh->topics[1], "payments");
    h = &sh->handlers[0];
    assert_int_equal(h->script.kind, SCRIPT_CORRELATE);
    assert_int_equal(h->script.corr_a, 1);
    assert_int_equal(h->script.corr_b, 0);
    assert_int_equal(h->nfails, 1);
    assert_int_equal(h->fails[0].cls, FAIL_LOGIC);
    assert_int_equal(h->fails[0].ppm, 1000000);
    h = &sh->handlers[1];
    assert_int_equal(h->sched.kind, SCHED_CRON);
    assert_string_equal(cal_zone_name(h->sched.zone), "Europe/Berlin");
    assert_string_equal(h->sched.text, "cron \"*/15 * * * *\" and");
    assert_int_equal(h->source, 1);
    assert_int_equal(h->out_topic, 0);
    assert_int_equal(h->emit_n, 0);

    assert_int_equal(s->nsources, 2);
    assert_string_equal(s->sources[0].name, "inbox");
    const struct arrival *a = &s->sources[0].arr;
    assert_int_equal(a->kind, ARR_POISSON);
    assert_int_equal(a->count, 20);
    assert_int_equal(a->per_us, US_PER_H);
    assert_int_equal(a->from_us, US_PER_H);
    assert_int_equal(a->to_us, 2 * US_PER_DAY);
    assert_int_equal(a->keys, 5);
    a = &s->sources[1].arr;
    assert_int_equal(a->kind, ARR_RATE);
    assert_int_equal(a->count, 3);
    assert_int_equal(a->per_us, 5 * US_PER_MIN);
    assert_int_equal(a->from_us, 0);
    assert_int_equal(a->to_us, s->horizon_us);
    assert_int_equal(a->keys, 0);

    assert_int_equal(s->npubs, 6);
    assert_string_equal(s->pubs[0].topic, "alerts");
    assert_int_equal(s->pubs[0].arr.kind, ARR_AT);
    assert_int_equal(s->pubs[0].arr.at_us, US_PER_H);
    assert_int_equal(s->pubs[0].arr.count, 3);
    assert_int_equal(s->pubs[1].arr.kind, ARR_BURST);
    assert_int_equal(s->pubs[1].arr.count, 500);
    assert_int_equal(s->pubs[1].arr.at_us, 26 * US_PER_H);
    assert_int_equal(s->pubs[1].arr.over_us, 10 * US_PER_MIN);
    assert_int_equal(s->pubs[2].arr.kind, ARR_RATE);
    assert_int_equal(s->pubs[2].arr.per_us, US_PER_MIN);
    assert_int_equal(s->pubs[2].arr.to_us, 2 * US_PER_H);
    assert_int_equal(s->pubs[2].arr.keys, 100);
    assert_int_equal(s->pubs[3].arr.kind, ARR_POISSON);
    assert_int_equal(s->pubs[4].arr.kind, ARR_DAILY);
    assert_int_equal(s->pubs[4].arr.peak_min, 13 * 60);
    assert_int_equal(s->pubs[4].arr.count, 50);
    const struct arrival *tr = &s->pubs[5].arr;
    assert_int_equal(tr->kind, ARR_TRACE);
    assert_int_equal(tr->ntrace, 6);
    static const int64_t want_tr[6] = {12500000, S(30), S(90), S(3600), S(3600), S(33 * 3600)};
    for (int i = 0; i < 6; i++)
        assert_int_equal(tr->trace_us[i], want_tr[i]);

    assert_int_equal(s->ncrashes, 5);
    assert_int_equal(s->crashes[0].target, CRASH_HOST);
    assert_int_equal(s->crashes[0].at_us, S(86400 + 9 * 3600 + 30));
    assert_int_equal(s->crashes[0].down_us, 10 * US_PER_MIN);
    assert_int_equal(s->crashes[0].random, 0);
    assert_int_equal(s->crashes[1].target, CRASH_WORKER);
    assert_int_equal(s->crashes[1].index, 2);
    assert_int_equal(s->crashes[2].target, CRASH_WORKERS);
    assert_int_equal(s->crashes[2].at_us, 36 * US_PER_H);
    assert_int_equal(s->crashes[3].target, CRASH_SERVER);
    assert_int_equal(s->crashes[4].random, 1);
    assert_int_equal(s->crashes[4].mtbf_us, 6 * US_PER_H);
    assert_int_equal(s->crashes[4].mttr_us, 5 * US_PER_MIN);

    assert_int_equal(s->ntriggers, 1);
    assert_int_equal(s->triggers[0].wf, 0);
    assert_int_equal(s->triggers[0].at_us, 2 * US_PER_H);

    assert_int_equal(s->nsets, 2);
    assert_string_equal(s->sets[0].policy, "poll");
    assert_int_equal(s->sets[0].nkv, 1);
    assert_string_equal(s->sets[0].kv[0].key, "period");
    assert_string_equal(s->sets[0].kv[0].value, "30s");
    assert_string_equal(s->sets[1].policy, "fast");
    assert_int_equal(s->nvariants, 1);
    assert_string_equal(s->variants[0].name, "fast");
    assert_string_equal(s->variants[0].base, "poll");
    assert_int_equal(s->variants[0].nkv, 1);
    assert_string_equal(s->variants[0].kv[0].value, "1m");

    assert_int_equal(s->nexpects, 4);
    const struct expect_def *e = &s->expects[0];
    assert_string_equal(e->policies[0], "*");
    assert_null(e->policies[1]);
    assert_string_equal(e->metric, "lost");
    assert_int_equal(e->wf, -1);
    assert_int_equal(e->op, OP_EQ);
    e = &s->expects[1];
    assert_string_equal(e->policies[0], "poll");
    assert_string_equal(e->policies[1], "fast");
    assert_null(e->policies[2]);
    assert_int_equal(e->wf, 0);
    assert_int_equal(e->handler, 4);
    assert_int_equal(e->op, OP_LT);
    assert_true(e->value == (double)(10 * US_PER_MIN));
    assert_true(s->expects[2].value == 1.0);
    assert_true(s->expects[3].value == 2.5);
    assert_int_equal(s->expects[3].op, OP_GE);
    assert_string_equal(s->expects[3].text, "expect oracle runs >= 2.5");
    scenario_free(s);
}

static void test_good_defaults(void **state)
{
    (void)state;
    struct scenario *s = parse_ok("tests/good/minimal.scn");
    assert_string_equal(s->name, "minimal");
    assert_int_equal(s->start_utc_s, INT64_C(1735689600));
    assert_string_equal(cal_zone_name(s->zone), "UTC");
    assert_int_equal(s->horizon_us, US_PER_H);
    assert_int_equal(s->drain_us, US_PER_DAY);
    assert_int_equal(s->recovery_bound_us, US_PER_H);
    assert_int_equal(s->seed, 1);
    const struct handler_def *h = &s->wfs[0].handlers[0];
    assert_int_equal(s->wfs[0].count, 1);
    assert_int_equal(h->sched.offset_us, 0);
    assert_int_equal(h->emit_n, 1);
    assert_int_equal(h->out_topic, 0);
    assert_int_equal(h->split_pct[1], 80);
    assert_int_equal(h->nfails, 0);
    assert_int_equal(s->nexpects + s->nsets + s->nvariants + s->ncrashes, 0);
    scenario_free(s);

    /* CRLF line ends, trailing blanks. */
    s = parse_ok("tests/good/crlf.scn");
    assert_int_equal(s->npubs, 1);
    assert_string_equal(s->expects[0].text, "expect * lost == 0");
    scenario_free(s);
}

/* `correlate A B by key` (the product's spelling) is `correlate A B`; the
 * options after it still parse. */
static void test_correlate_by_key(void **state)
{
    (void)state;
    struct scenario *s;
    struct diag d;
    assert_int_equal(parse_text("horizon 1d\nworkflow w\n"
                                "  consumer c subscribe a,b correlate b a by key runs 2s\n"
                                "publish a poisson 1/h keys 5\npublish b poisson 1/h keys 5\n",
                                &s, &d),
                     0);
    const struct handler_def *h = &s->wfs[0].handlers[0];
    assert_int_equal(h->script.kind, SCRIPT_CORRELATE);
    assert_int_equal(h->script.corr_a, 1);
    assert_int_equal(h->script.corr_b, 0);
    assert_int_equal(h->runs.kind, DIST_FIXED);
    scenario_free(s);
    assert_int_not_equal(parse_text("horizon 1d\nworkflow w\n"
                                    "  consumer c subscribe a,b correlate b a by id runs 2s\n", &s, &d),
                         0);
    assert_int_equal(d.line, 3);
    assert_int_equal(d.col, 45);
    assert_non_null(strstr(d.msg, "expected 'key' after 'by', got 'id'"));
    assert_int_not_equal(parse_text("horizon 1d\nworkflow w\n  consumer c subscribe a,b correlate b a by\n", &s, &d),
                         0);
    assert_non_null(strstr(d.msg, "missing 'key' after 'by'"));
}

static void test_inline_forms(void **state)
{
    (void)state;
    struct scenario *s;
    struct diag d;
    /* Header lines anywhere; an ISO `at` relative to a later `start`; a
     * source defined after its use; a variant used before its definition;
     * a UTF-8 byte order mark. */
    const char *text = "\xef\xbb\xbf"
                       "workflow w\n"
                       "  producer p at 2025-06-01T12:00:00+02:00 runs 1s source s\n"
                       "  consumer c subscribe s window 1m runs 1s\n"
                       "expect v,oracle lost <= 0\n"
                       "set v.period=2m\n"
                       "horizon 2d\n"
                       "start 2025-06-01\n"
                       "source s at 1h keys 3\n"
                       "variant v poll\n";
    if (parse_text(text, &s, &d) != 0) {
        diag_print(&d);
        fail();
    }
    assert_int_equal(s->wfs[0].handlers[0].sched.at_us, 10 * US_PER_H);
    assert_int_equal(s->wfs[0].handlers[0].source, 0);
    assert_string_equal(s->name, "inline");
    scenario_free(s);

    /* A buffer over the 64 MiB limit is refused before it is read. */
    size_t big = ((size_t)64 << 20) + 1;
    char *huge = calloc(big, 1);
    assert_non_null(huge);
    memset(huge, '#', big);
    assert_int_equal(scenario_parse_buf("tests/huge.scn", huge, big, &s, &d), -1);
    assert_null(s);
    assert_non_null(strstr(d.msg, "larger than 64 MiB"));
    free(huge);

    /* Missing file, directory. */
    assert_int_equal(scenario_parse("tests/good/no-such.scn", &s, &d), -1);
    assert_null(s);
    assert_non_null(strstr(d.msg, "cannot read"));
    assert_int_equal(scenario_parse("tests/good", &s, &d), -1);
    assert_non_null(strstr(d.msg, "directory"));
}

/* --- (b) bad files -------------------------------------------------------------------- */

/* Aggregates over seeds and 'inf' in expect lines. */
static void test_expect_aggregates(void **state)
{
    (void)state;
    struct scenario *s;
    struct diag d;
    const char *text = "horizon 1d\n"
                       "workflow w\n"
                       "  producer p every 1h runs 1s publish t\n"
                       "  consumer c subscribe t fifo runs 1s\n"
                       "expect poll mean(latency.p50) < 5m\n"
                       "expect * p95(lateness.max) for w.p < inf\n"
                       "expect oracle max(recovery_ok) == true\n"
                       "expect oracle mean(recovery_ok) >= 0.9\n"
                       "expect oracle latency.max == \xe2\x88\x9e\n"
                       "expect oracle min(lost) == 0\n";
    if (parse_text(text, &s, &d) != 0) {
        print_error("%s:%d:%d: %s\n", d.file, d.line, d.col, d.msg);
        fail();
    }
    assert_int_equal(s->nexpects, 6);
    assert_int_equal(s->expects[0].agg, EXPECT_MEAN);
    assert_string_equal(s->expects[0].metric, "latency.p50");
    assert_true(s->expects[0].value == 5.0 * US_PER_MIN);
    assert_int_equal(s->expects[1].agg, EXPECT_PCT);
    assert_int_equal(s->expects[1].agg_pct, 95);
    assert_string_equal(s->expects[1].metric, "lateness.max");
    assert_int_equal(s->expects[1].handler, 0);
    assert_true(isinf(s->expects[1].value) && s->expects[1].value > 0);
    assert_int_equal(s->expects[2].agg, EXPECT_MAX);
    assert_true(s->expects[2].value == 1.0);
    assert_int_equal(s->expects[3].agg, EXPECT_MEAN);
    assert_true(s->expects[3].value == 0.9);
    assert_int_equal(s->expects[4].agg, EXPECT_EACH);
    assert_true(isinf(s->expects[4].value));
    assert_int_equal(s->expects[5].agg, EXPECT_MIN);
    assert_string_equal(s->expects[5].text, "expect oracle min(lost) == 0");
    scenario_free(s);
}

static void test_bad_files(void **state)
{
    (void)state;
    char *files[512];
    int n = list_scn("tests/bad", files, 512), failures = 0;
    print_message("%d bad files\n", n);
    assert_true(n >= 45);
    for (int i = 0; i < n; i++) {
        size_t len;
        char *buf = slurp(files[i], &len);
        assert_non_null(buf);
        /* The expectation: "# error: [FILE:]LINE:COL: MESSAGE". */
        char head[600] = "";
        size_t hl = 0;
        while (hl < len && hl < sizeof head - 1 && buf[hl] != '\n') {
            head[hl] = buf[hl];
            hl++;
        }
        head[hl] = 0;
        if (hl && head[hl - 1] == '\r')
            head[--hl] = 0;
        free(buf);
        const char *h = head;
        if (strncmp(h, "# error: ", 9) != 0)
            fail_msg("%s: first line is not '# error: LINE:COL: MESSAGE'", files[i]);
        h += 9;
        char want_file[512];
        snprintf(want_file, sizeof want_file, "%s", files[i]);
        if (!(*h >= '0' && *h <= '9')) {
            const char *colon = strchr(h, ':');
            assert_non_null(colon);
            snprintf(want_file, sizeof want_file, "tests/bad/%.*s", (int)(colon - h), h);
            h = colon + 1;
        }
        int wl, wc, used = 0;
        if (sscanf(h, "%d:%d: %n", &wl, &wc, &used) != 2 || used == 0)
            fail_msg("%s: bad expectation '%s'", files[i], head);
        const char *want_msg = h + used;

        struct scenario *s = NULL;
        struct diag d;
        if (scenario_parse_ex(files[i], &refs_builtin, &s, &d) == 0) {
            print_error("%s: parsed, expected %d:%d: %s\n", files[i], wl, wc, want_msg);
            scenario_free(s);
            failures++;
        } else if (d.line != wl || d.col != wc || !strstr(d.msg, want_msg) || strcmp(d.file, want_file) != 0) {
            print_error("%s:\n  want %s:%d:%d: ...%s...\n  got  %s:%d:%d: %s\n", files[i], want_file, wl, wc, want_msg,
                        d.file, d.line, d.col, d.msg);
            failures++;
        } else {
            assert_null(s);
        }
        free(files[i]);
    }
    assert_int_equal(failures, 0);
}

/* --- (c) durations ------------------------------------------------------------------------ */

static void test_durations(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int64_t us;
    } ok[] = {
        {"0", 0},
        {"0s", 0},
        {"1us", 1},
        {"250ms", 250 * US_PER_MS},
        {"90s", S(90)},
        {"5m", 5 * US_PER_MIN},
        {"1h30m", 90 * US_PER_MIN},
        {"1d", US_PER_DAY},
        {"1d2h", 26 * US_PER_H},
        {"1d2h3m4s5ms6us", US_PER_DAY + 2 * US_PER_H + 3 * US_PER_MIN + S(4) + 5 * US_PER_MS + 6},
        {"09:00:30", S(9 * 3600 + 30)},
        {"1d09:00:30", S(86400 + 9 * 3600 + 30)},
        {"9:05", S(9 * 3600 + 300)},
        {"0d00:00", 0},
        {"23:59:59", S(86399)},
        {"106751991d", 106751991 * US_PER_DAY},
        {"9223372036854775807us", INT64_MAX},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int64_t us = -1;
        char msg[256] = "";
        if (scn_parse_duration(ok[i].s, &us, msg, sizeof msg) != 0)
            fail_msg("'%s': %s", ok[i].s, msg);
        assert_int_equal(us, ok[i].us);
    }
    static const struct {
        const char *s, *msg;
    } bad[] = {
        {"", "empty duration"},
        {"-5s", "negative duration '-5s'"},
        {"+5s", "unexpected sign"},
        {"5x", "unknown unit 'x' in '5x'"},
        {"5", "missing unit in '5'"},
        {"1h30", "missing unit in '1h30'"},
        {"1.5h", "decimal durations are not supported"},
        {"30m1h", "units out of order"},
        {"1h1h", "units out of order"},
        {"h", "bad duration 'h'"},
        {"5 s", "bad duration"},
        {"5S", "unknown unit 'S'"},
        {"24:30", "hour out of range"},
        {"09:60", "minute out of range"},
        {"09:00:60", "second out of range"},
        {"9223372036854775808us", "too large"},
        {"106751992d", "too large"},
        {"99999999999999999999s", "too large"},
        {"1d:00", "bad duration"},
        {"123:00", "bad duration"},
        {"9:5", "bad duration"},
        {"1x2d09:00", "bad duration"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t us = -1;
        char msg[256] = "";
        if (scn_parse_duration(bad[i].s, &us, msg, sizeof msg) == 0)
            fail_msg("'%s' parsed as %lld", bad[i].s, (long long)us);
        if (!strstr(msg, bad[i].msg))
            fail_msg("'%s': got '%s', want '%s'", bad[i].s, msg, bad[i].msg);
    }
    /* A message is escaped: no raw control bytes reach a terminal. */
    char msg[256];
    int64_t us;
    assert_int_equal(scn_parse_duration("5\x1b[2J", &us, msg, sizeof msg), -1);
    assert_null(strchr(msg, '\x1b'));
    assert_non_null(strstr(msg, "\\x1b"));
}

/* --- (d) schedules ---------------------------------------------------------------------------- */

static struct scenario *bare_scenario(int64_t start_s, const char *zone, int64_t horizon_us)
{
    struct scenario *s = calloc(1, sizeof *s);
    char err[256];
    s->start_utc_s = start_s;
    s->horizon_us = horizon_us;
    assert_int_equal(cal_zone_get(zone, &s->zone, err, sizeof err), 0);
    return s;
}

struct collect {
    int64_t t[64];
    int n, stop_after;
};

static int collect_fn(void *ctx, int64_t due_us)
{
    struct collect *c = ctx;
    if (c->n < 64)
        c->t[c->n] = due_us;
    c->n++;
    return c->stop_after && c->n >= c->stop_after;
}

static void test_schedule_every(void **state)
{
    (void)state;
    struct scenario *s = bare_scenario(INT64_C(1735689600), "UTC", US_PER_H);
    struct schedule sc = {.kind = SCHED_EVERY, .every_us = 10 * US_PER_MIN, .offset_us = US_PER_MIN};
    struct collect c = {0};
    /* 1m, 11m, ..., 51m: six dues before the horizon. */
    assert_int_equal(schedule_dues(s, &sc, 0, SIM_NEVER, collect_fn, &c), 6);
    for (int i = 0; i < 6; i++)
        assert_int_equal(c.t[i], US_PER_MIN + i * 10 * US_PER_MIN);
    c = (struct collect){.stop_after = 2};
    assert_int_equal(schedule_dues(s, &sc, 11 * US_PER_MIN, 50 * US_PER_MIN, collect_fn, &c), 2);
    assert_int_equal(c.t[0], 11 * US_PER_MIN);
    assert_int_equal(c.t[1], 21 * US_PER_MIN);
    assert_int_equal(schedule_dues(s, &sc, 11 * US_PER_MIN + 1, 51 * US_PER_MIN, NULL, NULL), 3);
    assert_int_equal(schedule_dues(s, &sc, -US_PER_H, 0, NULL, NULL), 0);
    assert_int_equal(schedule_dues(s, &sc, 30 * US_PER_MIN, 20 * US_PER_MIN, NULL, NULL), 0);

    assert_int_equal(schedule_next(s, &sc, 0, 1), US_PER_MIN);
    assert_int_equal(schedule_next(s, &sc, -5, 0), US_PER_MIN);
    assert_int_equal(schedule_next(s, &sc, US_PER_MIN, 1), US_PER_MIN);
    assert_int_equal(schedule_next(s, &sc, US_PER_MIN, 0), 11 * US_PER_MIN);
    assert_int_equal(schedule_next(s, &sc, 11 * US_PER_MIN - 1, 0), 11 * US_PER_MIN);
    assert_int_equal(schedule_next(s, &sc, 51 * US_PER_MIN, 0), SIM_NEVER); /* 61m is past the horizon */
    assert_int_equal(schedule_next(s, &sc, SIM_NEVER, 0), SIM_NEVER);
    assert_int_equal(schedule_next(s, &sc, SIM_NEVER, 1), SIM_NEVER);
    assert_int_equal(schedule_period_at(s, &sc, 21 * US_PER_MIN), 10 * US_PER_MIN);

    /* O(1): a ten-year horizon with a 1 us period answers at once. */
    s->horizon_us = SCN_MAX_HORIZON_US;
    struct schedule fast = {.kind = SCHED_EVERY, .every_us = 1, .offset_us = 0};
    assert_int_equal(schedule_next(s, &fast, SCN_MAX_HORIZON_US - 2, 0), SCN_MAX_HORIZON_US - 1);
    assert_int_equal(schedule_next(s, &fast, SCN_MAX_HORIZON_US - 1, 0), SIM_NEVER);
    free(s);
}

static void test_schedule_at(void **state)
{
    (void)state;
    struct scenario *s = bare_scenario(INT64_C(1735689600), "UTC", US_PER_DAY);
    struct schedule sc = {.kind = SCHED_AT, .at_us = 26 * US_PER_MIN};
    assert_int_equal(schedule_dues(s, &sc, 0, US_PER_DAY, NULL, NULL), 1);
    assert_int_equal(schedule_dues(s, &sc, 26 * US_PER_MIN + 1, US_PER_DAY, NULL, NULL), 0);
    assert_int_equal(schedule_dues(s, &sc, 0, 26 * US_PER_MIN, NULL, NULL), 0);
    assert_int_equal(schedule_next(s, &sc, 26 * US_PER_MIN, 1), 26 * US_PER_MIN);
    assert_int_equal(schedule_next(s, &sc, 26 * US_PER_MIN, 0), SIM_NEVER);
    assert_int_equal(schedule_period_at(s, &sc, 26 * US_PER_MIN), INT64_MAX);
    s->horizon_us = 26 * US_PER_MIN; /* only instants before the horizon are due */
    assert_int_equal(schedule_next(s, &sc, 0, 1), SIM_NEVER);
    assert_int_equal(schedule_dues(s, &sc, 0, SIM_NEVER, NULL, NULL), 0);
    free(s);
}

static struct schedule cron_sched(const char *expr, const char *zone)
{
    struct schedule sc = {.kind = SCHED_CRON};
    char err[256];
    assert_int_equal(cal_cron_parse(expr, 0, &sc.cron, err, sizeof err, NULL), 0);
    assert_int_equal(cal_zone_get(zone, &sc.zone, err, sizeof err), 0);
    return sc;
}

static void test_schedule_cron_utc(void **state)
{
    (void)state;
    /* Friday 2025-03-07 00:00 UTC, weekdays at 09:00: Fri, Mon, Tue. */
    struct scenario *s = bare_scenario(INT64_C(1741305600), "UTC", 5 * US_PER_DAY);
    struct schedule sc = cron_sched("0 9 * * 1-5", "UTC");
    struct collect c = {0};
    assert_int_equal(schedule_dues(s, &sc, 0, SIM_NEVER, collect_fn, &c), 3);
    assert_int_equal(c.t[0], 9 * US_PER_H);
    assert_int_equal(c.t[1], 3 * US_PER_DAY + 9 * US_PER_H);
    assert_int_equal(c.t[2], 4 * US_PER_DAY + 9 * US_PER_H);
    assert_int_equal(schedule_next(s, &sc, 9 * US_PER_H, 1), 9 * US_PER_H);
    assert_int_equal(schedule_next(s, &sc, 9 * US_PER_H, 0), 3 * US_PER_DAY + 9 * US_PER_H);
    assert_int_equal(schedule_next(s, &sc, 9 * US_PER_H - 1, 0), 9 * US_PER_H);
    /* A sub-second after_us: the fire at 09:00:00 is still ahead of 08:59:59.5. */
    assert_int_equal(schedule_next(s, &sc, 9 * US_PER_H - US_PER_S / 2, 0), 9 * US_PER_H);
    assert_int_equal(schedule_next(s, &sc, 4 * US_PER_DAY + 9 * US_PER_H, 0), SIM_NEVER);
    assert_int_equal(schedule_period_at(s, &sc, 9 * US_PER_H), 3 * US_PER_DAY);
    assert_int_equal(schedule_period_at(s, &sc, 3 * US_PER_DAY + 9 * US_PER_H), US_PER_DAY);

    /* Every minute: dues agree with repeated schedule_next. */
    struct schedule m = cron_sched("* * * * *", "UTC");
    s->horizon_us = US_PER_H;
    assert_int_equal(schedule_dues(s, &m, 0, SIM_NEVER, NULL, NULL), 60);
    int64_t t = -1;
    for (int i = 0; i < 60; i++) {
        t = schedule_next(s, &m, t, 0);
        assert_int_equal(t, i * US_PER_MIN);
    }
    assert_int_equal(schedule_next(s, &m, t, 0), SIM_NEVER);
    free(s);
}

static void test_schedule_cron_berlin_dst(void **state)
{
    (void)state;
    /* Start 2025-03-29T00:00:00Z (01:00 CET).  Clocks in Berlin jump from
     * 02:00 CET to 03:00 CEST on 30 March at 01:00 UTC. */
    struct scenario *s = bare_scenario(INT64_C(1743206400), "Europe/Berlin", 3 * US_PER_DAY);
    struct schedule sc = cron_sched("0 9 * * *", "Europe/Berlin");
    struct collect c = {0};
    assert_int_equal(schedule_dues(s, &sc, 0, SIM_NEVER, collect_fn, &c), 3);
    assert_int_equal(c.t[0], 8 * US_PER_H);                  /* 09:00 CET = 08:00 UTC */
    assert_int_equal(c.t[1], US_PER_DAY + 7 * US_PER_H);     /* 09:00 CEST = 07:00 UTC */
    assert_int_equal(c.t[2], 2 * US_PER_DAY + 7 * US_PER_H);
    assert_int_equal(schedule_period_at(s, &sc, c.t[0]), 23 * US_PER_H); /* the short day */
    assert_int_equal(schedule_period_at(s, &sc, c.t[1]), 24 * US_PER_H);

    /* 02:30 does not exist on 30 March: it fires at the jump (03:00 CEST). */
    struct schedule night = cron_sched("30 2 * * *", "Europe/Berlin");
    c = (struct collect){0};
    assert_int_equal(schedule_dues(s, &night, 0, SIM_NEVER, collect_fn, &c), 3);
    assert_int_equal(c.t[0], 90 * US_PER_MIN);                     /* 02:30 CET = 01:30 UTC */
    assert_int_equal(c.t[1], US_PER_DAY + US_PER_H);               /* the jump, 01:00 UTC */
    assert_int_equal(c.t[2], 2 * US_PER_DAY + 30 * US_PER_MIN);    /* 02:30 CEST = 00:30 UTC */
    assert_int_equal(schedule_next(s, &night, c.t[0], 0), c.t[1]);
    assert_int_equal(schedule_period_at(s, &night, c.t[1]), c.t[2] - c.t[1]);

    /* The same expression in UTC is unaffected. */
    struct schedule utc = cron_sched("0 9 * * *", "UTC");
    assert_int_equal(schedule_next(s, &utc, US_PER_DAY, 0), US_PER_DAY + 9 * US_PER_H);
    free(s);
}

/* The parsed berlin.scn agrees with the hand-made schedule above. */
static void test_schedule_from_file(void **state)
{
    (void)state;
    struct scenario *s = parse_ok("tests/good/berlin.scn");
    const struct handler_def *h = &s->wfs[0].handlers[0];
    assert_int_equal(h->sched.kind, SCHED_CRON);
    assert_int_equal(schedule_next(s, &h->sched, 0, 1), 90 * US_PER_MIN);
    assert_int_equal(schedule_next(s, &h->sched, 90 * US_PER_MIN, 0), US_PER_DAY + US_PER_H);
    const struct handler_def *hourly = &s->wfs[0].handlers[1];
    assert_int_equal(schedule_dues(s, &hourly->sched, 0, SIM_NEVER, NULL, NULL), 72);
    assert_int_equal(hourly->emit_n, 5);
    assert_int_equal(s->wfs[0].handlers[2].script.digest_min, 23 * 60 + 59);
    scenario_free(s);
}

/* --- (e) reference callbacks ------------------------------------------------------------------- */

/* The same body under every set of callbacks: a variant, a set on it and on
 * its base, an expect on a policy list, a per-handler metric. */
#define REFS_BODY                                                          \
    "horizon 1d\n"                                                         \
    "workflow w\n"                                                         \
    "  producer p every 1h runs 1s publish t\n"

static void test_refs_none(void **state)
{
    (void)state;
    struct scenario *s;
    struct diag d;
    /* Without callbacks, names of policies, parameters and metrics are not
     * checked, and a value is read by its form. */
    const char *text = REFS_BODY "set nosuch.k=v\n"
                                 "variant v other a=b\n"
                                 "set v.c=d\n"
                                 "expect v,nosuch made_up for w.p < 5m\n"
                                 "expect * flag == true\n"
                                 "expect * count >= 2.5\n";
    if (scenario_parse_buf_ex("tests/refs.scn", text, strlen(text), NULL, &s, &d) != 0) {
        diag_print(&d);
        fail();
    }
    EXPECT_I64(s->nexpects, 3, "expects");
    EXPECT_STR(s->expects[0].metric, "made_up", "metric");
    EXPECT_I64((int64_t)s->expects[0].value, 5 * 60 * US_PER_S, "duration by form");
    EXPECT_I64(s->expects[0].handler, 0, "for w.p");
    EXPECT_I64((int64_t)s->expects[1].value, 1, "true by form");
    assert_true(s->expects[2].value == 2.5);
    EXPECT_STR(s->variants[0].base, "other", "variant base");
    scenario_free(s);
    /* The plain entry points are the same as refs NULL. */
    assert_int_equal(scenario_parse_buf("tests/refs.scn", text, strlen(text), &s, &d), 0);
    scenario_free(s);
    /* A value of no form is still an error, at the value. */
    const char *bad = REFS_BODY "expect * m < 5x\n";
    assert_int_equal(scenario_parse_buf_ex("tests/refs.scn", bad, strlen(bad), NULL, &s, &d), -1);
    EXPECT_I64(d.line, 4, "line");
    EXPECT_I64(d.col, 14, "col");
    EXPECT_HAS(d.msg, "bad value '5x' for metric 'm'", "message");
}

/* A fake registry: one policy "alpha" with one key "k" whose only good value
 * is "good"; one metric "ok", a boolean, not per handler. */
struct fake_refs {
    int calls;
};

static int fake_policy(void *ctx, const char *name, char *msg, size_t n)
{
    ((struct fake_refs *)ctx)->calls++;
    if (!strcmp(name, "alpha"))
        return SCN_REF_OK;
    snprintf(msg, n, "no policy '%s' here", name);
    return SCN_REF_UNKNOWN;
}

static int fake_param(void *ctx, const char *policy, const char *key, const char *value, char *msg, size_t n)
{
    ((struct fake_refs *)ctx)->calls++;
    if (strcmp(policy, "alpha") || strcmp(key, "k")) {
        snprintf(msg, n, "no key '%s' in '%s'", key, policy);
        return SCN_REF_UNKNOWN;
    }
    if (strcmp(value, "good")) {
        snprintf(msg, n, "'%s' is not good", value);
        return SCN_REF_BAD_VALUE;
    }
    return SCN_REF_OK;
}

static int fake_metric(void *ctx, const char *name, struct scenario_metric *out, char *msg, size_t n)
{
    ((struct fake_refs *)ctx)->calls++;
    if (strcmp(name, "ok")) {
        snprintf(msg, n, "no metric '%s' here", name);
        return SCN_REF_UNKNOWN;
    }
    *out = (struct scenario_metric){.is_duration = 0, .is_bool = 1, .per_handler = 0};
    return SCN_REF_OK;
}

/* Parses REFS_BODY + tail under the fake registry; on an error, checks that
 * it is at line 4 (the tail's first line), col, with msg in the message. */
static void fake_case(const char *tail, int col, const char *msg)
{
    struct fake_refs fr = {0};
    const struct scenario_refs refs = {&fr, fake_policy, fake_param, fake_metric, NULL, NULL};
    char text[512];
    snprintf(text, sizeof text, "%s%s", REFS_BODY, tail);
    struct scenario *s = NULL;
    struct diag d;
    int rc = scenario_parse_buf_ex("tests/refs.scn", text, strlen(text), &refs, &s, &d);
    assert_true(fr.calls > 0);
    if (!msg) {
        if (rc != 0)
            fail_msg("'%s': %d:%d: %s", tail, d.line, d.col, d.msg);
        scenario_free(s);
        return;
    }
    if (rc == 0)
        fail_msg("'%s' parsed, expected an error with '%s'", tail, msg);
    EXPECT_I64(d.line, 4, tail);
    EXPECT_I64(d.col, col, tail);
    EXPECT_HAS(d.msg, msg, tail);
}

static void test_refs_fake(void **state)
{
    (void)state;
    fake_case("set alpha.k=good\nexpect alpha ok == true\n", 0, NULL);
    fake_case("variant v alpha k=good\nset v.k=good\nexpect v,alpha ok != false\n", 0, NULL);
    fake_case("set beta.k=good\n", 5, "no policy 'beta' here");
    fake_case("set alpha.x=good\n", 11, "no key 'x' in 'alpha'");
    fake_case("set alpha.k=bad\n", 13, "'bad' is not good");
    fake_case("variant v beta\n", 11, "no policy 'beta' here");
    fake_case("variant alpha alpha\n", 9, "clashes with a registered policy");
    fake_case("variant v alpha k=bad\n", 19, "'bad' is not good");
    fake_case("expect alpha,gamma ok == true\n", 14, "no policy 'gamma' here");
    fake_case("expect alpha,gamma ok == true\nvariant v alpha\n", 14, "no policy 'gamma' here; the scenario's variants: v");
    fake_case("expect alpha nope == 1\n", 14, "no metric 'nope' here");
    fake_case("expect alpha ok == 1\n", 20, "expected true or false for the boolean metric 'ok'");
    fake_case("expect alpha ok for w.p == true\n", 17, "metric 'ok' is not defined per handler");
}

/* --- robustness ------------------------------------------------------------------------------- */

static struct rng rng_state = {UINT64_C(0x9e3779b97f4a7c15)};
static uint64_t next_rand(void) { return rng_next(&rng_state); }

/* Checking every error (scenario_check_all_buf) agrees with the first
 * error: none for a good file, and the first error among them otherwise;
 * each with a location and a message. */
static void check_all_agrees(const char *path, const char *buf, size_t len, int rc, const struct diag *d)
{
    struct diag errs[8];
    int more;
    int n = scenario_check_all_buf(path, buf, len, &refs_builtin, errs, 8, &more);
    if (rc == 0) {
        if (n != 0)
            fail_msg("%s: parses, but check_all finds %d errors, first %d:%d: %s", path, n, errs[0].line, errs[0].col,
                     errs[0].msg);
        return;
    }
    assert_true(n >= 1 && n <= 8);
    int found = 0;
    for (int i = 0; i < n; i++) {
        if (errs[i].line < 1 || !errs[i].msg[0])
            fail_msg("%s: check_all error without a location: %d:%d: %s", path, errs[i].line, errs[i].col,
                     errs[i].msg);
        found |= errs[i].line == d->line && errs[i].col == d->col && !strcmp(errs[i].msg, d->msg) &&
                 !strcmp(errs[i].file, d->file);
    }
    if (!found)
        fail_msg("%s: check_all lacks the first error %d:%d: %s (it has %d:%d: %s)", path, d->line, d->col, d->msg,
                 errs[0].line, errs[0].col, errs[0].msg);
}

static void parse_any(const char *path, const char *buf, size_t len)
{
    struct scenario *s = (struct scenario *)1;
    struct diag d;
    int rc = scenario_parse_buf_ex(path, buf, len, &refs_builtin, &s, &d);
    check_all_agrees(path, buf, len, rc, &d);
    if (rc == 0) {
        assert_non_null(s);
        scenario_free(s);
        return;
    }
    assert_int_equal(rc, -1);
    assert_null(s);
    if (d.line < 1 || !d.msg[0])
        fail_msg("%s: error without a location: %d:%d: %s", path, d.line, d.col, d.msg);
    assert_true(d.col >= 0);
}

static void test_robustness(void **state)
{
    (void)state;
    char *files[256];
    int n = list_scn("tests/good", files, 256), runs = 0;
    static const char interesting[] = {0, '\n', '\r', ' ', '\t', '"', '(', ')', '#', ',', '.', '-', '/', ':',
                                       '=', '%', '9', '0', 'x', 'd', '*', (char)0xff, (char)0xc3};
    for (int f = 0; f < n; f++) {
        size_t len;
        char *orig = slurp(files[f], &len);
        assert_non_null(orig);
        char *buf = malloc(len * 2 + 64);
        /* Every truncation (in steps, for the longer files). */
        size_t step = len / 400 + 1;
        for (size_t k = 0; k <= len; k += step, runs++) {
            memcpy(buf, orig, k);
            parse_any(files[f], buf, k);
        }
        /* Random mutations: overwrite, insert, delete, duplicate a span. */
        for (int it = 0; it < 800; it++, runs++) {
            size_t l = len;
            memcpy(buf, orig, len);
            int nm = 1 + (int)(next_rand() % 4);
            for (int m = 0; m < nm && l > 0; m++) {
                size_t at = (size_t)(next_rand() % l);
                char c = next_rand() % 2 ? interesting[next_rand() % sizeof interesting] : (char)next_rand();
                switch (next_rand() % 4) {
                case 0:
                    buf[at] = c;
                    break;
                case 1:
                    memmove(buf + at + 1, buf + at, l - at);
                    buf[at] = c;
                    l++;
                    break;
                case 2:
                    memmove(buf + at, buf + at + 1, l - at - 1);
                    l--;
                    break;
                default: {
                    size_t span = 1 + (size_t)(next_rand() % 16);
                    if (at + span > l || l + span > len * 2 + 32)
                        break;
                    memmove(buf + at + span, buf + at, l - at);
                    l += span;
                    break;
                }
                }
            }
            parse_any(files[f], buf, l);
        }
        free(buf);
        free(orig);
        free(files[f]);
    }
    print_message("%d mutated inputs\n", runs);
    assert_true(runs >= 3000);

    /* Odd inputs by hand. */
    static const char *const odd[] = {
        "",
        "\n\n\n",
        "horizon",
        "horizon 1h\n",
        "horizon 1h\nworkflow\n",
        "horizon 1h\nworkflow w\n",
        "horizon 1h\n  producer p\n",
        "horizon 1h\nworkflow w\n  producer p every 1us runs 0 publish t 1000000\n",
        "horizon 3660d\nworkflow w x 1000000\n  producer p every 1us runs 0 publish t 1000000\n",
        "horizon 3660d\nworkflow w x 1000\n  producer p cron \"* * * * *\" runs 0 publish t 1000000\n",
        "horizon 1h\nworkflow w\n  consumer c subscribe a,a fifo runs 1s\n",
        "horizon 1h\nworkflow w\n  consumer c subscribe , fifo runs 1s\n",
        "horizon 1h\nworkflow w\n  consumer c subscribe a fifo runs uniform(((1s)),2s)\n",
        "horizon 1h\nworkflow w\n  consumer c subscribe a fifo runs uniform(1s,2s,3s)\n",
        "horizon 1h\nworkflow w\n  consumer c subscribe a fifo runs exp()\n",
        "horizon 1h\nworkflow w\n  consumer c subscribe a fifo runs )(\n",
        "horizon 1h\nexpect\nexpect *\nexpect * lost\n",
        "horizon 1h\nset\nset .=\nset a.=\nset a.b=\n",
        "horizon 1h\nvariant\n",
        "horizon 1h\r",
        "horizon 1h\r\r\n",
        "\"horizon\" 1h\n",
        "horizon \"\"\n",
        "horizon 1h\npublish t trace /dev/zero\n",
        "horizon 1h\npublish t trace .\n",
        "horizon 1h\npublish t trace \"\"\n",
        "horizon 1h\nworkflow w\n  consumer c subscribe t fifo runs 1s\npublish t trace ../good/events.txt\n",
        "horizon 1h # comment\n#\n   # indented comment\n",
        "horizon 1d\nworkflow w\n  producer p cron \"\" runs 1s publish t\n",
        "horizon 1d\nworkflow w\n  producer p cron \"0 0 30 2 *\" runs 1s publish t\n",
        "horizon 1d\ncrash worker 99999999999999999999 at 1h for 1s\n",
        "horizon 1d\nfail a.b.c transient 1%\nfail . x 1%\n",
    };
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        parse_any("tests/bad/odd.scn", odd[i], strlen(odd[i]));
    /* A long line of many one-byte words, and many lines. */
    size_t big = SCN_MAX_LINE;
    char *b = malloc(big + 64);
    memcpy(b, "horizon 1h\nexpect", 17);
    for (size_t k = 17; k < big; k += 2)
        memcpy(b + k, " x", 2);
    parse_any("tests/bad/odd.scn", b, big);
    free(b);
    size_t nl = (size_t)SCN_MAX_LINES + 5;
    b = malloc(nl);
    memset(b, '\n', nl);
    parse_any("tests/bad/odd.scn", b, nl);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_files_parse),
        cmocka_unit_test(test_good_mail),
        cmocka_unit_test(test_good_defaults),
        cmocka_unit_test(test_inline_forms),
        cmocka_unit_test(test_correlate_by_key),
        cmocka_unit_test(test_expect_aggregates),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_refs_none),
        cmocka_unit_test(test_refs_fake),
        cmocka_unit_test(test_schedule_every),
        cmocka_unit_test(test_schedule_at),
        cmocka_unit_test(test_schedule_cron_utc),
        cmocka_unit_test(test_schedule_cron_berlin_dst),
        cmocka_unit_test(test_schedule_from_file),
        cmocka_unit_test(test_robustness),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    cal_zone_cache_free();
    return rc;
}
