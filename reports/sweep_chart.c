/* sweep_chart.c: the parameter studies of a scenario (see report_int.h):
 * for each policy run at several points of a `--sweep` or `sweep` line,
 * every metric that changes between the points drawn against the swept
 * parameter (the mean over seeds, with its 95 % confidence band), and a
 * table of the points with the cheapest one (fewest wake-ups, then fewest
 * runs) whose runs all meet the expect lines naming the policy.
 *
 * A group of the database (scenario hash x policy label x parameters) is
 * one point; its point text ("workers=1,visibility_timeout=1m") is in
 * run_plan.sweep, written by `simrun run` (schema 3; a database without it
 * has no studies).  With several axes, each axis gets a chart whose lines
 * are the combinations of the other axes' values.  An axis whose values are
 * all durations is drawn in seconds (on a log scale when they span a
 * factor of 10 or more), one whose values are all numbers as numbers, any
 * other (a choice) by position, in the order of the points. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "reports/fmt.h"
#include "reports/report_int.h"
#include "reports/stats.h"
#include "sim/checker.h"
#include "sim/syntax.h"
#include "sim/util.h"

#define STUDY_MAX_POINTS 256
#define STUDY_MAX_AXES 16

/* One point of a study: a group of the section and its axis values. */
struct point {
    size_t g;                      /* index into the rdb groups */
    char text[256];                /* as in run_plan.sweep */
    char val[STUDY_MAX_AXES][40];  /* each axis' value, as written */
    uint64_t checked, failed;      /* expect outcomes over its runs */
};

struct study {
    const char *label;
    char axis[STUDY_MAX_AXES][64];
    int naxes;
    struct point pt[STUDY_MAX_POINTS];
    int npt;
};

/* --- reading the points ---------------------------------------------------------------------- */

/* The sweep point of group g (its first run's), "" when it has none. */
static void group_point(struct rpt *R, sqlite3_stmt *q, const struct rdb_group *g, char *buf, size_t n)
{
    buf[0] = 0;
    sqlite3_bind_int64(q, 1, g->runs[0].run_id);
    if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
        snprintf(buf, n, "%s", (const char *)sqlite3_column_text(q, 0));
    sqlite3_reset(q);
}

/* Splits "k=v,k=v" into the study's axes (set by the first point) and p's
 * values; 0, or -1 when the point has other keys than the first. */
static int split_point(struct study *st, struct point *p)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", p->text);
    int i = 0;
    for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv && i < STUDY_MAX_AXES;
         kv = strtok_r(NULL, ",", &save), i++) {
        char *eq = strchr(kv, '=');
        if (!eq)
            return -1;
        *eq = 0;
        if (st->npt == 0)
            snprintf(st->axis[i], sizeof st->axis[i], "%s", kv);
        else if (i >= st->naxes || strcmp(st->axis[i], kv))
            return -1;
        snprintf(p->val[i], sizeof p->val[i], "%s", eq + 1);
    }
    if (st->npt == 0)
        st->naxes = i;
    return i == st->naxes ? 0 : -1;
}

/* The expect outcomes of the group's runs. */
static void group_expects(struct rpt *R, sqlite3_stmt *q, const struct rdb_group *g, struct point *p)
{
    for (size_t k = 0; k < g->nruns; k++) {
        sqlite3_bind_int64(q, 1, g->runs[k].run_id);
        if (sqlite3_step(q) == SQLITE_ROW) {
            p->checked += (uint64_t)sqlite3_column_int64(q, 0);
            p->failed += (uint64_t)sqlite3_column_int64(q, 1);
        }
        sqlite3_reset(q);
    }
}

