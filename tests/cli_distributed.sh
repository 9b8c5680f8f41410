#!/usr/bin/env bash
# Sweeps across machines: `run --shard K/N` takes every N-th job of the
# full (scenario x policy x parameters x seed) list; four shards run
# through GNU parallel (the recipe of docs/distributed.md) and `simrun
# merge` gives a database equal, row for row, to the one the whole sweep
# makes on one machine, but for run_timings (the measured wall times, the
# one table that is legitimately per process).  merge refuses mixed simrun
# versions, scenario hashes and fingerprints that disagree, and skips exact
# duplicates.  `run --resume` after SIGTERM (a graceful stop: exit 130,
# every finished run stored) or SIGKILL (each stored run whole) completes
# the same database, with nothing run twice.
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
dump() {  # every row but run_timings, in run_id order
    sqlite3 "$1" '.mode list' \
        'select * from runs order by run_id;' \
        'select * from metrics order by run_id, handler, name;' \
        'select * from histograms order by run_id, handler, kind, bucket_lo_us;' \
        'select * from crashes order by run_id, idx;' \
        'select * from expectations order by run_id, rowid;' \
        'select * from trace order by run_id, seq;' \
        'select * from run_plan order by run_id;'
}
sweep=(scenarios/reminders.scn scenarios/heartbeat_crash.scn -p oracle,poll,wakeat --seeds 1..3 --sweep poll.period=30s,2m
       --store-trace)

# One machine.
"$SIMRUN" run "${sweep[@]}" -j 2 --db "$tmp/single.db" > /dev/null || { echo "FAIL the single-machine sweep"; fail=1; }
n=$(sqlite3 "$tmp/single.db" 'select count(*) from runs')
[ "$n" -eq 24 ] || { echo "FAIL expected 24 runs (2 scenarios x 4 columns x 3 seeds), got $n"; fail=1; }

# Four shards through GNU parallel, with the script of docs/distributed.md
# (on this machine: SIMRUN_HOSTS empty), then merged.
if ! command -v parallel > /dev/null; then
    echo "FAIL GNU parallel is not installed (Debian: apt-get install parallel; tools/deps.sh does)"; exit 1
fi
SIMRUN_HOSTS= bash examples/distributed/parallel-sweep.sh "$tmp/merged.db" 4 "${sweep[@]}" > "$tmp/out" \
    || { echo "FAIL examples/distributed/parallel-sweep.sh"; cat "$tmp/out"; fail=1; }
grep -q 'merge: .*merged.db: 24 runs added from 4 databases, 0 already there' "$tmp/out" \
    || { echo "FAIL merge message:"; cat "$tmp/out"; fail=1; }
dump "$tmp/single.db" > "$tmp/single.rows"
dump "$tmp/merged.db" > "$tmp/merged.rows"
cmp -s "$tmp/single.rows" "$tmp/merged.rows" \
    || { echo "FAIL merged shards differ from the single-machine database:"; diff "$tmp/single.rows" "$tmp/merged.rows" | head; fail=1; }
echo "$(wc -l < "$tmp/single.rows") rows equal after merging 4 shards run by GNU parallel"
[ "$(sqlite3 "$tmp/merged.db" 'select count(*) from run_timings')" -eq 24 ] || { echo "FAIL run_timings not merged"; fail=1; }

# The shards by hand (the Slurm script's arithmetic, with a stand-in srun:
# array tasks 3..6, so task ids need not start at 1), merged in any order.
mkdir -p "$tmp/bin" "$tmp/slurm"
printf '#!/bin/sh\nexec "$@"\n' > "$tmp/bin/srun"
chmod +x "$tmp/bin/srun"
for id in 3 4 5 6; do
    (cd "$tmp/slurm" && PATH="$tmp/bin:$PATH" SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_TASK_MIN=3 SLURM_ARRAY_TASK_ID=$id \
        SLURM_CPUS_PER_TASK=1 SIMRUN="$SIMRUN" bash "$OLDPWD/examples/distributed/slurm-sweep.sbatch" \
        "${sweep[@]/#scenarios/$OLDPWD/scenarios}" 2> /dev/null) || { echo "FAIL slurm-sweep.sbatch task $id"; fail=1; }
