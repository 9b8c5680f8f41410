/* charts.c: the charts of a whole scenario over all its seeds (see report_int.h):
 * the latency and lateness CDFs of every policy on one chart, and the bars
 * of the problem metrics with their confidence intervals.
 *
 * Both read the results database only (histograms and whole-scenario
 * metrics), never a trace. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "reports/fmt.h"
#include "reports/report_int.h"
#include "reports/stats.h"
#include "sim/checker.h"
#include "sim/hist.h"
#include "sim/util.h"

const char *const rpt_palette[RPT_NPALETTE] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                               "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

/* The line of policy i of n in charts where curves often coincide (CDFs,
 * backlog): its colour (with a dash pattern once colours repeat), and a
 * width that shrinks from the first policy to the last, so that a curve
 * drawn over an identical one leaves the one below visible at its edges.
 * The string is static: valid until the next call. */
const char *rpt_line_style(size_t i, size_t n)
{
    static char b[96];
    double lw = 1.5 + 0.7 * (double)(n - 1 - i);
    if (lw > 4)
        lw = 4;
    snprintf(b, sizeof b, "lw %.1f dt %d lc rgb '%s'", lw, (int)(i / RPT_NPALETTE) % 4 + 1,
             rpt_palette[i % RPT_NPALETTE]);
    return b;
}

/* --- latency and lateness CDFs ------------------------------------------------------------- */

/* Log-axis tics with human labels, for values in seconds in [lo, hi];
 * zero_at > 0: the left edge where samples of exactly 0 are drawn (a log
 * axis has no zero), labelled "0". */
static void log_tics(FILE *f, double lo, double hi, double zero_at)
{
    static const struct { double s; const char *label; } tics[] = {
        {1e-6, "1us"}, {1e-5, "10us"}, {1e-4, "100us"}, {1e-3, "1ms"}, {1e-2, "10ms"}, {0.1, "100ms"},
        {1, "1s"},     {10, "10s"},    {60, "1m"},      {600, "10m"}, {3600, "1h"},   {6 * 3600, "6h"},
        {86400, "1d"}, {7 * 86400, "1w"}, {30 * 86400, "30d"},
    };
    fprintf(f, "set xtics (");
    int first = 1;
    if (zero_at > 0) {
        fprintf(f, "'0' %g", zero_at);
        first = 0;
    }
    for (size_t i = 0; i < sizeof tics / sizeof tics[0]; i++) {
        if (tics[i].s < lo / 1.01 || tics[i].s > hi * 1.01 || (zero_at > 0 && tics[i].s < zero_at * 3))
            continue;
        fprintf(f, "%s'%s' %g", first ? "" : ", ", tics[i].label, tics[i].s);
        first = 0;
    }
    if (first)
        fprintf(f, "'%g s' %g", lo, lo);
    fprintf(f, ")\n");
}

/* Adds the histogram of kind over the group's runs (whole scenario) into
 * counts[HIST_NBUCKETS]; returns the number of finite samples. */
static uint64_t group_hist(struct rpt *R, const struct rdb_group *g, const char *kind, uint64_t *counts)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(R->r->db,
                           "SELECT bucket_lo_us, count FROM histograms WHERE run_id = ?1 AND handler = '' AND kind = ?2",
                           -1, &q, NULL) != SQLITE_OK) {
        rpt_fail(R, 2, "cannot read histograms from '%s': %s", R->r->path, sqlite3_errmsg(R->r->db));
        return 0;
    }
    uint64_t total = 0;
    for (size_t i = 0; i < g->nruns; i++) {
        sqlite3_bind_int64(q, 1, g->runs[i].run_id);
        sqlite3_bind_text(q, 2, kind, -1, SQLITE_STATIC);
        while (sqlite3_step(q) == SQLITE_ROW) {
            int64_t lo = sqlite3_column_int64(q, 0), c = sqlite3_column_int64(q, 1);
            if (lo < 0 || c <= 0)
                continue;
            counts[hist_index(lo)] += (uint64_t)c;
            total += (uint64_t)c;
        }
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    return total;
}

/* Every sample of kind a group's runs had, finite or censored: the items
 * published (latency) or the due instants (lateness), from the metrics;
 * never fewer than the finite samples. */
