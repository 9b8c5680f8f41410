/* checker_set.c: the checker's compact sets (checker_int.h).
 *
 * pset: sorted, disjoint progressions.  The common case, a value after the
 * last at the same spacing as before, extends the last progression in O(1);
 * any other value costs a binary search and, when it lands inside the
 * range of a progression it does not belong to, a split.
 *
 * idset: chunks of 2^16 ids in a sorted array (binary search, with the
 * chunk used last tried first); inside a chunk, a sorted array of 16-bit
 * offsets (an id after the last is an append) that turns into a bitmap
 * when it would outgrow one. */
#include "sim/checker_int.h"

#include <stdlib.h>
#include <string.h>

#include "sim/util.h"

/* ---- progressions ---------------------------------------------------------------- */

static int prog_has(const struct prog *p, int64_t x)
{
    if (x < p->lo || x > p->hi)
        return 0;
    return p->step == 0 ? x == p->lo : (x - p->lo) % p->step == 0;
}

/* The index of the last progression with lo <= x, or -1. */
static ptrdiff_t prog_find(const struct pset *s, int64_t x)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->v[mid].lo <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (ptrdiff_t)lo - 1;
}

static void prog_insert_at(struct pset *s, size_t pos, struct prog p, uint64_t *bytes)
{
    size_t cap = s->cap;
    s->v = xgrow(s->v, sizeof *s->v, &s->cap, s->n + 1);
    *bytes += (s->cap - cap) * sizeof *s->v;
    memmove(&s->v[pos + 1], &s->v[pos], (s->n - pos) * sizeof *s->v);
    s->v[pos] = p;
    s->n++;
}

/* x lies inside p's range without being one of its values: p becomes the
 * part before x, x a progression of its own, and the rest a third. */
static void prog_split(struct pset *s, size_t i, int64_t x, uint64_t *bytes)
{
    struct prog p = s->v[i];
    int64_t k = (x - p.lo) / p.step;
    int64_t before = p.lo + k * p.step, after = before + p.step;
    s->v[i].hi = before;
    if (before == p.lo)
        s->v[i].step = 0;
    prog_insert_at(s, i + 1, (struct prog){x, x, 0}, bytes);
    prog_insert_at(s, i + 2, (struct prog){after, p.hi, after == p.hi ? 0 : p.step}, bytes);
}

/* x extends p on the right when it comes next at p's spacing (or p is one
 * value: x sets the spacing). */
static int prog_extend(struct prog *p, int64_t x)
{
    if (x <= p->hi)
        return 0;
    if (p->step == 0) {
        p->step = x - p->lo;
        p->hi = x;
        return 1;
    }
    if (x - p->hi != p->step)
        return 0;
    p->hi = x;
    return 1;
}

/* Inserts into the progressions v[0..n), the tail being among them. */
static int pset_insert_array(struct pset *s, int64_t x, uint64_t *bytes)
{
    ptrdiff_t i = prog_find(s, x);
    if (i >= 0) {
        struct prog *p = &s->v[i];
        if (prog_has(p, x))
            return 1;
        if (x < p->hi) {
            prog_split(s, (size_t)i, x, bytes);
            return 0;
        }
        /* x is past p's range (and before the next progression): it joins
         * p when it comes next at p's spacing. */
        if (prog_extend(p, x))
            return 0;
    }
    prog_insert_at(s, (size_t)(i + 1), (struct prog){x, x, 0}, bytes);
    return 0;
}

int pset_insert(struct pset *s, int64_t x, uint64_t *bytes)
{
    if (!pset_has_tail(s)) {
        SIM_ASSERT(s->n == 0);
        s->tail = (struct prog){x, x, 0};
        return 0;
    }
    if (x > s->tail.hi) {
        /* After every value: the tail grows, or a new tail begins. */
        if (prog_extend(&s->tail, x))
            return 0;
        prog_insert_at(s, s->n, s->tail, bytes);
        s->tail = (struct prog){x, x, 0};
        return 0;
    }
    /* Anywhere else: over the whole array, the tail put back in it. */
    prog_insert_at(s, s->n, s->tail, bytes);
    int had = pset_insert_array(s, x, bytes);
    s->tail = s->v[--s->n];
    return had;
}

void pset_free(struct pset *s)
{
    free(s->v);
    *s = PSET_EMPTY;
}

