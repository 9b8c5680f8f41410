/* crashpoints.h: crash-point exploration: a host crash at every point of a
 * run that matters for recovery (docs/crashpoints.md).
 *
 * The exploration simulates a scenario under one policy and watches its
 * durable transitions: the facts of the kinds that fact_kind_durable
 * names (a run starts and reserves items, enters a phase, records its
 * mutation, ends; a delivery; a drop; a row of a durable job table is
 * written).  The durable facts between two crash points of the engine
 * (struct sim_point, sim.h) form one transition.  For every transition in
 * the window it takes the point just before it (the first point of its
 * instant, or the point just after the previous transition of the instant:
 * the same place, listed once) and the point just after it, and measures a
 * run with a host crash injected there.
 *
 * Prefix sharing.  A first run enumerates the points (it is also the
 * baseline, the run without an injected crash).  A second run forks at
 * each point: the child injects the crash, finishes the simulation and
 * sends its result back through a pipe, while the parent goes on towards
 * the next point; up to `jobs` children run at once.  So the prefix up to a
 * point is simulated once for all points instead of once per point.  A
 * child writes nothing shared: the parent flushes its buffered output
 * before each fork, and the child's only output is its pipe (it ends with
 * _exit).  With rerun = 1 every point is simulated from the start instead,
 * from the scenario text with the point's crash line added: the same
 * results, fingerprint for fingerprint (tests/test_crashpoints.c), at the
 * cost that bench/bench_crashpoints.c measures.
 *
 * Each point has its scenario line (`crash host at T after mutation of
 * cd.c for D`, or `crash host at T first for D`), which the parser reads
 * back (docs/scenario-format.md): the original scenario plus that line
 * reproduces the point's run.
 *
 * Ownership: cp_explore fills a result that cp_result_free releases; the
 * result borrows the scenario, which must outlive it. */
#ifndef SIM_CRASHPOINTS_H
#define SIM_CRASHPOINTS_H

#include <stddef.h>
#include <stdint.h>

#include "sim/sim.h"
#include "sim/world.h"

/* --- the metrics of a crash point --------------------------------------------
 * What `expect P crashpoints NAME OP VALUE` may name, and the columns of
 * the table.  Per point: lost, duplicates, double_effects and missed are
 * what the run has beyond the baseline (never below 0); stuck,
 * recovery_time and recovery_ok are the injected crash's own record.  Over
 * all points: points (their number) and failing (those that fail). */
enum cp_metric {
    CP_LOST, CP_DUPLICATES, CP_DOUBLE_EFFECTS, CP_STUCK, CP_MISSED, CP_RECOVERY_TIME, CP_RECOVERY_OK,
    CP_POINTS, CP_FAILING, CP_NMETRICS
};
struct cp_metric_info {
    const char *name;
    int is_duration, is_bool;
    int over_all;                  /* one value for the whole exploration */
    const char *help;
};
extern const struct cp_metric_info cp_metric_table[CP_NMETRICS];
/* The index of the metric called name, or -1. */
int cp_metric_find(const char *name);

/* --- points --------------------------------------------------------------------- */

enum cp_side { CP_BEFORE, CP_AFTER };

#define CP_MAX_JOBS 256            /* children at once */

/* A transition: its most telling fact (an engine fact rather than a job
 * row), and how many durable facts it has. */
struct cp_transition {
    uint8_t kind;                  /* enum fact_kind */
    uint8_t detail;                /* phase: the phase; end: outcome; deliver: ok; drop: cause; durable: status */
    int32_t handler;               /* handler instance, -1 none */
    uint64_t run;                  /* 0 none */
    uint32_t nfacts;
};

/* What a point's run showed (see enum cp_metric).  recovery_ok is the
 * checker's rule for a crash's ok (docs/metrics.md) applied to the injected
 * crash with lost and double_effects counted beyond the baseline: nothing
 * more lost or doubled, nothing stuck, recovered within the scenario's
 * recovery bound.  A point fails when recovery is not ok, it duplicates
 * work, or its run stops early (livelock, a limit) where the baseline did
 * not. */
