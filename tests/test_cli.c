/* test_cli.c: the command line's option tables (sim/cli.h).
 *
 * - every option of every command's table appears in that command's
 *   --help, in that command's section of docs/cli.md and, spelled the
 *   same, in README.md or a docs/ page;
 * - `simrun CMD --help` and `-h` exit 0 for every command, and
 *   `simrun --help` lists every command;
 * - the tables are sound: no spelling twice, none that shadows -h/--help,
 *   a help text for each, an argument name exactly where a value is taken;
 * - the parser stores what the tables say, takes "-" as an argument and
 *   rejects unknown options and missing values with exit status 2.
 *
 * Run from the top of the source tree (as tests/run_tests.sh does), where
 * README.md and docs/ are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reports/report.h"
#include "sim/cli.h"
#include "sim/refs.h"
#include "tests/expect.h"

/* --- helpers ----------------------------------------------------------------------------------- */

static int nopts(const struct cli_option *t)
{
    int n = 0;
    while (t && (t[n].short_name || t[n].long_name))
        n++;
    return n;
}

/* The spellings of an option: "-p" and "--policies" (either may be empty). */
static void spellings(const struct cli_option *o, char *sh, char *lo, size_t n)
{
    sh[0] = lo[0] = 0;
    if (o->short_name)
        snprintf(sh, n, "-%c", o->short_name);
    if (o->long_name)
        snprintf(lo, n, "--%s", o->long_name);
}

static int word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* Whether text has w as a whole word: not inside a longer option or word
 * ("--seed" is not found in "--seeds", "-p" not in "-pq"). */
static int has_word(const char *text, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = strstr(text, w); p; p = strstr(p + 1, w))
        if ((p == text || !word_char(p[-1])) && !word_char(p[n]))
            return 1;
    return 0;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, got, m);
    fclose(f);
    fclose(m);
    return buf;
}

/* README.md and every .md page in docs/, one after the other. */
static char *read_docs(void)
{
    char *all = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&all, &len);
    char *readme = read_file("README.md");
    if (!readme)
        fail_msg("README.md not found: run from the top of the source tree");
    fputs(readme, m);
    free(readme);
    DIR *d = opendir("docs");
    if (!d)
        fail_msg("docs/ not found: run from the top of the source tree");
    int ndocs = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 3, ".md"))
            continue;
        char path[512];
        snprintf(path, sizeof path, "docs/%s", e->d_name);
        char *text = read_file(path);
        if (text) {
            fprintf(m, "\n%s", text);
            free(text);
            ndocs++;
        }
    }
    closedir(d);
    fclose(m);
    if (ndocs < 5)
        fail_msg("only %d files in docs/", ndocs);
    return all;
}

static char *help_of(const struct cli_command *c)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    cli_print_help(c, m);
    fclose(m);
    return buf;
}

/* Runs cli_main with argv, its output thrown away; the exit status. */
static int run_quietly(int argc, char **argv)
{
    fflush(stdout);
    fflush(stderr);
    int out = dup(1), err = dup(2), null = open("/dev/null", O_WRONLY);
    assert_true(out >= 0 && err >= 0 && null >= 0);
    dup2(null, 1);
    dup2(null, 2);
    close(null);
    int rc = cli_main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(out, 1);
    dup2(err, 2);
    close(out);
    close(err);
    return rc;
}

/* --- the tables against the help and the docs ------------------------------------------------------ */

static void test_every_option_in_help(void **state)
{
    for (int i = 0; cli_commands[i]; i++) {
        const struct cli_command *c = cli_commands[i];
        char *help = help_of(c);
        char usage[64];
        snprintf(usage, sizeof usage, "usage: simrun %s", c->name);
        EXPECT_HAS(help, usage, c->name);
        EXPECT_HAS(help, "-h, --help", c->name);
        for (int k = 0; k < nopts(c->options); k++) {
            const struct cli_option *o = &c->options[k];
            char sh[8], lo[64], ctx[128];
            spellings(o, sh, lo, sizeof lo);
            snprintf(ctx, sizeof ctx, "simrun %s --help, option %s%s", c->name, sh[0] ? sh : "", lo);
            if (sh[0] && !has_word(help, sh))
                fail_msg("%s: not in the help:\n%s", ctx, help);
            if (lo[0] && !has_word(help, lo))
                fail_msg("%s: not in the help:\n%s", ctx, help);
            /* Its row: the spelling with its argument, then its help's first line. */
            char first[256];
            snprintf(first, sizeof first, "%.*s", (int)strcspn(o->help, "\n"), o->help);
            EXPECT_HAS(help, first, ctx);
            if (o->argh) {
                char with_arg[128];
                snprintf(with_arg, sizeof with_arg, "%s %s", lo[0] ? lo : sh, o->argh);
                EXPECT_HAS(help, with_arg, ctx);
            }
        }
        free(help);
    }
}

