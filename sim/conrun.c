/* conrun.c: consumers run as soon as they have work (see conrun.h).
 *
 * Key invariant: run[h] is the id of consumer h's active run, 0 when none;
 * its alarm is armed at the earliest of its retry and wake instants, or
 * disarmed when it has neither. */
#include "sim/conrun.h"

#include <stdlib.h>

#include "sim/util.h"

struct conrun {
    struct sim *sim;
    struct conrun_cfg cfg;
    const struct sim_topo *t;
    uint64_t *run;                 /* [nh] active run, 0 none */
    uint64_t *last_failed;         /* [nh] the run a retry retries, 0 none */
    uint32_t *fails;               /* [nh] failed runs in a row */
    int64_t *retry_at;             /* [nh] SIM_NEVER none */
    int64_t *wake_at;              /* [nh] the script's request, SIM_NEVER none */
    uint8_t *ready;                /* [nh] */
    int *alarm;                    /* [nh] consumers only, -1 for producers */
    int stopping;
};

struct conrun *conrun_create(struct sim *sim, const struct conrun_cfg *cfg)
{
    struct conrun *cr = xcalloc(1, sizeof *cr);
    cr->sim = sim;
    cr->cfg = *cfg;
    cr->t = sim_topo(sim);
    size_t n = cr->t->nh ? cr->t->nh : 1;
    cr->run = xcalloc(n, sizeof *cr->run);
    cr->last_failed = xcalloc(n, sizeof *cr->last_failed);
    cr->fails = xcalloc(n, sizeof *cr->fails);
    cr->retry_at = xmalloc(n * sizeof *cr->retry_at);
    cr->wake_at = xmalloc(n * sizeof *cr->wake_at);
    cr->ready = xcalloc(n, 1);
    cr->alarm = xmalloc(n * sizeof *cr->alarm);
    for (uint32_t h = 0; h < cr->t->nh; h++) {
        cr->retry_at[h] = cr->wake_at[h] = SIM_NEVER;
        cr->alarm[h] = cr->t->h_kind[h] == H_CONSUMER ? sim_alarm_new(sim, cfg->tag, h) : -1;
    }
    return cr;
}

void conrun_destroy(struct conrun *cr)
{
    if (!cr)
        return;
    free(cr->run);
    free(cr->last_failed);
    free(cr->fails);
    free(cr->retry_at);
    free(cr->wake_at);
    free(cr->ready);
    free(cr->alarm);
    free(cr);
}

static void arm(struct conrun *cr, uint32_t h)
{
    int64_t at = cr->retry_at[h] < cr->wake_at[h] ? cr->retry_at[h] : cr->wake_at[h];
    sim_alarm(cr->sim, cr->alarm[h], at);
}

/* Starts consumer h's run when it is ready, idle, has pending items and no
 * retry to wait for. */
static void try_run(struct conrun *cr, uint32_t h, int64_t now_us)
{
    if (cr->stopping || cr->run[h] || !cr->ready[h] || cr->retry_at[h] != SIM_NEVER)
        return;
    if (sim_pending_count(cr->sim, h) == 0)
        return;
    struct run_req rq = RUN_REQ_INIT;
    rq.handler = h;
    rq.reason = cr->last_failed[h] ? REASON_RETRY : REASON_EVENT;
    rq.retry_of = cr->last_failed[h];
    rq.worker = cr->cfg.worker;
    cr->ready[h] = 0;
    cr->run[h] = sim_run_start(cr->sim, &rq);
}

void conrun_start(struct conrun *cr, int64_t now_us)
{
    for (uint32_t h = 0; h < cr->t->nh; h++) {
        if (cr->t->h_kind[h] != H_CONSUMER)
            continue;
        cr->ready[h] = 1;
        try_run(cr, h, now_us);
    }
}

void conrun_on_publish(struct conrun *cr, uint32_t h, int64_t now_us)
{
    cr->ready[h] = 1;
    try_run(cr, h, now_us);
}

void conrun_on_timer(struct conrun *cr, uint64_t arg, int64_t now_us)
{
    uint32_t h = (uint32_t)arg;
    SIM_ASSERT(h < cr->t->nh && cr->alarm[h] >= 0);
    if (cr->retry_at[h] <= now_us) {
        cr->retry_at[h] = SIM_NEVER;
        cr->ready[h] = 1;
    }
    if (cr->wake_at[h] <= now_us) {
        cr->wake_at[h] = SIM_NEVER;
        cr->ready[h] = 1;
    }
    arm(cr, h);
    try_run(cr, h, now_us);
}

int conrun_on_run_end(struct conrun *cr, const struct run_result *r, int64_t now_us)
{
    uint32_t h = r->handler;
    if (cr->t->h_kind[h] != H_CONSUMER || cr->run[h] != r->run)
        return 0;
    cr->run[h] = 0;
    if (r->outcome == OUT_COMMITTED) {
        cr->fails[h] = 0;
        cr->last_failed[h] = 0;
        if (r->ntaken > 0)
            cr->ready[h] = 1;
        if (r->wake_us != SIM_NEVER)
            cr->wake_at[h] = r->wake_us > now_us ? r->wake_us : now_us;
    } else {
        cr->fails[h]++;
        cr->last_failed[h] = r->run;
        if (cr->cfg.retry && !backoff_exhausted(&cr->cfg.backoff, cr->fails[h]))
            cr->retry_at[h] = now_us + backoff_delay(&cr->cfg.backoff, cr->fails[h]);
        else
            cr->fails[h] = 0; /* given up: the next event starts over */
    }
    arm(cr, h);
    try_run(cr, h, now_us);
    return 1;
}

void conrun_stop(struct conrun *cr) { cr->stopping = 1; }
