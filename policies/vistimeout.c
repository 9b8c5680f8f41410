/* vistimeout.c: job rows with one `available_at` column, a pool of workers
 * and a visibility timeout (seed 002, Kagzi after the simplification), and
 * the design before it as a variant (design=lease).
 *
 * The database is the shared durable job table (sim/jobs.h): one row per
 * job, with status PENDING / RUNNING / SLEEPING / COMPLETED / FAILED,
 * `available_at` and `attempts`.  A job is one published event for one
 * subscribed consumer, one due fire of a producer schedule, or one manual
 * trigger of a producer.  A worker claims the row with the earliest
 * `available_at <= now` (ties: the oldest row) and sets
 * `available_at = now + visibility_timeout`; nothing extends it, so a run
 * that outlives the timeout leaves its row claimable while it is still
 * running, and the next idle worker runs the job a second time.  Sleeping
 * (the script's wake request) sets `available_at` to the wake time; a step
 * failure sets it to now + backoff, until the retry limit fails the job.
 * A re-claimed job replays from the start, except that a mutate step whose
 * result was recorded (the run reached `mutated`) returns its cached result:
 * the new run resumes at emitting (run_req.resume_of).
 *
 * design=lease is the design before the simplification: a claim sets
 * `locked_until = now + 30 s`, which the worker's heartbeats extend; the
 * poll query only takes PENDING rows, and a watchdog ticking every second
 * turns expired leases (orphans), due wake times and due retries back into
 * PENDING rows.  Its three timestamps (locked_until, wake_up_at, retry_at)
 * live in a second table whose row i belongs to job i.
 *
 * Both designs fire producer schedules from a loop in the server (the
 * coordinator; the scheduler before) that ticks every 5 s from the server's
 * start, with the first tick at the start itself; each due fire becomes a
 * job whose run serves that nominal instant (run_req.due_us).  Idle workers
 * are woken by a notification when a job is created (notify=on); with
 * notify=off or broken each idle worker polls every poll_interval.
 *
 * A correlate consumer's pair needs two events while a job sees one: the
 * job of the event that completes a pair (the later one) is offered both.
 *
 * Parts: `crash worker K` interrupts the run of worker K (runs carry worker
 * K + 1) and leaves its row as it was, RUNNING until its available_at (or
 * lease) passes; `crash workers` does this to every worker; `crash server`
 * stops the coordinator, the watchdog, claims, heartbeats and notifications
 * until the server is back, and keeps every row.  A host crash is all of
 * these at once; recovery is from the rows alone.  A graceful stop
 * (on_stop): the workers finish the runs they have, whose row updates are
 * written as they end, and claim nothing more.
 *
 * Key invariant: every job row is in exactly one status, and a worker is
 * BUSY exactly while the run it started is active (runs of a crashed worker
 * end in the crash, without on_run_end).
 *
 * Durable: the job table (and the lease table), per-job side data (cached
 * step result, locked_by, failure count, why it became claimable), the
 * schedule table (next fire, last fired), the pending events of correlate
 * consumers.  Volatile: the workers, the
 * server's up/down state, timers and tickers. */
#include <stdlib.h>

#include "sim/backoff.h"
#include "sim/idxset.h"
#include "sim/jobs.h"
#include "sim/cal.h"
#include "sim/policy_api.h"
#include "sim/rng.h"
#include "sim/util.h"

enum { T_POLL = 1, T_NEXT, T_HEARTBEAT, T_COORD, T_WATCHDOG };
enum { DESIGN_VISTIMEOUT, DESIGN_LEASE };
enum { NOTIFY_ON, NOTIFY_OFF, NOTIFY_BROKEN, NOTIFY_NEW_ONLY };
enum { ATTEMPTS_FAILURES, ATTEMPTS_CLAIMS };
enum { W_IDLE, W_BUSY, W_DOWN };
/* Why a row is claimable: the reason its next run reports. */
enum { WHY_EVENT, WHY_FIRE, WHY_MANUAL, WHY_WAKE, WHY_RETRY };

#define NONE UINT64_MAX

/* What a job row holds beyond struct job: its extra bytes (24). */
struct vt_row {
    int64_t deadline_us;           /* job_deadline: when it fails for good, SIM_NEVER none */
    uint64_t cached_run;           /* run whose mutate step result is recorded, 0 none */
    uint32_t failures;             /* step failures (and, for lease, orphanings) so far */
    uint32_t locked_by : 24;       /* worker (1-based) of the latest claim, 0 none */
    uint32_t why : 8;              /* WHY_* */
};

struct vt_pend {                   /* a correlate consumer's pending events */
    uint64_t *ids;
    size_t n, cap;
};

struct vt_durable {
    struct jobtab jobs;            /* workflow_runs: available_us = available_at; extra: vt_row */
    struct jobtab timed;           /* lease design: row i = job i's locked_until / wake_up_at / retry_at */
    struct jobtab pendq;           /* claim_order=pending_first: row i = job i while PENDING */
    struct jobtab scheds;          /* one row per producer schedule: available_us = next fire */
    int64_t *next_fire;            /* [scheds.n] */
    int64_t *last_fired;           /* [scheds.n] cursor of the catch-up rule, -1 before the first */
    struct vt_pend *pend;          /* [nh] */
    uint64_t seen;                 /* items below this id were announced (on_publish) or adopted */
    int init;
};

struct worker {
    uint8_t state;                 /* W_* */
    uint32_t empty_polls;          /* poll_min: empty polls in a row */
    uint64_t run, job;             /* while BUSY */
    int64_t t0_us;                 /* process start: the phase of its heartbeats */
    sim_timer poll, heartbeat;
};

struct policy {
    struct sim *sim;
    struct vt_durable *d;
    const struct sim_topo *t;

    int design, notify, attempts_mode, cron_utc, extend;
    int pending_first, lease_direct, extend_cumulative, job_deadline;
    uint32_t idle_polls;           /* per worker below: consecutive empty polls (poll_min) */
    int64_t poll_min_us;
    uint32_t nworkers, max_catchup, max_attempts, retry_steps;
    int64_t vt_us, hb_us, ext_us, lease_us, watchdog_us, coord_us, poll_us;
    struct backoff retry;
    struct sim_sched_opts sched_opts;

    struct worker *wk;
    struct idxset idle;            /* the IDLE workers */
    int server_down;
    int stopping;                  /* a graceful stop began (on_stop): nobody claims */
    int coord, watchdog;           /* tickers; watchdog only for design=lease */
    int next;                      /* alarm (notify=on): the earliest future available_at */
    uint64_t *scratch;
    size_t scratch_cap;
};

