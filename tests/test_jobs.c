/* test_jobs.c: the durable job table against a simple model (a linear scan
 * for the earliest active row; rows forgotten anywhere, pages freed), and
 * the backoff tables. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>

#include "sim/backoff.h"
#include "sim/jobs.h"
#include "sim/rng.h"
#include "sim/util.h"


static uint64_t model_next(struct jobtab *t, int64_t now, int64_t *at)
{
    uint64_t best = UINT64_MAX;
    for (uint64_t i = t->base; i < t->n; i++) {
        const struct job *j = jobs_find(t, i);
        if (!j || j->status == JOB_COMPLETED || j->status == JOB_FAILED)
            continue;
        if (best == UINT64_MAX || j->available_us < jobs_get(t, best)->available_us)
            best = i;
    }
    if (best != UINT64_MAX)
        *at = jobs_get(t, best)->available_us;
    return best != UINT64_MAX && jobs_get(t, best)->available_us <= now ? best : UINT64_MAX;
}

/* The table's next due row at now, checked against the model's. */
static uint64_t next_due_checked(struct jobtab *t, int64_t now)
{
    int64_t at_model = -1;
    uint64_t want = model_next(t, now, &at_model);
    uint64_t got = jobs_next_due(t, now);
    assert_int_equal(got, want);
    return got;
}

/* forget: 0, or forget the finished rows at the front every 64 operations
 * (updates then fall on the rows still kept, finishing the oldest often). */
static void jobs_model(int forget)
{
    for (uint64_t seed = 1; seed <= 20; seed++) {
        struct rng r = rng_stream(seed, RNG_POLICY, 7, 0);
        struct jobtab t;
        jobs_init(&t, jobs_heap_realloc, NULL);
        int64_t now = 0;
        for (int op = 0; op < 4000; op++) {
            uint64_t k = rng_below(&r, 10);
            if (k < 3 || t.n == 0) {
                struct job j = {.status = JOB_PENDING, .available_us = now + (int64_t)rng_below(&r, 100)};
                jobs_add(&t, &j);
            } else if (k < 7) {
                uint64_t id = t.base + rng_below(&r, t.n - t.base);
                if (forget && rng_below(&r, 2))
                    id = t.base;
                enum job_status st = (enum job_status)rng_below(&r, 5);
                jobs_update(&t, id, st, now + (int64_t)rng_below(&r, 200));
            } else {
                now += (int64_t)rng_below(&r, 30);
                int64_t at_model = -1, at_real = -1;
                uint64_t want = model_next(&t, now, &at_model);
                uint64_t got = jobs_next_due(&t, now);
                /* Ties in time may pick any row with the earliest time; the
                 * table picks the lowest id, as the model does. */
                assert_int_equal(got, want);
                uint64_t peek = jobs_peek(&t, &at_real);
                if (peek != UINT64_MAX)
                    assert_int_equal(at_real, at_model);
            }
            if (op % 256 == 0)
                assert_true(jobs_check(&t));
            if (forget && op % 64 == 0) {
                uint64_t first = t.base;
                while (first < t.n && (jobs_get(&t, first)->status == JOB_COMPLETED ||
                                       jobs_get(&t, first)->status == JOB_FAILED))
                    first++;
                jobs_forget_below(&t, first);
                assert_int_equal(t.base, first);
            }
        }
        assert_true(jobs_check(&t));
        assert_true(!forget || t.base > 0);
        jobs_free(&t);
    }
}

static void test_jobs_model(void **state)
{
    (void)state;
    jobs_model(0);
}

/* The same with the finished front forgotten: the same answers. */
static void test_jobs_forget(void **state)
{
    (void)state;
    jobs_model(1);
}

/* The model of forgetting: what each row holds, and whether it is gone. */
struct mrow {
    uint8_t status, gone;
    int64_t at;
};

static int finished(uint8_t st) { return st == JOB_COMPLETED || st == JOB_FAILED; }

/* Every row the model keeps is readable with its contents and its extra
 * bytes, every row it forgot is not, and walking the kept rows visits
 * exactly the model's. */
