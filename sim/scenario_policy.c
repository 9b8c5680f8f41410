/* scenario_policy.c: `set`, `variant`, `sweep` and `expect`, the lines
 * that name policies, their parameters and metrics.
 *
 * The parser knows none of these names itself: it asks the callbacks the
 * caller passed in (struct scenario_refs in scenario.h; p->ext, never NULL).
 * A name that is not a registered policy may be a variant defined further
 * down, so it is recorded as a reference and resolved in pass 3.  Without a
 * callback, that kind of name is accepted as written (scenario.h). */
#include "sim/scenario_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/suggest.h"
#include "sim/util.h"

/* --- policies: set, variant, expect --------------------------------------------------- */

static int variant_index(const struct scenario *s, const char *name)
{
    for (uint16_t i = 0; i < s->nvariants; i++)
        if (!strcmp(s->variants[i].name, name))
            return i;
    return -1;
}

/* Is name a registered policy?  Never, when the caller gave no policy
 * callback.  m receives the callback's message. */
static int is_registered(struct parser *p, const char *name, char *m, size_t n)
{
    return p->ext->policy && p->ext->policy(p->ext->ctx, name, m, n) == SCN_REF_OK;
}

/* Checks key=value against policy base (registered, or a variant's base);
 * the error points at the key when the policy has no such key, else at the
 * value. */
static int check_param(struct parser *p, const char *base, const struct param_kv *kv)
{
    char m[512];
    if (!p->ext->param)
        return 0;
    int rc = p->ext->param(p->ext->ctx, base, kv->key, kv->value, m, sizeof m);
    if (rc == SCN_REF_OK)
        return 0;
    int col = rc == SCN_REF_BAD_VALUE ? kv->col + (int)strlen(kv->key) + 1 : kv->col;
    return perr(p, kv->line, col, "%s", m);
}

/* A name that is neither a registered policy nor a variant: an error, with
 * the valid names, unless policies are not checked. */
static int unknown_policy(struct parser *p, int line, int col, const char *name)
{
    char m[512], vs[256], sugg[SUGGEST_MAX_LEN + 32] = "";
    size_t o = 0;
    if (!p->ext->policy)
        return 0;
    m[0] = 0;
    p->ext->policy(p->ext->ctx, name, m, sizeof m);
    /* The callback may suggest a registered policy; else a variant may be
     * what was meant.  The suggestion goes last either way. */
    char *had = strstr(m, "; did you mean");
    struct suggest sg;
    suggest_init(&sg, name);
    if (had) {
        snprintf(sugg, sizeof sugg, "%s", had);
        *had = 0;
    }
    vs[0] = 0;
    for (uint16_t i = 0; i < p->s->nvariants && o < sizeof vs; i++) {
        o += (size_t)snprintf(vs + o, sizeof vs - o, "%s%s", i ? ", " : "", p->s->variants[i].name);
        suggest_add(&sg, p->s->variants[i].name);
    }
    if (!had)
        suggest_append(&sg, sugg, sizeof sugg);
    size_t ml = strlen(m);
    if (p->s->nvariants && ml && m[ml - 1] == ')') { /* inside the list of valid names */
        m[ml - 1] = 0;
        return perr(p, line, col, "%s; the scenario's variants: %s)%s", m, vs, sugg);
    }
    if (p->s->nvariants)
        return perr(p, line, col, "%s; the scenario's variants: %s%s", m, vs, sugg);
    return perr(p, line, col, "%s%s", m, sugg);
}

/* Splits "key=value" (both non-empty) at token t starting at byte off. */
static int split_kv(struct parser *p, int line, const struct tok *t, size_t off, struct param_kv *kv)
{
    const char *s = t->s + off, *eq = strchr(s, '=');
    int col = t->col + (t->quoted ? 1 : 0) + (int)off;
    if (!eq || eq == s)
        return perr(p, line, t->col, "bad setting '%s' (expected KEY=VALUE)", q(p, t->s));
    if (!eq[1])
        return perr(p, line, col + (int)(eq - s) + 1, "missing value in '%s'", q(p, t->s));
    kv->key = xmalloc((size_t)(eq - s) + 1);
    memcpy(kv->key, s, (size_t)(eq - s));
    kv->key[eq - s] = 0;
    kv->value = xstrdup(eq + 1);
    kv->line = line;
    kv->col = col;
    if (++p->nparams > SCN_MAX_PARAMS)
        return perr(p, line, t->col, "too many parameter settings (limit %d in all)", SCN_MAX_PARAMS);
    return 0;
}

