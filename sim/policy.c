/* policy.c: the policy registry and parameter handling.
 *
 * Parameters are declared by each policy as a table (struct param_def); this
 * file is the one place that parses, validates and formats their values, so
 * `simrun policies`, `set` lines and `--set` all agree.
 *
 * The registry is the built-in array policy_registry, then the policies
 * added at run time (plugins): policy_register checks each one as the
 * engine would trust it (ABI, hooks, name, parameter table) and keeps a
 * copy, so that everything after it can treat a plugin like a built-in.
 * Invariant: names are unique over both parts; entries are never removed
 * (the engine may hold their pointers until the process ends). */
#include "sim/policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cal.h"
#include "sim/grammar.h"
#include "sim/suggest.h"
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

/* Policies added at run time, in the order they came, each a private copy
 * of what its plugin defined (texts that may be NULL made ""). */
struct added {
    struct policy_ops ops;
    struct param_def *params;      /* owned copy of ops.params */
    char *origin;
};
static struct added added[POLICY_MAX_ADDED];
static int nadded;

int policy_count(void)
{
    return policy_registry_count + nadded;
}

const struct policy_ops *policy_at(int i)
{
    SIM_ASSERT(i >= 0 && i < policy_count());
    return i < policy_registry_count ? policy_registry[i] : &added[i - policy_registry_count].ops;
}

const char *policy_origin(const struct policy_ops *ops)
{
    for (int i = 0; i < nadded; i++)
        if (&added[i].ops == ops)
            return added[i].origin;
    return NULL;
}

const struct policy_ops *policy_find(const char *name)
{
    for (int i = 0; i < policy_count(); i++)
        if (strcmp(policy_at(i)->name, name) == 0)
            return policy_at(i);
    return NULL;
}

size_t policy_list_names(char *buf, size_t n, struct suggest *sg)
{
    size_t off = 0;
    int nv = 0;
    buf[0] = 0;
    for (int i = 0; i < policy_count() && off < n; i++) {
        off += (size_t)snprintf(buf + off, n - off, "%s%s", i ? ", " : "", policy_at(i)->name);
        if (sg)
            suggest_add(sg, policy_at(i)->name);
    }
    for (int i = 0; i < policy_count(); i++)
        for (int k = 0; k < policy_at(i)->nvariants && off < n; k++) {
            const char *vn = policy_at(i)->variants[k].name;
            off += (size_t)snprintf(buf + off, n - off, "%s%s", nv++ ? ", " : "; built-in variants: ", vn);
            if (sg)
                suggest_add(sg, vn);
        }
    return off < n ? off : n - 1;
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
    char names[1024], en[SCN_QUOTE_MAX];
    struct suggest sg;
    suggest_init(&sg, name);
    policy_list_names(names, sizeof names, &sg);
    scn_escape(en, sizeof en, name);
    snprintf(msg, n, "unknown policy '%s' (valid: %s)", en, names);
    suggest_append(&sg, msg, n);
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

#define DECIMAL_PLACES 3

/* "1.5" as 1500: digits, then at most DECIMAL_PLACES after a point, an
 * optional sign before; 0 on success. */
static int parse_decimal(const char *v, int64_t *out)
{
    const char *p = v;
    int neg = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    if (!(*p >= '0' && *p <= '9'))
        return -1;
    int64_t x = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (x > (INT64_MAX / 1000 - 9) / 10)
            return -1;
        x = x * 10 + (*p - '0');
    }
    x *= 1000;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9'))
            return -1;
        int64_t scale = 100;
        for (int k = 0; *p >= '0' && *p <= '9'; p++, k++) {
            if (k >= DECIMAL_PLACES)
                return -1;
            x += (*p - '0') * scale;
            scale /= 10;
        }
    }
    if (*p)
        return -1;
    *out = neg ? -x : x;
    return 0;
}

/* Thousandths as the shortest decimal: 1500 "1.5", 2000 "2". */
static void format_decimal(int64_t v, char *buf, size_t n)
{
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    char frac[5] = {'.', (char)('0' + u % 1000 / 100), (char)('0' + u % 100 / 10), (char)('0' + u % 10), 0};
    for (int k = 3; k > 0 && frac[k] == '0'; k--)
        frac[k] = 0;
    snprintf(buf, n, "%s%llu%s", v < 0 ? "-" : "", (unsigned long long)(u / 1000), frac[1] ? frac : "");
}

static void format_int(int64_t v, char *buf, size_t n) { snprintf(buf, n, "%lld", (long long)v); }

/* x, the value v of parameter d (ev: v as a message quotes it), stored in
 * *out if it is in d's range; else the message, the range shown by fmt. */
