/* test_idmap.c: the id -> slot maps against a plain array model, under
 * random puts and deletes of dense, strided and scattered ids, through
 * growth and shrinking: the hash map (idmap), and the window map (idwin)
 * with ids issued in order, a few kept for long, and some put out of
 * order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>

#include "sim/idmap.h"
#include "sim/rng.h"
#include "sim/util.h"
#include "tests/expect.h"

#define UNIVERSE 200000

/* Runs nops random operations over ids drawn by pick; checks every id of
 * the universe against the model now and then. */
static void run_model(uint64_t (*pick)(struct rng *r, uint64_t k), int nops, uint64_t seed)
{
    struct idmap m;
    idmap_init(&m);
    uint32_t *model = xmalloc(UNIVERSE * sizeof *model);
    for (size_t i = 0; i < UNIVERSE; i++)
        model[i] = IDMAP_NONE;
    struct rng r = rng_stream(seed, 0, 0, 0);
    size_t n = 0;
    for (int op = 0; op < nops; op++) {
        uint64_t id = pick(&r, (uint64_t)op) % UNIVERSE;
        if (model[id] == IDMAP_NONE) {
            uint32_t v = (uint32_t)rng_below(&r, 1000000);
            idmap_put(&m, id, v);
            model[id] = v;
            n++;
        } else if (rng_below(&r, 3) != 0) {
            idmap_del(&m, id);
            model[id] = IDMAP_NONE;
            n--;
        }
        EXPECT_U64(m.n, n, "count");
        if (op % 20000 == 0)
            for (uint64_t k = 0; k < UNIVERSE; k++)
                EXPECT_U64(idmap_get(&m, k), model[k], "get");
    }
    for (uint64_t k = 0; k < UNIVERSE; k++)
        if (model[k] != IDMAP_NONE)
            idmap_del(&m, k);
    EXPECT_U64(m.n, 0, "emptied");
    EXPECT_U64(idmap_get(&m, 5), IDMAP_NONE, "empty map");
    idmap_free(&m);
    free(model);
}

static uint64_t pick_dense(struct rng *r, uint64_t k) { return k / 2 + rng_below(r, 64); }
static uint64_t pick_strided(struct rng *r, uint64_t k) { return rng_below(r, 1000) * 128; }
static uint64_t pick_any(struct rng *r, uint64_t k) { return rng_below(r, UNIVERSE); }

static void test_dense(void **state)
{
    (void)state;
    run_model(pick_dense, 300000, 1);
}

static void test_strided(void **state)
{
    (void)state;
    run_model(pick_strided, 100000, 2);
}

static void test_scattered(void **state)
{
    (void)state;
    run_model(pick_any, 300000, 3);
}

/* A wave: many ids in, then all out, then again; the map shrinks once it is
 * large and mostly empty, and stays correct. */
static void test_waves(void **state)
{
    (void)state;
    struct idmap m;
    idmap_init(&m);
    uint64_t next = 0;
    for (int wave = 0; wave < 4; wave++) {
        uint64_t first = next;
        for (int i = 0; i < 150000; i++)
            idmap_put(&m, next++, (uint32_t)i);
        EXPECT_U64(idmap_get(&m, first + 7), 7, "in the wave");
        size_t peak = idmap_bytes(&m);
        for (uint64_t id = first; id < next; id++)
            idmap_del(&m, id);
        EXPECT_U64(m.n, 0, "wave gone");
        assert_true(idmap_bytes(&m) < peak);
    }
    idmap_free(&m);
}

/* idwin against the model: ids mostly issued in order and freed soon,
 * one in keep_every kept for long (they leave the window), one put in
 * every stray_every out of order (below or inside the window). */
static void run_window(int nops, uint64_t keep_every, uint64_t stray_every, uint64_t seed)
{
    struct idwin w;
    idwin_init(&w);
    uint32_t *model = xmalloc(UNIVERSE * sizeof *model);
    for (size_t i = 0; i < UNIVERSE; i++)
        model[i] = IDMAP_NONE;
    struct rng r = rng_stream(seed, 0, 0, 0);
    uint64_t next = 1000, n = 0;
    for (int op = 0; op < nops && next < UNIVERSE; op++) {
        uint64_t id;
        if (stray_every && rng_below(&r, stray_every) == 0)
            id = rng_below(&r, next);           /* out of order */
        else
            id = next++;
        if (model[id] == IDMAP_NONE) {
            uint32_t v = (uint32_t)rng_below(&r, 1000000);
            idwin_put(&w, id, v);
            model[id] = v;
            n++;
        }
        /* Free a recent id most of the time; long-lived ones rarely. */
        uint64_t back = rng_below(&r, 4) ? rng_below(&r, 200) : rng_below(&r, next);
        uint64_t victim = next - 1 - (back < next ? back : 0);
        if (model[victim] != IDMAP_NONE && (victim % keep_every != 0 || rng_below(&r, 50) == 0)) {
            idwin_del(&w, victim);
            model[victim] = IDMAP_NONE;
            n--;
        }
        EXPECT_U64(idwin_count(&w), n, "count");
        if (op % 25000 == 0)
            for (uint64_t k = 0; k < UNIVERSE; k++)
                EXPECT_U64(idwin_get(&w, k), model[k], "get");
    }
    for (uint64_t k = 0; k < UNIVERSE; k++) {
        EXPECT_U64(idwin_get(&w, k), model[k], "get at the end");
        if (model[k] != IDMAP_NONE)
            idwin_del(&w, k);
    }
    EXPECT_U64(idwin_count(&w), 0, "emptied");
    EXPECT_U64(idwin_get(&w, 5), IDMAP_NONE, "empty map");
    EXPECT_U64(idwin_get(&w, UINT64_MAX - 1), IDMAP_NONE, "far beyond");
    idwin_free(&w);
    free(model);
}

