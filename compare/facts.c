/* SPDX-License-Identifier: MIT */
/*
 * Facts of one input, read from its profile's content as text: what the tables
 * show and what the differences compare. Fields a profile lacks read as "?"
 * rather than failing: profiles written by other versions stay comparable.
 */
#include "compare/internal.h"
#include "gen/gen.h"
#include "model/model.h"
#include "util/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const json_t *hw(const struct compare_input *in)
{
    return json_object_get(in->profile, "hardware");
}

int compare_predicted(const struct compare_input *in)
{
    return json_is_true(json_object_get(in->profile, "predicted"));
}

double compare_per_price(const struct compare_input *in, double bw)
{
    json_int_t gpus = json_integer_value(json_object_get(hw(in), "gpus"));
    if (in->price <= 0 || gpus <= 0 || !(bw > 0))
        return -1;
    return bw / (in->price / (double)gpus) * 1000;
}

void compare_gpus(const struct compare_input *in, struct util_buf *out)
{
    json_int_t n = json_integer_value(json_object_get(hw(in), "gpus"));
    if (!n) {
        util_buf_adds(out, "no GPU");
        return;
    }
    util_buf_addf(out, "%lld x %s", (long long)n, util_json_str(hw(in), "gpu_model", "?"));
    struct gen_shape
        shape; /* a sweep's or profile's nodes are its sweep's, a prediction's its own */
    gen_shape(in->profile, &shape);
    if (shape.nodes > 1)
        util_buf_addf(out, " per node, %lld nodes", shape.nodes);
    /* a rack's trays joined by NVLink (GB200 NVL72: 72 GPUs) are not nodes of 4 on a network:
     * a rack and its trays apart once showed "no difference" */
    json_int_t domain = json_integer_value(json_object_get(hw(in), "nvlink_domain"));
    if (domain > n)
        util_buf_addf(out, ", NVLink domain of %lld GPUs", (long long)domain);
}

/* Counts of each matrix letter over GPU pairs (each pair once): {"NV18": 28}. */
static json_t *pair_counts(const struct compare_input *in)
{
    const json_t *m = json_object_get(hw(in), "matrix"), *labels = json_object_get(m, "labels");
    json_t *counts = json_object();
    size_t i, j;
    json_t *row, *cell;
    json_array_foreach(json_object_get(m, "rows"), i, row)
        json_array_foreach(row, j, cell) {
            const char *a = json_string_value(json_array_get(labels, i)),
                       *b = json_string_value(json_array_get(labels, j)),
                       *v = json_string_value(cell);
            if (j <= i || !a || !b || !v || strncmp(a, "GPU", 3) || strncmp(b, "GPU", 3))
                continue;
            json_object_set_new(counts, v,
                                json_integer(json_integer_value(json_object_get(counts, v)) + 1));
        }
    return counts;
}

void compare_gpu_pairs(const struct compare_input *in, struct util_buf *out)
{
    json_t *counts = pair_counts(in);
    const char *k;
    json_t *v;
    size_t start = out->len;
    /* by letter, for a stable text: json objects keep insertion order, so sort the keys */
    const char *keys[64];
    size_t n = 0;
    json_object_foreach(counts, k, v)
        if (n < 64)
            keys[n++] = k;
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0 && strcmp(keys[b - 1], keys[b]) > 0; b--) {
            const char *t = keys[b];
            keys[b] = keys[b - 1], keys[b - 1] = t;
        }
    for (size_t i = 0; i < n; i++)
        util_buf_addf(out, "%s%lld x %s", out->len > start ? ", " : "",
                      (long long)json_integer_value(json_object_get(counts, keys[i])), keys[i]);
    if (out->len == start)
        util_buf_adds(out, "-");
    json_decref(counts);
}

void compare_gpu_links(const struct compare_input *in, struct util_buf *out)
{
    json_t *counts = pair_counts(in), *v;
    const char *k, *best = NULL;
    json_int_t best_n = 0;
    json_object_foreach(counts, k, v)
        if (json_integer_value(v) > best_n)
            best = k, best_n = json_integer_value(v);
    /* links of several kinds are each counted: POWER8's two NV2 pairs, and NVLink-bridged PCIe
     * cards, read as "SYS", their most common kind */
    if (json_object_size(counts) > 1)
        compare_gpu_pairs(in, out);
    else
        util_buf_addf(out, "%s", best ? best : "-");
    long long nvs = json_integer_value(json_object_get(hw(in), "nvswitches"));
    if (nvs > 0)
        util_buf_addf(out, " (%lld NVSwitch)", nvs);
    json_decref(counts);
}

