/* cli_check.c: `simrun check` (see cli.h): runs each scenario under every
 * policy its `expect` lines name and evaluates each line; PASS or FAIL per
 * line and policy with the measured value, optionally a JUnit report and
 * the runs in a results database.  Exits 1 if a line fails. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/fmt.h"
#include "sim/checker.h"
#include "sim/cli.h"
#include "sim/sim.h"
#include "sim/store.h"
#include "sim/util.h"

static const struct cli_option check_options[] = {
    CLI_CALLBACK(0, "seed", "N", cli_opt_seed, "master seed (default: the scenario's)"),
    CLI_STRING(0, "junit", "FILE", struct cli_opts, junit, "also write a JUnit XML report"),
    CLI_STRING(0, "db", "FILE", struct cli_opts, db, "also write the results to this SQLite database"),
    CLI_FLAG('q', "quiet", struct cli_opts, quiet, "print failures only"),
    CLI_END,
};

static int cmd_check(int argc, char **argv);

const struct cli_command cli_cmd_check = {
    .name = "check",
    .args = "SCENARIO...",
    .usage = "SCENARIO... [options]",
    .summary = "evaluate every 'expect' line; exit 1 if one fails",
    .description = "Runs each scenario under every policy its 'expect' lines name ('*': all\n"
                   "registered policies and the scenario's variants) and evaluates each line.\n"
                   "Prints PASS or FAIL per line and policy with the measured value; exits 1\n"
                   "if any line fails.\n",
    .options = check_options,
    .arg = cli_opt_scenario,
    .run = cmd_check,
};

/* What a check writes to and counts, over all its scenarios. */
struct check_ctx {
    const struct cli_opts *o;
    FILE *junit;                   /* NULL without --junit */
    struct store *st;              /* NULL without --db */
    int npass, nfail;
};

/* Whether v `op` want holds. */
static int compare(double v, enum expect_op op, double want)
{
    switch (op) {
    case OP_LT: return v < want;
    case OP_LE: return v <= want;
    case OP_GT: return v > want;
    case OP_GE: return v >= want;
    case OP_EQ: return v == want;
    case OP_NE: return v != want;
    }
    return 0;
}

/* Whether an expect line applies to the policy label. */
static int expect_names(const struct expect_def *e, const char *label)
{
    for (char **p = e->policies; *p; p++)
        if (!strcmp(*p, "*") || !strcmp(*p, label))
            return 1;
    return 0;
}

/* The template index of an expect's handler, -1 for the whole scenario. */
static int expect_tmpl(const struct scenario *s, const struct expect_def *e)
{
    if (e->wf < 0)
        return -1;
    int t = 0;
    for (int f = 0; f < e->wf; f++)
        t += s->wfs[f].nhandlers;
    return t + e->handler;
}

/* Evaluates the expect lines of s that name t against res, printing each
 * (failures only with -q) and adding it to the JUnit report; eo gets the
 * outcomes, *neo their number. */
static void check_expects(struct check_ctx *cx, const struct scenario *s, const struct cli_target *t,
                          const struct sim_result *res, struct expect_outcome *eo, uint32_t *neo)
{
    FILE *junit = cx->junit;
    for (uint32_t e = 0; e < s->nexpects; e++) {
        const struct expect_def *ex = &s->expects[e];
        if (!expect_names(ex, t->label))
            continue;
        double v = 0;
        int ok;
        ok = metric_get(&res->ck, expect_tmpl(s, ex), ex->metric, &v) == 0 && compare(v, ex->op, ex->value);
        eo[(*neo)++] = (struct expect_outcome){ex, v, ok};
        const struct metric_info *mi = metric_find(ex->metric);
        char b[48];
        if (mi)
            fmt_metric(mi, v, b, sizeof b);
        else
            snprintf(b, sizeof b, "%g", v);
        if (ok)
            cx->npass++;
        else
            cx->nfail++;
        if (!ok || !cx->o->quiet)
            printf("%s %s:%d [%s] %s (measured %s)%s%s\n", ok ? "PASS" : "FAIL", s->path, ex->line, t->label,
                   ex->text, b, res->status != SIM_OK ? ": " : "", res->status != SIM_OK ? res->status_msg : "");
        if (junit) {
            fprintf(junit, "    <testcase classname=\"");
            fmt_markup(junit, s->name);
            fprintf(junit, ".%s\" name=\"line %d: ", t->label, ex->line);
            fmt_markup(junit, ex->text);
            fprintf(junit, "\">");
            if (!ok) {
                fprintf(junit, "<failure message=\"measured ");
                fmt_markup(junit, b);
                fprintf(junit, "\"/>");
            }
            fprintf(junit, "</testcase>\n");
        }
    }
}

