/* scenario_arrival.c: arrival processes (`publish` and `source` lines) and
 * the trace files they may replay.
 *
 * A trace file is untrusted input as much as the scenario: it is read with
 * the same bounds (size, line length, line count), and an error inside it is
 * reported as tracefile:line:col. */
#include "sim/scenario_int.h"

#include <stdlib.h>
#include <string.h>

#include "sim/util.h"

/* --- trace files ------------------------------------------------------------------ */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* One timestamp of a trace file: a duration offset (90s, 1d09:00:00), a
 * decimal number of seconds with up to 6 decimals, or an ISO instant.  Into
 * *us relative to the start, or -1 with msg. */
static int trace_value(const struct scenario *s, const char *v, int64_t *us, char *msg, size_t n)
{
    char e[SCN_QUOTE_MAX];
    scn_escape(e, sizeof e, v);
    if (v[0] == '-')
        return scn_msg(msg, n, "negative timestamp '%s'", e);
    if (strchr(v, '-')) {
        int64_t utc;
        char m[200];
        if (cal_parse_instant(v, &utc, m, sizeof m) != 0)
            return scn_msg(msg, n, "bad instant: %s", m);
        if (utc < s->start_utc_s)
            return scn_msg(msg, n, "instant '%s' is before the start", e);
        if (utc - s->start_utc_s > SCN_MAX_HORIZON_US / US_PER_S)
            return scn_msg(msg, n, "instant '%s' is more than 3660d after the start", e);
        *us = (utc - s->start_utc_s) * US_PER_S;
        return 0;
    }
    const char *c = v;
    uint64_t whole = 0, frac = 0;
    int nd = scn_read_digits(&c, 10, &whole);
    if (nd > 0 && (*c == 0 || *c == '.')) {
        int nf = 0;
        if (*c == '.') {
            c++;
            nf = scn_read_digits(&c, 7, &frac);
            if (nf == 0 || *c)
                return scn_msg(msg, n, "bad timestamp '%s' (expected seconds like 12.5, a duration or an instant)", e);
            if (nf > 6)
                return scn_msg(msg, n, "timestamp '%s' has more than 6 decimals", e);
        }
        if (nd == 10 && is_digit(*c))
            return scn_msg(msg, n, "timestamp '%s' is too large", e);
        for (int i = nf; i < 6; i++)
            frac *= 10;
        *us = (int64_t)whole * US_PER_S + (int64_t)frac;
        if (*us > SCN_MAX_HORIZON_US)
            return scn_msg(msg, n, "timestamp '%s' is more than 3660d after the start", e);
        return 0;
    }
    if (scn_parse_duration(v, us, msg, n) != 0)
        return -1;
    if (*us > SCN_MAX_HORIZON_US)
        return scn_msg(msg, n, "timestamp '%s' is more than 3660d after the start", e);
    return 0;
}

/* Loads a trace file named at token t into a (ARR_TRACE).  Errors inside the
 * file are reported as tracefile:line:col. */
