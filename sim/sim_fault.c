/* sim_fault.c: what the scenario does to runs and schedules over time:
 * run failures (by probability, or deterministic attempts), run deadlines,
 * agents busy outside the scheduler, schedule changes while running and
 * manual triggers.  Part of the engine (sim_int.h); every fact still goes
 * through the fact layer.
 *
 * Failures are drawn at a run's start from its handler's fault stream,
 * exactly as before for scenarios without the newer rules: a run with work
 * draws one number; a run that took nothing draws only when one of the
 * handler's rules is marked `empty`, so that old fingerprints stay. */
#include "sim/sim_int.h"

#include <stdlib.h>
#include <string.h>

#include "sim/util.h"

/* --- failures ------------------------------------------------------------------- */

/* Whether the deterministic rule fails attempt n (from 1). */
static int det_hit(const struct fail_rule *fr, uint32_t n)
{
    if (fr->first_n && n <= fr->first_n)
        return 1;
    return n >= 1 && n <= 64 && (fr->attempts >> (n - 1) & 1);
}

static int has_empty_rule(const struct handler_def *hd)
{
    for (uint8_t k = 0; k < hd->nfails; k++)
        if (hd->fails[k].empty && hd->fails[k].cls != FAIL_DELIVERY)
            return 1;
    return 0;
}

static int has_det_rule(const struct handler_def *hd)
{
    for (uint8_t k = 0; k < hd->nfails; k++)
        if (hd->fails[k].cls != FAIL_DELIVERY && (hd->fails[k].first_n || hd->fails[k].attempts))
            return 1;
    return 0;
}

/* Counts a run of a handler with deterministic rules: fault_n[2h] those
 * with work, fault_n[2h + 1] all (the table is made at the first). */
static void det_count(struct sim *sim, uint32_t h, int has_work)
{
    if (!sim->fault_n)
        sim->fault_n = xcalloc((size_t)sim->w.nh * 2, sizeof *sim->fault_n);
    sim->fault_n[2 * (size_t)h + 1]++;
    sim->fault_n[2 * (size_t)h] += (uint32_t)has_work;
}

static void set_fail(struct handler_state *hs, struct run_rec *r, const struct fail_rule *fr, int has_work)
{
    r->fail = (uint8_t)fr->cls;
    /* A run that took nothing has only its closing stretch (emitting). */
    r->fail_phase = (uint8_t)(has_work ? fr->phase : PHASE_EMITTING);
    if (r->fail == FAIL_INDETERMINATE)
        r->mut_if_fail = (uint8_t)rng_below(&hs->fault, 2);
}

void sim__draw_failure(struct sim *sim, struct run_rec *r, int has_work)
{
    struct handler_state *hs = &sim->hs[r->handler];
    const struct handler_def *hd = sim__hdef(sim, r->handler);
    if (!has_work && !has_empty_rule(hd))
        return;
    uint32_t u = (uint32_t)rng_below(&hs->fault, 1000000);
    if (has_det_rule(hd))
        det_count(sim, r->handler, has_work);
    const uint32_t *nwork = sim->fault_n ? &sim->fault_n[2 * (size_t)r->handler] : NULL;
    for (uint8_t k = 0; nwork && k < hd->nfails; k++) {
        const struct fail_rule *fr = &hd->fails[k];
        if (fr->cls == FAIL_DELIVERY || (!has_work && !fr->empty) || (!fr->first_n && !fr->attempts))
            continue;
        if (det_hit(fr, fr->empty ? nwork[1] : nwork[0])) {
            set_fail(hs, r, fr, has_work);
            return;
        }
    }
    uint32_t acc = 0;
    for (uint8_t k = 0; k < hd->nfails; k++) {
        const struct fail_rule *fr = &hd->fails[k];
        if (fr->cls == FAIL_DELIVERY || (!has_work && !fr->empty))
            continue;
        acc += fr->ppm;
        if (u < acc) {
            set_fail(hs, r, fr, has_work);
            return;
        }
    }
}

/* --- deadlines ------------------------------------------------------------------- */

