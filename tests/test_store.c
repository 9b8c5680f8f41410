/* test_store.c: the results database, written and read back with SQL.
 *
 * A scenario and a simulation result are built by hand (no parser, no
 * engine): workflows w0 (handlers h0, h1) and w1 (h0), metrics, histograms
 * filled through hist_add, two crashes (one that never restarted), three
 * expectation outcomes and a few trace records.  Each test writes them to a
 * fresh database under /tmp and checks the rows with plain sqlite3 queries:
 * every metric of metric_table equals metric_get, histogram buckets add up
 * to the sample counts, NULLs stand where a value does not exist, the trace
 * is written only on request, one typed column per field, and reads back
 * (reports/trace.h) into the records that were written.  Failure paths: a
 * database of another schema version (a version 1 file: refused for
 * writing, read without its trace), a file that is not a database, a
 * database that is not simrun's,
 * a seed above 2^63 - 1, and a write that fails midway in any table
 * (a trigger injects the failure), which must leave no row at all. */
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "reports/rdb.h"
#include "reports/trace.h"
#include "sim/checker.h"
#include "sim/hist.h"
#include "sim/scenario.h"
#include "sim/sim.h"
#include "sim/store.h"
#include "sim/util.h"
#include "tests/expect.h"

/* --- a temporary database file ---------------------------------------------- */

struct tmpdb {
    char path[64];
};

static void tmpdb_make(struct tmpdb *t)
{
    snprintf(t->path, sizeof t->path, "/tmp/test_store_" "XX" "XX" "XX" /* mkstemp fills the six X */);
    int fd = mkstemp(t->path);
    assert_true(fd >= 0);
    close(fd); /* an empty file is an empty database to sqlite */
}

static void tmpdb_remove(struct tmpdb *t)
{
    char j[80];
    unlink(t->path);
    snprintf(j, sizeof j, "%s-journal", t->path);
    unlink(j);
}

/* Each test gets a fresh file in *state, removed afterwards even when the
 * test fails. */
static int tmpdb_setup(void **state)
{
    struct tmpdb *t = xcalloc(1, sizeof *t);
    tmpdb_make(t);
    *state = t;
    return 0;
}

static int tmpdb_teardown(void **state)
{
    tmpdb_remove(*state);
    free(*state);
    return 0;
}

/* --- SQL helpers for reading back ------------------------------------------- */

static sqlite3 *db_open(const char *path)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc != SQLITE_OK)
        fail_msg("open %s: %s", path, sqlite3_errstr(rc));
    assert_int_equal(sqlite3_busy_timeout(db, 5000), SQLITE_OK);
    return db;
}

static void db_close(sqlite3 *db)
{
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

static void db_exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg ? msg : "?");
}

/* Prepares a printf-formatted query and steps to its first row (which
 * must exist).  The caller finalizes. */
static sqlite3_stmt *q_row(sqlite3 *db, const char *fmt, va_list ap)
{
    char sql[1024];
    vsnprintf(sql, sizeof sql, fmt, ap);
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        fail_msg("prepare %s: %s", sql, sqlite3_errmsg(db));
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW)
        fail_msg("%s: no row (%s)", sql, sqlite3_errstr(rc));
    return s;
}

static int64_t q_i64(sqlite3 *db, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sqlite3_stmt *s = q_row(db, fmt, ap);
    va_end(ap);
    int64_t v = sqlite3_column_int64(s, 0);
    assert_int_equal(sqlite3_finalize(s), SQLITE_OK);
    return v;
}

/* The first column's type of the first row (SQLITE_NULL, ...). */
static int q_type(sqlite3 *db, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sqlite3_stmt *s = q_row(db, fmt, ap);
    va_end(ap);
    int t = sqlite3_column_type(s, 0);
    assert_int_equal(sqlite3_finalize(s), SQLITE_OK);
    return t;
}

static double q_real(sqlite3 *db, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sqlite3_stmt *s = q_row(db, fmt, ap);
    va_end(ap);
    double v = sqlite3_column_double(s, 0);
    assert_int_equal(sqlite3_finalize(s), SQLITE_OK);
    return v;
}

static void q_text(sqlite3 *db, char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sqlite3_stmt *s = q_row(db, fmt, ap);
    va_end(ap);
    const unsigned char *v = sqlite3_column_text(s, 0);
    snprintf(buf, n, "%s", v ? (const char *)v : "(null)");
    assert_int_equal(sqlite3_finalize(s), SQLITE_OK);
}

static const char *const all_tables[] = {
    "runs", "run_timings", "metrics", "histograms", "crashes", "expectations", "trace", "run_plan",
};
#define NTABLES (sizeof all_tables / sizeof all_tables[0])

static int64_t total_rows(sqlite3 *db)
{
    int64_t n = 0;
    for (size_t i = 0; i < NTABLES; i++)
        n += q_i64(db, "SELECT count(*) FROM %s", all_tables[i]);
    return n;
}

/* --- a hand-built scenario and result ---------------------------------------- */

/* Everything one test run needs; fx_free releases it. */
struct fx {
    struct scenario scn;
    struct sim_result res;
    struct expect_outcome eo[3];
    struct store_run run;          /* its trace: NULL (write_ok spools res.trace when with_trace) */
    int with_trace;
    char **strings;                /* every name allocated for the scenario */
    size_t nstrings;
};

/* The records of r as the store reads a run's trace: a temporary file of
 * struct trace_rec, from its start (sweep_out.trace). */
static FILE *trace_spool(const struct sim_result *r)
{
    FILE *t = tmpfile();
    assert_non_null(t);
    assert_int_equal(fwrite(r->trace, sizeof *r->trace, r->ntrace, t), r->ntrace);
    rewind(t);
    return t;
}

