/* sweep.c: serial and process-parallel sweeps (see sweep.h).
 *
 * Wire format of one result, worker to parent, all in native byte order
 * (both ends are the same program on the same machine):
 *
 *     u64 job, u64 length, then length bytes:
 *       struct sim_result         as bytes (its pointers are rebuilt)
 *       i64 wall_us
 *       ntmpl x struct metrics    as bytes (bucket pointers rebuilt)
 *       for total, then each template, latency then lateness:
 *         u8 has_buckets; if 1: u32 nonzero, then nonzero x (u32 index, u64 count)
 *       ncrashes x struct crash_rec
 *       i32 spool error: 0, or the errno that writing the job's traces to
 *           the spool met
 *
 * Traces do not travel through the pipe: a worker writes a job's text
 * trace and its trace records to files of the spool, a directory of its
 * own under $TMPDIR (or /tmp), and the parent copies the text to the trace
 * file and hands the records to the sink when it delivers the job, then
 * deletes them.  So a trace, which grows with the horizon, never sits in
 * the memory of either process; the spool holds the traces of at most the
 * window's jobs.  A serial sweep writes the text trace to its file as it
 * goes and spools the records to an unlinked temporary file.
 *
 * Copying whole structs and fixing only their pointers means a scalar field
 * added to sim_result, checker_result or metrics travels without a change
 * here; a new pointer field would not, and the -j 1 / -j 2 comparison in
 * tests/cli_sweep.sh is what catches that.
 *
 * Invariant (parent): results are delivered for job next_out, next_out + 1,
 * ... with no gap; a result for job j is only ever requested when
 * j < next_out + window, so the reorder buffer of `window` slots never
 * overflows. */
#include "sim/sweep.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim/util.h"

