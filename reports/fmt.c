/* fmt.c: how values are written (see fmt.h). */
#include "reports/fmt.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void fmt_duration(double us, char *b, size_t n)
{
    if (isinf(us)) {
        snprintf(b, n, "%s\xe2\x88\x9e", us < 0 ? "-" : ""); /* a censored percentile: never served */
        return;
    }
    const char *sign = us < 0 ? "-" : "";
    if (us < 0)
        us = -us;
    if (us < 1000)
        snprintf(b, n, "%s%.0fus", sign, us);
    else if (us < 1e6)
        snprintf(b, n, "%s%.2fms", sign, us / 1e3);
    else if (us < 60e6)
        snprintf(b, n, "%s%.2fs", sign, us / 1e6);
    else if (us < 3600e6)
        snprintf(b, n, "%s%dm%02ds", sign, (int)(us / 60e6), (int)(us / 1e6) % 60);
    else if (us < 86400e6)
        snprintf(b, n, "%s%dh%02dm", sign, (int)(us / 3600e6), (int)(us / 60e6) % 60);
    else
        snprintf(b, n, "%s%dd%02dh", sign, (int)(us / 86400e6), (int)(us / 3600e6) % 24);
}

void fmt_metric(const struct metric_info *mi, double v, char *b, size_t n)
{
    if (isnan(v))
        snprintf(b, n, "-");
    else if (mi->is_bool)
        snprintf(b, n, "%s", v != 0 ? "true" : "false");
    else if (isinf(v))
        snprintf(b, n, "%s\xe2\x88\x9e", v < 0 ? "-" : "");
    else if (mi->is_duration && v < 0)
        snprintf(b, n, "never");
    else if (mi->is_duration)
        fmt_duration(v, b, n);
    else if (fabs(v) < 9e15 && v == (double)(int64_t)v)
        snprintf(b, n, "%" PRId64, (int64_t)v);
    else
        snprintf(b, n, "%.3f", v);
}

/* --- two significant digits ----------------------------------------------------------------- */

enum unit { U_NUM, U_PCT, U_DUR };

static double pow10i(int e)
{
    return pow(10, e);
}

/* The power of ten of the last of two significant digits of h > 0: h
 * rounded to a multiple of 10^e has two digits (99.7 -> e = 1, "100"). */
static int sig2_exp(double h)
{
    int e = (int)floor(log10(h)) - 1;
    if (llround(h / pow10i(e)) >= 100)
        e++;
    return e < -9 ? -9 : e;
}

static double round_at(double v, int e)
{
    double r = round(v / pow10i(e)) * pow10i(e);
    return r == 0 ? 0 : r; /* no "-0" */
}

/* A duration rounded to a resolution of 10^e us, in the style of
 * fmt_duration: sub-second digits as far as the resolution reaches; above
 * a minute, d/h/m/s fields down to the field the resolution needs (seconds
 * up to a resolution of 10 s, minutes up to 1000 s, hours up to 10^4 s,
 * else days). */
static void fmt_duration_at(double us, int e, char *b, size_t n)
{
    const char *sign = us < 0 ? "-" : "";
    double v = fabs(round_at(us, e));
    int dec = 6 - e > 0 ? 6 - e : 0;
    if (v == 0) {
        snprintf(b, n, "0");
        return;
    }
    if (v < 1000) {
        snprintf(b, n, "%s%.*fus", sign, -e > 0 ? -e : 0, v);
        return;
    }
    if (v < 1e6) {
        snprintf(b, n, "%s%.*fms", sign, 3 - e > 0 ? 3 - e : 0, v / 1e3);
        return;
    }
    if (v < 60e6) {
        snprintf(b, n, "%s%.*fs", sign, dec, v / 1e6);
        return;
    }
    if (e < 0)
        e = 0; /* no digits below a microsecond from here on */
    dec = 6 - e > 0 ? 6 - e : 0;
    double q = e <= 7 ? pow10i(e) : e <= 9 ? 60e6 : e == 10 ? 3600e6 : 86400e6;
    double quanta = round(v / q);
    int64_t scale = 1, frac = 0, secs;
    for (int i = 0; i < dec; i++)
        scale *= 10;
    if (q < 1e6) {
        secs = (int64_t)quanta / scale;
        frac = (int64_t)quanta % scale;
    } else {
        secs = (int64_t)(quanta * (q / 1e6));
    }
    int64_t f[4] = {secs / 86400, secs / 3600 % 24, secs / 60 % 60, secs % 60};
    static const char units[] = "dhms";
    int last = q <= 1e7 ? 3 : q <= 60e6 ? 2 : q <= 3600e6 ? 1 : 0, first = 0;
    while (first < last && f[first] == 0)
        first++;
    size_t used = (size_t)snprintf(b, n, "%s", sign);
    for (int i = first; i <= last && used < n; i++) {
        const char *fmt = i == first ? "%" PRId64 : "%02" PRId64;
        used += (size_t)snprintf(b + used, n - used, fmt, f[i]);
        if (i == 3 && dec && used < n)
            used += (size_t)snprintf(b + used, n - used, ".%0*" PRId64, dec, frac);
        if (used < n)
            used += (size_t)snprintf(b + used, n - used, "%c", units[i]);
    }
}

