/* scenario.c: the scenario file parser: its passes, the header, fault and
 * trigger directives, reference resolution, and the entry points.
 *
 * A scenario file is untrusted input (it may come from a pull request), so
 * the parser bounds everything it reads (file size, line length, line count,
 * every count, rate and duration) and rejects, never clamps, a value out of
 * range.  It reads the lines three times:
 *   1. it lexes every line and reads the header directives (name, start,
 *      timezone, horizon, drain, seed, recovery-bound) wherever they are,
 *      because the other lines need their values: ISO instants are relative
 *      to the start, and every instant must fall before the horizon;
 *   2. it reads every other directive in file order; a name that may be
 *      defined further down (a source, a workflow, a variant, a topic) is
 *      recorded as a reference;
 *   3. it resolves the references in file order, then checks the
 *      scenario-wide limits (unused sources, expected event count).
 * The first error stops the parse; its location is written in one place
 * (perr), and only once.  Diagnostics are lowercase, without a full stop,
 * with the offending text quoted and escaped (scn_escape), so that a
 * hostile byte in a file cannot garble a terminal.  The directives of pass 2
 * live in the parser's other files (scenario_int.h lists them); names of
 * policies, parameters and metrics are checked through the caller's
 * callbacks (struct scenario_refs).
 *
 * Invariant: scenario_parse_buf_ex returns either a complete, consistent
 * struct scenario (every name resolved, every value in range, every limit of
 * scenario.h respected) or -1 with nothing left allocated. */
#include "sim/scenario.h"
#include "sim/scenario_int.h"

#include <stdlib.h>
#include <string.h>

#include "sim/suggest.h"
#include "sim/util.h"

/* --- messages -------------------------------------------------------------- */

void diag_print(const struct diag *d)
{
    if (d->line > 0 && d->col > 0)
        fprintf(stderr, "%s:%d:%d: error: %s\n", d->file, d->line, d->col, d->msg);
    else if (d->line > 0)
        fprintf(stderr, "%s:%d: error: %s\n", d->file, d->line, d->msg);
    else
        fprintf(stderr, "%s: error: %s\n", d->file, d->msg);
}

/* --- directive names ---------------------------------------------------------- */

static const char *const hdr_names[NHDR] = {"name", "start", "timezone", "horizon", "drain", "seed", "recovery-bound"};

enum body_kind {
    B_WORKFLOW, B_SOURCE, B_PUBLISH, B_CRASH, B_FAIL, B_TRIGGER, B_SET, B_VARIANT, B_EXPECT, B_STOP,
    B_DISABLE, B_ENABLE, B_CHANGE, B_BUSY, B_DEADLINE, B_SWEEP, B_CRASHPOINTS, NBODY
};
static const char *const body_names[NBODY] = {"workflow", "source",  "publish", "crash",  "fail",
                                              "trigger",  "set",     "variant", "expect", "stop",
                                              "disable",  "enable",  "change",  "busy",   "deadline",
                                              "sweep",    "crashpoints"};

static const char *const fail_class_names[FAIL_NCLASS] = {"",         "transient",     "logic",
                                                          "internal", "indeterminate", "delivery"};

/* --- pass 1: header directives ------------------------------------------------ */

static int hdr_index(const char *w)
{
    for (int i = 0; i < NHDR; i++)
        if (!strcmp(hdr_names[i], w))
            return i;
    return -1;
}

static int body_index(const char *w)
{
    for (int i = 0; i < NBODY; i++)
        if (!strcmp(body_names[i], w))
            return i;
    return -1;
}

static int is_handler_word(const char *w) { return !strcmp(w, "producer") || !strcmp(w, "consumer"); }

static int parse_header(struct parser *p, const struct line *L, int h)
{
    struct scenario *s = p->s;
    const struct tok *t0 = &L->tok[0];
    if (p->hdr_line[h])
        return perr(p, L->no, t0->col, "duplicate '%s' (first at line %d)", hdr_names[h], p->hdr_line[h]);
    p->hdr_line[h] = L->no;
    if (L->ntok < 2)
        return perr(p, L->no, t0->end, "missing value after '%s'", hdr_names[h]);
    if (trailing(p, L, 2, hdr_names[h]))
        return -1;
    const struct tok *v = &L->tok[1];
    char m[256];
    switch (h) {
    case HDR_NAME:
        if (scn__check_name(p, L->no, v->col, v->s, "scenario"))
            return -1;
        free(s->name);
        s->name = xstrdup(v->s);
        return 0;
    case HDR_START:
        if (cal_parse_instant(v->s, &s->start_utc_s, m, sizeof m) != 0)
            return perr(p, L->no, v->col, "bad start: %s", m);
        /* The whole simulated span must stay in the calendar's range. */
        if (s->start_utc_s > CAL_MAX_S - 2 * (SCN_MAX_HORIZON_US / US_PER_S))
            return perr(p, L->no, v->col, "start '%s' is too late (the longest scenario must end before year 10000)",
                        q(p, v->s));
        if (s->start_utc_s <= CAL_MIN_S)
            return perr(p, L->no, v->col, "start '%s' is too early (after 0001-01-01T00:00:00Z, please)", q(p, v->s));
        return 0;
    case HDR_TZ:
        if (cal_zone_get(v->s, &s->zone, m, sizeof m) != 0)
            return perr(p, L->no, v->col, "%s", m);
        return 0;
    case HDR_HORIZON: {
        char m2[256];
        if (scn_parse_duration(v->s, &s->horizon_us, m2, sizeof m2) != 0)
            return perr(p, L->no, v->col, "%s", m2);
        if (s->horizon_us <= 0)
            return perr(p, L->no, v->col, "horizon must be greater than 0, got '%s'", q(p, v->s));
        if (s->horizon_us > SCN_MAX_HORIZON_US)
            return perr(p, L->no, v->col, "horizon '%s' exceeds the limit 3660d", q(p, v->s));
        return 0;
    }
    case HDR_DRAIN:
        return scn__parse_dur(p, L->no, v->col, v->s, 0, "drain", &s->drain_us);
    case HDR_SEED: {
        if (!scn__all_digits(v->s))
            return perr(p, L->no, v->col, "bad seed '%s' (expected an unsigned 64-bit decimal number)", q(p, v->s));
        uint64_t x = 0;
        for (const char *c = v->s; *c; c++) {
            uint64_t dg = (uint64_t)(*c - '0');
            if (x > ((uint64_t)INT64_MAX - dg) / 10) /* the results database stores it as a signed integer */
                return perr(p, L->no, v->col, "seed '%s' is too large (at most 9223372036854775807, as --seed)",
                            q(p, v->s));
            x = x * 10 + dg;
        }
        s->seed = x;
        return 0;
    }
    case HDR_RB:
        return scn__parse_dur(p, L->no, v->col, v->s, 1, "recovery-bound", &s->recovery_bound_us);
    }
    return 0;
}

/* `plugin PATH`: a policy plugin, loaded now (pass 1) so that the lines
 * that name its policy can be checked. */
