/* sim.h: the engine: one simulation of one scenario under one policy.
 *
 * The engine owns the clock, the event queue, the workload (publishes,
 * sources, scripts, run durations, failures, crashes) and the run records;
 * a policy only decides when handlers run, through the narrow API below.
 * Every fact goes through the engine's fact layer (sim/sim_int.h), which
 * reports it to the checker (metrics), folds it into the run's fingerprint
 * and writes it to the optional trace (typed records, sim/trace.h).
 *
 * Invariants: virtual time only advances in sim_run's main loop and never
 * goes back; events at one instant run in the order they were scheduled;
 * nothing reads the wall clock; all randomness comes from rng streams keyed
 * by the scenario seed.  Hence the same scenario, policy, parameters and seed
 * give the same trace, byte for byte. */
#ifndef SIM_SIM_H
#define SIM_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "sim/checker.h"
#include "sim/policy.h"
#include "sim/rng.h"
#include "sim/scenario.h"
#include "sim/trace.h"
#include "sim/world.h"

/* --- Running a simulation ------------------------------------------------ */

enum sim_status { SIM_OK, SIM_LIVELOCK, SIM_EVENT_LIMIT };
const char *sim_status_name(enum sim_status s);

/* Livelock rules (see docs/results.md): more than SIM_LIVELOCK_INSTANT events
 * at one instant, or a handler that makes SIM_LIVELOCK_STREAK consecutive
 * empty runs with no new item in between at a mean spacing under one
 * second, stops the run with SIM_LIVELOCK. */
#define SIM_LIVELOCK_INSTANT 1000000
#define SIM_LIVELOCK_STREAK  100000
#define SIM_MAX_EVENTS_DEFAULT UINT64_C(4000000000)
/* Runs are durable records (about 130 bytes each with the checker's share):
 * a policy that starts runs without bound would otherwise exhaust memory
 * before the event limit.  Reaching the limit stops the run like the event
 * limit does. */
#define SIM_MAX_RUNS_DEFAULT UINT64_C(64000000)
/* Items (an event times its subscribers) are durable too, about 50 bytes
 * each: the same stop past this many. */
#define SIM_MAX_ITEMS_DEFAULT UINT64_C(200000000)

struct sim_opts {
    uint64_t seed;                 /* the scenario's seed unless overridden */
    FILE *trace;                   /* NULL: no text trace */
    int keep_trace;                /* 1: collect the trace's records (sim/trace.h) in the result */
    uint64_t max_events;           /* 0: SIM_MAX_EVENTS_DEFAULT */
    uint64_t max_runs;             /* 0: SIM_MAX_RUNS_DEFAULT */
    uint64_t max_items;            /* 0: SIM_MAX_ITEMS_DEFAULT */
    const char *label;             /* policy label for the text trace */
};

struct sim_result {
    enum sim_status status;
    char status_msg[256];
    uint64_t fingerprint;
    uint64_t events;               /* events popped from the queue */
    int64_t end_us;
    struct checker_result ck;
    struct trace_rec *trace;       /* keep_trace only */
    size_t ntrace;
};

/* Simulates s under ops with parameters ps.  Always completes (a livelock
 * or the event limit stops it early, with metrics up to that point).
 * The result is freed with sim_result_free. */
void sim_run(const struct scenario *s, const struct policy_ops *ops, const struct params *ps,
             const struct sim_opts *o, struct sim_result *out);
void sim_result_free(struct sim_result *r);

/* --- The API a policy uses ------------------------------------------------ */

const struct world *sim_world(const struct sim *sim);
int64_t sim_now(const struct sim *sim);
/* 1 while the host may start runs: 0 during a graceful stop, when a policy
 * still hears of run ends but its timers and tickers are gone. */
int sim_accepting(const struct sim *sim);
int64_t sim_horizon(const struct sim *sim);
/* The policy's own random stream (identical for every run of a policy). */
struct rng *sim_policy_rng(struct sim *sim);

/* Durable allocations: they survive crashes and are freed at the end. */
void *sim_dalloc(struct sim *sim, size_t n);             /* zeroed */
void *sim_drealloc(struct sim *sim, void *p, size_t n);
void sim_dfree(struct sim *sim, void *p);
/* The durable allocator in the shape jobs_init wants (ctx: the sim; n = 0
 * frees). */
void *sim_durable_realloc(void *ctx, void *p, size_t n);

/* Timers: a one-shot at at_us (>= now) that calls on_timer(tag, arg).  Each
 * firing counts as one host wake-up.  All timers vanish at a host crash.
 * Handles are never 0; cancelling a fired or stale handle is a no-op. */
typedef uint64_t sim_timer;
sim_timer sim_timer_at(struct sim *sim, int64_t at_us, uint32_t tag, uint64_t arg);
void sim_timer_cancel(struct sim *sim, sim_timer t);

