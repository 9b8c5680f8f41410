/* cli_shrink.c: `simrun shrink FILE.scn -o MIN.scn` (see cli.h).
 *
 * Finds the scenario's failure — a simulation that ends the process (an
 * internal error, exit 3 of `run`, or a sanitizer report), then a livelock,
 * then a failing expect line — under one policy label and seed, and hands
 * the text to the delta debugger (sim/shrink.h) with a test that says
 * whether a candidate shows the same failure: it parses (with the
 * reference checks the other commands use), and simulated in a child
 * process (cli_probe) under the same label and seed it fails the same way:
 * the same expect line fails with the same run status, or the run is a
 * livelock with the same message (numbers aside), or the process ends with
 * the same reason.  A candidate that would need more than four times the
 * original's events (and 10 million) is not the same failure.
 *
 * The result keeps the seed: a `seed` line with the seed the failure was
 * found with replaces any other, so `simrun check MIN.scn` (or run) shows
 * the failure again. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/cli.h"
#include "sim/refs.h"
#include "sim/shrink.h"
#include "sim/sim.h"
#include "sim/util.h"

/* --- options ---------------------------------------------------------------------------------- */

struct shrink_cli {
    const char *path, *out, *policies;
    int have_seed, have_line, quiet;
    uint64_t seed, line, max_events, timeout;
};

static int opt_path(void *opts, const char *a)
{
    struct shrink_cli *o = opts;
    if (o->path)
        return cli_usage_error("shrink takes one scenario, got a second: '%s'", a);
    o->path = a;
    return 0;
}

static int opt_u64(const char *what, const char *v, uint64_t *out)
{
    char fmt[96];
    snprintf(fmt, sizeof fmt, "bad %s '%%s' (expected an integer)", what);
    if (cli_parse_u64(v, out) || *out > (uint64_t)INT64_MAX)
        return cli_usage_error(fmt, v);
    return 0;
}

static int opt_seed(void *opts, const char *v)
{
    struct shrink_cli *o = opts;
    o->have_seed = 1;
    return opt_u64("seed", v, &o->seed);
}

static int opt_line(void *opts, const char *v)
{
    struct shrink_cli *o = opts;
    o->have_line = 1;
    return opt_u64("--line", v, &o->line);
}

static int opt_max_events(void *opts, const char *v)
{
    struct shrink_cli *o = opts;
    if (opt_u64("--max-events", v, &o->max_events))
        return 2;
    return o->max_events ? 0 : cli_usage_error("bad --max-events '%s' (expected at least 1)", v);
}

static int opt_timeout(void *opts, const char *v)
{
    struct shrink_cli *o = opts;
    if (opt_u64("--timeout", v, &o->timeout))
        return 2;
    return o->timeout && o->timeout <= 86400 ? 0 : cli_usage_error("bad --timeout '%s' (expected 1..86400 seconds)", v);
}

static const struct cli_option shrink_options[] = {
    CLI_STRING('o', "out", "FILE", struct shrink_cli, out, "write the shrunk scenario here ('-': standard output)"),
    CLI_STRING('p', "policies", "LIST", struct shrink_cli, policies,
               "look for the failure under these policies or variants only\n"
               "(default: every policy and the scenario's variants)"),
    CLI_CALLBACK(0, "seed", "N", opt_seed, "the seed (default: the scenario's)"),
    CLI_CALLBACK(0, "line", "N", opt_line, "keep the expect line at line N failing (default: the\nfirst failure found)"),
    CLI_CALLBACK(0, "max-events", "N", opt_max_events, "stop a simulation after N events (default 4000000000)"),
    CLI_CALLBACK(0, "timeout", "S", opt_timeout,
                 "a simulation with no result after S seconds of wall time\nfails that way (default 300)"),
    CLI_FLAG('q', "quiet", struct shrink_cli, quiet, "print the summary only, not each step"),
    CLI_END,
};

static int cmd_shrink(int argc, char **argv);

const struct cli_command cli_cmd_shrink = {
    .name = "shrink",
    .args = "SCENARIO -o MIN",
    .usage = "SCENARIO -o MIN.scn [options]",
    .summary = "shrink a failing scenario to a small one that fails the same way",
    .description = "Finds the scenario's failure under one policy and seed: a simulation that\n"
                   "ends in an internal error (exit 3 of run), else a livelock, else a failing\n"
                   "expect line.  Then removes lines, workflows and handlers, lowers counts,\n"
                   "rates and 'x N', shortens horizons, durations and crash instants, as long\n"
                   "as the result fails the same way (the same expect line, policy and seed),\n"
                   "prints each step and writes the result, with its seed, to MIN.scn.\n"
                   "Deterministic.  Exits 2 if the scenario does not fail.\n",
    .options = shrink_options,
    .arg = opt_path,
    .run = cmd_shrink,
};

