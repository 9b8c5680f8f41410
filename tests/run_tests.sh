#!/usr/bin/env bash
# Runs every test of one or more build flavours: the cmocka unit/property
# test binaries in BUILD/tests, then the shell-driven CLI tests
# (tests/cli_*.sh), each with SIMRUN pointing at that flavour's binary and
# SIMRUN_BUILD at its folder.
#
#   tests/run_tests.sh [-j JOBS] [-t 'NAME...'] BUILD_DIR...
#
# Tests run JOBS at a time (default: the number of processors), longest
# first as far as the last run's times (BUILD/tests/NAME.time) tell; each
# one's output goes to BUILD/tests/NAME.log.  Results are printed in a fixed
# order whatever the order tests end in: per flavour, the binaries then the
# scripts, alphabetically, "ok   NAME (SECONDS s, cpu SECONDS s)" (wall and
# processor time) or "FAIL NAME (...)" followed by the end of its log; then
# that flavour's closing "tests: N passed, N failed" line.  The exit status
# is non-zero if anything failed.  -t runs only the tests named (test_engine,
# cli_check; shell patterns such as 'cli_*' work too).
#
# A script with a line "# run-once: WHY" runs in the first BUILD_DIR only:
# what it checks does not depend on the build (a page or a digest of
# results), and every C path it executes is executed under the sanitizers
# by the other tests.  Run alone on one flavour (make test-sanitize), it
# runs there.
set -u
jobs=$(nproc 2> /dev/null || echo 2)
only=""
usage() { echo "usage: tests/run_tests.sh [-j JOBS] [-t 'NAME...'] BUILD_DIR..." >&2; exit 2; }
while getopts j:t: opt; do
    case $opt in
        j) jobs=$OPTARG ;;
        t) only=$OPTARG ;;
        *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
[[ $jobs =~ ^[1-9][0-9]*$ ]] || usage
dirs=("$@")

