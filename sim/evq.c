/* evq.c: the event queue as a radix heap with a sorted front and a slot pool.
 *
 * Times map to unsigned keys (sign bit flipped, so the order is kept).  The
 * queue keeps a base key, `last`.  Every pending entry with a key up to
 * last is in the front, bucket 0, sorted by (key, seq) and popped from its
 * head; every other entry is in bucket bucket_of(key, last): 1 + the index
 * of the highest bit in which key and last differ.  So a lower bucket only
 * holds smaller keys than a higher one, and the front the smallest of all.
 *
 * Refilling the front takes the lowest non-empty bucket.  A large one is
 * spread around its minimum, which becomes last: the entries of that key go
 * to the front, the others to the buckets below, which are all empty then
 * (each entry only ever moves down, so at most 64 times).  A small one
 * whose keys are about as dense as the pops go whole into the front, sorted
 * there (a few entries: insertion), and its largest key becomes last; that
 * spares the spreads that would have split it one key at a time.  Either
 * way the buckets above stay right, since the new last agrees with the old
 * one above the bucket's bit.
 *
 * The front is refilled after each pop to hold the next FRONT_AHEAD
 * entries, so that evq_hints reads the next pops off it in order; but only
 * as far as the next FRONT_SPAN average gaps between pops reach, since a
 * push up to last is sorted into the front (binary search, then one move
 * of the shorter side): a front that reached an hour ahead in a lull would
 * take in every push of that hour.  A push past last appends to its
 * bucket.  Entries of one key therefore keep seq order everywhere: a push
 * has the largest seq so far, a spread or a move keeps a bucket's order
 * (which is seq order: buckets are only appended to) and sorts stably.
 *
 * Each bucket 1..64 keeps the least key it holds (tombstones included) as
 * entries come in, so that emptying it needs one pass, not two.
 *
 * A bucket entry holds the whole event (key, payload, the low 32 bits of
 * its seq, and its slot), 32 bytes, so that a pop, and evq_hints, read
 * nothing else that is far away: with many pending events a separate
 * payload pool cost a cache miss per pop.  A slot is just a generation, 4
 * bytes in a dense array: odd while its event is pending, even after; it
 * goes up when the event is pushed and when it stops being pending (popped
 * or cancelled), and a handle is (generation << 32 | slot index + 1), so
 * old handles go stale.  Free slots sit on a stack.  Cancelling only makes
 * the generation even; the entry is dropped, and the slot freed, when the
 * entry reaches the head of the front or when a sweep runs (once
 * tombstones outnumber live events, so memory stays O(live)).  A slot is
 * reused only after its entry is gone: each slot has at most one entry.
 *
 * Invariants (evq_check): the front sorted by (key, seq), its keys from
 * now_us to last; every other entry in bucket bucket_of(key, last), in
 * strictly increasing seq (modulo 2^32); bit i-1 of mask set iff bucket i
 * is non-empty; live counts the slots of odd generation, dead the even ones
 * that an entry still names. */
#include "sim/evq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/util.h"

#define EVQ_NBUCKETS 65

#define EVQ_SLOTS_MAX UINT32_C(0xFFFFFFF0)

/* Tombstones are swept out once there are more of them than live events and
 * at least this many (so that small queues are not swept over and over). */
#define EVQ_SWEEP_MIN 4096

/* Emptied buckets with room for more entries than this release it. */
#define EVQ_BUCKET_KEEP 16384

/* How many entries of a bucket evq_hints looks at when the front holds
 * fewer than it was asked for (before the first pop, or past FRONT_SPAN). */
#define HINT_LOOK 32
/* The front keeps at least this many entries while more are pending, so
 * that evq_hints names the next pops from it alone. */
#define FRONT_AHEAD EVQ_HINTS
/* A lowest bucket of at most this many entries, whose width over their
 * number is at most two average gaps between pops, moves into the front
 * whole (sorted there); any other is spread over the buckets below it. */
#define FRONT_PULL 16
/* The front takes in only what the next FRONT_SPAN average gaps between
 * pops reach: every push no later than its last key is sorted into it, so
 * a front that reached far (in a lull, to an event an hour ahead) would
 * take in every push of that hour, each at the cost of a move. */
#define FRONT_SPAN (4 * FRONT_AHEAD)
/* The front's consumed head is cut off once it is this long and at least
 * half of the array (so an ever-refilled front stays O(live)). */
#define FRONT_COMPACT 256

