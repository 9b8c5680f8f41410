/* crashpoints.c: the report's section on crash points (docs/crashpoints.md,
 * see report_int.h).
 *
 * For each exploration that `simrun crashpoints --db` wrote (one baseline
 * run and its crash runs, table crash_points of schema version 4), one
 * chart: the outcome of every crash point against the instant of its
 * crash, a row per outcome (ok, slow or no recovery, stuck, duplicated,
 * lost, double effect: a point is drawn at its worst), points just before a
 * transition a little below the row, points just after a little above.
 * Outcomes are measured against the baseline, as the command does: lost,
 * duplicates and double effects beyond the baseline's; stuck and recovery
 * of the injected crash.  A database without crash points adds nothing. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "reports/fmt.h"
#include "reports/report_int.h"
#include "sim/util.h"

/* Explorations drawn at most (the newest are left out beyond it). */
#define CP_MAX_CHARTS 24

enum { O_OK, O_SLOW, O_STUCK, O_DUP, O_LOST, O_DOUBLE, O_N };
static const char *const outcome_name[O_N] = {"ok", "recovery slow or none", "stuck", "duplicated", "lost",
                                              "double effect"};
static const char *const outcome_colour[O_N] = {"#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#d62728", "#000000"};

/* One point of an exploration, as the database holds it. */
static const char points_sql[] =
    "SELECT p.at_us, p.side, p.fail,"
    " (SELECT value FROM metrics WHERE run_id = p.run_id AND handler = '' AND name = 'lost')"
    "  - (SELECT value FROM metrics WHERE run_id = p.baseline_run_id AND handler = '' AND name = 'lost'),"
    " (SELECT value FROM metrics WHERE run_id = p.run_id AND handler = '' AND name = 'duplicates')"
    "  - (SELECT value FROM metrics WHERE run_id = p.baseline_run_id AND handler = '' AND name = 'duplicates'),"
    " (SELECT value FROM metrics WHERE run_id = p.run_id AND handler = '' AND name = 'double_effects')"
    "  - (SELECT value FROM metrics WHERE run_id = p.baseline_run_id AND handler = '' AND name = 'double_effects'),"
    " (SELECT stuck FROM crashes WHERE run_id = p.run_id AND at_us = p.at_us AND target = 'host')"
    " FROM crash_points p WHERE p.baseline_run_id = ?1 ORDER BY p.point";

/* The worst outcome of a point. */
static int outcome_of(sqlite3_stmt *q)
{
    if (sqlite3_column_double(q, 5) > 0)
        return O_DOUBLE;
    if (sqlite3_column_double(q, 3) > 0)
        return O_LOST;
    if (sqlite3_column_double(q, 4) > 0)
        return O_DUP;
    if (sqlite3_column_int64(q, 6) > 0)
        return O_STUCK;
    return sqlite3_column_int(q, 2) ? O_SLOW : O_OK;
}

/* The time unit of an exploration's x axis: minutes up to 2 h, hours up
 * to 3 days, days beyond. */
static void time_unit(struct rpt *R, int64_t base, int64_t *unit_us, const char **name)
{
    sqlite3_stmt *q;
    int64_t tmax = 0;
    if (sqlite3_prepare_v2(R->r->db, "SELECT max(at_us) FROM crash_points WHERE baseline_run_id = ?1", -1, &q,
                           NULL) == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, base);
        if (sqlite3_step(q) == SQLITE_ROW)
            tmax = sqlite3_column_int64(q, 0);
        sqlite3_finalize(q);
    }
    *unit_us = tmax <= 2 * US_PER_H ? US_PER_MIN : tmax <= 3 * US_PER_DAY ? US_PER_H : US_PER_DAY;
    *name = *unit_us == US_PER_MIN ? "minutes" : *unit_us == US_PER_H ? "hours" : "days";
}

/* Writes the data file of baseline run `base`: a block per outcome, each
 * row "instant y" (the instant in units of unit_us); counts per outcome in
 * n[], the last instant in *tmax. */
static int write_points(struct rpt *R, int64_t base, int64_t unit_us, const char *dname, size_t *n, double *tmax)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(R->r->db, points_sql, -1, &q, NULL) != SQLITE_OK)
        return rpt_fail(R, 2, "cannot read crash points from '%s': %s", R->r->path, sqlite3_errmsg(R->r->db));
    FILE *d = rpt_open(R, dname, "w");
    if (!d) {
        sqlite3_finalize(q);
        return -1;
    }
    *tmax = 0;
    for (int o = 0; o < O_N; o++) {
        fprintf(d, "%s# %s: crash_instant row\n", o ? "\n\n" : "", outcome_name[o]);
        n[o] = 0;
        sqlite3_bind_int64(q, 1, base);
        while (sqlite3_step(q) == SQLITE_ROW) {
            if (outcome_of(q) != o)
                continue;
            double t = (double)sqlite3_column_int64(q, 0) / (double)unit_us;
            int after = !strcmp((const char *)sqlite3_column_text(q, 1), "after");
            fprintf(d, "%.9g %.2f\n", t, o + (after ? 0.15 : -0.15));
            n[o]++;
            if (t > *tmax)
                *tmax = t;
        }
        if (!n[o])
            fprintf(d, "NaN NaN\n"); /* gnuplot wants every block to have a row */
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    return rpt_close(R, d, dname);
}

