/* cli_db.c: the commands that read results databases (see cli.h):
 * `simrun report` (reports/report.h) and `simrun diff` (reports/diff.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/diff.h"
#include "reports/report.h"
#include "sim/cli.h"

/* --- report ------------------------------------------------------------------------------------ */

static int report_arg(void *opts, const char *a)
{
    if (a[0] == '-')
        return cli_usage_error("unknown option '%s'", a);
    return cli_usage_error("unexpected argument '%s' (the database is given with --db)", a);
}

static const struct cli_option report_options[] = {
    CLI_STRING(0, "db", "FILE", struct report_opts, db, "the results database (default results.db)"),
    CLI_STRING('o', "out", "DIR", struct report_opts, out_dir,
               "the output folder (default report; created if missing)"),
    CLI_STRING(0, "scenario", "LIST", struct report_opts, scenarios,
               "draw only these scenarios (comma-separated names)"),
    CLI_STRING(0, "policy", "LIST", struct report_opts, policies,
               "draw only these policies or variants (comma-separated)"),
    CLI_CALLBACK(0, "plugin", "FILE", cli_opt_plugin,
                 "load a policy plugin, so that runs of its policy stored\n"
                 "without their trace get timelines too (repeatable)"),
    CLI_END,
};

static int cmd_report(int argc, char **argv)
{
    struct report_opts ro = {.db = "results.db", .out_dir = "report", .gnuplot = "gnuplot",
                             .version = SIMRUN_VERSION};
    const char *env = getenv("SIMRUN_GNUPLOT");
    if (env && *env)
        ro.gnuplot = env;
    int rc = cli_parse(&cli_cmd_report, argc, argv, &ro);
    if (rc)
        return rc;
    if (!ro.out_dir[0])
        return cli_usage_error("%s", "empty output folder");
    if ((rc = cli_check_db_path("--db", ro.db)))
        return rc;
    /* Their names as -p reads its own: "a, b" is "a,b". */
    char *scenarios = ro.scenarios ? cli_name_list(ro.scenarios) : NULL;
    char *policies = ro.policies ? cli_name_list(ro.policies) : NULL;
    if ((scenarios && !*scenarios) || (policies && !*policies)) {
        rc = scenarios && !*scenarios ? cli_usage_error("empty scenario list '%s'", ro.scenarios)
                                      : cli_usage_error("empty policy list '%s'", ro.policies);
        free(scenarios);
        free(policies);
        return rc;
    }
    ro.scenarios = scenarios;
    ro.policies = policies;
    char err[1024];
    size_t ncharts = 0;
    rc = report_write(&ro, &ncharts, err, sizeof err);
    free(scenarios);
    free(policies);
    if (rc) {
        fprintf(stderr, "%s: error: %s\n", cli_prog, err);
        return rc;
    }
    printf("report: %s/index.html (%zu charts from %s)\n", ro.out_dir, ncharts, ro.db);
    return 0;
}

const struct cli_command cli_cmd_report = {
    .name = "report",
    .args = "",
    .usage = "[--db FILE] [-o DIR] [--scenario LIST] [--policy LIST] [--plugin FILE]...",
    .summary = "charts and an HTML page comparing the policies of a results database",
    .description = "Draws, for every scenario in the results database, the policies side by side:\n"
                   "a verdict (work lost, repeated or missed; who beats whom, significantly over\n"
                   "the seeds paired by seed), a table of every metric (mean and 95% interval\n"
                   "over seeds), latency and lateness CDFs, bar charts of lost / duplicates /\n"
                   "missed / busy loops / wake-ups / overlaps with confidence intervals, the\n"
                   "backlog over time and a timeline of runs per handler for one seed.  Charts\n"
                   "are PNG and SVG (timelines PNG only), each with its data file and gnuplot\n"
                   "script beside it; DIR/index.html ties them together and needs nothing\n"
                   "outside DIR.\n"
                   "\n"
                   "Timelines use the stored trace (run with --store-trace), else simulate the\n"
                   "run again from its scenario file.  Needs gnuplot with the pngcairo and svg\n"
                   "terminals on PATH (Debian: apt-get install gnuplot-nox); SIMRUN_GNUPLOT\n"
                   "names another program.\n",
    .options = report_options,
    .arg = report_arg,
    .run = cmd_report,
};

/* --- diff ------------------------------------------------------------------------------------- */

/* What diff parses: its options and the two databases. */
struct diff_cli {
    struct diff_opts d;
    const char *paths[2];
    int np;
};

static int diff_arg(void *opts, const char *a)
{
    struct diff_cli *dc = opts;
    if (dc->np == 2)
        return cli_usage_error("unexpected argument '%s' (diff takes two databases)", a);
    dc->paths[dc->np++] = a;
    return 0;
}

