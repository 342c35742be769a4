/* SPDX-License-Identifier: MIT */
/*
 * A predicted "sweep" for hardware not owned: the model evaluates each
 * configuration of the space as the sim backend would (without noise, so one
 * run is as good as many), and gen_select chooses as it would from a real sweep:
 * faults the model predicts (a hang at init on broken P2P) fail the baseline
 * and make the cure a system variable, exactly as measured sweeps do.
 */
#include "compare/internal.h"
#include "gen/gen.h"
#include "model/model.h"
#include "sweep/sweep.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/size.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *env_lookup(const char *name, void *ctx)
{
    return json_string_value(json_object_get(ctx, name));
}

static const char *fault_outcome(enum model_fault f, const char **stage)
{
    *stage = f == MODEL_FAULT_HANG_INIT || f == MODEL_FAULT_FAIL_INIT ? "init" : "size:first";
    return f == MODEL_FAULT_HANG_INIT ? "timeout" : f == MODEL_FAULT_CRASH ? "crash" : "error";
}

/* One result line, shaped as results.jsonl's: all_reduce over the space's sizes, or (coll not
 * NULL) a workload's collective over the sizes it weights (lo to hi: sweep_workload_sizes, read
 * once per collective, not per configuration: a workload of 100,000 entries spent half of
 * compare's time reading them again), doubling. */
static json_t *predicted_run(const struct sweep_space *s, const struct topo *t, int nodes,
                             const json_t *config, const struct model_params *params,
                             const char *coll, size_t lo, size_t hi)
{
    double factor = coll ? 2 : s->factor;
    int c = coll ? model_coll_parse(coll) : MODEL_ALL_REDUCE;
    if (!coll)
        lo = s->min_bytes, hi = s->max_bytes;
    json_t *env = sweep_space_env(s, config);
    struct model m;
    json_t *r = json_pack("{s:O,s:O,s:i,s:b,s:b,s:s}", "config_id", json_object_get(config, "id"),
                          "env", json_object_get(config, "env"), "rep", 0, "final", 1, "predicted",
                          1, "class", t->class_id);
    if (model_init(&m, t, nodes, env_lookup, env)) {
        json_decref(env);
        json_decref(r);
        return NULL;
    }
    if (params)
        m.params = *params;
    if (coll)
        json_object_set_new(r, "collective", json_string(coll));
    /* machines, as a run counts its hosts (gen counts an NVLink domain's as NCCL's one node) */
    json_object_set_new(r, "nodes", json_integer(model_hosts(&m)));
    json_object_set_new(r, "ranks", json_integer(m.nranks));
    json_t *sizes = json_array();
    int wrong = 0, none = 0;
    /* NCCL_ALGO/NCCL_PROTO leaving all_reduce nothing leave another collective its own */
    enum model_fault fault =
        m.fault == MODEL_FAULT_FAIL_COLL && c != MODEL_ALL_REDUCE ? MODEL_FAULT_NONE : m.fault;
    int parts = model_coll_parts(c);
    size_t n = (size_t)m.nranks, last = 0;
    if (parts && hi < 16 * n) /* at least one 16-byte part per rank, as the sweep measures */
        hi = 16 * n;
    if (coll)
        sweep_workload_grid(lo, &hi, parts ? 16 * n : 4);
    for (size_t size = lo; !fault && size <= hi; size = util_next_size(size, factor, 0, hi)) {
        struct model_prediction p;
        /* nccl-tests' size column: every rank's float part, rounded down to 16 bytes */
        size_t at = parts ? ((size / 4 / n) & ~(size_t)3) * 4 * n : size;
        if (!at || at == last)
            continue;
        last = at;
        if ((none = model_predict_coll(&m, c, at, &p) != 0))
            break; /* no algorithm for it here: NCCL fails the call */
        wrong |= p.wrong;
        json_array_append_new(sizes,
                              json_pack("{s:I,s:f,s:f,s:f,s:i,s:s,s:s}", "size", (json_int_t)at,
                                        "time_us", p.time_us, "algbw", p.algbw, "busbw", p.busbw,
                                        "wrong", p.wrong, "algo", p.algo, "proto", p.proto));
    }
    const char *stage = NULL, *outcome = fault   ? fault_outcome(fault, &stage)
                                         : none  ? (stage = "size:first", "error")
                                         : wrong ? "wrong"
                                                 : "ok";
    json_object_set_new(r, "outcome", json_string(outcome));
    json_object_set_new(r, "stage", stage ? json_string(stage) : json_null());
    json_object_set_new(r, "sizes", sizes);
    json_decref(env);
    return r;
}

/*
 * NCCL_SOCKET_IFNAME's values from @interfaces, one per interface of the topology, kept to the
 * first: the model reads the variable only to see that it names an interface, which each of them
 * does, so they predict alike. 8 NICs made 9 times the configurations on two nodes (8,424), and a
 * spec of 128 NICs 198,144, refused. Values the space lists by name stay.
 */
static void one_interface(struct sweep_space *s)
{
    const json_t *asked = json_object_get(json_object_get(s->doc, "vars"), "NCCL_SOCKET_IFNAME");
    json_t *values = json_object_get(s->vars, "NCCL_SOCKET_IFNAME"), *v, *a, *keep;
    size_t i, k;
    int macro = 0, expanded = 0;
    json_array_foreach((json_t *)asked, i, a)
        macro |= json_is_string(a) && !strcmp(json_string_value(a), "@interfaces");
    if (!macro || !values)
        return;
    keep = json_array();
    json_array_foreach(values, i, v) {
        int listed = 0;
        json_array_foreach((json_t *)asked, k, a)
            listed |= json_equal(a, v);
        if (listed || !expanded++)
            json_array_append(keep, v);
    }
    json_object_set_new(s->vars, "NCCL_SOCKET_IFNAME", keep);
}

