/* checker.c: the metrics of spec section 5, derived from ground truth only.
 *
 * docs/metrics.md is the user-facing definition of every number computed
 * here; this file follows it exactly.  The checker sees the facts the
 * engine reports, in time order, and the scenario (schedules, the recovery
 * bound); it never sees the policy.
 *
 * It works online, with memory that follows live state (checker_int.h has
 * the state and its invariants):
 *  - an item's record lives until the engine retires it; its account
 *    (processed, dropped, stranded, the crashes it was lost at) is settled
 *    then, or at the end for the items still live;
 *  - a run's record lives while it is active;
 *  - a scheduled producer's dues are walked as its runs start (a due is
 *    served by the first run that starts at or after it), so lateness,
 *    coalesced and missed need no list of starts; the dues it committed and
 *    mutated are compact sets (checker_set.c), one progression for a
 *    schedule served in order;
 *  - deliveries keep the ids attempted and not yet delivered, and the
 *    delivered ones in a compact id set;
 *  - crashes keep their records for the first CHECKER_CRASH_RECORDS and
 *    aggregates for all (checker_crash.c).
 *
 * Cost: every call is O(1) amortised plus the size of its item list, except
 * a scheduled producer's start (O(dues it serves) schedule steps, and once a
 * restart happened O(log P) for the tree of next dues), a restart (O(crashes
 * still down + runs it interrupted + producers whose due it passes), and
 * O(P) once, at the first, to build the tree), and a due committed out of
 * order (O(log n + n) in its set of n progressions).  checker_finish is
 * O(live items + handlers + dues left + crash records). */
#include "sim/checker_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/util.h"

/* ---- small helpers ----------------------------------------------------------- */

void *ck_grow(struct checker *c, void *p, size_t elem, size_t *cap, size_t need)
{
    size_t old = *cap;
    p = xgrow(p, elem, cap, need);
    c->bytes += (*cap - old) * elem;
    return p;
}

void ck_advance(struct checker *c, int64_t now_us)
{
    SIM_ASSERT(!c->finished);
    SIM_ASSERT(now_us >= c->now_us);   /* ground truth comes in time order */
    c->now_us = now_us;
}

/* A mutation was applied to a unit that already had it. */
static void double_effect(struct checker *c, uint32_t tmpl)
{
    c->tm[tmpl].double_effects++;
    ck_double_effect_crash(c);
}

/* ---- the next unserved due of scheduled producers ------------------------------ */

/* The first nominal due instant not served by a run that already started:
 * a due d is served by the first run starting at >= d, so after a start at
 * L every due <= L is served. */
int64_t ck_next_unserved_due(const struct checker *c, uint32_t h)
{
    const struct schedule *sc = &world_tdef(c->w, ck_tmpl(c, h))->sched;
    if (c->hs[h].flags & HS_STARTED)
        return schedule_next(c->scn, sc, c->hs[h].last_start_us, 0);
    return schedule_next(c->scn, sc, 0, 1);
}

/* ---- items ---------------------------------------------------------------------- */

static struct ck_item *item_find(const struct checker *c, uint64_t item)
{
    uint32_t slot = idwin_get(&c->item_map, item);
    SIM_ASSERT(slot != IDMAP_NONE); /* published and not retired */
    return &c->items[slot];
}

static uint32_t item_alloc(struct checker *c)
{
    uint32_t slot = c->items_free;
    if (slot != CK_NIL) {
        c->items_free = c->items[slot].consumer;
        if (c->items_free != CK_NIL) /* the next one's link, read at the next publish */
            sim_prefetch(&c->items[c->items_free]);
        return slot;
    }
    size_t cap = c->items_cap, old = cap;
    c->items = xgrow_lines(c->items, sizeof *c->items, &cap, (size_t)c->items_hw + 1, c->items_hw);
    c->bytes += (cap - old) * sizeof *c->items;
    SIM_ASSERT(cap < UINT32_MAX);
    c->items_cap = (uint32_t)cap;
    return c->items_hw++;
}

/* An item that will never be processed now: dropped, or stranded at the end
 * (until = the crashes reported by then). */
