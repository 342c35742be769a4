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
#include "util/mem.h"
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
        util_error("cannot write '%s'", path);
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
        json_t *o =
            json_pack("{s:[s,s],s:o,s:i,s:b}", "hosts", s->nodes[x->a].host, s->nodes[x->b].host,
                      "busbw", x->busbw < 0 ? json_null() : json_real(x->busbw), "launch", x->round,
                      "focused", x->focused);
        if (x->bisected)
            json_object_set_new(o, "bisected", json_true());
        json_array_append_new(pairs, o);
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

/*
 * Text from the nodes (host names, doctor's check names, the verdicts that quote them) as the
 * format takes it: without controls or terminal escapes (text, md: a newline would forge a line),
 * and in Markdown with its punctuation escaped (a name is not markup). Appends to b.
 */
static void add_clean(struct util_buf *b, const char *text, int md)
{
    struct util_buf c = UTIL_BUF_INIT;
    util_text_clean(&c, text ? text : "", text ? strlen(text) : 0, 0);
    for (const char *p = util_buf_str(&c); *p; p++)
        util_buf_addf(b, md && strchr("\\`*_[]<>|#!~()&", *p) ? "\\%c" : "%c", *p);
    util_buf_release(&c);
}

/* The evidence, numbers to 4 significant digits, keys sorted, ", " between fields. */
static char *evidence_text(const json_t *v)
{
    return json_dumps(json_object_get(v, "evidence"),
                      JSON_INDENT(0) | JSON_SORT_KEYS | JSON_REAL_PRECISION(4));
}

