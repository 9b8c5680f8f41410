/* sim_host.c: the host and its parts going down and coming back.
 *
 * A host crash destroys the policy's volatile state (destroy), makes its
 * timers, alarms and tickers stale (the epoch), and ends every active run
 * as crashed; a restart creates the policy again over its durable block.  A
 * graceful stop tells the policy (on_stop), starts nothing new, and cuts
 * off what is still running at the end of the grace.  Crashes of a worker,
 * all workers or the server go to the policy's on_part hook.  Crash points
 * (the places a host crash can fall within an instant: positional crash
 * lines and crash-point exploration's probe) are taken here too.  State
 * and invariants: sim_int.h. */
#include "sim/sim_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/evq.h"
#include "sim/util.h"

/* --- crashes ---------------------------------------------------------------------- */

/* The host stops taking work: its timers and tickers are gone. */
static void host_quiesce(struct sim *sim)
{
    sim->accepting = 0;
    sim__tickers_stop_all(sim);
    sim__alarms_quiesce(sim);
    sim->epoch++;
}

/* The host goes down: active runs end with outcome out, the policy's
 * volatile state is destroyed. */
static void host_down(struct sim *sim, enum run_outcome out)
{
    sim__retq_flush(sim);
    if (sim->accepting)
        host_quiesce(sim);
    if (sim->stopping) {
        /* A crash during a graceful stop ends the stop too. */
        evq_cancel(sim->q, sim->stop_ev);
        sim->stop_ev = 0;
        sim->stopping = 0;
    }
    sim__interrupt_runs(sim, 1, 0, 0, out);
    sim->host_up = 0;
    sim__tickers_reset(sim); /* the policy that held the handles is going */
    sim->nalarms = 0;
    sim->epoch++;      /* and so are timers it set while stopping */
    sim__policy_destroy(sim);
    if (sim->ops->items_volatile) {
        /* Items that lived only in the policy's memory are gone. */
        for (uint32_t h = 0; h < sim->w.nh; h++) {
            struct handler_state *hs = &sim->hs[h];
            while (hs->pend_head != ITEM_NIL) {
                uint32_t slot = hs->pend_head;
                uint64_t id = sim->items[slot].id;
                sim__item_gone(sim, slot, ITEM_DROPPED);
                fact_drop(&sim->fx, id, h, DROP_CRASH);
                sim__item_release(sim, slot);
            }
        }
    }
}

void sim__host_up(struct sim *sim, int restart)
{
    if (sim->host_up)
        return; /* already brought back by another restart */
    sim->pol = sim->ops->create(sim, sim->durable, sim->ps);
    sim->host_up = 1;
    sim->accepting = 1;
    sim->ops->start(sim->pol, restart, sim->now_us);
}


/* A graceful stop completes: at the end of its grace, or as soon as the
 * last active run has ended. */
void sim__stop_complete(struct sim *sim)
{
    uint32_t ci = (uint32_t)(sim->stopping - 1);
    const struct crash_def *c = &sim->scn->crashes[ci];
    if (sim->stop_ev)
        evq_cancel(sim->q, sim->stop_ev);
    sim->stop_ev = 0;
    sim->stopping = 0;
    fact_stop(&sim->fx, sim->nactive);
    host_down(sim, OUT_CUTOFF);
    if (c->down_us != SIM_NEVER)
        evq_push(sim->q, c->at_us + c->down_us, EV_RESTART, ci, 0);
}

void sim__crash(struct sim *sim, uint32_t ci)
{
    const struct crash_def *c = &sim->scn->crashes[ci];
    if (sim->crash_down[ci])
        return;
    /* A crash of something already down (or stopping) is no crash; nor is a
     * crash of a part (worker, server) that this policy's system does not
     * have (no on_part hook): nothing of it exists to fail. */
    if (!sim->host_up || (c->target == CRASH_STOP && sim->stopping))
        goto next;
    if (c->target != CRASH_HOST && c->target != CRASH_STOP && !sim->ops->on_part)
        goto next;
    sim->crash_down[ci] = 1;
    fact_crash(&sim->fx, (enum crash_target)c->target, c->index);
    if (c->target == CRASH_STOP) {
        /* Graceful: nothing new starts; active runs have the grace period. */
        host_quiesce(sim);
        sim->stopping = (int)ci + 1;
        if (sim->ops->on_stop)
            sim->ops->on_stop(sim->pol, sim->now_us);
        if (sim->nactive == 0) {
            sim__stop_complete(sim);
        } else {
            sim->stop_ev = evq_push(sim->q, sim->now_us + c->grace_us, EV_CUTOFF, ci, 0);
        }
        return;
    }
    if (c->target == CRASH_HOST) {
        host_down(sim, OUT_CRASHED);
    } else {
        if (c->target == CRASH_WORKER)
            sim__interrupt_runs(sim, 0, 0, c->index + 1, OUT_CRASHED);
        else if (c->target == CRASH_WORKERS)
            sim__interrupt_runs(sim, 0, 1, 0, OUT_CRASHED);
        if (sim->ops->on_part)
            sim->ops->on_part(sim->pol, c->target, c->index, 0, sim->now_us);
    }
    int64_t down = c->random ? 1 + rng_exp_us(&sim->crash_rng[ci], (double)c->mttr_us) : c->down_us;
    evq_push(sim->q, sim->now_us + down, EV_RESTART, ci, 0);
    return;
next:
    if (c->random) {
        int64_t t = sim->now_us + 1 + rng_exp_us(&sim->crash_rng[ci], (double)c->mtbf_us);
        if (t < sim->scn->horizon_us)
            evq_push(sim->q, t, EV_CRASH, ci, 0);
    }
}

