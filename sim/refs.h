/* refs.h: the standard reference checks for the scenario parser.
 *
 * refs_builtin answers the parser's questions (struct scenario_refs in
 * scenario.h) from the built-in policy registry (policy.h) and the metric
 * table (metric.h): the CLI passes it to scenario_parse_ex so that a
 * scenario naming an unknown policy, parameter or metric is refused with the
 * valid names listed.  Keeping these checks here, outside the parser, is
 * what lets the parser include neither the registry nor the checker. */
#ifndef SIM_REFS_H
#define SIM_REFS_H

#include "sim/scenario.h"

/* Static and stateless (ctx is NULL); usable from any thread. */
extern const struct scenario_refs refs_builtin;

#endif
