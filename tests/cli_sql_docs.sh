#!/usr/bin/env bash
# Every SQL example in the docs (```sql blocks of docs/*.md and README.md)
# runs with sqlite3 against a results database like the one `make demo`
# writes, and returns rows: no error, no empty answer.  A block that only
# changes the database (DELETE) must change some rows; each block gets a
# fresh copy of the database.  SIMRUN_SQL_DB=FILE runs them against that
# database instead (e.g. make demo's results.db).
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v sqlite3 > /dev/null || { echo "FAIL sqlite3 is not installed (bash tools/deps.sh)"; exit 1; }
db=${SIMRUN_SQL_DB:-}
if [ -z "$db" ]; then
    # The demo's shape, smaller: a sweep of several scenarios under every
    # policy, a livelocking variant, and one scenario with its trace stored.
    db=$tmp/r.db
    "$SIMRUN" run scenarios/mail.scn scenarios/flaky.scn --seeds 1..2 --db "$db" > /dev/null 2>&1 \
        || { echo "FAIL simrun run"; exit 1; }
    "$SIMRUN" run scenarios/wakeat_orphan.scn -p wakeat,wakeat-bug --seeds 1..2 --db "$db" > /dev/null 2>&1 \
        || { echo "FAIL simrun run wakeat_orphan"; exit 1; }
    "$SIMRUN" run scenarios/interval_crash.scn --seeds 1..2 --db "$db" --store-trace > /dev/null 2>&1 \
        || { echo "FAIL simrun run interval_crash"; exit 1; }
fi
python3 - "$tmp" docs/*.md README.md <<'PY'
import re, sys
out, files = sys.argv[1], sys.argv[2:]
n = 0
for f in files:
    text = open(f, encoding='utf-8').read()
    for m in re.finditer(r'^```sql\n(.*?)^```', text, re.S | re.M):
        line = text.count('\n', 0, m.start()) + 1
        open(f'{out}/q{n:03d}.sql', 'w').write(m.group(1))
        open(f'{out}/q{n:03d}.where', 'w').write(f'{f}:{line}')
        n += 1
print(n)
PY
fail=0
count=0
for q in "$tmp"/q*.sql; do
    [ -f "$q" ] || continue
    count=$((count + 1))
    where=$(cat "${q%.sql}.where")
    cp "$db" "$tmp/copy.db"
    sql=$(cat "$q")
    if ! grep -qi '\bselect\b' "$q"; then
        sql="$sql
SELECT total_changes() WHERE total_changes() > 0;"
    fi
    if ! rows=$(printf '%s\n' "$sql" | sqlite3 -bail "$tmp/copy.db" 2>&1); then
        echo "FAIL $where: the query fails: $rows"
        fail=1
    elif [ -z "$rows" ]; then
        echo "FAIL $where: the query returns no rows"
        fail=1
    else
        echo "ok   $where ($(printf '%s\n' "$rows" | wc -l) rows)"
    fi
done
[ "$count" -ge 10 ] || { echo "FAIL only $count SQL examples found"; fail=1; }
exit $fail
