/* checker.h: every metric of a simulation, derived from ground truth.
 *
 * The engine reports what happened (publishes, drops, run starts with their
 * reservations, mutations, commits, run ends, crashes and restarts, host
 * wake-ups); the checker knows nothing of the policy and computes the
 * metrics of spec section 5 from these facts and from the scenario alone
 * (nominal due instants come from the schedules, not from the policy).  A
 * policy cannot report its own metrics.
 *
 * Units of work.  A consumer's unit is an item: one published event as seen
 * by one subscribed consumer (item ids are dense, assigned by the engine in
 * publish order).  A producer's unit is the nominal due instant that a run
 * says it serves (run start `due_us`; -1 when it serves none in particular).
 *
 * Online.  The checker keeps live state only: an item until the engine
 * retires it (checker_item_retire: no run can take it again), a run while it
 * is active, per producer its dues walked as runs start and compact sets of
 * the dues committed and mutated, per handler a few counters, and the
 * crashes whose recovery is still open.  Per-crash records are kept for the
 * first CHECKER_CRASH_RECORDS crashes; the whole-run crash metrics count
 * every crash.  An engine that never retires items (a test) gets the same
 * metrics; it only keeps more.
 *
 * Ownership: checker_new borrows the world (and its scenario) until
 * checker_free.  checker_finish fills a result that the caller releases with
 * checker_result_free. */
#ifndef SIM_CHECKER_H
#define SIM_CHECKER_H

#include <stdint.h>

#include "sim/hist.h"
#include "sim/metric.h"
#include "sim/vocab.h"
#include "sim/world.h"



struct metrics {
    uint64_t published, processed, lost, dropped, stranded;
    uint64_t duplicates, double_effects;
    uint64_t dues, missed, coalesced;
    uint64_t runs, runs_empty, busy_loops, runs_failed, runs_crashed, runs_cutoff;
    uint64_t deliveries;           /* successful deliveries of results */
    uint64_t dup_deliveries;       /* successful deliveries of a result already delivered */
    uint64_t undelivered;          /* results attempted but never delivered by the end */
    uint64_t wakeups;
    int64_t overlaps_us;           /* time with two runs active against the promise */
    uint64_t overlap_runs;         /* runs that started while another was active against it */
    struct hist latency;           /* item origin -> first commit; unprocessed items censored */
    struct hist lateness;          /* due instant -> start of the run that served it; unserved censored */
};

/* Per crash (spec 5).  recovery_time_us: restart -> start of the first run
 * that makes progress (commits having taken work, or a producer run that
 * commits); 0 when no work was due at the restart; -1 never. */
struct crash_rec {
    int target;                    /* enum crash_target */
    uint32_t index;
    int64_t at_us, restart_us;     /* restart_us = SIM_NEVER if it never restarted */
    int64_t recovery_time_us;
    uint32_t stuck;                /* handlers with due work that never ran again */
    uint64_t lost;                 /* items dropped at it, or pending at it and never processed */
    uint64_t double_effects;       /* mutations repeated after its restart, before the next crash */
    int ok;
};

/* Crashes with a record of their own (store: the crashes table); the
 * whole-run metrics (crashes, recovery_ok, stuck, recovery_time) count
 * every crash. */
#define CHECKER_CRASH_RECORDS 10000

struct checker_result {
    struct metrics total;
    struct metrics *per_tmpl;      /* [ntmpl]: per handler template */
    uint32_t ntmpl;
    struct crash_rec *crashes;     /* the first CHECKER_CRASH_RECORDS crashes */
    uint32_t ncrashes;             /* records in crashes */
    uint64_t crashes_total;        /* every crash: metric `crashes` */
    int recovery_ok;               /* all crashes ok (1 when there were none) */
    uint64_t stuck;                /* sum over crashes */
    int64_t recovery_time_max_us;  /* -1 if some crash never recovered */
    int livelock;                  /* set by the engine: the run was stopped as a livelock */
};

struct checker;

/* The checker's record of an active run.  The calls that take a run id keep
 * it in the checker; a caller that keeps run records of its own (the
 * engine) gives the checker room for it in them instead (the *_at calls),
 * so that the two records of a run sit side by side and no lookup is made.
 * Only the checker reads or writes the fields; the storage must stay put
 * during a call, but may move between calls (the checker keeps no pointer
 * to it). */
struct checker_run {
    int64_t start_us, due_us;
    uint64_t id;
    uint64_t cohort;               /* for the oldest active start */
    uint32_t handler, n;           /* n: items taken */
    uint32_t tmpl, prod;           /* the handler's template and producer index (CK_NIL: none), so
                                      that its mutation and end need not read the handler's record */
    union {
        uint32_t item;             /* n == 1: the item's slot */
        uint32_t *items;           /* n > 1: their slots, owned */
    };
};

struct checker *checker_new(const struct world *w, enum promise promise);
void checker_free(struct checker *c);

