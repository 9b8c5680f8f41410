/* cli_check.c: `simrun check` (see cli.h): runs each scenario under every
 * policy its `expect` lines name, for one seed or a range of seeds, and
 * evaluates each line: PASS or FAIL per line and policy with what was
 * measured, failures naming the seeds; optionally a JUnit report (one
 * test case per line) and the runs in a results database.  Exits 1 if a
 * line fails.
 *
 * A bare metric holds when it holds in every seed; `mean(M)`, `min(M)`,
 * `max(M)` and `pNN(M)` compare one value over the seeds (cli_expect.c).
 * The runs are the jobs of one sweep (sim/sweep.h, -j), delivered in serial
 * order, so the output and the database do not depend on -j. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/fmt.h"
#include "sim/checker.h"
#include "sim/cli.h"
#include "sim/sim.h"
#include "sim/store.h"
#include "sim/sweep.h"
#include "sim/util.h"

static const struct cli_option check_options[] = {
    CLI_STRING('p', "policies", "LIST", struct cli_opts, policies,
               "check only these policies or variants (comma-separated)"),
    CLI_CALLBACK(0, "policy", "FILE", cli_opt_plugin, "load a policy plugin (a shared object; repeatable)"),
    CLI_CALLBACK(0, "seed", "N", cli_opt_seed, "master seed (default: the scenario's); A..B is --seeds A..B"),
    CLI_CALLBACK(0, "seeds", "A..B", cli_opt_seeds,
                 "run every seed from A to B: a line holds when it holds in\n"
                 "every seed; mean(M), min(M), max(M), pNN(M) in a line\n"
                 "compare one value over the seeds"),
    CLI_CALLBACK('j', "jobs", "N", cli_opt_jobs,
                 "run N simulations at once in worker processes (default:\n"
                 "the number of cores)"),
    CLI_CALLBACK(0, "set", "POLICY.KEY=VALUE", cli_opt_set,
                 "set a policy parameter (repeatable; overrides 'set' lines)"),
    CLI_STRING(0, "junit", "FILE", struct cli_opts, junit,
               "also write a JUnit XML report: a test case per expect line"),
    CLI_STRING(0, "db", "FILE", struct cli_opts, db,
               "also write every run and the outcome of each line to\nthis SQLite database"),
    CLI_FLAG('q', "quiet", struct cli_opts, quiet, "print failures only"),
    CLI_MAX_MEMORY_OPTION,
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
                   "Prints PASS or FAIL per line and policy with the measured value; over\n"
                   "several seeds (--seeds) a failure names the seeds where the line fails.\n"
                   "Exits 1 if any line fails.\n",
    .options = check_options,
    .arg = cli_opt_scenario,
    .run = cmd_check,
};

#define CHECK_SEEDS_SHOWN 8        /* seeds named in one failure, then "and N more" */

/* Everything a check works through: job j belongs to scenario k when
 * first_job[k] <= j < first_job[k + 1]; within it target
 * (j - first_job[k]) / nseeds[k] and seed lo[k] + (j - first_job[k]) %
 * nseeds[k], the order of a serial run. */
struct check_ctx {
    const struct cli_opts *o;
    struct scenario **scn;
    struct cli_target *targets;    /* [npaths * CLI_MAX_LABELS] */
    int ntarg[CLI_MAX_SCENARIOS];
    uint64_t lo[CLI_MAX_SCENARIOS], nseeds[CLI_MAX_SCENARIOS];
    size_t first_job[CLI_MAX_SCENARIOS + 1];
    struct store *st;              /* NULL without --db */
    FILE *junit;                   /* the test suites, collected in memory (NULL without --junit) */
    char *junit_buf;
    size_t junit_len;
    /* the scenario being received, per target */
    double *vals;                  /* [ntarg][nexpects][nseeds]: each line's value in each seed */
    int64_t *wall_us;              /* [ntarg] wall time of its runs */
    uint64_t *nbad;                /* [ntarg] runs that did not finish normally */
    char (*status)[400];           /* [ntarg] the first of them */
    struct expect_outcome *eo;     /* [nexpects] */
    struct cli_cp_cache *cp;       /* the scenario's crash-point explorations */
    int reported;                  /* scenarios whose verdicts are out */
    int npass, nfail;              /* (line, policy) verdicts */
    size_t nlines, nlines_failed, junit_fail;
    double junit_time_s;
    int memory_stop;               /* a run reached the memory budget: exit 2 */
};

