/* test_checker.c: the checker against hand-computed timelines, and its
 * crash metrics against a brute-force model on random ground truth.
 *
 * Each test builds a small scenario by hand (workflow templates, handlers,
 * schedules), stamps it into a world, feeds the checker a sequence of
 * facts written out below, and asserts every metric with the value worked
 * out in the comments (docs/metrics.md has the definitions). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/checker.h"
#include "sim/checker_int.h"
#include "sim/util.h"
#include "sim/world.h"
#include "sim/rng.h"

/* ---- fixture: a scenario written by hand --------------------------------- */

#define FX_MAX_WF 4
#define FX_MAX_H 8

struct fx {
    struct scenario scn;
    struct workflow_def wf[FX_MAX_WF];
    struct handler_def hd[FX_MAX_WF][FX_MAX_H];
    char *topics[1];
    struct world w;
    struct checker *c;
    struct checker_result r;
    uint64_t next_item;
    int built;
};

static struct fx *fx_new(int64_t horizon_us)
{
    struct fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->topics[0] = "in";
    f->scn.name = "test";
    f->scn.horizon_us = horizon_us;
    f->scn.drain_us = US_PER_DAY;
    f->scn.recovery_bound_us = US_PER_H;
    f->scn.wfs = f->wf;
    return f;
}

/* A workflow template stamped out `count` times; returns its index. */
static uint16_t fx_wf(struct fx *f, const char *name, uint32_t count)
{
    assert_true(f->scn.nwfs < FX_MAX_WF);
    uint16_t i = f->scn.nwfs++;
    f->wf[i] = (struct workflow_def){
        .name = (char *)name, .count = count, .handlers = f->hd[i], .topics = f->topics, .ntopics = 1,
    };
    f->scn.ninstances += count;
    return i;
}

static struct handler_def *fx_handler(struct fx *f, uint16_t wf, const char *name, enum handler_kind kind)
{
    struct workflow_def *w = &f->wf[wf];
    assert_true(w->nhandlers < FX_MAX_H);
    struct handler_def *h = &w->handlers[w->nhandlers++];
    *h = (struct handler_def){.name = (char *)name, .kind = kind, .source = -1, .out_topic = -1};
    h->split_pct[0] = 20;
    h->split_pct[1] = 60;
    h->split_pct[2] = 20;
    f->scn.nhandler_instances += w->count;
    return h;
}

/* A consumer subscribed to the workflow's one topic. */
static void fx_consumer(struct fx *f, uint16_t wf, const char *name)
{
    struct handler_def *h = fx_handler(f, wf, name, H_CONSUMER);
    h->nsub = 1;
    h->sub[0] = 0;
    h->script.kind = SCRIPT_FIFO;
}

static void fx_producer(struct fx *f, uint16_t wf, const char *name)
{
    fx_handler(f, wf, name, H_PRODUCER);
}

static void fx_every(struct fx *f, uint16_t wf, const char *name, int64_t every_us, int64_t offset_us)
{
    struct handler_def *h = fx_handler(f, wf, name, H_PRODUCER);
    h->sched = (struct schedule){.kind = SCHED_EVERY, .every_us = every_us, .offset_us = offset_us};
}

static void fx_at(struct fx *f, uint16_t wf, const char *name, int64_t at_us)
{
    struct handler_def *h = fx_handler(f, wf, name, H_PRODUCER);
    h->sched = (struct schedule){.kind = SCHED_AT, .at_us = at_us};
}

static struct checker *fx_start(struct fx *f, enum promise promise)
{
    world_build(&f->w, &f->scn);
    f->built = 1;
    f->c = checker_new(&f->w, promise);
    return f->c;
}

static const struct checker_result *fx_finish(struct fx *f, int64_t end_us)
{
    checker_finish(f->c, end_us, &f->r);
    return &f->r;
}

static void fx_free(struct fx *f)
{
    checker_free(f->c);
    checker_result_free(&f->r);
    if (f->built)
        world_free(&f->w);
    free(f);
}

/* ---- ground truth shorthands ---------------------------------------------- */

/* Publishes the next item to consumer h at t (origin = t); returns its id. */
static uint64_t pub(struct fx *f, uint32_t h, int64_t t)
{
    uint64_t id = f->next_item++;
    checker_publish(f->c, id, h, t, t);
    return id;
}

static void start(struct fx *f, uint64_t run, uint32_t h, int64_t due_us, const uint64_t *taken, uint32_t n,
                  int64_t t)
{
    checker_run_start(f->c, run, h, REASON_OTHER, due_us, 0, taken, n, t);
}

/* A consumer run taking one item, or none (item < 0). */
static void start1(struct fx *f, uint64_t run, uint32_t h, int64_t item, int64_t t)
{
    uint64_t it = (uint64_t)item;
    start(f, run, h, -1, item >= 0 ? &it : NULL, item >= 0 ? 1 : 0, t);
}

static void end(struct fx *f, uint64_t run, enum run_outcome out, int64_t t)
{
    checker_run_end(f->c, run, out, t);
}

/* ---- assertions that name the metric ---------------------------------------- */

static void expect_metric(const struct checker_result *r, int tmpl, const char *name, double want, const char *file,
                          int line)
{
    double got = 0;
    if (metric_get(r, tmpl, name, &got) != 0) {
        print_error("metric '%s' (tmpl %d) not available\n", name, tmpl);
        _fail(file, line);
    }
    if (isinf(want) ? got != want : fabs(got - want) > 1e-9 * fmax(1.0, fabs(want))) {
        print_error("metric '%s' (tmpl %d): got %.6f, want %.6f\n", name, tmpl, got, want);
        _fail(file, line);
    }
}
#define EXPECT(r, tmpl, name, want) expect_metric((r), (tmpl), (name), (double)(want), __FILE__, __LINE__)

/* ---- latency --------------------------------------------------------------- */

static void test_latency(void **state)
{
    (void)state;
    struct fx *f = fx_new(US_PER_S);
    uint16_t w = fx_wf(f, "w", 1);
    fx_consumer(f, w, "c");                       /* handler 0, template 0 */
    fx_start(f, PROMISE_NONE);
    /* Item i is published at 1000 i and committed 2 (i + 1) us later, so
     * the 100 latencies are 2, 4, ..., 200 (all below 256: exact). */
    for (int64_t i = 0; i < 100; i++) {
        int64_t t = 1000 * i;
        uint64_t it = pub(f, 0, t);
        start1(f, (uint64_t)i + 1, 0, (int64_t)it, t);
        end(f, (uint64_t)i + 1, OUT_COMMITTED, t + 2 * (i + 1));
    }
    /* Committing item 5 again is a duplicate, not a second latency sample. */
    start1(f, 101, 0, 5, 100000);
    end(f, 101, OUT_COMMITTED, 100050);
    const struct checker_result *r = fx_finish(f, 200000);
    for (int t = -1; t <= 0; t++) {
        EXPECT(r, t, "published", 100);
        EXPECT(r, t, "processed", 100);
        EXPECT(r, t, "duplicates", 1);
        EXPECT(r, t, "lost", 0);
        EXPECT(r, t, "runs", 101);
        EXPECT(r, t, "runs_empty", 0);
        /* nearest rank: p50 = 50th smallest = 100; p90 = 90th = 180;
         * p99 = 99th = 198; max 200; mean 2 * 5050 / 100 = 101 */
        EXPECT(r, t, "latency.p50", 100);
        EXPECT(r, t, "latency.p90", 180);
        EXPECT(r, t, "latency.p99", 198);
        EXPECT(r, t, "latency.max", 200);
        EXPECT(r, t, "latency.mean", 101);
    }
    assert_int_equal(r->total.latency.count, 100);
    fx_free(f);
}

/* Items never processed are in the latency distribution, censored at the
 * end (+infinity): a policy cannot look fast by losing its slowest work. */
