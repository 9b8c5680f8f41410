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
#include "sim/grammar.h"
#include "sim/jobs.h"
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
    case SIM_MEMORY_LIMIT: return "memory-limit";
    }
    return "?";
}

/* The index of block p in dallocs: O(1), however many blocks a policy
 * keeps (one per job, say). */
static size_t dalloc_index(const struct sim *sim, const void *p, const char *what)
{
    uint32_t i = idmap_get(&sim->dalloc_at, (uintptr_t)p);
    if (i == IDMAP_NONE || i >= sim->ndalloc || sim->dallocs[i] != p)
        sim_bug(__FILE__, __LINE__, what);
    return i;
}

void *sim_dalloc(struct sim *sim, size_t n)
{
    void *p = xcalloc(1, n);
    size_t cap = sim->dalloc_cap;
    sim->dallocs = xgrow(sim->dallocs, sizeof *sim->dallocs, &sim->dalloc_cap, sim->ndalloc + 1);
    sim->dalloc_sz = xgrow(sim->dalloc_sz, sizeof *sim->dalloc_sz, &cap, sim->ndalloc + 1);
    SIM_ASSERT(sim->ndalloc < IDMAP_NONE);
    idmap_put(&sim->dalloc_at, (uintptr_t)p, (uint32_t)sim->ndalloc);
    sim->dallocs[sim->ndalloc] = p;
    sim->dalloc_sz[sim->ndalloc++] = n;
    sim->mem_var += n;
    return p;
}

void *sim_drealloc(struct sim *sim, void *p, size_t n)
{
    if (!p)
        return sim_dalloc(sim, n);
    size_t i = dalloc_index(sim, p, "sim_drealloc of a block not from sim_dalloc");
    void *q = xrealloc(p, n);
    if (q != p) {
        idmap_del(&sim->dalloc_at, (uintptr_t)p);
        idmap_put(&sim->dalloc_at, (uintptr_t)q, (uint32_t)i);
    }
    sim->dallocs[i] = q;
    sim->mem_var += n;
    sim->mem_var -= sim->dalloc_sz[i];
    sim->dalloc_sz[i] = n;
    return q;
}

