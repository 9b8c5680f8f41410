/* interval.c: interval after completion, a check loop and persisted
 * schedule state (seed 003, herdctl PRD 6; spec section 4).
 *
 * Every handler is a schedule of its workflow instance (herdctl's agent):
 * a producer with `every D` is an interval schedule of D; a consumer is a
 * schedule with a work source (its pending items), run every
 * `consumer_interval`; cron and one-shot producers are skipped (cron is
 * PRD 9) unless `cron=run`.  A check loop wakes every `check_interval`
 * (1 s) and, in configuration order, starts each schedule whose next trigger
 * has come, unless the schedule is `running`, `disabled`, or its workflow
 * already has `max_concurrent` runs (then it stays due and waits for a later
 * check).  When a run ends, the next trigger is its completion + the
 * interval (+ jitter); the first trigger is immediate.  A consumer's run
 * takes at most one item; with nothing pending the run is skipped
 * (`no_work`) and the next trigger is now + interval.
 *
 * Durable (the state file, `.herdctl/state.yaml`): per schedule
 * last_run_at, next_run_at, status idle/running/disabled, the latest run,
 * the count of consecutive failures and the last error; plus, for
 * producers, the first nominal due instant not yet claimed by a run (only
 * to name the instant a run serves).  The PRD has no recovery step: a
 * schedule persisted as `running` at a crash (or at a graceful stop that
 * cut its run off) stays `running` and is skipped for good, unless
 * `recover=reset`.  A graceful stop (on_stop) is the PRD's Scheduler.stop():
 * the loop stops at once, and runs that complete within the grace still
 * write their completion to the state file.
 *
 * Volatile: the due index (a jobs table, sim/jobs.h, of idle schedules keyed
 * by next trigger, rebuilt from the state file at every start), the running
 * count per workflow instance (the PRD's runningJobs map), the schedules
 * waiting for capacity, and the check-loop ticker.
 *
 * Cost.  The ticker counts every tick as a host wake-up but delivers only
 * armed ones: it is armed for the earliest next trigger, re-armed when a
 * run ends (its schedule's next trigger and any released waiters are seen
 * at the next check after the end, as the PRD's loop sees them).  A check
 * costs O((k + b) log n) for k due schedules and b released waiters. */
#include <stdlib.h>

#include "sim/backoff.h"
#include "sim/jobs.h"
#include "sim/policy_api.h"
#include "sim/rng.h"
#include "sim/util.h"

enum { T_CHECK = 1 };

/* Schedule status, as in the PRD's state file. */
enum { ST_IDLE, ST_RUNNING, ST_DISABLED };

/* What a handler is to this policy (derived from the scenario and the
 * parameters, so volatile). */
enum { ROLE_SKIP, ROLE_INTERVAL, ROLE_CALENDAR, ROLE_CONSUMER };

enum { ANCHOR_COMPLETION, ANCHOR_START };
enum { NOWORK_SKIP, NOWORK_RUN };
enum { CRON_SKIP, CRON_RUN };
enum { RECOVER_NONE, RECOVER_RESET };
enum { BACKOFF_OFF, BACKOFF_EXP };

#define NO_HANDLER UINT32_MAX

/* One schedule's row of the state file. */
struct isched {
    int64_t last_run_at;           /* completion of its latest run, -1 never */
    int64_t next_run_at;           /* its next trigger, SIM_NEVER none */
    int64_t next_due;              /* producers: first nominal instant no run has claimed */
    uint64_t run;                  /* its latest run, 0 none */
    uint32_t fails;                /* consecutive failed runs (the backoff option) */
    uint8_t status;                /* ST_* */
    uint8_t last_error;            /* fail class of its latest run, FAIL_NONE if it committed */
};

struct interval_durable {
    struct isched *s;              /* [nh], NULL until the first start */
};

