/* idmap.h: a map from 64-bit ids to 32-bit slots, for tables of live
 * records whose ids are dense and monotonic over a run but whose live set is
 * small and scattered (items, runs: ids are issued in order and retired in
 * any order).
 *
 * Open addressing with linear probing and backward-shift deletion (no
 * tombstones, so lookups stay short however many ids come and go); the
 * capacity is a power of two at least twice the live count, and at most 8x
 * it once over 64 Ki buckets (it shrinks when most entries are gone, so a
 * burst does not pin its peak).
 * Ids are spread by a Fibonacci multiply, so that consecutive, strided or
 * clustered ids do not pile up (placing consecutive ids side by side would
 * save cache misses on insertion, but makes long clusters that deletion
 * must walk).
 *
 * Costs: get, put and del are O(1) expected; a resize is O(capacity).
 * Memory: 16 bytes per bucket, idmap_bytes() in all.
 *
 * Ownership: the map owns its buckets; idmap_free releases them. */
#ifndef SIM_IDMAP_H
#define SIM_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#include "sim/util.h"

#define IDMAP_NONE UINT32_MAX

struct idmap_ent {
    uint64_t key;                  /* id + 1; 0: empty */
    uint32_t val;
    uint32_t unused;
};

struct idmap {
    struct idmap_ent *v;
    size_t cap;                    /* 0 or a power of two, at least IDMAP_MIN_CAP */
    size_t n;                      /* entries */
    unsigned shift;                /* 64 - log2(cap) */
};

void idmap_init(struct idmap *m);
void idmap_free(struct idmap *m);
/* Adds id -> val; id must not be in the map. */
void idmap_put(struct idmap *m, uint64_t id, uint32_t val);
/* Removes id, which must be in the map. */
void idmap_del(struct idmap *m, uint64_t id);
/* Bytes the map holds. */
static inline size_t idmap_bytes(const struct idmap *m) { return m->cap * sizeof(struct idmap_ent); }

#define IDMAP_MIN_CAP 64

static inline size_t idmap__home(const struct idmap *m, uint64_t key)
{
    return (size_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> m->shift);
}

/* The slot of id, IDMAP_NONE if it is not in the map. */
static inline uint32_t idmap_get(const struct idmap *m, uint64_t id)
{
    if (m->n == 0)
        return IDMAP_NONE;
    uint64_t key = id + 1;
    size_t mask = m->cap - 1;
    for (size_t i = idmap__home(m, key);; i = (i + 1) & mask) {
        if (m->v[i].key == key)
            return m->v[i].val;
        if (m->v[i].key == 0)
            return IDMAP_NONE;
    }
}

/* --- idwin: a map for ids that are mostly issued in order ---------------
 *
 * Runs and items get dense, increasing ids, and most of those alive at a
 * time are recent.  An idwin keeps the ids of a window [lo, lo + cap) in a
 * ring indexed by the id itself (4 bytes an id, neighbours side by side, no
 * hashing), and the few older ones still alive in an idmap.  A put beyond
 * the window grows the ring while it is at least a quarter full, and
 * otherwise slides the window forward, moving the live ids it leaves behind
 * to the idmap (each id moves at most once).  A quarter, not a half: in a
 * fleet each handler's latest run stays alive until its next run, so the
 * live ids are sparse: `bench_fleet`'s 30 k instances keep about 60 k
 * runs spread over the last 130 k ids and more.  A ring that grew only
 * when half full stopped at 128 k slots, whose slides keep the last 64 k
 * ids, and moved about one run in eight into the idmap, where each later
 * read and delete waited for memory; two hours of that fleet now slide a
 * few hundred.  A ring a quarter full costs at most 16 bytes a live id,
 * what an idmap entry costs.  Any id may be put, in any order; puts in
 * increasing order are the fast case.  Memory: the ring follows the live window (a large
 * ring less than a sixteenth full halves at its next slide), the idmap the
 * old ids still alive. */
struct idwin {
    uint32_t *ring;                /* [cap]: slot of id i at ring[i & (cap - 1)], IDMAP_NONE empty */
    uint64_t lo;                   /* the window's first id */
    size_t cap;                    /* 0 or a power of two */
    size_t nring;                  /* ids in the ring */
    struct idmap old;              /* ids below lo */
};

void idwin_init(struct idwin *w);
void idwin_free(struct idwin *w);
/* Adds id -> val (val != IDMAP_NONE); id must not be in the map. */
void idwin_put(struct idwin *w, uint64_t id, uint32_t val);
/* Removes id, which must be in the map. */
void idwin_del(struct idwin *w, uint64_t id);
static inline size_t idwin_bytes(const struct idwin *w)
{
    return w->cap * sizeof *w->ring + idmap_bytes(&w->old);
}
static inline size_t idwin_count(const struct idwin *w) { return w->nring + w->old.n; }

/* Whether id's place is in the window's ring. */
static inline int idwin__in_ring(const struct idwin *w, uint64_t id) { return id >= w->lo && id - w->lo < w->cap; }

/* Starts loading id's place in the window (a hint; an id outside it is
 * in the overflow map, not loaded). */
static inline void idwin_prefetch(const struct idwin *w, uint64_t id)
{
    if (idwin__in_ring(w, id))
        sim_prefetch(&w->ring[id & (w->cap - 1)]);
}

/* The slot of id if it is in the window, else IDMAP_NONE (an id in the
 * overflow map too): for a prefetch, which reads nothing beyond the ring. */
static inline uint32_t idwin_ring_get(const struct idwin *w, uint64_t id)
{
    return idwin__in_ring(w, id) ? w->ring[id & (w->cap - 1)] : IDMAP_NONE;
}
/* The slot of id, IDMAP_NONE if it is not in the map (ids at or past the
 * window's start are in the ring or nowhere). */
static inline uint32_t idwin_get(const struct idwin *w, uint64_t id)
{
    return id >= w->lo ? idwin_ring_get(w, id) : idmap_get(&w->old, id);
}

#endif
