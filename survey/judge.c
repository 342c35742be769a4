/* SPDX-License-Identifier: MIT */
/*
 * The survey's yardsticks (internal.h says what each returns): the level of a class's healthy
 * population, which the slow nodes cannot drag down however many they are; each node's capacity
 * fitted from its pairs; and the facts of a node class, to tell a node that lost a part.
 */
#include "survey/internal.h"
#include "survey/survey.h"
#include "util/mem.h"
#include "util/num.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * In logarithms (noise is multiplicative): the anchor is the m-th highest value, m an eighth of
 * the values (at least 2: one lucky value is no anchor); the healthy population is every value
 * within the tolerance below the anchor, then within the tolerance or three spreads below its
 * level. Slow values, however many, are not in it as long as an eighth of the class is healthy;
 * noise above the anchor is, and sets the spread. Its median is the level, its spread 1.4826 x
 * the median distance above the level (below, the window cuts).
 */
void survey_level_of(const double *v, int n, double tolerance, struct survey_level *out)
{
    double *x = util_xmalloc(sizeof(double) * (size_t)(n ? n : 1));
    int k = 0;
    *out = (struct survey_level){0};
    for (int i = 0; i < n; i++)
        if (v[i] > 0)
            x[k++] = log(v[i]);
    out->values = k;
    if (!k) {
        free(x);
        return;
    }
    util_sort_doubles(x, (size_t)k);
    int m = (k + 7) / 8 < 2 ? 2 : (k + 7) / 8;
    if (m > k)
        m = k;
    double w = -log(1 - tolerance), anchor = x[k - m], cut = anchor - w, level = 0;
    double *d = util_xmalloc(sizeof(double) * (size_t)k);
    /* the window first cuts at the tolerance below the anchor; noise wider than that moves the
     * cut to three spreads below the level (else the window cuts the population's own lower
     * tail: its level comes out high and its spread narrow), never below twice the tolerance
     * under the anchor */
    for (int pass = 0; pass < 4; pass++) {
        int first = k, up = 0;
        while (first > 0 && x[first - 1] >= cut)
            first--;
        out->support = k - first;
        memcpy(d, x + first, sizeof(double) * (size_t)out->support);
        level = util_median(d, out->support);
        for (int i = first; i < k; i++)
            if (x[i] >= level)
                d[up++] = x[i] - level;
        out->spread = up ? 1.4826 * util_median(d, up) : 0;
        cut = fmax(level - fmax(w, 3 * out->spread), anchor - 2 * w);
    }
    out->level = exp(level);
    out->bound = exp(level - fmax(w, 3 * out->spread));
    out->cut = exp(level - w);
    /* the level stands for the class when a third of it (two at least) backs it; noise that
     * hides twice the tolerance leaves the values between three spreads and the tolerance below
     * the level unjudged (a value further off is a fault whatever the noise) */
    int need = (k + 2) / 3 < 2 ? 2 : (k + 2) / 3;
    out->too_spread = k >= 3 && out->support < need;
    out->wide = k >= 3 && 3 * out->spread > 2 * w;
    free(d);
    free(x);
}

double survey_upper_spread(const double *x, int n, double center)
{
    double *d = util_xmalloc(sizeof(double) * (size_t)(n + 1));
    int up = 0;
    for (int i = 0; i < n; i++)
        if (x[i] >= center)
            d[up++] = x[i] - center;
    double spread = up >= 4 ? 1.4826 * util_median(d, up) : 0;
    free(d);
    return spread;
}

struct edge {
    int a, b;
    double v; /* log busbw */
};

static int by_ends(const void *x, const void *y)
{
    const struct edge *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    return p->v < q->v ? -1 : p->v > q->v;
}

/* The pairs measured, one edge per pair of nodes with the median of its values (sorted). */
static int collapse(const struct survey_pair *pairs, int npairs, struct edge **out)
{
    struct edge *e = util_xmalloc(sizeof(*e) * (size_t)(npairs + 1));
    int n = 0, k = 0;
    for (int p = 0; p < npairs; p++)
        if (pairs[p].busbw > 0 && !pairs[p].bisected)
            e[n++] = (struct edge){pairs[p].a < pairs[p].b ? pairs[p].a : pairs[p].b,
                                   pairs[p].a < pairs[p].b ? pairs[p].b : pairs[p].a,
                                   log(pairs[p].busbw)};
    qsort(e, (size_t)n, sizeof(*e), by_ends);
    double *run = util_xmalloc(sizeof(double) * (size_t)(n + 1));
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && e[j].a == e[i].a && e[j].b == e[i].b) {
            run[j - i] = e[j].v;
            j++;
        }
        e[k++] = (struct edge){e[i].a, e[i].b, util_median(run, j - i)};
        i = j;
    }
    free(run);
    *out = e;
    return k;
}

