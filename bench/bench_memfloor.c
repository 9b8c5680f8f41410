/* bench_memfloor.c: what a random read of memory costs on this machine, by
 * the size of the state it lands in.
 *
 * A fleet's events each read a few cache lines of records that no recent
 * event touched, so once the live state outgrows the caches, the time of
 * an event is bounded below by the time of those reads.  This benchmark
 * measures that floor, so that the fleet figures (bench_fleet) can be read
 * against it:
 *  - chase: each read's address comes from the read before (a random
 *    cyclic order of the lines): the latency of one read, nothing to
 *    overlap with.  The size where it jumps is the cache this process
 *    really gets (on a shared machine, less than the one lscpu names).
 *  - overlapped: reads at independent random lines, as many in flight as
 *    the core allows: the cost of a read that was prefetched in time, the
 *    best any prefetching can do.
 * Memory comes from xmalloc_aligned (sim/util.h), as the engine's large
 * tables do, so it gets the same huge pages.  Each figure is the median of
 * REPS timings, in nanoseconds per read; the benchmark reports, it never
 * fails.  Environment: MEMFLOOR_MAX_MIB (default 128), the largest size. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/rng.h"
#include "sim/util.h"
#include "bench/bench_util.h"

#define REPS 5
#define READS (UINT64_C(1) << 22)
#define LINE 64

struct line {
    uint64_t next;                 /* chase: the index of the next line */
    uint64_t pad[LINE / 8 - 1];
};

static volatile uint64_t sink; /* keeps the reads alive */

/* n lines linked in one random cycle (Sattolo's shuffle): a chase visits
 * them all before it repeats. */
static struct line *make_lines(uint64_t n, struct rng *r)
{
    struct line *v = xmalloc_aligned(LINE, (size_t)n * sizeof *v);
    uint64_t *order = xmalloc((size_t)n * sizeof *order);
    for (uint64_t i = 0; i < n; i++)
        order[i] = i;
    for (uint64_t i = n - 1; i > 0; i--) {
        uint64_t j = rng_below(r, i); /* j < i: one cycle */
        uint64_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (uint64_t i = 0; i < n; i++) {
        memset(&v[order[i]], 0, sizeof v[0]);
        v[order[i]].next = order[(i + 1) % n];
    }
    free(order);
    return v;
}

static double time_chase(const struct line *v)
{
    uint64_t p = 0;
    double t0 = now_s();
    for (uint64_t i = 0; i < READS; i++)
        p = v[p].next;
    double t = now_s() - t0;
    sink = p;
    return t * 1e9 / (double)READS;
}

/* Independent reads: the next address never waits for a read.  The
 * addresses come from a multiplicative step modulo n (a power of two, odd
 * step), which costs a few instructions and visits the lines in a
 * scattered order. */
static double time_overlapped(const struct line *v, uint64_t n)
{
    uint64_t sum = 0, x = 0, mask = n - 1;
    double t0 = now_s();
    for (uint64_t i = 0; i < READS; i++) {
        x = (x * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407));
        sum += v[(x >> 20) & mask].pad[0];
    }
    double t = now_s() - t0;
    sink = sum;
    return t * 1e9 / (double)READS;
}

/* Independent reads of runs of g adjacent lines at scattered places (as
 * above): ns per line. */
static double time_runs(const struct line *v, uint64_t n, uint64_t g)
{
    uint64_t sum = 0, x = 0, mask = n / g - 1, reads = READS / g;
    double t0 = now_s();
    for (uint64_t i = 0; i < reads; i++) {
        x = (x * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407));
        const struct line *l = &v[((x >> 20) & mask) * g];
        for (uint64_t k = 0; k < g; k++)
            sum += l[k].pad[0];
    }
    double t = now_s() - t0;
    sink = sum;
    return t * 1e9 / (double)(reads * g);
}

int main(void)
{
    uint64_t max_mib = 128;
    const char *e = getenv("MEMFLOOR_MAX_MIB");
    if (e && strtoull(e, NULL, 10) >= 1)
        max_mib = strtoull(e, NULL, 10);
    struct rng r = rng_stream(1, 0, 0, 0);
    printf("memfloor: ns per random read of a 64-byte line, by the size of the state read (median of %d)\n", REPS);
    printf("memfloor %10s %12s %12s %12s %12s\n", "state", "chase", "overlapped", "runs of 2", "runs of 4");
    for (uint64_t mib = 1; mib <= max_mib; mib *= 2) {
        uint64_t n = mib * 1024 * 1024 / LINE;
        struct line *v = make_lines(n, &r);
        double c[REPS], o[REPS], o2[REPS], o4[REPS];
        time_chase(v); /* touch every line once: page faults out of the timing */
        for (int k = 0; k < REPS; k++) {
            c[k] = time_chase(v);
            o[k] = time_overlapped(v, n);
            o2[k] = time_runs(v, n, 2);
            o4[k] = time_runs(v, n, 4);
        }
        qsort(c, REPS, sizeof c[0], cmp_double);
        qsort(o, REPS, sizeof o[0], cmp_double);
        qsort(o2, REPS, sizeof o2[0], cmp_double);
        qsort(o4, REPS, sizeof o4[0], cmp_double);
        printf("memfloor %6" PRIu64 " MiB %9.1f ns %9.1f ns %9.1f ns %9.1f ns\n", mib, c[REPS / 2], o[REPS / 2],
               o2[REPS / 2], o4[REPS / 2]);
        free(v);
    }
    return 0;
}
