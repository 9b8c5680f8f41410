/* cli_plan.c: the job list of `simrun run` (see struct cli_plan in cli.h).
 *
 * The full list is every (scenario, column, seed) in a fixed order: the
 * scenarios as given, then each one's columns (its labels, each expanded
 * into the points of its parameter study, the first axis varying slowest),
 * then the seeds.  It depends on the command's inputs only, never on -j,
 * --shard or --resume, so its hash (run_plan.plan in the database) names
 * the sweep, and every machine that runs a shard of it numbers the jobs
 * the same way.  A shard is the jobs i with i % N == K - 1 (round robin:
 * shards get scenarios, policies and seeds alike, so they take about as
 * long); --resume drops the jobs whose run (scenario hash, policy label,
 * parameters, seed) the database already has. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cli.h"
#include "sim/store.h"
#include "sim/util.h"

/* --- options ------------------------------------------------------------------------------ */

int cli_opt_sweep(void *opts, const char *v)
{
    struct cli_opts *o = opts;
    if (o->nsweeps >= CLI_MAX_SWEEPS)
        return cli_usage_error("too many --sweep options (at most %s)", "8");
    const char *dot = strchr(v, '.'), *eq = strchr(v, '=');
    if (!dot || !eq || dot > eq || dot == v || eq == dot + 1 || !eq[1])
        return cli_usage_error("bad --sweep '%s' (expected POLICY.KEY=V1,V2,...)", v);
    struct cli_sweep *w = &o->sweeps[o->nsweeps];
    if ((size_t)(dot - v) >= sizeof w->policy || (size_t)(eq - dot - 1) >= sizeof w->key ||
        strlen(eq + 1) >= sizeof w->values)
        return cli_usage_error("--sweep '%s' too long", v);
    snprintf(w->policy, sizeof w->policy, "%.*s", (int)(dot - v), v);
    snprintf(w->key, sizeof w->key, "%.*s", (int)(eq - dot - 1), dot + 1);
    snprintf(w->values, sizeof w->values, "%s", eq + 1);
    int nv = 0;
    for (const char *c = w->values;; c++, nv++) {
        const char *comma = strchr(c, ',');
        if (comma == c || !*c)
            return cli_usage_error("empty value in --sweep '%s'", v);
        if (!comma)
            break;
        c = comma;
    }
    if (nv >= 256)
        return cli_usage_error("too many values in --sweep '%s' (at most 256)", v);
    for (int i = 0; i < o->nsweeps; i++)
        if (!strcmp(o->sweeps[i].policy, w->policy) && !strcmp(o->sweeps[i].key, w->key))
            return cli_usage_error("--sweep '%s' is given twice", v);
    o->nsweeps++;
    return 0;
}

int cli_opt_shard(void *opts, const char *v)
{
    struct cli_opts *o = opts;
    const char *slash = strchr(v, '/');
    char k[32];
    if (!slash || (size_t)(slash - v) >= sizeof k)
        return cli_usage_error("bad --shard '%s' (expected K/N, e.g. 2/4)", v);
    snprintf(k, sizeof k, "%.*s", (int)(slash - v), v);
    if (cli_parse_u64(k, &o->shard_k) || cli_parse_u64(slash + 1, &o->shard_n) || o->shard_k < 1 ||
        o->shard_k > o->shard_n || o->shard_n > CLI_MAX_SHARDS)
        return cli_usage_error("bad --shard '%s' (expected K/N with 1 <= K <= N <= 100000)", v);
    return 0;
}

/* --- axes ------------------------------------------------------------------------------------ */

/* One axis of a scenario's parameter study: a sweep line, or --sweep.  A
 * scenario has at most 8 sweep lines (the parser's limit) and the command
 * line 8 more, so MAX_AXES bounds both. */
#define MAX_AXES (CLI_MAX_SWEEPS + 8)
struct axis {
    const char *policy, *key;
    const char *vals[256];
    int nvals;
    char buf[2048];                /* the values of a --sweep, split */
};

/* Fills a from --sweep w. */
static void cli_axis(struct axis *a, const struct cli_sweep *w)
{
    a->policy = w->policy;
    a->key = w->key;
    snprintf(a->buf, sizeof a->buf, "%s", w->values);
    a->nvals = 0;
    for (char *save = NULL, *p = strtok_r(a->buf, ",", &save); p && a->nvals < 256; p = strtok_r(NULL, ",", &save))
        a->vals[a->nvals++] = p;
}

