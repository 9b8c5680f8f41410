/* idxset.c: a set of small indices, lowest first (idxset.h). */
#include "sim/idxset.h"

#include <stdlib.h>
#include <string.h>

#include "sim/util.h"

static uint32_t nwords(uint32_t n) { return (uint32_t)(((uint64_t)n + 63) / 64); }
static uint32_t nsum(uint32_t n) { return (nwords(n) + 63) / 64; }

void idxset_init(struct idxset *s, uint32_t n)
{
    s->n = n;
    s->count = 0;
    /* One word more than needed, so that an empty set of 0 indices still
     * has storage to read. */
    s->bits = xcalloc((size_t)nwords(n) + 1, sizeof *s->bits);
    s->sum = xcalloc((size_t)nsum(n) + 1, sizeof *s->sum);
}

void idxset_free(struct idxset *s)
{
    free(s->bits);
    free(s->sum);
    *s = (struct idxset){0};
}

void idxset_clear(struct idxset *s)
{
    memset(s->bits, 0, ((size_t)nwords(s->n) + 1) * sizeof *s->bits);
    memset(s->sum, 0, ((size_t)nsum(s->n) + 1) * sizeof *s->sum);
    s->count = 0;
}

uint32_t idxset_next(const struct idxset *s, uint32_t from)
{
    if (from >= s->n || s->count == 0)
        return IDXSET_NONE;
    uint32_t w = from >> 6;
    uint64_t m = s->bits[w] & (~UINT64_C(0) << (from & 63));
    if (m)
        return (w << 6) + (uint32_t)__builtin_ctzll(m);
    /* The next word with a member, through the summary. */
    uint32_t nw = nwords(s->n);
    for (uint32_t v = w + 1; v < nw;) {
        uint32_t si = v >> 6;
        uint64_t sm = s->sum[si] & (~UINT64_C(0) << (v & 63));
        if (sm) {
            uint32_t wi = (si << 6) + (uint32_t)__builtin_ctzll(sm);
            return (wi << 6) + (uint32_t)__builtin_ctzll(s->bits[wi]);
        }
        v = (si + 1) << 6;
    }
    return IDXSET_NONE;
}