int scn__parse_set(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    if (need(p, L, 0, 1, "POLICY.KEY=VALUE"))
        return -1;
    for (int i = 1; i < L->ntok; i++) {
        const struct tok *t = &L->tok[i];
        const char *dot = strchr(t->s, '.'), *eq = strchr(t->s, '=');
        if (!dot || (eq && eq < dot))
            return perr(p, L->no, t->col, "bad setting '%s' (expected POLICY.KEY=VALUE)", q(p, t->s));
        char pol[SCN_MAX_LINE + 1];
        memcpy(pol, t->s, (size_t)(dot - t->s));
        pol[dot - t->s] = 0;
        if (scn__check_name(p, L->no, t->col, pol, "policy"))
            return -1;
        struct param_kv kv = {0};
        if (split_kv(p, L->no, t, (size_t)(dot - t->s) + 1, &kv) != 0) {
            /* Not kept: a later setting of the policy compares its key
             * with those kept (a setting without '=' has none). */
            free(kv.key);
            free(kv.value);
            return -1;
        }
        /* The group of this policy's settings, in first-use order. */
        uint16_t g;
        for (g = 0; g < s->nsets; g++)
            if (!strcmp(s->sets[g].policy, pol))
                break;
        if (g == s->nsets) {
            s->sets = xgrow(s->sets, sizeof *s->sets, &p->cap_sets, (size_t)s->nsets + 1);
            memset(&s->sets[g], 0, sizeof s->sets[g]);
            s->sets[g].policy = xstrdup(pol);
            s->nsets++;
        }
        struct param_set_def *ps = &s->sets[g];
        ps->kv = xrealloc(ps->kv, ((size_t)ps->nkv + 1) * sizeof *ps->kv);
        ps->kv[ps->nkv++] = kv;
        for (uint16_t k = 0; k + 1 < ps->nkv; k++)
            if (!strcmp(ps->kv[k].key, kv.key))
                return perr(p, L->no, kv.col, "'%s.%s' is set twice (first at line %d)", q(p, pol), q(p, kv.key),
                            ps->kv[k].line);
        char m[512];
        if (is_registered(p, pol, m, sizeof m)) {
            if (check_param(p, pol, &kv))
                return -1;
        } else {
            scn__add_ref(p, REF_SET, L->no, t->col, pol, g, (uint32_t)ps->nkv - 1);
        }
    }
    return 0;
}

/* The variant line (pass 1) that defines name first; NULL if none. */
static const struct variant_decl *variant_decl(const struct parser *p, const char *name)
{
    for (size_t i = 0; i < p->nvdecls; i++)
        if (!strcmp(p->vdecls[i].name, name))
            return &p->vdecls[i];
    return NULL;
}

/* A variant line whose BASE is a variant of the scenario (defined before or
 * after it): an error naming the policy that variant is built on, followed
 * through a chain of variants. */
static int variant_base_is_variant(struct parser *p, const struct line *L, const struct variant_decl *vd)
{
    const struct tok *nt = &L->tok[1], *bt = &L->tok[2];
    if (vd->line == L->no)
        return perr(p, L->no, bt->col,
                    "variant '%s' cannot be its own base (a variant's base must be a policy or a built-in variant)",
                    q(p, nt->s));
    const char *policy = vd->base;
    const struct variant_decl *up;
    for (size_t n = 0; n < p->nvdecls && (up = variant_decl(p, policy)) != NULL; n++)
        policy = up->base;
    if (variant_decl(p, policy))
        return perr(p, L->no, bt->col,
                    "the base of variant '%s' is the variant '%s' (line %d), and their bases go round in a cycle: "
                    "a variant's base must be a policy or a built-in variant",
                    q(p, nt->s), q(p, bt->s), vd->line);
    return perr(p, L->no, bt->col,
                "the base of variant '%s' is the variant '%s' (line %d, built on '%s'): a variant's base must be a "
                "policy or a built-in variant, not a variant of the scenario (use '%s' with the settings of both)",
                q(p, nt->s), q(p, bt->s), vd->line, q(p, policy), q(p, policy));
}

