/* cli_crashpoints.c: `simrun crashpoints` (see cli.h and
 * docs/crashpoints.md): a host crash injected just before and just after
 * every durable transition of a run, under each policy; a table of the
 * points grouped by the transition they hit, worst first; a scenario file
 * for every failing point (-o); every crash run in a results database
 * (--db).  Exits 1 when a point fails.
 *
 * The exploration itself is sim/crashpoints.c; this file resolves the
 * inputs, prints, writes the files and the database, all in this process
 * (the exploration's children write nothing but their pipes). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "reports/fmt.h"
#include "sim/cli.h"
#include "sim/crashpoints.h"
#include "sim/store.h"
#include "sim/syntax.h"
#include "sim/util.h"

/* Failing points listed without --all. */
#define CPX_LIST_MAX 20

struct cpx_opts {
    const char *path;
    const char *policies;
    int have_seed;
    uint64_t seed;
    int have_window;
    const char *window;            /* --window as given */
    int64_t from_us, to_us;
    uint64_t max;
    int64_t down_us;
    int jobs;
    const char *db;
    const char *out_dir;
    int rerun;
    int all;
    int shrink;
};

/* --- options ------------------------------------------------------------------------------- */

static int opt_arg(void *opts, const char *v)
{
    struct cpx_opts *o = opts;
    if (o->path)
        return cli_usage_error("one scenario at a time (a second: '%s')", v);
    o->path = v;
    return 0;
}

static int opt_seed(void *opts, const char *v)
{
    struct cpx_opts *o = opts;
    if (cli_parse_u64(v, &o->seed) || o->seed > (uint64_t)INT64_MAX)
        return cli_usage_error("bad seed '%s' (expected an integer 0..9223372036854775807)", v);
    o->have_seed = 1;
    return 0;
}

static int opt_window(void *opts, const char *v)
{
    struct cpx_opts *o = opts;
    const char *dots = strstr(v, "..");
    char a[64];
    if (!dots || (size_t)(dots - v) >= sizeof a)
        return cli_usage_error("bad window '%s' (expected A..B, durations like 1h..2h30m)", v);
    memcpy(a, v, (size_t)(dots - v));
    a[dots - v] = 0;
    if (scn_parse_duration(a, &o->from_us, NULL, 0) || scn_parse_duration(dots + 2, &o->to_us, NULL, 0) ||
        o->to_us <= o->from_us)
        return cli_usage_error("bad window '%s' (expected A..B with A < B, durations like 1h..2h30m)", v);
    o->have_window = 1;
    o->window = v;
    return 0;
}

static int opt_max(void *opts, const char *v)
{
    struct cpx_opts *o = opts;
    if (cli_parse_u64(v, &o->max) || o->max == 0 || o->max > 1000000)
        return cli_usage_error("bad --max '%s' (expected 1..1000000 crash points)", v);
    return 0;
}

static int opt_down(void *opts, const char *v)
{
    struct cpx_opts *o = opts;
    if (scn_parse_duration(v, &o->down_us, NULL, 0) || o->down_us <= 0)
        return cli_usage_error("bad --down '%s' (expected a duration like 5m)", v);
    return 0;
}

static int opt_jobs(void *opts, const char *v)
{
    struct cpx_opts *o = opts;
    uint64_t nj;
    if (cli_parse_u64(v, &nj) || nj < 1 || nj > CP_MAX_JOBS)
        return cli_usage_error("bad -j '%s' (expected 1..256 child processes)", v);
    o->jobs = (int)nj;
    return 0;
}

static const struct cli_option cpx_options[] = {
    CLI_STRING('p', "policies", "LIST", struct cpx_opts, policies,
               "comma-separated policies or variant names (default: every\n"
               "registered policy and the scenario's variants)"),
    CLI_CALLBACK(0, "seed", "N", opt_seed, "master seed (default: the scenario's)"),
    CLI_CALLBACK(0, "window", "A..B", opt_window,
                 "crash instants from A to B (default: the scenario's\n"
                 "'crashpoints' line, else the whole run)"),
    CLI_CALLBACK(0, "max", "N", opt_max, "explore the first N crash points only"),
    CLI_CALLBACK(0, "down", "D", opt_down,
                 "downtime of each injected crash (default: the 'crashpoints'\n"
                 "line's, else the scenario's first crash's, else 1m)"),
    CLI_CALLBACK('j', "jobs", "N", opt_jobs, "run N crash points at once (child processes)"),
    CLI_STRING(0, "db", "FILE", struct cpx_opts, db,
               "write the run without a crash and every crash run to this\n"
               "SQLite database (table crash_points marks the crash runs)"),
    CLI_STRING('o', "output", "DIR", struct cpx_opts, out_dir,
               "write a scenario file for every failing point into DIR"),
    CLI_FLAG(0, "rerun", struct cpx_opts, rerun,
             "simulate every point from the start instead of forking at it\n"
             "(the same results, slower: for benchmarks and checks)"),
    CLI_FLAG(0, "all", struct cpx_opts, all, "list every point, not only the failing ones"),
    CLI_FLAG(0, "shrink", struct cpx_opts, shrink,
             "with -o: shrink each failing point's scenario with 'simrun\n"
             "shrink' into NAME.min.scn beside it"),
    CLI_END,
};

