/* test_cal_oracle.c: simrun's cron against python3-croniter 1.3.5, and its
 * TZif reader against Python's zoneinfo.
 *
 * A fixed-seed generator makes ORACLE_EXPRS cron expressions (lists, ranges,
 * steps, month and weekday names, both day fields restricted, the AND
 * option, macros).  Each is asked for ORACLE_FIRES successive fires from
 * three start instants in each of five zones (UTC and four with DST, two of
 * the starts just before a DST change).  All questions go in one batch to
 * one process of tests/cron_oracle.py, which answers with croniter.
 *
 * The comparison is step by step: croniter's k-th fire is compared with
 * cal_cron_next from croniter's own (k-1)-th fire, so one disagreement does
 * not spread along the sequence.  Every step where they differ must be
 * explained, by a precise predicate, as one of the documented cases below
 * (docs/calendar.md, "Differences from croniter"); anything else fails the
 * test.  To know that a case really is what happened, croniter's step is
 * first recomputed here from what is known of its algorithm: search the
 * next matching wall time from the wall time one minute after the current
 * instant, convert it with the UTC offset of that starting point, then apply
 * croniter's "lag" correction.  The recomputation must give croniter's
 * answer exactly, and its wall-time search uses simrun's own field-by-field
 * search (in UTC), so that part of simrun is checked on every step too.
 *
 * pytz, which croniter's DST code is written for, has no rules after 2037;
 * steps that reach 2037 are not compared (and counted). */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sim/rng.h"
#include "sim/cal.h"
#include "sim/tz.h"
#include "sim/util.h"

#define ORACLE_SEED UINT64_C(0x5eed0c0ffee2025)
#define ORACLE_EXPRS 2000
#define ORACLE_STARTS 3 /* per zone */
#define ORACLE_FIRES 8  /* per start */
#define ORACLE_NZONES 5
#define ORACLE_QUERIES (ORACLE_EXPRS * ORACLE_NZONES * ORACLE_STARTS)
#define EXPR_TEXT_MAX 200
#define LINE_MAX_BYTES 8192
#define PYTZ_END INT64_C(2114380800) /* 2037-01-01T00:00:00Z */
#define START_LO INT64_C(946684800)  /* 2000-01-01 */
#define START_SPAN (INT64_C(36) * 365 * 86400)
#define SHOW_MAX 25 /* unexplained steps printed in full */

static const char *const zone_names[ORACLE_NZONES] = {"UTC", "Europe/Berlin", "America/New_York",
                                                      "Australia/Sydney", "America/Santiago"};

/* ---- the documented cases ---- */

enum diff_case {
    D_DAY_RULE,
    D_MONTH_END,
    D_GAP,
    D_GAP_JUMP,
    D_OVERLAP_SKIP,
    D_OVERLAP_REPEAT,
    D_STALE_OFFSET,
    D_LAG_FIX,
    D_COUNT
};

static const struct {
    const char *name, *what;
} diff_cases[D_COUNT] = {
    {"day-rule", "cron treats a day field starting with '*' (\"*/2\") as unrestricted and one like "
                 "\"1-31\" as restricted; croniter decides by the set of values"},
    {"month-end", "croniter's day-of-month step goes to a day the month does not have (31 in "
                  "February), lands in the next month and skips matches on its first days"},
    {"gap", "the next matching wall time does not exist (DST gap): croniter converts it with the "
            "offset from before the change (then maybe its lag correction); simrun fires fixed-time "
            "jobs at the jump and skips wildcard jobs"},
    {"gap-jump", "a fixed-time job's time fell in a DST gap that croniter's search started after: "
                 "simrun fires it at the jump, croniter not at all"},
    {"overlap-skip", "clocks went back: simrun fires a wildcard job again in the repeated hour; "
                     "croniter's wall-time search has already passed that hour"},
    {"overlap-repeat", "clocks went back: croniter fires a fixed-time job at the second occurrence "
                       "of the repeated time; simrun fires it only at the first"},
    {"stale-offset", "croniter converts the wall time with the UTC offset in force where its search "
                     "began, across a DST change, so the fire is off by the change"},
    {"lag-fix", "croniter's lag correction (written for pytz) moves a fire by the DST change, away "
                "from the instant of its wall time"},
};

/* ---- generator ---- */

/* The generator is the project's own (sim/rng.h), seeded directly, so the
 * sequence depends on nothing but the seed below. */
static struct rng rng_state;

static int rnd(int n)
{
    return (int)(rng_next(&rng_state) % (uint64_t)n);
}

