/* hist.h: histograms of non-negative durations with bounded relative error.
 *
 * Values below 256 us are counted exactly; above, each power of two is cut
 * into 128 equal sub-buckets, so a bucket's width is at most 1/128 of its
 * lower bound and the value reported for a quantile (the bucket's midpoint,
 * clamped to the observed min and max) is within 0.4 % of the true sample.
 * A histogram costs O(1) per sample and at most 8 k counters, allocated on
 * first use, whatever the number of samples.
 *
 * Quantiles use the nearest-rank rule: the q-quantile of n samples is the
 * smallest sample s such that at least ceil(q * n) samples are <= s. */
#ifndef SIM_HIST_H
#define SIM_HIST_H

#include <stdint.h>

struct hist {
    uint64_t count;
    int64_t min_us, max_us;
    double sum_us;                 /* for the mean; summed in sample order */
    uint64_t *bucket;              /* NULL until the first sample */
};

#define HIST_NBUCKETS (256 + 56 * 128)

void hist_init(struct hist *h);
void hist_free(struct hist *h);
void hist_add(struct hist *h, int64_t v_us);           /* v_us < 0 is a bug */
void hist_merge(struct hist *into, const struct hist *from);
/* q in [0, 1]; 0 if empty. */
int64_t hist_quantile(const struct hist *h, double q);
double hist_mean(const struct hist *h);
/* Bucket index of a value, and a bucket's bounds [lo, hi] (inclusive). */
int hist_index(int64_t v_us);
void hist_bounds(int idx, int64_t *lo_us, int64_t *hi_us);

#endif
