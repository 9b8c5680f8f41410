/* test_stats.c: confidence intervals against known values and a known
 * distribution.
 *
 * - the exact count and share intervals (Garwood, Clopper-Pearson) and the
 *   chi-square quantiles under them against published tables and against
 *   values computed with mpmath at 30 digits; their coverage on Poisson and
 *   Bernoulli samples, where the t interval fails; how cells are written
 *   (two significant digits, asymmetric intervals, never below zero);
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
#include <string.h>

#include "reports/fmt.h"
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

/* Chi-square quantiles of a printed table (Abramowitz and Stegun, table
 * 26.8; any statistics textbook), and the incomplete gamma and beta
 * functions against mpmath (30 digits). */
static void test_chi2_gamma_beta(void **state)
{
    (void)state;
    static const struct { double p, df, q; } chi2[] = {
        {0.975, 1, 5.0239}, {0.95, 10, 18.3070}, {0.025, 10, 3.2470}, {0.5, 3, 2.3660},
        {0.999, 100, 149.449}, {0.025, 4, 0.4844}, {0.975, 4, 11.1433}, {0.05, 30, 18.4927},
    };
    for (size_t i = 0; i < sizeof chi2 / sizeof chi2[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "chi2(%g, %g)", chi2[i].p, chi2[i].df);
        near(stats_chi2_quantile(chi2[i].p, chi2[i].df), chi2[i].q, 6e-4, what);
    }
    near(stats_gamma_p(0.5, 0.1), 0.345279153981423, 1e-13, "P(0.5, 0.1)");
    near(stats_gamma_p(3, 10), 0.997230604284488, 1e-13, "P(3, 10)");
    near(stats_gamma_p(1000, 950), 0.0550546862307472, 1e-12, "P(1000, 950)");
    near(stats_gamma_p(1, 2), 1 - exp(-2), 1e-15, "P(1, 2)");
    near(stats_beta_i(2, 3, 0.4), 0.5248, 1e-14, "I(0.4; 2, 3)");
    near(stats_beta_i(50, 60, 0.5), 0.830907293901647, 1e-12, "I(0.5; 50, 60)");
    /* Gamma(1) is the exponential distribution: its quantile is -log(1 - p). */
    near(stats_gamma_quantile(0.975, 1), -log(0.025), 1e-12, "Gamma(1) quantile");
    /* Out of range. */
    assert_true(isnan(stats_gamma_p(0, 1)));
    assert_true(isnan(stats_gamma_quantile(1, 3)));
    assert_true(isnan(stats_beta_i(1, 1, 1.5)));
    assert_true(isnan(stats_beta_quantile(0, 2, 2)));
}

/* Garwood's interval for k events in one observation: the 95 % table of
 * exact Poisson limits (e.g. Ulm 1990, Am. J. Epidemiol. 131:373; 4
 * significant digits there), refined with mpmath; above 1e5 the
 * Wilson-Hilferty branch. */
static void test_poisson_interval(void **state)
{
    (void)state;
    static const struct { uint64_t k; double lo, hi; } tab[] = {
        {0, 0, 3.688879454114},
        {1, 0.02531780798429, 5.571643390939},
        {2, 0.242209278544, 7.224687667724},
        {3, 0.6186721228956, 8.767273069742},
        {5, 1.623486390118, 11.66833207932},
        {10, 4.795388696132, 18.39035604202},
        {100, 81.36399125092, 121.6267937924},
        {1000, 938.9730184077, 1063.952136016},
        {99999, 99380.1557627304, 100620.741640774},
        {100001, 99382.1495647746, 100622.747838699},
        {1000000, 998040.983340294, 1001961.91194543},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        double lo, hi;
        char what[64];
        stats_poisson_interval(tab[i].k, 1, 0.95, &lo, &hi);
        snprintf(what, sizeof what, "Poisson k=%llu lower", (unsigned long long)tab[i].k);
        near(lo, tab[i].lo, 1e-9 * (tab[i].lo + 1), what);
        snprintf(what, sizeof what, "Poisson k=%llu upper", (unsigned long long)tab[i].k);
        near(hi, tab[i].hi, 1e-9 * tab[i].hi, what);
    }
    /* Per observation: k events over n observations is the interval of k, over n. */
    double lo, hi;
    stats_poisson_interval(0, 5, 0.95, &lo, &hi);
    near(hi, 3.688879454114 / 5, 1e-12, "k=0 over 5 seeds");
    stats_poisson_interval(1, 5, 0.95, &lo, &hi);
    near(lo, 0.02531780798429 / 5, 1e-13, "k=1 over 5 seeds, lower");
    near(hi, 5.571643390939 / 5, 1e-12, "k=1 over 5 seeds, upper");
    /* Another level: 90 %, k = 0: -log(0.05). */
    stats_poisson_interval(0, 1, 0.90, &lo, &hi);
    near(hi, -log(0.05), 1e-12, "k=0 at 90%");
}

