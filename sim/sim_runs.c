/* sim_runs.c: runs, from sim_run_start to their end.
 *
 * A run's script is evaluated when it starts (its reservation of items),
 * its duration and failure are drawn from the handler's own streams, and
 * its phases (preparing, mutating, emitting) are events; the mutation takes
 * effect at the end of mutating, the commit at the end of emitting.  Every
 * transition is a fact (sim_int.h).  Run records are durable: they survive
 * crashes, as a real system's run table would. */
#include "sim/sim_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim/evq.h"
#include "sim/script.h"
#include "sim/util.h"

static uint32_t gather(struct sim *sim, uint32_t c, const uint64_t *offer, uint32_t noffer, int all)
{
    struct handler_state *hs = &sim->hs[c];
    size_t need = all ? hs->pend_n - hs->pend_head : noffer;
    if (need > sim->sc_cap) {
        size_t cap = sim->sc_cap;
        sim->sc_items = xgrow(sim->sc_items, sizeof *sim->sc_items, &cap, need);
        cap = sim->sc_cap;
        sim->sc_ids = xgrow(sim->sc_ids, sizeof *sim->sc_ids, &cap, need);
        cap = sim->sc_cap;
        sim->sc_take = xgrow(sim->sc_take, sizeof *sim->sc_take, &cap, need);
        sim->sc_cap = cap;
    }
    uint32_t n = 0;
    for (size_t i = 0; i < need; i++) {
        uint64_t id = all ? hs->pend[hs->pend_head + i] : offer[i];
        SIM_ASSERT(id < sim->nitems);
        const struct sim_item *it = &sim->items[id];
        if (it->state != ITEM_PENDING || it->consumer != c)
            continue;
        sim->sc_ids[n] = id;
        sim->sc_items[n] = (struct script_item){it->publish_us, it->key, it->topic};
        n++;
    }
    return n;
}

