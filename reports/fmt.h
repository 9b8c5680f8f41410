/* fmt.h: metric values as people read them, in tables and reports.
 *
 * One place decides how a duration, a count, a boolean and a mean with its
 * confidence interval look, so that `simrun run`, `simrun report` and
 * `simrun diff` print the same thing for the same value.  Every function
 * writes a NUL-terminated string of at most n - 1 bytes into b. */
#ifndef REPORTS_FMT_H
#define REPORTS_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "reports/stats.h"
#include "sim/checker.h"

/* A duration in microseconds, compactly: 250us, 1.50ms, 2.25s, 3m05s,
 * 2h05m, 3d04h; negative values get a '-'; +INFINITY (a censored
 * percentile) is "∞". */
void fmt_duration(double us, char *b, size_t n);
/* One value of a metric: a duration, "never" for a negative duration,
 * "∞" for an infinite one (censored), true/false for a boolean, an
 * integer when it is one, else 3 decimals. */
void fmt_metric(const struct metric_info *mi, double v, char *b, size_t n);
/* A mean over seeds with its 95 % interval (stats_interval95): durations
 * the t interval cut at zero, counts the exact Poisson interval (see
 * stats.h), booleans the share of seeds where it held with its exact
 * binomial interval ("60% [15%, 95%]").  Written "mean ± h" when the
 * interval is symmetric at two significant digits, else "mean [lo, hi]"
 * ("0.20 [0.01, 1.11]"): the shorter side rounded to two significant digits,
 * the mean and the other numbers to the same decimal place (docs/reports.md).
 * With one seed, or the same value in every seed, the value alone; with
 * none, "-".  never: seeds whose duration was "never" (negative; kept out
 * of the mean), shown as "(N never)".  Seeds whose value was infinite (a
 * censored percentile, counted in a->ninf) make the mean infinite: "∞",
 * or "∞ (2 of 5 seeds)" when not every seed was. */
void fmt_metric_ci(const struct metric_info *mi, const struct stats_acc *a, uint64_t never, char *b, size_t n);
/* A value v of a metric with the interval [lo, hi] around it, written as
 * fmt_metric_ci writes one; lo or hi NaN: v alone.  sign: a '+' before a
 * positive v (for a change). */
void fmt_estimate(const struct metric_info *mi, double v, double lo, double hi, int sign, char *b, size_t n);
/* Writes s to f with the characters that are special in HTML and XML
 * (< > & ") escaped: for the report's page and the JUnit file alike. */
void fmt_markup(FILE *f, const char *s);
/* The number of terminal columns a UTF-8 string takes (one per code point). */
size_t fmt_width(const char *s);

#endif
