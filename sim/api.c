/* api.c: what a policy may know of the world, and its alarms.
 *
 * The part of sim/policy_api.h that stands between a policy and the
 * scenario: the topology, schedules read the way a policy's own cron engine
 * reads them, the calendar, and the two named workload properties (keyed
 * topics, correlation).  Each answers from the scenario and the world,
 * which policies cannot include, and gives away nothing of the workload's
 * future.  And the alarm: one pending wake-up per handle, re-set without
 * cost when the instant does not change.
 *
 * Key invariant (with those of sim_int.h): an alarm is armed (at_us !=
 * SIM_NEVER) exactly while its wake is to come; its pending event, if any,
 * is ev, pushed at the current epoch. */
#include "sim/sim_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/jobs.h"
#include "sim/util.h"

/* --- setup ---------------------------------------------------------------- */

void sim__api_setup(struct sim *sim)
{
    const struct world *w = &sim->w;
    sim->topo_h_inst = xmalloc(sizeof *sim->topo_h_inst * (w->nh ? w->nh : 1));
    sim->topo_h_kind = xmalloc(w->nh ? w->nh : 1);
    for (uint32_t h = 0; h < w->nh; h++) {
        sim->topo_h_inst[h] = w->h[h].inst;
        sim->topo_h_kind[h] = (uint8_t)world_hdef(w, h)->kind;
    }
    sim->topo = (struct sim_topo){.nh = w->nh, .ninst = w->ninst, .inst_first_h = w->inst_first_h,
                                  .h_inst = sim->topo_h_inst, .h_kind = sim->topo_h_kind};
}

void sim__api_free(struct sim *sim)
{
    if (sim->keyed)
        for (uint16_t f = 0; f < sim->scn->nwfs; f++)
            free(sim->keyed[f]);
    free(sim->keyed);
    free(sim->topo_h_inst);
    free(sim->topo_h_kind);
    free(sim->alarms);
}

/* --- durable job tables ------------------------------------------------------ */

/* A row of a durable job table was written: a durable transition. */
static void jobs_wrote(void *ctx, uint64_t id, const struct job *row)
{
    struct sim *sim = ctx;
    fact_durable(&sim->fx, id, row->status);
}

void sim_jobs_init(struct sim *sim, struct jobtab *t)
{
    jobs_init(t, sim_durable_realloc, sim);
    jobs_watch(t, jobs_wrote);
}

/* --- the topology and the calendar ---------------------------------------- */

const struct sim_topo *sim_topo(const struct sim *sim) { return &sim->topo; }

void sim_handler_name(const struct sim *sim, uint32_t handler, char *buf, size_t n)
{
    SIM_ASSERT(handler < sim->w.nh);
    const struct world_handler *wh = &sim->w.h[handler];
    const struct workflow_def *wf = &sim->scn->wfs[wh->wf];
    if (wf->count > 1)
        snprintf(buf, n, "%s[%u].%s", wf->name, wh->inst - sim->w.wf_first_inst[wh->wf], wf->handlers[wh->h].name);
    else
        snprintf(buf, n, "%s.%s", wf->name, wf->handlers[wh->h].name);
}

int64_t sim_utc_s(const struct sim *sim, int64_t t_us) { return sim->scn->start_utc_s + t_us / US_PER_S; }

const struct cal_zone *sim_zone(const struct sim *sim) { return sim->scn->zone; }

/* --- schedules -------------------------------------------------------------- */

_Static_assert((int)SIM_SCHED_NONE == (int)SCHED_NONE && (int)SIM_SCHED_EVERY == (int)SCHED_EVERY &&
                   (int)SIM_SCHED_AT == (int)SCHED_AT && (int)SIM_SCHED_CRON == (int)SCHED_CRON,
               "sim_sched_kind mirrors sched_kind");

