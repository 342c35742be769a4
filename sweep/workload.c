/* SPDX-License-Identifier: MIT */
/*
 * A workload sweep's objective: each collective's line of a run read at the sizes the workload
 * weights, joined into the job's effective algbw (sweep.h, "Workloads").
 */
#include "sweep/sweep.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/num.h"
#include "workload/workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

/* A result's measured (size, time) points, sorted by size (of one size, the first measured): read
 * once, then at each of a workload's sizes by bisection. A workload of 100,000 entries read every
 * line's sizes from JSON for each entry and each configuration: compare ran for minutes. */
struct curve {
    size_t n;
    double *s, *t;
};

struct point {
    double s, t;
    size_t at; /* its place in the line */
};

static int by_size_then_place(const void *a, const void *b)
{
    const struct point *x = a, *y = b;
    return x->s < y->s ? -1 : x->s > y->s ? 1 : (x->at > y->at) - (x->at < y->at);
}

static void curve_of(const json_t *result, struct curve *c)
{
    const json_t *sizes = json_object_get(result, "sizes");
    struct point *p = util_xcalloc(json_array_size(sizes) + 1, sizeof(*p));
    json_t *s;
    size_t i, n = 0;
    json_array_foreach(sizes, i, s) {
        double at = (double)json_integer_value(json_object_get(s, "size"));
        double t = json_number_value(json_object_get(s, "time_us"));
        if (at > 0 && t > 0)
            p[n++] = (struct point){at, t, i};
    }
    qsort(p, n, sizeof(*p), by_size_then_place);
    c->s = util_xcalloc(n + 1, sizeof(double));
    c->t = util_xcalloc(n + 1, sizeof(double));
    c->n = 0;
    for (i = 0; i < n; i++) /* one point a size: its first measurement */
        if (!c->n || p[i].s > c->s[c->n - 1])
            c->s[c->n] = p[i].s, c->t[c->n++] = p[i].t;
    free(p);
}

static void curve_free(struct curve *c)
{
    free(c->s);
    free(c->t);
}

/* A line's time (us) at size on its curve: the measured sizes nearest below and above (nccl-tests
 * may round a size down a little), log-log between them; the nearest measured size's beyond
 * them (above, growing with the bytes); -1 when it measured none. */
static double curve_time(const struct curve *c, size_t size)
{
    double x = (double)size;
    size_t lo = 0, hi = c->n; /* the first point at or above x: hi */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->s[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!c->n)
        return -1;
    if (hi == c->n) /* above every measured size: the largest's, growing with the bytes */
        return c->t[c->n - 1] * x / c->s[c->n - 1];
    if (c->s[hi] == x || hi == 0) /* measured there; or below every size: the smallest's */
        return c->t[hi];
    double lo_s = c->s[hi - 1], lo_t = c->t[hi - 1], hi_s = c->s[hi], hi_t = c->t[hi];
    double f = log(x / lo_s) / log(hi_s / lo_s);
    return exp(log(lo_t) + f * (log(hi_t) - log(lo_t)));
}

/* The curves of the collectives of parts ({collective: result}), by name. */
struct curves {
    size_t n;
    const char **names;
    struct curve *c;
};

static void curves_of(const json_t *parts, struct curves *cs)
{
    const char *coll;
    json_t *line;
    cs->n = 0;
    cs->names = util_xcalloc(json_object_size(parts) + 1, sizeof(char *));
    cs->c = util_xcalloc(json_object_size(parts) + 1, sizeof(struct curve));
    json_object_foreach((json_t *)parts, coll, line) {
        cs->names[cs->n] = coll;
        curve_of(line, &cs->c[cs->n++]);
    }
}

/* The time of coll at size, -1 when parts had no line of it (or it measured nothing). */
static double curves_time(const struct curves *cs, const char *coll, size_t size)
{
    for (size_t i = 0; coll && i < cs->n; i++) /* a handful of collectives */
        if (!strcmp(cs->names[i], coll))
            return curve_time(&cs->c[i], size);
    return -1;
}

