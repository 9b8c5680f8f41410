/* test_engine.c: engine properties that no real policy would show: a
 * livelocking policy is stopped and reported, not hung; a crash really
 * destroys volatile state and keeps durable state; tickers cost events only
 * where they are armed but count every tick as a wake-up. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/util.h"
#include "tests/simtest.h"

static struct scenario *parse(const char *text) { return simtest_parse("engine.scn", text); }

/* --- a policy that restarts every consumer the instant its run ends ------- */

struct policy {
    struct sim *sim;
    int mode;
    int *durable_creates;
    int volatile_marker;
};

static struct policy *spin_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct policy *p = xcalloc(1, sizeof *p);
    p->sim = sim;
    p->durable_creates = durable;
    ++*p->durable_creates;
    return p;
}
static void spin_destroy(struct policy *p) { free(p); }
static void spin_all(struct policy *p)
{
    const struct sim_topo *t = sim_topo(p->sim);
    for (uint32_t h = 0; h < t->nh; h++) {
        struct run_req rq = RUN_REQ_INIT;
        rq.handler = h;
        sim_run_start(p->sim, &rq);
    }
}
static void spin_start(struct policy *p, int restart, int64_t now) { spin_all(p); }
static void spin_publish(struct policy *p, uint32_t h, uint64_t item, int64_t now) {}
static void spin_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now)
{
    sim_timer_at(p->sim, now, 1, 0); /* a timer that re-arms itself at the same instant */
}
static void spin_end(struct policy *p, const struct run_result *r, int64_t now)
{
    struct run_req rq = RUN_REQ_INIT;
    rq.handler = r->handler;
    sim_run_start(p->sim, &rq);
}

static const struct policy_ops spin_ops = {
    .abi = POLICY_ABI, .name = "spin", .summary = "test", .seeds = "test",
    .durable_size = sizeof(int), .promise = PROMISE_HANDLER,
    .create = spin_create, .destroy = spin_destroy, .start = spin_start,
    .on_publish = spin_publish, .on_timer = spin_timer, .on_run_end = spin_end,
};

/* Empty runs of zero duration, forever, at one instant. */
static void test_livelock_same_instant(void **state)
{
    (void)state;
    struct scenario *s = parse("horizon 1d\nworkflow w\n  consumer c subscribe t fifo runs 1s\n");
    struct params ps = {0};
    struct sim_opts o = {.seed = 1};
    struct sim_result r;
    sim_run(s, &spin_ops, &ps, &o, &r);
    assert_int_equal(r.status, SIM_LIVELOCK);
    assert_non_null(strstr(r.status_msg, "livelock"));
    assert_true(r.end_us == 0);
    sim_result_free(&r);
    scenario_free(s);
}

/* Empty runs of 1 ms each: time advances, but a year of this would be 3e10
 * events; the streak rule stops it after 1e5 runs. */
static void test_livelock_busy_streak(void **state)
{
    (void)state;
    struct scenario *s = parse("horizon 365d\nworkflow w\n  consumer c subscribe t fifo runs 1s idle 1ms\n");
    struct params ps = {0};
    struct sim_opts o = {.seed = 1};
    struct sim_result r;
    sim_run(s, &spin_ops, &ps, &o, &r);
    assert_int_equal(r.status, SIM_LIVELOCK);
    assert_non_null(strstr(r.status_msg, "w.c"));
    assert_true(r.end_us < 200 * US_PER_S);
    sim_result_free(&r);
    scenario_free(s);
}

/* A timer re-armed at the same instant, forever. */
static void spin_start_timer(struct policy *p, int restart, int64_t now) { sim_timer_at(p->sim, now, 1, 0); }
static void test_livelock_timer(void **state)
{
    (void)state;
    struct policy_ops ops = spin_ops;
    ops.start = spin_start_timer;
    struct scenario *s = parse("horizon 1d\nworkflow w\n  consumer c subscribe t fifo runs 1s\n");
    struct params ps = {0};
    struct sim_opts o = {.seed = 1};
    struct sim_result r;
    sim_run(s, &ops, &ps, &o, &r);
    assert_int_equal(r.status, SIM_LIVELOCK);
    sim_result_free(&r);
    scenario_free(s);
}

