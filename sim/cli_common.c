/* cli_common.c: what the commands that simulate share (see cli.h): their
 * scenario arguments and seed, -p and --set options, loading the scenarios,
 * the line and caret under a diagnostic, resolving a policy label into a
 * target, and checking and opening the store.
 *
 * Every input is validated before anything is simulated or written: all
 * scenarios are parsed, every policy name and --set resolved, and only then
 * does the database open, so bad input never leaves a half-written result. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "sim/checker.h"
#include "sim/cli.h"
#include "sim/grammar.h"
#include "sim/plugin.h"
#include "sim/refs.h"
#include "sim/sim.h"
#include "sim/store.h"
#include "sim/suggest.h"
#include "sim/sweep.h"
#include "sim/syntax.h"
#include "sim/util.h"

int cli_quiet_fallbacks;
int cli_excerpts;

/* --- messages ------------------------------------------------------------------------------ */

/* Bytes of the valid UTF-8 character at p (at most n bytes), 0 if none:
 * invalid bytes are shown as \\xNN, as in the messages. */
static int utf8_seq(const unsigned char *p, size_t n)
{
    int k = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3 : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
    if (k == 0 || (size_t)k > n)
        return 0;
    for (int j = 1; j < k; j++)
        if ((p[j] & 0xc0) != 0x80)
            return 0;
    return k;
}

/* The line under a diagnostic (cli.h). */
void cli_print_excerpt(const char *file, int no, int col)
{
    if (!strcmp(file, CLI_STDIN_PATH))
        return; /* read once, and gone */
    FILE *f = fopen(file, "rb");
    if (!f)
        return;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len = -1;
    for (int i = 0; i < no && (len = getline(&line, &cap, f)) >= 0; i++)
        ;
    fclose(f);
    if (len < 0 || len > SCN_MAX_LINE + 2) {
        free(line);
        return;
    }
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        line[--len] = 0;
    char shown[4 * SCN_MAX_LINE + 8], under[4 * SCN_MAX_LINE + 8];
    size_t a = 0, b = 0;
    for (ssize_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)line[i];
        int before = i < col - 1;
        int u = c >= 0x80 ? utf8_seq((const unsigned char *)line + i, (size_t)(len - i)) : 0;
        if (u) {
            memcpy(shown + a, line + i, (size_t)u); /* valid UTF-8: one character, one column */
            a += (size_t)u;
            i += u - 1;
            if (before)
                under[b++] = ' ';
        } else if (c == '\t' || (c >= 0x20 && c < 0x7f)) {
            shown[a++] = (char)c;
            if (before)
                under[b++] = c == '\t' ? '\t' : ' ';
        } else {
            a += (size_t)snprintf(shown + a, 5, "\\x%02x", c);
            if (before)
                b += (size_t)snprintf(under + b, 5, "    ");
        }
    }
    shown[a] = under[b] = 0;
    free(line);
    fprintf(stderr, "%6d | %s\n       | %s^\n", no, shown, under);
}

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
    if (cli_excerpts)
        cli_print_excerpt(s->path, line, 1);
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

/* The next name of a comma list at *p (a buffer it cuts up): blanks
 * around it dropped, empty names skipped; NULL after the last. */
static char *next_name(char **p)
{
    while (**p) {
        char *w = *p + strspn(*p, " \t");
        size_t len = strcspn(w, ",");
        *p = w + len + (w[len] == ',');
        while (len > 0 && (w[len - 1] == ' ' || w[len - 1] == '\t'))
            len--;
        w[len] = '\0';
        if (len)
            return w;
    }
    return NULL;
}

int cli_policy_names(const char *list, char **buf, const char **names, int max, int *n)
{
    *n = 0;
    *buf = xstrdup(list);
    char *p = *buf;
    for (char *w; (w = next_name(&p));) {
        for (int k = 0; k < *n; k++)
            if (!strcmp(names[k], w))
                return cli_usage_error("-p names '%s' twice (each policy or variant runs once)", w);
        if (*n == max) {
            char most[16];
            snprintf(most, sizeof most, "%d", max);
            return cli_usage_error("-p names more than %s policies or variants", most);
        }
        names[(*n)++] = w;
    }
    if (*n == 0)
        return cli_usage_error("empty policy list '%s'", list);
    return 0;
}