/* "8 x ib:400" from the class key's NIC list ("eth:-1", speed unknown, reads "eth:?"). */
void compare_nics(const struct compare_input *in, struct util_buf *out)
{
    const json_t *list = json_object_get(json_object_get(hw(in), "class_key"), "nics");
    size_t i, j, start = out->len;
    json_t *v;
    if (!json_array_size(list)) {
        util_buf_addf(out, "%lld", (long long)json_integer_value(json_object_get(hw(in), "nics")));
        return;
    }
    json_array_foreach(list, i, v) {
        int seen = 0, count = 0;
        for (j = 0; j < i; j++)
            seen |= json_equal(json_array_get(list, j), v);
        if (seen)
            continue;
        for (j = 0; j < json_array_size(list); j++)
            count += json_equal(json_array_get(list, j), v);
        const char *nic = json_string_value(v) ? json_string_value(v) : "?";
        const char *unknown = strstr(nic, ":-1");
        util_buf_addf(out, "%s%d x %.*s%s", out->len > start ? ", " : "", count,
                      unknown ? (int)(unknown - nic) : (int)strlen(nic), nic, unknown ? ":?" : "");
    }
}

void compare_numa(const struct compare_input *in, struct util_buf *out)
{
    const json_t *cpu = json_object_get(hw(in), "cpu");
    util_buf_addf(out, "%lld socket(s), %lld NUMA node(s)",
                  (long long)json_integer_value(json_object_get(cpu, "sockets")),
                  (long long)json_integer_value(json_object_get(cpu, "numa_nodes")));
}

void compare_best(const struct compare_input *in, struct util_buf *out)
{
    const json_t *vars = json_object_get(in->profile, "variables"), *v;
    size_t i;
    json_array_foreach(vars, i, v)
        util_buf_addf(out, "%s%s=%s (%s)", i ? " " : "", util_json_str(v, "name", "?"),
                      util_json_str(v, "value", "?"), util_json_str(v, "role", "?"));
    if (!json_array_size(vars))
        util_buf_adds(out, util_json_str(in->profile, "summary", "?"));
}

void compare_evidence(const struct compare_input *in, struct util_buf *out)
{
    const json_t *vars = json_object_get(in->profile, "variables"), *v;
    const json_t *w = json_object_get(in->profile, "winner");
    size_t i;
    json_array_foreach(vars, i, v)
        util_buf_addf(out, "%s%s: %s", i ? "; " : "", util_json_str(v, "name", "?"),
                      util_json_str(v, "evidence", "?"));
    if (json_is_object(w))
        util_buf_addf(out, "%s%lld run(s), cv %.3f", out->len ? "; " : "",
                      (long long)json_integer_value(json_object_get(w, "runs")),
                      json_number_value(json_object_get(w, "cv")));
    if (!out->len)
        util_buf_adds(out, "-");
    else if (compare_predicted(in))
        util_buf_adds(out, " (predicted)");
}

const json_t *compare_default_sizes(const struct compare_input *in)
{
    return json_object_get(json_object_get(in->profile, "baseline"), "per_size");
}

const json_t *compare_best_sizes(const struct compare_input *in)
{
    const json_t *w = json_object_get(in->profile, "winner");
    return json_is_object(w) ? json_object_get(w, "per_size") : compare_default_sizes(in);
}

double compare_busbw_at(const json_t *per_size, json_int_t size)
{
    size_t i;
    json_t *r;
    json_array_foreach(per_size, i, r) {
        if (json_integer_value(json_object_get(r, "size")) == size)
            return json_number_value(json_object_get(r, "busbw"));
    }
    return -1;
}