int scn__parse_variant(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    char m[512];
    if (need(p, L, 0, 2, "'NAME POLICY [KEY=VALUE...]'"))
        return -1;
    const struct tok *nt = &L->tok[1], *bt = &L->tok[2];
    if (scn__check_name(p, L->no, nt->col, nt->s, "variant"))
        return -1;
    if (is_registered(p, nt->s, m, sizeof m))
        return perr(p, L->no, nt->col, "variant name '%s' clashes with a registered policy", q(p, nt->s));
    int vi = variant_index(s, nt->s);
    if (vi >= 0)
        return perr(p, L->no, nt->col, "duplicate variant '%s' (first at line %d)", q(p, nt->s), s->variants[vi].line);
    if (p->ext->policy && !is_registered(p, bt->s, m, sizeof m)) {
        const struct variant_decl *vd = variant_decl(p, bt->s);
        return vd ? variant_base_is_variant(p, L, vd) : perr(p, L->no, bt->col, "%s", m);
    }
    if (s->nvariants >= SCN_MAX_VARIANTS)
        return perr(p, L->no, nt->col, "too many variants (limit %d)", SCN_MAX_VARIANTS);
    s->variants = xgrow(s->variants, sizeof *s->variants, &p->cap_variants, (size_t)s->nvariants + 1);
    struct variant_def *v = &s->variants[s->nvariants++];
    memset(v, 0, sizeof *v);
    v->name = xstrdup(nt->s);
    v->base = xstrdup(bt->s);
    v->line = L->no;
    for (int i = 3; i < L->ntok; i++) {
        struct param_kv kv = {0};
        int rc = split_kv(p, L->no, &L->tok[i], 0, &kv);
        v->kv = xrealloc(v->kv, ((size_t)v->nkv + 1) * sizeof *v->kv);
        v->kv[v->nkv++] = kv;
        if (rc)
            return -1;
        for (uint16_t k = 0; k + 1 < v->nkv; k++)
            if (!strcmp(v->kv[k].key, kv.key))
                return perr(p, L->no, kv.col, "parameter '%s' is given twice", q(p, kv.key));
        if (check_param(p, v->base, &kv))
            return -1;
    }
    return 0;
}

/* A number: -?digits(.digits)?. */
static int is_number(const char *s)
{
    if (*s == '-')
        s++;
    if (!is_digit(*s))
        return 0;
    while (is_digit(*s))
        s++;
    if (*s == '.') {
        s++;
        if (!is_digit(*s))
            return 0;
        while (is_digit(*s))
            s++;
    }
    return *s == 0;
}

/* `inf` (or `∞`): the value of a censored percentile, work never done. */
static int is_inf_word(const char *s)
{
    return !strcmp(s, "inf") || !strcmp(s, "\xe2\x88\x9e");
}

/* An expect value when the metric's kind is unknown (no metric callback):
 * true or false, a number, else a duration; then nothing after it. */
static int expect_value_by_form(struct parser *p, const struct line *L, int i, struct expect_def *e)
{
    const struct tok *vt = &L->tok[i + 1];
    int64_t us;
    if (!strcmp(vt->s, "true") || !strcmp(vt->s, "false"))
        e->value = vt->s[0] == 't' ? 1.0 : 0.0;
    else if (is_number(vt->s) && strlen(vt->s) <= 40)
        e->value = strtod(vt->s, NULL);
    else if (scn_parse_duration(vt->s, &us, NULL, 0) == 0)
        e->value = (double)us;
    else if (is_inf_word(vt->s))
        e->value = INFINITY;
    else
        return perr(p, L->no, vt->col, "bad value '%s' for metric '%s' (expected a number, a duration, true or false)",
                    q(p, vt->s), q(p, e->metric));
    return trailing(p, L, i + 2, "expect");
}

