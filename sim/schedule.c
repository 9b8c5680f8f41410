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
 * Changes while running (struct sched_change) split the time line into
 * segments, each with a definition in force and an enabled flag; the
 * instants of a segment are its definition's, from the segment's start.
 * A policy sees a schedule as of now (schedule_next_asof): the changes made
 * so far, the definition in force extended forever, and nothing of the
 * future; the checker sees all of them.
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

/* --- changes while running -------------------------------------------------- */

/* One definition of nominal instants: the base one or a changed one. */
struct sdef {
    enum sched_kind kind;
    int64_t every_us, offset_us, at_us;
    struct cal_cron cron;
    const struct cal_zone *zone;
    int never;                     /* read with AND, it never fires */
    enum cal_dst_rule dst;         /* a cron definition's DST rule */
};

static void def_base(const struct schedule *sc, struct sdef *d)
{
    *d = (struct sdef){.kind = sc->kind, .every_us = sc->every_us, .offset_us = sc->offset_us,
                       .at_us = sc->at_us, .cron = sc->cron, .zone = sc->zone};
}

static void def_apply_read(struct sdef *d, const struct sched_read *rd)
{
    if (!rd || d->kind != SCHED_CRON)
        return;
    if (rd->zone)
        d->zone = rd->zone;
    d->dst = rd->dst;
    if (rd->days_and && d->cron.day_or && cal_cron_use_and(&d->cron) != 0)
        d->never = 1;
}

/* The state in force after change c: *enabled and *d. */
static void change_apply(const struct sched_change *c, int *enabled, struct sdef *d, const struct sched_read *rd)
{
    switch ((enum sched_op)c->op) {
    case SCHED_OP_DISABLE: *enabled = 0; break;
    case SCHED_OP_ENABLE: *enabled = 1; break;
    case SCHED_OP_SET:
        *d = (struct sdef){.kind = c->kind, .every_us = c->every_us, .offset_us = c->at_us, .cron = c->cron,
                           .zone = c->zone};
        def_apply_read(d, rd);
        break;
    }
}

/* The first instant >= from_us of one definition, ignoring the horizon. */
static int64_t def_first(const struct scenario *s, const struct sdef *d, int64_t from_us)
{
    if (d->never || d->kind == SCHED_NONE)
        return SIM_NEVER;
    if (d->kind == SCHED_CRON && d->dst != CAL_DST_CRONIE) {
        /* Another DST rule may answer an instant before from_us
         * (CAL_DST_WALL_NEG_BACK), which is passed on. */
        int64_t after_s = s->start_utc_s + ceil_div(from_us, US_PER_S) - 1;
        if (after_s >= CAL_MAX_S)
            return SIM_NEVER;
        return from_cal(s, cal_cron_next_rule(&d->cron, d->zone, after_s, d->dst));
    }
    struct schedule tmp = {.kind = d->kind, .every_us = d->every_us, .offset_us = d->offset_us,
                           .at_us = d->at_us, .cron = d->cron, .zone = d->zone};
    return first_from(s, &tmp, from_us);
}

/* Changes visible at asof_us: those made by then. */
static uint32_t changes_by(const struct schedule *sc, int64_t asof_us)
{
    uint32_t n = 0;
    while (n < sc->nchanges && sc->changes[n].at_us <= asof_us)
        n++;
    return n;
}

/* The first instant >= from_us (>= 0) of the schedule with its first n
 * changes, read with rd.  O(changes + a step of the definition in force). */
static int64_t first_from_changed(const struct scenario *s, const struct schedule *sc, int64_t from_us, uint32_t n,
                                  const struct sched_read *rd)
{
    struct sdef d;
    def_base(sc, &d);
    def_apply_read(&d, rd);
    int enabled = 1;
    uint32_t i = 0;
    while (i < n && sc->changes[i].at_us <= from_us)
        change_apply(&sc->changes[i++], &enabled, &d, rd);
    int64_t seg_from = from_us;
    for (;;) {
        int64_t seg_end = i < n ? sc->changes[i].at_us : SIM_NEVER;
        if (enabled) {
            int64_t t = def_first(s, &d, seg_from);
            if (t < seg_end)
                return t;
        }
        if (i == n)
            return SIM_NEVER;
        seg_from = sc->changes[i].at_us;
        change_apply(&sc->changes[i++], &enabled, &d, rd);
    }
}

static int64_t next_of(const struct scenario *s, const struct schedule *sc, int64_t from_us, uint32_t n,
                       const struct sched_read *rd)
{
    if (n == 0 && !rd)
        return first_from(s, sc, from_us);
    return first_from_changed(s, sc, from_us, n, rd);
}

