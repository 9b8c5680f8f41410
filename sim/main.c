/* main.c: the simrun command line.
 *
 * Subcommands: run, check, report, diff, validate, policies (spec 6).  Exit
 * codes: 0 success, 1 a check or a diff failed, 2 bad usage or bad input, 3
 * internal error.  `run` hands its simulations to a sweep (sim/sweep.h),
 * which may spread them over worker processes (-j) but delivers the
 * results here in serial order, so the database, the tables and the traces
 * do not depend on -j.  `report` and `diff` live in reports/.
 *
 * Every input is validated before anything is simulated or written: all
 * scenarios are parsed, every policy name and --set resolved, and only then
 * does the database open, so bad input never leaves a half-written result. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "reports/diff.h"
#include "reports/fmt.h"
#include "reports/report.h"
#include "reports/stats.h"
#include "sim/checker.h"
#include "sim/policy.h"
#include "sim/scenario.h"
#include "sim/sim.h"
#include "sim/store.h"
#include "sim/sweep.h"
#include "sim/util.h"

#define SIMRUN_VERSION "0.1.0"
#define MAX_SCENARIOS 1024
#define MAX_SETS 64
#define MAX_SEEDS 100000

static const char *prog = "simrun";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "%s: error: ", prog);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see '%s --help')\n", prog);
    return 2;
}

/* --- help ------------------------------------------------------------------ */

static const char *help_main =
    "usage: simrun COMMAND [ARGS]\n"
    "\n"
    "simrun simulates job-scheduling policies on scenario files with a virtual\n"
    "clock and measures latency, lateness, lost and duplicate work, missed\n"
    "schedules, busy loops, wake-ups, overlaps and crash recovery.\n"
    "\n"
    "commands:\n"
    "  run SCENARIO...       simulate under each policy; print a comparison table\n"
    "  check SCENARIO...     evaluate every 'expect' line; exit 1 if one fails\n"
    "  report                charts and an HTML page comparing the policies of a results database\n"
    "  diff BASE.db NEW.db   metric-by-metric regressions between two results databases\n"
    "  validate SCENARIO...  parse only; report errors as file:line:col\n"
    "  policies              list the policies with their parameters and sources\n"
    "  version               print the version\n"
    "\n"
    "'simrun COMMAND --help' explains each command.\n"
    "exit status: 0 success, 1 a check or a diff failed, 2 bad usage or input, 3 internal error\n"
    "documentation: README.md, docs/scenario-format.md, docs/policies.md, docs/results.md,\n"
    "docs/reports.md\n";

static const char *help_run =
    "usage: simrun run SCENARIO... [options]\n"
    "\n"
    "Simulates each scenario under each policy and prints the policies side by\n"
    "side.  Without -p: every registered policy plus the scenario's variants.\n"
    "\n"
    "options:\n"
    "  -p, --policies LIST     comma-separated policies or variant names\n"
    "  --seed N                master seed (default: the scenario's 'seed', else 1)\n"
    "  --seeds A..B            run every seed from A to B; tables show the mean \xc2\xb1 the\n"
    "                          half-width of its 95% confidence interval (Student t);\n"
    "                          every seed's rows go to the database\n"
    "  -j, --jobs N            run N simulations at once in worker processes; the\n"
    "                          output and the database are the same as with -j 1\n"
    "  --set POLICY.KEY=VALUE  set a policy parameter (repeatable; overrides 'set' lines)\n"
    "  --db FILE               write results to this SQLite database (one transaction per run)\n"
    "  --store-trace           with --db: also store the event trace of each run\n"
    "  --trace FILE            write every fact (publish, drop, run start/phase/end, crash,\n"
    "                          restart, timer, wake-ups, ...), one line each ('-' for\n"
    "                          standard output)\n"
    "  --format FMT            table (default), csv or json\n"
    "  --max-events N          stop a run after N events (default 4000000000)\n"
    "  -h, --help              this help\n";

static const char *help_check =
    "usage: simrun check SCENARIO... [options]\n"
    "\n"
    "Runs each scenario under every policy its 'expect' lines name ('*': all\n"
    "registered policies and the scenario's variants) and evaluates each line.\n"
    "Prints PASS or FAIL per line and policy with the measured value; exits 1\n"
    "if any line fails.\n"
    "\n"
    "options:\n"
    "  --seed N       master seed (default: the scenario's)\n"
    "  --junit FILE   also write a JUnit XML report\n"
    "  --db FILE      also write the results to this SQLite database\n"
    "  -q, --quiet    print failures only\n"
    "  -h, --help     this help\n";

