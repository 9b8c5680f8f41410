/* scenario_handler.c: workflow blocks and their handler lines.
 *
 * A handler line is a kind word, a name and options in any order; each
 * option is read by one table entry (opts) and checked for the kind of
 * handler, then the producer's schedule and source or the consumer's script
 * and subscriptions are checked as a whole (finish_producer,
 * finish_consumer).  Topics are local to a workflow; a topic name is
 * recorded as it is first used. */
#include "sim/scenario_int.h"

#include <stdlib.h>
#include <string.h>

#include "sim/suggest.h"
#include "sim/util.h"

/* --- workflows and handlers ------------------------------------------------------ */

int scn__close_workflow(struct parser *p)
{
    if (p->cur_wf < 0)
        return 0;
    const struct workflow_def *wf = &p->s->wfs[p->cur_wf];
    p->cur_wf = -1;
    if (wf->nhandlers == 0)
        return perr(p, wf->line, 1, "workflow '%s' has no handlers (indent its handler lines under it)",
                    q(p, wf->name));
    return 0;
}

int scn__parse_workflow(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    if (need(p, L, 0, 1, "a workflow name"))
        return -1;
    const struct tok *t = &L->tok[1];
    if (scn__check_name(p, L->no, t->col, t->s, "workflow"))
        return -1;
    for (uint16_t i = 0; i < s->nwfs; i++)
        if (!strcmp(s->wfs[i].name, t->s))
            return perr(p, L->no, t->col, "duplicate workflow '%s' (first at line %d)", q(p, t->s), s->wfs[i].line);
    if (s->nwfs >= SCN_MAX_WORKFLOWS)
        return perr(p, L->no, t->col, "too many workflows (limit %d)", SCN_MAX_WORKFLOWS);
    uint64_t count = 1;
    int ccol = t->col;
    if (L->ntok > 2) {
        if (strcmp(L->tok[2].s, "x"))
            return perr(p, L->no, L->tok[2].col,
                        "unexpected '%s' after the workflow name (write 'x N' for N instances)",
                        q(p, L->tok[2].s));
        if (need(p, L, 2, 1, "an instance count") ||
            scn__parse_count(p, L->no, &L->tok[3], 1, SCN_MAX_INSTANCES, "instance count", &count))
            return -1;
        ccol = L->tok[3].col;
        if (trailing(p, L, 4, "workflow"))
            return -1;
    }
    if (s->ninstances + count > SCN_MAX_INSTANCES)
        return perr(p, L->no, ccol, "the workflows have more than %d instances in all (sum of 'x N')",
                    SCN_MAX_INSTANCES);
    s->wfs = xgrow(s->wfs, sizeof *s->wfs, &p->cap_wfs, (size_t)s->nwfs + 1);
    struct workflow_def *wf = &s->wfs[s->nwfs];
    memset(wf, 0, sizeof *wf);
    wf->name = xstrdup(t->s);
    wf->count = (uint32_t)count;
    wf->line = L->no;
    p->cap_h[s->nwfs] = p->cap_t[s->nwfs] = 0;
    p->cur_wf = s->nwfs++;
    s->ninstances += count;
    return 0;
}

static int topic_index(struct parser *p, struct workflow_def *wf, const char *name)
{
    for (uint16_t t = 0; t < wf->ntopics; t++)
        if (!strcmp(wf->topics[t], name))
            return t;
    wf->topics = xgrow(wf->topics, sizeof *wf->topics, &p->cap_t[p->cur_wf], (size_t)wf->ntopics + 1);
    wf->topics[wf->ntopics] = xstrdup(name);
    return wf->ntopics++;
}

