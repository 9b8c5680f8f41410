#!/usr/bin/env bash
# No prefetch is lost to the optimiser.  GCC's mod-ref analysis takes a
# function whose only effect is __builtin_prefetch for one with no effect,
# and deletes its calls as dead code; sim_prefetch (sim/util.h) carries an
# effect the optimiser keeps.  So: no source calls __builtin_prefetch but
# sim_prefetch itself, and every file that prefetches compiles, at the
# release flavour's -O2, to as many prefetch instructions as it does with
# the analyses that delete them turned off.  A control first shows that the
# check sees the loss: a helper written with the bare builtin loses its
# prefetches here.
# run-once: compiles sources and reads the objects; no simrun binary is run.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL $*"; exit 1; }
cc=${CC:-cc}
flags=(-std=c11 -D_DEFAULT_SOURCE -O2 -I. $(pkg-config --cflags sqlite3 2> /dev/null))
off=(-fno-ipa-modref -fno-ipa-pure-const)
command -v objdump > /dev/null || fail "objdump is missing (binutils)"
if ! echo 'int x;' | "$cc" "${off[@]}" -x c -c -o /dev/null - 2> /dev/null; then
    echo "skip: $cc has no -fno-ipa-modref; the analysis that deletes prefetches is not there"
    exit 0
fi
# count FILE FLAGS...: prefetch instructions in FILE's object.
count() {
    local f=$1
    shift
    "$cc" "${flags[@]}" "$@" -c -o "$tmp/o.o" "$f" || fail "$f does not compile"
    objdump -d "$tmp/o.o" | grep -c 'prefetch'
}

# --- the control: the bare builtin in a helper loses its calls -----------------------
cat > "$tmp/bare.c" << 'EOF'
#include <stdint.h>
struct tab { uint64_t lo, cap; uint32_t *ring; };
static inline void tab_prefetch(const struct tab *t, uint64_t id)
{
    if (id >= t->lo && id - t->lo < t->cap)
        __builtin_prefetch(&t->ring[id & (t->cap - 1)]);
}
uint64_t walk(struct tab *t, const uint64_t *ids, int n);
uint64_t walk(struct tab *t, const uint64_t *ids, int n)
{
    uint64_t s = 0;
    for (int i = 0; i < n; i++) {
        if (i + 4 < n)
            tab_prefetch(t, ids[i + 4]);
        s += t->ring[ids[i] & (t->cap - 1)]++;
    }
    return s;
}
EOF
sed 's/__builtin_prefetch(/sim_prefetch(/; s/#include <stdint.h>/#include <stdint.h>\n#include "sim\/util.h"/' \
    "$tmp/bare.c" > "$tmp/kept.c"
bare_on=$(count "$tmp/bare.c")
bare_off=$(count "$tmp/bare.c" "${off[@]}")
echo "control: bare builtin $bare_on prefetches at -O2, $bare_off with the analyses off"
if [ "$bare_on" -ge "$bare_off" ]; then
    echo "note: $cc keeps the bare builtin's calls; the comparison below still holds"
fi
kept_on=$(count "$tmp/kept.c")
kept_off=$(count "$tmp/kept.c" "${off[@]}")
echo "control: sim_prefetch $kept_on prefetches at -O2, $kept_off with the analyses off"
[ "$kept_on" -ge 1 ] && [ "$kept_on" -eq "$kept_off" ] || fail "sim_prefetch lost its prefetch in the control"

# --- the tree ---------------------------------------------------------------------------
bare=$(grep -rn '__builtin_prefetch' sim policies reports --include='*.c' --include='*.h' | grep -v '^sim/util.h:')
[ -z "$bare" ] || { echo "$bare"; fail "a prefetch that bypasses sim_prefetch"; }
n=0
for f in $(grep -rl 'sim_prefetch\|idwin_prefetch\|checker_prefetch' sim policies --include='*.c' | sort); do
    on=$(count "$f")
    offc=$(count "$f" "${off[@]}")
    echo "$f: $on prefetches ($offc with the analyses off)"
    [ "$on" -eq "$offc" ] || fail "$f loses $((offc - on)) prefetches at -O2"
    n=$((n + 1))
done
[ $n -ge 5 ] || fail "only $n files prefetch: the search is broken"
echo "ok: $n files keep every prefetch"
