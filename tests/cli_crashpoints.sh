#!/usr/bin/env bash
# simrun crashpoints (docs/crashpoints.md): exit status, the failing points
# and their scenario files (which reproduce them), -j and --rerun giving the
# same output as -j 1, the results database, bad input; and simrun check
# naming the first failing point of a broken variant.
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# The table without the exploration's wall time.
strip_time() { sed -E 's/, [0-9.]+ s(\)| \(|$)/\1/; s/ \(every point from the start\)//' "$1"; }

# wakeat recovers at every point of wakeat_crash_phases: exit 0.
"$SIMRUN" crashpoints scenarios/wakeat_crash_phases.scn -p wakeat > "$tmp/ok" 2>&1; rc=$?
[ $rc -eq 0 ] || { echo "FAIL wakeat exited $rc"; cat "$tmp/ok"; fail=1; }
grep -q '^  wakeat: [0-9]* points, 0 failing$' "$tmp/ok" || { echo "FAIL no 0-failing summary"; fail=1; }
grep -q '^crashpoints: [0-9]* points, 0 failing$' "$tmp/ok" || { echo "FAIL no closing line"; fail=1; }

# phase_reset=always: exit 1; the points just after a mutation (and just
# before its run commits: the same state) fail with a double effect beyond
# the file's own, they alone, first in the table; each gets a scenario file.
"$SIMRUN" crashpoints scenarios/wakeat_crash_phases.scn -p wakeat-reset -o "$tmp/out/" > "$tmp/bad" 2>&1; rc=$?
[ $rc -eq 1 ] || { echo "FAIL wakeat-reset exited $rc (want 1)"; cat "$tmp/bad"; fail=1; }
grep -q '//' "$tmp/bad" "$tmp"/out/*.scn && { echo "FAIL -o DIR/ wrote paths with //"; fail=1; }
sed -n '3p' "$tmp/bad" | grep -q '^  cp\.c *mutation *after *1 *1 *0 *0 *1 ' \
    || { echo "FAIL the worst row is not the point after a mutation"; sed -n '1,6p' "$tmp/bad"; fail=1; }
grep '^  FAIL #' "$tmp/bad" | grep -v 'just after mutation of .*: double_effects 1, recovery not ok$' \
    | grep -v 'just before end committed of .*: double_effects 1, recovery not ok$' \
    && { echo "FAIL a point fails that is not just after a mutation"; fail=1; }
grep -q '^  FAIL #[0-9]* *01:06:35  just after mutation of cp.c (run [0-9]*): double_effects 1' "$tmp/bad" \
    || { echo "FAIL no failing point after cp.c's mutation"; fail=1; }
nfiles=$(ls "$tmp/out" | grep -c '^wakeat-crash-phases-wakeat-reset-[0-9][0-9][0-9]\.scn$')
nfail=$(sed -n 's/^  wakeat-reset: [0-9]* points, \([0-9]*\) failing$/\1/p' "$tmp/bad")
[ -n "$nfail" ] && [ "$nfail" -gt 0 ] && [ "$nfiles" -eq "$nfail" ] \
    || { echo "FAIL $nfiles scenario files for $nfail failing points"; fail=1; }
# A scenario file is the original plus one crash line, and reproduces its point.
f=$(grep -l 'after mutation of cp.c' "$tmp/out"/*.scn | head -1)
[ -n "$f" ] || { echo "FAIL no scenario file for cp.c's mutation"; fail=1; }
if [ -n "$f" ]; then
    diff <(head -n "$(wc -l < scenarios/wakeat_crash_phases.scn)" "$f") scenarios/wakeat_crash_phases.scn > /dev/null \
        || { echo "FAIL $f does not start with the original scenario"; fail=1; }
    tail -2 "$f" | head -1 | grep -q '^crash host at 1h6m35s after mutation of cp.c for 5m$' \
        || { echo "FAIL $f: the crash line is '$(tail -2 "$f" | head -1)'"; fail=1; }
    # ... then the expect line it fails, which the original holds (2 double
    # effects of its own crashes): check fails there.
    tail -1 "$f" | grep -q '^expect wakeat-reset double_effects <= 2$' \
        || { echo "FAIL $f: last line is '$(tail -1 "$f")'"; fail=1; }
    "$SIMRUN" check -q "$f" > "$tmp/repro.check" 2>&1
    grep -q "^FAIL $f:$(wc -l < "$f") \[wakeat-reset\] expect wakeat-reset double_effects <= 2 (measured 3)$" "$tmp/repro.check" \
        || { echo "FAIL check of $f does not fail its last line"; cat "$tmp/repro.check"; fail=1; }
    "$SIMRUN" run "$f" -p wakeat-reset --format csv > "$tmp/repro.csv" || fail=1
    grep -q '^.*,wakeat-reset,.*,double_effects,3\(,\|$\)' "$tmp/repro.csv" \
        || { echo "FAIL the scenario file does not give 3 double effects (2 of the file, 1 of the point)";
             grep double_effects "$tmp/repro.csv"; fail=1; }
fi

# The issue's case without the hand-placed crash lines: the exploration
# alone finds the double effects of phase_reset=always, at the points just
# after a mutation is recorded (and just before that run commits), and
# wakeat passes everywhere.
grep -v '^crash ' scenarios/wakeat_crash_phases.scn | grep -v '^expect wakeat[a-z-]* [a-z_.]* \(for\|[<>=!]\)' > "$tmp/nocrash.scn"
"$SIMRUN" crashpoints "$tmp/nocrash.scn" -p wakeat,wakeat-reset > "$tmp/nocrash" 2>&1; rc=$?
[ $rc -eq 1 ] || { echo "FAIL without crash lines: exit $rc (want 1)"; fail=1; }
grep -q '^  wakeat: [0-9]* points, 0 failing$' "$tmp/nocrash" || { echo "FAIL wakeat fails without crash lines"; fail=1; }
grep -q '^  wakeat-reset: [0-9]* points, 16 failing$' "$tmp/nocrash" \
    || { echo "FAIL wakeat-reset without crash lines: not 16 failing points"; grep points, "$tmp/nocrash"; fail=1; }
[ "$(grep -c '^  FAIL #[0-9]* *[0-9:.]*  just after mutation of c[pmde]\.[a-z]* (run [0-9]*): double_effects 1, recovery not ok$' "$tmp/nocrash")" -eq 8 ] \
    || { echo "FAIL without crash lines: not a double effect after each of the 8 mutations"; fail=1; }
grep '^  FAIL #' "$tmp/nocrash" | grep -v ': double_effects 1, recovery not ok$' \
    | grep -v 'just before end committed of' | grep -v 'just after mutation of' \
    && { echo "FAIL without crash lines: another point fails"; fail=1; }
"$SIMRUN" check -q "$tmp/nocrash.scn" > /dev/null 2>&1 || { echo "FAIL check without crash lines"; fail=1; }

# --shrink: only with -o; with simrun shrink, each failing point's file is
# shrunk beside it into a smaller scenario that still fails its last line.
"$SIMRUN" crashpoints scenarios/heartbeat_crashpoints.scn --shrink > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || { echo "FAIL --shrink without -o exited $rc (want 2)"; fail=1; }
if "$SIMRUN" shrink --help > /dev/null 2>&1; then
    "$SIMRUN" crashpoints "$tmp/nocrash.scn" -p wakeat-reset --window 1h..1h2m -o "$tmp/shr" --shrink \
        > "$tmp/shr.out" 2>&1; rc=$?
    [ $rc -eq 1 ] || { echo "FAIL --shrink exited $rc (want 1)"; cat "$tmp/shr.out"; fail=1; }
    nmin=0
    for f in "$tmp/shr"/*.scn; do
        case $f in *.min.scn) continue;; esac
        m=${f%.scn}.min.scn
        [ -s "$m" ] || { echo "FAIL no shrunk file for $f"; cat "$tmp/shr.out"; fail=1; continue; }
        nmin=$((nmin + 1))
        grep -q "^          shrunk -> $m\$" "$tmp/shr.out" || { echo "FAIL $m is not listed"; fail=1; }
        [ "$(grep -cv '^#' "$m")" -lt "$(grep -cv '^#' "$f")" ] || { echo "FAIL $m is not smaller than $f"; fail=1; }
        "$SIMRUN" check -q "$m" > "$tmp/min.check" 2>&1
        grep -q '^FAIL .*\[wakeat-reset\] expect wakeat-reset double_effects <= 0 ' "$tmp/min.check" \
            || { echo "FAIL $m does not fail the point's line"; cat "$m" "$tmp/min.check"; fail=1; }
    done
    [ $nmin -eq 2 ] || { echo "FAIL $nmin shrunk files (want 2: after cp.c's mutation, before its commit)"; fail=1; }
fi

# -j 3 and --rerun: the same output as -j 1 (but the time).
"$SIMRUN" crashpoints scenarios/vistimeout_crashpoints.scn -p vistimeout-short --all > "$tmp/j1" 2>&1
"$SIMRUN" crashpoints scenarios/vistimeout_crashpoints.scn -p vistimeout-short --all -j 3 > "$tmp/j3" 2>&1
"$SIMRUN" crashpoints scenarios/vistimeout_crashpoints.scn -p vistimeout-short --all --rerun -j 2 > "$tmp/rr" 2>&1
cmp -s <(strip_time "$tmp/j1") <(strip_time "$tmp/j3") || { echo "FAIL -j 3 differs from -j 1"; fail=1; }
cmp -s <(strip_time "$tmp/j1") <(strip_time "$tmp/rr") || { echo "FAIL --rerun differs"; diff <(strip_time "$tmp/j1") <(strip_time "$tmp/rr") | head; fail=1; }
grep -q '^  ok   #' "$tmp/j1" || { echo "FAIL --all lists no passing point"; fail=1; }

# --db: the baseline and one run per point, marked in crash_points.
"$SIMRUN" crashpoints scenarios/heartbeat_crashpoints.scn -p heartbeat --window 10m..20m --db "$tmp/r.db" \
    > "$tmp/db.out" 2>&1 || { echo "FAIL crashpoints --db"; cat "$tmp/db.out"; fail=1; }
n=$(sed -n 's/^  heartbeat: \([0-9]*\) points.*/\1/p' "$tmp/db.out")
[ "$(sqlite3 "$tmp/r.db" 'select count(*) from runs')" = "$((n + 1))" ] || { echo "FAIL runs in the database"; fail=1; }
[ "$(sqlite3 "$tmp/r.db" 'select count(*) from crash_points where baseline_run_id = 1')" = "$n" ] \
    || { echo "FAIL crash_points rows"; fail=1; }
