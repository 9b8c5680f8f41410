/* sim_load.c: the engine's load: publishes, sources and items.
 *
 * An event published on a topic instance becomes one item per subscribed
 * consumer (dense ids, publish order); a source's arrivals are generated
 * lazily, up to the instant a producer polls it, and published when that
 * producer's run commits.  Items are durable (spec 3) except under a policy
 * whose items live only in its memory (items_volatile).
 *
 * Memory follows live state: an item's record exists while it is pending or
 * a kept run's reservation holds it (a committed run's only until its end,
 * unless the policy holds the run: sim_runs.c), in a table of slots
 * recycled through a free list and found by id through item_map; each
 * consumer's pending items are a list through their slots, in publish
 * order.  A source keeps only the arrivals its producer has not published
 * yet.  State and invariants: sim_int.h. */
#include "sim/sim_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/arrival.h"
#include "sim/evq.h"
#include "sim/util.h"

/* --- items ------------------------------------------------------------------- */

/* What sim_item answers for an item that is no longer live. */
static const struct sim_item item_gone_rec = {.consumer = UINT32_MAX, .state = ITEM_GONE};

struct item_slot *sim__item_find(const struct sim *sim, uint64_t item)
{
    uint32_t slot = idwin_get(&sim->item_map, item);
    return slot == IDMAP_NONE ? NULL : &sim->items[slot];
}

const struct sim_item *sim_item(const struct sim *sim, uint64_t item)
{
    SIM_ASSERT(item < sim->nitems);
    /* An item that only a run in the retire queue holds is gone for the
     * policy: the queue is drained first (the engine's own state, not the
     * policy's, so the const is the API's promise, kept). */
    if (sim->retq_n)
        sim__retq_flush((struct sim *)sim);
    const struct item_slot *it = sim__item_find(sim, item);
    return it ? &it->pub : &item_gone_rec;
}

uint32_t sim_pending_count(const struct sim *sim, uint32_t consumer) { return sim->hs[consumer].npending; }

int64_t sim_pending_oldest(const struct sim *sim, uint32_t consumer)
{
    uint32_t head = sim->hs[consumer].pend_head;
    return head == ITEM_NIL ? SIM_NEVER : sim->items[head].pub.publish_us;
}

uint32_t sim_pending_items(const struct sim *sim, uint32_t consumer, uint64_t *out, uint32_t max)
{
    uint32_t n = 0;
    for (uint32_t slot = sim->hs[consumer].pend_head; slot != ITEM_NIL; slot = sim->items[slot].next) {
        if (n < max)
            out[n] = sim->items[slot].id;
        n++;
    }
    return n;
}

uint64_t sim_orphan_pending(const struct sim *sim, uint32_t inst) { return sim->orphans[inst]; }

static uint32_t item_alloc(struct sim *sim)
{
    uint32_t slot = sim->items_free;
    if (slot == ITEM_NIL && sim->items_hw == sim->items_cap && sim->retq_n) {
        sim__retq_flush(sim); /* grow only as the eager free would have */
        slot = sim->items_free;
    }
    if (slot != ITEM_NIL) {
        sim->items_free = sim->items[slot].next;
        if (sim->items_free != ITEM_NIL) /* the next one's link, read at the next publish */
            sim_prefetch(&sim->items[sim->items_free]);
        return slot;
    }
    if (sim->items_hw == sim->items_cap) {
        SIM_ASSERT(sim->items_cap < UINT32_MAX / 2);
        size_t cap = sim->items_cap;
        sim->items = xgrow_lines(sim->items, sizeof *sim->items, &cap, (size_t)sim->items_hw + 1, sim->items_hw);
        sim->items_cap = (uint32_t)cap;
    }
    return sim->items_hw++;
}

/* --- the pairing index of correlate consumers ----------------------------------
 * A `correlate A B` script takes something exactly when some key has an
 * item of topic A and one of topic B pending.  Whether that is so is kept
 * as items join and leave the pending lists, so that the oracle's due check
 * (at every publish) and a start that would take nothing need not read the
 * backlog: with most events unmatched, each of those would otherwise sort
 * every pending item. */

