/* SPDX-License-Identifier: MIT */
/*
 * The survey's plan and verdicts (survey.h says what they are). The plan depends only on the
 * seed and the numbers measured, so a resumed survey replays its recorded launches in order.
 */
#include "survey/internal.h"
#include "survey/survey.h"
#include "sweep/sweep.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"
#include "util/log.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void survey_defaults(struct survey *s)
{
    if (!s->size)
        s->size = 32u << 20;
    if (!s->matchings)
        s->matchings = 3;
    if (s->tolerance <= 0)
        s->tolerance = 0.15;
    if (!s->seed)
        s->seed = 1;
    s->rng = 0x9E3779B97F4A7C15ULL ^ s->seed;
}

static unsigned long long next_random(struct survey *s)
{
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    return s->rng;
}

/* ---- launches, recorded and replayed ---- */

static json_t *groups_json(const struct survey *s, const struct survey_group *g, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) {
        json_t *hosts = json_pack("[s]", s->nodes[g[i].a].host);
        if (g[i].b >= 0)
            json_array_append_new(hosts, json_string(s->nodes[g[i].b].host));
        json_array_append_new(a, hosts);
    }
    return a;
}

/* Launches to measure one round of n groups. */
static int launches_for(const struct survey *s, int groups)
{
    if (groups <= 0)
        return 0;
    return s->max_groups > 0 && groups > s->max_groups
               ? (groups + s->max_groups - 1) / s->max_groups
               : 1;
}

/* The nodes of a class that the whole-cluster stage measures (not excluded), into g when given. */
static int whole_members(const struct survey *s, const char *cls, struct survey_group *g)
{
    int n = 0;
    for (int i = 0; i < s->nnodes; i++)
        if (s->nodes[i].class_id && !strcmp(s->nodes[i].class_id, cls) && !survey_excluded(s, i)) {
            if (g)
                g[n] = (struct survey_group){i, -1};
            n++;
        }
    return n;
}

/* The whole-cluster launches: one per class with two such nodes or more. */
static int whole_launches(const struct survey *s)
{
    const char *cls;
    json_t *c;
    int n = 0;
    json_object_foreach(s->classes, cls, c) n += whole_members(s, cls, NULL) >= 2;
    return n;
}

/*
 * The launches a survey takes when nothing is slow or fails: the nodes alone, the pair rounds
 * (all classes' pairs in each), the whole cluster. The repeat and focused rounds of suspects and
 * the bisections of failed launches come on top.
 */
static int launches_planned(const struct survey *s)
{
    const char *cls;
    json_t *c;
    int nodes = 0, pairs = 0, rounds = 0;
    json_object_foreach(s->classes, cls, c)
    {
        int n = (int)json_integer_value(json_object_get(c, "nodes"));
        nodes += n;
        pairs += n / 2;
        if (n - 1 + n % 2 > rounds) /* the circle method's rounds: every pair once */
            rounds = n - 1 + n % 2;
    }
    if (!s->all_pairs && s->matchings < rounds)
        rounds = s->matchings;
    return launches_for(s, nodes) + (pairs ? rounds * launches_for(s, pairs) : 0) +
           whole_launches(s);
}

static void show_progress(struct survey *s, const char *stage, int n, int rc, double wall)
{
    if (util_log_level() < UTIL_LOG_INFO)
        return;
    /* the launches left at the mean time per launch so far; in the last stage, its own */
    int left = launches_planned(s) - s->rounds;
    if (strcmp(stage, "whole") == 0) /* this one is not in s->whole yet */
        left = whole_launches(s) - (int)json_array_size(s->whole) - 1;
    else if (left < 1)
        left = 1;
    if (left < 0)
        left = 0;
    double per = s->rounds ? s->wall_s / s->rounds : wall;
    const char *predicted = s->probe.predicted ? " predicted" : ""; /* the sim's times */
    fprintf(stderr, "[launch %d of ~%d] %s: %d group%s %s (%.1f s%s) | ETA %.0f s%s\n", s->rounds,
            s->rounds + left, stage, n, n == 1 ? "" : "s", rc ? "FAILED" : "ok", wall, predicted,
            per * left, predicted);
}

