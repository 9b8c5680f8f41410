/* sim_fact.c: the fact layer of the engine (sim_int.h).
 *
 * Cost: with no trace wanted, a fact is its checker call and a fold of
 * four words; `tracing` is tested once per fact.  With a trace, each fact
 * also fills one record, formats it (--trace) and/or hands it to the
 * caller's sink (sim_opts.trace_rec), which stores or spools it, and/or
 * appends it to the result (keep_trace: a short run's trace read whole,
 * whose growth the memory budget counts). */
#include "sim/sim_int.h"

#include <string.h>

#include "sim/util.h"

/* The second fold word of a run start. */
#define FOLD_RUN_START_WORK 11

/* --- the fingerprint ---------------------------------------------------------- */

/* fact__fold (sim_int.h) folds a fact into the fingerprint. */
#define fold fact__fold

/* --- the trace ------------------------------------------------------------------ */

static void rec_start(const struct facts *f, struct trace_rec *r, enum fact_kind k, int64_t handler, uint64_t run)
{
    trace_rec_init(r, k, *f->now, (int32_t)handler, run);
}

/* Writes a filled record: one line of text, the record to the caller's
 * sink, and/or one kept record, and shows it to the watcher. */
static void emit(struct facts *f, const struct trace_rec *r)
{
    if (f->watch)
        f->watch(f->watch_ctx, r);
    if (f->out) {
        char line[512];
        trace_format_line(r, f->w, f->label, line, sizeof line);
        fputs(line, f->out);
        fputc('\n', f->out);
    }
    if (f->rec)
        f->rec(f->rec_ctx, r);
    if (f->keep) {
        struct sim_result *res = f->res;
        /* The capacity is 64, then doubles: it is full exactly when ntrace
         * is 64 or a larger power of two. */
        if (res->ntrace == 0 || (res->ntrace >= 64 && (res->ntrace & (res->ntrace - 1)) == 0)) {
            size_t cap = res->ntrace ? res->ntrace * 2 : 64;
            res->trace = xrealloc(res->trace, cap * sizeof *res->trace);
        }
        res->trace[res->ntrace++] = *r;
    }
}

/* --- opening and closing ---------------------------------------------------------- */

void facts_open(struct facts *f, const struct world *w, enum promise promise, const int64_t *now,
                const struct sim_opts *o, struct sim_result *res)
{
    *f = (struct facts){.ck = checker_new(w, promise), .fp = SIM_FNV_INIT, .now = now, .w = w, .out = o->trace,
                        .label = o->label, .rec = o->trace_rec, .rec_ctx = o->trace_ctx, .res = res,
                        .keep = o->keep_trace};
    f->tracing = f->out != NULL || f->rec != NULL || f->keep;
}

void facts_close(struct facts *f, int64_t end_us, struct sim_result *res)
{
    res->fingerprint = f->fp;
    checker_finish(f->ck, end_us, &res->ck);
    checker_free(f->ck);
    f->ck = NULL;
}

/* --- the facts -------------------------------------------------------------------- */

uint32_t fact_publish(struct facts *f, uint64_t item, uint32_t consumer, int64_t origin_us, uint32_t key)
{
    uint32_t ck_slot = checker_publish(f->ck, item, consumer, origin_us, *f->now);
    fold(f, FACT_PUBLISH, item, consumer);
    if (f->tracing) {
        struct trace_rec r;
        rec_start(f, &r, FACT_PUBLISH, consumer, 0);
        r.item = item;
        r.key = key;
        emit(f, &r);
    }
    return ck_slot;
}

void fact_drop(struct facts *f, uint64_t item, uint32_t consumer, enum drop_cause cause)
{
    checker_drop(f->ck, item, cause, *f->now);
    fold(f, FACT_DROP, item, (uint64_t)cause);
    if (f->tracing) {
        struct trace_rec r;
        rec_start(f, &r, FACT_DROP, consumer, 0);
        r.item = item;
        r.cause = (uint8_t)cause;
        emit(f, &r);
    }
}

void fact_orphan(struct facts *f, uint32_t topic, uint32_t key)
{
    fold(f, FACT_ORPHAN, topic, 0);
    if (f->tracing) {
        struct trace_rec r;
        rec_start(f, &r, FACT_ORPHAN, -1, 0);
        r.topic = topic;
        r.key = key;
        emit(f, &r);
    }
}

void fact_run_start(struct facts *f, const struct fact_start *s)
{
    checker_run_start_at(f->ck, s->ck, s->run, s->handler, s->reason, s->due_us, s->taken, s->ntaken, *f->now);
    fold(f, FACT_RUN_START, s->run, s->handler);
    fold(f, FOLD_RUN_START_WORK, s->ntaken, (uint64_t)s->due_us);
    if (f->tracing) {
        struct trace_rec r;
        rec_start(f, &r, FACT_RUN_START, s->handler, s->run);
        r.reason = (uint8_t)s->reason;
        r.taken = s->ntaken;
        r.due_us = s->due_us;
        r.wake_us = s->wake_us;
        r.resume = s->resume_of != 0;
        emit(f, &r);
    }
    if (s->wake_us != SIM_NEVER)
        checker_wake_request(f->ck, s->handler, s->wake_us, *f->now);
}

