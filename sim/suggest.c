/* suggest.c: the closest valid name to a misspelt one (see suggest.h).
 *
 * The distance is computed with three rows of the usual dynamic program
 * (the third for adjacent swaps), on the stack: both strings are bounded by
 * SUGGEST_MAX_LEN. */
#include "sim/suggest.h"

#include <stdio.h>
#include <string.h>

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int min3(int a, int b, int c)
{
    int m = a < b ? a : b;
    return m < c ? m : c;
}

int suggest_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN)
        return SUGGEST_MAX_LEN + 1;
    int prev2[SUGGEST_MAX_LEN + 1], prev[SUGGEST_MAX_LEN + 1], cur[SUGGEST_MAX_LEN + 1];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int same = lower((unsigned char)a[i - 1]) == lower((unsigned char)b[j - 1]);
            cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1));
            if (i > 1 && j > 1 && lower((unsigned char)a[i - 1]) == lower((unsigned char)b[j - 2]) &&
                lower((unsigned char)a[i - 2]) == lower((unsigned char)b[j - 1]) && prev2[j - 2] + 1 < cur[j])
                cur[j] = prev2[j - 2] + 1;
        }
        memcpy(prev2, prev, (lb + 1) * sizeof prev[0]);
        memcpy(prev, cur, (lb + 1) * sizeof cur[0]);
    }
    return prev[lb];
}

void suggest_init(struct suggest *s, const char *word)
{
    size_t len = strlen(word);
    s->word = word;
    s->best = NULL;
    s->dist = SUGGEST_MAX_LEN + 1;
    s->limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
    if ((size_t)s->limit >= len)
        s->limit = len > 0 ? (int)len - 1 : 0;
}

void suggest_add(struct suggest *s, const char *cand)
{
    if (!cand || !cand[0] || !strcmp(cand, s->word))
        return;
    int d = suggest_distance(s->word, cand);
    if (d == 0)
        d = 1; /* they differ in case only */
    if (d > s->limit || d >= s->dist)
        return;
    s->best = cand;
    s->dist = d;
}

const char *suggest_result(const struct suggest *s)
{
    return s->best;
}

void suggest_append(const struct suggest *s, char *msg, size_t n)
{
    if (!s->best || !msg || n == 0)
        return;
    size_t used = strnlen(msg, n);
    if (used + strlen(s->best) + sizeof SUGGEST_FMT >= n)
        return;
    snprintf(msg + used, n - used, SUGGEST_FMT, s->best);
}
