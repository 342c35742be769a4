/* SPDX-License-Identifier: MIT */
/*
 * Selection (docs/design.md, "Choosing a profile"): a configuration is stable when every one of
 * its full-effort runs is ok, it has at least `repeat` of them, and its
 * objective varies by at most cv_max. The winner is the stable configuration
 * with the best mean objective that beats the baseline beyond the noise; ties
 * (within the noise) go to fewer variables. A baseline whose runs were all ok
 * stays the reference even when it varied (noisy: the bound widens by its
 * spread); only a baseline that failed lets any stable configuration win.
 * Variables that cured a failing baseline are `system`; those that only add
 * speed are `tuning`.
 */
#include "gen/internal.h"
#include "model/model.h"
#include "sweep/sweep.h"
#include "topo/topo.h"
#include "tuner/tuner.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/text.h"
#include "util/version.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

struct config_stats {
    const char *id;
    json_t *env;
    int runs, ok;
    double mean, cv;
    json_t *outcomes;  /* outcome -> count */
    const char *stage; /* of the first failure */
    /* busbw summed over the objective's sizes of the ok runs, and each weighted by its size's
     * band edges (model_band_at): the band of the mean, for a predicted objective */
    double bw_sum, low_sum, high_sum;
};

/* A run's part of its mean's band: a mean of values each within its own band lies within their
 * busbw-weighted edges. A workload view (its own objective) adds nothing. */
static void band_sums(const json_t *run, size_t omin, size_t omax, struct config_stats *s)
{
    size_t i;
    json_t *e;
    if (json_is_number(json_object_get(run, "objective")))
        return;
    json_array_foreach(json_object_get(run, "sizes"), i, e) {
        json_int_t size = json_integer_value(json_object_get(e, "size"));
        double bw = json_number_value(json_object_get(e, "busbw"));
        if (size < 0 || (size_t)size < omin || (size_t)size > omax || !(bw > 0))
            continue;
        struct model_band b = model_band_at((size_t)size);
        s->bw_sum += bw;
        s->low_sum += bw * b.low;
        s->high_sum += bw * b.high;
    }
}

/* The final runs of every configuration, by id: read once, where a walk over every result per
 * configuration took seconds for a predicted sweep of a large space (configurations x results). */
static json_t *final_runs_by_id(json_t *results)
{
    json_t *by_id = json_object(), *r;
    size_t i;
    json_array_foreach(results, i, r) {
        const char *id = json_string_value(json_object_get(r, "config_id"));
        if (!json_is_true(json_object_get(r, "final")) || !id)
            continue;
        json_t *runs = json_object_get(by_id, id);
        if (!runs)
            json_object_set_new(by_id, id, runs = json_array());
        json_array_append(runs, r);
    }
    return by_id;
}

/* A configuration's final runs (a new reference; empty when it has none). */
static json_t *final_runs(json_t *by_id, const char *id)
{
    json_t *runs = json_object_get(by_id, id);
    return runs ? json_incref(runs) : json_array();
}

static void stats(json_t *runs, size_t omin, size_t omax, struct config_stats *s)
{
    double sum = 0, sq = 0;
    size_t i;
    json_t *r;
    s->outcomes = json_object();
    json_array_foreach(runs, i, r) {
        const char *o = json_string_value(json_object_get(r, "outcome"));
        json_object_set_new(s->outcomes, o,
                            json_integer(json_integer_value(json_object_get(s->outcomes, o)) + 1));
        s->runs++;
        if (strcmp(o, "ok")) {
            if (!s->stage)
                s->stage = json_string_value(json_object_get(r, "stage"));
            continue;
        }
        double obj = sweep_objective(r, omin, omax);
        band_sums(r, omin, omax, s);
        s->ok++;
        sum += obj;
        sq += obj * obj;
    }
    s->mean = s->ok ? sum / s->ok : 0;
    double var = s->ok > 1 ? fmax(0, (sq - s->ok * s->mean * s->mean) / (s->ok - 1)) : 0;
    s->cv = s->mean > 0 ? sqrt(var) / s->mean : 0;
}

static int stable(const struct config_stats *s, int repeat, double cv_max)
{
    return s->runs > 0 && s->ok == s->runs && s->runs >= repeat && s->cv <= cv_max;
}

/* busbw per size, averaged over a configuration's ok full-effort runs; algo/proto of the last. */
static json_t *per_size(json_t *runs)
{
    json_t *sizes = json_array();
    size_t i, k;
    json_t *r, *s;
    json_array_foreach(runs, i, r) {
        if (strcmp(json_string_value(json_object_get(r, "outcome")), "ok"))
            continue;
        json_array_foreach(json_object_get(r, "sizes"), k, s) {
            json_t *row = json_array_get(sizes, k);
            if (!row) {
                row = json_object();
                json_object_set(row, "size", json_object_get(s, "size"));
                json_object_set_new(row, "busbw", json_real(0));
                json_object_set_new(row, "n", json_integer(0));
                json_array_append_new(sizes, row);
            }
            json_int_t n = json_integer_value(json_object_get(row, "n"));
            double b = json_real_value(json_object_get(row, "busbw"));
            json_object_set_new(
                row, "busbw",
                json_real((b * n + json_number_value(json_object_get(s, "busbw"))) / (n + 1)));
            json_object_set_new(row, "n", json_integer(n + 1));
            json_object_set(row, "algo", json_object_get(s, "algo"));
            json_object_set(row, "proto", json_object_get(s, "proto"));
        }
    }
    json_array_foreach(sizes, i, s)
        json_object_del(s, "n");
    return sizes;
}

