/* policy.h: a scheduling policy as the engine sees it, and the registry.
 *
 * The contract a policy works under (what it may know, the lifecycle,
 * ownership) is written at the head of sim/policy_api.h, the one header a
 * policy includes; this one is a leaf (it includes only sim/vocab.h).
 *
 * A policy decides *when* handlers run; the engine runs them (durations,
 * phases, failures, scripts) and the checker judges the result.  A policy
 * instance keeps two kinds of state (spec section 3):
 *  - durable: a block of `durable_size` bytes that the engine allocates and
 *    zeroes once per simulation, plus any arrays the policy allocates with
 *    sim_dalloc/sim_drealloc.  It survives host crashes.
 *  - volatile: everything the policy allocates itself in create().  At a
 *    host crash the engine calls destroy() (which must free all of it),
 *    drops every timer, alarm and ticker the policy had, interrupts every
 *    active run, and on restart calls create() again with the same durable
 *    block and then start() with restart = 1.  A policy cannot survive a
 *    crash by accident.
 *
 * Hooks are called from the engine's main loop only; `now_us` is the
 * current virtual time.  A hook may start runs, set alarms and timers and
 * ask the engine what sim/policy_api.h offers; it never advances time.
 * Append new hooks at the end and bump POLICY_ABI; optional hooks may be
 * NULL (their default is written beside them). */
#ifndef SIM_POLICY_H
#define SIM_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "sim/vocab.h"

/* 2: on_stop appended.  3: on_schedule_change, on_trigger_ex and the
 * built-in variants appended.  4: check_params appended. */
#define POLICY_ABI 4

struct sim;
struct policy;                     /* each policy defines its own */

/* PARAM_TOD: a local time of day "HH:MM", stored as minutes since midnight
 * ("24:00" is 1440, the end of the day, for an end time).
 * PARAM_ZONE: an IANA time zone name or "local" (the scenario's zone),
 * stored as the zone's address (0 for "local"; read it with params_zone).
 * PARAM_DECIMAL: a number with up to three decimal places ("1.5"), stored
 * in thousandths (1500), its range too (appended: ABI 3 still). */
enum param_type { PARAM_INT, PARAM_DURATION, PARAM_ENUM, PARAM_BOOL, PARAM_TOD, PARAM_ZONE, PARAM_DECIMAL };
/* One parameter of a policy: the declarative table that `simrun policies`
 * prints, `set`/`--set` validate against, and params_get reads. */
struct param_def {
    const char *key;
    enum param_type type;
    const char *def;               /* default, as text */
    const char *choices;           /* PARAM_ENUM: "a|b|c" */
    int64_t min, max;              /* PARAM_INT / PARAM_DURATION (us) / PARAM_DECIMAL (thousandths) range */
    const char *source;            /* the seed section or as-built fact */
    const char *help;
};

/* A resolved parameter set: one value per param_def, in table order. */
#define PARAMS_MAX 32                /* parameters a policy may declare */
struct params {
    const struct param_def *defs;
    int n;
    int64_t v[PARAMS_MAX];         /* INT/DURATION/BOOL: the value; ENUM: choice index */
    /* How the system reads its configuration (enum grammar, sim/grammar.h):
     * 0, simrun's own, unless a built-in variant names its system's. */
    int grammar;
};

/* A manual "run now" (`trigger` line): of a whole workflow instance, or of
 * one handler in it; delay_us is the request's own coalescing delay (-1:
 * none given: the policy's own rule). */
struct sim_trigger {
    uint32_t inst;
    uint32_t handler;              /* UINT32_MAX: the whole workflow instance */
    int64_t delay_us;
};

/* A built-in variant: the policy configured as a real system was built,
 * run by name like a policy (`-p keepai`, `expect keepai ...`).  Each
 * setting cites where its value comes from; grammar names the system's
 * configuration grammar (sim/grammar.h). */
struct variant_setting {
    const char *key, *value;
    const char *source;            /* repository file (and lines), or document section */
};
struct policy_variant {
    const char *name;
    const char *summary;           /* one line */
    const char *source;            /* the repository and commit it reproduces */
    const char *grammar;           /* a grammar name, "simrun" for the policy's own */
    const struct variant_setting *settings;
    int nsettings;
};

