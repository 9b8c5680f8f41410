/* sim.c: the engine's main loop, the workload, runs and crashes.
 *
 * Key invariant: `now` only changes in sim_run's loop, to the time of the
 * event just popped, which is never earlier than the previous one.  Every
 * fact goes through the fact layer (sim/sim_int.h: one fact_* function per
 * kind), which tells the checker, folds the fact into the fingerprint and
 * writes the optional trace; nothing here calls the checker or the trace
 * directly.
 *
 * Durable vs volatile (spec 3): the engine owns the durable world (topics and
 * their pending items, sources, run records, the policy's durable block and
 * sim_dalloc arrays).  At a host crash it destroys the policy (its volatile
 * state), invalidates its timers, alarms and tickers by bumping the epoch,
 * and marks every active run crashed; at restart it creates the policy
 * again.  A graceful stop tells the policy (on_stop) and lets active runs
 * end within the grace.  The state and its invariants are in sim_int.h. */
#include "sim/sim_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim/arrival.h"
#include "sim/evq.h"
#include "sim/sim_int.h"
#include "sim/script.h"
#include "sim/util.h"


/* --- small accessors -------------------------------------------------------- */

int64_t sim_now(const struct sim *sim) { return sim->now_us; }
int sim_accepting(const struct sim *sim) { return sim->accepting; }
int64_t sim_horizon(const struct sim *sim) { return sim->scn->horizon_us; }
struct rng *sim_policy_rng(struct sim *sim) { return &sim->policy_rng; }

const char *sim_status_name(enum sim_status s)
{
    switch (s) {
    case SIM_OK: return "ok";
    case SIM_LIVELOCK: return "livelock";
    case SIM_EVENT_LIMIT: return "event-limit";
    }
    return "?";
}

void *sim_dalloc(struct sim *sim, size_t n)
{
    void *p = xcalloc(1, n);
    sim->dallocs = xgrow(sim->dallocs, sizeof *sim->dallocs, &sim->dalloc_cap, sim->ndalloc + 1);
    sim->dallocs[sim->ndalloc++] = p;
    return p;
}

void *sim_drealloc(struct sim *sim, void *p, size_t n)
{
    if (!p)
        return sim_dalloc(sim, n);
    for (size_t i = 0; i < sim->ndalloc; i++) {
        if (sim->dallocs[i] == p) {
            sim->dallocs[i] = xrealloc(p, n);
            return sim->dallocs[i];
        }
    }
    SIM_ASSERT(0 && "sim_drealloc of a block not from sim_dalloc");
    return NULL;
}

void sim_dfree(struct sim *sim, void *p)
{
    for (size_t i = 0; i < sim->ndalloc; i++) {
        if (sim->dallocs[i] == p) {
            free(p);
            sim->dallocs[i] = sim->dallocs[--sim->ndalloc];
            return;
        }
    }
    SIM_ASSERT(0 && "sim_dfree of a block not from sim_dalloc");
}

void *sim_durable_realloc(void *ctx, void *p, size_t n)
{
    struct sim *sim = ctx;
    if (n == 0) {
        if (p)
            sim_dfree(sim, p);
        return NULL;
    }
    return sim_drealloc(sim, p, n);
}

/* --- timers and tickers ------------------------------------------------------ */

static void stop(struct sim *sim, enum sim_status st, const char *msg)
{
    if (sim->stopped)
        return;
    sim->stopped = 1;
    sim->res->status = st;
    snprintf(sim->res->status_msg, sizeof sim->res->status_msg, "%s", msg);
}

void policy_event(struct sim *sim)
{
    if (++sim->same_instant > sim->timer_limit) {
        char t[48], m[200];
        sim_fmt_dur(sim->now_us, t, sizeof t);
        snprintf(m, sizeof m, "livelock: more than %" PRIu64 " timers at %s with no run started and no item "
                 "published", sim->timer_limit, t);
        stop(sim, SIM_LIVELOCK, m);
    }
}

sim_timer sim_timer_at(struct sim *sim, int64_t at_us, uint32_t tag, uint64_t arg)
{
    SIM_ASSERT(at_us >= sim->now_us);
    policy_event(sim);
    return evq_push(sim->q, at_us, EV_TIMER | (sim->epoch << 8), tag, arg);
}

void sim_timer_cancel(struct sim *sim, sim_timer t)
{
    if (t)
        evq_cancel(sim->q, t);
}

int sim_ticker_new(struct sim *sim, int64_t period_us, uint32_t tag)
{
    SIM_ASSERT(period_us > 0);
    sim->tickers = xgrow(sim->tickers, sizeof *sim->tickers, &sim->tickers_cap, sim->ntickers + 1);
    sim->tickers[sim->ntickers] = (struct ticker){
        .start_us = sim->now_us, .period_us = period_us, .stop_us = SIM_NEVER, .tag = tag, .live = 1,
        .armed_us = SIM_NEVER};
    return (int)sim->ntickers++;
}

