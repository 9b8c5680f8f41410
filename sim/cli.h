/* cli.h: the simrun command line; private to sim/cli*.c, sim/main.c and
 * its test.
 *
 * Each command declares its options as one table (git's parse-options is
 * the model): a row per option with its short and long name, the name of
 * its argument, its help and how the value is stored.  The same table
 * parses argv (cli_parse) and prints `simrun CMD --help` (cli_print_help),
 * so an option cannot be accepted without being documented there, and
 * tests/test_cli.c checks that each one is in the docs too.
 *
 *     sim/cli.c         the parser, the help, the registry of commands, cli_main
 *     sim/cli_common.c  what run and check share: scenarios, targets, the store
 *     sim/cli_expect.c  evaluating expect lines, for check and for run --db
 *     sim/cli_run.c     simrun run
 *     sim/cli_plan.c    the job list of simrun run: targets, parameter
 *                       studies (--sweep), shards and --resume
 *     sim/cli_check.c   simrun check
 *     sim/cli_crashpoints.c  simrun crashpoints
 *     sim/cli_db.c      simrun report, diff and merge (results databases)
 *     sim/cli_info.c    simrun validate, policies and version
 *     sim/cli_merge.c   simrun merge
 *     sim/cli_help.c    simrun help: a command's help, the manual page and
 *                       the bash completion, from these tables
 *     sim/cli_probe.c   one simulation in a child process, for shrink and swarm
 *     sim/cli_shrink.c  simrun shrink
 *     sim/cli_swarm.c   simrun swarm
 *
 * Spelling: "-p VALUE" and "--policies VALUE" (the value is the next word);
 * options and arguments may come in any order; "-" alone is an argument.
 * -h and --help anywhere print the command's help.  Exit codes: 0 success,
 * 1 a check or a diff failed, 2 bad usage or bad input, 3 internal error,
 * 4 cannot write results (CLI_EXIT_WRITE). */
#ifndef SIM_CLI_H
#define SIM_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/policy.h"
#include "sim/scenario.h"

#define SIMRUN_VERSION "0.1.0"
#define CLI_MAX_SCENARIOS 1024
#define CLI_MAX_SETS 64
#define CLI_MAX_SEEDS 100000
#define CLI_MAX_LABELS 64
#define CLI_MAX_SWEEPS 8               /* --sweep options */
#define CLI_MAX_COLS 4096              /* columns of one scenario: labels x parameter-study points */
#define CLI_MAX_JOBS 10000000          /* runs of one `simrun run` (scenarios x columns x seeds) */
#define CLI_MAX_SHARDS 100000

extern const char *const cli_prog; /* "simrun", the first word of every message */
/* Set: resolving a target prints no warning for a value that a built-in
 * variant's grammar reads with a fallback (swarm resolves thousands). */
extern int cli_quiet_fallbacks;
/* Set (by validate): the scenario errors found after the parse (the memory
 * estimate, a policy that refuses the scenario's settings) are followed by
 * their line and a caret, as validate prints the parser's. */
extern int cli_excerpts;
/* Prints line `no` of file with a caret under column col (1-based bytes):
 *    12 |   producer p evry 5m
 *       |              ^
 * Bytes that are not printable ASCII or UTF-8 are shown as \xNN (a hostile
 * file cannot garble the terminal); the caret follows what is shown.
 * Nothing for standard input (CLI_STDIN_PATH) or a line it cannot read. */
void cli_print_excerpt(const char *file, int no, int col);

/* The exit status when results cannot be written: the database is
 * read-only, locked by another process past the wait, on a full disk or
 * over a file-size limit, or a --trace or --junit file fails.  Runs
 * written before the fault stay, each whole. */
#define CLI_EXIT_WRITE 4
/* Prints "simrun: error: cannot write results: " and why; returns
 * CLI_EXIT_WRITE. */
int cli_write_error(const char *why);

/* --- option tables --------------------------------------------------------------------------- */

enum cli_opt_type {
    CLI_OPT_FLAG,                  /* no argument; sets an int to 1 */
    CLI_OPT_STRING,                /* stores its argument, a const char * into argv */
    CLI_OPT_CALLBACK,              /* hands its argument (NULL without one) to cb */
};

/* Checks and stores an option's argument in opts (the command's options
 * struct).  0, or the exit status (2) after printing the error. */
typedef int (*cli_opt_fn)(void *opts, const char *arg);

