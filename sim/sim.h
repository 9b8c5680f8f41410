/* sim.h: the engine: one simulation of one scenario under one policy.
 *
 * This is the header of those who *run* simulations (the CLI, the sweep,
 * the store, the tests).  Policies do not include it: the engine owns the
 * clock, the event queue, the workload (publishes, sources, scripts, run
 * durations, failures, crashes) and the run records, and a policy only
 * decides when handlers run, through the narrow API of sim/policy_api.h.
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
#include "sim/policy_api.h"
#include "sim/rng.h"
#include "sim/scenario.h"
#include "sim/trace.h"
#include "sim/world.h"

/* --- Running a simulation ------------------------------------------------ */

enum sim_status { SIM_OK, SIM_LIVELOCK, SIM_EVENT_LIMIT, SIM_MEMORY_LIMIT };
const char *sim_status_name(enum sim_status s);

/* Livelock rules (see docs/metrics.md), each of which stops the run with
 * SIM_LIVELOCK:
 *  - per handler: more than SIM_LIVELOCK_RUNS runs of one handler started
 *    at one instant with no progress in between (for a consumer, no new
 *    item for it and no run of it that committed having taken one);
 *  - busy loop: SIM_LIVELOCK_STREAK consecutive empty runs of one handler
 *    with no new item in between at a mean spacing under one second;
 *  - timers: more than SIM_LIVELOCK_TIMERS (at least; 4 per handler
 *    instance in a larger world), plus 4 per worker of the pools a policy
 *    declares (sim_declare_pool), timers, ticks and alarms set or fired at
 *    one instant with no run started and no item published in between.
 * A large world is no livelock: `workflow w x 500000` starts 500 000 runs
 * at one instant, one per handler. */
#define SIM_LIVELOCK_RUNS    100000
#define SIM_LIVELOCK_STREAK  100000
#define SIM_LIVELOCK_TIMERS  1000000
#define SIM_MAX_EVENTS_DEFAULT UINT64_C(4000000000)
/* Memory follows live state: a run's record lives while the run is active
 * or kept (sim/policy_api.h, RUN RECORDS), an item's while it is pending or
 * held by a kept run; nothing grows with the horizon but what the user asks
 * to keep (a trace).  These bound the *live* ones: reaching either stops
 * the run like the event limit does. */
#define SIM_MAX_RUNS_DEFAULT UINT64_C(64000000)
#define SIM_MAX_ITEMS_DEFAULT UINT64_C(200000000)

/* Crash points (docs/crashpoints.md).  A point is a place in the event
 * order where a host crash can be injected without breaking a transition
 * of the engine in two: before the first event at an instant, after each
 * event is handled, and between a run's end and the policy's on_run_end.
 * Points are numbered 1, 2, ... in order, the same in every simulation of
 * the same inputs, so a point names one instant and one place in it. */
struct sim_point {
    int64_t t_us;
    uint64_t index;
    int first;                     /* before anything at t_us */
    int host_up;                   /* a crash here would take the host down */
};

/* Watches a simulation for crash-point exploration (sim/crashpoints.h). */
struct sim_probe {
    void *ctx;
    /* Every record of a durable kind (fact_kind_durable), as it is written. */
    void (*durable)(void *ctx, const struct trace_rec *r);
    /* At every point.  Returns the index of a crash definition of the
     * scenario whose position is CRASH_POS_PROBE to crash the host here
     * (for that definition's downtime), -1 to go on, or SIM_PROBE_STOP to
     * end the simulation here (its result then covers the time so far). */
    int (*point)(void *ctx, const struct sim_point *p);
};
#define SIM_PROBE_STOP (-2)

struct sim_opts {
    uint64_t seed;                 /* the scenario's seed unless overridden */
    FILE *trace;                   /* NULL: no text trace */
    /* Each record of the trace (sim/trace.h) as it is written, in order;
     * NULL: none.  The engine keeps none of them: a caller that wants the
     * records stores or spools them as they come, so that the trace costs
     * no memory that grows with the horizon. */
    void (*trace_rec)(void *ctx, const struct trace_rec *r);
    void *trace_ctx;
    /* 1: also collect the records in the result (res.trace), for a caller
     * that reads a short run's trace whole (the tests); what they take
     * counts in the memory budget. */
    int keep_trace;
    uint64_t max_events;           /* 0: SIM_MAX_EVENTS_DEFAULT */
    uint64_t max_runs;             /* 0: SIM_MAX_RUNS_DEFAULT */
    uint64_t max_items;            /* 0: SIM_MAX_ITEMS_DEFAULT */
    /* The memory budget in bytes (0: sim_memory_default(); UINT64_MAX: none).
     * A run whose state reaches it stops with SIM_MEMORY_LIMIT. */
    uint64_t max_memory;
    const char *label;             /* policy label for the text trace */
    const struct sim_probe *probe; /* NULL: none */
    /* 1: the main loop never prefetches the next event's records (sim.c),
     * for a test that shows prefetching changes nothing. */
    int no_prefetch;
    /* 1: no pairing index for `correlate` consumers (sim_load.c): every due
     * check and start reads the backlog, for a test that shows the index
     * changes nothing. */
    int no_pair_index;
};

struct sim_result {
    enum sim_status status;
    char status_msg[256];
    int status_line;               /* SIM_MEMORY_LIMIT: the scenario line that drove it, 0 none */
    uint64_t fingerprint;
    uint64_t events;               /* events popped from the queue */
    int64_t end_us;
    struct checker_result ck;
    struct trace_rec *trace;       /* keep_trace only */
    size_t ntrace;
    uint64_t peak_memory;          /* the most the budget's count reached, in bytes */
    int prefetched;                /* the main loop prefetched (the state reached SIM_PREFETCH_MIN) */
};

/* Simulates s under ops with parameters ps.  Always completes (a livelock
 * or the event limit stops it early, with metrics up to that point).
 * The result is freed with sim_result_free. */
void sim_run(const struct scenario *s, const struct policy_ops *ops, const struct params *ps,
             const struct sim_opts *o, struct sim_result *out);
void sim_result_free(struct sim_result *r);

/* The default memory budget: half of the machine's memory (MemTotal in
 * /proc/meminfo), 4 GiB when that cannot be read. */
uint64_t sim_memory_default(void);
/* What scenario s needs at least, at once, in bytes (its instances, and its
 * largest burst of items at one instant), the same count as the budget's;
 * *line: the line that drives it (a workflow's or a burst's).  The CLI
 * checks it against the budget before simulating. */
uint64_t sim_memory_estimate(const struct scenario *s, int *line, char *why, size_t n);

#endif
