/* cal.h: calendar time for simrun: time zones read from the system tz
 * database, cron expressions, times of day and active-hours windows.
 *
 * Every instant is an int64 count of seconds since the Unix epoch, UTC; local
 * (wall-clock) time appears only as a struct cal_tm or as fields passed in.
 * The key invariant: the fires of a cron expression in a zone are one fixed
 * set of instants, defined by docs/calendar.md (including the DST rule), that
 * depends on nothing else.  cal_cron_next, cal_cron_prev and cal_cron_fires
 * walk that one set, so next(x) > x, prev(x) < x, next(prev(x)) is the first
 * fire >= x, and no instant is ever returned twice by successive next calls.
 *
 * Supported range: years 1 to 9999.  Errors are lowercase, without a full
 * stop, and quote the offending text in single quotes.  Nothing here is
 * thread-safe: the zone cache is process-global, as simrun is one thread.
 * The implementation is in sim/tz.c (zones, civil dates, instants) and
 * sim/cron.c (cron, times of day, windows). */
#ifndef SIM_CAL_H
#define SIM_CAL_H

#include <stddef.h>
#include <stdint.h>

#define CAL_CRON_EXPR_MAX  256 /* longest cron expression, in bytes */
#define CAL_ZONE_NAME_MAX  128 /* longest time zone name, in bytes */
#define CAL_ZONE_CACHE_MAX 256 /* most distinct zones loaded at once */
#define CAL_ERR_MIN        128 /* an error buffer this long holds every message's gist */
#define CAL_ERR_SIZE       512 /* and this long, any cron, instant or time-of-day message in full
                                  (zone messages naming a long path may still be cut) */

#define CAL_YEAR_MIN 1
#define CAL_YEAR_MAX 9999
#define CAL_MIN_S INT64_C(-62135596800) /* 0001-01-01T00:00:00Z */
#define CAL_MAX_S INT64_C(253402300799) /* 9999-12-31T23:59:59Z */

/* A loaded time zone.  Zones are immutable once loaded and owned by the
 * cache; a pointer stays valid until cal_zone_cache_free(). */
struct cal_zone;

/* Loads an IANA zone ("Europe/Berlin") from $TZDIR, or /usr/share/zoneinfo
 * when TZDIR is unset or empty, and caches it by name for the process
 * lifetime; "UTC" always works, even without a tz database.  The file must be
 * TZif (version 2 or later uses its 64-bit data and its POSIX TZ footer for
 * instants after the last transition; version 1 files use their 32-bit data).
 * Names with "..", "." or empty components, a leading '/', or characters other
 * than letters, digits and "/_+-." are rejected, as are files with leap
 * seconds ("right/..." zones: simrun's instants are POSIX seconds).
 * Returns 0 and sets *out, or -1 with a message in err, e.g.
 * "unknown time zone 'Mars/Base'". */
int cal_zone_get(const char *name, const struct cal_zone **out, char *err, size_t errlen);
/* Frees every cached zone (for leak-free tests); pointers from cal_zone_get
 * become invalid. */
void cal_zone_cache_free(void);
/* The name the zone was loaded by; valid as long as the zone. */
const char *cal_zone_name(const struct cal_zone *z);

/* Broken-down local time.  mon 1..12, mday 1..31, yday 1..366 (day of the
 * year, 1 = 1 January), wday 0..6 (0 = Sunday), utcoff_s = local - UTC. */
struct cal_tm {
    int year, mon, mday, hour, min, sec, wday, yday;
    int32_t utcoff_s;
    int isdst;
};
/* Local time of an instant.  Instants outside years 1..9999 are first
 * saturated to that range. */
void cal_local(const struct cal_zone *z, int64_t utc_s, struct cal_tm *out);
/* Local wall time -> UTC.  Returns 0 if the local time exists once; 1 if it
 * falls in a gap (clocks jumped over it): *utc_s is then the instant of the
 * jump, the first instant after the gap, as the DST rule of cron does for
 * fixed-time jobs; 2 if it occurs twice (clocks went back): *utc_s is the
 * earlier occurrence.  Returns -1, leaving *utc_s alone, if a field is out of
 * range (month 1..12, day within the month, hour 0..23, min 0..59, sec
 * 0..59, year 1..9999). */
