/* crashpoints.c: crash-point exploration (see crashpoints.h).
 *
 * Two runs of the scenario, both watched by a probe (struct sim_probe):
 *   1. enumerate: the durable facts between two engine points make a
 *      transition; its points (before: the instant's first point, when the
 *      transition is the instant's first; after: the point that ends it)
 *      are listed, in the window, up to max.  This run is the baseline.
 *   2. fork: at each listed point the process forks; the child returns
 *      the probe's crash definition to the engine (the host goes down
 *      there), finishes the run and sends the result through its pipe.
 *      The parent stops its own run at the last point.
 * With rerun, step 2 is a child per point that parses the scenario with
 * the point's line and simulates it from the start.
 *
 * Key invariant: both runs see the same points in the same order (the
 * engine is deterministic, and watching changes nothing it decides);
 * step 2 checks that each listed point comes at its instant. */
#include "sim/crashpoints.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/jobs.h"
#include "sim/sweep.h"
#include "sim/util.h"

/* --- metrics ------------------------------------------------------------------- */

const struct cp_metric_info cp_metric_table[CP_NMETRICS] = {
    [CP_LOST] = {"lost", 0, 0, 0, "items lost beyond the run without the crash"},
    [CP_DUPLICATES] = {"duplicates", 0, 0, 0, "duplicates beyond the run without the crash"},
    [CP_DOUBLE_EFFECTS] = {"double_effects", 0, 0, 0, "mutations applied twice beyond the run without the crash"},
    [CP_STUCK] = {"stuck", 0, 0, 0, "handlers with due work that never ran again after the crash"},
    [CP_MISSED] = {"missed", 0, 0, 0, "missed dues beyond the run without the crash"},
    [CP_RECOVERY_TIME] = {"recovery_time", 1, 0, 0, "restart -> first run that made progress; -1 never"},
    [CP_RECOVERY_OK] = {"recovery_ok", 0, 1, 0, "the crash recovered: nothing lost, no double effect, in bound"},
    [CP_POINTS] = {"points", 0, 0, 1, "crash points explored"},
    [CP_FAILING] = {"failing", 0, 0, 1, "crash points that fail"},
};

int cp_metric_find(const char *name)
{
    for (int i = 0; i < CP_NMETRICS; i++)
        if (!strcmp(cp_metric_table[i].name, name))
            return i;
    return -1;
}

double cp_point_metric(const struct cp_result *r, const struct cp_point *p, int metric)
{
    if (metric == CP_POINTS)
        return (double)r->npts;
    if (metric == CP_FAILING)
        return (double)r->nfail;
    SIM_ASSERT(p != NULL);
    const struct cp_outcome *o = &p->out;
    switch ((enum cp_metric)metric) {
    case CP_LOST: return (double)o->lost;
    case CP_DUPLICATES: return (double)o->duplicates;
    case CP_DOUBLE_EFFECTS: return (double)o->double_effects;
    case CP_STUCK: return (double)o->stuck;
    case CP_MISSED: return (double)o->missed;
    case CP_RECOVERY_TIME: return (double)o->recovery_time_us;
    case CP_RECOVERY_OK: return o->recovery_ok ? 1.0 : 0.0;
    case CP_POINTS:
    case CP_FAILING:
    case CP_NMETRICS: break;
    }
    return 0;
}

int64_t cp_default_down(const struct scenario *s)
{
    for (uint32_t c = 0; c < s->ncrashes; c++)
        if (!s->crashes[c].random && s->crashes[c].target != CRASH_STOP && s->crashes[c].down_us > 0)
            return s->crashes[c].down_us;
    return US_PER_MIN;
}

/* --- names and lines --------------------------------------------------------------- */

void cp_handler_name(const struct cp_result *r, int32_t h, char *buf, size_t n)
{
    if (h < 0 || (uint32_t)h >= r->w.nh) {
        snprintf(buf, n, "-");
        return;
    }
    const struct world_handler *wh = &r->w.h[h];
    const struct workflow_def *wf = &r->scn->wfs[wh->wf];
    if (wf->count > 1)
        snprintf(buf, n, "%s[%" PRIu32 "].%s", wf->name, wh->inst - r->w.wf_first_inst[wh->wf],
                 wf->handlers[wh->h].name);
    else
        snprintf(buf, n, "%s.%s", wf->name, wf->handlers[wh->h].name);
}

