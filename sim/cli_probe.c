/* cli_probe.c: one simulation in a child process, for `simrun shrink` and
 * `simrun swarm` (see cli.h, struct cli_probe).
 *
 * The child is a fork of this process: it runs sim_run, sums up the
 * result (status, fingerprint, the whole-scenario metrics, the crash
 * records, each expect line's outcome) into a fixed-size record, writes it
 * to a pipe and leaves with _exit(0).  Whatever ends it otherwise — an
 * internal error (exit 3), a sanitizer report, a signal, the wall-clock
 * limit — is seen by the parent, which keeps the first line of the child's
 * standard error that says why, with the numbers that change from run to
 * run (process ids, addresses, sizes) blanked out, so that two runs of the
 * same failure compare equal. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/checker.h"
#include "sim/cli.h"
#include "sim/sim.h"
#include "sim/util.h"

/* --- expect lines (the rules of simrun check) -------------------------------------------------- */

static int expect_holds(double v, enum expect_op op, double want)
{
    switch (op) {
    case OP_LT: return v < want;
    case OP_LE: return v <= want;
    case OP_GT: return v > want;
    case OP_GE: return v >= want;
    case OP_EQ: return v == want;
    case OP_NE: return v != want;
    }
    return 0;
}

int cli_expect_applies(const struct expect_def *e, const char *label)
{
    for (char **p = e->policies; *p; p++)
        if (!strcmp(*p, "*") || !strcmp(*p, label))
            return 1;
    return 0;
}

/* The template index of an expect's handler, -1 for the whole scenario. */
static int expect_tmpl(const struct scenario *s, const struct expect_def *e)
{
    if (e->wf < 0)
        return -1;
    int t = 0;
    for (int f = 0; f < e->wf; f++)
        t += s->wfs[f].nhandlers;
    return t + e->handler;
}

/* --- the child ----------------------------------------------------------------------------------- */

static void summarize(const struct scenario *s, const char *label, const struct sim_result *r, struct cli_probe *p)
{
    p->status = r->status;
    snprintf(p->status_msg, sizeof p->status_msg, "%s", r->status_msg);
    p->fingerprint = r->fingerprint;
    p->events = r->events;
    SIM_ASSERT(metric_count <= CLI_PROBE_METRICS);
    for (int m = 0; m < metric_count; m++)
        metric_get(&r->ck, -1, metric_table[m].name, &p->metric[m]);
    p->ncrashes = r->ck.ncrashes;
    for (uint32_t c = 0; c < r->ck.ncrashes; c++) {
        const struct crash_rec *cr = &r->ck.crashes[c];
        p->crash_unrestarted += cr->restart_us == SIM_NEVER;
        p->crash_lost += cr->lost;
        p->crash_double_effects += cr->double_effects;
        p->crash_stuck += cr->stuck;
    }
    p->nexpects = s->nexpects < CLI_PROBE_EXPECTS ? s->nexpects : CLI_PROBE_EXPECTS;
    for (uint32_t e = 0; e < p->nexpects; e++) {
        const struct expect_def *ex = &s->expects[e];
        double v = 0;
        /* a crashpoints line is judged over an exploration, not one run */
        p->expect[e].applies = (uint8_t)(cli_expect_applies(ex, label) && !ex->crashpoints);
        p->expect[e].ok = metric_get(&r->ck, expect_tmpl(s, ex), ex->metric, &v) == 0 && expect_holds(v, ex->op, ex->value);
        p->expect[e].measured = v;
    }
}

