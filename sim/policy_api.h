/* policy_api.h: everything a scheduling policy may ask of the engine.
 *
 * This is the only simrun header a policy in policies/ includes, besides the
 * leaf helpers sim/util.h, sim/rng.h, sim/jobs.h, sim/backoff.h, sim/cal.h
 * and sim/vocab.h.  Neither it nor they include the scenario, the world, the
 * checker or the event queue, so a policy cannot reach them by accident.
 * docs/writing-a-policy.md walks through it with an example.  A policy
 * may also be a plugin, built outside simrun against the installed copy of
 * this header and what it includes (sim/plugin.h: the entry symbol is
 * `simrun_policy`).
 *
 * WHAT A POLICY IS.  A policy models the scheduler of a real system: it
 * decides *when* handlers run.  The engine owns everything else: the clock,
 * the workload (what is published and when, what sources deliver), the
 * scripts that decide what a run takes, run durations, failures, crashes,
 * and the checker that measures the result.  A policy is a const
 * `struct policy_ops` (sim/policy.h) of hooks that the engine calls, and it
 * acts only through the functions below.  `struct sim` is opaque.
 *
 * WHAT A POLICY MAY KNOW: what its real system could know.
 *  - Its configuration: the topology (handler and workflow instances, each
 *    handler's kind and instance: sim_topo), producers' schedules and their
 *    nominal fires, computed by the engine (sim_sched_next,
 *    sim_sched_next_opt) as they are now (changes while running included,
 *    future ones not), handlers' run deadlines (sim_deadline), the calendar
 *    (sim_utc_s, sim_zone).
 *  - Whether an agent is busy outside the scheduler (sim_busy), as the
 *    system would find by asking its session.
 *  - What has happened: the items published so far and which are pending
 *    (sim_item, sim_pending_count, sim_pending_oldest), its runs' records
 *    and results (sim_run_get, on_run_end: see RUN RECORDS for how long a
 *    record is kept), the clock (sim_now).
 *  - Two named workload properties that the code of a handler would show
 *    a real scheduler: which topics' events carry context keys
 *    (sim_topic_keyed) and which topics a consumer pairs (sim_correlates).
 * WHAT IT MAY NOT KNOW: the workload's future.  When the next item arrives,
 * what a script will take, how long a run lasts, whether it fails, when the
 * host crashes.  The one exception is the oracle baseline, the ideal lower
 * bound, which asks sim_script_due (marked ORACLE below); a model of a real
 * system must not call it.
 *
 * LIFECYCLE.  All hooks run on the engine's main loop, at the virtual time
 * now_us they are given; none may advance time, and no engine call below
 * re-enters a hook.
 *  - create(durable) then start(restart = 0) at time 0 (deploy).
 *  - on_publish, on_timer, on_run_end, on_trigger (or on_trigger_ex),
 *    on_part, on_horizon, on_schedule_change as things happen, while the
 *    host is up and accepting work.
 *  - A host crash: every active run ends crashed (no on_run_end), every
 *    timer, alarm and ticker vanishes, destroy() frees the volatile state.
 *    At the restart: create() with the same durable block, then
 *    start(restart = 1), which rebuilds the volatile state from the durable
 *    state alone.
 *  - A graceful stop (`stop host at T grace G`): on_stop() once, at T.
 *    From then on sim_run_start refuses (returns 0: a safety net, not the
 *    way to learn of the stop), timers, alarms and tickers are gone, and
 *    publishes, triggers and the horizon no longer reach the policy; runs
 *    already active may still end (on_run_end) until T + G.  When the last
 *    one has ended, or at T + G (cutting off the rest), the host is down:
 *    destroy(); a restart is as after a crash.
 *  - The horizon: on_horizon() once (schedules stop; the drain begins).
 *  - The end: active runs are cut off, then destroy().
 * Required hooks: create, destroy, start, on_publish, on_timer, on_run_end.
 * Optional (NULL: the default written beside them in sim/policy.h):
 * on_trigger, on_part, on_horizon, on_stop, on_schedule_change,
 * on_trigger_ex.
 *
 * STATE AND OWNERSHIP (spec 3).  Durable state is what the real system
 * keeps on disk: the block of ops->durable_size bytes passed to create()
 * (zeroed once per simulation) and anything allocated with sim_dalloc; the
 * engine frees it at the end.  Volatile state is everything create()
 * allocates itself; destroy() must free all of it.  Handles (timers,
 * alarms, tickers) are volatile: they die with the incarnation that made
 * them.  Pointers the engine returns (sim_item, sim_topo, sim_run_taken)
 * are borrowed: valid until the hook returns unless said otherwise.
 *
 * RUN RECORDS AND ITEMS: what is kept.  The engine's memory follows live
 * state, as a real run table and queue that delete finished rows do, so a
 * simulation of a year costs what its busiest instant costs.
 *  - A run's record (sim_run_get, sim_run_taken, resume_of) is kept while
 *    the run is active, during its own on_run_end, while it is the latest
 *    run started of its handler, and while the policy holds it
 *    (sim_run_hold ... sim_run_release; holds are durable: they survive
 *    crashes).  After that its id is dead: reading it is a bug that stops
 *    simrun (internal error).  So a policy that looks back only at each
 *    handler's latest run, or at a run in its own on_run_end, needs
 *    nothing; one that keeps run ids of its own (a job table's latest run,
 *    a run to resume later while others of its handler start) holds them.
 *    sim_run_kept says whether an id is still readable.
 *  - An item is kept while it is pending or a kept run's reservation holds
 *    it; after that sim_item returns a record whose state is ITEM_GONE
 *    (consumer UINT32_MAX, the rest zero): it is not pending, and that is
 *    all a policy can still learn of it.  A run that committed holds its
 *    items only until its on_run_end returns, unless the policy holds the
 *    run: kept as its handler's latest, it still names them
 *    (sim_run_taken), but they are done and sim_item says ITEM_GONE.
 *  Run and item ids stay dense and monotonic whatever is kept.
 *
 * COST.  Engine calls below are O(1) unless their comment says
 * otherwise.  Each timer or alarm that fires and each ticker tick counts
 * as one host wake-up (metric `wakeups`). */
