/* systemd_timer.c: systemd timer units, each starting its service unit, as
 * PID 1 runs them (src/core/timer.c, sd-event's coalescing).  The rules with
 * their sources are in docs/policy-systemd_timer.md; this is the map.
 *
 * Mapping.  Each producer instance is a timer and its service: a cron
 * schedule is OnCalendar= (in time_zone), an `every D offset O` schedule is
 * OnBootSec=O plus OnUnitActiveSec=D (or OnUnitInactiveSec=D), an `at T`
 * schedule a one-time OnCalendar=.  The host is the machine: a crash is a
 * power cut and the restart a boot.  Consumers are services started by a
 * path unit when their spool has work (sim/conrun.h), Restart=no: a failed
 * run leaves its items for the next trigger.
 *
 * One timer:
 *  - When it is started (boot) and whenever its service goes inactive, it
 *    computes its next elapse: OnCalendar: the first calendar time after
 *    the base (the last trigger if known: in memory, or with Persistent=
 *    the stamp on disk at boot, made at the timer's first activation;
 *    else the timer's activation), no earlier
 *    than the boot; monotonic: boot + OnBootSec (once per boot) or the
 *    service's last activation (or deactivation) + the interval.  Then the
 *    random delay (uniform [0, RandomizedDelaySec) each time, or a fixed
 *    per-unit offset), then AccuracySec: the kernel timer fires at sd-event's
 *    sleep_between(next, next + AccuracySec), the latest instant in that
 *    window on a grid of 1 min (else 10 s, 1 s, 250 ms) shifted by the
 *    boot's perturbation, shared by every timer of the host.
 *  - At the elapse it records the trigger (in memory, and the stamp) and
 *    starts the service; it then stays disarmed until the service is
 *    inactive again: never a second instance, and fires that passed
 *    meanwhile collapse into one elapse at the end (the base is the last
 *    trigger, already in the past).
 *  - The service's start rate limit (StartLimitBurst= starts per
 *    StartLimitIntervalSec=, 5 per 10 s): a start beyond it is refused, no
 *    run, the service failed, and the timer waits again from that trigger;
 *    if its next elapse is already past it loops on refused starts (a
 *    ticker counting wake-ups) until the window is over.
 *  - Calendar fires follow systemd's wall clock (CAL_DST_WALL): a time in
 *    a spring-forward gap is skipped, and wall time never goes back (a
 *    repeated hour fires nothing again); calendar_bug switches on the two
 *    calendar bugs of past releases.
 *
 * Key invariant: a timer is WAITING with an elapse armed (or none left), or
 * looping on refused starts (its ticker armed for the window's end), or
 * RUNNING with its service's run active; the stamp is the last elapse (or,
 * before the first, the timer's first activation).
 * Durable: the stamps (/var/lib/systemd/timers).  Volatile: everything else
 * (a boot starts over). */
#include <stdlib.h>

#include "sim/backoff.h"
#include "sim/cal.h"
#include "sim/conrun.h"
#include "sim/policy_api.h"
#include "sim/rng.h"
#include "sim/util.h"

enum { T_ELAPSE = 1, T_CON, T_LOOP /* + the timer: its hot loop of refused starts */ };
enum { IV_ACTIVE, IV_INACTIVE };
enum { BUG_NONE, BUG_GAP_DAY, BUG_NEG_DST };

struct st_durable {
    int init;
    int64_t *stamp;                /* [nh] the last elapse, else the first activation (Persistent=); -1 none */
};

struct st_timer {
    int64_t last_trigger;          /* in memory, -1 none */
    int64_t last_active, last_inactive; /* the service's last start and end, -1 none */
    int64_t cal_at;                /* the calendar instant of the armed elapse, -1 none */
    uint64_t run;                  /* RUNNING: the service's run */
    int boot_done;                 /* OnBootSec= has elapsed in this boot */
    int alarm;
    int loop;                      /* the ticker of a hot loop of refused starts, -1 none */
    uint32_t rl_num;               /* the service's start rate limit: starts in the window */
    int64_t rl_begin;              /* ... and the window's start, -1 none */
};

struct policy {
    struct sim *sim;
    struct st_durable *d;
    const struct sim_topo *t;