static int64_t wall_now_us(void)
{
    /* Wall time is for run_timings only; it never reaches a simulation. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* --- the spool ------------------------------------------------------------------------ */

/* Where spools go: $TMPDIR, else /tmp. */
static const char *spool_base(void)
{
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

/* The name pattern of a spool (a folder or an unlinked file) for mkdtemp
 * and mkstemp, in buf (PATH_MAX bytes), short enough that a job's file
 * name fits after it (spool_path).  0, or -1 with errno ENAMETOOLONG. */
static int spool_pattern(char *buf)
{
    int w = snprintf(buf, PATH_MAX, "%s/simrun-spool-XXXXXX", spool_base());
    if (w < 0 || w >= PATH_MAX - 32) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

/* A new spool directory in dir (PATH_MAX bytes).  0, or -1 with err. */
static int spool_dir_make(char *dir, char *err, size_t n)
{
    if (spool_pattern(dir) != 0 || !mkdtemp(dir)) {
        snprintf(err, n, "cannot make a spool for the traces in '%s': %s", spool_base(), strerror(errno));
        dir[0] = 0;
        return -1;
    }
    return 0;
}

/* Removes the spool directory and whatever it still holds (the traces of
 * jobs that were not delivered). */
static void spool_dir_remove(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[PATH_MAX];
        while ((e = readdir(d)))
            if (e->d_name[0] != '.' && snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path)
                unlink(path);
        closedir(d);
    }
    rmdir(dir);
}

/* The spool file of job's text trace ("txt") or records ("rec"). */
static void spool_path(char *path, const char *dir, uint64_t job, const char *what)
{
    if (snprintf(path, PATH_MAX, "%s/%" PRIu64 ".%s", dir, job, what) >= PATH_MAX)
        path[0] = 0; /* not reached: the directory's name is short (spool_dir_make) */
}

/* A temporary file that no name reaches (it goes when it is closed), for
 * writing and then reading back.  NULL with errno. */
static FILE *spool_anon(void)
{
    char path[PATH_MAX];
    int fd = spool_pattern(path) == 0 ? mkstemp(path) : -1;
    if (fd < 0)
        return NULL;
    unlink(path);
    FILE *f = fdopen(fd, "w+");
    if (!f) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}

/* The engine's sink of trace records: each appended to the spool file. */
static void spool_rec(void *ctx, const struct trace_rec *r)
{
    fwrite(r, sizeof *r, 1, (FILE *)ctx);
}

/* Ends the writing of a spool file: 0, or the errno of the first failure. */
static int spool_end(FILE *f, int close_it)
{
    int bad = fflush(f) != 0 || ferror(f);
    int e = bad ? (errno ? errno : EIO) : 0;
    if (close_it && fclose(f) != 0 && !e)
        e = errno ? errno : EIO;
    return e;
}

/* Copies the text trace at path to out and deletes it.  0, or an errno. */
static int spool_copy_text(const char *path, FILE *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return errno;
    unlink(path);
    char buf[1 << 16];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        if (fwrite(buf, 1, got, out) != got)
            break;
    int e = ferror(f) ? EIO : 0;
    fclose(f);
    return e; /* an error writing out is the caller's to find (ferror) */
}

/* --- one job ---------------------------------------------------------------------------- */

/* Runs job j with its text trace to trace and its records to recs (NULL:
 * none). */
static void run_one(const struct sweep_job *j, const struct sweep_opts *o, FILE *trace, FILE *recs,
                    struct sweep_out *out)
{
    struct sim_opts so = {.seed = j->seed, .trace = trace, .trace_rec = recs ? spool_rec : NULL, .trace_ctx = recs,
                          .max_events = o->max_events, .max_memory = o->max_memory, .label = j->label};
    int64_t t0 = wall_now_us();
    sim_run(j->scn, j->ops, j->ps, &so, &out->res);
    out->wall_us = wall_now_us() - t0;
    if (out->wall_us <= 0)
        out->wall_us = 1; /* measured, if below the clock's resolution */
}

static void out_free(struct sweep_out *out)
{
    sim_result_free(&out->res);
    if (out->trace)
        fclose(out->trace);
    *out = (struct sweep_out){0};
}

/* --- serial ------------------------------------------------------------------ */

static int sweep_serial(size_t njobs, const struct sweep_opts *o, sweep_job_fn job_at, sweep_sink_fn sink,
                        void *ctx, char *err, size_t n)
{
    for (size_t i = 0; i < njobs; i++) {
        if (o->stop && *o->stop)
            return SWEEP_STOPPED;
        struct sweep_job j;
        job_at(ctx, i, &j);
        struct sweep_out out = {0};
        FILE *recs = NULL;
        if (o->spool_trace && !(recs = spool_anon())) {
            snprintf(err, n, "cannot make a spool for the traces in '%s': %s", spool_base(), strerror(errno));
            return SWEEP_EWRITE;
        }
        run_one(&j, o, o->trace, recs, &out);
        if (recs) {
            int e = spool_end(recs, 0);
            if (e || fseek(recs, 0, SEEK_SET) != 0) {
                snprintf(err, n, "cannot spool the trace in '%s': %s", spool_base(), strerror(e ? e : errno));
                fclose(recs);
                out_free(&out);
                return SWEEP_EWRITE;
            }
            out.trace = recs;
        }
        int rc = sink(ctx, i, &out);
        out_free(&out);
        if (rc)
            return rc;
    }
    return 0;
}

/* --- serialization --------------------------------------------------------------- */

struct buf {
    char *p;
    size_t n, cap;
};

static void put(struct buf *b, const void *p, size_t n)
{
    b->p = xgrow(b->p, 1, &b->cap, b->n + n);
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void put_hist(struct buf *b, const struct hist *h)
{
    uint8_t has = h->bucket != NULL;
    put(b, &has, 1);
    if (!has)
        return;
    uint32_t nz = 0;
    for (int i = 0; i < HIST_NBUCKETS; i++)
        nz += h->bucket[i] != 0;
    put(b, &nz, sizeof nz);
    for (uint32_t i = 0; i < HIST_NBUCKETS; i++) {
        if (!h->bucket[i])
            continue;
        put(b, &i, sizeof i);
        put(b, &h->bucket[i], sizeof h->bucket[i]);
    }
}

static void encode(const struct sweep_out *out, int32_t spool_err, struct buf *b)
{
    const struct sim_result *r = &out->res;
    const struct checker_result *ck = &r->ck;
    put(b, r, sizeof *r);
    put(b, &out->wall_us, sizeof out->wall_us);
    if (ck->ntmpl)
        put(b, ck->per_tmpl, ck->ntmpl * sizeof *ck->per_tmpl);
    put_hist(b, &ck->total.latency);
    put_hist(b, &ck->total.lateness);
    for (uint32_t t = 0; t < ck->ntmpl; t++) {
        put_hist(b, &ck->per_tmpl[t].latency);
        put_hist(b, &ck->per_tmpl[t].lateness);
    }
    if (ck->ncrashes)
        put(b, ck->crashes, ck->ncrashes * sizeof *ck->crashes);
    put(b, &spool_err, sizeof spool_err);
}

struct reader {
    const char *p;
    size_t left;
};

/* Takes n bytes; a short message is a broken worker, not bad input. */
static const void *take(struct reader *rd, size_t n)
{
    SIM_ASSERT(n <= rd->left);
    const void *p = rd->p;
    rd->p += n;
    rd->left -= n;
    return p;
}

static void get(struct reader *rd, void *dst, size_t n)
{
    memcpy(dst, take(rd, n), n);
}

static void get_hist(struct reader *rd, struct hist *h)
{
    uint8_t has;
    get(rd, &has, 1);
    h->bucket = NULL;
    if (!has)
        return;
    h->bucket = xcalloc(HIST_NBUCKETS, sizeof *h->bucket);
    uint32_t nz;
    get(rd, &nz, sizeof nz);
    for (uint32_t k = 0; k < nz; k++) {
        uint32_t i;
        get(rd, &i, sizeof i);
        SIM_ASSERT(i < HIST_NBUCKETS);
        get(rd, &h->bucket[i], sizeof h->bucket[i]);
    }
}

/* Rebuilds a result; *spool_err gets the worker's spool error. */
static void decode(const char *msg, size_t len, struct sweep_out *out, int32_t *spool_err)
{
    struct reader rd = {msg, len};
    struct sim_result *r = &out->res;
    struct checker_result *ck = &r->ck;
    get(&rd, r, sizeof *r);
    get(&rd, &out->wall_us, sizeof out->wall_us);
    ck->per_tmpl = NULL;
    ck->crashes = NULL;
    out->trace = NULL;
    if (ck->ntmpl) {
        ck->per_tmpl = xmalloc(ck->ntmpl * sizeof *ck->per_tmpl);
        get(&rd, ck->per_tmpl, ck->ntmpl * sizeof *ck->per_tmpl);
    }
    get_hist(&rd, &ck->total.latency);
    get_hist(&rd, &ck->total.lateness);
    for (uint32_t t = 0; t < ck->ntmpl; t++) {
        get_hist(&rd, &ck->per_tmpl[t].latency);
        get_hist(&rd, &ck->per_tmpl[t].lateness);
    }
    if (ck->ncrashes) {
        ck->crashes = xmalloc(ck->ncrashes * sizeof *ck->crashes);
        get(&rd, ck->crashes, ck->ncrashes * sizeof *ck->crashes);
    }
    get(&rd, spool_err, sizeof *spool_err);
    SIM_ASSERT(rd.left == 0);
}

/* --- worker -------------------------------------------------------------------------- */

/* The child's loop: a job number in, a result out, until the parent closes
 * the command pipe.  Never returns. */
static _Noreturn void worker_main(int cmd_fd, int res_fd, size_t njobs, const struct sweep_opts *o,
                                  const char *spool, sweep_job_fn job_at, void *ctx)
{
    struct buf b = {0};
    /* The parent decides what a Ctrl-C, or a SIGTERM sent to the whole
     * process group (by Slurm, say), stops. */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    for (;;) {
        uint64_t job;
        int rc = sim_read_all(cmd_fd, &job, sizeof job);
        if (rc == 0)
            _exit(0);
        if (rc < 0 || job >= njobs)
            _exit(3);
        struct sweep_job j;
        job_at(ctx, (size_t)job, &j);
        char path[PATH_MAX];
        FILE *tf = NULL, *recs = NULL;
        int32_t spool_err = 0;
        if (o->trace) {
            spool_path(path, spool, job, "txt");
            if (!(tf = fopen(path, "w")))
                spool_err = errno;
        }
        if (o->spool_trace && !spool_err) {
            spool_path(path, spool, job, "rec");
            if (!(recs = fopen(path, "w")))
                spool_err = errno;
        }
        struct sweep_out out = {0};
        if (!spool_err)
            run_one(&j, o, tf, recs, &out);
        int e1 = tf ? spool_end(tf, 1) : 0, e2 = recs ? spool_end(recs, 1) : 0;
        if (!spool_err)
            spool_err = e1 ? e1 : e2;
        b.n = 0;
        uint64_t head[2] = {job, 0};
        put(&b, head, sizeof head);
        encode(&out, spool_err, &b);
        uint64_t len = b.n - sizeof head;
        memcpy(b.p + sizeof head[0], &len, sizeof len);
        out_free(&out);
        if (sim_write_all(res_fd, b.p, b.n) != 0)
            _exit(3);
    }
}

/* --- parent ---------------------------------------------------------------------------- */

struct worker {
    pid_t pid;
    int cmd_fd, res_fd;            /* -1 when closed */
    int busy;                      /* a job was sent and its result not yet read */
};

struct slot {
    int full;
    char *msg;                     /* the serialized result */
    size_t len;
};

/* Closes the command pipes (idle workers then exit), kills the workers that
 * are still busy when stopping early, and reaps them all.  Returns -1 with
 * err if one ended abnormally and no error was recorded before. */
static int reap(struct worker *w, int nw, int early, int failed, char *err, size_t n)
{
    int ret = 0;
    for (int i = 0; i < nw; i++) {
        if (w[i].cmd_fd >= 0)
            close(w[i].cmd_fd);
        w[i].cmd_fd = -1;
        if (early && w[i].pid > 0)
            kill(w[i].pid, SIGKILL);
    }
    for (int i = 0; i < nw; i++) {
        if (w[i].res_fd >= 0)
            close(w[i].res_fd);
        w[i].res_fd = -1;
        if (w[i].pid <= 0)
            continue;
        int st;
        while (waitpid(w[i].pid, &st, 0) < 0 && errno == EINTR)
            ;
        if (!early && !failed && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
            if (WIFSIGNALED(st))
                snprintf(err, n, "sweep worker %d was killed by signal %d", i + 1, WTERMSIG(st));
            else
                snprintf(err, n, "sweep worker %d exited with status %d", i + 1, WEXITSTATUS(st));
            ret = -1;
            failed = 1;
        }
    }
    return ret;
}

/* Describes why a worker's pipe ended, after reaping it. */
static void worker_lost(struct worker *w, int i, char *err, size_t n)
{
    int st = 0;
    if (w[i].pid > 0) {
        kill(w[i].pid, SIGKILL);
        while (waitpid(w[i].pid, &st, 0) < 0 && errno == EINTR)
            ;
        w[i].pid = -1;
    }
    if (WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL)
        snprintf(err, n, "sweep worker %d was killed by signal %d", i + 1, WTERMSIG(st));
    else if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
        snprintf(err, n, "sweep worker %d exited with status %d", i + 1, WEXITSTATUS(st));
    else
        snprintf(err, n, "sweep worker %d stopped answering", i + 1);
}

/* The parent's side of a parallel sweep.  Invariant: jobs next_out ..
 * next_send - 1 are with a worker or in a slot, and next_send < next_out +
 * window, so the slot of a job (job % window) is free when its result
 * arrives. */
struct pool {
    struct worker *w;
    int nw;
    struct slot *slots;            /* [window]: results that came early */
    size_t window;
    size_t njobs, next_send, next_out;
    struct pollfd *pfd;            /* [nw]: the busy workers' result pipes */
    int *pidx;                     /* [nw]: the worker of each pfd */
    int failed;                    /* an error is recorded in err */
    char *err;
    size_t n;
    char spool[PATH_MAX];          /* the spool directory of the traces, "" none */
};

/* In a new worker: be killed when the parent process ends (Linux), and
 * exit at once if it already has. */
static void worker_orphan_guard(pid_t parent)
{
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    if (getppid() != parent)
        _exit(3);
}

/* Forks the workers, each with its own pair of pipes.  0, or -1 with err. */
static int start_workers(struct pool *p, const struct sweep_opts *o, sweep_job_fn job_at, void *ctx)
{
    struct worker *w = p->w;
    pid_t parent = getpid();
    for (int i = 0; i < p->nw; i++) {
        int cmd[2], res[2];
        if (pipe(cmd) != 0) {
            snprintf(p->err, p->n, "cannot start sweep worker: %s", strerror(errno));
            return -1;
        }
        if (pipe(res) != 0) {
            snprintf(p->err, p->n, "cannot start sweep worker: %s", strerror(errno));
            close(cmd[0]);
            close(cmd[1]);
            return -1;
        }
        pid_t pid = fork();
        if (pid < 0) {
            snprintf(p->err, p->n, "cannot start sweep worker: %s", strerror(errno));
            close(cmd[0]); close(cmd[1]); close(res[0]); close(res[1]);
            return -1;
        }
        if (pid == 0) {
            /* A worker dies with its parent, even in the middle of a job;
             * between jobs it would also see the command pipe's end. */
            worker_orphan_guard(parent);
            /* Only this worker's own ends stay open: a sibling's pipe held
             * open here would hide that sibling's end of file. */
            for (int k = 0; k < i; k++) {
                close(w[k].cmd_fd);
                close(w[k].res_fd);
            }
            close(cmd[1]);
            close(res[0]);
            worker_main(cmd[0], res[1], p->njobs, o, p->spool, job_at, ctx);
        }
        close(cmd[0]);
        close(res[1]);
        w[i] = (struct worker){.pid = pid, .cmd_fd = cmd[1], .res_fd = res[0]};
    }
    return 0;
}

/* Hands a job to every idle worker, within the window (none once a stop
 * was asked for).  0, or -1 with err. */
static int send_jobs(struct pool *p, const struct sweep_opts *o)
{
    if (o->stop && *o->stop)
        return 0;
    for (int i = 0; i < p->nw && p->next_send < p->njobs && p->next_send < p->next_out + p->window; i++) {
        if (p->w[i].busy)
            continue;
        uint64_t job = p->next_send;
        if (sim_write_all(p->w[i].cmd_fd, &job, sizeof job) != 0) {
            worker_lost(p->w, i, p->err, p->n);
            p->failed = 1;
            return -1;
        }
        p->w[i].busy = 1;
        p->next_send++;
    }
    return 0;
}

/* Delivers the results that are ready, in job order; the sink's value. */
static int deliver_ready(struct pool *p, const struct sweep_opts *o, sweep_sink_fn sink, void *ctx)
{
    int ret = 0;
    while (p->next_out < p->njobs && p->slots[p->next_out % p->window].full && !ret) {
        struct slot *s = &p->slots[p->next_out % p->window];
        struct sweep_out out = {0};
        int32_t e;
        decode(s->msg, s->len, &out, &e);
        char path[PATH_MAX];
        if (!e && o->trace) {
            spool_path(path, p->spool, p->next_out, "txt");
            e = spool_copy_text(path, o->trace);
        }
        if (!e && o->spool_trace) {
            spool_path(path, p->spool, p->next_out, "rec");
            if ((out.trace = fopen(path, "r")))
                unlink(path);
            else
                e = errno;
        }
        if (e) {
            snprintf(p->err, p->n, "cannot spool the trace in '%s': %s", p->spool, strerror(e));
            p->failed = 1;
            out_free(&out);
            return SWEEP_EWRITE;
        }
        ret = sink(ctx, p->next_out, &out);
        out_free(&out);
        free(s->msg);
        *s = (struct slot){0};
        p->next_out++;
    }
    return ret;
}

/* Reads one result from worker i into its slot.  0, or -1 with err. */
static int read_result(struct pool *p, int i)
{
    struct worker *w = &p->w[i];
    uint64_t head[2];
    if (sim_read_all(w->res_fd, head, sizeof head) != 1) {
        worker_lost(p->w, i, p->err, p->n);
        p->failed = 1;
        return -1;
    }
    uint64_t job = head[0], len = head[1];
    SIM_ASSERT(job >= p->next_out && job < p->next_out + p->window && job < p->next_send);
    struct slot *s = &p->slots[job % p->window];
    SIM_ASSERT(!s->full);
    s->msg = xmalloc(len ? (size_t)len : 1);
    if (sim_read_all(w->res_fd, s->msg, (size_t)len) != 1 && len) {
        free(s->msg);
        s->msg = NULL;
        worker_lost(p->w, i, p->err, p->n);
        p->failed = 1;
        return -1;
    }
    s->len = (size_t)len;
    s->full = 1;
    w->busy = 0;
    return 0;
}

/* Waits until a busy worker has a result and reads it (those of every
 * worker that is ready).  0 (also when no worker is busy, or on EINTR), or
 * -1 with err. */
static int collect_results(struct pool *p)
{
    int np = 0;
    for (int i = 0; i < p->nw; i++) {
        if (!p->w[i].busy)
            continue;
        p->pfd[np] = (struct pollfd){.fd = p->w[i].res_fd, .events = POLLIN};
        p->pidx[np++] = i;
    }
    if (np == 0)
        return 0; /* everything sent was delivered: send more */
    int pr = poll(p->pfd, (nfds_t)np, -1);
    if (pr < 0 && errno == EINTR)
        return 0;
    if (pr < 0) {
        snprintf(p->err, p->n, "sweep: poll: %s", strerror(errno));
        p->failed = 1;
        return -1;
    }
    for (int k = 0; k < np; k++) {
        if (!(p->pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        if (read_result(p, p->pidx[k]) != 0)
            return -1;
    }
    return 0;
}

static int sweep_parallel(size_t njobs, const struct sweep_opts *o, sweep_job_fn job_at, sweep_sink_fn sink,
                          void *ctx, char *err, size_t n)
{
    struct pool p = {.nw = o->workers, .njobs = njobs, .err = err, .n = n};
    if ((size_t)p.nw > njobs)
        p.nw = (int)njobs;
    p.window = (size_t)p.nw * SWEEP_WINDOW_PER_WORKER;
    p.w = xcalloc((size_t)p.nw, sizeof *p.w);
    p.slots = xcalloc(p.window, sizeof *p.slots);
    p.pfd = xcalloc((size_t)p.nw, sizeof *p.pfd);
    p.pidx = xcalloc((size_t)p.nw, sizeof *p.pidx);
    for (int i = 0; i < p.nw; i++)
        p.w[i] = (struct worker){.pid = -1, .cmd_fd = -1, .res_fd = -1};

    /* A worker that dies must not kill us with SIGPIPE on the next job. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_pipe;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old_pipe);
    fflush(NULL); /* a child must not inherit buffered output and print it twice */

    int ret = 0;
    if ((o->trace || o->spool_trace) && spool_dir_make(p.spool, err, n) != 0)
        ret = SWEEP_EWRITE;
    if (!ret)
        ret = start_workers(&p, o, job_at, ctx);
    if (ret)
        p.failed = 1;
    while (!ret && p.next_out < njobs) {
        if ((ret = send_jobs(&p, o)) != 0)
            break;
        if ((ret = deliver_ready(&p, o, sink, ctx)) != 0 || p.next_out >= njobs)
            break;
        if (o->stop && *o->stop && p.next_out == p.next_send) {
            ret = SWEEP_STOPPED; /* every job sent was delivered */
            break;
        }
        ret = collect_results(&p);
    }
    for (size_t k = 0; k < p.window; k++)
        free(p.slots[k].msg);
    free(p.slots);
    free(p.pfd);
    free(p.pidx);
    int r2 = reap(p.w, p.nw, ret != 0, p.failed, err, n);
    if (!ret)
        ret = r2;
    if (p.spool[0])
        spool_dir_remove(p.spool);
    sigaction(SIGPIPE, &old_pipe, NULL);
    free(p.w);
    return ret;
}

int sweep_run(size_t njobs, const struct sweep_opts *o, sweep_job_fn job_at, sweep_sink_fn sink, void *ctx,
              char *err, size_t n)
{
    SIM_ASSERT(o->workers >= 1 && o->workers <= SWEEP_MAX_WORKERS);
    if (njobs == 0)
        return 0;
    if (o->workers == 1 || njobs == 1)
        return sweep_serial(njobs, o, job_at, sink, ctx, err, n);
    return sweep_parallel(njobs, o, job_at, sink, ctx, err, n);
}

/* --- results for other forked children ------------------------------------------------ */

void sweep_result_encode(const struct sim_result *r, char **buf, size_t *len)
{
    struct buf b = {0};
    struct sweep_out out = {.res = *r, .wall_us = 0};
    encode(&out, 0, &b);
    *buf = b.p;
    *len = b.n;
}

void sweep_result_decode(const char *buf, size_t len, struct sim_result *out)
{
    struct sweep_out o = {0};
    int32_t spool_err;
    decode(buf, len, &o, &spool_err);
    *out = o.res;
}