static int job_scenario(const struct check_ctx *cx, size_t j)
{
    int k = 0;
    while (j >= cx->first_job[k + 1])
        k++;
    return k;
}

static void check_job_at(void *ctx, size_t j, struct sweep_job *out)
{
    struct check_ctx *cx = ctx;
    int k = job_scenario(cx, j);
    size_t r = j - cx->first_job[k];
    const struct cli_target *t = &cx->targets[k * CLI_MAX_LABELS + (int)(r / cx->nseeds[k])];
    *out = (struct sweep_job){.scn = cx->scn[k], .ops = t->ops, .ps = &t->ps, .label = t->label,
                              .seed = cx->lo[k] + r % cx->nseeds[k]};
}

/* A value as a line compares it: a share for the mean or a percentile of a
 * boolean, else as tables write the metric. */
static void line_value(const struct expect_def *ex, double v, char *b, size_t n)
{
    const struct metric_info *mi = metric_find(ex->metric);
    if (mi && mi->is_bool && (ex->agg == EXPECT_MEAN || ex->agg == EXPECT_PCT) && !isnan(v))
        snprintf(b, n, "%.2f", v);
    else if (mi)
        fmt_metric(mi, v, b, n);
    else
        snprintf(b, n, "%g", v);
}

static void seeds_text(uint64_t lo, uint64_t n, char *b, size_t len)
{
    if (n == 1)
        snprintf(b, len, "seed %" PRIu64, lo);
    else
        snprintf(b, len, "seeds %" PRIu64 "..%" PRIu64, lo, lo + n - 1);
}

/* A line that holds per seed, over the values v[0..n) of seeds lo, ...:
 * whether it held in every seed, and what was measured (at most len
 * bytes): the value, its range, or the seeds where it failed. */
static int judge_each(const struct expect_def *ex, const double *v, uint64_t lo, uint64_t n, char *b, size_t len)
{
    uint64_t nfail = 0;
    size_t lo_i = 0, hi_i = 0;
    for (uint64_t i = 0; i < n; i++) {
        nfail += !cli_expect_compare(v[i], ex->op, ex->value);
        if (v[i] < v[lo_i] || (isnan(v[lo_i]) && !isnan(v[i])))
            lo_i = i;
        if (v[i] > v[hi_i] || (isnan(v[hi_i]) && !isnan(v[i])))
            hi_i = i;
    }
    char x[64], y[64], sd[64];
    seeds_text(lo, n, sd, sizeof sd);
    if (n == 1 || (!nfail && (v[lo_i] == v[hi_i] || isnan(v[lo_i])))) {
        line_value(ex, v[lo_i], x, sizeof x);
        snprintf(b, len, n == 1 ? "measured %s" : "measured %s in every one of %s", x, sd);
        return nfail == 0;
    }
    if (!nfail) {
        line_value(ex, v[lo_i], x, sizeof x);
        line_value(ex, v[hi_i], y, sizeof y);
        snprintf(b, len, "measured %s to %s over %s", x, y, sd);
        return 1;
    }
    size_t off = (size_t)snprintf(b, len, "fails in %" PRIu64 " of %" PRIu64 " seeds (%s):", nfail, n, sd);
    uint64_t shown = 0;
    for (uint64_t i = 0; i < n && off < len; i++) {
        if (cli_expect_compare(v[i], ex->op, ex->value))
            continue;
        if (shown++ == CHECK_SEEDS_SHOWN) {
            off += (size_t)snprintf(b + off, len - off, " and %" PRIu64 " more", nfail - CHECK_SEEDS_SHOWN);
            break;
        }
        line_value(ex, v[i], x, sizeof x);
        off += (size_t)snprintf(b + off, len - off, "%s seed %" PRIu64 " measured %s", shown > 1 ? "," : "", lo + i,
                                x);
    }
    return 0;
}

/* A line with an aggregate over seeds: its value and, when it fails, the
 * seeds' values. */
