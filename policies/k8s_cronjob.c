/* k8s_cronjob.c: Kubernetes CronJobs, as the CronJob controller (v2, the
 * only one since 1.23, or the old v1 polling controller) and the Job
 * controller run them.  docs/policy-k8s_cronjob.md has the rules with their
 * sources; this comment is the map.
 *
 * Mapping.  Each producer instance is one CronJob whose schedule is the
 * producer's; each fire the controller acts on creates a Job, whose pod is
 * a run of the producer serving that fire.  The host is the cluster: a host
 * crash is the cluster going down (pods die with it), `crash server` is the
 * kube-controller-manager alone (CronJob and Job controllers stop, running
 * pods go on).  Consumers are not CronJobs: they are Deployments that
 * process their topic as events arrive (sim/conrun.h), restarted after a
 * failure with the kubelet's CrashLoopBackOff (at once the first time, then
 * 10 s doubling, at most 5 min).
 *
 * The controller's sync of one CronJob at time now (both controllers):
 *   earliest = lastScheduleTime (before the first: the CronJob's creation,
 *   just before t = 0), or now - startingDeadlineSeconds if later;
 *   the unmet fires are those in (earliest, now]; none: nothing to do.
 *   v1 walks them: more than 100: an error, nothing started, and since
 *   lastScheduleTime does not move the error repeats for ever.  v2
 *   estimates their number from the first interval and searches for the
 *   latest from there (v2_most_recent: it may find none, dropping it); an
 *   estimate over 100 is a warning only.  Either way only the most recent
 *   unmet fire may start.
 *   v2: a fire in the same UTC minute as lastScheduleTime: its Job's name
 *   (CronJob + Unix minute) is taken, no Job (same_job_name).
 *   Forbid with an active Job: skipped (still unmet: it starts when the Job
 *   ends, while within the deadline).  Replace: the active Jobs are deleted
 *   (their pods killed).  Then a Job for the fire; lastScheduleTime = fire.
 * v1 syncs every CronJob in a loop that starts a pass check_period after
 * the previous one ended (a pass lasts up to list_time, uniform: listing
 * every Job and CronJob of the cluster); v2 syncs one CronJob at its next
 * fire + 100 ms, when one of its Jobs ends, at an unsuspend and when the
 * controller starts.  Fires are those of robfig/cron v3 in the schedule's
 * zone (time_zone): every instant whose wall time matches, so a repeated
 * wall time fires twice and a time in a spring-forward gap never
 * (CAL_DST_ABSOLUTE).
 *
 * A Job runs one pod at a time: a failed pod is replaced after 10 s, 20 s,
 * 40 s ... (at most 10 min) until backoffLimit failures fail the Job
 * (restartPolicy Never).  With OnFailure the kubelet restarts the container
 * in its pod (CrashLoopBackOff) and the Job fails when the pod's restarts
 * reach backoffLimit.  With a cluster capacity, pods beyond it wait
 * (Pending) in creation order.
 *
 * Key invariant: a Job row is PENDING (its pod waits: backoff or capacity,
 * available_us = when it may start), RUNNING (its pod `run` is active, or
 * was when the host went down) or finished; the CronJob's active list holds
 * exactly its PENDING and RUNNING rows; `running` counts RUNNING rows.
 *
 * Durable: each CronJob's lastScheduleTime, last Job and active list, the
 * Job rows (the API server's objects, with their pod's restart count)
 * while they are active: a finished Job's row is forgotten (job_end).
 * Volatile: the controllers' timers and the kubelet's restart timers. */
#include <stdlib.h>

#include "sim/backoff.h"
#include "sim/cal.h"
#include "sim/conrun.h"
#include "sim/jobs.h"
#include "sim/policy_api.h"
#include "sim/rng.h"
#include "sim/util.h"

enum { T_SYNC = 1, T_TICK, T_POD, T_CON, T_UNSUSPEND, T_RESTART };
enum { CTRL_V2, CTRL_V1 };
enum { CONC_ALLOW, CONC_FORBID, CONC_REPLACE };
enum { CALENDAR_ROBFIG, CALENDAR_CRONIE };
enum { RESTART_NEVER, RESTART_ON_FAILURE };

/* A Job row's tag (restart_policy=on_failure): its pod's container restarts
 * so far, and whether the kubelet is waiting to restart it. */