done
for k in 1 2 3 4; do
    m=$(sqlite3 "$tmp/slurm/shards/shard-$k.db" 'select count(*) from runs')
    [ "$m" -eq 6 ] || { echo "FAIL shard $k has $m runs, want 6"; fail=1; }
done
"$SIMRUN" merge -q "$tmp/slurm.db" "$tmp"/slurm/shards/shard-{3,1,4,2}.db || { echo "FAIL merge of the Slurm shards"; fail=1; }
# Only the scenario paths differ (the tasks ran elsewhere, with absolute paths).
dump "$tmp/slurm.db" | sed "s|$PWD/scenarios/|scenarios/|g" > "$tmp/slurm.rows"
cmp -s "$tmp/single.rows" "$tmp/slurm.rows" || { echo "FAIL the Slurm shards merged differ"; fail=1; }
cp "$tmp/slurm/shards/shard-1.db" "$tmp/shard1.db"
cp "$tmp/slurm/shards/shard-2.db" "$tmp/shard2.db"

# Merging again adds nothing; duplicates within the inputs are skipped.
"$SIMRUN" merge "$tmp/merged.db" "$tmp/shard2.db" | grep -q ': 0 runs added from 1 database, 6 already there' \
    || { echo "FAIL a second merge added runs"; fail=1; }
"$SIMRUN" merge "$tmp/dup.db" "$tmp/shard1.db" "$tmp/shard1.db" | grep -q ': 6 runs added from 2 databases, 6 already' \
    || { echo "FAIL duplicates within the inputs"; fail=1; }

# A file of schema version 3 (no crash_points table, which merge does not copy) merges too.
cp "$tmp/shard1.db" "$tmp/v3.db"
sqlite3 "$tmp/v3.db" "drop table crash_points; update meta set value = '3' where key = 'schema_version'"
"$SIMRUN" merge "$tmp/from3.db" "$tmp/v3.db" | grep -q ': 6 runs added from 1 database' \
    || { echo "FAIL merge of a schema version 3 file"; fail=1; }

# What merge refuses: exit 2, a message, and the output untouched.
refuse() {  # refuse WHAT PATTERN INPUTS...
    rm -f "$tmp/r.db"
    "$SIMRUN" merge "$tmp/r.db" "${@:3}" > /dev/null 2> "$tmp/err"; local rc=$?
    if [ $rc -ne 2 ] || ! grep -q -- "$2" "$tmp/err"; then echo "FAIL merge $1: exit $rc"; cat "$tmp/err"; fail=1; fi
    if [ -e "$tmp/r.db" ] || [ -e "$tmp/r.db-journal" ]; then  # nothing written, not even an empty file
        echo "FAIL merge $1 left $tmp/r.db"; fail=1
    fi
}
cp "$tmp/shard1.db" "$tmp/v.db"
sqlite3 "$tmp/v.db" "update runs set simrun_version = '0.0.1' where run_id = 2"
refuse "mixed versions" "cannot merge runs of simrun" "$tmp/shard2.db" "$tmp/v.db"
cp "$tmp/shard1.db" "$tmp/h.db"
sqlite3 "$tmp/h.db" "update runs set scenario_hash = '0123456789abcdef' where scenario = 'reminders'"
refuse "scenario hashes" "scenario 'reminders' has hash" "$tmp/shard2.db" "$tmp/h.db"
cp "$tmp/shard1.db" "$tmp/f.db"
sqlite3 "$tmp/f.db" "update runs set fingerprint = '0000000000000000' where run_id = 1"
refuse "fingerprints" "has fingerprint .* in one file and .* in another" "$tmp/shard1.db" "$tmp/f.db"
refuse "a missing input" "cannot merge '$tmp/none.db'" "$tmp/shard1.db" "$tmp/none.db"
cp "$tmp/shard1.db" "$tmp/v5.db"
sqlite3 "$tmp/v5.db" "update meta set value = '5' where key = 'schema_version'"
refuse "a newer schema" "another schema version" "$tmp/v5.db"
echo "not a database" > "$tmp/text.db"
refuse "not a database" "cannot merge '$tmp/text.db'" "$tmp/text.db"
"$SIMRUN" merge "$tmp/shard1.db" "$tmp/shard1.db" 2>&1 | grep -q 'into itself' || { echo "FAIL merge into itself"; fail=1; }
"$SIMRUN" merge "$tmp/r.db" > /dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL merge without inputs"; fail=1; }

