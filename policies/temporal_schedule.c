/* temporal_schedule.c: Temporal Schedules starting workflows whose one
 * activity is the handler's run, with the activity retry policy and its
 * timeouts.  docs/policy-temporal_schedule.md has the rules and sources;
 * this comment is the map.
 *
 * Mapping.  Each producer instance is a Schedule whose spec is the
 * producer's schedule (time_zone; Temporal reads wall clocks per instant:
 * a repeated time fires twice, a time in a gap never).  Each action starts
 * a workflow that runs one activity: the producer's run, serving the
 * action's nominal time.  A consumer is a workflow per consumer instance
 * that runs its activity as events arrive, one at a time.  Activities run
 * on one worker process with max_concurrent_activities slots.  The host is
 * the Temporal service with its worker; `crash server` is the service alone
 * (nothing is scheduled, dispatched or timed out; activities running on the
 * worker go on), `crash worker N` the worker process (its activities die and
 * are detected by their timeouts).
 *
 * A schedule wakes at its next action time (nominal + jitter), or later if
 * the service was down, and processes every action time in (last, now]:
 * one older than catchup_window is dropped (missed), the others are started
 * under the overlap policy while a workflow it started is open: skip (drop),
 * buffer_one (keep one), buffer_all (keep all, run one after another),
 * terminate_other (close the open one and start; its activity stops only
 * if it heartbeats, else it runs on unseen), cancel_other (the same, but
 * under wait_cancellation_completed a workflow whose activity does not
 * heartbeat closes when the activity ends, and the newest start waits for
 * that), allow_all (start; not tracked).
 *
 * An activity attempt that fails, or outlives start_to_close (or whose
 * worker died: detected heartbeat_timeout after its last heartbeat, else at
 * start_to_close), is retried after min(initial * coefficient^(n-1),
 * maximum_interval; unset: 100 x initial) while attempts remain; the
 * attempt that timed out may still be running, and its late result is
 * rejected (its side effect is not).
 *
 * Key invariant: an activity row is PENDING (scheduled: available_us is
 * when it may start), RUNNING (attempt `run` active or dead, available_us
 * its timeout deadline) or closed; each schedule and consumer has at most
 * one open workflow (open[h]), except under allow_all; `busy` counts the
 * worker's active runs (a timed-out attempt's run holds its slot until it
 * ends).
 *
 * Durable: schedules (last processed time, buffer, open workflow) and
 * the activity rows of open workflows (the service's state; a closed
 * workflow's row is forgotten: act_close).  Volatile: the worker's slots and
 * the timers. */
#include <stdio.h>
#include <stdlib.h>

#include "sim/backoff.h"
#include "sim/cal.h"
#include "sim/jobs.h"
#include "sim/policy_api.h"
#include "sim/rng.h"
#include "sim/util.h"

enum { T_SCHED = 1, T_ACT };
enum { OV_SKIP, OV_BUFFER_ONE, OV_BUFFER_ALL, OV_CANCEL_OTHER, OV_TERMINATE_OTHER, OV_ALLOW_ALL };
enum { AC_TRY_CANCEL, AC_WAIT_CANCELLATION_COMPLETED };

#define NONE UINT64_MAX
#define MAX_BUFFER 1000 /* workflow.go TweakablePolicies.MaxBufferSize, 1000 in CurrentTweakablePolicies */

struct tp_sched {                  /* a schedule (producers) or a consumer's workflow */
    int64_t last_nominal;          /* the last nominal time processed, -1 none */
    uint64_t open;                 /* activity row of its open workflow, NONE */
    int64_t *buf;                  /* buffered starts: nominal times */
    size_t nbuf, buf_cap;
    uint8_t more;                  /* consumers: events came while it ran */
    uint8_t cancelling;            /* cancel_other: the open workflow was asked to cancel and waits
                                      for its activity (wait_cancellation_completed) */
};

struct tp_durable {
    int init;
    struct tp_sched *s;            /* [nh] */
    struct jobtab acts;            /* activities: due_us the nominal time (-1 consumers) */
};

struct policy {
    struct sim *sim;
    struct tp_durable *d;
    const struct sim_topo *t;

