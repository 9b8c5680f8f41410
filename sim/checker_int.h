/* checker_int.h: the checker's private state, shared by its files
 * (sim/checker.c: items, runs, dues, deliveries, the end; sim/checker_crash.c:
 * crashes, restarts, recovery and stuck handlers; sim/checker_set.c: the
 * compact sets).  Nothing outside the checker includes it.
 *
 * Invariants (every checker function keeps them):
 *  - items: a live item is in items[] at the slot item_map gives; it is
 *    pending iff neither IT_PROCESSED nor IT_DROPPED; npending and hs[].pend
 *    count pending items globally and per consumer.
 *  - runs: an active run's record (struct checker_run) is the caller's, or,
 *    for the id-based calls, in runs[] at the slot run_map gives.  Run
 *    starts are numbered; start k is in cohort k >> CK_COHORT_BITS, and
 *    cohorts[coh_head + j] counts the active runs of cohort coh_base + j
 *    and holds its first start; the first cohort kept has active runs, so
 *    its first start bounds every active run's start from below.
 *  - hs[h].pend_rk is the number of restarts seen when the consumer's
 *    pending count last became positive or when it last started a run,
 *    whichever is later; stuck_n counts the restarts after its latest start
 *    at which it had due work, except those of its open pending interval
 *    [pend_rk, now) and, for a scheduled producer, those from rk_due on.
 *  - recovery: rq[rq_head .. rq_n) are the restarts (with work due) whose
 *    recovery time may still change, in restart order; their candidates
 *    (the earliest start >= the restart of a run that made progress) are
 *    nondecreasing.
 *  - bytes is what the arrays and sets hold by capacity; the id maps are
 *    counted apart (idmap_bytes). */
#ifndef SIM_CHECKER_INT_H
#define SIM_CHECKER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "sim/checker.h"
#include "sim/idmap.h"

#define CK_NIL UINT32_MAX

/* ---- compact sets (checker_set.c) ----------------------------------------- */

/* A set of int64 values as sorted, disjoint arithmetic progressions
 * {lo, lo + step, ..., hi} (step 0: the one value lo == hi).  Values that
 * come in order at a regular spacing (the dues of a schedule) take one
 * progression in all; each irregularity adds one.  The last progression
 * is kept inline (tail) and first, so that the common insert reads and
 * writes the set's first 24 bytes only (one cache line where the set sits
 * in ck_prod).  An empty set's tail is PSET_EMPTY's, lo > hi: a set starts
 * as PSET_EMPTY, not as zeros. */
struct prog {
    int64_t lo, hi, step;
};
struct pset {
    struct prog tail;              /* the last progression; lo > hi: none (the set is empty) */
    struct prog *v;                /* the ones before it */
    size_t n, cap;
};
#define PSET_EMPTY ((struct pset){.tail = {1, 0, 0}})
static inline int pset_has_tail(const struct pset *s) { return s->tail.lo <= s->tail.hi; }
/* Adds x; returns 1 if it was already there.  *bytes follows the capacity. */
int pset_insert(struct pset *s, int64_t x, uint64_t *bytes);
void pset_free(struct pset *s);

/* A set of uint64 ids, about two bytes an id when they are dense: chunks of
 * 2^16 ids, each a sorted array of 16-bit offsets, or a bitmap once it has
 * more than 4096. */
struct idchunk {
    uint64_t hi;                   /* id >> 16 */
    uint16_t *low;                 /* sorted offsets, or a bitmap of 1024 words */
    uint32_t n, cap;               /* cap 0: low is a bitmap */
};
struct idset {
    struct idchunk *c;             /* sorted by hi */
    size_t n, cap;
    size_t last;                   /* the chunk used last (ids mostly come near it) */
};
int idset_has(const struct idset *s, uint64_t id);
/* Adds id (not yet in the set). */
void idset_add(struct idset *s, uint64_t id, uint64_t *bytes);
void idset_free(struct idset *s);

/* ---- state -------------------------------------------------------------------- */

enum {
    IT_PROCESSED = 1,              /* a run that took it committed */
    IT_DROPPED = 2,                /* passed to checker_drop at least once */
    IT_MUTATED = 4                 /* a mutation was applied to it */
};

struct ck_item {
    int64_t origin_us;
    uint32_t consumer;             /* handler instance; the free list's next when free */
    uint32_t k_pub;                /* crashes reported before its publish */
    uint32_t drop_k;               /* its first drop: crashes reported before it */
    int32_t drop_crash;            /* that drop's crash (DROP_CRASH), -1 none */
    uint16_t nactive;              /* PROMISE_UNIT: active runs that took it */
    uint8_t flags;                 /* IT_* */
};
/* Two to a cache line (the table is 64-byte aligned).  Its id is not kept:
 * item_map finds the slot from the id, and while runs hold an item (the
 * only time an overlap names it) its slot is its alone. */
