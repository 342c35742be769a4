/* SPDX-License-Identifier: MIT */
/*
 * A workload sweep's objective: each collective's line of a run read at the sizes the workload
 * weights, joined into the job's effective algbw (sweep.h, "Workloads").
 */
#include "sweep/sweep.h"

#include <math.h>
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
    json_object_set_new(view, "sizes", json_array());
    json_object_set(view, "parts", parts);
    return view;
}

/* Whether line a and b are one run: config, rep, rung. */
static int same_run(const json_t *a, const json_t *b)
{
    return !strcmp(json_string_value(json_object_get(a, "config_id")),
                   json_string_value(json_object_get(b, "config_id"))) &&
           json_integer_value(json_object_get(a, "rep")) ==
               json_integer_value(json_object_get(b, "rep")) &&
           json_integer_value(json_object_get(a, "rung")) ==
               json_integer_value(json_object_get(b, "rung"));
}

json_t *sweep_workload_views(const json_t *workload, const json_t *results)
{
    json_t *views = json_array(), *colls = sweep_workload_collectives(workload), *r, *v;
    size_t i, k;
    json_array_foreach(results, i, r) {
        const char *coll = json_string_value(json_object_get(r, "collective"));
        int done = 0;
        json_array_foreach(views, k, v) /* the view of this run, when one was started */
            done |= same_run(v, r);
        if (!coll || done)
            continue;
        json_t *parts = json_object(), *c, *x;
        size_t j, n;
        json_array_foreach(colls, j, c)
            json_array_foreach(results, n, x) {
                const char *xc = json_string_value(json_object_get(x, "collective"));
                if (xc && !strcmp(xc, json_string_value(c)) && same_run(x, r))
                    json_object_set(parts, xc, x);
            }
        if (json_object_size(parts) == json_array_size(colls))
            json_array_append_new(views, sweep_workload_view(workload, parts));
        json_decref(parts);
    }
    json_decref(colls);
    return views;
}
