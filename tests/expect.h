/* expect.h: assertions that print both sides, for cmocka tests.
 *
 * Include after <cmocka.h> (and <inttypes.h>, <string.h>).  ctx names
 * what was being checked, so that a failure says where without a
 * debugger. */
#ifndef TESTS_EXPECT_H
#define TESTS_EXPECT_H

#include <inttypes.h>
#include <string.h>

#define EXPECT_I64(got, want, ctx)                                                        \
    do {                                                                                  \
        int64_t got_ = (got), want_ = (want);                                             \
        if (got_ != want_)                                                                \
            fail_msg("%s: %s = %" PRId64 ", expected %" PRId64, (ctx), #got, got_, want_); \
    } while (0)

#define EXPECT_U64(got, want, ctx)                                                        \
    do {                                                                                  \
        uint64_t got_ = (got), want_ = (want);                                            \
        if (got_ != want_)                                                                \
            fail_msg("%s: %s = %" PRIu64 ", expected %" PRIu64, (ctx), #got, got_, want_); \
    } while (0)

#define EXPECT_STR(got, want, ctx)                                                  \
    do {                                                                            \
        const char *got_ = (got), *want_ = (want);                                  \
        if (strcmp(got_, want_) != 0)                                               \
            fail_msg("%s: %s = '%s', expected '%s'", (ctx), #got, got_, want_);     \
    } while (0)

#define EXPECT_HAS(got, part, ctx)                                                  \
    do {                                                                            \
        const char *got_ = (got), *part_ = (part);                                  \
        if (!strstr(got_, part_))                                                   \
            fail_msg("%s: '%s' does not contain '%s'", (ctx), got_, part_);         \
    } while (0)

#endif
