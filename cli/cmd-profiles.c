/* SPDX-License-Identifier: MIT */
/* `topotune profiles list|show|diff`: what is stored under a profile root, and what changed. */
#include "cli/cli.h"
#include "gen/gen.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/json.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/opts.h"
#include "util/text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static json_t *load_profile(const char *root, const char *cls, int version)
{
    char path[2048];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", root, cls);
    if (!util_valid_id(cls) || lstat(path, &st) || !S_ISDIR(st.st_mode))
        return util_error("no class '%.128s' in '%s': 'topotune profiles --profiles %s list' names "
                          "those stored",
                          cls, root, root),
               NULL;
    char dir[2400];
    if (version <= 0) { /* latest: gen's link to a version, nothing else put there */
        version = gen_latest_dir(path, dir, sizeof(dir));
        if (version <= 0)
            return version ? NULL
                           : (util_error("class '%.128s' in '%s' has no latest version", cls, root),
                              NULL);
    }
    /* links inside the store are never followed (design.md): a version folder that is one led
     * to a profile planted elsewhere, shown under a version it is not */
    snprintf(path, sizeof(path), "%s/%s/v%d", root, cls, version);
    if (lstat(path, &st) || !S_ISDIR(st.st_mode))
        return util_error("'%s' is not a folder gen wrote (missing, or a link): 'topotune profiles "
                          "--profiles %s show %.128s' shows the latest",
                          path, root, cls),
               NULL;
    snprintf(path, sizeof(path), "%s/%s/v%d/profile.json", root, cls, version);
    /* a file found in the store: not followed if it is a link, and every field checked */
    json_t *p = util_json_load_regular(path);
    if (p && gen_profile_check(p, path)) {
        json_decref(p);
        return NULL;
    }
    return p;
}

/* Text from a stored file, one safe line for the terminal (NULL reads "-"). */
static const char *shown(struct util_buf *b, const char *s)
{
    return util_text_shown(b, s ? s : "-");
}

/* vN or N, 1 to 1,000,000 (what gen writes); 0 when s is NULL (the latest), -1 when invalid. */
static int parse_version(const char *s)
{
    if (!s)
        return 0;
    const char *p = s[0] == 'v' ? s + 1 : s;
    long long v = 0;
    if (*p < '1' || *p > '9' || util_parse_int(p, 1, 1000000, &v)) /* no sign, no leading 0 */
        return util_error("invalid version '%.32s': expected vN, N from 1 to 1000000", s), -1;
    return (int)v;
}

/* What in the index at path is not as gen writes it (NULL: nothing): a list trusted it, and an
 * index of [] listed nothing beside a stored class, a class "../../etc  v7" forged a line. */
static const char *index_wrong(const json_t *index, const char **where)
{
    const json_t *classes = json_object_get(index, "classes"), *c, *v;
    const char *cls;
    *where = "";
    if (!json_is_object(index) ||
        strcmp(util_json_str(index, "schema", ""), "topotune/profiles-index/1"))
        return "not a profiles index (schema \"topotune/profiles-index/1\")";
    if (!json_is_object(classes))
        return "\"classes\" is not an object";
    json_object_foreach((json_t *)classes, cls, c) {
        json_int_t latest = json_integer_value(json_object_get(c, "latest"));
        size_t i;
        *where = cls;
        if (!util_valid_id(cls))
            return "a class id gen never writes";
        if (!json_is_integer(json_object_get(c, "latest")) || latest < 1 ||
            latest > GEN_MAX_VERSION || !json_is_array(json_object_get(c, "versions")))
            return "its latest or versions are not gen's";
        json_array_foreach(json_object_get(c, "versions"), i, v) {
            json_int_t n = json_integer_value(json_object_get(v, "version"));
            const json_t *summary = json_object_get(v, "summary");
            if (!json_is_integer(json_object_get(v, "version")) || n < 1 || n > GEN_MAX_VERSION ||
                (summary && !json_is_string(summary) && !json_is_null(summary)))
                return "a version entry that is not gen's";
        }
    }
    return NULL;
}