static int parse_plugin(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    if (need(p, L, 0, 1, "a plugin path") || trailing(p, L, 2, "plugin"))
        return -1;
    const struct tok *t = &L->tok[1];
    char full[SCN_MAX_LINE + 600];
    int w = t->s[0] == '/' ? snprintf(full, sizeof full, "%s", t->s) : snprintf(full, sizeof full, "%s/%s", p->dir, t->s);
    if (!t->s[0])
        return perr(p, L->no, t->col, "empty plugin path");
    if (w < 0 || (size_t)w >= sizeof full)
        return perr(p, L->no, t->col, "plugin path '%s' is too long", q(p, t->s));
    if (s->nplugins >= SCN_MAX_PLUGINS)
        return perr(p, L->no, t->col, "too many plugin lines (limit %d)", SCN_MAX_PLUGINS);
    char m[1024];
    if (p->ext->plugin && p->ext->plugin(p->ext->ctx, full, m, sizeof m) != SCN_REF_OK)
        return perr(p, L->no, t->col, "%s", m);
    s->plugins = xrealloc(s->plugins, ((size_t)s->nplugins + 1) * sizeof *s->plugins);
    s->plugins[s->nplugins++] = xstrdup(full);
    return 0;
}

static int is_plugin_word(const struct tok *t) { return !t->quoted && !strcmp(t->s, "plugin"); }

static int pass1_line(struct parser *p, const struct line *L)
{
    if (L->ntok == 0)
        return 0;
    const struct tok *t0 = &L->tok[0];
    int h = t0->quoted ? -1 : hdr_index(t0->s);
    /* An indented header or plugin line is read by no pass: it is an error
     * here, before its absence (a missing horizon) would be reported. */
    if (L->indented) {
        if (h >= 0 || is_plugin_word(t0))
            return perr(p, L->no, 1,
                        "unexpected indentation: '%s' is a directive and starts at column 1 (only handler lines "
                        "under a 'workflow' line are indented)",
                        t0->s);
        return 0;
    }
    if (h >= 0)
        return parse_header(p, L, h);
    if (is_plugin_word(t0))
        return parse_plugin(p, L);
    if (!t0->quoted && body_index(t0->s) == B_VARIANT && L->ntok >= 3) {
        p->vdecls = xgrow(p->vdecls, sizeof *p->vdecls, &p->cap_vdecls, p->nvdecls + 1);
        p->vdecls[p->nvdecls++] = (struct variant_decl){xstrdup(L->tok[1].s), xstrdup(L->tok[2].s), L->no};
    }
    if (!t0->quoted && (body_index(t0->s) >= 0 || is_handler_word(t0->s)))
        return 0;
    perr(p, L->no, t0->col,
         "unknown directive '%s' (valid: name, start, timezone, horizon, drain, seed, recovery-bound, plugin, "
         "workflow, source, publish, crash, stop, fail, trigger, disable, enable, change, busy, deadline, "
         "set, variant, sweep, expect, crashpoints)",
         q(p, t0->s));
    struct suggest sg;
    suggest_init(&sg, t0->s);
    for (int i = 0; i < NHDR; i++)
        suggest_add(&sg, hdr_names[i]);
    suggest_add(&sg, "plugin");
    for (int i = 0; i < NBODY; i++)
        suggest_add(&sg, body_names[i]);
    suggest_add(&sg, "producer");
    suggest_add(&sg, "consumer");
    suggest_append(&sg, p->d->msg, sizeof p->d->msg);
    return -1;
}

/* --- faults, triggers ------------------------------------------------------------- */

static int parse_crash(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    int no = L->no;
    if (need(p, L, 0, 1, "a target (host, worker N, workers or server)"))
        return -1;
    const struct tok *t = &L->tok[1];
    struct crash_def c = {0};
    c.line = no;
    int i = 2;
    if (!strcmp(t->s, "host")) {
        c.target = CRASH_HOST;
    } else if (!strcmp(t->s, "workers")) {
        c.target = CRASH_WORKERS;
    } else if (!strcmp(t->s, "server")) {
        c.target = CRASH_SERVER;
    } else if (!strcmp(t->s, "worker")) {
        uint64_t idx;
        c.target = CRASH_WORKER;
        if (need(p, L, 1, 1, "a worker number") ||
            scn__parse_count(p, no, &L->tok[2], 0, SCN_MAX_WORKER, "worker number", &idx))
            return -1;
        c.index = (uint32_t)idx;
        i = 3;
    } else {
        return perr(p, no, t->col, "unknown crash target '%s' (valid: host, worker N, workers, server)", q(p, t->s));
    }
    struct clause cl[] = {
        {"at", CL_INSTANT, LIM_END, 0, 0, "crash instant", &c.at_us, 0, 0},
        {"for", CL_DURATION, LIM_NONE, 1, 0, "crash downtime ('for')", &c.down_us, 0, 0},
        {"random", CL_FLAG, LIM_NONE, 0, 0, "", &c.random, 0, 0},
        {"mtbf", CL_DURATION, LIM_NONE, 1, 0, "'mtbf'", &c.mtbf_us, 0, 0},
        {"mttr", CL_DURATION, LIM_NONE, 1, 0, "'mttr'", &c.mttr_us, 0, 0},
    };
    /* `first` or `after ...` (scenario_crash.c) leave the rest to the clauses. */
    struct line *rest;
    if (scn__crash_pos(p, L, i, &c, s->ncrashes, &rest))
        return -1;
    int rc = scn__parse_clauses(p, rest ? rest : L, i, cl, 5, "a crash line", "valid",
                                "at T for D, or random mtbf D mttr D");
    free(rest);
    if (rc || scn__crash_pos_check(p, L, &c))
        return -1;
    int c_at = cl[0].col, c_for = cl[1].col, c_mtbf = cl[3].col, c_mttr = cl[4].col;
    if (c.random) {
        if (c_at || c_for)
            return perr(p, no, c_at ? c_at : c_for, "a random crash has 'mtbf' and 'mttr', not 'at' or 'for'");
        if (!c_mtbf || !c_mttr)
            return perr(p, no, end_col(L), "a random crash needs 'mtbf D' and 'mttr D'");
    } else {
        if (c_mtbf || c_mttr)
            return perr(p, no, c_mtbf ? c_mtbf : c_mttr, "'mtbf' and 'mttr' need 'random'");
        if (!c_at)
            return perr(p, no, end_col(L), "missing 'at T' in a crash line");
        if (!c_for)
            return perr(p, no, end_col(L), "missing 'for D' (the downtime) in a crash line");
        /* A second crash of the same part while it is down is no crash: the
         * engine would skip it silently, so the file is rejected instead.
         * A positional crash may fall on no fact at all; it is not checked
         * (docs/crashpoints.md). */
        for (uint32_t k = 0; k < s->ncrashes && c.pos == CRASH_POS_AT; k++) {
            const struct crash_def *o = &s->crashes[k];
            if (o->random || o->target != c.target || o->index != c.index || o->pos != CRASH_POS_AT)
                continue;
            if (c.at_us < o->at_us + o->down_us && o->at_us < c.at_us + c.down_us)
                return perr(p, no, c_at, "this crash overlaps the crash at line %d (same target)", o->line);
        }
    }
    if (s->ncrashes >= SCN_MAX_CRASHES)
        return perr(p, no, 1, "too many crash lines (limit %d)", SCN_MAX_CRASHES);
    s->crashes = xgrow(s->crashes, sizeof *s->crashes, &p->cap_crashes, (size_t)s->ncrashes + 1);
    s->crashes[s->ncrashes++] = c;
    return 0;
}

