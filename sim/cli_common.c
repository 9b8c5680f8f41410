/* cli_common.c: what the commands that simulate share (see cli.h): their
 * scenario arguments and seed and --set options, loading the scenarios,
 * resolving a policy label into a target, and opening the store.
 *
 * Every input is validated before anything is simulated or written: all
 * scenarios are parsed, every policy name and --set resolved, and only then
 * does the database open, so bad input never leaves a half-written result. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cli.h"
#include "sim/refs.h"
#include "sim/sim.h"
#include "sim/store.h"

/* --- option values ------------------------------------------------------------------------ */

int cli_parse_u64(const char *s, uint64_t *out)
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

int cli_opt_max_memory(void *opts, const char *v)
{
    struct cli_opts *o = opts;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    double unit = 1;
    switch (*end) {
    case 'k': case 'K': unit = 1024.0; end++; break;
    case 'm': case 'M': unit = 1024.0 * 1024; end++; break;
    case 'g': case 'G': unit = 1024.0 * 1024 * 1024; end++; break;
    case 't': case 'T': unit = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (unit > 1 && (!strcmp(end, "iB") || !strcmp(end, "B")))
        end += strlen(end);
    double bytes = x * unit;
    if (end == v || *end || errno || !(bytes >= 1024.0 * 1024) || bytes > 1.8e19 || v[0] == '-' || v[0] == '+')
        return cli_usage_error("bad --max-memory '%s' (expected a size of at least 1M, e.g. 512M or 8G)", v);
    o->max_memory = (uint64_t)bytes;
    return 0;
}

uint64_t cli_max_memory(const struct cli_opts *o)
{
    return o->max_memory ? o->max_memory : sim_memory_default();
}

static void fmt_size(uint64_t b, char *buf, size_t n)
{
    if (b >= (UINT64_C(1) << 30))
        snprintf(buf, n, "%.1f GiB", (double)b / (double)(UINT64_C(1) << 30));
    else
        snprintf(buf, n, "%.1f MiB", (double)b / (double)(UINT64_C(1) << 20));
}

int cli_check_memory(const struct scenario *s, uint64_t budget)
{
    int line = 0;
    char why[200], need[32], lim[32];
    uint64_t est = sim_memory_estimate(s, &line, why, sizeof why);
    if (est <= budget)
        return 0;
    fmt_size(est, need, sizeof need);
    fmt_size(budget, lim, sizeof lim);
    fprintf(stderr,
            "%s:%d:1: error: the scenario needs about %s of memory at once (%s), over the memory budget of %s "
            "(--max-memory)\n",
            s->path, line, need, why, lim);
    return 2;
}

int cli_memory_stop(const struct scenario *s, const char *label, uint64_t seed, const struct sim_result *res)
{
    if (res->status != SIM_MEMORY_LIMIT)
        return 0;
    if (res->status_line > 0)
        fprintf(stderr, "%s:%d:1: error: %s (under %s, seed %" PRIu64 ")\n", s->path, res->status_line,
                res->status_msg, label, seed);
    else
        fprintf(stderr, "%s: error: %s (under %s, seed %" PRIu64 ")\n", s->path, res->status_msg, label, seed);
    return 2;
}

int cli_opt_scenario(void *opts, const char *path)
{
    struct cli_opts *o = opts;
    if (o->npaths >= CLI_MAX_SCENARIOS)
        return cli_usage_error("too many scenarios (at most %s)", "1024");
    o->paths[o->npaths++] = path;
    return 0;
}

int cli_opt_seed(void *opts, const char *v)
{
    struct cli_opts *o = opts;
    if (cli_parse_u64(v, &o->seed_lo) || o->seed_lo > (uint64_t)INT64_MAX)
        return cli_usage_error("bad seed '%s' (expected an integer 0..9223372036854775807)", v);
    o->seed_hi = o->seed_lo;
    o->have_seed = 1;
    return 0;
}

int cli_opt_seeds(void *opts, const char *v)
{
    struct cli_opts *o = opts;
    const char *dots = strstr(v, "..");
    char lo[32];
    if (!dots || (size_t)(dots - v) >= sizeof lo)
        return cli_usage_error("bad seed range '%s' (expected A..B)", v);
    memcpy(lo, v, (size_t)(dots - v));
    lo[dots - v] = 0;
    if (cli_parse_u64(lo, &o->seed_lo) || cli_parse_u64(dots + 2, &o->seed_hi) || o->seed_hi < o->seed_lo ||
        o->seed_hi > (uint64_t)INT64_MAX)
        return cli_usage_error("bad seed range '%s' (expected A..B with A <= B)", v);
    if (o->seed_hi - o->seed_lo >= CLI_MAX_SEEDS)
        return cli_usage_error("seed range '%s' too long (at most 100000 seeds)", v);
    o->have_seed = 1;
    return 0;
}

int cli_opt_set(void *opts, const char *v)
{
    struct cli_opts *o = opts;
    if (o->nsets >= CLI_MAX_SETS)
        return cli_usage_error("too many --set options (at most %s)", "64");
    const char *dot = strchr(v, '.'), *eq = strchr(v, '=');
    if (!dot || !eq || dot > eq || dot == v || eq == dot + 1)
        return cli_usage_error("bad --set '%s' (expected POLICY.KEY=VALUE)", v);
    struct cli_set *cs = &o->sets[o->nsets++];
    if ((size_t)(dot - v) >= sizeof cs->policy || (size_t)(eq - dot - 1) >= sizeof cs->key ||
        strlen(eq + 1) >= sizeof cs->value)
        return cli_usage_error("--set '%s' too long", v);
    snprintf(cs->policy, sizeof cs->policy, "%.*s", (int)(dot - v), v);
    snprintf(cs->key, sizeof cs->key, "%.*s", (int)(eq - dot - 1), dot + 1);
    snprintf(cs->value, sizeof cs->value, "%s", eq + 1);
    return 0;
}

/* --- scenarios and the store ------------------------------------------------------------------ */

int cli_load_scenario(const char *path, struct scenario **out, struct diag *d)
{
    return scenario_parse_ex(path, &refs_builtin, out, d);
}

int cli_load_all(const struct cli_opts *o, struct scenario **scn)
{
    for (int i = 0; i < o->npaths; i++) {
        struct diag d;
        int bad = 0;
        if (cli_load_scenario(o->paths[i], &scn[i], &d) != 0) {
            diag_print(&d);
            bad = 1;
        } else if (cli_check_memory(scn[i], cli_max_memory(o)) != 0) {
            scenario_free(scn[i]);
            bad = 1;
        }
        if (bad) {
            for (int k = 0; k < i; k++)
                scenario_free(scn[k]);
            return 2;
        }
    }
    return 0;
}

void cli_free_all(struct scenario **scn, int n)
{
    for (int i = 0; i < n; i++)
        scenario_free(scn[i]);
}

int cli_open_store(const char *db, struct store **st)
{
    *st = NULL;
    if (!db)
        return 0;
    char err[512];
    if (store_open(db, st, err, sizeof err) != 0) {
        fprintf(stderr, "%s: error: %s\n", cli_prog, err);
        return 2;
    }
    return 0;
}

/* --- targets: a policy (or variant) with its resolved parameters ------------------------------- */

/* Applies key=value pairs to ps.  0 or -1 with msg. */
static int apply_kv(struct params *ps, const struct param_kv *kv, uint16_t n, char *msg, size_t mn)
{
    for (uint16_t i = 0; i < n; i++)
        if (params_set(ps, kv[i].key, kv[i].value, msg, mn) != 0)
            return -1;
    return 0;
}

/* The message for a label that is no policy: the registered ones and the
 * scenario's variants. */
static void unknown_label(const struct scenario *s, const char *base, char *msg, size_t mn)
{
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
}

int cli_resolve_target(const struct scenario *s, const char *label, const struct cli_set *sets, int nsets,
                       struct cli_target *t, char *msg, size_t mn)
{
    const struct variant_def *var = NULL;
    for (uint16_t i = 0; i < s->nvariants; i++)
        if (!strcmp(s->variants[i].name, label))
            var = &s->variants[i];
    const char *base = var ? var->base : label;
    t->ops = policy_find(base);
    if (!t->ops) {
        unknown_label(s, base, msg, mn);
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

int cli_all_labels(const struct scenario *s, const char **out, int max)
{
    int n = 0;
    for (int i = 0; i < policy_registry_count && n < max; i++)
        out[n++] = policy_registry[i]->name;
    for (uint16_t i = 0; i < s->nvariants && n < max; i++)
        out[n++] = s->variants[i].name;
    return n;
}
