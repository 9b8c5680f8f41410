/* rpt.h: what the files of the report share; private to reports/ (the
 * public entry is report.h).
 *
 * The report is one pass over the scenarios of a results database:
 *
 *     report.c    report_write: the output folder, the sections (one per
 *                 scenario hash), errors and files
 *     html.c      the page: intro, glossary, tables, one section per scenario
 *     charts.c    the latency/lateness CDFs and the problem bars
 *     timeline.c  timelines and backlog: the trace of one run per policy
 *                 (stored, or simulated again), as lanes per handler
 *     verdict.c   which policy beats which (paired by seed), the marks of
 *                 the metric tables and each section's verdict
 *     gnuplot.c   running gnuplot: a chart's script, drawing in the
 *                 background, checking the images
 *
 * Errors: the first one is kept in struct rpt (rpt_fail); every function
 * that can fail returns -1 after recording it, and the caller stops.  Once
 * R->code is set, nothing more is drawn or written. */
#ifndef REPORTS_REPORT_INT_H
#define REPORTS_REPORT_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "reports/rdb.h"
#include "reports/report.h"

struct scenario;

#define RPT_MAX_ROWS 16
#define RPT_BACKLOG_BINS 800
#define RPT_MAX_PATH 4096
#define RPT_MAX_GNUPLOTS 8             /* gnuplot processes at once, at most */

/* Colours for policies (by their position in a scenario), chosen to stay
 * apart from each other and readable on white. */
#define RPT_NPALETTE 10
extern const char *const rpt_palette[RPT_NPALETTE];

/* A scenario of the database (one scenario hash) and what the page shows
 * of it. */
struct section {
    const char *name, *hash, *path;
    size_t *groups;                /* indices into rdb groups, in file order */
    size_t ngroups;
    char stem[96];                 /* file-name prefix of its charts */
    struct scenario *scn;          /* the scenario file, when it exists and its hash matches */
    char scn_note[600];            /* why scn is NULL */
    char *path_found;              /* where the file was found, when not at path */
    uint64_t tl_seed;              /* the seed of the timelines */
};

/* A chart whose gnuplot is running. */
struct pending {
    pid_t pid;
    char stem[300];
    int png_only;                  /* no SVG to check */
};

struct rpt {
    const struct report_opts *o;
    char gnuplot[RPT_MAX_PATH];
    struct rdb *r;
    char *err;
    size_t nerr;
    int code;                      /* 2 or 3 once an error is recorded */
    size_t ncharts;                /* drawn and checked */
    struct pending pend[RPT_MAX_GNUPLOTS];  /* charts being drawn, oldest first */
    int npend, maxpend;
};

/* --- report.c: errors and files -------------------------------------------------------- */

