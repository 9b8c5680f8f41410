#!/usr/bin/env bash
# The main job: every bundled scenario under every policy, over ten seeds
# (SEEDS=A..B to change), into results.db, and the comparison report into
# report/index.html.  Timelines in the report are simulated again from the
# scenario files, so the database needs no stored trace, except for one
# small scenario with a crash (interval_crash.scn) whose trace is stored, so
# that the trace table and the SQL examples of docs/results.md have rows.
# The database is written to a temporary file and moved into place only when
# every run succeeded, so a failed demo never leaves a half-written result;
# the report replaces report/index.html only when every chart was drawn.
set -euo pipefail
cd "$(dirname "$0")/.."
db=results.db
seeds=${SEEDS:-1..10}
jobs=$(nproc 2>/dev/null || echo 2)
[ "$jobs" -le 8 ] || jobs=8
traced=scenarios/interval_crash.scn
tmp=$(mktemp results.db.XXXXXX)
rm -f "$tmp"
trap 'rm -rf "$tmp" "$tmp-journal" "$tmp.txt" report.new' EXIT
rest=()
for f in scenarios/*.scn; do
    [ "$f" = "$traced" ] || rest+=("$f")
done
./simrun run "${rest[@]}" --seeds "$seeds" -j "$jobs" --db "$tmp" > "$tmp.txt"
./simrun run "$traced" --seeds "$seeds" -j "$jobs" --db "$tmp" --store-trace >> "$tmp.txt"
mv "$tmp" "$db"
# A fresh folder, swapped in only when the report succeeded: no chart of an
# earlier report is left behind.
rm -rf report.new
# (its summary names the folder it will be moved to)
./simrun report --db "$db" -o report.new | sed 's#report\.new/#report/#'
mv "$tmp.txt" report.new/tables.txt
rm -rf report
mv report.new report
trap - EXIT
echo
echo "results: $PWD/$db ($(sqlite3 "$db" 'select count(*) from runs') runs, seeds $seeds; schema in docs/results.md)"
echo "tables:  $PWD/report/tables.txt (every metric, mean ± 95% confidence half-width, per policy)"
echo "report:  $PWD/report/index.html (open it in a browser; docs/reports.md explains it)"