static void test_window_in_order(void **state)
{
    (void)state;
    run_window(190000, 1000000, 0, 4);
}

static void test_window_long_lived(void **state)
{
    (void)state;
    run_window(190000, 7, 0, 5);
}

static void test_window_strays(void **state)
{
    (void)state;
    run_window(190000, 13, 20, 6);
}

/* Memory follows the live window: a steady stream with about 100 live ids
 * keeps a small ring however many ids go by, a burst's ring halves again
 * once the burst is gone, and the ids that outlive the window cost an idmap
 * entry each. */
static void test_window_memory(void **state)
{
    (void)state;
    struct idwin w;
    idwin_init(&w);
    uint64_t id = 0;
    for (; id < 2000000; id++) {
        idwin_put(&w, id, (uint32_t)(id & 0xffff));
        if (id >= 100)
            idwin_del(&w, id - 100);
    }
    EXPECT_U64(idwin_count(&w), 100, "live");
    assert_true(idwin_bytes(&w) <= 4096);
    for (uint64_t k = 0; k < 300000; k++)      /* a burst: 300 k live at once */
        idwin_put(&w, id + k, 1);
    size_t burst = idwin_bytes(&w);
    assert_true(burst >= 300000 * sizeof(uint32_t));
    for (uint64_t k = 0; k < 300000; k++)
        idwin_del(&w, id + k);
    id += 300000;
    for (uint64_t k = 0; k < 4000000; k++, id++) {
        idwin_put(&w, id, 2);
        idwin_del(&w, id);
    }
    assert_true(idwin_bytes(&w) * 4 <= burst);
    EXPECT_U64(idwin_count(&w), 100, "the long-lived ones");
    for (uint64_t k = 2000000 - 100; k < 2000000; k++)
        EXPECT_U64(idwin_get(&w, k), k & 0xffff, "long-lived, now in the idmap");
    idwin_free(&w);
}

/* A ring halves while ids in it are alive: a burst of 300 k, then a
 * stream in which every id lives for 1,000 more; every live id stays
 * readable through the shrinking slides. */
static void test_window_shrink_live(void **state)
{
    (void)state;
    struct idwin w;
    idwin_init(&w);
    uint64_t id = 0;
    for (; id < 300000; id++)
        idwin_put(&w, id, (uint32_t)(id & 0xfffff));
    size_t burst = idwin_bytes(&w);
    for (uint64_t k = 0; k < 300000; k++)
        idwin_del(&w, k);
    for (; id < 3000000; id++) {
        idwin_put(&w, id, (uint32_t)(id & 0xfffff));
        if (id >= 301000)
            idwin_del(&w, id - 1000);
        if (id % 9973 == 0)
            for (uint64_t k = id > 301000 ? id - 999 : 300000; k <= id; k++)
                EXPECT_U64(idwin_get(&w, k), k & 0xfffff, "live through a shrink");
    }
    EXPECT_U64(idwin_count(&w), 1000, "live");
    assert_true(idwin_bytes(&w) * 4 <= burst);
    idwin_free(&w);
}

/* A fleet's pattern: each of 1,000 handlers keeps its latest run alive
 * until its next one, with a run that ends at once between them, so that
 * one id in two over the span of the latest ones is live.  The ring holds
 * them all: none is slid into the idmap, whose reads and deletes would
 * each wait for memory in a large fleet.  (A ring that grew only when half
 * full stopped at 2,048 slots and slid half of them out.) */
static void test_window_sparse_latest(void **state)
{
    (void)state;
    enum { HANDLERS = 1000, ROUNDS = 200 };
    struct idwin w;
    idwin_init(&w);
    uint64_t latest[HANDLERS] = {0}, id = 1;
    for (uint32_t round = 0; round < ROUNDS; round++)
        for (uint32_t h = 0; h < HANDLERS; h++) {
            idwin_put(&w, id, 7); /* a run that ends at once */
            idwin_del(&w, id++);
            idwin_put(&w, id, h);
            if (latest[h])
                idwin_del(&w, latest[h]);
            latest[h] = id++;
        }
    EXPECT_U64(idwin_count(&w), HANDLERS, "one latest run a handler");
    EXPECT_U64(w.old.n, 0, "no live id slid out of the ring");
    for (uint32_t h = 0; h < HANDLERS; h++)
        EXPECT_U64(idwin_get(&w, latest[h]), h, "the latest run of each handler");
    assert_true(idwin_bytes(&w) <= 16 * HANDLERS + 4096); /* 16 bytes a live id, and the idmap's least */
    idwin_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense),
        cmocka_unit_test(test_strided),
        cmocka_unit_test(test_scattered),
        cmocka_unit_test(test_waves),
        cmocka_unit_test(test_window_in_order),
        cmocka_unit_test(test_window_long_lived),
        cmocka_unit_test(test_window_sparse_latest),
        cmocka_unit_test(test_window_strays),
        cmocka_unit_test(test_window_memory),
        cmocka_unit_test(test_window_shrink_live),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
