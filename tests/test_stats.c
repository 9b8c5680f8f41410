/* test_stats.c: confidence intervals against known values and a known
 * distribution.
 *
 * - the t quantiles against a printed t table (4 decimals) and the t CDF
 *   against a numerical integration of the t density;
 * - the interval of small samples computed by hand;
 * - coverage: many samples of a normal distribution with a known mean; the
 *   95 % interval must contain the mean in 95 % of them (within 1 %), for
 *   a sample as small as 3 seeds, where a normal (z) interval would cover
 *   only about 80 %. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>

#include "reports/stats.h"
#include "sim/rng.h"

/* The project's own stream (sim/rng.h), so that a failure reproduces. */
static struct rng rng_state = {42};

static double unit01(void)
{
    return ((double)(rng_next(&rng_state) >> 11) + 0.5) / 9007199254740992.0;
}

/* Box-Muller. */
static double rng_normal(double mean, double sd)
{
    double u = unit01(), v = unit01();
    return mean + sd * sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static void near(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol)) {
        print_error("%s: got %.12g, want %.12g (tolerance %g)\n", what, got, want, tol);
        fail();
    }
}

static void test_t_table(void **state)
{
    (void)state;
    static const struct { uint64_t df; double p, t; } table[] = {
        {1, 0.975, 12.7062}, {2, 0.975, 4.3027}, {3, 0.975, 3.1824}, {4, 0.975, 2.7764},
        {5, 0.975, 2.5706}, {9, 0.975, 2.2622}, {10, 0.975, 2.2281}, {20, 0.975, 2.0860},
        {30, 0.975, 2.0423}, {60, 0.975, 2.0003}, {120, 0.975, 1.9799}, {10, 0.995, 3.1693},
        {1, 0.95, 6.3138}, {15, 0.90, 1.3406}, {1, 0.75, 1.0000},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "t(%g, %llu)", table[i].p, (unsigned long long)table[i].df);
        near(stats_t_quantile(table[i].p, table[i].df), table[i].t, 5e-5, what);
        near(stats_t_quantile(1 - table[i].p, table[i].df), -table[i].t, 5e-5, what);
    }
    near(stats_t_quantile(0.5, 7), 0, 0, "median");
    /* Many degrees of freedom: the normal quantile. */
    near(stats_t_quantile(0.975, 10000000), 1.959963985, 1e-6, "t(0.975, 1e7)");
    assert_true(isnan(stats_t_quantile(0, 3)));
    assert_true(isnan(stats_t_quantile(1, 3)));
}

/* The t density, integrated by Simpson's rule from 0 to t. */
static double t_integral(double t, uint64_t df)
{
    double v = (double)df;
    double k = exp(lgamma((v + 1) / 2) - lgamma(v / 2)) / sqrt(v * M_PI);
    int n = 20000;
    double h = t / n, sum = 0;
    for (int i = 0; i <= n; i++) {
        double x = i * h;
        double f = k * pow(1 + x * x / v, -(v + 1) / 2);
        sum += f * (i == 0 || i == n ? 1 : i % 2 ? 4 : 2);
    }
    return sum * h / 3;
}

static void test_t_cdf_integration(void **state)
{
    (void)state;
    static const uint64_t dfs[] = {1, 2, 3, 4, 7, 30, 200, 999};
    static const double ts[] = {0.3, 1, 2, 4.5};
    for (size_t i = 0; i < sizeof dfs / sizeof dfs[0]; i++) {
        for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++) {
            char what[64];
            snprintf(what, sizeof what, "cdf(%g, %llu)", ts[k], (unsigned long long)dfs[i]);
            near(stats_t_cdf(ts[k], dfs[i]) - 0.5, t_integral(ts[k], dfs[i]), 1e-10, what);
            near(stats_t_cdf(-ts[k], dfs[i]), 1 - stats_t_cdf(ts[k], dfs[i]), 1e-15, what);
        }
    }
}

/* Above 1000 degrees of freedom the quantile comes from an expansion: the
 * exact CDF at it must give back p. */
