#!/usr/bin/env bash
# Every bundled scenario under every policy and variant, seeds 1 and 2,
# gives the metrics and fingerprints committed in tests/metrics_digests.txt
# (one digest per scenario and policy, tools/metrics_digest.py).  This is
# the engine's and the checker's equivalence with what they were when the
# digests were written: keeping state differently (streaming runs and
# items, the online checker) must not change a single number.
#
# A change that means to change results regenerates the file, and says why
# in its commit:   tests/cli_metrics_digest.sh --update
# Scenarios, policies and metrics that are not in the file are not checked.
# run-once: a digest of results, the same in every build; every line and
#   branch of C that it executes is executed sanitized by other tests (gcov).
set -u
: "${SIMRUN:?}"
file=tests/metrics_digests.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
metrics=$(sed -n 's/^# metrics: //p' "$file")
[ -n "$metrics" ] || { echo "FAIL no metric list in $file"; exit 1; }
for s in scenarios/*.scn; do
    "$SIMRUN" run "$s" --seeds 1..2 --format csv 2> /dev/null \
        | python3 tools/metrics_digest.py --metrics "$metrics" | sed "s|^|$s |"
done > "$tmp/now"
if [ "${1:-}" = "--update" ]; then
    { sed -n '/^#/p' "$file"; cat "$tmp/now"; } > "$tmp/new" && mv "$tmp/new" "$file"
    echo "updated $file ($(wc -l < "$tmp/now") digests)"
    exit 0
fi
bad=0; n=0
while read -r scn label digest; do
    case "$scn" in '#'*|'') continue ;; esac
    n=$((n + 1))
    got=$(awk -v s="$scn" -v l="$label" '$1 == s && $2 == l { print $3 }' "$tmp/now")
    if [ -z "$got" ]; then
        # A scenario that is gone is not a difference in results; one that is
        # still here and gave no result for the label (a crash, a policy that
        # no longer runs) is.
        [ -f "$scn" ] || continue
        echo "FAIL $scn under $label: no result (the committed digest is $digest)"
        bad=1
        continue
    fi
    if [ "$got" != "$digest" ]; then
        echo "FAIL $scn under $label: results differ from the committed digest"
        bad=1
    fi
done < "$file"
[ "$n" -ge 100 ] || { echo "FAIL only $n digests in $file"; exit 1; }
[ $bad -eq 0 ] || { echo "(tests/cli_metrics_digest.sh --update regenerates $file when a change means it)"; exit 1; }
echo "ok ($n digests)"
