#!/usr/bin/env bash
# The CI recipes of examples/ci/: both files parse as YAML (python3-yaml)
# and have what docs/reports.md promises (a check with --seeds, --junit and
# --db; the baseline kept on the main branch; a Markdown diff on a merge
# request, published where the system shows it); then their simrun command
# lines, taken from the YAML as written, run here: the check twice (the
# main branch's baseline, then the merge request's), the diff between them.
# A check line that an earlier recipe has already run, the same command on
# the same files, is not run again: its outputs are copied (the recipes'
# structure and their diff steps are still checked each on its own).
# `check --seeds` may not exist in every simrun: when `simrun check --help`
# lacks it, the local run drops that flag and says so.
# run-once: the recipes do not depend on the build; their check (--seeds,
#   --junit, --db) and diff run sanitized in cli_check.sh.
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
top=$PWD
if ! python3 -c 'import yaml' 2> /dev/null; then
    echo "FAIL python3 has no yaml module (Debian: python3-yaml; tools/deps.sh and .ci/run install it)"
    exit 1
fi
seeds=1
"$SIMRUN" check --help | grep -q -- '--seeds' || {
    seeds=0; echo "note: this simrun's check has no --seeds; the recipes use it, the local run drops it"; }

# check RECIPE_DIR SIDE: the recipe's check step, run in RECIPE_DIR/SIDE,
# its output in SIDE.out and the files it wrote listed in SIDE.files; when
# an earlier recipe ran the same line, its outputs are copied instead.
declare -A ran=()
check() {
    local d=$1 side=$2 src f
    src=${ran[$(cat "$1/check.sh")]:-}
    if [ -n "$src" ]; then
        while read -r f; do cp -p "$src/$side/$f" "$d/$side/$f" || return 1; done < "$src/$side.files"
        cp "$src/$side.files" "$src/$side.out" "$d/"
        echo "$(basename "$d"): the $side check is the line $(basename "$src") ran; its outputs are reused"
        return 0
    fi
    (cd "$d/$side" && find . -type f | sort) > "$d/$side.before"
    (cd "$d/$side" && bash -e ../check.sh > "../$side.out" 2>&1) || return 1
    (cd "$d/$side" && find . -type f | sort) | comm -13 "$d/$side.before" - > "$d/$side.files"
}

# Each recipe: its structure, then its simrun lines as shell snippets:
# check.sh (the check step) and diff.sh (the diff step), and where the
# diff reads the baseline.
for recipe in github-actions gitlab-ci; do
    d=$tmp/$recipe
    mkdir -p "$d"
    python3 - "$top/examples/ci/$recipe.yml" "$recipe" "$d" << 'EOF' || { echo "FAIL $recipe.yml"; fail=1; continue; }
import re, sys, yaml
path, kind, out = sys.argv[1:4]
doc = yaml.safe_load(open(path))
problems = []
def need(cond, what):
    if not cond:
        problems.append(what)
shell = []   # (name, text) of every shell snippet, in order
if kind == "github-actions":
    need(doc.get("on", doc.get(True)), "no 'on' triggers")
    steps = [s for job in doc["jobs"].values() for s in job["steps"]]
    for s in steps:
        if "run" in s:
            shell.append((s.get("name", ""), s["run"]))
    uses = " ".join(s.get("uses", "") for s in steps)
    need("actions/upload-artifact" in uses, "the baseline is not uploaded")
    need("junit" in uses, "the JUnit report is not published")
    need(any("GITHUB_STEP_SUMMARY" in t for _, t in shell), "the Markdown is not in the job summary")
else:
    jobs = {k: v for k, v in doc.items() if isinstance(v, dict) and "script" in v}
    for name, job in jobs.items():
        for line in job["script"]:
            shell.append((name, line))
    need(any(j.get("artifacts", {}).get("reports", {}).get("junit") for j in jobs.values()), "no JUnit report")
    need(any("simrun-results.db" in j.get("artifacts", {}).get("paths", []) for j in jobs.values()),
         "the results database is not kept")
    need(any(j.get("artifacts", {}).get("expose_as") for j in jobs.values()), "the Markdown is not exposed")
check = [t for _, t in shell if re.search(r"\./simrun check ", t)]
diff = [t for _, t in shell if re.search(r"\./simrun diff ", t)]
need(len(check) == 1, "one check step")
need(len(diff) == 1, "one diff step")
if check:
    for flag in ("--seeds", "--junit", "--db"):
        need(flag in check[0], "check without " + flag)
if diff:
    need("--format markdown" in diff[0], "diff without --format markdown")
if problems:
    print(path + ": " + "; ".join(problems))
    sys.exit(1)
open(out + "/check.sh", "w").write(check[0] + "\n")
open(out + "/diff.sh", "w").write(diff[0] + "\n")
open(out + "/baseline", "w").write(re.search(r"\./simrun diff (\S+)", diff[0]).group(1) + "\n")
EOF
    # A checkout: simrun, and the scenarios (the recipes check them all).
    for side in main mr; do
        mkdir -p "$d/$side"
        ln -s "$SIMRUN" "$d/$side/simrun"
        ln -s "$top/scenarios" "$d/$side/scenarios"
    done
    [ $seeds -eq 1 ] || sed -i 's/ --seeds [^ ]*//' "$d/check.sh"
    ok=1
    check "$d" main || { echo "FAIL $recipe: the check on main"; tail "$d/main.out"; fail=1; ok=0; }
    base=$(cat "$d/baseline")
    mkdir -p "$d/mr/$(dirname "$base")"
    cp "$d/main/simrun-results.db" "$d/mr/$base" || fail=1
    check "$d" mr || { echo "FAIL $recipe: the check on the merge request"; tail "$d/mr.out"; fail=1; ok=0; }
    [ $ok -eq 0 ] || ran[$(cat "$d/check.sh")]=${ran[$(cat "$d/check.sh")]:-$d}
    (cd "$d/mr" && GITHUB_STEP_SUMMARY="$d/summary.md" bash -e ../diff.sh > ../diff.out 2>&1) \
        || { echo "FAIL $recipe: the diff"; cat "$d/diff.out"; fail=1; }
    python3 -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); assert d.getElementsByTagName("testcase")' \
        "$d/mr/simrun-junit.xml" || { echo "FAIL $recipe: no JUnit testcases"; fail=1; }
    grep -q '^### simrun diff: no regression$' "$d/mr/simrun-diff.md" \
        || { echo "FAIL $recipe: the Markdown diff"; head -5 "$d/mr/simrun-diff.md"; fail=1; }
    [ "$recipe" = github-actions ] && ! cmp -s "$d/summary.md" "$d/mr/simrun-diff.md" && { echo "FAIL the job summary"; fail=1; }
    echo "$recipe: $(cat "$d/check.sh")"
done
exit $fail
