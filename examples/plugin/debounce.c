/* debounce.c: an example policy plugin.  Build it against an installed
 * simrun with the Makefile beside it (`make`), then:
 *
 *     simrun run mail.scn --policy ./debounce.so -p debounce,oracle
 *
 * A consumer runs `delay` after the oldest item it has pending (so that a
 * burst is taken in one run), one run at a time; after a run that took
 * nothing it waits for a new item or the time its script asked to be woken
 * at.  A producer runs at each fire of its schedule.  Durable: per
 * producer, the first fire not yet committed.  Volatile: per handler an
 * alarm and the wake time of an empty run; the stopping flag.
 * The policy is the one symbol simrun looks for, `simrun_policy`. */
#include <stdlib.h>

#include "sim/policy_api.h"

static const struct param_def debounce_params[] = {
    {"delay", PARAM_DURATION, "30s", NULL, 0, INT64_C(86400000000), "examples/plugin",
     "how long a consumer waits after its oldest pending item"},
};

struct debounce_durable {
    int64_t *next_due;             /* [nh] producers: the first fire not yet committed */
};

struct policy {
    struct sim *sim;
    struct debounce_durable *d;
    const struct sim_topo *t;
    int64_t delay_us;
    int *alarm;                    /* [nh] */
    int64_t *idle_until;           /* [nh] consumers: after an empty run, its wake request */
    int stopping;
};

/* Runs handler h if its work is due now; else sets its alarm for when. */
static void try_run(struct policy *p, uint32_t h, int64_t now_us)
{
    if (p->stopping || sim_active_runs(p->sim, h))
        return; /* on_run_end comes back here */
    struct run_req rq = RUN_REQ_INIT;
    rq.handler = h;
    int64_t due;
    if (p->t->h_kind[h] == H_PRODUCER) {
        rq.reason = REASON_SCHEDULE;
        rq.due_us = due = p->d->next_due[h];
    } else {
        rq.reason = REASON_EVENT;
        int64_t oldest = sim_pending_oldest(p->sim, h);
        due = oldest == SIM_NEVER ? SIM_NEVER : oldest + p->delay_us;
        if (due < p->idle_until[h])
            due = p->idle_until[h];
    }
    if (due > now_us) {
        sim_alarm(p->sim, p->alarm[h], due); /* SIM_NEVER disarms */
        return;
    }
    sim_run_start(p->sim, &rq);
}

static struct policy *debounce_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct policy *p = xcalloc(1, sizeof *p);
    p->sim = sim;
    p->d = durable;
    p->t = sim_topo(sim);
    p->delay_us = params_get(ps, "delay");
    p->alarm = xcalloc(p->t->nh + 1, sizeof *p->alarm);
    p->idle_until = xcalloc(p->t->nh + 1, sizeof *p->idle_until);
    for (uint32_t h = 0; h < p->t->nh; h++)
        p->alarm[h] = sim_alarm_new(sim, 0, h);
    if (!p->d->next_due) { /* deploy: the durable block is still zeroed */
        p->d->next_due = sim_dalloc(sim, (p->t->nh + 1) * sizeof *p->d->next_due);
        for (uint32_t h = 0; h < p->t->nh; h++)
            p->d->next_due[h] = sim_sched_next(sim, h, 0, 1);
    }
    return p;
}

static void debounce_destroy(struct policy *p)
{
    free(p->alarm);
    free(p->idle_until);
    free(p);
}

static void debounce_start(struct policy *p, int restart, int64_t now_us)
{
    for (uint32_t h = 0; h < p->t->nh; h++)
        try_run(p, h, now_us);
}

static void debounce_on_publish(struct policy *p, uint32_t h, uint64_t item, int64_t now_us)
{
    p->idle_until[h] = 0; /* new input: look again */
    try_run(p, h, now_us);
}

static void debounce_on_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now_us)
{
    try_run(p, (uint32_t)arg, now_us);
}

static void debounce_on_run_end(struct policy *p, const struct run_result *r, int64_t now_us)
{
    uint32_t h = r->handler;
    if (p->t->h_kind[h] == H_PRODUCER && r->outcome == OUT_COMMITTED)
        p->d->next_due[h] = sim_sched_next(p->sim, h, p->d->next_due[h], 0);
    if (p->t->h_kind[h] == H_CONSUMER)
        p->idle_until[h] = r->ntaken == 0 && r->outcome == OUT_COMMITTED ? r->wake_us : 0;
    try_run(p, h, now_us);
}

static void debounce_on_stop(struct policy *p, int64_t now_us)
{
    p->stopping = 1;
}

const struct policy_ops simrun_policy = {
    .abi = POLICY_ABI,
    .name = "debounce",
    .summary = "example plugin: a consumer runs a fixed delay after its oldest pending item",
    .seeds = "examples/plugin",
    .params = debounce_params,
    .nparams = 1,
    .durable_size = sizeof(struct debounce_durable),
    .promise = PROMISE_HANDLER,
    .create = debounce_create,
    .destroy = debounce_destroy,
    .start = debounce_start,
    .on_publish = debounce_on_publish,
    .on_timer = debounce_on_timer,
    .on_run_end = debounce_on_run_end,
    .on_stop = debounce_on_stop,
};
