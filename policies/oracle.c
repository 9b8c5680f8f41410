/* oracle.c: the ideal scheduler, a lower bound for the others (spec 4).
 *
 * It runs each producer at the exact instant of each nominal due, and each
 * consumer at the exact instant its script would take something (it asks the
 * engine what the workload knows: sim_script_due, the oracle knowledge of
 * sim/policy_api.h that no model of a real system may use), one run per
 * consumer at a time so that no item is taken twice.  It never runs a handler with nothing
 * to do.  Runs of different handlers may overlap freely (no promise).  After
 * a failure it runs again at once; after a crash it serves every due left
 * uncommitted at once (its per-producer progress is durable), so it loses
 * nothing.
 *
 * A run that a crash interrupted, or a graceful stop cut off, after its
 * mutation took effect, or that was itself resumed after one (it starts
 * past the mutation), is resumed at emitting (the engine's resume_of), so
 * the ideal never applies a mutation twice, however many crashes cut it; a
 * restart looks at every run that was active at the crash, since a
 * producer's runs may overlap (each run is held while active, for that).
 *
 * Durable: per producer, the last nominal due whose run committed; per
 * handler, its latest run; the runs active.  Volatile: one pending timer
 * per handler. */
#include <stdlib.h>
#include <string.h>

#include "sim/policy_api.h"
#include "sim/util.h"

enum { T_PRODUCER = 1, T_CONSUMER };

/* Per handler, in one record so that an event touches one place. */
struct oracle_h {
    int64_t committed_due;         /* last committed due, -1 none */
    int64_t next_due;              /* next due to serve */
    uint64_t last_run;             /* latest run id, 0 none */
    uint64_t held;                 /* a run of h held until its on_run_end, 0 none */
};

struct oracle_durable {
    struct oracle_h *h;            /* [nh] */
    uint64_t *more;                /* further held runs of producers whose runs overlap */
    size_t nmore, more_cap;
};

struct policy {
    struct sim *sim;
    struct oracle_durable *d;
    sim_timer *timer;              /* [nh] */
    const struct sim_topo *t;
};

/* Starts a run of h, its latest, and holds its record until on_run_end:
 * a crash or a stop's cut-off ends it without on_run_end, and the restart
 * must find it (resume_cut_runs). */
static void start_run(struct policy *p, const struct run_req *rq)
{
    struct oracle_durable *d = p->d;
    uint64_t id = sim_run_start(p->sim, rq);
    d->h[rq->handler].last_run = id;
    if (!id)
        return;
    sim_run_hold(p->sim, id);
    if (!d->h[rq->handler].held) {
        d->h[rq->handler].held = id;
        return;
    }
    d->more = sim_dgrow(p->sim, d->more, sizeof *d->more, &d->more_cap, d->nmore + 1);
    d->more[d->nmore++] = id;
}

/* Releases the hold on run of h, in its own on_run_end (still readable
 * there): O(1) unless h's runs overlap. */
static void unhold(struct policy *p, uint32_t h, uint64_t run)
{
    struct oracle_durable *d = p->d;
    if (d->h[h].held == run) {
        d->h[h].held = 0;
    } else {
        size_t i = 0;
        while (i < d->nmore && d->more[i] != run)
            i++;
        if (i == d->nmore)
            return;
        d->more[i] = d->more[--d->nmore];
    }
    sim_run_release(p->sim, run);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void consumer_eval(struct policy *p, uint32_t h, int64_t now_us)
{
    if (sim_active_runs(p->sim, h))
        return; /* re-evaluated when the run ends */
    int64_t due = sim_script_due(p->sim, h);
    sim_timer_cancel(p->sim, p->timer[h]);
    p->timer[h] = 0;
    if (due == SIM_NEVER)
        return;
    if (due <= now_us) {
        struct run_req rq = RUN_REQ_INIT;
        rq.handler = h;
        rq.reason = REASON_EVENT;
        start_run(p, &rq);
        return;
    }
    p->timer[h] = sim_timer_at(p->sim, due, T_CONSUMER, h);
}

static void producer_fire(struct policy *p, uint32_t h, int64_t due_us, enum run_reason why)
{
    struct run_req rq = RUN_REQ_INIT;
    rq.handler = h;
    rq.reason = why;
    rq.due_us = due_us;
    start_run(p, &rq);
}

/* After a restart: resumes every run that the crash (or a graceful stop's
 * cut-off) ended after its mutation took effect, in the order they
 * started -- several of one producer when its runs overlapped; resumed[h]
 * is set for the handlers that resumed one.  Every other run held is
 * released. */
static void resume_cut_runs(struct policy *p, uint8_t *resumed)
{
    struct oracle_durable *d = p->d;
    size_t n = 0;
    uint64_t *cut = xmalloc((p->t->nh + d->nmore + 1) * sizeof *cut);
    for (uint32_t h = 0; h < p->t->nh; h++)
        if (d->h[h].held) {
            cut[n++] = d->h[h].held;
            d->h[h].held = 0;
        }
    if (d->nmore) /* more is NULL before the first overlap */
        memcpy(cut + n, d->more, d->nmore * sizeof *cut);
    n += d->nmore;
    qsort(cut, n, sizeof *cut, cmp_u64);
    d->nmore = 0; /* each hold is released below, after its last read */
    for (size_t i = 0; i < n; i++) {
        struct sim_run_info ri;
        sim_run_get(p->sim, cut[i], &ri);
        int ended = !ri.active && (ri.outcome == OUT_CRASHED || ri.outcome == OUT_CUTOFF);
        if (ended && (ri.mutation_applied || ri.resume_of)) { /* a resumed run starts past its mutation */
            struct run_req rq = RUN_REQ_INIT;
            rq.handler = ri.handler;
            rq.reason = REASON_RECOVER;
            rq.resume_of = cut[i];
            rq.due_us = ri.due_us;
            start_run(p, &rq);
            resumed[ri.handler] = 1;
        }
        sim_run_release(p->sim, cut[i]);
    }
    free(cut);
}

static void producer_arm(struct policy *p, uint32_t h, int64_t now_us)
{
    int64_t next = p->d->h[h].next_due;
    p->timer[h] = 0;
    if (next == SIM_NEVER)
        return;
    p->timer[h] = sim_timer_at(p->sim, next < now_us ? now_us : next, T_PRODUCER, h);
}

static struct policy *oracle_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct policy *p = xcalloc(1, sizeof *p);
    p->sim = sim;
    p->d = durable;
    p->t = sim_topo(sim);
    p->timer = xcalloc(p->t->nh ? p->t->nh : 1, sizeof *p->timer);
    if (!p->d->h) {
        p->d->h = sim_dalloc(sim, sizeof *p->d->h * (p->t->nh ? p->t->nh : 1));
        for (uint32_t h = 0; h < p->t->nh; h++) {
            p->d->h[h].committed_due = -1;
            p->d->h[h].next_due = sim_sched_next(sim, h, 0, 1);
        }
    }
    sim_declare_rows(sim, p->d->h, sizeof *p->d->h);
    sim_declare_rows(sim, p->timer, sizeof *p->timer);
    sim_declare_handler_tag(sim, T_PRODUCER);
    sim_declare_handler_tag(sim, T_CONSUMER);
    return p;
}