/* The policies of expect line L (token 1): '*' or a comma-separated list
 * of names, each a registered policy or a variant (resolved in pass 3). */
static int expect_policies(struct parser *p, const struct line *L, struct expect_def *e, uint32_t ei)
{
    int no = L->no;
    const struct tok *pt = &L->tok[1];
    size_t np = 1;
    for (const char *c = pt->s; *c; c++)
        np += *c == ',';
    if (np > SCN_MAX_EXPECT_POLICIES)
        return perr(p, no, pt->col, "too many policies in one expect line (limit %d)", SCN_MAX_EXPECT_POLICIES);
    e->policies = xcalloc(np + 1, sizeof *e->policies);
    if (!strcmp(pt->s, "*")) {
        e->policies[0] = xstrdup("*");
        return 0;
    }
    const char *c = pt->s;
    for (size_t k = 0;; k++) {
        const char *comma = strchr(c, ',');
        size_t len = comma ? (size_t)(comma - c) : strlen(c);
        char name[SCN_MAX_LINE + 1];
        memcpy(name, c, len);
        name[len] = 0;
        int col = pt->col + (pt->quoted ? 1 : 0) + (int)(c - pt->s);
        if (!strcmp(name, "*"))
            return perr(p, no, col, "'*' cannot be combined with policy names");
        if (scn__check_name(p, no, col, name, "policy"))
            return -1;
        for (size_t j = 0; j < k; j++)
            if (!strcmp(e->policies[j], name))
                return perr(p, no, col, "policy '%s' is listed twice", q(p, name));
        e->policies[k] = xstrdup(name);
        char m[512];
        if (!is_registered(p, name, m, sizeof m))
            scn__add_ref(p, REF_EXPECT_POLICY, no, col, name, ei, 0);
        if (!comma)
            return 0;
        c = comma + 1;
    }
}

/* The operator and value of expect line L at tokens i and i + 1, for a
 * metric of kind *mi (known: the metric callback gave it), then nothing
 * after them. */
static int expect_value(struct parser *p, const struct line *L, int i, struct expect_def *e,
                        const struct scenario_metric *mi, int known)
{
    int no = L->no;
    const struct tok *ot = &L->tok[i], *vt = &L->tok[i + 1];
    static const char *const ops[] = {"<", "<=", ">", ">=", "==", "!="};
    int op = -1;
    for (int k = 0; k < 6; k++)
        if (!strcmp(ot->s, ops[k]))
            op = k;
    if (op < 0)
        return perr(p, no, ot->col, "bad operator '%s' (valid: <, <=, >, >=, ==, !=)", q(p, ot->s));
    e->op = (enum expect_op)op;
    int is_bool_word = !strcmp(vt->s, "true") || !strcmp(vt->s, "false");
    if (mi->is_bool && (e->agg == EXPECT_EACH || e->agg == EXPECT_MIN || e->agg == EXPECT_MAX)) {
        if (!is_bool_word)
            return perr(p, no, vt->col, "expected true or false for the boolean metric '%s', got '%s'",
                        q(p, e->metric), q(p, vt->s));
        if (e->op != OP_EQ && e->op != OP_NE)
            return perr(p, no, ot->col, "operator '%s' does not apply to the boolean metric '%s' (use == or !=)",
                        ot->s, q(p, e->metric));
        e->value = vt->s[0] == 't' ? 1.0 : 0.0;
    } else if (!known) {
        return expect_value_by_form(p, L, i, e);
    } else if (mi->is_bool) {
        /* The mean or a percentile of a boolean over seeds: a share. */
        if (!is_number(vt->s) || strlen(vt->s) > 40 || !(strtod(vt->s, NULL) >= 0 && strtod(vt->s, NULL) <= 1))
            return perr(p, no, vt->col, "expected a share of seeds from 0 to 1 for '%s', got '%s'",
                        q(p, e->metric), q(p, vt->s));
        e->value = strtod(vt->s, NULL);
    } else if (is_bool_word) {
        return perr(p, no, vt->col, "'%s' is not a value for metric '%s' (it is not a boolean)", vt->s,
                    q(p, e->metric));
    } else if (mi->is_duration) {
        int64_t us;
        char m[256];
        if (is_inf_word(vt->s))
            e->value = INFINITY;
        else if (scn_parse_duration(vt->s, &us, m, sizeof m) != 0)
            return perr(p, no, vt->col, "expected a duration for metric '%s': %s", q(p, e->metric), m);
        else
            e->value = (double)us;
    } else {
        if (!is_number(vt->s) || strlen(vt->s) > 40)
            return perr(p, no, vt->col, "bad number '%s' for metric '%s'", q(p, vt->s), q(p, e->metric));
        e->value = strtod(vt->s, NULL);
    }
    return trailing(p, L, i + 2, "expect");
}

