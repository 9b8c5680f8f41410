/* sim_int.h: the engine's private state, shared by its source files
 * (sim/sim.c: the loop, the workload, runs and crashes; sim/sim_fact.c: the
 * fact layer; sim/api.c: what policies may ask beyond the basics, and alarms).  Nothing outside the
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
 *    the tickers (handles 0..next_ticker) belong to the current incarnation
 *    of the policy (both are emptied when the host goes down).  A ticker
 *    handle is live while ticker_map gives it a slot; a stopped ticker's
 *    slot is freed at once, and its handle stays a harmless one.
 *  - Runs: ids dense from 1 (nruns issued so far); only *kept* runs have a
 *    record, in runs[] at the slot run_map gives (the rest of the slots are
 *    on the free list, id 0).  A run is kept while it is active, while its
 *    on_run_end hook runs (hook_slot), while it is the latest run started of
 *    its handler (hs[h].latest), and while the policy holds it (holds > 0);
 *    the moment none is true its record is freed (run_unref), or, while
 *    prefetching, it waits in the retire queue retq[] (sim_runs.c), not
 *    kept, until it is freed or the queue is drained.  A run is
 *    active iff it is in active[0..nactive) (slots) at its index aslot, and
 *    hs[h].active counts the active runs of handler h.  A kept run's
 *    reservation (its taken items) holds a reference on each item, except
 *    a committed run's once it is kept only as its handler's latest
 *    (released: sim_runs.c).
 *  - Items: ids dense from 0 (nitems issued so far); only *live* items have
 *    a record, in items[] at the slot item_map gives.  State moves only from
 *    ITEM_PENDING to ITEM_DONE or ITEM_DROPPED; an item is live while it is
 *    pending or a run's reservation holds it (refs > 0: a kept run's, or
 *    one's waiting in the retire queue), and retired
 *    (its record freed, the checker told) the moment neither is true.
 *    hs[c].npending counts c's pending items, exactly the items of the list
 *    hs[c].pend_head .. pend_tail (slots, linked by prev/next), in publish
 *    order.
 *  - Sources: a source buffer keeps arrivals [base, n) (absolute indices);
 *    those below its producer's cursor are published and may be dropped.
 *  - Facts: only the fact layer (fact_* in sim/sim_fact.c) tells the
 *    checker, folds the fingerprint and writes the trace; sim/api.c records
 *    one, through it: the end of a run a policy cancels (sim_run_cancel).
 *  - Memory: everything reachable from it is freed at the end of sim_run;
 *    the policy's durable block and sim_dalloc arrays are in dallocs. */
#ifndef SIM_SIM_INT_H
#define SIM_SIM_INT_H

#include <stddef.h>
#include <stdint.h>

#include "sim/arrival.h"
#include "sim/evq.h"
#include "sim/idmap.h"
#include "sim/sim.h"

