#!/usr/bin/env bash
# Seed sweeps: a parallel sweep (-j N, worker processes) gives exactly the
# output and the database rows of a serial one (every table but
# run_timings, the wall-clock table), in the same order with the same
# run_ids; the table shows mean ± half-width; nothing is printed to a pipe
# as progress; the text trace comes out in job order too.
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
dump() {  # every deterministic row of a results database, in run_id order
    sqlite3 "$1" '.mode list' \
        'select * from runs order by run_id;' \
        'select * from metrics order by run_id, handler, name;' \
        'select * from histograms order by run_id, handler, kind, bucket_lo_us;' \
        'select * from crashes order by run_id, idx;' \
        'select * from expectations order by run_id, line;' \
        'select * from trace order by run_id, seq;'
}
# 100 seeds of two policies, serially and with two workers.
for j in 1 2; do
    "$SIMRUN" run scenarios/flaky.scn -p oracle,poll --seeds 1..100 -j $j --db "$tmp/j$j.db" \
        > "$tmp/j$j.txt" 2> "$tmp/j$j.err" || { echo "FAIL -j $j exited $?"; cat "$tmp/j$j.err"; fail=1; }
    dump "$tmp/j$j.db" > "$tmp/j$j.rows"
done
n=$(sqlite3 "$tmp/j1.db" 'select count(*) from runs')
[ "$n" -eq 200 ] || { echo "FAIL expected 200 runs, got $n"; fail=1; }
for j in 2; do
    cmp -s "$tmp/j1.rows" "$tmp/j$j.rows" || { echo "FAIL -j $j rows differ from -j 1"; diff "$tmp/j1.rows" "$tmp/j$j.rows" | head; fail=1; }
    cmp -s "$tmp/j1.txt" "$tmp/j$j.txt" || { echo "FAIL -j $j table differs from -j 1"; diff "$tmp/j1.txt" "$tmp/j$j.txt" | head; fail=1; }
    t=$(sqlite3 "$tmp/j$j.db" 'select count(*) from run_timings where wall_us > 0')
    [ "$t" -eq 200 ] || { echo "FAIL -j $j: $t run_timings rows, want 200"; fail=1; }
done
echo "$n runs, $(wc -l < "$tmp/j1.rows") rows identical with -j 1 and -j 2"
# Progress goes to a terminal only: piped, stderr stays empty.
[ -s "$tmp/j2.err" ] && { echo "FAIL progress or noise on a pipe:"; cat "$tmp/j2.err"; fail=1; }
# The sweep table: mean ± half-width, and the seed range in the heading.
grep -q 'seeds 1..100 (mean ± 95% confidence half-width)' "$tmp/j1.txt" \
    || { echo "FAIL no sweep heading"; head -3 "$tmp/j1.txt"; fail=1; }
grep -Eq '^runs_failed +[0-9.]+ ± [0-9.]+ +[0-9.]+ ± [0-9.]+$' "$tmp/j1.txt" \
    || { echo "FAIL no 'mean ± half-width' cells"; cat "$tmp/j1.txt"; fail=1; }
# The half-width is the Student t interval of the per-seed values in the database.
want=$(sqlite3 "$tmp/j1.db" "select value from run_metrics where policy = 'poll' and handler = '' and name = 'runs_failed'" \
    | python3 -c '
import math, sys
x = [float(l) for l in sys.stdin]
n = len(x); m = sum(x) / n
s = math.sqrt(sum((v - m) ** 2 for v in x) / (n - 1))
h = 1.9842169515 * s / math.sqrt(n)
d = max(0, min(3, 1 - math.floor(math.log10(h))))
print("%.*f ± %.*f" % (d, m, d, h))')
grep -q "^runs_failed .* $want\$" "$tmp/j1.txt" || { echo "FAIL poll runs_failed is not '$want'"; grep '^runs_failed' "$tmp/j1.txt"; fail=1; }
# Several scenarios, a stored trace, CSV and the text trace, three workers:
# identical too.
for j in 1 3; do
    "$SIMRUN" run scenarios/nightly.scn scenarios/reminders.scn -p oracle,poll --seeds 3..8 -j $j \
        --db "$tmp/t$j.db" --store-trace --trace "$tmp/t$j.trace" --format csv > "$tmp/t$j.csv" || fail=1
    dump "$tmp/t$j.db" > "$tmp/t$j.rows"
done
cmp -s "$tmp/t1.rows" "$tmp/t3.rows" || { echo "FAIL rows with traces differ between -j 1 and -j 3"; fail=1; }
cmp -s "$tmp/t1.csv" "$tmp/t3.csv" || { echo "FAIL csv differs between -j 1 and -j 3"; fail=1; }
cmp -s "$tmp/t1.trace" "$tmp/t3.trace" || { echo "FAIL --trace output differs between -j 1 and -j 3"; fail=1; }
[ "$(sqlite3 "$tmp/t3.db" 'select count(*) from trace')" -gt 1000 ] || { echo "FAIL no stored trace"; fail=1; }
# Bad -j values are usage errors.
for bad in 0 x 257 -1; do
    "$SIMRUN" run scenarios/flaky.scn -j "$bad" > /dev/null 2> "$tmp/err"; rc=$?
    [ $rc -eq 2 ] && grep -q 'error: ' "$tmp/err" || { echo "FAIL -j $bad: exit $rc"; fail=1; }
done
exit $fail
