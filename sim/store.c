/* store.c: simulation results in SQLite (see store.h; the schema and how to
 * query it are in docs/results.md).
 *
 * The schema lives in exactly one place, schema_sql below, together with
 * STORE_SCHEMA_VERSION: a change to one is a change to the other and to
 * docs/results.md.  store_open creates it in an empty database and refuses
 * any database whose meta table names another version (or that has tables
 * but no meta table: it is not ours to write into).
 *
 * Every statement is prepared once per store and kept in struct store;
 * values are bound by parameter name, never by position, so the SQL can be
 * read on its own (the batched histogram insert looks its names up once, at
 * open).  Cost: a run writes O(handler templates x metrics) metric rows and
 * one row per non-empty histogram bucket; about 33 000 rows (100 templates
 * with wide histograms) take some 20 ms on a current machine.  A run is written between BEGIN IMMEDIATE and COMMIT; the
 * first failing return code stops the write, rolls the transaction back and
 * reports sqlite's own message, so a run is either all there or not at all.
 *
 * Invariant: outside store_write_run the connection has no open transaction
 * and every prepared statement is reset with no bindings. */
#include "sim/store.h"
#include "sim/store_int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "sim/cal.h"
#include "sim/util.h"

/* The whole schema, version STORE_SCHEMA_VERSION.  Child tables reference
 * runs with ON DELETE CASCADE so that a user who enables foreign keys can
 * delete a run with one statement; their primary keys (or an explicit index)
 * start with run_id, which is also what the cascade needs. */
static const char schema_sql[] =
    "CREATE TABLE meta (\n"
    "    key TEXT PRIMARY KEY NOT NULL,\n"
    "    value TEXT NOT NULL\n"
    ");\n"
    "CREATE TABLE runs (\n"
    "    run_id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
    "    scenario TEXT NOT NULL,\n"
    "    scenario_path TEXT NOT NULL,\n"
    "    scenario_hash TEXT NOT NULL,\n"
    "    policy TEXT NOT NULL,\n"
    "    base_policy TEXT NOT NULL,\n"
    "    params TEXT NOT NULL,\n"
    "    seed INTEGER NOT NULL,\n"
    "    simrun_version TEXT NOT NULL,\n"
    "    fingerprint TEXT NOT NULL,\n"
    "    status TEXT NOT NULL,\n"
    "    status_msg TEXT NOT NULL,\n"
    "    events INTEGER NOT NULL,\n"
    "    start_utc TEXT NOT NULL,\n"
    "    horizon_us INTEGER NOT NULL,\n"
    "    drain_us INTEGER NOT NULL,\n"
    "    end_us INTEGER NOT NULL\n"
    ");\n"
    "CREATE INDEX runs_by_key ON runs(scenario_hash, policy, seed);\n"
    "CREATE TABLE run_timings (\n"
    "    run_id INTEGER PRIMARY KEY NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
    "    wall_us INTEGER NOT NULL,\n"
    "    events_per_s REAL\n"
    ");\n"
    "CREATE TABLE metrics (\n"
    "    run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
    "    handler TEXT NOT NULL,\n"
    "    name TEXT NOT NULL,\n"
    "    value REAL,\n"
    "    PRIMARY KEY(run_id, handler, name)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE histograms (\n"
    "    run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
    "    handler TEXT NOT NULL,\n"
    "    kind TEXT NOT NULL,\n"
    "    bucket_lo_us INTEGER NOT NULL,\n"
    "    bucket_hi_us INTEGER NOT NULL,\n"
    "    count INTEGER NOT NULL,\n"
    "    PRIMARY KEY(run_id, handler, kind, bucket_lo_us)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE crashes (\n"
    "    run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
    "    idx INTEGER NOT NULL,\n"
    "    target TEXT NOT NULL,\n"
    "    target_index INTEGER NOT NULL,\n"
    "    at_us INTEGER NOT NULL,\n"
    "    restart_us INTEGER,\n"
    "    recovery_time_us INTEGER,\n"
    "    stuck INTEGER NOT NULL,\n"
    "    lost INTEGER NOT NULL,\n"
    "    double_effects INTEGER NOT NULL,\n"
    "    recovery_ok INTEGER NOT NULL,\n"
    "    PRIMARY KEY(run_id, idx)\n"
    ");\n"
    "CREATE TABLE expectations (\n"
    "    run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
    "    line INTEGER NOT NULL,\n"
    "    text TEXT NOT NULL,\n"
    "    metric TEXT NOT NULL,\n"
    "    handler TEXT NOT NULL,\n"
    "    op TEXT NOT NULL,\n"
    "    expected REAL NOT NULL,\n"
    "    measured REAL,\n"
    "    ok INTEGER NOT NULL\n"
    ");\n"
    "CREATE INDEX expectations_by_run ON expectations(run_id);\n"
    /* One column per field of struct trace_rec (sim/trace.h); NULL where
     * the record's kind has no such field. */
    "CREATE TABLE trace (\n"
    "    run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
    "    seq INTEGER NOT NULL,\n"
    "    t_us INTEGER NOT NULL,\n"
    "    kind TEXT NOT NULL,\n"
    "    handler INTEGER,\n"
    "    run INTEGER,\n"
    "    reason TEXT,\n"
    "    taken INTEGER,\n"
    "    due_us INTEGER,\n"
    "    wake_us INTEGER,\n"
    "    resume INTEGER,\n"
    "    phase TEXT,\n"
    "    outcome TEXT,\n"
    "    fail TEXT,\n"
    "    item INTEGER,\n"
    "    key INTEGER,\n"
    "    cause TEXT,\n"
    "    topic INTEGER,\n"
    "    result INTEGER,\n"
    "    ok INTEGER,\n"
    "    target TEXT,\n"
    "    target_index INTEGER,\n"
    "    workflow INTEGER,\n"
    "    tag INTEGER,\n"
    "    arg INTEGER,\n"
    "    ticker INTEGER,\n"
    "    count INTEGER,\n"
    "    note TEXT,\n"
    "    PRIMARY KEY(run_id, seq)\n"
    ") WITHOUT ROWID;\n"
    "CREATE VIEW run_metrics AS\n"
    "    SELECT r.run_id, r.scenario, r.scenario_hash, r.policy, r.params, r.seed,\n"
    "           m.handler, m.name, m.value\n"
    "    FROM runs AS r JOIN metrics AS m USING (run_id);\n";