static int judge_aggregate(const struct expect_def *ex, const double *v, uint64_t lo, uint64_t n, char *b,
                           size_t len)
{
    double a = cli_expect_aggregate(ex, v, n);
    int ok = cli_expect_compare(a, ex->op, ex->value);
    char x[64], agg[16], sd[64];
    line_value(ex, a, x, sizeof x);
    seeds_text(lo, n, sd, sizeof sd);
    size_t off = (size_t)snprintf(b, len, "measured %s %s over %s", cli_expect_agg_name(ex, agg, sizeof agg), x, sd);
    if (ok || n < 2)
        return ok;
    off += (size_t)snprintf(b + off, len - off, "; per seed:");
    for (uint64_t i = 0; i < n && off < len; i++) {
        if (i == 2 * CHECK_SEEDS_SHOWN) {
            snprintf(b + off, len - off, " ...");
            break;
        }
        line_value(ex, v[i], x, sizeof x);
        off += (size_t)snprintf(b + off, len - off, "%s %s", i ? "," : "", x);
    }
    return 0;
}

/* One test case of the JUnit report: an expect line, over its policies
 * and seeds. */
static void junit_case(FILE *j, const struct scenario *s, const struct expect_def *ex, double time_s, int npol,
                       int nfailed, uint64_t nseeds, const char *out, const char *failures)
{
    fprintf(j, "    <testcase classname=\"");
    fmt_markup(j, s->name);
    fprintf(j, "\" name=\"line %d: ", ex->line);
    fmt_markup(j, ex->text);
    fprintf(j, "\" time=\"%.3f\">\n", time_s);
    if (nfailed) {
        fprintf(j, "      <failure message=\"");
        fmt_markup(j, failures);
        fprintf(j, "\">fails for %d of %d polic%s over %" PRIu64 " seed%s</failure>\n", nfailed, npol,
                npol == 1 ? "y" : "ies", nseeds, nseeds == 1 ? "" : "s");
    }
    fprintf(j, "      <system-out>%d polic%s x %" PRIu64 " seed%s = %" PRIu64 " evaluations; %d failing\n", npol,
            npol == 1 ? "y" : "ies", nseeds, nseeds == 1 ? "" : "s", (uint64_t)npol * nseeds, nfailed);
    fmt_markup(j, out);
    fprintf(j, "</system-out>\n    </testcase>\n");
}

/* Judges expect line e of scenario k for every target it names, printing a
 * PASS or FAIL line per target and adding a JUnit test case. */
static void report_line(struct check_ctx *cx, int k, uint32_t e, FILE *suite_out, FILE *suite_fail, int *line_failed,
                        double *line_time_s)
{
    const struct scenario *s = cx->scn[k];
    const struct expect_def *ex = &s->expects[e];
    uint64_t ns = cx->nseeds[k];
    int nfailed = 0;
    *line_time_s = 0;
    for (int ti = 0; ti < cx->ntarg[k]; ti++) {
        const struct cli_target *t = &cx->targets[k * CLI_MAX_LABELS + ti];
        if (!cli_expect_names(ex, t->label))
            continue;
        const double *v = &cx->vals[((size_t)ti * s->nexpects + e) * ns];
        char what[1600];
        double cv;
        int ok = ex->crashpoints ? cli_check_crashpoint_line(cx->cp, s, t, ex, cx->lo[k], ns, &cv, what, sizeof what)
                 : ex->agg == EXPECT_EACH ? judge_each(ex, v, cx->lo[k], ns, what, sizeof what)
                                          : judge_aggregate(ex, v, cx->lo[k], ns, what, sizeof what);
        nfailed += !ok;
        ok ? cx->npass++ : cx->nfail++;
        *line_time_s += (double)cx->wall_us[ti] / 1e6;
        const char *st = cx->nbad[ti] && !ex->crashpoints ? cx->status[ti] : "";
        if (!ok || !cx->o->quiet)
            printf("%s %s:%d [%s] %s (%s)%s%s\n", ok ? "PASS" : "FAIL", s->path, ex->line, t->label, ex->text, what,
                   st[0] ? ": " : "", st);
        if (suite_out)
            fprintf(suite_out, "%s [%s]: %s%s%s\n", ok ? "PASS" : "FAIL", t->label, what, st[0] ? ": " : "", st);
        if (suite_fail && !ok)
            fprintf(suite_fail, "%s[%s] %s", nfailed > 1 ? "; " : "", t->label, what);
    }
    *line_failed = nfailed;
}

