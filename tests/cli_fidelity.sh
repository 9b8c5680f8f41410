#!/usr/bin/env bash
# The fidelity suite: every scenario of tests/fidelity/ is checked under its
# system's as-built variant, and docs/fidelity.md must be exactly the page
# tools/fidelity.py generates from those checks (so it cannot drift); each
# behaviour not reproduced must say why, and at least 60 behaviours and
# 95 % of them must be reproduced.  Then the configuration grammars: a
# rejection is an error at file:line:col with exit 2, a fallback a warning.
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 tools/fidelity.py --simrun "$SIMRUN" --check docs/fidelity.md \
    || { echo "FAIL the fidelity page or suite (regenerate: tools/fidelity.py --write docs/fidelity.md)"; exit 1; }

# A rejection: exit 2, the system's reason at the value's line and column.
printf 'horizon 1h\nworkflow w\n  producer p every 1h30m runs 1s publish t\nexpect keepai runs >= 0\n' > "$tmp/rej.scn"
"$SIMRUN" check "$tmp/rej.scn" > "$tmp/out" 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "rej.scn:3:20: error: keep.ai rejects the interval" "$tmp/err" \
    || { echo "FAIL a keep.ai interval rejection (exit $rc)"; cat "$tmp/err"; exit 1; }
# The same file under simrun's own grammar is fine.
sed 's/keepai/wakeat/' "$tmp/rej.scn" > "$tmp/ok.scn"
"$SIMRUN" check "$tmp/ok.scn" > /dev/null 2> "$tmp/err" || { echo "FAIL wakeat reads 1h30m"; cat "$tmp/err"; exit 1; }
# A fallback: a warning at the value, and the run goes on.
printf 'horizon 1h\nworkflow w\n  producer p cron "nope" as-written runs 1s publish t\nexpect herdctl runs == 0\n' > "$tmp/fb.scn"
"$SIMRUN" check "$tmp/fb.scn" > "$tmp/out" 2> "$tmp/err"; rc=$?
[ $rc -eq 0 ] && grep -q 'fb.scn:3:20: warning: herdctl skips the schedule' "$tmp/err" \
    || { echo "FAIL a herdctl fallback (exit $rc)"; cat "$tmp/err"; exit 1; }
# An as-written text is read by simrun's own rules for a plain policy: its
# error has the file's location too.
printf 'horizon 1h\nworkflow w\n  producer p every "5M" as-written runs 1s publish t\n' > "$tmp/aw.scn"
"$SIMRUN" run "$tmp/aw.scn" -p poll > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "aw.scn:3:21: error: unknown unit 'M'" "$tmp/err" \
    || { echo "FAIL an as-written schedule under simrun's grammar (exit $rc)"; cat "$tmp/err"; exit 1; }
"$SIMRUN" run "$tmp/aw.scn" -p herdctl > /dev/null 2> "$tmp/err" || { echo "FAIL herdctl reads 5M"; cat "$tmp/err"; exit 1; }
# Every built-in variant is listed with the sources of its settings.
"$SIMRUN" policies > "$tmp/pol"
for v in keepai kagzi kagzi-before openworkflow herdctl alice openclaw; do
    grep -q "^    variant $v: " "$tmp/pol" || { echo "FAIL variant $v not listed"; exit 1; }
done
# A variant line may take a built-in variant as its base: the built-in
# variant's settings, then the line's own (which win).
printf 'horizon 1d\nworkflow w\n  producer p every 1h runs 1s publish t\n  consumer c subscribe t fifo runs 1s\nvariant kk keepai tick=5s\n' \
    > "$tmp/kk.scn"
"$SIMRUN" run "$tmp/kk.scn" -p kk > "$tmp/out" 2> "$tmp/err" || { echo "FAIL a variant of keepai"; cat "$tmp/err"; exit 1; }
grep -q '^  kk: .*tick=00:00:05,anchor=commit,' "$tmp/out" \
    || { echo "FAIL a variant of keepai lacks keepai's settings or its own"; cat "$tmp/out"; exit 1; }
echo "fidelity: ok"
