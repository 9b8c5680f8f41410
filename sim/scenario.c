/* scenario.c: the scenario file parser.
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
 * hostile byte in a file cannot garble a terminal.
 *
 * Invariant: scenario_parse returns either a complete, consistent struct
 * scenario (every name resolved, every value in range, every limit of
 * scenario.h respected) or -1 with nothing left allocated. */
#include "sim/scenario.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/syntax.h"
#include "sim/util.h"

/* Limits of this parser beyond those in scenario.h. */
#define SCN_MAX_FILE_BYTES  ((size_t)64 << 20)   /* a scenario file */
#define SCN_MAX_TRACE_BYTES ((size_t)256 << 20)  /* one trace file */
#define SCN_MAX_TOKENS      (SCN_MAX_LINE / 2 + 1) /* a token and a separator need 2 bytes */
#define SCN_MAX_COUNT       UINT64_C(200000000)  /* events of one `at`/`burst`, N of a rate */
#define SCN_MAX_EMIT        UINT64_C(1000000)    /* events a producer publishes per run */
#define SCN_MAX_BATCH       UINT64_C(1000000)    /* N of `batch N or D` */
#define SCN_MAX_KEYS        UINT64_C(1000000000) /* `keys N` */
#define SCN_MAX_WORKER      UINT64_C(65535)      /* `crash worker N` */
#define SCN_MAX_SOURCES     4096
#define SCN_MAX_VARIANTS    256
#define SCN_MAX_CRASHES     10000                /* crash lines (overlaps are checked pairwise) */
#define SCN_MAX_EXPECT_POLICIES 64               /* names in one expect line */
/* Cron fires that the event estimate may count in all; past it, a cron
 * producer is assumed to fire every minute (an upper bound), so that a file
 * with thousands of cron producers cannot make the estimate slow. */
#define CRON_ESTIMATE_BUDGET INT64_C(4000000)

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

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* --- lexing ----------------------------------------------------------------- */

struct tok {
    char *s;                       /* NUL-terminated in line.buf; without the quotes */
    int col;                       /* 1-based byte column of its first byte (the quote) */
    int end;                       /* the column just after it */
    int quoted;
};

struct line {
    int no;
    int indented;                  /* starts with a space or a tab */
    int ntok;
    const char *raw;               /* the line in the input, without its line end */
    size_t len;
    struct tok tok[SCN_MAX_TOKENS];
    char buf[SCN_MAX_LINE + 1];
};

/* --- the parser state -------------------------------------------------------- */

enum { HDR_NAME, HDR_START, HDR_TZ, HDR_HORIZON, HDR_DRAIN, HDR_SEED, HDR_RB, NHDR };
static const char *const hdr_names[NHDR] = {"name", "start", "timezone", "horizon", "drain", "seed", "recovery-bound"};

enum body_kind { B_WORKFLOW, B_SOURCE, B_PUBLISH, B_CRASH, B_FAIL, B_TRIGGER, B_SET, B_VARIANT, B_EXPECT, B_STOP, NBODY };
static const char *const body_names[NBODY] = {"workflow", "source", "publish", "crash", "fail",
                                              "trigger",  "set",    "variant", "expect", "stop"};

/* A name used before it may be defined, resolved after the whole file was
 * read (pass 3).  a/b say who refers; see the callers of add_ref. */
static const char *const fail_class_names[FAIL_NCLASS] = {"",         "transient",     "logic",
                                                          "internal", "indeterminate", "delivery"};

enum ref_kind { REF_SOURCE, REF_TOPIC, REF_FAIL, REF_TRIGGER, REF_EXPECT_FOR, REF_EXPECT_POLICY, REF_SET };
struct ref {
    enum ref_kind kind;
    int line, col;
    char *name;                    /* owned */
    uint32_t a, b;
    enum fail_class cls;           /* REF_FAIL: the rule to attach */
    uint32_t ppm;
    enum run_phase phase;
    int cls_col, pct_col;
};

struct parser {
    struct scenario *s;
    struct diag *d;
    const struct scenario_refs *ext; /* checks of outside names; never NULL (no_refs: none) */
    const char *path;
    char dir[512];                 /* the scenario's directory, for trace files */
    int err;                       /* an error has been recorded */
    struct line *L;
    int hdr_line[NHDR];            /* where each header directive was; 0: not given */
    int cur_wf;                    /* the open workflow block, -1 none */
    size_t cap_wfs, cap_sources, cap_pubs, cap_crashes, cap_triggers, cap_expects, cap_variants, cap_sets;
    size_t cap_h[SCN_MAX_WORKFLOWS], cap_t[SCN_MAX_WORKFLOWS];
    struct ref *refs;
    size_t nrefs, cap_refs;
    uint32_t nparams;              /* key=value pairs of set and variant lines */
    char qbuf[6][SCN_QUOTE_MAX];
    int qi;
    int64_t cron_budget;
    /* Pass 3: every topic name of every workflow, sorted, with the number of
     * instances that have it; and the instances that poll each source. */
    struct topic_ent *topics;
    size_t ntopics;
    double *src_inst;
};

struct topic_ent {
    const char *name;              /* borrowed from a workflow_def */
    double inst;
};

/* Records the first error at line:col of the current file; always -1. */
static int perr(struct parser *p, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int perr(struct parser *p, int line, int col, const char *fmt, ...)
{
    if (p->err)
        return -1;
    p->err = 1;
    p->d->line = line;
    p->d->col = col;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->d->msg, sizeof p->d->msg, fmt, ap);
    va_end(ap);
    return -1;
}

/* Escaped text for a message; valid until five more calls. */
static const char *q(struct parser *p, const char *s)
{
    char *b = p->qbuf[p->qi++ % 6];
    scn_escape(b, sizeof p->qbuf[0], s);
    return b;
}

