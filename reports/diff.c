/* diff.c: regression between two results databases (see diff.h).
 *
 * Each metric's direction and default tolerance live in one table below,
 * metric_rules; a metric of the checker that the table does not name is
 * informational (reported, never a regression) until it is added here.
 * Cost: O(g log g + r) for g groups and r runs, plus the output. */
#include "reports/diff.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/fmt.h"
#include "reports/rdb.h"
#include "reports/stats.h"
#include "sim/checker.h"
#include "sim/util.h"

/* Direction and default tolerance (percent of the base value) per metric.
 * Correctness metrics tolerate nothing; performance metrics 5 %, so that a
 * small shift in a tail percentile does not fail a build by itself. */
static const struct {
    const char *name;
    enum diff_dir dir;
    double tol_pct;
} metric_rules[] = {
    {"published", DIFF_INFO, 0},       {"processed", DIFF_INFO, 0},      {"lost", DIFF_LOWER, 0},
    {"dropped", DIFF_LOWER, 0},        {"stranded", DIFF_LOWER, 0},      {"duplicates", DIFF_LOWER, 0},
    {"double_effects", DIFF_LOWER, 0}, {"dues", DIFF_INFO, 0},           {"missed", DIFF_LOWER, 0},
    {"coalesced", DIFF_INFO, 0},       {"runs", DIFF_INFO, 0},           {"runs_empty", DIFF_LOWER, 5},
    {"runs_failed", DIFF_INFO, 0},     {"runs_crashed", DIFF_INFO, 0},   {"runs_cutoff", DIFF_LOWER, 0},
    {"busy_loops", DIFF_LOWER, 5},     {"wakeups", DIFF_LOWER, 5},       {"overlaps", DIFF_LOWER, 0},
    {"overlap_runs", DIFF_LOWER, 0},   {"latency.p50", DIFF_LOWER, 5},   {"latency.p90", DIFF_LOWER, 5},
    {"latency.p99", DIFF_LOWER, 5},    {"latency.max", DIFF_LOWER, 5},   {"latency.mean", DIFF_LOWER, 5},
    {"lateness.p50", DIFF_LOWER, 5},   {"lateness.p99", DIFF_LOWER, 5},  {"lateness.max", DIFF_LOWER, 5},
    {"lateness.mean", DIFF_LOWER, 5},  {"crashes", DIFF_INFO, 0},        {"recovery_ok", DIFF_HIGHER, 0},
    {"stuck", DIFF_LOWER, 0},          {"recovery_time", DIFF_LOWER, 5}, {"livelock", DIFF_LOWER, 0},
    {"deliveries", DIFF_INFO, 0},      {"dup_deliveries", DIFF_LOWER, 0}, {"undelivered", DIFF_LOWER, 0},
};

static int rule_index(const char *metric)
{
    for (size_t i = 0; i < sizeof metric_rules / sizeof metric_rules[0]; i++)
        if (!strcmp(metric_rules[i].name, metric))
            return (int)i;
    return -1;
}

enum diff_dir diff_direction(const char *metric)
{
    int i = rule_index(metric);
    return i < 0 ? DIFF_INFO : metric_rules[i].dir;
}

double diff_tolerance_pct(const struct diff_opts *o, const char *metric)
{
    for (int i = o->ntol - 1; i >= 0; i--)
        if (!strcmp(o->tol[i].metric, metric) || !strcmp(o->tol[i].metric, "*"))
            return o->tol[i].pct;
    int i = rule_index(metric);
    return i < 0 ? 0 : metric_rules[i].tol_pct;
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
    char *end;
    t->pct = strtod(eq + 1, &end);
    if (end == eq + 1 || (*end && strcmp(end, "%")) || !(t->pct >= 0) || t->pct > 1e9) {
        snprintf(msg, n, "bad tolerance '%s' (expected a percentage >= 0, e.g. %s=10%%)", s, t->metric);
        return -1;
    }
    return 0;
}

