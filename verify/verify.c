/* SPDX-License-Identifier: MIT */
/* The profile, its variables, and the predicted comparison (verify/verify.h). */
#include "bench/bench.h"
#include "gen/gen.h"
#include "model/model.h"
#include "tuner/tuner.h"
#include "sweep/sweep.h"
#include "util/buf.h"
#include "util/env.h"
#include "util/error.h"
#include "util/file.h"
#include "util/log.h"
#include "util/text.h"
#include "verify/internal.h"
#include "verify/verify.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* The profile's variables as NAME -> value, for the model's environment lookups. */
static const char *profile_env(const char *name, void *ctx)
{
    return json_string_value(json_object_get(ctx, name));
}

const char *verify_coll_refused(int coll)
{
    if (!model_coll_name(coll))
        return "not a collective nccl-tests measures";
    if (model_coll_tuner(coll) < 0)
        return "NCCL runs it as sends and receives, for which it asks no tuner: a table has no "
               "row for it";
    return NULL;
}

json_t *verify_load_profile(const char *arg, char *table, size_t len)
{
    char path[4096];
    json_t *p = gen_profile_read(arg, path, sizeof(path));
    if (!p)
        return NULL;
    char *slash = strrchr(path, '/'); /* the table lies beside profile.json */
    if (slash)
        snprintf(table, len, "%.*s/tuner-table.txt", (int)(slash - path), path);
    else
        snprintf(table, len, "tuner-table.txt");
    /* the profile's own file, as gen wrote it: a link planted there names another table (or any
     * file) and is not followed, as profile.json in a profile directory is not */
    struct stat st;
    if (!lstat(table, &st) && !S_ISREG(st.st_mode)) {
        json_decref(p);
        return util_error("'%s' is not a regular file (a link?): a profile holds its own table",
                          table),
               NULL;
    }
    return p;
}

json_t *verify_variables(const json_t *profile, int system_only)
{
    json_t *env = json_object(), *v;
    size_t i;
    json_array_foreach(json_object_get(profile, "variables"), i, v) {
        const char *name = json_string_value(json_object_get(v, "name"));
        const char *value = json_string_value(json_object_get(v, "value"));
        const char *role = json_string_value(json_object_get(v, "role"));
        if (!name || !value || (system_only && (!role || strcmp(role, "system"))))
            continue;
        const char *why = util_env_refused(name);
        if (why || !sweep_valid_value(value)) { /* name: a variable name, checked on reading */
            util_error("the profile sets %.64s, which verify does not set: %s", name,
                       why ? why : "its value is not of letters, digits and _.,:=^/+-@");
            json_decref(env);
            return NULL;
        }
        json_object_set_new(env, name, json_string(value));
    }
    return env;
}

void verify_env_words(const json_t *env, struct util_buf *out)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)env, k, v) {
        util_buf_addf(out, "%s%s=", out->len ? ", " : "", k);
        util_buf_adds(out, json_string_value(v));
    }
}

double verify_gain(double a, double b)
{
    return b > 0 ? 100 * (a / b - 1) : 0;
}

void verify_count_rows(const struct tuner_table *t, int coll, size_t *own, size_t *others)
{
    int tc = model_coll_tuner(coll);
    *own = 0;
    for (int c = 0; c < TUNER_NUM_COLLS; c++)
        others[c] = 0;
    for (size_t i = 0; i < t->nrules; i++) {
        if (t->rules[i].coll == tc)
            (*own)++;
        else
            others[t->rules[i].coll < TUNER_NUM_COLLS ? t->rules[i].coll : 0]++;
    }
}

void verify_print_others(const size_t *others)
{
    for (int c = 0; c < MODEL_NCOLLS; c++) /* each named with the option that shows it */
        if (model_coll_tuner(c) >= 0 && others[model_coll_tuner(c)])
            printf("# %zu row(s) for %s are not verified by this run: verify -C %s shows them\n",
                   others[model_coll_tuner(c)], model_coll_name(c), model_coll_name(c));
}

/* What the model predicts for one configuration at one size: "ok", or how it goes wrong. */
static const char *predicted_outcome(const struct model *m, int coll, size_t size,
                                     struct model_prediction *p)
{
    switch (m->fault) {
    case MODEL_FAULT_HANG_INIT:
        return "hangs";
    case MODEL_FAULT_FAIL_INIT:
    case MODEL_FAULT_FAIL_COLL:
        return "fails";
    case MODEL_FAULT_CRASH:
        return "crashes";
    default:
        break;
    }
    if (model_predict_coll(m, coll, size, p))
        return "fails";
    return p->wrong ? "corrupts" : "ok";
}

