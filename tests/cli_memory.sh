#!/usr/bin/env bash
# The memory budget (--max-memory, docs/cli.md): a scenario that needs more
# at once is refused before anything runs, a run that reaches it stops with
# status memory-limit and simrun exits 2 naming the line; inputs whose
# history is long but whose live state is small run within a small budget;
# none of them ends in an internal error.
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL $*"; exit 1; }

# A burst of 1e8 items at one instant needs about 15 GiB: refused at its line.
printf 'horizon 1h\nworkflow w\n  consumer c subscribe t fifo runs 1s\npublish t burst 100000000 at 0\n' > "$tmp/burst.scn"
for cmd in validate run check; do
    "$SIMRUN" $cmd "$tmp/burst.scn" --max-memory 1G > "$tmp/out" 2> "$tmp/err"; rc=$?
    [ $rc -eq 2 ] || fail "$cmd of a burst over the budget exited $rc"
    grep -q "burst.scn:4:1: error: the scenario needs about .* over the memory budget of 1.0 GiB (--max-memory)" \
        "$tmp/err" || { cat "$tmp/err"; fail "$cmd: no error at the burst's line"; }
done
# validate shows the line and a caret, as for its other errors.
"$SIMRUN" validate "$tmp/burst.scn" --max-memory 1G > /dev/null 2> "$tmp/err"
grep -qx '     4 | publish t burst 100000000 at 0' "$tmp/err" && grep -qx '       | ^' "$tmp/err" \
    && grep -qx "$tmp/burst.scn: 1 error" "$tmp/err" || { cat "$tmp/err"; fail "validate: no line and caret"; }
# ... and accepted with a budget that holds it.
"$SIMRUN" validate "$tmp/burst.scn" --max-memory 64G > /dev/null || fail "validate with a large budget"

# Items that pile up (runs that outlast the horizon) reach 8 MiB at run time.
printf 'horizon 1d\nworkflow w\n  consumer c subscribe t fifo runs 2d\npublish t rate 200000/d\n' > "$tmp/pile.scn"
"$SIMRUN" run "$tmp/pile.scn" -p oracle --max-memory 8M --format csv --db "$tmp/r.db" > "$tmp/out" 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "a run that reached the budget exited $rc"
grep -q "pile.scn:4:1: error: memory limit: the simulation reached the memory budget of 8.0 MiB" "$tmp/err" \
    || { cat "$tmp/err"; fail "no error at the publish line"; }
grep -q ',memory-limit,' "$tmp/out" || fail "the CSV rows do not say memory-limit"
[ "$(sqlite3 "$tmp/r.db" "SELECT status FROM runs")" = "memory-limit" ] || fail "the stored run's status"
"$SIMRUN" check "$tmp/pile.scn" --max-memory 8M > "$tmp/out" 2> "$tmp/err"; rc=$?
[ $rc -ne 3 ] || fail "check ended in an internal error"

# Long histories, small live state: within 16 MiB, status ok.
printf 'horizon 30d\nworkflow w\n  consumer c subscribe t fifo runs 1s\npublish t poisson 1/h\ncrash host random mtbf 1s mttr 1s\n' \
    > "$tmp/crashes.scn"
printf 'horizon 2m\ndrain 0\nworkflow w\n  producer p every 20us runs 0 publish t\n  consumer c subscribe t fifo runs 0\n' \
    > "$tmp/every.scn"
for f in crashes every; do
    "$SIMRUN" run "$tmp/$f.scn" -p oracle --max-memory 16M --format csv > "$tmp/out" 2> "$tmp/err"; rc=$?
    [ $rc -eq 0 ] || { cat "$tmp/err"; fail "$f exited $rc"; }
    grep -q ',ok,' "$tmp/out" || fail "$f did not run to the end"
done
# The policies whose tables follow live state: 20 instances polled every
# 10 minutes for 60 days (about 350 k records) fit in 4 MiB, durable tables
# included (docs/results.md, "Memory").
printf 'horizon 60d\nworkflow w x 20\n  producer p every 10m runs 1s source s\n  consumer c subscribe s fifo runs 1s\nsource s poisson 6/h\ncrash host at 12h for 5m\n' \
    > "$tmp/fleet.scn"
streaming=oracle,poll,wakeat,vistimeout,interval,heartbeat,systemd_timer
"$SIMRUN" run "$tmp/fleet.scn" -p "$streaming" --max-memory 4M --format csv > "$tmp/out" 2> "$tmp/err"; rc=$?
[ $rc -eq 0 ] || { cat "$tmp/err"; fail "a small fleet over 60 days exited $rc within 4 MiB"; }
! grep -q ',memory-limit,' "$tmp/out" || fail "a policy's memory grows with the horizon"
# Over a long enough horizon both are refused by the event estimate, at
# their lines, instead of running for hours.
sed 's/^horizon 30d$/horizon 3660d/' "$tmp/crashes.scn" > "$tmp/crashes10y.scn"
for i in $(seq 1 12); do echo 'crash worker 1 random mtbf 1s mttr 1s'; done >> "$tmp/crashes10y.scn"
"$SIMRUN" validate "$tmp/crashes10y.scn" 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'crashes10y.scn:[0-9]*:1: error: the scenario would publish about' "$tmp/err" \
    || { cat "$tmp/err"; fail "random crashes are not counted in the event estimate (exit $rc)"; }
sed 's/^horizon 2m$/horizon 1d/' "$tmp/every.scn" > "$tmp/every1d.scn"
"$SIMRUN" validate "$tmp/every1d.scn" 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'every1d.scn:4:1: error' "$tmp/err" || fail "a producer due every 20us for a day (exit $rc)"

# Bad sizes are usage errors.
for bad in 0 12 -1G 5X 1.5Q ""; do
    "$SIMRUN" validate "$tmp/every.scn" --max-memory "$bad" > /dev/null 2> "$tmp/err"; rc=$?
    [ $rc -eq 2 ] && grep -q "bad --max-memory" "$tmp/err" || fail "--max-memory '$bad' accepted (exit $rc)"
done
for good in 1M 512M 8G 8GiB 8GB 1.5G 1048576; do
    "$SIMRUN" validate "$tmp/every.scn" --max-memory "$good" > /dev/null || fail "--max-memory '$good' refused"
done
echo ok