/* A large world is no livelock, under any policy: 300 000 instances of a
 * daily producer and its consumer, whose runs take no time, start 600 000
 * runs at t = 0 (with their timers, ticks, publishes and phases, some three
 * million events at one instant), one per handler, each with progress.
 * The former rule, a million policy events at one instant, stopped every
 * policy here at t = 0. */
static void test_no_livelock_large_world(void **state)
{
    (void)state;
    const char *text = "horizon 1m\ndrain 0\nworkflow w x 300000\n  producer p every 1d runs 0 publish t\n"
                       "  consumer c subscribe t fifo runs 0\n";
    for (int i = 0; i < policy_registry_count; i++) {
        struct sim_result r;
        simtest_run(text, policy_registry[i]->name, NULL, 0, 0, &r);
        if (r.status != SIM_OK)
            fail_msg("%s: %s", policy_registry[i]->name, r.status_msg);
        assert_false(r.ck.livelock);
        if (!strcmp(policy_registry[i]->name, "oracle"))
            assert_true(r.ck.total.runs == 600000 && r.ck.total.processed == 300000);
        sim_result_free(&r);
    }
}

/* Prefetching the next event's records (sim.c) is a hint to the memory
 * system only: a fleet whose live state is past the threshold gives the
 * same fingerprint, events and metrics with it and without it (and under
 * the sanitizers, its reads stay in bounds). */
static void test_prefetch_changes_nothing(void **state)
{
    (void)state;
    struct scenario *s = parse("horizon 2h\ndrain 10m\nworkflow wf x 8000\n"
                               "  producer fetch every 10m runs uniform(1s,3s) source feed\n"
                               "  consumer handle subscribe feed fifo runs exp(2s)\n"
                               "source feed poisson 6/h\ncrash host at 1h for 5m\n"
                               "fail wf.handle transient 5%\nfail wf.fetch indeterminate 2%\n");
    /* One policy per checker promise (none, workflow, unit, handler), and
     * the ways a policy names what to prefetch: rows per handler and per
     * instance, timers and alarms that wake a handler (conrun's too), the
     * job rows of its runs (sim_declare_run_rows), and handlers named ahead
     * (sim_prefetch_handler, interval's loop); and ticks (sqs keeps a
     * ticker per consumer). */
    static const char *const pols[] = {"oracle", "heartbeat", "pgqueue",     "poll", "wakeat",
                                       "systemd_timer", "interval", "k8s_cronjob", "sqs"};
    for (size_t i = 0; i < sizeof pols / sizeof *pols; i++) {
        const struct policy_ops *ops = policy_find(pols[i]);
        assert_non_null(ops);
        struct params ps;
        assert_int_equal(params_init(&ps, ops), 0);
        struct sim_result on, off;
        sim_run(s, ops, &ps, &(struct sim_opts){.seed = 3}, &on);
        sim_run(s, ops, &ps, &(struct sim_opts){.seed = 3, .no_prefetch = 1}, &off);
        if (on.status != SIM_OK || off.status != SIM_OK)
            fail_msg("%s: %s / %s", pols[i], on.status_msg, off.status_msg);
        if (!on.prefetched || off.prefetched)
            fail_msg("%s: prefetched %d with, %d without (peak state %llu bytes)", pols[i], on.prefetched,
                     off.prefetched, (unsigned long long)on.peak_memory);
        assert_true(on.fingerprint == off.fingerprint);
        assert_true(on.events == off.events && on.end_us == off.end_us);
        assert_true(on.ck.total.runs == off.ck.total.runs && on.ck.total.processed == off.ck.total.processed);
        if (on.ck.total.runs < 1000)
            fail_msg("%s: %llu runs", pols[i], (unsigned long long)on.ck.total.runs);
        const struct metrics *a = &on.ck.total, *b = &off.ck.total;
        assert_true(a->duplicates == b->duplicates && a->runs_failed == b->runs_failed &&
                    a->runs_crashed == b->runs_crashed);
        assert_true(a->latency.count == b->latency.count && a->latency.sum_us == b->latency.sum_us &&
                    a->latency.max_us == b->latency.max_us);
        sim_result_free(&on);
        sim_result_free(&off);
    }
    scenario_free(s);
}

