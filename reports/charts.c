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

/* Log-axis tics with human labels, for values in seconds in [lo, hi]. */
static void log_tics(FILE *f, double lo, double hi)
{
    static const struct { double s; const char *label; } tics[] = {
        {1e-6, "1us"}, {1e-5, "10us"}, {1e-4, "100us"}, {1e-3, "1ms"}, {1e-2, "10ms"}, {0.1, "100ms"},
        {1, "1s"},     {10, "10s"},    {60, "1m"},      {600, "10m"}, {3600, "1h"},   {6 * 3600, "6h"},
        {86400, "1d"}, {7 * 86400, "1w"}, {30 * 86400, "30d"},
    };
    fprintf(f, "set xtics (");
    int first = 1;
    for (size_t i = 0; i < sizeof tics / sizeof tics[0]; i++) {
        if (tics[i].s < lo / 1.01 || tics[i].s > hi * 1.01)
            continue;
        fprintf(f, "%s'%s' %g", first ? "" : ", ", tics[i].label, tics[i].s);
        first = 0;
    }
    if (first)
        fprintf(f, "'%g s' %g", lo, lo);
    fprintf(f, ")\n");
}

/* Adds the histogram of kind over the group's runs (whole scenario) into
 * counts[HIST_NBUCKETS]; returns the number of samples. */
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

/* One policy's block of a CDF data file: the share of samples at or below
 * each bucket's upper bound; widens [*xlo, *xhi] to its samples. */
static void cdf_block(FILE *d, const struct rdb_group *g, const char *kind, const uint64_t *counts, uint64_t total,
                      double *xlo, double *xhi)
{
    fprintf(d, "# %s: %s of every sample of seeds", g->policy, kind);
    char seeds[128];
    rdb_seed_text(g, seeds, sizeof seeds);
    fprintf(d, " %s pooled (%" PRIu64 " samples)\n# %s_s share_at_or_below\n", seeds, total, kind);
    uint64_t cum = 0;
    int first = 1;
    for (int i = 0; i < HIST_NBUCKETS; i++) {
        if (!counts[i])
            continue;
        int64_t lo, hi;
        hist_bounds(i, &lo, &hi);
        /* A log axis has no zero: a zero sample is drawn at 1 us. */
        double xl = (lo < 1 ? 1 : (double)lo) / 1e6, xh = (hi < 1 ? 1 : (double)hi) / 1e6;
        if (first)
            fprintf(d, "%.9g 0\n", xl);
        first = 0;
        cum += counts[i];
        fprintf(d, "%.9g %.9g\n", xh, (double)cum / (double)total);
        if (xl < *xlo)
            *xlo = xl;
        if (xh > *xhi)
            *xhi = xh;
    }
}

/* The data file of a CDF chart, a block per policy that has samples:
 * has[gi] gets its block's index, or -1 for a policy without samples.
 * Returns the number of blocks (0: no file written), or -1 after rpt_fail. */
static int cdf_data(struct rpt *R, const struct section *S, const char *kind, const char *dname, int *has,
                    double *xlo, double *xhi)
{
    uint64_t *counts = xcalloc(HIST_NBUCKETS, sizeof *counts);
    FILE *d = NULL;
    int block = 0;
    for (size_t gi = 0; gi < S->ngroups; gi++) {
        const struct rdb_group *g = &R->r->groups[S->groups[gi]];
        memset(counts, 0, HIST_NBUCKETS * sizeof *counts);
        uint64_t total = group_hist(R, g, kind, counts);
        if (R->code)
            break;
        if (!total) {
            has[gi] = -1;
            continue;
        }
        if (!d && !(d = rpt_open(R, dname, "w")))
            break;
        if (block)
            fprintf(d, "\n\n");
        cdf_block(d, g, kind, counts, total, xlo, xhi);
        has[gi] = block++;
    }
    free(counts);
    if (d)
        rpt_close(R, d, dname);
    return R->code ? -1 : block;
}

