/* SPDX-License-Identifier: MIT */
/*
 * The comparison as text, Markdown and HTML: the same tables everywhere
 * (hardware and best configuration, busbw per size, differences from the first
 * input, each input's GPU/NIC matrix), plus plots in HTML. A predicted number
 * never appears without the word.
 */
#include "compare/internal.h"
#include "model/model.h"
#include "util/file.h"
#include "util/text.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The width of the text report: a 120-column terminal with room to spare. */
#define TEXT_WIDTH 110
/* Sizes below this are shown as time per call (latency decides), the others as busbw. */
#define SMALL_BYTES (1 << 20)

/* v with two decimals (GB/s), or three significant digits (time, per unit of price), as people
 * write numbers (1,370, never 1.37e+03); a predicted number says so, with the band a healthy
 * system measures in (model_band_for the collective and size; a time's the other way round). */
static void number(struct util_buf *out, double v, int significant, int predicted,
                   struct model_band band, int is_time)
{
    if (!(v >= 0)) {
        util_buf_adds(out, "-");
        return;
    }
    void (*put)(struct util_buf *, double, int) = significant ? util_text_number : util_text_fixed;
    int digits = significant ? 3 : 2;
    put(out, v, digits);
    if (!predicted)
        return;
    util_buf_adds(out, " (");
    put(out, is_time ? v / band.high : v * band.low, digits);
    util_buf_adds(out, "-");
    put(out, is_time ? v / band.low : v * band.high, digits);
    util_buf_adds(out, ") predicted");
}

/* A cell of the size tables: time per call in us below SMALL_BYTES, else busbw in GB/s. */
static void size_cell(struct util_buf *out, const struct compare_input *in, const json_t *sizes,
                      json_int_t size)
{
    double bw = compare_busbw_at(sizes, size);
    number(out, size < SMALL_BYTES ? compare_time_us(in, bw, size) : bw, size < SMALL_BYTES,
           compare_predicted(in), model_band_at((size_t)size), size < SMALL_BYTES);
}

static void wrap(struct util_buf *out, const char *first, const char *indent, const char *s)
{
    util_text_wrap(out, first, indent, s, TEXT_WIDTH);
}

/* The defaults' cell: as size_cell, or how they failed when they never ran ok. */
static void default_cell(struct util_buf *out, const struct compare_input *in, json_int_t size)
{
    const json_t *b = json_object_get(in->profile, "baseline");
    if (json_array_size(compare_default_sizes(in))) {
        size_cell(out, in, compare_default_sizes(in), size);
        return;
    }
    const char *how = json_object_iter_key(json_object_iter(json_object_get(b, "outcomes")));
    util_buf_addf(out, "fails (%s)%s", how ? how : "never ran",
                  compare_predicted(in) ? " predicted" : "");
}

static int by_size(const void *a, const void *b)
{
    json_int_t x = *(const json_int_t *)a, y = *(const json_int_t *)b;
    return x < y ? -1 : x > y;
}

/* Every size any input has, ascending; thinned evenly (the largest kept) past max rows. */
static int table_sizes(const struct compare_input *in, int n, json_int_t *sizes, int max)
{
    json_int_t all[512] = {0};
    int count = 0;
    for (int i = 0; i < n; i++) {
        const json_t *lists[] = {compare_best_sizes(&in[i]), compare_default_sizes(&in[i])};
        for (int l = 0; l < 2; l++) {
            size_t k;
            json_t *r;
            json_array_foreach(lists[l], k, r) {
                json_int_t s = json_integer_value(json_object_get(r, "size"));
                int seen = 0;
                for (int j = 0; j < count && !seen; j++)
                    seen = all[j] == s;
                if (!seen && count < 512)
                    all[count++] = s;
            }
        }
    }
    qsort(all, (size_t)count, sizeof(all[0]), by_size);
    int step = (count + max - 1) / max, out = 0;
    step = step < 1 ? 1 : step;
    for (int j = (count - 1) % step; j < count; j += step) /* so that the largest is kept */
        sizes[out++] = all[j];
    return out;
}

