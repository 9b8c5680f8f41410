/* rdb.c: loading a results database into groups (see rdb.h).
 *
 * Two queries: every run (ordered by run_id), then every whole-scenario
 * metric row.  Runs are grouped by sorting an index on (group key, seed,
 * run_id): O(r log r) for r runs, whatever the number of groups. */
#include "reports/rdb.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/checker.h"
#include "sim/store.h"
#include "sim/util.h"

/* One row of runs, before grouping. */
struct row {
    int64_t run_id;
    uint64_t seed;
    char *scenario, *scenario_path, *hash, *policy, *base_policy, *params, *version;
    char fingerprint[17], status[16];
    int64_t horizon_us, drain_us;
    double *m;
    size_t group;
};

static char *col_text(sqlite3_stmt *q, int c)
{
    const unsigned char *t = sqlite3_column_text(q, c);
    return xstrdup(t ? (const char *)t : "");
}

static int key_cmp(const struct row *a, const struct row *b)
{
    int c;
    if ((c = strcmp(a->hash, b->hash)) || (c = strcmp(a->policy, b->policy)) || (c = strcmp(a->params, b->params)))
        return c;
    return 0;
}

static int row_cmp(const void *pa, const void *pb)
{
    const struct row *a = *(struct row *const *)pa, *b = *(struct row *const *)pb;
    int c = key_cmp(a, b);
    if (c)
        return c;
    if (a->seed != b->seed)
        return a->seed < b->seed ? -1 : 1;
    return a->run_id < b->run_id ? -1 : a->run_id > b->run_id;
}

static int group_cmp(const void *pa, const void *pb)
{
    const struct rdb_group *a = pa, *b = pb;
    int64_t x = a->runs[0].run_id, y = b->runs[0].run_id;
    for (size_t i = 1; i < a->nruns; i++)
        if (a->runs[i].run_id < x)
            x = a->runs[i].run_id;
    for (size_t i = 1; i < b->nruns; i++)
        if (b->runs[i].run_id < y)
            y = b->runs[i].run_id;
    return x < y ? -1 : x > y;
}

static int fail_sql(struct rdb *r, const char *what, char *err, size_t n)
{
    snprintf(err, n, "results database '%s': cannot %s: %s", r->path, what, sqlite3_errmsg(r->db));
    return -1;
}

/* The oldest schema version this reader accepts.  Versions 1 and 2 differ
 * only in the trace table, which rdb does not read (reports/trace.h reads
 * version 2 traces only), so results written before the change can still
 * be reported and compared with newer ones; version 3 adds run_plan, 4 crash_points. */
#define RDB_OLDEST_VERSION 1

static int check_schema(struct rdb *r, char *err, size_t n)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(r->db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &q, NULL) != SQLITE_OK) {
        if (sqlite3_errcode(r->db) == SQLITE_NOTADB)
            return fail_sql(r, "read it", err, n);
        snprintf(err, n, "'%s' is not a simrun results database (%s)", r->path, sqlite3_errmsg(r->db));
        return -1;
    }
    int rc = sqlite3_step(q);
    int ret = 0;
    if (rc != SQLITE_ROW) {
        snprintf(err, n, "'%s' is not a simrun results database (no schema version)", r->path);
        ret = -1;
    } else {
        const char *v = (const char *)sqlite3_column_text(q, 0);
        char *end = NULL;
        long ver = v ? strtol(v, &end, 10) : 0;
        if (!v || end == v || *end || ver < RDB_OLDEST_VERSION || ver > STORE_SCHEMA_VERSION) {
            snprintf(err, n, "results database '%s' has schema version %s; this simrun reads versions %d to %d",
                     r->path, v ? v : "NULL", RDB_OLDEST_VERSION, STORE_SCHEMA_VERSION);
            ret = -1;
        } else {
            r->version = (int)ver;
        }
    }
    sqlite3_finalize(q);
    return ret;
}

