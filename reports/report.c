/* report.c: charts and the HTML page (see report.h).
 *
 * The page is built in one pass over the scenarios of the database.  Each
 * chart is written as a data file (STEM.dat) and a gnuplot script
 * (STEM.gp) that draws it twice, as STEM.png (pngcairo) and STEM.svg; the
 * script is run with the output folder as its working directory, so it can
 * be re-run there by hand.  A chart whose PNG or SVG is missing, empty or
 * not an image stops the report with an error: a page with a broken image
 * is never written.  index.html is written to a temporary name and renamed
 * at the end, so a failed report leaves the previous page in place.
 *
 * Limits: a timeline shows at most RPT_MAX_ROWS handlers (instance 0 of
 * each workflow, in scenario order); a backlog curve has at most
 * RPT_BACKLOG_BINS points (the highest backlog in each interval). */
#include "reports/report.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "reports/diff.h"
#include "reports/fmt.h"
#include "reports/rdb.h"
#include "reports/stats.h"
#include "reports/trace.h"
#include "sim/checker.h"
#include "sim/hist.h"
#include "sim/policy.h"
#include "sim/scenario.h"
#include "sim/sim.h"
#include "sim/util.h"

#define RPT_MAX_ROWS 16
#define RPT_BACKLOG_BINS 1500
#define RPT_MAX_PATH 4096
#define RPT_MAX_GNUPLOTS 8             /* gnuplot processes at once, at most */

/* Colours for policies (by their position in a scenario), chosen to stay
 * apart from each other and readable on white. */
static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
#define NPALETTE (sizeof palette / sizeof palette[0])

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

/* The at-a-glance table: the metrics a reader checks first. */
static const char *const glance_metrics[] = {"lost",       "duplicates",  "double_effects", "missed",
                                             "busy_loops", "wakeups",     "latency.p50",    "latency.p99",
                                             "lateness.max", "recovery_ok"};
#define NGLANCE (sizeof glance_metrics / sizeof glance_metrics[0])

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

static int fail(struct rpt *R, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct rpt *R, int code, const char *fmt, ...)
{
    if (!R->code) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(R->err, R->nerr, fmt, ap);
        va_end(ap);
        R->code = code;
    }
    return -1;
}

/* --- small writers ------------------------------------------------------------------- */


/* A gnuplot single-quoted string: a quote is written twice. */
static void gp_text(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        if ((unsigned char)*s >= 0x20)
            fputc(*s, f);
    }
    fputc('\'', f);
}

/* A field of a gnuplot data file, double-quoted (quotes dropped). */
static void dat_text(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++)
        if (*s != '"' && (unsigned char)*s >= 0x20)
            fputc(*s, f);
    fputc('"', f);
}

static void stem_of(const char *s, char *b, size_t n)
{
    size_t k = 0;
    for (; *s && k + 1 < n; s++)
        b[k++] = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
                         *s == '_'
                     ? *s
                     : '_';
    b[k] = 0;
}

static FILE *out_open(struct rpt *R, const char *name, const char *mode)
{
    char path[RPT_MAX_PATH];
    snprintf(path, sizeof path, "%s/%s", R->o->out_dir, name);
    FILE *f = fopen(path, mode);
    if (!f)
        fail(R, 3, "cannot write '%s': %s", path, strerror(errno));
    return f;
}

static int out_close(struct rpt *R, FILE *f, const char *name)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return fail(R, 3, "cannot write '%s/%s'", R->o->out_dir, name);
    return 0;
}

/* mkdir -p. */
static int make_dirs(struct rpt *R, const char *dir)
{
    char p[RPT_MAX_PATH];
    snprintf(p, sizeof p, "%s", dir);
    for (char *c = p + 1; *c; c++) {
        if (*c != '/')
            continue;
        *c = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            return fail(R, 2, "cannot create folder '%s': %s", p, strerror(errno));
        *c = '/';
    }
    if (mkdir(p, 0777) != 0 && errno != EEXIST)
        return fail(R, 2, "cannot create folder '%s': %s", p, strerror(errno));
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
        return fail(R, 2, "'%s' is not a folder", p);
    return 0;
}

/* --- gnuplot -------------------------------------------------------------------------------- */

static int find_gnuplot(struct rpt *R)
{
    const char *name = R->o->gnuplot;
    if (strchr(name, '/')) {
        if (access(name, X_OK) != 0)
            return fail(R, 2, "gnuplot '%s' cannot be run: %s; install it with 'apt-get install gnuplot-nox'", name,
                        strerror(errno));
        snprintf(R->gnuplot, sizeof R->gnuplot, "%s", name);
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *e = strchr(path, ':');
        size_t len = e ? (size_t)(e - path) : strlen(path);
        char cand[RPT_MAX_PATH];
        snprintf(cand, sizeof cand, "%.*s/%s", (int)(len ? len : 1), len ? path : ".", name);
        struct stat st;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
            snprintf(R->gnuplot, sizeof R->gnuplot, "%s", cand);
            return 0;
        }
        path += len + (e ? 1 : 0);
    }
    return fail(R, 2,
                "gnuplot not found on PATH; simrun report draws its charts with gnuplot: "
                "install it with 'apt-get install gnuplot-nox' (or your system's gnuplot package)");
}

/* Starts gnuplot with args in the output folder, its output appended to
 * gnuplot.log there (or written to `capture`); returns its pid, or -1. */
static pid_t spawn_gnuplot(struct rpt *R, const char *const *args, int nargs, const char *capture)
{
    char logp[RPT_MAX_PATH];
    snprintf(logp, sizeof logp, "%s/%s", R->o->out_dir, capture ? capture : "gnuplot.log");
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    int fd = open(logp, O_WRONLY | O_CREAT | (capture ? O_TRUNC : O_APPEND), 0666);
    if (fd < 0 || chdir(R->o->out_dir) != 0)
        _exit(127);
    dup2(fd, 1);
    dup2(fd, 2);
    close(fd);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) {
        dup2(devnull, 0);
        close(devnull);
    }
    char *argv[8];
    argv[0] = R->gnuplot;
    for (int i = 0; i < nargs && i < 6; i++)
        argv[i + 1] = (char *)args[i];
    argv[(nargs < 6 ? nargs : 6) + 1] = NULL;
    execv(R->gnuplot, argv);
    _exit(127);
}

/* Waits for pid; its exit status, or -1 if it did not exit normally. */
static int wait_exit(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run_gnuplot(struct rpt *R, const char *const *args, int nargs, const char *capture)
{
    pid_t pid = spawn_gnuplot(R, args, nargs, capture);
    return pid < 0 ? -1 : wait_exit(pid);
}

/* gnuplot must have the pngcairo and svg terminals ('set terminal' lists
 * them). */
static int check_terminals(struct rpt *R)
{
    const char *args[] = {"-e", "set terminal"};
    int rc = run_gnuplot(R, args, 2, ".gnuplot-terminals");
    char p[RPT_MAX_PATH];
    snprintf(p, sizeof p, "%s/.gnuplot-terminals", R->o->out_dir);
    FILE *f = fopen(p, "r");
    int png = 0, svg = 0;
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            char word[64];
            if (sscanf(line, " %63s", word) == 1) {
                png |= !strcmp(word, "pngcairo");
                svg |= !strcmp(word, "svg");
            }
        }
        fclose(f);
    }
    unlink(p);
    if (rc != 0)
        return fail(R, 2, "'%s -e \"set terminal\"' failed (exit %d); install gnuplot with 'apt-get install gnuplot-nox'",
                    R->gnuplot, rc);
    if (!png || !svg)
        return fail(R, 2, "gnuplot '%s' lacks the %s terminal; install a gnuplot built with cairo: 'apt-get install gnuplot-nox'",
                    R->gnuplot, !png ? "pngcairo" : "svg");
    return 0;
}

/* A chart being written: its drawing commands collect in a memory buffer,
 * then go into the script twice (PNG, SVG). */
struct chart {
    char stem[300];
    int w, h;
    char *body;
    size_t nbody;
    FILE *f;                       /* the body; write drawing commands here */
};

static FILE *chart_begin(struct chart *c, const char *stem, int w, int h)
{
    snprintf(c->stem, sizeof c->stem, "%s", stem);
    c->w = w;
    c->h = h;
    c->body = NULL;
    c->nbody = 0;
    c->f = open_memstream(&c->body, &c->nbody);
    SIM_ASSERT(c->f != NULL);
    return c->f;
}

