/* trace.c: fact kinds, typed trace records and their one formatter
 * (see trace.h). */
#include "sim/trace.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sim/jobs.h"
#include "sim/util.h"
#include "sim/world.h"

static const struct {
    const char *name;
    unsigned fields;
} kinds[FACT_KIND_END] = {
    [FACT_PUBLISH] = {"publish", TF_ITEM | TF_KEY},
    [FACT_DROP] = {"drop", TF_ITEM | TF_CAUSE},
    [FACT_ORPHAN] = {"orphan", TF_TOPIC | TF_KEY},
    [FACT_RUN_START] = {"start", TF_RUN | TF_REASON | TF_TAKEN | TF_DUE | TF_WAKE | TF_RESUME},
    [FACT_RUN_END] = {"end", TF_RUN | TF_OUTCOME | TF_PHASE | TF_FAIL},
    [FACT_MUTATION] = {"mutation", TF_RUN},
    [FACT_DELIVERY] = {"deliver", TF_RESULT | TF_OK},
    [FACT_CRASH] = {"crash", TF_TARGET | TF_TARGET_INDEX},
    [FACT_RESTART] = {"restart", TF_TARGET | TF_TARGET_INDEX},
    [FACT_TIMER] = {"timer", TF_TAG | TF_ARG},
    [FACT_TICK] = {"tick", TF_TICKER},
    [FACT_TRIGGER] = {"trigger", TF_WORKFLOW},
    [FACT_PHASE] = {"phase", TF_RUN | TF_PHASE},
    [FACT_WAKEUPS] = {"wakeups", TF_TICKER | TF_COUNT},
    [FACT_HORIZON] = {"horizon", 0},
    [FACT_STOP] = {"stopped", TF_COUNT},
    [FACT_NOTE] = {"note", TF_NOTE},
    [FACT_DURABLE] = {"durable", TF_ARG | TF_TAG},
};

const char *fact_kind_name(enum fact_kind k)
{
    return (int)k >= 0 && k < FACT_KIND_END ? kinds[k].name : NULL;
}

int fact_kind_parse(const char *name)
{
    for (int k = 0; k < FACT_KIND_END; k++)
        if (kinds[k].name && !strcmp(kinds[k].name, name))
            return k;
    return -1;
}

int fact_kind_durable(enum fact_kind k)
{
    switch (k) {
    case FACT_RUN_START:
    case FACT_PHASE:
    case FACT_MUTATION:
    case FACT_RUN_END:
    case FACT_DELIVERY:
    case FACT_DROP:
    case FACT_DURABLE:
        return 1;
    default:
        return 0;
    }
}

unsigned trace_kind_fields(enum fact_kind k)
{
    return (int)k >= 0 && k < FACT_KIND_END ? kinds[k].fields : 0;
}

void trace_rec_init(struct trace_rec *r, enum fact_kind k, int64_t t_us, int32_t handler, uint64_t run)
{
    memset(r, 0, sizeof *r);
    r->t_us = t_us;
    r->kind = (uint8_t)k;
    r->handler = handler;
    r->run = run;
    if (k != FACT_NOTE) {
        r->due_us = -1;
        r->wake_us = SIM_NEVER;
    }
}

/* "wf.topic", or "wf[k].topic" in a workflow stamped out more than once. */
static void topic_name(const struct world *w, uint32_t t, char *buf, size_t n)
{
    if (!w || t >= w->nt) {
        snprintf(buf, n, "%" PRIu32, t);
        return;
    }
    uint32_t inst = w->topic_inst[t];
    const struct workflow_def *wf = &w->scn->wfs[w->inst_wf[inst]];
    const char *name = wf->topics[t - w->inst_first_t[inst]];
    if (wf->count > 1)
        snprintf(buf, n, "%s[%" PRIu32 "].%s", wf->name, inst - w->wf_first_inst[w->inst_wf[inst]], name);
    else
        snprintf(buf, n, "%s.%s", wf->name, name);
}

static int format_start(const struct trace_rec *r, char *buf, size_t n)
{
    char due[48] = "-", wake[48] = "-";
    if (r->due_us >= 0)
        sim_fmt_dur(r->due_us, due, sizeof due);
    if (r->wake_us != SIM_NEVER)
        sim_fmt_dur(r->wake_us, wake, sizeof wake);
    return snprintf(buf, n, "reason=%s taken=%" PRIu32 " due=%s wake=%s%s", run_reason_name(r->reason), r->taken,
                    due, wake, r->resume ? " resume" : "");
}

