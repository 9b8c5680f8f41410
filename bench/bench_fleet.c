/* bench_fleet.c: one small workflow stamped out over a fleet.
 *
 * The workflow: a producer that polls a feed every 10 minutes (Poisson, 6
 * events an hour) and publishes what arrived to a FIFO consumer; the host
 * crashes once, for 5 minutes, half-way through the first day.  It is
 * stamped out N times and simulated for a horizon H under every registered
 * policy, for the fleet shapes below (the crash is at 12 h, or half-way
 * through a shorter horizon).  1 k x 30 d and 30 k x 1 d make the same
 * number of records (runs + items), so their ratio shows what spreading the
 * same work over more instances costs; 1 M x 1 d shows whether a large
 * fleet fits in memory at all.
 *
 * Each (shape, policy) runs in a child process of its own, so that its peak
 * RSS (from wait4) is its own and a run that exhausts memory or the
 * engine's limits only loses its own row.  REPS repetitions, the shapes
 * alternated within each, give a median CPU and wall time.  Printed per
 * row: events/s and records/s (per second of the child's CPU time, user +
 * system), peak RSS, and bytes per
 * live instance: of peak RSS, and of the engine's own count of its live
 * state (what the memory budget counts, sim/sim_mem.c).  Then, per policy,
 * the ratios against the targets of issue 14: the second shape's CPU time
 * over the first's (<= 1.5), peak RSS of the first two (<= 256 MiB), and of
 * the third (<= 4 GiB).  Benchmarks report; they never fail.
 *
 * Policies that run every job on a shared pool (vistimeout's and pgqueue's
 * workers, sqs's consumers, quartz's threads) get one worker per instance,
 * as a fleet's operators would size it: with the default pool (4 to 10
 * workers) a fleet's jobs pile up unprocessed, so the shapes would not do
 * the same work and the memory would be the backlog's, not the engine's.
 * FLEET_POOL=default keeps the defaults (the overloaded fleet).
 *
 * Environment: FLEET_SHAPES="1000x30d,30000x1d,1000000x1d" (the default),
 * FLEET_POLICIES="oracle,poll" (default: all), FLEET_REPS=1,
 * FLEET_MAX_GIB=20 (address-space limit of each child), FLEET_POOL=scaled
 * (the default) or default. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim/sim.h"
#include "sim/util.h"
#include "bench/bench_util.h"

#define MAX_SHAPES 8
#define MAX_REPS 9

struct shape {
    unsigned long n;
    char horizon[16];
};

struct row {
    int ok;
    double wall_s;                 /* median */
    double cpu_s;                  /* median of the child's user + system time */
    int n;                         /* repetitions so far */
    double wall[MAX_REPS], cpu[MAX_REPS];
    uint64_t events, records;
    uint64_t state_bytes;          /* the engine's count of its live state, at its peak */
    long maxrss_kib;               /* the largest over the repetitions */
    char why[160];
};

/* The horizon in hours (the shapes use d, h or m). */
static double horizon_h(const char *hz)
{
    double v = atof(hz);
    size_t n = strlen(hz);
    char u = n ? hz[n - 1] : 'h';
    return u == 'd' ? v * 24 : u == 'm' ? v / 60 : v;
}

/* The pool parameter of a policy that runs jobs on a shared pool, or NULL. */
static const char *pool_key(const struct policy_ops *ops)
{
    static const char *const keys[][2] = {
        {"vistimeout", "workers"}, {"pgqueue", "workers"}, {"sqs", "consumers"}, {"quartz", "thread_count"}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(ops->name, keys[i][0]) == 0)
            return keys[i][1];
    return NULL;
}

static int pool_scaled(void)
{
    const char *v = getenv("FLEET_POOL");
    return !v || strcmp(v, "default") != 0;
}

static char *fleet_text(const struct shape *sh)
{
    char *buf = xmalloc(1024);
    double crash_h = horizon_h(sh->horizon) < 24 ? horizon_h(sh->horizon) / 2 : 12;
    snprintf(buf, 1024,
             "name fleet\n"
             "start 2025-03-01T00:00:00Z\n"
             "horizon %s\n"
             "drain 1h\n"
             "seed 1\n"
             "workflow wf x %lu\n"
             "  producer fetch every 10m runs uniform(1s,3s) source feed\n"
             "  consumer handle subscribe feed fifo runs exp(2s)\n"
             "source feed poisson 6/h\n"
             "crash host at %.0fs for 5m\n",
             sh->horizon, sh->n, crash_h * 3600);
    return buf;
}