struct run_result {
    uint64_t run;
    uint32_t handler;
    enum run_outcome outcome;      /* OUT_COMMITTED or OUT_FAILED */
    enum fail_class fail;          /* FAIL_NONE when committed */
    enum run_phase phase;          /* the phase it reached */
    uint32_t ntaken;               /* items its script reserved (consumers) */
    int64_t wake_us;               /* the script's wake request, SIM_NEVER if none */
    int64_t start_us;
    uint32_t worker;
    uint64_t tag;                  /* run_req.tag, back to the policy */
};

struct policy_ops {
    int abi;                       /* POLICY_ABI */
    const char *name;
    const char *summary;           /* one line */
    const char *seeds;             /* seed references, e.g. "seeds 000, 001" */
    const struct param_def *params;
    int nparams;
    size_t durable_size;
    enum promise promise;          /* what the checker holds it to */
    int items_volatile;            /* 1: items handed to it live only in its memory (lost at a crash) */

    /* Allocates the volatile state.  durable is the policy's durable block
     * (zeroed on the first call of a simulation). */
    struct policy *(*create)(struct sim *sim, void *durable, const struct params *ps);
    /* Frees all volatile state.  Called at a crash and at the end. */
    void (*destroy)(struct policy *p);
    /* The host (re)starts: restart = 0 at deploy time (t = 0), 1 after a
     * crash; rebuild volatile state from durable state here. */
    void (*start)(struct policy *p, int restart, int64_t now_us);
    /* An item for consumer `handler` was published (or polled in). */
    void (*on_publish)(struct policy *p, uint32_t handler, uint64_t item, int64_t now_us);
    /* A timer set with sim_timer_at fired. */
    void (*on_timer)(struct policy *p, uint32_t tag, uint64_t arg, int64_t now_us);
    /* A run the policy started ended (committed or failed; not crashed). */
    void (*on_run_end)(struct policy *p, const struct run_result *r, int64_t now_us);
    /* Manual "run now" of workflow instance inst.  NULL: ignored. */
    void (*on_trigger)(struct policy *p, uint32_t inst, int64_t now_us);
    /* A part of the system crashed or came back (worker index, all workers,
     * the server); the host itself is handled by destroy/create.  NULL:
     * the policy has no such parts and the crash is a no-op. */
    void (*on_part)(struct policy *p, int target, uint32_t index, int up, int64_t now_us);
    /* The horizon was reached and the drain begins (schedules stop). NULL: nothing. */
    void (*on_horizon)(struct policy *p, int64_t now_us);
    /* A graceful stop (`stop host at T grace G`) begins: called once, at T,
     * never at a crash.  From now on the host starts nothing (sim_run_start
     * refuses), its timers, alarms and tickers are gone and no publish,
     * trigger or horizon reaches it; runs already active may still end
     * (on_run_end) until T + G, then the host is down (destroy).  A policy
     * records here that it is stopping, so that its run ends change only
     * what the real system would write while shutting down.  NULL: nothing
     * (sim_run_start's refusal is then the only sign of the stop). */
    void (*on_stop)(struct policy *p, int64_t now_us);

    /* --- ABI 3 --- */
    /* The schedule of producer `handler` was changed at now (a `disable`,
     * `enable` or `change` line): sim_sched_info and sim_sched_next answer
     * with the new one from now on.  Not called while the host is down or
     * stopping (the policy reads the schedule afresh when it starts).
     * NULL: nothing (a policy that asks sim_sched_next at every fire sees
     * the change at its next fire; one that armed an alarm does not). */
    void (*on_schedule_change)(struct policy *p, uint32_t handler, int64_t now_us);
    /* A manual "run now" with what the `trigger` line said: one handler
     * (t->handler), or a whole instance, and the request's own delay.
     * NULL: on_trigger(t->inst), for a handler's trigger too. */
    void (*on_trigger_ex)(struct policy *p, const struct sim_trigger *t, int64_t now_us);
    /* Built-in variants (as-built configurations), for the registry. */
    const struct policy_variant *variants;
    int nvariants;

    /* --- ABI 4 --- */
    /* Refuses a combination of parameters that the real system refuses
     * (each value is already within its own range): returns the index in
     * ps->defs of the parameter to blame, with msg saying why, or -1 when
     * the combination is fine.  Called once a target's parameters are
     * resolved (set lines, variants, --set, each sweep point), before
     * anything runs.  NULL: every combination is accepted. */
    int (*check_params)(const struct params *ps, char *msg, size_t n);
};

