/* heartbeat.c: one alarm clock per agent with wake coalescing, a volatile
 * system-event queue, a file-backed cron engine and a delivery queue (seed
 * 004 "Scheduling Subsystem", Open Alice; spec section 4).
 *
 * The mapping onto the workload.  A workflow instance is one agent with its
 * own scheduler.  Its consumers are the agent's duties, which every run of
 * the agent checks (the prompt of every run is the heartbeat prompt plus the
 * drained system events: seed "Data Flow"); its producers are its cron jobs,
 * and a producer's run is the agent processing that job's system event.
 *
 * The rules, in the seed's words, and where each lives below:
 *  - "Scheduler is the single alarm clock": every reason to run goes through
 *    request_wake().  The heartbeat requests `interval` every `every` from
 *    start-up (first at start + every, seed "Scheduler"); cron fires request
 *    `cron`; publishes request `hook`; a manual trigger `manual`; a failed
 *    run `retry` one second later ("Auto-Retry on Failure").
 *  - "Wake Coalescing": requests within `coalesce` (250 ms) of the first one
 *    give one flush with the highest-priority reason (retry 0 < interval 1 <
 *    cron = message 2 < manual = hook 3); the window starts at the first
 *    request and is not extended.
 *  - "Execution Mutex": one session per agent at a time.  Requests during a
 *    session are held and coalesced; when the session ends they flush at
 *    once if their window has passed, else at its end.
 *  - "Active Hours": at a flush whose reason is `interval`, outside the
 *    window, nothing runs and nothing is drained; other reasons run.
 *  - A flush drains the system-event queue ("drainSystemEvents() //
 *    Retrieves and clears") and runs a session: one producer run per drained
 *    cron event, then every consumer, each offered the items of its own that
 *    the agent has drained and not yet committed.  Runs follow one another
 *    (PROMISE_WORKFLOW).  A consumer's script that asks for a wake time is
 *    therefore served at the agent's next run: there is no wakeAt.
 *  - "System Event Queue": volatile, `queue_cap` (50) entries, oldest
 *    evicted; an entry with the same context key as a queued one replaces
 *    it (a cron job's key is the job; an item's is its consumer, topic and
 *    key, on topics whose streams all give keys).  Everything drained or queued lives in memory only
 *    (items_volatile): a crash loses it.
 *  - A failed run: the items its consumer was handed in that flush went
 *    into a call that threw and are gone (dropped); a failed cron job's
 *    next run is delayed by the error backoff; the agent is woken with
 *    `retry` after `retry_delay`.
 *  - Cron engine ("3. Cron"): per producer a durable row of jobs.json
 *    (nextRunAtMs, consecutive errors, enabled).  A fire enqueues a system
 *    event (context key `cron:<job>`), moves nextRunAtMs to the next fire
 *    (an `at` job is disabled) and requests `cron`.  The timer is re-armed
 *    at most `cron_rearm` (60 s) ahead ("Timer Drift Protection").  At
 *    start-up, fires missed while down are skipped.
 *  - Delivery ("4. Delivery"): a committed run with something to report
 *    (a cron job's run, or a consumer run that took items) is enqueued as a
 *    durable entry, delivered at once and acked `ack_delay` later; a run
 *    that took nothing ended with the ack token and delivers nothing.  A
 *    failed attempt is retried after 5 s, 25 s, 2 m, 10 m (the last
 *    repeats); after `max_retries` retries the entry moves to failed/.
 *    With delivery_retry=startup (as built) a failed entry waits for the
 *    next start-up.  At start-up recoverPending() takes the entries in
 *    enqueue order; before each it waits that entry's backoff (nothing for
 *    one never failed); once `recover_budget` (60 s) has been spent the rest
 *    are deferred.  An entry delivered but not acked is delivered again:
 *    at-least-once.
 *  - A graceful stop (on_stop): the run in progress may finish within the
 *    grace, and its result is still enqueued and delivered; the rest of the
 *    session and every held wake are abandoned (they live in memory only).
 *
 * Key invariant: an agent has a flush timer iff a wake is pending and no
 * session runs; a session has at most one run active, the one named by
 * cur_run.
 *
 * Durable: the cron jobs (jobs.json) and the delivery queue (a jobs table,
 * one row per entry).  Volatile: everything else, per agent: the pending
 * wake, the event queue, the drained items, the session, the timers and
 * alarms. */
#include <stdlib.h>
#include <string.h>

#include "sim/backoff.h"
#include "sim/cal.h"
#include "sim/jobs.h"
#include "sim/policy_api.h"
#include "sim/util.h"

/* Wake reasons and their priorities (seed "Wake Coalescing"). */
enum wake { WAKE_NONE = -1, WAKE_RETRY, WAKE_INTERVAL, WAKE_CRON, WAKE_MESSAGE, WAKE_MANUAL, WAKE_HOOK };
static const int wake_priority[] = {0, 1, 2, 2, 3, 3};

enum { T_FLUSH = 1, T_HEARTBEAT, T_CRON, T_RETRY, T_DELIVERY };
enum { DR_BACKOFF, DR_STARTUP };

struct hb_job {                    /* one cron job: its row of jobs.json */
    int64_t next_us;               /* nextRunAtMs; SIM_NEVER: no further fire */
    uint32_t errors;               /* consecutive failures */
    uint8_t enabled;               /* an `at` job is disabled after its fire */
};

struct hb_durable {
    int ready;
    struct hb_job *jobs;           /* [nh]; only producers' rows are used */
    struct jobtab dq;              /* the delivery queue: one row per entry */
    uint64_t dq_first;             /* rows below it are acked or failed (and forgotten) */
};

struct qent {                      /* a system event */
    uint64_t item;                 /* a published item; UINT64_MAX: a cron event */
    int64_t due_us;                /* a cron event: the fire it serves */
    uint32_t h;                    /* a cron event: its job (producer) */
};

struct step {                      /* one run of a session */
    uint32_t h;
    int64_t due_us;                /* producers: the fire served */
};