int cal_from_local(const struct cal_zone *z, int year, int mon, int mday, int hour, int min, int sec,
                   int64_t *utc_s);

/* Parses "2025-03-07T00:00:00Z", "2025-03-07T09:00:00+01:00" (offset -23:59
 * to +23:59) or "2025-03-07" (midnight UTC).  Every field is range-checked
 * (31 February and 24:00:00 are rejected).  Returns 0, or -1 with err. */
int cal_parse_instant(const char *s, int64_t *utc_s, char *err, size_t errlen);
/* Writes "2025-03-07T09:00:00Z" (truncated to n bytes, always terminated). */
void cal_format_utc(int64_t utc_s, char *buf, size_t n);

/* A parsed cron expression: bitsets, so it can be embedded by value.
 * Read-only outside sim/cron.c; set only by cal_cron_parse. */
struct cal_cron {
    uint64_t seconds; /* bit s: second s (0-59) matches; 1 (second 0) for a
                         5-field expression, whose fires are whole minutes */
    uint64_t minutes; /* bit m: minute m (0-59) matches */
    uint32_t hours;   /* bit h: hour h (0-23) */
    uint32_t mdays;   /* bit d: day of month d (1-31) */
    uint16_t months;  /* bit m: month m (1-12) */
    uint8_t wdays;    /* bit w: weekday w (0-6, 0 = Sunday; 7 is stored as 0) */
    uint8_t day_or;   /* 1: a day matches if mdays OR wdays does (cron's rule when
                         neither day field starts with '*'); 0: both must */
    uint8_t wild;     /* 1: the minute or hour field starts with '*'; such jobs
                         are cronie's "wildcard" jobs under the DST rule */
};
#define CAL_CRON_AND 1 /* flag: day-of-month and day-of-week combine with AND */
#define CAL_CRON_SECONDS 2 /* flag: 6 fields, the first one seconds (0-59), as
                              Quartz and the Rust `cron` crate read them */
/* Switches a parsed expression to AND semantics (as CAL_CRON_AND at parse
 * time would have).  Returns 0, or -1 if it then never fires. */
int cal_cron_use_and(struct cal_cron *c);

/* Parses a 5-field cron expression (minute hour day-of-month month
 * day-of-week) or a macro (@yearly @annually @monthly @weekly @daily
 * @midnight @hourly), at most CAL_CRON_EXPR_MAX bytes; syntax in
 * docs/calendar.md.  flags: CAL_CRON_AND, CAL_CRON_SECONDS (exactly 6
 * fields, seconds first; a macro fires at second 0), or 0.  With seconds,
 * the fires are every matching second of each minute the other five fields
 * give (the DST rule applies to the minutes).  Expressions that can never
 * fire ("0 0 30 2 *") are rejected.  Returns 0, or -1 with err like
 * "cron field 'minute': value '99' out of range 0-59" and *err_col = the
 * 1-based column in expr of the offending text (err and err_col may be
 * NULL). */
int cal_cron_parse(const char *expr, unsigned flags, struct cal_cron *out, char *err, size_t errlen,
                   int *err_col);
/* Builds an expression from its fields' bitsets, for a reader with its own
 * syntax (a system's configuration grammar): seconds (0: second 0 only),
 * minutes 0-59, hours 0-23, days of the month 1-31, months 1-12, weekdays
 * 0-6; bits outside those ranges are ignored.  day_or: cron's OR rule for
 * the two day fields; wild: the minute or hour field is a '*' one.
 * Returns 0, or -1 if a field allows no value or it can never fire. */
int cal_cron_from_bits(struct cal_cron *out, uint64_t seconds, uint64_t minutes, uint64_t hours, uint64_t mdays,
                       uint64_t months, uint64_t wdays, int day_or, int wild);
/* First fire > after_s, or INT64_MAX if none before year 10000.  Computed
 * field by field; O(1) per zone transition crossed. */