/* --- The fact layer (sim/sim_fact.c) ---------------------------------------
 *
 * One function per kind of fact (enum fact_kind, sim/trace.h).  These are
 * the only callers of the checker, the only code that folds the
 * fingerprint and the only code that writes the trace, so that the three
 * cannot drift apart: a fact the checker hears of is folded and traced in
 * the same call, the same way at every site that produces it.
 *
 * Each fact_* function, in this order: tells the checker (if the checker
 * counts that kind), folds the fact into the fingerprint (kinds below
 * FACT_PHASE), and writes one trace record (when a trace is wanted).  The
 * time of every fact is the engine's clock (*now), which never goes back.
 *
 *     kind       checker                     fold (kind, a, b)
 *     publish    checker_publish             item, consumer
 *     drop       checker_drop                item, cause
 *     orphan     -                           topic, 0
 *     start      checker_run_start (and      run, handler; then 11:
 *                checker_wake_request)       taken, due
 *     end        checker_run_end             run, outcome
 *     mutation   checker_mutated             run, 0
 *     deliver    checker_delivery            result, ok
 *     crash      checker_crash               target, index
 *     restart    checker_restart             target, index
 *     timer      checker_wakeups(1)          tag, arg
 *     tick       -                           ticker, 0
 *     trigger    -                           workflow, 0
 *     phase, horizon, stopped, note, durable: trace only
 *     wakeups    checker_wakeups(n)          -
 *     (retired   checker_item_retire         -: memory, not a fact)
 *
 * A watcher (watch, set by the engine for crash-point exploration and
 * positional crashes) sees every record as it is written, as if tracing;
 * it must not record facts itself.
 *
 * A run start carries its script's wake request: the checker hears both
 * from fact_run_start, and the start record's wake_us shows it. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/checker.h"
#include "sim/sim.h"
#include "sim/trace.h"

struct facts {
    struct checker *ck;
    uint64_t fp;                   /* the fingerprint so far */
    const int64_t *now;            /* the engine's clock */
    const struct world *w;
    FILE *out;                     /* the text trace, NULL none */
    const char *label;
    void (*rec)(void *ctx, const struct trace_rec *r); /* the caller's (sim_opts.trace_rec), NULL none */
    void *rec_ctx;
    struct sim_result *res;        /* keep: records also go to res->trace */
    int keep;
    void (*watch)(void *ctx, const struct trace_rec *r); /* NULL: none */
    void *watch_ctx;
    int tracing;                   /* out || rec || keep || watch */
};

/* Starts the layer of one simulation: a new checker for world w, the
 * fingerprint's initial value, the trace as o asks (kept records into
 * res). */
void facts_open(struct facts *f, const struct world *w, enum promise promise, const int64_t *now,
                const struct sim_opts *o, struct sim_result *res);
/* Ends it at end_us: res gets the fingerprint and the checker's metrics;
 * the checker is freed. */
void facts_close(struct facts *f, int64_t end_us, struct sim_result *res);

/* The facts of a run start (fact_run_start). */
struct fact_start {
    uint64_t run;
    uint32_t handler;
    enum run_reason reason;
    int64_t due_us;                /* -1 none */
    int64_t wake_us;               /* its script's wake request, SIM_NEVER none */
    uint64_t resume_of;            /* 0: none */
    const uint64_t *taken;         /* the items its script took */
    uint32_t ntaken;
    struct checker_run *ck;        /* the checker's record of it, in the run's own */
};

/* Returns the item's slot in the checker (item_slot.ck_slot). */
uint32_t fact_publish(struct facts *f, uint64_t item, uint32_t consumer, int64_t origin_us, uint32_t key);
void fact_drop(struct facts *f, uint64_t item, uint32_t consumer, enum drop_cause cause);
void fact_orphan(struct facts *f, uint32_t topic, uint32_t key);
void fact_run_start(struct facts *f, const struct fact_start *s);
void fact_phase(struct facts *f, uint64_t run, uint32_t handler, enum run_phase phase);
void fact_mutation(struct facts *f, uint64_t run, uint32_t handler, struct checker_run *ck);
void fact_run_end(struct facts *f, uint64_t run, uint32_t handler, enum run_outcome out, enum run_phase phase,
                  enum fail_class fail, struct checker_run *ck);
void fact_delivery(struct facts *f, uint32_t handler, uint64_t result, int ok);
void fact_crash(struct facts *f, enum crash_target target, uint32_t index);
void fact_restart(struct facts *f, enum crash_target target, uint32_t index);
/* Timers and ticks are the hot path of a wake-up-heavy run: they are
 * inline (the fold below, and the record only when tracing). */
static inline void fact_timer(struct facts *f, uint32_t tag, uint64_t arg);
static inline void fact_tick(struct facts *f, uint32_t ticker);
/* n > 0 ticks of a ticker that stopped (n = 0: no fact). */
void fact_wakeups(struct facts *f, uint32_t ticker, uint64_t n);
void fact_trigger(struct facts *f, uint32_t workflow);
void fact_horizon(struct facts *f);
void fact_stop(struct facts *f, uint64_t cut_off);
void fact_note(struct facts *f, int64_t handler, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
/* A row of a durable job table was written (sim_jobs_init): its id and new
 * status. */
void fact_durable(struct facts *f, uint64_t row, uint8_t status);
/* Not a fact: an item retired (no run can refer to it again), so that the
 * checker settles its account and forgets it.  Neither folded nor traced. */
void fact_item_retired(struct facts *f, uint64_t item);

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
    EV_SCHED,         /* a: workflow << 16 | handler template, b: its change */
};
#define EV_KIND(k) ((k) & 0xffu)
#define EV_EPOCH(k) ((k) >> 8)

