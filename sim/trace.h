/* trace.h: the trace of a simulation: one typed record per fact, and the
 * one formatter that renders a record as text.
 *
 * The engine records every fact (a publish, a drop, a run start, a crash,
 * a host wake-up, ...) in one place, its fact layer (sim/sim_int.h), which
 * tells the checker, folds the fact into the fingerprint and, when a trace
 * is wanted, writes one struct trace_rec.  That record is then:
 *   - printed by `--trace`, through trace_format_line (the only formatter);
 *   - stored by `--store-trace`, one column per field (docs/results.md);
 *   - read back by the reports (reports/trace.h), field by field.
 * Nothing parses a trace line back into facts.
 *
 * A kind's number is the code the fingerprint folds for that fact, so
 * renumbering a kind changes every fingerprint.  Kinds from FACT_PHASE on
 * are not folded: phase changes, wake-up counts, the horizon and a
 * completed stop never were, and folding them now would change every
 * fingerprint for nothing (a phase change follows from the folded run
 * start and the seeded draws; the horizon is the scenario's); notes are
 * the policy's commentary, not ground truth.
 *
 * Which fields a kind sets is trace_kind_fields(kind); the other fields are
 * zero, except due_us (-1) and wake_us (SIM_NEVER).  A note's text shares
 * its storage with the typed fields: a note has only t_us, kind, handler
 * and note.
 *
 * This header includes nothing of simrun's but the shared vocabulary. */
#ifndef SIM_TRACE_H
#define SIM_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/vocab.h"

struct world;

enum fact_kind {
    FACT_PUBLISH = 1,              /* an item enters a consumer's topic */
    FACT_DROP = 2,                 /* an item is dropped (evicted, or lost in a crash) */
    FACT_ORPHAN = 3,               /* an event on a topic that no handler subscribes to */
    FACT_RUN_START = 10,           /* a run starts (11: the second word it folds) */
    FACT_RUN_END = 12,             /* a run ends: committed, failed, crashed or cut off */
    FACT_MUTATION = 13,            /* a run's side effect takes effect */
    FACT_DELIVERY = 14,            /* one attempt to deliver a result */
    FACT_CRASH = 20,               /* the host, a worker, the workers or the server goes down */
    FACT_RESTART = 21,             /* ... and comes back */
    FACT_TIMER = 30,               /* a policy timer fires: one host wake-up */
    FACT_TICK = 31,                /* an armed ticker tick is delivered */
    FACT_TRIGGER = 40,             /* a `trigger` line: a manual run of a workflow */
    /* Not folded into the fingerprint. */
    FACT_PHASE = 50,               /* a run enters a phase (mutating, mutated) */
    FACT_WAKEUPS = 51,             /* a ticker stops: the ticks (host wake-ups) it made */
    FACT_HORIZON = 52,             /* the horizon: the drain begins */
    FACT_STOP = 53,                /* a graceful stop completes */
    FACT_NOTE = 54,                /* a policy's note (sim_note) */
    FACT_DURABLE = 55,             /* a row of a policy's durable job table is written (sim_jobs_init) */
    FACT_KIND_END
};

/* "publish", "drop", "orphan", "start", "end", "mutation", "deliver",
 * "crash", "restart", "timer", "tick", "trigger", "phase", "wakeups",
 * "horizon", "stopped", "note", "durable"; NULL for a number that is no
 * kind. */
const char *fact_kind_name(enum fact_kind k);
/* The kind with that name, or -1. */
int fact_kind_parse(const char *name);
/* 1 for the kinds that are durable transitions of the engine or the
 * policy, the instants where crash-point exploration crashes the host
 * (docs/crashpoints.md): start (items reserved), phase, mutation, end
 * (commit or failure), deliver, drop and durable. */
int fact_kind_durable(enum fact_kind k);

#define TRACE_NOTE_MAX 88          /* a note's text, with its NUL */

struct trace_rec {
    int64_t t_us;                  /* virtual time */
    uint64_t run;                  /* start, phase, mutation, end: the run (ids from 1); 0 none */
    int32_t handler;               /* the handler instance it concerns, -1 none */
    uint8_t kind;                  /* enum fact_kind */
    union {
        struct {
            int64_t due_us;        /* start: the due instant it serves, -1 none */
            int64_t wake_us;       /* start: its script's wake request, SIM_NEVER none */
            uint64_t item;         /* publish, drop: the item */
            uint64_t result;       /* deliver: the result id the policy chose */
            uint64_t arg;          /* timer: its argument; durable: the row's id */
            uint64_t count;        /* wakeups: the ticker's ticks; stopped: runs cut off */
            uint32_t taken;        /* start: items its script took */
            uint32_t key;          /* publish, orphan: the event's key */
            uint32_t topic;        /* orphan: the topic instance */
            uint32_t target_index; /* crash, restart: which worker (0-based) */
            uint32_t workflow;     /* trigger: the workflow template */
            uint32_t tag;          /* timer: its tag; durable: the row's new status (enum job_status) */
            uint32_t ticker;       /* tick, wakeups: the ticker */
            uint8_t reason;        /* start: enum run_reason */
            uint8_t resume;        /* start: 1 if it resumes an earlier run at emitting */
            uint8_t phase;         /* phase: the phase entered; end: the phase it ended in */
            uint8_t outcome;       /* end: enum run_outcome */
            uint8_t fail;          /* end: enum fail_class */
            uint8_t cause;         /* drop: enum drop_cause */
            uint8_t ok;            /* deliver: 1 if delivered */
            uint8_t target;        /* crash, restart: enum crash_target */
        };
        char note[TRACE_NOTE_MAX]; /* note: the policy's text */
    };
};

/* The fields each kind sets (besides t_us, kind, handler). */
enum trace_field {
    TF_RUN = 1u << 0, TF_DUE = 1u << 1, TF_WAKE = 1u << 2, TF_ITEM = 1u << 3, TF_RESULT = 1u << 4,
    TF_ARG = 1u << 5, TF_COUNT = 1u << 6, TF_TAKEN = 1u << 7, TF_KEY = 1u << 8, TF_TOPIC = 1u << 9,
    TF_TARGET_INDEX = 1u << 10, TF_WORKFLOW = 1u << 11, TF_TAG = 1u << 12, TF_TICKER = 1u << 13,
    TF_REASON = 1u << 14, TF_RESUME = 1u << 15, TF_PHASE = 1u << 16, TF_OUTCOME = 1u << 17,
    TF_FAIL = 1u << 18, TF_CAUSE = 1u << 19, TF_OK = 1u << 20, TF_TARGET = 1u << 21, TF_NOTE = 1u << 22,
};
unsigned trace_kind_fields(enum fact_kind k);

/* A record of kind k at t_us: the typed fields at their "none" values. */
void trace_rec_init(struct trace_rec *r, enum fact_kind k, int64_t t_us, int32_t handler, uint64_t run);

/* What a --trace line says after the kind ("reason=event taken=1 due=-
 * wake=-", "item=3 key=7", ...), without the run id.  w names topics and
 * workflows (NULL: their numbers).  Returns what snprintf would. */
int trace_format_detail(const struct trace_rec *r, const struct world *w, char *buf, size_t n);

/* One --trace line, without the newline:
 *     LABEL TIME HANDLER KIND DETAIL[ run=N]
 * e.g. "poll 1d08:10:02 mail[0].poll start    reason=recover taken=0
 * due=1d08:05:00 wake=- run=61481".  HANDLER is "-" for none, and the
 * instance id when w is NULL.  Returns what snprintf would. */
int trace_format_line(const struct trace_rec *r, const struct world *w, const char *label, char *buf, size_t n);

#endif