void sim_dfree(struct sim *sim, void *p)
{
    size_t i = dalloc_index(sim, p, "sim_dfree of a block not from sim_dalloc");
    idmap_del(&sim->dalloc_at, (uintptr_t)p);
    free(p);
    sim->mem_var -= sim->dalloc_sz[i];
    size_t last = --sim->ndalloc;
    if (i != last) {
        sim->dallocs[i] = sim->dallocs[last];
        sim->dalloc_sz[i] = sim->dalloc_sz[last];
        idmap_del(&sim->dalloc_at, (uintptr_t)sim->dallocs[i]);
        idmap_put(&sim->dalloc_at, (uintptr_t)sim->dallocs[i], (uint32_t)i);
    }
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

void sim__stop(struct sim *sim, enum sim_status st, const char *msg)
{
    if (sim->stopped)
        return;
    sim->stopped = 1;
    sim->res->status = st;
    snprintf(sim->res->status_msg, sizeof sim->res->status_msg, "%s", msg);
}

void sim__policy_event(struct sim *sim)
{
    if (++sim->same_instant > sim->timer_limit) {
        char t[48], m[200];
        sim_fmt_dur(sim->now_us, t, sizeof t);
        snprintf(m, sizeof m, "livelock: more than %" PRIu64 " timers at %s with no run started and no item "
                 "published", sim->timer_limit, t);
        sim__stop(sim, SIM_LIVELOCK, m);
    }
}

/* The timer rule's limit: the world's floor, plus 4 per worker of the
 * largest pool declared. */
static uint64_t timer_limit(const struct sim *sim)
{
    uint64_t base = (uint64_t)sim->w.nh * 4 > SIM_LIVELOCK_TIMERS ? (uint64_t)sim->w.nh * 4 : SIM_LIVELOCK_TIMERS;
    uint64_t pool = sim->pool_n < UINT64_MAX / 8 ? sim->pool_n : UINT64_MAX / 8;
    return base + 4 * pool;
}

void sim_declare_pool(struct sim *sim, uint64_t n)
{
    if (n > sim->pool_n)
        sim->pool_n = n;
    sim->timer_limit = timer_limit(sim);
}

static void declare_rows(struct sim *sim, const void *base, size_t size, int by, uint64_t n)
{
    if (!base || !size || sim->nrow_arrays == SIM_ROW_ARRAYS)
        return;
    sim->row_arrays[sim->nrow_arrays++] = (struct row_array){(const char *)base, size, by, n};
    if (by == ROWS_WORKER)
        sim->worker_row_arrays++;
    if (by == ROWS_INST)
        sim->inst_row_arrays++;
}

void sim_declare_rows(struct sim *sim, const void *base, size_t size) { declare_rows(sim, base, size, ROWS_HANDLER, 0); }

void sim_declare_inst_rows(struct sim *sim, const void *base, size_t size)
{
    declare_rows(sim, base, size, ROWS_INST, 0);
}

void sim_declare_run_rows(struct sim *sim, const struct jobtab *t) { sim->run_rows = t; }

void sim_declare_worker_rows(struct sim *sim, const void *base, size_t size, uint64_t n)
{
    if (n)
        declare_rows(sim, base, size, ROWS_WORKER, n);
}

void sim_declare_handler_tag(struct sim *sim, uint32_t tag)
{
    if (tag >= 64)
        return;
    sim->handler_tags |= UINT64_C(1) << tag;
    for (size_t a = 0; a < sim->nalarms; a++) /* alarms made before the declaration */
        sim__alarm_name_handler(sim, a);
}

void sim__policy_destroy(struct sim *sim)
{
    sim->ops->destroy(sim->pol);
    sim->pol = NULL;
    sim->nrow_arrays = 0;
    sim->run_rows = NULL;
    sim->worker_row_arrays = sim->inst_row_arrays = 0;
    sim->handler_tags = 0;
    for (uint32_t h = 0; h < sim->w.nh; h++) /* the alarms go with the policy */
        sim->inst_runs[h].alarm_ref = 0;
}

sim_timer sim_timer_at(struct sim *sim, int64_t at_us, uint32_t tag, uint64_t arg)
{
    SIM_ASSERT(at_us >= sim->now_us);
    sim__policy_event(sim);
    return evq_push(sim->q, at_us, EV_TIMER | (sim->epoch << 8), tag, arg);
}

void sim_timer_cancel(struct sim *sim, sim_timer t)
{
    if (t)
        evq_cancel(sim->q, t);
}

/* The live ticker of a handle, NULL once it is stopped (or from a former
 * incarnation's handle, which the policy no longer has). */
static struct ticker *ticker_of(struct sim *sim, int ticker)
{
    SIM_ASSERT(ticker >= 0 && (uint64_t)ticker < sim->next_ticker);
    uint32_t slot = idwin_get(&sim->ticker_map, (uint64_t)ticker);
    return slot == IDMAP_NONE ? NULL : &sim->tickers[slot];
}

int sim_ticker_new(struct sim *sim, int64_t period_us, uint32_t tag)
{
    SIM_ASSERT(period_us > 0);
    SIM_ASSERT(sim->next_ticker < INT32_MAX);
    uint32_t slot = sim->ticker_free;
    if (slot != UINT32_MAX) {
        sim->ticker_free = sim->tickers[slot].id;
        if (sim->ticker_free != UINT32_MAX) /* the next one's link, read at the next new ticker */
            sim_prefetch(&sim->tickers[sim->ticker_free]);
    } else {
        sim->tickers = xgrow(sim->tickers, sizeof *sim->tickers, &sim->tickers_cap, sim->ntickers + 1);
        slot = (uint32_t)sim->ntickers++;
    }
    uint32_t id = (uint32_t)sim->next_ticker++;
    sim->tickers[slot] = (struct ticker){
        .start_us = sim->now_us, .period_us = period_us, .armed_us = SIM_NEVER, .tag = tag, .id = id};
    idwin_put(&sim->ticker_map, id, slot);
    sim->nlive_tickers++;
    return (int)id;
}

static int64_t ticker_next(const struct ticker *tk, int64_t t_us)
{
    if (t_us <= tk->start_us + tk->period_us)
        return tk->start_us + tk->period_us;
    int64_t k = (t_us - tk->start_us + tk->period_us - 1) / tk->period_us;
    return tk->start_us + k * tk->period_us;
}

int64_t sim_ticker_next(const struct sim *sim, int ticker, int64_t t_us)
{
    SIM_ASSERT(ticker >= 0 && (uint64_t)ticker < sim->next_ticker);
    uint32_t slot = idwin_get(&sim->ticker_map, (uint64_t)ticker);
    return slot == IDMAP_NONE ? SIM_NEVER : ticker_next(&sim->tickers[slot], t_us);
}

void sim_ticker_arm(struct sim *sim, int ticker, int64_t earliest_us)
{
    struct ticker *tk = ticker_of(sim, ticker);
    if (!tk)
        return; /* stopped (sim_ticker_stop, or a graceful stop in progress) */
    int64_t at = earliest_us == SIM_NEVER ? SIM_NEVER
                 : ticker_next(tk, earliest_us < sim->now_us ? sim->now_us : earliest_us);
    if (at == tk->armed_us)
        return;
    if (tk->ev)
        evq_cancel(sim->q, tk->ev);
    tk->ev = 0;
    tk->armed_us = at;
    if (at != SIM_NEVER && at <= sim->end_us) {
        sim__policy_event(sim);
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

/* Counts a live ticker's wake-ups and frees its slot. */
static void ticker_stop(struct sim *sim, struct ticker *tk)
{
    fact_wakeups(&sim->fx, tk->id, ticker_ticks(tk, sim->now_us));
    if (tk->ev)
        evq_cancel(sim->q, tk->ev);
    idwin_del(&sim->ticker_map, tk->id);
    uint32_t slot = (uint32_t)(tk - sim->tickers);
    tk->period_us = 0; /* free */
    tk->id = sim->ticker_free;
    sim->ticker_free = slot;
    sim->nlive_tickers--;
}

void sim_ticker_stop(struct sim *sim, int ticker)
{
    struct ticker *tk = ticker_of(sim, ticker);
    if (tk)
        ticker_stop(sim, tk);
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* Stops every ticker, in the order they were made; their handles stay
 * harmless (arming them does nothing). */
void sim__tickers_stop_all(struct sim *sim)
{
    if (sim->nlive_tickers == 0)
        return;
    /* The live slots (a free one has no period), by handle. */
    uint64_t *live = xmalloc(sim->nlive_tickers * sizeof *live);
    uint32_t n = 0;
    for (size_t slot = 0; slot < sim->ntickers; slot++)
        if (sim->tickers[slot].period_us > 0)
            live[n++] = (uint64_t)sim->tickers[slot].id << 32 | slot;
    SIM_ASSERT(n == sim->nlive_tickers);
    qsort(live, n, sizeof *live, cmp_u64);
    for (uint32_t i = 0; i < n; i++)
        ticker_stop(sim, &sim->tickers[(uint32_t)live[i]]);
    free(live);
}

/* Forgets every ticker (the policy that held the handles is going): the
 * next incarnation's handles start from 0 again. */
void sim__tickers_reset(struct sim *sim)
{
    SIM_ASSERT(sim->nlive_tickers == 0);
    idwin_free(&sim->ticker_map);
    idwin_init(&sim->ticker_map);
    sim->ntickers = 0;
    sim->ticker_free = UINT32_MAX;
    sim->next_ticker = 0;
}

/* --- setup and the main loop --------------------------------------------------------- */

static struct handler_out handler_out(const struct sim *sim, uint32_t h)
{
    struct handler_out o = {UINT32_MAX, 0};
    const struct handler_def *hd = world_hdef(&sim->w, h);
    if (hd->kind != H_PRODUCER)
        return o;
    uint32_t inst = sim->topo.h_inst[h];
    size_t src = (size_t)inst * sim->scn->nsources + (size_t)hd->source;
    if (hd->source >= 0 && src < UINT32_MAX)
        o.src = (uint32_t)src;
    if (hd->out_topic >= 0) {
        struct sim_reach r;
        sim__reach_topic(sim, sim->w.inst_first_t[inst] + (uint32_t)hd->out_topic, &r);
        uint32_t n = r.k1 - r.k0;
        if (r.k0 < UINT32_MAX >> 3 && n > 0)
            o.subs = r.k0 << 3 | (n < 7 ? n : 7);
    }
    return o;
}

static void setup(struct sim *sim)
{
    if (grammar_needed(sim->scn, sim->ps->grammar)) {
        /* The schedules as the system reads its configuration; the runner
         * has reported the rejections and fallbacks already. */
        sim->eff = xcalloc(1, sizeof *sim->eff);
        grammar_apply(sim->scn, sim->ps->grammar, sim->eff, NULL, NULL);
        sim->scn = sim->eff;
    }
    const struct scenario *s = sim->scn;
    uint64_t seed = sim->o->seed;
    world_build(&sim->w, s);
    sim__api_setup(sim);
    sim->q = evq_new();
    facts_open(&sim->fx, &sim->w, sim->ops->promise, &sim->now_us, sim->o, sim->res);
    sim->end_us = s->horizon_us + s->drain_us;
    sim->policy_rng = rng_stream(seed, RNG_POLICY, 0, 0);
    sim->orphans = xcalloc(sim->w.ninst ? sim->w.ninst : 1, sizeof *sim->orphans);
    sim->hs = xmalloc_aligned(64, (sim->w.nh ? sim->w.nh : 1) * sizeof *sim->hs);
    memset(sim->hs, 0, (sim->w.nh ? sim->w.nh : 1) * sizeof *sim->hs);
    sim->inst_runs = xcalloc(sim->w.nh ? sim->w.nh : 1, sizeof *sim->inst_runs);
    for (uint32_t h = 0; h < sim->w.nh; h++) {
        struct handler_state *hs = &sim->hs[h];
        hs->dur = rng_stream(seed, RNG_DURATION, h, 0);
        hs->fault = rng_stream(seed, RNG_FAULT, h, 0);
        hs->pend_head = hs->pend_tail = hs->latest = ITEM_NIL;
        hs->inst = sim->w.h[h].inst;
        hs->wf = sim->w.h[h].wf;
        hs->hidx = sim->w.h[h].h;
    }
    sim->items_free = sim->runs_free = sim->hook_slot = ITEM_NIL;
    sim__corr_setup(sim);
    idwin_init(&sim->item_map);
    idwin_init(&sim->run_map);
    idwin_init(&sim->ticker_map);
    sim->ticker_free = UINT32_MAX;
    sim__mem_setup(sim);
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
                ps->origin = p;
                arr_init(&ps->g, &s->pubs[p].arr, s, rng_stream(seed, RNG_PUBLISH, p, in),
                         rng_stream(seed, RNG_KEYS, p, in));
                if (ps->g.next_us != SIM_NEVER)
                    evq_push(sim->q, ps->g.next_us, EV_PUBLISH, (uint32_t)sim->npubs, 0);
                sim->npubs++;
            }
        }
    }
    size_t nsrc = (size_t)sim->w.ninst * s->nsources;
    sim->srcs = xmalloc_aligned(64, (nsrc ? nsrc : 1) * sizeof *sim->srcs);
    memset(sim->srcs, 0, (nsrc ? nsrc : 1) * sizeof *sim->srcs);
    for (size_t i = 0; i < nsrc; i++)
        sim->srcs[i].cap = SRC_INLINE;
    for (uint32_t in = 0; in < sim->w.ninst; in++)
        for (uint16_t k = 0; k < s->nsources; k++)
            arr_init(&sim->srcs[(size_t)in * s->nsources + k].g, &s->sources[k].arr, s,
                     rng_stream(seed, RNG_SOURCE, k, in), rng_stream(seed, RNG_KEYS, 1000000 + k, in));
    sim->h_out = xmalloc((sim->w.nh ? sim->w.nh : 1) * sizeof *sim->h_out);
    for (uint32_t h = 0; h < sim->w.nh; h++)
        sim->h_out[h] = handler_out(sim, h);
    sim->crash_down = xcalloc(s->ncrashes ? s->ncrashes : 1, 1);
    sim->crash_rng = xcalloc(s->ncrashes ? s->ncrashes : 1, sizeof *sim->crash_rng);
    for (uint32_t c = 0; c < s->ncrashes; c++) {
        sim->crash_rng[c] = rng_stream(seed, RNG_CRASH, c, 0);
        const struct crash_def *cd = &s->crashes[c];
        if (cd->pos != CRASH_POS_AT)
            continue; /* placed by the facts of its instant (sim__point) */
        int64_t t = cd->random ? 1 + rng_exp_us(&sim->crash_rng[c], (double)cd->mtbf_us) : cd->at_us;
        if (t < s->horizon_us || !cd->random)
            evq_push(sim->q, t, EV_CRASH, c, 0);
    }
    for (uint32_t k = 0; k < s->ntriggers; k++)
        evq_push(sim->q, s->triggers[k].at_us, EV_TRIGGER, k, 0);
    sim__changes_setup(sim);
    evq_push(sim->q, s->horizon_us, EV_HORIZON, 0, 0);
    evq_push(sim->q, sim->end_us, EV_END, 0, 0);
    sim->durable = sim_dalloc(sim, sim->ops->durable_size ? sim->ops->durable_size : 1);
    sim__points_setup(sim);
}

/* Prefetching the events to come.  In a large fleet every event reads
 * records of an instance that no recent event touched (at 30 k instances
 * the live state is tens of MiB), so each read would wait for memory.  The
 * queue tells the likely next eight events (evq_hints) before this one runs,
 * and the loop loads their records in three stages, so that each load has a
 * few events' time to arrive and no stage reads what is still loading:
 * stage 1 is what an event's kind and a name (a run record, a publish
 * stream, an alarm, a ticker's place in the ticker map), started when it
 * is named last (the eighth); stage 2 is what that record names,
 * started when the event is the sixth, two events later (reading its
 * record then does not wait); stage 3 is what stage 2's places in the
 * handler tables lead to, started when it is the fourth, two events later
 * again and three before it runs.  Each stage reads the one event at its
 * distance (evq_hint_at), so an event pushed for the next few events misses
 * the stages it was pushed past.  When the queue's sorted front holds fewer
 * than eight (before the first pop, after a lull), the hints are read in
 * full: the last named gets its stage 2 at once, and its stage 3 two events
 * later or at once.
 *
 * A run's phase event leads, by the phase it is in, to nothing more
 * (preparing), to the checker's records of the run, its item and its
 * producer's mutated dues (mutating), or to those and the handler's state,
 * the policy's rows of the handler (sim_declare_rows) and the engine's item
 * (emitting: the run's end), and then to the policy's rows of the
 * handler's instance (sim_declare_inst_rows), the checker's group of it,
 * and a producer's source buffer and the records of the consumers of its
 * topic (four at most), which its publishes wake.  A timer or alarm of a
 * tag the policy names (sim_declare_handler_tag) leads to the records of
 * the handler it wakes, in the same two steps; a tick to its ticker's
 * record (sqs keeps a ticker per consumer).  Only a live state larger than
 * the caches is prefetched (SIM_PREFETCH_MIN).  These are hints to the
 * memory system only: every address is checked against its table's
 * bounds, and nothing read here changes what the simulation does.  They are
 * always inlined, into the loop that knows the hints; each load goes
 * through sim_prefetch, which the optimiser keeps (sim/util.h). */
/* Stage 2 of the event this many pops ahead (stage 1 of those from it to
 * the last one hinted). */
#define PF_DEPS (EVQ_HINTS - 3)
/* Stage 3 of the event this many pops nearer than stage 2's. */
#define PF_LAG3 2
#define PREFETCH_FN static inline __attribute__((always_inline)) void

/* Row i of a declared array: every line of it, to four. */
PREFETCH_FN prefetch_row(const struct row_array *ra, size_t i)
{
    const char *row = ra->base + i * ra->size;
    for (size_t off = 0; off < ra->size && off < 4 * 64; off += 64)
        sim_prefetch(row + off);
    sim_prefetch(row + ra->size - 1); /* the last line, if the row starts within one */
}

/* What the end of a run of h or a wake of h reads of the engine's and the
 * policy's that h alone names (its state, its livelock count, its declared
 * rows), and its place in the table of instances, which the rest needs. */
PREFETCH_FN prefetch_handler_own(const struct sim *sim, uint32_t h)
{
    sim_prefetch(&sim->hs[h]);
    sim_prefetch(&sim->inst_runs[h]);
    for (uint32_t k = 0; k < sim->nrow_arrays; k++)
        if (sim->row_arrays[k].by == ROWS_HANDLER)
            prefetch_row(&sim->row_arrays[k], h);
    if (sim->inst_row_arrays || sim->fx.ck)
        sim_prefetch(&sim->topo.h_inst[h]);
}

/* The policy's rows of instance inst, which handler h's end or wake reads. */
PREFETCH_FN prefetch_handler_inst(const struct sim *sim, uint32_t inst)
{
    for (uint32_t k = 0; k < sim->nrow_arrays && sim->inst_row_arrays; k++)
        if (sim->row_arrays[k].by == ROWS_INST)
            prefetch_row(&sim->row_arrays[k], inst);
}

/* A producer's source buffer (two lines), which its start fills and its
 * end publishes from. */
PREFETCH_FN prefetch_source(const struct sim *sim, uint32_t h)
{
    uint32_t s = sim->h_out[h].src;
    if (s != UINT32_MAX) {
        sim_prefetch(&sim->srcs[s]);
        sim_prefetch((const char *)&sim->srcs[s] + 64);
    }
}

/* What a run of h that starts now reads, in two stages: first what h
 * names (the above, the checker's record of h, and the places in the
 * handler tables that lead further: its instance, kind and source), then
 * what those lead to (the instance's rows, the source buffer, the checker's
 * group and producer records). */
PREFETCH_FN prefetch_start_own(const struct sim *sim, uint32_t h)
{
    if (h >= sim->w.nh)
        return; /* a wake's arg is the policy's word */
    prefetch_handler_own(sim, h);
    sim_prefetch(&sim->h_out[h]);
    sim_prefetch(&sim->topo.h_kind[h]);
    if (sim->fx.ck)
        checker_prefetch(sim->fx.ck, h, UINT32_MAX, UINT32_MAX, UINT32_MAX, CK_PREFETCH_START);
}

PREFETCH_FN prefetch_start_deps(const struct sim *sim, uint32_t h)
{
    if (h >= sim->w.nh)
        return;
    uint32_t inst = sim->topo.h_inst[h];
    prefetch_handler_inst(sim, inst);
    prefetch_source(sim, h);
    if (sim->fx.ck)
        checker_prefetch_deps(sim->fx.ck, h, inst, sim->topo.h_kind[h] == H_PRODUCER);
}

/* Both stages at once, for a start named late (a producer's consumers, a
 * policy's sim_prefetch_handler). */
PREFETCH_FN prefetch_handler_start(const struct sim *sim, uint32_t h)
{
    prefetch_start_own(sim, h);
    prefetch_start_deps(sim, h);
}

/* Stage 1: what the hint names. */
PREFETCH_FN prefetch_next(const struct sim *sim, const struct evq_hint *h)
{
    if (h->kind == EV_PHASE && h->a < sim->runs_hw) {
        sim_prefetch(&sim->runs[h->a]);
        sim_prefetch((const char *)&sim->runs[h->a] + 64);
    } else if (h->kind == EV_PUBLISH && h->a < sim->npubs) {
        sim_prefetch(&sim->pubs[h->a]);
    } else if (h->kind == EV_ALARM && h->a < sim->nalarms) {
        sim_prefetch(&sim->alarms[h->a]);
    } else if (h->kind == EV_TICK) {
        idwin_prefetch(&sim->ticker_map, h->a);
    }
}

/* The handler a timer or alarm of a tag the policy names
 * (sim_declare_handler_tag) wakes, UINT32_MAX none. */
static inline uint32_t hint_wake(const struct sim *sim, const struct evq_hint *h)
{
    if (h->kind == EV_TIMER && h->a < 64 && (sim->handler_tags >> h->a & 1))
        return (uint32_t)h->b;
    if (h->kind == EV_ALARM && h->a < sim->nalarms) {
        const struct alarm *al = &sim->alarms[h->a];
        if (al->tag < 64 && (sim->handler_tags >> al->tag & 1))
            return (uint32_t)al->arg;
    }
    return UINT32_MAX;
}

/* The run whose phase event the hint names, if its next step reads more
 * than its record (it is active and past preparing), else NULL. */
static inline const struct run_rec *hint_run(const struct sim *sim, const struct evq_hint *h)
{
    if (h->kind != EV_PHASE || h->a >= sim->runs_hw)
        return NULL;
    const struct run_rec *r = &sim->runs[h->a];
    return r->active && r->phase != PHASE_PREPARING ? r : NULL;
}

/* Stage 2: what the records of stage 1 name.  A run's phase event, by the
 * phase it is in (nothing more while it is preparing); a wake of a handler
 * the policy named (sim_declare_handler_tag), that handler's own records;
 * a tick, its ticker. */
PREFETCH_FN prefetch_next_deps(const struct sim *sim, const struct evq_hint *h)
{
    uint32_t wake = hint_wake(sim, h);
    if (wake != UINT32_MAX) {
        prefetch_start_own(sim, wake);
        return;
    }
    if (h->kind == EV_TICK) {
        uint32_t slot = idwin_ring_get(&sim->ticker_map, h->a);
        if (slot < sim->ntickers)
            sim_prefetch(&sim->tickers[slot]);
        return;
    }
    const struct run_rec *r = hint_run(sim, h);
    if (!r)
        return;
    int mutation = r->phase == PHASE_MUTATING;
    if (r->aslot < sim->nactive) {
        sim_prefetch(&sim->active_ck[r->aslot]);
        if (!mutation)
            sim_prefetch(&sim->active[r->aslot]); /* the end fills its place in the active set */
    }
    if (!mutation && r->handler < sim->w.nh) {
        prefetch_handler_own(sim, r->handler);
        sim_prefetch(&sim->h_out[r->handler]);
    }
    if (r->ntaken == 1 && r->tk_slot < sim->items_hw && !mutation)
        sim_prefetch(&sim->items[r->tk_slot]);
    if (r->ntaken > 1) { /* its slots and the checker's, for stage 3 */
        const uint32_t *slots = run_taken_slots(r);
        sim_prefetch(slots);
        sim_prefetch(run_taken_ck(r) + r->ntaken - 1);
    }
    if (sim->run_rows && !mutation)
        jobs_prefetch(sim->run_rows, r->tag);
    for (uint32_t k = 0; k < sim->nrow_arrays && sim->worker_row_arrays && !mutation; k++) {
        const struct row_array *ra = &sim->row_arrays[k];
        if (ra->by == ROWS_WORKER && r->worker >= 1 && r->worker <= ra->n)
            prefetch_row(ra, r->worker - 1);
    }
    if (sim->fx.ck)
        checker_prefetch(sim->fx.ck, r->handler, UINT32_MAX, r->ntaken == 1 ? UINT32_MAX : r->ck_slot,
                         r->ntaken == 1 ? r->ck_slot : UINT32_MAX, mutation ? CK_PREFETCH_MUTATION : CK_PREFETCH_END);
}

/* Stage 3: what stage 2's places in the handler tables lead to.  A run's
 * end: the policy's rows of its instance, the checker's group of it, and a
 * producer's source buffer and the records of the consumers of its topic
 * (four at most), which its publishes wake; a wake: the same of the
 * handler it wakes. */
PREFETCH_FN prefetch_next_deps3(const struct sim *sim, const struct evq_hint *h)
{
    uint32_t wake = hint_wake(sim, h);
    if (wake != UINT32_MAX) {
        prefetch_start_deps(sim, wake);
        return;
    }
    const struct run_rec *r = hint_run(sim, h);
    if (!r)
        return;
    int mutation = r->phase == PHASE_MUTATING;
    if (r->ntaken > 1) { /* the items of a run that took several (four at most) */
        const uint32_t *slots = run_taken_slots(r), *ck = run_taken_ck(r);
        for (uint32_t k = 0; k < r->ntaken && k < 4; k++) {
            if (slots[k] < sim->items_hw && !mutation)
                sim_prefetch(&sim->items[slots[k]]);
            if (sim->fx.ck)
                checker_prefetch(sim->fx.ck, UINT32_MAX, UINT32_MAX, UINT32_MAX, ck[k], CK_PREFETCH_MUTATION);
        }
    }
    if (mutation || r->handler >= sim->w.nh)
        return;
    uint32_t inst = sim->topo.h_inst[r->handler];
    prefetch_handler_inst(sim, inst);
    if (sim->fx.ck)
        checker_prefetch_deps(sim->fx.ck, r->handler, inst, 0);
    /* A consumer's entry names no source and no subscribers. */
    prefetch_source(sim, r->handler);
    uint32_t subs = sim->h_out[r->handler].subs;
    for (uint32_t k = subs >> 3; k < (subs >> 3) + ((subs & 7) < 4 ? (subs & 7) : 4); k++)
        prefetch_handler_start(sim, sim->w.subs[k]);
}

/* The event k pops ahead from the queue's sorted front, its kind without
 * the epoch: 1, or 0 when the front holds fewer. */
static inline int named_at(const struct sim *sim, int k, struct evq_hint *h)
{
    if (!evq_hint_at(sim->q, k, h))
        return 0;
    h->kind = EV_KIND(h->kind);
    return 1;
}

/* The stages of the events to come, before this one runs.  With the
 * queue's sorted front full (nearly always), each stage reads the one
 * event at its distance, so that an event gets each stage once as it comes
 * nearer: stage 1 when it is the last named, stage 2 when it is the
 * PF_DEPS-th, stage 3 PF_LAG3 nearer.  (Reading all eight hints every pop,
 * and stage 1 of the last three, cost 13 % of the instructions of a
 * 30 k-instance fleet under oracle.)  An event pushed into the front
 * nearer than the last misses its stage 1; stage 2 then waits for its
 * record.  Otherwise (before the first pop, after a lull) the queue's hints,
 * fewer or from its buckets, are read in full. */
PREFETCH_FN prefetch_ahead(struct sim *sim)
{
    struct evq_hint h;
    if (named_at(sim, EVQ_HINTS - 1, &h)) {
        prefetch_next(sim, &h);
        if (named_at(sim, PF_DEPS, &h))
            prefetch_next_deps(sim, &h);
        if (named_at(sim, PF_DEPS - PF_LAG3, &h))
            prefetch_next_deps3(sim, &h);
        return;
    }
    struct evq_hint hint[EVQ_HINTS];
    int hinted = evq_hints(sim->q, hint, EVQ_HINTS);
    if (!hinted)
        return;
    for (int k = 0; k < hinted; k++)
        hint[k].kind = EV_KIND(hint[k].kind); /* without the epoch */
    int deps = hinted > PF_DEPS ? PF_DEPS : hinted - 1;
    for (int k = hinted - 1; k >= deps; k--)
        prefetch_next(sim, &hint[k]);
    prefetch_next_deps(sim, &hint[deps]);
    prefetch_next_deps3(sim, &hint[deps >= PF_LAG3 ? deps - PF_LAG3 : deps]);
}

/* A policy names a handler it will act on soon (policy_api.h). */
void sim_prefetch_handler(const struct sim *sim, uint32_t h)
{
    if (sim->prefetch && h < sim->w.nh)
        prefetch_handler_start(sim, h);
}

static void dispatch(struct sim *sim, const struct evq_event *ev)
{
    uint32_t kind = EV_KIND(ev->kind);
    switch (kind) {
    case EV_PUBLISH:
        sim__publish_stream(sim, ev->a);
        break;
    case EV_PHASE:
        sim__run_phase(sim, ev->a, ev->b);
        break;
    case EV_TIMER:
        if (EV_EPOCH(ev->kind) != (sim->epoch & 0xffffffu) || !sim->accepting)
            break;
        sim__policy_event(sim);
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
        struct ticker *tk = ticker_of(sim, (int)ev->a);
        SIM_ASSERT(tk); /* a stopped ticker's event was cancelled */
        tk->ev = 0;
        tk->armed_us = SIM_NEVER;
        sim__policy_event(sim);
        fact_tick(&sim->fx, ev->a);
        sim->ops->on_timer(sim->pol, tk->tag, 0, sim->now_us);
        break;
    }
    case EV_CRASH:
        sim__crash(sim, ev->a);
        break;
    case EV_RESTART:
        sim__restart(sim, ev->a);
        break;
    case EV_TRIGGER:
        sim__trigger(sim, &sim->scn->triggers[ev->a]);
        break;
    case EV_SCHED:
        sim__sched_change(sim, ev->a, ev->b);
        break;
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
            sim__stop_complete(sim);
        break;
    default:
        SIM_ASSERT(0 && "unknown event kind");
    }
}

