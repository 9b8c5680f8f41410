/* grammar.c: the configuration grammars of the real systems (grammar.h).
 *
 * One reader per system and kind of text (interval, cron, parameter), each
 * following the system's own code:
 *   keepai   nostrband/keep.ai packages/agent/src/schedule-utils.ts:
 *            parseInterval /^(\d+)(s|m|h|d)$/ or an error; croner 9 reads
 *            5 or 6 fields; an invalid cron gives now + 60 s (lines 24-76);
 *   herdctl  edspencer/herdctl packages/core/src/scheduler/interval.ts
 *            parseInterval (a number, blanks, a unit s/m/h/d in any case),
 *            cron.ts (5 fields or a macro); scheduler.ts checkSchedule skips
 *            an invalid cron with a warning, and computes an interval's
 *            next trigger only once the schedule has run;
 *   kagzi    spa5k/Kagzi workflow_schedule_service.rs parse_cron_expr:
 *            exactly 6 fields, else an error; UpdateWorkflowSchedule
 *            validates a new cron but stores only the enabled flag;
 *   kagzi-before  spa5k/Kagzi@578347f scheduler.rs: the cron crate (6
 *            fields), an invalid expression skipped with a warning;
 *   alice    TraderAlice/OpenAlice@172f094 src/core/scheduler.ts
 *            parseDuration /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/ (null: no
 *            timer), parseHHMM (h <= 24; null: always active); cron.ts
 *            nextCronFire: 5 fields, '*' and '*\/n' from 0 to 59 in every
 *            field, day fields combined with AND, bad text never fires;
 *   openclaw openclaw/openclaw src/infra/heartbeat-active-hours.ts: HH:MM
 *            00-23 or 24:00; an invalid value means always active.
 * Everything else is read by simrun's own rules. */
#include "sim/grammar.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cal.h"
#include "sim/scenario.h"
#include "sim/syntax.h"
#include "sim/util.h"

static const char *const grammar_names[GRAMMAR_COUNT] = {"simrun",  "keepai", "kagzi", "kagzi-before",
                                                         "herdctl", "alice",  "openclaw"};

int grammar_find(const char *name)
{
    for (int g = 0; g < GRAMMAR_COUNT; g++)
        if (!strcmp(grammar_names[g], name))
            return g;
    return -1;
}

const char *grammar_name(int g) { return g >= 0 && g < GRAMMAR_COUNT ? grammar_names[g] : "?"; }

/* What a reader made of a text. */
struct reading {
    enum gr_verdict v;
    enum sched_kind kind;          /* SCHED_NONE: never fires */
    int64_t every_us;
    struct cal_cron cron;
    char msg[400];
};

