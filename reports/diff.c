/* diff.c: regression between two results databases (see diff.h).
 *
 * Each metric's direction, default tolerance and gate (exact or tolerance
 * plus interval) live in one table below, metric_rules; a metric of the
 * checker that the table does not name is informational (reported, never a
 * regression) until it is added here.
 * Cost: O(gb * gn + r) for gb and gn groups and r runs (pairing looks at
 * every group of BASE for each group of NEW), plus the output. */
#include "reports/diff.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/fmt.h"
#include "reports/rdb.h"
#include "reports/stats.h"
#include "sim/checker.h"
#include "sim/policy.h"
#include "sim/util.h"

/* Correctness metrics -- an ideal of 0 (or true) that a policy promises:
 * work lost, repeated, missed, cut off, overlapping against its promise,
 * stuck or undelivered, a livelock, a failed recovery -- are gated exactly.
 * Performance metrics tolerate 5 % by default, so that a small shift in a
 * tail percentile does not fail a build by itself; busy loops, empty runs
 * and wake-ups are costs a policy trades against latency, so they are
 * performance metrics although their ideal is 0.  What the scenario drives
 * (the workload, injected failures and crashes) has no direction. */
static const struct rule {
    const char *name;
    enum diff_dir dir;
    double tol_pct;
    int exact;
} metric_rules[] = {
    {"lost", DIFF_LOWER, 0, 1},          {"dropped", DIFF_LOWER, 0, 1},       {"stranded", DIFF_LOWER, 0, 1},
    {"duplicates", DIFF_LOWER, 0, 1},    {"double_effects", DIFF_LOWER, 0, 1}, {"missed", DIFF_LOWER, 0, 1},
    {"runs_cutoff", DIFF_LOWER, 0, 1},   {"overlaps", DIFF_LOWER, 0, 1},      {"overlap_runs", DIFF_LOWER, 0, 1},
    {"stuck", DIFF_LOWER, 0, 1},         {"livelock", DIFF_LOWER, 0, 1},      {"dup_deliveries", DIFF_LOWER, 0, 1},
    {"undelivered", DIFF_LOWER, 0, 1},   {"recovery_ok", DIFF_HIGHER, 0, 1},

    {"runs_empty", DIFF_LOWER, 5, 0},    {"busy_loops", DIFF_LOWER, 5, 0},    {"wakeups", DIFF_LOWER, 5, 0},
    {"latency.p50", DIFF_LOWER, 5, 0},   {"latency.p90", DIFF_LOWER, 5, 0},   {"latency.p99", DIFF_LOWER, 5, 0},
    {"latency.max", DIFF_LOWER, 5, 0},   {"latency.mean", DIFF_LOWER, 5, 0},  {"lateness.p50", DIFF_LOWER, 5, 0},
    {"lateness.p99", DIFF_LOWER, 5, 0},  {"lateness.max", DIFF_LOWER, 5, 0},  {"lateness.mean", DIFF_LOWER, 5, 0},
    {"recovery_time", DIFF_LOWER, 5, 0},

    {"published", DIFF_INFO, 0, 0},      {"processed", DIFF_INFO, 0, 0},      {"dues", DIFF_INFO, 0, 0},
    {"coalesced", DIFF_INFO, 0, 0},      {"runs", DIFF_INFO, 0, 0},           {"runs_failed", DIFF_INFO, 0, 0},
    {"runs_crashed", DIFF_INFO, 0, 0},   {"crashes", DIFF_INFO, 0, 0},        {"deliveries", DIFF_INFO, 0, 0},
};

static const struct rule *rule_of(const char *metric)
{
    for (size_t i = 0; i < sizeof metric_rules / sizeof metric_rules[0]; i++)
        if (!strcmp(metric_rules[i].name, metric))
            return &metric_rules[i];
    return NULL;
}

enum diff_dir diff_direction(const char *metric)
{
    const struct rule *r = rule_of(metric);
    return r ? r->dir : DIFF_INFO;
}

int diff_is_exact(const char *metric)
{
    const struct rule *r = rule_of(metric);
    return r && r->exact;
}

double diff_tolerance_pct(const struct diff_opts *o, const char *metric)
{
    const struct rule *r = rule_of(metric);
    if (r && r->exact)
        return 0;
    for (int i = o->ntol - 1; i >= 0; i--)
        if (!strcmp(o->tol[i].metric, metric) || !strcmp(o->tol[i].metric, "*"))
            return o->tol[i].pct;
    return r ? r->tol_pct : 0;
}

