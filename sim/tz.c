/* tz.c: time zones read from TZif files, proleptic Gregorian date
 * arithmetic, and parsing and printing of instants.
 *
 * A loaded zone is a table of transitions (UTC instant -> new UTC offset)
 * plus, for TZif version 2 and later, the POSIX TZ rule of the file's footer
 * ("CET-1CEST,M3.5.0,M10.5.0/3") that governs every instant after the last
 * transition.  At load time the rule's transitions up to TZ_GEN_END_YEAR are
 * appended to the table, so that lookups in the years a simulation uses are
 * one binary search; beyond that the rule is evaluated on the fly.
 * Key invariant: the table is strictly ascending and every entry changes the
 * offset or the DST flag, so every segment between two entries is non-empty
 * and has one offset.  Zones are immutable after loading, which lets cron and
 * window code hold plain const pointers.
 *
 * The process environment's TZ and the C library's localtime are never used:
 * they are global state and slow. */
#include "sim/tz.h"

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

#define TZ_DIR_DEFAULT "/usr/share/zoneinfo"
#define TZ_PATH_MAX 4096
#define TZ_FILE_MAX (1 << 20)  /* bytes; real TZif files are under 10 KiB */
#define TZ_TRANS_MAX 50000     /* transitions in a file; real ones have < 2000 */
#define TZ_TYPES_MAX 256       /* RFC 8536's own limit */
#define TZ_FOOTER_MAX 128      /* bytes of POSIX TZ string */
#define TZ_OFF_MAX (26 * 3600) /* |UTC offset|; real ones stay within 25 h */
#define TZ_RULE_TIME_MAX (167 * 3600) /* RFC 8536 extension to POSIX rule times */
#define TZ_GEN_END_YEAR 2100   /* rule transitions precomputed up to this year */
#define TZ_INSTANT_MAX 64      /* longest instant text accepted */

/* One date rule of a POSIX TZ string: "Jn" (1..365, 29 February never
 * counted), "n" (0..365, counting it) or "Mm.w.d" (weekday d of week w of
 * month m, w = 5 meaning the last), at time_s local seconds after midnight. */
struct tz_rule_date {
    char kind; /* 'J', 'N' or 'M' */
    int n, mon, week, wday;
    int32_t time_s;
};

struct cal_zone {
    char name[CAL_ZONE_NAME_MAX + 1];
    size_t n;       /* entries in t, off, isdst */
    int64_t *t;     /* transition instants, strictly ascending */
    int32_t *off;   /* UTC offset from t[i] on */
    uint8_t *isdst; /* DST flag from t[i] on */
    int32_t off0;   /* offset before t[0] (or everywhere if n == 0 and no rule) */
    uint8_t isdst0;
    int has_rule;   /* instants >= t[n-1] (all, if n == 0) follow the rule */
    int32_t std_off, dst_off;
    struct tz_rule_date r_start, r_end; /* to DST (in standard time), back (in DST) */
    int32_t min_off, max_off;
};

static const struct cal_zone tz_utc = {.name = "UTC"};

static struct cal_zone *tz_cache[CAL_ZONE_CACHE_MAX];
static size_t tz_ncache;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* s escaped into q (SCN_QUOTE_MAX bytes) for quoting in a message. */
static const char *esc(char *q, const char *s)
{
    scn_escape(q, SCN_QUOTE_MAX, s);
    return q;
}

/* ---- civil dates ---- */

int64_t cal__floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0)))
        q--;
    return q;
}