static uint64_t group_population(const struct rdb_group *g, const char *kind, uint64_t finite)
{
    const struct metric_info *mi = metric_find(!strcmp(kind, "latency") ? "published" : "dues");
    double sum = 0;
    for (size_t i = 0; mi && i < g->nruns; i++) {
        double v = g->runs[i].m[mi - metric_table];
        sum += isnan(v) ? 0 : v;
    }
    return sum > (double)finite ? (uint64_t)sum : finite;
}

/* What a CDF chart draws, per policy: the pooled histogram, its finite
 * samples and its whole population (the rest were censored). */
struct cdf_set {
    uint64_t *counts;              /* [ngroups][HIST_NBUCKETS] */
    uint64_t *finite, *all;        /* [ngroups] */
    double xlo, xhi;               /* the positive samples' range, seconds */
    double zero_at;                /* where samples of 0 are drawn; 0: there are none */
};

/* One policy's block of a CDF data file: the share of the population at or
 * below each bucket's upper bound, starting at the samples of 0 (drawn at
 * zero_at) and ending, flat to the right edge, at the share served. */
static void cdf_block(FILE *d, const struct rdb_group *g, const char *kind, const struct cdf_set *cs, size_t gi)
{
    const uint64_t *counts = &cs->counts[gi * HIST_NBUCKETS];
    uint64_t total = cs->all[gi];
    char seeds[128];
    rdb_seed_text(g, seeds, sizeof seeds);
    fprintf(d, "# %s: %s of seeds %s pooled: %" PRIu64 " %s, %" PRIu64 " served (%.2f%%), the rest never\n", g->policy,
            kind, seeds, total, !strcmp(kind, "latency") ? "items" : "due instants", cs->finite[gi],
            100.0 * (double)cs->finite[gi] / (double)total);
    fprintf(d, "# %s_s share_at_or_below (a sample of 0 is drawn at %g)\n", kind, cs->zero_at);
    uint64_t cum = 0;
    int first = 1;
    for (int i = 0; i < HIST_NBUCKETS; i++) {
        if (!counts[i])
            continue;
        int64_t lo, hi;
        hist_bounds(i, &lo, &hi);
        double xl = lo < 1 ? cs->zero_at : (double)lo / 1e6, xh = hi < 1 ? cs->zero_at : (double)hi / 1e6;
        if (first)
            fprintf(d, "%.9g 0\n", xl);
        first = 0;
        cum += counts[i];
        fprintf(d, "%.9g %.9g\n", xh, (double)cum / (double)total);
    }
    fprintf(d, "%.9g %.9g\n", cs->xhi * 1.5, (double)cum / (double)total);
}

/* Reads every policy's histogram of kind into cs; returns how many have a
 * finite sample, or -1 after rpt_fail. */
static int cdf_collect(struct rpt *R, const struct section *S, const char *kind, struct cdf_set *cs)
{
    size_t ng = S->ngroups;
    cs->counts = xcalloc(ng * HIST_NBUCKETS, sizeof *cs->counts);
    cs->finite = xcalloc(ng, sizeof *cs->finite);
    cs->all = xcalloc(ng, sizeof *cs->all);
    cs->xlo = INFINITY;
    cs->xhi = 0;
    int with = 0, zeros = 0;
    for (size_t gi = 0; gi < ng; gi++) {
        const struct rdb_group *g = &R->r->groups[S->groups[gi]];
        uint64_t *c = &cs->counts[gi * HIST_NBUCKETS];
        cs->finite[gi] = group_hist(R, g, kind, c);
        if (R->code)
            return -1;
        cs->all[gi] = group_population(g, kind, cs->finite[gi]);
        with += cs->finite[gi] > 0;
        zeros |= c[0] > 0;
        for (int i = 1; i < HIST_NBUCKETS; i++)
            if (c[i]) {
                int64_t lo, hi;
                hist_bounds(i, &lo, &hi);
                if ((double)lo / 1e6 < cs->xlo)
                    cs->xlo = (double)lo / 1e6;
                if ((double)hi / 1e6 > cs->xhi)
                    cs->xhi = (double)hi / 1e6;
            }
    }
    if (isinf(cs->xlo)) {          /* only zeros: a one-second axis */
        cs->xlo = 1e-3;
        cs->xhi = 1;
    }
    /* Zeros at the left edge, a decade below the smallest positive sample. */
    cs->zero_at = zeros ? cs->xlo / 10 : 0;
    return with;
}