/* The pairing index of `correlate` consumers (sim_load.c) only spares
 * reading the backlog: random correlating workflows (few or many keys,
 * one topic much busier than the other, a third topic the script ignores, a
 * FIFO consumer of one of its topics beside it, failures, a crash) give
 * the same fingerprint, events and metrics with it and without it, under
 * every policy. */
static void test_pair_index_changes_nothing(void **state)
{
    (void)state;
    uint64_t x = 0x5eed;
    for (int k = 0; k < 10; k++) {
        uint64_t r[8];
        for (int i = 0; i < 8; i++) {
            x = x * 6364136223846793005u + 1442695040888963407u;
            r[i] = x >> 33;
        }
        static const char *const runs[] = {"uniform(1s,30s)", "exp(10s)", "0", "2m"};
        char text[1024];
        snprintf(text, sizeof text,
                 "horizon %dh\ndrain 30m\nseed %d\nworkflow w x %d\n"
                 "  consumer c subscribe a,b%s correlate a b runs %s\n%s"
                 "publish a poisson %d/h keys %d\npublish b poisson %d/h keys %d\n%s%s%s",
                 2 + (int)(r[0] % 5), k, 1 + (int)(r[1] % 3), r[2] & 1 ? ",z" : "", runs[r[3] % 4],
                 r[2] & 2 ? "  consumer f subscribe a fifo runs 2s\n" : "", 5 + (int)(r[4] % 200),
                 1 + (int)(r[5] % 40), 1 + (int)(r[6] % 60), 1 + (int)(r[5] % 40),
                 r[2] & 1 ? "publish z poisson 30/h\n" : "", r[7] & 1 ? "fail w.c transient 10%\n" : "",
                 r[7] & 2 ? "crash host at 1h for 10m\n" : "");
        struct scenario *s = parse(text);
        for (int p = 0; p < policy_registry_count; p++) {
            const struct policy_ops *ops = policy_registry[p];
            struct params ps;
            assert_int_equal(params_init(&ps, ops), 0);
            struct sim_result on, off;
            sim_run(s, ops, &ps, &(struct sim_opts){.seed = 1}, &on);
            sim_run(s, ops, &ps, &(struct sim_opts){.seed = 1, .no_pair_index = 1}, &off);
            const struct metrics *a = &on.ck.total, *b = &off.ck.total;
            if (on.status != off.status || on.fingerprint != off.fingerprint || on.events != off.events ||
                on.end_us != off.end_us || a->published != b->published || a->processed != b->processed ||
                a->lost != b->lost || a->stranded != b->stranded || a->duplicates != b->duplicates ||
                a->runs != b->runs || a->runs_empty != b->runs_empty || a->busy_loops != b->busy_loops ||
                a->wakeups != b->wakeups || a->latency.count != b->latency.count ||
                a->latency.sum_us != b->latency.sum_us || a->latency.max_us != b->latency.max_us)
                fail_msg("%s differs with the pairing index (runs %llu / %llu, processed %llu / %llu) on:\n%s",
                         ops->name, (unsigned long long)a->runs, (unsigned long long)b->runs,
                         (unsigned long long)a->processed, (unsigned long long)b->processed, text);
            if (p == 0 && (a->processed == 0 || a->runs == 0))
                fail_msg("nothing paired under %s on:\n%s", ops->name, text);
            sim_result_free(&on);
            sim_result_free(&off);
        }
        scenario_free(s);
    }
}

/* --- a policy that keeps thousands of durable blocks ---------------------- */