static char *fx_str(struct fx *f, const char *fmt, ...)
{
    char buf[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    f->strings = xrealloc(f->strings, (f->nstrings + 1) * sizeof *f->strings);
    return f->strings[f->nstrings++] = xstrdup(buf);
}

/* A sample value for sample k of template t: spread over exact buckets
 * (< 256 us) and wide log buckets up to minutes. */
static int64_t sample_us(uint32_t t, unsigned k)
{
    if (k % 4 == 0)
        return (int64_t)(k % 200);
    return (int64_t)(k * 7919u + t * 104729u) * (int64_t)(1 + k % 5) * 100;
}

static void fill_metrics(struct metrics *m, uint64_t base)
{
    m->published = base + 100;
    m->processed = base + 97;
    m->lost = 3;
    m->dropped = 1;
    m->stranded = 2;
    m->duplicates = base % 5;
    m->double_effects = 1;
    m->dues = base + 20;
    m->missed = 2;
    m->coalesced = 1;
    m->runs = base + 50;
    m->runs_empty = 5;
    m->busy_loops = 1;
    m->runs_failed = 2;
    m->runs_crashed = 1;
    m->wakeups = base * 3 + 7;
    m->overlaps_us = 1500;
    m->overlap_runs = 1;
}

/* A trace with a record of every kind, each field set (FX_NTRACE). */
#define FX_NTRACE 18
static void fx_trace(struct sim_result *r)
{
    struct trace_rec *t = r->trace = xcalloc(FX_NTRACE, sizeof *r->trace);
    int k = 0;
    trace_rec_init(&t[k], FACT_PUBLISH, 0, 2, 0);
    t[k].item = 0;
    t[k++].key = 7;
    trace_rec_init(&t[k], FACT_RUN_START, 1000, 1, 1);
    t[k].reason = REASON_EVENT;
    t[k++].taken = 1;
    trace_rec_init(&t[k], FACT_PHASE, 1100, 1, 1);
    t[k++].phase = PHASE_MUTATING;
    trace_rec_init(&t[k++], FACT_MUTATION, 1500, 1, 1);
    trace_rec_init(&t[k], FACT_RUN_END, 2000, 1, 1);
    t[k].outcome = OUT_COMMITTED;
    t[k++].phase = PHASE_COMMITTED;
    trace_rec_init(&t[k], FACT_RUN_START, 3000, 0, 2);
    t[k].reason = REASON_RETRY;
    t[k].due_us = 2500;
    t[k].wake_us = 9000;
    t[k++].resume = 1;
    trace_rec_init(&t[k], FACT_RUN_END, 4000, 0, 2);
    t[k].outcome = OUT_FAILED;
    t[k].phase = PHASE_MUTATING;
    t[k++].fail = FAIL_INDETERMINATE;
    trace_rec_init(&t[k], FACT_DELIVERY, 4000, 0, 0);
    t[k].result = UINT64_MAX; /* a policy's id: all 64 bits survive */
    t[k++].ok = 1;
    trace_rec_init(&t[k], FACT_ORPHAN, 5000, -1, 0);
    t[k].topic = 3;
    t[k++].key = 11;
    trace_rec_init(&t[k], FACT_TIMER, 6000, -1, 0);
    t[k].tag = 4;
    t[k++].arg = 12;
    trace_rec_init(&t[k], FACT_TICK, 7000, -1, 0);
    t[k++].ticker = 1;
    trace_rec_init(&t[k], FACT_TRIGGER, 8000, -1, 0);
    t[k++].workflow = 1;
    trace_rec_init(&t[k], FACT_CRASH, 9 * US_PER_H, -1, 0);
    t[k].target = CRASH_WORKER;
    t[k++].target_index = 2;
    trace_rec_init(&t[k], FACT_DROP, 9 * US_PER_H, 2, 0);
    t[k].item = 5;
    t[k++].cause = DROP_CRASH;
    trace_rec_init(&t[k], FACT_WAKEUPS, 9 * US_PER_H, -1, 0);
    t[k].ticker = 1;
    t[k++].count = 300;
    trace_rec_init(&t[k], FACT_STOP, 10 * US_PER_H, -1, 0);
    t[k++].count = 0;
    trace_rec_init(&t[k++], FACT_HORIZON, 24 * US_PER_H, -1, 0);
    /* A note that fills its whole buffer (no terminating NUL). */
    trace_rec_init(&t[k], FACT_NOTE, 24 * US_PER_H, 1, 0);
    memset(t[k++].note, 'x', sizeof t->note);
    assert_int_equal(k, FX_NTRACE);
    r->ntrace = FX_NTRACE;
}

/* nh[f]: handlers of workflow f; samples: latency samples per template
 * (template 0 also gets lateness samples). */
static struct fx *fx_new(uint16_t nwfs, const uint16_t *nh, unsigned samples)
{
    struct fx *f = xcalloc(1, sizeof *f);
    struct scenario *s = &f->scn;
    s->path = fx_str(f, "scenarios/test-store.scn");
    s->name = fx_str(f, "test-store");
    s->hash = UINT64_C(0x0123456789abcdef);
    s->start_utc_s = INT64_C(1735689600); /* 2025-01-01T00:00:00Z */
    s->horizon_us = US_PER_DAY;
    s->drain_us = 2 * US_PER_H;
    s->recovery_bound_us = US_PER_H;
    s->seed = 7;
    s->nwfs = nwfs;
    s->wfs = xcalloc(nwfs, sizeof *s->wfs);
    uint32_t ntmpl = 0;
    for (uint16_t w = 0; w < nwfs; w++) {
        struct workflow_def *wf = &s->wfs[w];
        wf->name = fx_str(f, "w%u", w);
        wf->count = 1;
        wf->nhandlers = nh[w];
        wf->handlers = xcalloc(nh[w], sizeof *wf->handlers);
        for (uint16_t h = 0; h < nh[w]; h++) {
            wf->handlers[h].name = fx_str(f, "h%u", h);
            wf->handlers[h].kind = h == 0 ? H_PRODUCER : H_CONSUMER;
            wf->handlers[h].source = -1;
            wf->handlers[h].out_topic = -1;
        }
        ntmpl += nh[w];
    }
    s->ninstances = nwfs;
    s->nhandler_instances = ntmpl;

    s->nexpects = 3;
    s->expects = xcalloc(3, sizeof *s->expects);
    static char *star[] = { "*", NULL };
    static char *wakeat[] = { "wakeat", NULL };
    s->expects[0] = (struct expect_def){ star, fx_str(f, "lost"), -1, -1, OP_EQ, 0, fx_str(f, "expect * lost == 0"), 10, EXPECT_EACH, 0, 0 };
    s->expects[1] = (struct expect_def){ wakeat, fx_str(f, "latency.p99"), 0, 1, OP_LT, 600e6,
                                         fx_str(f, "expect wakeat latency.p99 for w0.h1 < 10m"), 11, EXPECT_EACH, 0, 0 };
    s->expects[2] = (struct expect_def){ star, fx_str(f, "recovery_time"), -1, -1, OP_LE, 3600e6,
                                         fx_str(f, "expect * recovery_time <= 1h"), 12, EXPECT_EACH, 0, 0 };
    f->eo[0] = (struct expect_outcome){ &s->expects[0], 3, 0 };
    f->eo[1] = (struct expect_outcome){ &s->expects[1], 123456, 1 };
    f->eo[2] = (struct expect_outcome){ &s->expects[2], NAN, 0 };

    struct sim_result *r = &f->res;
    r->status = SIM_OK;
    r->fingerprint = UINT64_C(0xfedcba9876543210);
    r->events = 123456;
    r->end_us = s->horizon_us + s->drain_us;
    struct checker_result *ck = &r->ck;
    ck->ntmpl = ntmpl;
    ck->per_tmpl = xcalloc(ntmpl, sizeof *ck->per_tmpl);
    fill_metrics(&ck->total, 1000);
    hist_init(&ck->total.latency);
    hist_init(&ck->total.lateness);
    for (uint32_t t = 0; t < ntmpl; t++) {
        struct metrics *m = &ck->per_tmpl[t];
        fill_metrics(m, t);
        hist_init(&m->latency);
        hist_init(&m->lateness);
        for (unsigned k = 0; k < samples; k++) {
            int64_t v = sample_us(t, k);
            hist_add(&m->latency, v);
            hist_add(&ck->total.latency, v);
        }
        if (t == 0) {
            static const int64_t late[] = { 0, 5, 5, 1000000, 30 * US_PER_S };
            for (size_t k = 0; k < sizeof late / sizeof late[0]; k++) {
                hist_add(&m->lateness, late[k]);
                hist_add(&ck->total.lateness, late[k]);
            }
        }
    }
    ck->ncrashes = 2;
    ck->crashes = xcalloc(2, sizeof *ck->crashes);
    ck->crashes[0] = (struct crash_rec){ CRASH_HOST, 0, 9 * US_PER_H, 9 * US_PER_H + 5 * US_PER_MIN,
                                         12 * US_PER_S, 0, 0, 0, 1 };
    ck->crashes[1] = (struct crash_rec){ CRASH_WORKER, 2, 20 * US_PER_H, SIM_NEVER, -1, 1, 5, 2, 0 };
    ck->recovery_ok = 0;
    ck->stuck = 1;
    ck->recovery_time_max_us = -1;

    fx_trace(r);

    f->run = (struct store_run){
        .scn = s,
        .policy = "wakeat-asbuilt",
        .base_policy = "wakeat",
        .params = "dirty_clear=if_empty tick=10s",
        .seed = 42,
        .version = "0.1.0-test",
        .res = r,
        .wall_us = 250000,
        .expects = f->eo,
        .nexpects = 3,
    };
    f->with_trace = 1;
    return f;
}

static void fx_free(struct fx *f)
{
    struct checker_result *ck = &f->res.ck;
    for (uint32_t t = 0; t < ck->ntmpl; t++) {
        hist_free(&ck->per_tmpl[t].latency);
        hist_free(&ck->per_tmpl[t].lateness);
    }
    hist_free(&ck->total.latency);
    hist_free(&ck->total.lateness);
    free(ck->per_tmpl);
    free(ck->crashes);
    free(f->res.trace);
    for (uint16_t w = 0; w < f->scn.nwfs; w++)
        free(f->scn.wfs[w].handlers);
    free(f->scn.wfs);
    free(f->scn.expects);
    for (size_t i = 0; i < f->nstrings; i++)
        free(f->strings[i]);
    free(f->strings);
    free(f);
}

static const uint16_t small_nh[] = { 2, 1 };
static const char *const small_names[] = { "w0.h0", "w0.h1", "w1.h0" };

/* Writes f's run, with its trace when f->with_trace: store_write_run's
 * value. */
static int write_fx(struct store *st, const struct fx *f, int64_t *id, char *err, size_t n)
{
    struct store_run r = f->run;
    r.trace = f->with_trace ? trace_spool(&f->res) : NULL;
    int rc = store_write_run(st, &r, id, err, n);
    if (r.trace) {
        if (rc == 0)
            assert_true(feof(r.trace)); /* read to its end */
        fclose(r.trace);
    }
    return rc;
}

static int64_t write_ok(struct store *st, const struct fx *f)
{
    char err[512] = "";
    int64_t id = -1;
    if (write_fx(st, f, &id, err, sizeof err) != 0)
        fail_msg("store_write_run: %s", err);
    assert_true(id > 0);
    return id;
}

static struct store *open_ok(const char *path)
{
    char err[512] = "";
    struct store *st = NULL;
    if (store_open(path, &st, err, sizeof err) != 0)
        fail_msg("store_open %s: %s", path, err);
    assert_non_null(st);
    return st;
}

/* --- checks ------------------------------------------------------------------ */

/* Every metric of one scope equals metric_get; returns the rows expected. */
static int64_t check_metrics_scope(sqlite3 *db, int64_t id, const struct checker_result *ck, int tmpl,
                                   const char *handler)
{
    int64_t rows = 0;
    for (int i = 0; i < metric_count; i++) {
        const struct metric_info *mi = &metric_table[i];
        if (tmpl >= 0 && !mi->per_handler)
            continue;
        double want;
        char ctx[160];
        snprintf(ctx, sizeof ctx, "metric %s handler '%s'", mi->name, handler);
        int64_t present = q_i64(db, "SELECT count(*) FROM metrics WHERE run_id = %" PRId64
                                    " AND handler = '%s' AND name = '%s'", id, handler, mi->name);
        if (metric_get(ck, tmpl, mi->name, &want) != 0) {
            EXPECT_I64(present, 0, ctx);
            continue;
        }
        EXPECT_I64(present, 1, ctx);
        rows++;
        const char *where = "SELECT value FROM metrics WHERE run_id = %" PRId64 " AND handler = '%s' AND name = '%s'";
        if (isnan(want)) {
            EXPECT_I64(q_type(db, where, id, handler, mi->name), SQLITE_NULL, ctx);
            continue;
        }
        double got = q_real(db, where, id, handler, mi->name);
        if (got != want)
            fail_msg("%s: value %.17g, expected %.17g", ctx, got, want);
    }
    return rows;
}

/* The buckets of one histogram as stored: each row is one bucket of
 * hist_bounds with exactly its count, and the counts add up. */
static void check_hist(sqlite3 *db, int64_t id, const struct hist *h, const char *handler, const char *kind)
{
    char ctx[160];
    snprintf(ctx, sizeof ctx, "%s histogram of '%s'", kind, handler);
    const char *base = "FROM histograms WHERE run_id = %" PRId64 " AND handler = '%s' AND kind = '%s'";
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT coalesce(sum(count), 0) %s", base);
    EXPECT_I64(q_i64(db, sql, id, handler, kind), (int64_t)h->count, ctx);
    int64_t nonzero = 0;
    for (int i = 0; h->bucket && i < HIST_NBUCKETS; i++) {
        if (!h->bucket[i])
            continue;
        nonzero++;
        int64_t lo, hi;
        hist_bounds(i, &lo, &hi);
        snprintf(sql, sizeof sql, "SELECT count %s AND bucket_lo_us = %" PRId64 " AND bucket_hi_us = %" PRId64, base,
                 lo, hi);
        EXPECT_I64(q_i64(db, sql, id, handler, kind), (int64_t)h->bucket[i], ctx);
    }
    snprintf(sql, sizeof sql, "SELECT count(*) %s", base);
    EXPECT_I64(q_i64(db, sql, id, handler, kind), nonzero, ctx);
}

static void check_run(sqlite3 *db, int64_t id, const struct fx *f, int with_trace)
{
    char buf[256];
    const struct store_run *r = &f->run;
    const struct checker_result *ck = &f->res.ck;

    /* runs */
    q_text(db, buf, sizeof buf, "SELECT scenario FROM runs WHERE run_id = %" PRId64, id);
    EXPECT_STR(buf, "test-store", "runs.scenario");
    q_text(db, buf, sizeof buf, "SELECT scenario_path FROM runs WHERE run_id = %" PRId64, id);
    EXPECT_STR(buf, "scenarios/test-store.scn", "runs.scenario_path");
    q_text(db, buf, sizeof buf, "SELECT scenario_hash FROM runs WHERE run_id = %" PRId64, id);
    EXPECT_STR(buf, "0123456789abcdef", "runs.scenario_hash");
    q_text(db, buf, sizeof buf, "SELECT policy FROM runs WHERE run_id = %" PRId64, id);
    EXPECT_STR(buf, r->policy, "runs.policy");
    q_text(db, buf, sizeof buf, "SELECT base_policy FROM runs WHERE run_id = %" PRId64, id);
    EXPECT_STR(buf, r->base_policy, "runs.base_policy");
    q_text(db, buf, sizeof buf, "SELECT params FROM runs WHERE run_id = %" PRId64, id);
    EXPECT_STR(buf, r->params, "runs.params");
    EXPECT_I64(q_i64(db, "SELECT seed FROM runs WHERE run_id = %" PRId64, id), (int64_t)r->seed, "runs.seed");
    q_text(db, buf, sizeof buf, "SELECT simrun_version FROM runs WHERE run_id = %" PRId64, id);
    EXPECT_STR(buf, r->version, "runs.simrun_version");
    q_text(db, buf, sizeof buf, "SELECT fingerprint FROM runs WHERE run_id = %" PRId64, id);
    EXPECT_STR(buf, "fedcba9876543210", "runs.fingerprint");
    q_text(db, buf, sizeof buf, "SELECT status FROM runs WHERE run_id = %" PRId64, id);
    EXPECT_STR(buf, sim_status_name(f->res.status), "runs.status");
    q_text(db, buf, sizeof buf, "SELECT status_msg FROM runs WHERE run_id = %" PRId64, id);
    EXPECT_STR(buf, f->res.status_msg, "runs.status_msg");
    EXPECT_I64(q_i64(db, "SELECT events FROM runs WHERE run_id = %" PRId64, id), 123456, "runs.events");
    q_text(db, buf, sizeof buf, "SELECT start_utc FROM runs WHERE run_id = %" PRId64, id);
    EXPECT_STR(buf, "2025-01-01T00:00:00Z", "runs.start_utc");
    EXPECT_I64(q_i64(db, "SELECT horizon_us FROM runs WHERE run_id = %" PRId64, id), US_PER_DAY, "runs.horizon_us");
    EXPECT_I64(q_i64(db, "SELECT drain_us FROM runs WHERE run_id = %" PRId64, id), 2 * US_PER_H, "runs.drain_us");
    EXPECT_I64(q_i64(db, "SELECT end_us FROM runs WHERE run_id = %" PRId64, id), US_PER_DAY + 2 * US_PER_H,
               "runs.end_us");

    /* run_timings */
    EXPECT_I64(q_i64(db, "SELECT wall_us FROM run_timings WHERE run_id = %" PRId64, id), r->wall_us, "wall_us");
    double eps = q_real(db, "SELECT events_per_s FROM run_timings WHERE run_id = %" PRId64, id);
    double want_eps = 123456.0 * 1e6 / (double)r->wall_us;
    if (fabs(eps - want_eps) > 1e-9 * want_eps)
        fail_msg("events_per_s = %.17g, expected %.17g", eps, want_eps);

    /* metrics: the whole scenario, then each template in index order */
    assert_int_equal(ck->ntmpl, 3);
    int64_t rows = check_metrics_scope(db, id, ck, -1, "");
    for (uint32_t t = 0; t < ck->ntmpl; t++)
        rows += check_metrics_scope(db, id, ck, (int)t, small_names[t]);
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM metrics WHERE run_id = %" PRId64, id), rows, "metric rows");
    if (metric_find("published")) {
        EXPECT_I64(q_i64(db, "SELECT value FROM metrics WHERE run_id = %" PRId64
                             " AND handler = '' AND name = 'published'", id),
                   1100, "published");
    }

    /* histograms */
    check_hist(db, id, &ck->total.latency, "", "latency");
    check_hist(db, id, &ck->total.lateness, "", "lateness");
    for (uint32_t t = 0; t < ck->ntmpl; t++) {
        check_hist(db, id, &ck->per_tmpl[t].latency, small_names[t], "latency");
        check_hist(db, id, &ck->per_tmpl[t].lateness, small_names[t], "lateness");
    }
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM histograms WHERE run_id = %" PRId64
                         " AND (bucket_lo_us > bucket_hi_us OR count <= 0)", id), 0, "bucket sanity");
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM histograms WHERE run_id = %" PRId64
                         " AND kind NOT IN ('latency', 'lateness')", id), 0, "histogram kinds");
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM histograms WHERE run_id = %" PRId64
                         " AND handler = 'w0.h1' AND kind = 'lateness'", id), 0, "empty histogram has no rows");

    /* crashes */
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM crashes WHERE run_id = %" PRId64, id), 2, "crash rows");
    q_text(db, buf, sizeof buf,
           "SELECT target || ' ' || target_index || ' ' || at_us || ' ' || restart_us || ' ' || recovery_time_us"
           " || ' ' || stuck || ' ' || lost || ' ' || double_effects || ' ' || recovery_ok"
           " FROM crashes WHERE run_id = %" PRId64 " AND idx = 0", id);
    EXPECT_STR(buf, "host 0 32400000000 32700000000 12000000 0 0 0 1", "crash 0");
    q_text(db, buf, sizeof buf,
           "SELECT target || ' ' || target_index || ' ' || at_us || ' ' || coalesce(restart_us, 'null') || ' '"
           " || coalesce(recovery_time_us, 'null') || ' ' || stuck || ' ' || lost || ' ' || double_effects"
           " || ' ' || recovery_ok FROM crashes WHERE run_id = %" PRId64 " AND idx = 1", id);
    EXPECT_STR(buf, "worker 2 72000000000 null null 1 5 2 0", "crash 1");

    /* expectations */
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM expectations WHERE run_id = %" PRId64, id), 3, "expectation rows");
    q_text(db, buf, sizeof buf,
           "SELECT text || '|' || metric || '|' || handler || '|' || op || '|' || expected || '|' || measured"
           " || '|' || ok FROM expectations WHERE run_id = %" PRId64 " AND line = 10", id);
    EXPECT_STR(buf, "expect * lost == 0|lost||==|0.0|3.0|0", "expectation line 10");
    q_text(db, buf, sizeof buf,
           "SELECT text || '|' || metric || '|' || handler || '|' || op || '|' || expected || '|' || measured"
           " || '|' || ok FROM expectations WHERE run_id = %" PRId64 " AND line = 11", id);
    EXPECT_STR(buf, "expect wakeat latency.p99 for w0.h1 < 10m|latency.p99|w0.h1|<|600000000.0|123456.0|1",
               "expectation line 11");
    EXPECT_I64(q_type(db, "SELECT measured FROM expectations WHERE run_id = %" PRId64 " AND line = 12", id),
               SQLITE_NULL, "undefined measured value is NULL");
    q_text(db, buf, sizeof buf, "SELECT op FROM expectations WHERE run_id = %" PRId64 " AND line = 12", id);
    EXPECT_STR(buf, "<=", "expectation line 12 op");

    /* trace */
    int64_t ntrace = q_i64(db, "SELECT count(*) FROM trace WHERE run_id = %" PRId64, id);
    if (!with_trace) {
        EXPECT_I64(ntrace, 0, "trace rows without with_trace");
        return;
    }
    EXPECT_I64(ntrace, FX_NTRACE, "trace rows");
    q_text(db, buf, sizeof buf,
           "SELECT group_concat(seq || ',' || t_us || ',' || kind || ',' || coalesce(handler, '-') || ','"
           " || coalesce(run, '-'), ';') FROM (SELECT * FROM trace WHERE run_id = %" PRId64 " AND seq < 3"
           " ORDER BY seq)", id);
    EXPECT_STR(buf, "0,0,publish,2,-;1,1000,start,1,1;2,1100,phase,1,1", "trace");
    /* Typed columns: names for the vocabulary, NULL where the kind has no
     * such field or the value means none. */
    static const struct {
        int seq;
        const char *cols, *want;
    } trows[] = {
        {0, "item, key, reason, taken, cause, note", "0|7|-|-|-|-"},
        {1, "reason, taken, due_us, wake_us, resume, item", "event|1|-|-|0|-"},
        {2, "phase, outcome", "mutating|-"},
        {4, "outcome, phase, fail", "committed|committed|none"},
        {5, "reason, taken, due_us, wake_us, resume", "retry|0|2500|9000|1"},
        {6, "outcome, phase, fail", "failed|mutating|indeterminate"},
        {7, "result, ok, item", "-1|1|-"},
        {8, "topic, key, handler", "3|11|-"},
        {9, "tag, arg", "4|12"},
        {10, "ticker, count", "1|-"},
        {11, "workflow", "1"},
        {12, "target, target_index", "worker|2"},
        {13, "item, cause, handler", "5|crash|2"},
        {14, "ticker, count", "1|300"},
        {15, "count, ticker", "0|-"},
        {16, "run, handler, count, note", "-|-|-|-"},
    };
    for (size_t i = 0; i < sizeof trows / sizeof trows[0]; i++) {
        char sql[256], cols[200] = "";
        const char *c = trows[i].cols;
        /* "a, b" -> "coalesce(a, '-') || '|' || coalesce(b, '-')" */
        while (*c) {
            size_t len = strcspn(c, ",");
            snprintf(cols + strlen(cols), sizeof cols - strlen(cols), "%scoalesce(%.*s, '-')",
                     cols[0] ? " || '|' || " : "", (int)len, c);
            c += len;
            c += strspn(c, ", ");
        }
        snprintf(sql, sizeof sql, "SELECT %s FROM trace WHERE run_id = %%" PRId64 " AND seq = %d", cols, trows[i].seq);
        q_text(db, buf, sizeof buf, sql, id);
        EXPECT_STR(buf, trows[i].want, trows[i].cols);
    }
    EXPECT_I64(q_i64(db, "SELECT length(note) FROM trace WHERE run_id = %" PRId64 " AND seq = 17", id),
               (int64_t)sizeof f->res.trace[17].note, "a note that fills its buffer");
}

