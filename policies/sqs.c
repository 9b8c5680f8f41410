/* sqs.c: Amazon SQS (a standard queue) with a pool of consumers that
 * receive, process and delete messages: visibility timeout,
 * ChangeMessageVisibility heartbeats, maxReceiveCount and a dead-letter
 * queue, short and long polling.  docs/policy-sqs.md has the rules and the
 * AWS documentation they come from; this comment is the map.
 *
 * Mapping.  Every item is a message for its consumer; every fire of a
 * producer's schedule is a message sent at the fire by a scheduler outside
 * the host (EventBridge Scheduler), whose receipt runs the producer for
 * that fire.  The queue is the service's: it outlives the host, so at a
 * restart the messages sent while it was down are there (sim_item_count).
 * The host is the consumers' machine; `crash worker K` is consumer K,
 * `crash server` the SQS endpoint (receives, deletes and visibility changes
 * fail).
 *
 * A consumer loops: ReceiveMessage takes up to max_messages visible
 * messages, oldest first; each receive makes a message invisible for
 * visibility_timeout and counts it (a message received more than
 * max_receive_count times goes to the dead-letter queue instead: its item is
 * dropped).  The consumer processes its batch one message after another
 * (the later ones' timeouts run meanwhile), deletes each one that
 * succeeded; a failed one is left to reappear when its timeout ends.  A
 * receive that finds nothing waits up to wait_time for a message (long
 * polling), or returns empty (short polling: the next receive follows
 * after receive_rtt, a wake-up each).  With heartbeat on, a consumer calls
 * ChangeMessageVisibility every heartbeat, setting the timeout to
 * heartbeat_visibility from the call, never past 12 h after the receive.
 * A message still processed when its timeout ends is received again by
 * another consumer: a duplicate.  Messages older than retention are
 * deleted by the service.
 *
 * Key invariant: a message row is PENDING (visible at available_us),
 * RUNNING (in flight until available_us, when it is visible again: the row
 * stays claimable by time alone) or gone (deleted, dead-lettered,
 * expired); a BUSY consumer holds a batch it received and runs one message
 * of it at a time.
 *
 * Durable: the messages (one that left the queue is forgotten once no
 * consumer's batch may read it), the scheduler's progress per producer, the
 * items already sent.  Volatile: the consumers, their batches and timers,
 * the set of waiting consumers.
 *
 * Cost.  An event touches only the consumers it concerns: the waiting ones
 * are a set that yields them lowest index first (struct idxset, sim/idxset.h), so a
 * message that becomes visible costs the consumers it wakes, not the pool.
 * Short polling re-arms every waiting consumer's loop when the next visible
 * instant changes (each loop is an event of its own), and otherwise only
 * the loops that are not armed for it yet.  Per consumer: 24 bytes, 12 per
 * place of a batch (max_messages), 2 bits in the sets. */
#include <stdlib.h>

#include "sim/idxset.h"
#include "sim/jobs.h"
#include "sim/policy_api.h"
#include "sim/util.h"

enum { T_VISIBLE = 1, T_HEARTBEAT, T_SEND, T_POLL }; /* T_POLL + k: consumer k's receive loop */
enum { C_IDLE, C_WAITING, C_BUSY, C_DOWN };

#define NONE UINT64_MAX
#define MAX_BATCH 10
#define VIS_CEILING_US (12 * 3600 * US_PER_S) /* ChangeMessageVisibility: 12 h from the receive */

struct sq_msg {                    /* side data of a message row (its extra bytes) */
    int64_t sent_us;
    int64_t received_us;           /* the latest receive */
    uint32_t receives;             /* ApproximateReceiveCount: the current receipt handle */
    uint32_t holds;                /* places in consumers' batches that may still read it */
};

struct sq_durable {
    int init;
    struct jobtab msgs;            /* available_us: visible from; due_us: a producer's fire; item;
                                      extra: sq_msg */
    int64_t *sent;                 /* [nh] producers: the last fire sent, -1 none */
    uint64_t seen;                 /* items 0..seen-1 are messages already */
};

struct consumer {                  /* its batch: policy.batch and .receipt from k * max_messages */
    uint64_t run;
    sim_timer hb;
    int32_t tick;                  /* WAITING: its receive loop, a ticker; -1 none */
    uint8_t state;                 /* C_* */
    uint8_t n, next;               /* batch size, the message being processed + 1 */
};