#define NBLOCKS 3000

struct blocks_durable {
    unsigned char **b;             /* [NBLOCKS], NULL once freed */
    size_t *len;
    int creates;
    int checked;                   /* creates that found every kept block intact */
};

static struct blocks_durable blocks_seen; /* the durable state as the last create left it */

static unsigned char block_byte(size_t k, size_t j) { return (unsigned char)(k * 31 + j * 7 + 1); }

static int block_ok(const struct blocks_durable *d, size_t k)
{
    for (size_t j = 0; j < d->len[k]; j++)
        if (d->b[k][j] != block_byte(k, j))
            return 0;
    return 1;
}

/* The first create allocates, grows every third block and frees every
 * other one in a scattered order; a create after the crash finds the kept
 * blocks as they were. */
static struct policy *blocks_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct blocks_durable *d = durable;
    struct policy *p = xcalloc(1, sizeof *p);
    p->sim = sim;
    if (d->creates++ == 0) {
        d->b = sim_dalloc(sim, NBLOCKS * sizeof *d->b);
        d->len = sim_dalloc(sim, NBLOCKS * sizeof *d->len);
        for (size_t k = 0; k < NBLOCKS; k++) {
            d->len[k] = 1 + k % 97;
            d->b[k] = sim_dalloc(sim, d->len[k]);
            for (size_t j = 0; j < d->len[k]; j++)
                d->b[k][j] = block_byte(k, j);
        }
        for (size_t k = 0; k < NBLOCKS; k += 3) {
            size_t n = d->len[k] * 50; /* past the small sizes: the block moves */
            d->b[k] = sim_drealloc(sim, d->b[k], n);
            for (size_t j = d->len[k]; j < n; j++)
                d->b[k][j] = block_byte(k, j);
            d->len[k] = n;
        }
        for (size_t i = 0; i < NBLOCKS; i++) {
            size_t k = (i * 1237) % NBLOCKS; /* every block once, scattered */
            if (k % 2 == 0) {
                sim_dfree(sim, d->b[k]);
                d->b[k] = NULL;
            }
        }
    }
    int ok = 1;
    for (size_t k = 0; k < NBLOCKS; k++)
        if (d->b[k] && !block_ok(d, k))
            ok = 0;
    d->checked += ok;
    blocks_seen = *d;
    return p;
}
static void blocks_start(struct policy *p, int restart, int64_t now) {}

static const struct policy_ops blocks_ops = {
    .abi = POLICY_ABI, .name = "blocks", .summary = "test", .seeds = "test",
    .durable_size = sizeof(struct blocks_durable), .promise = PROMISE_HANDLER,
    .create = blocks_create, .destroy = spin_destroy, .start = blocks_start,
    .on_publish = spin_publish, .on_timer = spin_timer, .on_run_end = spin_end,
};

/* sim_dalloc's blocks are found in O(1) by address: thousands of them are
 * grown and freed in any order, and the kept ones survive a crash intact. */
static void test_durable_blocks(void **state)
{
    (void)state;
    struct scenario *s = parse("horizon 1h\nworkflow w\n  consumer c subscribe t fifo runs 1s\n"
                               "crash host at 30m for 1m\n");
    struct params ps = {0};
    struct sim_result r;
    sim_run(s, &blocks_ops, &ps, &(struct sim_opts){.seed = 1}, &r);
    assert_int_equal(r.status, SIM_OK);
    assert_int_equal(r.ck.crashes_total, 1);
    assert_int_equal(blocks_seen.creates, 2); /* at the start and at the restart */
    assert_int_equal(blocks_seen.checked, 2);
    sim_result_free(&r);
    scenario_free(s);
}

/* A producer's publish finds its topic's subscribers in handler_out when
 * there are one to six, else in the world's tables: every count, and an
 * orphan topic, gives each subscriber one item per event. */
