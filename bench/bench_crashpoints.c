/* bench_crashpoints.c: what prefix sharing saves in crash-point exploration.
 *
 * Explores the crash points of a scenario under one policy twice, one
 * child at a time (-j 1): with prefix sharing (the process forks at each
 * point, so the run up to it is simulated once for all points) and with
 * every point simulated from the start, from the scenario with its crash
 * line added (what `simrun crashpoints --rerun` does).  Prints the number of
 * points, both wall times and their ratio, and checks that both give the
 * same run at every point (fingerprints).
 *
 * Usage: bench_crashpoints [SCENARIO [POLICY [FROM_H TO_H [MAX]]]];
 * default bench/large.scn (500 services, a week) under wakeat, the points
 * of the last day, the first 12.  The cost of a point is its suffix with
 * sharing and a whole run without, so the later the window, the more
 * sharing saves; with runs much shorter than a fork (scenarios/nightly.scn
 * under wakeat takes about a millisecond) it saves nothing. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim/crashpoints.h"
#include "sim/util.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double explore(const struct scenario *s, const struct policy_ops *ops, const struct params *ps,
                      struct cp_opts *o, int rerun, struct cp_result *r)
{
    char err[512];
    o->rerun = rerun;
    double t0 = now_s();
    if (cp_explore(s, ops, ps, o, r, err, sizeof err) != 0) {
        fprintf(stderr, "bench_crashpoints: %s\n", err);
        exit(3);
    }
    return now_s() - t0;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "bench/large.scn";
    const char *policy = argc > 2 ? argv[2] : "wakeat";
    struct scenario *s;
    struct diag d;
    if (scenario_parse(path, &s, &d) != 0) {
        diag_print(&d);
        return 2;
    }
    const struct policy_ops *ops = policy_find(policy);
    if (!ops) {
        fprintf(stderr, "bench_crashpoints: no policy '%s'\n", policy);
        return 2;
    }
    struct params ps;
    params_init(&ps, ops);
    int64_t end_h = (s->horizon_us + s->drain_us) / US_PER_H;
    double from_h = argc > 4 ? atof(argv[3]) : (double)(s->horizon_us / US_PER_H - 24);
    double to_h = argc > 4 ? atof(argv[4]) : (double)(s->horizon_us / US_PER_H);
    if (from_h < 0)
        from_h = 0;
    struct cp_opts o = {.seed = s->seed, .from_us = (int64_t)(from_h * (double)US_PER_H),
                        .to_us = (int64_t)(to_h * (double)US_PER_H), .max = argc > 5 ? strtoull(argv[5], NULL, 10) : 12,
                        .down_us = cp_default_down(s), .jobs = 1};
    struct cp_result shared, rerun;
    double t_shared = explore(s, ops, &ps, &o, 0, &shared);
    double t_rerun = explore(s, ops, &ps, &o, 1, &rerun);
    int same = shared.npts == rerun.npts && shared.nerr == 0 && rerun.nerr == 0;
    for (size_t i = 0; same && i < shared.npts; i++)
        same = shared.pts[i].out.fingerprint == rerun.pts[i].out.fingerprint;
    printf("crashpoints %s under %s, crash instants %.1fh..%.1fh of %" PRId64 "h: %zu points (%" PRIu64
           " transitions in the window), %zu failing\n",
           path, policy, from_h, to_h, end_h, shared.npts, shared.ntransitions, shared.nfail);
    printf("  prefix shared (fork at each point):   %8.2f s\n", t_shared);
    printf("  every point from the start (--rerun): %8.2f s\n", t_rerun);
    printf("  ratio %.1fx; same run at every point: %s\n", t_shared > 0 ? t_rerun / t_shared : 0.0,
           same ? "yes" : "NO");
    cp_result_free(&shared);
    cp_result_free(&rerun);
    scenario_free(s);
    return same ? 0 : 3;
}
