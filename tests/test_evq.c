/* test_evq.c: the event queue against a sorted-array model.
 *
 * The model keeps pending events sorted by (time, seq) and numbers pushes the
 * way the queue must; long random runs of push, pop, peek, cancel (of live,
 * stale and forged handles) and moves (a cancel and a new push), with many equal times and huge
 * jumps, must agree with it on every result, and evq_check must hold after
 * every batch.  Directed tests cover the empty queue, FIFO ties, stale
 * handles, tombstone sweeps, the time-goes-back assertion, the prefetch
 * hints (evq_hints) to their full depth, the sorted front's length after a
 * lull, and a 1e6-event stress (1e5 under the sanitizers). */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sim/evq.h"
#include "sim/util.h"
#include "tests/expect.h"
#include "sim/rng.h"

#if defined(__SANITIZE_ADDRESS__)
#define STRESS_N 100000
#define PROP_OPS 40000
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRESS_N 100000
#define PROP_OPS 40000
#endif
#endif
#ifndef STRESS_N
#define STRESS_N 1000000
#define PROP_OPS 200000
#endif

static uint64_t below(struct rng *s, uint64_t n)
{
    return rng_next(s) % n;
}

/* ---- the model: pending events sorted by (time, seq) ---- */

struct mrec {
    int64_t time_us;
    uint64_t seq;
    evq_handle h;
    uint32_t kind;
    uint32_t a;
    uint64_t b;
};

struct model {
    struct mrec *v;
    size_t n, cap;
    uint64_t next_seq;
    int64_t now_us;
    evq_handle *stale; /* handles that must never work again */
    size_t nstale, cap_stale;
};

static void model_init(struct model *m)
{
    memset(m, 0, sizeof *m);
    m->now_us = INT64_MIN;
}

static void model_release(struct model *m)
{
    free(m->v);
    free(m->stale);
}

static void model_retire(struct model *m, evq_handle h)
{
    m->stale = xgrow(m->stale, sizeof *m->stale, &m->cap_stale, m->nstale + 1);
    m->stale[m->nstale++] = h;
}

static void model_insert(struct model *m, struct mrec r)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) { /* first element after (time, seq) */
        size_t mid = lo + (hi - lo) / 2;
        const struct mrec *x = &m->v[mid];
        if (x->time_us < r.time_us || (x->time_us == r.time_us && x->seq < r.seq))
            lo = mid + 1;
        else
            hi = mid;
    }
    m->v = xgrow(m->v, sizeof *m->v, &m->cap, m->n + 1);
    memmove(&m->v[lo + 1], &m->v[lo], (m->n - lo) * sizeof *m->v);
    m->v[lo] = r;
    m->n++;
}

static struct mrec model_remove(struct model *m, size_t i)
{
    struct mrec r = m->v[i];
    memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof *m->v);
    m->n--;
    return r;
}

static long model_find(const struct model *m, evq_handle h)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->v[i].h == h)
            return (long)i;
    return -1;
}

/* ---- operations applied to both ---- */

static void do_push(struct evq *q, struct model *m, int64_t t, struct rng *rng)
{
    struct mrec r = { .time_us = t, .seq = m->next_seq++ };
    r.kind = (uint32_t)rng_next(rng);
    r.a = (uint32_t)rng_next(rng);
    r.b = rng_next(rng);
    r.h = evq_push(q, t, r.kind, r.a, r.b);
    assert_true(r.h != 0);
    model_insert(m, r);
}

