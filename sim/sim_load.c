/* sim_load.c: the engine's load: publishes, sources and items.
 *
 * An event published on a topic instance becomes one item per subscribed
 * consumer (dense ids, publish order); a source's arrivals are generated
 * lazily, up to the instant a producer polls it, and published when that
 * producer's run commits.  Items are durable (spec 3) except under a policy
 * whose items live only in its memory (items_volatile).  State and
 * invariants: sim_int.h. */
#include "sim/sim_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/arrival.h"
#include "sim/evq.h"
#include "sim/util.h"

/* --- items ------------------------------------------------------------------- */

const struct sim_item *sim_item(const struct sim *sim, uint64_t item)
{
    SIM_ASSERT(item < sim->nitems);
    return &sim->items[item];
}

uint32_t sim_pending_count(const struct sim *sim, uint32_t consumer) { return sim->hs[consumer].npending; }

/* Drops dead entries from the front, and compacts when most are dead. */
static void pend_tidy(struct sim *sim, struct handler_state *hs)
{
    while (hs->pend_head < hs->pend_n && sim->items[hs->pend[hs->pend_head]].state != ITEM_PENDING)
        hs->pend_head++;
    uint32_t len = hs->pend_n - hs->pend_head;
    if (hs->pend_head > 64 && hs->pend_head * 2 > hs->pend_n) {
        memmove(hs->pend, hs->pend + hs->pend_head, len * sizeof *hs->pend);
        hs->pend_n = len;
        hs->pend_head = 0;
    }
    if (len > 64 && hs->npending * 2 < len) {
        uint32_t j = 0;
        for (uint32_t i = hs->pend_head; i < hs->pend_n; i++)
            if (sim->items[hs->pend[i]].state == ITEM_PENDING)
                hs->pend[j++] = hs->pend[i];
        hs->pend_head = 0;
        hs->pend_n = j;
    }
}

int64_t sim_pending_oldest(const struct sim *sim, uint32_t consumer)
{
    const struct handler_state *hs = &sim->hs[consumer];
    for (uint32_t i = hs->pend_head; i < hs->pend_n; i++)
        if (sim->items[hs->pend[i]].state == ITEM_PENDING)
            return sim->items[hs->pend[i]].publish_us;
    return SIM_NEVER;
}

uint32_t sim_pending_items(const struct sim *sim, uint32_t consumer, uint64_t *out, uint32_t max)
{
    const struct handler_state *hs = &sim->hs[consumer];
    uint32_t n = 0;
    for (uint32_t i = hs->pend_head; i < hs->pend_n; i++) {
        if (sim->items[hs->pend[i]].state != ITEM_PENDING)
            continue;
        if (n < max)
            out[n] = hs->pend[i];
        n++;
    }
    return n;
}

uint64_t sim_orphan_pending(const struct sim *sim, uint32_t inst) { return sim->orphans[inst]; }

void sim__item_gone(struct sim *sim, uint64_t item, uint8_t state)
{
    struct sim_item *it = &sim->items[item];
    SIM_ASSERT(it->state == ITEM_PENDING);
    it->state = state;
    struct handler_state *hs = &sim->hs[it->consumer];
    hs->npending--;
    pend_tidy(sim, hs);
}

void sim_item_drop(struct sim *sim, uint64_t item)
{
    if (sim->items[item].state != ITEM_PENDING)
        return;
    sim__item_gone(sim, item, ITEM_DROPPED);
    fact_drop(&sim->fx, item, sim->items[item].consumer, DROP_EVICTED);
}