/* DIR/launches.jsonl cut back to the launches replayed so far (written whole, then renamed). */
static int cut_records(struct survey *s)
{
    struct util_buf b = UTIL_BUF_INIT;
    for (size_t i = 0; i < s->replayed; i++) {
        char *line = json_dumps(json_array_get(s->recorded, i), JSON_COMPACT | JSON_PRESERVE_ORDER);
        util_buf_addf(&b, "%s\n", line ? line : "{}");
        free(line);
    }
    char path[1100];
    snprintf(path, sizeof(path), "%s/launches.jsonl", s->dir);
    int rc = util_file_write_atomic(path, b.data ? b.data : "", b.len) ? UTIL_EIO : 0;
    util_buf_release(&b);
    return rc;
}

/*
 * One launch of the groups (or of the whole list when whole is set): from the record on
 * --resume, else from the probe, then appended to DIR/launches.jsonl. Returns what the probe
 * returned.
 */
int survey_launch(struct survey *s, const char *stage, const struct survey_group *g, int n,
                  int whole, double *busbw)
{
    json_t *groups = groups_json(s, g, n);
    if (whole) { /* one group: every listed node */
        json_t *all = json_array();
        for (int i = 0; i < n; i++)
            json_array_append_new(all, json_string(s->nodes[g[i].a].host));
        json_decref(groups);
        groups = json_pack("[o]", all);
    }
    int rc;
    json_t *rec = s->recorded ? json_array_get(s->recorded, s->replayed) : NULL;
    if (rec && json_equal(json_object_get(rec, "groups"), groups) &&
        !strcmp(util_json_str(rec, "stage", ""), stage) &&
        json_integer_value(json_object_get(rec, "size")) == (json_int_t)s->size &&
        !strcmp(util_json_str(rec, "backend", ""), s->backend)) {
        s->replayed++;
        rc = json_is_true(json_object_get(rec, "ok")) ? 0 : 1;
        json_t *b = json_object_get(rec, "busbw");
        for (int i = 0; !rc && i < (whole ? 1 : n); i++)
            busbw[i] = json_real_value(json_array_get(b, (size_t)i));
        s->rounds++;
        s->wall_s += json_real_value(json_object_get(rec, "wall_s"));
        s->launches_failed += rc;
        json_decref(groups);
        return rc;
    }
    if (rec) { /* the record and the plan part here: keep what matched, measure from here */
        warning("%s/launches.jsonl: launch %zu differs from the plan (another seed, size or "
                "backend, or --groups-per-launch?): the %zu launches that match are kept, the rest "
                "measured again",
                s->dir, s->replayed + 1, s->replayed);
        int err = cut_records(s);
        json_decref(s->recorded);
        s->recorded = NULL;
        if (err) {
            json_decref(groups);
            return err;
        }
    }
    struct util_buf why = UTIL_BUF_INIT;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (whole) {
        int *nodes = malloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++)
            nodes[i] = g[i].a;
        rc = s->probe.whole(s, nodes, n, busbw, &why);
        free(nodes);
    } else {
        rc = s->probe.groups(s, g, n, busbw, &why);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = s->probe.launch_s
                      ? s->probe.launch_s(s, whole ? 1 : n)
                      : (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (rc < 0) {
        json_decref(groups);
        util_buf_release(&why);
        return rc;
    }
    s->rounds++;
    s->wall_s += wall;
    s->launches_failed += rc;
    json_t *b = json_array();
    for (int i = 0; !rc && i < (whole ? 1 : n); i++)
        json_array_append_new(b, json_real(busbw[i]));
    json_t *line = json_pack("{s:s,s:s,s:I,s:o,s:b,s:o,s:f,s:s,s:O}", "stage", stage, "backend",
                             s->backend, "size", (json_int_t)s->size, "groups", groups, "ok", !rc,
                             "busbw", b, "wall_s", wall, "why", util_buf_str(&why), "settings",
                             s->settings); /* survey_run set them */
    util_buf_release(&why);
    char path[1100];
    snprintf(path, sizeof(path), "%s/launches.jsonl", s->dir);
    int err = sweep_results_append(path, line);
    json_decref(line);
    show_progress(s, stage, whole ? 1 : n, rc, wall);
    return err ? err : rc;
}

/*
 * Measures the groups, at most max_groups to a launch; a failed launch is split in halves until
 * every failing group stands alone (busbw -1). launch (when not NULL): the launch each group's
 * value came from. Returns 0 or an error code.
 */
static int measure(struct survey *s, const char *stage, const struct survey_group *g, int n,
                   double *busbw, int *launch)
{
    if (n == 0)
        return 0;
    if (s->max_groups > 0 && n > s->max_groups) {
        /* the fewest launches of at most max_groups, as even as they go (16 by 3: 3,3,3,3,2,2,
         * not 3,3,3,3,3,1 with one node measured under no load) */
        int k = launches_for(s, n), rc = 0;
        for (int j = 0, i = 0; !rc && j < k; j++) {
            int len = n / k + (j < n % k);
            rc = measure(s, stage, g + i, len, busbw + i, launch ? launch + i : NULL);
            i += len;
        }
        return rc;
    }
    int rc = survey_launch(s, stage, g, n, 0, busbw);
    for (int i = 0; launch && rc >= 0 && i < n; i++)
        launch[i] = s->rounds;
    if (rc <= 0)
        return rc;
    if (n == 1) {
        busbw[0] = -1;
        return 0;
    }
    int half = n / 2;
    rc = measure(s, stage, g, half, busbw, launch);
    return rc ? rc
              : measure(s, stage, g + half, n - half, busbw + half, launch ? launch + half : NULL);
}

/* ---- statistics ---- */

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of x[0..k) (sorted here). */
static double median_of(double *x, int k)
{
    qsort(x, (size_t)k, sizeof(double), by_value);
    return k % 2 ? x[k / 2] : (x[k / 2 - 1] + x[k / 2]) / 2;
}

/*
 * The median of the n values > 0 (failed ones, -1, left out) and their spread, a relative sigma:
 * 1.4826 x the median distance from the median of the logarithms at or above it. Noise is
 * multiplicative (a busy core, a retransmission) and symmetric in logarithms; faults are slow
 * values, below the median: measured on the upper half, the spread is that of the noise even
 * when a bad node's pairs are a third of the class's, where a plain MAD would take them for
 * noise and call nothing slow.
 */
static void robust(const double *v, int n, double *median, double *spread)
{
    double *x = malloc(sizeof(double) * (size_t)(n ? n : 1));
    int k = 0, up = 0;
    for (int i = 0; i < n; i++)
        if (v[i] > 0)
            x[k++] = log(v[i]);
    *median = *spread = 0;
    if (k) {
        double m = median_of(x, k);
        for (int i = 0; i < k; i++)
            if (x[i] >= m)
                x[up++] = x[i] - m;
        *spread = 1.4826 * median_of(x, up);
        *median = exp(m);
    }
    free(x);
}

/* The bound under which a value of this class is slow: the tolerance below the median, or three
 * relative sigmas when the class is noisier than that. One slow value is no verdict: a node is
 * slow twice, a link with two thirds of its partners, a path on every measurement. */
static double slow_bound(const struct survey *s, double median, double spread)
{
    return median * exp(-fmax(-log(1 - s->tolerance), 3 * spread));
}

/* ---- verdicts ---- */

static void add_verdict(struct survey *s, const char *kind, int a, int b, json_t *evidence,
                        const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void add_verdict(struct survey *s, const char *kind, int a, int b, json_t *evidence,
                        const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (b >= 0 && b < a) { /* a path's hosts in the cluster's order */
        int t = a;
        a = b;
        b = t;
    }
    json_t *hosts = json_pack("[s]", s->nodes[a].host);
    if (b >= 0)
        json_array_append_new(hosts, json_string(s->nodes[b].host));
    json_array_append_new(s->verdicts, json_pack("{s:s,s:o,s:o,s:s}", "kind", kind, "hosts", hosts,
                                                 "evidence", evidence, "text", text));
    if (b < 0) /* a path names two hosts and excludes neither */
        s->nodes[a].verdict = (int)json_array_size(s->verdicts);
}

static int node_ok(const struct survey *s, int i)
{
    return s->nodes[i].class_id && !s->nodes[i].verdict;
}

static int same_class(const struct survey *s, int i, int j)
{
    return !strcmp(s->nodes[i].class_id, s->nodes[j].class_id);
}

static void add_pair(struct survey *s, int a, int b, double busbw, int round, int focused)
{
    if (s->npairs == s->pairs_cap) {
        s->pairs_cap = s->pairs_cap ? 2 * s->pairs_cap : 64;
        s->pairs = realloc(s->pairs, sizeof(*s->pairs) * (size_t)s->pairs_cap);
    }
    s->pairs[s->npairs] = (struct survey_pair){a, b, busbw, round, focused};
    int ends[2] = {a, b};
    for (int e = 0; e < 2; e++) { /* each node's own list: the verdicts look at a node's pairs */
        struct survey_node *x = &s->nodes[ends[e]];
        if (x->npairs == x->pairs_cap) {
            x->pairs_cap = x->pairs_cap ? 2 * x->pairs_cap : 8;
            x->pair_index = realloc(x->pair_index, sizeof(int) * (size_t)x->pairs_cap);
        }
        x->pair_index[x->npairs++] = s->npairs;
    }
    s->npairs++;
}

/*
 * Each class's median and spread, into s->classes: of its nodes alone (alone), or of its pairs
 * of the random rounds (a focused round measures suspects again and again: counted, they would
 * make a bad node look like the class).
 */
static void store_class_stats(struct survey *s, int alone)
{
    double *v = malloc(sizeof(double) * (size_t)(s->nnodes + s->npairs + 1)), median, spread;
    const char *cls;
    json_t *c;
    json_object_foreach(s->classes, cls, c)
    {
        int k = 0;
        for (int i = 0; alone && i < s->nnodes; i++)
            if (s->nodes[i].class_id && !strcmp(s->nodes[i].class_id, cls))
                v[k++] = s->nodes[i].intra;
        for (int p = 0; !alone && p < s->npairs; p++)
            if (!s->pairs[p].focused && !strcmp(s->nodes[s->pairs[p].a].class_id, cls))
                v[k++] = s->pairs[p].busbw;
        robust(v, k, &median, &spread);
        json_object_set_new(c, alone ? "alone_median" : "pair_median", json_real(median));
        json_object_set_new(c, alone ? "alone_spread" : "pair_spread", json_real(spread));
    }
    free(v);
}

static json_t *class_entry(struct survey *s, const char *cls)
{
    json_t *c = json_object_get(s->classes, cls);
    if (!c) {
        c = json_pack("{s:i}", "nodes", 0);
        json_object_set_new(s->classes, cls, c);
    }
    return c;
}

/* Stage 1: the map. Nodes that did not answer get their verdict now. */
static int stage_map(struct survey *s)
{
    int rc = s->probe.map(s);
    if (rc)
        return rc;
    for (int i = 0; i < s->nnodes; i++) {
        struct survey_node *n = &s->nodes[i];
        if (!n->class_id) {
            add_verdict(s, "node-unreachable", i, -1, json_pack("{s:s}", "map", n->why),
                        "%s did not answer the map: %s", n->host, n->why);
            continue;
        }
        json_t *c = class_entry(s, n->class_id);
        json_object_set_new(c, "nodes",
                            json_integer(json_integer_value(json_object_get(c, "nodes")) + 1));
    }
    return 0;
}

/* Stage 2: every node alone, all at once; the slow ones measured again before a verdict. */
static int stage_alone(struct survey *s)
{
    struct survey_group *g = malloc(sizeof(*g) * (size_t)(s->nnodes + 1));
    double *bw = malloc(sizeof(double) * (size_t)(s->nnodes + 1));
    int n = 0, rc;
    for (int i = 0; i < s->nnodes; i++)
        if (node_ok(s, i))
            g[n++] = (struct survey_group){i, -1};
    int failed = s->launches_failed;
    rc = measure(s, "alone", g, n, bw, NULL);
    for (int k = 0; !rc && k < n; k++)
        s->nodes[g[k].a].intra = bw[k];
    if (!rc && s->launches_failed > failed && s->max_groups != 1) {
        /* bisected: the numbers came from launches of different sizes (a node alone in a small
         * launch has the machine to itself); the nodes that did not fail, all at once again, so
         * that a class is compared under one load */
        int m = 0;
        for (int k = 0; k < n; k++)
            if (bw[k] >= 0)
                g[m++] = g[k];
        rc = m > 1 ? measure(s, "alone-again", g, m, bw, NULL) : 0;
        for (int k = 0; !rc && m > 1 && k < m; k++)
            s->nodes[g[k].a].intra = bw[k];
        n = m;
    }
    store_class_stats(s, 1);
    /* suspects: below their class's bound, measured again together */
    int ns = 0;
    for (int k = 0; !rc && k < n; k++) {
        struct survey_node *x = &s->nodes[g[k].a];
        json_t *cc = json_object_get(s->classes, x->class_id);
        double im = json_real_value(json_object_get(cc, "alone_median"));
        double imad = json_real_value(json_object_get(cc, "alone_spread"));
        if (x->intra >= 0 && x->intra < slow_bound(s, im, imad))
            g[ns++] = g[k];
    }
    if (!rc && ns)
        rc = measure(s, "alone-repeat", g, ns, bw, NULL);
    for (int k = 0; !rc && k < ns; k++)
        s->nodes[g[k].a].intra_rep = bw[k];
    for (int i = 0; !rc && i < s->nnodes; i++) {
        struct survey_node *x = &s->nodes[i];
        if (!node_ok(s, i))
            continue;
        double im = json_real_value(
            json_object_get(json_object_get(s->classes, x->class_id), "alone_median"));
        double imad = json_real_value(
            json_object_get(json_object_get(s->classes, x->class_id), "alone_spread"));
        if (x->intra < 0)
            add_verdict(s, "node-fails", i, -1, json_pack("{s:s}", "alone", "failed or hung"),
                        "%s fails on its own: its launch failed or hung, alone too", x->host);
        else if (x->intra_rep && x->intra_rep < slow_bound(s, im, imad))
            add_verdict(
                s, "node-slow", i, -1,
                json_pack("{s:f,s:o,s:f,s:f}", "busbw", x->intra, "repeat",
                          x->intra_rep > 0 ? json_real(x->intra_rep) : json_string("failed"),
                          "class_median", im, "class_spread", imad),
                "%s is slow on its own: %.2f GB/s alone, then %s; its class %.2f GB/s (spread "
                "%.0f%%)",
                x->host, x->intra, x->intra_rep > 0 ? "slow again" : "failed", im, 100 * imad);
    }
    free(g);
    free(bw);
    return rc;
}

/* A random perfect matching of the listed nodes (one left out when odd), as groups. */
static int paired(const struct survey *s, int a, int b);

/* A random perfect matching of the listed nodes (one left out when odd), as groups: of 20 tries,
 * the one with the fewest pairs measured before (a pair measured again tells nothing new). */
static int matching(struct survey *s, const int *nodes, int n, struct survey_group *g)
{
    int *p = malloc(sizeof(int) * (size_t)(n + 1)), *best = malloc(sizeof(int) * (size_t)(n + 1));
    int fewest = n + 1;
    for (int t = 0; t < 20 && fewest > 0; t++) {
        memcpy(p, nodes, sizeof(int) * (size_t)n);
        for (int i = n - 1; i > 0; i--) {
            int j = (int)(next_random(s) % (unsigned long long)(i + 1));
            int x = p[i];
            p[i] = p[j];
            p[j] = x;
        }
        int repeats = 0;
        for (int i = 0; i + 1 < n; i += 2)
            repeats += paired(s, p[i], p[i + 1]);
        if (repeats < fewest) {
            fewest = repeats;
            memcpy(best, p, sizeof(int) * (size_t)n);
        }
    }
    int k = 0;
    for (int i = 0; i + 1 < n; i += 2)
        g[k++] = (struct survey_group){best[i], best[i + 1]};
    free(p);
    free(best);
    return k;
}

static int run_pairs(struct survey *s, const char *stage, struct survey_group *g, int n)
{
    double *bw = malloc(sizeof(double) * (size_t)(n + 1));
    int *launch = malloc(sizeof(int) * (size_t)(n + 1));
    int rc = measure(s, stage, g, n, bw, launch);
    for (int k = 0; !rc && k < n; k++)
        add_pair(s, g[k].a, g[k].b, bw[k], launch[k], strcmp(stage, "pairs") != 0);
    free(launch);
    free(bw);
    return rc;
}

/* The healthy nodes of one class so far. */
static int class_nodes(struct survey *s, const char *cls, int *out)
{
    int n = 0;
    for (int i = 0; i < s->nnodes; i++)
        if (node_ok(s, i) && !strcmp(s->nodes[i].class_id, cls))
            out[n++] = i;
    return n;
}

/* Stage 3: random perfect matchings of each class (or every pair, in n-1 rounds, the circle). */
static int stage_pairs(struct survey *s)
{
    int *nodes = malloc(sizeof(int) * (size_t)(s->nnodes + 1));
    struct survey_group *g = malloc(sizeof(*g) * (size_t)(s->nnodes + 1));
    const char *cls;
    json_t *c;
    int rc = 0;
    /* all classes' pairs share a launch: rounds are cluster-wide; a class has n-1 rounds of new
     * pairs at most (2 nodes: one pair, measured once, not once per matching) */
    int rounds = 0;
    json_object_foreach(s->classes, cls, c)
    {
        int n = class_nodes(s, cls, nodes);
        rounds = rounds > n - 1 + (n % 2) ? rounds : n - 1 + (n % 2);
    }
    if (!s->all_pairs && s->matchings < rounds)
        rounds = s->matchings;
    for (int r = 0; !rc && r < rounds; r++) {
        int k = 0;
        json_object_foreach(s->classes, cls, c)
        {
            int n = class_nodes(s, cls, nodes);
            if (!s->all_pairs) {
                if (r < n - 1 + (n % 2))
                    k += matching(s, nodes, n, g + k);
                continue;
            }
            int m = n + (n % 2); /* the circle method: node m-1 fixed, the others rotate */
            if (r >= m - 1)
                continue;
            for (int i = 0; i < m / 2; i++) {
                int x = i == 0 ? m - 1 : (r + i) % (m - 1), y = (r + m - 1 - i) % (m - 1);
                if (x < n && y < n && x != y)
                    g[k++] = (struct survey_group){nodes[x], nodes[y]};
            }
        }
        rc = run_pairs(s, "pairs", g, k);
    }
    free(nodes);
    free(g);
    return rc;
}

static int pair_slow(const struct survey *s, const struct survey_pair *p)
{
    json_t *c = json_object_get(s->classes, s->nodes[p->a].class_id);
    double pm = json_real_value(json_object_get(c, "pair_median"));
    double pmad = json_real_value(json_object_get(c, "pair_spread"));
    return p->busbw < 0 || p->busbw < slow_bound(s, pm, pmad);
}

/*
 * Per node: distinct partners measured (without a node verdict of their own), those slow with it
 * and those failing with it, each partner judged on all its measurements with the node: slow
 * (failed) when most of them are (a slow first measurement that a repeat found fine is noise).
 */
static void partner_counts(const struct survey *s, int i, int *partners, int *slow, int *failed)
{
    const struct survey_node *n = &s->nodes[i];
    *partners = *slow = *failed = 0;
    for (int k = 0; k < n->npairs; k++) {
        const struct survey_pair *x = &s->pairs[n->pair_index[k]];
        int other = x->a == i ? x->b : x->a, seen = 0, count = 0, nslow = 0, nfail = 0;
        for (int q = 0; q < k; q++) {
            const struct survey_pair *y = &s->pairs[n->pair_index[q]];
            seen |= y->a == other || y->b == other;
        }
        if (seen || !node_ok(s, other))
            continue;
        for (int q = k; q < n->npairs; q++) {
            const struct survey_pair *y = &s->pairs[n->pair_index[q]];
            if (y->a == other || y->b == other) {
                count++;
                nslow += pair_slow(s, y);
                nfail += y->busbw < 0;
            }
        }
        (*partners)++;
        *slow += 2 * nslow > count;
        *failed += 2 * nfail > count;
    }
}

static int paired(const struct survey *s, int a, int b)
{
    for (int k = 0; k < s->nodes[a].npairs; k++) {
        const struct survey_pair *y = &s->pairs[s->nodes[a].pair_index[k]];
        if (y->a == b || y->b == b)
            return 1;
    }
    return 0;
}

/* A node slow with two thirds (and at least two) of its partners so far. */
static int suspect(const struct survey *s, int i)
{
    int partners, slow, failed;
    partner_counts(s, i, &partners, &slow, &failed);
    return slow >= 2 && 3 * slow >= 2 * partners;
}

/*
 * Stage 4, the focused rounds: each slow pair that no suspect node explains measured again (in
 * as many rounds of disjoint pairs as that takes, at most 4), then each node touched by a slow
 * pair with a fresh partner whose pairs are all fine so far (2 rounds).
 */
static int stage_focus(struct survey *s)
{
    store_class_stats(s, 0);
    int n0 = s->npairs, k = 0, rc = 0;
    struct survey_group *g = malloc(sizeof(*g) * (size_t)(s->nnodes + 1));
    char *used = calloc((size_t)s->nnodes + 1, 1), *touched = calloc((size_t)s->nnodes + 1, 1);
    char *sus = calloc((size_t)s->nnodes + 1, 1), *repeated = calloc((size_t)n0 + 1, 1);
    for (int i = 0; i < s->nnodes; i++)
        sus[i] = node_ok(s, i) && suspect(s, i);
    for (int round = 0, left = 1; !rc && left && round < 4; round++) {
        memset(used, 0, (size_t)s->nnodes);
        k = left = 0;
        for (int p = 0; p < n0; p++) {
            struct survey_pair *x = &s->pairs[p];
            if (!pair_slow(s, x) || !node_ok(s, x->a) || !node_ok(s, x->b))
                continue;
            touched[x->a] = touched[x->b] = 1;
            if (repeated[p] || sus[x->a] || sus[x->b])
                continue;
            if (used[x->a] || used[x->b]) {
                left = 1;
                continue;
            }
            used[x->a] = used[x->b] = 1;
            repeated[p] = 1;
            g[k++] = (struct survey_group){x->a, x->b};
        }
        rc = run_pairs(s, "repeat", g, k);
    }
    free(sus);
    free(repeated);
    for (int rounds = 0; !rc && rounds < 2; rounds++) {
        memset(used, 0, (size_t)s->nnodes);
        k = 0;
        for (int t = 0; t < s->nnodes; t++) {
            if (!touched[t] || used[t])
                continue;
            for (int c = 0; c < s->nnodes; c++) {
                int partners, slow, failed;
                if (c == t || touched[c] || used[c] || !node_ok(s, c) || !same_class(s, c, t))
                    continue;
                partner_counts(s, c, &partners, &slow, &failed);
                if (slow || paired(s, t, c))
                    continue;
                used[t] = used[c] = 1;
                g[k++] = (struct survey_group){t, c};
                break;
            }
        }
        rc = run_pairs(s, "focus", g, k);
    }
    free(g);
    free(used);
    free(touched);
    return rc;
}

static int pair_measures(const struct survey *s, int a, int b, double *v, int max)
{
    int n = 0;
    for (int k = 0; k < s->nodes[a].npairs && n < max; k++) {
        const struct survey_pair *y = &s->pairs[s->nodes[a].pair_index[k]];
        if (y->a == b || y->b == b)
            v[n++] = y->busbw;
    }
    return n;
}

/* Node verdicts from the pairs (slow or failing with at least two partners, two thirds of its
 * partners), then link verdicts for the slow pairs neither node explains. */
static void pair_verdicts(struct survey *s)
{
    /* the worst node first: its verdict explains its partners' slow pairs, which then no longer
     * count against them (two bad NICs that met in a round do not condemn a third node) */
    for (;;) {
        int i = -1, partners, slow, failed;
        double worst = 0;
        for (int j = 0; j < s->nnodes; j++) {
            if (!node_ok(s, j) || !s->nodes[j].npairs)
                continue;
            partner_counts(s, j, &partners, &slow, &failed);
            if (slow >= 2 && 3 * slow >= 2 * partners && (double)slow / partners > worst) {
                worst = (double)slow / partners;
                i = j;
            }
        }
        if (i < 0)
            break;
        partner_counts(s, i, &partners, &slow, &failed);
        json_t *c = json_object_get(s->classes, s->nodes[i].class_id);
        json_t *ev =
            json_pack("{s:i,s:i,s:i,s:f,s:f}", "partners", partners, "slow", slow, "failed", failed,
                      "class_pair_median", json_real_value(json_object_get(c, "pair_median")),
                      "alone", s->nodes[i].intra);
        if (failed * 3 >= 2 * partners)
            add_verdict(s, "link-fails", i, -1, ev,
                        "%s fails with %d of its %d partners, though it runs alone: its network "
                        "link (NIC, cable or switch port)",
                        s->nodes[i].host, failed, partners);
        else
            add_verdict(s, "link-slow", i, -1, ev,
                        "%s is slow with %d of its %d partners (class pair median %.2f GB/s) but "
                        "not alone (%.2f GB/s): its network link (NIC, cable or switch port)",
                        s->nodes[i].host, slow, partners,
                        json_real_value(json_object_get(c, "pair_median")), s->nodes[i].intra);
    }
    char *done = calloc((size_t)s->npairs + 1, 1);
    /* only slow pairs are looked at twice below */
    for (int p = 0; p < s->npairs; p++) {
        struct survey_pair *x = &s->pairs[p];
        if (done[p] || !pair_slow(s, x) || !node_ok(s, x->a) || !node_ok(s, x->b))
            continue;
        double v[8];
        int n = 0, all_slow = 1, failed = 0;
        pair_measures(s, x->a, x->b, v, 8); /* the evidence: the first 8 */
        for (int k = 0; k < s->nodes[x->a].npairs; k++) {
            int q = s->nodes[x->a].pair_index[k];
            const struct survey_pair *y = &s->pairs[q];
            if (y->a == x->b || y->b == x->b) {
                done[q] = 1;
                all_slow &= pair_slow(s, y);
                failed += y->busbw < 0;
                n++;
            }
        }
        int pa, sa, fa, pb, sb, fb;
        partner_counts(s, x->a, &pa, &sa, &fa);
        partner_counts(s, x->b, &pb, &sb, &fb);
        /* one slow measurement, fine on repeat, is noise; and a path needs both nodes fine with
         * some other partner */
        if (n < 2 || !all_slow || pa - sa < 1 || pb - sb < 1)
            continue;
        json_t *c = json_object_get(s->classes, s->nodes[x->a].class_id);
        json_t *runs = json_array();
        for (int i = 0; i < n && i < 8; i++)
            json_array_append_new(runs, json_real(v[i]));
        json_t *ev = json_pack("{s:o,s:f,s:i,s:i,s:i,s:i}", "busbw", runs, "class_pair_median",
                               json_real_value(json_object_get(c, "pair_median")), "a_partners", pa,
                               "a_slow", sa, "b_partners", pb, "b_slow", sb);
        if (failed == n)
            add_verdict(s, "path-fails", x->a, x->b, ev,
                        "the path %s - %s fails (%d of %d launches) while both nodes work with "
                        "other partners: a route through the fabric between them",
                        s->nodes[x->a].host, s->nodes[x->b].host, failed, n);
        else
            add_verdict(s, "path-slow", x->a, x->b, ev,
                        "the path %s - %s is slow (%d measurements, class pair median %.2f "
                        "GB/s) while both nodes are fine with other partners: a route through "
                        "the fabric between them",
                        s->nodes[x->a].host, s->nodes[x->b].host, n,
                        json_real_value(json_object_get(c, "pair_median")));
    }
    free(done);
}

/* Stage 5: the healthy nodes of each class at once, against the model's prediction. */
static int stage_whole(struct survey *s)
{
    const char *cls;
    json_t *c;
    struct survey_group *g = malloc(sizeof(*g) * (size_t)(s->nnodes + 1));
    int rc = 0;
    json_object_foreach(s->classes, cls, c)
    {
        int n = whole_members(s, cls, g);
        if (n < 2)
            continue;
        double bw = 0;
        rc = survey_launch(s, "whole", g, n, 1, &bw);
        if (rc < 0)
            break;
        double pred = s->probe.predict ? s->probe.predict(s, cls, n) : -1;
        json_t *w =
            json_pack("{s:s,s:i,s:s}", "class", cls, "nodes", n, "outcome", rc ? "failed" : "ok");
        json_object_set_new(w, "busbw", rc ? json_null() : json_real(bw));
        json_object_set_new(w, "predicted_busbw", pred >= 0 ? json_real(pred) : json_null());
        json_object_set_new(w, "measured", json_boolean(!s->probe.predicted));
        json_array_append_new(s->whole, w);
        rc = 0;
    }
    free(g);
    return rc;
}

int survey_excluded(const struct survey *s, int i)
{
    return s->nodes[i].verdict != 0;
}

int survey_run(struct survey *s)
{
    s->verdicts = json_array();
    s->whole = json_array();
    s->classes = json_object();
    if (!s->settings)
        s->settings = json_object();
    if (s->resume) {
        int err = survey_record_load(s);
        if (err)
            return err;
        info("resuming: %zu launches on file are replayed, not made again",
             json_array_size(s->recorded));
    }
    /* a survey that fails from here leaves no earlier survey's files looking current */
    int rc = survey_outputs_clear(s, !s->resume);
    if (!rc)
        rc = stage_map(s);
    if (!rc) /* --allocation: the nodes are known now */
        rc = survey_check_all_pairs(s);
    if (!rc)
        rc = stage_alone(s);
    if (!rc)
        rc = stage_pairs(s);
    if (!rc)
        rc = stage_focus(s);
    if (!rc) {
        store_class_stats(s, 0);
        pair_verdicts(s);
        rc = stage_whole(s);
    }
    return rc;
}

void survey_release(struct survey *s)
{
    for (int i = 0; i < s->nnodes; i++) {
        free(s->nodes[i].host);
        free(s->nodes[i].name);
        free(s->nodes[i].class_id);
        free(s->nodes[i].pair_index);
    }
    free(s->nodes);
    free(s->pairs);
    json_decref(s->verdicts);
    json_decref(s->whole);
    json_decref(s->classes);
    json_decref(s->doctor);
    json_decref(s->recorded);
    json_decref(s->settings);
    if (s->probe.ctx && s->probe.release)
        s->probe.release(s);
}