struct agent {
    struct qent *q;                /* oldest first */
    size_t nq, qcap;
    uint64_t *seen;                /* seen[seen_head, nseen): items the agent drained, oldest first;
                                      some may no longer be pending (seen_prune) */
    size_t seen_head, nseen, seencap;
    size_t seen_cur;               /* seen[seen_cur, nseen): drained by the latest flush */
    size_t seen_kept;              /* how many it held after the last full seen_prune */
    struct step *steps;
    size_t nsteps, stepcap, next_step;
    uint64_t cur_run;              /* the session's active run, 0 none */
    int64_t first_req_us;          /* when the pending wake was first requested */
    int64_t flush_at;              /* coalesce_from=request: when the flush timer fires */
    sim_timer flush_timer, hb_timer, retry_timer;
    int cron_alarm;                /* at the earliest enabled job (or cron_rearm ahead) */
    int8_t pending;                /* enum wake: the coalesced request, WAKE_NONE none */
    int8_t reason;                 /* enum wake: why the session runs */
    uint8_t running;               /* a session is in progress */
    uint8_t failed;                /* a run of this session failed */
    /* q, seen and steps while they are short (xgrow_in), and again each
     * time they empty (xempty_in): a flush and a session read them with
     * the agent, not from blocks of their own */
    struct qent q_in[2];
    uint64_t seen_in[2];
    struct step steps_in[2];
};

struct policy {
    struct sim *sim;
    struct hb_durable *d;
    const struct sim_topo *t;
    struct agent *ag;              /* [ninst] */
    int dq_alarm;                  /* at the earliest timed delivery entry */
    struct backoff cron_bo, dq_bo;
    struct cal_window win;
    int win_on;
    /* parameters */
    int64_t every_us, coalesce_us, retry_us, rearm_us, ack_us, budget_us;
    uint32_t queue_cap, max_retries;
    int stopping;                  /* a graceful stop began (on_stop) */
    int heartbeat_on, cron_on, context_key, cron_backoff, dom_dow_and, delivery_retry;
    int requeue, cooldown, busy_skip, ties_last, from_request, held_poll, win_never, no_scheduler, every_fire;
    int wait_always;               /* recover_wait=always */
};

static const int64_t cron_delays_us[] = {30 * US_PER_S, US_PER_MIN, 5 * US_PER_MIN, 15 * US_PER_MIN, US_PER_H, 0};
static const int64_t dq_delays_us[] = {5 * US_PER_S, 25 * US_PER_S, 2 * US_PER_MIN, 10 * US_PER_MIN, 0};

static const struct param_def heartbeat_params[] = {
    {"every", PARAM_DURATION, "30m", NULL, 0, 30 * US_PER_DAY, "seed 004 'Configuration' (heartbeat.every)",
     "heartbeat interval; the first heartbeat is one interval after start-up (0: no heartbeat timer, the "
     "scheduler still runs)"},
    {"heartbeat_on", PARAM_BOOL, "true", NULL, 0, 0,
     "seed 004 'Configuration' (heartbeat.enabled); as built: off by default in its config",
     "whether the heartbeat timer runs at all"},
    {"coalesce", PARAM_DURATION, "250ms", NULL, 0, US_PER_H, "seed 004 'Wake Coalescing'",
     "wake requests within this window of the first one give one run (not extended)"},
    {"retry_delay", PARAM_DURATION, "1s", NULL, US_PER_MS, US_PER_H, "seed 004 'Auto-Retry on Failure'",
     "after a failed run, a 'retry' wake is requested this much later (no backoff)"},
    {"active_start", PARAM_TOD, "00:00", NULL, 0, 0, "seed 004 'Active Hours'",
     "local time of day (HH:MM) at which interval heartbeats may start; equal to active_end: always"},
    {"active_end", PARAM_TOD, "00:00", NULL, 0, 0, "seed 004 'Active Hours'",
     "local time of day (HH:MM) from which interval heartbeats stop; before active_start: the window crosses midnight"},
    {"active_tz", PARAM_ZONE, "local", NULL, 0, 0, "seed 004 'Active Hours' (an IANA zone; 'local': the scenario's zone)",
     "the time zone of the active-hours window"},
    {"queue_cap", PARAM_INT, "50", NULL, 1, 1000000, "seed 004 '1. Agent Events' (System Event Queue)",
     "system-event queue capacity per agent; the oldest entry is evicted"},
    {"context_key", PARAM_BOOL, "true", NULL, 0, 0, "seed 004 '1. Agent Events' (contextKey)",
     "a queued event with the same context key is replaced by the newer one"},
    {"cron_on", PARAM_BOOL, "true", NULL, 0, 0, "seed 004 'Configuration' (cron.enabled); as built: off by default in its config",
     "whether the cron engine fires the producers' schedules"},
    {"cron_backoff", PARAM_ENUM, "table", "table|none", 0, 0,
     "seed 004 'Error Backoff'; none: as built (retry without backoff)",
     "after consecutive failures a job's next run waits 30s, 1m, 5m, 15m, then 60m"},
    {"cron_rearm", PARAM_DURATION, "60s", NULL, US_PER_S, US_PER_DAY, "seed 004 'Timer Drift Protection'",
     "the cron timer is set at most this far ahead and recalculated when it fires"},
    {"dom_dow", PARAM_ENUM, "or", "or|and", 0, 0, "standard cron; and: as built (spec 4)",
     "how a cron job combines a restricted day-of-month with a restricted day-of-week"},
    {"delivery_retry", PARAM_ENUM, "backoff", "backoff|startup", 0, 0,
     "seed 004 '4. Delivery' (Retry Backoff); startup: as built (seed 'Usage in runOnce')",
     "failed deliveries are retried after 5s, 25s, 2m, 10m, or only by recovery at the next start-up"},
    {"max_retries", PARAM_INT, "5", NULL, 0, 1000, "seed 004 'Configuration' (delivery.maxRetries)",
     "retries of a delivery before its entry moves to failed/"},
    {"recover_budget", PARAM_DURATION, "60s", NULL, 0, US_PER_DAY, "seed 004 'Crash Recovery'",
     "time budget of start-up recovery; entries not started within it are deferred"},
    {"ack_delay", PARAM_DURATION, "0", NULL, 0, US_PER_H,
     "modelling choice: the gap between deliver() and ack() (seed 004 'Usage in runOnce'; no figure given)",
     "time from a successful delivery to the deletion of its queue file; a crash inside it repeats the delivery"},
    {"on_failure", PARAM_ENUM, "drop", "drop|requeue", 0, 0,
     "seed 004 'Auto-Retry on Failure' (the events are gone); requeue: TraderAlice/OpenAlice@172f094 "
     "src/core/scheduler.ts 375-393, openclaw src/infra/heartbeat-wake.ts schedule()",
     "a failed run: the events drained for it are dropped, or put back in the queue (the rest of the session "
     "is abandoned)"},
    {"retry_style", PARAM_ENUM, "coalesce", "coalesce|cooldown", 0, 0,
     "seed 004 'Auto-Retry on Failure'; cooldown: openclaw src/infra/heartbeat-wake.ts schedule() (retry "
     "kind kept)",
     "coalesce: retry_delay later a 'retry' wake is requested; cooldown: the failed wake keeps its reason and "
     "flushes exactly retry_delay later, and no request brings that forward"},
    {"busy", PARAM_ENUM, "run", "run|skip", 0, 0,
     "seed 004 (no outside work); skip: OpenAlice@172f094 src/main.ts 294-300, scheduler.ts 361-370; "
     "openclaw src/infra/heartbeat-wake.ts (requests-in-flight)",
     "a flush while the agent is busy outside the scheduler: run anyway, or skip and retry after retry_delay "
     "(coalesce: only if events wait; cooldown: always, with the wake's own reason)"},
    {"ties", PARAM_ENUM, "first", "first|last", 0, 0,
     "seed 004 'Wake Coalescing' (a higher priority replaces); last: openclaw src/infra/heartbeat-wake.ts "
     "queuePendingWakeReason",
     "a request of the same priority as the pending one: keeps the pending reason, or replaces it"},
    {"coalesce_from", PARAM_ENUM, "first", "first|request", 0, 0,
     "seed 004 'Wake Coalescing' (not extended); request: openclaw src/infra/heartbeat-wake.ts schedule() "
     "and requestHeartbeat",
     "the flush comes coalesce after the first request, or each request (with its own trigger delay) may "
     "bring it forward, never back"},
    {"held_flush", PARAM_ENUM, "at_end", "at_end|poll", 0, 0,
     "seed 004 'Execution Mutex'; poll: OpenAlice@172f094 src/core/scheduler.ts 320-328",
     "a wake held during a session: flushed when the session ends (or its window does), or by a timer that "
     "re-arms every coalesce until the session is over"},
    {"active_equal", PARAM_ENUM, "always", "always|never", 0, 0,
     "docs/calendar.md (equal ends: no restriction); never: OpenAlice@172f094 src/core/scheduler.ts 87-108, "
     "openclaw src/infra/heartbeat-active-hours.ts isWithinActiveHours",
     "active_start equal to active_end: always active, or never (00:00-00:00, the defaults, is always: no "
     "active hours)"},
    {"active_hours", PARAM_ENUM, "window", "window|always", 0, 0,
     "seed 004 'Active Hours'; always: what OpenAlice and openclaw do with an unreadable time",
     "window: active_start/active_end apply; always: no active hours"},
    {"scheduler", PARAM_ENUM, "always", "always|with_heartbeat", 0, 0,
     "seed 004 'Scheduler'; with_heartbeat: OpenAlice@172f094 src/main.ts 226-232, 396-404",
     "the wake scheduler runs always, or only when heartbeat_on (without it nothing wakes the agent: cron "
     "events and messages wait in the queue)"},
    {"recover_wait", PARAM_ENUM, "failed", "failed|always", 0, 0,
     "seed 004 'Crash Recovery' (the backoff of an entry's failures); always: OpenAlice@172f094 "
     "src/core/delivery.ts recoverPending 198-248 (backoff(retryCount + 1) before every entry)",
     "start-up recovery waits before an entry that failed (its backoff), or before every entry, 5 s for one "
     "that never failed"},
    {"every_from", PARAM_ENUM, "nominal", "nominal|fire", 0, 0,
     "seed 004 '3. Cron'; fire: OpenAlice@172f094 src/core/cron.ts 204-217, 347-387 (tick + interval)",
     "an `every` cron job's next run: the schedule's next instant, or the fire (or run-now) instant + the "
     "interval"},
};

