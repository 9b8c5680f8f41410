/* cli_help.c: `simrun help` (see cli.h): a command's help, and the two
 * documents made from the same option tables as --help, so that neither can
 * drift from the command line: the manual page (`simrun help --man`, roff,
 * installed as simrun.1) and the bash completion script (`simrun help
 * --bash-completion`: commands, options, policy names and their parameters).
 *
 * Both are pure functions of the command table and the policy registry
 * (the built-in policies: plugins are not loaded when they are made), so
 * the build makes them once and `make install` copies them. */
#include <stdio.h>
#include <string.h>

#include "sim/cli.h"
#include "sim/suggest.h"

struct help_opts {
    int man;
    int bash;
    const char *cmd;               /* help for this command */
};

static int help_arg(void *opts, const char *a)
{
    struct help_opts *h = opts;
    if (h->cmd)
        return cli_usage_error("unexpected argument '%s' (help takes one command)", a);
    h->cmd = a;
    return 0;
}

static const struct cli_option help_options[] = {
    CLI_FLAG(0, "man", struct help_opts, man, "print the manual page (roff), made from these option tables"),
    CLI_FLAG(0, "bash-completion", struct help_opts, bash,
             "print the bash completion script: commands, options,\n"
             "policy names and their parameters"),
    CLI_END,
};

/* --- the manual page ------------------------------------------------------------------------------ */

/* Text for roff: backslashes and dashes escaped, a line never starting with
 * a control character, non-ASCII as a code point (\[u00B1] for a plus-minus
 * sign). */
static void roff_text(FILE *f, const char *s)
{
    int bol = 1;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (bol && (*c == '.' || *c == '\''))
            fputs("\\&", f);
        bol = *c == '\n';
        if (*c == '\\') {
            fputs("\\e", f);
        } else if (*c == '-') {
            fputs("\\-", f);
        } else if (*c >= 0xc0 && (c[1] & 0xc0) == 0x80) {
            unsigned cp;
            int more = *c >= 0xf0 ? 3 : *c >= 0xe0 ? 2 : 1;
            cp = *c & (0x3fu >> more);
            int k = 0;
            for (; k < more && (c[k + 1] & 0xc0) == 0x80; k++)
                cp = (cp << 6) | (c[k + 1] & 0x3fu);
            c += k;
            fprintf(f, "\\[u%04X]", cp);
        } else if (*c >= 0x20 || *c == '\n') {
            fputc(*c, f);
        }
    }
}

static void man_option(FILE *f, const struct cli_option *o)
{
    fputs(".TP\n", f);
    if (o->short_name)
        fprintf(f, "\\fB\\-%c\\fR%s", o->short_name, o->long_name ? ", " : "");
    if (o->long_name) {
        fputs("\\fB\\-\\-", f);
        roff_text(f, o->long_name);
        fputs("\\fR", f);
    }
    if (o->argh) {
        fputs(" \\fI", f);
        roff_text(f, o->argh);
        fputs("\\fR", f);
    }
    fputc('\n', f);
    /* The help's lines are one paragraph. */
    for (const char *p = o->help; *p; p++) {
        char one[2] = {*p == '\n' ? ' ' : *p, 0};
        roff_text(f, one);
    }
    fputc('\n', f);
}

static void man_command(FILE *f, const struct cli_command *c)
{
    fputs(".SS \"simrun ", f);
    roff_text(f, c->name);
    if (c->usage[0]) {
        fputc(' ', f);
        roff_text(f, c->usage);
    }
    fputs("\"\n", f);
    if (c->description) {
        fputs(".PP\n", f);
        roff_text(f, c->description);
    }
    const struct cli_option *o = c->options;
    for (; o && (o->short_name || o->long_name); o++)
        man_option(f, o);
    fputs(".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nthis help\n", f);
}

