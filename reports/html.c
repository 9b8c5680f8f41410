/* html.c: the report's page (see report_int.h): the head with a guide to reading
 * it and the glossaries of metrics and policies, the at-a-glance table, and
 * a section per scenario with its metric table and charts.
 *
 * Text from the database or a scenario file is escaped (fmt_markup) on its
 * way into the page; captions are built here and trusted. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/diff.h"
#include "reports/fmt.h"
#include "reports/report_int.h"
#include "reports/stats.h"
#include "sim/checker.h"
#include "sim/policy.h"
#include "sim/util.h"

/* The at-a-glance table: the metrics a reader checks first. */
static const char *const glance_metrics[] = {"lost",       "duplicates",  "double_effects", "missed",
                                             "busy_loops", "wakeups",     "latency.p50",    "latency.p99",
                                             "lateness.max", "recovery_ok"};
#define NGLANCE (sizeof glance_metrics / sizeof glance_metrics[0])

/* A figure on the page: the PNG, with links to the SVG, data and script. */
void rpt_html_figure(FILE *h, const char *stem, const char *alt, const char *caption, int svg)
{
    fprintf(h, "<figure><a href=\"%s.%s\"><img src=\"%s.png\" alt=\"", stem, svg ? "svg" : "png", stem);
    fmt_markup(h, alt);
    fprintf(h, "\"></a><figcaption>");
    fputs(caption, h); /* trusted HTML built by the caller */
    fprintf(h, " <span class=\"files\">[");
    if (svg)
        fprintf(h, "<a href=\"%s.svg\">SVG</a> \xc2\xb7 ", stem);
    fprintf(h, "<a href=\"%s.dat\">data</a> \xc2\xb7 <a href=\"%s.gp\">gnuplot script</a>%s]</span></figcaption>"
               "</figure>\n",
            stem, stem, svg ? "" : " (<code>gnuplot -e svg=1</code> for an SVG)");
}

/* --- tables ------------------------------------------------------------------------------------ */

/* A cell of the page: as fmt_metric_ci, but a value that was the same in
 * every seed is shown alone (an interval of width 0 says nothing more). */
static void html_cell_value(const struct metric_info *mi, const struct stats_acc *a, uint64_t never, char *b,
                            size_t n)
{
    if (a->n > 1 && a->min == a->max && !never && !a->ninf)
        fmt_metric(mi, a->mean, b, n);
    else
        fmt_metric_ci(mi, a, never, b, n);
}

static void group_stats(const struct rdb_group *g, int m, struct stats_acc *a, uint64_t *never)
{
    stats_init(a);
    *never = 0;
    for (size_t k = 0; k < g->nruns; k++) {
        double v = g->runs[k].m[m];
        if (metric_table[m].is_duration && v < 0)
            (*never)++;
        else
            stats_add(a, v);
    }
}

/* The metric table of a section: a row per metric, a column per policy;
 * a policy that beats every other on a metric (significantly, paired by
 * seed: verdict.c) is marked best, one that every other beats worst. */
static void html_metric_table(struct rpt *R, const struct section *S, FILE *h)
{
    size_t ng = S->ngroups;
    struct stats_acc *acc = xcalloc(ng, sizeof *acc);
    uint64_t *never = xcalloc(ng, sizeof *never);
    int *mark = xcalloc(ng, sizeof *mark);
    fprintf(h, "<div class=\"wide\"><table class=\"metrics\"><thead><tr><th>metric</th>");
    for (size_t gi = 0; gi < ng; gi++) {
        const struct rdb_group *g = &R->r->groups[S->groups[gi]];
        fprintf(h, "<th><span class=\"swatch\" style=\"background:%s\"></span>", rpt_palette[gi % RPT_NPALETTE]);
        fmt_markup(h, g->policy);
        fprintf(h, "</th>");
    }
    fprintf(h, "</tr></thead><tbody>\n");
    for (int m = 0; m < metric_count; m++) {
        const struct metric_info *mi = &metric_table[m];
        int any = 0;
        for (size_t gi = 0; gi < ng; gi++) {
            group_stats(&R->r->groups[S->groups[gi]], m, &acc[gi], &never[gi]);
            any |= acc[gi].n > 0 || never[gi] > 0 || acc[gi].ninf > 0;
        }
        if (!any)
            continue;
        rpt_marks(R, S, m, mark);
        fprintf(h, "<tr><th title=\"");
        fmt_markup(h, mi->help);
        fprintf(h, "\">%s</th>", mi->name);
        for (size_t gi = 0; gi < ng; gi++) {
            char b[128];
            html_cell_value(mi, &acc[gi], never[gi], b, sizeof b);
            fprintf(h, "<td%s>", mark[gi] > 0 ? " class=\"best\"" : mark[gi] < 0 ? " class=\"worst\"" : "");
            fmt_markup(h, b);
            fprintf(h, "</td>");
        }
        fprintf(h, "</tr>\n");
    }
    fprintf(h, "</tbody></table></div>\n<p class=\"legend\"><span class=\"key best\">green</span>: better than "
               "every other policy, <span class=\"key worst\">red</span>: worse than every other, each significant "
               "at 95 %% over the seeds paired by seed (the per-seed differences; a sign test where a seed is "
               "censored); no colour: the seeds do not tell it apart. A latency (lateness) is never marked better "
               "for a policy that lost (missed) more work than the one it is compared with. "
               "<code>\xe2\x88\x9e</code>: a percentile that lands on work never done.</p>\n");
    free(acc);
    free(never);
    free(mark);
}