#define RESTART_WAIT 0x80000000u
#define RESTART_COUNT(tag) ((tag) & ~RESTART_WAIT)

#define NONE UINT64_MAX

struct kc_cj {                     /* one CronJob */
    int64_t last_sched;            /* status.lastScheduleTime; -1 none */
    uint64_t last_job;             /* the Job created last (row id; NONE: none) */
    uint64_t *act;                 /* status.active: Job rows */
    uint32_t nact, act_cap;
};

struct kc_durable {
    int init;
    struct kc_cj *cj;              /* [nh]: producers' */
    struct jobtab jobs;            /* Jobs: due_us the nominal due */
};

struct policy {
    struct sim *sim;
    struct kc_durable *d;
    const struct sim_topo *t;

    int ctrl, conc;
    int64_t deadline_us;           /* -1: no startingDeadlineSeconds */
    int suspend;
    int64_t susp_from_us, susp_to_us; /* suspended in [from, to) when suspend */
    uint32_t missed_limit, backoff_limit, capacity;
    int on_failure;                /* restart_policy=on_failure */
    struct backoff crash_backoff;  /* the kubelet's CrashLoopBackOff */
    int64_t check_us, list_us, requeue_us;
    struct backoff pod_backoff;
    struct sim_sched_opts opts;

    int *sync_alarm;               /* [nh] v2: each CronJob's requeue */
    int pod_alarm, unsuspend_alarm;
    sim_timer pass;                /* v1: the next pass of the loop */
    uint8_t *stuck;                /* [nh] v1: FailedNeedsStart already noted */
    uint32_t running;              /* RUNNING Job rows */
    int server_down, stopping;
    struct conrun *con;
};

static const struct param_def kc_params[] = {
    {"controller", PARAM_ENUM, "v2", "v2|v1", 0, 0,
     "kubernetes/kubernetes PR #93370 (v2, default since 1.21), PR #104470 \"Remove GAed feature gate "
     "CronJobControllerV2\" (v1 removed in 1.23)",
     "v2: informer-driven, one sync per CronJob at its next fire + 100 ms; v1: every CronJob on a 10 s loop"},
    {"concurrency_policy", PARAM_ENUM, "Allow", "Allow|Forbid|Replace", 0, 0,
     "kubernetes.io/docs/concepts/workloads/controllers/cron-jobs (Concurrency policy)",
     "Allow: Jobs may overlap; Forbid: skip a fire while a Job is active; Replace: delete the active Jobs first"},
    {"starting_deadline_seconds", PARAM_INT, "-1", NULL, -1, 1000000000,
     "cron-jobs docs (Deadline for delayed Job start); CronJobSpec.startingDeadlineSeconds (unset by default)",
     "-1: unset; else a fire older than now - this is never started (and not counted as missed)"},
    {"suspend", PARAM_BOOL, "false", NULL, 0, 1, "cron-jobs docs (Schedule suspension); CronJobSpec.suspend",
     "the CronJob is suspended from suspend_at for suspend_for: no Job is created meanwhile"},
    {"suspend_at", PARAM_DURATION, "0", NULL, 0, 3660 * US_PER_DAY, "simrun: when spec.suspend is set to true",
     "instant (after the start) the suspension begins"},
    {"suspend_for", PARAM_DURATION, "0", NULL, 0, 3660 * US_PER_DAY,
     "simrun: when spec.suspend is set back to false", "length of the suspension; 0: until the end"},
    {"time_zone", PARAM_ZONE, "local", NULL, 0, 0, "cron-jobs docs (Time zones); CronJobSpec.timeZone",
     "zone the schedule is read in; local: the schedule's own (the controller manager's zone)"},
    {"calendar", PARAM_ENUM, "robfig", "robfig|cronie", 0, 0,
     "robfig/cron v3 spec.go SpecSchedule.Next (wall-clock match per instant); issue kubernetes/kubernetes#121594",
     "robfig: a repeated wall time fires twice, one in a gap never; cronie: the scenario's rule (docs/calendar.md)"},
    {"missed_limit", PARAM_INT, "100", NULL, 1, 1000000,
     "pkg/controller/cronjob/utils.go: v1 getRecentUnmetScheduleTimes counts the fires (> 100: error); "
     "v2 mostRecentScheduleTime estimates (now - t1) / (t2 - t1) + 1 (> 100: warning)",
     "more unmet fires than this: v1 starts nothing (error FailedNeedsStart, for ever), v2 only warns"},
    {"check_period", PARAM_DURATION, "10s", NULL, US_PER_MS, US_PER_DAY,
     "v1 cronjob_controller.go Run: wait.Until(jm.syncAll, 10*time.Second)", "controller=v1: the sync loop's period"},
    {"list_time", PARAM_DURATION, "0", NULL, 0, US_PER_DAY,
     "simrun: v1 wait.Until counts the period from the end of a pass, which lists every Job and CronJob",
     "controller=v1: each pass takes uniform [0, this]; the next starts check_period after it ends"},
    {"requeue_delay", PARAM_DURATION, "100ms", NULL, 0, US_PER_DAY,
     "v2 cronjob_controllerv2.go nextScheduleDelta = 100 * time.Millisecond",
     "controller=v2: a CronJob is synced this long after its next fire"},
    {"backoff_limit", PARAM_INT, "6", NULL, 0, 1000000,
     "kubernetes.io/docs/concepts/workloads/controllers/job (Pod backoff failure policy): backoffLimit 6",
     "failed pods after which a Job fails"},
    {"pod_backoff", PARAM_DURATION, "10s", NULL, 0, US_PER_DAY,
     "pkg/controller/job/job_controller.go DefaultJobPodFailureBackOff = 10 * time.Second; backoff_utils.go "
     "getRemainingTimeForFailuresCount doubles it per failure",
     "delay before the first replacement pod, doubling each time"},
    {"pod_backoff_max", PARAM_DURATION, "10m", NULL, 0, US_PER_DAY,
     "pkg/controller/job/job_controller.go MaxJobPodFailureBackOff = 10 * time.Minute (the Job docs' "
     "\"capped at six minutes\" is the older MaxJobBackOff = 360 s)",
     "largest delay before a replacement pod"},
    {"restart_policy", PARAM_ENUM, "never", "never|on_failure", 0, 0,
     "Job docs (Handling Pod and container failures): restartPolicy OnFailure or Never; job_controller.go "
     "pastBackoffLimitOnFailure",
     "never: a failed pod is replaced by a new one; on_failure: the kubelet restarts the container in "
     "place (CrashLoopBackOff) and the Job fails when the restarts reach backoffLimit"},
    {"cluster_capacity", PARAM_INT, "0", NULL, 0, 10000000,
     "simrun: the cluster's room for Job pods (a pod that does not fit stays Pending)",
     "0: unlimited; else at most this many Job pods run at once, the others wait in creation order"},
};