/* --- comparing two groups ------------------------------------------------------------ */

enum verdict { V_SAME, V_CHANGED, V_IMPROVED, V_WORSE_TOL, V_WORSE_NOISE, V_REGRESSION };

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

struct change {
    int metric;                    /* metric_table index; -1: run status */
    enum verdict verdict;
    char base[96], now[96], delta[160], tol[16];
};

struct pair {
    const struct rdb_group *b, *n;
    struct change *ch;
    size_t nch;
    size_t same_fp;
    size_t regressions;
};

static int is_never(const struct metric_info *mi, double v)
{
    return mi->is_duration && v < 0;
}

/* Formats a signed difference in the metric's unit. */
static void fmt_delta(const struct metric_info *mi, double d, char *b, size_t n)
{
    char v[48];
    if (mi->is_duration)
        fmt_duration(fabs(d), v, sizeof v);
    else if (fabs(d) < 9e15 && d == floor(d))
        snprintf(v, sizeof v, "%.0f", fabs(d));
    else
        snprintf(v, sizeof v, "%.3g", fabs(d));
    if (snprintf(b, n, "%c%s", d < 0 ? '-' : '+', v) >= (int)n)
        b[n - 1] = 0; /* cut: the caller's buffer bounds what is shown */
}

static void compare_metric(struct pair *p, int m, const struct diff_opts *o)
{
    const struct metric_info *mi = &metric_table[m];
    struct stats_acc sb, sn, sd;
    stats_init(&sb);
    stats_init(&sn);
    stats_init(&sd);
    uint64_t nb = 0, nn = 0;
    int differs = 0, any = 0;
    for (size_t i = 0; i < p->b->nruns; i++) {
        double x = p->b->runs[i].m[m], y = p->n->runs[i].m[m];
        if (isnan(x) && isnan(y))
            continue;
        any = 1;
        if (isnan(x) != isnan(y) || x != y)
            differs = 1;
        if (isnan(x) || isnan(y))
            continue;
        if (is_never(mi, x))
            nb++;
        else
            stats_add(&sb, x);
        if (is_never(mi, y))
            nn++;
        else
            stats_add(&sn, y);
        if (!is_never(mi, x) && !is_never(mi, y))
            stats_add(&sd, y - x);
    }
    if (!any || (!differs && !o->all))
        return;
    enum diff_dir dir = diff_direction(mi->name);
    double pct = diff_tolerance_pct(o, mi->name);
    enum verdict v = V_SAME;
    if (differs) {
        double md = sd.n ? sd.mean : 0, hw = stats_ci95(&sd);
        double worse = dir == DIFF_LOWER ? md : dir == DIFF_HIGHER ? -md : 0;
        double allowed = pct / 100 * fabs(sb.mean);
        int significant = sd.n < 2 || fabs(md) > hw;
        if (dir == DIFF_INFO)
            v = V_CHANGED;
        else if (dir == DIFF_LOWER && nn > nb)
            v = V_REGRESSION; /* "never" is worse than any duration */
        else if (worse > allowed)
            v = significant ? V_REGRESSION : V_WORSE_NOISE;
        else if (worse > 0)
            v = V_WORSE_TOL;
        else if (worse < 0 || nn < nb)
            v = V_IMPROVED;
        else
            v = V_CHANGED;
    }
    struct change *c = &p->ch[p->nch++];
    *c = (struct change){.metric = m, .verdict = v};
    fmt_metric_ci(mi, &sb, nb, c->base, sizeof c->base);
    fmt_metric_ci(mi, &sn, nn, c->now, sizeof c->now);
    if (differs && sd.n) {
        char d[48], h[48] = "";
        fmt_delta(mi, sd.mean, d, sizeof d);
        double hw = stats_ci95(&sd);
        if (!isnan(hw)) {
            char hv[40];
            if (mi->is_duration)
                fmt_duration(hw, hv, sizeof hv);
            else
                snprintf(hv, sizeof hv, "%.3g", hw);
            snprintf(h, sizeof h, " \xc2\xb1 %s", hv);
        }
        char rel[40] = "";
        double pct_change = 100 * sd.mean / fabs(sb.mean);
        if (sb.mean != 0 && !mi->is_bool && fabs(pct_change) < 1e9)
            snprintf(rel, sizeof rel, " (%+.2f%%)", pct_change);
        snprintf(c->delta, sizeof c->delta, "%.47s%.47s%s", d, h, rel);
    } else if (differs) {
        snprintf(c->delta, sizeof c->delta, "never: %" PRIu64 " -> %" PRIu64 " seeds", nb, nn);
    } else {
        snprintf(c->delta, sizeof c->delta, "0");
    }
    if (dir == DIFF_INFO)
        snprintf(c->tol, sizeof c->tol, "-");
    else
        snprintf(c->tol, sizeof c->tol, "%g%%", pct);
    if (v == V_REGRESSION)
        p->regressions++;
}