/* Added in version 3 (and to a version 2 file when it is opened for
 * writing): where a run stands in the job list of its sweep. */
static const char run_plan_sql[] =
    "CREATE TABLE run_plan (\n"
    "    run_id INTEGER PRIMARY KEY NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
    "    plan TEXT NOT NULL,\n"
    "    job INTEGER NOT NULL,\n"
    "    sweep TEXT NOT NULL\n"
    ");\n"
    "CREATE INDEX run_plan_by_job ON run_plan(plan, job);\n";

/* Added in version 4 (and to a version 2 or 3 file when it is opened for
 * writing): the runs of `simrun crashpoints` (docs/crashpoints.md), which
 * runs are crash points and where their crash fell. */
static const char crash_points_sql[] =
    "CREATE TABLE crash_points (\n"
    "    run_id INTEGER PRIMARY KEY NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
    "    baseline_run_id INTEGER REFERENCES runs(run_id) ON DELETE SET NULL,\n"
    "    point INTEGER NOT NULL,\n"
    "    at_us INTEGER NOT NULL,\n"
    "    side TEXT NOT NULL,\n"
    "    transition TEXT NOT NULL,\n"
    "    handler TEXT NOT NULL,\n"
    "    line TEXT NOT NULL,\n"
    "    fail INTEGER NOT NULL\n"
    ");\n";

/* The statements a store keeps prepared.  S_BEGIN .. S_ROLLBACK frame a
 * run; the others insert into the table that stmt_what names (one row
 * each, S_HIST_BATCH excepted). */
enum stmt_id {
    S_BEGIN, S_COMMIT, S_ROLLBACK,
    S_RUN, S_TIMING, S_METRIC, S_HIST, S_HIST_BATCH, S_CRASH, S_EXPECT, S_TRACE, S_CRASH_POINT, S_PLAN,
    S_COUNT
};

/* Histogram buckets go in HIST_BATCH rows per statement (S_HIST_BATCH, its
 * SQL built by hist_batch_sql), the remainder one by one (S_HIST).  A run
 * with a hundred handler templates can have tens of thousands of non-empty
 * buckets, and then sqlite's per-statement cost, not its per-row cost,
 * would dominate the write. */
#define HIST_BATCH 64

static const char *const stmt_sql[S_COUNT] = {
    [S_BEGIN] = "BEGIN IMMEDIATE",
    [S_COMMIT] = "COMMIT",
    [S_ROLLBACK] = "ROLLBACK",
    [S_RUN] = "INSERT INTO runs(scenario, scenario_path, scenario_hash, policy, base_policy, params,"
              " seed, simrun_version, fingerprint, status, status_msg, events, start_utc,"
              " horizon_us, drain_us, end_us)"
              " VALUES(:scenario, :scenario_path, :scenario_hash, :policy, :base_policy, :params,"
              " :seed, :simrun_version, :fingerprint, :status, :status_msg, :events, :start_utc,"
              " :horizon_us, :drain_us, :end_us)",
    [S_TIMING] = "INSERT INTO run_timings(run_id, wall_us, events_per_s)"
                 " VALUES(:run_id, :wall_us, :events_per_s)",
    [S_METRIC] = "INSERT INTO metrics(run_id, handler, name, value)"
                 " VALUES(:run_id, :handler, :name, :value)",
    [S_HIST] = "INSERT INTO histograms(run_id, handler, kind, bucket_lo_us, bucket_hi_us, count)"
               " VALUES(:run_id, :handler, :kind, :bucket_lo_us, :bucket_hi_us, :count)",
    /* [S_HIST_BATCH]: built at open by hist_batch_sql. */
    [S_CRASH] = "INSERT INTO crashes(run_id, idx, target, target_index, at_us, restart_us,"
                " recovery_time_us, stuck, lost, double_effects, recovery_ok)"
                " VALUES(:run_id, :idx, :target, :target_index, :at_us, :restart_us,"
                " :recovery_time_us, :stuck, :lost, :double_effects, :recovery_ok)",
    [S_EXPECT] = "INSERT INTO expectations(run_id, line, text, metric, handler, op, expected,"
                 " measured, ok)"
                 " VALUES(:run_id, :line, :text, :metric, :handler, :op, :expected, :measured, :ok)",
    [S_TRACE] = "INSERT INTO trace(run_id, seq, t_us, kind, handler, run, reason, taken, due_us, wake_us,"
                " resume, phase, outcome, fail, item, key, cause, topic, result, ok, target, target_index,"
                " workflow, tag, arg, ticker, count, note)"
                " VALUES(:run_id, :seq, :t_us, :kind, :handler, :run, :reason, :taken, :due_us, :wake_us,"
                " :resume, :phase, :outcome, :fail, :item, :key, :cause, :topic, :result, :ok, :target,"
                " :target_index, :workflow, :tag, :arg, :ticker, :count, :note)",
    [S_CRASH_POINT] = "INSERT INTO crash_points(run_id, baseline_run_id, point, at_us, side, transition, handler,"
                      " line, fail)"
                      " VALUES(:run_id, :baseline_run_id, :point, :at_us, :side, :transition, :handler,"
                      " :line, :fail)",
    [S_PLAN] = "INSERT INTO run_plan(run_id, plan, job, sweep) VALUES(:run_id, :plan, :job, :sweep)",
};

/* What a failing statement was doing, for the message. */
static const char *const stmt_what[S_COUNT] = {
    [S_BEGIN] = "begin a transaction",
    [S_COMMIT] = "commit",
    [S_ROLLBACK] = "roll back",
    [S_RUN] = "insert into runs",
    [S_TIMING] = "insert into run_timings",
    [S_METRIC] = "insert into metrics",
    [S_HIST] = "insert into histograms",
    [S_HIST_BATCH] = "insert into histograms",
    [S_CRASH] = "insert into crashes",
    [S_EXPECT] = "insert into expectations",
    [S_TRACE] = "insert into trace",
    [S_CRASH_POINT] = "insert into crash_points",
    [S_PLAN] = "insert into run_plan",
};

/* Room for "workflow.handler" (names are at most SCN_MAX_NAME bytes). */
#define STORE_NAME_MAX (2 * SCN_MAX_NAME + 2)

