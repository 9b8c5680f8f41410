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
    for (uint64_t i = 0; i < t->n; i++) {
        const struct job *j = &t->rows[i];
        if (j->status == JOB_COMPLETED || j->status == JOB_FAILED)
            continue;
        if (best == UINT64_MAX || j->available_us < t->rows[best].available_us)
            best = i;
    }
    if (best != UINT64_MAX)
        *at = t->rows[best].available_us;
    return best != UINT64_MAX && t->rows[best].available_us <= now ? best : UINT64_MAX;
}

static void test_jobs_model(void **state)
{
    (void)state;
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
                uint64_t id = rng_below(&r, t.n);
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
        }
        assert_true(jobs_check(&t));
        jobs_free(&t);
    }
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
        cmocka_unit_test(test_backoff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
