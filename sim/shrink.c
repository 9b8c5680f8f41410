/* shrink.c: delta debugging of scenario text (see shrink.h).
 *
 * The text is held as lines of words.  A candidate is the current lines
 * with one change (lines marked removed, or one word replaced), rendered
 * back to text and handed to the test; an accepted candidate becomes the
 * current state.  Rendering is canonical: handler lines are indented by
 * two spaces, words are separated by one space, comments are gone.
 *
 * Invariant: every line that is not removed renders, with the others, to
 * a text the test accepted (after the first normalization, which the test
 * must accept too, or nothing is shrunk). */
#include "sim/shrink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/syntax.h"
#include "sim/util.h"

#define SHRINK_MAX_ROUNDS 30
#define SHRINK_PAIR_UNITS 40         /* pairs of top-level units are tried up to this many */

struct sline {
    int no;                        /* line number in the original text */
    int indent;                    /* a handler line of a workflow block */
    int removed, pinned;
    char **tok;
    int ntok;
};

struct shr {
    const struct shrink_opts *o;
    struct shrink_stats *st;
    struct sline *l;
    int n;
    char *buf;                     /* the rendered candidate */
    size_t len, cap;
};

/* --- words ---------------------------------------------------------------------------------- */

/* Splits a line into words as the scenario lexer does (blanks separate,
 * "..." and (...) stay whole, # at a word's start ends the line); the
 * words keep their quotes.  Returns the number of words. */
static int split_words(const char *s, char ***out)
{
    char **tok = NULL;
    size_t cap = 0;
    int n = 0;
    size_t i = 0, len = strlen(s);
    for (;;) {
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i >= len || s[i] == '#')
            break;
        size_t j = i;
        int depth = 0, quoted = s[i] == '"';
        if (quoted) {
            j++;
            while (j < len && s[j] != '"')
                j++;
            if (j < len)
                j++;
        }
        while (j < len && (depth > 0 || (s[j] != ' ' && s[j] != '\t'))) {
            if (s[j] == '(')
                depth++;
            else if (s[j] == ')' && depth > 0)
                depth--;
            j++;
        }
        tok = xgrow(tok, sizeof *tok, &cap, (size_t)n + 1);
        tok[n] = xmalloc(j - i + 1);
        memcpy(tok[n], s + i, j - i);
        tok[n][j - i] = 0;
        n++;
        i = j;
    }
    *out = tok;
    return n;
}

static void free_words(char **tok, int n)
{
    for (int i = 0; i < n; i++)
        free(tok[i]);
    free(tok);
}

void shrink_norm(const char *s, char *out, size_t n)
{
    char **tok;
    int nt = split_words(s, &tok);
    size_t o = 0;
    out[0] = 0;
    for (int i = 0; i < nt && o + 1 < n; i++)
        o += (size_t)snprintf(out + o, n - o, "%s%s", i ? " " : "", tok[i]);
    free_words(tok, nt);
}

/* One line's words joined by single spaces, into b (n bytes). */
static const char *line_text(const struct sline *L, char *b, size_t n)
{
    size_t o = 0;
    b[0] = 0;
    for (int i = 0; i < L->ntok && o + 1 < n; i++)
        o += (size_t)snprintf(b + o, n - o, "%s%s", i ? " " : "", L->tok[i]);
    return b;
}

/* --- rendering and trying ------------------------------------------------------------------- */

static void put(struct shr *s, const char *p, size_t n)
{
    s->buf = xgrow(s->buf, 1, &s->cap, s->len + n + 1);
    memcpy(s->buf + s->len, p, n);
    s->len += n;
    s->buf[s->len] = 0;
}

static void render(struct shr *s)
{
    s->len = 0;
    put(s, "", 0);
    for (int i = 0; i < s->n; i++) {
        const struct sline *L = &s->l[i];
        if (L->removed)
            continue;
        if (L->indent)
            put(s, "  ", 2);
        for (int k = 0; k < L->ntok; k++) {
            if (k)
                put(s, " ", 1);
            put(s, L->tok[k], strlen(L->tok[k]));
        }
        put(s, "\n", 1);
    }
}

/* Renders the current lines and asks the test. */
static int try_now(struct shr *s)
{
    render(s);
    s->st->tried++;
    int ok = s->o->test(s->o->ctx, s->buf, s->len);
    if (ok)
        s->st->accepted++;
    return ok;
}

