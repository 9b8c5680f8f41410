#!/usr/bin/env bash
# Bad input: every malformed scenario in tests/bad/ must give
# "file:line:col: error: ..." (the location its first line names), exit 2,
# and leave no database behind; bad usage exits 2 too and writes nothing.
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0; n=0
for f in tests/bad/*.scn; do
    n=$((n + 1))
    # "# error: LINE:COL: ..." or, for an error inside a trace file, "# error: FILE:LINE:COL: ..."
    want=$(head -n 1 "$f" | sed -n 's/^# error: \([^ ]*:\)\{0,1\}\([0-9]*:[0-9]*\): .*/\2/p')
    [ -n "$want" ] || { echo "FAIL $f: first line names no expected error"; fail=1; continue; }
    "$SIMRUN" validate "$f" > "$tmp/out" 2> "$tmp/err"; rc=$?
    # A trace-file error is reported in the trace file; the location is what matters.
    if [ $rc -ne 2 ] || ! grep -Eq "^[^ ]+:$want: error: [^A-Z]" "$tmp/err"; then
        echo "FAIL $f: validate exit $rc, want 2 and ':$want: error:'"; cat "$tmp/err"; fail=1
    fi
    rm -f "$tmp/r.db"
    "$SIMRUN" run "$f" --db "$tmp/r.db" > /dev/null 2> "$tmp/err"; rc=$?
    if [ $rc -ne 2 ] || [ -e "$tmp/r.db" ]; then
        echo "FAIL $f: run exit $rc (want 2) or a database was written"; fail=1
    fi
    if grep -qiE 'sanitizer|runtime error|internal error' "$tmp/err"; then
        echo "FAIL $f: crashed"; cat "$tmp/err"; fail=1
    fi
done
[ "$n" -ge 40 ] || { echo "FAIL only $n malformed scenarios"; fail=1; }

good=scenarios/flaky.scn
expect_usage() {  # expect_usage DESCRIPTION ARGS...
    local what=$1; shift
    rm -f "$tmp/u.db"
    "$SIMRUN" "$@" > "$tmp/out" 2> "$tmp/err"; rc=$?
    if [ $rc -ne 2 ] || [ -e "$tmp/u.db" ] || ! grep -q 'error: ' "$tmp/err"; then
        echo "FAIL usage ($what): exit $rc"; cat "$tmp/err"; fail=1
    fi
}
expect_usage "no command"
expect_usage "unknown command" frobnicate
expect_usage "unknown option" run "$good" --frob
expect_usage "no scenario" run --db "$tmp/u.db"
expect_usage "unknown policy" run "$good" -p oracle,nosuch --db "$tmp/u.db"
expect_usage "unknown parameter" run "$good" --set poll.nosuch=1 --db "$tmp/u.db"
expect_usage "bad parameter value" run "$good" --set poll.period=5x --db "$tmp/u.db"
expect_usage "bad --set" run "$good" --set poll --db "$tmp/u.db"
expect_usage "bad seed" run "$good" --seed -3 --db "$tmp/u.db"
expect_usage "bad seed range" run "$good" --seeds 5..2 --db "$tmp/u.db"
expect_usage "bad format" run "$good" --format xml --db "$tmp/u.db"
expect_usage "missing file" run "$tmp/none.scn" --db "$tmp/u.db"
expect_usage "missing value" run "$good" --seed
expect_usage "--store-trace without --db" run "$good" -p oracle --store-trace
grep -q "error: --store-trace needs --db" "$tmp/err" || { echo "FAIL --store-trace without --db"; cat "$tmp/err"; fail=1; }
# A database path that is no regular file (a folder, a device, a pipe) is
# refused by every command that takes one, before anything is written: no
# PATH-journal beside it, no trace file.
mkdir "$tmp/dir.db"; mkfifo "$tmp/fifo.db"; ln -s /dev/null "$tmp/null.db"
printf 'x' > "$tmp/plain.db"
for db in dir fifo null; do
    p=$tmp/$db.db
    for cmd in "run $good -p oracle --trace $tmp/t.txt --db $p" "check $good --db $p" "crashpoints $good -p oracle --db $p" \
        "report --db $p -o $tmp/rep" "diff $p $tmp/plain.db" "diff $tmp/plain.db $p" "merge $p $tmp/plain.db" \
        "merge $tmp/new.db $p"; do
        # shellcheck disable=SC2086
        timeout -s KILL 60 "$SIMRUN" $cmd > /dev/null 2> "$tmp/err"; rc=$?
        if [ $rc -ne 2 ] || ! grep -q "error: .* is a [a-z ]*, not a regular file" "$tmp/err" \
            || [ -n "$(ls "$tmp" | grep -e '-journal$' -e '^t.txt$' -e '^rep$' -e '^new.db$')" ]; then
            echo "FAIL a $db as the database ($cmd): exit $rc, or something written"; cat "$tmp/err"; ls "$tmp"; fail=1
        fi
    done
