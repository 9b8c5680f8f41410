/* sweep.h: many simulations, in this process or in parallel worker
 * processes, delivered in job order.
 *
 * A sweep is a numbered list of jobs (scenario x policy x seed).  With one
 * worker every job runs here, in order.  With N > 1 workers, N child
 * processes are forked; each receives job numbers through a pipe, runs
 * sim_run and sends the whole result back serialized through another pipe;
 * the parent hands results to the sink strictly in job order, buffering at
 * most SWEEP_WINDOW_PER_WORKER x N results that came early.  Traces go
 * through files in $TMPDIR (or /tmp), never through memory: a run's
 * trace grows with its horizon.  So whatever
 * writes to a database or prints does so in the parent, in the same order
 * as a serial sweep: the rows, their run_ids and the output are identical
 * (only measured wall times differ).
 *
 * Processes rather than threads: a simulation keeps all its state in its
 * own struct sim, but the calendar's zone cache (sim/tz.c) is shared and
 * filled lazily; a forked worker has its own copy of everything, and a
 * worker that crashes is reported instead of taking the sweep down.
 * Because workers are forks of this process (not new programs), pointers
 * to static data in a result (the trace records' kind strings) mean the
 * same on both sides. */
#ifndef SIM_SWEEP_H
#define SIM_SWEEP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/sim.h"

#define SWEEP_MAX_WORKERS 256
#define SWEEP_WINDOW_PER_WORKER 4
/* What sweep_run returns when *stop was set (the shell's status for an
 * interrupted command). */
#define SWEEP_STOPPED 130
/* What sweep_run returns when a trace could not be written to its spool
 * (a full device, a file-size limit): the results could not be written. */
#define SWEEP_EWRITE (-2)

/* One simulation.  Everything it points to is borrowed from the caller and
 * must stay valid (and unchanged) for the whole sweep. */
struct sweep_job {
    const struct scenario *scn;
    const struct policy_ops *ops;
    const struct params *ps;
    const char *label;             /* policy label, for the text trace */
    uint64_t seed;
};

struct sweep_opts {
    int workers;                   /* 1: run in this process; up to SWEEP_MAX_WORKERS */
    uint64_t max_events;           /* 0: the engine's default */
    uint64_t max_memory;           /* each simulation's budget; 0: the engine's default */
    int spool_trace;               /* 1: each job's trace records to the sink (sweep_out.trace) */
    FILE *trace;                   /* the text trace of every run, in job order; NULL none */
    /* A flag a signal handler sets (NULL: none).  Once it is non-zero no
     * job is started; the jobs under way finish and are delivered (those
     * before them too, so what was delivered is a prefix of the job list),
     * then sweep_run returns SWEEP_STOPPED.  Workers ignore SIGINT and
     * SIGTERM, so a Ctrl-C on the terminal or a SIGTERM to the process
     * group reaches the parent only, which decides. */
    volatile sig_atomic_t *stop;
};

/* A finished job as the sink sees it.  The sweep frees it when the sink
 * returns; a sink that keeps something copies it, or takes the trace (and
 * sets the field to NULL; it then closes it). */
struct sweep_out {
    struct sim_result res;
    int64_t wall_us;               /* measured around sim_run, for run_timings */
    /* spool_trace: the job's trace records (struct trace_rec, in order),
     * read from the start of a temporary file that no name reaches, so that
     * a trace of any length costs no memory; NULL otherwise. */
    FILE *trace;
};

/* Describes job i (0 <= i < njobs).  Called in the parent and in workers: a
 * pure function of i and ctx. */
typedef void (*sweep_job_fn)(void *ctx, size_t i, struct sweep_job *out);
/* Receives job i's result, for i = 0, 1, ... in order.  Returns 0 to go on;
 * any other value stops the sweep, which returns it. */
typedef int (*sweep_sink_fn)(void *ctx, size_t i, struct sweep_out *out);

/* Runs njobs jobs.  Returns 0 when every job was delivered, the sink's
 * value if it stopped the sweep, SWEEP_STOPPED after a stop, SWEEP_EWRITE
 * with err when a trace could not be spooled (the jobs before it were
 * delivered), or -1 with err when a worker could not be started or failed
 * (every worker is waited for before returning). */
int sweep_run(size_t njobs, const struct sweep_opts *o, sweep_job_fn job_at, sweep_sink_fn sink, void *ctx,
              char *err, size_t n);

/* One result in the workers' wire format (without the job number, wall
 * time 0, no trace), for other code that runs simulations in forked
 * children (sim/crashpoints.c).  *buf is malloc'd; the caller frees it. */
void sweep_result_encode(const struct sim_result *r, char **buf, size_t *len);
/* Rebuilds a result from sweep_result_encode's bytes (both ends the same
 * program); free it with sim_result_free. */
void sweep_result_decode(const char *buf, size_t len, struct sim_result *out);

#endif
