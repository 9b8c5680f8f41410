#!/usr/bin/env bash
# Traces stream: `--trace FILE` and `--store-trace` cost memory that follows
# the live state, not the horizon, with -j 1 and -j N alike.  Records and
# text go to the trace file, to the database or through the spool (files in
# $TMPDIR that the sweep deletes once each run is delivered), never into
# memory: so a run's peak RSS is the same over 3 hours and over a day,
# the spool is empty afterwards, and a spool that cannot be written is a
# write error (exit 4), not a crash or a silent loss.
# Peak memory is measured in the -O2 build only (the sanitizers' allocator
# keeps freed memory on purpose); the failures are checked in both.
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2> /dev/null; rm -rf "$tmp"' EXIT
fail=0
mkdir "$tmp/spool"
export TMPDIR="$tmp/spool"

# 40 instances of the fleet workflow: about 110 k trace records a day
# under each policy.
fleet() {  # fleet HORIZON FILE
    printf 'horizon %s\ndrain 0s\nseed 1\nworkflow w x 40\n  producer p every 10m runs uniform(1s,3s) source s\n  consumer c subscribe s fifo runs exp(2s)\nsource s poisson 6/h\ncrash host at 2h for 5m\n' \
        "$1" > "$2"
}
fleet 3h "$tmp/short.scn"
fleet 1d "$tmp/long.scn"

# peak_kib ARGS...: the largest resident set of simrun and its workers, KiB.
peak_kib() {
    python3 - "$SIMRUN" "$@" << 'EOF'
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
if r.returncode != 0:
    sys.exit("simrun exited %d" % r.returncode)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
EOF
}

sanitized=0
case ${SIMRUN_BUILD:-} in *san*) sanitized=1 ;; esac
for j in 1 2; do
    [ $sanitized = 0 ] || break
    args=(run -p oracle,poll -j $j --trace "$tmp/t.txt" --store-trace)
    short=$(peak_kib "${args[@]}" "$tmp/short.scn" --db "$tmp/s$j.db") || { echo "FAIL -j $j: the short run"; fail=1; continue; }
    long=$(peak_kib "${args[@]}" "$tmp/long.scn" --db "$tmp/l$j.db") || { echo "FAIL -j $j: the long run"; fail=1; continue; }
    rows=$(sqlite3 "$tmp/l$j.db" "SELECT count(*) FROM trace")
    lines=$(wc -l < "$tmp/t.txt")
    # The long run's trace is some 25 MB of records and 12 MB of text: kept
    # in memory, it would add far more than the 8 MiB allowed here.
    [ "$rows" -gt 200000 ] || { echo "FAIL -j $j: only $rows trace rows over a day"; fail=1; }
    [ "$rows" = "$lines" ] || { echo "FAIL -j $j: $rows stored records, $lines lines of text"; fail=1; }
    if [ "$long" -gt $((short + 8192)) ]; then
        echo "FAIL -j $j: peak memory grows with the horizon: $short KiB over 3 h, $long KiB over a day"
        fail=1
    fi
    echo "-j $j: peak $short KiB over 3 h, $long KiB over a day ($rows records)"
done
# The same records whatever -j.
for t in trace runs; do
    [ $sanitized = 0 ] || break
    a=$(sqlite3 "$tmp/l1.db" "SELECT * FROM $t ORDER BY 1, 2" | grep -v '^$' | md5sum)
    b=$(sqlite3 "$tmp/l2.db" "SELECT * FROM $t ORDER BY 1, 2" | grep -v '^$' | md5sum)
    [ "$a" = "$b" ] || { echo "FAIL the $t table differs between -j 1 and -j 2"; fail=1; }
done
[ -z "$(ls -A "$tmp/spool")" ] || { echo "FAIL the spool was left behind:"; ls -la "$tmp/spool"; fail=1; }

# A spool that cannot be made: a write error that names it, nothing stored
# half, nothing left.
chmod a-w "$tmp/spool"
if [ "$(id -u)" != 0 ]; then
    for j in 1 2; do
        "$SIMRUN" run "$tmp/short.scn" -p oracle,poll -j $j --store-trace --db "$tmp/ro$j.db" > /dev/null 2> "$tmp/err"
        rc=$?
        [ $rc -eq 4 ] && grep -q "^simrun: error: cannot write results: cannot make a spool for the trace.* in '$tmp/spool'" "$tmp/err" \
            || { echo "FAIL -j $j: an unwritable spool exited $rc"; cat "$tmp/err"; fail=1; }
        [ "$(sqlite3 "$tmp/ro$j.db" 'SELECT count(*) FROM trace' 2> /dev/null || echo 0)" = 0 ] \
            || { echo "FAIL -j $j: trace rows stored without a spool"; fail=1; }
    done
fi
chmod u+w "$tmp/spool"
# ... and a spool in a folder that does not exist (root can write anywhere).
for j in 1 2; do
    TMPDIR="$tmp/none" "$SIMRUN" run "$tmp/short.scn" -p oracle,poll -j $j --trace "$tmp/x.txt" --store-trace \
        --db "$tmp/none$j.db" > /dev/null 2> "$tmp/err"
    rc=$?
    [ $rc -eq 4 ] && grep -q "^simrun: error: cannot write results: cannot make a spool for the trace.*No such file or directory" "$tmp/err" \
        || { echo "FAIL -j $j: a missing spool folder exited $rc"; cat "$tmp/err"; fail=1; }
    ! grep -qiE 'sanitizer|runtime error|internal error' "$tmp/err" || { echo "FAIL -j $j: crashed"; fail=1; }
done
# An interrupted sweep leaves no spool either.
"$SIMRUN" run "$tmp/$([ $sanitized = 0 ] && echo long || echo short).scn" -p oracle,poll,wakeat,heartbeat -j 2 --trace "$tmp/i.txt" --store-trace \
    --db "$tmp/int.db" > /dev/null 2>&1 &
pid=$!
sleep 1
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] || [ $rc -eq 0 ] || { echo "FAIL an interrupted sweep exited $rc"; fail=1; }
[ -z "$(ls -A "$tmp/spool")" ] || { echo "FAIL an interrupted sweep left its spool:"; ls -la "$tmp/spool"; fail=1; }
exit $fail
