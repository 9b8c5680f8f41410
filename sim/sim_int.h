/* sim_int.h: the engine's private state, shared by its source files
 * (sim/sim.c: the loop, the workload, runs and crashes; sim/api.c: what
 * policies may ask beyond the basics, and alarms).  Nothing outside the
 * engine includes it: runners use sim/sim.h, policies sim/policy_api.h.
 *
 * The invariants of `struct sim`, which every engine function keeps:
 *  - Time: now_us changes only in sim_run's loop, to the time of the event
 *    just popped, which is never earlier; nothing reads the wall clock.
 *  - The host: pol != NULL iff host_up; accepting implies host_up and not
 *    stopping; stopping (a graceful stop in progress, its crash def + 1)
 *    implies host_up and not accepting, with stop_ev its pending cutoff
 *    (0 when none is pending).
 *  - Wake-ups: EV_TIMER, EV_TICK and EV_ALARM events carry the epoch at
 *    which they were pushed (kind's high bits) and are delivered only when
 *    it is the current epoch and the host is accepting; the epoch is bumped
 *    when the host stops accepting and again when it goes down, so that
 *    nothing a policy set survives either.  alarms[0..nalarms) and
 *    tickers[0..ntickers) belong to the current incarnation of the policy
 *    (both are emptied when the host goes down).
 *  - Runs: runs[1..nruns] (ids dense from 1); a run is active iff it is in
 *    active[0..nactive) at its slot aslot, and hs[h].active counts the
 *    active runs of handler h.  A run's reservation is
 *    taken[taken_off .. taken_off + ntaken).
 *  - Items: ids dense from 0; state moves only from ITEM_PENDING to
 *    ITEM_DONE or ITEM_DROPPED.  hs[c].npending counts c's pending items,
 *    all of which are in hs[c].pend[pend_head..pend_n), in publish order,
 *    among dead entries.
 *  - Facts: only sim.c tells the checker, folds fp and writes the trace;
 *    sim/api.c records none.
 *  - Memory: everything reachable from it is freed at the end of sim_run;
 *    the policy's durable block and sim_dalloc arrays are in dallocs. */
#ifndef SIM_SIM_INT_H
#define SIM_SIM_INT_H

#include <stddef.h>
#include <stdint.h>

#include "sim/arrival.h"
#include "sim/evq.h"
#include "sim/sim.h"

struct script_item;

enum ev_kind {
    EV_PUBLISH = 1,   /* a: publish stream */
    EV_PHASE,         /* b: run id */
    EV_TIMER,         /* a: tag, b: arg; kind's high bits: epoch */
    EV_TICK,          /* a: ticker; kind's high bits: epoch */
    EV_CRASH,         /* a: crash def */
    EV_RESTART,       /* a: crash def */
    EV_TRIGGER,       /* a: trigger def */
    EV_HORIZON,
    EV_END,
    EV_CUTOFF,        /* a: stop def whose grace ran out */
    EV_ALARM,         /* a: alarm; kind's high bits: epoch */
};
#define EV_KIND(k) ((k) & 0xffu)
#define EV_EPOCH(k) ((k) >> 8)

struct pub_stream {
    struct arr_gen g;
    uint32_t topic;                /* topic instance */
};

struct src_buf {                   /* one source in one instance */
    struct arr_gen g;
    int64_t *t_us;                 /* arrivals generated so far */
    uint32_t *key;
    size_t n, cap, kcap;
};

struct run_rec {
    uint32_t handler, worker;
    uint8_t phase, active, outcome, fail, mutated, fail_phase, mut_if_fail;
    uint32_t ntaken;
    uint32_t aslot;                /* while active: its index in sim.active */
    uint64_t taken_off;            /* into sim.taken */
    int64_t start_us, end_us, due_us;
    int64_t t_mut_us;              /* when mutating ends (phase mutated) */
    int64_t wake_us;
    uint64_t retry_of, resume_of, tag;
    uint64_t src_from, src_to;     /* producers: source arrivals [from, to) it publishes */
    evq_handle ev;                 /* its next phase event */
};