/* Clopper-Pearson: closed forms at the edges, the classic values inside
 * (5 of 10: [0.1871, 0.8129]), mpmath for the rest. */
static void test_binomial_interval(void **state)
{
    (void)state;
    static const struct { uint64_t x, n; double lo, hi; } tab[] = {
        {0, 10, 0, 0.3084971078188},
        {5, 10, 0.1870860284474, 0.8129139715526},
        {1, 5, 0.005050763379468, 0.7164179361181},
        {10, 10, 0.6915028921812, 1},
        {3, 20, 0.03207093718546, 0.3789268265453},
        {97, 100, 0.9148239470257, 0.9937700284617},
        {0, 1, 0, 0.975},
        {1, 1, 0.025, 1},
        {500, 1000, 0.4685491729718, 0.5314508270282},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        double lo, hi;
        char what[64];
        stats_binomial_interval(tab[i].x, tab[i].n, 0.95, &lo, &hi);
        snprintf(what, sizeof what, "binomial %llu of %llu", (unsigned long long)tab[i].x,
                 (unsigned long long)tab[i].n);
        near(lo, tab[i].lo, 1e-11, what);
        near(hi, tab[i].hi, 1e-11, what);
    }
    /* x = 0: the upper limit is 1 - 0.025^(1/n); x = 1: the lower 1 - 0.975^(1/n). */
    double lo, hi;
    stats_binomial_interval(0, 100000, 0.95, &lo, &hi);
    near(hi, 1 - pow(0.025, 1e-5), 1e-15, "0 of 100000");
    stats_binomial_interval(1, 100000, 0.95, &lo, &hi);
    near(lo, 1 - pow(0.975, 1e-5), 1e-15, "1 of 100000");
}

static void acc_of(struct stats_acc *a, const double *v, size_t n)
{
    stats_init(a);
    for (size_t i = 0; i < n; i++)
        stats_add(a, v[i]);
}