static void compare_pair(struct pair *p, const struct diff_opts *o)
{
    p->ch = xcalloc((size_t)metric_count + 1, sizeof *p->ch);
    size_t bad_b = 0, bad_n = 0, newly_bad = 0;
    for (size_t i = 0; i < p->b->nruns; i++) {
        const struct rdb_run *x = &p->b->runs[i], *y = &p->n->runs[i];
        p->same_fp += !strcmp(x->fingerprint, y->fingerprint);
        bad_b += strcmp(x->status, "ok") != 0;
        bad_n += strcmp(y->status, "ok") != 0;
        newly_bad += !strcmp(x->status, "ok") && strcmp(y->status, "ok");
    }
    if (bad_b || bad_n) {
        struct change *c = &p->ch[p->nch++];
        *c = (struct change){.metric = -1, .verdict = newly_bad ? V_REGRESSION : bad_n < bad_b ? V_IMPROVED : V_SAME};
        snprintf(c->base, sizeof c->base, "%zu of %zu not ok", bad_b, p->b->nruns);
        snprintf(c->now, sizeof c->now, "%zu of %zu not ok", bad_n, p->n->nruns);
        snprintf(c->delta, sizeof c->delta, "%zu newly not ok", newly_bad);
        snprintf(c->tol, sizeof c->tol, "0");
        if (c->verdict == V_SAME && !o->all)
            p->nch--;
        if (newly_bad)
            p->regressions++;
    }
    for (int m = 0; m < metric_count; m++)
        compare_metric(p, m, o);
}

static int same_seeds(const struct rdb_group *a, const struct rdb_group *b)
{
    if (a->nruns != b->nruns)
        return 0;
    for (size_t i = 0; i < a->nruns; i++)
        if (a->runs[i].seed != b->runs[i].seed)
            return 0;
    return 1;
}

static int same_key(const struct rdb_group *a, const struct rdb_group *b)
{
    return !strcmp(a->scenario_hash, b->scenario_hash) && !strcmp(a->policy, b->policy) &&
           !strcmp(a->params, b->params);
}

/* --- output -------------------------------------------------------------------------------- */

static const char *change_name(const struct change *c)
{
    return c->metric < 0 ? "status" : metric_table[c->metric].name;
}

