/* quartz.c: the Quartz scheduler (Java) with its RAM or JDBC job store:
 * triggers, a thread pool, misfires and their instructions,
 * @DisallowConcurrentExecution and the cluster's check-in fail-over.  docs/policy-quartz.md has the rules
 * with their sources; this comment is the map.
 *
 * Mapping.  Each producer instance is a JobDetail with one trigger: a
 * CronTrigger for a cron schedule, a SimpleTrigger repeating forever for
 * `every`, a one-shot SimpleTrigger for `at`.  A consumer is a job that
 * takes its pending events, scheduled by a one-shot trigger when events
 * arrive (keyed by the consumer: one at a time).  The host is the whole
 * installation over a durable database; `crash worker N` is cluster node N
 * (clustered=true), `crash server` the database.
 *
 * Firing.  Whenever a thread of an up node is free, the earliest WAITING
 * trigger with nextFireTime <= now fires on the node with the most free
 * threads, unless it is misfired: later than misfire_threshold and not
 * IGNORE_MISFIRE_POLICY; with the RAM store a misfired trigger gets its
 * instruction as it is acquired; with the JDBC store it waits for the misfire handler,
 * which runs every misfire_threshold (every 50 ms while more than 20 wait)
 * and applies the instruction (smart, fire_now, fire_once_now, do_nothing,
 * ignore; per trigger type, table in the docs).  Firing advances
 * nextFireTime by one fire (cron: the next cron time after the scheduled
 * one) and starts the job on the thread; the run serves the nominal due of
 * its scheduled time.  With disallow_concurrent the trigger is BLOCKED
 * while its job runs and WAITING again when it completes.
 *
 * RAM store: a start registers every trigger afresh (nothing survived).
 * Recovery (JDBC).  At a start (recoverJobs) or when a node is found dead (a live
 * node's check-in finds its last check-in older than interval + 7.5 s),
 * its fired-trigger rows are recovered: a job with requests_recovery runs
 * again at once (a one-shot trigger that never misfires, serving the same
 * due), the others are dropped, and BLOCKED triggers become WAITING.  At a
 * start every misfired trigger is handled at once.
 *
 * Key invariant: a trigger row is WAITING (PENDING, indexed at its
 * nextFireTime), BLOCKED or held for the misfire handler (SLEEPING, its
 * time in tx[].next) or COMPLETE; a fired-trigger row exists exactly while
 * its run is active (or was, when its node died), fired_at maps its run to
 * it, and busy[node] counts the active runs of the node.
 *
 * Durable: triggers (a fired one-shot's row is forgotten with its
 * fired-trigger row: trig_done), fired-trigger rows, check-in times (the
 * QRTZ_ tables).
 * Volatile: nodes' threads and loops; the index of fired-trigger rows by
 * run (rebuilt from the rows at create).
 *
 * Costs.  Per event: O(nodes) to find a free thread (busy counts), O(1) to
 * find a run's fired-trigger row, O(log triggers) in the time index.  Walks
 * over all rows: at a start and when a node is recovered. */
#include <stdlib.h>
#include <string.h>

#include "sim/cal.h"
#include "sim/idmap.h"
#include "sim/jobs.h"
#include "sim/policy_api.h"
#include "sim/util.h"

enum { T_FIRE = 1, T_MISFIRE, T_MISFIRE_MORE, T_CHECKIN }; /* T_CHECKIN + k: node k's check-in loop */
enum { TK_CRON, TK_EVERY, TK_ONCE, TK_CONSUMER, TK_RECOVERY };
enum { MI_SMART, MI_FIRE_NOW, MI_FIRE_ONCE_NOW, MI_DO_NOTHING, MI_IGNORE };

#define NONE UINT64_MAX
#define MISFIRE_BATCH_GAP_US (50 * US_PER_MS)

struct qz_trig {                   /* side data of a trigger row (its extra bytes) */
    uint8_t kind;                  /* TK_* */
    uint8_t ignore;                /* never misfires */
    uint8_t blocked, held;         /* SLEEPING: BLOCKED, or misfired and waiting for the handler */
    uint8_t paused;                /* SLEEPING: PAUSED (PAUSED_BLOCKED with blocked) */
    int64_t next;                  /* nextFireTime while SLEEPING */
    int64_t floor;                 /* producers: the last resume or reschedule; a fire before it serves no due */
    int64_t anchor;                /* TK_EVERY: the grid's origin (fire_now shifts it) */
    int64_t due;                   /* TK_RECOVERY: the due the recovered run served */
};

struct qz_fired {                  /* QRTZ_FIRED_TRIGGERS */
    uint64_t run, trig;
    uint32_t node;
};

struct qz_durable {
    int init;
    struct jobtab trig;            /* available_us = nextFireTime while WAITING; extra: qz_trig */
    uint64_t *own;                 /* [nh] producer: its trigger; consumer: its live one-shot, NONE */
    struct qz_fired *fired;
    size_t nfired, fired_cap;
    uint64_t *held;                /* misfired triggers, in the order found: [held_head, nheld) */
    size_t nheld, held_cap, held_head;
    int64_t *checkin;              /* [nodes] LAST_CHECKIN_TIME, -1 none */
    uint8_t *dead;                 /* [nodes] down and not yet recovered by a live node */
};