struct policy {
    struct sim *sim;
    struct sq_durable *d;
    const struct sim_topo *t;

    int64_t vis_us, wait_us, hb_us, hb_vis_us, retention_us, delay_us, rtt_us;
    uint32_t max_receive, max_messages, ncons;
    int stale_deletes;             /* stale_delete=deletes: an older receipt handle deletes too */

    struct consumer *c;
    uint64_t *batch;               /* [ncons * max_messages] the batches' messages */
    uint32_t *receipt;             /* the receive each message of a batch came from */
    struct idxset waiting;         /* the WAITING consumers */
    struct idxset unarmed;         /* short polling: waiting ones whose loop is not armed for armed_at */
    int64_t armed_at;              /* short polling: the instant the other waiting loops are armed for */
    int *send_alarm;               /* [nh] producers */
    int vis_alarm;
    int server_down, stopping;
};

static const struct param_def sq_params[] = {
    {"visibility_timeout", PARAM_DURATION, "30s", NULL, 0, 12 * 3600 * US_PER_S,
     "SQS API CreateQueue VisibilityTimeout: default 30 s, 0 to 12 h",
     "a received message is invisible for this long, then visible again unless deleted"},
    {"max_receive_count", PARAM_INT, "0", NULL, 0, 1000,
     "SQS RedrivePolicy maxReceiveCount (1 to 1000; no redrive policy by default)",
     "0: no dead-letter queue; else a message received more often goes to the dead-letter queue"},
    {"wait_time", PARAM_DURATION, "20s", NULL, 0, 20 * US_PER_S,
     "SQS ReceiveMessage WaitTimeSeconds, at most 20 s (the queue's own default 0 is short polling; consumer "
     "libraries ask for 20 s: spring-attic/spring-cloud-aws PR #340, the Lambda event source mapping)",
     "how long an empty receive waits for a message; 0: short polling"},
    {"max_messages", PARAM_INT, "1", NULL, 1, MAX_BATCH, "SQS ReceiveMessage MaxNumberOfMessages: default 1, 1 to 10",
     "messages one receive takes; they are processed one after another"},
    {"heartbeat", PARAM_DURATION, "0", NULL, 0, 12 * 3600 * US_PER_S,
     "SQS ChangeMessageVisibility (a consumer's extension loop; none by default)",
     "0: off; else the consumer extends the message's timeout every this while it processes it"},
    {"heartbeat_visibility", PARAM_DURATION, "0", NULL, 0, 12 * 3600 * US_PER_S,
     "SQS ChangeMessageVisibility VisibilityTimeout (counted from the call)",
     "the timeout each extension sets; 0: visibility_timeout"},
    {"retention", PARAM_DURATION, "4d", NULL, 60 * US_PER_S, 14 * US_PER_DAY,
     "SQS MessageRetentionPeriod: default 345600 s (4 days), 60 s to 14 days",
     "a message older than this is deleted by the service"},
    {"delay", PARAM_DURATION, "0", NULL, 0, 15 * 60 * US_PER_S, "SQS DelaySeconds: default 0, at most 900 s",
     "a new message is invisible for this long"},
    {"consumers", PARAM_INT, "4", NULL, 1, 1000000,
     "simrun: the application's receive loops (SQS has no such setting; 4, as vistimeout's pool)",
     "concurrent consumers; crash worker K takes consumer K down"},
    {"stale_delete", PARAM_ENUM, "ignored", "ignored|deletes", 0, 0,
     "SQS API DeleteMessage: \"you must provide the most recently received ReceiptHandle for the message "
     "(otherwise, the request succeeds, but the message will not be deleted)\"; deletes: as earlier editions "
     "allowed (\"might not be deleted\") and localstack does",
     "a delete with the receipt of an earlier receive: ignored (the message stays, to be received again) or deletes it"},
    {"receive_rtt", PARAM_DURATION, "50ms", NULL, US_PER_MS, US_PER_MIN,
     "spring-attic/spring-cloud-aws#29: 16 to 26 empty receives a second on a single EC2 node",
     "the round trip of an empty short-polling receive: the pace of a consumer's loop on an empty queue"},
};

