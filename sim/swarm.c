/* swarm.c: random valid scenarios for swarm testing (see swarm.h).
 *
 * One rng stream, keyed by the seed, draws everything in a fixed order:
 * the features, the header, the workflows, the outside world, the faults,
 * the variants.  Validity is by construction: every topic a consumer
 * subscribes to is a topic of its workflow, every publish line names one,
 * every source is polled, fixed crashes of one target never overlap,
 * failure probabilities of a handler stay under 100 %, every instant is
 * before the horizon (a crash may fall in the drain), and a digest comes
 * with a drain of two days so that its item published last is taken. */
#include "sim/swarm.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/rng.h"
#include "sim/syntax.h"
#include "sim/util.h"

#define GEN_MAX_WF 3
#define GEN_MAX_H 5

struct gen {
    struct rng r;
    unsigned f;
    char *b;
    size_t n, cap;
    int64_t horizon_us, drain_us;
    int nwf;
    int ntopics[GEN_MAX_WF], nprod[GEN_MAX_WF], ncons[GEN_MAX_WF];
    int nsources;
    int instant;                   /* no producers, runs of no time: oracle is a latency bound */
    int ncorr;                     /* correlate consumers: topics xK and yK, fed by publish lines */
    unsigned tused[GEN_MAX_WF];    /* topics tK a handler names (only those exist) */
    unsigned recur[GEN_MAX_WF];    /* producers pK on an every or cron schedule */
};

static const char *const feature_names[SWARM_NFEATURES] = {
    "crashes", "stops", "failures", "bursts", "sources", "cron-dst", "digests", "windows", "correlations",
    "variants", "changes",
};

const char *swarm_feature_name(int i)
{
    return i >= 0 && i < SWARM_NFEATURES ? feature_names[i] : "?";
}

static void out(struct gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(struct gen *g, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(g->b + g->n, g->cap - g->n, fmt, ap);
        va_end(ap);
        SIM_ASSERT(w >= 0);
        if ((size_t)w < g->cap - g->n) {
            g->n += (size_t)w;
            return;
        }
        g->b = xgrow(g->b, 1, &g->cap, g->n + (size_t)w + 1);
    }
}

static uint64_t pick(struct gen *g, uint64_t n) { return rng_below(&g->r, n); }
static int chance(struct gen *g, int pct) { return (int)pick(g, 100) < pct; }
static int has(const struct gen *g, unsigned feature) { return (g->f & feature) != 0; }

/* A duration in the scenario syntax, in a static-free buffer of the caller. */
static const char *dur(int64_t us, char *buf, size_t n)
{
    if (us <= 0)
        snprintf(buf, n, "0");
    else
        scn_fmt_duration(us, buf, n);
    return buf;
}

/* An instant in [lo, hi) after the start, whole seconds. */
static int64_t instant(struct gen *g, int64_t lo, int64_t hi)
{
    if (hi <= lo + US_PER_S)
        return lo;
    return lo + (int64_t)pick(g, (uint64_t)((hi - lo) / US_PER_S)) * US_PER_S;
}

static const char *run_dist(struct gen *g)
{
    static const char *const d[] = {"0", "2s", "30s", "uniform(1s,20s)", "exp(5s)", "exp(90s)", "uniform(0,3m)"};
    return d[pick(g, sizeof d / sizeof d[0])];
}

/* --- the header --------------------------------------------------------------------------------- */

static const struct {
    const char *zone;
    const char *start[2];          /* a day or two before each change of 2025 */
} dst_zones[] = {
    {"Europe/Berlin", {"2025-03-29T12:00:00Z", "2025-10-25T12:00:00Z"}},
    {"America/New_York", {"2025-03-08T12:00:00Z", "2025-11-01T12:00:00Z"}},
    {"Australia/Lord_Howe", {"2025-04-05T00:00:00Z", "2025-10-04T00:00:00Z"}},
    {"Europe/London", {"2025-03-29T12:00:00Z", "2025-10-25T12:00:00Z"}},
    {"America/Santiago", {"2025-04-05T12:00:00Z", "2025-09-06T12:00:00Z"}},
    {"Pacific/Chatham", {"2025-04-05T00:00:00Z", "2025-09-27T00:00:00Z"}},
};
#define NDST (sizeof dst_zones / sizeof dst_zones[0])

