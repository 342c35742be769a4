/* SPDX-License-Identifier: MIT */
/*
 * What a survey leaves in DIR: survey.json, healthy.hostfile, excluded.txt and the reports
 * (text, Markdown, one self-contained HTML page with a pair heatmap). Every file is written
 * whole, then renamed into place: no half-written file is left behind.
 */
#include "survey/internal.h"
#include "survey/survey.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"
#include "util/log.h"
#include "util/text.h"
#include "util/version.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Above this many nodes a class's table lists its slowest and fastest nodes only. */
#define LIST_NODES 64
/* Above this many nodes in a class the HTML heatmap is left out (n^2 cells). */
#define HEATMAP_NODES 128

static int write_file(const struct survey *s, const char *name, struct util_buf *b)
{
    char path[1100];
    snprintf(path, sizeof(path), "%s/%s", s->dir, name);
    int rc = util_file_write_atomic(path, b->data ? b->data : "", b->len);
    util_buf_release(b);
    if (rc)
        error("cannot write '%s'", path);
    return rc ? UTIL_EIO : 0;
}

static const char *kind_of(const struct survey *s, int i)
{
    json_t *v = json_array_get(s->verdicts, (size_t)s->nodes[i].verdict - 1);
    return json_string_value(json_object_get(v, "kind"));
}

static json_t *survey_json(const struct survey *s)
{
    json_t *nodes = json_array(), *pairs = json_array();
    for (int i = 0; i < s->nnodes; i++) {
        const struct survey_node *n = &s->nodes[i];
        json_t *o =
            json_pack("{s:s,s:o,s:b}", "host", n->host, "class", util_json_str_or_null(n->class_id),
                      "healthy", !survey_excluded(s, i));
        json_object_set_new(o, "alone_busbw", n->intra > 0 ? json_real(n->intra) : json_null());
        if (n->intra_rep)
            json_object_set_new(o, "alone_repeat_busbw",
                                n->intra_rep > 0 ? json_real(n->intra_rep) : json_null());
        if (n->verdict)
            json_object_set_new(o, "verdict", json_string(kind_of(s, i)));
        json_array_append_new(nodes, o);
    }
    for (int p = 0; p < s->npairs; p++) {
        const struct survey_pair *x = &s->pairs[p];
        json_array_append_new(pairs, json_pack("{s:[s,s],s:o,s:i,s:b}", "hosts",
                                               s->nodes[x->a].host, s->nodes[x->b].host, "busbw",
                                               x->busbw < 0 ? json_null() : json_real(x->busbw),
                                               "launch", x->round, "focused", x->focused));
    }
    return json_pack("{s:s,s:s,s:s,s:b,s:I,s:i,s:f,s:i,s:b,s:o,s:{s:i,s:i,s:f,s:b},s:O,s:O,s:O,"
                     "s:o,s:o,s:O*}",
                     "schema", "topotune/survey/1", "version", util_version(), "backend",
                     s->backend, "predicted", s->probe.predicted, "size", (json_int_t)s->size,
                     "seed", (int)s->seed, "tolerance", s->tolerance, "matchings", s->matchings,
                     "all_pairs", s->all_pairs, "groups_per_launch",
                     s->max_groups ? json_integer(s->max_groups) : json_null(), "launches", "total",
                     s->rounds, "failed", s->launches_failed, "wall_s", s->wall_s, "wall_predicted",
                     s->probe.launch_s != NULL, "classes", s->classes, "verdicts", s->verdicts,
                     "whole", s->whole, "nodes", nodes, "pairs", pairs, "doctor", s->doctor);
}

/* The reports' width: a 120-column terminal with room to spare. */
#define WIDTH 110

static void wrap(struct util_buf *b, const char *first, const char *indent, const char *text)
{
    util_text_wrap(b, first, indent, text, WIDTH);
}

/* The evidence, numbers to 4 significant digits, keys sorted, ", " between fields. */
static char *evidence_text(const json_t *v)
{
    return json_dumps(json_object_get(v, "evidence"),
                      JSON_INDENT(0) | JSON_SORT_KEYS | JSON_REAL_PRECISION(4));
}

