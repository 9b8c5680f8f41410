/* evq.h: the engine's event queue.
 *
 * A priority queue of timed events ordered by (time_us, seq), where seq is
 * the insertion sequence number the queue assigns: events at the same
 * microsecond come out in the order they were pushed (FIFO).  Time is
 * monotone: no push may be earlier than the last popped event (evq_now), and
 * a push that is earlier is a broken invariant that exits via SIM_ASSERT.
 *
 * Events are addressed by handles for cancel.  A handle stays valid while
 * its event is pending; once the event is popped or cancelled, the handle is
 * stale for good (generation counters), and a cancel given a stale handle is
 * a harmless no-op that reports 0.  (To move an event: cancel it and push it
 * again; it then goes behind everything already at its new time.)
 *
 * Costs, n = pending events: push O(1), or O(log k) plus a move of at most
 * k entries when it lands among the k queued in the sorted front (the next
 * few pops: EVQ_HINTS and those that land there); cancel O(1) amortised
 * (it may trigger a sweep of tombstones); pop O(1) amortised
 * plus the moves of a radix heap, at most 64 per event over its life and in
 * practice roughly log2(delay / typical gap between pops); peek
 * O(1) when the earliest event is already known, otherwise one scan of the
 * smallest non-empty bucket (cached until the next pop or cancel).  Memory
 * O(n): cancelled events linger as tombstones until popped, but are swept
 * out whenever they outnumber the live ones.  Generations are 32 bits and
 * go up twice a use (push, then pop or cancel): a
 * stale handle could alias a pending event only after 2^31 reuses of one
 * slot.
 *
 * Ownership: the queue owns all its memory; evq_free releases it.  The queue
 * is not thread safe. */
#ifndef SIM_EVQ_H
#define SIM_EVQ_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t evq_handle; /* 0 is never a valid handle */

struct evq_event {
    int64_t time_us;
    uint32_t seq;  /* insertion sequence number, modulo 2^32 */
    uint32_t kind; /* kind, a, b: opaque payload for the engine */
    uint32_t a;
    uint64_t b;
};

struct evq; /* opaque */

/* A new, empty queue with evq_now() == INT64_MIN.  Never returns NULL. */
struct evq *evq_new(void);
/* Frees q and everything in it; q may be NULL. */
void evq_free(struct evq *q);

/* Schedules an event at time_us (>= evq_now(q), asserted) with the given
 * payload and returns its handle (never 0). */
evq_handle evq_push(struct evq *q, int64_t time_us, uint32_t kind, uint32_t a, uint64_t b);

/* Cancels a pending event: 1 if it was pending and is now cancelled, 0 if h
 * was already popped, cancelled, rescheduled, or is not a handle of q. */
int evq_cancel(struct evq *q, evq_handle h);

/* Removes the earliest pending event, copies it to *out and returns 1, and
 * evq_now(q) becomes its time; returns 0 (and leaves *out alone) if no
 * event is pending. */
int evq_pop(struct evq *q, struct evq_event *out);

/* The time of the earliest pending event, or INT64_MAX if none.  Does not
 * advance evq_now; non-const because it may sweep out tombstones. */
int64_t evq_peek_time(struct evq *q);

/* Hints for prefetching, which change nothing in q or in what it pops: the
 * events the next n pops most likely return (n <= EVQ_HINTS), in order.
 * Those are the earliest ones pending now unless a push or a cancel comes
 * first: the queue keeps the next EVQ_HINTS in order after every pop, as
 * far as the next 4 EVQ_HINTS average gaps between pops reach.  Past them
 * (before the first pop, or after a lull) it looks at 32 entries of each
 * band of times, lowest first, and takes the least two of each, so that a
 * hint costs O(1) and may be wrong.  Fills h[0..k) with each one's
 * payload, read from the queue's index (which holds whole events), and
 * returns k (fewer than n when fewer are pending; 0 when the queue is
 * empty; at least 1 otherwise).  An event named may have been cancelled. */
#define EVQ_HINTS 8
struct evq_hint {
    uint32_t kind, a;
    uint64_t b;
};
int evq_hints(const struct evq *q, struct evq_hint *h, int n);
/* The event the k-th pop from now most likely returns (k = 0 the next, k <
 * EVQ_HINTS), as evq_hints names it, read from the sorted front alone, and a
 * load of its generation started: 1 and *h filled, or 0 when the front
 * holds fewer than k + 1 entries (evq_hints may then still name one from
 * the buckets).  O(1): for a loop that asks for one event a stage, every
 * pop. */
int evq_hint_at(const struct evq *q, int k, struct evq_hint *h);

/* How many entries the sorted front holds (cancelled ones included), the
 * part of the queue a push may have to move; for the tests of its bound. */
size_t evq_front_len(const struct evq *q);

/* The number of pending (not cancelled) events; exact. */
size_t evq_size(const struct evq *q);
/* Bytes the queue holds (its slots and buckets, by capacity); O(1). */
size_t evq_bytes(const struct evq *q);

/* The time of the last popped event, INT64_MIN before the first pop. */
int64_t evq_now(const struct evq *q);

/* Checks every internal invariant in O(n + slots); returns 1 if consistent,
 * 0 (after printing the first broken one to stderr) if not.  For tests. */
int evq_check(const struct evq *q);

#endif