void sim__restart(struct sim *sim, uint32_t ci)
{
    const struct crash_def *c = &sim->scn->crashes[ci];
    SIM_ASSERT(sim->crash_down[ci]);
    sim->crash_down[ci] = 0;
    fact_restart(&sim->fx, (enum crash_target)c->target, c->index);
    if (c->target == CRASH_HOST || c->target == CRASH_STOP)
        sim__host_up(sim, 1);
    else if (sim->ops->on_part && sim->host_up)
        sim->ops->on_part(sim->pol, c->target, c->index, 1, sim->now_us);
    if (c->random) {
        int64_t t = sim->now_us + 1 + rng_exp_us(&sim->crash_rng[ci], (double)c->mtbf_us);
        if (t < sim->scn->horizon_us)
            evq_push(sim->q, t, EV_CRASH, ci, 0);
    }
}


/* --- crash points --------------------------------------------------------------------
 *
 * A point is a place in the event order where the host can go down without
 * cutting one of the engine's own transitions in two (docs/crashpoints.md):
 * before the first event of an instant, after each event, and between a
 * run's end and on_run_end.  Points are taken only while watching: a
 * scenario with a positional crash (`first`, `after ...`) or a probe. */

/* The fact layer's watcher: counts the facts that positional crashes wait
 * for, and shows the durable ones to the probe. */
static void points_watch(void *ctx, const struct trace_rec *r)
{
    struct sim *sim = ctx;
    if (!fact_kind_durable((enum fact_kind)r->kind))
        return;
    for (size_t i = 0; i < sim->npos; i++) {
        struct pos_crash *pc = &sim->pos[i];
        const struct crash_def *c = &sim->scn->crashes[pc->ci];
        if (pc->done || pc->armed || c->pos != CRASH_POS_AFTER || r->t_us != c->at_us || r->kind != pc->kind)
            continue;
        if (pc->handler >= 0 && r->handler != pc->handler)
            continue;
        if (++pc->seen == c->pos_nth)
            pc->armed = 1;
    }
    const struct sim_probe *pr = sim->o->probe;
    if (pr && pr->durable)
        pr->durable(pr->ctx, r);
}

void sim__points_setup(struct sim *sim)
{
    const struct scenario *s = sim->scn;
    for (uint32_t c = 0; c < s->ncrashes; c++) {
        const struct crash_def *cd = &s->crashes[c];
        if (cd->pos != CRASH_POS_FIRST && cd->pos != CRASH_POS_AFTER)
            continue;
        sim->pos = xrealloc(sim->pos, (sim->npos + 1) * sizeof *sim->pos);
        int64_t h = -1;
        int kind = 0;
        if (cd->pos == CRASH_POS_AFTER) {
            kind = fact_kind_parse(cd->pos_kind);
            SIM_ASSERT(kind > 0 && fact_kind_durable((enum fact_kind)kind));
            if (cd->pos_wf >= 0) {
                uint32_t inst = sim->w.wf_first_inst[cd->pos_wf] + cd->pos_inst;
                SIM_ASSERT(inst < sim->w.wf_first_inst[cd->pos_wf + 1]);
                h = sim->w.inst_first_h[inst] + (uint32_t)cd->pos_h;
            }
        }
        sim->pos[sim->npos++] = (struct pos_crash){.ci = c, .handler = h, .kind = (uint8_t)kind};
    }
    sim->watching = sim->npos > 0 || sim->o->probe != NULL;
    if (sim->watching) {
        sim->fx.watch = points_watch;
        sim->fx.watch_ctx = sim;
        sim->fx.tracing = 1;
    }
}

int64_t sim__first_at(const struct sim *sim, int64_t t_us)
{
    for (size_t i = 0; i < sim->npos; i++) {
        const struct crash_def *c = &sim->scn->crashes[sim->pos[i].ci];
        if (!sim->pos[i].done && c->pos == CRASH_POS_FIRST && c->at_us > sim->now_us && c->at_us < t_us)
            t_us = c->at_us;
    }
    return t_us;
}

void sim__point(struct sim *sim, int first)
{
    if (sim->stopped)
        return;
    sim->npoints++;
    for (size_t i = 0; i < sim->npos; i++) {
        struct pos_crash *pc = &sim->pos[i];
        const struct crash_def *c = &sim->scn->crashes[pc->ci];
        if (pc->done || c->at_us > sim->now_us)
            continue;
        /* A position that did not come at its instant never will. */
        int fire = c->at_us == sim->now_us && (c->pos == CRASH_POS_FIRST ? first : pc->armed);
        if (fire || c->at_us < sim->now_us)
            pc->done = 1;
        if (fire)
            sim__crash(sim, pc->ci);
    }
    const struct sim_probe *pr = sim->o->probe;
    if (pr && pr->point) {
        struct sim_point p = {.t_us = sim->now_us, .index = sim->npoints, .first = first, .host_up = sim->host_up};
        int ci = pr->point(pr->ctx, &p);
        if (ci == SIM_PROBE_STOP)
            sim__stop(sim, SIM_OK, "stopped by the probe");
        if (ci >= 0) {
            SIM_ASSERT((uint32_t)ci < sim->scn->ncrashes);
            SIM_ASSERT(sim->scn->crashes[ci].pos == CRASH_POS_PROBE);
            sim__crash(sim, (uint32_t)ci);
        }
    }
}