struct cli_option {
    char short_name;               /* 'p' for -p; 0: none */
    const char *long_name;         /* "policies" for --policies; NULL: none */
    const char *argh;              /* the argument's name in the help ("LIST"); NULL: takes none */
    const char *help;              /* a line, or several separated by '\n' */
    enum cli_opt_type type;
    size_t offset;                 /* FLAG, STRING: the field in the options struct */
    cli_opt_fn cb;                 /* CALLBACK */
};

#define CLI_FLAG(S, L, TYPE, FIELD, HELP) {(S), (L), NULL, (HELP), CLI_OPT_FLAG, offsetof(TYPE, FIELD), NULL}
#define CLI_STRING(S, L, ARGH, TYPE, FIELD, HELP) \
    {(S), (L), (ARGH), (HELP), CLI_OPT_STRING, offsetof(TYPE, FIELD), NULL}
#define CLI_CALLBACK(S, L, ARGH, CB, HELP) {(S), (L), (ARGH), (HELP), CLI_OPT_CALLBACK, 0, (CB)}
#define CLI_END {0, NULL, NULL, NULL, CLI_OPT_FLAG, 0, NULL}

/* --- commands ---------------------------------------------------------------------------------- */

struct cli_command {
    const char *name;              /* "run" */
    const char *args;              /* its arguments in `simrun --help` ("SCENARIO...") */
    const char *usage;             /* what follows "usage: simrun NAME" in its help */
    const char *summary;           /* its line in `simrun --help` */
    const char *description;       /* the paragraphs of its help before the options */
    /* Its options, ending with CLI_END.  NULL for a command without any:
     * then every word (but -h, --help) is an argument. */
    const struct cli_option *options;
    /* Takes an argument that is not an option; 0, or the exit status after
     * printing the error.  NULL: the command takes none. */
    cli_opt_fn arg;
    int (*run)(int argc, char **argv);
};

/* Every command, in the order of `simrun --help`, ending with NULL. */
extern const struct cli_command *const cli_commands[];

extern const struct cli_command cli_cmd_run, cli_cmd_check, cli_cmd_report, cli_cmd_diff, cli_cmd_validate,
    cli_cmd_policies, cli_cmd_version;
extern const struct cli_command cli_cmd_crashpoints;
extern const struct cli_command cli_cmd_shrink, cli_cmd_swarm;
extern const struct cli_command cli_cmd_help, cli_cmd_merge;

/* Runs simrun with argv as main received it; returns the exit status. */
int cli_main(int argc, char **argv);
/* Parses a command's words (argv after the command's name) into opts with
 * its table.  0, or the exit status (2) after printing the first error. */
int cli_parse(const struct cli_command *c, int argc, char **argv, void *opts);
/* `simrun NAME --help`, and `simrun --help`. */
void cli_print_help(const struct cli_command *c, FILE *f);
void cli_print_main_help(FILE *f);
/* Prints "simrun: error: " fmt (with arg) and a pointer to --help; returns 2. */
int cli_usage_error(const char *fmt, const char *arg);

/* --- shared by the commands (cli_common.c) ------------------------------------------------------- */

struct store;
struct checker_result;

/* A --set POLICY.KEY=VALUE. */
struct cli_set {
    char policy[SCN_MAX_NAME];
    char key[64];
    char value[128];
};

/* A --sweep POLICY.KEY=V1,V2,...: one axis of a parameter study. */
struct cli_sweep {
    char policy[SCN_MAX_NAME];
    char key[64];
    char values[2048];             /* V1,V2,... as given */
};

/* The options of run and check (check uses a few of them). */
struct cli_opts {
    const char *paths[CLI_MAX_SCENARIOS];
    int npaths;
    const char *policies;
    int have_seed;
    uint64_t seed_lo, seed_hi;
    struct cli_set sets[CLI_MAX_SETS];
    int nsets;
    const char *db;
    int store_trace;
    const char *trace;
    const char *format;            /* table, markdown, csv or json */
    const char *metrics;           /* --metrics LIST, NULL: every metric */
    const char *junit;
    uint64_t max_events;
    uint64_t max_memory;           /* --max-memory in bytes, 0 = not given (the default budget) */
    int quiet;
    int jobs;                      /* -j: worker processes, 0 = not given (the number of cores) */
    struct cli_sweep sweeps[CLI_MAX_SWEEPS];
    int nsweeps;
    uint64_t shard_k, shard_n;     /* --shard K/N; 0 0: every job */
    int resume;                    /* --resume: skip the runs already in --db */
};

/* -p LIST, as every command reads it: the names between commas, blanks
 * around each dropped and empty ones skipped ("oracle, poll" is
 * "oracle,poll"), into names[0..*n), which point into *buf (a copy of list
 * that the caller frees, whatever the result).  Refuses, as a usage error
 * (printed; 2), a list that names nothing, one that names more than max, and
 * a name given twice (each label runs once); 0 otherwise. */
