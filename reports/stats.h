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
 * bit-identical results (a parallel sweep feeds them in job order). */
#ifndef REPORTS_STATS_H
#define REPORTS_STATS_H

#include <stdint.h>

struct stats_acc {
    uint64_t n;
    double mean;
    double m2;                     /* sum of squared deviations from the mean */
    double min, max;
};

void stats_init(struct stats_acc *a);
/* Adds one value; NaN values are ignored (a metric a run does not have). */
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

#endif
