#!/usr/bin/env bash
# Parameter studies: a `sweep` line and `--sweep` (several give the
# product; --sweep replaces the line of its key) run a policy once per
# point; every point x seed is a run in the database with its parameters
# and its point (run_plan.sweep); the table has a column per point, and the
# study names the cheapest point (fewest wake-ups, then runs) whose runs
# all meet the expect lines naming the policy, which the database confirms.
# Bad sweeps are errors with exit 2 (file:line:col for a sweep line).
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
cp scenarios/flaky.scn "$tmp/s.scn"
cat >> "$tmp/s.scn" << 'EOF'
sweep poll.period=30s,1m,5m
expect poll latency.p99 < 3m
EOF
"$SIMRUN" run "$tmp/s.scn" -p oracle,poll --seeds 1..3 -j 2 --db "$tmp/a.db" > "$tmp/out" 2> "$tmp/err" \
    || { echo "FAIL run with a sweep line"; cat "$tmp/err"; fail=1; }
grep -q '^metric  *oracle  *poll\[period=30s\]  *poll\[period=1m\]  *poll\[period=5m\]$' "$tmp/out" \
    || { echo "FAIL no column per point"; head -3 "$tmp/out"; fail=1; }
q() { sqlite3 "$tmp/a.db" "$1"; }
[ "$(q 'select count(*) from runs')" -eq 12 ] || { echo "FAIL $(q 'select count(*) from runs') runs, want (1 + 3) x 3"; fail=1; }
[ "$(q "select group_concat(sweep, ' ') from (select distinct sweep from run_plan order by job)")" = " period=30s period=1m period=5m" ] \
    || { echo "FAIL run_plan.sweep: $(q 'select distinct sweep from run_plan')"; fail=1; }
[ "$(q "select count(distinct params) from runs where policy = 'poll'")" -eq 3 ] \
    || { echo "FAIL the points' parameters are not stored (1m is the default: params '')"; fail=1; }