now() { local t=${EPOCHREALTIME/./}; echo $((10#$t / 1000)); } # milliseconds
secs() { printf '%d.%d' $(($1 / 1000)) $(($1 % 1000 / 100)); }

# The tasks, in the order they are printed: t_dir (index into dirs), t_name,
# t_cmd (a binary, or a script for bash), t_skip (the flavour it runs in
# instead, for a run-once script in a later flavour).
t_dir=(); t_name=(); t_cmd=(); t_skip=()
read -ra pats <<< "$only"
add() {
    local pat hit=${#pats[@]}
    for pat in "${pats[@]}"; do
        # shellcheck disable=SC2053
        [[ $2 == $pat ]] && hit=0
    done
    [ "$hit" -eq 0 ] || return 0
    t_dir+=("$1"); t_name+=("$2"); t_cmd+=("$3"); t_skip+=("$4")
}
for d in "${!dirs[@]}"; do
    B=${dirs[$d]}
    [ -d "$B/tests" ] || { echo "run_tests.sh: no $B/tests (build the tests first)" >&2; exit 2; }
    for t in "$B"/tests/test_*; do
        [ -x "$t" ] && [ -f "$t" ] || continue
        case $t in *.log | *.time) continue ;; esac
        add "$d" "$(basename "$t")" "$t" ""
    done
    for t in tests/cli_*.sh; do
        [ -f "$t" ] || continue
        skip=""
        [ "$d" -gt 0 ] && grep -q '^# run-once: ' "$t" && skip=${dirs[0]}
        add "$d" "$(basename "$t" .sh)" "$t" "$skip"
    done
done
n=${#t_name[@]}
[ "$n" -gt 0 ] || { echo "run_tests.sh: no test named '$only'" >&2; exit 2; }

# Start order: longest first by the last run's time in the same flavour
# (else in any flavour); tests never timed go first, in printed order.
guess() {  # guess INDEX: the last run's time in ms, or a large number
    local f=${dirs[${t_dir[$1]}]}/tests/${t_name[$1]}.time d
    [ -s "$f" ] && { cut -d' ' -f1 "$f"; return; }
    for d in "${dirs[@]}"; do
        [ -s "$d/tests/${t_name[$1]}.time" ] && { cut -d' ' -f1 "$d/tests/${t_name[$1]}.time"; return; }
    done
    echo 999999999
}
order=$(for i in $(seq 0 $((n - 1))); do
    [ -n "${t_skip[$i]}" ] || printf '%s %s\n' "$(guess "$i")" "$i"
done | sort -k1,1nr -k2,2n -s | cut -d' ' -f2)

ms_of() {  # ms_of 1m2.345s
    local m=${1%%m*} r=${1#*m}
    r=${r%s}
    echo $((10#$m * 60000 + 10#${r%.*} * 1000 + 10#${r#*.}))
}

# run INDEX: one test, its output to its log, its time to NAME.time; the
# exit status is the test's.
run() {
    local i=$1 B=${dirs[${t_dir[$1]}]} rc t0
    local log=$B/tests/${t_name[$1]}.log
    t0=$(now)
    if [ "${t_cmd[$i]}" = "tests/${t_name[$i]}.sh" ]; then
        SIMRUN="$PWD/$B/simrun" SIMRUN_BUILD="$B" bash "${t_cmd[$i]}" > "$log" 2>&1 < /dev/null
    else
        SIMRUN="$PWD/$B/simrun" SIMRUN_BUILD="$B" "${t_cmd[$i]}" > "$log" 2>&1 < /dev/null
    fi
    rc=$?
    local ms=$(($(now) - t0)) u s
    # The processor time (user + system) of the test and its children, as
    # this shell's own `times` says it (not in a subshell, which has none).
    times > "$B/tests/${t_name[$i]}.time"
    { read -r _ _; read -r u s; } < "$B/tests/${t_name[$i]}.time"
    echo "$ms $(($(ms_of "$u") + $(ms_of "$s")))" > "$B/tests/${t_name[$i]}.time"
    return $rc
}

# Printing, in task order, as far as the tests have ended.
state=() # "" not ended, else the exit status
pass=(); fail=(); failed=(); busy=(); cpus=()
for d in "${!dirs[@]}"; do pass[$d]=0; fail[$d]=0; failed[$d]=""; busy[$d]=0; cpus[$d]=0; done
shown=0
start=$(now)
summary() {  # summary DIR_INDEX
    local d=$1
    echo "[${dirs[$d]}] test programs: $(secs "${busy[$d]}") s of test time, cpu $(secs "${cpus[$d]}") s"
    echo "tests: ${pass[$d]} passed, ${fail[$d]} failed"
    [ "${fail[$d]}" -eq 0 ] || echo "failed:${failed[$d]}"
}
show() {
    local i d B ms cpu
    while [ "$shown" -lt "$n" ]; do
        i=$shown d=${t_dir[$shown]} B=${dirs[${t_dir[$shown]}]}
        if [ -n "${t_skip[$i]}" ]; then
            echo "--   ${t_name[$i]} (run once, in ${t_skip[$i]})"
        else
            [ -n "${state[$i]:-}" ] || return 0
            read -r ms cpu < "$B/tests/${t_name[$i]}.time" || { ms=0; cpu=0; }
            busy[$d]=$((busy[d] + ms)); cpus[$d]=$((cpus[d] + cpu))
            if [ "${state[$i]}" -eq 0 ]; then
                pass[$d]=$((pass[d] + 1)); echo "ok   ${t_name[$i]} ($(secs "$ms") s, cpu $(secs "$cpu") s)"
            else
                fail[$d]=$((fail[d] + 1)); failed[$d]="${failed[$d]} ${t_name[$i]}"
                echo "FAIL ${t_name[$i]} ($(secs "$ms") s, exit ${state[$i]}; the end of $B/tests/${t_name[$i]}.log:)"
                tail -n 40 "$B/tests/${t_name[$i]}.log"
            fi
        fi
        shown=$((shown + 1))
        if [ "$shown" -eq "$n" ] || [ "${t_dir[$shown]}" != "$d" ]; then
            summary "$d"
        fi
    done
}

# The pool: JOBS tests at a time; each end prints what can be printed.
declare -A pid_task=()
running=0
finish() {  # wait for one test to end
    local p rc
    wait -n -p p; rc=$?
    [ -n "${p:-}" ] || return 0
    state[${pid_task[$p]}]=$rc
    unset "pid_task[$p]"
    running=$((running - 1))
    show
}
show
for i in $order; do
    [ "$running" -lt "$jobs" ] || finish
    run "$i" &
    pid_task[$!]=$i
    running=$((running + 1))
done
while [ "$running" -gt 0 ]; do finish; done
show
total=0
for d in "${!dirs[@]}"; do total=$((total + fail[d])); done
echo "run_tests.sh: ${dirs[*]}: $(secs $(($(now) - start))) s wall, $jobs at a time"
[ "$total" -eq 0 ]
