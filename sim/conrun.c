/* conrun.c: consumers run as soon as they have work (see conrun.h).
 *
 * Key invariant: h[h].run is the id of consumer h's active run, 0 when none;
 * its alarm is armed at the earliest of its retry and wake instants, or
 * disarmed when it has neither. */
#include "sim/conrun.h"

#include <stdlib.h>

#include "sim/util.h"

/* A consumer's state, one row per handler instance (a run's end reads
 * all of it: one cache line, not one per field). */
struct cr_row {
    uint64_t run;                  /* active run, 0 none */
    uint64_t last_failed;          /* the run a retry retries, 0 none */
    int64_t retry_at;              /* SIM_NEVER none */
    int64_t wake_at;               /* the script's request, SIM_NEVER none */
    uint32_t fails;                /* failed runs in a row */
    int alarm;                     /* consumers only, -1 for producers */
    uint8_t ready;
};

struct conrun {
    struct sim *sim;
    struct conrun_cfg cfg;
    const struct sim_topo *t;
    struct cr_row *h;              /* [nh] */
    int stopping;
};

struct conrun *conrun_create(struct sim *sim, const struct conrun_cfg *cfg)
{
    struct conrun *cr = xcalloc(1, sizeof *cr);
    cr->sim = sim;
    cr->cfg = *cfg;
    cr->t = sim_topo(sim);
    cr->h = xcalloc(cr->t->nh ? cr->t->nh : 1, sizeof *cr->h);
    for (uint32_t h = 0; h < cr->t->nh; h++)
        cr->h[h] = (struct cr_row){.retry_at = SIM_NEVER, .wake_at = SIM_NEVER,
                                   .alarm = cr->t->h_kind[h] == H_CONSUMER ? sim_alarm_new(sim, cfg->tag, h) : -1};
    sim_declare_rows(sim, cr->h, sizeof *cr->h);
    sim_declare_handler_tag(sim, cfg->tag);
    return cr;
}

void conrun_destroy(struct conrun *cr)
{
    if (!cr)
        return;
    free(cr->h);
    free(cr);
}

static void arm(struct conrun *cr, uint32_t h)
{
    const struct cr_row *c = &cr->h[h];
    sim_alarm(cr->sim, c->alarm, c->retry_at < c->wake_at ? c->retry_at : c->wake_at);
}

/* Starts consumer h's run when it is ready, idle, has pending items and no
 * retry to wait for. */
static void try_run(struct conrun *cr, uint32_t h, int64_t now_us)
{
    struct cr_row *c = &cr->h[h];
    if (cr->stopping || c->run || !c->ready || c->retry_at != SIM_NEVER)
        return;
    if (sim_pending_count(cr->sim, h) == 0)
        return;
    struct run_req rq = RUN_REQ_INIT;
    rq.handler = h;
    rq.reason = c->last_failed ? REASON_RETRY : REASON_EVENT;
    rq.retry_of = c->last_failed;
    rq.worker = cr->cfg.worker;
    c->ready = 0;
    c->run = sim_run_start(cr->sim, &rq); /* the rows never move */
}

void conrun_start(struct conrun *cr, int64_t now_us)
{
    for (uint32_t h = 0; h < cr->t->nh; h++) {
        if (cr->t->h_kind[h] != H_CONSUMER)
            continue;
        cr->h[h].ready = 1;
        try_run(cr, h, now_us);
    }
}

void conrun_on_publish(struct conrun *cr, uint32_t h, int64_t now_us)
{
    cr->h[h].ready = 1;
    try_run(cr, h, now_us);
}

void conrun_on_timer(struct conrun *cr, uint64_t arg, int64_t now_us)
{
    uint32_t h = (uint32_t)arg;
    SIM_ASSERT(h < cr->t->nh && cr->h[h].alarm >= 0);
    struct cr_row *c = &cr->h[h];
    if (c->retry_at <= now_us) {
        c->retry_at = SIM_NEVER;
        c->ready = 1;
    }
    if (c->wake_at <= now_us) {
        c->wake_at = SIM_NEVER;
        c->ready = 1;
    }
    arm(cr, h);
    try_run(cr, h, now_us);
}

int conrun_on_run_end(struct conrun *cr, const struct run_result *r, int64_t now_us)
{
    uint32_t h = r->handler;
    struct cr_row *c = &cr->h[h];
    if (cr->t->h_kind[h] != H_CONSUMER || c->run != r->run)
        return 0;
    c->run = 0;
    if (r->outcome == OUT_COMMITTED) {
        c->fails = 0;
        c->last_failed = 0;
        if (r->ntaken > 0)
            c->ready = 1;
        if (r->wake_us != SIM_NEVER)
            c->wake_at = r->wake_us > now_us ? r->wake_us : now_us;
    } else {
        c->fails++;
        c->last_failed = r->run;
        if (cr->cfg.retry && !backoff_exhausted(&cr->cfg.backoff, c->fails))
            c->retry_at = now_us + backoff_delay(&cr->cfg.backoff, c->fails);
        else
            c->fails = 0; /* given up: the next event starts over */
    }
    arm(cr, h);
    try_run(cr, h, now_us);
    return 1;
}

void conrun_stop(struct conrun *cr) { cr->stopping = 1; }
