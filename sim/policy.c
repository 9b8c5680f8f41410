/* policy.c: the policy registry and parameter handling.
 *
 * Parameters are declared by each policy as a table (struct param_def); this
 * file is the one place that parses, validates and formats their values, so
 * `simrun policies`, `set` lines and `--set` all agree. */
#include "sim/policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cal.h"
#include "sim/grammar.h"
#include "sim/syntax.h"
#include "sim/util.h"

extern const struct policy_ops policy_oracle, policy_poll, policy_wakeat, policy_vistimeout, policy_interval,
    policy_heartbeat;
/* Models of real-world schedulers (docs/policy-<name>.md). */
extern const struct policy_ops policy_k8s_cronjob, policy_quartz, policy_systemd_timer, policy_temporal_schedule,
    policy_sqs, policy_pgqueue;

const struct policy_ops *const policy_registry[] = {&policy_oracle, &policy_poll, &policy_wakeat,
                                                     &policy_vistimeout, &policy_interval, &policy_heartbeat,
                                                     &policy_k8s_cronjob, &policy_quartz, &policy_systemd_timer,
                                                     &policy_temporal_schedule, &policy_sqs,
                                                     &policy_pgqueue};
const int policy_registry_count = (int)(sizeof policy_registry / sizeof policy_registry[0]);

const struct policy_ops *policy_find(const char *name)
{
    for (int i = 0; i < policy_registry_count; i++)
        if (strcmp(policy_registry[i]->name, name) == 0)
            return policy_registry[i];
    return NULL;
}

static void list_names(char *buf, size_t n)
{
    size_t off = 0;
    buf[0] = 0;
    for (int i = 0; i < policy_registry_count && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, "%s%s", i ? ", " : "", policy_registry[i]->name);
}

const struct policy_variant *policy_variant_find(const char *name, const struct policy_ops **ops)
{
    for (int i = 0; i < policy_registry_count; i++) {
        const struct policy_ops *p = policy_registry[i];
        for (int k = 0; k < p->nvariants; k++)
            if (strcmp(p->variants[k].name, name) == 0) {
                if (ops)
                    *ops = p;
                return &p->variants[k];
            }
    }
    return NULL;
}

int policy_variant_apply(const struct policy_variant *v, struct params *ps, char *msg, size_t n)
{
    for (int k = 0; k < v->nsettings; k++)
        if (params_set(ps, v->settings[k].key, v->settings[k].value, msg, n) != 0)
            return -1;
    int g = grammar_find(v->grammar);
    SIM_ASSERT(g >= 0); /* a built-in variant names a known grammar */
    ps->grammar = g;
    return 0;
}

int policy_check_name(const char *name, char *msg, size_t n)
{
    if (policy_find(name) || policy_variant_find(name, NULL))
        return 0;
    char names[256], en[SCN_QUOTE_MAX];
    list_names(names, sizeof names);
    scn_escape(en, sizeof en, name);
    snprintf(msg, n, "unknown policy '%s' (valid: %s)", en, names);
    return -1;
}

/* Choice index of v in "a|b|c", or -1. */
static int choice_index(const char *choices, const char *v)
{
    size_t vl = strlen(v);
    int idx = 0;
    for (const char *p = choices; *p; idx++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == vl && strncmp(p, v, len) == 0)
            return idx;
        if (!bar)
            break;
        p = bar + 1;
    }
    return -1;
}