/* --- tests ------------------------------------------------------------------- */

static void test_write_and_read_back(void **state)
{
    struct tmpdb *t = *state;
    struct fx *f = fx_new(2, small_nh, 300);
    struct store *st = open_ok(t->path);
    int64_t id = write_ok(st, f);
    store_close(st);

    sqlite3 *db = db_open(t->path);
    char v[64];
    q_text(db, v, sizeof v, "SELECT value FROM meta WHERE key = 'schema_version'");
    char want_v[16];
    snprintf(want_v, sizeof want_v, "%d", STORE_SCHEMA_VERSION);
    EXPECT_STR(v, want_v, "schema_version");
    check_run(db, id, f, 1);
    /* The convenience view joins runs and metrics. */
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM run_metrics WHERE run_id = %" PRId64, id),
               q_i64(db, "SELECT count(*) FROM metrics WHERE run_id = %" PRId64, id), "run_metrics view");
    db_close(db);
    fx_free(f);
}

static void test_trace_only_on_request(void **state)
{
    struct tmpdb *t = *state;
    struct fx *f = fx_new(2, small_nh, 50);
    struct store *st = open_ok(t->path);
    f->with_trace = 0;
    int64_t a = write_ok(st, f);
    f->with_trace = 1;
    f->run.seed = 43;
    f->res.status = SIM_LIVELOCK;
    snprintf(f->res.status_msg, sizeof f->res.status_msg, "livelock: handler w0.h1 ran 100000 times");
    int64_t b = write_ok(st, f);
    assert_true(b > a);
    store_close(st);

    sqlite3 *db = db_open(t->path);
    f->run.seed = 42;
    f->res.status = SIM_OK;
    f->res.status_msg[0] = '\0';
    check_run(db, a, f, 0);
    f->run.seed = 43;
    f->res.status = SIM_LIVELOCK;
    snprintf(f->res.status_msg, sizeof f->res.status_msg, "livelock: handler w0.h1 ran 100000 times");
    check_run(db, b, f, 1);
    char s[64];
    q_text(db, s, sizeof s, "SELECT status FROM runs WHERE run_id = %" PRId64, b);
    EXPECT_STR(s, "livelock", "status");
    db_close(db);

    /* A run whose wall time was not measured has no timings row. */
    st = open_ok(t->path);
    f->run.wall_us = 0;
    int64_t c = write_ok(st, f);
    store_close(st);
    db = db_open(t->path);
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM run_timings WHERE run_id = %" PRId64, c), 0, "unmeasured run");
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM runs WHERE run_id = %" PRId64, c), 1, "unmeasured run");
    db_close(db);
    fx_free(f);
}