    int overlap, act_cancel;
    int64_t catchup_us, jitter_us, stc_us, hb_us;
    uint32_t slots, max_attempts;
    struct backoff retry;
    struct sim_sched_opts opts;

    int *sched_alarm;              /* [nh] */
    int act_alarm;
    uint32_t busy;
    int server_down, worker_down, stopping;
};

static const struct param_def tp_params[] = {
    {"overlap_policy", PARAM_ENUM, "skip", "skip|buffer_one|buffer_all|cancel_other|terminate_other|allow_all", 0,
     0, "temporal/api enums/v1/schedule.proto ScheduleOverlapPolicy (unspecified = SKIP)",
     "what an action does while a workflow the schedule started is still open"},
    {"catchup_window", PARAM_DURATION, "365d", NULL, 10 * US_PER_S, 3660 * US_PER_DAY,
     "schedule/v1/message.proto catchup_window; service/worker/scheduler/workflow.go TweakablePolicies fields "
     "DefaultCatchupWindow (365 days) and MinCatchupWindow (10 s), values in CurrentTweakablePolicies; some SDKs "
     "send their own default (php SchedulePolicies::$catchupWindow: 60 s)",
     "an action time older than this when the schedule wakes is dropped (missed_catchup_window)"},
    {"jitter", PARAM_DURATION, "0", NULL, 0, 3660 * US_PER_DAY,
     "schedule/v1/message.proto ScheduleSpec.jitter; service/worker/scheduler/spec.go GetNextTime "
     "(maxJitter = min(jitter, following - nominal)), addJitter (ms, range capped at MaxUint32)",
     "each action is delayed by a deterministic pseudo-random amount in whole ms, drawn evenly from [0, this) "
     "or, if shorter, [0, time to the next nominal time); draws are capped at 2^32 ms (49.7 d)"},
    {"time_zone", PARAM_ZONE, "local", NULL, 0, 0, "ScheduleSpec.timezone_name (default UTC: here the schedule's zone)",
     "zone the calendar spec is read in; local: the schedule's own"},
    {"retry_initial", PARAM_DURATION, "1s", NULL, US_PER_MS, US_PER_DAY,
     "common/v1/message.proto RetryPolicy.initial_interval; retrypolicy DefaultDefaultRetrySettings 1 s",
     "delay before the first retry of an activity"},
    {"retry_coefficient", PARAM_DECIMAL, "2", NULL, 1000, 100000,
     "common/v1/message.proto RetryPolicy.backoff_coefficient (a double, default 2.0); retry_policy.go "
     "Validate (\"BackoffCoefficient cannot be less than 1\")",
     "each retry's delay is this times the previous one (up to 3 decimal places, e.g. 1.5)"},
    {"retry_max_interval", PARAM_DURATION, "0", NULL, 0, 30 * US_PER_DAY,
     "common/v1/message.proto RetryPolicy.maximum_interval: \"Default is 100x of the initial interval\"; "
     "temporalio/temporal common/retrypolicy/retry_policy.go EnsureDefaults (unset: 100 x InitialInterval); "
     "Validate (\"MaximumInterval cannot be less than InitialInterval\", unless maximum_attempts is 1)",
     "largest delay between attempts; 0: 100 x retry_initial; below retry_initial is refused (unless "
     "max_attempts=1)"},
    {"max_attempts", PARAM_INT, "0", NULL, 0, 1000000, "RetryPolicy.maximum_attempts (0 = unlimited)",
     "attempts before the activity (and its workflow) fails; 0: unlimited"},
    {"start_to_close", PARAM_DURATION, "1h", NULL, 0, 3660 * US_PER_DAY,
     "command/v1 ScheduleActivityTask start_to_close_timeout (no default: an activity must set it or "
     "schedule-to-close; simrun: 1h)",
     "an attempt running longer is failed and retried by the service while the worker may still run it; 0: none"},
    {"heartbeat_timeout", PARAM_DURATION, "0", NULL, 0, 3660 * US_PER_DAY,
     "command/v1 ScheduleActivityTask heartbeat_timeout (default none)",
     "the activity heartbeats: a dead worker's attempt fails this long after its last heartbeat; 0: none"},
    {"activity_cancellation", PARAM_ENUM, "try_cancel", "try_cancel|wait_cancellation_completed", 0, 0,
     "temporalio/sdk-core workflow_commands.proto ActivityCancellationType (TRY_CANCEL = 0, the default: "
     "\"immediately report cancellation to the workflow\"; WAIT_CANCELLATION_COMPLETED: \"activity must heartbeat to "
     "receive a cancellation notification\"); Go SDK ActivityOptions.WaitForCancellation (default false)",
     "cancel_other: try_cancel, the cancelled workflow closes at once (its activity runs on unless it heartbeats); "
     "wait_cancellation_completed, it closes when its running activity ends, and the new start waits for that"},
    {"max_concurrent_activities", PARAM_INT, "1000", NULL, 1, 10000000,
     "Go SDK worker.Options.MaxConcurrentActivityExecutionSize (default 1000)",
     "activity slots of the worker; others wait in the task queue"},
};