static void item_settle(struct checker *c, const struct ck_item *it)
{
    if (it->flags & IT_PROCESSED)
        return;
    struct metrics *m = &c->tm[ck_tmpl(c, it->consumer)];
    /* Never processed: its latency is censored (+infinity, docs/metrics.md). */
    hist_add_censored(&m->latency, 1);
    hist_add_censored(&c->total.latency, 1);
    if (it->flags & IT_DROPPED) {
        m->dropped++;
        ck_lost_range(c, it->k_pub, it->drop_k, it->drop_crash);
        return;
    }
    m->stranded++;
    SIM_ASSERT(c->ncrashes < UINT32_MAX);
    ck_lost_range(c, it->k_pub, (uint32_t)c->ncrashes, -1);
}

uint32_t checker_publish(struct checker *c, uint64_t item, uint32_t consumer, int64_t origin_us, int64_t now_us)
{
    ck_advance(c, now_us);
    SIM_ASSERT(item == c->nitems);     /* dense ids in publish order */
    SIM_ASSERT(consumer < c->w->nh);
    SIM_ASSERT(c->hs[consumer].kind == H_CONSUMER);
    SIM_ASSERT(origin_us >= 0);
    SIM_ASSERT(origin_us <= now_us);
    SIM_ASSERT(c->ncrashes < UINT32_MAX);
    uint32_t slot = item_alloc(c);
    c->items[slot] = (struct ck_item){.origin_us = origin_us, .consumer = consumer,
                                      .k_pub = (uint32_t)c->ncrashes, .drop_crash = -1};
    idwin_put(&c->item_map, item, slot);
    c->nitems++;
    c->tm[ck_tmpl(c, consumer)].published++;
    ck_pend_inc(c, consumer);
    c->hs[consumer].flags |= HS_INPUT;
    return slot;
}

void checker_drop(struct checker *c, uint64_t item, enum drop_cause cause, int64_t now_us)
{
    ck_advance(c, now_us);
    SIM_ASSERT(item < c->nitems);
    struct ck_item *it = item_find(c, item);
    if (it->flags & IT_DROPPED)
        return;
    it->flags |= IT_DROPPED;
    it->drop_k = (uint32_t)c->ncrashes;
    it->drop_crash = cause == DROP_CRASH ? ck_drop_crash(c) : -1;
    if (!(it->flags & IT_PROCESSED))
        ck_pend_dec(c, it->consumer);
}

void checker_item_retire(struct checker *c, uint64_t item, int64_t now_us)
{
    ck_advance(c, now_us);
    uint32_t slot = idwin_get(&c->item_map, item);
    SIM_ASSERT(slot != IDMAP_NONE);
    struct ck_item *it = &c->items[slot];
    SIM_ASSERT(it->flags & (IT_PROCESSED | IT_DROPPED)); /* not pending */
    SIM_ASSERT(it->nactive == 0);                         /* no run holds it */
    item_settle(c, it);
    idwin_del(&c->item_map, item);
    it->consumer = c->items_free;
    c->items_free = slot;
}

/* ---- lifecycle ---------------------------------------------------------------------- */

