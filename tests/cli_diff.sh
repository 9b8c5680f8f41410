#!/usr/bin/env bash
# simrun diff: identical databases pass (exit 0); a correctness metric that
# gets worse in a single seed fails (exit 1) naming the seed, in text and in
# Markdown (regressions first), and no tolerance excuses it; a parameter
# change pairs with the run it changes and fails on latency; --pair-by and
# --allow-missing choose what pairs and what may be missing; performance
# metrics keep their tolerance and paired interval; bad input exits 2.
set -u
: "${SIMRUN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
run_diff() {  # run_diff WANT_EXIT NAME ARGS... : output in $tmp/NAME.out
    local want=$1 name=$2; shift 2
    "$SIMRUN" diff "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"; local rc=$?
    if [ $rc -ne "$want" ]; then
        echo "FAIL $name: diff exited $rc, want $want"; cat "$tmp/$name.out" "$tmp/$name.err"; fail=1
    fi
}
expect_out() {  # expect_out NAME REGEX
    grep -Eq -- "$2" "$tmp/$1.out" || { echo "FAIL $1: output lacks /$2/"; cat "$tmp/$1.out"; fail=1; }
}
expect_err() {  # expect_err NAME REGEX
    grep -Eq -- "$2" "$tmp/$1.err" || { echo "FAIL $1: stderr lacks /$2/"; cat "$tmp/$1.err"; fail=1; }
}
line_of() {  # line_of NAME REGEX: the first line number matching, or 999999
    local l; l=$(grep -nE -- "$2" "$tmp/$1.out" | head -1 | cut -d: -f1); echo "${l:-999999}"
}

# --- The first case: mail.scn under oracle and wakeat, seeds 1..5;
# lost raised by one in a single run.
"$SIMRUN" run scenarios/mail.scn -p oracle,wakeat --seeds 1..5 --db "$tmp/mail.db" > /dev/null || fail=1
"$SIMRUN" run scenarios/mail.scn -p oracle,wakeat --seeds 1..5 --db "$tmp/mail2.db" > /dev/null || fail=1

# Identical results: no regression, behaviour unchanged.
run_diff 0 same "$tmp/mail.db" "$tmp/mail2.db"
expect_out same '^result: 0 regressions$'
expect_out same 'fingerprints identical in 5 of 5 seeds \(the same runs at the same instants\)'
run_diff 0 same_md "$tmp/mail.db" "$tmp/mail2.db" --format markdown
expect_out same_md '^### simrun diff: no regression$'
run_diff 0 same_self "$tmp/mail.db" "$tmp/mail.db"

cp "$tmp/mail.db" "$tmp/lost.db"
sqlite3 "$tmp/lost.db" "update metrics set value = value + 1 where name = 'lost' and handler = ''
    and run_id = (select run_id from runs where policy = 'wakeat' and seed = 3)"
run_diff 1 lost "$tmp/mail.db" "$tmp/lost.db"
expect_out lost '^REGRESSION mail/wakeat lost seed 3: 0 → 1$'
expect_out lost '^  lost +0 +0\.20 \[0\.01, 1\.11\] +\+0\.20 ± 0\.56 +exact +REGRESSION in 1 of 5 seeds$'
expect_out lost '^result: 1 regression \(mail/wakeat lost\)$'
# The regression comes first: before any table, and wakeat before oracle.
[ "$(line_of lost '^REGRESSION')" -lt "$(line_of lost '^mail / ')" ] || { echo "FAIL lost: regression not first"; fail=1; }
[ "$(line_of lost '^mail / wakeat')" -lt "$(line_of lost '^mail / oracle')" ] \
    || { echo "FAIL lost: the pair with the regression is not first"; cat "$tmp/lost.out"; fail=1; }
# Markdown: the verdict, the regression with its seed, then the rest.
run_diff 1 lost_md "$tmp/mail.db" "$tmp/lost.db" --format markdown
expect_out lost_md '^### simrun diff: regression$'
expect_out lost_md '^\| mail \| wakeat \| \*\*lost\*\* \| 3 \| 0 \| 1 \| worse in 1 of 5 seeds \| exact \|$'
[ "$(line_of lost_md '\*\*lost\*\*')" -lt "$(line_of lost_md '^<details>')" ] \
    || { echo "FAIL lost_md: regressions not before the details"; cat "$tmp/lost_md.out"; fail=1; }
