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
 * (version 1 had its text in one column, detail).
 * 3: table run_plan, where a run stands in the job list of the sweep that
 * made it (its parameter-study point, for merges and reports); a version 2
 * file is upgraded in place when opened for writing (the table is added,
 * nothing else changes).
 * 4: table crash_points marks the runs of `simrun crashpoints`; a version 2
 * or 3 file is upgraded the same way (the tables it lacks are added). */
#define STORE_SCHEMA_VERSION 4

struct store;

/* The outcome of one expect line for this run. */
struct expect_outcome {
    const struct expect_def *ex;
    double measured;
    int ok;
};

/* A run of `simrun crashpoints` (docs/crashpoints.md): the scenario with
 * one crash line added, written beside the run in table crash_points. */
struct store_crash_point {
    int64_t baseline_run_id;       /* the run without the injected crash; 0 none */
    uint32_t point;                /* its number in the exploration, from 1 */
    int64_t at_us;
    const char *side;              /* "before" or "after" the transition */
    const char *transition;        /* "mutation", "end committed", ... */
    const char *handler;           /* the transition's handler instance, "" none */
    const char *line;              /* the crash line that reproduces it */
    int fail;
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
    /* The run's trace records to write into the trace table (struct
     * trace_rec, in order, read from where the file stands to its end, as
     * sweep_out.trace spools them); NULL: none. */
    FILE *trace;
    const struct store_crash_point *crash_point; /* NULL: an ordinary run */
    /* Where the run stands in its sweep (a run_plan row); plan NULL: none. */
    const char *plan;              /* the sweep's identity: a hash of its whole job list, hex */
    int64_t job;                   /* its index in that list, from 0 */
    const char *sweep;             /* its parameter-study point, "period=10s,x=2"; "" none */
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

/* --- a dedicated writer ------------------------------------------------------------------------
 * A thread that owns the store while it runs and writes the runs handed to
 * it, in the order they came, each in its own transaction, so that the
 * caller simulates while the database waits for the disk (a commit syncs).
 * Start it after any fork (a sweep forks its workers first), use the store
 * only through it until store_writer_finish, and hand runs over from one
 * thread. */
struct store_writer;

/* Starts the writer; at most depth runs wait to be written (then
 * store_writer_put blocks). */
struct store_writer *store_writer_start(struct store *st, int depth);
/* Hands one run over.  *r is copied; the result (*res, which r->res must
 * point to), the expect outcomes (r->expects, malloc'd) and the trace
 * (r->trace) are taken over: *res is left zeroed, and the writer frees
 * them (closes the trace) once written.  r->scn and
 * the strings are borrowed until store_writer_finish.  0, or -1 with err
 * when an earlier write failed (that run and every later one are dropped:
 * the database keeps the runs before it, each whole). */
int store_writer_put(struct store_writer *w, const struct store_run *r, struct sim_result *res, char *err,
                     size_t n);
/* Waits until every run handed over is written, stops the thread and frees
 * the writer.  0, or -1 with the first error. */
int store_writer_finish(struct store_writer *w, char *err, size_t n);

/* --- what is stored ----------------------------------------------------------------------------- */

/* The identity of a stored run, for `run --resume`: "HASH\x1fPOLICY\x1f
 * PARAMS\x1fSEED" (store_run_key), sorted with strcmp.  *versions gets
 * the distinct simrun versions of the runs, comma-separated (n bytes).
 * The caller frees each key and the array.  0, or -1 with err. */
int store_run_keys(struct store *st, char ***keys, size_t *nkeys, char *versions, size_t vn, char *err, size_t n);
/* The key of a run as store_run_keys writes it (buf: n bytes). */
void store_run_key(uint64_t scenario_hash, const char *policy, const char *params, uint64_t seed, char *buf, size_t n);

/* Merges the results databases in[0..nin) into out (created if missing),
 * all in one transaction: nothing is written unless every input can be
 * merged.  Refused: a file of another schema version, runs of more than
 * one simrun version (in out and the inputs together), one scenario name
 * with two scenario hashes (the scenario file differs), and two runs of
 * the same (scenario hash, policy, params, seed) with different
 * fingerprints.  A run equal to one already there (that key and the
 * fingerprint) is skipped.  New runs are numbered in sweep order: runs of
 * one sweep plan (run_plan) by their job index, so that shards of one sweep
 * merge into the same run ids as the sweep run on one machine; runs
 * without a plan keep their input order.  *added and *skipped count runs.
 * 0, or -1 with err (2-style: bad input). */
int store_merge(const char *out, const char *const *in, int nin, size_t *added, size_t *skipped, char *err,
                size_t n);

#endif
