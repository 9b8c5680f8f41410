/* sim_runs.c: runs, from sim_run_start to their end.
 *
 * A run's script is evaluated when it starts (its reservation of items),
 * its duration and failure are drawn from the handler's own streams, and
 * its phases (preparing, mutating, emitting) are events; the mutation takes
 * effect at the end of mutating, the commit at the end of emitting.  Every
 * transition is a fact (sim_int.h).  Run records are durable: they survive
 * crashes, as a real system's run table would.
 *
 * Memory follows live state: a run's record is kept while the run is
 * active, while its on_run_end runs, while it is the latest run of its
 * handler and while the policy holds it (sim_run_hold); then it is freed
 * and its slot recycled, and the items its reservation held are released
 * (in a large fleet, a few run starts later: the retire queue, below).  A
 * committed run kept only as its handler's latest releases its items at
 * once (run_released): they are done, and nothing could take them again.
 * Runs are found by id through run_map; the engine's own references (phase
 * events, the active set, the handler's latest) are slots. */
#include "sim/sim_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim/evq.h"
#include "sim/script.h"
#include "sim/util.h"

static void scratch_grow(struct sim *sim, size_t need)
{
    if (need <= sim->sc_cap)
        return;
    size_t cap = sim->sc_cap;
    sim->sc_items = xgrow(sim->sc_items, sizeof *sim->sc_items, &cap, need);
    cap = sim->sc_cap;
    sim->sc_ids = xgrow(sim->sc_ids, sizeof *sim->sc_ids, &cap, need);
    cap = sim->sc_cap;
    sim->sc_slots = xgrow(sim->sc_slots, sizeof *sim->sc_slots, &cap, need);
    cap = sim->sc_cap;
    sim->sc_take = xgrow(sim->sc_take, sizeof *sim->sc_take, &cap, need);
    sim->sc_cap = cap;
}

static void gather_one(struct sim *sim, uint32_t slot, uint32_t n)
{
    const struct item_slot *it = &sim->items[slot];
    if (sim->prefetch && sim->fx.ck) /* a start's checker reads the items it takes */
        checker_prefetch_item(sim->fx.ck, it->id, it->ck_slot);
    sim->sc_ids[n] = it->id;
    sim->sc_slots[n] = slot;
    sim->sc_items[n] = (struct script_item){it->pub.publish_us, it->pub.key, it->pub.topic};
}

/* Chunks of a consumer's pending items gathered for its script: the first
 * this many, then twice as many each time the script asks for more. */
#define GATHER_FIRST 32u

/* The consumer's pending items, in publish order, as far as its script
 * reads them (at most limit: script_needs, script_due_needs; or fewer,
 * script_enough), or those offered that are still pending, in the scratch
 * arrays; returns how many.  A start pays for what its script looks at,
 * not for the backlog behind it. */
static uint32_t gather(struct sim *sim, uint32_t c, const uint64_t *offer, uint32_t noffer, int all,
                       const struct script *sc, uint32_t limit)
{
    struct handler_state *hs = &sim->hs[c];
    uint32_t n = 0;
    if (all) {
        uint32_t want = hs->npending < limit ? hs->npending : limit;
        uint32_t slot = hs->pend_head, upto = want < GATHER_FIRST ? want : GATHER_FIRST;
        for (;;) {
            scratch_grow(sim, upto);
            for (; n < upto; slot = sim->items[slot].next) {
                SIM_ASSERT(slot != ITEM_NIL);
                gather_one(sim, slot, n++);
            }
            if (n == want || script_enough(sc, sim->scn, sim->sc_items, n, sim->now_us))
                return n;
            upto = want - n > n ? 2 * n : want;
        }
    }
    /* The offered ones in the order offered, read as far as the same
     * bounds allow: script_eval reads its list by position, whatever order
     * it is in (script.h). */
    scratch_grow(sim, noffer);
    uint32_t check = GATHER_FIRST;
    for (uint32_t i = 0; i < noffer && n < limit; i++) {
        SIM_ASSERT(offer[i] < sim->nitems);
        uint32_t slot = idwin_get(&sim->item_map, offer[i]);
        if (slot == IDMAP_NONE)
            continue;
        const struct item_slot *it = &sim->items[slot];
        if (it->pub.state != ITEM_PENDING || it->pub.consumer != c)
            continue;
        gather_one(sim, slot, n++);
        if (n == check) {
            if (script_enough(sc, sim->scn, sim->sc_items, n, sim->now_us))
                break;
            check = n > UINT32_MAX / 2 ? UINT32_MAX : 2 * n;
        }
    }
    return n;
}