struct policy {
    struct sim *sim;
    struct qz_durable *d;
    const struct sim_topo *t;

    int64_t thr_us, checkin_us, margin_us;
    int instr, disallow, clustered, recovery;
    int ram;                       /* RAMJobStore: misfires at acquisition, nothing outlives the host */
    uint32_t threads, nodes, max_misfires;

    struct sim_sched_opts opts;    /* cron read as Quartz's CronExpression does (CAL_DST_QUARTZ) */
    uint32_t *busy;                /* [nodes] active runs */
    struct idwin fired_at;         /* run -> its fired-trigger row's index (rebuilt at create) */
    uint8_t *up;                   /* [nodes] */
    int64_t *node_start;           /* [nodes] */
    int *node_tick;                /* [nodes] check-in tickers, -1 none */
    uint8_t *more;                 /* [nh] consumers: an event came while their job ran */
    int fire_alarm;
    int misfire_tick;              /* the misfire handler's loop, every misfire_threshold */
    sim_timer misfire_more;        /* another pass 50 ms later, while more than max wait */
    int server_down, stopping;
    int64_t db_retry_us;           /* dbRetryInterval */
    int64_t down_at;               /* the database's outage began */
    int64_t acq_resume;            /* the scheduler thread's first acquisition after an outage */
};

enum { STORE_RAM, STORE_JDBC };

static const struct param_def qz_params[] = {
    {"job_store", PARAM_ENUM, "ram", "ram|jdbc", 0, 0,
     "org.quartz.jobStore.class = org.quartz.simpl.RAMJobStore (the bundled quartz.properties; "
     "StdSchedulerFactory's default); jdbc: JobStoreTX over the QRTZ_ tables",
     "ram: a misfire is handled when the trigger is acquired, triggers live in memory and are "
     "registered afresh at a start; jdbc: the misfire handler's passes, durable tables, recovery "
     "(clustered=true implies jdbc)"},
    {"misfire_threshold", PARAM_DURATION, "60s", NULL, US_PER_MS, US_PER_DAY,
     "org.quartz.jobStore.misfireThreshold: 60000 ms (JobStoreSupport; quartz.properties)",
     "a trigger later than this is misfired, and its instruction decides; also the misfire handler's period"},
    {"misfire_instruction", PARAM_ENUM, "smart", "smart|fire_now|fire_once_now|do_nothing|ignore", 0, 0,
     "Trigger.MISFIRE_INSTRUCTION_SMART_POLICY (default); CronTriggerImpl / SimpleTriggerImpl updateAfterMisfire",
     "what a misfired trigger does (per trigger type: see docs/policy-quartz.md)"},
    {"disallow_concurrent", PARAM_BOOL, "false", NULL, 0, 1,
     "@DisallowConcurrentExecution (absent by default); JobStoreSupport.triggerFired / triggeredJobComplete",
     "at most one execution of a job at a time: its trigger is BLOCKED while it runs"},
    {"thread_count", PARAM_INT, "10", NULL, 1, 1000000, "org.quartz.threadPool.threadCount = 10 (quartz.properties)",
     "worker threads per node; a due trigger waits for a free one"},
    {"max_misfires_per_pass", PARAM_INT, "20", NULL, 1, 1000000,
     "org.quartz.jobStore.maxMisfiresToHandleAtATime = 20 (JobStoreSupport)",
     "misfired triggers one handler pass updates; more: another pass 50 ms later"},
    {"clustered", PARAM_BOOL, "false", NULL, 0, 1, "org.quartz.jobStore.isClustered (default false; JDBC stores only)",
     "several nodes share the tables (the JDBC store); crash worker N takes node N down"},
    {"nodes", PARAM_INT, "2", NULL, 1, 64, "simrun: the cluster's size (clustered=true)",
     "scheduler nodes, each with thread_count threads"},
    {"checkin_interval", PARAM_DURATION, "7500ms", NULL, US_PER_MS, US_PER_DAY,
     "org.quartz.jobStore.clusterCheckinInterval: 7500 ms in JobStoreSupport (the docs' table says 15000)",
     "how often a node writes its check-in and looks for failed nodes"},
    {"checkin_margin", PARAM_DURATION, "7500ms", NULL, 0, US_PER_DAY,
     "JobStoreSupport.calcFailedIfAfter: last check-in + max(interval, since own check-in) + 7500 ms",
     "a node is declared failed when its last check-in is older than its interval plus this"},
    {"db_retry_interval", PARAM_DURATION, "15s", NULL, US_PER_MS, US_PER_DAY,
     "JobStoreSupport.dbRetryInterval = 15000L; getAcquireRetryDelay; QuartzSchedulerThread.run "
     "(computeDelayForRepeatedErrors)",
     "JDBC: after a database error the scheduler thread retries acquiring every this long"},
    {"requests_recovery", PARAM_BOOL, "false", NULL, 0, 1, "JobDetail.requestsRecovery (default false)",
     "a job whose node died while running it runs again at once when the node is recovered"},
};

