/* jobs.h: a durable table of timed rows, shared by the policies that keep
 * job rows, schedule rows or delivery-queue entries.
 *
 * A row has a status and an `available_us`: the instant from which it may be
 * taken (a job's available_at, a schedule's next trigger, a delivery's next
 * attempt).  Rows in an active status (PENDING, SLEEPING, RUNNING) are
 * indexed by (available_us, id) in a binary heap, so the earliest available
 * row is found in O(log n); rows that reach COMPLETED or FAILED leave the
 * index.  A RUNNING row stays indexed on purpose: with a visibility timeout
 * it becomes available again when its lease runs out.
 *
 * The heap uses lazy deletion: changing a row's time or status pushes a new
 * entry, and stale entries (whose time or version no longer matches the row)
 * are dropped when they reach the top; it is rebuilt when stale entries
 * outnumber live ones.
 *
 * Memory comes from the allocator given at init (a policy passes the
 * engine's durable allocator, so the table survives host crashes).  A
 * policy whose rows finish roughly in order (a queue) lets the table forget
 * the finished rows at its front (jobs_forget_below), so that memory
 * follows the rows still in play rather than every row ever added. */
#ifndef SIM_JOBS_H
#define SIM_JOBS_H

#include <stddef.h>
#include <stdint.h>

enum job_status { JOB_PENDING, JOB_RUNNING, JOB_SLEEPING, JOB_COMPLETED, JOB_FAILED };
const char *job_status_name(enum job_status s);

struct job {
    uint32_t handler;
    uint8_t status;                /* enum job_status */
    uint32_t attempts;
    uint32_t version;              /* bumped at every change; for the index */
    int64_t available_us;
    int64_t due_us;                /* a producer fire it serves, -1 none */
    uint64_t item;                 /* an item it serves, UINT64_MAX none */
    uint64_t run;                  /* the latest run working on it, 0 none */
    uint64_t tag;                  /* for the policy */
};

struct job_ent {
    int64_t available_us;
    uint64_t id;
    uint32_t version;
};

typedef void *(*jobs_realloc_fn)(void *ctx, void *p, size_t n);

struct jobtab {
    struct job *rows;              /* row id is rows[id - off]; ids from 0 */
    uint64_t n, cap;
    uint64_t base;                 /* rows below it are forgotten */
    uint64_t off;                  /* the id of rows[0] (<= base) */
    struct job_ent *heap;
    uint64_t nheap, heap_cap;
    uint64_t live;                 /* active rows */
    jobs_realloc_fn alloc;
    void *ctx;
};

void jobs_init(struct jobtab *t, jobs_realloc_fn alloc, void *ctx);
/* The plain heap as an allocator, for a table that is volatile (rebuilt at
 * every start) or lives outside a simulation; ctx is unused. */
void *jobs_heap_realloc(void *ctx, void *p, size_t n);
/* Frees through the allocator with size 0 (for allocators that free). */
void jobs_free(struct jobtab *t);
/* Appends a row; returns its id.  The pointer from jobs_get is valid until
 * the next jobs_add. */
uint64_t jobs_add(struct jobtab *t, const struct job *j);
struct job *jobs_get(struct jobtab *t, uint64_t id);
/* Forgets the rows below id (all COMPLETED or FAILED, not yet forgotten
 * or already): jobs_get no longer answers for them.  Amortised O(1) a row. */
void jobs_forget_below(struct jobtab *t, uint64_t id);
/* Changes a row's status and available time, keeping the index right. */
void jobs_update(struct jobtab *t, uint64_t id, enum job_status st, int64_t available_us);
/* The active row with the earliest (available_us, id), or UINT64_MAX if
 * none; its time in *available_us.  Does not change anything. */
uint64_t jobs_peek(struct jobtab *t, int64_t *available_us);
/* The earliest active row with available_us <= now (ties: lowest id), or
 * UINT64_MAX. */
uint64_t jobs_next_due(struct jobtab *t, int64_t now_us);
/* O(n) consistency check for tests: 1 if consistent. */
int jobs_check(const struct jobtab *t);

#endif
