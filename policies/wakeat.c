/* wakeat.c: dirty/queued flags, per-consumer wakeAt, run phases and
 * restart recovery (seeds 000 "exec-11: Scheduler State and wakeAt" and 001
 * "16. Scheduling"; spec section 4).
 *
 * The rules, with the seed sections they come from (docs/policy-wakeat.md
 * has them in full):
 *  - A workflow is single-threaded: at most one run per workflow instance
 *    (seed 000 "Concurrency Model"; 001 "Single-Threaded Execution").  Its
 *    active run is durable (`cur_run`), as the run table's status=active row.
 *  - Producers: `next_run_at` is durable and starts at deploy time, so every
 *    producer runs at once (001 "Initial State").  When it comes due the
 *    producer is marked `queued` (volatile, one pending at most: fires
 *    coalesce) and `next_run_at` moves to the schedule's next instant (000
 *    "Why producers need queued"); an idle workflow serves it at once.
 *  - Consumers: `dirty` (volatile) is set by a publish to a subscribed
 *    topic, or `queued` when the consumer itself is running (001 "Scheduler
 *    Logic"); `wakeAt` (durable, per consumer: 000 "Store wakeAt
 *    Per-Consumer") is what its script asked for, clamped to
 *    [start + wake_min, start + wake_max] (000 "Handle wakeAt in State
 *    Machine"), recorded whenever prepare succeeded, and cleared when the
 *    script asks for nothing.  Runnable: dirty, queued, or wakeAt due.
 *    Pending events alone are no trigger (001 "The Empty Reservation
 *    Problem"), so a consumer that takes nothing waits for a new event or
 *    its wakeAt.  At commit dirty is cleared (the flags raised during the
 *    run survive as `queued`).
 *  - When a workflow becomes idle: consumers before producers; among
 *    consumers, the one with the oldest pending event first (001
 *    "Priority").
 *  - Failures (001 "Failure Classification and Handling"): the workflow
 *    pauses (001 "Paused Workflows": a failed handler is resolved before any
 *    other runs) and then continues the failed run with a new one whose
 *    `retry_of` is it: transient after a backoff (per workflow), logic after
 *    the auto-fix delay, indeterminate after reconciliation, internal never.
 *    The new run starts fresh before `mutated` and resumes at emitting with
 *    the copied results from `mutated` on (001 "Phase Reset Rules").
 *  - Restart (001 "Restart Recovery", both sections; 000 "Restart Recovery
 *    for Consumer State"): producers past `next_run_at` are queued,
 *    consumers with pending events are dirty, wakeAt needs nothing, and the
 *    run that was active is marked crashed and continued by the phase rules
 *    (a crash during `mutating` goes through reconciliation first).
 *  - Manual "run now" (001 "Manual Trigger"): rejected while a run is
 *    active or the workflow is paused; otherwise it queues every producer.
 *
 * The host sleeps until the earliest timed row (a producer's next_run_at, a
 * consumer's wakeAt, a paused workflow's retry time, the legacy per-workflow
 * sleep), kept in one durable jobs table, with one alarm; with `tick` it
 * checks only at the ticks of a check loop instead.  A graceful stop
 * (on_stop) stops the scheduler: run ends during the grace are recorded,
 * but nothing is started or armed again.
 *
 * Key invariant: a workflow instance has a run of this policy active iff its
 * durable `cur_run` names it; no run is started while `cur_run` is set, so
 * the promise PROMISE_WORKFLOW holds by construction.
 *
 * Durable: the rows table, next_run_at, wakeAt, the per-workflow record
 * (active run, pause state, transient attempts, legacy sleep).  Volatile:
 * dirty, queued (and what the queued trigger serves), the legacy per-consumer
 * "woken" marks, the list of workflows to re-examine, the alarm or ticker. */
#include <stdlib.h>

#include "sim/backoff.h"
#include "sim/jobs.h"
#include "sim/policy_api.h"
#include "sim/util.h"

/* What a timed row is (job.tag); job.handler holds the handler for
 * ROW_PRODUCER and ROW_WAKE, the workflow instance for the others. */
enum { ROW_PRODUCER = 1, ROW_WAKE, ROW_RETRY, ROW_SLEEP };
enum { T_HOST = 1, T_TICK };

enum wf_state { WF_READY, WF_PAUSED, WF_STOPPED };
/* Why a paused workflow waits, and how its next run continues the held one. */
enum pause_why { WHY_NONE, WHY_TRANSIENT, WHY_LOGIC, WHY_RECONCILE, WHY_CRASH };

enum { SCOPE_NONE, SCOPE_SUBSCRIBED, SCOPE_ALL_TOPICS };

struct wk_wf {
    uint64_t cur_run;              /* its active run, 0 none */
    uint64_t held_run;             /* WF_PAUSED: the failed or crashed run to continue */
    uint8_t state;                 /* enum wf_state */
    uint8_t why;                   /* enum pause_why */
    uint8_t after_crash;           /* the held run was cut by a crash */
    uint32_t cur_h;                /* the handler of cur_run, as the run table's row has it */
    uint32_t attempts;             /* transient failures in a row */
    uint32_t fixes;                /* auto-fixes in a row (autofix_max) */
    int64_t retry_at;              /* WF_PAUSED: when the next run may start */
    int64_t sleep_until;           /* granularity=workflow: the one wake time, SIM_NEVER none */
    uint64_t retry_row, sleep_row; /* rows in wk_durable.rows */
};

