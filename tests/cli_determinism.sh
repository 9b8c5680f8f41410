#!/usr/bin/env bash
# Determinism: every bundled scenario run twice gives identical database
# rows (all tables but run_timings, the only one with wall-clock data) and
# identical CSV output; a different seed gives different fingerprints.
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
for f in scenarios/*.scn; do
    "$SIMRUN" run "$f" --db "$tmp/a.db" --store-trace --format csv > "$tmp/a.csv" || fail=1
    "$SIMRUN" run "$f" --db "$tmp/b.db" --store-trace --format csv > "$tmp/b.csv" || fail=1
done
cmp -s "$tmp/a.csv" "$tmp/b.csv" || { echo "FAIL csv output differs between two runs"; diff "$tmp/a.csv" "$tmp/b.csv" | head; fail=1; }
dump "$tmp/a.db" > "$tmp/a.txt"; dump "$tmp/b.db" > "$tmp/b.txt"
[ -s "$tmp/a.txt" ] || { echo "FAIL empty dump"; fail=1; }
cmp -s "$tmp/a.txt" "$tmp/b.txt" || { echo "FAIL database rows differ"; diff "$tmp/a.txt" "$tmp/b.txt" | head; fail=1; }
n=$(sqlite3 "$tmp/a.db" 'select count(*) from runs')
echo "$n runs compared, $(wc -l < "$tmp/a.txt") rows identical"
# another seed, another trace
"$SIMRUN" run scenarios/mail.scn -p poll --seed 1 --format csv | grep ',published,' > "$tmp/s1"
"$SIMRUN" run scenarios/mail.scn -p poll --seed 2 --format csv | grep ',published,' > "$tmp/s2"
cmp -s "$tmp/s1" "$tmp/s2" && { echo "FAIL seeds 1 and 2 gave the same fingerprint"; fail=1; }
# the workload does not depend on the policy: published counts agree
a=$("$SIMRUN" run scenarios/batch.scn -p oracle --format csv | grep ',published,' | cut -d, -f8)
b=$("$SIMRUN" run scenarios/batch.scn -p poll --format csv | grep ',published,' | cut -d, -f8)
[ "$a" = "$b" ] || { echo "FAIL oracle published $a, poll $b"; fail=1; }
exit $fail