static void group_title(const struct rdb_group *g, char *b, size_t n)
{
    char seeds[128];
    rdb_seed_text(g, seeds, sizeof seeds);
    snprintf(b, n, "%s / %s%s%s%s / seed%s %s", g->scenario, g->policy, g->params[0] ? " (" : "", g->params,
             g->params[0] ? ")" : "", g->nruns > 1 ? "s" : "", seeds);
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

static void print_text(FILE *out, const struct rdb *b, const struct rdb *nw, struct pair *pairs, size_t np,
                       char **unmatched, size_t nun, size_t nreg)
{
    fprintf(out, "simrun diff: %s (%zu runs) -> %s (%zu runs): %zu groups compared\n", b->path, b->nruns, nw->path,
            nw->nruns, np);
    for (size_t i = 0; i < np; i++) {
        struct pair *p = &pairs[i];
        char title[512];
        group_title(p->n, title, sizeof title);
        fprintf(out, "\n%s\n", title);
        fprintf(out, "  fingerprints identical in %zu of %zu seeds%s\n", p->same_fp, p->n->nruns,
                p->same_fp == p->n->nruns ? " (behaviour unchanged)" : "");
        if (p->nch == 0) {
            fprintf(out, "  every metric unchanged\n");
            continue;
        }
        size_t w[5] = {6, 4, 3, 6, 9};
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
            const char *cols[6] = {change_name(c), c->base, c->now, c->delta, c->tol, verdict_text(c->verdict)};
            fprintf(out, " ");
            for (int j = 0; j < 6; j++) {
                fprintf(out, " %s", cols[j]);
                for (size_t s = fmt_width(cols[j]); j < 5 && s < w[j]; s++)
                    fputc(' ', out);
            }
            fputc('\n', out);
        }
        size_t unchanged = (size_t)metric_count - p->nch + (p->nch && p->ch[0].metric < 0);
        fprintf(out, "  (%zu other metrics unchanged)\n", unchanged);
    }
    if (nun) {
        fprintf(out, "\nnot compared:\n");
        for (size_t i = 0; i < nun; i++)
            fprintf(out, "  %s\n", unmatched[i]);
    }
    fprintf(out, "\nresult: %zu regression%s", nreg, nreg == 1 ? "" : "s");
    const char *sep = " (";
    for (size_t i = 0; i < np; i++)
        for (size_t k = 0; k < pairs[i].nch; k++)
            if (pairs[i].ch[k].verdict == V_REGRESSION) {
                fprintf(out, "%s%s/%s %s", sep, pairs[i].n->scenario, pairs[i].n->policy, change_name(&pairs[i].ch[k]));
                sep = ", ";
            }
    fprintf(out, "%s\n", nreg ? ")" : "");
}

