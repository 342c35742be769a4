/* SPDX-License-Identifier: MIT */
/*
 * The comparison as text, Markdown and HTML: the same three tables everywhere
 * (hardware and best configuration, busbw per size, differences from the first
 * input), plus plots in HTML. A predicted number never appears without the word.
 */
#include "compare/compare.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum format { TEXT, MD, HTML };

static const json_t *hw(const struct compare_input *in)
{
    return json_object_get(in->profile, "hardware");
}

static int predicted(const struct compare_input *in)
{
    return json_is_true(json_object_get(in->profile, "predicted"));
}

/* The most common letter between two GPUs in the matrix ("NV18", "PIX"), or "-". */
static void gpu_link(const struct compare_input *in, struct util_buf *out)
{
    const json_t *m = json_object_get(hw(in), "matrix"), *labels = json_object_get(m, "labels");
    const char *best = NULL;
    int best_n = 0;
    size_t i, j, k, l;
    json_t *row, *cell, *c2;
    json_array_foreach(json_object_get(m, "rows"), i, row) json_array_foreach(row, j, cell)
    {
        const char *a = json_string_value(json_array_get(labels, i)),
                   *b = json_string_value(json_array_get(labels, j)), *v = json_string_value(cell);
        if (i == j || !a || !b || !v || strncmp(a, "GPU", 3) || strncmp(b, "GPU", 3))
            continue;
        int n = 0;
        json_array_foreach(json_object_get(m, "rows"), k, c2) json_array_foreach(c2, l, cell)
        {
            const char *w = json_string_value(cell);
            n += k != l && w && !strcmp(w, v);
        }
        if (n > best_n)
            best = v, best_n = n;
    }
    long long nvs = json_integer_value(json_object_get(hw(in), "nvswitches"));
    util_buf_addf(out, "%s", best ? best : "-");
    if (nvs > 0)
        util_buf_addf(out, " (%lld NVSwitch)", nvs);
}

/* "8 x ib:400" from the class key's NIC list. */
static void nics(const struct compare_input *in, struct util_buf *out)
{
    const json_t *list = json_object_get(json_object_get(hw(in), "class_key"), "nics");
    size_t i, j;
    json_t *v;
    if (!json_array_size(list)) {
        util_buf_addf(out, "%lld", (long long)json_integer_value(json_object_get(hw(in), "nics")));
        return;
    }
    json_array_foreach(list, i, v)
    {
        int seen = 0, count = 0;
        for (j = 0; j < i; j++)
            seen |= json_equal(json_array_get(list, j), v);
        if (seen)
            continue;
        for (j = 0; j < json_array_size(list); j++)
            count += json_equal(json_array_get(list, j), v);
        const char *nic = json_string_value(v);
        const char *unknown = nic ? strstr(nic, ":-1") : NULL; /* speed not known */
        if (unknown)
            util_buf_addf(out, "%s%d x %.*s:?", out->len ? ", " : "", count, (int)(unknown - nic),
                          nic);
        else
            util_buf_addf(out, "%s%d x %s", out->len ? ", " : "", count, nic ? nic : "?");
    }
}

static void gpus(const struct compare_input *in, struct util_buf *out)
{
    const char *model = json_string_value(json_object_get(hw(in), "gpu_model"));
    if (!json_integer_value(json_object_get(hw(in), "gpus"))) {
        util_buf_adds(out, "no GPU");
        return;
    }
    util_buf_addf(out, "%lld x %s", (long long)json_integer_value(json_object_get(hw(in), "gpus")),
                  model ? model : "?");
    long long nodes = json_integer_value(json_object_get(in->profile, "nodes"));
    if (nodes > 1)
        util_buf_addf(out, " per node, %lld nodes", nodes);
}

static void numa(const struct compare_input *in, struct util_buf *out)
{
    const json_t *cpu = json_object_get(hw(in), "cpu");
    util_buf_addf(out, "%lld socket(s), %lld NUMA node(s)",
                  (long long)json_integer_value(json_object_get(cpu, "sockets")),
                  (long long)json_integer_value(json_object_get(cpu, "numa_nodes")));
}

