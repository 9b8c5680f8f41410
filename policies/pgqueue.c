/* pgqueue.c: a Postgres job queue (FOR UPDATE SKIP LOCKED) with a worker
 * pool, a stuck-job sweep, retry curves, polling or LISTEN/NOTIFY, and a
 * cron plugin, in four flavours that carry the defaults of pg-boss,
 * graphile-worker, River and Oban.  docs/policy-pgqueue.md has the rules,
 * the flavours' defaults and their sources; this comment is the map.
 *
 * Mapping.  Every item is a job row for its consumer; every fire of a
 * producer's schedule is a job the flavour's cron plugin inserts; a job's
 * run serves its item or fire.  The host runs the workers and the leader's
 * loops; the database outlives it (`crash server` is the database; `crash
 * worker K` one worker; items published while the host was down are rows
 * at the restart).
 *
 * A worker fetches the oldest available row (run_at <= now; pg-boss: the
 * first created, a retry at once keeping its creation), marks it executing
 * (attempt + 1, attempted_at = now) and runs it; when the run
 * ends the row is completed, or retried after the flavour's curve, or
 * discarded once max_attempts are used (pg-boss: the result of a handler
 * abandoned at its expiry is dropped, and only an active row completes).
 * A worker that is done fetches again at once (pg-boss: no sooner than
 * poll_interval after the fetch that took its job, unless 100 ms or less
 * remain, or a NOTIFY comes); an idle one waits for a NOTIFY of a new row
 * (notify on) or its next poll (every poll_interval); rows that become available by
 * time (retries) are found by the poll.  The sweep (every sweep_interval)
 * treats an executing row attempted longer ago than rescue_after as
 * abandoned, whether or not it still runs: pg-boss fails the attempt
 * (retried), graphile-worker clears the lock, River makes it retryable,
 * Oban makes it available (discarded when its attempts are used up; Oban
 * runs no sweep unless its Lifeline is configured, sweep=on).  A
 * job_timeout ends an attempt early: pg-boss abandons it (the handler runs
 * on unless it honours its signal; the job is failed and retried at once),
 * River cancels its context (a handler that honours it stops and fails; one
 * that ignores it keeps its slot until it returns).  The cron
 * plugin inserts the job of a fire at its check (every cron_interval; River
 * exactly at the fire); fires missed while it could not check are not
 * backfilled (pg-boss sends the latest one if under 60 s old).
 *
 * Key invariant: a row is available (PENDING at run_at), executing
 * (RUNNING, available_us = SIM_NEVER: only the sweep or its run's end
 * moves it), or finished; a BUSY worker's run is active.
 *
 * Durable: the rows of jobs not yet finished (attempt, attempted_at: a
 * finished job's row is forgotten, row_finish), the cron plugin's
 * progress, the items already inserted.  Volatile: the workers and the loops. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/idxset.h"
#include "sim/jobs.h"
#include "sim/policy_api.h"
#include "sim/rng.h"
#include "sim/util.h"

enum { T_POLL = 1, T_SWEEP, T_CRON, T_TIMEOUT, T_CRONAT, T_REST };
enum { FL_PGBOSS, FL_GRAPHILE, FL_RIVER, FL_OBAN };
enum { NOTIFY_FLAVOUR, NOTIFY_ON, NOTIFY_OFF };
enum { SWEEP_FLAVOUR, SWEEP_ON, SWEEP_OFF };
enum { UNTIMED_FLAVOUR, UNTIMED_YES, UNTIMED_NO };
enum { CANCEL_FLAVOUR, CANCEL_HONOURS, CANCEL_IGNORES };
enum { RC_FLAVOUR, RC_FIXED, RC_GRAPHILE, RC_RIVER, RC_OBAN };
enum { W_IDLE, W_BUSY, W_DOWN, W_REST };
enum { AFTER_FLAVOUR, AFTER_WAIT, AFTER_AT_ONCE };

#define NONE UINT64_MAX

/* The flavours' defaults (docs/policy-pgqueue.md gives each its source). */
struct flavour {
    uint32_t workers;
    int64_t poll_us, rescue_us, sweep_us, timeout_us, cron_us;
    int notify, curve;
    uint32_t max_attempts;
    int after;                     /* AFTER_WAIT or AFTER_AT_ONCE */
    int sweep;                     /* the stuck-job sweep runs without being configured */
};
#define TIMEOUT_NONE (-1)
#define TIMEOUT_EXPIRE (-2) /* pg-boss: the expiry itself */
static const struct flavour flavours[] = {
    [FL_PGBOSS] = {1, 2 * US_PER_S, 15 * US_PER_MIN, 60 * US_PER_S, TIMEOUT_EXPIRE, 30 * US_PER_S, 0, RC_FIXED, 3, AFTER_WAIT, 1},
    /* graphile's sweep runs every uniform(8, 10) min: here its mean; Oban's
     * Lifeline runs only when configured */
    [FL_GRAPHILE] = {1, 2 * US_PER_S, 4 * US_PER_H, 9 * US_PER_MIN, TIMEOUT_NONE, US_PER_MIN, 1, RC_GRAPHILE, 25, AFTER_AT_ONCE, 1},
    [FL_RIVER] = {100, US_PER_S, US_PER_H, 30 * US_PER_S, US_PER_MIN, 0, 1, RC_RIVER, 25, AFTER_AT_ONCE, 1},
    [FL_OBAN] = {10, US_PER_S, 60 * US_PER_MIN, US_PER_MIN, TIMEOUT_NONE, US_PER_MIN, 1, RC_OBAN, 20, AFTER_AT_ONCE, 0},
};

