/* idxset.c: a set of small indices, lowest first (idxset.h). */
#include "sim/idxset.h"

#include <stdlib.h>
#include <string.h>

#include "sim/util.h"

void idxset_init(struct idxset *s, uint32_t n)
{
    *s = (struct idxset){.n = n};
    uint64_t words = n;
    do {
        SIM_ASSERT(s->nlv < IDXSET_LEVELS);
        words = (words + 63) / 64;
        if (words == 0)
            words = 1; /* an empty range still has a top word to read */
        s->nw[s->nlv] = (uint32_t)words;
        s->w[s->nlv++] = xcalloc(words, sizeof(uint64_t));
    } while (words > 1);
}

void idxset_free(struct idxset *s)
{
    for (uint32_t l = 0; l < s->nlv; l++)
        free(s->w[l]);
    *s = (struct idxset){0};
}

void idxset_clear(struct idxset *s)
{
    for (uint32_t l = 0; l < s->nlv; l++)
        memset(s->w[l], 0, (size_t)s->nw[l] * sizeof(uint64_t));
    s->count = 0;
}

void idxset_add(struct idxset *s, uint32_t i)
{
    SIM_ASSERT(i < s->n);
    if (idxset_has(s, i))
        return;
    s->count++;
    for (uint32_t l = 0; l < s->nlv; l++, i >>= 6) {
        uint64_t *word = &s->w[l][i >> 6], was = *word;
        *word = was | UINT64_C(1) << (i & 63);
        if (was)
            return; /* the levels above knew of this word */
    }
}

void idxset_del(struct idxset *s, uint32_t i)
{
    SIM_ASSERT(i < s->n);
    if (!idxset_has(s, i))
        return;
    s->count--;
    for (uint32_t l = 0; l < s->nlv; l++, i >>= 6) {
        uint64_t *word = &s->w[l][i >> 6];
        *word &= ~(UINT64_C(1) << (i & 63));
        if (*word)
            return; /* the word still has members: the levels above keep their bit */
    }
}

/* Up the levels to the first word with a member at or after the position,
 * then down its lowest bits. */
uint32_t idxset_next(const struct idxset *s, uint32_t from)
{
    if (from >= s->n || s->count == 0)
        return IDXSET_NONE;
    uint64_t i = from;
    uint32_t l = 0;
    for (;; l++) {
        if (l == s->nlv || i >> 6 >= s->nw[l])
            return IDXSET_NONE;
        uint64_t bits = s->w[l][i >> 6] & (UINT64_MAX << (i & 63));
        if (bits) {
            i = (i & ~UINT64_C(63)) | (uint64_t)__builtin_ctzll(bits);
            break;
        }
        i = (i >> 6) + 1; /* the next word of level l: a bit of level l + 1 */
    }
    while (l-- > 0) {
        SIM_ASSERT(s->w[l][i] != 0); /* a summary bit stands for a word with members */
        i = i << 6 | (uint64_t)__builtin_ctzll(s->w[l][i]);
    }
    return (uint32_t)i;
}