/* The data file of a CDF chart, a block per policy that has samples:
 * has[gi] gets its block's index, or -1 for a policy without samples.
 * Returns the number of blocks (0: no file written), or -1 after rpt_fail. */
static int cdf_data(struct rpt *R, const struct section *S, const char *kind, const char *dname, int *has,
                    const struct cdf_set *cs)
{
    FILE *d = NULL;
    int block = 0;
    for (size_t gi = 0; gi < S->ngroups; gi++) {
        if (!cs->finite[gi]) {
            has[gi] = -1;
            continue;
        }
        if (!d && !(d = rpt_open(R, dname, "w")))
            return -1;
        if (block)
            fprintf(d, "\n\n");
        cdf_block(d, &R->r->groups[S->groups[gi]], kind, cs, gi);
        has[gi] = block++;
    }
    if (d)
        rpt_close(R, d, dname);
    return R->code ? -1 : block;
}

/* The caption of a CDF chart (trusted HTML): what it shows, the share each
 * policy served when it was not all, and the policies without samples. */
static void cdf_caption(const struct rpt *R, const struct section *S, int lat, const int *has,
                        const struct cdf_set *cs, char *cap, size_t n)
{
    int off = snprintf(cap, n, "%s",
                       lat ? "Latency of every item published (publish, or arrival at its source, to the commit of "
                             "the run that processed it), all seeds pooled. Further left is faster. An item never "
                             "processed is infinitely late: a curve ends, flat, at the share of items processed."
                           : "Lateness of every scheduled due instant (nominal instant to the start of the run that "
                             "served it), all seeds pooled. Further left is more punctual; a curve ends, flat, at "
                             "the share of due instants a run served.");
    if (cs->zero_at > 0 && off < (int)n)
        off += snprintf(cap + off, n - (size_t)off, " Samples of exactly 0 are drawn at the left edge, marked 0.");
    for (size_t gi = 0; gi < S->ngroups && off < (int)n; gi++) {
        const char *pol = R->r->groups[S->groups[gi]].policy;
        if (has[gi] < 0)
            off += snprintf(cap + off, n - (size_t)off, " No %s under %s.", lat ? "item processed" : "due served",
                            pol);
        else if (cs->finite[gi] < cs->all[gi])
            off += snprintf(cap + off, n - (size_t)off, " %s %s %.1f%%.", pol, lat ? "processed" : "served",
                            100.0 * (double)cs->finite[gi] / (double)cs->all[gi]);
    }
}

/* The script of a CDF chart over the blocks of cdf_data, and its figure. */
static int cdf_chart(struct rpt *R, const struct section *S, const char *kind, const char *stem, const char *dname,
                     const int *has, const struct cdf_set *cs, FILE *html)
{
    struct chart c;
    FILE *f = rpt_chart_begin(&c, stem, 900, 480);
    int lat = !strcmp(kind, "latency");
    fprintf(f, "set title ");
    char title[300];
    snprintf(title, sizeof title, "%s: %s, all %s of all seeds (cumulative share)", S->name,
             lat ? "latency from publish to commit" : "lateness from due instant to run start",
             lat ? "items" : "due instants");
    rpt_gp_text(f, title);
    fprintf(f, "\nset xlabel '%s (log scale)'\n", lat ? "latency" : "lateness");
    fprintf(f, "set ylabel '%% of all %s at or below'\n", lat ? "items published" : "due instants");
    double x0 = cs->zero_at > 0 ? cs->zero_at / 1.5 : cs->xlo / 1.5;
    fprintf(f, "set logscale x\nset xrange [%g:%g]\n", x0, cs->xhi * 1.5);
    log_tics(f, x0, cs->xhi * 1.5, cs->zero_at);
    fprintf(f, "set yrange [0:102]\nset ytics 0,20,100\nset grid\n");
    fprintf(f, "set key outside right top vertical title 'policy (share %s)'\nset border 3\nset tics nomirror\n",
            lat ? "processed" : "served");
    fprintf(f, "plot ");
    int first = 1;
    for (size_t gi = 0; gi < S->ngroups; gi++) {
        if (has[gi] < 0)
            continue;
        const struct rdb_group *g = &R->r->groups[S->groups[gi]];
        fprintf(f, "%s'%s' index %d using 1:($2*100) with steps %s title ", first ? "" : ", \\\n     ", dname,
                has[gi], rpt_line_style(gi, S->ngroups));
        char t[200];
        snprintf(t, sizeof t, "%s (%.0f%%)", g->policy, 100.0 * (double)cs->finite[gi] / (double)cs->all[gi]);
        rpt_gp_text(f, t);
        first = 0;
    }
    fprintf(f, "\n");
    char what[300];
    snprintf(what, sizeof what, "%s CDF of scenario %s", kind, S->name);
    if (rpt_chart_end(R, &c, what) != 0)
        return -1;
    char cap[2048];
    cdf_caption(R, S, lat, has, cs, cap, sizeof cap);
    rpt_html_figure(html, stem, title, cap, 1);
    return 0;
}