/* The metric token of an expect line: METRIC, or AGG(METRIC) with AGG one
 * of mean, min, max, pNN (1 <= NN <= 99).  Sets e->agg and e->agg_pct and
 * copies the metric's name into name, with its column. */
static int expect_metric_token(struct parser *p, int no, const struct tok *mt, struct expect_def *e, char *name,
                               int *name_col)
{
    const char *s = mt->s, *open = strchr(s, '(');
    int col0 = mt->col + (mt->quoted ? 1 : 0);
    e->agg = EXPECT_EACH;
    *name_col = col0;
    if (!open) {
        snprintf(name, SCN_MAX_LINE + 1, "%s", s);
        return 0;
    }
    size_t len = strlen(s), alen = (size_t)(open - s);
    if (len < alen + 3 || s[len - 1] != ')')
        return perr(p, no, col0, "bad aggregate '%s' (expected FUNCTION(METRIC), e.g. mean(latency.p50))", q(p, s));
    if (alen == 4 && !strncmp(s, "mean", 4))
        e->agg = EXPECT_MEAN;
    else if (alen == 3 && !strncmp(s, "min", 3))
        e->agg = EXPECT_MIN;
    else if (alen == 3 && !strncmp(s, "max", 3))
        e->agg = EXPECT_MAX;
    else if ((alen == 2 || alen == 3) && s[0] == 'p' && is_digit(s[1]) && (alen == 2 || is_digit(s[2])) &&
             s[1] != '0' && atoi(s + 1) >= 1 && atoi(s + 1) <= 99) {
        e->agg = EXPECT_PCT;
        e->agg_pct = atoi(s + 1);
    } else {
        char agg[16];
        snprintf(agg, sizeof agg, "%.*s", (int)(alen < 15 ? alen : 15), s);
        return perr(p, no, col0, "unknown aggregate '%s' in '%s' (valid: mean, min, max, p1 .. p99)", q(p, agg),
                    q(p, s));
    }
    snprintf(name, SCN_MAX_LINE + 1, "%.*s", (int)(len - alen - 2), open + 1);
    *name_col = col0 + (int)alen + 1;
    return 0;
}

