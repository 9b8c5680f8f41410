/* scenario_int.h: the scenario parser's private header, shared by its files.
 *
 *   scenario.c          the passes, header directives, faults and triggers,
 *                       reference resolution and scenario-wide checks, the
 *                       entry points;
 *   scenario_lex.c      reading input, the lexer, and the value parsers
 *                       (names, counts, durations, instants, distributions,
 *                       rates, percentages, trailing clauses);
 *   scenario_arrival.c  arrival processes, trace files, publish and source;
 *   scenario_handler.c  workflows and handlers: schedules, scripts, topics;
 *   scenario_policy.c   set, variant and expect: the lines that name
 *                       policies, their parameters and metrics;
 *   scenario_crash.c    where a crash falls in its instant, and the
 *                       crashpoints directive.
 *   scenario_change.c   schedule changes (disable, enable, change), busy
 *                       agents and run deadlines.
 *
 * Not part of the public API: only these files include it.  Functions shared
 * between them carry the scn__ prefix; the few small helpers every file
 * uses (perr, q, need, trailing) are static inline here, so that there is
 * still exactly one place that records an error's location.
 *
 * Key invariant of struct parser: err is set at the first error, and from
 * then on d (file, line, col, message) never changes; every parse function
 * returns -1 after an error and the passes stop.  When every error is
 * wanted (errs != NULL), the driver in scenario.c keeps the error, clears
 * err and goes on with the next line, skipping what depends on the line
 * that failed.  Everything the parser
 * allocates is reachable from s (freed by scenario_free on error) or from
 * the parser itself (freed at the end of scenario_parse_buf_ex). */
#ifndef SIM_SCENARIO_INT_H
#define SIM_SCENARIO_INT_H

#include <stdarg.h>
#include <stdio.h>

#include "sim/scenario.h"
#include "sim/syntax.h"

/* Limits of this parser beyond those in scenario.h. */
#define SCN_MAX_FILE_BYTES  ((size_t)64 << 20)   /* a scenario file */
#define SCN_MAX_TRACE_BYTES ((size_t)256 << 20)  /* one trace file */
#define SCN_MAX_TOKENS      (SCN_MAX_LINE / 2 + 1) /* a token and a separator need 2 bytes */
#define SCN_MAX_COUNT       UINT64_C(200000000)  /* events of one `at`/`burst`, N of a rate */
#define SCN_MAX_EMIT        UINT64_C(1000000)    /* events a producer publishes per run */
#define SCN_MAX_BATCH       UINT64_C(1000000)    /* N of `batch N or D` */
#define SCN_MAX_KEYS        UINT64_C(1000000000) /* `keys N` */
#define SCN_MAX_WORKER      UINT64_C(999999)     /* `crash worker N`: pools go up to a million */
#define SCN_MAX_SOURCES     4096
#define SCN_MAX_VARIANTS    256
#define SCN_MAX_CRASHES     10000                /* crash lines (overlaps are checked pairwise) */
#define SCN_MAX_EXPECT_POLICIES 64               /* names in one expect line */
#define SCN_MAX_PLUGINS     16                   /* plugin lines */
#define SCN_MAX_SWEEP_AXES  8                    /* sweep lines */
#define SCN_MAX_SWEEP_VALUES 256                 /* values of one sweep axis */
#define SCN_MAX_SWEEP_POINTS 4096                /* product of the axes' value counts */
/* Cron fires that the event estimate may count in all; past it, a cron
 * producer is assumed to fire every minute (an upper bound), so that a file
 * with thousands of cron producers cannot make the estimate slow. */
#define CRON_ESTIMATE_BUDGET INT64_C(4000000)

static inline int is_digit(char c) { return c >= '0' && c <= '9'; }
static inline int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* --- lexing ----------------------------------------------------------------- */

struct tok {
    char *s;                       /* NUL-terminated in line.buf; without the quotes */
    int col;                       /* 1-based byte column of its first byte (the quote) */
    int end;                       /* the column just after it */
    int quoted;
};

struct line {
    int no;
    int indented;                  /* starts with a space or a tab */
    int ntok;
    const char *raw;               /* the line in the input, without its line end */
    size_t len;
    struct tok tok[SCN_MAX_TOKENS];
    char buf[SCN_MAX_LINE + 1];
};

/* --- the parser state -------------------------------------------------------- */

/* The header directives, read in pass 1 (names in scenario.c). */
enum { HDR_NAME, HDR_START, HDR_TZ, HDR_HORIZON, HDR_DRAIN, HDR_SEED, HDR_RB, NHDR };

/* A name used before it may be defined, resolved after the whole file was
 * read (pass 3).  a/b say who refers; see the callers of scn__add_ref. */
