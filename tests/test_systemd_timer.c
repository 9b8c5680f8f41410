/* test_systemd_timer.c: the systemd_timer policy on timelines computed by
 * hand from systemd.timer(5) and the rules of docs/policy-systemd_timer.md.
 * Most tests set accuracy=1us (AccuracySec=1us: "exact"), so that elapses
 * fall on the calendar; one checks the coalescing of the default 1 min. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/util.h"
#include "tests/simtest.h"

#define S(x) ((int64_t)((x) * 1e6 + 0.5))
#define MIN(x) ((int64_t)(x) * 60 * US_PER_S)
#define HOUR(x) ((int64_t)(x) * 3600 * US_PER_S)

static void run(const char *text, const char *kv, struct sim_result *r)
{
    simtest_run(text, "systemd_timer", kv, 1, 1, r);
}

/* Persistent= (the man page: "the service unit is triggered immediately if
 * it would have been triggered at least once during the time when the timer
 * was inactive"): OnCalendar=daily, the machine off every night 23:00 ->
 * 08:00.  Without it each boot computes the next elapse from the boot, the
 * next midnight, when the machine is off again: only the run at 0.  With
 * it the stamp of the last elapse is before the missed midnight, which is
 * clamped to the boot: one run at 08:00 each day, 8 h late (issue
 * systemd/systemd#13584). */
static void test_persistent(void **state)
{
    (void)state;
    const char *text = "horizon 4d\n"
                       "workflow w\n"
                       "  producer rot cron \"0 0 * * *\" runs 10s publish t\n"
                       "crash host at 23h for 9h\n"
                       "crash host at 1d23h for 9h\n"
                       "crash host at 2d23h for 9h\n";
    struct sim_result r;
    run(text, "accuracy=1us", &r);
    simtest_expect_metric(&r, "runs", 1);
    simtest_expect_metric(&r, "missed", 3);
    sim_result_free(&r);
    run(text, "accuracy=1us persistent=true", &r);
    const int64_t starts[] = {0, HOUR(32), HOUR(56), HOUR(80)};
    simtest_expect_starts(&r, -1, starts, 4);
    simtest_expect_metric(&r, "missed", 0);
    simtest_expect_metric(&r, "lateness.max", (double)HOUR(8));
    sim_result_free(&r);
}

/* Persistent= before the first elapse: the stamp file is made when the
 * timer is first started (timer_start: "The timer has never run before,
 * make sure a stamp file exists"), with its time then, and read at the
 * next boot as the last trigger.  A daily timer activated at 01:00 whose
 * machine is off from 23:00 to 09:00 the next day: the midnight missed
 * while off is after the stamp (the activation), so it elapses at the
 * boot, 1d08:00 after the start, then the next midnights as usual.  A
 * one-time `at 5h` with the machine off 4h -> 6h elapses at the boot (6h).
 * Without Persistent= both are missed. */
static void test_persistent_first_boot(void **state)
{
    (void)state;
    const char *daily = "start 2025-01-01T01:00:00Z\n"
                        "timezone UTC\n"
                        "horizon 3d\n"
                        "workflow w\n"
                        "  producer rot cron \"0 0 * * *\" runs 10s publish t\n"
                        "crash host at 22h for 10h\n";
    struct sim_result r;
    run(daily, "accuracy=1us persistent=true", &r);
    const int64_t starts[] = {HOUR(32), HOUR(47), HOUR(71)};
    simtest_expect_starts(&r, -1, starts, 3);
    simtest_expect_metric(&r, "missed", 0);
    assert_int_equal(simtest_nth(&r, "start", "due=23:00:00", 0), HOUR(32));
    sim_result_free(&r);
    run(daily, "accuracy=1us", &r);
    simtest_expect_metric(&r, "missed", 1);
    simtest_expect_metric(&r, "runs", 2);
    sim_result_free(&r);

    const char *once = "start 2025-01-01T00:00:00Z\n"
                       "timezone UTC\n"
                       "horizon 1d\n"
                       "workflow w\n"
                       "  producer p at 5h runs 1m publish t\n"
                       "crash host at 4h for 2h\n";
    run(once, "accuracy=1us persistent=true", &r);
    const int64_t at_boot[] = {HOUR(6)};
    simtest_expect_starts(&r, -1, at_boot, 1);
    simtest_expect_metric(&r, "missed", 0);
    sim_result_free(&r);
    run(once, "accuracy=1us", &r);
    simtest_expect_metric(&r, "runs", 0);
    simtest_expect_metric(&r, "missed", 1);
    sim_result_free(&r);
}