static int list(const char *root)
{
    char path[2048];
    snprintf(path, sizeof(path), "%s/index.json", root);
    json_t *index = util_json_load_regular(path); /* the store's own: a link is not followed */
    if (!index)
        return 2;
    const char *where, *wrong = index_wrong(index, &where);
    if (wrong) {
        struct util_buf w = UTIL_BUF_INIT;
        util_error("'%s' is damaged: %s%s%s; gen writes it again from the class folders "
                   "(the next `topotune gen --profiles %s`), or remove it",
                   path, wrong, where[0] ? ": class " : "", where[0] ? shown(&w, where) : "", root);
        util_buf_release(&w);
        json_decref(index);
        return 2;
    }
    const char *cls;
    json_t *c;
    struct util_buf a = UTIL_BUF_INIT, b = UTIL_BUF_INIT;
    json_object_foreach(json_object_get(index, "classes"), cls, c) {
        /* latest's own summary: not the newest version's, which a sweep where no run ended ok
         * writes without taking latest */
        json_t *versions = json_object_get(c, "versions"), *v, *last = NULL;
        size_t i;
        json_array_foreach(versions, i, v)
            if (json_equal(json_object_get(v, "version"), json_object_get(c, "latest")))
                last = v;
        printf("%s  v%lld (%zu version%s)  %s\n", shown(&a, cls),
               (long long)json_integer_value(json_object_get(c, "latest")),
               json_array_size(versions), json_array_size(versions) == 1 ? "" : "s",
               shown(&b, json_string_value(json_object_get(last, "summary"))));
    }
    util_buf_release(&a);
    util_buf_release(&b);
    json_decref(index);
    return 0;
}

static int show(const char *root, const char *cls, int version)
{
    json_t *p = load_profile(root, cls, version);
    if (!p)
        return 2;
    struct util_buf t[4] = {UTIL_BUF_INIT, UTIL_BUF_INIT, UTIL_BUF_INIT, UTIL_BUF_INIT};
    printf("class:    %s\nversion:  v%lld (created %s, content %s)\nsummary:  %s\n",
           shown(&t[0], cls), (long long)json_integer_value(json_object_get(p, "version")),
           shown(&t[1], json_string_value(json_object_get(p, "created"))),
           shown(&t[2], json_string_value(json_object_get(p, "content_hash"))),
           shown(&t[3], json_string_value(json_object_get(p, "summary"))));
    const char *nccl = json_string_value(json_object_get(json_object_get(p, "software"), "nccl"));
    printf("software: NCCL %s%s\n", shown(&t[0], nccl ? nccl : "unknown"),
           json_is_true(json_object_get(p, "predicted"))
               ? " (every number PREDICTED by the sim backend)"
               : "");
    const char *verdict =
        json_string_value(json_object_get(json_object_get(p, "baseline"), "verdict"));
    if (verdict)
        printf("defaults: %s\n", shown(&t[0], verdict));
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(p, "variables"), i, v)
        printf("  %s=%s  [%s] %s\n", json_string_value(json_object_get(v, "name")),
               shown(&t[0], json_string_value(json_object_get(v, "value"))),
               shown(&t[1], json_string_value(json_object_get(v, "role"))),
               shown(&t[2], json_string_value(json_object_get(v, "evidence"))));
    for (int k = 0; k < 4; k++)
        util_buf_release(&t[k]);
    json_decref(p);
    return 0;
}

/* A variable's value and role in p (checked by gen_profile_check: name and value are text; a
 * role may be missing, read as ""). */
static const char *var_value(json_t *p, const char *name, const char **role)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(p, "variables"), i, v)
        if (!strcmp(json_string_value(json_object_get(v, "name")), name)) {
            const char *r = json_string_value(json_object_get(v, "role"));
            *role = r ? r : "";
            return json_string_value(json_object_get(v, "value"));
        }
    return NULL;
}