/* `expect POLICIES METRIC [for WORKFLOW.HANDLER] OP VALUE`. */
int scn__parse_expect(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    int no = L->no;
    if (need(p, L, 0, 4, "'POLICIES METRIC OP VALUE'"))
        return -1;
    s->expects = xgrow(s->expects, sizeof *s->expects, &p->cap_expects, (size_t)s->nexpects + 1);
    struct expect_def *e = &s->expects[s->nexpects++];
    uint32_t ei = s->nexpects - 1;
    memset(e, 0, sizeof *e);
    e->wf = e->handler = -1;
    e->line = no;
    const struct tok *last = &L->tok[L->ntok - 1];
    size_t tlen = (size_t)(last->end - L->tok[0].col);
    e->text = xmalloc(tlen + 1);
    memcpy(e->text, L->raw + L->tok[0].col - 1, tlen);
    e->text[tlen] = 0;
    if (expect_policies(p, L, e, ei))
        return -1;

    /* `crashpoints METRIC`: the line holds at every crash point
     * (docs/crashpoints.md); its metrics are checked by their own callback
     * and are not per handler. */
    int cp = !L->tok[2].quoted && !strcmp(L->tok[2].s, "crashpoints");
    if (cp && need(p, L, 2, 3, "'METRIC OP VALUE'"))
        return -1;
    e->crashpoints = cp;
    /* The metric, perhaps inside an aggregate over seeds: its kind from
     * the callback, or unknown (read by form). */
    const struct tok *mt = &L->tok[2 + cp];
    char name[SCN_MAX_LINE + 1];
    int name_col;
    if (expect_metric_token(p, no, mt, e, name, &name_col))
        return -1;
    if (cp && e->agg != EXPECT_EACH)
        return perr(p, no, mt->col, "an aggregate over seeds does not apply to crashpoints metrics ('%s')",
                    q(p, mt->s));
    struct scenario_metric mi = {.is_duration = 0, .is_bool = 0, .per_handler = !cp};
    int (*check)(void *, const char *, struct scenario_metric *, char *, size_t) =
        cp ? p->ext->crash_metric : p->ext->metric;
    int known = check != NULL;
    if (known) {
        char m[512];
        if (check(p->ext->ctx, name, &mi, m, sizeof m) != SCN_REF_OK)
            return perr(p, no, name_col, "%s", m);
    }
    if (mi.is_bool && e->agg == EXPECT_PCT)
        return perr(p, no, mt->col, "a percentile over seeds does not apply to the boolean metric '%s' (use "
                    "mean(%s) for the share of seeds where it holds)", q(p, name), q(p, name));
    e->metric = xstrdup(name);
    int i = 3 + cp;
    if (!strcmp(L->tok[i].s, "for")) {
        if (cp)
            return perr(p, no, L->tok[i].col, "'for' does not apply to crashpoints metrics");
        if (need(p, L, 3, 1, "WORKFLOW.HANDLER"))
            return -1;
        const struct tok *ft = &L->tok[4];
        if (!mi.per_handler)
            return perr(p, no, L->tok[3].col, "metric '%s' is not defined per handler", q(p, mt->s));
        const char *dot = strchr(ft->s, '.');
        if (!dot || strchr(dot + 1, '.'))
            return perr(p, no, ft->col, "expected WORKFLOW.HANDLER, got '%s'", q(p, ft->s));
        scn__add_ref(p, REF_EXPECT_FOR, no, ft->col, ft->s, ei, 0);
        i = 5;
    }
    if (need(p, L, i - 1, 2, "'OP VALUE'"))
        return -1;
    return expect_value(p, L, i, e, &mi, known);
}

/* --- sweep ----------------------------------------------------------------------------- */

/* Checks each value of sweep axis w against policy base (registered, or a
 * variant's base); the error points at the value, or at the key when the
 * policy has no such key. */
static int check_sweep_values(struct parser *p, const char *base, const struct sweep_def *w)
{
    if (!p->ext->param)
        return 0;
    int col = w->col + (int)strlen(w->policy) + 1 + (int)strlen(w->key) + 1;
    for (uint16_t i = 0; i < w->nvalues; i++) {
        char m[512];
        int rc = p->ext->param(p->ext->ctx, base, w->key, w->values[i], m, sizeof m);
        if (rc == SCN_REF_UNKNOWN)
            return perr(p, w->line, w->col + (int)strlen(w->policy) + 1, "%s", m);
        if (rc != SCN_REF_OK)
            return perr(p, w->line, col, "%s", m);
        col += (int)strlen(w->values[i]) + 1;
    }
    return 0;
}

/* Splits "V1,V2,..." (at text, column col) into w's values. */
static int sweep_values(struct parser *p, int line, int col, const char *text, struct sweep_def *w)
{
    for (const char *c = text;;) {
        const char *comma = strchr(c, ',');
        size_t len = comma ? (size_t)(comma - c) : strlen(c);
        int vcol = col + (int)(c - text);
        if (len == 0)
            return perr(p, line, vcol, "empty value in a sweep (write V1,V2,...)");
        if (w->nvalues >= SCN_MAX_SWEEP_VALUES)
            return perr(p, line, vcol, "too many values in one sweep (limit %d)", SCN_MAX_SWEEP_VALUES);
        char *v = xmalloc(len + 1);
        memcpy(v, c, len);
        v[len] = 0;
        w->values = xrealloc(w->values, ((size_t)w->nvalues + 1) * sizeof *w->values);
        w->values[w->nvalues++] = v;
        for (uint16_t k = 0; k + 1 < w->nvalues; k++)
            if (!strcmp(w->values[k], v))
                return perr(p, line, vcol, "sweep value '%s' is given twice", q(p, v));
        if (!comma)
            return 0;
        c = comma + 1;
    }
}