/* The index's key of (consumer, side, key): consumers are fewer than 2^26
 * (SCN_MAX_INSTANCES x SCN_MAX_HANDLERS). */
static uint64_t corr_key(uint32_t c, int side, uint32_t key)
{
    return (uint64_t)c << 33 | (uint64_t)side << 32 | key;
}

static uint32_t corr_get(const struct sim *sim, uint32_t c, int side, uint32_t key)
{
    uint32_t n = idmap_get(&sim->corr_count, corr_key(c, side, key));
    return n == IDMAP_NONE ? 0 : n;
}

/* Item it of consumer c joined (d = 1) or left (d = -1) its pending list. */
static void corr_note(struct sim *sim, uint32_t c, const struct sim_item *it, int d)
{
    const struct script *sc = &sim__hdef(sim, c)->script;
    if (sc->kind != SCRIPT_CORRELATE || (it->topic != sc->corr_a && it->topic != sc->corr_b))
        return;
    int side = it->topic == sc->corr_b;
    uint32_t n = corr_get(sim, c, side, it->key);
    if (n)
        idmap_del(&sim->corr_count, corr_key(c, side, it->key));
    SIM_ASSERT(d > 0 || n > 0);
    uint32_t now = d > 0 ? n + 1 : n - 1;
    if (now)
        idmap_put(&sim->corr_count, corr_key(c, side, it->key), now);
    if ((n == 0) != (now == 0) && corr_get(sim, c, !side, it->key))
        sim->corr_ready[c] += now ? 1u : UINT32_MAX; /* a key gained or lost its pair */
}

void sim__corr_setup(struct sim *sim)
{
    const struct scenario *s = sim->scn;
    idmap_init(&sim->corr_count);
    if (sim->o->no_pair_index)
        return;
    for (uint16_t f = 0; f < s->nwfs; f++)
        for (uint16_t k = 0; k < s->wfs[f].nhandlers; k++) {
            const struct handler_def *hd = &s->wfs[f].handlers[k];
            if (hd->kind == H_CONSUMER && hd->script.kind == SCRIPT_CORRELATE) {
                sim->corr_ready = xcalloc(sim->w.nh ? sim->w.nh : 1, sizeof *sim->corr_ready);
                return;
            }
        }
}

void sim__corr_free(struct sim *sim)
{
    free(sim->corr_ready);
    idmap_free(&sim->corr_count);
}

uint32_t sim__corr_pairs(const struct sim *sim, uint32_t c)
{
    if (!sim->corr_ready || sim__hdef(sim, c)->script.kind != SCRIPT_CORRELATE)
        return UINT32_MAX;
    return sim->corr_ready[c];
}

void sim__item_gone(struct sim *sim, uint32_t slot, uint8_t state)
{
    struct item_slot *it = &sim->items[slot];
    SIM_ASSERT(it->pub.state == ITEM_PENDING);
    it->pub.state = state;
    struct handler_state *hs = &sim->hs[it->pub.consumer];
    if (it->prev != ITEM_NIL)
        sim->items[it->prev].next = it->next;
    else
        hs->pend_head = it->next;
    if (it->next != ITEM_NIL)
        sim->items[it->next].prev = it->prev;
    else
        hs->pend_tail = it->prev;
    it->prev = it->next = ITEM_NIL;
    hs->npending--;
    if (sim->corr_ready)
        corr_note(sim, it->pub.consumer, &it->pub, -1);
}

void sim__item_release(struct sim *sim, uint32_t slot)
{
    struct item_slot *it = &sim->items[slot];
    if (it->pub.state == ITEM_PENDING || it->refs)
        return;
    uint64_t id = it->id;
    fact_item_retired(&sim->fx, id);
    idwin_del(&sim->item_map, id);
    sim->origin_live[it->origin]--;
    it->pub.state = ITEM_GONE;
    it->next = sim->items_free;
    sim->items_free = slot;
    sim->live_items--;
}