/* The largest size every input has measured or predicted for its best, or -1. */
static json_int_t common_size(const struct compare_input *in, int n)
{
    json_int_t sizes[512];
    int count = table_sizes(in, n, sizes, 512);
    for (int j = count - 1; j >= 0; j--) {
        int everywhere = 1;
        for (int i = 0; i < n && everywhere; i++)
            everywhere = compare_busbw_at(compare_best_sizes(&in[i]), sizes[j]) >= 0;
        if (everywhere)
            return sizes[j];
    }
    return -1;
}

static void human_size(json_int_t s, char *out, size_t len)
{
    const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (s >= 1024 && s % 1024 == 0 && u < 4)
        s /= 1024, u++;
    snprintf(out, len, "%lld %s", (long long)s, units[u]);
}

typedef void (*fact_fn)(const struct compare_input *in, struct util_buf *out);

/* busbw of an input's best at size at (or at its largest size when at < 0). */
static double best_at(const struct compare_input *in, json_int_t at)
{
    const json_t *sizes = compare_best_sizes(in);
    if (!json_array_size(sizes))
        return -1;
    return at > 0 ? compare_busbw_at(sizes, at)
                  : json_number_value(json_object_get(
                        json_array_get(sizes, json_array_size(sizes) - 1), "busbw"));
}

/* What the price is set against, with its band: where the inputs carry a workload, its effective
 * algbw (the chosen configuration's: all_reduce's busbw is not the mix's); else the best busbw at
 * size at. -1: none (never ran). */
static double priced_bw(const struct compare_input *in, json_int_t at, struct model_band *band)
{
    if (json_object_get(in->profile, "workload")) {
        double w = compare_workload_objective(in, "winner");
        w = w >= 0 ? w : compare_workload_objective(in, "baseline");
        *band = compare_mix_band(in);
        return w > 0 ? w : -1;
    }
    *band = model_band_at(at > 0 ? (size_t)at : SIZE_MAX);
    return best_at(in, at);
}

/* The narrow price table of the text report: price per node, GB/s per 1,000 of a GPU's share. */
static void price_table(const struct compare_input *in, int n, json_int_t at, enum compare_format f,
                        struct util_buf *out)
{
    char size[32];
    human_size(at, size, sizeof(size));
    struct compare_table t;
    struct util_buf b = UTIL_BUF_INIT;
    compare_table_init(&t, n + 1, 3);
    compare_table_sets(&t, 0, 0, "input");
    compare_table_sets(&t, 0, 1, "price per node");
    if (n && json_object_get(in[0].profile, "workload"))
        util_buf_adds(&b, "GB/s per 1,000 of the price per GPU (the workload's effective algbw)");
    else
        util_buf_addf(&b, "GB/s per 1,000 of the price per GPU (best busbw at %s)",
                      at > 0 ? size : "the largest size");
    compare_table_set(&t, 0, 2, &b);
    for (int i = 0; i < n; i++) {
        compare_table_sets(&t, i + 1, 0, in[i].label);
        if (in[i].price <= 0)
            continue;
        util_text_number(&b, in[i].price, 6);
        compare_table_set(&t, i + 1, 1, &b);
        struct model_band band;
        double bw = priced_bw(&in[i], at, &band);
        number(&b, compare_per_price(&in[i], bw), 1, compare_predicted(&in[i]), band, 0);
        compare_table_set(&t, i + 1, 2, &b);
    }
    util_buf_adds(out, "\n");
    compare_table_render(&t, f, out);
    compare_table_free(&t);
}

