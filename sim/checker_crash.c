/* checker_crash.c: crashes, restarts, and what they cost (spec 5): items
 * lost, double effects, stuck handlers, recovery time; checker_int.h has
 * the state.
 *
 * Everything is online and bounded by live state.  Per crash, a record is
 * kept for the first CHECKER_CRASH_RECORDS crashes; for every crash, the
 * whole-run metrics need only whether some crash lost an item or saw a
 * double effect, the sum of stuck handlers and the recovery times, which
 * are aggregated as they become final:
 *  - lost: an item's account is final when the engine retires it or at the
 *    end; it was lost at the crashes [k_pub, until) it was pending at, and
 *    at its drop's crash.  Records take ranges of crash indices in a
 *    difference array.
 *  - stuck: a handler counts at a restart when it had work due then and
 *    never started after it.  Its restarts since its latest start are a
 *    count (stuck_n) plus its open pending interval and, for a scheduled
 *    producer, the restarts from the first one at or after its next
 *    unserved due (rk_due); ranges in the record window are also logged,
 *    per handler, for the records.
 *  - recovery: restart -> the earliest start, at or after it, of a run that
 *    made progress.  A restart with work due waits in a queue until no run
 *    can still improve its candidate: every run still to end with progress
 *    started at or after the oldest active run's start. */
#include "sim/checker_int.h"

#include <stdlib.h>
#include <string.h>

#include "sim/util.h"

#define RECORDS CHECKER_CRASH_RECORDS

void ck_crash_free(struct checker *c)
{
    free(c->tree);
    c->tree = NULL;
    free(c->crashes);
    free(c->crash_due);
    free(c->open);
    free(c->restart_crash);
    free(c->ints);
    free(c->nodes);
    free(c->lost_diff);
    free(c->rq);
}

/* ---- restart ranges per handler, in the record window ------------------------------- */