static void logf_step(struct shr *s, const char *fmt, const char *a, const char *b, int no)
{
    if (!s->o->log)
        return;
    char m[2 * 4200 + 64];
    snprintf(m, sizeof m, fmt, no, a, b);
    s->o->log(s->o->ctx, m);
}

/* --- removing lines (ddmin) ----------------------------------------------------------------- */

/* A unit is a set of lines removed together: [first, first + count). */
struct unit {
    int first, count;
};

/* Marks the lines of the units removed; was[] keeps each line's flag. */
static void mark(struct shr *s, const struct unit *u, int nu, char *was)
{
    for (int i = 0; i < s->n; i++)
        was[i] = (char)s->l[i].removed;
    for (int k = 0; k < nu; k++)
        for (int i = u[k].first; i < u[k].first + u[k].count; i++)
            if (!s->l[i].pinned)
                s->l[i].removed = 1;
}

static void unmark(struct shr *s, const char *was)
{
    for (int i = 0; i < s->n; i++)
        s->l[i].removed = was[i];
}

/* Logs the lines that mark() removed and that were there before. */
static void log_removed(struct shr *s, const char *was)
{
    char t[4200];
    for (int i = 0; i < s->n; i++)
        if (s->l[i].removed && !was[i])
            logf_step(s, "removed line %d: %s%s", line_text(&s->l[i], t, sizeof t), "", s->l[i].no);
}

/* Zeller's ddmin over units, removal only: tries to remove each of n
 * chunks; on success keeps the rest and goes on with fewer chunks, else
 * with finer ones.  Returns 1 if anything was removed. */
static int ddmin(struct shr *s, struct unit *u, int nu)
{
    int n = 2, changed = 0;
    char *was = xmalloc((size_t)s->n + 1);
    while (nu > 0) {
        if (n > nu)
            n = nu;
        int done = 0;
        for (int c = 0; c < n && !done; c++) {
            int lo = nu * c / n, hi = nu * (c + 1) / n;
            if (hi == lo)
                continue;
            mark(s, u + lo, hi - lo, was);
            if (try_now(s)) {
                log_removed(s, was);
                memmove(u + lo, u + hi, (size_t)(nu - hi) * sizeof *u);
                nu -= hi - lo;
                n = n > 2 ? n - 1 : 2;
                done = changed = 1;
            } else {
                unmark(s, was);
            }
        }
        if (done)
            continue;
        if (n >= nu)
            break;
        n = 2 * n < nu ? 2 * n : nu;
    }
    free(was);
    return changed;
}

/* Top-level lines, each with the handler lines under it (level 0), or
 * each handler line alone (level 1); pinned lines are no unit. */
static int units_of(const struct shr *s, int level, struct unit *u)
{
    int nu = 0;
    for (int i = 0; i < s->n; i++) {
        const struct sline *L = &s->l[i];
        if (L->removed || L->pinned || (level == 1 && !L->indent))
            continue;
        if (level == 0 && L->indent)
            continue;
        int count = 1;
        while (level == 0 && i + count < s->n && s->l[i + count].indent)
            count++;
        u[nu++] = (struct unit){i, count};
    }
    return nu;
}

/* Two top-level units that only go together (a workflow and the source
 * it alone polls): each pair, when there are few units left. */
static int remove_pairs(struct shr *s, struct unit *u)
{
    int nu = units_of(s, 0, u), changed = 0;
    if (nu > SHRINK_PAIR_UNITS)
        return 0;
    char *was = xmalloc((size_t)s->n + 1);
    for (int i = 0; i < nu; i++) {
        for (int j = i + 1; j < nu; j++) {
            struct unit two[2] = {u[i], u[j]};
            if (s->l[u[i].first].removed || s->l[u[j].first].removed)
                continue;
            mark(s, two, 2, was);
            if (try_now(s)) {
                log_removed(s, was);
                changed = 1;
                break;
            }
            unmark(s, was);
        }
    }
    free(was);
    return changed;
}

static int remove_lines(struct shr *s)
{
    struct unit *u = xcalloc((size_t)s->n + 1, sizeof *u);
    int changed = 0;
    for (int level = 0; level < 2; level++) {
        int nu = units_of(s, level, u);
        changed |= ddmin(s, u, nu);
    }
    changed |= remove_pairs(s, u);
    free(u);
    return changed;
}

/* --- changing words ------------------------------------------------------------------------------ */

/* Tries line L with word k replaced by rep (NULL: removed, with the next
 * `span - 1` words too); keeps the change if the test accepts it. */