struct store {
    sqlite3 *db;
    int fault;                     /* opening failed on a write fault (STORE_EWRITE) */
    char *path;                    /* as given to store_open, for messages */
    sqlite3_stmt *stmt[S_COUNT];
    int bind_rc;                   /* first failed bind since the last step, SQLITE_OK if none */
    /* Parameter indices of :lo_K, :hi_K, :count_K in S_HIST_BATCH, looked up
     * by name once, at open, because they are bound so often. */
    int batch_param[HIST_BATCH][3];
};

static void set_err(char *err, size_t n, const char *fmt, ...)
{
    if (!err || n == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
}

/* --- opening ----------------------------------------------------------------- */

/* The message for a failure while opening: sqlite's own text, quoted after
 * what was being done.  A file that is not a database is reported as such,
 * whichever statement first read it. */
/* Whether sqlite's rc says the file cannot be written (rather than that it
 * is not ours to write): read-only, locked, full, an I/O error. */
static int write_fault(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_READONLY: case SQLITE_BUSY: case SQLITE_LOCKED: case SQLITE_FULL: case SQLITE_IOERR:
    case SQLITE_CANTOPEN: case SQLITE_PERM:
        return 1;
    }
    return 0;
}

/* sqlite's message, and for an I/O error the system's reason after it
 * ("disk I/O error (File too large)"), in buf. */
static const char *io_msg(sqlite3 *db, int rc, const char *msg, char *buf, size_t n)
{
    int e = db ? sqlite3_system_errno(db) : 0;
    if ((rc & 0xff) != SQLITE_IOERR && (rc & 0xff) != SQLITE_FULL && (rc & 0xff) != SQLITE_CANTOPEN)
        e = 0;
    if (e)
        snprintf(buf, n, "%s (%s)", msg, strerror(e));
    else
        snprintf(buf, n, "%s", msg);
    return buf;
}

static void open_err(struct store *st, int rc, const char *what, const char *msg, char *err, size_t n)
{
    char b[320];
    st->fault |= write_fault(rc);
    if (!msg)
        msg = sqlite3_errstr(rc);
    msg = io_msg(st->db, rc, msg, b, sizeof b);
    if ((rc & 0xff) == SQLITE_NOTADB)
        set_err(err, n, "cannot open results database '%s': %s", st->path, msg);
    else
        set_err(err, n, "cannot use results database '%s': cannot %s: %s", st->path, what, msg);
}

/* Runs sql (one or more statements, no rows expected) outside the prepared
 * set; for the schema and the connection's settings. */
static int exec_sql(struct store *st, const char *sql, const char *what, char *err, size_t n)
{
    char *msg = NULL;
    int rc = sqlite3_exec(st->db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        open_err(st, rc, what, msg, err, n);
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

/* Prepares sql into *out; on failure quotes sqlite's message. */
static int prepare(struct store *st, const char *sql, const char *what, sqlite3_stmt **out, char *err,
                   size_t n)
{
    int rc = sqlite3_prepare_v2(st->db, sql, -1, out, NULL);
    if (rc != SQLITE_OK) {
        open_err(st, rc, what, sqlite3_errmsg(st->db), err, n);
        *out = NULL;
        return -1;
    }
    return 0;
}

/* Steps a one-row query; SQLITE_ROW, SQLITE_DONE, or -1 with the message
 * (and q finalized). */
static int step_query(struct store *st, sqlite3_stmt *q, const char *what, char *err, size_t n)
{
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW || rc == SQLITE_DONE)
        return rc;
    open_err(st, rc, what, sqlite3_errmsg(st->db), err, n);
    (void)sqlite3_finalize(q); /* repeats the error just reported */
    return -1;
}

static int finalize_query(struct store *st, sqlite3_stmt *q, const char *what, char *err, size_t n)
{
    int rc = sqlite3_finalize(q);
    if (rc != SQLITE_OK) {
        open_err(st, rc, what, sqlite3_errmsg(st->db), err, n);
        return -1;
    }
    return 0;
}

/* Whether the database has a meta table (*has_meta 0/1), and how many
 * tables of its own it has in all. */
static int schema_tables(struct store *st, int *has_meta, int64_t *ntables, char *err, size_t n)
{
    static const char what[] = "read its schema";
    sqlite3_stmt *q;
    if (prepare(st,
                "SELECT coalesce(sum(name = 'meta'), 0), count(*) FROM sqlite_master"
                " WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
                what, &q, err, n) != 0)
        return -1;
    int rc = step_query(st, q, what, err, n);
    if (rc < 0)
        return -1;
    SIM_ASSERT(rc == SQLITE_ROW); /* an aggregate query returns one row */
    *has_meta = sqlite3_column_int64(q, 0) > 0;
    *ntables = sqlite3_column_int64(q, 1);
    return finalize_query(st, q, what, err, n);
}

/* Reads meta.schema_version and compares it with ours; *upgrade is set
 * to the version of a version 2 or 3 file, which setup_schema brings to
 * version 4. */
static int check_version(struct store *st, int *upgrade, char *err, size_t n)
{
    static const char what[] = "read its schema version";
    sqlite3_stmt *q;
    if (prepare(st, "SELECT value FROM meta WHERE key = 'schema_version'", what, &q, err, n) != 0)
        return -1;
    int rc = step_query(st, q, what, err, n);
    if (rc < 0)
        return -1;
    int ret = 0;
    if (rc == SQLITE_DONE) {
        set_err(err, n, "results database '%s' has a meta table but no schema version; this simrun writes version %d",
                st->path, STORE_SCHEMA_VERSION);
        ret = -1;
    } else {
        const unsigned char *v = sqlite3_column_text(q, 0);
        char want[16];
        snprintf(want, sizeof want, "%d", STORE_SCHEMA_VERSION);
        int old = v && (!strcmp((const char *)v, "2") || !strcmp((const char *)v, "3"));
        *upgrade = old ? atoi((const char *)v) : 0;
        if (!v || (strcmp((const char *)v, want) != 0 && !*upgrade)) {
            /* Older files are not converted: version 1 kept the trace as
             * text, which cannot be turned into typed columns faithfully. */
            int older = v && atoi((const char *)v) > 0 && atoi((const char *)v) < STORE_SCHEMA_VERSION;
            set_err(err, n, "results database '%s' has schema version %s; this simrun writes version %d%s",
                    st->path, v ? (const char *)v : "NULL", STORE_SCHEMA_VERSION,
                    older ? " and does not convert older files: write to a new file, or use the simrun that "
                            "wrote it"
                          : "");
            ret = -1;
        }
    }
    if (finalize_query(st, q, what, err, n) != 0)
        return -1;
    return ret;
}

/* Creates the schema in an empty database, or checks the version of an
 * existing one; in one transaction, so two processes opening a new file at
 * once cannot both create it. */
static int setup_schema(struct store *st, char *err, size_t n)
{
    if (exec_sql(st, "BEGIN IMMEDIATE", "begin a transaction", err, n) != 0)
        return -1;
    int has_meta = 0;
    int64_t ntables = 0;
    if (schema_tables(st, &has_meta, &ntables, err, n) != 0)
        goto rollback;
    if (has_meta) {
        int upgrade = 0;
        if (check_version(st, &upgrade, err, n) != 0)
            goto rollback;
        if (upgrade == 2 && exec_sql(st, run_plan_sql, "add the run_plan table (schema version 3)", err, n) != 0)
            goto rollback;
        if (upgrade && (exec_sql(st, crash_points_sql, "add the crash_points table (schema version 4)", err, n) != 0 ||
                        exec_sql(st, "UPDATE meta SET value = '4' WHERE key = 'schema_version'",
                                 "record the schema version", err, n) != 0))
            goto rollback;
    } else if (ntables > 0) {
        set_err(err, n, "results database '%s' is not a simrun results database (it has tables but no meta table)",
                st->path);
        goto rollback;
    } else {
        if (exec_sql(st, schema_sql, "create the schema", err, n) != 0 ||
            exec_sql(st, run_plan_sql, "create the schema", err, n) != 0 ||
            exec_sql(st, crash_points_sql, "create the schema", err, n) != 0)
            goto rollback;
        char sql[96];
        snprintf(sql, sizeof sql, "INSERT INTO meta(key, value) VALUES('schema_version', '%d')",
                 STORE_SCHEMA_VERSION);
        if (exec_sql(st, sql, "record the schema version", err, n) != 0)
            goto rollback;
    }
    if (exec_sql(st, "COMMIT", "commit the schema", err, n) != 0)
        goto rollback;
    return 0;

rollback:
    if (!sqlite3_get_autocommit(st->db))
        (void)sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL); /* the first error is the one reported */
    return -1;
}

