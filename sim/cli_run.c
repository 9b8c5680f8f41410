/* cli_run.c: `simrun run` (see cli.h).
 *
 * The runs of every scenario x target x seed are the jobs of one sweep
 * (sim/sweep.h), which may spread them over worker processes (-j) but
 * delivers the results here in serial order, so the database, the tables
 * and the traces do not depend on -j.  Everything is resolved (scenarios,
 * policies, --set) before the database opens. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "reports/fmt.h"
#include "reports/stats.h"
#include "sim/checker.h"
#include "sim/cli.h"
#include "sim/sim.h"
#include "sim/store.h"
#include "sim/suggest.h"
#include "sim/sweep.h"
#include "sim/syntax.h"
#include "sim/util.h"

/* --- options -------------------------------------------------------------------------------- */

static int opt_format(void *opts, const char *v)
{
    struct cli_opts *o = opts;
    if (strcmp(v, "table") && strcmp(v, "csv") && strcmp(v, "json") && strcmp(v, "markdown"))
        return cli_usage_error("unknown format '%s' (valid: table, csv, json, markdown)", v);
    o->format = v;
    return 0;
}

/* Which metrics a --metrics list shows: names, and PREFIX.* for a family
 * ("latency.*").  0, or 2 after printing the error. */
static int parse_metric_list(const char *list, int *show)
{
    for (int m = 0; m < metric_count; m++)
        show[m] = list == NULL;
    if (!list)
        return 0;
    char *buf = cli_name_list(list); /* as -p is read */
    int any = 0;
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        size_t len = strlen(w);
        int star = len > 2 && !strcmp(w + len - 2, ".*"), hit = 0;
        for (int m = 0; m < metric_count; m++)
            if (star ? !strncmp(metric_table[m].name, w, len - 1) : !strcmp(metric_table[m].name, w))
                show[m] = hit = 1;
        if (!hit) {
            char names[1024] = "";
            for (int m = 0; m < metric_count; m++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", m ? ", " : "",
                         metric_table[m].name);
            struct suggest sg;
            suggest_init(&sg, w);
            for (int m = 0; m < metric_count; m++)
                suggest_add(&sg, metric_table[m].name);
            char hint[SUGGEST_MAX_LEN + 32] = "";
            suggest_append(&sg, hint, sizeof hint);
            fprintf(stderr, "%s: error: unknown metric '%s' in --metrics (valid: %s, or a family such as latency.*)%s\n",
                    cli_prog, w, names, hint);
            free(buf);
            return 2;
        }
        any = 1;
    }
    free(buf);
    return any ? 0 : cli_usage_error("empty --metrics list '%s'", list);
}

static int opt_max_events(void *opts, const char *v)
{
    struct cli_opts *o = opts;
    if (cli_parse_u64(v, &o->max_events) || o->max_events == 0)
        return cli_usage_error("bad --max-events '%s'", v);
    return 0;
}

static const struct cli_option run_options[] = {
    CLI_STRING('p', "policies", "LIST", struct cli_opts, policies, "comma-separated policies or variant names"),
    CLI_CALLBACK(0, "policy", "FILE", cli_opt_plugin,
                 "load a policy plugin (a shared object built against\n"
                 "simrun's headers; repeatable); its policy runs like a\n"
                 "built-in one"),
    CLI_CALLBACK(0, "seed", "N", cli_opt_seed,
                 "master seed (default: the scenario's 'seed', else 1);\n"
                 "--seed A..B is --seeds A..B"),
    CLI_CALLBACK(0, "seeds", "A..B", cli_opt_seeds,
                 "run every seed from A to B; tables show the mean \xc2\xb1 the\n"
                 "half-width of its 95% confidence interval (Student t);\n"
                 "every seed's rows go to the database"),
    CLI_CALLBACK('j', "jobs", "N", cli_opt_jobs,
                 "run N simulations at once in worker processes (default:\n"
                 "the number of cores); the output and the database are\n"
                 "the same as with -j 1"),
    CLI_CALLBACK(0, "set", "POLICY.KEY=VALUE", cli_opt_set,
                 "set a policy parameter (repeatable; overrides 'set' lines)"),
    CLI_CALLBACK(0, "sweep", "POLICY.KEY=V1,V2,...", cli_opt_sweep,
                 "a parameter study: run POLICY once per value (repeatable:\n"
                 "several give the product; replaces a 'sweep' line of the\n"
                 "same key); prints the cheapest point that meets the\n"
                 "expect lines"),
    CLI_CALLBACK(0, "shard", "K/N", cli_opt_shard,
                 "run only the K-th of N slices of the runs (job i is in\n"
                 "slice i % N + 1), for a sweep across machines; 'simrun\n"
                 "merge' combines the databases"),
    CLI_FLAG(0, "resume", struct cli_opts, resume,
             "with --db: skip the runs the database already has (after\n"
             "an interruption: nothing is lost or run twice)"),
    CLI_STRING(0, "db", "FILE", struct cli_opts, db, "write results to this SQLite database (one transaction per run)"),
    CLI_FLAG(0, "store-trace", struct cli_opts, store_trace, "with --db: also store the event trace of each run (it streams through $TMPDIR, not memory)"),
    CLI_STRING(0, "trace", "FILE", struct cli_opts, trace,
               "write every fact (publish, drop, run start/phase/end, crash,\n"
               "restart, timer, wake-ups, ...), one line each ('-' for\n"
               "standard output)"),
    CLI_CALLBACK(0, "format", "FMT", opt_format,
                 "table (default), markdown, csv or json; csv and json give\n"
                 "each metric's unit, and with --seeds a summary per policy\n"
                 "(mean, 95% interval, n)"),
    CLI_STRING(0, "metrics", "LIST", struct cli_opts, metrics,
               "show only these metrics (comma-separated names, or a\n"
               "family such as latency.*)"),
    CLI_CALLBACK(0, "max-events", "N", opt_max_events, "stop a run after N events (default 4000000000)"),
    CLI_MAX_MEMORY_OPTION,
    CLI_END,
};