static struct agent *agent_of(struct policy *p, uint32_t h) { return &p->ag[p->t->h_inst[h]]; }

static int is_producer(const struct policy *p, uint32_t h) { return p->t->h_kind[h] == H_PRODUCER; }

/* An `at` job: disabled after its one fire. */
static int is_one_shot(const struct policy *p, uint32_t h)
{
    struct sim_sched_info si;
    sim_sched_info(p->sim, h, &si);
    return si.kind == SIM_SCHED_AT;
}

/* --- the cron schedule --------------------------------------------------- */

/* The job's next nominal fire after after_us (>= when inclusive); with
 * dom_dow=and a cron job whose two day fields are both restricted is
 * evaluated with AND instead of cron's OR. */
static int64_t job_next(struct policy *p, uint32_t h, int64_t after_us, int inclusive)
{
    struct sim_sched_opts o = {.days_and = p->dom_dow_and};
    return sim_sched_next_opt(p->sim, h, after_us, inclusive, &o);
}

/* A job's next run after it ran at now: every_from=fire, an `every` job
 * now + its interval; otherwise its next nominal fire. */
static int64_t job_after(struct policy *p, uint32_t h, int64_t now_us)
{
    struct sim_sched_info si;
    sim_sched_info(p->sim, h, &si);
    if (p->every_fire && si.kind == SIM_SCHED_EVERY && !si.disabled)
        return now_us + si.every_us < sim_horizon(p->sim) ? now_us + si.every_us : SIM_NEVER;
    return job_next(p, h, now_us, 0);
}

/* A job's first run when the engine starts at now (deploy, or a restart
 * whose missed fires are skipped): every_from=fire, an `every` job one
 * interval later (Open Alice's add() and start()); else its next nominal
 * fire from now. */
static int64_t job_first(struct policy *p, uint32_t h, int64_t now_us)
{
    struct sim_sched_info si;
    sim_sched_info(p->sim, h, &si);
    if (p->every_fire && si.kind == SIM_SCHED_EVERY)
        return job_after(p, h, now_us);
    return job_next(p, h, now_us, 1);
}

/* Sets the agent's cron alarm at its earliest enabled job, at most
 * cron_rearm ahead.  O(handlers of the agent). */
static void cron_arm(struct policy *p, uint32_t a, int64_t now_us)
{
    struct agent *ag = &p->ag[a];
    int64_t first = SIM_NEVER;
    for (uint32_t h = p->t->inst_first_h[a]; h < p->t->inst_first_h[a + 1]; h++) {
        const struct hb_job *j = &p->d->jobs[h];
        if (is_producer(p, h) && j->enabled && j->next_us < first)
            first = j->next_us;
    }
    int64_t at = first == SIM_NEVER ? SIM_NEVER : first < now_us + p->rearm_us ? first : now_us + p->rearm_us;
    sim_alarm(p->sim, ag->cron_alarm, at);
}

/* --- the system-event queue ---------------------------------------------- */

static int same_key(const struct policy *p, const struct qent *x, const struct qent *y)
{
    if ((x->item == UINT64_MAX) != (y->item == UINT64_MAX))
        return 0;
    if (x->item == UINT64_MAX)
        return x->h == y->h;
    const struct sim_item *a = sim_item(p->sim, x->item), *b = sim_item(p->sim, y->item);
    if (a->consumer != b->consumer || a->topic != b->topic || a->key != b->key)
        return 0;
    return sim_topic_keyed(p->sim, a->consumer, a->topic);
}