/* Never a second instance.  OnCalendar=hourly with a 90 min service: the
 * timer is disarmed while the service runs; when it ends (1h30) the next
 * elapse after the last trigger (0) is 1h, already past: it elapses at once,
 * serving 1h; then from 1h30, 2h is past at 3h: starts 0, 1h30, 3h, 4h30,
 * and 6h (the drain: 5h is before the horizon).
 * OnUnitActiveSec=10min (every 10m) with a 15 min service: next = the last
 * activation + 10 min, past at each end: back to back, every 15 min.
 * OnUnitInactiveSec: 10 min after each end: every 25 min. */
static void test_one_instance(void **state)
{
    (void)state;
    const char *text = "horizon 6h\n"
                       "workflow w\n"
                       "  producer p cron \"0 * * * *\" runs 90m publish t\n"
                       "  producer q every 10m runs 15m publish t\n";
    struct sim_result r;
    run(text, "accuracy=1us", &r);
    const int64_t p_starts[] = {0, MIN(90), MIN(180), MIN(270), MIN(360)};
    simtest_expect_starts(&r, 0, p_starts, 5);
    assert_int_equal(simtest_nth(&r, "start", "due=01:00:00", 0), MIN(90));
    for (int i = 0; i < 24; i++)
        assert_int_equal(simtest_nth(&r, "start", "due=-", i), MIN(15 * i));
    simtest_expect_metric(&r, "overlaps", 0);
    sim_result_free(&r);
    run(text, "accuracy=1us interval=unit_inactive", &r);
    for (int i = 0; i < 14; i++)
        assert_int_equal(simtest_nth(&r, "start", "due=-", i), MIN(25 * i));
    sim_result_free(&r);
}

/* AccuracySec=1min (the default): an elapse at T fires at the latest
 * instant of [T, T + 1 min] on the boot's one-minute grid, the same for
 * every timer of the host: five timers due at each hour fire together,
 * within the minute after it.  RandomizedDelaySec=1h spreads them. */
static void test_coalescing(void **state)
{
    (void)state;
    const char *text = "horizon 3h\n"
                       "workflow w x 5\n"
                       "  producer p cron \"0 * * * *\" runs 1s publish t\n";
    struct sim_result r;
    run(text, "", &r);
    simtest_expect_metric(&r, "runs", 15);
    for (int h = 0; h < 3; h++) {
        int64_t first = simtest_nth(&r, "start", NULL, 5 * h);
        assert_true(first >= HOUR(h) && first <= HOUR(h) + MIN(1));
        for (int k = 1; k < 5; k++)
            assert_int_equal(simtest_nth(&r, "start", NULL, 5 * h + k), first);
    }
    sim_result_free(&r);
    run(text, "randomized_delay=1h", &r);
    simtest_expect_metric(&r, "runs", 15);
    assert_true(simtest_nth(&r, "start", NULL, 0) != simtest_nth(&r, "start", NULL, 1));
    sim_result_free(&r);
}

/* Australia/Sydney, 2019-10-06 02:00 AEST -> 03:00 AEDT; a timer at 02:30,
 * 06:30, ... 22:30 (the schedule "30 2-23/4 * * *").  Since v244 the 02:30
 * that does not exist is skipped, and 06:30 runs; before (issue
 * systemd/systemd#13745) the search restarted the next day: nothing from
 * 22:30 on the 5th (12:30Z) until 02:30 on the 7th (15:30Z the 6th), 27 h,
 * 6 dues missed.  simrun's own calendar fires the gap time at the jump
 * (16:00Z): 13 dues in the 2 days (from 10:00 on the 5th), 12 runs. */