#ifndef SIM_POLICY_API_H
#define SIM_POLICY_API_H

#include <stddef.h>
#include <stdint.h>

#include "sim/policy.h"
#include "sim/util.h"
#include "sim/vocab.h"

struct sim;                        /* opaque */
struct rng;
struct cal_zone;
struct jobtab;

/* --- the clock and the host --------------------------------------------- */

int64_t sim_now(const struct sim *sim);
/* 1 while the host may start runs: 0 during a graceful stop (from on_stop
 * until the host goes down). */
int sim_accepting(const struct sim *sim);
/* The horizon: schedules have no fires from here on (the drain follows). */
int64_t sim_horizon(const struct sim *sim);
/* The policy's own random stream (identical for every run of a policy). */
struct rng *sim_policy_rng(struct sim *sim);

/* The calendar: the UTC instant (seconds) of virtual time t_us, and the
 * host's local zone, for a policy that keeps local times of its own (active
 * hours).  Schedules' fires are the engine's (sim_sched_next). */
int64_t sim_utc_s(const struct sim *sim, int64_t t_us);
const struct cal_zone *sim_zone(const struct sim *sim);

/* --- the topology ----------------------------------------------------------
 * Handler instances have dense ids 0..nh-1, workflow instances 0..ninst-1;
 * instance i owns handlers [inst_first_h[i], inst_first_h[i + 1]).  The
 * arrays live as long as the simulation (they survive crashes). */
struct sim_topo {
    uint32_t nh;                   /* handler instances */
    uint32_t ninst;                /* workflow instances */
    const uint32_t *inst_first_h;  /* [ninst + 1] */
    const uint32_t *h_inst;        /* [nh] each handler's workflow instance */
    const uint8_t *h_kind;         /* [nh] each handler's enum handler_kind */
};
const struct sim_topo *sim_topo(const struct sim *sim);
/* "mail[3].triage" ("mail.triage" when the workflow has one instance), for
 * notes; truncated to n bytes, always terminated. */
void sim_handler_name(const struct sim *sim, uint32_t handler, char *buf, size_t n);

/* --- schedules -------------------------------------------------------------
 * A producer has one schedule, part of its configuration; its nominal fires
 * are computed by the engine (the checker counts dues and misses on the
 * same instants).  Consumers have none. */
