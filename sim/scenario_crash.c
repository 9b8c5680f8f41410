/* scenario_crash.c: the lines of the scenario format that place a host
 * crash among the facts of its instant, and the one that asks for
 * crash-point exploration (docs/crashpoints.md):
 *
 *     crash host at T first for D
 *     crash host at T after KIND [N] [of WORKFLOW[K].HANDLER] for D
 *     crashpoints [from T] [to T] [max N] [down D]
 *
 * KIND is a durable fact kind (fact_kind_durable in sim/trace.h), kept here
 * as a list of names because the parser includes nothing of the engine;
 * tests/test_crashpoints.c checks that the two lists agree.  The handler
 * of `of` is resolved in pass 3 (REF_CRASH_AT), with its instance number
 * checked against the workflow's count. */
#include "sim/scenario.h"
#include "sim/scenario_int.h"

#include <stdlib.h>
#include <string.h>

#include "sim/util.h"

/* The durable fact kinds, as the trace names them. */
static const char *const durable_kinds[] = {"start", "phase", "mutation", "end", "deliver", "drop", "durable"};
#define NDURABLE ((int)(sizeof durable_kinds / sizeof durable_kinds[0]))

/* Reads `of WF.H` / `of WF[K].H` at token t into a REF_CRASH_AT for crash
 * ci. */
static int crash_handler(struct parser *p, int no, const struct tok *t, uint32_t ci)
{
    const char *s = t->s, *dot = strchr(s, '.'), *br = strchr(s, '[');
    if (!dot || strchr(dot + 1, '.') || dot == s || !dot[1])
        return perr(p, no, t->col, "expected WORKFLOW.HANDLER or WORKFLOW[K].HANDLER, got '%s'", q(p, s));
    uint64_t k = 0;
    size_t wlen = (size_t)(dot - s);
    if (br && br < dot) {
        if (dot[-1] != ']' || br == s)
            return perr(p, no, t->col, "expected WORKFLOW[K].HANDLER, got '%s'", q(p, s));
        char num[24];
        size_t nlen = (size_t)(dot - 1 - (br + 1));
        if (nlen == 0 || nlen >= sizeof num)
            return perr(p, no, t->col, "bad instance number in '%s'", q(p, s));
        memcpy(num, br + 1, nlen);
        num[nlen] = 0;
        if (!scn__all_digits(num) || (k = strtoull(num, NULL, 10)) >= SCN_MAX_INSTANCES)
            return perr(p, no, t->col, "bad instance number in '%s'", q(p, s));
        wlen = (size_t)(br - s);
    } else if (br) {
        return perr(p, no, t->col, "expected WORKFLOW[K].HANDLER, got '%s'", q(p, s));
    }
    char name[2 * SCN_MAX_NAME + 2];
    if (wlen >= SCN_MAX_NAME || strlen(dot) > SCN_MAX_NAME)
        return perr(p, no, t->col, "name too long in '%s'", q(p, s));
    snprintf(name, sizeof name, "%.*s%s", (int)wlen, s, dot);
    scn__add_ref(p, REF_CRASH_AT, no, t->col, name, ci, (uint32_t)k);
    return 0;
}

/* `after KIND [N] [of H]` at tokens i..: fills c; *span gets its length. */
static int crash_after(struct parser *p, const struct line *L, int i, struct crash_def *c, uint32_t ci, int *span)
{
    int no = L->no;
    if (need(p, L, i, 1, "a fact kind (start, phase, mutation, end, deliver, drop or durable)"))
        return -1;
    const struct tok *kt = &L->tok[i + 1];
    for (int k = 0; k < NDURABLE && !c->pos_kind; k++)
        if (!strcmp(kt->s, durable_kinds[k]))
            c->pos_kind = durable_kinds[k];
    if (!c->pos_kind)
        return perr(p, no, kt->col, "unknown fact kind '%s' (valid: start, phase, mutation, end, deliver, drop, durable)",
                    q(p, kt->s));
    int j = i + 2;
    c->pos_nth = 1;
    if (j < L->ntok && scn__all_digits(L->tok[j].s)) {
        uint64_t nth;
        if (scn__parse_count(p, no, &L->tok[j], 1, 1000000, "fact number", &nth))
            return -1;
        c->pos_nth = (uint32_t)nth;
        j++;
    }
    if (j < L->ntok && !strcmp(L->tok[j].s, "of")) {
        if (need(p, L, j, 1, "WORKFLOW.HANDLER") || crash_handler(p, no, &L->tok[j + 1], ci))
            return -1;
        j += 2;
    }
    *span = j - i;
    return 0;
}