struct pq_row {                    /* side data of a job row (its extra bytes) */
    int64_t attempted_us;          /* attempted_at, -1 never */
    uint64_t exec_pos;             /* executing: its index in exec + 1; 0 otherwise */
    int64_t created_us;            /* created_on */
};

/* A claim, in the order claims happen (attempted_at never decreases along
 * them): the index the sweep's next instant is read from, the earliest
 * claim still executing.  Entries whose row stopped executing, or was
 * claimed again, are dropped as they reach the front. */
struct claim_ord {
    int64_t attempted_us;
    uint64_t id;
};

struct pq_durable {
    int init;
    struct jobtab rows;            /* available_us = run_at while available; extra: pq_row */
    uint64_t *exec;                /* executing rows, for the sweep */
    size_t nexec, exec_cap;
    struct claim_ord *ord;         /* claims in order: [ord_head, ord_len) may hold executing rows */
    size_t ord_head, ord_len, ord_cap;
    int64_t *cron_last;            /* [nh] producers: the last fire inserted (or passed), -1 none */
    uint64_t seen;                 /* items 0..seen-1 are rows already */
};

struct worker {
    uint8_t state;
    uint32_t handler;              /* BUSY: its row's handler (the row may finish meanwhile) */
    uint64_t run, row;
    int64_t fetched_us;            /* BUSY: when its fetch took the row */
    sim_timer timeout;
    sim_timer rest;                /* REST: its next fetch */
};

/* pg-boss: a worker's loop does not fetch sooner than this before its
 * next poll (src/worker.ts run(): no delay when interval - duration is
 * 100 ms or less). */
#define REST_MIN_US (100 * US_PER_MS)

struct policy {
    struct sim *sim;
    struct pq_durable *d;
    const struct sim_topo *t;

    int flavour, notify, curve, after, sweep_on;
    int honours;                   /* the handler stops when its timeout's signal comes */
    uint32_t nworkers, max_attempts;
    int64_t poll_us, rescue_us, sweep_us, timeout_us, retry_delay_us, cron_us;

    struct worker *w;
    struct idxset idle;            /* the idle workers */
    struct idxset rest;            /* the resting workers (pg-boss: waiting for their loop's next fetch) */
    int poll_tick, sweep_tick, cron_tick;
    int *cron_alarm;               /* [nh] River: each periodic job's exact time */
    int server_down, stopping;
};

