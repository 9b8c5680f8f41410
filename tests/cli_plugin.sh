#!/usr/bin/env bash
# Policy plugins (sim/plugin.h): `--policy FILE` on run, check, validate and
# policies, and `plugin PATH` in a scenario (relative to the scenario's
# folder), load a shared object's `simrun_policy`, which then runs like a
# built-in policy (-p, set, variant, expect, -j, the database).  Every bad
# plugin is a clear error with exit 2 (file:line:col for a scenario line):
# a missing file, not a shared object, a missing symbol, a wrong ABI, a
# missing required hook, a name clash with a built-in policy, a built-in
# variant or another plugin, built-in variants of its own, a bad parameter
# table.
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
top=$PWD
build() {  # build NAME CFLAGS...: examples/plugin/debounce.c with edits by -D
    cc -std=c11 -fPIC -shared -I"$top" "${@:2}" -o "$tmp/$1.so" "$tmp/src.c" || { echo "FAIL cannot build $1"; fail=1; }
}
# The example, with knobs for breaking it.
sed -e 's/^    .abi = POLICY_ABI,/    .abi = ABI,/' -e 's/^    .name = "debounce",/    .name = NAME,/' \
    -e 's/^    .on_timer = debounce_on_timer,/    .on_timer = TIMER,/' \
    -e 's/^const struct policy_ops simrun_policy = {/const struct policy_ops SYMBOL = {/' \
    -e 's/"30s", NULL, 0,/DEFAULT, NULL, 0,/' \
    examples/plugin/debounce.c > "$tmp/src.c"
base=(-DABI=POLICY_ABI -DNAME='"debounce"' -DTIMER=debounce_on_timer -DSYMBOL=simrun_policy -DDEFAULT='"30s"')
build good "${base[@]}"
build other "${base[@]/-DNAME=\"debounce\"/-DNAME=\"debounce2\"}"
build abi "${base[@]/-DABI=POLICY_ABI/-DABI=1}"
build nohook "${base[@]/-DTIMER=debounce_on_timer/-DTIMER=NULL}"
build nosym "${base[@]/-DSYMBOL=simrun_policy/-DSYMBOL=some_policy}"
build clash "${base[@]/-DNAME=\"debounce\"/-DNAME=\"poll\"}"
build badname "${base[@]/-DNAME=\"debounce\"/-DNAME=\"2x\"}"
build baddefault "${base[@]/-DDEFAULT=\"30s\"/-DDEFAULT=\"soon\"}"
build variantname "${base[@]/-DNAME=\"debounce\"/-DNAME=\"keepai\"}"
# A plugin that declares built-in variants (only simrun's own policies may).
sed 's/^    .name = NAME,/    .name = NAME, .variants = \&(const struct policy_variant){"dv", "", "", "simrun", NULL, 0}, .nvariants = 1,/' \
    "$tmp/src.c" > "$tmp/src_v.c"
cc -std=c11 -fPIC -shared -I"$top" "${base[@]}" -o "$tmp/withvariants.so" "$tmp/src_v.c" \
    || { echo "FAIL cannot build withvariants"; fail=1; }
cp "$tmp/good.so" "$tmp/copy.so"
echo "not an ELF file" > "$tmp/text.so"

# A good plugin runs like a built-in policy, -j and all.
"$SIMRUN" run scenarios/flaky.scn --policy "$tmp/good.so" -p debounce,oracle --seeds 1..3 -j 2 \
    --db "$tmp/a.db" > "$tmp/out" 2> "$tmp/err" || { echo "FAIL run --policy"; cat "$tmp/err"; fail=1; }
grep -q '^metric  *debounce  *oracle$' "$tmp/out" || { echo "FAIL no debounce column"; cat "$tmp/out"; fail=1; }
[ "$(sqlite3 "$tmp/a.db" "select count(*) from runs where policy = 'debounce'")" = 3 ] \
    || { echo "FAIL debounce runs not stored"; fail=1; }
"$SIMRUN" run scenarios/flaky.scn --policy "$tmp/good.so" -p debounce --set debounce.delay=2m > "$tmp/out" \
    && grep -q 'debounce: delay=' "$tmp/out" || { echo "FAIL --set on a plugin's parameter"; fail=1; }
"$SIMRUN" policies --policy "$tmp/good.so" --policy "$tmp/other.so" > "$tmp/out" || fail=1
grep -q '^debounce  (examples/plugin)$' "$tmp/out" && grep -q "^    plugin: $tmp/good.so\$" "$tmp/out" \
    && grep -q '^debounce2 ' "$tmp/out" && grep -q '^    debounce.delay = 30s' "$tmp/out" \
    || { echo "FAIL simrun policies --policy"; cat "$tmp/out"; fail=1; }
