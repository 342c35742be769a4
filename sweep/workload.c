/* SPDX-License-Identifier: MIT */
/*
 * A workload sweep's objective: each collective's line of a run read at the sizes the workload
 * weights, joined into the job's effective algbw (sweep.h, "Workloads").
 */
#include "sweep/sweep.h"
#include "workload/workload.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

json_t *sweep_workload_collectives(const json_t *workload)
{
    json_t *out = json_array(), *e, *c;
    size_t i, k;
    json_array_foreach(json_object_get(workload, "entries"), i, e) {
        const char *name = json_string_value(json_object_get(e, "collective"));
        int seen = 0;
        json_array_foreach(out, k, c)
            seen |= !strcmp(json_string_value(c), name);
        if (!seen)
            json_array_append_new(out, json_string(name));
    }
    return out;
}

void sweep_workload_sizes(const json_t *workload, const char *coll, size_t *min, size_t *max)
{
    json_t *e;
    size_t i;
    *min = *max = 0;
    json_array_foreach(json_object_get(workload, "entries"), i, e) {
        if (strcmp(json_string_value(json_object_get(e, "collective")), coll))
            continue;
        size_t s = (size_t)json_integer_value(json_object_get(e, "size"));
        *min = !*min || s < *min ? s : *min;
        *max = s > *max ? s : *max;
    }
}

void sweep_workload_grid(size_t min, size_t *max, size_t unit)
{
    size_t top = min ? min : 1;
    unit = unit ? unit : 1;
    /* nccl-tests runs top rounded down to whole units (1152 B for an all_gather of 2200 B on 72
     * ranks): the grid goes on until what it runs reaches *max */
    while (top / unit * unit < *max && top <= WORKLOAD_MAX_SIZE / 2)
        top *= 2;
    if (top >= *max && top <= WORKLOAD_MAX_SIZE)
        *max = top;
}

double sweep_time_at(const json_t *result, size_t size)
{
    /* the measured sizes nearest below and above (nccl-tests may round a size down a little) */
    double lo_s = 0, lo_t = -1, hi_s = 0, hi_t = -1;
    json_t *s;
    size_t i;
    json_array_foreach(json_object_get(result, "sizes"), i, s) {
        double at = (double)json_integer_value(json_object_get(s, "size"));
        double t = json_number_value(json_object_get(s, "time_us"));
        if (at <= 0 || !(t > 0))
            continue;
        if (at <= (double)size && (lo_t < 0 || at > lo_s))
            lo_s = at, lo_t = t;
        if (at >= (double)size && (hi_t < 0 || at < hi_s))
            hi_s = at, hi_t = t;
    }
    if (lo_t < 0) /* below every measured size: the smallest's time (an upper bound) */
        return hi_t;
    if (hi_t < 0) /* above: the largest's, growing with the bytes */
        return lo_t * (double)size / lo_s;
    if (hi_s == lo_s)
        return lo_t;
    double f = log((double)size / lo_s) / log(hi_s / lo_s);
    return exp(log(lo_t) + f * (log(hi_t) - log(lo_t)));
}

int sweep_workload_slower(const json_t *workload, const json_t *view, const json_t *ref,
                          double margin)
{
    const json_t *parts = json_object_get(view, "parts"), *base = json_object_get(ref, "parts");
    json_t *e;
    size_t i;
    json_array_foreach(json_object_get(workload, "entries"), i, e) {
        const char *coll = json_string_value(json_object_get(e, "collective"));
        size_t size = (size_t)json_integer_value(json_object_get(e, "size"));
        if (!(json_number_value(json_object_get(e, "weight")) > 0))
            continue;
        double t = sweep_time_at(json_object_get(parts, coll), size);
        double b = sweep_time_at(json_object_get(base, coll), size);
        if (t > 0 && b > 0 && t > b * (1 + margin))
            return 1;
    }
    return 0;
}

