/* main.c: the simrun command line.
 *
 * Subcommands: run, check, validate, policies (spec 6).  Exit codes: 0
 * success, 1 a check failed, 2 bad usage or bad input, 3 internal error.
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

#include "sim/checker.h"
#include "sim/policy.h"
#include "sim/scenario.h"
#include "sim/sim.h"
#include "sim/store.h"
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
    "  validate SCENARIO...  parse only; report errors as file:line:col\n"
    "  policies              list the policies with their parameters and sources\n"
    "  version               print the version\n"
    "\n"
    "'simrun COMMAND --help' explains each command.\n"
    "exit status: 0 success, 1 a check failed, 2 bad usage or input, 3 internal error\n"
    "documentation: README.md, docs/scenario-format.md, docs/policies.md, docs/results.md\n";

static const char *help_run =
    "usage: simrun run SCENARIO... [options]\n"
    "\n"
    "Simulates each scenario under each policy and prints the policies side by\n"
    "side.  Without -p: every registered policy plus the scenario's variants.\n"
    "\n"
    "options:\n"
    "  -p, --policies LIST     comma-separated policies or variant names\n"
    "  --seed N                master seed (default: the scenario's 'seed', else 1)\n"
    "  --seeds A..B            run every seed from A to B; tables show the mean\n"
    "  --set POLICY.KEY=VALUE  set a policy parameter (repeatable; overrides 'set' lines)\n"
    "  --db FILE               write results to this SQLite database (one transaction per run)\n"
    "  --store-trace           with --db: also store the event trace of each run\n"
    "  --trace FILE            write every run start/end, phase, publish, crash and restart,\n"
    "                          one line each ('-' for standard output)\n"
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

/* Human-readable duration: 250us, 1.50ms, 2.25s, 3m05s, 2h05m, 3d04h. */
static void fmt_human(double us, char *b, size_t n)
{
    const char *sign = us < 0 ? "-" : "";
    if (us < 0)
        us = -us;
    if (us < 1000)
        snprintf(b, n, "%s%.0fus", sign, us);
    else if (us < 1e6)
        snprintf(b, n, "%s%.2fms", sign, us / 1e3);
    else if (us < 60e6)
        snprintf(b, n, "%s%.2fs", sign, us / 1e6);
    else if (us < 3600e6)
        snprintf(b, n, "%s%dm%02ds", sign, (int)(us / 60e6), (int)(us / 1e6) % 60);
    else if (us < 86400e6)
        snprintf(b, n, "%s%dh%02dm", sign, (int)(us / 3600e6), (int)(us / 60e6) % 60);
    else
        snprintf(b, n, "%s%dd%02dh", sign, (int)(us / 86400e6), (int)(us / 3600e6) % 24);
}

static void fmt_value(const struct metric_info *mi, double v, char *b, size_t n)
{
    if (mi->is_bool)
        snprintf(b, n, "%s", v != 0 ? "true" : "false");
    else if (mi->is_duration && v < 0)
        snprintf(b, n, "never");
    else if (mi->is_duration)
        fmt_human(v, b, n);
    else if (v == (double)(int64_t)v)
        snprintf(b, n, "%" PRId64, (int64_t)v);
    else
        snprintf(b, n, "%.3f", v);
}

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

