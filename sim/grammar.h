/* grammar.h: how a real system reads its own configuration.
 *
 * A scenario writes a producer's schedule (`every 5m`, `cron "0 9 * * *"`),
 * and a variant's parameters (`every=1d`), the way the system would find
 * them in its configuration file.  simrun's own grammar reads them strictly;
 * a real system may read the same text differently: reject what simrun
 * accepts (keep.ai has no compound intervals like 1h30m), accept what simrun
 * rejects (herdctl reads `5M` as five minutes, Kagzi wants six cron fields),
 * or fall back silently to something else (keep.ai turns an invalid cron
 * into "60 s after each commit", Open Alice leaves the heartbeat off for
 * `every: 1d`).  A built-in variant names its system's grammar
 * (struct policy_variant.grammar); the grammar is then how every schedule
 * and the listed parameters are read for that variant:
 *  - GR_REJECT: the system refuses the configuration; simrun refuses the
 *    run with the system's reason at the text's file:line:col (exit 2);
 *  - GR_FALLBACK: the system runs with something else without a word;
 *    simrun simulates that, and warns;
 *  - GR_OK: the value as the system reads it.
 * docs/scenario-format.md ("Configuration grammars") lists every rule and
 * the repository file it comes from.
 *
 * Ownership: grammar_apply's copy shares the scenario's strings and zones;
 * grammar_release frees only what the copy owns. */
#ifndef SIM_GRAMMAR_H
#define SIM_GRAMMAR_H

#include <stddef.h>

struct scenario;

enum grammar {
    GRAMMAR_SIMRUN,
    GRAMMAR_KEEPAI,
    GRAMMAR_KAGZI,
    GRAMMAR_KAGZI_BEFORE,
    GRAMMAR_HERDCTL,
    GRAMMAR_ALICE,
    GRAMMAR_OPENCLAW,
    GRAMMAR_COUNT
};

enum gr_verdict { GR_OK, GR_FALLBACK, GR_REJECT };

/* The grammar with that name ("simrun", "keepai", ...), or -1. */
int grammar_find(const char *name);
const char *grammar_name(int g);

/* One rejection or fallback: where (line, col; 0 when not in the file),
 * and the message (lowercase, no full stop). */
struct gr_note {
    enum gr_verdict verdict;
    int line, col;
    char msg[400];
};
typedef void (*gr_report_fn)(void *ctx, const struct gr_note *n);

/* Reads every schedule of s (and its changes) with grammar g into *out: a
 * shallow copy of s whose workflows, handlers and change lists are its own.
 * Each rejection and fallback is reported (report may be NULL); a rejected
 * schedule never fires in the copy.  Returns the number of rejections. */
int grammar_apply(const struct scenario *s, int g, struct scenario *out, gr_report_fn report, void *ctx);
void grammar_release(struct scenario *out);
/* Whether s needs grammar_apply under g (g is not simrun's, or s has an
 * as-written schedule). */
int grammar_needed(const struct scenario *s, int g);

/* A parameter of policy `policy` written `key=text` read with grammar g.
 * GR_OK: *out_key and *out_text (which may differ from the input: the
 * system's meaning in simrun's terms) are what to set; GR_FALLBACK: the
 * same, and msg says what the system does instead; GR_REJECT: msg says why.
 * A key the grammar does not read comes back unchanged (GR_OK). */
enum gr_verdict grammar_param(int g, const char *policy, const char *key, const char *text, char *out_key,
                              size_t kn, char *out_text, size_t tn, char *msg, size_t mn);

#endif