static void test_publish_reach(void **state)
{
    (void)state;
    static const unsigned nsubs[] = {0, 1, 6, 7, 9};
    char text[4096];
    int n = snprintf(text, sizeof text, "horizon 1h\ndrain 10m\nworkflow wf x 3\n");
    for (size_t i = 0; i < sizeof nsubs / sizeof *nsubs; i++)
        n += snprintf(text + n, sizeof text - (size_t)n, "  producer p%zu every 10m runs 1s publish t%zu 2\n", i, i);
    for (size_t i = 0; i < sizeof nsubs / sizeof *nsubs; i++)
        for (unsigned k = 0; k < nsubs[i]; k++)
            n += snprintf(text + n, sizeof text - (size_t)n, "  consumer c%zu_%u subscribe t%zu fifo runs 1s\n", i, k, i);
    assert_true(n < (int)sizeof text);
    struct scenario *s = parse(text);
    const struct policy_ops *ops = policy_find("oracle");
    struct params ps;
    assert_int_equal(params_init(&ps, ops), 0);
    struct sim_result r;
    sim_run(s, ops, &ps, &(struct sim_opts){.seed = 1}, &r);
    assert_int_equal(r.status, SIM_OK);
    /* Six runs a producer (at 0, 10m, ..., 50m) in each of three instances,
     * two events a run: 36 items for each subscriber, in template order
     * after the five producers. */
    uint32_t t = 5, consumers = 0;
    for (size_t i = 0; i < sizeof nsubs / sizeof *nsubs; i++)
        for (unsigned k = 0; k < nsubs[i]; k++, t++, consumers++) {
            assert_true(t < r.ck.ntmpl);
            if (r.ck.per_tmpl[t].published != 36 || r.ck.per_tmpl[t].processed != 36)
                fail_msg("topic t%zu, subscriber %u: %llu published, %llu processed", i, k,
                         (unsigned long long)r.ck.per_tmpl[t].published,
                         (unsigned long long)r.ck.per_tmpl[t].processed);
        }
    assert_int_equal(t, r.ck.ntmpl);
    assert_true(r.ck.total.published == 36 * (uint64_t)consumers);
    sim_result_free(&r);
    scenario_free(s);
}

/* The livelock rule per handler: the oracle retries a failed run at once;
 * a consumer whose every run fails at once is started again and again at
 * one instant with no progress, and is stopped after SIM_LIVELOCK_RUNS. */
static void test_livelock_per_handler(void **state)
{
    (void)state;
    struct scenario *s = parse("horizon 1h\nworkflow w\n  consumer c subscribe t fifo runs 0\n"
                               "publish t at 10m\nfail w.c transient 100%\n");
    struct params ps = {0};
    struct sim_opts o = {.seed = 1};
    struct sim_result r;
    sim_run(s, policy_find("oracle"), &ps, &o, &r);
    assert_int_equal(r.status, SIM_LIVELOCK);
    assert_non_null(strstr(r.status_msg, "handler w.c started more than 100000 runs at 00:10:00"));
    assert_true(r.end_us == 10 * US_PER_MIN);
    assert_true(r.ck.total.runs_failed == SIM_LIVELOCK_RUNS);
    assert_true(r.ck.livelock);
    sim_result_free(&r);
    scenario_free(s);
}

/* --- durable vs volatile ------------------------------------------------- */

static int starts_seen, restarts_seen, marker_after_restart;
static struct policy *dv_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct policy *p = spin_create(sim, durable, ps);
    return p;
}
static void dv_start(struct policy *p, int restart, int64_t now)
{
    if (restart) {
        restarts_seen++;
        marker_after_restart = p->volatile_marker;
    } else {
        starts_seen++;
    }
    p->volatile_marker = 42;
}
static void dv_nothing_end(struct policy *p, const struct run_result *r, int64_t now) {}