static void gen_header(struct gen *g, uint64_t seed)
{
    static const int64_t horizons[] = {2 * US_PER_H, 6 * US_PER_H, US_PER_DAY, 2 * US_PER_DAY};
    char b[64];
    out(g, "# swarm scenario %llu\nname swarm%llu\n", (unsigned long long)seed, (unsigned long long)seed);
    if (has(g, SWARM_CRON_DST)) {
        size_t z = (size_t)pick(g, NDST);
        out(g, "start %s\ntimezone %s\n", dst_zones[z].start[pick(g, 2)], dst_zones[z].zone);
    } else {
        out(g, "start 2025-%02d-%02dT%02d:00:00Z\n", 1 + (int)pick(g, 12), 1 + (int)pick(g, 28), (int)pick(g, 24));
        if (chance(g, 30))
            out(g, "timezone %s\n", dst_zones[pick(g, NDST)].zone);
    }
    g->horizon_us = horizons[pick(g, sizeof horizons / sizeof horizons[0])];
    g->drain_us = US_PER_DAY;
    out(g, "horizon %s\n", dur(g->horizon_us, b, sizeof b));
    if (has(g, SWARM_DIGESTS)) {
        g->drain_us = 2 * US_PER_DAY;
        out(g, "drain 2d\n");
    }
    out(g, "seed %llu\n\n", (unsigned long long)seed);
}

/* --- workflows ---------------------------------------------------------------------------------- */

/* A producer's schedule; 1 if it recurs (every, cron), 0 for `at`. */
static int gen_schedule(struct gen *g)
{
    static const char *const every[] = {"2m", "5m", "10m", "30m", "1h"};
    static const char *const dst_cron[] = {"30 2 * * *", "0 * * * *", "*/20 * * * *", "0 1-3 * * *", "15 2 * * 0",
                                           "0 3 * * *", "45 1 * * *"};
    char b[64];
    int r = (int)pick(g, 10);
    if (r < 6) {
        out(g, " every %s", every[pick(g, 5)]);
        if (chance(g, 20))
            out(g, " offset %s", dur(instant(g, 0, g->horizon_us < US_PER_H ? g->horizon_us : US_PER_H), b, sizeof b));
    } else if (r < 9) {
        if (has(g, SWARM_CRON_DST))
            out(g, " cron \"%s\"", dst_cron[pick(g, sizeof dst_cron / sizeof dst_cron[0])]);
        else
            out(g, " cron %s", chance(g, 50) ? "@hourly" : "\"*/30 * * * *\"");
        if (has(g, SWARM_CRON_DST) && chance(g, 30))
            out(g, " tz %s", dst_zones[pick(g, NDST)].zone);
    } else {
        out(g, " at %s", dur(instant(g, 0, g->horizon_us), b, sizeof b));
        return 0;
    }
    return 1;
}

static void gen_producer(struct gen *g, int w, int p)
{
    out(g, "  producer p%d", p);
    if (gen_schedule(g))
        g->recur[w] |= 1u << p;
    out(g, " runs %s", run_dist(g));
    int t = (int)pick(g, (uint64_t)g->ntopics[w]);
    g->tused[w] |= 1u << t;
    if (has(g, SWARM_SOURCES) && chance(g, 60)) {
        out(g, " source s%d publish t%d", g->nsources++, t);
    } else {
        out(g, " publish t%d", t);
        if (chance(g, 30))
            out(g, " %d", 2 + (int)pick(g, 3));
    }
    if (chance(g, 15))
        out(g, " phases %s", chance(g, 50) ? "10/30/60" : "40/20/40");
    out(g, "\n");
}