/* An entry leaves the queue unprocessed: an item is dropped for good. */
static void qent_lose(struct policy *p, const struct qent *e)
{
    if (e->item != UINT64_MAX)
        sim_item_drop(p->sim, e->item);
}

/* Whether e can share a context key with a queued entry: an item only on a
 * keyed topic (same_key asks the topic of both, which must be e's). */
static int may_share_key(const struct policy *p, const struct qent *e)
{
    if (e->item == UINT64_MAX)
        return 1;
    const struct sim_item *it = sim_item(p->sim, e->item);
    return sim_topic_keyed(p->sim, it->consumer, it->topic);
}

/* enqueueSystemEvent(): same context key replaces, a full queue evicts the
 * oldest.  O(queue_cap) for an entry that may share a key, else O(1) but
 * for the eviction. */
static void enqueue_event(struct policy *p, struct agent *ag, const struct qent *e)
{
    /* The scan is skipped when it cannot match: a burst of 100 k events on
     * an unkeyed topic under a large queue_cap scanned the whole queue for
     * each one (25 s). */
    if (p->context_key && ag->nq && may_share_key(p, e)) {
        for (size_t i = 0; i < ag->nq; i++) {
            if (!same_key(p, &ag->q[i], e))
                continue;
            qent_lose(p, &ag->q[i]);
            memmove(&ag->q[i], &ag->q[i + 1], (ag->nq - i - 1) * sizeof *ag->q);
            ag->nq--;
            break;
        }
    }
    if (ag->nq == p->queue_cap) {
        qent_lose(p, &ag->q[0]);
        memmove(&ag->q[0], &ag->q[1], (ag->nq - 1) * sizeof *ag->q);
        ag->nq--;
    }
    ag->q = xgrow_in(ag->q, ag->q_in, 2, sizeof *ag->q, &ag->qcap, ag->nq + 1);
    ag->q[ag->nq++] = *e;
}

/* --- the scheduler: wakes, flushes and sessions --------------------------- */

static void session_next(struct policy *p, uint32_t a, int64_t now_us);

/* The drained items end at seen[n) (an array that outgrew the agent goes
 * back into it once empty: xempty_in). */
static void seen_keep(struct agent *ag, size_t n)
{
    if (n <= ag->seen_head)
        n = ag->seen_head = 0;
    ag->nseen = n;
    if (ag->seen_cur > n)
        ag->seen_cur = n;
    if (n == 0) {
        ag->seen = xempty_in(ag->seen, ag->seen_in, &ag->seencap);
        ag->seen_kept = 0;
    }
}

/* A session's steps are done or abandoned (an array that outgrew the
 * agent goes back into it: xempty_in). */
static void steps_clear(struct agent *ag)
{
    ag->nsteps = ag->next_step = 0;
    ag->steps = xempty_in(ag->steps, ag->steps_in, &ag->stepcap);
}

static void arm_flush(struct policy *p, uint32_t a, int64_t at_us)
{
    struct agent *ag = &p->ag[a];
    sim_timer_cancel(p->sim, ag->flush_timer);
    ag->flush_at = at_us;
    ag->flush_timer = sim_timer_at(p->sim, at_us, T_FLUSH, a);
}

/* requestWake(reason), with the request's own delay (-1: coalesce; used
 * only with coalesce_from=request).  While a cooldown holds the agent, a
 * request only joins the pending wake. */
static void request_wake_in(struct policy *p, uint32_t a, enum wake why, int64_t delay_us, int64_t now_us)
{
    struct agent *ag = &p->ag[a];
    if (p->no_scheduler)
        return; /* no scheduler object: nothing wakes the agent */
    int64_t at = now_us + (delay_us >= 0 && p->from_request ? delay_us : p->coalesce_us);
    int held = p->cooldown && ag->retry_timer;
    if (ag->pending == WAKE_NONE) {
        ag->pending = (int8_t)why;
        ag->first_req_us = now_us;
        if ((!ag->running || p->held_poll) && !held)
            arm_flush(p, a, at);
        return;
    }
    if (wake_priority[why] > wake_priority[ag->pending] ||
        (p->ties_last && wake_priority[why] == wake_priority[ag->pending]))
        ag->pending = (int8_t)why;
    if (p->from_request && ag->flush_timer && at < ag->flush_at && !held)
        arm_flush(p, a, at);
}

static void request_wake(struct policy *p, uint32_t a, enum wake why, int64_t now_us)
{
    request_wake_in(p, a, why, -1, now_us);
}

/* The failed or skipped wake is tried again: coalesce, a `retry` wake
 * retry_delay from now (through the window); cooldown, the same reason
 * flushed exactly retry_delay from now. */
static void schedule_retry(struct policy *p, uint32_t a, enum wake why, int64_t now_us)
{
    struct agent *ag = &p->ag[a];
    sim_timer_cancel(p->sim, ag->retry_timer);
    ag->retry_timer = sim_timer_at(p->sim, now_us + p->retry_us, T_RETRY, a);
    if (!p->cooldown)
        return;
    sim_timer_cancel(p->sim, ag->flush_timer);
    ag->flush_timer = 0;
    if (ag->pending == WAKE_NONE || wake_priority[why] > wake_priority[ag->pending]) {
        if (ag->pending == WAKE_NONE)
            ag->first_req_us = now_us;
        ag->pending = (int8_t)why;
    }
}

static int in_active_hours(const struct policy *p, int64_t now_us)
{
    if (p->win_never)
        return 0;
    if (!p->win_on)
        return 1;
    return cal_window_contains(&p->win, sim_utc_s(p->sim, now_us));
}

static void push_step(struct agent *ag, uint32_t h, int64_t due_us)
{
    ag->steps = xgrow_in(ag->steps, ag->steps_in, 2, sizeof *ag->steps, &ag->stepcap, ag->nsteps + 1);
    ag->steps[ag->nsteps++] = (struct step){h, due_us};
}