/* A handler's durable state, one row per handler instance. */
struct wk_hrow {
    int64_t next_run_at;           /* producers */
    int64_t wake_at;               /* consumers, SIM_NEVER none */
    uint64_t row;                  /* its row in wk_durable.rows */
};

/* A handler's volatile scheduler state. */
struct wk_vrow {
    int64_t queued_due;            /* producers: the nominal instant the queued trigger serves, -1 none */
    uint8_t dirty, queued, manual, woken;
};

struct wk_durable {
    int inited;
    uint32_t incarnation;          /* bumped at every create: the host alarm's arg names its incarnation */
    struct jobtab rows;            /* timed rows, durable allocator */
    struct wk_hrow *h;             /* [nh] */
    struct wk_wf *wf;              /* [ninst] */
};

struct policy {
    struct sim *sim;
    struct wk_durable *d;
    const struct sim_topo *t;
    /* parameters */
    int64_t wake_min_us, wake_max_us, tick_us, autofix_us, reconcile_us;
    int per_workflow;              /* granularity=workflow */
    int scope;                     /* pending_scope */
    int dirty_if_empty;            /* dirty_clear=if_empty */
    int recover_all;               /* recover_dirty=all */
    int producers_first;
    int reset_always;              /* phase_reset=always */
    int anchor_commit, host_scope, check_at_start, recheck_now, by_declaration, block, reset_on_change;
    uint32_t autofix_max;
    struct backoff bo;
    struct wk_vrow *v;             /* [nh] volatile scheduler state */
    /* workflows to re-examine */
    uint32_t *kick;
    uint8_t *kick_mark;            /* [ninst] */
    uint32_t nkick;
    int alarm;                     /* event mode: the host's one alarm (T_HOST) */
    uint32_t incarnation;          /* this host's, from the durable counter (the alarm's arg) */
    int ticker;                    /* tick mode only */
    int deferred;                  /* event mode: the start-up pass has not run yet */
    int stopping;                  /* a graceful stop began (on_stop): start and arm nothing more */
    uint32_t nactive;              /* runs active (tick mode keeps the loop armed meanwhile) */
};

static const struct param_def wakeat_params[] = {
    {"wake_min", PARAM_DURATION, "30s", NULL, 0, US_PER_DAY, "seed 000 '5. Handle wakeAt in State Machine'; seed 001 'The wakeAt Hint'",
     "a consumer's wakeAt is at least this long after the start of the run that asked"},
    {"wake_max", PARAM_DURATION, "24h", NULL, US_PER_S, 30 * US_PER_DAY, "seed 000 '5. Handle wakeAt in State Machine'; seed 001 'The wakeAt Hint'",
     "a consumer's wakeAt is at most this long after the start of the run that asked"},
    {"granularity", PARAM_ENUM, "consumer", "consumer|workflow", 0, 0,
     "seed 000 '2. Store wakeAt Per-Consumer'; workflow: the legacy consumer_sleep_until (seed 000 'Problem')",
     "where wakeAt is stored: per consumer, or one per workflow that each consumer's wake overwrites"},
    {"pending_scope", PARAM_ENUM, "none", "none|subscribed|all_topics", 0, 0,
     "seed 001 'Consumer Scheduling'; subscribed: seed 000 '4. Scheduler Logic' step 3; all_topics: as built",
     "pending events as a trigger: never, on the consumer's topics, or on any topic of the workflow"},
    {"dirty_clear", PARAM_ENUM, "commit", "commit|if_empty", 0, 0,
     "seed 001 'Scheduler Logic'; if_empty: as built",
     "when a commit clears dirty: always, or only when the run reserved nothing"},
    {"recover_dirty", PARAM_ENUM, "pending", "pending|all", 0, 0, "seed 001 'Restart Recovery' (Scheduler State); all: as built",
     "consumers marked dirty at a restart: those with pending events, or all"},
    {"priority", PARAM_ENUM, "consumers_first", "consumers_first|producers_first", 0, 0,
     "seed 001 'Priority'; producers_first: as built", "which kind runs first when a workflow becomes idle"},
    {"tick", PARAM_DURATION, "0", NULL, 0, US_PER_H, "seed 000 'Concurrency Model'; 10s: as built",
     "0: event-driven (a timer at the next due instant); else a check loop with this period"},
    {"backoff_base", PARAM_DURATION, "10s", NULL, US_PER_MS, US_PER_DAY, "as built (seed 001 'Retry Flow' names no numbers)",
     "delay before the first transient retry; doubles per retry"},
    {"backoff_cap", PARAM_DURATION, "10m", NULL, US_PER_MS, 30 * US_PER_DAY, "as built",
     "the largest transient backoff"},
    {"backoff_max", PARAM_INT, "5", NULL, 0, 1000, "as built",
     "transient retries before escalating to auto-fix (0: never escalate)"},
    {"autofix_delay", PARAM_DURATION, "1m", NULL, 0, 30 * US_PER_DAY, "seed 001 'Retry Flow' (no duration given)",
     "time auto-fix takes before a logic failure's new run"},
    {"reconcile_delay", PARAM_DURATION, "0", NULL, 0, 30 * US_PER_DAY,
     "seed 001 'Restart Recovery' (Run Management; no duration given)",
     "time reconciliation takes before an indeterminate mutation's run continues"},
    {"phase_reset", PARAM_ENUM, "before_mutated", "before_mutated|always", 0, 0,
     "seed 001 'Phase Reset Rules'; always: counterfactual",
     "when a failed or crashed run's successor starts fresh (always: even after its mutation)"},
    {"anchor", PARAM_ENUM, "nominal", "nominal|commit", 0, 0,
     "seed 000 'Why producers need queued' (next_run_at moves to the next interval); commit: keep.ai "
     "packages/agent/src/handler-state-machine.ts 597-609 and schedule-utils.ts 51-76",
     "a producer's next_run_at: the schedule's next instant when it fires, or its commit + the interval"},
    {"scope", PARAM_ENUM, "workflow", "workflow|host", 0, 0,
     "seed 001 'Single-Threaded Execution'; host: keep.ai packages/agent/src/workflow-scheduler.ts 384-425, "
     "503-613",
     "one run at a time per workflow, or on the whole host (newest workflow first: retries, due producers, "
     "then consumers)"},
    {"check_at_start", PARAM_BOOL, "false", NULL, 0, 0,
     "seed 000 'Concurrency Model' (a check loop); true: keep.ai workflow-scheduler.ts 235-238",
     "tick mode: the first check is at start, not one tick later"},
    {"recheck", PARAM_ENUM, "tick", "tick|at_once", 0, 0,
     "seed 000 'Concurrency Model'; at_once: keep.ai workflow-scheduler.ts 424 and "
     "session-orchestration.ts 279-440",
     "tick mode: after a run ends, wait for the next tick or check again at once"},
    {"consumer_order", PARAM_ENUM, "oldest_event", "oldest_event|declaration", 0, 0,
     "seed 001 'Priority'; declaration: keep.ai session-orchestration.ts 177-243",
     "which runnable consumer runs first: the one with the oldest pending event, or the first declared"},
    {"escalate", PARAM_ENUM, "autofix", "autofix|block", 0, 0,
     "seed 001 'Retry Flow' (escalation unnamed); block: keep.ai workflow-scheduler.ts 67-114",
     "after backoff_max transient retries: an auto-fix chain, or the workflow is blocked for the user"},
    {"autofix_max", PARAM_INT, "0", NULL, 0, 1000,
     "seed 001 'Retry Flow' (no budget); 2: keep.ai packages/agent/src/workflow-escalation.ts 9",
     "auto-fixes in a row before the workflow is blocked for the user (0: no limit)"},
    {"change", PARAM_ENUM, "next", "next|reset", 0, 0,
     "seeds 000/001 are silent; reset: keep.ai packages/agent/src/producer-schedule-init.ts 74-140",
     "a producer whose schedule changes: next fire of the new schedule, or at once"},
};