/* --- the failure ------------------------------------------------------------------------------ */

const char *cli_failure_kind_name(enum cli_failure_kind k)
{
    switch (k) {
    case CLI_FAIL_CRASH: return "the simulation ends the process";
    case CLI_FAIL_LIVELOCK: return "livelock";
    case CLI_FAIL_EXPECT: return "an expect line fails";
    }
    return "?";
}

/* Copies s without its words that start with a digit (counts, instants):
 * two livelock messages of one failure compare equal. */
static void no_numbers(const char *s, char *out, size_t n)
{
    size_t o = 0;
    int skip = 0;
    for (const char *c = s; *c && o + 1 < n; c++) {
        if (c == s || c[-1] == ' ')
            skip = *c >= '0' && *c <= '9';
        if (!skip)
            out[o++] = *c;
    }
    out[o] = 0;
}

/* Whether the probe p of a candidate s shows failure f. */
static int same_failure(const struct cli_failure *f, const struct scenario *s, const struct cli_probe *p)
{
    if (f->kind == CLI_FAIL_CRASH)
        return p->crashed && !strcmp(p->crash_msg, f->reason);
    if (p->crashed || (f->max_events && p->status == SIM_EVENT_LIMIT && f->status != SIM_EVENT_LIMIT))
        return 0;
    if (f->kind == CLI_FAIL_LIVELOCK) {
        char m[256];
        no_numbers(p->status_msg, m, sizeof m);
        return p->status == SIM_LIVELOCK && !strcmp(m, f->reason);
    }
    if (p->status != f->status)
        return 0;
    for (uint32_t e = 0; e < p->nexpects; e++) {
        char t[4200];
        shrink_norm(s->expects[e].text, t, sizeof t);
        if (!strcmp(t, f->expect) && p->expect[e].applies && !p->expect[e].ok)
            return 1;
    }
    return 0;
}

int cli_failure_test(void *ctx, const char *text, size_t len)
{
    struct cli_failure *f = ctx;
    struct scenario *s;
    struct diag d;
    if (scenario_parse_buf_ex(f->path, text, len, &refs_builtin, &s, &d) != 0) {
        f->unparsed++;
        return 0;
    }
    struct cli_target t;
    char msg[512];
    int ok = 0;
    if (cli_resolve_target(s, f->label, NULL, 0, &t, msg, sizeof msg) == 0) {
        struct cli_probe *p = xmalloc(sizeof *p);
        uint64_t cap = f->events * 4 > 10000000 ? f->events * 4 : 10000000;
        uint64_t max = f->max_events && f->max_events < cap ? f->max_events : cap;
        if (cli_probe(s, &t, f->seed, max, f->timeout_s, p, msg, sizeof msg) == 0)
            ok = same_failure(f, s, p);
        free(p);
    } else {
        f->unparsed++;
    }
    scenario_free(s);
    return ok;
}

void cli_failure_describe(const struct cli_failure *f, char *b, size_t n)
{
    if (f->kind == CLI_FAIL_EXPECT)
        snprintf(b, n, "under %s, seed %" PRIu64 ": '%s' fails (measured %g)%s%s", f->label, f->seed, f->expect,
                 f->measured, f->status != SIM_OK ? ", the run ending as " : "",
                 f->status != SIM_OK ? sim_status_name((enum sim_status)f->status) : "");
    else if (f->kind == CLI_FAIL_LIVELOCK)
        snprintf(b, n, "under %s, seed %" PRIu64 ": %s", f->label, f->seed, f->status_msg);
    else
        snprintf(b, n, "under %s, seed %" PRIu64 ": %s: %s", f->label, f->seed, cli_failure_kind_name(f->kind),
                 f->reason);
}

/* The failure of label under probe p, of the kind asked (expect: the
 * first failing line, or the one at line `line` if > 0).  1 if found. */
static int failure_of(const struct scenario *s, const char *label, const struct cli_probe *p,
                      enum cli_failure_kind kind, int line, struct cli_failure *f)
{
    if (kind == CLI_FAIL_CRASH && !p->crashed)
        return 0;
    if (kind != CLI_FAIL_CRASH && (p->crashed || (kind == CLI_FAIL_LIVELOCK && p->status != SIM_LIVELOCK)))
        return 0;
    snprintf(f->label, sizeof f->label, "%s", label);
    f->kind = kind;
    f->status = p->status;
    f->events = p->events;
    snprintf(f->status_msg, sizeof f->status_msg, "%s", p->status_msg);
    if (kind == CLI_FAIL_CRASH) {
        snprintf(f->reason, sizeof f->reason, "%s", p->crash_msg);
        return 1;
    }
    if (kind == CLI_FAIL_LIVELOCK) {
        no_numbers(p->status_msg, f->reason, sizeof f->reason);
        return 1;
    }
    for (uint32_t e = 0; e < p->nexpects; e++) {
        if (!p->expect[e].applies || p->expect[e].ok || (line > 0 && s->expects[e].line != line))
            continue;
        shrink_norm(s->expects[e].text, f->expect, sizeof f->expect);
        f->measured = p->expect[e].measured;
        return 1;
    }
    return 0;
}

