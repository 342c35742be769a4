/* SPDX-License-Identifier: MIT */
/*
 * `topotune env --node`: a profile's values that differ from node to node (NCCL_IB_HCA,
 * NCCL_IB_GID_INDEX, NCCL_SOCKET_IFNAME), resolved on this node (doctor_node_env): printed as
 * shell lines for a launch script to eval, or set for a command it then becomes (each rank of an
 * mpirun job, on its own node).
 */
#include "cli/cli.h"
#include "doctor/doctor.h"
#include "gen/gen.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/opts.h"
#include "util/quote.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct env_opts {
    const char *profile;
    int node, every, json;
};

static const char usage[] =
    "--node [--profile DIR] [--all] [--json] [-- COMMAND [ARGS...]]\n\n"
    "The profile's values that differ from node to node (NCCL_IB_HCA, NCCL_IB_GID_INDEX,\n"
    "NCCL_SOCKET_IFNAME), resolved on this node from its live devices: each the profile sets\n"
    "(--all: every one). Printed as `export NAME=VALUE` lines to eval, or, with a COMMAND, set\n"
    "in its environment as it replaces this process (mpirun ... topotune env --node -- prog).\n"
    "The profile: --profile, else $TOPOTUNE_PROFILE (the launch scripts and images set it).";

static int parse(int argc, char **argv, struct env_opts *o, int *status, int *npos)
{
    const struct util_opt opts[] = {
        {"node", 0, UTIL_OPT_FLAG, &o->node, NULL, "this node's values (required: the only kind)"},
        {"profile", 'p', UTIL_OPT_STRING, &o->profile, "DIR",
         "the profile (directory or profile.json; default $TOPOTUNE_PROFILE)"},
        {"all", 0, UTIL_OPT_FLAG, &o->every, NULL,
         "every per-node value, set by the profile or not"},
        {"json", 0, UTIL_OPT_FLAG, &o->json, NULL, "print {NAME: value} as JSON"},
        {0},
    };
    const struct util_opts_cmd cmd = {"topotune env", usage, opts, -1, 0};
    if (cli_parse(&cmd, argc, argv, npos, status))
        return 1;
    if (!o->node)
        return *status = 2, util_error("topotune env needs --node (this node's values)"), 1;
    if (!o->profile) /* with --all too: the profile's own values are kept where this node has them
                      */
        o->profile = getenv("TOPOTUNE_PROFILE");
    if (o->profile && !*o->profile)
        o->profile = NULL;
    if (!o->profile && !o->every)
        return *status = 2,
               util_error("give --profile DIR (or set TOPOTUNE_PROFILE), or --all for every value"),
               1;
    if (*npos && o->json)
        return *status = 2, util_error("--json prints; a COMMAND is run: give one of them"), 1;
    return 0;
}

static int print(const json_t *env, int json)
{
    if (json) {
        json_dumpf(env, stdout, JSON_INDENT(1) | JSON_SORT_KEYS);
        putchar('\n');
        return 0;
    }
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)env, name, v) {
        if (!json_is_string(v)) { /* nothing here: the value sourced from the profile goes */
            printf("unset %s\n", name);
            continue;
        }
        struct util_buf b = UTIL_BUF_INIT;
        util_quote_shell(&b, json_string_value(v));
        printf("export %s=%s\n", name, util_buf_str(&b));
        util_buf_release(&b);
    }
    return 0;
}

/* 1 when name is a word of the space-separated list. */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p; p += strcspn(p, " "), p += *p == ' ')
        if (strcspn(p, " ") == n && !strncmp(p, name, n))
            return 1;
    return 0;
}

/* A variable the launch script's caller set itself (TOPOTUNE_CALLER_VARS, which the scripts
 * export and mpirun.sh forwards) keeps that value: it is the caller's, not this node's to
 * resolve. */
static void keep_callers(json_t *env, json_t *notes)
{
    const char *list = getenv("TOPOTUNE_CALLER_VARS"), *name;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(env, tmp, name, v) {
        const char *now = getenv(name);
        json_t *kept = now && listed(list, name) ? json_string(now) : NULL;
        if (!kept) /* not the caller's (or not text JSON holds): resolved */
            continue;
        json_object_set_new(env, name, kept);
        json_array_append_new(notes, json_sprintf("%s: the caller's own value kept (%s)", name,
                                                  "TOPOTUNE_CALLER_VARS"));
    }
}

int cmd_env(int argc, char **argv)
{
    struct env_opts o = {0};
    int status = 0, npos = 0;
    if (parse(argc, argv, &o, &status, &npos))
        return status;
    char path[4200];
    json_t *profile = o.profile ? gen_profile_read(o.profile, path, sizeof(path)) : NULL;
    if (o.profile && !profile)
        return 2;
    json_t *notes, *env = doctor_node_env(profile, o.every, &notes), *n;
    keep_callers(env, notes);
    size_t i;
    json_array_foreach(notes, i, n)
        util_info("%s", json_string_value(n));
    int rc = 0;
    if (npos) {
        char **cmd = util_xcalloc((size_t)npos + 1, sizeof(char *));
        memcpy(cmd, argv + 1, sizeof(char *) * (size_t)npos); /* the parser moved them there */
        const char *name;
        json_t *v;
        json_object_foreach(env, name, v) {
            if (json_is_string(v))
                setenv(name, json_string_value(v), 1);
            else
                unsetenv(name);
        }
        fflush(stdout);
        signal(SIGPIPE, SIG_DFL); /* topotune ignores it; the command expects the default */
        execvp(cmd[0], cmd);
        rc = errno == ENOENT ? 127 : 126; /* as a shell says a command it cannot run */
        util_error("cannot run '%s': %s", cmd[0], strerror(errno));
        free(cmd);
    } else {
        rc = print(env, o.json);
    }
    json_decref(env);
    json_decref(notes);
    json_decref(profile);
    return rc;
}
