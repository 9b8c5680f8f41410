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
 * smallest sample s such that at least ceil(q * n) samples are <= s.
 *
 * Censored samples.  Work that was never done (an item never processed, a
 * due instant no run served) still belongs in the distribution: leaving it
 * out would make a policy that loses its slowest items look fast.  Such a
 * sample is censored at the end of the simulation and counts as +infinity:
 * it is larger than every finite sample, takes no bucket, and a quantile
 * whose rank falls among the censored samples is HIST_CENSORED (the mean
 * and the maximum too, once there is one). */
#ifndef SIM_HIST_H
#define SIM_HIST_H

#include <stdint.h>

struct hist {
    uint64_t count;                /* finite samples, in the buckets */
    uint64_t censored;             /* samples at +infinity (never served) */
    int64_t min_us, max_us;
    double sum_us;                 /* for the mean; summed in sample order */
    uint64_t *bucket;              /* NULL until the first sample */
};

#define HIST_NBUCKETS (256 + 56 * 128)
/* What hist_quantile returns for a rank among the censored samples. */
#define HIST_CENSORED INT64_MAX

void hist_init(struct hist *h);
void hist_free(struct hist *h);
void hist_add(struct hist *h, int64_t v_us);           /* v_us < 0 is a bug */
/* n samples censored at +infinity. */
void hist_add_censored(struct hist *h, uint64_t n);
void hist_merge(struct hist *into, const struct hist *from);
/* q in [0, 1]; 0 if empty (no sample, finite or censored); HIST_CENSORED
 * when the nearest rank is past the finite samples. */
int64_t hist_quantile(const struct hist *h, double q);
/* The mean of the finite samples; +INFINITY once one is censored; 0 if
 * empty. */
double hist_mean(const struct hist *h);
/* Bucket index of a value, and a bucket's bounds [lo, hi] (inclusive). */
int hist_index(int64_t v_us);
void hist_bounds(int idx, int64_t *lo_us, int64_t *hi_us);

#endif