    int persistent, fixed_delay, interval;
    int64_t accuracy_us, rand_us;
    int64_t sl_burst, sl_interval_us; /* the service's start rate limit, 0: none */
    struct sim_sched_opts opts;

    struct st_timer *tm;           /* [nh] */
    int64_t boot_us;               /* when this boot's service manager started */
    int64_t perturb_us;            /* this boot's sd-event perturbation, [0, 1 min) */
    int stopping;
    struct conrun *con;
};

static const struct param_def st_params[] = {
    {"persistent", PARAM_BOOL, "false", NULL, 0, 1,
     "systemd.timer(5) Persistent= (default false); src/core/timer.c timer_start (stamp made at first start)",
     "OnCalendar: keep the last trigger on disk (from the first activation on); at boot, one elapse at once "
     "if any was missed while off"},
    {"accuracy", PARAM_DURATION, "1m", NULL, 1, US_PER_DAY,
     "systemd.timer(5) AccuracySec= (default 1min); sd-event.c sleep_between",
     "each elapse fires at the latest instant of [T, T + this] on the boot's shared grid"},
    {"randomized_delay", PARAM_DURATION, "0", NULL, 0, 3660 * US_PER_DAY,
     "systemd.timer(5) RandomizedDelaySec= (default 0)",
     "each elapse is delayed by a uniform random time in [0, this)"},
    {"fixed_random_delay", PARAM_BOOL, "false", NULL, 0, 1,
     "systemd.timer(5) FixedRandomDelay= (default false, since v247)",
     "the random delay is a fixed per-unit offset (a hash of the unit), stable across boots"},
    {"interval", PARAM_ENUM, "unit_active", "unit_active|unit_inactive", 0, 0,
     "systemd.timer(5) OnUnitActiveSec= / OnUnitInactiveSec=",
     "an `every` schedule counts from the service's last start (unit_active) or end (unit_inactive)"},
    {"time_zone", PARAM_ZONE, "local", NULL, 0, 0, "systemd.time(7) calendar events: an optional zone suffix",
     "zone OnCalendar= is read in; local: the schedule's own"},
    {"start_limit_burst", PARAM_INT, "5", NULL, 0, 1000000,
     "systemd.unit(5) StartLimitBurst= (default DefaultStartLimitBurst=5, systemd-system.conf(5)); "
     "src/core/unit.c unit_test_start_limit",
     "the service may be started this many times per start_limit_interval; a start beyond is refused "
     "(start-limit-hit, no run); 0: no limit"},
    {"start_limit_interval", PARAM_DURATION, "10s", NULL, 0, 3660 * US_PER_DAY,
     "systemd.unit(5) StartLimitIntervalSec= (default DefaultStartLimitIntervalSec=10s, "
     "systemd-system.conf(5)); src/basic/ratelimit.c ratelimit_below",
     "the window of the start rate limit, from the first start after the last window ended; 0: no limit"},
    {"calendar_bug", PARAM_ENUM, "none", "none|gap_skips_day|negative_dst", 0, 0,
     "systemd/systemd#13745 (fixed by PR #13872, v244); PR #36897 (Europe/Dublin, 2025)",
     "gap_skips_day: a time in a DST gap restarts the search the next day; negative_dst: in a zone whose "
     "winter time is marked DST, a time in the gap is read as an instant before it"},
};

/* One turn of PID 1's loop of refused starts (timer elapses, the start job
 * is refused, the timer recomputes a next elapse already past): simrun
 * counts one host wake-up per millisecond of such a loop, for the "many
 * starts per second" at 100% CPU of systemd/systemd#32039 and #32047. */
#define REFUSED_LOOP_US US_PER_MS

static int is_prod(const struct policy *p, uint32_t h) { return p->t->h_kind[h] == H_PRODUCER; }

/* sd-event's sleep_between (perturbation p): the latest instant of [a, b]
 * on a 1 min grid shifted by p, else a 10 s, 1 s or 250 ms one, else b.
 * Times are the clock's own microseconds (absolute). */
static int64_t sleep_between(int64_t a, int64_t b, int64_t p)
{
    static const int64_t step[] = {60 * US_PER_S, 10 * US_PER_S, US_PER_S, 250 * US_PER_MS};
    if (b <= a + 1)
        return a;
    for (int i = 0; i < 4; i++) {
        int64_t c = b / step[i] * step[i] + p % step[i];
        if (c >= b) {
            if (c < step[i])
                return b;
            c -= step[i];
        }
        if (c >= a)
            return c;
    }
    return b;
}