static void best_config(const struct compare_input *in, struct util_buf *out)
{
    const json_t *vars = json_object_get(in->profile, "variables"), *v;
    size_t i;
    json_array_foreach(vars, i, v) util_buf_addf(out, "%s%s=%s (%s)", i ? " " : "",
                                                 json_string_value(json_object_get(v, "name")),
                                                 json_string_value(json_object_get(v, "value")),
                                                 json_string_value(json_object_get(v, "role")));
    if (!json_array_size(vars))
        util_buf_addf(out, "%s", json_string_value(json_object_get(in->profile, "summary")));
}

/* busbw at size in a per_size list, or a negative value when absent. */
static double busbw_at(const json_t *per_size, json_int_t size)
{
    size_t i;
    json_t *r;
    json_array_foreach(per_size, i,
                       r) if (json_integer_value(json_object_get(r, "size")) ==
                              size) return json_number_value(json_object_get(r, "busbw"));
    return -1;
}

static const json_t *best_sizes(const struct compare_input *in)
{
    const json_t *w = json_object_get(in->profile, "winner");
    return json_is_object(w)
               ? json_object_get(w, "per_size")
               : json_object_get(json_object_get(in->profile, "baseline"), "per_size");
}

static void number(struct util_buf *out, double v, int is_predicted)
{
    if (v < 0)
        util_buf_adds(out, "-");
    else
        util_buf_addf(out, "%.2f%s", v, is_predicted ? " predicted" : "");
}

/* The defaults' cell: busbw, or how they failed when they never ran ok. */
static void baseline_cell(struct util_buf *out, const struct compare_input *in, json_int_t size)
{
    const json_t *b = json_object_get(in->profile, "baseline");
    if (json_array_size(json_object_get(b, "per_size"))) {
        number(out, busbw_at(json_object_get(b, "per_size"), size), predicted(in));
        return;
    }
    const char *how = json_object_iter_key(json_object_iter(json_object_get(b, "outcomes")));
    util_buf_addf(out, "fails (%s)%s", how ? how : "never ran", predicted(in) ? " predicted" : "");
}

/* Sizes of every input's lists, powers of 4 only (a readable table), ascending. */
static int table_sizes(const struct compare_input *in, int n, json_int_t *sizes, int max)
{
    int count = 0;
    for (json_int_t s = 8; s <= (1LL << 40) && count < max; s *= 4)
        for (int i = 0; i < n; i++)
            if (busbw_at(best_sizes(&in[i]), s) >= 0 ||
                busbw_at(json_object_get(json_object_get(in[i].profile, "baseline"), "per_size"),
                         s) >= 0) {
                sizes[count++] = s;
                break;
            }
    return count;
}

static void human_size(json_int_t s, char *out, size_t len)
{
    const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (s >= 1024 && s % 1024 == 0 && u < 4)
        s /= 1024, u++;
    snprintf(out, len, "%lld %s", (long long)s, units[u]);
}

/* One table, rendered for the format: cells[r][c], row 0 the header. */
struct table {
    int rows, cols, allocated; /* rows shown (may shrink), columns, rows allocated */
    char ***cells;
};

static void table_init(struct table *t, int rows, int cols)
{
    t->rows = t->allocated = rows, t->cols = cols;
    t->cells = calloc((size_t)rows, sizeof(char **));
    for (int r = 0; r < rows; r++)
        t->cells[r] = calloc((size_t)cols, sizeof(char *));
}

static void table_set(struct table *t, int r, int c, struct util_buf *b)
{
    free(t->cells[r][c]);
    t->cells[r][c] = util_buf_detach(b);
}

static void table_sets(struct table *t, int r, int c, const char *s)
{
    free(t->cells[r][c]);
    t->cells[r][c] = strdup(s ? s : "");
}

