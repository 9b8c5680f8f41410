/* store_merge.c: `simrun merge OUT.db IN.db...` (see store_merge in
 * store.h).
 *
 * In three steps, so that OUT changes in one transaction or not at all:
 *   1. stage: each input is attached in turn, checked (a simrun results
 *      database of schema 2 or 3) and copied whole into temporary tables
 *      (temp.m_runs, temp.m_metrics, ...: the input's rows with a first
 *      column `src`, its position), then detached (SQLite attaches no file
 *      inside a transaction, and at most a few at once);
 *   2. check, in OUT's transaction: one simrun version over OUT and the
 *      inputs, the same scenario hashes for a scenario name in every file,
 *      one fingerprint per (scenario hash, policy, params, seed);
 *   3. copy the runs in sweep order (below), skipping exact duplicates,
 *      remembering old -> new run ids in temp.m_map, then every child table
 *      joined through the map, ordered by the new id and then the input's
 *      own row order.
 * Sweep order: the runs of one plan (run_plan.plan) by their job index,
 * plans in the order they first appear (inputs in argument order, then by
 * run id); runs without a plan after, in input order.  The shards of one
 * sweep therefore merge into the run ids that the whole sweep gets on one
 * machine.  Column lists come from OUT's schema (PRAGMA table_info), so a
 * column added to a table travels without a change here. */
#include "sim/store.h"
#include "sim/store_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/util.h"

/* The tables that hang off runs, copied through the run id map. */
static const char *const child_tables[] = {"run_timings", "metrics",      "histograms", "crashes",
                                           "expectations", "trace",       "run_plan"};
#define NCHILD (sizeof child_tables / sizeof child_tables[0])

struct merge {
    sqlite3 *db;
    const char *out;
    const char *const *in;
    int nin;
    char *err;
    size_t n;
};

static int fail(struct merge *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct merge *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->err, m->n, fmt, ap);
    va_end(ap);
    return -1;
}