static const struct param_def pq_params[] = {
    {"flavour", PARAM_ENUM, "pgboss", "pgboss|graphile|river|oban", 0, 0,
     "timgit/pg-boss, graphile/worker, riverqueue/river, oban-bg/oban (their docs and defaults)",
     "whose defaults every 0 / flavour parameter below takes"},
    {"workers", PARAM_INT, "0", NULL, 0, 1000000,
     "pg-boss localConcurrency 1; graphile concurrentJobs 1; River MaxWorkers (docs example 100); Oban queue "
     "limit (docs example 10)",
     "jobs run at once; 0: the flavour's"},
    {"poll_interval", PARAM_DURATION, "0", NULL, 0, US_PER_DAY,
     "pg-boss pollingIntervalSeconds 2; graphile pollInterval 2000 ms; River FetchPollInterval 1 s; Oban Stager "
     "interval 1 s",
     "how often an idle worker looks for available rows; 0: the flavour's"},
    {"notify", PARAM_ENUM, "flavour", "flavour|on|off", 0, 0,
     "pg-boss useListenNotify false; graphile LISTEN jobs:insert; River LISTEN/NOTIFY; Oban notifier",
     "on: an insert wakes idle workers at once (LISTEN/NOTIFY); off: only polls find rows"},
    {"rescue_after", PARAM_DURATION, "0", NULL, 0, 3660 * US_PER_DAY,
     "pg-boss expireInSeconds 900; graphile lock expiry 4 h; River RescueStuckJobsAfter 1 h (client.go: "
     "JobTimeout + 1 h when JobTimeout is set above 0); Oban Lifeline rescue_after 60 min (once the Lifeline "
     "is configured)",
     "an executing row attempted longer ago is treated as abandoned by the sweep; 0: the flavour's"},
    {"sweep", PARAM_ENUM, "flavour", "flavour|on|off", 0, 0,
     "Oban: Lifeline is opt-in (oban-bg/oban lib/oban/config.ex normalize_services starts it only when "
     "configured, plugins default []; lib/oban/lifeline.ex: enable with `lifeline: Oban.Lifeline`); pg-boss "
     "monitor, graphile resetLocked and River's rescuer run by default",
     "whether the stuck-job sweep runs (off: an orphaned executing row stays so for good); flavour: on, Oban "
     "off"},
    {"rescue_untimed", PARAM_ENUM, "flavour", "flavour|yes|no", 0, 0,
     "riverqueue/river internal/maintenance/job_rescuer.go makeRetryDecision (a job whose timeout is < 0 is "
     "ignored); CHANGELOG 0.40.0 (PR #1288) \"jobs that return a custom timeout of -1 (no timeout) are never "
     "rescued\", 0.41.1 (PR #1331) the same for Config.JobTimeout = -1",
     "whether the sweep rescues a job with no timeout (job_timeout_seconds -1); flavour: River no (from "
     "0.41.1; yes before 0.40.0), the others yes"},
    {"sweep_interval", PARAM_DURATION, "0", NULL, 0, US_PER_DAY,
     "pg-boss monitorIntervalSeconds 60; graphile resetLocked every 8-10 min; River rescuer 30 s; Oban Lifeline "
     "interval 1 min",
     "period of the stuck-job sweep; 0: the flavour's"},
    {"job_timeout_seconds", PARAM_INT, "0", NULL, -1, 1000000000,
     "pg-boss expireInSeconds (the handler is abandoned, the job failed); River JobTimeout 1 min (the job's "
     "context is cancelled; -1 never); graphile and Oban: none",
     "an attempt longer than this ends (pgboss: abandoned, still running; river: cancelled) and is retried; "
     "0: the flavour's, -1: never"},
    {"fetch_after_job", PARAM_ENUM, "flavour", "flavour|wait|at_once", 0, 0,
     "pg-boss src/worker.ts run(): the loop measures from before its fetch and waits interval - duration when "
     "that is over 100 ms (burstWhenReadyExceeds, burstWhenBatchFull opt-in, docs/api/workers.md); graphile, "
     "River and Oban fetch again when a job ends",
     "wait: a worker that ends a job fetches again no sooner than poll_interval after its previous fetch "
     "(at once if less than 100 ms remain, or on a NOTIFY); at_once: at once; flavour: pg-boss wait, others "
     "at_once"},
    {"handler_cancel", PARAM_ENUM, "flavour", "flavour|honours|ignores", 0, 0,
     "pg-boss src/manager.ts: the handler gets an AbortSignal aborted at the expiry and is abandoned either way "
     "(src/tools.ts resolveWithinSeconds); River internal/jobexecutor/job_executor.go: JobTimeout cancels "
     "Work's context (context.WithTimeout) and waits for Work to return",
     "what the handler does when its timeout's signal comes: honours (stops: the run is cut off) or ignores "
     "(runs on: pg-boss has abandoned it; River keeps the worker's slot and records what Work returns); "
     "flavour: pg-boss ignores, River honours"},
    {"retry_curve", PARAM_ENUM, "flavour", "flavour|fixed|graphile|river|oban", 0, 0,
     "pg-boss retryDelay (fixed); graphile exp(min(attempts, 10)) s; River attempt^4 s +-10 %; Oban 15 + 2^attempt "
     "s + 0-10 %",
     "the delay before retry n; fixed: retry_delay"},
    {"retry_delay", PARAM_DURATION, "0", NULL, 0, 30 * US_PER_DAY, "pg-boss retryDelay (default 0)",
     "the delay of the fixed curve"},
    {"max_attempts", PARAM_INT, "0", NULL, 0, 1000000,
     "pg-boss retryLimit 2 (3 attempts); graphile max_attempts 25; River MaxAttempts 25; Oban max_attempts 20",
     "attempts after which a failed job is discarded; 0: the flavour's"},
    {"cron_interval", PARAM_DURATION, "0", NULL, 0, US_PER_DAY,
     "pg-boss cronMonitorIntervalSeconds 30; graphile and Oban cron each minute; River periodic jobs at their time",
     "how often the cron plugin checks schedules (a fire becomes a job at the first check after it); 0: the "
     "flavour's (River: exactly at the fire)"},
};

static int is_consumer(const struct policy *p, uint32_t h) { return p->t->h_kind[h] == H_CONSUMER; }

/* --- rows ------------------------------------------------------------------------- */

static struct pq_row *rx(struct policy *p, uint64_t id) { return jobs_extra(&p->d->rows, id); }

static uint64_t row_new(struct policy *p, uint32_t h, int64_t due, uint64_t item, int64_t run_at)
{
    struct pq_durable *d = p->d;
    struct job j = {.handler = h, .status = JOB_PENDING, .available_us = run_at, .due_us = due, .item = item};
    uint64_t id = jobs_add(&d->rows, &j);
    *rx(p, id) = (struct pq_row){.attempted_us = -1, .created_us = run_at};
    return id;
}

/* Whether claim e is still its row's executing attempt. */
static int ord_live(struct policy *p, const struct claim_ord *e)
{
    if (!jobs_find(&p->d->rows, e->id))
        return 0;
    const struct pq_row *x = rx(p, e->id);
    return x->exec_pos != 0 && x->attempted_us == e->attempted_us;
}