static void escape_html(struct util_buf *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            util_buf_adds(out, "&lt;");
        else if (*s == '>')
            util_buf_adds(out, "&gt;");
        else if (*s == '&')
            util_buf_adds(out, "&amp;");
        else
            util_buf_add(out, s, 1);
    }
}

static void table_render(struct table *t, enum format f, struct util_buf *out)
{
    int *width = calloc((size_t)t->cols, sizeof(int));
    for (int r = 0; r < t->rows; r++)
        for (int c = 0; c < t->cols; c++) {
            int w = (int)strlen(t->cells[r][c] ? t->cells[r][c] : "");
            width[c] = w > width[c] ? w : width[c];
        }
    if (f == HTML)
        util_buf_adds(out, "<table>\n");
    for (int r = 0; r < t->rows; r++) {
        if (f == HTML)
            util_buf_adds(out, "<tr>");
        for (int c = 0; c < t->cols; c++) {
            const char *s = t->cells[r][c] ? t->cells[r][c] : "";
            if (f == HTML) {
                util_buf_adds(out, r ? "<td>" : "<th>");
                escape_html(out, s);
                util_buf_adds(out, r ? "</td>" : "</th>");
            } else if (f == MD) {
                util_buf_addf(out, "| %s ", s);
            } else {
                util_buf_addf(out, "%-*s  ", width[c], s);
            }
        }
        util_buf_adds(out, f == HTML ? "</tr>\n" : f == MD ? "|\n" : "\n");
        if (r == 0 && f == MD) {
            for (int c = 0; c < t->cols; c++)
                util_buf_adds(out, "|---");
            util_buf_adds(out, "|\n");
        }
    }
    if (f == HTML)
        util_buf_adds(out, "</table>\n");
    free(width);
}

static void table_free(struct table *t)
{
    for (int r = 0; r < t->allocated; r++) {
        for (int c = 0; c < t->cols; c++)
            free(t->cells[r][c]);
        free(t->cells[r]);
    }
    free(t->cells);
}

static void hardware_table(const struct compare_input *in, int n, enum format f,
                           struct util_buf *out)
{
    const char *head[] = {"input",     "source", "class",        "GPUs",
                          "GPU links", "NICs",   "CPU and NUMA", "best configuration"};
    int cols = 8, priced = 0;
    for (int i = 0; i < n; i++)
        priced |= in[i].price > 0;
    struct table t;
    table_init(&t, n + 1, cols + 2 * priced);
    for (int c = 0; c < cols; c++)
        table_sets(&t, 0, c, head[c]);
    if (priced) {
        table_sets(&t, 0, cols, "price");
        table_sets(&t, 0, cols + 1, "best busbw at the largest size per unit of price");
    }
    for (int i = 0; i < n; i++) {
        struct util_buf b = UTIL_BUF_INIT;
        table_sets(&t, i + 1, 0, in[i].label);
        const char *backend =
            json_string_value(json_object_get(json_object_get(in[i].profile, "sweep"), "backend"));
        if (predicted(&in[i]))
            util_buf_addf(&b, "%s %s (PREDICTED by the topotune model)", in[i].kind, in[i].path);
        else
            util_buf_addf(&b, "%s %s (measured, %s backend)", in[i].kind, in[i].path,
                          backend ? backend : "?");
        table_set(&t, i + 1, 1, &b);
        table_sets(&t, i + 1, 2, json_string_value(json_object_get(in[i].profile, "class")));
        gpus(&in[i], &b);
        table_set(&t, i + 1, 3, &b);
        gpu_link(&in[i], &b);
        table_set(&t, i + 1, 4, &b);
        nics(&in[i], &b);
        table_set(&t, i + 1, 5, &b);
        numa(&in[i], &b);
        table_set(&t, i + 1, 6, &b);
        best_config(&in[i], &b);
        table_set(&t, i + 1, 7, &b);
        if (priced && in[i].price > 0) {
            const json_t *sizes = best_sizes(&in[i]);
            double bw = json_number_value(
                json_object_get(json_array_get(sizes, json_array_size(sizes) - 1), "busbw"));
            util_buf_addf(&b, "%g", in[i].price);
            table_set(&t, i + 1, cols, &b);
            number(&b, json_array_size(sizes) ? bw / in[i].price : -1, predicted(&in[i]));
            table_set(&t, i + 1, cols + 1, &b);
        }
    }
    table_render(&t, f, out);
    table_free(&t);
}