int diff_parse_tolerance(const char *s, struct diff_tolerance *t, char *msg, size_t n)
{
    const char *eq = strchr(s, '=');
    if (!eq || eq == s) {
        snprintf(msg, n, "bad tolerance '%s' (expected METRIC=PERCENT%%, e.g. latency.p99=10%%)", s);
        return -1;
    }
    if ((size_t)(eq - s) >= sizeof t->metric) {
        snprintf(msg, n, "bad tolerance '%s' (metric name too long)", s);
        return -1;
    }
    snprintf(t->metric, sizeof t->metric, "%.*s", (int)(eq - s), s);
    if (strcmp(t->metric, "*") && !metric_find(t->metric)) {
        char names[1024] = "";
        for (int i = 0; i < metric_count; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", metric_table[i].name);
        snprintf(msg, n, "unknown metric '%s' in tolerance (valid: *, %s)", t->metric, names);
        return -1;
    }
    if (diff_is_exact(t->metric)) {
        snprintf(msg, n,
                 "'%s' is a correctness metric, gated exactly in every seed: no tolerance applies to it "
                 "(see docs/reports.md)",
                 t->metric);
        return -1;
    }
    /* A plain decimal number and '%': a bare number could as well be a
     * fraction or an amount in the metric's unit, so it is refused. */
    const char *v = eq + 1;
    char *end;
    t->pct = strtod(v, &end);
    int plain = end > v && *v >= '0' && *v <= '9' && strspn(v, "0123456789.") == (size_t)(end - v);
    if (plain && !*end && t->pct <= 1e9) {
        snprintf(msg, n, "bad tolerance '%s' (a tolerance is a percentage of the base mean: write %s=%s%%)", s,
                 t->metric, v);
        return -1;
    }
    if (!plain || strcmp(end, "%") || !(t->pct >= 0) || t->pct > 1e9) {
        snprintf(msg, n, "bad tolerance '%s' (expected a percentage >= 0, e.g. %s=10%%)", s, t->metric);
        return -1;
    }
    return 0;
}

static const struct {
    const char *name;
    unsigned bit;
} key_parts[] = {
    {"scenario", DIFF_KEY_SCENARIO}, {"name", DIFF_KEY_NAME},     {"policy", DIFF_KEY_POLICY},
    {"variant", DIFF_KEY_POLICY},    {"base", DIFF_KEY_BASE},     {"params", DIFF_KEY_PARAMS},
};

int diff_parse_pair_by(const char *s, unsigned *key, char *msg, size_t n)
{
    *key = 0;
    const char *p = s;
    while (*p) {
        size_t len = strcspn(p, ",");
        size_t k = 0;
        while (k < sizeof key_parts / sizeof key_parts[0] &&
               (strlen(key_parts[k].name) != len || strncmp(key_parts[k].name, p, len)))
            k++;
        if (k == sizeof key_parts / sizeof key_parts[0]) {
            snprintf(msg, n, "unknown part '%.*s' in --pair-by '%s' (valid: scenario, name, policy, variant, base, params)",
                     (int)len, p, s);
            return -1;
        }
        *key |= key_parts[k].bit;
        p += len;
        if (*p == ',')
            p++;
    }
    if (!*key) {
        snprintf(msg, n, "empty --pair-by (e.g. --pair-by scenario,policy)");
        return -1;
    }
    return 0;
}

static void key_text(unsigned key, char *b, size_t n)
{
    b[0] = 0;
    for (size_t k = 0; k < sizeof key_parts / sizeof key_parts[0]; k++)
        if ((key & key_parts[k].bit) && strcmp(key_parts[k].name, "variant"))
            snprintf(b + strlen(b), n - strlen(b), "%s%s", b[0] ? "," : "", key_parts[k].name);
}

/* --- pairing ------------------------------------------------------------------------------ */

#define SEEDS_SHOWN 5              /* per metric, the seeds named in a verdict */

enum verdict { V_SAME, V_CHANGED, V_IMPROVED, V_WORSE_TOL, V_WORSE_NOISE, V_REGRESSION };

struct change {
    int metric;                    /* metric_table index; -1: run status */
    enum verdict verdict;
    char base[96], now[96], delta[160], tol[16];
    size_t nworse;                 /* seeds where it got worse (exact gates) */
    struct {
        uint64_t seed;
        char x[48], y[48];         /* the values in BASE and NEW, as tables write them */
    } worse[SEEDS_SHOWN];          /* the first of those seeds */
};

struct pair {
    const struct rdb_group *b, *n;
    size_t *ib, *in;               /* paired runs: b->runs[ib[k]] and n->runs[in[k]] have the same seed */
    size_t nseeds;
    struct change *ch;
    size_t nch;
    size_t same_fp, regressions;
    char under_test[4][512];       /* what differs between the groups: parameters, policy, scenario */
    int nunder;
    char only_base[128], only_new[128]; /* seeds one side ran and the other did not */
};

struct lone {
    const struct rdb_group *g;
    int in_base;                   /* 1: BASE has it and NEW does not (missing) */
    char why[160];
};

struct diff {
    const struct rdb *b, *nw;
    const struct diff_opts *o;
    unsigned key;
    struct pair *pairs;
    size_t np;
    struct lone *lone;
    size_t nlone;
    size_t nreg;
    size_t nmissing;               /* groups of BASE with runs NEW lacks (lone, or seeds only in BASE) */
    size_t nmissing_groups;        /* of them, lone groups */
};

static int key_cmp(const struct rdb_group *a, const struct rdb_group *b, unsigned key)
{
    int c = 0;
    if ((key & DIFF_KEY_SCENARIO) && (c = strcmp(a->scenario_hash, b->scenario_hash)))
        return c;
    if ((key & DIFF_KEY_NAME) && (c = strcmp(a->scenario, b->scenario)))
        return c;
    if ((key & DIFF_KEY_POLICY) && (c = strcmp(a->policy, b->policy)))
        return c;
    if ((key & DIFF_KEY_BASE) && (c = strcmp(a->base_policy, b->base_policy)))
        return c;
    if ((key & DIFF_KEY_PARAMS) && (c = strcmp(a->params, b->params)))
        return c;
    return 0;
}

#define KEY_ALL (DIFF_KEY_SCENARIO | DIFF_KEY_NAME | DIFF_KEY_POLICY | DIFF_KEY_BASE | DIFF_KEY_PARAMS)

/* "mail/poll", with the parameters when there are any. */
static void group_label(const struct rdb_group *g, char *b, size_t n)
{
    snprintf(b, n, "%s/%s%s%s%s", g->scenario, g->policy, g->params[0] ? " (" : "", g->params,
             g->params[0] ? ")" : "");
}

static void group_title(const struct rdb_group *g, char *b, size_t n)
{
    char seeds[128];
    rdb_seed_text(g, seeds, sizeof seeds);
    snprintf(b, n, "%s / %s%s%s%s / seed%s %s", g->scenario, g->policy, g->params[0] ? " (" : "", g->params,
             g->params[0] ? ")" : "", g->nruns > 1 ? "s" : "", seeds);
}

/* Seeds as rdb_seed_text writes them, from a list. */
static void seed_list_text(const uint64_t *s, size_t ns, char *buf, size_t n)
{
    struct rdb_run *runs = xcalloc(ns + 1, sizeof *runs);
    for (size_t i = 0; i < ns; i++)
        runs[i].seed = s[i];
    struct rdb_group g = {.runs = runs, .nruns = ns};
    rdb_seed_text(&g, buf, n);
    free(runs);
}

/* Pairs the runs of p->b and p->n by seed (both ascending). */
static void pair_seeds(struct pair *p)
{
    const struct rdb_group *b = p->b, *n = p->n;
    p->ib = xcalloc(b->nruns + 1, sizeof *p->ib);
    p->in = xcalloc(n->nruns + 1, sizeof *p->in);
    uint64_t *ob = xcalloc(b->nruns + 1, sizeof *ob), *on = xcalloc(n->nruns + 1, sizeof *on);
    size_t nob = 0, non = 0, i = 0, k = 0;
    while (i < b->nruns || k < n->nruns) {
        if (k == n->nruns || (i < b->nruns && b->runs[i].seed < n->runs[k].seed)) {
            ob[nob++] = b->runs[i++].seed;
        } else if (i == b->nruns || n->runs[k].seed < b->runs[i].seed) {
            on[non++] = n->runs[k++].seed;
        } else {
            p->ib[p->nseeds] = i++;
            p->in[p->nseeds++] = k++;
        }
    }
    seed_list_text(ob, nob, p->only_base, sizeof p->only_base);
    seed_list_text(on, non, p->only_new, sizeof p->only_new);
    free(ob);
    free(on);
}

/* The default of a parameter of policy `policy`, as its table writes it. */
static const char *param_default(const char *policy, const char *key, size_t klen)
{
    const struct policy_ops *ops = policy_find(policy);
    for (int i = 0; ops && i < ops->nparams; i++)
        if (strlen(ops->params[i].key) == klen && !strncmp(ops->params[i].key, key, klen))
            return ops->params[i].def;
    return NULL;
}

/* The value of key in a canonical parameter text "k=v,k=v", or NULL. */
static const char *param_value(const char *params, const char *key, size_t klen, size_t *vlen)
{
    for (const char *p = params; *p;) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        if (eq && (size_t)(eq - p) == klen && !strncmp(p, key, klen)) {
            *vlen = len - klen - 1;
            return eq + 1;
        }
        p += len + (p[len] == ',');
    }
    return NULL;
}