int64_t sim_script_due(struct sim *sim, uint32_t consumer)
{
    const struct handler_def *hd = sim__hdef(sim, consumer);
    if (hd->kind != H_CONSUMER)
        return SIM_NEVER;
    uint32_t pairs = sim__corr_pairs(sim, consumer);
    if (pairs != UINT32_MAX) /* a pair decides, not the backlog */
        return pairs ? sim->now_us : SIM_NEVER;
    uint32_t n = gather(sim, consumer, NULL, 0, 1, &hd->script, script_due_needs(&hd->script));
    return script_due(&hd->script, sim->scn, sim->sc_items, n, sim->hs[consumer].npending, sim->now_us);
}

/* --- runs ------------------------------------------------------------------------ */

static int64_t draw(struct rng *r, const struct dist *d)
{
    switch (d->kind) {
    case DIST_FIXED: return d->a_us;
    case DIST_UNIFORM: return d->a_us + (int64_t)rng_below(r, (uint64_t)(d->b_us - d->a_us) + 1);
    case DIST_EXP: return rng_exp_us(r, (double)d->a_us);
    }
    return 0;
}

/* The set of active runs, O(1) both ways: a run knows its index, and the
 * last run fills a freed index.  The order is a function of the event order
 * alone, so crash handling, which walks it, stays deterministic. */
static void active_add(struct sim *sim, uint32_t slot)
{
    if (sim->nactive == sim->active_cap) {
        size_t cap = sim->active_cap;
        sim->active = xgrow(sim->active, sizeof *sim->active, &sim->active_cap, sim->nactive + 1);
        sim->active_ck = xgrow(sim->active_ck, sizeof *sim->active_ck, &cap, sim->nactive + 1);
    }
    sim->runs[slot].aslot = (uint32_t)sim->nactive;
    sim->active[sim->nactive++] = slot;
}

/* The last active run fills the hole, with its checker record. */
static void active_del(struct sim *sim, uint32_t slot)
{
    uint32_t i = sim->runs[slot].aslot;
    SIM_ASSERT(i < sim->nactive && sim->active[i] == slot);
    uint32_t last = sim->active[--sim->nactive];
    sim->active[i] = last;
    sim->active_ck[i] = sim->active_ck[sim->nactive];
    sim->runs[last].aslot = i;
}

/* --- run records ---------------------------------------------------------------- */

static uint32_t run_alloc(struct sim *sim)
{
    uint32_t slot = sim->runs_free;
    if (slot == ITEM_NIL && sim->runs_hw == sim->runs_cap && sim->retq_n) {
        /* Grow only as the eager free would have. */
        sim__retq_flush(sim);
        slot = sim->runs_free;
    }
    if (slot != ITEM_NIL) {
        sim->runs_free = sim->runs[slot].aslot;
        if (sim->runs_free != ITEM_NIL) /* the next one's link, read at the next start */
            sim_prefetch(&sim->runs[sim->runs_free]);
        return slot;
    }
    if (sim->runs_hw == sim->runs_cap) {
        SIM_ASSERT(sim->runs_cap < UINT32_MAX / 2);
        size_t cap = sim->runs_cap;
        sim->runs = xgrow_lines(sim->runs, sizeof *sim->runs, &cap, (size_t)sim->runs_hw + 1, sim->runs_hw);
        sim->runs_cap = (uint32_t)cap;
    }
    return sim->runs_hw++;
}

/* Whether the record at slot is kept (policy_api.h, RUN RECORDS): a
 * record that is not may still wait in the retire queue. */
static int run_kept(const struct sim *sim, uint32_t slot)
{
    const struct run_rec *r = &sim->runs[slot];
    return r->active || sim->hook_slot == slot || r->holds || sim->hs[r->handler].latest == slot;
}

/* The kept run with that id; a run that is no longer kept is a policy's
 * misuse of the API (sim/policy_api.h, RUN RECORDS). */
static uint32_t run_slot_of(const struct sim *sim, uint64_t run)
{
    SIM_ASSERT(run >= 1 && run <= sim->nruns);
    if (sim->hook_slot != ITEM_NIL && sim->runs[sim->hook_slot].id == run)
        return sim->hook_slot; /* the run in on_run_end: no lookup */
    uint32_t slot = idwin_get(&sim->run_map, run);
    SIM_ASSERT(slot != IDMAP_NONE && run_kept(sim, slot) &&
               "a policy read a run record it no longer holds (policy_api.h: RUN RECORDS)");
    return slot;
}