/* ---- id sets ----------------------------------------------------------------------- */

#define CHUNK_BITS 16
#define CHUNK_ARRAY_MAX 4096       /* offsets; past this a bitmap (8 KiB) is smaller */
#define CHUNK_WORDS ((1u << CHUNK_BITS) / 16)

/* The index of the chunk for hi, or where it would go (*found = 0). */
static size_t chunk_find(const struct idset *s, uint64_t hi, int *found)
{
    if (s->last < s->n && s->c[s->last].hi == hi) {
        *found = 1;
        return s->last;
    }
    size_t lo = 0, up = s->n;
    while (lo < up) {
        size_t mid = lo + (up - lo) / 2;
        if (s->c[mid].hi < hi)
            lo = mid + 1;
        else
            up = mid;
    }
    *found = lo < s->n && s->c[lo].hi == hi;
    return lo;
}

static int bit_has(const uint16_t *map, uint16_t off) { return (map[off >> 4] >> (off & 15)) & 1; }

/* The position of off in a chunk's sorted array (or where it would go). */
static uint32_t low_find(const struct idchunk *ch, uint16_t off)
{
    if (ch->n && ch->low[ch->n - 1] < off)
        return ch->n;
    uint32_t lo = 0, hi = ch->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ch->low[mid] < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int idset_has(const struct idset *s, uint64_t id)
{
    int found;
    size_t i = chunk_find(s, id >> CHUNK_BITS, &found);
    if (!found)
        return 0;
    const struct idchunk *ch = &s->c[i];
    uint16_t off = (uint16_t)(id & ((1u << CHUNK_BITS) - 1));
    if (ch->cap == 0)
        return bit_has(ch->low, off);
    uint32_t k = low_find(ch, off);
    return k < ch->n && ch->low[k] == off;
}

/* A chunk whose array is full at CHUNK_ARRAY_MAX becomes a bitmap. */
static void chunk_to_bitmap(struct idchunk *ch, uint64_t *bytes)
{
    uint16_t *map = xcalloc(CHUNK_WORDS, sizeof *map);
    for (uint32_t i = 0; i < ch->n; i++)
        map[ch->low[i] >> 4] |= (uint16_t)(1u << (ch->low[i] & 15));
    *bytes -= (uint64_t)ch->cap * sizeof *ch->low;
    *bytes += CHUNK_WORDS * sizeof *map;
    free(ch->low);
    ch->low = map;
    ch->cap = 0;
}

void idset_add(struct idset *s, uint64_t id, uint64_t *bytes)
{
    int found;
    uint64_t hi = id >> CHUNK_BITS;
    size_t i = chunk_find(s, hi, &found);
    if (!found) {
        size_t cap = s->cap;
        s->c = xgrow(s->c, sizeof *s->c, &s->cap, s->n + 1);
        *bytes += (s->cap - cap) * sizeof *s->c;
        memmove(&s->c[i + 1], &s->c[i], (s->n - i) * sizeof *s->c);
        s->c[i] = (struct idchunk){.hi = hi};
        s->n++;
    }
    s->last = i;
    struct idchunk *ch = &s->c[i];
    uint16_t off = (uint16_t)(id & ((1u << CHUNK_BITS) - 1));
    if (ch->cap == 0 && ch->low) {
        ch->low[off >> 4] |= (uint16_t)(1u << (off & 15));
        ch->n++;
        return;
    }
    if (ch->n == CHUNK_ARRAY_MAX) {
        chunk_to_bitmap(ch, bytes);
        ch->low[off >> 4] |= (uint16_t)(1u << (off & 15));
        ch->n++;
        return;
    }
    uint32_t k = low_find(ch, off);
    SIM_ASSERT(k == ch->n || ch->low[k] != off);
    if (ch->n == ch->cap) {
        size_t cap = ch->cap;
        ch->low = xgrow(ch->low, sizeof *ch->low, &cap, (size_t)ch->n + 1);
        *bytes += (cap - ch->cap) * sizeof *ch->low;
        ch->cap = (uint32_t)cap;
    }
    memmove(&ch->low[k + 1], &ch->low[k], (ch->n - k) * sizeof *ch->low);
    ch->low[k] = off;
    ch->n++;
}

void idset_free(struct idset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->c[i].low);
    free(s->c);
    *s = (struct idset){0};
}