/* After the last run of scenario k: every line's verdict, and its JUnit
 * test suite. */
static void report_scenario(struct check_ctx *cx, int k)
{
    const struct scenario *s = cx->scn[k];
    if (s->nexpects == 0)
        fprintf(stderr, "%s: warning: %s has no expect lines\n", cli_prog, s->path);
    char *suite = NULL;
    size_t suite_len = 0;
    FILE *sf = cx->junit ? open_memstream(&suite, &suite_len) : NULL;
    cx->cp = cli_cp_cache_new();
    size_t tests = 0, failures = 0;
    double suite_time = 0;
    for (uint32_t e = 0; e < s->nexpects; e++) {
        int npol = 0;
        for (int ti = 0; ti < cx->ntarg[k]; ti++)
            npol += cli_expect_names(&s->expects[e], cx->targets[k * CLI_MAX_LABELS + ti].label);
        if (!npol)
            continue;                  /* names none of the policies checked (-p) */
        char *out = NULL, *fails = NULL;
        size_t olen = 0, flen = 0;
        FILE *of = sf ? open_memstream(&out, &olen) : NULL, *ff = sf ? open_memstream(&fails, &flen) : NULL;
        int nfailed;
        double t_s;
        report_line(cx, k, e, of, ff, &nfailed, &t_s);
        cx->nlines++;
        cx->nlines_failed += nfailed > 0;
        tests++;
        failures += nfailed > 0;
        suite_time += t_s;
        if (sf) {
            fclose(of);
            fclose(ff);
            junit_case(sf, s, &s->expects[e], t_s, npol, nfailed, cx->nseeds[k], out, fails);
        }
        free(out);
        free(fails);
    }
    cli_cp_cache_free(cx->cp);
    cx->cp = NULL;
    if (!sf)
        return;
    fclose(sf);
    fprintf(cx->junit, "  <testsuite name=\"");
    fmt_markup(cx->junit, s->path);
    fprintf(cx->junit, "\" tests=\"%zu\" failures=\"%zu\" time=\"%.3f\">\n", tests, failures, suite_time);
    fwrite(suite, 1, suite_len, cx->junit);
    fprintf(cx->junit, "  </testsuite>\n");
    cx->junit_fail += failures;
    cx->junit_time_s += suite_time;
    free(suite);
}

/* Reports the scenarios before k that ran nothing (no expect lines, or
 * none naming a policy of -p): their warning and empty suite, in order. */
static void report_upto(struct check_ctx *cx, int k)
{
    for (; cx->reported < k; cx->reported++)
        report_scenario(cx, cx->reported);
}

/* Takes job j's result: each line's value, the run into the store with
 * the outcomes it can carry, and after the scenario's last job its
 * verdicts. */
static int check_sink(void *ctx, size_t j, struct sweep_out *out)
{
    struct check_ctx *cx = ctx;
    int k = job_scenario(cx, j);
    const struct scenario *s = cx->scn[k];
    size_t r = j - cx->first_job[k], ns = cx->nseeds[k], si = r % ns;
    int ti = (int)(r / ns);
    const struct cli_target *t = &cx->targets[k * CLI_MAX_LABELS + ti];
    uint64_t seed = cx->lo[k] + si;
    const struct sim_result *res = &out->res;
    if (r == 0) {
        free(cx->vals);
        cx->vals = xcalloc((size_t)cx->ntarg[k] * (s->nexpects + 1) * ns, sizeof *cx->vals);
        memset(cx->wall_us, 0, CLI_MAX_LABELS * sizeof *cx->wall_us);
        memset(cx->nbad, 0, CLI_MAX_LABELS * sizeof *cx->nbad);
    }
    double *tv = &cx->vals[(size_t)ti * s->nexpects * ns];
    for (uint32_t e = 0; e < s->nexpects; e++)
        tv[(size_t)e * ns + si] = cli_expect_names(&s->expects[e], t->label) && !s->expects[e].crashpoints
                                      ? cli_expect_measure(s, &s->expects[e], res)
                                      : NAN;
    cx->wall_us[ti] += out->wall_us;
    if (cli_memory_stop(s, t->label, seed, res))
        cx->memory_stop = 1;
    if (res->status != SIM_OK && cx->nbad[ti]++ == 0) {
        int ll = cli_expect_livelock_line(s, t->label);
        char why[64] = "";
        if (ll && res->status == SIM_LIVELOCK)
            snprintf(why, sizeof why, " (expected: line %d)", ll);
        snprintf(cx->status[ti], sizeof cx->status[ti], "seed %" PRIu64 ": %.300s%s", seed, res->status_msg, why);
    }
    if (cx->st) {
        uint32_t neo = cli_expect_outcomes(s, t->label, tv, si, ns, cx->eo);
        struct store_run sr = {.scn = s, .policy = t->label, .base_policy = t->ops->name, .params = t->params_text,
                               .seed = seed, .version = SIMRUN_VERSION, .res = res, .wall_us = 0, .expects = cx->eo,
                               .nexpects = neo};
        int64_t id;
        char err[512];
        if (store_write_run(cx->st, &sr, &id, err, sizeof err) != 0)
            return cli_write_error(err);
    }
    if (j + 1 == cx->first_job[k + 1]) {
        report_upto(cx, k);
        report_scenario(cx, k);
        cx->reported = k + 1;
        fflush(stdout);
    }
    return 0;
}

