/* checker.c: the metrics of spec section 5, derived from ground truth only.
 *
 * docs/metrics.md is the user-facing definition of every number computed
 * here; this file follows it exactly.  The checker sees the facts the
 * engine reports, in time order, and the scenario (schedules, the recovery
 * bound); it never sees the policy.
 *
 * Cost model (the checker runs beside simulations of 1e7 items, 1e3
 * crashes, millions of handler instances):
 *  - every call is O(1) amortised plus the size of its item list, except:
 *    a scheduled producer's run start once a restart happened (O(log P)
 *    for the tree of next due instants, plus one schedule_next); a restart
 *    (O(crashes still down + runs it interrupted), and O(P) once, at the
 *    first, to build the tree); a producer due committed or mutated out of
 *    order (O(how far back it lands) in its sorted set);
 *  - memory: 16 bytes per item, about 50 per handler instance, 8 per start
 *    of a scheduled producer and per committed/mutated producer due, 40 per
 *    *active* run (finished runs are forgotten), 8 per run that made
 *    progress;
 *  - checker_finish is O(items + dues + handler instances + drops log
 *    crashes + progress runs log progress runs).
 * Nothing loops over items or handlers per crash: per-crash numbers are
 * built from ranges of crash (or restart) indices, accumulated in
 * difference arrays.
 *
 * Key invariants:
 *  - an item is pending iff it is neither processed nor dropped; npending
 *    and hstate.pend count pending items globally and per consumer;
 *  - hstate.pend_rk is the number of restarts seen when the consumer's
 *    pending count last became positive or when it last started a run,
 *    whichever is later; so restarts with index >= pend_rk happened while
 *    it had pending work and had not run since;
 *  - the range log of a handler holds only restarts after its latest run
 *    start (it is emptied at every start). */
#include "sim/checker.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/rng.h"
#include "sim/util.h"

/* ---- small containers ---------------------------------------------------- */

struct i64vec {
    int64_t *v;
    size_t n, cap;
};

static void i64vec_push(struct i64vec *a, int64_t x)
{
    a->v = xgrow(a->v, sizeof *a->v, &a->cap, a->n + 1);
    a->v[a->n++] = x;
}