/* Checks that path is a non-empty image of the kind (PNG signature, or an
 * SVG element). */
static int image_ok(const char *path, int svg)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char head[512] = {0};
    size_t n = fread(head, 1, sizeof head - 1, f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    if (size < 200)
        return 0;
    if (svg)
        return strstr(head, "<svg") != NULL;
    return n >= 8 && !memcmp(head, "\x89PNG\r\n\x1a\n", 8);
}

/* Waits for the oldest chart being drawn and checks its images. */
static int chart_reap(struct rpt *R)
{
    SIM_ASSERT(R->npend > 0);
    struct pending pd = R->pend[0];
    memmove(&R->pend[0], &R->pend[1], (size_t)(R->npend - 1) * sizeof R->pend[0]);
    R->npend--;
    int rc = wait_exit(pd.pid);
    if (rc != 0)
        return fail(R, 3, "gnuplot failed on '%s/%s.gp' (exit %d); its messages are in '%s/gnuplot.log'",
                    R->o->out_dir, pd.stem, rc, R->o->out_dir);
    for (int svg = 0; svg < 2; svg++) {
        char p[RPT_MAX_PATH];
        snprintf(p, sizeof p, "%s/%s.%s", R->o->out_dir, pd.stem, svg ? "svg" : "png");
        if (!image_ok(p, svg))
            return fail(R, 3, "gnuplot produced no usable image '%s' from '%s.gp' (see '%s/gnuplot.log')", p,
                        pd.stem, R->o->out_dir);
    }
    R->ncharts++;
    return 0;
}

static int chart_end(struct rpt *R, struct chart *c, const char *what)
{
    fclose(c->f);
    char name[RPT_MAX_PATH];
    snprintf(name, sizeof name, "%s.gp", c->stem);
    FILE *g = out_open(R, name, "w");
    if (!g) {
        free(c->body);
        return -1;
    }
    fprintf(g, "# simrun report: %s\n", what);
    fprintf(g, "# Re-plot in this folder with: gnuplot %s.gp  (data: %s.dat)\n", c->stem, c->stem);
    fprintf(g, "set encoding utf8\n");
    fprintf(g, "set terminal pngcairo size %d,%d font 'Sans,10' noenhanced background '#ffffff'\n", c->w, c->h);
    fprintf(g, "set output '%s.png'\n", c->stem);
    fwrite(c->body, 1, c->nbody, g);
    fprintf(g, "unset output\nreset\n");
    fprintf(g, "set terminal svg size %d,%d font 'Sans,10' noenhanced background '#ffffff'\n", c->w, c->h);
    fprintf(g, "set output '%s.svg'\n", c->stem);
    fwrite(c->body, 1, c->nbody, g);
    fprintf(g, "unset output\n");
    free(c->body);
    c->body = NULL;
    if (out_close(R, g, name) != 0)
        return -1;
    /* Drawn in the background, RPT_MAX_GNUPLOTS at a time; checked when it ends. */
    while (R->npend == R->maxpend)
        if (chart_reap(R) != 0)
            return -1;
    const char *args[] = {name};
    pid_t pid = spawn_gnuplot(R, args, 1, NULL);
    if (pid < 0)
        return fail(R, 3, "cannot run gnuplot: %s", strerror(errno));
    struct pending *pd = &R->pend[R->npend++];
    pd->pid = pid;
    snprintf(pd->stem, sizeof pd->stem, "%s", c->stem);
    return 0;
}

/* A figure on the page: the PNG, with links to the SVG, data and script. */
static void html_figure(FILE *h, const char *stem, const char *alt, const char *caption)
{
    fprintf(h, "<figure><a href=\"%s.svg\"><img src=\"%s.png\" alt=\"", stem, stem);
    fmt_markup(h, alt);
    fprintf(h, "\"></a><figcaption>");
    fputs(caption, h); /* trusted HTML built by the caller */
    fprintf(h, " <span class=\"files\">[<a href=\"%s.svg\">SVG</a> \xc2\xb7 <a href=\"%s.dat\">data</a> \xc2\xb7 "
               "<a href=\"%s.gp\">gnuplot script</a>]</span></figcaption></figure>\n",
            stem, stem, stem);
}

/* The line of policy i of n in charts where curves often coincide (CDFs,
 * backlog): its colour (with a dash pattern once colours repeat), and a
 * width that shrinks from the first policy to the last, so that a curve
 * drawn over an identical one leaves the one below visible at its edges.  The string is
 * static: valid until the next call. */
static const char *line_style(size_t i, size_t n)
{
    static char b[96];
    double lw = 1.5 + 0.7 * (double)(n - 1 - i);
    if (lw > 4)
        lw = 4;
    snprintf(b, sizeof b, "lw %.1f dt %d lc rgb '%s'", lw, (int)(i / NPALETTE) % 4 + 1, palette[i % NPALETTE]);
    return b;
}

/* --- time axes ---------------------------------------------------------------------------- */

/* Hours for runs up to four days, days beyond. */
static void time_unit(int64_t span_us, double *div, const char **unit)
{
    if (span_us <= 4 * US_PER_DAY) {
        *div = (double)US_PER_H;
        *unit = "hours";
    } else {
        *div = (double)US_PER_DAY;
        *unit = "days";
    }
}

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

/* --- latency and lateness CDFs ------------------------------------------------------------- */

/* Adds the histogram of kind over the group's runs (whole scenario) into
 * counts[HIST_NBUCKETS]; returns the number of samples. */
static uint64_t group_hist(struct rpt *R, const struct rdb_group *g, const char *kind, uint64_t *counts)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(R->r->db,
                           "SELECT bucket_lo_us, count FROM histograms WHERE run_id = ?1 AND handler = '' AND kind = ?2",
                           -1, &q, NULL) != SQLITE_OK) {
        fail(R, 2, "cannot read histograms from '%s': %s", R->r->path, sqlite3_errmsg(R->r->db));
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

/* One chart of the CDFs of kind ("latency", "lateness") of every policy of
 * the section; *drawn is 0 when no policy has a sample. */
static int chart_cdf(struct rpt *R, const struct section *S, const char *kind, FILE *html)
{
    char stem[300], dname[400];
    snprintf(stem, sizeof stem, "%s-%s", S->stem, kind);
    snprintf(dname, sizeof dname, "%s.dat", stem);
    uint64_t *counts = xcalloc(HIST_NBUCKETS, sizeof *counts);
    FILE *d = NULL;
    int *has = xcalloc(S->ngroups, sizeof *has);
    int nhas = 0, block = 0;
    double xlo = INFINITY, xhi = 0;
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
        if (!d && !(d = out_open(R, dname, "w")))
            break;
        if (block)
            fprintf(d, "\n\n");
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
            if (xl < xlo)
                xlo = xl;
            if (xh > xhi)
                xhi = xh;
        }
        has[gi] = block++;
        nhas++;
    }
    free(counts);
    if (d && out_close(R, d, dname) != 0)
        d = NULL;
    if (R->code || !nhas) {
        free(has);
        return R->code ? -1 : 0;
    }
    struct chart c;
    FILE *f = chart_begin(&c, stem, 900, 480);
    int lat = !strcmp(kind, "latency");
    fprintf(f, "set title ");
    char title[300];
    snprintf(title, sizeof title, "%s: %s, all %s of all seeds (cumulative share)", S->name,
             lat ? "latency from publish to commit" : "lateness from due instant to run start",
             lat ? "items" : "due instants");
    gp_text(f, title);
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
                has[gi], line_style(gi, S->ngroups));
        gp_text(f, g->policy);
        first = 0;
    }
    fprintf(f, "\n");
    char what[300];
    snprintf(what, sizeof what, "%s CDF of scenario %s", kind, S->name);
    if (chart_end(R, &c, what) != 0) {
        free(has);
        return -1;
    }
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
    html_figure(html, stem, title, cap);
    free(has);
    return 0;
}

/* --- bar charts with confidence intervals ------------------------------------------------------ */

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