static void source(const struct compare_input *in, struct util_buf *out)
{
    struct util_buf path = UTIL_BUF_INIT;
    const char *shown = util_text_shown(&path, in->path);
    const char *backend =
        json_string_value(json_object_get(json_object_get(in->profile, "sweep"), "backend"));
    if (compare_predicted(in))
        util_buf_addf(out, "%s %s (PREDICTED by the topotune model)", in->kind, shown);
    else
        util_buf_addf(out, "%s %s (measured, %s backend)", in->kind, shown,
                      backend ? backend : "?");
    util_buf_release(&path);
}

static void class_id(const struct compare_input *in, struct util_buf *out)
{
    const char *c = json_string_value(json_object_get(in->profile, "class"));
    util_buf_adds(out, c ? c : "?");
}

static void hardware_table(const struct compare_input *in, int n, enum compare_format f,
                           struct util_buf *out)
{
    const char *head[] = {"input",     "source", "class",        "GPUs",
                          "GPU links", "NICs",   "CPU and NUMA", "best configuration",
                          "evidence"};
    fact_fn facts[] = {NULL,         source,       class_id,     compare_gpus,    compare_gpu_links,
                       compare_nics, compare_numa, compare_best, compare_evidence};
    int cols = 9, priced = 0;
    for (int i = 0; i < n; i++)
        priced |= in[i].price > 0;
    json_int_t at = priced ? common_size(in, n) : -1;
    if (f == COMPARE_TEXT) { /* one record per input: a table of 9 facts is 350 columns */
        struct util_buf b = UTIL_BUF_INIT;
        for (int i = 0; i < n; i++) {
            util_buf_addf(out, "%s%s\n", i ? "\n" : "", in[i].label);
            for (int c = 1; c < cols; c++) {
                char first[64];
                facts[c](&in[i], &b);
                snprintf(first, sizeof(first), "  %-19s", head[c]);
                wrap(out, first, "                     ", util_buf_str(&b));
                util_buf_release(&b);
            }
            if (in[i].price > 0) {
                util_text_number(&b, in[i].price, 6);
                util_buf_adds(&b, " per node");
                wrap(out, "  price              ", "", util_buf_str(&b));
                util_buf_release(&b);
            }
        }
        if (priced)
            price_table(in, n, at, f, out);
        return;
    }
    struct compare_table t;
    compare_table_init(&t, n + 1, cols + 2 * priced);
    for (int c = 0; c < cols; c++)
        compare_table_sets(&t, 0, c, head[c]);
    struct util_buf b = UTIL_BUF_INIT;
    if (priced) {
        char size[32];
        human_size(at, size, sizeof(size));
        compare_table_sets(&t, 0, cols, "price per node");
        if (n && json_object_get(in[0].profile, "workload"))
            util_buf_adds(&b, "the workload's effective algbw, GB/s per 1,000 of the price per "
                              "GPU");
        else
            util_buf_addf(&b, "best busbw at %s, GB/s per 1,000 of the price per GPU",
                          at > 0 ? size : "each input's largest size (no size common to all)");
        compare_table_set(&t, 0, cols + 1, &b);
    }
    for (int i = 0; i < n; i++) {
        compare_table_sets(&t, i + 1, 0, in[i].label);
        for (int c = 1; c < cols; c++) {
            facts[c](&in[i], &b);
            compare_table_set(&t, i + 1, c, &b);
        }
        if (priced && in[i].price > 0) {
            struct model_band band;
            double bw = priced_bw(&in[i], at, &band);
            util_text_number(&b, in[i].price, 6);
            compare_table_set(&t, i + 1, cols, &b);
            number(&b, compare_per_price(&in[i], bw), 1, compare_predicted(&in[i]), band, 0);
            compare_table_set(&t, i + 1, cols + 1, &b);
        }
    }
    compare_table_render(&t, f, out);
    compare_table_free(&t);
}

/* Per size, best and defaults of inputs [first, first + n): time per call below SMALL_BYTES,
 * busbw from there on. */