/* The studies of section S: the policies with at least two points. */
static int find_studies(struct rpt *R, const struct section *S, struct study *sts, int max)
{
    sqlite3_stmt *qp, *qe;
    if (sqlite3_prepare_v2(R->r->db, "SELECT sweep FROM run_plan WHERE run_id = ?1", -1, &qp, NULL) != SQLITE_OK)
        return 0; /* no run_plan: a database older than schema 3 */
    if (sqlite3_prepare_v2(R->r->db, "SELECT count(*), coalesce(sum(ok = 0), 0) FROM expectations WHERE run_id = ?1",
                           -1, &qe, NULL) != SQLITE_OK) {
        sqlite3_finalize(qp);
        return 0;
    }
    int n = 0;
    for (size_t gi = 0; gi < S->ngroups; gi++) {
        const struct rdb_group *g = &R->r->groups[S->groups[gi]];
        struct point p = {.g = S->groups[gi]};
        group_point(R, qp, g, p.text, sizeof p.text);
        if (!p.text[0] || !g->nruns)
            continue;
        struct study *st = NULL;
        for (int k = 0; k < n && !st; k++)
            if (!strcmp(sts[k].label, g->policy))
                st = &sts[k];
        if (!st && n < max) {
            st = &sts[n++];
            memset(st, 0, sizeof *st);
            st->label = g->policy;
        }
        if (!st || st->npt >= STUDY_MAX_POINTS || split_point(st, &p) != 0)
            continue;
        group_expects(R, qe, g, &p);
        st->pt[st->npt++] = p;
    }
    sqlite3_finalize(qp);
    sqlite3_finalize(qe);
    int k = 0;
    for (int i = 0; i < n; i++) /* a study needs two points */
        if (sts[i].npt >= 2)
            memmove(&sts[k++], &sts[i], sizeof sts[i]);
    return k;
}

/* --- the chart ----------------------------------------------------------------------------------- */

enum axis_kind { AX_DURATION, AX_NUMBER, AX_CHOICE };

/* How axis a is drawn, and each point's x (for a choice, its position among
 * the axis' distinct values in point order); *log for a duration or
 * number axis spanning a factor of 10 or more, all above zero. */
static enum axis_kind axis_x(const struct study *st, int a, double *x, int *log)
{
    enum axis_kind kind = AX_DURATION;
    for (int i = 0; i < st->npt && kind == AX_DURATION; i++) {
        int64_t us;
        if (scn_parse_duration(st->pt[i].val[a], &us, NULL, 0) != 0)
            kind = AX_NUMBER;
        else
            x[i] = (double)us / 1e6;
    }
    for (int i = 0; i < st->npt && kind == AX_NUMBER; i++) {
        char *end;
        x[i] = strtod(st->pt[i].val[a], &end);
        if (end == st->pt[i].val[a] || *end)
            kind = AX_CHOICE;
    }
    if (kind == AX_CHOICE) {
        int ndistinct = 0;
        for (int i = 0; i < st->npt; i++) {
            int k = 0;
            for (; k < i && strcmp(st->pt[k].val[a], st->pt[i].val[a]); k++)
                ;
            x[i] = k < i ? x[k] : ndistinct++;
        }
    }
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < st->npt; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    *log = kind != AX_CHOICE && lo > 0 && hi / lo >= 10;
    return kind;
}

/* The line of point i in a chart of axis a: the other axes' values. */
static void line_key(const struct study *st, int a, int i, char *b, size_t n)
{
    size_t o = 0;
    b[0] = 0;
    for (int k = 0; k < st->naxes; k++)
        if (k != a && o < n)
            o += (size_t)snprintf(b + o, n - o, "%s%s=%s", o ? "," : "", st->axis[k], st->pt[i].val[k]);
}

/* Whether metric m's mean differs between the points (else it is left out). */
static int metric_varies(struct rpt *R, const struct study *st, int m)
{
    double first = NAN;
    for (int i = 0; i < st->npt; i++) {
        const struct rdb_group *g = &R->r->groups[st->pt[i].g];
        struct stats_acc a;
        stats_init(&a);
        for (size_t k = 0; k < g->nruns; k++)
            if (!(metric_table[m].is_duration && g->runs[k].m[m] < 0))
                stats_add(&a, g->runs[k].m[m]);
        if (!a.n)
            continue;
        if (isnan(first))
            first = a.mean;
        else if (a.mean != first)
            return 1;
    }
    return 0;
}

/* The data file: a block per (metric, line), points in x order: x, mean,
 * the band's low and high end (a duration metric in seconds). */