static const int f_lo[5] = {0, 0, 1, 1, 0}, f_hi[5] = {59, 23, 31, 12, 7}, f_span[5] = {60, 24, 31, 12, 7};
static const char *const gen_months[12] = {"jan", "feb", "mar", "apr", "may", "jun",
                                           "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const gen_days[7] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

/* What a generated field contains, for the coverage figures. */
enum { G_RANGE = 1, G_STEP = 2, G_NAME = 4, G_LIST = 8 };

struct gen_stats {
    int lists, ranges, steps, names, both_days, and_opt, macros;
};

struct gen_expr {
    char text[EXPR_TEXT_MAX];
    unsigned flags;
    struct cal_cron mine;    /* as simrun parses it */
    struct cal_cron cronish; /* the same bitsets with croniter's day rule */
};

static void put(char *buf, size_t cap, const char *fmt, ...)
{
    size_t n = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, cap - n, fmt, ap);
    va_end(ap);
}

/* A value of field f, sometimes as a name (in mixed case). */
static void gen_value(char *buf, size_t cap, int f, int v, int *named)
{
    char name[8];
    if ((f == 3 || (f == 4 && v < 7)) && rnd(3) == 0) {
        strcpy(name, f == 3 ? gen_months[v - 1] : gen_days[v]);
        int style = rnd(3);
        for (char *p = name; *p; p++)
            if (style == 1 || (style == 2 && p == name))
                *p = (char)(*p - 'a' + 'A');
        put(buf, cap, "%s", name);
        *named = 1;
        return;
    }
    put(buf, cap, "%d", v);
}

/* Values near the DST changes of the test zones are drawn more often. */
static int gen_pick(int f)
{
    static const int dst_hours[] = {0, 1, 2, 3, 22, 23};
    if (f == 1 && rnd(5) < 2)
        return dst_hours[rnd(6)];
    if (f == 2 && rnd(6) == 0)
        return 28 + rnd(4);
    return f_lo[f] + rnd(f_hi[f] - f_lo[f] + 1);
}

static void gen_element(char *buf, size_t cap, int f, int *flags)
{
    int k = rnd(10), named = 0;
    if (k < 4) {
        gen_value(buf, cap, f, gen_pick(f), &named);
    } else if (k < 9) {
        int a = gen_pick(f), b = gen_pick(f);
        if (a > b) {
            int t = a;
            a = b;
            b = t;
        }
        gen_value(buf, cap, f, a, &named);
        put(buf, cap, "-");
        if (f == 4 && b == 7 && a > 0 && rnd(2))
            put(buf, cap, "%s", rnd(2) ? "sun" : "SUN"); /* "fri-sun" */
        else
            gen_value(buf, cap, f, b, &named);
        *flags |= G_RANGE;
        if (k >= 7) {
            put(buf, cap, "/%d", 1 + rnd(f_span[f] / 2));
            *flags |= G_STEP;
        }
    } else {
        put(buf, cap, "*/%d", 1 + rnd(f_span[f] / 2));
        *flags |= G_STEP;
    }
    if (named)
        *flags |= G_NAME;
}

static void gen_field(char *buf, size_t cap, int f, int *flags)
{
    int k = rnd(20);
    if (k < 6) {
        put(buf, cap, "*");
    } else if (k < 9) {
        put(buf, cap, "*/%d", 2 + rnd(f_span[f] / 2));
        *flags |= G_STEP;
    } else if (k < 15) {
        gen_element(buf, cap, f, flags);
    } else if (k == 15 && (f == 2 || f == 4)) {
        put(buf, cap, "%s", f == 2 ? "1-31" : rnd(2) ? "0-6" : "sun-sat"); /* full, not '*' */
        *flags |= G_RANGE;
    } else {
        int n = 2 + rnd(3);
        for (int i = 0; i < n; i++) {
            if (i)
                put(buf, cap, ",");
            gen_element(buf, cap, f, flags);
        }
        *flags |= G_LIST;
    }
}