static int is_consumer(const struct policy *p, uint32_t h) { return p->t->h_kind[h] == H_CONSUMER; }

static uint64_t *batch_of(struct policy *p, uint32_t k) { return &p->batch[(size_t)k * p->max_messages]; }

static uint32_t *receipt_of(struct policy *p, uint32_t k) { return &p->receipt[(size_t)k * p->max_messages]; }

static struct sq_msg *msg_of(struct policy *p, uint64_t id) { return jobs_extra(&p->d->msgs, id); }

static int msg_in_queue(const struct job *j) { return j->status != JOB_COMPLETED && j->status != JOB_FAILED; }

/* --- messages --------------------------------------------------------------------- */

static uint64_t msg_send(struct policy *p, uint32_t h, int64_t due, uint64_t item, int64_t sent_us, int64_t now_us)
{
    struct sq_durable *d = p->d;
    int64_t vis = sent_us + p->delay_us;
    struct job j = {.handler = h, .status = JOB_PENDING, .available_us = vis > now_us ? vis : now_us,
                    .due_us = due, .item = item};
    uint64_t id = jobs_add(&d->msgs, &j);
    *msg_of(p, id) = (struct sq_msg){.sent_us = sent_us};
    return id;
}

/* A message that left the queue is forgotten once no consumer's batch may
 * read it again (the one it processes, the ones after it), so that memory
 * follows the messages in the queue and in flight, not every one sent. */
static void msg_forget_if_done(struct policy *p, uint64_t id)
{
    struct job *j = jobs_find(&p->d->msgs, id);
    if (j && !msg_in_queue(j) && msg_of(p, id)->holds == 0)
        jobs_forget(&p->d->msgs, id);
}

/* A consumer lets go of a place of its batch that named message id. */
static void place_release(struct policy *p, uint64_t id)
{
    struct sq_msg *m = msg_of(p, id);
    SIM_ASSERT(m->holds > 0);
    m->holds--;
    msg_forget_if_done(p, id);
}

/* A BUSY consumer holds the places of its batch from the one it processes
 * (next - 1) on; it drops them all (its batch is over, or it went down). */
static void batch_drop(struct policy *p, uint32_t k)
{
    struct consumer *c = &p->c[k];
    for (uint32_t i = c->next ? c->next - 1 : 0; i < c->n; i++)
        place_release(p, batch_of(p, k)[i]);
    c->n = c->next = 0;
}

/* The message leaves the queue (deleted, dead-lettered, expired); an item
 * that never got processed is dropped with it. */
static void msg_gone(struct policy *p, uint64_t id, enum job_status st)
{
    struct job *j = jobs_get(&p->d->msgs, id);
    uint64_t item = j->item;
    jobs_update(&p->d->msgs, id, st, SIM_NEVER);
    if (st != JOB_COMPLETED && item != UINT64_MAX && sim_item(p->sim, item)->state == ITEM_PENDING)
        sim_item_drop(p->sim, item);
    msg_forget_if_done(p, id);
}

/* The scheduler outside sends every fire up to now it has not sent. */
static void send_fires(struct policy *p, uint32_t h, int64_t now_us)
{
    int64_t t;
    while ((t = sim_sched_next(p->sim, h, p->d->sent[h], 0)) != SIM_NEVER && t <= now_us) {
        msg_send(p, h, t, UINT64_MAX, t, now_us);
        p->d->sent[h] = t;
    }
    sim_alarm(p->sim, p->send_alarm[h], t);
}

/* Items published while the host was down are in the queue too. */
static void send_items(struct policy *p, int64_t now_us)
{
    uint64_t n = sim_item_count(p->sim);
    for (uint64_t i = p->d->seen; i < n; i++) {
        const struct sim_item *it = sim_item(p->sim, i);
        if (it->state == ITEM_PENDING)
            msg_send(p, it->consumer, -1, i, it->publish_us, now_us);
    }
    p->d->seen = n;
}

/* --- consumers --------------------------------------------------------------------- */

static void consumer_next(struct policy *p, uint32_t k, int64_t now_us);