static int is_prod(const struct policy *p, uint32_t h) { return p->t->h_kind[h] == H_PRODUCER; }

/* --- activities ---------------------------------------------------------------- */

static uint64_t act_new(struct policy *p, uint32_t h, int64_t due, int64_t now_us)
{
    struct job j = {.handler = h, .status = JOB_PENDING, .available_us = now_us, .due_us = due,
                    .item = UINT64_MAX};
    return jobs_add(&p->d->acts, &j);
}

/* A row's status; a row leaving RUNNING lets its attempt's run record go
 * (held while RUNNING, when its timeouts and crashes read it). */
static void act_set(struct policy *p, uint64_t id, enum job_status st, int64_t at_us)
{
    const struct job *j = jobs_get(&p->d->acts, id);
    if (j->status == JOB_RUNNING && st != JOB_RUNNING && j->run)
        sim_run_release(p->sim, j->run);
    jobs_update(&p->d->acts, id, st, at_us);
}

static void act_dispatch(struct policy *p, uint64_t id, int64_t now_us)
{
    struct job *j = jobs_get(&p->d->acts, id);
    struct run_req rq = RUN_REQ_INIT;
    rq.handler = j->handler;
    rq.due_us = j->due_us;
    rq.reason = j->attempts ? REASON_RETRY : is_prod(p, j->handler) ? REASON_SCHEDULE : REASON_EVENT;
    rq.retry_of = j->run;
    rq.worker = 1;
    rq.tag = id;
    uint64_t run = sim_run_start(p->sim, &rq);
    j = jobs_get(&p->d->acts, id);
    j->run = run;
    if (run)
        sim_run_hold(p->sim, run);
    j->attempts++;
    jobs_update(&p->d->acts, id, JOB_RUNNING, p->stc_us ? now_us + p->stc_us : SIM_NEVER);
    p->busy++;
}

static void schedule_wake(struct policy *p, uint32_t h, int64_t now_us);
static void process_buffer(struct policy *p, uint32_t h, int64_t now_us);

/* A closed workflow's row is forgotten: the service keeps a closed
 * workflow's history for its retention period, for people to look at, and
 * a schedule only a bounded list of recent actions; no later decision
 * reads it (a late result of one of its attempts is rejected, as for any
 * closed workflow), so memory follows the open workflows. */
static void act_close(struct policy *p, uint64_t id, enum job_status st)
{
    act_set(p, id, st, SIM_NEVER);
    jobs_forget(&p->d->acts, id);
}

/* The workflow of row id closed (completed, failed, or its attempts ran
 * out): its schedule may start the next one. */
static void workflow_closed(struct policy *p, uint64_t id, enum job_status st, int64_t now_us)
{
    uint32_t h = jobs_get(&p->d->acts, id)->handler;
    act_close(p, id, st);
    struct tp_sched *s = &p->d->s[h];
    if (s->open == id) {
        s->open = NONE;
        s->cancelling = 0;
    }
    process_buffer(p, h, now_us);
}

/* An attempt failed (its run failed, or it timed out): retry after the
 * backoff, or the workflow fails. */
static void attempt_failed(struct policy *p, uint64_t id, int64_t now_us)
{
    struct job *j = jobs_get(&p->d->acts, id);
    if ((p->max_attempts && j->attempts >= p->max_attempts) || p->d->s[j->handler].cancelling) {
        workflow_closed(p, id, JOB_FAILED, now_us);
        return;
    }
    act_set(p, id, JOB_PENDING, now_us + backoff_delay(&p->retry, j->attempts));
}