static int cmd_run(int argc, char **argv);

const struct cli_command cli_cmd_run = {
    .name = "run",
    .args = "SCENARIO...",
    .usage = "SCENARIO... [options]",
    .summary = "simulate under each policy; print a comparison table",
    .description = "Simulates each scenario under each policy and prints the policies side by\n"
                   "side.  Without -p: every registered policy plus the scenario's variants.\n"
                   "With --db, a dedicated writer stores each run in its own transaction while\n"
                   "the next ones are simulated.\n",
    .options = run_options,
    .arg = cli_opt_scenario,
    .run = cmd_run,
};

/* --- inputs -------------------------------------------------------------------------------- */

static FILE *open_trace(const char *path)
{
    if (!path)
        return NULL;
    if (!strcmp(path, "-"))
        return stdout;
    FILE *f = fopen(path, "w");
    if (!f) {
        char why[600];
        snprintf(why, sizeof why, "trace '%s': %s", path, strerror(errno));
        cli_write_error(why);
    }
    return f;
}

/* --- the sweep ----------------------------------------------------------------------------- */

/* What the run command's sweep needs to describe jobs and to take their
 * results in order.  Sweep job j is the plan's selected job j (sel[j], or
 * j itself when every job runs); its scenario, column and seed come from
 * the plan.  Results arrive in that order, so a scenario's jobs are
 * contiguous and its table is printed after its last one. */
struct run_ctx {
    const struct cli_opts *o;
    struct scenario **scn;
    const struct cli_plan *pl;
    size_t njobs;
    struct store *st;
    struct store_writer *writer;   /* started with the first result (after the workers are forked) */
    int json, csv, markdown, first_json;
    int show[M_COUNT];             /* --metrics: which metrics are printed */
    int memory_stop;               /* a run reached the memory budget: exit 2 */
    /* the scenario being received (cur), per column and metric, over its seeds */
    int cur, maxcols;
    struct stats_acc *acc;         /* [maxcols * metric_count] */
    uint64_t *never;               /* durations that were "never", kept out of acc */
    char (*status)[32];            /* [maxcols] */
    uint64_t *fps, *nruns;         /* [maxcols] the last fingerprint, the runs received */
    uint64_t *exp_checked, *exp_failed; /* [maxcols] expect outcomes over its runs */
    /* each expect line's value per column and seed index, for the outcomes
     * of the lines that aggregate over the seeds ([maxcols][nexpects][nseeds]) */
    double *evals;
    size_t delivered;              /* results received */
    /* progress on a terminal */
    int progress;
    int64_t t0_us, shown_us;
};