struct pub_stream {
    struct arr_gen g;
    uint32_t topic;                /* topic instance */
    uint32_t origin;               /* its publish line (ORIGIN_PUB + line index) */
};

struct src_arrival {
    int64_t t_us;
    uint32_t key;
};

#define SRC_INLINE 2

/* Where a producer's run reaches beyond its own records: its source
 * buffer and its topic's consumers (one read, where the world's tables
 * take five in a row). */
struct handler_out {
    uint32_t src;                  /* its buffer in srcs, UINT32_MAX none */
    uint32_t subs;                 /* its topic's first subscriber (index in w.subs) << 3 | their count
                                      when 1 to 6 (a publish takes them from here, and its prefetch
                                      loads the first four), 7 more; 0 none or unknown (a publish
                                      reads the world's tables) */
};

/* One source in one instance: two cache lines (the table is 64-byte
 * aligned), with room for the few arrivals a producer that polls often
 * finds, so that most sources need no block of their own. */
struct src_buf {
    _Alignas(64) struct arr_gen g;
    struct src_arrival *a;         /* arrivals [base, n): a[k - base]; the inline ones when cap is SRC_INLINE */
    uint64_t base, n;
    size_t cap;
    struct src_arrival inl[SRC_INLINE];
};

static inline const struct src_arrival *src_at(const struct src_buf *sb, uint64_t k)
{
    return &(sb->cap > SRC_INLINE ? sb->a : sb->inl)[k - sb->base];
}

#define ITEM_NIL UINT32_MAX

/* A live item: its public record first, so that sim_item returns it.  One
 * cache line (the table is 64-byte aligned): at 56 bytes, three records in
 * four straddled two lines. */
struct item_slot {
    _Alignas(64) struct sim_item pub;
    uint64_t id;
    uint32_t refs;                 /* kept runs whose reservation holds it */
    uint32_t prev, next;           /* the consumer's pending list; next: the free list */
    uint32_t origin;               /* what published it (sim_mem.c) */
    uint32_t ck_slot;              /* the checker's slot of it: a run that takes it loads that record
                                      (prefetching only) */
};
_Static_assert(sizeof(struct item_slot) == 64, "an item is one cache line");

/* A run record: two cache lines (the table is 64-byte aligned), the first
 * holding all that a phase event reads.  The checker's record of an active
 * run is beside it in the active set (sim.active_ck). */
struct run_rec {
    /* line 1: every phase event */
    uint64_t id;                   /* 0: a free slot */
    evq_handle ev;                 /* its next phase event */
    int64_t t_mut_us;              /* when mutating ends (phase mutated) */
    int64_t end_us, start_us;
    uint32_t handler, ntaken;
    uint32_t aslot;                /* while active: its index in sim.active; free: the next free slot */
    uint32_t ck_slot;              /* the checker's slot of its item (ntaken == 1) or its producer
                                      index (checker_run), for prefetching only */
    uint8_t phase, active, outcome, fail, mutated, fail_phase, mut_if_fail;
    uint8_t released;              /* its reservation's items were released (sim_runs.c, run_released) */
    /* line 2: its start, its end, and what policies ask */
    uint32_t worker;
    uint32_t holds;                /* sim_run_hold count */
    int64_t due_us, wake_us;
    uint64_t retry_of, resume_of, tag;
    union {
        struct {                   /* producers: source arrivals [from, to) it publishes */
            uint64_t src_from, src_to;
        };
        struct {                   /* consumers, ntaken == 1: the item and its slot */
            uint64_t tk_id;
            uint32_t tk_slot;
        };
        uint64_t *big;             /* consumers, ntaken > 1: ids, then slots, then the checker's
                                      slots of the items (for prefetching only) */
    };
};
_Static_assert(sizeof(struct run_rec) == 128, "a run record is two cache lines");