/* --- small helpers ----------------------------------------------------------- */

static uint32_t inst_of(const struct policy *p, uint32_t h) { return p->t->h_inst[h]; }
static int is_consumer(const struct policy *p, uint32_t h) { return p->t->h_kind[h] == H_CONSUMER; }

/* Sets a row's time; SIM_NEVER takes it out of the index. */
static void row_set(struct policy *p, uint64_t row, int64_t at_us)
{
    jobs_update(&p->d->rows, row, at_us == SIM_NEVER ? JOB_COMPLETED : JOB_PENDING, at_us);
}

static void kick_add(struct policy *p, uint32_t inst)
{
    if (p->kick_mark[inst])
        return;
    p->kick_mark[inst] = 1;
    p->kick[p->nkick++] = inst;
}

/* --- timed rows ---------------------------------------------------------------- */

/* A producer's next_run_at came: queue it (coalescing with a trigger already
 * queued) and move next_run_at to the schedule's next instant after now. */
static void producer_fire(struct policy *p, uint32_t h, int64_t now_us)
{
    int64_t d = p->d->h[h].next_run_at;
    /* The deploy-time run serves the schedule's instant only if one falls
     * exactly there. */
    int64_t nominal = sim_sched_next(p->sim, h, d, 1) == d ? d : -1;
    if (!p->v[h].queued || p->v[h].queued_due < 0)
        p->v[h].queued_due = nominal;
    p->v[h].queued = 1;
    if (p->anchor_commit) {
        /* next_run_at stays as it is (a crash finds it due) until the
         * run commits; the row only leaves the index. */
        row_set(p, p->d->h[h].row, SIM_NEVER);
    } else {
        p->d->h[h].next_run_at = sim_sched_next(p->sim, h, now_us, 0);
        row_set(p, p->d->h[h].row, p->d->h[h].next_run_at);
    }
    kick_add(p, inst_of(p, h));
}

/* anchor=commit: a producer's commit sets next_run_at to now + the
 * interval (a cron schedule: its next fire after now). */
static void producer_committed(struct policy *p, uint32_t h, int64_t now_us)
{
    struct sim_sched_info si;
    sim_sched_info(p->sim, h, &si);
    int64_t next = si.kind == SIM_SCHED_EVERY && !si.disabled ? now_us + si.every_us
                                                               : sim_sched_next(p->sim, h, now_us, 0);
    if (next >= sim_horizon(p->sim))
        next = SIM_NEVER;
    p->d->h[h].next_run_at = next;
    row_set(p, p->d->h[h].row, next);
}

/* Takes every row that is due by now out of the index and acts on it. */
static void rows_fire(struct policy *p, int64_t now_us)
{
    uint64_t id;
    while ((id = jobs_next_due(&p->d->rows, now_us)) != UINT64_MAX) {
        const struct job *j = jobs_get(&p->d->rows, id);
        uint32_t x = j->handler;
        int kind = (int)j->tag;
        if (kind == ROW_PRODUCER) {
            producer_fire(p, x, now_us);
            continue;
        }
        /* wakeAt, retry time and sleep stay recorded in their durable
         * fields (a due wakeAt is a trigger until a run replaces it); the
         * row only leaves the index. */
        jobs_update(&p->d->rows, id, JOB_COMPLETED, j->available_us);
        if (kind == ROW_WAKE) {
            kick_add(p, inst_of(p, x));
        } else if (kind == ROW_RETRY) {
            kick_add(p, x);
        } else {
            SIM_ASSERT(kind == ROW_SLEEP);
            for (uint32_t h = p->t->inst_first_h[x]; h < p->t->inst_first_h[x + 1]; h++)
                if (is_consumer(p, h))
                    p->v[h].woken = 1;
            kick_add(p, x);
        }
    }
}