static int try_word(struct shr *s, struct sline *L, int k, int span, const char *rep)
{
    char before[4200], after[4200];
    line_text(L, before, sizeof before);
    char **save = xmalloc((size_t)L->ntok * sizeof *save);
    memcpy(save, L->tok, (size_t)L->ntok * sizeof *save);
    int nsave = L->ntok;
    char *fresh = NULL;
    if (rep) {
        fresh = xstrdup(rep);
        L->tok[k] = fresh;
    } else {
        memmove(L->tok + k, L->tok + k + span, (size_t)(L->ntok - k - span) * sizeof *L->tok);
        L->ntok -= span;
    }
    if (try_now(s)) {
        if (rep) {
            free(save[k]);
        } else {
            for (int i = k; i < k + span; i++)
                free(save[i]);
        }
        free(save);
        logf_step(s, "line %d: %s -> %s", before, line_text(L, after, sizeof after), L->no);
        return 1;
    }
    free(fresh);
    memcpy(L->tok, save, (size_t)nsave * sizeof *save);
    L->ntok = nsave;
    free(save);
    return 0;
}

/* Optional words, from the end: a word with its value ("idle 10ms"),
 * then a word alone ("and", "fifo"). */
static int drop_words(struct shr *s, struct sline *L)
{
    int changed = 0;
    for (int k = L->ntok - 1; k >= 1; k--) {
        if (k >= L->ntok)
            continue;
        if (k + 1 < L->ntok && try_word(s, L, k, 2, NULL)) {
            changed = 1;
            continue;
        }
        changed |= try_word(s, L, k, 1, NULL);
    }
    return changed;
}

/* "uniform(2s,10s)" -> "2s", "exp(300ms)" -> "300ms", "fixed(5s)" -> "5s". */
static int fix_dists(struct shr *s, struct sline *L)
{
    int changed = 0;
    for (int k = 1; k < L->ntok; k++) {
        const char *t = L->tok[k], *open = strchr(t, '(');
        size_t len = strlen(t);
        if (!open || t[len - 1] != ')' || t[0] == '"')
            continue;
        char first[128];
        size_t a = (size_t)(open - t) + 1, b = a;
        while (b < len - 1 && t[b] != ',')
            b++;
        while (a < b && t[a] == ' ')
            a++;
        if (b - a >= sizeof first || b == a)
            continue;
        memcpy(first, t + a, b - a);
        first[b - a] = 0;
        changed |= try_word(s, L, k, 1, first);
    }
    return changed;
}

/* The integer that starts a count, a rate or a percentage ("500", "20/h",
 * "2%"): its length in *digits, or 0 when the word is not one. */
static int leading_count(const char *t, uint64_t *v, size_t *digits)
{
    size_t i = 0;
    uint64_t x = 0;
    while (t[i] >= '0' && t[i] <= '9' && i < 18)
        x = x * 10 + (uint64_t)(t[i++] - '0');
    if (i == 0 || (t[i] && t[i] != '/' && strcmp(t + i, "%") != 0))
        return 0;
    *v = x;
    *digits = i;
    return 1;
}

/* Lowers the count at the start of word k towards 0: 0, 1, then halves. */
static int lower_count(struct shr *s, struct sline *L, int k)
{
    uint64_t v;
    size_t nd;
    if (!leading_count(L->tok[k], &v, &nd))
        return 0;
    int changed = 0;
    uint64_t tries[2] = {0, 1};
    char rep[160];
    for (int i = 0; i < 2 && tries[i] < v; i++) {
        snprintf(rep, sizeof rep, "%llu%s", (unsigned long long)tries[i], L->tok[k] + nd);
        if (try_word(s, L, k, 1, rep))
            return 1;
    }
    while (v > 2) {
        snprintf(rep, sizeof rep, "%llu%s", (unsigned long long)(v / 2), L->tok[k] + nd);
        if (!try_word(s, L, k, 1, rep))
            break;
        v /= 2;
        changed = 1;
    }
    return changed;
}

/* The largest duration of one unit (a multiple of d, h, m, s, ms or us)
 * not above us/2: halving in readable steps (1h30m -> 45m -> 22m -> 11m). */
static int64_t half_round(int64_t us)
{
    static const int64_t units[] = {US_PER_DAY, US_PER_H, US_PER_MIN, US_PER_S, US_PER_MS, 1};
    int64_t h = us / 2;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (units[i] <= h)
            return h / units[i] * units[i];
    return 0;
}