/* ReceiveMessage for consumer k: up to max_messages visible messages. */
static uint32_t receive(struct policy *p, uint32_t k, int64_t now_us)
{
    struct consumer *c = &p->c[k];
    c->n = c->next = 0;
    uint64_t id;
    while (c->n < p->max_messages && (id = jobs_next_due(&p->d->msgs, now_us)) != NONE) {
        struct sq_msg *m = msg_of(p, id);
        if (now_us - m->sent_us >= p->retention_us) {
            msg_gone(p, id, JOB_FAILED);
            continue;
        }
        if (p->max_receive && m->receives >= p->max_receive) {
            sim_note(p->sim, jobs_get(&p->d->msgs, id)->handler, "message moved to the dead-letter queue");
            msg_gone(p, id, JOB_FAILED);
            continue;
        }
        m->receives++;
        SIM_ASSERT(m->holds < UINT32_MAX); /* places: at most consumers * max_messages */
        m->holds++;
        m->received_us = now_us;
        jobs_update(&p->d->msgs, id, JOB_RUNNING, now_us + p->vis_us);
        batch_of(p, k)[c->n] = id;
        receipt_of(p, k)[c->n++] = m->receives;
    }
    return c->n;
}

/* An idle consumer's loop of empty receives: one every wait_time (long
 * polling: each returns empty after the wait) or every receive_rtt (short
 * polling).  It is a ticker: every empty receive counts as a wake-up,
 * and costs an event only when it finds something (short polling: armed
 * for the next visible message; long polling returns at once when one
 * becomes visible, which dispatch() does). */
static void consumer_wait(struct policy *p, uint32_t k)
{
    struct consumer *c = &p->c[k];
    c->state = C_WAITING;
    c->tick = sim_ticker_new(p->sim, p->wait_us > 0 ? p->wait_us : p->rtt_us, T_POLL + k);
    idxset_add(&p->waiting, k);
    if (p->wait_us == 0)
        idxset_add(&p->unarmed, k); /* a new loop: armed for nothing yet */
}

static void consumer_unwait(struct policy *p, uint32_t k)
{
    struct consumer *c = &p->c[k];
    if (c->tick >= 0)
        sim_ticker_stop(p->sim, c->tick);
    c->tick = -1;
    if (c->state == C_WAITING) {
        idxset_del(&p->waiting, k);
        idxset_del(&p->unarmed, k);
    }
    c->state = C_IDLE;
}

/* Consumer k asks for messages; with none it waits. */
static void consumer_poll(struct policy *p, uint32_t k, int64_t now_us)
{
    struct consumer *c = &p->c[k];
    if (c->state == C_DOWN || c->state == C_BUSY || p->stopping)
        return;
    if (!p->server_down && jobs_next_due(&p->d->msgs, now_us) != NONE) {
        consumer_unwait(p, k);
        if (receive(p, k, now_us) > 0) {
            c->state = C_BUSY;
            consumer_next(p, k, now_us);
            return;
        }
    }
    if (c->state != C_WAITING)
        consumer_wait(p, k);
}

/* Consumer k processes the next message of its batch, or receives again. */
static void consumer_next(struct policy *p, uint32_t k, int64_t now_us)
{
    struct consumer *c = &p->c[k];
    if (c->next >= c->n || p->stopping) {
        batch_drop(p, k);
        c->state = C_IDLE;
        c->tick = -1;
        consumer_poll(p, k, now_us);
        return;
    }
    if (c->next > 0) /* the message it processed: done with */
        place_release(p, batch_of(p, k)[c->next - 1]);
    uint64_t id = batch_of(p, k)[c->next++];
    struct job *j = jobs_get(&p->d->msgs, id);
    struct run_req rq = RUN_REQ_INIT;
    rq.handler = j->handler;
    rq.due_us = j->due_us;
    rq.worker = k + 1;
    rq.tag = id;
    rq.reason = msg_of(p, id)->receives > 1 ? REASON_RETRY : is_consumer(p, j->handler) ? REASON_EVENT : REASON_SCHEDULE;
    uint64_t item = j->item;
    if (item != UINT64_MAX) {
        rq.offer = &item;
        rq.noffer = 1;
    }
    c->run = sim_run_start(p->sim, &rq);
    if (p->hb_us)
        c->hb = sim_timer_at(p->sim, now_us + p->hb_us, T_HEARTBEAT, k);
}