int cal__is_leap(int64_t year)
{
    return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

static const uint16_t tz_days_before[13] = {0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};

int cal__days_in_month(int64_t year, int mon)
{
    static const uint8_t dim[13] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    SIM_ASSERT(mon >= 1 && mon <= 12);
    return mon == 2 && cal__is_leap(year) ? 29 : dim[mon];
}

/* Days from 0001-01-01 to 1970-01-01. */
#define TZ_EPOCH_ORDINAL INT64_C(719162)

int64_t cal__days_from_civil(int64_t year, int mon, int mday)
{
    SIM_ASSERT(mon >= 1 && mon <= 12);
    /* whole years before `year` since 0001-01-01, then the months and days of
     * this one; floor division keeps it right for years before 1 */
    int64_t y1 = year - 1;
    int64_t days = y1 * 365 + cal__floor_div(y1, 4) - cal__floor_div(y1, 100) + cal__floor_div(y1, 400);
    days += tz_days_before[mon] + (mon > 2 && cal__is_leap(year)) + (mday - 1);
    return days - TZ_EPOCH_ORDINAL;
}

void cal__civil_from_days(int64_t days, int64_t *year, int *mon, int *mday)
{
    /* Peel off 400-year cycles (146097 days), then centuries, 4-year blocks
     * and years; the last century of a cycle and the last year of a block
     * are one day longer, hence the caps at 3. */
    int64_t d = days + TZ_EPOCH_ORDINAL;
    int64_t q400 = cal__floor_div(d, 146097);
    d -= q400 * 146097;
    int64_t q100 = d / 36524;
    if (q100 > 3)
        q100 = 3;
    d -= q100 * 36524;
    int64_t q4 = d / 1461;
    d -= q4 * 1461;
    int64_t q1 = d / 365;
    if (q1 > 3)
        q1 = 3;
    d -= q1 * 365;
    int64_t y = 1 + 400 * q400 + 100 * q100 + 4 * q4 + q1;
    int leap = cal__is_leap(y);
    int m = 12;
    while (m > 1 && d < tz_days_before[m] + (m > 2 && leap))
        m--;
    *year = y;
    *mon = m;
    *mday = (int)(d - tz_days_before[m] - (m > 2 && leap)) + 1;
}

int cal__wday(int64_t days)
{
    /* 1970-01-01 was a Thursday */
    return (int)((days % 7 + 7 + 4) % 7);
}

/* ---- POSIX TZ rules ---- */

/* Wall seconds (local time counted like UTC) of a rule date in a year. */
static int64_t rule_wall(const struct tz_rule_date *r, int64_t year)
{
    int64_t day;
    if (r->kind == 'J') {
        day = cal__days_from_civil(year, 1, 1) + r->n - 1;
        if (cal__is_leap(year) && r->n >= 60)
            day++;
    } else if (r->kind == 'N') {
        day = cal__days_from_civil(year, 1, 1) + r->n;
    } else {
        int64_t first = cal__days_from_civil(year, r->mon, 1);
        int mday = 1 + (r->wday - cal__wday(first) + 7) % 7 + 7 * (r->week - 1);
        int dim = cal__days_in_month(year, r->mon);
        while (mday > dim)
            mday -= 7;
        day = first + mday - 1;
    }
    return day * CAL__S_PER_DAY + r->time_s;
}

struct tz_trans {
    int64_t t;
    int32_t off;
    uint8_t isdst;
};

/* The rule's two transitions of a year, as UTC instants: the change to DST
 * happens at a time given in standard time, the change back in DST. */
static void rule_year(const struct cal_zone *z, int64_t year, struct tz_trans out[2])
{
    out[0] = (struct tz_trans){rule_wall(&z->r_start, year) - z->std_off, z->dst_off, 1};
    out[1] = (struct tz_trans){rule_wall(&z->r_end, year) - z->dst_off, z->std_off, 0};
}

/* Stable insertion sort by instant: for equal instants the later entry (in
 * year order) wins, which makes all-year DST rules ("EST5EDT,0/0,J365/25")
 * come out as DST. */
static void trans_sort(struct tz_trans *e, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        struct tz_trans x = e[i];
        size_t j = i;
        while (j > 0 && e[j - 1].t > x.t) {
            e[j] = e[j - 1];
            j--;
        }
        e[j] = x;
    }
}

static void rule_seg(const struct cal_zone *z, int64_t u, struct cal__seg *s)
{
    int64_t y;
    int mon, mday;
    cal__civil_from_days(cal__floor_div(u, CAL__S_PER_DAY), &y, &mon, &mday);
    /* Rule times may lie up to 167 h outside their year, so the years around
     * u's are all computed: y-2's transitions are surely before u and y+1's
     * second one surely after. */
    struct tz_trans e[8];
    for (int k = 0; k < 4; k++)
        rule_year(z, y - 2 + k, &e[2 * k]);
    trans_sort(e, 8);
    int i = 7;
    while (i > 0 && e[i].t > u)
        i--;
    SIM_ASSERT(e[i].t <= u && i < 7);
    s->start = e[i].t;
    s->end = e[i + 1].t;
    s->off = e[i].off;
    s->isdst = e[i].isdst;
    int k = i;
    while (k > 0 && e[k].t == e[i].t)
        k--;
    s->prev_off = e[k].t < e[i].t ? e[k].off : (e[i].off == z->std_off ? z->dst_off : z->std_off);
    if (z->n > 0 && s->start < z->t[z->n - 1]) {
        /* only when the last table entry is not one of the rule's own */
        s->start = z->t[z->n - 1];
        s->prev_off = z->n >= 2 ? z->off[z->n - 2] : z->off0;
    }
}