void sim_item_drop(struct sim *sim, uint64_t item)
{
    SIM_ASSERT(item < sim->nitems);
    uint32_t slot = idwin_get(&sim->item_map, item);
    if (slot == IDMAP_NONE || sim->items[slot].pub.state != ITEM_PENDING)
        return;
    sim__item_gone(sim, slot, ITEM_DROPPED);
    fact_drop(&sim->fx, item, sim->items[slot].pub.consumer, DROP_EVICTED);
    sim__item_release(sim, slot);
}

/* A new pending item of consumer c, at the tail of its list. */
static uint64_t item_new(struct sim *sim, uint32_t c, int64_t origin_us, uint32_t key, uint16_t topic,
                         uint32_t origin, uint32_t *slot_out)
{
    uint32_t slot = item_alloc(sim);
    uint64_t id = sim->nitems++;
    struct handler_state *hs = &sim->hs[c];
    struct item_slot *it = &sim->items[slot];
    *it = (struct item_slot){.pub = {.origin_us = origin_us, .publish_us = sim->now_us, .consumer = c, .key = key,
                                     .topic = topic, .state = ITEM_PENDING},
                             .id = id, .prev = hs->pend_tail, .next = ITEM_NIL, .origin = origin};
    if (hs->pend_tail != ITEM_NIL)
        sim->items[hs->pend_tail].next = slot;
    else
        hs->pend_head = slot;
    hs->pend_tail = slot;
    hs->npending++;
    if (sim->corr_ready)
        corr_note(sim, c, &it->pub, 1);
    hs->streak = 0;
    sim->inst_runs[c].n = 0;
    sim->same_instant = 0;
    idwin_put(&sim->item_map, id, slot);
    sim->origin_live[origin]++;
    sim->live_items++;
    *slot_out = slot;
    return id;
}

/* Publishes one event on topic instance t: one item per subscriber. */
void sim__reach_topic(const struct sim *sim, uint32_t t, struct sim_reach *out)
{
    const struct world *w = &sim->w;
    uint32_t inst = w->topic_inst[t];
    *out = (struct sim_reach){.t = t, .inst = inst, .k0 = w->sub_first[t], .k1 = w->sub_first[t + 1],
                              .local = (uint16_t)(t - w->inst_first_t[inst])};
}

void sim__reach_out(const struct sim *sim, uint32_t h, const struct handler_def *hd, struct sim_reach *out)
{
    SIM_ASSERT(hd->out_topic >= 0);
    uint32_t subs = sim->h_out[h].subs, n = subs & 7;
    if (n == 0 || n == 7) {
        sim__reach_topic(sim, sim->w.inst_first_t[sim->hs[h].inst] + (uint32_t)hd->out_topic, out);
        return;
    }
    /* The topic instance is not needed: it has subscribers, so no orphan
     * names it. */
    *out = (struct sim_reach){.t = UINT32_MAX, .inst = sim->hs[h].inst, .k0 = subs >> 3, .k1 = (subs >> 3) + n,
                              .local = (uint16_t)hd->out_topic};
}

void sim__publish(struct sim *sim, const struct sim_reach *to, int64_t origin_us, uint32_t key, uint32_t origin)
{
    const struct world *w = &sim->w;
    uint32_t inst = to->inst;
    uint16_t local = to->local;
    if (to->k0 == to->k1) {
        SIM_ASSERT(to->t < w->nt);
        sim->orphans[inst]++;
        fact_orphan(&sim->fx, to->t, key);
        return;
    }
    for (uint32_t k = to->k0; k < to->k1; k++) {
        uint32_t c = w->subs[k];
        uint64_t max_items = sim->o->max_items ? sim->o->max_items : SIM_MAX_ITEMS_DEFAULT;
        if (sim->live_items >= max_items)
            sim__retq_flush(sim); /* counted as the eager free would have */
        if (sim->live_items >= max_items) {
            char m[128];
            snprintf(m, sizeof m, "item limit: more than %" PRIu64 " live items (events times subscribers)",
                     max_items);
            sim__stop(sim, SIM_EVENT_LIMIT, m);
            return;
        }
        if (sim__mem_check(sim))
            return;
        uint32_t slot;
        uint64_t id = item_new(sim, c, origin_us, key, local, origin, &slot);
        sim->items[slot].ck_slot = fact_publish(&sim->fx, id, c, origin_us, key);
        if (sim->accepting) {
            sim->ops->on_publish(sim->pol, c, id, sim->now_us);
        } else if (sim->ops->items_volatile) {
            /* The host is down or stopping: an event for a policy that keeps
             * items only in memory has nowhere to go. */
            sim__item_gone(sim, slot, ITEM_DROPPED);
            fact_drop(&sim->fx, id, c, DROP_CRASH);
            sim__item_release(sim, slot);
        }
    }
}