static void test_t_expansion(void **state)
{
    (void)state;
    static const uint64_t dfs[] = {1000, 1001, 2000, 99999};
    for (size_t i = 0; i < sizeof dfs / sizeof dfs[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "cdf(quantile(0.975, %llu))", (unsigned long long)dfs[i]);
        near(stats_t_cdf(stats_t_quantile(0.975, dfs[i]), dfs[i]), 0.975, 1e-12, what);
    }
    /* and the quantile keeps falling across the switch */
    assert_true(stats_t_quantile(0.975, 1001) < stats_t_quantile(0.975, 1000));
}

static void test_hand_computed(void **state)
{
    (void)state;
    struct stats_acc a;
    /* 1..5: mean 3, s^2 = 10/4, s/sqrt(5) = sqrt(1/2); t(0.975, 4) = 2.7764451 */
    stats_init(&a);
    for (int i = 1; i <= 5; i++)
        stats_add(&a, i);
    assert_int_equal(a.n, 5);
    near(a.mean, 3, 1e-15, "mean of 1..5");
    near(stats_sd(&a), sqrt(2.5), 1e-15, "sd of 1..5");
    near(stats_ci95(&a), 2.7764451052 * sqrt(0.5), 1e-9, "ci of 1..5");
    near(stats_ci95(&a), 1.963243, 1e-6, "ci of 1..5 (printed)");
    near(a.min, 1, 0, "min");
    near(a.max, 5, 0, "max");
    /* 2 and 4: mean 3, s = sqrt(2), s/sqrt(2) = 1: the half-width is t(0.975, 1). */
    stats_init(&a);
    stats_add(&a, 2);
    stats_add(&a, NAN);                /* ignored */
    stats_add(&a, 4);
    assert_int_equal(a.n, 2);
    near(stats_ci95(&a), 12.7062047362, 1e-9, "ci of {2, 4}");
    /* one value: a mean and no interval */
    stats_init(&a);
    stats_add(&a, 7);
    near(a.mean, 7, 0, "mean of one");
    assert_true(isnan(stats_sd(&a)));
    assert_true(isnan(stats_ci95(&a)));
    /* equal values: an interval of width 0 */
    stats_init(&a);
    for (int i = 0; i < 10; i++)
        stats_add(&a, 0.1);
    near(stats_ci95(&a), 0, 0, "ci of a constant");
    /* a large offset does not cost precision (Welford, not sum of squares) */
    stats_init(&a);
    for (int i = 1; i <= 5; i++)
        stats_add(&a, 1e12 + i);
    near(stats_sd(&a), sqrt(2.5), 1e-6, "sd with an offset of 1e12");
}

/* Fraction of nsamples samples of n normal values whose interval, with the
 * quantile q (NAN: the t quantile), contains the true mean. */
static double coverage(int n, int nsamples, double q)
{
    const double mu = 10, sd = 3;
    int hit = 0;
    for (int k = 0; k < nsamples; k++) {
        struct stats_acc a;
        stats_init(&a);
        for (int i = 0; i < n; i++)
            stats_add(&a, rng_normal(mu, sd));
        double hw = isnan(q) ? stats_ci95(&a) : q * stats_sd(&a) / sqrt((double)n);
        hit += fabs(a.mean - mu) <= hw;
    }
    return (double)hit / nsamples;
}

static void test_coverage(void **state)
{
    (void)state;
    static const int ns[] = {3, 5, 30};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        double c = coverage(ns[i], 20000, NAN);
        char what[64];
        snprintf(what, sizeof what, "coverage with %d values", ns[i]);
        /* binomial standard error at 20000 samples: 0.0015 */
        near(c, 0.95, 0.01, what);
    }
    /* The test can tell: a normal quantile (1.96) undercovers small samples. */
    double cz = coverage(3, 20000, 1.959963985);
    if (!(cz < 0.85)) {
        print_error("z interval with 3 values covered %.4f, expected about 0.80\n", cz);
        fail();
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_t_table),
        cmocka_unit_test(test_t_cdf_integration),
        cmocka_unit_test(test_t_expansion),
        cmocka_unit_test(test_hand_computed),
        cmocka_unit_test(test_coverage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