struct policy {
    struct sim *sim;
    struct interval_durable *d;
    const struct sim_topo *t;
    int64_t check_us, consumer_us, backoff_max_us;
    uint32_t max_concurrent, jitter_pct;
    int anchor, no_work, cron, recover, backoff, host_scope, manual_outside;
    uint32_t pass_pos;             /* scope=host: where the current check pass goes on */
    int in_pass;                   /* scope=host: a pass is waiting for its job */
    uint64_t outside_run;          /* manual=outside: its run, 0 none (one at a time) */
    uint8_t *role;                 /* [nh] ROLE_* */
    struct jobtab ix;              /* row h: schedule h, pending at next_run_at when due-able */
    uint32_t *running;             /* [ninst] active runs of each workflow instance */
    uint64_t nrunning;             /* active runs in all */
    uint32_t *wait_head;           /* [ninst] schedules due but at capacity, NO_HANDLER-terminated */
    uint32_t *wait_next;           /* [nh] */
    uint8_t *waiting;              /* [nh] on its instance's wait list */
    uint32_t *due, *due_tmp;       /* [nh] scratch for one check */
    int ticker;
    int stopping;                  /* a graceful stop began (on_stop): the loop is stopped */
};

static const struct param_def interval_params[] = {
    {"check_interval", PARAM_DURATION, "1s", NULL, 1000, INT64_C(3600000000),
     "seed 003 US-4 (default check interval: 1 second, configurable)",
     "how often the check loop looks for due schedules"},
    {"max_concurrent", PARAM_INT, "1", NULL, 1, 1000000, "seed 003 US-6 (instances.max_concurrent, default 1)",
     "runs at once per workflow instance; a due schedule at capacity waits for a later check"},
    {"consumer_interval", PARAM_DURATION, "1m", NULL, 1000, INT64_C(86400000000) * 3660,
     "spec 4 (consumers' interval, default 1 m); seed 003 Integration with Work Sources",
     "interval of the schedules with a work source (consumers)"},
    {"jitter", PARAM_INT, "0", NULL, 0, 10, "seed 003 US-3 and Notes (jitter 0-10% of the interval, off by default)",
     "adds a uniform 0..jitter% of the interval to each next trigger after a run"},
    {"anchor", PARAM_ENUM, "completion", "completion|start", 0, 0,
     "seed 003 Key Design Principle (after completion); start: spec 4, as built",
     "what the interval is measured from: the run's completion or its start"},
    {"no_work", PARAM_ENUM, "skip", "skip|run", 0, 0,
     "seed 003 Integration with Work Sources (skipReason no_work); run: spec 4, as built",
     "a consumer with nothing pending: skip the run, or run it anyway"},
    {"cron", PARAM_ENUM, "skip", "skip|run", 0, 0, "seed 003 US-4 and Out of Scope (cron is PRD 9); run: spec 4",
     "cron and one-shot producers: skipped, or run at their next fire after completion"},
    {"recover", PARAM_ENUM, "none", "none|reset", 0, 0,
     "seed 003 (no recovery step: a persisted 'running' stays); reset: spec 4",
     "at start-up: leave 'running' schedules as they are, or reset them to idle"},
    {"backoff", PARAM_ENUM, "off", "off|exp", 0, 0,
     "seed 003 US-7 (exponential backoff, optional) and Out of Scope (no retry with backoff)",
     "after n consecutive failures wait interval * 2^(n-1), capped, instead of the interval"},
    {"backoff_max", PARAM_DURATION, "1h", NULL, 1000, INT64_C(86400000000) * 3660,
     "simrun choice (the seed gives no cap); never below the interval",
     "cap of the exponential backoff"},
    {"scope", PARAM_ENUM, "workflow", "workflow|host", 0, 0,
     "seed 003 US-6 (max_concurrent per agent); host: herdctl packages/core/src/scheduler/scheduler.ts 330-397, "
     "612-653 (the loop awaits each job) and fleet-manager.ts 1621-1634",
     "runs limited per workflow instance, or one at a time for the whole host: the check pass awaits each "
     "job, then sleeps check_interval"},
    {"manual", PARAM_ENUM, "schedule", "schedule|outside", 0, 0,
     "seed 003 US-6 (a manual trigger respects max_concurrent); outside: herdctl "
     "packages/core/src/fleet-manager/job-control.ts 88-260",
     "a manual trigger of one handler: a run of its schedule (state written), or a job outside the loop "
     "that leaves the schedule's state alone"},
};

/* --- the state file and the due index ------------------------------------- */