static const char *help_report =
    "usage: simrun report [--db FILE] [-o DIR]\n"
    "\n"
    "Draws, for every scenario in the results database, the policies side by side:\n"
    "a table of every metric (mean \xc2\xb1 95% confidence half-width over seeds),\n"
    "latency and lateness CDFs, bar charts of lost / duplicates / missed / busy\n"
    "loops / wake-ups / overlaps with confidence intervals, the backlog over time\n"
    "and a timeline of runs per handler for one seed.  Charts are PNG and SVG,\n"
    "each with its data file and gnuplot script beside it; DIR/index.html ties\n"
    "them together and needs nothing outside DIR.\n"
    "\n"
    "Timelines use the stored trace (run with --store-trace), else simulate the\n"
    "run again from its scenario file.  Needs gnuplot with the pngcairo and svg\n"
    "terminals on PATH (Debian: apt-get install gnuplot-nox); SIMRUN_GNUPLOT\n"
    "names another program.\n"
    "\n"
    "options:\n"
    "  --db FILE     the results database (default results.db)\n"
    "  -o DIR        the output folder (default report; created if missing)\n"
    "  -h, --help    this help\n";

static const char *help_diff =
    "usage: simrun diff BASE.db NEW.db [--tolerance METRIC=P%]... [--format text|markdown] [--all]\n"
    "\n"
    "Matches the runs of two results databases by scenario hash, policy,\n"
    "parameters and seed set, and compares every whole-scenario metric.  A change\n"
    "is a regression when it goes the worse way (lower is better for lost,\n"
    "duplicates, missed, busy loops, wake-ups, overlaps, latency, lateness, ...;\n"
    "higher for recovery_ok) by more than the tolerance, a percentage of the base\n"
    "value, and, over several seeds, the 95% confidence interval of the per-seed\n"
    "difference excludes zero.  A run that stops being ok (livelock) regresses too.\n"
    "Exits 1 if there is a regression (naming the metric), 0 otherwise.\n"
    "\n"
    "options:\n"
    "  -t, --tolerance METRIC=P%   allowed worsening of a metric ('*' for all;\n"
    "                              repeatable, or comma-separated); defaults: 0%\n"
    "                              for correctness metrics, 5% for performance ones\n"
    "  --format FMT                text (default) or markdown (for CI comments)\n"
    "  --all                       list unchanged metrics too\n"
    "  -h, --help                  this help\n";

static const char *help_validate =
    "usage: simrun validate SCENARIO...\n"
    "\n"
    "Parses each scenario and reports the first error of each as\n"
    "file:line:col: error: message.  Exits 2 if any is invalid.\n";

static const char *help_policies =
    "usage: simrun policies\n"
    "\n"
    "Lists every policy with its summary, seed references, and each parameter\n"
    "with its type, default and where it comes from.\n";

static int wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return 1;
    return 0;
}

/* --- formatting -------------------------------------------------------------- */

/* --- targets: a policy (or variant) with its resolved parameters -------------- */

struct target {
    char label[SCN_MAX_NAME + 8];
    const struct policy_ops *ops;
    struct params ps;
    char params_text[512];
};

struct cli_set {
    char policy[SCN_MAX_NAME];
    char key[64];
    char value[128];
};

/* Applies key=value pairs that name `who` to ps.  0 or -1 with msg. */
static int apply_kv(struct params *ps, const struct param_kv *kv, uint16_t n, char *msg, size_t mn)
{
    for (uint16_t i = 0; i < n; i++)
        if (params_set(ps, kv[i].key, kv[i].value, msg, mn) != 0)
            return -1;
    return 0;
}

/* Resolves a label (registered policy or variant of s) into a target:
 * defaults, then the scenario's `set` lines for the base policy, then those
 * for the variant, then the variant's own pairs, then --set for the base and
 * for the label.  Returns 0, or -1 with msg. */
