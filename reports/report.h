/* report.h: the comparison report: gnuplot charts and an HTML page.
 *
 * From a results database, for each scenario (by hash) and the policies
 * that ran it: a verdict (work lost, repeated or missed; who beats whom,
 * significantly over the seeds paired by seed), a table of every metric
 * (mean and 95 % interval over seeds), latency and lateness CDFs of all
 * policies on one chart (over every item and due instant, so a curve ends
 * at the share served), bar charts with confidence intervals for lost,
 * duplicates, missed, busy loops, wake-ups and overlaps, a timeline of runs
 * per handler for one seed under each policy, and the backlog over time.
 * Every chart is a PNG and (timelines aside) an SVG, drawn by gnuplot from
 * a data file (.dat) and a script (.gp) left beside it, so users can
 * re-plot; index.html ties them together and refers to nothing outside the
 * folder.
 *
 * The timeline and backlog need the event trace of one run: the report
 * takes it from the database's trace table when the run was stored with
 * --store-trace, and otherwise re-simulates that run (scenario file from
 * runs.scenario_path, checked against scenario_hash; the fingerprint of the
 * re-simulation is compared with the stored one and a mismatch is shown on
 * the page).  When neither is possible the page says why. */
#ifndef REPORTS_REPORT_H
#define REPORTS_REPORT_H

#include <stddef.h>

struct report_opts {
    const char *db;                /* results database */
    const char *out_dir;           /* created when missing; files in it are overwritten */
    const char *gnuplot;           /* program: a name looked up on PATH, or a path */
    const char *version;           /* simrun version, for the page */
    const char *scenarios;         /* comma-separated scenario names to draw; NULL: all */
    const char *policies;          /* comma-separated policy labels to draw; NULL: all */
};

/* Writes the report (of the scenarios and policies named, when the lists
 * are given); *ncharts gets the number of charts drawn.  0, or 2 with err
 * (bad input: no database, no runs, a name in a list that matches none,
 * gnuplot missing or without the pngcairo/svg terminals), or 3 with err
 * (gnuplot failed, a chart came out empty, a file cannot be written). */
int report_write(const struct report_opts *o, size_t *ncharts, char *err, size_t n);

#endif