/* The section of docs/cli.md that documents command name: from its
 * heading ("## `simrun NAME") to the next heading of its level, NUL-cut in
 * place; NULL if it has none. */
static char *cli_md_section(char *md, const char *name)
{
    char head[80];
    snprintf(head, sizeof head, "\n## `simrun %s", name);
    size_t n = strlen(head);
    char *at = md;
    while ((at = strstr(at, head)) != NULL && at[n] != ' ' && at[n] != '`')
        at += n; /* "## `simrun run" is not "## `simrun runner" */
    if (!at)
        return NULL;
    at += 1;
    char *end = strstr(at, "\n## ");
    if (end)
        *end = 0;
    return at;
}

/* Every option of every command is in that command's section of
 * docs/cli.md (the page that says it is the whole reference). */
static void test_every_option_in_cli_md(void **state)
{
    (void)state;
    for (int i = 0; cli_commands[i]; i++) {
        const struct cli_command *c = cli_commands[i];
        char *md = read_file("docs/cli.md");
        if (!md)
            fail_msg("docs/cli.md not found: run from the top of the source tree");
        const char *sec = cli_md_section(md, c->name);
        if (!sec)
            fail_msg("docs/cli.md has no section '## `simrun %s'", c->name);
        for (int k = 0; k < nopts(c->options); k++) {
            char sh[8], lo[64];
            spellings(&c->options[k], sh, lo, sizeof lo);
            if (lo[0] && !has_word(sec, lo))
                fail_msg("option %s of 'simrun %s' is not in its section of docs/cli.md", lo, c->name);
            if (!lo[0] && sh[0] && !has_word(sec, sh))
                fail_msg("option %s of 'simrun %s' is not in its section of docs/cli.md", sh, c->name);
        }
        free(md);
    }
}

static void test_every_option_documented(void **state)
{
    char *docs = read_docs();
    for (int i = 0; cli_commands[i]; i++) {
        const struct cli_command *c = cli_commands[i];
        char cmd[64];
        snprintf(cmd, sizeof cmd, "simrun %s", c->name);
        if (!has_word(docs, cmd))
            fail_msg("'%s' is not in README.md or docs/", cmd);
        for (int k = 0; k < nopts(c->options); k++) {
            char sh[8], lo[64];
            spellings(&c->options[k], sh, lo, sizeof lo);
            if (sh[0] && !has_word(docs, sh))
                fail_msg("option %s of 'simrun %s' is not in README.md or docs/", sh, c->name);
            if (lo[0] && !has_word(docs, lo))
                fail_msg("option %s of 'simrun %s' is not in README.md or docs/", lo, c->name);
        }
    }
    free(docs);
}

static void test_help_exits_zero(void **state)
{
    for (int i = 0; cli_commands[i]; i++) {
        const char *name = cli_commands[i]->name;
        char *a1[] = {"simrun", (char *)name, "--help", NULL};
        char *a2[] = {"simrun", (char *)name, "-h", NULL};
        char *a3[] = {"simrun", (char *)name, "--frob", "-h", NULL}; /* help wins, anywhere */
        EXPECT_I64(run_quietly(3, a1), 0, name);
        EXPECT_I64(run_quietly(3, a2), 0, name);
        EXPECT_I64(run_quietly(4, a3), 0, name);
    }
    char *top[] = {"simrun", "--help", NULL};
    EXPECT_I64(run_quietly(2, top), 0, "simrun --help");
    char *none[] = {"simrun", NULL};
    EXPECT_I64(run_quietly(1, none), 2, "simrun alone");
    char *unknown[] = {"simrun", "frobnicate", NULL};
    EXPECT_I64(run_quietly(2, unknown), 2, "simrun frobnicate");
}