/* --- triggers ---------------------------------------------------------------------- */

static int is_prod(const struct policy *p, uint32_t h) { return p->t->h_kind[h] == H_PRODUCER; }

static struct qz_trig *tx(struct policy *p, uint64_t id) { return jobs_extra(&p->d->trig, id); }

/* The schedule's first time > after_us (>= with inclusive), its cron read by
 * CronExpression.getTimeAfter's rule at DST changes. */
static int64_t sched_next(const struct policy *p, uint32_t h, int64_t after_us, int inclusive)
{
    return sim_sched_next_opt(p->sim, h, after_us, inclusive, &p->opts);
}

static uint8_t sched_kind(const struct sim_sched_info *si)
{
    return si->kind == SIM_SCHED_CRON ? TK_CRON : si->kind == SIM_SCHED_EVERY ? TK_EVERY : TK_ONCE;
}

static uint64_t trig_new(struct policy *p, uint32_t h, uint8_t kind, int64_t next)
{
    struct qz_durable *d = p->d;
    struct job j = {.handler = h, .status = next == SIM_NEVER ? JOB_COMPLETED : JOB_PENDING,
                    .available_us = next, .due_us = -1, .item = UINT64_MAX};
    uint64_t id = jobs_add(&d->trig, &j);
    *tx(p, id) = (struct qz_trig){.kind = kind, .ignore = kind >= TK_CONSUMER || p->instr == MI_IGNORE,
                                  .next = next, .floor = -1, .due = -1};
    return id;
}

/* A consumer's or a recovery's one-shot trigger is COMPLETE once it fired,
 * and Quartz deletes it then; its row is forgotten once its fired-trigger
 * row is gone too (the run's end and recovery read it), so that memory
 * follows the triggers in play, not every event batch ever scheduled. */
static void trig_done(struct policy *p, uint64_t id)
{
    const struct job *j = jobs_find(&p->d->trig, id);
    if (j && j->status == JOB_COMPLETED && tx(p, id)->kind >= TK_CONSUMER)
        jobs_forget(&p->d->trig, id);
}

static void trig_wait(struct policy *p, uint64_t id, int64_t next)
{
    struct qz_trig *x = tx(p, id);
    x->blocked = x->held = 0;
    x->next = next;
    jobs_update(&p->d->trig, id, next == SIM_NEVER ? JOB_COMPLETED : JOB_PENDING, next);
}

static void trig_sleep(struct policy *p, uint64_t id, int64_t next, int held)
{
    struct qz_trig *x = tx(p, id);
    x->next = next;
    x->held = (uint8_t)held;
    x->blocked = (uint8_t)!held;
    jobs_update(&p->d->trig, id, JOB_SLEEPING, SIM_NEVER);
}

/* The job of a BLOCKED trigger completed (or its run was recovered): it
 * waits again, or stays PAUSED if it was paused meanwhile. */
static void unblock(struct policy *p, uint64_t id)
{
    struct qz_trig *x = tx(p, id);
    x->blocked = 0;
    if (!x->paused)
        trig_wait(p, id, x->next);
}

/* The fire after a trigger's scheduled time f (trigger.triggered()). */
static int64_t fire_after(struct policy *p, uint64_t id, int64_t f)
{
    struct qz_trig *x = tx(p, id);
    uint32_t h = jobs_get(&p->d->trig, id)->handler;
    struct sim_sched_info si;
    switch (x->kind) {
    case TK_CRON:
        return sched_next(p, h, f, 0);
    case TK_EVERY: {
        sim_sched_info(p->sim, h, &si);
        if (si.kind != SIM_SCHED_EVERY || x->anchor == SIM_NEVER)
            return sched_next(p, h, f, 0); /* changed while it fired, or rescheduled while disabled */
        int64_t k = (f - x->anchor) / si.every_us + 1;
        int64_t n = x->anchor + k * si.every_us;
        return n < sim_horizon(p->sim) ? n : SIM_NEVER;
    }
    default:
        return SIM_NEVER; /* one-shots */
    }
}

/* updateAfterMisfire at now: the trigger's new nextFireTime (SIM_NEVER:
 * complete). */
static int64_t after_misfire(struct policy *p, uint64_t id, int64_t now_us)
{
    struct qz_trig *x = tx(p, id);
    uint32_t h = jobs_get(&p->d->trig, id)->handler;
    int now_kind = p->instr == MI_FIRE_NOW || p->instr == MI_FIRE_ONCE_NOW;
    switch (x->kind) {
    case TK_CRON: /* smart = FIRE_ONCE_NOW */
        return p->instr == MI_DO_NOTHING ? sched_next(p, h, now_us, 0) : now_us;
    case TK_EVERY:
        if (now_kind) { /* RESCHEDULE_NOW_WITH_REMAINING_REPEAT_COUNT: the series starts over now */
            x->anchor = now_us;
            return now_us;
        }
        /* smart and do_nothing: RESCHEDULE_NEXT_WITH_REMAINING_COUNT, the grid's next time */
        return fire_after(p, id, now_us);
    case TK_ONCE: /* smart = FIRE_NOW; do_nothing: nothing remains */
        return p->instr == MI_DO_NOTHING ? SIM_NEVER : now_us;
    default:
        return now_us;
    }
}