/* Keeps the claim index's memory to its executing rows: a dropped front
 * goes once it is half the array, and entries of finished attempts behind
 * a long-running front go once they outnumber the executing rows. */
static void ord_trim(struct policy *p)
{
    struct pq_durable *d = p->d;
    while (d->ord_head < d->ord_len && !ord_live(p, &d->ord[d->ord_head]))
        d->ord_head++;
    size_t n = d->ord_len - d->ord_head;
    if (n > 2 * d->nexec + 64) {
        size_t k = 0;
        for (size_t i = d->ord_head; i < d->ord_len; i++)
            if (ord_live(p, &d->ord[i]))
                d->ord[k++] = d->ord[i];
        d->ord_head = 0;
        d->ord_len = k;
    } else if (d->ord_head > 64 && 2 * d->ord_head > d->ord_len) {
        memmove(d->ord, d->ord + d->ord_head, n * sizeof *d->ord);
        d->ord_head = 0;
        d->ord_len = n;
    }
}

static void exec_add(struct policy *p, uint64_t id)
{
    struct pq_durable *d = p->d;
    d->exec = sim_dgrow(p->sim, d->exec, sizeof *d->exec, &d->exec_cap, d->nexec + 1);
    d->exec[d->nexec++] = id;
    rx(p, id)->exec_pos = d->nexec;
    d->ord = sim_dgrow(p->sim, d->ord, sizeof *d->ord, &d->ord_cap, d->ord_len + 1);
    d->ord[d->ord_len++] = (struct claim_ord){rx(p, id)->attempted_us, id};
}

static void exec_del(struct policy *p, uint64_t id)
{
    struct pq_durable *d = p->d;
    uint64_t pos = rx(p, id)->exec_pos;
    if (!pos)
        return;
    uint64_t last = d->exec[--d->nexec];
    d->exec[pos - 1] = last;
    rx(p, last)->exec_pos = pos;
    rx(p, id)->exec_pos = 0;
}

/* A job is completed or discarded: its row is forgotten (the queue
 * deletes or archives finished jobs), so that memory follows the jobs in
 * the queue.  An attempt still running ends later on a forgotten row,
 * which it treats as the finished row it is: it changes nothing. */
static void row_finish(struct policy *p, uint64_t id, enum job_status st)
{
    exec_del(p, id);
    jobs_update(&p->d->rows, id, st, SIM_NEVER);
    jobs_forget(&p->d->rows, id);
}

/* The delay before retry n (n >= 1: attempts made). */
static int64_t retry_delay(struct policy *p, uint32_t n)
{
    struct rng *r = sim_policy_rng(p->sim);
    switch (p->curve) {
    case RC_GRAPHILE:
        return (int64_t)(exp(n < 10 ? (double)n : 10.0) * 1e6);
    case RC_RIVER: { /* attempt^4 s, +-10 % */
        double base = pow((double)n, 4.0) * 1e6;
        return (int64_t)(base * (0.9 + 0.2 * (double)rng_below(r, 1000001) / 1e6));
    }
    case RC_OBAN: { /* 15 + 2^attempt s, + 0-10 %; above 20 attempts the attempt scaled to 20
                       (Oban.Backoff.jittery_clamped: round(attempt / max_attempts * 20)) */
        uint32_t m = p->max_attempts;
        uint64_t k = m <= 20 ? n : ((uint64_t)n * 40 + m) / (2 * (uint64_t)m); /* rounded half up */
        double base = (15.0 + ldexp(1.0, (int)(k < 20 ? k : 20))) * 1e6;
        return (int64_t)(base * (1.0 + 0.1 * (double)rng_below(r, 1000001) / 1e6));
    }
    default:
        return p->retry_delay_us;
    }
}

/* An attempt of row id failed (its run failed, timed out, or the sweep
 * gave it up): retry after the curve, or discard. */
static void attempt_failed(struct policy *p, uint64_t id, int64_t now_us)
{
    struct job *j = jobs_get(&p->d->rows, id);
    if (j->attempts >= p->max_attempts) {
        sim_note(p->sim, j->handler, "job failed after %u attempts", j->attempts);
        row_finish(p, id, JOB_FAILED); /* discarded */
        return;
    }
    exec_del(p, id);
    int64_t delay = retry_delay(p, j->attempts);
    /* pg-boss fetches by created_on (fetchNextJob: priority desc,
     * created_on, id), which a retry keeps: one available at once sorts
     * among the rows by its creation, ahead of rows created after it.  The
     * others fetch by run_at, which the retry sets. */
    int64_t at = p->flavour == FL_PGBOSS && delay == 0 ? rx(p, id)->created_us : now_us + delay;
    jobs_update(&p->d->rows, id, JOB_PENDING, at);
}

/* --- workers ---------------------------------------------------------------------- */

