#!/usr/bin/env bash
# simrun report: renders report/index.html in headless Chromium (Debian's
# chromium package, installed by tools/deps.sh and .ci/run) and checks that
# every chart image loads (naturalWidth > 0) and the tables are there; every
# chart is a real PNG and SVG with its data file and script; the page needs
# nothing outside its folder.  A gnuplot that produces empty images makes
# the report fail (and leaves no index.html); a missing gnuplot is a usage
# error that says how to install it.  A broken image is caught by the
# browser check itself.
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
command -v gnuplot > /dev/null || { echo "FAIL gnuplot is not installed (bash tools/deps.sh)"; exit 1; }
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "FAIL chromium is not installed (bash tools/deps.sh)"; exit 1; }

# Two scenarios swept over seeds (timelines re-simulated), one single run
# with its trace stored (timeline from the database).
"$SIMRUN" run scenarios/nightly.scn scenarios/flaky.scn -p oracle,poll --seeds 1..3 --db "$tmp/r.db" > /dev/null \
    || { echo "FAIL simrun run"; exit 1; }
"$SIMRUN" run scenarios/reminders.scn -p oracle,poll --db "$tmp/r.db" --store-trace > /dev/null || fail=1
"$SIMRUN" report --db "$tmp/r.db" -o "$tmp/report" > "$tmp/out" 2> "$tmp/err"; rc=$?
cat "$tmp/out" "$tmp/err"
[ $rc -eq 0 ] || { echo "FAIL simrun report exited $rc"; exit 1; }
grep -q "^report: $tmp/report/index.html ([0-9]* charts" "$tmp/out" || { echo "FAIL no summary line"; fail=1; }
html=$tmp/report/index.html
[ -s "$html" ] || { echo "FAIL no index.html"; exit 1; }

# Every chart the page shows exists as a PNG and an SVG, with data and script.
imgs=$(grep -o '<img src="[^"]*"' "$html" | sed 's/<img src="//; s/"$//')
nimg=$(echo "$imgs" | grep -c .)
# per scenario: latency, bars, backlog, a timeline per policy, lateness for
# scenarios with schedules, a crash close-up per policy for nightly
[ "$nimg" -ge 19 ] || { echo "FAIL only $nimg charts on the page"; fail=1; }
for png in $imgs; do
    stem=${png%.png}
    f=$tmp/report/$png
    [ -s "$f" ] && [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] \
        || { echo "FAIL $png is missing or not a PNG"; fail=1; }
    # Timelines are PNG only (their script draws the SVG with -e svg=1); the
    # page links every other chart to its SVG.
    if grep -q "href=\"$stem.svg\"" "$html"; then
        grep -q '<svg' "$tmp/report/$stem.svg" 2>/dev/null || { echo "FAIL $stem.svg is missing or not SVG"; fail=1; }
    else
        case $stem in *-timeline-*|*-crash-*) ;; *) echo "FAIL $stem has no SVG"; fail=1 ;; esac
        [ ! -e "$tmp/report/$stem.svg" ] || { echo "FAIL $stem.svg drawn but not linked"; fail=1; }
    fi
    [ -s "$tmp/report/$stem.dat" ] && [ -s "$tmp/report/$stem.gp" ] || { echo "FAIL $stem: no data or script"; fail=1; }
done
for want in nightly-latency nightly-lateness nightly-bars nightly-backlog nightly-timeline-oracle nightly-timeline-poll \
            nightly-crash-poll flaky-bars reminders-timeline-oracle; do
    echo "$imgs" | grep -qx "$want.png" || { echo "FAIL no chart $want"; fail=1; }
done
# The stored trace was used for reminders, re-simulation for the others;
# neither left a warning.
grep -q 'No timeline for' "$html" && { echo "FAIL a timeline is missing"; grep 'No timeline' "$html"; fail=1; }
grep -q 'differs from the stored run' "$html" && { echo "FAIL re-simulation differs"; fail=1; }
# A chart can be re-plotted from its folder with its own script.
(cd "$tmp/report" && rm nightly-bars.png && gnuplot nightly-bars.gp) && [ -s "$tmp/report/nightly-bars.png" ] \
    || { echo "FAIL nightly-bars.gp does not re-plot"; fail=1; }
# Nothing outside the folder: no remote URL, no absolute path.
grep -Eo '(src|href)="[^"#]*"' "$html" | grep -Ev '^(src|href)="[A-Za-z0-9._-]+"$' \
    && { echo "FAIL index.html refers to something outside its folder"; fail=1; }
grep -qiE '<(script|link|iframe)' "$html" && { echo "FAIL index.html loads scripts or stylesheets"; fail=1; }