static int in_range(const struct param_def *d, int64_t x, const char *ev, void (*fmt)(int64_t, char *, size_t),
                    int64_t *out, char *msg, size_t n)
{
    if (x < d->min || x > d->max) {
        char lo[48], hi[48];
        fmt(d->min, lo, sizeof lo);
        fmt(d->max, hi, sizeof hi);
        snprintf(msg, n, "value '%s' for '%s' out of range %s..%s", ev, d->key, lo, hi);
        return -1;
    }
    *out = x;
    return 0;
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
        return in_range(d, x, ev, format_int, out, msg, n);
    }
    case PARAM_DURATION: {
        int64_t us;
        if (scn_parse_duration(v, &us, m, sizeof m) != 0) {
            snprintf(msg, n, "bad value '%s' for '%s': %s", ev, d->key, m);
            return -1;
        }
        return in_range(d, us, ev, sim_fmt_dur, out, msg, n);
    }
    case PARAM_DECIMAL: {
        int64_t x;
        if (parse_decimal(v, &x) != 0) {
            snprintf(msg, n, "bad value '%s' for '%s': expected a number with at most %d decimal places, e.g. 1.5",
                     ev, d->key, DECIMAL_PLACES);
            return -1;
        }
        return in_range(d, x, ev, format_decimal, out, msg, n);
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
    SIM_ASSERT(ops->nparams <= PARAMS_MAX);
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
    struct suggest sg;
    suggest_init(&sg, key);
    for (int i = 0; i < ops->nparams; i++)
        suggest_add(&sg, ops->params[i].key);
    suggest_append(&sg, msg, n);
}

