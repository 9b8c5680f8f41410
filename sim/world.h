/* world.h: a scenario stamped out into concrete instances.
 *
 * The scenario holds workflow templates; a simulation runs instances of
 * them (`workflow mail x 10` gives ten).  The world gives every handler
 * instance and every topic instance a dense id, so that the engine, the
 * policies and the checker use plain arrays indexed by id.
 *
 * Layout: instance i of all workflows owns handler ids
 * [inst_first_h[i], inst_first_h[i] + nhandlers of its template) and topic
 * ids [inst_first_t[i], ... + ntopics).  Handler *templates* (a handler of a
 * workflow template, whatever the instance) have their own dense index,
 * `tmpl`, used for per-handler metrics, which aggregate over instances.
 *
 * Ownership: world_build allocates, world_free releases; the world borrows
 * the scenario, which must outlive it. */
#ifndef SIM_WORLD_H
#define SIM_WORLD_H

#include <stdint.h>

#include "sim/scenario.h"

struct world_handler {
    uint32_t inst;                 /* workflow instance */
    uint16_t wf;                   /* workflow template */
    uint16_t h;                    /* handler index in the template */
    uint32_t tmpl;                 /* dense handler-template index */
};

struct world {
    const struct scenario *scn;
    uint32_t ninst;                /* workflow instances */
    uint32_t *wf_first_inst;       /* [nwfs + 1] instances of template f: [first[f], first[f+1]) */
    uint16_t *inst_wf;             /* [ninst] template of each instance */
    uint32_t *inst_first_h;        /* [ninst + 1] */
    uint32_t *inst_first_t;        /* [ninst + 1] */
    uint32_t nh;                   /* handler instances */
    struct world_handler *h;       /* [nh] */
    uint32_t nt;                   /* topic instances */
    uint32_t *topic_inst;          /* [nt] instance of each topic */
    uint32_t ntmpl;                /* handler templates */
    uint32_t *wf_first_tmpl;       /* [nwfs + 1] */
    const struct handler_def **tmpl_def; /* [ntmpl] each template's definition */
    /* subscribers of each topic instance: subs[sub_first[t] .. sub_first[t+1]) */
    uint32_t *sub_first;           /* [nt + 1] */
    uint32_t *subs;
};

void world_build(struct world *w, const struct scenario *s);
void world_free(struct world *w);

/* A template's definition: a small table, where world_hdef reads the
 * handler's own entry of w->h (a cache miss in a large fleet when nothing
 * else read it). */
static inline const struct handler_def *world_tdef(const struct world *w, uint32_t tmpl)
{
    return w->tmpl_def[tmpl];
}

static inline const struct handler_def *world_hdef(const struct world *w, uint32_t hid)
{
    const struct world_handler *wh = &w->h[hid];
    return &w->scn->wfs[wh->wf].handlers[wh->h];
}

/* "mail.triage" for a template index (static storage per call site is not
 * used: writes into buf). */
void world_tmpl_name(const struct world *w, uint32_t tmpl, char *buf, int n);

#endif