static const struct param_def vt_params[] = {
    {"design", PARAM_ENUM, "vistimeout", "vistimeout|lease", 0, 0,
     "seed 002, Goal (before/after table); lease = the design before it",
     "vistimeout: one available_at column, no lock extension; lease: locked_until extended by heartbeats, "
     "a 1 s watchdog"},
    {"workers", PARAM_INT, "4", NULL, 1, 1000000, "spec 4 (seed 002 gives no pool size)",
     "workers in the pool; run_req.worker = index + 1 (crash worker K hits index K)"},
    {"visibility_timeout", PARAM_DURATION, "300s", NULL, US_PER_S, 30 * US_PER_DAY,
     "seed 002, Phase 3 config.rs default_visibility_timeout_secs = 300; as built 60s",
     "a claim sets available_at = now + this"},
    {"heartbeat_extend", PARAM_BOOL, "false", NULL, 0, 1, "as built (spec 4): the lock extension came back",
     "design=vistimeout: each heartbeat of a busy worker sets its row's available_at = now + heartbeat_extension"},
    {"heartbeat_interval", PARAM_DURATION, "10s", NULL, US_PER_MS, US_PER_DAY,
     "as built (spec 4: 10s/45s); seed 002 Phase 3 gives no interval",
     "worker heartbeat period, from the worker's start"},
    {"heartbeat_extension", PARAM_DURATION, "45s", NULL, US_PER_MS, 30 * US_PER_DAY, "as built (spec 4: 10s/45s)",
     "what a heartbeat extends the row to (vistimeout with heartbeat_extend)"},
    {"lease", PARAM_DURATION, "30s", NULL, US_PER_MS, 30 * US_PER_DAY,
     "seed 002, Phase 3 current flow: locked_until = NOW() + 30s",
     "design=lease: a claim and each heartbeat set locked_until = now + this"},
    {"watchdog_interval", PARAM_DURATION, "1s", NULL, US_PER_MS, US_PER_DAY,
     "seed 002, Phase 5 (watchdog.rs, 1s interval)",
     "design=lease: the watchdog turns expired leases, due wakes and due retries into PENDING rows"},
    {"coordinator_interval", PARAM_DURATION, "5s", NULL, US_PER_MS, US_PER_DAY,
     "seed 002, Phase 5 default_coordinator_interval_secs = 5 (the scheduler's 5s before)",
     "the loop that fires due producer schedules"},
    {"notify", PARAM_ENUM, "on", "on|off|broken|new_only", 0, 0,
     "seed 002, Architecture (LISTEN/NOTIFY) and Phase 1 (broken: the channel-name mismatch); new_only: "
     "Kagzi@ba2b357 crates/kagzi-server/src/worker_service.rs 272-390",
     "on: idle workers are woken when a job is created or becomes available; off/broken: each idle worker "
     "polls; new_only: woken for new jobs only, time-based availability waits for the poll_interval hold"},
    {"poll_interval", PARAM_DURATION, "60s", NULL, US_PER_MS, US_PER_DAY,
     "as built: the server's poll_timeout_secs = 60 (seed 002 gives none)",
     "how often an idle worker polls when notify is off or broken"},
    {"max_catchup", PARAM_INT, "0", NULL, 0, 1000000,
     "seed 002, Phase 5 (fire due schedules, no limit: 0 = every missed fire at once); as built 50",
     "N >= 1: one fire per schedule per tick, and when more than N fires are due the oldest are skipped"},
    {"attempts", PARAM_ENUM, "failures", "failures|claims", 0, 0,
     "seed 002, Phase 4 (the step's attempt number); as built: the row's attempts, bumped at every claim",
     "what the retry limit counts: step failures, or claims (sleep wakes and re-claims too)"},
    {"max_attempts", PARAM_INT, "5", NULL, 1, 1000000, "as built: RetryPolicy maximum_attempts = 5",
     "a job fails for good when the count reaches this"},
    {"retry_base", PARAM_DURATION, "1s", NULL, US_PER_MS, US_PER_DAY,
     "as built: RetryPolicy initial_interval 1000 ms, coefficient 2 (jitter not modelled)",
     "backoff before retry n: base * 2^(n-1), capped"},
    {"retry_cap", PARAM_DURATION, "60s", NULL, US_PER_MS, 30 * US_PER_DAY,
     "as built: RetryPolicy maximum_interval 60000 ms", "largest backoff (a cap below retry_base is retry_base)"},
    {"cron_tz", PARAM_ENUM, "schedule", "schedule|utc", 0, 0, "as built (spec 4): cron evaluated in UTC",
     "schedule: cron fires in the schedule's zone; utc: in UTC whatever the zone"},
    {"claim_order", PARAM_ENUM, "available", "available|pending_first", 0, 0,
     "seed 002 Phase 3 (ORDER BY available_at); pending_first: openworkflow packages/openworkflow/postgres/"
     "backend.ts 476-529, Kagzi@578347f crates/kagzi-store/src/postgres/workflow/queue.rs 10-64",
     "the poll takes the earliest available row, or any due PENDING row before expired leases and sleepers"},
    {"lease_poll", PARAM_ENUM, "pending", "pending|direct", 0, 0,
     "seed 002 Phase 3 (current flow: the watchdog makes rows PENDING); direct: Kagzi@578347f queue.rs 25-29",
     "design=lease: the poll takes PENDING rows only, or also due sleepers and expired leases itself"},
    {"extend_from", PARAM_ENUM, "now", "now|available", 0, 0,
     "as built (spec 4: 10s/45s); available: Kagzi@ba2b357 crates/kagzi-store/src/postgres/workflow/state.rs "
     "834-852",
     "a heartbeat sets available_at = now + extension, or max(available_at, now) + extension (cumulative)"},
    {"retry_steps", PARAM_INT, "0", NULL, 0, 64,
     "as built RetryPolicy (no limit); 3: Kagzi@ba2b357 crates/kagzi-store/src/models/workflow.rs 61-78 "
     "(backon ExponentialBuilder max_times 3)",
     "after this many doublings the backoff is retry_cap (0: doubling until the cap)"},
    {"poll_min", PARAM_DURATION, "0", NULL, 0, US_PER_DAY,
     "seed 002 gives none; 100ms: openworkflow packages/openworkflow/worker/worker.ts 13-19, 314-326",
     "notify off: 0 polls every poll_interval; else an idle worker's polls back off from this, doubling up "
     "to poll_interval, times a random factor in [0.5, 1]"},
    {"job_deadline", PARAM_BOOL, "false", NULL, 0, 0,
     "seed 002 has no deadlines; true: openworkflow postgres/backend.ts 484-506, core/workflow-definition.ts "
     "153-209",
     "a job's deadline (its creation + the handler's `deadline`) fails it at the next claim, and no retry is "
     "scheduled at or past it"},
};

