/* idxset.h: a set of small indices [0, n) that yields its members lowest
 * first, for the worker pools of the policies (the idle workers a fetch
 * hands rows to, lowest index first, as the real pools do).
 *
 * Two levels of bits: one bit per index, and one bit per 64-index word that
 * has a member.  Add, delete and membership are O(1); idxset_next(from), the
 * least member >= from, reads one word and then the summary words, so a
 * pool of a million workers costs 125 KiB and a scan of at most 245 summary
 * words, instead of a walk over every worker.  Visiting the members in
 * order (for k = next(0); k != NONE; k = next(k + 1)) costs O(members +
 * n / 4096).  Volatile memory of the caller's own (xcalloc); not thread
 * safe. */
#ifndef SIM_IDXSET_H
#define SIM_IDXSET_H

#include <stdint.h>

#include "sim/util.h"

#define IDXSET_NONE UINT32_MAX

struct idxset {
    uint64_t *bits;                /* [(n + 63) / 64] */
    uint64_t *sum;                 /* [(nwords + 63) / 64]: bit w set iff bits[w] != 0 */
    uint32_t n, count;
};

/* An empty set of indices [0, n). */
void idxset_init(struct idxset *s, uint32_t n);
void idxset_free(struct idxset *s);
/* Empties the set (O(n / 64)). */
void idxset_clear(struct idxset *s);
/* The least member >= from, IDXSET_NONE if none. */
uint32_t idxset_next(const struct idxset *s, uint32_t from);

static inline int idxset_has(const struct idxset *s, uint32_t i)
{
    return (int)((s->bits[i >> 6] >> (i & 63)) & 1);
}

static inline void idxset_add(struct idxset *s, uint32_t i)
{
    SIM_ASSERT(i < s->n);
    uint64_t *w = &s->bits[i >> 6];
    uint64_t b = UINT64_C(1) << (i & 63);
    if (*w & b)
        return;
    if (*w == 0)
        s->sum[i >> 12] |= UINT64_C(1) << ((i >> 6) & 63);
    *w |= b;
    s->count++;
}

static inline void idxset_del(struct idxset *s, uint32_t i)
{
    SIM_ASSERT(i < s->n);
    uint64_t *w = &s->bits[i >> 6];
    uint64_t b = UINT64_C(1) << (i & 63);
    if (!(*w & b))
        return;
    *w &= ~b;
    if (*w == 0)
        s->sum[i >> 12] &= ~(UINT64_C(1) << ((i >> 6) & 63));
    s->count--;
}

#endif
