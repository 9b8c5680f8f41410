/* script.h: the consumers' scripts: what a run takes from the pending items.
 *
 * Scripts are part of the workload, identical under every policy: the policy
 * decides when to call a consumer, the script decides what that call takes
 * and when it would like to be called again (its wake request).  Scripts are
 * pure functions of the pending items and the time, so that they cannot
 * differ between policies by accident. */
#ifndef SIM_SCRIPT_H
#define SIM_SCRIPT_H

#include <stdint.h>

#include "sim/scenario.h"

/* What a script sees of one pending item. */
struct script_item {
    int64_t publish_us;
    uint32_t key;
    uint16_t topic;
};

/* Evaluates the script at now over items (pending, in publish order, or in
 * the order a policy offered them: every script reads its list by
 * position, so the bounds below hold in any order).
 * Writes the indices (into items) of what it takes to take[] in ascending
 * order (at most max_take when max_take > 0) and returns how many; *wake_us
 * is the earliest instant > now at which it would take something from the
 * items it left, or SIM_NEVER.  take must hold n entries.  O(n) except
 * correlate, O(n log n). */
uint32_t script_eval(const struct script *sc, const struct scenario *s, const struct script_item *items,
                     uint32_t n, int64_t now_us, uint32_t max_take, uint32_t *take, int64_t *wake_us);

/* The earliest instant >= now at which script_eval would take something
 * from the npending items pending (now if it would now), SIM_NEVER if never
 * without new items.  items holds the first n of them (n <= npending):
 * script_due reads the first (script_due_needs), all of them for CORRELATE. */
int64_t script_due(const struct script *sc, const struct scenario *s, const struct script_item *items,
                   uint32_t n, uint32_t npending, int64_t now_us);
/* How many leading items script_due reads: 1, or UINT32_MAX (CORRELATE). */
uint32_t script_due_needs(const struct script *sc);

/* How many leading items script_eval with that max_take reads: given the
 * first min(n, that many) pending items, it decides exactly as it would
 * given all n (takes the same, asks the same wake).  UINT32_MAX: all of
 * them (a CORRELATE script, or max_take 0: a run that takes everything
 * due).  A run start gathers only these, so that a consumer that takes one
 * item per run pays for the item, not for its backlog. */
uint32_t script_needs(const struct script *sc, uint32_t max_take);

/* 1 when script_eval over items[0, n) at now with max_take decides as it
 * would over any longer list that starts with them, before script_needs's
 * bound is reached: a WINDOW or DIGEST script stops at its first item not
 * yet due, so a prefix that ends with one suffices.  A run start gathers
 * pending items in growing chunks until this holds or the bound is met. */
int script_enough(const struct script *sc, const struct scenario *s, const struct script_item *items, uint32_t n,
                  int64_t now_us);

/* DIGEST: the instant an item published at publish_us is due (the first
 * local digest time at or after it). */
int64_t script_digest_due(const struct scenario *s, int digest_min, int64_t publish_us);

#endif