# The same file twice (or through another path) is loaded once.
"$SIMRUN" policies --policy "$tmp/good.so" --policy "$tmp/../$(basename "$tmp")/good.so" > /dev/null \
    || { echo "FAIL the same plugin twice"; fail=1; }

# A scenario that loads it itself, relative to its own folder.
mkdir -p "$tmp/scn/lib"
cp "$tmp/good.so" "$tmp/scn/lib/debounce.so"
cat > "$tmp/scn/p.scn" << 'EOF'
horizon 1d
plugin lib/debounce.so
workflow w
  producer p every 1h runs 1s publish t
  consumer c subscribe t fifo runs 1s
set debounce.delay=5m
variant slow debounce delay=10m
expect debounce,slow lost == 0
expect slow latency.max >= 10m
EOF
(cd / && "$SIMRUN" check "$tmp/scn/p.scn" > "$tmp/out" 2>&1) || { echo "FAIL check with a plugin line"; cat "$tmp/out"; fail=1; }
grep -q 'check: 3 passed, 0 failed' "$tmp/out" || { echo "FAIL plugin scenario checks"; cat "$tmp/out"; fail=1; }
"$SIMRUN" validate "$tmp/scn/p.scn" > /dev/null || { echo "FAIL validate with a plugin line"; fail=1; }

# Bad plugins: exit 2 and a message that says what is wrong.
bad() {  # bad WHAT PATTERN ARGS...
    "$SIMRUN" "${@:3}" > "$tmp/out" 2> "$tmp/err"; local rc=$?
    if [ $rc -ne 2 ] || ! grep -q -- "$2" "$tmp/err"; then
        echo "FAIL $1: exit $rc, want 2 and '$2'"; cat "$tmp/err"; fail=1
    fi
    grep -qiE 'sanitizer|runtime error|internal error' "$tmp/err" && { echo "FAIL $1 crashed"; fail=1; }
    true
}
bad "missing file" "cannot load policy plugin '$tmp/none.so': No such file" run scenarios/flaky.scn --policy "$tmp/none.so"
bad "not ELF" "cannot load policy plugin '$tmp/text.so': " run scenarios/flaky.scn --policy "$tmp/text.so"
bad "a folder" "not a regular file" policies --policy "$tmp"
bad "no symbol" "has no 'simrun_policy' symbol" run scenarios/flaky.scn --policy "$tmp/nosym.so"
bad "wrong ABI" "built for policy ABI 1, this simrun has ABI" check scenarios/flaky.scn --policy "$tmp/abi.so"
bad "null hook" "has no 'on_timer' hook (required: create, destroy, start, on_publish, on_timer, on_run_end)" \
    validate scenarios/flaky.scn --policy "$tmp/nohook.so"
bad "built-in name" "policy 'poll' has the name of a built-in policy" policies --policy "$tmp/clash.so"
bad "two plugins, one name" "policy 'debounce' is already defined by '$tmp/good.so'" \
    policies --policy "$tmp/good.so" --policy "$tmp/copy.so"
bad "bad name" "its policy name is not a valid name" policies --policy "$tmp/badname.so"
bad "bad default" "the default of parameter 'delay' is bad" policies --policy "$tmp/baddefault.so"
bad "built-in variant name" "policy 'keepai' has the name of a built-in variant" policies --policy "$tmp/variantname.so"
bad "declares variants" "policy 'debounce' declares built-in variants" policies --policy "$tmp/withvariants.so"
# In a scenario: file:line:col at the path, and nothing written.
sed 's|^plugin lib/debounce.so$|plugin lib/nohook.so|' "$tmp/scn/p.scn" > "$tmp/scn/bad.scn"
cp "$tmp/nohook.so" "$tmp/scn/lib/"
bad "scenario line" "^$tmp/scn/bad.scn:2:8: error: cannot load policy plugin '$tmp/scn/lib/nohook.so': policy 'debounce' has no 'on_timer' hook" \
    run "$tmp/scn/bad.scn" --db "$tmp/bad.db"
[ -e "$tmp/bad.db" ] && { echo "FAIL a database was written for a bad plugin line"; fail=1; }
printf 'horizon 1d\nplugin "lib/none.so"\nworkflow w\n  producer p every 1h runs 1s\n' > "$tmp/scn/missing.scn"
bad "scenario, missing" "^$tmp/scn/missing.scn:2:8: error: cannot load policy plugin '$tmp/scn/lib/none.so': No such file" \
    validate "$tmp/scn/missing.scn"
exit $fail
