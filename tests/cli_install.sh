#!/usr/bin/env bash
# make install / uninstall, as a Debian package would lay simrun out
# (DESTDIR staging, PREFIX=/usr): the binary, the public headers (exactly
# sim/policy_api.h and what it includes), simrun.pc, the manual page (which
# `man -l` renders, with every command and option of the --help tables),
# the bash completion (commands, options, policies, parameters), the
# bundled scenarios and the example plugin, which is then built from the
# installed files alone (pkg-config, no source tree) and run.  The build
# flavour under test (SIMRUN_BUILD) is the one installed.
set -u
: "${SIMRUN:?}" "${SIMRUN_BUILD:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
mode=$(basename "$SIMRUN_BUILD")
top=$PWD
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory "$@"; }

# The default prefix is /usr/local.
mk -n install MODE="$mode" DESTDIR=/nowhere | grep -q ' /nowhere/usr/local/bin/simrun$' \
    || { echo "FAIL the default PREFIX is not /usr/local"; fail=1; }

d=$tmp/root
mk install MODE="$mode" DESTDIR="$d" PREFIX=/usr > "$tmp/install.log" 2>&1 \
    || { echo "FAIL make install"; cat "$tmp/install.log"; exit 1; }
for f in bin/simrun include/simrun/sim/policy_api.h lib/pkgconfig/simrun.pc share/man/man1/simrun.1 \
         share/bash-completion/completions/simrun share/simrun/scenarios/mail.scn \
         share/simrun/scenarios/data/replay.csv share/doc/simrun/examples/plugin/Makefile \
         share/doc/simrun/examples/plugin/debounce.c; do
    [ -s "$d/usr/$f" ] || { echo "FAIL not installed: /usr/$f"; fail=1; }
done
[ -x "$d/usr/bin/simrun" ] || { echo "FAIL /usr/bin/simrun is not executable"; fail=1; }
n=$(ls "$d/usr/share/simrun/scenarios/"*.scn | wc -l)
[ "$n" -eq "$(ls scenarios/*.scn | wc -l)" ] || { echo "FAIL $n bundled scenarios installed"; fail=1; }
n=$(ls "$d/usr/share/simrun/scenarios/incidents/"*.scn | wc -l)
[ "$n" -eq "$(ls scenarios/incidents/*.scn | wc -l)" ] || { echo "FAIL $n incident scenarios installed"; fail=1; }
"$d/usr/bin/simrun" validate "$d"/usr/share/simrun/scenarios/*.scn "$d"/usr/share/simrun/scenarios/incidents/*.scn > /dev/null \
    || { echo "FAIL an installed scenario does not validate"; fail=1; }

# The headers: exactly policy_api.h and its closure, self-sufficient.
inc=$d/usr/include/simrun
(cd "$tmp" && cc -std=c11 -MM -I"$inc" "$inc/sim/policy_api.h") | tr ' \\' '\n\n' | grep '\.h$' \
    | sed "s|^$inc/||" | sort > "$tmp/closure"
(cd "$inc" && find . -type f | sed 's|^\./||' | sort) > "$tmp/installed"
cmp -s "$tmp/closure" "$tmp/installed" \
    || { echo "FAIL installed headers are not policy_api.h's closure:"; diff "$tmp/closure" "$tmp/installed"; fail=1; }

# pkg-config, through the staged tree.
export PKG_CONFIG_PATH=$d/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$d
[ "$(pkg-config --cflags simrun | xargs)" = "-I$d/usr/include/simrun" ] \
    || { echo "FAIL pkg-config --cflags simrun: $(pkg-config --cflags simrun)"; fail=1; }
[ "$(pkg-config --modversion simrun)" = "$("$SIMRUN" version | cut -d' ' -f2)" ] \
    || { echo "FAIL simrun.pc version"; fail=1; }

# The example plugin, from the installed copy and headers only.
cp -r "$d/usr/share/doc/simrun/examples/plugin" "$tmp/plugin"
if (cd "$tmp/plugin" && mk SIMRUN="$d/usr/bin/simrun" test) > "$tmp/plugin.log" 2>&1; then
    grep -q '^metric  *debounce  *oracle$' "$tmp/plugin.log" \
        || { echo "FAIL the example plugin's run has no debounce column"; cat "$tmp/plugin.log"; fail=1; }
    grep -q 'debounce: delay=' "$tmp/plugin.log" || { echo "FAIL --set debounce.delay not shown"; fail=1; }
else
    echo "FAIL the example plugin does not build or run from the installed files"; cat "$tmp/plugin.log"; fail=1
fi

# The manual page renders, and has every command and every option spelling.
MANWIDTH=100 man --warnings -l "$d/usr/share/man/man1/simrun.1" > "$tmp/man.txt" 2> "$tmp/man.err" \
    || { echo "FAIL man -l"; cat "$tmp/man.err"; fail=1; }
[ -s "$tmp/man.err" ] && { echo "FAIL man -l warns:"; cat "$tmp/man.err"; fail=1; }
cmds=$("$SIMRUN" --help | sed -n '/^commands:$/,/^$/{s/^  \([a-z]*\) .*/\1/p}')
for c in $cmds; do
    grep -q "^   simrun $c\b" "$tmp/man.txt" || { echo "FAIL man page: no section for simrun $c"; fail=1; }
    for opt in $("$SIMRUN" "$c" --help | sed -n 's/^  \(-[^ ,]*\(, --[^ ]*\)\{0,1\}\).*/\1/p' | tr -d ,); do
        grep -Eq -- "(^|[ ,])$opt([ ,]|\$)" "$tmp/man.txt" \
            || { echo "FAIL man page: simrun $c has no $opt"; fail=1; }
    done
done

# Bash completion: commands, options, policies (and built-in variants), parameters.
comp() {  # comp WORD... : the completions of the last word
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _simrun; printf "%s\n" "${COMPREPLY[@]}"' \
        _ "$d/usr/share/bash-completion/completions/simrun" "$@"
}
want() {  # want WORD "COMPLETIONS..." LINE...
    local got; got=$(comp "${@:3}" | sort | tr '\n' ' ')
    [ "$got" = "$2 " ] || { echo "FAIL completion of '${*:3}': got '$got', want '$2 '"; fail=1; }
}
want r "report run" simrun r
want se "--seed --seeds --set" simrun run --se
want pol "oracle,poll" simrun run -p oracle,po
want kee "keepai" simrun run -p kee
want par "poll.period=" simrun run --set poll.pe
for c in $cmds; do
    opts=$("$SIMRUN" "$c" --help | sed -n 's/^  \(-[^ ,]*\(, --[^ ]*\)\{0,1\}\).*/\1/p' | tr -d , | tr ' ' '\n' | sort)
    got=$(comp simrun "$c" - | sort)
    [ "$opts" = "$got" ] || { echo "FAIL completion of 'simrun $c -':"; diff <(echo "$opts") <(echo "$got"); fail=1; }
done

# make uninstall leaves nothing behind.
mk uninstall MODE="$mode" DESTDIR="$d" PREFIX=/usr || { echo "FAIL make uninstall"; fail=1; }
left=$(find "$d" -type f)
[ -z "$left" ] || { echo "FAIL left after make uninstall:"; echo "$left"; fail=1; }
cd "$top"
exit $fail