/* Whether a -p name is a registered policy or a variant of one of the
 * scenarios; 0, or 2 after printing the error. */
static int check_policy_list(const struct cli_opts *o, struct scenario **scn, const char **names, int n)
{
    for (int i = 0; i < n; i++) {
        int known = policy_find(names[i]) != NULL;
        for (int k = 0; k < o->npaths && !known; k++)
            for (uint16_t v = 0; v < scn[k]->nvariants && !known; v++)
                known = !strcmp(scn[k]->variants[v].name, names[i]);
        if (!known) {
            char msg[512];
            policy_check_name(names[i], msg, sizeof msg);
            fprintf(stderr, "%s: error: -p: %s\n", cli_prog, msg);
            return 2;
        }
    }
    return 0;
}

/* The targets of every scenario: each label some expect line names (in the
 * order of cli_all_labels), within -p when given, resolved with --set.  0,
 * or 2 after printing the error. */
static int resolve_check_targets(struct check_ctx *cx)
{
    const struct cli_opts *o = cx->o;
    char *polbuf = NULL;
    const char *only[CLI_MAX_LABELS];
    int nonly = 0, rc = 0;
    if (o->policies && (cli_policy_names(o->policies, &polbuf, only, CLI_MAX_LABELS, &nonly) ||
                        check_policy_list(o, cx->scn, only, nonly))) {
        free(polbuf);
        return 2;
    }
    for (int k = 0; k < o->npaths; k++) {
        const struct scenario *s = cx->scn[k];
        const char *labels[CLI_MAX_LABELS];
        int nl = cli_all_labels(s, labels, CLI_MAX_LABELS), nt = 0;
        for (int i = 0; i < nl; i++) {
            int used = 0, wanted = !o->policies;
            for (uint32_t e = 0; e < s->nexpects; e++)
                used |= cli_expect_names(&s->expects[e], labels[i]);
            for (int q = 0; q < nonly; q++)
                wanted |= !strcmp(only[q], labels[i]);
            if (!used || !wanted)
                continue;
            char msg[512];
            int r = cli_resolve_target(s, labels[i], o->sets, o->nsets, &cx->targets[k * CLI_MAX_LABELS + nt],
                                       msg, sizeof msg);
            if (r == -2) {
                fprintf(stderr, "%s\n", msg); /* a whole file:line:col diagnostic */
                rc = 2;
                goto out;
            }
            if (r) {
                fprintf(stderr, "%s: error: %s: %s\n", cli_prog, s->path, msg);
                rc = 2;
                goto out;
            }
            nt++;
        }
        cx->ntarg[k] = nt;
    }
out:
    free(polbuf);
    return rc;
}

/* Numbers the jobs and runs them in one sweep; the verdicts come out of
 * the sink, scenario by scenario. */
