#!/usr/bin/env bash
# Runs every test of one build flavour: the cmocka unit/property test
# binaries in BUILD/tests, then the shell-driven CLI tests (tests/cli_*.sh),
# each with SIMRUN pointing at that flavour's binary.  Prints a closing
# "N passed, N failed" line and exits non-zero if anything failed.
set -u
B=${1:?usage: run_tests.sh BUILD_DIR}
export SIMRUN="$PWD/$B/simrun" SIMRUN_BUILD="$B"
pass=0; fail=0; failed=()
for t in "$B"/tests/test_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    if "$t" > "$B/tests/$name.log" 2>&1; then
        pass=$((pass + 1)); echo "ok   $name"
    else
        fail=$((fail + 1)); failed+=("$name"); echo "FAIL $name"; tail -n 40 "$B/tests/$name.log"
    fi
done
for t in tests/cli_*.sh; do
    [ -f "$t" ] || continue
    name=$(basename "$t" .sh)
    if bash "$t" > "$B/tests/$name.log" 2>&1; then
        pass=$((pass + 1)); echo "ok   $name"
    else
        fail=$((fail + 1)); failed+=("$name"); echo "FAIL $name"; tail -n 40 "$B/tests/$name.log"
    fi
done
echo "[$B] test programs:"
echo "tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ] || { echo "failed: ${failed[*]}"; exit 1; }
