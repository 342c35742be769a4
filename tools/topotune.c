/* SPDX-License-Identifier: MIT */
/* The `topotune` command: global flags, the command table, dispatch. */
#include "bench/bench.h"
#include "compare/compare.h"
#include "doctor/doctor.h"
#include "gen/gen.h"
#include "topo/topo.h"
#include "util/log.h"

#include <stdio.h>
#include <string.h>

#define TOPOTUNE_VERSION "0.1.0"

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

static int cmd_help(int argc, char **argv);

static const struct command commands[] = {
    {"topo", cmd_topo, "map this machine (or a topology file): GPUs, NICs, NVLink, PCIe matrix"},
    {"bench", cmd_bench, "one all_reduce benchmark run under a launcher, as nccl-tests prints it"},
    {"sweep", cmd_sweep,
     "benchmark every configuration of a search space, each in a supervised process"},
    {"gen", cmd_gen, "choose the fastest stable configuration per node class and write profiles"},
    {"profiles", cmd_profiles, "list, show and diff the stored profiles"},
    {"run", cmd_run, "the main job: map this machine, sweep, and write its profile"},
    {"doctor", cmd_doctor, "preflight checks for the pitfalls that hang distributed jobs"},
    {"predict", cmd_predict, "predicted all_reduce per size for a topology or hardware spec"},
    {"compare", cmd_compare,
     "node classes side by side (profiles, sweeps, predictions), with tables and plots"},
    {"help", cmd_help, "list the commands, or show one command's help"},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
    fprintf(out, "usage: topotune [-q|-v] [--version] COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'topotune COMMAND --help' shows the options of one command.\n");
}

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static int cmd_help(int argc, char **argv)
{
    if (argc > 1 && find_command(argv[1]) && strcmp(argv[1], "help") != 0) {
        char *help_argv[] = {argv[1], "--help", NULL};
        return find_command(argv[1])->fn(2, help_argv);
    }
    usage(stdout);
    return 0;
}

/* Removes -q/-v (anywhere) from argv and sets the log level. */
static int take_global_flags(int argc, char **argv)
{
    enum util_log_level level = UTIL_LOG_INFO;
    int out = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quiet") == 0)
            level = UTIL_LOG_QUIET;
        else if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0)
            level = UTIL_LOG_DEBUG;
        else
            argv[out++] = argv[i];
    }
    util_log_init("topotune", level);
    argv[out] = NULL;
    return out;
}

int main(int argc, char **argv)
{
    argc = take_global_flags(argc, argv);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return cmd_help(1, argv);
    if (strcmp(argv[1], "--version") == 0) {
        printf("topotune %s\n", TOPOTUNE_VERSION);
        return fflush(stdout) ? 1 : 0;
    }
    const struct command *c = find_command(argv[1]);
    if (!c) {
        error("unknown command '%s' (see 'topotune help')", argv[1]);
        return 2;
    }
    int rc = c->fn(argc - 1, argv + 1);
    if (fflush(stdout) || ferror(stdout)) {
        error("cannot write to standard output");
        return rc ? rc : 1;
    }
    return rc;
}