/* The child: parse, simulate, write "events records status" to fd. */
static void child(const struct shape *sh, const struct policy_ops *ops, int fd)
{
    struct rlimit rl;
    const char *gib = getenv("FLEET_MAX_GIB");
    rl.rlim_cur = rl.rlim_max = (rlim_t)(gib ? atof(gib) : 20.0) * 1024 * 1024 * 1024;
    setrlimit(RLIMIT_AS, &rl);
    char *text = fleet_text(sh);
    struct scenario *s;
    struct diag d;
    char out[320];
    if (scenario_parse_buf("fleet.scn", text, strlen(text), &s, &d) != 0) {
        snprintf(out, sizeof out, "0 0 line %d: %.200s", d.line, d.msg);
    } else {
        struct params ps;
        params_init(&ps, ops);
        const char *key = pool_key(ops);
        char n[32], msg[160];
        snprintf(n, sizeof n, "%lu", sh->n);
        if (key && pool_scaled() && params_set(&ps, key, n, msg, sizeof msg) != 0) {
            snprintf(out, sizeof out, "0 0 0 %s=%s: %.100s", key, n, msg);
            ssize_t w = write(fd, out, strlen(out));
            _exit(w > 0 ? 0 : 1);
        }
        struct sim_opts o = {.seed = s->seed, .max_memory = UINT64_MAX};
        struct sim_result res;
        sim_run(s, ops, &ps, &o, &res);
        snprintf(out, sizeof out, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %.200s", res.events,
                 res.ck.total.runs + res.ck.total.published, res.peak_memory,
                 res.status == SIM_OK ? "ok" : res.status_msg);
    }
    ssize_t w = write(fd, out, strlen(out));
    _exit(w > 0 ? 0 : 1);
}

/* One more repetition of a shape under a policy, into row (which a failed
 * one marks !ok, with why). */
static void measure_once(const struct shape *sh, const struct policy_ops *ops, struct row *row)
{
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(row->why, sizeof row->why, "pipe failed");
        row->ok = 0;
        return;
    }
    fflush(stdout);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        child(sh, ops, fds[1]);
    }
    close(fds[1]);
    char buf[320] = "";
    ssize_t got = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    int st = 0;
    struct rusage ru;
    wait4(pid, &st, 0, &ru);
    double wall = now_s() - t0;
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
                 (double)ru.ru_stime.tv_usec * 1e-6;
    if (ru.ru_maxrss > row->maxrss_kib)
        row->maxrss_kib = ru.ru_maxrss;
    uint64_t ev = 0, rec = 0, state = 0;
    char status[200] = "";
    if (got <= 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
        sscanf(buf, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %199[^\n]", &ev, &rec, &state, status) < 4) {
        snprintf(row->why, sizeof row->why, "child died (%s)",
                 WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "out of memory or bad output");
        row->ok = 0;
        return;
    }
    if (strcmp(status, "ok") != 0) {
        snprintf(row->why, sizeof row->why, "%s", status);
        row->ok = 0;
        return;
    }
    row->events = ev;
    row->records = rec;
    if (state > row->state_bytes)
        row->state_bytes = state;
    row->wall[row->n] = wall;
    row->cpu[row->n] = cpu;
    row->n++;
}

static double median(const double *v, int n)
{
    double s[MAX_REPS];
    memcpy(s, v, (size_t)n * sizeof *v);
    qsort(s, (size_t)n, sizeof s[0], cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* reps repetitions of every shape under one policy, the shapes alternated
 * (shape 0, 1, 2, then 0 again...), so that a machine whose speed drifts
 * from minute to minute moves the shapes of one repetition alike.  A shape
 * that fails once is not run again. */
static void measure(const struct shape *shapes, int nshapes, const struct policy_ops *ops, int reps,
                    struct row *rows)
{
    for (int k = 0; k < nshapes; k++)
        rows[k] = (struct row){.ok = 1};
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < nshapes; k++)
            if (rows[k].ok)
                measure_once(&shapes[k], ops, &rows[k]);
    for (int k = 0; k < nshapes; k++) {
        if (!rows[k].ok)
            continue;
        rows[k].wall_s = median(rows[k].wall, rows[k].n);
        rows[k].cpu_s = median(rows[k].cpu, rows[k].n);
    }
}

static int parse_shapes(const char *spec, struct shape *out)
{
    int n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *tok = strtok(buf, ","); tok && n < MAX_SHAPES; tok = strtok(NULL, ",")) {
        char *x = strchr(tok, 'x');
        if (!x)
            continue;
        *x = 0;
        out[n].n = strtoul(tok, NULL, 10);
        snprintf(out[n].horizon, sizeof out[n].horizon, "%s", x + 1);
        n++;
    }
    return n;
}

