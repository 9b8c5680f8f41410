/* util.h: allocation that cannot fail silently, and small shared helpers.
 *
 * simrun bounds every input (see the limits in scenario.h), so running out of
 * memory is an internal error: the x* allocators print one line and exit 3
 * rather than return NULL into code that cannot use it. */
#ifndef SIM_UTIL_H
#define SIM_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define SIM_NEVER INT64_MAX /* a time that never comes */

#define US_PER_MS INT64_C(1000)
#define US_PER_S  INT64_C(1000000)
#define US_PER_MIN (INT64_C(60) * US_PER_S)
#define US_PER_H  (INT64_C(60) * US_PER_MIN)
#define US_PER_DAY (INT64_C(24) * US_PER_H)

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* Grows *p (an array of elem-sized items with capacity *cap) to hold at
 * least need items, doubling; returns *p. */
void *xgrow(void *p, size_t elem, size_t *cap, size_t need);
/* xgrow for an array whose first nbuf elements may live in buf, a buffer
 * inside the record that holds the array (so that reading a short array
 * costs no read of its own): *p starts NULL with *cap 0, takes buf while
 * need <= nbuf, and moves to the heap past it.  The record must not move
 * while the array is in buf.  Freed with xfree_in. */
void *xgrow_in(void *p, void *buf, size_t nbuf, size_t elem, size_t *cap, size_t need);
void xfree_in(void *p, const void *buf);
/* The array of xgrow_in, now empty: one that moved to the heap is freed and
 * starts over in buf (returns NULL, *cap 0), so that a record whose array
 * outgrew buf once does not keep reading it from a block of its own;
 * otherwise returns p. */
void *xempty_in(void *p, const void *buf, size_t *cap);
/* Asks for huge pages for the heap's small blocks too, for a process
 * whose live state outgrew the caches (util.c); call it again as the state
 * grows.  A hint to the kernel only. */
void heap_huge(void);
/* n bytes aligned to align (a power of two; n is rounded up to a multiple
 * of it), for tables of cache-line records; released with free. */
void *xmalloc_aligned(size_t align, size_t n);
/* xgrow for a table of cache-line records (elem a multiple or a divisor of
 * 64): the new block is 64-byte aligned, and the first `used` items move
 * to it.  Released with free. */
void *xgrow_lines(void *p, size_t elem, size_t *cap, size_t need, size_t used);

/* Exits with status 3 after printing "simrun: internal error: ..." to stderr.
 * For broken invariants that must not be survived in any build. */
_Noreturn void sim_bug(const char *file, int line, const char *what);
#define SIM_ASSERT(c) ((c) ? (void)0 : sim_bug(__FILE__, __LINE__, #c))

/* Starts loading the cache line at p; a hint that changes nothing else.
 * Every prefetch goes through here: to GCC's mod-ref analysis a function
 * whose only effect is __builtin_prefetch has no effect at all, so a call
 * to such a helper (idwin_prefetch, a prefetch of a row) is deleted as
 * dead code; the empty volatile asm is an effect the optimiser keeps, and
 * emits no instruction.  tests/cli_prefetch.sh checks that no prefetch is
 * lost. */
static inline void sim_prefetch(const void *p)
{
    __builtin_prefetch(p);
    __asm__ volatile("" : : "r"(p));
}

/* Formats a duration in microseconds compactly and exactly: "0", "250ms",
 * "1d02:00:00", "1d02:00:00.000250".  Negative values get a '-'. */
void sim_fmt_dur(int64_t us, char *buf, size_t n);
/* Pipes between simrun's processes: all n bytes, retrying on EINTR.
 * sim_write_all: 0, or -1.  sim_read_all: 1 when n bytes were read, 0 at
 * end of file before any, -1 otherwise (an error, or end of file midway). */
int sim_write_all(int fd, const void *p, size_t n);
int sim_read_all(int fd, void *p, size_t n);
/* 64-bit FNV-1a over bytes, continuing from h (start with SIM_FNV_INIT). */
#define SIM_FNV_INIT UINT64_C(0xcbf29ce484222325)
uint64_t sim_fnv(uint64_t h, const void *p, size_t n);
/* Sorts a[0..n) ascending; tmp holds n values of scratch.  An LSD radix
 * sort by bytes (a byte that every value shares costs one counting pass),
 * insertion below 48 values: O(n) for a check loop's due ids, where qsort
 * pays a call a comparison. */
void sim_sort_u32(uint32_t *a, uint32_t *tmp, size_t n);

#endif