static int chart_bars(struct rpt *R, const struct section *S, FILE *html)
{
    char stem[300], dname[400];
    snprintf(stem, sizeof stem, "%s-bars", S->stem);
    snprintf(dname, sizeof dname, "%s.dat", stem);
    FILE *d = out_open(R, dname, "w");
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
            unsigned col = (unsigned)strtoul(palette[gi % NPALETTE] + 1, NULL, 16);
            dat_text(d, g->policy);
            fprintf(d, " %.9g %.9g %u ", mean, hw, col);
            dat_text(d, lab);
            fprintf(d, "\n");
        }
    }
    if (out_close(R, d, dname) != 0)
        return -1;
    int np = (int)S->ngroups;
    /* Labels side by side take about 7 px a character in a panel about
     * 260 px wide: turn them when they would not fit. */
    size_t chars = 0;
    for (size_t gi = 0; gi < S->ngroups; gi++)
        chars += strlen(R->r->groups[S->groups[gi]].policy) + 2;
    int rotate = chars * 7 > 200;
    struct chart c;
    FILE *f = chart_begin(&c, stem, 1050, rotate ? 640 : 580);
    char title[256];
    snprintf(title, sizeof title, "%s: problems per run, mean over seeds%s", S->name,
             multi ? " with 95% confidence intervals" : " (one seed: no intervals)");
    fprintf(f, "set multiplot layout 2,3 title ");
    gp_text(f, title);
    fprintf(f, " font ',12'\n");
    fprintf(f, "set style fill solid 0.85 border rgb '#333333'\nset boxwidth 0.65\nset grid ytics\n");
    fprintf(f, "set border 3\nset tics nomirror\nset xtics scale 0\nset key off\n");
    fprintf(f, "set xrange [-0.6:%g]\n", np - 0.4);
    if (rotate)
        fprintf(f, "set xtics rotate by 45 right font ',9'\nset bmargin 5\n");
    for (size_t b = 0; b < NBARS; b++) {
        double top = ymax[b] > 0 ? ymax[b] * 1.22 : 1;
        fprintf(f, "set title ");
        gp_text(f, bar_metrics[b].title);
        fprintf(f, "\nset ylabel ");
        gp_text(f, bar_metrics[b].unit);
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
    if (chart_end(R, &c, what) != 0)
        return -1;
    html_figure(html, stem, title,
                multi ? "Bars: the mean over seeds; whiskers: the 95% confidence interval of that mean (Student t). "
                        "Lower is better in every panel; overlapping whiskers mean the seeds do not tell the "
                        "policies apart."
                      : "Bars: the value of the single seed in the database (run a sweep, --seeds A..B, for "
                        "confidence intervals). Lower is better in every panel.");
    return 0;
}

/* --- timelines and backlog ------------------------------------------------------------------------ */

enum { TL_OK, TL_EMPTY, TL_FAILED, TL_CRASHED, TL_NKIND };
static const char *const tl_kind_title[TL_NKIND] = {"run that committed work", "run with nothing to do",
                                                    "run that failed", "run crashed or cut off"};
static const char *const tl_kind_colour[TL_NKIND] = {"#2ca02c", "#9ecae1", "#ff7f0e", "#d62728"};

struct tl_run {
    int64_t start_us, end_us;      /* end_us < 0: still active */
    int64_t handler;
    uint32_t taken;
    int empty_hint;                /* started with taken=0 and no due instant */
    int kind;                      /* TL_*, once ended */
};

struct tl_down {
    int64_t from_us, to_us;
    char what[32];                 /* "host 0", "worker 1" */
};

/* The facts of one run's trace that the charts draw. */
struct timeline {
    struct tl_run *runs;           /* by run id - 1 */
    size_t nruns, cap_runs;
    int64_t *pub_t;
    int64_t *pub_h;
    size_t npub, cap_pub;
    struct tl_down *down;
    size_t ndown, cap_down;
    int64_t end_us;
};

/* One trace record into the timeline: its typed fields, never its text. */
static void tl_feed(struct timeline *t, const struct trace_rec *tr)
{
    uint64_t run = tr->run;
    int64_t t_us = tr->t_us, handler = tr->handler;
    if (tr->kind == FACT_RUN_START && run > 0) {
        if (run > t->nruns) {
            t->runs = xgrow(t->runs, sizeof *t->runs, &t->cap_runs, (size_t)run);
            for (size_t i = t->nruns; i < run; i++)
                t->runs[i] = (struct tl_run){.start_us = -1, .end_us = -1, .handler = -1};
            t->nruns = (size_t)run;
        }
        struct tl_run *r = &t->runs[run - 1];
        r->start_us = t_us;
        r->end_us = -1;
        r->handler = handler;
        r->taken = tr->taken;
        r->empty_hint = r->taken == 0 && tr->due_us < 0;
    } else if (tr->kind == FACT_RUN_END && run > 0 && run <= t->nruns) {
        struct tl_run *r = &t->runs[run - 1];
        r->end_us = t_us;
        r->kind = tr->outcome == OUT_COMMITTED ? TL_OK : tr->outcome == OUT_FAILED ? TL_FAILED : TL_CRASHED;
    } else if (tr->kind == FACT_PUBLISH && handler >= 0) {
        if (t->npub == t->cap_pub) {
            size_t cap = t->cap_pub;
            t->pub_t = xgrow(t->pub_t, sizeof *t->pub_t, &cap, t->npub + 1);
            t->pub_h = xrealloc(t->pub_h, cap * sizeof *t->pub_h);
            t->cap_pub = cap;
        }
        t->pub_t[t->npub] = t_us;
        t->pub_h[t->npub++] = handler;
    } else if (tr->kind == FACT_CRASH || tr->kind == FACT_RESTART) {
        char what[sizeof t->down->what]; /* "host 0", "worker 1": what went down */
        snprintf(what, sizeof what, "%s %" PRIu32, crash_target_name((enum crash_target)tr->target),
                 tr->target_index);
        if (tr->kind == FACT_CRASH) {
            t->down = xgrow(t->down, sizeof *t->down, &t->cap_down, t->ndown + 1);
            struct tl_down *w = &t->down[t->ndown++];
            w->from_us = t_us;
            w->to_us = -1;
            memcpy(w->what, what, sizeof what);
            return;
        }
        for (size_t i = t->ndown; i-- > 0;)
            if (t->down[i].to_us < 0 && !strcmp(t->down[i].what, what)) {
                t->down[i].to_us = t_us;
                break;
            }
    }
}

static void tl_finish(struct timeline *t, int64_t end_us)
{
    t->end_us = end_us;
    for (size_t i = 0; i < t->nruns; i++)
        if (t->runs[i].start_us >= 0 && t->runs[i].end_us < 0) {
            t->runs[i].end_us = end_us;
            t->runs[i].kind = TL_CRASHED;
        }
    for (size_t i = 0; i < t->ndown; i++)
        if (t->down[i].to_us < 0)
            t->down[i].to_us = end_us;
}

static void tl_free(struct timeline *t)
{
    free(t->runs);
    free(t->pub_t);
    free(t->pub_h);
    free(t->down);
    *t = (struct timeline){0};
}

/* The trace of the group's run with this seed: from the database when it
 * was stored, else by simulating it again.  Returns 0, or -1 with note (the
 * page says why there is no timeline).  warn gets a remark to show with the
 * timeline (a re-simulation that differs from the stored run). */