/* The delay RandomizedDelaySec= adds to one elapse of timer h. */
static int64_t random_delay(struct policy *p, uint32_t h)
{
    if (p->rand_us <= 0)
        return 0;
    if (p->fixed_delay) /* a hash of the machine and the unit: the same at every boot */
        return (int64_t)(rng_mix(UINT64_C(0x243f6a8885a308d3) ^ h) % (uint64_t)p->rand_us);
    return (int64_t)rng_below(sim_policy_rng(p->sim), (uint64_t)p->rand_us);
}

/* The next elapse of timer h before delay and accuracy, SIM_NEVER if none;
 * *cal gets the calendar instant it stands for (-1: a monotonic one). */
static int64_t next_elapse(struct policy *p, uint32_t h, int64_t now_us, int64_t *cal)
{
    struct st_timer *tm = &p->tm[h];
    struct sim_sched_info si;
    sim_sched_info(p->sim, h, &si);
    *cal = -1;
    if (si.kind == SIM_SCHED_EVERY) {
        int64_t first = sim_sched_next(p->sim, h, -1, 0); /* the offset: OnBootSec= */
        int64_t boot = tm->boot_done || first == SIM_NEVER ? SIM_NEVER : p->boot_us + first;
        int64_t base = p->interval == IV_ACTIVE ? tm->last_active : tm->last_inactive;
        int64_t unit = base < 0 ? SIM_NEVER : base + si.every_us;
        int64_t at = boot < unit ? boot : unit;
        return at >= sim_horizon(p->sim) ? SIM_NEVER : at;
    }
    int64_t base = tm->last_trigger; /* with Persistent=, loaded from the stamp at start */
    if (base < 0)
        base = p->boot_us > 0 ? p->boot_us : -1; /* the timer's activation; at deploy, just before t = 0 */
    int64_t next = sim_sched_next_opt(p->sim, h, base, 0, &p->opts);
    if (next == SIM_NEVER)
        return SIM_NEVER;
    *cal = next;
    return next < p->boot_us ? p->boot_us : next; /* no earlier than the boot: a missed elapse is now */
}

/* The timer enters WAITING (timer_enter_waiting): the instant its kernel
 * timer fires, SIM_NEVER if it has no elapse left (possibly before now: it
 * fires at once). */
static int64_t waiting_at(struct policy *p, uint32_t h, int64_t now_us)
{
    struct st_timer *tm = &p->tm[h];
    int64_t cal;
    int64_t next = next_elapse(p, h, now_us, &cal);
    tm->cal_at = cal;
    if (next == SIM_NEVER)
        return SIM_NEVER;
    next += random_delay(p, h);
    int64_t at;
    if (cal >= 0) { /* CLOCK_REALTIME: the grid is in UTC microseconds */
        int64_t abs0 = sim_utc_s(p->sim, 0) * US_PER_S;
        at = sleep_between(abs0 + next, abs0 + next + p->accuracy_us, p->perturb_us) - abs0;
    } else { /* CLOCK_MONOTONIC: microseconds since the boot */
        at = sleep_between(next - p->boot_us, next - p->boot_us + p->accuracy_us, p->perturb_us) + p->boot_us;
    }
    return at;
}

/* The timer enters WAITING: its elapse is armed. */
static void arm_timer(struct policy *p, uint32_t h, int64_t now_us)
{
    int64_t at = waiting_at(p, h, now_us);
    sim_alarm(p->sim, p->tm[h].alarm, at != SIM_NEVER && at < now_us ? now_us : at);
}

/* The service's start rate limit (unit_test_start_limit, ratelimit_below):
 * a start opens a window when none is open or the last one is over (more
 * than the interval ago); in a window, starts beyond the burst are
 * refused.  1: the start may go on. */
static int start_allowed(struct policy *p, struct st_timer *tm, int64_t now_us)
{
    if (p->sl_burst <= 0 || p->sl_interval_us <= 0)
        return 1;
    if (tm->rl_begin < 0 || now_us - tm->rl_begin > p->sl_interval_us) {
        tm->rl_begin = now_us;
        tm->rl_num = 1;
        return 1;
    }
    if (tm->rl_num < UINT32_MAX)
        tm->rl_num++;
    return tm->rl_num <= (uint64_t)p->sl_burst;
}