static void add_ref(struct parser *p, enum ref_kind kind, int line, int col, const char *name, uint32_t a, uint32_t b)
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
static int lex_line(struct parser *p, const char *raw, size_t len, int no, struct line *L)
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
        if (raw[i] == '\r')
            return perr(p, no, (int)i + 1, "stray carriage return (line ends must be LF or CRLF)");
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

/* Iterates over the lines of buf: *pos is the offset of the next line. */
static int next_line(const char *buf, size_t len, size_t *pos, const char **start, size_t *llen)
{
    if (*pos >= len)
        return 0;
    const char *s = buf + *pos;
    const char *nl = memchr(s, '\n', len - *pos);
    size_t l = nl ? (size_t)(nl - s) : len - *pos;
    *pos += l + (nl ? 1 : 0);
    if (l > 0 && s[l - 1] == '\r')
        l--;
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

static int check_name(struct parser *p, int line, int col, const char *s, const char *what)
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

static int all_digits(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!is_digit(*s))
            return 0;
    return 1;
}

/* An unsigned decimal count in [min, max]. */
static int parse_count(struct parser *p, int line, const struct tok *t, uint64_t min, uint64_t max,
                       const char *what, uint64_t *v)
{
    if (!all_digits(t->s))
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
static int parse_dur(struct parser *p, int line, int col, const char *text, int64_t min_us, const char *what,
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

enum lim { LIM_HORIZON, LIM_END, LIM_NONE };

/* An instant: a duration after the start, or an ISO instant (anything with
 * a '-' after its first byte) that is not before the start.  LIM_HORIZON:
 * it must be before the horizon; LIM_END: before the end of the drain. */
static int parse_instant(struct parser *p, int line, const struct tok *t, enum lim lim, int64_t *us)
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
    } else if (parse_dur(p, line, t->col, t->s, 0, "instant", us)) {
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
static int parse_dist(struct parser *p, int line, const struct tok *t, struct dist *out)
{
    const char *s = t->s;
    const char *open = strchr(s, '(');
    memset(out, 0, sizeof *out);
    if (!open) {
        out->kind = DIST_FIXED;
        return parse_dur(p, line, t->col, s, 0, "duration", &out->a_us);
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
    if (parse_dur(p, line, cols[0], args[0], 0, "duration", &out->a_us))
        return -1;
    if (out->kind == DIST_UNIFORM) {
        if (parse_dur(p, line, cols[1], args[1], 0, "duration", &out->b_us))
            return -1;
        if (out->a_us > out->b_us)
            return perr(p, line, t->col, "bad distribution '%s': the lower bound exceeds the upper bound", q(p, s));
    }
    if (out->kind == DIST_EXP && out->a_us == 0)
        return perr(p, line, cols[0], "the mean of '%s' must be greater than 0", q(p, s));
    return 0;
}

/* A rate N/UNIT (20/h) or N/DURATION (3/5m). */
static int parse_rate(struct parser *p, int line, const struct tok *t, uint64_t *count, int64_t *per_us)
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
        if (parse_dur(p, line, ucol, u, 1, "rate period", per_us))
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
static int parse_percent(struct parser *p, int line, const struct tok *t, uint32_t *ppm)
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

/* Column just after the last token: where a missing word would go. */
static int end_col(const struct line *L) { return L->ntok ? L->tok[L->ntok - 1].end : 1; }

/* Tokens i+1 .. i+k must exist (the arguments of the word at i). */
static int need(struct parser *p, const struct line *L, int i, int k, const char *what)
{
    if (i + k < L->ntok)
        return 0;
    return perr(p, L->no, end_col(L), "missing %s after '%s'", what, q(p, L->tok[i].s));
}

/* Trailing clauses of a line, `word value` (or a lone `word` for a flag),
 * in any order, each at most once: one table per kind of line says which
 * words are allowed and how each value is read.  `col` comes back as the
 * column where the clause was seen (0 if absent). */
enum clause_kind { CL_FLAG, CL_INSTANT, CL_DURATION, CL_COUNT };
struct clause {
    const char *word;
    enum clause_kind kind;
    enum lim lim;                  /* CL_INSTANT */
    int64_t min;                   /* CL_DURATION: minimum (0 or 1 us); CL_COUNT: minimum */
    uint64_t max;                  /* CL_COUNT */
    const char *what;              /* how the value is named in messages */
    void *dest;                    /* int64_t * (instant, duration), uint64_t * (count), int * (flag) */
    int col;                       /* out: the column of the word, 0 if absent */
    int vcol;                      /* out: the column of its value */
};

static int parse_clauses(struct parser *p, const struct line *L, int i, struct clause *cl, int n,
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
        case CL_INSTANT: rc = parse_instant(p, no, v, c->lim, c->dest); break;
        case CL_DURATION: rc = parse_dur(p, no, v->col, v->s, c->min, c->what, c->dest); break;
        case CL_COUNT: rc = parse_count(p, no, v, (uint64_t)c->min, c->max, c->what, c->dest); break;
        case CL_FLAG: break;
        }
        if (rc)
            return -1;
        i += 2;
    }
    return 0;
}

static int trailing(struct parser *p, const struct line *L, int i, const char *what)
{
    if (i >= L->ntok)
        return 0;
    return perr(p, L->no, L->tok[i].col, "unexpected '%s' after a complete '%s' directive", q(p, L->tok[i].s), what);
}

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
        if (check_name(p, L->no, v->col, v->s, "scenario"))
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
        return parse_dur(p, L->no, v->col, v->s, 0, "drain", &s->drain_us);
    case HDR_SEED: {
        if (!all_digits(v->s))
            return perr(p, L->no, v->col, "bad seed '%s' (expected an unsigned 64-bit decimal number)", q(p, v->s));
        uint64_t x = 0;
        for (const char *c = v->s; *c; c++) {
            uint64_t dg = (uint64_t)(*c - '0');
            if (x > (UINT64_MAX - dg) / 10)
                return perr(p, L->no, v->col, "seed '%s' does not fit in 64 bits", q(p, v->s));
            x = x * 10 + dg;
        }
        s->seed = x;
        return 0;
    }
    case HDR_RB:
        return parse_dur(p, L->no, v->col, v->s, 1, "recovery-bound", &s->recovery_bound_us);
    }
    return 0;
}