static void do_pop(struct evq *q, struct model *m, const char *ctx)
{
    struct evq_event ev;
    struct evq_hint hh[EVQ_HINTS];
    /* It may name cancelled events, and names one at least while one is pending. */
    int nh = evq_hints(q, hh, EVQ_HINTS);
    assert_true(nh >= (m->n ? 1 : 0) && nh <= EVQ_HINTS);
    /* evq_hint_at names the same events, from the sorted front alone. */
    size_t front = evq_front_len(q);
    for (int k = 0; k < EVQ_HINTS; k++) {
        struct evq_hint one = {0, 0, 0};
        int at = evq_hint_at(q, k, &one);
        assert_int_equal(at, front > (size_t)k);
        if (at) {
            assert_true(k < nh);
            assert_int_equal(one.kind, hh[k].kind);
            assert_int_equal(one.a, hh[k].a);
            assert_int_equal(one.b, hh[k].b);
        }
    }
    struct evq_hint none;
    assert_int_equal(evq_hint_at(q, -1, &none), 0);
    assert_int_equal(evq_hint_at(q, EVQ_HINTS, &none), 0);
    memset(&ev, 0xA5, sizeof ev);
    int got = evq_pop(q, &ev);
    if (m->n == 0) {
        assert_int_equal(got, 0);
        unsigned char untouched[sizeof ev];
        memset(untouched, 0xA5, sizeof untouched);
        assert_memory_equal(&ev, untouched, sizeof ev);
        EXPECT_I64(evq_now(q), m->now_us, ctx);
        return;
    }
    assert_int_equal(got, 1);
    struct mrec r = model_remove(m, 0);
    EXPECT_I64(ev.time_us, r.time_us, ctx);
    EXPECT_U64(ev.seq, r.seq, ctx);
    EXPECT_U64(ev.kind, r.kind, ctx);
    EXPECT_U64(ev.a, r.a, ctx);
    EXPECT_U64(ev.b, r.b, ctx);
    m->now_us = r.time_us;
    EXPECT_I64(evq_now(q), m->now_us, ctx);
    model_retire(m, r.h);
}

static void do_cancel_live(struct evq *q, struct model *m, struct rng *rng, const char *ctx)
{
    if (m->n == 0)
        return;
    size_t i = (size_t)below(rng, m->n);
    struct mrec r = model_remove(m, i);
    EXPECT_I64(evq_cancel(q, r.h), 1, ctx);
    EXPECT_I64(evq_cancel(q, r.h), 0, ctx);
    model_retire(m, r.h);
}

static void do_move(struct evq *q, struct model *m, int64_t t, struct rng *rng,
                          const char *ctx)
{
    if (m->n == 0)
        return;
    size_t i = (size_t)below(rng, m->n);
    struct mrec r = model_remove(m, i);
    EXPECT_I64(evq_cancel(q, r.h), 1, ctx);
    evq_handle nh = evq_push(q, t, r.kind, r.a, r.b);
    assert_true(nh != 0);
    assert_true(nh != r.h);
    EXPECT_I64(evq_cancel(q, r.h), 0, ctx);
    model_retire(m, r.h);
    r.h = nh;
    r.time_us = t;
    r.seq = m->next_seq++;
    model_insert(m, r);
}

/* A handle that was retired, or a forged variant of one: must do nothing
 * unless it happens to equal a pending handle. */
static void do_bad_handle(struct evq *q, struct model *m, struct rng *rng, const char *ctx)
{
    evq_handle h;
    uint64_t pick = below(rng, 4);
    if (pick == 0 || m->nstale == 0)
        h = rng_next(rng) >> below(rng, 64);
    else
        h = m->stale[below(rng, m->nstale)];
    if (pick == 3)
        h ^= UINT64_C(1) << below(rng, 64);
    long i = model_find(m, h);
    if (i >= 0) {
        assert_true(pick != 1 && pick != 2); /* a retired handle came back to life */
        return;
    }
    size_t before = evq_size(q);
    EXPECT_I64(evq_cancel(q, h), 0, ctx);
    EXPECT_U64(evq_size(q), before, ctx);
}

/* A time >= now: exact ties, near ties, ordinary gaps, and rare huge jumps. */
static int64_t pick_time(const struct model *m, int64_t base, struct rng *rng)
{
    int64_t now = m->now_us > base ? m->now_us : base;
    uint64_t r = below(rng, 100);
    int64_t off;
    if (r < 20)
        off = 0;
    else if (r < 45)
        off = (int64_t)below(rng, 4);
    else if (r < 75)
        off = (int64_t)below(rng, 1000);
    else if (r < 98)
        off = (int64_t)below(rng, UINT64_C(1) << (below(rng, 40) + 1));
    else
        off = INT64_MAX / 2 - (int64_t)below(rng, 3);
    if (now > 0 && off > INT64_MAX - now)
        off = (INT64_MAX - now) / 2; /* approach the end of time, slowly */
    return now + off;
}