char *cli_name_list(const char *list)
{
    char *buf = xstrdup(list), *out = xmalloc(strlen(list) + 1), *p = buf;
    size_t len = 0;
    for (char *w; (w = next_name(&p));) {
        size_t l = strlen(w);
        if (len)
            out[len++] = ',';
        memcpy(out + len, w, l);
        len += l;
    }
    out[len] = '\0';
    free(buf);
    return out;
}

int cli_check_policy_list(const char *list)
{
    if (!list)
        return 0;
    char *buf;
    const char *names[CLI_MAX_LABELS];
    int n;
    int rc = cli_policy_names(list, &buf, names, CLI_MAX_LABELS, &n);
    free(buf);
    return rc;
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
    if (strstr(v, ".."))
        return cli_opt_seeds(opts, v); /* --seed A..B is --seeds A..B */
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

int cli_opt_jobs(void *opts, const char *v)
{
    struct cli_opts *o = opts;
    uint64_t nj;
    if (cli_parse_u64(v, &nj) || nj < 1 || nj > SWEEP_MAX_WORKERS)
        return cli_usage_error("bad -j '%s' (expected 1..256 worker processes)", v);
    o->jobs = (int)nj;
    return 0;
}

int cli_jobs(const struct cli_opts *o)
{
    if (o->jobs)
        return o->jobs;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > SWEEP_MAX_WORKERS ? SWEEP_MAX_WORKERS : (int)n;
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

int cli_opt_plugin(void *opts, const char *path)
{
    char msg[1024];
    if (plugin_load(path, NULL, msg, sizeof msg) != 0) {
        fprintf(stderr, "%s: error: %s\n", cli_prog, msg);
        return 2;
    }
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
        int bad = 0;
        if (cli_load_scenario(o->paths[i], &scn[i], &d) != 0) {
            diag_print(&d);
            bad = 1;
        } else if (cli_check_memory(scn[i], cli_max_memory(o)) != 0 || cli_check_targets(scn[i]) != 0) {
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
    int rc = store_open(db, st, err, sizeof err);
    if (rc == STORE_EWRITE)
        return cli_write_error(err);
    if (rc != 0) {
        fprintf(stderr, "%s: error: %s\n", cli_prog, err);
        return 2;
    }
    return 0;
}

int cli_check_db_path(const char *what, const char *path)
{
    struct stat st;
    if (!path || stat(path, &st) != 0 || S_ISREG(st.st_mode))
        return 0; /* a missing file is created, or its open says why not */
    const char *kind = S_ISDIR(st.st_mode)    ? "a folder"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISFIFO(st.st_mode) ? "a pipe"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "something else";
    char e[SCN_QUOTE_MAX];
    scn_escape(e, sizeof e, path);
    fprintf(stderr, "%s: error: %s '%s' is %s, not a regular file (a results database is an SQLite file)\n", cli_prog,
            what, e, kind);
    return 2;
}

int cli_write_error(const char *why)
{
    fprintf(stderr, "%s: error: cannot write results: %s\n", cli_prog, why);
    return CLI_EXIT_WRITE;
}

/* --- targets: a policy (or variant) with its resolved parameters ------------------------------- */

/* What resolving a target reads key=value pairs with: the grammar of the
 * variant's system (simrun's for a plain policy) and, for messages, the
 * scenario's path and the target's label. */
struct kv_ctx {
    const struct scenario *s;
    const char *label;
    const char *policy;            /* the registered policy */
    int grammar;
    /* Where each parameter was last set (line 0: by a --set, named by
     * key and value), and which was set last: what a refused combination
     * points at (check_combination). */
    struct kv_pos {
        int line, col;
        const char *key, *value;
    } pos[PARAMS_MAX];
    int last;                      /* -1: none set yet */
    int err_line, err_col;         /* where a -2 diagnostic points */
};

/* One key=value read with the target's grammar and set: a fallback warns
 * at the pair (line 0: a --set); a rejection is an error there (-2, msg a
 * whole diagnostic) or, for a --set, -1 with msg. */
static int apply_one(struct kv_ctx *c, struct params *ps, const char *key, const char *value, int line, int col,
                     char *msg, size_t mn)
{
    char k2[64], v2[256], why[400];
    enum gr_verdict gv =
        grammar_param(c->grammar, c->policy, key, value, k2, sizeof k2, v2, sizeof v2, why, sizeof why);
    if (gv == GR_REJECT) {
        if (line) {
            snprintf(msg, mn, "%s:%d:%d: error: %s", c->s->path, line, col, why);
            c->err_line = line;
            c->err_col = col;
        } else
            snprintf(msg, mn, "%s.%s=%s: %s", c->label, key, value, why);
        return line ? -2 : -1;
    }
    if (gv == GR_FALLBACK && !cli_quiet_fallbacks) {
        if (line)
            fprintf(stderr, "%s:%d:%d: warning: %s (under %s)\n", c->s->path, line, col, why, c->label);
        else
            fprintf(stderr, "%s: warning: --set %s.%s=%s: %s\n", cli_prog, c->label, key, value, why);
    }
    if (params_set(ps, k2, v2, msg, mn) != 0)
        return -1;
    int i = params_index(ps, k2);
    if (i >= 0) {
        c->pos[i] = (struct kv_pos){line, col, key, value};
        c->last = i;
    }
    return 0;
}

/* A combination of parameters the policy refuses: an error at the line
 * that last set the parameter it blames (or, when that one kept its
 * default or a variant's value, at the last that set any), -2 with the
 * whole diagnostic; or, when only --set or nothing set them, -1 with msg. */
static int check_combination(struct kv_ctx *c, const struct policy_ops *ops, const struct params *ps,
                             char *msg, size_t mn)
{
    char why[400];
    int i = params_check(ops, ps, why, sizeof why);
    if (i < 0)
        return 0;
    const struct kv_pos *at = i < ps->n && c->pos[i].key ? &c->pos[i] : c->last >= 0 ? &c->pos[c->last] : NULL;
    if (at && at->line) {
        snprintf(msg, mn, "%s:%d:%d: error: %s (under %s)", c->s->path, at->line, at->col, why, c->label);
        c->err_line = at->line;
        c->err_col = at->col;
        return -2;
    }
    if (at)
        snprintf(msg, mn, "%s.%s=%s: %s", c->label, at->key, at->value, why);
    else
        snprintf(msg, mn, "%s: %s", c->label, why);
    return -1;
}

/* Applies key=value pairs to ps.  0, or -1/-2 with msg as apply_one. */
static int apply_kv(struct kv_ctx *c, struct params *ps, const struct param_kv *kv, uint16_t n, char *msg,
                    size_t mn)
{
    for (uint16_t i = 0; i < n; i++) {
        int rc = apply_one(c, ps, kv[i].key, kv[i].value, kv[i].line,
                           kv[i].col + (int)strlen(kv[i].key) + 1, msg, mn);
        if (rc)
            return rc;
    }
    return 0;
}

/* The `set` lines for `name`, in order. */
static int apply_sets(struct kv_ctx *c, struct params *ps, const char *name, char *msg, size_t mn)
{
    for (uint16_t i = 0; i < c->s->nsets; i++) {
        if (strcmp(c->s->sets[i].policy, name))
            continue;
        int rc = apply_kv(c, ps, c->s->sets[i].kv, c->s->sets[i].nkv, msg, mn);
        if (rc)
            return rc;
    }
    return 0;
}

/* The message for a label that is no policy: the registered ones, the
 * built-in variants and the scenario's variants. */
static void unknown_label(const struct scenario *s, const char *base, char *msg, size_t mn)
{
    char names[1024];
    struct suggest sg;
    suggest_init(&sg, base);
    size_t off = policy_list_names(names, sizeof names, &sg);
    for (uint16_t i = 0; i < s->nvariants && off < sizeof names; i++) {
        off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", i ? ", " : "; the scenario's variants: ",
                                s->variants[i].name);
        suggest_add(&sg, s->variants[i].name);
    }
    snprintf(msg, mn, "unknown policy '%s' (valid: %s)", base, names);
    suggest_append(&sg, msg, mn);
}

/* The schedules as the target's system reads them: warnings for its
 * fallbacks, the first rejection as a whole diagnostic in msg. */
struct sched_report {
    const struct scenario *s;
    const char *label;
    char *msg;
    size_t mn;
    int rejected;
    int line, col;                 /* of the first rejection */
};

static void sched_note(void *ctx, const struct gr_note *n)
{
    struct sched_report *r = ctx;
    if (n->verdict == GR_FALLBACK) {
        if (!cli_quiet_fallbacks)
            fprintf(stderr, "%s:%d:%d: warning: %s (under %s)\n", r->s->path, n->line, n->col, n->msg, r->label);
    } else if (!r->rejected++) {
        snprintf(r->msg, r->mn, "%s:%d:%d: error: %s (under %s)", r->s->path, n->line, n->col, n->msg, r->label);
        r->line = n->line;
        r->col = n->col;
    }
}

static int check_schedules(struct kv_ctx *c, int grammar, char *msg, size_t mn)
{
    if (!grammar_needed(c->s, grammar))
        return 0;
    struct scenario copy;
    struct sched_report r = {c->s, c->label, msg, mn, 0, 0, 0};
    grammar_apply(c->s, grammar, &copy, sched_note, &r);
    grammar_release(&copy);
    c->err_line = r.line;
    c->err_col = r.col;
    return r.rejected ? -2 : 0;
}

int cli_resolve_target(const struct scenario *s, const char *label, const struct cli_set *sets, int nsets,
                       struct cli_target *t, char *msg, size_t mn)
{
    const struct variant_def *var = NULL;
    for (uint16_t i = 0; i < s->nvariants; i++)
        if (!strcmp(s->variants[i].name, label))
            var = &s->variants[i];
    const char *base = var ? var->base : label;
    const struct policy_variant *bv = NULL;
    t->ops = policy_find(base);
    if (!t->ops)
        bv = policy_variant_find(base, &t->ops);
    if (!t->ops) {
        unknown_label(s, base, msg, mn);
        return -1;
    }
    snprintf(t->label, sizeof t->label, "%s", label);
    params_init(&t->ps, t->ops);
    struct kv_ctx c = {.s = s, .label = label, .policy = t->ops->name, .last = -1};
    int rc = apply_sets(&c, &t->ps, t->ops->name, msg, mn);
    if (!rc && bv) {
        rc = policy_variant_apply(bv, &t->ps, msg, mn);
        c.grammar = t->ps.grammar;
        if (!rc)
            rc = apply_sets(&c, &t->ps, bv->name, msg, mn);
    }
    if (!rc && var) {
        rc = apply_sets(&c, &t->ps, label, msg, mn);
        if (!rc)
            rc = apply_kv(&c, &t->ps, var->kv, var->nkv, msg, mn);
    }
    for (int i = 0; !rc && i < nsets; i++) {
        if (strcmp(sets[i].policy, t->ops->name) && strcmp(sets[i].policy, label) && (!bv || strcmp(sets[i].policy, bv->name)))
            continue;
        rc = apply_one(&c, &t->ps, sets[i].key, sets[i].value, 0, 0, msg, mn);
    }
    if (!rc)
        rc = check_combination(&c, t->ops, &t->ps, msg, mn);
    if (!rc)
        rc = check_schedules(&c, t->ps.grammar, msg, mn);
    t->err_line = c.err_line;
    t->err_col = c.err_col;
    if (rc)
        return rc;
    params_format(&t->ps, t->params_text, sizeof t->params_text);
    return 0;
}

/* The i-th label the scenario configures: its set lines' policies, then
 * its variants. */
static const char *configured_label(const struct scenario *s, uint32_t i)
{
    return i < s->nsets ? s->sets[i].policy : s->variants[i - s->nsets].name;
}

/* Resolves label in s (with the --set lines sets[0..nsets)) only to check
 * it, printing what refuses it; 0 if it resolves. */
static int check_resolves(const struct scenario *s, const char *label, const struct cli_set *sets, int nsets)
{
    struct cli_target t;
    char msg[1024];
    int r = cli_resolve_target(s, label, sets, nsets, &t, msg, sizeof msg);
    if (r == -2) { /* a whole file:line:col diagnostic */
        fprintf(stderr, "%s\n", msg);
        if (cli_excerpts)
            cli_print_excerpt(s->path, t.err_line, t.err_col);
    } else if (r)
        fprintf(stderr, "%s: error: %s: %s\n", cli_prog, s->path, msg);
    return r;
}

int cli_check_targets(const struct scenario *s)
{
    int quiet = cli_quiet_fallbacks;
    cli_quiet_fallbacks = 1; /* warnings come when the target is resolved to run */
    int rc = 0;
    for (uint32_t i = 0; i < (uint32_t)s->nsets + s->nvariants && !rc; i++) {
        const char *label = configured_label(s, i);
        int seen = 0;
        for (uint32_t k = 0; k < i && !seen; k++)
            seen = !strcmp(label, configured_label(s, k));
        if (seen)
            continue;
        rc = check_resolves(s, label, NULL, 0) ? -1 : 0;
    }
    /* A built-in variant named only by an expect line runs too (its
     * grammar may refuse a schedule): the same check. */
    for (uint32_t e = 0; e < s->nexpects && !rc; e++)
        for (char **pp = s->expects[e].policies; *pp && !rc; pp++) {
            int own = 0;
            for (uint16_t v = 0; v < s->nvariants && !own; v++)
                own = !strcmp(s->variants[v].name, *pp);
            if (own || !policy_variant_find(*pp, NULL))
                continue;
            rc = check_resolves(s, *pp, NULL, 0) ? -1 : 0;
        }
    cli_quiet_fallbacks = quiet;
    return rc;
}

int cli_all_labels(const struct scenario *s, const char **out, int max)
{
    int n = 0;
    for (int i = 0; i < policy_count() && n < max; i++)
        out[n++] = policy_at(i)->name;
    for (uint16_t i = 0; i < s->nvariants && n < max; i++)
        out[n++] = s->variants[i].name;
    /* Built-in variants are run when an expect line names them. */
    for (uint32_t e = 0; e < s->nexpects; e++)
        for (char **p = s->expects[e].policies; *p && n < max; p++) {
            int seen = 0;
            for (int k = 0; k < n && !seen; k++)
                seen = !strcmp(out[k], *p);
            if (!seen && policy_variant_find(*p, NULL))
                out[n++] = *p;
        }
    return n;
}

/* The policies that --set configures, with every scenario's set and
 * variant lines: a combination the policy refuses is refused whether it
 * runs or not, as a scenario's `set` line is (cli_check_targets). */
static int check_set_combinations(const struct cli_opts *o, struct scenario **scn)
{
    int quiet = cli_quiet_fallbacks;
    cli_quiet_fallbacks = 1; /* warnings come when the target is resolved to run */
    int rc = 0;
    for (int i = 0; i < o->nsets && !rc; i++) {
        const char *label = o->sets[i].policy;
        int seen = 0;
        for (int k = 0; k < i && !seen; k++)
            seen = !strcmp(label, o->sets[k].policy);
        for (int k = 0; k < o->npaths && !seen && !rc; k++) {
            int known = policy_find(label) || policy_variant_find(label, NULL);
            for (uint16_t v = 0; v < scn[k]->nvariants && !known; v++)
                known = !strcmp(scn[k]->variants[v].name, label);
            if (!known)
                continue; /* another scenario's variant */
            rc = check_resolves(scn[k], label, o->sets, o->nsets) ? 2 : 0;
        }
    }
    cli_quiet_fallbacks = quiet;
    return rc;
}

int cli_check_sets(const struct cli_opts *o, struct scenario **scn)
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
    return check_set_combinations(o, scn);
}