/* Sets the host's alarm (or arms the check loop) for the earliest thing the
 * host must look at. */
static void host_arm(struct policy *p, int64_t now_us)
{
    int64_t at = SIM_NEVER;
    if (jobs_peek(&p->d->rows, &at) == UINT64_MAX)
        at = SIM_NEVER;
    if (p->stopping)
        return;
    if (p->tick_us) {
        if (p->deferred)
            sim_alarm(p->sim, p->alarm, now_us); /* check_at_start */
        /* While a run is active the next tick stays armed, so that its end
         * is looked at without arming anything then (a run may end during
         * a graceful stop, when the loop is gone). */
        if ((p->nkick || p->nactive) && at > now_us + 1)
            at = now_us + 1;
        if (at != SIM_NEVER && at <= now_us)
            at = now_us + 1; /* the tick being handled is over */
        sim_ticker_arm(p->sim, p->ticker, at);
        return;
    }
    if (p->deferred || p->nkick)
        at = now_us;
    sim_alarm(p->sim, p->alarm, at);
}

/* --- starting runs ------------------------------------------------------------------ */

/* Starts the run; returns its id, or 0 when nothing started (the run limit
 * ended the simulation): then nothing may change, the caller keeps its
 * flags. */
static uint64_t run_begin(struct policy *p, uint32_t inst, const struct run_req *req)
{
    struct wk_wf *wf = &p->d->wf[inst];
    SIM_ASSERT(wf->cur_run == 0 && !p->stopping);
    struct run_req rq = *req;
    uint32_t h = rq.handler;
    /* The timed row its end writes (a consumer's wakeAt), which the engine
     * loads before the end (sim_declare_run_rows). */
    rq.tag = p->per_workflow && is_consumer(p, h) ? wf->sleep_row : p->d->h[h].row;
    uint64_t id = sim_run_start(p->sim, &rq);
    if (!id)
        return 0;
    wf->cur_run = id;
    wf->cur_h = h;
    p->nactive++;
    return id;
}

/* The next run of a paused workflow continues its held run by the phase
 * rules: fresh before `mutated`, resumed at emitting from `mutated` on;
 * after an indeterminate outcome, whatever reconciliation finds. */
static void continue_held(struct policy *p, uint32_t inst)
{
    struct wk_wf *wf = &p->d->wf[inst];
    struct sim_run_info ri;
    sim_run_get(p->sim, wf->held_run, &ri);
    SIM_ASSERT(!ri.active);
    /* A resumed run carries the mutation of the run it resumed. */
    int applied = ri.mutation_applied || ri.resume_of != 0;
    enum run_phase phase = ri.phase;
    /* An empty reservation has no mutation: such a run commits from
     * `prepared` (the engine runs it as one emitting stretch). */
    if (is_consumer(p, ri.handler) && ri.ntaken == 0 && !ri.resume_of)
        phase = PHASE_PREPARED;
    int resume = wf->why == WHY_RECONCILE ? applied : phase >= PHASE_MUTATED;
    if (p->reset_always)
        resume = 0;
    struct run_req rq = RUN_REQ_INIT;
    rq.handler = ri.handler;
    rq.reason = wf->after_crash ? REASON_RECOVER : REASON_RETRY;
    rq.retry_of = wf->held_run;
    rq.resume_of = resume ? wf->held_run : 0;
    rq.due_us = ri.due_us;
    if (!run_begin(p, inst, &rq))
        return;
    if (!is_consumer(p, ri.handler)) {
        /* It serves its queued trigger too (coalesced). */
        p->v[ri.handler].queued = 0;
        p->v[ri.handler].manual = 0;
        p->v[ri.handler].queued_due = -1;
    }
    wf->state = WF_READY;
    wf->why = WHY_NONE;
    wf->after_crash = 0;
    wf->held_run = 0;
}

static int consumer_runnable(const struct policy *p, uint32_t h, int64_t now_us)
{
    if (p->v[h].dirty || p->v[h].queued)
        return 1;
    if (p->per_workflow ? p->v[h].woken : p->d->h[h].wake_at <= now_us)
        return 1;
    if (p->scope == SCOPE_NONE)
        return 0;
    if (sim_pending_count(p->sim, h))
        return 1;
    return p->scope == SCOPE_ALL_TOPICS && sim_orphan_pending(p->sim, inst_of(p, h)) > 0;
}

/* The runnable consumer with the oldest pending event (ties and consumers
 * with nothing pending: handler order), or UINT32_MAX.  O(handlers). */
static uint32_t pick_consumer(const struct policy *p, uint32_t inst, int64_t now_us)
{
    uint32_t best = UINT32_MAX;
    int64_t best_t = 0;
    for (uint32_t h = p->t->inst_first_h[inst]; h < p->t->inst_first_h[inst + 1]; h++) {
        if (!is_consumer(p, h) || !consumer_runnable(p, h, now_us))
            continue;
        if (p->by_declaration)
            return h;
        int64_t t = sim_pending_oldest(p->sim, h);
        if (best == UINT32_MAX || t < best_t) {
            best = h;
            best_t = t;
        }
    }
    return best;
}

