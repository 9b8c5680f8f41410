/* cli.c: the option parser, the help, and the dispatch of commands (see
 * cli.h).
 *
 * An option is found by its exact spelling: "-p" or "--policies"; its
 * value, if it takes one, is the next word (so a value may start with a
 * '-').  There is no bundling of short options and no "--name=value": an
 * option's one spelling is what the help shows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cli.h"
#include "sim/suggest.h"
#include "sim/syntax.h"
#include "sim/util.h"

const char *const cli_prog = "simrun";

const struct cli_command *const cli_commands[] = {
    &cli_cmd_run, &cli_cmd_check, &cli_cmd_crashpoints, &cli_cmd_report, &cli_cmd_diff, &cli_cmd_validate,
    &cli_cmd_policies, &cli_cmd_version, &cli_cmd_help, &cli_cmd_merge, &cli_cmd_shrink, &cli_cmd_swarm, NULL,
};

int cli_usage_error(const char *fmt, const char *arg)
{
    /* The user's word, escaped and cut as any quoted text; a message that
     * is already composed ("%s") is printed as it is. */
    char e[SCN_QUOTE_MAX];
    scn_escape(e, sizeof e, arg ? arg : "");
    fprintf(stderr, "%s: error: ", cli_prog);
    fprintf(stderr, fmt, strcmp(fmt, "%s") ? e : arg);
    fprintf(stderr, "\n(see '%s --help')\n", cli_prog);
    return 2;
}

/* --- parsing --------------------------------------------------------------------------------- */

static int is_help(const char *a)
{
    return !strcmp(a, "-h") || !strcmp(a, "--help");
}

static const struct cli_option *find_option(const struct cli_option *t, const char *a)
{
    for (; t->short_name || t->long_name; t++) {
        if (a[1] != '-' && t->short_name && a[1] == t->short_name && !a[2])
            return t;
        if (a[1] == '-' && t->long_name && !strcmp(a + 2, t->long_name))
            return t;
    }
    return NULL;
}

static int store_option(const struct cli_option *o, void *opts, const char *arg)
{
    char *field = (char *)opts + o->offset;
    switch (o->type) {
    case CLI_OPT_FLAG:
        *(int *)(void *)field = 1;
        return 0;
    case CLI_OPT_STRING:
        *(const char **)(void *)field = arg;
        return 0;
    case CLI_OPT_CALLBACK:
        return o->cb(opts, arg);
    }
    SIM_ASSERT(!"an option type");
    return 3;
}

/* "unknown option '--sed'; did you mean '--seed'?": long spellings only
 * are suggested (one letter after a dash is too short to guess from). */
static int unknown_option(const struct cli_command *c, const char *a)
{
    enum { MAX_SPELL = 64 };
    char spell[MAX_SPELL][SUGGEST_MAX_LEN + 8], fmt[256] = "unknown option '%s'";
    int n = 0;
    struct suggest sg;
    suggest_init(&sg, a);
    if (a[1] == '-') {
        for (const struct cli_option *t = c->options; (t->short_name || t->long_name) && n + 1 < MAX_SPELL; t++)
            if (t->long_name)
                snprintf(spell[n++], sizeof spell[0], "--%s", t->long_name);
        snprintf(spell[n++], sizeof spell[0], "--help");
        for (int i = 0; i < n; i++)
            suggest_add(&sg, spell[i]);
    }
    suggest_append(&sg, fmt, sizeof fmt);
    return cli_usage_error(fmt, a);
}

int cli_parse(const struct cli_command *c, int argc, char **argv, void *opts)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int rc;
        if (!c->options || a[0] != '-' || !a[1]) {
            rc = c->arg ? c->arg(opts, a) : cli_usage_error("unexpected argument '%s'", a);
            if (rc)
                return rc;
            continue;
        }
        const struct cli_option *o = find_option(c->options, a);
        if (!o)
            return unknown_option(c, a);
        const char *v = NULL;
        if (o->argh) {
            if (i + 1 >= argc)
                return cli_usage_error("option '%s' needs a value", a);
            v = argv[++i];
        }
        if ((rc = store_option(o, opts, v)) != 0)
            return rc;
    }
    return 0;
}

/* --- help ------------------------------------------------------------------------------------- */

/* The left column of an option's help: "-p, --policies LIST". */
static void option_synopsis(const struct cli_option *o, char *b, size_t n)
{
    int off = 0;
    if (o->short_name)
        off += snprintf(b + off, n - (size_t)off, "-%c%s", o->short_name, o->long_name ? ", " : "");
    if (o->long_name)
        off += snprintf(b + off, n - (size_t)off, "--%s", o->long_name);
    if (o->argh)
        snprintf(b + off, n - (size_t)off, " %s", o->argh);
}