# Headless Chromium: load the page with a probe appended that writes, once
# everything loaded, each image's natural width and the tables into the DOM.
render() {  # render HTML_FILE OUT_DOM
    local page=$1 check=${1%.html}.check.html
    sed 's#</body>#<pre id="probe">\n</pre><script>window.addEventListener("load", function () {\
var o = []; for (var i of document.images) o.push("img " + i.getAttribute("src") + " " + i.naturalWidth + "x" + i.naturalHeight);\
for (var t of document.querySelectorAll("table")) o.push("table " + (t.className || "-") + " rows " + t.rows.length);\
o.push("probe done"); document.getElementById("probe").textContent = "\\n" + o.join("\\n") + "\\n"; });</script></body>#' "$page" > "$check"
    local profile
    profile=$(mktemp -d)
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$profile" \
        --allow-file-access-from-files --virtual-time-budget=10000 --dump-dom "file://$check" > "$2" 2> "$2.log"
    local rc=$?
    rm -rf "$profile"
    return $rc
}
render "$html" "$tmp/dom.html" || { echo "FAIL chromium exited $?"; tail "$tmp/dom.html.log"; exit 1; }
grep -q 'probe done' "$tmp/dom.html" || { echo "FAIL the page did not finish loading in chromium"; tail "$tmp/dom.html.log"; exit 1; }
loaded=$(grep -c '^img .* [1-9][0-9]*x[1-9][0-9]*$' "$tmp/dom.html")
broken=$(grep '^img ' "$tmp/dom.html" | grep -v ' [1-9][0-9]*x[1-9][0-9]*$')
[ -z "$broken" ] || { echo "FAIL images that did not load in chromium:"; echo "$broken"; fail=1; }
[ "$loaded" -eq "$nimg" ] || { echo "FAIL chromium loaded $loaded of $nimg images"; fail=1; }
grep -q '^table glance rows [0-9]' "$tmp/dom.html" || { echo "FAIL no at-a-glance table"; fail=1; }
nmet=$(grep -c '^table metrics rows [0-9]*[0-9][0-9]$' "$tmp/dom.html")
[ "$nmet" -eq 3 ] || { echo "FAIL $nmet metric tables with 10+ rows, want 3"; grep '^table' "$tmp/dom.html"; fail=1; }
echo "chromium: $loaded images loaded, $(grep -c '^table ' "$tmp/dom.html") tables"

# The browser check sees a broken image: empty one PNG and render again.
cp -r "$tmp/report" "$tmp/broken"
: > "$tmp/broken/flaky-bars.png"
render "$tmp/broken/index.html" "$tmp/dom2.html"
grep -q '^img flaky-bars.png 0x0$' "$tmp/dom2.html" || { echo "FAIL chromium did not see the empty image"; fail=1; }

# A gnuplot that writes empty images: the report fails, no index.html.
cat > "$tmp/fakeplot" <<'FAKE'
#!/bin/sh
# answers like gnuplot to 'set terminal', writes empty files for a script
if [ "$1" = "-e" ]; then printf '  pngcairo  png terminal based on cairo\n  svg  W3C Scalable Vector Graphics\n'; exit 0; fi
for f in $(sed -n "s/^set output '\(.*\)'$/\1/p" "$1"); do : > "$f"; done
FAKE
chmod +x "$tmp/fakeplot"
SIMRUN_GNUPLOT="$tmp/fakeplot" "$SIMRUN" report --db "$tmp/r.db" -o "$tmp/fake" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 3 ] && grep -q 'gnuplot produced no usable image' "$tmp/err" && [ ! -e "$tmp/fake/index.html" ] \
    || { echo "FAIL empty images: exit $rc (want 3, no index.html)"; cat "$tmp/err"; fail=1; }
# No gnuplot at all: exit 2, with how to install it.
PATH=/nonexistent "$SIMRUN" report --db "$tmp/r.db" -o "$tmp/none" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "apt-get install gnuplot-nox" "$tmp/err" \
    || { echo "FAIL missing gnuplot: exit $rc"; cat "$tmp/err"; fail=1; }
# A timeline across a DST change (backup.scn: Europe/Berlin, 30 March):
# daily tics stay at local midnight and are labelled with their date.
"$SIMRUN" run scenarios/backup.scn -p interval --db "$tmp/dst.db" > /dev/null || fail=1
"$SIMRUN" report --db "$tmp/dst.db" -o "$tmp/dst" > /dev/null 2>&1 || { echo "FAIL report of backup.scn"; fail=1; }
tics=$(grep -h '^set xtics (' "$tmp"/dst/*timeline*.gp | head -1)
case $tics in
    *"'Thu 27 Mar' 20.9583333, 'Thu 3 Apr' 27.9166667)"*) ;;
    *) echo "FAIL timeline tics across DST: $tics"; fail=1 ;;
esac
# A database whose runs were all deleted: a clean error (under the sanitizers too).
cp "$tmp/dst.db" "$tmp/norun.db" && sqlite3 "$tmp/norun.db" 'delete from runs'
"$SIMRUN" report --db "$tmp/norun.db" -o "$tmp/nr" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'has no runs' "$tmp/err" || { echo "FAIL report of a database with no runs: exit $rc"; cat "$tmp/err"; fail=1; }
# Bad input: no database, an empty one.
"$SIMRUN" report --db "$tmp/nosuch.db" -o "$tmp/x" > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || { echo "FAIL missing database: exit $rc"; fail=1; }
"$SIMRUN" report --frob > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || { echo "FAIL unknown option: exit $rc"; fail=1; }
exit $fail