static int resolve_target(const struct scenario *s, const char *label, const struct cli_set *sets, int nsets,
                          struct target *t, char *msg, size_t mn)
{
    const struct variant_def *var = NULL;
    for (uint16_t i = 0; i < s->nvariants; i++)
        if (!strcmp(s->variants[i].name, label))
            var = &s->variants[i];
    const char *base = var ? var->base : label;
    t->ops = policy_find(base);
    if (!t->ops) {
        char names[256];
        policy_check_name(base, names, sizeof names);
        if (s->nvariants) {
            size_t off = strlen(names);
            if (off && names[off - 1] == ')')
                names[off - 1] = 0;
            for (uint16_t i = 0; i < s->nvariants; i++)
                snprintf(names + strlen(names), sizeof names - strlen(names), ", %s", s->variants[i].name);
            snprintf(names + strlen(names), sizeof names - strlen(names), ")");
        }
        snprintf(msg, mn, "%s", names);
        return -1;
    }
    snprintf(t->label, sizeof t->label, "%s", label);
    params_init(&t->ps, t->ops);
    for (uint16_t i = 0; i < s->nsets; i++)
        if (!strcmp(s->sets[i].policy, base) && apply_kv(&t->ps, s->sets[i].kv, s->sets[i].nkv, msg, mn))
            return -1;
    if (var) {
        for (uint16_t i = 0; i < s->nsets; i++)
            if (!strcmp(s->sets[i].policy, label) && apply_kv(&t->ps, s->sets[i].kv, s->sets[i].nkv, msg, mn))
                return -1;
        if (apply_kv(&t->ps, var->kv, var->nkv, msg, mn))
            return -1;
    }
    for (int i = 0; i < nsets; i++) {
        if (strcmp(sets[i].policy, base) && strcmp(sets[i].policy, label))
            continue;
        if (params_set(&t->ps, sets[i].key, sets[i].value, msg, mn) != 0)
            return -1;
    }
    params_format(&t->ps, t->params_text, sizeof t->params_text);
    return 0;
}

/* Every label of a scenario: the registered policies, then its variants. */
static int all_labels(const struct scenario *s, const char **out, int max)
{
    int n = 0;
    for (int i = 0; i < policy_registry_count && n < max; i++)
        out[n++] = policy_registry[i]->name;
    for (uint16_t i = 0; i < s->nvariants && n < max; i++)
        out[n++] = s->variants[i].name;
    return n;
}

/* --- common option parsing ------------------------------------------------------ */

struct opts {
    const char *paths[MAX_SCENARIOS];
    int npaths;
    const char *policies;
    int have_seed;
    uint64_t seed_lo, seed_hi;
    struct cli_set sets[MAX_SETS];
    int nsets;
    const char *db;
    int store_trace;
    const char *trace;
    const char *format;
    const char *junit;
    uint64_t max_events;
    int quiet;
    int jobs;                      /* -j: worker processes, 0 = not given (1) */
};

static int parse_u64(const char *s, uint64_t *out)
{
    if (!*s || *s == '-' || *s == '+')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno)
        return -1;
    *out = v;
    return 0;
}

