/* util.c: see util.h. */
#include "sim/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include <malloc.h>
#include <stdatomic.h>

static _Noreturn void oom(size_t n)
{
    fprintf(stderr, "simrun: internal error: out of memory (%zu bytes)\n", n);
    exit(3);
}

/* Large blocks ask for transparent huge pages.  In a large fleet an event
 * reads an instance's records at random over tens of MiB; with 4 KiB pages
 * most of those reads also miss the TLB, and a prefetch that misses it may
 * be dropped.  A hint to the kernel only (ignored where huge pages are
 * off), for the 2 MiB-aligned part of a block of HUGE_MIN bytes or more
 * (xmalloc_aligned aligns such a block to 2 MiB, so all of it). */
#define HUGE_PAGE ((uintptr_t)2 << 20)
#define HUGE_MIN ((size_t)2 << 20)

static void *huge_hint(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    if (n >= HUGE_MIN) {
        uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
        uintptr_t hi = ((uintptr_t)p + n) & ~(HUGE_PAGE - 1);
        if (hi > lo)
            (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    }
#endif
    return p;
}

/* The heap itself holds the small blocks: a run's items, a policy's
 * queues, the checker's sets.  At fleet scale that is tens of MiB read at
 * random too.  heap_huge asks for huge pages for glibc's main arena, the
 * heap of every simulation (a sweep runs each in a process of its own),
 * which grows by brk: it is made to grow HEAP_PAD at a time, ahead of use;
 * each new part is advised as soon as a call sees it, so that its pages
 * are huge when first touched; and what was touched before the first call
 * is collapsed into huge pages there and then (MADV_COLLAPSE, where the
 * kernel has it).  A hint to the kernel only. */
#define HEAP_PAD ((size_t)64 << 20)
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#if defined(__GLIBC__) && defined(MADV_HUGEPAGE) && !defined(__SANITIZE_ADDRESS__)
#define HEAP_HUGE 1
/* Where the brk heap starts (its [heap] line in /proc/self/maps), 0 unknown. */
static uintptr_t heap_start(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return 0;
    char line[512];
    uintptr_t lo = 0;
    while (!lo && fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (strstr(line, "[heap]") && sscanf(line, "%lx-%lx", &a, &b) == 2)
            lo = a;
    }
    fclose(f);
    return lo;
}

/* The 2 MiB pages within [lo, hi) are to be huge; collapse: now. */
static void advise_huge(uintptr_t lo, uintptr_t hi, int collapse)
{
    lo = (lo + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    hi &= ~(HUGE_PAGE - 1);
    if (hi <= lo)
        return;
    (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    if (collapse)
        (void)madvise((void *)lo, hi - lo, MADV_COLLAPSE);
}
#endif

void heap_huge(void)
{
#ifdef HEAP_HUGE
    static atomic_flag begun = ATOMIC_FLAG_INIT;
    static _Atomic uintptr_t advised; /* the heap is advised below this; 0: not yet */
    if (!atomic_flag_test_and_set(&begun)) {
        (void)mallopt(M_TOP_PAD, (int)HEAP_PAD);
        uintptr_t top = (uintptr_t)sbrk(0), lo = heap_start();
        if (lo && lo < top)
            advise_huge(lo, top, 1); /* the heap so far */
        atomic_store(&advised, top & ~(HUGE_PAGE - 1));
        return;
    }
    uintptr_t from = atomic_load(&advised), to = (uintptr_t)sbrk(0) & ~(HUGE_PAGE - 1);
    if (from && to > from && atomic_compare_exchange_strong(&advised, &from, to))
        advise_huge(from, to, 0); /* what it grew into since */
#endif
}

/* Blocks of LINE_MIN bytes or more that xmalloc and xcalloc make start on
 * a cache line.  malloc puts a large block 16 bytes past a page boundary,
 * so that a table of 32-byte records (a policy's rows) had every other
 * record straddle two lines, and a read of one two cache misses.  xrealloc
 * keeps realloc's alignment (moving a block to align it would copy it at
 * every growth, where realloc remaps it): a table of such records that
 * grows uses xgrow_lines. */
#define LINE_MIN ((size_t)4096)

static void *line_alloc(size_t n)
{
    void *p = aligned_alloc(64, (n + 63) & ~(size_t)63);
    if (!p)
        oom(n);
    return p;
}

void *xmalloc(size_t n)
{
    void *p = n >= LINE_MIN ? line_alloc(n) : malloc(n ? n : 1);
    if (!p)
        oom(n);
    return huge_hint(p, n);
}

void *xcalloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        oom(SIZE_MAX);
    size_t n = count * size;
    if (n >= LINE_MIN) {
        void *p = line_alloc(n);
        memset(p, 0, n);
        return huge_hint(p, n);
    }
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        oom(n);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return huge_hint(q, n);
}

void *xmalloc_aligned(size_t align, size_t n)
{
    if (n >= HUGE_MIN && align < HUGE_PAGE)
        align = HUGE_PAGE; /* all of it in huge pages */
    size_t m = n ? (n + align - 1) / align * align : align;
    void *p = aligned_alloc(align, m);
    if (!p)
        oom(m);
    return huge_hint(p, m);
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = xmalloc(n);
    memcpy(d, s, n);
    return d;
}

/* The capacity that holds need elements: cap doubled (first if 0) as often
 * as it takes. */
static size_t grown_cap(size_t cap, size_t first, size_t elem, size_t need)
{
    size_t c = cap ? cap : first;
    while (c < need) {
        if (c > SIZE_MAX / 2 / elem)
            oom(SIZE_MAX);
        c *= 2;
    }
    return c;
}

void *xgrow(void *p, size_t elem, size_t *cap, size_t need)
{
    if (need <= *cap)
        return p;
    *cap = grown_cap(*cap, 8, elem, need);
    return xrealloc(p, *cap * elem);
}

void *xgrow_lines(void *p, size_t elem, size_t *cap, size_t need, size_t used)
{
    if (need <= *cap)
        return p;
    size_t c = grown_cap(*cap, 64, elem, need);
    void *n = xmalloc_aligned(64, c * elem);
    if (used)
        memcpy(n, p, used * elem);
    free(p);
    *cap = c;
    return n;
}

void *xgrow_in(void *p, void *buf, size_t nbuf, size_t elem, size_t *cap, size_t need)
{
    if (need <= *cap)
        return p;
    if (!p && need <= nbuf) {
        *cap = nbuf;
        return buf;
    }
    if (p != buf)
        return xgrow(p, elem, cap, need);
    size_t have = *cap;
    void *q = xgrow(NULL, elem, cap, need);
    memcpy(q, buf, have * elem);
    return q;
}

void xfree_in(void *p, const void *buf)
{
    if (p != buf)
        free(p);
}

void *xempty_in(void *p, const void *buf, size_t *cap)
{
    if (p == buf)
        return p;
    free(p);
    *cap = 0;
    return NULL;
}

_Noreturn void sim_bug(const char *file, int line, const char *what)
{
    fprintf(stderr, "simrun: internal error: %s:%d: assertion failed: %s\n", file, line, what);
    exit(3);
}

void sim_fmt_dur(int64_t us, char *buf, size_t n)
{
    const char *sign = "";
    uint64_t u = (uint64_t)us;
    if (us < 0) {
        sign = "-";
        u = (uint64_t)0 - (uint64_t)us;
    }
    uint64_t d = u / (uint64_t)US_PER_DAY, rem = u % (uint64_t)US_PER_DAY;
    uint64_t h = rem / (uint64_t)US_PER_H, m = rem / (uint64_t)US_PER_MIN % 60, s = rem / (uint64_t)US_PER_S % 60;
    uint64_t f = rem % (uint64_t)US_PER_S;
    if (u == 0) {
        snprintf(buf, n, "0");
    } else if (u < (uint64_t)US_PER_S && u % (uint64_t)US_PER_MS == 0) {
        snprintf(buf, n, "%s%llums", sign, (unsigned long long)(u / (uint64_t)US_PER_MS));
    } else if (u < (uint64_t)US_PER_MS) {
        snprintf(buf, n, "%s%lluus", sign, (unsigned long long)u);
    } else {
        char frac[16] = "";
        if (f % 1000 == 0 && f)
            snprintf(frac, sizeof frac, ".%03llu", (unsigned long long)(f / 1000));
        else if (f)
            snprintf(frac, sizeof frac, ".%06llu", (unsigned long long)f);
        if (d)
            snprintf(buf, n, "%s%llud%02llu:%02llu:%02llu%s", sign, (unsigned long long)d, (unsigned long long)h,
                     (unsigned long long)m, (unsigned long long)s, frac);
        else
            snprintf(buf, n, "%s%02llu:%02llu:%02llu%s", sign, (unsigned long long)h, (unsigned long long)m,
                     (unsigned long long)s, frac);
    }
}

uint64_t sim_fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

int sim_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

int sim_read_all(int fd, void *p, size_t n)
{
    char *c = p;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, c + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            return got == 0 ? 0 : -1;
        got += (size_t)r;
    }
    return 1;
}

void sim_sort_u32(uint32_t *a, uint32_t *tmp, size_t n)
{
    if (n < 48) {
        for (size_t i = 1; i < n; i++) {
            uint32_t x = a[i];
            size_t k = i;
            for (; k > 0 && a[k - 1] > x; k--)
                a[k] = a[k - 1];
            a[k] = x;
        }
        return;
    }
    uint32_t *src = a, *dst = tmp;
    for (unsigned shift = 0; shift < 32; shift += 8) {
        size_t at[256] = {0};
        for (size_t i = 0; i < n; i++)
            at[src[i] >> shift & 255]++;
        if (at[src[0] >> shift & 255] == n)
            continue; /* one digit for all: this pass moves nothing */
        size_t pos = 0;
        for (unsigned d = 0; d < 256; d++) {
            size_t c = at[d];
            at[d] = pos;
            pos += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[at[src[i] >> shift & 255]++] = src[i];
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
}
