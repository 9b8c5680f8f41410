/* swarm.h: random valid scenarios for swarm testing.
 *
 * Swarm testing (Groce et al., "Swarm Testing", ISSTA 2012): rather than
 * every generated input using every feature a little, each input uses a
 * random subset of the features a lot, so that a feature that hides a bug
 * (a crash that masks a duplicate, say) is often absent.  swarm_generate
 * draws, from one seed alone, the subset of features and then a scenario
 * that uses them: one to three workflows of producers and consumers with
 * fifo and batch scripts, and, when drawn, crashes (host, workers, server,
 * random), graceful stops, failures of every class, bursts, sources, cron
 * schedules near a daylight-saving change in a zone that has one, digests,
 * windows, correlations and policy variants.  One scenario in five has no
 * producers and runs that take no time: every item then comes from a
 * `publish` line, and the oracle's latency is a lower bound (docs/swarm.md).
 *
 * The text is meant to be valid (simrun validate accepts it): a scenario
 * that does not parse is a bug of the generator, which `simrun swarm`
 * reports as a failure.  Sizes stay small (a few thousand events), so that
 * a simulation takes milliseconds.  Deterministic: the same seed gives the
 * same text, byte for byte. */
#ifndef SIM_SWARM_H
#define SIM_SWARM_H

#include <stddef.h>
#include <stdint.h>

enum swarm_feature {
    SWARM_CRASHES = 1u << 0,
    SWARM_STOPS = 1u << 1,
    SWARM_FAILURES = 1u << 2,
    SWARM_BURSTS = 1u << 3,
    SWARM_SOURCES = 1u << 4,
    SWARM_CRON_DST = 1u << 5,
    SWARM_DIGESTS = 1u << 6,
    SWARM_WINDOWS = 1u << 7,
    SWARM_CORRELATIONS = 1u << 8,
    SWARM_VARIANTS = 1u << 9,
    SWARM_CHANGES = 1u << 10,      /* drawn last, so that the rest of a seed's scenario stays as it was */
};
#define SWARM_NFEATURES 11

/* "crashes", "stops", ... for bit i of enum swarm_feature. */
const char *swarm_feature_name(int i);

/* The scenario of seed: its text (malloc'd, NUL-terminated, *len bytes)
 * and the features it was drawn with (*features, enum swarm_feature bits). */
char *swarm_generate(uint64_t seed, size_t *len, unsigned *features);

#endif