struct cp_outcome {
    int done;                      /* measured (0: its child failed: exit_status) */
    int exit_status;               /* !done: the child's exit status (128 + signal) */
    int crashed;                   /* the injected crash happened */
    enum sim_status status;
    uint64_t fingerprint;
    int64_t lost, duplicates, double_effects, missed;
    uint32_t stuck;
    int64_t recovery_time_us;      /* -1: never recovered */
    int recovery_ok;
    int fail;                      /* lost, duplicated, doubled, stuck, not ok, or the run broke */
};

struct cp_point {
    uint32_t no;                   /* 1, 2, ... in event order */
    int64_t t_us;
    uint64_t sp;                   /* the engine's point (sim_point.index) */
    enum cp_side side;
    struct cp_transition tr;       /* the transition it is just before or just after */
    /* Its position for the scenario line: first (before anything at t_us),
     * or after the ref_nth fact of kind ref_kind (of ref_handler, -1 any)
     * at t_us. */
    int first;
    uint8_t ref_kind;
    int32_t ref_handler;
    uint32_t ref_nth;
    struct cp_outcome out;
    struct sim_result *res;        /* keep_results: the point's whole result */
};

struct cp_opts {
    uint64_t seed;
    int64_t from_us, to_us;        /* crash instants in [from, to) */
    uint64_t max;                  /* 0: every point; else the first max */
    int64_t down_us;               /* > 0: the injected crash's downtime */
    int jobs;                      /* children at once, 1 .. CP_MAX_JOBS */
    int rerun;                     /* 1: every point from the start (no prefix sharing) */
    uint64_t max_events;           /* 0: the engine's default */
    int keep_results;              /* keep each point's sim_result */
};

struct cp_result {
    const struct scenario *scn;
    struct world w;                /* for names */
    struct sim_result base;        /* the run without an injected crash */
    struct cp_point *pts;
    size_t npts;
    uint64_t ntransitions;         /* in the window (before --max) */
    int truncated;                 /* max left points out */
    size_t nfail, nerr;            /* failing points, points that could not be measured */
    int64_t down_us;
};

/* Explores s under ops/ps.  0, or -1 with err (a fork, pipe or read
 * failed; the simulation broke determinism).  A point whose child died is
 * not an error of the exploration: it is counted in nerr and fails. */
int cp_explore(const struct scenario *s, const struct policy_ops *ops, const struct params *ps,
               const struct cp_opts *o, struct cp_result *out, char *err, size_t n);
void cp_result_free(struct cp_result *r);

/* The default downtime: the scenario's first fixed crash's, else 1 min. */
int64_t cp_default_down(const struct scenario *s);
/* A metric's value at point p (CP_POINTS and CP_FAILING: of all of r, p
 * may be NULL). */
double cp_point_metric(const struct cp_result *r, const struct cp_point *p, int metric);

/* "cd.c" or "mail[3].triage" for a handler instance; "-" for -1. */
void cp_handler_name(const struct cp_result *r, int32_t h, char *buf, size_t n);
/* What a transition is: "mutation", "start", "end committed", "phase
 * mutating", "deliver ok", "drop evicted", "durable running". */
void cp_transition_what(const struct cp_transition *t, char *buf, size_t n);
/* Where point p is: "just after mutation of cd.c (run 9)". */
void cp_point_text(const struct cp_result *r, const struct cp_point *p, char *buf, size_t n);
/* An instant or duration as the scenario format writes it, exact to the
 * microsecond: "3h1m30s1us", "0". */
void cp_fmt_us(int64_t us, char *buf, size_t n);
/* The scenario line of point p with downtime down_us:
 * "crash host at 3h1m30s after mutation of cd.c for 5m". */
void cp_point_line(const struct cp_result *r, const struct cp_point *p, int64_t down_us, char *buf, size_t n);
/* The scenario file's text (s->path); 0, or -1 with err.  *text is
 * malloc'd. */
int cp_scenario_text(const struct scenario *s, char **text, size_t *len, char *err, size_t n);
/* text with a comment and line appended (malloc'd, *olen its length). */
char *cp_scenario_with(const char *text, size_t len, const char *comment, const char *line, size_t *olen);

#endif