/* `stop host at T [grace G] [for D]`: a graceful stop of the host. */
static int parse_stop(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    int no = L->no;
    if (need(p, L, 0, 1, "'host'"))
        return -1;
    if (strcmp(L->tok[1].s, "host"))
        return perr(p, no, L->tok[1].col, "unknown stop target '%s' (valid: host)", q(p, L->tok[1].s));
    struct crash_def c = {0};
    c.line = no;
    c.target = CRASH_STOP;
    c.grace_us = 30 * US_PER_S;
    c.down_us = SIM_NEVER;
    struct clause cl[] = {
        {"at", CL_INSTANT, LIM_END, 0, 0, "stop instant", &c.at_us, 0, 0},
        {"grace", CL_DURATION, LIM_NONE, 0, 0, "'grace'", &c.grace_us, 0, 0},
        {"for", CL_DURATION, LIM_NONE, 1, 0, "stop downtime ('for')", &c.down_us, 0, 0},
    };
    if (scn__parse_clauses(p, L, 2, cl, 3, "a stop line", "valid", "at T, grace D, for D"))
        return -1;
    int c_at = cl[0].col, c_for = cl[2].col;
    if (!c_at)
        return perr(p, no, end_col(L), "missing 'at T' in a stop line");
    if (c_for && c.down_us <= c.grace_us)
        return perr(p, no, c_for, "the downtime ('for') must be longer than the grace period");
    if (s->ncrashes >= SCN_MAX_CRASHES)
        return perr(p, no, 1, "too many crash and stop lines (limit %d)", SCN_MAX_CRASHES);
    s->crashes = xgrow(s->crashes, sizeof *s->crashes, &p->cap_crashes, (size_t)s->ncrashes + 1);
    s->crashes[s->ncrashes++] = c;
    return 0;
}

/* `attempts 1,3,5`: a bit per attempt, 1 to 64. */
static int parse_attempts(struct parser *p, int line, const struct tok *t, uint64_t *mask)
{
    const char *c = t->s;
    *mask = 0;
    for (;;) {
        uint64_t v;
        const char *st = c;
        int nd = scn_read_digits(&c, 3, &v);
        if (nd == 0 || (*c && *c != ','))
            return perr(p, line, t->col, "bad attempt list '%s' (expected numbers like 1,3)", q(p, t->s));
        if (v < 1 || v > 64)
            return perr(p, line, t->col + (int)(st - t->s), "attempt '%llu' out of range 1-64", (unsigned long long)v);
        *mask |= UINT64_C(1) << (v - 1);
        if (!*c)
            return 0;
        c++;
    }
}

static int parse_phase_word(struct parser *p, int line, const struct tok *ph, enum run_phase *out)
{
    if (!strcmp(ph->s, "preparing"))
        *out = PHASE_PREPARING;
    else if (!strcmp(ph->s, "mutating"))
        *out = PHASE_MUTATING;
    else if (!strcmp(ph->s, "mutated"))
        *out = PHASE_MUTATED;
    else if (!strcmp(ph->s, "emitting"))
        *out = PHASE_EMITTING;
    else
        return perr(p, line, ph->col, "unknown phase '%s' (valid: preparing, mutating, mutated, emitting)",
                    q(p, ph->s));
    return 0;
}

/* `fail WF.H CLASS P% | first N | attempts A,B [in PHASE] [empty]`. */
static int parse_fail(struct parser *p, const struct line *L)
{
    int no = L->no;
    if (need(p, L, 0, 3, "'WORKFLOW.HANDLER CLASS P%'"))
        return -1;
    const struct tok *tgt = &L->tok[1], *ct = &L->tok[2], *pt = &L->tok[3];
    const char *dot = strchr(tgt->s, '.');
    if (!dot || strchr(dot + 1, '.'))
        return perr(p, no, tgt->col, "expected WORKFLOW.HANDLER, got '%s'", q(p, tgt->s));
    enum fail_class cls = FAIL_NONE;
    for (int k = 1; k < FAIL_NCLASS; k++)
        if (!strcmp(ct->s, fail_class_names[k]))
            cls = (enum fail_class)k;
    if (cls == FAIL_NONE)
        return perr(p, no, ct->col, "unknown failure class '%s' (valid: transient, logic, internal, indeterminate)",
                    q(p, ct->s));
    uint32_t ppm = 0;
    uint64_t first = 0, mask = 0;
    int i = 4;
    if (!strcmp(pt->s, "first") || !strcmp(pt->s, "attempts")) {
        if (cls == FAIL_DELIVERY)
            return perr(p, no, pt->col, "'%s' is for run failures ('delivery' takes a probability)", pt->s);
        if (need(p, L, 3, 1, pt->s[0] == 'f' ? "a number of attempts" : "a list of attempts like 1,3"))
            return -1;
        if (pt->s[0] == 'f' ? scn__parse_count(p, no, &L->tok[4], 1, 1000000, "attempt count", &first)
                            : parse_attempts(p, no, &L->tok[4], &mask))
            return -1;
        i = 5;
    } else if (scn__parse_percent(p, no, pt, &ppm)) {
        return -1;
    }
    enum run_phase phase = PHASE_MUTATING;
    int seen_in = 0, empty = 0;
    while (i < L->ntok) {
        const struct tok *w = &L->tok[i];
        if (!strcmp(w->s, "in") && !seen_in) {
            if (need(p, L, i, 1, "a phase") || parse_phase_word(p, no, &L->tok[i + 1], &phase))
                return -1;
            seen_in = 1;
            i += 2;
        } else if (!strcmp(w->s, "empty") && !empty && cls != FAIL_DELIVERY) {
            empty = 1;
            i++;
        } else {
            return trailing(p, L, i, "fail");
        }
    }
    scn__add_ref(p, REF_FAIL, no, tgt->col, tgt->s, 0, 0);
    struct ref *r = &p->refs[p->nrefs - 1];
    r->cls = cls;
    r->ppm = ppm;
    r->phase = phase;
    r->cls_col = ct->col;
    r->pct_col = pt->col;
    r->first_n = (uint32_t)first;
    r->attempts = mask;
    r->empty = (uint8_t)empty;
    return 0;
}