/* The service's side: timeouts of RUNNING attempts and dispatch of due
 * PENDING ones to free slots; then the alarm at the next of either. */
static void acts_run(struct policy *p, int64_t now_us)
{
    if (p->server_down || p->stopping)
        return;
    uint64_t id;
    for (;;) {
        int64_t at;
        id = jobs_peek(&p->d->acts, &at);
        if (id == NONE || at > now_us)
            break;
        struct job *j = jobs_get(&p->d->acts, id);
        if (j->status == JOB_RUNNING) {
            /* the worker may run on: its slot is freed when the run ends */
            sim_note(p->sim, j->handler, "activity attempt %u timed out", j->attempts);
            attempt_failed(p, id, now_us);
            continue;
        }
        if (p->worker_down || p->busy >= p->slots)
            break; /* waits in the task queue */
        act_dispatch(p, id, now_us);
    }
    int64_t at = SIM_NEVER;
    if (jobs_peek(&p->d->acts, &at) == NONE || at <= now_us)
        at = SIM_NEVER; /* a PENDING row waiting for a slot: a run's end brings one */
    sim_alarm(p->sim, p->act_alarm, at);
}

/* A dead attempt (its worker died at died_us) is found out heartbeat_timeout
 * after its last heartbeat, if it heartbeats, else at start_to_close. */
static void attempt_died(struct policy *p, uint64_t id, int64_t died_us)
{
    struct job *j = jobs_get(&p->d->acts, id);
    int64_t at = j->available_us;
    if (p->hb_us && died_us + p->hb_us < at)
        at = died_us + p->hb_us;
    jobs_update(&p->d->acts, id, JOB_RUNNING, at);
}

/* --- schedules -------------------------------------------------------------------- */

/* The action time of nominal time t: t + a deterministic amount drawn
 * evenly, in whole milliseconds, from [0, min(jitter, following - t)),
 * where following is the next nominal time; the range is capped at 2^32 - 1
 * ms (about 49.7 days), as the service draws 32 bits of hash times the
 * range in milliseconds. */
static int64_t action_time(struct policy *p, uint32_t h, int64_t t)
{
    if (p->jitter_us <= 0)
        return t;
    int64_t range = p->jitter_us;
    int64_t next = sim_sched_next_opt(p->sim, h, t, 0, &p->opts);
    if (next != SIM_NEVER && next - t < range)
        range = next - t;
    uint64_t ms = (uint64_t)(range / US_PER_MS);
    if (ms > UINT32_MAX)
        ms = UINT32_MAX;
    uint64_t hash = rng_mix((uint64_t)t * UINT64_C(0x9e3779b97f4a7c15) ^ h) >> 32;
    return t + (int64_t)((hash * ms) >> 32) * US_PER_MS;
}

static void start_workflow(struct policy *p, uint32_t h, int64_t nominal, int64_t now_us)
{
    uint64_t id = act_new(p, h, sim_sched_prev(p->sim, h, nominal), now_us);
    if (p->overlap != OV_ALLOW_ALL)
        p->d->s[h].open = id;
}

/* The open workflow is terminated (terminate_other), or cancelled
 * (cancel_other) and it closes at once: its activity stops only if it
 * heartbeats (it learns of it then); the schedule's next start may go.
 * Returns 0 when, instead, a cancelled workflow waits for its running
 * activity to end (wait_cancellation_completed, no heartbeats): it closes
 * then, and the start waits in the buffer. */
static int close_other(struct policy *p, uint32_t h, int cancel, int64_t now_us)
{
    struct tp_sched *s = &p->d->s[h];
    if (s->cancelling)
        return 0; /* asked already */
    struct job *j = jobs_get(&p->d->acts, s->open);
    if (j->status == JOB_RUNNING && p->hb_us) {
        struct sim_run_info ri;
        sim_run_get(p->sim, j->run, &ri);
        if (ri.active && sim_run_cancel(p->sim, j->run))
            p->busy--;
    } else if (j->status == JOB_RUNNING && cancel && p->act_cancel == AC_WAIT_CANCELLATION_COMPLETED) {
        s->cancelling = 1; /* its attempt ends (or times out) unretried, and the workflow closes */
        sim_note(p->sim, h, "cancel requested: waiting for the activity");
        return 0;
    }
    act_close(p, s->open, JOB_FAILED);
    s->open = NONE;
    return 1;
}

