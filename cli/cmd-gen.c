/* SPDX-License-Identifier: MIT */
/* `topotune gen`: read sweep directories, choose per node class, store versioned profiles. */
#include "cli/cli.h"
#include "gen/gen.h"
#include "sweep/sweep.h"
#include "util/json.h"
#include "util/log.h"
#include "util/opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char gen_usage[] = "--runs DIR [DIR...] [--profiles ROOT]";

/* Loads sweep dir unless seen (its real path: dir name) names it already: a sweep given twice
 * would count each run twice, and a configuration measured fewer times than the space repeats it
 * would pass as stable. Nonzero after an error. */
static int load_once(const char *dir, json_t *seen, json_t *sweeps, json_t *results)
{
    char *real = realpath(dir, NULL);
    const char *before = real ? json_string_value(json_object_get(seen, real)) : NULL;
    int rc = 0;
    if (before)
        rc = util_error("'%s' and '%s' are the same sweep: give each sweep once", before, dir);
    else if (real)
        json_object_set_new(seen, real, json_string(dir));
    free(real);
    return rc ? rc : gen_load_sweep(dir, sweeps, results);
}

/* The NCCL variables a sweep's runs inherited (sweep.json's "inherited": a shell's, a site's
 * /etc/nccl.conf) that the profile does not set: where it is applied without them, NCCL runs
 * otherwise than it was measured. Said per sweep. */
static void warn_inherited(const json_t *sweeps, const json_t *content)
{
    size_t i, k;
    json_t *sw, *v;
    json_array_foreach((json_t *)sweeps, i, sw) {
        json_t *left = json_deep_copy(json_object_get(sw, "inherited"));
        json_array_foreach(json_object_get(content, "variables"), k, v)
            json_object_del(left, json_string_value(json_object_get(v, "name")));
        char *names = sweep_inherited_text(left);
        if (names)
            util_warning("the runs of '%s' inherited %s, which the profile does not set: where "
                         "it is applied without them, NCCL runs otherwise than it was measured "
                         "(give them in the space's \"fixed\" to make them the profile's)",
                         json_string_value(json_object_get(sw, "dir")), names);
        free(names);
        json_decref(left);
    }
}

int cmd_gen(int argc, char **argv)
{
    const char *runs = NULL, *root = "profiles";
    const struct util_opt opts[] = {
        {"runs", 'r', UTIL_OPT_STRING, &runs, "DIR",
         "a sweep directory (more may follow as arguments)"},
        {"profiles", 'p', UTIL_OPT_STRING, &root, "ROOT", "profile root (default ./profiles)"},
        {0},
    };
    const struct util_opts_cmd cmd = {"topotune gen", gen_usage, opts, -1, 0};
    int npos = 0, status, rc;
    char **pos = argv + 1;
    if (cli_parse(&cmd, argc, argv, &npos, &status))
        return status;
    if (!runs && !npos)
        return util_error("topotune gen needs --runs DIR (a directory written by topotune sweep)"),
               2;
    json_t *sweeps = json_array(), *results = json_array(), *seen = json_object();
    rc = runs ? load_once(runs, seen, sweeps, results) : 0;
    for (int i = 0; !rc && i < npos; i++)
        rc = load_once(pos[i], seen, sweeps, results);
    json_decref(seen);
    json_t *classes = json_object();
    size_t i;
    json_t *s;
    json_array_foreach(sweeps, i, s)
        json_object_set_new(classes, json_string_value(json_object_get(s, "class")), json_true());
    int exit_code = rc ? 2 : 0;
    const char *cls;
    json_t *unused;
    json_object_foreach(classes, cls, unused) {
        if (rc)
            break;
        json_t *cs = json_array(), *cr = json_array();
        json_t *x;
        json_array_foreach(sweeps, i, x)
            if (!strcmp(json_string_value(json_object_get(x, "class")), cls))
                json_array_append(cs, x);
        json_array_foreach(results, i, x)
            if (!strcmp(json_string_value(json_object_get(x, "class")), cls))
                json_array_append(cr, x);
        json_t *content = gen_select(cs, cr, cls);
        int version = 0, created = 0;
        if (!content) { /* refused: the sweeps cannot be judged together (named) */
            exit_code = 2;
        } else if ((rc = gen_store(root, content, &version, &created))) {
            exit_code = cli_status(rc); /* a store gen cannot trust: 2; a write that failed: 1 */
            rc = 0;
        } else {
            warn_inherited(cs, content);
            printf("%s: %s v%d: %s\n", cls, created ? "wrote" : "unchanged,", version,
                   json_string_value(json_object_get(content, "summary")));
            size_t k;
            json_t *v;
            json_array_foreach(json_object_get(content, "variables"), k, v)
                printf("  %s=%s (%s)\n", json_string_value(json_object_get(v, "name")),
                       json_string_value(json_object_get(v, "value")),
                       json_string_value(json_object_get(v, "role")));
            /* Exit 1 only when nothing ever worked; an unstable class still gets its profile. */
            if (!json_integer_value(json_object_get(
                    json_object_get(json_object_get(content, "sweep"), "outcomes"), "ok")))
                exit_code = 1;
        }
        json_decref(content);
        json_decref(cs);
        json_decref(cr);
    }
    if (!exit_code)
        util_info("profiles in '%s' (index.json lists them; 'topotune profiles list')", root);
    json_decref(classes);
    json_decref(sweeps);
    json_decref(results);
    return exit_code;
}