/* --- schedules ------------------------------------------------------------------ */

static int is_prod(const struct policy *p, uint32_t h) { return p->t->h_kind[h] == H_PRODUCER; }

static int64_t next_fire(const struct policy *p, uint32_t h, int64_t after_us)
{
    return sim_sched_next_opt(p->sim, h, after_us, 0, &p->opts);
}

/* The nominal due a fire serves: the latest nominal instant <= fire (a
 * second fire in a repeated hour serves the same day's due again). */
static int64_t nominal_of(struct policy *p, uint32_t h, int64_t fire)
{
    int64_t n = sim_sched_prev(p->sim, h, fire);
    return n >= 0 ? n : fire;
}

static int suspended(const struct policy *p, int64_t now_us)
{
    return p->suspend && now_us >= p->susp_from_us && now_us < p->susp_to_us;
}

/* --- Jobs and pods ------------------------------------------------------------------ */

static void act_remove(struct policy *p, uint32_t h, uint64_t id)
{
    struct kc_cj *cj = &p->d->cj[h];
    for (uint32_t i = 0; i < cj->nact; i++)
        if (cj->act[i] == id) {
            cj->act[i] = cj->act[--cj->nact];
            return;
        }
    SIM_ASSERT(0 && "Job row not in its CronJob's active list");
}

/* A Job finishes: it leaves its CronJob's active list, and its row is
 * forgotten.  Kubernetes keeps the last few finished Jobs of a CronJob
 * (successfulJobsHistoryLimit 3, failedJobsHistoryLimit 1) for people to
 * look at and deletes the rest; no controller decision reads a finished
 * Job, so the table keeps none and its memory follows the Jobs in play.
 * A pod of a forgotten Job that ends later is a pod of a deleted Job. */
