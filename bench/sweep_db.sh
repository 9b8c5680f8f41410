#!/usr/bin/env bash
# A seed sweep written to a results database, with one worker and with two:
#
#     bash bench/sweep_db.sh [SIMRUN] [REPEATS]      (default ./simrun, 3)
#
# runs `simrun run scenarios/mail.scn --seeds 1..40 --db X` (6 policies x
# 40 seeds = 240 runs, each committed in its own transaction) REPEATS times
# with -j 1 and with -j 2, alternating, each into a fresh database in
# $TMPDIR, and prints every run's wall time and CPU time (user + sys, the
# process and its workers), then the medians and the speed-up of -j 2 over
# -j 1.  The CPU times say how much work there was; on a machine shared with
# other jobs the wall times say how much of a core was left for it (with
# two cores busy elsewhere, -j 2 cannot halve anything), so read both.
# It also prints the machine's load average before and after.  It reports,
# it never fails on speed (make bench runs it).
set -euo pipefail
simrun=${1:-./simrun}
reps=${2:-3}
scn=scenarios/mail.scn
work=$(mktemp -d "${TMPDIR:-/tmp}/sweep_db.XXXXXX")
trap 'rm -rf "$work"' EXIT
TIMEFORMAT='%R %U %S'
echo "sweep_db: $simrun run $scn --seeds 1..40 --db X, -j 1 vs -j 2, $reps times each; $(nproc) cores"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A wall cpu
for r in $(seq 1 "$reps"); do
    for j in 1 2; do
        rm -f "$work/x.db"
        t=$( { time "$simrun" run "$scn" --seeds 1..40 -j "$j" --db "$work/x.db" > /dev/null; } 2>&1 )
        read -r real user sys <<< "$t"
        c=$(awk -v u="$user" -v s="$sys" 'BEGIN {printf "%.2f", u + s}')
        wall[$j]+="$real "
        cpu[$j]+="$c "
        printf '  run %d  -j %d  wall %6.2f s  cpu %6.2f s (user %.2f + sys %.2f)\n' "$r" "$j" "$real" "$c" "$user" "$sys"
    done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
w1=$(echo "${wall[1]}" | median) w2=$(echo "${wall[2]}" | median)
c1=$(echo "${cpu[1]}" | median) c2=$(echo "${cpu[2]}" | median)
echo "median  -j 1: wall $w1 s, cpu $c1 s"
echo "median  -j 2: wall $w2 s, cpu $c2 s"
echo "speed-up of -j 2 over -j 1 (wall): $(awk -v a="$w1" -v b="$w2" 'BEGIN {printf "%.2f", a / b}')x"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
