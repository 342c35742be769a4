/* SPDX-License-Identifier: MIT */
/*
 * The per-size table's rows (docs/design.md, "The per-size table"): per measured size, the
 * algorithm/protocol pair whose stable configuration was fastest there, kept only when it differs
 * from the reference's own pair (NCCL's defaults) and beats the reference's busbw at that size
 * beyond the noise (as the global choice does); adjacent sizes with the same pair merge into one
 * byte range whose ends are the geometric midpoints between measured sizes (sizes grow by a
 * factor: 512 B and 32 KiB meet at 4 KiB, not at 16 KiB).
 */
#include "gen/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One configuration at one size, over its ok full-effort runs. */
struct size_stat {
    int n;
    double mean, cv;
    const char *algo, *proto; /* the table's spellings; NULL when unknown or not the same in all */
    const char *config_id;
};

/* NCCL's names (as the TUNING log and the sim report them) to the table's. */
static const char *table_name(const char *s)
{
    static const char *const map[][2] = {{"RING", "ring"},
                                         {"TREE", "tree"},
                                         {"NVLS", "nvls"},
                                         {"NVLSTREE", "nvls_tree"},
                                         {"NVLS_TREE", "nvls_tree"},
                                         {"COLLNET_DIRECT", "collnet_direct"},
                                         {"COLLNET_CHAIN", "collnet_chain"},
                                         {"PAT", "pat"},
                                         {"LL", "ll"},
                                         {"LL128", "ll128"},
                                         {"SIMPLE", "simple"}};
    for (size_t i = 0; s && i < sizeof(map) / sizeof(map[0]); i++)
        if (!strcasecmp(s, map[i][0]))
            return map[i][1];
    return NULL;
}

static int same(const char *a, const char *b)
{
    return a && b && !strcmp(a, b);
}

static void size_stats(json_t *runs, json_int_t size, struct size_stat *st)
{
    double sum = 0, sq = 0;
    int mixed = 0;
    size_t i, k;
    json_t *r, *s;
    memset(st, 0, sizeof(*st));
    json_array_foreach(runs, i, r) {
        if (strcmp(json_string_value(json_object_get(r, "outcome")), "ok"))
            continue;
        json_array_foreach(json_object_get(r, "sizes"), k, s) {
            if (json_integer_value(json_object_get(s, "size")) != size)
                continue;
            double b = json_number_value(json_object_get(s, "busbw"));
            const char *a = table_name(json_string_value(json_object_get(s, "algo")));
            const char *p = table_name(json_string_value(json_object_get(s, "proto")));
            if (st->n && (!same(a, st->algo) || !same(p, st->proto)))
                mixed = 1;
            st->algo = a;
            st->proto = p;
            st->config_id = json_string_value(json_object_get(r, "config_id"));
            st->n++;
            sum += b;
            sq += b * b;
            break;
        }
    }
    if (mixed || !st->algo || !st->proto)
        st->algo = st->proto = NULL;
    st->mean = st->n ? sum / st->n : 0;
    double var = st->n > 1 ? fmax(0, (sq - st->n * st->mean * st->mean) / (st->n - 1)) : 0;
    st->cv = st->mean > 0 ? sqrt(var) / st->mean : 0;
}

/* The fastest candidate at size, stable there (cv within cv_max, one pair in every run). */
static int fastest(json_t *candidates, json_int_t size, double cv_max, struct size_stat *best)
{
    int found = 0;
    size_t c;
    json_t *runs;
    json_array_foreach(candidates, c, runs) {
        struct size_stat st;
        size_stats(runs, size, &st);
        if (!st.n || !st.algo || st.cv > cv_max)
            continue;
        if (!found || st.mean > best->mean)
            *best = st;
        found = 1;
    }
    return found;
}

/* The byte boundary between measured sizes a < b: sizes up to it belong to a's side. Sizes are
 * measured on a geometric grid, so the boundary is their geometric mean, within [a, b - 1]. */
static json_int_t midpoint(json_int_t a, json_int_t b)
{
    json_int_t m = (json_int_t)sqrtl((long double)a * (long double)b);
    return m < a ? a : m >= b ? b - 1 : m;
}

static json_t *new_row(const struct size_stat *w, const struct size_stat *ref, json_int_t min,
                       json_t *first_run, const char *collective)
{
    json_t *r = json_object();
    json_object_set_new(r, "collective", json_string(collective));
    json_object_set_new(r, "min_bytes", json_integer(min));
    json_object_set_new(r, "max_bytes", json_null());
    json_object_set_new(r, "algorithm", json_string(w->algo));
    json_object_set_new(r, "protocol", json_string(w->proto));
    json_object_set_new(r, "channels", json_integer(0));
    json_object_set(r, "nodes", json_object_get(first_run, "nodes"));
    json_object_set(r, "ranks", json_object_get(first_run, "ranks"));
    json_object_set_new(
        r, "defaults",
        json_sprintf("%s,%s", ref->algo ? ref->algo : "?", ref->proto ? ref->proto : "?"));
    json_object_set_new(r, "sizes", json_array());
    json_object_set_new(r, "configs", json_array());
    json_object_set_new(r, "runs", json_integer(w->n));
    json_object_set_new(r, "spread", json_real(0));
    json_object_set_new(r, "gain_min", json_null()); /* set by the first size */
    json_object_set_new(r, "gain_max", json_real(0));
    return r;
}