/* The per-size rows, printed or gathered into json (when not NULL). Returns how many sizes the
 * env+table configuration is predicted not to run correctly. */
static int report(const struct verify_opts *o, const struct model m[3], json_t *json)
{
    int bad = 0;
    if (!json)
        printf("#            %12s  %13s  %13s  %13s  %-15s  %17s  %17s\n", "size (B)", "reference",
               "env-only", "env+table", "env+table pair", "gain vs env-only", "gain vs reference");
    for (size_t asked = o->min_bytes; asked <= o->max_bytes; asked *= 4) {
        struct model_prediction p[3];
        const char *out[3];
        size_t count, size = bench_float_size(o->coll, asked, m[2].nranks, &count);
        if (!size) /* what topotune-bench runs, as the measured comparison: none here */
            continue;
        for (int i = 0; i < 3; i++) {
            memset(&p[i], 0, sizeof(p[i]));
            out[i] = predicted_outcome(&m[i], o->coll, size, &p[i]);
        }
        int ok[3] = {!strcmp(out[0], "ok"), !strcmp(out[1], "ok"), !strcmp(out[2], "ok")};
        bad += !ok[2];
        double g_env = verify_gain(p[2].busbw, p[1].busbw),
               g_def = verify_gain(p[2].busbw, p[0].busbw);
        if (json) {
            json_t *row = json_pack("{s:I,s:s,s:s,s:s,s:s,s:s,s:b}", "size", (json_int_t)size,
                                    "outcome_reference", out[0], "outcome_env", out[1],
                                    "outcome_env_table", out[2], "algo", p[2].algo ? p[2].algo : "",
                                    "proto", p[2].proto ? p[2].proto : "", "table_row", p[2].tuned);
            static const char *const keys[3] = {"busbw_defaults", "busbw_env", "busbw_env_table"};
            for (int i = 0; i < 3; i++)
                json_object_set_new(row, keys[i], ok[i] ? json_real(p[i].busbw) : json_null());
            json_object_set_new(row, "gain_vs_env_pct",
                                ok[1] && ok[2] ? json_real(g_env) : json_null());
            json_object_set_new(row, "gain_vs_defaults_pct",
                                ok[0] && ok[2] ? json_real(g_def) : json_null());
            json_array_append_new(json, row);
            continue;
        }
        char pair[40], cell[3][40], g[2][40];
        snprintf(pair, sizeof(pair), "%s/%s%s", p[2].algo ? p[2].algo : "-",
                 p[2].proto ? p[2].proto : "-", p[2].tuned ? "*" : "");
        for (int i = 0; i < 3; i++)
            if (ok[i])
                snprintf(cell[i], sizeof(cell[i]), "%8.2f GB/s", p[i].busbw);
            else
                snprintf(cell[i], sizeof(cell[i]), "%13s", out[i]);
        if (ok[1] && ok[2])
            snprintf(g[0], sizeof(g[0]), "predicted %+6.1f%%", g_env);
        else
            snprintf(g[0], sizeof(g[0]), "%17s", "no gain");
        if (ok[0] && ok[2])
            snprintf(g[1], sizeof(g[1]), "predicted %+6.1f%%", g_def);
        else
            snprintf(g[1], sizeof(g[1]), "%17s", "no gain");
        printf("   predicted %12zu  %s  %s  %s  %-15s  %s  %s\n", size, cell[0], cell[1], cell[2],
               pair, g[0], g[1]);
    }
    return bad;
}