enum sim_sched_kind { SIM_SCHED_NONE, SIM_SCHED_EVERY, SIM_SCHED_AT, SIM_SCHED_CRON };
/* A schedule can change while the system runs (`disable`, `enable`,
 * `change` lines: configuration the real system reloads).  The schedule
 * accessors answer with the schedule in force now: the changes made so
 * far, and nothing of the future (a later change is not known before it
 * happens); at the instant of a change the engine calls
 * on_schedule_change, after which they answer with the new schedule.  The
 * nominal fires of a changed definition start at the change (`every D`:
 * change + k * D for k >= 0); enabling again resumes the definition in
 * force (an `every` keeps its grid); while disabled there are none. */
struct sim_sched_info {
    enum sim_sched_kind kind;      /* SIM_SCHED_NONE for consumers (and schedules that never fire) */
    int64_t every_us;              /* EVERY: the period */
    int cron_days_or;              /* CRON: both day fields restricted, combined
                                      with cron's OR (the `and` option clears it) */
    int disabled;                  /* disabled now */
    int64_t changed_us;            /* the latest change so far, -1 none */
};
void sim_sched_info(const struct sim *sim, uint32_t handler, struct sim_sched_info *out);
/* The first nominal fire > after_us (>= with inclusive) of the schedule in
 * force now; SIM_NEVER past the horizon, while disabled, or for consumers.
 * O(1) for every and at without changes (O(changes) with them); a cron
 * step costs what cal_cron_next costs. */
int64_t sim_sched_next(const struct sim *sim, uint32_t handler, int64_t after_us, int inclusive);
/* The latest nominal fire <= t_us, -1 if none (for a policy whose own
 * engine fires at other instants, to name the nominal due a run serves).
 * O(1) for every and at; a cron step costs what cal_cron_prev costs. */
int64_t sim_sched_prev(const struct sim *sim, uint32_t handler, int64_t t_us);
/* How a policy's own cron engine may read a schedule differently from the
 * scenario's: in another zone (zone != NULL: a cron schedule is evaluated
 * there, as a system that runs cron in UTC does), or with the two day
 * fields combined with AND (days_and: as some cron libraries do).  Other
 * schedules are unaffected. */
struct sim_sched_opts {
    const struct cal_zone *zone;   /* NULL: the schedule's own zone */
    int days_and;
    int dst;                       /* enum cal_dst_rule (sim/cal.h): how the engine reads the
                                      wall clock at a DST change; 0 = the scenario's rule */
};
/* sim_sched_next read with *o.  A cron schedule that never fires under AND
 * has SIM_NEVER.  Under dst = CAL_DST_WALL_NEG_BACK (the model of a bug) the
 * answer may be <= after_us; under every other rule it is > after_us (>=
 * with inclusive). */
int64_t sim_sched_next_opt(const struct sim *sim, uint32_t handler, int64_t after_us, int inclusive,
                           const struct sim_sched_opts *o);

/* --- the configuration of runs, and outside business ------------------------
 * sim_deadline: the handler's run deadline (`deadline WF.H D`, as a system
 * configures a timeout: a run still going D after its start fails then,
 * which the engine enforces), SIM_NEVER when it has none; a policy that
 * applies the deadline to its own records (a job's deadline) reads it here.
 * sim_busy: 1 while workflow instance inst is busy with something outside
 * the scheduler (`busy WF at T for D`: a user's chat, another lane), as the
 * system would see by asking; what a busy agent means is the policy's
 * rule (skip, retry later, or nothing).  O(busy lines). */
int64_t sim_deadline(const struct sim *sim, uint32_t handler);
int sim_busy(const struct sim *sim, uint32_t inst);

/* --- durable memory -------------------------------------------------------- */

/* Durable allocations: they survive crashes and are freed at the end.
 * O(durable blocks) for realloc and free. */
void *sim_dalloc(struct sim *sim, size_t n);             /* zeroed */
void *sim_drealloc(struct sim *sim, void *p, size_t n);
void sim_dfree(struct sim *sim, void *p);
/* Grows a durable array of elem-byte elements to hold at least need of
 * them (capacity doubling from 8; *cap updated); returns the array, which
 * may have moved.  New elements are zeroed. */
void *sim_dgrow(struct sim *sim, void *p, size_t elem, size_t *cap, size_t need);
/* The durable allocator in the shape jobs_init wants (ctx: the sim; n = 0
 * frees). */
void *sim_durable_realloc(void *ctx, void *p, size_t n);
/* A durable job table (sim/jobs.h): jobs_init with the durable allocator,
 * and every row written (jobs_add, jobs_update) is a durable transition
 * that the engine records (trace kind `durable`: the row's id and new
 * status), where crash-point exploration crashes the host
 * (docs/crashpoints.md).  The way to make a table of job, schedule or
 * delivery rows that must survive a crash; t lives in durable memory. */
