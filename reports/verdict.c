/* verdict.c: which policy beats which, significantly, and what a section
 * says first (see report_int.h).
 *
 * Policies are compared seed by seed: in a seed every policy saw the same
 * workload (common random numbers), so the per-seed differences are the
 * honest sample.  Policy a beats b on a metric with a direction (diff.h)
 * when stats_paired_test finds a significantly better over the seeds both
 * ran (95 %, at least two seeds), and, for latency (lateness), a lost (a
 * missed) no more work than b over those seeds: a policy that drops its
 * slowest items is never called faster than one that does the work.  A
 * duration that was "never" (a crash that never recovered) counts as
 * infinitely bad, like a censored percentile.
 *
 * The marks of a metric table follow from the relation: best when a beats
 * every other policy, worst when every other beats it.  The verdict lists
 * the work each policy lost, repeated or missed, then for the metrics a
 * reader compares first who leads, whom they beat, and who trails.
 * Cost: O(g^2 s) per metric for g policies and s seeds. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/diff.h"
#include "reports/fmt.h"
#include "reports/report_int.h"
#include "reports/stats.h"
#include "sim/metric.h"
#include "sim/util.h"

/* The values of metric m in the seeds both groups ran, oriented so that
 * lower is better (a "never" duration is +INFINITY); returns how many. */
static size_t paired_values(const struct rdb_group *a, const struct rdb_group *b, int m, double *x, double *y)
{
    const struct metric_info *mi = &metric_table[m];
    enum diff_dir dir = diff_direction(mi->name);
    size_t i = 0, k = 0, n = 0;
    while (i < a->nruns && k < b->nruns) {
        if (a->runs[i].seed < b->runs[k].seed) {
            i++;
        } else if (b->runs[k].seed < a->runs[i].seed) {
            k++;
        } else {
            double u = a->runs[i++].m[m], v = b->runs[k++].m[m];
            if (mi->is_duration && u < 0)
                u = INFINITY;
            if (mi->is_duration && v < 0)
                v = INFINITY;
            x[n] = dir == DIFF_HIGHER ? -u : u;
            y[n++] = dir == DIFF_HIGHER ? -v : v;
        }
    }
    return n;
}

/* The sum of metric name over the seeds both groups ran, for each. */
static void paired_sums(const struct rdb_group *a, const struct rdb_group *b, const char *name, double *sa, double *sb)
{
    const struct metric_info *mi = metric_find(name);
    *sa = *sb = 0;
    if (!mi)
        return;
    int m = (int)(mi - metric_table);
    size_t i = 0, k = 0;
    while (i < a->nruns && k < b->nruns) {
        if (a->runs[i].seed < b->runs[k].seed) {
            i++;
        } else if (b->runs[k].seed < a->runs[i].seed) {
            k++;
        } else {
            double u = a->runs[i++].m[m], v = b->runs[k++].m[m];
            *sa += isnan(u) ? 0 : u;
            *sb += isnan(v) ? 0 : v;
        }
    }
}

/* The work a metric's speed must not be bought with: lost items for
 * latency, missed dues for lateness; NULL for the others. */
static const char *guard_metric(const char *name)
{
    if (!strncmp(name, "latency.", 8))
        return "lost";
    if (!strncmp(name, "lateness.", 9))
        return "missed";
    return NULL;
}

int rpt_beats(const struct rdb_group *a, const struct rdb_group *b, int m, int *unfair)
{
    const char *name = metric_table[m].name;
    if (unfair)
        *unfair = 0;
    if (diff_direction(name) == DIFF_INFO)
        return 0;
    size_t cap = (a->nruns < b->nruns ? a->nruns : b->nruns) + 1;
    double *x = xcalloc(cap, sizeof *x), *y = xcalloc(cap, sizeof *y);
    size_t n = paired_values(a, b, m, x, y);
    int t = stats_paired_test(x, y, n, NULL);
    free(x);
    free(y);
    if (t >= 0)
        return 0;
    const char *g = guard_metric(name);
    if (g) {
        double wa, wb;
        paired_sums(a, b, g, &wa, &wb);
        if (wa > wb) {
            if (unfair)
                *unfair = 1;   /* faster, but on less of the work */
            return 0;
        }
    }
    return 1;
}

void rpt_relation(const struct rpt *R, const struct section *S, int m, signed char *rel, unsigned char *unfair)
{
    size_t ng = S->ngroups;
    for (size_t a = 0; a < ng; a++)
        for (size_t b = 0; b < ng; b++) {
            int u = 0;
            rel[a * ng + b] = a != b && rpt_beats(&R->r->groups[S->groups[a]], &R->r->groups[S->groups[b]], m, &u);
            if (unfair)
                unfair[a * ng + b] = (unsigned char)u;
        }
}

