/* cli_merge.c: `simrun merge OUT.db IN.db...` (see cli.h): combines the
 * results databases of a sweep split across machines (run --shard K/N),
 * through store_merge (sim/store.h), which refuses what cannot be one
 * result set and writes all or nothing. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/cli.h"
#include "sim/store.h"

#define MERGE_MAX_INPUTS 100000

struct merge_cli {
    const char *paths[MERGE_MAX_INPUTS + 1];  /* OUT, then the inputs */
    int np;
    int quiet;
};

static int merge_arg(void *opts, const char *a)
{
    struct merge_cli *mc = opts;
    if (mc->np > MERGE_MAX_INPUTS)
        return cli_usage_error("too many databases (at most %s inputs)", "100000");
    mc->paths[mc->np++] = a;
    return 0;
}

static const struct cli_option merge_options[] = {
    CLI_FLAG('q', "quiet", struct merge_cli, quiet, "print nothing on success"),
    CLI_END,
};

static int cmd_merge(int argc, char **argv)
{
    static struct merge_cli mc; /* large: not on the stack */
    mc = (struct merge_cli){0};
    int rc = cli_parse(&cli_cmd_merge, argc, argv, &mc);
    if (rc)
        return rc;
    if (mc.np < 2)
        return cli_usage_error("%s", "merge needs OUT.db and at least one IN.db");
    for (int i = 0; i < mc.np; i++)
        if ((rc = cli_check_db_path(i ? "IN.db" : "OUT.db", mc.paths[i])))
            return rc;
    size_t added, skipped;
    char err[1024];
    struct stat st;
    int existed = stat(mc.paths[0], &st) == 0 || errno != ENOENT;
    if (store_merge(mc.paths[0], mc.paths + 1, mc.np - 1, &added, &skipped, err, sizeof err) != 0) {
        fprintf(stderr, "%s: error: %s\n", cli_prog, err);
        if (!existed) { /* a refused merge leaves no file it made */
            char j[4200];
            unlink(mc.paths[0]);
            snprintf(j, sizeof j, "%s-journal", mc.paths[0]);
            unlink(j);
        }
        return 2;
    }
    if (!mc.quiet)
        printf("merge: %s: %zu runs added from %d database%s, %zu already there\n", mc.paths[0], added, mc.np - 1,
               mc.np > 2 ? "s" : "", skipped);
    return 0;
}

const struct cli_command cli_cmd_merge = {
    .name = "merge",
    .args = "OUT.db IN.db...",
    .usage = "OUT.db IN.db... [-q]",
    .summary = "combine results databases (the shards of a sweep) into one",
    .description = "Adds the runs of each IN.db to OUT.db (created if missing), in one\n"
                   "transaction: nothing is written unless every input can be merged.  Refuses\n"
                   "runs of more than one simrun version, a scenario whose hash differs between\n"
                   "files (its file changed), and one run (scenario, policy, parameters, seed)\n"
                   "with two different fingerprints; skips a run OUT.db already has.  Runs of\n"
                   "one sweep are numbered in its job order, so the shards of 'simrun run\n"
                   "--shard K/N' merge into the database the whole sweep makes on one machine\n"
                   "(but for run_timings, the measured wall times).\n",
    .options = merge_options,
    .arg = merge_arg,
    .run = cmd_merge,
};