static void test_reopen_appends(void **state)
{
    struct tmpdb *t = *state;
    struct fx *f = fx_new(2, small_nh, 20);
    struct store *st = open_ok(t->path);
    int64_t a = write_ok(st, f);
    store_close(st);
    st = open_ok(t->path);
    int64_t b = write_ok(st, f);
    store_close(st);
    assert_true(b > a);

    sqlite3 *db = db_open(t->path);
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM runs"), 2, "runs after reopen");
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM meta"), 1, "meta rows");
    check_run(db, b, f, 1);
    /* Deleting a run with foreign keys on takes its rows with it. */
    db_exec(db, "PRAGMA foreign_keys = ON");
    char sql[128];
    snprintf(sql, sizeof sql, "DELETE FROM runs WHERE run_id = %" PRId64, a);
    db_exec(db, sql);
    for (size_t i = 0; i < NTABLES; i++)
        EXPECT_I64(q_i64(db, "SELECT count(*) FROM %s WHERE run_id = %" PRId64, all_tables[i], a), 0,
                   all_tables[i]);
    db_close(db);
    fx_free(f);
}

/* store_open fails with rc (-1: not a results database of this version;
 * STORE_EWRITE: the file cannot be written) and a message containing want
 * (exact: equal to it). */
static void expect_open_fails_rc(const char *path, const char *want, int exact, int rc)
{
    char err[512] = "";
    struct store *st = (struct store *)&err; /* must be reset to NULL */
    assert_int_equal(store_open(path, &st, err, sizeof err), rc);
    assert_null(st);
    if (exact)
        EXPECT_STR(err, want, "store_open error");
    else
        EXPECT_HAS(err, want, "store_open error");
}

