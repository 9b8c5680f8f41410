/* trace.c: stored traces back into typed records (see trace.h).
 *
 * The columns are those store.c writes (schema version 2, docs/results.md);
 * a NULL column leaves the field at trace_rec_init's "none".  Names
 * (kind, reason, phase, outcome, fail, cause, target) are mapped back
 * through the same name functions that wrote them. */
#include "reports/trace.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "sim/util.h"

/* The oldest schema version whose trace table has typed columns. */
#define RTRACE_VERSION 2

enum col {
    C_T, C_KIND, C_HANDLER, C_RUN, C_REASON, C_TAKEN, C_DUE, C_WAKE, C_RESUME, C_PHASE, C_OUTCOME, C_FAIL,
    C_ITEM, C_KEY, C_CAUSE, C_TOPIC, C_RESULT, C_OK, C_TARGET, C_TARGET_INDEX, C_WORKFLOW, C_TAG, C_ARG,
    C_TICKER, C_COUNT, C_NOTE
};

static const char select_sql[] =
    "SELECT t_us, kind, handler, run, reason, taken, due_us, wake_us, resume, phase, outcome, fail, item, key,"
    " cause, topic, result, ok, target, target_index, workflow, tag, arg, ticker, count, note"
    " FROM trace WHERE run_id = ?1 ORDER BY seq";

/* The vocabularies a row names, each with its printable names in order. */
enum vocab { V_REASON, V_PHASE, V_OUTCOME, V_FAIL, V_CAUSE, V_TARGET };

static const char *vocab_name(enum vocab v, int k)
{
    switch (v) {
    case V_REASON: return k < REASON_COUNT ? run_reason_name((enum run_reason)k) : NULL;
    case V_PHASE: return k <= PHASE_COMMITTED ? run_phase_name((enum run_phase)k) : NULL;
    case V_OUTCOME: return k <= OUT_CUTOFF ? run_outcome_name((enum run_outcome)k) : NULL;
    case V_FAIL: return k < FAIL_NCLASS ? fail_class_name((enum fail_class)k) : NULL;
    case V_CAUSE: return k <= DROP_CRASH ? drop_cause_name((enum drop_cause)k) : NULL;
    case V_TARGET: return k <= CRASH_STOP ? crash_target_name((enum crash_target)k) : NULL;
    }
    return NULL;
}

static int is_null(sqlite3_stmt *q, enum col c) { return sqlite3_column_type(q, c) == SQLITE_NULL; }
static int64_t i64(sqlite3_stmt *q, enum col c) { return sqlite3_column_int64(q, c); }
static const char *text(sqlite3_stmt *q, enum col c) { return (const char *)sqlite3_column_text(q, c); }

/* The value of a named column into *out (left alone when NULL).  -1 for a
 * name that is not in the vocabulary (bad gets what it was). */
static int named(sqlite3_stmt *q, enum col c, enum vocab v, uint8_t *out, char *bad, size_t nb)
{
    if (is_null(q, c))
        return 0;
    const char *s = text(q, c);
    for (int k = 0; vocab_name(v, k); k++) {
        if (!strcmp(vocab_name(v, k), s)) {
            *out = (uint8_t)k;
            return 0;
        }
    }
    snprintf(bad, nb, "'%s' in column %s", s, sqlite3_column_name(q, c));
    return -1;
}