/* "  LEFT    help", the help's further lines under its first. */
static void print_row(FILE *f, const char *left, const char *help, int col)
{
    fprintf(f, "  %-*s", col, left);
    for (const char *p = help; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        fprintf(f, "%.*s\n", (int)len, p);
        if (!e)
            break;
        p = e + 1;
        fprintf(f, "  %-*s", col, "");
    }
}

static const struct cli_option help_option = {'h', "help", NULL, "this help", CLI_OPT_FLAG, 0, NULL};

void cli_print_help(const struct cli_command *c, FILE *f)
{
    fprintf(f, "usage: %s %s%s%s\n", cli_prog, c->name, c->usage[0] ? " " : "", c->usage);
    if (c->description)
        fprintf(f, "\n%s", c->description);
    char left[128];
    int col = 0;
    for (const struct cli_option *o = c->options; o && (o->short_name || o->long_name); o++) {
        option_synopsis(o, left, sizeof left);
        if ((int)strlen(left) > col)
            col = (int)strlen(left);
    }
    option_synopsis(&help_option, left, sizeof left);
    if ((int)strlen(left) > col)
        col = (int)strlen(left);
    col += 2;
    fprintf(f, "\noptions:\n");
    for (const struct cli_option *o = c->options; o && (o->short_name || o->long_name); o++) {
        option_synopsis(o, left, sizeof left);
        print_row(f, left, o->help, col);
    }
    option_synopsis(&help_option, left, sizeof left);
    print_row(f, left, help_option.help, col);
}

void cli_print_main_help(FILE *f)
{
    fprintf(f, "usage: %s COMMAND [ARGS]\n"
               "\n"
               "simrun simulates job-scheduling policies on scenario files with a virtual\n"
               "clock and measures latency, lateness, lost and duplicate work, missed\n"
               "schedules, busy loops, wake-ups, overlaps and crash recovery.\n"
               "\n"
               "commands:\n",
            cli_prog);
    char left[128];
    int col = 0;
    for (int i = 0; cli_commands[i]; i++) {
        snprintf(left, sizeof left, "%s%s%s", cli_commands[i]->name, cli_commands[i]->args[0] ? " " : "",
                 cli_commands[i]->args);
        if ((int)strlen(left) > col)
            col = (int)strlen(left);
    }
    for (int i = 0; cli_commands[i]; i++) {
        snprintf(left, sizeof left, "%s%s%s", cli_commands[i]->name, cli_commands[i]->args[0] ? " " : "",
                 cli_commands[i]->args);
        print_row(f, left, cli_commands[i]->summary, col + 2);
    }
    fprintf(f, "\n"
               "'%s COMMAND --help' (or '%s help COMMAND') explains each command.\n"
               "exit status: 0 success, 1 a check or a diff failed, 2 bad usage or input, 3 internal error,\n"
               "4 cannot write results; '-' as a scenario reads it from standard input\n"
               "documentation: README.md, docs/cli.md, docs/scenario-format.md, docs/policies.md,\n"
               "docs/results.md, docs/reports.md, docs/distributed.md; man simrun\n",
            cli_prog, cli_prog);
}

/* --- dispatch --------------------------------------------------------------------------------- */

int cli_main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "%s: error: no command given\n\n", cli_prog);
        cli_print_main_help(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (is_help(cmd)) {
        cli_print_main_help(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version"))
        cmd = "version";
    for (int i = 0; cli_commands[i]; i++) {
        const struct cli_command *c = cli_commands[i];
        if (strcmp(cmd, c->name))
            continue;
        for (int k = 2; k < argc; k++)
            if (is_help(argv[k])) {
                cli_print_help(c, stdout);
                return 0;
            }
        return c->run(argc - 2, argv + 2);
    }
    char fmt[256];
    struct suggest sg;
    suggest_init(&sg, cmd);
    int off = snprintf(fmt, sizeof fmt, "unknown command '%%s' (valid: ");
    for (int i = 0; cli_commands[i] && off < (int)sizeof fmt; i++) {
        off += snprintf(fmt + off, sizeof fmt - (size_t)off, "%s%s", i ? ", " : "", cli_commands[i]->name);
        suggest_add(&sg, cli_commands[i]->name);
    }
    if (off < (int)sizeof fmt)
        snprintf(fmt + off, sizeof fmt - (size_t)off, ")");
    suggest_append(&sg, fmt, sizeof fmt);
    return cli_usage_error(fmt, cmd);
}