done
# A policy named twice in -p would run twice: refused by every command that takes -p.
for cmd in "run $good --db $tmp/u.db" "check $good --db $tmp/u.db" "crashpoints $good --db $tmp/u.db" \
    "shrink $good -o $tmp/u.scn" "swarm --seeds 1..1 -o $tmp/u.swarm"; do
    # shellcheck disable=SC2086
    expect_usage "-p with a repeat ($cmd)" $cmd -p oracle,poll,oracle
    grep -q "error: -p names 'oracle' twice" "$tmp/err" && [ ! -e "$tmp/u.scn" ] && [ ! -e "$tmp/u.swarm" ] \
        || { echo "FAIL -p with a repeat ($cmd): no message, or output written"; cat "$tmp/err"; fail=1; }
done
# Every command reads -p one way: a list that names nothing, or more than 64
# names, is refused before anything is written; blanks around a name are not
# part of it.
many=oracle$(printf ',x%d' $(seq 1 64))
for cmd in "run $good --db $tmp/u.db" "check $good --db $tmp/u.db" "crashpoints $good --db $tmp/u.db" \
    "shrink $good -o $tmp/u.scn" "swarm --seeds 1..1 -o $tmp/u.swarm"; do
    for list in "," " , " "$many"; do
        # shellcheck disable=SC2086
        expect_usage "-p '${list:0:12}' ($cmd)" $cmd -p "$list"
        grep -q -e "error: empty policy list '$list'" -e "error: -p names more than 64 policies or variants" "$tmp/err" \
            && [ ! -e "$tmp/u.scn" ] && [ ! -e "$tmp/u.swarm" ] \
            || { echo "FAIL -p '${list:0:12}' ($cmd): no message, or output written"; cat "$tmp/err"; fail=1; }
    done
done
"$SIMRUN" run "$good" -p " oracle, poll" --format csv > "$tmp/blank.csv" 2> "$tmp/err" \
    && "$SIMRUN" run "$good" -p oracle,poll --format csv > "$tmp/plain.csv" && cmp -s "$tmp/blank.csv" "$tmp/plain.csv" \
    || { echo "FAIL -p ' oracle, poll' is not -p oracle,poll"; cat "$tmp/err"; fail=1; }
"$SIMRUN" run "$good" -p oracle --metrics "lost, latency.p50" > /dev/null 2> "$tmp/err" \
    || { echo "FAIL --metrics 'lost, latency.p50'"; cat "$tmp/err"; fail=1; }
# A combination of parameters a policy refuses is no parse error (tests/bad/
# holds those): it is found when the policies are resolved, at the line that
# set the blamed parameter, by validate and by run whichever policies run.
cat > "$tmp/refused.scn" <<'SCN'
name refused
horizon 1h
workflow w
  producer p every 10m runs 1s
set temporal_schedule.retry_initial=10s
set temporal_schedule.retry_max_interval=5s temporal_schedule.max_attempts=3
SCN
for cmd in validate "run -p oracle --db $tmp/u.db" "check --db $tmp/u.db"; do
    rm -f "$tmp/u.db"
    # shellcheck disable=SC2086
    "$SIMRUN" $cmd "$tmp/refused.scn" > /dev/null 2> "$tmp/err"; rc=$?
    if [ $rc -ne 2 ] || [ -e "$tmp/u.db" ] \
        || ! grep -q "refused.scn:6:42: error: retry_max_interval (5s) is below retry_initial (10s)" "$tmp/err"; then
        echo "FAIL refused combination ($cmd): exit $rc"; cat "$tmp/err"; fail=1
    fi
done
# validate shows the line and a caret under the value, as for a parse error.
"$SIMRUN" validate "$tmp/refused.scn" > /dev/null 2> "$tmp/err"
grep -qx '     6 | set temporal_schedule.retry_max_interval=5s temporal_schedule.max_attempts=3' "$tmp/err" \
    && grep -qx '       |                                          ^' "$tmp/err" && grep -qx "$tmp/refused.scn: 1 error" "$tmp/err" \
    || { echo "FAIL validate shows no line and caret for a refused combination"; cat "$tmp/err"; fail=1; }