/* pauseTrigger: the trigger keeps its nextFireTime, PAUSED (out of the
 * misfire handler's list too; PAUSED_BLOCKED while its job runs). */
static void pause_trig(struct policy *p, uint64_t id)
{
    struct qz_trig *x = tx(p, id);
    const struct job *j = jobs_get(&p->d->trig, id);
    int64_t next = j->status == JOB_SLEEPING ? x->next : j->available_us;
    x->held = 0;
    x->paused = 1;
    x->next = next;
    jobs_update(&p->d->trig, id, JOB_SLEEPING, SIM_NEVER);
}

/* resumeTrigger (JobStoreSupport.resumeTrigger, RAMJobStore.resumeTrigger):
 * the kept nextFireTime; if it is past by misfire_threshold or more, the
 * misfire instruction applies now (updateMisfiredTrigger / applyMisfire;
 * not under `ignore`), otherwise the trigger waits and fires late.  A
 * trigger whose job still runs stays BLOCKED. */
static void resume_trig(struct policy *p, uint64_t id, int64_t now_us)
{
    struct qz_trig *x = tx(p, id);
    x->paused = 0;
    x->floor = now_us;
    if (x->next == SIM_NEVER && x->anchor == SIM_NEVER) {
        /* rescheduled while paused: its first time from now */
        x->next = x->anchor = sched_next(p, jobs_get(&p->d->trig, id)->handler, now_us, 1);
    }
    if (x->blocked)
        return;
    int64_t next = x->next;
    if (next != SIM_NEVER && !x->ignore && next <= now_us - p->thr_us)
        next = after_misfire(p, id, now_us);
    trig_wait(p, id, next);
}

/* --- firing ------------------------------------------------------------------------ */

static int free_node(const struct policy *p)
{
    int best = -1;
    for (uint32_t k = 0; k < p->nodes; k++)
        if (p->up[k] && p->busy[k] < p->threads && (best < 0 || p->busy[k] < p->busy[best]))
            best = (int)k;
    return best;
}

static void fired_add(struct policy *p, uint64_t run, uint64_t trig, uint32_t node)
{
    struct qz_durable *d = p->d;
    d->fired = sim_dgrow(p->sim, d->fired, sizeof *d->fired, &d->fired_cap, d->nfired + 1);
    idwin_put(&p->fired_at, run, (uint32_t)d->nfired);
    d->fired[d->nfired++] = (struct qz_fired){.run = run, .trig = trig, .node = node};
    sim_run_hold(p->sim, run); /* the row names it until it goes (recovery reads it) */
}

/* triggerFired and the job's start on a thread of node k. */
static void fire(struct policy *p, uint64_t id, uint32_t k, int64_t now_us)
{
    struct qz_trig *x = tx(p, id);
    struct job *j = jobs_get(&p->d->trig, id);
    uint32_t h = j->handler;
    int64_t sched = j->available_us;
    struct run_req rq = RUN_REQ_INIT;
    rq.handler = h;
    rq.worker = k + 1;
    rq.tag = id;
    if (x->kind == TK_CONSUMER) {
        rq.reason = REASON_EVENT;
        p->d->own[h] = NONE;
    } else if (x->kind == TK_RECOVERY) {
        rq.reason = REASON_RECOVER;
        rq.due_us = x->due;
    } else {
        /* a time missed while the trigger was paused (or before it was
         * rescheduled) is no due of the schedule: the run serves none */
        rq.reason = REASON_SCHEDULE;
        rq.due_us = sim_sched_prev(p->sim, h, sched);
        if (rq.due_us < x->floor)
            rq.due_us = -1;
    }
    int64_t next = fire_after(p, id, sched);
    if (p->disallow && x->kind <= TK_ONCE)
        trig_sleep(p, id, next, 0);
    else
        trig_wait(p, id, next);
    uint64_t run = sim_run_start(p->sim, &rq);
    if (!run) {
        trig_done(p, id);
        return;
    }
    p->busy[k]++;
    fired_add(p, run, id, k);
}

/* A misfired trigger waits for the handler (the acquire query skips it). */
static void hold(struct policy *p, uint64_t id, int64_t next)
{
    struct qz_durable *d = p->d;
    d->held = sim_dgrow(p->sim, d->held, sizeof *d->held, &d->held_cap, d->nheld + 1);
    d->held[d->nheld++] = id;
    trig_sleep(p, id, next, 1);
}

/* The misfire handler's loop wakes every misfire_threshold (each pass a
 * wake-up); it is delivered only when a pass can find work: triggers held
 * for it, or, with every thread busy, the first trigger that will be late
 * by the threshold if it is still waiting then. */