/* Sets the run's reservation: n items (ids and slots), each referenced. */
static void taken_set(struct sim *sim, struct run_rec *r, const uint64_t *ids, const uint32_t *slots, uint32_t n)
{
    uint64_t *dst_id = &r->tk_id;
    uint32_t *dst_slot = &r->tk_slot;
    if (n > 1) {
        r->big = xmalloc((size_t)n * (sizeof *r->big + 2 * sizeof *dst_slot));
        sim->mem_var += (size_t)n * (sizeof *r->big + 2 * sizeof *dst_slot);
        dst_id = r->big;
        dst_slot = (uint32_t *)(r->big + n);
    }
    for (uint32_t i = 0; i < n; i++) {
        dst_id[i] = ids[i];
        dst_slot[i] = slots[i];
        sim->items[slots[i]].refs++;
    }
    r->ntaken = n;
}

/* Gives back the references the run at slot holds on the items it took
 * (each item is retired when nothing else keeps it), once. */
static void reservation_release(struct sim *sim, uint32_t slot)
{
    struct run_rec *r = &sim->runs[slot];
    if (r->released)
        return;
    r->released = 1;
    uint32_t n = r->ntaken;
    const uint32_t *slots = run_taken_slots(r);
    for (uint32_t i = 0; i < n; i++) {
        struct item_slot *it = &sim->items[slots[i]];
        SIM_ASSERT(it->refs > 0);
        it->refs--;
        sim__item_release(sim, slots[i]);
    }
}

/* Frees a record that is no longer kept: its reservation's items are
 * released (and retired when nothing else keeps them). */
static void run_free(struct sim *sim, uint32_t slot)
{
    reservation_release(sim, slot);
    struct run_rec *r = &sim->runs[slot];
    uint32_t n = r->ntaken;
    if (n > 1) {
        free(r->big);
        sim->mem_var -= (size_t)n * (sizeof *r->big + 2 * sizeof(uint32_t));
    }
    idwin_del(&sim->run_map, r->id);
    *r = (struct run_rec){.aslot = sim->runs_free};
    sim->runs_free = slot;
    sim->live_runs--;
}

/* --- the retire queue -------------------------------------------------------------
 * In a large fleet, the record of a handler's previous run, the items it
 * took and the checker's records of them are read when its next run
 * starts, long after anything else touched them: four reads in a row, each
 * waiting for memory.  While prefetching (sim.prefetch), a run that stops
 * being its handler's latest goes to the back of a queue of SIM_RETQ slots
 * instead, and its record starts loading; SIM_RETQ / 2 pushes later the
 * record has arrived and what its free reads starts loading (its run_map
 * and item_map places, its item, the checker's record of that item); when
 * it reaches the front (SIM_RETQ pushes later) it is unref'd as the eager
 * path would have done.  What any reader sees is as if it had been freed
 * at once: a run in the queue is no longer kept (run_kept), and the queue
 * is drained before anything could tell the difference: sim_item, the run
 * and item limits, growing the run and item tables, the memory budget, a
 * host going down and the end.  A slot in the queue may have been freed
 * (and reused) meanwhile: an unref of a kept run does nothing, and a free
 * slot (id 0) is skipped. */

/* What freeing the run at slot will read. */
static void retq_deps(struct sim *sim, uint32_t slot)
{
    const struct run_rec *r = &sim->runs[slot];
    if (!r->id)
        return;
    idwin_prefetch(&sim->run_map, r->id);
    if (r->ntaken == 1 && !r->released && r->tk_slot < sim->items_hw) {
        sim_prefetch(&sim->items[r->tk_slot]);
        idwin_prefetch(&sim->item_map, r->tk_id);
        if (sim->fx.ck)
            checker_prefetch_item(sim->fx.ck, r->tk_id, r->ck_slot);
    }
}

static void retq_pop(struct sim *sim)
{
    uint32_t slot = sim->retq[sim->retq_head];
    sim->retq_head = (sim->retq_head + 1) % SIM_RETQ;
    sim->retq_n--;
    if (sim->runs[slot].id)
        sim__run_unref(sim, slot);
}

void sim__retq_flush(struct sim *sim)
{
    while (sim->retq_n)
        retq_pop(sim);
}