static void gen_one(struct gen_expr *g, struct gen_stats *st)
{
    static const char *const macros[] = {"@hourly", "@daily", "@midnight", "@weekly",
                                         "@monthly", "@yearly", "@annually", "@DAILY"};
    char err[256];
    for (int attempt = 0;; attempt++) {
        SIM_ASSERT(attempt < 1000);
        g->text[0] = '\0';
        g->flags = rnd(8) == 0 ? CAL_CRON_AND : 0;
        int fl = 0, fields_flags[5] = {0};
        if (rnd(50) == 0) {
            put(g->text, sizeof g->text, "%s", macros[rnd(8)]);
        } else {
            for (int f = 0; f < 5; f++) {
                if (f)
                    put(g->text, sizeof g->text, " ");
                gen_field(g->text, sizeof g->text, f, &fields_flags[f]);
                fl |= fields_flags[f];
            }
        }
        if (cal_cron_parse(g->text, g->flags, &g->mine, err, sizeof err, NULL) != 0)
            continue; /* e.g. "0 0 30 2 *", which simrun rejects as never firing */
        if (g->text[0] == '@')
            st->macros++;
        st->lists += !!(fl & G_LIST);
        st->ranges += !!(fl & G_RANGE);
        st->steps += !!(fl & G_STEP);
        st->names += !!(fl & G_NAME);
        st->and_opt += g->flags == CAL_CRON_AND;
        st->both_days += g->mine.mdays != UINT32_C(0xfffffffe) && g->mine.wdays != 0x7f;
        g->cronish = g->mine;
        /* croniter: a day field is unrestricted iff it covers every value */
        g->cronish.day_or = !(g->flags & CAL_CRON_AND) && g->mine.mdays != UINT32_C(0xfffffffe) &&
                            g->mine.wdays != 0x7f;
        return;
    }
}

/* ---- the batch ---- */

struct query {
    int expr, zone;
    int64_t start;
    int answered, failed;
    int64_t got[ORACLE_FIRES];
    char msg[160];
};

struct off_query {
    int zone;
    size_t first, count; /* into off_t[] */
};

static struct gen_expr *exprs;
static struct query *queries;
static struct gen_stats gstats;
static const struct cal_zone *zones[ORACLE_NZONES];
static int64_t *off_t_s;
static int32_t *off_want;
static size_t off_n, off_cap;
static struct off_query off_q[ORACLE_NZONES];
static int batch_ok;
static char batch_err[1024];
static char script_path[1024];

static void off_add(int64_t t)
{
    off_t_s = xgrow(off_t_s, sizeof *off_t_s, &off_cap, off_n + 1);
    off_t_s[off_n++] = t;
}

static int find_script(const char *argv0)
{
    const char *cands[2] = {"tests/cron_oracle.py", NULL};
    char buf[1024];
    const char *slash = strrchr(argv0, '/');
    if (slash) {
        snprintf(buf, sizeof buf, "%.*s/../../../tests/cron_oracle.py", (int)(slash - argv0), argv0);
        cands[1] = buf;
    }
    for (int i = 0; i < 2; i++) {
        if (cands[i] && access(cands[i], R_OK) == 0) {
            snprintf(script_path, sizeof script_path, "%s", cands[i]);
            return 0;
        }
    }
    return -1;
}