static void print_markdown(FILE *out, const struct rdb *b, const struct rdb *nw, struct pair *pairs, size_t np,
                           char **unmatched, size_t nun, size_t nreg)
{
    fprintf(out, "### simrun diff: %s\n\n", nreg ? "regression" : "no regression");
    fprintf(out, "`%s` (%zu runs) \xe2\x86\x92 `%s` (%zu runs): %zu groups compared, %zu regression%s.\n\n", b->path,
            b->nruns, nw->path, nw->nruns, np, nreg, nreg == 1 ? "" : "s");
    if (nreg) {
        fprintf(out, "| scenario | policy | seeds | metric | base | new | change | tolerance |\n");
        fprintf(out, "|---|---|---|---|---:|---:|---:|---:|\n");
        for (size_t i = 0; i < np; i++) {
            char seeds[128];
            rdb_seed_text(pairs[i].n, seeds, sizeof seeds);
            for (size_t k = 0; k < pairs[i].nch; k++) {
                const struct change *c = &pairs[i].ch[k];
                if (c->verdict != V_REGRESSION)
                    continue;
                fprintf(out, "| ");
                md_cell(out, pairs[i].n->scenario);
                fprintf(out, " | ");
                md_cell(out, pairs[i].n->policy);
                if (pairs[i].n->params[0]) {
                    fprintf(out, " (");
                    md_cell(out, pairs[i].n->params);
                    fprintf(out, ")");
                }
                fprintf(out, " | %s | **%s** | ", seeds, change_name(c));
                md_cell(out, c->base);
                fprintf(out, " | ");
                md_cell(out, c->now);
                fprintf(out, " | ");
                md_cell(out, c->delta);
                fprintf(out, " | %s |\n", c->tol);
            }
        }
        fprintf(out, "\n");
    }
    fprintf(out, "<details><summary>Every change, per scenario and policy</summary>\n\n");
    for (size_t i = 0; i < np; i++) {
        struct pair *p = &pairs[i];
        char title[512];
        group_title(p->n, title, sizeof title);
        fprintf(out, "#### ");
        md_cell(out, title);
        fprintf(out, "\n\nFingerprints identical in %zu of %zu seeds%s.\n\n", p->same_fp, p->n->nruns,
                p->same_fp == p->n->nruns ? " (behaviour unchanged)" : "");
        if (!p->nch)
            continue;
        fprintf(out, "| metric | base | new | change | tolerance | verdict |\n|---|---:|---:|---:|---:|---|\n");
        for (size_t k = 0; k < p->nch; k++) {
            const struct change *c = &p->ch[k];
            fprintf(out, "| %s | ", change_name(c));
            md_cell(out, c->base);
            fprintf(out, " | ");
            md_cell(out, c->now);
            fprintf(out, " | ");
            md_cell(out, c->delta);
            fprintf(out, " | %s | %s%s%s |\n", c->tol, c->verdict == V_REGRESSION ? "**" : "",
                    verdict_text(c->verdict), c->verdict == V_REGRESSION ? "**" : "");
        }
        fprintf(out, "\n");
    }
    if (nun) {
        fprintf(out, "Not compared:\n\n");
        for (size_t i = 0; i < nun; i++) {
            fprintf(out, "- ");
            md_cell(out, unmatched[i]);
            fprintf(out, "\n");
        }
        fprintf(out, "\n");
    }
    fprintf(out, "</details>\n");
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
    struct pair *pairs = xcalloc(nw->ngroups + 1, sizeof *pairs);
    char **unmatched = xcalloc(b->ngroups + nw->ngroups + 1, sizeof *unmatched);
    size_t np = 0, nun = 0, nreg = 0;
    char *used = xcalloc(b->ngroups + 1, 1);
    for (size_t i = 0; i < nw->ngroups; i++) {
        const struct rdb_group *g = &nw->groups[i];
        const struct rdb_group *m = NULL;
        for (size_t k = 0; k < b->ngroups && !m; k++)
            if (!used[k] && same_key(&b->groups[k], g)) {
                m = &b->groups[k];
                used[k] = 1;
            }
        char title[512], line[1024];
        group_title(g, title, sizeof title);
        if (!m) {
            snprintf(line, sizeof line, "%s: only in %s", title, nw->path);
            unmatched[nun++] = xstrdup(line);
            continue;
        }
        if (!same_seeds(m, g)) {
            char sb[128];
            rdb_seed_text(m, sb, sizeof sb);
            snprintf(line, sizeof line, "%s: seed sets differ (%s has seeds %s)", title, b->path, sb);
            unmatched[nun++] = xstrdup(line);
            continue;
        }
        struct pair *p = &pairs[np++];
        *p = (struct pair){.b = m, .n = g};
        compare_pair(p, o);
        nreg += p->regressions;
    }
    for (size_t k = 0; k < b->ngroups; k++) {
        if (used[k])
            continue;
        char title[512], line[1024];
        group_title(&b->groups[k], title, sizeof title);
        snprintf(line, sizeof line, "%s: only in %s", title, b->path);
        unmatched[nun++] = xstrdup(line);
    }
    if (o->format == DIFF_MARKDOWN)
        print_markdown(out, b, nw, pairs, np, unmatched, nun, nreg);
    else
        print_text(out, b, nw, pairs, np, unmatched, nun, nreg);
    if (np == 0)
        fprintf(stderr, "simrun: warning: no runs of %s match runs of %s (scenario hash, policy, parameters, seeds)\n",
                new_path, base_path);
    for (size_t i = 0; i < np; i++)
        free(pairs[i].ch);
    for (size_t i = 0; i < nun; i++)
        free(unmatched[i]);
    free(pairs);
    free(unmatched);
    free(used);
    rdb_close(b);
    rdb_close(nw);
    return nreg ? 1 : 0;
}
