/* bench_util.h: what every benchmark times with.  Benchmarks read the
 * wall clock (the simulation never does), and report medians. */
#ifndef SIM_BENCH_UTIL_H
#define SIM_BENCH_UTIL_H

#include <time.h>

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

#endif