static void arm_misfire(struct policy *p, int64_t now_us)
{
    int64_t at = SIM_NEVER;
    if (p->ram) {
        /* RAMJobStore has no misfire handler */
    } else if (p->d->nheld > p->d->held_head) {
        at = now_us + 1;
    } else if (free_node(p) < 0) {
        uint64_t id = jobs_peek(&p->d->trig, &at); /* a SLEEPING top is at SIM_NEVER: none waits */
        at = id == NONE || at == SIM_NEVER || tx(p, id)->ignore ? SIM_NEVER : at + p->thr_us + 1;
    }
    sim_ticker_arm(p->sim, p->misfire_tick, p->server_down || p->stopping ? SIM_NEVER : at);
}

/* The scheduler threads: fire what is due while threads are free; misfired
 * triggers go to the handler; then an alarm at the next fire time. */
static void fire_ready(struct policy *p, int64_t now_us)
{
    if (p->server_down || p->stopping) {
        arm_misfire(p, now_us);
        return;
    }
    if (now_us < p->acq_resume) {
        /* the scheduler thread sleeps out its retry delay; the misfire
         * handler keeps its own rhythm meanwhile */
        sim_alarm(p->sim, p->fire_alarm, p->acq_resume);
        sim_ticker_arm(p->sim, p->misfire_tick, now_us + 1);
        return;
    }
    int k;
    uint64_t id;
    while ((k = free_node(p)) >= 0 && (id = jobs_next_due(&p->d->trig, now_us)) != NONE) {
        struct job *j = jobs_get(&p->d->trig, id);
        if (!tx(p, id)->ignore && j->available_us < now_us - p->thr_us) {
            if (p->ram) /* RAMJobStore.acquireNextTriggers: applyMisfire, and look again */
                trig_wait(p, id, after_misfire(p, id, now_us));
            else
                hold(p, id, j->available_us);
            continue;
        }
        fire(p, id, (uint32_t)k, now_us);
    }
    /* with a free thread nothing due is left: the index's top is future */
    int64_t at = SIM_NEVER;
    if (free_node(p) < 0 || jobs_peek(&p->d->trig, &at) == NONE)
        at = SIM_NEVER;
    sim_alarm(p->sim, p->fire_alarm, at);
    arm_misfire(p, now_us);
}

/* One misfire-handler pass: triggers past the threshold (held, or late at
 * the top of the index) get their instruction, at most max (0: all). */
static size_t misfire_pass(struct policy *p, int64_t now_us, uint32_t max)
{
    struct qz_durable *d = p->d;
    uint64_t id;
    int64_t at;
    while ((id = jobs_peek(&d->trig, &at)) != NONE && at < now_us - p->thr_us && !tx(p, id)->ignore) {
        hold(p, id, at);
    }
    size_t n = 0;
    while (d->held_head < d->nheld && (max == 0 || n < max)) {
        uint64_t t = d->held[d->held_head++];
        n++;
        if (tx(p, t)->held)
            trig_wait(p, t, after_misfire(p, t, now_us));
    }
    /* The handled front goes once it is half the list: each pass costs what
     * it handles, not what is still held (thousands of triggers in a fleet). */
    if (d->held_head && d->held_head * 2 >= d->nheld) {
        memmove(d->held, d->held + d->held_head, (d->nheld - d->held_head) * sizeof *d->held);
        d->nheld -= d->held_head;
        d->held_head = 0;
    }
    return d->nheld - d->held_head;
}

static void misfire_tick(struct policy *p, int64_t now_us)
{
    if (p->server_down || p->stopping)
        return;
    sim_timer_cancel(p->sim, p->misfire_more);
    p->misfire_more = 0;
    if (misfire_pass(p, now_us, p->max_misfires))
        p->misfire_more = sim_timer_at(p->sim, now_us + MISFIRE_BATCH_GAP_US, T_MISFIRE_MORE, 0);
    fire_ready(p, now_us);
}

/* --- consumers ------------------------------------------------------------------------ */

/* A one-shot trigger for consumer h at `at`, unless it has one or its job
 * runs (then it is scheduled again when the job completes). */
static void consumer_schedule(struct policy *p, uint32_t h, int64_t at)
{
    if (p->d->own[h] != NONE || sim_active_runs(p->sim, h)) {
        p->more[h] = 1;
        return;
    }
    p->d->own[h] = trig_new(p, h, TK_CONSUMER, at);
}

/* --- recovery ---------------------------------------------------------------------------- */

/* Row i goes; the last row takes its place (recovery walks the rows in
 * this order, so it is part of the results). */
static void fired_remove(struct policy *p, size_t i)
{
    struct qz_durable *d = p->d;
    sim_run_release(p->sim, d->fired[i].run);
    idwin_del(&p->fired_at, d->fired[i].run);
    d->fired[i] = d->fired[--d->nfired];
    if (i < d->nfired) {
        idwin_del(&p->fired_at, d->fired[i].run);
        idwin_put(&p->fired_at, d->fired[i].run, (uint32_t)i);
    }
}

/* The fired-trigger row i belongs to a dead node: re-run (requests
 * recovery) or drop; a BLOCKED trigger is released. */