static void param_side(const struct rdb_group *g, const char *key, size_t klen, char *b, size_t n)
{
    size_t vlen;
    const char *v = param_value(g->params, key, klen, &vlen);
    const char *d = v ? NULL : param_default(g->base_policy, key, klen);
    if (v)
        snprintf(b, n, "%.*s", (int)vlen, v);
    else if (d)
        snprintf(b, n, "%s (default)", d);
    else
        snprintf(b, n, "default");
}

/* "parameters: poll.period 1m (default) → 00:10:00" for the keys whose
 * values differ. */
static void params_change(const struct rdb_group *b, const struct rdb_group *n, char *out, size_t len)
{
    size_t used = (size_t)snprintf(out, len, "parameters:");
    const char *lists[2] = {b->params, n->params};
    int first = 1;
    for (int side = 0; side < 2; side++) {
        for (const char *p = lists[side]; *p;) {
            size_t item = strcspn(p, ","), klen = strcspn(p, "=,"), vl;
            /* Each key once: from BASE, or from NEW when BASE lacks it. */
            int listed = side == 1 && param_value(b->params, p, klen, &vl);
            char vb[96], vn[96];
            param_side(b, p, klen, vb, sizeof vb);
            param_side(n, p, klen, vn, sizeof vn);
            if (!listed && strcmp(vb, vn) && used < len) {
                used += (size_t)snprintf(out + used, len - used, "%s %s.%.*s %s \xe2\x86\x92 %s", first ? "" : ",",
                                         n->base_policy, (int)klen, p, vb, vn);
                first = 0;
            }
            p += item + (p[item] == ',');
        }
    }
}

static void describe_pair(struct pair *p)
{
    const struct rdb_group *b = p->b, *n = p->n;
    if (strcmp(b->params, n->params))
        params_change(b, n, p->under_test[p->nunder++], sizeof p->under_test[0]);
    if (strcmp(b->policy, n->policy))
        snprintf(p->under_test[p->nunder++], sizeof p->under_test[0], "policy: %s \xe2\x86\x92 %s", b->policy,
                 n->policy);
    if (strcmp(b->base_policy, n->base_policy))
        snprintf(p->under_test[p->nunder++], sizeof p->under_test[0], "base policy: %s \xe2\x86\x92 %s",
                 b->base_policy, n->base_policy);
    if (strcmp(b->scenario_hash, n->scenario_hash) || strcmp(b->scenario, n->scenario))
        snprintf(p->under_test[p->nunder++], sizeof p->under_test[0],
                 "scenario: %s (hash %.12s) \xe2\x86\x92 %s (hash %.12s)", b->scenario, b->scenario_hash,
                 n->scenario, n->scenario_hash);
}

static void add_lone(struct diff *d, const struct rdb_group *g, int in_base, const char *why)
{
    struct lone *l = &d->lone[d->nlone++];
    *l = (struct lone){.g = g, .in_base = in_base};
    snprintf(l->why, sizeof l->why, "%s", why);
    if (in_base) {
        d->nmissing++;
        d->nmissing_groups++;
    }
}

/* Pairs the groups: identical ones first, then one to one within a key;
 * the rest are lone (missing from NEW, only in NEW, or ambiguous). */