/* Which interval each kind of metric gets (stats_interval95). */
static void test_interval_rules(void **state)
{
    (void)state;
    struct stats_acc a;
    double lo, hi;
    /* One loss in five seeds: the t interval reaches below zero
     * (0.2 +- 0.555); Garwood's does not. */
    acc_of(&a, (const double[]){0, 0, 1, 0, 0}, 5);
    near(a.mean - stats_ci95(&a), -0.3552, 1e-4, "the t interval goes below zero");
    assert_int_equal(stats_interval95(&a, STATS_COUNT, &lo, &hi), 0);
    near(lo, 0.02531780798429 / 5, 1e-12, "0,0,1,0,0: lower");
    near(hi, 5.571643390939 / 5, 1e-12, "0,0,1,0,0: upper");
    /* Nothing in five seeds: up to 3.69 / 5 per seed is still plausible. */
    acc_of(&a, (const double[]){0, 0, 0, 0, 0}, 5);
    stats_interval95(&a, STATS_COUNT, &lo, &hi);
    near(lo, 0, 0, "zeros: lower");
    near(hi, 3.688879454114 / 5, 1e-12, "zeros: upper");
    /* More spread than a Poisson count (a burst of 3 in one seed): the t
     * interval, cut at zero; Garwood's lower end (0.124) would claim that
     * the burst comes back in most runs. */
    acc_of(&a, (const double[]){0, 0, 0, 0, 3}, 5);
    stats_interval95(&a, STATS_COUNT, &lo, &hi);
    near(lo, 0, 0, "burst: lower (t, cut at 0)");
    near(hi, 0.6 + stats_ci95(&a), 1e-12, "burst: upper (t)");
    /* One crash losing 2609 items in one seed of four: not [627, 2728]. */
    acc_of(&a, (const double[]){0, 2609, 0, 0}, 4);
    stats_interval95(&a, STATS_COUNT, &lo, &hi);
    near(lo, 0, 0, "one large burst: lower");
    near(hi, 652.25 + stats_ci95(&a), 1e-9, "one large burst: upper (t)");
    /* Spread a little more than Poisson, the t interval above zero: its
     * lower end where it is below Garwood's. */
    acc_of(&a, (const double[]){40, 60, 45, 75, 30}, 5);
    stats_interval95(&a, STATS_COUNT, &lo, &hi);
    near(lo, 50 - stats_ci95(&a), 1e-9, "overdispersed: t lower");
    near(hi, 50 + stats_ci95(&a), 1e-9, "overdispersed: t upper");
    /* Far less spread than a Poisson count (timer wake-ups): the t interval. */
    acc_of(&a, (const double[]){8660, 8661, 8660, 8661, 8660}, 5);
    stats_interval95(&a, STATS_COUNT, &lo, &hi);
    near(lo, a.mean - stats_ci95(&a), 1e-9, "steady count: t lower");
    near(hi, a.mean + stats_ci95(&a), 1e-9, "steady count: t upper");
    acc_of(&a, (const double[]){7, 7, 7}, 3);
    stats_interval95(&a, STATS_COUNT, &lo, &hi);
    near(lo, 7, 0, "constant count: lower");
    near(hi, 7, 0, "constant count: upper");
    /* Not an integer: a non-negative value with the t interval cut at 0. */
    acc_of(&a, (const double[]){0, 0.5, 0, 0}, 4);
    stats_interval95(&a, STATS_COUNT, &lo, &hi);
    near(lo, 0, 0, "fractional: cut at 0");
    near(hi, a.mean + stats_ci95(&a), 1e-12, "fractional: t upper");
    /* A share: 3 of 5 seeds. */
    acc_of(&a, (const double[]){1, 0, 1, 1, 0}, 5);
    stats_interval95(&a, STATS_SHARE, &lo, &hi);
    double blo, bhi;
    stats_binomial_interval(3, 5, 0.95, &blo, &bhi);
    near(lo, blo, 0, "share lower");
    near(hi, bhi, 0, "share upper");
    /* A duration: the t interval cut at zero; a real value: not cut. */
    acc_of(&a, (const double[]){0, 0, 0, 1000}, 4);
    stats_interval95(&a, STATS_NONNEG, &lo, &hi);
    near(lo, 0, 0, "duration cut at 0");
    stats_interval95(&a, STATS_REAL, &lo, &hi);
    near(lo, 250 - stats_ci95(&a), 1e-9, "real value, not cut");
    /* One seed: no interval. */
    acc_of(&a, (const double[]){4}, 1);
    assert_int_equal(stats_interval95(&a, STATS_COUNT, &lo, &hi), -1);
    assert_true(isnan(lo) && isnan(hi));
}

/* A Poisson draw by inversion (small means only). */
static uint64_t rng_poisson(double mean)
{
    double u = unit01(), p = exp(-mean), c = p;
    uint64_t k = 0;
    while (u > c && k < 1000) {
        k++;
        p *= mean / (double)k;
        c += p;
    }
    return k;
}

/* Rare events over few seeds: the exact intervals cover the true mean at
 * least 95 % of the time; the t interval does not come close. */