/* Check loops: a ticker ticks every period_us from its start (first tick at
 * start + period).  Every tick counts as a host wake-up, but a tick is only
 * delivered (on_timer(tag, 0)) when armed: sim_ticker_arm(t, earliest)
 * delivers the first tick at or after earliest (SIM_NEVER disarms).  So a
 * one-second loop over a year costs events only where it has work.
 * Tickers vanish at a host crash and at a graceful stop; arming a stopped
 * ticker does nothing. */
int sim_ticker_new(struct sim *sim, int64_t period_us, uint32_t tag);
void sim_ticker_arm(struct sim *sim, int ticker, int64_t earliest_us);
/* The first tick of the ticker at or after t_us. */
int64_t sim_ticker_next(const struct sim *sim, int ticker, int64_t t_us);
/* Stops a ticker (its ticks so far are counted; later ones never happen).
 * Stopping a stopped ticker is a no-op.  A policy that needs the loop again
 * makes a new ticker, whose ticks start over from then. */
void sim_ticker_stop(struct sim *sim, int ticker);

/* Producer schedules: the first nominal due instant > after_us (>= with
 * inclusive), SIM_NEVER past the horizon or for consumers. */
int64_t sim_sched_next(const struct sim *sim, uint32_t handler, int64_t after_us, int inclusive);

/* Items: an event as seen by one consumer.  Pending = published, not yet
 * committed by any run, not dropped. */
struct sim_item {
    int64_t origin_us;             /* publish or source arrival: latency origin */
    int64_t publish_us;            /* when it entered the topic */
    uint32_t consumer;
    uint32_t key;
    uint16_t topic;                /* workflow-local topic index */
    uint8_t state;                 /* ITEM_PENDING, ITEM_DONE, ITEM_DROPPED */
};
enum { ITEM_PENDING, ITEM_DONE, ITEM_DROPPED };
const struct sim_item *sim_item(const struct sim *sim, uint64_t item);
uint32_t sim_pending_count(const struct sim *sim, uint32_t consumer);
/* Publish time of the consumer's oldest pending item, SIM_NEVER if none. */
int64_t sim_pending_oldest(const struct sim *sim, uint32_t consumer);
/* Pending items on topics no current subscription of the consumer covers
 * cannot exist (fan-out is by subscription); this counts the items pending
 * on the consumer's workflow instance's topics with no subscriber at all. */
uint64_t sim_orphan_pending(const struct sim *sim, uint32_t inst);
/* The earliest instant >= now at which the consumer's script, run over all
 * its pending items, would take something (now if it would now); SIM_NEVER
 * if never without new input.  What an ideal scheduler would know. */
int64_t sim_script_due(struct sim *sim, uint32_t consumer);
/* The policy evicts an item from its own queue: it is dropped for good. */
void sim_item_drop(struct sim *sim, uint64_t item);

/* Runs. */
struct run_req {
    uint32_t handler;
    enum run_reason reason;
    int64_t due_us;                /* producers: the nominal instant served, -1 none */
    uint64_t retry_of;             /* run id this retries, 0 none */
    uint64_t resume_of;            /* run id whose mutation it reuses: starts at emitting */
    const uint64_t *offer;         /* items the script may take; NULL: all pending */
    uint32_t noffer;
    uint32_t max_take;             /* 0: no limit */
    uint32_t worker;               /* 1-based worker that runs it, 0 the host itself */
    uint64_t tag;                  /* returned in run_result */
};
#define RUN_REQ_INIT { 0, REASON_OTHER, -1, 0, 0, NULL, 0, 0, 0, 0 }
/* Starts a run now; returns its id (dense, from 1).  The engine evaluates
 * the script, draws the duration and the failure, and schedules the phases;
 * on_run_end reports the result.  Returns 0 and starts nothing while the
 * host is in a graceful stop (`stop host`): a policy may be told of run
 * ends then, but cannot start new runs. */
uint64_t sim_run_start(struct sim *sim, const struct run_req *rq);

/* Delivers result `id` of handler h (an id the policy chooses, unique in the
 * simulation, e.g. the run id that produced it) to the outside world.  The
 * attempt fails with the probability of the handler's `fail H delivery P%`
 * rule (from its fault stream).  Returns 1 when delivered.  Every attempt
 * is ground truth for the checker: a result delivered twice is a duplicate
 * delivery. */
int sim_deliver(struct sim *sim, uint32_t handler, uint64_t id);

/* A run record (durable: it survives crashes, as the run table of a real
 * system would). */
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
void sim_run_get(const struct sim *sim, uint64_t run, struct sim_run_info *out);
/* The items run `run` reserved (its script's take), n in *n; valid until
 * the next sim_run_start. */
const uint64_t *sim_run_taken(const struct sim *sim, uint64_t run, uint32_t *n);

/* A line of the policy's own in the trace (kind "note"), for people
 * debugging a timeline: what it decided and why.  handler -1: none.  Not
 * ground truth: the checker never sees it, nor the fingerprint.  The text
 * is cut at TRACE_NOTE_MAX - 1 bytes. */
void sim_note(struct sim *sim, int64_t handler, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Number of runs of this handler currently active. */
uint32_t sim_active_runs(const struct sim *sim, uint32_t handler);

#endif