static void pair_groups(struct diff *d)
{
    const struct rdb *b = d->b, *nw = d->nw;
    char *used_b = xcalloc(b->ngroups + 1, 1), *used_n = xcalloc(nw->ngroups + 1, 1);
    size_t *partner = xcalloc(nw->ngroups + 1, sizeof *partner);
    for (size_t i = 0; i < nw->ngroups; i++)
        for (size_t k = 0; k < b->ngroups && !used_n[i]; k++)
            if (!used_b[k] && key_cmp(&b->groups[k], &nw->groups[i], KEY_ALL) == 0) {
                used_b[k] = used_n[i] = 1;
                partner[i] = k;
            }
    for (size_t i = 0; i < nw->ngroups; i++) {
        if (used_n[i])
            continue;
        size_t nb = 0, nn = 0, k0 = 0;
        for (size_t k = 0; k < b->ngroups; k++)
            if (!used_b[k] && key_cmp(&b->groups[k], &nw->groups[i], d->key) == 0 && nb++ == 0)
                k0 = k;
        for (size_t j = 0; j < nw->ngroups; j++)
            nn += !used_n[j] && key_cmp(&nw->groups[j], &nw->groups[i], d->key) == 0;
        if (nb == 1 && nn == 1) {
            used_b[k0] = used_n[i] = 1;
            partner[i] = k0;
        }
    }
    for (size_t i = 0; i < nw->ngroups; i++) {
        if (!used_n[i])
            continue;
        struct pair *p = &d->pairs[d->np++];
        *p = (struct pair){.b = &b->groups[partner[i]], .n = &nw->groups[i]};
        pair_seeds(p);
        describe_pair(p);
        if (p->only_base[0])
            d->nmissing++;
    }
    char kt[96], why[160];
    key_text(d->key, kt, sizeof kt);
    for (size_t k = 0; k < b->ngroups; k++) {
        if (used_b[k])
            continue;
        int amb = 0;
        for (size_t i = 0; i < nw->ngroups; i++)
            amb |= !used_n[i] && key_cmp(&b->groups[k], &nw->groups[i], d->key) == 0;
        snprintf(why, sizeof why, amb ? "ambiguous: several groups share its key (%s); pair them with --pair-by" : "only in %s",
                 amb ? kt : b->path);
        add_lone(d, &b->groups[k], 1, why);
    }
    for (size_t i = 0; i < nw->ngroups; i++) {
        if (used_n[i])
            continue;
        int amb = 0;
        for (size_t k = 0; k < b->ngroups; k++)
            amb |= !used_b[k] && key_cmp(&b->groups[k], &nw->groups[i], d->key) == 0;
        snprintf(why, sizeof why, amb ? "ambiguous: several groups share its key (%s); pair them with --pair-by" : "only in %s",
                 amb ? kt : nw->path);
        add_lone(d, &nw->groups[i], 0, why);
    }
    free(used_b);
    free(used_n);
    free(partner);
}

/* --- comparing a pair ------------------------------------------------------------------------ */

static int is_never(const struct metric_info *mi, double v)
{
    return mi->is_duration && v < 0;
}

/* "never" or infinite (a censored percentile: work never done); either is
 * worse than any finite duration. */
static int is_unserved(const struct metric_info *mi, double v)
{
    return is_never(mi, v) || isinf(v);
}

/* How bad a value is, for comparing two seeds: larger is worse; "never"
 * is worse than any duration. */
static double badness(const struct metric_info *mi, enum diff_dir dir, double v)
{
    if (dir == DIFF_HIGHER)
        return -v;
    return is_never(mi, v) ? INFINITY : v;
}

static void note_worse(struct change *c, uint64_t seed, const char *x, const char *y)
{
    if (c->nworse < SEEDS_SHOWN) {
        c->worse[c->nworse].seed = seed;
        snprintf(c->worse[c->nworse].x, sizeof c->worse[0].x, "%s", x);
        snprintf(c->worse[c->nworse].y, sizeof c->worse[0].y, "%s", y);
    }
    c->nworse++;
}

/* Per-seed values of metric m over the paired seeds: the means (durations
 * that were "never" or infinite kept out and counted), the paired
 * differences of the seeds finite on both sides, and the seeds where it
 * got worse (every one for an exact metric; for a duration, those where it
 * became "never" or infinite: finite -> infinite is always a regression). */
struct seedwise {
    struct stats_acc sb, sn, sd;
    uint64_t nb, nn;
    size_t nbetter;
    int any, differs;
};

static void scan_seeds(const struct pair *p, int m, enum diff_dir dir, int exact, struct change *c,
                       struct seedwise *w)
{
    const struct metric_info *mi = &metric_table[m];
    *w = (struct seedwise){0};
    stats_init(&w->sb);
    stats_init(&w->sn);
    stats_init(&w->sd);
    for (size_t k = 0; k < p->nseeds; k++) {
        double x = p->b->runs[p->ib[k]].m[m], y = p->n->runs[p->in[k]].m[m];
        if (isnan(x) && isnan(y))
            continue;
        w->any = 1;
        if (isnan(x) != isnan(y) || x != y)
            w->differs = 1;
        if (isnan(x) || isnan(y))
            continue;
        is_never(mi, x) ? w->nb++ : stats_add(&w->sb, x); /* infinite: counted in ninf */
        is_never(mi, y) ? w->nn++ : stats_add(&w->sn, y);
        if (!is_unserved(mi, x) && !is_unserved(mi, y))
            stats_add(&w->sd, y - x);
        double bx = badness(mi, dir, x), by = badness(mi, dir, y);
        if (dir != DIFF_INFO && (exact || (is_unserved(mi, y) && !is_unserved(mi, x))) && by > bx) {
            char vx[48], vy[48];
            fmt_metric(mi, x, vx, sizeof vx);
            fmt_metric(mi, y, vy, sizeof vy);
            note_worse(c, p->n->runs[p->in[k]].seed, vx, vy);
        }
        w->nbetter += dir != DIFF_INFO && by < bx;
    }
}

/* The verdict of a metric that moved: exact gates seed by seed, the others
 * by tolerance and the interval of the paired differences. */