/* Adds one measured size's evidence to row r. */
static void add_evidence(json_t *r, json_int_t size, const struct size_stat *w,
                         const struct size_stat *ref)
{
    double gain = w->mean / ref->mean - 1;
    json_array_append_new(json_object_get(r, "sizes"), json_integer(size));
    json_t *configs = json_object_get(r, "configs");
    int seen = 0;
    size_t i;
    json_t *c;
    json_array_foreach(configs, i, c)
        seen |= same(json_string_value(c), w->config_id);
    if (!seen)
        json_array_append_new(configs, json_string(w->config_id));
    if (w->n < json_integer_value(json_object_get(r, "runs")))
        json_object_set_new(r, "runs", json_integer(w->n));
    double spread = fmax(w->cv, ref->cv);
    if (spread > json_real_value(json_object_get(r, "spread")))
        json_object_set_new(r, "spread", json_real(spread));
    if (json_is_null(json_object_get(r, "gain_min")) ||
        gain < json_real_value(json_object_get(r, "gain_min")))
        json_object_set_new(r, "gain_min", json_real(gain));
    if (gain > json_real_value(json_object_get(r, "gain_max")))
        json_object_set_new(r, "gain_max", json_real(gain));
}

static void finish_row(json_t *r, const char *ref_name, int predicted)
{
    json_t *sizes = json_object_get(r, "sizes");
    json_object_set_new(
        r, "evidence",
        json_sprintf(
            "%s,%s at %lld..%lld B (%zu measured sizes): %sbusbw %+.1f%% to %+.1f%% over "
            "%s (%s there), %lld runs per size, spread (cv) at most %.3f",
            json_string_value(json_object_get(r, "algorithm")),
            json_string_value(json_object_get(r, "protocol")),
            (long long)json_integer_value(json_array_get(sizes, 0)),
            (long long)json_integer_value(json_array_get(sizes, json_array_size(sizes) - 1)),
            json_array_size(sizes), predicted ? "predicted " : "",
            100 * json_real_value(json_object_get(r, "gain_min")),
            100 * json_real_value(json_object_get(r, "gain_max")), ref_name,
            json_string_value(json_object_get(r, "defaults")),
            (long long)json_integer_value(json_object_get(r, "runs")),
            json_real_value(json_object_get(r, "spread"))));
}

/* The measured sizes of the reference's first ok run, in order. */
static json_t *grid(json_t *reference)
{
    size_t i, k;
    json_t *r, *s, *sizes = json_array();
    json_array_foreach(reference, i, r) {
        if (strcmp(json_string_value(json_object_get(r, "outcome")), "ok"))
            continue;
        json_array_foreach(json_object_get(r, "sizes"), k, s)
            json_array_append(sizes, json_object_get(s, "size"));
        break;
    }
    return sizes;
}

json_t *gen_tuner_rows(json_t *candidates, json_t *reference, double cv_max, const char *ref_name,
                       int predicted, const char *collective)
{
    json_t *rows = json_array();
    if (!reference || !json_array_size(reference))
        return rows;
    json_t *sizes = grid(reference), *cur = NULL, *first_run = json_array_get(reference, 0);
    size_t n = json_array_size(sizes);
    for (size_t k = 0; k < n; k++) {
        json_int_t size = json_integer_value(json_array_get(sizes, k));
        struct size_stat ref = {0}, w = {0}; /* fastest() fills w only when it finds a pair */
        size_stats(reference, size, &ref);
        int row = ref.n && ref.mean > 0 && fastest(candidates, size, cv_max, &w) &&
                  !(same(w.algo, ref.algo) && same(w.proto, ref.proto)) &&
                  w.mean > ref.mean + fmax(cv_max, w.cv + ref.cv) * ref.mean;
        json_int_t lo =
            k ? midpoint(json_integer_value(json_array_get(sizes, k - 1)), size) + 1 : 0;
        if (!row) {
            cur = NULL;
            continue;
        }
        if (!cur || !same(json_string_value(json_object_get(cur, "algorithm")), w.algo) ||
            !same(json_string_value(json_object_get(cur, "protocol")), w.proto)) {
            cur = new_row(&w, &ref, lo, first_run, collective);
            json_array_append_new(rows, cur);
        }
        add_evidence(cur, size, &w, &ref);
        /* The row covers up to the midpoint towards the next size; the largest, everything. */
        if (k + 1 < n)
            json_object_set_new(
                cur, "max_bytes",
                json_integer(midpoint(size, json_integer_value(json_array_get(sizes, k + 1)))));
        else
            json_object_set_new(cur, "max_bytes", json_null());
    }
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
        finish_row(r, ref_name, predicted);
    json_decref(sizes);
    return rows;
}
