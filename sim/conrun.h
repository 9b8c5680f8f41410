/* conrun.h: a consumer run the simplest way a system runs it outside its
 * scheduler: as soon as it has work, one run at a time per consumer, a
 * failed run retried after a backoff (or left for the next event), and the
 * script's wake request kept with an alarm.
 *
 * The cron-style policies model systems whose scheduler has no notion of
 * events (a Kubernetes CronJob, a systemd timer); a consumer there is a
 * service that processes its topic as events arrive (a Deployment, a
 * path-activated unit).  This is that service, once, for all of them.
 *
 * Rules, per consumer instance:
 *  - It is *ready* when an event arrived since its last run started, when
 *    its last run committed having taken something (there may be more),
 *    when its wake request comes due, or when its retry comes due; and at
 *    the host's start when it has pending items.  A ready consumer with
 *    pending items and no active run starts a run at once (offer: every
 *    pending item, its script decides).  A run that took nothing does not
 *    make it ready again: it waits for input, so it never busy-loops.
 *  - A failed run: with retry on, the consumer is retried after
 *    backoff_delay(retry, n) (n: failures in a row), giving up after
 *    max_attempts (then it waits for the next event); with retry off it
 *    waits for the next event.
 *  - Everything here is volatile (the items themselves are the engine's):
 *    a crash forgets failure counts and wake requests; conrun_start makes
 *    every consumer with pending items ready.
 * Costs: O(1) per event and run end; conrun_start O(handlers). */
#ifndef SIM_CONRUN_H
#define SIM_CONRUN_H

#include <stdint.h>

#include "sim/backoff.h"
#include "sim/policy_api.h"

struct conrun;

struct conrun_cfg {
    uint32_t tag;                  /* on_timer tag of its alarms (arg: the consumer) */
    int retry;                     /* 1: retry failed runs after the backoff below */
    struct backoff backoff;
    uint32_t worker;               /* run_req.worker of its runs */
};

/* Made in the policy's create() (its alarms are the incarnation's), freed
 * in destroy(). */
struct conrun *conrun_create(struct sim *sim, const struct conrun_cfg *cfg);
void conrun_destroy(struct conrun *cr);
/* The host (re)starts: every consumer with pending items runs. */
void conrun_start(struct conrun *cr, int64_t now_us);
/* An item for consumer h was published. */
void conrun_on_publish(struct conrun *cr, uint32_t h, int64_t now_us);
/* A timer with the cfg's tag fired (arg as given to on_timer). */
void conrun_on_timer(struct conrun *cr, uint64_t arg, int64_t now_us);
/* A run ended; returns 1 when it was one of conrun's (a consumer's run),
 * 0 otherwise (the policy's own). */
int conrun_on_run_end(struct conrun *cr, const struct run_result *r, int64_t now_us);
/* A graceful stop: start nothing more. */
void conrun_stop(struct conrun *cr);

#endif
