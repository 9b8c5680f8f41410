/* cron.c: cron expressions, times of day and active-hours windows.
 *
 * A cron expression becomes five bitsets; the next fire is found field by
 * field (month, then day, hour, minute: each a find-next-set-bit), never by
 * scanning minutes.  The search runs on wall seconds inside one offset
 * segment of the zone at a time, so DST is handled only where segments meet:
 *
 *   fires of segment [t, end) with offset o (o' the offset before t) =
 *     { w - o : w a matching wall minute, t <= w - o < end }
 *     minus, for fixed-time jobs after a clock set back by less than 3 h,
 *       those with w < t + o' (their first occurrence already fired)
 *     plus, for fixed-time jobs after a clock set forward by less than 3 h,
 *       t itself if a matching wall minute lies in the gap [t + o', t + o).
 *
 * That is cronie's rule (docs/calendar.md says why).  Key invariant: the fire
 * set is a function of (expression, zone) alone, and next and prev both
 * enumerate it with the same predicates, so they are exact inverses. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sim/cal.h"
#include "sim/syntax.h"
#include "sim/tz.h"
#include "sim/util.h"

/* F_SEC is the optional leading seconds field (CAL_CRON_SECONDS); the five
 * standard fields keep their indices. */
enum { F_MIN, F_HOUR, F_DOM, F_MON, F_DOW, F_COUNT, F_SEC = F_COUNT };

static const struct cron_field {
    const char *name;
    int lo, hi; /* values accepted; day-of-week takes 7 for Sunday */
    int span;   /* values '*' covers, and the largest step */
} cron_fields[F_COUNT + 1] = {
    {"minute", 0, 59, 60},   {"hour", 0, 23, 24}, {"day-of-month", 1, 31, 31},
    {"month", 1, 12, 12},    {"day-of-week", 0, 7, 7}, {"second", 0, 59, 60},
};