static void test_main_help_lists_every_command(void **state)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    cli_print_main_help(m);
    fclose(m);
    int n = 0;
    for (int i = 0; cli_commands[i]; i++, n++) {
        char row[64];
        snprintf(row, sizeof row, "\n  %s ", cli_commands[i]->name);
        EXPECT_HAS(buf, row, "simrun --help");
        EXPECT_HAS(buf, cli_commands[i]->summary, cli_commands[i]->name);
    }
    EXPECT_I64(n, 12, "commands");
    free(buf);
}

static void test_tables_are_sound(void **state)
{
    for (int i = 0; cli_commands[i]; i++) {
        const struct cli_command *c = cli_commands[i];
        assert_non_null(c->run);
        assert_non_null(c->summary);
        assert_non_null(c->usage);
        int n = nopts(c->options);
        for (int k = 0; k < n; k++) {
            const struct cli_option *o = &c->options[k];
            char ctx[128];
            snprintf(ctx, sizeof ctx, "simrun %s, option %c/%s", c->name, o->short_name ? o->short_name : ' ',
                     o->long_name ? o->long_name : "");
            if (o->short_name == 'h' || (o->long_name && !strcmp(o->long_name, "help")))
                fail_msg("%s: shadows -h/--help", ctx);
            if (!o->help || !o->help[0] || o->help[strlen(o->help) - 1] == '\n')
                fail_msg("%s: no help, or a help ending in a newline", ctx);
            if ((o->type == CLI_OPT_FLAG) != (o->argh == NULL))
                fail_msg("%s: a flag takes no argument, every other option one", ctx);
            if (o->type == CLI_OPT_CALLBACK && !o->cb)
                fail_msg("%s: no callback", ctx);
            for (int j = 0; j < k; j++) {
                const struct cli_option *p = &c->options[j];
                if ((o->short_name && o->short_name == p->short_name) ||
                    (o->long_name && p->long_name && !strcmp(o->long_name, p->long_name)))
                    fail_msg("%s: spelled like another option", ctx);
            }
        }
        for (int j = 0; j < i; j++)
            if (!strcmp(c->name, cli_commands[j]->name))
                fail_msg("command %s twice", c->name);
    }
}

/* --- the parser --------------------------------------------------------------------------------- */

static void test_parse_run(void **state)
{
    char *argv[] = {"a.scn", "-p", "oracle,poll", "--seeds", "2..5", "-j", "3", "--store-trace", "-",
                    "--set", "poll.period=5m", "--db", "-x.db", "--format", "csv", "--max-events", "99", "b.scn"};
    struct cli_opts o = {.format = "table"};
    EXPECT_I64(cli_parse(&cli_cmd_run, (int)(sizeof argv / sizeof argv[0]), argv, &o), 0, "parse");
    EXPECT_I64(o.npaths, 3, "scenarios");
    EXPECT_STR(o.paths[0], "a.scn", "first");
    EXPECT_STR(o.paths[1], "-", "'-' is an argument");
    EXPECT_STR(o.paths[2], "b.scn", "last");
    EXPECT_STR(o.policies, "oracle,poll", "-p");
    EXPECT_U64(o.seed_lo, 2, "--seeds");
    EXPECT_U64(o.seed_hi, 5, "--seeds");
    EXPECT_I64(o.have_seed, 1, "--seeds");
    EXPECT_I64(o.jobs, 3, "-j");
    EXPECT_I64(o.store_trace, 1, "--store-trace");
    EXPECT_I64(o.nsets, 1, "--set");
    EXPECT_STR(o.sets[0].policy, "poll", "--set");
    EXPECT_STR(o.sets[0].key, "period", "--set");
    EXPECT_STR(o.sets[0].value, "5m", "--set");
    EXPECT_STR(o.db, "-x.db", "a value may start with '-'");
    EXPECT_STR(o.format, "csv", "--format");
    EXPECT_U64(o.max_events, 99, "--max-events");
}

