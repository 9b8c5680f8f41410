/* arrival.c: see arrival.h.  Each kind computes its next instant in O(1). */
#include "sim/arrival.h"

#include <math.h>

#include "sim/util.h"

int64_t rng_exp_us(struct rng *r, double mean_us)
{
    double x = -log(rng_unit(r)) * mean_us;
    if (x > 9.0e18)
        return INT64_MAX / 4;
    return (int64_t)llround(x);
}

/* The daily curve's acceptance probability at t: (1 + cos(2 pi (h - peak)/24)) / 2. */
static double daily_accept(const struct arr_gen *g, int64_t t_us)
{
    struct cal_tm tm;
    cal_local(g->s->zone, g->s->start_utc_s + t_us / US_PER_S, &tm);
    double h = tm.hour + tm.min / 60.0 + tm.sec / 3600.0;
    double peak = g->a->peak_min / 60.0;
    return (1.0 + cos(2.0 * 3.14159265358979323846 * (h - peak) / 24.0)) / 2.0;
}

static int64_t compute(struct arr_gen *g, int64_t prev_us)
{
    const struct arrival *a = g->a;
    int64_t t;
    switch (a->kind) {
    case ARR_AT:
        return g->k < a->count ? a->at_us : SIM_NEVER;
    case ARR_BURST:
        if (g->k >= a->count)
            return SIM_NEVER;
        return a->at_us + (int64_t)((unsigned __int128)a->over_us * g->k / a->count);
    case ARR_RATE:
        t = a->from_us + (int64_t)((unsigned __int128)a->per_us * g->k / a->count);
        return t;
    case ARR_POISSON:
        t = (g->k == 0 ? a->from_us : prev_us) + rng_exp_us(&g->r, (double)a->per_us / (double)a->count);
        return t;
    case ARR_DAILY: {
        /* Thinning: candidates at twice the mean rate, each kept with the
         * curve's probability; the mean over a day is the given rate. */
        double mean_gap = (double)a->per_us / (double)a->count / 2.0;
        t = g->k == 0 ? a->from_us : prev_us;
        for (int guard = 0; guard < 1000000; guard++) {
            t += rng_exp_us(&g->r, mean_gap);
            if (t >= g->end_us)
                return SIM_NEVER;
            if (rng_unit(&g->r) <= daily_accept(g, t))
                return t;
        }
        return SIM_NEVER;
    }
    case ARR_TRACE:
        return g->k < a->ntrace ? a->trace_us[g->k] : SIM_NEVER;
    }
    return SIM_NEVER;
}

static void settle(struct arr_gen *g)
{
    if (g->next_us >= g->end_us || g->next_us < 0)
        g->next_us = SIM_NEVER;
}

void arr_init(struct arr_gen *g, const struct arrival *a, const struct scenario *s, struct rng r, struct rng rk)
{
    *g = (struct arr_gen){.a = a, .s = s, .r = r, .rk = rk};
    g->end_us = s->horizon_us;
    if ((a->kind == ARR_RATE || a->kind == ARR_POISSON || a->kind == ARR_DAILY) && a->to_us > 0 &&
        a->to_us < g->end_us)
        g->end_us = a->to_us;
    g->next_us = compute(g, 0);
    settle(g);
}

uint32_t arr_take(struct arr_gen *g)
{
    SIM_ASSERT(g->next_us != SIM_NEVER);
    uint32_t key = g->a->keys ? (uint32_t)(1 + rng_below(&g->rk, g->a->keys)) : (uint32_t)g->k;
    int64_t prev = g->next_us;
    g->k++;
    g->next_us = compute(g, prev);
    settle(g);
    return key;
}
