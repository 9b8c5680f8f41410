/* schedule.c: the nominal due instants of producers' schedules.
 *
 * Due instants are virtual times (microseconds since the scenario's start)
 * and only instants in [0, horizon) are due.  EVERY is arithmetic, O(1) per
 * question; AT is one instant; CRON walks cal_cron_next in the schedule's
 * zone, whose fires are whole seconds: virtual time t maps to the calendar
 * second start_utc_s + floor(t / 1e6), and a fire f back to
 * (f - start_utc_s) * 1e6.  Each CRON step costs what cal_cron_next costs
 * (O(1) per zone transition crossed).
 *
 * Invariant: schedule_next, schedule_dues and schedule_period_at walk the
 * same set of instants, so that the checker (which counts dues and misses)
 * and the policies (which fire them) can never disagree about it. */
#include <stdint.h>

#include "sim/scenario.h"
#include "sim/util.h"

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && a > 0) ? q + 1 : q;
}

/* Relative virtual time of a calendar fire, SIM_NEVER if none. */
static int64_t from_cal(const struct scenario *s, int64_t fire_s)
{
    if (fire_s == INT64_MAX)
        return SIM_NEVER;
    int64_t rel = fire_s - s->start_utc_s;
    if (rel > (SIM_NEVER - 1) / US_PER_S)
        return SIM_NEVER;
    return rel * US_PER_S;
}

/* The first nominal instant >= from_us (from_us >= 0), ignoring the
 * horizon; SIM_NEVER if there is none. */
static int64_t first_from(const struct scenario *s, const struct schedule *sc, int64_t from_us)
{
    SIM_ASSERT(from_us >= 0);
    switch (sc->kind) {
    case SCHED_EVERY: {
        SIM_ASSERT(sc->every_us > 0);
        if (from_us <= sc->offset_us)
            return sc->offset_us;
        int64_t k = ceil_div(from_us - sc->offset_us, sc->every_us);
        if (k > (SIM_NEVER - 1 - sc->offset_us) / sc->every_us)
            return SIM_NEVER;
        return sc->offset_us + k * sc->every_us;
    }
    case SCHED_AT:
        return from_us <= sc->at_us ? sc->at_us : SIM_NEVER;
    case SCHED_CRON: {
        /* A fire f is >= from_us when f >= start + ceil(from_us / 1e6). */
        int64_t after_s = s->start_utc_s + ceil_div(from_us, US_PER_S) - 1;
        if (after_s >= CAL_MAX_S)
            return SIM_NEVER;
        return from_cal(s, cal_cron_next(&sc->cron, sc->zone, after_s));
    }
    case SCHED_NONE:
        break;
    }
    return SIM_NEVER;
}

/* The nominal instant after the due instant t (t itself nominal). */
static int64_t after_due(const struct scenario *s, const struct schedule *sc, int64_t t)
{
    switch (sc->kind) {
    case SCHED_EVERY:
        return t > SIM_NEVER - 1 - sc->every_us ? SIM_NEVER : t + sc->every_us;
    case SCHED_CRON:
        return from_cal(s, cal_cron_next(&sc->cron, sc->zone, s->start_utc_s + floor_div(t, US_PER_S)));
    case SCHED_AT:
    case SCHED_NONE:
        break;
    }
    return SIM_NEVER;
}

uint64_t schedule_dues(const struct scenario *s, const struct schedule *sc, int64_t from_us, int64_t to_us,
                       int (*fn)(void *ctx, int64_t due_us), void *ctx)
{
    if (to_us > s->horizon_us)
        to_us = s->horizon_us;
    if (from_us < 0)
        from_us = 0;
    uint64_t n = 0;
    if (from_us >= to_us)
        return 0;
    for (int64_t t = first_from(s, sc, from_us); t < to_us; t = after_due(s, sc, t)) {
        n++;
        if (fn && fn(ctx, t))
            break;
    }
    return n;
}

int64_t schedule_next(const struct scenario *s, const struct schedule *sc, int64_t after_us, int inclusive)
{
    int64_t from_us;
    if (inclusive)
        from_us = after_us;
    else if (after_us >= s->horizon_us)
        return SIM_NEVER;
    else
        from_us = after_us + 1;
    if (from_us >= s->horizon_us)
        return SIM_NEVER;
    if (from_us < 0)
        from_us = 0;
    int64_t t = first_from(s, sc, from_us);
    return t < s->horizon_us ? t : SIM_NEVER;
}

int64_t schedule_period_at(const struct scenario *s, const struct schedule *sc, int64_t due_us)
{
    switch (sc->kind) {
    case SCHED_EVERY:
        return sc->every_us;
    case SCHED_CRON: {
        int64_t next = after_due(s, sc, due_us);
        return next == SIM_NEVER ? INT64_MAX : next - due_us;
    }
    case SCHED_AT:
    case SCHED_NONE:
        break;
    }
    return INT64_MAX;
}

