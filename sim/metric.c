/* metric.c: the metric table.  docs/metrics.md defines every entry; the
 * checker (checker.c, metric_get) computes their values. */
#include "sim/metric.h"

#include <string.h>

/* In enum metric_id order. */
const struct metric_info metric_table[] = {
    {"published", 0, 0, 1, "items published (one event as seen by one subscribed consumer)"},
    {"processed", 0, 0, 1, "items taken by at least one run that committed"},
    {"lost", 0, 0, 1, "items never processed: dropped + stranded"},
    {"dropped", 0, 0, 1, "items dropped (evicted or lost in a crash) and never processed"},
    {"stranded", 0, 0, 1, "items neither processed nor dropped at the end"},
    {"duplicates", 0, 0, 1, "extra commits of an item, plus extra committed runs of a producer due"},
    {"double_effects", 0, 0, 1, "extra applications of a mutation to the same item or producer due"},
    {"dues", 0, 0, 1, "nominal due instants of schedules before the horizon"},
    {"missed", 0, 0, 1, "dues with no run of the handler starting within one period"},
    {"coalesced", 0, 0, 1, "dues served by a run that also served an earlier due"},
    {"runs", 0, 0, 1, "runs started"},
    {"runs_empty", 0, 0, 1, "consumer runs that took no items"},
    {"runs_failed", 0, 0, 1, "runs that ended failed"},
    {"runs_crashed", 0, 0, 1, "runs interrupted by a crash"},
    {"runs_cutoff", 0, 0, 1, "runs cut off: still active at the end of a graceful stop's grace, or at the end"},
    {"busy_loops", 0, 0, 1, "empty runs with no new input since the handler's previous run"},
    {"wakeups", 0, 0, 0, "times the host scheduler woke"},
    {"overlaps", 1, 0, 1, "time with two or more runs active against the policy's promise"},
    {"overlap_runs", 0, 0, 1, "runs started while another run of the same group was active"},
    {"latency.p50", 1, 0, 1, "median of item origin -> first commit"},
    {"latency.p90", 1, 0, 1, "90th percentile of item origin -> first commit"},
    {"latency.p99", 1, 0, 1, "99th percentile of item origin -> first commit"},
    {"latency.max", 1, 0, 1, "maximum of item origin -> first commit"},
    {"latency.mean", 1, 0, 1, "mean of item origin -> first commit"},
    {"lateness.p50", 1, 0, 1, "median of due instant -> start of the run that served it"},
    {"lateness.p99", 1, 0, 1, "99th percentile of due instant -> start of the run that served it"},
    {"lateness.max", 1, 0, 1, "maximum of due instant -> start of the run that served it"},
    {"lateness.mean", 1, 0, 1, "mean of due instant -> start of the run that served it"},
    {"crashes", 0, 0, 0, "crashes (host or part)"},
    {"recovery_ok", 0, 1, 0, "every crash recovered: nothing lost, no double effect, nothing stuck, in bound"},
    {"stuck", 0, 0, 0, "handlers with due work at a restart that never ran again (summed over crashes)"},
    {"recovery_time", 1, 0, 0, "longest restart -> first run that made progress; -1 if one never did"},
    {"livelock", 0, 1, 0, "the engine stopped the run as a livelock (metrics cover the time before)"},
    {"deliveries", 0, 0, 1, "successful deliveries of run results (policies with a delivery queue)"},
    {"dup_deliveries", 0, 0, 1, "successful deliveries of a result that had been delivered before"},
    {"undelivered", 0, 0, 1, "results with delivery attempts, none successful by the end"},
};
const int metric_count = (int)(sizeof metric_table / sizeof metric_table[0]);

_Static_assert(sizeof metric_table / sizeof metric_table[0] == M_COUNT, "metric_table and enum metric_id differ");

const struct metric_info *metric_find(const char *name)
{
    for (int i = 0; i < metric_count; i++)
        if (strcmp(metric_table[i].name, name) == 0)
            return &metric_table[i];
    return NULL;
}

/* What a count counts, by the metric's name; kept apart from the table so
 * that a metric added to the table needs no unit to compile. */
static const struct {
    const char *name, *unit;
} count_units[] = {
    {"published", "items"},   {"processed", "items"},   {"lost", "items"},           {"dropped", "items"},
    {"stranded", "items"},    {"duplicates", "items"},  {"double_effects", "items"}, {"dues", "dues"},
    {"missed", "dues"},       {"coalesced", "dues"},    {"runs", "runs"},            {"runs_empty", "runs"},
    {"runs_failed", "runs"},  {"runs_crashed", "runs"}, {"runs_cutoff", "runs"},     {"busy_loops", "runs"},
    {"overlap_runs", "runs"}, {"wakeups", "wakeups"},   {"crashes", "crashes"},      {"stuck", "handlers"},
    {"deliveries", "results"}, {"dup_deliveries", "results"}, {"undelivered", "results"},
};

const char *metric_unit(const struct metric_info *mi)
{
    if (mi->is_duration)
        return "us";
    if (mi->is_bool)
        return "bool";
    for (size_t i = 0; i < sizeof count_units / sizeof count_units[0]; i++)
        if (!strcmp(count_units[i].name, mi->name))
            return count_units[i].unit;
    return "count";
}
