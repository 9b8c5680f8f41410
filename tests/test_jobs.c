/* test_jobs.c: the durable job table against a simple model (a linear scan
 * for the earliest active row), and the backoff tables. */
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
        const struct job *j = jobs_get(t, i);
        if (j->status == JOB_COMPLETED || j->status == JOB_FAILED)
            continue;
        if (best == UINT64_MAX || j->available_us < jobs_get(t, best)->available_us)
            best = i;
    }
    if (best != UINT64_MAX)
        *at = jobs_get(t, best)->available_us;
    return best != UINT64_MAX && jobs_get(t, best)->available_us <= now ? best : UINT64_MAX;
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
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jobs_model),
        cmocka_unit_test(test_jobs_forget),
        cmocka_unit_test(test_backoff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
