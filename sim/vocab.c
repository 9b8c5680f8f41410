/* vocab.c: printable names of the shared vocabulary (vocab.h). */
#include "sim/vocab.h"

const char *run_phase_name(enum run_phase p)
{
    switch (p) {
    case PHASE_PREPARING: return "preparing";
    case PHASE_PREPARED: return "prepared";
    case PHASE_MUTATING: return "mutating";
    case PHASE_MUTATED: return "mutated";
    case PHASE_EMITTING: return "emitting";
    case PHASE_COMMITTED: return "committed";
    }
    return "unknown";
}

const char *fail_class_name(enum fail_class f)
{
    switch (f) {
    case FAIL_NONE: return "none";
    case FAIL_TRANSIENT: return "transient";
    case FAIL_LOGIC: return "logic";
    case FAIL_INTERNAL: return "internal";
    case FAIL_INDETERMINATE: return "indeterminate";
    case FAIL_DELIVERY: return "delivery";
    }
    return "unknown";
}

const char *run_reason_name(enum run_reason r)
{
    static const char *const names[REASON_COUNT] = {
        "schedule", "event", "wake", "retry", "manual", "poll", "recover", "tick", "heartbeat", "cron", "other",
    };
    if ((int)r < 0 || r >= REASON_COUNT)
        return "unknown";
    return names[r];
}

const char *run_outcome_name(enum run_outcome o)
{
    switch (o) {
    case OUT_COMMITTED: return "committed";
    case OUT_FAILED: return "failed";
    case OUT_CRASHED: return "crashed";
    case OUT_CUTOFF: return "cutoff";
    }
    return "unknown";
}

const char *drop_cause_name(enum drop_cause c)
{
    switch (c) {
    case DROP_EVICTED: return "evicted";
    case DROP_CRASH: return "crash";
    }
    return "unknown";
}

const char *crash_target_name(enum crash_target t)
{
    switch (t) {
    case CRASH_HOST: return "host";
    case CRASH_WORKER: return "worker";
    case CRASH_WORKERS: return "workers";
    case CRASH_SERVER: return "server";
    case CRASH_STOP: return "stop";
    }
    return "unknown";
}