/* flush(): the coalesced wake fires. */
static void flush(struct policy *p, uint32_t a, int64_t now_us)
{
    struct agent *ag = &p->ag[a];
    ag->flush_timer = 0;
    if (ag->running) {
        /* held_flush=poll: the timer fired during a session; look again. */
        SIM_ASSERT(p->held_poll);
        arm_flush(p, a, now_us + p->coalesce_us);
        return;
    }
    SIM_ASSERT(ag->pending != WAKE_NONE);
    enum wake why = (enum wake)ag->pending;
    ag->pending = WAKE_NONE;
    if (why == WAKE_INTERVAL && !in_active_hours(p, now_us))
        return; /* interval heartbeats only run inside active hours */
    if (p->busy_skip && sim_busy(p->sim, a)) {
        /* Skipped: nothing is drained (the events stay queued). */
        if (p->cooldown || ag->nq)
            schedule_retry(p, a, why, now_us);
        return;
    }
    ag->seen_cur = ag->nseen;
    ag->reason = (int8_t)why;
    ag->nsteps = ag->next_step = 0;
    for (size_t i = 0; i < ag->nq; i++) {
        const struct qent *e = &ag->q[i];
        if (e->item == UINT64_MAX) {
            push_step(ag, e->h, e->due_us);
        } else if (sim_item(p->sim, e->item)->state == ITEM_PENDING) {
            ag->seen = xgrow_in(ag->seen, ag->seen_in, 2, sizeof *ag->seen, &ag->seencap, ag->nseen + 1);
            ag->seen[ag->nseen++] = e->item;
        }
    }
    ag->nq = 0;
    ag->q = xempty_in(ag->q, ag->q_in, &ag->qcap);
    for (uint32_t h = p->t->inst_first_h[a]; h < p->t->inst_first_h[a + 1]; h++)
        if (!is_producer(p, h))
            push_step(ag, h, -1);
    if (ag->nsteps == 0)
        return;
    ag->running = 1;
    ag->failed = 0;
    session_next(p, a, now_us);
}

static enum run_reason run_reason_of(enum wake w)
{
    switch (w) {
    case WAKE_RETRY: return REASON_RETRY;
    case WAKE_INTERVAL: return REASON_HEARTBEAT;
    case WAKE_CRON: return REASON_CRON;
    case WAKE_MANUAL: return REASON_MANUAL;
    case WAKE_MESSAGE:
    case WAKE_HOOK: return REASON_EVENT;
    case WAKE_NONE: break;
    }
    return REASON_OTHER;
}

/* The session is over: a failure schedules the retry wake; a wake held
 * during the session flushes at the end of its window (at once if past). */
static void session_end(struct policy *p, uint32_t a, int64_t now_us)
{
    struct agent *ag = &p->ag[a];
    ag->running = 0;
    ag->cur_run = 0;
    steps_clear(ag);
    if (ag->failed)
        schedule_retry(p, a, (enum wake)ag->reason, now_us);
    if (ag->pending == WAKE_NONE || (p->cooldown && ag->retry_timer) || (p->held_poll && ag->flush_timer))
        return;
    int64_t at = ag->first_req_us + p->coalesce_us;
    if (at <= now_us)
        flush(p, a, now_us);
    else
        arm_flush(p, a, at);
}

/* Starts the session's next run, or ends the session.  While the host
 * stops, the session is abandoned instead: nothing new starts. */
static void session_next(struct policy *p, uint32_t a, int64_t now_us)
{
    struct agent *ag = &p->ag[a];
    if (p->stopping) {
        ag->running = 0;
        steps_clear(ag);
        return;
    }
    if (ag->next_step == ag->nsteps) {
        session_end(p, a, now_us);
        return;
    }
    const struct step *s = &ag->steps[ag->next_step];
    struct run_req rq = RUN_REQ_INIT;
    rq.handler = s->h;
    if (is_producer(p, s->h)) {
        rq.reason = REASON_CRON;
        rq.due_us = s->due_us;
    } else {
        /* The consumer is offered the items of its own the agent holds: all
         * it holds, of which the engine takes those of this consumer that
         * are still pending, in this order. */
        SIM_ASSERT(ag->nseen - ag->seen_head <= UINT32_MAX);
        rq.reason = run_reason_of((enum wake)ag->reason);
        rq.offer = ag->seen ? ag->seen + ag->seen_head : ag->seen_in; /* an offer of nothing is not NULL (all) */
        rq.noffer = (uint32_t)(ag->nseen - ag->seen_head);
    }
    ag->cur_run = sim_run_start(p->sim, &rq);
    if (ag->cur_run == 0) {
        /* The run limit ended the simulation. */
        ag->running = 0;
        steps_clear(ag);
    }
}

/* Forgets drained items that are no longer pending: at once those at the
 * front (runs take the oldest first), and the rest once the agent has
 * drained as many again as it held at the last time (and at least 32).
 * Until then those are passed over where they are read (an offer, a
 * requeue, a drop), so that a run's end costs what it took, not what the
 * agent holds, and the array stays within about twice what is pending. */
static void seen_prune(struct policy *p, struct agent *ag)
{
    while (ag->seen_head < ag->nseen && sim_item(p->sim, ag->seen[ag->seen_head])->state != ITEM_PENDING)
        ag->seen_head++;
    if (ag->seen_cur < ag->seen_head)
        ag->seen_cur = ag->seen_head;
    size_t held = ag->nseen - ag->seen_head;
    int full = held >= 2 * ag->seen_kept + 32;
    if (!full && ag->seen_head <= held) {
        seen_keep(ag, ag->nseen); /* empties it if the front was all */
        return;
    }
    /* Compact what is held to the start of the array (the front's room
     * outgrew it, or it is time for the full pass). */
    size_t k = 0, cur = SIZE_MAX;
    for (size_t i = ag->seen_head; i < ag->nseen; i++) {
        if (i == ag->seen_cur)
            cur = k;
        if (!full || sim_item(p->sim, ag->seen[i])->state == ITEM_PENDING)
            ag->seen[k++] = ag->seen[i];
    }
    ag->seen_cur = cur == SIZE_MAX ? k : cur;
    ag->seen_head = 0;
    if (full)
        ag->seen_kept = k;
    seen_keep(ag, k);
}

/* --- the delivery queue --------------------------------------------------- */

/* Keeps the one delivery alarm at the earliest timed entry. */
static void dq_arm(struct policy *p)
{
    int64_t at;
    if (jobs_peek(&p->d->dq, &at) == UINT64_MAX)
        at = SIM_NEVER;
    sim_alarm(p->sim, p->dq_alarm, at);
}

/* An entry acked or failed is a deleted file: the table forgets it at
 * once, wherever it is in the queue (an entry left for the next start-up
 * does not pin the ones after it). */
static void dq_done(struct policy *p, uint64_t id, enum job_status st, int64_t now_us)
{
    jobs_update(&p->d->dq, id, st, now_us);
    jobs_forget(&p->d->dq, id);
}