static int cmd_crashpoints(int argc, char **argv);

const struct cli_command cli_cmd_crashpoints = {
    .name = "crashpoints",
    .args = "SCENARIO",
    .usage = "SCENARIO [options]",
    .summary = "crash the host at every durable transition; exit 1 if recovery fails",
    .description = "Runs the scenario once and finds every instant at which the engine or the\n"
                   "policy makes a durable transition (a run starts and reserves items, changes\n"
                   "phase, records its mutation, commits or fails; a job, schedule or delivery\n"
                   "row is written).  Then, for each, runs it with a host crash injected just\n"
                   "before and just after that transition, and measures recovery: work lost,\n"
                   "duplicated or applied twice beyond the run without the crash, handlers\n"
                   "stuck, recovery time.  The prefix up to each point is simulated once: the\n"
                   "process forks there.  Prints the points grouped by transition, worst\n"
                   "first; exits 1 if any point fails.  See docs/crashpoints.md.\n",
    .options = cpx_options,
    .arg = opt_arg,
    .run = cmd_crashpoints,
};

/* --- the table -------------------------------------------------------------------------- */

/* The points of one transition (handler template, what, side). */
struct tgroup {
    int64_t tmpl;                  /* handler template, -1 none */
    uint8_t kind, detail;
    enum cp_side side;
    size_t n, nfail, first_fail;   /* first_fail: its index + 1, 0 none */
    int64_t lost, dup, dbl, missed, rt_max;
    uint32_t stuck;
    int not_ok, never;
    int64_t first_us;
};

static int64_t tmpl_of(const struct cp_result *r, int32_t h)
{
    return h < 0 ? -1 : (int64_t)r->w.h[h].tmpl;
}

static struct tgroup *group_of(struct tgroup *g, size_t *ng, const struct cp_result *r, const struct cp_point *p)
{
    int64_t t = tmpl_of(r, p->tr.handler);
    for (size_t i = 0; i < *ng; i++)
        if (g[i].tmpl == t && g[i].kind == p->tr.kind && g[i].detail == p->tr.detail && g[i].side == p->side)
            return &g[i];
    g[*ng] = (struct tgroup){.tmpl = t, .kind = p->tr.kind, .detail = p->tr.detail, .side = p->side,
                             .first_us = p->t_us};
    return &g[(*ng)++];
}

#define MAXV(a, b) ((a) > (b) ? (a) : (b))

static struct tgroup *build_groups(const struct cp_result *r, size_t *ng)
{
    struct tgroup *g = xcalloc(r->npts ? r->npts : 1, sizeof *g);
    *ng = 0;
    for (size_t i = 0; i < r->npts; i++) {
        const struct cp_point *p = &r->pts[i];
        const struct cp_outcome *o = &p->out;
        struct tgroup *t = group_of(g, ng, r, p);
        t->n++;
        if (o->fail) {
            t->nfail++;
            if (!t->first_fail)
                t->first_fail = i + 1;
        }
        t->lost = MAXV(t->lost, o->lost);
        t->dup = MAXV(t->dup, o->duplicates);
        t->dbl = MAXV(t->dbl, o->double_effects);
        t->missed = MAXV(t->missed, o->missed);
        t->stuck = MAXV(t->stuck, o->stuck);
        t->not_ok |= !o->recovery_ok || !o->done;
        if (o->recovery_time_us < 0)
            t->never = 1;
        t->rt_max = MAXV(t->rt_max, o->recovery_time_us);
    }
    return g;
}

/* Worst first: failing, then double effects, lost, duplicates, stuck,
 * recovery not ok, never recovered, the longest recovery; then in order. */
