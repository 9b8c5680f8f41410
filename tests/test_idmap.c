/* test_idmap.c: the id -> slot map against a plain array model, under
 * random puts and deletes of dense, strided and scattered ids, through
 * growth and shrinking. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense),
        cmocka_unit_test(test_strided),
        cmocka_unit_test(test_scattered),
        cmocka_unit_test(test_waves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