#define KEY_SIGN (UINT64_C(1) << 63)

struct evq_entry {
    uint64_t key;  /* time_us with the sign bit flipped */
    uint64_t b;
    uint32_t kind, a;
    uint32_t slot; /* its generation: gen[slot] */
    uint32_t seq;  /* the push's number, modulo 2^32 */
};
_Static_assert(sizeof(struct evq_entry) == 32, "an entry is half a cache line");

struct evq_bucket {
    struct evq_entry *v;
    size_t len;
    size_t cap;
    uint64_t min;      /* buckets 1..64, when len > 0: no key in it is smaller */
};

struct evq {
    uint64_t last;     /* key_of(now_us): the radix base */
    uint64_t mask;     /* bit i-1 set iff bucket i (1..64) is non-empty */
    size_t head0;      /* bucket 0 is consumed from the front: v[head0..len) */
    struct evq_bucket bk[EVQ_NBUCKETS];
    uint32_t *gen;     /* per slot: odd while its event is pending */
    uint32_t *freel;   /* the free slots, a stack */
    size_t nslots;     /* slots handed out so far (live, dead or free) */
    size_t cap_slots;
    size_t nfree;
    size_t live;       /* pending events */
    size_t dead;       /* cancelled events whose entries are still queued */
    uint32_t next_seq;
    int64_t now_us;
    uint64_t gap16;    /* the gap between pops, averaged, in 1/16 us (front_keep, refill) */
    size_t bytes;      /* capacities of slots and buckets, in bytes */
    /* Peek cache: when min_valid, min_key is the smallest live key, it lies
     * in the lowest non-empty bucket, and all smaller keys there are dead.
     * Lets a pop right after a peek skip the search for the minimum.  Any
     * cancel or pop clears it; a smaller push lowers it. */
    uint64_t min_key;
    int min_valid;
};

static inline uint64_t key_of(int64_t time_us)
{
    return (uint64_t)time_us ^ KEY_SIGN;
}

static inline int64_t time_of(uint64_t key)
{
    return (int64_t)(key ^ KEY_SIGN);
}

static inline unsigned bucket_of(uint64_t key, uint64_t last)
{
    uint64_t d = key ^ last;
    return d ? 64u - (unsigned)__builtin_clzll(d) : 0u;
}

static inline evq_handle make_handle(uint32_t gen, uint32_t idx)
{
    return ((uint64_t)gen << 32) | ((uint64_t)idx + 1);
}

/* Room for `more` more entries in bk. */
static void __attribute__((noinline)) bucket_grow(struct evq *q, struct evq_bucket *bk, size_t more)
{
    size_t cap = bk->cap;
    bk->v = xgrow(bk->v, sizeof *bk->v, &bk->cap, bk->len + more);
    q->bytes += (bk->cap - cap) * sizeof *bk->v;
}

static inline void bucket_append(struct evq *q, struct evq_bucket *bk, const struct evq_entry *e)
{
    if (bk->len == bk->cap)
        bucket_grow(q, bk, 1);
    if (bk->len == 0 || e->key < bk->min)
        bk->min = e->key;
    bk->v[bk->len++] = *e;
}

static inline uint32_t slot_alloc(struct evq *q)
{
    if (q->nfree)
        return q->freel[--q->nfree];
    SIM_ASSERT(q->nslots < EVQ_SLOTS_MAX);
    if (q->nslots == q->cap_slots) {
        size_t cap = q->cap_slots;
        q->gen = xgrow(q->gen, sizeof *q->gen, &q->cap_slots, q->nslots + 1);
        q->freel = xrealloc(q->freel, q->cap_slots * sizeof *q->freel);
        q->bytes += (q->cap_slots - cap) * (sizeof *q->gen + sizeof *q->freel);
    }
    q->gen[q->nslots] = 0;
    return (uint32_t)q->nslots++;
}

static inline void slot_release(struct evq *q, uint32_t idx)
{
    q->freel[q->nfree++] = idx;
}

/* Drops a queued entry whose slot was cancelled. */
static inline void drop_dead(struct evq *q, uint32_t idx)
{
    SIM_ASSERT(!(q->gen[idx] & 1));
    SIM_ASSERT(q->dead > 0);
    q->dead--;
    slot_release(q, idx);
}

