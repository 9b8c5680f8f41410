#!/usr/bin/env bash
# The CI gate: every bundled scenario's expect lines pass, and the JUnit
# report is well-formed and counts the same lines.
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$SIMRUN" check scenarios/*.scn --junit "$tmp/junit.xml" > "$tmp/out"; rc=$?
cat "$tmp/out"
[ $rc -eq 0 ] || { echo "FAIL simrun check exited $rc"; exit 1; }
passed=$(sed -n 's/^check: \([0-9]*\) passed, 0 failed$/\1/p' "$tmp/out")
[ -n "$passed" ] && [ "$passed" -ge 30 ] || { echo "FAIL too few expectations ($passed)"; exit 1; }
cases=$(grep -c '<testcase ' "$tmp/junit.xml")
[ "$cases" -eq "$passed" ] || { echo "FAIL junit has $cases cases, check passed $passed"; exit 1; }
/usr/bin/python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$tmp/junit.xml" \
    || { echo "FAIL junit XML does not parse"; exit 1; }
# A failing expectation makes check exit 1 and says FAIL with the measured value.
sed 's/^expect oracle,poll lost == 0$/expect oracle,poll lost > 0/' scenarios/flaky.scn > "$tmp/flaky.scn"
"$SIMRUN" check "$tmp/flaky.scn" > "$tmp/out2"; rc=$?
[ $rc -eq 1 ] && grep -q '^FAIL .*lost > 0 (measured 0)' "$tmp/out2" \
    || { echo "FAIL a broken expectation did not fail (exit $rc)"; cat "$tmp/out2"; exit 1; }
# Every metric the checker defines is documented, in the metric definitions
# and in the results schema.
names=$("$SIMRUN" run scenarios/flaky.scn -p oracle --format csv | sed 1d | cut -d, -f7 | sort -u)
[ -n "$names" ] || { echo "FAIL no metric names"; exit 1; }
for n in $names; do
    for doc in docs/metrics.md docs/results.md; do
        grep -q "\`$n\`\|\`${n%%.*}\.\|\`\.${n#*.}\`" "$doc" \
            || { echo "FAIL metric '$n' is not documented in $doc"; exit 1; }
    done
done
# Every policy parameter is documented on its policy's page.
params=$("$SIMRUN" policies | sed -n -E 's/^    ([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*) = .*/\1 \2/p')
[ -n "$params" ] || { echo "FAIL no parameters listed"; exit 1; }
while read -r pol key; do
    doc=docs/policy-$pol.md
    [ -f "$doc" ] || doc=docs/policies.md
    grep -q "\`$key\`" "$doc" || { echo "FAIL parameter $pol.$key is not documented in $doc"; exit 1; }
done <<< "$params"
# Every policy has a page, and a row in the list of policies.
for pol in $("$SIMRUN" policies | sed -n -E 's/^([a-z][a-z0-9_]*)  \(.*/\1/p'); do
    grep -q "^| \`$pol\` |" docs/policies.md || { echo "FAIL policy $pol has no row in docs/policies.md"; exit 1; }
done
echo ok