static void check_rows(struct jobtab *t, const struct mrow *m)
{
    uint64_t walk = jobs_next_kept(t, 0);
    for (uint64_t id = 0; id < t->n; id++) {
        const struct job *j = jobs_find(t, id);
        if (m[id].gone) {
            assert_null(j);
            continue;
        }
        assert_non_null(j);
        assert_int_equal(j->status, m[id].status);
        assert_int_equal(j->available_us, m[id].at);
        assert_int_equal(j->tag, id);
        assert_int_equal(*(uint64_t *)jobs_extra(t, id), id * 3 + 1);
        assert_int_equal(walk, id);
        walk = jobs_next_kept(t, id + 1);
    }
    assert_int_equal(walk, t->n);
}

/* Random adds, updates, finishes and forgets anywhere (the fleet's order:
 * rows finish out of order), against the model: the same earliest row,
 * every kept row readable, and pages bounded by the rows kept. */
static void test_jobs_forget_anywhere(void **state)
{
    (void)state;
    enum { OPS = 6000 };
    for (uint64_t seed = 1; seed <= 12; seed++) {
        struct rng r = rng_stream(seed, RNG_POLICY, 9, 0);
        struct jobtab t;
        jobs_init(&t, jobs_heap_realloc, NULL);
        jobs_set_extra(&t, sizeof(uint64_t));
        struct mrow *m = xcalloc(OPS + 1, sizeof *m);
        int64_t now = 0;
        for (int op = 0; op < OPS; op++) {
            uint64_t k = rng_below(&r, 10);
            if (k < 4 || t.kept == 0) {
                struct job j = {.status = (uint8_t)rng_below(&r, 3), .available_us = now + (int64_t)rng_below(&r, 100)};
                j.tag = t.n;
                uint64_t id = jobs_add(&t, &j);
                *(uint64_t *)jobs_extra(&t, id) = id * 3 + 1;
                m[id] = (struct mrow){.status = j.status, .at = j.available_us};
            } else if (k < 8) {
                uint64_t id = jobs_next_kept(&t, t.base + rng_below(&r, t.n - t.base));
                if (id == t.n)
                    id = jobs_next_kept(&t, 0);
                enum job_status st = (enum job_status)rng_below(&r, 5);
                int64_t at = now + (int64_t)rng_below(&r, 200);
                jobs_update(&t, id, st, at);
                m[id].status = (uint8_t)st;
                m[id].at = at;
                if (finished((uint8_t)st) && rng_below(&r, 4)) {
                    jobs_forget(&t, id);
                    m[id].gone = 1;
                }
            } else {
                now += (int64_t)rng_below(&r, 30);
                int64_t at_model = -1;
                assert_int_equal(jobs_next_due(&t, now), model_next(&t, now, &at_model));
            }
            /* a row pins at most its own page; the page being filled and
             * one spare page are the rest */
            assert_true(t.pages <= t.kept + 2);
            if (op % 500 == 0) {
                check_rows(&t, m);
                assert_true(jobs_check(&t));
            }
        }
        check_rows(&t, m);
        assert_true(jobs_check(&t));
        jobs_free(&t);
        free(m);
    }
}

/* One old row still in play does not pin the rows after it: finishing and
 * forgetting every other row frees every page but its own, the page being
 * filled and the spare, and the directory drops its empty front. */
static void test_jobs_pinned_row(void **state)
{
    (void)state;
    struct jobtab t;
    jobs_init(&t, jobs_heap_realloc, NULL);
    enum { N = 200 * JOBS_PAGE + 17 };
    for (uint64_t i = 0; i < N; i++) {
        struct job j = {.status = JOB_PENDING, .available_us = (int64_t)i, .tag = i};
        jobs_add(&t, &j);
    }
    size_t full = jobs_bytes(&t);
    uint64_t keep = 5;
    for (uint64_t i = 0; i < N; i++) {
        if (i == keep)
            continue;
        jobs_update(&t, i, JOB_COMPLETED, 0);
        jobs_forget(&t, i);
    }
    assert_true(t.pages <= 3);
    assert_int_equal(t.kept, 1);
    assert_int_equal(jobs_get(&t, keep)->tag, keep);
    assert_int_equal(jobs_next_due(&t, 1000), keep);
    assert_true(jobs_check(&t));
    /* the old row finishes: its page goes, and the directory's front */
    jobs_update(&t, keep, JOB_FAILED, 0);
    jobs_forget(&t, keep);
    assert_true(t.pages <= 2);
    assert_true(t.base >= (uint64_t)(N / JOBS_PAGE) * JOBS_PAGE);
    assert_int_equal(jobs_peek(&t, NULL), UINT64_MAX);
    assert_true(jobs_bytes(&t) * 20 < full);
    /* rows go on from the same id sequence */
    struct job j = {.status = JOB_PENDING, .available_us = 7};
    assert_int_equal(jobs_add(&t, &j), N);
    assert_int_equal(jobs_next_due(&t, 7), N);
    assert_true(jobs_check(&t));
    jobs_free(&t);
}