/* Short polling: each waiting consumer's loop is armed for at, lowest
 * index first.  A loop armed for at before (and not delivered since) would
 * be armed for the same tick again, a no-op: when at is unchanged only the
 * loops not armed for it yet are armed. */
static void arm_waiting(struct policy *p, int64_t at)
{
    const struct idxset *s = at == p->armed_at ? &p->unarmed : &p->waiting;
    for (uint32_t k = idxset_next(s, 0); k != IDXSET_NONE; k = idxset_next(s, k + 1)) {
        SIM_ASSERT(p->c[k].state == C_WAITING);
        sim_ticker_arm(p->sim, p->c[k].tick, at);
    }
    for (uint32_t k = idxset_next(&p->unarmed, 0); k != IDXSET_NONE; k = idxset_next(&p->unarmed, k + 1))
        idxset_del(&p->unarmed, k);
    p->armed_at = at;
}

/* Messages became visible.  Long polling: the waiting consumers get them
 * at once, lowest index first, and an alarm stands at the next message to
 * become visible while someone waits.  Short polling: each waiting
 * consumer's loop is armed for the next visible message (its next empty
 * receive after it finds it).  Only the consumers served are visited. */
static void dispatch(struct policy *p, int64_t now_us)
{
    if (p->server_down || p->stopping)
        return;
    int64_t at = SIM_NEVER;
    if (jobs_peek(&p->d->msgs, &at) == NONE)
        at = SIM_NEVER;
    if (p->wait_us == 0) {
        arm_waiting(p, at);
    } else {
        /* a poll changes only its own consumer, which leaves the set or
         * waits again at the same index */
        for (uint32_t k = idxset_next(&p->waiting, 0); k != IDXSET_NONE && at <= now_us;
             k = idxset_next(&p->waiting, k + 1)) {
            SIM_ASSERT(p->c[k].state == C_WAITING);
            consumer_poll(p, k, now_us);
            if (jobs_peek(&p->d->msgs, &at) == NONE) /* it took what was visible */
                at = SIM_NEVER;
        }
    }
    int waiting = p->waiting.count != 0;
    sim_alarm(p->sim, p->vis_alarm, p->wait_us > 0 && waiting && at > now_us ? at : SIM_NEVER);
}

/* ChangeMessageVisibility by consumer k for the message it processes.  It
 * takes effect only while the message is in flight (its timeout not yet
 * ended: the API's MessageNotInflight), for its own, latest receipt, and
 * only if the new timeout ends within 12 h of that receive: beyond it the
 * call is rejected, not shortened to the ceiling ("Amazon SQS doesn't
 * automatically recalculate and increase the timeout to the maximum time
 * remaining", API Reference). */
static void heartbeat(struct policy *p, uint32_t k, int64_t now_us)
{
    struct consumer *c = &p->c[k];
    c->hb = 0;
    if (c->state != C_BUSY || c->next == 0)
        return;
    uint64_t id = batch_of(p, k)[c->next - 1];
    struct sq_msg *m = msg_of(p, id);
    struct job *j = jobs_get(&p->d->msgs, id);
    int64_t until = now_us + (p->hb_vis_us ? p->hb_vis_us : p->vis_us);
    if (!p->server_down && j->status == JOB_RUNNING && j->available_us > now_us &&
        m->receives == receipt_of(p, k)[c->next - 1] && until <= m->received_us + VIS_CEILING_US)
        jobs_update(&p->d->msgs, id, JOB_RUNNING, until);
    c->hb = sim_timer_at(p->sim, now_us + p->hb_us, T_HEARTBEAT, k);
}

/* --- hooks ---------------------------------------------------------------------------- */

