#!/usr/bin/env bash
# A friendlier command line: "did you mean" for misspelt commands, options,
# policies, parameters, metrics and directives; `simrun help CMD` is
# `simrun CMD --help`; `validate` reports every error of a file (up to 20),
# each with its line and a caret under the column, skipping what depends on
# a line that failed, and its first error is the one run and check report.
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
says() {  # says WHAT EXIT PATTERN ARGS...
    "$SIMRUN" "${@:4}" > "$tmp/out" 2> "$tmp/err"; local rc=$?
    if [ $rc -ne "$2" ] || ! grep -qF -- "$3" "$tmp/err"; then
        echo "FAIL $1: exit $rc (want $2), stderr lacks '$3':"; cat "$tmp/err"; fail=1
    fi
}
says "command" 2 "unknown command 'rnu' (valid: run, " rnu
says "command" 2 "; did you mean 'run'?" rnu
says "option" 2 "unknown option '--sed'; did you mean '--seed'?" run scenarios/flaky.scn --sed 3
says "help option" 2 "did you mean '--help'?" policies --hlep
says "policy" 2 "unknown policy 'pol' (valid: oracle, poll" run scenarios/flaky.scn -p pol
says "policy" 2 "; did you mean 'poll'?" run scenarios/flaky.scn -p oracle,pol
says "parameter" 2 "unknown parameter 'perod' for policy 'poll' (valid: period); did you mean 'period'?" \
    run scenarios/flaky.scn --set poll.perod=1m
says "help command" 2 "unknown command 'chekc'; did you mean 'check'?" help chekc
# No suggestion when nothing is close.
"$SIMRUN" frobnicate 2>&1 | grep -q 'did you mean' && { echo "FAIL a suggestion for frobnicate"; fail=1; }

# simrun help CMD is simrun CMD --help, for every command.
for c in $("$SIMRUN" --help | sed -n '/^commands:$/,/^$/{s/^  \([a-z]*\) .*/\1/p}'); do
    cmp -s <("$SIMRUN" help "$c") <("$SIMRUN" "$c" --help) || { echo "FAIL simrun help $c differs from --help"; fail=1; }
done
cmp -s <("$SIMRUN" help) <("$SIMRUN" --help) || { echo "FAIL simrun help differs from simrun --help"; fail=1; }

# validate: every error, in line order, each with its line and a caret.
cat > "$tmp/m.scn" << 'EOF'
horizon 1d
workflw w
workflow w
  producer p evry 1m runs 1s publish t
  consumer c subscribe t fifo runs 1x
	consumer d subscribe t fifo runs 1s
expect poll lots == 0
fail w.p transient 2%
expect nosuch lost == 0
EOF
says "several errors" 2 "m.scn: 5 errors" validate "$tmp/m.scn"
grep ': error: ' "$tmp/err" | cut -d: -f2,3 | tr '\n' ' ' > "$tmp/locs"
[ "$(cat "$tmp/locs")" = "2:1 4:14 5:36 7:13 9:8 " ] || { echo "FAIL error locations: $(cat "$tmp/locs")"; cat "$tmp/err"; fail=1; }
grep -q "did you mean 'workflow'?" "$tmp/err" && grep -q "did you mean 'every'?" "$tmp/err" \
    && grep -q "did you mean 'lost'?" "$tmp/err" || { echo "FAIL suggestions in validate"; fail=1; }
# `fail w.p` names the handler whose line failed: no second error for it.
grep -q 'm.scn:8:' "$tmp/err" && { echo "FAIL an error repeated through w.p"; fail=1; }
grep -q '^     4 |   producer p evry 1m runs 1s publish t$' "$tmp/err" \
    && grep -q '^       |              \^$' "$tmp/err" || { echo "FAIL no line and caret"; cat "$tmp/err"; fail=1; }
# The caret of a tab-indented line keeps the tab; a hostile byte is escaped.
printf 'horizon 1d\nworkflow w\n\tproducer p every 1m runs 1z publish t\nexpect x\x1b[2J y\n' > "$tmp/t.scn"
"$SIMRUN" validate "$tmp/t.scn" 2> "$tmp/err"
grep -qxF "$(printf '       | \t%25s^' '')" "$tmp/err" || { echo "FAIL caret after a tab"; cat -A "$tmp/err"; fail=1; }
grep -q $'\x1b' "$tmp/err" && { echo "FAIL an escape byte reached the terminal"; fail=1; }
# At most 20 errors a file, and it says there are more.
{ echo "horizon 1d"; echo "workflow w"; echo "  producer p every 1m runs 1s"; for i in $(seq 1 30); do echo "crash hots at 1h for 1m"; done; } > "$tmp/many.scn"
says "limit" 2 "many.scn: 20 errors (stopped at the limit: there are more)" validate "$tmp/many.scn"
[ "$(grep -c ': error: ' "$tmp/err")" -eq 20 ] || { echo "FAIL more than 20 errors shown"; fail=1; }
# A header error stops after the first pass: nothing that depends on it.
printf 'horizon 1x\nworkflow w\n  producer p every 1m runs 1s at 2h\n' > "$tmp/h.scn"
says "header" 2 "h.scn: 1 error" validate "$tmp/h.scn"
# The first error is the one run reports, for every malformed file.
for f in tests/bad/*.scn; do
    a=$("$SIMRUN" run "$f" -p oracle 2>&1 > /dev/null | head -n 1)
    b=$("$SIMRUN" validate "$f" 2>&1 | grep -m 1 ': error: ')
    [ "$a" = "$b" ] || { echo "FAIL $f: run says '$a', validate first says '$b'"; fail=1; }
done
# Good files still validate.
"$SIMRUN" validate scenarios/*.scn > /dev/null || { echo "FAIL a bundled scenario does not validate"; fail=1; }
exit $fail