enum opt {
    O_RUNS, O_IDLE, O_PHASES, O_EVERY, O_OFFSET, O_CRON, O_TZ, O_AND, O_AT, O_SOURCE, O_PUBLISH,
    O_SUBSCRIBE, O_FIFO, O_BATCH, O_WINDOW, O_DIGEST, O_CORRELATE, O_SECONDS, O_AS_WRITTEN, NOPT
};
#define FOR_P 1
#define FOR_C 2
static const struct {
    const char *name;
    int who;                       /* FOR_P, FOR_C or both */
    int nargs;
    const char *args;              /* what the arguments are, for "missing ..." */
} opts[NOPT] = {
    [O_RUNS] = {"runs", FOR_P | FOR_C, 1, "a distribution"},
    [O_IDLE] = {"idle", FOR_P | FOR_C, 1, "a distribution"},
    [O_PHASES] = {"phases", FOR_P | FOR_C, 1, "phase shares like 10/80/10"},
    [O_EVERY] = {"every", FOR_P, 1, "a duration"},
    [O_OFFSET] = {"offset", FOR_P, 1, "a duration"},
    [O_CRON] = {"cron", FOR_P, 1, "a quoted cron expression"},
    [O_TZ] = {"tz", FOR_P, 1, "a time zone"},
    [O_AND] = {"and", FOR_P, 0, ""},
    [O_AT] = {"at", FOR_P, 1, "an instant"},
    [O_SOURCE] = {"source", FOR_P, 1, "a source name"},
    [O_PUBLISH] = {"publish", FOR_P, 1, "a topic name"},
    [O_SUBSCRIBE] = {"subscribe", FOR_C, 1, "topic names like a,b"},
    [O_FIFO] = {"fifo", FOR_C, 0, ""},
    [O_BATCH] = {"batch", FOR_C, 3, "'N or D'"},
    [O_WINDOW] = {"window", FOR_C, 1, "a duration"},
    [O_DIGEST] = {"digest", FOR_C, 1, "a time of day HH:MM"},
    [O_CORRELATE] = {"correlate", FOR_C, 2, "two topic names"},
    [O_SECONDS] = {"seconds", FOR_P, 0, ""},
    [O_AS_WRITTEN] = {"as-written", FOR_P, 0, ""},
};

static int opt_index(const char *w)
{
    for (int i = 0; i < NOPT; i++)
        if (!strcmp(opts[i].name, w))
            return i;
    return -1;
}

static int is_sched_opt(int o) { return o == O_EVERY || o == O_CRON || o == O_AT; }
static int is_script_opt(int o) { return o >= O_FIFO && o <= O_CORRELATE; }

/* The value of an `every` or `cron` option as written, for the grammars
 * (sim/grammar.h): its text and where it starts. */
static void keep_value(struct handler_def *h, int line, const struct tok *v)
{
    free(h->sched.value);
    h->sched.value = xstrdup(v->s);
    h->sched.vline = line;
    h->sched.vcol = v->col + (v->quoted ? 1 : 0);
}

static int parse_phases(struct parser *p, int line, const struct tok *t, uint8_t out[3])
{
    const char *c = t->s;
    int sum = 0;
    for (int k = 0; k < 3; k++) {
        uint64_t v;
        int nd = scn_read_digits(&c, 4, &v);
        if (nd == 0 || v > 100 || (k < 2 && *c != '/') || (k == 2 && *c))
            return perr(p, line, t->col, "bad phases '%s' (expected three percentages like 10/80/10)", q(p, t->s));
        if (k < 2)
            c++;
        out[k] = (uint8_t)v;
        sum += (int)v;
    }
    if (sum != 100)
        return perr(p, line, t->col, "phases '%s' add up to %d, not 100", q(p, t->s), sum);
    return 0;
}

/* What a handler line gave, option by option (pass 2 only). */
struct hline {
    const struct line *L;
    struct handler_def *h;
    struct workflow_def *wf;
    int seen[NOPT];                /* column of each option given, 0 if not */
    int at[NOPT];                  /* its token index */
    const struct tok *arg[NOPT];   /* its first argument */
    int sched_opt, script_opt;     /* the schedule and script options given, -1 none */
    int emit_explicit;             /* `publish TOPIC N` gave N */
    int as_written;                /* the line has `as-written` (anywhere) */
};