static const char *const cron_month_names[12] = {"jan", "feb", "mar", "apr", "may", "jun",
                                                 "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const cron_day_names[7] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

static const struct {
    const char *name, *expansion;
} cron_macros[] = {
    {"@yearly", "0 0 1 1 *"},  {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
    {"@weekly", "0 0 * * 0"},  {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
};

#define CRON_NUM_DIGITS_MAX 4 /* longer numbers are out of range in every field */
#define SEG_WALK_MAX 1000000  /* segments crossed by one search: far above any zone's
                                 transitions in 10000 years */

/* ---- parsing ---- */

struct cron_parser {
    const char *expr;
    char *err;
    size_t errlen;
    int *err_col;
    int field; /* index into cron_fields, or -1 outside a field */
};

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int perr(struct cron_parser *ps, const char *at, const char *fmt, ...)
{
    if (ps->err_col)
        *ps->err_col = (int)(at - ps->expr) + 1;
    if (ps->err && ps->errlen) {
        int n = 0;
        if (ps->field >= 0)
            n = snprintf(ps->err, ps->errlen, "cron field '%s': ", cron_fields[ps->field].name);
        if (n >= 0 && (size_t)n < ps->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

static int is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

static int is_alpha(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static int is_space(char ch)
{
    return ch == ' ' || ch == '\t';
}

static int lower(char ch)
{
    return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
}

/* End of the text to quote for a bad value: up to the next '-' or '/' (the
 * element's own end is the list's ','), but at least one character. */
static const char *bad_end(const char *p, const char *end)
{
    const char *q = p < end ? p + 1 : p;
    while (q < end && *q != '-' && *q != '/')
        q++;
    return q;
}

/* Quartz-style syntax that some cron libraries accept: "L", "15W", "5#3",
 * "?".  Named in the error, since their meaning is not cron's. */
static int is_quartz(const char *p, const char *e)
{
    for (const char *q = p; q < e; q++)
        if (*q == '#' || *q == '?')
            return 1;
    if (e > p && (e[-1] == 'L' || e[-1] == 'W' || e[-1] == 'l' || e[-1] == 'w')) {
        const char *q = p;
        while (q < e - 1 && is_digit(*q))
            q++;
        if (q == e - 1 || (e - p == 2 && (p[0] == 'L' || p[0] == 'l')))
            return 1; /* "L", "W", "15W", "5L", "LW" */
    }
    return 0;
}

static int bad_value(struct cron_parser *ps, const char *p, const char *end)
{
    const char *e = bad_end(p, end);
    if (is_quartz(p, e))
        return perr(ps, p, "unsupported syntax '%.*s' (L, W, # and ? are Quartz extensions, not cron)",
                    (int)(e - p), p);
    return perr(ps, p, "invalid value '%.*s'", (int)(e - p), p);
}

/* A number or a name; *was_name tells which. */
static int parse_value(struct cron_parser *ps, const char **pp, const char *end, int *out, int *was_name)
{
    const struct cron_field *fd = &cron_fields[ps->field];
    const char *p = *pp, *q = p;
    *was_name = 0;
    if (q < end && is_digit(*q)) {
        while (q < end && is_digit(*q))
            q++;
        if (q < end && (is_alpha(*q) || *q == '#'))
            return bad_value(ps, p, end);
        int v = 0;
        if (q - p > CRON_NUM_DIGITS_MAX)
            v = INT32_MAX;
        else
            for (const char *r = p; r < q; r++)
                v = v * 10 + (*r - '0');
        if (v < fd->lo || v > fd->hi)
            return perr(ps, p, "value '%.*s' out of range %d-%d", (int)(q - p), p, fd->lo, fd->hi);
        *out = v;
        *pp = q;
        return 0;
    }
    if (q < end && is_alpha(*q)) {
        while (q < end && is_alpha(*q))
            q++;
        if ((q < end && (is_digit(*q) || *q == '#')) || is_quartz(p, q))
            return bad_value(ps, p, end);
        const char *const *names = ps->field == F_MON ? cron_month_names : ps->field == F_DOW ? cron_day_names : NULL;
        int count = ps->field == F_MON ? 12 : 7;
        if (!names)
            return perr(ps, p, "invalid value '%.*s' (names are for months and days of the week only)",
                        (int)(q - p), p);
        if (q - p == 3) {
            for (int k = 0; k < count; k++) {
                if (lower(p[0]) == names[k][0] && lower(p[1]) == names[k][1] && lower(p[2]) == names[k][2]) {
                    *out = ps->field == F_MON ? k + 1 : k;
                    *was_name = 1;
                    *pp = q;
                    return 0;
                }
            }
        }
        if (ps->field == F_MON)
            return perr(ps, p, "unknown month name '%.*s' (use jan-dec or 1-12)", (int)(q - p), p);
        return perr(ps, p, "unknown day name '%.*s' (use sun-sat or 0-7)", (int)(q - p), p);
    }
    return bad_value(ps, p, end);
}

/* One list element: '*', value, or range, with an optional step. */
static int parse_element(struct cron_parser *ps, const char *el, const char *end, uint64_t *bits)
{
    const struct cron_field *fd = &cron_fields[ps->field];
    const char *p = el;
    int lo, hi, step = 1, star = 0, range = 0, was_name;
    if (*p == '*') {
        p++;
        star = 1;
        lo = fd->lo;
        hi = fd->lo + fd->span - 1; /* day-of-week: 0-6 */
    } else {
        if (parse_value(ps, &p, end, &lo, &was_name))
            return -1;
        hi = lo;
        if (p < end && *p == '-') {
            p++;
            if (p == end || *p == '/')
                return perr(ps, p - 1, "missing end of range in '%.*s'", (int)(end - el), el);
            if (parse_value(ps, &p, end, &hi, &was_name))
                return -1;
            /* "fri-sun": Sunday named at the end of a range is 7 ("sun-sun" stays 0) */
            if (ps->field == F_DOW && was_name && hi == 0 && lo > 0)
                hi = 7;
            if (lo > hi)
                return perr(ps, el, "range '%.*s' is reversed (%d is after %d)", (int)(p - el), el, lo, hi);
            range = 1;
        }
    }
    if (p < end && *p == '/') {
        const char *slash = p++;
        if (!star && !range)
            return perr(ps, el,
                        "a step needs a range or '*' before it: '%.*s' (write '%d-%d%.*s' or '*%.*s')",
                        (int)(end - el), el, lo, fd->hi, (int)(end - slash), slash,
                        (int)(end - slash), slash);
        const char *sp = p;
        while (p < end && is_digit(*p))
            p++;
        if (p == sp) {
            if (p == end)
                return perr(ps, slash, "missing step after '/' in '%.*s'", (int)(end - el), el);
            return perr(ps, sp, "invalid step '%.*s'", (int)(end - sp), sp);
        }
        if (p < end)
            return perr(ps, sp, "invalid step '%.*s'", (int)(end - sp), sp);
        step = 0;
        if (p - sp > CRON_NUM_DIGITS_MAX)
            step = INT32_MAX;
        else
            for (const char *r = sp; r < p; r++)
                step = step * 10 + (*r - '0');
        if (step < 1 || step > fd->span)
            return perr(ps, sp, "step '%.*s' out of range 1-%d", (int)(p - sp), sp, fd->span);
    }
    if (p < end)
        return perr(ps, p, "unexpected '%.*s' in '%.*s'", (int)(end - p), p, (int)(end - el), el);
    for (int v = lo; v <= hi; v += step)
        *bits |= UINT64_C(1) << v;
    return 0;
}

static int parse_field(struct cron_parser *ps, const char *s, const char *end, uint64_t *bits)
{
    const char *p = s;
    *bits = 0;
    for (;;) {
        const char *el_end = memchr(p, ',', (size_t)(end - p));
        if (!el_end)
            el_end = end;
        if (el_end == p)
            return perr(ps, p, "empty list element in '%.*s'", (int)(end - s), s);
        if (parse_element(ps, p, el_end, bits))
            return -1;
        if (el_end == end)
            return 0;
        p = el_end + 1;
    }
}

/* With day-of-month and day-of-week combined by AND, days come from
 * day-of-month (the weekdays meet every valid date in some year): some
 * allowed month must have one of them, or the expression never fires. */
static int and_can_fire(const struct cal_cron *c)
{
    for (int m = 1; m <= 12; m++) {
        int dim = m == 2 ? 29 : cal__days_in_month(2001, m);
        if ((c->months >> m & 1) && (c->mdays & (uint32_t)(((UINT64_C(1) << dim) - 1) << 1)))
            return 1;
    }
    return 0;
}

int cal_cron_use_and(struct cal_cron *c)
{
    c->day_or = 0;
    return and_can_fire(c) ? 0 : -1;
}

/* Splits text into fields: at most max of them, their bounds in fs/fe.
 * Returns the count, or -1 after an error (more than max fields). */
static int split_fields(struct cron_parser *ps, const char *text, int max, const char **fs, const char **fe,
                        const char **end)
{
    const char *p = text;
    int n = 0;
    for (;;) {
        while (is_space(*p))
            p++;
        if (!*p)
            break;
        const char *start = p;
        while (*p && !is_space(*p))
            p++;
        if (n == max) {
            if (max == F_COUNT + 1)
                return perr(ps, start,
                            "unexpected extra field '%.*s' (a cron expression with seconds has 6 fields: second "
                            "minute hour day-of-month month day-of-week)",
                            (int)(p - start), start);
            return perr(ps, start,
                        "unexpected extra field '%.*s' (a cron expression has 5 fields: minute hour "
                        "day-of-month month day-of-week)",
                        (int)(p - start), start);
        }
        fs[n] = start;
        fe[n] = p;
        n++;
    }
    *end = p;
    return n;
}

static int cron_parse_fields(struct cron_parser *ps, const char *text, unsigned flags, struct cal_cron *out)
{
    const char *fs[F_COUNT + 1], *fe[F_COUNT + 1], *p = text;
    int secs = (flags & CAL_CRON_SECONDS) != 0, want = secs ? F_COUNT + 1 : F_COUNT;
    int n = split_fields(ps, text, want, fs, fe, &p);
    if (n < 0)
        return -1;
    if (n == 0)
        return perr(ps, text, "empty cron expression");
    if (n < want) {
        if (secs)
            return perr(ps, p,
                        "cron expression has %d field%s, expected 6 (second minute hour day-of-month month "
                        "day-of-week)",
                        n, n == 1 ? "" : "s");
        return perr(ps, p,
                    "cron expression has %d field%s, expected 5 (minute hour day-of-month month "
                    "day-of-week)",
                    n, n == 1 ? "" : "s");
    }
    uint64_t sec_bits = 1; /* five fields: at second 0 */
    if (secs) {
        ps->field = F_SEC;
        if (parse_field(ps, fs[0], fe[0], &sec_bits))
            return -1;
        memmove(fs, fs + 1, F_COUNT * sizeof *fs);
        memmove(fe, fe + 1, F_COUNT * sizeof *fe);
    }
    uint64_t bits[F_COUNT];
    for (int f = 0; f < F_COUNT; f++) {
        ps->field = f;
        if (parse_field(ps, fs[f], fe[f], &bits[f]))
            return -1;
    }
    ps->field = -1;
    memset(out, 0, sizeof *out);
    out->seconds = sec_bits;
    out->minutes = bits[F_MIN];
    out->hours = (uint32_t)bits[F_HOUR];
    out->mdays = (uint32_t)bits[F_DOM];
    out->months = (uint16_t)bits[F_MON];
    out->wdays = (uint8_t)((bits[F_DOW] | bits[F_DOW] >> 7) & 0x7f);
    /* Vixie cron and cronie decide "restricted" by the field's first
     * character, not by its values: "*\/2" counts as '*', "1-31" does not. */
    int dom_star = *fs[F_DOM] == '*', dow_star = *fs[F_DOW] == '*';
    out->day_or = !(flags & CAL_CRON_AND) && !dom_star && !dow_star;
    out->wild = *fs[F_MIN] == '*' || *fs[F_HOUR] == '*';
    if (!out->day_or) {
        if (!and_can_fire(out))
            return perr(ps, fs[F_DOM], "cron expression never fires: day-of-month '%.*s' does not occur in month '%.*s'",
                        (int)(fe[F_DOM] - fs[F_DOM]), fs[F_DOM], (int)(fe[F_MON] - fs[F_MON]), fs[F_MON]);
    }
    return 0;
}

int cal_cron_from_bits(struct cal_cron *out, uint64_t seconds, uint64_t minutes, uint64_t hours, uint64_t mdays,
                       uint64_t months, uint64_t wdays, int day_or, int wild)
{
    memset(out, 0, sizeof *out);
    out->seconds = (seconds & ((UINT64_C(1) << 60) - 1)) ? seconds & ((UINT64_C(1) << 60) - 1) : 1;
    out->minutes = minutes & ((UINT64_C(1) << 60) - 1);
    out->hours = (uint32_t)(hours & ((UINT64_C(1) << 24) - 1));
    out->mdays = (uint32_t)(mdays & (((UINT64_C(1) << 31) - 1) << 1));
    out->months = (uint16_t)(months & (((UINT64_C(1) << 12) - 1) << 1));
    out->wdays = (uint8_t)(wdays & 0x7f);
    out->day_or = (uint8_t)(day_or != 0);
    out->wild = (uint8_t)(wild != 0);
    if (!out->minutes || !out->hours || !out->mdays || !out->months || !out->wdays)
        return -1;
    return out->day_or || and_can_fire(out) ? 0 : -1;
}

int cal_cron_parse(const char *expr, unsigned flags, struct cal_cron *out, char *err, size_t errlen,
                   int *err_col)
{
    SIM_ASSERT(expr && out);
    SIM_ASSERT((flags & ~(unsigned)(CAL_CRON_AND | CAL_CRON_SECONDS)) == 0);
    struct cron_parser ps = {expr, err, errlen, err_col, -1};
    size_t len = strnlen(expr, CAL_CRON_EXPR_MAX + 1);
    if (len > CAL_CRON_EXPR_MAX)
        return perr(&ps, expr + CAL_CRON_EXPR_MAX, "cron expression too long (more than %d characters)",
                    CAL_CRON_EXPR_MAX);
    for (const char *p = expr; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (!(ch >= 0x21 && ch <= 0x7e) && !is_space((char)ch))
            return perr(&ps, p, "invalid character (byte 0x%02x) in cron expression", ch);
    }
    const char *p = expr;
    while (is_space(*p))
        p++;
    if (*p != '@')
        return cron_parse_fields(&ps, expr, flags, out);
    const char *m = p;
    while (*p && !is_space(*p))
        p++;
    size_t mlen = (size_t)(p - m);
    const char *rest = p;
    while (is_space(*rest))
        rest++;
    for (size_t k = 0; k < sizeof cron_macros / sizeof cron_macros[0]; k++) {
        const char *name = cron_macros[k].name;
        if (strlen(name) != mlen)
            continue;
        size_t i = 0;
        while (i < mlen && lower(m[i]) == name[i])
            i++;
        if (i < mlen)
            continue;
        if (*rest) {
            const char *e = rest;
            while (*e && !is_space(*e))
                e++;
            return perr(&ps, rest, "unexpected extra field '%.*s' after '%.*s'", (int)(e - rest), rest,
                        (int)mlen, m);
        }
        struct cron_parser inner = {cron_macros[k].expansion, NULL, 0, NULL, -1};
        int rc = cron_parse_fields(&inner, cron_macros[k].expansion, flags & ~(unsigned)CAL_CRON_SECONDS, out);
        SIM_ASSERT(rc == 0);
        return 0;
    }
    return perr(&ps, m,
                "unknown cron macro '%.*s' (known: @yearly @annually @monthly @weekly @daily @midnight "
                "@hourly)",
                (int)mlen, m);
}

/* ---- matching wall times ---- */

static int ctz64(uint64_t x)
{
    return __builtin_ctzll(x);
}

static int top64(uint64_t x)
{
    return 63 - __builtin_clzll(x);
}

/* Days of month (y, m) that match, as bits 1..31. */
static uint32_t day_mask(const struct cal_cron *c, int64_t y, int m)
{
    int dim = cal__days_in_month(y, m);
    uint32_t valid = (uint32_t)(((UINT64_C(1) << dim) - 1) << 1);
    int wd1 = cal__wday(cal__days_from_civil(y, m, 1));
    /* bit k of r: does weekday (wd1 + k) % 7, the weekday of day k + 1, match */
    uint32_t r = ((uint32_t)c->wdays >> wd1 | (uint32_t)c->wdays << (7 - wd1)) & 0x7f;
    uint32_t wmask = (uint32_t)((uint64_t)r * UINT64_C(0x10204081) << 1); /* repeated every 7 days */
    return (c->day_or ? (c->mdays | wmask) : (c->mdays & wmask)) & valid;
}

int cal_cron_matches_local(const struct cal_cron *c, const struct cal_tm *tm)
{
    if (!(c->minutes >> tm->min & 1) || !(c->hours >> tm->hour & 1) || !(c->months >> tm->mon & 1))
        return 0;
    int dom = c->mdays >> tm->mday & 1, dow = c->wdays >> tm->wday & 1;
    return c->day_or ? dom || dow : dom && dow;
}

#define W_NONE_HI INT64_MAX
#define W_NONE_LO INT64_MIN

/* Smallest matching wall minute >= w, or W_NONE_HI after year 10000. */
static int64_t first_match(const struct cal_cron *c, int64_t w)
{
    int64_t m0 = cal__floor_div(w, 60) * 60;
    if (m0 < w)
        m0 += 60;
    int64_t days = cal__floor_div(m0, CAL__S_PER_DAY);
    int sod = (int)(m0 - days * CAL__S_PER_DAY);
    int h = sod / 3600, mi = sod / 60 % 60, mo, d;
    int64_t y;
    cal__civil_from_days(days, &y, &mo, &d);
    for (;;) {
        if (y > CAL_YEAR_MAX + 1)
            return W_NONE_HI;
        if (!(c->months >> mo & 1)) {
            uint32_t later = (uint32_t)c->months >> (mo + 1);
            if (later) {
                mo += 1 + ctz64(later);
            } else {
                y++;
                mo = ctz64(c->months);
            }
            d = 1, h = 0, mi = 0;
            continue;
        }
        uint32_t dm = d <= 31 ? day_mask(c, y, mo) >> d : 0;
        if (!dm) {
            if (++mo > 12)
                y++, mo = 1;
            d = 1, h = 0, mi = 0;
            continue;
        }
        int d2 = d + ctz64(dm);
        if (d2 != d)
            d = d2, h = 0, mi = 0;
        uint32_t hm = c->hours >> h;
        if (!hm) {
            d++, h = 0, mi = 0;
            continue;
        }
        int h2 = h + ctz64(hm);
        if (h2 != h)
            h = h2, mi = 0;
        uint64_t mm = c->minutes >> mi;
        if (!mm) {
            mi = 0;
            if (++h == 24)
                d++, h = 0;
            continue;
        }
        mi += ctz64(mm);
        return cal__days_from_civil(y, mo, d) * CAL__S_PER_DAY + h * 3600 + mi * 60;
    }
}

/* Largest matching wall minute <= w, or W_NONE_LO before year 0. */
static int64_t last_match(const struct cal_cron *c, int64_t w)
{
    int64_t m0 = cal__floor_div(w, 60) * 60;
    int64_t days = cal__floor_div(m0, CAL__S_PER_DAY);
    int sod = (int)(m0 - days * CAL__S_PER_DAY);
    int h = sod / 3600, mi = sod / 60 % 60, mo, d;
    int64_t y;
    cal__civil_from_days(days, &y, &mo, &d);
    for (;;) {
        if (y < CAL_YEAR_MIN - 1)
            return W_NONE_LO;
        if (!(c->months >> mo & 1)) {
            uint32_t earlier = (uint32_t)c->months & ((1u << mo) - 1);
            if (earlier) {
                mo = top64(earlier);
            } else {
                y--;
                mo = top64(c->months);
            }
            d = cal__days_in_month(y, mo), h = 23, mi = 59;
            continue;
        }
        uint32_t dm = d >= 1 ? day_mask(c, y, mo) & (uint32_t)((UINT64_C(2) << d) - 1) : 0;
        if (!dm) {
            if (--mo < 1)
                y--, mo = 12;
            d = cal__days_in_month(y, mo), h = 23, mi = 59;
            continue;
        }
        int d2 = top64(dm);
        if (d2 != d)
            d = d2, h = 23, mi = 59;
        uint32_t hm = c->hours & (uint32_t)((UINT64_C(2) << h) - 1);
        if (!hm) {
            d--, h = 23, mi = 59;
            continue;
        }
        int h2 = top64(hm);
        if (h2 != h)
            h = h2, mi = 59;
        uint64_t mm = c->minutes & ((UINT64_C(2) << mi) - 1);
        if (!mm) {
            mi = 59;
            if (--h < 0)
                d--, h = 23;
            continue;
        }
        mi = top64(mm);
        return cal__days_from_civil(y, mo, d) * CAL__S_PER_DAY + h * 3600 + mi * 60;
    }
}

/* Remembers one search: w = first_match(from) (or last_match(from)), which
 * stays the answer for any x between from and w. */
struct match_memo {
    int valid;
    int64_t from, w;
};

static int64_t memo_first(const struct cal_cron *c, struct match_memo *mm, int64_t x)
{
    if (!(mm->valid && mm->from <= x && x <= mm->w)) {
        mm->from = x;
        mm->w = first_match(c, x);
        mm->valid = 1;
    }
    return mm->w;
}

static int64_t memo_last(const struct cal_cron *c, struct match_memo *mm, int64_t x)
{
    if (!(mm->valid && mm->w <= x && x <= mm->from)) {
        mm->from = x;
        mm->w = last_match(c, x);
        mm->valid = 1;
    }
    return mm->w;
}

/* Does cronie's DST rule apply at the start of segment s for this job?
 * Returns +1 (a gap: jumped forward), -1 (an overlap: set back) or 0. */
static int dst_jump(const struct cal_cron *c, const struct cal__seg *s)
{
    if (c->wild || s->start == INT64_MIN)
        return 0;
    int32_t delta = s->off - s->prev_off;
    if (delta == 0 || delta <= -CAL__DST_JUMP_MAX_S || delta >= CAL__DST_JUMP_MAX_S)
        return 0;
    return delta > 0 ? 1 : -1;
}

/* Every field must allow some value, or the bit searches have nothing to
 * find; cal_cron_parse guarantees it, hand-built values must too. */
static void cron_check(const struct cal_cron *c)
{
    SIM_ASSERT(c->minutes != 0 && c->hours != 0);
    SIM_ASSERT(c->mdays != 0 && c->months != 0 && c->wdays != 0);
}

/* The gap a forward jump at the start of segment s skipped, as wall
 * seconds [s->start + prev_off, s->start + off), under rule: 1 when the
 * rule treats it as a DST gap (cronie: fixed-time jobs only, below 3 h;
 * the wall rules: any forward jump below 3 h). */
static int rule_gap(const struct cal_cron *c, const struct cal__seg *s, enum cal_dst_rule rule)
{
    if (rule == CAL_DST_CRONIE)
        return dst_jump(c, s) > 0;
    if (rule == CAL_DST_ABSOLUTE || rule == CAL_DST_QUARTZ || s->start == INT64_MIN)
        return 0;
    int32_t delta = s->off - s->prev_off;
    return delta > 0 && delta < CAL__DST_JUMP_MAX_S;
}

/* Whether the repeated wall times of a backward jump at the start of s fire
 * only before it: cronie for fixed-time jobs, the wall rules for every job
 * (wall time never goes back); never under the absolute rule. */
static int rule_once(const struct cal_cron *c, const struct cal__seg *s, enum cal_dst_rule rule)
{
    if (rule == CAL_DST_CRONIE)
        return dst_jump(c, s) < 0;
    if (rule == CAL_DST_ABSOLUTE || rule == CAL_DST_QUARTZ || s->start == INT64_MIN)
        return 0;
    return s->off < s->prev_off;
}

/* A fire in the gap of segment s (w: the first matching wall minute from
 * the gap's start, which lies in the gap).  Returns the instant to answer,
 * or INT64_MIN to go on searching from *lo (wall seconds). */
static int64_t gap_fire(const struct cal_zone *z, const struct cal__seg *s, int64_t w, enum cal_dst_rule rule,
                        int64_t *lo)
{
    switch (rule) {
    case CAL_DST_CRONIE:
        /* a fixed-time job whose time fell in the gap fires at the jump */
        return s->start <= CAL_MAX_S ? s->start : INT64_MAX;
    case CAL_DST_WALL_GAP_NEXT_DAY:
        /* the time does not exist: the search starts over the next day */
        *lo = (cal__floor_div(w, CAL__S_PER_DAY) + 1) * CAL__S_PER_DAY;
        return INT64_MIN;
    case CAL_DST_WALL_NEG_BACK: {
        struct cal__seg before;
        cal__seg_at(z, s->start - 1, &before);
        if (before.isdst)
            return w - s->off; /* read with the offset after the gap: an instant before it */
        return INT64_MIN;
    }
    default:
        return INT64_MIN; /* the time does not exist: it is skipped */
    }
}

/* Under CAL_DST_QUARTZ, the wall seconds of segment s that are answered in
 * it: below s->end + the next segment's offset when the clock is set back
 * at s->end (the repeated wall times belong to the later segment), else
 * below s->end + s->off. */
static int64_t quartz_wall_end(const struct cal_zone *z, const struct cal__seg *s)
{
    if (s->end == INT64_MAX)
        return INT64_MAX;
    struct cal__seg n;
    cal__seg_at(z, s->end, &n);
    return s->end + (n.off < s->off ? n.off : s->off);
}

/* The minute-level fires: second 0 of each matching local minute, under
 * the DST rule.  A seconds field spreads each of them over its seconds. */
static int64_t minute_next(const struct cal_cron *c, const struct cal_zone *z, int64_t after_s,
                           enum cal_dst_rule rule)
{
    cron_check(c);
    if (after_s >= CAL_MAX_S)
        return INT64_MAX;
    if (after_s < CAL_MIN_S - 1)
        after_s = CAL_MIN_S - 1;
    int64_t u0 = after_s + 1; /* first candidate instant */
    struct cal__seg s;
    struct match_memo mm = {0, 0, 0};
    int64_t carry = INT64_MIN; /* CAL_DST_QUARTZ: wall time searched so far (it never goes back) */
    cal__seg_at(z, u0, &s);
    for (int guard = 0;; guard++) {
        SIM_ASSERT(guard < SEG_WALK_MAX);
        int64_t lo = (u0 > s.start ? u0 : s.start) + s.off;
        if (lo < carry)
            lo = carry;
        if (rule_gap(c, &s, rule) && s.start >= u0) {
            int64_t w = memo_first(c, &mm, s.start + s.prev_off);
            if (w == W_NONE_HI)
                return INT64_MAX;
            if (w < s.start + s.off) {
                int64_t r = gap_fire(z, &s, w, rule, &lo);
                if (r != INT64_MIN)
                    return r;
            }
        }
        if (rule_once(c, &s, rule) && lo < s.start + s.prev_off)
            lo = s.start + s.prev_off; /* the repeated wall times fired before the change */
        int64_t w = memo_first(c, &mm, lo);
        if (w == W_NONE_HI)
            return INT64_MAX;
        if (rule == CAL_DST_QUARTZ) {
            if (w < quartz_wall_end(z, &s)) {
                int64_t r = w - s.off;
                return r <= CAL_MAX_S ? r : INT64_MAX;
            }
            carry = lo; /* no match below w: the next segment goes on from here */
        } else if (s.end == INT64_MAX || w - s.off < s.end) {
            int64_t r = w - s.off;
            return r <= CAL_MAX_S ? r : INT64_MAX;
        }
        cal__seg_at(z, s.end, &s);
    }
}

static int64_t minute_prev(const struct cal_cron *c, const struct cal_zone *z, int64_t before_s)
{
    cron_check(c);
    if (before_s <= CAL_MIN_S)
        return INT64_MIN;
    if (before_s > CAL_MAX_S + 1)
        before_s = CAL_MAX_S + 1;
    int64_t u1 = before_s - 1; /* last candidate instant */
    struct cal__seg s;
    struct match_memo mm = {0, 0, 0};
    cal__seg_at(z, u1, &s);
    for (int guard = 0;; guard++) {
        SIM_ASSERT(guard < SEG_WALK_MAX);
        int jump = dst_jump(c, &s);
        int64_t hi = u1 < s.end ? u1 : s.end - 1;
        int64_t w = memo_last(c, &mm, hi + s.off);
        if (w == W_NONE_LO)
            return INT64_MIN;
        int64_t lo = s.start == INT64_MIN ? INT64_MIN : s.start + (jump < 0 ? s.prev_off : s.off);
        if (w >= lo) {
            int64_t r = w - s.off;
            return r >= CAL_MIN_S ? r : INT64_MIN;
        }
        if (jump > 0) {
            int64_t g = memo_last(c, &mm, s.start + s.off - 1);
            if (g != W_NONE_LO && g >= s.start + s.prev_off)
                return s.start >= CAL_MIN_S ? s.start : INT64_MIN;
        }
        u1 = s.start - 1;
        cal__seg_at(z, u1, &s);
    }
}

/* Whether the expression fires at seconds other than 0 (a 6-field one). */
static int has_seconds(const struct cal_cron *c) { return c->seconds > 1; }

/* With seconds, the fires are F + s for every minute-level fire F and every
 * second s of the field; minute-level fires are at least 60 s apart, so the
 * fires after x are in the minute of the last minute-level fire <= x, or
 * else in that of the first one after x. */
int64_t cal_cron_next_rule(const struct cal_cron *c, const struct cal_zone *z, int64_t after_s,
                           enum cal_dst_rule rule)
{
    if (!has_seconds(c))
        return minute_next(c, z, after_s, rule);
    int64_t f = after_s >= CAL_MAX_S ? INT64_MIN : minute_prev(c, z, after_s + 1);
    if (f != INT64_MIN && after_s - f < 59) {
        for (int64_t s = after_s - f + 1; s < 60; s++)
            if (c->seconds >> s & 1)
                return f + s <= CAL_MAX_S ? f + s : INT64_MAX;
    }
    f = minute_next(c, z, after_s, rule);
    if (f == INT64_MAX)
        return INT64_MAX;
    int64_t r = f + ctz64(c->seconds);
    return r <= CAL_MAX_S ? r : INT64_MAX;
}

int64_t cal_cron_next(const struct cal_cron *c, const struct cal_zone *z, int64_t after_s)
{
    return cal_cron_next_rule(c, z, after_s, CAL_DST_CRONIE);
}

int64_t cal_cron_prev(const struct cal_cron *c, const struct cal_zone *z, int64_t before_s)
{
    if (!has_seconds(c))
        return minute_prev(c, z, before_s);
    int64_t f = minute_prev(c, z, before_s);
    while (f != INT64_MIN) {
        /* seconds of f's minute before before_s, the latest first */
        int64_t top = before_s - 1 - f < 59 ? before_s - 1 - f : 59;
        for (int64_t s = top; s >= 0; s--)
            if (c->seconds >> s & 1)
                return f + s >= CAL_MIN_S ? f + s : INT64_MIN;
        f = minute_prev(c, z, f);
    }
    return INT64_MIN;
}

size_t cal_cron_fires(const struct cal_cron *c, const struct cal_zone *z, int64_t from_s, int64_t to_s,
                      int64_t *out, size_t max)
{
    SIM_ASSERT(out || max == 0);
    size_t n = 0;
    int64_t t = from_s;
    while (t < to_s) {
        t = cal_cron_next(c, z, t);
        if (t == INT64_MAX || t > to_s)
            break;
        if (n < max)
            out[n] = t;
        n++;
    }
    return n;
}

/* ---- times of day and windows ---- */

static int tod_err(char *err, size_t errlen, const char *fmt, const char *a, const char *s)
{
    if (err && errlen)
        snprintf(err, errlen, fmt, a, s);
    return -1;
}

int cal_tod_parse(const char *s, int *min_of_day, char *err, size_t errlen)
{
    size_t len = strlen(s);
    if (len != 5 || !is_digit(s[0]) || !is_digit(s[1]) || s[2] != ':' || !is_digit(s[3]) || !is_digit(s[4])) {
        char q[SCN_QUOTE_MAX];
        scn_escape(q, sizeof q, s);
        if (err && errlen)
            snprintf(err, errlen, "invalid time of day '%s': expected HH:MM, 00:00 to 23:59", q);
        return -1;
    }
    int h = (s[0] - '0') * 10 + (s[1] - '0'), m = (s[3] - '0') * 10 + (s[4] - '0');
    if (h > 23)
        return tod_err(err, errlen, "hour '%.2s' out of range 00-23 in '%s'", s, s);
    if (m > 59)
        return tod_err(err, errlen, "minute '%.2s' out of range 00-59 in '%s'", s + 3, s);
    *min_of_day = h * 60 + m;
    return 0;
}

int64_t cal_tod_next(int min_of_day, const struct cal_zone *z, int64_t after_s)
{
    SIM_ASSERT(min_of_day >= 0 && min_of_day < 1440);
    /* "M H * * *": a fixed-time job, so the DST rule is cron's */
    struct cal_cron c = {
        .minutes = UINT64_C(1) << (min_of_day % 60),
        .hours = UINT32_C(1) << (min_of_day / 60),
        .mdays = UINT32_C(0xfffffffe),
        .months = 0x1ffe,
        .wdays = 0x7f,
        .day_or = 0,
        .wild = 0,
    };
    return cal_cron_next(&c, z, after_s);
}

static int window_has(const struct cal_window *w, int64_t sod)
{
    int64_t st = w->start_min * 60, en = w->end_min * 60;
    if (st == en)
        return 1;
    if (st < en)
        return sod >= st && sod < en;
    return sod >= st || sod < en;
}

static int64_t wall_sod(int64_t wall)
{
    return wall - cal__floor_div(wall, CAL__S_PER_DAY) * CAL__S_PER_DAY;
}

static void window_check(const struct cal_window *w)
{
    SIM_ASSERT(w && w->zone);
    SIM_ASSERT(w->start_min >= 0 && w->start_min < 1440);
    SIM_ASSERT(w->end_min >= 0 && w->end_min < 1440);
}

int cal_window_contains(const struct cal_window *w, int64_t utc_s)
{
    window_check(w);
    if (w->start_min == w->end_min)
        return 1;
    if (utc_s < CAL_MIN_S)
        utc_s = CAL_MIN_S; /* saturated, as in cal_local */
    if (utc_s > CAL_MAX_S)
        utc_s = CAL_MAX_S;
    struct cal__seg s;
    cal__seg_at(w->zone, utc_s, &s);
    return window_has(w, wall_sod(utc_s + s.off));
}

int64_t cal_window_next_open(const struct cal_window *w, int64_t utc_s)
{
    if (cal_window_contains(w, utc_s))
        return utc_s;
    if (utc_s >= CAL_MAX_S)
        return INT64_MAX;
    if (utc_s < CAL_MIN_S)
        utc_s = CAL_MIN_S;
    /* The window opens only where the wall clock reaches start_min or jumps
     * into the window at a transition: walk the offset segments. */
    struct cal__seg s;
    cal__seg_at(w->zone, utc_s, &s);
    int64_t from = utc_s;
    for (int guard = 0;; guard++) {
        SIM_ASSERT(guard < SEG_WALK_MAX);
        int64_t lo = from > s.start ? from : s.start;
        int64_t wl = lo + s.off;
        int64_t sod = wall_sod(wl);
        if (window_has(w, sod))
            return lo;
        int64_t open = wl - sod + w->start_min * 60;
        if (open < wl)
            open += CAL__S_PER_DAY;
        if (s.end == INT64_MAX || open - s.off < s.end) {
            int64_t r = open - s.off;
            return r <= CAL_MAX_S ? r : INT64_MAX;
        }
        from = s.end;
        cal__seg_at(w->zone, s.end, &s);
    }
}
