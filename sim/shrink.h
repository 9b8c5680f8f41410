/* shrink.h: delta debugging of scenario text.
 *
 * Given a scenario's text and a test that says whether a text still shows
 * "the same failure", shrink_text returns a smaller text that still does:
 * it drops lines (ddmin over top-level lines with their workflow blocks,
 * then over handler lines), then simplifies what is left word by word —
 * drops optional words, turns a distribution into its fixed value, lowers
 * counts, rates and `x N` towards 0 and 1, shortens durations (horizons,
 * crash instants, downtimes, run times) towards 0 — and repeats until a
 * whole round changes nothing.  Schedule periods (`every`, `mtbf`) are not
 * shortened: that would add work, not remove it.
 *
 * It knows only the scenario's lexical shape (words, quotes, parentheses,
 * comments, indented handler lines), not its grammar: a candidate that the
 * parser would refuse is the test's to reject.  Comments and blank lines go
 * first, unconditionally (they cannot carry the failure).
 *
 * Deterministic: the candidates are tried in a fixed order, and the result
 * depends only on the text and the test's answers.  Pinned lines (the
 * `seed` line, and lines equal to a pin text after shrink_norm) are never
 * removed or changed. */
#ifndef SIM_SHRINK_H
#define SIM_SHRINK_H

#include <stddef.h>
#include <stdint.h>

/* 1 when text (len bytes, no NUL needed) shows the same failure, else 0. */
typedef int (*shrink_test_fn)(void *ctx, const char *text, size_t len);
/* One accepted step, for the user: "removed line 12: crash host at 1d for 10m". */
typedef void (*shrink_log_fn)(void *ctx, const char *step);

struct shrink_opts {
    shrink_test_fn test;
    shrink_log_fn log;             /* NULL: silent */
    void *ctx;
    const char *const *pins;       /* line texts that stay as they are (shrink_norm form) */
    int npins;
    int max_rounds;                /* 0: 30 */
};

struct shrink_stats {
    uint64_t tried;                /* candidates handed to the test */
    uint64_t accepted;             /* of which showed the failure */
    int lines_before, lines_after; /* lines other than comments and blanks */
    int rounds;
};

/* The shrunk text (malloc'd, NUL-terminated; *out_len its length), or
 * NULL when the text without its comments and blank lines does not show
 * the failure (then nothing can be shrunk). */
char *shrink_text(const char *text, size_t len, const struct shrink_opts *o, struct shrink_stats *st,
                  size_t *out_len);

/* s with its comment removed, runs of blanks outside quotes made one space
 * and the ends trimmed: how shrink compares lines, and how an expect
 * line's text (struct expect_def.text) compares with a line of the file. */
void shrink_norm(const char *s, char *out, size_t n);

#endif