static void test_latency_censored(void **state)
{
    (void)state;
    struct fx *f = fx_new(US_PER_S);
    uint16_t w = fx_wf(f, "w", 1);
    fx_consumer(f, w, "c");
    struct checker *c = fx_start(f, PROMISE_NONE);
    /* Ten items; 0..6 committed with latencies 10, 20, ..., 70; 7 dropped;
     * 8 taken by a run that crashed; 9 never taken (stranded). */
    for (uint64_t i = 0; i < 10; i++)
        pub(f, 0, 0);
    for (uint64_t i = 0; i < 7; i++)
        start1(f, i + 1, 0, (int64_t)i, 5);
    for (uint64_t i = 0; i < 7; i++)
        end(f, i + 1, OUT_COMMITTED, 10 * ((int64_t)i + 1));
    checker_drop(c, 7, DROP_EVICTED, 100);
    start1(f, 8, 0, 8, 110);
    end(f, 8, OUT_CRASHED, 120);
    const struct checker_result *r = fx_finish(f, 1000);
    for (int t = -1; t <= 0; t++) {
        EXPECT(r, t, "processed", 7);
        EXPECT(r, t, "lost", 3);
        /* 10, 20, ..., 70, inf, inf, inf: p50 = 5th = 50; p90 = 9th:
         * censored; the maximum and the mean too */
        EXPECT(r, t, "latency.p50", 50);
        EXPECT(r, t, "latency.p90", INFINITY);
        EXPECT(r, t, "latency.p99", INFINITY);
        EXPECT(r, t, "latency.max", INFINITY);
        EXPECT(r, t, "latency.mean", INFINITY);
    }
    assert_int_equal(r->total.latency.count, 7);
    assert_int_equal(r->total.latency.censored, 3);
    assert_int_equal(r->per_tmpl[0].latency.censored, 3);
    fx_free(f);
}

/* Latency runs from the item's origin (a source arrival), not its publish,
 * and large values are read from bucket midpoints. */
static void test_latency_origin(void **state)
{
    (void)state;
    struct fx *f = fx_new(US_PER_H);
    uint16_t w = fx_wf(f, "w", 1);
    fx_consumer(f, w, "c");
    struct checker *c = fx_start(f, PROMISE_NONE);
    checker_publish(c, 0, 0, 1000, 5000);         /* arrived at 1000, polled in at 5000 */
    checker_publish(c, 1, 0, 5000, 5000);
    checker_publish(c, 2, 0, 0, 5000);
    uint64_t all[] = {0, 1, 2};
    start(f, 1, 0, -1, all, 3, 6000);
    end(f, 1, OUT_COMMITTED, 7000);
    const struct checker_result *r = fx_finish(f, 10000);
    /* Latencies 6000, 2000 and 7000; mean 5000.  p90 is rank 3, the
     * maximum, known exactly: 7000.  p50 is rank 2, 6000, which lies in
     * [4096, 8192), cut into buckets of 32: [5984, 6015], midpoint 5999
     * (within the 1/256 bound). */
    EXPECT(r, -1, "latency.p50", 5999);
    EXPECT(r, -1, "latency.p90", 7000);
    EXPECT(r, -1, "latency.max", 7000);
    EXPECT(r, -1, "latency.mean", 5000);
    fx_free(f);
}

/* ---- duplicates and double effects ---------------------------------------- */

static void test_duplicates_double_effects(void **state)
{
    (void)state;
    struct fx *f = fx_new(US_PER_S);
    uint16_t w = fx_wf(f, "w", 1);
    fx_consumer(f, w, "c");                       /* handler 0, template 0 */
    fx_producer(f, w, "p");                       /* handler 1, template 1, no schedule */
    struct checker *c = fx_start(f, PROMISE_NONE);
    pub(f, 0, 0);
    pub(f, 0, 0);
    pub(f, 0, 0);
    uint64_t i01[] = {0, 1}, i12[] = {1, 2}, i1[] = {1}, i2[] = {2};
    start(f, 1, 0, -1, i01, 2, 10);
    /* Prefetch hints, in range and not, change nothing below. */
    checker_prefetch(c, 0, 0, UINT32_MAX, 0, CK_PREFETCH_MUTATION);
    checker_prefetch(c, 1, 0, 0, UINT32_MAX, CK_PREFETCH_END);
    checker_prefetch(c, 2, 7, 1, 3, CK_PREFETCH_END);
    checker_prefetch(c, 1, UINT32_MAX, UINT32_MAX, UINT32_MAX, CK_PREFETCH_START);
    checker_prefetch_deps(c, 1, 0, 1);
    checker_prefetch(c, 0, UINT32_MAX, UINT32_MAX, UINT32_MAX, CK_PREFETCH_START);
    checker_prefetch_deps(c, UINT32_MAX, UINT32_MAX, 1);
    checker_mutated(c, 1, 12);
    end(f, 1, OUT_COMMITTED, 15);                /* items 0, 1 processed */
    start(f, 2, 0, -1, i12, 2, 20);
    checker_mutated(c, 2, 22);                   /* item 1 mutated again: double effect 1 */
    end(f, 2, OUT_COMMITTED, 25);                /* item 1 committed again: duplicate 1 */
    /* Run 3 resumes run 2 at emitting: it reuses the mutation (no
     * checker_mutated), but its commit is one more for item 1. */
    checker_run_start(c, 3, 0, REASON_RECOVER, -1, 2, i1, 1, 30);
    end(f, 3, OUT_COMMITTED, 35);                /* duplicate 2 */
    start(f, 4, 0, -1, i2, 1, 40);
    checker_mutated(c, 4, 42);                   /* item 2 again: double effect 2 */
    end(f, 4, OUT_FAILED, 45);                   /* a failed run commits nothing */
    /* Producer units are (handler, due): due 0 committed twice is one
     * duplicate and, mutated twice, one double effect; due -1 names no
     * instant and is never a duplicate. */
    start(f, 5, 1, 0, NULL, 0, 50);
    checker_mutated(c, 5, 52);
    end(f, 5, OUT_COMMITTED, 55);
    start(f, 6, 1, 0, NULL, 0, 60);
    checker_mutated(c, 6, 62);
    end(f, 6, OUT_COMMITTED, 65);
    for (uint64_t run = 7; run <= 8; run++) {
        start(f, run, 1, -1, NULL, 0, (int64_t)run * 10);
        checker_mutated(c, run, (int64_t)run * 10 + 2);
        end(f, run, OUT_COMMITTED, (int64_t)run * 10 + 5);
    }
    const struct checker_result *r = fx_finish(f, 1000);
    EXPECT(r, 0, "duplicates", 2);
    EXPECT(r, 0, "double_effects", 2);
    EXPECT(r, 0, "processed", 3);
    EXPECT(r, 0, "runs", 4);
    EXPECT(r, 0, "runs_failed", 1);
    EXPECT(r, 1, "duplicates", 1);
    EXPECT(r, 1, "double_effects", 1);
    EXPECT(r, 1, "runs", 4);
    EXPECT(r, 1, "runs_empty", 0);               /* producer runs are never empty */
    EXPECT(r, -1, "duplicates", 3);
    EXPECT(r, -1, "double_effects", 3);
    EXPECT(r, -1, "runs", 8);
    /* Latency counts first commits only: items 0 and 1 at 15, item 2 at 25. */
    EXPECT(r, -1, "latency.max", 25);
    fx_free(f);
}

/* ---- dropped and stranded --------------------------------------------------- */

static void test_dropped_stranded(void **state)
{
    (void)state;
    struct fx *f = fx_new(US_PER_S);
    uint16_t w = fx_wf(f, "w", 1);
    fx_consumer(f, w, "c");
    struct checker *c = fx_start(f, PROMISE_NONE);
    for (int i = 0; i < 5; i++)
        pub(f, 0, 0);
    checker_drop(c, 0, DROP_EVICTED, 1);         /* dropped for good */
    checker_drop(c, 1, DROP_EVICTED, 2);         /* dropped, then processed anyway */
    uint64_t i12[] = {1, 2};
    start(f, 1, 0, -1, i12, 2, 3);
    end(f, 1, OUT_COMMITTED, 4);
    checker_drop(c, 4, DROP_EVICTED, 5);
    checker_drop(c, 4, DROP_CRASH, 6);           /* the same item again: still one */
    start1(f, 2, 0, 3, 7);
    end(f, 2, OUT_CUTOFF, 8);                    /* item 3 never committed: stranded */
    const struct checker_result *r = fx_finish(f, 100);
    for (int t = -1; t <= 0; t++) {
        EXPECT(r, t, "published", 5);
        EXPECT(r, t, "processed", 2);            /* 1 and 2 */
        EXPECT(r, t, "dropped", 2);              /* 0 and 4 */
        EXPECT(r, t, "stranded", 1);             /* 3 */
        EXPECT(r, t, "lost", 3);
        EXPECT(r, t, "runs_crashed", 0);
        EXPECT(r, t, "runs_cutoff", 1);          /* the cutoff run */
        EXPECT(r, t, "runs_failed", 0);
    }
    fx_free(f);
}