[ "$(sqlite3 "$tmp/r.db" "select count(*) from crash_points where at_us < 600000000 or at_us >= 1200000000 or line not like 'crash host at %'")" = 0 ] \
    || { echo "FAIL a crash point outside the window or without its line"; fail=1; }
[ "$(sqlite3 "$tmp/r.db" "select count(*) from crashes c join crash_points p using (run_id)")" -ge "$n" ] \
    || { echo "FAIL a crash run has no crash record"; fail=1; }

# The report: one section for the scenario (the baseline), and the crash
# points charted apart.
if command -v gnuplot > /dev/null; then
    "$SIMRUN" report --db "$tmp/r.db" -o "$tmp/rep" > "$tmp/rep.out" 2>&1 || { echo "FAIL report"; cat "$tmp/rep.out"; fail=1; }
    [ "$(grep -c '<section class="scenario"' "$tmp/rep/index.html")" -eq 1 ] \
        || { echo "FAIL crash runs became scenario sections"; fail=1; }
    grep -q '<h2>Crash points</h2>' "$tmp/rep/index.html" || { echo "FAIL no crash-points section"; fail=1; }
    [ -s "$tmp/rep/crashpoints-heartbeat-crashpoints-heartbeat-1.png" ] \
        && [ -s "$tmp/rep/crashpoints-heartbeat-crashpoints-heartbeat-1.dat" ] \
        || { echo "FAIL no crash-points chart"; ls "$tmp/rep"; fail=1; }