/* Runs s under the target of label with seed and evaluates the lines that
 * name it; the run goes to the store.  0, or the exit status after printing
 * the error. */
static int check_target(struct check_ctx *cx, const struct scenario *s, const char *label, uint64_t seed)
{
    struct cli_target t;
    char msg[512];
    if (cli_resolve_target(s, label, NULL, 0, &t, msg, sizeof msg)) {
        fprintf(stderr, "%s: error: %s: %s\n", cli_prog, s->path, msg);
        return 2;
    }
    struct sim_result res;
    struct sim_opts so = {.seed = seed, .max_events = cx->o->max_events, .label = t.label};
    sim_run(s, t.ops, &t.ps, &so, &res);
    struct expect_outcome *eo = xcalloc(s->nexpects, sizeof *eo);
    uint32_t neo = 0;
    check_expects(cx, s, &t, &res, eo, &neo);
    int rc = 0;
    if (cx->st) {
        int64_t id;
        char err[512];
        struct store_run sr = {.scn = s, .policy = t.label, .base_policy = t.ops->name, .params = t.params_text,
                               .seed = seed, .version = SIMRUN_VERSION, .res = &res, .wall_us = 0, .expects = eo,
                               .nexpects = neo};
        if (store_write_run(cx->st, &sr, &id, err, sizeof err) != 0)
            rc = cli_write_error(err);
    }
    free(eo);
    sim_result_free(&res);
    return rc;
}

/* Checks one scenario: every label that one of its expect lines names, in
 * the order of cli_all_labels; a JUnit test suite for it. */
static int check_scenario(struct check_ctx *cx, const struct scenario *s)
{
    uint64_t seed = cx->o->have_seed ? cx->o->seed_lo : s->seed;
    const char *labels[CLI_MAX_LABELS];
    int nl = cli_all_labels(s, labels, CLI_MAX_LABELS);
    int rc = 0;
    if (cx->junit) {
        fprintf(cx->junit, "  <testsuite name=\"");
        fmt_markup(cx->junit, s->path);
        fprintf(cx->junit, "\">\n");
    }
    if (s->nexpects == 0)
        fprintf(stderr, "%s: warning: %s has no expect lines\n", cli_prog, s->path);
    for (int i = 0; i < nl && rc == 0; i++) {
        int used = 0;
        for (uint32_t e = 0; e < s->nexpects; e++)
            used |= expect_names(&s->expects[e], labels[i]);
        if (used)
            rc = check_target(cx, s, labels[i], seed);
    }
    if (cx->junit)
        fprintf(cx->junit, "  </testsuite>\n");
    return rc;
}

static int cmd_check(int argc, char **argv)
{
    struct cli_opts o = {.format = "table"};
    int rc = cli_parse(&cli_cmd_check, argc, argv, &o);
    if (rc)
        return rc;
    if (o.npaths == 0)
        return cli_usage_error("%s", "no scenario given");
    struct scenario *scn[CLI_MAX_SCENARIOS];
    if ((rc = cli_load_all(&o, scn)))
        return rc;
    struct check_ctx cx = {.o = &o};
    if (o.junit && !(cx.junit = fopen(o.junit, "w"))) {
        char why[600];
        snprintf(why, sizeof why, "JUnit report '%s': %s", o.junit, strerror(errno));
        cli_free_all(scn, o.npaths);
        return cli_write_error(why);
    }
    if ((rc = cli_open_store(o.db, &cx.st))) {
        if (cx.junit)
            fclose(cx.junit);
        cli_free_all(scn, o.npaths);
        return rc;
    }
    if (cx.junit)
        fprintf(cx.junit, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    for (int k = 0; k < o.npaths && rc == 0; k++)
        rc = check_scenario(&cx, scn[k]);
    if (cx.junit) {
        fprintf(cx.junit, "</testsuites>\n");
        int bad = fflush(cx.junit) != 0 || ferror(cx.junit);
        if (fclose(cx.junit) != 0 || bad) {
            char why[600];
            snprintf(why, sizeof why, "JUnit report '%s': %s", o.junit, strerror(errno ? errno : EIO));
            rc = rc ? rc : cli_write_error(why);
        }
    }
    store_close(cx.st);
    cli_free_all(scn, o.npaths);
    printf("check: %d passed, %d failed\n", cx.npass, cx.nfail);
    if (rc)
        return rc;
    return cx.nfail ? 1 : 0;
}