static int tl_load(struct rpt *R, const struct section *S, const struct rdb_group *g, const struct rdb_run *run,
                   struct timeline *t, char *note, size_t nn, char *warn, size_t nw)
{
    *t = (struct timeline){0};
    warn[0] = 0;
    struct rtrace stored;
    char err[512];
    if (rtrace_load(R->r, run->run_id, &stored, err, sizeof err) != 0) {
        fail(R, 2, "%s", err);
        return -1;
    }
    if (stored.n) {
        for (size_t i = 0; i < stored.n; i++)
            tl_feed(t, &stored.recs[i]);
        tl_finish(t, stored.end_us);
        rtrace_free(&stored);
        return 0;
    }
    rtrace_free(&stored);
    /* Not stored (or stored as text, by schema version 1): simulate the
     * run again. */
    if (!S->scn) {
        snprintf(note, nn, "the database has no trace of this run that this simrun reads (run with --store-trace "
                           "to keep it) and %s",
                 S->scn_note);
        return -1;
    }
    const struct policy_ops *ops = policy_find(g->base_policy);
    if (!ops) {
        snprintf(note, nn, "the database has no trace of this run, and policy '%s' is not in this simrun", g->base_policy);
        return -1;
    }
    struct params ps;
    char msg[256] = "";
    params_init(&ps, ops);
    char *pbuf = xstrdup(g->params);
    for (char *save = NULL, *kv = strtok_r(pbuf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq || (*eq = 0, params_set(&ps, kv, eq + 1, msg, sizeof msg) != 0)) {
            snprintf(note, nn, "the database has no trace of this run, and its parameters '%s' do not apply to "
                               "this simrun's %s: %s",
                     g->params, g->base_policy, msg);
            free(pbuf);
            return -1;
        }
    }
    free(pbuf);
    struct sim_opts so = {.seed = run->seed, .keep_trace = 1, .label = g->policy};
    struct sim_result res;
    sim_run(S->scn, ops, &ps, &so, &res);
    for (size_t i = 0; i < res.ntrace; i++)
        tl_feed(t, &res.trace[i]);
    tl_finish(t, res.end_us);
    char fp[17];
    snprintf(fp, sizeof fp, "%016" PRIx64, res.fingerprint);
    if (strcmp(fp, run->fingerprint))
        snprintf(warn, nw, "Simulated again for this chart, and the result differs from the stored run (fingerprint "
                           "%s, stored %s): the policy or simrun changed since the database was written.",
                 fp, run->fingerprint);
    sim_result_free(&res);
    return 0;
}

/* The handler instance ids a timeline shows, with their names: instance 0
 * of each workflow, in scenario order; without the scenario file, the
 * first ids.  Returns how many (at most RPT_MAX_ROWS); is_consumer may be
 * -1 (unknown). */
static int tl_rows(const struct section *S, const struct timeline *t, int64_t *ids, char names[][80],
                   int *is_consumer, int *hidden)
{
    int n = 0;
    *hidden = 0;
    if (S->scn) {
        int64_t base = 0;
        for (uint16_t f = 0; f < S->scn->nwfs; f++) {
            const struct workflow_def *wf = &S->scn->wfs[f];
            for (uint16_t h = 0; h < wf->nhandlers; h++) {
                if (n == RPT_MAX_ROWS) {
                    (*hidden)++;
                    continue;
                }
                ids[n] = base + h;
                is_consumer[n] = wf->handlers[h].kind == H_CONSUMER;
                if (wf->count > 1)
                    snprintf(names[n], 80, "%s[0].%s", wf->name, wf->handlers[h].name);
                else
                    snprintf(names[n], 80, "%s.%s", wf->name, wf->handlers[h].name);
                n++;
            }
            base += (int64_t)wf->count * wf->nhandlers;
        }
        return n;
    }
    int64_t maxh = -1;
    for (size_t i = 0; i < t->nruns; i++)
        if (t->runs[i].handler > maxh)
            maxh = t->runs[i].handler;
    for (int64_t h = 0; h <= maxh; h++) {
        if (n == RPT_MAX_ROWS) {
            (*hidden)++;
            continue;
        }
        ids[n] = h;
        is_consumer[n] = -1;
        snprintf(names[n], 80, "handler %" PRId64, h);
        n++;
    }
    return n;
}

static int row_of(const int64_t *ids, int n, int64_t h)
{
    for (int i = 0; i < n; i++)
        if (ids[i] == h)
            return i;
    return -1;
}

/* Tics for a time axis in hours from from_us to to_us, labelled as simrun
 * writes instants ("08:30", "1d08:30"), about eight of them. */
static void clock_tics(FILE *f, int64_t from_us, int64_t to_us, double div)
{
    static const int64_t steps_min[] = {1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2880, 10080};
    int64_t span = to_us - from_us, step = steps_min[0] * US_PER_MIN;
    for (size_t i = 0; i < sizeof steps_min / sizeof steps_min[0]; i++) {
        step = steps_min[i] * US_PER_MIN;
        if (span / step <= 8)
            break;
    }
    fprintf(f, "set xtics (");
    int first = 1;
    for (int64_t t = (from_us + step - 1) / step * step; t <= to_us; t += step) {
        int64_t d = t / US_PER_DAY, hh = t % US_PER_DAY / US_PER_H, mm = t % US_PER_H / US_PER_MIN;
        char lab[32];
        if (d)
            snprintf(lab, sizeof lab, "%" PRId64 "d%02" PRId64 ":%02" PRId64, d, hh, mm);
        else
            snprintf(lab, sizeof lab, "%02" PRId64 ":%02" PRId64, hh, mm);
        fprintf(f, "%s'%s' %.9g", first ? "" : ", ", lab, (double)t / div);
        first = 0;
    }
    fprintf(f, ")\n");
}

/* The timeline of one policy's run, over [from_us, to_us]: the whole run,
 * or (zoom) the time around a crash. */