static void size_table(const struct compare_input *in, int first, int n, const json_int_t *sizes,
                       int ns, enum compare_format f, struct util_buf *out)
{
    struct compare_table t;
    struct util_buf b = UTIL_BUF_INIT;
    compare_table_init(&t, ns + 1, 1 + 2 * n);
    compare_table_sets(&t, 0, 0, "size");
    for (int i = first; i < first + n; i++) {
        const char *p = compare_predicted(&in[i]) ? " (predicted)" : "";
        util_buf_addf(&b, "%s best%s", in[i].label, p);
        compare_table_set(&t, 0, 1 + 2 * (i - first), &b);
        util_buf_addf(&b, "%s defaults%s", in[i].label, p);
        compare_table_set(&t, 0, 2 + 2 * (i - first), &b);
    }
    for (int r = 0; r < ns; r++) {
        char label[48];
        human_size(sizes[r], label, sizeof(label));
        strcat(label, sizes[r] < SMALL_BYTES ? " (us)" : " (GB/s)");
        compare_table_sets(&t, r + 1, 0, label);
        for (int i = first; i < first + n; i++) {
            size_cell(&b, &in[i], compare_best_sizes(&in[i]), sizes[r]);
            compare_table_set(&t, r + 1, 1 + 2 * (i - first), &b);
            default_cell(&b, &in[i], sizes[r]);
            compare_table_set(&t, r + 1, 2 + 2 * (i - first), &b);
        }
    }
    compare_table_render(&t, f, out);
    compare_table_free(&t);
}

/* Text: one table per input (a column pair per input would outgrow the terminal); Markdown and
 * HTML: one table, a column pair per input. */
static void busbw_table(const struct compare_input *in, int n, enum compare_format f,
                        struct util_buf *out)
{
    json_int_t sizes[48]; /* 8 B to 1 TiB in steps of 2 fits: thinning is for odd spaces */
    int ns = table_sizes(in, n, sizes, 48);
    if (f != COMPARE_TEXT) {
        size_table(in, 0, n, sizes, ns, f, out);
        return;
    }
    for (int i = 0; i < n; i++) {
        util_buf_addf(out, "%s%s\n", i ? "\n" : "", in[i].label);
        size_table(in, i, 1, sizes, ns, f, out);
    }
}

/* What differs between each input and the first: GPUs, links, pairs, NICs, NUMA layout. */
static void differences(const struct compare_input *in, int n, enum compare_format f,
                        struct util_buf *out)
{
    const char *names[] = {"GPUs", "GPU links", "GPU pairs (matrix)", "NICs", "CPU and NUMA"};
    fact_fn facts[] = {compare_gpus, compare_gpu_links, compare_gpu_pairs, compare_nics,
                       compare_numa};
    const int nfacts = 5;
    struct compare_table t;
    compare_table_init(&t, 1 + (n - 1) * nfacts, 4);
    compare_table_sets(&t, 0, 0, "input");
    compare_table_sets(&t, 0, 1, "what");
    compare_table_sets(&t, 0, 2, in[0].label);
    compare_table_sets(&t, 0, 3, "this input");
    int rows = 1;
    for (int i = 1; i < n; i++)
        for (int k = 0; k < nfacts; k++) {
            struct util_buf a = UTIL_BUF_INIT, b = UTIL_BUF_INIT;
            facts[k](&in[0], &a);
            facts[k](&in[i], &b);
            if (strcmp(util_buf_str(&a), util_buf_str(&b))) {
                compare_table_sets(&t, rows, 0, in[i].label);
                compare_table_sets(&t, rows, 1, names[k]);
                compare_table_set(&t, rows, 2, &a);
                compare_table_set(&t, rows, 3, &b);
                rows++;
            }
            util_buf_release(&a);
            util_buf_release(&b);
        }
    t.rows = rows;
    if (rows == 1)
        util_buf_adds(out, "(no difference in GPUs, links, NICs or NUMA layout)\n");
    else
        compare_table_render(&t, f, out);
    compare_table_free(&t);
}