static void add_start(struct policy *p, uint32_t h, int64_t nominal, int64_t now_us)
{
    struct tp_sched *s = &p->d->s[h];
    if (s->open == NONE || p->overlap == OV_ALLOW_ALL) {
        start_workflow(p, h, nominal, now_us);
        return;
    }
    switch (p->overlap) {
    case OV_SKIP:
        sim_note(p->sim, h, "overlap_skipped");
        return;
    case OV_BUFFER_ONE:
    case OV_BUFFER_ALL:
        if (s->nbuf >= (p->overlap == OV_BUFFER_ONE ? 1 : MAX_BUFFER)) {
            sim_note(p->sim, h, "buffer_dropped");
            return;
        }
        s->buf = sim_dgrow(p->sim, s->buf, sizeof *s->buf, &s->buf_cap, s->nbuf + 1);
        s->buf[s->nbuf++] = nominal;
        return;
    case OV_CANCEL_OTHER:
        /* The start waits in the buffer until the cancelled workflow has
         * closed; a later one replaces it (buffer.go ProcessBuffer). */
        if (close_other(p, h, 1, now_us)) {
            start_workflow(p, h, nominal, now_us);
            return;
        }
        s->buf = sim_dgrow(p->sim, s->buf, sizeof *s->buf, &s->buf_cap, 1);
        s->buf[0] = nominal;
        s->nbuf = 1;
        return;
    default: /* terminate_other: the new one starts at once */
        close_other(p, h, 0, now_us);
        start_workflow(p, h, nominal, now_us);
        return;
    }
}

static void process_buffer(struct policy *p, uint32_t h, int64_t now_us)
{
    struct tp_sched *s = &p->d->s[h];
    if (!is_prod(p, h)) { /* a consumer's workflow runs again when events came */
        if (s->open == NONE && s->more) {
            s->more = 0;
            if (sim_pending_count(p->sim, h))
                s->open = act_new(p, h, -1, now_us);
        }
        return;
    }
    if (s->open != NONE || s->nbuf == 0)
        return;
    int64_t nominal = s->buf[0];
    for (size_t i = 1; i < s->nbuf; i++)
        s->buf[i - 1] = s->buf[i];
    s->nbuf--;
    start_workflow(p, h, nominal, now_us);
}

/* The scheduler workflow wakes: every action time in (last, now]. */
static void process_schedule(struct policy *p, uint32_t h, int64_t now_us)
{
    struct tp_sched *s = &p->d->s[h];
    for (;;) {
        int64_t t = sim_sched_next_opt(p->sim, h, s->last_nominal, 0, &p->opts);
        if (t == SIM_NEVER)
            break;
        int64_t a = action_time(p, h, t);
        if (a > now_us)
            break;
        s->last_nominal = t;
        if (now_us - a > p->catchup_us) {
            sim_note(p->sim, h, "missed catchup window");
            continue;
        }
        add_start(p, h, t, now_us);
    }
    process_buffer(p, h, now_us);
    schedule_wake(p, h, now_us);
}

static void schedule_wake(struct policy *p, uint32_t h, int64_t now_us)
{
    int64_t t = sim_sched_next_opt(p->sim, h, p->d->s[h].last_nominal, 0, &p->opts);
    sim_alarm(p->sim, p->sched_alarm[h], t == SIM_NEVER ? SIM_NEVER : action_time(p, h, t));
}

/* --- hooks ------------------------------------------------------------------------ */

/* The server refuses a retry policy whose maximum interval (when set) is
 * below its initial interval, unless it allows one attempt only (then
 * "validating the rest of the arguments is pointless"): Validate in
 * temporalio/temporal common/retrypolicy/retry_policy.go, "MaximumInterval
 * cannot be less than InitialInterval on retry policy." (its test "maximum
 * interval in less than initial interval"). */
