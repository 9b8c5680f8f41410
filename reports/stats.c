/* stats.c: Welford accumulation, Student t intervals and exact intervals
 * for counts and shares (see stats.h).
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
    *a = (struct stats_acc){.n = 0, .mean = 0, .m2 = 0, .min = NAN, .max = NAN, .sum = 0, .fractional = 0, .ninf = 0};
}

void stats_add(struct stats_acc *a, double x)
{
    if (isnan(x))
        return;
    if (isinf(x)) {
        a->ninf++;
        return;
    }
    a->n++;
    double d = x - a->mean;
    a->mean += d / (double)a->n;
    a->m2 += d * (x - a->mean);
    if (a->n == 1 || x < a->min)
        a->min = x;
    if (a->n == 1 || x > a->max)
        a->max = x;
    a->sum += x;
    if (x != floor(x))
        a->fractional = 1;
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

/* --- incomplete gamma and beta functions ----------------------------------------------- */

#define STATS_EPS 1e-15
#define STATS_TINY 1e-300
#define STATS_ITMAX 10000000
#define STATS_WH_MIN 1e5           /* above this shape, Wilson-Hilferty */

/* P(a, x) by its series, for x < a + 1 (terms shrink like x / (a + k)). */
static double gamma_series(double a, double x)
{
    double ap = a, del = 1 / a, sum = del;
    for (long i = 0; i < STATS_ITMAX; i++) {
        ap += 1;
        del *= x / ap;
        sum += del;
        if (fabs(del) < fabs(sum) * STATS_EPS)
            break;
    }
    return sum * exp(-x + a * log(x) - lgamma(a));
}

/* Q(a, x) = 1 - P(a, x) by its continued fraction (modified Lentz), for
 * x >= a + 1. */
static double gamma_cfrac(double a, double x)
{
    double b = x + 1 - a, c = 1 / STATS_TINY, d = 1 / b, h = d;
    for (long i = 1; i < STATS_ITMAX; i++) {
        double an = -(double)i * ((double)i - a);
        b += 2;
        d = an * d + b;
        if (fabs(d) < STATS_TINY)
            d = STATS_TINY;
        c = b + an / c;
        if (fabs(c) < STATS_TINY)
            c = STATS_TINY;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < STATS_EPS)
            break;
    }
    return exp(-x + a * log(x) - lgamma(a)) * h;
}

double stats_gamma_p(double a, double x)
{
    if (!(a > 0) || isinf(a) || !(x >= 0))
        return NAN;
    if (x == 0)
        return 0;
    if (isinf(x))
        return 1;
    return x < a + 1 ? gamma_series(a, x) : 1 - gamma_cfrac(a, x);
}

/* Bisection for the x in [lo, hi] where a non-decreasing f(x) crosses p;
 * f(lo) < p <= f(hi).  Stops at a relative width of 1e-14 (or 1e-300
 * absolute). */
static double bisect(double (*f)(double x, const double *args), const double *args, double p, double lo, double hi)
{
    for (int i = 0; i < 2000 && hi - lo > 1e-14 * hi && hi - lo > 1e-300; i++) {
        double mid = lo + (hi - lo) / 2;
        if (f(mid, args) < p)
            lo = mid;
        else
            hi = mid;
    }
    return lo + (hi - lo) / 2;
}

static double gamma_cdf_at(double x, const double *args)
{
    return stats_gamma_p(args[0], x);
}

double stats_gamma_quantile(double p, double a)
{
    if (!(p > 0 && p < 1) || !(a > 0) || isinf(a))
        return NAN;
    if (a > STATS_WH_MIN) {
        /* (X / a)^(1/3) is nearly normal with mean 1 - 1/(9a) and
         * variance 1/(9a) (Wilson and Hilferty 1931). */
        double v = 1 / (9 * a), c = 1 - v + normal_quantile(p) * sqrt(v);
        return a * c * c * c;
    }
    double args[1] = {a}, hi = a > 1 ? a : 1;
    while (stats_gamma_p(a, hi) < p)
        hi *= 2;
    return bisect(gamma_cdf_at, args, p, 0, hi);
}

double stats_chi2_quantile(double p, double df)
{
    return 2 * stats_gamma_quantile(p, df / 2);
}

/* The continued fraction of I_x(a, b) (Numerical Recipes 6.4, modified
 * Lentz); converges fast for x < (a + 1) / (a + b + 2). */
static double beta_cfrac(double a, double b, double x)
{
    double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap;
    if (fabs(d) < STATS_TINY)
        d = STATS_TINY;
    d = 1 / d;
    double h = d;
    for (long m = 1; m < STATS_ITMAX; m++) {
        double dm = (double)m, m2 = 2 * dm;
        double aa = dm * (b - dm) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d;
        if (fabs(d) < STATS_TINY)
            d = STATS_TINY;
        c = 1 + aa / c;
        if (fabs(c) < STATS_TINY)
            c = STATS_TINY;
        d = 1 / d;
        h *= d * c;
        aa = -(a + dm) * (qab + dm) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        if (fabs(d) < STATS_TINY)
            d = STATS_TINY;
        c = 1 + aa / c;
        if (fabs(c) < STATS_TINY)
            c = STATS_TINY;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < STATS_EPS)
            break;
    }
    return h;
}

double stats_beta_i(double a, double b, double x)
{
    if (!(a > 0) || !(b > 0) || isinf(a) || isinf(b) || !(x >= 0 && x <= 1))
        return NAN;
    if (x == 0 || x == 1)
        return x;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2))
        return front * beta_cfrac(a, b, x) / a;
    return 1 - front * beta_cfrac(b, a, 1 - x) / b;
}