/* The run at slot is no longer its handler's latest. */
static void retq_push(struct sim *sim, uint32_t slot)
{
    if (sim->retq_n == SIM_RETQ)
        retq_pop(sim);
    if (sim->retq_n >= SIM_RETQ / 2)
        retq_deps(sim, sim->retq[(sim->retq_head + sim->retq_n - SIM_RETQ / 2) % SIM_RETQ]);
    sim_prefetch(&sim->runs[slot]);
    sim_prefetch((const char *)&sim->runs[slot] + 64);
    sim->retq[(sim->retq_head + sim->retq_n) % SIM_RETQ] = slot;
    sim->retq_n++;
}

/* A committed run kept only as its handler's latest gives its items back
 * now rather than when its handler's next run starts: they are done (its
 * commit made them so), no script can take them, and a resume may not name
 * a committed run, so nothing reads them through it again.  In a fleet
 * that is one live item an instance fewer, and its retirement happens
 * while its lines are still in the cache.  sim_run_taken still gives their
 * ids; sim_item now says ITEM_GONE. */
static void run_released(struct sim *sim, uint32_t slot)
{
    const struct run_rec *r = &sim->runs[slot];
    if (r->ntaken && !r->active && r->outcome == OUT_COMMITTED && !r->holds && sim->hook_slot != slot)
        reservation_release(sim, slot);
}

void sim__run_unref(struct sim *sim, uint32_t slot)
{
    if (!run_kept(sim, slot))
        run_free(sim, slot);
    else
        run_released(sim, slot);
}

void sim_run_hold(struct sim *sim, uint64_t run)
{
    struct run_rec *r = &sim->runs[run_slot_of(sim, run)];
    SIM_ASSERT(r->holds < UINT32_MAX);
    r->holds++;
}

void sim_run_release(struct sim *sim, uint64_t run)
{
    uint32_t slot = run_slot_of(sim, run);
    SIM_ASSERT(sim->runs[slot].holds > 0 && "sim_run_release of a run not held");
    sim->runs[slot].holds--;
    sim__run_unref(sim, slot);
}

/* Reserves what the run at slot works on: a resumed run the reservation of
 * the run it resumes, a consumer what its script takes of the pending (or
 * offered) items, a producer the source arrivals so far.  Returns 1 when
 * the run has work (a consumer's run that took nothing has none). */
static int reserve(struct sim *sim, const struct run_req *rq, uint32_t slot)
{
    const struct handler_def *hd = sim__hdef(sim, rq->handler);
    struct run_rec *r = &sim->runs[slot];
    if (rq->resume_of) {
        /* Resume at emitting with the results of the earlier run: the same
         * reservation, no new mutation. */
        SIM_ASSERT(rq->resume_of < r->id);
        /* Kept when sim_run_start was called (checked there); it may have
         * stopped being the latest since. */
        const struct run_rec *o = &sim->runs[idwin_get(&sim->run_map, rq->resume_of)];
        if (hd->kind == H_PRODUCER) {
            r->src_from = o->src_from;
            r->src_to = o->src_to;
        } else {
            taken_set(sim, r, run_taken_ids(o), run_taken_slots(o), o->ntaken);
        }
        if (r->due_us < 0)
            r->due_us = o->due_us;
        return 1;
    }
    if (hd->kind == H_CONSUMER) {
        if (sim__corr_pairs(sim, rq->handler) == 0)
            return 0; /* no pair among its pending items, so none among those offered: the script
                         takes nothing and asks for no wake (the record says so already) */
        uint32_t n = gather(sim, rq->handler, rq->offer, rq->noffer, rq->offer == NULL, &hd->script,
                            script_needs(&hd->script, rq->max_take));
        int64_t wake;
        uint32_t nt = script_eval(&hd->script, sim->scn, sim->sc_items, n, sim->now_us, rq->max_take,
                                  sim->sc_take, &wake);
        /* The taken indices ascend: compact the scratch ids and slots in place. */
        for (uint32_t i = 0; i < nt; i++) {
            sim->sc_ids[i] = sim->sc_ids[sim->sc_take[i]];
            sim->sc_slots[i] = sim->sc_slots[sim->sc_take[i]];
        }
        taken_set(sim, r, sim->sc_ids, sim->sc_slots, nt);
        r->wake_us = wake;
        return nt > 0;
    }
    struct src_buf *sb = sim__src_of(sim, rq->handler);
    if (sb) {
        sim__src_fill(sim, sb, sim->now_us);
        r->src_from = sim->hs[rq->handler].src_cursor;
        r->src_to = sb->n;
    }
    return 1;
}

/* The busy-loop guard: empty runs of one handler with no new item in
 * between, too many and too fast, are a livelock. */