static void worker_set(struct policy *p, uint32_t k, uint8_t st)
{
    if (p->w[k].state == W_REST && st != W_REST) {
        sim_timer_cancel(p->sim, p->w[k].rest);
        p->w[k].rest = 0;
    }
    p->w[k].state = st;
    if (st == W_IDLE)
        idxset_add(&p->idle, k);
    else
        idxset_del(&p->idle, k);
    if (st == W_REST)
        idxset_add(&p->rest, k);
    else
        idxset_del(&p->rest, k);
}

/* The fetch query's UPDATE and the job's start on worker k. */
static void claim(struct policy *p, uint32_t k, uint64_t id, int64_t now_us)
{
    struct job *j = jobs_get(&p->d->rows, id);
    j->attempts++;
    struct run_req rq = RUN_REQ_INIT;
    rq.handler = j->handler;
    rq.due_us = j->due_us;
    rq.worker = k + 1;
    rq.tag = id;
    rq.retry_of = j->run;
    rq.reason = j->attempts > 1 ? REASON_RETRY : is_consumer(p, j->handler) ? REASON_EVENT : REASON_SCHEDULE;
    uint64_t item = j->item;
    if (item != UINT64_MAX) {
        rq.offer = &item;
        rq.noffer = 1;
    }
    rx(p, id)->attempted_us = now_us;
    jobs_update(&p->d->rows, id, JOB_RUNNING, SIM_NEVER);
    exec_add(p, id);
    uint64_t run = sim_run_start(p->sim, &rq);
    jobs_get(&p->d->rows, id)->run = run;
    struct worker *w = &p->w[k];
    worker_set(p, k, W_BUSY);
    w->run = run;
    w->row = id;
    w->handler = rq.handler;
    w->fetched_us = now_us;
    if (p->timeout_us > 0)
        w->timeout = sim_timer_at(p->sim, now_us + p->timeout_us, T_TIMEOUT, k);
}

/* Idle workers take available rows, lowest index first. */
static void fetch(struct policy *p, int64_t now_us)
{
    if (p->server_down || p->stopping)
        return;
    for (uint32_t k = idxset_next(&p->idle, 0); k != IDXSET_NONE; k = idxset_next(&p->idle, k + 1)) {
        uint64_t id = jobs_next_due(&p->d->rows, now_us);
        if (id == NONE)
            break;
        claim(p, k, id, now_us);
    }
}

/* Worker k is done with its job (it ended, or was abandoned or cancelled
 * at its timeout): it fetches again at once, or (wait: pg-boss's loop)
 * rests until poll_interval after the fetch that took the job, unless at
 * most 100 ms of that remain. */
static void worker_done(struct policy *p, uint32_t k, int64_t now_us)
{
    struct worker *w = &p->w[k];
    sim_timer_cancel(p->sim, w->timeout);
    w->timeout = 0;
    w->run = 0;
    int64_t next = w->fetched_us + p->poll_us;
    if (p->after == AFTER_WAIT && next - now_us > REST_MIN_US) {
        worker_set(p, k, W_REST);
        w->rest = sim_timer_at(p->sim, next, T_REST, k);
        return;
    }
    worker_set(p, k, W_IDLE);
    fetch(p, now_us);
}

/* A NOTIFY ends the resting workers' waits (pg-boss: Worker.notify aborts
 * the loop's delay). */
static void wake_resting(struct policy *p)
{
    for (uint32_t k = idxset_next(&p->rest, 0); k != IDXSET_NONE; k = idxset_next(&p->rest, k + 1))
        worker_set(p, k, W_IDLE);
}

/* The poll loop is armed for the first row idle workers could take. */
static void arm_poll(struct policy *p, int64_t now_us)
{
    int64_t at = SIM_NEVER;
    if (p->idle.count == 0 || p->server_down || jobs_peek(&p->d->rows, &at) == NONE)
        at = SIM_NEVER;
    sim_ticker_arm(p->sim, p->poll_tick, at);
}

/* The sweep is armed for the first executing row it would treat as
 * abandoned: the earliest claim still executing.  O(1) amortised. */
static void arm_sweep(struct policy *p)
{
    ord_trim(p);
    const struct pq_durable *d = p->d;
    int64_t at = d->ord_head < d->ord_len ? d->ord[d->ord_head].attempted_us + p->rescue_us + 1 : SIM_NEVER;
    sim_ticker_arm(p->sim, p->sweep_tick, p->server_down || !p->sweep_on ? SIM_NEVER : at);
}

/* The stuck-job sweep (pg-boss monitor, graphile resetLocked, River rescuer,
 * Oban Lifeline): O(executing rows). */
static void sweep(struct policy *p, int64_t now_us)
{
    if (p->server_down || p->stopping || !p->sweep_on)
        return;
    for (size_t i = 0; i < p->d->nexec;) {
        uint64_t id = p->d->exec[i];
        if (rx(p, id)->attempted_us + p->rescue_us >= now_us) {
            i++;
            continue;
        }
        struct job *j = jobs_get(&p->d->rows, id);
        sim_note(p->sim, j->handler, "stuck job rescued (attempt %u)", j->attempts);
        if (p->flavour == FL_PGBOSS || p->flavour == FL_RIVER) {
            attempt_failed(p, id, now_us); /* failed (pg-boss) / retryable (River), or discarded */
        } else if (j->attempts >= p->max_attempts) {
            /* Oban: discarded; graphile: the lock is cleared, but a row
             * whose attempts reached max_attempts is never fetched again
             * (is_available, sql/000011.sql) */
            row_finish(p, id, JOB_FAILED);
        } else { /* graphile: the lock is cleared; Oban: available */
            exec_del(p, id);
            jobs_update(&p->d->rows, id, JOB_PENDING, now_us);
        }
    }
}

