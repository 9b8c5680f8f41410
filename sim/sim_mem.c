/* sim_mem.c: the engine's memory budget (sim_int.h, sim.h).
 *
 * A simulation's memory follows its live state: per-instance state, live
 * items and runs, pending events, the policy's durable blocks, the
 * checker's live state, and a kept trace if one was asked for (keep_trace;
 * --trace and --store-trace stream theirs, sim/sweep.c).  The budget
 * counts exactly these, from their capacities in bytes, so the count is a
 * function of the run alone: the same run reaches the budget at the same
 * event on every machine and with -j 1 or -j N.  (It leaves out what a
 * policy allocates for its volatile state and the allocator's overhead, so
 * the process itself uses somewhat more.)  Reaching the budget stops the
 * run with SIM_MEMORY_LIMIT and names the scenario line that drives it: the
 * line that published most of the live items, the handler with most live
 * runs, or the largest workflow.
 *
 * sim_memory_estimate is the same count before the run: the per-instance
 * state, plus the largest number of items published at one instant. */
#include "sim/sim_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/script.h"
#include "sim/util.h"

/* Bytes of a live item and of a handler instance beyond the engine's own
 * records: the id maps (a window ring of 4-byte slots, at worst a quarter full), the checker's share, and a
 * policy's per-handler state and pending events, as a round figure. */
#define MEM_MAP_ENTRY (4 * sizeof(uint32_t))
#define MEM_POLICY_PER_HANDLER 64
#define MEM_EVENTS_PER_HANDLER 2
#define MEM_EVENT 48

static uint64_t item_bytes(void)
{
    return sizeof(struct item_slot) + MEM_MAP_ENTRY + checker_item_bytes();
}

/* For the estimate before a run: everything a handler instance costs. */
/* Per handler, the engine's fixed entries: its state line, its run count,
 * its reach (handler_out), the world's entry and the topology's (5 bytes). */
static uint64_t handler_fixed_bytes(void)
{
    return sizeof(struct handler_state) + sizeof(struct inst_runs) + sizeof(struct handler_out) +
           sizeof(struct world_handler) + 5;
}

static uint64_t handler_bytes(void)
{
    return handler_fixed_bytes() + checker_handler_bytes() +
           sizeof(struct run_rec) + MEM_MAP_ENTRY + MEM_POLICY_PER_HANDLER + MEM_EVENTS_PER_HANDLER * MEM_EVENT;
}

/* Per instance: the world's arrays, orphans, and its sources' buffers. */
static uint64_t instance_bytes(const struct scenario *s)
{
    return 4 * sizeof(uint32_t) + sizeof(uint16_t) + sizeof(uint64_t) + s->nsources * sizeof(struct src_buf);
}

uint64_t sim_memory_default(void)
{
    static uint64_t cached;
    if (cached)
        return cached;
    uint64_t total_kib = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemTotal: %" SCNu64 " kB", &total_kib) == 1)
                break;
        fclose(f);
    }
    cached = total_kib ? total_kib * 1024 / 2 : (UINT64_C(4) << 30);
    return cached;
}

/* --- during a run ----------------------------------------------------------- */

void sim__mem_setup(struct sim *sim)
{
    const struct scenario *s = sim->scn;
    sim->max_memory = sim->o->max_memory ? sim->o->max_memory : sim_memory_default();
    sim->norigins = s->npubs + s->nsources + sim->w.ntmpl;
    sim->origin_live = xcalloc(sim->norigins ? sim->norigins : 1, sizeof *sim->origin_live);
}

void sim__mem_free(struct sim *sim)
{
    free(sim->origin_live);
}

/* The capacity the kept trace has at ntrace records (sim_fact.c grows it
 * by doubling from 64). */
static uint64_t trace_cap(size_t ntrace)
{
    if (ntrace == 0)
        return 0;
    uint64_t cap = 64;
    while (cap < ntrace)
        cap *= 2;
    return cap;
}

/* What capacities do not show: per handler its fixed entries, per instance
 * its arrays (the rest is counted where it lives). */
static uint64_t mem_fixed(const struct sim *sim)
{
    const struct scenario *s = sim->scn;
    return (uint64_t)sim->w.nh * handler_fixed_bytes() + (uint64_t)sim->w.ninst * instance_bytes(s) +
           sim->pubs_cap * sizeof *sim->pubs;
}