fi

# Bad input: exit 2.
for args in "--window 2h..1h" "--max 0" "-p nosuch" "--down 0" "-j 0"; do
    # shellcheck disable=SC2086
    "$SIMRUN" crashpoints scenarios/heartbeat_crashpoints.scn $args > /dev/null 2>&1; rc=$?
    [ $rc -eq 2 ] || { echo "FAIL '$args' exited $rc (want 2)"; fail=1; }
done
"$SIMRUN" crashpoints > /dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL no scenario: not 2"; fail=1; }
# A window past the end of the run (horizon 1h, drain 10m here) would explore
# nothing: an error that gives the run's span, before anything is written.
printf 'horizon 1h\ndrain 10m\nworkflow w\n  producer p every 10m runs 1s publish t\n  consumer c subscribe t fifo runs 1s\n' \
    > "$tmp/short.scn"
"$SIMRUN" crashpoints "$tmp/short.scn" -p oracle --window 1h10m..2h --db "$tmp/w.db" -o "$tmp/w" > /dev/null \
    2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "short.scn: --window 1h10m..2h lies outside the run, which spans 0..1h10m" "$tmp/err" \
    && [ ! -e "$tmp/w.db" ] && [ ! -e "$tmp/w" ] || { echo "FAIL a window past the run: exit $rc"; cat "$tmp/err"; fail=1; }
