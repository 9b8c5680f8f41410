/* fuzz_scenario.c: the scenario parser on arbitrary bytes.  It must either
 * parse or report a diagnostic with a line inside the input and a message,
 * never crash, hang or leak. */
#include <string.h>

#include "sim/refs.h"
#include "sim/scenario.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct scenario *s = NULL;
    struct diag d;
    memset(&d, 0, sizeof d);
    /* A `plugin` line loads code: never from fuzzed input. */
    struct scenario_refs refs = refs_builtin;
    refs.plugin = NULL;
    /* Checking every error must not crash either. */
    struct diag errs[8];
    int more;
    FUZZ_CHECK(scenario_check_all_buf("fuzz.scn", (const char *)data, size, &refs, errs, 8, &more) >= 0);
    if (scenario_parse_buf_ex("fuzz.scn", (const char *)data, size, &refs, &s, &d) == 0) {
        FUZZ_CHECK(s != NULL);
        FUZZ_CHECK(s->horizon_us > 0);
        scenario_free(s);
    } else {
        FUZZ_CHECK(d.msg[0] != 0);
        FUZZ_CHECK(d.line >= 0);
    }
    return 0;
}