int params_set(struct params *ps, const char *key, const char *value, char *msg, size_t n)
{
    int i = param_index(ps->defs, ps->n, key);
    if (i < 0) {
        for (int k = 0; k < policy_count(); k++)
            if (policy_at(k)->params == ps->defs) {
                unknown_key(policy_at(k), key, msg, n);
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

int params_index(const struct params *ps, const char *key)
{
    return param_index(ps->defs, ps->n, key);
}

int params_check(const struct policy_ops *ops, const struct params *ps, char *msg, size_t n)
{
    if (!ops->check_params)
        return -1;
    if (n)
        msg[0] = 0;
    int i = ops->check_params(ps, msg, n);
    if (i < 0)
        return -1;
    if (n && !msg[0])
        snprintf(msg, n, "policy '%s' refuses this combination of parameters", ops->name);
    return i < ps->n ? i : ps->n; /* ps->n: it named none of its parameters */
}

int64_t params_get(const struct params *ps, const char *key)
{
    int i = param_index(ps->defs, ps->n, key);
    SIM_ASSERT(i >= 0);
    return ps->v[i];
}

/* The text of value v of parameter d; durations as sim_fmt_dur
 * ("00:01:00") or, short, as a scenario writes them ("1m"). */
static void format_value(const struct param_def *d, int64_t v, int short_dur, char *val, size_t n)
{
    if (d->type == PARAM_DURATION) {
        if (short_dur)
            scn_fmt_duration(v, val, n);
        else
            sim_fmt_dur(v, val, n);
    } else if (d->type == PARAM_ENUM) {
        const char *p = d->choices;
        for (int64_t k = 0; k < v && p; k++) {
            p = strchr(p, '|');
            if (p)
                p++;
        }
        size_t len = p ? strcspn(p, "|") : 0;
        snprintf(val, n, "%.*s", (int)len, p ? p : "");
    } else if (d->type == PARAM_BOOL) {
        snprintf(val, n, "%s", v ? "true" : "false");
    } else if (d->type == PARAM_TOD) {
        snprintf(val, n, "%02d:%02d", (int)(v / 60), (int)(v % 60));
    } else if (d->type == PARAM_ZONE) {
        snprintf(val, n, "%s", v ? cal_zone_name((const struct cal_zone *)(intptr_t)v) : "local");
    } else if (d->type == PARAM_DECIMAL) {
        format_decimal(v, val, n);
    } else {
        snprintf(val, n, "%lld", (long long)v);
    }
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
        format_value(d, ps->v[i], 0, val, sizeof val);
        off += (size_t)snprintf(buf + off, n - off, "%s%s=%s", off ? "," : "", d->key, val);
    }
}

int params_value_text(const struct params *ps, const char *key, char *buf, size_t n)
{
    int i = param_index(ps->defs, ps->n, key);
    if (i < 0)
        return -1;
    format_value(&ps->defs[i], ps->v[i], 1, buf, n);
    return 0;
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

/* --- policies added at run time ----------------------------------------------------------- */

/* A policy name: a letter, then letters, digits, '_' and '-', at most 63
 * bytes (what a scenario's set, variant and expect lines can name). */
static int good_name(const char *s)
{
    if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
        return 0;
    size_t len = 0;
    for (; s[len]; len++) {
        char c = s[len];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return 0;
    }
    return len < 64;
}

/* The hooks the engine calls without checking for NULL. */
static const char *missing_hook(const struct policy_ops *o)
{
    if (!o->create)
        return "create";
    if (!o->destroy)
        return "destroy";
    if (!o->start)
        return "start";
    if (!o->on_publish)
        return "on_publish";
    if (!o->on_timer)
        return "on_timer";
    if (!o->on_run_end)
        return "on_run_end";
    return NULL;
}

/* The parameter table of a policy from outside: every key a good name and
 * unique, every default valid, every range sound.  0 or -1 with msg. */
static int check_params(const struct policy_ops *o, char *msg, size_t n)
{
    if (o->nparams < 0 || o->nparams > PARAMS_MAX)
        return scn_msg(msg, n, "policy '%s' has %d parameters (at most %d)", o->name, o->nparams, PARAMS_MAX);
    if (o->nparams && !o->params)
        return scn_msg(msg, n, "policy '%s' has %d parameters but no table", o->name, o->nparams);
    for (int i = 0; i < o->nparams; i++) {
        const struct param_def *d = &o->params[i];
        char m[256];
        int64_t v;
        if (!good_name(d->key))
            return scn_msg(msg, n, "policy '%s': parameter %d has a bad name", o->name, i + 1);
        if (param_index(o->params, i, d->key) >= 0)
            return scn_msg(msg, n, "policy '%s': parameter '%s' is declared twice", o->name, d->key);
        if ((unsigned)d->type > PARAM_DECIMAL || (d->type == PARAM_ENUM && (!d->choices || !d->choices[0])))
            return scn_msg(msg, n, "policy '%s': parameter '%s' has a bad type", o->name, d->key);
        if ((d->type == PARAM_INT || d->type == PARAM_DURATION || d->type == PARAM_DECIMAL) && d->min > d->max)
            return scn_msg(msg, n, "policy '%s': parameter '%s' has min > max", o->name, d->key);
        if (!d->def || parse_value(d, d->def, &v, m, sizeof m) != 0)
            return scn_msg(msg, n, "policy '%s': the default of parameter '%s' is bad: %s", o->name, d->key,
                            d->def ? m : "none given");
    }
    return 0;
}

/* Why ops cannot be added, or NULL: the checks of policy_register. */
static int check_ops(const struct policy_ops *o, char *msg, size_t n)
{
    if (o->abi != POLICY_ABI)
        return scn_msg(msg, n,
                        "it was built for policy ABI %d, this simrun has ABI %d (rebuild it against this simrun's "
                        "headers)",
                        o->abi, POLICY_ABI);
    if (!good_name(o->name))
        return scn_msg(msg, n, "its policy name is %s (a letter, then letters, digits, '_' or '-')",
                        o->name ? "not a valid name" : "missing");
    const char *hook = missing_hook(o);
    if (hook)
        return scn_msg(msg, n,
                        "policy '%s' has no '%s' hook (required: create, destroy, start, on_publish, on_timer, "
                        "on_run_end)",
                        o->name, hook);
    if ((unsigned)o->promise > PROMISE_UNIT)
        return scn_msg(msg, n, "policy '%s' has an unknown promise %d", o->name, (int)o->promise);
    const struct policy_ops *other = policy_find(o->name);
    if (other) {
        const char *from = policy_origin(other);
        if (from)
            return scn_msg(msg, n, "policy '%s' is already defined by '%s'", o->name, from);
        return scn_msg(msg, n, "policy '%s' has the name of a built-in policy", o->name);
    }
    if (policy_variant_find(o->name, NULL))
        return scn_msg(msg, n, "policy '%s' has the name of a built-in variant", o->name);
    if (o->nvariants || o->variants)
        return scn_msg(msg, n,
                        "policy '%s' declares built-in variants (only simrun's own policies have them; a "
                        "scenario's 'variant' line configures a plugin's policy)",
                        o->name);
    if (nadded >= POLICY_MAX_ADDED)
        return scn_msg(msg, n, "too many policy plugins (at most %d)", POLICY_MAX_ADDED);
    return check_params(o, msg, n);
}

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

const struct policy_ops *policy_register(const struct policy_ops *ops, const char *origin, char *msg, size_t n)
{
    if (check_ops(ops, msg, n) != 0)
        return NULL;
    struct added *a = &added[nadded++];
    a->ops = *ops;
    a->origin = xstrdup(origin);
    a->ops.summary = or_empty(ops->summary);
    a->ops.seeds = ops->seeds ? ops->seeds : a->origin;
    a->params = NULL;
    if (ops->nparams) {
        a->params = xcalloc((size_t)ops->nparams, sizeof *a->params);
        for (int i = 0; i < ops->nparams; i++) {
            a->params[i] = ops->params[i];
            a->params[i].source = or_empty(ops->params[i].source);
            a->params[i].help = or_empty(ops->params[i].help);
        }
    }
    a->ops.params = a->params;
    return &a->ops;
}
