/* refs.h: the standard reference checks for the scenario parser.
 *
 * refs_builtin answers the parser's questions (struct scenario_refs in
 * scenario.h) from the built-in policy registry (policy.h) and the metric
 * table (metric.h): the CLI passes it to scenario_parse_ex so that a
 * scenario naming an unknown policy, parameter or metric is refused with the
 * valid names listed, and a `plugin` line loads its policy plugin
 * (sim/plugin.h) before the lines that name it are checked.  Keeping these
 * checks here, outside the parser, is what lets the parser include neither
 * the registry nor the checker. */
#ifndef SIM_REFS_H
#define SIM_REFS_H

#include "sim/scenario.h"

/* Static (ctx is NULL).  Stateless but for plugin, which adds to the
 * process's policy registry: call it from the main thread. */
extern const struct scenario_refs refs_builtin;

#endif