static void test_spring_forward(void **state)
{
    (void)state;
    const char *text = "start 2019-10-05T00:00:00Z\n"
                       "timezone Australia/Sydney\n"
                       "horizon 2d\n"
                       "workflow w\n"
                       "  producer p cron \"30 2-23/4 * * *\" runs 1m publish t\n";
    struct sim_result r;
    run(text, "accuracy=1us", &r);
    simtest_expect_metric(&r, "missed", 1);
    assert_int_equal(simtest_count(&r, "start", NULL), 12);
    sim_result_free(&r);
    run(text, "accuracy=1us calendar_bug=gap_skips_day", &r);
    simtest_expect_metric(&r, "missed", 6);
    assert_int_equal(simtest_nth(&r, "start", NULL, 3), HOUR(12) + MIN(30));
    assert_int_equal(simtest_nth(&r, "start", NULL, 4), HOUR(39) + MIN(30));
    sim_result_free(&r);
}

/* Europe/Berlin, 2023-10-29 03:00 CEST -> 02:00 CET, an every-minute timer
 * (issue systemd/systemd#8647): after 02:59 CEST (00:59Z) the next wall
 * minute is 03:00, which is 03:00 CET (02:00Z): the repeated hour is silent,
 * 60 minutes of dues missed.  In UTC (time_zone=UTC) nothing is missed. */
static void test_fall_back_silent_hour(void **state)
{
    (void)state;
    const char *text = "start 2023-10-28T23:00:00Z\n"
                       "timezone Europe/Berlin\n"
                       "horizon 4h\n"
                       "workflow w\n"
                       "  producer p cron \"* * * * *\" runs 1s publish t\n";
    struct sim_result r;
    run(text, "accuracy=1us", &r);
    simtest_expect_metric(&r, "missed", 60);
    assert_int_equal(simtest_nth(&r, "start", NULL, 119), HOUR(1) + MIN(59));
    assert_int_equal(simtest_nth(&r, "start", NULL, 120), HOUR(3));
    sim_result_free(&r);
    run(text, "accuracy=1us time_zone=UTC", &r);
    simtest_expect_metric(&r, "missed", 0);
    sim_result_free(&r);
}

/* Europe/Dublin, 2025-03-30 01:00 GMT -> 02:00 IST, OnCalendar=hourly (PR
 * systemd/systemd#36897, "iteration #3: the same firing time"): after the
 * elapse at 00:00Z every next elapse is 00:00Z again, already past, until
 * the base passes the gap at 01:00Z.  The service's start rate limit
 * (StartLimitBurst=5 in StartLimitIntervalSec=10s, the defaults) caps the
 * loop, as in the real incidents (systemd/systemd#32039: the service
 * "failing ... because of start-limit-hit", the timer "trying to start it
 * continuously"; #32047: 100% CPU from 00:00 for an hour): the 1 s service
 * runs at 00:00:00 .. 00:00:04; the start at 00:00:05 is refused, and the
 * timer, its next elapse still past, elapses and is refused again and
 * again (a hot loop, one wake-up per ms) until a start is more than 10 s
 * after the window's first: the loop's tick at 00:00:10.001 starts the next
 * window.  Windows every 10.001 s, 5 runs each, the last one from 00:59:50.359
 * (the 360th): 1800 runs for the 00:00 due, and 5000 wake-ups per loop.
 * The 02:00 IST due (01:00Z) is missed: the loop ends after it, and the
 * next elapse from there is 03:00 IST.  Without the limit
 * (start_limit_burst=0) the service runs back to back: 3601 runs. */
