/* cli_swarm.c: `simrun swarm --seeds A..B [-p LIST] -o DIR` (see cli.h and
 * docs/swarm.md).
 *
 * Each seed gives a random valid scenario (sim/swarm.h) that is simulated
 * twice under each policy label, each run in a child process (cli_probe),
 * and the results are held to the properties below.  A seed that breaks
 * one is saved to DIR (the scenario, and a description of every broken
 * property), then shrunk (sim/shrink.h) with a test that re-checks the
 * first broken property on each candidate, and listed in the summary.
 *
 * The properties are the promises of docs/policies.md and the policy
 * pages, stated so that a machine can check them; docs/swarm.md lists
 * them with the conditions under which each applies.  A property names a
 * rule (prop_table), the labels it applies to and its condition
 * (prop_applies), and its check (prop_broken). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/cli.h"
#include "sim/metric.h"
#include "sim/refs.h"
#include "sim/shrink.h"
#include "sim/sim.h"
#include "sim/swarm.h"
#include "sim/util.h"

/* --- options ---------------------------------------------------------------------------------- */

struct swarm_cli {
    struct cli_opts c;             /* first: the shared --seeds and -p callbacks write here */
    const char *out;
    int no_shrink, quiet;
    uint64_t timeout;
};

static int opt_timeout(void *opts, const char *v)
{
    struct swarm_cli *o = opts;
    if (cli_parse_u64(v, &o->timeout) || o->timeout < 1 || o->timeout > 86400)
        return cli_usage_error("bad --timeout '%s' (expected 1..86400 seconds)", v);
    return 0;
}

static int opt_max_events(void *opts, const char *v)
{
    struct swarm_cli *o = opts;
    if (cli_parse_u64(v, &o->c.max_events) || o->c.max_events == 0)
        return cli_usage_error("bad --max-events '%s'", v);
    return 0;
}

static const struct cli_option swarm_options[] = {
    CLI_CALLBACK(0, "seeds", "A..B", cli_opt_seeds, "the seeds: one random scenario each"),
    CLI_STRING('p', "policies", "LIST", struct swarm_cli, c.policies,
               "the registered policies to run (default: all); oracle always\n"
               "runs, and each scenario's variants of the policies run too"),
    CLI_STRING('o', "out", "DIR", struct swarm_cli, out, "save failing scenarios, their descriptions and shrunk forms\nhere (created if missing)"),
    CLI_CALLBACK(0, "max-events", "N", opt_max_events, "stop a simulation after N events (default 4000000000)"),
    CLI_CALLBACK(0, "timeout", "S", opt_timeout,
                 "a simulation with no result after S seconds of wall time\nfails 'completes' (default 300)"),
    CLI_FLAG(0, "no-shrink", struct swarm_cli, no_shrink, "save failing scenarios without shrinking them"),
    CLI_FLAG('q', "quiet", struct swarm_cli, quiet, "print failures and the summary only"),
    CLI_END,
};

static int cmd_swarm(int argc, char **argv);

const struct cli_command cli_cmd_swarm = {
    .name = "swarm",
    .args = "--seeds A..B -o DIR",
    .usage = "--seeds A..B [-p LIST] -o DIR [options]",
    .summary = "random scenarios checked against every policy's promises",
    .description = "Swarm testing: each seed draws a random valid scenario from a random subset\n"
                   "of features (crashes, stops, failures, bursts, sources, cron near a DST\n"
                   "change, digests, windows, correlations, variants, schedule changes),\n"
                   "runs it twice under each policy and checks the properties of\n"
                   "docs/swarm.md: no internal error, identical runs, each policy's\n"
                   "documented promises, no policy faster than oracle.  A failing seed\n"
                   "is saved to DIR with a description and shrunk (simrun shrink's delta\n"
                   "debugging).  Exits 1 if a property fails.\n",
    .options = swarm_options,
    .arg = NULL,
    .run = cmd_swarm,
};

/* --- properties --------------------------------------------------------------------------------- */

enum prop_id {
    P_PARSES, P_COMPLETES, P_DETERMINISTIC, P_NO_LIVELOCK, P_ORACLE_NO_DUP, P_ORACLE_NEVER_IDLE, P_ORACLE_ON_TIME,
    P_ORACLE_NO_LOSS, P_ORACLE_NO_DOUBLE, P_SINGLE_FLIGHT, P_CRASH_NO_LOSS, P_ORACLE_FASTEST, P_COUNT
};