static inline const uint64_t *run_taken_ids(const struct run_rec *r)
{
    return r->ntaken > 1 ? r->big : &r->tk_id;
}

static inline const uint32_t *run_taken_slots(const struct run_rec *r)
{
    return r->ntaken > 1 ? (const uint32_t *)(r->big + r->ntaken) : &r->tk_slot;
}

/* ntaken > 1: the checker's slots of the taken items, which sim_run_start
 * copies from the checker's record of the run, for prefetching. */
static inline uint32_t *run_taken_ck(const struct run_rec *r)
{
    return (uint32_t *)(r->big + r->ntaken) + r->ntaken;
}

/* One cache line per handler instance (the table is 64-byte aligned): its
 * own state, and where it sits in the world (so that the hot path need not
 * read the world's tables). */
struct handler_state {
    _Alignas(64) struct rng dur;
    struct rng fault;
    int64_t streak_start_us;
    uint64_t src_cursor;           /* producers: next source arrival to publish */
    uint32_t active;               /* runs active */
    uint32_t npending;             /* pending items (consumers) */
    uint32_t pend_head, pend_tail; /* item slots, ITEM_NIL when none */
    uint32_t latest;               /* slot of its latest run, ITEM_NIL before the first */
    uint32_t streak;               /* consecutive empty runs with no new item */
    uint32_t inst;                 /* its workflow instance */
    uint16_t wf, hidx;             /* its workflow template, and its index there */
};
_Static_assert(sizeof(struct handler_state) == 64, "a handler's state is one cache line");

/* Runs of one handler started at one instant since its last progress (a
 * new item for it, a run of it that committed having taken one). */
struct inst_runs {
    int64_t at_us;
    uint32_t n;
    uint32_t alarm_ref;            /* 1 + the alarm that names it (a tag of sim_declare_handler_tag; the last
                                      made), 0 none: its end loads it (prefetching only) */
};
_Static_assert(sizeof(struct inst_runs) == 16, "a handler's run count takes no more than it did");

/* A live ticker, in a slot of the pool sim.tickers (a stopped ticker's slot
 * is freed, so the pool follows the live tickers, not every ticker made). */
struct ticker {
    int64_t start_us, period_us;
    evq_handle ev;
    int64_t armed_us;              /* the tick it is armed for, SIM_NEVER none */
    uint32_t tag;
    uint32_t id;                   /* its handle; a free slot: the next free slot */
};

/* A crash definition placed by the facts of its instant (CRASH_POS_FIRST,
 * CRASH_POS_AFTER): where it stands. */
struct pos_crash {
    uint32_t ci;                   /* its crash definition */
    int64_t handler;               /* AFTER: the handler instance of its fact, -1 any */
    uint8_t kind;                  /* AFTER: its fact's kind (enum fact_kind) */
    uint32_t seen;                 /* AFTER: matching facts so far at its instant */
    uint8_t armed;                 /* AFTER: the Nth was seen: crash at the next point */
    uint8_t done;                  /* fired (or its instant passed) */
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

/* Runs the retire queue holds (sim_runs.c). */
#define SIM_RETQ 8

struct sim {
    const struct scenario *scn;    /* the scenario as the policy's grammar reads it */
    struct scenario *eff;          /* that reading, when it is a copy (sim/grammar.h); else NULL */
    struct world w;
    struct evq *q;
    struct facts fx;               /* the checker, the fingerprint, the trace */
    const struct policy_ops *ops;
    const struct params *ps;
    struct policy *pol;            /* NULL while the host is down */
    void *durable;
    void **dallocs;
    size_t *dalloc_sz;             /* [ndalloc] their sizes */
    size_t ndalloc, dalloc_cap;
    struct idmap dalloc_at;        /* a block's address -> its index in dallocs */
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
    uint64_t same_instant;         /* timers, ticks, alarms at this instant since a run or publish */
    uint64_t timer_limit;          /* SIM_LIVELOCK_TIMERS, or 4 per handler instance; + 4 per pool worker */
    uint64_t pool_n;               /* the largest pool declared (sim_declare_pool) */
    struct row_array {
        const char *base;
        size_t size;
        enum { ROWS_HANDLER, ROWS_INST, ROWS_WORKER } by; /* what a row belongs to */
        uint64_t n;                /* ROWS_WORKER: rows (the others: a row per handler or instance) */
    } row_arrays[SIM_ROW_ARRAYS];  /* the policy's rows (sim_declare_rows), for prefetching */
    uint32_t nrow_arrays;
    uint32_t worker_row_arrays;    /* of them ROWS_WORKER */
    uint32_t inst_row_arrays;      /* of them ROWS_INST */
    const struct jobtab *run_rows; /* a run's tag is its row here (sim_declare_run_rows), NULL none */
    uint64_t handler_tags;         /* bit t: timers and alarms of tag t name a handler (sim_declare_handler_tag) */
    struct inst_runs *inst_runs;   /* [nh] the livelock rule per handler (sim_runs.c) */