static int load_trace(struct parser *p, int line, const struct tok *t, struct arrival *a)
{
    struct scenario *s = p->s;
    char full[512], err[256];
    if (!t->s[0])
        return perr(p, line, t->col, "empty trace file name");
    int w = t->s[0] == '/' ? snprintf(full, sizeof full, "%s", t->s)
                            : snprintf(full, sizeof full, "%s/%s", p->dir, t->s);
    if (w < 0 || (size_t)w >= sizeof full)
        return perr(p, line, t->col, "trace file path '%s' is too long", q(p, t->s));
    char *buf = NULL;
    size_t len = 0;
    if (scn__read_file(full, SCN_MAX_TRACE_BYTES, &buf, &len, err, sizeof err) != 0)
        return perr(p, line, t->col, "cannot read trace file '%s': %s", q(p, t->s), err);
    s->hash = sim_fnv(s->hash, buf, len);

    size_t pos = 0, cap = 0, llen;
    const char *ls;
    int no = 0, content = 0, rc = 0;
    char lb[SCN_MAX_LINE + 1], m[256];
    while (scn__next_line(buf, len, &pos, &ls, &llen)) {
        int col;
        if (++no > SCN_MAX_TRACE_LINES) {
            col = 1;
            snprintf(m, sizeof m, "trace file has more than %d lines", SCN_MAX_TRACE_LINES);
            goto trace_err;
        }
        if (llen > SCN_MAX_LINE) {
            col = SCN_MAX_LINE + 1;
            snprintf(m, sizeof m, "line longer than %d bytes", SCN_MAX_LINE);
            goto trace_err;
        }
        const char *nul = memchr(ls, 0, llen);
        if (nul) {
            col = (int)(nul - ls) + 1;
            snprintf(m, sizeof m, "nul byte in the trace file");
            goto trace_err;
        }
        memcpy(lb, ls, llen);
        lb[llen] = 0;
        /* The first column: up to a comma, trimmed, without quotes. */
        char *f = lb;
        while (*f == ' ' || *f == '\t')
            f++;
        if (!*f || *f == '#')
            continue;
        char *z = strchr(f, ',');
        if (z)
            *z = 0;
        else
            z = f + strlen(f);
        while (z > f && (z[-1] == ' ' || z[-1] == '\t' || z[-1] == '\r'))
            *--z = 0;
        if (z - f >= 2 && f[0] == '"' && z[-1] == '"') {
            z[-1] = 0;
            f++;
        }
        col = (int)(f - lb) + 1;
        if (!content++ && !is_digit(*f))
            continue; /* a CSV header */
        int64_t us;
        if (trace_value(s, f, &us, m, sizeof m) != 0)
            goto trace_err;
        if (us >= s->horizon_us)
            continue; /* a trace may run past the simulated window */
        a->trace_us = xgrow(a->trace_us, sizeof *a->trace_us, &cap, a->ntrace + 1);
        a->trace_us[a->ntrace++] = us;
        continue;
    trace_err:
        if (!p->err)
            snprintf(p->d->file, sizeof p->d->file, "%s", full);
        rc = perr(p, no, col, "%s", m);
        break;
    }
    free(buf);
    if (rc)
        return -1;
    if (a->ntrace == 0)
        return perr(p, line, t->col, "trace file '%s' has no timestamps before the horizon", q(p, t->s));
    qsort(a->trace_us, a->ntrace, sizeof *a->trace_us, cmp_i64);
    return 0;
}

/* --- arrival processes (publish and source lines) ------------------------------- */

