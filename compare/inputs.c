/* SPDX-License-Identifier: MIT */
/* What compare reads: profile directories, profiles roots, sweep directories, topology/spec files.
 */
#include "compare/compare.h"
#include "gen/gen.h"
#include "util/buf.h"
#include "util/json.h"
#include "util/log.h"

#include <dirent.h>
#include <libgen.h>
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

static int load_profile(const char *dir, const char *label, struct compare_input *in)
{
    struct util_buf b = UTIL_BUF_INIT;
    util_buf_addf(&b, "%s/profile.json", dir);
    in->profile = util_json_load(b.data);
    const char *schema = json_string_value(json_object_get(in->profile, "schema"));
    if (in->profile && (!schema || strcmp(schema, "topotune/profile/1") ||
                        !json_is_object(json_object_get(in->profile, "hardware")))) {
        error("'%s' is not a topotune profile (schema topotune/profile/1 with its hardware): "
              "give what topotune gen or run wrote",
              b.data);
        json_decref(in->profile);
        in->profile = NULL;
    }
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
    return rc ? -1 : 1;
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
            names[count++] = strdup(e->d_name);
        util_buf_release(&latest);
    }
    if (d)
        closedir(d);
    qsort(names, (size_t)count, sizeof(names[0]), by_name);
    if (!count)
        rc = error("'%s' holds no profile (no CLASS/latest/profile.json): run topotune gen or "
                   "topotune run first",
                   root);
    else if (count > max)
        rc = error("'%s' holds %d classes, more than the %d inputs compare takes: give the class "
                   "directories you want",
                   root, count, max);
    for (int i = 0; !rc && i < count; i++) {
        struct util_buf latest = UTIL_BUF_INIT;
        util_buf_addf(&latest, "%s/%s/latest", root, names[i]);
        out[n].path = root;
        if (load_profile(latest.data, names[i], &out[n]) < 0)
            rc = -1;
        else
            n++;
        util_buf_release(&latest);
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
                     const struct model_params *params, struct compare_input *in)
{
    struct topo t;
    topo_init(&t);
    int rc = -1;
    if (topo_load(&t, path) == 0) {
        if (!t.ngpus)
            error("'%s' describes no GPU: there is no all_reduce to predict on it", path);
        else if ((in->profile = compare_predict(&t, nodes, space, params)))
            rc = 1;
        in->kind = t.source == TOPO_SOURCE_SPEC ? "spec" : "topology";
        label_of(path, in->label, sizeof(in->label));
    }
    topo_release(&t);
    return rc;
}

int compare_load(const char *path, int nodes, const char *space, const struct model_params *params,
                 struct compare_input *out, int max)
{
    struct stat st;
    out->path = path;
    if (stat(path, &st))
        return error("cannot read '%s': no such file or directory", path), -1;
    if (!S_ISDIR(st.st_mode))
        return load_file(path, nodes, space, params, out);
    char label[128];
    label_of(path, label, sizeof(label));
    if (exists(path, "profile.json")) {
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
    if (exists(path, "latest/profile.json")) {
        struct util_buf b = UTIL_BUF_INIT;
        util_buf_addf(&b, "%s/latest", path);
        int rc = load_profile(b.data, label, out);
        util_buf_release(&b);
        return rc;
    }
    if (exists(path, "sweep.json"))
        return load_sweep(path, out);
    if (exists(path, "index.json"))
        return load_root(path, out, max);
    return error("'%s' is neither a profile (profile.json), a profiles root (index.json) nor a "
                 "sweep directory (sweep.json): give what topotune gen, run or sweep wrote",
                 path),
           -1;
}