/* `trigger WORKFLOW[.HANDLER] at T [delay D]`. */
static int parse_trigger(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    if (need(p, L, 0, 3, "'WORKFLOW at T'"))
        return -1;
    const struct tok *w = &L->tok[1];
    const char *dot = strchr(w->s, '.');
    if (dot) {
        if (strchr(dot + 1, '.') || dot == w->s || !dot[1])
            return perr(p, L->no, w->col, "expected WORKFLOW or WORKFLOW.HANDLER, got '%s'", q(p, w->s));
    } else if (scn__check_name(p, L->no, w->col, w->s, "workflow")) {
        return -1;
    }
    if (strcmp(L->tok[2].s, "at"))
        return perr(p, L->no, L->tok[2].col, "expected 'at' after the workflow name, got '%s'", q(p, L->tok[2].s));
    struct trigger_def tr = {0};
    tr.line = L->no;
    tr.handler = -1;
    tr.delay_us = -1;
    if (scn__parse_instant(p, L->no, &L->tok[3], LIM_HORIZON, &tr.at_us))
        return -1;
    if (L->ntok > 4) {
        if (strcmp(L->tok[4].s, "delay"))
            return trailing(p, L, 4, "trigger");
        if (need(p, L, 4, 1, "a duration") ||
            scn__parse_dur(p, L->no, L->tok[5].col, L->tok[5].s, 0, "trigger delay", &tr.delay_us) ||
            trailing(p, L, 6, "trigger"))
            return -1;
    }
    s->triggers = xgrow(s->triggers, sizeof *s->triggers, &p->cap_triggers, (size_t)s->ntriggers + 1);
    s->triggers[s->ntriggers++] = tr;
    scn__add_ref(p, REF_TRIGGER, L->no, w->col, w->s, s->ntriggers - 1, 0);
    return 0;
}

/* --- pass 2 ------------------------------------------------------------------------ */

static int pass2_line(struct parser *p, const struct line *L)
{
    if (L->ntok == 0)
        return 0;
    const struct tok *t0 = &L->tok[0];
    int is_h = !t0->quoted && is_handler_word(t0->s);
    if (L->indented) {
        if (p->cur_wf < 0) {
            if (is_h)
                return perr(p, L->no, t0->col, "'%s' outside a workflow (indent handler lines under a 'workflow' line)",
                            t0->s);
            return perr(p, L->no, 1,
                        "unexpected indentation (only handler lines under a 'workflow' line are indented)");
        }
        if (!is_h)
            return perr(p, L->no, t0->col, "expected 'producer' or 'consumer' in workflow '%s', got '%s'",
                        q(p, p->s->wfs[p->cur_wf].name), q(p, t0->s));
        return scn__parse_handler(p, L);
    }
    if (scn__close_workflow(p))
        return -1;
    if (is_h)
        return perr(p, L->no, t0->col, "'%s' outside a workflow (indent handler lines under a 'workflow' line)", t0->s);
    if (hdr_index(t0->s) >= 0 || is_plugin_word(t0))
        return 0;
    switch (body_index(t0->s)) {
    case B_WORKFLOW: return scn__parse_workflow(p, L);
    case B_SOURCE: return scn__parse_source(p, L);
    case B_PUBLISH: return scn__parse_publish(p, L);
    case B_CRASH: return parse_crash(p, L);
    case B_STOP: return parse_stop(p, L);
    case B_FAIL: return parse_fail(p, L);
    case B_TRIGGER: return parse_trigger(p, L);
    case B_SET: return scn__parse_set(p, L);
    case B_VARIANT: return scn__parse_variant(p, L);
    case B_EXPECT: return scn__parse_expect(p, L);
    case B_DISABLE: return scn__parse_toggle(p, L, 0);
    case B_ENABLE: return scn__parse_toggle(p, L, 1);
    case B_CHANGE: return scn__parse_change(p, L);
    case B_BUSY: return scn__parse_busy(p, L);
    case B_DEADLINE: return scn__parse_deadline(p, L);
    case B_SWEEP: return scn__parse_sweep(p, L);
    case B_CRASHPOINTS: return scn__parse_crashpoints(p, L);
    }
    SIM_ASSERT(0 && "pass 1 let an unknown directive through");
    return -1;
}

/* --- pass 3: references and scenario-wide checks ------------------------------------ */

static int find_wf(const struct scenario *s, const char *name)
{
    for (uint16_t i = 0; i < s->nwfs; i++)
        if (!strcmp(s->wfs[i].name, name))
            return i;
    return -1;
}

static int find_handler(const struct workflow_def *wf, const char *name)
{
    for (uint16_t i = 0; i < wf->nhandlers; i++)
        if (!strcmp(wf->handlers[i].name, name))
            return i;
    return -1;
}

struct topic_ent {
    const char *name;              /* borrowed from a workflow_def */
    double inst;
};

static int cmp_topic_ent(const void *a, const void *b)
{
    return strcmp(((const struct topic_ent *)a)->name, ((const struct topic_ent *)b)->name);
}

/* Builds p->topics: each distinct topic name once, with the instances that
 * have it.  O(T log T), T the topics of all workflows, so that a file with
 * many publish lines is not quadratic. */
static void build_topic_table(struct parser *p)
{
    const struct scenario *s = p->s;
    size_t n = 0, k = 0;
    for (uint16_t f = 0; f < s->nwfs; f++)
        n += s->wfs[f].ntopics;
    p->topics = xcalloc(n ? n : 1, sizeof *p->topics);
    for (uint16_t f = 0; f < s->nwfs; f++)
        for (uint16_t t = 0; t < s->wfs[f].ntopics; t++)
            p->topics[k++] = (struct topic_ent){s->wfs[f].topics[t], (double)s->wfs[f].count};
    qsort(p->topics, n, sizeof *p->topics, cmp_topic_ent);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (o > 0 && !strcmp(p->topics[o - 1].name, p->topics[i].name))
            p->topics[o - 1].inst += p->topics[i].inst;
        else
            p->topics[o++] = p->topics[i];
    }
    p->ntopics = o;
}

static const struct topic_ent *find_topic(const struct parser *p, const char *name)
{
    struct topic_ent key = {name, 0};
    return bsearch(&key, p->topics, p->ntopics, sizeof *p->topics, cmp_topic_ent);
}

/* Resolves "WF.HANDLER" at r into *wf and *h. */
static int resolve_handler(struct parser *p, const struct ref *r, int *wf, int *h)
{
    const char *dot = strchr(r->name, '.');
    char wn[SCN_MAX_LINE + 1];
    memcpy(wn, r->name, (size_t)(dot - r->name));
    wn[dot - r->name] = 0;
    *wf = find_wf(p->s, wn);
    if (*wf < 0)
        return perr(p, r->line, r->col, "unknown workflow '%s' in '%s'", q(p, wn), q(p, r->name));
    *h = find_handler(&p->s->wfs[*wf], dot + 1);
    if (*h < 0)
        return perr(p, r->line, r->col + (int)(dot - r->name) + 1, "unknown handler '%s' in workflow '%s'",
                    q(p, dot + 1), q(p, wn));
    return 0;
}