/* --- small helpers ---------------------------------------------------------- */

static struct vt_row *row_of(struct policy *p, uint64_t id) { return jobs_extra(&p->d->jobs, id); }

static int row_active(const struct job *j)
{
    return j->status == JOB_PENDING || j->status == JOB_RUNNING || j->status == JOB_SLEEPING;
}

static int is_consumer(const struct policy *p, uint32_t h) { return p->t->h_kind[h] == H_CONSUMER; }

/* A schedule's next fire as the coordinator computes it (cron_tz=utc: in
 * UTC whatever the schedule's zone). */
static int64_t sched_next(const struct policy *p, uint32_t h, int64_t after_us, int inclusive)
{
    return sim_sched_next_opt(p->sim, h, after_us, inclusive, &p->sched_opts);
}

/* The lease design keeps a row's time in the timed table; the job table
 * then holds SIM_NEVER for it, so the poll query never sees it. */
static void set_timed(struct policy *p, uint64_t id, enum job_status st, int64_t at_us)
{
    if (p->design == DESIGN_LEASE)
        jobs_update(&p->d->timed, id, st, at_us);
}

/* Every change of a job row's status and time goes through here, so that
 * the PENDING mirror (claim_order=pending_first) stays exact. */
static void row_put(struct policy *p, uint64_t id, enum job_status st, int64_t at_us)
{
    jobs_update(&p->d->jobs, id, st, at_us);
    if (p->pending_first)
        jobs_update(&p->d->pendq, id, st == JOB_PENDING ? JOB_PENDING : JOB_COMPLETED,
                    st == JOB_PENDING ? at_us : SIM_NEVER);
}

static uint64_t job_new(struct policy *p, uint32_t h, int64_t due_us, uint64_t item, uint8_t why, int64_t now_us)
{
    struct vt_durable *d = p->d;
    struct job j = {.handler = h, .status = JOB_PENDING, .available_us = now_us, .due_us = due_us, .item = item};
    uint64_t id = jobs_add(&d->jobs, &j);
    if (p->pending_first) {
        uint64_t pid = jobs_add(&d->pendq, &j);
        SIM_ASSERT(pid == id);
    }
    int64_t dl = p->job_deadline ? sim_deadline(p->sim, h) : SIM_NEVER;
    *row_of(p, id) = (struct vt_row){.why = why, .deadline_us = dl == SIM_NEVER ? SIM_NEVER : now_us + dl};
    if (p->design == DESIGN_LEASE) {
        struct job t = {.handler = h, .status = JOB_COMPLETED, .available_us = SIM_NEVER, .item = id};
        uint64_t tid = jobs_add(&d->timed, &t);
        SIM_ASSERT(tid == id);
    }
    return id;
}

/* --- correlate ------------------------------------------------------------------- */

/* A pair needs two events, and a job sees one.  The job of the event that
 * arrived second completes the pair: it is offered its own event and the
 * oldest pending event of the other topic with the same key published
 * before it.  The job of the first event finds no partner, takes nothing
 * and completes.  The pending events of a correlate consumer are kept in a
 * durable list (item ids in publish order), tidied as it is scanned. */
static void correlate_add(struct policy *p, uint32_t h, uint64_t item)
{
    uint16_t a, b;
    if (!sim_correlates(p->sim, h, &a, &b))
        return;
    struct vt_pend *pl = &p->d->pend[h];
    if (pl->n == pl->cap) {
        pl->cap = pl->cap ? pl->cap * 2 : 16;
        pl->ids = sim_drealloc(p->sim, pl->ids, pl->cap * sizeof *pl->ids);
    }
    pl->ids[pl->n++] = item;
}

/* O(pending events of h). */
static uint64_t correlate_partner(struct policy *p, uint32_t h, uint64_t item)
{
    uint16_t a, b;
    if (!sim_correlates(p->sim, h, &a, &b))
        return NONE;
    struct vt_pend *pl = &p->d->pend[h];
    const struct sim_item *mine = sim_item(p->sim, item);
    uint16_t other;
    if (mine->topic == a)
        other = b;
    else if (mine->topic == b)
        other = a;
    else
        return NONE;
    uint64_t found = NONE;
    size_t k = 0;
    for (size_t i = 0; i < pl->n; i++) {
        uint64_t id = pl->ids[i];
        const struct sim_item *it = sim_item(p->sim, id);
        if (it->state != ITEM_PENDING)
            continue;
        pl->ids[k++] = id;
        if (found == NONE && id < item && it->topic == other && it->key == mine->key)
            found = id;
    }
    pl->n = k;
    return found;
}

/* --- claims and workers ------------------------------------------------------- */

static void worker_set(struct policy *p, uint32_t k, uint8_t state)
{
    p->wk[k].state = state;
    if (state == W_IDLE)
        idxset_add(&p->idle, k);
    else
        idxset_del(&p->idle, k);
}

/* The first heartbeat of worker k after now (its loop ticks from its start). */
static int64_t next_heartbeat(const struct policy *p, uint32_t k, int64_t now_us)
{
    int64_t t0 = p->wk[k].t0_us;
    return t0 + ((now_us - t0) / p->hb_us + 1) * p->hb_us;
}

static void row_complete(struct policy *p, uint64_t id, enum job_status st);

/* The row the poll query takes now, NONE if none: the earliest available
 * (claim_order=pending_first: a PENDING row first); with lease_poll=direct
 * also a due sleeper or an expired lease of the lease design's timed
 * table; with job_deadline, rows past their deadline are failed instead. */
static uint64_t next_claimable(struct policy *p, int64_t now_us)
{
    struct vt_durable *d = p->d;
    for (;;) {
        uint64_t id = p->pending_first ? jobs_next_due(&d->pendq, now_us) : NONE;
        if (id == NONE)
            id = jobs_next_due(&d->jobs, now_us);
        if (id == NONE && p->design == DESIGN_LEASE && p->lease_direct)
            id = jobs_next_due(&d->timed, now_us);
        if (id == NONE || row_of(p, id)->deadline_us > now_us)
            return id;
        row_complete(p, id, JOB_FAILED); /* "Workflow run deadline exceeded" */
    }
}

/* A heartbeat's new available_at (design=vistimeout). */
static int64_t extended(const struct policy *p, const struct job *j, int64_t now_us)
{
    int64_t from = p->extend_cumulative && j->available_us > now_us ? j->available_us : now_us;
    return from + p->ext_us;
}

static int64_t retry_delay(const struct policy *p, uint32_t n)
{
    if (p->retry_steps && n > p->retry_steps)
        return p->retry.cap_us;
    return backoff_delay(&p->retry, n);
}

