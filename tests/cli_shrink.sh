#!/usr/bin/env bash
# simrun shrink: a 40-line scenario whose expect line fails under poll is
# shrunk to a handful of lines that fail the same way (the same line, the
# same policy, the same seed); the steps and the result are the same every
# time, from a file or from standard input; a livelock is kept as a
# livelock; a scenario that does not fail, or a missing output, is refused
# with exit 2, an output that cannot be written with exit 4.
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
src=tests/shrink/shop40.scn
[ "$(wc -l < "$src")" -eq 40 ] || { echo "FAIL $src is not 40 lines"; fail=1; }

"$SIMRUN" shrink "$src" -o "$tmp/min.scn" -p poll > "$tmp/out1" 2>&1 || { echo "FAIL shrink exit $?"; cat "$tmp/out1"; fail=1; }
lines=$(grep -cv '^#' "$tmp/min.scn")
# 8 lines: seed, horizon, the workflow with a producer and a consumer, the
# source, the failure rule that causes it, and the expect line.
[ "$lines" -eq 8 ] || { echo "FAIL shrunk to $lines lines, want 8"; cat "$tmp/min.scn"; fail=1; }
grep -q '^seed 11$' "$tmp/min.scn" || { echo "FAIL the seed is not kept"; fail=1; }
grep -q '^expect \* double_effects == 0$' "$tmp/min.scn" || { echo "FAIL the expect line is not kept"; fail=1; }
grep -q '^  removed line 26: crash host at 1d04:00:00 for 15m$' "$tmp/out1" || { echo "FAIL the steps are not printed"; fail=1; }
grep -q '^shrink: 32 lines -> 8 lines' "$tmp/out1" || { echo "FAIL no summary"; cat "$tmp/out1"; fail=1; }
# The same failure: the same line fails under poll, with the same seed.
"$SIMRUN" check "$tmp/min.scn" > "$tmp/check" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q '^FAIL .*\[poll\] expect \* double_effects == 0' "$tmp/check" \
    || { echo "FAIL the shrunk scenario does not fail the same way (exit $rc)"; cat "$tmp/check"; fail=1; }
# Deterministic, and the same from standard input to standard output: the
# same steps (then on standard error) and the same lines.
"$SIMRUN" shrink - -o - -p poll < "$src" > "$tmp/min2.scn" 2> "$tmp/out2" || { echo "FAIL shrink - -o -"; fail=1; }
diff <(grep -v '^#' "$tmp/min.scn") <(grep -v '^#' "$tmp/min2.scn") > /dev/null \
    && diff <(grep '^  ' "$tmp/out1") <(grep '^  ' "$tmp/out2") > /dev/null || { echo "FAIL shrink is not deterministic"; fail=1; }

# A livelock stays a livelock (the oracle retrying a run that always fails).
"$SIMRUN" shrink tests/shrink/livelock.scn -o "$tmp/live.scn" -p oracle -q > /dev/null 2>&1 || { echo "FAIL livelock shrink"; fail=1; }
[ "$(grep -cv '^#' "$tmp/live.scn")" -eq 6 ] || { echo "FAIL livelock: not 6 lines"; cat "$tmp/live.scn"; fail=1; }
grep -q '^fail w.c transient 100%$' "$tmp/live.scn" || { echo "FAIL the failure rule is gone"; cat "$tmp/live.scn"; fail=1; }
"$SIMRUN" run "$tmp/live.scn" -p oracle 2>&1 | grep -q '^status  *livelock' || { echo "FAIL the shrunk scenario is no livelock"; fail=1; }

# Nothing to shrink, or no output: exit 2.
"$SIMRUN" shrink scenarios/mail.scn -o "$tmp/x.scn" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'nothing to shrink' "$tmp/err" && [ ! -e "$tmp/x.scn" ] || { echo "FAIL passing scenario: exit $rc"; fail=1; }
"$SIMRUN" shrink "$src" > /dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL no -o"; fail=1; }
"$SIMRUN" shrink "$src" -o "$tmp/none/x.scn" -p poll -q > /dev/null 2>&1; [ $? -eq 4 ] || { echo "FAIL unwritable output"; fail=1; }

[ $fail -eq 0 ] && echo ok
exit $fail