/* deliver(), then ack() (at once, or ack_delay later), or fail(). */
static void dq_attempt(struct policy *p, uint64_t id, int64_t now_us)
{
    struct job *j = jobs_get(&p->d->dq, id);
    if (sim_deliver(p->sim, j->handler, j->run)) {
        if (p->ack_us == 0)
            dq_done(p, id, JOB_COMPLETED, now_us);
        else
            jobs_update(&p->d->dq, id, JOB_RUNNING, now_us + p->ack_us);
        return;
    }
    j = jobs_get(&p->d->dq, id);
    j->attempts++;
    if (j->attempts > p->max_retries)
        dq_done(p, id, JOB_FAILED, now_us); /* moveToFailed() */
    else if (p->delivery_retry == DR_BACKOFF)
        jobs_update(&p->d->dq, id, JOB_PENDING, now_us + backoff_delay(&p->dq_bo, j->attempts));
    else
        jobs_update(&p->d->dq, id, JOB_PENDING, SIM_NEVER); /* left for recoverPending() */
}

/* Every entry due now: attempts for pending ones, acks for delivered ones. */
static void dq_run(struct policy *p, int64_t now_us)
{
    uint64_t id;
    while ((id = jobs_next_due(&p->d->dq, now_us)) != UINT64_MAX) {
        if (jobs_get(&p->d->dq, id)->status == JOB_RUNNING)
            dq_done(p, id, JOB_COMPLETED, now_us); /* ack(): the file is deleted */
        else
            dq_attempt(p, id, now_us);
    }
    dq_arm(p);
}

/* dq_first moves past the entries forgotten at the front of the queue. */
static void dq_trim(struct policy *p) { p->d->dq_first = jobs_next_kept(&p->d->dq, p->d->dq_first); }

static void dq_enqueue(struct policy *p, const struct run_result *r, int64_t now_us)
{
    dq_trim(p);
    struct job j = {.handler = r->handler, .status = JOB_PENDING, .available_us = now_us, .due_us = -1,
                    .item = UINT64_MAX, .run = r->run, .tag = p->t->h_inst[r->handler]};
    uint64_t id = jobs_add(&p->d->dq, &j); /* enqueue(): written to disk first */
    dq_attempt(p, id, now_us);
    dq_arm(p);
}

/* recoverPending(): entries still on disk (pending, or delivered and not
 * acked), in enqueue order, per agent.  Each is attempted after waiting its
 * backoff (nothing for one that never failed) from the previous one; once
 * the time spent has reached the budget, the agent's remaining entries are
 * deferred: to the next start-up, or with delivery_retry=backoff to the end
 * of the budget.  O(entries on disk). */
static void dq_recover(struct policy *p, int64_t now_us)
{
    struct jobtab *t = &p->d->dq;
    dq_trim(p);
    if (p->d->dq_first == t->n)
        return;
    int64_t *spent = xcalloc(p->t->ninst ? p->t->ninst : 1, sizeof *spent);
    for (uint64_t id = p->d->dq_first; id < t->n; id = jobs_next_kept(t, id + 1)) {
        struct job *j = jobs_get(t, id);
        uint32_t a = j->tag;
        if (spent[a] >= p->budget_us) {
            jobs_update(t, id, JOB_PENDING, p->delivery_retry == DR_BACKOFF ? now_us + p->budget_us : SIM_NEVER);
            continue;
        }
        if (p->wait_always && spent[a] + backoff_delay(&p->dq_bo, j->attempts + 1) >= p->budget_us) {
            /* The next wait would reach the budget: the rest waits too. */
            spent[a] = p->budget_us;
            jobs_update(t, id, JOB_PENDING, p->delivery_retry == DR_BACKOFF ? now_us + p->budget_us : SIM_NEVER);
            continue;
        }
        spent[a] += p->wait_always ? backoff_delay(&p->dq_bo, j->attempts + 1)
                                   : j->attempts ? backoff_delay(&p->dq_bo, j->attempts) : 0;
        jobs_update(t, id, JOB_PENDING, now_us + spent[a]);
    }
    free(spent);
}

/* --- hooks ---------------------------------------------------------------- */

static struct policy *heartbeat_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct policy *p = xcalloc(1, sizeof *p);
    p->sim = sim;
    p->d = durable;
    p->t = sim_topo(sim);
    p->every_us = params_get(ps, "every");
    p->heartbeat_on = (int)params_get(ps, "heartbeat_on");
    p->coalesce_us = params_get(ps, "coalesce");
    p->retry_us = params_get(ps, "retry_delay");
    p->queue_cap = (uint32_t)params_get(ps, "queue_cap");
    p->context_key = (int)params_get(ps, "context_key");
    p->cron_on = (int)params_get(ps, "cron_on");
    p->cron_backoff = params_get(ps, "cron_backoff") == 0;
    p->rearm_us = params_get(ps, "cron_rearm");
    p->dom_dow_and = params_get(ps, "dom_dow") == 1;
    p->delivery_retry = (int)params_get(ps, "delivery_retry");
    p->max_retries = (uint32_t)params_get(ps, "max_retries");
    p->budget_us = params_get(ps, "recover_budget");
    p->ack_us = params_get(ps, "ack_delay");
    p->requeue = params_get(ps, "on_failure") == 1;
    p->cooldown = params_get(ps, "retry_style") == 1;
    p->busy_skip = params_get(ps, "busy") == 1;
    p->ties_last = params_get(ps, "ties") == 1;
    p->from_request = params_get(ps, "coalesce_from") == 1;
    p->held_poll = params_get(ps, "held_flush") == 1;
    p->win_never = params_get(ps, "active_equal") == 1;
    p->no_scheduler = params_get(ps, "scheduler") == 1 && !p->heartbeat_on;
    p->every_fire = params_get(ps, "every_from") == 1;
    p->wait_always = params_get(ps, "recover_wait") == 1;
    p->cron_bo = backoff_table(cron_delays_us, 0);
    p->dq_bo = backoff_table(dq_delays_us, 0);

    /* Active hours, to the minute (cal_window's unit); 24:00 ends a day. */
    int st = (int)params_get(ps, "active_start"), en = (int)params_get(ps, "active_end");
    p->win.start_min = st % 1440;
    p->win.end_min = en % 1440;
    p->win_on = params_get(ps, "active_hours") == 0 && st != en && !(st == 0 && en == 1440);
    /* 00:00-00:00, the defaults, is "no active hours configured" (a
     * system's unset activeHours), never an empty window. */
    p->win_never = p->win_never && params_get(ps, "active_hours") == 0 && st == en && st != 0;
    p->win.zone = params_zone(ps, "active_tz", sim_zone(sim));

    p->ag = xcalloc(p->t->ninst ? p->t->ninst : 1, sizeof *p->ag);
    for (uint32_t a = 0; a < p->t->ninst; a++) {
        p->ag[a].pending = WAKE_NONE;
        p->ag[a].cron_alarm = sim_alarm_new(sim, T_CRON, a);
    }
    p->dq_alarm = sim_alarm_new(sim, T_DELIVERY, 0);

    if (!p->d->ready) {
        /* Deploy: jobs.json is written from the schedules; the queue is empty. */
        p->d->ready = 1;
        p->d->jobs = sim_dalloc(sim, sizeof *p->d->jobs * (p->t->nh ? p->t->nh : 1));
        for (uint32_t h = 0; h < p->t->nh; h++) {
            struct hb_job *j = &p->d->jobs[h];
            j->next_us = SIM_NEVER;
            if (!is_producer(p, h))
                continue;
            j->enabled = (uint8_t)p->cron_on;
            j->next_us = job_first(p, h, 0);
        }
        sim_jobs_init(sim, &p->d->dq);
    }
    sim_declare_rows(sim, p->d->jobs, sizeof *p->d->jobs);
    sim_declare_inst_rows(sim, p->ag, sizeof *p->ag);
    return p;
}