/* The poll query's UPDATE and the start of the run: worker k takes row id. */
static void claim(struct policy *p, uint32_t k, uint64_t id, int64_t now_us)
{
    struct vt_durable *d = p->d;
    struct worker *wk = &p->wk[k];
    struct job *j = jobs_get(&d->jobs, id);
    struct vt_row *x = row_of(p, id);
    SIM_ASSERT(wk->state == W_IDLE && !p->stopping);
    SIM_ASSERT(row_active(j));
    int was_running = j->status == JOB_RUNNING;
    uint32_t h = j->handler;
    j->attempts++;

    /* Memoization: the latest run's mutate step is cached once that run
     * recorded it (phase mutated or later, with something taken).  The row
     * holds the run records it names (j->run, cached_run) until it is
     * done with them. */
    uint64_t prev_run = j->run;
    if (j->run) {
        struct sim_run_info ri;
        sim_run_get(p->sim, j->run, &ri);
        if (ri.phase >= PHASE_MUTATED && (ri.ntaken > 0 || !is_consumer(p, h)) && x->cached_run != j->run) {
            sim_run_hold(p->sim, j->run);
            if (x->cached_run)
                sim_run_release(p->sim, x->cached_run);
            x->cached_run = j->run;
        }
    }

    struct run_req rq = RUN_REQ_INIT;
    rq.handler = h;
    rq.due_us = j->due_us;
    rq.worker = k + 1;
    rq.tag = id;
    rq.resume_of = x->cached_run;
    static const enum run_reason why_reason[] = {REASON_EVENT, REASON_SCHEDULE, REASON_MANUAL, REASON_WAKE,
                                                 REASON_RETRY};
    rq.reason = was_running ? REASON_RECOVER : why_reason[x->why];
    if (x->why == WHY_RETRY)
        rq.retry_of = j->run;
    uint64_t offer[2] = {j->item, 0};
    if (is_consumer(p, h)) {
        rq.offer = offer;
        rq.noffer = 1;
        uint64_t partner = correlate_partner(p, h, j->item);
        if (partner != NONE) {
            offer[0] = partner; /* publish order */
            offer[1] = j->item;
            rq.noffer = 2;
        }
    }

    if (p->design == DESIGN_LEASE) {
        row_put(p, id, JOB_RUNNING, SIM_NEVER);
        set_timed(p, id, JOB_RUNNING, now_us + p->lease_us);
    } else {
        row_put(p, id, JOB_RUNNING, now_us + p->vt_us);
    }
    x->locked_by = k + 1;

    sim_timer_cancel(p->sim, wk->poll);
    wk->poll = 0;
    wk->empty_polls = 0;
    worker_set(p, k, W_BUSY);
    wk->job = id;
    wk->run = sim_run_start(p->sim, &rq);
    jobs_get(&d->jobs, id)->run = wk->run;
    if (wk->run)
        sim_run_hold(p->sim, wk->run);
    if (prev_run)
        sim_run_release(p->sim, prev_run);
    if (p->design == DESIGN_LEASE || p->extend)
        wk->heartbeat = sim_timer_at(p->sim, next_heartbeat(p, k, now_us), T_HEARTBEAT, k);
}

/* Worker k asks for work (PollTask): it claims the earliest claimable row,
 * or waits: for a notification, or (notify off/broken) poll_interval. */
static void worker_poll(struct policy *p, uint32_t k, int64_t now_us)
{
    struct worker *wk = &p->wk[k];
    if (wk->state != W_IDLE || p->stopping)
        return;
    if (!p->server_down) {
        uint64_t id = next_claimable(p, now_us);
        if (id != NONE) {
            claim(p, k, id, now_us);
            return;
        }
    }
    if (p->notify != NOTIFY_ON && !wk->poll) {
        int64_t wait = p->poll_us;
        if (p->poll_min_us && p->notify != NOTIFY_NEW_ONLY) {
            /* An idle worker backs off: min * 2^(n-1) up to poll_interval,
             * times a random factor in [0.5, 1]. */
            struct backoff b = backoff_exp(p->poll_min_us, p->poll_us, 0);
            wait = backoff_delay(&b, ++wk->empty_polls);
            wait = wait / 2 + (int64_t)rng_below(sim_policy_rng(p->sim), (uint64_t)(wait - wait / 2) + 1);
        }
        wk->poll = sim_timer_at(p->sim, now_us + wait, T_POLL, k);
    }
}

static void ticker_arm(struct policy *p, int ticker, int64_t at_us, int64_t now_us)
{
    if (at_us != SIM_NEVER && at_us <= now_us)
        at_us = now_us + 1;
    sim_ticker_arm(p->sim, ticker, p->server_down ? SIM_NEVER : at_us);
}

/* Called at the end of every hook, after the rows changed.
 * design=lease: the watchdog ticks (it always wakes; it only has work) at
 * the earliest lease, wake or retry time.
 * design=vistimeout, notify=on: a row becomes claimable by time alone
 * (sleep end, backoff end, visibility timeout), which no notification
 * announces; one alarm at the earliest future available_at stands for the
 * poll query finding it then. */
static void arm_next(struct policy *p, int64_t now_us)
{
    if (p->design == DESIGN_LEASE) {
        int64_t at = SIM_NEVER;
        jobs_peek(&p->d->timed, &at);
        ticker_arm(p, p->watchdog, at, now_us);
    }
    int64_t want = SIM_NEVER;
    if (p->design == DESIGN_VISTIMEOUT && p->notify == NOTIFY_ON && !p->server_down && p->idle.count > 0) {
        int64_t at;
        if (jobs_peek(&p->d->jobs, &at) != NONE && at > now_us)
            want = at;
    }
    sim_alarm(p->sim, p->next, want);
}

/* New work (NOTIFY): every idle worker re-runs the poll query, lowest index
 * first; with notify off or broken nobody hears it. */
static void notify_all(struct policy *p, int64_t now_us)
{
    if ((p->notify != NOTIFY_ON && p->notify != NOTIFY_NEW_ONLY) || p->server_down || p->stopping)
        return;
    /* O(idle workers served + workers / 4096); stops at the first worker
     * that finds nothing, since the others would find nothing either. */
    for (uint32_t k = idxset_next(&p->idle, 0); k != IDXSET_NONE; k = idxset_next(&p->idle, k + 1)) {
        uint64_t id = next_claimable(p, now_us);
        if (id == NONE)
            break;
        claim(p, k, id, now_us);
    }
}

/* --- row transitions ------------------------------------------------------------ */

