/* scenario_change.c: the lines that change the running system over time or
 * bound its runs: schedule changes (`disable`, `enable`, `change`), agents
 * busy outside the scheduler (`busy`) and run deadlines (`deadline`).
 *
 * Each names a WORKFLOW.HANDLER (or a WORKFLOW) that may be declared
 * further down, so pass 2 parses the line into a parser-side record and
 * pass 3 (scn__resolve_change) attaches it: a schedule change to its
 * producer's struct schedule, in time order (two changes of one producer
 * at one instant are an error), a deadline to its handler, a busy period
 * to its workflow.  docs/scenario-format.md section 7 has the syntax. */
#include "sim/scenario_int.h"

#include <stdlib.h>
#include <string.h>

#include "sim/util.h"

static const char *const class_names[FAIL_NCLASS] = {"", "transient", "logic", "internal", "indeterminate", ""};

/* WORKFLOW.HANDLER in t, or an error at it. */
static int check_target(struct parser *p, const struct line *L, const struct tok *t)
{
    const char *dot = strchr(t->s, '.');
    if (!dot || strchr(dot + 1, '.'))
        return perr(p, L->no, t->col, "expected WORKFLOW.HANDLER, got '%s'", q(p, t->s));
    return 0;
}

static size_t change_add(struct parser *p, const struct sched_change *c)
{
    p->chg = xgrow(p->chg, sizeof *p->chg, &p->cap_chg, p->nchg + 1);
    p->chg[p->nchg] = *c;
    return p->nchg++;
}

/* `disable WF.H at T` and `enable WF.H at T`. */
int scn__parse_toggle(struct parser *p, const struct line *L, int enable)
{
    const char *what = enable ? "enable" : "disable";
    if (need(p, L, 0, 1, "'WORKFLOW.HANDLER at T'") || check_target(p, L, &L->tok[1]))
        return -1;
    struct sched_change c = {.op = enable ? SCHED_OP_ENABLE : SCHED_OP_DISABLE, .line = L->no};
    struct clause cl[] = {{"at", CL_INSTANT, LIM_HORIZON, 0, 0, "change instant", &c.at_us, 0, 0}};
    if (scn__parse_clauses(p, L, 2, cl, 1, enable ? "an enable line" : "a disable line", "valid", "at T"))
        return -1;
    if (!cl[0].col)
        return perr(p, L->no, end_col(L), "missing 'at T' in '%s'", what);
    c.col = cl[0].vcol;
    scn__add_ref(p, REF_CHANGE, L->no, L->tok[1].col, L->tok[1].s, (uint32_t)change_add(p, &c), 0);
    return 0;
}

/* `change WF.H every D at T` or `change WF.H cron "EXPR" [seconds] [and]
 * at T`, each with an optional `as-written`. */
int scn__parse_change(struct parser *p, const struct line *L)
{
    int no = L->no;
    if (need(p, L, 0, 3, "'WORKFLOW.HANDLER every D at T' or 'WORKFLOW.HANDLER cron \"EXPR\" at T'") ||
        check_target(p, L, &L->tok[1]))
        return -1;
    const struct tok *kw = &L->tok[2], *v = &L->tok[3];
    struct sched_change c = {.op = SCHED_OP_SET, .line = no, .col = v->col + (v->quoted ? 1 : 0)};
    if (!strcmp(kw->s, "every"))
        c.kind = SCHED_EVERY;
    else if (!strcmp(kw->s, "cron"))
        c.kind = SCHED_CRON;
    else
        return perr(p, no, kw->col, "expected 'every' or 'cron' after the handler, got '%s'", q(p, kw->s));
    int secs = 0, and = 0, aw = 0;
    struct clause cl[] = {
        {"at", CL_INSTANT, LIM_HORIZON, 0, 0, "change instant", &c.at_us, 0, 0},
        {"seconds", CL_FLAG, LIM_NONE, 0, 0, "", &secs, 0, 0},
        {"and", CL_FLAG, LIM_NONE, 0, 0, "", &and, 0, 0},
        {"as-written", CL_FLAG, LIM_NONE, 0, 0, "", &aw, 0, 0},
    };
    if (scn__parse_clauses(p, L, 4, cl, 4, "a change line", "valid", "at T, seconds, and, as-written"))
        return -1;
    if (!cl[0].col)
        return perr(p, no, end_col(L), "missing 'at T' in 'change'");
    if (c.kind == SCHED_EVERY && (secs || and))
        return perr(p, no, secs ? cl[1].col : cl[2].col, "'%s' needs a 'cron' schedule", secs ? "seconds" : "and");
    c.cron_flags = (uint8_t)((and ? CAL_CRON_AND : 0) | (secs ? CAL_CRON_SECONDS : 0));
    c.as_written = (uint8_t)aw;
    c.value = xstrdup(v->s);
    if (aw) {
        p->s->has_as_written = 1;
    } else if (c.kind == SCHED_EVERY) {
        if (scn__parse_dur(p, no, v->col, v->s, 1, "'every'", &c.every_us))
            goto fail;
    } else {
        char m[256];
        int ecol = 0;
        if (!v->quoted && v->s[0] != '@') {
            perr(p, no, v->col, "the cron expression must be quoted, like cron \"0 9 * * 1-5\"");
            goto fail;
        }
        if (cal_cron_parse(v->s, c.cron_flags, &c.cron, m, sizeof m, &ecol) != 0) {
            perr(p, no, c.col + (ecol > 0 ? ecol - 1 : 0), "%s", m);
            goto fail;
        }
    }
    scn__add_ref(p, REF_CHANGE, no, L->tok[1].col, L->tok[1].s, (uint32_t)change_add(p, &c), 0);
    return 0;
fail:
    free(c.value);
    return -1;
}