void rpt_marks(const struct rpt *R, const struct section *S, int m, int *mark)
{
    size_t ng = S->ngroups;
    signed char *rel = xcalloc(ng * ng + 1, 1);
    rpt_relation(R, S, m, rel, NULL);
    for (size_t a = 0; a < ng; a++) {
        int beats_all = ng > 1, beaten_by_all = ng > 1;
        for (size_t b = 0; b < ng; b++) {
            if (a == b)
                continue;
            beats_all &= rel[a * ng + b];
            beaten_by_all &= rel[b * ng + a];
        }
        mark[a] = beats_all ? 1 : beaten_by_all ? -1 : 0;
    }
    free(rel);
}

/* --- the verdict ------------------------------------------------------------------------------- */

/* The problems the verdict names first: work lost, repeated or missed,
 * promises broken; a policy is named when the metric is not ideal in some
 * seed. */
static const struct {
    const char *metric, *what;
} problems[] = {
    {"lost", "lost work (items never processed)"},
    {"duplicates", "did work twice"},
    {"double_effects", "applied a side effect twice"},
    {"missed", "missed due instants (no run within a period)"},
    {"stuck", "left handlers stuck after a restart"},
    {"undelivered", "left results undelivered"},
    {"dup_deliveries", "delivered results twice"},
    {"overlap_runs", "ran work concurrently against its promise"},
    {"livelock", "livelocked (the run was stopped)"},
    {"recovery_ok", "did not recover from a crash within the bound"},
};

/* The metrics whose leaders the verdict names, with what "better" means. */
static const struct {
    const char *metric, *better;
} races[] = {
    {"latency.p50", "median latency"},
    {"latency.p99", "tail latency"},
    {"lateness.p99", "tail lateness of schedules"},
    {"busy_loops", "busy loops"},
    {"wakeups", "host wake-ups"},
    {"recovery_time", "time to recover from a crash"},
};

static void name_list(FILE *h, const struct rpt *R, const struct section *S, const size_t *idx, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fprintf(h, "%s<strong>", i == 0 ? "" : i + 1 == n ? " and " : ", ");
        fmt_markup(h, R->r->groups[S->groups[idx[i]]].policy);
        fprintf(h, "</strong>");
    }
}

/* The mean of metric m over a group's seeds as a cell writes it. */
static void group_cell(const struct rdb_group *g, int m, char *b, size_t n)
{
    struct stats_acc a;
    uint64_t never = 0;
    stats_init(&a);
    for (size_t k = 0; k < g->nruns; k++) {
        double v = g->runs[k].m[m];
        if (metric_table[m].is_duration && v < 0)
            never++;
        else
            stats_add(&a, v);
    }
    fmt_metric_ci(&metric_table[m], &a, never, b, n);
}

/* One item of the list: which policies had problem p, in how many seeds. */
static void verdict_problem(const struct rpt *R, const struct section *S, size_t p, FILE *h)
{
    const struct metric_info *mi = metric_find(problems[p].metric);
    if (!mi)
        return;
    int m = (int)(mi - metric_table), higher = diff_direction(mi->name) == DIFF_HIGHER;
    size_t *bad = xcalloc(S->ngroups + 1, sizeof *bad), nbad = 0;
    for (size_t gi = 0; gi < S->ngroups; gi++) {
        const struct rdb_group *g = &R->r->groups[S->groups[gi]];
        for (size_t k = 0; k < g->nruns; k++) {
            double v = g->runs[k].m[m];
            if (!isnan(v) && (higher ? v < 1 : v > 0)) {
                bad[nbad++] = gi;
                break;
            }
        }
    }
    if (nbad) {
        fprintf(h, "<li class=\"bad\">%s: ", problems[p].what);
        for (size_t i = 0; i < nbad; i++) {
            const struct rdb_group *g = &R->r->groups[S->groups[bad[i]]];
            size_t seeds = 0;
            for (size_t k = 0; k < g->nruns; k++)
                seeds += !isnan(g->runs[k].m[m]) && (higher ? g->runs[k].m[m] < 1 : g->runs[k].m[m] > 0);
            char cell[96];
            group_cell(g, m, cell, sizeof cell);
            fprintf(h, "%s<strong>", i ? "; " : "");
            fmt_markup(h, g->policy);
            fprintf(h, "</strong> (");
            if (!mi->is_bool) {
                fmt_markup(h, cell);
                fprintf(h, " per run, ");
            }
            fprintf(h, "in %zu of %zu seeds)", seeds, g->nruns);
        }
        fprintf(h, ".</li>\n");
    }
    free(bad);
}

/* One item of the list: who leads on race r, whom every leader beats, who
 * trails, and a policy that is faster only because it did less of the
 * work. */