static int study_data(struct rpt *R, const struct study *st, int a, const double *x, const int *ms, int nm,
                      const char *dname, char (*lines)[256], int *nlines)
{
    FILE *d = rpt_open(R, dname, "w");
    if (!d)
        return -1;
    *nlines = 0;
    for (int i = 0; i < st->npt; i++) {
        char key[256];
        line_key(st, a, i, key, sizeof key);
        int k = 0;
        for (; k < *nlines && strcmp(lines[k], key); k++)
            ;
        if (k == *nlines && *nlines < RPT_NPALETTE)
            snprintf(lines[(*nlines)++], 256, "%s", key);
    }
    int block = 0;
    for (int mi = 0; mi < nm; mi++)
        for (int l = 0; l < *nlines; l++, block++) {
            const struct metric_info *mt = &metric_table[ms[mi]];
            double scale = mt->is_duration ? 1e-6 : 1;
            fprintf(d, "%s# %s, line '%s': %s mean ci_low ci_high\n", block ? "\n\n" : "", mt->name, lines[l],
                    st->axis[a]);
            int done[STUDY_MAX_POINTS] = {0};
            for (;;) { /* the points of this line, in x order */
                int best = -1;
                char key[256];
                for (int i = 0; i < st->npt; i++) {
                    line_key(st, a, i, key, sizeof key);
                    if (!done[i] && !strcmp(key, lines[l]) && (best < 0 || x[i] < x[best]))
                        best = i;
                }
                if (best < 0)
                    break;
                done[best] = 1;
                const struct rdb_group *g = &R->r->groups[st->pt[best].g];
                struct stats_acc acc;
                stats_init(&acc);
                for (size_t k = 0; k < g->nruns; k++)
                    if (!(mt->is_duration && g->runs[k].m[ms[mi]] < 0))
                        stats_add(&acc, g->runs[k].m[ms[mi]] * scale);
                double hw = stats_ci95(&acc);
                if (isnan(hw))
                    hw = 0;
                if (acc.n)
                    fprintf(d, "%.9g %.9g %.9g %.9g\n", x[best], acc.mean, acc.mean - hw, acc.mean + hw);
            }
        }
    return rpt_close(R, d, dname);
}