/* Builds every question, runs the oracle once, reads every answer. */
static void run_batch(void)
{
    char err[256];
    for (int z = 0; z < ORACLE_NZONES; z++)
        if (cal_zone_get(zone_names[z], &zones[z], err, sizeof err)) {
            snprintf(batch_err, sizeof batch_err, "%s", err);
            return;
        }
    rng_state.s = ORACLE_SEED;
    exprs = xcalloc(ORACLE_EXPRS, sizeof *exprs);
    queries = xcalloc(ORACLE_QUERIES, sizeof *queries);
    for (int e = 0; e < ORACLE_EXPRS; e++)
        gen_one(&exprs[e], &gstats);
    int qn = 0;
    for (int e = 0; e < ORACLE_EXPRS; e++) {
        for (int z = 0; z < ORACLE_NZONES; z++) {
            for (int s = 0; s < ORACLE_STARTS; s++) {
                struct query *q = &queries[qn++];
                q->expr = e;
                q->zone = z;
                int64_t t0 = START_LO + (int64_t)(rng_next(&rng_state) % (uint64_t)START_SPAN);
                if (s == 0 || z == 0) {
                    q->start = t0;
                } else {
                    /* within 30 h before (or 2 h after) a DST change */
                    struct cal__seg sg;
                    cal__seg_at(zones[z], t0, &sg);
                    int64_t change = s == 1 ? sg.end : sg.start;
                    q->start = change - rnd(30 * 3600) + rnd(2 * 3600);
                }
            }
        }
    }
    /* offsets: around every change from 1990 to 2040, and at random instants to 2400 */
    for (int z = 1; z < ORACLE_NZONES; z++) {
        off_q[z].zone = z;
        off_q[z].first = off_n;
        int64_t t = INT64_C(631152000); /* 1990 */
        while (t < INT64_C(2208988800)) {  /* 2040 */
            struct cal__seg sg;
            cal__seg_at(zones[z], t, &sg);
            if (sg.end == INT64_MAX)
                break;
            off_add(sg.end - 1);
            off_add(sg.end);
            t = sg.end;
        }
        for (int k = 0; k < 400; k++)
            off_add(INT64_C(631152000) + (int64_t)(rng_next(&rng_state) % (uint64_t)(INT64_C(410) * 365 * 86400)));
        off_q[z].count = off_n - off_q[z].first;
    }
    off_want = xcalloc(off_n, sizeof *off_want);

    char path[] = "/tmp/simrun-cron-oracle-" "XX" "XX" "XX"; /* mkstemp fills the six X */
    int fd = mkstemp(path);
    if (fd < 0) {
        snprintf(batch_err, sizeof batch_err, "cannot create a temporary file: %s", strerror(errno));
        return;
    }
    FILE *f = fdopen(fd, "w");
    SIM_ASSERT(f);
    for (int i = 0; i < qn; i++) {
        const struct query *q = &queries[i];
        fprintf(f, "C %d %s %d %" PRId64 " %d %s\n", i, zone_names[q->zone],
                exprs[q->expr].flags == CAL_CRON_AND, q->start, ORACLE_FIRES, exprs[q->expr].text);
    }
    for (int z = 1; z < ORACLE_NZONES; z++) {
        fprintf(f, "O %d %s", qn + z, zone_names[z]);
        for (size_t k = 0; k < off_q[z].count; k++)
            fprintf(f, " %" PRId64, off_t_s[off_q[z].first + k]);
        fprintf(f, "\n");
    }
    if (fclose(f) != 0) {
        snprintf(batch_err, sizeof batch_err, "cannot write %s", path);
        unlink(path);
        return;
    }
    char cmd[2300];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s'", script_path, path);
    FILE *p = popen(cmd, "r");
    if (!p) {
        snprintf(batch_err, sizeof batch_err, "cannot run %.300s", cmd);
        unlink(path);
        return;
    }
    char *line = xmalloc(1 << 20);
    int answers = 0, offsets_read = 0;
    while (fgets(line, 1 << 20, p)) {
        char kind;
        int id, pos = 0;
        if (sscanf(line, "%c %d %n", &kind, &id, &pos) < 2)
            continue;
        const char *rest = line + pos;
        if (id >= 0 && id < qn) {
            struct query *q = &queries[id];
            answers++;
            q->answered = 1;
            if (kind == 'E') {
                q->failed = 1;
                snprintf(q->msg, sizeof q->msg, "%.*s", (int)strcspn(rest, "\n"), rest);
                continue;
            }
            char *s = (char *)rest;
            for (int k = 0; k < ORACLE_FIRES; k++)
                q->got[k] = strtoll(s, &s, 10);
        } else if (kind == 'R' && id > qn && id < qn + ORACLE_NZONES) {
            int z = id - qn;
            char *s = (char *)rest;
            for (size_t k = 0; k < off_q[z].count; k++)
                off_want[off_q[z].first + k] = (int32_t)strtol(s, &s, 10);
            offsets_read++;
        }
    }
    free(line);
    int st = pclose(p);
    unlink(path);
    if (st != 0 || answers != qn || offsets_read != ORACLE_NZONES - 1) {
        snprintf(batch_err, sizeof batch_err,
                 "%.300s failed (status %d, %d of %d answers): is python3-croniter installed for "
                 "/usr/bin/python3?",
                 cmd, st, answers, qn);
        return;
    }
    batch_ok = 1;
}

/* ---- the comparison ---- */

static int32_t off_at(const struct cal_zone *z, int64_t t)
{
    struct cal_tm tm;
    cal_local(z, t, &tm);
    return tm.utcoff_s;
}

/* First wall time >= w matching c, as wall seconds (simrun's own search in UTC). */
static int64_t naive_first(const struct cal_cron *c, int64_t w)
{
    const struct cal_zone *utc;
    SIM_ASSERT(cal_zone_get("UTC", &utc, NULL, 0) == 0);
    return cal_cron_next(c, utc, w - 1);
}

/* How a wall time maps to instants: 0 exists once, 1 in a gap, 2 twice;
 * *first and *second get the instants. */