static int parse_value(const struct param_def *d, const char *v, int64_t *out, char *msg, size_t n)
{
    char m[160], ev[SCN_QUOTE_MAX]; /* ev: v as a message quotes it */
    scn_escape(ev, sizeof ev, v);
    switch (d->type) {
    case PARAM_INT: {
        errno = 0;
        char *end;
        long long x = strtoll(v, &end, 10);
        if (!*v || *end || errno) {
            snprintf(msg, n, "bad value '%s' for '%s': expected an integer", ev, d->key);
            return -1;
        }
        if (x < d->min || x > d->max) {
            snprintf(msg, n, "value '%s' for '%s' out of range %lld..%lld", ev, d->key, (long long)d->min,
                     (long long)d->max);
            return -1;
        }
        *out = x;
        return 0;
    }
    case PARAM_DURATION: {
        int64_t us;
        if (scn_parse_duration(v, &us, m, sizeof m) != 0) {
            snprintf(msg, n, "bad value '%s' for '%s': %s", ev, d->key, m);
            return -1;
        }
        if (us < d->min || us > d->max) {
            char lo[48], hi[48];
            sim_fmt_dur(d->min, lo, sizeof lo);
            sim_fmt_dur(d->max, hi, sizeof hi);
            snprintf(msg, n, "value '%s' for '%s' out of range %s..%s", ev, d->key, lo, hi);
            return -1;
        }
        *out = us;
        return 0;
    }
    case PARAM_ENUM: {
        int i = choice_index(d->choices, v);
        if (i < 0) {
            snprintf(msg, n, "bad value '%s' for '%s' (valid: %s)", ev, d->key, d->choices);
            return -1;
        }
        *out = i;
        return 0;
    }
    case PARAM_BOOL:
        if (!strcmp(v, "true") || !strcmp(v, "on") || !strcmp(v, "1")) {
            *out = 1;
            return 0;
        }
        if (!strcmp(v, "false") || !strcmp(v, "off") || !strcmp(v, "0")) {
            *out = 0;
            return 0;
        }
        snprintf(msg, n, "bad value '%s' for '%s': expected true or false", ev, d->key);
        return -1;
    case PARAM_TOD: {
        int min;
        if (!strcmp(v, "24:00")) {
            *out = 24 * 60; /* the end of the day, for an end time */
            return 0;
        }
        if (cal_tod_parse(v, &min, m, sizeof m) != 0) {
            snprintf(msg, n, "bad value '%s' for '%s': %s", ev, d->key, m);
            return -1;
        }
        *out = min;
        return 0;
    }
    case PARAM_ZONE: {
        if (!strcmp(v, "local")) {
            *out = 0;
            return 0;
        }
        const struct cal_zone *z;
        char err[CAL_ERR_SIZE];
        if (cal_zone_get(v, &z, err, sizeof err) != 0) {
            snprintf(msg, n, "bad value '%s' for '%s': %s", ev, d->key, err);
            return -1;
        }
        *out = (int64_t)(intptr_t)z;
        return 0;
    }
    }
    return -1;
}

int params_init(struct params *ps, const struct policy_ops *ops)
{
    SIM_ASSERT(ops->nparams <= (int)(sizeof ps->v / sizeof ps->v[0]));
    ps->defs = ops->params;
    ps->n = ops->nparams;
    ps->grammar = 0;
    for (int i = 0; i < ps->n; i++) {
        char msg[256];
        if (parse_value(&ps->defs[i], ps->defs[i].def, &ps->v[i], msg, sizeof msg) != 0)
            sim_bug(__FILE__, __LINE__, msg); /* a policy's own default must parse */
    }
    return 0;
}

static int param_index(const struct param_def *defs, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (strcmp(defs[i].key, key) == 0)
            return i;
    return -1;
}

static void unknown_key(const struct policy_ops *ops, const char *key, char *msg, size_t n)
{
    char keys[512], ek[SCN_QUOTE_MAX];
    size_t off = 0;
    keys[0] = 0;
    scn_escape(ek, sizeof ek, key);
    for (int i = 0; i < ops->nparams && off < sizeof keys; i++)
        off += (size_t)snprintf(keys + off, sizeof keys - off, "%s%s", i ? ", " : "", ops->params[i].key);
    if (ops->nparams == 0)
        snprintf(msg, n, "unknown parameter '%s' for policy '%s' (it has no parameters)", ek, ops->name);
    else
        snprintf(msg, n, "unknown parameter '%s' for policy '%s' (valid: %s)", ek, ops->name, keys);
}