static void test_negative_dst_loop(void **state)
{
    (void)state;
    const char *text = "start 2025-03-29T20:00:00Z\n"
                       "timezone Europe/Dublin\n"
                       "horizon 8h\n"
                       "workflow w\n"
                       "  producer p cron \"0 * * * *\" runs 1s publish t\n";
    struct sim_result r;
    run(text, "accuracy=1us calendar_bug=negative_dst", &r);
    simtest_expect_metric(&r, "dues", 8);
    assert_int_equal(simtest_count(&r, "start", "due=04:00:00"), 1800);
    simtest_expect_metric(&r, "duplicates", 1799);
    simtest_expect_metric(&r, "runs", 1806);
    simtest_expect_metric(&r, "missed", 1);
    for (int i = 0; i < 5; i++)
        assert_int_equal(simtest_nth(&r, "start", "due=04:00:00", i), HOUR(4) + S(i));
    assert_int_equal(simtest_nth(&r, "start", "due=04:00:00", 5), HOUR(4) + S(10.001));
    assert_int_equal(simtest_nth(&r, "start", "due=04:00:00", 1799), HOUR(4) + S(3594.359));
    assert_true(simtest_metric(&r, -1, "wakeups") >= 360 * 5000.0);
    sim_result_free(&r);
    run(text, "accuracy=1us calendar_bug=negative_dst start_limit_burst=0", &r);
    simtest_expect_metric(&r, "duplicates", 3600);
    simtest_expect_metric(&r, "runs", 3607);
    assert_int_equal(simtest_count(&r, "start", "due=04:00:00"), 3601);
    sim_result_free(&r);
    run(text, "accuracy=1us", &r);
    simtest_expect_metric(&r, "runs", 8);
    simtest_expect_metric(&r, "duplicates", 0);
    sim_result_free(&r);
}

/* The start rate limit without a loop: OnUnitActiveSec=1s (every 1s) with
 * a 100 ms service.  Starts at 0 .. 4 s fill the window opened at 0; the
 * elapse at 5 s is refused (start-limit-hit, no run), and the next elapse
 * counts from that trigger: 6 s, ... 10 s, all refused (10 s is not more
 * than the interval after 0); 11 s opens a new window.  So 5 runs every
 * 11 s: 0-4, 11-15, 22-26 in 30 s; no hot loop (the next elapse is always
 * ahead).  start_limit_interval=0 turns the limit off: 30 runs. */
static void test_start_limit(void **state)
{
    (void)state;
    const char *text = "horizon 30s\n"
                       "workflow w\n"
                       "  producer q every 1s runs 100ms publish t\n";
    struct sim_result r;
    run(text, "accuracy=1us", &r);
    const int64_t starts[] = {S(0),  S(1),  S(2),  S(3),  S(4),  S(11), S(12), S(13),
                              S(14), S(15), S(22), S(23), S(24), S(25), S(26)};
    simtest_expect_starts(&r, -1, starts, 15);
    sim_result_free(&r);
    run(text, "accuracy=1us start_limit_interval=0", &r);
    simtest_expect_metric(&r, "runs", 30);
    sim_result_free(&r);
}

/* Consumers: a path-activated service, run at each event; a failure is
 * not retried (Restart=no): the item waits for the next event. */
static void test_consumer(void **state)
{
    (void)state;
    const char *text = "horizon 1h\n"
                       "workflow w\n"
                       "  consumer c subscribe t fifo runs 2s\n"
                       "publish t at 10m\n"
                       "publish t at 20m\n";
    struct sim_result r;
    run(text, "", &r);
    const int64_t starts[] = {MIN(10), MIN(20)};
    simtest_expect_starts(&r, -1, starts, 2);
    sim_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_persistent),
        cmocka_unit_test(test_persistent_first_boot),
        cmocka_unit_test(test_one_instance),
        cmocka_unit_test(test_coalescing),
        cmocka_unit_test(test_spring_forward),
        cmocka_unit_test(test_fall_back_silent_hour),
        cmocka_unit_test(test_negative_dst_loop),
        cmocka_unit_test(test_start_limit),
        cmocka_unit_test(test_consumer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