/* The generation of a pending event's handle, or NULL if h is not pending. */
static uint32_t *live_slot(const struct evq *q, evq_handle h)
{
    uint64_t lo = h & UINT32_MAX;
    if (lo == 0 || lo > q->nslots)
        return NULL;
    uint32_t *g = &q->gen[lo - 1];
    if (!(*g & 1) || *g != (uint32_t)(h >> 32))
        return NULL;
    return g;
}

static inline int slot_live(const struct evq *q, uint32_t idx)
{
    return q->gen[idx] & 1;
}

struct evq *evq_new(void)
{
    struct evq *q = xcalloc(1, sizeof *q);
    q->now_us = INT64_MIN;
    q->last = key_of(INT64_MIN);
    return q;
}

void evq_free(struct evq *q)
{
    if (!q)
        return;
    for (int i = 0; i < EVQ_NBUCKETS; i++)
        free(q->bk[i].v);
    free(q->gen);
    free(q->freel);
    free(q);
}

size_t evq_size(const struct evq *q)
{
    return q->live;
}

size_t evq_front_len(const struct evq *q)
{
    return q->bk[0].len - q->head0;
}

size_t evq_bytes(const struct evq *q)
{
    return q->bytes;
}

int64_t evq_now(const struct evq *q)
{
    return q->now_us;
}

/* An entry with a key no larger than last goes into the front at its place
 * in (key, seq) order: after every entry of its key or less (its seq is the
 * largest so far).  Usually that is the end; otherwise the shorter side of
 * the front moves by one entry. */
static void front_insert(struct evq *q, const struct evq_entry *ne)
{
    struct evq_bucket *b0 = &q->bk[0];
    uint64_t key = ne->key;
    if (b0->len == q->head0 || b0->v[b0->len - 1].key <= key) {
        bucket_append(q, b0, ne);
        return;
    }
    size_t lo = q->head0, hi = b0->len - 1; /* v[hi].key > key */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b0->v[mid].key <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    struct evq_entry e = *ne;
    if (q->head0 > 0 && lo - q->head0 < b0->len - lo) {
        memmove(&b0->v[q->head0 - 1], &b0->v[q->head0], (lo - q->head0) * sizeof e);
        q->head0--;
        b0->v[lo - 1] = e;
        return;
    }
    if (b0->len == b0->cap)
        bucket_grow(q, b0, 1);
    memmove(&b0->v[lo + 1], &b0->v[lo], (b0->len - lo) * sizeof e);
    b0->v[lo] = e;
    b0->len++;
}

evq_handle evq_push(struct evq *q, int64_t time_us, uint32_t kind, uint32_t a, uint64_t b)
{
    SIM_ASSERT(time_us >= q->now_us);
    uint32_t idx = slot_alloc(q);
    uint32_t g = ++q->gen[idx]; /* odd: pending */
    uint64_t key = key_of(time_us);
    struct evq_entry e = {.key = key, .b = b, .kind = kind, .a = a, .slot = idx, .seq = q->next_seq++};
    if (key <= q->last) {
        front_insert(q, &e);
        q->min_valid = 0; /* the cache speaks of the buckets only */
    } else {
        unsigned j = bucket_of(key, q->last);
        bucket_append(q, &q->bk[j], &e);
        q->mask |= UINT64_C(1) << (j - 1);
    }
    q->live++;
    if (q->min_valid && key < q->min_key)
        q->min_key = key;
    return make_handle(g, idx);
}

/* Removes every entry whose slot is dead, keeping each bucket's order.
 * O(entries); run when tombstones outnumber live events, so amortised O(1)
 * per cancel. */
static void sweep(struct evq *q)
{
    for (unsigned i = 0; i < EVQ_NBUCKETS; i++) {
        struct evq_bucket *bk = &q->bk[i];
        size_t from = i == 0 ? q->head0 : 0;
        size_t to = 0;
        for (size_t k = from; k < bk->len; k++) {
            struct evq_entry e = bk->v[k];
            if (slot_live(q, e.slot)) {
                if (to == 0 || e.key < bk->min)
                    bk->min = e.key;
                bk->v[to++] = e;
            } else {
                drop_dead(q, e.slot);
            }
        }
        bk->len = to;
        if (i == 0)
            q->head0 = 0;
        else if (to == 0)
            q->mask &= ~(UINT64_C(1) << (i - 1));
    }
    SIM_ASSERT(q->dead == 0);
}

/* Drops everything when no event is pending, and rebases on now_us. */
static void clear_dead(struct evq *q)
{
    SIM_ASSERT(q->live == 0);
    if (q->dead)
        sweep(q);
    q->last = key_of(q->now_us);
    q->min_valid = 0;
}

