/* scenario.h: the parsed form of a scenario file, and its parser.
 *
 * A scenario describes a host running workflows (templates stamped out
 * `x N` times), the outside world that feeds them (publishes and sources),
 * faults, expectations and policy parameters.  This header is the contract
 * between the parser (scenario*.c), the engine (sim.c) and the checker: the
 * parser fills it, validates every value and reference, and nothing after it
 * has to re-check the file.  References to policies, their parameters and
 * metrics are checked through callbacks that the caller passes in (struct
 * scenario_refs), so that the parser includes neither the policy registry
 * nor the checker.
 *
 * Invariant: a `struct scenario` returned by scenario_parse_ex is complete
 * and consistent (every name resolved to an index, every value in range,
 * every limit below respected, every reference to a policy, parameter or
 * metric accepted by the callbacks given).  Times are integer microseconds
 * since the scenario's start instant unless a name says otherwise.
 *
 * Ownership: the parser allocates everything reachable from the struct;
 * scenario_free releases it all. */
#ifndef SIM_SCENARIO_H
#define SIM_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "sim/cal.h"
#include "sim/vocab.h"

/* Limits: a scenario is untrusted input.  Reaching one is an error. */
#define SCN_MAX_LINE        4096        /* bytes in one line */
#define SCN_MAX_LINES       100000
#define SCN_MAX_NAME        64          /* bytes in a name */
#define SCN_MAX_WORKFLOWS   256         /* workflow templates */
#define SCN_MAX_HANDLERS    64          /* handlers per workflow template */
#define SCN_MAX_SUBSCRIBE   16          /* topics per consumer */
#define SCN_MAX_INSTANCES   1000000     /* all workflow instances (sum of x N) */
#define SCN_MAX_HANDLER_INSTANCES 4000000
#define SCN_MAX_HORIZON_US  (INT64_C(3660) * 86400 * 1000000) /* ~10 years */
/* Mean events published (and random crashes drawn) over the horizon,
 * summed: a run of more would stop at the engine's default event limit.
 * Memory is the budget's business (sim_memory_estimate), not this one's. */
#define SCN_MAX_EXPECTED_EVENTS 4000000000.0
#define SCN_MAX_TRACE_LINES 10000000    /* lines in one trace file */
#define SCN_MAX_PARAMS      64          /* set/variant key=value pairs in all */

enum dist_kind { DIST_FIXED, DIST_UNIFORM, DIST_EXP };
/* A duration distribution.  FIXED: a_us.  UNIFORM: [a_us, b_us].
 * EXP: exponential with mean a_us (b_us = 0).  All values >= 0. */
struct dist {
    enum dist_kind kind;
    int64_t a_us, b_us;
};

enum sched_kind { SCHED_NONE, SCHED_EVERY, SCHED_AT, SCHED_CRON };

/* A change of a producer's schedule while the system runs (`disable`,
 * `enable`, `change WF.H every D | cron "EXPR" at T`).  From at_us on:
 * DISABLE: no instant is due until an ENABLE; ENABLE: the definition in
 * force is due again (an `every` keeps its grid); SET: a new definition,
 * as if deployed at at_us (EVERY: at_us + k * every_us, k >= 0; CRON: its
 * fires >= at_us), enabled or not as before. */
enum sched_op { SCHED_OP_DISABLE, SCHED_OP_ENABLE, SCHED_OP_SET };
struct sched_change {
    int64_t at_us;
    uint8_t op;                    /* enum sched_op */
    uint8_t as_written;            /* SET: value not checked by the parser (see struct schedule) */
    uint8_t cron_flags;            /* SET cron: CAL_CRON_AND, CAL_CRON_SECONDS */
    enum sched_kind kind;          /* SET: SCHED_EVERY or SCHED_CRON (SCHED_NONE: never fires) */
    int64_t every_us;
    struct cal_cron cron;
    const struct cal_zone *zone;
    char *value;                   /* SET: the duration or expression as written */
    int line, col;                 /* the line, and the column of the value (of `at` otherwise) */
};

/* A producer's schedule.  Nominal due instants are:
 * EVERY: offset_us + k * every_us for k >= 0 (offset defaults to 0: the
 *        first fire is at deploy time);
 * AT:    at_us once;
 * CRON:  the cron fires in zone (the scenario's unless overridden);
 * then the changes, in time order, from their instants on.
 * Only instants < horizon are due.
 *
 * value is the `every` duration or `cron` expression as written, with its
 * line and column, for the configuration grammar of a system that reads
 * it its own way (sim/grammar.h).  With `as-written` the parser did not
 * read it at all (kind is SCHED_NONE and raw_kind says which it is): only
 * a grammar gives it a meaning, when a simulation starts. */