static const char *const system_vars[] = {"NCCL_SOCKET_IFNAME", "NCCL_IB_HCA", "NCCL_TOPO_FILE",
                                          NULL};
static const char *const cure_vars[] = {"NCCL_P2P_DISABLE",         "NCCL_P2P_LEVEL",
                                        "NCCL_SHM_DISABLE",         "NCCL_IB_DISABLE",
                                        "NCCL_IGNORE_DISABLED_P2P", NULL};

static int listed(const char *name, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(name, *list))
            return 1;
    return 0;
}

/* The sweeps' common settings gen judges with. */
struct gen_choice {
    const char *backend;
    const char *metric; /* what the objective is, in the summary */
    int workload;       /* the objective is a workload's, over its (collective, size) pairs */
    double cv_max;
    int repeat, predicted;
    size_t omin, omax;
    struct model_band band; /* a predicted objective's band (model_band_for); rows 0: none */
};

/* Workload sweeps (sweep.h, "Workloads"): a configuration is judged on every (collective, size)
 * the workload weights, not on its objective alone. */

/* A workload entry's evidence: the mean times (us) over the ok runs of the defaults and of the
 * configuration (b and t; -1: none; base NULL: no defaults measured). */
static void entry_times(const json_t *e, const struct sweep_times *runs,
                        const struct sweep_times *base, double *b, double *t)
{
    const char *coll = json_string_value(json_object_get(e, "collective"));
    size_t size = (size_t)json_integer_value(json_object_get(e, "size"));
    *b = base ? sweep_times_mean(base, coll, size) : -1;
    *t = sweep_times_mean(runs, coll, size);
}

static json_t *entry_json(const json_t *e, double b, double t)
{
    return json_pack("{s:s,s:I,s:f,s:o,s:o,s:o}", "collective",
                     json_string_value(json_object_get(e, "collective")), "size",
                     json_integer_value(json_object_get(e, "size")), "weight",
                     json_number_value(json_object_get(e, "weight")), "baseline_time_us",
                     b > 0 ? json_real(b) : json_null(), "time_us",
                     t > 0 ? json_real(t) : json_null(), "change",
                     b > 0 && t > 0 ? json_real(t / b - 1) : json_null());
}

/* Per weighted (collective, size): the defaults' time and runs' (a new array). */
static json_t *evidence(const json_t *workload, json_t *runs, json_t *base_runs)
{
    json_t *out = json_array(), *e;
    size_t i;
    double b, t;
    struct sweep_times *r = sweep_times_of(runs),
                       *base = base_runs ? sweep_times_of(base_runs) : NULL;
    json_array_foreach(json_object_get(workload, "entries"), i, e) {
        entry_times(e, r, base, &b, &t);
        json_array_append_new(out, entry_json(e, b, t));
    }
    sweep_times_free(r);
    sweep_times_free(base);
    return out;
}

/* The first (collective, size) carrying weight where runs are slower than the defaults' beyond
 * the noise (sweep_workload_slows), as {collective, size, weight, time_us, baseline_time_us,
 * change, noise_bound}; NULL: none. Asked of every configuration: nothing is built for an entry
 * that is not slower. */
static json_t *slows(const json_t *workload, json_t *runs, json_t *base_runs, double margin)
{
    json_t *found = NULL;
    struct sweep_times *r = sweep_times_of(runs), *base = sweep_times_of(base_runs);
    struct sweep_slowdown s;
    if (sweep_workload_slows(workload, r, base, margin, &s)) {
        found = entry_json(s.entry, s.base_us, s.time_us);
        json_object_set_new(found, "noise_bound", json_real(s.bar));
    }
    sweep_times_free(r);
    sweep_times_free(base);
    return found;
}

static const char *env_value(const char *name, void *ctx)
{
    return json_string_value(json_object_get(ctx, name));
}

/*
 * The swept system, to ask the model what a configuration's variables do to the collectives the
 * sweep did not measure: the job runs them under the same variables. 0 when there is none (an
 * mpi sweep's variables are not NCCL's).
 */
struct swept {
    struct topo topo;
    int loaded, nodes;
    unsigned measured; /* the collectives the sweep measured (1 << coll): the workload's, read
                        * once (asked for each configuration, its 100,000 entries were read
                        * again each time), or all_reduce alone */
};

static void swept_load(struct swept *w, const json_t *sweep, const json_t *workload)
{
    const char *backend = json_string_value(json_object_get(sweep, "backend"));
    char *text = json_dumps(json_object_get(sweep, "topology"), JSON_COMPACT);
    topo_init(&w->topo);
    w->measured = workload ? 0 : 1u << MODEL_ALL_REDUCE;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(workload, "entries"), i, e) {
        int c = model_coll_parse(json_string_value(json_object_get(e, "collective")));
        w->measured |= c >= 0 && c < 32 ? 1u << c : 0;
    }
    w->nodes = (int)json_integer_value(json_object_get(sweep, "nodes"));
    w->nodes = w->nodes > 0 ? w->nodes : 1;
    w->loaded = backend && strcmp(backend, "mpi") && text &&
                !topo_load_buffer(&w->topo, "sweep.json", text, strlen(text));
    free(text);
}

