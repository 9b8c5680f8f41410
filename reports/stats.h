/* stats.h: means and 95 % confidence intervals over seeds.
 *
 * A sweep runs the same scenario and policy under many seeds; each seed is
 * an independent replication, so a metric's values over the seeds are a
 * sample whose mean is estimated with a Student t interval:
 *
 *     mean +- t(0.975, n - 1) * s / sqrt(n)
 *
 * where s is the sample standard deviation (n - 1 in the denominator).  The
 * interval needs n >= 2; with one seed the half-width is NaN ("no
 * interval"), never 0, so a single run is never mistaken for an exact one.
 *
 * The accumulator is Welford's online update, so a sweep of any length costs
 * O(1) memory per metric, and adding the same values in the same order gives
 * bit-identical results (a parallel sweep feeds them in job order).
 *
 * Counts and shares get exact intervals instead (stats_interval95): a
 * t interval is symmetric, so for a rare event seen in one seed of five it
 * reaches below zero (0.20 +- 0.56), which no count can.  A count over seeds
 * gets the exact Poisson interval of Garwood (1936), a share of seeds (a
 * boolean such as recovery_ok) the exact binomial interval of Clopper and
 * Pearson (1934); both come from the incomplete gamma and beta functions
 * below, inverted by bisection. */
#ifndef REPORTS_STATS_H
#define REPORTS_STATS_H

#include <stddef.h>
#include <stdint.h>

struct stats_acc {
    uint64_t n;
    double mean;
    double m2;                     /* sum of squared deviations from the mean */
    double min, max;
    double sum;                    /* plain sum: exact for integer counts below 2^53 */
    int fractional;                /* 1 once a value that is not an integer was added */
    uint64_t ninf;                 /* infinite values (a censored percentile): counted, not in n */
};

void stats_init(struct stats_acc *a);
/* Adds one value; NaN values are ignored (a metric a run does not have).
 * An infinite value (a percentile that lands on work never done) is only
 * counted in ninf: n, the mean and the interval describe the finite
 * values, and a caller must treat ninf > 0 as "the mean is infinite". */
void stats_add(struct stats_acc *a, double x);
/* The sample standard deviation; NaN when n < 2. */
double stats_sd(const struct stats_acc *a);
/* The half-width of the 95 % confidence interval of the mean; NaN when
 * n < 2.  Equal to 0 when every value was the same. */
double stats_ci95(const struct stats_acc *a);

/* The Student t distribution with df degrees of freedom (df >= 1, an
 * integer; up to 10^7).  stats_t_cdf is P(T <= t), exact up to rounding:
 * it sums the finite series of Abramowitz and Stegun 26.7.3/26.7.4, O(df)
 * terms.  stats_t_quantile inverts it by bisection for p in (0, 1):
 * stats_t_quantile(0.975, 9) = 2.2622. */
double stats_t_cdf(double t, uint64_t df);
double stats_t_quantile(double p, uint64_t df);

/* The regularized lower incomplete gamma function P(a, x) (a > 0, x >= 0):
 * the CDF of the Gamma(a, 1) distribution at x.  Series below x = a + 1,
 * continued fraction above (Numerical Recipes 6.2), relative error about
 * 1e-14 for a up to 1e5.  NaN for arguments out of range. */
double stats_gamma_p(double a, double x);
/* The p-quantile of Gamma(a, 1), p in (0, 1): P(a, x) = p solved by
 * bisection.  Above a = 1e5 the Wilson-Hilferty approximation, whose
 * relative error there is below 1e-7.  NaN out of range. */
double stats_gamma_quantile(double p, double a);
/* The p-quantile of the chi-square distribution with df > 0 degrees of
 * freedom: 2 * stats_gamma_quantile(p, df / 2).  stats_chi2_quantile(0.975,
 * 2) = 7.3778. */
double stats_chi2_quantile(double p, double df);
/* The regularized incomplete beta function I_x(a, b) (a, b > 0, x in
 * [0, 1]): the CDF of Beta(a, b) at x; continued fraction (Numerical
 * Recipes 6.4).  NaN out of range. */
double stats_beta_i(double a, double b, double x);
/* The p-quantile of Beta(a, b), p in (0, 1), by bisection. */
double stats_beta_quantile(double p, double a, double b);

/* Garwood's exact two-sided interval, at confidence level conf (0.95), for
 * the mean of a Poisson count per observation, from k events counted over
 * n >= 1 observations:
 *
 *     lo = chi2((1 - conf) / 2, 2k) / 2n,   hi = chi2((1 + conf) / 2, 2k + 2) / 2n
 *
 * with lo = 0 for k = 0.  k = 0, n = 1: [0, 3.689]. */
void stats_poisson_interval(uint64_t k, uint64_t n, double conf, double *lo, double *hi);
/* Clopper and Pearson's exact two-sided interval at level conf for a
 * proportion, from x successes in n >= 1 trials (x <= n):
 *
 *     lo = Beta^-1((1 - conf) / 2; x, n - x + 1),  hi = Beta^-1((1 + conf) / 2; x + 1, n - x)
 *
 * with lo = 0 for x = 0 and hi = 1 for x = n.  x = 0, n = 10: [0, 0.3085]. */
void stats_binomial_interval(uint64_t x, uint64_t n, double conf, double *lo, double *hi);

/* What the values of a metric are, for its interval. */
enum stats_kind {
    STATS_REAL,                    /* any real value: the t interval */
    STATS_NONNEG,                  /* never negative (a duration): the t interval, cut at 0 */
    STATS_COUNT,                   /* a count of events per seed: see below */
    STATS_SHARE,                   /* 0 or 1 per seed (a boolean): Clopper-Pearson */
};
/* The 95 % interval [lo, hi] of the mean of a's values: 0, or -1 (lo, hi
 * NaN) when a->n < 2.
 *   STATS_COUNT (non-negative integers): Garwood's interval for the sum of
 *     the n values, divided by n, widened to the t interval where that is
 *     wider and does not reach below zero (seeds that vary more than a
 *     Poisson count would: events in bursts).  Zero in every seed still
 *     gives [0, 3.689 / n].  A value that is not a non-negative integer
 *     makes it STATS_NONNEG.
 *   STATS_SHARE: the Clopper-Pearson interval of the number of values
 *     other than 0 out of n.
 *   STATS_NONNEG: the t interval, its lower end cut at 0.
 *   STATS_REAL: the t interval, mean +- stats_ci95. */
int stats_interval95(const struct stats_acc *a, enum stats_kind kind, double *lo, double *hi);

/* Paired comparison of two policies over the same seeds: x[i] and y[i]
 * are one metric's values in seed i under each (NaN: that seed has no
 * value and is skipped; +INFINITY: censored, larger than any finite value,
 * and equal to another +INFINITY).  Returns -1 when x is significantly
 * lower than y at the 95 % level, +1 when significantly higher, 0 when the
 * seeds do not tell them apart (or fewer than two seeds pair up).
 *   - all differences finite: the 95 % t interval of the differences
 *     x[i] - y[i] excludes 0 (identical nonzero differences in every seed
 *     count as significant: their interval has width 0);
 *   - some difference infinite (censored on one side only): the exact
 *     two-sided sign test, p < 0.05, over the seeds that differ.
 * *np gets the number of seeds compared. */
int stats_paired_test(const double *x, const double *y, size_t n, size_t *np);
/* The exact two-sided p-value of the sign test: k of m differences on one
 * side, under a fair coin (1 when m is 0). */
double stats_sign_test_p(uint64_t k, uint64_t m);

#endif