/* ---- schedules: dues, missed, coalesced, lateness ---------------------------- */

static void test_schedule_every(void **state)
{
    (void)state;
    /* every 100 us, horizon 600: dues 0, 100, 200, 300, 400, 500. */
    struct fx *f = fx_new(600);
    uint16_t w = fx_wf(f, "w", 1);
    fx_every(f, w, "p", 100, 0);                  /* handler 0, template 0 */
    uint16_t o = fx_wf(f, "o", 2);
    fx_at(f, o, "a", 300);                        /* handlers 1 and 2, template 1 */
    fx_start(f, PROMISE_NONE);
    /* Runs of p start at 2, 200, 410, 420.
     *   due   0: served by 2    lateness   2, on time (2 < 100)
     *   due 100: served by 200  lateness 100, missed (200 >= 100 + 100)
     *   due 200: served by 200  lateness   0, coalesced (run 200 served 100)
     *   due 300: served by 410  lateness 110, missed (410 >= 400)
     *   due 400: served by 410  lateness  10, coalesced
     *   due 500: no run at or after it: missed, lateness censored (+inf)
     * The run at 420 serves nothing (the first run >= 400 is 410). */
    int64_t starts[] = {2, 200, 410, 420};
    int64_t dues[] = {0, 200, 400, -1};
    for (int i = 0; i < 4; i++) {
        if (i == 2) {
            /* The one-shot `at 300`: instance 0 (handler 1) runs at 350
             * (lateness 50, not missed: a one-shot's period is unbounded);
             * instance 1 (handler 2) never runs: missed. */
            start(f, 10, 1, 300, NULL, 0, 350);
            end(f, 10, OUT_COMMITTED, 360);
        }
        start(f, (uint64_t)i + 1, 0, dues[i], NULL, 0, starts[i]);
        end(f, (uint64_t)i + 1, OUT_COMMITTED, starts[i] + 1);
    }
    const struct checker_result *r = fx_finish(f, 1000);
    EXPECT(r, 0, "dues", 6);
    EXPECT(r, 0, "missed", 3);
    EXPECT(r, 0, "coalesced", 2);
    /* samples 0, 2, 10, 100, 110 and due 500 censored: p50 = 3rd of 6 =
     * 10; p99 = 6th, censored: infinite; so are the maximum and the mean */
    EXPECT(r, 0, "lateness.p50", 10);
    EXPECT(r, 0, "lateness.p99", INFINITY);
    EXPECT(r, 0, "lateness.max", INFINITY);
    EXPECT(r, 0, "lateness.mean", INFINITY);
    EXPECT(r, 0, "runs", 4);
    EXPECT(r, 1, "dues", 2);
    EXPECT(r, 1, "missed", 1);
    EXPECT(r, 1, "coalesced", 0);
    /* 50, and instance 1's due never served */
    EXPECT(r, 1, "lateness.p50", 50);
    EXPECT(r, 1, "lateness.max", INFINITY);
    EXPECT(r, 1, "lateness.mean", INFINITY);
    /* total: samples 0, 2, 10, 50, 100, 110 and 2 censored: p50 = 4th of
     * 8 = 50; p99 = 8th: infinite */
    EXPECT(r, -1, "dues", 8);
    EXPECT(r, -1, "missed", 4);
    EXPECT(r, -1, "coalesced", 2);
    EXPECT(r, -1, "lateness.p50", 50);
    EXPECT(r, -1, "lateness.p99", INFINITY);
    EXPECT(r, -1, "lateness.mean", INFINITY);
    assert_int_equal(r->total.lateness.count, 6);
    assert_int_equal(r->total.lateness.censored, 2);
    assert_int_equal(r->per_tmpl[0].lateness.censored, 1);
    assert_int_equal(r->per_tmpl[1].lateness.censored, 1);
    fx_free(f);
}

/* A cron schedule's period is the gap to its next fire: for weekdays at
 * 09:00 the Friday fire has three days to be served. */
static void test_schedule_cron(void **state)
{
    (void)state;
    const int64_t H = US_PER_H, D = US_PER_DAY;
    struct fx *f = fx_new(7 * D);
    char err[CAL_ERR_MIN];
    assert_int_equal(cal_parse_instant("2025-01-03T00:00:00Z", &f->scn.start_utc_s, err, sizeof err), 0);
    assert_int_equal(cal_zone_get("UTC", &f->scn.zone, err, sizeof err), 0);
    uint16_t w = fx_wf(f, "w", 1);
    fx_producer(f, w, "p");
    struct handler_def *hd = &f->hd[w][0];
    hd->sched.kind = SCHED_CRON;
    hd->sched.zone = f->scn.zone;
    assert_int_equal(cal_cron_parse("0 9 * * 1-5", 0, &hd->sched.cron, err, sizeof err, NULL), 0);
    fx_start(f, PROMISE_NONE);
    /* 2025-01-03 is a Friday.  Dues in [0, 7 d): Fri 9h, Mon 3d9h, Tue
     * 4d9h, Wed 5d9h, Thu 6d9h.
     *   Fri: run Sat 10:00 (1d10h): lateness 25 h; period 72 h: not missed
     *   Mon: run at 3d9h + 1 s: lateness 1 s
     *   Tue: run Wed 10:00 (5d10h): lateness 25 h; period 24 h: missed
     *   Wed: the same run: lateness 1 h, coalesced
     *   Thu: no run after it: missed, lateness censored */
    int64_t starts[] = {D + 10 * H, 3 * D + 9 * H + US_PER_S, 5 * D + 10 * H};
    for (int i = 0; i < 3; i++) {
        start(f, (uint64_t)i + 1, 0, -1, NULL, 0, starts[i]);
        end(f, (uint64_t)i + 1, OUT_COMMITTED, starts[i] + US_PER_S);
    }
    const struct checker_result *r = fx_finish(f, 8 * D);
    EXPECT(r, 0, "dues", 5);
    EXPECT(r, 0, "missed", 2);
    EXPECT(r, 0, "coalesced", 1);
    /* 1 s, 1 h, 25 h, 25 h and Thursday's censored: the maximum and the
     * mean are infinite; the four finite samples sum to 51 h + 1 s */
    EXPECT(r, 0, "lateness.max", INFINITY);
    EXPECT(r, 0, "lateness.mean", INFINITY);
    assert_int_equal(r->per_tmpl[0].lateness.count, 4);
    assert_int_equal(r->per_tmpl[0].lateness.max_us, 25 * H);
    assert_true(r->per_tmpl[0].lateness.sum_us == (double)(51 * H + US_PER_S));
    assert_int_equal(r->per_tmpl[0].lateness.censored, 1);
    fx_free(f);
    cal_zone_cache_free();
}

/* ---- busy loops ---------------------------------------------------------------- */