static int measured(const struct swept *w, int coll)
{
    return coll >= 0 && coll < 32 && (w->measured >> coll & 1u);
}

/*
 * {config_id, env, fails: [collective...], why} when env leaves one of NCCL's functions the sweep
 * did not measure without an algorithm and protocol on the swept system (NCCL_ALGO=Tree, which
 * only all_reduce has: NCCL fails the job's first broadcast); NULL when it leaves none. The
 * profile's variables apply to the whole job, so such a configuration is never chosen; its gain
 * reaches the job through the per-size table, which NCCL's tuner applies per collective.
 */
static json_t *breaks_others(const struct swept *w, const char *id, json_t *env)
{
    struct model m;
    if (!w->loaded || model_init(&m, &w->topo, w->nodes, env_value, env))
        return NULL;
    json_t *fails = json_array();
    static const int colls[] = {MODEL_BROADCAST, MODEL_REDUCE, MODEL_ALL_GATHER,
                                MODEL_REDUCE_SCATTER, MODEL_ALL_REDUCE};
    struct model_prediction p;
    for (size_t i = 0; i < sizeof(colls) / sizeof(colls[0]); i++)
        if (!measured(w, colls[i]) && model_predict_coll(&m, colls[i], 1 << 20, &p))
            json_array_append_new(fails, json_string(model_coll_name(colls[i])));
    if (!json_array_size(fails))
        return json_decref(fails), NULL;
    return json_pack("{s:s,s:O,s:o,s:s}", "config_id", id, "env", env, "fails", fails, "why",
                     "its NCCL_ALGO or NCCL_PROTO leaves these collectives no algorithm and "
                     "protocol here: NCCL fails them in any job that calls them");
}

/* The first outcome other than ok (the baseline's failure), for the evidence. */
static const char *first_failure(json_t *outcomes)
{
    const char *o;
    json_t *n;
    json_object_foreach(outcomes, o, n)
        if (strcmp(o, "ok"))
            return o;
    return "?";
}

/* Whose defaults the all-unset baseline ran with. */
static const char *defaults_of(const char *backend)
{
    return backend && !strcmp(backend, "mpi") ? "Open MPI's defaults" : "NCCL's defaults";
}

/* What the baseline's runs say: the reference (stable or noisy: every run ok), failed, or none. */
enum base_verdict { BASE_UNMEASURED, BASE_FAILED, BASE_NOISY, BASE_STABLE };

static enum base_verdict base_verdict(const struct config_stats *b, int repeat, double cv_max)
{
    if (!b->runs)
        return BASE_UNMEASURED;
    if (b->ok < b->runs)
        return BASE_FAILED;
    return stable(b, repeat, cv_max) ? BASE_STABLE : BASE_NOISY;
}

static const char *verdict_name(enum base_verdict v)
{
    static const char *const names[] = {"unmeasured", "failed", "noisy", "stable"};
    return names[v];
}

/* ", the defaults noisy (cv 0.120 over 2 runs, limit 0.050)" or "" into buf. */
static const char *noisy_note(const struct config_stats *b, enum base_verdict v, int repeat,
                              double cv_max, char *buf, size_t len)
{
    buf[0] = '\0';
    if (v == BASE_NOISY)
        snprintf(buf, len, "; the defaults were noisy (cv %.3f over %d of %d runs, limit %.3f)",
                 b->cv, b->runs, repeat, cv_max);
    return buf;
}

/* GB/s as people write it: 2 decimals, 3 significant digits below 0.1 (0.0000339), never an
 * exponent (a workload of 1-byte calls has one). */
static const char *gbs(char *buf, size_t len, double v)
{
    if (v >= 0.1 || v <= 0 || !isfinite(v)) {
        snprintf(buf, len, "%.2f", v);
        return buf;
    }
    struct util_buf b = UTIL_BUF_INIT;
    util_text_number(&b, v, 3);
    snprintf(buf, len, "%s", util_buf_str(&b));
    util_buf_release(&b);
    return buf;
}

/* A configuration's objective in GB/s; a predicted one with its band, so that no predicted number
 * stands alone: the busbw-weighted band of its sizes, or the workload's (c->band). */
/* A predicted objective's band in GB/s (*low, *high); 0 when it has none (measured, or no
 * number above 0). */
static int objective_band(const struct config_stats *s, const struct gen_choice *c, double *low,
                          double *high)
{
    double l = c->band.low, h = c->band.high;
    if (s->bw_sum > 0) {
        l = s->low_sum / s->bw_sum;
        h = s->high_sum / s->bw_sum;
    }
    if (!c->predicted || !(h > 0) || !(s->mean > 0))
        return 0;
    *low = s->mean * l;
    *high = s->mean * h;
    return 1;
}

static const char *objective_text(char *buf, size_t len, const struct config_stats *s,
                                  const struct gen_choice *c)
{
    char n[32], lo[32], hi[32];
    double low, high;
    gbs(n, sizeof(n), s->mean);
    if (!objective_band(s, c, &low, &high))
        snprintf(buf, len, "%s GB/s", n);
    else
        snprintf(buf, len, "%s GB/s [band %s-%s]", n, gbs(lo, sizeof(lo), low),
                 gbs(hi, sizeof(hi), high));
    return buf;
}