static void test_crash_recreates_volatile(void **state)
{
    (void)state;
    struct policy_ops ops = spin_ops;
    ops.create = dv_create;
    ops.start = dv_start;
    ops.on_run_end = dv_nothing_end;
    struct scenario *s = parse("horizon 1d\nworkflow w\n  consumer c subscribe t fifo runs 1s\n"
                               "crash host at 1h for 1m\ncrash host at 5h for 1m\n");
    struct params ps = {0};
    struct sim_opts o = {.seed = 1};
    struct sim_result r;
    starts_seen = restarts_seen = 0;
    marker_after_restart = -1;
    sim_run(s, &ops, &ps, &o, &r);
    assert_int_equal(starts_seen, 1);
    assert_int_equal(restarts_seen, 2);
    assert_int_equal(marker_after_restart, 0); /* volatile state was rebuilt from nothing */
    assert_int_equal(r.ck.ncrashes, 2);
    sim_result_free(&r);
    scenario_free(s);
}

/* --- tickers ----------------------------------------------------------------- */

/* Runs the spin policy with these hooks (create NULL: spin's own) over one
 * consumer for the horizon, no drain. */
static void run_hooks(struct policy *(*create)(struct sim *, void *, const struct params *),
                      void (*start)(struct policy *, int, int64_t),
                      void (*on_timer)(struct policy *, uint32_t, uint64_t, int64_t), const char *horizon,
                      struct sim_result *r)
{
    struct policy_ops ops = spin_ops;
    if (create)
        ops.create = create;
    ops.start = start;
    ops.on_timer = on_timer;
    ops.on_run_end = dv_nothing_end;
    char text[160];
    snprintf(text, sizeof text, "horizon %s\ndrain 0s\nworkflow w\n  consumer c subscribe t fifo runs 1s\n", horizon);
    struct scenario *s = parse(text);
    struct params ps = {0};
    struct sim_opts o = {.seed = 1};
    sim_run(s, &ops, &ps, &o, r);
    scenario_free(s);
}

static int ticks_delivered;
static int the_ticker;
static void tk_start(struct policy *p, int restart, int64_t now)
{
    the_ticker = sim_ticker_new(p->sim, US_PER_S, 7);
    sim_ticker_arm(p->sim, the_ticker, 10 * US_PER_DAY + 1);
}
static void tk_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now)
{
    assert_int_equal(tag, 7);
    assert_true(now == 10 * US_PER_DAY + US_PER_S); /* the first tick at or after the armed instant */
    ticks_delivered++;
}

/* A one-second check loop over 30 days armed once: 2.6 M wake-ups counted,
 * a handful of events processed. */
static void test_ticker_costs_nothing(void **state)
{
    (void)state;
    struct sim_result r;
    ticks_delivered = 0;
    run_hooks(NULL, tk_start, tk_timer, "30d", &r);
    assert_int_equal(r.status, SIM_OK);
    assert_int_equal(ticks_delivered, 1);
    assert_true(r.events < 10);
    /* ticks at 1s .. 30d-1s: the tick at the end does not happen */
    assert_true(r.ck.total.wakeups == (uint64_t)(30 * 86400 - 1));
    sim_result_free(&r);
}

/* A ticker stopped after 10 s of a 1 s loop counts its 9 ticks (1s..9s;
 * the tick at 10 s is the stop) and no more; a new one started then counts
 * from there: 50 s to the end at 1m (ticks 11s..59s: 49). */
static void tk2_start(struct policy *p, int restart, int64_t now)
{
    the_ticker = sim_ticker_new(p->sim, US_PER_S, 7);
    sim_timer_at(p->sim, 10 * US_PER_S, 8, 0);
}
static void tk2_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now)
{
    sim_ticker_stop(p->sim, the_ticker);
    sim_ticker_stop(p->sim, the_ticker);
    sim_ticker_new(p->sim, US_PER_S, 7);
}
static void test_ticker_stop(void **state)
{
    (void)state;
    struct sim_result r;
    run_hooks(NULL, tk2_start, tk2_timer, "1m", &r);
    /* 9 + 49 ticks, plus the one timer */
    assert_true(r.ck.total.wakeups == 9 + 49 + 1);
    sim_result_free(&r);
}