static void recover_row(struct policy *p, size_t i, int64_t now_us)
{
    struct qz_fired f = p->d->fired[i];
    struct sim_run_info ri;
    sim_run_get(p->sim, f.run, &ri);
    fired_remove(p, i);
    struct qz_trig *x = tx(p, f.trig);
    if (x->blocked)
        unblock(p, f.trig);
    if (p->recovery && x->kind != TK_CONSUMER && x->kind != TK_RECOVERY) {
        uint64_t r = trig_new(p, ri.handler, TK_RECOVERY, now_us);
        tx(p, r)->due = ri.due_us;
    }
    trig_done(p, f.trig);
}

/* clusterRecover of node k (k < 0: every node, as recoverJobs at a start). */
static void recover_node(struct policy *p, int k, int64_t now_us)
{
    for (size_t i = 0; i < p->d->nfired;) {
        if (k < 0 || p->d->fired[i].node == (uint32_t)k)
            recover_row(p, i, now_us); /* row i is replaced by the last one */
        else
            i++;
    }
    if (k >= 0)
        p->d->dead[k] = 0;
}

/* The instant after which a dead node counts as failed
 * (calcFailedIfAfter, with every node on the same interval). */
static int64_t failed_after(const struct policy *p, uint32_t j)
{
    return p->d->checkin[j] + p->checkin_us + p->margin_us;
}

/* Every live node's check-in loop is armed for the first dead node it can
 * declare failed (a tick in between only writes its own time). */
static void arm_checkins(struct policy *p)
{
    int64_t wait = SIM_NEVER;
    for (uint32_t j = 0; j < p->nodes; j++)
        if (p->d->dead[j] && failed_after(p, j) + 1 < wait)
            wait = failed_after(p, j) + 1;
    for (uint32_t k = 0; k < p->nodes; k++)
        if (p->up[k] && p->node_tick[k] >= 0)
            sim_ticker_arm(p->sim, p->node_tick[k], p->server_down ? SIM_NEVER : wait);
}

/* A check-in of node k: dead nodes whose last check-in is old enough are
 * recovered by it. */
static void checkin(struct policy *p, uint32_t k, int64_t now_us)
{
    if (p->server_down || p->stopping)
        return;
    for (uint32_t j = 0; j < p->nodes; j++) {
        if (j != k && p->d->dead[j] && now_us > failed_after(p, j)) {
            sim_note(p->sim, -1, "node %u failed: recovering its fired triggers", j);
            recover_node(p, (int)j, now_us);
        }
    }
    arm_checkins(p);
    fire_ready(p, now_us);
}

/* --- hooks --------------------------------------------------------------------------- */

static struct policy *qz_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct policy *p = xcalloc(1, sizeof *p);
    p->sim = sim;
    p->d = durable;
    p->t = sim_topo(sim);
    p->thr_us = params_get(ps, "misfire_threshold");
    p->instr = (int)params_get(ps, "misfire_instruction");
    p->disallow = (int)params_get(ps, "disallow_concurrent");
    p->threads = (uint32_t)params_get(ps, "thread_count");
    p->max_misfires = (uint32_t)params_get(ps, "max_misfires_per_pass");
    p->clustered = (int)params_get(ps, "clustered");
    p->nodes = p->clustered ? (uint32_t)params_get(ps, "nodes") : 1;
    p->checkin_us = params_get(ps, "checkin_interval");
    p->margin_us = params_get(ps, "checkin_margin");
    p->recovery = (int)params_get(ps, "requests_recovery");
    p->db_retry_us = params_get(ps, "db_retry_interval");
    p->ram = params_get(ps, "job_store") == STORE_RAM && !p->clustered;
    p->opts.dst = CAL_DST_QUARTZ;
    p->busy = xcalloc(p->nodes, sizeof *p->busy);
    p->up = xcalloc(p->nodes, 1);
    p->node_start = xcalloc(p->nodes, sizeof *p->node_start);
    p->node_tick = xcalloc(p->nodes, sizeof *p->node_tick);
    p->more = xcalloc(p->t->nh + 1, 1);
    p->fire_alarm = sim_alarm_new(sim, T_FIRE, 0);
    idwin_init(&p->fired_at);

    struct qz_durable *d = p->d;
    for (size_t i = 0; i < d->nfired; i++) /* the rows that outlived a crash */
        idwin_put(&p->fired_at, d->fired[i].run, (uint32_t)i);
    if (!d->init) {
        d->init = 1;
        jobs_init(&d->trig, sim_durable_realloc, sim);
        jobs_set_extra(&d->trig, sizeof(struct qz_trig));
        d->own = sim_dalloc(sim, (p->t->nh + 1) * sizeof *d->own);
        d->checkin = sim_dalloc(sim, p->nodes * sizeof *d->checkin);
        d->dead = sim_dalloc(sim, p->nodes);
        for (uint32_t h = 0; h < p->t->nh; h++) {
            d->own[h] = NONE;
            if (!is_prod(p, h))
                continue;
            struct sim_sched_info si;
            sim_sched_info(sim, h, &si);
            int64_t first = sched_next(p, h, 0, 1);
            d->own[h] = trig_new(p, h, sched_kind(&si), first);
            tx(p, d->own[h])->anchor = first;
        }
    }
    sim_declare_rows(sim, d->own, sizeof *d->own);
    sim_declare_run_rows(sim, &d->trig);
    return p;
}