void sim_jobs_init(struct sim *sim, struct jobtab *t);

/* A policy with a pool of n workers (or consumers, threads) says so at
 * create: the livelock rule on timers (sim/sim.h) then allows 4 per worker
 * more at one instant, since a large pool whose idle workers all poll at
 * once is no livelock.  The largest pool declared counts (a policy made
 * again after a host crash declares the same pool again). */
void sim_declare_pool(struct sim *sim, uint64_t n);

/* A policy that keeps a row per handler instance in an array (row h at
 * base + h * size) may say so at create, for up to SIM_ROW_ARRAYS arrays:
 * in a large fleet the engine then starts loading row h from memory while
 * the event before the end of one of h's runs (its on_run_end) still
 * runs.  It is a hint to the memory system only: the engine never reads
 * or writes the rows, and a policy that says nothing behaves the same.
 * The declarations die with the incarnation that made them, as handles
 * do (a policy made again after a crash says so again); more than
 * SIM_ROW_ARRAYS in all, or a size of 0, are ignored. */
#define SIM_ROW_ARRAYS 6
void sim_declare_rows(struct sim *sim, const void *base, size_t size);
/* The same for an array with a row per workflow instance (row i at base +
 * i * size): the engine loads the row of h's instance. */
void sim_declare_inst_rows(struct sim *sim, const void *base, size_t size);
/* The same for a job table whose row id is the tag of the run working on
 * it (run_req.tag): the engine loads the row of a run about to end. */
void sim_declare_run_rows(struct sim *sim, const struct jobtab *t);
/* The same for a pool's workers: n rows, row k at base + k * size for the
 * runs whose run_req.worker is k + 1; the engine loads the row of a run's
 * worker before the run ends. */
void sim_declare_worker_rows(struct sim *sim, const void *base, size_t size, uint64_t n);
/* The same for a wake: a policy whose timers or alarms of tag `tag` (below
 * 64) carry a handler instance as their arg says so at create, and the
 * engine starts loading that handler's rows (and its own records of it)
 * while the event before the wake runs.  A hint only, as above. */
void sim_declare_handler_tag(struct sim *sim, uint32_t tag);
/* A policy about to act on several handlers in turn (a check loop's due
 * schedules, a sweep over consumers) may name the ones a few turns ahead:
 * the engine starts loading their rows (as declared) and its own records
 * of them.  A hint only, as above; it does nothing while the live state
 * fits the caches. */
void sim_prefetch_handler(const struct sim *sim, uint32_t h);

/* --- waking the host ---------------------------------------------------------
 * Three ways, all of which vanish at a host crash and at a graceful stop
 * and deliver on_timer(tag, arg).
 *
 * Alarms: "wake me at T (or never)", the host's one-shot alarm clock kept
 * at the earliest thing it must look at.  sim_alarm(a, T) arms alarm a for
 * T: setting the instant it already holds costs nothing (the pending wake
 * keeps its place among others at that instant), a T in the past is
 * clamped to now, SIM_NEVER disarms, any other T replaces the pending wake.
 * When it fires the alarm is disarmed first, then on_timer(tag, arg) runs;
 * each firing counts as one host wake-up.  Alarms are made by the host
 * incarnation that uses them (create or start) and vanish with it; during
 * a graceful stop setting one does nothing.  Handles are dense from 0. */
int sim_alarm_new(struct sim *sim, uint32_t tag, uint64_t arg);
void sim_alarm(struct sim *sim, int alarm, int64_t at_us);
/* The instant alarm is armed for, SIM_NEVER when disarmed. */
int64_t sim_alarm_at(const struct sim *sim, int alarm);

/* Timers: a one-shot at at_us (>= now) that calls on_timer(tag, arg), for
 * fixed delays ("retry in 1 s").  Each firing counts as one host wake-up.
 * Handles are never 0; cancelling a fired or stale handle is a no-op. */
typedef uint64_t sim_timer;
sim_timer sim_timer_at(struct sim *sim, int64_t at_us, uint32_t tag, uint64_t arg);
void sim_timer_cancel(struct sim *sim, sim_timer t);