/* Shortens the duration in word k towards 0 (not a schedule's period):
 * 0; else the first of 1us, 1ms, 1s, 1m, 1h, 1d that keeps the failure;
 * then halves in readable steps while the failure stays and the value
 * stays above the last rung that lost it. */
static int shorten(struct shr *s, struct sline *L, int k)
{
    static const int64_t rungs[] = {1, US_PER_MS, US_PER_S, US_PER_MIN, US_PER_H, US_PER_DAY};
    int64_t us, floor_us = 0;
    const char *prev = L->tok[k - 1];
    if (!strcmp(prev, "every") || !strcmp(prev, "mtbf") || strchr(L->tok[k], ':'))
        return 0;
    if (scn_parse_duration(L->tok[k], &us, NULL, 0) != 0 || us <= 0)
        return 0;
    char rep[64];
    if (try_word(s, L, k, 1, "0"))
        return 1;
    int changed = 0;
    for (size_t i = 0; i < sizeof rungs / sizeof rungs[0] && rungs[i] < us / 2; i++) {
        scn_fmt_duration(rungs[i], rep, sizeof rep);
        if (try_word(s, L, k, 1, rep)) {
            us = rungs[i];
            changed = 1;
            break;
        }
        floor_us = rungs[i];
    }
    for (int64_t h = half_round(us); h > floor_us; h = half_round(us)) {
        scn_fmt_duration(h, rep, sizeof rep);
        if (!try_word(s, L, k, 1, rep))
            break;
        us = h;
        changed = 1;
    }
    return changed;
}

static int simplify_line(struct shr *s, struct sline *L)
{
    if (L->removed || L->pinned || L->ntok == 0 || !strcmp(L->tok[0], "expect"))
        return 0;
    int changed = drop_words(s, L);
    changed |= fix_dists(s, L);
    for (int k = 1; k < L->ntok; k++) {
        changed |= lower_count(s, L, k);
        changed |= shorten(s, L, k);
    }
    return changed;
}

/* --- the whole ------------------------------------------------------------------------------------ */

static int is_pinned(const struct shrink_opts *o, const struct sline *L)
{
    if (L->ntok > 0 && !strcmp(L->tok[0], "seed"))
        return 1;
    char t[4200];
    line_text(L, t, sizeof t);
    for (int i = 0; i < o->npins; i++)
        if (!strcmp(o->pins[i], t))
            return 1;
    return 0;
}

/* The lines of text that have words; comments and blank lines are gone. */
static void load(struct shr *s, const char *text, size_t len)
{
    size_t pos = 0, cap = 0;
    int no = 0;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t l = nl ? (size_t)(nl - text - pos) : len - pos;
        no++;
        char *line = xmalloc(l + 1);
        memcpy(line, text + pos, l);
        line[l] = 0;
        if (l && line[l - 1] == '\r')
            line[l - 1] = 0;
        pos += l + (nl ? 1 : 0);
        struct sline L = {.no = no, .indent = line[0] == ' ' || line[0] == '\t'};
        L.ntok = split_words(line, &L.tok);
        free(line);
        if (L.ntok == 0) {
            free(L.tok);
            continue;
        }
        L.pinned = is_pinned(s->o, &L);
        s->l = xgrow(s->l, sizeof *s->l, &cap, (size_t)s->n + 1);
        s->l[s->n++] = L;
    }
}

char *shrink_text(const char *text, size_t len, const struct shrink_opts *o, struct shrink_stats *st,
                  size_t *out_len)
{
    struct shr s = {.o = o, .st = st};
    *st = (struct shrink_stats){0};
    load(&s, text, len);
    st->lines_before = s.n;
    char *out = NULL;
    if (try_now(&s)) {
        int max = o->max_rounds > 0 ? o->max_rounds : SHRINK_MAX_ROUNDS;
        int changed = 1;
        while (changed && st->rounds < max) {
            st->rounds++;
            changed = remove_lines(&s);
            for (int i = 0; i < s.n; i++)
                changed |= simplify_line(&s, &s.l[i]);
        }
        render(&s);
        out = s.buf;
        *out_len = s.len;
        s.buf = NULL;
        for (int i = 0; i < s.n; i++)
            st->lines_after += !s.l[i].removed;
    }
    for (int i = 0; i < s.n; i++)
        free_words(s.l[i].tok, s.l[i].ntok);
    free(s.l);
    free(s.buf);
    return out;
}