void cp_transition_what(const struct cp_transition *t, char *buf, size_t n)
{
    const char *k = fact_kind_name((enum fact_kind)t->kind);
    switch ((enum fact_kind)t->kind) {
    case FACT_PHASE: snprintf(buf, n, "phase %s", run_phase_name(t->detail)); break;
    case FACT_RUN_END: snprintf(buf, n, "end %s", run_outcome_name(t->detail)); break;
    case FACT_DELIVERY: snprintf(buf, n, "deliver %s", t->detail ? "ok" : "failed"); break;
    case FACT_DROP: snprintf(buf, n, "drop %s", drop_cause_name(t->detail)); break;
    case FACT_DURABLE: snprintf(buf, n, "durable %s", job_status_name((enum job_status)t->detail)); break;
    default: snprintf(buf, n, "%s", k ? k : "?"); break;
    }
}

void cp_point_text(const struct cp_result *r, const struct cp_point *p, char *buf, size_t n)
{
    char what[64], hn[160], run[32] = "";
    cp_transition_what(&p->tr, what, sizeof what);
    cp_handler_name(r, p->tr.handler, hn, sizeof hn);
    if (p->tr.run)
        snprintf(run, sizeof run, " (run %" PRIu64 ")", p->tr.run);
    snprintf(buf, n, "just %s %s%s%s%s", p->side == CP_BEFORE ? "before" : "after", what,
             p->tr.handler >= 0 ? " of " : "", p->tr.handler >= 0 ? hn : "", run);
}

void cp_fmt_us(int64_t us, char *buf, size_t n)
{
    static const struct { const char *u; int64_t us; } units[] = {
        {"d", US_PER_DAY}, {"h", US_PER_H}, {"m", US_PER_MIN}, {"s", US_PER_S}, {"ms", US_PER_MS}, {"us", 1}};
    if (us <= 0) {
        snprintf(buf, n, "0");
        return;
    }
    size_t off = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof units / sizeof units[0] && off < n; i++) {
        int64_t v = us / units[i].us;
        us %= units[i].us;
        if (v)
            off += (size_t)snprintf(buf + off, n - off, "%" PRId64 "%s", v, units[i].u);
    }
}

void cp_point_line(const struct cp_result *r, const struct cp_point *p, int64_t down_us, char *buf, size_t n)
{
    char at[48], down[48], pos[200];
    cp_fmt_us(p->t_us, at, sizeof at);
    cp_fmt_us(down_us, down, sizeof down);
    if (p->first) {
        snprintf(pos, sizeof pos, "first");
    } else {
        char hn[160], nth[16] = "";
        if (p->ref_nth > 1)
            snprintf(nth, sizeof nth, " %" PRIu32, p->ref_nth);
        cp_handler_name(r, p->ref_handler, hn, sizeof hn);
        snprintf(pos, sizeof pos, "after %s%s%s%s", fact_kind_name((enum fact_kind)p->ref_kind), nth,
                 p->ref_handler >= 0 ? " of " : "", p->ref_handler >= 0 ? hn : "");
    }
    snprintf(buf, n, "crash host at %s %s for %s", at, pos, down);
}