/* "INSERT INTO histograms(...) VALUES(:run_id, :handler, :kind, :lo_0,
 * :hi_0, :count_0), ..." for HIST_BATCH rows; the caller frees it. */
static char *hist_batch_sql(void)
{
    static const char head[] = "INSERT INTO histograms(run_id, handler, kind, bucket_lo_us, bucket_hi_us, count) VALUES";
    enum { ROW_MAX = 64 };
    size_t cap = sizeof head + (size_t)HIST_BATCH * ROW_MAX;
    char *sql = xmalloc(cap);
    size_t len = (size_t)snprintf(sql, cap, "%s", head);
    for (int k = 0; k < HIST_BATCH; k++) {
        int w = snprintf(sql + len, cap - len, "%s(:run_id, :handler, :kind, :lo_%d, :hi_%d, :count_%d)",
                         k ? ", " : " ", k, k, k);
        SIM_ASSERT(w > 0 && (size_t)w < ROW_MAX);
        len += (size_t)w;
    }
    return sql;
}

static void hist_batch_params(struct store *st)
{
    static const char *const col[3] = { "lo", "hi", "count" };
    for (int k = 0; k < HIST_BATCH; k++) {
        for (int c = 0; c < 3; c++) {
            char name[32];
            snprintf(name, sizeof name, ":%s_%d", col[c], k);
            st->batch_param[k][c] = sqlite3_bind_parameter_index(st->stmt[S_HIST_BATCH], name);
            SIM_ASSERT(st->batch_param[k][c] > 0);
        }
    }
}

static void store_free(struct store *st)
{
    for (int i = 0; i < S_COUNT; i++) {
        /* finalize returns the statement's last error, already reported. */
        (void)sqlite3_finalize(st->stmt[i]);
    }
    if (st->db) {
        int rc = sqlite3_close(st->db);
        SIM_ASSERT(rc == SQLITE_OK); /* every statement is finalized above */
    }
    free(st->path);
    free(st);
}

int store_open(const char *path, struct store **out, char *err, size_t n)
{
    *out = NULL;
    struct store *st = xcalloc(1, sizeof *st);
    st->path = xstrdup(path);
    st->bind_rc = SQLITE_OK;

    /* NOMUTEX: a store is used by one thread at a time, so sqlite's
     * per-call locking would be pure cost. */
    int rc = sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             NULL);
    if (rc != SQLITE_OK) {
        set_err(err, n, "cannot open results database '%s': %s", path,
                st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc));
        st->fault = write_fault(rc);
        goto fail;
    }
    if (sqlite3_db_readonly(st->db, "main") == 1) {
        /* sqlite falls back to reading a file it may not write. */
        set_err(err, n, "results database '%s' is read-only", path);
        st->fault = 1;
        goto fail;
    }
    rc = sqlite3_extended_result_codes(st->db, 1);
    if (rc == SQLITE_OK)
        rc = sqlite3_busy_timeout(st->db, 5000); /* parallel writers wait for each other */
    if (rc != SQLITE_OK) {
        set_err(err, n, "cannot open results database '%s': %s", path, sqlite3_errmsg(st->db));
        goto fail;
    }
    /* The default rollback journal is kept on purpose: the database stays
     * one file that users can copy or attach without -wal/-shm companions. */
    if (exec_sql(st, "PRAGMA foreign_keys = ON", "enable foreign keys", err, n) != 0)
        goto fail;
    if (setup_schema(st, err, n) != 0)
        goto fail;
    for (int i = 0; i < S_COUNT; i++) {
        if (i == S_HIST_BATCH) {
            char *sql = hist_batch_sql();
            int r = prepare(st, sql, stmt_what[i], &st->stmt[i], err, n);
            free(sql);
            if (r != 0)
                goto fail;
            continue;
        }
        if (prepare(st, stmt_sql[i], stmt_what[i], &st->stmt[i], err, n) != 0)
            goto fail;
    }
    hist_batch_params(st);
    *out = st;
    return 0;

fail:;
    int ret = st->fault ? STORE_EWRITE : -1;
    store_free(st);
    return ret;
}

void store_close(struct store *st)
{
    if (!st)
        return;
    SIM_ASSERT(sqlite3_get_autocommit(st->db)); /* no transaction left open */
    store_free(st);
}