int verify_predicted(const struct verify_opts *o, const json_t *profile, const char *table_path,
                     const struct topo *t)
{
    struct tuner_table table = TUNER_TABLE_INIT;
    char err[256];
    const char *class_id = json_string_value(json_object_get(profile, "class"));
    if (tuner_table_load(&table, table_path, err, sizeof(err)))
        return util_error("cannot use the tuner table '%s': %s", table_path, err), UTIL_EINVAL;
    if (table.class_id[0] && strcmp(table.class_id, class_id))
        util_warning("tuner table '%s' is for class %s, the profile for %s", table_path,
                     table.class_id, class_id);
    if (t->class_id && strcmp(t->class_id, class_id))
        util_warning("'%s' is class %s, the profile is for %s: the prediction is for the topology",
                     o->topology, t->class_id, class_id);
    json_t *env = verify_variables(profile, 0), *ref = env ? verify_variables(profile, 1) : NULL;
    struct model m[3];
    int rc = 0;
    if (!ref) {
        rc = UTIL_EINVAL;
        goto out;
    }
    if (model_init(&m[0], t, o->nodes, profile_env, ref) ||
        model_init(&m[1], t, o->nodes, profile_env, env) ||
        model_init(&m[2], t, o->nodes, profile_env, env)) {
        util_error("topology '%s' has no NVIDIA GPU%s: nothing to predict", o->topology,
                   t->other_gpus ? " (its GPUs are of another vendor: NCCL drives none)" : "");
        rc = UTIL_EINVAL;
        goto out;
    }
    m[2].table = &table;
    /* the collective's rows the plugin would keep for this run's nodes x ranks; the others' are
     * other collectives' (a workload profile's), which this run cannot show */
    size_t fitting = 0, own, others[TUNER_NUM_COLLS];
    int tc = model_coll_tuner(o->coll);
    const char *cname = model_coll_name(o->coll);
    verify_count_rows(&table, o->coll, &own, others);
    for (size_t i = 0; i < table.nrules; i++)
        fitting += table.rules[i].coll == tc &&
                   tuner_rule_fits(&table.rules[i], (uint64_t)m[2].nodes, (uint64_t)m[2].nranks);
    static const char *const what[3] = {"reference", "env-only", "env+table"};
    json_t *doc = o->json ? json_object() : NULL, *rows = o->json ? json_array() : NULL;
    if (!o->json) {
        struct util_buf words = UTIL_BUF_INIT;
        verify_env_words(ref, &words);
        printf("# PREDICTED %s (float%s) by the topotune model (sim backend): no measurement\n",
               cname, model_coll_reduces(o->coll) ? ", sum" : "");
        struct util_buf cls = UTIL_BUF_INIT; /* the profile's words, one clean line */
        printf("# profile %s (class %s), topology %s: %d node(s) x %d GPU(s)\n", o->profile,
               util_text_shown(&cls, class_id), o->topology, m[0].nodes, m[0].ppn);
        util_buf_release(&cls);
        printf("# reference: NCCL's defaults%s%s%s; env-only: the profile's %zu variable(s); "
               "env+table: the same with\n# %s applied as topotune's tuner plugin does (* = a "
               "row chose the pair): %zu of its %zu %s row(s) fit %d node(s) x %d rank(s)\n",
               words.len ? " with the profile's system variable(s) " : "", util_buf_str(&words),
               words.len ? " (what the defaults need here)" : "", json_object_size(env), table_path,
               fitting, own, cname, m[2].nodes, m[2].nranks);
        verify_print_others(others);
        if (!fitting)
            printf("# no row fits this run: env+table is env-only here, no gain is the table's\n");
        for (int i = 0; i < 3; i++)
            if (m[i].fault != MODEL_FAULT_NONE)
                printf("# %s is predicted not to run: %s (no busbw, no gain)\n", what[i], m[i].why);
        util_buf_release(&words);
    }
    int bad = report(o, m, rows);
    if (o->json) {
        json_object_set_new(doc, "predicted", json_true());
        json_object_set_new(doc, "profile", json_string(o->profile));
        json_object_set_new(doc, "collective", json_string(cname));
        json_object_set_new(doc, "class", json_string(class_id));
        json_object_set_new(doc, "topology", json_string(o->topology));
        json_object_set_new(doc, "table", json_string(table_path));
        json_object_set_new(doc, "table_rows", json_integer((json_int_t)table.nrules));
        json_object_set_new(doc, "table_rows_fitting", json_integer((json_int_t)fitting));
        size_t not_verified = table.nrules - own;
        json_object_set_new(doc, "table_rows_collective", json_integer((json_int_t)own));
        json_object_set_new(doc, "table_rows_not_verified", json_integer((json_int_t)not_verified));
        json_object_set(doc, "env", env);
        json_object_set(doc, "reference_env", ref);
        json_object_set_new(doc, "sizes", json_incref(rows));
        json_dumpf(doc, stdout, JSON_INDENT(2));
        printf("\n");
    }
    if (bad) {
        util_error("env + table is predicted not to run correctly at %d size(s) (%s): it gains "
                   "nothing there",
                   bad, m[2].fault != MODEL_FAULT_NONE ? m[2].why : "see the table");
        rc = bad;
    }
    json_decref(rows);
    json_decref(doc);
out:
    json_decref(env);
    json_decref(ref);
    tuner_table_release(&table);
    return rc;
}