int64_t sim_ticker_next(const struct sim *sim, int ticker, int64_t t_us)
{
    const struct ticker *tk = &sim->tickers[ticker];
    if (t_us <= tk->start_us + tk->period_us)
        return tk->start_us + tk->period_us;
    int64_t k = (t_us - tk->start_us + tk->period_us - 1) / tk->period_us;
    return tk->start_us + k * tk->period_us;
}

void sim_ticker_arm(struct sim *sim, int ticker, int64_t earliest_us)
{
    SIM_ASSERT(ticker >= 0 && (size_t)ticker < sim->ntickers);
    struct ticker *tk = &sim->tickers[ticker];
    if (!tk->live)
        return; /* stopped (sim_ticker_stop, or a graceful stop in progress) */
    int64_t at = earliest_us == SIM_NEVER ? SIM_NEVER
                 : sim_ticker_next(sim, ticker, earliest_us < sim->now_us ? sim->now_us : earliest_us);
    if (at == tk->armed_us)
        return;
    if (tk->ev)
        evq_cancel(sim->q, tk->ev);
    tk->ev = 0;
    tk->armed_us = at;
    if (at != SIM_NEVER && at <= sim->end_us) {
        policy_event(sim);
        tk->ev = evq_push(sim->q, at, EV_TICK | (sim->epoch << 8), (uint32_t)ticker, 0);
    }
}

/* Ticks of a ticker in (start, until): its wake-ups.  A tick at the very
 * instant the ticker stops (a crash, the end) does not happen. */
static uint64_t ticker_ticks(const struct ticker *tk, int64_t until_us)
{
    if (until_us <= tk->start_us + 1)
        return 0;
    return (uint64_t)((until_us - 1 - tk->start_us) / tk->period_us);
}

static void ticker_stop(struct sim *sim, struct ticker *tk)
{
    if (!tk->live)
        return;
    fact_wakeups(&sim->fx, (uint32_t)(tk - sim->tickers), ticker_ticks(tk, sim->now_us));
    if (tk->ev)
        evq_cancel(sim->q, tk->ev);
    tk->ev = 0;
    tk->live = 0;
}

void sim_ticker_stop(struct sim *sim, int ticker)
{
    SIM_ASSERT(ticker >= 0 && (size_t)ticker < sim->ntickers);
    ticker_stop(sim, &sim->tickers[ticker]);
}

/* Stops every ticker; their handles stay valid (arming them does nothing)
 * until the policy is destroyed. */
static void tickers_stop_all(struct sim *sim)
{
    for (size_t i = 0; i < sim->ntickers; i++)
        ticker_stop(sim, &sim->tickers[i]);
}

/* --- items ------------------------------------------------------------------- */

const struct sim_item *sim_item(const struct sim *sim, uint64_t item)
{
    SIM_ASSERT(item < sim->nitems);
    return &sim->items[item];
}

uint32_t sim_pending_count(const struct sim *sim, uint32_t consumer) { return sim->hs[consumer].npending; }

/* Drops dead entries from the front, and compacts when most are dead. */
static void pend_tidy(struct sim *sim, struct handler_state *hs)
{
    while (hs->pend_head < hs->pend_n && sim->items[hs->pend[hs->pend_head]].state != ITEM_PENDING)
        hs->pend_head++;
    uint32_t len = hs->pend_n - hs->pend_head;
    if (hs->pend_head > 64 && hs->pend_head * 2 > hs->pend_n) {
        memmove(hs->pend, hs->pend + hs->pend_head, len * sizeof *hs->pend);
        hs->pend_n = len;
        hs->pend_head = 0;
    }
    if (len > 64 && hs->npending * 2 < len) {
        uint32_t j = 0;
        for (uint32_t i = hs->pend_head; i < hs->pend_n; i++)
            if (sim->items[hs->pend[i]].state == ITEM_PENDING)
                hs->pend[j++] = hs->pend[i];
        hs->pend_head = 0;
        hs->pend_n = j;
    }
}

int64_t sim_pending_oldest(const struct sim *sim, uint32_t consumer)
{
    const struct handler_state *hs = &sim->hs[consumer];
    for (uint32_t i = hs->pend_head; i < hs->pend_n; i++)
        if (sim->items[hs->pend[i]].state == ITEM_PENDING)
            return sim->items[hs->pend[i]].publish_us;
    return SIM_NEVER;
}