static const char *need_arg(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

static int parse_opts(int argc, char **argv, struct opts *o, const char *allowed)
{
    *o = (struct opts){.format = "table"};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v;
#define OPT(name) (!strcmp(a, name) && strstr(allowed, name " "))
        if (a[0] != '-' || !strcmp(a, "-")) {
            if (o->npaths >= MAX_SCENARIOS)
                return usage_error("too many scenarios (at most %s)", "1024");
            o->paths[o->npaths++] = a;
        } else if ((OPT("-p") || OPT("--policies"))) {
            if (!(o->policies = need_arg(argc, argv, &i)))
                return usage_error("option '%s' needs a value", a);
        } else if (OPT("--seed")) {
            if (!(v = need_arg(argc, argv, &i)))
                return usage_error("option '%s' needs a value", a);
            if (parse_u64(v, &o->seed_lo) || o->seed_lo > (uint64_t)INT64_MAX)
                return usage_error("bad seed '%s' (expected an integer 0..9223372036854775807)", v);
            o->seed_hi = o->seed_lo;
            o->have_seed = 1;
        } else if (OPT("--seeds")) {
            if (!(v = need_arg(argc, argv, &i)))
                return usage_error("option '%s' needs a value", a);
            const char *dots = strstr(v, "..");
            char lo[32];
            if (!dots || (size_t)(dots - v) >= sizeof lo)
                return usage_error("bad seed range '%s' (expected A..B)", v);
            memcpy(lo, v, (size_t)(dots - v));
            lo[dots - v] = 0;
            if (parse_u64(lo, &o->seed_lo) || parse_u64(dots + 2, &o->seed_hi) || o->seed_hi < o->seed_lo ||
                o->seed_hi > (uint64_t)INT64_MAX)
                return usage_error("bad seed range '%s' (expected A..B with A <= B)", v);
            if (o->seed_hi - o->seed_lo >= MAX_SEEDS)
                return usage_error("seed range '%s' too long (at most 100000 seeds)", v);
            o->have_seed = 1;
        } else if (OPT("--set")) {
            if (!(v = need_arg(argc, argv, &i)))
                return usage_error("option '%s' needs a value", a);
            if (o->nsets >= MAX_SETS)
                return usage_error("too many --set options (at most %s)", "64");
            const char *dot = strchr(v, '.'), *eq = strchr(v, '=');
            if (!dot || !eq || dot > eq || dot == v || eq == dot + 1)
                return usage_error("bad --set '%s' (expected POLICY.KEY=VALUE)", v);
            struct cli_set *cs = &o->sets[o->nsets++];
            if ((size_t)(dot - v) >= sizeof cs->policy || (size_t)(eq - dot - 1) >= sizeof cs->key ||
                strlen(eq + 1) >= sizeof cs->value)
                return usage_error("--set '%s' too long", v);
            snprintf(cs->policy, sizeof cs->policy, "%.*s", (int)(dot - v), v);
            snprintf(cs->key, sizeof cs->key, "%.*s", (int)(eq - dot - 1), dot + 1);
            snprintf(cs->value, sizeof cs->value, "%s", eq + 1);
        } else if (OPT("--db")) {
            if (!(o->db = need_arg(argc, argv, &i)))
                return usage_error("option '%s' needs a value", a);
        } else if (OPT("--store-trace")) {
            o->store_trace = 1;
        } else if (OPT("--trace")) {
            if (!(o->trace = need_arg(argc, argv, &i)))
                return usage_error("option '%s' needs a value", a);
        } else if (OPT("--format")) {
            if (!(o->format = need_arg(argc, argv, &i)))
                return usage_error("option '%s' needs a value", a);
            if (strcmp(o->format, "table") && strcmp(o->format, "csv") && strcmp(o->format, "json"))
                return usage_error("unknown format '%s' (valid: table, csv, json)", o->format);
        } else if (OPT("--junit")) {
            if (!(o->junit = need_arg(argc, argv, &i)))
                return usage_error("option '%s' needs a value", a);
        } else if (OPT("--max-events")) {
            if (!(v = need_arg(argc, argv, &i)))
                return usage_error("option '%s' needs a value", a);
            if (parse_u64(v, &o->max_events) || o->max_events == 0)
                return usage_error("bad --max-events '%s'", v);
        } else if (OPT("-j") || OPT("--jobs")) {
            uint64_t nj;
            if (!(v = need_arg(argc, argv, &i)))
                return usage_error("option '%s' needs a value", a);
            if (parse_u64(v, &nj) || nj < 1 || nj > SWEEP_MAX_WORKERS)
                return usage_error("bad -j '%s' (expected 1..256 worker processes)", v);
            o->jobs = (int)nj;
        } else if (OPT("-q") || OPT("--quiet")) {
            o->quiet = 1;
        } else {
            return usage_error("unknown option '%s'", a);
        }
#undef OPT
    }
    if (o->npaths == 0)
        return usage_error("%s", "no scenario given");
    return 0;
}

/* Parses every scenario; on the first error prints it and returns 2. */
static int load_all(const struct opts *o, struct scenario **scn)
{
    for (int i = 0; i < o->npaths; i++) {
        struct diag d;
        if (scenario_parse(o->paths[i], &scn[i], &d) != 0) {
            diag_print(&d);
            for (int k = 0; k < i; k++)
                scenario_free(scn[k]);
            return 2;
        }
    }
    return 0;
}

static void free_all(struct scenario **scn, int n)
{
    for (int i = 0; i < n; i++)
        scenario_free(scn[i]);
}

/* Checks that every --set names a known policy (or a variant of some
 * scenario) and a valid key=value for it. */
static int check_sets(const struct opts *o, struct scenario **scn)
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
            fprintf(stderr, "%s: error: --set %s.%s=%s: %s\n", prog, cs->policy, cs->key, cs->value, msg);
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
    if (!f)
        fprintf(stderr, "%s: error: cannot write trace '%s': %s\n", prog, path, strerror(errno));
    return f;
}

static int open_store(const char *db, struct store **st)
{
    *st = NULL;
    if (!db)
        return 0;
    char err[512];
    if (store_open(db, st, err, sizeof err) != 0) {
        fprintf(stderr, "%s: error: %s\n", prog, err);
        return 2;
    }
    return 0;
}

/* Splits a comma list into labels (pointers into buf). */
static int split_list(char *buf, const char **out, int max)
{
    int n = 0;
    for (char *p = strtok(buf, ","); p && n < max; p = strtok(NULL, ","))
        out[n++] = p;
    return n;
}

/* --- run --------------------------------------------------------------------------- */

#define MAX_LABELS 64

/* What the run command's sweep needs to describe jobs and to take their
 * results in order: job j belongs to scenario k when first_job[k] <= j <
 * first_job[k + 1]; within it, target (j - first_job[k]) / nseeds[k] and
 * seed lo[k] + (j - first_job[k]) % nseeds[k], the order of a serial run. */