static enum verdict judge(const struct change *c, const struct seedwise *w, enum diff_dir dir, int exact, double pct)
{
    if (dir == DIFF_INFO)
        return V_CHANGED;
    if (c->nworse)
        return V_REGRESSION;
    if (exact)
        return w->nbetter ? V_IMPROVED : V_CHANGED;
    double md = w->sd.n ? w->sd.mean : 0, hw = stats_ci95(&w->sd);
    double worse = dir == DIFF_LOWER ? md : -md;
    double allowed = pct / 100 * fabs(w->sb.mean);
    int significant = w->sd.n < 2 || fabs(md) > hw;
    if (worse > allowed)
        return significant ? V_REGRESSION : V_WORSE_NOISE;
    if (worse > 0)
        return V_WORSE_TOL;
    if (worse < 0 || w->nn < w->nb || w->sn.ninf < w->sb.ninf)
        return V_IMPROVED;
    return V_CHANGED;
}

static void compare_metric(struct pair *p, int m, const struct diff_opts *o)
{
    const struct metric_info *mi = &metric_table[m];
    enum diff_dir dir = diff_direction(mi->name);
    int exact = diff_is_exact(mi->name);
    struct change *c = &p->ch[p->nch];
    *c = (struct change){.metric = m};
    struct seedwise w;
    scan_seeds(p, m, dir, exact, c, &w);
    if (!w.any || (!w.differs && !o->all))
        return;
    p->nch++;
    double pct = diff_tolerance_pct(o, mi->name);
    c->verdict = w.differs ? judge(c, &w, dir, exact, pct) : V_SAME;
    fmt_metric_ci(mi, &w.sb, w.nb, c->base, sizeof c->base);
    fmt_metric_ci(mi, &w.sn, w.nn, c->now, sizeof c->now);
    if (w.differs && w.sb.ninf != w.sn.ninf) {
        snprintf(c->delta, sizeof c->delta, "\xe2\x88\x9e in %" PRIu64 " \xe2\x86\x92 %" PRIu64 " seeds", w.sb.ninf,
                 w.sn.ninf);
    } else if (w.differs && w.sd.n) {
        double hw = stats_ci95(&w.sd);
        char d[96], rel[40] = "";
        fmt_estimate(mi, w.sd.mean, w.sd.mean - hw, w.sd.mean + hw, 1, d, sizeof d);
        double pct_change = 100 * w.sd.mean / fabs(w.sb.mean);
        if (w.sb.mean != 0 && !mi->is_bool && fabs(pct_change) < 1e9)
            snprintf(rel, sizeof rel, " (%+.2f%%)", pct_change);
        snprintf(c->delta, sizeof c->delta, "%.95s%s", d, rel);
    } else if (w.differs) {
        snprintf(c->delta, sizeof c->delta, "never: %" PRIu64 " \xe2\x86\x92 %" PRIu64 " seeds", w.nb, w.nn);
    } else {
        snprintf(c->delta, sizeof c->delta, "0");
    }
    if (dir == DIFF_INFO || exact)
        snprintf(c->tol, sizeof c->tol, "%s", exact ? "exact" : "-");
    else
        snprintf(c->tol, sizeof c->tol, "%g%%", pct);
    if (c->verdict == V_REGRESSION)
        p->regressions++;
}

/* The run status: a run that was ok in BASE and is not in NEW regresses. */
static void compare_status(struct pair *p, const struct diff_opts *o)
{
    struct change *c = &p->ch[p->nch];
    *c = (struct change){.metric = -1};
    size_t bad_b = 0, bad_n = 0;
    for (size_t k = 0; k < p->nseeds; k++) {
        const struct rdb_run *x = &p->b->runs[p->ib[k]], *y = &p->n->runs[p->in[k]];
        bad_b += strcmp(x->status, "ok") != 0;
        bad_n += strcmp(y->status, "ok") != 0;
        if (!strcmp(x->status, "ok") && strcmp(y->status, "ok"))
            note_worse(c, y->seed, x->status, y->status);
    }
    if (!bad_b && !bad_n)
        return;
    c->verdict = c->nworse ? V_REGRESSION : bad_n < bad_b ? V_IMPROVED : V_SAME;
    if (c->verdict == V_SAME && !o->all)
        return;
    p->nch++;
    snprintf(c->base, sizeof c->base, "%zu of %zu not ok", bad_b, p->nseeds);
    snprintf(c->now, sizeof c->now, "%zu of %zu not ok", bad_n, p->nseeds);
    snprintf(c->delta, sizeof c->delta, "%zu newly not ok", c->nworse);
    snprintf(c->tol, sizeof c->tol, "exact");
    if (c->nworse)
        p->regressions++;
}

static int severity(enum verdict v)
{
    switch (v) {
    case V_REGRESSION: return 0;
    case V_WORSE_NOISE: return 1;
    case V_WORSE_TOL: return 2;
    case V_IMPROVED: return 3;
    case V_CHANGED: return 4;
    case V_SAME: return 5;
    }
    return 6;
}

/* Regressions first, then the rest from worst to best; the metric table's
 * order within each verdict (a stable insertion sort of a few dozen rows). */
static void sort_changes(struct pair *p)
{
    for (size_t i = 1; i < p->nch; i++) {
        struct change t = p->ch[i];
        size_t k = i;
        for (; k > 0 && severity(p->ch[k - 1].verdict) > severity(t.verdict); k--)
            p->ch[k] = p->ch[k - 1];
        p->ch[k] = t;
    }
}

static void compare_pair(struct pair *p, const struct diff_opts *o)
{
    p->ch = xcalloc((size_t)metric_count + 1, sizeof *p->ch);
    for (size_t k = 0; k < p->nseeds; k++)
        p->same_fp += !strcmp(p->b->runs[p->ib[k]].fingerprint, p->n->runs[p->in[k]].fingerprint);
    compare_status(p, o);
    for (int m = 0; m < metric_count; m++)
        compare_metric(p, m, o);
    sort_changes(p);
}

/* --- output -------------------------------------------------------------------------------- */