enum ref_kind {
    REF_SOURCE, REF_TOPIC, REF_FAIL, REF_TRIGGER, REF_EXPECT_FOR, REF_EXPECT_POLICY, REF_SET,
    REF_CHANGE, REF_BUSY, REF_DEADLINE, REF_SWEEP, REF_CRASH_AT
};
struct ref {
    enum ref_kind kind;
    int line, col;
    char *name;                    /* owned */
    uint32_t a, b;
    enum fail_class cls;           /* REF_FAIL: the rule to attach */
    uint32_t ppm;
    enum run_phase phase;
    int cls_col, pct_col;
    uint32_t first_n;              /* REF_FAIL: deterministic attempts */
    uint64_t attempts;
    uint8_t empty;
};

/* A `deadline` line until pass 3 attaches it (scenario_change.c). */
struct deadline_rec {
    int64_t us;
    uint8_t per_phase, cls, cls_given;
};

struct topic_ent;                  /* pass 3's topic table (scenario.c) */

/* A `variant NAME BASE` line as pass 1 saw it: what a variant line whose
 * BASE is another variant is told, wherever that one is defined. */
struct variant_decl {
    char *name, *base;             /* owned */
    int line;
};

struct parser {
    struct scenario *s;
    struct diag *d;
    const struct scenario_refs *ext; /* checks of outside names; never NULL (no_refs: none) */
    const char *path;
    char dir[512];                 /* the scenario's directory, for trace files */
    int err;                       /* an error has been recorded */
    struct line *L;
    int hdr_line[NHDR];            /* where each header directive was; 0: not given */
    int cur_wf;                    /* the open workflow block, -1 none */
    size_t cap_wfs, cap_sources, cap_pubs, cap_crashes, cap_triggers, cap_expects, cap_variants, cap_sets, cap_sweeps;
    size_t cap_h[SCN_MAX_WORKFLOWS], cap_t[SCN_MAX_WORKFLOWS];
    struct ref *refs;
    size_t nrefs, cap_refs;
    struct sched_change *chg;      /* schedule changes until pass 3 attaches them */
    size_t nchg, cap_chg;
    struct deadline_rec *dls;
    size_t ndls, cap_dls, cap_busy;
    uint32_t nparams;              /* key=value pairs of set and variant lines */
    struct variant_decl *vdecls;   /* every variant line's NAME and BASE (pass 1) */
    size_t nvdecls, cap_vdecls;
    char qbuf[6][SCN_QUOTE_MAX];
    int qi;
    int64_t cron_budget;
    /* Pass 3: every topic name of every workflow, sorted, with the number of
     * instances that have it; and the instances that poll each source. */
    struct topic_ent *topics;
    size_t ntopics;
    double *src_inst;
    /* Checking every error (scenario_check_all); errs is NULL otherwise.
     * An error is kept in errs (errline: the scenario line it came from),
     * then err is cleared and the parse goes on with the next line. */
    struct diag *errs;
    int *errline;
    int maxerrs, nerrs, more;
    unsigned char *bad;            /* [SCN_MAX_LINES + 2]: lines that had an error */
    char **poison;                 /* names a failed line would have defined */
    size_t npoison, cap_poison;
    int skip_block;                /* a workflow line failed: its handler lines are skipped */
    int block_bad;                 /* a handler line of the open workflow failed */
};

/* --- messages ------------------------------------------------------------------ */

/* Records the first error at line:col of the current file; always -1. */
static inline int perr(struct parser *p, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline int perr(struct parser *p, int line, int col, const char *fmt, ...)
{
    if (p->err)
        return -1;
    p->err = 1;
    p->d->line = line;
    p->d->col = col;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->d->msg, sizeof p->d->msg, fmt, ap);
    va_end(ap);
    return -1;
}

/* Escaped text for a message; valid until five more calls. */
static inline const char *q(struct parser *p, const char *s)
{
    char *b = p->qbuf[p->qi++ % 6];
    scn_escape(b, sizeof p->qbuf[0], s);
    return b;
}

/* Column just after the last token: where a missing word would go. */
static inline int end_col(const struct line *L) { return L->ntok ? L->tok[L->ntok - 1].end : 1; }

/* Tokens i+1 .. i+k must exist (the arguments of the word at i). */
static inline int need(struct parser *p, const struct line *L, int i, int k, const char *what)
{
    if (i + k < L->ntok)
        return 0;
    return perr(p, L->no, end_col(L), "missing %s after '%s'", what, q(p, L->tok[i].s));
}

/* Nothing may follow token i - 1 of a complete directive. */
static inline int trailing(struct parser *p, const struct line *L, int i, const char *what)
{
    if (i >= L->ntok)
        return 0;
    return perr(p, L->no, L->tok[i].col, "unexpected '%s' after a complete '%s' directive", q(p, L->tok[i].s), what);
}

/* --- input and values (scenario_lex.c) -------------------------------------------------- */

/* Reads a whole regular file of at most max bytes into *out (malloc'd, the
 * caller frees) and *len; or -1 with err. */