void fact_phase(struct facts *f, uint64_t run, uint32_t handler, enum run_phase phase)
{
    if (f->tracing) {
        struct trace_rec r;
        rec_start(f, &r, FACT_PHASE, handler, run);
        r.phase = (uint8_t)phase;
        emit(f, &r);
    }
}

void fact_mutation(struct facts *f, uint64_t run, uint32_t handler, struct checker_run *ck)
{
    checker_mutated_at(f->ck, ck, *f->now);
    fold(f, FACT_MUTATION, run, 0);
    if (f->tracing) {
        struct trace_rec r;
        rec_start(f, &r, FACT_MUTATION, handler, run);
        emit(f, &r);
    }
}

void fact_run_end(struct facts *f, uint64_t run, uint32_t handler, enum run_outcome out, enum run_phase phase,
                  enum fail_class fail, struct checker_run *ck)
{
    checker_run_end_at(f->ck, ck, out, *f->now);
    fold(f, FACT_RUN_END, run, (uint64_t)out);
    if (f->tracing) {
        struct trace_rec r;
        rec_start(f, &r, FACT_RUN_END, handler, run);
        r.outcome = (uint8_t)out;
        r.phase = (uint8_t)phase;
        r.fail = (uint8_t)fail;
        emit(f, &r);
    }
}

void fact_delivery(struct facts *f, uint32_t handler, uint64_t result, int ok)
{
    checker_delivery(f->ck, handler, result, ok, *f->now);
    fold(f, FACT_DELIVERY, result, (uint64_t)ok);
    if (f->tracing) {
        struct trace_rec r;
        rec_start(f, &r, FACT_DELIVERY, handler, 0);
        r.result = result;
        r.ok = ok != 0;
        emit(f, &r);
    }
}

static void crash_or_restart(struct facts *f, enum fact_kind k, enum crash_target target, uint32_t index)
{
    fold(f, k, (uint64_t)target, index);
    if (f->tracing) {
        struct trace_rec r;
        rec_start(f, &r, k, -1, 0);
        r.target = (uint8_t)target;
        r.target_index = index;
        emit(f, &r);
    }
}

void fact_crash(struct facts *f, enum crash_target target, uint32_t index)
{
    checker_crash(f->ck, (int)target, index, *f->now);
    crash_or_restart(f, FACT_CRASH, target, index);
}

void fact_restart(struct facts *f, enum crash_target target, uint32_t index)
{
    checker_restart(f->ck, (int)target, index, *f->now);
    crash_or_restart(f, FACT_RESTART, target, index);
}

void fact__trace_timer(struct facts *f, uint32_t tag, uint64_t arg)
{
    struct trace_rec r;
    rec_start(f, &r, FACT_TIMER, -1, 0);
    r.tag = tag;
    r.arg = arg;
    emit(f, &r);
}

void fact__trace_tick(struct facts *f, uint32_t ticker)
{
    struct trace_rec r;
    rec_start(f, &r, FACT_TICK, -1, 0);
    r.ticker = ticker;
    emit(f, &r);
}

void fact_wakeups(struct facts *f, uint32_t ticker, uint64_t n)
{
    if (n == 0)
        return;
    checker_wakeups(f->ck, n);
    if (f->tracing) {
        struct trace_rec r;
        rec_start(f, &r, FACT_WAKEUPS, -1, 0);
        r.ticker = ticker;
        r.count = n;
        emit(f, &r);
    }
}

void fact_trigger(struct facts *f, uint32_t workflow)
{
    fold(f, FACT_TRIGGER, workflow, 0);
    if (f->tracing) {
        struct trace_rec r;
        rec_start(f, &r, FACT_TRIGGER, -1, 0);
        r.workflow = workflow;
        emit(f, &r);
    }
}

void fact_horizon(struct facts *f)
{
    if (f->tracing) {
        struct trace_rec r;
        rec_start(f, &r, FACT_HORIZON, -1, 0);
        emit(f, &r);
    }
}

void fact_stop(struct facts *f, uint64_t cut_off)
{
    if (f->tracing) {
        struct trace_rec r;
        rec_start(f, &r, FACT_STOP, -1, 0);
        r.count = cut_off;
        emit(f, &r);
    }
}

void fact_durable(struct facts *f, uint64_t row, uint8_t status)
{
    if (f->tracing) {
        struct trace_rec r;
        rec_start(f, &r, FACT_DURABLE, -1, 0);
        r.arg = row;
        r.tag = status;
        emit(f, &r);
    }
}

void fact_note(struct facts *f, int64_t handler, const char *fmt, va_list ap)
{
    if (f->tracing) {
        struct trace_rec r;
        rec_start(f, &r, FACT_NOTE, handler, 0);
        vsnprintf(r.note, sizeof r.note, fmt, ap);
        emit(f, &r);
    }
}

void fact_item_retired(struct facts *f, uint64_t item)
{
    checker_item_retire(f->ck, item, *f->now);
}