static int cmp_group(const void *a, const void *b)
{
    const struct tgroup *x = a, *y = b;
#define BY(e) \
    if ((x->e) != (y->e)) \
        return (x->e) > (y->e) ? -1 : 1;
    BY(nfail > 0) BY(dbl) BY(lost) BY(dup) BY(stuck) BY(not_ok) BY(never) BY(rt_max) BY(nfail)
#undef BY
    if (x->first_us != y->first_us)
        return x->first_us < y->first_us ? -1 : 1;
    return x->side < y->side ? -1 : x->side > y->side;
}

static void group_name(const struct cp_result *r, const struct tgroup *g, char *buf, size_t n)
{
    char hn[160] = "-", what[64];
    if (g->tmpl >= 0)
        world_tmpl_name(&r->w, (uint32_t)g->tmpl, hn, sizeof hn);
    struct cp_transition t = {.kind = g->kind, .detail = g->detail};
    cp_transition_what(&t, what, sizeof what);
    snprintf(buf, n, "%s %s", g->tmpl >= 0 ? hn : "", what);
    if (g->tmpl < 0)
        memmove(buf, buf + 1, strlen(buf));
}

static void print_table(const struct cp_result *r)
{
    size_t ng;
    struct tgroup *g = build_groups(r, &ng);
    qsort(g, ng, sizeof *g, cmp_group);
    int w = 10;
    char name[256];
    for (size_t i = 0; i < ng; i++) {
        group_name(r, &g[i], name, sizeof name);
        if ((int)fmt_width(name) > w)
            w = (int)fmt_width(name);
    }
    printf("  %-*s  %-6s  %6s  %4s  %4s  %4s  %6s  %5s  %6s  %8s  %s\n", w, "transition", "side", "points", "fail",
           "lost", "dup", "double", "stuck", "missed", "recovery", "first failing");
    for (size_t i = 0; i < ng; i++) {
        const struct tgroup *t = &g[i];
        char rt[32], ff[64] = "-";
        if (t->never)
            snprintf(rt, sizeof rt, "never");
        else
            fmt_duration((double)t->rt_max, rt, sizeof rt);
        if (t->first_fail) {
            char at[48];
            sim_fmt_dur(r->pts[t->first_fail - 1].t_us, at, sizeof at);
            snprintf(ff, sizeof ff, "#%zu at %s", t->first_fail, at);
        }
        group_name(r, t, name, sizeof name);
        printf("  %-*s  %-6s  %6zu  %4zu  %4" PRId64 "  %4" PRId64 "  %6" PRId64 "  %5" PRIu32 "  %6" PRId64 "  %8s  %s\n",
               w, name, t->side == CP_BEFORE ? "before" : "after", t->n, t->nfail, t->lost, t->dup, t->dbl, t->stuck,
               t->missed, rt, ff);
    }
    free(g);
}

/* "double_effects 1, recovery not ok" */
static void outcome_text(const struct cp_result *r, const struct cp_outcome *o, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
#define ADD(...) k += (size_t)snprintf(buf + k, k < n ? n - k : 0, __VA_ARGS__)
    if (!o->done) {
        ADD("not measured: its process failed (exit status %d)", o->exit_status);
        return;
    }
    if (!o->crashed)
        ADD("%sthe crash did not happen", k ? ", " : "");
    if (o->lost)
        ADD("%slost %" PRId64, k ? ", " : "", o->lost);
    if (o->duplicates)
        ADD("%sduplicates %" PRId64, k ? ", " : "", o->duplicates);
    if (o->double_effects)
        ADD("%sdouble_effects %" PRId64, k ? ", " : "", o->double_effects);
    if (o->stuck)
        ADD("%sstuck %" PRIu32, k ? ", " : "", o->stuck);
    if (o->missed)
        ADD("%smissed %" PRId64, k ? ", " : "", o->missed);
    if (o->crashed && o->recovery_time_us < 0) {
        ADD("%snever recovered", k ? ", " : "");
    } else if (o->crashed && o->recovery_time_us > r->scn->recovery_bound_us) {
        char t[48], b[48];
        sim_fmt_dur(o->recovery_time_us, t, sizeof t);
        sim_fmt_dur(r->scn->recovery_bound_us, b, sizeof b);
        ADD("%srecovery took %s (bound %s)", k ? ", " : "", t, b);
    }
    if (!o->recovery_ok)
        ADD("%srecovery not ok", k ? ", " : "");
    if (o->status != SIM_OK)
        ADD("%s%s", k ? ", " : "", sim_status_name(o->status));
    if (!k)
        ADD("ok");
#undef ADD
}

