/* diff.h: metric-by-metric regression between two results databases.
 *
 * Runs are matched by scenario hash, policy label, parameters and seed
 * set (see rdb.h for how a database's runs form groups).  For every matched
 * pair of groups and every whole-scenario metric with a direction (lower or
 * higher is better; see diff_direction), the change is a regression when
 *
 *   - it is in the worse direction by more than the metric's tolerance, a
 *     percentage of the base value (so from a base of 0, any worsening);
 *   - and, with two or more seeds, the 95 % confidence interval of the
 *     per-seed difference (new - base, paired by seed) excludes zero: the
 *     sweep shows a real change, not seed-to-seed noise.
 *
 * A run whose status was ok in the base and is not in the new one is a
 * regression too (metric "status").  Groups without a partner, or whose
 * seed sets differ, are listed as not compared and never fail the diff. */
#ifndef REPORTS_DIFF_H
#define REPORTS_DIFF_H

#include <stdio.h>

#define DIFF_MAX_TOLERANCES 64

enum diff_dir { DIFF_INFO, DIFF_LOWER, DIFF_HIGHER };
enum diff_format { DIFF_TEXT, DIFF_MARKDOWN };

struct diff_tolerance {
    char metric[64];               /* a metric name, or "*" for every metric */
    double pct;                    /* relative tolerance, percent of the base value */
};

struct diff_opts {
    enum diff_format format;
    struct diff_tolerance tol[DIFF_MAX_TOLERANCES];
    int ntol;
    int all;                       /* list unchanged metrics too */
};

/* Which way is better for a metric; DIFF_INFO: a change is reported but is
 * never a regression (workload counts such as published, dues, runs). */
enum diff_dir diff_direction(const char *metric);
/* The tolerance in percent that applies to a metric: the last --tolerance
 * naming it (or "*"), else its default (0 for correctness metrics such as
 * lost or duplicates, 5 for performance metrics such as latency). */
double diff_tolerance_pct(const struct diff_opts *o, const char *metric);
/* Parses "NAME=P%" (or "NAME=P") into t; 0, or -1 with msg. */
int diff_parse_tolerance(const char *s, struct diff_tolerance *t, char *msg, size_t n);

/* Compares two databases and writes the report to out.  Returns 0 (no
 * regression), 1 (at least one), 2 with err (a database cannot be read). */
int diff_run(const char *base_path, const char *new_path, const struct diff_opts *o, FILE *out, char *err,
             size_t n);

#endif