static const struct {
    const char *name;
    const char *expect;            /* an expect line that shows it ("%s": the label), or NULL */
} prop_table[P_COUNT] = {
    [P_PARSES] = {"parses", NULL},
    [P_COMPLETES] = {"completes", NULL},
    [P_DETERMINISTIC] = {"deterministic", NULL},
    [P_NO_LIVELOCK] = {"no-livelock", "expect %s livelock == false"},
    [P_ORACLE_NO_DUP] = {"oracle-no-duplicates", "expect %s duplicates == 0"},
    [P_ORACLE_NEVER_IDLE] = {"oracle-never-idle", "expect %s runs_empty == 0"},
    [P_ORACLE_ON_TIME] = {"oracle-on-time", "expect %s lateness.max == 0"},
    [P_ORACLE_NO_LOSS] = {"oracle-no-loss", "expect %s lost == 0"},
    [P_ORACLE_NO_DOUBLE] = {"oracle-no-double-effects", "expect %s double_effects == 0"},
    [P_SINGLE_FLIGHT] = {"single-flight", "expect %s overlaps == 0"},
    [P_CRASH_NO_LOSS] = {"crash-no-loss", NULL},
    [P_ORACLE_FASTEST] = {"oracle-fastest", NULL},
};

/* What the scenario holds that decides whether a property applies. */
struct scn_facts {
    int correlate;                 /* a correlate consumer: unpaired events stay */
    int host_down;                 /* a host crash or a stop */
    int mutate_then_fail;          /* a failure after (or maybe after) the mutation */
    int internal;                  /* an internal failure */
    int failures;                  /* any run failure (not delivery) */
    int latency_bound;             /* items come from publish lines alone, consumers run in no time */
};

static void scn_facts_of(const struct scenario *s, struct scn_facts *f)
{
    memset(f, 0, sizeof *f);
    f->latency_bound = s->nsources == 0;
    for (uint16_t w = 0; w < s->nwfs; w++)
        for (uint16_t h = 0; h < s->wfs[w].nhandlers; h++) {
            const struct handler_def *hd = &s->wfs[w].handlers[h];
            f->correlate |= hd->kind == H_CONSUMER && hd->script.kind == SCRIPT_CORRELATE;
            if (hd->kind == H_PRODUCER || hd->runs.kind != DIST_FIXED || hd->runs.a_us != 0 ||
                hd->script.kind == SCRIPT_BATCH)
                f->latency_bound = 0;
            for (uint8_t k = 0; k < hd->nfails; k++) {
                const struct fail_rule *fr = &hd->fails[k];
                if (fr->cls == FAIL_DELIVERY)
                    continue;
                f->failures = 1;
                f->internal |= fr->cls == FAIL_INTERNAL;
                f->mutate_then_fail |= fr->cls == FAIL_INDETERMINATE || fr->phase >= PHASE_MUTATED;
            }
        }
    for (uint32_t c = 0; c < s->ncrashes; c++)
        f->host_down |= s->crashes[c].target == CRASH_HOST || s->crashes[c].target == CRASH_STOP;
}

static double metric(const struct cli_probe *p, const char *name)
{
    const struct metric_info *mi = metric_find(name);
    SIM_ASSERT(mi != NULL);
    return p->metric[mi - metric_table];
}

/* One seed's simulations: label i ran twice (a[i], b[i]). */
struct seed_runs {
    const struct scenario *s;
    const char *text;              /* s's text, for the scenario without its crashes */
    size_t len;
    uint64_t seed, max_events;
    int timeout_s;
    struct scn_facts f;
    int nl, oracle;                /* oracle: its index, -1 if it did not run */
    const char *labels[CLI_MAX_LABELS];
    struct cli_target t[CLI_MAX_LABELS];
    struct cli_probe *a, *b;
};

static int registered(const struct seed_runs *r, int i) { return !strcmp(r->labels[i], r->t[i].ops->name); }