static void test_busy_loops(void **state)
{
    (void)state;
    struct fx *f = fx_new(US_PER_S);
    uint16_t w = fx_wf(f, "w", 1);
    fx_consumer(f, w, "c");                       /* handler 0, template 0 */
    fx_producer(f, w, "p");                       /* handler 1, template 1 */
    struct checker *c = fx_start(f, PROMISE_NONE);
    start1(f, 1, 0, -1, 10);                     /* first run, nothing ever arrived: busy 1 */
    end(f, 1, OUT_COMMITTED, 11);
    uint64_t it0 = pub(f, 0, 20);
    start1(f, 2, 0, (int64_t)it0, 30);           /* took work: not empty */
    end(f, 2, OUT_COMMITTED, 31);
    start1(f, 3, 0, -1, 40);                     /* no input since 30: busy 2 */
    checker_wake_request(c, 0, 100, 41);         /* its script asks for 100 */
    end(f, 3, OUT_COMMITTED, 42);
    start1(f, 4, 0, -1, 60);                     /* the wake is not due yet: busy 3 */
    end(f, 4, OUT_COMMITTED, 61);
    start1(f, 5, 0, -1, 100);                    /* wake 100 came due in (60, 100]: input */
    end(f, 5, OUT_COMMITTED, 101);
    start1(f, 6, 0, -1, 120);                    /* that wake was already seen: busy 4 */
    end(f, 6, OUT_COMMITTED, 121);
    pub(f, 0, 130);                              /* published but not taken (say a batch script) */
    start1(f, 7, 0, -1, 140);                    /* new publish since 120: input */
    checker_wake_request(c, 0, 150, 141);
    end(f, 7, OUT_COMMITTED, 141);
    start1(f, 8, 0, -1, 150);                    /* wake 150 in (140, 150]: input */
    end(f, 8, OUT_COMMITTED, 151);
    start1(f, 9, 0, -1, 160);                    /* busy 5 */
    checker_wake_request(c, 0, 155, 161);        /* asks for an instant already past */
    end(f, 9, OUT_COMMITTED, 161);
    start1(f, 10, 0, -1, 170);                   /* 155 is not in (160, 170]: busy 6 */
    end(f, 10, OUT_COMMITTED, 171);
    start(f, 11, 1, -1, NULL, 0, 200);           /* a producer run is never empty */
    end(f, 11, OUT_COMMITTED, 201);
    checker_wakeups(c, 5);
    checker_wakeups(c, 7);
    const struct checker_result *r = fx_finish(f, 1000);
    EXPECT(r, 0, "runs", 10);
    EXPECT(r, 0, "runs_empty", 9);
    EXPECT(r, 0, "busy_loops", 6);
    EXPECT(r, 1, "runs", 1);
    EXPECT(r, 1, "runs_empty", 0);
    EXPECT(r, 1, "busy_loops", 0);
    EXPECT(r, -1, "busy_loops", 6);
    EXPECT(r, -1, "wakeups", 12);
    EXPECT(r, -1, "stranded", 1);
    double v;
    assert_int_equal(metric_get(r, 0, "wakeups", &v), -1);   /* not per handler */
    fx_free(f);
}

/* ---- overlaps ------------------------------------------------------------------ */

/* Handlers a (0) and b (1) of one workflow instance:
 *   run 1 a [0, 100)   run 2 a [50, 120)   run 3 a [60, 110)
 *   run 4 b [115, 130)
 *   runs 5, 6 of a start at 200 and 210 and are interrupted by a crash at 250
 *   runs 7, 8 of a start at 400 and 450 and are still active at the end, 500. */
static const struct checker_result *overlap_timeline(struct fx *f, enum promise promise)
{
    uint16_t w = fx_wf(f, "w", 1);
    fx_consumer(f, w, "a");
    fx_consumer(f, w, "b");
    struct checker *c = fx_start(f, promise);
    start1(f, 1, 0, -1, 0);
    start1(f, 2, 0, -1, 50);
    start1(f, 3, 0, -1, 60);
    end(f, 1, OUT_COMMITTED, 100);
    end(f, 3, OUT_COMMITTED, 110);
    start1(f, 4, 1, -1, 115);
    end(f, 2, OUT_COMMITTED, 120);
    end(f, 4, OUT_COMMITTED, 130);
    start1(f, 5, 0, -1, 200);
    start1(f, 6, 0, -1, 210);
    checker_crash(c, CRASH_HOST, 0, 250);
    end(f, 5, OUT_CRASHED, 250);
    end(f, 6, OUT_CRASHED, 250);
    checker_restart(c, CRASH_HOST, 0, 300);
    start1(f, 7, 0, -1, 400);
    start1(f, 8, 0, -1, 450);
    return fx_finish(f, 500);
}

static void test_overlaps_handler(void **state)
{
    (void)state;
    struct fx *f = fx_new(US_PER_S);
    const struct checker_result *r = overlap_timeline(f, PROMISE_HANDLER);
    /* Runs of a: two or more active in [50, 110) = 60, [210, 250) = 40 and
     * [450, 500) = 50: 150 us.  Runs started while another of a was
     * active: 2, 3, 6, 8.  b runs alone. */
    EXPECT(r, 0, "overlaps", 150);
    EXPECT(r, 0, "overlap_runs", 4);
    EXPECT(r, 1, "overlaps", 0);
    EXPECT(r, 1, "overlap_runs", 0);
    EXPECT(r, -1, "overlaps", 150);
    EXPECT(r, -1, "overlap_runs", 4);
    EXPECT(r, 0, "runs_crashed", 2);
    fx_free(f);
}

static void test_overlaps_workflow(void **state)
{
    (void)state;
    struct fx *f = fx_new(US_PER_S);
    const struct checker_result *r = overlap_timeline(f, PROMISE_WORKFLOW);
    /* All runs share the workflow.  [50, 110) opened by run 2 (a): 60;
     * [115, 120) opened by run 4 (b, while run 2 of a is active): 5;
     * [210, 250) and [450, 500) opened by a: 40 + 50.
     * a: 150 us over runs 2, 3, 6, 8; b: 5 us, run 4. */
    EXPECT(r, 0, "overlaps", 150);
    EXPECT(r, 0, "overlap_runs", 4);
    EXPECT(r, 1, "overlaps", 5);
    EXPECT(r, 1, "overlap_runs", 1);
    EXPECT(r, -1, "overlaps", 155);
    EXPECT(r, -1, "overlap_runs", 5);
    fx_free(f);
}

static void test_overlaps_none(void **state)
{
    (void)state;
    struct fx *f = fx_new(US_PER_S);
    const struct checker_result *r = overlap_timeline(f, PROMISE_NONE);
    EXPECT(r, -1, "overlaps", 0);
    EXPECT(r, -1, "overlap_runs", 0);
    fx_free(f);
}

/* PROMISE_UNIT: runs overlap only when they hold the same unit.  Consumer c
 * with items 0 and 1; producer p (handler 1) with dues 0 and 1000.
 *   run 1 takes item 0 in [10, 100); run 2 takes item 1 in [20, 60): two
 *   runs of one handler, but different units: no overlap.
 *   run 3 takes item 0 again in [50, 130): item 0 doubled in [50, 100): 50.
 *   runs 4 and 5 of p serve due 1000 in [1000, 1100) and [1040, 1200):
 *   doubled [1040, 1100): 60; run 6 serves due 0 in [1050, 1060): alone.
 *   runs 7 and 8 take both items in [1500, 1600) and [1550, 1650): two
 *   units doubled in [1550, 1600): 2 x 50, summed over units.
 * overlaps: c 50 + 100, p 60; overlap_runs: c 2 (runs 3, 8), p 1 (run 5). */
static void test_overlaps_unit(void **state)
{
    (void)state;
    struct fx *f = fx_new(2000);
    uint16_t w = fx_wf(f, "w", 1);
    fx_consumer(f, w, "c");
    fx_every(f, w, "p", 1000, 0);
    struct checker *c = fx_start(f, PROMISE_UNIT);
    (void)c;
    pub(f, 0, 0);
    pub(f, 0, 0);
    start1(f, 1, 0, 0, 10);
    start1(f, 2, 0, 1, 20);
    start1(f, 3, 0, 0, 50);
    end(f, 2, OUT_COMMITTED, 60);
    end(f, 1, OUT_COMMITTED, 100);
    end(f, 3, OUT_COMMITTED, 130);
    start(f, 4, 1, 1000, NULL, 0, 1000);
    start(f, 5, 1, 1000, NULL, 0, 1040);
    start(f, 6, 1, 0, NULL, 0, 1050);
    end(f, 6, OUT_COMMITTED, 1060);
    end(f, 4, OUT_COMMITTED, 1100);
    end(f, 5, OUT_COMMITTED, 1200);
    static const uint64_t both[] = {0, 1};
    start(f, 7, 0, -1, both, 2, 1500);
    start(f, 8, 0, -1, both, 2, 1550);
    end(f, 7, OUT_COMMITTED, 1600);
    end(f, 8, OUT_COMMITTED, 1650);
    const struct checker_result *r = fx_finish(f, 2000);
    EXPECT(r, 0, "overlaps", 150);
    EXPECT(r, 0, "overlap_runs", 2);
    EXPECT(r, 1, "overlaps", 60);
    EXPECT(r, 1, "overlap_runs", 1);
    EXPECT(r, -1, "overlaps", 210);
    fx_free(f);
}

/* ---- crashes --------------------------------------------------------------------- */