static int64_t sched_interval(const struct policy *p, uint32_t h)
{
    if (p->role[h] == ROLE_CONSUMER)
        return p->consumer_us;
    SIM_ASSERT(p->role[h] == ROLE_INTERVAL);
    struct sim_sched_info si;
    sim_sched_info(p->sim, h, &si);
    return si.every_us;
}

/* Puts schedule h in the due index at its next trigger, or takes it out.
 * Producers' triggers at or after the horizon are never indexed: their
 * schedules end there (one set before it is still served, late).
 * Consumers keep polling through the drain. */
static void ix_put(struct policy *p, uint32_t h)
{
    const struct isched *s = &p->d->s[h];
    int on = p->role[h] != ROLE_SKIP && s->status == ST_IDLE && s->next_run_at != SIM_NEVER &&
             (p->role[h] == ROLE_CONSUMER || s->next_run_at < sim_horizon(p->sim));
    if (on)
        jobs_update(&p->ix, h, JOB_PENDING, s->next_run_at);
    else if (jobs_get(&p->ix, h)->status != JOB_COMPLETED)
        jobs_update(&p->ix, h, JOB_COMPLETED, SIM_NEVER);
}

/* The first trigger: immediate for interval schedules and consumers (the
 * PRD's calculateNextTrigger with no last completion returns now); the
 * first fire for calendar schedules run with cron=run. */
static void state_init(struct policy *p, int64_t now_us)
{
    uint32_t nh = p->t->nh;
    p->d->s = sim_dalloc(p->sim, sizeof *p->d->s * (nh ? nh : 1));
    for (uint32_t h = 0; h < nh; h++) {
        struct isched *s = &p->d->s[h];
        s->last_run_at = -1;
        s->status = ST_IDLE;
        s->next_due = sim_sched_next(p->sim, h, now_us, 1);
        switch (p->role[h]) {
        case ROLE_INTERVAL:
        case ROLE_CONSUMER: s->next_run_at = now_us; break;
        case ROLE_CALENDAR: s->next_run_at = s->next_due; break;
        default: s->next_run_at = SIM_NEVER; break;
        }
    }
}

/* The next trigger after a run of h that started at start_us and ended at
 * now_us (US-3: completion + interval, + jitter; the backoff option after
 * failures).  Calendar schedules: the next fire after the anchor. */
static int64_t next_trigger(struct policy *p, uint32_t h, int64_t start_us, int64_t now_us)
{
    const struct isched *s = &p->d->s[h];
    int64_t base = p->anchor == ANCHOR_START ? start_us : now_us;
    if (p->role[h] == ROLE_SKIP)
        return SIM_NEVER; /* changed to a cron schedule under cron=skip: never triggered again */
    if (p->role[h] == ROLE_CALENDAR)
        return sim_sched_next(p->sim, h, base, 0);
    int64_t iv = sched_interval(p, h);
    int64_t wait = iv;
    if (s->fails && p->backoff == BACKOFF_EXP) {
        struct backoff b = backoff_exp(iv, p->backoff_max_us > iv ? p->backoff_max_us : iv, 0);
        wait = backoff_delay(&b, s->fails);
    }
    if (p->jitter_pct)
        wait += (int64_t)rng_below(sim_policy_rng(p->sim), (uint64_t)(iv * p->jitter_pct / 100) + 1);
    return base + wait;
}

/* --- the check loop ---------------------------------------------------------- */

/* Arms the check loop for the first check at or after `from` at which a
 * schedule is due (the earliest trigger in the index).  After a check,
 * from = now + 1; after a run's end, from = now, so that a check at the
 * very instant a run ends sees it, as the PRD's loop does.  A stopped loop
 * (a graceful stop) is not armed again. */
static void arm(struct policy *p, int64_t from_us)
{
    if (p->stopping)
        return;
    int64_t at;
    if (jobs_peek(&p->ix, &at) == UINT64_MAX)
        at = SIM_NEVER;
    else if (at < from_us)
        at = from_us;
    sim_ticker_arm(p->sim, p->ticker, at);
}

/* Triggers schedule h now (executeSchedule): the consumer's no_work skip,
 * or a run with status `running` written first.  Returns the run id, or 0
 * when nothing started (skipped). */