static void oracle_destroy(struct policy *p)
{
    free(p->timer);
    free(p);
}

static void oracle_start(struct policy *p, int restart, int64_t now_us)
{
    uint8_t *resumed_h = xcalloc(p->t->nh ? p->t->nh : 1, 1);
    if (restart)
        resume_cut_runs(p, resumed_h);
    for (uint32_t h = 0; h < p->t->nh; h++) {
        int resumed = resumed_h[h];
        if (p->t->h_kind[h] == H_CONSUMER) {
            if (!resumed)
                consumer_eval(p, h, now_us);
            continue;
        }
        if (restart && !resumed) {
            /* Serve what the crash left uncommitted: the earliest due after
             * the last committed one, if it has come. */
            int64_t first = sim_sched_next(p->sim, h, p->d->h[h].committed_due, p->d->h[h].committed_due < 0);
            if (first != SIM_NEVER && first <= now_us) {
                producer_fire(p, h, first, REASON_RECOVER);
                p->d->h[h].next_due = sim_sched_next(p->sim, h, now_us, 0);
            } else {
                p->d->h[h].next_due = first;
            }
        }
        producer_arm(p, h, now_us);
    }
    free(resumed_h);
}

static void oracle_on_publish(struct policy *p, uint32_t h, uint64_t item, int64_t now_us)
{
    consumer_eval(p, h, now_us);
}

static void oracle_on_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now_us)
{
    uint32_t h = (uint32_t)arg;
    p->timer[h] = 0;
    if (tag == T_CONSUMER) {
        consumer_eval(p, h, now_us);
        return;
    }
    producer_fire(p, h, p->d->h[h].next_due, REASON_SCHEDULE);
    p->d->h[h].next_due = sim_sched_next(p->sim, h, now_us, 0);
    producer_arm(p, h, now_us);
}

static void oracle_on_run_end(struct policy *p, const struct run_result *r, int64_t now_us)
{
    uint32_t h = r->handler;
    unhold(p, h, r->run);
    if (p->t->h_kind[h] == H_CONSUMER) {
        consumer_eval(p, h, now_us);
        return;
    }
    struct sim_run_info ri;
    sim_run_get(p->sim, r->run, &ri);
    if (r->outcome == OUT_COMMITTED) {
        if (ri.due_us > p->d->h[h].committed_due)
            p->d->h[h].committed_due = ri.due_us;
    } else {
        producer_fire(p, h, ri.due_us, REASON_RETRY); /* the ideal retries at once */
    }
}

static void oracle_on_trigger(struct policy *p, uint32_t inst, int64_t now_us)
{
    for (uint32_t h = p->t->inst_first_h[inst]; h < p->t->inst_first_h[inst + 1]; h++)
        if (p->t->h_kind[h] == H_PRODUCER)
            producer_fire(p, h, -1, REASON_MANUAL);
}

/* The ideal learns of a schedule change at once: its next due is the new
 * schedule's first instant from now. */
static void oracle_on_schedule_change(struct policy *p, uint32_t h, int64_t now_us)
{
    sim_timer_cancel(p->sim, p->timer[h]);
    p->d->h[h].next_due = sim_sched_next(p->sim, h, now_us, 1);
    producer_arm(p, h, now_us);
}

const struct policy_ops policy_oracle = {
    .abi = POLICY_ABI,
    .name = "oracle",
    .summary = "the ideal: runs each handler at the exact instant its work is due, never idle, loses nothing",
    .seeds = "baseline (spec 4)",
    .params = NULL,
    .nparams = 0,
    .durable_size = sizeof(struct oracle_durable),
    .promise = PROMISE_NONE,
    .items_volatile = 0,
    .create = oracle_create,
    .destroy = oracle_destroy,
    .start = oracle_start,
    .on_publish = oracle_on_publish,
    .on_timer = oracle_on_timer,
    .on_run_end = oracle_on_run_end,
    .on_trigger = oracle_on_trigger,
    .on_schedule_change = oracle_on_schedule_change,
};