/* -t METRIC=P%[,METRIC=P%...]: each is checked and added. */
static int opt_tolerance(void *opts, const char *v)
{
    struct diff_opts *dopt = &((struct diff_cli *)opts)->d;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        if (dopt->ntol >= DIFF_MAX_TOLERANCES)
            return cli_usage_error("too many tolerances (at most %s)", "64");
        char msg[1400];
        if (diff_parse_tolerance(p, &dopt->tol[dopt->ntol], msg, sizeof msg) != 0) {
            fprintf(stderr, "%s: error: %s\n(see '%s diff --help')\n", cli_prog, msg, cli_prog);
            return 2;
        }
        dopt->ntol++;
    }
    return 0;
}

static int opt_diff_format(void *opts, const char *v)
{
    struct diff_opts *dopt = &((struct diff_cli *)opts)->d;
    if (!strcmp(v, "markdown") || !strcmp(v, "md"))
        dopt->format = DIFF_MARKDOWN;
    else if (!strcmp(v, "text"))
        dopt->format = DIFF_TEXT;
    else
        return cli_usage_error("unknown format '%s' (valid: text, markdown)", v);
    return 0;
}

static int opt_pair_by(void *opts, const char *v)
{
    struct diff_opts *dopt = &((struct diff_cli *)opts)->d;
    char msg[256];
    if (diff_parse_pair_by(v, &dopt->pair_by, msg, sizeof msg) != 0)
        return cli_usage_error("%s", msg);
    return 0;
}

static const struct cli_option diff_options[] = {
    CLI_CALLBACK('t', "tolerance", "METRIC=P%", opt_tolerance,
                 "allowed worsening of a performance metric ('*'\n"
                 "for all; repeatable, or comma-separated;\n"
                 "default 5%); an error for a correctness metric"),
    CLI_CALLBACK(0, "pair-by", "KEY", opt_pair_by,
                 "what pairs runs of the two databases: a comma-\n"
                 "separated list of scenario (its hash), name (the\n"
                 "scenario's name), policy (the label; also\n"
                 "'variant'), base (the registered policy) and\n"
                 "params; default scenario,policy"),
    CLI_FLAG(0, "allow-missing", struct diff_cli, d.allow_missing,
             "runs of BASE without a partner in NEW warn\n"
             "instead of failing the diff"),
    CLI_CALLBACK(0, "format", "FMT", opt_diff_format, "text (default) or markdown (for CI comments)"),
    CLI_FLAG(0, "all", struct diff_cli, d.all, "list unchanged metrics too"),
    CLI_END,
};

static int cmd_diff(int argc, char **argv)
{
    struct diff_cli dc = {.d = {.format = DIFF_TEXT}};
    int rc = cli_parse(&cli_cmd_diff, argc, argv, &dc);
    if (rc)
        return rc;
    if (dc.np != 2)
        return cli_usage_error("%s", "diff needs two databases: BASE.db NEW.db");
    if ((rc = cli_check_db_path("BASE.db", dc.paths[0])) || (rc = cli_check_db_path("NEW.db", dc.paths[1])))
        return rc;
    char err[1024];
    rc = diff_run(dc.paths[0], dc.paths[1], &dc.d, stdout, err, sizeof err);
    if (rc == 2)
        fprintf(stderr, "%s: error: %s\n", cli_prog, err);
    return rc;
}

const struct cli_command cli_cmd_diff = {
    .name = "diff",
    .args = "BASE.db NEW.db",
    .usage = "BASE.db NEW.db [--tolerance METRIC=P%]... [--pair-by KEY] [--allow-missing]\n"
             "                   [--format text|markdown] [--all]",
    .summary = "metric-by-metric regressions between two results databases",
    .description = "Pairs the runs of two results databases -- by default by scenario and policy\n"
                   "label (a policy's or a variant's name), then by seed -- and compares every\n"
                   "whole-scenario metric.  Parameters that differ between paired runs are shown\n"
                   "as the change under test.\n"
                   "\n"
                   "Correctness metrics (lost, dropped, stranded, duplicates, double_effects,\n"
                   "missed, runs_cutoff, overlaps, overlap_runs, stuck, livelock, recovery_ok,\n"
                   "dup_deliveries, undelivered) and the run status are gated exactly: worse in\n"
                   "any paired seed is a regression, named with its seed.  Performance metrics\n"
                   "(latency, lateness, busy loops, wake-ups, ...) regress when they are worse by\n"
                   "more than the tolerance, a percentage of the base mean, and, over several\n"
                   "seeds, the 95% confidence interval of the per-seed difference excludes zero.\n"
                   "Exits 1 on a regression, or when runs of BASE are missing from NEW (unless\n"
                   "--allow-missing); 0 otherwise; 2 on bad usage or an unreadable database.\n",
    .options = diff_options,
    .arg = diff_arg,
    .run = cmd_diff,
};