static void curves_free(struct curves *cs)
{
    for (size_t i = 0; i < cs->n; i++)
        curve_free(&cs->c[i]);
    free(cs->c);
    free(cs->names);
}

struct sweep_times {
    size_t n;
    struct curves *runs;
};

struct sweep_times *sweep_times_of(const json_t *views)
{
    struct sweep_times *st = util_xcalloc(1, sizeof(*st));
    st->runs = util_xcalloc(json_array_size(views) + 1, sizeof(struct curves));
    size_t i;
    json_t *r;
    json_array_foreach((json_t *)views, i, r)
        if (!strcmp(json_string_value(json_object_get(r, "outcome")) ?: "", "ok"))
            curves_of(json_object_get(r, "parts"), &st->runs[st->n++]);
    return st;
}

double sweep_times_mean(const struct sweep_times *st, const char *coll, size_t size)
{
    double sum = 0;
    int n = 0;
    for (size_t i = 0; st && i < st->n; i++) {
        double t = curves_time(&st->runs[i], coll, size);
        if (t > 0)
            sum += t, n++;
    }
    return n ? sum / n : -1;
}

void sweep_times_free(struct sweep_times *st)
{
    for (size_t i = 0; st && i < st->n; i++)
        curves_free(&st->runs[i]);
    if (st)
        free(st->runs);
    free(st);
}

/* The entry's time (us) in each ok run of st, n of them at most; how many. */
static int times_at(const struct sweep_times *st, const char *coll, size_t size, double *t, int n)
{
    int k = 0;
    for (size_t i = 0; st && i < st->n && k < n; i++)
        if ((t[k] = curves_time(&st->runs[i], coll, size)) > 0)
            k++;
    return k;
}

/* The relative run-to-run variance of one run, pooled over the entries that carry weight and
 * over both sets of runs (each entry's sample variance over its mean squared, weighted by its
 * degrees of freedom: two runs of one entry tell little alone, and both sets ran on one system);
 * 0 when neither set repeated a run. */
static double pooled_variance(const json_t *workload, const char *carries,
                              const struct sweep_times *const sets[2])
{
    double sum = 0, t[64];
    int dof = 0;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(workload, "entries"), i, e) {
        for (int s = 0; carries[i] && s < 2; s++) {
            int k = times_at(sets[s], json_string_value(json_object_get(e, "collective")),
                             (size_t)json_integer_value(json_object_get(e, "size")), t, 64);
            double mean = 0, var = 0;
            for (int j = 0; j < k; j++)
                mean += t[j] / k;
            for (int j = 0; j < k && k > 1; j++)
                var += (t[j] - mean) * (t[j] - mean);
            if (k > 1) {
                sum += var / (mean * mean);
                dof += k - 1;
            }
        }
    }
    return dof ? sum / dof : 0;
}

struct by_share {
    double share; /* of the workload's time under the reference (not yet divided by the total) */
    size_t at;
};

static int lighter_first(const void *a, const void *b)
{
    double x = ((const struct by_share *)a)->share, y = ((const struct by_share *)b)->share;
    return x < y ? -1 : x > y;
}