/* Each verdict: its kind and text, then its evidence, wrapped to WIDTH (cleaned for md). */
static void verdict_lines(const struct survey *s, struct util_buf *b, const char *prefix, int md)
{
    size_t i;
    json_t *v;
    char first[64], indent[64];
    snprintf(indent, sizeof(indent), "%*s", (int)strlen(prefix) + 4, "");
    json_array_foreach(s->verdicts, i, v) {
        struct util_buf line = UTIL_BUF_INIT, raw = UTIL_BUF_INIT;
        util_buf_addf(&raw, "%s: %s", json_string_value(json_object_get(v, "kind")),
                      json_string_value(json_object_get(v, "text")));
        add_clean(&line, util_buf_str(&raw), md);
        util_buf_release(&raw);
        wrap(b, prefix, indent, util_buf_str(&line));
        util_buf_release(&line);
        char *ev = evidence_text(v);
        for (char *p = ev; p && *p; p++) /* one line: JSON_INDENT(0) put newlines */
            if (*p == '\n')
                *p = ' ';
        snprintf(first, sizeof(first), "%s  evidence: ", prefix);
        add_clean(&line, ev ? ev : "{}", md);
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

static void add_html(struct util_buf *b, const char *text);

/* The healthy nodes no pair measured, into b ("h1 (why), h2 (why)"; mode 0 text, 1 Markdown, 2
 * HTML, each escaped so): their links were not judged, which "every node and link measured" does
 * not say. Returns how many. */
static int unpaired(const struct survey *s, struct util_buf *b, int mode)
{
    int n = 0;
    for (int i = 0; i < s->nnodes; i++) {
        const struct survey_node *x = &s->nodes[i];
        if (survey_excluded(s, i) || !x->class_id || x->intra <= 0 || x->npairs)
            continue;
        util_buf_addf(b, "%s", n++ ? ", " : "");
        if (mode == 2)
            add_html(b, x->host);
        else
            add_clean(b, x->host, mode);
        json_t *c = json_object_get(s->classes, x->class_id);
        util_buf_addf(b, json_integer_value(json_object_get(c, "nodes")) == 1
                             ? " (the only node of its class)"
                             : " (no pair measured)");
    }
    return n;
}

/* What the verdicts already say of class cls (a verdict is the class's when a host it names is):
 * a class-below-expected verdict (below), a path named (path), and its excluded nodes. */
struct class_said {
    int below, path, excluded, every_pair; /* every_pair: each pair of its nodes was measured */
};

/* A class's level alone or in pairs (what: "alone" or "pair"): its median and spread, or that
 * none was measured (a class of one node has no pair: its 0.00 GB/s read as a measurement). */
static void levels(struct util_buf *b, json_t *c, const char *what)
{
    char median[32], spread[32];
    snprintf(median, sizeof(median), "%s_median", what);
    snprintf(spread, sizeof(spread), "%s_spread", what);
    if (json_is_number(json_object_get(c, median)))
        util_buf_addf(b, "median %.2f GB/s, spread %.0f%%",
                      json_number_value(json_object_get(c, median)),
                      100 * json_number_value(json_object_get(c, spread)));
    else
        util_buf_addf(b, "none measured");
}

static int by_key(const void *a, const void *b)
{
    unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return (x > y) - (x < y);
}

int survey_every_pair(const struct survey *s, const char *cls)
{
    long long nodes = 0, pairs = 0;
    for (int i = 0; i < s->nnodes; i++)
        nodes += s->nodes[i].class_id && !strcmp(s->nodes[i].class_id, cls);
    /* the class's distinct pairs measured: their keys sorted, each counted once */
    unsigned long long *key = util_xmalloc(sizeof(*key) * ((size_t)s->npairs + 1));
    size_t nk = 0;
    for (int p = 0; p < s->npairs; p++) {
        int a = s->pairs[p].a, b = s->pairs[p].b;
        if (a >= 0 && b >= 0 && s->nodes[a].class_id && !strcmp(s->nodes[a].class_id, cls))
            key[nk++] = (unsigned long long)(a < b ? a : b) << 32 | (unsigned)(a < b ? b : a);
    }
    qsort(key, nk, sizeof(*key), by_key);
    for (size_t k = 0; k < nk; k++)
        pairs += !k || key[k] != key[k - 1];
    free(key);
    return s->all_pairs || (nodes >= 2 && pairs >= nodes * (nodes - 1) / 2);
}

static struct class_said class_said(const struct survey *s, const char *cls)
{
    struct class_said c = {0};
    for (int i = 0; i < s->nnodes; i++)
        if (s->nodes[i].class_id && !strcmp(s->nodes[i].class_id, cls))
            c.excluded += survey_excluded(s, i);
    c.every_pair = survey_every_pair(s, cls);
    size_t i, k;
    json_t *v, *h;
    json_array_foreach(s->verdicts, i, v) {
        const char *kind = util_json_str(v, "kind", "");
        int mine = 0;
        json_array_foreach(json_object_get(v, "hosts"), k, h) {
            for (int n = 0; !mine && n < s->nnodes; n++)
                mine = s->nodes[n].class_id && !strcmp(s->nodes[n].class_id, cls) &&
                       json_is_string(h) && !strcmp(s->nodes[n].host, json_string_value(h));
        }
        c.below |= mine && !strcmp(kind, "class-below-expected");
        c.path |= mine && !strncmp(kind, "path-", 5);
    }
    return c;
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
    verdict_lines(s, b, md ? "- " : "  ", md);
    struct util_buf u = UTIL_BUF_INIT;
    if (unpaired(s, &u, md)) {
        struct util_buf line = UTIL_BUF_INIT;
        util_buf_addf(&line, "Links not judged: %s: no partner of its class was measured with it.",
                      util_buf_str(&u));
        util_buf_addf(b, "\n");
        wrap(b, "", "  ", util_buf_str(&line));
        util_buf_release(&line);
    }
    util_buf_release(&u);
    int *members = util_xmalloc(sizeof(int) * (size_t)(s->nnodes + 1));
    const char *cls;
    json_t *c;
    json_object_foreach(s->classes, cls, c) {
        int n = class_members(s, cls, members);
        struct util_buf line = UTIL_BUF_INIT;
        util_buf_addf(&line, "Class %s: %d node%s%s; alone: ", cls, n, n == 1 ? "" : "s", pred);
        levels(&line, c, "alone");
        util_buf_addf(&line, "; pairs: ");
        levels(&line, c, "pair");
        for (int alone = 1; alone >= 0; alone--) {
            const char *w = alone ? "alone" : "pair";
            char k[4][32];
            snprintf(k[0], sizeof(k[0]), "%s_below_expected", w);
            snprintf(k[1], sizeof(k[1]), "%s_own_median", w);
            snprintf(k[2], sizeof(k[2]), "%s_expected_low", w);
            snprintf(k[3], sizeof(k[3]), "%s_expected_high", w);
            if (json_is_true(json_object_get(c, k[0])))
                util_buf_addf(&line,
                              "; the %s median is the model's yardstick: the class's own, %.2f "
                              "GB/s, is below the band %.2f to %.2f GB/s (predicted)",
                              alone ? "alone" : "pairs'", json_real_value(json_object_get(c, k[1])),
                              json_real_value(json_object_get(c, k[2])),
                              json_real_value(json_object_get(c, k[3])));
        }
        util_buf_addf(b, "\n");
        if (md) /* a heading is one line; the width is the terminal's concern */
            util_buf_addf(b, "## %s\n", util_buf_str(&line));
        else
            wrap(b, "", "  ", util_buf_str(&line));
        util_buf_addf(b, "\n");
        util_buf_release(&line);
        /* the longer repeat beside the first value, as the HTML has it: a node 40% low once and
         * fine when measured longer (a stall) read as a slow node left unnamed */
        util_buf_addf(b,
                      md ? "| host | busbw alone (GB/s) | repeat (GB/s) | verdict |\n"
                           "|---|---:|---:|---|\n"
                         : "  %-32s %12s %12s  %s\n",
                      "host", "alone GB/s", "repeat GB/s", "verdict");
        for (int k = 0; k < n; k++) {
            if (n > LIST_NODES && k == 10) {
                util_buf_addf(b, md ? "| ... %d more | | | |\n" : "  ... %d more\n", n - 20);
                k = n - 10;
            }
            const struct survey_node *x = &s->nodes[members[k]];
            const char *v = x->verdict ? kind_of(s, members[k]) : "";
            char bw[32], rep[32] = "";
            snprintf(bw, sizeof(bw), x->intra < 0 ? "failed" : "%.2f", x->intra);
            if (x->intra_rep)
                snprintf(rep, sizeof(rep), x->intra_rep < 0 ? "failed" : "%.2f", x->intra_rep);
            struct util_buf host = UTIL_BUF_INIT;
            add_clean(&host, x->host, md);
            if (md)
                util_buf_addf(b, "| %s | %s | %s | %s |\n", util_buf_str(&host), bw, rep, v);
            else
                util_buf_addf(b, "  %-32.32s %12s %12s  %s\n", util_buf_str(&host), bw, rep, v);
            util_buf_release(&host);
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
    json_object_foreach(json_object_get(s->doctor, "nodes"), host, names) {
        if (!json_array_size(names))
            continue;
        struct util_buf line = UTIL_BUF_INIT;
        add_clean(&line, host, md);
        util_buf_addf(&line, " failed:");
        size_t k;
        json_t *nm;
        json_array_foreach(names, k, nm) {
            util_buf_addf(&line, " ");
            add_clean(&line, json_string_value(nm), md);
        }
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
    json_array_foreach(s->whole, i, w) {
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
        struct class_said said = class_said(s, json_string_value(json_object_get(w, "class")));
        if (pv > 0 && bw > 0 && bw < survey_model_floor(s, pv))
            util_buf_addf(
                &line, ". %.0f%% below the prediction%s: %s", 100 * (1 - bw / pv),
                said.excluded ? " without the class's excluded nodes" : "",
                said.below ? "the class is below its expectation, as named above"
                : said.every_pair
                    ? (said.path ? "a path named above, or what the nodes share only at this "
                                   "scale (every pair was measured)"
                                 : "what the nodes share only at this scale (every pair was "
                                   "measured)")
                    : (said.path ? "a path named above, or a fault the pair rounds did not "
                                   "localize (a path between nodes never paired: --pairs all)"
                                 : "a fault the pair rounds did not localize (a path between "
                                   "nodes never paired: --pairs all)"));
        wrap(b, md ? "- " : "  ", md ? "  " : "    ", util_buf_str(&line));
        util_buf_release(&line);
    }
    if (!json_array_size(s->whole))
        util_buf_addf(b, "%sNo class with two healthy nodes.\n", md ? "- " : "  ");
}

/* HTML text: cleaned of controls (a name is not markup either), then escaped. */
static void add_html(struct util_buf *b, const char *text)
{
    struct util_buf c = UTIL_BUF_INIT;
    util_text_clean(&c, text ? text : "", text ? strlen(text) : 0, 0);
    util_text_html(b, util_buf_str(&c));
    util_buf_release(&c);
}

/* A cell's colour: green at the class's median or above, yellow at half, red when failed. */
static void cell_colour(struct util_buf *b, double ratio)
{
    double r = ratio < 0 ? 0 : fmin(1, ratio);
    util_buf_addf(b, "rgb(%d,%d,40)", r < 0.5 ? 230 : (int)(460 * (1 - r)),
                  r < 0.5 ? (int)(400 * r) : 200);
}

/*
 * The pair heatmap of one class as SVG, nodes (m, slowest alone first) on both axes by name: each
 * cell coloured by its worst measurement relative to the class's pair median, every measurement
 * in its tooltip; then the colour scale.
 */
static void heatmap(const struct survey *s, struct util_buf *b, const int *m, int n, double median)
{
    const int cell = n > 64 ? 6 : n > 32 ? 10 : 16;
    size_t longest = 1;
    for (int k = 0; k < n; k++)
        longest = fmax(longest, strlen(s->nodes[m[k]].host));
    int label = 8 + (int)(fmin(longest, 40) * (cell > 8 ? 7 : 4)); /* room for the names */
    int *pos = util_xmalloc(sizeof(int) * (size_t)(s->nnodes + 1));
    double *worst = util_xmalloc(sizeof(double) * (size_t)(n * n + 1));
    struct util_buf *tip = util_xcalloc((size_t)(n * n + 1), sizeof(*tip));
    for (int i = 0; i < s->nnodes; i++)
        pos[i] = -1;
    for (int k = 0; k < n; k++)
        pos[m[k]] = k;
    for (int k = 0; k < n * n; k++)
        worst[k] = 2;
    for (int p = 0; p < s->npairs; p++) {
        const struct survey_pair *x = &s->pairs[p];
        int a = pos[x->a], c = pos[x->b];
        if (a < 0 || c < 0)
            continue;
        double r = x->busbw < 0 ? -1 : x->busbw / (median > 0 ? median : 1);
        for (int t = 0; t < 2; t++) {
            int k = t ? c * n + a : a * n + c;
            worst[k] = fmin(worst[k], r);
            if (x->busbw < 0)
                util_buf_addf(&tip[k], "%sfailed", tip[k].len ? ", " : "");
            else
                util_buf_addf(&tip[k], "%s%.2f GB/s (%.0f%%)", tip[k].len ? ", " : "", x->busbw,
                              100 * r);
        }
    }
    int side = label + n * cell;
    util_buf_addf(b,
                  "<svg class=\"heat\" width=\"%d\" height=\"%d\" role=\"img\" "
                  "font-size=\"%d\"><title>pair busbw relative to the class's pair "
                  "median</title>\n",
                  side, side, cell > 8 ? 11 : 6);
    for (int k = 0; k < n; k++) { /* the names: rows on the left, columns on top */
        const char *host = s->nodes[m[k]].host;
        util_buf_addf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", label - 4,
                      label + k * cell + cell - 3);
        add_html(b, host);
        util_buf_addf(b, "</text><text transform=\"translate(%d,%d) rotate(-90)\">",
                      label + k * cell + cell - 3, label - 4);
        add_html(b, host);
        util_buf_addf(b, "</text>\n");
    }
    for (int a = 0; a < n; a++)
        for (int c = 0; c < n; c++) {
            int k = a * n + c;
            util_buf_addf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"",
                          label + c * cell, label + a * cell, cell - 1, cell - 1);
            if (worst[k] > 1.5)
                util_buf_addf(b, "#ddd");
            else
                cell_colour(b, worst[k]);
            util_buf_addf(b, "\"><title>");
            add_html(b, s->nodes[m[a]].host);
            util_buf_addf(b, " - ");
            add_html(b, s->nodes[m[c]].host);
            util_buf_addf(b, ": %s</title></rect>\n",
                          a == c       ? "the same node"
                          : tip[k].len ? util_buf_str(&tip[k])
                                       : "not measured");
        }
    util_buf_addf(b, "</svg>\n<div class=\"scale\">");
    for (int k = 0; k <= 10; k++) {
        util_buf_addf(b, "<span style=\"background:");
        cell_colour(b, k / 10.0);
        util_buf_addf(b, "\">%s%d%%</span>", k ? "" : "failed or ", 10 * k);
    }
    util_buf_addf(b,
                  "<span style=\"background:#ddd\">not measured</span> of the class's pair "
                  "median (%.2f GB/s); a cell shows the worst of its measurements, its tooltip "
                  "every one</div>\n",
                  median);
    for (int k = 0; k < n * n; k++)
        util_buf_release(&tip[k]);
    free(tip);
    free(worst);
    free(pos);
}

/* The verdicts as a table: hosts, verdict, what it says and its evidence. */
static void html_verdicts(const struct survey *s, struct util_buf *b)
{
    util_buf_addf(b, "<h2>Verdicts</h2>\n");
    struct util_buf u = UTIL_BUF_INIT;
    if (unpaired(s, &u, 2))
        util_buf_addf(
            b, "<p>Links not judged: %s: no partner of its class was measured with it.</p>\n",
            util_buf_str(&u));
    util_buf_release(&u);
    if (!json_array_size(s->verdicts)) {
        util_buf_addf(b, "<p class=\"ok\">None: every node and link measured is like the others of "
                         "its class.</p>\n");
        return;
    }
    util_buf_addf(b, "<table><tr><th>host</th><th>verdict</th><th>evidence</th></tr>\n");
    size_t i, j;
    json_t *v, *h;
    json_array_foreach(s->verdicts, i, v) {
        util_buf_addf(b, "<tr class=\"bad\"><td>");
        json_array_foreach(json_object_get(v, "hosts"), j, h) {
            util_buf_addf(b, "%s", j ? " - " : "");
            add_html(b, json_string_value(h));
        }
        util_buf_addf(b, "</td><td>");
        add_html(b, json_string_value(json_object_get(v, "kind")));
        util_buf_addf(b, "</td><td>");
        add_html(b, json_string_value(json_object_get(v, "text")));
        char *ev = evidence_text(v);
        util_buf_addf(b, "<br><code>");
        add_html(b, ev ? ev : "{}");
        util_buf_addf(b, "</code></td></tr>\n");
        free(ev);
    }
    util_buf_addf(b, "</table>\n");
}

/* One class: its statistics, its nodes alone (slowest first), its pair heatmap. */
static void html_class(const struct survey *s, struct util_buf *b, const char *cls, json_t *c,
                       int *members)
{
    const char *pred = s->probe.predicted ? " (predicted)" : "";
    int n = class_members(s, cls, members);
    util_buf_addf(b, "<h2>Class ");
    add_html(b, cls);
    util_buf_addf(b, "</h2>\n<p>%d node%s%s. Alone: ", n, n == 1 ? "" : "s", pred);
    levels(b, c, "alone");
    util_buf_addf(b, ". Pairs: ");
    levels(b, c, "pair");
    util_buf_addf(b, ".</p>\n");
    util_buf_addf(b, "<table><tr><th>host</th><th>alone (GB/s)</th><th>alone again "
                     "(GB/s)</th><th>verdict</th></tr>\n");
    for (int k = 0; k < n; k++) {
        if (n > LIST_NODES && k == 10) {
            util_buf_addf(b, "<tr><td colspan=\"4\">... %d more (survey.json has them)</td></tr>\n",
                          n - 20);
            k = n - 10;
        }
        const struct survey_node *x = &s->nodes[members[k]];
        util_buf_addf(b, "<tr%s><td>", x->verdict ? " class=\"bad\"" : "");
        add_html(b, x->host);
        if (x->intra < 0)
            util_buf_addf(b, "</td><td>failed</td><td>");
        else
            util_buf_addf(b, "</td><td class=\"n\">%.2f</td><td class=\"n\">", x->intra);
        if (x->intra_rep)
            util_buf_addf(b, x->intra_rep < 0 ? "failed" : "%.2f", x->intra_rep);
        util_buf_addf(b, "</td><td>%s</td></tr>\n", x->verdict ? kind_of(s, members[k]) : "");
    }
    util_buf_addf(b, "</table>\n");
    if (n > HEATMAP_NODES)
        util_buf_addf(b,
                      "<p>%d nodes: the heatmap is left out above %d (survey.json has every "
                      "pair).</p>\n",
                      n, HEATMAP_NODES);
    else if (n > 1)
        heatmap(s, b, members, n, json_real_value(json_object_get(c, "pair_median")));
}

static void render_html(const struct survey *s, struct util_buf *b)
{
    int excluded = 0;
    for (int i = 0; i < s->nnodes; i++)
        excluded += survey_excluded(s, i);
    util_buf_addf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                     "<title>topotune survey</title><style>body{font-family:sans-serif;margin:2em}"
                     "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;"
                     "padding:.2em .5em;text-align:left;vertical-align:top}td.n{text-align:right}"
                     "tr.bad{background:#fdd}.ok{color:#060}code{font-size:85%%}"
                     ".scale span{display:inline-block;padding:0 .4em;font-size:80%%}"
                     "</style></head><body>\n<h1>topotune survey</h1>\n");
    util_buf_addf(b,
                  "<p>%d nodes, backend %s%s, all_reduce of %zu bytes: %d launches (%d failed), "
                  "%.0f s%s; <strong>%d nodes excluded, %zu verdicts</strong>.</p>\n",
                  s->nnodes, s->backend,
                  s->probe.predicted ? " (<strong>PREDICTED</strong>: every number)" : "", s->size,
                  s->rounds, s->launches_failed, s->wall_s, s->probe.launch_s ? " predicted" : "",
                  excluded, json_array_size(s->verdicts));
    html_verdicts(s, b);
    int *members = util_xmalloc(sizeof(int) * (size_t)(s->nnodes + 1));
    const char *cls;
    json_t *c;
    json_object_foreach(s->classes, cls, c)
        html_class(s, b, cls, c, members);
    free(members);
    /* the doctor and the whole-cluster runs as the text report says them */
    struct util_buf text = UTIL_BUF_INIT;
    render(s, &text, 0);
    const char *tail = strstr(util_buf_str(&text), "\nDoctor\n");
    util_buf_addf(b, "<h2>Doctor and the whole cluster</h2>\n<pre>");
    util_text_html(b, tail ? tail + 1 : "");
    util_buf_release(&text);
    util_buf_addf(b, "</pre>\n</body></html>\n");
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