static void qz_destroy(struct policy *p)
{
    free(p->busy);
    free(p->up);
    free(p->node_start);
    free(p->node_tick);
    free(p->more);
    idwin_free(&p->fired_at);
    free(p);
}

static void node_up(struct policy *p, uint32_t k, int64_t now_us)
{
    p->up[k] = 1;
    p->busy[k] = 0;
    p->node_start[k] = now_us;
    p->node_tick[k] = p->clustered ? sim_ticker_new(p->sim, p->checkin_us, T_CHECKIN + k) : -1;
    p->d->checkin[k] = now_us; /* the first check-in, at the node's start */
}

/* A start with RAMJobStore: nothing of the last incarnation is left (no
 * fired-trigger rows, so no recovery); the application registers its jobs
 * again, each trigger with the schedule's first time from now (paused if
 * its schedule is disabled). */
static void ram_restart(struct policy *p, int64_t now_us)
{
    struct qz_durable *d = p->d;
    while (d->nfired)
        fired_remove(p, d->nfired - 1);
    d->nheld = d->held_head = 0;
    struct jobtab *trig = &d->trig;
    for (uint64_t id = jobs_next_kept(trig, 0); id < trig->n; id = jobs_next_kept(trig, id + 1))
        if (tx(p, id)->kind >= TK_CONSUMER) {
            jobs_update(trig, id, JOB_COMPLETED, SIM_NEVER);
            jobs_forget(trig, id);
        }
    for (uint32_t h = 0; h < p->t->nh; h++) {
        if (!is_prod(p, h)) {
            d->own[h] = NONE;
            p->more[h] = 0;
            continue;
        }
        uint64_t id = d->own[h];
        struct sim_sched_info si;
        sim_sched_info(p->sim, h, &si);
        struct qz_trig *x = tx(p, id);
        int64_t next = sched_next(p, h, now_us, 1);
        x->kind = sched_kind(&si);
        x->blocked = x->held = x->paused = 0;
        x->anchor = next;
        x->floor = now_us;
        trig_wait(p, id, next);
        if (si.disabled) {
            x->anchor = SIM_NEVER; /* resume_trig takes the first time from then */
            pause_trig(p, id);
        }
    }
}

/* recoverJobs at a start: every fired-trigger row is of a run that died,
 * BLOCKED triggers are released, and every misfire is handled at once. */
static void qz_start(struct policy *p, int restart, int64_t now_us)
{
    for (uint32_t k = 0; k < p->nodes; k++)
        node_up(p, k, now_us);
    if (restart && p->ram) {
        ram_restart(p, now_us);
        for (uint32_t h = 0; h < p->t->nh; h++)
            if (!is_prod(p, h) && sim_pending_count(p->sim, h))
                consumer_schedule(p, h, now_us);
    } else if (restart) {
        recover_node(p, -1, now_us);
        struct jobtab *trig = &p->d->trig;
        for (uint64_t id = jobs_next_kept(trig, 0); id < trig->n; id = jobs_next_kept(trig, id + 1))
            if (tx(p, id)->blocked)
                unblock(p, id);
        for (uint32_t h = 0; h < p->t->nh; h++)
            if (!is_prod(p, h) && p->d->own[h] == NONE && sim_pending_count(p->sim, h))
                consumer_schedule(p, h, now_us);
        misfire_pass(p, now_us, 0);
    }
    for (uint32_t k = 0; k < p->nodes; k++)
        p->d->dead[k] = 0;
    p->misfire_tick = sim_ticker_new(p->sim, p->thr_us, T_MISFIRE);
    fire_ready(p, now_us);
}

static void qz_on_publish(struct policy *p, uint32_t h, uint64_t item, int64_t now_us)
{
    consumer_schedule(p, h, now_us);
    fire_ready(p, now_us);
}

static void qz_on_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now_us)
{
    if (tag == T_FIRE) {
        fire_ready(p, now_us);
    } else if (tag == T_MISFIRE || tag == T_MISFIRE_MORE) {
        if (tag == T_MISFIRE_MORE)
            p->misfire_more = 0;
        misfire_tick(p, now_us);
    } else {
        SIM_ASSERT(tag >= T_CHECKIN && tag - T_CHECKIN < p->nodes);
        checkin(p, tag - T_CHECKIN, now_us);
    }
}

/* triggeredJobComplete: the fired row goes, a BLOCKED trigger waits again;
 * a consumer with more work is scheduled again. */
