/* report.c: the comparison report's entry (see report.h; the files that
 * draw it share reports/report_int.h).
 *
 * The page is built in one pass over the scenarios of the database: the
 * database's groups are gathered into sections by scenario hash, then
 * html.c writes the page section by section while the charts are drawn in
 * the background (gnuplot.c).  index.html is written to a temporary name
 * and renamed at the end, so a failed report leaves the previous page in
 * place. */
#include "reports/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "reports/rdb.h"
#include "reports/report_int.h"
#include "sim/scenario.h"
#include "sim/util.h"

/* --- errors and files ------------------------------------------------------------------- */

int rpt_vfail(struct rpt *R, int code, const char *fmt, va_list ap)
{
    if (!R->code) {
        vsnprintf(R->err, R->nerr, fmt, ap);
        R->code = code;
    }
    return -1;
}

int rpt_fail(struct rpt *R, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rpt_vfail(R, code, fmt, ap);
    va_end(ap);
    return -1;
}

void rpt_stem(const char *s, char *b, size_t n)
{
    size_t k = 0;
    for (; *s && k + 1 < n; s++)
        b[k++] = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
                         *s == '_'
                     ? *s
                     : '_';
    b[k] = 0;
}

FILE *rpt_open(struct rpt *R, const char *name, const char *mode)
{
    char path[RPT_MAX_PATH];
    snprintf(path, sizeof path, "%s/%s", R->o->out_dir, name);
    FILE *f = fopen(path, mode);
    if (!f)
        rpt_fail(R, 3, "cannot write '%s': %s", path, strerror(errno));
    return f;
}

int rpt_close(struct rpt *R, FILE *f, const char *name)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return rpt_fail(R, 3, "cannot write '%s/%s'", R->o->out_dir, name);
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
            return rpt_fail(R, 2, "cannot create folder '%s': %s", p, strerror(errno));
        *c = '/';
    }
    if (mkdir(p, 0777) != 0 && errno != EEXIST)
        return rpt_fail(R, 2, "cannot create folder '%s': %s", p, strerror(errno));
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
        return rpt_fail(R, 2, "'%s' is not a folder", p);
    return 0;
}

/* --- sections ---------------------------------------------------------------------------------- */

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

/* Whether name is in the comma-separated list (a NULL list has every
 * name). */
static int in_list(const char *list, const char *name)
{
    if (!list)
        return 1;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && !strncmp(p, name, n))
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

/* Every name of a --scenario or --policy list must match some run: 0, or
 * -1 after rpt_fail naming the valid ones. */
static int check_list(struct rpt *R, const char *list, int policies, const char *what)
{
    if (!list)
        return 0;
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        int found = 0;
        for (size_t i = 0; i < R->r->ngroups && !found; i++) {
            const char *v = policies ? R->r->groups[i].policy : R->r->groups[i].scenario;
            found = strlen(v) == len && !strncmp(v, p, len);
        }
        if (!found) {
            char valid[600] = "";
            for (size_t i = 0; i < R->r->ngroups; i++) {
                const char *v = policies ? R->r->groups[i].policy : R->r->groups[i].scenario;
                if (!strstr(valid, v) && strlen(valid) + strlen(v) + 8 < sizeof valid)
                    snprintf(valid + strlen(valid), sizeof valid - strlen(valid), "%s%s", valid[0] ? ", " : "", v);
            }
            return rpt_fail(R, 2, "no %s '%.*s' in '%s' (valid: %s)", what, (int)len, p, R->r->path, valid);
        }
        p += len + (p[len] == ',');
    }
    return 0;
}

/* Groups the database's groups into sections by scenario hash, in file
 * order (only the scenarios and policies asked for), and picks their file
 * stems (unique) and timeline seeds. */
static size_t make_sections(struct rpt *R, struct section **out)
{
    struct rdb *r = R->r;
    struct section *secs = xcalloc(r->ngroups + 1, sizeof *secs);
    size_t n = 0;
    for (size_t i = 0; i < r->ngroups; i++) {
        const struct rdb_group *g = &r->groups[i];
        if (!in_list(R->o->scenarios, g->scenario) || !in_list(R->o->policies, g->policy))
            continue;
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
        rpt_stem(S->name, S->stem, sizeof S->stem);
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
    if (rpt_find_gnuplot(&R) != 0)
        return R.code;
    if (rdb_open(o->db, &R.r, err, n) != 0)
        return 2;
    if (R.r->nruns == 0) {
        rpt_fail(&R, 2, "results database '%s' has no runs (fill it with 'simrun run SCENARIO... --db %s')", o->db,
                 o->db);
        rdb_close(R.r);
        return 2;
    }
    if (check_list(&R, o->scenarios, 0, "scenario") != 0 || check_list(&R, o->policies, 1, "policy") != 0 ||
        make_dirs(&R, o->out_dir) != 0 || rpt_check_terminals(&R) != 0) {
        rdb_close(R.r);
        return R.code;
    }
    char logp[RPT_MAX_PATH];
    snprintf(logp, sizeof logp, "%s/gnuplot.log", o->out_dir);
    unlink(logp);
    struct section *secs;
    size_t nsec = make_sections(&R, &secs);
    FILE *h = rpt_open(&R, "index.html.tmp", "w");
    if (h) {
        rpt_html_intro(&R, h, secs, nsec);
        for (size_t s = 0; s < nsec && !R.code; s++)
            rpt_write_section(&R, &secs[s], h);
        while (R.npend)
            rpt_chart_reap(&R); /* the first failure is the one reported */
        rpt_html_outro(h);
        if (rpt_close(&R, h, "index.html.tmp") == 0 && !R.code) {
            char from[RPT_MAX_PATH], to[RPT_MAX_PATH];
            snprintf(from, sizeof from, "%s/index.html.tmp", o->out_dir);
            snprintf(to, sizeof to, "%s/index.html", o->out_dir);
            if (rename(from, to) != 0)
                rpt_fail(&R, 3, "cannot write '%s': %s", to, strerror(errno));
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