static int64_t wall_now_us(void)
{
    /* Wall time is measured for the run_timings table only; it never
     * reaches a simulation. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* One simulation, written to the store when there is one. */
static int simulate(const struct scenario *s, const struct target *t, uint64_t seed, const struct opts *o,
                    FILE *trace, struct store *st, const struct expect_outcome *ex, uint32_t nex,
                    struct sim_result *res)
{
    struct sim_opts so = {.seed = seed, .trace = trace, .keep_trace = st && o->store_trace,
                          .max_events = o->max_events, .label = t->label};
    int64_t t0 = wall_now_us();
    sim_run(s, t->ops, &t->ps, &so, res);
    int64_t wall = wall_now_us() - t0;
    if (res->status != SIM_OK)
        fprintf(stderr, "%s: %s under %s (seed %" PRIu64 "): %s\n", prog, s->path, t->label, seed, res->status_msg);
    if (!st)
        return 0;
    struct store_run sr = {.scn = s, .policy = t->label, .base_policy = t->ops->name, .params = t->params_text,
                           .seed = seed, .version = SIMRUN_VERSION, .res = res, .wall_us = wall,
                           .expects = ex, .nexpects = nex, .with_trace = o->store_trace};
    int64_t id;
    char err[512];
    if (store_write_run(st, &sr, &id, err, sizeof err) != 0) {
        fprintf(stderr, "%s: error: %s\n", prog, err);
        return 3;
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

static int cmd_run(int argc, char **argv)
{
    if (wants_help(argc, argv)) {
        fputs(help_run, stdout);
        return 0;
    }
    struct opts o;
    int rc = parse_opts(argc, argv,
                        &o, "-p --policies --seed --seeds --set --db --store-trace --trace --format --max-events ");
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
    int json = !strcmp(o.format, "json"), csv = !strcmp(o.format, "csv");
    if (csv)
        printf("scenario,policy,params,seed,status,fingerprint,metric,value\n");
    if (json)
        printf("[");
    int first_json = 1;
    int progress = isatty(2) && o.have_seed && o.seed_hi > o.seed_lo;
    for (int k = 0; k < o.npaths && !rc; k++) {
        const struct scenario *s = scn[k];
        uint64_t lo = o.have_seed ? o.seed_lo : s->seed, hi = o.have_seed ? o.seed_hi : s->seed;
        uint64_t nseeds = hi - lo + 1;
        int nt = ntarg[k];
        /* mean of every whole-scenario metric per target, for the table */
        double *sum = xcalloc((size_t)nt * (size_t)metric_count, sizeof *sum);
        char status[MAX_LABELS][32];
        uint64_t fps[MAX_LABELS];
        for (int i = 0; i < nt; i++)
            snprintf(status[i], sizeof status[i], "ok");
        for (int i = 0; i < nt && !rc; i++) {
            struct target *t = &targets[k * MAX_LABELS + i];
            for (uint64_t seed = lo; seed <= hi && !rc; seed++) {
                if (progress)
                    fprintf(stderr, "\r%s: %s %s seed %" PRIu64 " (%" PRIu64 "/%" PRIu64 ")   ", prog, s->name,
                            t->label, seed, seed - lo + 1, nseeds);
                struct sim_result res;
                rc = simulate(s, t, seed, &o, trace, st, NULL, 0, &res);
                fps[i] = res.fingerprint;
                if (res.status != SIM_OK)
                    snprintf(status[i], sizeof status[i], "%s", sim_status_name(res.status));
                for (int m = 0; m < metric_count; m++) {
                    double v = 0;
                    metric_get(&res.ck, -1, metric_table[m].name, &v);
                    sum[i * metric_count + m] += v;
                    if (csv)
                        printf("%s,%s,\"%s\",%" PRIu64 ",%s,%016" PRIx64 ",%s,%.17g\n", s->name, t->label,
                               t->params_text, seed, sim_status_name(res.status), res.fingerprint,
                               metric_table[m].name, v);
                }
                if (json) {
                    printf("%s\n  {\"scenario\": \"%s\", \"policy\": \"%s\", \"params\": \"%s\", \"seed\": %" PRIu64
                           ", \"status\": \"%s\", \"fingerprint\": \"%016" PRIx64 "\", \"metrics\": {",
                           first_json ? "" : ",", s->name, t->label, t->params_text, seed,
                           sim_status_name(res.status), res.fingerprint);
                    first_json = 0;
                    for (int m = 0; m < metric_count; m++) {
                        double v = 0;
                        metric_get(&res.ck, -1, metric_table[m].name, &v);
                        printf("%s\"%s\": %.17g", m ? ", " : "", metric_table[m].name, v);
                    }
                    printf("}}");
                }
                sim_result_free(&res);
            }
        }
        if (progress)
            fprintf(stderr, "\r\033[K");
        if (!json && !csv && !rc) {
            char start[40];
            cal_format_utc(s->start_utc_s, start, sizeof start);
            char hz[40];
            fmt_human((double)s->horizon_us, hz, sizeof hz);
            printf("%s (%s): start %s, horizon %s, ", s->name, s->path, start, hz);
            if (nseeds > 1)
                printf("seeds %" PRIu64 "..%" PRIu64 " (mean)\n", lo, hi);
            else
                printf("seed %" PRIu64 "\n", lo);
            printf("%-16s", "metric");
            for (int i = 0; i < nt; i++)
                printf(" %14s", targets[k * MAX_LABELS + i].label);
            printf("\n");
            for (int m = 0; m < metric_count; m++) {
                printf("%-16s", metric_table[m].name);
                for (int i = 0; i < nt; i++) {
                    char b[48];
                    double v = sum[i * metric_count + m] / (double)nseeds;
                    fmt_value(&metric_table[m], v, b, sizeof b);
                    printf(" %14s", b);
                }
                printf("\n");
            }
            printf("%-16s", "status");
            for (int i = 0; i < nt; i++)
                printf(" %14s", status[i]);
            printf("\n");
            if (nseeds == 1) {
                printf("%-16s", "fingerprint");
                for (int i = 0; i < nt; i++) {
                    char b[20];
                    snprintf(b, sizeof b, "%08" PRIx64, fps[i] >> 32);
                    printf(" %14s", b);
                }
                printf("\n");
            }
            for (int i = 0; i < nt; i++)
                if (targets[k * MAX_LABELS + i].params_text[0])
                    printf("  %s: %s\n", targets[k * MAX_LABELS + i].label, targets[k * MAX_LABELS + i].params_text);
            if (k + 1 < o.npaths)
                printf("\n");
        }
        free(sum);
    }
    if (json)
        printf("\n]\n");
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

static void xml_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
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
            xml_escape(junit, s->path);
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
                    fmt_value(mi, v, b, sizeof b);
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
                    xml_escape(junit, s->name);
                    fprintf(junit, ".%s\" name=\"line %d: ", t.label, ex->line);
                    xml_escape(junit, ex->text);
                    fprintf(junit, "\">");
                    if (!ok) {
                        fprintf(junit, "<failure message=\"measured ");
                        xml_escape(junit, b);
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
    return usage_error("unknown command '%s' (valid: run, check, validate, policies, version)", cmd);
}