int evq_cancel(struct evq *q, evq_handle h)
{
    uint32_t *g = live_slot(q, h);
    if (!g)
        return 0;
    ++*g; /* even: its entry is a tombstone */
    q->live--;
    q->dead++;
    q->min_valid = 0;
    if (q->dead >= EVQ_SWEEP_MIN && q->dead > q->live)
        sweep(q);
    return 1;
}

/* Moves the lowest non-empty bucket, i, towards the front (needs mask !=
 * 0).  Its base: the cached live minimum when known (entries below it are
 * tombstones, dropped here), else the bucket's minimum, kept as entries
 * came in (so no pass is needed to find it).  A small bucket goes into the
 * front whole, sorted by key (stably: it is in seq order), and last becomes
 * its largest key; a larger one is spread around its minimum m, which
 * becomes last: the entries of key m go to the front, the others to the
 * buckets below i, which are all empty.  Either way every key in the front
 * stays at most last and every other one above it; and the buckets above i
 * stay right for the new last, which agrees with the old one above bit
 * i - 1. */
static void refill(struct evq *q)
{
    SIM_ASSERT(q->mask != 0);
    unsigned i = (unsigned)__builtin_ctzll(q->mask) + 1;
    struct evq_bucket *bk = &q->bk[i];
    struct evq_entry *v = bk->v;
    size_t n = bk->len;
    SIM_ASSERT(n > 0);
    uint64_t m = q->min_valid ? q->min_key : bk->min;
    SIM_ASSERT(bucket_of(m, q->last) == i);
    q->mask &= ~(UINT64_C(1) << (i - 1));
    bk->len = 0;
    if (n <= FRONT_PULL && i <= 63 && (UINT64_C(1) << (i - 1)) / n <= q->gap16 >> 3) {
        /* Every key here is above the front's, so each sorts in among the
         * ones moved before it only: an insertion from the end, where
         * front_insert's search of the whole front cost bench_evq's hold
         * model about 15 %. */
        struct evq_bucket *b0 = &q->bk[0];
        if (b0->cap < b0->len + n)
            bucket_grow(q, b0, n);
        size_t start = b0->len;
        uint64_t top = m;
        for (size_t k = 0; k < n; k++) {
            uint64_t key = v[k].key;
            if (key < m) {
                drop_dead(q, v[k].slot);
                continue;
            }
            size_t p = b0->len++;
            while (p > start && b0->v[p - 1].key > key) {
                b0->v[p] = b0->v[p - 1];
                p--;
            }
            b0->v[p] = v[k];
            if (key > top)
                top = key;
        }
        q->last = top;
        return;
    }
    q->last = m;
    uint64_t filled = 0;
    for (size_t k = 0; k < n; k++) {
        uint64_t key = v[k].key;
        if (key < m) {
            drop_dead(q, v[k].slot);
            continue;
        }
        unsigned j = bucket_of(key, m); /* < i, so the shift below is defined */
        bucket_append(q, &q->bk[j], &v[k]);
        filled |= UINT64_C(1) << j;
    }
    q->mask |= filled >> 1;
    SIM_ASSERT(filled & 1);
    /* A large bucket is given back once empty: bucket peaks come at
     * different times (the first spread empties all of bucket 64), and
     * keeping every one of them would hold several times the live size. */
    if (bk->cap >= EVQ_BUCKET_KEEP) {
        q->bytes -= bk->cap * sizeof *bk->v;
        free(bk->v);
        bk->v = NULL;
        bk->cap = 0;
    }
}

/* After a pop: the consumed head goes when the front is used up or long,
 * and the front is filled up to FRONT_AHEAD entries from the buckets. */
static inline void front_keep(struct evq *q)
{
    struct evq_bucket *b0 = &q->bk[0];
    if (q->head0 == b0->len) {
        q->head0 = b0->len = 0;
    } else if (q->head0 >= FRONT_COMPACT && 2 * q->head0 >= b0->len) {
        memmove(b0->v, b0->v + q->head0, (b0->len - q->head0) * sizeof *b0->v);
        b0->len -= q->head0;
        q->head0 = 0;
    }
    if (b0->len - q->head0 >= FRONT_AHEAD)
        return;
    uint64_t reach = key_of(q->now_us) + FRONT_SPAN * (q->gap16 >> 4);
    while (b0->len - q->head0 < FRONT_AHEAD && q->mask && q->bk[__builtin_ctzll(q->mask) + 1].min <= reach)
        refill(q);
}