static void verdict_race(const struct rpt *R, const struct section *S, size_t r, FILE *h)
{
    const struct metric_info *mi = metric_find(races[r].metric);
    size_t ng = S->ngroups;
    if (!mi || ng < 2)
        return;
    int m = (int)(mi - metric_table), any = 0;
    for (size_t gi = 0; gi < ng && !any; gi++) {
        const struct rdb_group *g = &R->r->groups[S->groups[gi]];
        for (size_t k = 0; k < g->nruns && !any; k++)
            any = !isnan(g->runs[k].m[m]) && g->runs[k].m[m] != 0;
    }
    if (!any)
        return;                        /* zero everywhere: nothing to race */
    signed char *rel = xcalloc(ng * ng + 1, 1);
    unsigned char *unfair = xcalloc(ng * ng + 1, 1);
    rpt_relation(R, S, m, rel, unfair);
    size_t *lead = xcalloc(ng, sizeof *lead), *beaten = xcalloc(ng, sizeof *beaten), *last = xcalloc(ng, sizeof *last);
    size_t nlead = 0, nbeaten = 0, nlast = 0;
    for (size_t a = 0; a < ng; a++) {
        int is_beaten = 0, by_all = 1;
        for (size_t b = 0; b < ng; b++)
            if (b != a) {
                is_beaten |= rel[b * ng + a];
                by_all &= rel[b * ng + a];
            }
        if (!is_beaten)
            lead[nlead++] = a;
        if (by_all)
            last[nlast++] = a;
    }
    for (size_t b = 0; b < ng; b++) {
        int all = nlead > 0 && nlead < ng;
        for (size_t i = 0; i < nlead && all; i++)
            all = lead[i] != b && rel[lead[i] * ng + b];
        if (all)
            beaten[nbeaten++] = b;
    }
    fprintf(h, "<li><span class=\"race\">%s</span> (<code>%s</code>, %s is better): ", races[r].better, mi->name,
            diff_direction(mi->name) == DIFF_HIGHER ? "higher" : "lower");
    if (nlead == 1 && nbeaten == ng - 1) {
        name_list(h, R, S, lead, 1);
        fprintf(h, " beats every other policy");
    } else if (nbeaten == 0) {
        fprintf(h, "no clear leader (no policy, or group of policies, is significantly better than the rest)");
    } else {
        name_list(h, R, S, lead, nlead);
        fprintf(h, nlead > 1 ? " lead (not told apart from each other) and each beats " : " leads and beats ");
        name_list(h, R, S, beaten, nbeaten);
    }
    if (nlast == 1 && !(nlead == 1 && nbeaten == ng - 1 && ng == 2)) {
        fprintf(h, "; ");
        name_list(h, R, S, last, 1);
        fprintf(h, " is beaten by every other");
    }
    for (size_t a = 0; a < ng; a++) {
        size_t nu = 0;
        for (size_t b = 0; b < ng; b++)
            if (unfair[a * ng + b])
                beaten[nu++] = b;
        if (!nu)
            continue;
        fprintf(h, "; ");
        name_list(h, R, S, &a, 1);
        fprintf(h, " is ahead of ");
        name_list(h, R, S, beaten, nu);
        fprintf(h, " only on the work it did: it %s more, so it is not ranked above %s",
                !strncmp(mi->name, "latency", 7) ? "lost" : "missed", nu > 1 ? "them" : "it");
    }
    fprintf(h, ".</li>\n");
    free(rel);
    free(unfair);
    free(lead);
    free(beaten);
    free(last);
}

void rpt_html_verdict(const struct rpt *R, const struct section *S, FILE *h)
{
    const struct rdb_group *g0 = &R->r->groups[S->groups[0]];
    char seeds[128];
    rdb_seed_text(g0, seeds, sizeof seeds);
    fprintf(h, "<div class=\"verdict\"><h3>Verdict</h3>\n<p class=\"meta\">%zu polic%s, seed%s %s. Compared seed by "
               "seed (each seed gives every policy the same workload): a policy <em>beats</em> another when it is "
               "better at 95 %% confidence over the paired seeds; with one seed nothing is significant.</p>\n<ul>\n",
            S->ngroups, S->ngroups == 1 ? "y" : "ies", g0->nruns > 1 ? "s" : "", seeds);
    long before = ftell(h);
    for (size_t p = 0; p < sizeof problems / sizeof problems[0]; p++)
        verdict_problem(R, S, p, h);
    if (ftell(h) == before)
        fprintf(h, "<li class=\"good\">No policy lost, repeated or missed work, broke its concurrency promise or "
                   "failed to recover, in any seed.</li>\n");
    for (size_t r = 0; r < sizeof races / sizeof races[0]; r++)
        verdict_race(R, S, r, h);
    fprintf(h, "</ul></div>\n");
}