struct schedule {
    enum sched_kind kind;
    int64_t every_us;
    int64_t offset_us;
    int64_t at_us;
    struct cal_cron cron;
    const struct cal_zone *zone;   /* cron only; owned by the zone cache */
    char *text;                    /* the schedule as written, for reports */
    char *value;                   /* every/cron: the value as written; NULL otherwise */
    int vline, vcol;
    uint8_t cron_flags;            /* CAL_CRON_AND, CAL_CRON_SECONDS as parsed */
    uint8_t as_written;
    enum sched_kind raw_kind;      /* as_written: SCHED_EVERY or SCHED_CRON */
    struct sched_change *changes;  /* sorted by at_us, distinct instants */
    uint32_t nchanges;
};

enum script_kind { SCRIPT_FIFO, SCRIPT_BATCH, SCRIPT_WINDOW, SCRIPT_DIGEST, SCRIPT_CORRELATE };
/* A consumer's script (the workload's decision of what to take; identical
 * under every policy).  FIFO: take everything pending.  BATCH: take all when
 * >= batch_n are pending or the oldest has waited batch_us.  WINDOW: take each
 * event window_us after its publish.  DIGEST: take each event at the first
 * local digest_min (minute of day) after its publish.  CORRELATE: take a pair
 * (one event of topic corr_a, one of corr_b, same key) once both arrived. */
struct script {
    enum script_kind kind;
    uint32_t batch_n;
    int64_t batch_us;
    int64_t window_us;
    int digest_min;
    uint16_t corr_a, corr_b;       /* indices into the workflow's topics */
};



/* One handler failure rule: each run of the handler fails with this class
 * with probability ppm / 1e6 (classes of one handler are exclusive; their
 * sum is <= 1e6).  A failing run fails at the end of the phase `phase`
 * (default PHASE_MUTATING, before the mutation is applied; for the
 * indeterminate class the mutation is applied or not, unknown to the host). */
struct fail_rule {
    enum fail_class cls;
    uint32_t ppm;
    enum run_phase phase;
    /* Deterministic: the handler instance's n-th run (counted from 1)
     * fails when n <= first_n or bit n-1 of attempts is set (n <= 64);
     * ppm is then 0.  Deterministic rules come before probabilities. */
    uint32_t first_n;
    uint64_t attempts;
    /* 1: runs that took nothing can fail too (and are counted); 0: only
     * runs with work (an empty run goes straight to its commit). */
    uint8_t empty;
};

struct handler_def {
    char *name;
    enum handler_kind kind;
    struct dist runs;              /* duration of a run that has work */
    struct dist idle;              /* duration of a run that took nothing (default fixed 0) */
    uint8_t split_pct[3];          /* prepare / mutate / emit share of the duration, sum 100 */
    /* producers */
    struct schedule sched;
    int source;                    /* index into scenario sources, -1 none */
    int out_topic;                 /* topic index it publishes to, -1 none */
    uint32_t emit_n;               /* events it publishes per run (besides source arrivals) */
    /* consumers */
    uint16_t nsub;
    uint16_t sub[SCN_MAX_SUBSCRIBE];  /* workflow topic indices */
    struct script script;
    /* faults */
    struct fail_rule fails[FAIL_NCLASS];
    uint8_t nfails;
    /* `deadline WF.H D [per phase] [fail CLASS]`: a run (or, per phase, one
     * of its phases) still going D after its start fails then, with class
     * deadline_fail, in the phase it is in; 0: none. */
    int64_t deadline_us;
    uint8_t deadline_per_phase;
    uint8_t deadline_fail;         /* enum fail_class */
    int line;                      /* where it was declared */
};

/* A workflow template; instances are stamped out `count` times.  Topics are
 * local to an instance: each instance has its own copy of every topic its
 * handlers name. */
struct workflow_def {
    char *name;
    uint32_t count;
    struct handler_def *handlers;
    uint16_t nhandlers;
    char **topics;                 /* local topic names */
    uint16_t ntopics;
    int line;
};

enum arr_kind { ARR_AT, ARR_RATE, ARR_POISSON, ARR_BURST, ARR_DAILY, ARR_TRACE };
/* An arrival process (for `publish` lines and sources).
 * AT:      count events at at_us.
 * RATE:    one event every per_us / count, from from_us until to_us.
 * POISSON: Poisson with mean count per per_us, in [from_us, to_us).
 * BURST:   count events at at_us, spread evenly over over_us (0: all at once).
 * DAILY:   Poisson whose rate follows a daily curve peaking at local minute
 *          peak_min: rate(t) = mean * (1 + cos(2 pi (local_h - peak_h) / 24)).
 * TRACE:   the instants in trace_us (sorted, relative to start).
 * keys:    0: event k of a stream has key k (pairs line up in order);
 *          N: each event's key is drawn uniformly from 1..N. */
