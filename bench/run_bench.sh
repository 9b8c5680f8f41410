#!/usr/bin/env bash
# Runs every benchmark of a build (bench/bench_*.c, built into BUILD/bench)
# one after the other, so that they do not compete for the two cores.
# Benchmarks report figures; they never fail on speed.
set -euo pipefail
B=${1:?usage: run_bench.sh BUILD_DIR}
for b in "$B"/bench/bench_*; do
    [ -x "$b" ] || continue
    echo "== $(basename "$b")"
    "$b"
done
# The database sweep is a script: it times whole simrun processes.
echo "== sweep_db.sh"
bash bench/sweep_db.sh "$B/simrun" 3