/* The profile's objective of a configuration, with its band where predicted (objective_band). */
static void set_objective(json_t *o, const struct config_stats *s, const struct gen_choice *c)
{
    double low, high;
    json_object_set_new(o, "objective", json_real(s->mean));
    if (objective_band(s, c, &low, &high))
        json_object_set_new(o, "objective_band", json_pack("[f,f]", low, high));
}

/* The band of a workload's effective algbw (bytes over time): within the widest band of the
 * (collective, size) pairs it joins, as each pair's time is within its own. */
static struct model_band workload_band(const json_t *workload)
{
    struct model_band band = {0, 0, 0};
    json_t *colls = sweep_workload_collectives(workload), *c;
    size_t i, lo, hi;
    json_array_foreach(colls, i, c) {
        int coll = model_coll_parse(json_string_value(c));
        sweep_workload_sizes(workload, json_string_value(c), &lo, &hi);
        struct model_band b = model_band_wider(model_band_for(coll, lo), model_band_for(coll, hi));
        band = band.rows ? model_band_wider(band, b) : b;
    }
    json_decref(colls);
    return band;
}

static json_t *variables(const struct config_stats *w, const struct config_stats *base,
                         enum base_verdict bv, const struct gen_choice *c)
{
    json_t *vars = json_array();
    const char *name, *pred = c->predicted ? "predicted " : "";
    int base_ref = bv >= BASE_NOISY;
    char note[160], over[96], wb[80], bb[80];
    noisy_note(base, bv, c->repeat, c->cv_max, note, sizeof(note));
    if (c->workload) /* the workload's sizes, not the space's objective range */
        snprintf(over, sizeof(over), "over the workload's (collective, size) pairs");
    else
        snprintf(over, sizeof(over), "over %zu..%zu B", c->omin, c->omax);
    json_t *v;
    json_object_foreach(w->env, name, v) {
        const char *role = "tuning";
        char evidence[640];
        if (!strncmp(name, "NCCL_DEBUG", 10))
            role = "debug";
        else if (listed(name, system_vars) || (bv == BASE_FAILED && listed(name, cure_vars)))
            role = "system";
        if (!strcmp(role, "system") && bv == BASE_FAILED)
            snprintf(evidence, sizeof(evidence),
                     "%s failed here (%s in %d of %d runs, stage %s); with %s=%s all %d "
                     "runs were ok",
                     defaults_of(c->backend), first_failure(base->outcomes), base->runs - base->ok,
                     base->runs, base->stage ? base->stage : "?", name, json_string_value(v),
                     w->runs);
        else if (base_ref)
            snprintf(evidence, sizeof(evidence),
                     "%s%s %s against %s with %s %s, %d runs, cv %.3f%s", pred, c->metric,
                     objective_text(wb, sizeof(wb), w, c), objective_text(bb, sizeof(bb), base, c),
                     defaults_of(c->backend), over, w->runs, w->cv, note);
        else
            snprintf(evidence, sizeof(evidence), "%s%s %s %s, %d runs, cv %.3f (%s %s)", pred,
                     c->metric, objective_text(wb, sizeof(wb), w, c), over, w->runs, w->cv,
                     defaults_of(c->backend), bv == BASE_FAILED ? "failed" : "were not measured");
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(name));
        json_object_set(o, "value", v);
        json_object_set_new(o, "role", json_string(role));
        json_object_set_new(o, "evidence", json_string(evidence));
        json_array_append_new(vars, o);
    }
    return vars;
}

/* The GPUs' model: GPU0's when every GPU has it, else "2 x A, 1 x B" (a mixed node is not GPU0's
 * kind); null when unknown. New reference. */
static json_t *gpu_model(const json_t *gpus)
{
    json_t *counts = json_object(), *g;
    size_t i;
    json_array_foreach(gpus, i, g) {
        const char *m = json_string_value(json_object_get(g, "model"));
        if (!m)
            m = "unknown";
        json_object_set_new(counts, m,
                            json_integer(json_integer_value(json_object_get(counts, m)) + 1));
    }
    json_t *out = json_object_size(counts) == 1
                      ? json_incref(json_object_get(json_array_get(gpus, 0), "model"))
                      : NULL;
    if (json_object_size(counts) > 1) {
        struct util_buf b = UTIL_BUF_INIT;
        const char *m;
        json_t *n;
        json_object_foreach(counts, m, n)
            util_buf_addf(&b, "%s%lld x %s", b.len ? ", " : "", (long long)json_integer_value(n),
                          m);
        out = json_string(util_buf_str(&b));
        util_buf_release(&b);
    }
    json_decref(counts);
    return out ? out : json_null();
}

static json_t *hardware(json_t *topo)
{
    json_t *h = json_object(), *gpus = json_object_get(topo, "gpus");
    json_object_set_new(h, "gpus", json_integer((json_int_t)json_array_size(gpus)));
    json_object_set_new(h, "gpu_model", gpu_model(gpus));
    json_object_set(h, "nvswitches", json_object_get(topo, "nvswitches"));
    json_int_t domain = json_integer_value(json_object_get(topo, "nvlink_domain"));
    if (domain > (json_int_t)json_array_size(gpus)) /* hosts NCCL counts as one node */
        json_object_set_new(h, "nvlink_domain", json_integer(domain));
    json_object_set_new(h, "nics",
                        json_integer((json_int_t)json_array_size(json_object_get(topo, "nics"))));
    json_object_set(h, "cpu", json_object_get(topo, "cpu"));
    json_object_set(h, "matrix", json_object_get(topo, "matrix"));
    json_object_set(h, "class_key", json_object_get(json_object_get(topo, "class"), "key"));
    return h;
}