/* --- binding and stepping ------------------------------------------------------ */

/* Binding records the first failing return code in st->bind_rc; step()
 * reports it before it would execute the statement.  A name the SQL does
 * not have is a bug in this file. */
static int param(sqlite3_stmt *s, const char *name)
{
    int i = sqlite3_bind_parameter_index(s, name);
    SIM_ASSERT(i > 0);
    return i;
}

static void note(struct store *st, int rc)
{
    if (rc != SQLITE_OK && st->bind_rc == SQLITE_OK)
        st->bind_rc = rc;
}

static void bind_i64(struct store *st, sqlite3_stmt *s, const char *name, int64_t v)
{
    note(st, sqlite3_bind_int64(s, param(s, name), v));
}

static void bind_u64(struct store *st, sqlite3_stmt *s, const char *name, uint64_t v)
{
    /* Counts never come near 2^63; a value that did would be a bug. */
    SIM_ASSERT(v <= (uint64_t)INT64_MAX);
    bind_i64(st, s, name, (int64_t)v);
}

static void bind_null(struct store *st, sqlite3_stmt *s, const char *name)
{
    note(st, sqlite3_bind_null(s, param(s, name)));
}

/* NaN (an undefined value) is stored as NULL. */
static void bind_real(struct store *st, sqlite3_stmt *s, const char *name, double v)
{
    if (isnan(v))
        bind_null(st, s, name);
    else
        note(st, sqlite3_bind_double(s, param(s, name), v));
}

/* The text must stay valid until the statement is stepped (every caller
 * steps before its buffers go out of scope). */
static void bind_text(struct store *st, sqlite3_stmt *s, const char *name, const char *v)
{
    note(st, sqlite3_bind_text(s, param(s, name), v ? v : "", -1, SQLITE_STATIC));
}

/* Text in a fixed-size buffer: bound up to its NUL or its end. */
static void bind_buf(struct store *st, sqlite3_stmt *s, const char *name, const char *buf, size_t size)
{
    note(st, sqlite3_bind_text(s, param(s, name), buf, (int)strnlen(buf, size), SQLITE_STATIC));
}

/* Executes a prepared statement that returns no rows, then resets it and
 * clears its bindings.  0, or -1 with the message of what failed. */
static int step(struct store *st, enum stmt_id id, char *err, size_t n)
{
    sqlite3_stmt *s = st->stmt[id];
    int rc = st->bind_rc;
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(s);
        if (rc == SQLITE_DONE)
            rc = SQLITE_OK;
    }
    if (rc != SQLITE_OK) {
        char b[320];
        set_err(err, n, "results database '%s': cannot %s: %s", st->path, stmt_what[id],
                st->bind_rc != SQLITE_OK ? sqlite3_errstr(rc) : io_msg(st->db, rc, sqlite3_errmsg(st->db), b, sizeof b));
    }
    /* reset repeats the step's error code, already reported above. */
    int rrc = sqlite3_reset(s);
    int crc = sqlite3_clear_bindings(s);
    if (rc == SQLITE_OK && (rrc != SQLITE_OK || crc != SQLITE_OK)) {
        rc = rrc != SQLITE_OK ? rrc : crc;
        set_err(err, n, "results database '%s': cannot %s: %s", st->path, stmt_what[id], sqlite3_errstr(rc));
    }
    st->bind_rc = SQLITE_OK;
    return rc == SQLITE_OK ? 0 : -1;
}

/* --- one run ------------------------------------------------------------------- */


static const char *op_text(enum expect_op op)
{
    switch (op) {
    case OP_LT: return "<";
    case OP_LE: return "<=";
    case OP_GT: return ">";
    case OP_GE: return ">=";
    case OP_EQ: return "==";
    case OP_NE: return "!=";
    }
    SIM_ASSERT(0 && "unknown expect operator");
    return "?";
}

static void hex64(uint64_t v, char buf[17])
{
    snprintf(buf, 17, "%016" PRIx64, v);
}

/* The handler templates of a scenario in template index order (workflows
 * in order, their handlers in order), as "wf.handler".  names[i] points
 * into one block; free(names) releases everything. */
static char **template_names(const struct scenario *scn, uint32_t *count)
{
    uint32_t nt = 0;
    for (uint16_t f = 0; f < scn->nwfs; f++)
        nt += scn->wfs[f].nhandlers;
    char **names = xmalloc((size_t)nt * (sizeof *names + STORE_NAME_MAX) + 1);
    char *text = (char *)(names + nt);
    uint32_t t = 0;
    for (uint16_t f = 0; f < scn->nwfs; f++) {
        const struct workflow_def *wf = &scn->wfs[f];
        for (uint16_t h = 0; h < wf->nhandlers; h++, t++) {
            names[t] = text + (size_t)t * STORE_NAME_MAX;
            snprintf(names[t], STORE_NAME_MAX, "%s.%s", wf->name, wf->handlers[h].name);
        }
    }
    *count = nt;
    return names;
}

static int write_run_row(struct store *st, const struct store_run *r, int64_t *run_id, char *err, size_t n)
{
    const struct scenario *scn = r->scn;
    const struct sim_result *res = r->res;
    sqlite3_stmt *s = st->stmt[S_RUN];
    char hash[17], fp[17], start[32];
    hex64(scn->hash, hash);
    hex64(res->fingerprint, fp);
    cal_format_utc(scn->start_utc_s, start, sizeof start);

    bind_text(st, s, ":scenario", scn->name);
    bind_text(st, s, ":scenario_path", scn->path);
    bind_text(st, s, ":scenario_hash", hash);
    bind_text(st, s, ":policy", r->policy);
    bind_text(st, s, ":base_policy", r->base_policy);
    bind_text(st, s, ":params", r->params);
    bind_i64(st, s, ":seed", (int64_t)r->seed);
    bind_text(st, s, ":simrun_version", r->version);
    bind_text(st, s, ":fingerprint", fp);
    bind_text(st, s, ":status", sim_status_name(res->status));
    bind_buf(st, s, ":status_msg", res->status_msg, sizeof res->status_msg);
    bind_u64(st, s, ":events", res->events);
    bind_text(st, s, ":start_utc", start);
    bind_i64(st, s, ":horizon_us", scn->horizon_us);
    bind_i64(st, s, ":drain_us", scn->drain_us);
    bind_i64(st, s, ":end_us", res->end_us);
    if (step(st, S_RUN, err, n) != 0)
        return -1;
    *run_id = sqlite3_last_insert_rowid(st->db);
    return 0;
}