static int pass1_line(struct parser *p, const struct line *L)
{
    if (L->ntok == 0 || L->indented)
        return 0;
    const struct tok *t0 = &L->tok[0];
    int h = t0->quoted ? -1 : hdr_index(t0->s);
    if (h >= 0)
        return parse_header(p, L, h);
    if (!t0->quoted && (body_index(t0->s) >= 0 || is_handler_word(t0->s)))
        return 0;
    return perr(p, L->no, t0->col,
                "unknown directive '%s' (valid: name, start, timezone, horizon, drain, seed, recovery-bound, "
                "workflow, source, publish, crash, stop, fail, trigger, set, variant, expect)",
                q(p, t0->s));
}

/* --- trace files ---------------------------------------------------------------- */

/* Reads a whole regular file of at most max bytes.  Opening with
 * O_NONBLOCK and refusing anything but a regular file keeps a FIFO or a
 * device named by a scenario from blocking or streaming forever. */
static int read_file(const char *path, size_t max, char **out, size_t *len, char *err, size_t errlen)
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
    char *buf;
    size_t len;
    if (read_file(full, SCN_MAX_TRACE_BYTES, &buf, &len, err, sizeof err) != 0)
        return perr(p, line, t->col, "cannot read trace file '%s': %s", q(p, t->s), err);
    s->hash = sim_fnv(s->hash, buf, len);

    size_t pos = 0, cap = 0, llen;
    const char *ls;
    int no = 0, content = 0, rc = 0;
    char lb[SCN_MAX_LINE + 1], m[256];
    while (next_line(buf, len, &pos, &ls, &llen)) {
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
        if (need(p, L, i, 1, "an instant") || parse_instant(p, no, &L->tok[i + 1], LIM_HORIZON, &a->at_us))
            return -1;
        allow_count = 1;
        i += 2;
    } else if (!strcmp(k->s, "burst")) {
        a->kind = ARR_BURST;
        if (need(p, L, i, 3, "'N at T'") ||
            parse_count(p, no, &L->tok[i + 1], 1, SCN_MAX_COUNT, "burst size", &a->count))
            return -1;
        if (strcmp(L->tok[i + 2].s, "at"))
            return perr(p, no, L->tok[i + 2].col, "expected 'at' after the burst size, got '%s'",
                        q(p, L->tok[i + 2].s));
        if (parse_instant(p, no, &L->tok[i + 3], LIM_HORIZON, &a->at_us))
            return -1;
        allow_over = 1;
        i += 4;
    } else if (!strcmp(k->s, "rate") || !strcmp(k->s, "poisson")) {
        a->kind = k->s[0] == 'r' ? ARR_RATE : ARR_POISSON;
        if (need(p, L, i, 1, "a rate like 20/h") || parse_rate(p, no, &L->tok[i + 1], &a->count, &a->per_us))
            return -1;
        allow_range = 1;
        i += 2;
    } else if (!strcmp(k->s, "daily")) {
        a->kind = ARR_DAILY;
        if (need(p, L, i, 3, "'RATE peak HH:MM'") || parse_rate(p, no, &L->tok[i + 1], &a->count, &a->per_us))
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
    if (parse_clauses(p, L, i, cl, n, line_what, "valid here", valid))
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

static int parse_publish(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    if (need(p, L, 0, 1, "a topic name"))
        return -1;
    const struct tok *t = &L->tok[1];
    if (check_name(p, L->no, t->col, t->s, "topic"))
        return -1;
    s->pubs = xgrow(s->pubs, sizeof *s->pubs, &p->cap_pubs, (size_t)s->npubs + 1);
    struct publish_def *pd = &s->pubs[s->npubs++];
    memset(pd, 0, sizeof *pd);
    pd->topic = xstrdup(t->s);
    pd->line = L->no;
    add_ref(p, REF_TOPIC, L->no, t->col, t->s, s->npubs - 1, 0);
    return parse_arrival(p, L, 2, &pd->arr, "publish");
}

static int parse_source(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    if (need(p, L, 0, 1, "a source name"))
        return -1;
    const struct tok *t = &L->tok[1];
    if (check_name(p, L->no, t->col, t->s, "source"))
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

/* --- workflows and handlers ------------------------------------------------------ */

static int close_workflow(struct parser *p)
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

static int parse_workflow(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    if (need(p, L, 0, 1, "a workflow name"))
        return -1;
    const struct tok *t = &L->tok[1];
    if (check_name(p, L->no, t->col, t->s, "workflow"))
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
            parse_count(p, L->no, &L->tok[3], 1, SCN_MAX_INSTANCES, "instance count", &count))
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
    O_SUBSCRIBE, O_FIFO, O_BATCH, O_WINDOW, O_DIGEST, O_CORRELATE, NOPT
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
        if (check_name(p, no, col, name, "topic"))
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
        return parse_dist(p, no, v, &h->runs);
    case O_IDLE:
        return parse_dist(p, no, v, &h->idle);
    case O_PHASES:
        return parse_phases(p, no, v, h->split_pct);
    case O_EVERY:
        h->sched.kind = SCHED_EVERY;
        return parse_dur(p, no, v->col, v->s, 1, "'every'", &h->sched.every_us);
    case O_OFFSET:
        if (parse_dur(p, no, v->col, v->s, 0, "'offset'", &h->sched.offset_us))
            return -1;
        if (h->sched.offset_us >= p->s->horizon_us)
            return perr(p, no, v->col, "offset '%s' is not before the horizon", q(p, v->s));
        return 0;
    case O_CRON:
        /* Parsed when the line is complete: `and` may follow it. */
        h->sched.kind = SCHED_CRON;
        if (!v->quoted && v->s[0] != '@')
            return perr(p, no, v->col, "the cron expression must be quoted, like cron \"0 9 * * 1-5\"");
        return 0;
    case O_TZ:
        if (cal_zone_get(v->s, &h->sched.zone, m, sizeof m) != 0)
            return perr(p, no, v->col, "%s", m);
        return 0;
    case O_AT:
        h->sched.kind = SCHED_AT;
        return parse_instant(p, no, v, LIM_HORIZON, &h->sched.at_us);
    case O_SOURCE:
        return check_name(p, no, v->col, v->s, "source");
    case O_PUBLISH:
        if (check_name(p, no, v->col, v->s, "topic"))
            return -1;
        h->out_topic = topic_index(p, hl->wf, v->s);
        /* An optional count: a topic name never starts with a digit. */
        if (i + 2 < L->ntok && all_digits(L->tok[i + 2].s)) {
            uint64_t nv;
            if (parse_count(p, no, &L->tok[i + 2], 1, SCN_MAX_EMIT, "publish count", &nv))
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
        if (parse_count(p, no, v, 1, SCN_MAX_BATCH, "batch size", &bn))
            return -1;
        h->script.batch_n = (uint32_t)bn;
        if (strcmp(L->tok[i + 2].s, "or"))
            return perr(p, no, L->tok[i + 2].col, "expected 'or' after the batch size, got '%s' (batch N or D)",
                        q(p, L->tok[i + 2].s));
        const struct tok *dt = &L->tok[i + 3];
        return parse_dur(p, no, dt->col, dt->s, 1, "batch wait", &h->script.batch_us);
    }
    case O_WINDOW:
        h->script.kind = SCRIPT_WINDOW;
        return parse_dur(p, no, v->col, v->s, 1, "window", &h->script.window_us);
    case O_DIGEST:
        h->script.kind = SCRIPT_DIGEST;
        if (cal_tod_parse(v->s, &h->script.digest_min, m, sizeof m) != 0)
            return perr(p, no, v->col, "%s", m);
        return 0;
    case O_CORRELATE:
        /* Resolved when the line is complete: `subscribe` may follow it. */
        h->script.kind = SCRIPT_CORRELATE;
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
    if (!seen[O_SOURCE] && !seen[O_PUBLISH])
        return perr(p, no, ncol,
                    "producer '%s' neither polls a source nor publishes ('source NAME' or 'publish TOPIC')",
                    q(p, h->name));
    if (hl->sched_opt == O_CRON) {
        const struct tok *ct = hl->arg[O_CRON];
        char m[256];
        int ecol = 0;
        if (!h->sched.zone)
            h->sched.zone = p->s->zone;
        if (cal_cron_parse(ct->s, seen[O_AND] ? CAL_CRON_AND : 0, &h->sched.cron, m, sizeof m, &ecol) != 0)
            return perr(p, no, ct->col + (ct->quoted ? 1 : 0) + (ecol > 0 ? ecol - 1 : 0), "%s", m);
    }
    if (seen[O_SOURCE]) {
        const struct tok *st = hl->arg[O_SOURCE];
        add_ref(p, REF_SOURCE, no, st->col, st->s, (uint32_t)p->cur_wf, (uint32_t)hl->wf->nhandlers - 1);
        if (!seen[O_PUBLISH])
            h->out_topic = topic_index(p, hl->wf, st->s);
    }
    if (!hl->emit_explicit)
        h->emit_n = seen[O_SOURCE] ? 0 : 1;
    /* The schedule's words as written, for reports. */
    static const int order[] = {O_EVERY, O_OFFSET, O_CRON, O_TZ, O_AT, O_AND};
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
        if (check_name(p, no, tt[k]->col, tt[k]->s, "topic"))
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

/* `producer NAME OPTION...` or `consumer NAME OPTION...` in the open
 * workflow block; options in any order, each at most once. */
static int parse_handler(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    struct workflow_def *wf = &s->wfs[p->cur_wf];
    int no = L->no, producer = !strcmp(L->tok[0].s, "producer");
    const char *kind = producer ? "producer" : "consumer";
    if (need(p, L, 0, 1, "a handler name"))
        return -1;
    const struct tok *nt = &L->tok[1];
    if (check_name(p, no, nt->col, nt->s, "handler"))
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
    for (int i = 2; i < L->ntok;) {
        const struct tok *o = &L->tok[i];
        int k = o->quoted ? -1 : opt_index(o->s), used;
        if (k < 0)
            return perr(p, no, o->col, "unknown option '%s' for %s '%s'", q(p, o->s), kind, q(p, h->name));
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
            parse_count(p, no, &L->tok[2], 0, SCN_MAX_WORKER, "worker number", &idx))
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
    if (parse_clauses(p, L, i, cl, 5, "a crash line", "valid", "at T for D, or random mtbf D mttr D"))
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
         * engine would skip it silently, so the file is rejected instead. */
        for (uint32_t k = 0; k < s->ncrashes; k++) {
            const struct crash_def *o = &s->crashes[k];
            if (o->random || o->target != c.target || o->index != c.index)
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
    if (parse_clauses(p, L, 2, cl, 3, "a stop line", "valid", "at T, grace D, for D"))
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
    if (parse_percent(p, no, pt, &ppm))
        return -1;
    enum run_phase phase = PHASE_MUTATING;
    if (L->ntok > 4) {
        if (strcmp(L->tok[4].s, "in"))
            return trailing(p, L, 4, "fail");
        if (need(p, L, 4, 1, "a phase"))
            return -1;
        const struct tok *ph = &L->tok[5];
        if (!strcmp(ph->s, "preparing"))
            phase = PHASE_PREPARING;
        else if (!strcmp(ph->s, "mutating"))
            phase = PHASE_MUTATING;
        else if (!strcmp(ph->s, "mutated"))
            phase = PHASE_MUTATED;
        else if (!strcmp(ph->s, "emitting"))
            phase = PHASE_EMITTING;
        else
            return perr(p, no, ph->col, "unknown phase '%s' (valid: preparing, mutating, mutated, emitting)",
                        q(p, ph->s));
        if (trailing(p, L, 6, "fail"))
            return -1;
    }
    add_ref(p, REF_FAIL, no, tgt->col, tgt->s, 0, 0);
    struct ref *r = &p->refs[p->nrefs - 1];
    r->cls = cls;
    r->ppm = ppm;
    r->phase = phase;
    r->cls_col = ct->col;
    r->pct_col = pt->col;
    return 0;
}

static int parse_trigger(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    if (need(p, L, 0, 3, "'WORKFLOW at T'"))
        return -1;
    const struct tok *w = &L->tok[1];
    if (check_name(p, L->no, w->col, w->s, "workflow"))
        return -1;
    if (strcmp(L->tok[2].s, "at"))
        return perr(p, L->no, L->tok[2].col, "expected 'at' after the workflow name, got '%s'", q(p, L->tok[2].s));
    struct trigger_def tr = {0};
    tr.line = L->no;
    if (parse_instant(p, L->no, &L->tok[3], LIM_HORIZON, &tr.at_us) || trailing(p, L, 4, "trigger"))
        return -1;
    s->triggers = xgrow(s->triggers, sizeof *s->triggers, &p->cap_triggers, (size_t)s->ntriggers + 1);
    s->triggers[s->ntriggers++] = tr;
    add_ref(p, REF_TRIGGER, L->no, w->col, w->s, s->ntriggers - 1, 0);
    return 0;
}

/* --- policies: set, variant, expect --------------------------------------------------- */

static int variant_index(const struct scenario *s, const char *name)
{
    for (uint16_t i = 0; i < s->nvariants; i++)
        if (!strcmp(s->variants[i].name, name))
            return i;
    return -1;
}

/* Is name a registered policy?  Never, when the caller gave no policy
 * callback.  m receives the callback's message. */
static int is_registered(struct parser *p, const char *name, char *m, size_t n)
{
    return p->ext->policy && p->ext->policy(p->ext->ctx, name, m, n) == SCN_REF_OK;
}

/* Checks key=value against policy base (registered, or a variant's base);
 * the error points at the key when the policy has no such key, else at the
 * value. */
static int check_param(struct parser *p, const char *base, const struct param_kv *kv)
{
    char m[512];
    if (!p->ext->param)
        return 0;
    int rc = p->ext->param(p->ext->ctx, base, kv->key, kv->value, m, sizeof m);
    if (rc == SCN_REF_OK)
        return 0;
    int col = rc == SCN_REF_BAD_VALUE ? kv->col + (int)strlen(kv->key) + 1 : kv->col;
    return perr(p, kv->line, col, "%s", m);
}

/* A name that is neither a registered policy nor a variant: an error, with
 * the valid names, unless policies are not checked. */
static int unknown_policy(struct parser *p, int line, int col, const char *name)
{
    char m[512], vs[256];
    size_t o = 0;
    if (!p->ext->policy)
        return 0;
    m[0] = 0;
    p->ext->policy(p->ext->ctx, name, m, sizeof m);
    vs[0] = 0;
    for (uint16_t i = 0; i < p->s->nvariants && o < sizeof vs; i++)
        o += (size_t)snprintf(vs + o, sizeof vs - o, "%s%s", i ? ", " : "", p->s->variants[i].name);
    if (p->s->nvariants)
        return perr(p, line, col, "%s; variants: %s", m, vs);
    return perr(p, line, col, "%s", m);
}

/* Splits "key=value" (both non-empty) at token t starting at byte off. */
static int split_kv(struct parser *p, int line, const struct tok *t, size_t off, struct param_kv *kv)
{
    const char *s = t->s + off, *eq = strchr(s, '=');
    int col = t->col + (t->quoted ? 1 : 0) + (int)off;
    if (!eq || eq == s)
        return perr(p, line, t->col, "bad setting '%s' (expected KEY=VALUE)", q(p, t->s));
    if (!eq[1])
        return perr(p, line, col + (int)(eq - s) + 1, "missing value in '%s'", q(p, t->s));
    kv->key = xmalloc((size_t)(eq - s) + 1);
    memcpy(kv->key, s, (size_t)(eq - s));
    kv->key[eq - s] = 0;
    kv->value = xstrdup(eq + 1);
    kv->line = line;
    kv->col = col;
    if (++p->nparams > SCN_MAX_PARAMS)
        return perr(p, line, t->col, "too many parameter settings (limit %d in all)", SCN_MAX_PARAMS);
    return 0;
}

static int parse_set(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    if (need(p, L, 0, 1, "POLICY.KEY=VALUE"))
        return -1;
    for (int i = 1; i < L->ntok; i++) {
        const struct tok *t = &L->tok[i];
        const char *dot = strchr(t->s, '.'), *eq = strchr(t->s, '=');
        if (!dot || (eq && eq < dot))
            return perr(p, L->no, t->col, "bad setting '%s' (expected POLICY.KEY=VALUE)", q(p, t->s));
        char pol[SCN_MAX_LINE + 1];
        memcpy(pol, t->s, (size_t)(dot - t->s));
        pol[dot - t->s] = 0;
        if (check_name(p, L->no, t->col, pol, "policy"))
            return -1;
        struct param_kv kv = {0};
        int rc = split_kv(p, L->no, t, (size_t)(dot - t->s) + 1, &kv);
        /* The group of this policy's settings, in first-use order. */
        uint16_t g;
        for (g = 0; g < s->nsets; g++)
            if (!strcmp(s->sets[g].policy, pol))
                break;
        if (g == s->nsets) {
            s->sets = xgrow(s->sets, sizeof *s->sets, &p->cap_sets, (size_t)s->nsets + 1);
            memset(&s->sets[g], 0, sizeof s->sets[g]);
            s->sets[g].policy = xstrdup(pol);
            s->nsets++;
        }
        struct param_set_def *ps = &s->sets[g];
        ps->kv = xrealloc(ps->kv, ((size_t)ps->nkv + 1) * sizeof *ps->kv);
        ps->kv[ps->nkv++] = kv;
        if (rc)
            return -1;
        for (uint16_t k = 0; k + 1 < ps->nkv; k++)
            if (!strcmp(ps->kv[k].key, kv.key))
                return perr(p, L->no, kv.col, "'%s.%s' is set twice (first at line %d)", q(p, pol), q(p, kv.key),
                            ps->kv[k].line);
        char m[512];
        if (is_registered(p, pol, m, sizeof m)) {
            if (check_param(p, pol, &kv))
                return -1;
        } else {
            add_ref(p, REF_SET, L->no, t->col, pol, g, (uint32_t)ps->nkv - 1);
        }
    }
    return 0;
}

static int parse_variant(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    char m[512];
    if (need(p, L, 0, 2, "'NAME POLICY [KEY=VALUE...]'"))
        return -1;
    const struct tok *nt = &L->tok[1], *bt = &L->tok[2];
    if (check_name(p, L->no, nt->col, nt->s, "variant"))
        return -1;
    if (is_registered(p, nt->s, m, sizeof m))
        return perr(p, L->no, nt->col, "variant name '%s' clashes with a registered policy", q(p, nt->s));
    int vi = variant_index(s, nt->s);
    if (vi >= 0)
        return perr(p, L->no, nt->col, "duplicate variant '%s' (first at line %d)", q(p, nt->s), s->variants[vi].line);
    if (p->ext->policy && !is_registered(p, bt->s, m, sizeof m))
        return perr(p, L->no, bt->col, "%s", m);
    if (s->nvariants >= SCN_MAX_VARIANTS)
        return perr(p, L->no, nt->col, "too many variants (limit %d)", SCN_MAX_VARIANTS);
    s->variants = xgrow(s->variants, sizeof *s->variants, &p->cap_variants, (size_t)s->nvariants + 1);
    struct variant_def *v = &s->variants[s->nvariants++];
    memset(v, 0, sizeof *v);
    v->name = xstrdup(nt->s);
    v->base = xstrdup(bt->s);
    v->line = L->no;
    for (int i = 3; i < L->ntok; i++) {
        struct param_kv kv = {0};
        int rc = split_kv(p, L->no, &L->tok[i], 0, &kv);
        v->kv = xrealloc(v->kv, ((size_t)v->nkv + 1) * sizeof *v->kv);
        v->kv[v->nkv++] = kv;
        if (rc)
            return -1;
        for (uint16_t k = 0; k + 1 < v->nkv; k++)
            if (!strcmp(v->kv[k].key, kv.key))
                return perr(p, L->no, kv.col, "parameter '%s' is given twice", q(p, kv.key));
        if (check_param(p, v->base, &kv))
            return -1;
    }
    return 0;
}

/* A number: -?digits(.digits)?. */
static int is_number(const char *s)
{
    if (*s == '-')
        s++;
    if (!is_digit(*s))
        return 0;
    while (is_digit(*s))
        s++;
    if (*s == '.') {
        s++;
        if (!is_digit(*s))
            return 0;
        while (is_digit(*s))
            s++;
    }
    return *s == 0;
}

/* An expect value when the metric's kind is unknown (no metric callback):
 * true or false, a number, else a duration; then nothing after it. */
static int expect_value_by_form(struct parser *p, const struct line *L, int i, struct expect_def *e)
{
    const struct tok *vt = &L->tok[i + 1];
    int64_t us;
    if (!strcmp(vt->s, "true") || !strcmp(vt->s, "false"))
        e->value = vt->s[0] == 't' ? 1.0 : 0.0;
    else if (is_number(vt->s) && strlen(vt->s) <= 40)
        e->value = strtod(vt->s, NULL);
    else if (scn_parse_duration(vt->s, &us, NULL, 0) == 0)
        e->value = (double)us;
    else
        return perr(p, L->no, vt->col, "bad value '%s' for metric '%s' (expected a number, a duration, true or false)",
                    q(p, vt->s), q(p, e->metric));
    return trailing(p, L, i + 2, "expect");
}

static int parse_expect(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    int no = L->no;
    if (need(p, L, 0, 4, "'POLICIES METRIC OP VALUE'"))
        return -1;
    s->expects = xgrow(s->expects, sizeof *s->expects, &p->cap_expects, (size_t)s->nexpects + 1);
    struct expect_def *e = &s->expects[s->nexpects++];
    uint32_t ei = s->nexpects - 1;
    memset(e, 0, sizeof *e);
    e->wf = e->handler = -1;
    e->line = no;
    const struct tok *last = &L->tok[L->ntok - 1];
    size_t tlen = (size_t)(last->end - L->tok[0].col);
    e->text = xmalloc(tlen + 1);
    memcpy(e->text, L->raw + L->tok[0].col - 1, tlen);
    e->text[tlen] = 0;

    /* Policies: '*' or a comma-separated list. */
    const struct tok *pt = &L->tok[1];
    size_t np = 1;
    for (const char *c = pt->s; *c; c++)
        np += *c == ',';
    if (np > SCN_MAX_EXPECT_POLICIES)
        return perr(p, no, pt->col, "too many policies in one expect line (limit %d)", SCN_MAX_EXPECT_POLICIES);
    e->policies = xcalloc(np + 1, sizeof *e->policies);
    if (!strcmp(pt->s, "*")) {
        e->policies[0] = xstrdup("*");
    } else {
        const char *c = pt->s;
        for (size_t k = 0;; k++) {
            const char *comma = strchr(c, ',');
            size_t len = comma ? (size_t)(comma - c) : strlen(c);
            char name[SCN_MAX_LINE + 1];
            memcpy(name, c, len);
            name[len] = 0;
            int col = pt->col + (pt->quoted ? 1 : 0) + (int)(c - pt->s);
            if (!strcmp(name, "*"))
                return perr(p, no, col, "'*' cannot be combined with policy names");
            if (check_name(p, no, col, name, "policy"))
                return -1;
            for (size_t j = 0; j < k; j++)
                if (!strcmp(e->policies[j], name))
                    return perr(p, no, col, "policy '%s' is listed twice", q(p, name));
            e->policies[k] = xstrdup(name);
            char m[512];
            if (!is_registered(p, name, m, sizeof m))
                add_ref(p, REF_EXPECT_POLICY, no, col, name, ei, 0);
            if (!comma)
                break;
            c = comma + 1;
        }
    }

    const struct tok *mt = &L->tok[2];
    struct scenario_metric mi_ = {0, 0, 1}, *mi = &mi_;
    int known = p->ext->metric != NULL;
    if (known) {
        char m[512];
        if (p->ext->metric(p->ext->ctx, mt->s, mi, m, sizeof m) != SCN_REF_OK)
            return perr(p, no, mt->col, "%s", m);
    }
    e->metric = xstrdup(mt->s);
    int i = 3;
    if (!strcmp(L->tok[3].s, "for")) {
        if (need(p, L, 3, 1, "WORKFLOW.HANDLER"))
            return -1;
        const struct tok *ft = &L->tok[4];
        if (!mi->per_handler)
            return perr(p, no, L->tok[3].col, "metric '%s' is not defined per handler", q(p, mt->s));
        const char *dot = strchr(ft->s, '.');
        if (!dot || strchr(dot + 1, '.'))
            return perr(p, no, ft->col, "expected WORKFLOW.HANDLER, got '%s'", q(p, ft->s));
        add_ref(p, REF_EXPECT_FOR, no, ft->col, ft->s, ei, 0);
        i = 5;
    }
    if (need(p, L, i - 1, 2, "'OP VALUE'"))
        return -1;
    const struct tok *ot = &L->tok[i], *vt = &L->tok[i + 1];
    static const char *const ops[] = {"<", "<=", ">", ">=", "==", "!="};
    int op = -1;
    for (int k = 0; k < 6; k++)
        if (!strcmp(ot->s, ops[k]))
            op = k;
    if (op < 0)
        return perr(p, no, ot->col, "bad operator '%s' (valid: <, <=, >, >=, ==, !=)", q(p, ot->s));
    e->op = (enum expect_op)op;
    int is_bool_word = !strcmp(vt->s, "true") || !strcmp(vt->s, "false");
    if (mi->is_bool) {
        if (!is_bool_word)
            return perr(p, no, vt->col, "expected true or false for the boolean metric '%s', got '%s'", q(p, mt->s),
                        q(p, vt->s));
        if (e->op != OP_EQ && e->op != OP_NE)
            return perr(p, no, ot->col, "operator '%s' does not apply to the boolean metric '%s' (use == or !=)",
                        ot->s, q(p, mt->s));
        e->value = vt->s[0] == 't' ? 1.0 : 0.0;
    } else if (!known) {
        return expect_value_by_form(p, L, i, e);
    } else if (is_bool_word) {
        return perr(p, no, vt->col, "'%s' is not a value for metric '%s' (it is not a boolean)", vt->s, q(p, mt->s));
    } else if (mi->is_duration) {
        int64_t us;
        char m[256];
        if (scn_parse_duration(vt->s, &us, m, sizeof m) != 0)
            return perr(p, no, vt->col, "expected a duration for metric '%s': %s", q(p, mt->s), m);
        e->value = (double)us;
    } else {
        if (!is_number(vt->s) || strlen(vt->s) > 40)
            return perr(p, no, vt->col, "bad number '%s' for metric '%s'", q(p, vt->s), q(p, mt->s));
        e->value = strtod(vt->s, NULL);
    }
    return trailing(p, L, i + 2, "expect");
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
        return parse_handler(p, L);
    }
    if (close_workflow(p))
        return -1;
    if (is_h)
        return perr(p, L->no, t0->col, "'%s' outside a workflow (indent handler lines under a 'workflow' line)", t0->s);
    if (hdr_index(t0->s) >= 0)
        return 0;
    switch (body_index(t0->s)) {
    case B_WORKFLOW: return parse_workflow(p, L);
    case B_SOURCE: return parse_source(p, L);
    case B_PUBLISH: return parse_publish(p, L);
    case B_CRASH: return parse_crash(p, L);
    case B_STOP: return parse_stop(p, L);
    case B_FAIL: return parse_fail(p, L);
    case B_TRIGGER: return parse_trigger(p, L);
    case B_SET: return parse_set(p, L);
    case B_VARIANT: return parse_variant(p, L);
    case B_EXPECT: return parse_expect(p, L);
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
        hd->fails[hd->nfails++] = (struct fail_rule){.cls = r->cls, .ppm = r->ppm, .phase = r->phase};
        return 0;
    }
    case REF_TRIGGER:
        wf = find_wf(s, r->name);
        if (wf < 0)
            return perr(p, r->line, r->col, "unknown workflow '%s'", q(p, r->name));
        s->triggers[r->a].wf = (uint16_t)wf;
        return 0;
    case REF_EXPECT_FOR:
        if (resolve_handler(p, r, &wf, &h))
            return -1;
        s->expects[r->a].wf = wf;
        s->expects[r->a].handler = h;
        return 0;
    case REF_EXPECT_POLICY:
        if (variant_index(s, r->name) >= 0)
            return 0;
        return unknown_policy(p, r->line, r->col, r->name);
    case REF_SET: {
        int v = variant_index(s, r->name);
        if (v < 0)
            return unknown_policy(p, r->line, r->col, r->name);
        return check_param(p, s->variants[v].base, &s->sets[r->a].kv[r->b]);
    }
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

/* The mean number of events the scenario publishes before the horizon, over
 * all instances, must stay under SCN_MAX_EXPECTED_EVENTS; the error names
 * the line at which the running sum (in file order) passes the limit. */
static int check_expected_events(struct parser *p)
{
    const struct scenario *s = p->s;
    size_t nh = 0, k = 0;
    for (uint16_t f = 0; f < s->nwfs; f++)
        nh += s->wfs[f].nhandlers;
    size_t n = (size_t)s->npubs + s->nsources + nh + 1;
    struct contrib *c = xcalloc(n, sizeof *c);
    for (uint32_t i = 0; i < s->npubs; i++) {
        const struct topic_ent *te = find_topic(p, s->pubs[i].topic);
        SIM_ASSERT(te != NULL); /* resolved before */
        c[k++] = (struct contrib){s->pubs[i].line, k, arrivals_mean(s, &s->pubs[i].arr) * te->inst};
    }
    for (uint16_t i = 0; i < s->nsources; i++)
        c[k++] = (struct contrib){s->sources[i].line, k, arrivals_mean(s, &s->sources[i].arr) * p->src_inst[i]};
    for (uint16_t f = 0; f < s->nwfs; f++)
        for (uint16_t h = 0; h < s->wfs[f].nhandlers; h++) {
            const struct handler_def *hd = &s->wfs[f].handlers[h];
            if (hd->kind != H_PRODUCER || hd->emit_n == 0)
                continue;
            c[k++] = (struct contrib){hd->line, k,
                                      fires_estimate(p, &hd->sched) * hd->emit_n * (double)s->wfs[f].count};
        }
    qsort(c, k, sizeof *c, cmp_contrib);
    double sum = 0;
    int rc = 0;
    for (size_t i = 0; i < k; i++) {
        sum += c[i].n;
        if (sum > SCN_MAX_EXPECTED_EVENTS) {
            rc = perr(p, c[i].line, 1,
                      "the scenario would publish about %.3g events by this line, over the limit of %.0f "
                      "(mean events before the horizon, all instances)",
                      sum, SCN_MAX_EXPECTED_EVENTS);
            break;
        }
    }
    free(c);
    return rc;
}

static int pass3(struct parser *p)
{
    struct scenario *s = p->s;
    build_topic_table(p);
    for (size_t i = 0; i < p->nrefs; i++)
        if (resolve_ref(p, &p->refs[i]))
            return -1;
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

static int run_passes(struct parser *p, const char *buf, size_t len)
{
    struct scenario *s = p->s;
    size_t pos = 0, llen;
    const char *ls;
    int no;
    if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
        pos = 3; /* a UTF-8 byte order mark */
    size_t start = pos;
    for (no = 1; next_line(buf, len, &pos, &ls, &llen); no++) {
        if (no > SCN_MAX_LINES)
            return perr(p, no, 1, "more than %d lines", SCN_MAX_LINES);
        if (lex_line(p, ls, llen, no, p->L) || pass1_line(p, p->L))
            return -1;
    }
    if (!p->hdr_line[HDR_HORIZON])
        return perr(p, 1, 1, "missing required 'horizon' directive (e.g. 'horizon 3d')");
    if (!s->zone) {
        char m[256];
        if (cal_zone_get("UTC", &s->zone, m, sizeof m) != 0)
            return perr(p, 1, 1, "%s", m);
    }
    pos = start;
    for (no = 1; next_line(buf, len, &pos, &ls, &llen); no++)
        if (lex_line(p, ls, llen, no, p->L) || pass2_line(p, p->L))
            return -1;
    if (close_workflow(p))
        return -1;
    return pass3(p);
}

int scenario_parse_buf_ex(const char *path, const char *buf, size_t len, const struct scenario_refs *refs,
                          struct scenario **out, struct diag *d)
{
    static const struct scenario_refs no_refs = {0};
    memset(d, 0, sizeof *d);
    snprintf(d->file, sizeof d->file, "%s", path);
    *out = NULL;
    if (len > SCN_MAX_FILE_BYTES) {
        snprintf(d->msg, sizeof d->msg, "file is larger than %zu MiB", SCN_MAX_FILE_BYTES >> 20);
        return -1;
    }
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

    int rc = run_passes(p, buf, len);
    for (size_t i = 0; i < p->nrefs; i++)
        free(p->refs[i].name);
    free(p->refs);
    free(p->topics);
    free(p->src_inst);
    free(p->L);
    free(p);
    if (rc) {
        SIM_ASSERT(d->msg[0]);
        scenario_free(s);
        return -1;
    }
    *out = s;
    return 0;
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
    if (read_file(path, SCN_MAX_FILE_BYTES, &buf, &len, err, sizeof err) != 0) {
        memset(d, 0, sizeof *d);
        snprintf(d->file, sizeof d->file, "%s", path);
        snprintf(d->msg, sizeof d->msg, "cannot read the scenario: %s", err);
        return -1;
    }
    int rc = scenario_parse_buf_ex(path, buf, len, refs, out, d);
    free(buf);
    return rc;
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
            free(wf->handlers[h].name);
            free(wf->handlers[h].sched.text);
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
    free(s->path);
    free(s->name);
    free(s);
}