static int resolve_ref(struct parser *p, const struct ref *r)
{
    struct scenario *s = p->s;
    int wf, h;
    switch (r->kind) {
    case REF_SOURCE:
        for (uint16_t i = 0; i < s->nsources; i++)
            if (!strcmp(s->sources[i].name, r->name)) {
                s->wfs[r->a].handlers[r->b].source = i;
                return 0;
            }
        return perr(p, r->line, r->col, "unknown source '%s' (define it with a 'source' line)", q(p, r->name));
    case REF_TOPIC:
        if (find_topic(p, r->name))
            return 0;
        return perr(p, r->line, r->col, "unknown topic '%s' (no workflow subscribes or publishes to it)",
                    q(p, r->name));
    case REF_FAIL: {
        if (resolve_handler(p, r, &wf, &h))
            return -1;
        struct handler_def *hd = &s->wfs[wf].handlers[h];
        uint32_t sum = 0;
        for (uint8_t k = 0; k < hd->nfails; k++) {
            if (hd->fails[k].cls == r->cls)
                return perr(p, r->line, r->cls_col, "failure class '%s' is given twice for '%s'",
                            fail_class_names[r->cls], q(p, r->name));
            sum += hd->fails[k].ppm;
        }
        if (sum + r->ppm > 1000000)
            return perr(p, r->line, r->pct_col, "failure probabilities of '%s' add up to more than 100%%",
                        q(p, r->name));
        SIM_ASSERT(hd->nfails < FAIL_NCLASS);
        hd->fails[hd->nfails++] = (struct fail_rule){.cls = r->cls, .ppm = r->ppm, .phase = r->phase,
                                                     .first_n = r->first_n, .attempts = r->attempts,
                                                     .empty = r->empty};
        return 0;
    }
    case REF_TRIGGER:
        if (strchr(r->name, '.')) {
            if (resolve_handler(p, r, &wf, &h))
                return -1;
            s->triggers[r->a].handler = h;
        } else if ((wf = find_wf(s, r->name)) < 0) {
            return perr(p, r->line, r->col, "unknown workflow '%s'", q(p, r->name));
        }
        s->triggers[r->a].wf = (uint16_t)wf;
        return 0;
    case REF_BUSY:
        wf = find_wf(s, r->name);
        if (wf < 0)
            return perr(p, r->line, r->col, "unknown workflow '%s'", q(p, r->name));
        s->busy[r->a].wf = (uint16_t)wf;
        return 0;
    case REF_CHANGE:
    case REF_DEADLINE:
        if (resolve_handler(p, r, &wf, &h))
            return -1;
        return scn__resolve_change(p, r, wf, h);
    case REF_EXPECT_FOR:
        if (resolve_handler(p, r, &wf, &h))
            return -1;
        s->expects[r->a].wf = wf;
        s->expects[r->a].handler = h;
        return 0;
    case REF_EXPECT_POLICY:
    case REF_SET:
    case REF_SWEEP:
        return scn__resolve_policy_ref(p, r);
    case REF_CRASH_AT:
        if (resolve_handler(p, r, &wf, &h))
            return -1;
        if (r->b >= s->wfs[wf].count)
            return perr(p, r->line, r->col, "no instance %u of workflow '%s' (it has %u) in '%s'", r->b,
                        q(p, s->wfs[wf].name), s->wfs[wf].count, q(p, r->name));
        s->crashes[r->a].pos_wf = wf;
        s->crashes[r->a].pos_h = h;
        s->crashes[r->a].pos_inst = r->b;
        return 0;
    }
    return 0;
}

/* The mean number of arrivals of a process before the horizon. */
static double arrivals_mean(const struct scenario *s, const struct arrival *a)
{
    switch (a->kind) {
    case ARR_AT:
    case ARR_BURST:
        return (double)a->count;
    case ARR_TRACE:
        return (double)a->ntrace;
    case ARR_RATE:
    case ARR_POISSON:
    case ARR_DAILY: {
        int64_t end = a->to_us < s->horizon_us ? a->to_us : s->horizon_us;
        if (end <= a->from_us)
            return 0;
        return (double)a->count * (double)(end - a->from_us) / (double)a->per_us;
    }
    }
    return 0;
}

/* Fires of a producer's schedule before the horizon: exact for every and
 * at; for cron, counted over a sample window and scaled (an estimate). */
static double fires_estimate(struct parser *p, const struct schedule *sc)
{
    const struct scenario *s = p->s;
    switch (sc->kind) {
    case SCHED_EVERY:
        if (sc->offset_us >= s->horizon_us)
            return 0;
        return (double)((s->horizon_us - 1 - sc->offset_us) / sc->every_us + 1);
    case SCHED_AT:
        return 1;
    case SCHED_CRON: {
        int64_t h_s = (s->horizon_us + US_PER_S - 1) / US_PER_S;
        double upper = (double)h_s / 60.0 + 1;
        if (p->cron_budget <= 0)
            return upper;
        int64_t week = 7 * 86400, win = h_s < week ? h_s : week;
        size_t n = cal_cron_fires(&sc->cron, sc->zone, s->start_utc_s - 1, s->start_utc_s + win - 1, NULL, 0);
        p->cron_budget -= (int64_t)n;
        if (win == h_s)
            return (double)n;
        if (n > 0)
            return (double)n * (double)h_s / (double)win;
        /* Sparse (monthly, yearly): count up to about a year, then scale. */
        int64_t year = 400 * 86400;
        win = h_s < year ? h_s : year;
        n = cal_cron_fires(&sc->cron, sc->zone, s->start_utc_s - 1, s->start_utc_s + win - 1, NULL, 0);
        p->cron_budget -= (int64_t)n;
        return (double)n * (double)h_s / (double)win;
    }
    case SCHED_NONE:
        break;
    }
    return 0;
}

struct contrib {
    int line;
    size_t seq;
    double n;
};