static void heartbeat_destroy(struct policy *p)
{
    for (uint32_t a = 0; a < p->t->ninst; a++) {
        xfree_in(p->ag[a].q, p->ag[a].q_in);
        xfree_in(p->ag[a].seen, p->ag[a].seen_in);
        xfree_in(p->ag[a].steps, p->ag[a].steps_in);
    }
    free(p->ag);
    free(p);
}

static void heartbeat_start(struct policy *p, int restart, int64_t now_us)
{
    if (restart) {
        /* Fires missed while down are skipped; a missed `at` never runs. */
        for (uint32_t h = 0; h < p->t->nh; h++) {
            struct hb_job *j = &p->d->jobs[h];
            if (!is_producer(p, h) || !j->enabled || j->next_us >= now_us)
                continue;
            j->next_us = job_first(p, h, now_us);
            if (is_one_shot(p, h))
                j->enabled = 0;
        }
    }
    for (uint32_t a = 0; a < p->t->ninst; a++) {
        if (p->heartbeat_on && p->every_us > 0)
            p->ag[a].hb_timer = sim_timer_at(p->sim, now_us + p->every_us, T_HEARTBEAT, a);
        cron_arm(p, a, now_us);
    }
    if (restart)
        dq_recover(p, now_us);
    dq_arm(p);
}

static void heartbeat_on_publish(struct policy *p, uint32_t h, uint64_t item, int64_t now_us)
{
    uint32_t a = p->t->h_inst[h];
    struct qent e = {.item = item, .due_us = -1, .h = h};
    enqueue_event(p, &p->ag[a], &e);
    request_wake(p, a, WAKE_HOOK, now_us);
}

static void cron_fire(struct policy *p, uint32_t a, int64_t now_us)
{
    struct agent *ag = &p->ag[a];
    int fired = 0;
    for (uint32_t h = p->t->inst_first_h[a]; h < p->t->inst_first_h[a + 1]; h++) {
        struct hb_job *j = &p->d->jobs[h];
        if (!is_producer(p, h) || !j->enabled || j->next_us > now_us)
            continue;
        struct qent e = {.item = UINT64_MAX, .due_us = j->next_us, .h = h};
        enqueue_event(p, ag, &e);
        if (is_one_shot(p, h)) {
            j->enabled = 0;
            j->next_us = SIM_NEVER;
        } else {
            j->next_us = job_after(p, h, now_us);
        }
        fired = 1;
    }
    if (fired)
        request_wake(p, a, WAKE_CRON, now_us);
    cron_arm(p, a, now_us);
}

static void heartbeat_on_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now_us)
{
    uint32_t a = (uint32_t)arg;
    switch (tag) {
    case T_FLUSH:
        flush(p, a, now_us);
        break;
    case T_HEARTBEAT:
        p->ag[a].hb_timer = sim_timer_at(p->sim, now_us + p->every_us, T_HEARTBEAT, a);
        request_wake(p, a, WAKE_INTERVAL, now_us);
        break;
    case T_CRON:
        cron_fire(p, a, now_us);
        break;
    case T_RETRY:
        p->ag[a].retry_timer = 0;
        if (!p->cooldown)
            request_wake(p, a, WAKE_RETRY, now_us);
        else if (p->ag[a].pending != WAKE_NONE && !p->ag[a].running)
            flush(p, a, now_us); /* the cooldown is over: no window on top */
        break;
    case T_DELIVERY:
        dq_run(p, now_us);
        break;
    default:
        SIM_ASSERT(0 && "unknown timer tag");
    }
}

/* on_failure=requeue: the call threw, so everything this flush drained
 * goes back into the queue (after what arrived meanwhile): the cron events
 * of the steps not done and the items not yet committed; the rest of the
 * session is abandoned. */
static void requeue_session(struct policy *p, struct agent *ag)
{
    for (size_t k = ag->next_step; k < ag->nsteps; k++)
        if (is_producer(p, ag->steps[k].h)) {
            struct qent e = {.item = UINT64_MAX, .due_us = ag->steps[k].due_us, .h = ag->steps[k].h};
            enqueue_event(p, ag, &e);
        }
    size_t keep = ag->seen_cur; /* >= seen_head (seen_prune) */
    for (size_t i = ag->seen_cur; i < ag->nseen; i++) {
        const struct sim_item *it = sim_item(p->sim, ag->seen[i]);
        if (it->state == ITEM_PENDING) {
            struct qent e = {.item = ag->seen[i], .due_us = -1, .h = it->consumer};
            enqueue_event(p, ag, &e);
        }
    }
    seen_keep(ag, keep); /* what is left of the flush is no longer pending */
    steps_clear(ag);
}

