/* SPDX-License-Identifier: MIT */
/*
 * Which configurations a sweep measures: grid (all), successive halving (all at low effort, then
 * the better half), coordinate descent (neighbours of the best point so far). Every strategy
 * re-derives its state from the results on file, so `sweep --resume` measures nothing twice.
 */
#include "sweep/internal.h"
#include "sweep/sweep.h"
#include "util/mem.h"

#include <stdlib.h>
#include <string.h>

int sweep_run_grid(struct sweep *sw)
{
    size_t n = json_array_size(sw->configs);
    sw->total = (int)n * sw->repeat;
    sw->done = 0; /* the cure probes are planned runs too, counted again when reused */
    for (size_t c = 0; c < n; c++)
        for (int rep = 0; rep < sw->repeat; rep++) {
            struct planned_run r = {json_array_get(sw->configs, c), rep, 0, sw->space.iters, 1};
            json_t *res;
            int rc = sweep_measure(sw, &r, &res);
            if (rc)
                return rc;
        }
    return 0;
}

struct ranked {
    json_t *config;
    double obj;
};

static int by_objective(const void *a, const void *b)
{
    double x = ((const struct ranked *)a)->obj, y = ((const struct ranked *)b)->obj;
    return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * The objective of a run, or -1 when it did not end ok, or when a workload's run is slower than
 * the defaults' beyond the noise (cv_max) at a (collective, size) the workload weights: gen
 * rejects such a configuration, so a strategy must not climb to it nor keep it alone.
 */
static double score(const struct sweep *sw, const json_t *res)
{
    if (strcmp(json_string_value(json_object_get(res, "outcome")), "ok"))
        return -1;
    if (sw->workload && sw->ref_view && res != sw->ref_view &&
        sweep_workload_slower(sw->workload, res, sw->ref_view, sw->space.cv_max))
        return -1;
    return sweep_objective(res, sw->space.obj_min, sw->space.obj_max);
}

/*
 * Successive halving: rung g measures the survivors once with iters >> (R-g)
 * (at least 2); the better half (by objective; failures drop out; the baseline
 * stays) goes on; the last rung measures the survivors `repeat` times at full
 * effort. Survivors are re-derived from results.jsonl, so resuming works.
 */
int sweep_run_halving(struct sweep *sw)
{
    size_t n = json_array_size(sw->configs);
    int rungs = 0;
    while ((1u << rungs) < n)
        rungs++;
    struct ranked *alive = util_xcalloc(n + 1, sizeof(*alive));
    size_t nalive = n;
    sw->done = 0;
    for (size_t i = 0; i < n; i++)
        alive[i].config = json_array_get(sw->configs, i);
    sw->total = 0;
    for (int g = 0, left = (int)n; g < rungs; g++, left = (left + 1) / 2)
        sw->total += left;
    sw->total += 2 * sw->repeat;
    for (int g = 0; g < rungs && nalive > 2; g++) {
        int iters = sw->space.iters >> (rungs - g);
        for (size_t i = 0; i < nalive; i++) {
            struct planned_run r = {alive[i].config, 0, g + 1, iters < 2 ? 2 : iters, 0};
            json_t *res;
            int rc = sweep_measure(sw, &r, &res);
            if (rc) {
                free(alive);
                return rc;
            }
            alive[i].obj = score(sw, res);
        }
        qsort(alive, nalive, sizeof(*alive), by_objective);
        size_t keep = (nalive + 1) / 2, k = 0;
        int baseline_kept = 0;
        for (size_t i = 0; i < nalive; i++) {
            int baseline = json_object_size(json_object_get(alive[i].config, "env")) == 0;
            if ((i < keep && alive[i].obj >= 0) || (baseline && !baseline_kept)) {
                baseline_kept |= baseline;
                alive[k++] = alive[i];
            }
        }
        nalive = k;
    }
    sw->total = sw->done + (int)nalive * sw->repeat;
    for (size_t i = 0; i < nalive; i++)
        for (int rep = 0; rep < sw->repeat; rep++) {
            struct planned_run r = {alive[i].config, rep, 0, sw->space.iters, 1};
            json_t *res;
            int rc = sweep_measure(sw, &r, &res);
            if (rc) {
                free(alive);
                return rc;
            }
        }
    free(alive);
    return 0;
}

/* At most this many passes over the variables; a pass that moves nowhere ends the descent. */
#define DESCENT_PASSES 3

/* 1 when the environments a and b differ in the variable name and in nothing else. */
static int neighbours_in(const json_t *a, const json_t *b, const char *name)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)a, k, v) {
        json_t *w = json_object_get(b, k);
        if (strcmp(k, name) && !(w && json_equal(v, w)))
            return 0;
    }
    json_object_foreach((json_t *)b, k, v)
        if (strcmp(k, name) && !json_object_get(a, k))
            return 0;
    return !json_equal(json_object_get(a, name), json_object_get(b, name));
}