static void expect_open_fails(const char *path, const char *want, int exact)
{
    expect_open_fails_rc(path, want, exact, -1);
}

static void test_wrong_schema_version(void **state)
{
    struct tmpdb *t = *state;
    sqlite3 *db = db_open(t->path);
    db_exec(db, "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
                "INSERT INTO meta VALUES('schema_version', '99')");
    db_close(db);
    char want[256];
    snprintf(want, sizeof want, "results database '%s' has schema version 99; this simrun writes version %d", t->path,
             STORE_SCHEMA_VERSION);
    expect_open_fails(t->path, want, 1);

    db = db_open(t->path);
    db_exec(db, "DELETE FROM meta");
    db_close(db);
    expect_open_fails(t->path, "has a meta table but no schema version", 0);

    /* Nothing was created in the refused database. */
    db = db_open(t->path);
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM sqlite_master WHERE name = 'runs'"), 0, "no runs table");
    db_close(db);
}

/* Turns a database this simrun wrote into the version 1 layout: the same
 * tables, except that the trace is one text column, detail. */
static void make_v1(const char *path)
{
    sqlite3 *db = db_open(path);
    db_exec(db, "UPDATE meta SET value = '1' WHERE key = 'schema_version';"
                "DROP TABLE trace;"
                "CREATE TABLE trace (run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,"
                " seq INTEGER NOT NULL, t_us INTEGER NOT NULL, kind TEXT NOT NULL, handler INTEGER, run INTEGER,"
                " detail TEXT NOT NULL, PRIMARY KEY(run_id, seq)) WITHOUT ROWID;"
                "INSERT INTO trace SELECT run_id, 0, 1000, 'start', 1, 1, 'reason=event taken=1 due=- wake=-'"
                " FROM runs");
    db_close(db);
}