/* wall_us <= 0 means the caller did not measure it: no row. */
static int write_timing(struct store *st, const struct store_run *r, int64_t run_id, char *err, size_t n)
{
    if (r->wall_us <= 0)
        return 0;
    sqlite3_stmt *s = st->stmt[S_TIMING];
    bind_i64(st, s, ":run_id", run_id);
    bind_i64(st, s, ":wall_us", r->wall_us);
    bind_real(st, s, ":events_per_s", (double)r->res->events * 1e6 / (double)r->wall_us);
    return step(st, S_TIMING, err, n);
}

/* The metrics of one scope: the whole scenario (tmpl -1, handler "") or one
 * handler template (its per-handler metrics only).  A metric that
 * metric_get does not define for this scope gets no row. */
static int write_metrics(struct store *st, const struct checker_result *ck, int64_t run_id, int tmpl,
                         const char *handler, char *err, size_t n)
{
    sqlite3_stmt *s = st->stmt[S_METRIC];
    for (int i = 0; i < metric_count; i++) {
        const struct metric_info *mi = &metric_table[i];
        if (tmpl >= 0 && !mi->per_handler)
            continue;
        double v;
        if (metric_get(ck, tmpl, mi->name, &v) != 0)
            continue;
        bind_i64(st, s, ":run_id", run_id);
        bind_text(st, s, ":handler", handler);
        bind_text(st, s, ":name", mi->name);
        bind_real(st, s, ":value", v);
        if (step(st, S_METRIC, err, n) != 0)
            return -1;
    }
    return 0;
}

/* One bucket into the slot'th row of the batch statement, or (slot -1)
 * into the single-row statement. */
static void bind_bucket(struct store *st, const struct hist *h, int idx, int slot)
{
    int64_t lo, hi;
    hist_bounds(idx, &lo, &hi);
    SIM_ASSERT(h->bucket[idx] <= (uint64_t)INT64_MAX);
    if (slot < 0) {
        sqlite3_stmt *s = st->stmt[S_HIST];
        bind_i64(st, s, ":bucket_lo_us", lo);
        bind_i64(st, s, ":bucket_hi_us", hi);
        bind_u64(st, s, ":count", h->bucket[idx]);
        return;
    }
    sqlite3_stmt *s = st->stmt[S_HIST_BATCH];
    note(st, sqlite3_bind_int64(s, st->batch_param[slot][0], lo));
    note(st, sqlite3_bind_int64(s, st->batch_param[slot][1], hi));
    note(st, sqlite3_bind_int64(s, st->batch_param[slot][2], (int64_t)h->bucket[idx]));
}

static void bind_hist_key(struct store *st, enum stmt_id id, int64_t run_id, const char *handler, const char *kind)
{
    sqlite3_stmt *s = st->stmt[id];
    bind_i64(st, s, ":run_id", run_id);
    bind_text(st, s, ":handler", handler);
    bind_text(st, s, ":kind", kind);
}

/* The non-empty buckets of one histogram, in bucket order: full batches of
 * HIST_BATCH, then the rest one by one.  O(HIST_NBUCKETS) when it has
 * samples, O(1) when it has none. */
static int write_hist(struct store *st, const struct hist *h, int64_t run_id, const char *handler,
                      const char *kind, char *err, size_t n)
{
    if (h->count == 0 || !h->bucket)
        return 0;
    int pending[HIST_BATCH];
    int npending = 0;
    for (int i = 0; i < HIST_NBUCKETS; i++) {
        if (h->bucket[i] == 0)
            continue;
        pending[npending++] = i;
        if (npending < HIST_BATCH)
            continue;
        bind_hist_key(st, S_HIST_BATCH, run_id, handler, kind);
        for (int k = 0; k < HIST_BATCH; k++)
            bind_bucket(st, h, pending[k], k);
        if (step(st, S_HIST_BATCH, err, n) != 0)
            return -1;
        npending = 0;
    }
    for (int k = 0; k < npending; k++) {
        bind_hist_key(st, S_HIST, run_id, handler, kind);
        bind_bucket(st, h, pending[k], -1);
        if (step(st, S_HIST, err, n) != 0)
            return -1;
    }
    return 0;
}

static int write_scope(struct store *st, const struct checker_result *ck, const struct metrics *m, int tmpl,
                       int64_t run_id, const char *handler, char *err, size_t n)
{
    if (write_metrics(st, ck, run_id, tmpl, handler, err, n) != 0 ||
        write_hist(st, &m->latency, run_id, handler, "latency", err, n) != 0 ||
        write_hist(st, &m->lateness, run_id, handler, "lateness", err, n) != 0)
        return -1;
    return 0;
}

static int write_crashes(struct store *st, const struct checker_result *ck, int64_t run_id, char *err, size_t n)
{
    sqlite3_stmt *s = st->stmt[S_CRASH];
    for (uint32_t i = 0; i < ck->ncrashes; i++) {
        const struct crash_rec *c = &ck->crashes[i];
        bind_i64(st, s, ":run_id", run_id);
        bind_i64(st, s, ":idx", i);
        bind_text(st, s, ":target", crash_target_name((enum crash_target)c->target));
        bind_i64(st, s, ":target_index", c->index);
        bind_i64(st, s, ":at_us", c->at_us);
        if (c->restart_us == SIM_NEVER)
            bind_null(st, s, ":restart_us");
        else
            bind_i64(st, s, ":restart_us", c->restart_us);
        if (c->recovery_time_us < 0)
            bind_null(st, s, ":recovery_time_us");
        else
            bind_i64(st, s, ":recovery_time_us", c->recovery_time_us);
        bind_i64(st, s, ":stuck", c->stuck);
        bind_u64(st, s, ":lost", c->lost);
        bind_u64(st, s, ":double_effects", c->double_effects);
        bind_i64(st, s, ":recovery_ok", c->ok ? 1 : 0);
        if (step(st, S_CRASH, err, n) != 0)
            return -1;
    }
    return 0;
}