static const char *verdict_text(enum verdict v)
{
    switch (v) {
    case V_SAME: return "unchanged";
    case V_CHANGED: return "changed";
    case V_IMPROVED: return "improved";
    case V_WORSE_TOL: return "worse, within tolerance";
    case V_WORSE_NOISE: return "worse, not significant";
    case V_REGRESSION: return "REGRESSION";
    }
    return "?";
}

static const char *change_name(const struct change *c)
{
    return c->metric < 0 ? "status" : metric_table[c->metric].name;
}

/* The verdict column: "REGRESSION in 1 of 5 seeds" for a seed-wise one. */
static void verdict_cell(const struct pair *p, const struct change *c, char *b, size_t n)
{
    if (c->verdict == V_REGRESSION && c->nworse)
        snprintf(b, n, "REGRESSION in %zu of %zu seed%s", c->nworse, p->nseeds, p->nseeds == 1 ? "" : "s");
    else
        snprintf(b, n, "%s", verdict_text(c->verdict));
}

/* Markdown table cells must not contain '|'. */
static void md_cell(FILE *out, const char *s)
{
    for (; *s; s++)
        if (*s == '|')
            fputs("\\|", out);
        else
            fputc(*s, out);
}

/* Pairs with a regression first, otherwise in NEW's order. */
static size_t *pair_order(const struct diff *d)
{
    size_t *ord = xcalloc(d->np + 1, sizeof *ord), k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < d->np; i++)
            if ((d->pairs[i].regressions > 0) == (pass == 0))
                ord[k++] = i;
    return ord;
}

/* The lines that open the text report: one per seed of an exact
 * regression (at most SEEDS_SHOWN per metric), one per other regression. */
static void text_regression_lines(FILE *out, const struct diff *d, const size_t *ord)
{
    for (size_t i = 0; i < d->np; i++) {
        const struct pair *p = &d->pairs[ord[i]];
        char label[512];
        group_label(p->n, label, sizeof label);
        for (size_t k = 0; k < p->nch; k++) {
            const struct change *c = &p->ch[k];
            if (c->verdict != V_REGRESSION)
                continue;
            if (c->nworse) {
                for (size_t s = 0; s < c->nworse && s < SEEDS_SHOWN; s++)
                    fprintf(out, "REGRESSION %s %s seed %" PRIu64 ": %s \xe2\x86\x92 %s\n", label, change_name(c),
                            c->worse[s].seed, c->worse[s].x, c->worse[s].y);
                if (c->nworse > SEEDS_SHOWN)
                    fprintf(out, "REGRESSION %s %s in %zu more seeds\n", label, change_name(c),
                            c->nworse - SEEDS_SHOWN);
            } else {
                fprintf(out, "REGRESSION %s %s: %s \xe2\x86\x92 %s, change %s, tolerance %s\n", label,
                        change_name(c), c->base, c->now, c->delta, c->tol);
            }
        }
    }
    for (size_t i = 0; i < d->nlone; i++)
        if (d->lone[i].in_base) {
            char title[512];
            group_title(d->lone[i].g, title, sizeof title);
            fprintf(out, "MISSING %s: %s\n", title, d->lone[i].why);
        }
    for (size_t i = 0; i < d->np; i++)
        if (d->pairs[ord[i]].only_base[0]) {
            char label[512];
            group_label(d->pairs[ord[i]].n, label, sizeof label);
            fprintf(out, "MISSING %s seeds %s: only in %s\n", label, d->pairs[ord[i]].only_base, d->b->path);
        }
}

static void text_pair_table(FILE *out, const struct pair *p)
{
    size_t w[5] = {6, 4, 3, 6, 9};
    char vc[64];
    for (size_t k = 0; k < p->nch; k++) {
        const struct change *c = &p->ch[k];
        const char *cols[5] = {change_name(c), c->base, c->now, c->delta, c->tol};
        for (int j = 0; j < 5; j++)
            if (fmt_width(cols[j]) > w[j])
                w[j] = fmt_width(cols[j]);
    }
    const char *head[6] = {"metric", "base", "new", "change", "tolerance", "verdict"};
    fprintf(out, " ");
    for (int j = 0; j < 6; j++) {
        fprintf(out, " %s", head[j]);
        for (size_t s = fmt_width(head[j]); j < 5 && s < w[j]; s++)
            fputc(' ', out);
    }
    fputc('\n', out);
    for (size_t k = 0; k < p->nch; k++) {
        const struct change *c = &p->ch[k];
        verdict_cell(p, c, vc, sizeof vc);
        const char *cols[6] = {change_name(c), c->base, c->now, c->delta, c->tol, vc};
        fprintf(out, " ");
        for (int j = 0; j < 6; j++) {
            fprintf(out, " %s", cols[j]);
            for (size_t s = fmt_width(cols[j]); j < 5 && s < w[j]; s++)
                fputc(' ', out);
        }
        fputc('\n', out);
    }
}

static void text_pair(FILE *out, const struct diff *d, const struct pair *p)
{
    char title[512];
    group_title(p->n, title, sizeof title);
    fprintf(out, "\n%s\n", title);
    for (int u = 0; u < p->nunder; u++)
        fprintf(out, "  %s\n", p->under_test[u]);
    if (p->only_base[0] || p->only_new[0] || p->nunder) {
        fprintf(out, "  compared with %s / %s%s%s%s", p->b->scenario, p->b->policy, p->b->params[0] ? " (" : "",
                p->b->params, p->b->params[0] ? ")" : "");
        fprintf(out, " in %zu paired seed%s", p->nseeds, p->nseeds == 1 ? "" : "s");
        if (p->only_base[0])
            fprintf(out, "; seeds %s only in %s", p->only_base, d->b->path);
        if (p->only_new[0])
            fprintf(out, "; seeds %s only in %s", p->only_new, d->nw->path);
        fprintf(out, "\n");
    }
    fprintf(out, "  fingerprints identical in %zu of %zu seeds%s\n", p->same_fp, p->nseeds,
            p->same_fp == p->nseeds ? " (the same runs at the same instants)" : "");
    if (p->nch == 0) {
        fprintf(out, "  every metric unchanged\n");
        return;
    }
    text_pair_table(out, p);
    size_t metrics_listed = 0;
    for (size_t k = 0; k < p->nch; k++)
        metrics_listed += p->ch[k].metric >= 0;
    fprintf(out, "  (%zu other metrics unchanged)\n", (size_t)metric_count - metrics_listed);
}