/* The axes of scenario s: its sweep lines in file order, each replaced by
 * a --sweep of the same POLICY.KEY, then the other --sweep options. */
static int scenario_axes(const struct cli_opts *o, const struct scenario *s, struct axis *ax)
{
    int n = 0;
    int taken[CLI_MAX_SWEEPS] = {0};
    for (uint16_t i = 0; i < s->nsweeps; i++, n++) {
        const struct sweep_def *w = &s->sweeps[i];
        int over = -1;
        for (int k = 0; k < o->nsweeps; k++)
            if (!strcmp(o->sweeps[k].policy, w->policy) && !strcmp(o->sweeps[k].key, w->key))
                over = k;
        if (over >= 0) {
            taken[over] = 1;
            cli_axis(&ax[n], &o->sweeps[over]);
            continue;
        }
        ax[n].policy = w->policy;
        ax[n].key = w->key;
        ax[n].nvals = 0;
        for (uint16_t v = 0; v < w->nvalues && v < 256; v++)
            ax[n].vals[ax[n].nvals++] = w->values[v];
    }
    for (int k = 0; k < o->nsweeps; k++)
        if (!taken[k])
            cli_axis(&ax[n++], &o->sweeps[k]);
    return n;
}

/* --- columns ---------------------------------------------------------------------------------- */

/* The columns of label in scenario s: one, or one per point of the axes
 * that name it.  Appended to *cols (capacity *cap).  0, or 2 after printing
 * the error. */
static int label_cols(const struct cli_opts *o, const struct scenario *s, const char *label, struct axis *ax,
                      int nax, struct cli_col **cols, int *ncols, size_t *cap)
{
    struct cli_target t;
    char msg[1024];
    int rc = cli_resolve_target(s, label, o->sets, o->nsets, &t, msg, sizeof msg);
    if (rc == -2) { /* a whole diagnostic: a schedule its system's grammar rejects */
        fprintf(stderr, "%s\n", msg);
        return 2;
    }
    if (rc) {
        fprintf(stderr, "%s: error: %s: %s\n", cli_prog, s->path, msg);
        return 2;
    }
    int mine[MAX_AXES], nm = 0;
    uint64_t points = 1;
    for (int a = 0; a < nax && points <= CLI_MAX_COLS; a++)
        if (!strcmp(ax[a].policy, label)) {
            mine[nm++] = a;
            points *= (uint64_t)ax[a].nvals;
        }
    if (*ncols + points > CLI_MAX_COLS) {
        fprintf(stderr, "%s: error: %s: more than %d policies and parameter-study points\n", cli_prog, s->path,
                CLI_MAX_COLS);
        return 2;
    }
    int first = *ncols;
    for (uint64_t p = 0; p < points; p++) {
        *cols = xgrow(*cols, sizeof **cols, cap, (size_t)*ncols + 1);
        struct cli_col *c = &(*cols)[(*ncols)++];
        memset(c, 0, sizeof *c);
        c->t = t;
        uint64_t rest = p;
        size_t po = 0;
        for (int i = nm - 1; i >= 0; i--) { /* the first axis varies slowest */
            const struct axis *a = &ax[mine[i]];
            const char *v = a->vals[rest % (uint64_t)a->nvals];
            rest /= (uint64_t)a->nvals;
            if (params_set(&c->t.ps, a->key, v, msg, sizeof msg) != 0) {
                fprintf(stderr, "%s: error: %s: sweep %s.%s: %s\n", cli_prog, s->path, label, a->key, msg);
                return 2;
            }
        }
        for (int i = 0; i < nm; i++) {
            char val[128];
            params_value_text(&c->t.ps, ax[mine[i]].key, val, sizeof val);
            po += (size_t)snprintf(c->point + po, po < sizeof c->point ? sizeof c->point - po : 0, "%s%s=%s",
                                   i ? "," : "", ax[mine[i]].key, val);
        }
        if (params_check(c->t.ops, &c->t.ps, msg, sizeof msg) >= 0) {
            fprintf(stderr, "%s: error: %s: sweep point %s[%s]: %s\n", cli_prog, s->path, label, c->point, msg);
            return 2;
        }
        params_format(&c->t.ps, c->t.params_text, sizeof c->t.params_text);
        snprintf(c->title, sizeof c->title, nm ? "%s[%s]" : "%s", label, c->point);
        for (int k = first; k < *ncols - 1; k++)
            if (!strcmp((*cols)[k].t.params_text, c->t.params_text)) {
                fprintf(stderr, "%s: error: %s: the sweep points %s and %s of %s are the same setting\n", cli_prog,
                        s->path, (*cols)[k].point, c->point, label);
                return 2;
            }
    }
    return 0;
}