static void check_peek(struct evq *q, const struct model *m, const char *ctx)
{
    int64_t want = m->n ? m->v[0].time_us : INT64_MAX;
    EXPECT_I64(evq_peek_time(q), want, ctx);
}

static void run_episode(uint64_t seed, int64_t base, size_t ops)
{
    struct rng rng = {seed};
    struct evq *q = evq_new();
    struct model m;
    model_init(&m);
    char ctx[96];
    /* Phases lean towards growing or shrinking, so sizes sweep up and down;
     * the size is kept near a few thousand so that the model stays cheap. */
    unsigned push_pct = 45;
    for (size_t op = 0; op < ops; op++) {
        snprintf(ctx, sizeof ctx, "seed %" PRIu64 " op %zu size %zu", seed, op, m.n);
        if (op % 1500 == 0)
            push_pct = m.n > 2500 ? 20 : below(&rng, 2) ? 45 : 20;
        unsigned r = (unsigned)below(&rng, 100);
        if (r < 1) {
            /* a burst at one instant, for long FIFO runs */
            int64_t t = pick_time(&m, base, &rng);
            for (int k = 0; k < 8; k++)
                do_push(q, &m, t, &rng);
        } else if ((r -= 1) < push_pct) {
            do_push(q, &m, pick_time(&m, base, &rng), &rng);
        } else if ((r -= push_pct) < 8) {
            do_move(q, &m, pick_time(&m, base, &rng), &rng, ctx);
        } else if ((r -= 8) < 6) {
            do_cancel_live(q, &m, &rng, ctx);
        } else if ((r -= 6) < 6) {
            do_bad_handle(q, &m, &rng, ctx);
        } else if ((r -= 6) < 8) {
            check_peek(q, &m, ctx);
            if (below(&rng, 2))
                do_push(q, &m, pick_time(&m, base, &rng), &rng);
        } else {
            do_pop(q, &m, ctx);
        }
        EXPECT_U64(evq_size(q), m.n, ctx);
        if (op % 64 == 63 && !evq_check(q))
            fail_msg("%s: evq_check failed", ctx);
    }
    while (m.n) {
        snprintf(ctx, sizeof ctx, "seed %" PRIu64 " drain size %zu", seed, m.n);
        if (below(&rng, 3) == 0)
            check_peek(q, &m, ctx);
        do_pop(q, &m, ctx);
    }
    do_pop(q, &m, "after drain");
    assert_true(evq_check(q));
    EXPECT_I64(evq_peek_time(q), INT64_MAX, "after drain");
    model_release(&m);
    evq_free(q);
}

static void test_property(void **state)
{
    static const int64_t bases[] = { INT64_MIN, -INT64_MAX / 2, -5, 0, 1000000,
                                     INT64_MAX / 4 };
    for (uint64_t s = 0; s < 12; s++)
        run_episode(s * 7919 + 1, bases[s % 6], PROP_OPS / 4 + (size_t)(s % 4) * PROP_OPS / 4);
}

static void test_empty(void **state)
{
    struct evq *q = evq_new();
    struct evq_event ev = { .time_us = 42, .seq = 7 };
    assert_int_equal(evq_size(q), 0);
    EXPECT_I64(evq_now(q), INT64_MIN, "new");
    EXPECT_I64(evq_peek_time(q), INT64_MAX, "new");
    assert_int_equal(evq_pop(q, &ev), 0);
    EXPECT_I64(ev.time_us, 42, "pop on empty leaves out alone");
    EXPECT_U64(ev.seq, 7, "pop on empty leaves out alone");
    assert_int_equal(evq_cancel(q, 0), 0);
    assert_int_equal(evq_cancel(q, 1), 0);
    assert_int_equal(evq_cancel(q, UINT64_MAX), 0);
    assert_int_equal(evq_cancel(q, UINT64_C(1) << 32 | 1), 0);
    assert_true(evq_check(q));

    /* the very first push may be at INT64_MIN, and at INT64_MAX */
    evq_handle h1 = evq_push(q, INT64_MAX, 1, 0, 0);
    evq_handle h2 = evq_push(q, INT64_MIN, 2, 0, 0);
    assert_true(h1 && h2 && h1 != h2);
    assert_int_equal(evq_size(q), 2);
    assert_true(evq_check(q));
    assert_int_equal(evq_pop(q, &ev), 1);
    EXPECT_I64(ev.time_us, INT64_MIN, "min");
    assert_int_equal(ev.kind, 2);
    EXPECT_I64(evq_now(q), INT64_MIN, "min");
    assert_int_equal(evq_pop(q, &ev), 1);
    EXPECT_I64(ev.time_us, INT64_MAX, "max");
    EXPECT_I64(evq_now(q), INT64_MAX, "max");
    assert_int_equal(evq_pop(q, &ev), 0);
    EXPECT_I64(evq_now(q), INT64_MAX, "empty keeps now");
    assert_true(evq_check(q));
    evq_free(q);
    evq_free(NULL);
}