int params_set(struct params *ps, const char *key, const char *value, char *msg, size_t n)
{
    int i = param_index(ps->defs, ps->n, key);
    if (i < 0) {
        for (int k = 0; k < policy_registry_count; k++)
            if (policy_registry[k]->params == ps->defs) {
                unknown_key(policy_registry[k], key, msg, n);
                return -1;
            }
        char ek[SCN_QUOTE_MAX];
        scn_escape(ek, sizeof ek, key);
        snprintf(msg, n, "unknown parameter '%s'", ek);
        return -1;
    }
    return parse_value(&ps->defs[i], value, &ps->v[i], msg, n);
}

const struct cal_zone *params_zone(const struct params *ps, const char *key, const struct cal_zone *dflt)
{
    int i = param_index(ps->defs, ps->n, key);
    SIM_ASSERT(i >= 0 && ps->defs[i].type == PARAM_ZONE);
    return ps->v[i] ? (const struct cal_zone *)(intptr_t)ps->v[i] : dflt;
}

int64_t params_get(const struct params *ps, const char *key)
{
    int i = param_index(ps->defs, ps->n, key);
    SIM_ASSERT(i >= 0);
    return ps->v[i];
}

void params_format(const struct params *ps, char *buf, size_t n)
{
    size_t off = 0;
    buf[0] = 0;
    for (int i = 0; i < ps->n && off < n; i++) {
        int64_t def;
        char msg[64];
        if (parse_value(&ps->defs[i], ps->defs[i].def, &def, msg, sizeof msg) != 0 || def == ps->v[i])
            continue;
        char val[64];
        const struct param_def *d = &ps->defs[i];
        if (d->type == PARAM_DURATION) {
            sim_fmt_dur(ps->v[i], val, sizeof val);
        } else if (d->type == PARAM_ENUM) {
            const char *p = d->choices;
            for (int64_t k = 0; k < ps->v[i] && p; k++) {
                p = strchr(p, '|');
                if (p)
                    p++;
            }
            size_t len = p ? strcspn(p, "|") : 0;
            snprintf(val, sizeof val, "%.*s", (int)len, p ? p : "");
        } else if (d->type == PARAM_BOOL) {
            snprintf(val, sizeof val, "%s", ps->v[i] ? "true" : "false");
        } else if (d->type == PARAM_TOD) {
            snprintf(val, sizeof val, "%02d:%02d", (int)(ps->v[i] / 60), (int)(ps->v[i] % 60));
        } else if (d->type == PARAM_ZONE) {
            snprintf(val, sizeof val, "%s",
                     ps->v[i] ? cal_zone_name((const struct cal_zone *)(intptr_t)ps->v[i]) : "local");
        } else {
            snprintf(val, sizeof val, "%lld", (long long)ps->v[i]);
        }
        off += (size_t)snprintf(buf + off, n - off, "%s%s=%s", off ? "," : "", d->key, val);
    }
}

int policy_check_param(const char *name, const char *key, const char *value, char *msg, size_t n)
{
    const struct policy_ops *ops = policy_find(name);
    const struct policy_variant *bv = ops ? NULL : policy_variant_find(name, &ops);
    if (!ops)
        return policy_check_name(name, msg, n);
    char k2[64], v2[256];
    if (bv) {
        /* The value as the variant's system reads it. */
        enum gr_verdict gv = grammar_param(grammar_find(bv->grammar), ops->name, key, value, k2, sizeof k2, v2,
                                           sizeof v2, msg, n);
        if (gv == GR_REJECT)
            return -1;
        key = k2;
        value = v2;
    }
    int i = param_index(ops->params, ops->nparams, key);
    if (i < 0) {
        unknown_key(ops, key, msg, n);
        return -1;
    }
    int64_t v;
    return parse_value(&ops->params[i], value, &v, msg, n);
}