/* One input's GPU/NIC matrix, as nvidia-smi topo -m prints it. */
static void matrix(const struct compare_input *in, enum compare_format f, struct util_buf *out)
{
    const json_t *m = json_object_get(json_object_get(in->profile, "hardware"), "matrix");
    const json_t *labels = json_object_get(m, "labels"), *rows = json_object_get(m, "rows");
    size_t n = json_array_size(labels);
    if (!n || json_array_size(rows) != n) {
        util_buf_adds(out, "(no GPU or NIC: no matrix)\n");
        return;
    }
    struct compare_table t;
    compare_table_init(&t, (int)n + 1, (int)n + 1);
    for (size_t i = 0; i < n; i++) {
        compare_table_sets(&t, 0, (int)i + 1, json_string_value(json_array_get(labels, i)));
        compare_table_sets(&t, (int)i + 1, 0, json_string_value(json_array_get(labels, i)));
        for (size_t j = 0; j < n; j++) {
            const char *v = json_string_value(json_array_get(json_array_get(rows, i), j));
            compare_table_sets(&t, (int)i + 1, (int)j + 1, v ? v : "?");
        }
    }
    compare_table_render(&t, f, out);
    compare_table_free(&t);
}

static const char legend[] =
    "Numbers marked predicted come from the topotune model (link rates, NCCL's constants and "
    "parameters calibrated on published measurements), not from a measurement; the range in "
    "brackets after such a number is where 90% of healthy systems measure: the model's error on "
    "published measurements "
    "its calibration never saw (docs/model.md, \"Bands\"). Measured "
    "numbers are busbw and time as nccl-tests define them.";

static void heading(struct util_buf *out, enum compare_format f, const char *text,
                    const char *label)
{
    util_buf_adds(out, f == COMPARE_HTML ? "\n<h2>" : f == COMPARE_MD ? "\n## " : "\n== ");
    compare_escape(out, text, f);
    if (label)
        compare_escape(out, label, f);
    util_buf_adds(out, f == COMPARE_HTML ? "</h2>\n" : "\n\n");
}

/* compare --nodes 1,2,4,...: busbw of NCCL's defaults at one size against the node count, a row
 * per input (text: a row per input and node count, to stay narrow). */
static void scaling_table(const struct compare_input *in, int n, enum compare_format f,
                          struct util_buf *out)
{
    size_t cols = json_array_size(in[0].scaling);
    struct compare_table t;
    struct util_buf b = UTIL_BUF_INIT;
    int text = f == COMPARE_TEXT;
    compare_table_init(&t, text ? n * (int)cols + 1 : n + 1, text ? 3 : (int)cols + 1);
    compare_table_sets(&t, 0, 0, "input");
    if (text) {
        compare_table_sets(&t, 0, 1, "nodes");
        compare_table_sets(&t, 0, 2, "busbw (GB/s)");
    }
    for (size_t k = 0; !text && k < cols; k++) {
        util_buf_addf(
            &b, "%d node(s)",
            (int)json_integer_value(json_object_get(json_array_get(in[0].scaling, k), "nodes")));
        compare_table_set(&t, 0, (int)k + 1, &b);
    }
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < cols; k++) {
            const json_t *r = json_array_get(in[i].scaling, k);
            int row = text ? 1 + i * (int)cols + (int)k : i + 1;
            int col = text ? 2 : (int)k + 1;
            if (text || k == 0)
                compare_table_sets(&t, row, 0, in[i].label);
            if (text) {
                util_buf_addf(&b, "%d", (int)json_integer_value(json_object_get(r, "nodes")));
                compare_table_set(&t, row, 1, &b);
            }
            const char *outcome = json_string_value(json_object_get(r, "outcome"));
            if (outcome) /* a predicted hang or failure: said, not a blank */
                util_buf_addf(&b, "%s predicted", outcome);
            else
                number(&b, json_real_value(json_object_get(r, "busbw")), 0,
                       json_is_true(json_object_get(r, "predicted")),
                       model_band_at((size_t)json_integer_value(json_object_get(r, "size"))), 0);
            compare_table_set(&t, row, col, &b);
        }
    compare_table_render(&t, f, out);
    compare_table_free(&t);
}

