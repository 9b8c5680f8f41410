/* scenario_lex.c: the scenario parser's input, lexer and value parsers.
 *
 * Everything here reads one line or one token and either fills a value or
 * records an error at the token (scenario_int.h: perr).  Values are bounded:
 * a number past its limit, a duration past the longest horizon or an
 * instant outside the simulated span is an error, never clamped. */
#include "sim/scenario_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/util.h"

/* --- input ----------------------------------------------------------------------- */

/* Reads a whole regular file of at most max bytes.  Opening with
 * O_NONBLOCK and refusing anything but a regular file keeps a FIFO or a
 * device named by a scenario from blocking or streaming forever. */
int scn__read_file(const char *path, size_t max, char **out, size_t *len, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return scn_msg(err, errlen, "%s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        scn_msg(err, errlen, "%s", strerror(errno));
        goto fail_fd;
    }
    if (S_ISDIR(st.st_mode)) {
        scn_msg(err, errlen, "is a directory");
        goto fail_fd;
    }
    if (!S_ISREG(st.st_mode)) {
        scn_msg(err, errlen, "not a regular file");
        goto fail_fd;
    }
    if ((uint64_t)st.st_size > max) {
        scn_msg(err, errlen, "larger than %zu MiB", max >> 20);
        goto fail_fd;
    }
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = xmalloc(cap);
    for (;;) {
        if (n == cap) {
            if (cap > max) {
                scn_msg(err, errlen, "larger than %zu MiB", max >> 20);
                goto fail_buf;
            }
            cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
            buf = xrealloc(buf, cap);
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            scn_msg(err, errlen, "%s", strerror(errno));
            goto fail_buf;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (n > max) {
        scn_msg(err, errlen, "larger than %zu MiB", max >> 20);
        goto fail_buf;
    }
    close(fd);
    *out = buf;
    *len = n;
    return 0;
fail_buf:
    free(buf);
fail_fd:
    close(fd);
    return -1;
}

/* --- references and lexing --------------------------------------------------------- */

void scn__add_ref(struct parser *p, enum ref_kind kind, int line, int col, const char *name, uint32_t a, uint32_t b)
{
    p->refs = xgrow(p->refs, sizeof *p->refs, &p->cap_refs, p->nrefs + 1);
    struct ref *r = &p->refs[p->nrefs++];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->line = line;
    r->col = col;
    r->name = xstrdup(name);
    r->a = a;
    r->b = b;
}

/* Splits one line into tokens: words separated by spaces or tabs, "quoted
 * text", and parenthesised groups kept whole (`uniform(2s, 10s)`).  A '#'
 * at the start of a word starts a comment. */
int scn__lex_line(struct parser *p, const char *raw, size_t len, int no, struct line *L)
{
    L->no = no;
    L->ntok = 0;
    L->raw = raw;
    L->len = len;
    L->indented = 0;
    if (len > SCN_MAX_LINE)
        return perr(p, no, SCN_MAX_LINE + 1, "line longer than %d bytes", SCN_MAX_LINE);
    for (size_t i = 0; i < len; i++) {
        if (raw[i] == 0)
            return perr(p, no, (int)i + 1, "nul byte in the file (a scenario is text)");
        if (raw[i] == '\r') /* the last byte of a line only when no LF follows: the end of the file */
            return perr(p, no, (int)i + 1, "stray carriage return%s (line ends must be LF or CRLF)",
                        i + 1 == len ? " at the end of the file, without a line feed" : "");
    }
    memcpy(L->buf, raw, len);
    L->buf[len] = 0;
    char *b = L->buf;
    L->indented = len > 0 && (b[0] == ' ' || b[0] == '\t');
    size_t i = 0;
    for (;;) {
        while (i < len && (b[i] == ' ' || b[i] == '\t'))
            i++;
        if (i >= len || b[i] == '#')
            break;
        SIM_ASSERT(L->ntok < SCN_MAX_TOKENS);
        struct tok *t = &L->tok[L->ntok++];
        t->col = (int)i + 1;
        t->quoted = 0;
        if (b[i] == '"') {
            size_t j = i + 1;
            while (j < len && b[j] != '"') {
                unsigned char c = (unsigned char)b[j];
                if ((c < 0x20 && c != '\t') || c == 0x7f)
                    return perr(p, no, (int)j + 1, "control character 0x%02x in quoted text", c);
                j++;
            }
            if (j >= len)
                return perr(p, no, (int)i + 1, "unterminated quote");
            b[j] = 0;
            t->s = b + i + 1;
            t->quoted = 1;
            t->end = (int)j + 2;
            i = j + 1;
            if (i < len && b[i] != ' ' && b[i] != '\t')
                return perr(p, no, (int)i + 1, "expected a space after the closing quote");
            continue;
        }
        size_t j = i, open_at = 0;
        int depth = 0;
        while (j < len) {
            unsigned char c = (unsigned char)b[j];
            if (c == '(') {
                if (depth++ == 0)
                    open_at = j;
            } else if (c == ')') {
                if (depth == 0)
                    return perr(p, no, (int)j + 1, "unbalanced ')'");
                depth--;
            } else if ((c == ' ' || c == '\t') && depth == 0) {
                break;
            } else if (c == '"') {
                return perr(p, no, (int)j + 1, "unexpected quote inside a word");
            } else if ((c < 0x20 && c != '\t') || c == 0x7f) {
                return perr(p, no, (int)j + 1, "control character 0x%02x", c);
            }
            j++;
        }
        if (depth)
            return perr(p, no, (int)open_at + 1, "unclosed '('");
        b[j] = 0;
        t->s = b + i;
        t->end = (int)j + 1;
        i = j + 1;
    }
    return 0;
}

/* Iterates over the lines of buf: *pos is the offset of the next line.  A
 * line ends at LF or CRLF; the CR of CRLF is not part of the line. */
int scn__next_line(const char *buf, size_t len, size_t *pos, const char **start, size_t *llen)
{
    if (*pos >= len)
        return 0;
    const char *s = buf + *pos;
    const char *nl = memchr(s, '\n', len - *pos);
    size_t l = nl ? (size_t)(nl - s) : len - *pos;
    *pos += l + (nl ? 1 : 0);
    if (nl && l > 0 && s[l - 1] == '\r')
        l--; /* CRLF; a CR without its LF (at the end of the file) stays, a stray one */
    *start = s;
    *llen = l;
    return 1;
}

/* --- small value parsers (each reports at the token it reads) ------------------ */

static int is_name(const char *s)
{
    if (!(is_alpha(s[0]) || s[0] == '_'))
        return 0;
    for (const char *c = s + 1; *c; c++)
        if (!(is_alpha(*c) || is_digit(*c) || *c == '_' || *c == '-'))
            return 0;
    return 1;
}

int scn__check_name(struct parser *p, int line, int col, const char *s, const char *what)
{
    if (!*s)
        return perr(p, line, col, "empty %s name", what);
    if (strlen(s) > SCN_MAX_NAME - 1)
        return perr(p, line, col, "%s name '%s' is longer than %d bytes", what, q(p, s), SCN_MAX_NAME - 1);
    if (!is_name(s))
        return perr(p, line, col, "bad %s name '%s' (letters, digits, '_' and '-', not starting with a digit or '-')",
                    what, q(p, s));
    return 0;
}

int scn__all_digits(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!is_digit(*s))
            return 0;
    return 1;
}

/* An unsigned decimal count in [min, max]. */
int scn__parse_count(struct parser *p, int line, const struct tok *t, uint64_t min, uint64_t max,
                     const char *what, uint64_t *v)
{
    if (!scn__all_digits(t->s))
        return perr(p, line, t->col, "expected a number for the %s, got '%s'", what, q(p, t->s));
    uint64_t x = 0;
    for (const char *c = t->s; *c; c++) {
        if (x > (UINT64_MAX - 9) / 10 || x * 10 + (uint64_t)(*c - '0') > max)
            return perr(p, line, t->col, "%s '%s' exceeds the limit %llu", what, q(p, t->s), (unsigned long long)max);
        x = x * 10 + (uint64_t)(*c - '0');
    }
    if (x < min)
        return perr(p, line, t->col, "%s must be at least %llu, got '%s'", what, (unsigned long long)min, q(p, t->s));
    *v = x;
    return 0;
}

/* A duration in [min_us, SCN_MAX_HORIZON_US]: no duration of a scenario may
 * exceed the longest horizon, which also keeps every sum of two durations
 * far from overflow. */
int scn__parse_dur(struct parser *p, int line, int col, const char *text, int64_t min_us, const char *what,
                   int64_t *us)
{
    char m[256];
    if (scn_parse_duration(text, us, m, sizeof m) != 0)
        return perr(p, line, col, "%s", m);
    if (*us < min_us)
        return perr(p, line, col, "%s must be greater than 0, got '%s'", what, q(p, text));
    if (*us > SCN_MAX_HORIZON_US)
        return perr(p, line, col, "%s '%s' exceeds the limit 3660d", what, q(p, text));
    return 0;
}

/* An instant: a duration after the start, or an ISO instant (anything with
 * a '-' after its first byte) that is not before the start.  LIM_HORIZON:
 * it must be before the horizon; LIM_END: before the end of the drain. */
int scn__parse_instant(struct parser *p, int line, const struct tok *t, enum lim lim, int64_t *us)
{
    const struct scenario *s = p->s;
    char m[256];
    if (t->s[0] != '-' && strchr(t->s, '-')) {
        int64_t utc;
        if (cal_parse_instant(t->s, &utc, m, sizeof m) != 0)
            return perr(p, line, t->col, "bad instant: %s", m);
        if (utc < s->start_utc_s) {
            char st[40];
            cal_format_utc(s->start_utc_s, st, sizeof st);
            return perr(p, line, t->col, "instant '%s' is before the start (%s)", q(p, t->s), st);
        }
        if (utc - s->start_utc_s > SCN_MAX_HORIZON_US / US_PER_S)
            return perr(p, line, t->col, "instant '%s' is more than 3660d after the start", q(p, t->s));
        *us = (utc - s->start_utc_s) * US_PER_S;
    } else if (scn__parse_dur(p, line, t->col, t->s, 0, "instant", us)) {
        return -1;
    }
    char h[64];
    if (lim == LIM_HORIZON && *us >= s->horizon_us) {
        scn_fmt_duration(s->horizon_us, h, sizeof h);
        return perr(p, line, t->col, "instant '%s' is not before the horizon (%s)", q(p, t->s), h);
    }
    if (lim == LIM_END && *us >= s->horizon_us + s->drain_us) {
        scn_fmt_duration(s->horizon_us + s->drain_us, h, sizeof h);
        return perr(p, line, t->col, "instant '%s' is not before the end of the drain (%s)", q(p, t->s), h);
    }
    return 0;
}

/* A distribution: D | fixed(D) | uniform(A,B) | exp(MEAN). */
int scn__parse_dist(struct parser *p, int line, const struct tok *t, struct dist *out)
{
    const char *s = t->s;
    const char *open = strchr(s, '(');
    memset(out, 0, sizeof *out);
    if (!open) {
        out->kind = DIST_FIXED;
        return scn__parse_dur(p, line, t->col, s, 0, "duration", &out->a_us);
    }
    size_t nlen = (size_t)(open - s);
    int nargs;
    if (nlen == 5 && !strncmp(s, "fixed", 5)) {
        out->kind = DIST_FIXED;
        nargs = 1;
    } else if (nlen == 7 && !strncmp(s, "uniform", 7)) {
        out->kind = DIST_UNIFORM;
        nargs = 2;
    } else if (nlen == 3 && !strncmp(s, "exp", 3)) {
        out->kind = DIST_EXP;
        nargs = 1;
    } else {
        return perr(p, line, t->col, "unknown distribution '%s' (valid: fixed(D), uniform(A,B), exp(MEAN), or D)",
                    q(p, s));
    }
    size_t len = strlen(s);
    if (s[len - 1] != ')')
        return perr(p, line, t->col + (int)len, "unexpected text after ')' in '%s'", q(p, s));
    /* The arguments, split at commas, each trimmed; columns kept. */
    char args[2][SCN_MAX_LINE + 1];
    int cols[2], n = 0;
    const char *c = open + 1, *end = s + len - 1;
    for (;;) {
        const char *comma = memchr(c, ',', (size_t)(end - c));
        const char *stop = comma ? comma : end;
        const char *a = c, *z = stop;
        while (a < z && (*a == ' ' || *a == '\t'))
            a++;
        while (z > a && (z[-1] == ' ' || z[-1] == '\t'))
            z--;
        if (n >= nargs)
            return perr(p, line, t->col + (int)(c - s), "too many arguments in '%s' (expected %d)", q(p, s), nargs);
        memcpy(args[n], a, (size_t)(z - a));
        args[n][z - a] = 0;
        cols[n] = t->col + (int)(a - s);
        if (!args[n][0])
            return perr(p, line, cols[n], "missing argument in '%s'", q(p, s));
        n++;
        if (!comma)
            break;
        c = comma + 1;
    }
    if (n != nargs)
        return perr(p, line, t->col, "'%s' needs %d arguments", q(p, s), nargs);
    if (scn__parse_dur(p, line, cols[0], args[0], 0, "duration", &out->a_us))
        return -1;
    if (out->kind == DIST_UNIFORM) {
        if (scn__parse_dur(p, line, cols[1], args[1], 0, "duration", &out->b_us))
            return -1;
        if (out->a_us > out->b_us)
            return perr(p, line, t->col, "bad distribution '%s': the lower bound exceeds the upper bound", q(p, s));
    }
    if (out->kind == DIST_EXP && out->a_us == 0)
        return perr(p, line, cols[0], "the mean of '%s' must be greater than 0", q(p, s));
    return 0;
}

/* A rate N/UNIT (20/h) or N/DURATION (3/5m). */
int scn__parse_rate(struct parser *p, int line, const struct tok *t, uint64_t *count, int64_t *per_us)
{
    const char *s = t->s, *slash = strchr(s, '/');
    if (!slash || slash == s)
        return perr(p, line, t->col, "bad rate '%s' (expected N/UNIT like 20/h or 3/5m)", q(p, s));
    uint64_t x = 0;
    for (const char *c = s; c < slash; c++) {
        if (!is_digit(*c))
            return perr(p, line, t->col, "bad rate '%s' (expected N/UNIT like 20/h or 3/5m)", q(p, s));
        if (x > SCN_MAX_COUNT)
            break;
        x = x * 10 + (uint64_t)(*c - '0');
    }
    if (x < 1)
        return perr(p, line, t->col, "rate must be at least 1 per period, got '%s'", q(p, s));
    if (x > SCN_MAX_COUNT)
        return perr(p, line, t->col, "rate '%s' exceeds the limit of %llu per period", q(p, s),
                    (unsigned long long)SCN_MAX_COUNT);
    const char *u = slash + 1;
    int ucol = t->col + (int)(u - s);
    if (!*u)
        return perr(p, line, ucol, "missing rate unit in '%s'", q(p, s));
    if (is_digit(*u)) {
        if (scn__parse_dur(p, line, ucol, u, 1, "rate period", per_us))
            return -1;
    } else {
        *per_us = scn_unit_us(u, strlen(u));
        if (*per_us == 0)
            return perr(p, line, ucol, "unknown rate unit '%s' in '%s' (valid: us, ms, s, m, h, d or a duration)",
                        q(p, u), q(p, s));
    }
    *count = x;
    return 0;
}

/* A percentage 0% < p <= 100% with up to 4 decimals, as parts per million. */
int scn__parse_percent(struct parser *p, int line, const struct tok *t, uint32_t *ppm)
{
    const char *s = t->s, *c = s;
    uint64_t whole = 0, frac = 0;
    int nd = scn_read_digits(&c, 4, &whole), nf = 0;
    if (nd == 0 || (nd == 4 && is_digit(*c)))
        goto bad;
    if (*c == '.') {
        c++;
        nf = scn_read_digits(&c, 5, &frac);
        if (nf == 0)
            goto bad;
        if (nf > 4)
            return perr(p, line, t->col, "percentage '%s' has more than 4 decimals", q(p, s));
    }
    if (*c != '%') {
        if (!*c)
            return perr(p, line, t->col, "missing '%%' in '%s'", q(p, s));
        goto bad;
    }
    if (c[1])
        goto bad;
    for (int i = nf; i < 4; i++)
        frac *= 10;
    uint64_t v = whole * 10000 + frac;
    if (v == 0 || v > 1000000)
        return perr(p, line, t->col, "percentage '%s' out of range (0%% < p <= 100%%)", q(p, s));
    *ppm = (uint32_t)v;
    return 0;
bad:
    return perr(p, line, t->col, "bad percentage '%s' (expected like 2%% or 0.5%%)", q(p, s));
}

/* Reads the clauses of L from token i on, as the table cl[0..n) says; an
 * unknown word is an error that names the valid ones. */
int scn__parse_clauses(struct parser *p, const struct line *L, int i, struct clause *cl, int n,
                       const char *line_what, const char *valid_label, const char *valid)
{
    int no = L->no;
    while (i < L->ntok) {
        const struct tok *o = &L->tok[i];
        struct clause *c = NULL;
        for (int k = 0; k < n && !c; k++)
            if (!strcmp(o->s, cl[k].word))
                c = &cl[k];
        if (!c)
            return perr(p, no, o->col, "unexpected '%s' in %s (%s: %s)", q(p, o->s), line_what, valid_label, valid);
        if (c->col)
            return perr(p, no, o->col, "duplicate '%s' (first at column %d)", o->s, c->col);
        c->col = o->col;
        if (c->kind == CL_FLAG) {
            *(int *)c->dest = 1;
            i++;
            continue;
        }
        if (need(p, L, i, 1, c->kind == CL_INSTANT ? "an instant" : c->kind == CL_DURATION ? "a duration" : "a value"))
            return -1;
        const struct tok *v = &L->tok[i + 1];
        c->vcol = v->col;
        int rc = 0;
        switch (c->kind) {
        case CL_INSTANT: rc = scn__parse_instant(p, no, v, c->lim, c->dest); break;
        case CL_DURATION: rc = scn__parse_dur(p, no, v->col, v->s, c->min, c->what, c->dest); break;
        case CL_COUNT: rc = scn__parse_count(p, no, v, (uint64_t)c->min, c->max, c->what, c->dest); break;
        case CL_FLAG: break;
        }
        if (rc)
            return -1;
        i += 2;
    }
    return 0;
}