/* `busy WORKFLOW at T for D`. */
int scn__parse_busy(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    if (need(p, L, 0, 1, "'WORKFLOW at T for D'"))
        return -1;
    const struct tok *w = &L->tok[1];
    if (scn__check_name(p, L->no, w->col, w->s, "workflow"))
        return -1;
    struct busy_def b = {.line = L->no};
    struct clause cl[] = {
        {"at", CL_INSTANT, LIM_END, 0, 0, "busy instant", &b.at_us, 0, 0},
        {"for", CL_DURATION, LIM_NONE, 1, 0, "busy time ('for')", &b.for_us, 0, 0},
    };
    if (scn__parse_clauses(p, L, 2, cl, 2, "a busy line", "valid", "at T, for D"))
        return -1;
    if (!cl[0].col || !cl[1].col)
        return perr(p, L->no, end_col(L), "missing '%s' in a busy line", !cl[0].col ? "at T" : "for D");
    s->busy = xgrow(s->busy, sizeof *s->busy, &p->cap_busy, (size_t)s->nbusy + 1);
    s->busy[s->nbusy++] = b;
    scn__add_ref(p, REF_BUSY, L->no, w->col, w->s, s->nbusy - 1, 0);
    return 0;
}

/* `deadline WF.H D [per phase] [fail CLASS]`. */
int scn__parse_deadline(struct parser *p, const struct line *L)
{
    int no = L->no;
    if (need(p, L, 0, 2, "'WORKFLOW.HANDLER D'") || check_target(p, L, &L->tok[1]))
        return -1;
    struct deadline_rec d = {.cls = FAIL_TRANSIENT};
    const struct tok *v = &L->tok[2];
    if (scn__parse_dur(p, no, v->col, v->s, 1, "deadline", &d.us))
        return -1;
    for (int i = 3; i < L->ntok;) {
        const struct tok *t = &L->tok[i];
        if (!strcmp(t->s, "per") && !d.per_phase) {
            if (need(p, L, i, 1, "'phase'"))
                return -1;
            if (strcmp(L->tok[i + 1].s, "phase"))
                return perr(p, no, L->tok[i + 1].col, "expected 'phase' after 'per', got '%s'", q(p, L->tok[i + 1].s));
            d.per_phase = 1;
            i += 2;
        } else if (!strcmp(t->s, "fail") && !d.cls_given) {
            if (need(p, L, i, 1, "a failure class"))
                return -1;
            const struct tok *c = &L->tok[i + 1];
            int k = 1;
            while (k < FAIL_DELIVERY && strcmp(c->s, class_names[k]))
                k++;
            if (k == FAIL_DELIVERY)
                return perr(p, no, c->col, "unknown failure class '%s' (valid: transient, logic, internal, indeterminate)",
                            q(p, c->s));
            d.cls = (uint8_t)k;
            d.cls_given = 1;
            i += 2;
        } else {
            return perr(p, no, t->col, "unexpected '%s' in a deadline line (valid: per phase, fail CLASS)", q(p, t->s));
        }
    }
    p->dls = xgrow(p->dls, sizeof *p->dls, &p->cap_dls, p->ndls + 1);
    p->dls[p->ndls] = d;
    scn__add_ref(p, REF_DEADLINE, no, L->tok[1].col, L->tok[1].s, (uint32_t)p->ndls++, 0);
    return 0;
}

/* Inserts change c into sc's list, keeping it sorted; two at one instant
 * are an error. */
static int attach_change(struct parser *p, const struct ref *r, struct schedule *sc, const struct sched_change *c)
{
    uint32_t i = sc->nchanges;
    while (i > 0 && sc->changes[i - 1].at_us > c->at_us)
        i--;
    if (i > 0 && sc->changes[i - 1].at_us == c->at_us)
        return perr(p, r->line, c->col, "a second change of '%s' at the same instant (the first is at line %d)",
                    q(p, r->name), sc->changes[i - 1].line);
    sc->changes = xrealloc(sc->changes, (sc->nchanges + 1) * sizeof *sc->changes);
    memmove(&sc->changes[i + 1], &sc->changes[i], (sc->nchanges - i) * sizeof *sc->changes);
    sc->changes[i] = *c;
    sc->nchanges++;
    p->s->nchanges++;
    return 0;
}

int scn__resolve_change(struct parser *p, const struct ref *r, int wf, int h)
{
    struct scenario *s = p->s;
    struct handler_def *hd = &s->wfs[wf].handlers[h];
    if (r->kind == REF_DEADLINE) {
        const struct deadline_rec *d = &p->dls[r->a];
        if (hd->deadline_us)
            return perr(p, r->line, r->col, "a second deadline for '%s'", q(p, r->name));
        hd->deadline_us = d->us;
        hd->deadline_per_phase = d->per_phase;
        hd->deadline_fail = d->cls;
        return 0;
    }
    SIM_ASSERT(r->kind == REF_CHANGE);
    struct sched_change *c = &p->chg[r->a];
    if (hd->kind != H_PRODUCER)
        return perr(p, r->line, r->col, "'%s' is a consumer: only producers have a schedule to change", q(p, r->name));
    if (c->op == SCHED_OP_SET && c->kind == SCHED_CRON)
        c->zone = hd->sched.kind == SCHED_CRON || hd->sched.raw_kind == SCHED_CRON ? hd->sched.zone : s->zone;
    if (attach_change(p, r, &hd->sched, c))
        return -1;
    c->value = NULL; /* owned by the schedule now */
    return 0;
}