static void test_fifo_ties(void **state)
{
    struct evq *q = evq_new();
    struct evq_event ev;
    /* interleave three instants; each must come out in push order */
    for (uint32_t i = 0; i < 300; i++)
        evq_push(q, 1000 + (int64_t)(i % 3) * 7, i, 0, 0);
    for (uint32_t i = 0; i < 300; i++) {
        assert_int_equal(evq_pop(q, &ev), 1);
        uint32_t want = (i / 100) + 3 * (i % 100);
        assert_int_equal(ev.kind, want);
        EXPECT_U64(ev.seq, want, "seq is the push number");
        /* pushes at the current instant go behind what is already there */
        if (i == 50)
            for (uint32_t k = 0; k < 5; k++)
                evq_push(q, 1000, 1000 + k, 0, 0);
        if (i == 99) {
            for (uint32_t k = 0; k < 5; k++) {
                assert_int_equal(evq_pop(q, &ev), 1);
                assert_int_equal(ev.kind, 1000 + k);
            }
        }
    }
    assert_int_equal(evq_pop(q, &ev), 0);
    assert_true(evq_check(q));
    evq_free(q);
}

static void test_stale_handles(void **state)
{
    struct evq *q = evq_new();
    struct evq_event ev;
    evq_handle a = evq_push(q, 10, 1, 11, 111);
    evq_handle b = evq_push(q, 20, 2, 22, 222);
    assert_int_equal(evq_pop(q, &ev), 1);
    assert_int_equal(ev.kind, 1);
    assert_int_equal(evq_cancel(q, a), 0); /* popped */
    evq_handle c = evq_push(q, 15, 3, 33, 333); /* likely reuses a's slot */
    assert_true(c != a);
    assert_int_equal(evq_cancel(q, a), 0);
    assert_int_equal(evq_cancel(q, c), 1);
    assert_int_equal(evq_cancel(q, c), 0); /* cancelled */
    assert_int_equal(evq_cancel(q, b), 1); /* moved: cancelled and pushed again */
    evq_handle b2 = evq_push(q, 12, 2, 22, 222);
    assert_true(b2 != 0 && b2 != b);
    assert_int_equal(evq_cancel(q, b), 0);
    assert_int_equal(evq_size(q), 1);
    assert_true(evq_check(q));
    assert_int_equal(evq_pop(q, &ev), 1);
    EXPECT_I64(ev.time_us, 12, "moved");
    assert_int_equal(ev.kind, 2);
    assert_int_equal(ev.a, 22);
    EXPECT_U64(ev.b, 222, "payload kept");
    EXPECT_U64(ev.seq, 3, "a move is a new push");
    assert_int_equal(evq_cancel(q, b2), 0);
    assert_int_equal(evq_pop(q, &ev), 0);
    assert_true(evq_check(q));
    evq_free(q);
}

/* Peek finds the minimum without moving time; a push below it afterwards is
 * legal, and a cancelled smaller entry sitting beside the minimum is dropped
 * on the way. */
