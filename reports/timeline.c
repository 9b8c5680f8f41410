/* timeline.c: what happened in one run of each policy (see report_int.h): a
 * timeline of runs per handler, a close-up of the first crash, and the
 * backlog of items over time.
 *
 * They need the trace of that run: from the database's trace table when it
 * was stored (--store-trace), else from simulating the run again from its
 * scenario file (tl_load).  The trace becomes a struct timeline: runs with
 * how each ended, publishes, and the windows when a host or worker was
 * down; the charts draw only from it.
 *
 * Limits: a timeline shows at most RPT_MAX_ROWS handlers (instance 0 of
 * each workflow, in scenario order); a backlog curve has at most
 * RPT_BACKLOG_BINS points (the highest backlog in each interval). */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "reports/fmt.h"
#include "reports/report_int.h"
#include "reports/trace.h"
#include "sim/policy.h"
#include "sim/scenario.h"
#include "sim/sim.h"
#include "sim/cal.h"
#include "sim/util.h"

enum { TL_OK, TL_EMPTY, TL_FAILED, TL_CRASHED, TL_NKIND };
static const char *const tl_kind_title[TL_NKIND] = {"run that committed work", "run with nothing to do",
                                                    "run that failed", "run crashed or cut off"};
static const char *const tl_kind_colour[TL_NKIND] = {"#2ca02c", "#9ecae1", "#ff7f0e", "#d62728"};

struct tl_run {
    int64_t start_us, end_us;      /* end_us < 0: still active */
    int64_t handler;
    uint32_t taken;
    int empty_hint;                /* started with taken=0 and no due instant */
    int kind;                      /* TL_*, once ended */
};

struct tl_down {
    int64_t from_us, to_us;
    char what[32];                 /* "host 0", "worker 1" */
};

/* The facts of one run's trace that the charts draw. */
struct timeline {
    struct tl_run *runs;           /* by run id - 1 */
    size_t nruns, cap_runs;
    int64_t *pub_t;
    int64_t *pub_h;
    size_t npub, cap_pub;
    struct tl_down *down;
    size_t ndown, cap_down;
    int64_t end_us;
};

/* The name the trace readers below use for rpt_fail. */
static int fail(struct rpt *R, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct rpt *R, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rpt_vfail(R, code, fmt, ap);
    va_end(ap);
    return -1;
}

/* --- the trace of one run ------------------------------------------------------------------ */

/* One trace record into the timeline: its typed fields, never its text. */
static void tl_feed(struct timeline *t, const struct trace_rec *tr)
{
    uint64_t run = tr->run;
    int64_t t_us = tr->t_us, handler = tr->handler;
    if (tr->kind == FACT_RUN_START && run > 0) {
        if (run > t->nruns) {
            t->runs = xgrow(t->runs, sizeof *t->runs, &t->cap_runs, (size_t)run);
            for (size_t i = t->nruns; i < run; i++)
                t->runs[i] = (struct tl_run){.start_us = -1, .end_us = -1, .handler = -1};
            t->nruns = (size_t)run;
        }
        struct tl_run *r = &t->runs[run - 1];
        r->start_us = t_us;
        r->end_us = -1;
        r->handler = handler;
        r->taken = tr->taken;
        r->empty_hint = r->taken == 0 && tr->due_us < 0;
    } else if (tr->kind == FACT_RUN_END && run > 0 && run <= t->nruns) {
        struct tl_run *r = &t->runs[run - 1];
        r->end_us = t_us;
        r->kind = tr->outcome == OUT_COMMITTED ? TL_OK : tr->outcome == OUT_FAILED ? TL_FAILED : TL_CRASHED;
    } else if (tr->kind == FACT_PUBLISH && handler >= 0) {
        if (t->npub == t->cap_pub) {
            size_t cap = t->cap_pub;
            t->pub_t = xgrow(t->pub_t, sizeof *t->pub_t, &cap, t->npub + 1);
            t->pub_h = xrealloc(t->pub_h, cap * sizeof *t->pub_h);
            t->cap_pub = cap;
        }
        t->pub_t[t->npub] = t_us;
        t->pub_h[t->npub++] = handler;
    } else if (tr->kind == FACT_CRASH || tr->kind == FACT_RESTART) {
        char what[sizeof t->down->what]; /* "host 0", "worker 1": what went down */
        snprintf(what, sizeof what, "%s %" PRIu32, crash_target_name((enum crash_target)tr->target),
                 tr->target_index);
        if (tr->kind == FACT_CRASH) {
            t->down = xgrow(t->down, sizeof *t->down, &t->cap_down, t->ndown + 1);
            struct tl_down *w = &t->down[t->ndown++];
            w->from_us = t_us;
            w->to_us = -1;
            memcpy(w->what, what, sizeof what);
            return;
        }
        for (size_t i = t->ndown; i-- > 0;)
            if (t->down[i].to_us < 0 && !strcmp(t->down[i].what, what)) {
                t->down[i].to_us = t_us;
                break;
            }
    }
}

static void tl_finish(struct timeline *t, int64_t end_us)
{
    t->end_us = end_us;
    for (size_t i = 0; i < t->nruns; i++)
        if (t->runs[i].start_us >= 0 && t->runs[i].end_us < 0) {
            t->runs[i].end_us = end_us;
            t->runs[i].kind = TL_CRASHED;
        }
    for (size_t i = 0; i < t->ndown; i++)
        if (t->down[i].to_us < 0)
            t->down[i].to_us = end_us;
}