/*
 * A pair runs at the slower node's speed: busbw(a, b) ~ min(cap a, cap b). A node's capacity is
 * then seen in its pairs with partners no slower than it: start from its best pair, then take
 * the median of its pairs with partners whose capacity is at least its own less the tolerance,
 * a few times over. A slow partner does not drag a node down; a node whose partners were all
 * slow shows their speed until it meets a fast one (the focused rounds see to that).
 */
void survey_capacities(int nnodes, const struct survey_pair *pairs, int npairs, double tolerance,
                       const double *window, double *cap)
{
    struct edge *e;
    int ne = collapse(pairs, npairs, &e);
    int *deg = util_xcalloc((size_t)nnodes + 1, sizeof(int)),
        *adj = util_xmalloc(sizeof(int) * (size_t)(2 * ne + 1));
    double *c = util_xmalloc(sizeof(double) * (size_t)(nnodes + 1)),
           *next = util_xmalloc(sizeof(double) * (size_t)(nnodes + 1));
    double *vals = util_xmalloc(sizeof(double) * (size_t)(2 * ne + 1)), w = -log(1 - tolerance);
    for (int i = 0; i < ne; i++)
        deg[e[i].a + 1]++, deg[e[i].b + 1]++;
    for (int i = 0; i < nnodes; i++)
        deg[i + 1] += deg[i];
    int *fill = util_xcalloc((size_t)nnodes + 1, sizeof(int));
    for (int i = 0; i < ne; i++) {
        adj[deg[e[i].a] + fill[e[i].a]++] = i;
        adj[deg[e[i].b] + fill[e[i].b]++] = i;
    }
    for (int i = 0; i < nnodes; i++) {
        c[i] = -INFINITY;
        for (int k = deg[i]; k < deg[i + 1]; k++)
            c[i] = fmax(c[i], e[adj[k]].v);
    }
    for (int round = 0; round < 6; round++) {
        for (int i = 0; i < nnodes; i++) {
            int n = 0;
            for (int k = deg[i]; k < deg[i + 1]; k++) {
                const struct edge *x = &e[adj[k]];
                if (c[x->a == i ? x->b : x->a] >= c[i] - (window ? window[i] : w))
                    vals[n++] = x->v;
            }
            next[i] = n ? util_median(vals, n) : c[i];
        }
        memcpy(c, next, sizeof(double) * (size_t)nnodes);
    }
    for (int i = 0; i < nnodes; i++)
        cap[i] = deg[i + 1] > deg[i] ? exp(c[i]) : 0;
    free(fill);
    free(vals);
    free(next);
    free(c);
    free(adj);
    free(deg);
    free(e);
}

/* The NVLinks a matrix row names ("GPU NV18 NV18 ...|PHB ..."): the sum of its NVk. */
static long nvlinks_of(const char *row)
{
    long n = 0;
    for (const char *p = row; p && (p = strstr(p, "NV")); p += 2)
        n += strtol(p + 2, NULL, 10);
    return n;
}

json_t *survey_class_facts(const json_t *key)
{
    json_t *gpu = json_object_get(key, "gpu"), *nics = json_object_get(key, "nics"), *row;
    const char *model = json_string_value(json_array_get(json_object_get(gpu, "models"), 0));
    long gbps = 0, nvlinks = 0;
    size_t i;
    json_array_foreach(nics, i, row) {
        const char *colon = json_string_value(row) ? strchr(json_string_value(row), ':') : NULL;
        gbps += colon ? strtol(colon + 1, NULL, 10) : 0;
    }
    json_array_foreach(json_object_get(key, "matrix"), i, row) {
        const char *r = json_string_value(row);
        if (r && !strncmp(r, "GPU", 3))
            nvlinks += nvlinks_of(r);
    }
    json_t *f = json_pack("{s:s,s:I,s:I,s:I,s:I}", "gpu_model", model ? model : "?", "gpus",
                          json_integer_value(json_object_get(gpu, "count")), "nics",
                          (json_int_t)json_array_size(nics), "nic_gbps", (json_int_t)gbps,
                          "nvlinks", (json_int_t)nvlinks);
    json_t *sw = json_object_get(key, "nvswitches");
    json_object_set_new(f, "nvswitches",
                        json_integer(json_is_integer(sw) ? json_integer_value(sw) : 0));
    return f;
}

json_t *survey_facts_differ(const json_t *a, const json_t *b, int *lesser)
{
    json_t *d = json_object(), *va;
    const char *k;
    int less = 0, more = 0;
    json_object_foreach((json_t *)a, k, va) {
        json_t *vb = json_object_get(b, k);
        if (json_equal(va, vb))
            continue;
        json_object_set_new(d, k, json_pack("[OO]", va, vb ? vb : json_null()));
        if (json_is_integer(va) && json_is_integer(vb) &&
            json_integer_value(va) < json_integer_value(vb))
            less = 1;
        else
            more = 1;
    }
    if (lesser)
        *lesser = less && !more;
    return d;
}