/* The tables forget a row as soon as it is completed or failed, wherever
 * it is (the rows of every handler share one id sequence and finish out of
 * order), so that memory follows the rows still in play, not every job
 * ever added.  A forgotten row is done: nothing claims, extends or updates
 * it again (job_done). */
static void forget_done(struct policy *p, uint64_t id)
{
    struct vt_durable *d = p->d;
    jobs_forget(&d->jobs, id);
    if (p->design == DESIGN_LEASE)
        jobs_forget(&d->timed, id);
    if (p->pending_first)
        jobs_forget(&d->pendq, id);
}

/* Whether row id is completed or failed (forgotten). */
static int job_done(struct policy *p, uint64_t id)
{
    const struct job *j = jobs_find(&p->d->jobs, id);
    return !j || !row_active(j);
}

/* A row is done: it lets go of the run records it held. */
static void row_complete(struct policy *p, uint64_t id, enum job_status st)
{
    row_put(p, id, st, SIM_NEVER);
    set_timed(p, id, JOB_COMPLETED, SIM_NEVER);
    struct job *j = jobs_get(&p->d->jobs, id);
    struct vt_row *x = row_of(p, id);
    if (j->run)
        sim_run_release(p->sim, j->run);
    if (x->cached_run)
        sim_run_release(p->sim, x->cached_run);
    j->run = 0;
    x->cached_run = 0;
    forget_done(p, id);
}

static void row_sleep(struct policy *p, uint64_t id, int64_t wake_us)
{
    row_of(p, id)->why = WHY_WAKE;
    if (p->design == DESIGN_LEASE) {
        row_put(p, id, JOB_SLEEPING, SIM_NEVER);
        set_timed(p, id, JOB_SLEEPING, wake_us);
    } else {
        row_put(p, id, JOB_SLEEPING, wake_us);
    }
}

/* A failed attempt (x->failures already counted): retry after the backoff,
 * or fail the job for good. */
static void row_fail(struct policy *p, uint64_t id, int fatal, int64_t now_us)
{
    struct job *j = jobs_get(&p->d->jobs, id);
    struct vt_row *x = row_of(p, id);
    uint32_t n = p->attempts_mode == ATTEMPTS_CLAIMS ? j->attempts : x->failures;
    if (n < 1)
        n = 1;
    /* Kagzi's should_retry(attempt) is attempt < maximum_attempts. */
    int64_t at = now_us + retry_delay(p, n);
    if (fatal || n >= p->max_attempts || at >= x->deadline_us) {
        row_complete(p, id, JOB_FAILED);
        return;
    }
    x->why = WHY_RETRY;
    if (p->design == DESIGN_LEASE) {
        row_put(p, id, JOB_PENDING, SIM_NEVER);
        set_timed(p, id, JOB_PENDING, at);
    } else {
        row_put(p, id, JOB_PENDING, at);
    }
}

/* --- the server's loops ---------------------------------------------------------- */

/* One schedule at one tick.  max_catchup = 0: every due fire up to now.
 * Otherwise the as-built rule: count the fires in (last fired, now]; more
 * than max_catchup: skip ahead so that max_catchup remain, fire nothing
 * this tick and move the cursor to now; else fire the current one. */
static void fire_schedule(struct policy *p, uint64_t sid, int64_t now_us)
{
    struct vt_durable *d = p->d;
    uint32_t h = jobs_get(&d->scheds, sid)->handler;
    int64_t nf = d->next_fire[sid];
    SIM_ASSERT(nf <= now_us);
    if (p->max_catchup == 0) {
        while (nf != SIM_NEVER && nf <= now_us) {
            job_new(p, h, nf, UINT64_MAX, WHY_FIRE, now_us);
            d->last_fired[sid] = nf;
            nf = sched_next(p, h, nf, 0);
        }
    } else {
        uint64_t missed = 0;
        for (int64_t t = sched_next(p, h, d->last_fired[sid], 0); t != SIM_NEVER && t <= now_us;
             t = sched_next(p, h, t, 0))
            missed++;
        if (missed > p->max_catchup) {
            uint64_t skip = missed - p->max_catchup;
            int64_t t = sched_next(p, h, d->last_fired[sid], 0);
            for (uint64_t i = 0; i < skip; i++)
                t = sched_next(p, h, t, 0);
            nf = t;
            d->last_fired[sid] = now_us;
        } else {
            job_new(p, h, nf, UINT64_MAX, WHY_FIRE, now_us);
            d->last_fired[sid] = nf;
            nf = sched_next(p, h, nf, 0);
        }
    }
    d->next_fire[sid] = nf;
    jobs_update(&d->scheds, sid, nf == SIM_NEVER ? JOB_COMPLETED : JOB_PENDING, nf);
}

/* The coordinator (scheduler, for lease): fires the due schedules. */
static void coordinator_tick(struct policy *p, int64_t now_us)
{
    struct vt_durable *d = p->d;
    if (p->server_down)
        return;
    /* Each schedule is handled once per tick: gather the due ones first
     * (parked at SIM_NEVER), then fire. */
    size_t n = 0;
    uint64_t sid;
    while ((sid = jobs_next_due(&d->scheds, now_us)) != NONE) {
        p->scratch = xgrow(p->scratch, sizeof *p->scratch, &p->scratch_cap, n + 1);
        p->scratch[n++] = sid;
        jobs_update(&d->scheds, sid, JOB_SLEEPING, SIM_NEVER);
    }
    for (size_t i = 0; i < n; i++)
        fire_schedule(p, p->scratch[i], now_us);
    int64_t at = SIM_NEVER;
    jobs_peek(&d->scheds, &at);
    ticker_arm(p, p->coord, at, now_us);
    if (n)
        notify_all(p, now_us);
}

/* design=lease: the watchdog.  Expired leases are orphans (a failed attempt:
 * retry after the backoff, or fail); due wakes and due retries become
 * PENDING rows that the poll query takes. */
static void watchdog_tick(struct policy *p, int64_t now_us)
{
    struct vt_durable *d = p->d;
    if (p->server_down)
        return;
    uint64_t id;
    int woke = 0;
    while ((id = jobs_next_due(&d->timed, now_us)) != NONE) {
        struct job *t = jobs_get(&d->timed, id);
        if (t->status == JOB_RUNNING) {
            struct vt_row *x = row_of(p, id);
            x->failures++;
            x->locked_by = 0;
            row_fail(p, id, 0, now_us);
        } else {
            set_timed(p, id, JOB_COMPLETED, SIM_NEVER);
            row_put(p, id, JOB_PENDING, now_us);
            woke = 1;
        }
    }
    if (woke)
        notify_all(p, now_us);
}

/* --- hooks ---------------------------------------------------------------------------- */