/* The chart of study st against axis a. */
static int study_chart(struct rpt *R, const struct section *S, const struct study *st, int a, FILE *html)
{
    double x[STUDY_MAX_POINTS];
    int log;
    enum axis_kind kind = axis_x(st, a, x, &log);
    int ms[128], nm = 0;
    for (int m = 0; m < metric_count && nm < 128; m++)
        if (metric_varies(R, st, m))
            ms[nm++] = m;
    if (nm == 0)
        return 0;
    char stem[300], lstem[128], dname[400], lines[RPT_NPALETTE][256];
    int nlines;
    rpt_stem(st->label, lstem, sizeof lstem);
    snprintf(stem, sizeof stem, "%s-study-%s-%s", S->stem, lstem, st->axis[a]);
    snprintf(dname, sizeof dname, "%s.dat", stem);
    if (study_data(R, st, a, x, ms, nm, dname, lines, &nlines) != 0)
        return -1;
    int cols = 4, rows = (nm + cols - 1) / cols;
    struct chart c;
    FILE *f = rpt_chart_begin(&c, stem, 1100, 90 + 210 * rows);
    char title[400];
    snprintf(title, sizeof title, "%s: %s against %s (mean over seeds, 95%% confidence band)", S->name, st->label,
             st->axis[a]);
    fprintf(f, "set multiplot layout %d,%d title ", rows, cols);
    rpt_gp_text(f, title);
    fprintf(f, " font ',12'\nset grid\nset border 3\nset tics nomirror\nset style fill transparent solid 0.2 noborder\n");
    fprintf(f, "set key %s\n", nlines > 1 ? "top left font ',7'" : "off");
    if (log)
        fprintf(f, "set logscale x\n");
    if (kind == AX_CHOICE) {
        fprintf(f, "set xtics (");
        for (int i = 0, first = 1; i < st->npt; i++) {
            int seen = 0;
            for (int k = 0; k < i; k++)
                seen |= x[k] == x[i];
            if (seen)
                continue;
            fprintf(f, "%s", first ? "" : ", ");
            rpt_gp_text(f, st->pt[i].val[a]);
            fprintf(f, " %g", x[i]);
            first = 0;
        }
        fprintf(f, ")\nset offsets 0.3, 0.3, 0, 0\n");
    }
    for (int mi = 0; mi < nm; mi++) {
        const struct metric_info *mt = &metric_table[ms[mi]];
        char t[160];
        snprintf(t, sizeof t, "%s%s", mt->name, mt->is_duration ? " (s)" : "");
        fprintf(f, "set title ");
        rpt_gp_text(f, t);
        char xl[96];
        snprintf(xl, sizeof xl, "%s%s", st->axis[a], kind == AX_DURATION ? " (s)" : "");
        fprintf(f, " font ',9'\nset xlabel ");
        rpt_gp_text(f, xl);
        fprintf(f, " font ',8'\nplot ");
        for (int l = 0; l < nlines; l++) {
            int b = mi * nlines + l;
            const char *col = rpt_palette[l % RPT_NPALETTE];
            fprintf(f, "%s'%s' index %d using 1:3:4 with filledcurves lc rgb '%s' notitle, \\\n", l ? ", " : "", dname,
                    b, col);
            fprintf(f, "     '' index %d using 1:2 with linespoints pt 7 ps 0.6 lw 1.5 lc rgb '%s' title ", b, col);
            rpt_gp_text(f, lines[l][0] ? lines[l] : st->label);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "unset multiplot\n");
    if (rpt_chart_end(R, &c, title) != 0)
        return -1;
    rpt_html_figure(html, stem, title,
                    "Each panel: a metric that changes with the parameter; the line is the mean over the seeds "
                    "of each point, the band its 95% confidence interval (Student t).", 1);
    return 0;
}

/* --- the table ------------------------------------------------------------------------------------- */

static double group_mean(struct rpt *R, size_t g, const char *metric)
{
    const struct metric_info *mi = metric_find(metric);
    const struct rdb_group *gr = &R->r->groups[g];
    struct stats_acc a;
    stats_init(&a);
    for (size_t k = 0; mi && k < gr->nruns; k++)
        stats_add(&a, gr->runs[k].m[mi - metric_table]);
    return a.n ? a.mean : NAN;
}

/* The points, their cost and expect outcomes; the cheapest one that meets
 * every expect line marked. */
static void study_table(struct rpt *R, const struct study *st, FILE *h)
{
    int best = -1, named = 0;
    for (int i = 0; i < st->npt; i++) {
        named |= st->pt[i].checked > 0;
        if (st->pt[i].failed)
            continue;
        double w = group_mean(R, st->pt[i].g, "wakeups"), r = group_mean(R, st->pt[i].g, "runs");
        double bw = best < 0 ? 0 : group_mean(R, st->pt[best].g, "wakeups");
        if (best < 0 || w < bw || (w == bw && r < group_mean(R, st->pt[best].g, "runs")))
            best = i;
    }
    fprintf(h, "<div class=\"wide\"><table class=\"metrics\"><thead><tr><th>point of ");
    fmt_markup(h, st->label);
    fprintf(h, "</th><th>seeds</th><th>wakeups</th><th>runs</th><th>expect lines</th></tr></thead><tbody>\n");
    for (int i = 0; i < st->npt; i++) {
        const struct point *p = &st->pt[i];
        fprintf(h, "<tr%s><td class=\"name\">%s", i == best ? " class=\"best\"" : "", i == best ? "&#9733; " : "");
        fmt_markup(h, p->text);
        fprintf(h, "</td><td>%zu</td><td>%.6g</td><td>%.6g</td><td>", R->r->groups[p->g].nruns,
                group_mean(R, p->g, "wakeups"), group_mean(R, p->g, "runs"));
        if (!p->checked)
            fprintf(h, "none name it");
        else if (!p->failed)
            fprintf(h, "met (%llu)", (unsigned long long)p->checked);
        else
            fprintf(h, "FAILED %llu of %llu", (unsigned long long)p->failed, (unsigned long long)p->checked);
        fprintf(h, "</td></tr>\n");
    }
    fprintf(h, "</tbody></table></div>\n<p>");
    if (best < 0) {
        fprintf(h, "No point meets every expect line that names ");
        fmt_markup(h, st->label);
    } else {
        fprintf(h, "&#9733; The cheapest point%s: <strong>", named ? " that meets every expect line naming it" : "");
        fmt_markup(h, st->pt[best].text);
        fprintf(h, "</strong> (the fewest wake-ups, then the fewest runs)");
    }
    fprintf(h, ".</p>\n");
}

int rpt_section_studies(struct rpt *R, const struct section *S, FILE *html)
{
    enum { MAX_STUDIES = 8 };
    struct study *sts = xcalloc(MAX_STUDIES, sizeof *sts);
    int n = find_studies(R, S, sts, MAX_STUDIES), ret = 0;
    for (int k = 0; k < n && !ret; k++) {
        fprintf(html, "<h3>Parameter study: ");
        fmt_markup(html, sts[k].label);
        fprintf(html, "</h3>\n");
        study_table(R, &sts[k], html);
        for (int a = 0; a < sts[k].naxes && !ret; a++)
            ret = study_chart(R, S, &sts[k], a, html);
    }
    free(sts);
    return ret;
}
