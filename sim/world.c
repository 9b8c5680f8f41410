/* world.c: stamps a scenario's workflow templates into dense instance ids.
 * See world.h for the layout.  O(handler instances + topic instances). */
#include "sim/world.h"

#include <stdio.h>
#include <stdlib.h>

#include "sim/util.h"

void world_build(struct world *w, const struct scenario *s)
{
    w->scn = s;
    w->ninst = (uint32_t)s->ninstances;
    w->inst_wf = xcalloc(w->ninst, sizeof *w->inst_wf);
    w->inst_first_h = xcalloc(w->ninst + 1, sizeof *w->inst_first_h);
    w->inst_first_t = xcalloc(w->ninst + 1, sizeof *w->inst_first_t);
    w->wf_first_tmpl = xcalloc((size_t)s->nwfs + 1, sizeof *w->wf_first_tmpl);

    uint32_t tmpl = 0;
    for (uint16_t f = 0; f < s->nwfs; f++) {
        w->wf_first_tmpl[f] = tmpl;
        tmpl += s->wfs[f].nhandlers;
    }
    w->wf_first_tmpl[s->nwfs] = tmpl;
    w->ntmpl = tmpl;
    w->tmpl_def = xcalloc(tmpl ? tmpl : 1, sizeof *w->tmpl_def);
    for (uint16_t f = 0; f < s->nwfs; f++)
        for (uint16_t h = 0; h < s->wfs[f].nhandlers; h++)
            w->tmpl_def[w->wf_first_tmpl[f] + h] = &s->wfs[f].handlers[h];

    w->wf_first_inst = xcalloc((size_t)s->nwfs + 1, sizeof *w->wf_first_inst);
    uint32_t i = 0, nh = 0, nt = 0;
    for (uint16_t f = 0; f < s->nwfs; f++) {
        w->wf_first_inst[f] = i;
        for (uint32_t k = 0; k < s->wfs[f].count; k++, i++) {
            w->inst_wf[i] = f;
            w->inst_first_h[i] = nh;
            w->inst_first_t[i] = nt;
            nh += s->wfs[f].nhandlers;
            nt += s->wfs[f].ntopics;
        }
    }
    SIM_ASSERT(i == w->ninst);
    w->wf_first_inst[s->nwfs] = i;
    w->inst_first_h[i] = nh;
    w->inst_first_t[i] = nt;
    w->nh = nh;
    w->nt = nt;

    w->h = xcalloc(nh, sizeof *w->h);
    w->topic_inst = xcalloc(nt, sizeof *w->topic_inst);
    w->sub_first = xcalloc((size_t)nt + 1, sizeof *w->sub_first);
    /* Count subscriptions per topic instance, then fill (counting sort keeps
     * subscribers of a topic in handler order, which the engine relies on
     * for a deterministic fan-out order). */
    for (uint32_t in = 0; in < w->ninst; in++) {
        const struct workflow_def *wf = &s->wfs[w->inst_wf[in]];
        for (uint16_t h = 0; h < wf->nhandlers; h++) {
            uint32_t id = w->inst_first_h[in] + h;
            w->h[id].inst = in;
            w->h[id].wf = w->inst_wf[in];
            w->h[id].h = h;
            w->h[id].tmpl = w->wf_first_tmpl[w->inst_wf[in]] + h;
            const struct handler_def *hd = &wf->handlers[h];
            if (hd->kind == H_CONSUMER)
                for (uint16_t k = 0; k < hd->nsub; k++)
                    w->sub_first[w->inst_first_t[in] + hd->sub[k] + 1]++;
        }
        for (uint16_t t = 0; t < wf->ntopics; t++)
            w->topic_inst[w->inst_first_t[in] + t] = in;
    }
    for (uint32_t t = 0; t < nt; t++)
        w->sub_first[t + 1] += w->sub_first[t];
    w->subs = xcalloc(w->sub_first[nt] ? w->sub_first[nt] : 1, sizeof *w->subs);
    uint32_t *fill = xcalloc((size_t)nt + 1, sizeof *fill);
    for (uint32_t id = 0; id < nh; id++) {
        const struct handler_def *hd = world_hdef(w, id);
        if (hd->kind != H_CONSUMER)
            continue;
        for (uint16_t k = 0; k < hd->nsub; k++) {
            uint32_t t = w->inst_first_t[w->h[id].inst] + hd->sub[k];
            w->subs[w->sub_first[t] + fill[t]++] = id;
        }
    }
    free(fill);
}

void world_free(struct world *w)
{
    free(w->inst_wf);
    free(w->wf_first_inst);
    free(w->inst_first_h);
    free(w->inst_first_t);
    free(w->wf_first_tmpl);
    free(w->tmpl_def);
    free(w->h);
    free(w->topic_inst);
    free(w->sub_first);
    free(w->subs);
    *w = (struct world){0};
}

void world_tmpl_name(const struct world *w, uint32_t tmpl, char *buf, int n)
{
    const struct scenario *s = w->scn;
    for (uint16_t f = 0; f < s->nwfs; f++) {
        if (tmpl < w->wf_first_tmpl[f + 1]) {
            snprintf(buf, (size_t)n, "%s.%s", s->wfs[f].name, s->wfs[f].handlers[tmpl - w->wf_first_tmpl[f]].name);
            return;
        }
    }
    SIM_ASSERT(0 && "template index out of range");
}
