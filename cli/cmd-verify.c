/* SPDX-License-Identifier: MIT */
/*
 * `topotune verify PROFILE`: what the profile's per-size table adds. For the profile's class it
 * runs three configurations, NCCL's defaults, the env-only profile (its variables) and env + the
 * table applied by topotune's tuner plugin, and reports per size the busbw of each and the gain
 * of env + table over env-only and over the defaults. With --topology (the sim backend) every
 * number comes from the model and is labelled predicted.
 */
#include "cli/cli.h"
#include "model/model.h"
#include "topo/topo.h"
#include "tuner/tuner.h"
#include "util/error.h"
#include "util/log.h"
#include "util/opts.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct verify_opts {
    const char *profile, *topology, *backend, *min, *max, *nodes_arg;
    int nodes, json;
    size_t min_bytes, max_bytes;
};

/* The profile's variables as NAME -> value, for the model's environment lookups. */
static const char *profile_env(const char *name, void *ctx)
{
    return json_string_value(json_object_get(ctx, name));
}

static int parse_size(const char *s, size_t dflt, size_t *out, const char *what)
{
    char *end;
    unsigned long long v = s ? strtoull(s, &end, 10) : dflt;
    if (s) {
        int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
        if (end == s || (shift ? end[1] != '\0' : *end != '\0') || v == 0 ||
            v > (1ULL << 40) >> shift)
            return error("invalid value '%s' for %s: expected a size such as 8, 64K, 1G", s, what),
                   -1;
        v <<= shift;
    }
    *out = (size_t)v;
    return 0;
}

static int parse(int argc, char **argv, struct verify_opts *o)
{
    const struct util_opt opts[] = {
        {"topology", 't', UTIL_OPT_STRING, &o->topology, "SPEC",
         "the class's topology or hardware spec: predict with the sim backend"},
        {"backend", 0, UTIL_OPT_STRING, &o->backend, "NAME",
         "sim (the only one so far: measuring with nccl is not built yet)"},
        {"nodes", 0, UTIL_OPT_STRING, &o->nodes_arg, "N",
         "nodes of that kind (default: the spec's)"},
        {"minbytes", 'b', UTIL_OPT_STRING, &o->min, "SIZE", "smallest size (default 8)"},
        {"maxbytes", 'e', UTIL_OPT_STRING, &o->max, "SIZE", "largest size (default 1G)"},
        {"json", 0, UTIL_OPT_FLAG, &o->json, NULL, "one JSON document instead of the table"},
        {0},
    };
    char **pos = calloc((size_t)argc + 1, sizeof(char *));
    int npos = 0;
    int rc = util_opts_parse(
        "topotune verify",
        "PROFILE --topology SPEC [--nodes N] [-b MIN] [-e MAX] [--json]\n\n"
        "Per size (x4), the all_reduce busbw of NCCL's defaults, of the profile's variables\n"
        "(env-only) and of env + the profile's per-size table (tuner-table.txt, as topotune's\n"
        "tuner plugin applies it), and the gain of env + table over env-only and over the\n"
        "defaults. PROFILE: a profile version directory or its profile.json. With --topology\n"
        "every number is PREDICTED by the model (sim backend).",
        opts, argc, argv, pos, &npos);
    if (rc == 0 && npos != 1) {
        error(npos ? "unexpected argument '%s' (see 'topotune verify --help')"
                   : "topotune verify needs PROFILE (a profile directory)",
              npos ? pos[1] : "");
        rc = UTIL_EUSAGE;
    }
    o->profile = npos ? pos[0] : NULL;
    free(pos);
    if (rc)
        return rc == 1 ? 1 : 2;
    if (o->nodes_arg) {
        char *end;
        long n = strtol(o->nodes_arg, &end, 10);
        if (end == o->nodes_arg || *end || n < 1 || n > 4096)
            return error("invalid value '%s' for --nodes: expected 1 to 4096", o->nodes_arg), 2;
        o->nodes = (int)n;
    }
    if (parse_size(o->min, 8, &o->min_bytes, "-b") ||
        parse_size(o->max, 1 << 30, &o->max_bytes, "-e"))
        return 2;
    const char *backend = o->backend ? o->backend : "sim";
    if (!strcmp(backend, "nccl"))
        return error("verify --backend nccl is not available yet: measure on the GPU machine with "
                     "'topotune sweep' and the launch scripts, or predict with --topology SPEC"),
               2;
    if (strcmp(backend, "sim"))
        return error("invalid value '%s' for --backend: expected sim or nccl", backend), 2;
    if (!o->topology)
        return error("topotune verify needs --topology SPEC for the sim backend (the profile's "
                     "class: a topology file or hardware spec)"),
               2;
    return 0;
}

/* profile.json and tuner-table.txt of PROFILE (a directory or its profile.json). */
static json_t *load_profile(const char *arg, char *table, size_t len)
{
    struct stat st;
    char path[4096];
    int dir = stat(arg, &st) == 0 && S_ISDIR(st.st_mode);
    snprintf(path, sizeof(path), dir ? "%s/profile.json" : "%s", arg);
    json_error_t jerr;
    json_t *p = json_load_file(path, 0, &jerr);
    if (!json_is_object(p) || !json_is_string(json_object_get(p, "class"))) {
        error("cannot read profile '%s': %s", path, p ? "not a topotune profile" : jerr.text);
        json_decref(p);
        return NULL;
    }
    char *slash = strrchr(path, '/');
    if (dir)
        snprintf(table, len, "%s/tuner-table.txt", arg);
    else if (slash)
        snprintf(table, len, "%.*s/tuner-table.txt", (int)(slash - path), path);
    else
        snprintf(table, len, "tuner-table.txt");
    return p;
}

