#!/usr/bin/env bash
# Machine-readable output of simrun run: CSV and JSON carry each metric's
# unit; a percentile that lands on work never done (censored) is "inf" in
# CSV, null with "censored": true in JSON and the infinity sign in tables
# (heartbeat on mail.scn loses about 28 % of its items: its latency.p99);
# with --seeds, a summary per policy (mean, 95 % interval, n); --metrics
# filters every format; --format markdown is a Markdown table.
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL $*"; exit 1; }

# The table: censored percentiles print as the infinity sign.
"$SIMRUN" run scenarios/mail.scn -p oracle,heartbeat > "$tmp/table" || fail "run exited $?"
grep -E '^latency\.p99 +[0-9]+h[0-9]+m +∞$' "$tmp/table" || fail "heartbeat's latency.p99 is not ∞ in the table"
grep -E '^latency\.p50 +[0-9]' "$tmp/table" | grep -qv '∞' || fail "latency.p50 should be finite for both"

# CSV: a unit column; censored values are inf.
"$SIMRUN" run scenarios/mail.scn -p oracle,heartbeat --format csv > "$tmp/csv" || fail "csv exited $?"
head -1 "$tmp/csv" | grep -qx 'scenario,policy,params,seed,status,fingerprint,metric,value,unit,n,ci95_lo,ci95_hi' \
    || fail "csv header: $(head -1 "$tmp/csv")"
grep -q '^mail,heartbeat,"",7,ok,[0-9a-f]*,latency.p99,inf,us,1,,$' "$tmp/csv" || fail "csv: heartbeat latency.p99 is not inf"
grep -q '^mail,oracle,"",7,ok,[0-9a-f]*,lost,0,items,1,,$' "$tmp/csv" || fail "csv: unit of lost"
grep -q ',recovery_ok,1,bool,' "$tmp/csv" || fail "csv: unit of a boolean"
! awk -F, 'NR > 1 && $9 == ""' "$tmp/csv" | grep -q . || fail "csv: a row without a unit"

# JSON: valid, units, null + censored, summaries with --seeds.
"$SIMRUN" run scenarios/mail.scn -p oracle,heartbeat --seeds 1..3 --format json > "$tmp/json" || fail "json exited $?"
python3 - "$tmp/json" <<'PY' || fail "json output"
import json, sys
d = json.load(open(sys.argv[1]))
runs = [o for o in d if o['kind'] == 'run']
sums = [o for o in d if o['kind'] == 'summary']
assert len(runs) == 6 and len(sums) == 2, (len(runs), len(sums))
for o in runs:
    for name, m in o['metrics'].items():
        assert m['unit'] in ('us', 'bool', 'items', 'dues', 'runs', 'wakeups', 'results', 'crashes', 'handlers'), (name, m)
hb = [o for o in runs if o['policy'] == 'heartbeat'][0]['metrics']
assert hb['latency.p99'] == {'value': None, 'unit': 'us', 'censored': True}, hb['latency.p99']
assert hb['latency.p50']['value'] > 0 and 'censored' not in hb['latency.p50']
s = [o for o in sums if o['policy'] == 'heartbeat'][0]
assert s['seeds'] == '1..3' and s['n'] == 3
assert s['metrics']['latency.p99']['mean'] is None and s['metrics']['latency.p99']['censored_seeds'] == 3
lost = s['metrics']['lost']
assert lost['n'] == 3 and lost['unit'] == 'items' and lost['ci95'][0] < lost['mean'] < lost['ci95'][1], lost
o = [o for o in sums if o['policy'] == 'oracle'][0]['metrics']['lost']
assert o['mean'] == 0 and o['ci95'][0] == 0 and 0 < o['ci95'][1] < 1.3, o      # 3.69 / 3 seeds
PY

# CSV summaries: one row per metric after each policy's seeds.
"$SIMRUN" run scenarios/flaky.scn -p oracle,poll --seeds 1..4 --format csv > "$tmp/sum" || fail "csv --seeds exited $?"
n=$(grep -c ',1\.\.4,summary,,' "$tmp/sum")
per=$(grep -c '^flaky,oracle,"",1,' "$tmp/sum")
[ "$n" -eq $((2 * per)) ] || fail "expected $((2 * per)) summary rows, got $n"
grep -q '^flaky,oracle,"",1\.\.4,summary,,runs_failed,[0-9.]*,runs,4,[0-9.]*,[0-9.]*$' "$tmp/sum" \
    || fail "summary row of runs_failed: $(grep 'summary,,runs_failed' "$tmp/sum")"
# A metric with no value in any seed (interval never recovers from the stop
# of interval_stop.scn: -1, never, in each seed): an empty summary over
# n = 0 seeds.
"$SIMRUN" run scenarios/interval_stop.scn -p interval --seeds 1..2 --format csv > "$tmp/none" || fail "csv --seeds exited $?"
grep -q '^interval_stop,interval,"",1,ok,[0-9a-f]*,recovery_time,-1,us,1,,$' "$tmp/none" \
    && grep -q '^interval_stop,interval,"",1\.\.2,summary,,recovery_time,,us,0,,$' "$tmp/none" \
    || fail "summary of a metric with no value: $(grep recovery_time "$tmp/none")"

# --metrics filters every format.
"$SIMRUN" run scenarios/flaky.scn -p oracle --metrics lost,latency.* --format csv | sed 1d | cut -d, -f7 | sort -u \
    > "$tmp/m"
[ "$(tr '\n' ' ' < "$tmp/m")" = "latency.max latency.mean latency.p50 latency.p90 latency.p99 lost " ] \
    || fail "--metrics csv: $(tr '\n' ' ' < "$tmp/m")"
"$SIMRUN" run scenarios/flaky.scn -p oracle --metrics wakeups > "$tmp/t1"
[ "$(grep -c '^[a-z]' "$tmp/t1")" -eq 5 ] || fail "--metrics table: $(cat "$tmp/t1")"   # head, metric, wakeups, status, fingerprint
"$SIMRUN" run scenarios/flaky.scn --metrics nosuch > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "--metrics nosuch exited $rc"

# Markdown: a heading and a table with a row per metric.
"$SIMRUN" run scenarios/flaky.scn -p oracle,poll --seeds 1..3 --format markdown --metrics lost,runs > "$tmp/md" \
    || fail "markdown exited $?"
grep -qx '### flaky' "$tmp/md" && grep -qx '| metric | oracle | poll |' "$tmp/md" && grep -qx '|:--|--:|--:|' "$tmp/md" \
    && grep -q '^| lost | 0 | 0 |$' "$tmp/md" && grep -q '^| runs | .* ± .* | .* |$' "$tmp/md" \
    || { cat "$tmp/md"; fail "markdown table"; }

# --seed A..B is --seeds A..B (the form the product's command line names).
"$SIMRUN" run scenarios/flaky.scn -p oracle,poll --seed 1..3 --format markdown --metrics lost,runs > "$tmp/md2" \
    || fail "--seed 1..3 exited $?"
cmp -s "$tmp/md" "$tmp/md2" || fail "--seed 1..3 differs from --seeds 1..3"
"$SIMRUN" run scenarios/flaky.scn --seed 3..1 > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "--seed 3..1 exited $rc"
echo ok