static struct policy *vt_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct policy *p = xcalloc(1, sizeof *p);
    p->sim = sim;
    p->d = durable;
    p->t = sim_topo(sim);
    p->design = (int)params_get(ps, "design");
    p->nworkers = (uint32_t)params_get(ps, "workers");
    sim_declare_pool(sim, p->nworkers); /* its idle workers may all poll at one instant */
    SIM_ASSERT(p->nworkers < (UINT32_C(1) << 24)); /* vt_row.locked_by */
    p->vt_us = params_get(ps, "visibility_timeout");
    p->extend = (int)params_get(ps, "heartbeat_extend");
    p->hb_us = params_get(ps, "heartbeat_interval");
    p->ext_us = params_get(ps, "heartbeat_extension");
    p->lease_us = params_get(ps, "lease");
    p->watchdog_us = params_get(ps, "watchdog_interval");
    p->coord_us = params_get(ps, "coordinator_interval");
    p->notify = (int)params_get(ps, "notify");
    p->poll_us = params_get(ps, "poll_interval");
    p->max_catchup = (uint32_t)params_get(ps, "max_catchup");
    p->attempts_mode = (int)params_get(ps, "attempts");
    p->max_attempts = (uint32_t)params_get(ps, "max_attempts");
    int64_t base = params_get(ps, "retry_base"), cap = params_get(ps, "retry_cap");
    p->retry = backoff_exp(base, cap < base ? base : cap, 0);
    p->cron_utc = (int)params_get(ps, "cron_tz") == 1;
    p->pending_first = params_get(ps, "claim_order") == 1;
    p->lease_direct = params_get(ps, "lease_poll") == 1;
    p->extend_cumulative = params_get(ps, "extend_from") == 1;
    p->retry_steps = (uint32_t)params_get(ps, "retry_steps");
    p->poll_min_us = params_get(ps, "poll_min");
    p->job_deadline = (int)params_get(ps, "job_deadline");
    if (p->cron_utc) {
        char err[128];
        SIM_ASSERT(cal_zone_get("UTC", &p->sched_opts.zone, err, sizeof err) == 0); /* UTC is built in */
    }
    p->wk = xcalloc(p->nworkers, sizeof *p->wk);
    sim_declare_worker_rows(sim, p->wk, sizeof *p->wk, p->nworkers);
    idxset_init(&p->idle, p->nworkers);
    p->next = sim_alarm_new(sim, T_NEXT, 0);

    struct vt_durable *d = p->d;
    if (!d->init) {
        d->init = 1;
        sim_jobs_init(sim, &d->jobs);
        jobs_set_extra(&d->jobs, sizeof(struct vt_row));
        sim_jobs_init(sim, &d->timed);
        /* An index of the job rows (the same writes): durable, not watched. */
        jobs_init(&d->pendq, sim_durable_realloc, sim);
        sim_jobs_init(sim, &d->scheds);
        uint32_t nprod = 0;
        for (uint32_t h = 0; h < p->t->nh; h++)
            nprod += !is_consumer(p, h);
        d->next_fire = sim_dalloc(sim, sizeof(int64_t) * (nprod ? nprod : 1));
        d->last_fired = sim_dalloc(sim, sizeof(int64_t) * (nprod ? nprod : 1));
        d->pend = sim_dalloc(sim, sizeof *d->pend * (p->t->nh ? p->t->nh : 1));
        for (uint32_t h = 0; h < p->t->nh; h++) {
            if (is_consumer(p, h))
                continue;
            int64_t first = sched_next(p, h, 0, 1);
            struct job s = {.handler = h, .status = first == SIM_NEVER ? JOB_COMPLETED : JOB_PENDING,
                            .available_us = first, .due_us = -1, .item = UINT64_MAX};
            uint64_t sid = jobs_add(&d->scheds, &s);
            d->next_fire[sid] = first;
            d->last_fired[sid] = -1;
        }
    }
    sim_declare_rows(sim, d->pend, sizeof *d->pend);
    sim_declare_run_rows(sim, &d->jobs);
    return p;
}

static void vt_destroy(struct policy *p)
{
    free(p->wk);
    idxset_free(&p->idle);
    free(p->scratch);
    free(p);
}

/* At a restart: an event published while the host was down or stopping
 * reached no policy, yet in the real system its row was written by the
 * publisher, not by the host.  Its row is made now. */
static void adopt_unseen(struct policy *p, int64_t now_us)
{
    struct vt_durable *d = p->d;
    uint64_t seen = d->seen;
    for (uint32_t h = 0; h < p->t->nh; h++) {
        if (!is_consumer(p, h))
            continue;
        uint32_t n = sim_pending_items(p->sim, h, NULL, 0);
        p->scratch = xgrow(p->scratch, sizeof *p->scratch, &p->scratch_cap, (size_t)n + 1);
        sim_pending_items(p->sim, h, p->scratch, n);
        for (uint32_t i = 0; i < n; i++) {
            uint64_t item = p->scratch[i];
            if (item < seen)
                continue;
            job_new(p, h, -1, item, WHY_EVENT, now_us);
            correlate_add(p, h, item);
            if (item + 1 > d->seen)
                d->seen = item + 1;
        }
    }
}

static void vt_start(struct policy *p, int restart, int64_t now_us)
{
    /* The rows are all there is to recover from, with the rows of events
     * published while the host was away. */
    if (restart)
        adopt_unseen(p, now_us);
    p->server_down = 0;
    idxset_clear(&p->idle);
    for (uint32_t k = 0; k < p->nworkers; k++) {
        p->wk[k] = (struct worker){.state = W_DOWN, .t0_us = now_us};
        worker_set(p, k, W_IDLE);
    }
    p->coord = sim_ticker_new(p->sim, p->coord_us, T_COORD);
    if (p->design == DESIGN_LEASE)
        p->watchdog = sim_ticker_new(p->sim, p->watchdog_us, T_WATCHDOG);
    /* The loops' first ticks come at once (an interval timer's first tick). */
    coordinator_tick(p, now_us);
    if (p->design == DESIGN_LEASE)
        watchdog_tick(p, now_us);
    for (uint32_t k = 0; k < p->nworkers; k++)
        worker_poll(p, k, now_us);
    arm_next(p, now_us);
}

static void vt_on_publish(struct policy *p, uint32_t h, uint64_t item, int64_t now_us)
{
    p->d->seen = item + 1;
    job_new(p, h, -1, item, WHY_EVENT, now_us);
    correlate_add(p, h, item);
    notify_all(p, now_us);
    arm_next(p, now_us);
}

