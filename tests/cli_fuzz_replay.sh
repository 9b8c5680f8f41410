#!/usr/bin/env bash
# Replays every fuzz corpus (tests/fuzz/corpus/<target>/) through its target
# built with the plain driver (tests/fuzz/replay.c): an input that ever made
# the parser, the calendar or the engine crash, hang or break an invariant
# stays a regression test here, with no fuzzer needed.
set -u
: "${SIMRUN_BUILD:?}"
fail=0
for bin in "$SIMRUN_BUILD"/tests/fuzz_*; do
    [ -x "$bin" ] || continue
    t=$(basename "$bin"); t=${t#fuzz_}
    dir=tests/fuzz/corpus/$t
    [ -d "$dir" ] || { echo "FAIL no corpus for $t ($dir)"; fail=1; continue; }
    n=$(find "$dir" -type f | wc -l)
    out=$(timeout 600 "$bin" "$dir" 2>&1); rc=$?
    echo "$t: $out"
    [ $rc -eq 0 ] || { echo "FAIL $t exited $rc"; fail=1; }
    grep -q "^replayed $n inputs$" <<< "$out" || { echo "FAIL $t did not replay all $n inputs"; fail=1; }
done
[ $fail -eq 0 ] && echo ok
exit $fail
