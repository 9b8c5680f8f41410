/* tz.h: internals shared by sim/tz.c and sim/cron.c (and their tests):
 * proleptic Gregorian date arithmetic and a zone's offset segments.
 *
 * A zone is a sequence of segments [start, end) of UTC instants, each with one
 * UTC offset; consecutive segments meet at a transition.  Local (wall) time
 * is handled as "wall seconds": utc + offset, counted like UTC seconds, so
 * that date arithmetic on it needs no zone.  Not part of the public API. */
#ifndef SIM_TZ_H
#define SIM_TZ_H

#include <stdint.h>

#include "sim/cal.h"

#define CAL__S_PER_DAY INT64_C(86400)
/* A UTC offset change smaller than this is a DST change under cronie's rule;
 * a larger one is treated as a clock correction (see docs/calendar.md). */
#define CAL__DST_JUMP_MAX_S 10800

int cal__is_leap(int64_t year);
int cal__days_in_month(int64_t year, int mon);
/* Days since 1970-01-01 of a proleptic Gregorian date (mon 1..12). */
int64_t cal__days_from_civil(int64_t year, int mon, int mday);
void cal__civil_from_days(int64_t days, int64_t *year, int *mon, int *mday);
/* 0 = Sunday. */
int cal__wday(int64_t days);
int64_t cal__floor_div(int64_t a, int64_t b);

struct cal__seg {
    int64_t start;    /* first instant; INT64_MIN for the first segment */
    int64_t end;      /* first instant after; INT64_MAX for the last */
    int32_t off;      /* UTC offset in the segment, seconds */
    int32_t prev_off; /* offset of the segment before (== off for the first) */
    int isdst;
};
/* The segment containing instant u.  O(log transitions) inside the
 * transition table, O(1) beyond it (from the zone's POSIX TZ rule). */
void cal__seg_at(const struct cal_zone *z, int64_t u, struct cal__seg *s);
/* Smallest and largest UTC offset the zone ever uses. */
void cal__off_range(const struct cal_zone *z, int32_t *min_off, int32_t *max_off);

/* Builds a zone called name from a TZif image (RFC 8536), as cal_zone_get
 * does from a file, outside the cache: for tests and the fuzz target.
 * Returns 0 with *out (free it with cal__zone_free), or -1 with a reason in
 * why. */
int cal__zone_from_tzif(const unsigned char *buf, size_t len, const char *name, struct cal_zone **out,
                        const char **why);
void cal__zone_free(struct cal_zone *z);

#endif