static json_t *sweep_summary(json_t *sweeps, json_t *lines, size_t nconfigs)
{
    json_t *s = json_object(), *outcomes = json_object(), *dirs = json_array();
    json_t *runs = sweep_run_outcomes(lines), *r;
    const char *key;
    json_object_foreach(runs, key, r) {
        const char *o = json_string_value(r);
        json_object_set_new(outcomes, o,
                            json_integer(json_integer_value(json_object_get(outcomes, o)) + 1));
    }
    size_t i;
    json_array_foreach(sweeps, i, r)
        json_array_append(dirs, json_object_get(r, "dir"));
    json_object_set_new(s, "sweeps", dirs);
    json_object_set_new(s, "configurations", json_integer((json_int_t)nconfigs));
    json_object_set_new(s, "runs", json_integer((json_int_t)json_object_size(runs)));
    json_decref(runs);
    json_object_set_new(s, "outcomes", outcomes);
    json_object_set(s, "strategy", json_object_get(json_array_get(sweeps, 0), "strategy"));
    json_object_set(s, "backend", json_object_get(json_array_get(sweeps, 0), "backend"));
    return s;
}

/* "1 node x 8 ranks" for a result that recorded its shape; "" when it did not (a failed launch). */
static void shape_of(const json_t *r, char *buf, size_t len)
{
    json_int_t nodes = json_integer_value(json_object_get(r, "nodes"));
    json_int_t ranks = json_integer_value(json_object_get(r, "ranks"));
    buf[0] = '\0';
    if (nodes > 0 && ranks > 0)
        snprintf(buf, len, "%lld node%s x %lld ranks", (long long)nodes, nodes == 1 ? "" : "s",
                 (long long)ranks);
}

/*
 * One statistic per shape: busbw over 1 node x 8 ranks and over 2 nodes x 16 ranks are different
 * quantities, and a mean over both (or a winner from one, a baseline from the other) means
 * nothing. Returns 0 when every run that recorded its shape has the same one; else -1 after an
 * error naming the shapes and the sweeps (their "shape", added by gen_load_sweep).
 */
static int one_shape(json_t *sweeps, json_t *results, const char *class_id)
{
    char first[64] = "", cur[64];
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r) {
        shape_of(r, cur, sizeof(cur));
        if (!first[0])
            snprintf(first, sizeof(first), "%s", cur);
        else if (cur[0] && strcmp(cur, first))
            break;
    }
    if (i == json_array_size(results))
        return 0;
    struct util_buf which = UTIL_BUF_INIT;
    json_array_foreach(sweeps, i, r) {
        const char *shape = json_string_value(json_object_get(r, "shape"));
        const char *dir = json_string_value(json_object_get(r, "dir"));
        if (shape && dir)
            util_buf_addf(&which, "%s'%s' %s", which.len ? ", " : " (", dir, shape);
    }
    if (which.len)
        util_buf_adds(&which, ")");
    util_error(
        "sweeps of class '%s' measured %s and %s%s: one profile cannot mix them; give gen the "
        "sweeps of one shape at a time (each into its own --profiles root)",
        class_id, first, cur, which.len ? util_buf_str(&which) : "");
    util_buf_release(&which);
    return -1;
}

/* 0 when every sweep optimised the same workload (or none), else an error naming two. */
static int one_workload(json_t *sweeps, const char *class_id)
{
    json_t *first = json_array_get(sweeps, 0), *sw;
    json_t *want = json_object_get(first, "workload");
    size_t i;
    json_array_foreach(sweeps, i, sw) {
        json_t *have = json_object_get(sw, "workload");
        int none_a = !want || json_is_null(want), none_b = !have || json_is_null(have);
        if (none_a == none_b && (none_a || json_equal(want, have)))
            continue;
        util_error("sweeps of class '%s' optimised different workloads ('%s' %s, '%s' %s): one "
                   "profile cannot mix them; give gen the sweeps of one workload at a time",
                   class_id, json_string_value(json_object_get(first, "dir")),
                   none_a ? "all_reduce alone" : "a workload",
                   json_string_value(json_object_get(sw, "dir")),
                   none_b ? "all_reduce alone" : "another workload");
        return -1;
    }
    return 0;
}

/* 0 when every sweep judged by the same rules (objective sizes, cv_max, repeat) and measured the
 * same way (backend; predicted follows from it, sweep_meta_check): gen_select reads the first's;
 * else an error naming two: merged, the profile would depend on their order. */