[ "$(line_of lost_md '^#### mail / wakeat')" -lt "$(line_of lost_md '^#### mail / oracle')" ] \
    || { echo "FAIL lost_md: the pair with the regression is not first"; cat "$tmp/lost_md.out"; fail=1; }
# No tolerance applies to a correctness metric: naming one is an error,
# and '*' leaves it exact.
run_diff 2 lost_tol "$tmp/mail.db" "$tmp/lost.db" --tolerance 'lost=50%'
expect_err lost_tol "'lost' is a correctness metric, gated exactly"
run_diff 1 lost_star "$tmp/mail.db" "$tmp/lost.db" -t '*=1000%'
expect_out lost_star '^REGRESSION mail/wakeat lost seed 3: 0 → 1$'
# Worse in one seed and better in another, the same mean: still a
# regression, of that seed.
dups() {  # dups DB SEED VALUE: oracle's duplicates in that seed
    sqlite3 "$1" "update metrics set value = $3 where name = 'duplicates' and handler = ''
        and run_id = (select run_id from runs where policy = 'oracle' and seed = $2)"
}
cp "$tmp/mail.db" "$tmp/mixbase.db"; dups "$tmp/mixbase.db" 2 7
cp "$tmp/mail.db" "$tmp/mixed.db"; dups "$tmp/mixed.db" 1 2; dups "$tmp/mixed.db" 2 5
run_diff 1 mixed "$tmp/mixbase.db" "$tmp/mixed.db"
expect_out mixed '^REGRESSION mail/oracle duplicates seed 1: 0 → 2$'
# (0, 7, 0, 0, 0 is a burst, not a Poisson count: the interval reaches down to 0)
expect_out mixed '^  duplicates +1\.4 \[0\.0, 5\.3\] +1\.4 \[0\.0, 4\.1\] +0\.0 ± 1\.8 \(\+0\.00%\) +exact +REGRESSION in 1 of 5 seeds$'
# A recovery that stops being ok, a recovery that never comes, a run that
# stops being ok: each named with its seed.
cp "$tmp/mail.db" "$tmp/recovery.db"
sqlite3 "$tmp/recovery.db" "update metrics set value = 0 where name = 'recovery_ok' and handler = ''
    and run_id = (select run_id from runs where policy = 'oracle' and seed = 4);
    update metrics set value = -1 where name = 'recovery_time' and handler = ''
    and run_id = (select run_id from runs where policy = 'oracle' and seed = 5);
    update runs set status = 'livelock' where policy = 'wakeat' and seed = 2"
run_diff 1 recovery "$tmp/mail.db" "$tmp/recovery.db"
expect_out recovery '^REGRESSION mail/oracle recovery_ok seed 4: true → false$'
expect_out recovery '^REGRESSION mail/oracle recovery_time seed 5: 0us → never$'
expect_out recovery '^REGRESSION mail/wakeat status seed 2: ok → livelock$'

# --- The second case: poll against poll.period=10m pairs by scenario
# and policy, shows the parameter change, and fails on latency.
"$SIMRUN" run scenarios/mail.scn -p poll --seeds 1..5 --db "$tmp/p1m.db" > /dev/null || fail=1
"$SIMRUN" run scenarios/mail.scn -p poll --seeds 1..5 --set poll.period=10m --db "$tmp/p10m.db" > /dev/null || fail=1
run_diff 1 period "$tmp/p1m.db" "$tmp/p10m.db"
expect_out period '^  parameters: poll\.period 1m \(default\) → 00:10:00$'
expect_out period '^REGRESSION mail/poll \(period=00:10:00\) latency\.p50: '
expect_out period '^  latency\.p50 .* 5% +REGRESSION$'
expect_out period '^  busy_loops .* improved$'
expect_out period 'fingerprints identical in 0 of 5 seeds$'
expect_out period '^result: [0-9]+ regressions \(.*mail/poll latency\.p50'
# Markdown: the change under test and the regressions first; in each
# table, regression rows before the others.
run_diff 1 period_md "$tmp/p1m.db" "$tmp/p10m.db" --format markdown
expect_out period_md '^- mail/poll \(period=00:10:00\): parameters: poll\.period 1m \(default\) → 00:10:00$'
expect_out period_md '^\| mail \| poll \(period=00:10:00\) \| \*\*latency\.p50\*\* \| 1\.\.5 \| '
[ "$(line_of period_md '^\| latency\.p50 .*\*\*REGRESSION\*\* \|$')" -lt "$(line_of period_md '^\| busy_loops .* improved \|$')" ] \
    || { echo "FAIL period_md: regression rows not first"; cat "$tmp/period_md.out"; fail=1; }