/* The start job was refused (start-limit-hit): the service is failed at
 * once, and the timer, told so (timer_trigger_notify), waits again.  Its
 * bases count from this trigger (OnUnitActiveSec=/OnUnitInactiveSec= use
 * the later of the service's change and the last trigger).  If its next
 * elapse is already past (the negative_dst bug), it elapses again at once,
 * is refused again, and so on: a hot loop of refused starts, which ends
 * when the window is over and a start goes through.  simrun runs that
 * loop as a ticker that counts its turns as wake-ups and is delivered at
 * the window's end, where the timer, its last trigger then, waits again. */
static void refused(struct policy *p, uint32_t h, int64_t now_us)
{
    struct st_timer *tm = &p->tm[h];
    tm->last_active = tm->last_inactive = now_us;
    int64_t at = waiting_at(p, h, now_us);
    if (at == SIM_NEVER || at > now_us) {
        sim_alarm(p->sim, tm->alarm, at);
        return;
    }
    sim_alarm(p->sim, tm->alarm, SIM_NEVER);
    if (tm->loop < 0) {
        sim_note(p->sim, h, "start-limit-hit: the timer starts the service again at once, refused until "
                            "the start limit's window ends");
        tm->loop = sim_ticker_new(p->sim, REFUSED_LOOP_US, T_LOOP + h);
    }
    sim_ticker_arm(p->sim, tm->loop, tm->rl_begin + p->sl_interval_us + 1);
}

/* The hot loop of timer h reached the end of its service's window. */
static void loop_end(struct policy *p, uint32_t h, int64_t now_us)
{
    struct st_timer *tm = &p->tm[h];
    sim_ticker_stop(p->sim, tm->loop);
    tm->loop = -1;
    /* the loop's last refused elapse was now */
    tm->last_trigger = now_us;
    p->d->stamp[h] = now_us;
    tm->last_active = tm->last_inactive = now_us;
    arm_timer(p, h, now_us);
}

/* The elapse (timer_enter_running): record the trigger, start the service. */
static void elapse(struct policy *p, uint32_t h, int64_t now_us)
{
    struct st_timer *tm = &p->tm[h];
    tm->last_trigger = now_us;
    p->d->stamp[h] = now_us;
    if (tm->cal_at < 0)
        tm->boot_done = 1;
    if (!start_allowed(p, tm, now_us)) {
        refused(p, h, now_us);
        return;
    }
    struct run_req rq = RUN_REQ_INIT;
    rq.handler = h;
    rq.reason = REASON_SCHEDULE;
    /* a calendar elapse serves the nominal due of its calendar time; a
     * monotonic one no instant in particular (its grid restarts at boot) */
    rq.due_us = tm->cal_at >= 0 ? sim_sched_prev(p->sim, h, tm->cal_at) : -1;
    tm->run = sim_run_start(p->sim, &rq);
    tm->last_active = now_us;
}

/* --- hooks ------------------------------------------------------------------------ */

static struct policy *st_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct policy *p = xcalloc(1, sizeof *p);
    p->sim = sim;
    p->d = durable;
    p->t = sim_topo(sim);
    p->persistent = (int)params_get(ps, "persistent");
    p->accuracy_us = params_get(ps, "accuracy");
    p->rand_us = params_get(ps, "randomized_delay");
    p->fixed_delay = (int)params_get(ps, "fixed_random_delay");
    p->interval = (int)params_get(ps, "interval");
    p->sl_burst = params_get(ps, "start_limit_burst");
    p->sl_interval_us = params_get(ps, "start_limit_interval");
    p->opts.zone = params_zone(ps, "time_zone", NULL);
    static const int rule[] = {CAL_DST_WALL, CAL_DST_WALL_GAP_NEXT_DAY, CAL_DST_WALL_NEG_BACK};
    p->opts.dst = rule[params_get(ps, "calendar_bug")];
    p->tm = xcalloc(p->t->nh + 1, sizeof *p->tm);
    for (uint32_t h = 0; h < p->t->nh; h++) {
        p->tm[h] = (struct st_timer){
            .last_trigger = -1, .last_active = -1, .last_inactive = -1, .cal_at = -1, .loop = -1, .rl_begin = -1};
        p->tm[h].alarm = is_prod(p, h) ? sim_alarm_new(sim, T_ELAPSE, h) : -1;
    }
    struct conrun_cfg cc = {.tag = T_CON, .retry = 0};
    p->con = conrun_create(sim, &cc);
    struct st_durable *d = p->d;
    if (!d->init) {
        d->init = 1;
        d->stamp = sim_dalloc(sim, (p->t->nh + 1) * sizeof *d->stamp);
        for (uint32_t h = 0; h < p->t->nh; h++)
            d->stamp[h] = -1;
    }
    sim_declare_rows(sim, p->tm, sizeof *p->tm);
    sim_declare_handler_tag(sim, T_ELAPSE);
    sim_declare_rows(sim, d->stamp, sizeof *d->stamp);
    return p;
}