static int one_rule(json_t *sweeps, const char *class_id)
{
    static const char *const keys[] = {"objective_min", "objective_max", "cv_max", "repeat",
                                       "backend"};
    json_t *first = json_array_get(sweeps, 0), *sw;
    size_t i;
    json_array_foreach(sweeps, i, sw)
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
            json_t *a = json_object_get(first, keys[k]), *b = json_object_get(sw, keys[k]);
            if ((!a && !b) || (a && b && json_equal(a, b)) ||
                (json_is_number(a) && json_is_number(b) &&
                 json_number_value(a) == json_number_value(b)))
                continue;
            util_error("sweeps of class '%s' were judged by different rules ('%s' and '%s' differ "
                       "in %s): one profile cannot mix them; give gen the sweeps of one space at "
                       "a time",
                       class_id, json_string_value(json_object_get(first, "dir")),
                       json_string_value(json_object_get(sw, "dir")), keys[k]);
            return -1;
        }
    return 0;
}

/*
 * The per-size rows apply on top of the profile's variables: a row's evidence must come from runs
 * that had them set (with the same values), differing only in what a row chooses (the algorithm
 * and the protocol). Returns a new reference: the run arrays of such stable configurations.
 */
static json_t *row_candidates(json_t *stable_runs, const json_t *profile_env)
{
    json_t *out = json_array(), *runs;
    size_t i;
    json_array_foreach(stable_runs, i, runs) {
        const json_t *env = json_object_get(json_array_get(runs, 0), "env");
        const char *name;
        json_t *v;
        int fits = 1;
        json_object_foreach((json_t *)profile_env, name, v)
            fits &= json_equal(v, json_object_get(env, name));
        json_object_foreach((json_t *)env, name, v)
            fits &= json_object_get(profile_env, name) || !strcmp(name, "NCCL_ALGO") ||
                    !strcmp(name, "NCCL_PROTO");
        if (fits)
            json_array_append(out, runs);
    }
    return out;
}

/* The lines of collective coll of views (a new array). */
static json_t *parts_of(json_t *views, const char *coll)
{
    json_t *out = json_array(), *v, *line;
    size_t i;
    json_array_foreach(views, i, v)
        if ((line = json_object_get(json_object_get(v, "parts"), coll)))
            json_array_append(out, line);
    return out;
}

/* Each row's nodes as NCCL counts them, which its tuner API passes the plugin: the hosts of one
 * NVLink domain (the sweep's topology's nvlink_domain; a GB200 NVL72 rack: 72 GPUs) are one node
 * (MNNVL), counted by the model's own rule (model_nccl_nodes_of). A run counts its hosts. */
static void nccl_nodes(json_t *rows, const json_t *topology)
{
    size_t gpus = json_array_size(json_object_get(topology, "gpus"));
    json_int_t domain = json_integer_value(json_object_get(topology, "nvlink_domain"));
    size_t i;
    json_t *r;
    if (gpus < 1 || gpus > INT_MAX || domain <= (json_int_t)gpus || domain > INT_MAX)
        return; /* no domain beyond a host: every host is a node */
    json_array_foreach(rows, i, r) {
        json_int_t nodes = json_integer_value(json_object_get(r, "nodes"));
        if (nodes >= 1 && nodes <= INT_MAX)
            json_object_set_new(
                r, "nodes", json_integer(model_nccl_nodes_of((int)gpus, (int)domain, (int)nodes)));
    }
}

/* A workload's per-size rows: for each collective of it that NCCL asks a tuner about, the rows
 * of its lines, judged as all_reduce's are (gen_tuner_rows), under the table's name for it. */
static json_t *workload_rows(const json_t *workload, json_t *cands, json_t *ref, double cv_max,
                             const char *ref_name, int predicted)
{
    json_t *rows = json_array(), *colls = sweep_workload_collectives(workload), *c, *runs;
    size_t i, j;
    json_array_foreach(colls, i, c) {
        const char *name = json_string_value(c);
        int tuned = model_coll_tuner(model_coll_parse(name));
        if (tuned < 0 || !ref)
            continue; /* alltoall and sendrecv: no algorithm to choose */
        json_t *mine = json_array(), *ref_lines = parts_of(ref, name);
        json_array_foreach(cands, j, runs)
            json_array_append_new(mine, parts_of(runs, name));
        json_t *more =
            gen_tuner_rows(mine, ref_lines, cv_max, ref_name, predicted, tuner_coll_name(tuned));
        json_array_extend(rows, more);
        json_decref(more);
        json_decref(mine);
        json_decref(ref_lines);
    }
    json_decref(colls);
    return rows;
}

/* The profile's one line for people; every number predicted where the sweeps were. */
static json_t *summary_line(const struct config_stats *best, int winner,
                            const struct config_stats *base, enum base_verdict bv,
                            const struct gen_choice *c)
{
    const char *pred = c->predicted ? "predicted " : "";
    char note[160], b[80], w[80];
    noisy_note(base, bv, c->repeat, c->cv_max, note, sizeof(note));
    objective_text(b, sizeof(b), base, c);
    objective_text(w, sizeof(w), best, c);
    if (bv >= BASE_NOISY && !winner)
        return json_sprintf("%s are best here (%s%s %s): no stable configuration "
                            "beat them beyond the noise%s",
                            defaults_of(c->backend), pred, c->metric, b, note);
    if (winner && bv >= BASE_NOISY)
        return json_sprintf("configuration %s: %s%s %s against %s with %s%s", best->id, pred,
                            c->metric, w, b, defaults_of(c->backend), note);
    if (winner)
        return json_sprintf("configuration %s: %s%s %s (%s %s)", best->id, pred, c->metric, w,
                            defaults_of(c->backend),
                            bv == BASE_FAILED ? "failed here" : "were not measured");
    return json_string("no configuration was stable: nothing to recommend");
}