/* Check loops: a ticker ticks every period_us from its start (first tick at
 * start + period).  Every tick counts as a host wake-up, but a tick is only
 * delivered (on_timer(tag, 0)) when armed: sim_ticker_arm(t, earliest)
 * delivers the first tick at or after earliest, the check-loop form of an
 * alarm (same instant: nothing; past: now; SIM_NEVER: disarmed).  So a
 * one-second loop over a year costs events only where it has work.
 * Arming a stopped ticker does nothing. */
int sim_ticker_new(struct sim *sim, int64_t period_us, uint32_t tag);
void sim_ticker_arm(struct sim *sim, int ticker, int64_t earliest_us);
/* The first tick of the ticker at or after t_us (SIM_NEVER once stopped). */
int64_t sim_ticker_next(const struct sim *sim, int ticker, int64_t t_us);
/* Stops a ticker (its ticks so far are counted; later ones never happen).
 * Stopping a stopped ticker is a no-op.  A policy that needs the loop again
 * makes a new ticker, whose ticks start over from then; the engine keeps
 * only live tickers, so a loop made and stopped at every wait costs no
 * memory that grows with the run. */
void sim_ticker_stop(struct sim *sim, int ticker);

/* --- items -------------------------------------------------------------------
 * An item is an event as seen by one consumer.  Pending = published, not
 * yet committed by any run, not dropped.  Kept while pending or held by a
 * kept run (RUN RECORDS above); ITEM_GONE once it is neither. */
struct sim_item {
    int64_t origin_us;             /* publish or source arrival: latency origin */
    int64_t publish_us;            /* when it entered the topic */
    uint32_t consumer;
    uint32_t key;                  /* the event's context key (see sim_topic_keyed) */
    uint16_t topic;                /* workflow-local topic index */
    uint8_t state;                 /* ITEM_PENDING, ITEM_DONE, ITEM_DROPPED */
};
enum { ITEM_PENDING, ITEM_DONE, ITEM_DROPPED, ITEM_GONE };
/* Any item id published so far.  O(1). */
const struct sim_item *sim_item(const struct sim *sim, uint64_t item);
/* Items published so far: ids are 0 .. sim_item_count() - 1, in publish
 * order.  A policy whose queue lives outside the host (a message broker, a
 * database) reads the items published while its host was down from here
 * at the restart (on_publish reaches only a host that is up). */
uint64_t sim_item_count(const struct sim *sim);
uint32_t sim_pending_count(const struct sim *sim, uint32_t consumer);
/* Publish time of the consumer's oldest pending item, SIM_NEVER if none. */
int64_t sim_pending_oldest(const struct sim *sim, uint32_t consumer);
/* The ids of the consumer's pending items, oldest first: writes at most max
 * of them to out and returns how many there are.  For recovery: items
 * published while the host was down or stopping were announced to no
 * policy (on_publish), and a real system finds them in its store.
 * O(pending and dead entries of its queue). */
uint32_t sim_pending_items(const struct sim *sim, uint32_t consumer, uint64_t *out, uint32_t max);
/* Pending items on topics no current subscription of the consumer covers
 * cannot exist (fan-out is by subscription); this counts the events
 * published so far on the instance's topics that no handler subscribes to,
 * which stay pending for good. */
uint64_t sim_orphan_pending(const struct sim *sim, uint32_t inst);
/* The policy evicts an item from its own queue: it is dropped for good. */
void sim_item_drop(struct sim *sim, uint64_t item);

/* Two workload properties a real scheduler reads off its handlers' code.
 * sim_topic_keyed: 1 when the events of topic `topic` (of the handler's
 * workflow) carry context keys, i.e. every stream feeding it gives keys
 * (`keys N`); an unkeyed stream numbers its events from 0 and its keys say
 * nothing about the context.  O(streams) the first time per workflow
 * template, then O(1). */
int sim_topic_keyed(struct sim *sim, uint32_t handler, uint16_t topic);
/* sim_correlates: 1 when the consumer's script pairs an event of topic *a
 * with one of topic *b with the same key (`correlate A B`); 0 otherwise
 * (a and b untouched). */
int sim_correlates(const struct sim *sim, uint32_t consumer, uint16_t *a, uint16_t *b);

/* --- runs ------------------------------------------------------------------- */