# Pairing by parameters too: nothing pairs, and the base's group is missing.
run_diff 1 period_params "$tmp/p1m.db" "$tmp/p10m.db" --pair-by scenario,policy,params
expect_out period_params '^MISSING mail / poll / seeds 1\.\.5: only in '
expect_out period_params 'mail / poll \(period=00:10:00\) / seeds 1\.\.5: only in '
expect_out period_params '^result: 0 regressions; 1 group with runs missing from '
expect_err period_params 'warning: no runs of .* pair with runs of'
run_diff 0 period_params_ok "$tmp/p1m.db" "$tmp/p10m.db" --pair-by policy,params,scenario --allow-missing
expect_out period_params_ok '\(allowed by --allow-missing\)$'

# --- Variants pair with their base policy under --pair-by scenario,base.
"$SIMRUN" run scenarios/heartbeat_ack.scn -p heartbeat --seeds 1..3 --db "$tmp/hb.db" > /dev/null || fail=1
"$SIMRUN" run scenarios/heartbeat_ack.scn -p hb_ackgap --seeds 1..3 --db "$tmp/hbv.db" > /dev/null || fail=1
run_diff 1 variant_default "$tmp/hb.db" "$tmp/hbv.db"
expect_out variant_default '^MISSING heartbeat-ack / heartbeat / seeds 1\.\.3: only in '
expect_err variant_default 'under --pair-by scenario,base'
run_diff 1 variant "$tmp/hb.db" "$tmp/hbv.db" --pair-by scenario,base
expect_out variant '^  policy: heartbeat → hb_ackgap$'
expect_out variant '^  parameters: heartbeat\.ack_delay 0 \(default\) → 00:00:02$'
expect_out variant '^REGRESSION heartbeat-ack/hb_ackgap \(ack_delay=00:00:02\) dup_deliveries seed 1: 0 → 1$'
# Two groups of one side share the key and neither is identical: ambiguous.
"$SIMRUN" run scenarios/mail.scn -p poll --seeds 1..2 --set poll.period=5m --db "$tmp/two.db" > /dev/null || fail=1
"$SIMRUN" run scenarios/mail.scn -p poll --seeds 1..2 --set poll.period=2m --db "$tmp/two.db" > /dev/null || fail=1
run_diff 1 ambiguous "$tmp/two.db" "$tmp/p10m.db"
expect_out ambiguous '^MISSING mail / poll \(period=00:05:00\) / seeds 1\.\.2: ambiguous: several groups share its key \(scenario,policy\)'
expect_out ambiguous 'mail / poll \(period=00:10:00\) / seeds 1\.\.5: ambiguous'

# --- Performance metrics: tolerance and the paired interval.
sweep="scenarios/flaky.scn -p oracle,poll --seeds 1..5"
"$SIMRUN" run $sweep --db "$tmp/base.db" > /dev/null || fail=1
# Worse by 3 % in p99 latency: within the default 5 %, a regression at 1 %.
cp "$tmp/base.db" "$tmp/slow.db"
sqlite3 "$tmp/slow.db" "update metrics set value = value * 1.03 where name = 'latency.p99' and handler = ''
    and run_id in (select run_id from runs where policy = 'oracle')"
run_diff 0 slow "$tmp/base.db" "$tmp/slow.db"
expect_out slow '^  latency.p99 .* worse, within tolerance$'
run_diff 1 slow_tol "$tmp/base.db" "$tmp/slow.db" --tolerance latency.p99=1%
expect_out slow_tol '^result: 1 regression \(flaky/oracle latency.p99\)$'
expect_out slow_tol '^REGRESSION flaky/oracle latency\.p99: .* → .*, change \+.*, tolerance 1%$'
run_diff 1 slow_all "$tmp/base.db" "$tmp/slow.db" -t '*=1%'
# Worse on average but not consistently across seeds: not significant.
cp "$tmp/base.db" "$tmp/noise.db"
sqlite3 "$tmp/noise.db" "update metrics set value = value + case (select seed from runs r where r.run_id = metrics.run_id)
    when 1 then 40 when 2 then -30 when 3 then 25 when 4 then -20 else 0 end
    where name = 'busy_loops' and handler = '' and run_id in (select run_id from runs where policy = 'poll')"