static int chart_timeline(struct rpt *R, const struct section *S, size_t gi, const struct timeline *t,
                          const char *warn, FILE *html, int64_t from_us, int64_t to_us, int zoom)
{
    const struct rdb_group *g = &R->r->groups[S->groups[gi]];
    char pst[96], stem[300], dname[400];
    stem_of(g->policy, pst, sizeof pst);
    snprintf(stem, sizeof stem, "%s-%s-%s", S->stem, zoom ? "crash" : "timeline", pst);
    snprintf(dname, sizeof dname, "%s.dat", stem);
    int64_t ids[RPT_MAX_ROWS];
    char names[RPT_MAX_ROWS][80];
    int cons[RPT_MAX_ROWS], hidden;
    int nrows = tl_rows(S, t, ids, names, cons, &hidden);
    if (nrows == 0 || to_us <= from_us)
        return 0;
    double div;
    const char *unit;
    time_unit(zoom ? 0 : to_us - from_us, &div, &unit);
    double x0 = (double)from_us / div, x1 = (double)to_us / div, minw = (x1 - x0) * 0.0015;
    FILE *d = out_open(R, dname, "w");
    if (!d)
        return -1;
    size_t count[TL_NKIND + 1] = {0};
    for (int k = 0; k < TL_NKIND; k++) {
        fprintf(d, "%s# %s: start_%s row length_%s\n", k ? "\n\n" : "", tl_kind_title[k], unit, unit);
        for (size_t i = 0; i < t->nruns; i++) {
            const struct tl_run *r = &t->runs[i];
            int row = r->start_us < 0 ? -1 : row_of(ids, nrows, r->handler);
            if (row < 0 || r->end_us < from_us || r->start_us > to_us)
                continue;
            int kind = r->kind;
            if (kind == TL_OK && r->taken == 0 && (cons[row] == 1 || (cons[row] < 0 && r->empty_hint)))
                kind = TL_EMPTY;
            if (kind != k)
                continue;
            double len = (double)(r->end_us - r->start_us) / div;
            fprintf(d, "%.9g %d %.9g\n", (double)r->start_us / div, row, len < minw ? minw : len);
            count[k]++;
        }
        if (!count[k])
            fprintf(d, "NaN NaN NaN\n"); /* keeps the block, so the indices stay fixed */
    }
    fprintf(d, "\n\n# publishes: time_%s row\n", unit);
    for (size_t i = 0; i < t->npub; i++) {
        int row = row_of(ids, nrows, t->pub_h[i]);
        if (row < 0 || t->pub_t[i] < from_us || t->pub_t[i] > to_us)
            continue;
        fprintf(d, "%.9g %d\n", (double)t->pub_t[i] / div, row);
        count[TL_NKIND]++;
    }
    if (!count[TL_NKIND])
        fprintf(d, "NaN NaN\n");
    if (out_close(R, d, dname) != 0)
        return -1;

    struct chart c;
    int hgt = 170 + 34 * nrows;
    FILE *f = chart_begin(&c, stem, 1100, hgt < 300 ? 300 : hgt);
    char title[300];
    if (zoom)
        snprintf(title, sizeof title, "%s under %s: runs around the first crash, seed %" PRIu64, S->name, g->policy,
                 S->tl_seed);
    else
        snprintf(title, sizeof title, "%s under %s: runs per handler, seed %" PRIu64, S->name, g->policy,
                 S->tl_seed);
    fprintf(f, "set title ");
    gp_text(f, title);
    if (zoom) {
        fprintf(f, "\nset xlabel 'time since the scenario start ([N days]d hh:mm)'\n");
        clock_tics(f, from_us, to_us, div);
    } else {
        fprintf(f, "\nset xlabel 'time since the scenario start (%s)'\n", unit);
    }
    fprintf(f, "set xrange [%.9g:%.9g]\nset yrange [%g:-0.6]\n", x0, x1, nrows - 0.4);
    fprintf(f, "set ytics (");
    for (int i = 0; i < nrows; i++) {
        fprintf(f, "%s", i ? ", " : "");
        gp_text(f, names[i]);
        fprintf(f, " %d", i);
    }
    fprintf(f, ") font ',9'\nset grid xtics\nset border 3\nset tics nomirror\nset ytics scale 0\n");
    /* The key below the axis, with room so that it never meets the x label. */
    fprintf(f, "set key outside bottom center horizontal font ',9' samplen 2\nset bmargin 6\n"
               "set xlabel offset 0,0.3\n");
    if (t->end_us < g->horizon_us + g->drain_us && t->end_us >= from_us && t->end_us <= to_us)
        fprintf(f, "set arrow from %.9g, graph 0 to %.9g, graph 1 nohead lw 2 dt 2 lc rgb '#000000' front\n"
                   "set label 'the run stopped here' at %.9g, graph 1 offset 0.5,-1 front\n",
                (double)t->end_us / div, (double)t->end_us / div, (double)t->end_us / div);
    int shaded = 0;
    for (size_t i = 0; i < t->ndown; i++) {
        if (t->down[i].to_us < from_us || t->down[i].from_us > to_us)
            continue;
        int host = !strncmp(t->down[i].what, "host", 4);
        double a = (double)(t->down[i].from_us > from_us ? t->down[i].from_us : from_us) / div;
        double b = (double)(t->down[i].to_us < to_us ? t->down[i].to_us : to_us) / div;
        if (b - a < minw)
            b = a + minw;
        fprintf(f, "set object %zu rect from %.9g, graph 0 to %.9g, graph 1 behind fc rgb '%s' fs solid 0.45 noborder\n",
                i + 1, a, b, host ? "#f4a6a6" : "#f9d49c");
        shaded |= host ? 1 : 2;
    }
    fprintf(f, "plot ");
    int first = 1;
    for (int k = 0; k < TL_NKIND; k++) {
        if (!count[k])
            continue;
        fprintf(f, "%s'%s' index %d using 1:2:3:(0) with vectors nohead lw 9 lc rgb '%s' title '%s'",
                first ? "" : ", \\\n     ", dname, k, tl_kind_colour[k], tl_kind_title[k]);
        first = 0;
    }
    if (count[TL_NKIND]) {
        fprintf(f, "%s'%s' index %d using 1:($2+0.26):(0):(0.2) with vectors nohead lw 1 lc rgb '#444444' "
                   "title 'publish (one tick per item)'",
                first ? "" : ", \\\n     ", dname, TL_NKIND);
        first = 0;
    }
    if (shaded & 1) {
        fprintf(f, "%sNaN with boxes fs solid 0.45 noborder fc rgb '#f4a6a6' title 'host down (crash to restart)'",
                first ? "" : ", \\\n     ");
        first = 0;
    }
    if (shaded & 2) {
        fprintf(f, "%sNaN with boxes fs solid 0.45 noborder fc rgb '#f9d49c' title 'worker or server down'",
                first ? "" : ", \\\n     ");
        first = 0;
    }
    if (first)
        fprintf(f, "NaN notitle");
    fprintf(f, "\n");
    char what[300];
    snprintf(what, sizeof what, "%s of %s under %s, seed %" PRIu64, zoom ? "crash close-up" : "timeline", S->name,
             g->policy, S->tl_seed);
    if (chart_end(R, &c, what) != 0)
        return -1;
    char cap[1400];
    int off;
    if (zoom)
        off = snprintf(cap, sizeof cap,
                       "The same runs close up, from shortly before the first crash until well after the restart: "
                       "what the policy did while the host was down and how it caught up.");
    else
        off = snprintf(cap, sizeof cap,
                       "Every run of each handler as a bar from its start to its end (runs too short to see are "
                       "drawn at a minimum width), coloured by how it ended; ticks under a bar are items "
                       "published to that handler; shaded bands are crashes, from crash to restart.");
    if (hidden && off < (int)sizeof cap)
        off += snprintf(cap + off, sizeof cap - (size_t)off, " %d more handlers are not shown.", hidden);
    if (S->scn && off < (int)sizeof cap && !zoom) {
        int multi = 0;
        for (uint16_t k = 0; k < S->scn->nwfs; k++)
            multi |= S->scn->wfs[k].count > 1;
        if (multi)
            off += snprintf(cap + off, sizeof cap - (size_t)off, " For workflows stamped out several times, "
                                                                  "instance [0] stands for the others.");
    }
    if (warn[0] && off < (int)sizeof cap)
        snprintf(cap + off, sizeof cap - (size_t)off, " <strong class=\"warn\">%s</strong>", warn);
    html_figure(html, stem, title, cap);
    return 0;
}

/* The close-up window around a timeline's first crash: from twice its
 * length before to four times after (a length of at least ten minutes),
 * within [0, end_us].  0 when the run had no crash. */
static int crash_window(const struct timeline *t, int64_t end_us, int64_t *from, int64_t *to)
{
    if (!t->ndown)
        return 0;
    const struct tl_down *w = &t->down[0];
    int64_t len = w->to_us - w->from_us;
    if (len < 10 * US_PER_MIN)
        len = 10 * US_PER_MIN;
    *from = w->from_us - 2 * len > 0 ? w->from_us - 2 * len : 0;
    *to = w->to_us + 4 * len < end_us ? w->to_us + 4 * len : end_us;
    return *to > *from;
}

/* Items waiting over time, for every policy that has a timeline: published
 * and not yet taken by a run that committed.  Items lost stay counted, so a
 * curve that does not come back to zero shows lost work. */