uint32_t sim_pending_items(const struct sim *sim, uint32_t consumer, uint64_t *out, uint32_t max)
{
    const struct handler_state *hs = &sim->hs[consumer];
    uint32_t n = 0;
    for (uint32_t i = hs->pend_head; i < hs->pend_n; i++) {
        if (sim->items[hs->pend[i]].state != ITEM_PENDING)
            continue;
        if (n < max)
            out[n] = hs->pend[i];
        n++;
    }
    return n;
}

uint64_t sim_orphan_pending(const struct sim *sim, uint32_t inst) { return sim->orphans[inst]; }

static void item_gone(struct sim *sim, uint64_t item, uint8_t state)
{
    struct sim_item *it = &sim->items[item];
    SIM_ASSERT(it->state == ITEM_PENDING);
    it->state = state;
    struct handler_state *hs = &sim->hs[it->consumer];
    hs->npending--;
    pend_tidy(sim, hs);
}

void sim_item_drop(struct sim *sim, uint64_t item)
{
    if (sim->items[item].state != ITEM_PENDING)
        return;
    item_gone(sim, item, ITEM_DROPPED);
    fact_drop(&sim->fx, item, sim->items[item].consumer, DROP_EVICTED);
}

/* Publishes one event on topic instance t: one item per subscriber. */
static void publish(struct sim *sim, uint32_t t, int64_t origin_us, uint32_t key)
{
    const struct world *w = &sim->w;
    uint32_t inst = w->topic_inst[t];
    uint16_t local = (uint16_t)(t - w->inst_first_t[inst]);
    if (w->sub_first[t] == w->sub_first[t + 1]) {
        sim->orphans[inst]++;
        fact_orphan(&sim->fx, t, key);
        return;
    }
    for (uint32_t k = w->sub_first[t]; k < w->sub_first[t + 1]; k++) {
        uint32_t c = w->subs[k];
        uint64_t max_items = sim->o->max_items ? sim->o->max_items : SIM_MAX_ITEMS_DEFAULT;
        if (sim->nitems >= max_items) {
            char m[128];
            snprintf(m, sizeof m, "item limit: more than %" PRIu64 " items (events times subscribers)", max_items);
            stop(sim, SIM_EVENT_LIMIT, m);
            return;
        }
        sim->items = xgrow(sim->items, sizeof *sim->items, &sim->items_cap, sim->nitems + 1);
        uint64_t id = sim->nitems++;
        sim->items[id] = (struct sim_item){.origin_us = origin_us, .publish_us = sim->now_us, .consumer = c,
                                           .key = key, .topic = local, .state = ITEM_PENDING};
        struct handler_state *hs = &sim->hs[c];
        if (hs->pend_n == hs->pend_cap) {
            size_t cap = hs->pend_cap;
            hs->pend = xgrow(hs->pend, sizeof *hs->pend, &cap, (size_t)hs->pend_n + 1);
            hs->pend_cap = (uint32_t)cap;
        }
        hs->pend[hs->pend_n++] = id;
        hs->npending++;
        hs->streak = 0;
        hs->inst_runs = 0;
        sim->same_instant = 0;
        fact_publish(&sim->fx, id, c, origin_us, key);
        if (sim->accepting) {
            sim->ops->on_publish(sim->pol, c, id, sim->now_us);
        } else if (sim->ops->items_volatile) {
            /* The host is down or stopping: an event for a policy that keeps
             * items only in memory has nowhere to go. */
            item_gone(sim, id, ITEM_DROPPED);
            fact_drop(&sim->fx, id, c, DROP_CRASH);
        }
    }
}

/* Gathers the consumer's pending items (or the offered ones) for its script. */
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

int64_t sim_sched_next(const struct sim *sim, uint32_t handler, int64_t after_us, int inclusive)
{
    const struct handler_def *hd = world_hdef(&sim->w, handler);
    if (hd->kind != H_PRODUCER)
        return SIM_NEVER;
    return schedule_next(sim->scn, &hd->sched, after_us, inclusive);
}

/* --- sources ------------------------------------------------------------------ */

static struct src_buf *src_of(struct sim *sim, uint32_t handler)
{
    const struct handler_def *hd = world_hdef(&sim->w, handler);
    if (hd->source < 0)
        return NULL;
    return &sim->srcs[(size_t)sim->w.h[handler].inst * sim->scn->nsources + (size_t)hd->source];
}