static struct policy *sq_create(struct sim *sim, void *durable, const struct params *ps)
{
    struct policy *p = xcalloc(1, sizeof *p);
    p->sim = sim;
    p->d = durable;
    p->t = sim_topo(sim);
    p->vis_us = params_get(ps, "visibility_timeout");
    p->max_receive = (uint32_t)params_get(ps, "max_receive_count");
    p->wait_us = params_get(ps, "wait_time");
    p->max_messages = (uint32_t)params_get(ps, "max_messages");
    p->hb_us = params_get(ps, "heartbeat");
    p->hb_vis_us = params_get(ps, "heartbeat_visibility");
    p->retention_us = params_get(ps, "retention");
    p->delay_us = params_get(ps, "delay");
    p->ncons = (uint32_t)params_get(ps, "consumers");
    sim_declare_pool(sim, p->ncons); /* its idle workers may all poll at one instant */
    p->rtt_us = params_get(ps, "receive_rtt");
    p->stale_deletes = params_get(ps, "stale_delete") == 1;
    p->c = xcalloc(p->ncons, sizeof *p->c);
    p->batch = xcalloc((size_t)p->ncons * p->max_messages, sizeof *p->batch);
    p->receipt = xcalloc((size_t)p->ncons * p->max_messages, sizeof *p->receipt);
    sim_declare_worker_rows(sim, p->c, sizeof *p->c, p->ncons);
    sim_declare_worker_rows(sim, p->batch, p->max_messages * sizeof *p->batch, p->ncons);
    idxset_init(&p->waiting, p->ncons);
    idxset_init(&p->unarmed, p->ncons);
    p->armed_at = INT64_MIN; /* no loop armed yet */
    p->send_alarm = xcalloc(p->t->nh + 1, sizeof *p->send_alarm);
    for (uint32_t h = 0; h < p->t->nh; h++)
        p->send_alarm[h] = is_consumer(p, h) ? -1 : sim_alarm_new(sim, T_SEND, h);
    p->vis_alarm = sim_alarm_new(sim, T_VISIBLE, 0);
    struct sq_durable *d = p->d;
    if (!d->init) {
        d->init = 1;
        jobs_init(&d->msgs, sim_durable_realloc, sim);
        jobs_set_extra(&d->msgs, sizeof(struct sq_msg));
        d->sent = sim_dalloc(sim, (p->t->nh + 1) * sizeof *d->sent);
        for (uint32_t h = 0; h < p->t->nh; h++)
            d->sent[h] = -1;
    }
    sim_declare_rows(sim, d->sent, sizeof *d->sent);
    sim_declare_run_rows(sim, &d->msgs);
    sim_declare_rows(sim, p->send_alarm, sizeof *p->send_alarm);
    sim_declare_handler_tag(sim, T_SEND);
    return p;
}

static void sq_destroy(struct policy *p)
{
    free(p->c);
    free(p->batch);
    free(p->receipt);
    idxset_free(&p->waiting);
    idxset_free(&p->unarmed);
    free(p->send_alarm);
    free(p);
}

/* The consumers died with the host, and their batches with them: no place
 * holds a message any more (O(messages kept)). */
static void holds_reset(struct policy *p)
{
    struct jobtab *t = &p->d->msgs;
    for (uint64_t id = jobs_next_kept(t, 0); id < t->n; id = jobs_next_kept(t, id + 1)) {
        msg_of(p, id)->holds = 0;
        msg_forget_if_done(p, id);
    }
}

static void sq_start(struct policy *p, int restart, int64_t now_us)
{
    if (restart)
        holds_reset(p);
    send_items(p, now_us);
    for (uint32_t h = 0; h < p->t->nh; h++)
        if (!is_consumer(p, h))
            send_fires(p, h, now_us);
    for (uint32_t k = 0; k < p->ncons; k++) {
        p->c[k] = (struct consumer){.state = C_IDLE, .tick = -1};
        consumer_poll(p, k, now_us);
    }
    dispatch(p, now_us);
}

static void sq_on_publish(struct policy *p, uint32_t h, uint64_t item, int64_t now_us)
{
    send_items(p, now_us); /* this item, and any before it not yet sent */
    dispatch(p, now_us);
}

static void sq_on_timer(struct policy *p, uint32_t tag, uint64_t arg, int64_t now_us)
{
    if (tag >= T_POLL) { /* short polling: the empty receive that finds a message */
        uint32_t k = tag - T_POLL;
        SIM_ASSERT(k < p->ncons && p->c[k].state == C_WAITING && idxset_has(&p->waiting, k));
        idxset_add(&p->unarmed, k); /* its loop delivered its tick: armed for nothing now */
        consumer_poll(p, k, now_us);
        dispatch(p, now_us);
        return;
    }
    switch (tag) {
    case T_HEARTBEAT:
        heartbeat(p, (uint32_t)arg, now_us);
        break;
    case T_SEND:
        send_fires(p, (uint32_t)arg, now_us);
        break;
    case T_VISIBLE:
        break;
    default:
        SIM_ASSERT(0 && "unknown timer tag");
    }
    dispatch(p, now_us);
}