/* A workload's effective algbw cell: the number with its band, or, where the configuration never
 * ran the mix (its objective 0: the defaults hang on a stock RTX 4090 box), how its runs ended. */
static void objective_cell(struct util_buf *b, const struct compare_input *in, const char *which,
                           double objective, int pred, struct model_band band)
{
    const json_t *w = json_object_get(in->profile, which);
    const char *verdict = json_string_value(json_object_get(w, "verdict"));
    if (objective == 0 && verdict && strcmp(verdict, "stable")) { /* as default_cell says it */
        const char *how = json_object_iter_key(json_object_iter(json_object_get(w, "outcomes")));
        util_buf_addf(b, "fails (%s)%s", how ? how : "never ran", pred ? " predicted" : "");
        return;
    }
    number(b, objective, 0, pred, band, 0);
}

static void evidence_key(const json_t *e, char *key, size_t len)
{
    snprintf(key, len, "%.32s %" JSON_INTEGER_FORMAT,
             json_string_value(json_object_get(e, "collective")),
             json_integer_value(json_object_get(e, "size")));
}

/* An input's evidence as {"collective size": time_us}, its times that are numbers. */
static json_t *evidence_times(const json_t *ev)
{
    json_t *out = json_object(), *x;
    size_t j;
    char key[64];
    json_array_foreach(ev, j, x) {
        json_t *us = json_object_get(x, "time_us");
        evidence_key(x, key, sizeof(key));
        if (json_is_number(us))
            json_object_set(out, key, us);
    }
    return out;
}

/* The first input's workload, per input: the mix's effective algbw (the chosen configuration's
 * and the defaults'), per 1,000 of the price per GPU, and each (collective, size)'s time per
 * call. */
static void workload_table(const struct compare_input *in, int n, enum compare_format f,
                           struct util_buf *out)
{
    const json_t *ev = json_object_get(in[0].profile, "evidence");
    int rows = 3 + (int)json_array_size(ev);
    struct compare_table t;
    struct util_buf b = UTIL_BUF_INIT;
    compare_table_init(&t, rows + 1, n + 1);
    compare_table_sets(&t, 0, 0, "");
    compare_table_sets(&t, 1, 0, "effective algbw (GB/s), chosen");
    compare_table_sets(&t, 2, 0, "effective algbw (GB/s), NCCL's defaults");
    compare_table_sets(&t, 3, 0, "chosen GB/s per 1,000 of the price per GPU");
    size_t k;
    json_t *e;
    json_array_foreach(ev, k, e) {
        char size[32];
        human_size(json_integer_value(json_object_get(e, "size")), size, sizeof(size));
        const char *coll = json_string_value(json_object_get(e, "collective"));
        util_buf_addf(&b, "%s %s (weight %.2f): us per call", coll ? coll : "?", size,
                      json_number_value(json_object_get(e, "weight")));
        compare_table_set(&t, 4 + (int)k, 0, &b);
    }
    for (int i = 0; i < n; i++) {
        int pred = compare_predicted(&in[i]);
        struct model_band mix = compare_mix_band(&in[i]);
        compare_table_sets(&t, 0, i + 1, in[i].label);
        double chosen = compare_workload_objective(&in[i], "winner");
        const char *which = chosen >= 0 ? "winner" : "baseline";
        chosen = chosen >= 0 ? chosen : compare_workload_objective(&in[i], "baseline");
        objective_cell(&b, &in[i], which, chosen, pred, mix);
        compare_table_set(&t, 1, i + 1, &b);
        objective_cell(&b, &in[i], "baseline", compare_workload_objective(&in[i], "baseline"), pred,
                       mix);
        compare_table_set(&t, 2, i + 1, &b);
        number(&b, compare_per_price(&in[i], chosen), 1, pred, mix, 0);
        compare_table_set(&t, 3, i + 1, &b);
        /* the same (collective, size) in this input's evidence, found by key: a workload of
         * 100,000 entries costs its length, not its square */
        json_t *mine = evidence_times(json_object_get(in[i].profile, "evidence"));
        json_array_foreach(ev, k, e) {
            char key[64];
            evidence_key(e, key, sizeof(key));
            json_t *x = json_object_get(mine, key);
            number(&b, json_is_number(x) ? json_number_value(x) : -1, 1, pred,
                   compare_evidence_band(e), 1);
            compare_table_set(&t, 4 + (int)k, i + 1, &b);
        }
        json_decref(mine);
    }
    util_buf_release(&b);
    compare_table_render(&t, f, out);
    compare_table_free(&t);
}