static void vt_on_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now_us)
{
    switch (tag) {
    case T_POLL: {
        uint32_t k = (uint32_t)arg;
        p->wk[k].poll = 0;
        worker_poll(p, k, now_us);
        break;
    }
    case T_NEXT:
        notify_all(p, now_us);
        break;
    case T_HEARTBEAT: {
        uint32_t k = (uint32_t)arg;
        struct worker *wk = &p->wk[k];
        wk->heartbeat = 0;
        if (wk->state != W_BUSY)
            break;
        /* extend_worker_locks: rows this worker still holds (a re-claim by
         * another worker changed locked_by); the server must be up. */
        const struct job *j = !p->server_down && !job_done(p, wk->job) ? jobs_get(&p->d->jobs, wk->job) : NULL;
        if (j && j->status == JOB_RUNNING && row_of(p, wk->job)->locked_by == k + 1) {
            if (p->design == DESIGN_LEASE)
                set_timed(p, wk->job, JOB_RUNNING, now_us + p->lease_us);
            else
                row_put(p, wk->job, JOB_RUNNING, extended(p, j, now_us));
        }
        wk->heartbeat = sim_timer_at(p->sim, now_us + p->hb_us, T_HEARTBEAT, k);
        break;
    }
    case T_COORD:
        coordinator_tick(p, now_us);
        break;
    case T_WATCHDOG:
        watchdog_tick(p, now_us);
        break;
    default:
        SIM_ASSERT(0 && "unknown timer tag");
    }
    arm_next(p, now_us);
}

static void vt_on_run_end(struct policy *p, const struct run_result *r, int64_t now_us)
{
    SIM_ASSERT(r->worker >= 1 && r->worker <= p->nworkers);
    uint32_t k = r->worker - 1;
    struct worker *wk = &p->wk[k];
    SIM_ASSERT(wk->state == W_BUSY && wk->run == r->run);
    sim_timer_cancel(p->sim, wk->heartbeat);
    wk->heartbeat = 0;
    wk->run = 0;
    worker_set(p, k, W_IDLE);

    /* The row update of this run applies whoever holds the row now: the
     * seed's UPDATEs match the run id and status, not the worker. */
    uint64_t id = r->tag;
    if (!job_done(p, id)) {
        struct job *j = jobs_get(&p->d->jobs, id);
        if (r->outcome == OUT_COMMITTED) {
            int waits = is_consumer(p, j->handler) && r->ntaken == 0 && r->wake_us != SIM_NEVER &&
                        sim_item(p->sim, j->item)->state == ITEM_PENDING;
            if (waits)
                row_sleep(p, id, r->wake_us);
            else
                row_complete(p, id, JOB_COMPLETED);
        } else {
            row_of(p, id)->failures++;
            /* internal: a non-retryable error */
            row_fail(p, id, r->fail == FAIL_INTERNAL, now_us);
        }
    }
    worker_poll(p, k, now_us); /* the worker loop asks again at once */
    arm_next(p, now_us);
}

static void vt_on_trigger(struct policy *p, uint32_t inst, int64_t now_us)
{
    int any = 0;
    for (uint32_t h = p->t->inst_first_h[inst]; h < p->t->inst_first_h[inst + 1]; h++) {
        if (is_consumer(p, h))
            continue;
        job_new(p, h, -1, UINT64_MAX, WHY_MANUAL, now_us);
        any = 1;
    }
    if (any)
        notify_all(p, now_us);
    arm_next(p, now_us);
}

/* A graceful stop: the workers finish the runs they have (their row
 * updates are written as the runs end) and claim nothing more. */
static void vt_on_stop(struct policy *p, int64_t now_us) { p->stopping = 1; }

static void worker_down(struct policy *p, uint32_t k)
{
    struct worker *wk = &p->wk[k];
    if (wk->state == W_DOWN)
        return;
    /* Its run (if any) was interrupted by the engine; the row stays RUNNING
     * until its available_at (lease) passes. */
    sim_timer_cancel(p->sim, wk->poll);
    sim_timer_cancel(p->sim, wk->heartbeat);
    wk->poll = wk->heartbeat = 0;
    wk->run = 0;
    worker_set(p, k, W_DOWN);
}

static void worker_up(struct policy *p, uint32_t k, int64_t now_us)
{
    struct worker *wk = &p->wk[k];
    if (wk->state != W_DOWN)
        return;
    wk->t0_us = now_us;
    worker_set(p, k, W_IDLE);
    worker_poll(p, k, now_us);
}

static void vt_on_part(struct policy *p, int target, uint32_t index, int up, int64_t now_us)
{
    switch (target) {
    case CRASH_WORKER:
        if (index < p->nworkers) {
            if (up)
                worker_up(p, index, now_us);
            else
                worker_down(p, index);
        }
        break;
    case CRASH_WORKERS:
        for (uint32_t k = 0; k < p->nworkers; k++) {
            if (up)
                worker_up(p, k, now_us);
            else
                worker_down(p, k);
        }
        break;
    case CRASH_SERVER:
        if (!up) {
            /* Notifications in flight and the loops die with the server;
             * rows stay. */
            p->server_down = 1;
            sim_ticker_arm(p->sim, p->coord, SIM_NEVER);
            if (p->design == DESIGN_LEASE)
                sim_ticker_arm(p->sim, p->watchdog, SIM_NEVER);
        } else if (p->server_down) {
            p->server_down = 0;
            coordinator_tick(p, now_us);
            if (p->design == DESIGN_LEASE)
                watchdog_tick(p, now_us);
            /* Workers reconnect and poll. */
            for (uint32_t k = 0; k < p->nworkers; k++)
                worker_poll(p, k, now_us);
        }
        break;
    default:
        break;
    }
    arm_next(p, now_us);
}

/* A producer's schedule changed (the schedule row is updated): disabled,
 * no next fire; otherwise the first fire from now, the missed ones
 * skipped (Kagzi's enable and resume compute the next fire after now). */
static void vt_on_schedule_change(struct policy *p, uint32_t h, int64_t now_us)
{
    struct vt_durable *d = p->d;
    for (uint64_t sid = 0; sid < d->scheds.n; sid++) {
        if (jobs_get(&d->scheds, sid)->handler != h)
            continue;
        int64_t nf = sched_next(p, h, now_us, 1);
        d->next_fire[sid] = nf;
        d->last_fired[sid] = nf == SIM_NEVER ? now_us : nf - 1;
        jobs_update(&d->scheds, sid, nf == SIM_NEVER ? JOB_COMPLETED : JOB_PENDING, nf);
        break;
    }
    int64_t at = SIM_NEVER;
    jobs_peek(&d->scheds, &at);
    ticker_arm(p, p->coord, at, now_us);
    arm_next(p, now_us);
}

/* A manual run of one producer: one job for it (a consumer's trigger has
 * no meaning here: its jobs are its events). */
