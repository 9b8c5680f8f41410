/* cli_info.c: the commands that simulate nothing (see cli.h): `simrun
 * validate` (parse only), `simrun policies` (the registry with its
 * parameters) and `simrun version`. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sim/cli.h"

/* --- validate ----------------------------------------------------------------------------------- */

static int validate_arg(void *opts, const char *path)
{
    return cli_opt_scenario(opts, path);
}

static int cmd_validate(int argc, char **argv)
{
    struct cli_opts o = {0};
    if (argc == 0)
        return cli_usage_error("%s", "no scenario given");
    int rc = cli_parse(&cli_cmd_validate, argc, argv, &o);
    if (rc)
        return rc;
    int bad = 0;
    for (int i = 0; i < o.npaths; i++) {
        struct scenario *s;
        struct diag d;
        if (cli_load_scenario(o.paths[i], &s, &d) != 0) {
            diag_print(&d);
            bad = 1;
            continue;
        }
        if (cli_check_memory(s, cli_max_memory(&o)) != 0) {
            scenario_free(s);
            bad = 1;
            continue;
        }
        printf("%s: ok (%u workflows, %" PRIu64 " handler instances, %u expect lines)\n", s->path, s->nwfs,
               s->nhandler_instances, s->nexpects);
        scenario_free(s);
    }
    return bad ? 2 : 0;
}

static const struct cli_option validate_options[] = {CLI_MAX_MEMORY_OPTION, CLI_END};

const struct cli_command cli_cmd_validate = {
    .name = "validate",
    .args = "SCENARIO...",
    .usage = "SCENARIO...",
    .summary = "parse only; report errors as file:line:col",
    .description = "Parses each scenario and reports the first error of each as\n"
                   "file:line:col: error: message, including a scenario that needs more\n"
                   "memory at once than the budget allows.  Exits 2 if any is invalid.\n",
    .options = validate_options,
    .arg = validate_arg,
    .run = cmd_validate,
};

/* --- policies ----------------------------------------------------------------------------------- */

static const char *type_name(enum param_type t)
{
    switch (t) {
    case PARAM_INT: return "integer";
    case PARAM_DURATION: return "duration";
    case PARAM_ENUM: return "choice";
    case PARAM_BOOL: return "boolean";
    case PARAM_TOD: return "time of day";
    case PARAM_ZONE: return "time zone";
    }
    return "?";
}

static int cmd_policies(int argc, char **argv)
{
    int rc = cli_parse(&cli_cmd_policies, argc, argv, NULL);
    if (rc)
        return rc;
    for (int i = 0; i < policy_registry_count; i++) {
        const struct policy_ops *p = policy_registry[i];
        printf("%s  (%s)\n    %s\n", p->name, p->seeds, p->summary);
        printf("    promise: %s; items kept %s\n",
               p->promise == PROMISE_NONE ? "none (runs may overlap)"
               : p->promise == PROMISE_HANDLER ? "one run per handler at a time"
               : p->promise == PROMISE_UNIT    ? "one run per unit of work (item or fire) at a time"
                                                : "one run per workflow at a time",
               p->items_volatile ? "in memory only (lost at a crash)" : "durably");
        if (p->nparams == 0)
            printf("    parameters: none\n");
        for (int k = 0; k < p->nparams; k++) {
            const struct param_def *d = &p->params[k];
            printf("    %s.%s = %s  [%s%s%s]\n        %s (source: %s)\n", p->name, d->key, d->def, type_name(d->type),
                   d->choices ? ": " : "", d->choices ? d->choices : "", d->help, d->source);
        }
        for (int k = 0; k < p->nvariants; k++) {
            const struct policy_variant *v = &p->variants[k];
            printf("    variant %s: %s\n        reproduces %s; configuration grammar: %s\n", v->name, v->summary,
                   v->source, v->grammar);
            for (int j = 0; j < v->nsettings; j++)
                printf("        %s = %s  (source: %s)\n", v->settings[j].key, v->settings[j].value,
                       v->settings[j].source);
        }
        if (i + 1 < policy_registry_count)
            printf("\n");
    }
    return 0;
}

const struct cli_command cli_cmd_policies = {
    .name = "policies",
    .args = "",
    .usage = "",
    .summary = "list the policies with their parameters and sources",
    .description = "Lists every policy with its summary, seed references, and each parameter\n"
                   "with its type, default and where it comes from; then its built-in\n"
                   "variants (as-built systems, run by name like a policy) with each\n"
                   "setting and the repository file it comes from.\n",
    .options = NULL,
    .arg = NULL,
    .run = cmd_policies,
};

/* --- version ------------------------------------------------------------------------------------ */

/* Words after `simrun version` are ignored. */
static int version_arg(void *opts, const char *a)
{
    return 0;
}

static int cmd_version(int argc, char **argv)
{
    int rc = cli_parse(&cli_cmd_version, argc, argv, NULL);
    if (rc)
        return rc;
    printf("simrun %s\n", SIMRUN_VERSION);
    return 0;
}

const struct cli_command cli_cmd_version = {
    .name = "version",
    .args = "",
    .usage = "",
    .summary = "print the version",
    .description = "Prints the version of simrun (also: simrun --version).\n",
    .options = NULL,
    .arg = version_arg,
    .run = cmd_version,
};