/* The typed fields of a record that is not a note. */
static int read_fields(sqlite3_stmt *q, struct trace_rec *r, char *bad, size_t nb)
{
    if (!is_null(q, C_DUE))
        r->due_us = i64(q, C_DUE);
    if (!is_null(q, C_WAKE))
        r->wake_us = i64(q, C_WAKE);
    /* NULL reads as 0, the "none" of every other field. */
    r->taken = (uint32_t)i64(q, C_TAKEN);
    r->resume = (uint8_t)i64(q, C_RESUME);
    r->item = (uint64_t)i64(q, C_ITEM);
    r->key = (uint32_t)i64(q, C_KEY);
    r->topic = (uint32_t)i64(q, C_TOPIC);
    r->result = (uint64_t)i64(q, C_RESULT);
    r->ok = (uint8_t)i64(q, C_OK);
    r->target_index = (uint32_t)i64(q, C_TARGET_INDEX);
    r->workflow = (uint32_t)i64(q, C_WORKFLOW);
    r->tag = (uint32_t)i64(q, C_TAG);
    r->arg = (uint64_t)i64(q, C_ARG);
    r->ticker = (uint32_t)i64(q, C_TICKER);
    r->count = (uint64_t)i64(q, C_COUNT);
    if (named(q, C_REASON, V_REASON, &r->reason, bad, nb) || named(q, C_PHASE, V_PHASE, &r->phase, bad, nb) ||
        named(q, C_OUTCOME, V_OUTCOME, &r->outcome, bad, nb) || named(q, C_FAIL, V_FAIL, &r->fail, bad, nb) ||
        named(q, C_CAUSE, V_CAUSE, &r->cause, bad, nb) || named(q, C_TARGET, V_TARGET, &r->target, bad, nb))
        return -1;
    return 0;
}

static int read_row(sqlite3_stmt *q, struct trace_rec *r, char *bad, size_t nb)
{
    const char *kind = text(q, C_KIND);
    int k = kind ? fact_kind_parse(kind) : -1;
    if (k < 0) {
        snprintf(bad, nb, "kind '%s'", kind ? kind : "NULL");
        return -1;
    }
    int32_t h = is_null(q, C_HANDLER) ? -1 : (int32_t)i64(q, C_HANDLER);
    uint64_t run = is_null(q, C_RUN) ? 0 : (uint64_t)i64(q, C_RUN);
    trace_rec_init(r, (enum fact_kind)k, i64(q, C_T), h, run);
    if (k == FACT_NOTE) {
        const char *note = text(q, C_NOTE);
        if (note) /* a full buffer has no NUL, as it was written */
            memcpy(r->note, note, strnlen(note, sizeof r->note));
        return 0;
    }
    return read_fields(q, r, bad, nb);
}

static int run_end(const struct rdb *r, int64_t run_id, int64_t *end_us, char *err, size_t n)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(r->db, "SELECT end_us FROM runs WHERE run_id = ?1", -1, &q, NULL) != SQLITE_OK) {
        snprintf(err, n, "cannot read run %" PRId64 " from '%s': %s", run_id, r->path, sqlite3_errmsg(r->db));
        return -1;
    }
    sqlite3_bind_int64(q, 1, run_id);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW)
        *end_us = sqlite3_column_int64(q, 0);
    else
        snprintf(err, n, "cannot read run %" PRId64 " from '%s': %s", run_id, r->path,
                 rc == SQLITE_DONE ? "no such run" : sqlite3_errmsg(r->db));
    sqlite3_finalize(q);
    return rc == SQLITE_ROW ? 0 : -1;
}

int rtrace_load(const struct rdb *r, int64_t run_id, struct rtrace *out, char *err, size_t n)
{
    *out = (struct rtrace){0};
    if (run_end(r, run_id, &out->end_us, err, n) != 0)
        return -1;
    if (r->version < RTRACE_VERSION)
        return 0;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(r->db, select_sql, -1, &q, NULL) != SQLITE_OK) {
        snprintf(err, n, "cannot read the trace from '%s': %s", r->path, sqlite3_errmsg(r->db));
        return -1;
    }
    sqlite3_bind_int64(q, 1, run_id);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        out->recs = xgrow(out->recs, sizeof *out->recs, &cap, out->n + 1);
        char bad[128];
        if (read_row(q, &out->recs[out->n], bad, sizeof bad) != 0) {
            snprintf(err, n, "cannot read the trace of run %" PRId64 " from '%s': record %zu has %s (written by a "
                             "newer simrun?)",
                     run_id, r->path, out->n, bad);
            sqlite3_finalize(q);
            rtrace_free(out);
            return -1;
        }
        out->n++;
    }
    if (rc != SQLITE_DONE) {
        snprintf(err, n, "cannot read the trace from '%s': %s", r->path, sqlite3_errmsg(r->db));
        sqlite3_finalize(q);
        rtrace_free(out);
        return -1;
    }
    sqlite3_finalize(q);
    return 0;
}

void rtrace_free(struct rtrace *t)
{
    free(t->recs);
    *t = (struct rtrace){0};
}
