/* idxset.h: a set of small indices [0, n) that yields its members lowest
 * first, for the worker pools of the policies (the idle workers a fetch
 * hands rows to, lowest index first, as the real pools do; the consumers
 * waiting on a queue).
 *
 * A bitmap (level 0) under summaries: a bit of level l + 1 per word of level
 * l, set while that word is not zero, up to a single word.  Add, delete and
 * idxset_next(from), the least member >= from, cost O(levels): 4 for a
 * million indices, which take 125 KiB.  Visiting the members in order
 * (for k = next(0); k != NONE; k = next(k + 1)) costs O(members x levels),
 * not a walk over every index.  Volatile memory of the caller's own
 * (xcalloc); not thread safe. */
#ifndef SIM_IDXSET_H
#define SIM_IDXSET_H

#include <stdint.h>

#define IDXSET_NONE UINT32_MAX
#define IDXSET_LEVELS 6            /* 64^6 > 2^32 */

struct idxset {
    uint64_t *w[IDXSET_LEVELS];
    uint32_t nw[IDXSET_LEVELS];    /* words of each level */
    uint32_t nlv;                  /* levels; the top one is a single word */
    uint32_t n, count;
};

/* An empty set of indices [0, n). */
void idxset_init(struct idxset *s, uint32_t n);
void idxset_free(struct idxset *s);
/* Empties the set (O(n / 64)). */
void idxset_clear(struct idxset *s);
/* Adds i (< n); adding a member changes nothing. */
void idxset_add(struct idxset *s, uint32_t i);
/* Deletes i (< n); deleting a non-member changes nothing. */
void idxset_del(struct idxset *s, uint32_t i);
/* The least member >= from, IDXSET_NONE if none. */
uint32_t idxset_next(const struct idxset *s, uint32_t from);

static inline int idxset_has(const struct idxset *s, uint32_t i)
{
    return i < s->n && (int)((s->w[0][i >> 6] >> (i & 63)) & 1);
}

#endif