/* A steady flow (rows added, finished after a random delay, forgotten): the
 * table's memory follows the rows in play, not the rows ever added. */
static void test_jobs_steady_memory(void **state)
{
    (void)state;
    struct rng r = rng_stream(3, RNG_POLICY, 11, 0);
    struct jobtab t;
    jobs_init(&t, jobs_heap_realloc, NULL);
    size_t peak = 0;
    for (int64_t now = 0; now < 400000; now++) {
        struct job j = {.status = JOB_PENDING, .available_us = now + (int64_t)rng_below(&r, 2000)};
        jobs_add(&t, &j);
        uint64_t id;
        while ((id = jobs_next_due(&t, now)) != UINT64_MAX) {
            jobs_update(&t, id, JOB_COMPLETED, SIM_NEVER);
            jobs_forget(&t, id);
        }
        if (jobs_bytes(&t) > peak)
            peak = jobs_bytes(&t);
    }
    /* about 1,000 rows in play, 400,000 added */
    assert_true(t.kept < 2500);
    assert_true(peak < 400 * 1024);
    assert_true(jobs_check(&t));
    jobs_free(&t);
}

/* A queue: rows added at now (nondecreasing), taken oldest first, some
 * retried later or put to sleep.  The untouched backlog costs nothing in
 * the heap (the lane), and the answers are the model's. */
static void test_jobs_lane(void **state)
{
    (void)state;
    struct rng r = rng_stream(5, RNG_POLICY, 13, 0);
    struct jobtab t;
    jobs_init(&t, jobs_heap_realloc, NULL);
    int64_t now = 0;
    for (int op = 0; op < 20000; op++) {
        uint64_t k = rng_below(&r, 10);
        if (k < 6) {
            struct job j = {.status = JOB_PENDING, .available_us = now};
            jobs_add(&t, &j);
        } else if (k < 9) {
            uint64_t id = next_due_checked(&t, now);
            if (id == UINT64_MAX)
                continue;
            uint64_t what = rng_below(&r, 4);
            if (what == 0) /* a retry after a backoff */
                jobs_update(&t, id, JOB_PENDING, now + (int64_t)rng_below(&r, 500));
            else if (what == 1) /* running, claimable again when its lease runs out */
                jobs_update(&t, id, JOB_RUNNING, now + 300);
            else {
                jobs_update(&t, id, what == 2 ? JOB_COMPLETED : JOB_FAILED, SIM_NEVER);
                jobs_forget(&t, id);
            }
        } else {
            now += (int64_t)rng_below(&r, 20);
        }
        if (op % 1000 == 0)
            assert_true(jobs_check(&t));
    }
    assert_true(jobs_check(&t));
    /* the lane holds most of the backlog: the heap indexes only the rows
     * that were touched */
    assert_true(t.nlane > 0);
    assert_true(t.nheap + t.nfifo <= 2 * (t.live - t.nlane) + 65);
    jobs_free(&t);

    /* a pure backlog: nothing in the heap at all */
    jobs_init(&t, jobs_heap_realloc, NULL);
    for (int64_t i = 0; i < 5000; i++) {
        struct job j = {.status = JOB_PENDING, .available_us = i / 3};
        jobs_add(&t, &j);
    }
    assert_int_equal(t.nheap + t.nfifo, 0);
    assert_int_equal(t.nlane, 5000);
    assert_int_equal(jobs_next_due(&t, 0), 0);
    /* a row added earlier than the lane's last goes to the heap and comes
     * out first */
    struct job early = {.status = JOB_PENDING, .available_us = 0};
    uint64_t e = jobs_add(&t, &early);
    assert_int_equal(t.nheap + t.nfifo, 1);
    jobs_update(&t, 0, JOB_COMPLETED, SIM_NEVER);
    jobs_update(&t, 1, JOB_COMPLETED, SIM_NEVER);
    jobs_update(&t, 2, JOB_COMPLETED, SIM_NEVER);
    assert_int_equal(jobs_next_due(&t, 0), e);
    assert_true(jobs_check(&t));
    jobs_free(&t);
}