/* Ground truth, in the order it happened (now_us never decreases). */
/* Returns the item's slot in the checker, for checker_prefetch_item. */
uint32_t checker_publish(struct checker *c, uint64_t item, uint32_t consumer, int64_t origin_us, int64_t now_us);
void checker_drop(struct checker *c, uint64_t item, enum drop_cause cause, int64_t now_us);
/* A run starts.  taken: the item ids its script reserved (n may be 0: an
 * empty run).  For a producer, due_us is the nominal instant it serves or
 * -1; resume_of != 0: it resumes that run at emitting and reuses its
 * mutation. */
void checker_run_start(struct checker *c, uint64_t run, uint32_t handler, enum run_reason reason,
                       int64_t due_us, uint64_t resume_of, const uint64_t *taken, uint32_t n,
                       int64_t now_us);
/* The script of that run asked to be woken at wake_us (an input: a due
 * wake is new input for the busy-loop rule). */
void checker_wake_request(struct checker *c, uint32_t handler, int64_t wake_us, int64_t now_us);
/* The run's mutation took effect (phase mutated reached, or an
 * indeterminate failure that did apply it). */
void checker_mutated(struct checker *c, uint64_t run, int64_t now_us);
void checker_run_end(struct checker *c, uint64_t run, enum run_outcome out, int64_t now_us);
/* The same three with the caller's storage for the run's record (see
 * struct checker_run): r from start to end, untouched by the caller. */
void checker_run_start_at(struct checker *c, struct checker_run *r, uint64_t run, uint32_t handler,
                          enum run_reason reason, int64_t due_us, const uint64_t *taken, uint32_t n,
                          int64_t now_us);
void checker_mutated_at(struct checker *c, struct checker_run *r, int64_t now_us);
void checker_run_end_at(struct checker *c, struct checker_run *r, enum run_outcome out, int64_t now_us);
void checker_crash(struct checker *c, int target, uint32_t index, int64_t now_us);
void checker_restart(struct checker *c, int target, uint32_t index, int64_t now_us);
void checker_wakeups(struct checker *c, uint64_t n);
/* The engine will never name this item again (it is processed or dropped,
 * and no run holds it): its account is settled and it is forgotten. */
void checker_item_retire(struct checker *c, uint64_t item, int64_t now_us);
/* One attempt to deliver result `id` (an id the policy chose, unique in the
 * simulation) of handler h, successful or not. */
void checker_delivery(struct checker *c, uint32_t handler, uint64_t id, int ok, int64_t now_us);

/* Computes every metric at the end of the simulation (end_us: horizon +
 * drain, or where a stopped run stopped). */
void checker_finish(struct checker *c, int64_t end_us, struct checker_result *out);
void checker_result_free(struct checker_result *r);

/* A hint for the memory system from an engine that knows which run's
 * phase event comes next: the checker's records that event will read.
 * prod and item are the run's checker_run.prod and, when it took one item,
 * checker_run.item; inst the handler's workflow instance (the world's
 * h[].inst, which the engine reads from a table of its own); what: the
 * event starts a run of the handler, applies
 * the run's mutation, or ends the run.  A value out of range (UINT32_MAX)
 * names nothing.  It
 * reads only the checker's own sizes and changes nothing. */
enum ck_prefetch { CK_PREFETCH_START, CK_PREFETCH_MUTATION, CK_PREFETCH_END };
void checker_prefetch(const struct checker *c, uint32_t handler, uint32_t inst, uint32_t prod, uint32_t item,
                      enum ck_prefetch what);
/* What checker_prefetch of a start or an end (given no inst) leads to,
 * once the engine has read the handler's instance: the group of the
 * instance's runs under the workflow promise and, for a producer's start
 * (producer_start), the producer's record, found through a table that a
 * start's checker_prefetch loads.  A hint only, like checker_prefetch. */
void checker_prefetch_deps(const struct checker *c, uint32_t handler, uint32_t inst, int producer_start);
/* Starts loading what retiring item (at the checker's slot `slot`, the
 * run record's ck_slot) will read; a hint only, like checker_prefetch. */
void checker_prefetch_item(const struct checker *c, uint64_t item, uint32_t slot);

/* Bytes the checker holds now (by capacity), for the memory budget; O(1). */
uint64_t checker_bytes(const struct checker *c);
/* What a live item and a handler instance cost the checker, about. */
uint64_t checker_item_bytes(void);
uint64_t checker_handler_bytes(void);

/* The value of metric `name` (metric.h) for handler template tmpl, or for
 * the whole scenario when tmpl is -1: returns 0 and *out (durations in us,
 * booleans 0/1; +INFINITY for a latency or lateness percentile, maximum or
 * mean that lands on censored samples: work never done, hist.h), or -1 for
 * an unknown name, a template out of range, or a metric not defined per
 * handler. */
int metric_get(const struct checker_result *r, int tmpl, const char *name, double *out);

#endif
