/* plugin.h: policies loaded from shared objects.
 *
 * A policy plugin is a shared object built against simrun's installed
 * public headers (`pkg-config --cflags simrun`: sim/policy_api.h and what
 * it includes) that defines one policy under the entry symbol
 *
 *     const struct policy_ops simrun_policy = { .abi = POLICY_ABI, ... };
 *
 * and calls nothing of simrun's but what those headers declare (the
 * binary exports them).  plugin_load opens it with dlopen, finds the
 * symbol and adds the policy to the registry (policy_register in
 * sim/policy.h: the same ABI check as a built-in policy's, every required
 * hook present, a name no other policy has), after which it is a policy
 * like any other: `-p NAME`, `set NAME.KEY=V`, `variant`, `expect`.
 * docs/writing-a-policy.md and examples/plugin/ show how to build one.
 *
 * Plugins stay loaded until the process ends; loading the same file again
 * (by its real path) returns the policy it added the first time.  A
 * plugin's code runs in simrun's process: a plugin is trusted code, not
 * input to validate. */
#ifndef SIM_PLUGIN_H
#define SIM_PLUGIN_H

#include <stddef.h>

#include "sim/policy.h"

#define PLUGIN_SYMBOL "simrun_policy"
#define PLUGIN_MAX 64

/* Loads the plugin at path (a path: a name without '/' is looked up in the
 * current folder, never in the system's library path).  0 and *out (may be
 * NULL), or -1 with msg: the file is missing or not a shared object it can
 * load, it lacks the entry symbol, or policy_register refused its policy
 * ("cannot load policy plugin 'x.so': ..."). */
int plugin_load(const char *path, const struct policy_ops **out, char *msg, size_t n);

#endif