/* Whether prop applies to label i of r. */
static int prop_applies(enum prop_id p, const struct seed_runs *r, int i)
{
    const char *base = r->t[i].ops->name;
    const struct cli_probe *a = &r->a[i];
    int clean = !a->crashed && a->status == SIM_OK;
    int is_oracle = registered(r, i) && !strcmp(base, "oracle");
    switch (p) {
    case P_PARSES: return 0;
    case P_COMPLETES: case P_DETERMINISTIC: case P_NO_LIVELOCK: return 1;
    case P_ORACLE_NO_DUP: case P_ORACLE_NEVER_IDLE: return is_oracle && clean;
    case P_ORACLE_ON_TIME: return is_oracle && clean && !r->f.host_down;
    case P_ORACLE_NO_LOSS: return is_oracle && clean && !r->f.correlate && a->crash_unrestarted == 0;
    case P_ORACLE_NO_DOUBLE: return is_oracle && clean && !r->f.mutate_then_fail;
    case P_SINGLE_FLIGHT:
        return registered(r, i) && clean &&
               (r->t[i].ops->promise == PROMISE_HANDLER || r->t[i].ops->promise == PROMISE_WORKFLOW);
    case P_CRASH_NO_LOSS:
        if (!registered(r, i) || !clean || r->f.correlate || a->crash_unrestarted || a->ncrashes == 0)
            return 0;
        if (!strcmp(base, "oracle") || !strcmp(base, "poll"))
            return 1;
        if (!strcmp(base, "wakeat"))
            return !r->f.internal;
        if (!strcmp(base, "vistimeout"))
            return !r->f.failures;
        return 0;
    case P_ORACLE_FASTEST:
        return r->oracle >= 0 && i != r->oracle && clean && r->f.latency_bound && !r->a[r->oracle].crashed &&
               r->a[r->oracle].status == SIM_OK;
    case P_COUNT: break;
    }
    return 0;
}

/* Simulates r's scenario without its `crash` and `stop` lines under label
 * i: the work a policy leaves undone at the end anyway.  0 with *out, or -1
 * when it cannot. */
static int probe_without_crashes(const struct seed_runs *r, int i, struct cli_probe *out)
{
    char *t = xmalloc(r->len + 1);
    size_t n = 0;
    for (size_t pos = 0; pos < r->len;) {
        const char *nl = memchr(r->text + pos, '\n', r->len - pos);
        size_t l = nl ? (size_t)(nl - r->text - pos) + 1 : r->len - pos;
        if (strncmp(r->text + pos, "crash ", 6) && strncmp(r->text + pos, "stop ", 5)) {
            memcpy(t + n, r->text + pos, l);
            n += l;
        }
        pos += l;
    }
    struct scenario *s;
    struct diag d;
    struct cli_target tg;
    char msg[512];
    int rc = -1;
    if (scenario_parse_buf_ex("swarm.scn", t, n, &refs_builtin, &s, &d) == 0) {
        if (cli_resolve_target(s, r->labels[i], NULL, 0, &tg, msg, sizeof msg) == 0)
            rc = cli_probe(s, &tg, r->seed, r->max_events, r->timeout_s, out, msg, sizeof msg);
        scenario_free(s);
    }
    free(t);
    return rc;
}

/* crash-no-loss: items pending at a crash never processed, beyond what the
 * policy leaves undone without the crashes (an overloaded system strands a
 * backlog at the end, crash or none). */
static int crash_loss(const struct seed_runs *r, int i, char *d, size_t n)
{
    const struct cli_probe *a = &r->a[i];
    if (a->crash_lost == 0)
        return 0;
    struct cli_probe *c = xmalloc(sizeof *c);
    int broken = probe_without_crashes(r, i, c) == 0 && !c->crashed && c->status == SIM_OK && metric(c, "lost") == 0;
    snprintf(d, n, "%" PRIu64 " items pending at a crash never processed (%u crashes; lost %g, and %g without them)",
             a->crash_lost, a->ncrashes, metric(a, "lost"), c->crashed ? -1.0 : metric(c, "lost"));
    free(c);
    return broken;
}