struct run_req {
    uint32_t handler;
    enum run_reason reason;
    int64_t due_us;                /* producers: the nominal instant served, -1 none */
    uint64_t retry_of;             /* run id this retries, 0 none */
    uint64_t resume_of;            /* run id whose mutation it reuses: starts at emitting */
    /* Items the script may take, in the order it reads them; NULL: all
     * pending (an empty offer is a non-NULL pointer with noffer 0).  Those
     * not pending, or another consumer's, are passed over, so an offer may
     * be everything a policy holds. */
    const uint64_t *offer;
    uint32_t noffer;
    uint32_t max_take;             /* 0: no limit */
    uint32_t worker;               /* 1-based worker that runs it, 0 the host itself */
    uint64_t tag;                  /* returned in run_result */
};
#define RUN_REQ_INIT { 0, REASON_OTHER, -1, 0, 0, NULL, 0, 0, 0, 0 }
/* Starts a run now; returns its id (dense, from 1).  The engine evaluates
 * the script, draws the duration and the failure, and schedules the phases;
 * on_run_end reports the result.  O(what the script reads): the items it
 * may take and the one after (a batch's size; a window or digest script
 * up to the first not yet due), of those offered or, when offer is NULL,
 * of the handler's pending items, in chunks (all of them for a correlate
 * script that takes a pair, none when no pair is pending).  During a
 * graceful stop it starts nothing and returns 0: a safety net for a policy
 * without on_stop (one with it knows not to ask).  Also 0 when the run limit or the memory budget stops
 * the simulation.  resume_of must name a kept run that did not commit
 * (RUN RECORDS): a committed run's work is done. */
uint64_t sim_run_start(struct sim *sim, const struct run_req *rq);

/* Delivers result `id` of handler h (an id the policy chooses, unique in the
 * simulation, e.g. the run id that produced it) to the outside world.  The
 * attempt fails with the probability of the handler's `fail H delivery P%`
 * rule (from its fault stream).  Returns 1 when delivered.  Every attempt
 * is ground truth for the checker: a result delivered twice is a duplicate
 * delivery. */
int sim_deliver(struct sim *sim, uint32_t handler, uint64_t id);

/* A run record (durable: it survives crashes, as the run table of a real
 * system would; kept as RUN RECORDS above says). */
struct sim_run_info {
    uint32_t handler;
    uint32_t worker;
    enum run_phase phase;
    int active;                    /* started, not yet ended */
    enum run_outcome outcome;      /* when !active */
    enum fail_class fail;
    int mutation_applied;
    uint32_t ntaken;
    int64_t start_us, end_us;
    int64_t due_us;
    uint64_t retry_of, resume_of, tag;
    int64_t wake_us;               /* its script's wake request, SIM_NEVER if none */
};
/* The record of a kept run (RUN RECORDS above). */
void sim_run_get(const struct sim *sim, uint64_t run, struct sim_run_info *out);
/* The items a kept run reserved (its script's take), n in *n; valid until
 * the next sim_run_start. */
const uint64_t *sim_run_taken(const struct sim *sim, uint64_t run, uint32_t *n);
/* Keeps run's record readable until the matching sim_run_release (counted:
 * two holds need two releases).  The run must still be kept when held. */
void sim_run_hold(struct sim *sim, uint64_t run);
void sim_run_release(struct sim *sim, uint64_t run);
/* 1 while run's record is kept (readable), 0 once it is not. */
int sim_run_kept(const struct sim *sim, uint64_t run);
/* Number of runs of this handler currently active. */
uint32_t sim_active_runs(const struct sim *sim, uint32_t handler);
/* Ends active run `run` now, as its system kills it (a deleted Kubernetes
 * Job's pod, a terminated workflow): outcome cutoff, no mutation from here
 * on, no on_run_end.  Returns 1, or 0 (nothing done) when the run is not
 * active or the host is not accepting (a graceful stop). */
int sim_run_cancel(struct sim *sim, uint64_t run);

/* A line of the policy's own in the trace (kind "note"), for people
 * debugging a timeline: what it decided and why.  handler -1: none.  Not
 * ground truth: the checker never sees it. */
void sim_note(struct sim *sim, int64_t handler, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* --- ORACLE knowledge: not for models of real systems ----------------------
 * The earliest instant >= now at which the consumer's script, run over all
 * its pending items, would take something (now if it would now); SIM_NEVER
 * if never without new input.  This is what only the ideal could know (the
 * script's future decisions): the oracle baseline uses it to be a lower
 * bound.  O(1): it reads the oldest pending item and the count (a
 * `correlate` script, the count of keys with both topics pending). */
int64_t sim_script_due(struct sim *sim, uint32_t consumer);

#endif
