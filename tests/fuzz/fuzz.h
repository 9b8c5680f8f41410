/* fuzz.h: what every fuzz target shares.
 *
 * Each target in tests/fuzz/fuzz_*.c defines LLVMFuzzerTestOneInput.  Built
 * with clang -fsanitize=fuzzer (`make fuzz`) it is a libFuzzer binary; built
 * with tests/fuzz/replay.c (`make test`, any C compiler) it replays the
 * corpus in tests/fuzz/corpus/<target>/ once, so that every input that ever
 * found a bug stays a regression test.  A target checks invariants with
 * FUZZ_CHECK, which aborts: both builds report an abort as a failure. */
#ifndef TESTS_FUZZ_H
#define TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                            \
    do {                                                                                            \
        if (!(cond)) {                                                                              \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);            \
            abort();                                                                                \
        }                                                                                           \
    } while (0)

#endif