static void log_add(struct checker *c, uint32_t h, uint64_t lo, uint64_t hi)
{
    SIM_ASSERT(lo < hi);
    if (lo >= RECORDS)
        return;
    if (hi > RECORDS)
        hi = RECORDS;
    uint32_t n = c->free_node;
    if (n) {
        c->free_node = c->nodes[n].next;
    } else {
        if (c->nnodes == 0)
            c->nnodes = 1;         /* index 0 means "none" */
        c->nodes = ck_grow(c, c->nodes, sizeof *c->nodes, &c->nodes_cap, (size_t)c->nnodes + 1);
        n = c->nnodes++;
    }
    c->nodes[n] = (struct range_node){.lo = (uint32_t)lo, .hi = (uint32_t)hi, .next = c->hs[h].log};
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

void ck_pend_inc(struct checker *c, uint32_t h)
{
    struct ck_h *s = &c->hs[h];
    if (s->pend++ == 0)
        s->pend_rk = (uint32_t)c->nrestarts;
    c->npending++;
}

void ck_pend_dec(struct checker *c, uint32_t h)
{
    struct ck_h *s = &c->hs[h];
    SIM_ASSERT(s->pend > 0);
    SIM_ASSERT(c->npending > 0);
    c->npending--;
    if (--s->pend == 0 && s->pend_rk < c->nrestarts) {
        /* The interval closes: (b) points inside it were not counted. */
        s->stuck_n += c->nrestarts - s->pend_rk;
        log_add(c, h, s->pend_rk, c->nrestarts);
    }
}

void ck_stuck_started(struct checker *c, uint32_t h)
{
    struct ck_h *s = &c->hs[h];
    log_clear(c, h);
    s->stuck_n = 0;
    s->last_point = 0;
    if (s->pend)
        s->pend_rk = (uint32_t)c->nrestarts;
}

/* Restart r found h with a run that a crash interrupted: a point of its
 * union unless its open pending interval or its overdue tail holds it. */
static void stuck_point(struct checker *c, uint32_t h, uint64_t r)
{
    struct ck_h *s = &c->hs[h];
    if (s->pend && r >= s->pend_rk)
        return;
    if (s->prod != CK_NIL && c->prods[s->prod].rk_due != CK_NIL && r >= c->prods[s->prod].rk_due)
        return;
    if (s->last_point == r + 1)
        return;
    s->last_point = (uint32_t)(r + 1);
    s->stuck_n++;
    log_add(c, h, r, r + 1);
}

/* ---- the tree of next unserved dues ------------------------------------------------- */

void ck_tree_set(struct checker *c, uint32_t leaf, int64_t v)
{
    uint32_t i = c->tree_n + leaf;
    c->tree[i] = v;
    for (i /= 2; i >= 1; i /= 2) {
        int64_t a = c->tree[2 * i], b = c->tree[2 * i + 1];
        int64_t m = a < b ? a : b;
        if (c->tree[i] == m)
            break; /* the minima above are what they were */
        c->tree[i] = m;
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
    c->bytes += 2 * (uint64_t)n * sizeof *c->tree;
    for (uint32_t i = 0; i < 2 * n; i++)
        c->tree[i] = SIM_NEVER;
    for (uint32_t k = 0; k < c->nsched; k++)
        c->tree[n + k] = ck_next_unserved_due(c, c->prods[c->sched_p[k]].h);
    for (uint32_t i = n - 1; i >= 1; i--) {
        int64_t a = c->tree[2 * i], b = c->tree[2 * i + 1];
        c->tree[i] = a < b ? a : b;
    }
}

/* Restart r at now: every producer whose next unserved due it reaches is
 * overdue from r on (until it starts again). */
static void tree_pass(struct checker *c, uint64_t r, int64_t now_us)
{
    while (c->nsched && c->tree[1] <= now_us) {
        uint32_t i = 1;
        while (i < c->tree_n)
            i = c->tree[2 * i] == c->tree[i] ? 2 * i : 2 * i + 1;
        struct ck_prod *pr = &c->prods[c->sched_p[i - c->tree_n]];
        pr->rk_due = (uint32_t)r;
        c->n_overdue++;
        ck_tree_set(c, i - c->tree_n, SIM_NEVER);
    }
}

/* ---- crashes and restarts ------------------------------------------------------------- */

int32_t ck_drop_crash(const struct checker *c)
{
    if (c->nopen)
        return (int32_t)c->open[c->nopen - 1].k;
    return c->ncrashes ? (int32_t)(c->ncrashes - 1) : -1;
}

void ck_lost_range(struct checker *c, uint32_t lo, uint32_t hi, int32_t drop_crash)
{
    int in_range = drop_crash >= 0 && (uint32_t)drop_crash >= lo && (uint32_t)drop_crash < hi;
    if (lo < hi) {
        c->any_lost = 1;
        if (lo < RECORDS) {
            c->lost_diff[lo]++;
            c->lost_diff[hi < RECORDS ? hi : RECORDS]--;
        }
    }
    if (drop_crash >= 0 && !in_range) {
        c->any_lost = 1;
        if (drop_crash < RECORDS) {
            c->lost_diff[drop_crash]++;
            c->lost_diff[drop_crash + 1]--;
        }
    }
}

void ck_double_effect_crash(struct checker *c)
{
    if (c->de_crash < 0)
        return;
    c->any_de = 1;
    if (c->de_crash < RECORDS)
        c->crashes[c->de_crash].double_effects++;
}

void ck_note_interrupted(struct checker *c, uint32_t h)
{
    if (c->ncrashes == 0 || c->nopen == 0 || c->open[c->nopen - 1].k != c->ncrashes - 1)
        return; /* the latest crash already restarted: nothing will read it */
    struct ck_open *o = &c->open[c->nopen - 1];
    int32_t i = (int32_t)c->ints_free;
    if (c->ints_free != CK_NIL) {
        c->ints_free = (uint32_t)c->ints[i].next;
    } else {
        c->ints = ck_grow(c, c->ints, sizeof *c->ints, &c->ints_cap, (size_t)c->nints + 1);
        i = (int32_t)c->nints++;
    }
    c->ints[i] = (struct interrupted){.handler = h, .next = o->int_head};
    o->int_head = i;
}

void checker_crash(struct checker *c, int target, uint32_t index, int64_t now_us)
{
    ck_advance(c, now_us);
    SIM_ASSERT(c->ncrashes < UINT32_MAX - 1);
    uint64_t k = c->ncrashes++;
    if (k == 0) {
        c->lost_diff = xcalloc(RECORDS + 1, sizeof *c->lost_diff);
        c->bytes += (RECORDS + 1) * sizeof *c->lost_diff;
        c->ints_free = CK_NIL;
    }
    if (k < RECORDS) {
        size_t cap = c->crashes_cap;
        c->crashes = ck_grow(c, c->crashes, sizeof *c->crashes, &cap, (size_t)k + 1);
        cap = c->crashes_cap;
        c->crash_due = ck_grow(c, c->crash_due, sizeof *c->crash_due, &cap, (size_t)k + 1);
        c->crashes_cap = cap;
        struct crash_rec *cr = &c->crashes[k];
        memset(cr, 0, sizeof *cr); /* padding too: results travel as bytes (sim/sweep.c) */
        cr->target = target;
        cr->index = index;
        cr->at_us = now_us;
        cr->restart_us = SIM_NEVER;
        cr->recovery_time_us = -1;
        c->crash_due[k] = 0;
    }
    c->open = ck_grow(c, c->open, sizeof *c->open, &c->open_cap, (size_t)c->nopen + 1);
    c->open[c->nopen++] = (struct ck_open){.k = (uint32_t)k, .target = target, .index = index, .int_head = -1};
    c->de_crash = -1;
}

/* Restart r of crash k found work due: it waits for its recovery. */
static void recovery_open(struct checker *c, uint32_t k, int64_t now_us)
{
    if (c->rq_head == c->rq_n) {
        c->rq_head = c->rq_n = 0;
    } else if (c->rq_head > 64 && c->rq_head * 2 > c->rq_n) {
        memmove(c->rq, c->rq + c->rq_head, (c->rq_n - c->rq_head) * sizeof *c->rq);
        c->rq_n -= c->rq_head;
        c->rq_head = 0;
    }
    c->rq = ck_grow(c, c->rq, sizeof *c->rq, &c->rq_cap, c->rq_n + 1);
    c->rq[c->rq_n++] = (struct ck_recov){.at_us = now_us, .cand_us = SIM_NEVER, .k = k};
}

void checker_restart(struct checker *c, int target, uint32_t index, int64_t now_us)
{
    ck_advance(c, now_us);
    /* The earliest crash of this part still down. */
    uint32_t o = 0;
    while (o < c->nopen && !(c->open[o].target == target && c->open[o].index == index))
        o++;
    SIM_ASSERT(o < c->nopen);          /* a restart follows a crash of the same part */
    struct ck_open x = c->open[o];
    memmove(&c->open[o], &c->open[o + 1], (c->nopen - o - 1) * sizeof *c->open);
    c->nopen--;

    if (!c->tree_on)
        tree_build(c);
    uint64_t r = c->nrestarts;
    SIM_ASSERT(r < UINT32_MAX - 1);
    tree_pass(c, r, now_us);
    int due = c->npending > 0 || x.int_head >= 0 || c->n_overdue > 0;
    if (x.k < RECORDS) {
        c->crashes[x.k].restart_us = now_us;
        c->crashes[x.k].recovery_time_us = 0;
        c->crash_due[x.k] = (uint8_t)due;
    }
    if (r < RECORDS) {
        c->restart_crash = ck_grow(c, c->restart_crash, sizeof *c->restart_crash, &c->restart_cap, (size_t)r + 1);
        c->restart_crash[r] = x.k;
    }
    c->nrestarts++;
    if (due)
        recovery_open(c, x.k, now_us);
    /* A handler whose run this crash interrupted has due work now. */
    for (int32_t i = x.int_head; i >= 0;) {
        int32_t next = c->ints[i].next;
        stuck_point(c, c->ints[i].handler, r);
        c->ints[i].next = (int32_t)c->ints_free;
        c->ints_free = (uint32_t)i;
        i = next;
    }
    c->de_crash = (int64_t)x.k;
}

/* ---- recovery ---------------------------------------------------------------------------- */

void ck_progress(struct checker *c, int64_t start_us)
{
    /* The restarts at or before start_us are a prefix of the queue; those
     * whose candidate is later are a suffix of that prefix. */
    size_t i = c->rq_n;
    while (i > c->rq_head && c->rq[i - 1].at_us > start_us)
        i--;
    while (i > c->rq_head && c->rq[i - 1].cand_us > start_us) {
        c->rq[i - 1].cand_us = start_us;
        i--;
    }
}

/* A restart's recovery time is final. */
static void recovery_done(struct checker *c, const struct ck_recov *q)
{
    int64_t rt = q->cand_us == SIM_NEVER ? -1 : q->cand_us - q->at_us;
    if (q->k < RECORDS)
        c->crashes[q->k].recovery_time_us = rt;
    if (rt < 0 || rt > c->scn->recovery_bound_us)
        c->any_rt_bad = 1;
    if (rt < 0)
        c->rt_max_us = -1;
    else if (c->rt_max_us >= 0 && rt > c->rt_max_us)
        c->rt_max_us = rt;
}

void ck_recovery_settle(struct checker *c)
{
    if (c->rq_head == c->rq_n)
        return;
    /* Every run that can still end with progress started at or after t. */
    int64_t t = ck_oldest_start(c);
    while (c->rq_head < c->rq_n && c->rq[c->rq_head].cand_us <= t)
        recovery_done(c, &c->rq[c->rq_head++]);
}

/* ---- the end ------------------------------------------------------------------------------- */

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

/* Handler h's restarts at which it was stuck: the count for the whole run,
 * and its ranges in the record window added to diff. */
static uint64_t stuck_of(struct checker *c, uint32_t h, struct range_node **buf, size_t *cap, int64_t *diff)
{
    const struct ck_h *s = &c->hs[h];
    uint64_t end = c->nrestarts, win = end < RECORDS ? end : RECORDS;
    uint64_t total = s->stuck_n;
    size_t n = 0;
    for (uint32_t i = s->log; i; i = c->nodes[i].next) {
        *buf = xgrow(*buf, sizeof **buf, cap, n + 1);
        (*buf)[n++] = c->nodes[i];
    }
    uint64_t tails[2] = {end, end};
    if (s->pend && s->pend_rk < end)
        tails[0] = s->pend_rk;
    if (s->prod != CK_NIL && c->prods[s->prod].rk_due != CK_NIL)
        tails[1] = c->prods[s->prod].rk_due;
    for (int k = 0; k < 2; k++) {
        total += end - tails[k];
        if (tails[k] < win) {
            *buf = xgrow(*buf, sizeof **buf, cap, n + 1);
            (*buf)[n++] = (struct range_node){.lo = (uint32_t)tails[k], .hi = (uint32_t)win};
        }
    }
    if (n)
        add_union(*buf, n, diff);
    return total;
}

/* For each restart in the record window, the handlers stuck at it (into its
 * crash's record); returns the sum over every restart. */
static uint64_t finish_stuck(struct checker *c)
{
    uint64_t win = c->nrestarts < RECORDS ? c->nrestarts : RECORDS;
    int64_t *diff = xcalloc(win + 1, sizeof *diff);
    struct range_node *buf = NULL;
    size_t cap = 0;
    uint64_t total = 0;
    for (uint32_t h = 0; h < c->w->nh; h++)
        total += stuck_of(c, h, &buf, &cap, diff);
    free(buf);
    int64_t stuck = 0;
    for (uint64_t r = 0; r < win; r++) {
        stuck += diff[r];
        SIM_ASSERT(stuck >= 0);
        if (c->restart_crash[r] < RECORDS)
            c->crashes[c->restart_crash[r]].stuck = (uint32_t)stuck;
    }
    free(diff);
    return total;
}

void ck_crash_finish(struct checker *c, struct checker_result *out)
{
    out->crashes_total = c->ncrashes;
    out->recovery_ok = 1;
    out->stuck = 0;
    out->recovery_time_max_us = 0;
    if (c->ncrashes == 0)
        return;
    out->stuck = c->nrestarts ? finish_stuck(c) : 0;
    while (c->rq_head < c->rq_n)
        recovery_done(c, &c->rq[c->rq_head++]);
    if (c->nopen) {
        c->any_rt_bad = 1;         /* never restarted */
        c->rt_max_us = -1;
    }
    uint32_t nrec = c->ncrashes < RECORDS ? (uint32_t)c->ncrashes : RECORDS;
    int64_t lost = 0;
    for (uint32_t k = 0; k < nrec; k++) {
        struct crash_rec *cr = &c->crashes[k];
        lost += c->lost_diff[k];
        SIM_ASSERT(lost >= 0);
        cr->lost = (uint64_t)lost;
        if (cr->restart_us == SIM_NEVER)
            cr->recovery_time_us = -1;
        cr->ok = cr->lost == 0 && cr->double_effects == 0 && cr->stuck == 0 && cr->recovery_time_us >= 0 &&
                 cr->recovery_time_us <= c->scn->recovery_bound_us;
    }
    out->recovery_ok = !c->any_lost && !c->any_de && out->stuck == 0 && !c->any_rt_bad;
    out->recovery_time_max_us = c->rt_max_us;
    out->ncrashes = nrec;
    out->crashes = c->crashes;
    c->crashes = NULL;
}