/* The closing line: "result: 2 regressions (mail/poll lost, ...)", and
 * what is missing. */
static void result_line(FILE *out, const struct diff *d, const size_t *ord)
{
    fprintf(out, "\nresult: %zu regression%s", d->nreg, d->nreg == 1 ? "" : "s");
    const char *sep = " (";
    for (size_t i = 0; i < d->np; i++) {
        const struct pair *p = &d->pairs[ord[i]];
        for (size_t k = 0; k < p->nch; k++)
            if (p->ch[k].verdict == V_REGRESSION) {
                fprintf(out, "%s%s/%s %s", sep, p->n->scenario, p->n->policy, change_name(&p->ch[k]));
                sep = ", ";
            }
    }
    fprintf(out, "%s", d->nreg ? ")" : "");
    if (d->nmissing)
        fprintf(out, "; %zu group%s with runs missing from %s%s", d->nmissing, d->nmissing == 1 ? "" : "s",
                d->nw->path, d->o->allow_missing ? " (allowed by --allow-missing)" : "");
    fprintf(out, "\n");
}

static void print_text(FILE *out, const struct diff *d)
{
    char kt[96];
    key_text(d->key, kt, sizeof kt);
    fprintf(out, "simrun diff: %s (%zu runs) -> %s (%zu runs): %zu pair%s of groups compared (paired by %s)\n",
            d->b->path, d->b->nruns, d->nw->path, d->nw->nruns, d->np, d->np == 1 ? "" : "s", kt);
    size_t *ord = pair_order(d);
    if (d->nreg || d->nmissing) {
        fprintf(out, "\n");
        text_regression_lines(out, d, ord);
    }
    for (size_t i = 0; i < d->np; i++)
        text_pair(out, d, &d->pairs[ord[i]]);
    if (d->nlone > d->nmissing_groups) {
        fprintf(out, "\nnot compared (only in %s, or ambiguous):\n", d->nw->path);
        for (size_t i = 0; i < d->nlone; i++) {
            if (d->lone[i].in_base)
                continue;
            char title[512];
            group_title(d->lone[i].g, title, sizeof title);
            fprintf(out, "  %s: %s\n", title, d->lone[i].why);
        }
    }
    result_line(out, d, ord);
    free(ord);
}

static void md_group(FILE *out, const struct rdb_group *g)
{
    md_cell(out, g->policy);
    if (g->params[0]) {
        fprintf(out, " (");
        md_cell(out, g->params);
        fprintf(out, ")");
    }
}

/* The table of regressions: a row per seed of an exact one (at most
 * SEEDS_SHOWN per metric), a row per other one. */
static void md_regressions(FILE *out, const struct diff *d, const size_t *ord)
{
    fprintf(out, "| scenario | policy | metric | seeds | base | new | change | gate |\n");
    fprintf(out, "|---|---|---|---|---:|---:|---:|---|\n");
    for (size_t i = 0; i < d->np; i++) {
        const struct pair *p = &d->pairs[ord[i]];
        char seeds[128];
        rdb_seed_text(p->n, seeds, sizeof seeds);
        for (size_t k = 0; k < p->nch; k++) {
            const struct change *c = &p->ch[k];
            if (c->verdict != V_REGRESSION)
                continue;
            size_t rows = c->nworse ? (c->nworse < SEEDS_SHOWN ? c->nworse : SEEDS_SHOWN) : 1;
            for (size_t s = 0; s < rows; s++) {
                fprintf(out, "| ");
                md_cell(out, p->n->scenario);
                fprintf(out, " | ");
                md_group(out, p->n);
                fprintf(out, " | **%s** | ", change_name(c));
                if (c->nworse) {
                    fprintf(out, "%" PRIu64 " | ", c->worse[s].seed);
                    md_cell(out, c->worse[s].x);
                    fprintf(out, " | ");
                    md_cell(out, c->worse[s].y);
                    fprintf(out, " | worse in %zu of %zu seeds | exact |\n", c->nworse, p->nseeds);
                } else {
                    fprintf(out, "%s | ", seeds);
                    md_cell(out, c->base);
                    fprintf(out, " | ");
                    md_cell(out, c->now);
                    fprintf(out, " | ");
                    md_cell(out, c->delta);
                    fprintf(out, " | %s, paired 95%% CI |\n", c->tol);
                }
            }
            if (c->nworse > SEEDS_SHOWN)
                fprintf(out, "| | | **%s** | %zu more seeds | | | | exact |\n", change_name(c), c->nworse - SEEDS_SHOWN);
        }
    }
    fprintf(out, "\n");
}

/* What differs between paired groups, for every pair where something does. */
static void md_under_test(FILE *out, const struct diff *d, const size_t *ord)
{
    int any = 0;
    for (size_t i = 0; i < d->np; i++) {
        const struct pair *p = &d->pairs[ord[i]];
        char label[512];
        group_label(p->n, label, sizeof label);
        for (int u = 0; u < p->nunder; u++) {
            fprintf(out, "%s- ", any++ ? "" : "Under test:\n\n");
            md_cell(out, label);
            fprintf(out, ": ");
            md_cell(out, p->under_test[u]);
            fprintf(out, "\n");
        }
    }
    if (any)
        fprintf(out, "\n");
}