/* --- the cron plugin --------------------------------------------------------------- */

static void cron_insert(struct policy *p, uint32_t h, int64_t fire, int64_t now_us)
{
    row_new(p, h, fire, UINT64_MAX, now_us);
    p->d->cron_last[h] = fire;
}

/* pg-boss sends a fire only while it is less than this old
 * (src/timekeeper.ts shouldSendIt(): prevDiff < 60 s). */
#define PGBOSS_CRON_GRACE_US (60 * US_PER_S)

/* A check at now: pg-boss sends the latest fire since the last one sent
 * if it is less than 60 s old; the others insert the fires since their
 * previous check (now - interval), and fires before it are gone (no
 * backfill). */
static void cron_check(struct policy *p, int64_t now_us)
{
    if (p->server_down || p->stopping)
        return;
    int64_t wake = SIM_NEVER;
    for (uint32_t h = 0; h < p->t->nh; h++) {
        if (is_consumer(p, h))
            continue;
        int64_t *last = &p->d->cron_last[h];
        int64_t t, latest = -1;
        while ((t = sim_sched_next(p->sim, h, *last, 0)) != SIM_NEVER && t <= now_us) {
            if (p->flavour != FL_PGBOSS && t > now_us - p->cron_us)
                cron_insert(p, h, t, now_us);
            else
                *last = t;
            latest = t;
        }
        if (p->flavour == FL_PGBOSS && latest >= 0 && p->d->cron_last[h] == latest &&
            now_us - latest < PGBOSS_CRON_GRACE_US)
            cron_insert(p, h, latest, now_us);
        if (t < wake)
            wake = t;
    }
    sim_ticker_arm(p->sim, p->cron_tick, wake);
}

/* River: a periodic job is inserted at its time; one missed while the
 * leader was away is not. */
static void cron_exact(struct policy *p, uint32_t h, int64_t now_us)
{
    int64_t *last = &p->d->cron_last[h];
    int64_t t;
    while ((t = sim_sched_next(p->sim, h, *last, 0)) != SIM_NEVER && t <= now_us) {
        if (t == now_us)
            cron_insert(p, h, t, now_us);
        else
            *last = t;
    }
    sim_alarm(p->sim, p->cron_alarm[h], t);
}

static void cron_run(struct policy *p, int64_t now_us)
{
    if (p->cron_us > 0) {
        cron_check(p, now_us);
        return;
    }
    if (p->server_down || p->stopping)
        return;
    for (uint32_t h = 0; h < p->t->nh; h++)
        if (!is_consumer(p, h))
            cron_exact(p, h, now_us);
}

/* Items published while the host was down are rows too. */
static void insert_items(struct policy *p, int64_t now_us)
{
    uint64_t n = sim_item_count(p->sim);
    for (uint64_t i = p->d->seen; i < n; i++) {
        const struct sim_item *it = sim_item(p->sim, i);
        if (it->state == ITEM_PENDING)
            row_new(p, it->consumer, -1, i, now_us);
    }
    p->d->seen = n;
}

/* After every hook: idle workers take what they can (a NOTIFY, or a
 * fetch after a job), then the loops are armed. */
static void settle(struct policy *p, int64_t now_us, int notified)
{
    if (notified && p->notify) {
        wake_resting(p);
        fetch(p, now_us);
    }
    arm_poll(p, now_us);
    arm_sweep(p);
}

/* --- hooks ------------------------------------------------------------------------ */

static int64_t flavour_dur(const struct params *ps, const char *key, int64_t dflt)
{
    int64_t v = params_get(ps, key);
    return v ? v : dflt;
}