static void heartbeat_on_run_end(struct policy *p, const struct run_result *r, int64_t now_us)
{
    uint32_t a = p->t->h_inst[r->handler];
    struct agent *ag = agent_of(p, r->handler);
    SIM_ASSERT(ag->running && ag->cur_run == r->run);
    ag->cur_run = 0;
    int producer = is_producer(p, r->handler);
    if (r->outcome == OUT_COMMITTED) {
        if (producer)
            p->d->jobs[r->handler].errors = 0;
        if (producer || r->ntaken > 0)
            dq_enqueue(p, r, now_us);
    } else {
        ag->failed = 1;
        if (producer) {
            struct hb_job *j = &p->d->jobs[r->handler];
            j->errors++;
            if (p->cron_backoff && j->enabled) {
                int64_t later = now_us + backoff_delay(&p->cron_bo, j->errors);
                if (later > j->next_us)
                    j->next_us = later;
                cron_arm(p, a, now_us);
            }
        } else if (!p->requeue) {
            /* The events drained for the call that threw are gone. */
            for (size_t i = ag->seen_cur; i < ag->nseen; i++)
                if (sim_item(p->sim, ag->seen[i])->consumer == r->handler)
                    sim_item_drop(p->sim, ag->seen[i]);
        }
        if (p->requeue) {
            requeue_session(p, ag);
            seen_prune(p, ag);
            session_end(p, a, now_us);
            return;
        }
    }
    seen_prune(p, ag);
    ag->next_step++;
    session_next(p, a, now_us);
}

static void heartbeat_on_trigger(struct policy *p, uint32_t inst, int64_t now_us)
{
    request_wake(p, inst, WAKE_MANUAL, now_us);
}

static void heartbeat_on_stop(struct policy *p, int64_t now_us) { p->stopping = 1; }

/* A cron job's schedule changed (update(id, {schedule}) or the enabled
 * flag): its next run is computed again from now. */
static void heartbeat_on_schedule_change(struct policy *p, uint32_t h, int64_t now_us)
{
    struct hb_job *j = &p->d->jobs[h];
    struct sim_sched_info si;
    sim_sched_info(p->sim, h, &si);
    j->enabled = (uint8_t)(p->cron_on && !si.disabled);
    j->next_us = j->enabled ? job_next(p, h, now_us, 0) : SIM_NEVER;
    j->errors = 0;
    cron_arm(p, p->t->h_inst[h], now_us);
}

/* runNow(job) for a producer: its event and a `cron` wake now, and its
 * next run computed from now; a manual wake of the agent otherwise, with
 * the request's own delay. */
static void heartbeat_on_trigger_ex(struct policy *p, const struct sim_trigger *t, int64_t now_us)
{
    uint32_t a = t->inst;
    if (t->handler != UINT32_MAX && is_producer(p, t->handler)) {
        uint32_t h = t->handler;
        struct qent e = {.item = UINT64_MAX, .due_us = -1, .h = h};
        enqueue_event(p, &p->ag[a], &e);
        struct hb_job *j = &p->d->jobs[h];
        if (j->enabled && !is_one_shot(p, h))
            j->next_us = job_after(p, h, now_us);
        request_wake(p, a, WAKE_CRON, now_us);
        cron_arm(p, a, now_us);
        return;
    }
    request_wake_in(p, a, WAKE_MANUAL, t->delay_us, now_us);
}

static const struct variant_setting alice_settings[] = {
    {"on_failure", "requeue", "src/core/scheduler.ts 375-393 (drained events enqueued again)"},
    {"busy", "skip", "src/main.ts 294-300 (engine busy: skipped); scheduler.ts 361-370"},
    {"held_flush", "poll", "src/core/scheduler.ts 320-328 (a flush during a run re-arms 250 ms later)"},
    {"active_equal", "never", "src/core/scheduler.ts 87-108 ([start, end) is empty when equal)"},
    {"scheduler", "with_heartbeat", "src/main.ts 226-232, 396-404 (the scheduler exists only when enabled)"},
    {"every_from", "fire", "src/core/cron.ts 204-217 (every: afterMs + interval), 484-490 (runNow)"},
    {"cron_backoff", "none", "src/core/cron.ts 351-384 (errors only if the wake throws; it cannot)"},
    {"dom_dow", "and", "src/core/cron.ts 91-129 (every field must match)"},
    {"delivery_retry", "startup", "src/main.ts 375-393, 418-427 (recovery at the next start only)"},
    {"recover_wait", "always", "src/core/delivery.ts recoverPending 198-248, computeBackoffMs 57-61"},
};

static const struct variant_setting openclaw_settings[] = {
    {"on_failure", "requeue", "src/infra/heartbeat-wake.ts schedule() (catch: the batch queued again)"},
    {"retry_style", "cooldown", "heartbeat-wake.ts schedule() (DEFAULT_RETRY_MS = 1000, retry kind kept)"},
    {"busy", "skip", "heartbeat-wake.ts isRetryableHeartbeatBusySkipReason (requests-in-flight, lanes-busy)"},
    {"ties", "last", "heartbeat-wake.ts queuePendingWakeReason (equal priority: the later request wins)"},
    {"coalesce_from", "request", "heartbeat-wake.ts schedule(), requestHeartbeat (per-request coalesceMs)"},
    {"held_flush", "poll", "heartbeat-wake.ts schedule() (a timer firing during a run re-arms)"},
    {"active_equal", "never", "src/infra/heartbeat-active-hours.ts isWithinActiveHours (start == end: never)"},
};

static const struct policy_variant hb_variants[] = {
    {"alice", "Open Alice as built: failed runs re-queue their events, busy skips, equal active hours never open",
     "TraderAlice/OpenAlice@172f0945c75f49270006cebe957cfb2521813c49 src/", "alice", alice_settings,
     (int)(sizeof alice_settings / sizeof alice_settings[0])},
    {"openclaw", "OpenClaw's heartbeat wake: per-request delays, a hard retry cooldown, busy skips keep their reason",
     "openclaw/openclaw src/infra/heartbeat-wake.ts@0049d624b5825cd0fe20b630351c31230f81def8", "openclaw",
     openclaw_settings, (int)(sizeof openclaw_settings / sizeof openclaw_settings[0])},
};

const struct policy_ops policy_heartbeat = {
    .abi = POLICY_ABI,
    .name = "heartbeat",
    .summary = "one coalescing alarm clock per agent: heartbeat, cron engine, volatile event queue, delivery queue",
    .seeds = "seed 004",
    .params = heartbeat_params,
    .nparams = (int)(sizeof heartbeat_params / sizeof heartbeat_params[0]),
    .durable_size = sizeof(struct hb_durable),
    .promise = PROMISE_WORKFLOW,
    .items_volatile = 1,
    .create = heartbeat_create,
    .destroy = heartbeat_destroy,
    .start = heartbeat_start,
    .on_publish = heartbeat_on_publish,
    .on_timer = heartbeat_on_timer,
    .on_run_end = heartbeat_on_run_end,
    .on_trigger = heartbeat_on_trigger,
    .on_stop = heartbeat_on_stop,
    .on_schedule_change = heartbeat_on_schedule_change,
    .on_trigger_ex = heartbeat_on_trigger_ex,
    .variants = hb_variants,
    .nvariants = (int)(sizeof hb_variants / sizeof hb_variants[0]),
};