static void sections(const struct compare_input *in, int n, enum compare_format f,
                     struct util_buf *out)
{
    heading(out, f, "Hardware and best configuration", NULL);
    hardware_table(in, n, f, out);
    if (n && json_object_get(in[0].profile, "workload")) {
        heading(out, f, "The workload: its effective algbw and each (collective, size)", NULL);
        workload_table(in, n, f, out);
    } else {
        heading(out, f, "Per size: time per call (us) below 1 MiB, busbw (GB/s) from 1 MiB", NULL);
        busbw_table(in, n, f, out);
    }
    if (n && in[0].scaling) {
        char size[32], title[128];
        human_size(json_integer_value(json_object_get(json_array_get(in[0].scaling, 0), "size")),
                   size, sizeof(size));
        snprintf(title, sizeof(title), "Scaling: NCCL's defaults at %s by node count", size);
        heading(out, f, title, NULL);
        scaling_table(in, n, f, out);
    }
    if (n > 1) {
        heading(out, f, "Differences from ", in[0].label);
        differences(in, n, f, out);
    }
    for (int i = 0; i < n; i++) {
        heading(out, f, "GPU/NIC matrix of ", in[i].label);
        matrix(&in[i], f, out);
    }
}

void compare_print_text(const struct compare_input *in, int n, FILE *out)
{
    struct util_buf b = UTIL_BUF_INIT;
    wrap(&b, "", "", legend);
    sections(in, n, COMPARE_TEXT, &b);
    fputs(util_buf_str(&b), out);
    util_buf_release(&b);
}

void compare_render_md(const struct compare_input *in, int n, struct util_buf *b)
{
    util_buf_addf(b, "# topotune compare\n\n%s\n", legend);
    sections(in, n, COMPARE_MD, b);
}

/* The plot ranges, half-open: latency-bound, the middle, and bandwidth-bound sizes. */
static const struct {
    size_t min, max;
    const char *title;
} ranges[] = {
    {0, 64 << 10, "small messages (below 64 KiB): time per call (us, log scale)"},
    {64 << 10, 16 << 20, "medium messages (64 KiB to 16 MiB)"},
    {16 << 20, (size_t)1 << 50, "large messages (16 MiB and up): bandwidth"},
};

static int range_has_data(const struct compare_input *in, int n, size_t min, size_t max)
{
    json_int_t sizes[512];
    int count = table_sizes(in, n, sizes, 512);
    for (int k = 0; k < count; k++)
        if (sizes[k] >= (json_int_t)min && sizes[k] < (json_int_t)max)
            return 1;
    return 0;
}

/*
 * An SVG pasted into the page: without its XML prolog, and with its element ids
 * (gnuplot numbers them the same in every plot) made unique by a prefix.
 */
static void inline_svg(struct util_buf *out, const char *svg, int plot)
{
    const char *p = strstr(svg, "<svg");
    for (p = p ? p : svg; *p;) {
        const char *keys[] = {"id='", "id=\"", "href='#", "href=\"#", "url(#"};
        size_t k, len = 0;
        for (k = 0; k < 5; k++)
            if (!strncmp(p, keys[k], strlen(keys[k]))) {
                len = strlen(keys[k]);
                break;
            }
        if (len) {
            util_buf_add(out, p, len);
            util_buf_addf(out, "p%d-", plot);
            p += len;
        } else {
            util_buf_add(out, p++, 1);
        }
    }
}

