/* main.c: the simrun command line.
 *
 * Subcommands: run, check, report, diff, validate, policies, version (spec
 * 6).  Exit codes: 0 success, 1 a check or a diff failed, 2 bad usage or
 * bad input, 3 internal error.  The commands, their option tables and the
 * help live in sim/cli*.c (see sim/cli.h), in the library, so that tests
 * can check every command's table against its help and the docs. */
#include <signal.h>

#include "sim/cli.h"

int main(int argc, char **argv)
{
    /* Over a file-size limit (ulimit -f) a write fails with EFBIG and is
     * reported as "cannot write results", rather than the signal killing
     * simrun without a word. */
    signal(SIGXFSZ, SIG_IGN);
    return cli_main(argc, argv);
}
