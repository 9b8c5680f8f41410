/* jobs.c: see jobs.h.  O(1) row lookup through the page directory;
 * O(log n) per update and per query of the index, amortised.
 *
 * Key invariant: page k (ids [k * JOBS_PAGE, (k + 1) * JOBS_PAGE)) is in the
 * directory while any of its added rows is kept, or while it is the page
 * being filled; its header counts its kept rows; a forgotten row's status
 * is ROW_FORGOTTEN.  Every kept active row is in the lane (flag `lane`,
 * id >= lane_head, times nondecreasing along the lane in id order) or has
 * a live entry in the heap or a queue (not in the lane too).  Each queue is
 * sorted by (available_us, id), strictly. */
#include "sim/jobs.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim/util.h"

#define ROW_FORGOTTEN 0xff
#define PAGE_MASK ((uint64_t)JOBS_PAGE - 1)

struct page_hdr {
    uint64_t kept;                 /* rows of the page added and not forgotten */
};

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

/* --- pages ------------------------------------------------------------------ */

static size_t page_bytes(const struct jobtab *t)
{
    return sizeof(struct page_hdr) + (size_t)JOBS_PAGE * (sizeof(struct job) + t->extra);
}

static void *page_of(const struct jobtab *t, uint64_t pg)
{
    if (pg < t->dir_base || pg - t->dir_base >= t->ndir)
        return NULL;
    return t->dir[pg - t->dir_base];
}

static struct job *row_in(void *page, uint64_t id)
{
    return (struct job *)((char *)page + sizeof(struct page_hdr)) + (id & PAGE_MASK);
}

static void *extra_in(const struct jobtab *t, void *page, uint64_t id)
{
    char *extras = (char *)page + sizeof(struct page_hdr) + (size_t)JOBS_PAGE * sizeof(struct job);
    return extras + (id & PAGE_MASK) * t->extra;
}

