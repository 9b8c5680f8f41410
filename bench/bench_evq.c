/* bench_evq.c: the event queue under the classic HOLD model.
 *
 * For each population N, the queue is filled with N events at exponential
 * offsets from time 0 (mean 1 s), then timed over M hold operations: pop the
 * earliest event, push one at its time plus a fresh exponential offset, so
 * the population stays N.  The same loop runs over a plain 4-ary min-heap of
 * (time, seq) written here, with no payload, handles or cancellation: the
 * floor that any engine pays.  Each measurement is repeated REPS times,
 * alternating the two, and the median is reported with the ratio evq/heap.
 *
 * The third column is the whole engine under the same model: a policy that
 * keeps N timers pending and, at each firing, sets one more at an
 * exponential offset.  Each event then pays for everything a real one does
 * (dispatch, the epoch check, the fingerprint, the wake-up count, the policy
 * hook and its call back into the engine), so it is the figure to compare
 * with the bare heap.
 *
 * The offsets come from a fixed-seed stream of sim/rng.h through a table of
 * OFFS exponential variates built before timing, so that log() does not take
 * a large and equal share of both timings; the table is read in order and
 * both structures see the same sequence. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "sim/evq.h"
#include "sim/sim.h"
#include "sim/util.h"
#include "sim/rng.h"
#include "bench/bench_util.h"

#define REPS 5
#define OFFS (1u << 16) /* table of exponential offsets; a power of two */
#define MEAN_US 1e6

static int64_t offs_us[OFFS];

static void offs_init(uint64_t seed)
{
    struct rng r = {seed};
    for (unsigned i = 0; i < OFFS; i++) {
        /* u in (0, 1]: 53 random bits, never 0, so log(u) is finite */
        double u = (double)((rng_next(&r) >> 11) + 1) * 0x1p-53;
        offs_us[i] = (int64_t)llround(-MEAN_US * log(u));
    }
}

static volatile int64_t sink; /* keeps the timed loops from being elided */

/* ---- the reference: a 4-ary min-heap of (time, seq) ---- */

struct hent {
    int64_t t;
    uint64_t seq;
};

struct heap4 {
    struct hent *v;
    size_t n;
    uint64_t seq;
};

static inline int hless(struct hent x, struct hent y)
{
    return x.t < y.t || (x.t == y.t && x.seq < y.seq);
}

static inline void heap4_push(struct heap4 *h, int64_t t)
{
    struct hent e = { t, h->seq++ };
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 4;
        if (!hless(e, h->v[p]))
            break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = e;
}

static inline struct hent heap4_pop(struct heap4 *h)
{
    struct hent top = h->v[0];
    struct hent e = h->v[--h->n];
    size_t n = h->n, i = 0;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n)
            break;
        size_t best = c;
        size_t end = c + 4 < n ? c + 4 : n;
        for (size_t k = c + 1; k < end; k++)
            if (hless(h->v[k], h->v[best]))
                best = k;
        if (!hless(h->v[best], e))
            break;
        h->v[i] = h->v[best];
        i = best;
    }
    h->v[i] = e;
    return top;
}

static double run_heap(size_t n, size_t m)
{
    struct heap4 h = { xmalloc((n + 1) * sizeof *h.v), 0, 0 };
    unsigned o = 0;
    for (size_t i = 0; i < n; i++)
        heap4_push(&h, offs_us[o++ & (OFFS - 1)]);
    int64_t acc = 0;
    double t0 = now_s();
    for (size_t i = 0; i < m; i++) {
        struct hent e = heap4_pop(&h);
        acc += e.t;
        heap4_push(&h, e.t + offs_us[o++ & (OFFS - 1)]);
    }
    double dt = now_s() - t0;
    sink += acc;
    free(h.v);
    return (double)m / dt;
}