static uint64_t fire(struct policy *p, uint32_t h, enum run_reason why, int64_t now_us)
{
    struct isched *s = &p->d->s[h];
    SIM_ASSERT(s->status == ST_IDLE && !p->stopping);
    if (p->role[h] == ROLE_CONSUMER && p->no_work == NOWORK_SKIP && sim_pending_count(p->sim, h) == 0) {
        s->next_run_at = now_us + p->consumer_us; /* the PRD passes no jitter here */
        ix_put(p, h);
        return 0;
    }
    struct run_req rq = RUN_REQ_INIT;
    rq.handler = h;
    rq.reason = why;
    rq.tag = h; /* its row in the due index, which its end writes (sim_declare_run_rows) */
    if (p->role[h] == ROLE_CONSUMER)
        rq.max_take = 1; /* getNextWorkItem: one item per run */
    else if (why != REASON_MANUAL && s->next_due <= now_us)
        rq.due_us = s->next_due;
    s->status = ST_RUNNING;
    uint64_t run = sim_run_start(p->sim, &rq);
    if (!run) {
        s->status = ST_IDLE; /* the run limit ended the simulation */
        ix_put(p, h);
        return 0;
    }
    s->run = run;
    if (p->anchor == ANCHOR_START && p->role[h] == ROLE_INTERVAL)
        s->next_run_at = now_us + sched_interval(p, h); /* written with the trigger time */
    if (rq.due_us >= 0)
        s->next_due = sim_sched_next(p->sim, h, now_us, 0);
    p->running[p->t->h_inst[h]]++;
    p->nrunning++;
    return run;
}

/* Why a check starts h (for the trace). */
static enum run_reason reason_of(const struct policy *p, uint32_t h)
{
    switch (p->role[h]) {
    case ROLE_CONSUMER: return REASON_POLL;
    case ROLE_CALENDAR: return REASON_CRON;
    default: return REASON_SCHEDULE;
    }
}

/* scope=host: the pass goes on from pass_pos in configuration order; it
 * triggers the next due schedule and waits for its job (on_run_end comes
 * back here); at its end the loop sleeps check_interval from now (a new
 * ticker: the loop's rhythm starts over after every pass that ran a job). */
static void pass_continue(struct policy *p, int64_t now_us)
{
    for (uint32_t h = p->pass_pos; h < p->t->nh; h++) {
        const struct job *j = jobs_get(&p->ix, h);
        if (j->status != JOB_PENDING || j->available_us > now_us)
            continue;
        jobs_update(&p->ix, h, JOB_COMPLETED, SIM_NEVER);
        if (fire(p, h, reason_of(p, h), now_us)) {
            p->pass_pos = h + 1;
            p->in_pass = 1;
            return;
        }
    }
    int ran = p->in_pass;
    p->in_pass = 0;
    p->pass_pos = 0;
    if (ran) {
        sim_ticker_stop(p->sim, p->ticker);
        p->ticker = sim_ticker_new(p->sim, p->check_us, T_CHECK);
    }
    arm(p, now_us + 1);
}

/* Due schedules whose records the loop loads ahead of starting them. */
#define DUE_AHEAD 4

/* One iteration of the PRD's loop: every schedule with next_run_at <= now,
 * in configuration order (workflow instances, then handlers: handler ids),
 * starts unless its workflow is at capacity, in which case it waits (still
 * due) until a run of that workflow ends. */
static void check(struct policy *p, int64_t now_us)
{
    if (p->host_scope) {
        if (!p->in_pass) {
            p->pass_pos = 0;
            pass_continue(p, now_us);
        }
        return;
    }
    uint32_t n = 0;
    uint64_t id;
    while ((id = jobs_next_due(&p->ix, now_us)) != UINT64_MAX) {
        jobs_update(&p->ix, id, JOB_COMPLETED, SIM_NEVER);
        p->due[n++] = (uint32_t)id;
    }
    sim_sort_u32(p->due, p->due_tmp, n);
    for (uint32_t i = 0; i < n && i < DUE_AHEAD; i++)
        sim_prefetch_handler(p->sim, p->due[i]);
    for (uint32_t i = 0; i < n; i++) {
        if (i + DUE_AHEAD < n)
            sim_prefetch_handler(p->sim, p->due[i + DUE_AHEAD]);
        uint32_t h = p->due[i], inst = p->t->h_inst[h];
        if (p->running[inst] >= p->max_concurrent) {
            /* once: a schedule change while it waits puts it in the index again */
            if (!p->waiting[h]) {
                p->waiting[h] = 1;
                p->wait_next[h] = p->wait_head[inst];
                p->wait_head[inst] = h;
            }
            continue;
        }
        fire(p, h, reason_of(p, h), now_us);
    }
    arm(p, now_us + 1);
}