static int cmp_contrib(const void *a, const void *b)
{
    const struct contrib *x = a, *y = b;
    if (x->line != y->line)
        return (x->line > y->line) - (x->line < y->line);
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Random crash lines: a crash and a restart per mean cycle (mtbf + mttr)
 * before the horizon.  Appended to c[k..); returns the new count. */
static size_t add_random_crashes(const struct scenario *s, struct contrib *c, size_t k)
{
    for (uint32_t i = 0; i < s->ncrashes; i++) {
        const struct crash_def *cd = &s->crashes[i];
        if (!cd->random)
            continue;
        double cycles = (double)s->horizon_us / ((double)cd->mtbf_us + (double)cd->mttr_us);
        c[k] = (struct contrib){.line = cd->line, .seq = k, .n = 2 * cycles};
        k++;
    }
    return k;
}

/* The mean number of events the scenario publishes before the horizon, over
 * all instances, plus its producers' due instants and the crashes and
 * restarts its random crash lines draw,
 * must stay under SCN_MAX_EXPECTED_EVENTS; the error names the line at
 * which the running sum (in file order) passes the limit. */
static int check_expected_events(struct parser *p)
{
    const struct scenario *s = p->s;
    size_t nh = 0, k = 0;
    for (uint16_t f = 0; f < s->nwfs; f++)
        nh += s->wfs[f].nhandlers;
    size_t n = (size_t)s->npubs + s->nsources + nh + s->ncrashes + 1;
    struct contrib *c = xcalloc(n, sizeof *c);
    for (uint32_t i = 0; i < s->npubs; i++) {
        const struct topic_ent *te = find_topic(p, s->pubs[i].topic);
        SIM_ASSERT(te != NULL); /* resolved before */
        c[k] = (struct contrib){s->pubs[i].line, k, arrivals_mean(s, &s->pubs[i].arr) * te->inst};
        k++;
    }
    for (uint16_t i = 0; i < s->nsources; i++, k++)
        c[k] = (struct contrib){s->sources[i].line, k, arrivals_mean(s, &s->sources[i].arr) * p->src_inst[i]};
    for (uint16_t f = 0; f < s->nwfs; f++)
        for (uint16_t h = 0; h < s->wfs[f].nhandlers; h++) {
            const struct handler_def *hd = &s->wfs[f].handlers[h];
            if (hd->kind != H_PRODUCER)
                continue;
            /* Each due instant is a run to fire, then its emit_n publishes:
             * a producer that publishes nothing (every 1us for years) is no
             * cheaper to simulate. */
            c[k] = (struct contrib){hd->line, k,
                                    fires_estimate(p, &hd->sched) * (hd->emit_n + 1.0) * (double)s->wfs[f].count};
            k++;
        }
    k = add_random_crashes(s, c, k);
    qsort(c, k, sizeof *c, cmp_contrib);
    double sum = 0;
    int rc = 0;
    for (size_t i = 0; i < k; i++) {
        sum += c[i].n;
        if (sum > SCN_MAX_EXPECTED_EVENTS) {
            rc = perr(p, c[i].line, 1,
                      "the scenario would publish about %.3g events by this line, over the limit of %.0f "
                      "(mean events published, schedule fires and crashes drawn before the horizon, all instances)",
                      sum, SCN_MAX_EXPECTED_EVENTS);
            break;
        }
    }
    free(c);
    return rc;
}

static int keep_going(struct parser *p, int no);
static int poisoned_ref(const struct parser *p, const struct ref *r);

/* Pass 3's references; when every error is wanted, those of lines that
 * failed, or that name what a failed line would have defined, are skipped
 * (their error would only repeat the first). */
static int pass3_refs(struct parser *p)
{
    build_topic_table(p);
    for (size_t i = 0; i < p->nrefs; i++) {
        const struct ref *r = &p->refs[i];
        if (p->errs && (p->bad[r->line] || poisoned_ref(p, r)))
            continue;
        if (resolve_ref(p, r) && keep_going(p, r->line))
            return -1;
    }
    return 0;
}

/* Pass 3's scenario-wide checks, which need every line good. */
static int pass3_checks(struct parser *p)
{
    struct scenario *s = p->s;
    /* Instances polling each source: a workflow counts once per source,
     * however many of its producers poll it. */
    p->src_inst = xcalloc(s->nsources ? s->nsources : 1, sizeof *p->src_inst);
    int *stamp = xcalloc(s->nsources ? s->nsources : 1, sizeof *stamp);
    for (uint16_t f = 0; f < s->nwfs; f++)
        for (uint16_t h = 0; h < s->wfs[f].nhandlers; h++) {
            int src = s->wfs[f].handlers[h].source;
            if (src >= 0 && stamp[src] != f + 1) {
                stamp[src] = f + 1;
                p->src_inst[src] += s->wfs[f].count;
            }
        }
    free(stamp);
    for (uint16_t i = 0; i < s->nsources; i++) {
        if (p->src_inst[i] == 0)
            return perr(p, s->sources[i].line, 1, "source '%s' is not polled by any producer",
                        q(p, s->sources[i].name));
    }
    if (s->nwfs == 0)
        return perr(p, 1, 1, "the scenario has no workflows");
    return check_expected_events(p);
}

static int pass3(struct parser *p)
{
    if (pass3_refs(p))
        return -1;
    if (p->nerrs)
        return -1;
    if (pass3_checks(p))
        return keep_going(p, p->d->line > 0 ? p->d->line : 1);
    return 0;
}

/* --- going on after an error (scenario_check_all) ---------------------------------- */

/* After an error at scenario line no: stop (-1) when only the first error
 * is wanted; else keep it, mark the line and go on (0), up to the limit. */
static int keep_going(struct parser *p, int no)
{
    if (!p->errs)
        return -1;
    SIM_ASSERT(p->err);
    if (p->nerrs == p->maxerrs) {
        p->more = 1;
        return -1;
    }
    p->errline[p->nerrs] = no;
    p->errs[p->nerrs++] = *p->d;
    if (no > 0 && no <= SCN_MAX_LINES + 1)
        p->bad[no] = 1;
    p->err = 0;
    snprintf(p->d->file, sizeof p->d->file, "%s", p->path);
    p->d->line = p->d->col = 0;
    p->d->msg[0] = 0;
    return 0;
}

static void poison(struct parser *p, const char *name, size_t len)
{
    if (len == 0)
        return;
    p->poison = xgrow(p->poison, sizeof *p->poison, &p->cap_poison, p->npoison + 1);
    char *c = xmalloc(len + 1);
    memcpy(c, name, len);
    c[len] = 0;
    p->poison[p->npoison++] = c;
}

static int is_poisoned(const struct parser *p, const char *name, size_t len)
{
    for (size_t i = 0; i < p->npoison; i++)
        if (strlen(p->poison[i]) == len && !memcmp(p->poison[i], name, len))
            return 1;
    return 0;
}

/* A reference to a name (or, for WF.HANDLER, a workflow) that a failed
 * line would have defined. */
static int poisoned_ref(const struct parser *p, const struct ref *r)
{
    const char *dot = strchr(r->name, '.');
    return is_poisoned(p, r->name, strlen(r->name)) || (dot && is_poisoned(p, r->name, (size_t)(dot - r->name)));
}

/* What a failed pass-2 line would have defined stays out of later checks:
 * the name of a workflow, source or variant; for a handler line, its
 * WF.NAME and every word of it (the topics it would have created).  A
 * failed handler is taken out of its workflow again. */
static void line_failed(struct parser *p, const struct line *L, uint16_t nh_before)
{
    struct scenario *s = p->s;
    if (L->ntok == 0)
        return;
    const char *w = L->tok[0].s;
    int defines = !strcmp(w, "workflow") || !strcmp(w, "source") || !strcmp(w, "variant");
    if (!L->indented && defines && L->ntok > 1)
        poison(p, L->tok[1].s, strlen(L->tok[1].s));
    if (!L->indented && !strcmp(w, "workflow"))
        p->skip_block = 1;
    if (!L->indented || p->cur_wf < 0)
        return;
    struct workflow_def *wf = &s->wfs[p->cur_wf];
    p->block_bad = 1;
    if (wf->nhandlers > nh_before) {
        struct handler_def *h = &wf->handlers[--wf->nhandlers];
        free(h->name);
        free(h->sched.text);
        free(h->sched.value);
        for (uint32_t c = 0; c < h->sched.nchanges; c++)
            free(h->sched.changes[c].value);
        free(h->sched.changes);
        memset(h, 0, sizeof *h);
        s->nhandler_instances -= wf->count;
    }
    if (L->ntok > 1) {
        char full[2 * SCN_MAX_NAME + 2];
        int n = snprintf(full, sizeof full, "%s.%s", wf->name, L->tok[1].s);
        if (n > 0 && (size_t)n < sizeof full)
            poison(p, full, (size_t)n);
    }
    for (int i = 1; i < L->ntok; i++)
        for (const char *c = L->tok[i].s;;) {
            const char *comma = strchr(c, ',');
            poison(p, c, comma ? (size_t)(comma - c) : strlen(c));
            if (!comma)
                break;
            c = comma + 1;
        }
}

/* Closes the open workflow block before an unindented line; a block one of
 * whose handler lines failed may be empty without a second error. */
static int close_block(struct parser *p)
{
    if (p->block_bad) {
        p->cur_wf = -1;
        p->block_bad = 0;
        return 0;
    }
    int wline = p->cur_wf >= 0 ? p->s->wfs[p->cur_wf].line : 0;
    if (scn__close_workflow(p))
        return keep_going(p, wline);
    return 0;
}

/* Word k (0-based) of a raw line, split at spaces and tabs, into w (empty
 * if there is none or it does not fit). */
static void raw_word(const char *ls, size_t len, int k, char *w, size_t n)
{
    size_t i = 0;
    w[0] = 0;
    for (int at = 0; i < len; at++) {
        while (i < len && (ls[i] == ' ' || ls[i] == '\t'))
            i++;
        size_t b = i;
        while (i < len && ls[i] != ' ' && ls[i] != '\t')
            i++;
        if (at == k) {
            if (i > b && i - b < n) {
                memcpy(w, ls + b, i - b);
                w[i - b] = 0;
            }
            return;
        }
    }
}

/* Pass 2 at a line whose error was reported in pass 1 (it cannot be read
 * into tokens, or names no directive): it is skipped, but still closes or
 * belongs to a workflow block, as its indentation says. */
static int skip_bad_line(struct parser *p, const char *ls, size_t len)
{
    if (len == 0)
        return 0;
    if (ls[0] == ' ' || ls[0] == '\t') {
        if (!p->skip_block && p->cur_wf >= 0)
            p->block_bad = 1;
        return 0;
    }
    p->skip_block = 0;
    if (close_block(p))
        return -1;
    char w[SCN_MAX_NAME + 1];
    raw_word(ls, len, 0, w, sizeof w);
    if (!strcmp(w, "workflow")) {
        p->skip_block = 1;
        raw_word(ls, len, 1, w, sizeof w);
        poison(p, w, strlen(w));
    }
    return 0;
}

/* One line of pass 2 when every error is wanted. */
static int pass2_line_all(struct parser *p, const struct line *L)
{
    if (L->ntok == 0)
        return 0;
    if (p->skip_block && L->indented)
        return 0;
    p->skip_block = 0;
    if (!L->indented && close_block(p))
        return -1;
    uint16_t nh = p->cur_wf >= 0 ? p->s->wfs[p->cur_wf].nhandlers : 0;
    if (pass2_line(p, L) == 0)
        return 0;
    line_failed(p, L, nh);
    return keep_going(p, L->no);
}

/* --- entry points -------------------------------------------------------------------- */

static void default_name(struct scenario *s, const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    const char *dot = strrchr(b, '.');
    size_t len = dot && dot != b ? (size_t)(dot - b) : strlen(b);
    if (len == 0) {
        s->name = xstrdup("scenario");
        return;
    }
    s->name = xmalloc(len + 1);
    memcpy(s->name, b, len);
    s->name[len] = 0;
}

/* Pass 1 over every line.  When every error is wanted, a line with an
 * error is skipped from then on; an error in a header or plugin line stops
 * the check after this pass, since every other line depends on them. */
static int run_pass1(struct parser *p, const char *buf, size_t len, size_t pos)
{
    size_t llen;
    const char *ls;
    int fatal = 0;
    for (int no = 1; scn__next_line(buf, len, &pos, &ls, &llen); no++) {
        if (no > SCN_MAX_LINES) {
            perr(p, no, 1, "more than %d lines", SCN_MAX_LINES);
            keep_going(p, 0);
            return -1;
        }
        if (scn__lex_line(p, ls, llen, no, p->L) == 0 && pass1_line(p, p->L) == 0)
            continue;
        char w[16];
        raw_word(ls, llen, 0, w, sizeof w);
        fatal |= hdr_index(w) >= 0 || !strcmp(w, "plugin");
        if (keep_going(p, no))
            return -1;
    }
    if (!p->hdr_line[HDR_HORIZON] && !fatal) {
        perr(p, 1, 1, "missing required 'horizon' directive (e.g. 'horizon 3d')");
        keep_going(p, 1);
        return -1;
    }
    return fatal ? -1 : 0;
}

static int run_passes(struct parser *p, const char *buf, size_t len)
{
    struct scenario *s = p->s;
    size_t pos = 0, llen;
    const char *ls;
    int no;
    if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
        pos = 3; /* a UTF-8 byte order mark */
    size_t start = pos;
    if (run_pass1(p, buf, len, start))
        return -1;
    if (!s->zone) {
        char m[256];
        if (cal_zone_get("UTC", &s->zone, m, sizeof m) != 0)
            return perr(p, 1, 1, "%s", m);
    }
    pos = start;
    for (no = 1; scn__next_line(buf, len, &pos, &ls, &llen); no++) {
        if (p->errs && p->bad[no]) {
            if (skip_bad_line(p, ls, llen))
                return -1;
            continue;
        }
        if (scn__lex_line(p, ls, llen, no, p->L))
            return -1; /* it was lexed in pass 1 */
        if (p->errs ? pass2_line_all(p, p->L) : pass2_line(p, p->L))
            return -1;
    }
    if (p->errs ? close_block(p) : scn__close_workflow(p))
        return -1;
    return pass3(p);
}

/* A parser for buf (len bytes, at most SCN_MAX_FILE_BYTES) and the
 * scenario it fills. */
static struct parser *parser_new(const char *path, const char *buf, size_t len, const struct scenario_refs *refs,
                                 struct diag *d)
{
    static const struct scenario_refs no_refs = {0};
    struct parser *p = xcalloc(1, sizeof *p);
    struct scenario *s = xcalloc(1, sizeof *s);
    p->s = s;
    p->d = d;
    p->ext = refs ? refs : &no_refs;
    p->path = path;
    p->cur_wf = -1;
    p->cron_budget = CRON_ESTIMATE_BUDGET;
    p->L = xmalloc(sizeof *p->L);
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(p->dir, sizeof p->dir, ".");
    else if (slash == path)
        snprintf(p->dir, sizeof p->dir, "/");
    else
        snprintf(p->dir, sizeof p->dir, "%.*s", (int)(slash - path), path);

    s->path = xstrdup(path);
    default_name(s, path);
    s->hash = sim_fnv(SIM_FNV_INIT, buf, len);
    s->start_utc_s = INT64_C(1735689600); /* 2025-01-01T00:00:00Z */
    s->drain_us = US_PER_DAY;
    s->recovery_bound_us = US_PER_H;
    s->seed = 1;
    return p;
}

/* Frees the parser (not its scenario). */
static void parser_free(struct parser *p)
{
    for (size_t i = 0; i < p->nrefs; i++)
        free(p->refs[i].name);
    free(p->refs);
    for (size_t i = 0; i < p->nchg; i++)
        free(p->chg[i].value); /* the ones not attached to a schedule */
    free(p->chg);
    for (size_t i = 0; i < p->nvdecls; i++) {
        free(p->vdecls[i].name);
        free(p->vdecls[i].base);
    }
    free(p->vdecls);
    free(p->dls);
    free(p->topics);
    free(p->src_inst);
    for (size_t i = 0; i < p->npoison; i++)
        free(p->poison[i]);
    free(p->poison);
    free(p->bad);
    free(p->errline);
    free(p->L);
    free(p);
}

/* The start of both entry points: d names the file; a buffer over the
 * size limit is an error at once (1). */
static int start_diag(const char *path, size_t len, struct diag *d)
{
    memset(d, 0, sizeof *d);
    snprintf(d->file, sizeof d->file, "%s", path);
    if (len > SCN_MAX_FILE_BYTES) {
        snprintf(d->msg, sizeof d->msg, "file is larger than %zu MiB", SCN_MAX_FILE_BYTES >> 20);
        return 1;
    }
    return 0;
}

int scenario_parse_buf_ex(const char *path, const char *buf, size_t len, const struct scenario_refs *refs,
                          struct scenario **out, struct diag *d)
{
    *out = NULL;
    if (start_diag(path, len, d))
        return -1;
    struct parser *p = parser_new(path, buf, len, refs, d);
    struct scenario *s = p->s;
    int rc = run_passes(p, buf, len);
    parser_free(p);
    if (rc) {
        SIM_ASSERT(d->msg[0]);
        scenario_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

/* Orders errors by the scenario line they came from (then column), keeping
 * the order they were found in among equals. */
static void sort_errors(struct diag *errs, int *line, int n)
{
    for (int i = 1; i < n; i++) {
        struct diag e = errs[i];
        int l = line[i], k = i;
        for (; k > 0 && (line[k - 1] > l || (line[k - 1] == l && errs[k - 1].col > e.col &&
                                              !strcmp(errs[k - 1].file, e.file))); k--) {
            errs[k] = errs[k - 1];
            line[k] = line[k - 1];
        }
        errs[k] = e;
        line[k] = l;
    }
}

int scenario_check_all_buf(const char *path, const char *buf, size_t len, const struct scenario_refs *refs,
                           struct diag *errs, int max, int *more)
{
    SIM_ASSERT(max >= 1);
    *more = 0;
    struct diag d;
    if (start_diag(path, len, &d)) {
        errs[0] = d;
        return 1;
    }
    struct parser *p = parser_new(path, buf, len, refs, &d);
    p->errs = errs;
    p->maxerrs = max;
    p->errline = xcalloc((size_t)max, sizeof *p->errline);
    p->bad = xcalloc(SCN_MAX_LINES + 2, 1);
    run_passes(p, buf, len);
    int n = p->nerrs;
    *more = p->more;
    sort_errors(errs, p->errline, n);
    scenario_free(p->s);
    parser_free(p);
    return n;
}

int scenario_parse_buf(const char *path, const char *buf, size_t len, struct scenario **out, struct diag *d)
{
    return scenario_parse_buf_ex(path, buf, len, NULL, out, d);
}

int scenario_parse_ex(const char *path, const struct scenario_refs *refs, struct scenario **out, struct diag *d)
{
    char *buf, err[256];
    size_t len;
    *out = NULL;
    if (scn__read_file(path, SCN_MAX_FILE_BYTES, &buf, &len, err, sizeof err) != 0) {
        memset(d, 0, sizeof *d);
        snprintf(d->file, sizeof d->file, "%s", path);
        snprintf(d->msg, sizeof d->msg, "cannot read the scenario: %s", err);
        return -1;
    }
    int rc = scenario_parse_buf_ex(path, buf, len, refs, out, d);
    free(buf);
    return rc;
}

int scenario_check_all(const char *path, const struct scenario_refs *refs, struct diag *errs, int max, int *more)
{
    char *buf, err[256];
    size_t len;
    *more = 0;
    if (scn__read_file(path, SCN_MAX_FILE_BYTES, &buf, &len, err, sizeof err) != 0) {
        memset(&errs[0], 0, sizeof errs[0]);
        snprintf(errs[0].file, sizeof errs[0].file, "%s", path);
        snprintf(errs[0].msg, sizeof errs[0].msg, "cannot read the scenario: %s", err);
        return 1;
    }
    int n = scenario_check_all_buf(path, buf, len, refs, errs, max, more);
    free(buf);
    return n;
}

int scenario_parse(const char *path, struct scenario **out, struct diag *d)
{
    return scenario_parse_ex(path, NULL, out, d);
}

static void free_kv(struct param_kv *kv, uint16_t n)
{
    for (uint16_t i = 0; i < n; i++) {
        free(kv[i].key);
        free(kv[i].value);
    }
    free(kv);
}

void scenario_free(struct scenario *s)
{
    if (!s)
        return;
    for (uint16_t f = 0; f < s->nwfs; f++) {
        struct workflow_def *wf = &s->wfs[f];
        for (uint16_t h = 0; h < wf->nhandlers; h++) {
            struct schedule *sc = &wf->handlers[h].sched;
            free(wf->handlers[h].name);
            free(sc->text);
            free(sc->value);
            for (uint32_t c = 0; c < sc->nchanges; c++)
                free(sc->changes[c].value);
            free(sc->changes);
        }
        for (uint16_t t = 0; t < wf->ntopics; t++)
            free(wf->topics[t]);
        free(wf->handlers);
        free(wf->topics);
        free(wf->name);
    }
    free(s->wfs);
    for (uint16_t i = 0; i < s->nsources; i++) {
        free(s->sources[i].name);
        free(s->sources[i].arr.trace_us);
    }
    free(s->sources);
    for (uint32_t i = 0; i < s->npubs; i++) {
        free(s->pubs[i].topic);
        free(s->pubs[i].arr.trace_us);
    }
    free(s->pubs);
    free(s->crashes);
    free(s->triggers);
    free(s->busy);
    for (uint32_t i = 0; i < s->nexpects; i++) {
        struct expect_def *e = &s->expects[i];
        for (char **pp = e->policies; pp && *pp; pp++)
            free(*pp);
        free(e->policies);
        free(e->metric);
        free(e->text);
    }
    free(s->expects);
    for (uint16_t i = 0; i < s->nsets; i++) {
        free(s->sets[i].policy);
        free_kv(s->sets[i].kv, s->sets[i].nkv);
    }
    free(s->sets);
    for (uint16_t i = 0; i < s->nvariants; i++) {
        free(s->variants[i].name);
        free(s->variants[i].base);
        free_kv(s->variants[i].kv, s->variants[i].nkv);
    }
    free(s->variants);
    for (uint16_t i = 0; i < s->nplugins; i++)
        free(s->plugins[i]);
    free(s->plugins);
    for (uint16_t i = 0; i < s->nsweeps; i++) {
        struct sweep_def *w = &s->sweeps[i];
        for (uint16_t k = 0; k < w->nvalues; k++)
            free(w->values[k]);
        free(w->values);
        free(w->policy);
        free(w->key);
    }
    free(s->sweeps);
    free(s->path);
    free(s->name);
    free(s);
}