/* Parses an arrival process from token i (its kind word) to the end of L. */
static int parse_arrival(struct parser *p, const struct line *L, int i, struct arrival *a, const char *what)
{
    struct scenario *s = p->s;
    int no = L->no;
    memset(a, 0, sizeof *a);
    a->line = no;
    a->to_us = s->horizon_us;
    if (i >= L->ntok)
        return perr(p, no, end_col(L), "missing arrival process after '%s' (at, burst, rate, poisson, daily or trace)",
                    q(p, L->tok[i - 1].s));
    const struct tok *k = &L->tok[i];
    int allow_range = 0, allow_count = 0, allow_over = 0;
    if (!strcmp(k->s, "at")) {
        a->kind = ARR_AT;
        a->count = 1;
        if (need(p, L, i, 1, "an instant") || scn__parse_instant(p, no, &L->tok[i + 1], LIM_HORIZON, &a->at_us))
            return -1;
        allow_count = 1;
        i += 2;
    } else if (!strcmp(k->s, "burst")) {
        a->kind = ARR_BURST;
        if (need(p, L, i, 3, "'N at T'") ||
            scn__parse_count(p, no, &L->tok[i + 1], 1, SCN_MAX_COUNT, "burst size", &a->count))
            return -1;
        if (strcmp(L->tok[i + 2].s, "at"))
            return perr(p, no, L->tok[i + 2].col, "expected 'at' after the burst size, got '%s'",
                        q(p, L->tok[i + 2].s));
        if (scn__parse_instant(p, no, &L->tok[i + 3], LIM_HORIZON, &a->at_us))
            return -1;
        allow_over = 1;
        i += 4;
    } else if (!strcmp(k->s, "rate") || !strcmp(k->s, "poisson")) {
        a->kind = k->s[0] == 'r' ? ARR_RATE : ARR_POISSON;
        if (need(p, L, i, 1, "a rate like 20/h") || scn__parse_rate(p, no, &L->tok[i + 1], &a->count, &a->per_us))
            return -1;
        allow_range = 1;
        i += 2;
    } else if (!strcmp(k->s, "daily")) {
        a->kind = ARR_DAILY;
        if (need(p, L, i, 3, "'RATE peak HH:MM'") || scn__parse_rate(p, no, &L->tok[i + 1], &a->count, &a->per_us))
            return -1;
        if (strcmp(L->tok[i + 2].s, "peak"))
            return perr(p, no, L->tok[i + 2].col, "expected 'peak' after the daily rate, got '%s'",
                        q(p, L->tok[i + 2].s));
        char m[256];
        if (cal_tod_parse(L->tok[i + 3].s, &a->peak_min, m, sizeof m) != 0)
            return perr(p, no, L->tok[i + 3].col, "%s", m);
        allow_range = 1;
        i += 4;
    } else if (!strcmp(k->s, "trace")) {
        a->kind = ARR_TRACE;
        if (need(p, L, i, 1, "a file name") || load_trace(p, no, &L->tok[i + 1], a))
            return -1;
        i += 2;
    } else {
        return perr(p, no, k->col, "unknown arrival process '%s' (valid: at, burst, rate, poisson, daily, trace)",
                    q(p, k->s));
    }
    uint64_t keys = 0;
    struct clause cl[5];
    int n = 0;
    if (allow_range) {
        cl[n++] = (struct clause){"from", CL_INSTANT, LIM_HORIZON, 0, 0, "'from'", &a->from_us, 0, 0};
        cl[n++] = (struct clause){"to", CL_INSTANT, LIM_NONE, 0, 0, "'to'", &a->to_us, 0, 0};
    }
    if (allow_count)
        cl[n++] = (struct clause){"count", CL_COUNT, LIM_NONE, 1, SCN_MAX_COUNT, "count", &a->count, 0, 0};
    if (allow_over)
        cl[n++] = (struct clause){"over", CL_DURATION, LIM_NONE, 0, 0, "'over'", &a->over_us, 0, 0};
    cl[n++] = (struct clause){"keys", CL_COUNT, LIM_NONE, 1, SCN_MAX_KEYS, "number of keys", &keys, 0, 0};
    char line_what[48], valid[64];
    snprintf(line_what, sizeof line_what, "a '%s' line", what);
    valid[0] = 0;
    for (int ci = 0; ci < n; ci++)
        snprintf(valid + strlen(valid), sizeof valid - strlen(valid), "%s%s", ci ? ", " : "", cl[ci].word);
    if (scn__parse_clauses(p, L, i, cl, n, line_what, "valid here", valid))
        return -1;
    a->keys = (uint32_t)keys;
    int from_vcol = allow_range ? cl[0].vcol : 0, c_to = allow_range ? cl[1].col : 0;
    int c_over = 0;
    for (int ci = 0; ci < n; ci++)
        if (!strcmp(cl[ci].word, "over"))
            c_over = cl[ci].col;
    if (allow_range && a->to_us <= a->from_us)
        return perr(p, no, c_to ? c_to : from_vcol, "'to' must be after 'from'");
    if (a->kind == ARR_BURST && a->at_us + a->over_us > s->horizon_us)
        return perr(p, no, c_over, "the burst ends after the horizon");
    return 0;
}

int scn__parse_publish(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    if (need(p, L, 0, 1, "a topic name"))
        return -1;
    const struct tok *t = &L->tok[1];
    if (scn__check_name(p, L->no, t->col, t->s, "topic"))
        return -1;
    s->pubs = xgrow(s->pubs, sizeof *s->pubs, &p->cap_pubs, (size_t)s->npubs + 1);
    struct publish_def *pd = &s->pubs[s->npubs++];
    memset(pd, 0, sizeof *pd);
    pd->topic = xstrdup(t->s);
    pd->line = L->no;
    scn__add_ref(p, REF_TOPIC, L->no, t->col, t->s, s->npubs - 1, 0);
    return parse_arrival(p, L, 2, &pd->arr, "publish");
}

int scn__parse_source(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    if (need(p, L, 0, 1, "a source name"))
        return -1;
    const struct tok *t = &L->tok[1];
    if (scn__check_name(p, L->no, t->col, t->s, "source"))
        return -1;
    for (uint16_t i = 0; i < s->nsources; i++)
        if (!strcmp(s->sources[i].name, t->s))
            return perr(p, L->no, t->col, "duplicate source '%s' (first at line %d)", q(p, t->s), s->sources[i].line);
    if (s->nsources >= SCN_MAX_SOURCES)
        return perr(p, L->no, t->col, "too many sources (limit %d)", SCN_MAX_SOURCES);
    s->sources = xgrow(s->sources, sizeof *s->sources, &p->cap_sources, (size_t)s->nsources + 1);
    struct source_def *sd = &s->sources[s->nsources++];
    memset(sd, 0, sizeof *sd);
    sd->name = xstrdup(t->s);
    sd->line = L->no;
    return parse_arrival(p, L, 2, &sd->arr, "source");
}
