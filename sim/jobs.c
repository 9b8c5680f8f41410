/* jobs.c: see jobs.h.  O(log n) per update and per query, amortised. */
#include "sim/jobs.h"

#include <stdlib.h>
#include <string.h>

#include "sim/util.h"

const char *job_status_name(enum job_status s)
{
    switch (s) {
    case JOB_PENDING: return "pending";
    case JOB_RUNNING: return "running";
    case JOB_SLEEPING: return "sleeping";
    case JOB_COMPLETED: return "completed";
    case JOB_FAILED: return "failed";
    }
    return "?";
}

static int active(uint8_t st) { return st == JOB_PENDING || st == JOB_RUNNING || st == JOB_SLEEPING; }

static int ent_less(const struct job_ent *a, const struct job_ent *b)
{
    if (a->available_us != b->available_us)
        return a->available_us < b->available_us;
    return a->id < b->id;
}

static void *grow(struct jobtab *t, void *p, size_t elem, uint64_t *cap, uint64_t need)
{
    if (need <= *cap)
        return p;
    uint64_t c = *cap ? *cap * 2 : 64;
    while (c < need)
        c *= 2;
    *cap = c;
    return t->alloc(t->ctx, p, (size_t)c * elem);
}

static void sift_up(struct job_ent *h, uint64_t i)
{
    struct job_ent e = h[i];
    while (i > 0) {
        uint64_t p = (i - 1) / 2;
        if (!ent_less(&e, &h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

static void sift_down(struct job_ent *h, uint64_t n, uint64_t i)
{
    struct job_ent e = h[i];
    for (;;) {
        uint64_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && ent_less(&h[c + 1], &h[c]))
            c++;
        if (!ent_less(&h[c], &e))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = e;
}

static int stale(const struct jobtab *t, const struct job_ent *e)
{
    if (e->id < t->base)
        return 1; /* forgotten, so finished */
    const struct job *j = &t->rows[e->id - t->off];
    return !active(j->status) || j->version != e->version || j->available_us != e->available_us;
}

static void rebuild(struct jobtab *t)
{
    uint64_t k = 0;
    for (uint64_t i = 0; i < t->nheap; i++)
        if (!stale(t, &t->heap[i]))
            t->heap[k++] = t->heap[i];
    t->nheap = k;
    for (uint64_t i = k / 2; i-- > 0;)
        sift_down(t->heap, t->nheap, i);
}

static void index_row(struct jobtab *t, uint64_t id)
{
    const struct job *j = &t->rows[id - t->off];
    if (!active(j->status))
        return;
    if (t->nheap > 64 && t->nheap > 2 * t->live)
        rebuild(t);
    t->heap = grow(t, t->heap, sizeof *t->heap, &t->heap_cap, t->nheap + 1);
    t->heap[t->nheap] = (struct job_ent){j->available_us, id, j->version};
    sift_up(t->heap, t->nheap++);
}

void *jobs_heap_realloc(void *ctx, void *p, size_t n)
{
    (void)ctx;
    if (n == 0) {
        free(p);
        return NULL;
    }
    return xrealloc(p, n);
}

void jobs_init(struct jobtab *t, jobs_realloc_fn alloc, void *ctx)
{
    *t = (struct jobtab){.alloc = alloc, .ctx = ctx};
}

void jobs_free(struct jobtab *t)
{
    if (t->rows)
        t->alloc(t->ctx, t->rows, 0);
    if (t->heap)
        t->alloc(t->ctx, t->heap, 0);
    t->rows = NULL;
    t->heap = NULL;
}

uint64_t jobs_add(struct jobtab *t, const struct job *j)
{
    t->rows = grow(t, t->rows, sizeof *t->rows, &t->cap, t->n - t->off + 1);
    uint64_t id = t->n++;
    t->rows[id - t->off] = *j;
    t->rows[id - t->off].version = 0;
    if (active(j->status))
        t->live++;
    index_row(t, id);
    return id;
}

struct job *jobs_get(struct jobtab *t, uint64_t id)
{
    SIM_ASSERT(id < t->n);
    SIM_ASSERT(id >= t->base); /* not forgotten */
    return &t->rows[id - t->off];
}

void jobs_forget_below(struct jobtab *t, uint64_t id)
{
    SIM_ASSERT(id <= t->n);
    if (id <= t->base)
        return;
    for (uint64_t k = t->base; k < id; k++)
        SIM_ASSERT(!active(t->rows[k - t->off].status));
    t->base = id;
    /* Moved down once the forgotten rows are most of the array, so that
     * each row is moved O(1) times. */
    uint64_t dead = t->base - t->off, left = t->n - t->base;
    if (dead < 64 || dead < left)
        return;
    memmove(t->rows, t->rows + dead, (size_t)left * sizeof *t->rows);
    t->off = t->base;
    if (t->cap > 128 && left * 4 < t->cap) {
        t->cap /= 2;
        t->rows = t->alloc(t->ctx, t->rows, (size_t)t->cap * sizeof *t->rows);
    }
}

void jobs_update(struct jobtab *t, uint64_t id, enum job_status st, int64_t available_us)
{
    SIM_ASSERT(id < t->n);
    SIM_ASSERT(id >= t->base);
    struct job *j = &t->rows[id - t->off];
    t->live += (uint64_t)active((uint8_t)st) - (uint64_t)active(j->status);
    j->status = (uint8_t)st;
    j->available_us = available_us;
    j->version++;
    index_row(t, id);
}

static void drop_stale_top(struct jobtab *t)
{
    while (t->nheap && stale(t, &t->heap[0])) {
        t->heap[0] = t->heap[--t->nheap];
        if (t->nheap)
            sift_down(t->heap, t->nheap, 0);
    }
}

uint64_t jobs_peek(struct jobtab *t, int64_t *available_us)
{
    drop_stale_top(t);
    if (!t->nheap)
        return UINT64_MAX;
    if (available_us)
        *available_us = t->heap[0].available_us;
    return t->heap[0].id;
}

uint64_t jobs_next_due(struct jobtab *t, int64_t now_us)
{
    int64_t at;
    uint64_t id = jobs_peek(t, &at);
    return id != UINT64_MAX && at <= now_us ? id : UINT64_MAX;
}

int jobs_check(const struct jobtab *t)
{
    uint64_t live = 0;
    for (uint64_t i = t->base; i < t->n; i++)
        live += (uint64_t)active(t->rows[i - t->off].status);
    if (live != t->live)
        return 0;
    for (uint64_t i = 1; i < t->nheap; i++)
        if (ent_less(&t->heap[i], &t->heap[(i - 1) / 2]))
            return 0;
    /* every active row has a current entry */
    for (uint64_t i = t->base; i < t->n; i++) {
        if (!active(t->rows[i - t->off].status))
            continue;
        int found = 0;
        for (uint64_t k = 0; k < t->nheap && !found; k++)
            found = t->heap[k].id == i && !stale(t, &t->heap[k]);
        if (!found)
            return 0;
    }
    return 1;
}