int cli_policy_names(const char *list, char **buf, const char **names, int max, int *n);
/* A comma list of names (report's --scenario and --policy) as -p is read:
 * the same names, blanks around each dropped and empty ones left out,
 * joined by single commas; "" when it names nothing.  The caller frees it. */
char *cli_name_list(const char *list);
/* -p LIST (of any command, NULL when not given) checked as cli_policy_names
 * reads it with max CLI_MAX_LABELS, before anything runs or is written. */
int cli_check_policy_list(const char *list);

/* Option and argument callbacks on a struct cli_opts. */
int cli_opt_scenario(void *opts, const char *path);
int cli_opt_seed(void *opts, const char *arg);
int cli_opt_seeds(void *opts, const char *arg);
int cli_opt_set(void *opts, const char *arg);
int cli_opt_jobs(void *opts, const char *arg);     /* -j N: 1..256 worker processes */
/* The worker processes of a sweep: -j, else the number of cores. */
int cli_jobs(const struct cli_opts *o);
/* --policy FILE: loads a policy plugin now (sim/plugin.h), so that the
 * scenarios read after the options can name it; opts is not used. */
int cli_opt_plugin(void *opts, const char *path);

/* A decimal integer without sign; 0, or -1 when s is not one. */
int cli_parse_u64(const char *s, uint64_t *out);

struct sim_result;

/* --max-memory SIZE (run, check, validate): bytes, or a number with K, M, G
 * or T (powers of 1024; "GiB" and "GB" read the same), at least 1M. */
int cli_opt_max_memory(void *opts, const char *arg);
#define CLI_MAX_MEMORY_OPTION                                                                          \
    CLI_CALLBACK(0, "max-memory", "SIZE", cli_opt_max_memory,                                          \
                 "memory budget of each simulation, e.g. 512M or 8G (default:\n"                       \
                 "half of this machine's memory); a scenario that needs more\n"                       \
                 "is refused, a run that reaches it stops (exit 2)")
/* The budget o asks for: --max-memory, else sim_memory_default(). */
uint64_t cli_max_memory(const struct cli_opts *o);
/* Refuses a scenario whose estimate (sim_memory_estimate) is over budget:
 * prints "path:line:1: error: ..." and returns 2; else 0. */
int cli_check_memory(const struct scenario *s, uint64_t budget);
/* After a run: one that reached the memory budget is an error naming the
 * line that drove it (printed); returns 2 for it, else 0. */
int cli_memory_stop(const struct scenario *s, const char *label, uint64_t seed, const struct sim_result *res);

/* Parses one scenario file (scenario_parse); 0, or -1 with d.  The one
 * place the command line parses a scenario.  "-" is standard input, read
 * once (at most CLI_STDIN_MAX bytes), whose messages and tables name it
 * CLI_STDIN_PATH; its trace files are relative to the current folder. */
#define CLI_STDIN_PATH "<stdin>"
#define CLI_STDIN_MAX ((size_t)64 << 20)
int cli_load_scenario(const char *path, struct scenario **out, struct diag *d);
/* Parses every scenario of o; on the first error prints it, frees the
 * others and returns 2. */
int cli_load_all(const struct cli_opts *o, struct scenario **scn);
/* The policies a scenario configures (its set and variant lines), resolved
 * as a run resolves them, so that a combination of parameters a policy
 * refuses, or a schedule a variant's system rejects, is an error whichever
 * policies run: 0, or -1 with the error printed.  cli_load_all and
 * validate call it. */
int cli_check_targets(const struct scenario *s);
void cli_free_all(struct scenario **scn, int n);
/* A results database path (what: how the command line names it, "--db",
 * "OUT.db", ...) that exists and is no regular file (a folder, a device, a
 * pipe) is refused before anything is written: sqlite would leave a
 * PATH-journal beside it or fail half-way.  0, or 2 with the error printed. */
int cli_check_db_path(const char *what, const char *path);
/* Opens the results database when db is not NULL; 0, or after printing
 * why 2 (not a results database of this version) or CLI_EXIT_WRITE. */
int cli_open_store(const char *db, struct store **st);

/* A policy (or variant) with its resolved parameters. */
struct cli_target {
    char label[SCN_MAX_NAME + 8];
    const struct policy_ops *ops;
    struct params ps;
    char params_text[512];
    int err_line, err_col;         /* where a -2 of cli_resolve_target points */
};

