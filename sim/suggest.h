/* suggest.h: "did you mean ...?" for a misspelt name, a leaf module.
 *
 * The command line, the scenario parser and the policy registry use it for
 * unknown commands, options, directives, policies, parameters and metrics:
 * each offers its valid names one by one (suggest_add), and the closest
 * one, if it is close enough to be a likely misspelling, is the
 * suggestion.  Closeness is the optimal-string-alignment edit distance
 * (insert, delete, substitute a byte, or swap two adjacent bytes: each
 * costs 1), with letters compared without case.  A name is suggested when
 * its distance is at most 1 for a word of up to 4 bytes, 2 up to 8 bytes,
 * 3 beyond, and smaller than the word itself (so "x" suggests nothing);
 * ties go to the first candidate offered, so suggestions are deterministic.
 *
 * Cost: O(len(word) x len(candidate)) per candidate; words and candidates
 * longer than SUGGEST_MAX_LEN bytes are never matched.  Nothing is
 * allocated: a struct suggest borrows the word and the best candidate,
 * which must outlive it. */
#ifndef SIM_SUGGEST_H
#define SIM_SUGGEST_H

#include <stddef.h>

#define SUGGEST_MAX_LEN 64

/* The text every message appends, for one shape everywhere:
 * "unknown policy 'pol' (valid: ...); did you mean 'poll'?". */
#define SUGGEST_FMT "; did you mean '%s'?"

struct suggest {
    const char *word;              /* borrowed */
    const char *best;              /* borrowed; NULL while nothing is close */
    int dist;                      /* best's distance */
    int limit;                     /* the largest distance suggested */
};

void suggest_init(struct suggest *s, const char *word);
/* Offers a candidate; an exact match is never a suggestion (the caller
 * knows the word is unknown in context, e.g. a key of another policy). */
void suggest_add(struct suggest *s, const char *cand);
/* The suggestion, or NULL. */
const char *suggest_result(const struct suggest *s);
/* The distance between a and b as above, or SUGGEST_MAX_LEN + 1 when
 * either is longer than SUGGEST_MAX_LEN. */
int suggest_distance(const char *a, const char *b);
/* Appends SUGGEST_FMT with the suggestion to msg (n bytes, NUL-terminated)
 * when there is one and it fits; otherwise leaves msg alone. */
void suggest_append(const struct suggest *s, char *msg, size_t n);

#endif
