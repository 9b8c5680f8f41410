/* fuzz_simulate.c: parse, then simulate under one policy with small limits.
 *
 * The policy is picked by a hash of the input.  A scenario that parses must
 * simulate to completion (ok, livelock or a limit: never a crash) and twice
 * to the same fingerprint: simulation is deterministic.  Fleets over 200
 * instances are skipped (they are valid, but too slow to fuzz). */
#include <string.h>

#include "sim/refs.h"
#include "sim/sim.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct scenario *s = NULL;
    struct diag d;
    struct scenario_refs refs = refs_builtin;
    refs.plugin = NULL; /* a `plugin` line loads code: never from fuzzed input */
    if (scenario_parse_buf_ex("fuzz.scn", (const char *)data, size, &refs, &s, &d) != 0)
        return 0;
    if (s->ninstances > 200) {
        scenario_free(s);
        return 0;
    }
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 16777619u;
    const struct policy_ops *ops = policy_registry[h % (uint32_t)policy_registry_count];
    struct params ps;
    params_init(&ps, ops);
    struct sim_opts o = {.seed = s->seed, .max_events = 200000, .max_runs = 20000, .max_items = 50000};
    struct sim_result a, b;
    sim_run(s, ops, &ps, &o, &a);
    sim_run(s, ops, &ps, &o, &b);
    FUZZ_CHECK(a.fingerprint == b.fingerprint);
    FUZZ_CHECK(a.events == b.events);
    FUZZ_CHECK(a.status == b.status);
    FUZZ_CHECK(a.ck.total.processed <= a.ck.total.published);
    sim_result_free(&a);
    sim_result_free(&b);
    scenario_free(s);
    return 0;
}