int evq_pop(struct evq *q, struct evq_event *out)
{
    struct evq_bucket *b0 = &q->bk[0];
    if (q->live == 0) {
        clear_dead(q);
        return 0;
    }
    for (;;) {
        while (q->head0 < b0->len) {
            const struct evq_entry *e = &b0->v[q->head0++];
            if (!slot_live(q, e->slot)) {
                drop_dead(q, e->slot);
                continue;
            }
            out->time_us = time_of(e->key);
            out->seq = e->seq;
            out->kind = e->kind;
            out->a = e->a;
            out->b = e->b;
            q->gen[e->slot]++; /* even: no longer pending */
            slot_release(q, e->slot);
            q->live--;
            if (q->now_us != INT64_MIN) {
                /* gap += (this gap - gap) / 16, in sixteenths of a
                 * microsecond, with this gap at most 8 gaps + 64 us: one
                 * long pause grows it by half at most. */
                uint64_t d = (uint64_t)(out->time_us - q->now_us), cap = (q->gap16 >> 1) + 64;
                q->gap16 = q->gap16 - (q->gap16 >> 4) + (d < cap ? d : cap);
            }
            q->now_us = out->time_us;
            q->min_valid = 0;
            front_keep(q);
            return 1;
        }
        q->head0 = b0->len = 0;
        refill(q);
    }
}

/* The least `want` (1 or 2) entries among the first HINT_LOOK of a
 * non-empty bucket, in pop order; returns how many it found.  Right after
 * a spread a bucket is small, so a short look finds them (past HINT_LOOK
 * entries a hint may be wrong, never unsafe).  Entries of one key lie in
 * seq order, so the first of them pops first. */
static int bucket_least(const struct evq_bucket *bk, const struct evq_entry **out, int want)
{
    size_t len = bk->len < HINT_LOOK ? bk->len : HINT_LOOK;
    const struct evq_entry *first = &bk->v[0], *second = NULL;
    for (size_t j = 1; j < len; j++) {
        const struct evq_entry *x = &bk->v[j];
        if (x->key < first->key) {
            second = first;
            first = x;
        } else if (!second || x->key < second->key) {
            second = x;
        }
    }
    out[0] = first;
    if (want < 2 || !second)
        return 1;
    out[1] = second;
    return 2;
}

/* A hint of entry e: its payload, and a load of what its pop's liveness
 * check reads. */
static inline void name_entry(const struct evq *q, const struct evq_entry *e, struct evq_hint *h)
{
    sim_prefetch(&q->gen[e->slot]);
    *h = (struct evq_hint){e->kind, e->a, e->b};
}

int evq_hints(const struct evq *q, struct evq_hint *h, int n)
{
    const struct evq_entry *e[EVQ_HINTS];
    int k = 0;
    if (n > EVQ_HINTS)
        n = EVQ_HINTS;
    /* The front, in pop order; past it (before the first pop, or where
     * the next events lie further than the front reaches), the non-empty
     * buckets, lowest first (every key in one is below those above it). */
    const struct evq_bucket *b0 = &q->bk[0];
    for (size_t i = q->head0; i < b0->len && k < n; i++)
        e[k++] = &b0->v[i];
    for (uint64_t m = q->mask; k < n && m; m &= m - 1)
        k += bucket_least(&q->bk[__builtin_ctzll(m) + 1], e + k, n - k < 2 ? n - k : 2);
    for (int i = 0; i < k; i++)
        name_entry(q, e[i], &h[i]);
    return k;
}

int evq_hint_at(const struct evq *q, int k, struct evq_hint *h)
{
    const struct evq_bucket *b0 = &q->bk[0];
    if (k < 0 || k >= EVQ_HINTS || b0->len - q->head0 <= (size_t)k)
        return 0;
    name_entry(q, &b0->v[q->head0 + (size_t)k], h);
    return 1;
}