uint64_t sim__mem_used(const struct sim *sim)
{
    uint64_t b = mem_fixed(sim) + sim->mem_var;
    b += (uint64_t)sim->items_cap * sizeof *sim->items + idwin_bytes(&sim->item_map);
    b += (uint64_t)sim->runs_cap * sizeof *sim->runs + idwin_bytes(&sim->run_map);
    b += sim->active_cap * (sizeof *sim->active + sizeof *sim->active_ck) + sim->tickers_cap * sizeof *sim->tickers +
         idwin_bytes(&sim->ticker_map) + sim->alarms_cap * sizeof *sim->alarms;
    b += sim->sc_cap * (sizeof *sim->sc_items + sizeof *sim->sc_ids + sizeof *sim->sc_slots + sizeof *sim->sc_take);
    b += evq_bytes(sim->q);
    if (sim->corr_ready)
        b += (uint64_t)sim->w.nh * sizeof *sim->corr_ready + idmap_bytes(&sim->corr_count);
    if (sim->fx.ck)
        b += checker_bytes(sim->fx.ck);
    if (sim->fx.keep)
        b += trace_cap(sim->res->ntrace) * sizeof(struct trace_rec);
    return b;
}

/* The line of a handler template. */
static int tmpl_line(const struct sim *sim, uint32_t t)
{
    const struct scenario *s = sim->scn;
    for (uint16_t f = 0; f < s->nwfs; f++)
        if (t < sim->w.wf_first_tmpl[f + 1])
            return s->wfs[f].handlers[t - sim->w.wf_first_tmpl[f]].line;
    return 0;
}

static int origin_line(const struct sim *sim, uint32_t o)
{
    const struct scenario *s = sim->scn;
    if (o < s->npubs)
        return s->pubs[o].line;
    if (o < s->npubs + s->nsources)
        return s->sources[o - s->npubs].line;
    return tmpl_line(sim, o - s->npubs - s->nsources);
}

/* The workflow with the most handler instances: what per-instance state
 * grows with. */
static int largest_workflow_line(const struct scenario *s)
{
    uint64_t best = 0;
    int line = 0;
    for (uint16_t f = 0; f < s->nwfs; f++) {
        uint64_t n = (uint64_t)s->wfs[f].count * s->wfs[f].nhandlers;
        if (n > best || !line) {
            best = n;
            line = s->wfs[f].line;
        }
    }
    return line;
}

/* The handler template with the most active runs, and how many. */
static int busiest_runs_line(const struct sim *sim, uint64_t *n)
{
    uint64_t *per = xcalloc(sim->w.ntmpl ? sim->w.ntmpl : 1, sizeof *per);
    uint32_t best = 0;
    for (size_t i = 0; i < sim->nactive; i++) {
        uint32_t t = sim->w.h[sim->runs[sim->active[i]].handler].tmpl;
        if (++per[t] > per[best])
            best = t;
    }
    *n = per[best];
    free(per);
    return tmpl_line(sim, best);
}

/* What drives the memory now: the line, and a phrase for the message. */
static int mem_culprit(const struct sim *sim, char *what, size_t n)
{
    uint64_t items = sim->live_items * item_bytes();
    uint64_t runs = sim->live_runs * (sizeof(struct run_rec) + MEM_MAP_ENTRY);
    uint64_t trace = sim->fx.keep ? trace_cap(sim->res->ntrace) * sizeof(struct trace_rec) : 0;
    if (trace > items && trace > runs) {
        snprintf(what, n, "%zu kept trace records", sim->res->ntrace);
        return 0;
    }
    if (items >= runs && sim->live_items) {
        uint32_t best = 0;
        for (uint32_t o = 1; o < sim->norigins; o++)
            if (sim->origin_live[o] > sim->origin_live[best])
                best = o;
        snprintf(what, n, "%" PRIu64 " live items, %" PRIu64 " of them published by this line", sim->live_items,
                 sim->origin_live[best]);
        return origin_line(sim, best);
    }
    if (sim->live_runs) {
        uint64_t k;
        int line = busiest_runs_line(sim, &k);
        snprintf(what, n, "%" PRIu64 " live runs, %" PRIu64 " of them active runs of this handler", sim->live_runs,
                 k);
        return line;
    }
    snprintf(what, n, "the state of %" PRIu64 " handler instances and the policy's", (uint64_t)sim->w.nh);
    return largest_workflow_line(sim->scn);
}

static void fmt_bytes(uint64_t b, char *buf, size_t n)
{
    if (b >= (UINT64_C(1) << 30))
        snprintf(buf, n, "%.1f GiB", (double)b / (double)(UINT64_C(1) << 30));
    else
        snprintf(buf, n, "%.1f MiB", (double)b / (double)(UINT64_C(1) << 20));
}