/* Generates the source's arrivals up to and including t. */
static void src_fill(struct src_buf *sb, int64_t t_us)
{
    while (sb->g.next_us <= t_us) {
        int64_t at = sb->g.next_us;
        uint32_t key = arr_take(&sb->g);
        if (sb->n == sb->cap) {
            size_t c1 = sb->cap, c2 = sb->cap;
            sb->t_us = xgrow(sb->t_us, sizeof *sb->t_us, &c1, sb->n + 1);
            sb->key = xgrow(sb->key, sizeof *sb->key, &c2, sb->n + 1);
            sb->cap = c1;
        }
        sb->t_us[sb->n] = at;
        sb->key[sb->n] = key;
        sb->n++;
    }
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
    stop(sim, SIM_LIVELOCK, m);
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
        stop(sim, SIM_EVENT_LIMIT, m);
        return 0; /* the main loop stops before the next event */
    }
    sim->same_instant = 0;
    const struct handler_def *hd = world_hdef(&sim->w, rq->handler);
    struct handler_state *hs = &sim->hs[rq->handler];
    sim->runs = xgrow(sim->runs, sizeof *sim->runs, &sim->runs_cap, sim->nruns + 2);
    uint64_t id = ++sim->nruns;
    struct run_rec *r = &sim->runs[id];
    *r = (struct run_rec){.handler = rq->handler, .worker = rq->worker, .phase = PHASE_PREPARING, .active = 1,
                          .start_us = sim->now_us, .end_us = SIM_NEVER, .due_us = rq->due_us,
                          .wake_us = SIM_NEVER, .retry_of = rq->retry_of, .resume_of = rq->resume_of,
                          .tag = rq->tag, .taken_off = sim->ntaken};
    int has_work;
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
        has_work = 1;
    } else if (hd->kind == H_CONSUMER) {
        int all = rq->offer == NULL;
        uint32_t n = gather(sim, rq->handler, rq->offer, rq->noffer, all);
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
        has_work = nt > 0;
    } else {
        struct src_buf *sb = src_of(sim, rq->handler);
        if (sb) {
            src_fill(sb, sim->now_us);
            r->src_from = hs->src_cursor;
            r->src_to = sb->n;
        }
        has_work = 1;
    }

    fact_run_start(&sim->fx, &(struct fact_start){.run = id, .handler = rq->handler, .reason = rq->reason,
                                                  .due_us = r->due_us, .wake_us = r->wake_us,
                                                  .resume_of = rq->resume_of,
                                                  .taken = r->ntaken ? sim->taken + r->taken_off : NULL,
                                                  .ntaken = r->ntaken});

    /* The busy-loop guard: empty runs with no new item in between, too many
     * and too fast, are a livelock. */
    if (!has_work) {
        if (hs->streak++ == 0)
            hs->streak_start_us = sim->now_us;
        if (hs->streak >= SIM_LIVELOCK_STREAK &&
            sim->now_us - hs->streak_start_us < (int64_t)SIM_LIVELOCK_STREAK * US_PER_S) {
            char m[256], nm[132];
            world_tmpl_name(&sim->w, sim->w.h[rq->handler].tmpl, nm, sizeof nm);
            snprintf(m, sizeof m, "livelock: handler %s ran %d times in a row with nothing to do and no new input",
                     nm, SIM_LIVELOCK_STREAK);
            stop(sim, SIM_LIVELOCK, m);
        }
    } else {
        hs->streak = 0;
    }
    livelock_per_handler(sim, rq->handler);

    hs->active++;
    active_add(sim, id);
    r = &sim->runs[id];
    if (!has_work) {
        int64_t d = draw(&hs->dur, &hd->idle);
        r->phase = PHASE_EMITTING;
        r->t_mut_us = -1;
        r->ev = evq_push(sim->q, sim->now_us + d, EV_PHASE, 0, id);
        return id;
    }
    int64_t d = draw(&hs->dur, &hd->runs);
    int64_t prep = d * hd->split_pct[0] / 100, mut = d * hd->split_pct[1] / 100;
    int64_t emit = d - prep - mut;
    /* The failure, drawn for every run with work, from the handler's own
     * fault stream. */
    uint32_t u = (uint32_t)rng_below(&hs->fault, 1000000);
    uint32_t acc = 0;
    for (uint8_t k = 0; k < hd->nfails; k++) {
        if (hd->fails[k].cls == FAIL_DELIVERY)
            continue; /* drawn per delivery attempt, in sim_deliver */
        acc += hd->fails[k].ppm;
        if (u < acc) {
            r->fail = (uint8_t)hd->fails[k].cls;
            r->fail_phase = (uint8_t)hd->fails[k].phase;
            if (r->fail == FAIL_INDETERMINATE)
                r->mut_if_fail = (uint8_t)rng_below(&hs->fault, 2);
            break;
        }
    }
    if (rq->resume_of) {
        r->phase = PHASE_EMITTING;
        r->t_mut_us = -1;
        if (r->fail && r->fail_phase < PHASE_EMITTING)
            r->fail_phase = PHASE_EMITTING;
        r->end_us = sim->now_us + emit;
        r->ev = evq_push(sim->q, r->end_us, EV_PHASE, 0, id);
    } else {
        r->t_mut_us = sim->now_us + prep + mut;
        r->end_us = sim->now_us + d;
        r->ev = evq_push(sim->q, sim->now_us + prep, EV_PHASE, 0, id);
    }
    return id;
}