static void st_destroy(struct policy *p)
{
    conrun_destroy(p->con);
    free(p->tm);
    free(p);
}

/* The timer is started (timer_start): with Persistent=, the stamp's time
 * becomes the last trigger if it is in the past; a stamp that does not
 * exist yet is made now ("the timer has never run before"), so that the
 * next boot counts from this activation, not from its own. */
static void start_timer(struct policy *p, uint32_t h, int64_t now_us)
{
    if (p->persistent) {
        int64_t *stamp = &p->d->stamp[h];
        if (*stamp < 0)
            *stamp = now_us;
        else if (*stamp < now_us)
            p->tm[h].last_trigger = *stamp;
    }
    arm_timer(p, h, now_us);
}

static void st_start(struct policy *p, int restart, int64_t now_us)
{
    p->boot_us = now_us;
    /* sd-event's perturbation: a hash of the boot id, one per boot */
    p->perturb_us = (int64_t)rng_below(sim_policy_rng(p->sim), 60 * US_PER_S);
    for (uint32_t h = 0; h < p->t->nh; h++)
        if (is_prod(p, h))
            start_timer(p, h, now_us);
    conrun_start(p->con, now_us);
}

static void st_on_publish(struct policy *p, uint32_t h, uint64_t item, int64_t now_us)
{
    conrun_on_publish(p->con, h, now_us);
}

static void st_on_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now_us)
{
    if (tag == T_CON) {
        conrun_on_timer(p->con, arg, now_us);
        return;
    }
    if (tag >= T_LOOP) {
        SIM_ASSERT(tag - T_LOOP < p->t->nh);
        if (!p->stopping)
            loop_end(p, tag - T_LOOP, now_us);
        return;
    }
    SIM_ASSERT(tag == T_ELAPSE && arg < p->t->nh);
    if (!p->stopping)
        elapse(p, (uint32_t)arg, now_us);
}

static void st_on_run_end(struct policy *p, const struct run_result *r, int64_t now_us)
{
    if (conrun_on_run_end(p->con, r, now_us))
        return;
    struct st_timer *tm = &p->tm[r->handler];
    SIM_ASSERT(tm->run == r->run);
    tm->run = 0;
    tm->last_inactive = now_us;
    if (!p->stopping)
        arm_timer(p, r->handler, now_us); /* the service is inactive: the timer waits again */
}

static void st_on_stop(struct policy *p, int64_t now_us)
{
    p->stopping = 1;
    conrun_stop(p->con);
}

const struct policy_ops policy_systemd_timer = {
    .abi = POLICY_ABI,
    .name = "systemd_timer",
    .summary = "systemd timer units: OnCalendar/OnUnitActiveSec, Persistent=, AccuracySec coalescing, "
               "RandomizedDelaySec, one instance at a time, the start rate limit",
    .seeds = "systemd.timer(5), systemd.time(7); systemd src/core/timer.c, sd-event.c",
    .params = st_params,
    .nparams = (int)(sizeof st_params / sizeof st_params[0]),
    .durable_size = sizeof(struct st_durable),
    .promise = PROMISE_HANDLER, /* a service unit has one instance */
    .items_volatile = 0,
    .create = st_create,
    .destroy = st_destroy,
    .start = st_start,
    .on_publish = st_on_publish,
    .on_timer = st_on_timer,
    .on_run_end = st_on_run_end,
    .on_trigger = NULL,
    .on_part = NULL,
    .on_horizon = NULL,
    .on_stop = st_on_stop,
};
