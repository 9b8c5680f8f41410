#!/usr/bin/env bash
# The main job: every bundled scenario under every policy into results.db.
# The database is written to a temporary file and moved into place only when
# every run succeeded, so a failed demo never leaves a half-written result.
set -euo pipefail
cd "$(dirname "$0")/.."
db=results.db
tmp=$(mktemp results.db.XXXXXX)
rm -f "$tmp"
trap 'rm -f "$tmp" "$tmp-journal"' EXIT
./simrun run scenarios/*.scn --db "$tmp"
mv "$tmp" "$db"
trap - EXIT
echo
echo "results: $PWD/$db ($(sqlite3 "$db" 'select count(*) from runs') runs; schema in docs/results.md)"
