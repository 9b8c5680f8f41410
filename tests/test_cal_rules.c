/* test_cal_rules.c: cal_cron_next_rule, the DST rules of other cron engines
 * (sim/cal.h), on the transitions of the incidents they model.  Expected
 * instants are written in UTC. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "sim/cal.h"

static int64_t utc(const char *s)
{
    int64_t t;
    char err[CAL_ERR_SIZE];
    assert_int_equal(cal_parse_instant(s, &t, err, sizeof err), 0);
    return t;
}

/* The first n fires after `from` under rule, against want[] (instants in
 * UTC); each search starts after the previous answer. */
static void expect_fires(const char *zone, const char *expr, const char *from, enum cal_dst_rule rule,
                         const char *const *want, int n)
{
    const struct cal_zone *z;
    struct cal_cron c;
    char err[CAL_ERR_SIZE];
    assert_int_equal(cal_zone_get(zone, &z, err, sizeof err), 0);
    assert_int_equal(cal_cron_parse(expr, 0, &c, err, sizeof err, NULL), 0);
    int64_t t = utc(from);
    for (int i = 0; i < n; i++) {
        int64_t f = cal_cron_next_rule(&c, z, t, rule);
        char got[64];
        cal_format_utc(f, got, sizeof got);
        if (f != utc(want[i]))
            fail_msg("%s %s rule %d fire %d: got %s, want %s", zone, expr, (int)rule, i, got, want[i]);
        t = f;
    }
}

/* Europe/Berlin, 2023-10-29 03:00 CEST -> 02:00 CET.  A fixed 02:00: cronie
 * and the wall rule fire once (00:00Z), robfig's absolute rule twice
 * (00:00Z, 01:00Z).  An every-20-minutes job: the absolute rule fires in
 * both passes, the wall rule skips the second (issue systemd#8647). */
static void test_fall_back(void **state)
{
    (void)state;
    const char *once[] = {"2023-10-29T00:00:00Z", "2023-10-30T01:00:00Z"};
    const char *twice[] = {"2023-10-29T00:00:00Z", "2023-10-29T01:00:00Z", "2023-10-30T01:00:00Z"};
    expect_fires("Europe/Berlin", "0 2 * * *", "2023-10-28T00:00:00Z", CAL_DST_CRONIE, once, 2);
    expect_fires("Europe/Berlin", "0 2 * * *", "2023-10-28T00:00:00Z", CAL_DST_WALL, once, 2);
    expect_fires("Europe/Berlin", "0 2 * * *", "2023-10-28T00:00:00Z", CAL_DST_ABSOLUTE, twice, 3);
    const char *both[] = {"2023-10-29T00:40:00Z", "2023-10-29T01:00:00Z", "2023-10-29T01:20:00Z"};
    const char *skip[] = {"2023-10-29T00:40:00Z", "2023-10-29T02:00:00Z", "2023-10-29T02:20:00Z"};
    expect_fires("Europe/Berlin", "*/20 * * * *", "2023-10-29T00:30:00Z", CAL_DST_ABSOLUTE, both, 3);
    expect_fires("Europe/Berlin", "*/20 * * * *", "2023-10-29T00:30:00Z", CAL_DST_WALL, skip, 3);
}

/* Australia/Sydney, 2019-10-06 02:00 AEST -> 03:00 AEDT, "30 2-23/4 * * *"
 * from 22:30 on the 5th (12:30Z): cronie fires 02:30 at the jump (16:00Z);
 * the absolute and wall rules skip it and fire 06:30 AEDT (19:30Z); the
 * pre-v244 systemd rule starts over the next day: 02:30 AEDT on the 7th
 * (15:30Z on the 6th), issue systemd#13745's 27-hour gap. */
static void test_spring_forward(void **state)
{
    (void)state;
    const char *from = "2019-10-05T12:30:00Z";
    const char *jump[] = {"2019-10-05T16:00:00Z"};
    const char *skip[] = {"2019-10-05T19:30:00Z"};
    const char *day[] = {"2019-10-06T15:30:00Z"};
    expect_fires("Australia/Sydney", "30 2-23/4 * * *", from, CAL_DST_CRONIE, jump, 1);
    expect_fires("Australia/Sydney", "30 2-23/4 * * *", from, CAL_DST_ABSOLUTE, skip, 1);
    expect_fires("Australia/Sydney", "30 2-23/4 * * *", from, CAL_DST_WALL, skip, 1);
    expect_fires("Australia/Sydney", "30 2-23/4 * * *", from, CAL_DST_WALL_GAP_NEXT_DAY, day, 1);
}

/* Europe/Dublin, 2025-03-30 01:00 GMT -> 02:00 IST, hourly from 22:00Z on
 * the 29th (PR systemd#36897's example): 23:00Z, 00:00Z, then the bug
 * answers 00:00Z again (not after its base); fixed: 01:00Z (02:00 IST). */
