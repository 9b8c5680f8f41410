/* bench_pipeline.c: the full pipeline on a large bundled scenario.
 *
 * Parses bench/large.scn (500 workflow instances, a week, random crashes)
 * and simulates it under every registered policy: engine, workload,
 * scripts, policy and checker, everything but writing the database.  Each
 * policy runs REPS times; the median wall time gives events per second
 * (events popped from the queue) and the result's fingerprint is checked to
 * be the same every time.  Peak memory is the whole process's. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "sim/sim.h"
#include "sim/util.h"
#include "bench/bench_util.h"

#define REPS 3

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "bench/large.scn";
    struct scenario *s;
    struct diag d;
    double t0 = now_s();
    if (scenario_parse(path, &s, &d) != 0) {
        diag_print(&d);
        return 2;
    }
    double parse_s = now_s() - t0;
    printf("pipeline %s: %" PRIu64 " handler instances, parsed in %.1f ms\n", path, s->nhandler_instances,
           parse_s * 1e3);
    for (int i = 0; i < policy_registry_count; i++) {
        const struct policy_ops *ops = policy_registry[i];
        struct params ps;
        params_init(&ps, ops);
        double wall[REPS];
        uint64_t events = 0, fp = 0, items = 0;
        for (int r = 0; r < REPS; r++) {
            struct sim_opts o = {.seed = s->seed};
            struct sim_result res;
            t0 = now_s();
            sim_run(s, ops, &ps, &o, &res);
            wall[r] = now_s() - t0;
            if (r && (res.fingerprint != fp || res.events != events)) {
                fprintf(stderr, "bench_pipeline: %s is not deterministic\n", ops->name);
                return 3;
            }
            fp = res.fingerprint;
            events = res.events;
            items = res.ck.total.published;
            sim_result_free(&res);
        }
        qsort(wall, REPS, sizeof wall[0], cmp_double);
        double med = wall[REPS / 2];
        printf("pipeline %-11s %6.2f M ev/s  (%" PRIu64 " events, %" PRIu64 " items, median %.3f s of %d)\n",
               ops->name, (double)events / med / 1e6, events, items, med, REPS);
        fflush(stdout);
    }
    scenario_free(s);
    cal_zone_cache_free();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("pipeline: peak rss %.1f MiB\n", (double)ru.ru_maxrss / 1024.0);
    return 0;
}