/* Each verdict: its kind and text, then its evidence, wrapped to WIDTH. */
static void verdict_lines(const struct survey *s, struct util_buf *b, const char *prefix)
{
    size_t i;
    json_t *v;
    char first[64], indent[64];
    snprintf(indent, sizeof(indent), "%*s", (int)strlen(prefix) + 4, "");
    json_array_foreach(s->verdicts, i, v)
    {
        struct util_buf line = UTIL_BUF_INIT;
        util_buf_addf(&line, "%s: %s", json_string_value(json_object_get(v, "kind")),
                      json_string_value(json_object_get(v, "text")));
        wrap(b, prefix, indent, util_buf_str(&line));
        util_buf_release(&line);
        char *ev = evidence_text(v);
        for (char *p = ev; p && *p; p++) /* one line: JSON_INDENT(0) put newlines */
            if (*p == '\n')
                *p = ' ';
        snprintf(first, sizeof(first), "%s  evidence: ", prefix);
        util_buf_addf(&line, "%s", ev ? ev : "{}");
        wrap(b, first, indent, util_buf_str(&line));
        util_buf_release(&line);
        free(ev);
    }
}

/* qsort has no context argument: the survey being sorted (one thread writes reports). */
static const struct survey *sort_survey;

static int by_alone(const void *a, const void *b)
{
    double x = sort_survey->nodes[*(const int *)a].intra;
    double y = sort_survey->nodes[*(const int *)b].intra;
    return x < y ? -1 : x > y;
}

/* The nodes of a class, slowest alone first. */
static int class_members(const struct survey *s, const char *cls, int *out)
{
    int n = 0;
    for (int i = 0; i < s->nnodes; i++)
        if (s->nodes[i].class_id && !strcmp(s->nodes[i].class_id, cls))
            out[n++] = i;
    sort_survey = s;
    qsort(out, (size_t)n, sizeof(int), by_alone);
    return n;
}