/* One row per scenario and policy, the metrics a reader looks at first;
 * cells that show lost or repeated work, or a failed recovery, are marked. */
static void html_glance(struct rpt *R, struct section *secs, size_t nsec, FILE *h)
{
    fprintf(h, "<div class=\"wide\"><table class=\"glance\"><thead><tr><th>scenario</th><th>policy</th><th>seeds</th>");
    for (size_t k = 0; k < NGLANCE; k++)
        fprintf(h, "<th>%s</th>", glance_metrics[k]);
    fprintf(h, "</tr></thead><tbody>\n");
    for (size_t s = 0; s < nsec; s++) {
        for (size_t gi = 0; gi < secs[s].ngroups; gi++) {
            const struct rdb_group *g = &R->r->groups[secs[s].groups[gi]];
            fprintf(h, "<tr>");
            if (gi == 0) {
                fprintf(h, "<th rowspan=\"%zu\"><a href=\"#s-%s\">", secs[s].ngroups, secs[s].stem);
                fmt_markup(h, secs[s].name);
                fprintf(h, "</a></th>");
            }
            fprintf(h, "<td class=\"name\">");
            fmt_markup(h, g->policy);
            char seeds[64];
            rdb_seed_text(g, seeds, sizeof seeds);
            fprintf(h, "</td><td>%s</td>", seeds);
            for (size_t k = 0; k < NGLANCE; k++) {
                const struct metric_info *mi = metric_find(glance_metrics[k]);
                if (!mi) {
                    fprintf(h, "<td>-</td>");
                    continue;
                }
                struct stats_acc a;
                uint64_t never;
                group_stats(g, (int)(mi - metric_table), &a, &never);
                char b[128];
                html_cell_value(mi, &a, never, b, sizeof b);
                int bad = 0;
                if (!strcmp(mi->name, "recovery_ok"))
                    bad = a.n && a.mean < 1;
                else if (!strcmp(mi->name, "lost") || !strcmp(mi->name, "duplicates") ||
                         !strcmp(mi->name, "double_effects") || !strcmp(mi->name, "missed"))
                    bad = a.n && a.max > 0;
                fprintf(h, "<td%s>", bad ? " class=\"worst\"" : "");
                fmt_markup(h, b);
                fprintf(h, "</td>");
            }
            fprintf(h, "</tr>\n");
        }
    }
    fprintf(h, "</tbody></table></div>\n");
}

static const char css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;margin:0 auto;"
    "max-width:1180px;padding:1em 1.5em;color:#222;line-height:1.45}\n"
    "h1{margin-bottom:.2em}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}\n"
    "table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.88em}\n"
    "th,td{border:1px solid #ccc;padding:.25em .55em;text-align:right;white-space:nowrap}\n"
    "thead th{background:#f2f2f2;text-align:center}tbody th{text-align:left;font-weight:600}\n"
    "td.best{background:#dff0d8}td.worst{background:#f8d7da}td.name{text-align:left}\n"
    ".wide{overflow-x:auto;max-width:100%}\n"
    ".swatch{display:inline-block;width:.8em;height:.8em;margin-right:.35em;border-radius:2px;vertical-align:-1px}\n"
    "figure{margin:1em 0 1.8em}figure img{max-width:100%;height:auto;border:1px solid #e4e4e4}\n"
    "figcaption{font-size:.9em;color:#444;max-width:70em}.files{color:#777;white-space:nowrap}\n"
    "pre{background:#f7f7f7;padding:.7em;overflow:auto;font-size:.85em}\n"
    ".meta{color:#555}.warn{color:#a00}.note{background:#fff7e0;border-left:4px solid #f0c040;padding:.4em .8em}\n"
    "dl.glossary dt{font-weight:600;font-family:monospace}dl.glossary dd{margin:0 0 .3em 1.5em}\n"
    "nav ul{columns:3}\n"
    ".verdict{border:1px solid #ccc;border-left:5px solid #1f77b4;background:#f8fbff;padding:.3em 1em;margin:1em 0}\n"
    ".verdict h3{margin:.3em 0}.verdict li{margin:.2em 0}.verdict li.bad{color:#8a1020}.verdict li.good{color:#1d6b2a}\n"
    ".race{font-weight:600}.legend{font-size:.85em;color:#444;max-width:70em}\n"
    ".key{padding:0 .3em}.key.best{background:#dff0d8}.key.worst{background:#f8d7da}\n";

