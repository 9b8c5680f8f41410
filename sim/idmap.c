/* idmap.c: the id -> slot map (see idmap.h).
 *
 * Invariant: every entry lies on the probe path from its home bucket with no
 * empty bucket in between; deletion shifts later entries back to keep it. */
#include "sim/idmap.h"

#include <stdlib.h>

#include "sim/util.h"

/* Maps up to this many buckets (1 MiB) never shrink: a live set that comes
 * and goes in waves (a fleet's producers all firing at once) would
 * otherwise resize the map at every wave. */
#define IDMAP_SHRINK_CAP 65536

void idmap_init(struct idmap *m)
{
    *m = (struct idmap){0};
}

void idmap_free(struct idmap *m)
{
    free(m->v);
    *m = (struct idmap){0};
}

static void resize(struct idmap *m, size_t cap)
{
    struct idmap_ent *old = m->v;
    size_t ocap = m->cap;
    unsigned lg = 0;
    while (((size_t)1 << lg) < cap)
        lg++;
    m->v = xcalloc(cap, sizeof *m->v);
    m->cap = cap;
    m->shift = 64 - lg;
    size_t mask = cap - 1;
    for (size_t i = 0; i < ocap; i++) {
        if (!old[i].key)
            continue;
        size_t j = idmap__home(m, old[i].key);
        while (m->v[j].key)
            j = (j + 1) & mask;
        m->v[j] = old[i];
    }
    free(old);
}

void idmap_put(struct idmap *m, uint64_t id, uint32_t val)
{
    SIM_ASSERT(id != UINT64_MAX);
    if ((m->n + 1) * 2 > m->cap)
        resize(m, m->cap ? m->cap * 2 : IDMAP_MIN_CAP);
    uint64_t key = id + 1;
    size_t mask = m->cap - 1;
    size_t i = idmap__home(m, key);
    while (m->v[i].key) {
        SIM_ASSERT(m->v[i].key != key); /* each id once */
        i = (i + 1) & mask;
    }
    m->v[i] = (struct idmap_ent){.key = key, .val = val};
    m->n++;
}

void idmap_del(struct idmap *m, uint64_t id)
{
    SIM_ASSERT(m->n > 0);
    uint64_t key = id + 1;
    size_t mask = m->cap - 1;
    size_t i = idmap__home(m, key);
    while (m->v[i].key != key) {
        SIM_ASSERT(m->v[i].key != 0); /* the id is in the map */
        i = (i + 1) & mask;
    }
    m->v[i].key = 0;
    for (size_t j = (i + 1) & mask; m->v[j].key; j = (j + 1) & mask) {
        size_t k = idmap__home(m, m->v[j].key);
        int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (stays)
            continue;
        m->v[i] = m->v[j];
        m->v[j].key = 0;
        i = j;
    }
    m->n--;
    if (m->cap > IDMAP_SHRINK_CAP && m->n * 8 < m->cap)
        resize(m, m->cap / 2);
}

/* ---- idwin ---------------------------------------------------------------------- */

#define IDWIN_MIN_CAP 256
/* Rings larger than this (256 KiB) shrink by half when a slide finds them
 * less than a sixteenth full, so that a burst's window does not stay. */
#define IDWIN_SHRINK_CAP 65536

void idwin_init(struct idwin *w)
{
    *w = (struct idwin){0};
    idmap_init(&w->old);
}

void idwin_free(struct idwin *w)
{
    free(w->ring);
    idmap_free(&w->old);
    *w = (struct idwin){0};
}

/* A ring of cap entries holding the window's ids at the same offsets.  A
 * smaller ring keeps the window's first cap ids: the caller has slid every
 * live id into them. */
static void win_resize(struct idwin *w, size_t cap)
{
    uint32_t *ring = xmalloc(cap * sizeof *ring);
    for (size_t i = 0; i < cap; i++)
        ring[i] = IDMAP_NONE;
    size_t keep = cap < w->cap ? cap : w->cap;
    for (size_t k = 0; k < keep; k++) {
        uint64_t id = w->lo + k;
        ring[id & (cap - 1)] = w->ring[id & (w->cap - 1)];
    }
    free(w->ring);
    w->ring = ring;
    w->cap = cap;
}

/* Slides the window to start at lo: the live ids it leaves go to the idmap. */
static void win_slide(struct idwin *w, uint64_t lo)
{
    uint64_t end = lo - w->lo < w->cap ? lo : w->lo + w->cap;
    for (uint64_t id = w->lo; id < end && w->nring; id++) {
        uint32_t *e = &w->ring[id & (w->cap - 1)];
        if (*e == IDMAP_NONE)
            continue;
        idmap_put(&w->old, id, *e);
        *e = IDMAP_NONE;
        w->nring--;
    }
    w->lo = lo;
}

void idwin_put(struct idwin *w, uint64_t id, uint32_t val)
{
    SIM_ASSERT(val != IDMAP_NONE);
    if (w->cap == 0) {
        w->lo = id;
        win_resize(w, IDWIN_MIN_CAP);
    }
    if (id < w->lo) {
        idmap_put(&w->old, id, val);
        return;
    }
    while (id - w->lo >= w->cap) {
        if (w->nring * 4 >= w->cap) {
            win_resize(w, w->cap * 2);
            continue;
        }
        /* Every id in the ring is below id: keep the half of the window
         * before it, or a quarter when the ring shrinks to half. */
        int shrink = w->cap > IDWIN_SHRINK_CAP && w->nring * 16 < w->cap;
        win_slide(w, id - (shrink ? w->cap / 4 : w->cap / 2));
        if (shrink)
            win_resize(w, w->cap / 2);
    }
    uint32_t *e = &w->ring[id & (w->cap - 1)];
    SIM_ASSERT(*e == IDMAP_NONE); /* each id once */
    *e = val;
    w->nring++;
}

void idwin_del(struct idwin *w, uint64_t id)
{
    if (id < w->lo) {
        idmap_del(&w->old, id);
        return;
    }
    SIM_ASSERT(id - w->lo < w->cap);
    uint32_t *e = &w->ring[id & (w->cap - 1)];
    SIM_ASSERT(*e != IDMAP_NONE); /* the id is in the map */
    *e = IDMAP_NONE;
    w->nring--;
}