/* A version 1 file: writing refuses it with both versions and what to do;
 * reading (report, diff) accepts it, since the tables they read did not
 * change, but its text trace is not read (the report simulates again). */
static void test_version_1_file(void **state)
{
    struct tmpdb *t = *state;
    struct fx *f = fx_new(2, small_nh, 20);
    struct store *st = open_ok(t->path);
    int64_t id = write_ok(st, f);
    store_close(st);
    make_v1(t->path);

    char want[512];
    snprintf(want, sizeof want,
             "results database '%s' has schema version 1; this simrun writes version %d and does not convert older "
             "files: write to a new file, or use the simrun that wrote it",
             t->path, STORE_SCHEMA_VERSION);
    expect_open_fails(t->path, want, 1);

    struct rdb *r;
    char err[512] = "";
    if (rdb_open(t->path, &r, err, sizeof err) != 0)
        fail_msg("rdb_open of a version 1 file: %s", err);
    assert_int_equal(r->version, 1);
    assert_int_equal(r->nruns, 1);
    struct rtrace tr;
    assert_int_equal(rtrace_load(r, id, &tr, err, sizeof err), 0);
    assert_int_equal(tr.n, 0);
    assert_int_equal(tr.end_us, f->res.end_us);
    rtrace_free(&tr);
    rdb_close(r);

    /* A newer version is refused by the reader too. */
    sqlite3 *db = db_open(t->path);
    db_exec(db, "UPDATE meta SET value = '99' WHERE key = 'schema_version'");
    db_close(db);
    assert_int_equal(rdb_open(t->path, &r, err, sizeof err), -1);
    char want_r[128];
    snprintf(want_r, sizeof want_r, "has schema version 99; this simrun reads versions 1 to %d", STORE_SCHEMA_VERSION);
    EXPECT_HAS(err, want_r, "rdb_open error");
    fx_free(f);
}

/* The stored trace reads back into the very records that were written. */
static void test_trace_round_trip(void **state)
{
    struct tmpdb *t = *state;
    struct fx *f = fx_new(2, small_nh, 20);
    struct store *st = open_ok(t->path);
    int64_t id = write_ok(st, f);
    store_close(st);

    struct rdb *r;
    char err[512] = "";
    if (rdb_open(t->path, &r, err, sizeof err) != 0)
        fail_msg("rdb_open: %s", err);
    assert_int_equal(r->version, STORE_SCHEMA_VERSION);
    struct rtrace tr;
    if (rtrace_load(r, id, &tr, err, sizeof err) != 0)
        fail_msg("rtrace_load: %s", err);
    assert_int_equal(tr.n, f->res.ntrace);
    assert_int_equal(tr.end_us, f->res.end_us);
    for (size_t i = 0; i < tr.n; i++) {
        char a[512], b[512];
        trace_format_line(&tr.recs[i], NULL, "x", a, sizeof a);
        trace_format_line(&f->res.trace[i], NULL, "x", b, sizeof b);
        EXPECT_STR(a, b, "the record's line");
        if (memcmp(&tr.recs[i], &f->res.trace[i], sizeof tr.recs[i]) != 0)
            fail_msg("record %zu (%s) reads back different", i, b);
    }
    rtrace_free(&tr);

    /* A kind this simrun does not know (a newer one's) is an error that
     * says where. */
    rdb_close(r);
    sqlite3 *db = db_open(t->path);
    db_exec(db, "UPDATE trace SET kind = 'teleport' WHERE seq = 3");
    db_close(db);
    assert_int_equal(rdb_open(t->path, &r, err, sizeof err), 0);
    assert_int_equal(rtrace_load(r, id, &tr, err, sizeof err), -1);
    EXPECT_HAS(err, "record 3 has kind 'teleport'", "rtrace_load error");
    assert_null(tr.recs);
    rdb_close(r);
    fx_free(f);
}

static void test_not_a_database(void **state)
{
    struct tmpdb *t = *state;
    FILE *fp = fopen(t->path, "w");
    assert_non_null(fp);
    for (int i = 0; i < 64; i++)
        fputs("this is a text file, not a database at all\n", fp);
    assert_int_equal(fclose(fp), 0);
    char want[256];
    snprintf(want, sizeof want, "'%s'", t->path);
    expect_open_fails(t->path, want, 0);
    expect_open_fails(t->path, "file is not a database", 0);
}

static void test_foreign_database(void **state)
{
    struct tmpdb *t = *state;
    sqlite3 *db = db_open(t->path);
    db_exec(db, "CREATE TABLE orders(id INTEGER PRIMARY KEY, total REAL)");
    db_close(db);
    expect_open_fails(t->path, "is not a simrun results database", 0);
}

static void test_open_missing_directory(void **state)
{
    expect_open_fails_rc("/nonexistent-dir-for-simrun-test/x.db", "cannot open results database "
                         "'/nonexistent-dir-for-simrun-test/x.db'", 0, STORE_EWRITE);
}

static void test_seed_range(void **state)
{
    struct tmpdb *t = *state;
    struct fx *f = fx_new(2, small_nh, 10);
    struct store *st = open_ok(t->path);
    char err[512] = "";
    int64_t id = -7;
    f->run.seed = UINT64_C(1) << 63;
    assert_int_equal(write_fx(st, f, &id, err, sizeof err), -1);
    EXPECT_I64(id, -7, "run_id untouched on error");
    EXPECT_HAS(err, "seed 9223372036854775808 is too large", "seed error");
    f->run.seed = (uint64_t)INT64_MAX;
    id = write_ok(st, f);
    store_close(st);

    sqlite3 *db = db_open(t->path);
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM runs"), 1, "runs");
    EXPECT_I64(q_i64(db, "SELECT seed FROM runs WHERE run_id = %" PRId64, id), INT64_MAX, "largest seed");
    db_close(db);
    fx_free(f);
}