# The cheapest point that meets the expect line, from the database.
want=$(q "select p.sweep from runs r join run_plan p using (run_id) join metrics m using (run_id)
          where r.policy = 'poll' and m.handler = '' and m.name = 'wakeups' group by p.sweep
          having (select min(e.ok) from expectations e join run_plan p2 using (run_id) where p2.sweep = p.sweep) = 1
          order by avg(m.value), p.sweep limit 1")
[ -n "$want" ] || { echo "FAIL no point meets the expect line in the database"; fail=1; }
grep -q "^cheapest point that meets every expect line naming it: poll\[$want\]" "$tmp/out" \
    || { echo "FAIL cheapest point, want $want:"; sed -n '/^parameter study/,$p' "$tmp/out"; fail=1; }
grep -q "^\* $want " "$tmp/out" || { echo "FAIL the cheapest point is not starred"; fail=1; }
[ "$(q "select count(*) from expectations where text = 'expect poll latency.p99 < 3m'")" -eq 9 ] \
    || { echo "FAIL expect outcomes of the runs are not stored"; fail=1; }

# The report draws the study: every metric that changes against the period,
# with its band, and the table with the same cheapest point.
"$SIMRUN" report --db "$tmp/a.db" -o "$tmp/rep" > /dev/null 2> "$tmp/err" || { echo "FAIL report"; cat "$tmp/err"; fail=1; }
grep -q 'Parameter study: poll' "$tmp/rep/index.html" || { echo "FAIL no study in the report"; fail=1; }
grep -q "&#9733; ${want}</td>" "$tmp/rep/index.html" \
    || { echo "FAIL the report's cheapest point is not $want"; grep -o '&#9733;[^<]*' "$tmp/rep/index.html"; fail=1; }
[ -s "$tmp/rep/flaky-study-poll-period.png" ] && [ -s "$tmp/rep/flaky-study-poll-period.svg" ] \
    || { echo "FAIL no study chart"; ls "$tmp/rep"; fail=1; }
grep -q '^# wakeups, line' "$tmp/rep/flaky-study-poll-period.dat" || { echo "FAIL wake-ups not drawn"; fail=1; }
[ "$(grep -c '^[0-9]' <(sed -n '/^# wakeups, line/,/^$/p' "$tmp/rep/flaky-study-poll-period.dat"))" -eq 3 ] \
    || { echo "FAIL the wake-ups line does not have the 3 points"; fail=1; }

# --sweep replaces the line of its key; two axes give the product.
"$SIMRUN" run "$tmp/s.scn" -p poll --seeds 1..2 --sweep poll.period=2m,10m --format csv > "$tmp/csv" \
    || { echo "FAIL --sweep over a sweep line"; fail=1; }
[ "$(cut -d, -f2,3 "$tmp/csv" | sed 1d | sort -u | tr '\n' ' ')" = 'poll,"period=00:02:00" poll,"period=00:10:00" ' ] \
    || { echo "FAIL --sweep did not replace the sweep line:"; cut -d, -f2,3 "$tmp/csv" | sort -u; fail=1; }
"$SIMRUN" run scenarios/vistimeout_overrun.scn -p vistimeout --sweep vistimeout.workers=1,2 \
    --sweep vistimeout.visibility_timeout=60s,300s,900s --db "$tmp/b.db" > "$tmp/out" || fail=1
[ "$(sqlite3 "$tmp/b.db" 'select count(distinct sweep) from run_plan')" -eq 6 ] || { echo "FAIL 2 x 3 points"; fail=1; }
grep -q 'vistimeout\[workers=1,visibility_timeout=1m\]  *vistimeout\[workers=1,visibility_timeout=5m\]' "$tmp/out" \
    || { echo "FAIL point order (the first axis varies slowest)"; head -2 "$tmp/out"; fail=1; }

# Errors.
bad() {  # bad WHAT PATTERN ARGS...
    "$SIMRUN" "${@:3}" > /dev/null 2> "$tmp/err"; local rc=$?
    [ $rc -eq 2 ] && grep -q -- "$2" "$tmp/err" || { echo "FAIL $1: exit $rc"; cat "$tmp/err"; fail=1; }
}
bad "bad value" "--sweep poll.period=1m,5x: bad value '5x' for 'period'" run scenarios/flaky.scn --sweep poll.period=1m,5x
bad "unknown key" "did you mean 'period'" run scenarios/flaky.scn --sweep poll.perid=1m
bad "form" "bad --sweep 'poll=1m'" run scenarios/flaky.scn --sweep poll=1m
bad "empty value" "empty value in --sweep" run scenarios/flaky.scn --sweep poll.period=1m,,2m
bad "same setting" "the sweep points period=1m and period=1m of poll are the same setting" \
    run scenarios/flaky.scn -p poll --sweep poll.period=60s,1m
printf 'horizon 1d\nworkflow w\n  producer p every 1h runs 1s\nsweep poll.period=1m,5x\n' > "$tmp/bad.scn"
bad "scenario value" "bad.scn:4:22: error: bad value '5x' for 'period'" validate "$tmp/bad.scn"
printf 'horizon 1d\nworkflow w\n  producer p every 1h runs 1s\nsweep poll.period=1m,2m,1m\n' > "$tmp/dup.scn"
bad "scenario repeat" "dup.scn:4:25: error: sweep value '1m' is given twice" validate "$tmp/dup.scn"
printf 'horizon 1d\nworkflow w\n  producer p every 1h runs 1s\nsweep fast.period=1m,2m\nvariant fast poll\n' > "$tmp/v.scn"
"$SIMRUN" run "$tmp/v.scn" -p fast > "$tmp/out" && grep -q 'fast\[period=2m\]' "$tmp/out" \
    || { echo "FAIL a sweep of a variant defined later"; fail=1; }
"$SIMRUN" run scenarios/flaky.scn -p oracle --sweep poll.period=1m > /dev/null 2> "$tmp/err"
grep -q "warning: --sweep poll.period: no policy 'poll' is run" "$tmp/err" || { echo "FAIL no warning for an unused --sweep"; fail=1; }
exit $fail
