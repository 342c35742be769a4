/* SPDX-License-Identifier: MIT */
/* `topotune doctor`: the checks as a table (or JSON), exit 1 when one fails. */
#include "doctor/doctor.h"
#include "topo/internal.h"
#include "util/json.h"
#include "util/log.h"
#include "util/opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char doctor_usage[] = "[--input FILE] [--profile DIR] [--json]";

static void print_table(json_t *checks)
{
    printf("%-12s %-8s %s\n", "check", "status", "evidence / fix");
    size_t i;
    json_t *c;
    json_array_foreach(checks, i, c)
    {
        printf("%-12s %-8s %s\n", json_string_value(json_object_get(c, "name")),
               json_string_value(json_object_get(c, "status")),
               json_string_value(json_object_get(c, "evidence")));
        const char *fix = json_string_value(json_object_get(c, "fix"));
        if (fix)
            printf("%-12s %-8s fix: %s\n", "", "", fix);
    }
}

int cmd_doctor(int argc, char **argv)
{
    const char *input = NULL, *profile_dir = NULL, *json = NULL, *hosts = NULL;
    const struct util_opt opts[] = {
        {"input", 'i', UTIL_OPT_STRING, &input, "FILE",
         "hardware from a topology or spec; the rest from here"},
        {"profile", 'p', UTIL_OPT_STRING, &profile_dir, "DIR", "check this node against a profile"},
        {"json", 0, UTIL_OPT_OPTSTRING, &json, "FILE",
         "JSON {\"checks\": [...]} (stdout: - or none)"},
        {"hosts", 0, UTIL_OPT_STRING, &hosts, "LIST", "check several nodes (not built yet)"},
        {0},
    };
    char **pos = calloc((size_t)argc + 1, sizeof(char *));
    int npos = 0,
        rc = util_opts_parse("topotune doctor", doctor_usage, opts, argc, argv, pos, &npos);
    free(pos);
    if (rc)
        return rc > 0 ? 0 : 2;
    if (hosts)
        return error("--hosts: checking several nodes arrives with the multi-node work; run "
                     "topotune doctor on "
                     "each node (srun topotune doctor --json) for now"),
               2;
    json_t *profile = NULL;
    if (profile_dir) {
        char path[2048];
        snprintf(path, sizeof(path), "%s/profile.json", profile_dir);
        profile = util_json_load(path);
        if (!profile)
            return 2;
    }
    struct topo t;
    topo_init(&t);
    if (topo_load(&t, input)) {
        json_decref(profile);
        return 2;
    }
    if (input) { /* the hardware is the file's; the system and software are this machine's */
        topo_probe_system(&t);
        if (!t.software.nccl)
            topo_probe_software(&t);
    }
    json_t *checks = doctor_run(&t, profile);
    int failed = 0;
    size_t i;
    json_t *c;
    json_array_foreach(checks, i, c) failed |=
        !strcmp(json_string_value(json_object_get(c, "status")), "fail");
    if (json) {
        json_t *doc = json_pack("{s:o}", "checks", json_incref(checks));
        if (util_json_write(json, doc))
            failed = 1;
        json_decref(doc);
    } else {
        print_table(checks);
    }
    json_decref(checks);
    json_decref(profile);
    topo_release(&t);
    return failed ? 1 : 0;
}