static int tp_check_params(const struct params *ps, char *msg, size_t n)
{
    int64_t initial = params_get(ps, "retry_initial"), cap = params_get(ps, "retry_max_interval");
    if (cap == 0 || cap >= initial || params_get(ps, "max_attempts") == 1)
        return -1;
    char a[32], b[32];
    params_value_text(ps, "retry_max_interval", a, sizeof a);
    params_value_text(ps, "retry_initial", b, sizeof b);
    snprintf(msg, n,
             "retry_max_interval (%s) is below retry_initial (%s); Temporal refuses such a retry policy "
             "(\"MaximumInterval cannot be less than InitialInterval\")",
             a, b);
    return params_index(ps, "retry_max_interval");
}

static struct policy *tp_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct policy *p = xcalloc(1, sizeof *p);
    p->sim = sim;
    p->d = durable;
    p->t = sim_topo(sim);
    p->overlap = (int)params_get(ps, "overlap_policy");
    p->act_cancel = (int)params_get(ps, "activity_cancellation");
    p->catchup_us = params_get(ps, "catchup_window");
    p->jitter_us = params_get(ps, "jitter");
    p->stc_us = params_get(ps, "start_to_close");
    p->hb_us = params_get(ps, "heartbeat_timeout");
    p->slots = (uint32_t)params_get(ps, "max_concurrent_activities");
    p->max_attempts = (uint32_t)params_get(ps, "max_attempts");
    /* min(initial * coefficient^(n-1), maximum), growing until the cap */
    int64_t initial = params_get(ps, "retry_initial"), cap = params_get(ps, "retry_max_interval");
    if (cap == 0)
        cap = 100 * initial; /* unset: 100 x the initial interval */
    uint32_t coef = (uint32_t)params_get(ps, "retry_coefficient"); /* thousandths */
    /* tp_check_params refuses cap < initial before a run; one that calls
     * sim_run itself and skips the check gets the initial interval. */
    p->retry = backoff_exp_coef(initial, cap < initial ? initial : cap, coef, 0);
    p->opts.zone = params_zone(ps, "time_zone", NULL);
    p->opts.dst = CAL_DST_ABSOLUTE;
    p->sched_alarm = xcalloc(p->t->nh + 1, sizeof *p->sched_alarm);
    for (uint32_t h = 0; h < p->t->nh; h++)
        p->sched_alarm[h] = sim_alarm_new(sim, T_SCHED, h);
    p->act_alarm = sim_alarm_new(sim, T_ACT, 0);

    struct tp_durable *d = p->d;
    if (!d->init) {
        d->init = 1;
        jobs_init(&d->acts, sim_durable_realloc, sim);
        d->s = sim_dalloc(sim, (p->t->nh + 1) * sizeof *d->s);
        for (uint32_t h = 0; h < p->t->nh; h++)
            d->s[h] = (struct tp_sched){.last_nominal = -1, .open = NONE};
    }
    sim_declare_rows(sim, d->s, sizeof *d->s);
    sim_declare_run_rows(sim, &d->acts);
    sim_declare_rows(sim, p->sched_alarm, sizeof *p->sched_alarm);
    sim_declare_handler_tag(sim, T_SCHED);
    return p;
}

static void tp_destroy(struct policy *p)
{
    free(p->sched_alarm);
    free(p);
}

/* Every attempt the host's crash killed is found out by its timeouts. */
static void recover_attempts(struct policy *p)
{
    for (uint64_t id = jobs_next_kept(&p->d->acts, 0); id < p->d->acts.n; id = jobs_next_kept(&p->d->acts, id + 1)) {
        struct job *j = jobs_get(&p->d->acts, id);
        if (j->status != JOB_RUNNING)
            continue;
        struct sim_run_info ri;
        sim_run_get(p->sim, j->run, &ri);
        if (!ri.active && ri.outcome == OUT_CRASHED)
            attempt_died(p, id, ri.end_us);
    }
}

static void tp_start(struct policy *p, int restart, int64_t now_us)
{
    p->busy = 0;
    if (restart)
        recover_attempts(p);
    for (uint32_t h = 0; h < p->t->nh; h++) {
        if (is_prod(p, h)) {
            process_schedule(p, h, now_us);
        } else {
            p->d->s[h].more = 1; /* events may have come while it was down */
            process_buffer(p, h, now_us);
        }
    }
    acts_run(p, now_us);
}