static _Noreturn void child(const struct scenario *s, const struct cli_target *t, uint64_t seed, uint64_t max_events,
                            int timeout_s, int res_fd, int err_fd)
{
    dup2(err_fd, 2);
    close(err_fd);
    signal(SIGALRM, SIG_DFL);
    if (timeout_s > 0)
        alarm((unsigned)timeout_s);
    struct sim_opts so = {.seed = seed, .max_events = max_events, .label = t->label};
    struct sim_result r;
    sim_run(s, t->ops, &t->ps, &so, &r);
    struct cli_probe *p = xcalloc(1, sizeof *p);
    summarize(s, t->label, &r, p);
    const char *b = (const char *)p;
    size_t left = sizeof *p;
    while (left) {
        ssize_t w = write(res_fd, b, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            _exit(3);
        b += w;
        left -= (size_t)w;
    }
    _exit(0);
}

/* --- the parent ---------------------------------------------------------------------------------- */

/* Reads fd to its end; keeps at most n - 1 bytes in buf. */
static void drain(int fd, char *buf, size_t n)
{
    size_t got = 0;
    char junk[4096];
    for (;;) {
        char *dst = got + 1 < n ? buf + got : junk;
        size_t room = got + 1 < n ? n - 1 - got : sizeof junk;
        ssize_t r = read(fd, dst, room);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        if (dst == buf + got)
            got += (size_t)r;
    }
    buf[got] = 0;
}

/* The line of err that says why (the first that names an error, else the
 * first), its varying numbers blanked: "0x..." and numbers after '=' or
 * '(' become '?'. */
static void crash_reason(const char *err, char *out, size_t n)
{
    static const char *const marks[] = {"internal error", "runtime error", "ERROR", "error"};
    const char *line = err;
    for (size_t m = 0; m < sizeof marks / sizeof marks[0]; m++) {
        const char *hit = strstr(err, marks[m]);
        if (hit) {
            while (hit > err && hit[-1] != '\n')
                hit--;
            line = hit;
            break;
        }
    }
    size_t o = 0;
    for (const char *c = line; *c && *c != '\n' && o + 2 < n; c++) {
        int hex = c[0] == '0' && c[1] == 'x';
        if (hex || ((c[0] >= '0' && c[0] <= '9') && c > line && (c[-1] == '=' || c[-1] == '('))) {
            out[o++] = '?';
            c += hex ? 2 : 0;
            while ((*c >= '0' && *c <= '9') || (hex && ((*c >= 'a' && *c <= 'f') || (*c >= 'A' && *c <= 'F'))))
                c++;
            c--;
            continue;
        }
        out[o++] = *c;
    }
    out[o] = 0;
}

static void how_it_ended(int st, const char *err, int timeout_s, struct cli_probe *p)
{
    p->crashed = 1;
    if (WIFSIGNALED(st)) {
        p->signal = WTERMSIG(st);
        if (p->signal == SIGALRM)
            snprintf(p->crash_msg, sizeof p->crash_msg, "no result within %d s (wall clock)", timeout_s);
        else
            snprintf(p->crash_msg, sizeof p->crash_msg, "killed by signal %d", p->signal);
    } else {
        p->exit_status = WEXITSTATUS(st);
    }
    if (err[0] && !(p->signal == SIGALRM))
        crash_reason(err, p->crash_msg, sizeof p->crash_msg);
    if (!p->crash_msg[0])
        snprintf(p->crash_msg, sizeof p->crash_msg, "exit status %d without a message", p->exit_status);
}

int cli_probe(const struct scenario *s, const struct cli_target *t, uint64_t seed, uint64_t max_events, int timeout_s,
              struct cli_probe *out, char *msg, size_t mn)
{
    memset(out, 0, sizeof *out);
    int res[2], err[2];
    if (pipe(res) != 0) {
        snprintf(msg, mn, "cannot start a simulation: %s", strerror(errno));
        return -1;
    }
    if (pipe(err) != 0) {
        snprintf(msg, mn, "cannot start a simulation: %s", strerror(errno));
        close(res[0]);
        close(res[1]);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(msg, mn, "cannot start a simulation: %s", strerror(errno));
        close(res[0]); close(res[1]); close(err[0]); close(err[1]);
        return -1;
    }
    if (pid == 0) {
        close(res[0]);
        close(err[0]);
        child(s, t, seed, max_events, timeout_s, res[1], err[1]);
    }
    close(res[1]);
    close(err[1]);
    char *text = xmalloc(65536);
    drain(err[0], text, 65536);
    close(err[0]);
    size_t got = 0;
    char *b = (char *)out;
    while (got < sizeof *out) {
        ssize_t r = read(res[0], b + got, sizeof *out - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(res[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (got != sizeof *out || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        memset(out, 0, sizeof *out);
        how_it_ended(st, text, timeout_s, out);
    }
    free(text);
    return 0;
}