int rpt_chart_cdf(struct rpt *R, const struct section *S, const char *kind, FILE *html)
{
    char stem[300], dname[400];
    snprintf(stem, sizeof stem, "%s-%s", S->stem, kind);
    snprintf(dname, sizeof dname, "%s.dat", stem);
    int *has = xcalloc(S->ngroups, sizeof *has);
    struct cdf_set cs = {0};
    int rc = cdf_collect(R, S, kind, &cs);
    if (rc > 0) {
        int nblocks = cdf_data(R, S, kind, dname, has, &cs);
        rc = nblocks > 0 ? cdf_chart(R, S, kind, stem, dname, has, &cs, html) : nblocks;
    }
    free(cs.counts);
    free(cs.finite);
    free(cs.all);
    free(has);
    return rc < 0 ? -1 : 0;
}

/* --- bar charts with confidence intervals ------------------------------------------------------ */

/* The six "problem" metrics of the bar chart, with the unit of their axis
 * and the factor from the stored value to that unit. */
static const struct {
    const char *metric, *title, *unit;
    double scale;
} bar_metrics[] = {
    {"lost", "lost: items never processed", "items", 1},
    {"duplicates", "duplicates: work done twice", "items or due instants", 1},
    {"missed", "missed: due instants with no run", "due instants", 1},
    {"busy_loops", "busy loops: empty runs, no new input", "runs", 1},
    {"wakeups", "wake-ups of the host scheduler", "wake-ups", 1},
    {"overlaps", "overlaps: time with runs against the promise", "seconds", 1e-6},
};
#define NBARS (sizeof bar_metrics / sizeof bar_metrics[0])

/* A short label for a bar: 0, 12, 3.5, 158k, 1.2M. */
static void short_num(double v, char *b, size_t n)
{
    double a = fabs(v);
    if (a >= 1e6)
        snprintf(b, n, "%.3gM", v / 1e6);
    else if (a >= 1e4)
        snprintf(b, n, "%.3gk", v / 1e3);
    else if (a == floor(a) || a >= 100)
        snprintf(b, n, "%.0f", v);
    else
        snprintf(b, n, "%.3g", v);
}