static void test_negative_dst(void **state)
{
    (void)state;
    const struct cal_zone *z;
    struct cal_cron c;
    char err[CAL_ERR_SIZE];
    assert_int_equal(cal_zone_get("Europe/Dublin", &z, err, sizeof err), 0);
    assert_int_equal(cal_cron_parse("0 * * * *", 0, &c, err, sizeof err, NULL), 0);
    int64_t t = utc("2025-03-29T22:00:00Z");
    assert_int_equal(cal_cron_next_rule(&c, z, t, CAL_DST_WALL_NEG_BACK), utc("2025-03-29T23:00:00Z"));
    t = utc("2025-03-29T23:00:00Z");
    assert_int_equal(cal_cron_next_rule(&c, z, t, CAL_DST_WALL_NEG_BACK), utc("2025-03-30T00:00:00Z"));
    t = utc("2025-03-30T00:00:00Z");
    assert_int_equal(cal_cron_next_rule(&c, z, t, CAL_DST_WALL_NEG_BACK), t);
    assert_int_equal(cal_cron_next_rule(&c, z, t + 1800, CAL_DST_WALL_NEG_BACK), t);
    assert_int_equal(cal_cron_next_rule(&c, z, t, CAL_DST_WALL), utc("2025-03-30T01:00:00Z"));
    /* past the gap the bug is gone */
    t = utc("2025-03-30T01:00:00Z");
    assert_int_equal(cal_cron_next_rule(&c, z, t, CAL_DST_WALL_NEG_BACK), utc("2025-03-30T02:00:00Z"));
}

/* Away from transitions every rule is cronie's: a year of an every-7-hours
 * job in a zone with DST, compared fire by fire. */
static void test_rules_agree_elsewhere(void **state)
{
    (void)state;
    const struct cal_zone *z;
    struct cal_cron c;
    char err[CAL_ERR_SIZE];
    assert_int_equal(cal_zone_get("America/New_York", &z, err, sizeof err), 0);
    assert_int_equal(cal_cron_parse("15 */7 * * *", 0, &c, err, sizeof err, NULL), 0);
    int64_t t = utc("2025-04-01T00:00:00Z"), end = utc("2025-10-01T00:00:00Z");
    while (t < end) {
        int64_t f = cal_cron_next(&c, z, t);
        for (int r = CAL_DST_ABSOLUTE; r <= CAL_DST_WALL_NEG_BACK; r++)
            assert_int_equal(cal_cron_next_rule(&c, z, t, (enum cal_dst_rule)r), f);
        t = f;
    }
}

/* Quartz's CronExpression.getTimeAfter (CAL_DST_QUARTZ), America/New_York
 * (answers checked against Quartz's CronExpression on JDK 17).  Spring
 * 2025-03-09, 02:00 EST -> 03:00 EDT: a daily 02:30 does not exist that
 * day and is skipped (cronie fires at the jump, 07:00Z).  Fall 2025-11-02,
 * 02:00 EDT -> 01:00 EST: a repeated wall time is read as its second
 * occurrence, so every 15 minutes is silent for the first pass of 01:xx
 * (05:00Z-05:45Z) and a daily 01:30 fires at 06:30Z (cronie: 05:30Z); a
 * search from inside the first pass goes on in the second from its wall
 * time (after 05:10Z = 01:10 EDT: 01:15 EST = 06:15Z). */
static void test_quartz(void **state)
{
    (void)state;
    const char *gap[] = {"2025-03-08T07:30:00Z", "2025-03-10T06:30:00Z"};
    expect_fires("America/New_York", "30 2 * * *", "2025-03-08T00:00:00Z", CAL_DST_QUARTZ, gap, 2);
    const char *jump[] = {"2025-03-08T07:30:00Z", "2025-03-09T07:00:00Z"};
    expect_fires("America/New_York", "30 2 * * *", "2025-03-08T00:00:00Z", CAL_DST_CRONIE, jump, 2);
    const char *q15[] = {"2025-11-02T04:45:00Z", "2025-11-02T06:00:00Z", "2025-11-02T06:15:00Z"};
    expect_fires("America/New_York", "*/15 * * * *", "2025-11-02T04:30:00Z", CAL_DST_QUARTZ, q15, 3);
    const char *daily[] = {"2025-11-01T05:30:00Z", "2025-11-02T06:30:00Z", "2025-11-03T06:30:00Z"};
    expect_fires("America/New_York", "30 1 * * *", "2025-11-01T00:00:00Z", CAL_DST_QUARTZ, daily, 3);
    const char *inside[] = {"2025-11-02T06:15:00Z", "2025-11-02T06:30:00Z"};
    expect_fires("America/New_York", "*/15 * * * *", "2025-11-02T05:10:00Z", CAL_DST_QUARTZ, inside, 2);
    const char *first[] = {"2025-11-02T05:30:00Z"};
    expect_fires("America/New_York", "30 1 * * *", "2025-11-02T00:00:00Z", CAL_DST_CRONIE, first, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fall_back),
        cmocka_unit_test(test_spring_forward),
        cmocka_unit_test(test_negative_dst),
        cmocka_unit_test(test_rules_agree_elsewhere),
        cmocka_unit_test(test_quartz),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    cal_zone_cache_free();
    return rc;
}