"$SIMRUN" crashpoints "$tmp/short.scn" -p oracle --window 1h5m..2h > /dev/null 2> "$tmp/err" \
    || { echo "FAIL a window that starts in the drain is refused"; cat "$tmp/err"; fail=1; }

# simrun check: a broken variant fails its crashpoints line, naming the
# first failing point and its crash line.
sed 's/^expect vistimeout-short crashpoints failing > 0$/expect vistimeout-short crashpoints duplicates == 0/' \
    scenarios/vistimeout_crashpoints.scn > "$tmp/vt.scn"
"$SIMRUN" check "$tmp/vt.scn" > "$tmp/check" 2>&1; rc=$?
[ $rc -eq 1 ] || { echo "FAIL check of the broken variant exited $rc"; fail=1; }
grep -q '^FAIL .*\[vistimeout-short\] expect vistimeout-short crashpoints duplicates == 0 (measured 1 at crash point [0-9]* of [0-9]*, [0-9:.]* just [a-z]* .* of billing.charge (run [0-9]*): crash host at [0-9a-z]* [a-z]* .* for 3m)$' "$tmp/check" \
    || { echo "FAIL check does not name the first failing point"; cat "$tmp/check"; fail=1; }
grep -q '^PASS .*\[vistimeout\] expect vistimeout crashpoints lost == 0' "$tmp/check" \
    || { echo "FAIL the good policy's line did not pass"; fail=1; }
# heartbeat's volatile queue: an event published loses work at some point.
sed 's/^crashpoints to 40m down 3m$/crashpoints to 40m down 3m\npublish inbox at 20m/' \
    scenarios/heartbeat_crashpoints.scn > "$tmp/hb.scn"
"$SIMRUN" check -q "$tmp/hb.scn" > "$tmp/hbcheck" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q '^FAIL .*expect heartbeat crashpoints lost == 0 (measured 1 at crash point [0-9]*' "$tmp/hbcheck" \
    || { echo "FAIL heartbeat's volatile queue was not caught (exit $rc)"; cat "$tmp/hbcheck"; fail=1; }
# The JUnit report has a case per crashpoints line.
"$SIMRUN" check scenarios/vistimeout_crashpoints.scn --junit "$tmp/j.xml" > /dev/null || fail=1
[ "$(grep -c '<testcase .*crashpoints' "$tmp/j.xml")" -eq 6 ] || { echo "FAIL junit cases"; fail=1; }

[ $fail -eq 0 ] && echo ok
exit $fail