static void gen_script(struct gen *g, int w, int c)
{
    static const char *const waits[] = {"1m", "10m", "1h"};
    static const char *const times[] = {"00:30", "02:30", "09:00", "23:45"};
    const char *kinds[5];
    int nk = 0;
    kinds[nk++] = "fifo";
    kinds[nk++] = "batch";
    if (has(g, SWARM_WINDOWS))
        kinds[nk++] = "window";
    if (has(g, SWARM_DIGESTS))
        kinds[nk++] = "digest";
    if (has(g, SWARM_CORRELATIONS))
        kinds[nk++] = "correlate";
    const char *k = kinds[pick(g, (uint64_t)nk)];
    int t = c % g->ntopics[w];
    if (!strcmp(k, "correlate")) {
        /* Topics of its own, fed by publish lines whose events pair up in
         * order: a producer's events have keys of their own and would
         * never pair (and would pile up). */
        int q = g->ncorr++;
        out(g, " subscribe x%d,y%d correlate x%d y%d", q, q, q, q);
        return;
    }
    out(g, " subscribe t%d", t);
    g->tused[w] |= 1u << t;
    if (!strcmp(k, "fifo"))
        out(g, " fifo");
    else if (!strcmp(k, "batch"))
        out(g, " batch %d or %s", 2 + (int)pick(g, 9), waits[pick(g, 3)]);
    else if (!strcmp(k, "window"))
        out(g, " window %s", waits[pick(g, 3)]);
    else
        out(g, " digest %s", times[pick(g, 4)]);
}

static void gen_workflow(struct gen *g, int w)
{
    int x = 1 + (int)pick(g, 3);
    g->nprod[w] = g->instant ? 0 : 1 + (int)pick(g, 2);
    g->ncons[w] = 1 + (int)pick(g, 3);
    g->ntopics[w] = 1 + (int)pick(g, (uint64_t)g->ncons[w]); /* each topic has a subscriber */
    if (x > 1)
        out(g, "workflow w%d x %d\n", w, x);
    else
        out(g, "workflow w%d\n", w);
    for (int p = 0; p < g->nprod[w]; p++)
        gen_producer(g, w, p);
    for (int c = 0; c < g->ncons[w]; c++) {
        out(g, "  consumer c%d", c);
        gen_script(g, w, c);
        out(g, " runs %s", g->instant ? "0" : run_dist(g));
        if (chance(g, 20))
            out(g, " idle %s", chance(g, 50) ? "10ms" : "1s");
        out(g, "\n");
    }
    out(g, "\n");
}

/* --- the outside world ------------------------------------------------------------------------------ */

static void gen_arrivals(struct gen *g)
{
    static const char *const rates[] = {"5/h", "30/h", "1/m", "1/10m"};
    char b[64], c[64];
    for (int s = 0; s < g->nsources; s++)
        out(g, "source s%d poisson %s%s\n", s, rates[pick(g, 4)], chance(g, 30) ? " keys 3" : "");
    for (int q = 0; q < g->ncorr; q++)
        out(g, "publish x%d rate %s\npublish y%d %s %s\n", q, rates[pick(g, 4)], q, chance(g, 50) ? "rate" : "poisson",
            rates[pick(g, 4)]);
    int npub = g->instant ? 1 + (int)pick(g, 3) : (int)pick(g, 3);
    for (int i = 0; i < npub; i++) {
        int w = (int)pick(g, (uint64_t)g->nwf), t = (int)pick(g, (uint64_t)g->ntopics[w]);
        if (!(g->tused[w] & (1u << t)))
            continue; /* no handler of it names t */
        out(g, "publish t%d", t);
        int r = (int)pick(g, 3);
        if (has(g, SWARM_BURSTS) && r == 0) {
            static const int sizes[] = {10, 100, 1000};
            int64_t over = chance(g, 50) ? 0 : 10 * US_PER_MIN;
            int64_t at = instant(g, 0, g->horizon_us - over);
            out(g, " burst %d at %s", sizes[pick(g, 3)], dur(at, b, sizeof b));
            if (over)
                out(g, " over %s", dur(over, c, sizeof c));
        } else if (r == 1) {
            out(g, " at %s count %d", dur(instant(g, 0, g->horizon_us), b, sizeof b), 1 + (int)pick(g, 5));
        } else {
            out(g, " %s %s", chance(g, 50) ? "poisson" : "rate", rates[pick(g, 4)]);
        }
        if (chance(g, 30))
            out(g, " keys %d", 1 + (int)pick(g, 4));
        out(g, "\n");
    }
}