static void job_end(struct policy *p, uint64_t id, enum job_status st)
{
    struct job *j = jobs_get(&p->d->jobs, id);
    if (j->status == JOB_RUNNING)
        p->running--;
    uint32_t h = j->handler;
    jobs_update(&p->d->jobs, id, st, SIM_NEVER);
    act_remove(p, h, id);
    jobs_forget(&p->d->jobs, id);
}

/* The Job's container starts: in a new pod, or again in its pod. */
static void container_start(struct policy *p, uint64_t id)
{
    struct job *j = jobs_get(&p->d->jobs, id);
    struct run_req rq = RUN_REQ_INIT;
    rq.handler = j->handler;
    rq.reason = j->attempts || j->tag ? REASON_RETRY : REASON_SCHEDULE;
    rq.due_us = j->due_us;
    rq.retry_of = j->run;
    rq.tag = id;
    uint64_t run = sim_run_start(p->sim, &rq);
    j = jobs_get(&p->d->jobs, id);
    j->run = run;
}

static void pod_start(struct policy *p, uint64_t id)
{
    jobs_get(&p->d->jobs, id)->tag = 0; /* a new pod: no restarts yet */
    container_start(p, id);
    jobs_update(&p->d->jobs, id, JOB_RUNNING, SIM_NEVER);
    p->running++;
}

/* The Job controller: pods for the Jobs whose pod may start, while the
 * cluster has room; then an alarm at the next backoff's end. */
static void pods_try(struct policy *p, int64_t now_us)
{
    if (p->server_down || p->stopping)
        return;
    uint64_t id;
    while ((p->capacity == 0 || p->running < p->capacity) && (id = jobs_next_due(&p->d->jobs, now_us)) != NONE)
        pod_start(p, id);
    int64_t at = SIM_NEVER;
    if (jobs_peek(&p->d->jobs, &at) == NONE || at <= now_us)
        at = SIM_NEVER; /* nothing waits for time: a pod's end brings room */
    sim_alarm(p->sim, p->pod_alarm, at);
}

static uint64_t job_create(struct policy *p, uint32_t h, int64_t fire, int64_t now_us)
{
    struct job j = {.handler = h, .status = JOB_PENDING, .available_us = now_us,
                    .due_us = nominal_of(p, h, fire), .item = UINT64_MAX};
    uint64_t id = jobs_add(&p->d->jobs, &j);
    struct kc_cj *cj = &p->d->cj[h];
    if (cj->nact == cj->act_cap) {
        cj->act_cap = cj->act_cap ? cj->act_cap * 2 : 4;
        cj->act = sim_drealloc(p->sim, cj->act, cj->act_cap * sizeof *cj->act);
    }
    cj->act[cj->nact++] = id;
    return id;
}

/* A pod failed (or died with the cluster): the Job retries after the
 * backoff, or fails at its backoffLimit. */
static void pod_failed(struct policy *p, uint64_t id, int64_t now_us)
{
    struct job *j = jobs_get(&p->d->jobs, id);
    uint32_t n = ++j->attempts;
    if (n > p->backoff_limit) {
        job_end(p, id, JOB_FAILED);
        return;
    }
    if (j->status == JOB_RUNNING)
        p->running--;
    j->tag = 0; /* the next pod starts with no restarts */
    jobs_update(&p->d->jobs, id, JOB_PENDING, now_us + backoff_delay(&p->pod_backoff, n));
}

/* restart_policy=on_failure: the container failed; its pod stays (RUNNING,
 * holding its room).  The kubelet restarts it at once the first time, then
 * after 10 s, 20 s ... at most 5 min (kubeGenericRuntimeManager.doBackOff:
 * no back-off entry yet, then flowcontrol.Backoff from 10 s to
 * MaxContainerBackOff = 300 s). */
static void container_failed(struct policy *p, uint64_t id, int64_t now_us)
{
    struct job *j = jobs_get(&p->d->jobs, id);
    uint32_t k = RESTART_COUNT(j->tag) + 1; /* the restart to come */
    int64_t delay = backoff_delay(&p->crash_backoff, k);
    j->tag |= RESTART_WAIT;
    sim_timer_at(p->sim, now_us + delay, T_RESTART, id);
}

/* pastBackoffLimitOnFailure: the Job fails once its pod's restarts reach
 * backoffLimit (with 0: at the first restart). */
static int past_restart_limit(const struct policy *p, const struct job *j)
{
    uint32_t n = RESTART_COUNT(j->tag);
    return p->backoff_limit == 0 ? n > 0 : n >= p->backoff_limit;
}