int64_t sim_sched_next(const struct sim *sim, uint32_t handler, int64_t after_us, int inclusive)
{
    const struct handler_def *hd = sim__hdef(sim, handler);
    if (hd->kind != H_PRODUCER)
        return SIM_NEVER;
    return schedule_next_asof(sim->scn, &hd->sched, after_us, inclusive, sim->now_us, NULL);
}

/* --- sources ------------------------------------------------------------------ */

struct src_buf *sim__src_of(struct sim *sim, uint32_t handler)
{
    uint32_t s = sim->h_out[handler].src;
    return s == UINT32_MAX ? NULL : &sim->srcs[s];
}

/* Generates the source's arrivals up to and including t. */
void sim__src_fill(struct sim *sim, struct src_buf *sb, int64_t t_us)
{
    while (sb->g.next_us <= t_us) {
        int64_t at = sb->g.next_us;
        uint32_t key = arr_take(&sb->g);
        size_t k = (size_t)(sb->n - sb->base);
        if (k == sb->cap) {
            size_t cap = sb->cap;
            struct src_arrival *na = xmalloc(2 * cap * sizeof *na);
            memcpy(na, cap > SRC_INLINE ? sb->a : sb->inl, cap * sizeof *na);
            if (cap > SRC_INLINE) {
                free(sb->a);
                sim->mem_var -= cap * sizeof *na;
            }
            sb->a = na;
            sb->cap = 2 * cap;
            sim->mem_var += sb->cap * sizeof *na;
        }
        (sb->cap > SRC_INLINE ? sb->a : sb->inl)[k] = (struct src_arrival){at, key};
        sb->n++;
    }
}

/* Arrivals below `from` are never published again (a commit publishes from
 * the cursor on): they are dropped once they are most of the buffer, so
 * that the cost is amortised O(1) per arrival. */
void sim__src_trim(struct sim *sim, struct src_buf *sb, uint64_t from)
{
    SIM_ASSERT(from >= sb->base && from <= sb->n);
    uint64_t dead = from - sb->base, left = sb->n - from;
    if (dead == 0 || (dead < left && sb->cap > SRC_INLINE))
        return;
    struct src_arrival *v = sb->cap > SRC_INLINE ? sb->a : sb->inl;
    memmove(v, v + dead, (size_t)left * sizeof *v);
    sb->base = from;
    if (sb->cap > SRC_INLINE && left <= SRC_INLINE) {
        /* Back to the inline room. */
        memcpy(sb->inl, sb->a, (size_t)left * sizeof *v);
        free(sb->a);
        sim->mem_var -= sb->cap * sizeof *v;
        sb->a = NULL;
        sb->cap = SRC_INLINE;
    }
}

void sim__publish_stream(struct sim *sim, uint32_t k)
{
    struct pub_stream *ps = &sim->pubs[k];
    struct sim_reach to;
    sim__reach_topic(sim, ps->topic, &to);
    while (ps->g.next_us == sim->now_us && !sim->mem_stopped) {
        uint32_t key = arr_take(&ps->g);
        sim__publish(sim, &to, sim->now_us, key, ps->origin);
        ps = &sim->pubs[k];
    }
    if (ps->g.next_us != SIM_NEVER)
        evq_push(sim->q, ps->g.next_us, EV_PUBLISH, k, 0);
}