struct handler_state {
    struct rng dur, fault;
    uint32_t active;               /* runs active */
    uint64_t *pend;                /* consumers: item ids, publish order, with dead entries */
    uint32_t pend_head, pend_n, pend_cap;
    uint32_t npending;             /* live entries */
    uint64_t src_cursor;           /* producers: next source arrival to publish */
    uint32_t streak;               /* consecutive empty runs with no new item */
    int64_t streak_start_us;
};

struct ticker {
    int64_t start_us, period_us, stop_us;
    uint32_t tag;
    int live;
    evq_handle ev;
    int64_t armed_us;              /* the tick it is armed for, SIM_NEVER none */
};

/* An alarm (sim_alarm): armed for at_us with its event ev pending, or
 * disarmed (at_us SIM_NEVER, ev 0).  An armed alarm's event may lie past
 * the end (then ev is 0: it would never be popped). */
struct alarm {
    int64_t at_us;
    evq_handle ev;
    uint32_t tag;
    uint64_t arg;
};

struct sim {
    const struct scenario *scn;
    struct world w;
    struct evq *q;
    struct checker *ck;
    const struct policy_ops *ops;
    const struct params *ps;
    struct policy *pol;            /* NULL while the host is down */
    void *durable;
    void **dallocs;
    size_t ndalloc, dalloc_cap;
    struct rng policy_rng;
    const struct sim_opts *o;
    struct sim_result *res;

    int64_t now_us, end_us;
    uint32_t epoch;                /* bumped at each host crash */
    int host_up;                   /* the policy exists */
    int accepting;                 /* host up and not stopping: it may start runs */
    int stopping;                  /* a graceful stop in progress: its crash def + 1 */
    evq_handle stop_ev;            /* the stop's EV_CUTOFF */
    int stopped;
    uint64_t same_instant;         /* policy-driven events at the current instant */

    struct sim_item *items;
    uint64_t nitems, items_cap;
    uint64_t *orphans;             /* per instance: events on topics with no subscriber */
    struct handler_state *hs;

    struct run_rec *runs;          /* [0] unused: ids start at 1 */
    uint64_t nruns, runs_cap;
    uint64_t *taken;
    uint64_t ntaken, taken_cap;
    uint64_t *active;              /* active run ids; each run knows its slot (run_rec.aslot) */
    size_t nactive, active_cap;

    struct pub_stream *pubs;
    size_t npubs, pubs_cap;
    struct src_buf *srcs;          /* [ninst * nsources] */

    struct ticker *tickers;
    size_t ntickers, tickers_cap;
    struct alarm *alarms;          /* this host incarnation's alarms */
    size_t nalarms, alarms_cap;

    /* What policies may know of the world (sim/api.c). */
    struct sim_topo topo;          /* arrays below; inst_first_h is the world's */
    uint32_t *topo_h_inst;
    uint8_t *topo_h_kind;
    uint8_t **keyed;               /* [nwfs]: per topic, events carry keys; NULL until asked */

    uint8_t *crash_down;           /* per crash def: its target is down */
    int64_t *crash_next;           /* random crashes: next up/down instant */
    struct rng *crash_rng;

    uint64_t fp;
    uint64_t wakeups;
    /* scratch for scripts */
    struct script_item *sc_items;
    uint64_t *sc_ids;
    uint32_t *sc_take;
    size_t sc_cap;
};

/* Counts one policy-driven event at the current instant (sim.c); too many
 * without time advancing stop the run as a livelock. */
void policy_event(struct sim *sim);

/* sim/api.c.  Builds and frees what sim_topo and its neighbours return
 * (at setup, after the world; at the end). */
void sim__api_setup(struct sim *sim);
void sim__api_free(struct sim *sim);
/* The host stops accepting: every alarm is disarmed (its pending event is
 * left to the epoch check). */
void sim__alarms_quiesce(struct sim *sim);
/* An EV_ALARM event was popped: 1 when it is the live wake of its alarm,
 * which is then disarmed and *out becomes the EV_TIMER event that delivers
 * it (same epoch, a: tag, b: arg); 0 when it is stale. */
int sim__alarm_fire(struct sim *sim, const struct evq_event *ev, struct evq_event *out);

#endif