static void test_crash_recovery(void **state)
{
    (void)state;
    struct fx *f = fx_new(3000);
    f->scn.recovery_bound_us = 500;
    uint16_t w = fx_wf(f, "w", 1);
    fx_consumer(f, w, "c");                       /* handler 0 */
    fx_every(f, w, "p", 1000, 0);                 /* handler 1: dues 0, 1000, 2000 */
    struct checker *c = fx_start(f, PROMISE_HANDLER);
    start(f, 1, 1, 0, NULL, 0, 0);
    end(f, 1, OUT_COMMITTED, 10);
    pub(f, 0, 100);                               /* item 0 */
    pub(f, 0, 100);                               /* item 1 */
    start1(f, 2, 0, 0, 100);
    checker_mutated(c, 2, 105);
    end(f, 2, OUT_COMMITTED, 110);
    start1(f, 3, 0, 1, 150);
    checker_crash(c, CRASH_HOST, 0, 160);
    end(f, 3, OUT_CRASHED, 160);                  /* before its mutation */
    /* Restart at 400: item 1 is pending, so work is due.  Run 4 takes it
     * and commits: the first run after the restart that makes progress
     * starts at 450, recovery 50 (bound 500). */
    checker_restart(c, CRASH_HOST, 0, 400);
    start1(f, 4, 0, 1, 450);
    checker_mutated(c, 4, 455);                   /* first application to item 1 */
    end(f, 4, OUT_COMMITTED, 460);
    start(f, 5, 1, 1000, NULL, 0, 1000);
    end(f, 5, OUT_COMMITTED, 1010);
    start(f, 6, 1, 2000, NULL, 0, 2000);
    end(f, 6, OUT_COMMITTED, 2010);
    /* A second crash with nothing due at its restart (no pending item, the
     * next due 3000 is at the horizon): recovery 0. */
    checker_crash(c, CRASH_HOST, 0, 3000);
    checker_restart(c, CRASH_HOST, 0, 3100);
    const struct checker_result *r = fx_finish(f, 5000);
    assert_int_equal(r->ncrashes, 2);
    const struct crash_rec *k = &r->crashes[0];
    assert_int_equal(k->target, CRASH_HOST);
    assert_int_equal(k->at_us, 160);
    assert_int_equal(k->restart_us, 400);
    assert_int_equal(k->recovery_time_us, 50);
    assert_int_equal(k->stuck, 0);
    assert_int_equal(k->lost, 0);
    assert_int_equal(k->double_effects, 0);
    assert_true(k->ok);
    k = &r->crashes[1];
    assert_int_equal(k->recovery_time_us, 0);
    assert_true(k->ok);
    EXPECT(r, -1, "crashes", 2);
    EXPECT(r, -1, "recovery_ok", 1);
    EXPECT(r, -1, "recovery_time", 50);
    EXPECT(r, -1, "stuck", 0);
    EXPECT(r, -1, "lost", 0);
    EXPECT(r, 0, "runs_crashed", 1);
    EXPECT(r, 1, "dues", 3);
    EXPECT(r, 1, "missed", 0);
    EXPECT(r, 1, "lateness.max", 0);
    fx_free(f);
}

static void test_crash_recovery_too_slow(void **state)
{
    (void)state;
    struct fx *f = fx_new(US_PER_S);
    f->scn.recovery_bound_us = 100;
    uint16_t w = fx_wf(f, "w", 1);
    fx_consumer(f, w, "c");
    struct checker *c = fx_start(f, PROMISE_NONE);
    pub(f, 0, 0);
    checker_crash(c, CRASH_HOST, 0, 10);
    checker_restart(c, CRASH_HOST, 0, 20);
    /* An empty run is not progress; the first that is starts at 500. */
    start1(f, 1, 0, -1, 30);
    end(f, 1, OUT_COMMITTED, 31);
    start1(f, 2, 0, 0, 500);
    end(f, 2, OUT_COMMITTED, 510);
    const struct checker_result *r = fx_finish(f, 1000);
    assert_int_equal(r->crashes[0].recovery_time_us, 480);
    assert_false(r->crashes[0].ok);               /* 480 > bound 100 */
    EXPECT(r, -1, "recovery_ok", 0);
    EXPECT(r, -1, "recovery_time", 480);
    fx_free(f);
}

static void test_crash_stuck(void **state)
{
    (void)state;
    struct fx *f = fx_new(10000);
    uint16_t w = fx_wf(f, "w", 1);
    fx_consumer(f, w, "c1");                      /* handler 0 */
    fx_consumer(f, w, "c2");                      /* handler 1 */
    fx_every(f, w, "p", 1000, 0);                 /* handler 2 */
    struct checker *c = fx_start(f, PROMISE_NONE);
    pub(f, 0, 10);                                /* item 0 for c1, never taken */
    start1(f, 1, 1, -1, 15);
    checker_crash(c, CRASH_HOST, 0, 20);
    end(f, 1, OUT_CRASHED, 20);                   /* c2's run is interrupted */
    checker_restart(c, CRASH_HOST, 0, 100);
    start(f, 2, 2, 0, NULL, 0, 200);             /* p serves due 0 and commits: progress */
    end(f, 2, OUT_COMMITTED, 210);
    checker_crash(c, CRASH_HOST, 0, 5000);
    checker_restart(c, CRASH_HOST, 0, 5100);
    const struct checker_result *r = fx_finish(f, 20000);
    /* Restart 1 (100): due work for c1 (item 0 pending), c2 (its run was
     * interrupted), p (due 0 unserved).  c1 and c2 never run again: stuck
     * 2.  p runs at 200: recovery 100.  Item 0 was pending at the crash and
     * is never processed: lost 1. */
    const struct crash_rec *k = &r->crashes[0];
    assert_int_equal(k->stuck, 2);
    assert_int_equal(k->recovery_time_us, 100);
    assert_int_equal(k->lost, 1);
    assert_false(k->ok);
    /* Restart 2 (5100): c1 still has item 0; p's dues 1000..5000 are
     * unserved since its last start at 200; c2 has nothing due.  Neither
     * c1 nor p runs again: stuck 2; no run makes progress: recovery -1;
     * item 0 again lost. */
    k = &r->crashes[1];
    assert_int_equal(k->stuck, 2);
    assert_int_equal(k->recovery_time_us, -1);
    assert_int_equal(k->lost, 1);
    assert_false(k->ok);
    EXPECT(r, -1, "stuck", 4);
    EXPECT(r, -1, "recovery_time", -1);
    EXPECT(r, -1, "recovery_ok", 0);
    EXPECT(r, -1, "stranded", 1);
    /* p: dues 0..9000 (10); due 0 served at 200 (on time); the rest have no
     * run after them: missed 9, and 9 censored lateness samples. */
    EXPECT(r, 2, "dues", 10);
    EXPECT(r, 2, "missed", 9);
    EXPECT(r, 2, "lateness.max", INFINITY);
    assert_int_equal(r->per_tmpl[2].lateness.count, 1);
    assert_int_equal(r->per_tmpl[2].lateness.max_us, 200);
    assert_int_equal(r->per_tmpl[2].lateness.censored, 9);
    EXPECT(r, 1, "busy_loops", 1);               /* c2's first run had no input */
    fx_free(f);
}