static struct policy *pq_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct policy *p = xcalloc(1, sizeof *p);
    p->sim = sim;
    p->d = durable;
    p->t = sim_topo(sim);
    p->flavour = (int)params_get(ps, "flavour");
    const struct flavour *fl = &flavours[p->flavour];
    int64_t workers = params_get(ps, "workers");
    p->nworkers = workers ? (uint32_t)workers : fl->workers;
    sim_declare_pool(sim, p->nworkers); /* its idle workers may all poll at one instant */
    p->poll_us = flavour_dur(ps, "poll_interval", fl->poll_us);
    int notify = (int)params_get(ps, "notify");
    p->notify = notify == NOTIFY_FLAVOUR ? fl->notify : notify == NOTIFY_ON;
    int after = (int)params_get(ps, "fetch_after_job");
    p->after = after == AFTER_FLAVOUR ? fl->after : after;
    p->rescue_us = flavour_dur(ps, "rescue_after", fl->rescue_us);
    p->sweep_us = flavour_dur(ps, "sweep_interval", fl->sweep_us);
    int sw = (int)params_get(ps, "sweep");
    p->sweep_on = sw == SWEEP_FLAVOUR ? fl->sweep : sw == SWEEP_ON;
    int64_t to = params_get(ps, "job_timeout_seconds");
    if (to == 0)
        p->timeout_us = fl->timeout_us == TIMEOUT_EXPIRE ? p->rescue_us : fl->timeout_us;
    else
        p->timeout_us = to < 0 ? TIMEOUT_NONE : to * US_PER_S;
    /* River (client.go): RescueStuckJobsAfter defaults to JobTimeout + 1 h
     * when JobTimeout is set above 0, to 1 h otherwise */
    if (p->flavour == FL_RIVER && params_get(ps, "rescue_after") == 0 && to > 0)
        p->rescue_us = p->timeout_us + US_PER_H;
    int hc = (int)params_get(ps, "handler_cancel");
    p->honours = hc == CANCEL_FLAVOUR ? p->flavour == FL_RIVER : hc == CANCEL_HONOURS;
    int untimed = (int)params_get(ps, "rescue_untimed");
    if (p->timeout_us == TIMEOUT_NONE &&
        (untimed == UNTIMED_NO || (untimed == UNTIMED_FLAVOUR && p->flavour == FL_RIVER)))
        p->sweep_on = 0; /* River: a job without a timeout is never rescued */
    int curve = (int)params_get(ps, "retry_curve");
    p->curve = curve == RC_FLAVOUR ? fl->curve : curve;
    p->retry_delay_us = params_get(ps, "retry_delay");
    int64_t ma = params_get(ps, "max_attempts");
    p->max_attempts = ma ? (uint32_t)ma : fl->max_attempts;
    p->cron_us = flavour_dur(ps, "cron_interval", fl->cron_us);

    p->w = xcalloc(p->nworkers, sizeof *p->w);
    sim_declare_worker_rows(sim, p->w, sizeof *p->w, p->nworkers);
    idxset_init(&p->idle, p->nworkers);
    idxset_init(&p->rest, p->nworkers);
    p->cron_alarm = xcalloc(p->t->nh + 1, sizeof *p->cron_alarm);
    for (uint32_t h = 0; h < p->t->nh; h++)
        p->cron_alarm[h] = is_consumer(p, h) ? -1 : sim_alarm_new(sim, T_CRONAT, h);
    struct pq_durable *d = p->d;
    if (!d->init) {
        d->init = 1;
        jobs_init(&d->rows, sim_durable_realloc, sim);
        jobs_set_extra(&d->rows, sizeof(struct pq_row));
        d->cron_last = sim_dalloc(sim, (p->t->nh + 1) * sizeof *d->cron_last);
        for (uint32_t h = 0; h < p->t->nh; h++)
            d->cron_last[h] = -1;
    }
    sim_declare_rows(sim, d->cron_last, sizeof *d->cron_last);
    sim_declare_run_rows(sim, &d->rows);
    sim_declare_rows(sim, p->cron_alarm, sizeof *p->cron_alarm);
    sim_declare_handler_tag(sim, T_CRONAT);
    return p;
}

static void pq_destroy(struct policy *p)
{
    free(p->w);
    idxset_free(&p->idle);
    idxset_free(&p->rest);
    free(p->cron_alarm);
    free(p);
}

static void pq_start(struct policy *p, int restart, int64_t now_us)
{
    idxset_clear(&p->idle);
    idxset_clear(&p->rest);
    for (uint32_t k = 0; k < p->nworkers; k++) {
        p->w[k] = (struct worker){.state = W_DOWN};
        worker_set(p, k, W_IDLE);
    }
    p->poll_tick = sim_ticker_new(p->sim, p->poll_us, T_POLL);
    p->sweep_tick = sim_ticker_new(p->sim, p->sweep_us, T_SWEEP);
    if (p->cron_us > 0)
        p->cron_tick = sim_ticker_new(p->sim, p->cron_us, T_CRON);
    if (!restart) /* a fire at the very start is inserted at the first check */
        for (uint32_t h = 0; h < p->t->nh; h++)
            if (!is_consumer(p, h) && sim_sched_next(p->sim, h, 0, 1) == 0)
                cron_insert(p, h, 0, now_us);
    insert_items(p, now_us);
    cron_run(p, now_us);
    fetch(p, now_us); /* the workers' first fetch */
    settle(p, now_us, 0);
}

static void pq_on_publish(struct policy *p, uint32_t h, uint64_t item, int64_t now_us)
{
    insert_items(p, now_us);
    settle(p, now_us, 1);
}

