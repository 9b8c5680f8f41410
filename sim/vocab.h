/* vocab.h: the shared vocabulary of simrun, a leaf header.
 *
 * The words that the parser, the engine, the policies, the checker, the
 * store and the reports all speak: what a run is doing (phase), how it ended
 * (outcome), why it failed (failure class), why it started (reason), what
 * a policy promises about concurrency, and which part of a system crashed.
 * They live here, with their printable names, so that no module has to
 * include another module's header to name them.  This header includes
 * nothing of simrun's; it must stay that way. */
#ifndef SIM_VOCAB_H
#define SIM_VOCAB_H

/* The two kinds of handler: a producer runs on a schedule (and may poll a
 * source or publish); a consumer runs on the items of the topics it
 * subscribes to. */
enum handler_kind { H_PRODUCER, H_CONSUMER };

/* The phases of a run, in order (spec 2): preparing -> mutating (the side
 * effect) -> mutated -> emitting (publishing results) -> committed.
 * PHASE_PREPARED is the boundary between preparing and mutating. */
enum run_phase {
    PHASE_PREPARING, PHASE_PREPARED, PHASE_MUTATING, PHASE_MUTATED, PHASE_EMITTING, PHASE_COMMITTED
};
const char *run_phase_name(enum run_phase p);

/* FAIL_DELIVERY is not a run failure: it is the probability that one
 * delivery attempt of a run's result fails (sim_deliver). */
enum fail_class { FAIL_NONE, FAIL_TRANSIENT, FAIL_LOGIC, FAIL_INTERNAL, FAIL_INDETERMINATE, FAIL_DELIVERY };
#define FAIL_NCLASS 6
/* "none", "transient", "logic", "internal", "indeterminate", "delivery". */
const char *fail_class_name(enum fail_class f);

/* Why a run started; for the trace and the timeline, not for metrics. */
enum run_reason {
    REASON_SCHEDULE, REASON_EVENT, REASON_WAKE, REASON_RETRY, REASON_MANUAL, REASON_POLL,
    REASON_RECOVER, REASON_TICK, REASON_HEARTBEAT, REASON_CRON, REASON_OTHER,
    REASON_COUNT
};
const char *run_reason_name(enum run_reason r);

/* How a run ended: committed, failed (the host saw the failure), crashed
 * (its host or worker went down under it), cut off (a graceful stop's grace
 * ran out, the simulation ended, or the policy cancelled it: sim_run_cancel). */
enum run_outcome { OUT_COMMITTED, OUT_FAILED, OUT_CRASHED, OUT_CUTOFF };
const char *run_outcome_name(enum run_outcome o);

/* Why an item was dropped: the policy evicted it, or it lived only in
 * volatile memory that a crash took. */
enum drop_cause { DROP_EVICTED, DROP_CRASH };
const char *drop_cause_name(enum drop_cause c);

/* How many runs a policy promises may be active at once; overlaps measure
 * the time this promise is broken.  HANDLER: one run per handler instance;
 * WORKFLOW: one run per workflow instance; UNIT: one run per unit of work
 * (an item, or a producer's due instant), so that a job run twice at once
 * overlaps while independent jobs of one handler do not. */
enum promise { PROMISE_NONE, PROMISE_HANDLER, PROMISE_WORKFLOW, PROMISE_UNIT };

/* What a `crash` line takes down: the host, one worker, all workers, the
 * server of a client/server design, or (`stop host`) a graceful stop. */
enum crash_target { CRASH_HOST, CRASH_WORKER, CRASH_WORKERS, CRASH_SERVER, CRASH_STOP };
/* "host", "worker", "workers", "server", "stop". */
const char *crash_target_name(enum crash_target t);

#endif