void sim_sched_info(const struct sim *sim, uint32_t handler, struct sim_sched_info *out)
{
    SIM_ASSERT(handler < sim->w.nh);
    const struct handler_def *hd = sim__hdef(sim, handler);
    *out = (struct sim_sched_info){.kind = SIM_SCHED_NONE, .changed_us = -1};
    if (hd->kind != H_PRODUCER)
        return;
    struct sched_state st;
    schedule_state_at(&hd->sched, sim->now_us, &st);
    out->kind = (enum sim_sched_kind)st.kind;
    out->every_us = st.every_us;
    out->cron_days_or = st.cron_days_or;
    out->disabled = !st.enabled;
    out->changed_us = st.changed_us;
}

int64_t sim_sched_next_opt(const struct sim *sim, uint32_t handler, int64_t after_us, int inclusive,
                           const struct sim_sched_opts *o)
{
    SIM_ASSERT(handler < sim->w.nh);
    const struct handler_def *hd = sim__hdef(sim, handler);
    if (hd->kind != H_PRODUCER)
        return SIM_NEVER;
    /* Read differently (another zone, AND, another DST rule): cron
     * definitions only; the scenario's own stays as written. */
    int rule = o ? o->dst : CAL_DST_CRONIE;
    SIM_ASSERT(rule >= CAL_DST_CRONIE && rule <= CAL_DST_QUARTZ);
    struct sched_read rd = {.zone = o ? o->zone : NULL, .days_and = o ? o->days_and : 0,
                            .dst = (enum cal_dst_rule)rule};
    return schedule_next_asof(sim->scn, &hd->sched, after_us, inclusive, sim->now_us,
                              rd.zone || rd.days_and || rule != CAL_DST_CRONIE ? &rd : NULL);
}

int64_t sim_sched_prev(const struct sim *sim, uint32_t handler, int64_t t_us)
{
    SIM_ASSERT(handler < sim->w.nh);
    const struct handler_def *hd = sim__hdef(sim, handler);
    const struct scenario *s = sim->scn;
    if (hd->kind != H_PRODUCER || t_us < 0)
        return -1;
    if (t_us >= s->horizon_us)
        t_us = s->horizon_us - 1; /* nothing is nominal from the horizon on */
    /* as the schedule is now: the changes made so far */
    return schedule_prev_asof(s, &hd->sched, t_us, sim->now_us);
}

/* --- durable memory ------------------------------------------------------------ */

void *sim_dgrow(struct sim *sim, void *p, size_t elem, size_t *cap, size_t need)
{
    if (need <= *cap)
        return p;
    size_t c = *cap ? *cap : 8;
    while (c < need) {
        SIM_ASSERT(c <= SIZE_MAX / 2 / elem);
        c *= 2;
    }
    p = sim_drealloc(sim, p, c * elem);
    memset((char *)p + *cap * elem, 0, (c - *cap) * elem);
    *cap = c;
    return p;
}

/* --- items and runs ------------------------------------------------------------ */

uint64_t sim_item_count(const struct sim *sim) { return sim->nitems; }

/* --- workload properties ---------------------------------------------------- */

/* Whether the events of topic t of template f carry context keys: every
 * publish line and every polled source feeding it gives keys (producers'
 * own events are numbered per run and never keyed streams).  O(publish
 * lines + handlers of f). */
static uint8_t topic_keyed(const struct scenario *s, uint16_t f, uint16_t t)
{
    const struct workflow_def *wf = &s->wfs[f];
    int keyed = 0, unkeyed = 0;
    for (uint32_t i = 0; i < s->npubs; i++) {
        if (strcmp(s->pubs[i].topic, wf->topics[t]) != 0)
            continue;
        if (s->pubs[i].arr.keys)
            keyed = 1;
        else
            unkeyed = 1;
    }
    for (uint16_t h = 0; h < wf->nhandlers; h++) {
        const struct handler_def *hd = &wf->handlers[h];
        if (hd->kind != H_PRODUCER || hd->source < 0 || hd->out_topic != t)
            continue;
        if (s->sources[hd->source].arr.keys)
            keyed = 1;
        else
            unkeyed = 1;
    }
    return (uint8_t)(keyed && !unkeyed);
}

