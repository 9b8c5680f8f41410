#!/usr/bin/env bash
# simrun diff: identical databases pass (exit 0); a known regression fails
# (exit 1) and names the metric, in text and in Markdown; a worsening within
# its tolerance, one that the seeds do not show to be real, and an
# improvement pass; a real behaviour change found by simulation (slower
# polling) fails on latency; a run that stops being ok fails on status;
# bad input exits 2.
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
run_diff() {  # run_diff WANT_EXIT NAME ARGS... : output in $tmp/NAME.out
    local want=$1 name=$2; shift 2
    "$SIMRUN" diff "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"; local rc=$?
    if [ $rc -ne "$want" ]; then
        echo "FAIL $name: diff exited $rc, want $want"; cat "$tmp/$name.out" "$tmp/$name.err"; fail=1
    fi
}
expect_out() {  # expect_out NAME REGEX
    grep -Eq -- "$2" "$tmp/$1.out" || { echo "FAIL $1: output lacks /$2/"; cat "$tmp/$1.out"; fail=1; }
}
sweep="scenarios/flaky.scn -p oracle,poll --seeds 1..5"
"$SIMRUN" run $sweep --db "$tmp/base.db" > /dev/null || fail=1
"$SIMRUN" run $sweep --db "$tmp/same.db" > /dev/null || fail=1

# Identical results: no regression, behaviour unchanged.
run_diff 0 same "$tmp/base.db" "$tmp/same.db"
expect_out same '^result: 0 regressions$'
expect_out same 'fingerprints identical in 5 of 5 seeds \(behaviour unchanged\)'
run_diff 0 same_md "$tmp/base.db" "$tmp/same.db" --format markdown
expect_out same_md '^### simrun diff: no regression$'

# A known regression: poll loses 3 items in every seed.
cp "$tmp/base.db" "$tmp/lost.db"
sqlite3 "$tmp/lost.db" "update metrics set value = value + 3 where name = 'lost' and handler = ''
    and run_id in (select run_id from runs where policy = 'poll')"
run_diff 1 lost "$tmp/base.db" "$tmp/lost.db"
expect_out lost '^  lost +0 ± 0 +3 ± 0 +\+3 ± 0 +0% +REGRESSION$'
expect_out lost '^result: 1 regression \(flaky/poll lost\)$'
run_diff 1 lost_md "$tmp/base.db" "$tmp/lost.db" --format markdown
expect_out lost_md '^### simrun diff: regression$'
expect_out lost_md '^\| flaky \| poll \| 1\.\.5 \| \*\*lost\*\* \| 0 ± 0 \| 3 ± 0 \| \+3 ± 0 \| 0% \|$'
# ... which a tolerance on another metric does not excuse, but one on lost
# cannot either (from a base of 0 any loss exceeds a percentage).
run_diff 1 lost_tol "$tmp/base.db" "$tmp/lost.db" --tolerance 'lost=50%'

# Worse by 3 % in p99 latency: within the default 5 %, a regression at 1 %.
cp "$tmp/base.db" "$tmp/slow.db"
sqlite3 "$tmp/slow.db" "update metrics set value = value * 1.03 where name = 'latency.p99' and handler = ''
    and run_id in (select run_id from runs where policy = 'oracle')"
run_diff 0 slow "$tmp/base.db" "$tmp/slow.db"
expect_out slow '^  latency.p99 .* worse, within tolerance$'
run_diff 1 slow_tol "$tmp/base.db" "$tmp/slow.db" --tolerance latency.p99=1%
expect_out slow_tol '^result: 1 regression \(flaky/oracle latency.p99\)$'
run_diff 1 slow_all "$tmp/base.db" "$tmp/slow.db" -t '*=1%'

# Worse on average but not consistently across seeds: not significant.
cp "$tmp/base.db" "$tmp/noise.db"
sqlite3 "$tmp/noise.db" "update metrics set value = value + case (select seed from runs r where r.run_id = metrics.run_id)
    when 1 then 40 when 2 then -30 when 3 then 25 when 4 then -20 else 0 end
    where name = 'busy_loops' and handler = '' and run_id in (select run_id from runs where policy = 'poll')"
run_diff 0 noise "$tmp/base.db" "$tmp/noise.db" --tolerance busy_loops=0%
expect_out noise '^  busy_loops .* worse, not significant$'

# Better: fewer busy loops in every seed.
cp "$tmp/base.db" "$tmp/better.db"
sqlite3 "$tmp/better.db" "update metrics set value = value - 100 where name = 'busy_loops' and handler = ''
    and run_id in (select run_id from runs where policy = 'poll')"
run_diff 0 better "$tmp/base.db" "$tmp/better.db"
expect_out better '^  busy_loops .* improved$'

# A behaviour change found by simulation: poll every 5 minutes instead of
# every minute (relabelled as the same parameters, as a changed default
# would be): fewer busy loops, later items.
"$SIMRUN" run scenarios/flaky.scn -p poll --seeds 1..5 --set poll.period=5m --db "$tmp/p5.db" > /dev/null || fail=1
"$SIMRUN" run scenarios/flaky.scn -p poll --seeds 1..5 --db "$tmp/p1.db" > /dev/null || fail=1
sqlite3 "$tmp/p5.db" "update runs set params = ''"
run_diff 1 period "$tmp/p1.db" "$tmp/p5.db"
expect_out period '^  latency.p50 .* REGRESSION$'
expect_out period '^  busy_loops .* improved$'
expect_out period 'fingerprints identical in 0 of 5 seeds$'

# A run that stops being ok regresses on its status.
cp "$tmp/base.db" "$tmp/livelock.db"
sqlite3 "$tmp/livelock.db" "update runs set status = 'livelock' where policy = 'oracle' and seed = 2"
run_diff 1 status "$tmp/base.db" "$tmp/livelock.db"
expect_out status '^result: 1 regression \(flaky/oracle status\)$'

# Runs that do not match are listed, never compared.
"$SIMRUN" run scenarios/flaky.scn -p oracle,poll --seeds 1..3 --db "$tmp/fewer.db" > /dev/null || fail=1
run_diff 0 fewer "$tmp/base.db" "$tmp/fewer.db"
expect_out fewer 'flaky / poll / seeds 1..3: seed sets differ'
"$SIMRUN" run scenarios/batch.scn -p oracle --db "$tmp/other.db" > /dev/null || fail=1
run_diff 0 other "$tmp/base.db" "$tmp/other.db"
expect_out other 'batch / oracle / seed 3: only in'
grep -q 'warning: no runs' "$tmp/other.err" || { echo "FAIL no warning when nothing matched"; fail=1; }

# Bad input.
run_diff 2 missing "$tmp/base.db" "$tmp/nosuch.db"
grep -q "error: cannot open results database" "$tmp/missing.err" || { echo "FAIL missing db message"; cat "$tmp/missing.err"; fail=1; }
echo "not a database" > "$tmp/junk.db"
run_diff 2 junk "$tmp/base.db" "$tmp/junk.db"
run_diff 2 badtol "$tmp/base.db" "$tmp/same.db" --tolerance latency.p99=abc
run_diff 2 unknown_metric "$tmp/base.db" "$tmp/same.db" --tolerance nosuch=5%
grep -q "unknown metric 'nosuch'" "$tmp/unknown_metric.err" || { echo "FAIL unknown metric message"; fail=1; }
run_diff 2 one_arg "$tmp/base.db"
run_diff 2 badfmt "$tmp/base.db" "$tmp/same.db" --format html
exit $fail