static void stop_complete(struct sim *sim);

static void run_finish(struct sim *sim, uint64_t id, enum run_outcome out)
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
            item_gone(sim, item, ITEM_DONE);
    }
    if (hd->kind == H_PRODUCER && hd->out_topic >= 0) {
        uint32_t t = sim->w.inst_first_t[sim->w.h[r.handler].inst] + (uint32_t)hd->out_topic;
        struct src_buf *sb = src_of(sim, r.handler);
        if (sb) {
            /* Publish what arrived since the last successful poll; a
             * concurrent run that committed first already published part. */
            uint64_t cursor = sim->hs[r.handler].src_cursor;
            uint64_t from = r.src_from > cursor ? r.src_from : cursor;
            if (r.src_to > cursor)
                sim->hs[r.handler].src_cursor = r.src_to;
            for (uint64_t k = from; k < r.src_to; k++)
                publish(sim, t, sb->t_us[k], sb->key[k]);
        }
        for (uint32_t k = 0; k < hd->emit_n; k++)
            publish(sim, t, sim->now_us, (uint32_t)(id * 64 + k));
    }
}

/* A phase boundary of run id (EV_PHASE). */
static void run_phase(struct sim *sim, uint64_t id)
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
    run_finish(sim, id, OUT_COMMITTED);
    res.outcome = OUT_COMMITTED;
    res.phase = PHASE_COMMITTED;
    if (sim->host_up)
        sim->ops->on_run_end(sim->pol, &res, sim->now_us);
    if (sim->stopping && sim->nactive == 0)
        stop_complete(sim);
    return;
failed:
    res.outcome = OUT_FAILED;
    res.fail = (enum fail_class)r->fail;
    res.phase = (enum run_phase)r->phase;
    run_finish(sim, id, OUT_FAILED);
    if (sim->host_up)
        sim->ops->on_run_end(sim->pol, &res, sim->now_us);
    if (sim->stopping && sim->nactive == 0)
        stop_complete(sim);
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
static void interrupt_runs(struct sim *sim, int all, int any_worker, uint32_t worker, enum run_outcome out)
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
        run_finish(sim, id, out);
    }
}

/* --- crashes ---------------------------------------------------------------------- */

/* The host stops taking work: its timers and tickers are gone. */
static void host_quiesce(struct sim *sim)
{
    sim->accepting = 0;
    tickers_stop_all(sim);
    sim__alarms_quiesce(sim);
    sim->epoch++;
}

/* The host goes down: active runs end with outcome out, the policy's
 * volatile state is destroyed. */
static void host_down(struct sim *sim, enum run_outcome out)
{
    if (sim->accepting)
        host_quiesce(sim);
    if (sim->stopping) {
        /* A crash during a graceful stop ends the stop too. */
        evq_cancel(sim->q, sim->stop_ev);
        sim->stop_ev = 0;
        sim->stopping = 0;
    }
    interrupt_runs(sim, 1, 0, 0, out);
    sim->host_up = 0;
    sim->ntickers = 0; /* the policy that held the handles is going */
    sim->nalarms = 0;
    sim->epoch++;      /* and so are timers it set while stopping */
    sim->ops->destroy(sim->pol);
    sim->pol = NULL;
    if (sim->ops->items_volatile) {
        /* Items that lived only in the policy's memory are gone. */
        for (uint32_t h = 0; h < sim->w.nh; h++) {
            struct handler_state *hs = &sim->hs[h];
            for (uint32_t i = hs->pend_head; i < hs->pend_n; i++) {
                uint64_t id = hs->pend[i];
                if (sim->items[id].state != ITEM_PENDING)
                    continue;
                sim->items[id].state = ITEM_DROPPED;
                fact_drop(&sim->fx, id, h, DROP_CRASH);
            }
            hs->pend_head = hs->pend_n = 0;
            hs->npending = 0;
        }
    }
}

static void host_up(struct sim *sim, int restart)
{
    if (sim->host_up)
        return; /* already brought back by another restart */
    sim->pol = sim->ops->create(sim, sim->durable, sim->ps);
    sim->host_up = 1;
    sim->accepting = 1;
    sim->ops->start(sim->pol, restart, sim->now_us);
}


/* A graceful stop completes: at the end of its grace, or as soon as the
 * last active run has ended. */
