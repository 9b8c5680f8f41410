#!/usr/bin/env bash
# The module structure (tools/structure.py): no include cycle among the
# modules of sim/, policies/ and reports/; no file in policies/ reaches
# scenario.h, world.h, checker.h or evq.h; no function over 100 lines and no
# file over 1,500 lines, except the known violations listed in
# tests/structure-exceptions.txt.  Then the checker itself, on small
# synthetic trees: each rule fires when it should and only then.
# run-once: Python over the sources; no simrun binary is run.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
st() { python3 tools/structure.py "$@"; }
fail() { echo "FAIL $*"; exit 1; }

# --- this tree -------------------------------------------------------------------
st --exceptions tests/structure-exceptions.txt > "$tmp/out"; rc=$?
cat "$tmp/out"
[ $rc -eq 0 ] || fail "the structure check found new violations (exit $rc)"
st --graph > "$tmp/graph" || fail "--graph exited non-zero"
cat "$tmp/graph"
grep -q '^cycles: none$' "$tmp/graph" || fail "--graph reports a cycle"
grep -q '^sim/scenario .*scenario_lex.c' "$tmp/graph" || fail "the parser's files are not one module"
st --graph --dot > "$tmp/dot" || fail "--graph --dot exited non-zero"
head -1 "$tmp/dot" | grep -q '^digraph includes {$' && tail -1 "$tmp/dot" | grep -q '^}$' \
    || fail "--dot is not a digraph"
grep -q '"sim/scenario" -> "sim/syntax";' "$tmp/dot" || fail "--dot misses an edge"
# The leaf headers include nothing of simrun's.
for h in sim/vocab.h sim/metric.h; do
    ! grep -q '#include "' "$h" || fail "$h is not a leaf"
done
# The parser includes neither the policy registry nor the checker.
! grep -l '#include "sim/\(policy\|checker\)\.h"' sim/scenario*.c sim/scenario*.h \
    || fail "the parser includes policy.h or checker.h"

# --- synthetic trees ----------------------------------------------------------------
# put ROOT PATH: writes stdin to ROOT/PATH.
put() { mkdir -p "$(dirname "$1/$2")"; cat > "$1/$2"; }

# A cycle through a header and a source file; the private-header and
# part-file rules create none.
r=$tmp/cycle
printf '#include "sim/b.h"\n' | put "$r" sim/a.h
printf '#include "sim/a.h"\n' | put "$r" sim/a.c
printf '\n' | put "$r" sim/b.h
printf '#include "sim/b.h"\n#include "sim/a.h"\n' | put "$r" sim/b.c
printf '\n' | put "$r" sim/p.h
printf '#include "sim/p.h"\n' | put "$r" sim/p_int.h
printf '#include "sim/p.h"\n#include "sim/p_int.h"\n' | put "$r" sim/p.c
printf '#include "sim/p_int.h"\n#include "sim/a.h"\n' | put "$r" sim/p_part.c
st --root "$r" > "$tmp/out"; rc=$?
[ $rc -eq 1 ] || fail "a cycle passed (exit $rc)"
grep -q '^structure: include cycle: sim/a -> sim/b -> sim/a$' "$tmp/out" || { cat "$tmp/out"; fail "cycle not named"; }
[ "$(grep -c 'include cycle' "$tmp/out")" -eq 1 ] || { cat "$tmp/out"; fail "a private header made a cycle"; }
st --root "$r" --graph > "$tmp/graph"
grep -q '^sim/p  *-> sim/a   \[p.c, p.h, p_int.h, p_part.c\]$' "$tmp/graph" || { cat "$tmp/graph"; fail "module sim/p"; }

# A policy that reaches world.h through another header.
r=$tmp/reach
printf '#include "sim/world.h"\n' | put "$r" sim/api.h
printf '\n' | put "$r" sim/world.h
printf '#include "sim/api.h"\n' | put "$r" policies/x.c
printf '#include "sim/jobs.h"\n' | put "$r" policies/y.c
printf '\n' | put "$r" sim/jobs.h
st --root "$r" > "$tmp/out"; rc=$?
[ $rc -eq 1 ] || fail "a policy reaching world.h passed (exit $rc)"
grep -q '^structure: policies/x.c reaches sim/world.h (sim/api.h -> sim/world.h)$' "$tmp/out" \
    || { cat "$tmp/out"; fail "reach not reported"; }