static int all_digits(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

/* Digits s[0..n) as a number, 0 on overflow past ~9e15. */
static int64_t digits_value(const char *s, size_t n)
{
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (v > INT64_C(900000000000000))
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

static int64_t unit_us(char u)
{
    switch (u) {
    case 's': case 'S': return US_PER_S;
    case 'm': case 'M': return US_PER_MIN;
    case 'h': case 'H': return US_PER_H;
    case 'd': case 'D': return US_PER_DAY;
    }
    return 0;
}

/* --- intervals --------------------------------------------------------------- */

/* v units of u added to *total in microseconds; 0 when the sum passes
 * int64 (some 292 000 years, which no system's interval is meant to be). */
static int add_units(int64_t *total, int64_t v, char u)
{
    int64_t add;
    return !__builtin_mul_overflow(v, unit_us(u), &add) && !__builtin_add_overflow(*total, add, total);
}

/* An interval a system would read, but not in 64 bits of microseconds. */
static void too_large(const char *t, struct reading *r)
{
    r->v = GR_REJECT;
    snprintf(r->msg, sizeof r->msg, "interval '%.60s' is too large to simulate (over 292 000 years)", t);
}

static void simrun_interval(const char *t, struct reading *r)
{
    char m[256];
    if (scn_parse_duration(t, &r->every_us, m, sizeof m) != 0) {
        r->v = GR_REJECT;
        snprintf(r->msg, sizeof r->msg, "%s", m);
        return;
    }
    if (r->every_us <= 0) {
        r->v = GR_REJECT;
        snprintf(r->msg, sizeof r->msg, "'every' must be greater than 0, got '%.60s'", t);
        return;
    }
    r->kind = SCHED_EVERY;
}

/* keep.ai: digits and one lowercase unit, nothing else. */
static void keepai_interval(const char *t, struct reading *r)
{
    size_t n = strlen(t);
    if (n >= 2 && all_digits(t, n - 1) && strchr("smhd", t[n - 1]) && digits_value(t, n - 1) > 0) {
        r->every_us = 0;
        if (!add_units(&r->every_us, digits_value(t, n - 1), t[n - 1])) {
            too_large(t, r);
            return;
        }
        r->kind = SCHED_EVERY;
        return;
    }
    r->v = GR_REJECT;
    snprintf(r->msg, sizeof r->msg,
             "keep.ai rejects the interval: Invalid interval format: %.60s. Expected format like \"5m\", \"1h\", "
             "\"30s\", \"1d\".",
             t);
}

/* herdctl: a signed integer, blanks, a unit of letters (s, m, h or d in any
 * case), blanks around; errors say why. */
static void herdctl_interval(const char *t, struct reading *r)
{
    while (*t == ' ' || *t == '\t')
        t++;
    size_t n = strlen(t);
    while (n && (t[n - 1] == ' ' || t[n - 1] == '\t'))
        n--;
    size_t i = t[0] == '-' ? 1 : 0, d0 = i;
    while (i < n && t[i] >= '0' && t[i] <= '9')
        i++;
    size_t dn = i - d0, u0;
    while (i < n && (t[i] == ' ' || t[i] == '\t'))
        i++;
    u0 = i;
    while (i < n && ((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z')))
        i++;
    const char *why = NULL;
    if (n == 0)
        why = "Interval cannot be empty";
    else if (dn == 0 || i != n || u0 == n)
        why = "Invalid interval format";
    else if (t[0] == '-')
        why = "Negative intervals are not allowed";
    else if (digits_value(t + d0, dn) == 0)
        why = "Zero interval is not allowed";
    else if (i - u0 != 1 || !unit_us(t[u0]))
        why = "Invalid time unit";
    if (!why) {
        r->every_us = 0;
        if (!add_units(&r->every_us, digits_value(t + d0, dn), t[u0])) {
            too_large(t, r);
            return;
        }
        r->kind = SCHED_EVERY;
        return;
    }
    /* The first trigger needs no parse (no last run: now); the next one
     * throws, after the run and at every later check. */
    r->v = GR_FALLBACK;
    r->kind = SCHED_AT;
    snprintf(r->msg, sizeof r->msg,
             "herdctl cannot read the interval (%s: \"%.60s\"): the schedule runs once at the first check, then "
             "computing its next trigger throws at every check (the rest of each check pass, which the throw "
             "aborts, is not simulated)",
             why, t);
}

/* Open Alice: [Nh][Nm][Ns], not all zero; else no next run at all. */
static void alice_interval(const char *t, struct reading *r)
{
    int64_t total = 0;
    const char *c = t;
    static const char units[] = "hms";
    int last = -1, any = 0;
    while (*c == ' ')
        c++;
    while (*c && *c != ' ') {
        const char *d = c;
        while (*c >= '0' && *c <= '9')
            c++;
        const char *u = strchr(units, *c);
        if (c == d || !*c || !u || (int)(u - units) <= last)
            goto none;
        last = (int)(u - units);
        if (!add_units(&total, digits_value(d, (size_t)(c - d)), *c)) {
            too_large(t, r);
            return;
        }
        any = 1;
        c++;
    }
    while (*c == ' ')
        c++;
    if (*c || !any || total == 0)
        goto none;
    r->kind = SCHED_EVERY;
    r->every_us = total;
    return;
none:
    r->v = GR_FALLBACK;
    r->kind = SCHED_NONE;
    snprintf(r->msg, sizeof r->msg,
             "Open Alice reads '%.60s' as no duration (hours, minutes and seconds only, like 1h30m): the job "
             "never fires",
             t);
}

static void read_interval(int g, const char *t, struct reading *r)
{
    switch (g) {
    case GRAMMAR_KEEPAI: keepai_interval(t, r); break;
    case GRAMMAR_HERDCTL: herdctl_interval(t, r); break;
    case GRAMMAR_ALICE: alice_interval(t, r); break;
    default: simrun_interval(t, r); break;
    }
}

/* --- cron ---------------------------------------------------------------------- */

static int count_fields(const char *t)
{
    int n = 0;
    for (const char *c = t; *c;) {
        while (*c == ' ' || *c == '\t')
            c++;
        if (!*c)
            break;
        n++;
        while (*c && *c != ' ' && *c != '\t')
            c++;
    }
    return n;
}

/* Open Alice's parseFieldValues: a,b-c,* and (* or a-b)/n; '*' is 0-59. */
static int alice_field(const char *f, size_t n, uint64_t *bits)
{
    *bits = 0;
    size_t i = 0;
    while (i <= n) {
        size_t e = i;
        while (e < n && f[e] != ',')
            e++;
        const char *p = f + i;
        size_t len = e - i;
        const char *slash = memchr(p, '/', len), *dash = memchr(p, '-', len);
        int64_t lo = 0, hi = 59, step = 1;
        size_t body = slash ? (size_t)(slash - p) : len;
        if (slash) {
            if (!all_digits(slash + 1, len - body - 1) || (step = digits_value(slash + 1, len - body - 1)) == 0)
                return -1;
            if (!(body == 1 && p[0] == '*') && !(dash && dash < slash))
                return -1;
        }
        if (body == 1 && p[0] == '*') {
            lo = 0, hi = 59;
        } else if (dash && (size_t)(dash - p) < body) {
            size_t a = (size_t)(dash - p);
            if (!all_digits(p, a) || !all_digits(dash + 1, body - a - 1))
                return -1;
            lo = digits_value(p, a);
            hi = digits_value(dash + 1, body - a - 1);
        } else if (all_digits(p, body) || body == 0) {
            lo = hi = body ? digits_value(p, body) : 0; /* Number('') is 0 */
        } else {
            return -1;
        }
        for (int64_t v = lo; v <= hi && v < 64; v += step)
            *bits |= UINT64_C(1) << v;
        i = e + 1;
    }
    return 0;
}

static void alice_cron(const char *t, struct reading *r)
{
    const char *fs[5];
    size_t fl[5];
    int n = 0;
    for (const char *c = t; *c && n <= 5;) {
        while (*c == ' ' || *c == '\t')
            c++;
        if (!*c)
            break;
        const char *s = c;
        while (*c && *c != ' ' && *c != '\t')
            c++;
        if (n < 5) {
            fs[n] = s;
            fl[n] = (size_t)(c - s);
        }
        n++;
    }
    uint64_t b[5];
    int ok = n == 5;
    for (int k = 0; ok && k < 5; k++)
        ok = alice_field(fs[k], fl[k], &b[k]) == 0;
    int wild = ok && (fs[0][0] == '*' || fs[1][0] == '*');
    if (ok && cal_cron_from_bits(&r->cron, 1, b[0], b[1], b[2], b[3], b[4], 0, wild) == 0) {
        r->kind = SCHED_CRON;
        return;
    }
    r->v = GR_FALLBACK;
    r->kind = SCHED_NONE;
    snprintf(r->msg, sizeof r->msg, "Open Alice's cron parser finds no fire for '%.80s': the job never fires", t);
}

static void read_cron(int g, const char *t, unsigned flags, struct reading *r)
{
    char m[256];
    int n = count_fields(t), secs = 0;
    if (g == GRAMMAR_ALICE) {
        alice_cron(t, r);
        return;
    }
    if (g == GRAMMAR_KEEPAI || g == GRAMMAR_KAGZI_BEFORE)
        secs = n == 6;
    else if (g == GRAMMAR_KAGZI)
        secs = 1;
    if (g == GRAMMAR_KAGZI && n != 6) {
        r->v = GR_REJECT;
        snprintf(r->msg, sizeof r->msg,
                 "Kagzi rejects the schedule: Invalid cron format: expected 6 fields (second minute hour day month "
                 "weekday), got %d. Example: '0 */5 * * * *' (every 5 minutes)",
                 n);
        return;
    }
    if (g == GRAMMAR_HERDCTL && t[0] != '@' && n != 5) {
        r->v = GR_FALLBACK;
        r->kind = SCHED_NONE;
        snprintf(r->msg, sizeof r->msg,
                 "herdctl skips the schedule with a warning: invalid cron expression \"%.80s\" (expected 5 fields, "
                 "got %d): it never runs",
                 t, n);
        return;
    }
    unsigned f = g == GRAMMAR_SIMRUN || g == GRAMMAR_OPENCLAW ? flags : (flags & CAL_CRON_AND);
    if (secs)
        f |= CAL_CRON_SECONDS;
    if (cal_cron_parse(t, f, &r->cron, m, sizeof m, NULL) == 0) {
        r->kind = SCHED_CRON;
        return;
    }
    switch (g) {
    case GRAMMAR_KEEPAI:
        r->v = GR_FALLBACK;
        r->kind = SCHED_EVERY;
        r->every_us = 60 * US_PER_S;
        snprintf(r->msg, sizeof r->msg,
                 "keep.ai cannot read the cron expression (%s): it falls back to 60 s after each run", m);
        return;
    case GRAMMAR_HERDCTL:
    case GRAMMAR_KAGZI_BEFORE:
        r->v = GR_FALLBACK;
        r->kind = SCHED_NONE;
        snprintf(r->msg, sizeof r->msg, "%s skips the schedule with a warning (%s): it never runs",
                 g == GRAMMAR_HERDCTL ? "herdctl" : "Kagzi's scheduler", m);
        return;
    case GRAMMAR_KAGZI:
        r->v = GR_REJECT;
        snprintf(r->msg, sizeof r->msg,
                 "Kagzi rejects the schedule: Invalid cron expression: %s. Use 6-field format: second minute hour "
                 "day month weekday",
                 m);
        return;
    default:
        r->v = GR_REJECT;
        snprintf(r->msg, sizeof r->msg, "%s", m);
        return;
    }
}

/* --- schedules ------------------------------------------------------------------- */

struct apply_ctx {
    gr_report_fn report;
    void *ctx;
    int rejects;
};

static void note(struct apply_ctx *a, const struct reading *r, int line, int col)
{
    if (r->v == GR_OK)
        return;
    if (r->v == GR_REJECT)
        a->rejects++;
    if (!a->report)
        return;
    struct gr_note n = {.verdict = r->v, .line = line, .col = col};
    snprintf(n.msg, sizeof n.msg, "%s", r->msg);
    a->report(a->ctx, &n);
}

/* Reads a handler's base schedule in place (sc is the copy's). */
static void apply_base(int g, struct schedule *sc, struct apply_ctx *a)
{
    enum sched_kind k = sc->as_written ? sc->raw_kind : sc->kind;
    if ((k != SCHED_EVERY && k != SCHED_CRON) || !sc->value)
        return;
    if (g == GRAMMAR_SIMRUN && !sc->as_written)
        return; /* the parser read it already */
    struct reading r = {.v = GR_OK};
    if (k == SCHED_EVERY)
        read_interval(g, sc->value, &r);
    else
        read_cron(g, sc->value, sc->cron_flags, &r);
    note(a, &r, sc->vline, sc->vcol);
    sc->kind = r.v == GR_REJECT ? SCHED_NONE : r.kind;
    if (sc->kind == SCHED_EVERY)
        sc->every_us = r.every_us;
    else if (sc->kind == SCHED_CRON)
        sc->cron = r.cron;
    else if (sc->kind == SCHED_AT)
        sc->at_us = 0;
    sc->as_written = 0;
}

/* Reads a handler's changes into a list of its own; a change the system
 * does not store is left out. */
static void apply_changes(int g, struct schedule *sc, struct apply_ctx *a)
{
    const struct sched_change *in = sc->changes;
    uint32_t n = sc->nchanges, k = 0;
    sc->changes = n ? xcalloc(n, sizeof *sc->changes) : NULL;
    for (uint32_t i = 0; i < n; i++) {
        struct sched_change c = in[i];
        int read = c.op == SCHED_OP_SET && c.value && (g != GRAMMAR_SIMRUN || c.as_written);
        if (read) {
            struct reading r = {.v = GR_OK};
            if (c.kind == SCHED_EVERY)
                read_interval(g, c.value, &r);
            else
                read_cron(g, c.value, c.cron_flags, &r);
            if (g == GRAMMAR_KAGZI && c.kind == SCHED_CRON && r.v == GR_OK) {
                r.v = GR_FALLBACK;
                snprintf(r.msg, sizeof r.msg,
                         "Kagzi validates the new cron expression but stores only the enabled flag: the schedule "
                         "keeps its old expression");
                note(a, &r, c.line, c.col);
                continue;
            }
            note(a, &r, c.line, c.col);
            c.kind = r.v == GR_REJECT ? SCHED_NONE : r.kind;
            c.every_us = r.every_us;
            c.cron = r.cron;
            c.as_written = 0;
            if (c.kind == SCHED_AT) /* runs once, at the change */
                c.kind = SCHED_NONE;
        }
        sc->changes[k++] = c;
    }
    sc->nchanges = k;
}

int grammar_needed(const struct scenario *s, int g) { return g != GRAMMAR_SIMRUN || s->has_as_written; }

int grammar_apply(const struct scenario *s, int g, struct scenario *out, gr_report_fn report, void *ctx)
{
    struct apply_ctx a = {report, ctx, 0};
    *out = *s;
    out->has_as_written = 0;
    out->nchanges = 0;
    out->wfs = xcalloc(s->nwfs ? s->nwfs : 1, sizeof *out->wfs);
    for (uint16_t f = 0; f < s->nwfs; f++) {
        out->wfs[f] = s->wfs[f];
        struct workflow_def *wf = &out->wfs[f];
        wf->handlers = xcalloc(wf->nhandlers ? wf->nhandlers : 1, sizeof *wf->handlers);
        memcpy(wf->handlers, s->wfs[f].handlers, wf->nhandlers * sizeof *wf->handlers);
        for (uint16_t h = 0; h < wf->nhandlers; h++) {
            struct schedule *sc = &wf->handlers[h].sched;
            if (wf->handlers[h].kind != H_PRODUCER)
                continue;
            apply_base(g, sc, &a);
            apply_changes(g, sc, &a);
            out->nchanges += sc->nchanges;
        }
    }
    return a.rejects;
}

void grammar_release(struct scenario *out)
{
    for (uint16_t f = 0; f < out->nwfs; f++) {
        for (uint16_t h = 0; h < out->wfs[f].nhandlers; h++)
            free(out->wfs[f].handlers[h].sched.changes);
        free(out->wfs[f].handlers);
    }
    free(out->wfs);
    out->wfs = NULL;
    out->nwfs = 0;
}

/* --- parameters ---------------------------------------------------------------------- */

/* Open Alice's and OpenClaw's times of day: H:MM or HH:MM; Alice takes
 * hours up to 24, OpenClaw 00-23 or exactly 24:00. */
static int read_hhmm(int g, const char *t, int *min)
{
    size_t n = strlen(t);
    const char *colon = strchr(t, ':');
    if (!colon || (size_t)(colon - t) < (g == GRAMMAR_OPENCLAW ? 2u : 1u) || colon - t > 2 ||
        n - (size_t)(colon - t) != 3 || !all_digits(t, (size_t)(colon - t)) || !all_digits(colon + 1, 2))
        return -1;
    int h = (int)digits_value(t, (size_t)(colon - t)), m = (int)digits_value(colon + 1, 2);
    if (m > 59 || h > 24 || (h == 24 && m != 0))
        return -1; /* Alice would take 24:30; nothing in a day is that late */
    *min = h * 60 + m;
    return 0;
}

enum gr_verdict grammar_param(int g, const char *policy, const char *key, const char *text, char *out_key,
                              size_t kn, char *out_text, size_t tn, char *msg, size_t mn)
{
    snprintf(out_key, kn, "%s", key);
    snprintf(out_text, tn, "%s", text);
    if (msg && mn)
        msg[0] = 0;
    if (strcmp(policy, "heartbeat") || (g != GRAMMAR_ALICE && g != GRAMMAR_OPENCLAW))
        return GR_OK;
    if (g == GRAMMAR_ALICE && !strcmp(key, "every")) {
        struct reading r = {.v = GR_OK};
        alice_interval(text, &r);
        if (r.v == GR_OK) {
            snprintf(out_text, tn, "%llds", (long long)(r.every_us / US_PER_S));
            return GR_OK;
        }
        if (r.v == GR_REJECT) { /* read, but too large to simulate */
            snprintf(msg, mn, "%s", r.msg);
            return GR_REJECT;
        }
        snprintf(out_text, tn, "0");
        snprintf(msg, mn,
                 "Open Alice reads heartbeat.every '%.60s' as no duration (hours, minutes and seconds only, like "
                 "1h30m): the heartbeat timer is not started",
                 text);
        return GR_FALLBACK;
    }
    if (!strcmp(key, "active_start") || !strcmp(key, "active_end")) {
        int m;
        if (read_hhmm(g, text, &m) == 0 && !(g == GRAMMAR_OPENCLAW && m == 1440 && !strcmp(key, "active_start")))
            return GR_OK;
        snprintf(out_key, kn, "active_hours");
        snprintf(out_text, tn, "always");
        snprintf(msg, mn, "%s reads %s '%.40s' as no time of day: the agent is always active",
                 g == GRAMMAR_ALICE ? "Open Alice" : "OpenClaw", key, text);
        return GR_FALLBACK;
    }
    return GR_OK;
}
