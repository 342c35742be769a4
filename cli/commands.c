/* SPDX-License-Identifier: MIT */
/* The command table: `topotune --help` and dispatch are generated from it. */
#include "cli/cli.h"

#include <signal.h>
#include <string.h>

#include "util/child.h"
#include "util/error.h"

static const struct cli_command commands[] = {
    {"topo", cmd_topo, "map this machine (or a topology file): GPUs, NICs, NVLink, PCIe matrix"},
    {"bench", cmd_bench,
     "one benchmark run of a collective under a launcher, as nccl-tests prints it"},
    {"sweep", cmd_sweep,
     "benchmark every configuration of a search space, each in a supervised process"},
    {"gen", cmd_gen, "choose the fastest stable configuration per node class and write profiles"},
    {"profiles", cmd_profiles, "list, show and diff the stored profiles"},
    {"run", cmd_run, "the main job: map this machine, sweep, and write its profile"},
    {"doctor", cmd_doctor, "preflight checks for the pitfalls that hang distributed jobs"},
    {"predict", cmd_predict,
     "a collective's predicted busbw per size for a topology or hardware spec"},
    {"compare", cmd_compare,
     "node classes side by side (profiles, sweeps, predictions), with tables and plots"},
    {"verify", cmd_verify,
     "a profile's gain per size: defaults, env-only, and env with its per-size tuner table"},
    {"expect", cmd_expect,
     "what a healthy system should measure: busbw per size with a band, for validators"},
    {"calibrate", cmd_calibrate,
     "fit the model's parameters to measured sweeps: a calibration file"},
    {"env", cmd_env,
     "a profile's per-node values (NCCL_IB_HCA, GID index, interface) resolved on this node"},
    {"check", cmd_check,
     "a fast health check of this node for Slurm and NHC: doctor, a short run, its band"},
    {"workload", cmd_workload,
     "what a job communicates, per collective and size: from its NCCL log, or a preset"},
    {"survey", cmd_survey,
     "characterize a cluster: every node and link measured, the slow or broken ones named"},
    {"help", cmd_help, "list the commands, or show one command's help"},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

void cli_usage(FILE *out)
{
    fprintf(out, "usage: topotune [-q|-v] [--version] COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'topotune COMMAND --help' shows the options of one command; "
                 "'man topotune' describes them all.\n");
}

const struct cli_command *cli_find(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

int cmd_help(int argc, char **argv)
{
    const struct cli_command *c = argc > 1 ? cli_find(argv[1]) : NULL;
    if (c && c->fn != cmd_help) {
        char *help_argv[] = {argv[1], "--help", NULL};
        return c->fn(2, help_argv);
    }
    cli_usage(stdout);
    return 0;
}

int cli_status(int code)
{
    switch (code) {
    case UTIL_OK:
    case UTIL_OPTS_HELP:
        return 0;
    case UTIL_EUSAGE:
    case UTIL_EINVAL:
    case UTIL_ENOENT:
    case UTIL_ENOTSUP:
        return 2;
    case UTIL_EENV:
        return 3;
    case UTIL_EINTR:
        return 128 + (util_child_interrupted() ? util_child_interrupted() : SIGINT);
    default: /* UTIL_EIO, UTIL_ENOMEM, or a value no module should return: the work failed */
        return 1;
    }
}

int cli_parse(const struct util_opts_cmd *cmd, int argc, char **argv, int *npositional, int *status)
{
    int rc = util_opts_parse(cmd, argc, argv, npositional);
    *status = cli_status(rc);
    return rc != 0;
}