struct checker *checker_new(const struct world *w, enum promise promise)
{
    struct checker *c = xcalloc(1, sizeof *c);
    c->w = w;
    c->scn = w->scn;
    c->promise = promise;
    c->de_crash = -1;
    c->items_free = c->runs_free = CK_NIL;
    c->tm = xcalloc(w->ntmpl, sizeof *c->tm);
    c->hs = xmalloc_aligned(64, (w->nh ? w->nh : 1) * sizeof *c->hs);
    for (uint32_t h = 0; h < w->nh; h++) {
        const struct handler_def *hd = world_hdef(w, h);
        c->hs[h] = (struct ck_h){.wake_us = SIM_NEVER, .tmpl = w->h[h].tmpl, .prod = CK_NIL,
                                 .inst = w->h[h].inst, .kind = (uint8_t)hd->kind};
        if (hd->kind != H_PRODUCER)
            continue;
        c->hs[h].prod = c->nprods++;
        if (hd->sched.kind != SCHED_NONE)
            c->nsched++;
    }
    c->prod_of = xmalloc((w->nh ? w->nh : 1) * sizeof *c->prod_of);
    for (uint32_t h = 0; h < w->nh; h++)
        c->prod_of[h] = c->hs[h].prod;
    c->prods = xmalloc_aligned(64, (c->nprods ? c->nprods : 1) * sizeof *c->prods);
    c->sched_p = xcalloc(c->nsched, sizeof *c->sched_p);
    uint32_t k = 0;
    for (uint32_t h = 0; h < w->nh; h++) {
        uint32_t p = c->hs[h].prod;
        if (p == CK_NIL)
            continue;
        struct ck_prod *pr = &c->prods[p];
        *pr = (struct ck_prod){.h = h, .leaf = CK_NIL, .rk_due = CK_NIL, .next_due = SIM_NEVER, .prev_due = -1,
                               .prev_start_us = SIM_NEVER, .committed = PSET_EMPTY, .mutated = PSET_EMPTY};
        const struct schedule *sc = &world_hdef(w, h)->sched;
        if (sc->kind != SCHED_NONE) {
            pr->leaf = k;
            c->sched_p[k++] = p;
            pr->next_due = schedule_next(c->scn, sc, 0, 1);
        }
    }
    switch (promise) {
    case PROMISE_NONE: c->ngroups = 0; break;
    case PROMISE_HANDLER: c->ngroups = w->nh; break;
    case PROMISE_WORKFLOW: c->ngroups = w->ninst; break;
    case PROMISE_UNIT: c->ngroups = 0; break;
    }
    c->groups = xcalloc(c->ngroups, sizeof *c->groups);
    c->bytes = (uint64_t)w->nh * (sizeof *c->hs + sizeof *c->prod_of) + (uint64_t)c->nprods * sizeof *c->prods +
               (uint64_t)c->ngroups * sizeof *c->groups + (uint64_t)w->ntmpl * sizeof *c->tm;
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
    free(c->items);
    idwin_free(&c->item_map);
    free(c->hs);
    free(c->prod_of);
    for (uint32_t p = 0; p < c->nprods; p++) {
        pset_free(&c->prods[p].committed);
        pset_free(&c->prods[p].mutated);
        free(c->prods[p].adue);
        free(c->prods[p].acnt);
    }
    free(c->prods);
    free(c->sched_p);
    free(c->groups);
    free(c->dbl);
    for (uint32_t i = 0; i < c->runs_hw; i++)
        if (c->runs[i].id && c->runs[i].n > 1)
            free(c->runs[i].items);
    free(c->runs);
    free(c->cohorts);
    idmap_free(&c->run_map);
    ck_crash_free(c);
    idmap_free(&c->dl_pending);
    idset_free(&c->dl_done);
    free(c);
}

uint64_t checker_bytes(const struct checker *c)
{
    return c->bytes + idwin_bytes(&c->item_map) + idmap_bytes(&c->run_map) + idmap_bytes(&c->dl_pending);
}

uint64_t checker_item_bytes(void)
{
    return sizeof(struct ck_item) + 4 * sizeof(uint32_t); /* its id map: a window ring, a quarter full at worst */
}

uint64_t checker_handler_bytes(void)
{
    return sizeof(struct ck_h) + sizeof(uint32_t) + sizeof(struct group);
}

/* ---- runs: overlaps and units ---------------------------------------------------- */

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
    c->dbl = ck_grow(c, c->dbl, sizeof *c->dbl, &c->dbl_cap, c->ndbl + 1);
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

/* PROMISE_UNIT, a producer's due: a run takes (delta = 1) or releases it.
 * Returns 1 if, on taking, another active run already held it. */
static int64_t *adue_at(struct ck_prod *pr, size_t k) { return k ? &pr->adue[k - 1] : &pr->due0; }
static uint32_t *acnt_at(struct ck_prod *pr, size_t k) { return k ? &pr->acnt[k - 1] : &pr->cnt0; }