static json_t *variables(const json_t *profile)
{
    json_t *env = json_object(), *v;
    size_t i;
    json_array_foreach(json_object_get(profile, "variables"), i, v)
    {
        const char *name = json_string_value(json_object_get(v, "name"));
        const char *value = json_string_value(json_object_get(v, "value"));
        if (name && value)
            json_object_set_new(env, name, json_string(value));
    }
    return env;
}

static double gain(double a, double b)
{
    return b > 0 ? 100 * (a / b - 1) : 0;
}

/* The per-size rows, printed or gathered into json (when not NULL). -1 when a model fails. */
static int report(const struct verify_opts *o, const struct model m[3], json_t *json)
{
    if (!json)
        printf("#            %12s  %13s  %13s  %13s  %-15s  %17s  %17s\n", "size (B)", "defaults",
               "env-only", "env+table", "env+table pair", "gain vs env-only", "gain vs defaults");
    for (size_t size = o->min_bytes; size <= o->max_bytes; size *= 4) {
        struct model_prediction p[3];
        for (int i = 0; i < 3; i++)
            if (model_predict(&m[i], size, &p[i]))
                return error("the model has no algorithm for %zu B (predicted failure)", size), -1;
        double g_env = gain(p[2].busbw, p[1].busbw), g_def = gain(p[2].busbw, p[0].busbw);
        if (json) {
            json_array_append_new(
                json,
                json_pack("{s:I,s:f,s:f,s:f,s:s,s:s,s:b,s:f,s:f}", "size", (json_int_t)size,
                          "busbw_defaults", p[0].busbw, "busbw_env", p[1].busbw, "busbw_env_table",
                          p[2].busbw, "algo", p[2].algo, "proto", p[2].proto, "table_row",
                          p[2].tuned, "gain_vs_env_pct", g_env, "gain_vs_defaults_pct", g_def));
            continue;
        }
        char pair[40];
        snprintf(pair, sizeof(pair), "%s/%s%s", p[2].algo, p[2].proto, p[2].tuned ? "*" : "");
        printf("   predicted %12zu  %8.2f GB/s  %8.2f GB/s  %8.2f GB/s  %-15s  predicted %+6.1f%%  "
               "predicted %+6.1f%%\n",
               size, p[0].busbw, p[1].busbw, p[2].busbw, pair, g_env, g_def);
    }
    return 0;
}

static int verify(const struct verify_opts *o, const json_t *profile, const char *table_path,
                  const struct topo *t)
{
    struct tuner_table table = TUNER_TABLE_INIT;
    char err[256];
    const char *class_id = json_string_value(json_object_get(profile, "class"));
    if (tuner_table_load(&table, table_path, err, sizeof(err)))
        return error("cannot use the tuner table '%s': %s", table_path, err), 2;
    if (table.class_id[0] && strcmp(table.class_id, class_id))
        warning("tuner table '%s' is for class %s, the profile for %s", table_path, table.class_id,
                class_id);
    if (t->class_id && strcmp(t->class_id, class_id))
        warning("'%s' is class %s, the profile is for %s: the prediction is for the topology",
                o->topology, t->class_id, class_id);
    json_t *env = variables(profile), *empty = json_object();
    struct model m[3];
    int rc = 0;
    if (model_init(&m[0], t, o->nodes, profile_env, empty) ||
        model_init(&m[1], t, o->nodes, profile_env, env) ||
        model_init(&m[2], t, o->nodes, profile_env, env)) {
        error("topology '%s' has no GPU: nothing to predict", o->topology);
        rc = 2;
        goto out;
    }
    m[2].table = &table;
    json_t *doc = o->json ? json_object() : NULL, *rows = o->json ? json_array() : NULL;
    if (!o->json) {
        printf("# PREDICTED all_reduce (float, sum) by the topotune model (sim backend): no "
               "measurement\n");
        printf("# profile %s (class %s), topology %s: %d node(s) x %d GPU(s)\n", o->profile,
               class_id, o->topology, m[0].nodes, m[0].ppn);
        printf("# defaults: no variable; env-only: the profile's %zu variable(s); env+table: the "
               "same with\n# %s (%zu row(s)) applied as topotune's tuner plugin does (* = a row "
               "chose the pair)\n",
               json_object_size(env), table_path, table.nrules);
    }
    rc = report(o, m, rows) ? 3 : 0;
    if (o->json && !rc) {
        json_object_set_new(doc, "predicted", json_true());
        json_object_set_new(doc, "profile", json_string(o->profile));
        json_object_set_new(doc, "class", json_string(class_id));
        json_object_set_new(doc, "topology", json_string(o->topology));
        json_object_set_new(doc, "table", json_string(table_path));
        json_object_set_new(doc, "table_rows", json_integer((json_int_t)table.nrules));
        json_object_set(doc, "env", env);
        json_object_set_new(doc, "sizes", json_incref(rows));
        json_dumpf(doc, stdout, JSON_INDENT(2));
        printf("\n");
    }
    json_decref(rows);
    json_decref(doc);
out:
    json_decref(env);
    json_decref(empty);
    tuner_table_release(&table);
    return rc;
}

int cmd_verify(int argc, char **argv)
{
    struct verify_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc == 1 ? 0 : 2;
    char table_path[4200];
    json_t *profile = load_profile(o.profile, table_path, sizeof(table_path));
    if (!profile)
        return 2;
    struct topo t;
    topo_init(&t);
    rc = topo_load(&t, o.topology) ? 2 : verify(&o, profile, table_path, &t);
    topo_release(&t);
    json_decref(profile);
    return rc;
}