static void tp_on_publish(struct policy *p, uint32_t h, uint64_t item, int64_t now_us)
{
    p->d->s[h].more = 1;
    if (!p->server_down)
        process_buffer(p, h, now_us);
    acts_run(p, now_us);
}

static void tp_on_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now_us)
{
    if (tag == T_SCHED && !p->server_down && !p->stopping) {
        uint32_t h = (uint32_t)arg;
        if (is_prod(p, h)) {
            process_schedule(p, h, now_us);
        } else { /* a consumer's wake request came due */
            p->d->s[h].more = 1;
            process_buffer(p, h, now_us);
        }
    }
    acts_run(p, now_us);
}

static void tp_on_run_end(struct policy *p, const struct run_result *r, int64_t now_us)
{
    if (p->busy)
        p->busy--;
    uint64_t id = r->tag;
    struct job *j = jobs_find(&p->d->acts, id);
    if (!j || j->status != JOB_RUNNING || j->run != r->run) {
        acts_run(p, now_us); /* a timed-out attempt's late result (or a closed workflow's): rejected */
        return;
    }
    uint32_t h = j->handler;
    if (r->outcome == OUT_COMMITTED) {
        if (!is_prod(p, h)) {
            struct tp_sched *s = &p->d->s[h];
            if (r->ntaken > 0)
                s->more = 1;
            if (r->wake_us != SIM_NEVER)
                sim_alarm(p->sim, p->sched_alarm[h], r->wake_us);
        }
        workflow_closed(p, id, JOB_COMPLETED, now_us);
    } else {
        attempt_failed(p, id, now_us);
    }
    acts_run(p, now_us);
}

static void tp_on_part(struct policy *p, int target, uint32_t index, int up, int64_t now_us)
{
    if (target == CRASH_SERVER) {
        p->server_down = !up;
        if (up)
            for (uint32_t h = 0; h < p->t->nh; h++)
                if (is_prod(p, h))
                    process_schedule(p, h, now_us);
        acts_run(p, now_us);
        return;
    }
    if ((target != CRASH_WORKER || index != 0) && target != CRASH_WORKERS)
        return; /* one worker process */
    p->worker_down = !up;
    if (!up) {
        p->busy = 0;
        struct jobtab *acts = &p->d->acts;
        for (uint64_t id = jobs_next_kept(acts, 0); id < acts->n; id = jobs_next_kept(acts, id + 1)) {
            struct job *j = jobs_get(acts, id);
            if (j->status == JOB_RUNNING && j->run) {
                struct sim_run_info ri;
                sim_run_get(p->sim, j->run, &ri);
                if (!ri.active && ri.outcome == OUT_CRASHED && ri.end_us == now_us)
                    attempt_died(p, id, now_us);
            }
        }
    }
    acts_run(p, now_us);
}

static void tp_on_stop(struct policy *p, int64_t now_us) { p->stopping = 1; }

const struct policy_ops policy_temporal_schedule = {
    .abi = POLICY_ABI,
    .name = "temporal_schedule",
    .summary = "Temporal Schedules: overlap policies, catch-up window, jitter; activity retry (1 s x2, max 100 s) "
               "and start-to-close / heartbeat timeouts",
    .seeds = "docs.temporal.io (Schedules, Retry Policies, Activity timeouts); temporalio/api; temporalio/temporal "
             "service/worker/scheduler",
    .params = tp_params,
    .nparams = (int)(sizeof tp_params / sizeof tp_params[0]),
    .durable_size = sizeof(struct tp_durable),
    /* One execution per action (and per event): an attempt retried while
     * the timed-out one still runs breaks it. */
    .promise = PROMISE_UNIT,
    .items_volatile = 0,
    .create = tp_create,
    .destroy = tp_destroy,
    .start = tp_start,
    .on_publish = tp_on_publish,
    .on_timer = tp_on_timer,
    .on_run_end = tp_on_run_end,
    .on_trigger = NULL,
    .on_part = tp_on_part,
    .on_horizon = NULL,
    .on_stop = tp_on_stop,
    .check_params = tp_check_params,
};