_Static_assert(sizeof(struct ck_item) == 32, "an item's checker record is half a cache line");

enum { HS_STARTED = 1, HS_INPUT = 2 };

/* Per handler instance: one cache line (the table is 64-byte aligned). */
struct ck_h {
    _Alignas(64) int64_t last_start_us; /* valid if HS_STARTED */
    int64_t wake_us;               /* latest wake request not yet due, SIM_NEVER if none */
    uint64_t stuck_n;              /* see the invariants */
    uint32_t tmpl;
    uint32_t prod;                 /* index into prods, CK_NIL for consumers */
    uint32_t pend;                 /* pending items (consumers) */
    uint32_t pend_rk;              /* see the invariants */
    uint32_t log;                  /* its restart ranges in the record window, 0 = none */
    uint32_t last_point;           /* 1 + the last restart that marked it interrupted, 0 none */
    uint32_t inst;                 /* its workflow instance (the world's, read here with the rest) */
    uint8_t flags;                 /* HS_*; HS_INPUT: new input since its last start */
    uint8_t kind;                  /* its handler_def's, so that a publish need not read the world */
};
_Static_assert(sizeof(struct ck_h) == 64, "a handler's checker record is one cache line");

/* Per producer instance (any producer, scheduled or not): three cache
 * lines (the table is 64-byte aligned), the first holding what a start and
 * a commit touch (the committed set's tail), the second what a mutation
 * does (the mutated set's tail), the third the dues PROMISE_UNIT's active
 * runs hold; checker_prefetch counts on this. */
struct ck_prod {
    _Alignas(64) uint32_t h;
    uint32_t leaf;                 /* leaf in the due tree; CK_NIL if unscheduled */
    uint32_t rk_due;               /* the first restart at or after its next unserved due, CK_NIL none */
    /* The walk of its nominal dues, as runs start (scheduled only). */
    int64_t next_due;              /* the next due not yet served, SIM_NEVER none */
    int64_t prev_due;              /* the latest due walked, its miss undecided; -1 none */
    int64_t prev_start_us;         /* the start that served it, SIM_NEVER none */
    struct pset committed, mutated;
    /* PROMISE_UNIT: the dues its active runs serve, with how many runs each:
     * the first in the record itself (one run at a time needs no other
     * read), the rest in adue[k - 1], acnt[k - 1]. */
    int64_t *adue;
    uint32_t *acnt;
    size_t nadue, cadue, cacnt;
    int64_t due0;
    uint32_t cnt0;
};
_Static_assert(sizeof(struct ck_prod) == 192, "a producer's record is three cache lines");
_Static_assert(offsetof(struct ck_prod, committed) + sizeof(struct prog) <= 64, "a commit reads line 1");
_Static_assert(offsetof(struct ck_prod, adue) >= 128, "PROMISE_UNIT's dues are line 3 (checker_prefetch)");
_Static_assert(offsetof(struct ck_prod, mutated) >= 64 && offsetof(struct ck_prod, mutated) + sizeof(struct prog) <= 128,
               "a mutation reads line 2");

/* A range [lo, hi) of restart indices, in a pooled singly linked list. */
struct range_node {
    uint32_t lo, hi;
    uint32_t next;
};

struct group {
    int64_t ep_start_us;
    uint32_t active;
    uint32_t ep_tmpl;              /* template of the run that opened the episode */
};

struct doubled {
    uint64_t key;                  /* the item's slot (held while in here), or the due */
    uint32_t prod;                 /* UINT32_MAX for an item, else the producer's handler */
    uint32_t tmpl;
    int64_t start_us;
};

static inline const uint32_t *ck_run_items(const struct checker_run *r)
{
    return r->n > 1 ? r->items : &r->item;
}

#define CK_COHORT_BITS 8

struct cohort {
    int64_t first_us;              /* its first start */
    uint64_t active;               /* its runs still active */
};

/* A crash not yet restarted. */
struct ck_open {
    uint32_t k;                    /* its index */
    int target;
    uint32_t index;
    int32_t int_head;              /* handlers whose runs it interrupted, -1 none */
};

struct interrupted {
    uint32_t handler;
    int32_t next;                  /* -1 ends the list; the free list's next when free */
};

/* A restart with work due whose recovery time may still change. */
struct ck_recov {
    int64_t at_us;
    int64_t cand_us;               /* earliest progress start >= at_us so far, SIM_NEVER none */
    uint32_t k;                    /* its crash */
};

struct checker {
    const struct world *w;
    const struct scenario *scn;
    enum promise promise;
    int64_t now_us;
    int finished;
    uint64_t bytes;

    struct metrics *tm;            /* [ntmpl]; hists live here and in total */
    struct metrics total;          /* only the hists and wakeups during the run */