static uint32_t pick_producer(const struct policy *p, uint32_t inst)
{
    for (uint32_t h = p->t->inst_first_h[inst]; h < p->t->inst_first_h[inst + 1]; h++)
        if (!is_consumer(p, h) && p->v[h].queued)
            return h;
    return UINT32_MAX;
}

static void start_consumer(struct policy *p, uint32_t inst, uint32_t h, int64_t now_us)
{
    struct run_req rq = RUN_REQ_INIT;
    rq.handler = h;
    if (p->v[h].dirty || p->v[h].queued)
        rq.reason = REASON_EVENT;
    else if (p->per_workflow ? p->v[h].woken : p->d->h[h].wake_at <= now_us)
        rq.reason = REASON_WAKE;
    else
        rq.reason = REASON_OTHER; /* pending events only (pending_scope) */
    /* The queued trigger and the legacy wake are served by this run; dirty
     * stays until the commit. */
    if (!run_begin(p, inst, &rq))
        return;
    p->v[h].queued = 0;
    p->v[h].woken = 0;
}

static void start_producer(struct policy *p, uint32_t inst, uint32_t h)
{
    struct run_req rq = RUN_REQ_INIT;
    rq.handler = h;
    rq.reason = p->v[h].manual ? REASON_MANUAL : REASON_SCHEDULE;
    rq.due_us = p->v[h].queued_due;
    if (!run_begin(p, inst, &rq))
        return;
    p->v[h].queued = 0;
    p->v[h].manual = 0;
    p->v[h].queued_due = -1;
}

/* An idle workflow starts its next run, if it has one. */
static void wf_kick(struct policy *p, uint32_t inst, int64_t now_us)
{
    struct wk_wf *wf = &p->d->wf[inst];
    if (wf->cur_run || wf->state == WF_STOPPED || p->stopping || (p->host_scope && p->nactive))
        return;
    if (wf->state == WF_PAUSED) {
        /* Triggers accumulate meanwhile; nothing else runs (001 "Paused
         * Workflows": backoff is per workflow). */
        if (wf->retry_at <= now_us)
            continue_held(p, inst);
        return;
    }
    uint32_t c = pick_consumer(p, inst, now_us), pr = pick_producer(p, inst);
    if (c != UINT32_MAX && (!p->producers_first || pr == UINT32_MAX))
        start_consumer(p, inst, c, now_us);
    else if (pr != UINT32_MAX)
        start_producer(p, inst, pr);
}

/* scope=host: whether instance inst has something of kind `what` to run
 * (0: a held run due for its retry, 1: a queued producer, 2: a runnable
 * consumer). */
static int host_has(const struct policy *p, uint32_t inst, int what, int64_t now_us)
{
    const struct wk_wf *wf = &p->d->wf[inst];
    if (wf->state == WF_STOPPED || wf->cur_run)
        return 0;
    if (wf->state == WF_PAUSED)
        return what == 0 && wf->retry_at <= now_us;
    if (what == 1)
        return pick_producer(p, inst) != UINT32_MAX;
    return what == 2 && pick_consumer(p, inst, now_us) != UINT32_MAX;
}

/* scope=host: one run at a time on the whole host.  The workflow whose
 * session is going on (`first`) continues while it has something to run;
 * then retries, due producers and consumers, in that order, newest
 * workflow first.  O(instances x handlers). */
static void host_pick(struct policy *p, uint32_t first, int64_t now_us)
{
    if (p->nactive || p->stopping)
        return;
    if (first != UINT32_MAX) {
        wf_kick(p, first, now_us);
        if (p->nactive)
            return;
    }
    for (int what = 0; what < 3; what++)
        for (uint32_t i = p->t->ninst; i-- > 0;)
            if (host_has(p, i, what, now_us)) {
                wf_kick(p, i, now_us);
                if (p->nactive)
                    return;
            }
}

static void kick_flush(struct policy *p, int64_t now_us)
{
    if (p->host_scope) {
        for (uint32_t i = 0; i < p->nkick; i++)
            p->kick_mark[p->kick[i]] = 0;
        p->nkick = 0;
        host_pick(p, UINT32_MAX, now_us);
        return;
    }
    for (uint32_t i = 0; i < p->nkick; i++) {
        p->kick_mark[p->kick[i]] = 0;
        wf_kick(p, p->kick[i], now_us);
    }
    p->nkick = 0;
}

/* Every hook ends here: an event-driven host acts at once (unless its
 * start-up pass is still to come); a check loop waits for its next tick. */
static void hook_end(struct policy *p, int64_t now_us)
{
    if (p->stopping)
        return;
    if (!p->tick_us && !p->deferred) {
        rows_fire(p, now_us);
        kick_flush(p, now_us);
    }
    host_arm(p, now_us);
}

static void pause_wf(struct policy *p, uint32_t inst, enum pause_why why, uint64_t run, int64_t at_us)
{
    struct wk_wf *wf = &p->d->wf[inst];
    wf->state = WF_PAUSED;
    wf->why = (uint8_t)why;
    wf->held_run = run;
    wf->retry_at = at_us;
    row_set(p, wf->retry_row, at_us);
}

/* Records the wake a consumer's script asked for, clamped; no request
 * clears it (seed 000 "5. Handle wakeAt in State Machine": null clears). */