static json_t *baseline_json(const struct config_stats *base, enum base_verdict bv,
                             json_t *base_runs, const struct gen_choice *c)
{
    json_t *b = json_object();
    json_object_set_new(b, "stable", json_boolean(bv == BASE_STABLE));
    json_object_set_new(b, "verdict", json_string(verdict_name(bv)));
    set_objective(b, base, c);
    json_object_set_new(b, "cv", json_real(base->cv));
    json_object_set_new(b, "runs", json_integer(base->runs));
    json_object_set_new(b, "outcomes",
                        base->outcomes ? json_incref(base->outcomes) : json_object());
    json_object_set_new(b, "per_size", base_runs ? per_size(base_runs) : json_array());
    return b;
}

json_t *gen_select(json_t *sweeps, json_t *results, const char *class_id)
{
    json_t *first = json_array_get(sweeps, 0);
    if (one_shape(sweeps, results, class_id) || one_workload(sweeps, class_id) ||
        one_rule(sweeps, class_id))
        return NULL;
    struct gen_choice ch = {
        .backend = json_string_value(json_object_get(first, "backend")),
        .cv_max = json_number_value(json_object_get(first, "cv_max")),
        .repeat = (int)json_integer_value(json_object_get(first, "repeat")),
        .predicted = json_is_true(json_object_get(first, "predicted")),
        .omin = (size_t)json_integer_value(json_object_get(first, "objective_min")),
        .omax = (size_t)json_integer_value(json_object_get(first, "objective_max")),
    };
    ch.backend = ch.backend ? ch.backend : "nccl";
    /* a workload sweep's runs are its views: a line per collective joined, the workload's
     * objective (the lines themselves stay the measured record) */
    json_t *workload = json_object_get(first, "workload");
    workload = json_is_object(workload) ? workload : NULL;
    json_t *lines = results;
    results = workload ? sweep_workload_views(workload, lines) : json_incref(lines);
    ch.metric = workload ? "workload's effective algbw" : "mean busbw";
    ch.workload = workload != NULL;
    if (!ch.omax) /* a sweep.json without the objective: every size counts */
        ch.omax = (size_t)-1;
    if (ch.predicted && workload)
        ch.band = workload_band(workload);
    double cv_max = ch.cv_max;
    int repeat = ch.repeat;
    size_t omin = ch.omin, omax = ch.omax;
    const char *backend = ch.backend;
    /* Every configuration seen in any sweep of the class. */
    json_t *ids = json_object();
    size_t i, k;
    json_t *sw, *c;
    json_array_foreach(sweeps, i, sw)
        json_array_foreach(json_object_get(sw, "configs"), k, c)
            json_object_set(ids, json_string_value(json_object_get(c, "id")),
                            json_object_get(c, "env"));
    struct config_stats base = {0}, best = {0};
    int have_best = 0, base_seen = 0;
    json_t *stable_runs = json_array(), *best_runs = NULL, *base_runs = NULL;
    json_t *rejected = json_array(), *defaults_runs = NULL, *unusable = json_array(), *broken;
    struct swept swept;
    swept_load(&swept, first, workload);
    const char *id;
    json_t *env;
    json_t *by_id = final_runs_by_id(results);
    json_object_foreach(ids, id, env) /* the defaults' runs, which a workload judges against */
        if (!defaults_runs && json_object_size(env) == 0)
            defaults_runs = final_runs(by_id, id);
    json_object_foreach(ids, id, env) {
        json_t *runs = final_runs(by_id, id), *why;
        struct config_stats s = {.id = id, .env = env};
        stats(runs, omin, omax, &s);
        int is_base = json_object_size(env) == 0;
        if (stable(&s, repeat, cv_max) && !is_base)
            json_array_append(stable_runs, runs);
        if (is_base && base_seen) { /* one baseline: a second all-unset entry adds nothing */
            json_decref(s.outcomes);
            json_decref(runs);
            continue;
        }
        if (is_base) {
            base = s;
            base_seen = 1;
            base_runs = json_incref(runs);
        } else if (stable(&s, repeat, cv_max) && workload && defaults_runs &&
                   (why = slows(workload, runs, defaults_runs, cv_max))) {
            /* faster for the mix, slower for one of its collectives: never chosen */
            json_object_set_new(why, "config_id", json_string(id));
            json_object_set(why, "env", env);
            json_array_append_new(rejected, why);
        } else if (stable(&s, repeat, cv_max) && (broken = breaks_others(&swept, id, env))) {
            json_array_append_new(unusable, broken);
        } else if (stable(&s, repeat, cv_max)) {
            double noise = fmax(cv_max, fmax(s.cv, best.cv)) * fmax(s.mean, best.mean);
            int better = !have_best || s.mean > best.mean + noise ||
                         (fabs(s.mean - best.mean) <= noise &&
                          json_object_size(env) < json_object_size(best.env));
            if (better) {
                if (have_best)
                    json_decref(best.outcomes);
                json_decref(best_runs);
                best = s;
                best_runs = json_incref(runs);
                have_best = 1;
                json_decref(runs);
                continue;
            }
        }
        if (!is_base)
            json_decref(s.outcomes);
        json_decref(runs);
    }
    enum base_verdict bv = base_verdict(&base, repeat, cv_max);
    int base_ref = bv >= BASE_NOISY; /* every run ok: the reference, noisy or not */
    double noise = fmax(cv_max, base.cv + best.cv) * base.mean;
    int winner = have_best && (!base_ref || best.mean > base.mean + noise);
    json_t *p = json_object();
    json_object_set_new(p, "schema", json_string("topotune/profile/1"));
    json_object_set_new(p, "class", json_string(class_id));
    json_object_set_new(p, "backend", json_string(backend));
    json_object_set_new(p, "hardware", hardware(json_object_get(first, "topology")));
    json_object_set(p, "software", json_object_get(first, "versions"));
    json_object_set(p, "predicted", json_object_get(first, "predicted"));
    json_object_set_new(p, "defaults_best", json_boolean(base_ref && !winner));
    json_object_set_new(
        p, "objective",
        json_pack("{s:I,s:I}", "min_bytes", (json_int_t)omin, "max_bytes", (json_int_t)omax));
    json_t *summary = summary_line(&best, winner, &base, bv, &ch);
    if (json_array_size(unusable)) { /* a faster one may be among them: say why it is not chosen */
        json_t *u = json_array_get(unusable, 0), *f;
        struct util_buf fails = UTIL_BUF_INIT;
        json_array_foreach(json_object_get(u, "fails"), i, f)
            util_buf_addf(&fails, "%s%s", i ? ", " : "", json_string_value(f));
        json_t *longer =
            json_sprintf("%s; left out whatever their speed: %zu configuration(s) under which "
                         "NCCL fails other collectives (%s: %s; see unusable)",
                         json_string_value(summary), json_array_size(unusable),
                         json_string_value(json_object_get(u, "config_id")), util_buf_str(&fails));
        util_buf_release(&fails);
        json_decref(summary);
        summary = longer;
    }
    json_object_set_new(p, "summary", summary);
    json_object_set_new(p, "variables", winner ? variables(&best, &base, bv, &ch) : json_array());
    json_object_set_new(p, "baseline", baseline_json(&base, bv, base_runs, &ch));
    if (workload) {
        json_object_set(p, "workload", workload);
        json_object_set_new(p, "evidence",
                            evidence(workload, winner ? best_runs : base_runs, base_runs));
        json_object_set_new(p, "rejected", json_incref(rejected));
    }
    if (json_array_size(unusable))
        json_object_set(p, "unusable", unusable);
    if (winner) {
        json_t *w = json_object();
        json_object_set_new(w, "config_id", json_string(best.id));
        json_object_set(w, "env", best.env);
        set_objective(w, &best, &ch);
        json_object_set_new(w, "cv", json_real(best.cv));
        json_object_set_new(w, "runs", json_integer(best.runs));
        json_object_set_new(w, "per_size", per_size(best_runs));
        json_object_set_new(p, "winner", w);
    } else {
        json_object_set_new(p, "winner", json_null());
    }
    /* The per-size table applies on top of the profile's variables, so it is judged there: against
     * the winner's runs (NCCL's defaults where the profile sets nothing), with evidence from runs
     * that set the profile's variables too. */
    json_t *empty = json_object();
    json_t *cands = row_candidates(stable_runs, winner ? best.env : empty);
    json_t *ref = winner ? best_runs : base_ref ? base_runs : NULL;
    const char *ref_name = winner ? "the profile's configuration" : defaults_of(backend);
    json_t *rules = workload
                        ? workload_rows(workload, cands, ref, cv_max, ref_name, ch.predicted)
                        : gen_tuner_rows(cands, ref, cv_max, ref_name, ch.predicted, "allreduce");
    nccl_nodes(rules, json_object_get(first, "topology"));
    json_decref(cands);
    json_decref(empty);
    json_object_set_new(p, "tuner", rules);
    json_object_set_new(p, "sweep", sweep_summary(sweeps, lines, json_object_size(ids)));
    json_object_set_new(p, "tool_version", json_string(util_version()));
    gen_measured(p, lines);
    json_decref(base.outcomes);
    if (have_best)
        json_decref(best.outcomes);
    json_decref(best_runs);
    json_decref(base_runs);
    json_decref(stable_runs);
    json_decref(ids);
    json_decref(by_id);
    json_decref(rejected);
    json_decref(unusable);
    topo_release(&swept.topo);
    json_decref(defaults_runs);
    json_decref(results);
    return p;
}

int gen_load_sweep(const char *dir, json_t *sweeps, json_t *results)
{
    json_t *meta, *runs;
    if (sweep_load_dir(dir, &meta, &runs))
        return -1;
    json_object_set_new(meta, "dir", json_string(dir));
    /* which sweep each line is from: a workload's lines join their own run's only */
    size_t k;
    json_t *line;
    json_array_foreach(runs, k, line)
        json_object_set_new(line, "sweep", json_string(dir));
    /* Its shape, to name it when sweeps of different shapes meet (one_shape). */
    size_t i;
    json_t *r;
    json_array_foreach(runs, i, r) {
        char shape[64];
        shape_of(r, shape, sizeof(shape));
        if (shape[0]) {
            json_object_set_new(meta, "shape", json_string(shape));
            break;
        }
    }
    json_array_append_new(sweeps, meta);
    json_array_extend(results, runs);
    json_decref(runs);
    return 0;
}