static void print_man(FILE *f)
{
    fprintf(f, ".\\\" simrun.1, made by 'simrun help --man' from simrun's option tables\n"
               ".TH SIMRUN 1 \"\" \"simrun %s\" \"User Commands\"\n"
               ".SH NAME\n"
               "simrun \\- simulate job\\-scheduling policies on scenario files\n"
               ".SH SYNOPSIS\n"
               ".B simrun\n.I COMMAND\n.RI [ ARGS ]\n"
               ".br\n.B simrun help\n.RI [ COMMAND ]\n"
               ".SH DESCRIPTION\n"
               "simrun simulates job\\-scheduling policies on scenario files with a virtual clock and\n"
               "measures latency, lateness, lost and duplicate work, missed schedules, busy loops,\n"
               "wake\\-ups, overlaps and crash recovery.  Results go to a SQLite database; \\fBexpect\\fR\n"
               "lines in a scenario state what must hold, and \\fBsimrun check\\fR evaluates them.\n"
               ".PP\n"
               "An option's value is the next word; options and arguments may come in any order;\n"
               "\\fB\\-h\\fR or \\fB\\-\\-help\\fR anywhere prints the command's help, as does\n"
               "\\fBsimrun help\\fR \\fICOMMAND\\fR.\n"
               ".SH COMMANDS\n",
            SIMRUN_VERSION);
    for (int i = 0; cli_commands[i]; i++)
        man_command(f, cli_commands[i]);
    fputs(".SH EXIT STATUS\n"
          "0 success, 1 a check or a diff failed, 2 bad usage or bad input (nothing is written to a\n"
          "results database), 3 internal error, 4 results could not be written (the runs before\n"
          "stay in the database, each whole).\n"
          ".SH ENVIRONMENT\n"
          ".TP\n.B SIMRUN_GNUPLOT\n"
          "the gnuplot program \\fBsimrun report\\fR runs (default: gnuplot on PATH).\n"
          ".TP\n.B TMPDIR\n"
          "where the traces of \\fB\\-\\-store\\-trace\\fR, and of \\fB\\-\\-trace\\fR with \\fB\\-j\\fR \\fIN\\fR, wait\n"
          "until their run is written (default: /tmp); it needs room for the traces of the runs\n"
          "under way.\n"
          ".SH FILES\n"
          ".TP\n.I share/simrun/scenarios/\n"
          "the bundled scenarios, under the installation prefix.\n"
          ".TP\n.I include/simrun/sim/policy_api.h\n"
          "the header a policy plugin is built against (\\fBpkg\\-config \\-\\-cflags simrun\\fR).\n"
          ".SH SEE ALSO\n"
          "The documentation in simrun's source: README.md, docs/cli.md, docs/scenario\\-format.md,\n"
          "docs/policies.md, docs/writing\\-a\\-policy.md, docs/results.md, docs/reports.md,\n"
          "docs/distributed.md.\n",
          f);
}

/* --- bash completion -------------------------------------------------------------------------- */

/* The options of c as completion words: every spelling. */
static void bash_options(FILE *f, const struct cli_command *c)
{
    for (const struct cli_option *o = c->options; o && (o->short_name || o->long_name); o++) {
        if (o->short_name)
            fprintf(f, "-%c ", o->short_name);
        if (o->long_name)
            fprintf(f, "--%s ", o->long_name);
    }
    fputs("-h --help", f);
}

/* The options whose value is of a kind: a policy list, a POLICY.KEY=...
 * setting, a file, a folder; as a case pattern ("-p|--policies"), or
 * "--@none" when no option of any command takes one. */
static void bash_case(FILE *f, const char *kind)
{
    int n = 0;
    for (int i = 0; cli_commands[i]; i++)
        for (const struct cli_option *o = cli_commands[i]->options; o && (o->short_name || o->long_name); o++) {
            if (!o->argh)
                continue;
            int match = !strcmp(kind, "policy") ? !strcmp(o->argh, "LIST")
                        : !strcmp(kind, "param") ? !strncmp(o->argh, "POLICY.KEY=", 11)
                        : !strcmp(kind, "file")  ? (strstr(o->argh, "FILE") || strstr(o->argh, ".db"))
                                                 : !strcmp(o->argh, "DIR");
            if (!match)
                continue;
            if (o->short_name)
                fprintf(f, "%s-%c", n++ ? "|" : "", o->short_name);
            if (o->long_name)
                fprintf(f, "%s--%s", n++ ? "|" : "", o->long_name);
        }
    if (!n)
        fputs("--@none", f);
}

