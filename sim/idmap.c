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