/* The Job controller fails a Job past its restart limit, killing its pod. */
static int restart_limit_check(struct policy *p, uint64_t id)
{
    struct job *j = jobs_get(&p->d->jobs, id);
    if (!p->on_failure || j->status != JOB_RUNNING || !past_restart_limit(p, j))
        return 0;
    if (!(j->tag & RESTART_WAIT))
        sim_run_cancel(p->sim, j->run);
    sim_note(p->sim, j->handler, "BackoffLimitExceeded: %u container restarts", RESTART_COUNT(j->tag));
    job_end(p, id, JOB_FAILED);
    return 1;
}

/* The kubelet restarts the container: its restart count goes up, which the
 * Job controller (if up) sees at once. */
static void container_restart(struct policy *p, uint64_t id)
{
    struct job *j = jobs_find(&p->d->jobs, id);
    if (!j || j->status != JOB_RUNNING || !(j->tag & RESTART_WAIT))
        return; /* the Job was deleted (Replace) meanwhile */
    j->tag = RESTART_COUNT(j->tag) + 1;
    if (!p->server_down && restart_limit_check(p, id))
        return;
    container_start(p, id);
}

/* Replace: every active Job of the CronJob is deleted, its pod killed. */
static void jobs_delete_all(struct policy *p, uint32_t h)
{
    struct kc_cj *cj = &p->d->cj[h];
    while (cj->nact > 0) {
        uint64_t id = cj->act[cj->nact - 1];
        struct job *j = jobs_get(&p->d->jobs, id);
        if (j->status == JOB_RUNNING && !(j->tag & RESTART_WAIT))
            sim_run_cancel(p->sim, j->run);
        job_end(p, id, JOB_FAILED);
    }
}

/* --- the CronJob controller ------------------------------------------------------ */

/* v2 names a Job after its CronJob and the fire's Unix time in minutes
 * (cronjob_controllerv2.go getJobName, utils.go getTimeHashInMinutes):
 * two fires in one UTC minute share a name.  (v1 used the Unix seconds.) */
static int same_job_name(const struct policy *p, int64_t a_us, int64_t b_us)
{
    int64_t a = sim_utc_s(p->sim, a_us), b = sim_utc_s(p->sim, b_us);
    return (a - ((a % 60) + 60) % 60) == (b - ((b % 60) + 60) % 60);
}

#define V2_BAD_SCHEDULE (-2)

/* v2's choice of the fire to act on (utils.go mostRecentScheduleTime, as
 * since 1.28): t1 and t2 are the first two fires after earliest; with now
 * before t1 there is none, before t2 it is t1.  Otherwise the gap t2 - t1,
 * rounded to whole seconds, is taken for every interval: the estimate of
 * unmet fires is n = (whole seconds from t1 to now) / gap + 1, and the
 * search walks the fires from t1 + (n - 2) * gap up to now, keeping the
 * last.  For a schedule whose later intervals are longer than the first
 * the search can start past the latest unmet fire: it finds none (-1) and
 * that fire is dropped.  *est: n (0 when now is before t2).
 * V2_BAD_SCHEDULE: a gap under a second (the code's InvalidSchedule). */
static int64_t v2_most_recent(struct policy *p, uint32_t h, int64_t earliest, int64_t now_us, int64_t *est)
{
    *est = 0;
    int64_t t1 = next_fire(p, h, earliest);
    if (t1 == SIM_NEVER || now_us < t1)
        return -1;
    int64_t t2 = next_fire(p, h, t1);
    if (t2 == SIM_NEVER || now_us < t2)
        return t1;
    int64_t gap_s = (t2 - t1 + US_PER_S / 2) / US_PER_S;
    if (gap_s < 1)
        return V2_BAD_SCHEDULE;
    int64_t n = (now_us - t1) / US_PER_S / gap_s + 1;
    *est = n;
    int64_t last = -1;
    for (int64_t t = next_fire(p, h, t1 + (n - 2) * gap_s * US_PER_S); t != SIM_NEVER && t <= now_us;
         t = next_fire(p, h, t))
        last = t;
    return last;
}

/* One sync of CronJob h (the rules at the head of the file); returns the
 * instant it next has something to do (SIM_NEVER: only an event can wake
 * it). */