/* --- one policy ------------------------------------------------------------------------------ */

struct cpx {
    const struct cpx_opts *o;
    const struct scenario *s;
    char *text;                    /* the scenario file, for -o and --db */
    size_t len;
    struct store *st;
    size_t npoints, nfail;
};

static int64_t wall_us(void)
{
    /* For the time the exploration took; it never reaches a simulation. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The exploration's settings: the command line (o; NULL for check), else
 * the scenario's crashpoints line, else the defaults. */
static void settings(const struct scenario *s, const struct cpx_opts *o, uint64_t seed, struct cp_opts *co)
{
    const struct crashpoints_def *d = &s->crashpoints;
    *co = (struct cp_opts){.seed = seed, .from_us = 0, .to_us = SIM_NEVER, .jobs = 1};
    if (d->line) {
        co->from_us = d->from_us;
        co->to_us = d->to_us;
        co->max = d->max;
        co->down_us = d->down_us;
    }
    if (o) {
        co->jobs = o->jobs ? o->jobs : 1;
        co->rerun = o->rerun;
        co->keep_results = o->db != NULL;
    }
    if (o && o->have_window) {
        co->from_us = o->from_us;
        co->to_us = o->to_us;
    }
    if (o && o->max)
        co->max = o->max;
    if (o && o->down_us)
        co->down_us = o->down_us;
    if (!co->down_us)
        co->down_us = cp_default_down(s);
}

/* A file name part: letters, digits, '-' and '_' kept, the rest '_'. */
static void stem(const char *s, char *b, size_t n)
{
    size_t k = 0;
    for (; *s && k + 1 < n; s++)
        b[k++] = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
                         *s == '_'
                     ? *s
                     : '_';
    b[k] = 0;
}

/* The expect line that point p violates and the run without the crash
 * holds: the first of double effects, lost, duplicates, stuck beyond the
 * baseline's, then recovery_ok; "" when none says it (the run broke, or
 * the baseline does not recover either).  With it the point's scenario
 * fails `simrun check` by itself, and `simrun shrink --line` keeps it. */
static void failure_expect(const struct cp_result *r, const char *label, const struct cp_point *p, char *buf,
                           size_t n)
{
    const struct checker_result *b = &r->base.ck;
    const struct cp_outcome *o = &p->out;
    buf[0] = 0;
    if (!o->done)
        return;
    if (o->double_effects > 0)
        snprintf(buf, n, "expect %s double_effects <= %" PRIu64, label, b->total.double_effects);
    else if (o->lost > 0)
        snprintf(buf, n, "expect %s lost <= %" PRIu64, label, b->total.lost);
    else if (o->duplicates > 0)
        snprintf(buf, n, "expect %s duplicates <= %" PRIu64, label, b->total.duplicates);
    else if (o->stuck > 0)
        snprintf(buf, n, "expect %s stuck <= %" PRIu64, label, b->stuck);
    else if (!o->recovery_ok && b->recovery_ok)
        snprintf(buf, n, "expect %s recovery_ok == true", label);
}

/* Writes the scenario of failing point p into -o DIR: the original, a
 * comment, the crash line and the expect line it fails (if any).  Its path
 * in path; *expect_line gets the expect line's number (0 none). */
static int write_repro(struct cpx *cx, const struct cp_result *r, const struct cli_target *t, uint64_t seed,
                       const struct cp_point *p, char *path, size_t pn, int *expect_line)
{
    char sn[96], ln[96], line[1200], what[300], out[300], comment[2400], ex[300];
    stem(cx->s->name, sn, sizeof sn);
    stem(t->label, ln, sizeof ln);
    int dl = (int)strlen(cx->o->out_dir); /* "-o crashes/" writes crashes/x.scn, not crashes//x.scn */
    while (dl > 1 && cx->o->out_dir[dl - 1] == '/')
        dl--;
    snprintf(path, pn, "%.*s/%s-%s-%03" PRIu32 ".scn", dl, cx->o->out_dir, sn, ln, p->no);
    cp_point_line(r, p, r->down_us, line, 512);
    cp_point_text(r, p, what, sizeof what);
    outcome_text(r, &p->out, out, sizeof out);
    failure_expect(r, t->label, p, ex, sizeof ex);
    snprintf(comment, sizeof comment,
             "\n# simrun crashpoints: point %" PRIu32 " of %zu under %s, seed %" PRIu64 ": the host crashes\n"
             "# %s: %s.\n# Reproduce: simrun run %s -p %s --seed %" PRIu64 "%s",
             p->no, r->npts, t->label, seed, what, out, path, t->label, seed,
             ex[0] ? "\n# The crash line, then the expect line it fails (the run without it holds it)." : "");
    if (ex[0]) {
        size_t k = strlen(line);
        snprintf(line + k, sizeof line - k, "\n%s", ex);
    }
    size_t n;
    char *buf = cp_scenario_with(cx->text, cx->len, comment, line, &n);
    *expect_line = 0;
    if (ex[0])
        for (size_t i = 0; i < n; i++)
            *expect_line += buf[i] == '\n';
    FILE *f = fopen(path, "w");
    int bad = !f || fwrite(buf, 1, n, f) != n;
    if (f && fclose(f) != 0)
        bad = 1;
    free(buf);
    if (bad) {
        fprintf(stderr, "%s: error: cannot write '%s': %s\n", cli_prog, path, strerror(errno));
        return 3;
    }
    return 0;
}

/* `simrun shrink`, when this build has it; NULL otherwise. */
static const struct cli_command *shrink_command(void)
{
    for (int i = 0; cli_commands[i]; i++)
        if (!strcmp(cli_commands[i]->name, "shrink"))
            return cli_commands[i];
    return NULL;
}

/* Shrinks the scenario of a failing point at path into path's stem +
 * ".min.scn" (min): `simrun shrink PATH -o MIN -p LABEL --seed N [--line
 * L] -q` in a child process, whose standard output (the summary) is
 * dropped.  Returns the command's exit status (0: shrunk). */
static int shrink_point(const char *path, const char *label, uint64_t seed, int line, char *min, size_t mn)
{
    const struct cli_command *c = shrink_command();
    size_t pl = strlen(path);
    snprintf(min, mn, "%.*s.min.scn", (int)(pl > 4 ? pl - 4 : pl), path);
    if (!c)
        return 2;
    char sseed[32], sline[32];
    snprintf(sseed, sizeof sseed, "%" PRIu64, seed);
    snprintf(sline, sizeof sline, "%d", line);
    char *argv[] = {(char *)path, "-o", min, "-p", (char *)label, "--seed", sseed, "-q", "--line", sline, NULL};
    int argc = line > 0 ? 10 : 8;
    argv[argc] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return 3;
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2(fd, STDOUT_FILENO);
        int rc = c->run(argc, argv);
        fflush(stdout);
        fflush(stderr);
        _exit(rc);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return 3;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* Writes point p's scenario (and, with --shrink, shrinks it); the line
 * that says where in note. */
static int repro_files(struct cpx *cx, const struct cp_result *r, const struct cli_target *t, uint64_t seed,
                       const struct cp_point *p, char *note, size_t nn)
{
    char path[1200], min[1300];
    int eline;
    int rc = write_repro(cx, r, t, seed, p, path, sizeof path, &eline);
    if (rc)
        return rc;
    int k = snprintf(note, nn, "  -> %s", path);
    if (cx->o->shrink) {
        int src = shrink_point(path, t->label, seed, eline, min, sizeof min);
        if (src == 0)
            snprintf(note + k, nn - (size_t)k, "\n          shrunk -> %s", min);
        else
            snprintf(note + k, nn - (size_t)k, "\n          not shrunk (simrun shrink exited %d)", src);
    }
    return 0;
}

static void print_points(struct cpx *cx, const struct cp_result *r, const struct cli_target *t, uint64_t seed,
                         int *rc)
{
    size_t shown = 0;
    if (r->nfail || cx->o->all)
        printf("  %s:\n", cx->o->all ? "points" : "failing points");
    for (size_t i = 0; i < r->npts; i++) {
        const struct cp_point *p = &r->pts[i];
        char at[48], what[300], out[300], line[512], note[2600] = "";
        if (p->out.fail && cx->o->out_dir && *rc == 0)
            *rc = repro_files(cx, r, t, seed, p, note, sizeof note);
        if (!(p->out.fail || cx->o->all) || (++shown > CPX_LIST_MAX && !cx->o->all))
            continue;
        sim_fmt_dur(p->t_us, at, sizeof at);
        cp_point_text(r, p, what, sizeof what);
        outcome_text(r, &p->out, out, sizeof out);
        cp_point_line(r, p, r->down_us, line, sizeof line);
        printf("  %s #%-4" PRIu32 " %s  %s: %s\n", p->out.fail ? "FAIL" : "ok  ", p->no, at, what, out);
        if (p->out.fail)
            printf("          %s%s\n", line, note);
    }
    if (shown > CPX_LIST_MAX && !cx->o->all)
        printf("  ... and %zu more failing points (--all lists them)\n", shown - CPX_LIST_MAX);
}

/* Writes the baseline and every crash run to the store. */
static int store_points(struct cpx *cx, const struct cp_result *r, const struct cli_target *t, uint64_t seed)
{
    char err[512];
    int64_t base_id;
    struct store_run sr = {.scn = cx->s, .policy = t->label, .base_policy = t->ops->name, .params = t->params_text,
                           .seed = seed, .version = SIMRUN_VERSION, .res = &r->base};
    if (store_write_run(cx->st, &sr, &base_id, err, sizeof err) != 0)
        goto fail;
    for (size_t i = 0; i < r->npts; i++) {
        const struct cp_point *p = &r->pts[i];
        if (!p->res)
            continue;
        char line[512], what[64], hn[160];
        cp_point_line(r, p, r->down_us, line, sizeof line);
        cp_transition_what(&p->tr, what, sizeof what);
        cp_handler_name(r, p->tr.handler, hn, sizeof hn);
        size_t n;
        char *buf = cp_scenario_with(cx->text, cx->len, "", line, &n);
        struct scenario *ps;
        struct diag d;
        int prc = scenario_parse_buf(cx->s->path, buf, n, &ps, &d);
        free(buf);
        if (prc != 0) {
            snprintf(err, sizeof err, "the crash line does not parse: %.400s", d.msg);
            goto fail;
        }
        struct store_crash_point scp = {.baseline_run_id = base_id, .point = p->no, .at_us = p->t_us,
                                        .side = p->side == CP_BEFORE ? "before" : "after", .transition = what,
                                        .handler = p->tr.handler >= 0 ? hn : "", .line = line, .fail = p->out.fail};
        struct store_run cr = sr;
        cr.scn = ps;
        cr.res = p->res;
        cr.crash_point = &scp;
        int64_t id;
        int wrc = store_write_run(cx->st, &cr, &id, err, sizeof err);
        scenario_free(ps);
        if (wrc != 0)
            goto fail;
    }
    return 0;
fail:
    fprintf(stderr, "%s: error: %s\n", cli_prog, err);
    return 3;
}

/* Explores the scenario under the policy (or variant) label. */
static int explore_one(struct cpx *cx, const char *label)
{
    struct cli_target t;
    char msg[512];
    if (cli_resolve_target(cx->s, label, NULL, 0, &t, msg, sizeof msg)) {
        fprintf(stderr, "%s: error: %s: %s\n", cli_prog, cx->s->path, msg);
        return 2;
    }
    uint64_t seed = cx->o->have_seed ? cx->o->seed : cx->s->seed;
    struct cp_opts co;
    settings(cx->s, cx->o, seed, &co);
    struct cp_result r;
    int64_t t0 = wall_us();
    if (cp_explore(cx->s, t.ops, &t.ps, &co, &r, msg, sizeof msg) != 0) {
        fprintf(stderr, "%s: error: %s\n", cli_prog, msg);
        cp_result_free(&r);
        return 3;
    }
    double secs = (double)(wall_us() - t0) / 1e6;
    char from[48], to[48] = "the end", down[48];
    sim_fmt_dur(co.from_us, from, sizeof from);
    if (co.to_us != SIM_NEVER)
        sim_fmt_dur(co.to_us, to, sizeof to);
    fmt_duration((double)co.down_us, down, sizeof down);
    printf("%s (%s) under %s, seed %" PRIu64 ": %zu crash points at %" PRIu64 " transitions from %s to %s%s, "
           "down %s, %.2f s%s\n",
           cx->s->name, cx->s->path, t.label, seed, r.npts, r.ntransitions, from, to,
           r.truncated ? " (cut by --max)" : "", down, secs, co.rerun ? " (every point from the start)" : "");
    if (r.npts)
        print_table(&r);
    int rc = 0;
    print_points(cx, &r, &t, seed, &rc);
    printf("  %s: %zu points, %zu failing\n\n", t.label, r.npts, r.nfail);
    if (rc == 0 && cx->st)
        rc = store_points(cx, &r, &t, seed);
    cx->npoints += r.npts;
    cx->nfail += r.nfail;
    cp_result_free(&r);
    return rc;
}

/* mkdir -p. */
static int make_dirs(const char *dir)
{
    char p[1024];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
        return -1;
    for (char *c = p + 1;; c++) {
        if (*c != '/' && *c)
            continue;
        char was = *c;
        *c = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            return -1;
        if (!was)
            return 0;
        *c = was;
    }
}

static int cmd_crashpoints(int argc, char **argv)
{
    struct cpx_opts o = {0};
    int rc = cli_parse(&cli_cmd_crashpoints, argc, argv, &o);
    if (rc)
        return rc;
    if (!o.path)
        return cli_usage_error("%s", "no scenario given");
    if (o.shrink && !o.out_dir)
        return cli_usage_error("%s", "--shrink shrinks the scenario files of -o DIR: give -o");
    if (o.shrink && !shrink_command())
        return cli_usage_error("%s", "--shrink needs 'simrun shrink', which this build does not have");
    if ((rc = cli_check_policy_list(o.policies)) || (rc = cli_check_db_path("--db", o.db)))
        return rc;
    struct scenario *s;
    struct diag d;
    if (cli_load_scenario(o.path, &s, &d) != 0) {
        diag_print(&d);
        return 2;
    }
    /* A window that starts at or after the end of the drain holds no
     * instant of the run: nothing would be explored. */
    if (o.have_window && o.from_us >= s->horizon_us + s->drain_us) {
        char end[32], hz[32], dr[32];
        scn_fmt_duration(s->horizon_us + s->drain_us, end, sizeof end);
        scn_fmt_duration(s->horizon_us, hz, sizeof hz);
        scn_fmt_duration(s->drain_us, dr, sizeof dr);
        fprintf(stderr,
                "%s: error: %s: --window %s lies outside the run, which spans 0..%s (the horizon %s and the drain %s, "
                "from the start)\n",
                cli_prog, s->path, o.window, end, hz, dr);
        scenario_free(s);
        return 2;
    }
    const char *labels[CLI_MAX_LABELS];
    char *list = NULL;
    int nl = 0;
    if (o.policies)
        rc = cli_policy_names(o.policies, &list, labels, CLI_MAX_LABELS, &nl);
    else
        nl = cli_all_labels(s, labels, CLI_MAX_LABELS);
    struct cpx cx = {.o = &o, .s = s};
    char msg[512];
    for (int i = 0; i < nl && rc == 0; i++) {
        struct cli_target t;
        if (cli_resolve_target(s, labels[i], NULL, 0, &t, msg, sizeof msg)) {
            fprintf(stderr, "%s: error: %s: %s\n", cli_prog, s->path, msg);
            rc = 2;
        }
    }
    if (rc == 0 && (o.out_dir || o.db) && cp_scenario_text(s, &cx.text, &cx.len, msg, sizeof msg) != 0) {
        fprintf(stderr, "%s: error: %s\n", cli_prog, msg);
        rc = 2;
    }
    if (rc == 0 && o.out_dir && make_dirs(o.out_dir) != 0) {
        fprintf(stderr, "%s: error: cannot create '%s': %s\n", cli_prog, o.out_dir, strerror(errno));
        rc = 2;
    }
    if (rc == 0)
        rc = cli_open_store(o.db, &cx.st);
    for (int i = 0; i < nl && rc == 0; i++)
        rc = explore_one(&cx, labels[i]);
    store_close(cx.st);
    free(cx.text);
    free(list);
    scenario_free(s);
    if (rc)
        return rc;
    printf("crashpoints: %zu points, %zu failing\n", cx.npoints, cx.nfail);
    return cx.nfail ? 1 : 0;
}

/* --- simrun check: `expect P crashpoints METRIC OP VALUE` ------------------------------------ */

/* Explorations made for check, per target label and seed. */
struct cp_cached {
    char label[128];
    uint64_t seed;
    int ok;                        /* 0: the exploration failed (err) */
    char err[512];
    struct cp_result r;
};

struct cli_cp_cache {
    struct cp_cached *e;
    size_t n, cap;
};

struct cli_cp_cache *cli_cp_cache_new(void)
{
    return xcalloc(1, sizeof(struct cli_cp_cache));
}

void cli_cp_cache_free(struct cli_cp_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        if (c->e[i].ok)
            cp_result_free(&c->e[i].r);
    free(c->e);
    free(c);
}

/* The exploration of s under t with seed, made on first use. */
static const struct cp_cached *explored(struct cli_cp_cache *c, const struct scenario *s, const struct cli_target *t,
                                        uint64_t seed)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->e[i].seed == seed && !strcmp(c->e[i].label, t->label))
            return &c->e[i];
    c->e = xgrow(c->e, sizeof *c->e, &c->cap, c->n + 1);
    struct cp_cached *x = &c->e[c->n++];
    memset(x, 0, sizeof *x);
    snprintf(x->label, sizeof x->label, "%s", t->label);
    x->seed = seed;
    struct cp_opts co;
    settings(s, NULL, seed, &co);
    x->ok = cp_explore(s, t->ops, &t->ps, &co, &x->r, x->err, sizeof x->err) == 0;
    if (!x->ok)
        cp_result_free(&x->r);
    return x;
}

