/* metric.h: the names of simrun's metrics, in one table, a leaf header.
 *
 * Every metric that `expect` lines, result tables, the database and the
 * report name: "published", "latency.p99", "recovery_ok", ...  The table
 * says how each is printed and whether it is defined per handler; the
 * values themselves come from the checker (metric_get in checker.h).  The
 * scenario parser, the CLI, the store and the reports read the table here
 * without depending on the checker.  This header includes nothing of
 * simrun's; it must stay that way. */
#ifndef SIM_METRIC_H
#define SIM_METRIC_H

/* The index of each metric in metric_table. */
enum metric_id {
    M_PUBLISHED, M_PROCESSED, M_LOST, M_DROPPED, M_STRANDED, M_DUPLICATES, M_DOUBLE_EFFECTS,
    M_DUES, M_MISSED, M_COALESCED, M_RUNS, M_RUNS_EMPTY, M_RUNS_FAILED, M_RUNS_CRASHED, M_RUNS_CUTOFF,
    M_BUSY_LOOPS, M_WAKEUPS, M_OVERLAPS, M_OVERLAP_RUNS,
    M_LAT_P50, M_LAT_P90, M_LAT_P99, M_LAT_MAX, M_LAT_MEAN,
    M_LATE_P50, M_LATE_P99, M_LATE_MAX, M_LATE_MEAN,
    M_CRASHES, M_RECOVERY_OK, M_STUCK, M_RECOVERY_TIME, M_LIVELOCK, M_DELIVERIES, M_DUP_DELIVERIES, M_UNDELIVERED,
    M_COUNT
};

struct metric_info {
    const char *name;
    int is_duration;               /* value in us, printed as a duration */
    int is_bool;
    int per_handler;               /* defined for one handler, too */
    const char *help;
};

/* metric_count entries, in enum metric_id order; static, never freed. */
extern const struct metric_info metric_table[];
extern const int metric_count;
/* The entry named name, or NULL. */
const struct metric_info *metric_find(const char *name);
/* The unit of a metric's values, for machine-readable output: "us" for a
 * duration, "bool" for a boolean (0/1), else what it counts: "items",
 * "dues", "runs", "wakeups", "results", "crashes", "handlers" ("count"
 * for a metric the list below does not know).  Static storage. */
const char *metric_unit(const struct metric_info *mi);

#endif
