#!/usr/bin/env bash
# The help of the binary: `simrun --help` lists every command; for each,
# `simrun CMD --help` and `-h` exit 0 with the same text, which starts with
# its usage line and lists -h, --help; every option a command's help lists
# is documented in README.md or docs/.  (tests/test_cli.c checks the option
# tables themselves against the help and the docs.)
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
"$SIMRUN" --help > "$tmp/main" 2>&1 || { echo "FAIL simrun --help exited $?"; fail=1; }
cmds=$(sed -n '/^commands:$/,/^$/{s/^  \([a-z]*\) .*/\1/p}' "$tmp/main")
n=$(echo "$cmds" | grep -c .)
[ "$n" -ge 7 ] || { echo "FAIL simrun --help lists $n commands"; cat "$tmp/main"; fail=1; }
for want in run check report diff validate policies version shrink swarm; do
    echo "$cmds" | grep -qx "$want" || { echo "FAIL simrun --help does not list $want"; fail=1; }
done
docs=$(cat README.md docs/*.md)
for c in $cmds; do
    "$SIMRUN" "$c" --help > "$tmp/$c.long" 2>&1; rc=$?
    [ $rc -eq 0 ] || { echo "FAIL simrun $c --help exited $rc"; cat "$tmp/$c.long"; fail=1; }
    "$SIMRUN" "$c" -h > "$tmp/$c.short" 2>&1; rc=$?
    [ $rc -eq 0 ] || { echo "FAIL simrun $c -h exited $rc"; fail=1; }
    cmp -s "$tmp/$c.long" "$tmp/$c.short" || { echo "FAIL simrun $c: -h and --help differ"; fail=1; }
    head -n 1 "$tmp/$c.long" | grep -q "^usage: simrun $c\b" || { echo "FAIL simrun $c --help: no usage line"; fail=1; }
    grep -q '^  -h, --help ' "$tmp/$c.long" || { echo "FAIL simrun $c --help does not list -h, --help"; fail=1; }
    # every spelling on an option row ("  -p, --policies LIST  ...")
    for opt in $(sed -n 's/^  \(-[^ ,]*\(, --[^ ]*\)\{0,1\}\).*/\1/p' "$tmp/$c.long" | tr -d ,); do
        [ "$opt" = -h ] || [ "$opt" = --help ] && continue
        grep -Eq -- "(^|[^A-Za-z0-9_-])$opt([^A-Za-z0-9_-]|\$)" <<< "$docs" \
            || { echo "FAIL simrun $c: option $opt is not documented in README.md or docs/"; fail=1; }
    done
done
# Help anywhere among the arguments wins over everything else.
"$SIMRUN" run --frob nosuch.scn --help > /dev/null 2>&1 || { echo "FAIL --help after a bad option"; fail=1; }
exit $fail