/* A schedule table as a check loop drives it: every due row is taken
 * (COMPLETED), then set again at now + its class's delay (1 m, 10 m, 1 h),
 * in id order, as interval's check does.  jitter: that many rows in 8 get
 * a random extra delay, and some rows end early at a random time.  The
 * answers are the model's; with no jitter, every entry comes in order, so
 * the heap stays empty and the queues hold one entry a row. */
static void run_schedules(uint64_t seed, uint64_t jitter)
{
    static const int64_t delay[] = {60, 600, 3600};
    struct rng r = rng_stream(seed, RNG_POLICY, 11, 0);
    struct jobtab t;
    jobs_init(&t, jobs_heap_realloc, NULL);
    enum { N = 300 };
    for (int i = 0; i < N; i++) {
        struct job j = {.status = JOB_PENDING, .available_us = (int64_t)rng_below(&r, 60)};
        jobs_add(&t, &j);
    }
    uint64_t due[N];
    for (int64_t now = 0; now < 20000; now++) {
        int n = 0;
        for (;;) {
            uint64_t got = next_due_checked(&t, now);
            if (got == UINT64_MAX)
                break;
            jobs_update(&t, got, JOB_COMPLETED, SIM_NEVER);
            due[n++] = got;
        }
        for (int i = 1; i < n; i++) /* in id order */
            for (int k = i; k > 0 && due[k - 1] > due[k]; k--) {
                uint64_t x = due[k];
                due[k] = due[k - 1];
                due[k - 1] = x;
            }
        for (int i = 0; i < n; i++) {
            int64_t at = now + delay[due[i] % 3];
            if (jitter && rng_below(&r, 8) < jitter)
                at += (int64_t)rng_below(&r, 50);
            jobs_update(&t, due[i], JOB_PENDING, at);
        }
        if (jitter && rng_below(&r, 4) == 0) { /* a row moved while it waits */
            uint64_t id = rng_below(&r, N);
            if (jobs_get(&t, id)->status == JOB_PENDING)
                jobs_update(&t, id, JOB_PENDING, now + 1 + (int64_t)rng_below(&r, 100));
        }
        if (now % 997 == 0)
            assert_true(jobs_check(&t));
        if (!jitter && now >= 60)
            assert_int_equal(t.nheap, 0);
        assert_true(t.nheap + t.nfifo <= 2 * (uint64_t)N + 65);
    }
    assert_true(jobs_check(&t));
    jobs_free(&t);
}

static void test_jobs_queues(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        run_schedules(seed, 0);
        run_schedules(seed, 1);
        run_schedules(seed, 8);
    }
}

/* A burst of entries in order fills a queue; once they are taken, the
 * queue gives its memory back. */
static void test_jobs_queue_memory(void **state)
{
    (void)state;
    struct jobtab t;
    jobs_init(&t, jobs_heap_realloc, NULL);
    struct job j = {.status = JOB_COMPLETED, .available_us = SIM_NEVER};
    for (int i = 0; i < 100000; i++)
        jobs_add(&t, &j);
    size_t rows = jobs_bytes(&t);
    for (uint64_t id = 0; id < 100000; id++)
        jobs_update(&t, id, JOB_PENDING, 1000 + (int64_t)id);
    assert_int_equal(t.nheap, 0);
    assert_int_equal(t.nfifo, 100000);
    assert_true(jobs_bytes(&t) >= rows + 100000 * sizeof(struct job_ent));
    for (uint64_t k = 0; k < 100000; k++) {
        uint64_t id = jobs_next_due(&t, INT64_MAX - 1);
        assert_int_equal(id, k);
        jobs_update(&t, id, JOB_COMPLETED, SIM_NEVER);
    }
    assert_int_equal(jobs_next_due(&t, INT64_MAX - 1), UINT64_MAX);
    assert_int_equal(t.nfifo, 0);
    assert_true(jobs_bytes(&t) <= rows + 64 * sizeof(struct job_ent) * JOBS_FIFOS);
    assert_true(jobs_check(&t));
    jobs_free(&t);
}