static void busy_guard(struct sim *sim, uint32_t handler, int has_work)
{
    struct handler_state *hs = &sim->hs[handler];
    if (has_work) {
        hs->streak = 0;
        return;
    }
    if (hs->streak++ == 0)
        hs->streak_start_us = sim->now_us;
    if (hs->streak >= SIM_LIVELOCK_STREAK &&
        sim->now_us - hs->streak_start_us < (int64_t)SIM_LIVELOCK_STREAK * US_PER_S) {
        char m[256], nm[132];
        world_tmpl_name(&sim->w, sim->w.h[handler].tmpl, nm, sizeof nm);
        snprintf(m, sizeof m, "livelock: handler %s ran %d times in a row with nothing to do and no new input", nm,
                 SIM_LIVELOCK_STREAK);
        sim__stop(sim, SIM_LIVELOCK, m);
    }
}

/* The livelock rule per handler: a run of h starts now; more than
 * SIM_LIVELOCK_RUNS at one instant with no progress in between (a new item
 * for h, a run of h that committed having taken one) stop the run. */
static void livelock_per_handler(struct sim *sim, uint32_t h)
{
    struct inst_runs *ir = &sim->inst_runs[h];
    if (ir->at_us != sim->now_us) {
        ir->at_us = sim->now_us;
        ir->n = 0;
    }
    if (++ir->n <= SIM_LIVELOCK_RUNS)
        return;
    char m[sizeof sim->res->status_msg], nm[132], t[48];
    world_tmpl_name(&sim->w, sim->w.h[h].tmpl, nm, sizeof nm);
    sim_fmt_dur(sim->now_us, t, sizeof t);
    snprintf(m, sizeof m, "livelock: handler %.132s started more than %d runs at %.40s with no progress in between",
             nm, SIM_LIVELOCK_RUNS, t);
    sim__stop(sim, SIM_LIVELOCK, m);
}

/* Draws the run's duration (and failure) and schedules its first phase
 * boundary: an empty run goes straight to emitting for its idle time; a
 * resumed run only emits; any other prepares, mutates and emits. */
static void schedule_phases(struct sim *sim, uint32_t slot, int has_work)
{
    struct run_rec *r = &sim->runs[slot];
    struct handler_state *hs = &sim->hs[r->handler];
    const struct handler_def *hd = sim__hdef(sim, r->handler);
    if (!has_work) {
        int64_t dd[3] = {0, 0, draw(&hs->dur, &hd->idle)};
        sim__draw_failure(sim, r, 0);
        sim__apply_deadline(sim, r, dd);
        r->phase = PHASE_EMITTING;
        r->t_mut_us = -1;
        r->ev = evq_push(sim->q, sim->now_us + dd[2], EV_PHASE, slot, r->id);
        return;
    }
    int64_t d = draw(&hs->dur, &hd->runs);
    int64_t dd[3] = {d * hd->split_pct[0] / 100, d * hd->split_pct[1] / 100, 0};
    dd[2] = d - dd[0] - dd[1];
    sim__draw_failure(sim, r, 1);
    if (r->resume_of) {
        dd[0] = dd[1] = 0;
        if (r->fail && r->fail_phase < PHASE_EMITTING)
            r->fail_phase = PHASE_EMITTING;
    }
    sim__apply_deadline(sim, r, dd);
    int64_t prep = dd[0], mut = dd[1], emit = dd[2];
    if (r->resume_of) {
        r->phase = PHASE_EMITTING;
        r->t_mut_us = -1;
        if (r->fail && r->fail_phase < PHASE_EMITTING)
            r->fail_phase = PHASE_EMITTING;
        r->end_us = sim->now_us + emit;
        r->ev = evq_push(sim->q, r->end_us, EV_PHASE, slot, r->id);
    } else {
        r->t_mut_us = sim->now_us + prep + mut;
        r->end_us = sim->now_us + prep + mut + emit;
        r->ev = evq_push(sim->q, sim->now_us + prep, EV_PHASE, slot, r->id);
    }
}

/* A new record for run id of rq's handler, which becomes the handler's
 * latest; returns its slot, and in *prev the previous latest (ITEM_NIL
 * none), which the caller unrefs once the reservation is made (a resumed
 * run copies it). */
