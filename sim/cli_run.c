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
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
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
            fprintf(stderr, "%s: error: unknown metric '%s' in --metrics (valid: %s, or a family such as latency.*)\n",
                    cli_prog, w, names);
            return 2;
        }
        any = 1;
    }
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
    CLI_CALLBACK(0, "seed", "N", cli_opt_seed, "master seed (default: the scenario's 'seed', else 1)"),
    CLI_CALLBACK(0, "seeds", "A..B", cli_opt_seeds,
                 "run every seed from A to B; tables show the mean \xc2\xb1 the\n"
                 "half-width of its 95% confidence interval (Student t);\n"
                 "every seed's rows go to the database"),
    CLI_CALLBACK('j', "jobs", "N", cli_opt_jobs,
                 "run N simulations at once in worker processes; the\n"
                 "output and the database are the same as with -j 1"),
    CLI_CALLBACK(0, "set", "POLICY.KEY=VALUE", cli_opt_set,
                 "set a policy parameter (repeatable; overrides 'set' lines)"),
    CLI_STRING(0, "db", "FILE", struct cli_opts, db, "write results to this SQLite database (one transaction per run)"),
    CLI_FLAG(0, "store-trace", struct cli_opts, store_trace, "with --db: also store the event trace of each run"),
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
                   "side.  Without -p: every registered policy plus the scenario's variants.\n",
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

/* Splits a comma list into labels (pointers into buf). */
static int split_list(char *buf, const char **out, int max)
{
    int n = 0;
    for (char *p = strtok(buf, ","); p && n < max; p = strtok(NULL, ","))
        out[n++] = p;
    return n;
}

/* --- the sweep ----------------------------------------------------------------------------- */

/* What the run command's sweep needs to describe jobs and to take their
 * results in order: job j belongs to scenario k when first_job[k] <= j <
 * first_job[k + 1]; within it, target (j - first_job[k]) / nseeds[k] and
 * seed lo[k] + (j - first_job[k]) % nseeds[k], the order of a serial run. */
