/* poll.c: fixed-period polling of every handler, the classic busy loop.
 *
 * Every `period` the host wakes and, for each handler not already running,
 * runs it: a producer when a nominal due instant has come since its last
 * served one (every due that came since is served by that one run), a
 * consumer always, whether or not anything is pending, so idle consumers
 * make empty runs.  One run per handler at a time.  The host also polls once
 * as it starts.
 *
 * Durable: per producer, the first due instant not yet served.
 * Volatile: the check-loop ticker. */
#include <stdlib.h>

#include "sim/policy_api.h"
#include "sim/util.h"

struct poll_durable {
    int64_t *next_due;             /* [nh] */
};

struct policy {
    struct sim *sim;
    struct poll_durable *d;
    const struct sim_topo *t;
    int ticker;
    int64_t period_us;
};

static const struct param_def poll_params[] = {
    {"period", PARAM_DURATION, "1m", NULL, 1000, INT64_C(86400000000) * 30, "spec 4 (baseline)",
     "how often the host wakes and runs every handler"},
};

static void poll_all(struct policy *p, int64_t now_us, enum run_reason why)
{
    for (uint32_t h = 0; h < p->t->nh; h++) {
        if (sim_active_runs(p->sim, h))
            continue;
        struct run_req rq = RUN_REQ_INIT;
        rq.handler = h;
        rq.reason = why;
        if (p->t->h_kind[h] == H_PRODUCER) {
            int64_t due = p->d->next_due[h];
            if (due == SIM_NEVER || due > now_us)
                continue;
            rq.due_us = due;
            p->d->next_due[h] = sim_sched_next(p->sim, h, now_us, 0);
        }
        sim_run_start(p->sim, &rq);
    }
    sim_ticker_arm(p->sim, p->ticker, now_us + 1);
}

static struct policy *poll_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct policy *p = xcalloc(1, sizeof *p);
    p->sim = sim;
    p->d = durable;
    p->t = sim_topo(sim);
    p->period_us = params_get(ps, "period");
    if (!p->d->next_due) {
        p->d->next_due = sim_dalloc(sim, sizeof(int64_t) * (p->t->nh ? p->t->nh : 1));
        for (uint32_t h = 0; h < p->t->nh; h++)
            p->d->next_due[h] = sim_sched_next(sim, h, 0, 1);
    }
    sim_declare_rows(sim, p->d->next_due, sizeof *p->d->next_due);
    return p;
}

static void poll_destroy(struct policy *p) { free(p); }

static void poll_start(struct policy *p, int restart, int64_t now_us)
{
    p->ticker = sim_ticker_new(p->sim, p->period_us, 1);
    poll_all(p, now_us, restart ? REASON_RECOVER : REASON_POLL);
}

static void poll_on_publish(struct policy *p, uint32_t h, uint64_t item, int64_t now_us) {}

static void poll_on_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now_us)
{
    poll_all(p, now_us, REASON_POLL);
}

static void poll_on_run_end(struct policy *p, const struct run_result *r, int64_t now_us)
{
    if (r->outcome == OUT_COMMITTED || p->t->h_kind[r->handler] != H_PRODUCER)
        return;
    /* A failed producer run: its due is served again at the next poll. */
    struct sim_run_info ri;
    sim_run_get(p->sim, r->run, &ri);
    if (ri.due_us >= 0 && ri.due_us < p->d->next_due[r->handler])
        p->d->next_due[r->handler] = ri.due_us;
}

static void poll_on_trigger(struct policy *p, uint32_t inst, int64_t now_us)
{
    for (uint32_t h = p->t->inst_first_h[inst]; h < p->t->inst_first_h[inst + 1]; h++) {
        if (p->t->h_kind[h] != H_PRODUCER || sim_active_runs(p->sim, h))
            continue;
        struct run_req rq = RUN_REQ_INIT;
        rq.handler = h;
        rq.reason = REASON_MANUAL;
        sim_run_start(p->sim, &rq);
    }
}

/* A changed schedule: the next due is its first instant from now, served
 * at the next poll. */
static void poll_on_schedule_change(struct policy *p, uint32_t h, int64_t now_us)
{
    p->d->next_due[h] = sim_sched_next(p->sim, h, now_us, 1);
}

const struct policy_ops policy_poll = {
    .abi = POLICY_ABI,
    .name = "poll",
    .summary = "fixed-period polling of every handler (the classic busy loop)",
    .seeds = "baseline (spec 4)",
    .params = poll_params,
    .nparams = (int)(sizeof poll_params / sizeof poll_params[0]),
    .durable_size = sizeof(struct poll_durable),
    .promise = PROMISE_HANDLER,
    .items_volatile = 0,
    .create = poll_create,
    .destroy = poll_destroy,
    .start = poll_start,
    .on_publish = poll_on_publish,
    .on_timer = poll_on_timer,
    .on_run_end = poll_on_run_end,
    .on_trigger = poll_on_trigger,
    .on_schedule_change = poll_on_schedule_change,
};