static double run_evq(size_t n, size_t m)
{
    struct evq *q = evq_new();
    unsigned o = 0;
    for (size_t i = 0; i < n; i++)
        evq_push(q, offs_us[o++ & (OFFS - 1)], 1, 2, i);
    int64_t acc = 0;
    struct evq_event ev;
    double t0 = now_s();
    for (size_t i = 0; i < m; i++) {
        if (!evq_pop(q, &ev))
            abort();
        acc += ev.time_us;
        evq_push(q, ev.time_us + offs_us[o++ & (OFFS - 1)], ev.kind, ev.a, ev.b);
    }
    double dt = now_s() - t0;
    sink += acc;
    evq_free(q);
    return (double)m / dt;
}

/* ---- the engine: a hold-model policy ---- */

struct policy {
    struct sim *sim;
    size_t n;
    unsigned o;
};

static size_t hold_n;

static struct policy *hold_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct policy *p = xcalloc(1, sizeof *p);
    p->sim = sim;
    p->n = hold_n;
    return p;
}
static void hold_destroy(struct policy *p) { free(p); }
static void hold_start(struct policy *p, int restart, int64_t now)
{
    for (size_t i = 0; i < p->n; i++)
        sim_timer_at(p->sim, now + offs_us[p->o++ & (OFFS - 1)], 1, i);
}
static void hold_publish(struct policy *p, uint32_t h, uint64_t item, int64_t now) {}
static void hold_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now)
{
    sim_timer_at(p->sim, now + offs_us[p->o++ & (OFFS - 1)], tag, arg);
}
static void hold_end(struct policy *p, const struct run_result *r, int64_t now) {}

static const struct policy_ops hold_ops = {
    .abi = POLICY_ABI, .name = "hold", .summary = "hold model", .seeds = "bench",
    .durable_size = 1, .promise = PROMISE_NONE,
    .create = hold_create, .destroy = hold_destroy, .start = hold_start,
    .on_publish = hold_publish, .on_timer = hold_timer, .on_run_end = hold_end,
};

static double run_engine(const struct scenario *s, size_t n, size_t m)
{
    hold_n = n;
    struct params ps = {0};
    struct sim_opts o = {.seed = 1, .max_events = m};
    struct sim_result r;
    double t0 = now_s();
    sim_run(s, &hold_ops, &ps, &o, &r);
    double dt = now_s() - t0;
    if (r.status != SIM_EVENT_LIMIT)
        abort();
    sim_result_free(&r);
    return (double)m / dt;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return v[n / 2];
}

int main(void)
{
    static const size_t sizes[] = { 1000, 100000, 1000000 };
    offs_init(42);
    static const char text[] = "horizon 3000d\nworkflow w\n  consumer c subscribe t fifo runs 1s\n";
    struct scenario *scn;
    struct diag d;
    if (scenario_parse_buf("hold.scn", text, sizeof text - 1, &scn, &d) != 0) {
        diag_print(&d);
        return 1;
    }
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        size_t m = 5 * n > 5000000 ? 5 * n : 5000000;
        double ev[REPS], hp[REPS], en[REPS];
        for (int r = 0; r < REPS; r++) {
            hp[r] = run_heap(n, m);
            ev[r] = run_evq(n, m);
            en[r] = run_engine(scn, n, m);
        }
        double e = median(ev, REPS), h = median(hp, REPS), g = median(en, REPS);
        char label[32];
        snprintf(label, sizeof label, "N=%zu", n);
        printf("hold %-10s engine %5.1f M ev/s   evq %5.1f M ev/s   4-ary heap %5.1f M ev/s   "
               "engine/heap %.2f   evq/heap %.2f\n",
               label, g / 1e6, e / 1e6, h / 1e6, g / h, e / h);
        fflush(stdout);
    }
    scenario_free(scn);
    cal_zone_cache_free();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("hold: median of %d runs, M = max(5N, 5e6) holds; peak rss %.1f MiB\n", REPS,
           (double)ru.ru_maxrss / 1024.0);
    return 0;
}