struct run_ctx {
    const struct cli_opts *o;
    struct scenario **scn;
    struct cli_target *targets;    /* [npaths * CLI_MAX_LABELS] */
    const int *ntarg;
    uint64_t lo[CLI_MAX_SCENARIOS], nseeds[CLI_MAX_SCENARIOS];
    size_t first_job[CLI_MAX_SCENARIOS + 1];
    size_t njobs;
    struct store *st;
    int json, csv, markdown, first_json;
    int show[M_COUNT];             /* --metrics: which metrics are printed */
    int memory_stop;               /* a run reached the memory budget: exit 2 */
    /* the scenario being received: per target and metric, over its seeds */
    struct stats_acc *acc;         /* [CLI_MAX_LABELS * metric_count] */
    uint64_t *never;               /* durations that were "never", kept out of acc */
    char status[CLI_MAX_LABELS][32];
    uint64_t fps[CLI_MAX_LABELS];
    /* with --db: each expect line's value per target and seed, for the
     * outcomes stored with each run ([ntarg][nexpects][nseeds]) */
    double *evals;
    struct expect_outcome *eo;     /* [nexpects] */
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

static int job_scenario(const struct run_ctx *rx, size_t j)
{
    int k = 0;
    while (j >= rx->first_job[k + 1])
        k++;
    return k;
}

static void run_job_at(void *ctx, size_t j, struct sweep_job *out)
{
    struct run_ctx *rx = ctx;
    int k = job_scenario(rx, j);
    size_t r = j - rx->first_job[k];
    const struct cli_target *t = &rx->targets[k * CLI_MAX_LABELS + (int)(r / rx->nseeds[k])];
    *out = (struct sweep_job){.scn = rx->scn[k], .ops = t->ops, .ps = &t->ps, .label = t->label,
                              .seed = rx->lo[k] + r % rx->nseeds[k]};
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

/* The line that heads a scenario's table: where it comes from, its clock
 * and its seeds. */
static void table_head(const struct run_ctx *rx, int k)
{
    const struct scenario *s = rx->scn[k];
    uint64_t nseeds = rx->nseeds[k];
    char start[40], hz[40];
    cal_format_utc(s->start_utc_s, start, sizeof start);
    fmt_duration((double)s->horizon_us, hz, sizeof hz);
    if (rx->markdown)
        printf("### %s\n\n`%s`: start %s, horizon %s, ", s->name, s->path, start, hz);
    else
        printf("%s (%s): start %s, horizon %s, ", s->name, s->path, start, hz);
    if (nseeds > 1)
        printf("seeds %" PRIu64 "..%" PRIu64 " (mean \xc2\xb1 95%% confidence half-width)\n", rx->lo[k],
               rx->lo[k] + nseeds - 1);
    else
        printf("seed %" PRIu64 "\n", rx->lo[k]);
}

/* The cells of scenario k's table, [row][target] of CELL bytes: a row per
 * metric, then status and fingerprint; w[i] gets column i's width. */
enum { CELL = 64 };
static char *table_cells(const struct run_ctx *rx, int k, size_t *w)
{
    int nt = rx->ntarg[k];
    char *cells = xcalloc((size_t)(metric_count + 2) * (size_t)nt, CELL);
    for (int i = 0; i < nt; i++) {
        w[i] = fmt_width(rx->targets[k * CLI_MAX_LABELS + i].label);
        for (int m = 0; m < metric_count + 2; m++) {
            char *c = cells + ((size_t)m * (size_t)nt + (size_t)i) * CELL;
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

/* The comparison table of scenario k, policies side by side: the value of
 * each whole-scenario metric (--metrics: those listed), or over several
 * seeds its mean +- the half-width of its 95 % confidence interval; as
 * aligned text, or as a Markdown table. */
static void print_table(const struct run_ctx *rx, int k)
{
    int nt = rx->ntarg[k], md = rx->markdown;
    uint64_t nseeds = rx->nseeds[k];
    table_head(rx, k);
    size_t w[CLI_MAX_LABELS];
    char *cells = table_cells(rx, k, w);
    if (md)
        printf("\n| metric |");
    else
        printf("%-16s", "metric");
    for (int i = 0; i < nt; i++) {
        printf(md ? " " : "  ");
        print_cell(rx->targets[k * CLI_MAX_LABELS + i].label, md ? 0 : w[i], 0);
        printf(md ? " |" : "");
    }
    if (md) {
        printf("\n|:--|");
        for (int i = 0; i < nt; i++)
            printf("--:|");
    }
    printf("\n");
    for (int m = 0; m < metric_count + (nseeds == 1 ? 2 : 1); m++) {
        if (m < metric_count && !rx->show[m])
            continue;
        const char *name = m < metric_count ? metric_table[m].name : m == metric_count ? "status" : "fingerprint";
        if (md)
            printf("| %s |", name);
        else
            printf("%-16s", name);
        for (int i = 0; i < nt; i++) {
            printf(md ? " " : "  ");
            print_cell(cells + ((size_t)m * (size_t)nt + (size_t)i) * CELL, md ? 0 : w[i], 0);
            printf(md ? " |" : "");
        }
        printf("\n");
    }
    free(cells);
    for (int i = 0; i < nt; i++) {
        const struct cli_target *t = &rx->targets[k * CLI_MAX_LABELS + i];
        if (t->params_text[0])
            printf(md ? "\n- `%s`: %s" : "  %s: %s\n", t->label, t->params_text);
    }
    if (md)
        printf("\n");
    if (k + 1 < rx->o->npaths)
        printf("\n");
}

/* --- CSV and JSON ------------------------------------------------------------------------------ */

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

/* After the last seed of target ti of scenario k: its summary rows (CSV)
 * or object (JSON), over its seeds. */
static void emit_summary(struct run_ctx *rx, int k, int ti)
{
    const struct scenario *s = rx->scn[k];
    const struct cli_target *t = &rx->targets[k * CLI_MAX_LABELS + ti];
    char seeds[64];
    snprintf(seeds, sizeof seeds, "%" PRIu64 "..%" PRIu64, rx->lo[k], rx->lo[k] + rx->nseeds[k] - 1);
    if (rx->json) {
        printf(",\n  {\"kind\": \"summary\", \"scenario\": ");
        json_text(s->name);
        printf(", \"policy\": ");
        json_text(t->label);
        printf(", \"params\": ");
        json_text(t->params_text);
        printf(", \"seeds\": \"%s\", \"n\": %" PRIu64 ", \"status\": \"%s\", \"metrics\": {", seeds, rx->nseeds[k],
               rx->status[ti]);
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

/* Takes job j's result: the store, the CSV/JSON lines, the statistics, and
 * after the last job of a scenario its table. */
static int run_sink(void *ctx, size_t j, struct sweep_out *out)
{
    struct run_ctx *rx = ctx;
    const struct cli_opts *o = rx->o;
    int k = job_scenario(rx, j);
    size_t r = j - rx->first_job[k];
    int ti = (int)(r / rx->nseeds[k]);
    const struct cli_target *t = &rx->targets[k * CLI_MAX_LABELS + ti];
    const struct scenario *s = rx->scn[k];
    uint64_t seed = rx->lo[k] + r % rx->nseeds[k];
    const struct sim_result *res = &out->res;
    if (r == 0) {
        if (!rx->acc) {
            rx->acc = xcalloc((size_t)CLI_MAX_LABELS * (size_t)metric_count, sizeof *rx->acc);
            rx->never = xcalloc((size_t)CLI_MAX_LABELS * (size_t)metric_count, sizeof *rx->never);
        }
        for (int i = 0; i < CLI_MAX_LABELS * metric_count; i++) {
            stats_init(&rx->acc[i]);
            rx->never[i] = 0;
        }
        for (int i = 0; i < CLI_MAX_LABELS; i++)
            snprintf(rx->status[i], sizeof rx->status[i], "ok");
        if (rx->st) {
            free(rx->evals);
            free(rx->eo);
            rx->evals = xcalloc((size_t)rx->ntarg[k] * (s->nexpects + 1) * rx->nseeds[k], sizeof *rx->evals);
            rx->eo = xcalloc(s->nexpects + 1, sizeof *rx->eo);
        }
    }
    if (rx->progress) {
        struct sweep_job job;
        run_job_at(rx, j, &job);
        show_progress(rx, j, &job);
    }
    if (res->status != SIM_OK) {
        if (rx->progress)
            fprintf(stderr, "\r\033[K");
        if (cli_memory_stop(s, t->label, seed, res)) {
            rx->memory_stop = 1;
        } else {
            int ll = res->status == SIM_LIVELOCK ? cli_expect_livelock_line(s, t->label) : 0;
            char why[160] = "";
            if (ll)
                snprintf(why, sizeof why, " (expected: %s:%d says this variant livelocks)", s->path, ll);
            fprintf(stderr, "%s: %s under %s (seed %" PRIu64 "): %s%s\n", cli_prog, s->path, t->label, seed,
                    res->status_msg, why);
        }
        snprintf(rx->status[ti], sizeof rx->status[ti], "%s", sim_status_name(res->status));
    }
    rx->fps[ti] = res->fingerprint;
    if (rx->st) {
        size_t ns = rx->nseeds[k], si = r % ns;
        double *tv = &rx->evals[(size_t)ti * s->nexpects * ns];
        for (uint32_t e = 0; e < s->nexpects; e++)
            tv[(size_t)e * ns + si] = cli_expect_names(&s->expects[e], t->label)
                                          ? cli_expect_measure(s, &s->expects[e], res)
                                          : NAN;
        uint32_t neo = cli_expect_outcomes(s, t->label, tv, si, ns, rx->eo);
        struct store_run sr = {.scn = s, .policy = t->label, .base_policy = t->ops->name, .params = t->params_text,
                               .seed = seed, .version = SIMRUN_VERSION, .res = res, .wall_us = out->wall_us,
                               .with_trace = o->store_trace, .expects = rx->eo, .nexpects = neo};
        int64_t id;
        char err[512];
        if (store_write_run(rx->st, &sr, &id, err, sizeof err) != 0) {
            if (rx->progress)
                fprintf(stderr, "\r\033[K");
            return cli_write_error(err);
        }
    }
    for (int m = 0; m < metric_count; m++) {
        double v = 0;
        metric_get(&res->ck, -1, metric_table[m].name, &v);
        if (metric_table[m].is_duration && v < 0)
            rx->never[ti * metric_count + m]++;
        else
            stats_add(&rx->acc[ti * metric_count + m], v); /* infinite: counted in ninf */
    }
    if (rx->csv || rx->json) {
        emit_run(rx, s, t, seed, res);
        if (rx->nseeds[k] > 1 && r % rx->nseeds[k] == rx->nseeds[k] - 1)
            emit_summary(rx, k, ti);
    }
    if (j + 1 == rx->first_job[k + 1] && !rx->json && !rx->csv) {
        if (rx->progress)
            fprintf(stderr, "\r\033[K");
        print_table(rx, k);
        fflush(stdout);
    }
    return 0;
}

/* Resolves every target of every scenario (-p, else all labels) before
 * anything is simulated: targets[k * CLI_MAX_LABELS + i], ntarg[k] of
 * them.  0, or 2 after printing the error. */
static int resolve_targets(const struct cli_opts *o, struct scenario **scn, struct cli_target *targets, int *ntarg)
{
    char polbuf[1024];
    for (int k = 0; k < o->npaths; k++) {
        const char *labels[CLI_MAX_LABELS];
        int nl;
        if (o->policies) {
            snprintf(polbuf, sizeof polbuf, "%s", o->policies);
            nl = split_list(polbuf, labels, CLI_MAX_LABELS);
        } else {
            nl = cli_all_labels(scn[k], labels, CLI_MAX_LABELS);
        }
        if (nl == 0)
            return cli_usage_error("empty policy list '%s'", o->policies ? o->policies : "");
        for (int i = 0; i < nl; i++) {
            char msg[512];
            int rc = cli_resolve_target(scn[k], labels[i], o->sets, o->nsets, &targets[k * CLI_MAX_LABELS + i], msg,
                                        sizeof msg);
            if (rc == -2) {
                fprintf(stderr, "%s\n", msg);
                return 2;
            }
            if (rc) {
                fprintf(stderr, "%s: error: %s: %s\n", cli_prog, scn[k]->path, msg);
                return 2;
            }
        }
        ntarg[k] = nl;
    }
    return 0;
}

/* Numbers the jobs of every scenario (targets x seeds) and runs them in
 * one sweep, the output framed for the format. */
static int run_sweep(const struct cli_opts *o, struct scenario **scn, struct cli_target *targets, const int *ntarg,
                     struct store *st, FILE *trace)
{
    struct run_ctx ctx = {.o = o, .scn = scn, .targets = targets, .ntarg = ntarg, .st = st,
                          .json = !strcmp(o->format, "json"), .csv = !strcmp(o->format, "csv"),
                          .markdown = !strcmp(o->format, "markdown"), .first_json = 1};
    struct run_ctx *rx = &ctx;
    if (parse_metric_list(o->metrics, rx->show))
        return 2;
    size_t njobs = 0;
    for (int k = 0; k < o->npaths; k++) {
        const struct scenario *s = rx->scn[k];
        rx->lo[k] = o->have_seed ? o->seed_lo : s->seed;
        rx->nseeds[k] = (o->have_seed ? o->seed_hi : s->seed) - rx->lo[k] + 1;
        rx->first_job[k] = njobs;
        njobs += (size_t)rx->ntarg[k] * (size_t)rx->nseeds[k];
    }
    rx->first_job[o->npaths] = njobs;
    rx->njobs = njobs;
    rx->progress = isatty(2) && njobs > 1;
    rx->t0_us = wall_clock_us();
    if (rx->csv)
        printf("scenario,policy,params,seed,status,fingerprint,metric,value,unit,n,ci95_lo,ci95_hi\n");
    if (rx->json)
        printf("[");
    struct sweep_opts so = {.workers = o->jobs ? o->jobs : 1, .max_events = o->max_events,
                            .max_memory = cli_max_memory(o), .keep_trace = rx->st && o->store_trace,
                            .trace = trace};
    char err[512] = "";
    int rc = sweep_run(njobs, &so, run_job_at, run_sink, rx, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "%s: error: %s\n", cli_prog, err);
        rc = 3;
    }
    if (rx->progress)
        fprintf(stderr, "\r\033[K");
    if (rx->json)
        printf("\n]\n");
    free(rx->acc);
    free(rx->never);
    free(rx->evals);
    free(rx->eo);
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
    int show[M_COUNT];
    if ((rc = parse_metric_list(o.metrics, show)))
        return rc;                     /* checked before anything runs; run_sweep parses it again */
    struct scenario *scn[CLI_MAX_SCENARIOS];
    if ((rc = cli_load_all(&o, scn)))
        return rc;
    if ((rc = cli_check_sets(&o, scn))) {
        cli_free_all(scn, o.npaths);
        return rc;
    }
    struct cli_target *targets = xcalloc((size_t)o.npaths * CLI_MAX_LABELS, sizeof *targets);
    int ntarg[CLI_MAX_SCENARIOS];
    struct store *st = NULL;
    FILE *trace = NULL;
    if ((rc = resolve_targets(&o, scn, targets, ntarg)))
        goto out;
    trace = open_trace(o.trace);
    if ((o.trace && !trace) || (rc = cli_open_store(o.db, &st))) {
        rc = rc ? rc : CLI_EXIT_WRITE;
        goto out;
    }
    rc = run_sweep(&o, scn, targets, ntarg, st, trace);
out:
    if (trace && (fflush(trace) != 0 || ferror(trace)) && rc == 0) {
        char why[600];
        snprintf(why, sizeof why, "trace '%s': %s", o.trace, strerror(errno ? errno : EIO));
        rc = cli_write_error(why);
    }
    if (trace && trace != stdout)
        fclose(trace);
    store_close(st);
    free(targets);
    cli_free_all(scn, o.npaths);
    return rc;
}