/* One exploration's chart and figure. */
static int chart_one(struct rpt *R, FILE *h, int64_t base, const char *scenario, const char *policy, int k)
{
    char stem[300], dname[400], sstem[96], pstem[96];
    rpt_stem(scenario, sstem, sizeof sstem);
    rpt_stem(policy, pstem, sizeof pstem);
    snprintf(stem, sizeof stem, "crashpoints-%s-%s-%d", sstem, pstem, k);
    snprintf(dname, sizeof dname, "%s.dat", stem);
    size_t n[O_N], total = 0, bad = 0;
    double tmax = 0;
    int64_t unit_us;
    const char *unit;
    time_unit(R, base, &unit_us, &unit);
    if (write_points(R, base, unit_us, dname, n, &tmax) != 0)
        return -1;
    for (int o = 0; o < O_N; o++) {
        total += n[o];
        bad += o ? n[o] : 0;
    }
    struct chart c;
    FILE *f = rpt_chart_begin(&c, stem, 1050, 420);
    char title[300];
    snprintf(title, sizeof title, "%s under %s: %zu crash points, %zu failing", scenario, policy, total, bad);
    fprintf(f, "set title ");
    rpt_gp_text(f, title);
    fprintf(f, " font ',12'\nset border 3\nset tics nomirror\nset grid xtics\nset key off\n");
    fprintf(f, "set xlabel 'instant of the crash (%s)'\nset xrange [0:%.9g]\nset yrange [-0.6:%d.6]\n", unit,
            tmax > 0 ? tmax * 1.02 : 1, O_N - 1);
    fprintf(f, "set ytics (");
    for (int o = 0; o < O_N; o++) {
        fprintf(f, "%s", o ? ", " : "");
        rpt_gp_text(f, outcome_name[o]);
        fprintf(f, " %d", o);
    }
    fprintf(f, ")\nplot ");
    for (int o = 0; o < O_N; o++)
        fprintf(f, "%s'%s' index %d using 1:2 with points pt 7 ps 0.8 lc rgb '%s'", o ? ", \\\n     " : "", dname,
                o, outcome_colour[o]);
    fprintf(f, "\n");
    if (rpt_chart_end(R, &c, title) != 0)
        return -1;
    char cap[512];
    snprintf(cap, sizeof cap,
             "Each dot is one crash point: a run with a host crash injected just before (below the line) or "
             "just after (above) a durable transition, at its instant, drawn at its worst outcome beyond the "
             "run without the crash. %zu of %zu points fail.", bad, total);
    rpt_html_figure(h, stem, title, cap, 1);
    return 0;
}

int rpt_section_crashpoints(struct rpt *R, FILE *h)
{
    if (R->r->version < 4)
        return 0;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(R->r->db,
                           "SELECT DISTINCT p.baseline_run_id, b.scenario, b.policy FROM crash_points p"
                           " JOIN runs b ON b.run_id = p.baseline_run_id ORDER BY p.baseline_run_id",
                           -1, &q, NULL) != SQLITE_OK)
        return rpt_fail(R, 2, "cannot read crash points from '%s': %s", R->r->path, sqlite3_errmsg(R->r->db));
    int k = 0, rc = 0;
    while (rc == 0 && k < CP_MAX_CHARTS && sqlite3_step(q) == SQLITE_ROW) {
        if (k == 0)
            fprintf(h, "<section id=\"crashpoints\"><h2>Crash points</h2>\n<p>Runs of <code>simrun crashpoints"
                       "</code>: the scenario with a host crash injected just before and just after each durable "
                       "transition (docs/crashpoints.md). These runs are not in the sections above.</p>\n");
        char *scn = xstrdup((const char *)sqlite3_column_text(q, 1));
        char *pol = xstrdup((const char *)sqlite3_column_text(q, 2));
        fprintf(h, "<h3>");
        fmt_markup(h, scn);
        fprintf(h, " under ");
        fmt_markup(h, pol);
        fprintf(h, "</h3>\n");
        rc = chart_one(R, h, sqlite3_column_int64(q, 0), scn, pol, ++k);
        free(scn);
        free(pol);
    }
    sqlite3_finalize(q);
    if (k)
        fprintf(h, "</section>\n");
    return rc;
}