/* A failure injected into each table in turn, from a second connection,
 * after the run row and (for later tables) many other rows were inserted:
 * the run must vanish entirely, the message must be sqlite's, and the store
 * must keep working once the cause is gone. */
static void test_atomic_on_failure(void **state)
{
    struct tmpdb *t = *state;
    struct fx *f = fx_new(2, small_nh, 100);
    f->run.plan = "00000000000000aa"; /* so that run_plan gets a row too */
    struct store *st = open_ok(t->path);
    write_ok(st, f);
    sqlite3 *db = db_open(t->path);
    int64_t base = total_rows(db);
    int64_t per_run = base;

    for (size_t i = 0; i < NTABLES; i++) {
        char sql[256];
        snprintf(sql, sizeof sql,
                 "CREATE TRIGGER inject BEFORE INSERT ON %s BEGIN SELECT RAISE(ABORT, 'injected failure'); END",
                 all_tables[i]);
        db_exec(db, sql);
        char err[512] = "";
        int64_t id = -7;
        if (write_fx(st, f, &id, err, sizeof err) != -1)
            fail_msg("write with a failing %s succeeded", all_tables[i]);
        EXPECT_I64(id, -7, all_tables[i]);
        EXPECT_HAS(err, "injected failure", all_tables[i]);
        snprintf(sql, sizeof sql, "cannot insert into %s", all_tables[i]);
        EXPECT_HAS(err, sql, all_tables[i]);
        EXPECT_I64(total_rows(db), base, all_tables[i]);
        db_exec(db, "DROP TRIGGER inject");
        write_ok(st, f);
        base += per_run;
        EXPECT_I64(total_rows(db), base, "after recovery");
    }

    /* A table dropped behind the store's back: the prepared insert fails
     * at its turn, after runs and metrics rows went in. */
    db_exec(db, "DROP TABLE crashes");
    char err[512] = "";
    int64_t id;
    assert_int_equal(write_fx(st, f, &id, err, sizeof err), -1);
    EXPECT_HAS(err, "no such table: crashes", "dropped table");
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM runs"), (int64_t)NTABLES + 1, "runs after dropped table");
    store_close(st);
    db_close(db);
    fx_free(f);
}

/* A write waits for another writer, and gives up with sqlite's message when
 * the lock is never released (kept short: the store waits 5 s). */
static void test_locked_by_other_writer(void **state)
{
    struct tmpdb *t = *state;
    struct fx *f = fx_new(2, small_nh, 10);
    struct store *st = open_ok(t->path);
    sqlite3 *db = db_open(t->path);
    db_exec(db, "BEGIN IMMEDIATE");
    char err[512] = "";
    int64_t id;
    assert_int_equal(write_fx(st, f, &id, err, sizeof err), -1);
    EXPECT_HAS(err, "database is locked", "locked");
    db_exec(db, "ROLLBACK");
    write_ok(st, f);
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM runs"), 1, "runs after the lock");
    store_close(st);
    db_close(db);
    fx_free(f);
}

/* --- schema 3: run_plan, the upgrade of version 2 files ------------------------- */

/* A run with its place in a sweep gets a run_plan row; one without, none. */
static void test_run_plan_rows(void **state)
{
    struct tmpdb *t = *state;
    struct fx *f = fx_new(2, small_nh, 20);
    struct store *st = open_ok(t->path);
    int64_t a = write_ok(st, f);
    f->run.plan = "00000000000000ab";
    f->run.job = 17;
    f->run.sweep = "period=10s";
    int64_t b = write_ok(st, f);
    store_close(st);
    sqlite3 *db = db_open(t->path);
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM run_plan WHERE run_id = %" PRId64, a), 0, "no plan");
    EXPECT_I64(q_i64(db, "SELECT job FROM run_plan WHERE run_id = %" PRId64, b), 17, "job");
    char v[64];
    q_text(db, v, sizeof v, "SELECT plan || ' ' || sweep FROM run_plan WHERE run_id = %" PRId64, b);
    EXPECT_STR(v, "00000000000000ab period=10s", "plan and sweep");
    db_close(db);
    fx_free(f);
}

/* A version 2 file (no run_plan) is upgraded when opened for writing, and
 * keeps its runs. */
static void test_upgrade_from_version_2(void **state)
{
    struct tmpdb *t = *state;
    struct fx *f = fx_new(2, small_nh, 20);
    struct store *st = open_ok(t->path);
    int64_t id = write_ok(st, f);
    store_close(st);
    sqlite3 *db = db_open(t->path);
    db_exec(db, "DROP TABLE run_plan; DROP TABLE crash_points;"
                " UPDATE meta SET value = '2' WHERE key = 'schema_version'");
    db_close(db);
    st = open_ok(t->path);
    f->run.plan = "1";
    write_ok(st, f);
    store_close(st);
    db = db_open(t->path);
    char v[16];
    q_text(db, v, sizeof v, "SELECT value FROM meta WHERE key = 'schema_version'");
    EXPECT_STR(v, "4", "upgraded");
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM runs WHERE run_id = %" PRId64, id), 1, "the old run is kept");
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM run_plan"), 1, "the new run's plan");
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM crash_points"), 0, "crash_points added");
    db_close(db);
    fx_free(f);
}

/* A version 3 file (no crash_points) gets the table when written to. */
static void test_upgrade_from_version_3(void **state)
{
    struct tmpdb *t = *state;
    struct fx *f = fx_new(2, small_nh, 20);
    struct store *st = open_ok(t->path);
    write_ok(st, f);
    store_close(st);
    sqlite3 *db = db_open(t->path);
    db_exec(db, "DROP TABLE crash_points; UPDATE meta SET value = '3' WHERE key = 'schema_version'");
    db_close(db);
    st = open_ok(t->path);
    write_ok(st, f);
    store_close(st);
    db = db_open(t->path);
    char v[16];
    q_text(db, v, sizeof v, "SELECT value FROM meta WHERE key = 'schema_version'");
    EXPECT_STR(v, "4", "upgraded");
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM runs"), 2, "both runs");
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM crash_points"), 0, "crash_points added");
    db_close(db);
    fx_free(f);
}

/* --- the dedicated writer -------------------------------------------------------------- */

static void *memdup(const void *p, size_t n)
{
    if (!p || !n)
        return NULL;
    void *c = xmalloc(n);
    memcpy(c, p, n);
    return c;
}

static void hist_dup(struct hist *h)
{
    h->bucket = memdup(h->bucket, HIST_NBUCKETS * sizeof *h->bucket);
}

/* A deep copy of a result, for the writer to take over and free. */
static struct sim_result result_dup(const struct sim_result *r)
{
    struct sim_result c = *r;
    c.ck.per_tmpl = memdup(r->ck.per_tmpl, r->ck.ntmpl * sizeof *r->ck.per_tmpl);
    for (uint32_t k = 0; k < c.ck.ntmpl; k++) {
        hist_dup(&c.ck.per_tmpl[k].latency);
        hist_dup(&c.ck.per_tmpl[k].lateness);
    }
    hist_dup(&c.ck.total.latency);
    hist_dup(&c.ck.total.lateness);
    c.ck.crashes = memdup(r->ck.crashes, r->ck.ncrashes * sizeof *r->ck.crashes);
    c.trace = memdup(r->trace, r->ntrace * sizeof *r->trace);
    return c;
}