/* The script of a CDF chart over the blocks of cdf_data, and its figure. */
static int cdf_chart(struct rpt *R, const struct section *S, const char *kind, const char *stem, const char *dname,
                     const int *has, double xlo, double xhi, FILE *html)
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
    fprintf(f, "set ylabel '%% of %s at or below'\n", lat ? "items processed" : "due instants served");
    fprintf(f, "set logscale x\nset xrange [%g:%g]\n", xlo / 1.5, xhi * 1.5);
    log_tics(f, xlo / 1.5, xhi * 1.5);
    fprintf(f, "set yrange [0:102]\nset ytics 0,20,100\nset grid\n");
    fprintf(f, "set key outside right top vertical title 'policy'\nset border 3\nset tics nomirror\n");
    fprintf(f, "plot ");
    int first = 1;
    for (size_t gi = 0; gi < S->ngroups; gi++) {
        if (has[gi] < 0)
            continue;
        const struct rdb_group *g = &R->r->groups[S->groups[gi]];
        fprintf(f, "%s'%s' index %d using 1:($2*100) with steps %s title ", first ? "" : ", \\\n     ", dname,
                has[gi], rpt_line_style(gi, S->ngroups));
        rpt_gp_text(f, g->policy);
        first = 0;
    }
    fprintf(f, "\n");
    char what[300];
    snprintf(what, sizeof what, "%s CDF of scenario %s", kind, S->name);
    if (rpt_chart_end(R, &c, what) != 0)
        return -1;
    char cap[1024];
    int off = snprintf(cap, sizeof cap,
                       lat ? "Latency of every item (publish, or arrival at its source, to the commit of the run that "
                             "processed it), all seeds pooled. A curve further left is faster; where a curve reaches "
                             "100%% is the slowest item."
                           : "Lateness of every scheduled due instant (nominal instant to the start of the run that "
                             "served it), all seeds pooled. Further left is more punctual.");
    for (size_t gi = 0; gi < S->ngroups; gi++)
        if (has[gi] < 0 && off < (int)sizeof cap)
            off += snprintf(cap + off, sizeof cap - (size_t)off, " No samples under %s.",
                            R->r->groups[S->groups[gi]].policy);
    rpt_html_figure(html, stem, title, cap);
    return 0;
}

int rpt_chart_cdf(struct rpt *R, const struct section *S, const char *kind, FILE *html)
{
    char stem[300], dname[400];
    snprintf(stem, sizeof stem, "%s-%s", S->stem, kind);
    snprintf(dname, sizeof dname, "%s.dat", stem);
    int *has = xcalloc(S->ngroups, sizeof *has);
    double xlo = INFINITY, xhi = 0;
    int nblocks = cdf_data(R, S, kind, dname, has, &xlo, &xhi);
    int rc = nblocks > 0 ? cdf_chart(R, S, kind, stem, dname, has, xlo, xhi, html) : nblocks;
    free(has);
    return rc;
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
        fprintf(d, "%s# %s (%s): policy mean ci95_half_width colour label\n", b ? "\n\n" : "", bar_metrics[b].metric,
                bar_metrics[b].unit);
        for (size_t gi = 0; gi < S->ngroups; gi++) {
            const struct rdb_group *g = &R->r->groups[S->groups[gi]];
            struct stats_acc a;
            stats_init(&a);
            if (mi)
                for (size_t k = 0; k < g->nruns; k++)
                    stats_add(&a, g->runs[k].m[mi - metric_table] * bar_metrics[b].scale);
            double mean = a.n ? a.mean : 0, hw = stats_ci95(&a);
            if (isnan(hw))
                hw = 0;
            else
                multi = 1;
            if (mean + hw > ymax[b])
                ymax[b] = mean + hw;
            char lab[32];
            short_num(mean, lab, sizeof lab);
            unsigned col = (unsigned)strtoul(rpt_palette[gi % RPT_NPALETTE] + 1, NULL, 16);
            rpt_dat_text(d, g->policy);
            fprintf(d, " %.9g %.9g %u ", mean, hw, col);
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
        fprintf(f, "plot '%s' index %zu using 0:2:4:xtic(1) with boxes lc rgb variable, \\\n", dname, b);
        if (multi) /* whiskers: the interval, with caps */
            fprintf(f, "     '' index %zu using 0:($2-$3):(0):(2*$3) with vectors nohead lc rgb '#000000' lw 1.5, \\\n"
                       "     '' index %zu using ($0-0.12):($2-$3):(0.24):(0) with vectors nohead lc rgb '#000000' lw 1.5, \\\n"
                       "     '' index %zu using ($0-0.12):($2+$3):(0.24):(0) with vectors nohead lc rgb '#000000' lw 1.5, \\\n",
                    b, b, b);
        fprintf(f, "     '' index %zu using 0:($2+$3):5 with labels offset 0,0.8 font ',8'\n", b);
    }
    fprintf(f, "unset multiplot\n");
    char what[256];
    snprintf(what, sizeof what, "problem metrics of scenario %s", S->name);
    if (rpt_chart_end(R, &c, what) != 0)
        return -1;
    rpt_html_figure(html, stem, title,
                multi ? "Bars: the mean over seeds; whiskers: the 95% confidence interval of that mean (Student t). "
                        "Lower is better in every panel; overlapping whiskers mean the seeds do not tell the "
                        "policies apart."
                      : "Bars: the value of the single seed in the database (run a sweep, --seeds A..B, for "
                        "confidence intervals). Lower is better in every panel.");
    return 0;
}

