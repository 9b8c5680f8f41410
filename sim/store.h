/* store.h: simulation results in SQLite (spec 7; schema in docs/results.md).
 *
 * One simulation run is written in one transaction, after it completed, so
 * an interrupted run leaves nothing half-written.  The schema is created in
 * one place with its version (table meta, key 'schema_version'); opening a
 * database of another version is an error, never a silent migration.
 *
 * Ownership: store_open returns a handle that store_close releases; the
 * store borrows nothing after store_write_run returns. */
#ifndef SIM_STORE_H
#define SIM_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/scenario.h"
#include "sim/sim.h"

/* 2: the trace table has one column per field of struct trace_rec
 * (version 1 had its text in one column, detail). */
#define STORE_SCHEMA_VERSION 2

struct store;

/* The outcome of one expect line for this run. */
struct expect_outcome {
    const struct expect_def *ex;
    double measured;
    int ok;
};

struct store_run {
    const struct scenario *scn;
    const char *policy;            /* label: a registered policy or a variant name */
    const char *base_policy;       /* the registered policy behind it */
    const char *params;            /* canonical non-default parameters, "" if none */
    uint64_t seed;
    const char *version;           /* simrun version */
    const struct sim_result *res;
    int64_t wall_us;               /* measured wall time: goes to run_timings only */
    const struct expect_outcome *expects;
    uint32_t nexpects;
    int with_trace;                /* 1: write res->trace into the trace table */
};

/* store_open's return when the file cannot be written (read-only, locked
 * by another process, disk full, an I/O error, a folder that cannot hold
 * it), as opposed to -1: a file that is not a results database of this
 * version. */
#define STORE_EWRITE (-2)

/* Opens (creating if needed) the database at path.  0, or -1 or
 * STORE_EWRITE with err. */
int store_open(const char *path, struct store **out, char *err, size_t n);
void store_close(struct store *st);
/* Writes one run in one transaction; *run_id gets its id.  0, or -1 with
 * err (and nothing written).  Every input is checked before a run is
 * written, so a failure here is a write fault (read-only, locked, full,
 * an I/O error, a file-size limit). */
int store_write_run(struct store *st, const struct store_run *r, int64_t *run_id, char *err, size_t n);

#endif