static void test_peek_then_push(void **state)
{
    struct evq *q = evq_new();
    struct evq_event ev;
    evq_push(q, 0, 0, 0, 0);
    assert_int_equal(evq_pop(q, &ev), 1);
    evq_handle d = evq_push(q, 1000, 1, 0, 0);
    evq_push(q, 1001, 2, 0, 0);
    evq_push(q, 900000, 3, 0, 0);
    assert_int_equal(evq_cancel(q, d), 1);
    EXPECT_I64(evq_peek_time(q), 1001, "peek past a tombstone");
    EXPECT_I64(evq_now(q), 0, "peek keeps now");
    assert_true(evq_check(q));
    evq_push(q, 1002, 4, 0, 0);
    EXPECT_I64(evq_peek_time(q), 1001, "peek again");
    assert_true(evq_check(q));
    assert_int_equal(evq_pop(q, &ev), 1);
    assert_int_equal(ev.kind, 2);
    assert_true(evq_check(q));

    /* now = 1001: peek, then push below the peeked minimum */
    evq_push(q, 5000, 5, 0, 0);
    evq_push(q, 6000, 6, 0, 0);
    assert_int_equal(evq_pop(q, &ev), 1);
    assert_int_equal(ev.kind, 4); /* 1002 */
    EXPECT_I64(evq_peek_time(q), 5000, "peek");
    evq_push(q, 1500, 7, 0, 0);
    EXPECT_I64(evq_peek_time(q), 1500, "peek after a smaller push");
    evq_push(q, 1002, 8, 0, 0); /* at now */
    EXPECT_I64(evq_peek_time(q), 1002, "peek after a push at now");
    assert_true(evq_check(q));
    static const uint32_t want[] = { 8, 7, 5, 6, 3 };
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(evq_pop(q, &ev), 1);
        assert_int_equal(ev.kind, want[i]);
        assert_true(evq_check(q));
    }

    /* a queue of tombstones only is empty, and time may still go to any
     * point at or after now */
    evq_handle x = evq_push(q, 2000000, 9, 0, 0);
    evq_handle y = evq_push(q, 3000000, 10, 0, 0);
    EXPECT_I64(evq_peek_time(q), 2000000, "peek");
    assert_int_equal(evq_cancel(q, x), 1);
    assert_int_equal(evq_cancel(q, y), 1);
    EXPECT_I64(evq_peek_time(q), INT64_MAX, "only tombstones");
    assert_int_equal(evq_pop(q, &ev), 0);
    evq_push(q, 900000, 11, 0, 0);
    assert_true(evq_check(q));
    assert_int_equal(evq_pop(q, &ev), 1);
    assert_int_equal(ev.kind, 11);
    assert_int_equal(evq_size(q), 0);
    evq_free(q);
}

/* Mass cancellation sweeps tombstones out: memory follows the live count. */
static void test_sweep(void **state)
{
    struct evq *q = evq_new();
    struct evq_event ev;
    enum { N = 30000 };
    evq_handle *h = xmalloc(N * sizeof *h);
    for (uint32_t i = 0; i < N; i++)
        h[i] = evq_push(q, (int64_t)(i * 7919u % 1000u), i, 0, 0);
    for (uint32_t i = 0; i < N; i++)
        if (i % 10 != 0)
            assert_int_equal(evq_cancel(q, h[i]), 1);
    assert_int_equal(evq_size(q), N / 10);
    assert_true(evq_check(q));
    /* the sweep freed slots: new pushes reuse them */
    for (uint32_t i = 0; i < N / 2; i++)
        evq_push(q, 2000, N + i, 0, 0);
    assert_true(evq_check(q));
    int64_t prev_t = INT64_MIN;
    uint64_t prev_seq = 0;
    size_t n = 0;
    while (evq_pop(q, &ev)) {
        assert_true(ev.time_us > prev_t || (ev.time_us == prev_t && ev.seq > prev_seq));
        assert_true(ev.kind >= N || ev.kind % 10 == 0);
        prev_t = ev.time_us;
        prev_seq = ev.seq;
        n++;
    }
    assert_int_equal(n, N / 10 + N / 2);
    free(h);
    evq_free(q);
}

/* A push earlier than the last pop is a broken invariant: exit status 3. */
static void test_time_goes_back(void **state)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr))
            _exit(99);
        struct evq *q = evq_new();
        struct evq_event ev;
        evq_push(q, 100, 0, 0, 0);
        evq_pop(q, &ev);
        evq_push(q, 99, 0, 0, 0);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 3);
}

struct key {
    int64_t t;
    uint64_t seq;
};