static void record_wake(struct policy *p, uint32_t h, int64_t wake_us, int64_t start_us)
{
    int64_t v = SIM_NEVER;
    if (wake_us != SIM_NEVER) {
        int64_t lo = start_us + p->wake_min_us, hi = start_us + p->wake_max_us;
        v = wake_us < lo ? lo : wake_us > hi ? hi : wake_us;
    }
    if (p->per_workflow) {
        struct wk_wf *wf = &p->d->wf[inst_of(p, h)];
        wf->sleep_until = v;
        row_set(p, wf->sleep_row, v);
        return;
    }
    p->d->h[h].wake_at = v;
    row_set(p, p->d->h[h].row, v);
}

/* --- hooks ---------------------------------------------------------------------------- */

static struct policy *wakeat_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct policy *p = xcalloc(1, sizeof *p);
    p->sim = sim;
    p->d = durable;
    p->t = sim_topo(sim);
    p->wake_min_us = params_get(ps, "wake_min");
    p->wake_max_us = params_get(ps, "wake_max");
    if (p->wake_max_us < p->wake_min_us)
        p->wake_max_us = p->wake_min_us;
    p->per_workflow = params_get(ps, "granularity") == 1;
    p->scope = (int)params_get(ps, "pending_scope");
    p->dirty_if_empty = params_get(ps, "dirty_clear") == 1;
    p->recover_all = params_get(ps, "recover_dirty") == 1;
    p->producers_first = params_get(ps, "priority") == 1;
    p->tick_us = params_get(ps, "tick");
    int64_t base = params_get(ps, "backoff_base"), cap = params_get(ps, "backoff_cap");
    p->bo = backoff_exp(base, cap < base ? base : cap, (uint32_t)params_get(ps, "backoff_max"));
    p->autofix_us = params_get(ps, "autofix_delay");
    p->reconcile_us = params_get(ps, "reconcile_delay");
    p->reset_always = params_get(ps, "phase_reset") == 1;
    p->anchor_commit = params_get(ps, "anchor") == 1;
    p->host_scope = params_get(ps, "scope") == 1;
    p->check_at_start = (int)params_get(ps, "check_at_start");
    p->recheck_now = params_get(ps, "recheck") == 1;
    p->by_declaration = params_get(ps, "consumer_order") == 1;
    p->block = params_get(ps, "escalate") == 1;
    p->autofix_max = (uint32_t)params_get(ps, "autofix_max");
    p->reset_on_change = params_get(ps, "change") == 1;

    uint32_t nh = p->t->nh ? p->t->nh : 1, ni = p->t->ninst ? p->t->ninst : 1;
    p->v = xcalloc(nh, sizeof *p->v);
    for (uint32_t h = 0; h < p->t->nh; h++)
        p->v[h].queued_due = -1;
    p->kick = xcalloc(ni, sizeof *p->kick);
    p->kick_mark = xcalloc(ni, 1);

    struct wk_durable *d = p->d;
    p->incarnation = ++d->incarnation;
    p->alarm = sim_alarm_new(sim, T_HOST, p->incarnation);
    if (!d->inited) {
        /* Deploy: every producer's next_run_at is now (001 "Initial State"). */
        d->inited = 1;
        sim_jobs_init(sim, &d->rows);
        d->h = sim_dalloc(sim, nh * sizeof *d->h);
        d->wf = sim_dalloc(sim, ni * sizeof *d->wf);
        for (uint32_t h = 0; h < p->t->nh; h++) {
            int prod = !is_consumer(p, h);
            d->h[h].next_run_at = prod ? 0 : SIM_NEVER;
            d->h[h].wake_at = SIM_NEVER;
            struct job j = {.handler = h, .status = prod ? JOB_PENDING : JOB_COMPLETED,
                            .available_us = prod ? 0 : SIM_NEVER, .due_us = -1, .item = UINT64_MAX,
                            .tag = prod ? ROW_PRODUCER : ROW_WAKE};
            d->h[h].row = jobs_add(&d->rows, &j);
        }
        for (uint32_t i = 0; i < p->t->ninst; i++) {
            struct wk_wf *wf = &d->wf[i];
            wf->sleep_until = SIM_NEVER;
            wf->retry_at = SIM_NEVER;
            struct job j = {.handler = i, .status = JOB_COMPLETED, .available_us = SIM_NEVER, .due_us = -1,
                            .item = UINT64_MAX, .tag = ROW_RETRY};
            wf->retry_row = jobs_add(&d->rows, &j);
            j.tag = ROW_SLEEP;
            wf->sleep_row = jobs_add(&d->rows, &j);
        }
    }
    sim_declare_rows(sim, d->h, sizeof *d->h);
    sim_declare_rows(sim, p->v, sizeof *p->v);
    sim_declare_inst_rows(sim, d->wf, sizeof *d->wf);
    sim_declare_run_rows(sim, &d->rows);
    return p;
}

static void wakeat_destroy(struct policy *p)
{
    free(p->v);
    free(p->kick);
    free(p->kick_mark);
    free(p);
}

