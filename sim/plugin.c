/* plugin.c: policies from shared objects (see plugin.h).
 *
 * Every check is made before the policy reaches the registry, so that a
 * bad plugin is a clear error at load time rather than a crash in the
 * middle of a simulation: the file (exists, can be loaded with all its
 * symbols resolved now: RTLD_NOW), the entry symbol, then policy_register's
 * checks of the policy itself.  A plugin that fails is unloaded again. */
#include "sim/plugin.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/syntax.h"
#include "sim/util.h"

/* What was loaded: the real path and the policy it added. */
static struct {
    char *real;
    const struct policy_ops *ops;
} loaded[PLUGIN_MAX];
static int nloaded;

int plugin_load(const char *path, const struct policy_ops **out, char *msg, size_t n)
{
    const struct policy_ops *dummy;
    if (!out)
        out = &dummy;
    *out = NULL;
    struct stat st;
    if (stat(path, &st) != 0)
        return scn_msg(msg, n, "cannot load policy plugin '%s': %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return scn_msg(msg, n, "cannot load policy plugin '%s': not a regular file", path);
    char real[PATH_MAX];
    if (!realpath(path, real))
        return scn_msg(msg, n, "cannot load policy plugin '%s': %s", path, strerror(errno));
    for (int i = 0; i < nloaded; i++)
        if (!strcmp(loaded[i].real, real)) {
            *out = loaded[i].ops;
            return 0;
        }
    if (nloaded >= PLUGIN_MAX)
        return scn_msg(msg, n, "cannot load policy plugin '%s': too many plugins (at most %d)", path, PLUGIN_MAX);
    /* Always a path: dlopen would search the library path for a bare name. */
    void *h = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return scn_msg(msg, n, "cannot load policy plugin '%s': %s", path, dlerror());
    dlerror();
    const struct policy_ops *ops = dlsym(h, PLUGIN_SYMBOL);
    if (!ops) {
        dlclose(h);
        return scn_msg(msg, n,
                       "policy plugin '%s' has no '%s' symbol (define 'const struct policy_ops %s' in it; see "
                       "docs/writing-a-policy.md)",
                       path, PLUGIN_SYMBOL, PLUGIN_SYMBOL);
    }
    char why[512];
    const struct policy_ops *reg = policy_register(ops, path, why, sizeof why);
    if (!reg) {
        dlclose(h);
        return scn_msg(msg, n, "cannot load policy plugin '%s': %s", path, why);
    }
    loaded[nloaded].real = xstrdup(real);
    loaded[nloaded].ops = reg;
    nloaded++;
    *out = reg;
    return 0;
}