int sweep_workload_slows(const json_t *workload, const struct sweep_times *runs,
                         const struct sweep_times *base, double margin, struct sweep_slowdown *out)
{
    const json_t *entries = json_object_get(workload, "entries");
    size_t n = json_array_size(entries), i;
    json_t *e;
    double *b = util_xcalloc(n + 1, sizeof(double)), total = 0;
    char *carries = util_xcalloc(n + 1, 1);
    json_array_foreach(entries, i, e) { /* the workload's time under the reference, per entry */
        double w = json_number_value(json_object_get(e, "weight"));
        size_t size = (size_t)json_integer_value(json_object_get(e, "size"));
        b[i] = sweep_times_mean(base, json_string_value(json_object_get(e, "collective")), size);
        if (w > 0 && b[i] > 0)
            total += w * b[i] / (double)size;
    }
    /* the entries that carry weight: all but the lightest ones, which together take at most
     * SWEEP_WORKLOAD_SHARE of the time (a floor per entry judged none of a flat mix of 101) */
    struct by_share *order = util_xcalloc(n + 1, sizeof(*order));
    json_array_foreach(entries, i, e) {
        double w = json_number_value(json_object_get(e, "weight"));
        size_t size = (size_t)json_integer_value(json_object_get(e, "size"));
        order[i] = (struct by_share){w > 0 && b[i] > 0 ? w * b[i] / (double)size : 0, i};
    }
    qsort(order, n, sizeof(*order), lighter_first);
    double left_out = 0;
    for (size_t k = 0; k < n; k++) {
        left_out += order[k].share;
        carries[order[k].at] = order[k].share > 0 && left_out > SWEEP_WORKLOAD_SHARE * total;
    }
    free(order);
    /* standard errors of the difference of the two means, relative: as many as keep a false
     * veto among the entries judged to about one configuration in twenty */
    int judged = 0;
    for (i = 0; i < n; i++)
        judged += carries[i];
    const struct sweep_times *const sets[2] = {runs, base};
    double v = pooled_variance(workload, carries, sets);
    double nr = runs && runs->n ? (double)runs->n : 1, nb = base && base->n ? (double)base->n : 1;
    double bar = fmax(margin, util_family_sigmas(judged) * sqrt(v / nr + v / nb));
    int found = 0;
    json_array_foreach(entries, i, e) {
        if (!carries[i])
            continue;
        const char *coll = json_string_value(json_object_get(e, "collective"));
        double t =
            sweep_times_mean(runs, coll, (size_t)json_integer_value(json_object_get(e, "size")));
        if (t > 0 && t / b[i] - 1 > bar) {
            *out = (struct sweep_slowdown){e, b[i], t, bar};
            found = 1;
            break;
        }
    }
    free(carries);
    free(b);
    return found;
}

void sweep_workload_ranks(const json_t *workload, int ranks)
{
    json_int_t job = json_integer_value(json_object_get(workload, "ranks"));
    size_t i;
    json_t *e;
    const char *parts = NULL; /* a collective whose size is a rank's part times the ranks */
    json_array_foreach(json_object_get(workload, "entries"), i, e) {
        const char *c = json_string_value(json_object_get(e, "collective"));
        if (c &&
            (!strcmp(c, "all_gather") || !strcmp(c, "reduce_scatter") || !strcmp(c, "alltoall")))
            parts = c;
    }
    if (job > 0 && ranks > 0 && job != ranks && parts)
        util_warning("the workload's %s sizes are its job's %lld-rank communicator's (a rank's "
                     "part times %lld, as nccl-tests counts them); this sweep runs %d ranks, so "
                     "each rank's part is %s the job's: sweep the job's rank count, or build the "
                     "workload of the communicator you sweep (topotune workload --ranks)",
                     parts, (long long)job, (long long)job, ranks,
                     ranks > job ? "smaller than" : "larger than");
}

int sweep_workload_slower(const json_t *workload, const json_t *view, const json_t *ref,
                          double margin)
{
    json_t *one = json_pack("[O]", view), *other = json_pack("[O]", ref);
    struct sweep_times *runs = sweep_times_of(one), *base = sweep_times_of(other);
    struct sweep_slowdown s;
    /* single runs, no spread to measure: held to the margin alone (gen judges the repeats) */
    int slower = sweep_workload_slows(workload, runs, base, margin, &s);
    sweep_times_free(runs);
    sweep_times_free(base);
    json_decref(one);
    json_decref(other);
    return slower;
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
    struct curves cs;
    curves_of(parts, &cs);
    json_array_foreach(json_object_get(workload, "entries"), i, e) {
        double w = json_number_value(json_object_get(e, "weight"));
        size_t size = (size_t)json_integer_value(json_object_get(e, "size"));
        if (w <= 0)
            continue;
        double t = curves_time(&cs, json_string_value(json_object_get(e, "collective")), size);
        weight += w;
        cost = t > 0 && cost >= 0 ? cost + w * t * 1e3 / (double)size : -1; /* w / algbw */
    }
    curves_free(&cs);
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
