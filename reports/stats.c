/* stats.c: Welford accumulation and Student t intervals (see stats.h).
 *
 * The t distribution is computed, not tabulated, so that any number of
 * seeds gets its exact interval.  For df <= STATS_T_SERIES_MAX the CDF is
 * the finite trigonometric series (exact for integer df) and the quantile
 * its bisection; above, the quantile is the Cornish-Fisher expansion around
 * the normal quantile (Abramowitz and Stegun 26.7.5), whose first omitted
 * term is of order df^-5: below 1e-13 for df > 1000.  That keeps a quantile
 * O(1000) whatever the number of seeds. */
#include "reports/stats.h"

#include <math.h>

#include "sim/util.h"

#define STATS_T_SERIES_MAX 1000

void stats_init(struct stats_acc *a)
{
    *a = (struct stats_acc){.n = 0, .mean = 0, .m2 = 0, .min = NAN, .max = NAN};
}

void stats_add(struct stats_acc *a, double x)
{
    if (isnan(x))
        return;
    a->n++;
    double d = x - a->mean;
    a->mean += d / (double)a->n;
    a->m2 += d * (x - a->mean);
    if (a->n == 1 || x < a->min)
        a->min = x;
    if (a->n == 1 || x > a->max)
        a->max = x;
}

double stats_sd(const struct stats_acc *a)
{
    if (a->n < 2)
        return NAN;
    /* m2 can come out a hair below zero when every value is equal. */
    return a->m2 > 0 ? sqrt(a->m2 / (double)(a->n - 1)) : 0.0;
}

double stats_ci95(const struct stats_acc *a)
{
    if (a->n < 2)
        return NAN;
    return stats_t_quantile(0.975, a->n - 1) * stats_sd(a) / sqrt((double)a->n);
}

/* P(|T| < t) for t >= 0: A(t | df) of Abramowitz and Stegun 26.7.3 (odd df)
 * and 26.7.4 (even df), with theta = atan(t / sqrt(df)).  The terms of the
 * sums shrink geometrically (by cos^2 theta), each from the previous one. */
static double t_central(double t, uint64_t df)
{
    double theta = atan(t / sqrt((double)df));
    double c = cos(theta), s = sin(theta), c2 = c * c;
    if (df % 2 == 0) {
        double term = 1, sum = 1;
        for (uint64_t k = 1; 2 * k <= df - 2; k++) {
            term *= (double)(2 * k - 1) / (double)(2 * k) * c2;
            sum += term;
        }
        return s * sum;
    }
    if (df == 1)
        return 2 * theta / M_PI;
    double term = c, sum = c;
    for (uint64_t k = 1; 2 * k + 1 <= df - 2; k++) {
        term *= (double)(2 * k) / (double)(2 * k + 1) * c2;
        sum += term;
    }
    return 2 / M_PI * (theta + s * sum);
}

double stats_t_cdf(double t, uint64_t df)
{
    SIM_ASSERT(df >= 1);
    if (isnan(t))
        return NAN;
    double a = t_central(fabs(t), df);
    return t >= 0 ? 0.5 + a / 2 : 0.5 - a / 2;
}

/* The standard normal quantile, by bisection on erfc (about 60 steps). */
static double normal_quantile(double p)
{
    double lo = -40, hi = 40;
    for (int i = 0; i < 200 && hi - lo > 1e-15 * fmax(1, fabs(lo)); i++) {
        double mid = (lo + hi) / 2;
        if (0.5 * erfc(-mid / M_SQRT2) < p)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

double stats_t_quantile(double p, uint64_t df)
{
    SIM_ASSERT(df >= 1);
    if (!(p > 0 && p < 1))
        return NAN;
    if (p < 0.5)
        return -stats_t_quantile(1 - p, df);
    if (p == 0.5)
        return 0;
    if (df > STATS_T_SERIES_MAX) {
        double z = normal_quantile(p), v = (double)df;
        double z2 = z * z, z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2, z9 = z7 * z2;
        double g1 = (z3 + z) / 4;
        double g2 = (5 * z5 + 16 * z3 + 3 * z) / 96;
        double g3 = (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / 384;
        double g4 = (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / 92160;
        return z + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v);
    }
    double lo = 0, hi = 1;
    while (stats_t_cdf(hi, df) < p && hi < 1e300)
        hi *= 2;
    for (int i = 0; i < 400 && hi - lo > 1e-14 * hi; i++) {
        double mid = (lo + hi) / 2;
        if (stats_t_cdf(mid, df) < p)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}
