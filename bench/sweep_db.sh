#!/usr/bin/env bash
# A seed sweep written to a results database, with one worker and with two:
#
#     bash bench/sweep_db.sh [SIMRUN] [REPEATS]      (default ./simrun, 3)
#
# runs `simrun run scenarios/mail.scn --seeds 1..40 --db X` (every
# registered policy x 40 seeds, each run committed in its own transaction;
# the count is printed) REPEATS times
# with -j 1 and with -j 2, alternating, each into a fresh database in
# $TMPDIR, and prints for every run:
#   wall   the elapsed time;
#   cpu    user + sys of simrun, its writer thread and its workers (their
#          time on a CPU, from schedstat): how much work there was;
#   wait   the time the simulating threads spent runnable but waiting for a
#          CPU that something else held (the kernel's per-thread schedstat,
#          sampled every 0.1 s): the main thread with -j 1, the mean of the
#          workers with -j 2;
#   alone  wall - wait: an estimate of the wall time on a machine with
#          nothing else to run.
# then the medians and the speed-ups of -j 2 over -j 1.  On a machine shared
# with other jobs the wall times mostly say how much CPU was left over (two
# busy cores elsewhere and -j 2 cannot halve anything); the cpu and alone
# columns are what to compare.  It reports, it never fails on speed (make
# bench runs it).
set -euo pipefail
simrun=${1:-./simrun}
reps=${2:-3}
scn=scenarios/mail.scn
work=$(mktemp -d "${TMPDIR:-/tmp}/sweep_db.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The last schedstat (run_ns wait_ns) of every thread of pid and of its
# children, until pid ends; written to $2 as "TASK RUN WAIT ROLE", ROLE
# being main, writer or worker.
sample() {
    local pid=$1 out=$2 t c
    declare -A last role
    while kill -0 "$pid" 2> /dev/null; do
        for t in /proc/"$pid"/task/*; do
            read -r r w _ 2> /dev/null < "$t/schedstat" || continue
            last[$t]="$r $w"
            [ "${t##*/}" = "$pid" ] && role[$t]=main || role[$t]=writer
        done
        for c in $(cat /proc/"$pid"/task/*/children 2> /dev/null); do
            read -r r w _ 2> /dev/null < "/proc/$c/schedstat" || continue
            last[/proc/$c]="$r $w"
            role[/proc/$c]=worker
        done
        sleep 0.1
    done
    for t in "${!last[@]}"; do echo "$t ${last[$t]} ${role[$t]}"; done > "$out"
}

echo "sweep_db: $simrun run $scn --seeds 1..40 --db X, -j 1 vs -j 2, $reps times each; $(nproc) cores"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A wall cpu alone
for r in $(seq 1 "$reps"); do
    for j in 1 2; do
        rm -f "$work/x.db"
        t0=$(date +%s.%N)
        "$simrun" run "$scn" --seeds 1..40 -j "$j" --db "$work/x.db" > /dev/null &
        pid=$!
        sample "$pid" "$work/ss" &
        spid=$!
        wait "$pid"
        t1=$(date +%s.%N)
        wait "$spid"
        role=main
        [ "$j" -gt 1 ] && role=worker
        read -r w c wt a <<< "$(awk -v t0="$t0" -v t1="$t1" -v role="$role" \
            '{cpu += $2} $4 == role {s += $3; n++} END {w = t1 - t0; q = n ? s / n / 1e9 : 0;
             printf "%.2f %.2f %.2f %.2f", w, cpu / 1e9, q, w - q}' "$work/ss")"
        wall[$j]+="$w " cpu[$j]+="$c " alone[$j]+="$a "
        printf '  run %d  -j %d  wall %6.2f s  cpu %6.2f s  wait %6.2f s  alone %6.2f s\n' "$r" "$j" "$w" "$c" "$wt" "$a"
    done
done
echo "runs per sweep: $(sqlite3 "$work/x.db" 'select count(*) from runs' 2> /dev/null || echo '?')"
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
for j in 1 2; do
    printf 'median  -j %d: wall %s s, cpu %s s, alone %s s\n' "$j" "$(echo "${wall[$j]}" | median)" \
        "$(echo "${cpu[$j]}" | median)" "$(echo "${alone[$j]}" | median)"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
echo "speed-up of -j 2 over -j 1: wall $(ratio "$(echo "${wall[1]}" | median)" "$(echo "${wall[2]}" | median)")x," \
     "alone $(ratio "$(echo "${alone[1]}" | median)" "$(echo "${alone[2]}" | median)")x"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