int trace_format_detail(const struct trace_rec *r, const struct world *w, char *buf, size_t n)
{
    char name[160];
    switch ((enum fact_kind)r->kind) {
    case FACT_PUBLISH:
        return snprintf(buf, n, "item=%" PRIu64 " key=%" PRIu32, r->item, r->key);
    case FACT_DROP:
        return snprintf(buf, n, "item=%" PRIu64 " %s", r->item, drop_cause_name(r->cause));
    case FACT_ORPHAN:
        topic_name(w, r->topic, name, sizeof name);
        return snprintf(buf, n, "topic=%s key=%" PRIu32, name, r->key);
    case FACT_RUN_START:
        return format_start(r, buf, n);
    case FACT_RUN_END:
        /* The phase as a number, as this line has always shown it. */
        return snprintf(buf, n, "%s phase=%d%s%s", run_outcome_name(r->outcome), r->phase,
                        r->fail ? " fail=" : "", r->fail ? fail_class_name(r->fail) : "");
    case FACT_MUTATION:
        return snprintf(buf, n, "applied");
    case FACT_DELIVERY:
        return snprintf(buf, n, "result=%" PRIu64 " %s", r->result, r->ok ? "delivered" : "failed");
    case FACT_CRASH:
    case FACT_RESTART:
        return snprintf(buf, n, "%s %" PRIu32, crash_target_name(r->target), r->target_index);
    case FACT_TIMER:
        return snprintf(buf, n, "tag=%" PRIu32 " arg=%" PRIu64, r->tag, r->arg);
    case FACT_TICK:
        return snprintf(buf, n, "ticker=%" PRIu32, r->ticker);
    case FACT_TRIGGER:
        if (w && r->workflow < w->scn->nwfs)
            return snprintf(buf, n, "%s", w->scn->wfs[r->workflow].name);
        return snprintf(buf, n, "workflow %" PRIu32, r->workflow);
    case FACT_PHASE:
        return snprintf(buf, n, "%s", run_phase_name(r->phase));
    case FACT_WAKEUPS:
        return snprintf(buf, n, "ticker=%" PRIu32 " ticks=%" PRIu64, r->ticker, r->count);
    case FACT_HORIZON:
        return snprintf(buf, n, "drain begins");
    case FACT_STOP:
        return snprintf(buf, n, "%" PRIu64 " runs cut off", r->count);
    case FACT_NOTE:
        return snprintf(buf, n, "%.*s", (int)sizeof r->note, r->note);
    case FACT_DURABLE:
        return snprintf(buf, n, "row=%" PRIu64 " %s", r->arg, job_status_name((enum job_status)r->tag));
    case FACT_KIND_END:
        break;
    }
    return snprintf(buf, n, "?");
}

/* "wf.handler", or "wf[k].handler" in a workflow stamped out more than once. */
static void handler_name(const struct world *w, int32_t h, char *buf, size_t n)
{
    if (h < 0) {
        snprintf(buf, n, "-");
        return;
    }
    if (!w || (uint32_t)h >= w->nh) {
        snprintf(buf, n, "%" PRId32, h);
        return;
    }
    const struct world_handler *wh = &w->h[h];
    const struct workflow_def *wf = &w->scn->wfs[wh->wf];
    if (wf->count > 1)
        snprintf(buf, n, "%s[%" PRIu32 "].%s", wf->name, wh->inst - w->wf_first_inst[wh->wf],
                 wf->handlers[wh->h].name);
    else
        snprintf(buf, n, "%s.%s", wf->name, wf->handlers[wh->h].name);
}

int trace_format_line(const struct trace_rec *r, const struct world *w, const char *label, char *buf, size_t n)
{
    char t[48], hn[160], detail[160], run[32] = "";
    const char *kind = fact_kind_name((enum fact_kind)r->kind);
    sim_fmt_dur(r->t_us, t, sizeof t);
    handler_name(w, r->handler, hn, sizeof hn);
    trace_format_detail(r, w, detail, sizeof detail);
    if (r->run)
        snprintf(run, sizeof run, " run=%" PRIu64, r->run);
    return snprintf(buf, n, "%s %s %s %-8s %s%s", label ? label : "", t, hn, kind ? kind : "?", detail, run);
}