static uint32_t run_new(struct sim *sim, const struct run_req *rq, uint64_t id, uint32_t *prev)
{
    uint32_t old = sim->hs[rq->handler].latest;
    if (old != ITEM_NIL && !rq->resume_of && sim->prefetch) {
        /* Not read now: it waits in the retire queue, loading. */
        sim->hs[rq->handler].latest = ITEM_NIL;
        retq_push(sim, old);
    } else if (old != ITEM_NIL && sim->runs[old].id != rq->resume_of) {
        sim__retq_flush(sim); /* the state fell below the threshold: none waits */
        /* Its latest place was all that kept the previous run: it goes
         * first, so that the new run takes its slot, still in cache. */
        sim->hs[rq->handler].latest = ITEM_NIL;
        sim__run_unref(sim, old);
    }
    uint32_t slot = run_alloc(sim);
    sim->runs[slot] = (struct run_rec){.id = id, .handler = rq->handler, .worker = rq->worker,
                                       .phase = PHASE_PREPARING, .active = 1, .start_us = sim->now_us,
                                       .end_us = SIM_NEVER, .due_us = rq->due_us, .wake_us = SIM_NEVER,
                                       .retry_of = rq->retry_of, .resume_of = rq->resume_of, .tag = rq->tag};
    idwin_put(&sim->run_map, id, slot);
    sim->live_runs++;
    *prev = sim->hs[rq->handler].latest;
    sim->hs[rq->handler].latest = slot;
    return slot;
}

uint64_t sim_run_start(struct sim *sim, const struct run_req *rq)
{
    SIM_ASSERT(sim->host_up);
    SIM_ASSERT(rq->handler < sim->w.nh);
    if (!sim->accepting)
        return 0; /* a stopping host starts nothing new */
    uint64_t max_runs = sim->o->max_runs ? sim->o->max_runs : SIM_MAX_RUNS_DEFAULT;
    if (sim->live_runs >= max_runs)
        sim__retq_flush(sim); /* counted as the eager free would have */
    if (rq->resume_of) { /* a kept run that did not commit, or the policy misused the API */
        const struct run_rec *o = &sim->runs[run_slot_of(sim, rq->resume_of)];
        SIM_ASSERT((o->active || o->outcome != OUT_COMMITTED) &&
                   "resume_of named a run that committed (policy_api.h: RUN RECORDS)");
    }
    if (sim->live_runs >= max_runs) {
        char m[128];
        snprintf(m, sizeof m, "run limit: more than %" PRIu64 " live runs", max_runs);
        sim__stop(sim, SIM_EVENT_LIMIT, m);
        return 0; /* the main loop stops before the next event */
    }
    if (sim__mem_check(sim))
        return 0;
    sim->same_instant = 0;
    uint64_t id = ++sim->nruns;
    uint32_t prev;
    uint32_t slot = run_new(sim, rq, id, &prev);
    int has_work = reserve(sim, rq, slot);
    if (prev != ITEM_NIL)
        sim__run_unref(sim, prev);
    active_add(sim, slot);
    const struct run_rec *r = &sim->runs[slot];
    fact_run_start(&sim->fx, &(struct fact_start){.run = id, .handler = rq->handler, .reason = rq->reason,
                                                  .due_us = r->due_us, .wake_us = r->wake_us,
                                                  .resume_of = rq->resume_of,
                                                  .taken = r->ntaken ? run_taken_ids(r) : NULL,
                                                  .ntaken = r->ntaken, .ck = &sim->active_ck[r->aslot]});
    const struct checker_run *ck = &sim->active_ck[r->aslot];
    sim->runs[slot].ck_slot = r->ntaken == 1 ? ck->item : ck->prod;
    if (r->ntaken > 1 && ck->n == r->ntaken)
        memcpy(run_taken_ck(r), ck->items, r->ntaken * sizeof(uint32_t));
    else if (r->ntaken > 1) /* no checker: nothing to prefetch */
        memset(run_taken_ck(r), 0xff, r->ntaken * sizeof(uint32_t));
    busy_guard(sim, rq->handler, has_work);
    livelock_per_handler(sim, rq->handler);
    sim->hs[rq->handler].active++;
    schedule_phases(sim, slot, has_work);
    return id;
}

void sim__run_finish(struct sim *sim, uint32_t slot, enum run_outcome out)
{
    struct run_rec *r = &sim->runs[slot];
    r->active = 0;
    r->outcome = (uint8_t)out;
    r->end_us = sim->now_us;
    sim->hs[r->handler].active--;
    fact_run_end(&sim->fx, r->id, r->handler, out, (enum run_phase)r->phase, (enum fail_class)r->fail,
                 &sim->active_ck[r->aslot]);
    active_del(sim, slot);
}

static void apply_mutation(struct sim *sim, uint32_t slot)
{
    struct run_rec *r = &sim->runs[slot];
    r->mutated = 1;
    fact_mutation(&sim->fx, r->id, r->handler, &sim->active_ck[r->aslot]);
}