json_t *sweep_workload_view(const json_t *workload, json_t *parts)
{
    json_t *view = json_object(), *first = NULL, *e;
    const char *outcome = "ok", *stage = NULL, *coll;
    double wall = 0, weight = 0, cost = 0;
    json_object_foreach(parts, coll, e) {
        first = first ? first : e;
        wall += json_number_value(json_object_get(e, "wall_s"));
        const char *o = json_string_value(json_object_get(e, "outcome"));
        if (!strcmp(outcome, "ok") && strcmp(o, "ok")) {
            outcome = o;
            stage = json_string_value(json_object_get(e, "stage"));
        }
    }
    size_t i;
    json_array_foreach(json_object_get(workload, "entries"), i, e) {
        double w = json_number_value(json_object_get(e, "weight"));
        size_t size = (size_t)json_integer_value(json_object_get(e, "size"));
        json_t *line = json_object_get(parts, json_string_value(json_object_get(e, "collective")));
        double t = line ? sweep_time_at(line, size) : -1;
        if (w <= 0)
            continue;
        weight += w;
        cost = t > 0 && cost >= 0 ? cost + w * t * 1e3 / (double)size : -1; /* w / algbw */
    }
    static const char *const keys[] = {"config_id", "env",   "rep",      "rung",
                                       "final",     "class", "predicted"};
    for (size_t k = 0; first && k < sizeof(keys) / sizeof(keys[0]); k++)
        json_object_set(view, keys[k], json_object_get(first, keys[k]));
    json_object_set_new(view, "outcome", json_string(outcome));
    if (stage)
        json_object_set_new(view, "stage", json_string(stage));
    json_object_set_new(view, "objective",
                        json_real(!strcmp(outcome, "ok") && cost > 0 ? weight / cost : 0));
    json_object_set_new(view, "wall_s", json_real(wall));
    /* per size, all_reduce's when the mix has it (what per_size, expect and metrics read) */
    json_t *ar = json_object_get(json_object_get(parts, "all_reduce"), "sizes");
    json_object_set_new(view, "sizes", ar ? json_incref(ar) : json_array());
    json_object_set(view, "parts", parts);
    return view;
}

void sweep_run_key(const json_t *line, char *key, size_t len)
{
    snprintf(key, len, "%s/%s/%lld/%lld", json_string_value(json_object_get(line, "sweep")) ?: "",
             json_string_value(json_object_get(line, "config_id")),
             (long long)json_integer_value(json_object_get(line, "rep")),
             (long long)json_integer_value(json_object_get(line, "rung")));
}

json_t *sweep_run_outcomes(const json_t *lines)
{
    json_t *by_run = json_object(), *r;
    size_t i;
    json_array_foreach(lines, i, r) {
        char key[512];
        sweep_run_key(r, key, sizeof(key));
        const char *o = json_string_value(json_object_get(r, "outcome"));
        const char *had = json_string_value(json_object_get(by_run, key));
        o = o ? o : "error";
        if (!had || (!strcmp(had, "ok") && strcmp(o, "ok")))
            json_object_set_new(by_run, key, json_string(o));
    }
    return by_run;
}

json_t *sweep_workload_views(const json_t *workload, const json_t *results)
{
    /* one pass: the lines of each run (sweep, config, rep, rung) by collective, in file order */
    json_t *runs = json_object(), *order = json_array(),
           *colls = sweep_workload_collectives(workload);
    json_t *r, *c, *views = json_array();
    size_t i;
    json_array_foreach(results, i, r) {
        const char *coll = json_string_value(json_object_get(r, "collective"));
        if (!coll)
            continue;
        char key[512];
        sweep_run_key(r, key, sizeof(key));
        json_t *parts = json_object_get(runs, key);
        if (!parts) {
            parts = json_object();
            json_object_set_new(runs, key, parts);
            json_array_append_new(order, json_string(key));
        }
        json_object_set(parts, coll, r);
    }
    json_array_foreach(order, i, r) {
        json_t *parts = json_object_get(runs, json_string_value(r)), *ordered = json_object();
        size_t k;
        json_array_foreach(colls, k, c) { /* the workload's collectives only, in its order */
            json_t *line = json_object_get(parts, json_string_value(c));
            if (line)
                json_object_set(ordered, json_string_value(c), line);
        }
        if (json_object_size(ordered) == json_array_size(colls))
            json_array_append_new(views, sweep_workload_view(workload, ordered));
        json_decref(ordered);
    }
    json_decref(colls);
    json_decref(order);
    json_decref(runs);
    return views;
}