static void sq_on_run_end(struct policy *p, const struct run_result *r, int64_t now_us)
{
    SIM_ASSERT(r->worker >= 1 && r->worker <= p->ncons);
    uint32_t k = r->worker - 1;
    struct consumer *c = &p->c[k];
    SIM_ASSERT(c->state == C_BUSY && c->run == r->run);
    sim_timer_cancel(p->sim, c->hb);
    c->hb = 0;
    c->run = 0;
    uint64_t id = r->tag;
    struct job *j = jobs_get(&p->d->msgs, id);
    /* DeleteMessage after a success.  With the receipt of an earlier
     * receive (another consumer received the message since) the request
     * succeeds but the message stays (stale_delete=ignored, the API
     * Reference's rule) or is deleted (deletes).  A failure leaves the
     * message to reappear when its timeout ends. */
    int latest = msg_of(p, id)->receives == receipt_of(p, k)[c->next - 1];
    if (r->outcome == OUT_COMMITTED && !p->server_down && (latest || p->stale_deletes) &&
        j->status != JOB_COMPLETED && j->status != JOB_FAILED)
        msg_gone(p, id, JOB_COMPLETED);
    consumer_next(p, k, now_us);
    dispatch(p, now_us);
}

static void sq_on_part(struct policy *p, int target, uint32_t index, int up, int64_t now_us)
{
    if (target == CRASH_SERVER) {
        p->server_down = !up; /* receives fail meanwhile: the loops go on, finding nothing */
        /* an IDLE consumer is one between batches while the host stops,
         * whose poll does nothing: the waiting ones are the ones to poll */
        if (up)
            for (uint32_t k = idxset_next(&p->waiting, 0); k != IDXSET_NONE; k = idxset_next(&p->waiting, k + 1))
                consumer_poll(p, k, now_us);
        dispatch(p, now_us);
        return;
    }
    if (target != CRASH_WORKER && target != CRASH_WORKERS)
        return;
    uint32_t from = target == CRASH_WORKER ? index : 0, to = target == CRASH_WORKER ? index + 1 : p->ncons;
    for (uint32_t k = from; k < to && k < p->ncons; k++) {
        struct consumer *c = &p->c[k];
        if (!up && c->state != C_DOWN) {
            /* its run died with it; its batch reappears when the timeouts end */
            if (c->state == C_BUSY)
                batch_drop(p, k);
            consumer_unwait(p, k);
            sim_timer_cancel(p->sim, c->hb);
            *c = (struct consumer){.state = C_DOWN, .tick = -1};
        } else if (up && c->state == C_DOWN) {
            c->state = C_IDLE;
            consumer_poll(p, k, now_us);
        }
    }
    dispatch(p, now_us);
}

static void sq_on_stop(struct policy *p, int64_t now_us) { p->stopping = 1; }

const struct policy_ops policy_sqs = {
    .abi = POLICY_ABI,
    .name = "sqs",
    .summary = "Amazon SQS with a consumer pool: visibility timeout, ChangeMessageVisibility heartbeats, "
               "maxReceiveCount and a dead-letter queue, short and long polling",
    .seeds = "AWS SQS API Reference and Developer Guide",
    .params = sq_params,
    .nparams = (int)(sizeof sq_params / sizeof sq_params[0]),
    .durable_size = sizeof(struct sq_durable),
    .promise = PROMISE_UNIT, /* a message processed by two consumers at once breaks it */
    .items_volatile = 0,
    .create = sq_create,
    .destroy = sq_destroy,
    .start = sq_start,
    .on_publish = sq_on_publish,
    .on_timer = sq_on_timer,
    .on_run_end = sq_on_run_end,
    .on_trigger = NULL,
    .on_part = sq_on_part,
    .on_horizon = NULL,
    .on_stop = sq_on_stop,
};