static void wakeat_start(struct policy *p, int restart, int64_t now_us)
{
    const struct sim_topo *w = p->t;
    if (p->tick_us)
        p->ticker = sim_ticker_new(p->sim, p->tick_us, T_TICK);
    if (!p->tick_us || p->check_at_start)
        p->deferred = 1; /* the first pass runs after whatever else happens now */
    if (restart && p->anchor_commit) {
        /* A producer whose run never committed is due at its old time. */
        for (uint32_t h = 0; h < w->nh; h++)
            if (!is_consumer(p, h) && p->d->h[h].next_run_at != SIM_NEVER)
                row_set(p, p->d->h[h].row, p->d->h[h].next_run_at);
    }
    for (uint32_t i = 0; i < w->ninst; i++) {
        struct wk_wf *wf = &p->d->wf[i];
        if (restart && wf->cur_run) {
            /* The run that was active is marked crashed (the engine's run
             * record says crashed, or cut off by a graceful stop) and
             * continued by the phase rules; a crash in `mutating` leaves
             * the outcome unknown: reconciliation. */
            struct sim_run_info ri;
            sim_run_get(p->sim, wf->cur_run, &ri);
            SIM_ASSERT(!ri.active && (ri.outcome == OUT_CRASHED || ri.outcome == OUT_CUTOFF));
            int unsure = ri.phase == PHASE_MUTATING;
            pause_wf(p, i, unsure ? WHY_RECONCILE : WHY_CRASH, wf->cur_run,
                     now_us + (unsure ? p->reconcile_us : 0));
            wf->after_crash = 1;
            wf->cur_run = 0;
        }
        if (restart && p->per_workflow && wf->sleep_until <= now_us)
            for (uint32_t h = w->inst_first_h[i]; h < w->inst_first_h[i + 1]; h++)
                p->v[h].woken = is_consumer(p, h);
        kick_add(p, i);
    }
    for (uint32_t h = 0; h < w->nh; h++) {
        if (!is_consumer(p, h))
            continue;
        /* Deploy: every consumer dirty (001 "Initial State"); restart: those
         * with pending events (or all, as built). */
        p->v[h].dirty = !restart || p->recover_all || sim_pending_count(p->sim, h) > 0;
    }
    /* Producers past next_run_at are queued; wakeAt rows need nothing. */
    rows_fire(p, now_us);
    host_arm(p, now_us);
}

static void wakeat_on_publish(struct policy *p, uint32_t h, uint64_t item, int64_t now_us)
{
    uint32_t inst = inst_of(p, h);
    const struct wk_wf *wf = &p->d->wf[inst];
    if (wf->cur_run && wf->cur_h == h)
        p->v[h].queued = 1;
    else
        p->v[h].dirty = 1;
    kick_add(p, inst);
    hook_end(p, now_us);
}

static void wakeat_on_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now_us)
{
    p->deferred = 0;
    rows_fire(p, now_us);
    kick_flush(p, now_us);
    host_arm(p, now_us);
}

static void wakeat_on_run_end(struct policy *p, const struct run_result *r, int64_t now_us)
{
    uint32_t h = r->handler, inst = inst_of(p, h);
    struct wk_wf *wf = &p->d->wf[inst];
    SIM_ASSERT(wf->cur_run == r->run);
    wf->cur_run = 0;
    SIM_ASSERT(p->nactive > 0);
    p->nactive--;
    int committed = r->outcome == OUT_COMMITTED;
    if (is_consumer(p, h)) {
        struct sim_run_info ri;
        sim_run_get(p->sim, r->run, &ri);
        /* wakeAt is recorded once prepare succeeded; a resumed run did not
         * prepare (its results, wakeAt included, are the earlier run's). */
        if (!ri.resume_of && (committed || r->phase > PHASE_PREPARING))
            record_wake(p, h, r->wake_us, r->start_us);
        if (committed && (!p->dirty_if_empty || r->ntaken == 0))
            p->v[h].dirty = 0;
    }
    if (committed) {
        wf->attempts = 0;
        wf->fixes = 0;
        if (p->anchor_commit && !is_consumer(p, h))
            producer_committed(p, h, now_us);
    } else {
        switch (r->fail) {
        case FAIL_TRANSIENT:
            wf->attempts++;
            if (!backoff_exhausted(&p->bo, wf->attempts)) {
                pause_wf(p, inst, WHY_TRANSIENT, r->run, now_us + backoff_delay(&p->bo, wf->attempts));
                break;
            }
            if (p->block) {
                /* Too many: the workflow waits for its user. */
                wf->state = WF_STOPPED;
                wf->held_run = r->run;
                break;
            }
            /* Too many: escalate to auto-fix, a new chain of attempts. */
            /* fall through */
        case FAIL_LOGIC:
            wf->attempts = 0;
            if (p->autofix_max && ++wf->fixes > p->autofix_max) {
                wf->state = WF_STOPPED; /* escalated to the user */
                wf->held_run = r->run;
                break;
            }
            pause_wf(p, inst, WHY_LOGIC, r->run, now_us + p->autofix_us);
            break;
        case FAIL_INDETERMINATE:
            pause_wf(p, inst, WHY_RECONCILE, r->run, now_us + p->reconcile_us);
            break;
        case FAIL_INTERNAL:
        default:
            /* Needs support: the workflow stops for good. */
            wf->state = WF_STOPPED;
            wf->held_run = r->run;
            break;
        }
    }
    kick_add(p, inst);
    if (p->host_scope && !p->stopping && (!p->tick_us || p->recheck_now)) {
        /* The session of this workflow goes on, else the next one. */
        rows_fire(p, now_us);
        host_pick(p, inst, now_us);
    }
    if (p->tick_us && !p->recheck_now)
        return; /* the loop is armed for its next tick (host_arm) */
    if (p->tick_us) {
        /* recheck=at_once: a check right after the run, then the ticks. */
        if (!p->stopping) {
            rows_fire(p, now_us);
            kick_flush(p, now_us);
            host_arm(p, now_us);
        }
        return;
    }
    hook_end(p, now_us);
}