/* Evaluates a per-point line e over every point of r: returns the first
 * point that violates it (or was not measured), NULL when it holds at
 * every point; *v the value there, or when it holds the most extreme value
 * on the side the operator bounds (the largest for < and <=). */
static const struct cp_point *eval_points(const struct cp_result *r, const struct expect_def *e, int m, double *v)
{
    *v = NAN;
    for (size_t i = 0; i < r->npts; i++) {
        const struct cp_point *p = &r->pts[i];
        double pv = p->out.done ? cp_point_metric(r, p, m) : NAN;
        if (!p->out.done || !cli_expect_compare(pv, e->op, e->value)) {
            *v = pv;
            return p;
        }
        int lower = e->op == OP_GT || e->op == OP_GE;
        if (isnan(*v) || (lower ? pv < *v : pv > *v))
            *v = pv;
    }
    return NULL;
}

/* Judges e on one exploration r: 1 holds, 0 fails; what and *v as for
 * cli_check_crashpoint_line. */
static int judge_exploration(const struct cp_result *r, const struct expect_def *e, double *v, char *what, size_t wn)
{
    int m = cp_metric_find(e->metric);
    SIM_ASSERT(m >= 0); /* checked by the parser (refs_builtin) */
    int over = cp_metric_table[m].over_all;
    const struct cp_point *first = NULL;
    if (over)
        *v = cp_point_metric(r, NULL, m);
    else
        first = eval_points(r, e, m, v);
    int ok = over ? cli_expect_compare(*v, e->op, e->value) : first == NULL;
    char val[48];
    const struct metric_info mi = {.name = e->metric, .is_duration = cp_metric_table[m].is_duration,
                                   .is_bool = cp_metric_table[m].is_bool};
    if (isnan(*v))
        snprintf(val, sizeof val, "nothing (its process failed)");
    else
        fmt_metric(&mi, *v, val, sizeof val);
    if (over || !first) {
        snprintf(what, wn, "%s %s over %zu crash points", over ? "measured" : "worst", val, r->npts);
    } else {
        char at[48], pt[300], line[512];
        sim_fmt_dur(first->t_us, at, sizeof at);
        cp_point_text(r, first, pt, sizeof pt);
        cp_point_line(r, first, r->down_us, line, sizeof line);
        snprintf(what, wn, "measured %s at crash point %" PRIu32 " of %zu, %s %s: %s", val, first->no, r->npts, at,
                 pt, line);
    }
    return ok;
}