/* --- faults ---------------------------------------------------------------------------------------- */

/* Fixed crashes of one target in disjoint slots of the horizon; now and
 * then one in the drain that may outlast the end (never restarted). */
static void gen_crashes(struct gen *g)
{
    static const char *const targets[] = {"host", "host", "worker 0", "worker 1", "workers", "server"};
    char a[64], b[64];
    int n = 1 + (int)pick(g, 3);
    int random_done = 0;
    for (int i = 0; i < n; i++) {
        const char *t = targets[pick(g, 6)];
        if (!random_done && chance(g, 20)) {
            random_done = 1;
            out(g, "crash %s random mtbf %s mttr %s\n", t, chance(g, 50) ? "3h" : "12h", chance(g, 50) ? "1m" : "10m");
            continue;
        }
        int64_t slot = g->horizon_us / (n + 1);
        int64_t at = slot * i + instant(g, 0, slot / 2);
        int64_t down = US_PER_S + (int64_t)pick(g, (uint64_t)(slot / 2 / US_PER_S)) * US_PER_S;
        if (i == n - 1 && chance(g, 10)) {
            at = g->horizon_us + instant(g, 0, g->drain_us);
            down = g->drain_us;
        }
        out(g, "crash %s at %s for %s\n", t, dur(at, a, sizeof a), dur(down, b, sizeof b));
    }
}

static void gen_stop(struct gen *g)
{
    static const int64_t graces[] = {10 * US_PER_S, 30 * US_PER_S, 5 * US_PER_MIN};
    char a[64], b[64], c[64];
    int64_t grace = graces[pick(g, 3)];
    int64_t at = instant(g, g->horizon_us / 3, g->horizon_us);
    out(g, "stop host at %s grace %s", dur(at, a, sizeof a), dur(grace, b, sizeof b));
    if (chance(g, 75))
        out(g, " for %s", dur(grace + (chance(g, 50) ? US_PER_MIN : 20 * US_PER_MIN), c, sizeof c));
    out(g, "\n");
}

static void gen_failures(struct gen *g)
{
    static const char *const classes[] = {"transient", "logic", "indeterminate", "internal", "delivery"};
    static const char *const phases[] = {"preparing", "mutating", "mutated", "emitting"};
    static const int pcts[] = {1, 5, 20, 50};
    int n = 1 + (int)pick(g, 3);
    unsigned used[GEN_MAX_WF][2 * GEN_MAX_H] = {{0}};
    int sum[GEN_MAX_WF][2 * GEN_MAX_H] = {{0}};
    for (int i = 0; i < n; i++) {
        int w = (int)pick(g, (uint64_t)g->nwf);
        int h = (int)pick(g, (uint64_t)(g->nprod[w] + g->ncons[w]));
        int k = (int)pick(g, 5), p = pcts[pick(g, 4)];
        if ((used[w][h] & (1u << k)) || sum[w][h] + p > 100)
            continue;
        used[w][h] |= 1u << k;
        sum[w][h] += p;
        if (h < g->nprod[w])
            out(g, "fail w%d.p%d %s %d%%", w, h, classes[k], p);
        else
            out(g, "fail w%d.c%d %s %d%%", w, h - g->nprod[w], classes[k], p);
        if (k != 4 && chance(g, 40))
            out(g, " in %s", phases[pick(g, 4)]);
        out(g, "\n");
    }
}