int scn__crash_pos(struct parser *p, const struct line *L, int i, struct crash_def *c, uint32_t ci,
                   struct line **rest)
{
    *rest = NULL;
    c->pos_wf = c->pos_h = -1;
    int at = -1, span = 1;
    for (int k = i; k < L->ntok && at < 0; k++)
        if (!L->tok[k].quoted && (!strcmp(L->tok[k].s, "first") || !strcmp(L->tok[k].s, "after")))
            at = k;
    if (at < 0)
        return 0;
    const struct tok *w = &L->tok[at];
    if (c->target != CRASH_HOST)
        return perr(p, L->no, w->col, "'%s' places a host crash only (crash host at T %s ...)", w->s, w->s);
    if (w->s[0] == 'f') {
        c->pos = CRASH_POS_FIRST;
    } else {
        c->pos = CRASH_POS_AFTER;
        if (crash_after(p, L, at, c, ci, &span))
            return -1;
    }
    /* The rest of the line, without the position, for the clause parser
     * (the tokens still point into L's buffer). */
    struct line *r = xmalloc(sizeof *r);
    r->no = L->no;
    r->indented = L->indented;
    r->raw = L->raw;
    r->len = L->len;
    r->ntok = L->ntok - span;
    memcpy(r->tok, L->tok, (size_t)at * sizeof *r->tok);
    memcpy(r->tok + at, L->tok + at + span, (size_t)(L->ntok - at - span) * sizeof *r->tok);
    *rest = r;
    return 0;
}

int scn__crash_pos_check(struct parser *p, const struct line *L, const struct crash_def *c)
{
    if (c->pos == CRASH_POS_AT)
        return 0;
    if (c->random)
        return perr(p, L->no, 1, "a random crash has no position ('first' or 'after')");
    if (c->pos == CRASH_POS_FIRST && c->at_us == 0)
        return perr(p, L->no, 1, "a crash 'first' at 0 would come before the deploy (use 'after' or a later instant)");
    return 0;
}

int scn__parse_crashpoints(struct parser *p, const struct line *L)
{
    struct crashpoints_def *cp = &p->s->crashpoints;
    if (cp->line)
        return perr(p, L->no, L->tok[0].col, "a second 'crashpoints' line (the first is at line %d)", cp->line);
    struct crashpoints_def d = {.line = L->no, .from_us = 0, .to_us = SIM_NEVER};
    struct clause cl[] = {
        {"from", CL_INSTANT, LIM_END, 0, 0, "window start ('from')", &d.from_us, 0, 0},
        {"to", CL_INSTANT, LIM_NONE, 0, 0, "window end ('to')", &d.to_us, 0, 0},
        {"max", CL_COUNT, LIM_NONE, 1, 1000000, "number of crash points ('max')", &d.max, 0, 0},
        {"down", CL_DURATION, LIM_NONE, 1, 0, "downtime ('down')", &d.down_us, 0, 0},
    };
    if (scn__parse_clauses(p, L, 1, cl, 4, "a crashpoints line", "valid", "from T, to T, max N, down D"))
        return -1;
    if (d.to_us <= d.from_us)
        return perr(p, L->no, cl[1].vcol, "the window ends ('to') before it starts ('from')");
    *cp = d;
    return 0;
}