static void commit(struct sim *sim, uint32_t slot)
{
    const struct run_rec *r = &sim->runs[slot];
    uint32_t h = r->handler;
    const struct handler_def *hd = sim__hdef(sim, h);
    if (hd->kind == H_CONSUMER) {
        const uint32_t *slots = run_taken_slots(r);
        for (uint32_t i = 0; i < r->ntaken; i++)
            if (sim->items[slots[i]].pub.state == ITEM_PENDING)
                sim__item_gone(sim, slots[i], ITEM_DONE);
        return;
    }
    if (hd->out_topic < 0)
        return;
    /* Copy what is needed: publishing calls the policy, which may start runs
     * and so move the run table. */
    uint64_t id = r->id, src_from = r->src_from, src_to = r->src_to;
    struct sim_reach to;
    sim__reach_out(sim, h, hd, &to);
    struct src_buf *sb = sim__src_of(sim, h);
    if (sb) {
        /* Publish what arrived since the last successful poll; a concurrent
         * run that committed first already published part. */
        uint64_t cursor = sim->hs[h].src_cursor;
        uint64_t from = src_from > cursor ? src_from : cursor;
        if (src_to > cursor)
            sim->hs[h].src_cursor = src_to;
        uint32_t origin = sim__origin_source(sim, (uint32_t)hd->source);
        for (uint64_t k = from; k < src_to; k++)
            sim__publish(sim, &to, src_at(sb, k)->t_us, src_at(sb, k)->key, origin);
        sim__src_trim(sim, sb, sim->hs[h].src_cursor);
    }
    uint32_t origin = sim__origin_emit(sim, sim__tmpl(sim, h));
    for (uint32_t k = 0; k < hd->emit_n; k++)
        sim__publish(sim, &to, sim->now_us, (uint32_t)(id * 64 + k), origin);
}

/* The run at slot ended and left the active set: the policy hears of it,
 * then the record goes unless something keeps it. */
static void run_ended(struct sim *sim, uint32_t slot)
{
    if (sim->host_up) {
        struct run_rec *r = &sim->runs[slot];
        struct run_result res = {.run = r->id, .handler = r->handler, .outcome = (enum run_outcome)r->outcome,
                                 .fail = r->outcome == OUT_COMMITTED ? FAIL_NONE : (enum fail_class)r->fail, .phase = (enum run_phase)r->phase,
                                 .ntaken = r->ntaken, .wake_us = r->wake_us, .start_us = r->start_us,
                                 .worker = r->worker, .tag = r->tag};
        /* Kept while its hook runs: marked in the engine, not in the record,
         * whose line the unref below reads (a byte written to it just
         * before would have to reach the cache first, behind every store
         * the hook made). */
        uint32_t outer = sim->hook_slot;
        sim->hook_slot = slot;
        sim->ops->on_run_end(sim->pol, &res, sim->now_us);
        sim->hook_slot = outer;
    }
    sim__run_unref(sim, slot);
    if (sim->stopping && sim->nactive == 0)
        sim__stop_complete(sim);
}

/* A phase boundary of the run at slot (EV_PHASE). */
void sim__run_phase(struct sim *sim, uint32_t slot, uint64_t id)
{
    struct run_rec *r = &sim->runs[slot];
    SIM_ASSERT(r->id == id);
    SIM_ASSERT(r->active);
    r->ev = 0;
    if (r->phase == PHASE_PREPARING) {
        if (r->fail && r->fail_phase == PHASE_PREPARING)
            goto failed;
        r->phase = PHASE_MUTATING;
        fact_phase(&sim->fx, id, r->handler, PHASE_MUTATING);
        r->ev = evq_push(sim->q, r->t_mut_us, EV_PHASE, slot, id);
        return;
    }
    if (r->phase == PHASE_MUTATING) {
        if (r->fail && r->fail_phase == PHASE_MUTATING) {
            if (r->fail == FAIL_INDETERMINATE && r->mut_if_fail)
                apply_mutation(sim, slot);
            goto failed;
        }
        apply_mutation(sim, slot);
        r->phase = PHASE_MUTATED;
        fact_phase(&sim->fx, id, r->handler, PHASE_MUTATED);
        if (r->fail && r->fail_phase == PHASE_MUTATED)
            goto failed;
        r->phase = PHASE_EMITTING;
        r->ev = evq_push(sim->q, r->end_us, EV_PHASE, slot, id);
        return;
    }
    SIM_ASSERT(r->phase == PHASE_EMITTING);
    if (sim->prefetch) { /* the end's hook is likely to set the handler's alarm */
        uint32_t ref = sim->inst_runs[r->handler].alarm_ref;
        if (ref && ref <= sim->nalarms)
            sim_prefetch(&sim->alarms[ref - 1]);
    }
    if (r->fail && r->fail_phase == PHASE_EMITTING)
        goto failed;
    commit(sim, slot);
    if (sim->runs[slot].ntaken)
        sim->inst_runs[sim->runs[slot].handler].n = 0; /* progress, for the livelock rule */
    sim->runs[slot].phase = PHASE_COMMITTED;
    sim__run_finish(sim, slot, OUT_COMMITTED);
    run_ended(sim, slot);
    return;
failed:
    sim__run_finish(sim, slot, OUT_FAILED);
    run_ended(sim, slot);
}