/* Pops the next event into *ev; 0 when there is none.  While watching
 * (sim__points_setup), the first crash point of an instant comes before its
 * first event is popped, so that a crash there can still cancel it. */
static int next_event(struct sim *sim, struct evq_event *ev)
{
    while (sim->watching) {
        int64_t t = evq_peek_time(sim->q);
        if (t == INT64_MAX)
            return 0;
        if (t == sim->now_us)
            break;
        sim->now_us = sim__first_at(sim, t);
        sim->same_instant = 0;
        sim__point(sim, 1);
    }
    return evq_pop(sim->q, ev);
}

/* Frees everything the simulation holds (the checker is already gone). */
static void sim_free(struct sim *sim)
{
    const struct scenario *s = sim->scn;
    evq_free(sim->q);
    for (size_t i = 0; i < sim->ndalloc; i++)
        free(sim->dallocs[i]);
    free(sim->dallocs);
    free(sim->dalloc_sz);
    idmap_free(&sim->dalloc_at);
    for (size_t i = 0; i < (size_t)sim->w.ninst * s->nsources; i++)
        if (sim->srcs[i].cap > SRC_INLINE)
            free(sim->srcs[i].a);
    free(sim->srcs);
    free(sim->h_out);
    free(sim->hs);
    free(sim->inst_runs);
    free(sim->items);
    idwin_free(&sim->item_map);
    sim__corr_free(sim);
    free(sim->orphans);
    for (uint32_t i = 0; i < sim->runs_hw; i++)
        if (sim->runs[i].id && sim->runs[i].ntaken > 1)
            free(sim->runs[i].big);
    free(sim->runs);
    idwin_free(&sim->run_map);
    free(sim->active);
    free(sim->active_ck);
    free(sim->pubs);
    free(sim->tickers);
    idwin_free(&sim->ticker_map);
    sim__api_free(sim);
    sim__mem_free(sim);
    free(sim->pos);
    free(sim->crash_down);
    free(sim->crash_rng);
    free(sim->sc_items);
    free(sim->sc_ids);
    free(sim->sc_slots);
    free(sim->sc_take);
    free(sim->fault_n);
    world_free(&sim->w);
    if (sim->eff) {
        grammar_release(sim->eff);
        free(sim->eff);
    }
    free(sim);
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
    sim__prefetch_judge(sim, sim__mem_used(sim)); /* a world that starts large prefetches from the start */
    sim->timer_limit = timer_limit(sim);
    uint64_t max_events = o->max_events ? o->max_events : SIM_MAX_EVENTS_DEFAULT;

    sim__host_up(sim, 0);
    struct evq_event ev;
    SIM_ASSERT(sim->accepting);
    if (sim->watching)
        sim__point(sim, 0);
    while (!sim->stopped && next_event(sim, &ev)) {
        SIM_ASSERT(ev.time_us >= sim->now_us);
        if (ev.time_us != sim->now_us)
            sim->same_instant = 0;
        sim->now_us = ev.time_us;
        if (++out->events > max_events) {
            char m[128];
            snprintf(m, sizeof m, "event limit: more than %" PRIu64 " events", max_events);
            sim__stop(sim, SIM_EVENT_LIMIT, m);
            break;
        }
        if (sim__mem_check(sim))
            break;
        if (sim->prefetch)
            prefetch_ahead(sim);
        dispatch(sim, &ev);
        if (sim->watching)
            sim__point(sim, 0);
    }

    /* The end: runs still active are cut off; the host stops. */
    sim__retq_flush(sim);
    while (sim->nactive) {
        uint32_t slot = sim->active[0];
        struct run_rec *r = &sim->runs[slot];
        if (r->ev)
            evq_cancel(sim->q, r->ev);
        r->ev = 0;
        sim__run_finish(sim, slot, OUT_CUTOFF);
    }
    if (sim->host_up) {
        sim__tickers_stop_all(sim);
        sim__policy_destroy(sim);
        sim->host_up = 0;
        sim->accepting = 0;
    }
    out->end_us = sim->now_us;
    out->peak_memory = sim->mem_peak;
    facts_close(&sim->fx, sim->now_us, out);
    out->ck.livelock = out->status == SIM_LIVELOCK;
    sim_free(sim);
}

void sim_result_free(struct sim_result *r)
{
    checker_result_free(&r->ck);
    free(r->trace);
    *r = (struct sim_result){0};
}

