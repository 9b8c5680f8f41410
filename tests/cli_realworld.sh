#!/usr/bin/env bash
# The incident scenarios of scenarios/incidents/ and the comparison page
# docs/real-world.md: every expect line passes, every file says what it
# replays, the five classes are covered, each problem shows as built and not
# with its fix, and the committed page is what tools/realworld.sh writes.
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
files=(scenarios/incidents/*.scn)
[ "${#files[@]}" -ge 15 ] || { echo "FAIL only ${#files[@]} incident scenarios"; exit 1; }
"$SIMRUN" check "${files[@]}" -q > "$tmp/out"; rc=$?
cat "$tmp/out"
[ $rc -eq 0 ] || { echo "FAIL simrun check scenarios/incidents exited $rc"; exit 1; }
classes=""
for f in "${files[@]}"; do
    for key in class source problem as-built fix; do
        grep -q "^# $key: ." "$f" || { echo "FAIL $f has no '# $key:' line"; exit 1; }
    done
    grep -qE '^# source: [A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#[0-9]+$' "$f" \
        || { echo "FAIL $f: the source is not OWNER/REPO#NUMBER"; exit 1; }
    grep -q '^variant ' "$f" || { echo "FAIL $f has no variant"; exit 1; }
    for key in as-built fix; do
        label=$(sed -n -E "s/^# $key: (.*)$/\1/p" "$f")
        grep -qE "^expect ([^ ]*,)?$label(,[^ ]*)? " "$f" || { echo "FAIL $f: no expect line names '$label'"; exit 1; }
    done
    classes="$classes $(sed -n -E 's/^# class: (.*)$/\1/p' "$f")"
done
for c in duplicates missed dst herd loop; do
    case " $classes " in *" $c "*) ;; *) echo "FAIL no incident of class $c"; exit 1 ;; esac
done
# The page: up to date, and in every row the problem shows as built and not with the fix.
bash tools/realworld.sh -o "$tmp/page.md" > /dev/null || { echo "FAIL tools/realworld.sh failed"; exit 1; }
cmp -s "$tmp/page.md" docs/real-world.md \
    || { echo "FAIL docs/real-world.md is out of date (run 'make realworld')"; diff docs/real-world.md "$tmp/page.md" | head -n 20; exit 1; }
rows=$(grep -c '^| \[' docs/real-world.md)
[ "$rows" -eq "${#files[@]}" ] || { echo "FAIL docs/real-world.md has $rows rows for ${#files[@]} incidents"; exit 1; }
bad=$(grep '^| \[' docs/real-world.md | awk -F' [|] ' '{ ab = $(NF - 1); fix = $NF; if (ab !~ /✗/ || fix ~ /✗/) print $1 }')
[ -z "$bad" ] || { echo "FAIL rows whose as-built cell does not show the problem or whose fix does:"; echo "$bad"; exit 1; }
echo ok