sed -i 's/max_attempts=3/max_attempts=1/' "$tmp/refused.scn" # one attempt: Temporal checks nothing more
"$SIMRUN" validate "$tmp/refused.scn" > /dev/null 2> "$tmp/err" \
    || { echo "FAIL max_attempts=1 is refused"; cat "$tmp/err"; fail=1; }
expect_usage "refused combination" run "$good" -p temporal_schedule --set temporal_schedule.retry_initial=2m \
    --set temporal_schedule.retry_max_interval=1m --db "$tmp/u.db"
# An interval a built-in variant's system reads but that passes 64 bits of
# microseconds is refused at its value, never overflowed (a UBSan finding).
cat > "$tmp/huge.scn" <<'SCN'
name huge
horizon 1d
workflow a
  producer p every 1h runs 1s
set alice.every=8000000000001h
SCN
for cmd in validate "run -p alice --db $tmp/u.db"; do
    rm -f "$tmp/u.db"
    # shellcheck disable=SC2086
    "$SIMRUN" $cmd "$tmp/huge.scn" > /dev/null 2> "$tmp/err"; rc=$?
    if [ $rc -ne 2 ] || [ -e "$tmp/u.db" ] || grep -qiE 'sanitizer|runtime error' "$tmp/err" \
        || ! grep -q "huge.scn:5:17: error: interval '8000000000001h' is too large to simulate" "$tmp/err"; then
        echo "FAIL interval past 64 bits ($cmd): exit $rc"; cat "$tmp/err"; fail=1
    fi
done
expect_usage "interval past 64 bits" run "$good" -p alice --set alice.every=800000000000h --db "$tmp/u.db"
# A built-in variant named only by an expect line: validate refuses what
# its system rejects, as run and check do.
printf 'horizon 1d\nworkflow w\n  producer p every 1h30m runs 1s publish t\n  consumer c subscribe t fifo runs 1s\nexpect keepai lost == 0\n' \
    > "$tmp/keep.scn"
for cmd in validate run check; do
    "$SIMRUN" $cmd "$tmp/keep.scn" > /dev/null 2> "$tmp/err"; rc=$?
    [ $rc -eq 2 ] && grep -q "keep.scn:3:20: error: keep.ai rejects the interval" "$tmp/err" \
        || { echo "FAIL $cmd of an expect-only keepai scenario: exit $rc"; cat "$tmp/err"; fail=1; }
    case $cmd in validate) grep -qx '       |                    ^' "$tmp/err" \
        || { echo "FAIL validate shows no caret under the rejected interval"; cat "$tmp/err"; fail=1; } ;; esac
done
# A --set is checked whether its policy runs or not, as a set line is.
expect_usage "refused combination, another policy run" run "$good" -p poll --set temporal_schedule.retry_initial=2m \
    --set temporal_schedule.retry_max_interval=1m --db "$tmp/u.db"
grep -q "temporal_schedule.retry_max_interval=1m: retry_max_interval (1m) is below retry_initial (2m)" "$tmp/err" \
    || { echo "FAIL the refused --set is not named"; cat "$tmp/err"; fail=1; }
expect_usage "refused combination, check" check "$good" -p poll --set temporal_schedule.retry_initial=2m \
    --set temporal_schedule.retry_max_interval=1m
expect_usage "refused sweep point" run "$good" -p temporal_schedule --set temporal_schedule.retry_initial=1m \
    --sweep temporal_schedule.retry_max_interval=0,30s --db "$tmp/u.db"
grep -q "sweep point temporal_schedule\[retry_max_interval=30s\]: retry_max_interval (30s) is below retry_initial (1m)" \
    "$tmp/err" || { echo "FAIL the refused sweep point is not named"; cat "$tmp/err"; fail=1; }
expect_usage "one bad among good" run "$good" tests/bad/$(ls tests/bad | head -n 1) --db "$tmp/u.db"
"$SIMRUN" run "$good" -p nosuch 2>&1 | grep -q "unknown policy 'nosuch' (valid: oracle, poll" \
    || { echo "FAIL unknown policy message does not list the valid ones"; fail=1; }
"$SIMRUN" run "$good" --set poll.nosuch=1 2>&1 | grep -q "valid: period" \
    || { echo "FAIL unknown parameter message does not list the valid ones"; fail=1; }
echo "$n malformed scenarios checked"
exit $fail