static int write_expects(struct store *st, const struct store_run *r, int64_t run_id, char *const *tnames,
                         char *err, size_t n)
{
    const struct scenario *scn = r->scn;
    sqlite3_stmt *s = st->stmt[S_EXPECT];
    for (uint32_t i = 0; i < r->nexpects; i++) {
        const struct expect_outcome *eo = &r->expects[i];
        const struct expect_def *ex = eo->ex;
        SIM_ASSERT(ex != NULL);
        const char *handler = "";
        if (ex->wf >= 0) {
            SIM_ASSERT(ex->wf < scn->nwfs);
            SIM_ASSERT(ex->handler >= 0 && ex->handler < scn->wfs[ex->wf].nhandlers);
            uint32_t t = 0;
            for (int f = 0; f < ex->wf; f++)
                t += scn->wfs[f].nhandlers;
            handler = tnames[t + (uint32_t)ex->handler];
        }
        bind_i64(st, s, ":run_id", run_id);
        bind_i64(st, s, ":line", ex->line);
        bind_text(st, s, ":text", ex->text);
        bind_text(st, s, ":metric", ex->metric);
        bind_text(st, s, ":handler", handler);
        bind_text(st, s, ":op", op_text(ex->op));
        bind_real(st, s, ":expected", ex->value);
        bind_real(st, s, ":measured", eo->measured);
        bind_i64(st, s, ":ok", eo->ok ? 1 : 0);
        if (step(st, S_EXPECT, err, n) != 0)
            return -1;
    }
    return 0;
}

/* Binds v to name when the record's kind has the field, else NULL. */
static void bind_field_i64(struct store *st, sqlite3_stmt *s, unsigned fields, unsigned f, const char *name, int64_t v)
{
    if (fields & f)
        bind_i64(st, s, name, v);
    else
        bind_null(st, s, name);
}

static void bind_field_text(struct store *st, sqlite3_stmt *s, unsigned fields, unsigned f, const char *name,
                            const char *v)
{
    if (fields & f)
        bind_text(st, s, name, v);
    else
        bind_null(st, s, name);
}

/* The typed fields of one record (docs/results.md, table trace).  Times
 * that mean "none" (no due instant, no wake request) are NULL.  A result
 * id or a timer argument is the policy's 64-bit value, stored as SQLite's
 * signed integer (the same bits). */
static void bind_trace_fields(struct store *st, sqlite3_stmt *s, const struct trace_rec *tr)
{
    unsigned fl = trace_kind_fields((enum fact_kind)tr->kind);
    if ((fl & TF_DUE) && tr->due_us < 0)
        fl &= ~(unsigned)TF_DUE;
    if ((fl & TF_WAKE) && tr->wake_us == SIM_NEVER)
        fl &= ~(unsigned)TF_WAKE;
    bind_field_i64(st, s, fl, TF_RUN, ":run", (int64_t)tr->run);
    bind_field_text(st, s, fl, TF_REASON, ":reason", run_reason_name(tr->reason));
    bind_field_i64(st, s, fl, TF_TAKEN, ":taken", tr->taken);
    bind_field_i64(st, s, fl, TF_DUE, ":due_us", tr->due_us);
    bind_field_i64(st, s, fl, TF_WAKE, ":wake_us", tr->wake_us);
    bind_field_i64(st, s, fl, TF_RESUME, ":resume", tr->resume);
    bind_field_text(st, s, fl, TF_PHASE, ":phase", run_phase_name(tr->phase));
    bind_field_text(st, s, fl, TF_OUTCOME, ":outcome", run_outcome_name(tr->outcome));
    bind_field_text(st, s, fl, TF_FAIL, ":fail", fail_class_name(tr->fail));
    bind_field_i64(st, s, fl, TF_ITEM, ":item", (int64_t)tr->item);
    bind_field_i64(st, s, fl, TF_KEY, ":key", tr->key);
    bind_field_text(st, s, fl, TF_CAUSE, ":cause", drop_cause_name(tr->cause));
    bind_field_i64(st, s, fl, TF_TOPIC, ":topic", tr->topic);
    bind_field_i64(st, s, fl, TF_RESULT, ":result", (int64_t)tr->result);
    bind_field_i64(st, s, fl, TF_OK, ":ok", tr->ok);
    bind_field_text(st, s, fl, TF_TARGET, ":target", crash_target_name(tr->target));
    bind_field_i64(st, s, fl, TF_TARGET_INDEX, ":target_index", tr->target_index);
    bind_field_i64(st, s, fl, TF_WORKFLOW, ":workflow", tr->workflow);
    bind_field_i64(st, s, fl, TF_TAG, ":tag", tr->tag);
    bind_field_i64(st, s, fl, TF_ARG, ":arg", (int64_t)tr->arg);
    bind_field_i64(st, s, fl, TF_TICKER, ":ticker", tr->ticker);
    bind_field_i64(st, s, fl, TF_COUNT, ":count", (int64_t)tr->count);
    if (fl & TF_NOTE)
        bind_buf(st, s, ":note", tr->note, sizeof tr->note);
    else
        bind_null(st, s, ":note");
}

/* One record as row seq of run_id. */
static int write_trace_rec(struct store *st, sqlite3_stmt *s, int64_t run_id, uint64_t seq,
                           const struct trace_rec *tr, char *err, size_t n)
{
    bind_i64(st, s, ":run_id", run_id);
    bind_u64(st, s, ":seq", seq);
    bind_i64(st, s, ":t_us", tr->t_us);
    bind_text(st, s, ":kind", fact_kind_name((enum fact_kind)tr->kind));
    if (tr->handler < 0)
        bind_null(st, s, ":handler");
    else
        bind_i64(st, s, ":handler", tr->handler);
    bind_trace_fields(st, s, tr);
    return step(st, S_TRACE, err, n);
}

/* The records of f, read a batch at a time (a trace may be larger than
 * memory), as rows seq 0, 1, ... of run_id. */
static int write_trace(struct store *st, FILE *f, int64_t run_id, char *err, size_t n)
{
    sqlite3_stmt *s = st->stmt[S_TRACE];
    enum { BATCH = 512 };
    struct trace_rec *batch = xmalloc(BATCH * sizeof *batch);
    uint64_t seq = 0;
    int ret = 0;
    size_t got;
    while (!ret && (got = fread(batch, sizeof *batch, BATCH, f)) > 0)
        for (size_t i = 0; i < got && !ret; i++)
            ret = write_trace_rec(st, s, run_id, seq++, &batch[i], err, n);
    if (!ret && ferror(f)) {
        snprintf(err, n, "cannot read the spooled trace back: %s", strerror(errno ? errno : EIO));
        ret = -1;
    }
    free(batch);
    return ret;
}

