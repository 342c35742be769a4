/* SPDX-License-Identifier: MIT */
/* What compare reads: profile directories, profiles roots, sweep directories, topology/spec files.
 */
#include "compare/compare.h"
#include "gen/gen.h"
#include "topo/topo.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/text.h"

#include <dirent.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int exists(const char *dir, const char *name)
{
    struct util_buf b = UTIL_BUF_INIT;
    util_buf_addf(&b, "%s/%s", dir, name);
    int ok = access(b.data, R_OK) == 0;
    util_buf_release(&b);
    return ok;
}

/* The last path component without extension ("hgx-h100" from "specs/hgx-h100.json"). */
static void label_of(const char *path, char *out, size_t len)
{
    char copy[4096];
    snprintf(copy, sizeof(copy), "%s", path);
    size_t n = strlen(copy);
    while (n > 1 && copy[n - 1] == '/')
        copy[--n] = '\0';
    const char *base = basename(copy);
    snprintf(out, len, "%s", base);
    char *dot = strrchr(out, '.');
    if (dot && dot != out)
        *dot = '\0';
}

/* What a field of a profile must be: why it is not, or NULL. */
static const char *not_int(const json_t *v, json_int_t min, json_int_t max, int required)
{
    if (!v && !required)
        return NULL;
    return json_is_integer(v) && json_integer_value(v) >= min && json_integer_value(v) <= max
               ? NULL
               : "expected an integer";
}

static const char *not_string(const json_t *v)
{
    return !v || json_is_string(v) || json_is_null(v) ? NULL : "expected a string or null";
}

/* [{size, busbw}]: sizes as topotune-bench measures them, busbw finite and at most 10^9 GB/s. */
static const char *bad_sizes(const json_t *list, struct util_buf *where, const char *name)
{
    size_t i;
    json_t *r;
    if (!list || json_is_null(list))
        return NULL;
    if (!json_is_array(list))
        return util_buf_addf(where, "%s", name), "expected an array of {size, busbw}";
    json_array_foreach(list, i, r) {
        const json_t *bw = json_object_get(r, "busbw");
        util_buf_addf(where, "%s[%zu]", name, i);
        if (!json_is_object(r))
            return "expected an object {size, busbw}";
        if (not_int(json_object_get(r, "size"), 0, 1LL << 50, 1))
            return util_buf_adds(where, ".size"), "expected bytes, an integer from 0 to 2^50";
        if (!json_is_number(bw) || !isfinite(json_number_value(bw)) || json_number_value(bw) < 0 ||
            json_number_value(bw) > 1e9)
            return util_buf_adds(where, ".busbw"), "expected GB/s, a number from 0 to 10^9";
        util_buf_reset(where);
    }
    return NULL;
}

/* The strings of an array of objects (variables), or of an array (labels). */
/* The most entries of a list of a node's devices or of a profile's variables gen writes (a node
 * has at most 1024 GPUs and NICs, topo's TOPO_MAX_DEVICES): a longer one is an edited file, and
 * 12,000 matrix labels made a table of 144 million cells (compare died out of memory). */
#define LIST_MAX 1024

static const char *bad_strings(const json_t *list, const char *const *keys)
{
    size_t i;
    json_t *v;
    if (!list)
        return NULL;
    if (!json_is_array(list))
        return "expected an array";
    if (json_array_size(list) > LIST_MAX)
        return "expected at most 1024 entries";
    json_array_foreach(list, i, v)
        for (int k = 0; keys && keys[k]; k++)
            if (!json_is_object(v) || not_string(json_object_get(v, keys[k])))
                return "expected objects "
                       "of strings";
    json_array_foreach(list, i, v)
        if (!keys && !json_is_string(v))
            return "expected strings";
    return NULL;
}

/*
 * The fields of a profile compare reads, checked before any is shown: a profile.json is a file
 * anyone may have edited, and a negative size printed "-5 B". Returns why not, its field in
 * where, or NULL.
 */
