/* cli_common.c: what the commands that simulate share (see cli.h): their
 * scenario arguments and seed and --set options, loading the scenarios,
 * resolving a policy label into a target, and opening the store.
 *
 * Every input is validated before anything is simulated or written: all
 * scenarios are parsed, every policy name and --set resolved, and only then
 * does the database open, so bad input never leaves a half-written result. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/cli.h"
#include "sim/refs.h"
#include "sim/store.h"
#include "sim/util.h"

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

/* Reads all of standard input (at most CLI_STDIN_MAX bytes) into *buf.
 * 0, or -1 with err. */
static int read_stdin(char **buf, size_t *len, char *err, size_t n)
{
    size_t cap = 65536, got = 0;
    char *b = xmalloc(cap);
    for (;;) {
        if (got == cap) {
            if (cap > CLI_STDIN_MAX) {
                free(b);
                snprintf(err, n, "larger than %d MiB", (int)(CLI_STDIN_MAX >> 20));
                return -1;
            }
            cap *= 2;
            b = xrealloc(b, cap);
        }
        ssize_t r = read(0, b + got, cap - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(err, n, "%s", strerror(errno));
            free(b);
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    if (got > CLI_STDIN_MAX) {
        free(b);
        snprintf(err, n, "larger than %d MiB", (int)(CLI_STDIN_MAX >> 20));
        return -1;
    }
    *buf = b;
    *len = got;
    return 0;
}

int cli_load_scenario(const char *path, struct scenario **out, struct diag *d)
{
    if (strcmp(path, "-") != 0)
        return scenario_parse_ex(path, &refs_builtin, out, d);
    /* Standard input: messages name it <stdin>, a trace file is relative
     * to the current folder, and the default name is "stdin". */
    static int taken;
    char *buf, err[256];
    size_t len;
    *out = NULL;
    memset(d, 0, sizeof *d);
    snprintf(d->file, sizeof d->file, "%s", CLI_STDIN_PATH);
    if (taken++) {
        snprintf(d->msg, sizeof d->msg, "standard input ('-') can be read only once");
        return -1;
    }
    if (read_stdin(&buf, &len, err, sizeof err) != 0) {
        snprintf(d->msg, sizeof d->msg, "cannot read the scenario: %s", err);
        return -1;
    }
    int rc = scenario_parse_buf_ex(CLI_STDIN_PATH, buf, len, &refs_builtin, out, d);
    free(buf);
    if (rc == 0 && !strcmp((*out)->name, CLI_STDIN_PATH)) {
        free((*out)->name);
        (*out)->name = xstrdup("stdin");
    }
    return rc;
}

int cli_load_all(const struct cli_opts *o, struct scenario **scn)
{
    for (int i = 0; i < o->npaths; i++) {
        struct diag d;
        if (cli_load_scenario(o->paths[i], &scn[i], &d) != 0) {
            diag_print(&d);
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
    int rc = store_open(db, st, err, sizeof err);
    if (rc == STORE_EWRITE)
        return cli_write_error(err);
    if (rc != 0) {
        fprintf(stderr, "%s: error: %s\n", cli_prog, err);
        return 2;
    }
    return 0;
}

int cli_write_error(const char *why)
{
    fprintf(stderr, "%s: error: cannot write results: %s\n", cli_prog, why);
    return CLI_EXIT_WRITE;
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
