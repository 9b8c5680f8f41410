#!/usr/bin/env bash
# What makes the report readable and honest (docs/reports.md): the table of
# contents first; per scenario the verdict before the charts; best/worst
# marks only where a difference is significant over the paired seeds (none
# with one seed); latency CDFs that end at the share of items processed
# (heartbeat on mail.scn: about 72 %); zero lateness drawn at a "0" tic, not
# at 1 us; whiskers from the exact count intervals, never below zero;
# overlapping runs of a handler in sub-lanes; the scenario's local clock on
# time axes; --scenario and --policy drawing a subset; and timelines of
# a million runs decimated to a few kilobytes.
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL $*"; exit 1; }
command -v gnuplot > /dev/null || fail "gnuplot is not installed (bash tools/deps.sh)"

"$SIMRUN" run scenarios/mail.scn -p oracle,heartbeat --db "$tmp/one.db" > /dev/null || fail "run mail"
"$SIMRUN" report --db "$tmp/one.db" -o "$tmp/one" > /dev/null || fail "report of one seed"
html=$tmp/one/index.html
# The contents come first, then the guide; each section opens with its verdict.
c=$(grep -n '<nav id="contents">' "$html" | cut -d: -f1)
g=$(grep -n '<section id="how">' "$html" | cut -d: -f1)
[ -n "$c" ] && [ -n "$g" ] && [ "$c" -lt "$g" ] || fail "the table of contents is not at the top"
v=$(grep -n 'class="verdict"' "$html" | head -1 | cut -d: -f1)
m=$(grep -n '<h3>Metrics</h3>' "$html" | head -1 | cut -d: -f1)
l=$(grep -n 'mail-latency.png' "$html" | head -1 | cut -d: -f1)
[ -n "$v" ] && [ "$v" -lt "$m" ] && [ "$m" -lt "$l" ] || fail "the verdict does not come before the table and charts"
grep -q 'lost work (items never processed): <strong>heartbeat</strong>' "$html" || fail "the verdict does not name heartbeat's lost work"
# One seed: nothing is significant, so no cell is marked.
sed -n '/<table class="metrics">/,/<\/table>/p' "$html" | grep -q '<td class="\(best\|worst\)">' \
    && fail "one seed has best/worst marks"
grep -q 'with one seed nothing is significant' "$html" || fail "the verdict does not say one seed decides nothing"
# The latency CDF ends at the share processed: heartbeat about 72 %, oracle 100 %.
python3 - "$tmp/one/mail-latency.dat" <<'PY' || fail "latency CDF end points"
import sys
blocks = [b for b in open(sys.argv[1]).read().split('\n\n\n') if b.strip()]
ends = {}
for b in blocks:
    lines = b.strip().split('\n')
    name = lines[0].split(':')[0].lstrip('# ')
    ends[name] = float(lines[-1].split()[1])
assert abs(ends['oracle'] - 1) < 1e-9, ends
assert 0.70 < ends['heartbeat'] < 0.74, ends
PY
grep -q "heartbeat (72%)" "$tmp/one/mail-latency.gp" || fail "the CDF legend does not give heartbeat's share"
# The latency table shows the censored p99 as the infinity sign.
grep -q '<th title="[^"]*">latency.p99</th><td>[^<]*</td><td>∞</td>' "$html" || fail "latency.p99 of heartbeat is not ∞ in the table"
# Zero lateness sits at a "0" tic, never at 1 us.
grep -q "set xtics ('0' " "$tmp/one/mail-lateness.gp" || fail "no 0 tic on the lateness axis"
! grep -q '^1e-06 ' "$tmp/one/mail-lateness.dat" || fail "a zero lateness drawn at 1 us"
# Time axes on the scenario's local clock.
grep -q "set xlabel 'local time (Europe/Berlin); the scenario starts Fri 2025-03-07 01:00'" \
    "$tmp/one/mail-timeline-oracle.gp" || fail "the timeline is not on the local clock"
grep -q "'Sat 00:00'" "$tmp/one/mail-timeline-oracle.gp" || fail "no local-clock tics"

# Several seeds: marks where the paired difference is significant (oracle
# has no busy loops, poll thousands, in every seed), exact whiskers.
"$SIMRUN" run scenarios/flaky.scn -p oracle,poll --seeds 1..4 --db "$tmp/four.db" > /dev/null || fail "run flaky"
"$SIMRUN" run scenarios/vistimeout_overrun.scn -p oracle,vistimeout-60s --seeds 1..4 --db "$tmp/four.db" > /dev/null \
    || fail "run vistimeout_overrun"
"$SIMRUN" report --db "$tmp/four.db" -o "$tmp/four" > /dev/null || fail "report of four seeds"
grep -q '<th title="[^"]*">busy_loops</th><td class="best">0</td><td class="worst">' "$tmp/four/index.html" \
    || fail "busy_loops: oracle not marked best, poll not worst"
grep -q 'paired by seed' "$tmp/four/index.html" || fail "the legend does not say the seeds are paired"
awk '/^"/ { if ($3 < 0 || $4 < $3) bad = 1 } END { exit bad }' "$tmp/four/flaky-bars.dat" \
    || fail "a whisker below zero or inverted: $(cat "$tmp/four/flaky-bars.dat")"
grep -q '^"oracle" 0 0 0 ' "$tmp/four/flaky-bars.dat" || fail "lost 0 in every seed: no whisker, as in the tables"
# Overlapping runs of one handler (vistimeout-60s runs jobs twice at once)
# are drawn in sub-lanes: bars off the row's centre.
awk '/^[0-9]/ && $3 != int($3) { found = 1 } END { exit !found }' "$tmp/four/vistimeout-overrun-timeline-vistimeout-60s.dat" \
    || fail "no sub-lanes for overlapping runs"

# A subset: --scenario and --policy.
"$SIMRUN" report --db "$tmp/four.db" -o "$tmp/sub" --scenario flaky --policy oracle > /dev/null || fail "report subset"
ls "$tmp/sub" | grep -q '^vistimeout-overrun' && fail "--scenario drew another scenario"
ls "$tmp/sub" | grep -q 'timeline-poll' && fail "--policy drew another policy"
[ -s "$tmp/sub/flaky-timeline-oracle.png" ] || fail "--scenario flaky --policy oracle drew nothing"
"$SIMRUN" report --db "$tmp/four.db" -o "$tmp/x" --policy nosuch > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "no policy 'nosuch'.*(valid: oracle, poll" "$tmp/err" || fail "--policy nosuch exited $rc"

# A million runs (oracle retrying a failing job) make a small timeline.
"$SIMRUN" run scenarios/heartbeat_cron_backoff.scn -p oracle --db "$tmp/big.db" > /dev/null || fail "run big"
"$SIMRUN" report --db "$tmp/big.db" -o "$tmp/big" > /dev/null || fail "report big"
big=$(find "$tmp/big" -type f -size +300k)
[ -z "$big" ] || fail "files over 300 kB: $big"
echo ok
