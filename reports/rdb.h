/* rdb.h: reading a results database (docs/results.md) for reports and
 * diffs.
 *
 * Runs are grouped by what makes them comparable: the scenario (by its
 * hash: the same name with another hash is another scenario), the policy
 * label and the canonical parameters.  Within a group each seed appears
 * once: a database that holds several runs of the same (group, seed) --
 * runs are appended, never replaced -- contributes its newest (highest
 * run_id), and the older ones are counted in `superseded`.
 *
 * Ownership: rdb_open returns a handle owning everything reachable from it,
 * including an open read-only sqlite connection (`db`) that callers may
 * query directly; rdb_close releases it all. */
#ifndef REPORTS_RDB_H
#define REPORTS_RDB_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

struct rdb_run {
    int64_t run_id;
    uint64_t seed;
    char fingerprint[17];
    char status[16];               /* ok, livelock, event-limit */
    double *m;                     /* [metric_count]: whole-scenario values in metric_table order, NaN if absent */
};

struct rdb_group {
    char *scenario, *scenario_path, *scenario_hash, *policy, *base_policy, *params, *version;
    int64_t horizon_us, drain_us;
    struct rdb_run *runs;          /* ascending seed */
    size_t nruns;
};

struct rdb {
    sqlite3 *db;
    char *path;
    int version;                   /* its schema version (STORE_SCHEMA_VERSION or older) */
    struct rdb_group *groups;      /* in the order of their first run in the file */
    size_t ngroups;
    size_t nruns;                  /* rows in runs */
    size_t superseded;             /* older runs of a (group, seed) that a newer one replaced */
};

/* Opens path read-only, checks its schema version and loads every run with
 * its whole-scenario metrics.  0, or -1 with err (a missing file, not a
 * database, a schema version it does not read).  It reads version 1 too:
 * the tables it reads are the same in both (only the trace table changed,
 * see reports/trace.h). */
int rdb_open(const char *path, struct rdb **out, char *err, size_t n);
void rdb_close(struct rdb *r);

/* The seeds of a group as text: "1..100", "3", "1..5,9,12..14" (at most n
 * bytes, "..." when cut). */
void rdb_seed_text(const struct rdb_group *g, char *buf, size_t n);

#endif
