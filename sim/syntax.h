/* syntax.h: the lexical forms of scenario values, a leaf module.
 *
 * What the scenario parser, the policy registry (parameter values) and the
 * CLI (--set) read alike: durations ("90s", "1h30m", "1d09:00:30"), and the
 * quoting of untrusted text in messages.  Messages follow the scenario
 * parser's shape: lowercase, no full stop, the offending text quoted and
 * escaped (scn_escape), so that a hostile byte in a file cannot garble a
 * terminal.  The names keep the scn_ prefix of the scenario syntax.  This
 * header includes nothing of simrun's but util.h; it must stay a leaf. */
#ifndef SIM_SYNTAX_H
#define SIM_SYNTAX_H

#include <stddef.h>
#include <stdint.h>

#define SCN_QUOTE_MAX 96           /* bytes of quoted text in a message */

/* Parses a duration: an integer followed by a unit us|ms|s|m|h|d, or several
 * concatenated, largest first (1h30m); also the `1d09:00:30` form (days +
 * clock).  Returns 0 and *us, or -1 with msg (msg may be NULL).  Used for
 * scenario values, policy parameters and --set values alike. */
int scn_parse_duration(const char *s, int64_t *us, char *msg, size_t n);
/* Writes a duration in the same syntax ("1d2h30m", "0s"; "-" if negative). */
void scn_fmt_duration(int64_t us, char *buf, size_t n);
/* The length in us of the unit named by the len bytes at u ("h", "ms"), or
 * 0 for no unit. */
int64_t scn_unit_us(const char *u, size_t len);

/* Copies s into dst (n bytes) for quoting in a message: printable ASCII and
 * valid UTF-8 as they are, any other byte as \xNN, and at most SCN_QUOTE_MAX
 * bytes (then "..."), so that a message keeps room for its context. */
void scn_escape(char *dst, size_t n, const char *s);
/* Writes a message into msg (if msg and n); always returns -1, for
 * `return scn_msg(...)` on an error path. */
int scn_msg(char *msg, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Reads up to maxd decimal digits at *c into *v, advancing *c; returns how
 * many were read. */
int scn_read_digits(const char **c, int maxd, uint64_t *v);

#endif