struct arrival {
    enum arr_kind kind;
    uint64_t count;
    int64_t per_us;
    int64_t at_us, from_us, to_us, over_us;
    int peak_min;
    int64_t *trace_us;
    size_t ntrace;
    uint32_t keys;
    int line;
};

/* `publish TOPIC ...`: applies to every instance of every workflow that has
 * a topic of that name (each instance gets its own independent stream). */
struct publish_def {
    char *topic;
    struct arrival arr;
    int line;
};

/* `source NAME ...`: an arrival process outside the host, polled by the
 * producers that name it; each instance has its own independent stream. */
struct source_def {
    char *name;
    struct arrival arr;
    int line;
};

/* `crash TARGET at T for D` (random = 0) or `crash TARGET random mtbf M mttr R`
 * (random = 1: exponential up and down times drawn from the faults stream,
 * until the horizon).
 * `stop host at T [grace G] [for D]` is a graceful stop (target CRASH_STOP):
 * from T the host starts nothing new; runs still active at T + G are cut
 * off; then the host is down, and restarts at T + D when `for` is given
 * (down_us = SIM_NEVER otherwise; D > G). */
struct crash_def {
    enum crash_target target;
    uint32_t index;                /* CRASH_WORKER: which worker (0-based) */
    int random;
    int64_t at_us, down_us;
    int64_t grace_us;              /* CRASH_STOP only; default 30s */
    int64_t mtbf_us, mttr_us;
    int line;
};


/* `trigger WORKFLOW[.HANDLER] at T [delay D]`: manual "run now" of every
 * instance of the workflow, or of one handler in each; delay is the
 * request's own coalescing delay (-1: none given). */
struct trigger_def {
    uint16_t wf;
    int handler;                   /* -1: the workflow */
    int64_t at_us;
    int64_t delay_us;
    int line;
};

/* `busy WORKFLOW at T for D`: every instance of the workflow (an agent) is
 * busy with something outside the scheduler (a user's chat, another lane)
 * during [at_us, at_us + for_us). */
struct busy_def {
    uint16_t wf;
    int64_t at_us, for_us;
    int line;
};

enum expect_op { OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE };
/* How an expect line judges several seeds: EXPECT_EACH (a bare metric)
 * holds when it holds in every seed; the others compare one value computed
 * over the seeds' values: `mean(M)`, `min(M)`, `max(M)`, `pNN(M)` (the
 * nearest-rank NN-th percentile of the seeds' values, 1 <= NN <= 99). */
enum expect_agg { EXPECT_EACH, EXPECT_MEAN, EXPECT_MIN, EXPECT_MAX, EXPECT_PCT };
/* `expect POLICY[,POLICY...]|* METRIC [for WF.HANDLER] OP VALUE`, METRIC
 * bare or inside an aggregate over seeds (`mean(latency.p50)`).
 * metric is a metric name (metric.h, as checked by scenario_refs.metric:
 * e.g. "lost", "latency.p99", "recovery_ok"); value is a number, a duration
 * (stored in us; `inf` is +INFINITY, a censored percentile) or true/false
 * (1/0); the mean or a percentile of a boolean is a share of seeds (0..1). */
struct expect_def {
    char **policies;               /* NULL-terminated; {"*"} for every policy */
    char *metric;
    int wf, handler;               /* -1 -1: the whole scenario */
    enum expect_op op;
    double value;
    char *text;                    /* the line as written, trimmed */
    int line;
    enum expect_agg agg;           /* EXPECT_EACH unless the metric is inside an aggregate */
    int agg_pct;                   /* EXPECT_PCT: the percentile, 1..99 */
};

/* `set POLICY.KEY=VALUE` and `variant NAME POLICY KEY=VALUE...`. */
struct param_kv {
    char *key, *value;
    int line, col;
};
struct param_set_def {
    char *policy;                  /* registered policy name or a variant name */
    struct param_kv *kv;
    uint16_t nkv;
};
struct variant_def {
    char *name;                    /* what it is called in tables and expects */
    char *base;                    /* the registered policy */
    struct param_kv *kv;
    uint16_t nkv;
    int line;
};

/* `sweep POLICY.KEY=V1,V2,...`: one axis of a parameter study; the runs
 * of a policy cover the product of the values of every axis that names it
 * (or, for a variant, its name). */