static int wall_kind(const struct cal_zone *z, int64_t w, int64_t *first, int64_t *second)
{
    int64_t y;
    int mon, mday;
    int64_t days = cal__floor_div(w, 86400), sod = w - days * 86400;
    cal__civil_from_days(days, &y, &mon, &mday);
    int rc = cal_from_local(z, (int)y, mon, mday, (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60), first);
    SIM_ASSERT(rc >= 0);
    *second = *first;
    if (rc == 2) {
        struct cal__seg sg;
        cal__seg_at(z, *first, &sg);
        cal__seg_at(z, sg.end, &sg);
        *second = w - sg.off;
    }
    return rc;
}

static void show_local(const struct cal_zone *z, int64_t t, char *buf, size_t n)
{
    struct cal_tm tm;
    cal_local(z, t, &tm);
    snprintf(buf, n, "%04d-%02d-%02d %02d:%02d%+03d:%02d (%" PRId64 ")", tm.year, tm.mon, tm.mday, tm.hour,
             tm.min, tm.utcoff_s / 3600, abs(tm.utcoff_s) / 60 % 60, t);
}

struct totals {
    long steps, agree, beyond, unexplained, model_fail, seq_same, seq_compared, oracle_errors;
    long cases[D_COUNT];
    long zone_steps[ORACLE_NZONES], zone_diffs[ORACLE_NZONES];
    long gap_backwards; /* gap steps where croniter did not even move forward */
    long day_rule_none; /* croniter found no fire at all */
};

static void report_step(const char *why, const struct query *q, int k, int64_t cur, int64_t r, int64_t mine,
                        int64_t w)
{
    const struct cal_zone *z = zones[q->zone];
    char a[64], b[64], c[64], d[64];
    show_local(z, cur, a, sizeof a);
    show_local(z, r, b, sizeof b);
    show_local(z, mine, c, sizeof c);
    show_local(zones[0], w, d, sizeof d);
    print_message("UNEXPLAINED (%s): '%s'%s in %s, start %" PRId64 ", step %d\n"
                  "    from %s\n    croniter %s\n    simrun   %s\n    wall target %.16s\n",
                  why, exprs[q->expr].text, exprs[q->expr].flags ? " [AND]" : "", zone_names[q->zone],
                  q->start, k, a, b, c, d);
}

/* ---- croniter's wall-time search, replicated ---- */

/* Values of a bitset, ascending. */
static int set_values(uint64_t bits, int lo, int hi, int *out)
{
    int n = 0;
    for (int v = lo; v <= hi; v++)
        if (bits >> v & 1)
            out[n++] = v;
    return n;
}

/* croniter's _get_next_nearest_diff: the distance to the first value >= x,
 * else around the range.  *beyond: that first value exceeds range (the
 * day-of-month quirk). */
static int nearest_diff(int x, const int *vals, int n, int range, int *beyond)
{
    for (int i = 0; i < n; i++) {
        if (vals[i] >= x) {
            if (beyond)
                *beyond = vals[i] > range;
            return vals[i] - x;
        }
    }
    return vals[0] - x + range;
}

struct ct_time {
    int64_t days; /* since 1970-01-01 */
    int h, mi;
};

/* One _calc: fields whose bitset is full are '*' and skipped, as croniter
 * collapses them.  Returns wall seconds, or INT64_MAX after 50 years. */
static int64_t croniter_calc(uint64_t minutes, uint32_t hours, uint32_t mdays, uint16_t months, uint8_t wdays,
                             int64_t s_wall, int *overshoot)
{
    int mins[60], hrs[24], doms[31], mons[12], dows[7];
    int nmin = set_values(minutes, 0, 59, mins), nhr = set_values(hours, 0, 23, hrs);
    int ndom = set_values(mdays, 1, 31, doms), nmon = set_values(months, 1, 12, mons);
    int ndow = set_values(wdays, 0, 6, dows);
    struct ct_time t = {cal__floor_div(s_wall, 86400), 0, 0};
    int64_t sod = s_wall - t.days * 86400;
    t.h = (int)(sod / 3600);
    t.mi = (int)(sod / 60 % 60);
    int64_t y0, y;
    int mo, d;
    cal__civil_from_days(t.days, &y0, &mo, &d);
    y = y0;
    while (y - y0 <= 50) {
        cal__civil_from_days(t.days, &y, &mo, &d);
        if (nmon < 12) {
            int diff = nearest_diff(mo, mons, nmon, 12, NULL);
            if (diff) {
                int64_t m = (int64_t)mo - 1 + diff;
                t.days = cal__days_from_civil(y + m / 12, (int)(m % 12) + 1, 1);
                t.h = t.mi = 0;
                continue;
            }
        }
        if (ndom < 31) {
            int beyond = 0;
            int diff = nearest_diff(d, doms, ndom, cal__days_in_month(y, mo), &beyond);
            if (diff) {
                if (beyond)
                    *overshoot = 1;
                t.days += diff;
                t.h = t.mi = 0;
                continue;
            }
        }
        if (ndow < 7) {
            int diff = nearest_diff(cal__wday(t.days), dows, ndow, 7, NULL);
            if (diff) {
                t.days += diff;
                t.h = t.mi = 0;
                continue;
            }
        }
        if (nhr < 24) {
            int diff = nearest_diff(t.h, hrs, nhr, 24, NULL);
            if (diff) {
                t.days += (t.h + diff) / 24;
                t.h = (t.h + diff) % 24;
                t.mi = 0;
                continue;
            }
        }
        if (nmin < 60) {
            int diff = nearest_diff(t.mi, mins, nmin, 60, NULL);
            if (diff) {
                int total = t.h * 60 + t.mi + diff;
                t.days += total / 1440;
                t.h = total % 1440 / 60;
                t.mi = total % 60;
                continue;
            }
        }
        return t.days * 86400 + t.h * 3600 + t.mi * 60; /* every field matches */
    }
    return INT64_MAX;
}