int cp_scenario_text(const struct scenario *s, char **text, size_t *len, char *err, size_t n)
{
    FILE *f = fopen(s->path, "rb");
    if (!f) {
        snprintf(err, n, "cannot read '%s': %s", s->path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, k = 0;
    char *b = xmalloc(cap);
    size_t got;
    while ((got = fread(b + k, 1, cap - k, f)) > 0) {
        k += got;
        if (k == cap)
            b = xgrow(b, 1, &cap, cap + 1);
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(b);
        snprintf(err, n, "cannot read '%s'", s->path);
        return -1;
    }
    *text = b;
    *len = k;
    return 0;
}

char *cp_scenario_with(const char *text, size_t len, const char *comment, const char *line, size_t *olen)
{
    size_t n = len + strlen(comment) + strlen(line) + 8;
    char *b = xmalloc(n);
    memcpy(b, text, len);
    size_t k = len;
    if (k && b[k - 1] != '\n')
        b[k++] = '\n';
    k += (size_t)snprintf(b + k, n - k, "%s%s%s\n", comment, comment[0] ? "\n" : "", line);
    *olen = k;
    return b;
}

/* --- the exploration's state ------------------------------------------------------- */

/* Facts of one kind and handler at the current instant. */
struct kcount {
    uint8_t kind;
    int32_t handler;
    uint32_t n;
};

/* A child: a point's run, with its pipe. */
struct child {
    pid_t pid;
    int fd;
    size_t pt;
};

struct explore {
    const struct cp_opts *o;
    struct cp_result *r;
    int pass;                      /* 1: enumerate, 2: fork */
    uint32_t probe_ci;             /* the crash definition the probe fires */
    /* pass 1: the current instant and its counts */
    int64_t inst_us;
    struct kcount *kc;
    size_t nkc, kc_cap;
    /* the transition since the last point */
    int in_tr;
    struct cp_transition tr;
    uint8_t ref_kind;
    int32_t ref_handler;
    uint32_t ref_nth;
    /* the point just before the next transition of the instant (its first point) */
    int have_first;
    uint64_t first_sp;
    /* pass 2 */
    size_t next;                   /* the next point to fork at */
    struct child *kids;
    int nkids;
    int child;                     /* this process is a point's child */
    int child_fd;
    size_t child_pt;
    int failed;                    /* err is set: fork no more */
    char *err;
    size_t nerr;
};

static void new_instant(struct explore *x, int64_t t_us)
{
    if (t_us == x->inst_us)
        return;
    x->inst_us = t_us;
    x->nkc = 0;
    x->have_first = 0;
}

/* The number of facts of kind k and handler h at this instant so far,
 * this one included. */
static uint32_t count_fact(struct explore *x, uint8_t k, int32_t h)
{
    for (size_t i = 0; i < x->nkc; i++)
        if (x->kc[i].kind == k && x->kc[i].handler == h)
            return ++x->kc[i].n;
    x->kc = xgrow(x->kc, sizeof *x->kc, &x->kc_cap, x->nkc + 1);
    x->kc[x->nkc++] = (struct kcount){k, h, 1};
    return 1;
}

/* A crash's own consequences (runs it ends, items it drops) are no
 * transition of the system. */
static int is_transition(const struct trace_rec *r)
{
    if (r->kind == FACT_RUN_END)
        return r->outcome != OUT_CRASHED && r->outcome != OUT_CUTOFF;
    if (r->kind == FACT_DROP)
        return r->cause != DROP_CRASH;
    return 1;
}

static uint8_t rec_detail(const struct trace_rec *r)
{
    switch ((enum fact_kind)r->kind) {
    case FACT_PHASE: return r->phase;
    case FACT_RUN_END: return r->outcome;
    case FACT_DELIVERY: return r->ok;
    case FACT_DROP: return r->cause;
    case FACT_DURABLE: return (uint8_t)r->tag;
    default: return 0;
    }
}

static void probe_durable(void *ctx, const struct trace_rec *r)
{
    struct explore *x = ctx;
    if (x->pass != 1)
        return;
    new_instant(x, r->t_us);
    uint32_t nth = count_fact(x, r->kind, r->handler);
    if (!is_transition(r))
        return;
    /* The transition is named by its first engine fact, else its first row. */
    if (!x->in_tr || (x->tr.kind == FACT_DURABLE && r->kind != FACT_DURABLE)) {
        uint32_t nf = x->in_tr ? x->tr.nfacts : 0;
        x->tr = (struct cp_transition){.kind = r->kind, .detail = rec_detail(r), .handler = r->handler,
                                       .run = r->run, .nfacts = nf};
        x->ref_kind = r->kind;
        x->ref_handler = r->handler;
        x->ref_nth = nth;
    }
    x->in_tr = 1;
    x->tr.nfacts++;
}

static void add_point(struct explore *x, const struct sim_point *p, enum cp_side side, uint64_t sp, int first)
{
    struct cp_result *r = x->r;
    if (x->o->max && r->npts >= x->o->max) {
        r->truncated = 1;
        return;
    }
    r->pts = xrealloc(r->pts, (r->npts + 1) * sizeof *r->pts);
    r->pts[r->npts] = (struct cp_point){.no = (uint32_t)r->npts + 1, .t_us = p->t_us, .sp = sp, .side = side,
                                        .tr = x->tr, .first = first, .ref_kind = x->ref_kind,
                                        .ref_handler = x->ref_handler, .ref_nth = x->ref_nth};
    r->npts++;
}

/* Pass 1 at a point: a transition that just ended gets its points. */
static void enumerate(struct explore *x, const struct sim_point *p)
{
    new_instant(x, p->t_us);
    int in_window = p->t_us >= x->o->from_us && p->t_us < x->o->to_us;
    if (!x->in_tr) {
        if (p->first && p->host_up) {
            x->have_first = 1;
            x->first_sp = p->index;
        } else if (!p->host_up) {
            x->have_first = 0;
        }
        return;
    }
    if (in_window) {
        x->r->ntransitions++;
        /* Before it: the instant's first point, when it is the instant's
         * first transition (else it is the point after the previous one). */
        if (x->have_first)
            add_point(x, p, CP_BEFORE, x->first_sp, 1);
        if (p->host_up)
            add_point(x, p, CP_AFTER, p->index, 0);
    }
    x->have_first = 0;
    x->in_tr = 0;
}

/* --- children --------------------------------------------------------------------- */

static int fail(struct explore *x, const char *fmt, const char *what)
{
    if (!x->failed)
        snprintf(x->err, x->nerr, fmt, what);
    x->failed = 1;
    return -1;
}

/* In a child: sends the result and ends the process (no atexit handler,
 * no stdio flush: nothing of the parent's is written twice). */
static _Noreturn void child_send(struct explore *x, const struct sim_result *res)
{
    char *b;
    size_t len;
    sweep_result_encode(res, &b, &len);
    uint64_t head[2] = {x->child_pt, len};
    int bad = sim_write_all(x->child_fd, head, sizeof head) || sim_write_all(x->child_fd, b, len);
    _exit(bad ? 3 : 0);
}

/* Fills point k's outcome from its result, against the baseline. */
static void point_done(struct explore *x, size_t k, struct sim_result *res)
{
    struct cp_result *r = x->r;
    struct cp_point *p = &r->pts[k];
    const struct metrics *b = &r->base.ck.total, *m = &res->ck.total;
    struct cp_outcome *o = &p->out;
    *o = (struct cp_outcome){.done = 1, .status = res->status, .fingerprint = res->fingerprint, .recovery_ok = 1};
#define BEYOND(f) ((int64_t)(m->f > b->f ? m->f - b->f : 0))
    o->lost = BEYOND(lost);
    o->duplicates = BEYOND(duplicates);
    o->double_effects = BEYOND(double_effects);
    o->missed = BEYOND(missed);
#undef BEYOND
    o->recovery_time_us = -1;
    for (uint32_t c = 0; c < res->ck.ncrashes; c++) {
        const struct crash_rec *cr = &res->ck.crashes[c];
        if (cr->target != CRASH_HOST || cr->at_us != p->t_us)
            continue;
        o->crashed = 1;
        o->stuck = cr->stuck;
        o->recovery_time_us = cr->recovery_time_us;
        break;
    }
    /* The checker's rule for a crash's ok, with what the baseline already
     * loses or doubles left out (it is not this crash's doing). */
    o->recovery_ok = o->crashed && o->lost == 0 && o->double_effects == 0 && o->stuck == 0 &&
                     o->recovery_time_us >= 0 && o->recovery_time_us <= r->scn->recovery_bound_us;
    o->fail = !o->recovery_ok || o->duplicates > 0 || (res->status != SIM_OK && r->base.status == SIM_OK);
    r->nfail += (size_t)o->fail;
    if (x->o->keep_results) {
        p->res = xmalloc(sizeof *p->res);
        *p->res = *res;
    } else {
        sim_result_free(res);
    }
}

/* Reads child i's result (or learns that it died), and reaps it. */
static void child_read(struct explore *x, int i)
{
    struct child c = x->kids[i];
    x->kids[i] = x->kids[--x->nkids];
    uint64_t head[2];
    char *b = NULL;
    int ok = sim_read_all(c.fd, head, sizeof head) == 1 && head[0] == c.pt && head[1] < ((uint64_t)1 << 40);
    if (ok) {
        b = xmalloc(head[1] ? (size_t)head[1] : 1);
        ok = sim_read_all(c.fd, b, (size_t)head[1]) == 1;
    }
    close(c.fd);
    int st = 0;
    while (waitpid(c.pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (ok) {
        struct sim_result res;
        sweep_result_decode(b, (size_t)head[1], &res);
        point_done(x, c.pt, &res);
    } else {
        struct cp_point *p = &x->r->pts[c.pt];
        p->out = (struct cp_outcome){.done = 0, .fail = 1, .recovery_time_us = -1,
                                     .exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st)};
        x->r->nfail++;
        x->r->nerr++;
    }
    free(b);
}

/* Reads the children that are done; with block, waits for one at least. */
static void children_poll(struct explore *x, int block)
{
    if (x->nkids == 0)
        return;
    struct pollfd pf[CP_MAX_JOBS];
    for (int i = 0; i < x->nkids; i++)
        pf[i] = (struct pollfd){.fd = x->kids[i].fd, .events = POLLIN};
    int n = poll(pf, (nfds_t)x->nkids, block ? -1 : 0);
    if (n <= 0)
        return;
    /* From the end: child_read moves the last child into the slot it frees. */
    for (int i = x->nkids - 1; i >= 0; i--)
        if (pf[i].revents & (POLLIN | POLLHUP | POLLERR))
            child_read(x, i);
}

/* Forks the child of point k.  Returns 1 in the child, 0 in the parent,
 * -1 when it could not (err set). */
static int spawn(struct explore *x, size_t k)
{
    while (x->nkids >= x->o->jobs)
        children_poll(x, 1);
    children_poll(x, 0);
    int fd[2];
    if (pipe(fd) != 0)
        return fail(x, "crashpoints: pipe: %s", strerror(errno));
    fflush(NULL); /* a child must not inherit buffered output and print it twice */
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return fail(x, "crashpoints: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fd[0]);
        for (int i = 0; i < x->nkids; i++)
            close(x->kids[i].fd);
        x->nkids = 0;
        x->child = 1;
        x->child_fd = fd[1];
        x->child_pt = k;
        return 1;
    }
    close(fd[1]);
    x->kids[x->nkids++] = (struct child){.pid = pid, .fd = fd[0], .pt = k};
    return 0;
}

/* The probe's point hook: pass 1 lists points, pass 2 forks at them. */
static int probe_point(void *ctx, const struct sim_point *p)
{
    struct explore *x = ctx;
    if (x->pass == 1) {
        enumerate(x, p);
        return -1;
    }
    if (x->child || x->failed || x->next >= x->r->npts || p->index != x->r->pts[x->next].sp)
        return -1;
    size_t k = x->next++;
    if (p->t_us != x->r->pts[k].t_us || !p->host_up) {
        fail(x, "crashpoints: %s: the second run does not meet the first's points (not deterministic)",
             x->r->scn->path);
        return -1;
    }
    if (spawn(x, k) == 1)
        return (int)x->probe_ci;
    /* The parent's run is only the way to the points: past the last, stop. */
    return x->next >= x->r->npts ? SIM_PROBE_STOP : -1;
}

/* --- the two ways of running the points ------------------------------------------------ */

/* Pass 2 with prefix sharing: one more run of aug, forking at each point. */
static void fork_all(struct explore *x, const struct scenario *aug, const struct policy_ops *ops,
                     const struct params *ps, const struct sim_opts *so)
{
    x->pass = 2;
    x->next = 0;
    struct sim_result res;
    sim_run(aug, ops, ps, so, &res);
    if (x->child)
        child_send(x, &res);
    sim_result_free(&res);
    if (!x->failed && x->next != x->r->npts)
        fail(x, "crashpoints: %s: the second run does not meet the first's points (not deterministic)",
             x->r->scn->path);
}

/* In a child of rerun_all: the scenario with point k's line, from the start. */
static _Noreturn void rerun_child(struct explore *x, const char *text, size_t len, const struct policy_ops *ops,
                                  const struct params *ps, size_t k)
{
    const struct cp_result *r = x->r;
    char line[512];
    cp_point_line(r, &r->pts[k], x->o->down_us, line, sizeof line);
    size_t n;
    char *buf = cp_scenario_with(text, len, "", line, &n);
    struct scenario *s;
    struct diag d;
    if (scenario_parse_buf(r->scn->path, buf, n, &s, &d) != 0) {
        diag_print(&d);
        _exit(3);
    }
    struct sim_opts so = {.seed = x->o->seed, .max_events = x->o->max_events};
    struct sim_result res;
    sim_run(s, ops, ps, &so, &res);
    child_send(x, &res);
}

/* Pass 2 without prefix sharing: a child per point, each simulating the
 * scenario with the point's line from the start. */
static void rerun_all(struct explore *x, const struct policy_ops *ops, const struct params *ps)
{
    char *text;
    size_t len;
    if (cp_scenario_text(x->r->scn, &text, &len, x->err, x->nerr) != 0) {
        x->failed = 1;
        return;
    }
    for (size_t k = 0; k < x->r->npts && !x->failed; k++) {
        int rc = spawn(x, k);
        if (rc == 1)
            rerun_child(x, text, len, ops, ps, k);
    }
    free(text);
}

int cp_explore(const struct scenario *s, const struct policy_ops *ops, const struct params *ps,
               const struct cp_opts *o, struct cp_result *out, char *err, size_t n)
{
    SIM_ASSERT(o->jobs >= 1 && o->jobs <= CP_MAX_JOBS && o->down_us > 0);
    *out = (struct cp_result){.scn = s, .down_us = o->down_us};
    world_build(&out->w, s);
    struct explore x = {.o = o, .r = out, .pass = 1, .inst_us = -1, .err = err, .nerr = n};
    /* The scenario with one more crash definition, which only the probe
     * fires: the same run until then (its position takes no event). */
    struct scenario aug = *s;
    aug.crashes = xmalloc((s->ncrashes + 1) * sizeof *aug.crashes);
    if (s->ncrashes)
        memcpy(aug.crashes, s->crashes, s->ncrashes * sizeof *aug.crashes);
    aug.crashes[s->ncrashes] = (struct crash_def){.target = CRASH_HOST, .pos = CRASH_POS_PROBE,
                                                  .down_us = o->down_us, .pos_wf = -1, .pos_h = -1};
    aug.ncrashes = s->ncrashes + 1;
    x.probe_ci = s->ncrashes;
    struct sim_probe pr = {.ctx = &x, .durable = probe_durable, .point = probe_point};
    struct sim_opts so = {.seed = o->seed, .max_events = o->max_events, .probe = &pr};
    sim_run(&aug, ops, ps, &so, &out->base);
    if (out->npts) {
        x.kids = xcalloc((size_t)o->jobs, sizeof *x.kids);
        if (o->rerun)
            rerun_all(&x, ops, ps);
        else
            fork_all(&x, &aug, ops, ps, &so);
        while (x.nkids)
            children_poll(&x, 1);
        free(x.kids);
    }
    free(aug.crashes);
    free(x.kc);
    return x.failed ? -1 : 0;
}

void cp_result_free(struct cp_result *r)
{
    for (size_t i = 0; i < r->npts; i++) {
        if (r->pts[i].res) {
            sim_result_free(r->pts[i].res);
            free(r->pts[i].res);
        }
    }
    free(r->pts);
    sim_result_free(&r->base);
    world_free(&r->w);
    *r = (struct cp_result){0};
}