int sim_topic_keyed(struct sim *sim, uint32_t handler, uint16_t topic)
{
    SIM_ASSERT(handler < sim->w.nh);
    const struct scenario *s = sim->scn;
    uint16_t f = sim->w.h[handler].wf;
    SIM_ASSERT(topic < s->wfs[f].ntopics);
    if (!sim->keyed)
        sim->keyed = xcalloc(s->nwfs, sizeof *sim->keyed);
    if (!sim->keyed[f]) {
        sim->keyed[f] = xmalloc(s->wfs[f].ntopics);
        for (uint16_t t = 0; t < s->wfs[f].ntopics; t++)
            sim->keyed[f][t] = topic_keyed(s, f, t);
    }
    return sim->keyed[f][topic];
}

int sim_correlates(const struct sim *sim, uint32_t consumer, uint16_t *a, uint16_t *b)
{
    SIM_ASSERT(consumer < sim->w.nh);
    const struct handler_def *hd = sim__hdef(sim, consumer);
    if (hd->kind != H_CONSUMER || hd->script.kind != SCRIPT_CORRELATE)
        return 0;
    *a = hd->script.corr_a;
    *b = hd->script.corr_b;
    return 1;
}

/* --- alarms ------------------------------------------------------------------ */

int sim_alarm_new(struct sim *sim, uint32_t tag, uint64_t arg)
{
    SIM_ASSERT(sim->nalarms < INT32_MAX);
    sim->alarms = xgrow(sim->alarms, sizeof *sim->alarms, &sim->alarms_cap, sim->nalarms + 1);
    sim->alarms[sim->nalarms] = (struct alarm){.at_us = SIM_NEVER, .tag = tag, .arg = arg};
    sim__alarm_name_handler(sim, sim->nalarms);
    return (int)sim->nalarms++;
}

void sim__alarm_name_handler(struct sim *sim, size_t alarm)
{
    const struct alarm *al = &sim->alarms[alarm];
    if (al->tag < 64 && (sim->handler_tags >> al->tag & 1) && al->arg < sim->w.nh && alarm < UINT32_MAX)
        sim->inst_runs[al->arg].alarm_ref = (uint32_t)alarm + 1;
}

static struct alarm *alarm_of(const struct sim *sim, int alarm)
{
    SIM_ASSERT(alarm >= 0 && (size_t)alarm < sim->nalarms);
    return &sim->alarms[alarm];
}

void sim_alarm(struct sim *sim, int alarm, int64_t at_us)
{
    struct alarm *al = alarm_of(sim, alarm);
    if (sim->host_up && !sim->accepting)
        return; /* a graceful stop: the alarm clock is gone (create, before
                   the host is up, may set one) */
    if (at_us != SIM_NEVER && at_us < sim->now_us)
        at_us = sim->now_us;
    if (at_us == al->at_us)
        return; /* the wake is already there, in its place */
    if (al->ev)
        evq_cancel(sim->q, al->ev);
    al->ev = 0;
    al->at_us = at_us;
    if (at_us == SIM_NEVER)
        return;
    sim__policy_event(sim);
    /* An event at or past the end would never be popped: EV_END, pushed at
     * setup, comes first. */
    if (at_us < sim->end_us)
        al->ev = evq_push(sim->q, at_us, EV_ALARM | (sim->epoch << 8), (uint32_t)alarm, 0);
}

int64_t sim_alarm_at(const struct sim *sim, int alarm) { return alarm_of(sim, alarm)->at_us; }

void sim__alarms_quiesce(struct sim *sim)
{
    for (size_t i = 0; i < sim->nalarms; i++) {
        sim->alarms[i].at_us = SIM_NEVER;
        sim->alarms[i].ev = 0;
    }
}

int sim__alarm_fire(struct sim *sim, const struct evq_event *ev, struct evq_event *out)
{
    if (EV_EPOCH(ev->kind) != (sim->epoch & 0xffffffu) || !sim->accepting)
        return 0; /* set by a host incarnation that is gone, or stopping */
    struct alarm *al = alarm_of(sim, (int)ev->a);
    SIM_ASSERT(al->at_us == sim->now_us);
    al->at_us = SIM_NEVER;
    al->ev = 0;
    *out = *ev;
    out->kind = EV_TIMER | (ev->kind & ~0xffu);
    out->a = al->tag;
    out->b = al->arg;
    return 1;
}
