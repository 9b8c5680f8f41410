/* trace.h: reading a stored trace back into typed records, for reports.
 *
 * `--store-trace` writes each record of a run's trace (struct trace_rec,
 * sim/trace.h) as one row of the trace table, one column per field
 * (docs/results.md).  rtrace_load reads them back into the same structs,
 * field by field: the reports work on typed records whether the trace
 * comes from the database or from simulating the run again, and never
 * parse trace text.
 *
 * Ownership: rtrace_load fills a struct rtrace that rtrace_free releases. */
#ifndef REPORTS_TRACE_H
#define REPORTS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "reports/rdb.h"
#include "sim/trace.h"

struct rtrace {
    struct trace_rec *recs;        /* in trace order (seq) */
    size_t n;                      /* 0: the run has no stored trace */
    int64_t end_us;                /* the run's end (runs.end_us) */
};

/* Reads the stored trace of run run_id of r.  A database of schema
 * version 1 kept its trace as text: it reads as no trace (n = 0).  Returns
 * 0, or -1 with err (a database error, or a row this simrun cannot read:
 * an unknown kind or name, from a newer simrun). */
int rtrace_load(const struct rdb *r, int64_t run_id, struct rtrace *out, char *err, size_t n);
void rtrace_free(struct rtrace *t);

#endif
