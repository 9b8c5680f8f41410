/* fuzz_cron.c: the cron parser and the fire computations.
 *
 * Input: byte 0 bit 0 selects the AND day rule; byte 1 a zone (DST zones
 * with 1 h, 30 min and 0 h 30 shifts, and UTC); bytes 2..9 an instant; the
 * rest is the expression.  For an expression that parses, the fires must be
 * consistent: next(t) > t, next is a fire (next(next - 1) == next), prev
 * and next are inverse, and fires() lists exactly the successive next()s. */
#include <string.h>

#include "sim/cal.h"
#include "tests/fuzz/fuzz.h"

static const char *const zones[] = {"UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe",
                                    "Asia/Kathmandu", "Pacific/Chatham", "America/Sao_Paulo", "Asia/Tehran"};

static void check_fires(const struct cal_cron *c, const struct cal_zone *z, int64_t t)
{
    int64_t n = cal_cron_next(c, z, t);
    if (n == INT64_MAX)
        return;
    FUZZ_CHECK(n > t);
    FUZZ_CHECK(cal_cron_next(c, z, n - 1) == n);
    int64_t p = cal_cron_prev(c, z, n);
    FUZZ_CHECK(p < n);
    if (p != INT64_MIN)
        FUZZ_CHECK(cal_cron_next(c, z, p) == n);
    int64_t out[16];
    size_t k = cal_cron_fires(c, z, t, t + 3 * 86400, out, 16);
    int64_t prev = t;
    for (size_t i = 0; i < k && i < 16; i++) {
        FUZZ_CHECK(out[i] > prev && out[i] <= t + 3 * 86400);
        FUZZ_CHECK(out[i] == cal_cron_next(c, z, prev));
        prev = out[i];
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 10)
        return 0;
    unsigned flags = (data[0] & 1) ? CAL_CRON_AND : 0;
    const char *zname = zones[data[1] % (sizeof zones / sizeof zones[0])];
    uint64_t raw = 0;
    for (int i = 0; i < 8; i++)
        raw = raw << 8 | data[2 + i];
    /* Instants from 1901 to 2200: where tz data and the POSIX footer apply. */
    int64_t t = -2145916800 + (int64_t)(raw % UINT64_C(9467280000));
    char expr[CAL_CRON_EXPR_MAX + 2];
    size_t n = size - 10 < sizeof expr - 1 ? size - 10 : sizeof expr - 1;
    memcpy(expr, data + 10, n);
    expr[n] = 0;
    const struct cal_zone *z;
    char err[256];
    if (cal_zone_get(zname, &z, err, sizeof err) != 0)
        return 0; /* no tz database: nothing to check against */
    struct cal_cron c;
    int col = 0;
    if (cal_cron_parse(expr, flags, &c, err, sizeof err, &col) != 0) {
        FUZZ_CHECK(err[0] != 0);
        FUZZ_CHECK(col >= 0 && (size_t)col <= n + 1);
        return 0;
    }
    check_fires(&c, z, t);
    return 0;
}