static void qz_on_run_end(struct policy *p, const struct run_result *r, int64_t now_us)
{
    struct qz_durable *d = p->d;
    uint32_t i = idwin_get(&p->fired_at, r->run);
    if (i == IDMAP_NONE)
        return; /* its row was recovered by another node meanwhile */
    struct qz_fired f = d->fired[i];
    fired_remove(p, i);
    if (f.node < p->nodes && p->busy[f.node])
        p->busy[f.node]--;
    struct qz_trig *x = tx(p, f.trig);
    if (x->blocked)
        unblock(p, f.trig);
    trig_done(p, f.trig);
    uint32_t h = r->handler;
    if (!is_prod(p, h)) {
        int again = p->more[h] || (r->outcome == OUT_COMMITTED && r->ntaken > 0);
        p->more[h] = 0;
        if (again && sim_pending_count(p->sim, h))
            consumer_schedule(p, h, now_us);
        else if (r->wake_us != SIM_NEVER)
            consumer_schedule(p, h, r->wake_us > now_us ? r->wake_us : now_us);
    }
    fire_ready(p, now_us);
}

/* disable, enable: pauseTrigger, resumeTrigger.  change: rescheduleJob,
 * the producer's trigger takes the schedule in force, from now (kept
 * PAUSED while disabled). */
static void qz_on_schedule_change(struct policy *p, uint32_t h, int64_t now_us)
{
    uint64_t id = p->d->own[h];
    if (id == NONE)
        return;
    struct sim_sched_info si;
    sim_sched_info(p->sim, h, &si);
    struct qz_trig *x = tx(p, id);
    if (si.disabled && !x->paused) {
        pause_trig(p, id);
    } else if (!si.disabled && x->paused) {
        resume_trig(p, id, now_us);
    } else {
        x->kind = sched_kind(&si);
        int64_t next = sched_next(p, h, now_us, 1);
        x->anchor = next;
        x->floor = now_us;
        if (jobs_get(&p->d->trig, id)->status == JOB_SLEEPING)
            x->next = next; /* released with the new time (none yet while paused: see resume_trig) */
        else
            trig_wait(p, id, next);
    }
    fire_ready(p, now_us);
}

static void qz_on_part(struct policy *p, int target, uint32_t index, int up, int64_t now_us)
{
    if (target == CRASH_SERVER && p->ram)
        return; /* no database */
    if (target == CRASH_SERVER) {
        p->server_down = !up;
        if (!up) {
            p->down_at = now_us;
            sim_alarm(p->sim, p->fire_alarm, SIM_NEVER);
            sim_timer_cancel(p->sim, p->misfire_more);
            p->misfire_more = 0;
            arm_misfire(p, now_us);
        } else {
            /* The scheduler thread's acquisitions failed from the outage's
             * start and were retried every dbRetryInterval; the misfire
             * handler's failed passes slept max(dbRetryInterval, threshold
             * - spanned): its next pass is at its next tick, not now. */
            int64_t k = (now_us - p->down_at + p->db_retry_us - 1) / p->db_retry_us;
            p->acq_resume = p->down_at + k * p->db_retry_us;
            fire_ready(p, now_us);
        }
        arm_checkins(p);
        return;
    }
    if (!p->clustered || (target != CRASH_WORKER && target != CRASH_WORKERS))
        return; /* one node: it is the host */
    for (uint32_t k = 0; k < p->nodes; k++) {
        if (target == CRASH_WORKER && k != index)
            continue;
        if (!up && p->up[k]) {
            /* its runs died with it; its last check-in is its last tick */
            int64_t since = now_us - p->node_start[k];
            p->d->checkin[k] = p->node_start[k] + since / p->checkin_us * p->checkin_us;
            p->up[k] = 0;
            p->busy[k] = 0;
            sim_ticker_stop(p->sim, p->node_tick[k]);
            p->node_tick[k] = -1;
            p->d->dead[k] = 1;
        } else if (up && !p->up[k]) {
            node_up(p, k, now_us);
            recover_node(p, (int)k, now_us); /* its first check-in finds its own old rows */
        }
    }
    arm_checkins(p);
    fire_ready(p, now_us);
}

static void qz_on_stop(struct policy *p, int64_t now_us) { p->stopping = 1; }

const struct policy_ops policy_quartz = {
    .abi = POLICY_ABI,
    .name = "quartz",
    .summary = "Quartz with its RAM or JDBC job store: thread pool, misfire threshold and instructions, "
               "DisallowConcurrentExecution, cluster check-in fail-over",
    .seeds = "quartz-scheduler.org configuration and tutorials; quartz-scheduler/quartz JobStoreSupport",
    .params = qz_params,
    .nparams = (int)(sizeof qz_params / sizeof qz_params[0]),
    .durable_size = sizeof(struct qz_durable),
    .promise = PROMISE_UNIT, /* one execution per fire: a recovered job running beside itself breaks it */
    .items_volatile = 0,
    .create = qz_create,
    .destroy = qz_destroy,
    .start = qz_start,
    .on_publish = qz_on_publish,
    .on_timer = qz_on_timer,
    .on_run_end = qz_on_run_end,
    .on_trigger = NULL,
    .on_part = qz_on_part,
    .on_horizon = NULL,
    .on_stop = qz_on_stop,
    .on_schedule_change = qz_on_schedule_change,
};