static void stop_complete(struct sim *sim)
{
    uint32_t ci = (uint32_t)(sim->stopping - 1);
    const struct crash_def *c = &sim->scn->crashes[ci];
    if (sim->stop_ev)
        evq_cancel(sim->q, sim->stop_ev);
    sim->stop_ev = 0;
    sim->stopping = 0;
    fact_stop(&sim->fx, sim->nactive);
    host_down(sim, OUT_CUTOFF);
    if (c->down_us != SIM_NEVER)
        evq_push(sim->q, c->at_us + c->down_us, EV_RESTART, ci, 0);
}

static void do_crash(struct sim *sim, uint32_t ci)
{
    const struct crash_def *c = &sim->scn->crashes[ci];
    if (sim->crash_down[ci])
        return;
    /* A crash of something already down (or stopping) is no crash; nor is a
     * crash of a part (worker, server) that this policy's system does not
     * have (no on_part hook): nothing of it exists to fail. */
    if (!sim->host_up || (c->target == CRASH_STOP && sim->stopping))
        goto next;
    if (c->target != CRASH_HOST && c->target != CRASH_STOP && !sim->ops->on_part)
        goto next;
    sim->crash_down[ci] = 1;
    fact_crash(&sim->fx, (enum crash_target)c->target, c->index);
    if (c->target == CRASH_STOP) {
        /* Graceful: nothing new starts; active runs have the grace period. */
        host_quiesce(sim);
        sim->stopping = (int)ci + 1;
        if (sim->ops->on_stop)
            sim->ops->on_stop(sim->pol, sim->now_us);
        if (sim->nactive == 0) {
            stop_complete(sim);
        } else {
            sim->stop_ev = evq_push(sim->q, sim->now_us + c->grace_us, EV_CUTOFF, ci, 0);
        }
        return;
    }
    if (c->target == CRASH_HOST) {
        host_down(sim, OUT_CRASHED);
    } else {
        if (c->target == CRASH_WORKER)
            interrupt_runs(sim, 0, 0, c->index + 1, OUT_CRASHED);
        else if (c->target == CRASH_WORKERS)
            interrupt_runs(sim, 0, 1, 0, OUT_CRASHED);
        if (sim->ops->on_part)
            sim->ops->on_part(sim->pol, c->target, c->index, 0, sim->now_us);
    }
    int64_t down = c->random ? 1 + rng_exp_us(&sim->crash_rng[ci], (double)c->mttr_us) : c->down_us;
    evq_push(sim->q, sim->now_us + down, EV_RESTART, ci, 0);
    return;
next:
    if (c->random) {
        int64_t t = sim->now_us + 1 + rng_exp_us(&sim->crash_rng[ci], (double)c->mtbf_us);
        if (t < sim->scn->horizon_us)
            evq_push(sim->q, t, EV_CRASH, ci, 0);
    }
}

static void do_restart(struct sim *sim, uint32_t ci)
{
    const struct crash_def *c = &sim->scn->crashes[ci];
    SIM_ASSERT(sim->crash_down[ci]);
    sim->crash_down[ci] = 0;
    fact_restart(&sim->fx, (enum crash_target)c->target, c->index);
    if (c->target == CRASH_HOST || c->target == CRASH_STOP)
        host_up(sim, 1);
    else if (sim->ops->on_part && sim->host_up)
        sim->ops->on_part(sim->pol, c->target, c->index, 1, sim->now_us);
    if (c->random) {
        int64_t t = sim->now_us + 1 + rng_exp_us(&sim->crash_rng[ci], (double)c->mtbf_us);
        if (t < sim->scn->horizon_us)
            evq_push(sim->q, t, EV_CRASH, ci, 0);
    }
}

/* --- setup and the main loop --------------------------------------------------------- */