/* Records the first error (code 2: bad input, 3: failure) and returns -1. */
int rpt_fail(struct rpt *R, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int rpt_vfail(struct rpt *R, int code, const char *fmt, va_list ap);
/* Opens name in the output folder; NULL after rpt_fail. */
FILE *rpt_open(struct rpt *R, const char *name, const char *mode);
/* Closes a file of rpt_open; 0, or -1 after rpt_fail if writing it failed. */
int rpt_close(struct rpt *R, FILE *f, const char *name);
/* A file-name stem of s: letters, digits, '-' and '_' kept, the rest '_'. */
void rpt_stem(const char *s, char *b, size_t n);

/* --- gnuplot.c: drawing ------------------------------------------------------------------ */

/* A chart being written: its drawing commands collect in a memory buffer,
 * then go into the script twice (PNG, SVG). */
struct chart {
    char stem[300];
    int w, h;
    char *body;
    size_t nbody;
    FILE *f;                       /* the body; write drawing commands here */
    /* 1: draw only the PNG (the script draws the SVG too when run with
     * `gnuplot -e svg=1`): for timelines, pictures of thousands of small
     * bars whose SVG is large and slow to render.  rpt_chart_begin sets 0. */
    int png_only;
};

/* Finds the gnuplot program (R->o->gnuplot, on PATH unless it has a '/'). */
int rpt_find_gnuplot(struct rpt *R);
/* gnuplot must have the pngcairo and svg terminals. */
int rpt_check_terminals(struct rpt *R);
/* Starts a chart of w x h pixels; returns the stream of its drawing commands. */
FILE *rpt_chart_begin(struct chart *c, const char *stem, int w, int h);
/* Writes STEM.gp and starts gnuplot on it in the background (at most
 * R->maxpend at once); `what` goes into the script's first line. */
int rpt_chart_end(struct rpt *R, struct chart *c, const char *what);
/* Waits for the oldest chart being drawn and checks its images. */
int rpt_chart_reap(struct rpt *R);
/* A gnuplot single-quoted string, and a double-quoted field of a data file. */
void rpt_gp_text(FILE *f, const char *s);
void rpt_dat_text(FILE *f, const char *s);

/* --- charts.c: CDFs and bars --------------------------------------------------------------- */

/* The line style of policy i of n in charts where curves often coincide;
 * static storage, valid until the next call. */
const char *rpt_line_style(size_t i, size_t n);
/* One chart of the CDFs of kind ("latency", "lateness") of every policy of
 * the section, with its figure on the page (none when no policy has a sample). */
int rpt_chart_cdf(struct rpt *R, const struct section *S, const char *kind, FILE *html);
/* The bar chart of the problem metrics, with its figure on the page. */
int rpt_chart_bars(struct rpt *R, const struct section *S, FILE *html);

/* --- sweep_chart.c: parameter studies ---------------------------------------------------- */

/* For each policy of the section run at several points of a parameter
 * study (run_plan.sweep): its points with the cheapest that meets the
 * expect lines, and every metric that changes drawn against each swept
 * parameter, with 95 % confidence bands.  Nothing for a section without
 * studies. */
int rpt_section_studies(struct rpt *R, const struct section *S, FILE *html);

/* --- timeline.c: backlog and timelines ----------------------------------------------------- */

/* The backlog chart and a timeline (with a crash close-up) for each policy
 * of the section, for seed S->tl_seed; a note on the page for a policy
 * without one. */
int rpt_section_timelines(struct rpt *R, const struct section *S, FILE *h);

/* --- verdict.c: significance and the verdict ------------------------------------------------ */

/* 1 when group a beats group b on metric m (metric_table index): better at
 * 95 % over the seeds both ran, paired by seed (stats_paired_test), and
 * for latency (lateness) having lost (missed) no more work over those
 * seeds; 0 otherwise, and for a metric without a direction.  *unfair (may
 * be NULL) is set when a was significantly better but did less work. */
int rpt_beats(const struct rdb_group *a, const struct rdb_group *b, int m, int *unfair);
/* rel[a * ng + b] = rpt_beats of the section's groups a and b on m (and
 * unfair likewise, when not NULL). */
void rpt_relation(const struct rpt *R, const struct section *S, int m, signed char *rel, unsigned char *unfair);
/* mark[gi]: 1 when the group beats every other on m, -1 when every other
 * beats it, else 0. */
void rpt_marks(const struct rpt *R, const struct section *S, int m, int *mark);
/* The section's verdict, first on its page: the work each policy lost,
 * repeated or missed, and who leads on latency, lateness, busy loops,
 * wake-ups and recovery, significantly. */
void rpt_html_verdict(const struct rpt *R, const struct section *S, FILE *h);

/* --- html.c: the page ----------------------------------------------------------------------- */

/* A figure: the PNG, with links to the SVG (when svg), data and script;
 * caption is trusted HTML. */
void rpt_html_figure(FILE *h, const char *stem, const char *alt, const char *caption, int svg);
/* The head of the page, the guide, the glossaries and the at-a-glance table. */
void rpt_html_intro(struct rpt *R, FILE *h, struct section *secs, size_t nsec);
/* One scenario's section: its description, metric table and charts. */
int rpt_write_section(struct rpt *R, struct section *S, FILE *h);
/* The end of the page. */
void rpt_html_outro(FILE *h);

#endif