static int due_hold(struct checker *c, uint32_t h, uint32_t p, uint32_t tmpl, int64_t due_us, int delta,
                    int64_t now_us)
{
    struct ck_prod *pr = &c->prods[p];
    size_t k = 0;
    while (k < pr->nadue && *adue_at(pr, k) != due_us)
        k++;
    if (delta > 0) {
        if (k == pr->nadue) {
            if (k > 0) {
                pr->adue = ck_grow(c, pr->adue, sizeof *pr->adue, &pr->cadue, k);
                pr->acnt = ck_grow(c, pr->acnt, sizeof *pr->acnt, &pr->cacnt, k);
            }
            *adue_at(pr, k) = due_us;
            *acnt_at(pr, k) = 0;
            pr->nadue++;
        }
        uint32_t *cnt = acnt_at(pr, k);
        int shared = *cnt > 0;
        if (++*cnt == 2)
            doubled_inc(c, h, (uint64_t)due_us, tmpl, now_us);
        return shared;
    }
    SIM_ASSERT(k < pr->nadue && *acnt_at(pr, k) > 0);
    uint32_t *cnt = acnt_at(pr, k);
    if ((*cnt)-- == 2)
        doubled_dec(c, h, (uint64_t)due_us, now_us);
    if (*cnt == 0) {
        *adue_at(pr, k) = *adue_at(pr, pr->nadue - 1);
        *cnt = *acnt_at(pr, pr->nadue - 1);
        pr->nadue--;
    }
    return 0;
}

/* PROMISE_UNIT: a run takes (delta = 1) or releases (delta = -1) its units.
 * Returns 1 if, on taking, another active run already held one of them. */
static int units_hold(struct checker *c, const struct checker_run *r, uint32_t tmpl, int delta, int64_t now_us)
{
    int shared = 0;
    const uint32_t *slots = ck_run_items(r);
    for (uint32_t i = 0; i < r->n; i++) {
        struct ck_item *it = &c->items[slots[i]];
        if (delta > 0) {
            SIM_ASSERT(it->nactive < UINT16_MAX);
            shared |= it->nactive > 0;
            if (++it->nactive == 2)
                doubled_inc(c, UINT32_MAX, slots[i], tmpl, now_us);
        } else {
            SIM_ASSERT(it->nactive > 0);
            if (it->nactive-- == 2)
                doubled_dec(c, UINT32_MAX, slots[i], now_us);
        }
    }
    if (r->prod == CK_NIL || r->due_us < 0)
        return shared;
    return due_hold(c, r->handler, r->prod, tmpl, r->due_us, delta, now_us) | shared;
}

static uint32_t group_of(const struct checker *c, uint32_t h)
{
    return c->promise == PROMISE_WORKFLOW ? c->hs[h].inst : h;
}

/* The lines of producer p's record that a start or an end reads: the
 * first, and under PROMISE_UNIT the third (the dues its active runs hold). */
static void prefetch_prod(const struct checker *c, uint32_t p)
{
    sim_prefetch(&c->prods[p]);
    if (c->promise == PROMISE_UNIT)
        sim_prefetch((const char *)&c->prods[p] + 128);
}

/* A start reads the handler's record, its group and a producer's record; a
 * mutation, the item and the producer's mutated set (ck_prod's second
 * line); an end, the item, the consumer's pending count, the producer's
 * record and the run's group (under the workflow promise, found through
 * the handler's record). */
void checker_prefetch(const struct checker *c, uint32_t handler, uint32_t inst, uint32_t prod, uint32_t item,
                      enum ck_prefetch what)
{
    if (item < c->items_hw)
        sim_prefetch(&c->items[item]);
    if (prod < c->nprods && what == CK_PREFETCH_MUTATION)
        sim_prefetch((const char *)&c->prods[prod] + 64);
    else if (prod < c->nprods)
        prefetch_prod(c, prod);
    if (what == CK_PREFETCH_MUTATION || handler >= c->w->nh)
        return;
    if (item < c->items_hw || what == CK_PREFETCH_START ||
        c->promise == PROMISE_WORKFLOW) /* an end finds its group there */
        sim_prefetch(&c->hs[handler]);
    if (what == CK_PREFETCH_START)
        sim_prefetch(&c->prod_of[handler]); /* for checker_prefetch_deps, if it is a producer */
    uint32_t g = c->promise == PROMISE_WORKFLOW ? inst : handler; /* a workflow's group: its instance's */
    if (g < c->ngroups)
        sim_prefetch(&c->groups[g]);
}

