/* refs.c: scenario references checked against the policy registry and the
 * metric table; `plugin` lines load their plugin into the registry.  The messages are the parser's: "unknown policy 'x' (valid:
 * ...)", "unknown parameter ...", "unknown metric 'x' (valid: ...)". */
#include "sim/refs.h"

#include <stdio.h>
#include <string.h>

#include "sim/metric.h"
#include "sim/plugin.h"
#include "sim/policy.h"
#include "sim/suggest.h"
#include "sim/syntax.h"

static int refs_policy(void *ctx, const char *name, char *msg, size_t n)
{
    (void)ctx;
    return policy_check_name(name, msg, n) == 0 ? SCN_REF_OK : SCN_REF_UNKNOWN;
}

/* SCN_REF_UNKNOWN when the policy is unknown or has no such key (the parser
 * then points at the key), SCN_REF_BAD_VALUE when the value does not fit. */
static int refs_param(void *ctx, const char *policy, const char *key, const char *value, char *msg, size_t n)
{
    (void)ctx;
    if (policy_check_param(policy, key, value, msg, n) == 0)
        return SCN_REF_OK;
    const struct policy_ops *ops = policy_find(policy);
    if (!ops)
        policy_variant_find(policy, &ops);
    for (int i = 0; ops && i < ops->nparams; i++)
        if (!strcmp(ops->params[i].key, key))
            return SCN_REF_BAD_VALUE;
    return SCN_REF_UNKNOWN;
}

/* On an unknown name the message lists the valid ones, as many as fit in
 * about 400 bytes (then ", ..."). */
static int refs_metric(void *ctx, const char *name, struct scenario_metric *out, char *msg, size_t n)
{
    (void)ctx;
    const struct metric_info *mi = metric_find(name);
    if (mi) {
        out->is_duration = mi->is_duration;
        out->is_bool = mi->is_bool;
        out->per_handler = mi->per_handler;
        return SCN_REF_OK;
    }
    char list[400], e[SCN_QUOTE_MAX];
    size_t o = 0;
    list[0] = 0;
    for (int i = 0; i < metric_count; i++) {
        size_t len = strlen(metric_table[i].name);
        if (o + len + 8 >= sizeof list) {
            snprintf(list + o, sizeof list - o, ", ...");
            break;
        }
        o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", metric_table[i].name);
    }
    scn_escape(e, sizeof e, name);
    snprintf(msg, n, "unknown metric '%s' (valid: %s)", e, list);
    struct suggest sg;
    suggest_init(&sg, name);
    for (int i = 0; i < metric_count; i++)
        suggest_add(&sg, metric_table[i].name);
    suggest_append(&sg, msg, n);
    return SCN_REF_UNKNOWN;
}

static int refs_plugin(void *ctx, const char *path, char *msg, size_t n)
{
    (void)ctx;
    return plugin_load(path, NULL, msg, n) == 0 ? SCN_REF_OK : SCN_REF_UNKNOWN;
}

const struct scenario_refs refs_builtin = {
    .ctx = NULL,
    .policy = refs_policy,
    .param = refs_param,
    .metric = refs_metric,
    .plugin = refs_plugin,
};