json_t *compare_predict(const struct topo *t, int nodes, const char *space_path,
                        const struct model_params *params, const json_t *workload)
{
    struct sweep_space s;
    struct util_buf found = UTIL_BUF_INIT;
    if (!space_path) {
        if (util_data_file("spaces/nccl-default.json", &found)) {
            util_error(
                "cannot find the shipped space spaces/nccl-default.json (looked at %s): "
                "reinstall topotune, set TOPOTUNE_DATA to its data directory, or give --space",
                util_buf_str(&found));
            util_buf_release(&found);
            return NULL;
        }
        space_path = util_buf_str(&found);
    }
    json_t *profile = NULL;
    if (sweep_space_load(&s, space_path)) {
        util_buf_release(&found);
        return NULL;
    }
    if (s.backend && strcmp(s.backend, "nccl") && strcmp(s.backend, "sim")) {
        util_error(
            "'%s' is a space for the %s backend: the model predicts NCCL, give an nccl space",
            space_path, s.backend);
        sweep_space_release(&s);
        util_buf_release(&found);
        return NULL;
    }
    int job_nodes = nodes ? nodes : t->job_nodes > 0 ? t->job_nodes : 1;
    json_decref(sweep_space_prune(&s, t, job_nodes));
    one_interface(&s);
    json_t *configs = sweep_space_configs(&s), *results = json_array(), *c, *coll;
    json_t *colls = workload ? sweep_workload_collectives(workload) : json_pack("[n]");
    size_t i, k, *lo = util_xcalloc(json_array_size(colls) + 1, sizeof(size_t)),
                 *hi = util_xcalloc(json_array_size(colls) + 1, sizeof(size_t));
    if (!configs) /* too many configurations: sweep_space_configs said so */
        goto out;
    json_array_foreach(colls, k, coll)
        if (json_is_string(coll))
            sweep_workload_sizes(workload, json_string_value(coll), &lo[k], &hi[k]);
    json_array_foreach(configs, i, c) {
        json_array_foreach(colls, k, coll) {
            json_t *r =
                predicted_run(&s, t, job_nodes, c, params, json_string_value(coll), lo[k], hi[k]);
            if (!r)
                goto out; /* no GPU: the caller says so */
            json_array_append_new(results, r);
        }
    }
    json_t *sweep =
        json_pack("{s:o,s:O,s:b,s:f,s:i,s:I,s:I,s:O,s:s,s:s,s:s}", "topology", topo_to_json(t),
                  "versions", json_null(), "predicted", 1, "cv_max", s.cv_max, "repeat", 1,
                  "objective_min", (json_int_t)s.obj_min, "objective_max", (json_int_t)s.obj_max,
                  "configs", configs, "strategy", "model", "backend", "sim", "dir", space_path);
    if (workload)
        json_object_set(sweep, "workload", (json_t *)workload);
    json_t *sweeps = json_pack("[o]", sweep);
    profile = gen_select(sweeps, results, t->class_id);
    json_object_set_new(profile, "nodes", json_integer(job_nodes));
    json_decref(sweeps);
out:
    free(lo);
    free(hi);
    json_decref(colls);
    json_decref(results);
    json_decref(configs);
    sweep_space_release(&s);
    util_buf_release(&found);
    return profile;
}

json_t *compare_scale(const struct compare_input *in, const int *nodes, int n, json_int_t size,
                      const struct model_params *params)
{
    json_t *rows = json_array();
    int is_file = in->kind && (!strcmp(in->kind, "spec") || !strcmp(in->kind, "topology"));
    struct topo t;
    topo_init(&t);
    if (is_file && topo_load(&t, in->path))
        is_file = 0;
    struct gen_shape shape; /* a measured input's nodes are its sweep's */
    gen_shape(in->profile, &shape);
    json_int_t own = shape.nodes;
    json_t *defaults = json_object(); /* NCCL's defaults: no variable set */
    for (int k = 0; k < n; k++) {
        double bw = -1;
        int predicted = compare_predicted(in);
        const char *outcome = NULL; /* why a predicted input has no number */
        struct model m;
        struct model_prediction p;
        if (is_file) {
            if (model_init(&m, &t, nodes[k], env_lookup, defaults))
                outcome = "fails";
            else if (m.fault)
                outcome = m.fault == MODEL_FAULT_HANG_INIT ? "hangs"
                          : m.fault == MODEL_FAULT_CRASH   ? "crashes"
                                                           : "fails";
            else {
                if (params)
                    m.params = *params;
                memset(&p, 0, sizeof(p));
                if (model_predict(&m, (size_t)size, &p))
                    outcome = "fails";
                else if (p.wrong)
                    outcome = "corrupts";
                else
                    bw = p.busbw;
            }
            predicted = 1;
        } else if (nodes[k] == (own > 0 ? own : 1)) {
            bw = compare_busbw_at(compare_default_sizes(in), size);
        }
        json_t *row = json_pack("{s:i,s:I,s:f,s:b}", "nodes", nodes[k], "size", size, "busbw", bw,
                                "predicted", predicted);
        if (outcome)
            json_object_set_new(row, "outcome", json_string(outcome));
        if (predicted && bw > 0) /* the band the scaling table shows */
            json_object_set_new(row, "busbw_band", compare_busbw_band(bw, size));
        json_array_append_new(rows, row);
    }
    json_decref(defaults);
    topo_release(&t);
    return rows;
}
