/* SPDX-License-Identifier: MIT */
/*
 * `topotune bench`: one topotune-bench run under a launcher, printed as
 * nccl-tests prints it. Launchers: direct (this process becomes the benchmark)
 * and mpirun (Open MPI: as root it adds --allow-run-as-root, and it
 * oversubscribes when asked for more ranks than cores). Flags it does not know
 * go to topotune-bench unchanged.
 */
#include "bench/internal.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct launch {
    const char *backend, *np, *launcher, *hosts;
    char **pass; /* flags for topotune-bench */
    int npass;
};

static void usage(void)
{
    printf("usage: topotune bench [--backend nccl|mpi] [--np N] [--launcher direct|mpirun]\n"
           "                      [--hosts LIST] [topotune-bench flags: -b -e -f -n -w -c -d -o -g "
           "-T -a --json]\n\n"
           "Runs topotune-bench once, N ranks under the launcher (mpirun when N > 1), and prints\n"
           "its nccl-tests table. 'topotune-bench --help' lists the benchmark's own flags.\n");
}

/* Takes "--name VALUE" or "--name=VALUE" at argv[*i]; returns 1 when it matched. */
static int take(char **argv, int argc, int *i, const char *name, const char **out)
{
    size_t len = strlen(name);
    if (strncmp(argv[*i], name, len) != 0)
        return 0;
    if (argv[*i][len] == '=') {
        *out = argv[*i] + len + 1;
        return 1;
    }
    if (argv[*i][len] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        *out = NULL;
        return -1;
    }
    *out = argv[++*i];
    return 1;
}

static int parse(int argc, char **argv, struct launch *l)
{
    l->pass = calloc((size_t)argc + 1, sizeof(char *));
    for (int i = 1; i < argc; i++) {
        int t = 0;
        const char *flags[] = {"--np", "--launcher", "--hosts", "--backend"};
        const char **fields[] = {&l->np, &l->launcher, &l->hosts, &l->backend};
        for (int k = 0; k < 4 && !t; k++) {
            t = take(argv, argc, &i, flags[k], fields[k]);
            if (t < 0)
                return error("option '%s' needs a value", flags[k]), 2;
        }
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage();
            return 1;
        }
        if (!t)
            l->pass[l->npass++] = argv[i];
    }
    return 0;
}

char *bench_program_path(void)
{
    return util_sibling_program("topotune-bench", "TOPOTUNE_BENCH_PROGRAM");
}

static int in_path(const char *prog)
{
    const char *path = getenv("PATH");
    struct util_buf b = UTIL_BUF_INIT;
    int found = 0;
    for (const char *p = path ? path : ""; *p && !found;) {
        size_t len = strcspn(p, ":");
        util_buf_reset(&b);
        util_buf_addf(&b, "%.*s/%s", (int)len, p, prog);
        found = access(b.data, X_OK) == 0;
        p += len + (p[len] == ':');
    }
    util_buf_release(&b);
    return found;
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
static int check_flags(const struct launch *l)
{
    char **argv = calloc((size_t)l->npass + 4, sizeof(char *));
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
    pid_t pid = fork();
    if (pid == 0) {
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
    struct launch l = {.backend = "nccl"};
    int rc = parse(argc, argv, &l);
    if (rc) {
        free(l.pass);
        return rc == 1 ? 0 : 2;
    }
    long np = 1;
    if (l.np) {
        char *end;
        np = strtol(l.np, &end, 10);
        if (*end || np < 1 || np > 4096) {
            free(l.pass);
            return error("invalid value '%s' for --np: expected a number of ranks from 1 to 4096",
                         l.np),
                   2;
        }
    }
    const char *launcher = l.launcher ? l.launcher : (np > 1 || l.hosts ? "mpirun" : "direct");
    if (strcmp(launcher, "direct") && strcmp(launcher, "mpirun")) {
        free(l.pass);
        return error("invalid value '%s' for --launcher: expected direct or mpirun (srun arrives "
                     "with the sweep)",
                     launcher),
               2;
    }
    if (strcmp(launcher, "direct") == 0 && np > 1) {
        free(l.pass);
        return error("--np %ld needs a launcher: use --launcher mpirun", np), 2;
    }
    char **args = calloc((size_t)l.npass + 16, sizeof(char *));
    int n = 0;
    char npbuf[16];
    snprintf(npbuf, sizeof(npbuf), "%ld", np);
    if (strcmp(launcher, "mpirun") == 0) {
        if (!in_path("mpirun")) {
            free(l.pass);
            free(args);
            return error("mpirun not found: install Open MPI (apt-get install openmpi-bin) or use "
                         "--launcher direct"),
                   3;
        }
        args[n++] = "mpirun";
        args[n++] = "-np";
        args[n++] = npbuf;
        if (geteuid() == 0)
            args[n++] = "--allow-run-as-root";
        if (np > sysconf(_SC_NPROCESSORS_ONLN))
            args[n++] = "--oversubscribe";
        if (l.hosts) {
            args[n++] = "--host";
            args[n++] = (char *)l.hosts;
        }
    }
    char *bench = bench_program_path();
    args[n++] = bench;
    args[n++] = "--backend";
    args[n++] = (char *)l.backend;
    for (int i = 0; i < l.npass; i++)
        args[n++] = l.pass[i];
    args[n] = NULL;
    trace(args);
    rc = check_flags(&l);
    if (!rc)
        rc = run_and_map(args);
    free(bench);
    free(args);
    free(l.pass);
    return rc;
}
