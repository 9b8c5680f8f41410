/* diff.h: metric-by-metric regression between two results databases.
 *
 * Pairing.  The runs of a database form groups (rdb.h: one scenario hash,
 * policy label and parameter set).  A group of NEW is paired with the group
 * of BASE that has the same key, by default the scenario (its hash) and the
 * policy label -- a policy's name, or a variant's -- so that a change of
 * parameters (`--set poll.period=10m`) is compared with the run it changes
 * and shown as the thing under test.  `--pair-by` chooses the key (bits
 * below); groups identical in every part are paired first, and two groups
 * of one side sharing a key with none identical are ambiguous.  Within a
 * pair, runs are paired by seed; only the seeds both ran are compared.
 *
 * The gate.  Correctness metrics (diff_is_exact: lost, duplicates, missed,
 * stuck, recovery_ok, ...; docs/reports.md lists them) are gated exactly:
 * a regression when the metric is worse in any paired seed, whatever the
 * mean, tolerance or interval; so is a run whose status stops being ok and
 * a duration (recovery_time) that becomes "never" in a seed.  Performance
 * metrics regress when the mean of the per-seed differences is worse by
 * more than the metric's tolerance (a percentage of the base mean) and,
 * with two or more seeds, the 95 % t interval of those differences
 * excludes zero.
 *
 * Missing runs.  A group of BASE without a partner in NEW, or seeds that
 * BASE ran and NEW did not, fail the diff too (exit 1) unless
 * allow_missing: a policy must not vanish silently.  Groups or seeds only
 * in NEW are listed and do not fail it. */
#ifndef REPORTS_DIFF_H
#define REPORTS_DIFF_H

#include <stddef.h>
#include <stdio.h>

#define DIFF_MAX_TOLERANCES 64

enum diff_dir { DIFF_INFO, DIFF_LOWER, DIFF_HIGHER };
enum diff_format { DIFF_TEXT, DIFF_MARKDOWN };

/* The parts of a pairing key (--pair-by scenario,policy,...). */
enum {
    DIFF_KEY_SCENARIO = 1,         /* "scenario": the scenario's hash (its content) */
    DIFF_KEY_NAME = 2,             /* "name": the scenario's name (an edited file pairs with its old self) */
    DIFF_KEY_POLICY = 4,           /* "policy" (or "variant"): the policy label */
    DIFF_KEY_BASE = 8,             /* "base": the registered policy a label runs */
    DIFF_KEY_PARAMS = 16,          /* "params": the canonical parameters */
};
#define DIFF_KEY_DEFAULT (DIFF_KEY_SCENARIO | DIFF_KEY_POLICY)

struct diff_tolerance {
    char metric[64];               /* a metric name, or "*" for every performance metric */
    double pct;                    /* relative tolerance, percent of the base value */
};

struct diff_opts {
    enum diff_format format;
    struct diff_tolerance tol[DIFF_MAX_TOLERANCES];
    int ntol;
    int all;                       /* list unchanged metrics too */
    unsigned pair_by;              /* DIFF_KEY_* bits; 0: DIFF_KEY_DEFAULT */
    int allow_missing;             /* runs of BASE missing from NEW: a warning, not a failure */
};

/* Which way is better for a metric; DIFF_INFO: a change is reported but is
 * never a regression (workload counts such as published, dues, runs). */
enum diff_dir diff_direction(const char *metric);
/* 1 for a correctness metric, gated exactly seed by seed (no tolerance). */
int diff_is_exact(const char *metric);
/* The tolerance in percent that applies to a performance metric: the last
 * --tolerance naming it (or "*"), else its default (5 for latency,
 * lateness, busy loops, ...).  0 for an exact metric. */
double diff_tolerance_pct(const struct diff_opts *o, const char *metric);
/* Parses "NAME=P%" (or "NAME=P") into t; 0, or -1 with msg (also for a
 * correctness metric: no tolerance can apply to it). */
int diff_parse_tolerance(const char *s, struct diff_tolerance *t, char *msg, size_t n);
/* Parses a --pair-by list ("scenario,policy") into DIFF_KEY_* bits; 0, or
 * -1 with msg. */
int diff_parse_pair_by(const char *s, unsigned *key, char *msg, size_t n);

/* Compares two databases and writes the report to out.  Returns 0 (no
 * regression, nothing missing), 1 (a regression, or runs of BASE missing
 * from NEW without allow_missing), 2 with err (a database cannot be read). */
int diff_run(const char *base_path, const char *new_path, const struct diff_opts *o, FILE *out, char *err,
             size_t n);

#endif