void sim__prefetch_judge(struct sim *sim, uint64_t used)
{
    sim->prefetch = used >= SIM_PREFETCH_MIN && !sim->o->no_prefetch;
    sim->res->prefetched |= sim->prefetch;
    if (sim->prefetch)
        heap_huge();
}

int sim__mem_check_now(struct sim *sim)
{
    uint64_t used = sim__mem_used(sim);
    if (used > sim->max_memory && sim->retq_n) {
        sim__retq_flush(sim); /* judged as the eager free would have been */
        used = sim__mem_used(sim);
    }
    if (used > sim->mem_peak)
        sim->mem_peak = used;
    sim__prefetch_judge(sim, used);
    if (used <= sim->max_memory)
        return 0;
    char what[200], lim[32], t[48], m[400];
    int line = mem_culprit(sim, what, sizeof what);
    fmt_bytes(sim->max_memory, lim, sizeof lim);
    sim_fmt_dur(sim->now_us, t, sizeof t);
    snprintf(m, sizeof m, "memory limit: the simulation reached the memory budget of %s (--max-memory) at %s: %s",
             lim, t, what);
    sim__stop(sim, SIM_MEMORY_LIMIT, m); /* unless something else stopped it first */
    if (sim->res->status == SIM_MEMORY_LIMIT)
        sim->res->status_line = line;
    sim->mem_stopped = 1;
    return 1;
}

/* --- before a run ----------------------------------------------------------------- */

/* Subscribers of topic `topic` over all instances: consumers subscribed to
 * it in each workflow that has it, times its instances. */
static uint64_t topic_subscribers(const struct scenario *s, const char *topic)
{
    uint64_t n = 0;
    for (uint16_t f = 0; f < s->nwfs; f++) {
        const struct workflow_def *wf = &s->wfs[f];
        for (uint16_t t = 0; t < wf->ntopics; t++) {
            if (strcmp(wf->topics[t], topic) != 0)
                continue;
            for (uint16_t h = 0; h < wf->nhandlers; h++) {
                const struct handler_def *hd = &wf->handlers[h];
                for (uint16_t k = 0; hd->kind == H_CONSUMER && k < hd->nsub; k++)
                    n += (uint64_t)(hd->sub[k] == t) * wf->count;
            }
        }
    }
    return n;
}

struct burst {
    int64_t at_us;
    double items;
    int line;
};

static int cmp_burst(const void *a, const void *b)
{
    const struct burst *x = a, *y = b;
    return (x->at_us > y->at_us) - (x->at_us < y->at_us);
}

/* The most items published at one instant by `publish` lines that put
 * several events at once (at ... count N, burst N with no spread); *line:
 * the line that contributes most to it. */
static double largest_burst(const struct scenario *s, int *line)
{
    struct burst *b = xcalloc(s->npubs ? s->npubs : 1, sizeof *b);
    size_t n = 0;
    for (uint32_t p = 0; p < s->npubs; p++) {
        const struct arrival *a = &s->pubs[p].arr;
        int instant = a->kind == ARR_AT || (a->kind == ARR_BURST && a->over_us == 0);
        if (!instant || a->count < 2)
            continue;
        b[n++] = (struct burst){a->at_us, (double)a->count * (double)topic_subscribers(s, s->pubs[p].topic),
                                s->pubs[p].line};
    }
    qsort(b, n, sizeof *b, cmp_burst);
    double best = 0, sum = 0, top = 0;
    int top_line = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || b[i].at_us != b[i - 1].at_us) {
            sum = 0;
            top = 0;
            top_line = 0;
        }
        sum += b[i].items;
        if (b[i].items > top) {
            top = b[i].items;
            top_line = b[i].line;
        }
        if (sum > best) {
            best = sum;
            *line = top_line;
        }
    }
    free(b);
    return best;
}

uint64_t sim_memory_estimate(const struct scenario *s, int *line, char *why, size_t n)
{
    double fixed = (double)s->nhandler_instances * (double)handler_bytes() +
                   (double)s->ninstances * (double)instance_bytes(s);
    int burst_line = 0;
    double items = largest_burst(s, &burst_line);
    double burst = items * (double)item_bytes();
    if (burst > fixed) {
        *line = burst_line;
        snprintf(why, n, "%.3g items published at one instant, by this line above all", items);
    } else {
        *line = largest_workflow_line(s);
        snprintf(why, n, "the state of %" PRIu64 " handler instances", s->nhandler_instances);
    }
    double total = fixed + burst;
    return total >= 1.8e19 ? UINT64_MAX : (uint64_t)total;
}