/* --- hooks --------------------------------------------------------------------- */


static struct policy *interval_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct policy *p = xcalloc(1, sizeof *p);
    p->sim = sim;
    p->d = durable;
    p->t = sim_topo(sim);
    p->check_us = params_get(ps, "check_interval");
    p->max_concurrent = (uint32_t)params_get(ps, "max_concurrent");
    p->consumer_us = params_get(ps, "consumer_interval");
    p->jitter_pct = (uint32_t)params_get(ps, "jitter");
    p->anchor = (int)params_get(ps, "anchor");
    p->no_work = (int)params_get(ps, "no_work");
    p->cron = (int)params_get(ps, "cron");
    p->recover = (int)params_get(ps, "recover");
    p->backoff = (int)params_get(ps, "backoff");
    p->backoff_max_us = params_get(ps, "backoff_max");
    p->host_scope = params_get(ps, "scope") == 1;
    p->manual_outside = params_get(ps, "manual") == 1;
    uint32_t nh = p->t->nh, ni = p->t->ninst;
    p->role = xcalloc(nh ? nh : 1, sizeof *p->role);
    p->running = xcalloc(ni ? ni : 1, sizeof *p->running);
    p->wait_head = xmalloc(sizeof *p->wait_head * (ni ? ni : 1));
    p->wait_next = xmalloc(sizeof *p->wait_next * (nh ? nh : 1));
    p->waiting = xcalloc(nh ? nh : 1, 1);
    p->due = xmalloc(sizeof *p->due * (nh ? nh : 1));
    p->due_tmp = xmalloc(sizeof *p->due_tmp * (nh ? nh : 1));
    for (uint32_t i = 0; i < ni; i++)
        p->wait_head[i] = NO_HANDLER;
    for (uint32_t h = 0; h < nh; h++) {
        struct sim_sched_info si;
        sim_sched_info(sim, h, &si);
        if (p->t->h_kind[h] == H_CONSUMER)
            p->role[h] = ROLE_CONSUMER;
        else if (si.kind == SIM_SCHED_EVERY)
            p->role[h] = ROLE_INTERVAL;
        else
            p->role[h] = p->cron == CRON_RUN ? ROLE_CALENDAR : ROLE_SKIP;
    }
    jobs_init(&p->ix, jobs_heap_realloc, NULL);
    for (uint32_t h = 0; h < nh; h++) {
        struct job j = {.handler = h, .status = JOB_COMPLETED, .available_us = SIM_NEVER, .due_us = -1,
                        .item = UINT64_MAX};
        jobs_add(&p->ix, &j);
    }
    if (!p->d->s)
        state_init(p, sim_now(sim));
    sim_declare_rows(sim, p->d->s, sizeof *p->d->s);
    sim_declare_run_rows(sim, &p->ix);
    return p;
}

static void interval_destroy(struct policy *p)
{
    jobs_free(&p->ix);
    free(p->role);
    free(p->running);
    free(p->wait_head);
    free(p->wait_next);
    free(p->waiting);
    free(p->due);
    free(p->due_tmp);
    free(p);
}

/* Scheduler.start(): read the state file (index the idle schedules), start
 * the loop, whose first iteration runs at once.  The PRD has no recovery
 * step; recover=reset sets schedules left `running` back to idle. */