static void busbw_table(const struct compare_input *in, int n, enum format f, struct util_buf *out)
{
    json_int_t sizes[32];
    int ns = table_sizes(in, n, sizes, 32);
    struct table t;
    table_init(&t, ns + 1, 1 + 2 * n);
    table_sets(&t, 0, 0, "size");
    for (int i = 0; i < n; i++) {
        struct util_buf b = UTIL_BUF_INIT;
        util_buf_addf(&b, "%s best%s", in[i].label, predicted(&in[i]) ? " (predicted)" : "");
        table_set(&t, 0, 1 + 2 * i, &b);
        util_buf_addf(&b, "%s defaults%s", in[i].label, predicted(&in[i]) ? " (predicted)" : "");
        table_set(&t, 0, 2 + 2 * i, &b);
    }
    for (int r = 0; r < ns; r++) {
        char label[32];
        human_size(sizes[r], label, sizeof(label));
        table_sets(&t, r + 1, 0, label);
        for (int i = 0; i < n; i++) {
            struct util_buf b = UTIL_BUF_INIT;
            number(&b, busbw_at(best_sizes(&in[i]), sizes[r]), predicted(&in[i]));
            table_set(&t, r + 1, 1 + 2 * i, &b);
            baseline_cell(&b, &in[i], sizes[r]);
            table_set(&t, r + 1, 2 + 2 * i, &b);
        }
    }
    table_render(&t, f, out);
    table_free(&t);
}

typedef void (*fact_fn)(const struct compare_input *in, struct util_buf *out);

/* What differs between each input and the first: GPU model, links, NICs, NUMA layout. */
static void differences(const struct compare_input *in, int n, enum format f, struct util_buf *out)
{
    const char *names[] = {"GPUs", "GPU links", "NICs", "CPU and NUMA"};
    fact_fn facts[] = {gpus, gpu_link, nics, numa};
    struct table t;
    table_init(&t, 1 + (n - 1) * 4, 4);
    table_sets(&t, 0, 0, "input");
    table_sets(&t, 0, 1, "what");
    table_sets(&t, 0, 2, in[0].label);
    table_sets(&t, 0, 3, "this input");
    int rows = 1;
    for (int i = 1; i < n; i++)
        for (int k = 0; k < 4; k++) {
            struct util_buf a = UTIL_BUF_INIT, b = UTIL_BUF_INIT;
            facts[k](&in[0], &a);
            facts[k](&in[i], &b);
            if (strcmp(util_buf_str(&a), util_buf_str(&b))) {
                table_sets(&t, rows, 0, in[i].label);
                table_sets(&t, rows, 1, names[k]);
                table_set(&t, rows, 2, &a);
                table_set(&t, rows, 3, &b);
                rows++;
            }
            util_buf_release(&a);
            util_buf_release(&b);
        }
    t.rows = rows;
    if (rows == 1)
        util_buf_adds(out, "(no difference in GPUs, links, NICs or NUMA layout)\n");
    else
        table_render(&t, f, out);
    table_free(&t);
}

static const char legend[] =
    "Numbers marked predicted come from the topotune model (link rates and NCCL's constants), "
    "not from a measurement; measured numbers are busbw as nccl-tests defines it.";

