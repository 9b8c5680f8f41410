#!/usr/bin/env bash
# Determinism: every bundled scenario run twice gives identical database
# rows (all tables but run_timings, the only one with wall-clock data) and
# identical CSV output; a different seed gives different fingerprints.  When
# two runs of a scenario differ, the first event where their traces part is
# printed (both lines, with their virtual time).
# run-once: runs of the -O2 build are compared; every line and branch of C
#   that they execute is executed sanitized by other tests (gcov).
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
dump() {  # the deterministic content of a results database
    sqlite3 "$1" '.mode list' \
        'select * from runs order by run_id;' \
        'select * from metrics order by run_id, handler, name;' \
        'select * from histograms order by run_id, handler, kind, bucket_lo_us;' \
        'select * from crashes order by run_id, idx;' \
        'select * from expectations order by run_id, line;' \
        'select * from trace order by run_id, seq;'
}
# diverge TRACE_1 TRACE_2: prints the first event where two --trace outputs
# differ (exit 1 if they do not).
diverge() {
    local at n
    at=$(cmp "$1" "$2" 2>&1) && return 1
    n=$(echo "$at" | sed -n 's/.*line \([0-9]*\).*/\1/p' | head -n 1)
    [ -n "$n" ] || { echo "  $at"; return 0; }
    echo "  first divergence at trace line $n:"
    echo "    run 1: $(sed -n "${n}p" "$1")"
    echo "    run 2: $(sed -n "${n}p" "$2")"
    case $at in *EOF*) echo "    ($at)";; esac
    return 0
}
# trace_divergence SCENARIO: runs it twice more with --trace and shows where
# the two event traces part.
trace_divergence() {
    "$SIMRUN" run "$1" --trace "$tmp/t1" --format csv > /dev/null 2>&1
    "$SIMRUN" run "$1" --trace "$tmp/t2" --format csv > /dev/null 2>&1
    diverge "$tmp/t1" "$tmp/t2" || echo "  (the traces of two more runs agree: the difference is not in the events)"
}
for f in scenarios/*.scn; do
    "$SIMRUN" run "$f" --db "$tmp/a.db" --store-trace --format csv > "$tmp/a.csv" || fail=1
    "$SIMRUN" run "$f" --db "$tmp/b.db" --store-trace --format csv > "$tmp/b.csv" || fail=1
    cat "$tmp/a.csv" >> "$tmp/all_a.csv"
    cat "$tmp/b.csv" >> "$tmp/all_b.csv"
    if ! cmp -s "$tmp/a.csv" "$tmp/b.csv"; then
        echo "FAIL $f: two runs differ (csv: policy, seed, fingerprint)"
        diff "$tmp/a.csv" "$tmp/b.csv" | grep ',published,' | head -n 4
        trace_divergence "$f"
        fail=1
    fi
done
cmp -s "$tmp/all_a.csv" "$tmp/all_b.csv" || { echo "FAIL csv output differs between two runs"; diff "$tmp/all_a.csv" "$tmp/all_b.csv" | head; fail=1; }
# The divergence report itself, on two traces known to differ (seeds 1 and 2).
"$SIMRUN" run scenarios/flaky.scn -p oracle --seed 1 --trace "$tmp/d1" > /dev/null
"$SIMRUN" run scenarios/flaky.scn -p oracle --seed 2 --trace "$tmp/d2" > /dev/null
diverge "$tmp/d1" "$tmp/d2" > "$tmp/dv" && grep -q '^    run 1: oracle [0-9:.]* ' "$tmp/dv" \
    && grep -q '^    run 2: oracle [0-9:.]* ' "$tmp/dv" || { echo "FAIL the divergence report does not work"; cat "$tmp/dv"; fail=1; }
diverge "$tmp/d1" "$tmp/d1" > /dev/null && { echo "FAIL identical traces reported as diverging"; fail=1; }
# The two dumps (some 14 million rows each) are compared as they are made,
# side by side, rather than written to files first.
rows=$(dump "$tmp/a.db" | head -n 1)
[ -n "$rows" ] || { echo "FAIL empty dump"; fail=1; }
cmp -s <(dump "$tmp/a.db") <(dump "$tmp/b.db") \
    || { echo "FAIL database rows differ"; diff <(dump "$tmp/a.db") <(dump "$tmp/b.db") | head; fail=1; }
rows=$(sqlite3 "$tmp/a.db" "select (select count(*) from runs) + (select count(*) from metrics)
    + (select count(*) from histograms) + (select count(*) from crashes) + (select count(*) from expectations)
    + (select count(*) from trace)")
n=$(sqlite3 "$tmp/a.db" 'select count(*) from runs')
echo "$n runs compared, $rows rows identical"
# another seed, another trace
"$SIMRUN" run scenarios/mail.scn -p poll --seed 1 --format csv | grep ',published,' > "$tmp/s1"
"$SIMRUN" run scenarios/mail.scn -p poll --seed 2 --format csv | grep ',published,' > "$tmp/s2"
cmp -s "$tmp/s1" "$tmp/s2" && { echo "FAIL seeds 1 and 2 gave the same fingerprint"; fail=1; }
# the workload does not depend on the policy: published counts agree
a=$("$SIMRUN" run scenarios/batch.scn -p oracle --format csv | grep ',published,' | cut -d, -f8)
b=$("$SIMRUN" run scenarios/batch.scn -p poll --format csv | grep ',published,' | cut -d, -f8)
[ "$a" = "$b" ] || { echo "FAIL oracle published $a, poll $b"; fail=1; }
exit $fail