static void interval_start(struct policy *p, int restart, int64_t now_us)
{
    for (uint32_t h = 0; h < p->t->nh; h++) {
        if (restart && p->recover == RECOVER_RESET && p->d->s[h].status == ST_RUNNING)
            p->d->s[h].status = ST_IDLE;
        ix_put(p, h);
    }
    p->ticker = sim_ticker_new(p->sim, p->check_us, T_CHECK);
    check(p, now_us);
}

static void interval_on_publish(struct policy *p, uint32_t h, uint64_t item, int64_t now_us)
{
    /* Consumers poll their work source; a publish wakes nothing. */
}

static void interval_on_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now_us)
{
    SIM_ASSERT(tag == T_CHECK);
    check(p, now_us);
}

/* The run's completion: the schedule is idle again with last_run_at and the
 * next trigger written, whatever the outcome (errors stop nothing else);
 * its workflow's waiting schedules become due again for the next check. */
static void interval_on_run_end(struct policy *p, const struct run_result *r, int64_t now_us)
{
    uint32_t h = r->handler, inst = p->t->h_inst[h];
    struct isched *s = &p->d->s[h];
    if (r->run == p->outside_run) {
        p->outside_run = 0; /* a manual job outside the loop: no state written */
        return;
    }
    SIM_ASSERT(s->status == ST_RUNNING && s->run == r->run);
    SIM_ASSERT(p->running[inst] > 0 && p->nrunning > 0);
    p->running[inst]--;
    p->nrunning--;
    s->status = ST_IDLE;
    s->last_run_at = now_us;
    if (r->outcome == OUT_COMMITTED) {
        s->fails = 0;
        s->last_error = FAIL_NONE;
    } else {
        s->fails++;
        s->last_error = (uint8_t)r->fail;
    }
    s->next_run_at = next_trigger(p, h, r->start_us, now_us);
    ix_put(p, h);
    for (uint32_t w = p->wait_head[inst], next; w != NO_HANDLER; w = next) {
        next = p->wait_next[w];
        p->waiting[w] = 0;
        ix_put(p, w);
    }
    p->wait_head[inst] = NO_HANDLER;
    if (p->host_scope) {
        if (!p->stopping)
            pass_continue(p, now_us);
        return;
    }
    arm(p, now_us);
}

/* Scheduler.stop(): the check loop stops; run completions are still
 * written (on_run_end) until the host goes down. */
static void interval_on_stop(struct policy *p, int64_t now_us) { p->stopping = 1; }

/* trigger(agentName) with no schedule name: the first schedule of the
 * workflow, now, if it is idle and the workflow has capacity (US-6: the
 * manual trigger respects max_concurrent). */
static void interval_on_trigger(struct policy *p, uint32_t inst, int64_t now_us)
{
    uint32_t h = p->t->inst_first_h[inst];
    while (h < p->t->inst_first_h[inst + 1] && p->role[h] == ROLE_SKIP)
        h++;
    if (h == p->t->inst_first_h[inst + 1] || p->d->s[h].status != ST_IDLE ||
        p->running[inst] >= p->max_concurrent)
        return;
    SIM_ASSERT(p->wait_head[inst] == NO_HANDLER); /* waiters exist only at capacity */
    jobs_update(&p->ix, h, JOB_COMPLETED, SIM_NEVER);
    fire(p, h, REASON_MANUAL, now_us);
    arm(p, now_us + 1);
}

/* A manual trigger of one handler.  manual=schedule: a run of its
 * schedule, as the workflow trigger does; manual=outside: herdctl's
 * trigger(agent, schedule): refused at capacity, else a job that the
 * scheduler does not count and whose schedule state it does not touch. */
static void interval_on_trigger_ex(struct policy *p, const struct sim_trigger *t, int64_t now_us)
{
    if (t->handler == UINT32_MAX) {
        interval_on_trigger(p, t->inst, now_us);
        return;
    }
    uint32_t h = t->handler;
    if (p->running[t->inst] >= p->max_concurrent || p->stopping)
        return; /* ConcurrencyLimitError */
    if (p->manual_outside) {
        if (p->outside_run)
            return;
        struct run_req rq = RUN_REQ_INIT;
        rq.handler = h;
        rq.reason = REASON_MANUAL;
        p->outside_run = sim_run_start(p->sim, &rq);
        return;
    }
    if (p->role[h] == ROLE_SKIP || p->d->s[h].status != ST_IDLE || (p->host_scope && p->in_pass))
        return;
    jobs_update(&p->ix, h, JOB_COMPLETED, SIM_NEVER);
    fire(p, h, REASON_MANUAL, now_us);
    if (!p->host_scope)
        arm(p, now_us + 1);
}