/* A graceful stop: the scheduler stops.  Runs still active may end; their
 * ends are recorded (durable run record, wakeAt, pause state) but nothing is
 * started or armed again; the flags they would have served are lost with
 * the volatile state, and the restart recovers from the durable state. */
static void wakeat_on_stop(struct policy *p, int64_t now_us) { p->stopping = 1; }

static void wakeat_on_trigger(struct policy *p, uint32_t inst, int64_t now_us)
{
    const struct wk_wf *wf = &p->d->wf[inst];
    if (wf->cur_run || wf->state != WF_READY)
        return; /* rejected: a run is active, or the workflow is paused */
    for (uint32_t h = p->t->inst_first_h[inst]; h < p->t->inst_first_h[inst + 1]; h++) {
        if (is_consumer(p, h))
            continue;
        if (!p->v[h].queued) {
            p->v[h].queued_due = -1;
            p->v[h].manual = 1;
        }
        p->v[h].queued = 1;
    }
    kick_add(p, inst);
    hook_end(p, now_us);
}

/* A producer's schedule changed: off while disabled; else its next fire,
 * or (change=reset) at once, as a redeployed schedule. */
static void wakeat_on_schedule_change(struct policy *p, uint32_t h, int64_t now_us)
{
    struct sim_sched_info si;
    sim_sched_info(p->sim, h, &si);
    int64_t was = p->d->h[h].next_run_at, next;
    if (si.disabled)
        next = SIM_NEVER;
    else if (p->reset_on_change && was != SIM_NEVER)
        next = now_us;
    else
        next = sim_sched_next(p->sim, h, now_us, 1);
    p->d->h[h].next_run_at = next;
    if (!(p->anchor_commit && p->v[h].queued))
        row_set(p, p->d->h[h].row, next);
    hook_end(p, now_us);
}

/* A manual run of one handler: a producer is queued, a consumer dirty. */
static void wakeat_on_trigger_ex(struct policy *p, const struct sim_trigger *t, int64_t now_us)
{
    if (t->handler == UINT32_MAX) {
        wakeat_on_trigger(p, t->inst, now_us);
        return;
    }
    const struct wk_wf *wf = &p->d->wf[t->inst];
    if (wf->cur_run || wf->state != WF_READY)
        return;
    uint32_t h = t->handler;
    if (is_consumer(p, h)) {
        p->v[h].dirty = 1;
    } else {
        if (!p->v[h].queued) {
            p->v[h].queued_due = -1;
            p->v[h].manual = 1;
        }
        p->v[h].queued = 1;
    }
    kick_add(p, t->inst);
    hook_end(p, now_us);
}

static const struct variant_setting keepai_settings[] = {
    {"tick", "10s", "packages/agent/src/workflow-scheduler.ts 235 (setInterval(checkWork, 10000))"},
    {"check_at_start", "true", "workflow-scheduler.ts 237-238 (checkWork called at start)"},
    {"recheck", "at_once", "workflow-scheduler.ts 424 (checkWork again after work); session-orchestration.ts 279-440"},
    {"scope", "host", "workflow-scheduler.ts 384-425 (isRunning), 503-613 (one workflow per check, newest first)"},
    {"anchor", "commit", "handler-state-machine.ts 597-609; schedule-utils.ts 51-76 (computeNextRunTime from now)"},
    {"priority", "producers_first", "session-orchestration.ts 327-379 (producers, then the consumer loop)"},
    {"consumer_order", "declaration", "session-orchestration.ts 177-243 (findConsumerWithPendingWork)"},
    {"dirty_clear", "if_empty", "scheduler-state.ts 116-123 (onConsumerCommit)"},
    {"recover_dirty", "all", "workflow-scheduler.ts 344-369; scheduler-state.ts 316-339"},
    {"escalate", "block", "workflow-scheduler.ts 48, 67-114 (MAX_NETWORK_RETRIES = 5, then blocked)"},
    {"autofix_max", "2", "workflow-escalation.ts 9 (MAX_FIX_ATTEMPTS = 3: the third escalates)"},
    {"change", "reset", "producer-schedule-init.ts 74-140 (a changed producer is reset to now)"},
};

static const struct policy_variant wakeat_variants[] = {
    {"keepai", "keep.ai as built: one session at a time on the host, a 10 s check loop, commit-anchored producers",
     "nostrband/keep.ai@205c2e665476099d35b6ac94244df962f3f2f1c9 packages/agent/src", "keepai", keepai_settings,
     (int)(sizeof keepai_settings / sizeof keepai_settings[0])},
};

const struct policy_ops policy_wakeat = {
    .abi = POLICY_ABI,
    .name = "wakeat",
    .summary = "single-threaded workflows: dirty/queued flags, per-consumer wakeAt, run phases, restart recovery",
    .seeds = "seeds 000, 001",
    .params = wakeat_params,
    .nparams = (int)(sizeof wakeat_params / sizeof wakeat_params[0]),
    .durable_size = sizeof(struct wk_durable),
    .promise = PROMISE_WORKFLOW,
    .items_volatile = 0,
    .create = wakeat_create,
    .destroy = wakeat_destroy,
    .start = wakeat_start,
    .on_publish = wakeat_on_publish,
    .on_timer = wakeat_on_timer,
    .on_run_end = wakeat_on_run_end,
    .on_trigger = wakeat_on_trigger,
    .on_stop = wakeat_on_stop,
    .on_schedule_change = wakeat_on_schedule_change,
    .on_trigger_ex = wakeat_on_trigger_ex,
    .variants = wakeat_variants,
    .nvariants = (int)(sizeof wakeat_variants / sizeof wakeat_variants[0]),
};