/* Text (md = 0) or Markdown (md = 1): summary, verdicts, per class the nodes alone, the whole. */
static void render(const struct survey *s, struct util_buf *b, int md)
{
    const char *pred = s->probe.predicted ? " (PREDICTED)" : "";
    int excluded = 0;
    for (int i = 0; i < s->nnodes; i++)
        excluded += survey_excluded(s, i);
    util_buf_addf(b, "%sSurvey of %d nodes, backend %s%s, all_reduce of %zu bytes\n\n",
                  md ? "# " : "", s->nnodes, s->backend, pred, s->size);
    util_buf_addf(b, "%d launches (%d failed), %.0f s%s; %d nodes excluded, %zu verdicts.\n\n",
                  s->rounds, s->launches_failed, s->wall_s, s->probe.launch_s ? " predicted" : "",
                  excluded, json_array_size(s->verdicts));
    util_buf_addf(b, "%sVerdicts\n\n", md ? "## " : "");
    if (!json_array_size(s->verdicts))
        util_buf_addf(b, "None: every node and link measured is like the others of its class.\n");
    verdict_lines(s, b, md ? "- " : "  ");
    int *members = malloc(sizeof(int) * (size_t)(s->nnodes + 1));
    const char *cls;
    json_t *c;
    json_object_foreach(s->classes, cls, c)
    {
        int n = class_members(s, cls, members);
        struct util_buf line = UTIL_BUF_INIT;
        util_buf_addf(&line,
                      "Class %s: %d nodes%s; alone: median %.2f GB/s, spread %.0f%%; pairs: "
                      "median %.2f GB/s, spread %.0f%%",
                      cls, n, pred, json_real_value(json_object_get(c, "alone_median")),
                      100 * json_real_value(json_object_get(c, "alone_spread")),
                      json_real_value(json_object_get(c, "pair_median")),
                      100 * json_real_value(json_object_get(c, "pair_spread")));
        util_buf_addf(b, "\n");
        if (md) /* a heading is one line; the width is the terminal's concern */
            util_buf_addf(b, "## %s\n", util_buf_str(&line));
        else
            wrap(b, "", "  ", util_buf_str(&line));
        util_buf_addf(b, "\n");
        util_buf_release(&line);
        util_buf_addf(b,
                      md ? "| host | busbw alone (GB/s) | verdict |\n|---|---:|---|\n"
                         : "  %-32s %12s  %s\n",
                      "host", "alone GB/s", "verdict");
        for (int k = 0; k < n; k++) {
            if (n > LIST_NODES && k == 10) {
                util_buf_addf(b, md ? "| ... %d more | | |\n" : "  ... %d more\n", n - 20);
                k = n - 10;
            }
            const struct survey_node *x = &s->nodes[members[k]];
            const char *v = x->verdict ? kind_of(s, members[k]) : "";
            char bw[32];
            snprintf(bw, sizeof(bw), x->intra < 0 ? "failed" : "%.2f", x->intra);
            if (md)
                util_buf_addf(b, "| %s | %s | %s |\n", x->host, bw, v);
            else
                util_buf_addf(b, "  %-32.32s %12s  %s\n", x->host, bw, v);
        }
    }
    free(members);
    util_buf_addf(b, "\n%sDoctor\n\n", md ? "## " : "");
    if (!s->doctor)
        util_buf_addf(b, "%sNot run%s.\n", md ? "- " : "  ",
                      s->probe.predicted ? " (a simulated cluster)" : " (see the messages)");
    const char *host;
    json_t *names;
    int clean = 1;
    json_object_foreach(json_object_get(s->doctor, "nodes"), host, names)
    {
        if (!json_array_size(names))
            continue;
        struct util_buf line = UTIL_BUF_INIT;
        util_buf_addf(&line, "%s failed:", host);
        size_t k;
        json_t *nm;
        json_array_foreach(names, k, nm) util_buf_addf(&line, " %s", json_string_value(nm));
        wrap(b, md ? "- " : "  ", "    ", util_buf_str(&line));
        util_buf_release(&line);
        clean = 0;
    }
    if (s->doctor && clean)
        util_buf_addf(b, "%sEvery check passed or was not applicable on every node.\n",
                      md ? "- " : "  ");
    util_buf_addf(b, "\n%sThe whole cluster at once\n\n", md ? "## " : "");
    size_t i;
    json_t *w;
    json_array_foreach(s->whole, i, w)
    {
        json_t *p = json_object_get(w, "predicted_busbw");
        double bw = json_real_value(json_object_get(w, "busbw")), pv = json_real_value(p);
        struct util_buf line = UTIL_BUF_INIT;
        util_buf_addf(&line, "%s, %d healthy nodes: %s",
                      json_string_value(json_object_get(w, "class")),
                      (int)json_integer_value(json_object_get(w, "nodes")),
                      json_string_value(json_object_get(w, "outcome")));
        if (json_is_number(json_object_get(w, "busbw")))
            util_buf_addf(&line, " %.2f GB/s%s", bw, pred);
        if (json_is_number(p))
            util_buf_addf(&line, "; the model predicts %.2f GB/s (predicted)", pv);
        else
            util_buf_addf(&line, "; no model prediction for this backend");
        if (pv > 0 && bw > 0 && bw < pv * (1 - s->tolerance))
            util_buf_addf(&line,
                          ". %.0f%% below the prediction without the excluded nodes: a "
                          "path named above, or a fault the pair rounds did not localize (a "
                          "path between nodes never paired: --pairs all)",
                          100 * (1 - bw / pv));
        wrap(b, md ? "- " : "  ", md ? "  " : "    ", util_buf_str(&line));
        util_buf_release(&line);
    }
    if (!json_array_size(s->whole))
        util_buf_addf(b, "%sNo class with two healthy nodes.\n", md ? "- " : "  ");
}