int64_t evq_peek_time(struct evq *q)
{
    if (q->live == 0) {
        clear_dead(q);
        return INT64_MAX;
    }
    struct evq_bucket *b0 = &q->bk[0];
    while (q->head0 < b0->len) {
        struct evq_entry e = b0->v[q->head0];
        if (slot_live(q, e.slot))
            return time_of(e.key);
        drop_dead(q, e.slot);
        q->head0++;
    }
    q->head0 = b0->len = 0;
    if (q->min_valid)
        return time_of(q->min_key);
    for (;;) {
        SIM_ASSERT(q->mask != 0);
        unsigned i = (unsigned)__builtin_ctzll(q->mask) + 1;
        struct evq_bucket *bk = &q->bk[i];
        uint64_t best = 0;
        int found = 0;
        for (size_t k = 0; k < bk->len; k++) {
            uint64_t key = bk->v[k].key;
            if ((!found || key < best) && slot_live(q, bk->v[k].slot)) {
                best = key;
                found = 1;
            }
        }
        if (found) {
            q->min_key = best;
            q->min_valid = 1;
            return time_of(best);
        }
        /* Only tombstones here: drop them and look one bucket up. */
        for (size_t k = 0; k < bk->len; k++)
            drop_dead(q, bk->v[k].slot);
        bk->len = 0;
        q->mask &= ~(UINT64_C(1) << (i - 1));
    }
}

#define CHECK(c)                                                                     \
    do {                                                                             \
        if (!(c)) {                                                                  \
            fprintf(stderr, "evq_check: %s:%d: invariant broken: %s\n", __FILE__,    \
                    __LINE__, #c);                                                   \
            goto fail;                                                               \
        }                                                                            \
    } while (0)

int evq_check(const struct evq *q)
{
    unsigned char *seen = xcalloc(q->nslots ? q->nslots : 1, 1);
    size_t nlive = 0, ndead = 0, nfree = 0, entries = 0;
    uint64_t live_min = 0;
    int have_live = 0;
    unsigned lowest = EVQ_NBUCKETS;

    CHECK(q->now_us == INT64_MIN || q->last >= key_of(q->now_us));
    CHECK(q->head0 <= q->bk[0].len);
    CHECK(q->nslots <= q->cap_slots);
    for (unsigned i = 0; i < EVQ_NBUCKETS; i++) {
        const struct evq_bucket *bk = &q->bk[i];
        size_t from = i == 0 ? q->head0 : 0;
        CHECK(bk->len <= bk->cap);
        if (i > 0)
            CHECK(((q->mask >> (i - 1)) & 1) == (bk->len > 0));
        if (bk->len > from && lowest == EVQ_NBUCKETS)
            lowest = i;
        uint32_t prev_seq = 0;
        uint64_t prev_key = 0;
        for (size_t k = from; k < bk->len; k++) {
            const struct evq_entry *e = &bk->v[k];
            if (i == 0) { /* the front: (key, seq) order, keys from now to last */
                CHECK(e->key <= q->last);
                CHECK(q->now_us == INT64_MIN || e->key >= key_of(q->now_us));
                CHECK(k == from || e->key >= prev_key);
            } else {
                CHECK(bucket_of(e->key, q->last) == i);
                CHECK(bk->min <= e->key);
            }
            CHECK(e->slot < q->nslots);
            CHECK(!seen[e->slot]);
            seen[e->slot] = 1;
            int live = slot_live(q, e->slot);
            CHECK((int32_t)(q->next_seq - e->seq) > 0); /* pushed before the next one */
            CHECK(k == from || (int32_t)(e->seq - prev_seq) > 0 || (i == 0 && e->key > prev_key));
            prev_seq = e->seq;
            prev_key = e->key;
            if (live && (!have_live || e->key < live_min)) {
                live_min = e->key;
                have_live = 1;
            }
            entries++;
        }
    }
    for (size_t k = 0; k < q->nslots; k++) {
        if (slot_live(q, (uint32_t)k)) {
            CHECK(seen[k]);
            nlive++;
        } else if (seen[k]) {
            ndead++;
        }
    }
    CHECK(q->nfree <= q->nslots);
    for (size_t k = 0; k < q->nfree; k++) {
        uint32_t f = q->freel[k];
        CHECK(f < q->nslots);
        CHECK(!seen[f]);
        seen[f] = 2;
        nfree++;
    }
    CHECK(nlive == q->live);
    CHECK(ndead == q->dead);
    CHECK(entries == nlive + ndead);
    CHECK(nlive + ndead + nfree == q->nslots);
    if (q->min_valid) { /* with no live entry in the front */
        CHECK(have_live);
        CHECK(q->min_key == live_min);
        CHECK(lowest == bucket_of(live_min, q->last));
    }
    free(seen);
    return 1;
fail:
    free(seen);
    return 0;
}