static const char *bad_profile(const json_t *p, struct util_buf *where)
{
    static const char *const var_keys[] = {"name", "value", "role", "evidence", NULL};
    const json_t *hw = json_object_get(p, "hardware"), *cpu = json_object_get(hw, "cpu");
    const json_t *w = json_object_get(p, "winner"), *b = json_object_get(p, "baseline");
    const json_t *m = json_object_get(hw, "matrix"), *rows = json_object_get(m, "rows"), *row;
    const struct {
        const char *name;
        const char *why;
    } fields[] = {
        {"predicted",
         !json_is_boolean(json_object_get(p, "predicted")) ? "expected true or false"
         : !json_is_true(json_object_get(p, "predicted")) &&
                 (!strcmp(util_json_str(p, "backend", ""), "sim") ||
                  !strcmp(util_json_str(json_object_get(p, "sweep"), "backend", ""), "sim"))
             ? "false, but its backend is sim: the sim backend's numbers are the model's"
             : NULL},
        {"class", not_string(json_object_get(p, "class"))},
        {"summary", not_string(json_object_get(p, "summary"))},
        {"nodes", not_int(json_object_get(p, "nodes"), 1, 1 << 20, 0)},
        {"hardware.gpus", json_is_array(json_object_get(hw, "gpus"))
                              ? NULL
                              : not_int(json_object_get(hw, "gpus"), 0, 1 << 20, 0)},
        {"hardware.gpu_model", not_string(json_object_get(hw, "gpu_model"))},
        {"hardware.nvswitches", not_int(json_object_get(hw, "nvswitches"), 0, 1 << 20, 0)},
        {"hardware.nics", not_int(json_object_get(hw, "nics"), 0, 1 << 20, 0)},
        {"hardware.cpu", cpu && !json_is_object(cpu) ? "expected an object" : NULL},
        {"hardware.cpu.sockets", not_int(json_object_get(cpu, "sockets"), 0, 1 << 20, 0)},
        {"hardware.cpu.numa_nodes", not_int(json_object_get(cpu, "numa_nodes"), 0, 1 << 20, 0)},
        {"hardware.matrix.labels", bad_strings(json_object_get(m, "labels"), NULL)},
        {"hardware.matrix.rows", rows && !json_is_array(rows) ? "expected an array" : NULL},
        {"hardware.class_key.nics",
         bad_strings(json_object_get(json_object_get(hw, "class_key"), "nics"), NULL)},
        {"variables", bad_strings(json_object_get(p, "variables"), var_keys)},
        {"winner",
         w && !json_is_null(w) && !json_is_object(w) ? "expected an object or null" : NULL},
        {"winner.runs", not_int(json_object_get(w, "runs"), 0, 1 << 30, 0)},
        {"baseline", b && !json_is_object(b) ? "expected an object" : NULL},
        {"baseline.outcomes",
         json_object_get(b, "outcomes") && !json_is_object(json_object_get(b, "outcomes"))
             ? "expected an object"
             : NULL},
    };
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        if (fields[i].why)
            return util_buf_adds(where, fields[i].name), fields[i].why;
    const json_t *cv = json_object_get(w, "cv");
    if (cv &&
        !(json_is_number(cv) && isfinite(json_number_value(cv)) && json_number_value(cv) >= 0))
        return util_buf_adds(where, "winner.cv"), "expected a number, 0 or more";
    size_t i;
    if (json_array_size(rows) > json_array_size(json_object_get(m, "labels")))
        return util_buf_adds(where, "hardware.matrix.rows"), "expected a row per label at most";
    json_array_foreach(rows, i, row) {
        const char *why = bad_strings(row, NULL);
        if (why)
            return util_buf_addf(where, "hardware.matrix.rows[%zu]", i), why;
    }
    const char *why = bad_sizes(json_object_get(w, "per_size"), where, "winner.per_size");
    return why ? why : bad_sizes(json_object_get(b, "per_size"), where, "baseline.per_size");
}