/* Resolves a label (registered policy, built-in variant, or variant of s)
 * into a target: defaults, then the scenario's `set` lines for the base
 * policy, then a built-in variant's settings and its `set` lines, then
 * those for the variant, then the variant's own pairs, then --set for the
 * base and for the label; values are read with the built-in variant's
 * configuration grammar (sim/grammar.h), and so are the scenario's
 * schedules, whose fallbacks are warned about on stderr.  Returns 0; -1
 * with msg; or -2 with msg a whole "file:line:col: error: ..." line. */
int cli_resolve_target(const struct scenario *s, const char *label, const struct cli_set *sets, int nsets,
                       struct cli_target *t, char *msg, size_t mn);
/* Every label of a scenario: the registered policies, then its variants,
 * then the built-in variants its expect lines name. */
int cli_all_labels(const struct scenario *s, const char **out, int max);
/* Checks that every --set names a registered policy (or a variant of one
 * of the scenarios) and a valid KEY=VALUE for it; 0, or 2 after printing
 * the error. */
int cli_check_sets(const struct cli_opts *o, struct scenario **scn);

/* --- expect lines (cli_expect.c) ----------------------------------------------------------------- */

struct sim_result;
struct expect_outcome;

/* Whether expect line e names label ('*' names every label). */
int cli_expect_names(const struct expect_def *e, const char *label);
/* The template index of e's `for WF.HANDLER`, -1 for the whole scenario. */
int cli_expect_tmpl(const struct scenario *s, const struct expect_def *e);
/* Whether v op want holds (never for a NaN v: no value). */
int cli_expect_compare(double v, enum expect_op op, double want);
/* The value of e's metric in one run (durations in us, +INFINITY when
 * censored); NaN when the run has none. */
double cli_expect_measure(const struct scenario *s, const struct expect_def *e, const struct sim_result *res);
/* e's aggregate (mean, min, max, pNN) of the seeds' values v[0..n), NaN
 * values skipped; NaN for EXPECT_EACH or when no value is left. */
double cli_expect_aggregate(const struct expect_def *e, const double *v, size_t n);
/* "each", "mean", "min", "max", "p95" into b. */
const char *cli_expect_agg_name(const struct expect_def *e, char *b, size_t n);
/* The outcomes to store with the run of seed index si (of nseeds) of the
 * target label: every line naming it that holds per seed, judged on this
 * seed, and in the last seed's run every aggregate line, judged over all
 * the seeds.  vals[e * nseeds + k] is line e's value in seed index k (only
 * k <= si are read).  out has room for s->nexpects; returns how many. */
uint32_t cli_expect_outcomes(const struct scenario *s, const char *label, const double *vals, size_t si,
                             size_t nseeds, struct expect_outcome *out);
/* The line of an `expect LABEL livelock == true` of s (the run is meant to
 * be stopped as a livelock: a deliberately broken variant), or 0. */
int cli_expect_livelock_line(const struct scenario *s, const char *label);

/* --- the job list of simrun run (cli_plan.c) --------------------------------------------------- */

/* A column of a scenario's table: a target at one parameter-study point. */
struct cli_col {
    struct cli_target t;
    char point[256];               /* the swept keys' values, "period=10s,x=2"; "" when not swept */
    char title[SCN_MAX_NAME + 272]; /* "poll[period=10s]", or the label */
};

/* Every run of a `simrun run`: for scenario k (in argument order), its
 * columns c, and its seeds lo[k] .. lo[k] + nseeds[k] - 1; job number
 * first[k] + c * nseeds[k] + (seed - lo[k]) in the full list, the order of
 * a serial run.  The selected jobs (a shard, those not yet stored) are a
 * subsequence of it. */
struct cli_plan {
    int nscn;
    struct cli_col **cols;         /* [nscn][ncols[k]] */
    int *ncols;
    uint64_t *lo, *nseeds;
    size_t *first;                 /* [nscn + 1] */
    size_t nfull;                  /* jobs in the full list */
    size_t *sel;                   /* [nsel] selected jobs, ascending; NULL: every job */
    size_t nsel;
    size_t stored;                 /* jobs skipped because --resume found them stored */
    char hash[17];                 /* the full list's identity (run_plan.plan) */
};

int cli_opt_sweep(void *opts, const char *arg);
int cli_opt_shard(void *opts, const char *arg);
/* Resolves the columns of every scenario (-p or every label; the
 * scenario's sweep lines and --sweep) and numbers the full list.  0, or 2
 * after printing the error. */
int cli_plan_make(const struct cli_opts *o, struct scenario **scn, struct cli_plan *pl);
/* Selects the jobs this process runs: the --shard slice (job i is in shard
 * i % N + 1), without those already in st with --resume.  0, or 2 after
 * printing the error. */