static void test_backoff(void **state)
{
    (void)state;
    /* heartbeat's cron error backoff: 30 s, 1 m, 5 m, 15 m, then 60 m */
    static const int64_t cron[] = {30 * US_PER_S, US_PER_MIN, 5 * US_PER_MIN, 15 * US_PER_MIN, US_PER_H, 0};
    struct backoff b = backoff_table(cron, 0);
    assert_int_equal(backoff_delay(&b, 1), 30 * US_PER_S);
    assert_int_equal(backoff_delay(&b, 4), 15 * US_PER_MIN);
    assert_int_equal(backoff_delay(&b, 5), US_PER_H);
    assert_int_equal(backoff_delay(&b, 50), US_PER_H);
    assert_false(backoff_exhausted(&b, 1000));
    /* keep.ai's transient backoff: 10 s x 2^(n-1), capped at 10 min, 5 tries */
    struct backoff e = backoff_exp(10 * US_PER_S, 10 * US_PER_MIN, 5);
    assert_int_equal(backoff_delay(&e, 1), 10 * US_PER_S);
    assert_int_equal(backoff_delay(&e, 2), 20 * US_PER_S);
    assert_int_equal(backoff_delay(&e, 4), 80 * US_PER_S);
    assert_int_equal(backoff_delay(&e, 7), 10 * US_PER_MIN);
    assert_int_equal(backoff_delay(&e, 200), 10 * US_PER_MIN);
    assert_false(backoff_exhausted(&e, 5));
    assert_true(backoff_exhausted(&e, 6));
    /* the exponential shape grows past 16 steps until its cap: 1 ms x 2^19 */
    struct backoff g = backoff_exp(US_PER_MS, 30 * US_PER_DAY, 0);
    assert_int_equal(backoff_delay(&g, 20), INT64_C(524288) * US_PER_MS);
    assert_int_equal(backoff_delay(&g, 100), 30 * US_PER_DAY);
    /* a fractional coefficient, 1.5: 1 s, 1.5 s, 2.25 s, 3.375 s; 1.5^20 s */
    struct backoff f = backoff_exp_coef(US_PER_S, 30 * US_PER_DAY, 1500, 0);
    assert_int_equal(backoff_delay(&f, 2), 1500 * US_PER_MS);
    assert_int_equal(backoff_delay(&f, 4), 3375 * US_PER_MS);
    assert_int_equal(backoff_delay(&f, 21), INT64_C(3325256730)); /* 3325.256730 s */
    /* coefficient 1: constant; a cap near INT64_MAX does not overflow */
    /* the kubelet's CrashLoopBackOff: at once, then 10 s doubling to 5 min;
     * the limit still counts every attempt */
    struct backoff k = backoff_first_at_once(backoff_exp(10 * US_PER_S, 300 * US_PER_S, 3));
    assert_int_equal(backoff_delay(&k, 1), 0);
    assert_int_equal(backoff_delay(&k, 2), 10 * US_PER_S);
    assert_int_equal(backoff_delay(&k, 3), 20 * US_PER_S);
    assert_int_equal(backoff_delay(&k, 7), 300 * US_PER_S);
    assert_false(backoff_exhausted(&k, 3));
    assert_true(backoff_exhausted(&k, 4));
    struct backoff kt = backoff_first_at_once(backoff_table(cron, 0));
    assert_int_equal(backoff_delay(&kt, 1), 0);
    assert_int_equal(backoff_delay(&kt, 2), 30 * US_PER_S);
    struct backoff c = backoff_exp_coef(7 * US_PER_S, US_PER_H, 1000, 0);
    assert_int_equal(backoff_delay(&c, 1000000), 7 * US_PER_S);
    struct backoff h = backoff_exp_coef(US_PER_S, INT64_MAX, BACKOFF_MAX_COEF_PERMILLE, 0);
    assert_int_equal(backoff_delay(&h, 3), INT64_C(1000000) * US_PER_S); /* x 1000, twice */
    assert_int_equal(backoff_delay(&h, 10), INT64_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jobs_model),
        cmocka_unit_test(test_jobs_forget),
        cmocka_unit_test(test_jobs_forget_anywhere),
        cmocka_unit_test(test_jobs_pinned_row),
        cmocka_unit_test(test_jobs_steady_memory),
        cmocka_unit_test(test_jobs_lane),
        cmocka_unit_test(test_jobs_queues),
        cmocka_unit_test(test_jobs_queue_memory),
        cmocka_unit_test(test_backoff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
