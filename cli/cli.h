/* SPDX-License-Identifier: MIT */
/*
 * Every `topotune` subcommand: argv in, exit code out (0 done, 1 a verdict the
 * user asked about failed, 2 usage or bad input, 3 the environment failed).
 * Each cmd_<name> parses all of its options first, then calls the modules
 * below it; the table in cli/commands.c names and summarises them.
 */
#ifndef CLI_CLI_H
#define CLI_CLI_H

#include <stdio.h>

#include "util/opts.h"

/*
 * The exit status for what a module returned, as the man page's EXIT STATUS lists them: 0 for 0
 * and UTIL_OPTS_HELP; 1, the work failed, for UTIL_EIO (a write error), UTIL_ENOMEM and any
 * other value; 2 for bad usage or input (UTIL_EUSAGE, UTIL_EINVAL, UTIL_ENOENT, UTIL_ENOTSUP);
 * 3, something required is missing, for UTIL_EENV; 128 + the signal for UTIL_EINTR. The one
 * place a module's code becomes a status (util/error.h).
 */
int cli_status(int code);

/*
 * util_opts_parse, then: 0 when the command goes on, or 1 when it ends with *status (0 after
 * --help, 2 after a usage error the parser printed).
 */
int cli_parse(const struct util_opts_cmd *cmd, int argc, char **argv, int *npositional,
              int *status);

/*
 * The --env NAME=VALUE list of a prediction (predict, expect): the configuration the model is
 * asked about, never this shell's. cli_env_check keeps the items of list in e when each is NAME
 * in [A-Z_][A-Za-z0-9_]*, VALUE in [A-Za-z0-9_.,:;=^/+-]* (no space; ';' separates NCCL's
 * per-function parts: quoted wherever a value is written into a script) and NAME one a
 * flag may set (util_env_refused); 0, or UTIL_EUSAGE said. cli_env_lookup is a model_env_fn over
 * it (ctx: the struct cli_env), the last assignment of a name winning.
 */
struct cli_env {
    char **vars; /* NAME=VALUE */
    int n;
};
int cli_env_check(struct cli_env *e, const struct util_opt_list *list);
const char *cli_env_lookup(const char *name, void *ctx);

int cmd_topo(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
/* The command an interrupted sweep names to continue it ("topotune run --resume --out DIR"), for
 * a command that runs cmd_sweep with options of its own choosing; NULL: "topotune sweep --resume
 * --out DIR" with the same options. */
void cli_sweep_resume_as(const char *command);
int cmd_gen(int argc, char **argv);
int cmd_profiles(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_survey(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_expect(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_env(int argc, char **argv);
int cmd_workload(int argc, char **argv);

struct cli_command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

/* The command named name, or NULL. */
const struct cli_command *cli_find(const char *name);

/* "usage: topotune ..." and the command list. */
void cli_usage(FILE *out);

/* `topotune help [COMMAND]`. */
int cmd_help(int argc, char **argv);

#endif