/* An exploration run: once, rung 1, at full iterations. */
static int explore(struct sweep *sw, json_t *config, double *obj)
{
    struct planned_run r = {config, 0, 1, sw->space.iters, 0};
    json_t *res;
    int rc = sweep_measure(sw, &r, &res);
    *obj = rc ? -1 : score(sw, res);
    return rc;
}

/*
 * One coordinate move: every configuration that differs from *cur only in name is measured, and
 * *cur becomes the best of them when it beats *obj by more than the noise bound (cv_max): a move
 * needs evidence, not luck. *moved is set when it moved.
 */
static int try_variable(struct sweep *sw, const char *name, json_t **cur, double *obj, int *moved)
{
    json_t *best = NULL, *c;
    double bar = *obj * (1 + sw->space.cv_max), best_obj = bar;
    size_t i;
    json_array_foreach(sw->configs, i, c) {
        if (!neighbours_in(json_object_get(*cur, "env"), json_object_get(c, "env"), name))
            continue;
        double o;
        int rc = explore(sw, c, &o);
        if (rc)
            return rc;
        if (o > best_obj) {
            best = c;
            best_obj = o;
        }
    }
    if (best) {
        *cur = best;
        *obj = best_obj;
        *moved = 1;
    }
    return 0;
}

/* The final measurements: config `repeat` times at full effort. */
static int finish(struct sweep *sw, json_t *config)
{
    for (int rep = 0; rep < sw->repeat; rep++) {
        struct planned_run r = {config, rep, 0, sw->space.iters, 1};
        json_t *res;
        int rc = sweep_measure(sw, &r, &res);
        if (rc)
            return rc;
    }
    return 0;
}

/*
 * Coordinate descent: from the start point (the defaults, or the defaults with their cure),
 * each variable in the space's order is varied alone, the others held at the best point so far,
 * and the best point moves when a value beats it beyond the noise; passes repeat until one moves
 * nowhere. A space of 10^4 configurations takes tens of runs instead of 10^4, at the price of
 * not seeing two variables that only help together (the grid does). The baseline, the start
 * and the point reached are then measured `repeat` times, as gen compares them.
 */
int sweep_run_descent(struct sweep *sw)
{
    json_t *start = json_array_get(sw->configs, sw->cures ? 1 : 0), *cur = start;
    if (!start)
        return 0;
    size_t values = 1;
    const char *name;
    json_t *list;
    json_object_foreach(sw->space.vars, name, list)
        values += json_array_size(list) - 1;
    sw->done = 0;
    sw->total = (int)values * 2 + 3 * sw->repeat; /* an estimate: two passes */
    double obj;
    int rc = explore(sw, cur, &obj);
    for (int pass = 0, moved = 1; !rc && moved && pass < DESCENT_PASSES; pass++) {
        moved = 0;
        json_object_foreach(sw->space.vars, name, list) {
            if ((rc = try_variable(sw, name, &cur, &obj, &moved)))
                break;
        }
    }
    if (!rc)
        sw->total = sw->done + 3 * sw->repeat;
    if (!rc)
        rc = finish(sw, json_array_get(sw->configs, 0));
    if (!rc && start != json_array_get(sw->configs, 0))
        rc = finish(sw, start);
    if (!rc && cur != start)
        rc = finish(sw, cur);
    return rc;
}
