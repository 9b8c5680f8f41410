/* test_util.c: the shared helpers of sim/util.h that have no module of
 * their own: sim_sort_u32 against qsort, xgrow_in and xempty_in, the line alignment of
 * large blocks (xmalloc, xcalloc, xgrow_lines), and heap_huge. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* xgrow_in: the record's own buffer while the array fits, then the heap,
 * with what it held. */
static void test_xgrow_in(void **state)
{
    (void)state;
    struct rec {
        uint32_t *v;
        size_t n, cap;
        uint32_t in[3];
    } r = {0};
    for (uint32_t i = 0; i < 1000; i++) {
        r.v = xgrow_in(r.v, r.in, 3, sizeof *r.v, &r.cap, r.n + 1);
        r.v[r.n++] = i * 7;
        if (r.n <= 3) {
            assert_ptr_equal(r.v, r.in);
            assert_int_equal(r.cap, 3);
        } else {
            assert_ptr_not_equal(r.v, r.in);
        }
        assert_true(r.cap >= r.n);
        for (uint32_t k = 0; k < r.n; k++)
            assert_int_equal(r.v[k], k * 7);
    }
    xfree_in(r.v, r.in);
    /* one that never leaves its buffer frees nothing; one never used neither */
    struct rec s = {0};
    s.v = xgrow_in(s.v, s.in, 3, sizeof *s.v, &s.cap, 2);
    assert_ptr_equal(s.v, s.in);
    xfree_in(s.v, s.in);
    struct rec t = {0};
    xfree_in(t.v, t.in);
    /* a first need past the buffer goes to the heap at once */
    struct rec u = {0};
    u.v = xgrow_in(u.v, u.in, 3, sizeof *u.v, &u.cap, 5);
    assert_ptr_not_equal(u.v, u.in);
    assert_true(u.cap >= 5);
    xfree_in(u.v, u.in);
}

/* xempty_in: an emptied array that had moved to the heap starts over in
 * its record's buffer; one still there stays; either grows again as new. */
static void test_xempty_in(void **state)
{
    (void)state;
    struct rec {
        uint32_t *v;
        size_t n, cap;
        uint32_t in[2];
    } r = {0};
    for (int round = 0; round < 3; round++) {
        size_t want = round == 1 ? 2 : 9; /* in the buffer, then past it */
        for (uint32_t i = 0; i < want; i++) {
            r.v = xgrow_in(r.v, r.in, 2, sizeof *r.v, &r.cap, r.n + 1);
            r.v[r.n++] = i + 100 * (uint32_t)round;
        }
        for (uint32_t k = 0; k < r.n; k++)
            assert_int_equal(r.v[k], k + 100 * (uint32_t)round);
        if (want > 2)
            assert_ptr_not_equal(r.v, r.in);
        r.n = 0;
        r.v = xempty_in(r.v, r.in, &r.cap);
        if (want > 2) {
            assert_null(r.v);
            assert_int_equal(r.cap, 0);
        } else {
            assert_ptr_equal(r.v, r.in);
            assert_int_equal(r.cap, 2);
        }
        /* the first element after emptying is in the record again */
        r.v = xgrow_in(r.v, r.in, 2, sizeof *r.v, &r.cap, 1);
        assert_ptr_equal(r.v, r.in);
    }
    xfree_in(r.v, r.in);
    /* one never used stays as it was */
    struct rec t = {0};
    t.v = xempty_in(t.v, t.in, &t.cap);
    assert_null(t.v);
    assert_int_equal(t.cap, 0);
}

/* Large blocks start on a cache line, as xmalloc and xcalloc make them and
 * as xgrow_lines grows them, and keep their contents when grown. */
static void test_line_blocks(void **state)
{
    (void)state;
    unsigned char *a = xmalloc(100000), *b = xcalloc(3000, 32), *c = xmalloc(100);
    assert_true(((uintptr_t)a & 63) == 0);
    assert_true(((uintptr_t)b & 63) == 0);
    for (size_t i = 0; i < 3000 * 32; i++)
        assert_int_equal(b[i], 0);
    for (size_t i = 0; i < 100000; i++)
        a[i] = (unsigned char)(i * 7);
    for (size_t n = 200000; n <= 3200000; n *= 2)
        a = xrealloc(a, n);
    for (size_t i = 0; i < 100000; i++)
        assert_int_equal(a[i], (unsigned char)(i * 7));
    c = xrealloc(c, 50); /* small: no promise, still the bytes */
    size_t cap = 0;
    uint64_t *v = NULL;
    for (size_t n = 1; n <= 5000; n++) {
        v = xgrow_lines(v, sizeof *v, &cap, n, n - 1);
        assert_true(((uintptr_t)v & 63) == 0 && cap >= n);
        v[n - 1] = n * 3;
    }
    for (size_t n = 1; n <= 5000; n++)
        assert_true(v[n - 1] == n * 3);
    free(a);
    free(b);
    free(c);
    free(v);
}

/* Whether the mapping of /proc/self/smaps that holds address a carries
 * the kernel's flag for huge pages (VmFlags hg); -1 none holds it. */
static int huge_flagged(uintptr_t a)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    assert_non_null(f);
    char line[1024];
    int in = 0, got = -1;
    while (got < 0 && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char c;
        if (sscanf(line, "%lx-%lx %c", &lo, &hi, &c) == 3) {
            in = a >= lo && a < hi;
            continue;
        }
        if (in && strncmp(line, "VmFlags:", 8) == 0)
            got = strstr(line, " hg") != NULL;
    }
    fclose(f);
    return got;
}

/* heap_huge marks the heap for huge pages: the part made before its first
 * call and the part the heap grows into afterwards, which a later call
 * advises; every small block keeps its bytes, collapsed or not.  Skipped
 * where the kernel has no transparent huge pages, and under
 * AddressSanitizer, whose allocator has no brk heap (heap_huge does
 * nothing there). */
static void test_heap_huge(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    skip();
#endif
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char mode[128] = "";
    if (!f)
        skip();
    if (!fgets(mode, sizeof mode, f))
        mode[0] = 0;
    fclose(f);
    if (strstr(mode, "[never]") || !mode[0])
        skip();
    enum { N = 100000, SZ = 200, H = 2 << 20 };
    unsigned char **blk = xcalloc(4 * N, sizeof *blk);
    for (size_t i = 0; i < N; i++) { /* 20 MB of small blocks before */
        blk[i] = xmalloc(SZ);
        memset(blk[i], (int)(i & 255), SZ);
    }
    uintptr_t top0 = (uintptr_t)sbrk(0) & ~(uintptr_t)(H - 1);
    heap_huge();
    assert_int_equal(huge_flagged(top0 - 1), 1);
    for (size_t i = N; i < 4 * N; i++) { /* 60 MB after: the heap grows */
        blk[i] = xmalloc(SZ);
        memset(blk[i], (int)(i & 255), SZ);
    }
    heap_huge();
    uintptr_t top1 = (uintptr_t)sbrk(0) & ~(uintptr_t)(H - 1);
    assert_true(top1 > top0);
    assert_int_equal(huge_flagged(top1 - 1), 1);
    for (size_t i = 0; i < 4 * N; i++) {
        for (size_t k = 0; k < SZ; k++)
            assert_int_equal(blk[i][k], (unsigned char)(i & 255));
        free(blk[i]);
    }
    free(blk);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_u32),
        cmocka_unit_test(test_xgrow_in),
        cmocka_unit_test(test_xempty_in),
        cmocka_unit_test(test_line_blocks),
        cmocka_unit_test(test_heap_huge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
