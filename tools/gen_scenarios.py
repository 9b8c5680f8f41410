#!/usr/bin/env python3
"""gen_scenarios.py: random valid scenarios, for comparing two builds of simrun.

Each seed draws a small scenario from a random mix of features: workflows
stamped out several times, producers on every/cron/at schedules with sources
or publishes, consumers with every script (fifo, batch, window, digest,
correlate), publish lines of every arrival kind, fixed and random crashes of
every target, graceful stops, failures of every class and phase, triggers.
Scenarios are small (a few minutes to a few days) so that hundreds run in
seconds; they are meant to be run under every policy and several seeds by
two builds whose CSV output must be identical (the engine's metrics and
fingerprints do not depend on how its state is kept).

Usage: tools/gen_scenarios.py OUTDIR FIRST_SEED COUNT
"""

import os
import random
import sys

TOPICS = ["a", "b", "c", "d"]


def dur(r, lo_s, hi_s):
    s = r.randint(lo_s, hi_s)
    if s % 3600 == 0 and s:
        return "%dh" % (s // 3600)
    if s % 60 == 0 and s:
        return "%dm" % (s // 60)
    return "%ds" % s


def dist(r):
    k = r.random()
    if k < 0.4:
        return dur(r, 1, 120)
    if k < 0.7:
        return "uniform(%s,%s)" % (dur(r, 1, 10), dur(r, 11, 300))
    return "exp(%s)" % dur(r, 1, 60)


def producer(r, name, horizon_s, used):
    sched = r.random()
    if sched < 0.6:
        s = "every %s" % dur(r, 30, max(60, horizon_s // 4))
        if r.random() < 0.2:
            s += " offset %s" % dur(r, 1, 60)
    elif sched < 0.85:
        s = 'cron "%s"' % r.choice(["*/5 * * * *", "0 * * * *", "*/15 * * * *", "30 2 * * *", "0 */3 * * *"])
    else:
        s = "at %s" % dur(r, 0, horizon_s - 1)
    t = r.choice(TOPICS)
    used.add(t)
    line = "  producer %s %s runs %s publish %s %d" % (name, s, dist(r), t, r.randint(1, 3))
    if r.random() < 0.3:
        line += " idle %s" % dur(r, 0, 5)
    return line


def consumer(r, name, used):
    subs = r.sample(TOPICS, r.randint(1, 2))
    for t in subs:
        used.add(t)
    k = r.random()
    if k < 0.35:
        script = "fifo"
    elif k < 0.55:
        script = "batch %d or %s" % (r.randint(1, 5), dur(r, 10, 600))
    elif k < 0.7:
        script = "window %s" % dur(r, 5, 600)
    elif k < 0.8:
        script = "digest %02d:%02d" % (r.randint(0, 23), r.choice([0, 15, 30, 45]))
    elif len(subs) == 2:
        script = "correlate %s %s" % (subs[0], subs[1])
    else:
        script = "fifo"
    line = "  consumer %s subscribe %s %s runs %s" % (name, ",".join(subs), script, dist(r))
    if r.random() < 0.2:
        line += " phases 20/60/20"
    return line


def arrival(r, horizon_s):
    k = r.random()
    if k < 0.35:
        return "rate %d/h" % r.randint(1, 60)
    if k < 0.6:
        return "poisson %d/h" % r.randint(1, 60)
    if k < 0.75:
        return "burst %d at %s" % (r.randint(2, 50), dur(r, 0, horizon_s - 1))
    if k < 0.85:
        return "at %s count %d" % (dur(r, 0, horizon_s - 1), r.randint(1, 20))
    return "daily %d/h peak %02d:00" % (r.randint(1, 30), r.randint(0, 23))


def crashes(r, horizon_s, drain_s, wfs):
    out = []
    fixed = {}
    for _ in range(r.randint(0, 3)):
        target = r.choice(["host", "host", "worker 0", "worker 1", "workers", "server", "stop"])
        if r.random() < 0.25 and target != "stop":
            out.append("crash %s random mtbf %s mttr %s" % (target, dur(r, 600, 7200), dur(r, 10, 600)))
            continue
        at = r.randint(1, horizon_s + drain_s - 700)
        down = r.randint(30, 600)
        key = target.split()[0] if target != "stop" else "host"
        if any(not (at + down < a or a + d < at) for a, d in fixed.get(key, [])):
            continue
        fixed.setdefault(key, []).append((at, down))
        if target == "stop":
            grace = r.randint(1, 29)
            out.append("stop host at %ds grace %ds for %ds" % (at, grace, max(down, grace + 1)))
        else:
            out.append("crash %s at %ds for %ds" % (target, at, down))
    return out


def faults(r, wfs):
    out = []
    for wf, handlers in wfs:
        for h in handlers:
            if r.random() < 0.25:
                cls = r.choice(["transient", "logic", "internal", "indeterminate"])
                line = "fail %s.%s %s %d%%" % (wf, h, cls, r.randint(1, 40))
                if r.random() < 0.5:
                    line += " in " + r.choice(["preparing", "mutating", "mutated", "emitting"])
                out.append(line)
            if r.random() < 0.1:
                out.append("fail %s.%s delivery %d%%" % (wf, h, r.randint(1, 50)))
    return out


def scenario(seed):
    r = random.Random(seed)
    horizon_s = r.choice([1800, 3600, 4 * 3600, 12 * 3600, 86400, 3 * 86400])
    drain_s = r.choice([0, 600, 3600])
    lines = ["name gen%d" % seed, "horizon %ds" % horizon_s, "drain %ds" % drain_s, "seed %d" % r.randint(1, 99)]
    if r.random() < 0.3:
        lines.append("recovery-bound %s" % dur(r, 60, 3600))
    used = set()
    wfs = []
    for w in range(r.randint(1, 3)):
        name = "w%d" % w
        count = r.choice([1, 1, 2, 3, 5])
        lines.append("workflow %s%s" % (name, " x %d" % count if count > 1 else ""))
        handlers = []
        for k in range(r.randint(1, 3)):
            hname = "h%d" % k
            if r.random() < 0.5:
                lines.append(producer(r, hname, horizon_s, used))
            else:
                lines.append(consumer(r, hname, used))
            handlers.append(hname)
        wfs.append((name, handlers))
    for t in sorted(used):
        if r.random() < 0.7:
            lines.append("publish %s %s%s" % (t, arrival(r, horizon_s), " keys %d" % r.randint(1, 5)
                                            if r.random() < 0.3 else ""))
    lines += crashes(r, horizon_s, drain_s, wfs)
    lines += faults(r, wfs)
    if r.random() < 0.2:
        lines.append("trigger %s at %ds" % (wfs[0][0], r.randint(0, horizon_s - 1)))
    return "\n".join(lines) + "\n"


def main():
    out, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.makedirs(out, exist_ok=True)
    for s in range(first, first + count):
        with open(os.path.join(out, "gen%05d.scn" % s), "w") as f:
            f.write(scenario(s))


if __name__ == "__main__":
    main()