static void test_crash_loses_items(void **state)
{
    (void)state;
    struct fx *f = fx_new(US_PER_S);
    f->scn.recovery_bound_us = 1000;
    uint16_t w = fx_wf(f, "w", 1);
    fx_consumer(f, w, "c");
    struct checker *c = fx_start(f, PROMISE_NONE);
    pub(f, 0, 10);                                /* items 0, 1, 2 */
    pub(f, 0, 10);
    pub(f, 0, 10);
    start1(f, 1, 0, 0, 20);
    checker_mutated(c, 1, 22);
    end(f, 1, OUT_COMMITTED, 30);
    start1(f, 2, 0, 0, 35);                       /* item 0 redelivered before any crash */
    checker_mutated(c, 2, 36);                    /* double effect, not a crash's */
    end(f, 2, OUT_COMMITTED, 37);
    /* The host crash takes the policy's volatile queue with it. */
    checker_crash(c, CRASH_HOST, 0, 50);
    checker_drop(c, 1, DROP_CRASH, 50);
    checker_drop(c, 2, DROP_CRASH, 50);
    pub(f, 0, 60);                                /* item 3, published while down */
    checker_drop(c, 3, DROP_CRASH, 60);
    checker_restart(c, CRASH_HOST, 0, 100);       /* nothing pending: recovery 0 */
    start1(f, 3, 0, 0, 150);                      /* item 0 once more, after the restart */
    checker_mutated(c, 3, 151);                   /* double effect of crash 1 */
    end(f, 3, OUT_COMMITTED, 152);
    pub(f, 0, 200);                               /* item 4 */
    start1(f, 4, 0, 4, 210);
    end(f, 4, OUT_COMMITTED, 220);
    /* A worker crash: a double effect while it is down belongs to no
     * crash (only after a restart, until the next crash). */
    checker_crash(c, CRASH_WORKER, 0, 300);
    start1(f, 5, 0, 0, 310);
    checker_mutated(c, 5, 311);
    end(f, 5, OUT_COMMITTED, 312);
    checker_restart(c, CRASH_WORKER, 0, 400);
    const struct checker_result *r = fx_finish(f, 1000);
    /* Crash 1: items 1, 2 (pending at it, dropped at it) and 3 (dropped
     * at it) are never processed: lost 3.  One double effect after its
     * restart.  Nothing was due at the restart: recovery 0. */
    const struct crash_rec *k = &r->crashes[0];
    assert_int_equal(k->lost, 3);
    assert_int_equal(k->double_effects, 1);
    assert_int_equal(k->recovery_time_us, 0);
    assert_int_equal(k->stuck, 0);
    assert_false(k->ok);
    /* Crash 2: nothing pending at it, nothing lost, no double effect after
     * its restart. */
    k = &r->crashes[1];
    assert_int_equal(k->target, CRASH_WORKER);
    assert_int_equal(k->lost, 0);
    assert_int_equal(k->double_effects, 0);
    assert_int_equal(k->recovery_time_us, 0);
    assert_true(k->ok);
    EXPECT(r, -1, "published", 5);
    EXPECT(r, -1, "processed", 2);
    EXPECT(r, -1, "dropped", 3);
    EXPECT(r, -1, "stranded", 0);
    EXPECT(r, -1, "lost", 3);
    EXPECT(r, -1, "duplicates", 3);
    EXPECT(r, -1, "double_effects", 3);
    EXPECT(r, -1, "recovery_ok", 0);
    EXPECT(r, -1, "recovery_time", 0);
    fx_free(f);
}

/* Restarts match the oldest crash of the same part still down; a crash
 * with no restart never recovers. */
static void test_crash_matching(void **state)
{
    (void)state;
    struct fx *f = fx_new(US_PER_S);
    uint16_t w = fx_wf(f, "w", 1);
    fx_consumer(f, w, "c");
    struct checker *c = fx_start(f, PROMISE_NONE);
    checker_crash(c, CRASH_WORKER, 0, 10);
    checker_crash(c, CRASH_WORKER, 1, 20);
    checker_restart(c, CRASH_WORKER, 1, 30);
    checker_restart(c, CRASH_WORKER, 0, 40);
    checker_crash(c, CRASH_SERVER, 0, 50);
    const struct checker_result *r = fx_finish(f, 100);
    assert_int_equal(r->ncrashes, 3);
    assert_int_equal(r->crashes[0].index, 0);
    assert_int_equal(r->crashes[0].restart_us, 40);
    assert_int_equal(r->crashes[1].index, 1);
    assert_int_equal(r->crashes[1].restart_us, 30);
    assert_true(r->crashes[0].ok);
    assert_true(r->crashes[1].ok);
    assert_int_equal(r->crashes[2].target, CRASH_SERVER);
    assert_true(r->crashes[2].restart_us == SIM_NEVER);
    assert_int_equal(r->crashes[2].recovery_time_us, -1);
    assert_false(r->crashes[2].ok);
    EXPECT(r, -1, "recovery_ok", 0);
    EXPECT(r, -1, "recovery_time", -1);
    EXPECT(r, -1, "crashes", 3);
    fx_free(f);
}

/* ---- names and the empty simulation ------------------------------------------- */

static void test_names(void **state)
{
    (void)state;
    static const char *const want[] = {
        "published", "processed", "lost", "dropped", "stranded", "duplicates", "double_effects", "dues",
        "missed", "coalesced", "runs", "runs_empty", "runs_failed", "runs_crashed", "runs_cutoff", "busy_loops", "wakeups",
        "overlaps", "overlap_runs", "latency.p50", "latency.p90", "latency.p99", "latency.max", "latency.mean",
        "lateness.p50", "lateness.p99", "lateness.max", "lateness.mean", "crashes", "recovery_ok", "stuck",
        "recovery_time", "livelock", "deliveries", "dup_deliveries", "undelivered",
    };
    assert_int_equal(metric_count, (int)(sizeof want / sizeof want[0]));
    for (int i = 0; i < metric_count; i++) {
        assert_string_equal(metric_table[i].name, want[i]);
        assert_ptr_equal(metric_find(want[i]), &metric_table[i]);
        assert_non_null(metric_table[i].help);
        const char *n = want[i];
        int global = !strcmp(n, "wakeups") || !strcmp(n, "crashes") || !strcmp(n, "recovery_ok") ||
                     !strcmp(n, "stuck") || !strcmp(n, "recovery_time") || !strcmp(n, "livelock");
        assert_int_equal(metric_table[i].per_handler, !global);
        int dur = !strcmp(n, "overlaps") || !strcmp(n, "recovery_time") || !strncmp(n, "latency.", 8) ||
                  !strncmp(n, "lateness.", 9);
        assert_int_equal(metric_table[i].is_duration, dur);
        assert_int_equal(metric_table[i].is_bool, !strcmp(n, "recovery_ok") || !strcmp(n, "livelock"));
    }
    assert_null(metric_find("latency.p42"));
    assert_null(metric_find(""));
    static const char *const reasons[] = {"schedule", "event", "wake", "retry", "manual", "poll",
                                          "recover", "tick", "heartbeat", "cron", "other"};
    for (int i = 0; i < REASON_COUNT; i++)
        assert_string_equal(run_reason_name((enum run_reason)i), reasons[i]);
    assert_string_equal(run_outcome_name(OUT_COMMITTED), "committed");
    assert_string_equal(run_outcome_name(OUT_FAILED), "failed");
    assert_string_equal(run_outcome_name(OUT_CRASHED), "crashed");
    assert_string_equal(run_outcome_name(OUT_CUTOFF), "cutoff");
}

static void test_empty(void **state)
{
    (void)state;
    struct fx *f = fx_new(US_PER_S);
    uint16_t w = fx_wf(f, "w", 3);
    fx_consumer(f, w, "c");
    fx_every(f, w, "p", 400 * US_PER_MS, 0);      /* dues 0, 0.4 s, 0.8 s per instance */
    fx_start(f, PROMISE_WORKFLOW);
    const struct checker_result *r = fx_finish(f, 2 * US_PER_S);
    assert_int_equal(r->ntmpl, 2);
    for (int i = 0; i < metric_count; i++) {
        const char *n = metric_table[i].name;
        double want = 0;
        if (!strcmp(n, "recovery_ok"))
            want = 1;
        else if (!strcmp(n, "dues") || !strcmp(n, "missed"))
            want = 9;
        else if (!strncmp(n, "lateness.", 9))
            want = INFINITY;               /* nine dues, none served: all censored */
        EXPECT(r, -1, n, want);
    }
    EXPECT(r, 1, "dues", 9);
    double v;
    assert_int_equal(metric_get(r, 2, "runs", &v), -1);      /* no such template */
    assert_int_equal(metric_get(r, -2, "runs", &v), -1);
    assert_int_equal(metric_get(r, -1, "nope", &v), -1);
    fx_free(f);
}

/* ---- random ground truth against a brute-force model ---------------------------- */

/* The model records everything with a global sequence number (the order
 * of the calls) and recomputes each crash's lost, stuck, recovery time and
 * double effects, and the totals, by direct definition: quadratic, and
 * fine for a few thousand facts. */

#define NEVER_SEQ UINT64_MAX

struct m_item {
    uint32_t h;
    uint64_t pub_seq, proc_seq, drop_seq;
    int drop_crash;                /* crash the first drop belongs to (DROP_CRASH), -1 */
    int mutated, commits;
};

struct m_run {
    uint32_t h;
    uint64_t start_seq;
    int64_t start_us;
    int active, progress;
    uint64_t *taken;
    uint32_t n;
    int64_t due_us;
};