/* Everything between BEGIN and COMMIT. */
static int write_crash_point(struct store *st, const struct store_crash_point *cp, int64_t id, char *err, size_t n)
{
    sqlite3_stmt *s = st->stmt[S_CRASH_POINT];
    bind_i64(st, s, ":run_id", id);
    if (cp->baseline_run_id > 0)
        bind_i64(st, s, ":baseline_run_id", cp->baseline_run_id);
    else
        bind_null(st, s, ":baseline_run_id");
    bind_i64(st, s, ":point", cp->point);
    bind_i64(st, s, ":at_us", cp->at_us);
    bind_text(st, s, ":side", cp->side);
    bind_text(st, s, ":transition", cp->transition);
    bind_text(st, s, ":handler", cp->handler);
    bind_text(st, s, ":line", cp->line);
    bind_i64(st, s, ":fail", cp->fail != 0);
    return step(st, S_CRASH_POINT, err, n);
}

static int write_rows(struct store *st, const struct store_run *r, int64_t *run_id, char *err, size_t n)
{
    const struct checker_result *ck = &r->res->ck;
    uint32_t ntmpl;
    char **tnames = template_names(r->scn, &ntmpl);
    SIM_ASSERT(ntmpl == ck->ntmpl);
    int ret = -1;
    int64_t id;

    if (write_run_row(st, r, &id, err, n) != 0 || write_timing(st, r, id, err, n) != 0)
        goto out;
    if (write_scope(st, ck, &ck->total, -1, id, "", err, n) != 0)
        goto out;
    for (uint32_t t = 0; t < ntmpl; t++)
        if (write_scope(st, ck, &ck->per_tmpl[t], (int)t, id, tnames[t], err, n) != 0)
            goto out;
    if (write_crashes(st, ck, id, err, n) != 0 || write_expects(st, r, id, tnames, err, n) != 0)
        goto out;
    if (r->trace && write_trace(st, r->trace, id, err, n) != 0)
        goto out;
    if (r->crash_point && write_crash_point(st, r->crash_point, id, err, n) != 0)
        goto out;
    if (r->plan) {
        sqlite3_stmt *s = st->stmt[S_PLAN];
        bind_i64(st, s, ":run_id", id);
        bind_text(st, s, ":plan", r->plan);
        bind_i64(st, s, ":job", r->job);
        bind_text(st, s, ":sweep", r->sweep ? r->sweep : "");
        if (step(st, S_PLAN, err, n) != 0)
            goto out;
    }
    *run_id = id;
    ret = 0;
out:
    free(tnames);
    return ret;
}

int store_write_run(struct store *st, const struct store_run *r, int64_t *run_id, char *err, size_t n)
{
    SIM_ASSERT(st && r && r->scn && r->res && run_id);
    SIM_ASSERT(r->nexpects == 0 || r->expects);
    if (r->seed > (uint64_t)INT64_MAX) {
        set_err(err, n, "seed %" PRIu64 " is too large for the results database (at most %" PRId64 ")", r->seed,
                INT64_MAX);
        return -1;
    }
    if (step(st, S_BEGIN, err, n) != 0)
        return -1;
    int64_t id = 0;
    if (write_rows(st, r, &id, err, n) != 0 || step(st, S_COMMIT, err, n) != 0) {
        /* sqlite may already have rolled back by itself (a full disk, an I/O
         * error); only an open transaction needs the ROLLBACK.  The first
         * error is the one reported, so a failing rollback only adds to it. */
        if (!sqlite3_get_autocommit(st->db)) {
            char rerr[256];
            if (step(st, S_ROLLBACK, rerr, sizeof rerr) != 0) {
                size_t used = err ? strnlen(err, n) : 0;
                if (err && used + 1 < n)
                    snprintf(err + used, n - used, " (and %s)", rerr);
            }
        }
        return -1;
    }
    *run_id = id;
    return 0;
}

/* --- what is stored --------------------------------------------------------------- */

void store_run_key(uint64_t scenario_hash, const char *policy, const char *params, uint64_t seed, char *buf, size_t n)
{
    snprintf(buf, n, "%016" PRIx64 "\x1f%s\x1f%s\x1f%" PRIu64, scenario_hash, policy, params, seed);
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int store_run_keys(struct store *st, char ***keys, size_t *nkeys, char *versions, size_t vn, char *err, size_t n)
{
    static const char what[] = "read its runs";
    sqlite3_stmt *q;
    *keys = NULL;
    *nkeys = 0;
    versions[0] = 0;
    if (prepare(st, "SELECT scenario_hash, policy, params, seed, simrun_version FROM runs ORDER BY run_id", what, &q,
                err, n) != 0)
        return -1;
    size_t cap = 0, vo = 0;
    int rc;
    while ((rc = step_query(st, q, what, err, n)) == SQLITE_ROW) {
        const char *h = (const char *)sqlite3_column_text(q, 0), *pol = (const char *)sqlite3_column_text(q, 1),
                   *par = (const char *)sqlite3_column_text(q, 2), *ver = (const char *)sqlite3_column_text(q, 4);
        char key[1024];
        snprintf(key, sizeof key, "%s\x1f%s\x1f%s\x1f%" PRId64, h ? h : "", pol ? pol : "", par ? par : "",
                 (int64_t)sqlite3_column_int64(q, 3));
        *keys = xgrow(*keys, sizeof **keys, &cap, *nkeys + 1);
        (*keys)[(*nkeys)++] = xstrdup(key);
        /* The distinct versions, in order of appearance. */
        char tag[80];
        snprintf(tag, sizeof tag, ",%s,", ver ? ver : "");
        char have[1024];
        snprintf(have, sizeof have, ",%s,", versions);
        if (!strstr(have, tag) && vo < vn)
            vo += (size_t)snprintf(versions + vo, vn - vo, "%s%s", vo ? "," : "", ver ? ver : "");
    }
    if (rc < 0) {
        for (size_t i = 0; i < *nkeys; i++)
            free((*keys)[i]);
        free(*keys);
        *keys = NULL;
        *nkeys = 0;
        return -1;
    }
    if (finalize_query(st, q, what, err, n) != 0)
        return -1;
    if (*nkeys)
        qsort(*keys, *nkeys, sizeof **keys, cmp_key);
    return 0;
}

sqlite3 *store__db(struct store *st)
{
    return st->db;
}