! grep -q 'policies/y.c' "$tmp/out" || fail "a clean policy was reported"

# Function lengths, counted from the name's line to the closing brace,
# through the things that could fool a scanner; and file lengths.
r=$tmp/len
python3 - "$r" <<'EOF'
import os, sys
r = sys.argv[1]
os.makedirs(r + "/sim")
def fill(n):  # n lines of statements, each with a brace in a comment
    return ["    x += %d; /* } */" % k for k in range(n)]
lines = ['#include "sim/f.h"', "#define OPEN {", "#define LONG_MACRO(a) \\", "    do { a; } while (0)",
         "static const int tab[] = {", "    1, 2,", "};", "struct s { int a; };"]
# 100 lines: a two-line signature, the braces, 96 statements.
lines += ["static int ok_fn(int x,", "                 int y)", "{"] + fill(96) + ["}"]
lines += ["static const char *str_fn(void) __attribute__((unused));",
          "static const char *str_fn(void)", "{", '    return "}{ \\" }";', "}"]
# 101 lines: the name, the braces, a char and a line comment, 96 statements.
lines += ["int long_fn(int x)", "{", "    char c = '}';", "    // }"] + fill(96) + ["}"]
lines += ["static int one(void) { return 1; }"]
open(r + "/sim/f.c", "w").write("\n".join(lines) + "\n")
open(r + "/sim/f.h", "w").write("\n")
open(r + "/sim/big.c", "w").write("/* big */\n" * 1501)
open(r + "/sim/fits.c", "w").write("/* fits */\n" * 1500)
EOF
st --root "$r" --functions > "$tmp/fns"
grep -q '^  100 sim/f.c:[0-9]* ok_fn$' "$tmp/fns" || { cat "$tmp/fns"; fail "ok_fn is not 100 lines"; }
grep -q '^  101 sim/f.c:[0-9]* long_fn$' "$tmp/fns" || { cat "$tmp/fns"; fail "long_fn is not 101 lines"; }
grep -q '^    4 sim/f.c:[0-9]* str_fn$' "$tmp/fns" || { cat "$tmp/fns"; fail "str_fn is not 4 lines"; }
grep -q '^    1 sim/f.c:[0-9]* one$' "$tmp/fns" || { cat "$tmp/fns"; fail "one is not 1 line"; }
[ "$(wc -l < "$tmp/fns")" -eq 4 ] || { cat "$tmp/fns"; fail "not exactly four functions"; }
st --root "$r" > "$tmp/out"; rc=$?
[ $rc -eq 1 ] || fail "a long function and a long file passed (exit $rc)"
grep -q '^structure: sim/f.c:[0-9]*: function long_fn is 101 lines (limit 100)$' "$tmp/out" \
    || { cat "$tmp/out"; fail "long_fn not reported"; }
grep -q '^structure: sim/big.c: 1501 lines (limit 1500)$' "$tmp/out" || { cat "$tmp/out"; fail "big.c not reported"; }
grep -q '^structure: 2 violations$' "$tmp/out" || { cat "$tmp/out"; fail "not exactly two violations"; }

# Exceptions silence exactly what they name; a stale one is noted.
printf '# known\nsim/f.c:long_fn\nsim/big.c  # too long\nsim/gone.c:old_fn\n' > "$tmp/ex"
st --root "$r" --exceptions "$tmp/ex" > "$tmp/out"; rc=$?
[ $rc -eq 0 ] || { cat "$tmp/out"; fail "exceptions did not silence the violations (exit $rc)"; }
grep -q "^structure: note: exception 'sim/gone.c:old_fn' matches nothing (remove it)$" "$tmp/out" \
    || { cat "$tmp/out"; fail "a stale exception was not noted"; }
printf 'sim/f.c:ok_fn\n' > "$tmp/ex"
st --root "$r" --exceptions "$tmp/ex" > "$tmp/out"; rc=$?
[ $rc -eq 1 ] || fail "an exception for another function silenced long_fn"
echo ok