static void test_count_coverage(void **state)
{
    (void)state;
    static const double means[] = {0.05, 0.2, 1, 4};
    for (size_t m = 0; m < sizeof means / sizeof means[0]; m++) {
        int hit = 0, hit_t = 0, nsamples = 20000;
        for (int s = 0; s < nsamples; s++) {
            struct stats_acc a;
            stats_init(&a);
            for (int i = 0; i < 5; i++)
                stats_add(&a, (double)rng_poisson(means[m]));
            double lo, hi, hw = stats_ci95(&a);
            stats_interval95(&a, STATS_COUNT, &lo, &hi);
            hit += lo <= means[m] && means[m] <= hi;
            hit_t += fabs(a.mean - means[m]) <= hw;
        }
        double c = (double)hit / nsamples, ct = (double)hit_t / nsamples;
        if (!(c >= 0.945)) {
            print_error("Poisson mean %g over 5 seeds: exact interval covered %.4f\n", means[m], c);
            fail();
        }
        if (means[m] <= 0.2 && !(ct < 0.80)) {
            print_error("Poisson mean %g over 5 seeds: t interval covered %.4f, expected far below 0.95\n", means[m],
                        ct);
            fail();
        }
    }
    /* A share of 0.9 over 10 seeds: Clopper-Pearson covers at least 95 %. */
    int hit = 0;
    for (int s = 0; s < 20000; s++) {
        struct stats_acc a;
        stats_init(&a);
        for (int i = 0; i < 10; i++)
            stats_add(&a, unit01() < 0.9);
        double lo, hi;
        stats_interval95(&a, STATS_SHARE, &lo, &hi);
        hit += lo <= 0.9 && 0.9 <= hi;
    }
    near((double)hit / 20000, 0.975, 0.025, "Clopper-Pearson coverage at 0.9 over 10 seeds");
}

static void cell(const char *metric, const double *v, size_t n, uint64_t never, const char *want)
{
    struct stats_acc a;
    acc_of(&a, v, n);
    char got[128];
    fmt_metric_ci(metric_find(metric), &a, never, got, sizeof got);
    if (strcmp(got, want)) {
        print_error("%s cell: got '%s', want '%s'\n", metric, got, want);
        fail();
    }
}

/* Cells: two significant digits on the shorter side, the rest to the same
 * decimal place; asymmetric where the interval is; never below zero. */
static void test_cells(void **state)
{
    (void)state;
    cell("lost", (const double[]){0, 0, 1, 0, 0}, 5, 0, "0.20 [0.01, 1.11]");
    cell("lost", (const double[]){0, 0, 0, 0, 0}, 5, 0, "0");
    cell("dues", (const double[]){8640, 8640}, 2, 0, "8640");
    cell("lost", (const double[]){3}, 1, 0, "3");
    /* Symmetric: h to two digits, the mean to the same place, tens included. */
    cell("published", (const double[]){33200, 34100, 33400, 34000, 33635}, 5, 0, "33670 ± 480");
    cell("runs_failed", (const double[]){1, 2, 3, 4, 5}, 5, 0, "3.0 ± 2.0");
    /* A share of seeds. */
    cell("recovery_ok", (const double[]){1, 0, 1, 1, 0}, 5, 0, "60% [15%, 95%]");
    cell("recovery_ok", (const double[]){1, 1, 1}, 3, 0, "true");
    /* Durations: 2 s +- 1.3 s, and a skewed one cut at zero. */
    cell("latency.p50", (const double[]){1e6, 2e6, 3e6}, 3, 0, "2.0s [0, 4.5s]");
    cell("latency.p50", (const double[]){255e6, 256e6, 257e6, 255e6, 256e6}, 5, 0, "4m15.8s ± 1.0s");
    cell("latency.max", (const double[]){86400e6 + 14 * 60e6 + 47e6, 86400e6 + 14 * 60e6 + 20e6,
                                         86400e6 + 15 * 60e6 + 10e6},
         3, 0, "1d00h14m46s ± 1m02s");
    cell("recovery_time", (const double[]){120e6, 130e6}, 2, 3, "2m05s ± 1m04s (3 never)");
    cell("recovery_time", (const double[]){0}, 0, 2, "never");
    /* A change (diff): signed. */
    char got[64];
    fmt_estimate(metric_find("lost"), 0.2, 0.2 - 0.555, 0.2 + 0.555, 1, got, sizeof got);
    assert_string_equal(got, "+0.20 ± 0.56");
    fmt_estimate(metric_find("latency.p99"), -1.5e6, -1.5e6, -1.5e6, 1, got, sizeof got);
    assert_string_equal(got, "-1.50s ± 0");
    fmt_estimate(metric_find("lost"), 1, NAN, NAN, 1, got, sizeof got);
    assert_string_equal(got, "+1");
    /* Censored seeds: the mean is infinite. */
    cell("latency.p99", (const double[]){INFINITY, INFINITY}, 2, 0, "\xe2\x88\x9e");
    cell("latency.p99", (const double[]){1e6, INFINITY, 2e6, INFINITY, 3e6}, 5, 0, "\xe2\x88\x9e (2 of 5 seeds)");
    cell("latency.p99", (const double[]){INFINITY}, 1, 0, "\xe2\x88\x9e");
}