static int64_t wall_clock_us(void)
{
    /* For progress and run_timings only; it never reaches a simulation. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void job_place(const struct run_ctx *rx, size_t j, size_t *full, int *k, int *c, uint64_t *seed)
{
    *full = rx->pl->sel ? rx->pl->sel[j] : j;
    cli_plan_at(rx->pl, *full, k, c, seed);
}

static void run_job_at(void *ctx, size_t j, struct sweep_job *out)
{
    struct run_ctx *rx = ctx;
    size_t full;
    int k, c;
    uint64_t seed;
    job_place(rx, j, &full, &k, &c, &seed);
    const struct cli_target *t = &rx->pl->cols[k][c].t;
    *out = (struct sweep_job){.scn = rx->scn[k], .ops = t->ops, .ps = &t->ps, .label = t->label, .seed = seed};
}

/* Pads s on the right (left = 0) or left to w columns. */
static void print_cell(const char *s, size_t w, int left)
{
    size_t sw = fmt_width(s);
    if (!left)
        for (size_t i = sw; i < w; i++)
            putchar(' ');
    fputs(s, stdout);
    if (left)
        for (size_t i = sw; i < w; i++)
            putchar(' ');
}

/* The heading of scenario k's table: where it comes from, its clock and
 * its seeds (and how many of its runs are here, for a shard or --resume). */
static void print_heading(const struct run_ctx *rx, int k, uint64_t nruns)
{
    const struct scenario *s = rx->scn[k];
    const struct cli_plan *pl = rx->pl;
    char start[40], hz[40];
    cal_format_utc(s->start_utc_s, start, sizeof start);
    fmt_duration((double)s->horizon_us, hz, sizeof hz);
    if (rx->markdown)
        printf("### %s\n\n`%s`: start %s, horizon %s, ", s->name, s->path, start, hz);
    else
        printf("%s (%s): start %s, horizon %s, ", s->name, s->path, start, hz);
    if (pl->nseeds[k] > 1)
        printf("seeds %" PRIu64 "..%" PRIu64 " (mean \xc2\xb1 95%% confidence half-width)", pl->lo[k],
               pl->lo[k] + pl->nseeds[k] - 1);
    else
        printf("seed %" PRIu64, pl->lo[k]);
    size_t all = (size_t)pl->ncols[k] * pl->nseeds[k];
    if (nruns < all)
        printf("; %" PRIu64 " of its %zu runs here", nruns, all);
    printf("\n");
}

/* The cells of scenario k's table, [row][column] of CELL bytes: a row per
 * metric, then status and fingerprint; w[i] gets column i's width. */
enum { CELL = 64 };
static char *table_cells(const struct run_ctx *rx, int k, size_t *w)
{
    const struct cli_col *cols = rx->pl->cols[k];
    int nc = rx->pl->ncols[k];
    char *cells = xcalloc((size_t)(metric_count + 2) * (size_t)nc, CELL);
    for (int i = 0; i < nc; i++) {
        w[i] = fmt_width(cols[i].title);
        for (int m = 0; m < metric_count + 2; m++) {
            char *c = cells + ((size_t)m * (size_t)nc + (size_t)i) * CELL;
            if (m < metric_count)
                fmt_metric_ci(&metric_table[m], &rx->acc[i * metric_count + m], rx->never[i * metric_count + m], c,
                              CELL);
            else if (m == metric_count)
                snprintf(c, CELL, "%s", rx->status[i]);
            else
                snprintf(c, CELL, "%08" PRIx64, rx->fps[i] >> 32);
            if (fmt_width(c) > w[i])
                w[i] = fmt_width(c);
        }
    }
    return cells;
}

/* The comparison table of scenario k, its columns side by side: the value
 * of each whole-scenario metric (--metrics: those listed), or over several
 * seeds its mean +- the half-width of its 95 % confidence interval; as
 * aligned text, or as a Markdown table.  Columns without a run here
 * (another shard's, or stored before --resume) are left out. */
static void print_table(const struct run_ctx *rx, int k)
{
    const struct cli_col *cols = rx->pl->cols[k];
    int nc = rx->pl->ncols[k], md = rx->markdown;
    uint64_t total = 0, maxseeds = 0;
    for (int i = 0; i < nc; i++) {
        total += rx->nruns[i];
        maxseeds = rx->nruns[i] > maxseeds ? rx->nruns[i] : maxseeds;
    }
    print_heading(rx, k, total);
    size_t *w = xcalloc((size_t)nc, sizeof *w);
    char *cells = table_cells(rx, k, w);
    if (md)
        printf("\n| metric |");
    else
        printf("%-16s", "metric");
    for (int i = 0; i < nc; i++)
        if (rx->nruns[i]) {
            printf(md ? " " : "  ");
            print_cell(cols[i].title, md ? 0 : w[i], 0);
            printf(md ? " |" : "");
        }
    if (md) {
        printf("\n|:--|");
        for (int i = 0; i < nc; i++)
            if (rx->nruns[i])
                printf("--:|");
    }
    printf("\n");
    for (int m = 0; m < metric_count + (maxseeds == 1 ? 2 : 1); m++) {
        if (m < metric_count && !rx->show[m])
            continue;
        const char *name = m < metric_count ? metric_table[m].name : m == metric_count ? "status" : "fingerprint";
        printf(md ? "| %s |" : "%-16s", name);
        for (int i = 0; i < nc; i++)
            if (rx->nruns[i]) {
                printf(md ? " " : "  ");
                print_cell(cells + ((size_t)m * (size_t)nc + (size_t)i) * CELL, md ? 0 : w[i], 0);
                printf(md ? " |" : "");
            }
        printf("\n");
    }
    free(cells);
    free(w);
    for (int i = 0; i < nc; i++)
        if (rx->nruns[i] && cols[i].t.params_text[0])
            printf(md ? "\n- `%s`: %s" : "  %s: %s\n", cols[i].title, cols[i].t.params_text);
    if (md)
        printf("\n");
}

static int metric_index(const char *name)
{
    const struct metric_info *mi = metric_find(name);
    SIM_ASSERT(mi != NULL);
    return (int)(mi - metric_table);
}

/* After the table of scenario k, for each label with a parameter study:
 * its points with the mean wake-ups and runs and how the expect lines that
 * name the label fared, and the cheapest point (fewest wake-ups, then
 * fewest runs) whose runs all meet them. */
static void print_study(const struct run_ctx *rx, int k)
{
    const struct cli_col *cols = rx->pl->cols[k];
    int nc = rx->pl->ncols[k], mw = metric_index("wakeups"), mr = metric_index("runs");
    for (int i = 0; i < nc; i++) {
        if (!cols[i].point[0] || !rx->nruns[i] || (i > 0 && !strcmp(cols[i - 1].t.label, cols[i].t.label)))
            continue; /* one study per label, from its first column */
        const char *label = cols[i].t.label;
        int best = -1, named = 0;
        for (int c = i; c < nc && !strcmp(cols[c].t.label, label); c++) {
            named |= rx->exp_checked[c] > 0;
            if (!rx->nruns[c] || rx->exp_failed[c])
                continue;
            double wk = rx->acc[c * metric_count + mw].mean, rn = rx->acc[c * metric_count + mr].mean;
            if (best < 0 || wk < rx->acc[best * metric_count + mw].mean ||
                (wk == rx->acc[best * metric_count + mw].mean && rn < rx->acc[best * metric_count + mr].mean))
                best = c;
        }
        printf("%sparameter study of %s (mean over seeds; expect lines that name it, over every run):\n",
               rx->markdown ? "\n```\n" : "\n", label);
        printf("  %-30s %12s %12s  %s\n", "point", "wakeups", "runs", "expect");
        for (int c = i; c < nc && !strcmp(cols[c].t.label, label); c++) {
            if (!rx->nruns[c])
                continue;
            char ex[64];
            if (!rx->exp_checked[c])
                snprintf(ex, sizeof ex, "-");
            else if (!rx->exp_failed[c])
                snprintf(ex, sizeof ex, "met (%" PRIu64 ")", rx->exp_checked[c]);
            else
                snprintf(ex, sizeof ex, "FAILED %" PRIu64 " of %" PRIu64, rx->exp_failed[c], rx->exp_checked[c]);
            printf("%c %-30s %12.10g %12.10g  %s\n", c == best ? '*' : ' ', cols[c].point,
                   rx->acc[c * metric_count + mw].mean, rx->acc[c * metric_count + mr].mean, ex);
        }
        if (best >= 0)
            printf("cheapest%s: %s (fewest wake-ups, then fewest runs)\n",
                   named ? " point that meets every expect line naming it" : " point (no expect line names it)",
                   cols[best].title);
        else
            printf("no point meets every expect line naming %s\n", label);
        if (rx->markdown)
            printf("```\n");
    }
}

static void show_progress(struct run_ctx *rx, size_t j, const struct sweep_job *job)
{
    int64_t now = wall_clock_us();
    if (j + 1 < rx->njobs && now - rx->shown_us < 200000)
        return;
    rx->shown_us = now;
    double done = (double)(j + 1), left_s = (now - rx->t0_us) / 1e6 / done * ((double)rx->njobs - done);
    fprintf(stderr, "\r\033[K%s: %zu/%zu runs (%s, %s, seed %" PRIu64 "), %.0f s left", cli_prog, j + 1, rx->njobs,
            job->scn->name, job->label, job->seed, left_s);
}

/* The first result of scenario k: its accumulators start over. */
static void start_scenario(struct run_ctx *rx, int k)
{
    int nc = rx->pl->ncols[k];
    if (nc > rx->maxcols) {
        rx->maxcols = nc;
        rx->acc = xrealloc(rx->acc, (size_t)nc * (size_t)metric_count * sizeof *rx->acc);
        rx->never = xrealloc(rx->never, (size_t)nc * (size_t)metric_count * sizeof *rx->never);
        rx->status = xrealloc(rx->status, (size_t)nc * sizeof *rx->status);
        rx->fps = xrealloc(rx->fps, (size_t)nc * sizeof *rx->fps);
        rx->nruns = xrealloc(rx->nruns, (size_t)nc * sizeof *rx->nruns);
        rx->exp_checked = xrealloc(rx->exp_checked, (size_t)nc * sizeof *rx->exp_checked);
        rx->exp_failed = xrealloc(rx->exp_failed, (size_t)nc * sizeof *rx->exp_failed);
    }
    for (int i = 0; i < nc * metric_count; i++) {
        stats_init(&rx->acc[i]);
        rx->never[i] = 0;
    }
    for (int i = 0; i < nc; i++) {
        snprintf(rx->status[i], sizeof rx->status[i], "ok");
        rx->fps[i] = rx->nruns[i] = rx->exp_checked[i] = rx->exp_failed[i] = 0;
    }
    free(rx->evals);
    rx->evals = xcalloc((size_t)nc * (rx->scn[k]->nexpects + 1) * rx->pl->nseeds[k], sizeof *rx->evals);
    rx->cur = k;
}

/* The expect lines of scenario k that name column c's label, on the run
 * of seed: their outcomes in *eo (malloc'd, *neo of them), counted for the
 * parameter study.  A line that holds per seed is judged on this run; one
 * that aggregates over the seeds (mean(...), pNN(...)) is judged in the
 * run of the last seed, over them all, when every seed of the column ran
 * here (not in a shard or a --resume that has only some of them). */
static void run_expects(struct run_ctx *rx, int k, int c, uint64_t seed, const struct sim_result *res,
                        struct expect_outcome **eo, uint32_t *neo)
{
    const struct scenario *s = rx->scn[k];
    const char *label = rx->pl->cols[k][c].t.label;
    size_t ns = rx->pl->nseeds[k], si = seed - rx->pl->lo[k];
    double *tv = &rx->evals[(size_t)c * s->nexpects * ns];
    for (uint32_t e = 0; e < s->nexpects; e++)
        tv[(size_t)e * ns + si] = cli_expect_names(&s->expects[e], label) ? cli_expect_measure(s, &s->expects[e], res)
                                                                          : NAN;
    *eo = xcalloc(s->nexpects + 1, sizeof **eo);
    *neo = cli_expect_outcomes(s, label, tv, si, ns, *eo);
    if (rx->nruns[c] < ns) { /* some seeds ran elsewhere: keep the per-seed lines only */
        uint32_t n = 0;
        for (uint32_t e = 0; e < *neo; e++)
            if ((*eo)[e].ex->agg == EXPECT_EACH)
                (*eo)[n++] = (*eo)[e];
        *neo = n;
    }
    for (uint32_t e = 0; e < *neo; e++) {
        rx->exp_checked[c]++;
        rx->exp_failed[c] += !(*eo)[e].ok;
    }
}

/* Hands run j to the database writer (starting it with the first). */
static int store_job(struct run_ctx *rx, size_t full, int k, int c, uint64_t seed, struct sweep_out *out,
                     struct expect_outcome *eo, uint32_t neo)
{
    const struct cli_col *col = &rx->pl->cols[k][c];
    if (!rx->writer)
        rx->writer = store_writer_start(rx->st, 64);
    struct store_run sr = {.scn = rx->scn[k], .policy = col->t.label, .base_policy = col->t.ops->name,
                           .params = col->t.params_text, .seed = seed, .version = SIMRUN_VERSION, .res = &out->res,
                           .wall_us = out->wall_us, .expects = eo, .nexpects = neo,
                           .trace = out->trace, .plan = rx->pl->hash, .job = (int64_t)full,
                           .sweep = col->point};
    out->trace = NULL; /* the writer's now */
    char err[512];
    if (store_writer_put(rx->writer, &sr, &out->res, err, sizeof err) != 0) {
        if (rx->progress)
            fprintf(stderr, "\r\033[K");
        return cli_write_error(err);
    }
    return 0;
}

/* A CSV field in double quotes (a quote doubled). */
static void csv_text(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

/* A JSON string. */
static void json_text(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* A number for CSV ("inf" when infinite: a censored percentile), or for
 * JSON (null; the caller says why). */
static void put_number(double v, int json)
{
    if (isinf(v) || isnan(v))
        printf("%s", json ? "null" : isnan(v) ? "" : v > 0 ? "inf" : "-inf");
    else
        printf("%.17g", v);
}

/* The CSV rows (one per metric) or the JSON object of one run. */
static void emit_run(struct run_ctx *rx, const struct scenario *s, const struct cli_target *t, uint64_t seed,
                     const struct sim_result *res)
{
    if (rx->json) {
        printf("%s\n  {\"kind\": \"run\", \"scenario\": ", rx->first_json ? "" : ",");
        json_text(s->name);
        printf(", \"policy\": ");
        json_text(t->label);
        printf(", \"params\": ");
        json_text(t->params_text);
        printf(", \"seed\": %" PRIu64 ", \"status\": \"%s\", \"fingerprint\": \"%016" PRIx64 "\", \"metrics\": {", seed,
               sim_status_name(res->status), res->fingerprint);
        rx->first_json = 0;
    }
    int first = 1;
    for (int m = 0; m < metric_count; m++) {
        if (!rx->show[m])
            continue;
        const struct metric_info *mi = &metric_table[m];
        double v = 0;
        metric_get(&res->ck, -1, mi->name, &v);
        if (rx->csv) {
            printf("%s,%s,", s->name, t->label);
            csv_text(t->params_text);
            printf(",%" PRIu64 ",%s,%016" PRIx64 ",%s,", seed, sim_status_name(res->status), res->fingerprint,
                   mi->name);
            put_number(v, 0);
            printf(",%s,1,,\n", metric_unit(mi));
        }
        if (rx->json) {
            printf("%s\"%s\": {\"value\": ", first ? "" : ", ", mi->name);
            put_number(v, 1);
            printf(", \"unit\": \"%s\"%s}", metric_unit(mi), isinf(v) ? ", \"censored\": true" : "");
        }
        first = 0;
    }
    if (rx->json)
        printf("}}");
}

/* A summary over the seeds of one target's metric m: the mean (infinite
 * when a seed was censored; "never" seeds of recovery_time kept out), its
 * 95 % interval (NaN without one) and n, the seeds with a value. */
static double metric_summary(const struct stats_acc *a, const struct metric_info *mi, double *lo, double *hi,
                             uint64_t *n)
{
    *lo = *hi = NAN;
    *n = a->n + a->ninf;
    if (a->ninf)
        return INFINITY;
    if (!a->n)
        return NAN;
    stats_interval95(a, mi->is_bool ? STATS_SHARE : mi->is_duration ? STATS_NONNEG : STATS_COUNT, lo, hi);
    return a->mean;
}

/* After the last run of column c of scenario k here: its summary rows
 * (CSV) or object (JSON), over its seeds (n: those that ran here). */
static void emit_summary(struct run_ctx *rx, int k, int c)
{
    const struct scenario *s = rx->scn[k];
    const struct cli_target *t = &rx->pl->cols[k][c].t;
    int ti = c;
    char seeds[64];
    snprintf(seeds, sizeof seeds, "%" PRIu64 "..%" PRIu64, rx->pl->lo[k], rx->pl->lo[k] + rx->pl->nseeds[k] - 1);
    if (rx->json) {
        printf(",\n  {\"kind\": \"summary\", \"scenario\": ");
        json_text(s->name);
        printf(", \"policy\": ");
        json_text(t->label);
        printf(", \"params\": ");
        json_text(t->params_text);
        printf(", \"seeds\": \"%s\", \"n\": %" PRIu64 ", \"status\": \"%s\", \"metrics\": {", seeds, rx->nruns[c],
               rx->status[c]);
    }
    int first = 1;
    for (int m = 0; m < metric_count; m++) {
        if (!rx->show[m])
            continue;
        const struct metric_info *mi = &metric_table[m];
        const struct stats_acc *a = &rx->acc[ti * metric_count + m];
        uint64_t never = rx->never[ti * metric_count + m], n;
        double lo, hi, mean = metric_summary(a, mi, &lo, &hi, &n);
        if (rx->csv) {
            printf("%s,%s,", s->name, t->label);
            csv_text(t->params_text);
            printf(",%s,summary,,%s,", seeds, mi->name);
            put_number(mean, 0);
            printf(",%s,%" PRIu64 ",", metric_unit(mi), n);
            put_number(lo, 0);
            putchar(',');
            put_number(hi, 0);
            putchar('\n');
        }
        if (rx->json) {
            printf("%s\"%s\": {\"mean\": ", first ? "" : ", ", mi->name);
            put_number(mean, 1);
            printf(", \"ci95\": ");
            if (isnan(lo)) {
                printf("null");
            } else {
                printf("[");
                put_number(lo, 1);
                printf(", ");
                put_number(hi, 1);
                printf("]");
            }
            printf(", \"n\": %" PRIu64 ", \"unit\": \"%s\"", n, metric_unit(mi));
            if (a->ninf)
                printf(", \"censored\": true, \"censored_seeds\": %" PRIu64, a->ninf);
            if (never)
                printf(", \"never_seeds\": %" PRIu64, never);
            printf("}");
        }
        first = 0;
    }
    if (rx->json)
        printf("}}");
}

/* Run c's metrics into the statistics of its column, and its CSV or JSON. */
static void run_output(struct run_ctx *rx, int k, int c, uint64_t seed, const struct sim_result *res)
{
    for (int m = 0; m < metric_count; m++) {
        double v = 0;
        metric_get(&res->ck, -1, metric_table[m].name, &v);
        if (metric_table[m].is_duration && v < 0)
            rx->never[c * metric_count + m]++;
        else
            stats_add(&rx->acc[c * metric_count + m], v); /* infinite: counted in ninf */
    }
    if (rx->csv || rx->json)
        emit_run(rx, rx->scn[k], &rx->pl->cols[k][c].t, seed, res);
}

/* Takes job j's result: the statistics, the expect lines, the CSV/JSON
 * lines, the database, and after the last job of a scenario its table. */
static int run_sink(void *ctx, size_t j, struct sweep_out *out)
{
    struct run_ctx *rx = ctx;
    size_t full;
    int k, c;
    uint64_t seed;
    job_place(rx, j, &full, &k, &c, &seed);
    const struct sim_result *res = &out->res;
    rx->delivered++;
    if (k != rx->cur)
        start_scenario(rx, k);
    if (rx->progress) {
        struct sweep_job job;
        run_job_at(rx, j, &job);
        show_progress(rx, j, &job);
    }
    if (res->status != SIM_OK) {
        if (rx->progress)
            fprintf(stderr, "\r\033[K");
        const struct scenario *s = rx->scn[k];
        const char *label = rx->pl->cols[k][c].t.label;
        if (cli_memory_stop(s, label, seed, res)) {
            rx->memory_stop = 1;
        } else {
            int ll = res->status == SIM_LIVELOCK ? cli_expect_livelock_line(s, label) : 0;
            char why[160] = "";
            if (ll)
                snprintf(why, sizeof why, " (expected: %s:%d says this variant livelocks)", s->path, ll);
            fprintf(stderr, "%s: %s under %s (seed %" PRIu64 "): %s%s\n", cli_prog, s->path,
                    rx->pl->cols[k][c].title, seed, res->status_msg, why);
        }
        snprintf(rx->status[c], sizeof rx->status[c], "%s", sim_status_name(res->status));
    }
    rx->fps[c] = res->fingerprint;
    rx->nruns[c]++;
    struct expect_outcome *eo;
    uint32_t neo;
    run_expects(rx, k, c, seed, res, &eo, &neo);
    run_output(rx, k, c, seed, res);
    int last = j + 1 == rx->njobs, last_col = last;
    if (!last) {
        size_t nf;
        int nk, nc;
        uint64_t ns;
        job_place(rx, j + 1, &nf, &nk, &nc, &ns);
        last = nk != k;
        last_col = last || nc != c;
    }
    if ((rx->csv || rx->json) && last_col && rx->pl->nseeds[k] > 1)
        emit_summary(rx, k, c);
    if (rx->st) {
        int rc = store_job(rx, full, k, c, seed, out, eo, neo); /* takes out->res and eo */
        if (rc)
            return rc;
    } else {
        free(eo);
    }
    if (last && !rx->json && !rx->csv) {
        if (rx->progress)
            fprintf(stderr, "\r\033[K");
        print_table(rx, k);
        print_study(rx, k);
        if (j + 1 < rx->njobs)
            printf("\n");
        fflush(stdout);
    }
    return 0;
}

/* Set by SIGINT or SIGTERM: the sweep starts no more runs, finishes those
 * under way and stores them (the signal's default action comes back, so a
 * second one stops at once). */
static volatile sig_atomic_t run_stop;

static void on_stop_signal(int sig)
{
    static const char msg[] = "\nsimrun: stopping after the runs under way (again to stop now)\n";
    (void)sig;
    run_stop = 1;
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
}

/* SIGINT (unless it was ignored when simrun started: `nohup`, a
 * background job of a script) and SIGTERM (what Slurm and kill send). */
static void catch_stop_signals(void)
{
    struct sigaction sa = {.sa_handler = on_stop_signal, .sa_flags = SA_RESETHAND}, old;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    if (sigaction(SIGINT, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
        sigaction(SIGINT, &sa, NULL);
}

/* Runs the selected jobs of the plan in one sweep, the output framed for
 * the format; the database is written by a dedicated writer. */
static int run_sweep(const struct cli_opts *o, struct scenario **scn, const struct cli_plan *pl, struct store *st,
                     FILE *trace)
{
    struct run_ctx ctx = {.o = o, .scn = scn, .pl = pl, .njobs = pl->sel ? pl->nsel : pl->nfull, .st = st,
                          .json = !strcmp(o->format, "json"), .csv = !strcmp(o->format, "csv"),
                          .markdown = !strcmp(o->format, "markdown"), .first_json = 1, .cur = -1};
    struct run_ctx *rx = &ctx;
    if (parse_metric_list(o->metrics, rx->show))
        return 2;
    rx->progress = isatty(2) && rx->njobs > 1;
    rx->t0_us = wall_clock_us();
    if (rx->csv)
        printf("scenario,policy,params,seed,status,fingerprint,metric,value,unit,n,ci95_lo,ci95_hi\n");
    if (rx->json)
        printf("[");
    struct sweep_opts so = {.workers = cli_jobs(o), .max_events = o->max_events,
                            .max_memory = cli_max_memory(o), .spool_trace = rx->st && o->store_trace,
                            .trace = trace, .stop = &run_stop};
    char err[512] = "";
    catch_stop_signals();
    int rc = sweep_run(rx->njobs, &so, run_job_at, run_sink, rx, err, sizeof err);
    if (rc == SWEEP_EWRITE) {
        if (rx->progress)
            fprintf(stderr, "\r\033[K");
        rc = cli_write_error(err);
    } else if (rc < 0) {
        fprintf(stderr, "%s: error: %s\n", cli_prog, err);
        rc = 3;
    }
    if (rx->writer && store_writer_finish(rx->writer, err, sizeof err) != 0 && (!rc || rc == SWEEP_STOPPED))
        rc = cli_write_error(err);
    if (rx->progress)
        fprintf(stderr, "\r\033[K");
    if (rc == SWEEP_STOPPED)
        fprintf(stderr, "%s: interrupted after %zu of %zu runs%s%s%s\n", cli_prog, rx->delivered, rx->njobs,
                st ? " (each stored whole in " : "", st ? o->db : "",
                st ? "; 'simrun run' with the same arguments and --resume runs the rest)" : "");
    if (rx->json)
        printf("\n]\n");
    free(rx->acc);
    free(rx->never);
    free(rx->status);
    free(rx->fps);
    free(rx->nruns);
    free(rx->exp_checked);
    free(rx->exp_failed);
    free(rx->evals);
    if (rc == 0 && rx->memory_stop)
        rc = 2;
    return rc;
}

static int cmd_run(int argc, char **argv)
{
    struct cli_opts o = {.format = "table"};
    int rc = cli_parse(&cli_cmd_run, argc, argv, &o);
    if (rc)
        return rc;
    if (o.npaths == 0)
        return cli_usage_error("%s", "no scenario given");
    if (o.resume && !o.db)
        return cli_usage_error("%s", "--resume needs --db FILE (the database to resume)");
    if (o.store_trace && !o.db)
        return cli_usage_error("%s", "--store-trace needs --db FILE (the database to store the trace in); "
                                     "--trace FILE writes it to a file");
    if ((rc = cli_check_policy_list(o.policies)) || (rc = cli_check_db_path("--db", o.db)))
        return rc;
    int show[M_COUNT];
    if ((rc = parse_metric_list(o.metrics, show)))
        return rc;                     /* checked before anything runs; run_sweep parses it again */
    struct scenario *scn[CLI_MAX_SCENARIOS];
    if ((rc = cli_load_all(&o, scn)))
        return rc;
    struct cli_plan pl = {0};
    struct store *st = NULL;
    FILE *trace = NULL;
    if ((rc = cli_check_sets(&o, scn)) || (rc = cli_plan_make(&o, scn, &pl)))
        goto out;
    trace = open_trace(o.trace);
    if ((o.trace && !trace) || (rc = cli_open_store(o.db, &st))) {
        rc = rc ? rc : CLI_EXIT_WRITE;
        goto out;
    }
    if ((rc = cli_plan_select(&pl, &o, scn, st)))
        goto out;
    if (o.resume)
        fprintf(stderr, "%s: --resume: %zu of the %zu runs are already in %s; %zu to run\n", cli_prog, pl.stored,
                o.shard_n ? pl.stored + pl.nsel : pl.nfull, o.db, pl.nsel);
    rc = run_sweep(&o, scn, &pl, st, trace);
out:
    if (trace && (fflush(trace) != 0 || ferror(trace)) && rc == 0) {
        char why[600];
        snprintf(why, sizeof why, "trace '%s': %s", o.trace, strerror(errno ? errno : EIO));
        rc = cli_write_error(why);
    }
    if (trace && trace != stdout)
        fclose(trace);
    store_close(st);
    cli_plan_free(&pl);
    cli_free_all(scn, o.npaths);
    return rc;
}
