/* cli_run.c: `simrun run` (see cli.h).
 *
 * The runs of every scenario x target x seed are the jobs of one sweep
 * (sim/sweep.h), which may spread them over worker processes (-j) but
 * delivers the results here in serial order, so the database, the tables
 * and the traces do not depend on -j.  Everything is resolved (scenarios,
 * policies, --set) before the database opens. */
#include <errno.h>
#include <inttypes.h>
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

static int opt_jobs(void *opts, const char *v)
{
    struct cli_opts *o = opts;
    uint64_t nj;
    if (cli_parse_u64(v, &nj) || nj < 1 || nj > SWEEP_MAX_WORKERS)
        return cli_usage_error("bad -j '%s' (expected 1..256 worker processes)", v);
    o->jobs = (int)nj;
    return 0;
}

static int opt_format(void *opts, const char *v)
{
    struct cli_opts *o = opts;
    if (strcmp(v, "table") && strcmp(v, "csv") && strcmp(v, "json"))
        return cli_usage_error("unknown format '%s' (valid: table, csv, json)", v);
    o->format = v;
    return 0;
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
    CLI_CALLBACK('j', "jobs", "N", opt_jobs,
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
    CLI_CALLBACK(0, "format", "FMT", opt_format, "table (default), csv or json"),
    CLI_CALLBACK(0, "max-events", "N", opt_max_events, "stop a run after N events (default 4000000000)"),
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

/* Checks that every --set names a known policy (or a variant of some
 * scenario) and a valid key=value for it. */
static int check_sets(const struct cli_opts *o, struct scenario **scn)
{
    for (int i = 0; i < o->nsets; i++) {
        const struct cli_set *cs = &o->sets[i];
        const char *base = cs->policy;
        for (int k = 0; k < o->npaths; k++)
            for (uint16_t v = 0; v < scn[k]->nvariants; v++)
                if (!strcmp(scn[k]->variants[v].name, cs->policy))
                    base = scn[k]->variants[v].base;
        char msg[512];
        if (policy_check_param(base, cs->key, cs->value, msg, sizeof msg) != 0) {
            char raw[sizeof cs->policy + sizeof cs->key + sizeof cs->value + 2], e[SCN_QUOTE_MAX];
            snprintf(raw, sizeof raw, "%s.%s=%s", cs->policy, cs->key, cs->value);
            scn_escape(e, sizeof e, raw);
            fprintf(stderr, "%s: error: --set %s: %s\n", cli_prog, e, msg);
            return 2;
        }
    }
    return 0;
}

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
    int json, csv, first_json;
    /* the scenario being received: per target and metric, over its seeds */
    struct stats_acc *acc;         /* [CLI_MAX_LABELS * metric_count] */
    uint64_t *never;               /* durations that were "never", kept out of acc */
    char status[CLI_MAX_LABELS][32];
    uint64_t fps[CLI_MAX_LABELS];
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

/* The comparison table of scenario k, policies side by side: the value of
 * each whole-scenario metric, or over several seeds its mean +- the
 * half-width of its 95 % confidence interval. */
static void print_table(const struct run_ctx *rx, int k)
{
    const struct scenario *s = rx->scn[k];
    int nt = rx->ntarg[k];
    uint64_t nseeds = rx->nseeds[k];
    char start[40], hz[40];
    cal_format_utc(s->start_utc_s, start, sizeof start);
    fmt_duration((double)s->horizon_us, hz, sizeof hz);
    printf("%s (%s): start %s, horizon %s, ", s->name, s->path, start, hz);
    if (nseeds > 1)
        printf("seeds %" PRIu64 "..%" PRIu64 " (mean \xc2\xb1 95%% confidence half-width)\n", rx->lo[k],
               rx->lo[k] + nseeds - 1);
    else
        printf("seed %" PRIu64 "\n", rx->lo[k]);
    enum { CELL = 64 };
    char *cells = xcalloc((size_t)(metric_count + 2) * (size_t)nt, CELL);
#define CELLP(m, i) (cells + ((size_t)(m) * (size_t)nt + (size_t)(i)) * CELL)
    size_t w[CLI_MAX_LABELS];
    for (int i = 0; i < nt; i++) {
        w[i] = fmt_width(rx->targets[k * CLI_MAX_LABELS + i].label);
        for (int m = 0; m < metric_count; m++) {
            const struct stats_acc *a = &rx->acc[i * metric_count + m];
            fmt_metric_ci(&metric_table[m], a, rx->never[i * metric_count + m], CELLP(m, i), CELL);
        }
        snprintf(CELLP(metric_count, i), CELL, "%s", rx->status[i]);
        snprintf(CELLP(metric_count + 1, i), CELL, "%08" PRIx64, rx->fps[i] >> 32);
        for (int m = 0; m < metric_count + 2; m++)
            if (fmt_width(CELLP(m, i)) > w[i])
                w[i] = fmt_width(CELLP(m, i));
    }
    printf("%-16s", "metric");
    for (int i = 0; i < nt; i++) {
        printf("  ");
        print_cell(rx->targets[k * CLI_MAX_LABELS + i].label, w[i], 0);
    }
    printf("\n");
    for (int m = 0; m < metric_count + (nseeds == 1 ? 2 : 1); m++) {
        printf("%-16s", m < metric_count ? metric_table[m].name : m == metric_count ? "status" : "fingerprint");
        for (int i = 0; i < nt; i++) {
            printf("  ");
            print_cell(CELLP(m, i), w[i], 0);
        }
        printf("\n");
    }
#undef CELLP
    free(cells);
    for (int i = 0; i < nt; i++) {
        const struct cli_target *t = &rx->targets[k * CLI_MAX_LABELS + i];
        if (t->params_text[0])
            printf("  %s: %s\n", t->label, t->params_text);
    }
    if (k + 1 < rx->o->npaths)
        printf("\n");
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
    }
    if (rx->progress) {
        struct sweep_job job;
        run_job_at(rx, j, &job);
        show_progress(rx, j, &job);
    }
    if (res->status != SIM_OK) {
        if (rx->progress)
            fprintf(stderr, "\r\033[K");
        fprintf(stderr, "%s: %s under %s (seed %" PRIu64 "): %s\n", cli_prog, s->path, t->label, seed, res->status_msg);
        snprintf(rx->status[ti], sizeof rx->status[ti], "%s", sim_status_name(res->status));
    }
    rx->fps[ti] = res->fingerprint;
    if (rx->st) {
        struct store_run sr = {.scn = s, .policy = t->label, .base_policy = t->ops->name, .params = t->params_text,
                               .seed = seed, .version = SIMRUN_VERSION, .res = res, .wall_us = out->wall_us,
                               .with_trace = o->store_trace};
        int64_t id;
        char err[512];
        if (store_write_run(rx->st, &sr, &id, err, sizeof err) != 0) {
            if (rx->progress)
                fprintf(stderr, "\r\033[K");
            return cli_write_error(err);
        }
    }
    if (rx->json) {
        printf("%s\n  {\"scenario\": \"%s\", \"policy\": \"%s\", \"params\": \"%s\", \"seed\": %" PRIu64
               ", \"status\": \"%s\", \"fingerprint\": \"%016" PRIx64 "\", \"metrics\": {",
               rx->first_json ? "" : ",", s->name, t->label, t->params_text, seed, sim_status_name(res->status),
               res->fingerprint);
        rx->first_json = 0;
    }
    for (int m = 0; m < metric_count; m++) {
        double v = 0;
        metric_get(&res->ck, -1, metric_table[m].name, &v);
        if (metric_table[m].is_duration && v < 0)
            rx->never[ti * metric_count + m]++;
        else
            stats_add(&rx->acc[ti * metric_count + m], v);
        if (rx->csv)
            printf("%s,%s,\"%s\",%" PRIu64 ",%s,%016" PRIx64 ",%s,%.17g\n", s->name, t->label, t->params_text, seed,
                   sim_status_name(res->status), res->fingerprint, metric_table[m].name, v);
        if (rx->json)
            printf("%s\"%s\": %.17g", m ? ", " : "", metric_table[m].name, v);
    }
    if (rx->json)
        printf("}}");
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
            if (cli_resolve_target(scn[k], labels[i], o->sets, o->nsets, &targets[k * CLI_MAX_LABELS + i], msg,
                                   sizeof msg)) {
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
                          .json = !strcmp(o->format, "json"), .csv = !strcmp(o->format, "csv"), .first_json = 1};
    struct run_ctx *rx = &ctx;
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
        printf("scenario,policy,params,seed,status,fingerprint,metric,value\n");
    if (rx->json)
        printf("[");
    struct sweep_opts so = {.workers = o->jobs ? o->jobs : 1, .max_events = o->max_events,
                            .keep_trace = rx->st && o->store_trace, .trace = trace};
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
    struct scenario *scn[CLI_MAX_SCENARIOS];
    if ((rc = cli_load_all(&o, scn)))
        return rc;
    if ((rc = check_sets(&o, scn))) {
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
