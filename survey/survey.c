/* SPDX-License-Identifier: MIT */
/*
 * The survey's plan and verdicts (survey.h says what they are). The plan depends only on the
 * seed and the numbers measured, so a resumed survey replays its recorded launches in order.
 */
#include "model/model.h"
#include "survey/internal.h"
#include "survey/survey.h"
#include "util/buf.h"
#include "util/child.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"
#include "util/jsonl.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/num.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    json_object_foreach(s->classes, cls, c)
        n += whole_members(s, cls, NULL) >= 2;
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
    json_object_foreach(s->classes, cls, c) {
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
    if (strncmp(stage, "whole", 5) == 0) /* this one (and its repeat) not in s->whole yet */
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
/* A record's "longer" (1 when absent: recorded before repeats were longer). */
static json_int_t longer_of(const json_t *rec)
{
    json_t *k = json_object_get(rec, "longer");
    return k ? json_integer_value(k) : 1;
}

/* A group whose busbw is not a positive, finite number measured nothing (a benchmark that prints
 * 0.00 moved no data): its value is a failure, -1, as a group the launch lost. */
static void nothing_is_failure(double *busbw, int n)
{
    for (int i = 0; i < n; i++)
        if (!(busbw[i] > 0) || !isfinite(busbw[i]))
            busbw[i] = -1;
}

int survey_launch(struct survey *s, const char *stage, const struct survey_group *g, int n,
                  int whole, double *busbw)
{
    /* a signal ends the survey between launches (the launch probe's children end at once; the
     * sim's launches are quick, but 65,536 nodes make 40,000 of them) */
    if (util_child_interrupted())
        return UTIL_EINTR;
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
        !strcmp(util_json_str(rec, "backend", ""), s->backend) &&
        longer_of(rec) == (s->longer > 1 ? s->longer : 1)) {
        s->replayed++;
        rc = json_is_true(json_object_get(rec, "ok")) ? 0 : 1;
        json_t *b = json_object_get(rec, "busbw");
        for (int i = 0; !rc && i < (whole ? 1 : n); i++)
            busbw[i] = json_number_value(json_array_get(b, (size_t)i));
        if (!rc)
            nothing_is_failure(busbw, whole ? 1 : n);
        s->rounds++;
        s->wall_s += json_number_value(json_object_get(rec, "wall_s"));
        s->launches_failed += rc;
        json_decref(groups);
        return rc;
    }
    if (rec) { /* the record and the plan part here: keep what matched, measure from here */
        util_warning(
            "%s/launches.jsonl: launch %zu differs from the plan (another seed, size or "
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
    double t0 = util_clock_s();
    if (whole) {
        int *nodes = util_xmalloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++)
            nodes[i] = g[i].a;
        rc = s->probe.whole(s, nodes, n, busbw, &why);
        free(nodes);
    } else {
        rc = s->probe.groups(s, g, n, busbw, &why);
    }
    double wall = s->probe.launch_s ? s->probe.launch_s(s, whole ? 1 : n) : util_clock_s() - t0;
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
    json_t *line =
        json_pack("{s:s,s:s,s:I,s:i,s:o,s:b,s:o,s:f,s:s,s:O}", "stage", stage, "backend",
                  s->backend, "size", (json_int_t)s->size, "longer", s->longer > 1 ? s->longer : 1,
                  "groups", groups, "ok", !rc, "busbw", b, "wall_s", wall, "why",
                  util_buf_str(&why), "settings", s->settings); /* survey_run set them */
    util_buf_release(&why);
    char path[1100];
    snprintf(path, sizeof(path), "%s/launches.jsonl", s->dir);
    int err = util_jsonl_append(path, line);
    json_decref(line);
    show_progress(s, stage, whole ? 1 : n, rc, wall);
    if (!rc) /* recorded as the benchmark said it, judged as nothing measured */
        nothing_is_failure(busbw, whole ? 1 : n);
    return err ? err : rc;
}

/*
 * Measures the groups, at most max_groups to a launch; a failed launch is split in halves until
 * every failing group stands alone (busbw -1). launch (when not NULL): the launch each group's
 * value came from; bisected (when not NULL): 1 for a value from a half of a failed launch (a
 * lighter load than the round's: it locates the failure but is no yardstick). Returns 0 or an
 * error code.
 */
static int measure(struct survey *s, const char *stage, const struct survey_group *g, int n,
                   double *busbw, int *launch, int *bisected);

static const char *class_of(const struct survey *s, const struct survey_group *g)
{
    return s->nodes[g->a].class_id ? s->nodes[g->a].class_id : "";
}

/* The groups of each class in launches of their own, in the order the classes first appear; the
 * numbers go back to the groups' places. */
static int measure_by_class(struct survey *s, const char *stage, const struct survey_group *g,
                            int n, double *busbw, int *launch, int *bisected)
{
    struct survey_group *gg = util_xmalloc(sizeof(*gg) * (size_t)n);
    int *at = util_xmalloc(sizeof(int) * (size_t)n), *ll = util_xcalloc((size_t)n, sizeof(int)),
        *bb = util_xmalloc(sizeof(int) * (size_t)n);
    double *bw = util_xmalloc(sizeof(double) * (size_t)n);
    char *done = util_xcalloc((size_t)n, 1);
    int rc = 0;
    for (int first = 0; !rc && first < n; first++) {
        if (done[first])
            continue;
        int m = 0;
        for (int i = first; i < n; i++)
            if (!done[i] && !strcmp(class_of(s, &g[i]), class_of(s, &g[first]))) {
                done[i] = 1;
                at[m] = i;
                gg[m++] = g[i];
            }
        for (int k = 0; k < m; k++)
            bb[k] = bisected ? bisected[at[k]] : 0;
        rc = measure(s, stage, gg, m, bw, launch ? ll : NULL, bisected ? bb : NULL);
        for (int k = 0; !rc && k < m; k++) {
            busbw[at[k]] = bw[k];
            if (launch)
                launch[at[k]] = ll[k];
            if (bisected)
                bisected[at[k]] = bb[k];
        }
    }
    free(done);
    free(bw);
    free(bb);
    free(ll);
    free(at);
    free(gg);
    return rc;
}

static int measure(struct survey *s, const char *stage, const struct survey_group *g, int n,
                   double *busbw, int *launch, int *bisected)
{
    if (n == 0)
        return 0;
    for (int i = 1; s->probe.per_class && i < n; i++)
        if (strcmp(class_of(s, &g[i]), class_of(s, &g[0])))
            return measure_by_class(s, stage, g, n, busbw, launch, bisected);
    if (s->max_groups > 0 && n > s->max_groups) {
        /* the fewest launches of at most max_groups, as even as they go (16 by 3: 3,3,3,3,2,2,
         * not 3,3,3,3,3,1 with one node measured under no load) */
        int k = launches_for(s, n), rc = 0;
        for (int j = 0, i = 0; !rc && j < k; j++) {
            int len = n / k + (j < n % k);
            rc = measure(s, stage, g + i, len, busbw + i, launch ? launch + i : NULL,
                         bisected ? bisected + i : NULL);
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
    /* the halves' values: marked, then measured (a nested failure marks its own halves) */
    for (int i = 0; bisected && i < n; i++)
        bisected[i] = 1;
    rc = measure(s, stage, g, half, busbw, launch, bisected);
    return rc ? rc
              : measure(s, stage, g + half, n - half, busbw + half, launch ? launch + half : NULL,
                        bisected ? bisected + half : NULL);
}

/* ---- verdicts ---- */

static json_t *verdict_json(struct survey *s, const char *kind, json_t *hosts, json_t *evidence,
                            const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

static json_t *verdict_json(struct survey *s, const char *kind, json_t *hosts, json_t *evidence,
                            const char *fmt, va_list ap)
{
    char text[512];
    vsnprintf(text, sizeof(text), fmt, ap);
    json_t *v = json_pack("{s:s,s:o,s:o,s:s}", "kind", kind, "hosts", hosts, "evidence", evidence,
                          "text", text);
    json_array_append_new(s->verdicts, v);
    return v;
}

static void add_verdict(struct survey *s, const char *kind, int a, int b, json_t *evidence,
                        const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void add_verdict(struct survey *s, const char *kind, int a, int b, json_t *evidence,
                        const char *fmt, ...)
{
    va_list ap;
    if (b >= 0 && b < a) { /* a path's hosts in the cluster's order */
        int t = a;
        a = b;
        b = t;
    }
    json_t *hosts = json_pack("[s]", s->nodes[a].host);
    if (b >= 0)
        json_array_append_new(hosts, json_string(s->nodes[b].host));
    va_start(ap, fmt);
    verdict_json(s, kind, hosts, evidence, fmt, ap);
    va_end(ap);
    if (b < 0) /* a path names two hosts and excludes neither */
        s->nodes[a].verdict = (int)json_array_size(s->verdicts);
    else
        s->nodes[a].on_path = s->nodes[b].on_path = 1;
}

/* One verdict on the nodes listed (a class's), each excluded. */
static void add_group_verdict(struct survey *s, const char *kind, const int *nodes, int n,
                              json_t *evidence, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static void add_group_verdict(struct survey *s, const char *kind, const int *nodes, int n,
                              json_t *evidence, const char *fmt, ...)
{
    va_list ap;
    json_t *hosts = json_array();
    for (int k = 0; k < n; k++)
        json_array_append_new(hosts, json_string(s->nodes[nodes[k]].host));
    va_start(ap, fmt);
    verdict_json(s, kind, hosts, evidence, fmt, ap);
    va_end(ap);
    for (int k = 0; k < n; k++)
        s->nodes[nodes[k]].verdict = (int)json_array_size(s->verdicts);
}

/* One verdict on the hosts given that excludes none of them (a class's shared fault). */
static void add_hosts_verdict(struct survey *s, const char *kind, json_t *hosts, json_t *evidence,
                              const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void add_hosts_verdict(struct survey *s, const char *kind, json_t *hosts, json_t *evidence,
                              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verdict_json(s, kind, hosts, evidence, fmt, ap);
    va_end(ap);
}

static int node_ok(const struct survey *s, int i)
{
    return s->nodes[i].class_id && !s->nodes[i].verdict;
}

static int same_class(const struct survey *s, int i, int j)
{
    return !strcmp(s->nodes[i].class_id, s->nodes[j].class_id);
}

static void add_pair(struct survey *s, int a, int b, double busbw, int round, int focused,
                     int bisected)
{
    if (s->npairs == s->pairs_cap) {
        s->pairs_cap = s->pairs_cap ? 2 * s->pairs_cap : 64;
        s->pairs = util_xrealloc(s->pairs, sizeof(*s->pairs) * (size_t)s->pairs_cap);
    }
    s->pairs[s->npairs] = (struct survey_pair){a, b, busbw, round, focused, bisected};
    int ends[2] = {a, b};
    for (int e = 0; e < 2; e++) { /* each node's own list: the verdicts look at a node's pairs */
        struct survey_node *x = &s->nodes[ends[e]];
        if (x->npairs == x->pairs_cap) {
            x->pairs_cap = x->pairs_cap ? 2 * x->pairs_cap : 8;
            x->pair_index = util_xrealloc(x->pair_index, sizeof(int) * (size_t)x->pairs_cap);
        }
        x->pair_index[x->npairs++] = s->npairs;
    }
    s->npairs++;
}

/* The value of the pair a, b: the median of its measurements that did not fail (-1: all failed,
 * 0: none). Bisected values count only when nothing else measured it. */
static double pair_value(const struct survey *s, int a, int b, int *count)
{
    double v[64];
    int n = 0, any = 0;
    for (int pass = 0; pass < 2 && !n; pass++)
        for (int k = 0; k < s->nodes[a].npairs && n < 64; k++) {
            const struct survey_pair *y = &s->pairs[s->nodes[a].pair_index[k]];
            if (y->a != b && y->b != b)
                continue;
            any = 1;
            if (y->busbw > 0 && (pass || !y->bisected))
                v[n++] = y->busbw;
        }
    if (count)
        *count = n;
    return n ? util_median(v, n) : any ? -1 : 0;
}

/* The values of node i's pairs (pair_value), one per distinct partner without a verdict, into v
 * (room for the node's npairs): not with partner skip, and only partners after i when
 * only_after (each pair of a class once). Returns how many. */
static int partner_values(const struct survey *s, int i, int skip, int only_after, double *v)
{
    const struct survey_node *a = &s->nodes[i];
    int n = 0;
    for (int k = 0; k < a->npairs; k++) {
        const struct survey_pair *x = &s->pairs[a->pair_index[k]];
        int other = x->a == i ? x->b : x->a;
        int seen = other == skip || (only_after && other <= i) || !node_ok(s, other);
        for (int q = 0; q < k && !seen; q++) {
            const struct survey_pair *y = &s->pairs[a->pair_index[q]];
            seen = y->a == other || y->b == other;
        }
        double value = seen ? 0 : pair_value(s, i, other, NULL);
        if (value > 0)
            v[n++] = value;
    }
    return n;
}

/* The median of the values of the class's measured pairs (each pair once, both nodes without a
 * verdict): what two of its nodes give through the network. 0 when none has a value. */
static double class_pairs_median(const struct survey *s, const char *cls)
{
    double *v = util_xmalloc(sizeof(double) * ((size_t)s->npairs + 1));
    int n = 0;
    for (int i = 0; i < s->nnodes; i++)
        if (node_ok(s, i) && s->nodes[i].class_id && !strcmp(s->nodes[i].class_id, cls))
            n += partner_values(s, i, -1, 1, v + n);
    double m = util_median(v, n);
    free(v);
    return m;
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

/* Whether node i's class measured below its band alone (class_level): slow together, its nodes
 * are judged only against its own level, alone and in pairs. */
static int below_alone(const struct survey *s, int i)
{
    const char *cls = s->nodes[i].class_id;
    return cls &&
           json_is_true(json_object_get(json_object_get(s->classes, cls), "alone_below_expected"));
}

/* The nodes of class cls that have no verdict, into out (when given). */
static int ok_members(const struct survey *s, const char *cls, int *out)
{
    int n = 0;
    for (int i = 0; i < s->nnodes; i++)
        if (node_ok(s, i) && !strcmp(s->nodes[i].class_id, cls)) {
            if (out)
                out[n] = i;
            n++;
        }
    return n;
}

double survey_alone_low(const struct survey *s, double model)
{
    return model * fmin(model_band_at(s->size).low, 1 - s->tolerance);
}

double survey_model_floor(const struct survey *s, double model)
{
    return model * (s->probe.predicted ? 1 - s->tolerance : model_band_at(s->size).low);
}

double survey_model_busbw(const struct topo *t, int nodes, size_t bytes, double *time_us)
{
    struct model m;
    struct model_prediction p;
    /* GPUs of a model the catalog does not know are priced as Volta: no yardstick */
    if (model_init(&m, t, nodes, model_env_none, NULL) || m.fault || m.gpus_unknown ||
        (nodes > 1 && m.nics_unknown) || model_predict(&m, bytes, &p))
        return -1;
    if (time_us)
        *time_us = p.time_us;
    return p.busbw;
}

/*
 * The yardstick of a class: the level of its healthy population (survey_level_of) of the values
 * v (per node: alone, or its capacity from the pairs). Where the model predicts the class and
 * the whole population is below the prediction (the class is slow all over), the model's: in
 * the sim, whose numbers are the model's, its value once the level is short by more than the
 * tolerance; for measured numbers (the nccl backend, predicted from the class's map), the low
 * edge of its band (docs/model.md, "Bands") once the level is below it. Stored in s->classes
 * (alone_ or pair_ median and spread).
 */
/* 1 when two or more of the n values alone were measured (v > 0) and every one measured is
 * below what a healthy node gives (one node measured is no class: it is named on its own). */
static int every_below(const struct survey *s, const double *v, int n, double model)
{
    int measured = 0;
    for (int i = 0; i < n; i++) {
        if (v[i] > 0 && v[i] >= survey_alone_low(s, model))
            return 0;
        measured += v[i] > 0;
    }
    return measured >= 2;
}

static void class_level(struct survey *s, const char *cls, const double *v, int n, int alone,
                        struct survey_level *lv)
{
    survey_level_of(v, n, s->tolerance, lv);
    double model = s->probe.predict ? s->probe.predict(s, cls, alone ? 1 : 2) : -1;
    json_t *c = class_entry(s, cls);
    const char *what = alone ? "alone" : "pair";
    char key[32];
    if (model > 0) { /* the absolute reference: the band a healthy node (or pair) measures in */
        struct model_band band = model_band_at(s->size);
        snprintf(key, sizeof(key), "%s_expected", what);
        json_object_set_new(c, key, json_real(model));
        snprintf(key, sizeof(key), "%s_expected_low", what);
        json_object_set_new(c, key, json_real(model * band.low));
        snprintf(key, sizeof(key), "%s_expected_high", what);
        json_object_set_new(c, key, json_real(model * band.high));
        /* alone: the class is below when every node is (a node within the band is healthy, and
         * the others are named on their own); in pairs, when its level is (it grows each round)
         * and so is the median pair: in a small class one slow path pulls down the capacities
         * of both its nodes, not the pairs of the others */
        int below =
            lv->values && lv->level < model * band.low && (!alone || every_below(s, v, n, model));
        if (!alone && below)
            below = class_pairs_median(s, cls) < model * band.low;
        snprintf(key, sizeof(key), "%s_below_expected", what);
        below ? json_object_set_new(c, key, json_true()) : json_object_del(c, key);
        snprintf(key, sizeof(key), "%s_own_median", what);
        below ? json_object_set_new(c, key, json_real(lv->level)) : json_object_del(c, key);
    }
    double floor = survey_model_floor(s, model);
    /* a class below its band alone is judged in pairs against itself too (pair_model): its
     * nodes' pairs cannot reach the model, every node of it was slow against it and none had a
     * healthy partner, so a slow link among them went unnamed */
    int shared = json_is_true(json_object_get(c, "alone_below_expected"));
    if (!alone && !shared && model > 0 && lv->values && lv->level < floor) {
        /* a class short of the model is judged against it: the sim's against its value, measured
         * numbers against the band's low edge; the noise margins below scale with the level */
        double r = (s->probe.predicted ? model : floor) / lv->level;
        lv->own = lv->level;
        lv->own_bound = lv->bound;
        lv->level *= r;
        lv->bound *= r;
        lv->cut *= r;
        lv->too_spread = 0;
    }
    if (!lv->values) { /* nothing measured: no level to report */
        json_object_del(c, alone ? "alone_median" : "pair_median");
        json_object_del(c, alone ? "alone_spread" : "pair_spread");
        return;
    }
    json_object_set_new(c, alone ? "alone_median" : "pair_median", json_real(lv->level));
    json_object_set_new(c, alone ? "alone_spread" : "pair_spread", json_real(lv->spread));
}

/* Below it, a node alone is below what its class should measure, or 0 when the model does not
 * know the class: under the band's low edge, and short by more than the tolerance. */
static double alone_band_low(const struct survey *s, const struct survey_node *x)
{
    json_t *c = json_object_get(s->classes, x->class_id ? x->class_id : "");
    double model = json_number_value(json_object_get(c, "alone_expected"));
    return model > 0 ? survey_alone_low(s, model) : 0;
}

/*
 * A class too spread to judge: its nodes without a verdict are named together and excluded; all
 * of them when no level stands, else (wide noise) those whose value (per node, GB/s) lies between
 * the bound and the cut, neither slow beyond the noise nor within the tolerance.
 */
static void too_spread(struct survey *s, const char *cls, const char *what,
                       const struct survey_level *lv, const double *value)
{
    int *m = util_xmalloc(sizeof(int) * (size_t)(s->nnodes + 1)), n = ok_members(s, cls, m), k = 0;
    for (int j = 0; j < n; j++)
        if (lv->too_spread || value[m[j]] < lv->cut)
            m[k++] = m[j];
    if (k)
        add_group_verdict(
            s, "class-too-spread", m, k,
            json_pack("{s:s,s:s,s:i,s:i,s:f,s:f,s:f}", "class", cls, "measured", what, "values",
                      lv->values, "support", lv->support, "level", lv->level, "spread", lv->spread,
                      "bound", lv->bound),
            lv->too_spread
                ? "class %s cannot be judged %s: only %d of its %d values are within the tolerance "
                  "of its upper level %.2f GB/s (spread %.0f%%); none of its %d nodes is called "
                  "healthy (survey again with more --matchings or --pairs all)"
                : "class %s is too noisy to judge %s: %d of its %d values back its level %.2f GB/s "
                  "but its spread (%.0f%%) hides a shortfall of the tolerance; %d node(s) short of "
                  "the tolerance and within the noise are not called healthy (survey again with "
                  "more --iters)",
            cls, what, lv->support, lv->values, lv->level, 100 * lv->spread, k);
    free(m);
}

/* ---- stages ---- */

/*
 * A class that lost a part next to the larger class of its GPU model (or unlike --expect): its
 * facts differ and the nodes are named node-differs. Returns the class it is compared with (a
 * borrowed id), or NULL.
 */
static const char *differs_from(struct survey *s, const char *cls, json_t **diff)
{
    json_t *key = json_object_get(s->class_keys, cls), *facts, *other;
    const char *ocls;
    *diff = NULL;
    if (!key)
        return NULL;
    facts = survey_class_facts(key);
    if (s->expect) {
        const char *id = json_string_value(json_object_get(s->expect, "id"));
        if (id && strcmp(id, cls)) {
            json_t *want = survey_class_facts(json_object_get(s->expect, "key"));
            *diff = survey_facts_differ(facts, want, NULL);
            json_decref(want);
            json_object_set_new(*diff, "class", json_pack("[ss]", cls, id));
        }
        json_decref(facts);
        return *diff ? id : NULL;
    }
    int n = (int)json_integer_value(json_object_get(json_object_get(s->classes, cls), "nodes"));
    const char *like = NULL;
    json_object_foreach(s->classes, ocls, other) {
        int on = (int)json_integer_value(json_object_get(other, "nodes")), lesser = 0;
        json_t *okey = json_object_get(s->class_keys, ocls);
        if (!okey || !strcmp(ocls, cls) || 2 * n > on)
            continue;
        json_t *ofacts = survey_class_facts(okey);
        json_t *d = survey_facts_differ(facts, ofacts, &lesser);
        json_decref(ofacts);
        if (lesser && !json_object_get(d, "gpu_model") && json_object_size(d)) {
            json_decref(*diff);
            *diff = d;
            like = ocls;
        } else {
            json_decref(d);
        }
    }
    json_decref(facts);
    return like;
}

static void differing_classes(struct survey *s)
{
    const char *cls;
    json_t *c;
    int *m = util_xmalloc(sizeof(int) * (size_t)(s->nnodes + 1));
    json_object_foreach(s->classes, cls, c) {
        json_t *diff;
        const char *like = differs_from(s, cls, &diff);
        if (!like)
            continue;
        char *facts = json_dumps(diff, JSON_COMPACT | JSON_SORT_KEYS);
        int n = ok_members(s, cls, m);
        for (int k = 0; k < n; k++)
            add_verdict(s, "node-differs", m[k], -1,
                        json_pack("{s:s,s:O,s:b}", "like", like, "differs", diff, "expected",
                                  s->expect != NULL),
                        "%s is not the hardware of %s (%s): %s as [this node, %s]: a part lost or "
                        "misplaced (a GPU, a NIC or an NVLink)",
                        s->nodes[m[k]].host,
                        s->expect ? "--expect" : "the larger class of its GPU model", like,
                        facts ? facts : "?", s->expect ? "expected" : "that class");
        free(facts);
        json_decref(diff);
    }
    free(m);
}

/* Stage 1: the map. Nodes that did not answer, or that differ from their kind, get a verdict. */
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
    differing_classes(s);
    return 0;
}

/* A node's busbw alone: its repeat when made (the longer measurement: a hiccup of the machine
 * during the short first one made it a suspect, and weighs less there), else its measurement. */
static double alone_of(const struct survey_node *x)
{
    if (x->intra <= 0)
        return x->intra;
    return x->intra_rep ? x->intra_rep : x->intra;
}

/*
 * How many times more operations the repeat of the suspects alone times: 8 (one preemption in a
 * first measurement of a millisecond makes a healthy node look several times slower; in one 8
 * times longer it costs an eighth of that), fewer where the slowest suspect would then pass a
 * quarter of the launch's bound on its timed operations (an all_reduce moves at most twice its
 * size per rank: at b GB/s, an operation takes at most 2 size / b).
 */
static int repeat_longer(const struct survey *s, const struct survey_group *g, int n)
{
    int longer = 8;
    for (int k = 0; k < n && s->probe.iters > 0 && s->probe.timed_max_s > 0; k++) {
        double bw = s->nodes[g[k].a].intra * 1e9, op_s = 2.0 * (double)s->size / bw;
        double fit = s->probe.timed_max_s / 4 / (op_s * s->probe.iters);
        if (fit < longer)
            longer = fit < 1 ? 1 : (int)fit;
    }
    return longer;
}

/*
 * A class of two nodes measured alone: two values give no spread (their one gap, read as noise,
 * put the bound three gaps below: a node at half speed passed wherever the band's low edge is
 * below half, at sizes up to 4 MiB). A fault only slows, so the faster node is the reference and
 * the slower a suspect when short of it by the tolerance; the suspect's longer repeat, held to
 * the faster one's repeat beside it (reference_bounds), decides.
 */
static void two_nodes(json_t *c, const double *v, int n, double tolerance, struct survey_level *l)
{
    double hi = 0;
    int measured = 0;
    for (int i = 0; i < n; i++)
        if (v[i] > 0)
            measured++, hi = fmax(hi, v[i]);
    /* a class of two below its band alone keeps this rule where its slower node is short of the
     * faster by twice the tolerance: its verdict says both are slow, and a node far slower than
     * the other (0.45 beside 0.7) was named in classes of 3 and more, never in one of two (by
     * the tolerance alone, two nodes alike at 10% noise were named in 3 surveys of 30) */
    double lo = hi;
    for (int i = 0; i < n; i++)
        lo = v[i] > 0 ? fmin(lo, v[i]) : lo;
    if (measured != 2 || (json_is_true(json_object_get(c, "alone_below_expected")) &&
                          lo >= hi * (1 - 2 * tolerance)))
        return;
    l->level = hi;
    l->spread = 0;
    l->bound = l->cut = hi * (1 - tolerance);
    l->too_spread = l->wide = 0;
    json_object_set_new(c, "alone_median", json_real(hi));
    json_object_set_new(c, "alone_spread", json_real(0));
}

/*
 * A class's "below its band alone" again, from what each node measured last (alone_of: a
 * suspect's repeat, a reference's too): class_level decided it on the first short measurements,
 * where a fleet-wide stall (a daemon on every node) pulls every node under the band and the
 * repeats are healthy, and where one node's first value above the band kept a class slow all
 * over from its verdict, each of its nodes then named on its own. Same rule: every measured node
 * below, two or more measured.
 */
static void alone_below_again(struct survey *s)
{
    const char *cls;
    json_t *c;
    json_object_foreach(s->classes, cls, c) {
        double model = json_number_value(json_object_get(c, "alone_expected"));
        if (!(model > 0))
            continue;
        int measured = 0;
        double *v = util_xmalloc(sizeof(double) * (size_t)(s->nnodes + 1));
        for (int i = 0; i < s->nnodes; i++)
            if (s->nodes[i].class_id && !strcmp(s->nodes[i].class_id, cls) &&
                alone_of(&s->nodes[i]) > 0)
                v[measured++] = alone_of(&s->nodes[i]);
        if (every_below(s, v, measured, model)) {
            struct survey_level own;
            survey_level_of(v, measured, s->tolerance, &own);
            json_object_set_new(c, "alone_below_expected", json_true());
            json_object_set_new(c, "alone_own_median", json_real(own.level));
        } else {
            json_object_del(c, "alone_below_expected");
            json_object_del(c, "alone_own_median");
        }
        free(v);
    }
}

/* Per node, its class's level alone (in lv, one per class in s->classes' order): of the first
 * measurements, or with repeats of each node's repeat where it has one (alone_of), the value the
 * alone stage stood by. */
static void alone_levels(struct survey *s, struct survey_level *lv, int *of, int repeats)
{
    double *v = util_xmalloc(sizeof(double) * (size_t)(s->nnodes + 1));
    const char *cls;
    json_t *c;
    int k = 0;
    json_object_foreach(s->classes, cls, c) {
        int n = 0;
        for (int i = 0; i < s->nnodes; i++)
            if (s->nodes[i].class_id && !strcmp(s->nodes[i].class_id, cls)) {
                v[n++] = repeats ? alone_of(&s->nodes[i]) : s->nodes[i].intra;
                of[i] = k;
            }
        class_level(s, cls, v, n, 1, &lv[k]);
        two_nodes(c, v, n, s->tolerance, &lv[k++]);
    }
    free(v);
}

/*
 * A class whose healthy population itself measures below the band the model gives its hardware
 * (class_level marked it), alone or in pairs: its nodes are slow together, so no node is to
 * blame alone: what they share (alone: driver, firmware, settings; in pairs: the network between
 * them). One verdict names them all and excludes none: none of its nodes is named slow against
 * the band (stage_alone), only against its class's level, which excludes.
 */
static void below_expected(struct survey *s, int alone)
{
    const char *cls, *what = alone ? "alone" : "pair";
    json_t *c;
    char key[32];
    int *m = util_xmalloc(sizeof(int) * (size_t)(s->nnodes + 1));
    json_object_foreach(s->classes, cls, c) {
        snprintf(key, sizeof(key), "%s_below_expected", what);
        if (!json_is_true(json_object_get(c, key)))
            continue;
        /* in pairs, what the nodes named since leave: a slow node's pairs are its own */
        if (!alone && !(class_pairs_median(s, cls) <
                        json_number_value(json_object_get(c, "pair_expected_low"))))
            continue;
        int n = 0;
        for (int i = 0; i < s->nnodes; i++)
            if (s->nodes[i].class_id && !strcmp(s->nodes[i].class_id, cls) &&
                (alone ? s->nodes[i].intra > 0 : s->nodes[i].npairs > 0))
                m[n++] = i;
        if (!n)
            continue;
        json_t *hosts = json_array();
        for (int k = 0; k < n; k++)
            json_array_append_new(hosts, json_string(s->nodes[m[k]].host));
        double v[4];
        const char *keys[] = {"own_median", "expected", "expected_low", "expected_high"};
        for (int k = 0; k < 4; k++) {
            snprintf(key, sizeof(key), "%s_%s", what, keys[k]);
            v[k] = json_number_value(json_object_get(c, key));
        }
        add_hosts_verdict(
            s, "class-below-expected", hosts,
            json_pack("{s:s,s:s,s:f,s:f,s:f,s:f,s:b}", "class", cls, "measured",
                      alone ? "alone" : "pairs", "class_median", v[0], "expected", v[1], "band_low",
                      v[2], "band_high", v[3], "predicted", 1),
            alone ? "the %d node(s) of class %s measure %.2f GB/s alone, below the band a healthy "
                    "node gives (%.2f to %.2f GB/s, predicted %.2f): the fabric, not a node: what "
                    "they share (driver, firmware, settings, switches)"
                  : "the %d node(s) of class %s measure %.2f GB/s in pairs, below the band two "
                    "healthy nodes give (%.2f to %.2f GB/s, predicted %.2f): the network between "
                    "them%s: what they share (switches, cabling, NIC firmware or settings)%s",
            n, cls, v[0], v[2], v[3], v[1],
            /* two nodes have one pair: a NIC of either is as likely as what they share */
            n == 2 ? " or either node's own link (one pair cannot tell which)" : ", not a node",
            !alone && json_is_true(json_object_get(c, "alone_below_expected"))
                ? "; or what slows them alone too (the class is below its band alone)"
                : "");
    }
    free(m);
}

/*
 * The references of a repeat: per class with a suspect (of the ns in g), up to 3 of its nodes
 * that measured within its healthy window (at or above the cut), nearest its level, appended to
 * g after the suspects. A class's level is the median of a window of single measurements: where
 * the noise is as wide as the tolerance the window holds only the population's lucky upper part,
 * its level comes out high (8 nodes at 10% noise: 20% above the prediction, spread 0.3%), and a
 * healthy suspect's repeat, nearer the truth, fell below it. References measured as long beside
 * it show where the truth is. Returns how many were appended (g has room for every node).
 */
static int add_references(struct survey *s, const struct survey_level *lv, const int *of,
                          struct survey_group *g, int ns)
{
    int nr = 0, nclasses = (int)json_object_size(s->classes);
    char *used = util_xcalloc((size_t)s->nnodes + 1, 1),
         *has = util_xcalloc((size_t)nclasses + 1, 1);
    for (int k = 0; k < ns; k++) {
        used[g[k].a] = 1;
        has[of[g[k].a]] = 1;
    }
    for (int c = 0; c < nclasses; c++)
        for (int take = 0; has[c] && take < 3; take++) {
            int best = -1;
            double best_d = 0;
            for (int i = 0; i < s->nnodes; i++) {
                const struct survey_node *x = &s->nodes[i];
                if (used[i] || of[i] != c || !node_ok(s, i) || x->intra <= 0 ||
                    x->intra < lv[c].cut)
                    continue;
                double d = fabs(log(x->intra / lv[c].level));
                if (best < 0 || d < best_d)
                    best = i, best_d = d;
            }
            if (best < 0)
                break;
            used[best] = 1;
            g[ns + nr++] = (struct survey_group){best, -1};
        }
    free(used);
    free(has);
    return nr;
}

/*
 * Per class (ref, one per class in s->classes' order; 0: none), the bound its suspects' repeats
 * are held to: the tolerance, or three spreads of a measurement longer times as long, below the
 * median of its references' repeats where two measured (the nr after the ns suspects in g), else
 * of every repeat of the class where they are half of its nodes measured, three at least (a class
 * below its band alone has every node a suspect and no reference: the level of its single
 * measurements named healthy nodes there too).
 */
static void reference_bounds(const struct survey *s, const struct survey_level *lv, const int *of,
                             const struct survey_group *g, int ns, int nr, int longer, double *ref)
{
    double *v = util_xmalloc(sizeof(double) * (size_t)(ns + nr + 1));
    int nclasses = (int)json_object_size(s->classes);
    for (int c = 0; c < nclasses; c++) {
        int m = 0, all = 0, measured = 0;
        for (int k = ns; k < ns + nr; k++)
            if (of[g[k].a] == c && s->nodes[g[k].a].intra_rep > 0)
                v[m++] = s->nodes[g[k].a].intra_rep;
        for (int i = 0; i < s->nnodes; i++)
            measured += of[i] == c && node_ok(s, i) && s->nodes[i].intra > 0;
        if (m < 2 && !(m == 1 && measured == 2)) { /* two nodes: the other's repeat (two_nodes) */
            for (int k = 0; k < ns + nr; k++)
                if (of[g[k].a] == c && s->nodes[g[k].a].intra_rep > 0)
                    v[all++] = s->nodes[g[k].a].intra_rep;
            if (all < 3 || 2 * all < measured)
                continue;
            m = all;
        }
        double w = fmax(-log(1 - s->tolerance), 3 * lv[c].spread / sqrt(longer > 1 ? longer : 1));
        ref[c] = util_median(v, m) * exp(-w);
    }
    free(v);
}

/* Node i's verdict, slow on its own after its longer repeat: below its class's bound, and below
 * its class's references measured as long beside it (ref > 0) where they measured. */
static void slow_alone(struct survey *s, int i, const struct survey_level *l, double ref)
{
    const struct survey_node *x = &s->nodes[i];
    char beside[128] = "";
    json_t *ev = json_pack("{s:f,s:o,s:f,s:f,s:f}", "busbw", x->intra, "repeat",
                           x->intra_rep > 0 ? json_real(x->intra_rep) : json_string("failed"),
                           "class_median", l->level, "class_spread", l->spread, "bound",
                           ref > 0 ? fmin(l->bound, ref) : l->bound);
    if (ref > 0) {
        json_object_set_new(ev, "reference_bound", json_real(ref));
        snprintf(beside, sizeof(beside),
                 "; the nodes of its class measured as long beside it: %.2f GB/s at most", ref);
    }
    add_verdict(s, "node-slow", i, -1, ev,
                "%s is slow on its own: %.2f GB/s alone, then %s in a longer measurement; its "
                "class %.2f GB/s (spread %.0f%%)%s",
                x->host, x->intra, x->intra_rep > 0 ? "slow again" : "failed", l->level,
                100 * l->spread, beside);
}

/* Stage 2: every node alone, all at once; the slow ones measured again before a verdict. */
static int stage_alone(struct survey *s)
{
    struct survey_group *g = util_xmalloc(sizeof(*g) * (size_t)(s->nnodes + 1));
    double *bw = util_xmalloc(sizeof(double) * (size_t)(s->nnodes + 1));
    struct survey_level *lv = util_xcalloc(json_object_size(s->classes) + 1, sizeof(*lv));
    int *of = util_xcalloc((size_t)s->nnodes + 1, sizeof(int));
    int n = 0, rc;
    for (int i = 0; i < s->nnodes; i++)
        if (node_ok(s, i))
            g[n++] = (struct survey_group){i, -1};
    int failed = s->launches_failed;
    rc = measure(s, "alone", g, n, bw, NULL, NULL);
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
        rc = m > 1 ? measure(s, "alone-again", g, m, bw, NULL, NULL) : 0;
        for (int k = 0; !rc && m > 1 && k < m; k++)
            s->nodes[g[k].a].intra = bw[k];
        n = m;
    }
    alone_levels(s, lv, of, 0);
    /* suspects: below their class's bound, or below the band the model gives a healthy node,
     * measured again together */
    int ns = 0, nr, longer = 1;
    for (int k = 0; !rc && k < n; k++) {
        struct survey_node *x = &s->nodes[g[k].a];
        if (x->intra >= 0 && (x->intra < lv[of[g[k].a]].bound || x->intra < alone_band_low(s, x)))
            g[ns++] = g[k];
    }
    nr = rc ? 0 : add_references(s, lv, of, g, ns);
    if (!rc && ns) {
        s->longer = longer = repeat_longer(s, g, ns);
        rc = measure(s, "alone-repeat", g, ns + nr, bw, NULL, NULL);
        s->longer = 0;
    }
    /* a reference's repeat is kept where it measured: it is no suspect, and is not judged */
    char *reference = util_xcalloc((size_t)s->nnodes + 1, 1);
    for (int k = 0; !rc && ns && k < ns + nr; k++)
        if (k < ns || bw[k] > 0) {
            s->nodes[g[k].a].intra_rep = bw[k];
            reference[g[k].a] = k >= ns;
        }
    double *ref = util_xcalloc(json_object_size(s->classes) + 1, sizeof(double));
    if (!rc && ns)
        reference_bounds(s, lv, of, g, ns, nr, longer, ref);
    if (!rc && ns) /* the repeats decide whether the class is slow all over */
        alone_below_again(s);
    for (int i = 0; !rc && i < s->nnodes; i++) {
        struct survey_node *x = &s->nodes[i];
        const struct survey_level *l = &lv[of[i]];
        if (!node_ok(s, i) || reference[i])
            continue;
        /* one slow value is no verdict: the longer repeat decides */
        double low = alone_band_low(s, x);
        /* every node of the class below the band (two or more measured): what they share is
         * slow, which the class's verdict says (below_expected); no node is slow on its own
         * against the band then, only against its class's level */
        int shared = below_alone(s, i);
        if (x->intra < 0)
            add_verdict(s, "node-fails", i, -1, json_pack("{s:s}", "alone", "failed or hung"),
                        "%s fails on its own: its launch failed or hung, alone too", x->host);
        else if (!shared && x->intra_rep && low > 0 && alone_of(x) < low) /* below the band */
            add_verdict(
                s, "node-slow", i, -1,
                json_pack("{s:f,s:o,s:f,s:f,s:b,s:f,s:f}", "busbw", x->intra, "repeat",
                          x->intra_rep > 0 ? json_real(x->intra_rep) : json_string("failed"),
                          "class_median", l->level, "band_low",
                          json_number_value(json_object_get(
                              json_object_get(s->classes, x->class_id), "alone_expected_low")),
                          "predicted", 1, "class_spread", l->spread, "bound", low),
                "%s is slow on its own: %.2f GB/s alone, then %s in a longer measurement, below "
                "what a healthy node gives (%.2f GB/s: the band's low edge and the tolerance, "
                "predicted); its class %.2f GB/s",
                x->host, x->intra, x->intra_rep > 0 ? "slow again" : "failed", low, l->level);
        else if (x->intra_rep && !l->too_spread &&
                 alone_of(x) < (ref[of[i]] > 0 ? fmin(l->bound, ref[of[i]]) : l->bound))
            slow_alone(s, i, l, ref[of[i]]);
    }
    free(ref);
    free(reference);
    if (!rc)
        below_expected(s, 1);
    double *value = util_xmalloc(sizeof(double) * (size_t)(s->nnodes + 1));
    for (int i = 0; i < s->nnodes; i++)
        value[i] = alone_of(&s->nodes[i]);
    const char *cls;
    json_t *c;
    int k = 0;
    json_object_foreach(s->classes, cls, c) {
        /* a class the model knows is judged against its band even when its own spread is too
         * wide to judge it by its median: every node below the band is named above */
        int banded = json_number_value(json_object_get(c, "alone_expected_low")) > 0;
        if (!rc && !banded && (lv[k].too_spread || lv[k].wide))
            too_spread(s, cls, "alone", &lv[k], value);
        k++;
    }
    free(value);
    free(of);
    free(lv);
    free(g);
    free(bw);
    return rc;
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

/* A random perfect matching of the listed nodes (one left out when odd), as groups: of 20 tries,
 * the one with the fewest pairs measured before (a pair measured again tells nothing new), then
 * the one that leaves out a node with the most pairs already (left out at random, one of 5 nodes
 * sat out all 3 matchings and its link was never judged). */
static int matching(struct survey *s, const int *nodes, int n, struct survey_group *g)
{
    int *p = util_xmalloc(sizeof(int) * (size_t)(n + 1)),
        *best = util_xmalloc(sizeof(int) * (size_t)(n + 1));
    int most = 0;
    for (int i = 0; n % 2 && i < n; i++)
        most = s->nodes[nodes[i]].npairs > most ? s->nodes[nodes[i]].npairs : most;
    long fewest = (long)(n + 1) * (most + 2);
    for (int t = 0; t < 20 && fewest > 0; t++) {
        memcpy(p, nodes, sizeof(int) * (size_t)n);
        for (int i = n - 1; i > 0; i--) {
            int j = (int)(next_random(s) % (unsigned long long)(i + 1));
            int x = p[i];
            p[i] = p[j];
            p[j] = x;
        }
        long cost = n % 2 ? most - s->nodes[p[n - 1]].npairs : 0;
        for (int i = 0; i + 1 < n; i += 2)
            cost += (long)(most + 1) * paired(s, p[i], p[i + 1]);
        if (cost < fewest) {
            fewest = cost;
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

/* survey_pair.focused of a pair measured in stage: 0 the matchings, 2 a focus round, 1 repeats. */
static int focused_of(const char *stage)
{
    return !strcmp(stage, "pairs") ? 0 : !strcmp(stage, "focus") ? 2 : 1;
}

static int run_pairs(struct survey *s, const char *stage, struct survey_group *g, int n)
{
    double *bw = util_xmalloc(sizeof(double) * (size_t)(n + 1));
    int *launch = util_xmalloc(sizeof(int) * (size_t)(n + 1)),
        *bisected = util_xcalloc((size_t)n + 1, sizeof(int));
    int rc = measure(s, stage, g, n, bw, launch, bisected);
    for (int k = 0; !rc && k < n; k++)
        add_pair(s, g[k].a, g[k].b, bw[k], launch[k], focused_of(stage), bisected[k]);
    free(bisected);
    free(launch);
    free(bw);
    return rc;
}

/* Stage 3: random perfect matchings of each class (or every pair, in n-1 rounds, the circle). */
static int stage_pairs(struct survey *s)
{
    int *nodes = util_xmalloc(sizeof(int) * (size_t)(s->nnodes + 1));
    struct survey_group *g = util_xmalloc(sizeof(*g) * (size_t)(s->nnodes + 1));
    const char *cls;
    json_t *c;
    int rc = 0;
    /* all classes' pairs share a launch: rounds are cluster-wide; a class has n-1 rounds of new
     * pairs at most (2 nodes: one pair, measured once, not once per matching) */
    int rounds = 0;
    json_object_foreach(s->classes, cls, c) {
        int n = ok_members(s, cls, nodes);
        rounds = rounds > n - 1 + (n % 2) ? rounds : n - 1 + (n % 2);
    }
    if (!s->all_pairs && s->matchings < rounds)
        rounds = s->matchings;
    for (int r = 0; !rc && r < rounds; r++) {
        int k = 0;
        json_object_foreach(s->classes, cls, c) {
            int n = ok_members(s, cls, nodes);
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

/*
 * What the pairs say so far: each node's capacity (cap, 0: no pair) and its class's level of
 * capacities (lv[of[i]], one per class in s->classes' order), over the nodes without a verdict.
 */
struct fit {
    double *cap;
    struct survey_level *lv;
    double *noise; /* per class: log sigma of one pair measurement (pair_noise) */
    int *tests;    /* per class: its pairs measured, each a test for a path */
    int *of;
    /* slow_beyond_worst per node, valid while the verdicts number slow_at[i] - 1 (0: not
     * worked out since the last fit): a verdict takes a partner out of every node's pairs */
    int *slow;
    size_t *slow_at;
};

/*
 * The noise of one pair measurement of class cls (log sigma): the spread above the class's level
 * of its measurements between nodes whose capacities stand (lv's bound at least); a slow path is
 * below the level, in a small class half of the pairs may be. Capacities are medians of a node's
 * pairs: their spread (lv) is narrower than one measurement's, which the paths are judged by.
 */
static double pair_noise(const struct survey *s, const struct fit *f, const char *cls,
                         const struct survey_level *lv, int *tests)
{
    double *r = util_xmalloc(sizeof(double) * ((size_t)s->npairs + 1));
    int n = 0;
    for (int p = 0; p < s->npairs && lv->level > 0; p++) {
        const struct survey_pair *x = &s->pairs[p];
        if (x->busbw > 0 && !x->bisected && node_ok(s, x->a) && node_ok(s, x->b) &&
            s->nodes[x->a].class_id && !strcmp(s->nodes[x->a].class_id, cls) &&
            f->cap[x->a] >= lv->bound && f->cap[x->b] >= lv->bound)
            r[n++] = log(x->busbw / lv->level);
    }
    double noise = survey_upper_spread(r, n, 0);
    free(r);
    *tests = n;
    return noise;
}

/* Each class's level of capacities and the noise of its pairs, from f->cap. */
static void fit_levels(struct survey *s, struct fit *f)
{
    double *v = util_xmalloc(sizeof(double) * (size_t)(s->nnodes + 1));
    const char *cls;
    json_t *c;
    int k = 0;
    json_object_foreach(s->classes, cls, c) {
        int n = 0;
        for (int i = 0; i < s->nnodes; i++)
            if (s->nodes[i].class_id && !strcmp(s->nodes[i].class_id, cls)) {
                f->of[i] = k;
                if (node_ok(s, i))
                    v[n++] = f->cap[i];
            }
        class_level(s, cls, v, n, 0, &f->lv[k]);
        f->noise[k] = pair_noise(s, f, cls, &f->lv[k], &f->tests[k]);
        k++;
    }
    free(v);
}

/* The noise of class k measured well enough to judge by: 8 pairs between its healthy nodes. */
static int noise_known(const struct fit *f, int k)
{
    return f->noise[k] > 0 && f->tests[k] >= 8;
}

/* The sigma of node i's class's values alone (1.4826 x their MAD about their median, in logs,
 * both sides): what one measurement of its nodes scatters by, a slow NIC not showing; 0 with fewer
 * than min_nodes values. */
static double alone_sigma(const struct survey *s, int i, int min_nodes)
{
    double *v = util_xmalloc(sizeof(double) * ((size_t)s->nnodes + 1));
    int n = 0;
    for (int k = 0; k < s->nnodes; k++)
        if (node_ok(s, k) && s->nodes[k].class_id &&
            !strcmp(s->nodes[k].class_id, s->nodes[i].class_id) && alone_of(&s->nodes[k]) > 0)
            v[n++] = log(alone_of(&s->nodes[k]));
    double sigma = 0;
    if (n >= min_nodes) {
        double m = util_median(v, n);
        for (int k = 0; k < n; k++)
            v[k] = fabs(v[k] - m);
        sigma = 1.4826 * util_median(v, n);
    }
    free(v);
    return sigma;
}

/* The sigma of one measurement of node i's class: the larger of its pairs' noise where known and
 * its values' alone (a noise read above a level that sits near the top, at 15% noise, came out
 * 3%, and a window of it named a healthy node; with half a class slow too few pairs stand above
 * its level to say, and a slow NIC leaves the node fast alone); 0: unknown. */
static double class_sigma(const struct survey *s, const struct fit *f, int i, int min_nodes)
{
    if (!s->nodes[i].class_id)
        return 0;
    return fmax(noise_known(f, f->of[i]) ? f->noise[f->of[i]] : 0, alone_sigma(s, i, min_nodes));
}

/*
 * The capacities, the classes' levels and their noise. A capacity counts partners within the
 * tolerance of the node; where three sigmas of its class's noise (5% at least) are narrower, the
 * capacities are fitted again within them: beside half a class of NICs at 0.8, measured at 0.84
 * on 3% noise, within the tolerance of a healthy node, a healthy node with more of them than
 * healthy partners took their speed and was named.
 */
static void fit_pairs(struct survey *s, struct fit *f)
{
    memset(f->slow_at, 0, sizeof(size_t) * ((size_t)s->nnodes + 1));
    survey_capacities(s->nnodes, s->pairs, s->npairs, s->tolerance, NULL, f->cap);
    fit_levels(s, f);
    size_t nclasses = json_object_size(s->classes);
    double *w = util_xmalloc(sizeof(double) * (size_t)(s->nnodes + 1)),
           *sigma = util_xmalloc(sizeof(double) * (nclasses + 1)), tol = -log(1 - s->tolerance);
    for (size_t k = 0; k <= nclasses; k++)
        sigma[k] = -1; /* not worked out yet: once per class, not per node */
    int narrower = 0;
    for (int i = 0; i < s->nnodes; i++) {
        int k = f->of[i];
        if (s->nodes[i].class_id && sigma[k] < 0)
            sigma[k] = class_sigma(s, f, i, 8);
        w[i] = s->nodes[i].class_id && sigma[k] > 0 ? fmin(tol, fmax(3 * sigma[k], 0.05)) : tol;
        narrower |= w[i] < tol;
    }
    if (narrower) {
        survey_capacities(s->nnodes, s->pairs, s->npairs, s->tolerance, w, f->cap);
        fit_levels(s, f);
    }
    free(sigma);
    free(w);
}

static void fit_init(struct survey *s, struct fit *f)
{
    f->cap = util_xcalloc((size_t)s->nnodes + 1, sizeof(double));
    f->lv = util_xcalloc(json_object_size(s->classes) + 1, sizeof(*f->lv));
    f->noise = util_xcalloc(json_object_size(s->classes) + 1, sizeof(double));
    f->tests = util_xcalloc(json_object_size(s->classes) + 1, sizeof(int));
    f->of = util_xcalloc((size_t)s->nnodes + 1, sizeof(int));
    f->slow = util_xcalloc((size_t)s->nnodes + 1, sizeof(int));
    f->slow_at = util_xcalloc((size_t)s->nnodes + 1, sizeof(size_t));
    fit_pairs(s, f);
}

static void fit_release(struct fit *f)
{
    free(f->cap);
    free(f->lv);
    free(f->noise);
    free(f->tests);
    free(f->of);
    free(f->slow);
    free(f->slow_at);
}

/* The class's prediction for two of its nodes, or 0 when the model does not know it. */
static double pair_model(const struct survey *s, int i)
{
    json_t *c = json_object_get(s->classes, s->nodes[i].class_id ? s->nodes[i].class_id : "");
    return below_alone(s, i) ? 0 : json_number_value(json_object_get(c, "pair_expected"));
}

/* Node i below the bound with every healthy partner it met, three of them at least: in a class of
 * 5 to 7 values, judged by twice the margin, a NIC at 0.75 went unnamed at sizes where the band's
 * low edge is far below (4 MiB and under), its three pairs with healthy partners 25% low at a
 * spread of 0.3%. Only where the class's noise is known (class_sigma): each pair must also be
 * three of its sigmas below the level. */
static int low_with_all(const struct survey *s, const struct fit *f, int i,
                        const struct survey_level *l)
{
    double sigma = class_sigma(s, f, i, 5);
    if (sigma <= 0) /* a noise read as 0 guards nothing */
        return 0;
    /* below the bound and three sigmas of one measurement under the level */
    double below = fmin(l->bound, l->level * exp(-3 * sigma));
    int low = 0, fine = 0;
    for (int k = 0; k < s->nodes[i].npairs; k++) {
        const struct survey_pair *x = &s->pairs[s->nodes[i].pair_index[k]];
        int other = x->a == i ? x->b : x->a, seen = 0;
        for (int q = 0; q < k && !seen; q++) {
            const struct survey_pair *y = &s->pairs[s->nodes[i].pair_index[q]];
            seen = y->a == other || y->b == other;
        }
        if (seen || !node_ok(s, other) || f->cap[other] < l->bound)
            continue;
        double v = pair_value(s, i, other, NULL);
        low += v > 0 && v < below;
        fine += v >= below;
    }
    if (low < 3 || fine)
        return 0;
    /* and the class's other pairs seldom so low: at 15% noise a small class's level comes out
     * above most of its pairs, its spread read low, and a healthy node's three did it */
    int others = 0, others_low = 0;
    for (int p = 0; p < s->npairs; p++) {
        const struct survey_pair *x = &s->pairs[p];
        if (x->busbw <= 0 || x->bisected || x->a == i || x->b == i || !node_ok(s, x->a) ||
            !node_ok(s, x->b) || f->of[x->a] != f->of[i] || f->of[x->b] != f->of[i] ||
            !s->nodes[x->a].class_id || !s->nodes[x->b].class_id)
            continue;
        others++;
        others_low += x->busbw < below;
    }
    return others >= 4 && 20 * others_low <= others;
}

/* Node i's capacity slow: below its class's level of capacities by more than its margin (the
 * tolerance at least). Where the model knows the class, also below the two-node band (the band's
 * low edge and the tolerance) whatever the class measures, and against the class only while it
 * is not too spread to say: by its margin with 8 values in its healthy population, by twice it
 * with 3 to 7 (fewer share too many pairs for their spread to stand: 3 noisy nodes' can come out
 * 0), or with 5 to 7 by it alone where low_with_all says; with 2 (a class of 3 with a slow node)
 * the band alone judges, as more named the noise. */
static int cap_slow(const struct survey *s, const struct fit *f, int i)
{
    if (!node_ok(s, i) || f->cap[i] <= 0)
        return 0;
    const struct survey_level *l = &f->lv[f->of[i]];
    double model = pair_model(s, i);
    if (model <= 0 && below_alone(s, i))
        /* judged against itself though the model knows it (pair_model): as against the model,
         * only where 8 values back its level (4 noisy nodes' pair level rested on one pair) */
        return !l->too_spread && l->support >= 8 && f->cap[i] < l->bound;
    if (model <= 0)
        return f->cap[i] < l->bound;
    /* a class of fewer values: against its level too, but by twice the margin (its spread may
     * read 0): at small sizes the band's low edge is under half the prediction, and a NIC at
     * 0.6 in a class of 8 went unnamed whatever its pairs showed */
    double twice = l->level - 2 * (l->level - l->bound);
    return f->cap[i] < survey_alone_low(s, model) ||
           (!l->too_spread && l->support >= 8 && f->cap[i] < l->bound) ||
           (!l->too_spread && l->support >= 3 && l->support < 8 &&
            (f->cap[i] < twice ||
             (l->support >= 5 && f->cap[i] < l->bound && low_with_all(s, f, i, l))));
}

/* A pair value slow for its two nodes: below the two-node band where the model knows the class
 * (a capacity can carry the slow pair itself: with two partners it is half of it), else below
 * the slower node's capacity by the class's margin. */
static int pair_slow(const struct survey *s, const struct fit *f, const struct survey_pair *p)
{
    if (p->busbw < 0)
        return 1;
    const struct survey_level *l = &f->lv[f->of[p->a]];
    double ref = fmin(f->cap[p->a], f->cap[p->b]), model = pair_model(s, p->a);
    int below = ref > 0 && l->level > 0 && p->busbw < ref * (l->bound / l->level);
    /* where the model knows the class, below its band too (a class measuring above the band
     * still judges its pairs against itself) */
    return below || (model > 0 && p->busbw < survey_alone_low(s, model));
}

/* Below this, a pair of node i is slow: its class's bound, and where the model knows the class
 * the two-node band when that is higher. */
static double pair_low(const struct survey *s, const struct fit *f, int i)
{
    double model = pair_model(s, i), bound = f->lv[f->of[i]].bound;
    return model > 0 ? fmax(survey_alone_low(s, model), bound) : bound;
}

/* The median of node a's pair values with partners other than b (distinct, without a verdict);
 * 0 when it has none. */
static double elsewhere(const struct survey *s, int a, int b)
{
    double *v = util_xmalloc(sizeof(double) * ((size_t)s->nodes[a].npairs + 1));
    double m = util_median(v, partner_values(s, a, b, 0, v));
    free(v);
    return m;
}

/* Whether node a runs at low or faster with a partner other than b, without a verdict. */
static int fast_at(const struct survey *s, int a, int b, double low)
{
    for (int k = 0; k < s->nodes[a].npairs; k++) {
        const struct survey_pair *x = &s->pairs[s->nodes[a].pair_index[k]];
        int other = x->a == a ? x->b : x->a;
        if (other != b && node_ok(s, other) && x->busbw >= low &&
            pair_value(s, a, other, NULL) >= low)
            return 1;
    }
    return 0;
}

/* Whether node a runs at speed (pair_low) with a partner other than b, without a verdict. */
static int fast_elsewhere(const struct survey *s, const struct fit *f, int a, int b)
{
    return fast_at(s, a, b, pair_low(s, f, a));
}

/* Whether node i is slow with its partners but its worst (distinct partners without a verdict):
 * not when its worst pair is an outlier and the median of the others is fine. One slow partner
 * is a path as much as a node, and with two partners one slow path halves both capacities. */
static int slow_beyond_worst(const struct survey *s, const struct fit *f, int i)
{
    size_t now = json_array_size(s->verdicts) + 1;
    if (f->slow_at[i] == now)
        return f->slow[i];
    double *v = util_xmalloc(sizeof(double) * ((size_t)s->nodes[i].npairs + 1));
    int nv = partner_values(s, i, -1, 0, v);
    int slow = 1; /* one partner or none: nothing to tell a path from the node by */
    if (nv >= 2) {
        util_sort_doubles(v, (size_t)nv);        /* the worst first */
        double med = util_median(v + 1, nv - 1); /* the others': without the worst, v[0] */
        /* the worst an outlier (short of the next by more than the tolerance, not noise at the
         * threshold) and the rest fine: that pair's path */
        slow = !(med >= pair_low(s, f, i) && v[0] < v[1] * (1 - s->tolerance));
    }
    free(v);
    f->slow_at[i] = now;
    return f->slow[i] = slow;
}

/* Node i slow in pairs: its capacity slow, and slow without its worst partner too. */
static int node_slow_in_pairs(const struct survey *s, const struct fit *f, int i)
{
    return cap_slow(s, f, i) && slow_beyond_worst(s, f, i);
}

/*
 * Per node: distinct partners measured (without a verdict of their own), those with a value,
 * those of them in their class's healthy population (strong: a slow pair with one of them is
 * this node's), and those failing with it on most measurements.
 */
static void partner_counts(const struct survey *s, const struct fit *f, int i, int *partners,
                           int *valued, int *strong, int *failed)
{
    const struct survey_node *n = &s->nodes[i];
    *partners = *valued = *strong = *failed = 0;
    for (int k = 0; k < n->npairs; k++) {
        const struct survey_pair *x = &s->pairs[n->pair_index[k]];
        int other = x->a == i ? x->b : x->a, seen = 0, count = 0, nfail = 0;
        for (int q = 0; q < k && !seen; q++) {
            const struct survey_pair *y = &s->pairs[n->pair_index[q]];
            seen = y->a == other || y->b == other;
        }
        if (seen || !node_ok(s, other))
            continue;
        for (int q = k; q < n->npairs; q++) {
            const struct survey_pair *y = &s->pairs[n->pair_index[q]];
            if (y->a == other || y->b == other) {
                count++;
                nfail += y->busbw < 0;
            }
        }
        (*partners)++;
        *failed += 2 * nfail > count;
        if (pair_value(s, i, other, NULL) > 0) {
            (*valued)++;
            *strong += !node_slow_in_pairs(s, f, other) && f->cap[other] > 0;
        }
    }
}

/* Repeats of the slow pairs neither node explains (a path is slow on every measurement), in as
 * many rounds of disjoint pairs as that takes, at most 4. */
/* Paths in a class slow all over in pairs (every NIC at 0.6: its level raised to the model's,
 * l->own its own) are judged against the class's own pairs: against the band every pair was slow
 * and no node fast elsewhere, and a route at half the class's speed went unnamed, unrepeated. */
static int own_judged(const struct fit *f, int i)
{
    return f->lv[f->of[i]].own > 0;
}

/* The pair p slow for a path: pair_slow, and in a class own_judged (where the band makes every
 * pair slow) short of its slower node's capacity by the tolerance too: its own spread reads wide
 * in a class of 3 a slow route pulls down. */
static int path_pair_slow(const struct survey *s, const struct fit *f, const struct survey_pair *p)
{
    double ref = fmin(f->cap[p->a], f->cap[p->b]);
    return pair_slow(s, f, p) && (!own_judged(f, p->a) || p->busbw < 0 ||
                                  (ref > 0 && p->busbw < ref * (1 - s->tolerance)));
}

/* Node a fast with a partner other than b, for a path: fast_elsewhere, or in a class own_judged
 * at its own bound too. */
static int path_fast_elsewhere(const struct survey *s, const struct fit *f, int a, int b)
{
    return fast_elsewhere(s, f, a, b) ||
           (own_judged(f, a) && fast_at(s, a, b, f->lv[f->of[a]].own_bound));
}

/* Node i slow in pairs, for a path: node_slow_in_pairs, or in a class own_judged below its own
 * bound. */
static int path_node_slow(const struct survey *s, const struct fit *f, int i)
{
    return own_judged(f, i) ? f->cap[i] < f->lv[f->of[i]].own_bound : node_slow_in_pairs(s, f, i);
}

static int repeat_paths(struct survey *s, struct fit *f)
{
    int n0 = s->npairs, rc = 0;
    struct survey_group *g = util_xmalloc(sizeof(*g) * (size_t)(s->nnodes + 1));
    char *used = util_xcalloc((size_t)s->nnodes + 1, 1),
         *repeated = util_xcalloc((size_t)n0 + 1, 1);
    for (int round = 0, left = 1; !rc && left && round < 4; round++) {
        int k = 0;
        memset(used, 0, (size_t)s->nnodes);
        left = 0;
        for (int p = 0; p < n0; p++) {
            struct survey_pair *x = &s->pairs[p];
            /* a node slow with every partner explains it; one fast with another does not */
            if (repeated[p] || !node_ok(s, x->a) || !node_ok(s, x->b) || !path_pair_slow(s, f, x) ||
                !path_fast_elsewhere(s, f, x->a, x->b) || !path_fast_elsewhere(s, f, x->b, x->a))
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
    free(used);
    free(repeated);
    free(g);
    return rc;
}

/* A class of two nodes has one pair, measured once: below the two-node band it would name the
 * class (its network, or either NIC) on one value, which 10% noise gives 2 surveys in 60. A pair
 * below the band in such a class is measured again, and its median decides. */
static int repeat_lone_pairs(struct survey *s)
{
    struct survey_group g[64];
    int k = 0, nodes[2];
    const char *cls;
    json_t *c;
    json_object_foreach(s->classes, cls, c) {
        double low = json_number_value(json_object_get(c, "pair_expected_low"));
        if (k < 64 && low > 0 && ok_members(s, cls, NULL) == 2) {
            ok_members(s, cls, nodes);
            double v = pair_value(s, nodes[0], nodes[1], NULL);
            if (v > 0 && v < low)
                g[k++] = (struct survey_group){nodes[0], nodes[1]};
        }
    }
    return k ? run_pairs(s, "repeat", g, k) : 0;
}

/* The focused rounds: a healthy node meets one suspect a round, so a bad fraction b of a class
 * takes about 2b / (1 - b) rounds to give each suspect two healthy partners (6 at b = 3/4); they
 * go on while a suspect lacks them, up to 16. While no healthy node is known (all met only slow
 * partners, or the class is slow all over) they explore pairs not yet met, up to 8 rounds. */
#define FOCUS_ROUNDS_MAX     16
#define FOCUS_EXPLORE_ROUNDS 8

/* A partner for suspect t in a focused round: a node of its class not met yet and not used this
 * round, of the healthy population (strong) when there is one, else the first from a moving start
 * (two healthy nodes that met only slow partners look slow too, until they meet). -1: none. */
static int focus_partner(const struct survey *s, const struct fit *f, const char *used, int t,
                         int start)
{
    int best = -1;
    for (int j = 0; j < s->nnodes; j++) { /* from a moving start */
        int c = (j + start + t) % s->nnodes;
        if (c == t || used[c] || !node_ok(s, c) || f->cap[c] <= 0 || !same_class(s, c, t) ||
            paired(s, t, c))
            continue;
        if (!cap_slow(s, f, c))
            return c;
        if (best < 0)
            best = c;
    }
    return best;
}

/* Node t measured in no pair though its class has another node that answers: the matchings left
 * it out (an odd class, --matchings 1), and no pair value judges its link. A focus round gives it
 * a partner; before, it was called healthy unjudged. */
static int unpaired(const struct survey *s, const struct fit *f, int t)
{
    if (!node_ok(s, t) || s->nodes[t].npairs || f->cap[t] > 0)
        return 0;
    for (int c = 0; c < s->nnodes; c++)
        if (c != t && node_ok(s, c) && same_class(s, c, t))
            return 1;
    return 0;
}

/* How many partners of the healthy population node i met in a focus round (a repeat of a pair
 * it had met is no new partner, a slow partner says nothing of it). */
static int focus_partners(const struct survey *s, const struct fit *f, int i)
{
    int n = 0;
    for (int k = 0; k < s->nodes[i].npairs; k++) {
        const struct survey_pair *x = &s->pairs[s->nodes[i].pair_index[k]];
        int other = x->a == i ? x->b : x->a;
        /* a half of a failed launch's value counts nowhere else (lighter load) */
        n += x->focused == 2 && x->busbw > 0 && !x->bisected && node_ok(s, other) &&
             !cap_slow(s, f, other);
    }
    return n;
}

/*
 * Stage 4, the focused rounds: each slow pair that no slow node explains measured again; then,
 * round by round, each node below its class's level that has met fewer than two partners of the
 * healthy population meets one it has not met (a node whose partners were all slow shows their
 * speed until then; a slow node shows its own with anyone), or, where no healthy node is known,
 * another it has not met (focus_partner; FOCUS_ROUNDS_MAX, FOCUS_EXPLORE_ROUNDS).
 */
static int stage_focus(struct survey *s)
{
    struct fit f;
    fit_init(s, &f);
    int rc = repeat_paths(s, &f);
    rc = rc ? rc : repeat_lone_pairs(s);
    struct survey_group *g = util_xmalloc(sizeof(*g) * (size_t)(s->nnodes + 1));
    char *used = util_xcalloc((size_t)s->nnodes + 1, 1);
    for (int round = 0; !rc && round < FOCUS_ROUNDS_MAX; round++) {
        int k = 0, start = round * 7919, strong_nodes = 0;
        fit_pairs(s, &f);
        memset(used, 0, (size_t)s->nnodes);
        for (int t = 0; t < s->nnodes; t++)
            strong_nodes += node_ok(s, t) && f.cap[t] > 0 && !cap_slow(s, &f, t);
        for (int t = 0; t < s->nnodes; t++) {
            int partners, valued, strong, failed;
            if ((!cap_slow(s, &f, t) && !unpaired(s, &f, t)) || used[t])
                continue;
            partner_counts(s, &f, t, &partners, &valued, &strong, &failed);
            /* a suspect meets a healthy partner in a focus round too: a node's few pair values
             * can all be low on noise alone (two of three 1.8 sigma low: a node in a few
             * hundred at 10% noise), a slow node is slow with the next partner too */
            if (strong >= 2 && focus_partners(s, &f, t) >= 1)
                continue;
            int c = focus_partner(s, &f, used, t, start);
            if (c >= 0) {
                used[t] = used[c] = 1;
                g[k++] = (struct survey_group){t, c};
            }
        }
        if (!k || (!strong_nodes && round >= FOCUS_EXPLORE_ROUNDS))
            break;
        rc = run_pairs(s, "focus", g, k);
    }
    free(g);
    free(used);
    fit_release(&f);
    return rc;
}

/* Node i's shortfall alone explains at least half of its shortfall in pairs: the node, not its
 * link (a CPU-starved host is slow alone, whatever its partners). */
static int slow_alone_too(const struct survey *s, const struct fit *f, int i, double alone_level)
{
    const struct survey_level *l = &f->lv[f->of[i]];
    double alone = alone_of(&s->nodes[i]);
    return alone > 0 && alone_level > 0 &&
           log(alone / alone_level) <= 0.5 * log(f->cap[i] / l->level);
}

/* Partners of node i whose capacity is within its class's own population, when the class's level
 * was raised to the model's (l->own): its healthy nodes by its own measure. */
static int own_strong(const struct survey *s, const struct fit *f, int i,
                      const struct survey_level *l)
{
    int n = 0;
    for (int k = 0; l->own > 0 && k < s->nodes[i].npairs; k++) {
        const struct survey_pair *x = &s->pairs[s->nodes[i].pair_index[k]];
        int other = x->a == i ? x->b : x->a;
        n += node_ok(s, other) && f->cap[other] >= l->own_bound;
    }
    return n;
}

static void node_pair_verdict(struct survey *s, const struct fit *f, int i, double alone_level)
{
    int partners, valued, strong, failed;
    partner_counts(s, f, i, &partners, &valued, &strong, &failed);
    const struct survey_level *l = &f->lv[f->of[i]];
    /* in a class slow all over in pairs (every NIC at 0.6) no partner is healthy by the model's
     * measure, and a NIC at 0.05 went unnamed: one far below the class's own level, beside
     * partners within it, is named too (the class's verdict says the rest) */
    int by_own = 0; /* judged against the class's own level: said, with it, in the verdict */
    if (!strong && l->own > 0 && f->cap[i] > 0 && f->cap[i] < l->own_bound && !l->too_spread)
        by_own = (strong = own_strong(s, f, i, l)) > 0;
    double level = by_own ? l->own : l->level;
    json_t *ev =
        json_pack("{s:i,s:i,s:i,s:f,s:f,s:f,s:f}", "partners", partners, "healthy_partners", strong,
                  "failed", failed, "capacity", f->cap[i], "class_pair_median", l->level, "bound",
                  l->bound, "alone", s->nodes[i].intra);
    /* the verdict reads the node alone by its repeat where it has one (a first value stalled
     * 40% low was shown as the node's value alone, in a verdict saying it runs fine alone) */
    if (s->nodes[i].intra_rep)
        json_object_set_new(ev, "alone_repeat",
                            s->nodes[i].intra_rep > 0 ? json_real(s->nodes[i].intra_rep)
                                                      : json_string("failed"));
    if (by_own) { /* the class below its band in pairs: its own level decided */
        json_object_set_new(ev, "class_own_pair_median", json_real(l->own));
        json_object_set_new(ev, "class_own_bound", json_real(l->own_bound));
    }
    /* where the model knows the class, its two-node band (as a node-slow alone shows its own):
     * a capacity above the class's bound, below the band's low edge, was named showing a bound
     * it passed (in the drain reason too) */
    double model = pair_model(s, i);
    if (model > 0) {
        double low = survey_alone_low(s, model);
        json_object_set_new(ev, "predicted", json_real(model));
        json_object_set_new(ev, "band_low", json_real(low));
        if (f->cap[i] < low && f->cap[i] >= l->bound)
            json_object_set_new(ev, "bound", json_real(low));
    }
    if (failed >= 2 && 3 * failed >= 2 * partners) {
        add_verdict(s, "link-fails", i, -1, ev,
                    "%s fails with %d of its %d partners, though it runs alone: its network "
                    "link (NIC, cable or switch port)",
                    s->nodes[i].host, failed, partners);
    } else if (node_slow_in_pairs(s, f, i) && valued >= 2 && strong >= 1 &&
               (!l->too_spread || pair_model(s, i) > 0)) {
        if (slow_alone_too(s, f, i, alone_level))
            add_verdict(s, "node-slow", i, -1, ev,
                        "%s is slow with its partners (%.2f GB/s, class %.2f) and alone too "
                        "(%.2f GB/s, class %.2f): the node itself",
                        s->nodes[i].host, f->cap[i], level, alone_of(&s->nodes[i]), alone_level);
        else
            add_verdict(s, "link-slow", i, -1, ev,
                        "%s runs at %.2f GB/s with its partners (%d of them, %d healthy; class "
                        "%.2f GB/s%s) but not alone (%.2f GB/s): its network link (NIC, cable or "
                        "switch port)",
                        s->nodes[i].host, f->cap[i], valued, strong, level,
                        by_own ? ", its own level in pairs, below the band" : "",
                        alone_of(&s->nodes[i]));
    } else {
        json_decref(ev);
    }
}

/*
 * The n measurements v of the pair a, b (failed ones -1) slow beyond the noise of their mean: one
 * measurement is as noisy as the class's pairs (f->noise), a mean of n sqrt(n) times less. Where
 * three of those sigmas pass the margin a measurement is judged by (its class's, or the band's
 * low edge), the mean must be below the reference by them: each measurement past the margin on
 * noise alone happens, at 10% noise to a pair in a few hundred.
 */
static int slow_beyond_noise(const struct survey *s, const struct fit *f, int a, int b,
                             const double *v, int n)
{
    const struct survey_level *l = &f->lv[f->of[a]];
    double sum = 0, model = pair_model(s, a), ref = fmin(f->cap[a], f->cap[b]);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (v[i] > 0)
            sum += log(v[i]), k++;
    if (!k || ref <= 0 || l->level <= 0)
        return 1;
    double z = util_family_sigmas(f->tests[f->of[a]]);
    double mean = sum / k, sigmas = z * f->noise[f->of[a]] / sqrt(k);
    int below = mean < log(ref) - fmax(log(l->level / l->bound), sigmas);
    if (model > 0) /* below the band's edge, and its nodes' capacity by the sigmas too */
        below |= mean < fmin(log(survey_alone_low(s, model)), log(ref) - sigmas);
    return below;
}

/* A pair slow or failing on every measurement (two at least) while both nodes are fine: a path. */
static void path_verdict(struct survey *s, const struct fit *f, int a, int b, char *done)
{
    double v[8];
    int n = 0, all_slow = 1, failed = 0;
    for (int k = 0; k < s->nodes[a].npairs; k++) {
        int q = s->nodes[a].pair_index[k];
        const struct survey_pair *y = &s->pairs[q];
        if (y->a != b && y->b != b)
            continue;
        done[q] = 1;
        all_slow &= path_pair_slow(s, f, y);
        failed += y->busbw < 0;
        if (n < 8)
            v[n] = y->busbw;
        n++;
    }
    if (n < 2 || !all_slow || path_node_slow(s, f, a) || path_node_slow(s, f, b) ||
        f->cap[a] <= 0 || f->cap[b] <= 0)
        return;
    /* both nodes faster elsewhere, by more than the tolerance: a mildly slow node's pairs sit
     * near the band's edge, some just below it, and are not a path */
    double value = pair_value(s, a, b, NULL), keep = 1 - s->tolerance;
    if (value > 0 && !(value < keep * elsewhere(s, a, b) && value < keep * elsewhere(s, b, a)))
        return;
    if (failed < n && !slow_beyond_noise(s, f, a, b, v, n < 8 ? n : 8))
        return;
    const struct survey_level *l = &f->lv[f->of[a]];
    json_t *runs = json_array();
    for (int i = 0; i < n && i < 8; i++)
        json_array_append_new(runs, json_real(v[i]));
    json_t *ev = json_pack("{s:o,s:f,s:f,s:f}", "busbw", runs, "class_pair_median", l->level,
                           "a_capacity", f->cap[a], "b_capacity", f->cap[b]);
    if (failed == n)
        add_verdict(s, "path-fails", a, b, ev,
                    "the path %s - %s fails (%d of %d launches) while both nodes work with "
                    "other partners: a route through the fabric between them",
                    s->nodes[a].host, s->nodes[b].host, failed, n);
    else
        add_verdict(s, "path-slow", a, b, ev,
                    "the path %s - %s is slow (%d measurements, class pair median %.2f GB/s) "
                    "while both nodes are fine with other partners: a route through the fabric "
                    "between them",
                    s->nodes[a].host, s->nodes[b].host, n, l->level);
}

struct by_cap {
    double cap;
    int node;
};

static int by_capacity(const void *a, const void *b)
{
    const struct by_cap *x = a, *y = b;
    return x->cap < y->cap ? -1 : x->cap > y->cap ? 1 : x->node - y->node; /* ties: host order */
}

/* The verdicts from the pairs: node by node against its class's level, a class too spread to
 * judge said so, then paths between nodes found fine. */
static void pair_verdicts(struct survey *s)
{
    struct fit f;
    struct survey_level *alone = util_xcalloc(json_object_size(s->classes) + 1, sizeof(*alone));
    int *aof = util_xcalloc((size_t)s->nnodes + 1, sizeof(int));
    fit_init(s, &f);
    /* a node's shortfall alone, set against its shortfall in pairs, is its repeat's where it has
     * one against its class's level of the same values: at 10% noise two lucky first values of
     * 1 ms set a level 30% above the class's repeats, and a NIC at 0.75 was named the node */
    alone_levels(s, alone, aof, 1);
    /* the slowest first: once named, a slow node's pairs no longer count against its partners
     * (a partner of it and of a slow path would otherwise look slow with two) */
    struct by_cap *order = util_xmalloc(sizeof(*order) * ((size_t)s->nnodes + 1));
    for (int i = 0; i < s->nnodes; i++)
        order[i] = (struct by_cap){f.cap[i], i};
    qsort(order, (size_t)s->nnodes, sizeof(*order), by_capacity);
    for (int k = 0; k < s->nnodes; k++) {
        int i = order[k].node;
        if (node_ok(s, i) && s->nodes[i].npairs)
            node_pair_verdict(s, &f, i, alone[aof[i]].level);
    }
    free(order);
    const char *cls;
    json_t *c;
    int k = 0;
    json_object_foreach(s->classes, cls, c) {
        /* a class the model knows was judged against its band above */
        int banded = json_number_value(json_object_get(c, "pair_expected")) > 0;
        if (!banded && (f.lv[k].too_spread || f.lv[k].wide))
            too_spread(s, cls, "in pairs", &f.lv[k], f.cap);
        k++;
    }
    char *done = util_xcalloc((size_t)s->npairs + 1, 1);
    for (int p = 0; p < s->npairs; p++) {
        struct survey_pair *x = &s->pairs[p];
        if (!done[p] && node_ok(s, x->a) && node_ok(s, x->b) && path_pair_slow(s, &f, x))
            path_verdict(s, &f, x->a, x->b, done);
    }
    free(done);
    below_expected(s, 0);
    free(aof);
    free(alone);
    fit_release(&f);
}

/* A verdict already says why the class's healthy nodes may be slow together: a path between two
 * of them, or one on the whole class. */
static int explained(const struct survey *s, const char *cls)
{
    for (int i = 0; i < s->nnodes; i++)
        if (s->nodes[i].on_path && s->nodes[i].class_id && !strcmp(s->nodes[i].class_id, cls))
            return 1;
    size_t k;
    json_t *v;
    json_array_foreach(s->verdicts, k, v) {
        const char *of = util_json_str(json_object_get(v, "evidence"), "class", "");
        if (!strncmp(util_json_str(v, "kind", ""), "class-", 6) && !strcmp(of, cls))
            return 1;
    }
    return 0;
}

/* A whole run of class cls below the band that many of its nodes give, nothing named to say why. */
static int below_band(const struct survey *s, const char *cls, double bw, double pred)
{
    return pred > 0 && bw >= 0 && bw < survey_alone_low(s, pred) && !explained(s, cls);
}

/* The class's healthy nodes together below the band the model gives that many of them, the
 * better of its runs (whole: the class's entry in s->whole), with nothing named that says why: a
 * fault the node and pair rounds did not localize. */
static void whole_below(struct survey *s, const char *cls, const struct survey_group *g, int n,
                        double bw, double pred, const json_t *whole)
{
    if (!below_band(s, cls, bw, pred))
        return;
    struct model_band band = model_band_at(s->size);
    json_t *hosts = json_array();
    for (int k = 0; k < n; k++)
        json_array_append_new(hosts, json_string(s->nodes[g[k].a].host));
    json_t *ev = json_pack("{s:s,s:s,s:f,s:f,s:f,s:f,s:b}", "class", cls, "measured", "whole",
                           "class_median", bw, "expected", pred, "band_low", pred * band.low,
                           "band_high", pred * band.high, "predicted", 1);
    const json_t *repeat = json_object_get(whole, "repeat");
    const char *runs = "";
    if (repeat) { /* both runs, the repeat null where it failed */
        json_t *again = json_object_get(repeat, "busbw");
        json_object_set_new(ev, "runs",
                            json_pack("[O,O]", json_object_get(whole, "first_busbw"), again));
        runs = json_is_null(again) ? " (its repeat failed)" : " (the better of two runs)";
    }
    add_hosts_verdict(
        s, "class-below-expected", hosts, ev,
        "the %d healthy node(s) of class %s measure %.2f GB/s together%s, below the band that "
        "many give (%.2f to %.2f GB/s, predicted %.2f), with no path among them or class verdict "
        "named: %s",
        n, cls, bw, runs, pred * band.low, pred * band.high, pred,
        /* under --pairs all every route was measured: the advice to take it was no advice */
        survey_every_pair(s, cls)
            ? "a path slow beyond the noise of one measurement, or what they share at that scale "
              "(every pair was measured)"
            : "a route the pair rounds did not measure (--pairs all) or what they share "
              "at that scale");
}

/* Stage 5: the healthy nodes of each class at once, against the model's prediction. */
static int stage_whole(struct survey *s)
{
    const char *cls;
    json_t *c;
    struct survey_group *g = util_xmalloc(sizeof(*g) * (size_t)(s->nnodes + 1));
    int rc = 0;
    json_object_foreach(s->classes, cls, c) {
        int n = whole_members(s, cls, g);
        if (n < 2)
            continue;
        double bw = 0;
        rc = survey_launch(s, "whole", g, n, 1, &bw);
        if (rc < 0)
            break;
        rc = rc || bw < 0; /* a whole run that measured nothing failed */
        double pred = s->probe.predict ? s->probe.predict(s, cls, n) : -1, first = bw, again = -1;
        /* one run below the band is measured again, the better kept: noise puts one run of a
         * healthy class there now and then (at 10% a run, one in forty), a slow route every
         * time */
        json_t *repeat = NULL;
        if (!rc && below_band(s, cls, bw, pred)) {
            int rerun = survey_launch(s, "whole-repeat", g, n, 1, &again);
            if (rerun < 0) {
                rc = rerun;
                break;
            }
            rerun = rerun || again < 0;
            repeat = json_pack("{s:s,s:o}", "outcome", rerun ? "failed" : "ok", "busbw",
                               rerun ? json_null() : json_real(again));
            if (!rerun && again > bw)
                bw = again;
        }
        json_t *w =
            json_pack("{s:s,s:i,s:s}", "class", cls, "nodes", n, "outcome", rc ? "failed" : "ok");
        json_object_set_new(w, "busbw", rc ? json_null() : json_real(bw));
        json_object_set_new(w, "predicted_busbw", pred >= 0 ? json_real(pred) : json_null());
        json_object_set_new(w, "measured", json_boolean(!s->probe.predicted));
        if (repeat) {
            json_object_set_new(w, "first_busbw", json_real(first));
            json_object_set_new(w, "repeat", repeat);
        }
        json_array_append_new(s->whole, w);
        if (!rc)
            whole_below(s, cls, g, n, bw, pred, w);
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
    if (!s->class_keys)
        s->class_keys = json_object();
    if (s->resume) {
        int err = survey_record_load(s);
        if (err)
            return err;
        util_info("resuming: %zu launches on file are replayed, not made again",
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
    json_decref(s->class_keys);
    json_decref(s->expect);
    if (s->probe.ctx && s->probe.release)
        s->probe.release(s);
}