/* v rounded to 10^e in its unit; sign: "+" before a positive value. */
static void put_value(enum unit u, double v, int e, int sign, char *b, size_t n)
{
    double r = round_at(v, e);
    const char *plus = sign && r > 0 ? "+" : "";
    if (u == U_DUR) {
        char d[48];
        fmt_duration_at(r, e, d, sizeof d);
        snprintf(b, n, "%s%s", plus, d);
        return;
    }
    snprintf(b, n, "%s%.*f%s", plus, -e > 0 ? -e : 0, r, u == U_PCT ? "%" : "");
}

/* v without an interval to round it by: a duration as fmt_duration writes
 * it, an integer, else three significant digits. */
static void put_exact(enum unit u, double v, int sign, char *b, size_t n)
{
    char one[48];
    if (u == U_DUR)
        fmt_duration(v, one, sizeof one);
    else if (fabs(v) < 9e15 && v == floor(v))
        snprintf(one, sizeof one, "%.0f%s", v, u == U_PCT ? "%" : "");
    else
        snprintf(one, sizeof one, "%.3g%s", v, u == U_PCT ? "%" : "");
    snprintf(b, n, "%s%s", sign && v > 0 ? "+" : "", one);
}

/* "v ± h" when the sides of the interval [lo, hi] differ by less than a
 * tenth of the longer one (h: the longer side), else "v [lo, hi]"; the
 * decimal place is the one of the second significant digit of the shorter
 * side (of the longer one when the shorter is 0).  Both sides 0: "v ± 0". */
static void put_interval(enum unit u, double v, double lo, double hi, int sign, char *b, size_t n)
{
    double hl = v - lo > 0 ? v - lo : 0, hu = hi - v > 0 ? hi - v : 0;
    double longer = hl > hu ? hl : hu, shorter = hl < hu ? hl : hu;
    char m[64], a[64], z[64];
    if (longer == 0) {
        put_exact(u, v, sign, m, sizeof m);
        snprintf(b, n, "%s \xc2\xb1 0", m);
        return;
    }
    int e = sig2_exp(shorter > 0 ? shorter : longer);
    put_value(u, v, e, sign, m, sizeof m);
    if (longer - shorter <= longer / 10) {
        put_value(u, longer, e, 0, a, sizeof a);
        snprintf(b, n, "%s \xc2\xb1 %s", m, a);
        return;
    }
    put_value(u, lo, e, 0, a, sizeof a);
    put_value(u, hi, e, 0, z, sizeof z);
    snprintf(b, n, "%s [%s, %s]", m, a, z);
}

void fmt_estimate(const struct metric_info *mi, double v, double lo, double hi, int sign, char *b, size_t n)
{
    enum unit u = mi->is_duration ? U_DUR : U_NUM;
    if (isnan(lo) || isnan(hi))
        put_exact(u, v, sign, b, n);
    else
        put_interval(u, v, lo, hi, sign, b, n);
}

void fmt_metric_ci(const struct metric_info *mi, const struct stats_acc *a, uint64_t never, char *b, size_t n)
{
    char nv[40] = "";
    if (never)
        snprintf(nv, sizeof nv, " (%" PRIu64 " never)", never);
    if (a->ninf) {
        /* Censored in some seed: the mean over the seeds is infinite too. */
        if (a->n == 0 && !never)
            snprintf(b, n, "\xe2\x88\x9e");
        else
            snprintf(b, n, "\xe2\x88\x9e (%" PRIu64 " of %" PRIu64 " seeds)%s", a->ninf, a->n + a->ninf + never, nv);
        return;
    }
    if (a->n == 0) {
        snprintf(b, n, "%s", never ? "never" : "-"); /* every seed never, or no value */
        return;
    }
    char v[96];
    double lo, hi;
    if (a->n == 1 || a->min == a->max) {
        /* One seed, or the same value in every seed: the value alone. */
        fmt_metric(mi, a->mean, v, sizeof v);
    } else if (mi->is_bool) {
        stats_interval95(a, STATS_SHARE, &lo, &hi);
        put_interval(U_PCT, 100 * a->mean, 100 * lo, 100 * hi, 0, v, sizeof v);
    } else {
        stats_interval95(a, mi->is_duration ? STATS_NONNEG : STATS_COUNT, &lo, &hi);
        put_interval(mi->is_duration ? U_DUR : U_NUM, a->mean, lo, hi, 0, v, sizeof v);
    }
    snprintf(b, n, "%s%s", v, nv);
}

size_t fmt_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xc0) != 0x80;
    return w;
}

void fmt_markup(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}
