#!/usr/bin/env bash
# simrun swarm: a short swarm under every policy holds every property of
# docs/swarm.md and says so twice the same way; a property that breaks
# (here 'completes', forced by a tiny --max-events) leaves the scenario, a
# description and a shrunk scenario in the output folder and exits 1; the
# scenarios that swarms found and shrink shrank (tests/swarm/) pass.
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
seeds=${SWARM_SEEDS:-3..8}

"$SIMRUN" swarm --seeds "$seeds" -o "$tmp/a" -q > "$tmp/out1" 2>&1; rc=$?
[ $rc -eq 0 ] || { echo "FAIL swarm $seeds exit $rc"; cat "$tmp/out1"; fail=1; }
grep -q "^swarm: seeds $seeds: .* 0 failing seeds$" "$tmp/out1" || { echo "FAIL no summary"; cat "$tmp/out1"; fail=1; }
grep -q "^swarm: features (seeds using each): crashes " "$tmp/out1" || { echo "FAIL no feature counts"; fail=1; }
"$SIMRUN" swarm --seeds "$seeds" -o "$tmp/b" -q > "$tmp/out2" 2>&1
cmp -s "$tmp/out1" "$tmp/out2" || { echo "FAIL two swarms differ"; diff "$tmp/out1" "$tmp/out2" | head; fail=1; }

# A broken property: saved, described, shrunk, exit 1.
"$SIMRUN" swarm --seeds 2..2 -p poll --max-events 5 -o "$tmp/f" > "$tmp/out3" 2>&1; rc=$?
[ $rc -eq 1 ] || { echo "FAIL a broken property exits $rc"; cat "$tmp/out3"; fail=1; }
for f in seed-2.scn seed-2.txt seed-2.min.scn; do
    [ -s "$tmp/f/$f" ] || { echo "FAIL $f not written"; fail=1; }
done
grep -q '^completes under oracle: event limit: more than 5 events$' "$tmp/f/seed-2.txt" \
    || { echo "FAIL the description"; cat "$tmp/f/seed-2.txt"; fail=1; }
"$SIMRUN" validate "$tmp/f/seed-2.scn" > /dev/null || { echo "FAIL the saved scenario does not parse"; fail=1; }
"$SIMRUN" run "$tmp/f/seed-2.min.scn" -p oracle --max-events 5 2>&1 | grep -q 'event limit: more than 5 events' \
    || { echo "FAIL the shrunk scenario does not fail the same way"; cat "$tmp/f/seed-2.min.scn"; fail=1; }
[ "$(grep -cv '^#' "$tmp/f/seed-2.min.scn")" -lt "$(grep -cv '^#' "$tmp/f/seed-2.scn")" ] \
    || { echo "FAIL nothing was shrunk"; fail=1; }
grep -q '^swarm: property completes broken' "$tmp/out3" || { echo "FAIL the summary does not count it"; fail=1; }

# Usage.
"$SIMRUN" swarm -o "$tmp/u" > /dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL no --seeds"; fail=1; }
"$SIMRUN" swarm --seeds 1..2 > /dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL no -o"; fail=1; }
"$SIMRUN" swarm --seeds 1..2 -o "$tmp/u" -p nosuch > /dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL unknown policy"; fail=1; }

# Regressions found by swarms, shrunk by shrink: each expect line holds.
"$SIMRUN" check tests/swarm/*.scn -q > "$tmp/reg" 2>&1 || { echo "FAIL tests/swarm"; cat "$tmp/reg"; fail=1; }

[ $fail -eq 0 ] && echo ok
exit $fail