static struct job *find(const struct jobtab *t, uint64_t id)
{
    if (id < t->base || id >= t->n)
        return NULL;
    void *page = page_of(t, id >> JOBS_PAGE_SHIFT);
    if (!page)
        return NULL;
    struct job *r = row_in(page, id);
    return r->status == ROW_FORGOTTEN ? NULL : r;
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

static void *page_new(struct jobtab *t)
{
    void *page = t->spare;
    if (page) {
        t->spare = NULL;
    } else {
        page = t->alloc(t->ctx, NULL, page_bytes(t));
        t->pages++;
    }
    ((struct page_hdr *)page)->kept = 0;
    t->dir = grow(t, t->dir, sizeof *t->dir, &t->dir_cap, t->ndir + 1);
    SIM_ASSERT(t->dir_base + t->ndir == t->n >> JOBS_PAGE_SHIFT);
    t->dir[t->ndir++] = page;
    return page;
}

/* The directory drops the freed pages at its front: moved down once they
 * are most of it, so that each entry moves O(1) times. */
static void drop_front(struct jobtab *t)
{
    while (t->dir_lead < t->ndir && !t->dir[t->dir_lead])
        t->dir_lead++;
    uint64_t first = (t->dir_base + t->dir_lead) << JOBS_PAGE_SHIFT;
    if (first > t->base)
        t->base = first;
    uint64_t dead = t->dir_lead, left = t->ndir - dead;
    if (dead < 64 || dead < left)
        return;
    memmove(t->dir, t->dir + dead, (size_t)left * sizeof *t->dir);
    t->dir_base += dead;
    t->ndir = left;
    t->dir_lead = 0;
    if (t->dir_cap > 128 && left * 4 < t->dir_cap) {
        t->dir_cap /= 2;
        t->dir = t->alloc(t->ctx, t->dir, (size_t)t->dir_cap * sizeof *t->dir);
    }
}

/* Page pg has every row added and forgotten: it goes (one is kept spare,
 * so that a table whose rows come and go allocates nothing). */
static void page_free(struct jobtab *t, uint64_t pg)
{
    uint64_t i = pg - t->dir_base;
    void *page = t->dir[i];
    t->dir[i] = NULL;
    if (!t->spare) {
        t->spare = page;
    } else {
        t->alloc(t->ctx, page, 0);
        t->pages--;
    }
    drop_front(t);
}

/* --- the index ----------------------------------------------------------------- */

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

/* A large heap's lower levels are not cached: each level down starts
 * loading the one below it (the four grandchildren, two cache lines at
 * most), so that the levels' misses overlap. */
static void sift_down(struct job_ent *h, uint64_t n, uint64_t i)
{
    struct job_ent e = h[i];
    for (;;) {
        uint64_t c = 2 * i + 1;
        if (c >= n)
            break;
        uint64_t g = 2 * c + 1;
        if (g < n) {
            sim_prefetch(&h[g]);
            sim_prefetch(&h[g + 3 < n ? g + 3 : n - 1]);
        }
        if (c + 1 < n && ent_less(&h[c + 1], &h[c]))
            c++;
        if (!ent_less(&h[c], &e))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = e;
}

/* The index gives back memory once it is a quarter full (halving it), so
 * that it follows the rows in play after a backlog drains. */
static void shrink_heap(struct jobtab *t)
{
    if (t->heap_cap <= 256 || t->nheap * 4 >= t->heap_cap)
        return;
    while (t->heap_cap > 256 && t->nheap * 4 < t->heap_cap)
        t->heap_cap /= 2;
    t->heap = t->alloc(t->ctx, t->heap, (size_t)t->heap_cap * sizeof *t->heap);
}

static int stale(const struct jobtab *t, const struct job_ent *e)
{
    const struct job *j = find(t, e->id);
    return !j || !active(j->status) || j->available_us != e->available_us;
}

/* --- the sorted queues ---------------------------------------------------- */

/* Rows whose entries are this far behind a queue's front start loading
 * when the front moves on, so that the query reaching them reads them from
 * cache. */
#define FIFO_AHEAD 8

static struct job_ent *fifo_at(const struct job_fifo *f, uint64_t i) { return &f->e[i & (f->cap - 1)]; }

/* A queue's ring takes cap entries, moved to the front of a new array. */
static void fifo_resize(struct jobtab *t, struct job_fifo *f, uint64_t cap)
{
    struct job_ent *e = cap ? t->alloc(t->ctx, NULL, (size_t)cap * sizeof *e) : NULL;
    for (uint64_t i = f->head; i < f->tail; i++)
        e[i - f->head] = *fifo_at(f, i);
    if (f->e)
        t->alloc(t->ctx, f->e, 0);
    f->tail -= f->head;
    f->head = 0;
    f->e = e;
    f->cap = cap;
}

/* A queue gives back memory once it is a quarter full (an empty one holds
 * none), so that it follows the entries in play. */
static void fifo_shrink(struct jobtab *t, struct job_fifo *f)
{
    uint64_t n = f->tail - f->head;
    if (n == 0 && f->cap > 64) {
        fifo_resize(t, f, 0);
        return;
    }
    if (f->cap <= 256 || n * 4 >= f->cap)
        return;
    uint64_t cap = f->cap;
    while (cap > 256 && n * 4 < cap)
        cap /= 2;
    fifo_resize(t, f, cap);
}

static void fifo_push(struct jobtab *t, struct job_fifo *f, const struct job_ent *e)
{
    if (f->tail - f->head == f->cap)
        fifo_resize(t, f, f->cap ? f->cap * 2 : 64);
    *fifo_at(f, f->tail++) = *e;
    f->last = *e;
    t->nfifo++;
}

/* The queue entry e joins: the one whose last entry is the greatest below
 * e, else an empty one; -1 when none takes it (it goes to the heap). */
static int fifo_pick(const struct jobtab *t, const struct job_ent *e)
{
    int best = -1, empty = -1;
    for (int q = 0; q < JOBS_FIFOS; q++) {
        const struct job_fifo *f = &t->fifo[q];
        if (f->tail == f->head) {
            if (empty < 0)
                empty = q;
        } else if (ent_less(&f->last, e) && (best < 0 || ent_less(&t->fifo[best].last, &f->last))) {
            best = q;
        }
    }
    return best >= 0 ? best : empty;
}

void jobs_prefetch(const struct jobtab *t, uint64_t id)
{
    if (id < t->base || id >= t->n)
        return;
    void *page = page_of(t, id >> JOBS_PAGE_SHIFT);
    if (page) {
        const char *r = (const char *)row_in(page, id);
        sim_prefetch(r + offsetof(struct job, status));
        sim_prefetch(r + offsetof(struct job, available_us) + sizeof(int64_t) - 1);
        if (t->extra) { /* the policy's side data of the row, in its own array */
            const char *x = extra_in(t, page, id);
            sim_prefetch(x);
            sim_prefetch(x + t->extra - 1);
        }
    }
}

/* Drops a queue's stale front entries; the rows further on start loading. */
static void fifo_drop_stale(struct jobtab *t, struct job_fifo *f)
{
    int dropped = 0;
    while (f->head != f->tail && stale(t, fifo_at(f, f->head))) {
        f->head++;
        t->nfifo--;
        dropped = 1;
        if (f->tail - f->head > FIFO_AHEAD)
            jobs_prefetch(t, fifo_at(f, f->head + FIFO_AHEAD)->id);
    }
    if (dropped)
        fifo_shrink(t, f);
}

static int ent_cmp(const void *x, const void *y)
{
    const struct job_ent *a = x, *b = y;
    return ent_less(a, b) ? -1 : ent_less(b, a);
}

/* Keeps the live entries, one per row: a row that left the index and came
 * back at the same time may have two live entries (the old one revived),
 * which sorting puts side by side.  A sorted array is a heap.  O(n log n)
 * once the entries are more than twice the rows they index, so O(log n) a
 * push, amortised. */
static void rebuild(struct jobtab *t)
{
    t->heap = grow(t, t->heap, sizeof *t->heap, &t->heap_cap, t->nheap + t->nfifo);
    for (int q = 0; q < JOBS_FIFOS; q++) {
        struct job_fifo *f = &t->fifo[q];
        for (uint64_t i = f->head; i < f->tail; i++)
            t->heap[t->nheap++] = *fifo_at(f, i);
        f->head = f->tail = 0;
        fifo_shrink(t, f);
    }
    t->nfifo = 0;
    uint64_t k = 0;
    for (uint64_t i = 0; i < t->nheap; i++)
        if (!stale(t, &t->heap[i]))
            t->heap[k++] = t->heap[i];
    qsort(t->heap, (size_t)k, sizeof *t->heap, ent_cmp);
    uint64_t u = 0;
    for (uint64_t i = 0; i < k; i++)
        if (u == 0 || ent_cmp(&t->heap[u - 1], &t->heap[i]) != 0)
            t->heap[u++] = t->heap[i];
    t->nheap = u;
    shrink_heap(t);
}

static void index_push(struct jobtab *t, uint64_t id, int64_t available_us)
{
    uint64_t in_heap = t->live - t->nlane; /* active rows the heap and the queues index */
    uint64_t ents = t->nheap + t->nfifo;
    if (ents > 64 && ents > 2 * in_heap)
        rebuild(t);
    struct job_ent e = {available_us, id};
    int q = fifo_pick(t, &e);
    if (q >= 0) {
        fifo_push(t, &t->fifo[q], &e);
        return;
    }
    t->heap = grow(t, t->heap, sizeof *t->heap, &t->heap_cap, t->nheap + 1);
    t->heap[t->nheap] = (struct job_ent){available_us, id};
    sift_up(t->heap, t->nheap++);
}

static void drop_stale_top(struct jobtab *t)
{
    uint64_t before = t->nheap;
    while (t->nheap && stale(t, &t->heap[0])) {
        t->heap[0] = t->heap[--t->nheap];
        if (t->nheap)
            sift_down(t->heap, t->nheap, 0);
    }
    if (t->nheap != before)
        shrink_heap(t);
}

/* The lane's first row (its earliest), UINT64_MAX when empty; the head
 * moves past rows that left it, each once. */
static uint64_t lane_top(struct jobtab *t)
{
    if (t->nlane == 0)
        return UINT64_MAX;
    for (;;) {
        SIM_ASSERT(t->lane_head < t->n);
        void *page = page_of(t, t->lane_head >> JOBS_PAGE_SHIFT);
        if (!page) {
            t->lane_head = ((t->lane_head >> JOBS_PAGE_SHIFT) + 1) << JOBS_PAGE_SHIFT;
            continue;
        }
        const struct job *r = row_in(page, t->lane_head);
        if (r->status != ROW_FORGOTTEN && r->lane)
            return t->lane_head;
        t->lane_head++;
    }
}

/* A new active row: into the lane when it keeps the lane's times in order,
 * else into the heap. */
static void index_new(struct jobtab *t, uint64_t id, struct job *r)
{
    if (t->nlane == 0 || r->available_us >= t->lane_last_us) {
        if (t->nlane == 0)
            t->lane_head = id;
        r->lane = 1;
        t->nlane++;
        t->lane_last_us = r->available_us;
        return;
    }
    index_push(t, id, r->available_us);
}

/* --- the table ----------------------------------------------------------------- */

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

void jobs_set_extra(struct jobtab *t, size_t n)
{
    SIM_ASSERT(t->n == 0);
    t->extra = (n + 7) & ~(size_t)7;
}

void jobs_watch(struct jobtab *t, jobs_write_fn fn) { t->on_write = fn; }

void jobs_free(struct jobtab *t)
{
    for (uint64_t i = 0; i < t->ndir; i++)
        if (t->dir[i])
            t->alloc(t->ctx, t->dir[i], 0);
    if (t->spare)
        t->alloc(t->ctx, t->spare, 0);
    if (t->dir)
        t->alloc(t->ctx, t->dir, 0);
    if (t->heap)
        t->alloc(t->ctx, t->heap, 0);
    for (int q = 0; q < JOBS_FIFOS; q++) {
        if (t->fifo[q].e)
            t->alloc(t->ctx, t->fifo[q].e, 0);
        t->fifo[q] = (struct job_fifo){0};
    }
    t->nfifo = 0;
    t->dir = NULL;
    t->spare = NULL;
    t->heap = NULL;
    t->ndir = t->dir_cap = t->nheap = t->heap_cap = t->pages = 0;
}

uint64_t jobs_add(struct jobtab *t, const struct job *j)
{
    uint64_t id = t->n;
    void *page = (id & PAGE_MASK) ? page_of(t, id >> JOBS_PAGE_SHIFT) : page_new(t);
    SIM_ASSERT(page);
    struct job *r = row_in(page, id);
    *r = *j;
    r->lane = 0;
    if (t->extra)
        memset(extra_in(t, page, id), 0, t->extra);
    ((struct page_hdr *)page)->kept++;
    t->kept++;
    t->n++;
    if (active(r->status)) {
        t->live++;
        index_new(t, id, r);
    }
    if (t->on_write)
        t->on_write(t->ctx, id, r);
    return id;
}

struct job *jobs_get(struct jobtab *t, uint64_t id)
{
    struct job *r = find(t, id);
    SIM_ASSERT(r); /* added and not forgotten */
    return r;
}

struct job *jobs_find(struct jobtab *t, uint64_t id)
{
    SIM_ASSERT(id < t->n);
    return find(t, id);
}

void *jobs_extra(struct jobtab *t, uint64_t id)
{
    SIM_ASSERT(find(t, id));
    return extra_in(t, page_of(t, id >> JOBS_PAGE_SHIFT), id);
}

uint64_t jobs_next_kept(const struct jobtab *t, uint64_t id)
{
    uint64_t k = id > t->base ? id : t->base;
    while (k < t->n) {
        void *page = page_of(t, k >> JOBS_PAGE_SHIFT);
        if (!page) {
            k = ((k >> JOBS_PAGE_SHIFT) + 1) << JOBS_PAGE_SHIFT;
            continue;
        }
        if (row_in(page, k)->status != ROW_FORGOTTEN)
            return k;
        k++;
    }
    return t->n;
}

void jobs_forget(struct jobtab *t, uint64_t id)
{
    struct job *r = find(t, id);
    SIM_ASSERT(r);
    SIM_ASSERT(!active(r->status));
    r->status = ROW_FORGOTTEN;
    uint64_t pg = id >> JOBS_PAGE_SHIFT;
    struct page_hdr *h = page_of(t, pg);
    h->kept--;
    t->kept--;
    if (h->kept == 0 && ((pg + 1) << JOBS_PAGE_SHIFT) <= t->n)
        page_free(t, pg);
}

void jobs_forget_below(struct jobtab *t, uint64_t id)
{
    SIM_ASSERT(id <= t->n);
    uint64_t k = t->base;
    while (k < id) {
        if (!page_of(t, k >> JOBS_PAGE_SHIFT)) {
            k = ((k >> JOBS_PAGE_SHIFT) + 1) << JOBS_PAGE_SHIFT;
            continue;
        }
        if (find(t, k))
            jobs_forget(t, k);
        k++;
    }
    if (id > t->base)
        t->base = id;
}

void jobs_update(struct jobtab *t, uint64_t id, enum job_status st, int64_t available_us)
{
    struct job *j = jobs_get(t, id);
    int was = active(j->status), now = active((uint8_t)st);
    int indexed = was && j->available_us == available_us; /* its entry (or lane place) stays */
    if (j->lane && !(now && indexed)) {
        j->lane = 0; /* to the heap, if still active */
        t->nlane--;
    }
    t->live += (uint64_t)now - (uint64_t)was;
    j->status = (uint8_t)st;
    j->available_us = available_us;
    if (now && !indexed)
        index_push(t, id, available_us);
    if (t->on_write)
        t->on_write(t->ctx, id, j);
}

uint64_t jobs_peek(struct jobtab *t, int64_t *available_us)
{
    drop_stale_top(t);
    uint64_t lane = lane_top(t);
    struct job_ent best = {0, UINT64_MAX};
    if (t->nheap)
        best = t->heap[0];
    if (lane != UINT64_MAX) {
        struct job_ent e = {find(t, lane)->available_us, lane};
        if (best.id == UINT64_MAX || ent_less(&e, &best))
            best = e;
    }
    for (int q = 0; q < JOBS_FIFOS; q++) {
        struct job_fifo *f = &t->fifo[q];
        fifo_drop_stale(t, f);
        if (f->head != f->tail && (best.id == UINT64_MAX || ent_less(fifo_at(f, f->head), &best)))
            best = *fifo_at(f, f->head);
    }
    if (best.id != UINT64_MAX && available_us)
        *available_us = best.available_us;
    return best.id;
}

uint64_t jobs_next_due(struct jobtab *t, int64_t now_us)
{
    int64_t at;
    uint64_t id = jobs_peek(t, &at);
    return id != UINT64_MAX && at <= now_us ? id : UINT64_MAX;
}

size_t jobs_bytes(const struct jobtab *t)
{
    size_t b = (size_t)t->pages * page_bytes(t) + (size_t)t->dir_cap * sizeof *t->dir +
               (size_t)t->heap_cap * sizeof *t->heap;
    for (int q = 0; q < JOBS_FIFOS; q++)
        b += (size_t)t->fifo[q].cap * sizeof(struct job_ent);
    return b;
}

/* The pages: every page in the directory counts its kept rows, freed ones
 * were full, and the totals match. */
static int check_pages(const struct jobtab *t)
{
    uint64_t kept = 0, live = 0;
    for (uint64_t i = 0; i < t->ndir; i++) {
        uint64_t pg = t->dir_base + i;
        if (!t->dir[i]) {
            if (((pg + 1) << JOBS_PAGE_SHIFT) > t->n)
                return 0;
            continue;
        }
        uint64_t k = 0;
        for (uint64_t id = pg << JOBS_PAGE_SHIFT; id < ((pg + 1) << JOBS_PAGE_SHIFT) && id < t->n; id++) {
            const struct job *r = find(t, id);
            k += r != NULL;
            live += r && active(r->status);
        }
        if (k != ((const struct page_hdr *)t->dir[i])->kept)
            return 0;
        kept += k;
    }
    return kept == t->kept && live == t->live;
}

int jobs_check(const struct jobtab *t)
{
    if (!check_pages(t))
        return 0;
    for (uint64_t i = 1; i < t->nheap; i++)
        if (ent_less(&t->heap[i], &t->heap[(i - 1) / 2]))
            return 0;
    /* every kept active row has a live entry */
    uint64_t span = t->n - t->base;
    uint8_t *seen = xcalloc(span / 8 + 1, 1);
    for (uint64_t i = 0; i < t->nheap; i++)
        if (!stale(t, &t->heap[i]))
            seen[(t->heap[i].id - t->base) / 8] |= (uint8_t)(1u << ((t->heap[i].id - t->base) % 8));
    int ok = 1;
    uint64_t nfifo = 0;
    for (int q = 0; q < JOBS_FIFOS; q++) { /* sorted strictly, `last` its last */
        const struct job_fifo *f = &t->fifo[q];
        ok = ok && f->tail - f->head <= f->cap && (f->cap & (f->cap - 1)) == 0;
        for (uint64_t i = f->head; ok && i < f->tail; i++) {
            const struct job_ent *e = fifo_at(f, i);
            ok = i == f->head || ent_less(fifo_at(f, i - 1), e);
            ok = ok && (i + 1 < f->tail || (e->id == f->last.id && e->available_us == f->last.available_us));
            if (ok && !stale(t, e))
                seen[(e->id - t->base) / 8] |= (uint8_t)(1u << ((e->id - t->base) % 8));
        }
        nfifo += f->tail - f->head;
    }
    ok = ok && nfifo == t->nfifo;
    uint64_t nlane = 0;
    int64_t last = INT64_MIN;
    for (uint64_t id = jobs_next_kept(t, t->base); ok && id < t->n; id = jobs_next_kept(t, id + 1)) {
        const struct job *r = find(t, id);
        int entry = (seen[(id - t->base) / 8] & (1u << ((id - t->base) % 8))) != 0;
        if (r->lane) { /* active, at or after the head, in time order, not in the heap too */
            ok = active(r->status) && id >= t->lane_head && r->available_us >= last && !entry;
            last = r->available_us;
            nlane++;
        } else if (active(r->status) && !entry) {
            ok = 0;
        }
    }
    free(seen);
    return ok && nlane == t->nlane;
}