static int64_t sync_cj(struct policy *p, uint32_t h, int64_t now_us)
{
    struct kc_cj *cj = &p->d->cj[h];
    if (suspended(p, now_us))
        return SIM_NEVER; /* the unsuspend brings it back */
    int64_t earliest = cj->last_sched;
    if (p->deadline_us >= 0 && now_us - p->deadline_us > earliest)
        earliest = now_us - p->deadline_us;
    int64_t due = -1;
    if (p->ctrl == CTRL_V1) {
        uint64_t n = 0;
        for (int64_t t = next_fire(p, h, earliest); t != SIM_NEVER && t <= now_us; t = next_fire(p, h, t)) {
            due = t;
            if (++n > p->missed_limit)
                break;
        }
        if (n == 0)
            return next_fire(p, h, earliest);
        if (n > p->missed_limit) {
            if (!p->stuck[h])
                sim_note(p->sim, h, "FailedNeedsStart: too many missed start times (> %u)", p->missed_limit);
            p->stuck[h] = 1;
            return SIM_NEVER; /* lastScheduleTime stays: the same error at every pass */
        }
    } else {
        int64_t est;
        due = v2_most_recent(p, h, earliest, now_us, &est);
        if (due == V2_BAD_SCHEDULE) {
            sim_note(p->sim, h, "InvalidSchedule: two fires less than a second apart");
            return SIM_NEVER; /* not reconciled again until the spec changes */
        }
        if (due < 0) {
            if (est > 0)
                sim_note(p->sim, h, "No unmet start times: the search from the estimate (%lld missed) "
                         "starts past the latest unmet fire", (long long)est);
            return next_fire(p, h, now_us);
        }
        if (est > (int64_t)p->missed_limit)
            sim_note(p->sim, h, "TooManyMissedTimes: an estimated %lld missed start times (> %u)",
                     (long long)est, p->missed_limit);
    }
    if (p->ctrl == CTRL_V2 && cj->last_sched >= 0 && same_job_name(p, due, cj->last_sched)) {
        /* The Job's name is the CronJob's and the fire's minute: the Job of
         * lastScheduleTime has it already.  Still active: the fire counts as
         * processed (inActiveListByName); finished: the create fails with
         * AlreadyExists and that Job is taken for this fire. */
        struct job *j = cj->last_job != NONE ? jobs_find(&p->d->jobs, cj->last_job) : NULL;
        if (!j || (j->status != JOB_PENDING && j->status != JOB_RUNNING))
            cj->last_sched = due;
        sim_note(p->sim, h, "Job name taken: a Job for this minute exists, none created");
        return next_fire(p, h, now_us);
    }
    if (p->conc == CONC_FORBID && cj->nact > 0) {
        sim_note(p->sim, h, "JobAlreadyActive: fire skipped (Forbid)");
        return next_fire(p, h, now_us);
    }
    if (p->conc == CONC_REPLACE)
        jobs_delete_all(p, h);
    cj->last_job = job_create(p, h, due, now_us);
    cj->last_sched = due;
    return next_fire(p, h, due);
}

static void requeue(struct policy *p, uint32_t h, int64_t at_us)
{
    sim_alarm(p->sim, p->sync_alarm[h], at_us == SIM_NEVER ? SIM_NEVER : at_us + p->requeue_us);
}

/* v1: one pass over every CronJob; the next one starts check_period after
 * this one ends.  The loop never sleeps longer: every pass is a wake-up. */
static void v1_pass(struct policy *p, int64_t now_us)
{
    for (uint32_t h = 0; h < p->t->nh; h++)
        if (is_prod(p, h))
            sync_cj(p, h, now_us);
    int64_t took = p->list_us ? (int64_t)rng_below(sim_policy_rng(p->sim), (uint64_t)p->list_us + 1) : 0;
    p->pass = sim_timer_at(p->sim, now_us + took + p->check_us, T_TICK, 0);
}

/* The controller looks at every CronJob: v1's pass, or v2's informer
 * resync (at its start, an unsuspend). */
static void sync_all(struct policy *p, int64_t now_us)
{
    if (p->server_down || p->stopping)
        return;
    if (p->on_failure) /* restarts while the Job controller was away */
        for (uint32_t h = 0; h < p->t->nh; h++) {
            struct kc_cj *cj = is_prod(p, h) ? &p->d->cj[h] : NULL;
            for (uint32_t i = 0; cj && i < cj->nact;)
                if (!restart_limit_check(p, cj->act[i]))
                    i++;
        }
    if (p->ctrl == CTRL_V1) {
        v1_pass(p, now_us);
    } else {
        for (uint32_t h = 0; h < p->t->nh; h++)
            if (is_prod(p, h))
                requeue(p, h, sync_cj(p, h, now_us));
    }
    pods_try(p, now_us);
}