static void sections(const struct compare_input *in, int n, enum format f, struct util_buf *out)
{
    const char *h = f == HTML ? "<h2>" : f == MD ? "## " : "== ";
    const char *e = f == HTML ? "</h2>\n" : "\n\n";
    util_buf_addf(out, "%sHardware and best configuration%s", h, e);
    hardware_table(in, n, f, out);
    util_buf_addf(out, "\n%sbusbw per size (GB/s)%s", h, e);
    busbw_table(in, n, f, out);
    if (n > 1) {
        util_buf_addf(out, "\n%sDifferences from %s%s", h, in[0].label, e);
        differences(in, n, f, out);
    }
}

void compare_print_text(const struct compare_input *in, int n, FILE *out)
{
    struct util_buf b = UTIL_BUF_INIT;
    util_buf_addf(&b, "%s\n\n", legend);
    sections(in, n, TEXT, &b);
    fputs(util_buf_str(&b), out);
    util_buf_release(&b);
}

int compare_write_md(const struct compare_input *in, int n, const char *path)
{
    struct util_buf b = UTIL_BUF_INIT;
    util_buf_addf(&b, "# topotune compare\n\n%s\n\n", legend);
    sections(in, n, MD, &b);
    int rc = util_file_write_atomic(path, b.data, b.len);
    util_buf_release(&b);
    return rc;
}

/* The plot ranges: latency-bound, the middle, and bandwidth-bound sizes. */
static const struct {
    size_t min, max;
    const char *title;
} ranges[] = {
    {0, 64 << 10, "small messages (up to 64 KiB): latency"},
    {64 << 10, 16 << 20, "medium messages (64 KiB to 16 MiB)"},
    {16 << 20, (size_t)1 << 40, "large messages (16 MiB and up): bandwidth"},
};

static int range_has_data(const struct compare_input *in, int n, size_t min, size_t max)
{
    for (int i = 0; i < n; i++) {
        const json_t *lists[] = {
            best_sizes(&in[i]),
            json_object_get(json_object_get(in[i].profile, "baseline"), "per_size")};
        for (int l = 0; l < 2; l++) {
            size_t k;
            json_t *r;
            json_array_foreach(lists[l], k, r)
            {
                json_int_t s = json_integer_value(json_object_get(r, "size"));
                if (s >= (json_int_t)min && s <= (json_int_t)max)
                    return 1;
            }
        }
    }
    return 0;
}

int compare_write_html(const struct compare_input *in, int n, const char *path)
{
    struct util_buf b = UTIL_BUF_INIT;
    util_buf_adds(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                      "<title>topotune compare</title>\n<style>\n"
                      "body{font-family:sans-serif;margin:2em;color:#222}"
                      "table{border-collapse:collapse;margin:1em 0}"
                      "td,th{border:1px solid #bbb;padding:4px 8px;text-align:left;"
                      "vertical-align:top}th{background:#eee}"
                      ".plot{margin:1em 0}.note{color:#555}\n"
                      "</style></head><body>\n<h1>topotune compare</h1>\n<p class=\"note\">");
    escape_html(&b, legend);
    util_buf_adds(
        &b, " Solid lines: best configuration; dashed: the defaults (nothing set); hollow points "
            "and the word predicted: the model's.</p>\n");
    sections(in, n, HTML, &b);
    util_buf_adds(&b, "<h2>Plots</h2>\n");
    for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++) {
        if (!range_has_data(in, n, ranges[r].min, ranges[r].max))
            continue;
        const char *why = NULL;
        char *svg = compare_plot_svg(in, n, ranges[r].min, ranges[r].max, ranges[r].title, &why);
        if (!svg) {
            util_buf_addf(&b, "<p class=\"note\">Plot of %s skipped: %s.</p>\n", ranges[r].title,
                          why);
            continue;
        }
        const char *start = strstr(svg, "<svg"); /* no XML prolog inside HTML */
        util_buf_addf(&b, "<div class=\"plot\">\n%s</div>\n", start ? start : svg);
        free(svg);
    }
    util_buf_adds(&b, "</body></html>\n");
    int rc = util_file_write_atomic(path, b.data, b.len);
    util_buf_release(&b);
    return rc;
}