void cal__seg_at(const struct cal_zone *z, int64_t u, struct cal__seg *s)
{
    if (z->has_rule && (z->n == 0 || u >= z->t[z->n - 1])) {
        rule_seg(z, u, s);
        return;
    }
    /* i = number of transitions <= u */
    size_t lo = 0, hi = z->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (z->t[mid] <= u)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t i = lo;
    s->start = i ? z->t[i - 1] : INT64_MIN;
    s->end = i < z->n ? z->t[i] : INT64_MAX;
    s->off = i ? z->off[i - 1] : z->off0;
    s->isdst = i ? z->isdst[i - 1] : z->isdst0;
    s->prev_off = i >= 2 ? z->off[i - 2] : z->off0;
}

void cal__off_range(const struct cal_zone *z, int32_t *min_off, int32_t *max_off)
{
    *min_off = z->min_off;
    *max_off = z->max_off;
}

/* ---- POSIX TZ string of the TZif footer ---- */

static int tzs_name(const char **pp)
{
    const char *p = *pp;
    if (*p == '<') {
        p++;
        while (*p && *p != '>') {
            if (!(('A' <= *p && *p <= 'Z') || ('a' <= *p && *p <= 'z') || ('0' <= *p && *p <= '9') ||
                  *p == '+' || *p == '-'))
                return -1;
            p++;
        }
        if (*p != '>' || p - *pp < 2)
            return -1;
        *pp = p + 1;
        return 0;
    }
    while (('A' <= *p && *p <= 'Z') || ('a' <= *p && *p <= 'z'))
        p++;
    if (p == *pp)
        return -1;
    *pp = p;
    return 0;
}

/* [+-]hh[:mm[:ss]] with hh <= max_h; returns seconds. */
static int tzs_time(const char **pp, int max_h, int32_t *out)
{
    const char *p = *pp;
    int sign = 1;
    if (*p == '+' || *p == '-')
        sign = *p++ == '-' ? -1 : 1;
    int32_t v[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        if (k > 0) {
            if (*p != ':')
                break;
            p++;
        }
        int digits = 0;
        int32_t x = 0;
        while ('0' <= *p && *p <= '9' && digits < 3) {
            x = x * 10 + (*p++ - '0');
            digits++;
        }
        if (digits == 0 || ('0' <= *p && *p <= '9'))
            return -1;
        if (k > 0 && x > 59)
            return -1;
        v[k] = x;
    }
    if (v[0] > max_h)
        return -1;
    *out = sign * (v[0] * 3600 + v[1] * 60 + v[2]);
    *pp = p;
    return 0;
}

static int tzs_num(const char **pp, int lo, int hi, int *out)
{
    const char *p = *pp;
    int x = 0, digits = 0;
    while ('0' <= *p && *p <= '9' && digits < 4) {
        x = x * 10 + (*p++ - '0');
        digits++;
    }
    if (digits == 0 || x < lo || x > hi)
        return -1;
    *out = x;
    *pp = p;
    return 0;
}

static int tzs_date(const char **pp, struct tz_rule_date *r)
{
    const char *p = *pp;
    memset(r, 0, sizeof *r);
    if (*p == 'J') {
        p++;
        r->kind = 'J';
        if (tzs_num(&p, 1, 365, &r->n))
            return -1;
    } else if (*p == 'M') {
        p++;
        r->kind = 'M';
        if (tzs_num(&p, 1, 12, &r->mon) || *p++ != '.' || tzs_num(&p, 1, 5, &r->week) || *p++ != '.' ||
            tzs_num(&p, 0, 6, &r->wday))
            return -1;
    } else {
        r->kind = 'N';
        if (tzs_num(&p, 0, 365, &r->n))
            return -1;
    }
    r->time_s = 2 * 3600;
    if (*p == '/') {
        p++;
        if (tzs_time(&p, TZ_RULE_TIME_MAX / 3600, &r->time_s))
            return -1;
    }
    *pp = p;
    return 0;
}

/* Parses the footer.  Returns 0 (fields set in z; *has_std tells whether a
 * standard offset was given at all) or -1 if malformed. */
