/* SPDX-License-Identifier: MIT */
/*
 * `topotune doctor`: the checks as a table (or JSON), exit 1 when one fails.
 * With --hosts (or --allocation inside Slurm) every node runs its checks through
 * mpirun, and the nodes are compared.
 */
#include "cli/cli.h"
#include "cluster/cluster.h"
#include "doctor/doctor.h"
#include "gen/gen.h"
#include "launch/launch.h"
#include "util/child.h"
#include "util/file.h"
#include "util/json.h"
#include "util/log.h"
#include "util/opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char doctor_usage[] =
    "[--input FILE] [--profile DIR] [--json [FILE]] [--copy-timeout S]\n"
    "       [--hosts h1,h2,... | --allocation] [--timeout S]";

static void print_checks(const json_t *checks)
{
    printf("%-16s %-8s %s\n", "check", "status", "evidence / fix");
    size_t i;
    json_t *c;
    json_array_foreach(checks, i, c) {
        printf("%-16s %-8s %s\n", json_string_value(json_object_get(c, "name")),
               json_string_value(json_object_get(c, "status")),
               json_string_value(json_object_get(c, "evidence")));
        const char *fix = json_string_value(json_object_get(c, "fix"));
        if (fix)
            printf("%-16s %-8s fix: %s\n", "", "", fix);
    }
}

/* One row per node (the facts compared), then the across-node checks. */
static void print_nodes(const json_t *nodes, const json_t *checks)
{
    printf("%-12s %-28s %-10s %-8s %-10s %-16s %8s %s\n", "host", "class", "nccl", "cuda", "driver",
           "interfaces", "shm MB", "failed checks");
    size_t i, j;
    json_t *n, *c;
    json_array_foreach(nodes, i, n) {
        const json_t *sw = json_object_get(n, "software");
        char failed[512] = "";
        size_t len = 0;
        json_array_foreach(json_object_get(n, "checks"), j, c) {
            if (!strcmp(util_json_str(c, "status", ""), "fail") && len < sizeof(failed))
                len += (size_t)snprintf(failed + len, sizeof(failed) - len, "%s%s", len ? "," : "",
                                        util_json_str(c, "name", "?"));
        }
        printf("%-12s %-28s %-10s %-8s %-10s %-16s %8lld %s\n", util_json_str(n, "host", "?"),
               util_json_str(n, "class", json_object_get(n, "error") ? "(no report)" : "?"),
               util_json_str(sw, "nccl", "-"), util_json_str(sw, "cuda", "-"),
               util_json_str(sw, "driver", "-"), util_json_str(n, "interfaces", "-"),
               (long long)json_integer_value(json_object_get(n, "shm_mb")), len ? failed : "-");
    }
    printf("\n");
    print_checks(checks);
}

static int any_failed(const json_t *checks)
{
    size_t i;
    json_t *c;
    json_array_foreach(checks, i, c)
        if (!strcmp(util_json_str(c, "status", ""), "fail"))
            return 1;
    return 0;
}

static int emit(const char *json, json_t *doc, const json_t *nodes, const json_t *checks)
{
    int failed = any_failed(checks);
    /* the text shows what nodes and profiles said (host, check names, evidence): one cleaned
     * line each, no escape sequence or forged row of theirs */
    json_t *shown_nodes = json ? NULL : util_json_clean(nodes);
    json_t *shown_checks = json ? NULL : util_json_clean(checks);
    if (json) {
        if (util_json_write(json, doc))
            failed = 1;
    } else if (nodes) {
        print_nodes(shown_nodes, shown_checks);
    } else {
        print_checks(shown_checks);
    }
    json_decref(shown_nodes);
    json_decref(shown_checks);
    return failed ? 1 : 0;
}

/* Every node reads profile_dir itself (it was read here first: a typo is one error, not a
 * failed check per node). */