static void test_parse_errors(void **state)
{
    struct cli_opts o = {.format = "table"};
    char *unknown[] = {"a.scn", "--frob"};
    EXPECT_I64(cli_parse(&cli_cmd_run, 2, unknown, &o), 2, "unknown option");
    char *other[] = {"a.scn", "--junit", "x.xml"}; /* check's, not run's */
    EXPECT_I64(cli_parse(&cli_cmd_run, 3, other, &o), 2, "option of another command");
    char *missing[] = {"a.scn", "--seed"};
    EXPECT_I64(cli_parse(&cli_cmd_run, 2, missing, &o), 2, "missing value");
    char *eq[] = {"--seed=3"};
    EXPECT_I64(cli_parse(&cli_cmd_run, 1, eq, &o), 2, "no --name=value form");
    char *bad[] = {"--seeds", "5..2"};
    EXPECT_I64(cli_parse(&cli_cmd_run, 2, bad, &o), 2, "bad value");
    char *j[] = {"-j", "257"};
    EXPECT_I64(cli_parse(&cli_cmd_run, 2, j, &o), 2, "-j out of range");
    char *pol[] = {"--frob"};
    EXPECT_I64(cli_parse(&cli_cmd_policies, 1, pol, NULL), 2, "policies takes no arguments");
    char *val[] = {"-x"};
    EXPECT_I64(cli_parse(&cli_cmd_validate, 1, val, &o), 2, "validate takes no options");
    struct report_opts ro = {0};
    char *rep[] = {"--out", "dir", "--db", "r.db"};
    EXPECT_I64(cli_parse(&cli_cmd_report, 4, rep, &ro), 0, "report");
    EXPECT_STR(ro.out_dir, "dir", "--out");
    EXPECT_STR(ro.db, "r.db", "--db");
    char *rep2[] = {"r.db"};
    EXPECT_I64(cli_parse(&cli_cmd_report, 1, rep2, &ro), 2, "report takes no arguments");
}

/* -p and the other name lists, read one way by every command: blanks around
 * a name and empty names dropped; an empty list, a repeat and a list longer
 * than the limit refused (usage errors, 2). */
static void test_name_lists(void **state)
{
    const char *names[4];
    char *buf;
    int n;
    EXPECT_I64(cli_policy_names(" oracle ,poll,,\twakeat\t,", &buf, names, 4, &n), 0, "blanks and empty names");
    EXPECT_I64(n, 3, "three names");
    EXPECT_STR(names[0], "oracle", "first");
    EXPECT_STR(names[1], "poll", "second");
    EXPECT_STR(names[2], "wakeat", "third");
    free(buf);
    EXPECT_I64(cli_policy_names("oracle poll", &buf, names, 4, &n), 0, "a blank inside a name stays");
    EXPECT_I64(n, 1, "one name");
    EXPECT_STR(names[0], "oracle poll", "kept whole, for the unknown-policy error");
    free(buf);
    EXPECT_I64(cli_policy_names(" , ,", &buf, names, 4, &n), 2, "names nothing");
    free(buf);
    EXPECT_I64(cli_policy_names("", &buf, names, 4, &n), 2, "empty");
    free(buf);
    EXPECT_I64(cli_policy_names("a, b ,a", &buf, names, 4, &n), 2, "a repeat, blanks aside");
    free(buf);
    EXPECT_I64(cli_policy_names("a,b,c,d", &buf, names, 4, &n), 0, "at the limit");
    free(buf);
    EXPECT_I64(cli_policy_names("a,b,c,d,e", &buf, names, 4, &n), 2, "past the limit: refused, not cut");
    free(buf);
    /* A list longer than any fixed buffer is read whole. */
    char longlist[3000];
    memset(longlist, ' ', sizeof longlist - 8);
    snprintf(longlist + sizeof longlist - 8, 8, "oracle");
    EXPECT_I64(cli_policy_names(longlist, &buf, names, 4, &n), 0, "a long list");
    EXPECT_I64(n, 1, "its one name");
    EXPECT_STR(names[0], "oracle", "found past 1 KiB");
    free(buf);
    EXPECT_I64(cli_check_policy_list(NULL), 0, "no -p");
    EXPECT_I64(cli_check_policy_list("oracle, poll"), 0, "-p checked as read");
    EXPECT_I64(cli_check_policy_list("oracle, oracle"), 2, "-p with a repeat");
    char *c = cli_name_list(" flaky , mail,,");
    EXPECT_STR(c, "flaky,mail", "a report list, as -p reads it");
    free(c);
    c = cli_name_list(" ,");
    EXPECT_STR(c, "", "names nothing");
    free(c);
}