/* croniter's wall-time target from s_wall: with both day fields restricted
 * and day_or, the earlier of a search ignoring weekdays and one ignoring
 * days of the month. */
static int64_t croniter_search(const struct cal_cron *c, int64_t s_wall, int *overshoot)
{
    const uint32_t all_days = UINT32_C(0xfffffffe);
    *overshoot = 0;
    if (c->day_or) {
        int o1 = 0, o2 = 0;
        int64_t t1 = croniter_calc(c->minutes, c->hours, c->mdays, c->months, 0x7f, s_wall, &o1);
        int64_t t2 = croniter_calc(c->minutes, c->hours, all_days, c->months, c->wdays, s_wall, &o2);
        *overshoot = o1 || o2; /* a late t1 can make t2 the answer */
        return t1 < t2 ? t1 : t2;
    }
    return croniter_calc(c->minutes, c->hours, c->mdays, c->months, c->wdays, s_wall, overshoot);
}

/* Is x a fire that simrun makes only by the gap rule: the jump of a DST gap
 * (under 3 h) in which a fixed-time job's wall time fell? */
static int is_gap_jump(const struct cal_cron *c, const struct cal_zone *z, int64_t x)
{
    if (x == INT64_MAX || c->wild)
        return 0;
    struct cal__seg sg;
    cal__seg_at(z, x, &sg);
    int32_t jump = sg.off - sg.prev_off;
    return sg.start == x && jump > 0 && jump < CAL__DST_JUMP_MAX_S &&
           naive_first(c, x + sg.prev_off) < x + sg.off;
}

/* Which documented case explains croniter's fire r, where simrun (with
 * croniter's day rule) fires at alt?  w is croniter's wall-time target, w_true
 * the true first match from s_wall (the wall time croniter's search started
 * from), overshoot whether croniter's search made its month-end step.  Each
 * case checks both sides: what croniter did, and that simrun did what its
 * rule says.  D_COUNT if none. */
static enum diff_case classify(const struct gen_expr *g, const struct cal_zone *z, int64_t s_wall, int64_t r,
                               int64_t alt, int64_t w, int64_t w_true, int overshoot, int lag_fix)
{
    const struct cal_cron *c = &g->cronish;
    if (alt == r)
        return D_DAY_RULE; /* the only difference is the day rule */
    int64_t u1, u2, a1 = 0, a2 = 0;
    if (w != w_true) {
        /* croniter's search went past the true first match, which simrun took */
        int ok = overshoot && w > w_true && wall_kind(z, w_true, &u1, &u2) == 0 && alt == u1;
        return ok ? D_MONTH_END : D_COUNT;
    }
    int kind = wall_kind(z, w, &u1, &u2);
    int32_t alt_off = alt == INT64_MAX ? 0 : off_at(z, alt);
    int alt_kind = alt == INT64_MAX ? 0 : wall_kind(z, alt + alt_off, &a1, &a2);
    struct cal_tm alt_tm;
    cal_local(z, alt, &alt_tm);
    if (kind == 1) {
        /* croniter's target wall time does not exist; u1 is the jump */
        struct cal__seg sg;
        cal__seg_at(z, u1, &sg);
        int32_t jump = sg.off - sg.prev_off;
        if (!c->wild && jump > 0 && jump < CAL__DST_JUMP_MAX_S)
            return alt == u1 ? D_GAP : D_COUNT; /* fixed-time: at the jump */
        return alt + alt_off == naive_first(c, u1 + sg.off) ? D_GAP : D_COUNT; /* skipped */
    }
    if (alt < r && is_gap_jump(c, z, alt) && s_wall >= alt + alt_off)
        return D_GAP_JUMP; /* croniter searched from after the jump */
    if (alt < r && alt_kind == 2 && alt == a2 && alt != a1 && alt + alt_off < s_wall && c->wild &&
        cal_cron_matches_local(c, &alt_tm))
        return D_OVERLAP_SKIP; /* simrun's fire is the second pass, behind croniter's search */
    if (kind == 2 && r == u2 && u2 != u1 && alt > r) {
        struct cal__seg sg;
        cal__seg_at(z, u2, &sg);
        int32_t set_back = sg.prev_off - sg.off;
        if (!c->wild && set_back > 0 && set_back < CAL__DST_JUMP_MAX_S)
            return D_OVERLAP_REPEAT; /* a fixed-time job's second occurrence */
    }
    if (kind == 0 && r != u1 && alt == u1)
        return lag_fix ? D_LAG_FIX : D_STALE_OFFSET; /* r is not the instant of w; simrun's is */
    return D_COUNT;
}

