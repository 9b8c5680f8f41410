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
 * The offsets come from a fixed-seed splitmix64 generator through a table of
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
#include "sim/util.h"

#define REPS 5
#define OFFS (1u << 16) /* table of exponential offsets; a power of two */
#define MEAN_US 1e6

static int64_t offs_us[OFFS];

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static void offs_init(uint64_t seed)
{
    for (unsigned i = 0; i < OFFS; i++) {
        /* u in (0, 1]: 53 random bits, never 0, so log(u) is finite */
        double u = (double)((splitmix64(&seed) >> 11) + 1) * 0x1p-53;
        offs_us[i] = (int64_t)llround(-MEAN_US * log(u));
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
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
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        size_t m = 5 * n > 5000000 ? 5 * n : 5000000;
        double ev[REPS], hp[REPS];
        for (int r = 0; r < REPS; r++) {
            hp[r] = run_heap(n, m);
            ev[r] = run_evq(n, m);
        }
        double e = median(ev, REPS), h = median(hp, REPS);
        char label[32];
        snprintf(label, sizeof label, "N=%zu", n);
        printf("evq hold %-12s evq %5.1f M ev/s   4-ary heap %5.1f M ev/s   ratio %.2f\n",
               label, e / 1e6, h / 1e6, e / h);
        fflush(stdout);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("evq hold: median of %d runs, M = max(5N, 5e6) holds; peak rss %.1f MiB\n", REPS,
           (double)ru.ru_maxrss / 1024.0);
    return 0;
}