/* --- the job list of simrun run (sim/cli_plan.c) --------------------------------------------------- */

static struct scenario *plan_scenario(const char *text)
{
    struct scenario *s;
    struct diag d;
    if (scenario_parse_buf_ex("plan.scn", text, strlen(text), &refs_builtin, &s, &d) != 0)
        fail_msg("plan.scn: %d:%d: %s", d.line, d.col, d.msg);
    return s;
}

/* Columns (labels x points, the first axis slowest), the numbering of the
 * full list, shards, and the plan's identity. */
static void test_plan(void **state)
{
    static const char text[] = "horizon 1h\nworkflow w\n  producer p every 10m runs 1s\n"
                               "sweep poll.period=30s,2m\n";
    struct scenario *scn[1] = {plan_scenario(text)};
    char *argv[] = {"plan.scn", "-p", "oracle,poll", "--seeds", "1..3", "--sweep", "poll.period=10s,1m,5m"};
    struct cli_opts o = {.format = "table"};
    EXPECT_I64(cli_parse(&cli_cmd_run, 7, argv, &o), 0, "parse");
    struct cli_plan pl = {0};
    EXPECT_I64(cli_plan_make(&o, scn, &pl), 0, "plan");
    EXPECT_I64(pl.ncols[0], 4, "oracle and three points (--sweep replaces the line)");
    EXPECT_STR(pl.cols[0][1].title, "poll[period=10s]", "title");
    EXPECT_STR(pl.cols[0][2].point, "period=1m", "point");
    EXPECT_STR(pl.cols[0][2].t.params_text, "", "the default is no parameter");
    EXPECT_I64(pl.nfull, 12, "columns x seeds");
    int k, c;
    uint64_t seed;
    cli_plan_at(&pl, 7, &k, &c, &seed);
    EXPECT_I64(c, 2, "job 7: column");
    EXPECT_U64(seed, 2, "job 7: seed");
    char hash[17];
    snprintf(hash, sizeof hash, "%s", pl.hash);
    EXPECT_I64(cli_plan_select(&pl, &o, scn, NULL), 0, "no selection");
    assert_null(pl.sel);
    cli_plan_free(&pl);

    char *shard[] = {"--shard", "3/5"};
    EXPECT_I64(cli_parse(&cli_cmd_run, 2, shard, &o), 0, "--shard");
    EXPECT_I64(cli_plan_make(&o, scn, &pl), 0, "plan");
    EXPECT_STR(pl.hash, hash, "a shard has the plan of the whole");
    EXPECT_I64(cli_plan_select(&pl, &o, scn, NULL), 0, "shard");
    EXPECT_I64(pl.nsel, 2, "jobs 2 and 7");
    EXPECT_I64(pl.sel[0], 2, "first");
    EXPECT_I64(pl.sel[1], 7, "second");
    cli_plan_free(&pl);

    char *seeds[] = {"--seeds", "1..4"};
    EXPECT_I64(cli_parse(&cli_cmd_run, 2, seeds, &o), 0, "--seeds");
    EXPECT_I64(cli_plan_make(&o, scn, &pl), 0, "plan");
    assert_true(strcmp(pl.hash, hash) != 0);
    cli_plan_free(&pl);
    scenario_free(scn[0]);

    struct cli_opts bad = {.format = "table"};
    char *b1[] = {"--shard", "0/3"}, *b2[] = {"--sweep", "poll.period"}, *b3[] = {"--sweep", "poll.period=1m,"};
    EXPECT_I64(cli_parse(&cli_cmd_run, 2, b1, &bad), 2, "--shard 0/3");
    EXPECT_I64(cli_parse(&cli_cmd_run, 2, b2, &bad), 2, "--sweep without values");
    EXPECT_I64(cli_parse(&cli_cmd_run, 2, b3, &bad), 2, "--sweep with an empty value");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_option_in_help),
        cmocka_unit_test(test_every_option_documented),
        cmocka_unit_test(test_every_option_in_cli_md),
        cmocka_unit_test(test_help_exits_zero),
        cmocka_unit_test(test_main_help_lists_every_command),
        cmocka_unit_test(test_tables_are_sound),
        cmocka_unit_test(test_parse_run),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_name_lists),
        cmocka_unit_test(test_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