/* Simulates s under each label and picks the failure: a crash first, then
 * a livelock, then a failing expect line, each in label order.  0 with
 * *f, 1 when nothing fails, or an exit status after printing why. */
static int find_failure(const struct shrink_cli *o, const struct scenario *s, struct cli_failure *f)
{
    const char *labels[CLI_MAX_LABELS];
    char *polbuf = NULL;
    int nl = 0, rc = 0;
    if (o->policies)
        rc = cli_policy_names(o->policies, &polbuf, labels, CLI_MAX_LABELS, &nl);
    else
        nl = cli_all_labels(s, labels, CLI_MAX_LABELS);
    struct cli_probe *p = xcalloc((size_t)nl + 1, sizeof *p);
    for (int i = 0; i < nl && !rc; i++) {
        struct cli_target t;
        char msg[512];
        if (cli_resolve_target(s, labels[i], NULL, 0, &t, msg, sizeof msg)) {
            fprintf(stderr, "%s: error: %s: %s\n", cli_prog, s->path, msg);
            rc = 2;
        } else if (cli_probe(s, &t, f->seed, o->max_events, f->timeout_s, &p[i], msg, sizeof msg)) {
            fprintf(stderr, "%s: error: %s\n", cli_prog, msg);
            rc = 3;
        }
    }
    int found = 0;
    for (int k = CLI_FAIL_CRASH; k <= CLI_FAIL_EXPECT && !rc && !found; k++)
        for (int i = 0; i < nl && !found; i++)
            found = failure_of(s, labels[i], &p[i], (enum cli_failure_kind)k, o->have_line ? (int)o->line : 0, f);
    free(p);
    free(polbuf);
    return rc ? rc : !found;
}

/* --- input and output ---------------------------------------------------------------------------- */

/* The scenario's bytes (a file, or standard input for "-"). */
static int read_text(const char *path, char **buf, size_t *len)
{
    FILE *in = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!in) {
        fprintf(stderr, "%s: error: %s: cannot read the scenario: %s\n", cli_prog, path, strerror(errno));
        return 2;
    }
    size_t cap = 65536, n = 0;
    char *b = xmalloc(cap);
    size_t r;
    while ((r = fread(b + n, 1, cap - n, in)) > 0) {
        n += r;
        if (n == cap) {
            if (cap > CLI_STDIN_MAX) {
                fprintf(stderr, "%s: error: %s: larger than 64 MiB\n", cli_prog, path);
                free(b);
                if (in != stdin)
                    fclose(in);
                return 2;
            }
            b = xrealloc(b, cap *= 2);
        }
    }
    if (in != stdin)
        fclose(in);
    *buf = b;
    *len = n;
    return 0;
}

/* The folder of path ("." for none). */
static void dir_of(const char *path, char *out, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(out, n, ".");
    else
        snprintf(out, n, "%.*s", slash == path ? 1 : (int)(slash - path), path);
}

/* One line of the shrunk text for the output: a trace file named relative
 * to the scenario's folder is named from the output's folder instead (an
 * absolute path when the folders differ). */
static void emit_line(FILE *f, const char *line, size_t len, const char *in_dir, int same_dir)
{
    const char *t = same_dir ? NULL : strstr(line, " trace ");
    if (!t || (size_t)(t - line) >= len || t[7] == '/' || (t[7] == '"' && t[8] == '/')) {
        fprintf(f, "%.*s\n", (int)len, line);
        return;
    }
    int quoted = t[7] == '"';
    const char *name = t + 7 + quoted;
    size_t nlen = len - (size_t)(name - line) - (size_t)quoted;
    char joined[PATH_MAX + 8], real[PATH_MAX];
    snprintf(joined, sizeof joined, "%s/%.*s", in_dir, (int)nlen, name);
    const char *use = realpath(joined, real) ? real : joined;
    fprintf(f, "%.*s \"%s\"\n", (int)(t + 6 - line), line, use);
}

/* Writes the result: a comment naming the original and the failure, the
 * seed, then the lines (without their `seed` lines); *nlines gets the
 * number of lines other than the comment.  0, or an exit status. */