/* Whether label i of r breaks prop (which applies); detail says how. */
static int prop_broken(enum prop_id p, const struct seed_runs *r, int i, char *d, size_t n)
{
    const struct cli_probe *a = &r->a[i], *b = &r->b[i];
    switch (p) {
    case P_PARSES: return 0;
    case P_COMPLETES:
        if (a->crashed || b->crashed)
            snprintf(d, n, "%s", a->crashed ? a->crash_msg : b->crash_msg);
        else if (a->status == SIM_EVENT_LIMIT)
            snprintf(d, n, "%s", a->status_msg);
        return a->crashed || b->crashed || a->status == SIM_EVENT_LIMIT;
    case P_DETERMINISTIC:
        if (a->crashed || b->crashed)
            return 0;
        snprintf(d, n, "fingerprints %016" PRIx64 " and %016" PRIx64, a->fingerprint, b->fingerprint);
        return a->fingerprint != b->fingerprint || a->events != b->events ||
               memcmp(a->metric, b->metric, sizeof a->metric) != 0;
    case P_NO_LIVELOCK:
        snprintf(d, n, "%s", a->status_msg);
        return !a->crashed && a->status == SIM_LIVELOCK;
    case P_ORACLE_NO_DUP:
        snprintf(d, n, "duplicates %g", metric(a, "duplicates"));
        return metric(a, "duplicates") != 0;
    case P_ORACLE_NEVER_IDLE:
        snprintf(d, n, "runs_empty %g", metric(a, "runs_empty"));
        return metric(a, "runs_empty") != 0;
    case P_ORACLE_ON_TIME:
        snprintf(d, n, "lateness.max %g us, missed %g", metric(a, "lateness.max"), metric(a, "missed"));
        return metric(a, "lateness.max") > 0 || metric(a, "missed") != 0;
    case P_ORACLE_NO_LOSS:
        snprintf(d, n, "lost %g (dropped %g, stranded %g)", metric(a, "lost"), metric(a, "dropped"),
                 metric(a, "stranded"));
        return metric(a, "lost") != 0;
    case P_ORACLE_NO_DOUBLE:
        snprintf(d, n, "double_effects %g", metric(a, "double_effects"));
        return metric(a, "double_effects") != 0;
    case P_SINGLE_FLIGHT:
        snprintf(d, n, "overlaps %g us, overlap_runs %g", metric(a, "overlaps"), metric(a, "overlap_runs"));
        return metric(a, "overlaps") != 0 || metric(a, "overlap_runs") != 0;
    case P_CRASH_NO_LOSS:
        return crash_loss(r, i, d, n);
    case P_ORACLE_FASTEST: {
        const struct cli_probe *o = &r->a[r->oracle];
        double lm = metric(a, "latency.mean"), om = metric(o, "latency.mean");
        if (metric(a, "processed") != metric(o, "processed") || metric(a, "published") != metric(o, "published"))
            return 0;
        snprintf(d, n, "latency.mean %.1f us, oracle's %.1f us (%g items each)", lm, om, metric(a, "processed"));
        return lm < om - 1.0 - om * 1e-9;
    }
    case P_COUNT: break;
    }
    return 0;
}

/* --- one seed ------------------------------------------------------------------------------------ */

struct swarm_ctx {
    const struct swarm_cli *o;
    const char *only[CLI_MAX_LABELS]; /* -p: registered policies to run (oracle added) */
    int nonly;
    uint64_t sims, seeds_failed, nfail[P_COUNT], feature_seeds[SWARM_NFEATURES];
    char (*failed)[160];           /* one line per failing seed, for the summary */
    size_t nfailed, failed_cap;
};

static int wanted(const struct swarm_ctx *cx, const char *base)
{
    if (!cx->nonly || !strcmp(base, "oracle"))
        return 1;
    for (int i = 0; i < cx->nonly; i++)
        if (!strcmp(cx->only[i], base))
            return 1;
    return 0;
}

/* Appends the built-in variants (the real systems as built) of the wanted
 * policies to r; one whose system's grammar refuses the scenario's
 * schedules is left out. */
static void builtin_labels(const struct swarm_ctx *cx, const struct scenario *s, struct seed_runs *r)
{
    for (int p = 0; p < policy_registry_count; p++) {
        const struct policy_ops *ops = policy_registry[p];
        for (int v = 0; v < ops->nvariants && r->nl < CLI_MAX_LABELS && wanted(cx, ops->name); v++) {
            char m[512];
            if (cli_resolve_target(s, ops->variants[v].name, NULL, 0, &r->t[r->nl], m, sizeof m) == 0)
                r->labels[r->nl++] = ops->variants[v].name;
        }
    }
}

/* Resolves the labels of s to run: -p's policies (every one without -p)
 * with oracle first, then the variants of those, then (builtins) their
 * built-in variants.  0, or -1 with msg. */