    struct item_slot *items;       /* live items; free slots chained by next */
    uint32_t items_cap, items_hw, items_free;   /* capacity, slots used so far, free list */
    struct idwin item_map;         /* item id -> slot */
    uint64_t nitems;               /* ids issued */
    uint64_t live_items;
    uint64_t *orphans;             /* per instance: events on topics with no subscriber */
    /* The pairing index of `correlate` consumers (sim_load.c), NULL when no
     * consumer correlates: corr_ready[c] counts the keys of which consumer
     * c has items of both topics pending, corr_count the pending items of
     * each (consumer, side, key) that has any. */
    uint32_t *corr_ready;
    struct idmap corr_count;
    struct handler_state *hs;
    uint32_t retq[SIM_RETQ];       /* the retire queue (sim_runs.c): slots of runs no longer latest */
    uint32_t retq_head, retq_n;    /* its front, and how many wait */

    struct run_rec *runs;          /* kept runs; free slots chained by aslot */
    uint32_t runs_cap, runs_hw, runs_free;
    struct idwin run_map;          /* run id -> slot */
    uint64_t nruns;                /* ids issued */
    uint64_t live_runs;
    uint32_t *active;              /* slots of the active runs; each run knows its index (aslot) */
    struct checker_run *active_ck; /* [active_cap] the checker's record of active[i] */
    size_t nactive, active_cap;
    uint32_t hook_slot;            /* the run whose on_run_end is running, ITEM_NIL none */

    struct pub_stream *pubs;
    size_t npubs, pubs_cap;
    struct src_buf *srcs;          /* [ninst * nsources] */
    struct handler_out *h_out;     /* [nh] */

    struct ticker *tickers;        /* a pool of slots: the live tickers and free ones */
    size_t ntickers, tickers_cap;  /* slots handed out, capacity */
    uint32_t ticker_free;          /* free slot list, UINT32_MAX none */
    uint32_t nlive_tickers;
    uint64_t next_ticker;          /* the next handle of this incarnation */
    struct idwin ticker_map;       /* handle -> slot, for live tickers */
    struct alarm *alarms;          /* this host incarnation's alarms */
    size_t nalarms, alarms_cap;

    /* What policies may know of the world (sim/api.c). */
    struct sim_topo topo;          /* arrays below; inst_first_h is the world's */
    uint32_t *topo_h_inst;
    uint8_t *topo_h_kind;
    uint8_t **keyed;               /* [nwfs]: per topic, events carry keys; NULL until asked */

    /* Crash points (sim_host.c): taken only when `watching` (a positional
     * crash definition, or a probe); npoints counts them. */
    int watching;
    uint64_t npoints;
    struct pos_crash *pos;         /* the positional crash definitions */
    size_t npos;

    uint8_t *crash_down;           /* per crash def: its target is down */
    int64_t *crash_next;           /* random crashes: next up/down instant */
    struct rng *crash_rng;
    /* Per handler: its runs counted for deterministic failures (sim_fault.c):
     * [2h] those with work, [2h + 1] all; NULL until a rule needs them. */
    uint32_t *fault_n;