# --shard and --resume usage.
for bad in 0/4 5/4 x 2/0 1/100001; do
    "$SIMRUN" run scenarios/flaky.scn --shard "$bad" > /dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL --shard $bad"; fail=1; }
done
"$SIMRUN" run scenarios/flaky.scn --resume > /dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL --resume without --db"; fail=1; }
"$SIMRUN" run scenarios/flaky.scn -p oracle --db "$tmp/v.db" --resume > /dev/null 2> "$tmp/err"
[ $? -eq 2 ] && grep -q 'holds runs of simrun' "$tmp/err" || { echo "FAIL --resume into another version's file"; fail=1; }

# --resume after a graceful stop (SIGTERM) and after SIGKILL. The signal must
# arrive while runs remain: 80 runs take about 2 s here, and the signal goes
# out within a few polls of the second stored run, so a machine several times
# faster still leaves most of the runs to do.
long=(scenarios/mail.scn -p oracle,poll --seeds 1..40)
nlong=80
"$SIMRUN" run "${long[@]}" -j 2 --db "$tmp/whole.db" > /dev/null
dump "$tmp/whole.db" > "$tmp/whole.rows"
for sig in TERM KILL; do
    rm -f "$tmp/cut.db"
    "$SIMRUN" run "${long[@]}" -j 2 --db "$tmp/cut.db" > /dev/null 2> "$tmp/cut.err" &
    pid=$!
    for _ in $(seq 1 3000); do  # until some runs are stored
        [ "$(sqlite3 "$tmp/cut.db" 'select count(*) from runs' 2> /dev/null || echo 0)" -ge 2 ] && break
        sleep 0.02
    done
    kill -"$sig" "$pid"; wait "$pid" 2> /dev/null; rc=$?
    if [ "$sig" = TERM ]; then
        [ $rc -eq 130 ] && grep -q 'interrupted after .* --resume runs the rest' "$tmp/cut.err" \
            || { echo "FAIL SIGTERM: exit $rc"; cat "$tmp/cut.err"; fail=1; }
    fi
    got=$(sqlite3 "$tmp/cut.db" 'select count(*) from runs')
    [ "$got" -lt "$nlong" ] || { echo "FAIL SIG$sig came after all $nlong runs were stored: nothing left to test"; fail=1; }
    "$SIMRUN" run "${long[@]}" -j 2 --db "$tmp/cut.db" --resume > /dev/null 2> "$tmp/resume.err" \
        || { echo "FAIL --resume after SIG$sig"; cat "$tmp/resume.err"; fail=1; }
    grep -q -- "--resume: $got of the $nlong runs are already in .*; $((nlong - got)) to run" "$tmp/resume.err" \
        || { echo "FAIL --resume message after SIG$sig ($got stored):"; cat "$tmp/resume.err"; fail=1; }
    dump "$tmp/cut.db" > "$tmp/cut.rows"
    echo "SIG$sig after $got of $nlong runs were stored; --resume ran the rest"
    cmp -s "$tmp/whole.rows" "$tmp/cut.rows" \
        || { echo "FAIL after SIG$sig and --resume ($got stored first) the database differs:"; diff "$tmp/whole.rows" "$tmp/cut.rows" | head -5; fail=1; }
done
# Resuming a complete database runs nothing.
"$SIMRUN" run "${long[@]}" --db "$tmp/whole.db" --resume 2>&1 > /dev/null | grep -q "$nlong of the $nlong runs .*; 0 to run" \
    || { echo "FAIL resuming a complete database"; fail=1; }
exit $fail