int64_t cal_cron_next(const struct cal_cron *c, const struct cal_zone *z, int64_t after_s);
/* How other cron engines read the wall clock at a DST change (the
 * default, CAL_DST_CRONIE, is the rule of docs/calendar.md):
 *  - CAL_DST_ABSOLUTE: every instant whose wall time matches fires: a
 *    repeated wall time fires twice, a time in a gap never (robfig/cron v3,
 *    which Kubernetes CronJobs use; Temporal schedules).
 *  - CAL_DST_WALL: wall time only moves forward: a repeated wall time fires
 *    once, at its first occurrence, for every job (a `*` job is silent for
 *    the repeated hour), and a time in a gap never (systemd calendar specs,
 *    since v244).
 *  - CAL_DST_WALL_GAP_NEXT_DAY: CAL_DST_WALL, except that a time in a gap
 *    makes the search start over at the next local midnight (systemd before
 *    v244, issue systemd/systemd#13745).
 *  - CAL_DST_WALL_NEG_BACK: CAL_DST_WALL, except that a time in the gap of
 *    a zone whose offset before the gap is marked DST (a negative DST such
 *    as Europe/Dublin's) is read with the offset after the gap, which gives
 *    an instant before it, possibly <= after_s (systemd before PR #36897).
 *  - CAL_DST_QUARTZ: Quartz's CronExpression.getTimeAfter, which walks
 *    wall-clock fields from the wall time of after_s + 1 and reads each
 *    candidate back as java.util.Calendar does: a time in a gap does not
 *    exist (never fires, as CAL_DST_WALL), and a repeated wall time is read
 *    as its later occurrence, so it fires once, at the second pass (a `*`
 *    job is silent for the first pass; a search from inside the first pass
 *    goes on from its wall time, in the second). */
enum cal_dst_rule {
    CAL_DST_CRONIE, CAL_DST_ABSOLUTE, CAL_DST_WALL, CAL_DST_WALL_GAP_NEXT_DAY, CAL_DST_WALL_NEG_BACK,
    CAL_DST_QUARTZ
};
/* cal_cron_next under another DST rule.  Every rule but
 * CAL_DST_WALL_NEG_BACK answers a fire > after_s; the same cost. */
int64_t cal_cron_next_rule(const struct cal_cron *c, const struct cal_zone *z, int64_t after_s,
                           enum cal_dst_rule rule);
/* Last fire < before_s, or INT64_MIN if none after year 0. */
int64_t cal_cron_prev(const struct cal_cron *c, const struct cal_zone *z, int64_t before_s);
/* The fires in (from_s, to_s], ascending: the first max are written to out
 * (out may be NULL when max is 0); returns how many there are in total, which
 * may exceed max.  O(total). */
size_t cal_cron_fires(const struct cal_cron *c, const struct cal_zone *z, int64_t from_s, int64_t to_s,
                      int64_t *out, size_t max);
/* Does this local time's minute match the fields (day rule included; the
 * seconds are ignored)?  The DST rule also fires at the end of a gap, where
 * the local time itself need not match: whether an instant t is a fire is
 * cal_cron_next(c, z, t - 1) == t. */
int cal_cron_matches_local(const struct cal_cron *c, const struct cal_tm *tm);

/* Parses a time of day "HH:MM", 00:00 to 23:59, two digits each ("9:5",
 * "24:30" and "09:60" are rejected).  Returns 0 with *min_of_day (e.g. 540
 * for "09:00"), or -1 with err. */
int cal_tod_parse(const char *s, int *min_of_day, char *err, size_t errlen);
/* Next instant > after_s whose local time is min_of_day (0..1439), under the
 * DST rule for cron's fixed-time jobs: a time in a gap happens at the jump, a
 * repeated time only the first time.  INT64_MAX if none before year 10000. */
int64_t cal_tod_next(int min_of_day, const struct cal_zone *z, int64_t after_s);

/* An active-hours window: open when the local time of day is in
 * [start_min, end_min), crossing midnight when start_min > end_min
 * (22:00-06:00); start_min == end_min means always open (see
 * docs/calendar.md for why).  Minutes of the day, 0..1439. */
struct cal_window {
    int start_min, end_min;
    const struct cal_zone *zone;
};
int cal_window_contains(const struct cal_window *w, int64_t utc_s);
/* utc_s itself if the window is open then, else the first instant after it
 * at which the window is open (at start_min local time, or at a clock jump
 * that lands inside the window); INT64_MAX if none before year 10000. */
int64_t cal_window_next_open(const struct cal_window *w, int64_t utc_s);

#endif