/* What a run's end does, for a run the policy kills: its pending phase
 * event goes, it leaves the active set, and the fact layer records its end
 * as cut off (no on_run_end: the policy knows). */
int sim_run_cancel(struct sim *sim, uint64_t run)
{
    SIM_ASSERT(run >= 1 && run <= sim->nruns);
    uint32_t slot = idwin_get(&sim->run_map, run);
    if (slot == IDMAP_NONE || !sim->runs[slot].active || !sim->accepting)
        return 0;
    sim__policy_event(sim);
    struct run_rec *r = &sim->runs[slot];
    if (r->ev)
        evq_cancel(sim->q, r->ev);
    r->ev = 0;
    sim__run_finish(sim, slot, OUT_CUTOFF);
    sim__run_unref(sim, slot);
    return 1;
}

int sim_deliver(struct sim *sim, uint32_t handler, uint64_t id)
{
    SIM_ASSERT(handler < sim->w.nh);
    const struct handler_def *hd = sim__hdef(sim, handler);
    uint32_t ppm = 0;
    for (uint8_t k = 0; k < hd->nfails; k++)
        if (hd->fails[k].cls == FAIL_DELIVERY)
            ppm = hd->fails[k].ppm;
    /* Drawn from the handler's fault stream only when a delivery failure is
     * configured, so that deliveries never shift the other draws. */
    int ok = ppm == 0 || rng_below(&sim->hs[handler].fault, 1000000) >= ppm;
    fact_delivery(&sim->fx, handler, id, ok);
    return ok;
}

void sim_run_get(const struct sim *sim, uint64_t run, struct sim_run_info *o)
{
    const struct run_rec *r = &sim->runs[run_slot_of(sim, run)];
    *o = (struct sim_run_info){.handler = r->handler, .worker = r->worker, .phase = (enum run_phase)r->phase,
                               .active = r->active, .outcome = (enum run_outcome)r->outcome,
                               .fail = (enum fail_class)r->fail, .mutation_applied = r->mutated,
                               .ntaken = r->ntaken, .start_us = r->start_us, .end_us = r->end_us,
                               .due_us = r->due_us, .retry_of = r->retry_of, .resume_of = r->resume_of,
                               .tag = r->tag, .wake_us = r->wake_us};
}

int sim_run_kept(const struct sim *sim, uint64_t run)
{
    if (run < 1 || run > sim->nruns)
        return 0;
    uint32_t slot = idwin_get(&sim->run_map, run);
    return slot != IDMAP_NONE && run_kept(sim, slot);
}

uint32_t sim_active_runs(const struct sim *sim, uint32_t handler) { return sim->hs[handler].active; }

const uint64_t *sim_run_taken(const struct sim *sim, uint64_t run, uint32_t *n)
{
    const struct run_rec *r = &sim->runs[run_slot_of(sim, run)];
    *n = r->ntaken;
    return run_taken_ids(r);
}

void sim_note(struct sim *sim, int64_t handler, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fact_note(&sim->fx, handler, fmt, ap);
    va_end(ap);
}

/* Interrupts the active runs that match (all = 1: every run), ending them
 * with outcome out (crashed, or cut off by a graceful stop). */
void sim__interrupt_runs(struct sim *sim, int all, int any_worker, uint32_t worker, enum run_outcome out)
{
    size_t i = 0;
    while (i < sim->nactive) {
        uint32_t slot = sim->active[i];
        struct run_rec *r = &sim->runs[slot];
        int hit = all || (any_worker ? r->worker != 0 : r->worker == worker);
        if (!hit) {
            i++;
            continue;
        }
        if (r->ev)
            evq_cancel(sim->q, r->ev);
        r->ev = 0;
        sim__run_finish(sim, slot, out);
        sim__run_unref(sim, slot);
    }
}