/* The row with this run_id (rows are in run_id order), or NULL. */
static struct row *find_row(struct row *rows, size_t n, int64_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rows[mid].run_id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && rows[lo].run_id == id ? &rows[lo] : NULL;
}

static int load_rows(struct rdb *r, struct row **out, size_t *nout, char *err, size_t n)
{
    sqlite3_stmt *q;
    /* The runs of `simrun crashpoints` (version 4, table crash_points) are
     * no runs of their scenario: reports/crashpoints.c shows them. */
    const char *sql = r->version >= 4
                          ? "SELECT run_id, scenario, scenario_path, scenario_hash, policy, base_policy, params, seed,"
                            " fingerprint, status, simrun_version, horizon_us, drain_us FROM runs"
                            " WHERE run_id NOT IN (SELECT run_id FROM crash_points) ORDER BY run_id"
                          : "SELECT run_id, scenario, scenario_path, scenario_hash, policy, base_policy, params, seed,"
                            " fingerprint, status, simrun_version, horizon_us, drain_us FROM runs ORDER BY run_id";
    if (sqlite3_prepare_v2(r->db, sql, -1, &q, NULL) != SQLITE_OK)
        return fail_sql(r, "read its runs", err, n);
    struct row *rows = NULL;
    size_t nrows = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        rows = xgrow(rows, sizeof *rows, &cap, nrows + 1);
        struct row *w = &rows[nrows++];
        *w = (struct row){0};
        w->run_id = sqlite3_column_int64(q, 0);
        w->scenario = col_text(q, 1);
        w->scenario_path = col_text(q, 2);
        w->hash = col_text(q, 3);
        w->policy = col_text(q, 4);
        w->base_policy = col_text(q, 5);
        w->params = col_text(q, 6);
        w->seed = (uint64_t)sqlite3_column_int64(q, 7);
        snprintf(w->fingerprint, sizeof w->fingerprint, "%s", (const char *)sqlite3_column_text(q, 8));
        snprintf(w->status, sizeof w->status, "%s", (const char *)sqlite3_column_text(q, 9));
        w->version = col_text(q, 10);
        w->horizon_us = sqlite3_column_int64(q, 11);
        w->drain_us = sqlite3_column_int64(q, 12);
        w->m = xmalloc((size_t)metric_count * sizeof *w->m);
        for (int k = 0; k < metric_count; k++)
            w->m[k] = NAN;
    }
    sqlite3_finalize(q);
    *out = rows;
    *nout = nrows;
    if (rc != SQLITE_DONE)
        return fail_sql(r, "read its runs", err, n);
    if (sqlite3_prepare_v2(r->db, "SELECT run_id, name, value FROM metrics WHERE handler = '' ORDER BY run_id", -1, &q,
                           NULL) != SQLITE_OK)
        return fail_sql(r, "read its metrics", err, n);
    struct row *last = NULL;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(q, 0);
        if (!last || last->run_id != id)
            last = find_row(rows, nrows, id);
        if (!last)
            continue;
        const struct metric_info *mi = metric_find((const char *)sqlite3_column_text(q, 1));
        if (mi && sqlite3_column_type(q, 2) != SQLITE_NULL)
            last->m[mi - metric_table] = sqlite3_column_double(q, 2);
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE)
        return fail_sql(r, "read its metrics", err, n);
    return 0;
}

static void free_row_strings(struct row *w)
{
    free(w->scenario);
    free(w->scenario_path);
    free(w->hash);
    free(w->policy);
    free(w->base_policy);
    free(w->params);
    free(w->version);
    free(w->m);
}