/* Parses the subscription list of `subscribe a,b,c`. */
static int parse_subscribe(struct parser *p, struct hline *hl, const struct tok *v)
{
    struct handler_def *h = hl->h;
    int no = hl->L->no;
    const char *c = v->s;
    for (;;) {
        const char *comma = strchr(c, ',');
        size_t len = comma ? (size_t)(comma - c) : strlen(c);
        char name[SCN_MAX_LINE + 1];
        memcpy(name, c, len);
        name[len] = 0;
        int col = v->col + (v->quoted ? 1 : 0) + (int)(c - v->s);
        if (scn__check_name(p, no, col, name, "topic"))
            return -1;
        int ti = topic_index(p, hl->wf, name);
        for (uint16_t j = 0; j < h->nsub; j++)
            if (h->sub[j] == ti)
                return perr(p, no, col, "topic '%s' is subscribed twice", q(p, name));
        if (h->nsub >= SCN_MAX_SUBSCRIBE)
            return perr(p, no, col, "too many subscriptions (limit %d)", SCN_MAX_SUBSCRIBE);
        h->sub[h->nsub++] = (uint16_t)ti;
        if (!comma)
            return 0;
        c = comma + 1;
    }
}

/* Parses option k at token i of a handler line; *used is set to the number
 * of tokens it took. */
static int handler_option(struct parser *p, struct hline *hl, int i, int k, int *used)
{
    const struct line *L = hl->L;
    struct handler_def *h = hl->h;
    int no = L->no;
    const struct tok *v = opts[k].nargs ? &L->tok[i + 1] : NULL;
    char m[256];
    *used = 1 + opts[k].nargs;
    switch (k) {
    case O_RUNS:
        return scn__parse_dist(p, no, v, &h->runs);
    case O_IDLE:
        return scn__parse_dist(p, no, v, &h->idle);
    case O_PHASES:
        return parse_phases(p, no, v, h->split_pct);
    case O_EVERY:
        h->sched.kind = SCHED_EVERY;
        keep_value(h, no, v);
        if (hl->as_written)
            return 0; /* only a grammar reads it */
        return scn__parse_dur(p, no, v->col, v->s, 1, "'every'", &h->sched.every_us);
    case O_OFFSET:
        if (scn__parse_dur(p, no, v->col, v->s, 0, "'offset'", &h->sched.offset_us))
            return -1;
        if (h->sched.offset_us >= p->s->horizon_us)
            return perr(p, no, v->col, "offset '%s' is not before the horizon", q(p, v->s));
        return 0;
    case O_CRON:
        /* Parsed when the line is complete: `and` may follow it. */
        h->sched.kind = SCHED_CRON;
        keep_value(h, no, v);
        if (!v->quoted && v->s[0] != '@')
            return perr(p, no, v->col, "the cron expression must be quoted, like cron \"0 9 * * 1-5\"");
        return 0;
    case O_TZ:
        if (cal_zone_get(v->s, &h->sched.zone, m, sizeof m) != 0)
            return perr(p, no, v->col, "%s", m);
        return 0;
    case O_AT:
        h->sched.kind = SCHED_AT;
        return scn__parse_instant(p, no, v, LIM_HORIZON, &h->sched.at_us);
    case O_SOURCE:
        return scn__check_name(p, no, v->col, v->s, "source");
    case O_PUBLISH:
        if (scn__check_name(p, no, v->col, v->s, "topic"))
            return -1;
        h->out_topic = topic_index(p, hl->wf, v->s);
        /* An optional count: a topic name never starts with a digit. */
        if (i + 2 < L->ntok && scn__all_digits(L->tok[i + 2].s)) {
            uint64_t nv;
            if (scn__parse_count(p, no, &L->tok[i + 2], 1, SCN_MAX_EMIT, "publish count", &nv))
                return -1;
            h->emit_n = (uint32_t)nv;
            hl->emit_explicit = 1;
            (*used)++;
        }
        return 0;
    case O_SUBSCRIBE:
        return parse_subscribe(p, hl, v);
    case O_FIFO:
        h->script.kind = SCRIPT_FIFO;
        return 0;
    case O_BATCH: {
        uint64_t bn;
        h->script.kind = SCRIPT_BATCH;
        if (scn__parse_count(p, no, v, 1, SCN_MAX_BATCH, "batch size", &bn))
            return -1;
        h->script.batch_n = (uint32_t)bn;
        if (strcmp(L->tok[i + 2].s, "or"))
            return perr(p, no, L->tok[i + 2].col, "expected 'or' after the batch size, got '%s' (batch N or D)",
                        q(p, L->tok[i + 2].s));
        const struct tok *dt = &L->tok[i + 3];
        return scn__parse_dur(p, no, dt->col, dt->s, 1, "batch wait", &h->script.batch_us);
    }
    case O_WINDOW:
        h->script.kind = SCRIPT_WINDOW;
        return scn__parse_dur(p, no, v->col, v->s, 1, "window", &h->script.window_us);
    case O_DIGEST:
        h->script.kind = SCRIPT_DIGEST;
        if (cal_tod_parse(v->s, &h->script.digest_min, m, sizeof m) != 0)
            return perr(p, no, v->col, "%s", m);
        return 0;
    case O_CORRELATE:
        /* Resolved when the line is complete: `subscribe` may follow it.
         * An optional `by key` says what pairs the events (their key, the
         * only thing that can). */
        h->script.kind = SCRIPT_CORRELATE;
        if (i + 3 < L->ntok && !L->tok[i + 3].quoted && !strcmp(L->tok[i + 3].s, "by")) {
            if (i + 4 >= L->ntok)
                return perr(p, no, L->tok[i + 3].col + 2, "missing 'key' after 'by' (correlate A B by key)");
            const struct tok *kt = &L->tok[i + 4];
            if (kt->quoted || strcmp(kt->s, "key"))
                return perr(p, no, kt->col, "correlate pairs events by their key: expected 'key' after 'by', got '%s'",
                            q(p, kt->s));
            *used += 2;
        }
        return 0;
    }
    return 0;
}

