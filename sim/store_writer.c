/* store_writer.c: the dedicated writer of a results database (see
 * store.h).
 *
 * A sweep with --db spends most of its database time waiting: each run is
 * one transaction, and each commit waits for the disk.  Done inline, that
 * wait stops the process that hands jobs to the workers and reads their
 * results, so with -j 2 the workers sit idle while it lasts.  The writer
 * takes the wait off that path: the caller copies a run into a bounded
 * queue and goes on; one thread takes runs off the queue in order and
 * writes each with store_write_run, so the database is exactly what an
 * inline writer would have made (same rows, same order, same run ids).
 *
 * Invariant (under mu): queue holds the runs [head, head + count) mod depth
 * that were handed over and not yet written; once failed is set, nothing
 * more is written and put() refuses. */
#include "sim/store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/util.h"

struct entry {
    struct store_run r;
    struct sim_result res;         /* owned; r.res points here */
};

struct store_writer {
    struct store *st;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t nonempty, nonfull;
    struct entry *queue;           /* [depth] */
    int depth, head, count;
    int closing;                   /* finish() was called: exit when empty */
    int failed;
    char err[512];
};

static void entry_free(struct entry *e)
{
    sim_result_free(&e->res);
    free((void *)e->r.expects);
    if (e->r.trace)
        fclose(e->r.trace);
    memset(e, 0, sizeof *e);
}

static void *writer_main(void *arg)
{
    struct store_writer *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (w->count == 0 && !w->closing)
            pthread_cond_wait(&w->nonempty, &w->mu);
        if (w->count == 0)
            break;
        struct entry e = w->queue[w->head];
        w->head = (w->head + 1) % w->depth;
        w->count--;
        pthread_cond_signal(&w->nonfull);
        int skip = w->failed;
        pthread_mutex_unlock(&w->mu);

        char err[512] = "";
        int rc = 0;
        if (!skip) {
            int64_t id;
            e.r.res = &e.res;
            rc = store_write_run(w->st, &e.r, &id, err, sizeof err);
        }
        entry_free(&e);

        pthread_mutex_lock(&w->mu);
        if (rc && !w->failed) {
            w->failed = 1;
            snprintf(w->err, sizeof w->err, "%s", err);
            pthread_cond_signal(&w->nonfull); /* a put() waiting for room must see it */
        }
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

struct store_writer *store_writer_start(struct store *st, int depth)
{
    SIM_ASSERT(st && depth >= 1);
    struct store_writer *w = xcalloc(1, sizeof *w);
    w->st = st;
    w->depth = depth;
    w->queue = xcalloc((size_t)depth, sizeof *w->queue);
    if (pthread_mutex_init(&w->mu, NULL) || pthread_cond_init(&w->nonempty, NULL) ||
        pthread_cond_init(&w->nonfull, NULL))
        sim_bug(__FILE__, __LINE__, "cannot set up the writer's locks");
    if (pthread_create(&w->thread, NULL, writer_main, w) != 0)
        sim_bug(__FILE__, __LINE__, "cannot start the database writer thread");
    return w;
}

int store_writer_put(struct store_writer *w, const struct store_run *r, struct sim_result *res, char *err,
                     size_t n)
{
    SIM_ASSERT(r->res == res);
    pthread_mutex_lock(&w->mu);
    while (w->count == w->depth && !w->failed)
        pthread_cond_wait(&w->nonfull, &w->mu);
    if (w->failed) {
        snprintf(err, n, "%s", w->err);
        pthread_mutex_unlock(&w->mu);
        sim_result_free(res);
        free((void *)r->expects);
        if (r->trace)
            fclose(r->trace);
        return -1;
    }
    struct entry *e = &w->queue[(w->head + w->count) % w->depth];
    e->r = *r;
    e->res = *res;
    e->r.res = NULL;               /* set to &e->res when written: the entry moves */
    *res = (struct sim_result){0};
    w->count++;
    pthread_cond_signal(&w->nonempty);
    pthread_mutex_unlock(&w->mu);
    return 0;
}

int store_writer_finish(struct store_writer *w, char *err, size_t n)
{
    pthread_mutex_lock(&w->mu);
    w->closing = 1;
    pthread_cond_signal(&w->nonempty);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    int ret = 0;
    if (w->failed) {
        snprintf(err, n, "%s", w->err);
        ret = -1;
    }
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->nonempty);
    pthread_cond_destroy(&w->nonfull);
    free(w->queue);
    free(w);
    return ret;
}