int rpt_chart_bars(struct rpt *R, const struct section *S, FILE *html)
{
    char stem[300], dname[400];
    snprintf(stem, sizeof stem, "%s-bars", S->stem);
    snprintf(dname, sizeof dname, "%s.dat", stem);
    FILE *d = rpt_open(R, dname, "w");
    if (!d)
        return -1;
    double ymax[NBARS];
    int multi = 0;
    for (size_t b = 0; b < NBARS; b++) {
        const struct metric_info *mi = metric_find(bar_metrics[b].metric);
        ymax[b] = 0;
        fprintf(d, "%s# %s (%s): policy mean ci95_low ci95_high colour label\n", b ? "\n\n" : "",
                bar_metrics[b].metric, bar_metrics[b].unit);
        for (size_t gi = 0; gi < S->ngroups; gi++) {
            const struct rdb_group *g = &R->r->groups[S->groups[gi]];
            struct stats_acc a;
            stats_init(&a);
            if (mi)
                for (size_t k = 0; k < g->nruns; k++)
                    stats_add(&a, g->runs[k].m[mi - metric_table] * bar_metrics[b].scale);
            double mean = a.n ? a.mean : 0, lo = mean, hi = mean;
            /* The interval the tables print: exact for counts, never below
             * 0; none, as in the tables, when every seed had the same value. */
            if (a.n > 1)
                multi = 1;
            if (a.n > 1 && a.min != a.max)
                stats_interval95(&a, mi && mi->is_duration ? STATS_NONNEG : STATS_COUNT, &lo, &hi);
            if (hi > ymax[b])
                ymax[b] = hi;
            if (mean > ymax[b])
                ymax[b] = mean;
            char lab[32];
            short_num(mean, lab, sizeof lab);
            unsigned col = (unsigned)strtoul(rpt_palette[gi % RPT_NPALETTE] + 1, NULL, 16);
            rpt_dat_text(d, g->policy);
            fprintf(d, " %.9g %.9g %.9g %u ", mean, lo, hi, col);
            rpt_dat_text(d, lab);
            fprintf(d, "\n");
        }
    }
    if (rpt_close(R, d, dname) != 0)
        return -1;
    int np = (int)S->ngroups;
    /* Labels side by side take about 7 px a character in a panel about
     * 260 px wide: turn them when they would not fit. */
    size_t chars = 0;
    for (size_t gi = 0; gi < S->ngroups; gi++)
        chars += strlen(R->r->groups[S->groups[gi]].policy) + 2;
    int rotate = chars * 7 > 200;
    struct chart c;
    FILE *f = rpt_chart_begin(&c, stem, 1050, rotate ? 640 : 580);
    char title[256];
    snprintf(title, sizeof title, "%s: problems per run, mean over seeds%s", S->name,
             multi ? " with 95% confidence intervals" : " (one seed: no intervals)");
    fprintf(f, "set multiplot layout 2,3 title ");
    rpt_gp_text(f, title);
    fprintf(f, " font ',12'\n");
    fprintf(f, "set style fill solid 0.85 border rgb '#333333'\nset boxwidth 0.65\nset grid ytics\n");
    fprintf(f, "set border 3\nset tics nomirror\nset xtics scale 0\nset key off\n");
    fprintf(f, "set xrange [-0.6:%g]\n", np - 0.4);
    if (rotate)
        fprintf(f, "set xtics rotate by 45 right font ',9'\nset bmargin 5\n");
    for (size_t b = 0; b < NBARS; b++) {
        double top = ymax[b] > 0 ? ymax[b] * 1.22 : 1;
        fprintf(f, "set title ");
        rpt_gp_text(f, bar_metrics[b].title);
        fprintf(f, "\nset ylabel ");
        rpt_gp_text(f, bar_metrics[b].unit);
        fprintf(f, "\nset yrange [0:%.9g]\n", top);
        fprintf(f, "plot '%s' index %zu using 0:2:5:xtic(1) with boxes lc rgb variable, \\\n", dname, b);
        if (multi) /* whiskers: the interval [low, high], with caps */
            fprintf(f, "     '' index %zu using 0:3:(0):($4-$3) with vectors nohead lc rgb '#000000' lw 1.5, \\\n"
                       "     '' index %zu using ($0-0.12):3:(0.24):(0) with vectors nohead lc rgb '#000000' lw 1.5, \\\n"
                       "     '' index %zu using ($0-0.12):4:(0.24):(0) with vectors nohead lc rgb '#000000' lw 1.5, \\\n",
                    b, b, b);
        fprintf(f, "     '' index %zu using 0:($4 > $2 ? $4 : $2):6 with labels offset 0,0.8 font ',8'\n", b);
    }
    fprintf(f, "unset multiplot\n");
    char what[256];
    snprintf(what, sizeof what, "problem metrics of scenario %s", S->name);
    if (rpt_chart_end(R, &c, what) != 0)
        return -1;
    rpt_html_figure(html, stem, title,
                multi ? "Bars: the mean over seeds; whiskers: the 95% confidence interval of that mean (for counts "
                        "the exact Poisson interval, never below zero; for overlaps, in seconds, Student t; none "
                        "where every seed had the same value, as in the tables). "
                        "Lower is better in every panel; the verdict above says which differences are significant, "
                        "comparing the policies seed by seed."
                      : "Bars: the value of the single seed in the database (run a sweep, --seeds A..B, for "
                        "confidence intervals). Lower is better in every panel.",
                    1);
    return 0;
}