    struct ck_item *items;         /* live items; free slots chained by consumer */
    uint32_t items_cap, items_hw, items_free;
    struct idwin item_map;
    uint64_t nitems;               /* published so far */
    uint64_t npending;

    struct ck_h *hs;               /* [nh] */
    uint32_t *prod_of;             /* [nh] each one's hs[].prod, four bytes a handler: what a start's
                                      prefetch reads to find its producer's record (prefetching only) */
    struct ck_prod *prods;
    uint32_t nprods;

    /* Next unserved due of each scheduled producer not yet past a restart,
     * as a min tournament tree over leaves [tree_n, 2 tree_n); built at the
     * first restart, since only restarts ask for it. */
    int64_t *tree;
    uint32_t tree_n;
    uint32_t nsched;
    uint32_t *sched_p;             /* [nsched] producer of each leaf */
    int tree_on;
    uint32_t n_overdue;            /* producers whose next unserved due a restart passed */

    struct group *groups;
    uint32_t ngroups;
    struct doubled *dbl;
    size_t ndbl, dbl_cap;

    struct checker_run *runs;      /* the id-based calls' records; free slots chained by handler (id 0) */
    uint32_t runs_cap, runs_hw, runs_free;
    struct idmap run_map;
    uint64_t nstarts, nactive;
    struct cohort *cohorts;
    size_t coh_head, coh_n, coh_cap;
    uint64_t coh_base;             /* the cohort at coh_head */

    /* Crashes. */
    uint64_t ncrashes;             /* reported so far */
    struct crash_rec *crashes;     /* records of the first CHECKER_CRASH_RECORDS */
    uint8_t *crash_due;            /* [record] work was due at its restart */
    size_t crashes_cap;
    struct ck_open *open;          /* not yet restarted, in crash order */
    uint32_t nopen;
    size_t open_cap;
    int64_t de_crash;              /* crash that current double effects go to, -1 */
    uint64_t nrestarts;
    uint32_t *restart_crash;       /* [restarts in the record window] crash of each */
    size_t restart_cap;
    struct interrupted *ints;
    uint32_t nints, ints_free;
    size_t ints_cap;
    struct range_node *nodes;      /* [0] unused */
    uint32_t nnodes, free_node;
    size_t nodes_cap;
    int64_t *lost_diff;            /* [CHECKER_CRASH_RECORDS + 1] once a crash happened */
    struct ck_recov *rq;
    size_t rq_head, rq_n, rq_cap;
    /* Every crash, for the whole-run metrics. */
    int any_lost, any_de, any_rt_bad;
    int64_t rt_max_us;

    /* Deliveries: attempted and not (yet) delivered, id -> template; and
     * the ids delivered. */
    struct idmap dl_pending;
    struct idset dl_done;
};

/* checker.c */
void ck_advance(struct checker *c, int64_t now_us);
/* Every run that is active now started at or after this. */
int64_t ck_oldest_start(const struct checker *c);
static inline uint32_t ck_tmpl(const struct checker *c, uint32_t h) { return c->hs[h].tmpl; }
/* Grows an array with capacity *cap, counting the bytes. */
void *ck_grow(struct checker *c, void *p, size_t elem, size_t *cap, size_t need);
/* The first nominal due not served by a run that already started. */
int64_t ck_next_unserved_due(const struct checker *c, uint32_t h);

/* checker_crash.c */
void ck_crash_free(struct checker *c);
/* Sets a leaf of the tree of next unserved dues; the minima above it follow,
 * as far up as one changes. */
void ck_tree_set(struct checker *c, uint32_t leaf, int64_t v);
/* Pending-work bookkeeping for stuck handlers. */
void ck_pend_inc(struct checker *c, uint32_t h);
void ck_pend_dec(struct checker *c, uint32_t h);
/* Handler h starts a run: earlier restarts can no longer make it stuck. */
void ck_stuck_started(struct checker *c, uint32_t h);
/* A run of h ended crashed (the latest crash interrupted it). */
void ck_note_interrupted(struct checker *c, uint32_t h);
/* The crash a crash-caused drop belongs to: the latest one still down, or
 * failing that the latest one; -1 none. */
int32_t ck_drop_crash(const struct checker *c);
/* An item's account is final: not processed by the end (dropped or
 * stranded) means lost, for the crashes it was pending at or dropped by. */
void ck_lost_range(struct checker *c, uint32_t lo, uint32_t hi, int32_t drop_crash);
/* A mutation applied twice: the crash it follows hears of it. */
void ck_double_effect_crash(struct checker *c);
/* A run that made progress (committed having taken work, or a producer's)
 * started at start_us. */
void ck_progress(struct checker *c, int64_t start_us);
/* Recovery times that can no longer change are settled. */
void ck_recovery_settle(struct checker *c);
/* The end: every crash's record and the whole-run crash metrics. */
void ck_crash_finish(struct checker *c, struct checker_result *out);

#endif