/* The columns of scenario k. */
static int scenario_cols(const struct cli_opts *o, const struct scenario *s, struct cli_plan *pl, int k,
                         int *axis_used)
{
    struct axis ax[MAX_AXES];
    int nax = scenario_axes(o, s, ax);
    const char *labels[CLI_MAX_LABELS];
    char *polbuf = NULL;
    int nl, rc = 0;
    if (o->policies)
        rc = cli_policy_names(o->policies, &polbuf, labels, CLI_MAX_LABELS, &nl);
    else
        nl = cli_all_labels(s, labels, CLI_MAX_LABELS);
    size_t cap = 0;
    for (int i = 0; i < nl && !rc; i++) {
        rc = label_cols(o, s, labels[i], ax, nax, &pl->cols[k], &pl->ncols[k], &cap);
        for (int a = 0; a < nax && !rc; a++)
            for (int w = 0; w < o->nsweeps; w++)
                if (!strcmp(ax[a].policy, labels[i]) && !strcmp(o->sweeps[w].policy, ax[a].policy) &&
                    !strcmp(o->sweeps[w].key, ax[a].key))
                    axis_used[w] = 1;
    }
    free(polbuf);
    return rc;
}

/* Checks every --sweep value against its policy (a variant's base). */
static int check_sweeps(const struct cli_opts *o, struct scenario **scn)
{
    for (int i = 0; i < o->nsweeps; i++) {
        const struct cli_sweep *w = &o->sweeps[i];
        const char *base = w->policy;
        for (int k = 0; k < o->npaths; k++)
            for (uint16_t v = 0; v < scn[k]->nvariants; v++)
                if (!strcmp(scn[k]->variants[v].name, w->policy))
                    base = scn[k]->variants[v].base;
        char buf[sizeof w->values], msg[1024];
        snprintf(buf, sizeof buf, "%s", w->values);
        for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save))
            if (policy_check_param(base, w->key, p, msg, sizeof msg) != 0) {
                fprintf(stderr, "%s: error: --sweep %s.%s=%s: %s\n", cli_prog, w->policy, w->key, w->values, msg);
                return 2;
            }
    }
    return 0;
}

/* The identity of the full list: what numbers its jobs. */
static void plan_hash(struct cli_plan *pl, struct scenario **scn)
{
    uint64_t h = SIM_FNV_INIT;
    for (int k = 0; k < pl->nscn; k++) {
        uint64_t head[3] = {scn[k]->hash, pl->lo[k], pl->nseeds[k]};
        h = sim_fnv(h, head, sizeof head);
        for (int c = 0; c < pl->ncols[k]; c++) {
            const struct cli_col *col = &pl->cols[k][c];
            h = sim_fnv(h, col->t.label, strlen(col->t.label) + 1);
            h = sim_fnv(h, col->t.params_text, strlen(col->t.params_text) + 1);
        }
    }
    snprintf(pl->hash, sizeof pl->hash, "%016" PRIx64, h);
}