static int chart_backlog(struct rpt *R, const struct section *S, struct timeline *tls, const int *have, FILE *html)
{
    char stem[300], dname[400];
    snprintf(stem, sizeof stem, "%s-backlog", S->stem);
    snprintf(dname, sizeof dname, "%s.dat", stem);
    int64_t end = 0;
    size_t npub = 0;
    for (size_t gi = 0; gi < S->ngroups; gi++)
        if (have[gi]) {
            const struct rdb_group *g = &R->r->groups[S->groups[gi]];
            if (tls[gi].end_us > end)
                end = tls[gi].end_us;
            if (g->horizon_us + g->drain_us > end)
                end = g->horizon_us + g->drain_us;
            npub += tls[gi].npub;
        }
    if (!npub || end <= 0)
        return 0;
    double div;
    const char *unit;
    time_unit(end, &div, &unit);
    FILE *d = out_open(R, dname, "w");
    if (!d)
        return -1;
    double ymax = 0;
    int block = 0;
    int *idx = xcalloc(S->ngroups, sizeof *idx);
    double *bins = xmalloc(RPT_BACKLOG_BINS * sizeof *bins);
    for (size_t gi = 0; gi < S->ngroups; gi++) {
        if (!have[gi])
            continue;
        const struct timeline *t = &tls[gi];
        /* Changes in time order: +1 per publish, -taken at a commit. */
        size_t nch = 0;
        for (size_t i = 0; i < t->nruns; i++)
            nch += t->runs[i].start_us >= 0 && t->runs[i].kind == TL_OK && t->runs[i].taken;
        struct change { int64_t t_us; int64_t d; } *ch = xmalloc((nch + t->npub + 1) * sizeof *ch);
        size_t m = 0;
        for (size_t i = 0; i < t->npub; i++)
            ch[m++] = (struct change){t->pub_t[i], 1};
        for (size_t i = 0; i < t->nruns; i++)
            if (t->runs[i].start_us >= 0 && t->runs[i].kind == TL_OK && t->runs[i].taken)
                ch[m++] = (struct change){t->runs[i].end_us, -(int64_t)t->runs[i].taken};
        /* Publishes are in time order and so are commits; merge them. */
        size_t a = 0, b = t->npub;
        for (int k = 0; k < RPT_BACKLOG_BINS; k++)
            bins[k] = 0;
        int64_t level = 0;
        int bin = 0;
        double peak = 0;
        while (a < t->npub || b < m) {
            struct change *x;
            if (b >= m || (a < t->npub && ch[a].t_us <= ch[b].t_us))
                x = &ch[a++];
            else
                x = &ch[b++];
            int nb = (int)((double)x->t_us / (double)end * RPT_BACKLOG_BINS);
            if (nb >= RPT_BACKLOG_BINS)
                nb = RPT_BACKLOG_BINS - 1;
            while (bin < nb) {
                bins[bin] = peak;
                peak = (double)(level > 0 ? level : 0);
                bin++;
            }
            level += x->d;
            if (level > peak)
                peak = (double)level;
        }
        while (bin < RPT_BACKLOG_BINS) {
            bins[bin++] = peak;
            peak = (double)(level > 0 ? level : 0);
        }
        free(ch);
        const struct rdb_group *g = &R->r->groups[S->groups[gi]];
        fprintf(d, "%s# %s, seed %" PRIu64 ": time_%s items_waiting (the most in each interval)\n", block ? "\n\n" : "",
                g->policy, S->tl_seed, unit);
        for (int k = 0; k < RPT_BACKLOG_BINS; k++) {
            fprintf(d, "%.9g %.0f\n", (double)end * k / RPT_BACKLOG_BINS / div, bins[k]);
            if (bins[k] > ymax)
                ymax = bins[k];
        }
        fprintf(d, "%.9g %.0f\n", (double)end / div, bins[RPT_BACKLOG_BINS - 1]);
        idx[gi] = block++;
    }
    free(bins);
    if (out_close(R, d, dname) != 0) {
        free(idx);
        return -1;
    }
    struct chart c;
    FILE *f = chart_begin(&c, stem, 1000, 440);
    char title[256];
    snprintf(title, sizeof title, "%s: backlog over time, seed %" PRIu64, S->name, S->tl_seed);
    fprintf(f, "set title ");
    gp_text(f, title);
    fprintf(f, "\nset xlabel 'time since the scenario start (%s)'\nset ylabel 'items waiting (published, not processed)'\n",
            unit);
    fprintf(f, "set xrange [0:%.9g]\nset yrange [0:%.9g]\nset grid\nset border 3\nset tics nomirror\n",
            (double)end / div, ymax > 0 ? ymax * 1.1 : 1);
    fprintf(f, "set key outside right top vertical title 'policy'\n");
    fprintf(f, "plot ");
    int first = 1;
    for (size_t gi = 0; gi < S->ngroups; gi++) {
        if (!have[gi])
            continue;
        fprintf(f, "%s'%s' index %d using 1:2 with steps %s title ", first ? "" : ", \\\n     ", dname, idx[gi],
                line_style(gi, S->ngroups));
        gp_text(f, R->r->groups[S->groups[gi]].policy);
        first = 0;
    }
    fprintf(f, "\n");
    free(idx);
    char what[256];
    snprintf(what, sizeof what, "backlog of scenario %s", S->name);
    if (chart_end(R, &c, what) != 0)
        return -1;
    html_figure(html, stem, title,
                "Items published and not yet processed (taken by a run that committed), the most in each of "
                "1500 intervals. Lost items never leave the backlog, so a curve that ends above zero lost "
                "work; an item processed twice is subtracted twice.");
    return 0;
}

/* --- tables ------------------------------------------------------------------------------------ */

/* A cell of the page: as fmt_metric_ci, but a value that was the same in
 * every seed is shown alone (an interval of width 0 says nothing more). */
static void html_cell_value(const struct metric_info *mi, const struct stats_acc *a, uint64_t never, char *b,
                            size_t n)
{
    if (a->n > 1 && a->min == a->max && !never)
        fmt_metric(mi, a->mean, b, n);
    else
        fmt_metric_ci(mi, a, never, b, n);
}

static void group_stats(const struct rdb_group *g, int m, struct stats_acc *a, uint64_t *never)
{
    stats_init(a);
    *never = 0;
    for (size_t k = 0; k < g->nruns; k++) {
        double v = g->runs[k].m[m];
        if (metric_table[m].is_duration && v < 0)
            (*never)++;
        else
            stats_add(a, v);
    }
}

/* The metric table of a section: a row per metric, a column per policy;
 * the best and worst policy of each metric with a direction marked. */
static void html_metric_table(struct rpt *R, const struct section *S, FILE *h)
{
    size_t ng = S->ngroups;
    struct stats_acc *acc = xcalloc(ng, sizeof *acc);
    uint64_t *never = xcalloc(ng, sizeof *never);
    fprintf(h, "<div class=\"wide\"><table class=\"metrics\"><thead><tr><th>metric</th>");
    for (size_t gi = 0; gi < ng; gi++) {
        const struct rdb_group *g = &R->r->groups[S->groups[gi]];
        fprintf(h, "<th><span class=\"swatch\" style=\"background:%s\"></span>", palette[gi % NPALETTE]);
        fmt_markup(h, g->policy);
        fprintf(h, "</th>");
    }
    fprintf(h, "</tr></thead><tbody>\n");
    for (int m = 0; m < metric_count; m++) {
        const struct metric_info *mi = &metric_table[m];
        int any = 0;
        for (size_t gi = 0; gi < ng; gi++) {
            group_stats(&R->r->groups[S->groups[gi]], m, &acc[gi], &never[gi]);
            any |= acc[gi].n > 0 || never[gi] > 0;
        }
        if (!any)
            continue;
        enum diff_dir dir = diff_direction(mi->name);
        double best = NAN, worst = NAN;
        for (size_t gi = 0; gi < ng && dir != DIFF_INFO; gi++) {
            double v = never[gi] ? INFINITY : acc[gi].n ? acc[gi].mean : NAN;
            if (dir == DIFF_HIGHER)
                v = -v;
            if (isnan(v))
                continue;
            if (isnan(best) || v < best)
                best = v;
            if (isnan(worst) || v > worst)
                worst = v;
        }
        fprintf(h, "<tr><th title=\"");
        fmt_markup(h, mi->help);
        fprintf(h, "\">%s</th>", mi->name);
        for (size_t gi = 0; gi < ng; gi++) {
            char b[128];
            html_cell_value(mi, &acc[gi], never[gi], b, sizeof b);
            double v = never[gi] ? INFINITY : acc[gi].n ? acc[gi].mean : NAN;
            if (dir == DIFF_HIGHER)
                v = -v;
            const char *cls = "";
            if (dir != DIFF_INFO && best != worst && !isnan(v))
                cls = v == best ? " class=\"best\"" : v == worst ? " class=\"worst\"" : "";
            fprintf(h, "<td%s>", cls);
            fmt_markup(h, b);
            fprintf(h, "</td>");
        }
        fprintf(h, "</tr>\n");
    }
    fprintf(h, "</tbody></table></div>\n");
    free(acc);
    free(never);
}

/* One row per scenario and policy, the metrics a reader looks at first;
 * cells that show lost or repeated work, or a failed recovery, are marked. */
static void html_glance(struct rpt *R, struct section *secs, size_t nsec, FILE *h)
{
    fprintf(h, "<div class=\"wide\"><table class=\"glance\"><thead><tr><th>scenario</th><th>policy</th><th>seeds</th>");
    for (size_t k = 0; k < NGLANCE; k++)
        fprintf(h, "<th>%s</th>", glance_metrics[k]);
    fprintf(h, "</tr></thead><tbody>\n");
    for (size_t s = 0; s < nsec; s++) {
        for (size_t gi = 0; gi < secs[s].ngroups; gi++) {
            const struct rdb_group *g = &R->r->groups[secs[s].groups[gi]];
            fprintf(h, "<tr>");
            if (gi == 0) {
                fprintf(h, "<th rowspan=\"%zu\"><a href=\"#s-%s\">", secs[s].ngroups, secs[s].stem);
                fmt_markup(h, secs[s].name);
                fprintf(h, "</a></th>");
            }
            fprintf(h, "<td class=\"name\">");
            fmt_markup(h, g->policy);
            char seeds[64];
            rdb_seed_text(g, seeds, sizeof seeds);
            fprintf(h, "</td><td>%s</td>", seeds);
            for (size_t k = 0; k < NGLANCE; k++) {
                const struct metric_info *mi = metric_find(glance_metrics[k]);
                if (!mi) {
                    fprintf(h, "<td>-</td>");
                    continue;
                }
                struct stats_acc a;
                uint64_t never;
                group_stats(g, (int)(mi - metric_table), &a, &never);
                char b[128];
                html_cell_value(mi, &a, never, b, sizeof b);
                int bad = 0;
                if (!strcmp(mi->name, "recovery_ok"))
                    bad = a.n && a.mean < 1;
                else if (!strcmp(mi->name, "lost") || !strcmp(mi->name, "duplicates") ||
                         !strcmp(mi->name, "double_effects") || !strcmp(mi->name, "missed"))
                    bad = a.n && a.max > 0;
                fprintf(h, "<td%s>", bad ? " class=\"worst\"" : "");
                fmt_markup(h, b);
                fprintf(h, "</td>");
            }
            fprintf(h, "</tr>\n");
        }
    }
    fprintf(h, "</tbody></table></div>\n");
}

