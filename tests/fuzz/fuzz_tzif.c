/* fuzz_tzif.c: the TZif reader (RFC 8536) and what is computed from a zone.
 *
 * Input: a TZif image, as read from /usr/share/zoneinfo.  An image that the
 * reader refuses must come with a reason.  For a zone it accepts, at every
 * probe instant (each of the first transitions and the instants around it,
 * and fixed instants from 1800 to 2400): the segment holds the instant and
 * its offset is within the zone's range; the local time, turned back into
 * UTC, is the instant itself or, where the clocks went back, an earlier
 * instant with the same local time; cron's next fire of a fixed-time and a
 * wildcard job is later and is a fire; the next 09:00 is later and is at
 * 09:00 local time, or at the end of a gap. */
#include <string.h>

#include "sim/tz.h"
#include "tests/fuzz/fuzz.h"

/* 1800-01-01, 1901-12-13 (the 32-bit limit), 1970, 2025-03-30 01:30 UTC (a
 * European DST change), 2025-11-02 06:30 UTC (an American one), 2100, 2400. */
static const int64_t fixed[] = {-5364662400, -2147483648, 0, 1743298200, 1762065000, 4102444800, 13569465600};

static void check_local(const struct cal_zone *z, int64_t u)
{
    struct cal__seg s;
    cal__seg_at(z, u, &s);
    FUZZ_CHECK(s.start <= u && u < s.end);
    int32_t lo, hi;
    cal__off_range(z, &lo, &hi);
    FUZZ_CHECK(lo <= s.off && s.off <= hi);
    struct cal_tm tm;
    cal_local(z, u, &tm);
    FUZZ_CHECK(tm.utcoff_s == s.off);
    int64_t back = 0;
    int rc = cal_from_local(z, tm.year, tm.mon, tm.mday, tm.hour, tm.min, tm.sec, &back);
    FUZZ_CHECK(rc == 0 || rc == 2);
    FUZZ_CHECK(rc == 0 ? back == u : back <= u);
    struct cal_tm tb;
    cal_local(z, back, &tb);
    FUZZ_CHECK(tb.year == tm.year && tb.mon == tm.mon && tb.mday == tm.mday && tb.hour == tm.hour &&
               tb.min == tm.min && tb.sec == tm.sec);
}

static void check_fires(const struct cal_zone *z, const struct cal_cron *c, int64_t u)
{
    int64_t n = cal_cron_next(c, z, u);
    if (n == INT64_MAX)
        return;
    FUZZ_CHECK(n > u);
    FUZZ_CHECK(cal_cron_next(c, z, n - 1) == n);
    int64_t t = cal_tod_next(9 * 60, z, u);
    if (t == INT64_MAX)
        return;
    FUZZ_CHECK(t > u);
    struct cal_tm tm;
    cal_local(z, t, &tm);
    struct cal__seg s;
    cal__seg_at(z, t, &s);
    FUZZ_CHECK((tm.hour == 9 && tm.min == 0 && tm.sec == 0) || (s.start == t && s.off > s.prev_off));
}

static void probe(const struct cal_zone *z, const struct cal_cron *cr, int64_t u)
{
    if (u < CAL_MIN_S || u > CAL_MAX_S - 4 * 86400)
        return;
    check_local(z, u);
    check_fires(z, &cr[0], u);
    check_fires(z, &cr[1], u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cal_zone *z;
    const char *why = NULL;
    if (cal__zone_from_tzif(data, size, "Fuzz/Zone", &z, &why) != 0) {
        FUZZ_CHECK(why && why[0]);
        return 0;
    }
    struct cal_cron cr[2];
    FUZZ_CHECK(cal_cron_parse("30 2 * * *", 0, &cr[0], NULL, 0, NULL) == 0);
    FUZZ_CHECK(cal_cron_parse("*/20 1-3 * * *", 0, &cr[1], NULL, 0, NULL) == 0);
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        probe(z, cr, fixed[i]);
    /* The first transitions, from the segments: each start, and around it. */
    struct cal__seg s;
    cal__seg_at(z, CAL_MIN_S, &s);
    for (int k = 0; k < 24 && s.end != INT64_MAX && s.end <= CAL_MAX_S; k++) {
        int64_t t = s.end;
        probe(z, cr, t - 3601);
        probe(z, cr, t - 1);
        probe(z, cr, t);
        probe(z, cr, t + 1800);
        cal__seg_at(z, t, &s);
        FUZZ_CHECK(s.start == t);
    }
    cal__zone_free(z);
    return 0;
}