/* The table of contents, first on the page: every scenario, with the
 * policies it compares. */
static void html_toc(struct rpt *R, struct section *secs, size_t nsec, FILE *h)
{
    fprintf(h, "<nav id=\"contents\"><h2>Contents</h2><ol>\n<li><a href=\"#how\">How to read this report</a></li>\n"
               "<li><a href=\"#glance\">At a glance</a></li>\n");
    for (size_t s = 0; s < nsec; s++) {
        fprintf(h, "<li><a href=\"#s-%s\">", secs[s].stem);
        fmt_markup(h, secs[s].name);
        fprintf(h, "</a> <span class=\"meta\">(");
        for (size_t gi = 0; gi < secs[s].ngroups; gi++) {
            fprintf(h, "%s", gi ? ", " : "");
            fmt_markup(h, R->r->groups[secs[s].groups[gi]].policy);
        }
        fprintf(h, ")</span></li>\n");
    }
    fprintf(h, "</ol></nav>\n");
}

void rpt_html_intro(struct rpt *R, FILE *h, struct section *secs, size_t nsec)
{
    fprintf(h, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
               "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
               "<title>simrun report: scheduling policies compared</title>\n<style>\n%s</style></head>\n<body>\n",
            css);
    fprintf(h, "<h1>Scheduling policies compared</h1>\n<p class=\"meta\">Generated by simrun %s from <code>",
            R->o->version);
    fmt_markup(h, R->r->path);
    fprintf(h, "</code>: %zu runs of %zu scenarios.</p>\n", R->r->nruns, nsec);
    html_toc(R, secs, nsec, h);
    fprintf(h,
            "<section id=\"how\"><h2>How to read this report</h2>\n"
            "<p>simrun replays a <em>scenario</em> (a workload of scheduled jobs, events to process, failures and "
            "crashes, on a simulated clock) under several <em>scheduling policies</em>, the rules that decide when "
            "each handler runs, and measures what went wrong and how late things were. Every policy sees exactly "
            "the same workload, so differences come from the policy alone. A scenario run with several random "
            "<em>seeds</em> gives a sample: tables then show <code>mean \xc2\xb1 h</code> or <code>mean [low, "
            "high]</code>, the 95%% confidence interval of the mean over the seeds (counts: exact Poisson "
            "intervals, never below zero); a value alone was the same in every seed.</p>\n"
            "<p>Each scenario starts with its <strong>verdict</strong>: the work each policy lost, repeated or "
            "missed, then who is faster, more punctual or cheaper. Policies are compared <strong>seed by "
            "seed</strong> (paired: in each seed every policy saw the same workload), and one <em>beats</em> "
            "another only when the difference is significant at 95%% over the paired seeds. A policy that lost "
            "items is never called faster than one that processed them: latency counts every item published, "
            "and one never processed counts as infinitely late (<code>\xe2\x88\x9e</code>), so a percentile "
            "that reaches the lost items is <code>\xe2\x88\x9e</code> and a latency curve stops at the share of "
            "items processed. The same holds for lateness and due instants no run served.</p>\n"
            "<p>Then come the metric table (green: better than every other policy, red: worse than every other, "
            "significantly), the latency curves (further left is faster, higher is more work done), the problem "
            "bars (lower is better), the backlog (items waiting over time) and one timeline per policy (what ran "
            "when, on the scenario's local clock).</p>\n"
            "<details><summary>What each metric means</summary><dl class=\"glossary\">\n");
    for (int m = 0; m < metric_count; m++) {
        fprintf(h, "<dt>%s</dt><dd>", metric_table[m].name);
        fmt_markup(h, metric_table[m].help);
        fprintf(h, "%s</dd>\n", metric_table[m].is_duration ? " (a duration)" : "");
    }
    fprintf(h, "</dl></details>\n<details><summary>The policies</summary><dl class=\"glossary\">\n");
    for (int i = 0; i < policy_registry_count; i++) {
        const struct policy_ops *p = policy_registry[i];
        fprintf(h, "<dt>%s</dt><dd>", p->name);
        fmt_markup(h, p->summary ? p->summary : "");
        if (p->seeds && p->seeds[0]) {
            fprintf(h, " (");
            fmt_markup(h, p->seeds);
            fprintf(h, ")");
        }
        fprintf(h, "</dd>\n");
    }
    fprintf(h, "</dl></details></section>\n");
    fprintf(h, "<section id=\"glance\"><h2>At a glance</h2>\n<p class=\"legend\">Red: work lost, repeated or missed "
               "in some seed, or a crash not recovered.</p>\n");
    html_glance(R, secs, nsec, h);
    fprintf(h, "</section>\n");
}