static void tl_free(struct timeline *t)
{
    free(t->runs);
    free(t->pub_t);
    free(t->pub_h);
    free(t->down);
    *t = (struct timeline){0};
}

/* The engine's sink of trace records, when the run is simulated again. */
static void feed_rec(void *ctx, const struct trace_rec *r)
{
    tl_feed(ctx, r);
}

/* The trace of the group's run with this seed: from the database when it
 * was stored, else by simulating it again.  Returns 0, or -1 with note (the
 * page says why there is no timeline).  warn gets a remark to show with the
 * timeline (a re-simulation that differs from the stored run). */
static int tl_load(struct rpt *R, const struct section *S, const struct rdb_group *g, const struct rdb_run *run,
                   struct timeline *t, char *note, size_t nn, char *warn, size_t nw)
{
    *t = (struct timeline){0};
    warn[0] = 0;
    struct rtrace stored;
    char err[512];
    if (rtrace_load(R->r, run->run_id, &stored, err, sizeof err) != 0) {
        fail(R, 2, "%s", err);
        return -1;
    }
    if (stored.n) {
        for (size_t i = 0; i < stored.n; i++)
            tl_feed(t, &stored.recs[i]);
        tl_finish(t, stored.end_us);
        rtrace_free(&stored);
        return 0;
    }
    rtrace_free(&stored);
    /* Not stored (or stored as text, by schema version 1): simulate the
     * run again. */
    if (!S->scn) {
        snprintf(note, nn, "the database has no trace of this run that this simrun reads (run with --store-trace "
                           "to keep it) and %s",
                 S->scn_note);
        return -1;
    }
    const struct policy_ops *ops = policy_find(g->base_policy);
    if (!ops) {
        snprintf(note, nn, "the database has no trace of this run, and policy '%s' is not in this simrun", g->base_policy);
        return -1;
    }
    struct params ps;
    char msg[256] = "";
    params_init(&ps, ops);
    char *pbuf = xstrdup(g->params);
    for (char *save = NULL, *kv = strtok_r(pbuf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq || (*eq = 0, params_set(&ps, kv, eq + 1, msg, sizeof msg) != 0)) {
            snprintf(note, nn, "the database has no trace of this run, and its parameters '%s' do not apply to "
                               "this simrun's %s: %s",
                     g->params, g->base_policy, msg);
            free(pbuf);
            return -1;
        }
    }
    free(pbuf);
    struct sim_opts so = {.seed = run->seed, .trace_rec = feed_rec, .trace_ctx = t, .label = g->policy};
    struct sim_result res;
    sim_run(S->scn, ops, &ps, &so, &res);
    tl_finish(t, res.end_us);
    char fp[17];
    snprintf(fp, sizeof fp, "%016" PRIx64, res.fingerprint);
    if (strcmp(fp, run->fingerprint))
        snprintf(warn, nw, "Simulated again for this chart, and the result differs from the stored run (fingerprint "
                           "%s, stored %s): the policy or simrun changed since the database was written.",
                 fp, run->fingerprint);
    sim_result_free(&res);
    return 0;
}

/* --- timelines --------------------------------------------------------------------------- */

/* Hours for runs up to four days, days beyond. */
static void time_unit(int64_t span_us, double *div, const char **unit)
{
    if (span_us <= 4 * US_PER_DAY) {
        *div = (double)US_PER_H;
        *unit = "hours";
    } else {
        *div = (double)US_PER_DAY;
        *unit = "days";
    }
}

/* The handler instance ids a timeline shows, with their names: instance 0
 * of each workflow, in scenario order; without the scenario file, the
 * first ids.  Returns how many (at most RPT_MAX_ROWS); is_consumer may be
 * -1 (unknown). */
static int tl_rows(const struct section *S, const struct timeline *t, int64_t *ids, char names[][80],
                   int *is_consumer, int *hidden)
{
    int n = 0;
    *hidden = 0;
    if (S->scn) {
        int64_t base = 0;
        for (uint16_t f = 0; f < S->scn->nwfs; f++) {
            const struct workflow_def *wf = &S->scn->wfs[f];
            for (uint16_t h = 0; h < wf->nhandlers; h++) {
                if (n == RPT_MAX_ROWS) {
                    (*hidden)++;
                    continue;
                }
                ids[n] = base + h;
                is_consumer[n] = wf->handlers[h].kind == H_CONSUMER;
                if (wf->count > 1)
                    snprintf(names[n], 80, "%s[0].%s", wf->name, wf->handlers[h].name);
                else
                    snprintf(names[n], 80, "%s.%s", wf->name, wf->handlers[h].name);
                n++;
            }
            base += (int64_t)wf->count * wf->nhandlers;
        }
        return n;
    }
    int64_t maxh = -1;
    for (size_t i = 0; i < t->nruns; i++)
        if (t->runs[i].handler > maxh)
            maxh = t->runs[i].handler;
    for (int64_t h = 0; h <= maxh; h++) {
        if (n == RPT_MAX_ROWS) {
            (*hidden)++;
            continue;
        }
        ids[n] = h;
        is_consumer[n] = -1;
        snprintf(names[n], 80, "handler %" PRId64, h);
        n++;
    }
    return n;
}

static int row_of(const int64_t *ids, int n, int64_t h)
{
    for (int i = 0; i < n; i++)
        if (ids[i] == h)
            return i;
    return -1;
}