void sim__apply_deadline(struct sim *sim, struct run_rec *r, int64_t d[3])
{
    const struct handler_def *hd = sim__hdef(sim, r->handler);
    if (!hd->deadline_us)
        return;
    static const enum run_phase phase_of[3] = {PHASE_PREPARING, PHASE_MUTATING, PHASE_EMITTING};
    int64_t used = 0;
    for (int k = 0; k < 3; k++) {
        int64_t left = hd->deadline_per_phase ? hd->deadline_us : hd->deadline_us - used;
        if (d[k] > left) {
            /* A failure drawn for an earlier phase end comes first. */
            if (r->fail && r->fail_phase < phase_of[k])
                return;
            d[k] = left;
            for (int j = k + 1; j < 3; j++)
                d[j] = 0;
            r->fail = hd->deadline_fail;
            r->fail_phase = (uint8_t)phase_of[k];
            r->mut_if_fail = 0;
            return;
        }
        used += d[k];
    }
}

int64_t sim_deadline(const struct sim *sim, uint32_t handler)
{
    SIM_ASSERT(handler < sim->w.nh);
    const struct handler_def *hd = sim__hdef(sim, handler);
    return hd->deadline_us ? hd->deadline_us : SIM_NEVER;
}

/* --- agents busy outside the scheduler ----------------------------------------------- */

int sim_busy(const struct sim *sim, uint32_t inst)
{
    SIM_ASSERT(inst < sim->w.ninst);
    uint16_t wf = sim->w.inst_wf[inst];
    for (uint32_t i = 0; i < sim->scn->nbusy; i++) {
        const struct busy_def *b = &sim->scn->busy[i];
        if (b->wf == wf && sim->now_us >= b->at_us && sim->now_us < b->at_us + b->for_us)
            return 1;
    }
    return 0;
}

/* --- schedule changes ------------------------------------------------------------------ */

void sim__changes_setup(struct sim *sim)
{
    const struct scenario *s = sim->scn;
    for (uint16_t f = 0; f < s->nwfs; f++)
        for (uint16_t h = 0; h < s->wfs[f].nhandlers; h++) {
            const struct schedule *sc = &s->wfs[f].handlers[h].sched;
            for (uint32_t c = 0; c < sc->nchanges; c++)
                evq_push(sim->q, sc->changes[c].at_us, EV_SCHED, (uint32_t)f << 16 | h, c);
        }
}

static const char *change_what(const struct sched_change *c)
{
    switch ((enum sched_op)c->op) {
    case SCHED_OP_DISABLE: return "disabled";
    case SCHED_OP_ENABLE: return "enabled";
    case SCHED_OP_SET: break;
    }
    return c->kind == SCHED_NONE ? "changed (never fires)" : "changed";
}

void sim__sched_change(struct sim *sim, uint32_t a, uint64_t b)
{
    uint16_t f = (uint16_t)(a >> 16), h = (uint16_t)(a & 0xffffu);
    const struct workflow_def *wf = &sim->scn->wfs[f];
    const struct sched_change *c = &wf->handlers[h].sched.changes[b];
    uint32_t first = sim->w.wf_first_inst[f], last = sim->w.wf_first_inst[f + 1];
    if (first == last)
        return;
    sim_note(sim, (int64_t)(sim->w.inst_first_h[first] + h), "schedule %s: %s%s%s", change_what(c),
             c->value ? c->value : "", wf->count > 1 ? " (every instance)" : "", sim->accepting ? "" : " (host down)");
    if (!sim->accepting || !sim->ops->on_schedule_change)
        return;
    for (uint32_t in = first; in < last && sim->accepting; in++)
        sim->ops->on_schedule_change(sim->pol, sim->w.inst_first_h[in] + h, sim->now_us);
}

/* --- triggers ------------------------------------------------------------------------- */

void sim__trigger(struct sim *sim, const struct trigger_def *t)
{
    fact_trigger(&sim->fx, t->wf);
    if (!sim->accepting)
        return;
    for (uint32_t in = sim->w.wf_first_inst[t->wf]; in < sim->w.wf_first_inst[t->wf + 1] && sim->accepting; in++) {
        if (sim->ops->on_trigger_ex) {
            struct sim_trigger st = {.inst = in, .delay_us = t->delay_us,
                                     .handler = t->handler < 0 ? UINT32_MAX : sim->w.inst_first_h[in] + (uint32_t)t->handler};
            sim->ops->on_trigger_ex(sim->pol, &st, sim->now_us);
        } else if (sim->ops->on_trigger) {
            sim->ops->on_trigger(sim->pol, in, sim->now_us);
        }
    }
}