/* --- one scenario --------------------------------------------------------------------------------- */

/* The scenario file itself, folded (at most 400 lines). */
static void html_source(const struct section *S, FILE *h)
{
    FILE *f = fopen(S->path_found ? S->path_found : S->path, "r");
    if (!f)
        return;
    fprintf(h, "<details><summary>The scenario file</summary><pre>");
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, f) && n++ < 400)
        fmt_markup(h, line);
    fclose(f);
    fprintf(h, "</pre></details>\n");
}

/* The head of a section: the scenario file, horizon and seeds, and the
 * policies with their parameters. */
static void section_head(struct rpt *R, const struct section *S, FILE *h)
{
    const struct rdb_group *g0 = &R->r->groups[S->groups[0]];
    fprintf(h, "<section class=\"scenario\" id=\"s-%s\"><h2>", S->stem);
    fmt_markup(h, S->name);
    fprintf(h, "</h2>\n<p class=\"meta\">Scenario file <code>");
    fmt_markup(h, S->path);
    char hz[40], dr[40], seeds[128];
    fmt_duration((double)g0->horizon_us, hz, sizeof hz);
    fmt_duration((double)g0->drain_us, dr, sizeof dr);
    rdb_seed_text(g0, seeds, sizeof seeds);
    fprintf(h, "</code> (hash %s), simulated for %s plus a drain of %s (work may finish, nothing new arrives); "
               "seed%s %s (%zu per policy).</p>\n",
            S->hash, hz, dr, g0->nruns > 1 ? "s" : "", seeds, g0->nruns);
    fprintf(h, "<p>Policies: ");
    for (size_t gi = 0; gi < S->ngroups; gi++) {
        const struct rdb_group *g = &R->r->groups[S->groups[gi]];
        fprintf(h, "%s<span class=\"swatch\" style=\"background:%s\"></span><strong>", gi ? "; " : "",
                rpt_palette[gi % RPT_NPALETTE]);
        fmt_markup(h, g->policy);
        fprintf(h, "</strong>");
        if (strcmp(g->policy, g->base_policy) || g->params[0]) {
            fprintf(h, " (");
            fmt_markup(h, g->base_policy);
            if (g->params[0]) {
                fprintf(h, " with ");
                fmt_markup(h, g->params);
            }
            fprintf(h, ")");
        }
        char sd[64];
        rdb_seed_text(g, sd, sizeof sd);
        if (strcmp(sd, seeds)) {
            fprintf(h, ", seeds ");
            fmt_markup(h, sd);
        }
    }
    fprintf(h, ".</p>\n");
}

int rpt_write_section(struct rpt *R, struct section *S, FILE *h)
{
    section_head(R, S, h);
    rpt_html_verdict(R, S, h);
    fprintf(h, "<h3>Metrics</h3>\n");
    html_metric_table(R, S, h);
    fprintf(h, "<h3>Latency</h3>\n");
    if (rpt_chart_cdf(R, S, "latency", h) != 0)
        return -1;
    if (rpt_chart_cdf(R, S, "lateness", h) != 0)
        return -1;
    fprintf(h, "<h3>Problems</h3>\n");
    if (rpt_chart_bars(R, S, h) != 0)
        return -1;
    if (rpt_section_studies(R, S, h) != 0)
        return -1;
    int ret = rpt_section_timelines(R, S, h);
    html_source(S, h);
    fprintf(h, "<p class=\"meta\"><a href=\"#contents\">Contents</a></p></section>\n");
    return ret;
}

void rpt_html_outro(FILE *h)
{
    fprintf(h, "<p class=\"meta\">Charts: PNG (click for SVG), each with its data file and gnuplot script in "
               "this folder. Schema of the database: docs/results.md; this page: docs/reports.md.</p>\n"
               "<p class=\"meta\">Public incidents of real-world schedulers (scenarios/incidents/) under every "
               "policy: docs/real-world.md, regenerated by <code>make realworld</code>.</p>\n"
               "</body></html>\n");
}