static int wanted(const char *list, const char *name)
{
    if (!list || !*list)
        return 1;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == 0))
            return 1;
    return 0;
}

static void print_row(const struct policy_ops *ops, const struct shape *sh, const struct row *row,
                      const struct row *first)
{
    char label[48];
    snprintf(label, sizeof label, "%lu x %s", sh->n, sh->horizon);
    const char *key = pool_key(ops);
    if (key && pool_scaled())
        snprintf(label + strlen(label), sizeof label - strlen(label), " %s=%lu", key, sh->n);
    if (!row->ok) {
        printf("fleet %-17s %-31s  did not complete: %s (peak RSS %.0f MiB)\n", ops->name, label, row->why,
               (double)row->maxrss_kib / 1024.0);
        return;
    }
    printf("fleet %-17s %-31s %6.2f M ev/s %6.2f M rec/s %6.1f M records %7.0f MiB %7.0f B/inst RSS %6.0f B/inst "
           "state  cpu %.2f s  wall %.2f s",
           ops->name, label, (double)row->events / row->cpu_s / 1e6, (double)row->records / row->cpu_s / 1e6,
           (double)row->records / 1e6, (double)row->maxrss_kib / 1024.0,
           (double)row->maxrss_kib * 1024.0 / (double)sh->n, (double)row->state_bytes / (double)sh->n, row->cpu_s,
           row->wall_s);
    if (first)
        printf("  (%.2fx the first shape's cpu)", row->cpu_s / first->cpu_s);
    printf("\n");
}

/* The targets of issue 14, for one policy: shapes 0 and 1 are the equal-work
 * pair, shape 2 the large fleet.  The time ratio is of CPU time (user +
 * system), which a shared machine's load disturbs much less than wall time:
 * the median of each repetition's ratio (its two shapes ran one after the
 * other), then the ratio of the medians and the wall-time ratio. */
static void print_targets(const struct policy_ops *ops, const struct row *rows, int nshapes)
{
    if (nshapes < 2)
        return;                    /* the targets need the equal-work pair */
    printf("fleet %-17s targets:", ops->name);
    if (nshapes >= 2 && rows[0].ok && rows[1].ok) {
        double pair[MAX_REPS];
        int n = rows[0].n < rows[1].n ? rows[0].n : rows[1].n;
        for (int r = 0; r < n; r++)
            pair[r] = rows[1].cpu[r] / rows[0].cpu[r];
        double ratio = median(pair, n);
        printf(" time ratio %.2f (<= 1.5: %s; of the medians %.2f, wall %.2f);", ratio,
               ratio <= 1.5 ? "met" : "not met", rows[1].cpu_s / rows[0].cpu_s, rows[1].wall_s / rows[0].wall_s);
    }
    long rss = 0;
    for (int k = 0; k < nshapes && k < 2; k++)
        if (rows[k].maxrss_kib > rss)
            rss = rows[k].maxrss_kib;
    printf(" peak RSS %.0f MiB (<= 256: %s)", (double)rss / 1024.0, rss <= 256 * 1024 ? "met" : "not met");
    if (nshapes >= 3)
        printf("; third shape %s, %.0f MiB (<= 4096: %s)", rows[2].ok ? "completed" : "did not complete",
               (double)rows[2].maxrss_kib / 1024.0, rows[2].ok && rows[2].maxrss_kib <= 4L << 20 ? "met" : "not met");
    printf("\n");
}

int main(void)
{
    struct shape shapes[MAX_SHAPES];
    const char *spec = getenv("FLEET_SHAPES");
    int nshapes = parse_shapes(spec ? spec : "1000x30d,30000x1d,1000000x1d", shapes);
    const char *pols = getenv("FLEET_POLICIES");
    int reps = getenv("FLEET_REPS") ? atoi(getenv("FLEET_REPS")) : 1;
    if (reps < 1)
        reps = 1;
    if (reps > MAX_REPS)
        reps = MAX_REPS;
    printf("fleet: %d repetition(s), median CPU (user + system) and wall time; rates per CPU second; peak RSS is each run's own; state: the engine's count of\n"
           "its live state at its peak (what --max-memory counts)\n", reps);
    for (int i = 0; i < policy_registry_count; i++) {
        const struct policy_ops *ops = policy_registry[i];
        if (!wanted(pols, ops->name))
            continue;
        struct row rows[MAX_SHAPES];
        measure(shapes, nshapes, ops, reps, rows);
        for (int k = 0; k < nshapes; k++)
            print_row(ops, &shapes[k], &rows[k], k > 0 && rows[0].ok ? &rows[0] : NULL);
        fflush(stdout);
        print_targets(ops, rows, nshapes);
    }
    return 0;
}