struct sweep_def {
    char *policy;                  /* a registered policy or a variant name */
    char *key;
    char **values;                 /* as written, each checked against the key */
    uint16_t nvalues;
    int line, col;                 /* where the setting starts */
};

struct scenario {
    char *path;                    /* as given */
    char *name;                    /* `name ...` or the file's base name */
    uint64_t hash;                 /* hash of the file's bytes (and trace files') */
    int64_t start_utc_s;           /* `start`, default 2025-01-01T00:00:00Z */
    const struct cal_zone *zone;   /* `timezone`, default UTC */
    int64_t horizon_us;            /* `horizon`, required */
    int64_t drain_us;              /* `drain`, default 1d */
    int64_t recovery_bound_us;     /* `recovery-bound`, default 1h */
    uint64_t seed;                 /* `seed`, default 1 */
    struct workflow_def *wfs;   uint16_t nwfs;
    struct source_def *sources; uint16_t nsources;
    struct publish_def *pubs;   uint32_t npubs;
    struct crash_def *crashes;  uint32_t ncrashes;
    struct trigger_def *triggers; uint32_t ntriggers;
    struct busy_def *busy;      uint32_t nbusy;
    struct expect_def *expects; uint32_t nexpects;
    struct param_set_def *sets; uint16_t nsets;
    struct variant_def *variants; uint16_t nvariants;
    uint32_t nchanges;             /* schedule changes of all producers */
    uint8_t has_as_written;        /* some schedule is `as-written` */
    uint64_t ninstances;           /* sum of workflow counts */
    uint64_t nhandler_instances;
    char **plugins; uint16_t nplugins; /* `plugin PATH`, resolved against the file's folder */
    struct sweep_def *sweeps; uint16_t nsweeps;
};

/* A parse error: where, and a message (lowercase, no full stop, the
 * offending text quoted). */
struct diag {
    char file[512];
    int line, col;                 /* 1-based; 0 if not applicable */
    char msg[512];
};
/* Prints "file:line:col: error: msg" to stderr. */
void diag_print(const struct diag *d);

/* What the parser knows of a metric named in an expect line. */
struct scenario_metric {
    int is_duration;               /* the value is a duration (stored in us) */
    int is_bool;                   /* the value is true or false; only == and != apply */
    int per_handler;               /* `for WORKFLOW.HANDLER` is allowed */
};

/* What a reference callback returns: the name is good, or the policy (or
 * metric) has no such name or key, or the key exists but its value does not
 * fit.  The parser reports SCN_REF_UNKNOWN at the name or key and
 * SCN_REF_BAD_VALUE at the value. */
enum { SCN_REF_OK = 0, SCN_REF_UNKNOWN = -1, SCN_REF_BAD_VALUE = -2 };

/* The references a scenario makes to things outside it: registered policies
 * and their parameters (`set`, `variant`, `expect`), and metrics (`expect`).
 * The parser checks them through these callbacks, which the caller passes
 * in (sim/refs.h has the standard ones, backed by the policy registry and
 * the metric table), so that the parser depends on neither.  On an error a
 * callback writes a complete message to msg (n bytes: lowercase, no full
 * stop, the subject quoted) and the parser adds the location.  ctx is passed
 * back unchanged.
 *   policy: is name a registered policy?  SCN_REF_OK or SCN_REF_UNKNOWN
 *           ("unknown policy 'x' (valid: ...)").  A name that is not
 *           registered may still be a variant of the file.
 *   param:  does key=value fit policy `policy` (a registered policy, or the
 *           base of a variant)?  SCN_REF_OK, SCN_REF_UNKNOWN (no such key, or
 *           no such policy) or SCN_REF_BAD_VALUE.
 *   metric: is name a metric?  SCN_REF_OK and *out, or SCN_REF_UNKNOWN.
 *   plugin: load the policy plugin at path (a `plugin` line, its path
 *           already resolved against the scenario's folder), so that the
 *           lines of the file can name its policy.  SCN_REF_OK, or
 *           SCN_REF_UNKNOWN with msg.  Called in file order before any
 *           policy name is checked.
 * A NULL scenario_refs, or a NULL member, skips that check, and the file is
 * read as if every such name were good:
 *   policy NULL: any well-formed policy name is accepted in set, variant and
 *           expect lines (a name that is a variant of the file still resolves
 *           to it); a variant's name is not checked against the registry;
 *   param NULL: key=value pairs are checked for their form and repetition
 *           only;
 *   metric NULL: any metric name is accepted, `for` is allowed, and the value
 *           is read by its form: true or false (1 or 0), a number, else a
 *           duration (in us);
 *   plugin NULL: nothing is loaded; the path is only recorded. */
