#!/usr/bin/env bash
# Faults around a valid run, each with its documented outcome:
#  - results that cannot be written (a folder that does not exist, a
#    database locked by another process, a file-size limit, a full device
#    for --trace) exit 4, "cannot write results", with the reason, and
#    leave only whole runs behind;
#  - the workers of -j die with a parent that is killed;
#  - a scenario on standard input ('-') for validate, run and check;
#  - messages quote a user's bytes escaped (\xNN), never raw.
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
good=scenarios/flaky.scn

expect_write_fault() {  # expect_write_fault WHAT WANT-IN-MESSAGE COMMAND...
    local what=$1 want=$2; shift 2
    "$@" > /dev/null 2> "$tmp/err"; local rc=$?
    if [ $rc -ne 4 ] || ! grep -q "^simrun: error: cannot write results: .*$want" "$tmp/err"; then
        echo "FAIL $what: exit $rc (want 4 and '$want')"; cat "$tmp/err"; fail=1
    fi
    if grep -qiE 'sanitizer|runtime error|internal error' "$tmp/err"; then
        echo "FAIL $what: crashed"; fail=1
    fi
}

# --- results that cannot be written -------------------------------------------------------
expect_write_fault "missing folder" "unable to open database file" \
    "$SIMRUN" run "$good" -p oracle --db "$tmp/none/r.db"
expect_write_fault "trace on a full device" "No space left on device" \
    "$SIMRUN" run "$good" -p oracle --trace /dev/full
expect_write_fault "trace in a missing folder" "No such file or directory" \
    "$SIMRUN" run "$good" -p oracle --trace "$tmp/none/t.txt"
expect_write_fault "JUnit report on a full device" "No space left on device" \
    "$SIMRUN" check "$good" -q --junit /dev/full
# A file-size limit: the write fails with EFBIG instead of SIGXFSZ killing
# simrun; the runs written before stay, each whole.
expect_write_fault "file-size limit" "File too large" \
    bash -c "ulimit -f 200; exec \"$SIMRUN\" run scenarios/mail.scn -p oracle,poll --seeds 1..4 --store-trace --db $tmp/big.db"
if command -v sqlite3 > /dev/null; then
    [ "$(sqlite3 "$tmp/big.db" 'PRAGMA integrity_check')" = ok ] || { echo "FAIL file-size limit: damaged database"; fail=1; }
    orphans=$(sqlite3 "$tmp/big.db" "SELECT count(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM metrics m WHERE m.run_id = r.run_id)")
    [ "$orphans" = 0 ] || { echo "FAIL file-size limit: $orphans partial runs"; fail=1; }
fi
# A lock held by another process past the store's 5 s wait.
if python3 -c 'import sqlite3' 2> /dev/null; then
    "$SIMRUN" run "$good" -p oracle --db "$tmp/lock.db" > /dev/null || { echo "FAIL lock: setup"; fail=1; }
    python3 - "$tmp/lock.db" "$tmp/locked" <<'EOF' &
import sqlite3, sys, time, os
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute('BEGIN EXCLUSIVE')
open(sys.argv[2], 'w').close()
time.sleep(9)
EOF
    holder=$!
    for _ in $(seq 50); do [ -e "$tmp/locked" ] && break; sleep 0.1; done
    expect_write_fault "locked database" "database is locked" "$SIMRUN" run "$good" -p oracle --db "$tmp/lock.db"
    kill "$holder" 2> /dev/null; wait "$holder" 2> /dev/null
fi
# A read-only database (only a user other than root is refused the write).
if [ "$(id -u)" != 0 ]; then
    "$SIMRUN" run "$good" -p oracle --db "$tmp/ro.db" > /dev/null && chmod 444 "$tmp/ro.db"
    expect_write_fault "read-only database" "read-only" "$SIMRUN" run "$good" -p oracle --db "$tmp/ro.db"
fi

# --- -j workers die with their parent ------------------------------------------------------
# Each job of bench/large.scn takes about a second (more under the
# sanitizers): a worker that only noticed at its next job would be seen.
"$SIMRUN" run bench/large.scn -p oracle --seeds 1..40 -j 2 > /dev/null 2>&1 &
parent=$!
workers=""
for _ in $(seq 50); do
    workers=$(pgrep -P "$parent" | tr '\n' ' ')
    [ -n "$workers" ] && break
    sleep 0.1
done
[ -n "$workers" ] || { echo "FAIL no workers seen"; fail=1; }
sleep 0.2
kill -9 "$parent"; wait "$parent" 2> /dev/null
sleep 0.3
for w in $workers; do
    # Gone, or a zombie waiting to be reaped: either way it stopped.
    st=$(ps -o stat= -p "$w" 2> /dev/null | cut -c1)
    if [ -n "$st" ] && [ "$st" != Z ]; then
        echo "FAIL worker $w outlived its parent"; kill -9 "$w"; fail=1
    fi
done

# --- a scenario on standard input --------------------------------------------------------------
out=$("$SIMRUN" validate - < "$good") || { echo "FAIL validate -"; fail=1; }
grep -q "^<stdin>: ok" <<< "$out" || { echo "FAIL validate - says: $out"; fail=1; }
"$SIMRUN" run - -p oracle --format csv < "$good" > "$tmp/stdin.csv" || { echo "FAIL run -"; fail=1; }
"$SIMRUN" run "$good" -p oracle --format csv > "$tmp/file.csv"
# The same rows, but for the scenario's name (flaky names itself) and nothing else.
cmp -s "$tmp/stdin.csv" "$tmp/file.csv" || { echo "FAIL run - differs from the file"; diff "$tmp/stdin.csv" "$tmp/file.csv" | head; fail=1; }
"$SIMRUN" check - -q < "$good" > /dev/null || { echo "FAIL check -"; fail=1; }
printf 'horizon 1d\nfrobnicate\n' | "$SIMRUN" validate - 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "^<stdin>:2:1: error: unknown directive" "$tmp/err" || { echo "FAIL bad stdin: exit $rc"; cat "$tmp/err"; fail=1; }
"$SIMRUN" validate - - < "$good" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "read only once" "$tmp/err" || { echo "FAIL '-' twice: exit $rc"; fail=1; }

# --- a user's bytes are escaped in every message -------------------------------------------------
body='workflow w\n  producer p every 1h runs 1s publish t\n  consumer c subscribe t fifo runs 1s\n'
n=0
for line in 'timezone Mars/\xff\xfex' 'crash host at 2025-01-0\xff for 1s' 'set poll.period=5\xff\xfe' \
            'set heartbeat.active_tz=A/\xc3x' 'set heartbeat.active_start=0\xff:00' \
            'variant v poll period=\xe2\x82' 'expect oracle lo\xffst == 0' 'source s daily 5/h peak 0\xff:00'; do
    n=$((n + 1))
    printf "horizon 1d\n$line\n$body" > "$tmp/esc$n.scn"
    "$SIMRUN" validate "$tmp/esc$n.scn" > /dev/null 2> "$tmp/err"
    if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f\x80-\xff]' "$tmp/err" || ! grep -q '\\x' "$tmp/err"; then
        echo "FAIL raw bytes in the message for: $line"; cat -v "$tmp/err"; fail=1
    fi
done
"$SIMRUN" run "$good" --set $'poll.period=5\xff\x1b' > /dev/null 2> "$tmp/err"
LC_ALL=C grep -q $'[\x1b\x80-\xff]' "$tmp/err" && { echo "FAIL raw bytes in the --set message"; fail=1; }

[ $fail -eq 0 ] && echo ok
exit $fail
