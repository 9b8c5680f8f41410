#!/usr/bin/env bash
# The main job: every bundled scenario under every policy, over ten seeds
# (SEEDS=A..B to change), into results.db, and the comparison report into
# report/index.html.  Timelines in the report are simulated again from the
# scenario files, so the database needs no stored trace.
# The database is written to a temporary file and moved into place only when
# every run succeeded, so a failed demo never leaves a half-written result;
# the report replaces report/index.html only when every chart was drawn.
set -euo pipefail
cd "$(dirname "$0")/.."
db=results.db
seeds=${SEEDS:-1..10}
jobs=$(nproc 2>/dev/null || echo 2)
[ "$jobs" -le 8 ] || jobs=8
tmp=$(mktemp results.db.XXXXXX)
rm -f "$tmp"
trap 'rm -f "$tmp" "$tmp-journal" "$tmp.txt"' EXIT
./simrun run scenarios/*.scn --seeds "$seeds" -j "$jobs" --db "$tmp" > "$tmp.txt"
mv "$tmp" "$db"
./simrun report --db "$db" -o report
mv "$tmp.txt" report/tables.txt
trap - EXIT
echo
echo "results: $PWD/$db ($(sqlite3 "$db" 'select count(*) from runs') runs, seeds $seeds; schema in docs/results.md)"
echo "tables:  $PWD/report/tables.txt (every metric, mean ± 95% confidence half-width, per policy)"
echo "report:  $PWD/report/index.html (open it in a browser; docs/reports.md explains it)"