static int write_result(const struct shrink_cli *o, const struct cli_failure *f, const char *text, size_t len,
                        int *nlines)
{
    FILE *out = strcmp(o->out, "-") ? fopen(o->out, "w") : stdout;
    if (!out) {
        char why[600];
        snprintf(why, sizeof why, "'%s': %s", o->out, strerror(errno));
        return cli_write_error(why);
    }
    char in_dir[PATH_MAX], out_dir[PATH_MAX], d[1200], rin[PATH_MAX], rout[PATH_MAX];
    dir_of(f->path, in_dir, sizeof in_dir);
    dir_of(o->out, out_dir, sizeof out_dir);
    int same = !strcmp(o->out, "-") ? !strcmp(in_dir, ".") :
               (realpath(in_dir, rin) && realpath(out_dir, rout) && !strcmp(rin, rout));
    cli_failure_describe(f, d, sizeof d);
    fprintf(out, "# shrunk by simrun shrink from %s: %s\nseed %" PRIu64 "\n", f->path, d, f->seed);
    *nlines = 1;
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t l = nl ? (size_t)(nl - text - pos) : len - pos;
        if (!(l >= 5 && !strncmp(text + pos, "seed ", 5))) {
            emit_line(out, text + pos, l, in_dir, same);
            ++*nlines;
        }
        pos += l + 1;
    }
    int bad = fflush(out) != 0 || ferror(out);
    if (out != stdout && fclose(out) != 0)
        bad = 1;
    if (bad) {
        char why[600];
        snprintf(why, sizeof why, "'%s': %s", o->out, strerror(errno ? errno : EIO));
        return cli_write_error(why);
    }
    return 0;
}

static void print_step(void *ctx, const char *step)
{
    const struct cli_failure *f = ctx;
    fprintf(f->info, "  %s\n", step);
    fflush(f->info);
}

/* --- the command ---------------------------------------------------------------------------------- */

/* Shrinks text with failure f; prints the summary; writes the result. */
static int shrink_and_write(const struct shrink_cli *o, struct cli_failure *f, const char *text, size_t len)
{
    char d[1200];
    cli_failure_describe(f, d, sizeof d);
    FILE *info = strcmp(o->out, "-") ? stdout : stderr;
    f->info = info;
    fprintf(info, "shrink: %s\n", d);
    const char *pins[1] = {f->expect};
    struct shrink_opts so = {.test = cli_failure_test, .log = o->quiet ? NULL : print_step,
                             .ctx = f, .pins = pins, .npins = f->kind == CLI_FAIL_EXPECT};
    struct shrink_stats st;
    size_t mlen;
    char *min = shrink_text(text, len, &so, &st, &mlen);
    if (!min) {
        fprintf(stderr, "%s: error: %s: without its comments the scenario no longer fails the same way\n", cli_prog,
                f->path);
        return 2;
    }
    int nlines = 0;
    int rc = write_result(o, f, min, mlen, &nlines);
    if (!rc)
        fprintf(info, "shrink: %d lines -> %d lines in %d rounds; %" PRIu64 " candidates tried, %" PRIu64
                      " kept, %" PRIu64 " refused by the parser; wrote %s\n",
                st.lines_before, nlines, st.rounds, st.tried, st.accepted, f->unparsed, o->out);
    free(min);
    return rc;
}

static int cmd_shrink(int argc, char **argv)
{
    struct shrink_cli o = {.timeout = 300};
    int rc = cli_parse(&cli_cmd_shrink, argc, argv, &o);
    if (rc)
        return rc;
    if (!o.path)
        return cli_usage_error("%s", "no scenario given");
    if (!o.out)
        return cli_usage_error("%s", "no output given (-o MIN.scn)");
    if ((rc = cli_check_policy_list(o.policies)))
        return rc;
    char *text;
    size_t len;
    if ((rc = read_text(o.path, &text, &len)))
        return rc;
    struct cli_failure f = {.path = strcmp(o.path, "-") ? o.path : CLI_STDIN_PATH, .max_events = o.max_events,
                            .timeout_s = (int)o.timeout};
    struct scenario *s;
    struct diag d;
    if (scenario_parse_buf_ex(f.path, text, len, &refs_builtin, &s, &d) != 0) {
        diag_print(&d);
        free(text);
        return 2;
    }
    f.seed = o.have_seed ? o.seed : s->seed;
    rc = find_failure(&o, s, &f);
    if (rc == 1)
        fprintf(stderr, "%s: error: %s does not fail under %s (seed %" PRIu64 "%s): nothing to shrink\n", cli_prog,
                f.path, o.policies ? o.policies : "any policy", f.seed, o.have_line ? ", that line" : "");
    scenario_free(s);
    if (rc == 0)
        rc = shrink_and_write(&o, &f, text, len);
    else if (rc == 1)
        rc = 2;
    free(text);
    return rc;
}