/* A per-size table row as diff shows it: its collective, sizes, shape and choice. */
static void row_text(struct util_buf *out, const json_t *r)
{
    const json_t *max = json_object_get(r, "max_bytes");
    util_buf_reset(out);
    util_buf_addf(out, "%s %lld..", json_string_value(json_object_get(r, "collective")) ?: "?",
                  (long long)json_integer_value(json_object_get(r, "min_bytes")));
    if (json_is_integer(max))
        util_buf_addf(out, "%lld", (long long)json_integer_value(max));
    else
        util_buf_adds(out, "inf");
    util_buf_addf(out, " B, %lld node(s) x %lld ranks: %s/%s",
                  (long long)json_integer_value(json_object_get(r, "nodes")),
                  (long long)json_integer_value(json_object_get(r, "ranks")),
                  json_string_value(json_object_get(r, "algorithm")) ?: "?",
                  json_string_value(json_object_get(r, "protocol")) ?: "?");
    json_int_t ch = json_integer_value(json_object_get(r, "channels"));
    if (ch > 0)
        util_buf_addf(out, ", %lld channels", (long long)ch);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Each row of a side's table as row_text writes it, sorted (*n of them; free with rows_free). */
static char **rows_sorted(const json_t *profile, size_t *n)
{
    const json_t *rows = json_object_get(profile, "tuner");
    struct util_buf t = UTIL_BUF_INIT;
    char **out = util_xcalloc(json_array_size(rows) + 1, sizeof(char *));
    size_t i;
    json_t *r;
    *n = 0;
    json_array_foreach(rows, i, r) {
        row_text(&t, r);
        out[(*n)++] = util_xstrdup(util_buf_str(&t));
    }
    util_buf_release(&t);
    qsort(out, *n, sizeof(char *), by_text);
    return out;
}

static void rows_free(char **rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(rows[i]);
    free(rows);
}

/* The per-size table's rows one side has and the other lacks: a version can differ in its table
 * alone, and then nothing else shows a change. Each side sorted once: a damaged store of 4,000
 * rows a side, each formatted again for every row of the other, took 35 s. */
static void diff_rows(json_t *both[2])
{
    struct util_buf c = UTIL_BUF_INIT;
    size_t n[2];
    char **rows[2] = {rows_sorted(both[0], &n[0]), rows_sorted(both[1], &n[1])};
    printf("  per-size table: %zu row(s) -> %zu\n", n[0], n[1]);
    for (int side = 0; side < 2; side++)
        for (size_t i = 0; i < n[side]; i++)
            if (!bsearch(&rows[side][i], rows[!side], n[!side], sizeof(char *), by_text))
                printf("  %c row %s\n", side ? '+' : '-', shown(&c, rows[side][i]));
    rows_free(rows[0], n[0]);
    rows_free(rows[1], n[1]);
    util_buf_release(&c);
}

/* What a profile's objective measures: a workload's effective algbw, or all_reduce's mean busbw. */
static const char *objective_of(const json_t *p)
{
    return json_is_object(json_object_get(p, "workload")) ? "GB/s effective algbw of its workload"
                                                          : "GB/s mean busbw of all_reduce";
}

static int diff(const char *root, const char *cls, int a, int b)
{
    if (!b) {
        json_t *latest = load_profile(root, cls, 0);
        if (!latest)
            return 2;
        json_int_t v = json_integer_value(json_object_get(latest, "version"));
        json_decref(latest);
        if (v < 1 || v > 1000000)
            return util_error("class '%s': its latest profile carries no valid version", cls), 2;
        b = (int)v;
        a = a ? a : b - 1;
    }
    char newer[2300];
    struct stat st;
    snprintf(newer, sizeof(newer), "%s/%s/v%d", root, cls, b + 1);
    if (a < 1 && !lstat(newer, &st) && S_ISDIR(st.st_mode)) /* kept without taking latest */
        return util_error("class '%s': latest is v%d, its first; v%d is newer (a sweep where no "
                          "run ended ok keeps its version without taking latest): 'topotune "
                          "profiles diff %s v%d v%d' compares them",
                          cls, b, b + 1, cls, b, b + 1),
               2;
    if (a < 1)
        return util_error("class '%s' has only v%d: nothing to compare", cls, b), 2;
    json_t *pa = load_profile(root, cls, a), *pb = load_profile(root, cls, b);
    if (!pa || !pb) {
        json_decref(pa);
        json_decref(pb);
        return 2;
    }
    struct util_buf t[4] = {UTIL_BUF_INIT, UTIL_BUF_INIT, UTIL_BUF_INIT, UTIL_BUF_INIT};
    printf("%s: v%d -> v%d\n", shown(&t[0], cls), a, b);
    printf("  summary: %s\n       -> %s\n",
           shown(&t[0], json_string_value(json_object_get(pa, "summary"))),
           shown(&t[1], json_string_value(json_object_get(pb, "summary"))));
    json_t *both[2] = {pa, pb};
    for (int side = 0; side < 2; side++) {
        size_t i;
        json_t *v;
        json_array_foreach(json_object_get(both[side], "variables"), i, v) {
            const char *name = json_string_value(json_object_get(v, "name"));
            const char *role_other = NULL, *other = var_value(both[!side], name, &role_other);
            const char *value = json_string_value(json_object_get(v, "value"));
            const char *role = json_string_value(json_object_get(v, "role"));
            role = role ? role : "";
            if (!other)
                printf("  %c %s=%s (%s)\n", side ? '+' : '-', name, shown(&t[0], value),
                       shown(&t[1], role));
            else if (side && (strcmp(other, value) || strcmp(role_other, role)))
                printf("  ~ %s: %s (%s) -> %s (%s)\n", name, shown(&t[0], other),
                       shown(&t[1], role_other), shown(&t[2], value), shown(&t[3], role));
        }
    }
    for (int k = 0; k < 4; k++)
        util_buf_release(&t[k]);
    diff_rows(both);
    /* The winner's, or the defaults' where the profile keeps them (no winner); two measures of
     * different things (a workload's and all_reduce's, or two workloads') are not one change */
    int same = json_equal(json_object_get(pa, "workload"), json_object_get(pb, "workload")) ||
               (!json_object_get(pa, "workload") && !json_object_get(pb, "workload"));
    printf("  objective:");
    for (int side = 0; side < 2; side++) {
        json_t *w = json_object_get(both[side], "winner");
        if (!json_is_object(w))
            w = json_object_get(both[side], "baseline");
        printf(" %s%s%.2f", side ? "-> " : "",
               json_is_true(json_object_get(both[side], "predicted")) ? "predicted " : "",
               json_number_value(json_object_get(w, "objective")));
        json_t *band = json_object_get(w, "objective_band"); /* a predicted number's */
        if (json_array_size(band) == 2)
            printf(" [band %.2f-%.2f]", json_number_value(json_array_get(band, 0)),
                   json_number_value(json_array_get(band, 1)));
        if (!same)
            printf(" %s", objective_of(both[side]));
    }
    if (same)
        printf(" %s\n", objective_of(pb));
    else
        printf(" (not comparable: chosen for different workloads)\n");
    json_decref(pa);
    json_decref(pb);
    return 0;
}

int cmd_profiles(int argc, char **argv)
{
    const char *root = "profiles";
    const struct util_opt opts[] = {
        {"profiles", 'p', UTIL_OPT_STRING, &root, "ROOT", "profile root (default ./profiles)"},
        {0},
    };
    const struct util_opts_cmd cmd = {
        "topotune profiles",
        "[--profiles ROOT] list\n"
        "       topotune profiles [--profiles ROOT] show CLASS [vN]\n"
        "       topotune profiles [--profiles ROOT] diff CLASS [vA vB]",
        opts, 4, 0};
    int n = 0, status;
    if (cli_parse(&cmd, argc, argv, &n, &status))
        return status;
    const char *args[4] = {0};
    for (int i = 0; i < n; i++)
        args[i] = argv[i + 1];
    /* words past what the subcommand takes were dropped: "show CLASS v1 v2" showed v1 alone */
    int most = !n || !strcmp(args[0], "list") ? 1 : !strcmp(args[0], "show") ? 3 : 4;
    if (n > most)
        return util_error("'topotune profiles %s' takes %s: see --help", args[0],
                          most == 1   ? "no other argument"
                          : most == 3 ? "a class and at most one version"
                                      : "a class and at most two versions"),
               2;
    if (!n || !strcmp(args[0], "list"))
        return list(root);
    int va = n > 2 ? parse_version(args[2]) : 0, vb = n > 3 ? parse_version(args[3]) : 0;
    if (va < 0 || vb < 0)
        return 2;
    if (!strcmp(args[0], "show") && args[1])
        return show(root, args[1], va);
    if (!strcmp(args[0], "diff") && args[1])
        return diff(root, args[1], va, vb);
    if (!strcmp(args[0], "show") || !strcmp(args[0], "diff"))
        return util_error("'topotune profiles %s' needs a class: 'topotune profiles --profiles %s "
                          "list' names those stored",
                          args[0], root),
               2;
    return util_error(
               "unknown 'topotune profiles %s': use list, show CLASS or diff CLASS (see --help)",
               args[0]),
           2;
}