static void gen_variants(struct gen *g)
{
    static const char *const table[] = {
        "poll period=10s", "poll period=5m", "wakeat tick=10s", "wakeat granularity=workflow",
        "wakeat dirty_clear=if_empty recover_dirty=all priority=producers_first", "wakeat phase_reset=always",
        "vistimeout visibility_timeout=60s heartbeat_extend=on max_catchup=50 attempts=claims cron_tz=utc",
        "vistimeout design=lease", "vistimeout notify=off workers=1", "interval max_concurrent=2",
        "interval recover=reset", "interval anchor=start no_work=run cron=run", "interval backoff=exp",
        "heartbeat delivery_retry=startup dom_dow=and cron_backoff=none", "heartbeat every=5m coalesce=0",
        "heartbeat context_key=false queue_cap=5",
        "k8s_cronjob controller=v1 concurrency_policy=Forbid", "k8s_cronjob concurrency_policy=Replace",
        "quartz misfire_instruction=do_nothing disallow_concurrent=true", "quartz clustered=true thread_count=2",
        "systemd_timer persistent=true accuracy=1s", "temporal_schedule overlap_policy=buffer_all",
        "temporal_schedule overlap_policy=cancel_other max_attempts=3", "sqs visibility_timeout=5s consumers=1",
        "sqs max_receive_count=3 max_messages=10", "pgqueue flavour=graphile", "pgqueue flavour=river workers=2",
        "pgqueue flavour=oban max_attempts=2",
    };
    int n = 1 + (int)pick(g, 2);
    for (int i = 0; i < n; i++)
        out(g, "variant v%d %s\n", i + 1, table[pick(g, sizeof table / sizeof table[0])]);
}

/* Schedule changes while running: one or two recurring producers, each
 * disabled, enabled or given a new every or cron schedule one to three
 * times, at increasing instants before the horizon. */
static void gen_changes(struct gen *g)
{
    static const char *const every[] = {"3m", "15m", "1h"};
    static const char *const crons[] = {"cron \"*/15 * * * *\"", "cron \"30 2 * * *\"", "cron @hourly"};
    char b[64];
    unsigned done[GEN_MAX_WF] = {0};
    int n = 1 + (int)pick(g, 2);
    for (int i = 0; i < n; i++) {
        int w = (int)pick(g, (uint64_t)g->nwf);
        unsigned left = g->recur[w] & ~done[w];
        if (!left)
            continue;
        int p = 0;
        while (!(left & (1u << p)))
            p++;
        done[w] |= 1u << p;
        int64_t t = 0;
        for (int k = 1 + (int)pick(g, 3); k > 0 && t + 2 * US_PER_S < g->horizon_us; k--) {
            t = instant(g, t + US_PER_S, g->horizon_us);
            int what = (int)pick(g, 4);
            dur(t, b, sizeof b);
            if (what == 0)
                out(g, "disable w%d.p%d at %s\n", w, p, b);
            else if (what == 1)
                out(g, "enable w%d.p%d at %s\n", w, p, b);
            else if (what == 2)
                out(g, "change w%d.p%d every %s at %s\n", w, p, every[pick(g, 3)], b);
            else
                out(g, "change w%d.p%d %s at %s\n", w, p, crons[pick(g, 3)], b);
        }
    }
}

char *swarm_generate(uint64_t seed, size_t *len, unsigned *features)
{
    struct gen g = {.r = rng_stream(seed, RNG_POLICY, UINT64_C(0x5357524d), 0)};
    g.cap = 4096;
    g.b = xmalloc(g.cap);
    g.f = (unsigned)pick(&g, SWARM_CHANGES);
    g.instant = chance(&g, 20);
    gen_header(&g, seed);
    g.nwf = 1 + (int)pick(&g, GEN_MAX_WF);
    for (int w = 0; w < g.nwf; w++)
        gen_workflow(&g, w);
    gen_arrivals(&g);
    char b[64];
    if (has(&g, SWARM_CRASHES))
        gen_crashes(&g);
    if (has(&g, SWARM_STOPS))
        gen_stop(&g);
    if (has(&g, SWARM_FAILURES))
        gen_failures(&g);
    if (chance(&g, 30))
        out(&g, "trigger w%d at %s\n", (int)pick(&g, (uint64_t)g.nwf), dur(instant(&g, 0, g.horizon_us), b, sizeof b));
    if (has(&g, SWARM_VARIANTS))
        gen_variants(&g);
    if (chance(&g, 50)) {
        g.f |= SWARM_CHANGES;
        gen_changes(&g);
    }
    *len = g.n;
    *features = g.f;
    return g.b;
}