int cli_plan_select(struct cli_plan *pl, const struct cli_opts *o, struct scenario **scn, struct store *st);
/* Job number `full` of the full list: its scenario, column and seed. */
void cli_plan_at(const struct cli_plan *pl, size_t full, int *k, int *c, uint64_t *seed);
void cli_plan_free(struct cli_plan *pl);

/* simrun check's part for `expect POLICIES crashpoints METRIC OP VALUE`
 * (sim/cli_crashpoints.c).  A line holds when it holds at every crash
 * point of the exploration of s under t (the scenario's crashpoints line
 * sets it), in every seed lo .. lo + n - 1; the explorations are made once
 * per target and seed and kept in the cache until it is freed.  Returns 1
 * when e holds, 0 when it fails; what gets what was measured (a failure
 * names the first failing point and the crash line that reproduces it),
 * *v the value (NaN when an exploration could not be made: then what says
 * why and the line fails). */
struct cli_cp_cache;
struct cli_cp_cache *cli_cp_cache_new(void);
void cli_cp_cache_free(struct cli_cp_cache *c);
int cli_check_crashpoint_line(struct cli_cp_cache *c, const struct scenario *s, const struct cli_target *t,
                              const struct expect_def *e, uint64_t lo, uint64_t n, double *v, char *what,
                              size_t wn);
/* --- one simulation in a child process (cli_probe.c), for shrink and swarm ------------------------- */

#define CLI_PROBE_METRICS 64
#define CLI_PROBE_EXPECTS 128

/* What became of one simulation.  crashed: it did not complete — the
 * process ended with exit_status (3: an internal error; a sanitizer's
 * status) or by signal, and crash_msg says why with its varying numbers
 * blanked (two runs of one failure give one text); the rest is then 0.
 * Otherwise the sim_result in brief. */
struct cli_probe {
    int crashed, exit_status, signal;
    char crash_msg[256];
    int status;                    /* enum sim_status */
    char status_msg[256];
    uint64_t fingerprint, events;
    double metric[CLI_PROBE_METRICS]; /* whole scenario, in metric_table order */
    uint32_t ncrashes, crash_unrestarted;
    uint64_t crash_lost, crash_double_effects, crash_stuck; /* summed over crash records */
    uint32_t nexpects;             /* the first CLI_PROBE_EXPECTS expect lines, in file order */
    struct {
        uint8_t applies, ok;       /* it names the target; it holds */
        double measured;
    } expect[CLI_PROBE_EXPECTS];
};

/* Simulates s under t with seed in a forked child (max_events 0: the
 * default; timeout_s > 0: a wall-clock limit, reported as a crash).
 * 0 with *out, or -1 with msg when no child could be started. */
int cli_probe(const struct scenario *s, const struct cli_target *t, uint64_t seed, uint64_t max_events, int timeout_s,
              struct cli_probe *out, char *msg, size_t mn);
/* Whether an expect line names the label (or '*'). */
int cli_expect_applies(const struct expect_def *e, const char *label);

/* --- a failure to keep while shrinking (cli_shrink.c) --------------------------------------------- */

enum cli_failure_kind { CLI_FAIL_CRASH, CLI_FAIL_LIVELOCK, CLI_FAIL_EXPECT };
const char *cli_failure_kind_name(enum cli_failure_kind k);

/* A failure of one policy label at one seed: the process ends with reason
 * (crash), a livelock with that message (its digits removed), or the expect
 * line whose text (shrink_norm form) is expect fails with the run status
 * status. */
struct cli_failure {
    enum cli_failure_kind kind;
    char label[SCN_MAX_NAME + 8];
    uint64_t seed;
    const char *path;              /* candidates are parsed as if they were this file */
    uint64_t max_events;           /* 0: the engine's default */
    int timeout_s;
    int status;                    /* enum sim_status of the failing run */
    uint64_t events;               /* events of the failing run */
    char expect[4200];
    double measured;
    char reason[256];
    char status_msg[256];
    uint64_t unparsed;             /* candidates the parser (or the label) refused */
    FILE *info;                    /* where the steps are printed */
};

/* A shrink_test_fn (sim/shrink.h) for a struct cli_failure: parses the
 * candidate and simulates it in a child under the failure's label and
 * seed; 1 if it fails the same way. */
int cli_failure_test(void *ctx, const char *text, size_t len);
/* "under poll, seed 7: 'expect poll lost == 0' fails (measured 3)". */
void cli_failure_describe(const struct cli_failure *f, char *b, size_t n);

#endif