void checker_prefetch_deps(const struct checker *c, uint32_t handler, uint32_t inst, int producer_start)
{
    if (handler >= c->w->nh)
        return;
    if (producer_start && c->prod_of[handler] < c->nprods)
        prefetch_prod(c, c->prod_of[handler]); /* a producer's start walks its dues */
    if (c->promise == PROMISE_WORKFLOW && inst < c->ngroups)
        sim_prefetch(&c->groups[inst]);
}

/* An item's retirement reads its place in item_map and its record. */
void checker_prefetch_item(const struct checker *c, uint64_t item, uint32_t slot)
{
    idwin_prefetch(&c->item_map, item);
    if (slot < c->items_hw)
        sim_prefetch(&c->items[slot]);
}

/* ---- runs: records ------------------------------------------------------------------ */

/* A run starts: counted in the cohort of its start. */
static uint64_t cohort_join(struct checker *c, int64_t now_us)
{
    uint64_t k = c->nstarts++ >> CK_COHORT_BITS;
    if (c->coh_head == c->coh_n) {
        c->coh_head = c->coh_n = 0;
        c->coh_base = k;
    }
    if (k >= c->coh_base + (c->coh_n - c->coh_head)) {
        if (c->coh_head > 64 && c->coh_head * 2 > c->coh_n) {
            memmove(c->cohorts, c->cohorts + c->coh_head, (c->coh_n - c->coh_head) * sizeof *c->cohorts);
            c->coh_n -= c->coh_head;
            c->coh_head = 0;
        }
        c->cohorts = ck_grow(c, c->cohorts, sizeof *c->cohorts, &c->coh_cap, c->coh_n + 1);
        c->cohorts[c->coh_n++] = (struct cohort){.first_us = now_us};
    }
    c->cohorts[c->coh_head + (k - c->coh_base)].active++;
    c->nactive++;
    return k;
}

/* A run ends: the cohorts at the front that have no active run go. */
static void cohort_leave(struct checker *c, uint64_t k)
{
    SIM_ASSERT(k >= c->coh_base);
    struct cohort *co = &c->cohorts[c->coh_head + (k - c->coh_base)];
    SIM_ASSERT(co->active > 0);
    co->active--;
    c->nactive--;
    while (c->coh_head < c->coh_n && c->cohorts[c->coh_head].active == 0) {
        c->coh_head++;
        c->coh_base++;
    }
}

int64_t ck_oldest_start(const struct checker *c)
{
    return c->nactive ? c->cohorts[c->coh_head].first_us : c->now_us;
}

/* The run's items, as item slots. */
static void run_take(struct checker *c, struct checker_run *r, uint32_t handler, const uint64_t *taken, uint32_t n)
{
    uint32_t *dst = &r->item;
    if (n > 1) {
        r->items = xmalloc((size_t)n * sizeof *r->items);
        c->bytes += (uint64_t)n * sizeof *r->items;
        dst = r->items;
    }
    for (uint32_t i = 0; i < n; i++) {
        SIM_ASSERT(taken[i] < c->nitems);
        uint32_t slot = idwin_get(&c->item_map, taken[i]);
        SIM_ASSERT(slot != IDMAP_NONE);
        SIM_ASSERT(c->items[slot].consumer == handler);
        dst[i] = slot;
    }
    r->n = n;
}

static void run_release(struct checker *c, struct checker_run *r)
{
    cohort_leave(c, r->cohort);
    if (r->n > 1) {
        c->bytes -= (uint64_t)r->n * sizeof *r->items;
        free(r->items);
    }
    r->n = 0;
}

/* The id-based calls: records in the checker's own table. */
static struct checker_run *run_own(struct checker *c, uint64_t id)
{
    SIM_ASSERT(id != 0);
    SIM_ASSERT(idmap_get(&c->run_map, id) == IDMAP_NONE); /* a run starts once */
    uint32_t slot = c->runs_free;
    if (slot != CK_NIL) {
        c->runs_free = c->runs[slot].handler;
        if (c->runs_free != CK_NIL) /* the next one's link, read at the next start */
            sim_prefetch(&c->runs[c->runs_free]);
    } else {
        size_t cap = c->runs_cap;
        c->runs = ck_grow(c, c->runs, sizeof *c->runs, &cap, (size_t)c->runs_hw + 1);
        SIM_ASSERT(cap < UINT32_MAX);
        c->runs_cap = (uint32_t)cap;
        slot = c->runs_hw++;
    }
    idmap_put(&c->run_map, id, slot);
    return &c->runs[slot];
}