/* Runs handed to the writer land in order, with the rows an inline write
 * makes; the writer takes the result over (and leaves it zeroed). */
static void test_writer_in_order(void **state)
{
    struct tmpdb *t = *state;
    struct fx *f = fx_new(2, small_nh, 50);
    struct store *st = open_ok(t->path);
    int64_t inline_id = write_ok(st, f);
    struct store_writer *w = store_writer_start(st, 2); /* a small queue: put() must wait */
    enum { N = 9 };
    for (int i = 0; i < N; i++) {
        struct sim_result res = result_dup(&f->res);
        struct store_run r = f->run;
        r.res = &res;
        r.trace = trace_spool(&f->res); /* the writer closes it */
        r.seed = 100 + (uint64_t)i;
        r.expects = memdup(f->eo, sizeof f->eo);
        char err[256];
        if (store_writer_put(w, &r, &res, err, sizeof err) != 0)
            fail_msg("store_writer_put: %s", err);
        assert_null(res.ck.per_tmpl);
    }
    char err[256] = "";
    if (store_writer_finish(w, err, sizeof err) != 0)
        fail_msg("store_writer_finish: %s", err);
    store_close(st);
    sqlite3 *db = db_open(t->path);
    for (int i = 0; i < N; i++)
        EXPECT_I64(q_i64(db, "SELECT seed FROM runs WHERE run_id = %" PRId64, inline_id + 1 + i), 100 + i, "order");
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM metrics WHERE run_id = %" PRId64, inline_id + N),
               q_i64(db, "SELECT count(*) FROM metrics WHERE run_id = %" PRId64, inline_id), "same rows");
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM expectations WHERE run_id = %" PRId64, inline_id + N), 3, "expects");
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM trace WHERE run_id = %" PRId64, inline_id + N),
               q_i64(db, "SELECT count(*) FROM trace WHERE run_id = %" PRId64, inline_id), "the same trace");
    db_close(db);
    fx_free(f);
}

/* A failed write stops the writer: later runs are refused (and freed), the
 * error comes back, and the runs before it are whole. */
static void test_writer_failure(void **state)
{
    struct tmpdb *t = *state;
    struct fx *f = fx_new(2, small_nh, 20);
    struct store *st = open_ok(t->path);
    struct store_writer *w = store_writer_start(st, 4);
    char err[256] = "";
    int refused = 0;
    for (int i = 0; i < 6; i++) {
        struct sim_result res = result_dup(&f->res);
        struct store_run r = f->run;
        r.res = &res;
        r.trace = trace_spool(&f->res); /* closed by the writer, also when refused */
        r.seed = i == 2 ? UINT64_MAX : (uint64_t)i; /* too large for the database */
        r.expects = NULL;
        r.nexpects = 0;
        refused += store_writer_put(w, &r, &res, err, sizeof err) != 0;
        if (i == 2)
            usleep(200000); /* let it fail before the next ones */
    }
    assert_true(refused >= 1);
    EXPECT_HAS(err, "too large for the results database", "the error");
    assert_int_equal(store_writer_finish(w, err, sizeof err), -1);
    store_close(st);
    sqlite3 *db = db_open(t->path);
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM runs"), 2, "the runs before the failure");
    db_close(db);
    fx_free(f);
}

/* --- what is stored, and merging ---------------------------------------------------------- */

static void test_run_keys(void **state)
{
    struct tmpdb *t = *state;
    struct fx *f = fx_new(2, small_nh, 20);
    struct store *st = open_ok(t->path);
    f->run.seed = 9;
    write_ok(st, f);
    f->run.seed = 3;
    write_ok(st, f);
    char **keys, versions[64], err[256];
    size_t n;
    assert_int_equal(store_run_keys(st, &keys, &n, versions, sizeof versions, err, sizeof err), 0);
    assert_int_equal(n, 2);
    char want[256];
    store_run_key(f->scn.hash, f->run.policy, f->run.params, 3, want, sizeof want);
    EXPECT_STR(keys[0], want, "sorted: seed 3 first");
    EXPECT_STR(versions, "0.1.0-test", "versions");
    for (size_t i = 0; i < n; i++)
        free(keys[i]);
    free(keys);
    store_close(st);
    fx_free(f);
}

/* Two files with the runs of one plan, interleaved: merged by job index,
 * duplicates skipped; a conflicting fingerprint refused with nothing
 * written. */
static void test_merge(void **state)
{
    struct tmpdb *t = *state;
    struct tmpdb a, b;
    tmpdb_make(&a);
    tmpdb_make(&b);
    struct fx *f = fx_new(2, small_nh, 20);
    f->run.plan = "00000000000000aa";
    struct store *sa = open_ok(a.path), *sb = open_ok(b.path);
    for (int j = 0; j < 6; j++) {
        f->run.job = j;
        f->run.seed = (uint64_t)j;
        write_ok(j % 2 ? sb : sa, f);
    }
    f->run.job = 0; /* b also has job 0: a duplicate */
    f->run.seed = 0;
    write_ok(sb, f);
    store_close(sa);
    store_close(sb);
    const char *in[] = {b.path, a.path};
    size_t added, skipped;
    char err[512] = "";
    if (store_merge(t->path, in, 2, &added, &skipped, err, sizeof err) != 0)
        fail_msg("store_merge: %s", err);
    EXPECT_I64(added, 6, "added");
    EXPECT_I64(skipped, 1, "skipped");
    sqlite3 *db = db_open(t->path);
    for (int j = 0; j < 6; j++)
        EXPECT_I64(q_i64(db, "SELECT seed FROM runs WHERE run_id = %d", j + 1), j, "job order");
    EXPECT_I64(q_i64(db, "SELECT count(*) FROM trace WHERE run_id = 6"), (int64_t)f->res.ntrace, "child rows");
    int64_t before = total_rows(db);
    db_exec(db, "CREATE TEMP TABLE x AS SELECT 1");
    db_close(db);
    /* A different fingerprint for the same run: refused, nothing added. */
    f->res.fingerprint ^= 1;
    sa = open_ok(a.path);
    f->run.seed = 4;
    write_ok(sa, f);
    store_close(sa);
    const char *in2[] = {a.path};
    assert_int_equal(store_merge(t->path, in2, 1, &added, &skipped, err, sizeof err), -1);
    EXPECT_HAS(err, "has fingerprint", "conflict");
    db = db_open(t->path);
    EXPECT_I64(total_rows(db), before, "nothing written");
    db_close(db);
    tmpdb_remove(&a);
    tmpdb_remove(&b);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_write_and_read_back, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(test_trace_only_on_request, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(test_reopen_appends, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(test_wrong_schema_version, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(test_version_1_file, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(test_trace_round_trip, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(test_not_a_database, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(test_foreign_database, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test(test_open_missing_directory),
        cmocka_unit_test_setup_teardown(test_seed_range, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(test_atomic_on_failure, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(test_locked_by_other_writer, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(test_run_plan_rows, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(test_upgrade_from_version_2, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(test_upgrade_from_version_3, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(test_writer_in_order, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(test_writer_failure, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(test_run_keys, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(test_merge, tmpdb_setup, tmpdb_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