/* --- hooks -------------------------------------------------------------------------- */

static struct policy *kc_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct policy *p = xcalloc(1, sizeof *p);
    p->sim = sim;
    p->d = durable;
    p->t = sim_topo(sim);
    p->ctrl = (int)params_get(ps, "controller");
    p->conc = (int)params_get(ps, "concurrency_policy");
    int64_t dl = params_get(ps, "starting_deadline_seconds");
    p->deadline_us = dl < 0 ? -1 : dl * US_PER_S;
    p->suspend = (int)params_get(ps, "suspend");
    p->susp_from_us = params_get(ps, "suspend_at");
    int64_t len = params_get(ps, "suspend_for");
    p->susp_to_us = len ? p->susp_from_us + len : SIM_NEVER;
    p->missed_limit = (uint32_t)params_get(ps, "missed_limit");
    p->check_us = params_get(ps, "check_period");
    p->list_us = params_get(ps, "list_time");
    p->requeue_us = params_get(ps, "requeue_delay");
    p->backoff_limit = (uint32_t)params_get(ps, "backoff_limit");
    p->pod_backoff = backoff_exp(params_get(ps, "pod_backoff"), params_get(ps, "pod_backoff_max"), 0);
    p->capacity = (uint32_t)params_get(ps, "cluster_capacity");
    p->on_failure = params_get(ps, "restart_policy") == RESTART_ON_FAILURE;
    p->crash_backoff = backoff_first_at_once(backoff_exp(10 * US_PER_S, 300 * US_PER_S, 0));
    p->opts.zone = params_zone(ps, "time_zone", NULL);
    p->opts.dst = params_get(ps, "calendar") == CALENDAR_ROBFIG ? CAL_DST_ABSOLUTE : CAL_DST_CRONIE;

    p->sync_alarm = xcalloc(p->t->nh + 1, sizeof *p->sync_alarm);
    p->stuck = xcalloc(p->t->nh + 1, 1);
    for (uint32_t h = 0; h < p->t->nh; h++)
        p->sync_alarm[h] = sim_alarm_new(sim, T_SYNC, h);
    p->pod_alarm = sim_alarm_new(sim, T_POD, 0);
    p->unsuspend_alarm = sim_alarm_new(sim, T_UNSUSPEND, 0);
    struct conrun_cfg cc = {.tag = T_CON, .retry = 1, .backoff = p->crash_backoff};
    p->con = conrun_create(sim, &cc);

    struct kc_durable *d = p->d;
    if (!d->init) {
        d->init = 1;
        jobs_init(&d->jobs, sim_durable_realloc, sim);
        d->cj = sim_dalloc(sim, (p->t->nh + 1) * sizeof *d->cj);
        for (uint32_t h = 0; h < p->t->nh; h++)
            d->cj[h] = (struct kc_cj){.last_sched = -1, .last_job = NONE};
    }
    sim_declare_rows(sim, d->cj, sizeof *d->cj);
    sim_declare_run_rows(sim, &d->jobs);
    sim_declare_rows(sim, p->sync_alarm, sizeof *p->sync_alarm);
    sim_declare_handler_tag(sim, T_SYNC);
    return p;
}

static void kc_destroy(struct policy *p)
{
    conrun_destroy(p->con);
    free(p->sync_alarm);
    free(p->stuck);
    free(p);
}

/* At a restart the pods that were running died with the cluster: each is a
 * failed pod of its Job. */
static void recover_pods(struct policy *p, int64_t now_us)
{
    p->running = 0;
    for (uint32_t h = 0; h < p->t->nh; h++) {
        if (!is_prod(p, h))
            continue;
        struct kc_cj *cj = &p->d->cj[h];
        for (uint32_t i = 0; i < cj->nact;) {
            uint64_t id = cj->act[i];
            struct job *j = jobs_get(&p->d->jobs, id);
            uint32_t before = cj->nact;
            if (j->status == JOB_RUNNING) {
                p->running++;
                pod_failed(p, id, now_us);
            }
            if (cj->nact == before)
                i++; /* still active: a Job that failed left the list */
        }
    }
}