double compare_time_us(const struct compare_input *in, double busbw, json_int_t size)
{
    const json_t *p = in->profile;
    const json_t *g = json_object_get(json_object_get(p, "hardware"), "gpus");
    /* a count (what gen writes); a list in older profiles */
    json_int_t gpus = json_is_integer(g) ? json_integer_value(g) : (json_int_t)json_array_size(g);
    struct gen_shape shape; /* the ranks measured: a sweep's own, not a rank per GPU of a node */
    gen_shape(p, &shape);
    double n = shape.ranks > 0 ? (double)shape.ranks : (double)(gpus > 0 ? gpus : 1);
    double algbw = n > 1 ? busbw * n / (2.0 * (n - 1)) : busbw;
    double us = busbw > 0 && algbw > 0 ? (double)size / (algbw * 1e3) : -1;
    /* a busbw of 5e-324 made a time of inf, 1e-310 one whose band's end was: past 10^12 us (11
     * days a call) a time is no measurement */
    return isfinite(us) && us < 1e12 ? us : -1;
}

/* [low, high] of a predicted value v with band b (a time: v / high to v / low), or null for no v
 * above 0. */
static json_t *band_json(double v, struct model_band b, int is_time)
{
    if (!(v > 0))
        return json_null();
    return is_time ? json_pack("[f,f]", v / b.high, v / b.low)
                   : json_pack("[f,f]", v * b.low, v * b.high);
}

json_t *compare_busbw_band(double busbw, json_int_t size)
{
    return band_json(busbw, model_band_at((size_t)size), 0);
}

/* [{size, busbw_band}] of a per-size list's busbw values above 0. */
static json_t *bands_of(const json_t *per_size)
{
    json_t *rows = json_array(), *r;
    size_t i;
    json_array_foreach(per_size, i, r) {
        json_int_t size = json_integer_value(json_object_get(r, "size"));
        double bw = json_number_value(json_object_get(r, "busbw"));
        if (size > 0 && bw > 0)
            json_array_append_new(rows, json_pack("{s:I,s:o}", "size", size, "busbw_band",
                                                  compare_busbw_band(bw, size)));
    }
    return rows;
}

double compare_workload_objective(const struct compare_input *in, const char *which)
{
    const json_t *p = in->profile, *w = json_object_get(p, which);
    if (!json_object_get(p, "workload") || !json_is_object(w))
        return -1;
    return json_number_value(json_object_get(w, "objective"));
}

struct model_band compare_evidence_band(const json_t *e)
{
    return model_band_for(model_coll_parse(json_string_value(json_object_get(e, "collective"))),
                          (size_t)json_integer_value(json_object_get(e, "size")));
}

struct model_band compare_mix_band(const struct compare_input *in)
{
    struct model_band band = {0, 0, 0};
    size_t k;
    json_t *e;
    json_array_foreach(json_object_get(in->profile, "evidence"), k, e)
        band =
            band.rows ? model_band_wider(band, compare_evidence_band(e)) : compare_evidence_band(e);
    return band.rows ? band : model_band_at(SIZE_MAX);
}

json_t *compare_workload_bands_json(const struct compare_input *in)
{
    if (!compare_predicted(in) || !json_object_get(in->profile, "workload"))
        return NULL;
    struct model_band mix = compare_mix_band(in);
    double chosen = compare_workload_objective(in, "winner");
    chosen = chosen >= 0 ? chosen : compare_workload_objective(in, "baseline");
    json_t *rows = json_array(), *e;
    size_t k;
    json_array_foreach(json_object_get(in->profile, "evidence"), k, e) {
        struct model_band b = compare_evidence_band(e);
        json_array_append_new(
            rows,
            /* every row, null for what a hand-edited profile left out: rows stay aligned */
            json_pack("{s:O?,s:O?,s:o,s:o}", "collective", json_object_get(e, "collective"), "size",
                      json_object_get(e, "size"), "time_us_band",
                      band_json(json_number_value(json_object_get(e, "time_us")), b, 1),
                      "baseline_time_us_band",
                      band_json(json_number_value(json_object_get(e, "baseline_time_us")), b, 1)));
    }
    double per_price = compare_per_price(in, chosen);
    return json_pack("{s:{s:o,s:o},s:o,s:o}", "effective_algbw", "winner",
                     band_json(chosen, mix, 0), "baseline",
                     band_json(compare_workload_objective(in, "baseline"), mix, 0),
                     "per_1000_of_gpu_price", band_json(per_price, mix, 0), "evidence", rows);
}

json_t *compare_bands_json(const struct compare_input *in)
{
    if (!compare_predicted(in))
        return NULL;
    return json_pack("{s:o,s:o}", "winner", bands_of(compare_best_sizes(in)), "baseline",
                     bands_of(compare_default_sizes(in)));
}