static void compare_query(const struct query *q, struct totals *t)
{
    const struct gen_expr *g = &exprs[q->expr];
    const struct cal_zone *z = zones[q->zone];
    if (q->failed) {
        /* croniter gives up after 50 years without a fire: fine if, with its
         * day rule, there is none ("0 0 31 2 sun-sat": Sundays to Saturdays
         * are every day for croniter, so 31 February is required) */
        int64_t alt = cal_cron_next(&g->cronish, z, q->start);
        if (strncmp(q->msg, "CroniterBadDateError", 20) == 0 && g->cronish.day_or != g->mine.day_or &&
            (alt == INT64_MAX || alt > q->start + INT64_C(50) * 366 * 86400)) {
            t->steps++;
            t->zone_steps[q->zone]++;
            t->zone_diffs[q->zone]++;
            t->cases[D_DAY_RULE]++;
            t->day_rule_none++;
            t->seq_compared++;
            return;
        }
        t->oracle_errors++;
        t->unexplained++;
        if (t->unexplained <= SHOW_MAX)
            print_message("UNEXPLAINED: croniter failed on '%s' in %s from %" PRId64 ": %s\n", g->text,
                          zone_names[q->zone], q->start, q->msg);
        return;
    }
    int64_t cur = q->start, ds = q->start; /* croniter's cur and dst_start_time */
    int same = 1, compared = 1;
    for (int k = 0; k < ORACLE_FIRES; k++) {
        int64_t r = q->got[k];
        if (cur >= PYTZ_END - 2 * 86400 || r >= PYTZ_END - 2 * 86400) {
            t->beyond += ORACLE_FIRES - k;
            compared = k > 0;
            break;
        }
        t->steps++;
        t->zone_steps[q->zone]++;
        /* croniter's step, recomputed */
        int32_t o_s = off_at(z, cur + 60);
        int64_t s_wall = cal__floor_div(cur + 60 + o_s, 60) * 60;
        int overshoot;
        int64_t w_c = croniter_search(&g->cronish, s_wall, &overshoot);
        int64_t w_true = naive_first(&g->cronish, s_wall);
        int64_t r0 = w_c - o_s, pred = r0;
        int32_t o_ds = off_at(z, ds), o_r = off_at(z, r0);
        int lag_fix = 0;
        if (o_r != o_ds) {
            int64_t lag = o_r - o_ds, lag_s = r0 - ds;
            struct cal_tm tds;
            cal_local(z, ds, &tds);
            int64_t limit = (int64_t)(24 - tds.hour) * 3600;
            int64_t abs_lag_s = lag_s < 0 ? -lag_s : lag_s;
            if ((lag > 0 && abs_lag_s >= limit) || (lag < 0 && abs_lag_s - lag >= limit)) {
                lag_fix = 1;
                pred = r0 - lag;
            }
        }
        int64_t mine = cal_cron_next(&g->mine, z, cur);
        if (pred != r) {
            t->model_fail++;
            t->unexplained++;
            if (t->unexplained <= SHOW_MAX)
                report_step("croniter's step not reproduced", q, k, cur, r, mine, w_c);
            same = 0;
            break; /* croniter's state is no longer known */
        }
        if (lag_fix)
            ds = pred;
        if (mine == r) {
            t->agree++;
        } else {
            same = 0;
            t->zone_diffs[q->zone]++;
            /* With croniter's day rule, would simrun agree?  If not, the
             * rest of the difference is judged against that answer. */
            int64_t alt = g->cronish.day_or == g->mine.day_or ? mine : cal_cron_next(&g->cronish, z, cur);
            enum diff_case dc = classify(g, z, s_wall, r, alt, w_c, w_true, overshoot, lag_fix);
            if (dc == D_COUNT) {
                t->unexplained++;
                if (t->unexplained <= SHOW_MAX)
                    report_step("no documented case", q, k, cur, r, mine, w_c);
            } else {
                t->cases[dc]++;
                if (dc == D_GAP && r <= cur)
                    t->gap_backwards++;
            }
        }
        cur = r;
    }
    if (compared) {
        t->seq_compared++;
        t->seq_same += same;
    }
}