/* Tickers made and stopped over and over (a consumer's loop that starts
 * again whenever the consumer waits again) cost what the live ones cost:
 * a day of one new ticker a second holds as much memory at its peak as an
 * hour of it.  A stopped ticker's handle stays harmless (arming it delivers
 * nothing), and a ticker made at the start, long-lived among them, still
 * ticks when armed. */
static int churn_ticker, long_ticker, long_ticks, stale_ticks, churn_timers;
static void tk4_start(struct policy *p, int restart, int64_t now)
{
    long_ticker = sim_ticker_new(p->sim, US_PER_H, 1);
    sim_ticker_arm(p->sim, long_ticker, 23 * US_PER_H - 1);
    churn_ticker = sim_ticker_new(p->sim, US_PER_S, 2);
    sim_timer_at(p->sim, now + US_PER_S, 3, 0);
}
static void tk4_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now)
{
    if (tag == 1) {
        assert_true(now == 23 * US_PER_H || now == US_PER_H);
        long_ticks++;
        return;
    }
    if (tag == 2) {
        stale_ticks++;
        return;
    }
    churn_timers++;
    sim_ticker_stop(p->sim, churn_ticker);
    sim_ticker_arm(p->sim, churn_ticker, now); /* stopped: nothing */
    int next = sim_ticker_new(p->sim, US_PER_S, 2);
    assert_true(next > churn_ticker);
    churn_ticker = next;
    sim_timer_at(p->sim, now + US_PER_S, 3, 0);
}
static uint64_t churn_peak(const char *horizon, int expect_long)
{
    struct sim_result r;
    long_ticks = stale_ticks = churn_timers = 0;
    run_hooks(NULL, tk4_start, tk4_timer, horizon, &r);
    assert_int_equal(r.status, SIM_OK);
    assert_int_equal(long_ticks, expect_long);
    assert_int_equal(stale_ticks, 0);
    assert_true(churn_timers >= 3599);
    uint64_t peak = r.peak_memory;
    sim_result_free(&r);
    return peak;
}
static void test_ticker_churn(void **state)
{
    (void)state;
    uint64_t hour = churn_peak("1h", 0), day = churn_peak("1d", 1);
    assert_true(churn_timers >= 86399);
    assert_true(day <= hour + 4096);
}

/* The timer rule of the livelock check: more than SIM_LIVELOCK_TIMERS
 * timers at one instant with nothing started stop the run, unless the
 * policy declared a pool whose idle workers may all poll at once (4 more
 * per worker). */
static uint64_t pool_declared;
static int pool_fired;
static struct policy *pl_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct policy *p = spin_create(sim, durable, ps);
    if (pool_declared)
        sim_declare_pool(sim, pool_declared);
    return p;
}
static void pl_start(struct policy *p, int restart, int64_t now)
{
    for (int i = 0; i < SIM_LIVELOCK_TIMERS + 10; i++)
        sim_timer_at(p->sim, US_PER_S, 1, 0);
}
static void pl_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now) { pool_fired++; }
static enum sim_status pool_run(uint64_t declared)
{
    struct sim_result r;
    pool_declared = declared;
    pool_fired = 0;
    run_hooks(pl_create, pl_start, pl_timer, "1m", &r);
    enum sim_status st = r.status;
    sim_result_free(&r);
    return st;
}
static void test_declared_pool(void **state)
{
    (void)state;
    assert_int_equal(pool_run(0), SIM_LIVELOCK);
    assert_int_equal(pool_run(2), SIM_LIVELOCK); /* 8 more is not enough for 20 */
    assert_int_equal(pool_run(10), SIM_OK);
    assert_int_equal(pool_fired, SIM_LIVELOCK_TIMERS + 10);
}

/* sim_run_taken gives a run's reservation; sim_note writes the policy's own
 * trace lines. */