static int seed_labels(const struct swarm_ctx *cx, const struct scenario *s, int builtins, struct seed_runs *r,
                       char *msg, size_t mn)
{
    const char *all[CLI_MAX_LABELS];
    int na = cli_all_labels(s, all, CLI_MAX_LABELS);
    r->nl = 0;
    r->oracle = -1;
    for (int i = 0; i < na && r->nl < CLI_MAX_LABELS; i++) {
        struct cli_target *t = &r->t[r->nl];
        if (cli_resolve_target(s, all[i], NULL, 0, t, msg, mn))
            return -1;
        if (!wanted(cx, t->ops->name))
            continue;
        if (!strcmp(all[i], "oracle"))
            r->oracle = r->nl;
        r->labels[r->nl++] = all[i];
    }
    if (builtins)
        builtin_labels(cx, s, r);
    return 0;
}

/* Runs every label of r twice.  0, or -1 with msg. */
static int seed_simulate(struct swarm_ctx *cx, struct seed_runs *r, uint64_t seed, char *msg, size_t mn)
{
    int tmo = (int)cx->o->timeout;
    for (int i = 0; i < r->nl; i++) {
        if (cli_probe(r->s, &r->t[i], seed, cx->o->c.max_events, tmo, &r->a[i], msg, mn) ||
            cli_probe(r->s, &r->t[i], seed, cx->o->c.max_events, tmo, &r->b[i], msg, mn))
            return -1;
        cx->sims += 2;
    }
    return 0;
}

/* The first property broken by any label, in (property, label) order:
 * *prop and *label; every one is described in desc (with its detail). */
static int seed_check(const struct seed_runs *r, char *desc, size_t dn, enum prop_id *prop, int *label,
                      uint64_t *nfail)
{
    int found = 0;
    size_t o = 0;
    desc[0] = 0;
    for (int p = P_COMPLETES; p < P_COUNT; p++)
        for (int i = 0; i < r->nl; i++) {
            char d[400] = "";
            if (!prop_applies((enum prop_id)p, r, i) || !prop_broken((enum prop_id)p, r, i, d, sizeof d))
                continue;
            nfail[p]++;
            if (!found++) {
                *prop = (enum prop_id)p;
                *label = i;
            }
            if (o + 1 < dn)
                o += (size_t)snprintf(desc + o, dn - o, "%s under %s: %s\n", prop_table[p].name, r->labels[i], d);
        }
    return found;
}

/* --- shrinking a failure ----------------------------------------------------------------------------- */

struct prop_shrink {
    struct swarm_ctx *cx;
    enum prop_id prop;
    char label[SCN_MAX_NAME + 8];
    uint64_t seed;
    char crash_msg[400];           /* the detail of the broken property (completes: why it ended) */
};

/* A shrink_test_fn: the candidate breaks the same property under the same
 * label (for 'completes': with the same reason). */
static int prop_test(void *ctx, const char *text, size_t len)
{
    struct prop_shrink *ps = ctx;
    struct scenario *s;
    struct diag d;
    if (scenario_parse_buf_ex("swarm.scn", text, len, &refs_builtin, &s, &d) != 0)
        return 0;
    struct seed_runs *r = xcalloc(1, sizeof *r);
    *r = (struct seed_runs){.s = s, .text = text, .len = len, .seed = ps->seed, .max_events = ps->cx->o->c.max_events,
                            .timeout_s = (int)ps->cx->o->timeout};
    r->a = xcalloc(2, sizeof *r->a);
    r->b = xcalloc(2, sizeof *r->b);
    scn_facts_of(s, &r->f);
    char msg[512];
    int broken = 0, ok = 1;
    r->oracle = -1;
    const char *want[2] = {ps->label, "oracle"};
    for (int k = 0; k < (ps->prop == P_ORACLE_FASTEST ? 2 : 1) && ok; k++) {
        r->labels[k] = want[k];
        ok = cli_resolve_target(s, want[k], NULL, 0, &r->t[k], msg, sizeof msg) == 0 &&
             cli_probe(s, &r->t[k], ps->seed, ps->cx->o->c.max_events, (int)ps->cx->o->timeout, &r->a[k], msg,
                       sizeof msg) == 0;
        r->b[k] = r->a[k];
        if (ok && ps->prop == P_DETERMINISTIC)
            ok = cli_probe(s, &r->t[k], ps->seed, ps->cx->o->c.max_events, (int)ps->cx->o->timeout, &r->b[k], msg,
                           sizeof msg) == 0;
        r->nl = k + 1;
        if (k == 1)
            r->oracle = 1;
    }
    if (ok && !strcmp(ps->label, "oracle"))
        r->oracle = 0;
    char dd[400];
    if (ok && prop_applies(ps->prop, r, 0) && prop_broken(ps->prop, r, 0, dd, sizeof dd))
        broken = ps->prop != P_COMPLETES || !strcmp(ps->crash_msg, r->a[0].crashed ? r->a[0].crash_msg : dd);
    free(r->a);
    free(r->b);
    free(r);
    scenario_free(s);
    return broken;
}