/* A workload's plots: per collective of the first input's evidence, in its order, the times per
 * call of every input (ids numbered after the size ranges' and the scaling plot's). A profile is
 * untrusted: only the collectives the model knows are drawn, each once. */
static void collective_plots(const struct compare_input *in, int n, struct util_buf *b)
{
    const json_t *ev = n ? json_object_get(in[0].profile, "evidence") : NULL;
    int plot = (int)(sizeof(ranges) / sizeof(ranges[0])) + 1, drawn[MODEL_NCOLLS] = {0};
    size_t k;
    json_t *e;
    json_array_foreach(ev, k, e) {
        const char *c = json_string_value(json_object_get(e, "collective")), *why = NULL;
        int coll = c ? model_coll_parse(c) : -1;
        if (coll < 0 || drawn[coll]++)
            continue;
        c = model_coll_name(coll);
        char t[128];
        snprintf(t, sizeof(t), "%s in the workload: time per call (us, log scale)", c);
        char *svg = compare_plot_collective_svg(in, n, c, t, &why);
        if (!svg) {
            util_buf_addf(b, "<p class=\"note\">Plot of %s skipped: %s.</p>\n", t, why);
            continue;
        }
        util_buf_adds(b, "<div class=\"plot\">\n");
        inline_svg(b, svg, plot++);
        util_buf_adds(b, "</div>\n");
        free(svg);
    }
}

void compare_render_html(const struct compare_input *in, int n, struct util_buf *out)
{
    util_buf_adds(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                       "<title>topotune compare</title>\n<style>\n"
                       "body{font-family:sans-serif;margin:2em;color:#222}"
                       "table{border-collapse:collapse;margin:1em 0}"
                       "td,th{border:1px solid #bbb;padding:4px 8px;text-align:left;"
                       "vertical-align:top}th{background:#eee}"
                       ".plot{margin:1em 0}.note{color:#555}\n"
                       "</style></head><body>\n<h1>topotune compare</h1>\n<p class=\"note\">");
    compare_escape(out, legend, COMPARE_HTML);
    util_buf_adds(
        out, " Solid lines: best configuration; dashed: the defaults (nothing set); hollow points "
             "and the word predicted: the model's, shaded around the best (else the defaults) "
             "where 90% of healthy systems measure.</p>\n");
    sections(in, n, COMPARE_HTML, out);
    util_buf_adds(out, "<h2>Plots</h2>\n");
    for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++) {
        if (!range_has_data(in, n, ranges[r].min, ranges[r].max))
            continue;
        const char *why = NULL;
        char *svg = compare_plot_svg(in, n, ranges[r].min, ranges[r].max, ranges[r].title, &why);
        if (!svg) {
            util_buf_addf(out, "<p class=\"note\">Plot of %s skipped: %s.</p>\n", ranges[r].title,
                          why);
            continue;
        }
        util_buf_adds(out, "<div class=\"plot\">\n");
        inline_svg(out, svg, (int)r);
        util_buf_adds(out, "</div>\n");
        free(svg);
    }
    collective_plots(in, n, out);
    if (n && in[0].scaling) {
        const char *why = NULL, *t = "busbw of NCCL's defaults by node count";
        char *svg = compare_plot_scaling_svg(in, n, t, &why);
        if (svg) {
            util_buf_adds(out, "<div class=\"plot\">\n");
            inline_svg(out, svg, (int)(sizeof(ranges) / sizeof(ranges[0])));
            util_buf_adds(out, "</div>\n");
            free(svg);
        } else {
            util_buf_addf(out, "<p class=\"note\">Plot of %s skipped: %s.</p>\n", t, why);
        }
    }
    util_buf_adds(out, "</body></html>\n");
}