static int load_profile(const char *dir, const char *label, struct compare_input *in)
{
    struct util_buf b = UTIL_BUF_INIT;
    util_buf_addf(&b, "%s/profile.json", dir);
    in->profile = util_json_load_regular(b.data); /* found in a folder: a link is refused */
    const char *schema = json_string_value(json_object_get(in->profile, "schema"));
    if (in->profile && (!schema || strcmp(schema, "topotune/profile/1") ||
                        !json_is_object(json_object_get(in->profile, "hardware")))) {
        util_error("'%s' is not a topotune profile (schema topotune/profile/1 with its hardware): "
                   "give what topotune gen or run wrote",
                   b.data);
        json_decref(in->profile);
        in->profile = NULL;
    }
    struct util_buf where = UTIL_BUF_INIT;
    const char *why = in->profile ? bad_profile(in->profile, &where) : NULL;
    if (why)
        util_error("cannot read profile '%s': %s: %s: give what topotune gen or run wrote", b.data,
                   util_buf_str(&where), why);
    /* then what every reader of a profile relies on (a class that is a class id) */
    if (in->profile && (why || gen_profile_check(in->profile, b.data))) {
        json_decref(in->profile);
        in->profile = NULL;
    }
    util_buf_release(&where);
    util_buf_release(&b);
    if (!in->profile)
        return -1;
    in->kind = "profile";
    snprintf(in->label, sizeof(in->label), "%s", label);
    return 1;
}