static int exec(struct merge *m, const char *sql, const char *what)
{
    char *msg = NULL;
    if (sqlite3_exec(m->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fail(m, "merge into '%s': cannot %s: %s", m->out, what, msg ? msg : sqlite3_errmsg(m->db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static int prep(struct merge *m, const char *sql, sqlite3_stmt **q)
{
    if (sqlite3_prepare_v2(m->db, sql, -1, q, NULL) != SQLITE_OK)
        return fail(m, "merge into '%s': %s", m->out, sqlite3_errmsg(m->db));
    return 0;
}

/* The name of file src: -1 is OUT, else an input. */
static const char *file_of(const struct merge *m, int64_t src)
{
    return src < 0 ? m->out : m->in[src];
}

/* "a, b, c": the columns of main.table but run_id, prefixed (e.g. "t."). */
static int columns(struct merge *m, const char *table, const char *prefix, char *buf, size_t n)
{
    char sql[128];
    snprintf(sql, sizeof sql, "PRAGMA main.table_info(%s)", table);
    sqlite3_stmt *q;
    if (prep(m, sql, &q))
        return -1;
    size_t o = 0;
    buf[0] = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *c = (const char *)sqlite3_column_text(q, 1);
        if (c && strcmp(c, "run_id") && o < n)
            o += (size_t)snprintf(buf + o, n - o, "%s%s%s", o ? ", " : "", prefix, c);
    }
    sqlite3_finalize(q);
    if (o >= n)
        return fail(m, "merge: table %s has too many columns", table);
    return 0;
}

/* --- 1. staging ------------------------------------------------------------------------- */

/* The schema version of the attached input (0 if it has none). */
static int src_version(struct merge *m)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(m->db, "SELECT value FROM src.meta WHERE key = 'schema_version'", -1, &q, NULL) !=
        SQLITE_OK)
        return 0;
    int v = sqlite3_step(q) == SQLITE_ROW ? atoi((const char *)sqlite3_column_text(q, 0)) : 0;
    sqlite3_finalize(q);
    return v;
}

static int create_stage(struct merge *m)
{
    if (exec(m, "CREATE TEMP TABLE m_runs AS SELECT 0 AS src, * FROM main.runs WHERE 0", "stage the runs") ||
        exec(m, "CREATE TEMP TABLE m_map (src INTEGER, old INTEGER, new INTEGER, PRIMARY KEY(src, old))",
             "stage the runs"))
        return -1;
    for (size_t t = 0; t < NCHILD; t++) {
        char sql[160];
        snprintf(sql, sizeof sql, "CREATE TEMP TABLE m_%s AS SELECT 0 AS src, * FROM main.%s WHERE 0",
                 child_tables[t], child_tables[t]);
        if (exec(m, sql, "stage a table"))
            return -1;
    }
    return 0;
}

/* Copies input i (attached as src) into the staging tables. */
static int stage_one(struct merge *m, int i)
{
    int ver = src_version(m);
    if (ver < 2 || ver > STORE_SCHEMA_VERSION) /* 3 and 4 differ only by crash_points, not merged */
        return fail(m, "cannot merge '%s': %s", m->in[i],
                    ver ? "it has another schema version (merge files of one simrun version)"
                        : "it is not a simrun results database");
    char sql[256];
    snprintf(sql, sizeof sql, "INSERT INTO temp.m_runs SELECT %d, * FROM src.runs", i);
    if (exec(m, sql, "read an input's runs"))
        return -1;
    for (size_t t = 0; t < NCHILD; t++) {
        if (ver == 2 && !strcmp(child_tables[t], "run_plan"))
            continue; /* version 2 has no plans */
        snprintf(sql, sizeof sql, "INSERT INTO temp.m_%s SELECT %d, * FROM src.%s", child_tables[t], i,
                 child_tables[t]);
        if (exec(m, sql, "read an input's rows"))
            return -1;
    }
    return 0;
}

static int stage(struct merge *m)
{
    if (create_stage(m))
        return -1;
    for (int i = 0; i < m->nin; i++) {
        if (access(m->in[i], R_OK) != 0)
            return fail(m, "cannot merge '%s': no such file, or it cannot be read", m->in[i]);
        sqlite3_stmt *q;
        if (prep(m, "ATTACH DATABASE ?1 AS src", &q))
            return -1;
        sqlite3_bind_text(q, 1, m->in[i], -1, SQLITE_STATIC);
        int rc = sqlite3_step(q);
        sqlite3_finalize(q);
        if (rc != SQLITE_DONE)
            return fail(m, "cannot merge '%s': %s", m->in[i], sqlite3_errmsg(m->db));
        rc = stage_one(m, i);
        if (exec(m, "DETACH DATABASE src", "detach an input") || rc)
            return -1;
    }
    return 0;
}

/* --- 2. checks ---------------------------------------------------------------------------- */

/* Every run of OUT (src -1) and of the inputs. */
#define ALL_RUNS "(SELECT -1 AS src, * FROM main.runs UNION ALL SELECT * FROM temp.m_runs)"

static int check_versions(struct merge *m)
{
    sqlite3_stmt *q;
    if (prep(m, "SELECT simrun_version, min(src) FROM " ALL_RUNS " GROUP BY simrun_version ORDER BY 2", &q))
        return -1;
    char first[64] = "";
    int64_t first_src = 0;
    int ret = 0;
    while (sqlite3_step(q) == SQLITE_ROW && !ret) {
        const char *v = (const char *)sqlite3_column_text(q, 0);
        int64_t src = sqlite3_column_int64(q, 1);
        if (!first[0]) {
            snprintf(first, sizeof first, "%s", v ? v : "");
            first_src = src;
        } else {
            ret = fail(m, "cannot merge runs of simrun %s ('%s') with runs of simrun %s ('%s'): merge results of one "
                          "simrun version",
                       first, file_of(m, first_src), v ? v : "", file_of(m, src));
        }
    }
    sqlite3_finalize(q);
    return ret;
}

/* For each scenario name, every file that has it must have the same set
 * of hashes for it. */
static int check_hashes(struct merge *m)
{
    sqlite3_stmt *q;
    if (prep(m, "SELECT DISTINCT scenario, src, scenario_hash FROM " ALL_RUNS " ORDER BY scenario, src, scenario_hash",
             &q))
        return -1;
    char name[256] = "", ref[1024] = "", cur[1024] = "";
    int64_t ref_src = 0, cur_src = 0;
    int have_ref = 0, ret = 0;
    for (int rc = sqlite3_step(q);; rc = sqlite3_step(q)) {
        const char *sc = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(q, 0) : NULL;
        int64_t src = rc == SQLITE_ROW ? sqlite3_column_int64(q, 1) : 0;
        /* A (scenario, file) group ends: compare it with the scenario's first. */
        if (cur[0] && (!sc || strcmp(sc, name) || src != cur_src)) {
            if (!have_ref) {
                snprintf(ref, sizeof ref, "%s", cur);
                ref_src = cur_src;
                have_ref = 1;
            } else if (strcmp(ref, cur)) {
                ret = fail(m, "cannot merge: scenario '%s' has hash %s in '%s' but %s in '%s' (the scenario files "
                              "differ; merge results of one version of each scenario)",
                           name, ref, file_of(m, ref_src), cur, file_of(m, cur_src));
                break;
            }
            cur[0] = 0;
        }
        if (!sc)
            break;
        if (strcmp(sc, name)) {
            snprintf(name, sizeof name, "%s", sc);
            have_ref = 0;
        }
        cur_src = src;
        size_t o = strlen(cur);
        snprintf(cur + o, sizeof cur - o, "%s%s", o ? "," : "", (const char *)sqlite3_column_text(q, 2));
    }
    sqlite3_finalize(q);
    return ret;
}

static int check_fingerprints(struct merge *m)
{
    sqlite3_stmt *q;
    if (prep(m,
             "SELECT scenario, policy, params, seed, min(fingerprint), max(fingerprint) FROM " ALL_RUNS
             " GROUP BY scenario_hash, policy, params, seed HAVING count(DISTINCT fingerprint) > 1 LIMIT 1",
             &q))
        return -1;
    int ret = 0;
    if (sqlite3_step(q) == SQLITE_ROW)
        ret = fail(m,
                   "cannot merge: %s under %s%s%s seed %" PRId64 " has fingerprint %s in one file and %s in another "
                   "(the same run gave different results: another build or platform?)",
                   (const char *)sqlite3_column_text(q, 0), (const char *)sqlite3_column_text(q, 1),
                   sqlite3_column_bytes(q, 2) ? " " : "", (const char *)sqlite3_column_text(q, 2),
                   (int64_t)sqlite3_column_int64(q, 3), (const char *)sqlite3_column_text(q, 4),
                   (const char *)sqlite3_column_text(q, 5));
    sqlite3_finalize(q);
    return ret;
}

/* --- 3. copy --------------------------------------------------------------------------------- */

/* The staged runs in sweep order, duplicates of a run already in OUT or
 * earlier in that order excluded (ROW_NUMBER keeps the first). */
static const char order_sql[] =
    "WITH r AS (SELECT m.src, m.run_id, m.scenario_hash, m.policy, m.params, m.seed, m.fingerprint,"
    "                  p.plan, p.job FROM temp.m_runs m"
    "           LEFT JOIN temp.m_run_plan p ON p.src = m.src AND p.run_id = m.run_id),"
    "     firsts AS (SELECT coalesce(plan, '#' || src) AS grp, min(src * 4294967296 + run_id) AS at"
    "                FROM r GROUP BY grp),"
    "     o AS (SELECT r.*, (SELECT count(*) FROM firsts f2 WHERE f2.at < f.at) + (r.plan IS NULL) * 1000000000"
    "                  AS rank FROM r JOIN firsts f ON f.grp = coalesce(r.plan, '#' || r.src)),"
    "     d AS (SELECT o.*, row_number() OVER (PARTITION BY scenario_hash, policy, params, seed, fingerprint"
    "                  ORDER BY rank, coalesce(job, run_id), src, run_id) AS nth FROM o)"
    " SELECT src, run_id, nth = 1 AND NOT EXISTS (SELECT 1 FROM main.runs x WHERE x.scenario_hash = d.scenario_hash"
    "        AND x.policy = d.policy AND x.params = d.params AND x.seed = d.seed AND x.fingerprint = d.fingerprint)"
    " FROM d ORDER BY rank, coalesce(job, run_id), src, run_id";

static int copy_runs(struct merge *m, size_t *added, size_t *skipped)
{
    char cols[2048], ins[4600];
    if (columns(m, "runs", "", cols, sizeof cols))
        return -1;
    snprintf(ins, sizeof ins, "INSERT INTO main.runs(%s) SELECT %s FROM temp.m_runs WHERE src = ?1 AND run_id = ?2",
             cols, cols);
    sqlite3_stmt *q, *put, *map;
    if (prep(m, order_sql, &q))
        return -1;
    if (prep(m, ins, &put)) {
        sqlite3_finalize(q);
        return -1;
    }
    if (prep(m, "INSERT INTO temp.m_map(src, old, new) VALUES(?1, ?2, ?3)", &map)) {
        sqlite3_finalize(q);
        sqlite3_finalize(put);
        return -1;
    }
    int ret = 0, rc;
    while (!ret && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (!sqlite3_column_int(q, 2)) {
            (*skipped)++;
            continue;
        }
        for (int k = 0; k < 2; k++)
            sqlite3_bind_int64(put, k + 1, sqlite3_column_int64(q, k));
        if (sqlite3_step(put) != SQLITE_DONE)
            ret = fail(m, "merge into '%s': cannot insert a run: %s", m->out, sqlite3_errmsg(m->db));
        sqlite3_reset(put);
        sqlite3_bind_int64(map, 1, sqlite3_column_int64(q, 0));
        sqlite3_bind_int64(map, 2, sqlite3_column_int64(q, 1));
        sqlite3_bind_int64(map, 3, sqlite3_last_insert_rowid(m->db));
        if (!ret && sqlite3_step(map) != SQLITE_DONE)
            ret = fail(m, "merge into '%s': %s", m->out, sqlite3_errmsg(m->db));
        sqlite3_reset(map);
        (*added)++;
    }
    if (!ret && rc != SQLITE_DONE)
        ret = fail(m, "merge into '%s': %s", m->out, sqlite3_errmsg(m->db));
    sqlite3_finalize(q);
    sqlite3_finalize(put);
    sqlite3_finalize(map);
    return ret;
}

static int copy_children(struct merge *m)
{
    for (size_t t = 0; t < NCHILD; t++) {
        char cols[2048], tcols[2400], sql[5200];
        if (columns(m, child_tables[t], "", cols, sizeof cols) || columns(m, child_tables[t], "t.", tcols, sizeof tcols))
            return -1;
        snprintf(sql, sizeof sql,
                 "INSERT INTO main.%s(run_id, %s) SELECT x.new, %s FROM temp.m_%s t"
                 " JOIN temp.m_map x ON x.src = t.src AND x.old = t.run_id ORDER BY x.new, t.rowid",
                 child_tables[t], cols, tcols, child_tables[t]);
        if (exec(m, sql, "copy rows"))
            return -1;
    }
    return 0;
}

int store_merge(const char *out, const char *const *in, int nin, size_t *added, size_t *skipped, char *err, size_t n)
{
    *added = *skipped = 0;
    for (int i = 0; i < nin; i++)
        if (!strcmp(in[i], out)) {
            snprintf(err, n, "cannot merge '%s' into itself", out);
            return -1;
        }
    struct store *st;
    if (store_open(out, &st, err, n) != 0)
        return -1;
    struct merge m = {.db = store__db(st), .out = out, .in = in, .nin = nin, .err = err, .n = n};
    int ret = stage(&m);
    if (!ret && !(ret = exec(&m, "BEGIN IMMEDIATE", "begin a transaction"))) {
        ret = check_versions(&m) || check_hashes(&m) || check_fingerprints(&m) || copy_runs(&m, added, skipped) ||
              copy_children(&m);
        if (ret || exec(&m, "COMMIT", "commit")) {
            (void)sqlite3_exec(m.db, "ROLLBACK", NULL, NULL, NULL); /* the first error is reported */
            ret = -1;
            *added = *skipped = 0;
        }
    }
    store_close(st); /* the staging tables are temporary: they go with the connection */
    return ret ? -1 : 0;
}