static int key_cmp(const void *x, const void *y)
{
    const struct key *a = x, *b = y;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* STRESS_N events with heavy ties, then holds, then a drain, checked against
 * a sorted copy of everything pushed. */
static void test_stress(void **state)
{
    enum { HOLDS = 200000 };
    struct rng rng = {12345};
    struct evq *q = evq_new();
    struct evq_event ev;
    size_t total = (size_t)STRESS_N + HOLDS;
    struct key *k = xmalloc(total * sizeof *k);
    size_t nk = 0;
    for (size_t i = 0; i < STRESS_N; i++) {
        int64_t t = (int64_t)below(&rng, i % 4 ? 1000000000 : 1000);
        k[nk] = (struct key){ t, nk };
        evq_push(q, t, 0, 0, nk++);
    }
    assert_int_equal(evq_size(q), STRESS_N);
    assert_true(evq_check(q));
    /* holds: each pop is followed by a push after it; the pushed keys are
     * recorded too, and everything popped must be in sorted order */
    struct key *popped = xmalloc(total * sizeof *popped);
    size_t np = 0;
    for (size_t i = 0; i < HOLDS; i++) {
        assert_int_equal(evq_pop(q, &ev), 1);
        EXPECT_U64(ev.b, ev.seq, "payload");
        popped[np++] = (struct key){ ev.time_us, ev.seq };
        int64_t t = ev.time_us + (int64_t)below(&rng, 2000000);
        k[nk] = (struct key){ t, nk };
        evq_push(q, t, 0, 0, nk++);
    }
    assert_true(evq_check(q));
    while (evq_pop(q, &ev)) {
        EXPECT_U64(ev.b, ev.seq, "payload");
        popped[np++] = (struct key){ ev.time_us, ev.seq };
    }
    assert_int_equal(np, nk);
    qsort(k, nk, sizeof *k, key_cmp);
    for (size_t i = 0; i < np; i++) {
        if (popped[i].t != k[i].t || popped[i].seq != k[i].seq)
            fail_msg("pop %zu: (%" PRId64 ", %" PRIu64 "), expected (%" PRId64 ", %" PRIu64 ")",
                     i, popped[i].t, popped[i].seq, k[i].t, k[i].seq);
    }
    assert_true(evq_check(q));
    free(popped);
    free(k);
    evq_free(q);
}

/* Without cancels, hint d of a call names the event that the (d+1)-th pop
 * after it returns when nothing is pushed between (its whole payload),
 * nearly always: they come from the queue's sorted front,
 * past which it looks at a few entries of the lowest buckets only.  With none pending it says so; with
 * cancels it may name a cancelled event, but only while one is queued.
 * miss[d] and checked[d] count the hints d pops deep. */
static int hint_is(const struct evq_hint *h, const struct evq_event *ev)
{
    return h->kind == ev->kind && h->a == ev->a && h->b == ev->b;
}

static void hint_misses(uint64_t seed, int ties, size_t *checked, size_t *miss)
{
    struct evq *q = evq_new();
    struct rng rng = {seed};
    struct evq_hint h[EVQ_HINTS], prev[EVQ_HINTS];
    assert_int_equal(evq_hints(q, h, EVQ_HINTS), 0);
    int64_t now = 0;
    size_t pending = 0;
    int prev_n = 0, age = 0; /* prev: a call's hints, age pops ago, nothing pushed since */
    for (int d = 0; d < EVQ_HINTS; d++)
        checked[d] = miss[d] = 0;
    for (int op = 0; op < 200000; op++) {
        /* Blocks of 1000 operations, mostly pushes then mostly pops (so
         * that runs of pops check the deep hints). */
        if (pending == 0 || below(&rng, 100) < ((op / 1000) % 2 ? 10u : 80u)) {
            uint64_t r = below(&rng, 10);
            int64_t t = now + (ties && r < 3   ? 0
                               : ties && r < 6 ? (int64_t)below(&rng, 8)
                                               : (int64_t)below(&rng, UINT64_C(1) << 30));
            evq_push(q, t, (uint32_t)rng_next(&rng), (uint32_t)rng_next(&rng), rng_next(&rng));
            pending++;
            prev_n = 0;
            continue;
        }
        int n = evq_hints(q, h, EVQ_HINTS);
        assert_true(n >= 1 && n <= (pending < EVQ_HINTS ? (int)pending : EVQ_HINTS));
        if (age >= prev_n) {
            memcpy(prev, h, sizeof h);
            prev_n = n;
            age = 0;
        }
        struct evq_event ev;
        assert_int_equal(evq_pop(q, &ev), 1);
        now = ev.time_us;
        pending--;
        miss[0] += !hint_is(&h[0], &ev);
        checked[0]++;
        if (age > 0) {
            miss[age] += !hint_is(&prev[age], &ev);
            checked[age]++;
        }
        age++;
    }
    struct evq_event ev;
    while (evq_pop(q, &ev))
        now = ev.time_us;
    assert_int_equal(evq_hints(q, h, EVQ_HINTS), 0);
    /* Cancelled: the hint may still name it, and the pop finds nothing. */
    evq_handle hd = evq_push(q, now + 5, 7, 99, 0);
    assert_int_equal(evq_cancel(q, hd), 1);
    if (evq_hints(q, h, 1))
        assert_true(h[0].kind == 7 && h[0].a == 99);
    assert_int_equal(evq_pop(q, &ev), 0);
    assert_int_equal(evq_hints(q, h, EVQ_HINTS), 0);
    assert_true(evq_check(q));
    evq_free(q);
}

static void test_hint(void **state)
{
    static const struct {
        uint64_t seed;
        int ties;
        const char *what;
    } runs[] = {{12345, 0, "distinct times"}, {777, 1, "ties"}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        size_t checked[EVQ_HINTS], miss[EVQ_HINTS];
        hint_misses(runs[i].seed, runs[i].ties, checked, miss);
        fprintf(stderr, "hint misses (%s), by depth:", runs[i].what);
        for (int d = 0; d < EVQ_HINTS; d++) {
            fprintf(stderr, " %zu/%zu", miss[d], checked[d]);
            assert_true(checked[d] > 2000);
            if (d == 0 && miss[d] * 1000 > checked[d]) /* the first: right at least 99.9 % of the time */
                fail_msg("%s: %zu of %zu first hints wrong", runs[i].what, miss[d], checked[d]);
            if (miss[d] * 100 > checked[d]) /* right at least 99 % of the time */
                fail_msg("%s: %zu of %zu hints %d deep wrong", runs[i].what, miss[d], checked[d], d);
        }
        fprintf(stderr, "\n");
    }
}

/* The front stays a few entries long in a steady stream that follows a
 * lull: 2000 pending events, each pop followed by a push 1 s to 10 min on,
 * after the only other event was days away.  A front that reached as far
 * as the far event would take in every push (and move half of it on each). */
static void test_front_after_lull(void **state)
{
    struct evq *q = evq_new();
    struct rng rng = {99};
    const int64_t s = 1000000;
    evq_push(q, 0, 1, 0, 0);
    evq_push(q, 3 * 86400 * s, 2, 0, 0);
    struct evq_event ev;
    assert_int_equal(evq_pop(q, &ev), 1);
    for (int i = 0; i < 2000; i++)
        evq_push(q, ev.time_us + s + (int64_t)below(&rng, 600 * s), 3, (uint32_t)i, 0);
    size_t most = 0;
    for (int i = 0; i < 200000; i++) {
        assert_int_equal(evq_pop(q, &ev), 1);
        if (ev.kind == 3)
            evq_push(q, ev.time_us + s + (int64_t)below(&rng, 600 * s), 3, ev.a, 0);
        if (evq_front_len(q) > most)
            most = evq_front_len(q);
    }
    fprintf(stderr, "longest front: %zu\n", most);
    assert_true(most <= 4 * EVQ_HINTS + 16);
    assert_true(evq_check(q));
    evq_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_fifo_ties),
        cmocka_unit_test(test_stale_handles),
        cmocka_unit_test(test_peek_then_push),
        cmocka_unit_test(test_sweep),
        cmocka_unit_test(test_time_goes_back),
        cmocka_unit_test(test_property),
        cmocka_unit_test(test_hint),
        cmocka_unit_test(test_front_after_lull),
        cmocka_unit_test(test_stress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