/* The pair heatmap of one class as SVG: busbw relative to the class's pair median. */
static void heatmap(const struct survey *s, struct util_buf *b, const int *m, int n, double median)
{
    const int cell = n > 64 ? 4 : 12, left = 0;
    int *pos = malloc(sizeof(int) * (size_t)s->nnodes);
    for (int i = 0; i < s->nnodes; i++)
        pos[i] = -1;
    for (int k = 0; k < n; k++)
        pos[m[k]] = k;
    util_buf_addf(b,
                  "<svg width=\"%d\" height=\"%d\" role=\"img\"><title>pair busbw / class "
                  "median</title><rect width=\"100%%\" height=\"100%%\" fill=\"#eee\"/>\n",
                  n * cell + left, n * cell);
    for (int p = 0; p < s->npairs; p++) {
        const struct survey_pair *x = &s->pairs[p];
        if (pos[x->a] < 0 || pos[x->b] < 0)
            continue;
        double r = x->busbw < 0 ? 0 : fmin(1, x->busbw / (median > 0 ? median : 1));
        int red = (int)(255 * (1 - r)), green = (int)(200 * r);
        for (int t = 0; t < 2; t++) {
            util_buf_addf(b,
                          "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                          "fill=\"rgb(%d,%d,60)\"><title>",
                          (t ? pos[x->b] : pos[x->a]) * cell, (t ? pos[x->a] : pos[x->b]) * cell,
                          cell, cell, red, green);
            util_text_html(b, s->nodes[x->a].host);
            util_buf_addf(b, " - ");
            util_text_html(b, s->nodes[x->b].host);
            util_buf_addf(b, ": %s</title></rect>\n", x->busbw < 0 ? "failed" : "measured");
        }
    }
    util_buf_addf(b, "</svg>\n");
    free(pos);
}

static void render_html(const struct survey *s, struct util_buf *b)
{
    struct util_buf md = UTIL_BUF_INIT;
    render(s, &md, 0);
    util_buf_addf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                     "<title>topotune survey</title><style>body{font-family:sans-serif;margin:2em}"
                     "pre{background:#f6f6f6;padding:1em}</style></head><body>\n"
                     "<h1>topotune survey</h1>\n<pre>");
    util_text_html(b, util_buf_str(&md));
    util_buf_release(&md);
    util_buf_addf(b, "</pre>\n");
    int *members = malloc(sizeof(int) * (size_t)(s->nnodes + 1));
    const char *cls;
    json_t *c;
    json_object_foreach(s->classes, cls, c)
    {
        int n = class_members(s, cls, members);
        util_buf_addf(b, "<h2>Pairs of class ");
        util_text_html(b, cls);
        util_buf_addf(b, "</h2>\n");
        if (n > HEATMAP_NODES) {
            util_buf_addf(b,
                          "<p>%d nodes: the heatmap is left out above %d (survey.json has "
                          "every pair).</p>\n",
                          n, HEATMAP_NODES);
            continue;
        }
        util_buf_addf(b, "<p>Each measured pair, green at the class's median busbw, red when "
                         "slow or failed (nodes slowest alone first; grey: not measured).</p>\n");
        heatmap(s, b, members, n, json_real_value(json_object_get(c, "pair_median")));
    }
    free(members);
    util_buf_addf(b, "</body></html>\n");
}

int survey_write(struct survey *s)
{
    struct util_buf b = UTIL_BUF_INIT;
    json_t *doc = survey_json(s);
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    util_buf_addf(&b, "%s\n", text ? text : "{}");
    free(text);
    int rc = write_file(s, "survey.json", &b);
    for (int i = 0; !rc && i < s->nnodes; i++)
        if (!survey_excluded(s, i))
            util_buf_addf(&b, "%s\n", s->nodes[i].host);
    if (!rc)
        rc = write_file(s, "healthy.hostfile", &b);
    for (int i = 0; !rc && i < s->nnodes; i++) {
        if (!survey_excluded(s, i))
            continue;
        json_t *v = json_array_get(s->verdicts, (size_t)s->nodes[i].verdict - 1);
        char *ev = json_dumps(json_object_get(v, "evidence"),
                              JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(6));
        util_buf_addf(&b, "%s\t%s\t%s\n", s->nodes[i].host,
                      json_string_value(json_object_get(v, "kind")), ev ? ev : "{}");
        free(ev);
    }
    if (!rc)
        rc = write_file(s, "excluded.txt", &b);
    if (!rc) {
        render(s, &b, 0);
        rc = write_file(s, "report.txt", &b);
    }
    if (!rc) {
        render(s, &b, 1);
        rc = write_file(s, "report.md", &b);
    }
    if (!rc) {
        render_html(s, &b);
        rc = write_file(s, "report.html", &b);
    }
    util_buf_release(&b);
    return rc;
}
