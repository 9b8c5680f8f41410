/* bench_crashpoints.c: what prefix sharing saves in crash-point exploration.
 *
 * Explores the crash points of a scenario under one policy, one child at a
 * time (-j 1), REPS times each way, alternating which way goes first: with
 * prefix sharing (the process forks at each point, so the run up to it is
 * simulated once for all points) and with every point simulated from the
 * start, from the scenario with its crash line added (what `simrun
 * crashpoints --rerun` does).  Prints the number of points, every
 * repetition's wall times, their medians, and the median of the
 * repetitions' ratios (on a loaded machine the ratio is the figure to
 * quote: both ways share the same load); checks that both ways give the
 * same run at every point (fingerprints).
 *
 * Without arguments, two cases:
 *   - scenarios/nightly.scn under wakeat, every point of the week (a whole
 *     exploration of a scenario whose run takes milliseconds), 5 times;
 *   - bench/large.scn (500 services, a week) under wakeat, the first 12
 *     points of the last day, 3 times.
 * The cost of a point is its suffix with sharing and a whole run without,
 * plus a fork either way: the longer the run and the later the points, the
 * more sharing saves.
 *
 * Usage: bench_crashpoints [SCENARIO POLICY FROM_H TO_H MAX [REPS]]
 * (MAX 0: every point; REPS default 5). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim/crashpoints.h"
#include "sim/util.h"
#include "bench/bench_util.h"

#define MAX_REPS 50

struct bench_case {
    const char *path, *policy;
    double from_h, to_h;           /* to_h < 0: the horizon */
    uint64_t max;                  /* 0: every point */
    int reps;
};

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
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

/* 1 if both explorations give the same run at every point. */
static int same_runs(const struct cp_result *a, const struct cp_result *b)
{
    int same = a->npts == b->npts && a->nerr == 0 && b->nerr == 0;
    for (size_t i = 0; same && i < a->npts; i++)
        same = a->pts[i].out.fingerprint == b->pts[i].out.fingerprint;
    return same;
}

/* Runs one case; returns 0, or 2 for bad input, 3 if the two ways differ. */
static int bench(const struct bench_case *c)
{
    struct scenario *s;
    const struct policy_ops *ops;
    struct params ps;
    int rc = bench_load("bench_crashpoints", c->path, NULL, c->policy, &s, &ops, &ps);
    if (rc)
        return rc;
    double to_h = c->to_h < 0 ? (double)s->horizon_us / (double)US_PER_H : c->to_h;
    struct cp_opts o = {.seed = s->seed, .from_us = (int64_t)(c->from_h * (double)US_PER_H),
                        .to_us = (int64_t)(to_h * (double)US_PER_H), .max = c->max,
                        .down_us = cp_default_down(s), .jobs = 1};
    double ts[MAX_REPS], tr[MAX_REPS], ratio[MAX_REPS];
    int same = 1;
    size_t npts = 0, nfail = 0;
    uint64_t ntr = 0;
    printf("crashpoints %s under %s, crash instants %.1fh..%.1fh of %.1fh, %d repetitions:\n", c->path,
           c->policy, c->from_h, to_h, (double)(s->horizon_us + s->drain_us) / (double)US_PER_H, c->reps);
    for (int k = 0; k < c->reps; k++) {
        struct cp_result shared, rerun;
        if (k % 2) {
            tr[k] = explore(s, ops, &ps, &o, 1, &rerun);
            ts[k] = explore(s, ops, &ps, &o, 0, &shared);
        } else {
            ts[k] = explore(s, ops, &ps, &o, 0, &shared);
            tr[k] = explore(s, ops, &ps, &o, 1, &rerun);
        }
        ratio[k] = ts[k] > 0 ? tr[k] / ts[k] : 0.0;
        same &= same_runs(&shared, &rerun);
        npts = shared.npts, nfail = shared.nfail, ntr = shared.ntransitions;
        printf("  #%d  prefix shared %8.2f s   from the start %8.2f s   ratio %.2fx\n", k + 1, ts[k], tr[k],
               ratio[k]);
        cp_result_free(&shared);
        cp_result_free(&rerun);
    }
    int n = c->reps;
    printf("  %zu points (%" PRIu64 " transitions in the window), %zu failing\n", npts, ntr, nfail);
    printf("  median: prefix shared (fork at each point) %.2f s, every point from the start (--rerun) "
           "%.2f s\n", median(ts, n), median(tr, n));
    printf("  median ratio %.2fx; same run at every point: %s\n", median(ratio, n), same ? "yes" : "NO");
    scenario_free(s);
    return same ? 0 : 3;
}

int main(int argc, char **argv)
{
    static const struct bench_case dflt[] = {
        {"scenarios/nightly.scn", "wakeat", 0, -1, 0, 5},
        {"bench/large.scn", "wakeat", 144, 168, 12, 3},
    };
    if (argc > 1 && argc != 6 && argc != 7) {
        fprintf(stderr, "usage: bench_crashpoints [SCENARIO POLICY FROM_H TO_H MAX [REPS]]\n");
        return 2;
    }
    if (argc > 1) {
        struct bench_case c = {argv[1], argv[2], atof(argv[3]), atof(argv[4]), strtoull(argv[5], NULL, 10),
                               argc > 6 ? atoi(argv[6]) : 5};
        if (c.reps < 1 || c.reps > MAX_REPS || c.from_h < 0) {
            fprintf(stderr, "bench_crashpoints: REPS is 1..%d, FROM_H >= 0\n", MAX_REPS);
            return 2;
        }
        return bench(&c);
    }
    int rc = 0;
    for (size_t i = 0; i < sizeof dflt / sizeof dflt[0]; i++) {
        int r = bench(&dflt[i]);
        rc = rc ? rc : r;
    }
    return rc;
}