int rdb_open(const char *path, struct rdb **out, char *err, size_t n)
{
    struct rdb *r = xcalloc(1, sizeof *r);
    r->path = xstrdup(path);
    if (sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        snprintf(err, n, "cannot open results database '%s': %s", path,
                 r->db ? sqlite3_errmsg(r->db) : "out of memory");
        rdb_close(r);
        return -1;
    }
    sqlite3_busy_timeout(r->db, 5000);
    struct row *rows = NULL;
    size_t nrows = 0;
    if (check_schema(r, err, n) != 0 || load_rows(r, &rows, &nrows, err, n) != 0) {
        for (size_t i = 0; i < nrows; i++)
            free_row_strings(&rows[i]);
        free(rows);
        rdb_close(r);
        return -1;
    }
    r->nruns = nrows;
    struct row **idx = xmalloc((nrows ? nrows : 1) * sizeof *idx);
    for (size_t i = 0; i < nrows; i++)
        idx[i] = &rows[i];
    qsort(idx, nrows, sizeof *idx, row_cmp);
    size_t cap = 0;
    for (size_t i = 0; i < nrows;) {
        size_t e = i;
        while (e < nrows && key_cmp(idx[i], idx[e]) == 0)
            e++;
        r->groups = xgrow(r->groups, sizeof *r->groups, &cap, r->ngroups + 1);
        struct rdb_group *g = &r->groups[r->ngroups++];
        *g = (struct rdb_group){0};
        /* The newest run of the group names it (the path may have moved). */
        const struct row *newest = idx[i];
        for (size_t k = i; k < e; k++)
            if (idx[k]->run_id > newest->run_id)
                newest = idx[k];
        g->scenario = xstrdup(newest->scenario);
        g->scenario_path = xstrdup(newest->scenario_path);
        g->scenario_hash = xstrdup(newest->hash);
        g->policy = xstrdup(newest->policy);
        g->base_policy = xstrdup(newest->base_policy);
        g->params = xstrdup(newest->params);
        g->version = xstrdup(newest->version);
        g->horizon_us = newest->horizon_us;
        g->drain_us = newest->drain_us;
        g->runs = xcalloc(e - i, sizeof *g->runs);
        for (size_t k = i; k < e; k++) {
            /* Same seed: the sort put the newest last. */
            if (k + 1 < e && idx[k + 1]->seed == idx[k]->seed) {
                r->superseded++;
                continue;
            }
            struct rdb_run *run = &g->runs[g->nruns++];
            run->run_id = idx[k]->run_id;
            run->seed = idx[k]->seed;
            memcpy(run->fingerprint, idx[k]->fingerprint, sizeof run->fingerprint);
            memcpy(run->status, idx[k]->status, sizeof run->status);
            run->m = idx[k]->m;
            idx[k]->m = NULL;
        }
        i = e;
    }
    if (r->ngroups) /* qsort wants a valid array even for 0 elements */
        qsort(r->groups, r->ngroups, sizeof *r->groups, group_cmp);
    for (size_t i = 0; i < nrows; i++)
        free_row_strings(&rows[i]);
    free(rows);
    free(idx);
    *out = r;
    return 0;
}

void rdb_close(struct rdb *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->ngroups; i++) {
        struct rdb_group *g = &r->groups[i];
        free(g->scenario);
        free(g->scenario_path);
        free(g->scenario_hash);
        free(g->policy);
        free(g->base_policy);
        free(g->params);
        free(g->version);
        for (size_t k = 0; k < g->nruns; k++)
            free(g->runs[k].m);
        free(g->runs);
    }
    free(r->groups);
    if (r->db)
        sqlite3_close(r->db);
    free(r->path);
    free(r);
}

void rdb_seed_text(const struct rdb_group *g, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < g->nruns;) {
        size_t e = i;
        while (e + 1 < g->nruns && g->runs[e + 1].seed == g->runs[e].seed + 1)
            e++;
        char part[64];
        if (e == i)
            snprintf(part, sizeof part, "%s%" PRIu64, i ? "," : "", g->runs[i].seed);
        else
            snprintf(part, sizeof part, "%s%" PRIu64 "..%" PRIu64, i ? "," : "", g->runs[i].seed, g->runs[e].seed);
        if (used + strlen(part) + 4 >= n) {
            snprintf(buf + used, n - used, "...");
            return;
        }
        used += (size_t)snprintf(buf + used, n - used, "%s", part);
        i = e + 1;
    }
}
