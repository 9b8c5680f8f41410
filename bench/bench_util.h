/* bench_util.h: what every benchmark times with.  Benchmarks read the
 * wall clock (the simulation never does), and report medians; those that
 * time whole simulations load and repeat them with the helpers below. */
#ifndef SIM_BENCH_UTIL_H
#define SIM_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/sim.h"

/* Seconds on the monotonic clock. */
static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* qsort order of doubles, for medians. */
static inline int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* A scenario (from its file, or from text when text is not NULL) and a
 * policy with its default parameters, ready to simulate; 0, or 2 with the
 * reason printed (the scenario freed). */
static inline int bench_load(const char *who, const char *path, const char *text, const char *policy,
                             struct scenario **s, const struct policy_ops **ops, struct params *ps)
{
    struct diag d;
    if ((text ? scenario_parse_buf(path, text, strlen(text), s, &d) : scenario_parse(path, s, &d)) != 0) {
        diag_print(&d);
        return 2;
    }
    *ops = policy_find(policy);
    if (!*ops) {
        fprintf(stderr, "%s: no policy '%s'\n", who, policy);
        scenario_free(*s);
        return 2;
    }
    params_init(ps, *ops);
    return 0;
}

/* Simulates s reps times (at most 16), each to completion with the same
 * fingerprint and event count; *median_s is the median wall time and *last
 * the last repetition's result (the caller frees it).  0, or 3 with the
 * reason printed. */
static inline int bench_repeat(const char *who, const struct scenario *s, const struct policy_ops *ops,
                               const struct params *ps, int reps, double *median_s, struct sim_result *last)
{
    double wall[16];
    reps = reps < 1 ? 1 : reps > 16 ? 16 : reps;
    for (int r = 0; r < reps; r++) {
        struct sim_opts o = {.seed = s->seed};
        struct sim_result res;
        double t0 = now_s();
        sim_run(s, ops, ps, &o, &res);
        wall[r] = now_s() - t0;
        int same = r == 0 || (res.fingerprint == last->fingerprint && res.events == last->events);
        if (r)
            sim_result_free(last);
        *last = res;
        if (res.status != SIM_OK || !same) {
            fprintf(stderr, "%s: %s is not deterministic or did not complete\n", who, s->name);
            sim_result_free(last);
            return 3;
        }
    }
    qsort(wall, (size_t)reps, sizeof wall[0], cmp_double);
    *median_s = wall[reps / 2];
    return 0;
}

#endif