static const char css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;margin:0 auto;"
    "max-width:1180px;padding:1em 1.5em;color:#222;line-height:1.45}\n"
    "h1{margin-bottom:.2em}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}\n"
    "table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.88em}\n"
    "th,td{border:1px solid #ccc;padding:.25em .55em;text-align:right;white-space:nowrap}\n"
    "thead th{background:#f2f2f2;text-align:center}tbody th{text-align:left;font-weight:600}\n"
    "td.best{background:#dff0d8}td.worst{background:#f8d7da}td.name{text-align:left}\n"
    ".wide{overflow-x:auto;max-width:100%}\n"
    ".swatch{display:inline-block;width:.8em;height:.8em;margin-right:.35em;border-radius:2px;vertical-align:-1px}\n"
    "figure{margin:1em 0 1.8em}figure img{max-width:100%;height:auto;border:1px solid #e4e4e4}\n"
    "figcaption{font-size:.9em;color:#444;max-width:70em}.files{color:#777;white-space:nowrap}\n"
    "pre{background:#f7f7f7;padding:.7em;overflow:auto;font-size:.85em}\n"
    ".meta{color:#555}.warn{color:#a00}.note{background:#fff7e0;border-left:4px solid #f0c040;padding:.4em .8em}\n"
    "dl.glossary dt{font-weight:600;font-family:monospace}dl.glossary dd{margin:0 0 .3em 1.5em}\n"
    "nav ul{columns:3}\n";

static void html_intro(struct rpt *R, FILE *h, struct section *secs, size_t nsec)
{
    fprintf(h, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
               "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
               "<title>simrun report: scheduling policies compared</title>\n<style>\n%s</style></head>\n<body>\n",
            css);
    fprintf(h, "<h1>Scheduling policies compared</h1>\n<p class=\"meta\">Generated by simrun %s from <code>",
            R->o->version);
    fmt_markup(h, R->r->path);
    fprintf(h, "</code>: %zu runs of %zu scenarios.</p>\n", R->r->nruns, nsec);
    fprintf(h,
            "<section id=\"how\"><h2>How to read this report</h2>\n"
            "<p>simrun replays a <em>scenario</em> (a workload of scheduled jobs, events to process, failures and "
            "crashes, on a simulated clock) under several <em>scheduling policies</em>, the rules that decide when "
            "each handler runs, and measures what went wrong and how late things were. Every policy sees exactly "
            "the same workload, so differences come from the policy alone. A scenario run with several random "
            "<em>seeds</em> gives a sample: tables then show <code>mean \xc2\xb1 h</code>, where the true mean lies "
            "between mean &minus; h and mean + h with 95%% confidence (Student t over the seeds); a value "
            "without <code>\xc2\xb1</code> was the same in every seed.</p>\n"
            "<p>Start with the table below: red cells show lost work, work done twice, missed schedules or a "
            "crash that was not recovered. Then, per scenario: the metric table (green: best policy for that "
            "metric, red: worst), the latency curves (further left is faster), the problem bars (lower is "
            "better), the backlog (items waiting over time) and one timeline per policy (what ran when).</p>\n"
            "<details><summary>What each metric means</summary><dl class=\"glossary\">\n");
    for (int m = 0; m < metric_count; m++) {
        fprintf(h, "<dt>%s</dt><dd>", metric_table[m].name);
        fmt_markup(h, metric_table[m].help);
        fprintf(h, "%s</dd>\n", metric_table[m].is_duration ? " (a duration)" : "");
    }
    fprintf(h, "</dl></details>\n<details><summary>The policies</summary><dl class=\"glossary\">\n");
    for (int i = 0; i < policy_registry_count; i++) {
        const struct policy_ops *p = policy_registry[i];
        fprintf(h, "<dt>%s</dt><dd>", p->name);
        fmt_markup(h, p->summary ? p->summary : "");
        if (p->seeds && p->seeds[0]) {
            fprintf(h, " (");
            fmt_markup(h, p->seeds);
            fprintf(h, ")");
        }
        fprintf(h, "</dd>\n");
    }
    fprintf(h, "</dl></details></section>\n");
    fprintf(h, "<section id=\"glance\"><h2>At a glance</h2>\n");
    html_glance(R, secs, nsec, h);
    fprintf(h, "</section>\n<nav><h2>Scenarios</h2><ul>\n");
    for (size_t s = 0; s < nsec; s++) {
        fprintf(h, "<li><a href=\"#s-%s\">", secs[s].stem);
        fmt_markup(h, secs[s].name);
        fprintf(h, "</a></li>\n");
    }
    fprintf(h, "</ul></nav>\n");
}

/* --- one scenario --------------------------------------------------------------------------------- */

/* Loads the scenario file of a section when it is there and unchanged: at
 * its path as recorded (relative to the current folder), else, for a
 * relative path, beside the database (a report made from elsewhere). */
static void section_scenario(struct section *S, const char *db_path)
{
    struct scenario *s;
    struct diag d;
    const char *slash = strrchr(db_path, '/');
    if (S->path[0] != '/' && slash && access(S->path, R_OK) != 0) {
        char alt[RPT_MAX_PATH];
        snprintf(alt, sizeof alt, "%.*s/%s", (int)(slash - db_path), db_path, S->path);
        if (access(alt, R_OK) == 0) {
            free(S->path_found);
            S->path_found = xstrdup(alt);
        }
    }
    if (scenario_parse(S->path_found ? S->path_found : S->path, &s, &d) != 0) {
        snprintf(S->scn_note, sizeof S->scn_note, "the scenario file '%s' cannot be read (%s)", S->path, d.msg);
        return;
    }
    char hash[17];
    snprintf(hash, sizeof hash, "%016" PRIx64, s->hash);
    if (strcmp(hash, S->hash)) {
        snprintf(S->scn_note, sizeof S->scn_note,
                 "the scenario file '%s' has changed since these runs (hash %s, the runs' %s)", S->path, hash, S->hash);
        scenario_free(s);
        return;
    }
    S->scn = s;
}

static void html_source(const struct section *S, FILE *h)
{
    FILE *f = fopen(S->path_found ? S->path_found : S->path, "r");
    if (!f)
        return;
    fprintf(h, "<details><summary>The scenario file</summary><pre>");
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, f) && n++ < 400)
        fmt_markup(h, line);
    fclose(f);
    fprintf(h, "</pre></details>\n");
}