static void md_missing(FILE *out, const struct diff *d)
{
    fprintf(out, "**Missing from `%s`**%s:\n\n", d->nw->path,
            d->o->allow_missing ? " (allowed by `--allow-missing`)" : " (fails the diff unless `--allow-missing`)");
    for (size_t i = 0; i < d->nlone; i++)
        if (d->lone[i].in_base) {
            char title[512];
            group_title(d->lone[i].g, title, sizeof title);
            fprintf(out, "- ");
            md_cell(out, title);
            fprintf(out, ": %s\n", d->lone[i].why);
        }
    for (size_t i = 0; i < d->np; i++)
        if (d->pairs[i].only_base[0]) {
            char label[512];
            group_label(d->pairs[i].n, label, sizeof label);
            fprintf(out, "- ");
            md_cell(out, label);
            fprintf(out, " seeds %s\n", d->pairs[i].only_base);
        }
    fprintf(out, "\n");
}

static void md_pair(FILE *out, const struct pair *p)
{
    char title[512], vc[64];
    group_title(p->n, title, sizeof title);
    fprintf(out, "#### ");
    md_cell(out, title);
    fprintf(out, "\n\n");
    for (int u = 0; u < p->nunder; u++) {
        fprintf(out, "- ");
        md_cell(out, p->under_test[u]);
        fprintf(out, "\n");
    }
    fprintf(out, "%sFingerprints identical in %zu of %zu seeds%s.\n\n", p->nunder ? "\n" : "", p->same_fp, p->nseeds,
            p->same_fp == p->nseeds ? " (the same runs at the same instants)" : "");
    if (!p->nch)
        return;
    fprintf(out, "| metric | base | new | change | tolerance | verdict |\n|---|---:|---:|---:|---:|---|\n");
    for (size_t k = 0; k < p->nch; k++) {
        const struct change *c = &p->ch[k];
        verdict_cell(p, c, vc, sizeof vc);
        fprintf(out, "| %s | ", change_name(c));
        md_cell(out, c->base);
        fprintf(out, " | ");
        md_cell(out, c->now);
        fprintf(out, " | ");
        md_cell(out, c->delta);
        fprintf(out, " | %s | %s%s%s |\n", c->tol, c->verdict == V_REGRESSION ? "**" : "", vc,
                c->verdict == V_REGRESSION ? "**" : "");
    }
    fprintf(out, "\n");
}

static void print_markdown(FILE *out, const struct diff *d)
{
    int fails = d->nreg || (d->nmissing && !d->o->allow_missing);
    char kt[96];
    key_text(d->key, kt, sizeof kt);
    fprintf(out, "### simrun diff: %s\n\n", d->nreg ? "regression" : fails ? "runs missing" : "no regression");
    fprintf(out,
            "`%s` (%zu runs) \xe2\x86\x92 `%s` (%zu runs): %zu pair%s of groups compared (paired by %s), %zu "
            "regression%s.\n\n",
            d->b->path, d->b->nruns, d->nw->path, d->nw->nruns, d->np, d->np == 1 ? "" : "s", kt, d->nreg,
            d->nreg == 1 ? "" : "s");
    size_t *ord = pair_order(d);
    md_under_test(out, d, ord);
    if (d->nreg)
        md_regressions(out, d, ord);
    if (d->nmissing)
        md_missing(out, d);
    fprintf(out, "<details><summary>Every change, per scenario and policy (regressions first)</summary>\n\n");
    for (size_t i = 0; i < d->np; i++)
        md_pair(out, &d->pairs[ord[i]]);
    size_t extra = 0;
    for (size_t i = 0; i < d->nlone; i++)
        extra += !d->lone[i].in_base;
    if (extra) {
        fprintf(out, "Not compared:\n\n");
        for (size_t i = 0; i < d->nlone; i++) {
            if (d->lone[i].in_base)
                continue;
            char title[512];
            group_title(d->lone[i].g, title, sizeof title);
            fprintf(out, "- ");
            md_cell(out, title);
            fprintf(out, ": %s\n", d->lone[i].why);
        }
        fprintf(out, "\n");
    }
    fprintf(out, "</details>\n");
    free(ord);
}

int diff_run(const char *base_path, const char *new_path, const struct diff_opts *o, FILE *out, char *err, size_t n)
{
    struct rdb *b = NULL, *nw = NULL;
    if (rdb_open(base_path, &b, err, n) != 0)
        return 2;
    if (rdb_open(new_path, &nw, err, n) != 0) {
        rdb_close(b);
        return 2;
    }
    struct diff d = {.b = b, .nw = nw, .o = o, .key = o->pair_by ? o->pair_by : DIFF_KEY_DEFAULT};
    d.pairs = xcalloc(nw->ngroups + 1, sizeof *d.pairs);
    d.lone = xcalloc(b->ngroups + nw->ngroups + 1, sizeof *d.lone);
    pair_groups(&d);
    for (size_t i = 0; i < d.np; i++) {
        compare_pair(&d.pairs[i], o);
        d.nreg += d.pairs[i].regressions;
    }
    if (o->format == DIFF_MARKDOWN)
        print_markdown(out, &d);
    else
        print_text(out, &d);
    char kt[96];
    key_text(d.key, kt, sizeof kt);
    if (d.np == 0)
        fprintf(stderr,
                "simrun: warning: no runs of %s pair with runs of %s (paired by %s; a variant pairs with its base "
                "policy under --pair-by scenario,base)\n",
                new_path, base_path, kt);
    else if (d.nmissing)
        fprintf(stderr, "simrun: warning: %zu group%s of %s with runs missing from %s%s\n", d.nmissing,
                d.nmissing == 1 ? "" : "s", base_path, new_path, o->allow_missing ? " (allowed)" : "");
    for (size_t i = 0; i < d.np; i++) {
        free(d.pairs[i].ch);
        free(d.pairs[i].ib);
        free(d.pairs[i].in);
    }
    int rc = d.nreg || (d.nmissing && !o->allow_missing) ? 1 : 0;
    free(d.pairs);
    free(d.lone);
    rdb_close(b);
    rdb_close(nw);
    return rc;
}