static void pq_on_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now_us)
{
    int notified = 0;
    switch (tag) {
    case T_POLL:
        fetch(p, now_us);
        break;
    case T_SWEEP:
        sweep(p, now_us);
        notified = p->flavour == FL_OBAN; /* the Lifeline's rescued rows are staged and notified */
        break;
    case T_CRON:
        cron_check(p, now_us);
        notified = 1;
        break;
    case T_CRONAT:
        if (!p->server_down && !p->stopping)
            cron_exact(p, (uint32_t)arg, now_us);
        notified = 1;
        break;
    case T_TIMEOUT: {
        struct worker *w = &p->w[arg];
        w->timeout = 0;
        if (w->state != W_BUSY)
            break;
        uint64_t id = w->row;
        if (p->flavour == FL_RIVER && !p->honours) {
            /* River waits for Work to return: the slot stays taken, the row executing */
            sim_note(p->sim, w->handler, "job timeout: context cancelled, handler runs on");
            break;
        }
        if (p->honours) { /* the handler stops at its signal: the job returns an error */
            sim_run_cancel(p->sim, w->run);
        } else { /* pg-boss: the handler is abandoned and runs on; the worker takes the next job */
            sim_note(p->sim, w->handler, "handler expired: abandoned");
        }
        const struct job *j = jobs_find(&p->d->rows, id); /* NULL: finished meanwhile */
        if (j && j->status == JOB_RUNNING)
            attempt_failed(p, id, now_us);
        worker_done(p, (uint32_t)arg, now_us);
        break;
    }
    case T_REST:
        p->w[arg].rest = 0;
        if (p->w[arg].state == W_REST) {
            worker_set(p, (uint32_t)arg, W_IDLE);
            fetch(p, now_us);
        }
        break;
    default:
        SIM_ASSERT(0 && "unknown timer tag");
    }
    settle(p, now_us, notified);
}

static void pq_on_run_end(struct policy *p, const struct run_result *r, int64_t now_us)
{
    SIM_ASSERT(r->worker >= 1 && r->worker <= p->nworkers);
    uint32_t k = r->worker - 1;
    struct worker *w = &p->w[k];
    uint64_t id = r->tag;
    struct job *j = jobs_find(&p->d->rows, id); /* NULL: finished (completed or discarded) */
    int live = j && (j->status == JOB_PENDING || j->status == JOB_RUNNING);
    int own = w->state == W_BUSY && w->run == r->run; /* its worker still waits for it */
    if (p->flavour == FL_PGBOSS) {
        /* An abandoned handler's result is dropped (the worker stopped
         * waiting for it); complete() touches only an active row, fail()
         * any row not yet finished. */
        if (own && r->outcome == OUT_COMMITTED && live && j->status == JOB_RUNNING)
            row_finish(p, id, JOB_COMPLETED);
        else if (own && r->outcome == OUT_FAILED && live)
            attempt_failed(p, id, now_us);
    } else if (r->outcome == OUT_COMMITTED && live) {
        /* the job's completion is written whichever attempt it came from */
        row_finish(p, id, JOB_COMPLETED);
    } else if (r->outcome == OUT_FAILED && live && j->status == JOB_RUNNING && j->run == r->run) {
        attempt_failed(p, id, now_us);
    }
    if (own)
        worker_done(p, k, now_us);
    settle(p, now_us, 0);
}

static void pq_on_part(struct policy *p, int target, uint32_t index, int up, int64_t now_us)
{
    if (target == CRASH_SERVER) {
        p->server_down = !up;
        if (up) {
            cron_run(p, now_us);
            sweep(p, now_us);
            fetch(p, now_us);
        }
    } else if (target == CRASH_WORKER || target == CRASH_WORKERS) {
        for (uint32_t k = 0; k < p->nworkers; k++) {
            if (target == CRASH_WORKER && k != index)
                continue;
            struct worker *w = &p->w[k];
            if (!up && w->state != W_DOWN) {
                sim_timer_cancel(p->sim, w->timeout); /* its run died; its row stays executing */
                w->timeout = 0;
                w->run = 0;
                worker_set(p, k, W_DOWN);
            } else if (up && w->state == W_DOWN) {
                worker_set(p, k, W_IDLE);
            }
        }
        fetch(p, now_us);
    }
    settle(p, now_us, 0);
}

static void pq_on_stop(struct policy *p, int64_t now_us) { p->stopping = 1; }

const struct policy_ops policy_pgqueue = {
    .abi = POLICY_ABI,
    .name = "pgqueue",
    .summary = "a Postgres SKIP LOCKED job queue: workers, stuck-job sweep, retry curves, polling or "
               "LISTEN/NOTIFY, cron plugin; flavours pgboss, graphile, river, oban",
    .seeds = "pg-boss, graphile-worker, River and Oban documentation and source",
    .params = pq_params,
    .nparams = (int)(sizeof pq_params / sizeof pq_params[0]),
    .durable_size = sizeof(struct pq_durable),
    .promise = PROMISE_UNIT, /* a job run by two workers at once breaks it */
    .items_volatile = 0,
    .create = pq_create,
    .destroy = pq_destroy,
    .start = pq_start,
    .on_publish = pq_on_publish,
    .on_timer = pq_on_timer,
    .on_run_end = pq_on_run_end,
    .on_trigger = NULL,
    .on_part = pq_on_part,
    .on_horizon = NULL,
    .on_stop = pq_on_stop,
};