/* Index of the first element >= x in a sorted array. */
static size_t lower_bound_i64(const int64_t *v, size_t n, int64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Inserts x into a sorted set; returns 1 if it was already there.  Values
 * arrive nearly sorted (producers commit dues roughly in order), so the
 * append path is the common one and a late insert moves only the few
 * elements after it. */
static int i64set_insert(struct i64vec *a, int64_t x)
{
    if (a->n == 0 || x > a->v[a->n - 1]) {
        i64vec_push(a, x);
        return 0;
    }
    size_t pos = lower_bound_i64(a->v, a->n, x);
    if (pos < a->n && a->v[pos] == x)
        return 1;
    a->v = xgrow(a->v, sizeof *a->v, &a->cap, a->n + 1);
    memmove(&a->v[pos + 1], &a->v[pos], (a->n - pos) * sizeof *a->v);
    a->v[pos] = x;
    a->n++;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* ---- state ---------------------------------------------------------------- */

enum {
    IT_PROCESSED = 1,              /* a run that took it committed */
    IT_DROPPED = 2,                /* passed to checker_drop at least once */
    IT_MUTATED = 4                 /* a mutation was applied to it */
};

struct item {
    int64_t origin_us;
    uint32_t consumer;             /* handler instance */
    uint8_t flags;                 /* IT_* */
    uint16_t nactive;              /* PROMISE_UNIT: active runs that took it */
};

/* The first drop of an item; later drops of an already dropped item change
 * nothing (it stopped being pending at the first). */
struct drop_rec {
    uint64_t item;
    uint32_t crashes_before;       /* crashes reported before this drop */
    int32_t crash;                 /* DROP_CRASH: the crash it belongs to; else -1 */
};

enum { HS_STARTED = 1, HS_INPUT = 2 };

struct hstate {
    int64_t last_start_us;         /* valid if HS_STARTED */
    int64_t wake_us;               /* latest wake request not yet due, SIM_NEVER if none */
    uint32_t pend;                 /* pending items (consumers) */
    uint32_t pend_rk;              /* see the invariants at the top */
    uint32_t log;                  /* head of its restart-range list, 0 = empty */
    uint8_t flags;                 /* HS_*; HS_INPUT: new input since its last start */
};

/* Per producer instance (any producer, scheduled or not). */
struct prod {
    struct i64vec starts;          /* run starts, scheduled producers only */
    struct i64vec committed;       /* due_us values committed, sorted */
    struct i64vec mutated;         /* due_us values mutated, sorted */
    uint32_t leaf;                 /* leaf in the due tree; UINT32_MAX if unscheduled */
    /* PROMISE_UNIT: the dues its active runs serve, with how many runs each
     * (a handful at most, so a plain array). */
    int64_t *adue;
    uint32_t *acnt;
    size_t nadue, cadue, cacnt;
};

/* A range [lo, hi) of restart indices, in a pooled singly linked list. */
struct range_node {
    uint32_t lo, hi;
    uint32_t next;
};

/* Runs that must not overlap under the promise (a handler or a workflow
 * instance).  An episode is a maximal interval with >= 2 active runs. */
struct group {
    int64_t ep_start_us;
    uint32_t active;
    uint32_t ep_tmpl;              /* template of the run that opened the episode */
};

/* A unit (an item, or a producer instance's due) held by >= 2 runs. */
struct doubled {
    uint64_t key;                  /* the item, or the due */
    uint32_t prod;                 /* UINT32_MAX for an item, else the producer's handler */
    uint32_t tmpl;                 /* the template the episode's time goes to */
    int64_t start_us;
};

struct run_rec {
    uint64_t id;                   /* 0: empty slot */
    int64_t start_us;
    int64_t due_us;
    uint64_t *taken;               /* owned; NULL when n == 0 */
    uint32_t n;
    uint32_t handler;
};

/* A run interrupted by a crash, in that crash's list. */
struct interrupted {
    uint32_t handler;
    int32_t next;                  /* -1 ends the list */
};

/* What the checker needs about a crash beyond the public record. */
struct crash_x {
    uint64_t items_before;         /* items published before it */
    int32_t int_head;              /* interrupted runs, -1 if none */
    uint32_t rk;                   /* restart index, valid once restarted */
    uint8_t due;                   /* work was due at its restart */
};

/* A result some policy tried to deliver: its id, its handler template and
 * whether any attempt succeeded. */
struct delivery {
    uint64_t id;                   /* 0: empty slot (ids are stored + 1) */
    uint32_t tmpl;
    uint8_t delivered;
};

struct checker {
    struct delivery *dl;           /* open-addressing map by id */
    size_t dl_cap, ndl;
    const struct world *w;
    const struct scenario *scn;
    enum promise promise;
    int64_t now_us;
    int finished;

    struct metrics *tm;            /* [ntmpl]; hists live here and in total */
    struct metrics total;          /* only the hists and wakeups during the run */

    struct item *items;
    uint64_t nitems;
    size_t items_cap;
    uint64_t npending;

    struct hstate *hs;             /* [nh] */
    uint32_t *prod_of;             /* [nh] index into prods, UINT32_MAX for consumers */
    struct prod *prods;
    uint32_t nprods;

    /* Next unserved due instant of each scheduled producer, as a min
     * tournament tree over leaves [tree_n, 2 tree_n); built at the first
     * restart, since only restarts ask for it. */
    int64_t *tree;
    uint32_t tree_n;
    uint32_t nsched;
    uint32_t *sched_h;             /* [nsched] handler of each leaf */
    int tree_on;

    struct group *groups;
    uint32_t ngroups;
    /* PROMISE_UNIT: the units now held by two or more active runs, each with
     * the start of its episode.  Few at a time (at most the active runs), so
     * a plain array searched linearly. */
    struct doubled *dbl;
    size_t ndbl, dbl_cap;

    struct run_rec *runs;          /* open-addressing map of active runs */
    size_t runs_cap, nruns;

    struct crash_rec *crashes;
    struct crash_x *cx;
    uint32_t ncrashes;
    size_t crashes_cap, cx_cap;
    uint32_t *open;                /* crashes not yet restarted, in crash order */
    uint32_t nopen;
    size_t open_cap;
    int32_t de_crash;              /* crash that current double effects go to, -1 */

    uint32_t *restart_crash;       /* [nrestarts] crash of each restart */
    struct i64vec restart_at;      /* [nrestarts] restart instants, nondecreasing */
    uint32_t nrestarts;
    size_t restart_cap;

    struct interrupted *ints;
    uint32_t nints;
    size_t ints_cap;

    struct range_node *nodes;      /* [0] unused */
    uint32_t nnodes, free_node;
    size_t nodes_cap;

    struct drop_rec *drops;
    size_t ndrops, drops_cap;

    struct i64vec progress;        /* start instants of runs that made progress */
};

/* ---- the map of active runs ---------------------------------------------- */

static size_t run_slot(uint64_t id, size_t mask)
{
    uint64_t x = id;
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    return (size_t)x & mask;
}

static struct run_rec *run_find(struct checker *c, uint64_t id)
{
    if (c->runs_cap == 0)
        return NULL;
    size_t mask = c->runs_cap - 1;
    for (size_t i = run_slot(id, mask);; i = (i + 1) & mask) {
        if (c->runs[i].id == id)
            return &c->runs[i];
        if (c->runs[i].id == 0)
            return NULL;
    }
}

static void run_grow(struct checker *c)
{
    size_t ncap = c->runs_cap ? c->runs_cap * 2 : 64;
    struct run_rec *old = c->runs;
    size_t ocap = c->runs_cap;
    c->runs = xcalloc(ncap, sizeof *c->runs);
    c->runs_cap = ncap;
    for (size_t i = 0; i < ocap; i++) {
        if (old[i].id == 0)
            continue;
        size_t j = run_slot(old[i].id, ncap - 1);
        while (c->runs[j].id != 0)
            j = (j + 1) & (ncap - 1);
        c->runs[j] = old[i];
    }
    free(old);
}

static struct run_rec *run_insert(struct checker *c, uint64_t id)
{
    SIM_ASSERT(id != 0);
    if ((c->nruns + 1) * 2 > c->runs_cap)
        run_grow(c);
    size_t mask = c->runs_cap - 1;
    size_t i = run_slot(id, mask);
    while (c->runs[i].id != 0) {
        SIM_ASSERT(c->runs[i].id != id);   /* a run starts once */
        i = (i + 1) & mask;
    }
    c->nruns++;
    c->runs[i] = (struct run_rec){.id = id};
    return &c->runs[i];
}

/* Linear probing with backward-shift deletion: no tombstones, so lookups
 * stay short however many runs come and go. */
static void run_remove(struct checker *c, struct run_rec *r)
{
    size_t mask = c->runs_cap - 1;
    size_t i = (size_t)(r - c->runs);
    c->runs[i].id = 0;
    for (size_t j = (i + 1) & mask; c->runs[j].id != 0; j = (j + 1) & mask) {
        size_t k = run_slot(c->runs[j].id, mask);
        int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (stays)
            continue;
        c->runs[i] = c->runs[j];
        c->runs[j].id = 0;
        i = j;
    }
    c->nruns--;
}

/* ---- restart ranges per handler (for stuck) ------------------------------ */

static void log_add(struct checker *c, uint32_t h, uint32_t lo, uint32_t hi)
{
    SIM_ASSERT(lo < hi);
    uint32_t n = c->free_node;
    if (n) {
        c->free_node = c->nodes[n].next;
    } else {
        if (c->nnodes == 0)
            c->nnodes = 1;         /* index 0 means "none" */
        c->nodes = xgrow(c->nodes, sizeof *c->nodes, &c->nodes_cap, (size_t)c->nnodes + 1);
        n = c->nnodes++;
    }
    c->nodes[n] = (struct range_node){.lo = lo, .hi = hi, .next = c->hs[h].log};
    c->hs[h].log = n;
}

static void log_clear(struct checker *c, uint32_t h)
{
    uint32_t n = c->hs[h].log;
    while (n) {
        uint32_t next = c->nodes[n].next;
        c->nodes[n].next = c->free_node;
        c->free_node = n;
        n = next;
    }
    c->hs[h].log = 0;
}

static void pend_inc(struct checker *c, uint32_t h)
{
    struct hstate *s = &c->hs[h];
    if (s->pend++ == 0)
        s->pend_rk = c->nrestarts;
    c->npending++;
}

static void pend_dec(struct checker *c, uint32_t h)
{
    struct hstate *s = &c->hs[h];
    SIM_ASSERT(s->pend > 0);
    SIM_ASSERT(c->npending > 0);
    c->npending--;
    if (--s->pend == 0 && s->pend_rk < c->nrestarts)
        log_add(c, h, s->pend_rk, c->nrestarts);
}

/* ---- next unserved due instant of scheduled producers -------------------- */

/* The first nominal due instant not served by a run that already started:
 * a due d is served by the first run starting at >= d, so after a start at
 * L every due <= L is served. */
static int64_t next_unserved_due(const struct checker *c, uint32_t h)
{
    const struct schedule *sc = &world_hdef(c->w, h)->sched;
    if (c->hs[h].flags & HS_STARTED)
        return schedule_next(c->scn, sc, c->hs[h].last_start_us, 0);
    return schedule_next(c->scn, sc, 0, 1);
}

static void tree_set(struct checker *c, uint32_t leaf, int64_t v)
{
    uint32_t i = c->tree_n + leaf;
    c->tree[i] = v;
    for (i /= 2; i >= 1; i /= 2) {
        int64_t a = c->tree[2 * i], b = c->tree[2 * i + 1];
        c->tree[i] = a < b ? a : b;
    }
}

static void tree_build(struct checker *c)
{
    SIM_ASSERT(!c->tree_on);
    c->tree_on = 1;
    if (c->nsched == 0)
        return;
    uint32_t n = 1;
    while (n < c->nsched)
        n *= 2;
    c->tree_n = n;
    c->tree = xmalloc(2 * (size_t)n * sizeof *c->tree);
    for (uint32_t i = 0; i < 2 * n; i++)
        c->tree[i] = SIM_NEVER;
    for (uint32_t k = 0; k < c->nsched; k++)
        c->tree[n + k] = next_unserved_due(c, c->sched_h[k]);
    for (uint32_t i = n - 1; i >= 1; i--) {
        int64_t a = c->tree[2 * i], b = c->tree[2 * i + 1];
        c->tree[i] = a < b ? a : b;
    }
}

static int64_t tree_min(const struct checker *c)
{
    return c->nsched ? c->tree[1] : SIM_NEVER;
}

/* ---- lifecycle ------------------------------------------------------------ */

struct checker *checker_new(const struct world *w, enum promise promise)
{
    struct checker *c = xcalloc(1, sizeof *c);
    c->w = w;
    c->scn = w->scn;
    c->promise = promise;
    c->now_us = 0;
    c->de_crash = -1;
    c->tm = xcalloc(w->ntmpl, sizeof *c->tm);
    c->hs = xcalloc(w->nh, sizeof *c->hs);
    c->prod_of = xcalloc(w->nh, sizeof *c->prod_of);
    for (uint32_t h = 0; h < w->nh; h++) {
        c->hs[h].wake_us = SIM_NEVER;
        const struct handler_def *hd = world_hdef(w, h);
        if (hd->kind != H_PRODUCER) {
            c->prod_of[h] = UINT32_MAX;
            continue;
        }
        c->prod_of[h] = c->nprods++;
        if (hd->sched.kind != SCHED_NONE)
            c->nsched++;
    }
    c->prods = xcalloc(c->nprods, sizeof *c->prods);
    c->sched_h = xcalloc(c->nsched, sizeof *c->sched_h);
    uint32_t k = 0;
    for (uint32_t h = 0; h < w->nh; h++) {
        if (c->prod_of[h] == UINT32_MAX)
            continue;
        struct prod *p = &c->prods[c->prod_of[h]];
        p->leaf = UINT32_MAX;
        if (world_hdef(w, h)->sched.kind != SCHED_NONE) {
            p->leaf = k;
            c->sched_h[k++] = h;
        }
    }
    switch (promise) {
    case PROMISE_NONE: c->ngroups = 0; break;
    case PROMISE_HANDLER: c->ngroups = w->nh; break;
    case PROMISE_WORKFLOW: c->ngroups = w->ninst; break;
    case PROMISE_UNIT: c->ngroups = 0; break;
    }
    c->groups = xcalloc(c->ngroups, sizeof *c->groups);
    return c;
}

static void metrics_free(struct metrics *m)
{
    hist_free(&m->latency);
    hist_free(&m->lateness);
}

void checker_free(struct checker *c)
{
    if (!c)
        return;
    for (uint32_t t = 0; t < c->w->ntmpl; t++)
        metrics_free(&c->tm[t]);
    free(c->tm);
    metrics_free(&c->total);
    free(c->dl);
    free(c->items);
    free(c->hs);
    free(c->prod_of);
    for (uint32_t p = 0; p < c->nprods; p++) {
        free(c->prods[p].starts.v);
        free(c->prods[p].committed.v);
        free(c->prods[p].mutated.v);
        free(c->prods[p].adue);
        free(c->prods[p].acnt);
    }
    free(c->prods);
    free(c->tree);
    free(c->sched_h);
    free(c->groups);
    free(c->dbl);
    for (size_t i = 0; i < c->runs_cap; i++)
        if (c->runs[i].id)
            free(c->runs[i].taken);
    free(c->runs);
    free(c->crashes);
    free(c->cx);
    free(c->open);
    free(c->restart_crash);
    free(c->restart_at.v);
    free(c->ints);
    free(c->nodes);
    free(c->drops);
    free(c->progress.v);
    free(c);
}

static void advance(struct checker *c, int64_t now_us)
{
    SIM_ASSERT(!c->finished);
    SIM_ASSERT(now_us >= c->now_us);   /* ground truth comes in time order */
    c->now_us = now_us;
}

static uint32_t tmpl_of(const struct checker *c, uint32_t h)
{
    return c->w->h[h].tmpl;
}

/* A mutation was applied to a unit that already had it. */
static void double_effect(struct checker *c, uint32_t tmpl)
{
    c->tm[tmpl].double_effects++;
    if (c->de_crash >= 0)
        c->crashes[c->de_crash].double_effects++;
}

/* ---- ground truth ---------------------------------------------------------- */

void checker_publish(struct checker *c, uint64_t item, uint32_t consumer, int64_t origin_us, int64_t now_us)
{
    advance(c, now_us);
    SIM_ASSERT(item == c->nitems);     /* dense ids in publish order */
    SIM_ASSERT(consumer < c->w->nh);
    SIM_ASSERT(world_hdef(c->w, consumer)->kind == H_CONSUMER);
    SIM_ASSERT(origin_us >= 0);
    SIM_ASSERT(origin_us <= now_us);
    c->items = xgrow(c->items, sizeof *c->items, &c->items_cap, c->nitems + 1);
    c->items[c->nitems++] = (struct item){.origin_us = origin_us, .consumer = consumer};
    c->tm[tmpl_of(c, consumer)].published++;
    pend_inc(c, consumer);
    c->hs[consumer].flags |= HS_INPUT;
}

/* The crash a crash-caused drop belongs to: the latest one still down, or
 * failing that the latest one. */
static int32_t drop_crash_of(const struct checker *c)
{
    if (c->nopen)
        return (int32_t)c->open[c->nopen - 1];
    return c->ncrashes ? (int32_t)c->ncrashes - 1 : -1;
}

void checker_drop(struct checker *c, uint64_t item, enum drop_cause cause, int64_t now_us)
{
    advance(c, now_us);
    SIM_ASSERT(item < c->nitems);
    struct item *it = &c->items[item];
    if (it->flags & IT_DROPPED)
        return;
    it->flags |= IT_DROPPED;
    c->drops = xgrow(c->drops, sizeof *c->drops, &c->drops_cap, c->ndrops + 1);
    c->drops[c->ndrops++] = (struct drop_rec){
        .item = item,
        .crashes_before = c->ncrashes,
        .crash = cause == DROP_CRASH ? drop_crash_of(c) : -1,
    };
    if (!(it->flags & IT_PROCESSED))
        pend_dec(c, it->consumer);
}

static void group_start(struct checker *c, uint32_t g, uint32_t tmpl, int64_t now_us)
{
    struct group *gr = &c->groups[g];
    if (gr->active >= 1)
        c->tm[tmpl].overlap_runs++;
    if (gr->active == 1) {
        gr->ep_start_us = now_us;
        gr->ep_tmpl = tmpl;
    }
    gr->active++;
}

static void group_end(struct checker *c, uint32_t g, int64_t now_us)
{
    struct group *gr = &c->groups[g];
    SIM_ASSERT(gr->active > 0);
    if (gr->active-- == 2)
        c->tm[gr->ep_tmpl].overlaps_us += now_us - gr->ep_start_us;
}

/* A unit became held by two runs: its episode opens (its time goes to the
 * template of the run that opened it). */
static void doubled_inc(struct checker *c, uint32_t prod, uint64_t key, uint32_t tmpl, int64_t now_us)
{
    c->dbl = xgrow(c->dbl, sizeof *c->dbl, &c->dbl_cap, c->ndbl + 1);
    c->dbl[c->ndbl++] = (struct doubled){key, prod, tmpl, now_us};
}

/* Back to one run: the episode closes. */
static void doubled_dec(struct checker *c, uint32_t prod, uint64_t key, int64_t now_us)
{
    for (size_t i = 0; i < c->ndbl; i++) {
        if (c->dbl[i].key != key || c->dbl[i].prod != prod)
            continue;
        c->tm[c->dbl[i].tmpl].overlaps_us += now_us - c->dbl[i].start_us;
        c->dbl[i] = c->dbl[--c->ndbl];
        return;
    }
    SIM_ASSERT(0 && "closing an overlap episode that is not open");
}

/* PROMISE_UNIT: a run takes (delta = 1) or releases (delta = -1) its units.
 * Returns 1 if, on taking, another active run already held one of them. */
static int units_hold(struct checker *c, uint32_t h, uint32_t tmpl, const uint64_t *taken, uint32_t n,
                      int64_t due_us, int delta, int64_t now_us)
{
    int shared = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct item *it = &c->items[taken[i]];
        if (delta > 0) {
            SIM_ASSERT(it->nactive < UINT16_MAX);
            shared |= it->nactive > 0;
            if (++it->nactive == 2)
                doubled_inc(c, UINT32_MAX, taken[i], tmpl, now_us);
        } else {
            SIM_ASSERT(it->nactive > 0);
            if (it->nactive-- == 2)
                doubled_dec(c, UINT32_MAX, taken[i], now_us);
        }
    }
    uint32_t p = c->prod_of[h];
    if (p == UINT32_MAX || due_us < 0)
        return shared;
    struct prod *pr = &c->prods[p];
    size_t k = 0;
    while (k < pr->nadue && pr->adue[k] != due_us)
        k++;
    if (delta > 0) {
        if (k == pr->nadue) {
            pr->adue = xgrow(pr->adue, sizeof *pr->adue, &pr->cadue, pr->nadue + 1);
            pr->acnt = xgrow(pr->acnt, sizeof *pr->acnt, &pr->cacnt, pr->nadue + 1);
            pr->adue[k] = due_us;
            pr->acnt[k] = 0;
            pr->nadue++;
        }
        shared |= pr->acnt[k] > 0;
        if (++pr->acnt[k] == 2)
            doubled_inc(c, h, (uint64_t)due_us, tmpl, now_us);
    } else {
        SIM_ASSERT(k < pr->nadue && pr->acnt[k] > 0);
        if (pr->acnt[k]-- == 2)
            doubled_dec(c, h, (uint64_t)due_us, now_us);
        if (pr->acnt[k] == 0) {
            pr->adue[k] = pr->adue[pr->nadue - 1];
            pr->acnt[k] = pr->acnt[pr->nadue - 1];
            pr->nadue--;
        }
    }
    return shared;
}

static uint32_t group_of(const struct checker *c, uint32_t h)
{
    return c->promise == PROMISE_WORKFLOW ? c->w->h[h].inst : h;
}

void checker_run_start(struct checker *c, uint64_t run, uint32_t handler, enum run_reason reason,
                       int64_t due_us, uint64_t resume_of, const uint64_t *taken, uint32_t n,
                       int64_t now_us)
{
    advance(c, now_us);
    SIM_ASSERT(handler < c->w->nh);
    SIM_ASSERT((int)reason >= 0);
    SIM_ASSERT(reason < REASON_COUNT);
    SIM_ASSERT(n == 0 || taken != NULL);
    const struct handler_def *hd = world_hdef(c->w, handler);
    uint32_t tmpl = tmpl_of(c, handler);
    struct metrics *m = &c->tm[tmpl];
    struct hstate *s = &c->hs[handler];

    struct run_rec *r = run_insert(c, run);
    r->start_us = now_us;
    r->due_us = due_us;
    r->handler = handler;
    r->n = n;
    if (n) {
        r->taken = xmalloc((size_t)n * sizeof *r->taken);
        for (uint32_t i = 0; i < n; i++) {
            SIM_ASSERT(taken[i] < c->nitems);
            SIM_ASSERT(c->items[taken[i]].consumer == handler);
            r->taken[i] = taken[i];
        }
    }

    m->runs++;
    if (hd->kind == H_CONSUMER) {
        /* New input since the previous start: a publish (flag), or a wake
         * request that came due in (previous start, now]. */
        int input = (s->flags & HS_INPUT) != 0;
        if (s->wake_us <= now_us) {
            if (!(s->flags & HS_STARTED) || s->wake_us > s->last_start_us)
                input = 1;
            s->wake_us = SIM_NEVER;
        }
        if (n == 0) {
            m->runs_empty++;
            if (!input)
                m->busy_loops++;
        }
    }
    (void)resume_of;               /* the engine passes a resumed run's items explicitly */

    s->flags = (uint8_t)((s->flags | HS_STARTED) & ~HS_INPUT);
    s->last_start_us = now_us;
    /* It runs again: earlier restarts can no longer make it stuck. */
    log_clear(c, handler);
    if (s->pend)
        s->pend_rk = c->nrestarts;

    uint32_t p = c->prod_of[handler];
    if (p != UINT32_MAX && c->prods[p].leaf != UINT32_MAX) {
        i64vec_push(&c->prods[p].starts, now_us);
        if (c->tree_on)
            tree_set(c, c->prods[p].leaf, next_unserved_due(c, handler));
    }

    if (c->ngroups)
        group_start(c, group_of(c, handler), tmpl, now_us);
    if (c->promise == PROMISE_UNIT && units_hold(c, handler, tmpl, r->taken, r->n, due_us, 1, now_us))
        m->overlap_runs++;
}

void checker_wake_request(struct checker *c, uint32_t handler, int64_t wake_us, int64_t now_us)
{
    advance(c, now_us);
    SIM_ASSERT(handler < c->w->nh);
    /* The script restates its wish at every run: the latest request
     * replaces an earlier one that has not come due. */
    c->hs[handler].wake_us = wake_us;
}

void checker_mutated(struct checker *c, uint64_t run, int64_t now_us)
{
    advance(c, now_us);
    struct run_rec *r = run_find(c, run);
    SIM_ASSERT(r != NULL);
    uint32_t tmpl = tmpl_of(c, r->handler);
    for (uint32_t i = 0; i < r->n; i++) {
        struct item *it = &c->items[r->taken[i]];
        if (it->flags & IT_MUTATED)
            double_effect(c, tmpl);
        it->flags |= IT_MUTATED;
    }
    uint32_t p = c->prod_of[r->handler];
    if (p != UINT32_MAX && r->due_us >= 0 && i64set_insert(&c->prods[p].mutated, r->due_us))
        double_effect(c, tmpl);
}

/* Records that a run of handler h was interrupted by the latest crash. */
static void note_interrupted(struct checker *c, uint32_t h)
{
    if (c->ncrashes == 0)
        return;
    uint32_t k = c->ncrashes - 1;
    c->ints = xgrow(c->ints, sizeof *c->ints, &c->ints_cap, (size_t)c->nints + 1);
    c->ints[c->nints] = (struct interrupted){.handler = h, .next = c->cx[k].int_head};
    c->cx[k].int_head = (int32_t)c->nints++;
}

void checker_run_end(struct checker *c, uint64_t run, enum run_outcome out, int64_t now_us)
{
    advance(c, now_us);
    struct run_rec *r = run_find(c, run);
    SIM_ASSERT(r != NULL);
    uint32_t h = r->handler;
    uint32_t tmpl = tmpl_of(c, h);
    struct metrics *m = &c->tm[tmpl];
    int is_prod = c->prod_of[h] != UINT32_MAX;

    if (c->ngroups)
        group_end(c, group_of(c, h), now_us);
    if (c->promise == PROMISE_UNIT)
        units_hold(c, h, tmpl, r->taken, r->n, r->due_us, -1, now_us);

    switch (out) {
    case OUT_COMMITTED:
        for (uint32_t i = 0; i < r->n; i++) {
            struct item *it = &c->items[r->taken[i]];
            if (it->flags & IT_PROCESSED) {
                m->duplicates++;
                continue;
            }
            it->flags |= IT_PROCESSED;
            m->processed++;
            int64_t lat_us = now_us - it->origin_us;
            hist_add(&m->latency, lat_us);
            hist_add(&c->total.latency, lat_us);
            if (!(it->flags & IT_DROPPED))
                pend_dec(c, h);
        }
        if (is_prod && r->due_us >= 0 && i64set_insert(&c->prods[c->prod_of[h]].committed, r->due_us))
            m->duplicates++;
        if (r->n > 0 || is_prod)
            i64vec_push(&c->progress, r->start_us);
        break;
    case OUT_FAILED:
        m->runs_failed++;
        break;
    case OUT_CRASHED:
        m->runs_crashed++;
        note_interrupted(c, h);
        break;
    case OUT_CUTOFF:
        m->runs_cutoff++;
        break;
    default:
        SIM_ASSERT(0 && "unknown run outcome");
    }
    free(r->taken);
    run_remove(c, r);
}

void checker_crash(struct checker *c, int target, uint32_t index, int64_t now_us)
{
    advance(c, now_us);
    c->crashes = xgrow(c->crashes, sizeof *c->crashes, &c->crashes_cap, (size_t)c->ncrashes + 1);
    c->cx = xgrow(c->cx, sizeof *c->cx, &c->cx_cap, (size_t)c->ncrashes + 1);
    c->open = xgrow(c->open, sizeof *c->open, &c->open_cap, (size_t)c->nopen + 1);
    struct crash_rec *cr = &c->crashes[c->ncrashes];
    memset(cr, 0, sizeof *cr); /* padding too: results travel as bytes (sim/sweep.c) */
    cr->target = target;
    cr->index = index;
    cr->at_us = now_us;
    cr->restart_us = SIM_NEVER;
    cr->recovery_time_us = -1;
    c->cx[c->ncrashes] = (struct crash_x){.items_before = c->nitems, .int_head = -1};
    c->open[c->nopen++] = c->ncrashes;
    c->ncrashes++;
    c->de_crash = -1;
}

void checker_restart(struct checker *c, int target, uint32_t index, int64_t now_us)
{
    advance(c, now_us);
    /* The earliest crash of this part still down. */
    uint32_t o = 0;
    while (o < c->nopen && !(c->crashes[c->open[o]].target == target && c->crashes[c->open[o]].index == index))
        o++;
    SIM_ASSERT(o < c->nopen);          /* a restart follows a crash of the same part */
    uint32_t k = c->open[o];
    memmove(&c->open[o], &c->open[o + 1], (c->nopen - o - 1) * sizeof *c->open);
    c->nopen--;

    if (!c->tree_on)
        tree_build(c);
    struct crash_x *x = &c->cx[k];
    c->crashes[k].restart_us = now_us;
    x->rk = c->nrestarts;
    x->due = c->npending > 0 || x->int_head >= 0 || tree_min(c) <= now_us;
    c->restart_crash = xgrow(c->restart_crash, sizeof *c->restart_crash, &c->restart_cap, (size_t)c->nrestarts + 1);
    c->restart_crash[c->nrestarts] = k;
    i64vec_push(&c->restart_at, now_us);
    c->nrestarts++;
    /* A handler whose run this crash interrupted has due work now. */
    for (int32_t i = x->int_head; i >= 0; i = c->ints[i].next)
        log_add(c, c->ints[i].handler, x->rk, x->rk + 1);
    c->de_crash = (int32_t)k;
}

static struct delivery *delivery_slot(struct checker *c, uint64_t id)
{
    if (c->ndl * 2 >= c->dl_cap) {
        size_t cap = c->dl_cap ? c->dl_cap * 2 : 64;
        struct delivery *n = xcalloc(cap, sizeof *n);
        for (size_t i = 0; i < c->dl_cap; i++) {
            if (!c->dl[i].id)
                continue;
            size_t k = (size_t)(rng_mix(c->dl[i].id) & (cap - 1));
            while (n[k].id)
                k = (k + 1) & (cap - 1);
            n[k] = c->dl[i];
        }
        free(c->dl);
        c->dl = n;
        c->dl_cap = cap;
    }
    size_t k = (size_t)(rng_mix(id + 1) & (c->dl_cap - 1));
    while (c->dl[k].id && c->dl[k].id != id + 1)
        k = (k + 1) & (c->dl_cap - 1);
    return &c->dl[k];
}

void checker_delivery(struct checker *c, uint32_t handler, uint64_t id, int ok, int64_t now_us)
{
    SIM_ASSERT(!c->finished);
    SIM_ASSERT(handler < c->w->nh);
    advance(c, now_us);
    uint32_t tmpl = c->w->h[handler].tmpl;
    struct delivery *d = delivery_slot(c, id);
    if (!d->id) {
        d->id = id + 1;
        d->tmpl = tmpl;
        c->ndl++;
    }
    if (!ok)
        return;
    struct metrics *m = &c->tm[tmpl];
    m->deliveries++;
    if (d->delivered)
        m->dup_deliveries++;
    d->delivered = 1;
}

void checker_wakeups(struct checker *c, uint64_t n)
{
    SIM_ASSERT(!c->finished);
    c->total.wakeups += n;
}

/* ---- the end --------------------------------------------------------------- */

struct due_walk {
    const struct scenario *scn;
    const struct schedule *sc;
    const int64_t *starts;
    size_t n, j;
    size_t served;                 /* index of the run that served the previous due, or SIZE_MAX */
    int64_t prev_due_us;           /* the previous due, its miss not yet decided; -1 none */
    int64_t prev_start_us;         /* the start that served it, SIM_NEVER if none */
    struct metrics *m, *total;
};

/* A due is missed when no run starts in [due, due + period): the serving
 * run (the first start >= due) is at or after due + period, or absent. */
static void due_decide(struct due_walk *dw, int64_t period_us)
{
    int64_t d = dw->prev_due_us, s = dw->prev_start_us;
    SIM_ASSERT(period_us > 0);
    if (s == SIM_NEVER || (period_us <= INT64_MAX - d && s >= d + period_us))
        dw->m->missed++;
}

/* One nominal due instant, merged against the sorted run starts.  Its
 * period is the gap to the next due (the schedule's period_at, without a
 * second walk of a cron expression), so the miss of a due is decided when
 * the next one arrives; the last one asks schedule_period_at. */
static int due_visit(void *ctx, int64_t due_us)
{
    struct due_walk *dw = ctx;
    if (dw->prev_due_us >= 0)
        due_decide(dw, due_us - dw->prev_due_us);
    while (dw->j < dw->n && dw->starts[dw->j] < due_us)
        dw->j++;
    dw->m->dues++;
    dw->prev_due_us = due_us;
    dw->prev_start_us = SIM_NEVER;
    if (dw->j == dw->n) {
        /* Never served: censored at the end, it counts as +infinity. */
        hist_add_censored(&dw->m->lateness, 1);
        hist_add_censored(&dw->total->lateness, 1);
        return 0;
    }
    int64_t start_us = dw->starts[dw->j];
    dw->prev_start_us = start_us;
    hist_add(&dw->m->lateness, start_us - due_us);
    hist_add(&dw->total->lateness, start_us - due_us);
    if (dw->served == dw->j)
        dw->m->coalesced++;
    dw->served = dw->j;
    return 0;
}

static void finish_dues(struct checker *c)
{
    for (uint32_t k = 0; k < c->nsched; k++) {
        uint32_t h = c->sched_h[k];
        const struct prod *p = &c->prods[c->prod_of[h]];
        struct due_walk dw = {
            .scn = c->scn, .sc = &world_hdef(c->w, h)->sched,
            .starts = p->starts.v, .n = p->starts.n, .served = SIZE_MAX, .prev_due_us = -1,
            .m = &c->tm[tmpl_of(c, h)], .total = &c->total,
        };
        schedule_dues(c->scn, dw.sc, 0, c->scn->horizon_us, due_visit, &dw);
        if (dw.prev_due_us >= 0)
            due_decide(&dw, schedule_period_at(c->scn, dw.sc, dw.prev_due_us));
    }
}

/* First crash (in crash order) published after item i. */
static uint32_t crash_after_item(const struct checker *c, uint64_t i)
{
    uint32_t lo = 0, hi = c->ncrashes;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->cx[mid].items_before <= i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* dropped, stranded, each crash's lost items, and the censored latency
 * samples of unprocessed items.  An unprocessed item
 * counts for crash k if it was pending at k (published before it, not
 * dropped before it) or if its drop was caused by k. */
static void finish_items(struct checker *c, int64_t *lost_diff)
{
    uint32_t k = 0;
    for (uint64_t i = 0; i < c->nitems; i++) {
        const struct item *it = &c->items[i];
        while (k < c->ncrashes && c->cx[k].items_before <= i)
            k++;
        if (it->flags & IT_PROCESSED)
            continue;
        struct metrics *m = &c->tm[tmpl_of(c, it->consumer)];
        /* Never processed: its latency is censored at the end (+infinity). */
        hist_add_censored(&m->latency, 1);
        hist_add_censored(&c->total.latency, 1);
        if (it->flags & IT_DROPPED) {
            m->dropped++;
            continue;
        }
        m->stranded++;
        lost_diff[k]++;
        lost_diff[c->ncrashes]--;
    }
    for (size_t d = 0; d < c->ndrops; d++) {
        const struct drop_rec *dr = &c->drops[d];
        if (c->items[dr->item].flags & IT_PROCESSED)
            continue;
        uint32_t from = crash_after_item(c, dr->item), to = dr->crashes_before;
        if (from < to) {
            lost_diff[from]++;
            lost_diff[to]--;
        }
        if (dr->crash >= 0 && !((uint32_t)dr->crash >= from && (uint32_t)dr->crash < to)) {
            lost_diff[dr->crash]++;
            lost_diff[dr->crash + 1]--;
        }
    }
}

static int cmp_range(const void *a, const void *b)
{
    const struct range_node *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Adds the union of ranges r[0..n) to diff. */
static void add_union(struct range_node *r, size_t n, int64_t *diff)
{
    if (n > 1)
        qsort(r, n, sizeof *r, cmp_range);
    size_t i = 0;
    while (i < n) {
        uint32_t lo = r[i].lo, hi = r[i].hi;
        for (i++; i < n && r[i].lo <= hi; i++)
            if (r[i].hi > hi)
                hi = r[i].hi;
        diff[lo]++;
        diff[hi]--;
    }
}

/* For each restart, the handlers that had due work at it and never
 * started a run after it.  A handler's candidate restarts are those after
 * its last start: its pending-work ranges and interrupted-run marks still
 * in its log, the open pending range, and for a scheduled producer every
 * restart at or after its first unserved due instant. */
static void finish_stuck(struct checker *c, int64_t *stuck_diff)
{
    struct range_node *buf = NULL;
    size_t cap = 0;
    for (uint32_t h = 0; h < c->w->nh; h++) {
        const struct hstate *s = &c->hs[h];
        size_t n = 0;
        for (uint32_t i = s->log; i; i = c->nodes[i].next) {
            buf = xgrow(buf, sizeof *buf, &cap, n + 1);
            buf[n++] = c->nodes[i];
        }
        if (s->pend && s->pend_rk < c->nrestarts) {
            buf = xgrow(buf, sizeof *buf, &cap, n + 1);
            buf[n++] = (struct range_node){.lo = s->pend_rk, .hi = c->nrestarts};
        }
        uint32_t p = c->prod_of[h];
        if (p != UINT32_MAX && c->prods[p].leaf != UINT32_MAX) {
            int64_t due_us = next_unserved_due(c, h);
            size_t k0 = lower_bound_i64(c->restart_at.v, c->nrestarts, due_us);
            if (due_us != SIM_NEVER && k0 < c->nrestarts) {
                buf = xgrow(buf, sizeof *buf, &cap, n + 1);
                buf[n++] = (struct range_node){.lo = (uint32_t)k0, .hi = c->nrestarts};
            }
        }
        if (n)
            add_union(buf, n, stuck_diff);
    }
    free(buf);
}

/* lost_diff: from finish_items. */
static void finish_crashes(struct checker *c, const int64_t *lost_diff, struct checker_result *out)
{
    out->recovery_ok = 1;
    out->stuck = 0;
    out->recovery_time_max_us = 0;
    if (c->ncrashes == 0)
        return;
    int64_t *stuck_diff = xcalloc((size_t)c->nrestarts + 1, sizeof *stuck_diff);
    if (c->nrestarts)
        finish_stuck(c, stuck_diff);
    if (c->progress.n > 1)
        qsort(c->progress.v, c->progress.n, sizeof *c->progress.v, cmp_i64);

    int64_t lost = 0;
    for (uint32_t k = 0; k < c->ncrashes; k++) {
        lost += lost_diff[k];
        SIM_ASSERT(lost >= 0);
        c->crashes[k].lost = (uint64_t)lost;
    }
    int64_t stuck = 0;
    for (uint32_t r = 0; r < c->nrestarts; r++) {
        stuck += stuck_diff[r];
        SIM_ASSERT(stuck >= 0);
        c->crashes[c->restart_crash[r]].stuck = (uint32_t)stuck;
    }
    for (uint32_t k = 0; k < c->ncrashes; k++) {
        struct crash_rec *cr = &c->crashes[k];
        if (cr->restart_us == SIM_NEVER) {
            cr->recovery_time_us = -1;
        } else if (!c->cx[k].due) {
            cr->recovery_time_us = 0;
        } else {
            size_t i = lower_bound_i64(c->progress.v, c->progress.n, cr->restart_us);
            cr->recovery_time_us = i < c->progress.n ? c->progress.v[i] - cr->restart_us : -1;
        }
        cr->ok = cr->lost == 0 && cr->double_effects == 0 && cr->stuck == 0 && cr->recovery_time_us >= 0 &&
                 cr->recovery_time_us <= c->scn->recovery_bound_us;
        if (!cr->ok)
            out->recovery_ok = 0;
        out->stuck += cr->stuck;
        if (cr->recovery_time_us < 0 || out->recovery_time_max_us < 0)
            out->recovery_time_max_us = -1;
        else if (cr->recovery_time_us > out->recovery_time_max_us)
            out->recovery_time_max_us = cr->recovery_time_us;
    }
    free(stuck_diff);
}

void checker_finish(struct checker *c, int64_t end_us, struct checker_result *out)
{
    advance(c, end_us);
    memset(out, 0, sizeof *out); /* padding too: results travel as bytes (sim/sweep.c) */

    /* Runs still active at the end stop counting there. */
    for (uint32_t g = 0; g < c->ngroups; g++)
        if (c->groups[g].active >= 2)
            c->tm[c->groups[g].ep_tmpl].overlaps_us += end_us - c->groups[g].ep_start_us;
    for (size_t i = 0; i < c->ndbl; i++)
        c->tm[c->dbl[i].tmpl].overlaps_us += end_us - c->dbl[i].start_us;

    finish_dues(c);
    for (size_t i = 0; i < c->dl_cap; i++)
        if (c->dl[i].id && !c->dl[i].delivered)
            c->tm[c->dl[i].tmpl].undelivered++;
    int64_t *lost_diff = xcalloc((size_t)c->ncrashes + 1, sizeof *lost_diff);
    finish_items(c, lost_diff);
    finish_crashes(c, lost_diff, out);
    free(lost_diff);

    struct metrics *t = &c->total;
    for (uint32_t k = 0; k < c->w->ntmpl; k++) {
        struct metrics *m = &c->tm[k];
        m->lost = m->dropped + m->stranded;
        t->published += m->published;
        t->processed += m->processed;
        t->lost += m->lost;
        t->dropped += m->dropped;
        t->stranded += m->stranded;
        t->duplicates += m->duplicates;
        t->double_effects += m->double_effects;
        t->dues += m->dues;
        t->missed += m->missed;
        t->coalesced += m->coalesced;
        t->runs += m->runs;
        t->runs_empty += m->runs_empty;
        t->busy_loops += m->busy_loops;
        t->runs_failed += m->runs_failed;
        t->runs_crashed += m->runs_crashed;
        t->runs_cutoff += m->runs_cutoff;
        t->deliveries += m->deliveries;
        t->dup_deliveries += m->dup_deliveries;
        t->undelivered += m->undelivered;
        t->overlaps_us += m->overlaps_us;
        t->overlap_runs += m->overlap_runs;
    }

    /* Hand everything over; the checker keeps nothing the result owns. */
    out->total = c->total;
    hist_init(&c->total.latency);
    hist_init(&c->total.lateness);
    out->ntmpl = c->w->ntmpl;
    out->per_tmpl = c->tm;
    c->tm = xcalloc(c->w->ntmpl, sizeof *c->tm);
    out->ncrashes = c->ncrashes;
    out->crashes = c->crashes;
    c->crashes = NULL;
    c->ncrashes = 0;
    c->finished = 1;
}

void checker_result_free(struct checker_result *r)
{
    metrics_free(&r->total);
    for (uint32_t k = 0; k < r->ntmpl; k++)
        metrics_free(&r->per_tmpl[k]);
    free(r->per_tmpl);
    free(r->crashes);
    *r = (struct checker_result){0};
}

/* ---- metric values ---------------------------------------------------------- */

/* A percentile in us, or +INFINITY where it lands on censored samples. */
static double quantile(const struct hist *h, double q)
{
    int64_t v = hist_quantile(h, q);
    return v == HIST_CENSORED ? INFINITY : (double)v;
}

int metric_get(const struct checker_result *r, int tmpl, const char *name, double *out)
{
    const struct metric_info *mi = metric_find(name);
    if (!mi)
        return -1;
    if (tmpl >= 0 && (!mi->per_handler || (uint32_t)tmpl >= r->ntmpl))
        return -1;
    if (tmpl < -1)
        return -1;
    const struct metrics *m = tmpl < 0 ? &r->total : &r->per_tmpl[tmpl];
    switch ((enum metric_id)(mi - metric_table)) {
    case M_PUBLISHED: *out = (double)m->published; break;
    case M_PROCESSED: *out = (double)m->processed; break;
    case M_LOST: *out = (double)m->lost; break;
    case M_DROPPED: *out = (double)m->dropped; break;
    case M_STRANDED: *out = (double)m->stranded; break;
    case M_DUPLICATES: *out = (double)m->duplicates; break;
    case M_DOUBLE_EFFECTS: *out = (double)m->double_effects; break;
    case M_DUES: *out = (double)m->dues; break;
    case M_MISSED: *out = (double)m->missed; break;
    case M_COALESCED: *out = (double)m->coalesced; break;
    case M_RUNS: *out = (double)m->runs; break;
    case M_RUNS_EMPTY: *out = (double)m->runs_empty; break;
    case M_RUNS_FAILED: *out = (double)m->runs_failed; break;
    case M_RUNS_CRASHED: *out = (double)m->runs_crashed; break;
    case M_RUNS_CUTOFF: *out = (double)m->runs_cutoff; break;
    case M_DELIVERIES: *out = (double)m->deliveries; break;
    case M_DUP_DELIVERIES: *out = (double)m->dup_deliveries; break;
    case M_UNDELIVERED: *out = (double)m->undelivered; break;
    case M_BUSY_LOOPS: *out = (double)m->busy_loops; break;
    case M_WAKEUPS: *out = (double)r->total.wakeups; break;
    case M_OVERLAPS: *out = (double)m->overlaps_us; break;
    case M_OVERLAP_RUNS: *out = (double)m->overlap_runs; break;
    case M_LAT_P50: *out = quantile(&m->latency, 0.50); break;
    case M_LAT_P90: *out = quantile(&m->latency, 0.90); break;
    case M_LAT_P99: *out = quantile(&m->latency, 0.99); break;
    case M_LAT_MAX: *out = quantile(&m->latency, 1.0); break;
    case M_LAT_MEAN: *out = hist_mean(&m->latency); break;
    case M_LATE_P50: *out = quantile(&m->lateness, 0.50); break;
    case M_LATE_P99: *out = quantile(&m->lateness, 0.99); break;
    case M_LATE_MAX: *out = quantile(&m->lateness, 1.0); break;
    case M_LATE_MEAN: *out = hist_mean(&m->lateness); break;
    case M_CRASHES: *out = (double)r->ncrashes; break;
    case M_RECOVERY_OK: *out = r->recovery_ok ? 1.0 : 0.0; break;
    case M_STUCK: *out = (double)r->stuck; break;
    case M_RECOVERY_TIME: *out = (double)r->recovery_time_max_us; break;
    case M_LIVELOCK: *out = r->livelock ? 1.0 : 0.0; break;
    default: return -1;
    }
    return 0;
}