    /* scratch for scripts */
    struct script_item *sc_items;
    uint64_t *sc_ids;
    uint32_t *sc_slots;
    uint32_t *sc_take;
    size_t sc_cap;

    /* The memory budget (sim_mem.c). */
    uint64_t max_memory;
    uint64_t mem_var;              /* bytes of what capacities do not show (sources, big
                                      reservations, durable blocks) */
    uint64_t mem_peak;             /* the most sim__mem_used has been, when counted */
    uint64_t mem_calls;            /* calls of sim__mem_check */
    int mem_stopped;               /* the budget stopped the run */
    int prefetch;                  /* the live state outgrew SIM_PREFETCH_MIN: prefetch (sim.c) */
    uint64_t *origin_live;         /* live items per origin */
    uint32_t norigins;
};

/* The fingerprint: each fact (time, kind, two operands) folded in with a
 * multiply-xorshift per word; order-sensitive, and cheap enough to sit on
 * every event of the hot path. */
static inline uint64_t fact__fold_word(uint64_t h, uint64_t w)
{
    h ^= w + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
    h *= UINT64_C(0xff51afd7ed558ccd);
    return h ^ (h >> 32);
}

static inline void fact__fold(struct facts *f, uint64_t code, uint64_t a, uint64_t b)
{
    uint64_t h = f->fp;
    h = fact__fold_word(h, (uint64_t)*f->now);
    h = fact__fold_word(h, code);
    h = fact__fold_word(h, a);
    f->fp = fact__fold_word(h, b);
}

/* The trace records of the inline facts (sim_fact.c). */
void fact__trace_timer(struct facts *f, uint32_t tag, uint64_t arg);
void fact__trace_tick(struct facts *f, uint32_t ticker);

static inline void fact_timer(struct facts *f, uint32_t tag, uint64_t arg)
{
    checker_wakeups(f->ck, 1);
    fact__fold(f, FACT_TIMER, tag, arg);
    if (f->tracing)
        fact__trace_timer(f, tag, arg);
}

static inline void fact_tick(struct facts *f, uint32_t ticker)
{
    fact__fold(f, FACT_TICK, ticker, 0);
    if (f->tracing)
        fact__trace_tick(f, ticker);
}

/* --- Engine internals shared by its files (prefix sim__) ---------------------
 * The engine is one module in five files: sim.c (the loop, dispatch, setup,
 * timers and tickers), sim_load.c (publishes, sources, items), sim_runs.c
 * (runs and their phases), sim_host.c (crashes, stops, restarts), api.c (the
 * policy API beyond the basics, alarms), and sim_fact.c (the fact layer). */

/* sim.c.  Stops the simulation with a status (the first stop wins). */
void sim__stop(struct sim *sim, enum sim_status st, const char *msg);
/* Counts one timer, tick or alarm set or fired at the current instant; too
 * many with no run started and no item published in between stop the run
 * as a livelock. */
void sim__policy_event(struct sim *sim);
/* Stops every ticker, counting their ticks so far as wake-ups. */
void sim__tickers_stop_all(struct sim *sim);
/* Forgets every ticker, all stopped, when the policy that held their
 * handles goes. */
void sim__tickers_reset(struct sim *sim);

/* The definition of handler h (world_hdef, from the handler's own line). */
static inline const struct handler_def *sim__hdef(const struct sim *sim, uint32_t h)
{
    const struct handler_state *hs = &sim->hs[h];
    return &sim->scn->wfs[hs->wf].handlers[hs->hidx];
}

/* The policy instance goes (a crash, a stop, the end): destroy(), and its
 * prefetch declarations (sim_declare_rows, sim_declare_handler_tag) with it. */
void sim__policy_destroy(struct sim *sim);

/* Handler h's template, from its state (world.h has it too). */
static inline uint32_t sim__tmpl(const struct sim *sim, uint32_t h)
{
    const struct handler_state *hs = &sim->hs[h];
    return sim->w.wf_first_tmpl[hs->wf] + hs->hidx;
}

/* sim_load.c.  An item leaves the pending set (ITEM_DONE or ITEM_DROPPED):
 * its state changes and it leaves its consumer's list. */
void sim__item_gone(struct sim *sim, uint32_t slot, uint8_t state);
/* The pairing index (sim_load.c): set up for the scenario (nothing when no
 * consumer correlates), and freed. */
void sim__corr_setup(struct sim *sim);
void sim__corr_free(struct sim *sim);
/* How many keys have items of both of consumer c's topics pending (its
 * script takes something exactly when some do), UINT32_MAX when c does not
 * correlate or no index is kept. */
uint32_t sim__corr_pairs(const struct sim *sim, uint32_t c);
/* Retires the item at slot if it is neither pending nor held by a kept run:
 * the checker hears of it and the slot is freed.  Call after the facts. */
void sim__item_release(struct sim *sim, uint32_t slot);
/* The live item with that id, NULL if it was never published or is retired. */
struct item_slot *sim__item_find(const struct sim *sim, uint64_t item);
/* Where a publish goes: its topic instance t, the topic's workflow
 * instance and its index there, and its subscribers w.subs[k0, k1). */
struct sim_reach {
    uint32_t t, inst, k0, k1;
    uint16_t local;
};
void sim__reach_topic(const struct sim *sim, uint32_t t, struct sim_reach *out);
/* The topic producer h (of definition hd, out_topic >= 0) publishes to,
 * from handler_out where it knows the subscribers, else from the world's
 * tables. */
void sim__reach_out(const struct sim *sim, uint32_t h, const struct handler_def *hd, struct sim_reach *out);
/* Publishes one event on the topic `to` reaches: one item per subscriber.
 * origin: what published it (sim_mem.c, ORIGIN_*). */
void sim__publish(struct sim *sim, const struct sim_reach *to, int64_t origin_us, uint32_t key, uint32_t origin);
/* The source a producer polls in its instance, NULL if none. */
struct src_buf *sim__src_of(struct sim *sim, uint32_t handler);
/* Generates the source's arrivals up to and including t_us. */
void sim__src_fill(struct sim *sim, struct src_buf *sb, int64_t t_us);
/* Forgets the source's arrivals below from (all published). */
void sim__src_trim(struct sim *sim, struct src_buf *sb, uint64_t from);
/* An EV_PUBLISH event of publish stream k: its events at now, then the next. */
void sim__publish_stream(struct sim *sim, uint32_t k);

/* sim_runs.c.  Ends the active run at slot with an outcome (its fact, its
 * place in active); the record stays (call sim__run_unref after any hook). */
void sim__run_finish(struct sim *sim, uint32_t slot, enum run_outcome out);
/* Frees the run record at slot unless it is still kept (sim_int.h). */
void sim__run_unref(struct sim *sim, uint32_t slot);
/* Frees (unrefs) every run waiting in the retire queue. */
void sim__retq_flush(struct sim *sim);
/* A phase boundary of the run at slot (EV_PHASE: a = slot, b = its id). */
void sim__run_phase(struct sim *sim, uint32_t slot, uint64_t id);
/* Interrupts the active runs that match (all = 1: every run; any_worker:
 * every run on a worker; else those of worker `worker`), ending them with
 * outcome out. */
void sim__interrupt_runs(struct sim *sim, int all, int any_worker, uint32_t worker, enum run_outcome out);

/* sim_host.c.  Crash points: sets up the positional crashes and the
 * watcher (after facts_open); sim__point takes a point (first: before
 * anything at now), firing a positional crash or the probe's there;
 * sim__first_at is the earliest instant in (now, t] at which a `first`
 * crash is still to come, else t. */
void sim__points_setup(struct sim *sim);
void sim__point(struct sim *sim, int first);
int64_t sim__first_at(const struct sim *sim, int64_t t_us);
/* The host (re)starts: restart = 0 at deploy time. */
void sim__host_up(struct sim *sim, int restart);
/* A graceful stop completes (grace over, or no run left). */
void sim__stop_complete(struct sim *sim);
/* EV_CRASH and EV_RESTART of crash definition ci. */
void sim__crash(struct sim *sim, uint32_t ci);
void sim__restart(struct sim *sim, uint32_t ci);

/* sim_fault.c.  The run's failure, drawn at its start (has_work 0: only
 * rules marked `empty` apply), and its deadline, which cuts the phase
 * durations d[] (prepare, mutate, emit) where it falls and fails it there. */
void sim__draw_failure(struct sim *sim, struct run_rec *r, int has_work);
void sim__apply_deadline(struct sim *sim, struct run_rec *r, int64_t d[3]);
/* Pushes an EV_SCHED per schedule change; EV_SCHED's dispatch (a note,
 * then on_schedule_change for each instance while the host accepts). */
void sim__changes_setup(struct sim *sim);
void sim__sched_change(struct sim *sim, uint32_t a, uint64_t b);
/* EV_TRIGGER: the fact, then on_trigger_ex (or on_trigger) per instance. */
void sim__trigger(struct sim *sim, const struct trigger_def *t);

/* sim_mem.c.  The memory budget: what the engine, the checker, the event
 * queue, the policy's durable blocks and a kept trace (keep_trace) hold, counted from
 * their capacities (deterministic: the same run stops at the same event on
 * every machine).  Item origins, for naming the line that drives a stop:
 * publish line p is origin p, source k is npubs + k, the emits of handler
 * template t are npubs + nsources + t. */
static inline uint32_t sim__origin_source(const struct sim *sim, uint32_t k) { return sim->scn->npubs + k; }
static inline uint32_t sim__origin_emit(const struct sim *sim, uint32_t tmpl)
{
    return sim->scn->npubs + sim->scn->nsources + tmpl;
}
void sim__mem_setup(struct sim *sim);
void sim__mem_free(struct sim *sim);
/* Bytes held now. */
uint64_t sim__mem_used(const struct sim *sim);
/* The main loop prefetches the next event's records (sim.c) while the live
 * state counted at the last check (sim.prefetch) is at least this large:
 * below it, the state stays in the caches and a prefetch would only cost
 * its instructions. */
#define SIM_PREFETCH_MIN ((uint64_t)8 << 20)
/* Over the budget: stops the run (SIM_MEMORY_LIMIT, naming the line that
 * drives it) and returns 1; else 0.  Counted at every SIM_MEM_CHECK_EVERY-th
 * call (each event, item published and run started; a function of the run
 * alone, so still deterministic): the count costs tens of loads, and
 * nothing grows much between two counts. */
#define SIM_MEM_CHECK_EVERY 64
int sim__mem_check_now(struct sim *sim);
/* Prefetching (sim.prefetch) is on while the live state is at least
 * SIM_PREFETCH_MIN: judged at the start and at every memory check. */
void sim__prefetch_judge(struct sim *sim, uint64_t used);
static inline int sim__mem_check(struct sim *sim)
{
    if (sim->mem_stopped)
        return 1;
    if (++sim->mem_calls % SIM_MEM_CHECK_EVERY != 0)
        return 0;
    return sim__mem_check_now(sim);
}

/* sim/api.c.  Builds and frees what sim_topo and its neighbours return
 * (at setup, after the world; at the end). */
void sim__api_setup(struct sim *sim);
void sim__api_free(struct sim *sim);
/* The host stops accepting: every alarm is disarmed (its pending event is
 * left to the epoch check). */
void sim__alarms_quiesce(struct sim *sim);
/* Notes alarm `alarm` as its handler's (inst_runs.alarm_ref) when its tag
 * names a handler (sim_declare_handler_tag). */
void sim__alarm_name_handler(struct sim *sim, size_t alarm);
/* An EV_ALARM event was popped: 1 when it is the live wake of its alarm,
 * which is then disarmed and *out becomes the EV_TIMER event that delivers
 * it (same epoch, a: tag, b: arg); 0 when it is stale. */
int sim__alarm_fire(struct sim *sim, const struct evq_event *ev, struct evq_event *out);

#endif