/* The last instant <= t_us (t_us >= 0) of one definition, -1 if none. */
static int64_t def_last(const struct scenario *s, const struct sdef *d, int64_t t_us)
{
    if (d->never)
        return -1;
    switch (d->kind) {
    case SCHED_EVERY:
        return t_us < d->offset_us ? -1 : d->offset_us + (t_us - d->offset_us) / d->every_us * d->every_us;
    case SCHED_AT:
        return d->at_us <= t_us ? d->at_us : -1;
    case SCHED_CRON: {
        /* fires are whole seconds: the last one <= t is the last one before
         * the next whole second */
        int64_t f = cal_cron_prev(&d->cron, d->zone, s->start_utc_s + t_us / US_PER_S + 1);
        return f == INT64_MIN || f < s->start_utc_s ? -1 : (f - s->start_utc_s) * US_PER_S;
    }
    case SCHED_NONE:
        break;
    }
    return -1;
}

int64_t schedule_prev_asof(const struct scenario *s, const struct schedule *sc, int64_t t_us, int64_t asof_us)
{
    SIM_ASSERT(t_us >= 0);
    uint32_t n = changes_by(sc, asof_us);
    struct sdef d;
    def_base(sc, &d);
    int enabled = 1;
    int64_t best = -1, seg_from = 0;
    /* Segments in time order: the last instant <= t of each enabled one,
     * from its start; the latest found wins. */
    for (uint32_t i = 0; i <= n && seg_from <= t_us; i++) {
        int64_t seg_end = i < n ? sc->changes[i].at_us : SIM_NEVER;
        if (enabled) {
            int64_t c = def_last(s, &d, seg_end - 1 < t_us ? seg_end - 1 : t_us);
            if (c >= seg_from)
                best = c;
        }
        if (i < n) {
            change_apply(&sc->changes[i], &enabled, &d, NULL);
            seg_from = seg_end;
        }
    }
    return best;
}

/* --- the questions ------------------------------------------------------------ */

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
    if (sc->nchanges == 0) {
        for (int64_t t = first_from(s, sc, from_us); t < to_us; t = after_due(s, sc, t)) {
            n++;
            if (fn && fn(ctx, t))
                break;
        }
        return n;
    }
    for (int64_t t = next_of(s, sc, from_us, sc->nchanges, NULL); t < to_us;
         t = next_of(s, sc, t + 1, sc->nchanges, NULL)) {
        n++;
        if (fn && fn(ctx, t))
            break;
    }
    return n;
}

int64_t schedule_next_asof(const struct scenario *s, const struct schedule *sc, int64_t after_us, int inclusive,
                           int64_t asof_us, const struct sched_read *rd)
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
    int64_t t = next_of(s, sc, from_us, changes_by(sc, asof_us), rd);
    return t < s->horizon_us ? t : SIM_NEVER;
}

int64_t schedule_next(const struct scenario *s, const struct schedule *sc, int64_t after_us, int inclusive)
{
    return schedule_next_asof(s, sc, after_us, inclusive, SIM_NEVER, NULL);
}

int64_t schedule_period_at(const struct scenario *s, const struct schedule *sc, int64_t due_us)
{
    if (sc->nchanges) {
        /* The period of the definition in force at due_us. */
        struct sdef d;
        def_base(sc, &d);
        int enabled = 1;
        for (uint32_t i = 0; i < sc->nchanges && sc->changes[i].at_us <= due_us; i++)
            change_apply(&sc->changes[i], &enabled, &d, NULL);
        if (d.kind == SCHED_EVERY)
            return d.every_us;
        if (d.kind != SCHED_CRON)
            return INT64_MAX;
        struct schedule tmp = {.kind = d.kind, .cron = d.cron, .zone = d.zone};
        int64_t next = after_due(s, &tmp, due_us);
        return next == SIM_NEVER ? INT64_MAX : next - due_us;
    }
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

void schedule_state_at(const struct schedule *sc, int64_t t_us, struct sched_state *out)
{
    struct sdef d;
    def_base(sc, &d);
    int enabled = 1;
    int64_t changed = -1;
    for (uint32_t i = 0; i < sc->nchanges && sc->changes[i].at_us <= t_us; i++) {
        change_apply(&sc->changes[i], &enabled, &d, NULL);
        changed = sc->changes[i].at_us;
    }
    *out = (struct sched_state){.enabled = enabled, .kind = d.kind,
                                .every_us = d.kind == SCHED_EVERY ? d.every_us : 0,
                                .cron_days_or = d.kind == SCHED_CRON && d.cron.day_or, .changed_us = changed};
}