/* Publishes one event on topic instance t: one item per subscriber. */
void sim__publish(struct sim *sim, uint32_t t, int64_t origin_us, uint32_t key)
{
    const struct world *w = &sim->w;
    uint32_t inst = w->topic_inst[t];
    uint16_t local = (uint16_t)(t - w->inst_first_t[inst]);
    if (w->sub_first[t] == w->sub_first[t + 1]) {
        sim->orphans[inst]++;
        fact_orphan(&sim->fx, t, key);
        return;
    }
    for (uint32_t k = w->sub_first[t]; k < w->sub_first[t + 1]; k++) {
        uint32_t c = w->subs[k];
        uint64_t max_items = sim->o->max_items ? sim->o->max_items : SIM_MAX_ITEMS_DEFAULT;
        if (sim->nitems >= max_items) {
            char m[128];
            snprintf(m, sizeof m, "item limit: more than %" PRIu64 " items (events times subscribers)", max_items);
            sim__stop(sim, SIM_EVENT_LIMIT, m);
            return;
        }
        sim->items = xgrow(sim->items, sizeof *sim->items, &sim->items_cap, sim->nitems + 1);
        uint64_t id = sim->nitems++;
        sim->items[id] = (struct sim_item){.origin_us = origin_us, .publish_us = sim->now_us, .consumer = c,
                                           .key = key, .topic = local, .state = ITEM_PENDING};
        struct handler_state *hs = &sim->hs[c];
        if (hs->pend_n == hs->pend_cap) {
            size_t cap = hs->pend_cap;
            hs->pend = xgrow(hs->pend, sizeof *hs->pend, &cap, (size_t)hs->pend_n + 1);
            hs->pend_cap = (uint32_t)cap;
        }
        hs->pend[hs->pend_n++] = id;
        hs->npending++;
        hs->streak = 0;
        hs->inst_runs = 0;
        sim->same_instant = 0;
        fact_publish(&sim->fx, id, c, origin_us, key);
        if (sim->accepting) {
            sim->ops->on_publish(sim->pol, c, id, sim->now_us);
        } else if (sim->ops->items_volatile) {
            /* The host is down or stopping: an event for a policy that keeps
             * items only in memory has nowhere to go. */
            sim__item_gone(sim, id, ITEM_DROPPED);
            fact_drop(&sim->fx, id, c, DROP_CRASH);
        }
    }
}

/* Gathers the consumer's pending items (or the offered ones) for its script. */
int64_t sim_sched_next(const struct sim *sim, uint32_t handler, int64_t after_us, int inclusive)
{
    const struct handler_def *hd = world_hdef(&sim->w, handler);
    if (hd->kind != H_PRODUCER)
        return SIM_NEVER;
    return schedule_next_asof(sim->scn, &hd->sched, after_us, inclusive, sim->now_us, NULL);
}

/* --- sources ------------------------------------------------------------------ */

struct src_buf *sim__src_of(struct sim *sim, uint32_t handler)
{
    const struct handler_def *hd = world_hdef(&sim->w, handler);
    if (hd->source < 0)
        return NULL;
    return &sim->srcs[(size_t)sim->w.h[handler].inst * sim->scn->nsources + (size_t)hd->source];
}

/* Generates the source's arrivals up to and including t. */
void sim__src_fill(struct src_buf *sb, int64_t t_us)
{
    while (sb->g.next_us <= t_us) {
        int64_t at = sb->g.next_us;
        uint32_t key = arr_take(&sb->g);
        if (sb->n == sb->cap) {
            size_t c1 = sb->cap, c2 = sb->cap;
            sb->t_us = xgrow(sb->t_us, sizeof *sb->t_us, &c1, sb->n + 1);
            sb->key = xgrow(sb->key, sizeof *sb->key, &c2, sb->n + 1);
            sb->cap = c1;
        }
        sb->t_us[sb->n] = at;
        sb->key[sb->n] = key;
        sb->n++;
    }
}

void sim__publish_stream(struct sim *sim, uint32_t k)
{
    struct pub_stream *ps = &sim->pubs[k];
    while (ps->g.next_us == sim->now_us) {
        uint32_t key = arr_take(&ps->g);
        sim__publish(sim, ps->topic, sim->now_us, key);
    }
    ps = &sim->pubs[k];
    if (ps->g.next_us != SIM_NEVER)
        evq_push(sim->q, ps->g.next_us, EV_PUBLISH, k, 0);
}