/* The registry: every built-in policy, in a fixed order. */
extern const struct policy_ops *const policy_registry[];
extern const int policy_registry_count;
/* A built-in or added policy by name, or NULL. */
const struct policy_ops *policy_find(const char *name);

/* Policies added at run time (plugins, sim/plugin.h) follow the built-in
 * ones: policy_at(0 .. policy_count() - 1) lists both, built-ins first,
 * then the added ones in the order they came. */
#define POLICY_MAX_ADDED 64
int policy_count(void);
const struct policy_ops *policy_at(int i);
/* Adds a policy defined outside simrun, from `origin` (the plugin's path,
 * for messages and `simrun policies`), after checking what the engine
 * relies on: abi == POLICY_ABI, a valid name (a letter, then letters,
 * digits, '_', '-') that no policy has yet, every required hook (create,
 * destroy, start, on_publish, on_timer, on_run_end), a known promise and a
 * sound parameter table (unique keys, defaults that parse, min <= max).
 * Returns the registry's own copy of ops (texts that were NULL are ""; a
 * NULL seeds becomes the origin), or NULL with msg ("it was built for
 * policy ABI 1, ...", "policy 'x' has no 'on_timer' hook ...").  ops
 * and what it points to (hooks, choices) must stay valid until the process
 * ends: plugins are never unloaded. */
const struct policy_ops *policy_register(const struct policy_ops *ops, const char *origin, char *msg, size_t n);
/* Where an added policy came from; NULL for a built-in one. */
const char *policy_origin(const struct policy_ops *ops);

/* Resolves parameters: defaults, then each key=value in order.  Returns 0,
 * or -1 with msg ("unknown parameter 'x' for policy 'poll' (valid: period,
 * ...)" or "bad value '5x' for poll.period: ..."). */
int params_init(struct params *ps, const struct policy_ops *ops);
int params_set(struct params *ps, const char *key, const char *value, char *msg, size_t n);
int64_t params_get(const struct params *ps, const char *key);  /* a missing key is a bug */
/* The index of key in ps->defs, or -1. */
int params_index(const struct params *ps, const char *key);
/* ops->check_params on ps: -1 when the combination is fine (or the policy
 * has no such hook), else the index of the parameter to blame (ps->n when
 * the hook named none of them), with msg. */
int params_check(const struct policy_ops *ops, const struct params *ps, char *msg, size_t n);
struct cal_zone;
/* A PARAM_ZONE value: the zone, or dflt for "local". */
const struct cal_zone *params_zone(const struct params *ps, const char *key, const struct cal_zone *dflt);
/* Canonical text of the non-default values, "k=v,k=v" sorted by table
 * order; "" when all are defaults. */
void params_format(const struct params *ps, char *buf, size_t n);
/* The value of one parameter as a scenario would write it ("10s", "true",
 * "09:30"), default or not; 0, or -1 when ps has no such key. */
int params_value_text(const struct params *ps, const char *key, char *buf, size_t n);

/* A built-in variant by name (and its policy in *ops), or NULL. */
const struct policy_variant *policy_variant_find(const char *name, const struct policy_ops **ops);
/* The registered policies' names, then "; built-in variants: " and theirs,
 * comma-separated, into buf (cut to fit); each is also added to sg unless
 * it is NULL.  Returns the length written. */
struct suggest;
size_t policy_list_names(char *buf, size_t n, struct suggest *sg);
/* Applies a built-in variant's settings and grammar to ps (initialised for
 * its policy).  0, or -1 with msg (a bug in the variant's table). */
int policy_variant_apply(const struct policy_variant *v, struct params *ps, char *msg, size_t n);

/* For the scenario parser: is `name` a registered policy or a built-in
 * variant?  On no, msg lists the valid policy names. */
int policy_check_name(const char *name, char *msg, size_t n);
/* For the scenario parser: does key=value fit policy `name` (a built-in
 * variant: as its system's grammar reads the value)?  0 or -1 with msg. */
int policy_check_param(const char *name, const char *key, const char *value, char *msg, size_t n);

#endif