/* enableSchedule / disableSchedule / a changed interval: the state file's
 * status, and the next trigger from the last run (herdctl reads
 * last_run_at + interval at its next check). */
static void interval_on_schedule_change(struct policy *p, uint32_t h, int64_t now_us)
{
    struct isched *s = &p->d->s[h];
    struct sim_sched_info si;
    sim_sched_info(p->sim, h, &si);
    if (si.disabled) {
        if (s->status == ST_IDLE)
            s->status = ST_DISABLED;
    } else {
        if (s->status == ST_DISABLED)
            s->status = ST_IDLE;
        if (p->role[h] == ROLE_INTERVAL && si.kind != SIM_SCHED_EVERY)
            p->role[h] = p->cron == CRON_RUN ? ROLE_CALENDAR : ROLE_SKIP;
        else if (p->role[h] != ROLE_CONSUMER && si.kind == SIM_SCHED_EVERY)
            p->role[h] = ROLE_INTERVAL;
        if (p->role[h] == ROLE_SKIP) {
            s->next_run_at = SIM_NEVER; /* a calendar schedule it does not run (cron=skip) */
        } else if (s->status == ST_IDLE && s->run) {
            struct sim_run_info ri;
            sim_run_get(p->sim, s->run, &ri);
            int64_t next = next_trigger(p, h, ri.start_us, s->last_run_at);
            s->next_run_at = next < now_us ? now_us : next;
        } else if (s->status == ST_IDLE) {
            s->next_run_at = p->role[h] == ROLE_CALENDAR ? sim_sched_next(p->sim, h, now_us, 1) : now_us;
        }
    }
    ix_put(p, h);
    if (!p->host_scope || !p->in_pass)
        arm(p, now_us);
}

static const struct variant_setting herdctl_settings[] = {
    {"scope", "host", "packages/core/src/scheduler/scheduler.ts 380-397, 612-653; fleet-manager.ts 1621-1634"},
    {"anchor", "start", "scheduler.ts 475-494, 631-641 (next from last_run_at, the trigger time)"},
    {"recover", "reset", "scheduler.ts 168-169, 433-458 (a persisted 'running' is ignored)"},
    {"no_work", "run", "schedule-executor.ts (no work source in the fleet path)"},
    {"cron", "run", "scheduler.ts 522-557; cron.ts (cron schedules, PRD 9 built)"},
    {"manual", "outside", "packages/core/src/fleet-manager/job-control.ts 88-260"},
};

static const struct policy_variant interval_variants[] = {
    {"herdctl", "herdctl as built: one job at a time for the fleet, interval from the trigger, state reset at start",
     "edspencer/herdctl@9b1e34ac673f761d58f20a85ba0f6cda51d72948 packages/core/src/", "herdctl", herdctl_settings,
     (int)(sizeof herdctl_settings / sizeof herdctl_settings[0])},
};

const struct policy_ops policy_interval = {
    .abi = POLICY_ABI,
    .name = "interval",
    .summary = "interval after completion: a 1 s check loop, max_concurrent per workflow, state in a file",
    .seeds = "seed 003",
    .params = interval_params,
    .nparams = (int)(sizeof interval_params / sizeof interval_params[0]),
    .durable_size = sizeof(struct interval_durable),
    .promise = PROMISE_WORKFLOW,
    .items_volatile = 0,
    .create = interval_create,
    .destroy = interval_destroy,
    .start = interval_start,
    .on_publish = interval_on_publish,
    .on_timer = interval_on_timer,
    .on_run_end = interval_on_run_end,
    .on_trigger = interval_on_trigger,
    .on_stop = interval_on_stop,
    .on_schedule_change = interval_on_schedule_change,
    .on_trigger_ex = interval_on_trigger_ex,
    .variants = interval_variants,
    .nvariants = (int)(sizeof interval_variants / sizeof interval_variants[0]),
};