static struct checker_run *run_find(const struct checker *c, uint64_t id)
{
    uint32_t slot = idmap_get(&c->run_map, id);
    SIM_ASSERT(slot != IDMAP_NONE); /* started and not ended */
    return &c->runs[slot];
}

static void run_disown(struct checker *c, struct checker_run *r, uint64_t id)
{
    uint32_t slot = (uint32_t)(r - c->runs);
    idmap_del(&c->run_map, id);
    *r = (struct checker_run){.handler = c->runs_free};
    c->runs_free = slot;
}

/* ---- runs: dues ----------------------------------------------------------------------- */

/* A due is missed when no run starts in [due, due + period): the serving
 * run (the first start >= due) is at or after due + period, or absent. */
static void due_decide(struct ck_prod *pr, struct metrics *m, int64_t period_us)
{
    int64_t d = pr->prev_due, s = pr->prev_start_us;
    SIM_ASSERT(period_us > 0);
    if (s == SIM_NEVER || (period_us <= INT64_MAX - d && s >= d + period_us))
        m->missed++;
}

/* Walks the producer's dues up to `upto` (inclusive), each served by the run
 * that starts at start_us (SIM_NEVER: by none, at the end).  Its period is
 * the gap to the next due, so a due's miss is decided when the next one is
 * walked; the last one's at the end, with schedule_period_at. */
static void dues_walk(struct checker *c, struct ck_prod *pr, int64_t upto, int64_t start_us)
{
    const struct schedule *sc = &world_tdef(c->w, ck_tmpl(c, pr->h))->sched;
    struct metrics *m = &c->tm[ck_tmpl(c, pr->h)];
    int first = 1;
    while (pr->next_due != SIM_NEVER && pr->next_due <= upto) {
        int64_t d = pr->next_due;
        if (pr->prev_due >= 0)
            due_decide(pr, m, d - pr->prev_due);
        m->dues++;
        pr->prev_due = d;
        pr->prev_start_us = start_us;
        if (start_us != SIM_NEVER) {
            hist_add(&m->lateness, start_us - d);
            hist_add(&c->total.lateness, start_us - d);
            if (!first)
                m->coalesced++;
        } else {
            /* Never served: censored at the end, it counts as +infinity. */
            hist_add_censored(&m->lateness, 1);
            hist_add_censored(&c->total.lateness, 1);
        }
        first = 0;
        pr->next_due = schedule_next(c->scn, sc, d, 0);
    }
}

/* A producer starts: its dues up to now are served; once the tree of next
 * unserved dues exists, its leaf moves on. */
static void prod_started(struct checker *c, uint32_t h, int64_t now_us)
{
    uint32_t p = c->hs[h].prod;
    if (p == CK_NIL || c->prods[p].leaf == CK_NIL)
        return;
    struct ck_prod *pr = &c->prods[p];
    dues_walk(c, pr, now_us, now_us);
    if (pr->rk_due != CK_NIL) {
        pr->rk_due = CK_NIL;
        c->n_overdue--;
    }
    if (c->tree_on)
        ck_tree_set(c, pr->leaf, ck_next_unserved_due(c, h));
}

/* ---- runs: facts ------------------------------------------------------------------------ */

