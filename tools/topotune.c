/* SPDX-License-Identifier: MIT */
/* The `topotune` program: global flags, then the command named in cli/commands.c. */
#include "cli/cli.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/version.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Removes -q/-v (anywhere before "--": what follows is another program's, `env -- CMD`) from
 * argv and sets the log level. */
static int take_global_flags(int argc, char **argv)
{
    enum util_log_level level = UTIL_LOG_INFO;
    int out = 1, rest = 0;
    for (int i = 1; i < argc; i++) {
        rest |= strcmp(argv[i], "--") == 0;
        if (rest)
            argv[out++] = argv[i];
        else if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quiet") == 0)
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

static int run_command(const struct cli_command *c, int argc, char **argv)
{
    /* NCCL_TESTS_MIN_BW gates one benchmark run (topotune bench, as nccl-tests): the runs of a
     * sweep, survey or verify measure configurations and nodes, and a slow one is a number for
     * them, not a failed run. env passes the environment on to the command it becomes. */
    if (strcmp(c->name, "bench") != 0 && strcmp(c->name, "env") != 0)
        unsetenv("NCCL_TESTS_MIN_BW");
    int rc = c->fn(argc - 1, argv + 1);
    /* A command passes on a module's negative UTIL_E* code now and then: as a status it would
     * read 255 (or 253...), which no page documents. cli_status makes it the documented one. */
    return rc < 0 ? cli_status(rc) : rc;
}

int main(int argc, char **argv)
{
    util_mem_init();
    /* a reader that went away (| head) is a write error: exit 1 with its message, as the page
     * says, not a death by SIGPIPE a script cannot tell from a crash. Every exec puts the
     * default back (util/child.c, env's and bench's), as a program expects it. */
    signal(SIGPIPE, SIG_IGN);
    argc = take_global_flags(argc, argv);
    if (argc < 2) {
        cli_usage(stderr);
        return 2;
    }
    int rc;
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        rc = cmd_help(1, argv);
    } else if (strcmp(argv[1], "--version") == 0) {
        printf("topotune %s\n", util_version());
        rc = 0;
    } else {
        const struct cli_command *c = cli_find(argv[1]);
        if (!c) {
            util_error("unknown command '%s' (see 'topotune help')", argv[1]);
            return 2;
        }
        rc = run_command(c, argc, argv);
    }
    /* every path's output checked once: a closed pipe is exit 1 with its message */
    if (fflush(stdout) || ferror(stdout)) {
        util_error("cannot write to standard output");
        return rc ? rc : 1;
    }
    return rc;
}