int cli_plan_make(const struct cli_opts *o, struct scenario **scn, struct cli_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    int n = o->npaths, rc;
    pl->nscn = n;
    pl->cols = xcalloc((size_t)n, sizeof *pl->cols);
    pl->ncols = xcalloc((size_t)n, sizeof *pl->ncols);
    pl->lo = xcalloc((size_t)n, sizeof *pl->lo);
    pl->nseeds = xcalloc((size_t)n, sizeof *pl->nseeds);
    pl->first = xcalloc((size_t)n + 1, sizeof *pl->first);
    if ((rc = check_sweeps(o, scn)))
        return rc;
    int used[CLI_MAX_SWEEPS] = {0};
    for (int k = 0; k < n; k++) {
        if ((rc = scenario_cols(o, scn[k], pl, k, used)))
            return rc;
        pl->lo[k] = o->have_seed ? o->seed_lo : scn[k]->seed;
        pl->nseeds[k] = (o->have_seed ? o->seed_hi : scn[k]->seed) - pl->lo[k] + 1;
        pl->first[k] = pl->nfull;
        if ((double)pl->ncols[k] * (double)pl->nseeds[k] + (double)pl->nfull > CLI_MAX_JOBS) {
            fprintf(stderr, "%s: error: more than %d runs in one 'simrun run' (split it with --shard)\n", cli_prog,
                    CLI_MAX_JOBS);
            return 2;
        }
        pl->nfull += (size_t)pl->ncols[k] * (size_t)pl->nseeds[k];
    }
    pl->first[n] = pl->nfull;
    pl->nsel = pl->nfull;
    for (int w = 0; w < o->nsweeps; w++)
        if (!used[w])
            fprintf(stderr, "%s: warning: --sweep %s.%s: no policy '%s' is run\n", cli_prog, o->sweeps[w].policy,
                    o->sweeps[w].key, o->sweeps[w].policy);
    plan_hash(pl, scn);
    return 0;
}

void cli_plan_at(const struct cli_plan *pl, size_t full, int *k, int *c, uint64_t *seed)
{
    SIM_ASSERT(full < pl->nfull);
    int lo = 0, hi = pl->nscn - 1;
    while (lo < hi) { /* the last scenario whose first job is <= full */
        int mid = (lo + hi + 1) / 2;
        if (pl->first[mid] <= full)
            lo = mid;
        else
            hi = mid - 1;
    }
    size_t r = full - pl->first[lo];
    *k = lo;
    *c = (int)(r / pl->nseeds[lo]);
    *seed = pl->lo[lo] + r % pl->nseeds[lo];
}

/* --- selection ---------------------------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The stored runs, for --resume: sorted keys, after checking that they are
 * of this simrun version.  0, or 2 after printing the error. */
static int stored_keys(const struct cli_opts *o, struct store *st, char ***keys, size_t *nkeys)
{
    char versions[256], err[512];
    if (store_run_keys(st, keys, nkeys, versions, sizeof versions, err, sizeof err) != 0) {
        fprintf(stderr, "%s: error: %s\n", cli_prog, err);
        return 2;
    }
    if (versions[0] && strcmp(versions, SIMRUN_VERSION)) {
        for (size_t i = 0; i < *nkeys; i++)
            free((*keys)[i]);
        free(*keys);
        *keys = NULL;
        *nkeys = 0;
        fprintf(stderr,
                "%s: error: --resume: results database '%s' holds runs of simrun %s; this is simrun %s (resume with "
                "the simrun that wrote it, or use a new file)\n",
                cli_prog, o->db, versions, SIMRUN_VERSION);
        return 2;
    }
    return 0;
}

int cli_plan_select(struct cli_plan *pl, const struct cli_opts *o, struct scenario **scn, struct store *st)
{
    if (!o->shard_n && !o->resume)
        return 0;
    char **keys = NULL;
    size_t nkeys = 0;
    if (o->resume) {
        int rc = stored_keys(o, st, &keys, &nkeys);
        if (rc)
            return rc;
    }
    pl->sel = xcalloc(pl->nfull ? pl->nfull : 1, sizeof *pl->sel);
    pl->nsel = 0;
    for (size_t i = 0; i < pl->nfull; i++) {
        if (o->shard_n && i % o->shard_n != o->shard_k - 1)
            continue;
        if (nkeys) {
            int k, c;
            uint64_t seed;
            cli_plan_at(pl, i, &k, &c, &seed);
            char key[1024], *kp = key;
            store_run_key(scn[k]->hash, pl->cols[k][c].t.label, pl->cols[k][c].t.params_text, seed, key, sizeof key);
            if (bsearch(&kp, keys, nkeys, sizeof *keys, cmp_str)) {
                pl->stored++;
                continue;
            }
        }
        pl->sel[pl->nsel++] = i;
    }
    for (size_t i = 0; i < nkeys; i++)
        free(keys[i]);
    free(keys);
    return 0;
}

void cli_plan_free(struct cli_plan *pl)
{
    for (int k = 0; k < pl->nscn; k++)
        free(pl->cols[k]);
    free(pl->cols);
    free(pl->ncols);
    free(pl->lo);
    free(pl->nseeds);
    free(pl->first);
    free(pl->sel);
    memset(pl, 0, sizeof *pl);
}