void checker_run_start_at(struct checker *c, struct checker_run *r, uint64_t run, uint32_t handler,
                          enum run_reason reason, int64_t due_us, const uint64_t *taken, uint32_t n,
                          int64_t now_us)
{
    ck_advance(c, now_us);
    SIM_ASSERT(run != 0);
    SIM_ASSERT(handler < c->w->nh);
    SIM_ASSERT((int)reason >= 0);
    SIM_ASSERT(reason < REASON_COUNT);
    SIM_ASSERT(n == 0 || taken != NULL);
    struct ck_h *s = &c->hs[handler];
    uint32_t tmpl = s->tmpl;
    struct metrics *m = &c->tm[tmpl];

    *r = (struct checker_run){.start_us = now_us, .due_us = due_us, .id = run, .handler = handler,
                              .tmpl = tmpl, .prod = s->prod, .cohort = cohort_join(c, now_us)};
    run_take(c, r, handler, taken, n);

    m->runs++;
    if (s->prod == CK_NIL) {
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

    s->flags = (uint8_t)((s->flags | HS_STARTED) & ~HS_INPUT);
    s->last_start_us = now_us;
    ck_stuck_started(c, handler);
    prod_started(c, handler, now_us);

    if (c->ngroups)
        group_start(c, group_of(c, handler), tmpl, now_us);
    if (c->promise == PROMISE_UNIT && units_hold(c, r, tmpl, 1, now_us))
        m->overlap_runs++;
}

void checker_wake_request(struct checker *c, uint32_t handler, int64_t wake_us, int64_t now_us)
{
    ck_advance(c, now_us);
    SIM_ASSERT(handler < c->w->nh);
    /* The script restates its wish at every run: the latest request
     * replaces an earlier one that has not come due. */
    c->hs[handler].wake_us = wake_us;
}

void checker_run_start(struct checker *c, uint64_t run, uint32_t handler, enum run_reason reason,
                       int64_t due_us, uint64_t resume_of, const uint64_t *taken, uint32_t n,
                       int64_t now_us)
{
    (void)resume_of;               /* the engine passes a resumed run's items explicitly */
    checker_run_start_at(c, run_own(c, run), run, handler, reason, due_us, taken, n, now_us);
}

void checker_mutated_at(struct checker *c, struct checker_run *r, int64_t now_us)
{
    ck_advance(c, now_us);
    SIM_ASSERT(r->id != 0);
    uint32_t tmpl = r->tmpl;
    const uint32_t *slots = ck_run_items(r);
    for (uint32_t i = 0; i < r->n; i++) {
        struct ck_item *it = &c->items[slots[i]];
        if (it->flags & IT_MUTATED)
            double_effect(c, tmpl);
        it->flags |= IT_MUTATED;
    }
    uint32_t p = r->prod;
    if (p != CK_NIL && r->due_us >= 0 && pset_insert(&c->prods[p].mutated, r->due_us, &c->bytes))
        double_effect(c, tmpl);
}

void checker_mutated(struct checker *c, uint64_t run, int64_t now_us)
{
    checker_mutated_at(c, run_find(c, run), now_us);
}

/* A committed run's items: processed once, duplicates after. */
static void commit_items(struct checker *c, const struct checker_run *r, struct metrics *m, int64_t now_us)
{
    const uint32_t *slots = ck_run_items(r);
    for (uint32_t i = 0; i < r->n; i++) {
        struct ck_item *it = &c->items[slots[i]];
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
            ck_pend_dec(c, r->handler);
    }
}

void checker_run_end_at(struct checker *c, struct checker_run *r, enum run_outcome out, int64_t now_us)
{
    ck_advance(c, now_us);
    SIM_ASSERT(r->id != 0);
    uint32_t h = r->handler;
    uint32_t tmpl = r->tmpl;
    struct metrics *m = &c->tm[tmpl];
    uint32_t p = r->prod;

    if (c->ngroups)
        group_end(c, group_of(c, h), now_us);
    if (c->promise == PROMISE_UNIT)
        units_hold(c, r, tmpl, -1, now_us);

    int progress = 0;
    switch (out) {
    case OUT_COMMITTED:
        commit_items(c, r, m, now_us);
        if (p != CK_NIL && r->due_us >= 0 && pset_insert(&c->prods[p].committed, r->due_us, &c->bytes))
            m->duplicates++;
        progress = r->n > 0 || p != CK_NIL;
        break;
    case OUT_FAILED:
        m->runs_failed++;
        break;
    case OUT_CRASHED:
        m->runs_crashed++;
        ck_note_interrupted(c, h);
        break;
    case OUT_CUTOFF:
        m->runs_cutoff++;
        break;
    default:
        SIM_ASSERT(0 && "unknown run outcome");
    }
    int64_t start_us = r->start_us;
    run_release(c, r);
    r->id = 0;
    if (progress)
        ck_progress(c, start_us);
    ck_recovery_settle(c);
}

void checker_run_end(struct checker *c, uint64_t run, enum run_outcome out, int64_t now_us)
{
    struct checker_run *r = run_find(c, run);
    checker_run_end_at(c, r, out, now_us);
    run_disown(c, r, run);
}

/* ---- deliveries and wake-ups ------------------------------------------------------------- */

void checker_delivery(struct checker *c, uint32_t handler, uint64_t id, int ok, int64_t now_us)
{
    SIM_ASSERT(!c->finished);
    SIM_ASSERT(handler < c->w->nh);
    ck_advance(c, now_us);
    uint32_t tmpl = ck_tmpl(c, handler);
    /* The first attempt of an id names its template (for undelivered). */
    int delivered = idset_has(&c->dl_done, id);
    if (!delivered && idmap_get(&c->dl_pending, id) == IDMAP_NONE)
        idmap_put(&c->dl_pending, id, tmpl);
    if (!ok)
        return;
    struct metrics *m = &c->tm[tmpl];
    m->deliveries++;
    if (delivered) {
        m->dup_deliveries++;
        return;
    }
    idmap_del(&c->dl_pending, id);
    idset_add(&c->dl_done, id, &c->bytes);
}

void checker_wakeups(struct checker *c, uint64_t n)
{
    SIM_ASSERT(!c->finished);
    c->total.wakeups += n;
}

/* ---- the end ------------------------------------------------------------------------------- */

/* The dues no run served, to the horizon, and the last one's miss. */
static void finish_dues(struct checker *c)
{
    for (uint32_t k = 0; k < c->nsched; k++) {
        struct ck_prod *pr = &c->prods[c->sched_p[k]];
        dues_walk(c, pr, INT64_MAX, SIM_NEVER);
        if (pr->prev_due >= 0)
            due_decide(pr, &c->tm[ck_tmpl(c, pr->h)],
                       schedule_period_at(c->scn, &world_tdef(c->w, ck_tmpl(c, pr->h))->sched, pr->prev_due));
    }
}

static void finish_sums(struct checker *c)
{
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
}

void checker_finish(struct checker *c, int64_t end_us, struct checker_result *out)
{
    ck_advance(c, end_us);
    memset(out, 0, sizeof *out); /* padding too: results travel as bytes (sim/sweep.c) */

    /* Runs still active at the end stop counting there. */
    for (uint32_t g = 0; g < c->ngroups; g++)
        if (c->groups[g].active >= 2)
            c->tm[c->groups[g].ep_tmpl].overlaps_us += end_us - c->groups[g].ep_start_us;
    for (size_t i = 0; i < c->ndbl; i++)
        c->tm[c->dbl[i].tmpl].overlaps_us += end_us - c->dbl[i].start_us;

    finish_dues(c);
    for (size_t i = 0; i < c->dl_pending.cap; i++)
        if (c->dl_pending.v[i].key)
            c->tm[c->dl_pending.v[i].val].undelivered++;
    for (size_t m = 0; m < c->item_map.old.cap; m++)
        if (c->item_map.old.v[m].key)
            item_settle(c, &c->items[c->item_map.old.v[m].val]);
    for (size_t m = 0; m < c->item_map.cap; m++)
        if (c->item_map.ring[m] != IDMAP_NONE)
            item_settle(c, &c->items[c->item_map.ring[m]]);
    ck_crash_finish(c, out);
    finish_sums(c);

    /* Hand everything over; the checker keeps nothing the result owns. */
    out->total = c->total;
    hist_init(&c->total.latency);
    hist_init(&c->total.lateness);
    out->ntmpl = c->w->ntmpl;
    out->per_tmpl = c->tm;
    c->tm = xcalloc(c->w->ntmpl, sizeof *c->tm);
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
    case M_CRASHES: *out = (double)r->crashes_total; break;
    case M_RECOVERY_OK: *out = r->recovery_ok ? 1.0 : 0.0; break;
    case M_STUCK: *out = (double)r->stuck; break;
    case M_RECOVERY_TIME: *out = (double)r->recovery_time_max_us; break;
    case M_LIVELOCK: *out = r->livelock ? 1.0 : 0.0; break;
    default: return -1;
    }
    return 0;
}
