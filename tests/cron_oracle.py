#!/usr/bin/python3
"""cron_oracle.py: answers batches of questions with python3-croniter 1.3.5
(and the standard library's zoneinfo), for tests/test_cal_oracle.c.

It reads requests, one a line, from the file named on the command line (or
stdin) and writes one answer line per request, in order, to stdout:

  C <id> <zone> <and> <start> <n> <expr...>
      croniter(expr, start as an aware datetime in zone, day_or=not and),
      then n calls of get_next(float) -> "R <id> t1 ... tn" (Unix seconds),
      or "E <id> <exception>" if croniter raises.
  O <id> <zone> <t1> ... <tk>
      the UTC offset in seconds at each instant, from zoneinfo (which reads
      the same system tz database, footer rule included) -> "R <id> o1 ... ok"

Start times are localized with pytz, as croniter's own tests do: croniter
1.3.5 computes with the start's fixed UTC offset and then corrects with its
"lag" heuristic, which was written for pytz.  With zoneinfo datetimes the
same heuristic shifts every fire on a DST day by an hour, which would test
nothing but the heuristic.
"""
import datetime
import sys
import zoneinfo

import pytz
from croniter import croniter

_pytz_zones = {}
_zi_zones = {}


def pytz_zone(name):
    z = _pytz_zones.get(name)
    if z is None:
        z = pytz.utc if name == "UTC" else pytz.timezone(name)
        _pytz_zones[name] = z
    return z


def zi_zone(name):
    z = _zi_zones.get(name)
    if z is None:
        z = zoneinfo.ZoneInfo(name)
        _zi_zones[name] = z
    return z


def answer(line):
    f = line.split()
    kind, rid = f[0], f[1]
    if kind == "C":
        zone, and_flag, start, n = f[2], f[3] == "1", int(f[4]), int(f[5])
        expr = " ".join(f[6:])
        try:
            st = datetime.datetime.fromtimestamp(start, pytz_zone(zone))
            it = croniter(expr, st, day_or=not and_flag)
            out = [str(int(it.get_next(float))) for _ in range(n)]
        except Exception as e:  # noqa: BLE001 - every failure is reported, not hidden
            return "E %s %s: %s" % (rid, type(e).__name__, str(e).replace("\n", " "))
        return "R %s %s" % (rid, " ".join(out))
    if kind == "O":
        z = zi_zone(f[2])
        offs = []
        for t in f[3:]:
            d = datetime.datetime.fromtimestamp(int(t), z)
            offs.append(str(int(d.utcoffset().total_seconds())))
        return "R %s %s" % (rid, " ".join(offs))
    return "E %s unknown request kind %r" % (rid, kind)


def main():
    src = open(sys.argv[1]) if len(sys.argv) > 1 else sys.stdin
    out = sys.stdout
    for line in src:
        line = line.strip()
        if line:
            out.write(answer(line) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