static int across_nodes(const char *hosts, const char *profile_dir, double copy_timeout,
                        double timeout, const char *json)
{
    char *args[5] = {NULL}, copy[32];
    int n = 0;
    if (profile_dir)
        args[n++] = "--profile", args[n++] = (char *)profile_dir;
    snprintf(copy, sizeof(copy), "%.17g", copy_timeout);
    if (copy_timeout > 0)
        args[n++] = "--copy-timeout", args[n++] = copy;
    json_t *nodes = cluster_gather(hosts, "doctor", args, timeout);
    if (!nodes)
        return 3;
    json_t *checks = doctor_compare_nodes(nodes);
    json_t *doc = json_pack("{s:O,s:O}", "checks", checks, "nodes", nodes);
    int rc = emit(json, doc, nodes, checks);
    size_t i;
    json_t *node;
    json_array_foreach(nodes, i, node) /* a node that did not answer: the environment's, exit 3 */
        if (json_is_false(json_object_get(node, "answered")))
            rc = 3;
    json_decref(doc);
    json_decref(checks);
    json_decref(nodes);
    return rc;
}

static int this_node(const char *input, const json_t *profile, double copy_timeout,
                     const char *json)
{
    struct topo t;
    topo_init(&t);
    /* with --input the hardware is the file's; the system and software are this machine's */
    if (input ? topo_load_as_this_node(&t, input) : topo_load(&t, NULL)) {
        topo_release(&t);
        return 2;
    }
    json_t *checks = doctor_run(&t, profile, copy_timeout);
    json_t *doc = json_pack("{s:O}", "checks", checks);
    int rc = emit(json, doc, NULL, checks);
    json_decref(doc);
    json_decref(checks);
    topo_release(&t);
    return rc;
}

int cmd_doctor(int argc, char **argv)
{
    const char *input = NULL, *profile_dir = NULL, *json = NULL, *hosts = NULL;
    double copy_s = 0, timeout_s = 300;
    int allocation = 0;
    const struct util_opt opts[] = {
        {"input", 'i', UTIL_OPT_STRING, &input, "FILE",
         "hardware from a topology or spec; the rest from here"},
        {"profile", 'p', UTIL_OPT_STRING, &profile_dir, "DIR", "check this node against a profile"},
        {"json", 0, UTIL_OPT_OPTSTRING, &json, "FILE",
         "JSON {\"checks\": [...]} (stdout: - or none)"},
        {"copy-timeout", 0, UTIL_OPT_DOUBLE, &copy_s, "S",
         "deadline of the P2P copy test (default 15 s + n^2/2 s for n GPUs)", .min = 0.001,
         .max = 86400},
        {"hosts", 0, UTIL_OPT_STRING, &hosts, "LIST",
         "check these nodes through mpirun and compare them (h1,h2,...)"},
        {"allocation", 0, UTIL_OPT_FLAG, &allocation, NULL,
         "check every node of the Slurm allocation this runs in, through mpirun"},
        {"timeout", 0, UTIL_OPT_DOUBLE, &timeout_s, "S",
         "deadline for all nodes together with --hosts (default 300)", .min = 0.001, .max = 604800},
        {0},
    };
    /* no positional argument: a profile given without --profile was ignored, exit 0 */
    const struct util_opts_cmd cmd = {"topotune doctor", doctor_usage, opts, 0, 0};
    int npos = 0, status, rc = 0;
    if (cli_parse(&cmd, argc, argv, &npos, &status))
        return status;
    if ((hosts || allocation) && input)
        return util_error("--input describes one node: it cannot be combined with --hosts or "
                          "--allocation (give each node its file with TOPOTUNE_TOPOLOGY)"),
               2;
    if (launch_check_nodes(hosts, allocation))
        return 2;
    /* the hardware file read: --input, or TOPOTUNE_TOPOLOGY without it (replaced by the report) */
    const char *described = getenv("TOPOTUNE_TOPOLOGY");
    if (util_file_same(input ? input : described && *described ? described : NULL, json))
        return util_error("--json '%s' is a file doctor reads: give the report another name", json),
               2;
    json_t *profile = NULL;
    char path[4096] = "";
    if (profile_dir) {
        if (!(profile = gen_profile_read(profile_dir, path, sizeof(path))))
            return 2;
        if (util_file_same(path, json)) /* the profile.json read, not its folder */
            return json_decref(profile),
                   util_error("--json '%s' is the profile doctor reads: give the report another "
                              "name",
                              json),
                   2;
        /* each node reads the file read here: --profile DIR/profile.json became ".../
         * profile.json/profile.json" there, a failed check on every node */
        profile_dir = path;
    }
    util_child_setup();
    rc = hosts || allocation ? across_nodes(hosts, profile_dir, copy_s, timeout_s, json)
                             : this_node(input, profile, copy_s, json);
    json_decref(profile);
    return rc;
}