/* Shrinks seed's text for its first failure and writes DIR/seed-N.min.scn
 * (with an expect line that shows the failure, when there is one). */
static void shrink_failure(struct swarm_ctx *cx, uint64_t seed, const char *text, size_t len, enum prop_id prop,
                           const char *label, const char *detail, char *note, size_t nn)
{
    struct prop_shrink ps = {.cx = cx, .prop = prop, .seed = seed};
    snprintf(ps.label, sizeof ps.label, "%s", label);
    snprintf(ps.crash_msg, sizeof ps.crash_msg, "%s", detail);
    struct shrink_opts so = {.test = prop_test, .ctx = &ps};
    struct shrink_stats st;
    size_t mlen;
    char *min = shrink_text(text, len, &so, &st, &mlen);
    if (!min) {
        snprintf(note, nn, "not shrunk (the failure did not reproduce)");
        return;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/seed-%" PRIu64 ".min.scn", cx->o->out, seed);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(note, nn, "cannot write %s: %s", path, strerror(errno));
        free(min);
        return;
    }
    fprintf(f, "# swarm seed %" PRIu64 ", shrunk: %s under %s: %s\n", seed, prop_table[prop].name, label, detail);
    fwrite(min, 1, mlen, f);
    if (prop_table[prop].expect) {
        fprintf(f, prop_table[prop].expect, label);
        fprintf(f, "\n");
    }
    fclose(f);
    snprintf(note, nn, "shrunk to %d lines in %s", st.lines_after, path);
    free(min);
}

/* --- the command -------------------------------------------------------------------------------------- */

/* Saves a failing seed: DIR/seed-N.scn and DIR/seed-N.txt. */
static void save_failure(struct swarm_ctx *cx, uint64_t seed, const char *text, size_t len, const char *desc,
                         unsigned features)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/seed-%" PRIu64 ".scn", cx->o->out, seed);
    FILE *f = fopen(path, "w");
    if (f) {
        fwrite(text, 1, len, f);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/seed-%" PRIu64 ".txt", cx->o->out, seed);
    if ((f = fopen(path, "w"))) {
        fprintf(f, "swarm seed %" PRIu64 "; features:", seed);
        for (int i = 0; i < SWARM_NFEATURES; i++)
            if (features & (1u << i))
                fprintf(f, " %s", swarm_feature_name(i));
        fprintf(f, "\n%s", desc);
        fclose(f);
    }
}

static void note_failed(struct swarm_ctx *cx, const char *line)
{
    cx->failed = xgrow(cx->failed, sizeof *cx->failed, &cx->failed_cap, cx->nfailed + 1);
    snprintf(cx->failed[cx->nfailed++], sizeof cx->failed[0], "%s", line);
}

