/* cli_expect.c: evaluating `expect` lines (see cli.h), for `simrun check`
 * and for `simrun run --db`, which stores each line's outcome with its runs
 * (docs/results.md, table expectations).
 *
 * A bare metric holds when it holds in every seed; a metric inside an
 * aggregate (`mean(latency.p50)`) compares one value computed over the
 * seeds.  Infinite values (a percentile that lands on work never done) take
 * part like any other: they make a mean infinite and sort above every
 * finite value. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/checker.h"
#include "sim/cli.h"
#include "sim/sim.h"
#include "sim/store.h"

int cli_expect_names(const struct expect_def *e, const char *label)
{
    for (char **p = e->policies; *p; p++)
        if (!strcmp(*p, "*") || !strcmp(*p, label))
            return 1;
    return 0;
}

int cli_expect_tmpl(const struct scenario *s, const struct expect_def *e)
{
    if (e->wf < 0)
        return -1;
    int t = 0;
    for (int f = 0; f < e->wf; f++)
        t += s->wfs[f].nhandlers;
    return t + e->handler;
}

int cli_expect_compare(double v, enum expect_op op, double want)
{
    if (isnan(v))
        return 0;
    switch (op) {
    case OP_LT: return v < want;
    case OP_LE: return v <= want;
    case OP_GT: return v > want;
    case OP_GE: return v >= want;
    case OP_EQ: return v == want;
    case OP_NE: return v != want;
    }
    return 0;
}

double cli_expect_measure(const struct scenario *s, const struct expect_def *e, const struct sim_result *res)
{
    double v;
    if (metric_get(&res->ck, cli_expect_tmpl(s, e), e->metric, &v) != 0)
        return NAN;
    return v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cli_expect_aggregate(const struct expect_def *e, const double *v, size_t n)
{
    double *s = malloc((n ? n : 1) * sizeof *s);
    if (!s)
        abort();
    size_t k = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i])) {
            s[k++] = v[i];
            sum += v[i];
        }
    double out = NAN;
    if (k) {
        qsort(s, k, sizeof *s, cmp_double);
        switch (e->agg) {
        case EXPECT_EACH: break;
        case EXPECT_MEAN: out = sum / (double)k; break;
        case EXPECT_MIN: out = s[0]; break;
        case EXPECT_MAX: out = s[k - 1]; break;
        case EXPECT_PCT: {
            /* Nearest rank: the smallest value with at least pct % of the
             * seeds at or below it. */
            size_t rank = ((size_t)e->agg_pct * k + 99) / 100;
            out = s[(rank ? rank : 1) - 1];
            break;
        }
        }
    }
    free(s);
    return out;
}

const char *cli_expect_agg_name(const struct expect_def *e, char *b, size_t n)
{
    switch (e->agg) {
    case EXPECT_EACH: snprintf(b, n, "%s", "each"); break;
    case EXPECT_MEAN: snprintf(b, n, "%s", "mean"); break;
    case EXPECT_MIN: snprintf(b, n, "%s", "min"); break;
    case EXPECT_MAX: snprintf(b, n, "%s", "max"); break;
    case EXPECT_PCT: snprintf(b, n, "p%d", e->agg_pct); break;
    }
    return b;
}

uint32_t cli_expect_outcomes(const struct scenario *s, const char *label, const double *vals, size_t si,
                             size_t nseeds, struct expect_outcome *out)
{
    uint32_t n = 0;
    for (uint32_t e = 0; e < s->nexpects; e++) {
        const struct expect_def *ex = &s->expects[e];
        if (!cli_expect_names(ex, label))
            continue;
        const double *v = &vals[(size_t)e * nseeds];
        if (ex->agg == EXPECT_EACH) {
            out[n++] = (struct expect_outcome){ex, v[si], cli_expect_compare(v[si], ex->op, ex->value)};
        } else if (si + 1 == nseeds) {
            /* Judged once, over the seeds of the sweep: in its last run. */
            double a = cli_expect_aggregate(ex, v, nseeds);
            out[n++] = (struct expect_outcome){ex, a, cli_expect_compare(a, ex->op, ex->value)};
        }
    }
    return n;
}

int cli_expect_livelock_line(const struct scenario *s, const char *label)
{
    for (uint32_t e = 0; e < s->nexpects; e++) {
        const struct expect_def *ex = &s->expects[e];
        if (strcmp(ex->metric, "livelock") || ex->wf >= 0 || !cli_expect_names(ex, label))
            continue;
        int says_true = (ex->op == OP_EQ && ex->value != 0) || (ex->op == OP_NE && ex->value == 0);
        if (says_true && (ex->agg == EXPECT_EACH || ex->agg == EXPECT_MIN))
            return ex->line;
    }
    return 0;
}