/* The checks of a complete producer line, then its derived fields. */
static int finish_producer(struct parser *p, struct hline *hl)
{
    const struct line *L = hl->L;
    struct handler_def *h = hl->h;
    const int *seen = hl->seen;
    int no = L->no, ncol = L->tok[1].col;
    if (hl->sched_opt < 0)
        return perr(p, no, ncol, "producer '%s' has no schedule (every, cron or at)", q(p, h->name));
    if (seen[O_OFFSET] && hl->sched_opt != O_EVERY)
        return perr(p, no, seen[O_OFFSET], "'offset' needs an 'every' schedule");
    if (seen[O_TZ] && hl->sched_opt != O_CRON)
        return perr(p, no, seen[O_TZ], "'tz' needs a 'cron' schedule");
    if (seen[O_AND] && hl->sched_opt != O_CRON)
        return perr(p, no, seen[O_AND], "'and' needs a 'cron' schedule");
    if (seen[O_SECONDS] && hl->sched_opt != O_CRON)
        return perr(p, no, seen[O_SECONDS], "'seconds' needs a 'cron' schedule");
    if (seen[O_AS_WRITTEN] && hl->sched_opt == O_AT)
        return perr(p, no, seen[O_AS_WRITTEN], "'as-written' needs an 'every' or 'cron' schedule");
    if (hl->sched_opt == O_CRON && !h->sched.zone)
        h->sched.zone = p->s->zone;
    h->sched.cron_flags = (uint8_t)((seen[O_AND] ? CAL_CRON_AND : 0) | (seen[O_SECONDS] ? CAL_CRON_SECONDS : 0));
    if (seen[O_AS_WRITTEN]) {
        /* Only the grammar of the system that runs it reads it. */
        h->sched.as_written = 1;
        h->sched.raw_kind = h->sched.kind;
        h->sched.kind = SCHED_NONE;
        p->s->has_as_written = 1;
    } else if (hl->sched_opt == O_CRON) {
        const struct tok *ct = hl->arg[O_CRON];
        char m[256];
        int ecol = 0;
        if (cal_cron_parse(ct->s, h->sched.cron_flags, &h->sched.cron, m, sizeof m, &ecol) != 0)
            return perr(p, no, ct->col + (ct->quoted ? 1 : 0) + (ecol > 0 ? ecol - 1 : 0), "%s", m);
    }
    if (seen[O_SOURCE]) {
        const struct tok *st = hl->arg[O_SOURCE];
        scn__add_ref(p, REF_SOURCE, no, st->col, st->s, (uint32_t)p->cur_wf, (uint32_t)hl->wf->nhandlers - 1);
        if (!seen[O_PUBLISH])
            h->out_topic = topic_index(p, hl->wf, st->s);
    }
    /* A producer that neither polls nor publishes (a nightly backup) is a
     * side effect only: its runs, lateness and misses are measured all the
     * same. */
    if (!hl->emit_explicit)
        h->emit_n = seen[O_PUBLISH] && !seen[O_SOURCE] ? 1 : 0;
    /* The schedule's words as written, for reports. */
    static const int order[] = {O_EVERY, O_OFFSET, O_CRON, O_TZ, O_AT, O_AND, O_SECONDS, O_AS_WRITTEN};
    char buf[SCN_MAX_LINE + 64];
    size_t o = 0;
    buf[0] = 0;
    for (size_t j = 0; j < sizeof order / sizeof order[0]; j++) {
        int k = order[j];
        if (!seen[k])
            continue;
        const struct tok *v = hl->arg[k];
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", o ? " " : "", opts[k].name);
        if (v && o < sizeof buf)
            o += (size_t)snprintf(buf + o, sizeof buf - o, v->quoted ? " \"%s\"" : " %s", v->s);
        if (o >= sizeof buf)
            o = sizeof buf - 1;
    }
    h->sched.text = xstrdup(buf);
    return 0;
}

