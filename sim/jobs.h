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
 * The heap uses lazy deletion: changing a row's time, or making it active,
 * pushes a new entry, and stale entries (whose row is no longer active at
 * that time, or forgotten) are dropped when they reach the top; it is
 * rebuilt when stale entries outnumber live ones.  A row added active at a
 * time no earlier than the row added before it (a queue's new job, at now)
 * needs no entry at all: it joins the lane, the rows in id order whose
 * times never decrease, whose first is the lane's earliest; it leaves the
 * lane for the heap when its time changes or it finishes.  So a backlog of
 * rows nobody touched yet costs its rows and nothing in the index.
 *
 * Entries pushed in (available_us, id) order need no heap either: a policy
 * that sets rows again at now + a fixed delay (a schedule's next trigger, a
 * lease's end) pushes each delay's entries in order.  An entry joins one of
 * JOBS_FIFOS sorted queues, the one whose last entry is the greatest below
 * it (or an empty one); only an entry that fits none goes to the heap.  A
 * query takes the least of the heap's top, the lane's first and the queues'
 * fronts, so the answers are the heap's alone would be; a queue is read
 * front to back, so the rows its next entries name load ahead of it, where
 * a large heap's lower levels and its top's row would each wait for memory.
 *
 * Memory follows the rows still in play, not every row ever added.  Rows
 * live in pages of JOBS_PAGE consecutive ids, found through a directory
 * indexed by id (O(1) lookup); a finished row the policy will not read
 * again is forgotten (jobs_forget, or jobs_forget_below for a finished
 * front), and a page whose rows are all added and all forgotten is freed,
 * wherever it is: rows that finish out of order (a fleet's instances) free
 * their pages as soon as their neighbours finish too.  The directory drops
 * its empty front, so it spans the ids from the oldest row kept to the
 * newest (8 bytes a page).  A row may carry `extra` bytes of the policy's
 * own (jobs_set_extra), kept beside it in its page and freed with it.
 * Pages do not move: a row's pointer stays valid until the row is
 * forgotten.
 *
 * Memory comes from the allocator given at init (a policy passes the
 * engine's durable allocator, so the table survives host crashes).
 *
 * Writes can be watched: a table with a write hook (jobs_watch) calls it
 * after every row it writes (jobs_add, jobs_update), so that the engine
 * can record each write of a durable table as a durable transition (fact
 * `durable`, docs/crashpoints.md); a policy gets such a table from
 * sim_jobs_init (sim/policy_api.h).  Forgetting a row writes nothing: the
 * row's last write (COMPLETED or FAILED) was its last transition. */
#ifndef SIM_JOBS_H
#define SIM_JOBS_H

#include <stddef.h>
#include <stdint.h>

enum job_status { JOB_PENDING, JOB_RUNNING, JOB_SLEEPING, JOB_COMPLETED, JOB_FAILED };
const char *job_status_name(enum job_status s);

struct job {                       /* 48 bytes */
    uint32_t handler;
    uint32_t attempts;
    uint32_t tag;                  /* for the policy */
    uint8_t status;                /* enum job_status */
    uint8_t lane;                  /* the index's own: 1 while in the lane */
    int64_t available_us;
    int64_t due_us;                /* a producer fire it serves, -1 none */
    uint64_t item;                 /* an item it serves, UINT64_MAX none */
    uint64_t run;                  /* the latest run working on it, 0 none */
};

/* An index entry: live while row `id` is kept, active and still at
 * available_us. */
struct job_ent {
    int64_t available_us;
    uint64_t id;
};

/* A sorted queue of index entries (a ring): entries [head, tail), each
 * after the one before it in (available_us, id) order. */
struct job_fifo {
    struct job_ent *e;             /* [cap], cap a power of two (0: none) */
    uint64_t head, tail, cap;
    struct job_ent last;           /* the entry pushed last, while not empty */
};

#define JOBS_FIFOS 4

#define JOBS_PAGE_SHIFT 8
#define JOBS_PAGE (1u << JOBS_PAGE_SHIFT) /* rows a page holds: ids [k * JOBS_PAGE, (k + 1) * JOBS_PAGE) */

typedef void *(*jobs_realloc_fn)(void *ctx, void *p, size_t n);
/* Told of a row just written: its id and its new contents (ctx: the
 * table's allocator context). */
typedef void (*jobs_write_fn)(void *ctx, uint64_t id, const struct job *row);

/* Read-only for users: n (ids 0 .. n - 1 were added), base, kept, live;
 * nheap + nfifo are the index's entries. */
struct jobtab {
    uint64_t n;                    /* rows added; ids are 0 .. n - 1 */
    uint64_t base;                 /* every row below it is forgotten */
    uint64_t kept;                 /* rows added and not forgotten */
    uint64_t live;                 /* active rows */
    void **dir;                    /* page (dir_base + i) is dir[i], NULL once freed */
    uint64_t ndir, dir_cap, dir_base;
    uint64_t dir_lead;             /* dir[0 .. dir_lead - 1] are NULL */
    size_t extra;                  /* bytes of the policy's own per row (multiple of 8) */
    void *spare;                   /* a freed page kept for the next one */
    uint64_t pages;                /* pages allocated now (spare included) */
    struct job_ent *heap;
    uint64_t nheap, heap_cap;
    struct job_fifo fifo[JOBS_FIFOS]; /* entries that came in order */
    uint64_t nfifo;                /* entries in the queues */
    uint64_t lane_head;            /* no row below it is in the lane */
    uint64_t nlane;                /* rows in the lane */
    int64_t lane_last_us;          /* time of the row that joined the lane last */
    jobs_realloc_fn alloc;
    void *ctx;
    jobs_write_fn on_write;        /* NULL: writes are not watched */
};

void jobs_init(struct jobtab *t, jobs_realloc_fn alloc, void *ctx);
/* Gives every row n bytes of the policy's own (zeroed at jobs_add), read
 * with jobs_extra.  Only before the first jobs_add. */
void jobs_set_extra(struct jobtab *t, size_t n);
/* Calls fn after every row written from now on (NULL: none). */
void jobs_watch(struct jobtab *t, jobs_write_fn fn);
/* The plain heap as an allocator, for a table that is volatile (rebuilt at
 * every start) or lives outside a simulation; ctx is unused. */
void *jobs_heap_realloc(void *ctx, void *p, size_t n);
/* Frees through the allocator with size 0 (for allocators that free). */
void jobs_free(struct jobtab *t);
/* Appends a row; returns its id.  Pointers from jobs_get and jobs_extra
 * stay valid until their row is forgotten. */
uint64_t jobs_add(struct jobtab *t, const struct job *j);
/* A kept row (a forgotten one is a bug that stops simrun).  O(1). */
struct job *jobs_get(struct jobtab *t, uint64_t id);
/* The row, or NULL once it is forgotten (id < n).  O(1). */
struct job *jobs_find(struct jobtab *t, uint64_t id);
/* A kept row's extra bytes (jobs_set_extra).  O(1). */
void *jobs_extra(struct jobtab *t, uint64_t id);
/* The first kept row with an id >= id, or n if none: for walking the kept
 * rows in id order (O(1) a row, freed pages skipped whole). */
uint64_t jobs_next_kept(const struct jobtab *t, uint64_t id);
/* Forgets a kept row that is COMPLETED or FAILED: jobs_get no longer
 * answers for it, and its page is freed once its other rows are forgotten
 * too.  O(1), amortised. */
void jobs_forget(struct jobtab *t, uint64_t id);
/* Forgets every row below id still kept (all COMPLETED or FAILED).
 * Amortised O(1) a row. */
void jobs_forget_below(struct jobtab *t, uint64_t id);
/* Starts loading row id's fields, if it is kept: a hint that changes
 * nothing (any id may be given). */
void jobs_prefetch(const struct jobtab *t, uint64_t id);
/* Changes a row's status and available time, keeping the index right. */
void jobs_update(struct jobtab *t, uint64_t id, enum job_status st, int64_t available_us);
/* The active row with the earliest (available_us, id), or UINT64_MAX if
 * none; its time in *available_us.  Does not change anything. */
uint64_t jobs_peek(struct jobtab *t, int64_t *available_us);
/* The earliest active row with available_us <= now (ties: lowest id), or
 * UINT64_MAX. */
uint64_t jobs_next_due(struct jobtab *t, int64_t now_us);
/* Bytes the table holds now (pages, directory, index), for tests and
 * benchmarks. */
size_t jobs_bytes(const struct jobtab *t);
/* O(rows + index) consistency check for tests: 1 if consistent. */
int jobs_check(const struct jobtab *t);

#endif
