/* fifo_now.c: an example policy, the one docs/writing-a-policy.md walks
 * through.  Each handler runs as soon as it has work, one run at a time:
 * a consumer when something is pending, a producer at each fire of its
 * schedule, one run per fire.  Durable: per producer, the first fire not
 * yet committed (a crash or a failed run leaves it, so it runs again).
 * Volatile: one alarm per handler and the stopping flag. */
#include <stdlib.h>

#include "sim/policy_api.h"

struct fifo_durable {
    int64_t *next_due;             /* [nh] producers: the first fire not yet committed */
};

struct policy {
    struct sim *sim;
    struct fifo_durable *d;
    const struct sim_topo *t;
    int *alarm;                    /* [nh] producers: wakes the host at next_due */
    int stopping;                  /* a graceful stop began: start nothing */
};

/* Starts handler h if it has work now; else sets its alarm for when it will. */
static void try_run(struct policy *p, uint32_t h, int64_t now_us)
{
    if (p->stopping || sim_active_runs(p->sim, h))
        return; /* on_run_end comes back here */
    struct run_req rq = RUN_REQ_INIT;
    rq.handler = h;
    rq.reason = REASON_EVENT;
    if (p->t->h_kind[h] == H_CONSUMER && sim_pending_count(p->sim, h) == 0)
        return; /* on_publish comes back here */
    if (p->t->h_kind[h] == H_PRODUCER) {
        rq.due_us = p->d->next_due[h];
        rq.reason = REASON_SCHEDULE;
        if (rq.due_us > now_us) {
            sim_alarm(p->sim, p->alarm[h], rq.due_us); /* SIM_NEVER: no more fires */
            return;
        }
    }
    sim_run_start(p->sim, &rq);
}

static struct policy *fifo_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct policy *p = xcalloc(1, sizeof *p);
    p->sim = sim;
    p->d = durable;
    p->t = sim_topo(sim);
    p->alarm = xcalloc(p->t->nh + 1, sizeof *p->alarm);
    for (uint32_t h = 0; h < p->t->nh; h++)
        p->alarm[h] = sim_alarm_new(sim, 0, h);
    if (!p->d->next_due) { /* deploy: the durable block is still zeroed */
        p->d->next_due = sim_dalloc(sim, (p->t->nh + 1) * sizeof *p->d->next_due);
        for (uint32_t h = 0; h < p->t->nh; h++)
            p->d->next_due[h] = sim_sched_next(sim, h, 0, 1);
    }
    return p;
}

static void fifo_destroy(struct policy *p)
{
    free(p->alarm);
    free(p);
}

/* Deploy and restart alike: whatever has work runs, the rest waits. */
static void fifo_start(struct policy *p, int restart, int64_t now_us)
{
    for (uint32_t h = 0; h < p->t->nh; h++)
        try_run(p, h, now_us);
}

static void fifo_on_publish(struct policy *p, uint32_t h, uint64_t item, int64_t now_us) { try_run(p, h, now_us); }
static void fifo_on_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now_us) { try_run(p, (uint32_t)arg, now_us); }
static void fifo_on_stop(struct policy *p, int64_t now_us) { p->stopping = 1; }

static void fifo_on_run_end(struct policy *p, const struct run_result *r, int64_t now_us)
{
    uint32_t h = r->handler;
    if (p->t->h_kind[h] == H_PRODUCER && r->outcome == OUT_COMMITTED) /* this fire is done */
        p->d->next_due[h] = sim_sched_next(p->sim, h, p->d->next_due[h], 0);
    try_run(p, h, now_us);
}

const struct policy_ops policy_fifo_now = {
    .abi = POLICY_ABI,
    .name = "fifo_now",
    .summary = "example: each handler runs as soon as it has work, one run at a time",
    .seeds = "docs/writing-a-policy.md",
    .durable_size = sizeof(struct fifo_durable),
    .promise = PROMISE_HANDLER,
    .create = fifo_create,
    .destroy = fifo_destroy,
    .start = fifo_start,
    .on_publish = fifo_on_publish,
    .on_timer = fifo_on_timer,
    .on_run_end = fifo_on_run_end,
    .on_stop = fifo_on_stop,
};