/* One seed: generate, simulate, check, save and shrink.  0, or an exit status. */
static int swarm_seed(struct swarm_ctx *cx, uint64_t seed, struct seed_runs *r)
{
    size_t len;
    unsigned features;
    char *text = swarm_generate(seed, &len, &features);
    for (int i = 0; i < SWARM_NFEATURES; i++)
        cx->feature_seeds[i] += (features >> i) & 1;
    struct scenario *s;
    struct diag d;
    char desc[8192], msg[512], line[160];
    int rc = 0;
    if (scenario_parse_buf_ex("swarm.scn", text, len, &refs_builtin, &s, &d) != 0) {
        snprintf(desc, sizeof desc, "parses: %d:%d: %s\n", d.line, d.col, d.msg);
        cx->nfail[P_PARSES]++;
        cx->seeds_failed++;
        save_failure(cx, seed, text, len, desc, features);
        snprintf(line, sizeof line, "seed %" PRIu64 ": parses: %.100s", seed, d.msg);
        note_failed(cx, line);
        free(text);
        return 0;
    }
    *r = (struct seed_runs){.s = s, .text = text, .len = len, .seed = seed, .max_events = cx->o->c.max_events,
                            .timeout_s = (int)cx->o->timeout, .a = r->a, .b = r->b};
    scn_facts_of(s, &r->f);
    enum prop_id prop = P_COMPLETES;
    int li = 0;
    if (seed_labels(cx, s, (features & SWARM_VARIANTS) != 0, r, msg, sizeof msg) || seed_simulate(cx, r, seed, msg, sizeof msg)) {
        fprintf(stderr, "%s: error: swarm seed %" PRIu64 ": %s\n", cli_prog, seed, msg);
        rc = 3;
    } else if (seed_check(r, desc, sizeof desc, &prop, &li, cx->nfail)) {
        cx->seeds_failed++;
        save_failure(cx, seed, text, len, desc, features);
        char note[4300] = "not shrunk (--no-shrink)", detail[400] = "";
        prop_broken(prop, r, li, detail, sizeof detail);
        printf("swarm: seed %" PRIu64 ": %s", seed, desc);
        fflush(stdout);
        if (!cx->o->no_shrink)
            shrink_failure(cx, seed, text, len, prop, r->labels[li], detail, note, sizeof note);
        printf("swarm: seed %" PRIu64 ": saved to %s/seed-%" PRIu64 ".scn; %s\n", seed, cx->o->out, seed, note);
        snprintf(line, sizeof line, "seed %" PRIu64 ": %s under %s", seed, prop_table[prop].name, r->labels[li]);
        note_failed(cx, line);
    } else if (!cx->o->quiet) {
        printf("swarm: seed %" PRIu64 ": ok (%d policies)\n", seed, r->nl);
    }
    scenario_free(s);
    free(text);
    return rc;
}

static void print_summary(const struct swarm_ctx *cx, uint64_t lo, uint64_t hi)
{
    printf("swarm: seeds %" PRIu64 "..%" PRIu64 ": %" PRIu64 " scenarios, %" PRIu64 " simulations, %" PRIu64
           " failing seeds\n", lo, hi, hi - lo + 1, cx->sims, cx->seeds_failed);
    printf("swarm: features (seeds using each):");
    for (int i = 0; i < SWARM_NFEATURES; i++)
        printf(" %s %" PRIu64, swarm_feature_name(i), cx->feature_seeds[i]);
    printf("\n");
    for (int p = 0; p < P_COUNT; p++)
        if (cx->nfail[p])
            printf("swarm: property %s broken %" PRIu64 " times\n", prop_table[p].name, cx->nfail[p]);
    for (size_t i = 0; i < cx->nfailed; i++)
        printf("swarm:   %s\n", cx->failed[i]);
}

static int cmd_swarm(int argc, char **argv)
{
    struct swarm_cli o = {.timeout = 300};
    int rc = cli_parse(&cli_cmd_swarm, argc, argv, &o);
    if (rc)
        return rc;
    if (!o.c.have_seed)
        return cli_usage_error("%s", "no seeds given (--seeds A..B)");
    if (!o.out)
        return cli_usage_error("%s", "no output folder given (-o DIR)");
    struct swarm_ctx cx = {.o = &o};
    cli_quiet_fallbacks = 1; /* built-in variants read generated schedules: fallbacks are expected */
    char *polbuf = NULL;
    if (o.c.policies) {
        rc = cli_policy_names(o.c.policies, &polbuf, cx.only, CLI_MAX_LABELS, &cx.nonly);
        for (int i = 0; i < cx.nonly && !rc; i++) {
            char msg[512];
            if (policy_check_name(cx.only[i], msg, sizeof msg))
                rc = cli_usage_error("%s", msg);
        }
    }
    if (!rc && mkdir(o.out, 0777) != 0 && errno != EEXIST) {
        char why[600];
        snprintf(why, sizeof why, "'%s': %s", o.out, strerror(errno));
        rc = cli_write_error(why);
    }
    if (rc) {
        free(polbuf);
        return rc;
    }
    struct seed_runs *r = xcalloc(1, sizeof *r);
    r->a = xcalloc(CLI_MAX_LABELS, sizeof *r->a);
    r->b = xcalloc(CLI_MAX_LABELS, sizeof *r->b);
    for (uint64_t seed = o.c.seed_lo; seed <= o.c.seed_hi && rc == 0; seed++)
        rc = swarm_seed(&cx, seed, r);
    print_summary(&cx, o.c.seed_lo, o.c.seed_hi);
    free(r->a);
    free(r->b);
    free(r);
    free(cx.failed);
    free(polbuf);
    return rc ? rc : cx.seeds_failed ? 1 : 0;
}
