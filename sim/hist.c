/* hist.c: log-linear histograms of durations (see hist.h).
 *
 * Layout: bucket v for 0 <= v < 256 (one value each, so small values are
 * exact); then, for each power of two 2^p with 8 <= p <= 62, 128 buckets of
 * width 2^(p-7) covering [2^p, 2^(p+1)).  Bucket index of v >= 256 is
 * 256 + (p - 8) * 128 + (v - 2^p) / 2^(p-7).  p = 62 is the last group an
 * int64_t can reach, so 55 groups are used of the 56 that HIST_NBUCKETS
 * reserves.
 *
 * Invariant: count == sum of all buckets; count > 0 implies bucket != NULL
 * and min_us <= max_us, both inside the buckets that hold samples.
 * Censored samples are only counted (censored): they are the largest, so
 * the finite samples keep ranks 1..count and the censored ones follow. */
#include "sim/hist.h"

#include <math.h>
#include <stdlib.h>

#include "sim/util.h"

#define HIST_EXACT 256          /* values below are counted exactly */
#define HIST_SUB_BITS 7         /* 128 sub-buckets per power of two */
#define HIST_SUB (1 << HIST_SUB_BITS)
#define HIST_FIRST_POW 8        /* 2^8 == HIST_EXACT */

void hist_init(struct hist *h)
{
    *h = (struct hist){0};
}

void hist_free(struct hist *h)
{
    free(h->bucket);
    hist_init(h);
}

int hist_index(int64_t v_us)
{
    SIM_ASSERT(v_us >= 0);
    if (v_us < HIST_EXACT)
        return (int)v_us;
    uint64_t v = (uint64_t)v_us;
    int p = 63 - __builtin_clzll(v);
    int sub = (int)((v - (UINT64_C(1) << p)) >> (p - HIST_SUB_BITS));
    int idx = HIST_EXACT + (p - HIST_FIRST_POW) * HIST_SUB + sub;
    SIM_ASSERT(idx < HIST_NBUCKETS);
    return idx;
}

void hist_bounds(int idx, int64_t *lo_us, int64_t *hi_us)
{
    SIM_ASSERT(idx >= 0);
    SIM_ASSERT(idx < HIST_NBUCKETS);
    if (idx < HIST_EXACT) {
        *lo_us = idx;
        *hi_us = idx;
        return;
    }
    int g = (idx - HIST_EXACT) / HIST_SUB;
    int sub = (idx - HIST_EXACT) % HIST_SUB;
    int p = g + HIST_FIRST_POW;
    if (p > 62) {
        /* Reserved groups no int64_t value reaches: report them empty at
         * the top of the range rather than overflow. */
        *lo_us = INT64_MAX;
        *hi_us = INT64_MAX;
        return;
    }
    uint64_t w = UINT64_C(1) << (p - HIST_SUB_BITS);
    uint64_t lo = (UINT64_C(1) << p) + (uint64_t)sub * w;
    *lo_us = (int64_t)lo;
    *hi_us = (int64_t)(lo + (w - 1));   /* at most 2^63 - 1 */
}

void hist_add(struct hist *h, int64_t v_us)
{
    SIM_ASSERT(v_us >= 0);
    if (!h->bucket)
        h->bucket = xcalloc(HIST_NBUCKETS, sizeof *h->bucket);
    h->bucket[hist_index(v_us)]++;
    if (h->count == 0 || v_us < h->min_us)
        h->min_us = v_us;
    if (h->count == 0 || v_us > h->max_us)
        h->max_us = v_us;
    h->count++;
    h->sum_us += (double)v_us;
}

void hist_add_censored(struct hist *h, uint64_t n)
{
    h->censored += n;
}

void hist_merge(struct hist *into, const struct hist *from)
{
    into->censored += from->censored;
    if (from->count == 0)
        return;
    SIM_ASSERT(from->bucket != NULL);
    if (!into->bucket)
        into->bucket = xcalloc(HIST_NBUCKETS, sizeof *into->bucket);
    for (int i = 0; i < HIST_NBUCKETS; i++)
        into->bucket[i] += from->bucket[i];
    if (into->count == 0 || from->min_us < into->min_us)
        into->min_us = from->min_us;
    if (into->count == 0 || from->max_us > into->max_us)
        into->max_us = from->max_us;
    into->count += from->count;
    into->sum_us += from->sum_us;
}

/* ceil(q * n), computed so that decimal quantiles land on the rank exact
 * arithmetic gives: 0.99 * 100 is 98.99999999999999 or 99.00000000000001
 * depending on rounding, and either way the answer must be 99.  A relative
 * slack of 1e-9 is far below any meaningful quantile resolution. */
static uint64_t nearest_rank(double q, uint64_t n)
{
    double r = q * (double)n;
    double c = ceil(r - r * 1e-9);
    if (c < 1)
        c = 1;
    if (c > (double)n)
        return n;
    return (uint64_t)c;
}

int64_t hist_quantile(const struct hist *h, double q)
{
    SIM_ASSERT(q >= 0.0);
    SIM_ASSERT(q <= 1.0);
    uint64_t n = h->count + h->censored;
    if (n == 0)
        return 0;
    uint64_t rank = nearest_rank(q, n);
    if (rank > h->count)
        return HIST_CENSORED;
    /* The extreme ranks are known exactly; no need to round them. */
    if (rank == 1)
        return h->min_us;
    if (rank == h->count)
        return h->max_us;
    uint64_t seen = 0;
    for (int i = 0; i < HIST_NBUCKETS; i++) {
        seen += h->bucket[i];
        if (seen >= rank) {
            int64_t lo, hi;
            hist_bounds(i, &lo, &hi);
            int64_t mid = lo + (hi - lo) / 2;
            if (mid < h->min_us)
                mid = h->min_us;
            if (mid > h->max_us)
                mid = h->max_us;
            return mid;
        }
    }
    SIM_ASSERT(0 && "histogram count does not match its buckets");
    return 0;
}

double hist_mean(const struct hist *h)
{
    if (h->censored)
        return INFINITY;
    return h->count ? h->sum_us / (double)h->count : 0.0;
}
