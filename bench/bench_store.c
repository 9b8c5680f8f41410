/* bench_store.c: writing one run to the results database.
 *
 * A scenario of ten workflows with ten handlers each (100 handler
 * templates, every one with latency or lateness samples) is simulated once
 * under oracle; its result is then written REPS times, each in its own
 * transaction, to a new database in a temporary folder.  Reports the rows
 * one run writes and the best CPU and wall times of a write (and the mean
 * wall time).  A figure, never a pass or a fail: the machine's load decides
 * the wall time.  (store.h gives about 20 ms for some 33 000 rows.) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "sim/sim.h"
#include "sim/store.h"
#include "sim/util.h"

#define REPS 10
#define NWF 10

static double clock_ms(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Ten workflows of five producers and five consumers. */
static char *scenario_text(size_t *len)
{
    size_t cap = 16384, n = 0;
    char *b = xmalloc(cap);
    n += (size_t)snprintf(b + n, cap - n, "name store_bench\nhorizon 2d\nseed 3\n");
    for (int f = 0; f < NWF; f++) {
        n += (size_t)snprintf(b + n, cap - n, "workflow w%d x 4\n", f);
        for (int h = 0; h < 5; h++)
            n += (size_t)snprintf(b + n, cap - n, "  producer p%d every %dm runs uniform(1s,30s) publish t%d\n", h,
                                  7 + h, h);
        for (int h = 0; h < 5; h++)
            n += (size_t)snprintf(b + n, cap - n, "  consumer c%d subscribe t%d fifo runs exp(2s)\n", h, h);
    }
    n += (size_t)snprintf(b + n, cap - n, "crash host random mtbf 6h mttr 5m\n");
    SIM_ASSERT(n < cap);
    *len = n;
    return b;
}

static int64_t count_rows(const char *path)
{
    sqlite3 *db;
    int64_t n = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *q;
        const char *sql = "SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM metrics)"
                          " + (SELECT count(*) FROM histograms) + (SELECT count(*) FROM crashes)"
                          " + (SELECT count(*) FROM run_timings)";
        if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
            n = sqlite3_column_int64(q, 0);
        sqlite3_finalize(q);
    }
    sqlite3_close(db);
    return n;
}

int main(void)
{
    size_t len;
    char *text = scenario_text(&len);
    struct scenario *s;
    struct diag d;
    if (scenario_parse_buf("store_bench.scn", text, len, &s, &d) != 0) {
        diag_print(&d);
        return 3;
    }
    const struct policy_ops *ops = policy_find("oracle");
    struct params ps;
    params_init(&ps, ops);
    struct sim_opts o = {.seed = s->seed};
    struct sim_result res;
    sim_run(s, ops, &ps, &o, &res);

    char dir[] = "/tmp/simrun-bench-store-XXXXXX", path[64];
    if (!mkdtemp(dir)) {
        perror("bench_store: mkdtemp");
        return 3;
    }
    snprintf(path, sizeof path, "%s/r.db", dir);
    struct store *st;
    char err[512];
    if (store_open(path, &st, err, sizeof err) != 0) {
        fprintf(stderr, "bench_store: %s\n", err);
        return 3;
    }
    struct store_run r = {.scn = s, .policy = "oracle", .base_policy = "oracle", .params = "", .seed = s->seed,
                          .version = "bench", .res = &res, .wall_us = 1};
    double best_cpu = 1e30, best_wall = 1e30, sum_wall = 0;
    for (int i = 0; i < REPS; i++) {
        int64_t id;
        double w0 = clock_ms(CLOCK_MONOTONIC), c0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
        if (store_write_run(st, &r, &id, err, sizeof err) != 0) {
            fprintf(stderr, "bench_store: %s\n", err);
            return 3;
        }
        double c = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c0, w = clock_ms(CLOCK_MONOTONIC) - w0;
        sum_wall += w;
        best_cpu = c < best_cpu ? c : best_cpu;
        best_wall = w < best_wall ? w : best_wall;
    }
    store_close(st);
    printf("store: one run of %" PRIu64 " templates, %" PRId64 " rows: best %.2f ms cpu, best %.2f ms wall, "
           "mean %.2f ms wall (%d writes)\n",
           (uint64_t)res.ck.ntmpl, count_rows(path) / REPS, best_cpu, best_wall, sum_wall / REPS, REPS);
    unlink(path);
    rmdir(dir);
    sim_result_free(&res);
    scenario_free(s);
    free(text);
    return 0;
}