static void vt_on_trigger_ex(struct policy *p, const struct sim_trigger *t, int64_t now_us)
{
    if (t->handler == UINT32_MAX) {
        vt_on_trigger(p, t->inst, now_us);
        return;
    }
    if (!is_consumer(p, t->handler)) {
        job_new(p, t->handler, -1, UINT64_MAX, WHY_MANUAL, now_us);
        notify_all(p, now_us);
    }
    arm_next(p, now_us);
}

static const struct variant_setting kagzi_settings[] = {
    {"visibility_timeout", "60s", "crates/kagzi-server/src/config.rs 86-95 (visibility timeout 60 s)"},
    {"heartbeat_extend", "true", "crates/kagzi-server/src/worker_service.rs 171-215 (extension on heartbeat)"},
    {"heartbeat_interval", "10s", "config.rs 86-95 (worker heartbeat 10 s)"},
    {"heartbeat_extension", "45s", "config.rs 86-95 (extension 45 s)"},
    {"extend_from", "available", "crates/kagzi-store/src/postgres/workflow/state.rs 834-852 (GREATEST(available_at, NOW()) + ext)"},
    {"max_catchup", "50", "crates/kagzi-server/src/coordinator.rs 137-163; config.rs 60-70"},
    {"attempts", "failures", "crates/kagzi-store/src/postgres/step.rs 463-500 (only step failures count)"},
    {"retry_steps", "3", "crates/kagzi-store/src/models/workflow.rs 61-78 (backon 1.6 ExponentialBuilder, 3 steps)"},
    {"cron_tz", "utc", "crates/kagzi-server/src/coordinator.rs (chrono Utc)"},
    {"notify", "new_only", "crates/kagzi-server/src/worker_service.rs 272-390 (PollTask: notified for new rows)"},
    {"poll_interval", "60s", "config.rs 125-131 (poll hold 60 s)"},
};

static const struct variant_setting kagzi_before_settings[] = {
    {"design", "lease", "crates/kagzi-server/src/worker_service.rs 52, 288-293 (locked_until = now + 30 s)"},
    {"lease_poll", "direct", "crates/kagzi-store/src/postgres/workflow/queue.rs 10-64 (poll claims sleepers, expired locks)"},
    {"claim_order", "pending_first", "queue.rs 31 (ORDER BY wake_up_at NULLS FIRST, created_at)"},
    {"attempts", "claims", "queue.rs 35-41 (attempts + 1 at every claim); watchdog.rs 100-136"},
    {"max_catchup", "0", "crates/kagzi-server/src/scheduler.rs 27-46, 146-241 (every missed fire, oldest first)"},
    {"cron_tz", "utc", "scheduler.rs 17-25 (UTC)"},
};

static const struct variant_setting owf_settings[] = {
    {"visibility_timeout", "30s", "packages/openworkflow/worker/worker.ts 12 (DEFAULT_LEASE_DURATION_MS)"},
    {"heartbeat_extend", "true", "worker.ts 270-285 (startHeartbeat); postgres/backend.ts 531-547"},
    {"heartbeat_interval", "15s", "worker.ts 270-285 (every lease / 2)"},
    {"heartbeat_extension", "30s", "postgres/backend.ts 531-547 (available_at = now + lease)"},
    {"claim_order", "pending_first", "postgres/backend.ts 507-510 (pending runs first)"},
    {"attempts", "claims", "postgres/backend.ts 513-524 (attempts + 1 at every claim)"},
    {"max_attempts", "1", "core/workflow-definition.ts 136-141 (DEFAULT_WORKFLOW_RETRY_POLICY)"},
    {"retry_base", "1s", "core/workflow-definition.ts 136-141 (1 s x 2)"},
    {"retry_cap", "100s", "core/workflow-definition.ts 136-141 (maximum 100 s)"},
    {"notify", "off", "worker.ts 132-149 (a poll loop, no notification)"},
    {"poll_interval", "1s", "worker.ts 13-19 (idle backoff up to 1 s)"},
    {"poll_min", "100ms", "worker.ts 13-19, 314-326 (from 100 ms, x 2, jitter 0.5-1)"},
    {"workers", "1", "worker.ts 20 (concurrency 1)"},
    {"job_deadline", "true", "postgres/backend.ts 484-506; core/workflow-definition.ts 153-209"},
};

static const struct policy_variant vt_variants[] = {
    {"kagzi", "Kagzi as built (HEAD): cumulative lease extension, 3-step backoff, notifications for new rows only",
     "spa5k/Kagzi@ba2b3572e5f6ba39bf818ddc73d72462f7c8e623 crates/", "kagzi", kagzi_settings,
     (int)(sizeof kagzi_settings / sizeof kagzi_settings[0])},
    {"kagzi-before", "Kagzi before the simplification: leases, a poll that claims sleepers and expired locks",
     "spa5k/Kagzi@578347f0161d77a876528f1de82c4dd0929b2e89 crates/", "kagzi-before", kagzi_before_settings,
     (int)(sizeof kagzi_before_settings / sizeof kagzi_before_settings[0])},
    {"openworkflow", "OpenWorkflow's lease queue: pending runs first, 30 s leases, one attempt, run deadlines",
     "openworkflowdev/openworkflow@46dcc85d230bb54894dc4bab022a1ce34cc11c13 packages/openworkflow/", "simrun",
     owf_settings, (int)(sizeof owf_settings / sizeof owf_settings[0])},
};

const struct policy_ops policy_vistimeout = {
    .abi = POLICY_ABI,
    .name = "vistimeout",
    .summary = "job rows with one available_at column, a worker pool and a visibility timeout (lease: the "
               "design before)",
    .seeds = "seed 002 (Kagzi scheduling simplification)",
    .params = vt_params,
    .nparams = (int)(sizeof vt_params / sizeof vt_params[0]),
    .durable_size = sizeof(struct vt_durable),
    /* The system promises one execution per job, and a job is one unit of
     * work (an item, or a producer's fire): overlaps measure a job running
     * twice at once, not independent jobs of one consumer side by side. */
    .promise = PROMISE_UNIT,
    .items_volatile = 0,
    .create = vt_create,
    .destroy = vt_destroy,
    .start = vt_start,
    .on_publish = vt_on_publish,
    .on_timer = vt_on_timer,
    .on_run_end = vt_on_run_end,
    .on_trigger = vt_on_trigger,
    .on_part = vt_on_part,
    .on_horizon = NULL,
    .on_stop = vt_on_stop,
    .on_schedule_change = vt_on_schedule_change,
    .on_trigger_ex = vt_on_trigger_ex,
    .variants = vt_variants,
    .nvariants = (int)(sizeof vt_variants / sizeof vt_variants[0]),
};
