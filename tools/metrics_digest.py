#!/usr/bin/env python3
"""metrics_digest.py: a digest of each policy's results in `simrun run --format csv`.

Reads the CSV on standard input and prints one line per policy label:

    LABEL SHA256

where the digest covers, for every seed in order, the status, the
fingerprint and the value of each metric named with --metrics (all of them
when none is named), each as the CSV gives it.  Columns are found by their
header names, so that a column added to the CSV changes nothing; metrics
not named are left out, so that a metric added later changes nothing
either.  tests/cli_metrics_digest.sh compares these lines with the ones
committed in tests/metrics_digests.txt.

Usage: simrun run S --seeds 1..2 --format csv | tools/metrics_digest.py [--metrics a,b,...]
"""

import csv
import hashlib
import sys


def main():
    metrics = None
    if len(sys.argv) == 3 and sys.argv[1] == "--metrics":
        metrics = set(sys.argv[2].split(","))
    rows = csv.DictReader(sys.stdin)
    per = {}
    order = []
    for r in rows:
        if metrics is not None and r["metric"] not in metrics:
            continue
        label = r["policy"] + ("[" + r["params"] + "]" if r.get("params") else "")
        if label not in per:
            per[label] = hashlib.sha256()
            order.append(label)
        line = "%s,%s,%s,%s,%s\n" % (r["seed"], r["status"], r["fingerprint"], r["metric"], r["value"])
        per[label].update(line.encode())
    for label in order:
        print(label, per[label].hexdigest())


if __name__ == "__main__":
    main()
