/* sim_int.h: the engine's private header; here, its fact layer (sim/sim_fact.c).
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
 *     phase, horizon, stopped, note: trace only
 *     wakeups    checker_wakeups(n)          -
 *
 * A run start carries its script's wake request: the checker hears both
 * from fact_run_start, and the start record's wake_us shows it. */
#ifndef SIM_SIM_INT_H
#define SIM_SIM_INT_H

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
    struct sim_result *res;        /* keep: records go to res->trace */
    int keep;
    int tracing;                   /* out || keep */
};

/* Starts the layer of one simulation: a new checker for world w, the
 * fingerprint's initial value, the trace as o asks (records into res). */
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
};

void fact_publish(struct facts *f, uint64_t item, uint32_t consumer, int64_t origin_us, uint32_t key);
void fact_drop(struct facts *f, uint64_t item, uint32_t consumer, enum drop_cause cause);
void fact_orphan(struct facts *f, uint32_t topic, uint32_t key);
void fact_run_start(struct facts *f, const struct fact_start *s);
void fact_phase(struct facts *f, uint64_t run, uint32_t handler, enum run_phase phase);
void fact_mutation(struct facts *f, uint64_t run, uint32_t handler);
void fact_run_end(struct facts *f, uint64_t run, uint32_t handler, enum run_outcome out, enum run_phase phase,
                  enum fail_class fail);
void fact_delivery(struct facts *f, uint32_t handler, uint64_t result, int ok);
void fact_crash(struct facts *f, enum crash_target target, uint32_t index);
void fact_restart(struct facts *f, enum crash_target target, uint32_t index);
void fact_timer(struct facts *f, uint32_t tag, uint64_t arg);
void fact_tick(struct facts *f, uint32_t ticker);
/* n > 0 ticks of a ticker that stopped (n = 0: no fact). */
void fact_wakeups(struct facts *f, uint32_t ticker, uint64_t n);
void fact_trigger(struct facts *f, uint32_t workflow);
void fact_horizon(struct facts *f);
void fact_stop(struct facts *f, uint64_t cut_off);
void fact_note(struct facts *f, int64_t handler, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

#endif