static int write_section(struct rpt *R, struct section *S, FILE *h)
{
    const struct rdb_group *g0 = &R->r->groups[S->groups[0]];
    fprintf(h, "<section class=\"scenario\" id=\"s-%s\"><h2>", S->stem);
    fmt_markup(h, S->name);
    fprintf(h, "</h2>\n<p class=\"meta\">Scenario file <code>");
    fmt_markup(h, S->path);
    char hz[40], dr[40], seeds[128];
    fmt_duration((double)g0->horizon_us, hz, sizeof hz);
    fmt_duration((double)g0->drain_us, dr, sizeof dr);
    rdb_seed_text(g0, seeds, sizeof seeds);
    fprintf(h, "</code> (hash %s), simulated for %s plus a drain of %s (work may finish, nothing new arrives); "
               "seed%s %s (%zu per policy).</p>\n",
            S->hash, hz, dr, g0->nruns > 1 ? "s" : "", seeds, g0->nruns);
    fprintf(h, "<p>Policies: ");
    for (size_t gi = 0; gi < S->ngroups; gi++) {
        const struct rdb_group *g = &R->r->groups[S->groups[gi]];
        fprintf(h, "%s<span class=\"swatch\" style=\"background:%s\"></span><strong>", gi ? "; " : "",
                palette[gi % NPALETTE]);
        fmt_markup(h, g->policy);
        fprintf(h, "</strong>");
        if (strcmp(g->policy, g->base_policy) || g->params[0]) {
            fprintf(h, " (");
            fmt_markup(h, g->base_policy);
            if (g->params[0]) {
                fprintf(h, " with ");
                fmt_markup(h, g->params);
            }
            fprintf(h, ")");
        }
        char sd[64];
        rdb_seed_text(g, sd, sizeof sd);
        if (strcmp(sd, seeds)) {
            fprintf(h, ", seeds ");
            fmt_markup(h, sd);
        }
    }
    fprintf(h, ".</p>\n");
    html_source(S, h);
    fprintf(h, "<h3>Metrics</h3>\n");
    html_metric_table(R, S, h);
    fprintf(h, "<h3>Latency</h3>\n");
    if (chart_cdf(R, S, "latency", h) != 0)
        return -1;
    if (chart_cdf(R, S, "lateness", h) != 0)
        return -1;
    fprintf(h, "<h3>Problems</h3>\n");
    if (chart_bars(R, S, h) != 0)
        return -1;

    /* Timelines: one seed, every policy. */
    struct timeline *tls = xcalloc(S->ngroups, sizeof *tls);
    int *have = xcalloc(S->ngroups, sizeof *have);
    char (*warn)[400] = xcalloc(S->ngroups, sizeof *warn);
    char (*note)[800] = xcalloc(S->ngroups, sizeof *note);
    int ret = 0, nhave = 0;
    for (size_t gi = 0; gi < S->ngroups && !ret; gi++) {
        const struct rdb_group *g = &R->r->groups[S->groups[gi]];
        const struct rdb_run *run = NULL;
        for (size_t k = 0; k < g->nruns; k++)
            if (g->runs[k].seed == S->tl_seed)
                run = &g->runs[k];
        if (!run) {
            snprintf(note[gi], sizeof note[gi], "%s has no run with seed %" PRIu64, g->policy, S->tl_seed);
            continue;
        }
        if (tl_load(R, S, g, run, &tls[gi], note[gi], sizeof note[gi], warn[gi], sizeof warn[gi]) == 0) {
            have[gi] = 1;
            nhave++;
        } else if (R->code) {
            ret = -1;
        }
    }
    if (!ret && nhave) {
        fprintf(h, "<h3>Backlog</h3>\n");
        ret = chart_backlog(R, S, tls, have, h);
    }
    if (!ret) {
        fprintf(h, "<h3>Timelines, seed %" PRIu64 "</h3>\n", S->tl_seed);
        for (size_t gi = 0; gi < S->ngroups && !ret; gi++) {
            if (have[gi]) {
                const struct rdb_group *g = &R->r->groups[S->groups[gi]];
                int64_t full = g->horizon_us + g->drain_us;
                if (full < tls[gi].end_us)
                    full = tls[gi].end_us;
                ret = chart_timeline(R, S, gi, &tls[gi], warn[gi], h, 0, full > 0 ? full : US_PER_S, 0);
                int64_t from, to;
                if (!ret && crash_window(&tls[gi], full, &from, &to))
                    ret = chart_timeline(R, S, gi, &tls[gi], warn[gi], h, from, to, 1);
            } else {
                fprintf(h, "<p class=\"note\">No timeline for <strong>");
                fmt_markup(h, R->r->groups[S->groups[gi]].policy);
                fprintf(h, "</strong>: ");
                fmt_markup(h, note[gi]);
                fprintf(h, ".</p>\n");
            }
        }
    }
    for (size_t gi = 0; gi < S->ngroups; gi++)
        tl_free(&tls[gi]);
    free(tls);
    free(have);
    free(warn);
    free(note);
    fprintf(h, "</section>\n");
    return ret;
}

/* Groups the database's groups into sections by scenario hash, in file
 * order, and picks their file stems (unique) and timeline seeds. */
static size_t make_sections(struct rpt *R, struct section **out)
{
    struct rdb *r = R->r;
    struct section *secs = xcalloc(r->ngroups + 1, sizeof *secs);
    size_t n = 0;
    for (size_t i = 0; i < r->ngroups; i++) {
        const struct rdb_group *g = &r->groups[i];
        struct section *S = NULL;
        for (size_t k = 0; k < n && !S; k++)
            if (!strcmp(secs[k].hash, g->scenario_hash))
                S = &secs[k];
        if (!S) {
            S = &secs[n++];
            S->name = g->scenario;
            S->hash = g->scenario_hash;
            S->path = g->scenario_path;
            S->groups = xcalloc(r->ngroups, sizeof *S->groups);
        }
        S->groups[S->ngroups++] = i;
    }
    for (size_t k = 0; k < n; k++) {
        struct section *S = &secs[k];
        stem_of(S->name, S->stem, sizeof S->stem);
        for (size_t j = 0; j < n; j++)
            if (j != k && !strcmp(secs[j].name, S->name)) {
                size_t len = strlen(S->stem);
                snprintf(S->stem + len, sizeof S->stem - len, "-%.8s", S->hash);
                break;
            }
        /* The lowest seed that every policy ran, else the lowest of the first. */
        const struct rdb_group *g0 = &r->groups[S->groups[0]];
        S->tl_seed = g0->runs[0].seed;
        for (size_t a = 0; a < g0->nruns; a++) {
            int all = 1;
            for (size_t gi = 1; gi < S->ngroups && all; gi++) {
                const struct rdb_group *g = &r->groups[S->groups[gi]];
                int found = 0;
                for (size_t b = 0; b < g->nruns && !found; b++)
                    found = g->runs[b].seed == g0->runs[a].seed;
                all = found;
            }
            if (all) {
                S->tl_seed = g0->runs[a].seed;
                break;
            }
        }
        section_scenario(S, R->r->path);
    }
    *out = secs;
    return n;
}

int report_write(const struct report_opts *o, size_t *ncharts, char *err, size_t n)
{
    struct rpt R = {.o = o, .err = err, .nerr = n};
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    R.maxpend = ncpu < 1 ? 1 : ncpu > RPT_MAX_GNUPLOTS ? RPT_MAX_GNUPLOTS : (int)ncpu;
    err[0] = 0;
    if (find_gnuplot(&R) != 0)
        return R.code;
    if (rdb_open(o->db, &R.r, err, n) != 0)
        return 2;
    if (R.r->nruns == 0) {
        fail(&R, 2, "results database '%s' has no runs (fill it with 'simrun run SCENARIO... --db %s')", o->db, o->db);
        rdb_close(R.r);
        return 2;
    }
    if (make_dirs(&R, o->out_dir) != 0 || check_terminals(&R) != 0) {
        rdb_close(R.r);
        return R.code;
    }
    char logp[RPT_MAX_PATH];
    snprintf(logp, sizeof logp, "%s/gnuplot.log", o->out_dir);
    unlink(logp);
    struct section *secs;
    size_t nsec = make_sections(&R, &secs);
    FILE *h = out_open(&R, "index.html.tmp", "w");
    if (h) {
        html_intro(&R, h, secs, nsec);
        for (size_t s = 0; s < nsec && !R.code; s++)
            write_section(&R, &secs[s], h);
        while (R.npend)
            chart_reap(&R); /* the first failure is the one reported */
        fprintf(h, "<p class=\"meta\">Charts: PNG (click for SVG), each with its data file and gnuplot script in "
                   "this folder. Schema of the database: docs/results.md; this page: docs/reports.md.</p>\n"
                   "</body></html>\n");
        if (out_close(&R, h, "index.html.tmp") == 0 && !R.code) {
            char from[RPT_MAX_PATH], to[RPT_MAX_PATH];
            snprintf(from, sizeof from, "%s/index.html.tmp", o->out_dir);
            snprintf(to, sizeof to, "%s/index.html", o->out_dir);
            if (rename(from, to) != 0)
                fail(&R, 3, "cannot write '%s': %s", to, strerror(errno));
        }
        if (R.code) {
            char tmp[RPT_MAX_PATH];
            snprintf(tmp, sizeof tmp, "%s/index.html.tmp", o->out_dir);
            unlink(tmp);
        }
    }
    for (size_t s = 0; s < nsec; s++) {
        free(secs[s].groups);
        free(secs[s].path_found);
        if (secs[s].scn)
            scenario_free(secs[s].scn);
    }
    free(secs);
    *ncharts = R.ncharts;
    rdb_close(R.r);
    return R.code;
}