struct run_ctx {
    const struct opts *o;
    struct scenario **scn;
    struct target *targets;        /* [npaths * MAX_LABELS] */
    const int *ntarg;
    uint64_t lo[MAX_SCENARIOS], nseeds[MAX_SCENARIOS];
    size_t first_job[MAX_SCENARIOS + 1];
    size_t njobs;
    struct store *st;
    int json, csv, first_json;
    /* the scenario being received: per target and metric, over its seeds */
    struct stats_acc *acc;         /* [MAX_LABELS * metric_count] */
    uint64_t *never;               /* durations that were "never", kept out of acc */
    char status[MAX_LABELS][32];
    uint64_t fps[MAX_LABELS];
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
    const struct target *t = &rx->targets[k * MAX_LABELS + (int)(r / rx->nseeds[k])];
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
    size_t w[MAX_LABELS];
    for (int i = 0; i < nt; i++) {
        w[i] = fmt_width(rx->targets[k * MAX_LABELS + i].label);
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
        print_cell(rx->targets[k * MAX_LABELS + i].label, w[i], 0);
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
    for (int i = 0; i < nt; i++)
        if (rx->targets[k * MAX_LABELS + i].params_text[0])
            printf("  %s: %s\n", rx->targets[k * MAX_LABELS + i].label, rx->targets[k * MAX_LABELS + i].params_text);
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
    fprintf(stderr, "\r\033[K%s: %zu/%zu runs (%s, %s, seed %" PRIu64 "), %.0f s left", prog, j + 1, rx->njobs,
            job->scn->name, job->label, job->seed, left_s);
}

/* Takes job j's result: the store, the CSV/JSON lines, the statistics, and
 * after the last job of a scenario its table. */
static int run_sink(void *ctx, size_t j, struct sweep_out *out)
{
    struct run_ctx *rx = ctx;
    const struct opts *o = rx->o;
    int k = job_scenario(rx, j);
    size_t r = j - rx->first_job[k];
    int ti = (int)(r / rx->nseeds[k]);
    const struct target *t = &rx->targets[k * MAX_LABELS + ti];
    const struct scenario *s = rx->scn[k];
    uint64_t seed = rx->lo[k] + r % rx->nseeds[k];
    const struct sim_result *res = &out->res;
    if (r == 0) {
        if (!rx->acc) {
            rx->acc = xcalloc((size_t)MAX_LABELS * (size_t)metric_count, sizeof *rx->acc);
            rx->never = xcalloc((size_t)MAX_LABELS * (size_t)metric_count, sizeof *rx->never);
        }
        for (int i = 0; i < MAX_LABELS * metric_count; i++) {
            stats_init(&rx->acc[i]);
            rx->never[i] = 0;
        }
        for (int i = 0; i < MAX_LABELS; i++)
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
        fprintf(stderr, "%s: %s under %s (seed %" PRIu64 "): %s\n", prog, s->path, t->label, seed, res->status_msg);
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
            fprintf(stderr, "%s: error: %s\n", prog, err);
            return 3;
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

static int cmd_run(int argc, char **argv)
{
    if (wants_help(argc, argv)) {
        fputs(help_run, stdout);
        return 0;
    }
    struct opts o;
    int rc = parse_opts(argc, argv,
                        &o, "-p --policies --seed --seeds --set --db --store-trace --trace --format --max-events -j --jobs ");
    if (rc)
        return rc;
    struct scenario *scn[MAX_SCENARIOS];
    if ((rc = load_all(&o, scn)))
        return rc;
    if ((rc = check_sets(&o, scn))) {
        free_all(scn, o.npaths);
        return rc;
    }
    /* Resolve every target of every scenario before simulating anything. */
    struct target *targets = xcalloc((size_t)o.npaths * MAX_LABELS, sizeof *targets);
    int ntarg[MAX_SCENARIOS];
    char polbuf[1024];
    for (int k = 0; k < o.npaths; k++) {
        const char *labels[MAX_LABELS];
        int nl;
        if (o.policies) {
            snprintf(polbuf, sizeof polbuf, "%s", o.policies);
            nl = split_list(polbuf, labels, MAX_LABELS);
        } else {
            nl = all_labels(scn[k], labels, MAX_LABELS);
        }
        if (nl == 0) {
            free(targets);
            free_all(scn, o.npaths);
            return usage_error("empty policy list '%s'", o.policies ? o.policies : "");
        }
        for (int i = 0; i < nl; i++) {
            char msg[512];
            if (resolve_target(scn[k], labels[i], o.sets, o.nsets, &targets[k * MAX_LABELS + i], msg, sizeof msg)) {
                fprintf(stderr, "%s: error: %s: %s\n", prog, scn[k]->path, msg);
                free(targets);
                free_all(scn, o.npaths);
                return 2;
            }
        }
        ntarg[k] = nl;
    }
    struct store *st;
    FILE *trace = open_trace(o.trace);
    if ((o.trace && !trace) || (rc = open_store(o.db, &st))) {
        if (trace && trace != stdout)
            fclose(trace);
        free(targets);
        free_all(scn, o.npaths);
        return rc ? rc : 2;
    }
    struct run_ctx rx = {.o = &o, .scn = scn, .targets = targets, .ntarg = ntarg, .st = st,
                         .json = !strcmp(o.format, "json"), .csv = !strcmp(o.format, "csv"), .first_json = 1};
    size_t njobs = 0;
    for (int k = 0; k < o.npaths; k++) {
        const struct scenario *s = scn[k];
        rx.lo[k] = o.have_seed ? o.seed_lo : s->seed;
        rx.nseeds[k] = (o.have_seed ? o.seed_hi : s->seed) - rx.lo[k] + 1;
        rx.first_job[k] = njobs;
        njobs += (size_t)ntarg[k] * (size_t)rx.nseeds[k];
    }
    rx.first_job[o.npaths] = njobs;
    rx.njobs = njobs;
    rx.progress = isatty(2) && njobs > 1;
    rx.t0_us = wall_clock_us();
    if (rx.csv)
        printf("scenario,policy,params,seed,status,fingerprint,metric,value\n");
    if (rx.json)
        printf("[");
    struct sweep_opts so = {.workers = o.jobs ? o.jobs : 1, .max_events = o.max_events,
                            .keep_trace = st && o.store_trace, .trace = trace};
    char err[512] = "";
    rc = sweep_run(njobs, &so, run_job_at, run_sink, &rx, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "%s: error: %s\n", prog, err);
        rc = 3;
    }
    if (rx.progress)
        fprintf(stderr, "\r\033[K");
    if (rx.json)
        printf("\n]\n");
    free(rx.acc);
    free(rx.never);
    if (trace && trace != stdout)
        fclose(trace);
    store_close(st);
    free(targets);
    free_all(scn, o.npaths);
    return rc;
}

/* --- check ------------------------------------------------------------------------- */

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

static int cmd_check(int argc, char **argv)
{
    if (wants_help(argc, argv)) {
        fputs(help_check, stdout);
        return 0;
    }
    struct opts o;
    int rc = parse_opts(argc, argv, &o, "--seed --junit --db -q --quiet ");
    if (rc)
        return rc;
    struct scenario *scn[MAX_SCENARIOS];
    if ((rc = load_all(&o, scn)))
        return rc;
    struct store *st;
    FILE *junit = NULL;
    if (o.junit && !(junit = fopen(o.junit, "w"))) {
        fprintf(stderr, "%s: error: cannot write '%s': %s\n", prog, o.junit, strerror(errno));
        free_all(scn, o.npaths);
        return 2;
    }
    if ((rc = open_store(o.db, &st))) {
        if (junit)
            fclose(junit);
        free_all(scn, o.npaths);
        return rc;
    }
    if (junit)
        fprintf(junit, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    int npass = 0, nfail = 0;
    for (int k = 0; k < o.npaths && rc == 0; k++) {
        const struct scenario *s = scn[k];
        uint64_t seed = o.have_seed ? o.seed_lo : s->seed;
        const char *labels[MAX_LABELS];
        int nl = all_labels(s, labels, MAX_LABELS);
        int spass = 0, sfail = 0;
        if (junit) {
            fprintf(junit, "  <testsuite name=\"");
            fmt_markup(junit, s->path);
            fprintf(junit, "\">\n");
        }
        if (s->nexpects == 0)
            fprintf(stderr, "%s: warning: %s has no expect lines\n", prog, s->path);
        for (int i = 0; i < nl && rc == 0; i++) {
            int used = 0;
            for (uint32_t e = 0; e < s->nexpects; e++)
                used |= expect_names(&s->expects[e], labels[i]);
            if (!used)
                continue;
            struct target t;
            char msg[512];
            if (resolve_target(s, labels[i], NULL, 0, &t, msg, sizeof msg)) {
                fprintf(stderr, "%s: error: %s: %s\n", prog, s->path, msg);
                rc = 2;
                break;
            }
            struct sim_result res;
            struct sim_opts so = {.seed = seed, .max_events = o.max_events, .label = t.label};
            sim_run(s, t.ops, &t.ps, &so, &res);
            struct expect_outcome *eo = xcalloc(s->nexpects, sizeof *eo);
            uint32_t neo = 0;
            for (uint32_t e = 0; e < s->nexpects; e++) {
                const struct expect_def *ex = &s->expects[e];
                if (!expect_names(ex, t.label))
                    continue;
                double v = 0;
                int ok;
                ok = metric_get(&res.ck, expect_tmpl(s, ex), ex->metric, &v) == 0 && compare(v, ex->op, ex->value);
                eo[neo++] = (struct expect_outcome){ex, v, ok};
                const struct metric_info *mi = metric_find(ex->metric);
                char b[48];
                if (mi)
                    fmt_metric(mi, v, b, sizeof b);
                else
                    snprintf(b, sizeof b, "%g", v);
                if (ok) {
                    npass++;
                    spass++;
                } else {
                    nfail++;
                    sfail++;
                }
                if (!ok || !o.quiet)
                    printf("%s %s:%d [%s] %s (measured %s)%s%s\n", ok ? "PASS" : "FAIL", s->path, ex->line, t.label,
                           ex->text, b, res.status != SIM_OK ? ": " : "", res.status != SIM_OK ? res.status_msg : "");
                if (junit) {
                    fprintf(junit, "    <testcase classname=\"");
                    fmt_markup(junit, s->name);
                    fprintf(junit, ".%s\" name=\"line %d: ", t.label, ex->line);
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
            if (st) {
                int64_t id;
                char err[512];
                struct store_run sr = {.scn = s, .policy = t.label, .base_policy = t.ops->name,
                                       .params = t.params_text, .seed = seed, .version = SIMRUN_VERSION,
                                       .res = &res, .wall_us = 0, .expects = eo, .nexpects = neo};
                if (store_write_run(st, &sr, &id, err, sizeof err) != 0) {
                    fprintf(stderr, "%s: error: %s\n", prog, err);
                    rc = 3;
                }
            }
            free(eo);
            sim_result_free(&res);
        }
        if (junit)
            fprintf(junit, "  </testsuite>\n");
        (void)spass;
        (void)sfail;
    }
    if (junit) {
        fprintf(junit, "</testsuites>\n");
        fclose(junit);
    }
    store_close(st);
    free_all(scn, o.npaths);
    printf("check: %d passed, %d failed\n", npass, nfail);
    if (rc)
        return rc;
    return nfail ? 1 : 0;
}

/* --- report, diff -------------------------------------------------------------------- */

static int cmd_report(int argc, char **argv)
{
    if (wants_help(argc, argv)) {
        fputs(help_report, stdout);
        return 0;
    }
    struct report_opts ro = {.db = "results.db", .out_dir = "report", .gnuplot = "gnuplot",
                             .version = SIMRUN_VERSION};
    const char *env = getenv("SIMRUN_GNUPLOT");
    if (env && *env)
        ro.gnuplot = env;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--db")) {
            if (!(ro.db = need_arg(argc, argv, &i)))
                return usage_error("option '%s' needs a value", a);
        } else if (!strcmp(a, "-o") || !strcmp(a, "--out")) {
            if (!(ro.out_dir = need_arg(argc, argv, &i)))
                return usage_error("option '%s' needs a value", a);
        } else if (a[0] == '-') {
            return usage_error("unknown option '%s'", a);
        } else {
            return usage_error("unexpected argument '%s' (the database is given with --db)", a);
        }
    }
    if (!ro.out_dir[0])
        return usage_error("%s", "empty output folder");
    char err[1024];
    size_t ncharts = 0;
    int rc = report_write(&ro, &ncharts, err, sizeof err);
    if (rc) {
        fprintf(stderr, "%s: error: %s\n", prog, err);
        return rc;
    }
    printf("report: %s/index.html (%zu charts from %s)\n", ro.out_dir, ncharts, ro.db);
    return 0;
}

static int cmd_diff(int argc, char **argv)
{
    if (wants_help(argc, argv)) {
        fputs(help_diff, stdout);
        return 0;
    }
    struct diff_opts dopt = {.format = DIFF_TEXT};
    const char *paths[2];
    int np = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--tolerance") || !strcmp(a, "-t")) {
            if (!(v = need_arg(argc, argv, &i)))
                return usage_error("option '%s' needs a value", a);
            char buf[512];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
                if (dopt.ntol >= DIFF_MAX_TOLERANCES)
                    return usage_error("too many tolerances (at most %s)", "64");
                char msg[1400];
                if (diff_parse_tolerance(p, &dopt.tol[dopt.ntol], msg, sizeof msg) != 0) {
                    fprintf(stderr, "%s: error: %s\n(see '%s diff --help')\n", prog, msg, prog);
                    return 2;
                }
                dopt.ntol++;
            }
        } else if (!strcmp(a, "--format")) {
            if (!(v = need_arg(argc, argv, &i)))
                return usage_error("option '%s' needs a value", a);
            if (!strcmp(v, "markdown") || !strcmp(v, "md"))
                dopt.format = DIFF_MARKDOWN;
            else if (!strcmp(v, "text"))
                dopt.format = DIFF_TEXT;
            else
                return usage_error("unknown format '%s' (valid: text, markdown)", v);
        } else if (!strcmp(a, "--all")) {
            dopt.all = 1;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("unknown option '%s'", a);
        } else {
            if (np == 2)
                return usage_error("unexpected argument '%s' (diff takes two databases)", a);
            paths[np++] = a;
        }
    }
    if (np != 2)
        return usage_error("%s", "diff needs two databases: BASE.db NEW.db");
    char err[1024];
    int rc = diff_run(paths[0], paths[1], &dopt, stdout, err, sizeof err);
    if (rc == 2)
        fprintf(stderr, "%s: error: %s\n", prog, err);
    return rc;
}

