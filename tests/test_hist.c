/* test_hist.c: the histogram against a model (the sorted samples).
 *
 * For several distributions, every reported quantile is compared with the
 * exact nearest-rank quantile of the same samples: relative error <= 1 %
 * (the design bound is 1/256), and exact equality below 256 us.  Merging
 * must give the same histogram as adding every sample to one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/rng.h"
#include "sim/hist.h"

#define NSAMPLES 200000

/* The project's own stream (sim/rng.h), so that a failure reproduces. */
static struct rng rng_state;

/* Uniform in (0, 1). */
static double unit01(void)
{
    return ((double)(rng_next(&rng_state) >> 11) + 0.5) / 9007199254740992.0;
}

static double rng_normal(void)
{
    double u = unit01(), v = unit01();
    return sqrt(-2.0 * log(u)) * cos(2.0 * 3.14159265358979323846 * v);
}

enum dist { D_UNIFORM, D_EXP, D_LOGNORMAL, D_CONST, D_TINY, D_HUGE };

static int64_t draw(enum dist d)
{
    switch (d) {
    case D_UNIFORM: return (int64_t)(rng_next(&rng_state) % 1000000);
    case D_EXP: return (int64_t)(-100000.0 * log(unit01()));
    case D_LOGNORMAL: {
        /* median e^10 ~ 22 ms, sigma 2.5: a tail spanning many decades */
        double v = exp(10.0 + 2.5 * rng_normal());
        return v > 1e13 ? (int64_t)1e13 : (int64_t)v;
    }
    case D_CONST: return 123456789;
    case D_TINY: return (int64_t)(rng_next(&rng_state) % 256);
    case D_HUGE: return (int64_t)exp(unit01() * log(1e13));   /* log-uniform in [1, 1e13] */
    }
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Exact nearest-rank quantile num/den of sorted v[0..n): the smallest
 * sample with at least ceil(n * num / den) samples <= it. */
static int64_t exact_quantile(const int64_t *v, uint64_t n, uint64_t num, uint64_t den)
{
    uint64_t rank = (n * num + den - 1) / den;
    if (rank < 1)
        rank = 1;
    return v[rank - 1];
}

static void check_close(const char *what, int64_t got, int64_t want)
{
    if (want < 256) {
        if (got != want) {
            print_error("%s: got %lld, want exactly %lld\n", what, (long long)got, (long long)want);
            fail();
        }
        return;
    }
    double rel = fabs((double)got - (double)want) / (double)want;
    if (rel > 0.01) {
        print_error("%s: got %lld, want %lld (relative error %.5f)\n", what, (long long)got, (long long)want, rel);
        fail();
    }
    /* The design bound is tighter: half a bucket of width <= value / 128. */
    if (rel > 1.0 / 256 + 1e-12) {
        print_error("%s: got %lld, want %lld: error %.6f above 1/256\n", what, (long long)got, (long long)want, rel);
        fail();
    }
}

static const struct {
    const char *name;
    uint64_t num, den;
} quantiles[] = {
    {"p0", 0, 1}, {"p1", 1, 100}, {"p50", 1, 2}, {"p90", 9, 10}, {"p99", 99, 100},
    {"p999", 999, 1000}, {"p9999", 9999, 10000}, {"max", 1, 1},
};

static void check_distribution(enum dist d, const char *name, uint64_t n)
{
    rng_state.s = 42 + (uint64_t)d;
    int64_t *v = malloc(n * sizeof *v);
    assert_non_null(v);
    struct hist h;
    hist_init(&h);
    double sum = 0;
    for (uint64_t i = 0; i < n; i++) {
        v[i] = draw(d);
        hist_add(&h, v[i]);
        sum += (double)v[i];
    }
    qsort(v, n, sizeof *v, cmp_i64);
    assert_int_equal(h.count, n);
    assert_int_equal(h.min_us, v[0]);
    assert_int_equal(h.max_us, v[n - 1]);
    for (size_t k = 0; k < sizeof quantiles / sizeof quantiles[0]; k++) {
        char what[64];
        snprintf(what, sizeof what, "%s %s (n=%llu)", name, quantiles[k].name, (unsigned long long)n);
        int64_t want = exact_quantile(v, n, quantiles[k].num, quantiles[k].den);
        int64_t got = hist_quantile(&h, (double)quantiles[k].num / (double)quantiles[k].den);
        check_close(what, got, want);
    }
    /* The mean is summed exactly as the samples came. */
    assert_true(hist_mean(&h) == sum / (double)n);
    hist_free(&h);
    assert_null(h.bucket);
    free(v);
}

static void test_uniform(void **state)
{
    (void)state;
    check_distribution(D_UNIFORM, "uniform", NSAMPLES);
    check_distribution(D_UNIFORM, "uniform", 7);
}

static void test_exponential(void **state)
{
    (void)state;
    check_distribution(D_EXP, "exponential", NSAMPLES);
}

static void test_lognormal(void **state)
{
    (void)state;
    check_distribution(D_LOGNORMAL, "lognormal", NSAMPLES);
}

static void test_constant(void **state)
{
    (void)state;
    check_distribution(D_CONST, "constant", 1000);
    check_distribution(D_CONST, "constant", 1);
}

static void test_tiny_exact(void **state)
{
    (void)state;
    check_distribution(D_TINY, "tiny", NSAMPLES);
    /* Every quantile of values below 256 is exact, not just the checked ones. */
    struct hist h;
    hist_init(&h);
    for (int64_t v = 0; v < 256; v++)
        hist_add(&h, v);
    for (int64_t r = 1; r <= 256; r++)
        assert_int_equal(hist_quantile(&h, (double)r / 256.0), r - 1);
    hist_free(&h);
}

static void test_huge(void **state)
{
    (void)state;
    check_distribution(D_HUGE, "log-uniform to 1e13", NSAMPLES);
    struct hist h;
    hist_init(&h);
    hist_add(&h, INT64_MAX);
    hist_add(&h, (int64_t)1e13);
    hist_add(&h, 0);
    assert_int_equal(hist_quantile(&h, 1.0), INT64_MAX);
    assert_int_equal(hist_quantile(&h, 0.0), 0);
    check_close("1e13 median", hist_quantile(&h, 0.5), (int64_t)1e13);
    hist_free(&h);
}

/* Buckets tile [0, INT64_MAX] without gaps, each value falls in its own
 * bucket, and no bucket is wider than 1/128 of its lower bound. */
static void test_layout(void **state)
{
    (void)state;
    int64_t prev_hi = -1;
    int last = hist_index(INT64_MAX);
    assert_true(last < HIST_NBUCKETS);
    for (int i = 0; i <= last; i++) {
        int64_t lo, hi;
        hist_bounds(i, &lo, &hi);
        assert_int_equal(lo, prev_hi + 1);
        assert_true(hi >= lo);
        if (lo >= 256)
            assert_true((hi - lo + 1) * 128 <= lo);
        else
            assert_int_equal(hi, lo);
        assert_int_equal(hist_index(lo), i);
        assert_int_equal(hist_index(hi), i);
        prev_hi = hi;
    }
    assert_int_equal(prev_hi, INT64_MAX);
    /* The first bucketed values. */
    assert_int_equal(hist_index(255), 255);
    assert_int_equal(hist_index(256), 256);
    assert_int_equal(hist_index(257), 256);
    assert_int_equal(hist_index(258), 257);
    assert_int_equal(hist_index(512), 256 + 128);
}

/* A quantile is the midpoint of the bucket holding the rank-th sample,
 * clamped to [min, max]. */
static void test_midpoint_and_clamp(void **state)
{
    (void)state;
    struct hist h;
    hist_init(&h);
    /* 1000 lies in [512, 1024), width 4: bucket [1000, 1003], midpoint 1001. */
    hist_add(&h, 1000);
    hist_add(&h, 1000);
    hist_add(&h, 1000);
    assert_int_equal(hist_quantile(&h, 0.5), 1000);   /* clamped to max = 1000 */
    hist_add(&h, 1003);
    hist_add(&h, 5000);
    assert_int_equal(hist_quantile(&h, 0.5), 1001);   /* rank 3 of 5: midpoint */
    assert_int_equal(hist_quantile(&h, 0.8), 1001);   /* rank 4: 1003, same bucket */
    assert_int_equal(hist_quantile(&h, 1.0), 5000);
    assert_int_equal(hist_quantile(&h, 0.0), 1000);
    hist_free(&h);
}

static void check_same(const struct hist *a, const struct hist *b)
{
    assert_int_equal(a->count, b->count);
    assert_int_equal(a->min_us, b->min_us);
    assert_int_equal(a->max_us, b->max_us);
    assert_true(a->sum_us == b->sum_us);
    if (a->count == 0)
        return;
    assert_memory_equal(a->bucket, b->bucket, HIST_NBUCKETS * sizeof *a->bucket);
    for (size_t k = 0; k < sizeof quantiles / sizeof quantiles[0]; k++) {
        double q = (double)quantiles[k].num / (double)quantiles[k].den;
        assert_int_equal(hist_quantile(a, q), hist_quantile(b, q));
    }
}

static void test_merge(void **state)
{
    (void)state;
    struct hist all, a, b, empty;
    hist_init(&all);
    hist_init(&a);
    hist_init(&b);
    hist_init(&empty);
    rng_state.s = 7;
    /* Integer samples whose sum stays below 2^53: the double sums are exact,
     * so the merged sum must equal the sum in sample order. */
    for (int i = 0; i < 50000; i++) {
        int64_t v = draw(i % 3 ? D_EXP : D_TINY);
        hist_add(&all, v);
        hist_add(i % 2 ? &a : &b, v);
    }
    struct hist m;
    hist_init(&m);
    hist_merge(&m, &a);                /* into an empty one */
    hist_merge(&m, &empty);            /* an empty one changes nothing */
    hist_merge(&m, &b);
    check_same(&m, &all);
    hist_merge(&empty, &empty);
    assert_int_equal(empty.count, 0);
    assert_null(empty.bucket);
    hist_free(&m);
    hist_free(&all);
    hist_free(&a);
    hist_free(&b);
}

static void test_empty(void **state)
{
    (void)state;
    struct hist h;
    hist_init(&h);
    assert_int_equal(h.count, 0);
    assert_null(h.bucket);
    assert_int_equal(hist_quantile(&h, 0.0), 0);
    assert_int_equal(hist_quantile(&h, 0.5), 0);
    assert_int_equal(hist_quantile(&h, 1.0), 0);
    assert_true(hist_mean(&h) == 0.0);
    hist_free(&h);
    hist_free(&h);                     /* freeing twice is harmless */
}

/* Censored samples (work never done) rank above every finite one: a
 * quantile whose rank falls among them is HIST_CENSORED, and so are the
 * maximum and the mean once there is one; they survive a merge. */
static void test_censored(void **state)
{
    (void)state;
    struct hist h, m;
    hist_init(&h);
    hist_init(&m);
    for (int64_t v = 1; v <= 7; v++)
        hist_add(&h, 10 * v);                  /* 10, 20, ..., 70 */
    hist_add_censored(&h, 3);                  /* and three never served */
    assert_int_equal(h.count, 7);
    assert_int_equal(h.censored, 3);
    assert_int_equal(hist_quantile(&h, 0.0), 10);
    assert_int_equal(hist_quantile(&h, 0.5), 50);      /* rank 5 of 10 */
    assert_int_equal(hist_quantile(&h, 0.7), 70);      /* rank 7: the last finite one */
    assert_int_equal(hist_quantile(&h, 0.71), HIST_CENSORED);
    assert_int_equal(hist_quantile(&h, 0.9), HIST_CENSORED);
    assert_int_equal(hist_quantile(&h, 1.0), HIST_CENSORED);
    assert_true(isinf(hist_mean(&h)) && hist_mean(&h) > 0);
    /* Only censored samples: every quantile is censored. */
    hist_add_censored(&m, 2);
    assert_int_equal(hist_quantile(&m, 0.0), HIST_CENSORED);
    assert_int_equal(hist_quantile(&m, 0.5), HIST_CENSORED);
    assert_true(isinf(hist_mean(&m)));
    hist_merge(&m, &h);
    assert_int_equal(m.count, 7);
    assert_int_equal(m.censored, 5);
    assert_int_equal(hist_quantile(&m, 0.5), 60);      /* rank 6 of 12 */
    assert_int_equal(hist_quantile(&m, 0.6), HIST_CENSORED);
    hist_free(&h);
    hist_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_midpoint_and_clamp),
        cmocka_unit_test(test_uniform),
        cmocka_unit_test(test_exponential),
        cmocka_unit_test(test_lognormal),
        cmocka_unit_test(test_constant),
        cmocka_unit_test(test_tiny_exact),
        cmocka_unit_test(test_huge),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_censored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