static int load_sweep(const char *dir, struct compare_input *in)
{
    json_t *sweeps = json_array(), *results = json_array();
    int rc = gen_load_sweep(dir, sweeps, results);
    if (!rc) {
        const char *cls = json_string_value(json_object_get(json_array_get(sweeps, 0), "class"));
        in->profile = gen_select(sweeps, results, cls ? cls : "unknown");
        in->kind = "sweep";
        label_of(dir, in->label, sizeof(in->label));
    }
    json_decref(sweeps);
    json_decref(results);
    return rc || !in->profile ? -1 : 1; /* gen_select refused it (said why) */
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A profiles root: each class directory's latest version, by class name. */
static int load_root(const char *root, struct compare_input *out, int max)
{
    char *names[1024];
    int count = 0, n = 0, rc = 0;
    DIR *d = opendir(root);
    for (struct dirent *e; d && (e = readdir(d)) && count < 1024;) {
        struct util_buf latest = UTIL_BUF_INIT;
        util_buf_addf(&latest, "%s/%s/latest", root, e->d_name);
        if (e->d_name[0] != '.' && exists(latest.data, "profile.json"))
            names[count++] = util_xstrdup(e->d_name);
        util_buf_release(&latest);
    }
    if (d)
        closedir(d);
    qsort(names, (size_t)count, sizeof(names[0]), by_name);
    if (!count)
        rc = util_error("'%s' holds no profile (no CLASS/latest/profile.json): run topotune gen or "
                        "topotune run first",
                        root);
    else if (count > max)
        rc = util_error(
            "'%s' holds %d classes, more than the %d inputs compare takes: give the class "
            "directories you want",
            root, count, max);
    for (int i = 0; !rc && i < count; i++) {
        struct util_buf cls = UTIL_BUF_INIT;
        char latest[2400];
        util_buf_addf(&cls, "%s/%s", root, names[i]);
        out[n].path = root;
        /* gen's link to a version, nothing else planted there */
        if (gen_latest_dir(cls.data, latest, sizeof(latest)) <= 0 ||
            load_profile(latest, names[i], &out[n]) < 0)
            rc = -1;
        else
            n++;
        util_buf_release(&cls);
    }
    for (int i = 0; i < count; i++)
        free(names[i]);
    if (rc) { /* nothing half-loaded goes back */
        for (int i = 0; i < n; i++) {
            json_decref(out[i].profile);
            out[i].profile = NULL;
        }
        return -1;
    }
    return n;
}

static int load_file(const char *path, int nodes, const char *space,
                     const struct model_params *params, const json_t *workload,
                     struct compare_input *in)
{
    struct topo t;
    topo_init(&t);
    int rc = -1;
    struct util_buf found = UTIL_BUF_INIT;
    if (topo_load(&t, path) == 0) {
        int job = nodes ? nodes : t.job_nodes > 0 ? t.job_nodes : 1;
        if (!t.ngpus)
            util_error("'%s' describes no %sGPU: there is no all_reduce to predict on it", path,
                       t.other_gpus ? "NVIDIA " : "");
        else if (t.ngpus == 1 && job == 1) /* a rank alone: its "busbw" is a local copy's */
            util_error("'%s' is one GPU on one node: no collective communicates there (busbw 0, "
                       "alltoall a copy in memory); give --nodes N, one count of 2 or more (a "
                       "list of counts sets the scaling table only)",
                       path);
        else if (!space && util_data_file("spaces/nccl-default.json", &found))
            /* the environment's (exit 3, as run says), not bad input */
            rc = util_error("cannot find the shipped space spaces/nccl-default.json (looked at "
                            "%s): reinstall topotune, set TOPOTUNE_DATA to its data directory, or "
                            "give --space",
                            util_buf_str(&found)),
            rc = UTIL_EENV;
        else if ((in->profile = compare_predict(&t, nodes, space, params, workload)))
            rc = 1;
        in->kind = t.source == TOPO_SOURCE_SPEC ? "spec" : "topology";
        label_of(path, in->label, sizeof(in->label));
    }
    util_buf_release(&found);
    topo_release(&t);
    return rc;
}

static int load_any(const char *path, int nodes, const char *space,
                    const struct model_params *params, const json_t *workload,
                    struct compare_input *out, int max)
{
    struct stat st;
    out->path = path;
    if (stat(path, &st))
        return util_error("cannot read '%s': no such file or directory", path), -1;
    if (!S_ISDIR(st.st_mode))
        return load_file(path, nodes, space, params, workload, out);
    char label[128];
    label_of(path, label, sizeof(label));
    if (exists(path, "profile.json")) {
        /* CLASS/latest: gen's link to a version folder beside it, as the store's readers take it
         * (a version folder that is a link was followed to a profile planted elsewhere) */
        if (gen_latest_path_check(path))
            return -1;
        /* a version directory (v3, latest): name it after its class directory */
        if (!strcmp(label, "latest") || (label[0] == 'v' && atoi(label + 1) > 0)) {
            char copy[4096];
            snprintf(copy, sizeof(copy), "%s/..", path);
            char *real = realpath(copy, NULL);
            if (real)
                label_of(real, label, sizeof(label));
            free(real);
        }
        return load_profile(path, label, out);
    }
    if (exists(path, "latest/profile.json") || exists(path, "latest")) {
        /* a class directory: its latest as gen's link to a version, nothing planted */
        char latest[4200];
        return gen_latest_dir(path, latest, sizeof(latest)) <= 0 ? -1
                                                                 : load_profile(latest, label, out);
    }
    if (exists(path, "sweep.json"))
        return load_sweep(path, out);
    if (exists(path, "index.json"))
        return load_root(path, out, max);
    return util_error(
               "'%s' is neither a profile (profile.json), a profiles root (index.json) nor a "
               "sweep directory (sweep.json): give what topotune gen, run or sweep wrote",
               path),
           -1;
}

/* Every string of what was loaded (a profile, a directory's name) reaches a terminal, Markdown and
 * HTML: cleaned once here, so no report can print an escape sequence or a forged line. */
int compare_load(const char *path, int nodes, const char *space, const struct model_params *params,
                 const json_t *workload, struct compare_input *out, int max)
{
    int n = load_any(path, nodes, space, params, workload, out, max);
    struct util_buf b = UTIL_BUF_INIT;
    for (int i = 0; i < n; i++) {
        json_t *clean = util_json_clean(out[i].profile);
        json_decref(out[i].profile);
        out[i].profile = clean;
        /* a long name is cut between characters, ending "...": cut inside one, half of it
         * printed as U+FFFD, and --price never matched it */
        char label[sizeof(out[i].label)];
        topo_text_into(util_text_shown(&b, out[i].label), label, sizeof(label));
        memcpy(out[i].label, label, sizeof(label));
    }
    util_buf_release(&b);
    return n;
}