struct m_crash {
    uint64_t seq, restart_seq;
    int64_t at_us, restart_us;
    int target;
    uint32_t index;
    uint64_t de;
    int interrupted[16];           /* per handler */
};

struct model {
    struct fx *f;
    struct checker *c;
    uint64_t seq;
    int64_t now;
    struct m_item items[4000];
    uint64_t nitems;
    struct m_run runs[4000];
    uint64_t nruns;
    struct m_crash crashes[64];
    int ncrashes;
    int last_event_crash;          /* -1: last crash/restart event was a crash or none; else restarted crash */
    uint64_t duplicates, double_effects;
    /* producer units */
    int64_t committed_due[16][256];
    int ncommitted_due[16];
    int64_t mutated_due[16][256];
    int nmutated_due[16];
};

static struct rng m_rng;

static uint32_t m_rand(uint32_t n) { return (uint32_t)rng_below(&m_rng, n); }

static int m_open_latest(const struct model *m)
{
    for (int k = m->ncrashes - 1; k >= 0; k--)
        if (m->crashes[k].restart_seq == NEVER_SEQ)
            return k;
    return m->ncrashes - 1;
}

static void m_double_effect(struct model *m)
{
    m->double_effects++;
    if (m->last_event_crash >= 0)
        m->crashes[m->last_event_crash].de++;
}

static int due_set_has(int64_t *v, int *n, int64_t x, int add)
{
    for (int i = 0; i < *n; i++)
        if (v[i] == x)
            return 1;
    if (add) {
        assert_true(*n < 256);
        v[(*n)++] = x;
    }
    return 0;
}

/* Handlers: per instance, consumers 3k and 3k+1, producer 3k+2 (every 50). */
static int m_is_producer(uint32_t h)
{
    return h % 3 == 2;
}

static void m_step(struct model *m)
{
    struct checker *c = m->c;
    m->now += m_rand(4);
    int host_down = 0;
    for (int k = 0; k < m->ncrashes; k++)
        if (m->crashes[k].restart_seq == NEVER_SEQ && m->crashes[k].target == CRASH_HOST)
            host_down = 1;
    uint32_t nh = m->f->w.nh;
    uint32_t what = m_rand(100);
    if (what < 25 && m->nitems < 4000) {
        uint32_t h = m_rand(nh);
        if (m_is_producer(h))
            h--;
        m->items[m->nitems] = (struct m_item){.h = h, .pub_seq = m->seq++, .proc_seq = NEVER_SEQ,
                                              .drop_seq = NEVER_SEQ, .drop_crash = -1};
        checker_publish(c, m->nitems, h, m->now, m->now);
        m->nitems++;
    } else if (what < 47 && !host_down && m->nruns < 3999) {
        uint32_t h = m_rand(nh);
        struct m_run *r = &m->runs[++m->nruns];
        *r = (struct m_run){.h = h, .start_seq = m->seq++, .start_us = m->now, .active = 1, .due_us = -1};
        if (m_is_producer(h)) {
            r->due_us = m_rand(3) ? (m->now / 50) * 50 : -1;
        } else {
            /* Take some unprocessed items of h (sometimes dropped ones too). */
            r->taken = calloc(8, sizeof *r->taken);
            assert_non_null(r->taken);
            for (uint64_t i = 0; i < m->nitems && r->n < 8; i++) {
                const struct m_item *it = &m->items[i];
                if (it->h == h && (it->proc_seq == NEVER_SEQ || m_rand(10) == 0) &&
                    (it->drop_seq == NEVER_SEQ || m_rand(4) == 0) && m_rand(3))
                    r->taken[r->n++] = i;
            }
        }
        checker_run_start(c, m->nruns, h, REASON_OTHER, r->due_us, 0, r->taken, r->n, m->now);
    } else if (what < 80) {
        /* End or mutate a random active run. */
        uint64_t id = 1 + m_rand((uint32_t)(m->nruns ? m->nruns : 1));
        struct m_run *r = &m->runs[id];
        if (id > m->nruns || !r->active)
            return;
        if (m_rand(3) == 0) {
            m->seq++;
            for (uint32_t i = 0; i < r->n; i++) {
                struct m_item *it = &m->items[r->taken[i]];
                if (it->mutated++)
                    m_double_effect(m);
            }
            if (m_is_producer(r->h) && r->due_us >= 0 &&
                due_set_has(m->mutated_due[r->h], &m->nmutated_due[r->h], r->due_us, 1))
                m_double_effect(m);
            checker_mutated(c, id, m->now);
            return;
        }
        enum run_outcome out = m_rand(4) == 0 ? OUT_FAILED : OUT_COMMITTED;
        uint64_t s = m->seq++;
        if (out == OUT_COMMITTED) {
            for (uint32_t i = 0; i < r->n; i++) {
                struct m_item *it = &m->items[r->taken[i]];
                if (it->commits++)
                    m->duplicates++;
                else
                    it->proc_seq = s;
            }
            if (m_is_producer(r->h) && r->due_us >= 0 &&
                due_set_has(m->committed_due[r->h], &m->ncommitted_due[r->h], r->due_us, 1))
                m->duplicates++;
            r->progress = r->n > 0 || m_is_producer(r->h);
        }
        r->active = 0;
        checker_run_end(c, id, out, m->now);
    } else if (what < 85 && m->nitems) {
        uint64_t i = m_rand((uint32_t)m->nitems);
        enum drop_cause cause = m_rand(2) ? DROP_CRASH : DROP_EVICTED;
        struct m_item *it = &m->items[i];
        uint64_t s = m->seq++;
        if (it->drop_seq == NEVER_SEQ) {
            it->drop_seq = s;
            it->drop_crash = cause == DROP_CRASH ? m_open_latest(m) : -1;
        }
        checker_drop(c, i, cause, m->now);
    } else if (what < 87 && m->ncrashes < 60) {
        /* Crash the host or a worker (if not already down). */
        int target = m_rand(2) ? CRASH_HOST : CRASH_WORKER;
        uint32_t index = target == CRASH_WORKER ? m_rand(2) : 0;
        for (int k = 0; k < m->ncrashes; k++)
            if (m->crashes[k].restart_seq == NEVER_SEQ && m->crashes[k].target == target &&
                m->crashes[k].index == index)
                return;
        struct m_crash *k = &m->crashes[m->ncrashes];
        *k = (struct m_crash){.seq = m->seq++, .restart_seq = NEVER_SEQ, .at_us = m->now,
                              .restart_us = SIM_NEVER, .target = target, .index = index};
        m->ncrashes++;
        m->last_event_crash = -1;
        checker_crash(c, target, index, m->now);
        if (target == CRASH_HOST) {
            /* Every active run is interrupted. */
            for (uint64_t id = 1; id <= m->nruns; id++) {
                struct m_run *r = &m->runs[id];
                if (!r->active)
                    continue;
                m->seq++;
                r->active = 0;
                k->interrupted[r->h] = 1;
                checker_run_end(c, id, OUT_CRASHED, m->now);
            }
        }
    } else {
        /* Restart the oldest crash still down. */
        for (int k = 0; k < m->ncrashes; k++) {
            struct m_crash *cr = &m->crashes[k];
            if (cr->restart_seq != NEVER_SEQ)
                continue;
            cr->restart_seq = m->seq++;
            cr->restart_us = m->now;
            m->last_event_crash = k;
            checker_restart(c, cr->target, cr->index, m->now);
            return;
        }
    }
}

static int m_pending_at(const struct m_item *it, uint64_t s)
{
    return it->pub_seq < s && it->proc_seq > s && it->drop_seq > s;
}

/* Has producer h a due instant <= restart that no run started before the
 * restart serves (a run at or after it)? */
static int m_producer_due(const struct model *m, uint32_t h, const struct m_crash *k, int64_t horizon_us)
{
    int64_t last = -1;
    for (uint64_t id = 1; id <= m->nruns; id++)
        if (m->runs[id].h == h && m->runs[id].start_seq < k->restart_seq)
            last = m->runs[id].start_us;
    int64_t next = last < 0 ? 0 : (last / 50 + 1) * 50;
    return next < horizon_us && next <= k->restart_us;
}