static uint32_t taken_seen;
static void tk3_publish(struct policy *p, uint32_t h, uint64_t item, int64_t now)
{
    if (sim_pending_count(p->sim, h) < 2)
        return;
    struct run_req rq = RUN_REQ_INIT;
    rq.handler = h;
    uint64_t run = sim_run_start(p->sim, &rq);
    uint32_t n;
    const uint64_t *t = sim_run_taken(p->sim, run, &n);
    taken_seen = n;
    assert_true(n == 2 && t[0] == 0 && t[1] == 1);
    sim_note(p->sim, h, "started run %llu for %u items", (unsigned long long)run, n);
}
static void tk3_start(struct policy *p, int restart, int64_t now) {}
static void test_run_taken_and_notes(void **state)
{
    (void)state;
    struct policy_ops ops = spin_ops;
    ops.start = tk3_start;
    ops.on_publish = tk3_publish;
    ops.on_run_end = dv_nothing_end;
    struct scenario *s = parse("horizon 1h\nworkflow w\n  consumer c subscribe t fifo runs 1s\npublish t at 1m count 2\n");
    struct params ps = {0};
    FILE *tf = tmpfile();
    assert_non_null(tf);
    struct sim_opts o = {.seed = 1, .trace = tf, .label = "t"};
    struct sim_result r;
    sim_run(s, &ops, &ps, &o, &r);
    assert_int_equal(taken_seen, 2);
    rewind(tf);
    char line[256];
    int found = 0;
    while (fgets(line, sizeof line, tf))
        found |= strstr(line, " note ") && strstr(line, "started run 1 for 2 items");
    assert_true(found);
    fclose(tf);
    sim_result_free(&r);
    scenario_free(s);
}

/* --- deliveries ----------------------------------------------------------------- */

static int delivered_ok[3];
static void dl_start(struct policy *p, int restart, int64_t now)
{
    /* result 5 of handler 0 delivered twice, result 6 of handler 1 (whose
     * deliveries always fail) attempted twice */
    delivered_ok[0] = sim_deliver(p->sim, 0, 5);
    delivered_ok[1] = sim_deliver(p->sim, 0, 5);
    delivered_ok[2] = sim_deliver(p->sim, 1, 6) + sim_deliver(p->sim, 1, 6);
}

static void test_deliveries(void **state)
{
    (void)state;
    struct policy_ops ops = spin_ops;
    ops.start = dl_start;
    ops.on_run_end = dv_nothing_end;
    struct scenario *s = parse("horizon 1h\nworkflow w\n  consumer a subscribe t fifo runs 1s\n"
                               "  consumer b subscribe t fifo runs 1s\nfail w.b delivery 100%\n");
    struct params ps = {0};
    struct sim_opts o = {.seed = 1};
    struct sim_result r;
    sim_run(s, &ops, &ps, &o, &r);
    assert_int_equal(delivered_ok[0], 1);
    assert_int_equal(delivered_ok[1], 1);
    assert_int_equal(delivered_ok[2], 0);
    assert_true(r.ck.total.deliveries == 2);
    assert_true(r.ck.total.dup_deliveries == 1);
    assert_true(r.ck.total.undelivered == 1);
    assert_true(r.ck.per_tmpl[1].undelivered == 1);
    sim_result_free(&r);
    scenario_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_livelock_same_instant), cmocka_unit_test(test_livelock_busy_streak),
        cmocka_unit_test(test_livelock_timer),        cmocka_unit_test(test_crash_recreates_volatile),
        cmocka_unit_test(test_ticker_costs_nothing),  cmocka_unit_test(test_deliveries),
        cmocka_unit_test(test_declared_pool),         cmocka_unit_test(test_ticker_churn),          cmocka_unit_test(test_ticker_stop),           cmocka_unit_test(test_run_taken_and_notes),
        cmocka_unit_test(test_no_livelock_large_world), cmocka_unit_test(test_livelock_per_handler),
        cmocka_unit_test(test_prefetch_changes_nothing),
        cmocka_unit_test(test_pair_index_changes_nothing),
        cmocka_unit_test(test_publish_reach),
        cmocka_unit_test(test_durable_blocks),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    cal_zone_cache_free();
    return rc;
}