int64_t sim_script_due(struct sim *sim, uint32_t consumer)
{
    const struct handler_def *hd = world_hdef(&sim->w, consumer);
    if (hd->kind != H_CONSUMER)
        return SIM_NEVER;
    uint32_t n = gather(sim, consumer, NULL, 0, 1);
    return script_due(&hd->script, sim->scn, sim->sc_items, n, sim->now_us);
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

/* The set of active runs, O(1) both ways: a run knows its slot, and the
 * last run fills a freed slot.  The order is a function of the event order
 * alone, so crash handling, which walks it, stays deterministic. */
static void active_add(struct sim *sim, uint64_t run)
{
    sim->active = xgrow(sim->active, sizeof *sim->active, &sim->active_cap, sim->nactive + 1);
    sim->runs[run].aslot = (uint32_t)sim->nactive;
    sim->active[sim->nactive++] = run;
}

static void active_del(struct sim *sim, uint64_t run)
{
    uint32_t i = sim->runs[run].aslot;
    SIM_ASSERT(i < sim->nactive && sim->active[i] == run);
    uint64_t last = sim->active[--sim->nactive];
    sim->active[i] = last;
    sim->runs[last].aslot = i;
}

/* Reserves what run id works on: a resumed run the reservation of the run
 * it resumes, a consumer what its script takes of the pending (or offered)
 * items, a producer the source arrivals so far.  Returns 1 when the run has
 * work (a consumer's run that took nothing has none). */
static int reserve(struct sim *sim, const struct run_req *rq, uint64_t id)
{
    const struct handler_def *hd = world_hdef(&sim->w, rq->handler);
    struct run_rec *r;
    if (rq->resume_of) {
        /* Resume at emitting with the results of the earlier run: the same
         * reservation, no new mutation. */
        SIM_ASSERT(rq->resume_of < id);
        const struct run_rec *o = &sim->runs[rq->resume_of];
        sim->taken = xgrow(sim->taken, sizeof *sim->taken, &sim->taken_cap, sim->ntaken + o->ntaken);
        r = &sim->runs[id];
        if (o->ntaken) /* a producer's run took no items: sim->taken may still be NULL */
            memcpy(sim->taken + sim->ntaken, sim->taken + o->taken_off, o->ntaken * sizeof *sim->taken);
        r->ntaken = o->ntaken;
        r->src_from = o->src_from;
        r->src_to = o->src_to;
        if (r->due_us < 0)
            r->due_us = o->due_us;
        sim->ntaken += o->ntaken;
        return 1;
    }
    if (hd->kind == H_CONSUMER) {
        uint32_t n = gather(sim, rq->handler, rq->offer, rq->noffer, rq->offer == NULL);
        int64_t wake;
        uint32_t nt = script_eval(&hd->script, sim->scn, sim->sc_items, n, sim->now_us, rq->max_take,
                                  sim->sc_take, &wake);
        sim->taken = xgrow(sim->taken, sizeof *sim->taken, &sim->taken_cap, sim->ntaken + nt);
        r = &sim->runs[id];
        for (uint32_t i = 0; i < nt; i++)
            sim->taken[sim->ntaken + i] = sim->sc_ids[sim->sc_take[i]];
        r->ntaken = nt;
        r->wake_us = wake;
        sim->ntaken += nt;
        return nt > 0;
    }
    struct src_buf *sb = sim__src_of(sim, rq->handler);
    if (sb) {
        r = &sim->runs[id];
        sim__src_fill(sb, sim->now_us);
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
    struct handler_state *hs = &sim->hs[h];
    if (hs->inst_us != sim->now_us) {
        hs->inst_us = sim->now_us;
        hs->inst_runs = 0;
    }
    if (++hs->inst_runs <= SIM_LIVELOCK_RUNS)
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
static void schedule_phases(struct sim *sim, uint64_t id, int has_work)
{
    struct run_rec *r = &sim->runs[id];
    struct handler_state *hs = &sim->hs[r->handler];
    const struct handler_def *hd = world_hdef(&sim->w, r->handler);
    if (!has_work) {
        int64_t dd[3] = {0, 0, draw(&hs->dur, &hd->idle)};
        sim__draw_failure(sim, r, 0);
        sim__apply_deadline(sim, r, dd);
        r->phase = PHASE_EMITTING;
        r->t_mut_us = -1;
        r->ev = evq_push(sim->q, sim->now_us + dd[2], EV_PHASE, 0, id);
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
        r->ev = evq_push(sim->q, r->end_us, EV_PHASE, 0, id);
    } else {
        r->t_mut_us = sim->now_us + prep + mut;
        r->end_us = sim->now_us + prep + mut + emit;
        r->ev = evq_push(sim->q, sim->now_us + prep, EV_PHASE, 0, id);
    }
}

uint64_t sim_run_start(struct sim *sim, const struct run_req *rq)
{
    SIM_ASSERT(sim->host_up);
    SIM_ASSERT(rq->handler < sim->w.nh);
    if (!sim->accepting)
        return 0; /* a stopping host starts nothing new */
    uint64_t max_runs = sim->o->max_runs ? sim->o->max_runs : SIM_MAX_RUNS_DEFAULT;
    if (sim->nruns >= max_runs) {
        char m[128];
        snprintf(m, sizeof m, "run limit: more than %" PRIu64 " runs", max_runs);
        sim__stop(sim, SIM_EVENT_LIMIT, m);
        return 0; /* the main loop stops before the next event */
    }
    sim->same_instant = 0;
    sim->runs = xgrow(sim->runs, sizeof *sim->runs, &sim->runs_cap, sim->nruns + 2);
    uint64_t id = ++sim->nruns;
    sim->runs[id] = (struct run_rec){.handler = rq->handler, .worker = rq->worker, .phase = PHASE_PREPARING,
                                     .active = 1, .start_us = sim->now_us, .end_us = SIM_NEVER,
                                     .due_us = rq->due_us, .wake_us = SIM_NEVER, .retry_of = rq->retry_of,
                                     .resume_of = rq->resume_of, .tag = rq->tag, .taken_off = sim->ntaken};
    int has_work = reserve(sim, rq, id);
    const struct run_rec *r = &sim->runs[id];
    /* A run that reserved nothing passes no pointer: sim->taken may be NULL. */
    fact_run_start(&sim->fx, &(struct fact_start){.run = id, .handler = rq->handler, .reason = rq->reason,
                                                  .due_us = r->due_us, .wake_us = r->wake_us,
                                                  .resume_of = rq->resume_of,
                                                  .taken = r->ntaken ? sim->taken + r->taken_off : NULL,
                                                  .ntaken = r->ntaken});
    busy_guard(sim, rq->handler, has_work);
    livelock_per_handler(sim, rq->handler);
    sim->hs[rq->handler].active++;
    active_add(sim, id);
    schedule_phases(sim, id, has_work);
    return id;
}

void sim__run_finish(struct sim *sim, uint64_t id, enum run_outcome out)
{
    struct run_rec *r = &sim->runs[id];
    r->active = 0;
    r->outcome = (uint8_t)out;
    r->end_us = sim->now_us;
    sim->hs[r->handler].active--;
    active_del(sim, id);
    fact_run_end(&sim->fx, id, r->handler, out, (enum run_phase)r->phase, (enum fail_class)r->fail);
}

static void apply_mutation(struct sim *sim, uint64_t id)
{
    struct run_rec *r = &sim->runs[id];
    r->mutated = 1;
    fact_mutation(&sim->fx, id, r->handler);
}

static void commit(struct sim *sim, uint64_t id)
{
    /* Copy what is needed: publishing calls the policy, which may start runs
     * and so move the run table. */
    const struct run_rec r = sim->runs[id];
    const struct handler_def *hd = world_hdef(&sim->w, r.handler);
    for (uint32_t i = 0; i < r.ntaken; i++) {
        uint64_t item = sim->taken[r.taken_off + i];
        if (sim->items[item].state == ITEM_PENDING)
            sim__item_gone(sim, item, ITEM_DONE);
    }
    if (hd->kind == H_PRODUCER && hd->out_topic >= 0) {
        uint32_t t = sim->w.inst_first_t[sim->w.h[r.handler].inst] + (uint32_t)hd->out_topic;
        struct src_buf *sb = sim__src_of(sim, r.handler);
        if (sb) {
            /* Publish what arrived since the last successful poll; a
             * concurrent run that committed first already published part. */
            uint64_t cursor = sim->hs[r.handler].src_cursor;
            uint64_t from = r.src_from > cursor ? r.src_from : cursor;
            if (r.src_to > cursor)
                sim->hs[r.handler].src_cursor = r.src_to;
            for (uint64_t k = from; k < r.src_to; k++)
                sim__publish(sim, t, sb->t_us[k], sb->key[k]);
        }
        for (uint32_t k = 0; k < hd->emit_n; k++)
            sim__publish(sim, t, sim->now_us, (uint32_t)(id * 64 + k));
    }
}

/* A phase boundary of run id (EV_PHASE). */
void sim__run_phase(struct sim *sim, uint64_t id)
{
    struct run_rec *r = &sim->runs[id];
    SIM_ASSERT(r->active);
    r->ev = 0;
    struct run_result res = {.run = id, .handler = r->handler, .ntaken = r->ntaken, .wake_us = r->wake_us,
                             .start_us = r->start_us, .worker = r->worker, .tag = r->tag};
    if (r->phase == PHASE_PREPARING) {
        if (r->fail && r->fail_phase == PHASE_PREPARING)
            goto failed;
        r->phase = PHASE_MUTATING;
        fact_phase(&sim->fx, id, r->handler, PHASE_MUTATING);
        r->ev = evq_push(sim->q, r->t_mut_us, EV_PHASE, 0, id);
        return;
    }
    if (r->phase == PHASE_MUTATING) {
        if (r->fail && r->fail_phase == PHASE_MUTATING) {
            if (r->fail == FAIL_INDETERMINATE && r->mut_if_fail)
                apply_mutation(sim, id);
            goto failed;
        }
        apply_mutation(sim, id);
        r->phase = PHASE_MUTATED;
        fact_phase(&sim->fx, id, r->handler, PHASE_MUTATED);
        if (r->fail && r->fail_phase == PHASE_MUTATED)
            goto failed;
        r->phase = PHASE_EMITTING;
        r->ev = evq_push(sim->q, r->end_us, EV_PHASE, 0, id);
        return;
    }
    SIM_ASSERT(r->phase == PHASE_EMITTING);
    if (r->fail && r->fail_phase == PHASE_EMITTING)
        goto failed;
    commit(sim, id);
    r = &sim->runs[id];
    if (r->ntaken)
        sim->hs[r->handler].inst_runs = 0; /* progress, for the livelock rule */
    r->phase = PHASE_COMMITTED;
    sim__run_finish(sim, id, OUT_COMMITTED);
    res.outcome = OUT_COMMITTED;
    res.phase = PHASE_COMMITTED;
    if (sim->host_up)
        sim->ops->on_run_end(sim->pol, &res, sim->now_us);
    if (sim->stopping && sim->nactive == 0)
        sim__stop_complete(sim);
    return;
failed:
    res.outcome = OUT_FAILED;
    res.fail = (enum fail_class)r->fail;
    res.phase = (enum run_phase)r->phase;
    sim__run_finish(sim, id, OUT_FAILED);
    if (sim->host_up)
        sim->ops->on_run_end(sim->pol, &res, sim->now_us);
    if (sim->stopping && sim->nactive == 0)
        sim__stop_complete(sim);
}

int sim_deliver(struct sim *sim, uint32_t handler, uint64_t id)
{
    SIM_ASSERT(handler < sim->w.nh);
    const struct handler_def *hd = world_hdef(&sim->w, handler);
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
    SIM_ASSERT(run >= 1 && run <= sim->nruns);
    const struct run_rec *r = &sim->runs[run];
    *o = (struct sim_run_info){.handler = r->handler, .worker = r->worker, .phase = (enum run_phase)r->phase,
                               .active = r->active, .outcome = (enum run_outcome)r->outcome,
                               .fail = (enum fail_class)r->fail, .mutation_applied = r->mutated,
                               .ntaken = r->ntaken, .start_us = r->start_us, .end_us = r->end_us,
                               .due_us = r->due_us, .retry_of = r->retry_of, .resume_of = r->resume_of,
                               .tag = r->tag, .wake_us = r->wake_us};
}

uint32_t sim_active_runs(const struct sim *sim, uint32_t handler) { return sim->hs[handler].active; }

const uint64_t *sim_run_taken(const struct sim *sim, uint64_t run, uint32_t *n)
{
    SIM_ASSERT(run >= 1 && run <= sim->nruns);
    const struct run_rec *r = &sim->runs[run];
    *n = r->ntaken;
    return r->ntaken ? sim->taken + r->taken_off : NULL; /* taken may still be NULL */
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
        uint64_t id = sim->active[i];
        struct run_rec *r = &sim->runs[id];
        int hit = all || (any_worker ? r->worker != 0 : r->worker == worker);
        if (!hit) {
            i++;
            continue;
        }
        if (r->ev)
            evq_cancel(sim->q, r->ev);
        r->ev = 0;
        sim__run_finish(sim, id, out);
    }
}