static void test_oracle_cron(void **state)
{
    (void)state;
    if (!batch_ok)
        fail_msg("oracle not run: %s", batch_err);
    struct totals t;
    memset(&t, 0, sizeof t);
    for (int i = 0; i < ORACLE_QUERIES; i++)
        compare_query(&queries[i], &t);
    long diffs = t.steps - t.agree;
    print_message("cron oracle: %d expressions (%d with lists, %d ranges, %d steps, %d names, "
                  "%d both day fields, %d AND, %d macros), %d zones, %d start instants each\n",
                  ORACLE_EXPRS, gstats.lists, gstats.ranges, gstats.steps, gstats.names, gstats.both_days,
                  gstats.and_opt, gstats.macros, ORACLE_NZONES, ORACLE_STARTS);
    print_message("cron oracle: %ld comparisons with python3-croniter 1.3.5 (%ld sequences, %ld "
                  "identical); %ld equal, %ld different; %ld steps past 2037 not compared\n",
                  t.steps, t.seq_compared, t.seq_same, t.agree, diffs, t.beyond);
    for (int z = 0; z < ORACLE_NZONES; z++)
        print_message("  %-18s %7ld comparisons, %6ld different\n", zone_names[z], t.zone_steps[z],
                      t.zone_diffs[z]);
    for (int c = 0; c < D_COUNT; c++)
        print_message("  case %-15s %6ld  %s\n", diff_cases[c].name, t.cases[c], diff_cases[c].what);
    print_message("  (of the day-rule cases, %ld where croniter found no fire in 50 years; of the gap "
                  "cases, %ld where croniter did not move past its previous fire)\n",
                  t.day_rule_none, t.gap_backwards);
    print_message("  unexplained        %6ld  (croniter's step not reproduced: %ld, croniter errors: %ld)\n",
                  t.unexplained, t.model_fail, t.oracle_errors);
    assert_int_equal(t.unexplained, 0);
    assert_true(t.steps > ORACLE_QUERIES * ORACLE_FIRES * 9 / 10);
    assert_true(t.cases[D_DAY_RULE] + t.agree > 0);
}

static void test_oracle_offsets(void **state)
{
    (void)state;
    if (!batch_ok)
        fail_msg("oracle not run: %s", batch_err);
    size_t bad = 0;
    for (int z = 1; z < ORACLE_NZONES; z++) {
        for (size_t k = 0; k < off_q[z].count; k++) {
            size_t i = off_q[z].first + k;
            int32_t got = off_at(zones[z], off_t_s[i]);
            if (got != off_want[i]) {
                if (++bad <= SHOW_MAX)
                    print_message("offset of %s at %" PRId64 ": simrun %d, zoneinfo %d\n", zone_names[z],
                                  off_t_s[i], got, off_want[i]);
            }
        }
    }
    print_message("zone oracle: %zu UTC offsets compared with Python's zoneinfo (4 zones, 1990-2400), "
                  "%zu different\n",
                  off_n, bad);
    assert_int_equal(bad, 0);
}

static int group_teardown(void **state)
{
    (void)state;
    free(exprs);
    free(queries);
    free(off_t_s);
    free(off_want);
    cal_zone_cache_free();
    return 0;
}

int main(int argc, char **argv)
{
    (void)argc;
    if (find_script(argv[0]))
        snprintf(batch_err, sizeof batch_err, "tests/cron_oracle.py not found (run from the source tree)");
    else
        run_batch();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle_cron),
        cmocka_unit_test(test_oracle_offsets),
    };
    return cmocka_run_group_tests(tests, NULL, group_teardown);
}