static void setup(struct sim *sim)
{
    const struct scenario *s = sim->scn;
    uint64_t seed = sim->o->seed;
    world_build(&sim->w, s);
    sim__api_setup(sim);
    sim->q = evq_new();
    facts_open(&sim->fx, &sim->w, sim->ops->promise, &sim->now_us, sim->o, sim->res);
    sim->end_us = s->horizon_us + s->drain_us;
    sim->policy_rng = rng_stream(seed, RNG_POLICY, 0, 0);
    sim->orphans = xcalloc(sim->w.ninst ? sim->w.ninst : 1, sizeof *sim->orphans);
    sim->hs = xcalloc(sim->w.nh ? sim->w.nh : 1, sizeof *sim->hs);
    for (uint32_t h = 0; h < sim->w.nh; h++) {
        sim->hs[h].dur = rng_stream(seed, RNG_DURATION, h, 0);
        sim->hs[h].fault = rng_stream(seed, RNG_FAULT, h, 0);
    }
    /* Publish streams: one per (publish line, instance that has the topic).
     * The topic is looked up once per template, not once per instance. */
    for (uint32_t p = 0; p < s->npubs; p++) {
        for (uint16_t f = 0; f < s->nwfs; f++) {
            const struct workflow_def *wf = &s->wfs[f];
            int t = -1;
            for (uint16_t k = 0; k < wf->ntopics && t < 0; k++)
                if (strcmp(wf->topics[k], s->pubs[p].topic) == 0)
                    t = k;
            if (t < 0)
                continue;
            for (uint32_t in = sim->w.wf_first_inst[f]; in < sim->w.wf_first_inst[f + 1]; in++) {
                sim->pubs = xgrow(sim->pubs, sizeof *sim->pubs, &sim->pubs_cap, sim->npubs + 1);
                struct pub_stream *ps = &sim->pubs[sim->npubs];
                ps->topic = sim->w.inst_first_t[in] + (uint32_t)t;
                arr_init(&ps->g, &s->pubs[p].arr, s, rng_stream(seed, RNG_PUBLISH, p, in),
                         rng_stream(seed, RNG_KEYS, p, in));
                if (ps->g.next_us != SIM_NEVER)
                    evq_push(sim->q, ps->g.next_us, EV_PUBLISH, (uint32_t)sim->npubs, 0);
                sim->npubs++;
            }
        }
    }
    size_t nsrc = (size_t)sim->w.ninst * s->nsources;
    sim->srcs = xcalloc(nsrc ? nsrc : 1, sizeof *sim->srcs);
    for (uint32_t in = 0; in < sim->w.ninst; in++)
        for (uint16_t k = 0; k < s->nsources; k++)
            arr_init(&sim->srcs[(size_t)in * s->nsources + k].g, &s->sources[k].arr, s,
                     rng_stream(seed, RNG_SOURCE, k, in), rng_stream(seed, RNG_KEYS, 1000000 + k, in));
    sim->crash_down = xcalloc(s->ncrashes ? s->ncrashes : 1, 1);
    sim->crash_rng = xcalloc(s->ncrashes ? s->ncrashes : 1, sizeof *sim->crash_rng);
    for (uint32_t c = 0; c < s->ncrashes; c++) {
        sim->crash_rng[c] = rng_stream(seed, RNG_CRASH, c, 0);
        const struct crash_def *cd = &s->crashes[c];
        int64_t t = cd->random ? 1 + rng_exp_us(&sim->crash_rng[c], (double)cd->mtbf_us) : cd->at_us;
        if (t < s->horizon_us || !cd->random)
            evq_push(sim->q, t, EV_CRASH, c, 0);
    }
    for (uint32_t k = 0; k < s->ntriggers; k++)
        evq_push(sim->q, s->triggers[k].at_us, EV_TRIGGER, k, 0);
    evq_push(sim->q, s->horizon_us, EV_HORIZON, 0, 0);
    evq_push(sim->q, sim->end_us, EV_END, 0, 0);
    sim->durable = sim_dalloc(sim, sim->ops->durable_size ? sim->ops->durable_size : 1);
}

static void on_publish_stream(struct sim *sim, uint32_t k)
{
    struct pub_stream *ps = &sim->pubs[k];
    while (ps->g.next_us == sim->now_us) {
        uint32_t key = arr_take(&ps->g);
        publish(sim, ps->topic, sim->now_us, key);
    }
    ps = &sim->pubs[k];
    if (ps->g.next_us != SIM_NEVER)
        evq_push(sim->q, ps->g.next_us, EV_PUBLISH, k, 0);
}

