/* fmt.c: how values are written (see fmt.h). */
#include "reports/fmt.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void fmt_duration(double us, char *b, size_t n)
{
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
    else if (mi->is_duration && v < 0)
        snprintf(b, n, "never");
    else if (mi->is_duration)
        fmt_duration(v, b, n);
    else if (fabs(v) < 9e15 && v == (double)(int64_t)v)
        snprintf(b, n, "%" PRId64, (int64_t)v);
    else
        snprintf(b, n, "%.3f", v);
}

/* Decimal places that show a half-width with two significant digits
 * (at most 3). */
static int ci_decimals(double hw)
{
    if (!(hw > 0))
        return 0;
    int d = 1 - (int)floor(log10(hw));
    return d < 0 ? 0 : d > 3 ? 3 : d;
}

void fmt_metric_ci(const struct metric_info *mi, const struct stats_acc *a, uint64_t never, char *b, size_t n)
{
    char nv[40] = "";
    if (never)
        snprintf(nv, sizeof nv, " (%" PRIu64 " never)", never);
    if (a->n == 0) {
        snprintf(b, n, "%s", never ? "never" : "-"); /* every seed never, or no value */
        return;
    }
    double hw = stats_ci95(a);
    if (mi->is_bool) {
        if (a->min == a->max)
            snprintf(b, n, "%s", a->mean != 0 ? "true" : "false");
        else
            snprintf(b, n, "%.0f%%", a->mean * 100);
        return;
    }
    if (isnan(hw)) {
        fmt_metric(mi, a->mean, b, n);
        size_t used = strlen(b);
        snprintf(b + used, n - used, "%s", nv);
        return;
    }
    if (mi->is_duration) {
        char m[32], h[32];
        fmt_duration(a->mean, m, sizeof m);
        if (hw == 0)
            snprintf(h, sizeof h, "0");
        else
            fmt_duration(hw, h, sizeof h);
        snprintf(b, n, "%s \xc2\xb1 %s%s", m, h, nv);
        return;
    }
    int d = ci_decimals(hw);
    if (hw == 0 && a->mean != floor(a->mean))
        d = 3;
    snprintf(b, n, "%.*f \xc2\xb1 %.*f%s", d, a->mean, d, hw, nv);
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