static int tzs_parse(const char *s, struct cal_zone *z, int *has_std)
{
    const char *p = s;
    *has_std = 0;
    z->has_rule = 0;
    if (!*p)
        return 0;
    int32_t std, dst;
    if (tzs_name(&p) || tzs_time(&p, 24, &std))
        return -1;
    z->std_off = -std; /* POSIX counts west of Greenwich as positive */
    *has_std = 1;
    if (!*p)
        return 0;
    if (tzs_name(&p))
        return -1;
    z->dst_off = z->std_off + 3600;
    if (*p && *p != ',') {
        if (tzs_time(&p, 24, &dst))
            return -1;
        z->dst_off = -dst;
    }
    if (*p != ',')
        return *p ? -1 : 0; /* DST named without rules: POSIX leaves them to the
                               implementation; the transition table alone is used */
    p++;
    if (tzs_date(&p, &z->r_start) || *p++ != ',' || tzs_date(&p, &z->r_end) || *p)
        return -1;
    z->has_rule = 1;
    return 0;
}

/* ---- TZif ---- */

struct tzif_hdr {
    char version;
    uint32_t isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt;
};

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p)
{
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

static int tzif_hdr(const unsigned char *p, size_t len, struct tzif_hdr *h)
{
    if (len < 44 || memcmp(p, "TZif", 4) != 0)
        return -1;
    h->version = (char)p[4];
    h->isutcnt = be32(p + 20);
    h->isstdcnt = be32(p + 24);
    h->leapcnt = be32(p + 28);
    h->timecnt = be32(p + 32);
    h->typecnt = be32(p + 36);
    h->charcnt = be32(p + 40);
    return 0;
}

/* Bytes of the data block after a header; 0 if the counts are absurd. */
static size_t tzif_block_len(const struct tzif_hdr *h, size_t tsize)
{
    if (h->timecnt > TZ_TRANS_MAX || h->typecnt > TZ_TYPES_MAX || h->charcnt > 4096 ||
        h->leapcnt > 4096 || h->isstdcnt > TZ_TYPES_MAX || h->isutcnt > TZ_TYPES_MAX)
        return 0;
    return h->timecnt * tsize + h->timecnt + h->typecnt * 6 + h->charcnt + h->leapcnt * (tsize + 4) +
           h->isstdcnt + h->isutcnt;
}

static void zone_free(struct cal_zone *z)
{
    if (!z)
        return;
    free(z->t);
    free(z->off);
    free(z->isdst);
    free(z);
}

static void zone_push(struct cal_zone *z, size_t *cap, int64_t t, int32_t off, uint8_t isdst)
{
    int32_t prev_off = z->n ? z->off[z->n - 1] : z->off0;
    uint8_t prev_dst = z->n ? z->isdst[z->n - 1] : z->isdst0;
    if (z->n && t <= z->t[z->n - 1]) {
        /* same instant as the last entry (all-year DST rules): the later wins */
        SIM_ASSERT(t == z->t[z->n - 1]);
        z->n--;
        prev_off = z->n ? z->off[z->n - 1] : z->off0;
        prev_dst = z->n ? z->isdst[z->n - 1] : z->isdst0;
    }
    if (off == prev_off && isdst == prev_dst)
        return; /* only the abbreviation changed: no segment boundary */
    if (z->n == *cap) {
        size_t c = *cap;
        z->t = xgrow(z->t, sizeof *z->t, &c, z->n + 1);
        c = *cap;
        z->off = xgrow(z->off, sizeof *z->off, &c, z->n + 1);
        c = *cap;
        z->isdst = xgrow(z->isdst, sizeof *z->isdst, &c, z->n + 1);
        *cap = c;
    }
    z->t[z->n] = t;
    z->off[z->n] = off;
    z->isdst[z->n] = isdst;
    z->n++;
}

/* The data block of a TZif image that tzif_parse reads: the version 2+
 * block (64-bit times) when there is one, else the version 1 block. */
struct tzif_data {
    struct tzif_hdr h;             /* the counts of that block */
    const unsigned char *data;     /* its first byte */
    size_t tsize;                  /* bytes per transition time: 4 or 8 */
    char footer[TZ_FOOTER_MAX + 1]; /* the POSIX TZ footer; "" for version 1 */
};

/* Finds the data block and the footer of buf.  Returns 0 or -1 with why. */
static int tzif_locate(const unsigned char *buf, size_t len, struct tzif_data *d, const char **why)
{
    if (tzif_hdr(buf, len, &d->h)) {
        *why = "not a TZif file";
        return -1;
    }
    size_t blen = tzif_block_len(&d->h, 4);
    d->data = buf + 44;
    d->tsize = 4;
    d->footer[0] = '\0';
    if (!blen || 44 + blen > len) {
        *why = "truncated or oversized version 1 data";
        return -1;
    }
    if (d->h.version < '2')
        return 0;
    size_t off2 = 44 + blen;
    if (tzif_hdr(buf + off2, len - off2, &d->h)) {
        *why = "missing version 2 header";
        return -1;
    }
    blen = tzif_block_len(&d->h, 8);
    d->data = buf + off2 + 44;
    d->tsize = 8;
    if (!blen || off2 + 44 + blen > len) {
        *why = "truncated or oversized version 2 data";
        return -1;
    }
    const unsigned char *f = d->data + blen, *end = buf + len;
    if (f >= end || *f != '\n') {
        *why = "missing footer";
        return -1;
    }
    const unsigned char *nl = memchr(f + 1, '\n', (size_t)(end - f - 1));
    if (!nl || (size_t)(nl - f - 1) > TZ_FOOTER_MAX) {
        *why = "malformed footer";
        return -1;
    }
    memcpy(d->footer, f + 1, (size_t)(nl - f - 1));
    d->footer[nl - f - 1] = '\0';
    return 0;
}

/* Reads the local time types at `types` into type_off/type_dst and z's
 * offset range.  Returns 0 or -1 with why. */
static int tzif_types(const struct tzif_hdr *h, const unsigned char *types, struct cal_zone *z, int32_t *type_off,
                      uint8_t *type_dst, const char **why)
{
    z->min_off = INT32_MAX;
    z->max_off = INT32_MIN;
    for (uint32_t k = 0; k < h->typecnt; k++) {
        int32_t o = (int32_t)be32(types + 6 * k);
        if (o < -TZ_OFF_MAX || o > TZ_OFF_MAX || types[6 * k + 4] > 1 || types[6 * k + 5] >= h->charcnt) {
            *why = "bad local time type";
            return -1;
        }
        type_off[k] = o;
        type_dst[k] = types[6 * k + 4];
        if (o < z->min_off)
            z->min_off = o;
        if (o > z->max_off)
            z->max_off = o;
    }
    return 0;
}

/* Reads the POSIX TZ footer into z's rule, and widens z's offset range by
 * its offsets.  timecnt: transitions in the table.  Returns 0 or -1 with why. */
static int tzif_footer(const char *footer, uint32_t timecnt, struct cal_zone *z, const char **why)
{
    int has_std;
    if (tzs_parse(footer, z, &has_std)) {
        *why = "malformed POSIX TZ footer";
        return -1;
    }
    if (!has_std)
        return 0;
    if (z->std_off < -TZ_OFF_MAX || z->std_off > TZ_OFF_MAX ||
        (z->has_rule && (z->dst_off < -TZ_OFF_MAX || z->dst_off > TZ_OFF_MAX))) {
        *why = "footer offset out of range";
        return -1;
    }
    if (timecnt == 0 && !z->has_rule) {
        z->off0 = z->std_off; /* RFC 8536: the footer then rules all time */
        z->isdst0 = 0;
    }
    int32_t offs[2] = {z->std_off, z->has_rule ? z->dst_off : z->std_off};
    for (int k = 0; k < 2; k++) {
        if (offs[k] < z->min_off)
            z->min_off = offs[k];
        if (offs[k] > z->max_off)
            z->max_off = offs[k];
    }
    return 0;
}

/* Appends the rule's transitions after the table's last, in order, up to
 * TZ_GEN_END_YEAR (z has a rule and a non-empty table). */
static void tzif_extend(struct cal_zone *z, size_t *cap)
{
    int64_t y0, first_y;
    int mon, mday;
    cal__civil_from_days(cal__floor_div(z->t[z->n - 1], CAL__S_PER_DAY), &y0, &mon, &mday);
    /* A table that ends before year 1 (a crafted file) gets the rule from
     * year 0 on: earlier instants are never looked up (cal_local saturates). */
    first_y = y0 - 1 < CAL_YEAR_MIN - 1 ? CAL_YEAR_MIN - 1 : y0 - 1;
    if (first_y >= TZ_GEN_END_YEAR)
        return;
    size_t ne = (size_t)(TZ_GEN_END_YEAR - first_y + 1) * 2;
    struct tz_trans *e = xmalloc(ne * sizeof *e);
    for (size_t k = 0; k < ne / 2; k++)
        rule_year(z, first_y + (int64_t)k, &e[2 * k]);
    trans_sort(e, ne);
    int64_t table_end = z->t[z->n - 1];
    for (size_t k = 0; k < ne; k++)
        if (e[k].t > table_end)
            zone_push(z, cap, e[k].t, e[k].off, e[k].isdst);
    free(e);
}

/* Builds z from a TZif image.  Returns 0 or -1 with a reason in why. */
static int tzif_parse(const unsigned char *buf, size_t len, struct cal_zone *z, const char **why)
{
    struct tzif_data d;
    if (tzif_locate(buf, len, &d, why))
        return -1;
    const struct tzif_hdr *h = &d.h;
    if (h->leapcnt) {
        *why = "it has leap seconds (use the zone without the 'right/' prefix)";
        return -1;
    }
    if (h->typecnt == 0 || (h->isstdcnt && h->isstdcnt != h->typecnt) ||
        (h->isutcnt && h->isutcnt != h->typecnt)) {
        *why = "bad counts";
        return -1;
    }
    const unsigned char *times = d.data, *idx = d.data + h->timecnt * d.tsize, *types = idx + h->timecnt;
    int32_t type_off[TZ_TYPES_MAX];
    uint8_t type_dst[TZ_TYPES_MAX];
    if (tzif_types(h, types, z, type_off, type_dst, why))
        return -1;
    z->off0 = type_off[0];
    z->isdst0 = type_dst[0];
    size_t cap = 0;
    int64_t last = INT64_MIN;
    for (uint32_t k = 0; k < h->timecnt; k++) {
        int64_t t = d.tsize == 8 ? be64(times + 8 * k) : (int64_t)(int32_t)be32(times + 4 * k);
        if ((k > 0 && t <= last) || idx[k] >= h->typecnt) {
            *why = "transitions out of order or with a bad type";
            return -1;
        }
        last = t;
        zone_push(z, &cap, t, type_off[idx[k]], type_dst[idx[k]]);
    }
    if (tzif_footer(d.footer, h->timecnt, z, why))
        return -1;
    if (z->has_rule && z->n > 0)
        tzif_extend(z, &cap);
    return 0;
}

/* ---- the zone cache ---- */

static int name_ok(const char *name)
{
    size_t len = strlen(name);
    if (len == 0 || len > CAL_ZONE_NAME_MAX || name[0] == '/')
        return 0;
    const char *comp = name;
    for (const char *p = name;; p++) {
        char ch = *p;
        if (ch == '/' || ch == '\0') {
            size_t cl = (size_t)(p - comp);
            if (cl == 0 || comp[0] == '.')
                return 0; /* empty, ".", "..", and hidden files */
            if (ch == '\0')
                return 1;
            comp = p + 1;
            continue;
        }
        if (!(('A' <= ch && ch <= 'Z') || ('a' <= ch && ch <= 'z') || ('0' <= ch && ch <= '9') || ch == '_' ||
              ch == '+' || ch == '-' || ch == '.'))
            return 0;
    }
}

int cal__zone_from_tzif(const unsigned char *buf, size_t len, const char *name, struct cal_zone **out,
                        const char **why)
{
    SIM_ASSERT(strlen(name) <= CAL_ZONE_NAME_MAX);
    struct cal_zone *z = xcalloc(1, sizeof *z);
    memcpy(z->name, name, strlen(name) + 1);
    if (tzif_parse(buf, len, z, why)) {
        zone_free(z);
        return -1;
    }
    *out = z;
    return 0;
}

void cal__zone_free(struct cal_zone *z)
{
    zone_free(z);
}

static int zone_load(const char *name, struct cal_zone **out, char *err, size_t errlen)
{
    const char *dir = getenv("TZDIR");
    if (!dir || !*dir)
        dir = TZ_DIR_DEFAULT;
    char path[TZ_PATH_MAX];
    int pn = snprintf(path, sizeof path, "%s/%s", dir, name);
    if (pn < 0 || (size_t)pn >= sizeof path)
        return errf(err, errlen, "time zone path too long for '%s'", name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return errf(err, errlen, "unknown time zone '%s'", name);
        return errf(err, errlen, "cannot read time zone '%s': %s: %s", name, path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return errf(err, errlen, "unknown time zone '%s' (not a time zone file)", name);
    }
    if (st.st_size > TZ_FILE_MAX) {
        close(fd);
        return errf(err, errlen, "time zone file for '%s' is too large (%lld bytes, limit %d)", name,
                    (long long)st.st_size, TZ_FILE_MAX);
    }
    size_t len = (size_t)st.st_size, got = 0;
    unsigned char *buf = xmalloc(len + 1);
    while (got < len) {
        ssize_t r = read(fd, buf + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got != len) {
        free(buf);
        return errf(err, errlen, "cannot read time zone '%s': %s: short read", name, path);
    }
    const char *why = NULL;
    int rc = cal__zone_from_tzif(buf, len, name, out, &why);
    free(buf);
    if (rc) {
        if (strcmp(why, "not a TZif file") == 0)
            return errf(err, errlen, "unknown time zone '%s' (not a TZif file)", name);
        return errf(err, errlen, "time zone '%s': bad TZif file %s: %s", name, path, why);
    }
    return 0;
}

int cal_zone_get(const char *name, const struct cal_zone **out, char *err, size_t errlen)
{
    SIM_ASSERT(name && out);
    if (strcmp(name, "UTC") == 0) {
        *out = &tz_utc;
        return 0;
    }
    if (!name_ok(name)) {
        if (strlen(name) > CAL_ZONE_NAME_MAX)
            return errf(err, errlen, "time zone name too long (%zu characters, limit %d)", strlen(name),
                        CAL_ZONE_NAME_MAX);
        char q[SCN_QUOTE_MAX];
        return errf(err, errlen, "invalid time zone name '%s'", esc(q, name));
    }
    for (size_t i = 0; i < tz_ncache; i++) {
        if (strcmp(tz_cache[i]->name, name) == 0) {
            *out = tz_cache[i];
            return 0;
        }
    }
    if (tz_ncache == CAL_ZONE_CACHE_MAX)
        return errf(err, errlen, "too many time zones (limit %d) when loading '%s'", CAL_ZONE_CACHE_MAX,
                    name);
    struct cal_zone *z = NULL;
    if (zone_load(name, &z, err, errlen))
        return -1;
    tz_cache[tz_ncache++] = z;
    *out = z;
    return 0;
}

void cal_zone_cache_free(void)
{
    for (size_t i = 0; i < tz_ncache; i++)
        zone_free(tz_cache[i]);
    tz_ncache = 0;
}

const char *cal_zone_name(const struct cal_zone *z)
{
    return z->name;
}

/* ---- local time ---- */

void cal_local(const struct cal_zone *z, int64_t utc_s, struct cal_tm *out)
{
    if (utc_s < CAL_MIN_S)
        utc_s = CAL_MIN_S;
    if (utc_s > CAL_MAX_S)
        utc_s = CAL_MAX_S;
    struct cal__seg s;
    cal__seg_at(z, utc_s, &s);
    int64_t w = utc_s + s.off;
    int64_t days = cal__floor_div(w, CAL__S_PER_DAY);
    int64_t sod = w - days * CAL__S_PER_DAY;
    int64_t y;
    cal__civil_from_days(days, &y, &out->mon, &out->mday);
    out->year = (int)y;
    out->hour = (int)(sod / 3600);
    out->min = (int)(sod / 60 % 60);
    out->sec = (int)(sod % 60);
    out->wday = cal__wday(days);
    out->yday = (int)(days - cal__days_from_civil(y, 1, 1)) + 1;
    out->utcoff_s = s.off;
    out->isdst = s.isdst;
}

int cal_from_local(const struct cal_zone *z, int year, int mon, int mday, int hour, int min, int sec,
                   int64_t *utc_s)
{
    if (year < CAL_YEAR_MIN || year > CAL_YEAR_MAX || mon < 1 || mon > 12 || mday < 1 ||
        mday > cal__days_in_month(year, mon) || hour < 0 || hour > 23 || min < 0 || min > 59 || sec < 0 ||
        sec > 59)
        return -1;
    int64_t wall = cal__days_from_civil(year, mon, mday) * CAL__S_PER_DAY + hour * 3600 + min * 60 + sec;
    /* A solution u has wall - u equal to one of the zone's offsets, so it
     * lies in [wall - max_off, wall - min_off]: walk the segments there
     * (a window of at most 52 h, which a crafted file can fill with every
     * one of its transitions, and the rule with a few more). */
    int64_t lo = wall - z->max_off, hi = wall - z->min_off;
    struct cal__seg s;
    cal__seg_at(z, lo, &s);
    int found = 0;
    int64_t first = 0, gap_at = INT64_MIN;
    for (size_t guard = 0;; guard++) {
        SIM_ASSERT(guard <= z->n + 8);
        int64_t u = wall - s.off;
        if (u >= s.start && u < s.end) {
            if (!found)
                first = u;
            found++;
        }
        if (s.start != INT64_MIN && s.off > s.prev_off && wall >= s.start + s.prev_off && wall < s.start + s.off)
            gap_at = s.start;
        if (s.end == INT64_MAX || s.end > hi)
            break;
        cal__seg_at(z, s.end, &s);
    }
    if (found) {
        *utc_s = first;
        return found > 1 ? 2 : 0;
    }
    SIM_ASSERT(gap_at != INT64_MIN);
    *utc_s = gap_at;
    return 1;
}

/* ---- instants ---- */

/* Reads exactly n digits. */
static int digits(const char **pp, int n, int *out)
{
    int x = 0;
    for (int k = 0; k < n; k++) {
        char ch = (*pp)[k];
        if (ch < '0' || ch > '9')
            return -1;
        x = x * 10 + (ch - '0');
    }
    *pp += n;
    *out = x;
    return 0;
}

int cal_parse_instant(const char *s, int64_t *utc_s, char *err, size_t errlen)
{
    char q[SCN_QUOTE_MAX];
    static const char expect[] = "expected YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ or YYYY-MM-DDTHH:MM:SS+HH:MM";
    size_t len = strlen(s);
    if (len > TZ_INSTANT_MAX)
        return errf(err, errlen, "instant too long (%zu characters, limit %d)", len, TZ_INSTANT_MAX);
    const char *p = s;
    int y, mo, d, h = 0, mi = 0, se = 0, oh = 0, om = 0, sign = 1;
    if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' || digits(&p, 2, &d))
        return errf(err, errlen, "invalid instant '%s': %s", esc(q, s), expect);
    if (*p) {
        if (*p++ != 'T' || digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi) || *p++ != ':' ||
            digits(&p, 2, &se))
            return errf(err, errlen, "invalid instant '%s': %s", esc(q, s), expect);
        if (*p == 'Z') {
            p++;
        } else if (*p == '+' || *p == '-') {
            sign = *p++ == '-' ? -1 : 1;
            if (digits(&p, 2, &oh) || *p++ != ':' || digits(&p, 2, &om))
                return errf(err, errlen, "invalid instant '%s': %s", esc(q, s), expect);
        } else {
            return errf(err, errlen, "invalid instant '%s': missing 'Z' or UTC offset (%s)", esc(q, s), expect);
        }
        if (*p)
            return errf(err, errlen, "invalid instant '%s': %s", esc(q, s), expect);
    }
    if (y < CAL_YEAR_MIN)
        return errf(err, errlen, "year '%.4s' out of range 0001-9999 in '%s'", s, s);
    if (mo < 1 || mo > 12)
        return errf(err, errlen, "month '%.2s' out of range 01-12 in '%s'", s + 5, s);
    int dim = cal__days_in_month(y, mo);
    if (d < 1 || d > dim)
        return errf(err, errlen, "day '%.2s' out of range 01-%02d for %.7s in '%s'", s + 8, dim, s, s);
    if (h > 23)
        return errf(err, errlen, "hour '%.2s' out of range 00-23 in '%s'", s + 11, s);
    if (mi > 59)
        return errf(err, errlen, "minute '%.2s' out of range 00-59 in '%s'", s + 14, s);
    if (se > 59)
        return errf(err, errlen, "second '%.2s' out of range 00-59 in '%s'", s + 17, s);
    if (oh > 23 || om > 59)
        return errf(err, errlen, "UTC offset '%.6s' out of range -23:59 to +23:59 in '%s'", s + 19, s);
    *utc_s = cal__days_from_civil(y, mo, d) * CAL__S_PER_DAY + h * 3600 + mi * 60 + se -
             sign * (oh * 3600 + om * 60);
    return 0;
}

void cal_format_utc(int64_t utc_s, char *buf, size_t n)
{
    struct cal_tm tm;
    cal_local(&tz_utc, utc_s, &tm);
    snprintf(buf, n, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.year, tm.mon, tm.mday, tm.hour, tm.min, tm.sec);
}