static double beta_cdf_at(double x, const double *args)
{
    return stats_beta_i(args[0], args[1], x);
}

double stats_beta_quantile(double p, double a, double b)
{
    if (!(p > 0 && p < 1) || !(a > 0) || !(b > 0) || isinf(a) || isinf(b))
        return NAN;
    double args[2] = {a, b};
    return bisect(beta_cdf_at, args, p, 0, 1);
}

/* --- exact intervals ----------------------------------------------------------------------- */

void stats_poisson_interval(uint64_t k, uint64_t n, double conf, double *lo, double *hi)
{
    SIM_ASSERT(n >= 1);
    double tail = (1 - conf) / 2;
    *lo = k == 0 ? 0 : stats_gamma_quantile(tail, (double)k) / (double)n;
    *hi = stats_gamma_quantile(1 - tail, (double)k + 1) / (double)n;
}

void stats_binomial_interval(uint64_t x, uint64_t n, double conf, double *lo, double *hi)
{
    SIM_ASSERT(n >= 1 && x <= n);
    double tail = (1 - conf) / 2;
    *lo = x == 0 ? 0 : stats_beta_quantile(tail, (double)x, (double)(n - x) + 1);
    *hi = x == n ? 1 : stats_beta_quantile(1 - tail, (double)x + 1, (double)(n - x));
}

/* A count over seeds: Garwood's interval, unless the seeds vary
 * significantly less than a Poisson count (the dispersion index
 * (n - 1) s^2 / mean below its 2.5 % chi-square quantile: a count that
 * hardly depends on the seed, such as timer wake-ups), where the t interval
 * is the honest one; where they vary more (bursts: the t interval reaches
 * above Garwood's), the t interval, its lower end cut at zero (0, 0, 0 and
 * 2609 lost over four seeds is [0, 2728], not Garwood's [627, 677]). */
static void count_interval(const struct stats_acc *a, double hw, double *lo, double *hi)
{
    double n = (double)a->n, t_lo = a->mean - hw, t_hi = a->mean + hw;
    if (a->sum > 0 && (n - 1) * stats_sd(a) * stats_sd(a) / a->mean < stats_chi2_quantile(0.025, n - 1)) {
        *lo = t_lo > 0 ? t_lo : 0;
        *hi = t_hi;
        return;
    }
    double g_lo, g_hi;
    stats_poisson_interval((uint64_t)llround(a->sum), a->n, 0.95, &g_lo, &g_hi);
    if (t_hi > g_hi) { /* wider than Poisson: the t interval, cut at zero */
        *lo = t_lo < g_lo ? (t_lo > 0 ? t_lo : 0) : g_lo;
        *hi = t_hi;
        return;
    }
    *lo = t_lo >= 0 && t_lo < g_lo ? t_lo : g_lo;
    *hi = g_hi;
}

int stats_interval95(const struct stats_acc *a, enum stats_kind kind, double *lo, double *hi)
{
    *lo = *hi = NAN;
    if (a->n < 2)
        return -1;
    double hw = stats_ci95(a);
    int whole = !a->fractional && a->min >= 0 && a->sum < 9e15;
    if ((kind == STATS_COUNT && !whole) || (kind == STATS_SHARE && !(whole && a->max <= 1)))
        kind = STATS_NONNEG;
    switch (kind) {
    case STATS_COUNT:
        count_interval(a, hw, lo, hi);
        break;
    case STATS_SHARE:
        stats_binomial_interval((uint64_t)llround(a->sum), a->n, 0.95, lo, hi);
        break;
    case STATS_NONNEG:
        *lo = a->mean - hw > 0 ? a->mean - hw : 0;
        *hi = a->mean + hw;
        break;
    case STATS_REAL:
        *lo = a->mean - hw;
        *hi = a->mean + hw;
        break;
    }
    return 0;
}

/* --- paired comparisons --------------------------------------------------------------------- */

double stats_sign_test_p(uint64_t k, uint64_t m)
{
    if (m == 0)
        return 1;
    uint64_t lo = k < m - k ? k : m - k;
    /* 2 * P(X <= lo), X ~ Binomial(m, 1/2), summed in logs: m may be large. */
    double sum = 0, lm = lgamma((double)m + 1) - (double)m * log(2.0);
    for (uint64_t i = 0; i <= lo; i++)
        sum += exp(lm - lgamma((double)i + 1) - lgamma((double)(m - i) + 1));
    double p = 2 * sum;
    return p > 1 ? 1 : p;
}

int stats_paired_test(const double *x, const double *y, size_t n, size_t *np)
{
    struct stats_acc d;
    stats_init(&d);
    uint64_t above = 0, below = 0, infinite = 0;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i]) || isnan(y[i]))
            continue;
        m++;
        if (x[i] == y[i]) {
            stats_add(&d, 0);      /* two censored values are equal too */
            continue;
        }
        above += x[i] > y[i];
        below += x[i] < y[i];
        if (isinf(x[i]) || isinf(y[i]))
            infinite++;
        else
            stats_add(&d, x[i] - y[i]);
    }
    if (np)
        *np = m;
    if (m < 2)
        return 0;
    if (infinite) {
        if (stats_sign_test_p(above, above + below) >= 0.05)
            return 0;
        return above > below ? 1 : -1;
    }
    double hw = stats_ci95(&d);
    if (d.mean == 0 || !(fabs(d.mean) > hw))
        return 0;
    return d.mean > 0 ? 1 : -1;
}