/* `sweep POLICY.KEY=V1,V2,...`: one axis of a parameter study. */
int scn__parse_sweep(struct parser *p, const struct line *L)
{
    struct scenario *s = p->s;
    if (need(p, L, 0, 1, "POLICY.KEY=V1,V2,...") || trailing(p, L, 2, "sweep"))
        return -1;
    const struct tok *t = &L->tok[1];
    const char *dot = strchr(t->s, '.'), *eq = strchr(t->s, '=');
    int col = t->col + (t->quoted ? 1 : 0);
    if (!dot || !eq || eq < dot || eq == dot + 1)
        return perr(p, L->no, t->col, "bad sweep '%s' (expected POLICY.KEY=V1,V2,...)", q(p, t->s));
    if (!eq[1])
        return perr(p, L->no, col + (int)(eq - t->s) + 1, "missing values in '%s'", q(p, t->s));
    char pol[SCN_MAX_LINE + 1], key[SCN_MAX_LINE + 1];
    snprintf(pol, sizeof pol, "%.*s", (int)(dot - t->s), t->s);
    snprintf(key, sizeof key, "%.*s", (int)(eq - dot - 1), dot + 1);
    if (scn__check_name(p, L->no, col, pol, "policy"))
        return -1;
    for (uint16_t i = 0; i < s->nsweeps; i++)
        if (!strcmp(s->sweeps[i].policy, pol) && !strcmp(s->sweeps[i].key, key))
            return perr(p, L->no, t->col, "'%s.%s' is swept twice (first at line %d)", q(p, pol), q(p, key),
                        s->sweeps[i].line);
    if (s->nsweeps >= SCN_MAX_SWEEP_AXES)
        return perr(p, L->no, t->col, "too many sweep lines (limit %d)", SCN_MAX_SWEEP_AXES);
    s->sweeps = xgrow(s->sweeps, sizeof *s->sweeps, &p->cap_sweeps, (size_t)s->nsweeps + 1);
    struct sweep_def *w = &s->sweeps[s->nsweeps++];
    memset(w, 0, sizeof *w);
    w->policy = xstrdup(pol);
    w->key = xstrdup(key);
    w->line = L->no;
    w->col = col;
    if (sweep_values(p, L->no, col + (int)(eq - t->s) + 1, eq + 1, w))
        return -1;
    uint64_t points = 1;
    for (uint16_t i = 0; i < s->nsweeps && points <= SCN_MAX_SWEEP_POINTS; i++)
        points *= s->sweeps[i].nvalues;
    if (points > SCN_MAX_SWEEP_POINTS)
        return perr(p, L->no, t->col, "the sweeps have more than %d points in all (the product of their values)",
                    SCN_MAX_SWEEP_POINTS);
    char m[512];
    if (is_registered(p, pol, m, sizeof m))
        return check_sweep_values(p, pol, w);
    scn__add_ref(p, REF_SWEEP, L->no, col, pol, s->nsweeps - 1u, 0);
    return 0;
}

/* --- pass 3 ------------------------------------------------------------------------ */

int scn__resolve_policy_ref(struct parser *p, const struct ref *r)
{
    const struct scenario *s = p->s;
    int v = variant_index(s, r->name);
    if (v < 0)
        return unknown_policy(p, r->line, r->col, r->name);
    if (r->kind == REF_EXPECT_POLICY)
        return 0;
    if (r->kind == REF_SWEEP)
        return check_sweep_values(p, s->variants[v].base, &s->sweeps[r->a]);
    return check_param(p, s->variants[v].base, &s->sets[r->a].kv[r->b]);
}