static int check_sweep(struct check_ctx *cx)
{
    const struct cli_opts *o = cx->o;
    size_t njobs = 0;
    uint32_t maxexp = 0;
    for (int k = 0; k < o->npaths; k++) {
        const struct scenario *s = cx->scn[k];
        cx->lo[k] = o->have_seed ? o->seed_lo : s->seed;
        cx->nseeds[k] = (o->have_seed ? o->seed_hi : s->seed) - cx->lo[k] + 1;
        cx->first_job[k] = njobs;
        njobs += (size_t)cx->ntarg[k] * (size_t)cx->nseeds[k];
        if (s->nexpects > maxexp)
            maxexp = s->nexpects;
    }
    cx->first_job[o->npaths] = njobs;
    cx->wall_us = xcalloc(CLI_MAX_LABELS, sizeof *cx->wall_us);
    cx->nbad = xcalloc(CLI_MAX_LABELS, sizeof *cx->nbad);
    cx->status = xcalloc(CLI_MAX_LABELS, sizeof *cx->status);
    cx->eo = xcalloc(maxexp + 1, sizeof *cx->eo);
    struct sweep_opts so = {.workers = cli_jobs(o), .max_events = o->max_events,
                            .max_memory = cli_max_memory(o)};
    char err[512] = "";
    int rc = sweep_run(njobs, &so, check_job_at, check_sink, cx, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "%s: error: %s\n", cli_prog, err);
        rc = 3;
    }
    if (rc == 0)
        report_upto(cx, o->npaths);
    free(cx->vals);
    free(cx->wall_us);
    free(cx->nbad);
    free(cx->status);
    free(cx->eo);
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
    if ((rc = cli_check_policy_list(o.policies)) || (rc = cli_check_db_path("--db", o.db)))
        return rc;
    struct scenario *scn[CLI_MAX_SCENARIOS];
    if ((rc = cli_load_all(&o, scn)))
        return rc;
    struct check_ctx *cx = xcalloc(1, sizeof *cx);
    cx->o = &o;
    cx->scn = scn;
    cx->targets = xcalloc((size_t)o.npaths * CLI_MAX_LABELS, sizeof *cx->targets);
    if ((rc = cli_check_sets(&o, scn)) || (rc = resolve_check_targets(cx)))
        goto out;
    FILE *jf = NULL;
    if (o.junit && !(jf = fopen(o.junit, "w"))) {
        char why[600];
        snprintf(why, sizeof why, "JUnit report '%s': %s", o.junit, strerror(errno));
        rc = cli_write_error(why);
        goto out;
    }
    if ((rc = cli_open_store(o.db, &cx->st))) {
        if (jf)
            fclose(jf);
        goto out;
    }
    if (jf)
        cx->junit = open_memstream(&cx->junit_buf, &cx->junit_len);
    rc = check_sweep(cx);
    store_close(cx->st);
    if (jf) {
        fclose(cx->junit);
        fprintf(jf, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"simrun check\" tests=\"%zu\" "
                    "failures=\"%zu\" time=\"%.3f\">\n",
                cx->nlines, cx->junit_fail, cx->junit_time_s);
        fwrite(cx->junit_buf, 1, cx->junit_len, jf);
        fprintf(jf, "</testsuites>\n");
        int bad = fflush(jf) != 0 || ferror(jf);
        if ((fclose(jf) != 0 || bad) && !rc) {
            char why[600];
            snprintf(why, sizeof why, "JUnit report '%s': %s", o.junit, strerror(errno ? errno : EIO));
            rc = cli_write_error(why);
        }
        free(cx->junit_buf);
    }
    char seeds[80] = "each scenario's own seed";
    if (o.have_seed)
        seeds_text(o.seed_lo, o.seed_hi - o.seed_lo + 1, seeds, sizeof seeds);
    printf("check: %d passed, %d failed (%zu lines, %zu failing; %s)\n", cx->npass, cx->nfail, cx->nlines,
           cx->nlines_failed, seeds);
    if (!rc && cx->nlines == 0)
        fprintf(stderr, "%s: warning: nothing was checked: no expect line names %s\n", cli_prog,
                o.policies ? "the policies of -p" : "a policy");
    if (!rc)
        rc = cx->memory_stop ? 2 : cx->nfail ? 1 : 0;
out:
    free(cx->targets);
    free(cx);
    cli_free_all(scn, o.npaths);
    return rc;
}