struct scenario_refs {
    void *ctx;
    int (*policy)(void *ctx, const char *name, char *msg, size_t n);
    int (*param)(void *ctx, const char *policy, const char *key, const char *value, char *msg, size_t n);
    int (*metric)(void *ctx, const char *name, struct scenario_metric *out, char *msg, size_t n);
    int (*plugin)(void *ctx, const char *path, char *msg, size_t n);
};

/* Parses the scenario file at path, checking its references through refs
 * (NULL: not checked, see above).  Returns 0 and *out, or -1 with *d set
 * (nothing allocated).  Trace files named by the scenario are read relative
 * to the scenario's directory.  refs is used only during the call. */
int scenario_parse_ex(const char *path, const struct scenario_refs *refs, struct scenario **out, struct diag *d);
/* The same, from a buffer (path only names it in messages and resolves
 * trace files). */
int scenario_parse_buf_ex(const char *path, const char *buf, size_t len, const struct scenario_refs *refs,
                          struct scenario **out, struct diag *d);
/* scenario_parse_ex and scenario_parse_buf_ex with refs NULL: the file's
 * syntax, values and its own references are checked, the names of policies,
 * parameters and metrics are not.  For a file that was checked before (a
 * report re-reading a run's scenario) and for benchmarks. */
int scenario_parse(const char *path, struct scenario **out, struct diag *d);
int scenario_parse_buf(const char *path, const char *buf, size_t len, struct scenario **out, struct diag *d);
void scenario_free(struct scenario *s);

/* Checks the file like scenario_parse_ex, but goes on after an error to
 * report every error of the file, up to max: each line with an error is
 * reported once and skipped from then on; the names it would have defined
 * (a workflow, a handler, a source, a variant, a handler line's topics)
 * are left out of later checks, so that an error is not repeated by what
 * depends on it; the checks of the whole file (unpolled sources, the event
 * estimate, no workflows) run only when every line was good.  An error in
 * a header or plugin line ends the check after the first pass, since every
 * other line depends on them.  Fills errs[0..n) in the order of the lines
 * they come from and returns n (0: the file is valid); *more is 1 when it
 * stopped at max.  Each error is the one scenario_parse_ex would report for
 * its line if the lines before it were good. */
int scenario_check_all(const char *path, const struct scenario_refs *refs, struct diag *errs, int max, int *more);
int scenario_check_all_buf(const char *path, const char *buf, size_t len, const struct scenario_refs *refs,
                           struct diag *errs, int max, int *more);

/* The nominal due instants of a schedule in [from_us, to_us), in order,
 * relative to the scenario start.  Calls fn for each; stops early if fn
 * returns non-zero.  Returns the number visited. */
uint64_t schedule_dues(const struct scenario *s, const struct schedule *sc, int64_t from_us, int64_t to_us,
                       int (*fn)(void *ctx, int64_t due_us), void *ctx);
/* The first nominal due instant > after_us (or >= when inclusive), or
 * SIM_NEVER (only instants < horizon count). */
int64_t schedule_next(const struct scenario *s, const struct schedule *sc, int64_t after_us, int inclusive);
/* The gap from due_us to the schedule's next nominal instant (ignoring the
 * horizon); INT64_MAX for a one-shot. */
int64_t schedule_period_at(const struct scenario *s, const struct schedule *sc, int64_t due_us);

/* How a reader of a schedule may evaluate its cron definitions (the base
 * one and changed ones): in another zone (zone != NULL), or with the two
 * day fields combined with AND (days_and). */
struct sched_read {
    const struct cal_zone *zone;
    int days_and;
    enum cal_dst_rule dst;         /* cron fires at DST changes (CAL_DST_CRONIE: as written) */
};
/* schedule_next as a reader at asof_us sees it: only the changes made by
 * then (later ones are the future), read with rd (NULL: as written). */
int64_t schedule_next_asof(const struct scenario *s, const struct schedule *sc, int64_t after_us, int inclusive,
                           int64_t asof_us, const struct sched_read *rd);
/* The last nominal instant <= t_us (0 <= t_us < horizon) as a reader at
 * asof_us sees the schedule, -1 if none. */
int64_t schedule_prev_asof(const struct scenario *s, const struct schedule *sc, int64_t t_us, int64_t asof_us);
/* The schedule in force at t_us (changes by then applied). */
struct sched_state {
    int enabled;
    enum sched_kind kind;
    int64_t every_us;
    int cron_days_or;
    int64_t changed_us;            /* the latest change at or before t_us, -1 none */
};
void schedule_state_at(const struct schedule *sc, int64_t t_us, struct sched_state *out);

#endif