/* --- validate, policies ------------------------------------------------------------- */

static int cmd_validate(int argc, char **argv)
{
    if (wants_help(argc, argv)) {
        fputs(help_validate, stdout);
        return 0;
    }
    if (argc == 0)
        return usage_error("%s", "no scenario given");
    int bad = 0;
    for (int i = 0; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1])
            return usage_error("unknown option '%s'", argv[i]);
        struct scenario *s;
        struct diag d;
        if (scenario_parse(argv[i], &s, &d) != 0) {
            diag_print(&d);
            bad = 1;
            continue;
        }
        printf("%s: ok (%u workflows, %" PRIu64 " handler instances, %u expect lines)\n", argv[i], s->nwfs,
               s->nhandler_instances, s->nexpects);
        scenario_free(s);
    }
    return bad ? 2 : 0;
}

static const char *type_name(enum param_type t)
{
    switch (t) {
    case PARAM_INT: return "integer";
    case PARAM_DURATION: return "duration";
    case PARAM_ENUM: return "choice";
    case PARAM_BOOL: return "boolean";
    case PARAM_TOD: return "time of day";
    case PARAM_ZONE: return "time zone";
    }
    return "?";
}

static int cmd_policies(int argc, char **argv)
{
    if (wants_help(argc, argv)) {
        fputs(help_policies, stdout);
        return 0;
    }
    if (argc)
        return usage_error("unexpected argument '%s'", argv[0]);
    for (int i = 0; i < policy_registry_count; i++) {
        const struct policy_ops *p = policy_registry[i];
        printf("%s  (%s)\n    %s\n", p->name, p->seeds, p->summary);
        printf("    promise: %s; items kept %s\n",
               p->promise == PROMISE_NONE ? "none (runs may overlap)"
               : p->promise == PROMISE_HANDLER ? "one run per handler at a time"
               : p->promise == PROMISE_UNIT    ? "one run per unit of work (item or fire) at a time"
                                                : "one run per workflow at a time",
               p->items_volatile ? "in memory only (lost at a crash)" : "durably");
        if (p->nparams == 0)
            printf("    parameters: none\n");
        for (int k = 0; k < p->nparams; k++) {
            const struct param_def *d = &p->params[k];
            printf("    %s.%s = %s  [%s%s%s]\n        %s (source: %s)\n", p->name, d->key, d->def, type_name(d->type),
                   d->choices ? ": " : "", d->choices ? d->choices : "", d->help, d->source);
        }
        if (i + 1 < policy_registry_count)
            printf("\n");
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "%s: error: no command given\n\n", prog);
        fputs(help_main, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(help_main, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("simrun %s\n", SIMRUN_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "check"))
        return cmd_check(argc - 2, argv + 2);
    if (!strcmp(cmd, "validate"))
        return cmd_validate(argc - 2, argv + 2);
    if (!strcmp(cmd, "policies"))
        return cmd_policies(argc - 2, argv + 2);
    if (!strcmp(cmd, "report"))
        return cmd_report(argc - 2, argv + 2);
    if (!strcmp(cmd, "diff"))
        return cmd_diff(argc - 2, argv + 2);
    return usage_error("unknown command '%s' (valid: run, check, report, diff, validate, policies, version)", cmd);
}
