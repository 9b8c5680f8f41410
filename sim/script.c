/* script.c: see script.h. */
#include "sim/script.h"

#include <stdlib.h>

#include "sim/util.h"

int64_t script_digest_due(const struct scenario *s, int digest_min, int64_t publish_us)
{
    /* The first local digest time at or after the publish, at second
     * resolution: round the publish up to a whole second. */
    int64_t sec = (publish_us + US_PER_S - 1) / US_PER_S;
    int64_t t = cal_tod_next(digest_min, s->zone, s->start_utc_s + sec - 1);
    if (t == INT64_MAX)
        return SIM_NEVER;
    return (t - s->start_utc_s) * US_PER_S;
}

/* The instant each item becomes takeable for WINDOW and DIGEST, which is
 * non-decreasing in publish order. */
static int64_t item_due(const struct script *sc, const struct scenario *s, const struct script_item *it)
{
    if (sc->kind == SCRIPT_WINDOW)
        return it->publish_us + sc->window_us;
    return script_digest_due(s, sc->digest_min, it->publish_us);
}

struct corr_ent {
    uint32_t key;
    uint32_t idx;
};

static int corr_cmp(const void *a, const void *b)
{
    const struct corr_ent *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* CORRELATE: pairs (a, b) with equal keys, matched in publish order per key.
 * Marks taken items in mark[] and returns the number of pairs. */
static uint32_t correlate(const struct script *sc, const struct script_item *items, uint32_t n, uint8_t *mark,
                          uint32_t max_pairs)
{
    struct corr_ent *as = xmalloc(sizeof *as * (n ? n : 1)), *bs = xmalloc(sizeof *bs * (n ? n : 1));
    uint32_t na = 0, nb = 0, pairs = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (items[i].topic == sc->corr_a)
            as[na++] = (struct corr_ent){items[i].key, i};
        else if (items[i].topic == sc->corr_b)
            bs[nb++] = (struct corr_ent){items[i].key, i};
    }
    qsort(as, na, sizeof *as, corr_cmp);
    qsort(bs, nb, sizeof *bs, corr_cmp);
    uint32_t i = 0, j = 0;
    while (i < na && j < nb && (!max_pairs || pairs < max_pairs)) {
        if (as[i].key < bs[j].key) {
            i++;
        } else if (as[i].key > bs[j].key) {
            j++;
        } else {
            mark[as[i].idx] = 1;
            mark[bs[j].idx] = 1;
            pairs++;
            i++;
            j++;
        }
    }
    free(as);
    free(bs);
    return pairs;
}

uint32_t script_eval(const struct script *sc, const struct scenario *s, const struct script_item *items,
                     uint32_t n, int64_t now_us, uint32_t max_take, uint32_t *take, int64_t *wake_us)
{
    uint32_t nt = 0;
    *wake_us = SIM_NEVER;
    if (n == 0)
        return 0;
    switch (sc->kind) {
    case SCRIPT_FIFO:
        for (uint32_t i = 0; i < n && (!max_take || nt < max_take); i++)
            take[nt++] = i;
        return nt;
    case SCRIPT_BATCH:
        if (n >= sc->batch_n || items[0].publish_us + sc->batch_us <= now_us) {
            for (uint32_t i = 0; i < n && (!max_take || nt < max_take); i++)
                take[nt++] = i;
        }
        if (nt < n)
            *wake_us = items[nt].publish_us + sc->batch_us > now_us ? items[nt].publish_us + sc->batch_us
                                                                     : now_us + 1;
        return nt;
    case SCRIPT_WINDOW:
    case SCRIPT_DIGEST: {
        uint32_t i = 0;
        for (; i < n && (!max_take || nt < max_take); i++) {
            int64_t due = item_due(sc, s, &items[i]);
            if (due > now_us) {
                *wake_us = due;
                return nt;
            }
            take[nt++] = i;
        }
        if (i < n) /* stopped by max_take with due items left */
            *wake_us = now_us + 1 > item_due(sc, s, &items[i]) ? now_us + 1 : item_due(sc, s, &items[i]);
        return nt;
    }
    case SCRIPT_CORRELATE: {
        uint8_t *mark = xcalloc(n, 1);
        uint32_t max_pairs = max_take ? (max_take + 1) / 2 : 0;
        correlate(sc, items, n, mark, max_pairs);
        for (uint32_t i = 0; i < n; i++)
            if (mark[i])
                take[nt++] = i;
        free(mark);
        return nt;
    }
    }
    return 0;
}

uint32_t script_needs(const struct script *sc, uint32_t max_take)
{
    /* script_eval reads the max_take it may take and the one after (the
     * wake), BATCH also the batch_n that tell whether the batch is full. */
    if (sc->kind == SCRIPT_CORRELATE || max_take == 0)
        return UINT32_MAX;
    uint64_t k = max_take;
    if (sc->kind == SCRIPT_BATCH && sc->batch_n > k)
        k = sc->batch_n;
    return k + 1 < UINT32_MAX ? (uint32_t)(k + 1) : UINT32_MAX;
}

int script_enough(const struct script *sc, const struct scenario *s, const struct script_item *items, uint32_t n,
                  int64_t now_us)
{
    /* The items' due instants do not decrease (item_due): script_eval
     * returns at the first that is later than now, at or before n - 1. */
    if (n == 0 || (sc->kind != SCRIPT_WINDOW && sc->kind != SCRIPT_DIGEST))
        return 0;
    return item_due(sc, s, &items[n - 1]) > now_us;
}

uint32_t script_due_needs(const struct script *sc)
{
    return sc->kind == SCRIPT_CORRELATE ? UINT32_MAX : 1;
}

int64_t script_due(const struct script *sc, const struct scenario *s, const struct script_item *items,
                   uint32_t n, uint32_t npending, int64_t now_us)
{
    if (n == 0 || npending == 0)
        return SIM_NEVER;
    switch (sc->kind) {
    case SCRIPT_FIFO:
        return now_us;
    case SCRIPT_BATCH:
        if (npending >= sc->batch_n)
            return now_us;
        return items[0].publish_us + sc->batch_us > now_us ? items[0].publish_us + sc->batch_us : now_us;
    case SCRIPT_WINDOW:
    case SCRIPT_DIGEST: {
        int64_t due = item_due(sc, s, &items[0]);
        return due > now_us ? due : now_us;
    }
    case SCRIPT_CORRELATE: {
        uint8_t *mark = xcalloc(n, 1);
        uint32_t pairs = correlate(sc, items, n, mark, 1);
        free(mark);
        return pairs ? now_us : SIM_NEVER;
    }
    }
    return SIM_NEVER;
}