static void print_bash(FILE *f)
{
    fprintf(f, "# bash completion for simrun %s, made by 'simrun help --bash-completion' from\n"
               "# simrun's option tables and its built-in policies.\n"
               "_simrun()\n{\n"
               "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
               "    local commands=\"",
            SIMRUN_VERSION);
    for (int i = 0; cli_commands[i]; i++)
        fprintf(f, "%s%s", i ? " " : "", cli_commands[i]->name);
    fputs("\"\n    local policies=\"", f);
    for (int i = 0; i < policy_count(); i++)
        fprintf(f, "%s%s", i ? " " : "", policy_at(i)->name);
    for (int i = 0; i < policy_count(); i++) /* built-in variants run by name like a policy */
        for (int k = 0; k < policy_at(i)->nvariants; k++)
            fprintf(f, " %s", policy_at(i)->variants[k].name);
    fputs("\"\n    local params=\"", f);
    int n = 0;
    for (int i = 0; i < policy_count(); i++)
        for (int k = 0; k < policy_at(i)->nparams; k++)
            fprintf(f, "%s%s.%s=", n++ ? " " : "", policy_at(i)->name, policy_at(i)->params[k].key);
    fputs("\"\n"
          "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
          "        COMPREPLY=($(compgen -W \"$commands --help --version\" -- \"$cur\"))\n"
          "        return\n"
          "    fi\n"
          "    case $prev in\n        ",
          f);
    bash_case(f, "policy");
    fputs(")\n"
          "            local head=${cur%,*}\n"
          "            [ \"$head\" = \"$cur\" ] && head= || head=$head,\n"
          "            COMPREPLY=($(compgen -P \"$head\" -W \"$policies\" -- \"${cur##*,}\"))\n"
          "            return ;;\n        ",
          f);
    bash_case(f, "param");
    fputs(")\n"
          "            COMPREPLY=($(compgen -W \"$params\" -- \"$cur\"))\n"
          "            compopt -o nospace 2>/dev/null\n"
          "            return ;;\n        ",
          f);
    bash_case(f, "file");
    fputs(")\n            COMPREPLY=($(compgen -f -- \"$cur\"))\n            return ;;\n        ", f);
    bash_case(f, "dir");
    fputs(")\n            COMPREPLY=($(compgen -d -- \"$cur\"))\n            return ;;\n    esac\n"
          "    local opts=\n    case ${COMP_WORDS[1]} in\n",
          f);
    for (int i = 0; cli_commands[i]; i++) {
        fprintf(f, "        %s) opts=\"", cli_commands[i]->name);
        bash_options(f, cli_commands[i]);
        fputs("\" ;;\n", f);
    }
    fputs("    esac\n"
          "    if [ \"${COMP_WORDS[1]}\" = help ]; then\n"
          "        COMPREPLY=($(compgen -W \"$commands $opts\" -- \"$cur\"))\n"
          "    elif [[ $cur == -* ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
          "    else\n"
          "        COMPREPLY=($(compgen -f -X '!*.@(scn|db)' -- \"$cur\") $(compgen -d -- \"$cur\"))\n"
          "    fi\n"
          "}\n"
          "complete -F _simrun simrun\n",
          f);
}

/* --- the command -------------------------------------------------------------------------------- */

static int cmd_help(int argc, char **argv)
{
    struct help_opts h = {0};
    int rc = cli_parse(&cli_cmd_help, argc, argv, &h);
    if (rc)
        return rc;
    if (h.man + h.bash + (h.cmd != NULL) > 1)
        return cli_usage_error("%s", "give one of COMMAND, --man and --bash-completion");
    if (h.man) {
        print_man(stdout);
        return 0;
    }
    if (h.bash) {
        print_bash(stdout);
        return 0;
    }
    if (!h.cmd) {
        cli_print_main_help(stdout);
        return 0;
    }
    struct suggest sg;
    suggest_init(&sg, h.cmd);
    for (int i = 0; cli_commands[i]; i++) {
        if (!strcmp(cli_commands[i]->name, h.cmd)) {
            cli_print_help(cli_commands[i], stdout);
            return 0;
        }
        suggest_add(&sg, cli_commands[i]->name);
    }
    char fmt[160] = "unknown command '%s'";
    suggest_append(&sg, fmt, sizeof fmt);
    return cli_usage_error(fmt, h.cmd);
}

const struct cli_command cli_cmd_help = {
    .name = "help",
    .args = "[COMMAND]",
    .usage = "[COMMAND | --man | --bash-completion]",
    .summary = "this overview, or a command's help (as 'simrun COMMAND --help')",
    .description = "Without arguments, the overview of the commands; with a command, its help\n"
                   "(the same as 'simrun COMMAND --help').  --man and --bash-completion print\n"
                   "the manual page and the completion script that 'make install' installs,\n"
                   "made from the same option tables as the help.\n",
    .options = help_options,
    .arg = help_arg,
    .run = cmd_help,
};
