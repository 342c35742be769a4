/* SPDX-License-Identifier: MIT */
/*
 * `topotune bench`: one topotune-bench run under a launcher, printed as
 * nccl-tests prints it. Launchers: direct (this process becomes the benchmark)
 * and mpirun (Open MPI: as root it adds --allow-run-as-root, and it
 * oversubscribes when asked for more ranks than cores). Flags it does not know
 * go to topotune-bench unchanged.
 */
#include "bench/bench.h"
#include "cli/cli.h"
#include "launch/launch.h"
#include "sweep/sweep.h"
#include "util/buf.h"
#include "util/child.h"
#include "util/error.h"
#include "util/file.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/opts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

struct bench_cmd {
    const char *backend, *launcher, *hosts;
    int np;
    char **pass; /* flags for topotune-bench (in argv) */
    int npass;
};

/* The benchmark's own flags pass through in order; topotune-bench checks them (check_flags).
 * cli_parse's result. */
static int parse(int argc, char **argv, struct bench_cmd *l, int *status)
{
    const struct util_opt opts[] = {
        {"backend", 0, UTIL_OPT_CHOICE, &l->backend, "NAME",
         "nccl (default), mpi or sim (the model)", .choices = "nccl mpi sim"},
        {"np", 0, UTIL_OPT_INT, &l->np, "N", "ranks in all (default 1)", .min = 1, .max = 4096},
        {"launcher", 0, UTIL_OPT_CHOICE, &l->launcher, "NAME",
         "direct or mpirun (default: mpirun when N > 1 or --hosts)", .choices = "direct mpirun",
         .hint = "srun: use topotune sweep --launcher srun"},
        {"hosts", 0, UTIL_OPT_STRING, &l->hosts, "LIST",
         "mpirun across these hosts, the same number of ranks on each"},
        {0},
    };
    const struct util_opts_cmd cmd = {
        "topotune bench",
        "[--backend nccl|mpi|sim] [--np N] [--launcher direct|mpirun] [--hosts LIST]\n"
        "       [topotune-bench flags: -C -r -b -e -f -i -n -w -c -d -o -g -T -a --json,\n"
        "        --metrics, and the sim backend's --topology --nodes --seed --noise\n"
        "        --calibration]\n\n"
        "Runs topotune-bench once, N ranks under the launcher, and prints its nccl-tests table.\n"
        "'topotune-bench --help' lists the benchmark's own flags.",
        opts, -1, 1};
    int rc = cli_parse(&cmd, argc, argv, &l->npass, status);
    l->pass = argv + 1;
    return rc;
}

static void trace(char **argv)
{
    const char *t = getenv("TOPOTUNE_TRACE");
    if (!t || strcmp(t, "1") != 0)
        return;
    struct util_buf b = UTIL_BUF_INIT;
    for (int i = 0; argv[i]; i++)
        util_buf_addf(&b, "%s%s", i ? " " : "", argv[i]);
    fprintf(stderr, "topotune: trace: exec %s\n", util_buf_str(&b));
    util_buf_release(&b);
}

/* The benchmark's flags are checked here first, so a typo is topotune's usage error (2). */
static int check_flags(const struct bench_cmd *l)
{
    char **argv = util_xcalloc((size_t)l->npass + 4, sizeof(char *));
    int n = 0;
    argv[n++] = "topotune-bench";
    argv[n++] = "--backend";
    argv[n++] = (char *)l->backend;
    for (int i = 0; i < l->npass; i++)
        argv[n++] = l->pass[i];
    struct bench_options o;
    int rc = bench_parse_options(n, argv, &o);
    free(argv);
    return rc == BENCH_EXIT_USAGE ? 2 : 0;
}

/*
 * Runs the launcher and maps topotune-bench's codes (nccl-tests') onto
 * topotune's: 6 usage -> 2; 2 no GPU or CUDA -> 3 (the environment lacks
 * something); 3, 4, 7 and signals -> 1 (the run failed); exec failure -> 3.
 */
static int run_and_map(char **args)
{
    fflush(stdout);
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        /* the launcher and its ranks end with us: a kill of topotune (a scheduler's, a
         * timeout's) left mpirun and its ranks running, hung for ever without -T. mpirun passes
         * SIGTERM on to its ranks. */
        prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
        if (getppid() != parent)
            _exit(127);
        signal(SIGPIPE, SIG_DFL);
        execvp(args[0], args);
        fprintf(stderr, "topotune: error: cannot run '%s': %s\n", args[0], strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (pid < 0 || !WIFEXITED(status))
        return 1;
    switch (WEXITSTATUS(status)) {
    case 0:
        return 0;
    case BENCH_EXIT_USAGE:
        return 2;
    case BENCH_EXIT_CUDA:
    case 127:
        return 3;
    default:
        return 1;
    }
}

int cmd_bench(int argc, char **argv)
{
    struct bench_cmd l = {.backend = "nccl", .np = 1};
    int status;
    if (parse(argc, argv, &l, &status))
        return status;
    int np = l.np;
    const char *launcher = l.launcher ? l.launcher : (np > 1 || l.hosts ? "mpirun" : "direct");
    if (strcmp(launcher, "direct") == 0 && np > 1)
        return util_error("--np %d needs a launcher: use --launcher mpirun", np), 2;
    /* as the sweep refuses them: each would run other than asked, and exit 0 */
    if (strcmp(launcher, "direct") == 0 && l.hosts)
        return util_error("--hosts needs a launcher that reaches them: use --launcher mpirun "
                          "(direct runs on this machine)"),
               2;
    if (!strcmp(l.backend, "sim") && np > 1)
        return util_error("--backend sim with --np %d: the sim is one process that acts out "
                          "every rank of --topology (its --nodes); give no --np",
                          np),
               2;
    if (l.hosts && launch_check_nodes(l.hosts, 0))
        return 2;
    int nhosts = launch_count_hosts(l.hosts);
    if (nhosts && np % nhosts)
        return util_error("--np %d is not a multiple of the %d host(s): every host runs the same "
                          "number of ranks",
                          np, nhosts),
               2;
    if (launch_usable(launcher))
        return cli_status(UTIL_EENV);
    char **program = util_xcalloc((size_t)l.npass + 4, sizeof(char *));
    int n = 0;
    char *bench = sweep_bench_program();
    program[n++] = bench;
    program[n++] = "--backend";
    program[n++] = (char *)l.backend;
    for (int i = 0; i < l.npass; i++)
        program[n++] = l.pass[i];
    struct launch spec = {.launcher = launcher, .np = np, .hosts = l.hosts};
    char **args = launch_argv(&spec, program);
    int rc = args ? check_flags(&l) : 3; /* no hostfile could be written: said */
    if (!rc) {
        trace(args);
        /* a signal removes the hostfile of a long host list on its way out */
        util_child_setup();
        rc = run_and_map(args);
    }
    free(bench);
    free(program);
    launch_argv_free(args);
    return rc;
}