static void dispatch(struct sim *sim, const struct evq_event *ev)
{
    uint32_t kind = EV_KIND(ev->kind);
    switch (kind) {
    case EV_PUBLISH:
        on_publish_stream(sim, ev->a);
        break;
    case EV_PHASE:
        run_phase(sim, ev->b);
        break;
    case EV_TIMER:
        if (EV_EPOCH(ev->kind) != (sim->epoch & 0xffffffu) || !sim->accepting)
            break;
        policy_event(sim);
        fact_timer(&sim->fx, ev->a, ev->b);
        sim->ops->on_timer(sim->pol, ev->a, ev->b, sim->now_us);
        break;
    case EV_ALARM: {
        struct evq_event tev;
        if (sim__alarm_fire(sim, ev, &tev))
            dispatch(sim, &tev);
        break;
    }
    case EV_TICK: {
        if (EV_EPOCH(ev->kind) != (sim->epoch & 0xffffffu) || !sim->accepting)
            break;
        struct ticker *tk = &sim->tickers[ev->a];
        tk->ev = 0;
        tk->armed_us = SIM_NEVER;
        policy_event(sim);
        fact_tick(&sim->fx, ev->a);
        sim->ops->on_timer(sim->pol, tk->tag, 0, sim->now_us);
        break;
    }
    case EV_CRASH:
        do_crash(sim, ev->a);
        break;
    case EV_RESTART:
        do_restart(sim, ev->a);
        break;
    case EV_TRIGGER: {
        const struct trigger_def *t = &sim->scn->triggers[ev->a];
        fact_trigger(&sim->fx, t->wf);
        if (sim->accepting && sim->ops->on_trigger)
            for (uint32_t in = 0; in < sim->w.ninst; in++)
                if (sim->w.inst_wf[in] == t->wf)
                    sim->ops->on_trigger(sim->pol, in, sim->now_us);
        break;
    }
    case EV_HORIZON:
        fact_horizon(&sim->fx);
        if (sim->accepting && sim->ops->on_horizon)
            sim->ops->on_horizon(sim->pol, sim->now_us);
        break;
    case EV_END:
        sim->stopped = 1;
        break;
    case EV_CUTOFF:
        sim->stop_ev = 0;
        if (sim->stopping == (int)ev->a + 1)
            stop_complete(sim);
        break;
    default:
        SIM_ASSERT(0 && "unknown event kind");
    }
}

void sim_run(const struct scenario *s, const struct policy_ops *ops, const struct params *ps,
             const struct sim_opts *o, struct sim_result *out)
{
    SIM_ASSERT(ops->abi == POLICY_ABI);
    memset(out, 0, sizeof *out); /* padding too: results travel as bytes (sim/sweep.c) */
    struct sim *sim = xcalloc(1, sizeof *sim);
    sim->scn = s;
    sim->ops = ops;
    sim->ps = ps;
    sim->o = o;
    sim->res = out;
    setup(sim);
    sim->timer_limit = (uint64_t)sim->w.nh * 4 > SIM_LIVELOCK_TIMERS ? (uint64_t)sim->w.nh * 4 : SIM_LIVELOCK_TIMERS;
    uint64_t max_events = o->max_events ? o->max_events : SIM_MAX_EVENTS_DEFAULT;

    host_up(sim, 0);
    struct evq_event ev;
    SIM_ASSERT(sim->accepting);
    while (!sim->stopped && evq_pop(sim->q, &ev)) {
        SIM_ASSERT(ev.time_us >= sim->now_us);
        if (ev.time_us != sim->now_us)
            sim->same_instant = 0;
        sim->now_us = ev.time_us;
        if (++out->events > max_events) {
            char m[128];
            snprintf(m, sizeof m, "event limit: more than %" PRIu64 " events", max_events);
            stop(sim, SIM_EVENT_LIMIT, m);
            break;
        }
        dispatch(sim, &ev);
    }

    /* The end: runs still active are cut off; the host stops. */
    while (sim->nactive) {
        uint64_t id = sim->active[0];
        struct run_rec *r = &sim->runs[id];
        if (r->ev)
            evq_cancel(sim->q, r->ev);
        r->ev = 0;
        run_finish(sim, id, OUT_CUTOFF);
    }
    if (sim->host_up) {
        tickers_stop_all(sim);
        sim->ops->destroy(sim->pol);
        sim->pol = NULL;
        sim->host_up = 0;
        sim->accepting = 0;
    }
    out->end_us = sim->now_us;
    facts_close(&sim->fx, sim->now_us, out);
    out->ck.livelock = out->status == SIM_LIVELOCK;

    evq_free(sim->q);
    for (size_t i = 0; i < sim->ndalloc; i++)
        free(sim->dallocs[i]);
    free(sim->dallocs);
    for (size_t i = 0; i < (size_t)sim->w.ninst * s->nsources; i++) {
        free(sim->srcs[i].t_us);
        free(sim->srcs[i].key);
    }
    free(sim->srcs);
    for (uint32_t h = 0; h < sim->w.nh; h++)
        free(sim->hs[h].pend);
    free(sim->hs);
    free(sim->items);
    free(sim->orphans);
    free(sim->runs);
    free(sim->taken);
    free(sim->active);
    free(sim->pubs);
    free(sim->tickers);
    sim__api_free(sim);
    free(sim->crash_down);
    free(sim->crash_rng);
    free(sim->sc_items);
    free(sim->sc_ids);
    free(sim->sc_take);
    world_free(&sim->w);
    free(sim);
}

void sim_result_free(struct sim_result *r)
{
    checker_result_free(&r->ck);
    free(r->trace);
    *r = (struct sim_result){0};
}
