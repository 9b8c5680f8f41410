/* syntax.c: durations and quoting in the scenario syntax.
 *
 * Durations are integers with units, largest first and each at most once
 * (1h30m, not 30m1h nor 1.5h), or the day-clock form [Nd]HH:MM[:SS]; a value
 * out of range is rejected, never clamped or wrapped. */
#include "sim/syntax.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sim/util.h"

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* --- quoting ------------------------------------------------------------------ */

/* Length of the valid UTF-8 sequence at s (s[0] >= 0x80), or 0 if invalid.
 * Overlong forms and surrogates are invalid.  Stops at a NUL (never reads
 * past the terminator: a NUL fails the continuation test first). */
static int utf8_seq(const unsigned char *s)
{
    unsigned c = s[0];
    if (c >= 0xc2 && c <= 0xdf)
        return (s[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80 ? 4 : 0;
    }
    return 0;
}

void scn_escape(char *dst, size_t n, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t lim = n < SCN_QUOTE_MAX ? n : SCN_QUOTE_MAX, o = 0;
    while (*u) {
        char piece[8];
        size_t plen, used;
        if (*u >= 0x20 && *u < 0x7f) {
            piece[0] = (char)*u;
            plen = used = 1;
        } else if (*u >= 0x80 && utf8_seq(u) > 0) {
            used = plen = (size_t)utf8_seq(u);
            memcpy(piece, u, plen);
        } else {
            snprintf(piece, sizeof piece, "\\x%02x", *u);
            plen = 4;
            used = 1;
        }
        if (o + plen + 4 > lim) {
            if (o + 4 <= n) {
                memcpy(dst + o, "...", 3);
                o += 3;
            }
            break;
        }
        memcpy(dst + o, piece, plen);
        o += plen;
        u += used;
    }
    dst[o] = 0;
}

/* --- durations ---------------------------------------------------------------- */

/* Units, largest first: a duration lists each at most once, in this order. */
static const struct {
    const char *name;
    int64_t us;
} dur_units[] = {
    {"d", US_PER_DAY}, {"h", US_PER_H}, {"m", US_PER_MIN}, {"s", US_PER_S}, {"ms", US_PER_MS}, {"us", 1},
};
#define NUNITS ((int)(sizeof dur_units / sizeof dur_units[0]))

static int unit_index(const char *u, size_t len)
{
    for (int i = 0; i < NUNITS; i++)
        if (strlen(dur_units[i].name) == len && strncmp(dur_units[i].name, u, len) == 0)
            return i;
    return -1;
}

int64_t scn_unit_us(const char *u, size_t len)
{
    int k = unit_index(u, len);
    return k < 0 ? 0 : dur_units[k].us;
}

int scn_msg(char *msg, size_t n, const char *fmt, ...)
{
    if (msg && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int scn_read_digits(const char **c, int maxd, uint64_t *v)
{
    int nd = 0;
    *v = 0;
    while (is_digit(**c) && nd < maxd) {
        *v = *v * 10 + (uint64_t)(**c - '0');
        (*c)++;
        nd++;
    }
    return nd;
}

/* The day-clock form: [Nd]H[H]:MM[:SS], an offset of N days plus a clock
 * reading; each clock field within its range (24:30 is rejected). */
static int parse_clock(const char *s, const char *e, int64_t *us, char *msg, size_t n)
{
    const char *c = s;
    uint64_t days = 0, h, m, sec = 0;
    const char *dpos = strchr(s, 'd');
    if (dpos) {
        if (scn_read_digits(&c, 12, &days) == 0 || c != dpos)
            goto bad;
        c = dpos + 1;
    }
    int hd = scn_read_digits(&c, 3, &h);
    if (hd < 1 || hd > 2 || *c != ':')
        goto bad;
    c++;
    if (scn_read_digits(&c, 3, &m) != 2)
        goto bad;
    if (*c == ':') {
        c++;
        if (scn_read_digits(&c, 3, &sec) != 2)
            goto bad;
    }
    if (*c)
        goto bad;
    if (h > 23)
        return scn_msg(msg, n, "hour out of range 0-23 in '%s'", e);
    if (m > 59)
        return scn_msg(msg, n, "minute out of range 0-59 in '%s'", e);
    if (sec > 59)
        return scn_msg(msg, n, "second out of range 0-59 in '%s'", e);
    if (days > (uint64_t)(INT64_MAX / US_PER_DAY) - 1)
        return scn_msg(msg, n, "duration '%s' is too large", e);
    *us = (int64_t)days * US_PER_DAY + (int64_t)h * US_PER_H + (int64_t)m * US_PER_MIN + (int64_t)sec * US_PER_S;
    return 0;
bad:
    return scn_msg(msg, n, "bad duration '%s' (the clock form is [Nd]HH:MM[:SS], like 1d09:00:30)", e);
}

int scn_parse_duration(const char *s, int64_t *us, char *msg, size_t n)
{
    char e[SCN_QUOTE_MAX];
    scn_escape(e, sizeof e, s);
    if (!*s)
        return scn_msg(msg, n, "empty duration");
    if (s[0] == '-')
        return scn_msg(msg, n, "negative duration '%s'", e);
    if (s[0] == '+')
        return scn_msg(msg, n, "unexpected sign in duration '%s'", e);
    if (strchr(s, ':'))
        return parse_clock(s, e, us, msg, n);
    if (strcmp(s, "0") == 0) {
        *us = 0;
        return 0;
    }
    int64_t total = 0;
    int last = -1;
    const char *c = s;
    while (*c) {
        if (!is_digit(*c)) {
            if (*c == '.')
                return scn_msg(msg, n, "decimal durations are not supported in '%s' (write 1h30m, not 1.5h)", e);
            return scn_msg(msg, n, "bad duration '%s' (expected a number and a unit, like 90s or 1h30m)", e);
        }
        uint64_t v = 0;
        while (is_digit(*c)) {
            if (v > (UINT64_MAX - 9) / 10)
                return scn_msg(msg, n, "duration '%s' is too large", e);
            v = v * 10 + (uint64_t)(*c - '0');
            c++;
        }
        if (*c == '.' || *c == ',')
            return scn_msg(msg, n, "decimal durations are not supported in '%s' (write 1h30m, not 1.5h)", e);
        const char *u = c;
        while (is_alpha(*c))
            c++;
        size_t ulen = (size_t)(c - u);
        if (ulen == 0) {
            if (!*c)
                return scn_msg(msg, n, "missing unit in '%s'", e);
            return scn_msg(msg, n, "bad duration '%s' (expected a number and a unit, like 90s or 1h30m)", e);
        }
        int k = unit_index(u, ulen);
        if (k < 0) {
            char ue[SCN_QUOTE_MAX];
            snprintf(ue, sizeof ue, "%.*s", (int)(ulen < 32 ? ulen : 32), u);
            return scn_msg(msg, n, "unknown unit '%s' in '%s' (valid: us, ms, s, m, h, d)", ue, e);
        }
        if (k <= last)
            return scn_msg(msg, n, "units out of order in '%s' (largest first, each at most once)", e);
        last = k;
        if (v > (uint64_t)(INT64_MAX / dur_units[k].us))
            return scn_msg(msg, n, "duration '%s' is too large", e);
        int64_t add = (int64_t)v * dur_units[k].us;
        if (total > INT64_MAX - add)
            return scn_msg(msg, n, "duration '%s' is too large", e);
        total += add;
    }
    *us = total;
    return 0;
}

void scn_fmt_duration(int64_t us, char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = 0;
    if (us <= 0) {
        snprintf(buf, n, us == 0 ? "0s" : "-");
        return;
    }
    for (int i = 0; i < NUNITS && o < n; i++) {
        int64_t q = us / dur_units[i].us;
        if (q) {
            o += (size_t)snprintf(buf + o, n - o, "%lld%s", (long long)q, dur_units[i].name);
            us -= q * dur_units[i].us;
        }
    }
}
