/* test_util.c: the shared helpers of sim/util.h that have no module of
 * their own: sim_sort_u32 against qsort. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/rng.h"
#include "sim/util.h"

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Random arrays of every size up to 300 and some large ones, with values
 * drawn from ranges that leave high bytes shared (a fleet's handler ids),
 * all bytes varying, or few distinct values: the same order as qsort. */
static void test_sort_u32(void **state)
{
    (void)state;
    static const uint64_t range[] = {2, 200, 70000, UINT64_C(1) << 32};
    struct rng r = rng_stream(5, RNG_POLICY, 3, 0);
    size_t cap = 100000;
    uint32_t *a = xmalloc(cap * sizeof *a), *b = xmalloc(cap * sizeof *b), *tmp = xmalloc(cap * sizeof *tmp);
    for (int rg = 0; rg < 4; rg++) {
        for (size_t n = 0; n <= 320; n++) {
            for (size_t i = 0; i < n; i++)
                a[i] = b[i] = (uint32_t)rng_below(&r, range[rg]);
            sim_sort_u32(a, tmp, n);
            qsort(b, n, sizeof *b, cmp_u32);
            assert_memory_equal(a, b, n * sizeof *a);
        }
        for (size_t i = 0; i < cap; i++)
            a[i] = b[i] = (uint32_t)rng_below(&r, range[rg]);
        sim_sort_u32(a, tmp, cap);
        qsort(b, cap, sizeof *b, cmp_u32);
        assert_memory_equal(a, b, cap * sizeof *a);
    }
    /* sorted and reversed input */
    for (size_t i = 0; i < cap; i++)
        a[i] = (uint32_t)(cap - i) * 40503u;
    memcpy(b, a, cap * sizeof *a);
    sim_sort_u32(a, tmp, cap);
    qsort(b, cap, sizeof *b, cmp_u32);
    assert_memory_equal(a, b, cap * sizeof *a);
    sim_sort_u32(a, tmp, cap);
    assert_memory_equal(a, b, cap * sizeof *a);
    free(a);
    free(b);
    free(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_u32),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