/* The checks of a complete consumer line, and its correlate topics. */
static int finish_consumer(struct parser *p, struct hline *hl)
{
    const struct line *L = hl->L;
    struct handler_def *h = hl->h;
    int no = L->no, ncol = L->tok[1].col;
    if (!hl->seen[O_SUBSCRIBE])
        return perr(p, no, ncol, "consumer '%s' has no 'subscribe'", q(p, h->name));
    if (hl->script_opt < 0)
        return perr(p, no, ncol, "consumer '%s' has no script (fifo, batch, window, digest or correlate)",
                    q(p, h->name));
    if (hl->script_opt != O_CORRELATE)
        return 0;
    const struct tok *tt[2] = {&L->tok[hl->at[O_CORRELATE] + 1], &L->tok[hl->at[O_CORRELATE] + 2]};
    int found[2] = {-1, -1};
    for (int k = 0; k < 2; k++) {
        if (scn__check_name(p, no, tt[k]->col, tt[k]->s, "topic"))
            return -1;
        for (uint16_t j = 0; j < h->nsub; j++)
            if (!strcmp(hl->wf->topics[h->sub[j]], tt[k]->s))
                found[k] = h->sub[j];
        if (found[k] < 0)
            return perr(p, no, tt[k]->col, "correlate topic '%s' is not among the subscriptions of '%s'",
                        q(p, tt[k]->s), q(p, h->name));
    }
    if (found[0] == found[1])
        return perr(p, no, tt[1]->col, "correlate needs two different topics, got '%s' twice", q(p, tt[1]->s));
    h->script.corr_a = (uint16_t)found[0];
    h->script.corr_b = (uint16_t)found[1];
    return 0;
}

/* "unknown option 'evry' for producer 'p'; did you mean 'every'?": the
 * suggestion is an option of this kind of handler. */
static int unknown_option(struct parser *p, const struct line *L, const struct tok *o, int producer, const char *name)
{
    perr(p, L->no, o->col, "unknown option '%s' for %s '%s'", q(p, o->s), producer ? "producer" : "consumer",
         q(p, name));
    struct suggest sg;
    suggest_init(&sg, o->s);
    for (int i = 0; i < NOPT; i++)
        if (opts[i].who & (producer ? FOR_P : FOR_C))
            suggest_add(&sg, opts[i].name);
    suggest_append(&sg, p->d->msg, sizeof p->d->msg);
    return -1;
}