/* Tics for a time axis from from_us to to_us (x = time / div), about eight
 * of them.  With the scenario (its start and zone), on the scenario's local
 * clock: at whole local minutes, hours or days, labelled "09:30", or "Fri
 * 09:30" when the axis spans more than a day; without it, as simrun writes
 * instants since the start ("08:30", "1d08:30"). */
static void clock_tics(FILE *f, const struct scenario *scn, int64_t from_us, int64_t to_us, double div)
{
    static const int64_t steps_min[] = {1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2880, 10080};
    static const char *const wday[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    int64_t span = to_us - from_us, step = steps_min[0] * US_PER_MIN;
    for (size_t i = 0; i < sizeof steps_min / sizeof steps_min[0]; i++) {
        step = steps_min[i] * US_PER_MIN;
        if (span / step <= 8)
            break;
    }
    /* Tics at multiples of the step on the local clock: shift by the UTC
     * offset at the axis' start; a tic past a change of the offset (DST)
     * that the step does not absorb moves by the change, so that a daily
     * tic stays at local midnight. */
    int64_t shift_us = 0;
    int32_t off0 = 0;
    if (scn) {
        struct cal_tm tm;
        cal_local(scn->zone, scn->start_utc_s + from_us / US_PER_S, &tm);
        off0 = tm.utcoff_s;
        shift_us = ((scn->start_utc_s % 86400) + tm.utcoff_s) * US_PER_S;
    }
    static const char *const month[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    fprintf(f, "set xtics (");
    int first = 1;
    int64_t t0 = from_us + shift_us;
    t0 = (t0 >= 0 ? (t0 + step - 1) / step : t0 / step) * step - shift_us;
    for (int64_t t0k = t0; t0k <= to_us; t0k += step) {
        char lab[32];
        int64_t t = t0k;
        if (scn) {
            struct cal_tm tm;
            cal_local(scn->zone, scn->start_utc_s + t / US_PER_S, &tm);
            int64_t delta_us = ((int64_t)tm.utcoff_s - off0) * US_PER_S;
            if (delta_us % step != 0) {
                struct cal_tm tm2;
                cal_local(scn->zone, scn->start_utc_s + (t - delta_us) / US_PER_S, &tm2);
                if (tm2.utcoff_s == tm.utcoff_s && t - delta_us >= from_us && t - delta_us <= to_us) {
                    t -= delta_us;
                    tm = tm2;
                }
            }
            if (step >= US_PER_DAY)
                snprintf(lab, sizeof lab, "%s %d %s", wday[tm.wday], tm.mday, month[(tm.mon - 1) % 12]);
            else if (span > US_PER_DAY)
                snprintf(lab, sizeof lab, "%s %02d:%02d", wday[tm.wday], tm.hour, tm.min);
            else
                snprintf(lab, sizeof lab, "%02d:%02d", tm.hour, tm.min);
        } else {
            int64_t d = t / US_PER_DAY, hh = t % US_PER_DAY / US_PER_H, mm = t % US_PER_H / US_PER_MIN;
            if (d)
                snprintf(lab, sizeof lab, "%" PRId64 "d%02" PRId64 ":%02" PRId64, d, hh, mm);
            else
                snprintf(lab, sizeof lab, "%02" PRId64 ":%02" PRId64, hh, mm);
        }
        fprintf(f, "%s'%s' %.9g", first ? "" : ", ", lab, (double)t / div);
        first = 0;
    }
    fprintf(f, ")\n");
}

/* The label of a time axis: the scenario's local clock, with its zone and
 * the local date of the scenario's start; without the scenario, time since
 * the start. */
static void clock_label(FILE *f, const struct scenario *scn)
{
    if (!scn) {
        fprintf(f, "set xlabel 'time since the scenario start ([N days]d hh:mm)'\n");
        return;
    }
    static const char *const wday[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    struct cal_tm tm;
    cal_local(scn->zone, scn->start_utc_s, &tm);
    char lab[256];
    snprintf(lab, sizeof lab, "local time (%s); the scenario starts %s %04d-%02d-%02d %02d:%02d",
             cal_zone_name(scn->zone), wday[tm.wday], tm.year, tm.mon, tm.mday, tm.hour, tm.min);
    fprintf(f, "set xlabel ");
    rpt_gp_text(f, lab);
    fprintf(f, "\n");
}

#define TL_MAX_LANES 4             /* sub-lanes of a handler's row: runs active at once */
#define TL_SLOTS (TL_NKIND * RPT_MAX_ROWS * TL_MAX_LANES)

/* What one timeline chart shows: its rows (handlers), its window and its
 * time axis. */
struct tl_view {
    const struct rdb_group *g;
    char stem[300], dname[400];
    int64_t ids[RPT_MAX_ROWS];
    char names[RPT_MAX_ROWS][80];
    int cons[RPT_MAX_ROWS];        /* is_consumer of tl_rows */
    int lanes[RPT_MAX_ROWS];       /* sub-lanes of each row: the most runs of it active at once (capped) */
    int nrows, hidden, crowded;    /* crowded: a row had more runs at once than TL_MAX_LANES */
    int64_t from_us, to_us;
    int zoom;                      /* the close-up of a crash */
    double div, x0, x1, minw;      /* x = time / div; minw: the narrowest bar drawn (about a pixel) */
    double gap;                    /* runs (ticks) closer than this merge: about three pixels */
    const char *unit;
    size_t count[TL_NKIND + 1];    /* bars of each kind drawn, then publish ticks */
    size_t runs_in;                /* runs in the window */
};

/* A bar being drawn: runs of one kind in one sub-lane merged while they
 * are closer than v->gap (a few pixels), so that a timeline of a million
 * runs stays a few thousand bars. */
struct tl_bar {
    double a, b;                   /* x of its start and end */
    int open;
};

/* The sub-lane of each run of the shown rows (-1 for the others): the
 * first lane free at its start, runs in start order (run ids); lane counts
 * per row in v->lanes. */
static int *tl_lanes(const struct timeline *t, struct tl_view *v)
{
    int *lane = xmalloc((t->nruns + 1) * sizeof *lane);
    int64_t end[RPT_MAX_ROWS][TL_MAX_LANES];
    for (int r = 0; r < RPT_MAX_ROWS; r++) {
        v->lanes[r] = 1;
        for (int l = 0; l < TL_MAX_LANES; l++)
            end[r][l] = INT64_MIN;
    }
    for (size_t i = 0; i < t->nruns; i++) {
        const struct tl_run *r = &t->runs[i];
        int row = r->start_us < 0 ? -1 : row_of(v->ids, v->nrows, r->handler);
        lane[i] = -1;
        if (row < 0)
            continue;
        int l = 0;
        while (l < TL_MAX_LANES && end[row][l] > r->start_us)
            l++;
        if (l == TL_MAX_LANES) {
            v->crowded = 1;
            l = TL_MAX_LANES - 1;
        }
        if (end[row][l] < r->end_us)
            end[row][l] = r->end_us;
        lane[i] = l;
        if (l + 1 > v->lanes[row])
            v->lanes[row] = l + 1;
    }
    return lane;
}

/* The y of a sub-lane and the half-height of its bars. */
static void lane_y(const struct tl_view *v, int row, int lane, double *y, double *half)
{
    int nl = v->lanes[row];
    *half = nl == 1 ? 0.22 : 0.3 / nl;
    *y = nl == 1 ? row : row - 0.3 + (0.6 / nl) * (lane + 0.5);
}

static void bar_flush(FILE *d, const struct tl_view *v, struct tl_bar *bar, int row, int lane, size_t *count)
{
    if (!bar->open)
        return;
    double y, half;
    lane_y(v, row, lane, &y, &half);
    double b = bar->b - bar->a < v->minw ? bar->a + v->minw : bar->b;
    fprintf(d, "%.9g %.9g %.6g %.6g %.6g\n", bar->a, b, y, y - half, y + half);
    (*count)++;
    bar->open = 0;
}

/* The kind a run is drawn as: an empty consumer run apart from one that did
 * work. */
static int tl_kind(const struct tl_run *r, const struct tl_view *v, int row)
{
    if (r->kind == TL_OK && r->taken == 0 && (v->cons[row] == 1 || (v->cons[row] < 0 && r->empty_hint)))
        return TL_EMPTY;
    return r->kind;
}

/* One block of bars of the data file: the runs of kind k in the window,
 * merged per sub-lane (start_x end_x y y_low y_high). */
static void tl_block(FILE *d, const struct timeline *t, struct tl_view *v, const int *lane, int k)
{
    struct tl_bar *bars = xcalloc((size_t)RPT_MAX_ROWS * TL_MAX_LANES, sizeof *bars);
    fprintf(d, "%s# %s: start_%s end_%s y y_low y_high (runs closer than %.3g merged)\n", k ? "\n\n" : "",
            tl_kind_title[k], v->unit, v->unit, v->gap);
    for (size_t i = 0; i < t->nruns; i++) {
        const struct tl_run *r = &t->runs[i];
        if (lane[i] < 0 || r->end_us < v->from_us || r->start_us > v->to_us)
            continue;
        int row = row_of(v->ids, v->nrows, r->handler);
        if (k == 0)
            v->runs_in++;
        if (tl_kind(r, v, row) != k)
            continue;
        struct tl_bar *bar = &bars[row * TL_MAX_LANES + lane[i]];
        double a = (double)r->start_us / v->div, b = (double)r->end_us / v->div;
        if (bar->open && a - bar->b < v->gap) {
            if (b > bar->b)
                bar->b = b;
            continue;
        }
        bar_flush(d, v, bar, row, lane[i], &v->count[k]);
        *bar = (struct tl_bar){a, b, 1};
    }
    for (int row = 0; row < v->nrows; row++)
        for (int l = 0; l < TL_MAX_LANES; l++)
            bar_flush(d, v, &bars[row * TL_MAX_LANES + l], row, l, &v->count[k]);
    if (!v->count[k])
        fprintf(d, "NaN NaN NaN NaN NaN\n"); /* keeps the block, so the indices stay fixed */
    free(bars);
}

/* The data file of a timeline: a block of bars per kind of run, then the
 * publishes (time, row), a tick per item unless closer than v->gap to the
 * previous tick of its row; an empty block holds NaNs, so the indices stay
 * fixed. */
static int tl_data(struct rpt *R, const struct timeline *t, struct tl_view *v)
{
    FILE *d = rpt_open(R, v->dname, "w");
    if (!d)
        return -1;
    int *lane = tl_lanes(t, v);
    for (int k = 0; k < TL_NKIND; k++)
        tl_block(d, t, v, lane, k);
    free(lane);
    fprintf(d, "\n\n# publishes: time_%s row (ticks closer than %.3g drawn once)\n", v->unit, v->gap);
    double last[RPT_MAX_ROWS];
    for (int r = 0; r < RPT_MAX_ROWS; r++)
        last[r] = -INFINITY;
    for (size_t i = 0; i < t->npub; i++) {
        int row = row_of(v->ids, v->nrows, t->pub_h[i]);
        if (row < 0 || t->pub_t[i] < v->from_us || t->pub_t[i] > v->to_us)
            continue;
        double x = (double)t->pub_t[i] / v->div;
        if (x - last[row] < v->gap)
            continue;
        last[row] = x;
        fprintf(d, "%.9g %d\n", x, row);
        v->count[TL_NKIND]++;
    }
    if (!v->count[TL_NKIND])
        fprintf(d, "NaN NaN\n");
    return rpt_close(R, d, v->dname);
}

/* The axes of a timeline: time across (the scenario's local clock), a row
 * per handler, the end of a run that stopped early marked. */
static void tl_axes(FILE *f, const struct section *S, const struct timeline *t, const struct tl_view *v)
{
    fprintf(f, "\n");
    if (S->scn || v->zoom) {
        clock_label(f, S->scn);
        clock_tics(f, S->scn, v->from_us, v->to_us, v->div);
    } else {
        fprintf(f, "set xlabel 'time since the scenario start (%s)'\n", v->unit);
    }
    fprintf(f, "set xrange [%.9g:%.9g]\nset yrange [%g:-0.6]\n", v->x0, v->x1, v->nrows - 0.4);
    fprintf(f, "set ytics (");
    for (int i = 0; i < v->nrows; i++) {
        fprintf(f, "%s", i ? ", " : "");
        rpt_gp_text(f, v->names[i]);
        fprintf(f, " %d", i);
    }
    fprintf(f, ") font ',9'\nset grid xtics\nset border 3\nset tics nomirror\nset ytics scale 0\n");
    /* The key below the axis, with room so that it never meets the x label. */
    fprintf(f, "set key outside bottom center horizontal font ',9' samplen 2\nset bmargin 6\n"
               "set xlabel offset 0,0.3\n");
    const struct rdb_group *g = v->g;
    if (t->end_us < g->horizon_us + g->drain_us && t->end_us >= v->from_us && t->end_us <= v->to_us)
        fprintf(f, "set arrow from %.9g, graph 0 to %.9g, graph 1 nohead lw 2 dt 2 lc rgb '#000000' front\n"
                   "set label 'the run stopped here' at %.9g, graph 1 offset 0.5,-1 front\n",
                (double)t->end_us / v->div, (double)t->end_us / v->div, (double)t->end_us / v->div);
}

/* Shades the windows when a host (red) or a worker or server (orange) was
 * down; returns which kinds were shaded (1 host, 2 other). */
static int tl_shade(FILE *f, const struct timeline *t, const struct tl_view *v)
{
    int shaded = 0;
    for (size_t i = 0; i < t->ndown; i++) {
        if (t->down[i].to_us < v->from_us || t->down[i].from_us > v->to_us)
            continue;
        int host = !strncmp(t->down[i].what, "host", 4);
        double a = (double)(t->down[i].from_us > v->from_us ? t->down[i].from_us : v->from_us) / v->div;
        double b = (double)(t->down[i].to_us < v->to_us ? t->down[i].to_us : v->to_us) / v->div;
        if (b - a < v->minw)
            b = a + v->minw;
        fprintf(f, "set object %zu rect from %.9g, graph 0 to %.9g, graph 1 behind fc rgb '%s' fs solid 0.45 noborder\n",
                i + 1, a, b, host ? "#f4a6a6" : "#f9d49c");
        shaded |= host ? 1 : 2;
    }
    return shaded;
}

/* The plot command: the bars of each kind, the publish ticks, and keys for
 * the shaded windows. */
static void tl_plot(FILE *f, const struct tl_view *v, int shaded)
{
    fprintf(f, "plot ");
    int first = 1;
    for (int k = 0; k < TL_NKIND; k++) {
        if (!v->count[k])
            continue;
        fprintf(f, "%s'%s' index %d using (($1+$2)/2):3:1:2:4:5 with boxxyerror fs solid 1.0 noborder lc rgb '%s' "
                   "title '%s'",
                first ? "" : ", \\\n     ", v->dname, k, tl_kind_colour[k], tl_kind_title[k]);
        first = 0;
    }
    if (v->count[TL_NKIND]) {
        fprintf(f, "%s'%s' index %d using 1:($2+0.33):(0):(0.14) with vectors nohead lw 1 lc rgb '#444444' "
                   "title 'publish (a tick per item, at most one per 3 px)'",
                first ? "" : ", \\\n     ", v->dname, TL_NKIND);
        first = 0;
    }
    if (shaded & 1) {
        fprintf(f, "%sNaN with boxes fs solid 0.45 noborder fc rgb '#f4a6a6' title 'host down (crash to restart)'",
                first ? "" : ", \\\n     ");
        first = 0;
    }
    if (shaded & 2) {
        fprintf(f, "%sNaN with boxes fs solid 0.45 noborder fc rgb '#f9d49c' title 'worker or server down'",
                first ? "" : ", \\\n     ");
        first = 0;
    }
    if (first)
        fprintf(f, "NaN notitle");
    fprintf(f, "\n");
}

/* The caption of a timeline (trusted HTML). */
static void tl_caption(const struct section *S, const struct tl_view *v, const char *warn, char *cap, size_t ncap)
{
    int off;
    if (v->zoom)
        off = snprintf(cap, ncap,
                       "The same runs close up, from shortly before the first crash until well after the restart: "
                       "what the policy did while the host was down and how it caught up.");
    else
        off = snprintf(cap, ncap,
                       "Every run of each handler as a bar from its start to its end, coloured by how it ended; "
                       "runs of one handler that overlap are stacked in sub-lanes of its row, so a run started "
                       "again while it is still running (a duplicate) shows as a second bar. Runs of one kind "
                       "closer than a pixel are drawn as one bar (a run too short to see at a minimum width); "
                       "ticks under a row are items published to that handler (one per pixel); shaded bands are "
                       "crashes, from crash to restart.");
    if (S->scn && off < (int)ncap)
        off += snprintf(cap + off, ncap - (size_t)off, " Times are the scenario's local clock (%s).",
                        cal_zone_name(S->scn->zone));
    if (v->crowded && off < (int)ncap)
        off += snprintf(cap + off, ncap - (size_t)off, " Some handler had more than %d runs at once: the extra ones "
                        "share its last sub-lane.", TL_MAX_LANES);
    if (v->hidden && off < (int)ncap)
        off += snprintf(cap + off, ncap - (size_t)off, " %d more handlers are not shown.", v->hidden);
    if (S->scn && off < (int)ncap && !v->zoom) {
        int multi = 0;
        for (uint16_t k = 0; k < S->scn->nwfs; k++)
            multi |= S->scn->wfs[k].count > 1;
        if (multi)
            off += snprintf(cap + off, ncap - (size_t)off, " For workflows stamped out several times, "
                                                            "instance [0] stands for the others.");
    }
    if (warn[0] && off < (int)ncap)
        snprintf(cap + off, ncap - (size_t)off, " <strong class=\"warn\">%s</strong>", warn);
}

/* The timeline of one policy's run, over [from_us, to_us]: the whole run,
 * or (zoom) the time around a crash. */
static int chart_timeline(struct rpt *R, const struct section *S, size_t gi, const struct timeline *t,
                          const char *warn, FILE *html, int64_t from_us, int64_t to_us, int zoom)
{
    struct tl_view v = {.g = &R->r->groups[S->groups[gi]], .from_us = from_us, .to_us = to_us, .zoom = zoom};
    char pst[96];
    rpt_stem(v.g->policy, pst, sizeof pst);
    /* One label with several parameter sets (a parameter study): the
     * group's position keeps their files apart. */
    int same = 0;
    for (size_t k = 0; k < S->ngroups; k++)
        same += !strcmp(R->r->groups[S->groups[k]].policy, v.g->policy);
    if (same > 1)
        snprintf(pst + strlen(pst), sizeof pst - strlen(pst), "-%zu", gi + 1);
    snprintf(v.stem, sizeof v.stem, "%s-%s-%s", S->stem, zoom ? "crash" : "timeline", pst);
    snprintf(v.dname, sizeof v.dname, "%s.dat", v.stem);
    v.nrows = tl_rows(S, t, v.ids, v.names, v.cons, &v.hidden);
    if (v.nrows == 0 || to_us <= from_us)
        return 0;
    time_unit(zoom ? 0 : to_us - from_us, &v.div, &v.unit);
    v.x0 = (double)from_us / v.div;
    v.x1 = (double)to_us / v.div;
    v.minw = (v.x1 - v.x0) * 0.0012;
    v.gap = (v.x1 - v.x0) * 0.003;
    if (tl_data(R, t, &v) != 0)
        return -1;

    struct chart c;
    int hgt = 170 + 34 * v.nrows;
    FILE *f = rpt_chart_begin(&c, v.stem, 1100, hgt < 300 ? 300 : hgt);
    char title[300];
    if (zoom)
        snprintf(title, sizeof title, "%s under %s: runs around the first crash, seed %" PRIu64, S->name,
                 v.g->policy, S->tl_seed);
    else
        snprintf(title, sizeof title, "%s under %s: runs per handler, seed %" PRIu64, S->name, v.g->policy,
                 S->tl_seed);
    fprintf(f, "set title ");
    rpt_gp_text(f, title);
    c.png_only = 1;
    tl_axes(f, S, t, &v);
    tl_plot(f, &v, tl_shade(f, t, &v));
    char what[300];
    snprintf(what, sizeof what, "%s of %s under %s, seed %" PRIu64, zoom ? "crash close-up" : "timeline", S->name,
             v.g->policy, S->tl_seed);
    if (rpt_chart_end(R, &c, what) != 0)
        return -1;
    char cap[1400];
    tl_caption(S, &v, warn, cap, sizeof cap);
    rpt_html_figure(html, v.stem, title, cap, 0);
    return 0;
}

/* The close-up window around a timeline's first crash: from twice its
 * length before to four times after (a length of at least ten minutes),
 * within [0, end_us].  0 when the run had no crash. */
static int crash_window(const struct timeline *t, int64_t end_us, int64_t *from, int64_t *to)
{
    if (!t->ndown)
        return 0;
    const struct tl_down *w = &t->down[0];
    int64_t len = w->to_us - w->from_us;
    if (len < 10 * US_PER_MIN)
        len = 10 * US_PER_MIN;
    *from = w->from_us - 2 * len > 0 ? w->from_us - 2 * len : 0;
    *to = w->to_us + 4 * len < end_us ? w->to_us + 4 * len : end_us;
    return *to > *from;
}


/* --- backlog --------------------------------------------------------------------------- */

/* The backlog of one timeline in RPT_BACKLOG_BINS intervals of [0, end):
 * the most items waiting at any moment of each. */
static void backlog_bins(const struct timeline *t, int64_t end, double *bins)
{
    /* Changes in time order: +1 per publish, -taken at a commit. */
    size_t nch = 0;
    for (size_t i = 0; i < t->nruns; i++)
        nch += t->runs[i].start_us >= 0 && t->runs[i].kind == TL_OK && t->runs[i].taken;
    struct change { int64_t t_us; int64_t d; } *ch = xmalloc((nch + t->npub + 1) * sizeof *ch);
    size_t m = 0;
    for (size_t i = 0; i < t->npub; i++)
        ch[m++] = (struct change){t->pub_t[i], 1};
    for (size_t i = 0; i < t->nruns; i++)
        if (t->runs[i].start_us >= 0 && t->runs[i].kind == TL_OK && t->runs[i].taken)
            ch[m++] = (struct change){t->runs[i].end_us, -(int64_t)t->runs[i].taken};
    /* Publishes are in time order and so are commits; merge them. */
    size_t a = 0, b = t->npub;
    for (int k = 0; k < RPT_BACKLOG_BINS; k++)
        bins[k] = 0;
    int64_t level = 0;
    int bin = 0;
    double peak = 0;
    while (a < t->npub || b < m) {
        struct change *x;
        if (b >= m || (a < t->npub && ch[a].t_us <= ch[b].t_us))
            x = &ch[a++];
        else
            x = &ch[b++];
        int nb = (int)((double)x->t_us / (double)end * RPT_BACKLOG_BINS);
        if (nb >= RPT_BACKLOG_BINS)
            nb = RPT_BACKLOG_BINS - 1;
        while (bin < nb) {
            bins[bin] = peak;
            peak = (double)(level > 0 ? level : 0);
            bin++;
        }
        level += x->d;
        if (level > peak)
            peak = (double)level;
    }
    while (bin < RPT_BACKLOG_BINS) {
        bins[bin++] = peak;
        peak = (double)(level > 0 ? level : 0);
    }
    free(ch);
}

/* The data file of the backlog chart: a block per policy with a timeline
 * (idx[gi]: its block); *ymax gets the highest backlog. */
static int backlog_data(struct rpt *R, const struct section *S, const struct timeline *tls, const int *have,
                        int64_t end, const char *dname, int *idx, double *ymax)
{
    double div;
    const char *unit;
    time_unit(end, &div, &unit);
    FILE *d = rpt_open(R, dname, "w");
    if (!d)
        return -1;
    int block = 0;
    double *bins = xmalloc(RPT_BACKLOG_BINS * sizeof *bins);
    for (size_t gi = 0; gi < S->ngroups; gi++) {
        if (!have[gi])
            continue;
        backlog_bins(&tls[gi], end, bins);
        const struct rdb_group *g = &R->r->groups[S->groups[gi]];
        fprintf(d, "%s# %s, seed %" PRIu64 ": time_%s items_waiting (the most in each interval)\n", block ? "\n\n" : "",
                g->policy, S->tl_seed, unit);
        for (int k = 0; k < RPT_BACKLOG_BINS; k++) {
            /* Drawn as steps: a point only where the level changes. */
            if (k == 0 || bins[k] != bins[k - 1])
                fprintf(d, "%.9g %.0f\n", (double)end * k / RPT_BACKLOG_BINS / div, bins[k]);
            if (bins[k] > *ymax)
                *ymax = bins[k];
        }
        fprintf(d, "%.9g %.0f\n", (double)end / div, bins[RPT_BACKLOG_BINS - 1]);
        idx[gi] = block++;
    }
    free(bins);
    return rpt_close(R, d, dname);
}

/* Items waiting over time, for every policy that has a timeline: published
 * and not yet taken by a run that committed.  Items lost stay counted, so a
 * curve that does not come back to zero shows lost work. */
static int chart_backlog(struct rpt *R, const struct section *S, const struct timeline *tls, const int *have,
                         FILE *html)
{
    char stem[300], dname[400];
    snprintf(stem, sizeof stem, "%s-backlog", S->stem);
    snprintf(dname, sizeof dname, "%s.dat", stem);
    int64_t end = 0;
    size_t npub = 0;
    for (size_t gi = 0; gi < S->ngroups; gi++)
        if (have[gi]) {
            const struct rdb_group *g = &R->r->groups[S->groups[gi]];
            if (tls[gi].end_us > end)
                end = tls[gi].end_us;
            if (g->horizon_us + g->drain_us > end)
                end = g->horizon_us + g->drain_us;
            npub += tls[gi].npub;
        }
    if (!npub || end <= 0)
        return 0;
    double ymax = 0;
    int *idx = xcalloc(S->ngroups, sizeof *idx);
    if (backlog_data(R, S, tls, have, end, dname, idx, &ymax) != 0) {
        free(idx);
        return -1;
    }
    double div;
    const char *unit;
    time_unit(end, &div, &unit);
    struct chart c;
    FILE *f = rpt_chart_begin(&c, stem, 1000, 440);
    char title[256];
    snprintf(title, sizeof title, "%s: backlog over time, seed %" PRIu64, S->name, S->tl_seed);
    fprintf(f, "set title ");
    rpt_gp_text(f, title);
    if (S->scn) {
        fprintf(f, "\n");
        clock_label(f, S->scn);
        clock_tics(f, S->scn, 0, end, div);
        fprintf(f, "set ylabel 'items waiting (published, not processed)'\n");
    } else {
        fprintf(f, "\nset xlabel 'time since the scenario start (%s)'\nset ylabel 'items waiting (published, not processed)'\n",
                unit);
    }
    fprintf(f, "set xrange [0:%.9g]\nset yrange [0:%.9g]\nset grid\nset border 3\nset tics nomirror\n",
            (double)end / div, ymax > 0 ? ymax * 1.1 : 1);
    fprintf(f, "set key outside right top vertical title 'policy'\n");
    fprintf(f, "plot ");
    int first = 1;
    for (size_t gi = 0; gi < S->ngroups; gi++) {
        if (!have[gi])
            continue;
        fprintf(f, "%s'%s' index %d using 1:2 with steps %s title ", first ? "" : ", \\\n     ", dname, idx[gi],
                rpt_line_style(gi, S->ngroups));
        rpt_gp_text(f, R->r->groups[S->groups[gi]].policy);
        first = 0;
    }
    fprintf(f, "\n");
    free(idx);
    char what[256];
    snprintf(what, sizeof what, "backlog of scenario %s", S->name);
    if (rpt_chart_end(R, &c, what) != 0)
        return -1;
    rpt_html_figure(html, stem, title,
                    "Items published and not yet processed (taken by a run that committed), the most in each of "
                    "800 intervals. Lost items never leave the backlog, so a curve that ends above zero lost "
                    "work; an item processed twice is subtracted twice.",
                    1);
    return 0;
}

/* --- a section's timelines -------------------------------------------------------------- */

/* Loads the timeline of seed S->tl_seed for every policy of the section:
 * have[gi] is 1 when there is one, else note[gi] says why.  Returns how
 * many there are, or -1 after rpt_fail. */
static int load_timelines(struct rpt *R, const struct section *S, struct timeline *tls, int *have,
                          char (*warn)[400], char (*note)[800])
{
    int nhave = 0;
    for (size_t gi = 0; gi < S->ngroups; gi++) {
        const struct rdb_group *g = &R->r->groups[S->groups[gi]];
        const struct rdb_run *run = NULL;
        for (size_t k = 0; k < g->nruns; k++)
            if (g->runs[k].seed == S->tl_seed)
                run = &g->runs[k];
        if (!run) {
            snprintf(note[gi], sizeof note[gi], "%s has no run with seed %" PRIu64, g->policy, S->tl_seed);
            continue;
        }
        if (tl_load(R, S, g, run, &tls[gi], note[gi], sizeof note[gi], warn[gi], sizeof warn[gi]) == 0) {
            have[gi] = 1;
            nhave++;
        } else if (R->code) {
            return -1;
        }
    }
    return nhave;
}

/* A timeline per policy (and a close-up of its first crash), or a note
 * saying why there is none. */
static int draw_timelines(struct rpt *R, const struct section *S, const struct timeline *tls, const int *have,
                          char (*warn)[400], char (*note)[800], FILE *h)
{
    int ret = 0;
    fprintf(h, "<h3>Timelines, seed %" PRIu64 "</h3>\n", S->tl_seed);
    for (size_t gi = 0; gi < S->ngroups && !ret; gi++) {
        if (have[gi]) {
            const struct rdb_group *g = &R->r->groups[S->groups[gi]];
            int64_t full = g->horizon_us + g->drain_us;
            if (full < tls[gi].end_us)
                full = tls[gi].end_us;
            ret = chart_timeline(R, S, gi, &tls[gi], warn[gi], h, 0, full > 0 ? full : US_PER_S, 0);
            int64_t from, to;
            if (!ret && crash_window(&tls[gi], full, &from, &to))
                ret = chart_timeline(R, S, gi, &tls[gi], warn[gi], h, from, to, 1);
        } else {
            fprintf(h, "<p class=\"note\">No timeline for <strong>");
            fmt_markup(h, R->r->groups[S->groups[gi]].policy);
            fprintf(h, "</strong>: ");
            fmt_markup(h, note[gi]);
            fprintf(h, ".</p>\n");
        }
    }
    return ret;
}

int rpt_section_timelines(struct rpt *R, const struct section *S, FILE *h)
{
    struct timeline *tls = xcalloc(S->ngroups, sizeof *tls);
    int *have = xcalloc(S->ngroups, sizeof *have);
    char (*warn)[400] = xcalloc(S->ngroups, sizeof *warn);
    char (*note)[800] = xcalloc(S->ngroups, sizeof *note);
    int nhave = load_timelines(R, S, tls, have, warn, note);
    int ret = nhave < 0 ? -1 : 0;
    if (!ret && nhave) {
        fprintf(h, "<h3>Backlog</h3>\n");
        ret = chart_backlog(R, S, tls, have, h);
    }
    if (!ret)
        ret = draw_timelines(R, S, tls, have, warn, note, h);
    for (size_t gi = 0; gi < S->ngroups; gi++)
        tl_free(&tls[gi]);
    free(tls);
    free(have);
    free(warn);
    free(note);
    return ret;
}