static void m_check(struct model *m, const struct checker_result *r, int64_t horizon_us, int64_t bound_us)
{
    assert_int_equal(r->ncrashes, (uint32_t)m->ncrashes);
    uint32_t nh = m->f->w.nh;
    for (int kk = 0; kk < m->ncrashes; kk++) {
        const struct m_crash *k = &m->crashes[kk];
        const struct crash_rec *got = &r->crashes[kk];
        assert_int_equal(got->at_us, k->at_us);
        assert_int_equal(got->restart_us, k->restart_us);
        uint64_t lost = 0;
        for (uint64_t i = 0; i < m->nitems; i++) {
            const struct m_item *it = &m->items[i];
            if (it->proc_seq != NEVER_SEQ)
                continue;
            if (m_pending_at(it, k->seq) || it->drop_crash == kk)
                lost++;
        }
        assert_int_equal(got->lost, lost);
        assert_int_equal(got->double_effects, k->de);
        if (k->restart_seq == NEVER_SEQ) {
            assert_int_equal(got->recovery_time_us, -1);
            assert_int_equal(got->stuck, 0);
            continue;
        }
        int any_due = 0;
        uint32_t stuck = 0;
        for (uint32_t h = 0; h < nh; h++) {
            int due = k->interrupted[h];
            if (m_is_producer(h)) {
                due |= m_producer_due(m, h, k, horizon_us);
            } else {
                for (uint64_t i = 0; i < m->nitems && !due; i++)
                    due = m->items[i].h == h && m_pending_at(&m->items[i], k->restart_seq);
            }
            int runs_after = 0;
            for (uint64_t id = 1; id <= m->nruns; id++)
                if (m->runs[id].h == h && m->runs[id].start_seq > k->restart_seq)
                    runs_after = 1;
            if (due && !runs_after)
                stuck++;
        }
        for (uint64_t i = 0; i < m->nitems; i++)
            if (m_pending_at(&m->items[i], k->restart_seq))
                any_due = 1;
        for (uint32_t h = 0; h < nh; h++)
            if (k->interrupted[h] || (m_is_producer(h) && m_producer_due(m, h, k, horizon_us)))
                any_due = 1;
        int64_t rec = 0;
        if (any_due) {
            rec = -1;
            for (uint64_t id = 1; id <= m->nruns; id++) {
                const struct m_run *run = &m->runs[id];
                if (run->progress && run->start_us >= k->restart_us &&
                    (rec < 0 || run->start_us - k->restart_us < rec))
                    rec = run->start_us - k->restart_us;
            }
        }
        if (got->stuck != stuck || got->recovery_time_us != rec)
            print_error("crash %d: stuck %u (model %u), recovery %lld (model %lld)\n", kk, got->stuck, stuck,
                        (long long)got->recovery_time_us, (long long)rec);
        assert_int_equal(got->stuck, stuck);
        assert_int_equal(got->recovery_time_us, rec);
        int ok = lost == 0 && k->de == 0 && stuck == 0 && rec >= 0 && rec <= bound_us;
        assert_int_equal(got->ok, ok);
    }
    uint64_t processed = 0, dropped = 0, stranded = 0;
    for (uint64_t i = 0; i < m->nitems; i++) {
        const struct m_item *it = &m->items[i];
        if (it->proc_seq != NEVER_SEQ)
            processed++;
        else if (it->drop_seq != NEVER_SEQ)
            dropped++;
        else
            stranded++;
    }
    assert_int_equal(r->total.published, m->nitems);
    assert_int_equal(r->total.processed, processed);
    assert_int_equal(r->total.dropped, dropped);
    assert_int_equal(r->total.stranded, stranded);
    assert_int_equal(r->total.lost, dropped + stranded);
    assert_int_equal(r->total.duplicates, m->duplicates);
    assert_int_equal(r->total.double_effects, m->double_effects);
}

static void test_random_vs_model(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        m_rng = rng_stream(seed, RNG_POLICY, 0, 0);
        int64_t horizon_us = 1500;
        struct fx *f = fx_new(horizon_us);
        f->scn.recovery_bound_us = 40;
        uint16_t w = fx_wf(f, "w", 4);
        fx_consumer(f, w, "c1");
        fx_consumer(f, w, "c2");
        fx_every(f, w, "p", 50, 0);
        struct model *m = calloc(1, sizeof *m);
        assert_non_null(m);
        m->f = f;
        m->c = fx_start(f, PROMISE_WORKFLOW);
        m->last_event_crash = -1;
        int steps = 800 + (int)m_rand(1200);
        for (int i = 0; i < steps; i++)
            m_step(m);
        const struct checker_result *r = fx_finish(f, m->now + 10);
        m_check(m, r, horizon_us, f->scn.recovery_bound_us);
        for (uint64_t id = 1; id <= m->nruns; id++)
            free(m->runs[id].taken);
        free(m);
        fx_free(f);
    }
}

/* ---- the compact sets, against a plain model ---------------------------------- */

/* Values in order at one spacing with gaps, a few out of order, and some
 * repeats; each insert answers what a byte map says. */
static void test_pset_vs_model(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        struct rng r = rng_stream(seed, 0, 0, 0);
        struct pset s = PSET_EMPTY;
        uint8_t *seen = calloc(200000, 1);
        assert_non_null(seen);
        uint64_t bytes = 0;
        int64_t next = 0;
        for (int i = 0; i < 20000; i++) {
            int64_t x;
            uint64_t k = rng_below(&r, 100);
            if (k < 80)
            {
                x = next;
                next += 10 * (1 + (int64_t)(rng_below(&r, 20) == 0));
            }
            else if (k < 95)
                x = (int64_t)rng_below(&r, (uint64_t)next + 1);
            else
                x = (int64_t)rng_below(&r, 200000);
            if (x >= 200000)
                continue;
            int had = pset_insert(&s, x, &bytes);
            assert_int_equal(had, seen[x]);
            seen[x] = 1;
        }
        free(seen);
        pset_free(&s);
    }
    /* A schedule served in order, missing a due now and then: one
     * progression per stretch between misses. */
    struct pset s = PSET_EMPTY;
    uint64_t bytes = 0;
    int gaps = 0;
    for (int64_t d = 0; d < 1000000; d += 600) {
        if (d % 60000 == 0 && d) {
            gaps++;
            continue;
        }
        assert_int_equal(pset_insert(&s, d, &bytes), 0);
    }
    assert_int_equal(pset_insert(&s, 1200, &bytes), 1);
    assert_true(s.n + (size_t)pset_has_tail(&s) <= (size_t)gaps + 1);
    pset_free(&s);
}

static void test_idset_vs_model(void **state)
{
    (void)state;
    struct rng r = rng_stream(7, 0, 0, 0);
    struct idset s = {0};
    uint8_t *seen = calloc(1u << 20, 1);
    assert_non_null(seen);
    uint64_t bytes = 0;
    for (int i = 0; i < 300000; i++) {
        /* dense near a moving front, and sparse anywhere */
        uint64_t id = rng_below(&r, 4) ? (uint64_t)i * 3 + rng_below(&r, 8) : rng_below(&r, 1u << 20);
        id &= (1u << 20) - 1;
        assert_int_equal(idset_has(&s, id), seen[id]);
        if (!seen[id]) {
            idset_add(&s, id, &bytes);
            seen[id] = 1;
        }
    }
    for (uint64_t id = 0; id < (1u << 20); id += 7)
        assert_int_equal(idset_has(&s, id), seen[id]);
    free(seen);
    idset_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pset_vs_model),
        cmocka_unit_test(test_idset_vs_model),
        cmocka_unit_test(test_latency),
        cmocka_unit_test(test_latency_censored),
        cmocka_unit_test(test_latency_origin),
        cmocka_unit_test(test_duplicates_double_effects),
        cmocka_unit_test(test_dropped_stranded),
        cmocka_unit_test(test_schedule_every),
        cmocka_unit_test(test_schedule_cron),
        cmocka_unit_test(test_busy_loops),
        cmocka_unit_test(test_overlaps_handler),
        cmocka_unit_test(test_overlaps_workflow),
        cmocka_unit_test(test_overlaps_none),
        cmocka_unit_test(test_overlaps_unit),
        cmocka_unit_test(test_crash_recovery),
        cmocka_unit_test(test_crash_recovery_too_slow),
        cmocka_unit_test(test_crash_stuck),
        cmocka_unit_test(test_crash_loses_items),
        cmocka_unit_test(test_crash_matching),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_random_vs_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
