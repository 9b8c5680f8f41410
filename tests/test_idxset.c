/* test_idxset.c: the index set (sim/idxset.h) against a plain array
 * model: random adds and deletes over sets of many sizes (word and summary
 * boundaries included), every idxset_next answer checked against a scan of
 * the model, and an in-order walk that visits exactly the members. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>

#include "sim/idxset.h"
#include "sim/rng.h"
#include "sim/util.h"

static uint32_t model_next(const unsigned char *m, uint32_t n, uint32_t from)
{
    for (uint32_t i = from; i < n; i++)
        if (m[i])
            return i;
    return IDXSET_NONE;
}

static void check_all(const struct idxset *s, const unsigned char *m, uint32_t n, uint32_t count)
{
    assert_int_equal(s->count, count);
    for (uint32_t i = 0; i <= n + 1; i++)
        assert_int_equal(idxset_next(s, i), model_next(m, n, i));
    uint32_t seen = 0;
    for (uint32_t k = idxset_next(s, 0); k != IDXSET_NONE; k = idxset_next(s, k + 1)) {
        assert_true(k < n && m[k]);
        assert_int_equal(idxset_has(s, k), 1);
        seen++;
    }
    assert_int_equal(seen, count);
}

static void run_model(uint32_t n, int nops, uint64_t seed)
{
    struct idxset s;
    idxset_init(&s, n);
    unsigned char *m = xcalloc((size_t)n + 1, 1);
    struct rng r = rng_stream(seed, n, 0, 0);
    uint32_t count = 0;
    for (int op = 0; op < nops && n > 0; op++) {
        /* Clustered picks (a busy pool frees and takes neighbours) and
         * scattered ones. */
        uint32_t i = rng_below(&r, 2) ? (uint32_t)rng_below(&r, n) : (uint32_t)rng_below(&r, n < 130 ? n : 130);
        if (rng_below(&r, 2)) {
            count += !m[i];
            m[i] = 1;
            idxset_add(&s, i);
        } else {
            count -= m[i];
            m[i] = 0;
            idxset_del(&s, i);
        }
        assert_int_equal(idxset_has(&s, i), m[i]);
        if (op % 997 == 0)
            check_all(&s, m, n, count);
    }
    check_all(&s, m, n, count);
    idxset_clear(&s);
    for (uint32_t i = 0; i < n; i++)
        m[i] = 0;
    check_all(&s, m, n, 0);
    free(m);
    idxset_free(&s);
}

static void test_sizes(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {0, 1, 2, 63, 64, 65, 127, 128, 4095, 4096, 4097, 8192 + 64 + 1, 70000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        run_model(sizes[k], 20000, 7 + k);
}

/* Members far apart: the search for the next one crosses empty summary
 * words. */
static void test_sparse(void **state)
{
    (void)state;
    uint32_t n = 1000000;
    struct idxset s;
    idxset_init(&s, n);
    idxset_add(&s, 3);
    idxset_add(&s, 262143);
    idxset_add(&s, 262144);
    idxset_add(&s, n - 1);
    assert_int_equal(idxset_next(&s, 0), 3);
    assert_int_equal(idxset_next(&s, 4), 262143);
    assert_int_equal(idxset_next(&s, 262144), 262144);
    assert_int_equal(idxset_next(&s, 262145), n - 1);
    assert_int_equal(idxset_next(&s, n - 1), n - 1);
    assert_int_equal(idxset_next(&s, n), IDXSET_NONE);
    idxset_del(&s, n - 1);
    idxset_del(&s, n - 1); /* not a member: no change */
    assert_int_equal(s.count, 3);
    assert_int_equal(idxset_next(&s, 262145), IDXSET_NONE);
    idxset_add(&s, 3); /* already a member */
    assert_int_equal(s.count, 3);
    idxset_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_sparse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
