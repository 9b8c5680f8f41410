#!/usr/bin/env bash
# A simrun sweep split into shards that GNU parallel runs, on this machine
# or over ssh, then merged into one results database (docs/distributed.md):
#
#   examples/distributed/parallel-sweep.sh OUT.db SHARDS RUN-ARGS...
#
#   e.g. parallel-sweep.sh results.db 16 scenarios/*.scn --seeds 1..200 --sweep poll.period=30s,1m,5m
#
# RUN-ARGS are those of `simrun run` (not --shard or --db, which this
# script sets).  Environment:
#   SIMRUN_HOSTS  a GNU parallel --sshlogin list, e.g. 'node1,node2,8/node3';
#                 empty (the default): this machine only.  Each host needs
#                 ssh access, rsync and the same simrun version on its PATH;
#                 the files among RUN-ARGS (scenarios, plugins) are copied
#                 to it for each shard (give relative paths).
#   SIMRUN_FILES  more files to copy with them, blank-separated: the trace
#                 files and plugins that the scenarios name.
#   SIMRUN        the simrun program (default: simrun)
#   SIMRUN_JOBS   -j of each shard (default 1: parallel runs the shards side
#                 by side, one per core of each host)
# The merged database equals the one `simrun run RUN-ARGS --db OUT.db` makes
# on one machine (but for run_timings, the measured wall times).
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,21s/^# \{0,1\}//p' "$0" >&2
    exit 2
fi
out=$1 shards=$2
shift 2
simrun=${SIMRUN:-simrun}
jobs=${SIMRUN_JOBS:-1}
hosts=${SIMRUN_HOSTS:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/simrun-shards.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ -z "$hosts" ]; then
    # This machine: as many shards at once as it has cores.
    parallel --will-cite --halt now,fail=1 -q "$simrun" run "$@" -j "$jobs" --shard {}/"$shards" \
        --db "$work/shard{}.db" --format csv ::: $(seq 1 "$shards") > /dev/null
else
    # Over ssh: each shard runs in a fresh folder on its host (--wd ...),
    # the files among the arguments are copied into it first (with their
    # relative paths), and its database comes back (--return), and the
    # copies are removed (--cleanup).
    files=()
    for a in "$@" ${SIMRUN_FILES:-}; do
        if [ -f "$a" ]; then files+=(--transferfile "$a"); fi
    done
    parallel --will-cite --halt now,fail=1 --sshlogin "$hosts" "${files[@]}" --wd ... \
        --return "$work/./shard{}.db" --cleanup \
        -q "$simrun" run "$@" -j "$jobs" --shard {}/"$shards" --db shard{}.db --format csv \
        ::: $(seq 1 "$shards") > /dev/null
fi
"$simrun" merge "$out" "$work"/shard*.db