static void kc_start(struct policy *p, int restart, int64_t now_us)
{
    if (restart)
        recover_pods(p, now_us);
    if (p->ctrl == CTRL_V2 && p->suspend && p->susp_to_us != SIM_NEVER && now_us < p->susp_to_us)
        sim_alarm(p->sim, p->unsuspend_alarm, p->susp_to_us);
    sync_all(p, now_us);
    conrun_start(p->con, now_us);
}

static void kc_on_publish(struct policy *p, uint32_t h, uint64_t item, int64_t now_us)
{
    conrun_on_publish(p->con, h, now_us);
}

static void kc_on_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now_us)
{
    switch (tag) {
    case T_SYNC:
        if (!p->server_down) {
            requeue(p, (uint32_t)arg, sync_cj(p, (uint32_t)arg, now_us));
            pods_try(p, now_us);
        }
        break;
    case T_TICK:
        p->pass = 0;
        if (!p->server_down && !p->stopping) {
            v1_pass(p, now_us);
            pods_try(p, now_us);
        }
        break;
    case T_POD:
        pods_try(p, now_us);
        break;
    case T_UNSUSPEND:
        sync_all(p, now_us);
        break;
    case T_CON:
        conrun_on_timer(p->con, arg, now_us);
        break;
    case T_RESTART:
        container_restart(p, arg);
        break;
    default:
        SIM_ASSERT(0 && "unknown timer tag");
    }
}

static void kc_on_run_end(struct policy *p, const struct run_result *r, int64_t now_us)
{
    if (conrun_on_run_end(p->con, r, now_us))
        return;
    uint64_t id = r->tag;
    struct job *j = jobs_find(&p->d->jobs, id);
    if (!j || j->status != JOB_RUNNING || j->run != r->run)
        return; /* a pod of a Job deleted meanwhile (or failed since) */
    if (r->outcome == OUT_COMMITTED)
        job_end(p, id, JOB_COMPLETED);
    else if (p->on_failure)
        container_failed(p, id, now_us);
    else
        pod_failed(p, id, now_us);
    if (p->stopping || p->server_down)
        return; /* the controllers see it when they are back */
    if (p->ctrl == CTRL_V2)
        requeue(p, r->handler, sync_cj(p, r->handler, now_us)); /* v1: the next pass sees it */
    pods_try(p, now_us);
}

static void kc_on_part(struct policy *p, int target, uint32_t index, int up, int64_t now_us)
{
    if (target != CRASH_SERVER)
        return; /* nodes are not modelled: pods die only with the cluster */
    if (!up) {
        p->server_down = 1;
        for (uint32_t h = 0; h < p->t->nh; h++)
            sim_alarm(p->sim, p->sync_alarm[h], SIM_NEVER);
        sim_alarm(p->sim, p->pod_alarm, SIM_NEVER);
        sim_timer_cancel(p->sim, p->pass);
        p->pass = 0;
    } else if (p->server_down) {
        p->server_down = 0;
        sync_all(p, now_us);
    }
}

static void kc_on_stop(struct policy *p, int64_t now_us)
{
    p->stopping = 1;
    conrun_stop(p->con);
}

const struct policy_ops policy_k8s_cronjob = {
    .abi = POLICY_ABI,
    .name = "k8s_cronjob",
    .summary = "Kubernetes CronJobs: concurrency policy, starting deadline, the 100-missed rule, v1/v2 "
               "controllers, robfig DST",
    .seeds = "kubernetes.io CronJob and Job docs; kubernetes/kubernetes pkg/controller/cronjob",
    .params = kc_params,
    .nparams = (int)(sizeof kc_params / sizeof kc_params[0]),
    .durable_size = sizeof(struct kc_durable),
    /* One Job per scheduled time (the Job name is derived from it): a fire
     * that runs twice at once breaks it; Jobs of different fires may overlap
     * under Allow by design. */
    .promise = PROMISE_UNIT,
    .items_volatile = 0,
    .create = kc_create,
    .destroy = kc_destroy,
    .start = kc_start,
    .on_publish = kc_on_publish,
    .on_timer = kc_on_timer,
    .on_run_end = kc_on_run_end,
    .on_trigger = NULL,
    .on_part = kc_on_part,
    .on_horizon = NULL,
    .on_stop = kc_on_stop,
};