run_diff 0 noise "$tmp/base.db" "$tmp/noise.db" --tolerance busy_loops=0%
expect_out noise '^  busy_loops .* worse, not significant$'
# Better: fewer busy loops in every seed.
cp "$tmp/base.db" "$tmp/better.db"
sqlite3 "$tmp/better.db" "update metrics set value = value - 100 where name = 'busy_loops' and handler = ''
    and run_id in (select run_id from runs where policy = 'poll')"
run_diff 0 better "$tmp/base.db" "$tmp/better.db"
expect_out better '^  busy_loops .* improved$'

# --- Seeds and groups one side lacks.
"$SIMRUN" run scenarios/flaky.scn -p oracle,poll --seeds 1..3 --db "$tmp/fewer.db" > /dev/null || fail=1
run_diff 1 fewer "$tmp/base.db" "$tmp/fewer.db"
expect_out fewer '^MISSING flaky/poll seeds 4\.\.5: only in '
expect_out fewer 'compared with flaky / poll in 3 paired seeds; seeds 4\.\.5 only in '
run_diff 0 fewer_ok "$tmp/base.db" "$tmp/fewer.db" --allow-missing
expect_err fewer_ok 'warning: 2 groups of .* with runs missing from .* \(allowed\)'
run_diff 0 more "$tmp/fewer.db" "$tmp/base.db"
expect_out more 'seeds 4\.\.5 only in '
"$SIMRUN" run scenarios/batch.scn -p oracle --db "$tmp/other.db" > /dev/null || fail=1
run_diff 1 other "$tmp/base.db" "$tmp/other.db"
expect_out other 'batch / oracle / seed 3: only in'
expect_out other '^MISSING flaky / oracle / seeds 1\.\.5: only in '
expect_err other 'warning: no runs'

# --- A percentile that becomes infinite (work never done) in one seed is a
# regression, whatever the tolerance; the reverse is an improvement.
cp "$tmp/base.db" "$tmp/censored.db"
sqlite3 "$tmp/censored.db" "UPDATE metrics SET value = 9e999 WHERE handler = '' AND name = 'latency.p99'
    AND run_id = (SELECT run_id FROM runs WHERE policy = 'poll' AND seed = 2)" || fail=1
run_diff 1 censored "$tmp/base.db" "$tmp/censored.db" --tolerance '*=1000%'
expect_out censored '^REGRESSION flaky/poll latency.p99 seed 2: .* → ∞$'
expect_out censored 'result: 1 regression \(flaky/poll latency\.p99\)'
run_diff 0 uncensored "$tmp/censored.db" "$tmp/base.db"
expect_out uncensored 'latency.p99 .*∞ in 1 → 0 seeds.*improved'

# --- Bad input.
run_diff 2 missing "$tmp/base.db" "$tmp/nosuch.db"
expect_err missing "error: cannot open results database"
echo "not a database" > "$tmp/junk.db"
run_diff 2 junk "$tmp/base.db" "$tmp/junk.db"
run_diff 2 badtol "$tmp/base.db" "$tmp/base.db" --tolerance latency.p99=abc
# A bare number could be a fraction or an amount: the percent sign is required.
run_diff 2 bare_tol "$tmp/base.db" "$tmp/base.db" --tolerance latency.p99=5
expect_err bare_tol "bad tolerance 'latency.p99=5' \\(a tolerance is a percentage of the base mean: write latency.p99=5%\\)"
run_diff 2 hex_tol "$tmp/base.db" "$tmp/base.db" -t 'busy_loops=0x10%'
run_diff 0 frac_tol "$tmp/base.db" "$tmp/base.db" -t 'busy_loops=0.5%'
run_diff 2 unknown_metric "$tmp/base.db" "$tmp/base.db" --tolerance nosuch=5%
expect_err unknown_metric "unknown metric 'nosuch'"
run_diff 2 badpair "$tmp/base.db" "$tmp/base.db" --pair-by scenario,colour
expect_err badpair "unknown part 'colour' in --pair-by"
run_diff 2 emptypair "$tmp/base.db" "$tmp/base.db" --pair-by ''
run_diff 2 one_arg "$tmp/base.db"
run_diff 2 badfmt "$tmp/base.db" "$tmp/base.db" --format html
"$SIMRUN" diff --help | grep -q -- '--pair-by KEY' || { echo "FAIL --help lacks --pair-by"; fail=1; }
exit $fail