int cli_check_crashpoint_line(struct cli_cp_cache *c, const struct scenario *s, const struct cli_target *t,
                              const struct expect_def *e, uint64_t lo, uint64_t n, double *v, char *what,
                              size_t wn)
{
    double worst = NAN;
    size_t npts = 0;
    int lower = e->op == OP_GT || e->op == OP_GE;
    for (uint64_t k = 0; k < n; k++) {
        const struct cp_cached *x = explored(c, s, t, lo + k);
        if (!x->ok) {
            *v = NAN;
            snprintf(what, wn, "%sno exploration: %s", n > 1 ? "seed " : "", x->err);
            return 0;
        }
        char one[1400];
        int ok = judge_exploration(&x->r, e, v, one, sizeof one);
        if (!ok || n == 1) {
            if (n > 1)
                snprintf(what, wn, "seed %" PRIu64 ": %s", lo + k, one);
            else
                snprintf(what, wn, "%s", one);
            return ok;
        }
        if (isnan(worst) || (lower ? *v < worst : *v > worst))
            worst = *v;
        npts += x->r.npts;
    }
    *v = worst;
    int m = cp_metric_find(e->metric);
    const struct metric_info mi = {.name = e->metric, .is_duration = cp_metric_table[m].is_duration,
                                   .is_bool = cp_metric_table[m].is_bool};
    char val[48];
    fmt_metric(&mi, worst, val, sizeof val);
    snprintf(what, wn, "%s %s over %zu crash points of seeds %" PRIu64 "..%" PRIu64,
             cp_metric_table[m].over_all ? "most extreme" : "worst", val, npts, lo, lo + n - 1);
    return 1;
}