/* `producer NAME OPTION...` or `consumer NAME OPTION...` in the open
 * workflow block; options in any order, each at most once. */
int scn__parse_handler(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    struct workflow_def *wf = &s->wfs[p->cur_wf];
    int no = L->no, producer = !strcmp(L->tok[0].s, "producer");
    const char *kind = producer ? "producer" : "consumer";
    if (need(p, L, 0, 1, "a handler name"))
        return -1;
    const struct tok *nt = &L->tok[1];
    if (scn__check_name(p, no, nt->col, nt->s, "handler"))
        return -1;
    for (uint16_t i = 0; i < wf->nhandlers; i++)
        if (!strcmp(wf->handlers[i].name, nt->s))
            return perr(p, no, nt->col, "duplicate handler '%s' in workflow '%s' (first at line %d)", q(p, nt->s),
                        q(p, wf->name), wf->handlers[i].line);
    if (wf->nhandlers >= SCN_MAX_HANDLERS)
        return perr(p, no, nt->col, "too many handlers in workflow '%s' (limit %d)", q(p, wf->name), SCN_MAX_HANDLERS);
    if (s->nhandler_instances + wf->count > SCN_MAX_HANDLER_INSTANCES)
        return perr(p, no, nt->col, "more than %d handler instances in all (handlers times 'x N')",
                    SCN_MAX_HANDLER_INSTANCES);
    s->nhandler_instances += wf->count;
    wf->handlers = xgrow(wf->handlers, sizeof *wf->handlers, &p->cap_h[p->cur_wf], (size_t)wf->nhandlers + 1);
    struct handler_def *h = &wf->handlers[wf->nhandlers++];
    memset(h, 0, sizeof *h);
    h->name = xstrdup(nt->s);
    h->kind = producer ? H_PRODUCER : H_CONSUMER;
    h->idle.kind = DIST_FIXED;
    h->split_pct[0] = 10;
    h->split_pct[1] = 80;
    h->split_pct[2] = 10;
    h->source = -1;
    h->out_topic = -1;
    h->line = no;

    struct hline hl = {.L = L, .h = h, .wf = wf, .sched_opt = -1, .script_opt = -1};
    for (int i = 2; i < L->ntok; i++)
        hl.as_written |= !L->tok[i].quoted && !strcmp(L->tok[i].s, "as-written");
    for (int i = 2; i < L->ntok;) {
        const struct tok *o = &L->tok[i];
        int k = o->quoted ? -1 : opt_index(o->s), used;
        if (k < 0)
            return unknown_option(p, L, o, producer, h->name);
        if (!(opts[k].who & (producer ? FOR_P : FOR_C)))
            return perr(p, no, o->col, "'%s' is not an option of a %s (it is for %ss)", o->s, kind,
                        producer ? "consumer" : "producer");
        if (hl.seen[k])
            return perr(p, no, o->col, "duplicate option '%s' (first at column %d)", o->s, hl.seen[k]);
        if (is_sched_opt(k) && hl.sched_opt >= 0)
            return perr(p, no, o->col, "a producer has exactly one schedule: '%s' after '%s'", o->s,
                        opts[hl.sched_opt].name);
        if (is_script_opt(k) && hl.script_opt >= 0)
            return perr(p, no, o->col, "a consumer has exactly one script: '%s' after '%s'", o->s,
                        opts[hl.script_opt].name);
        if (opts[k].nargs && need(p, L, i, opts[k].nargs, opts[k].args))
            return -1;
        hl.seen[k] = o->col;
        hl.at[k] = i;
        hl.arg[k] = opts[k].nargs ? &L->tok[i + 1] : NULL;
        if (is_sched_opt(k))
            hl.sched_opt = k;
        if (is_script_opt(k))
            hl.script_opt = k;
        if (handler_option(p, &hl, i, k, &used))
            return -1;
        i += used;
    }
    if (!hl.seen[O_RUNS])
        return perr(p, no, nt->col, "%s '%s' has no 'runs' distribution (e.g. 'runs 5s')", kind, q(p, h->name));
    return producer ? finish_producer(p, &hl) : finish_consumer(p, &hl);
}