/* The paired test: the t interval of the per-seed differences, or the
 * sign test when a seed is censored on one side only. */
static void test_paired(void **state)
{
    (void)state;
    size_t np;
    /* Identical values: nothing to tell apart. */
    const double a[] = {1, 2, 3, 4, 5};
    assert_int_equal(stats_paired_test(a, a, 5, &np), 0);
    assert_int_equal(np, 5);
    /* The same difference in every seed (a deterministic metric): significant. */
    const double b[] = {11, 12, 13, 14, 15};
    assert_int_equal(stats_paired_test(a, b, 5, NULL), -1);
    assert_int_equal(stats_paired_test(b, a, 5, NULL), 1);
    /* Noisy differences around zero: not significant; a large consistent
     * one: significant (t = 4 / (1.58 / sqrt 5) = 5.7 > 2.78). */
    const double c[] = {2, 1, 4, 3, 6}, d[] = {4, 5, 7, 9, 9};
    assert_int_equal(stats_paired_test(a, c, 5, NULL), 0);
    assert_int_equal(stats_paired_test(a, d, 5, NULL), -1);
    /* One seed: never significant; NaN seeds are skipped. */
    assert_int_equal(stats_paired_test(a, b, 1, &np), 0);
    const double e[] = {NAN, NAN, NAN, NAN, 20};
    assert_int_equal(stats_paired_test(a, e, 5, &np), 0);
    assert_int_equal(np, 1);
    /* A rare count: 0 in every seed against one loss in five: not
     * significant. */
    const double z[] = {0, 0, 0, 0, 0}, one[] = {0, 0, 0, 1, 0};
    assert_int_equal(stats_paired_test(z, one, 5, NULL), 0);
    /* Censored on one side: the sign test.  Five of five seeds worse is
     * p = 2 / 32 = 0.0625: not significant; six of six is 0.031: it is. */
    const double f[] = {1, 2, 3, 4, 5, 6}, inf6[] = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY};
    assert_int_equal(stats_paired_test(f, inf6, 5, NULL), 0);
    assert_int_equal(stats_paired_test(f, inf6, 6, NULL), -1);
    assert_int_equal(stats_paired_test(inf6, f, 6, NULL), 1);
    /* Censored on both sides: equal. */
    assert_int_equal(stats_paired_test(inf6, inf6, 6, NULL), 0);
    assert_true(fabs(stats_sign_test_p(0, 5) - 0.0625) < 1e-12);
    assert_true(fabs(stats_sign_test_p(1, 10) - 22.0 / 1024) < 1e-12);
    assert_true(stats_sign_test_p(0, 0) == 1);
    assert_true(stats_sign_test_p(3, 6) == 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_t_table),
        cmocka_unit_test(test_t_cdf_integration),
        cmocka_unit_test(test_t_expansion),
        cmocka_unit_test(test_hand_computed),
        cmocka_unit_test(test_coverage),
        cmocka_unit_test(test_chi2_gamma_beta),
        cmocka_unit_test(test_poisson_interval),
        cmocka_unit_test(test_binomial_interval),
        cmocka_unit_test(test_interval_rules),
        cmocka_unit_test(test_count_coverage),
        cmocka_unit_test(test_cells),
        cmocka_unit_test(test_paired),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