int scn__read_file(const char *path, size_t max, char **out, size_t *len, char *err, size_t errlen);
/* Iterates over the lines of buf: *pos is the offset of the next line; 0 at
 * the end.  *start and *llen: the line without its LF or CRLF. */
int scn__next_line(const char *buf, size_t len, size_t *pos, const char **start, size_t *llen);
/* Splits line no (raw, len bytes) into L's tokens. */
int scn__lex_line(struct parser *p, const char *raw, size_t len, int no, struct line *L);
void scn__add_ref(struct parser *p, enum ref_kind kind, int line, int col, const char *name, uint32_t a, uint32_t b);

/* The value parsers: each reads one token (or text at line:col) and reports
 * an error at it. */
int scn__check_name(struct parser *p, int line, int col, const char *s, const char *what);
int scn__all_digits(const char *s);
int scn__parse_count(struct parser *p, int line, const struct tok *t, uint64_t min, uint64_t max, const char *what,
                     uint64_t *v);
int scn__parse_dur(struct parser *p, int line, int col, const char *text, int64_t min_us, const char *what,
                   int64_t *us);
/* Where an instant must fall: before the horizon, before the end of the
 * drain, or anywhere. */
enum lim { LIM_HORIZON, LIM_END, LIM_NONE };
int scn__parse_instant(struct parser *p, int line, const struct tok *t, enum lim lim, int64_t *us);
int scn__parse_dist(struct parser *p, int line, const struct tok *t, struct dist *out);
int scn__parse_rate(struct parser *p, int line, const struct tok *t, uint64_t *count, int64_t *per_us);
int scn__parse_percent(struct parser *p, int line, const struct tok *t, uint32_t *ppm);

/* Trailing clauses of a line, `word value` (or a lone `word` for a flag),
 * in any order, each at most once: one table per kind of line says which
 * words are allowed and how each value is read.  `col` comes back as the
 * column where the clause was seen (0 if absent). */
enum clause_kind { CL_FLAG, CL_INSTANT, CL_DURATION, CL_COUNT };
struct clause {
    const char *word;
    enum clause_kind kind;
    enum lim lim;                  /* CL_INSTANT */
    int64_t min;                   /* CL_DURATION: minimum (0 or 1 us); CL_COUNT: minimum */
    uint64_t max;                  /* CL_COUNT */
    const char *what;              /* how the value is named in messages */
    void *dest;                    /* int64_t * (instant, duration), uint64_t * (count), int * (flag) */
    int col;                       /* out: the column of the word, 0 if absent */
    int vcol;                      /* out: the column of its value */
};
int scn__parse_clauses(struct parser *p, const struct line *L, int i, struct clause *cl, int n, const char *line_what,
                       const char *valid_label, const char *valid);

/* --- directives (pass 2), one file each ----------------------------------------------- */

/* scenario_arrival.c */
int scn__parse_publish(struct parser *p, const struct line *L);
int scn__parse_source(struct parser *p, const struct line *L);
/* scenario_handler.c: a `workflow` line opens a block, its indented
 * handler lines fill it, the next unindented line closes it. */
int scn__parse_workflow(struct parser *p, const struct line *L);
int scn__parse_handler(struct parser *p, const struct line *L);
int scn__close_workflow(struct parser *p);
/* scenario_policy.c */
int scn__parse_set(struct parser *p, const struct line *L);
int scn__parse_variant(struct parser *p, const struct line *L);
int scn__parse_expect(struct parser *p, const struct line *L);
int scn__parse_sweep(struct parser *p, const struct line *L);
/* Pass 3 for REF_EXPECT_POLICY, REF_SET and REF_SWEEP: a variant, or an
 * error. */
int scn__resolve_policy_ref(struct parser *p, const struct ref *r);
/* scenario_crash.c: a crash's position (`first`, `after KIND [N] [of H]`)
 * in line L from token i, for crash number ci.  *rest gets a copy of L
 * without it (malloc'd, the caller frees), or NULL when there is none.
 * scn__crash_pos_check checks the position against the parsed clauses. */
int scn__crash_pos(struct parser *p, const struct line *L, int i, struct crash_def *c, uint32_t ci,
                   struct line **rest);
int scn__crash_pos_check(struct parser *p, const struct line *L, const struct crash_def *c);
/* The `crashpoints` directive. */
int scn__parse_crashpoints(struct parser *p, const struct line *L);
/* scenario_change.c */
int scn__parse_toggle(struct parser *p, const struct line *L, int enable);
int scn__parse_change(struct parser *p, const struct line *L);
int scn__parse_busy(struct parser *p, const struct line *L);
int scn__parse_deadline(struct parser *p, const struct line *L);
/* Pass 3 for REF_CHANGE and REF_DEADLINE, whose handler is wf.h. */
int scn__resolve_change(struct parser *p, const struct ref *r, int wf, int h);

#endif
