# realworld_row.awk: one table row of docs/real-world.md (see tools/realworld.sh)
# from the CSV of `simrun run --format csv` (scenario,policy,params,seed,
# status,fingerprint,metric,value,unit,n,ci95_lo,ci95_hi; params may hold
# commas, so the fields after it are read from the end).  A censored value
# ("inf") is infinite.
#
# Variables: policies (space-separated registered policies), ab and fix (the
# as-built and fix labels), problem ("METRIC OP VALUE"), head (the row's
# first three cells).

function is_duration(m) { return m ~ /^(latency|lateness)\./ || m == "overlaps" || m == "recovery_time" }

# A threshold: a number, or a duration (1h15m, 30s, 200ms) in microseconds.
function parse_value(s,    total, n, u) {
    if (s ~ /^-?[0-9.]+$/)
        return s + 0
    total = 0
    while (match(s, /^[0-9]+(us|ms|s|m|h|d)/)) {
        n = substr(s, 1, RLENGTH)
        u = n
        sub(/^[0-9]+/, "", u)
        n = n + 0
        total += n * (u == "us" ? 1 : u == "ms" ? 1e3 : u == "s" ? 1e6 : u == "m" ? 6e7 : u == "h" ? 3.6e9 : 8.64e10)
        s = substr(s, RLENGTH + 1)
    }
    return total
}

function fmt_dur(v,    s) {
    if (v < 0)
        return "never"
    s = int(v / 1e6 + 0.5)
    if (s >= 86400)
        return sprintf("%dd%02dh", int(s / 86400), int((s % 86400) / 3600))
    if (s >= 3600)
        return sprintf("%dh%02dm", int(s / 3600), int((s % 3600) / 60))
    if (s >= 60)
        return sprintf("%dm%02ds", int(s / 60), s % 60)
    return s "s"
}

function fmt(v) { return v >= 1e300 ? "∞" : is_duration(metric) ? fmt_dur(v) : (v == int(v) ? sprintf("%d", v) : sprintf("%.2f", v)) }

function holds(v) {
    return op == ">" ? v > want : op == ">=" ? v >= want : op == "<" ? v < want : op == "<=" ? v <= want : \
           op == "==" ? v == want : v != want
}

function cell(label) {
    if (!(label in val))
        return "—"
    if (status[label] != "ok")
        return "*" status[label] "*"
    return (holds(val[label]) ? "**✗** " : "✓ ") fmt(val[label])
}

BEGIN {
    split(problem, pw, " ")
    metric = pw[1]
    op = pw[2]
    want = parse_value(pw[3])
}

NR > 1 && $(NF - 5) == metric {
    v = $(NF - 4)
    val[$2] = v == "inf" ? 1e300 : v + 0
    status[$2] = $(NF - 7)
}

END {
    line = head
    n = split(policies, pol, " ")
    for (i = 1; i <= n; i++)
        line = line " " cell(pol[i]) " |"
    print line " " cell(ab) " | " cell(fix) " |"
}
