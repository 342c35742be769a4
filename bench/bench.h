/* SPDX-License-Identifier: MIT */
/*
 * The all_reduce benchmark: `topotune-bench` (one process per rank, or -g GPUs
 * per process) and `topotune bench` (the same under a launcher). Flags, timing,
 * busbw and text output follow nccl-tests' all_reduce_perf; --json writes the
 * JSON Lines events of DESIGN.md section 5.
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <stddef.h>

/* Exit codes, as nccl-tests'. */
enum bench_exit {
    BENCH_EXIT_OK = 0,
    BENCH_EXIT_CUDA = 2,    /* CUDA error, no GPU visible included */
    BENCH_EXIT_COMM = 3,    /* NCCL (or MPI) error */
    BENCH_EXIT_TIMEOUT = 4, /* a wait passed the -T deadline */
    BENCH_EXIT_USAGE = 6,   /* invalid usage: the message names the flag */
    BENCH_EXIT_WRONG = 7,   /* wrong results */
};

struct bench_options {
    const char *backend; /* "nccl", "mpi" or "sim" */
    size_t min_bytes, max_bytes, step_bytes;
    double step_factor; /* > 1: multiply; otherwise add step_bytes */
    int iters, warmup, check, ngpus;
    int average;          /* -a: 0 rank 0, 1 mean, 2 min, 3 max; -1: the backend's default */
    double timeout_s;     /* -T: 0 is off, as in nccl-tests */
    const char *dtype;    /* -d */
    const char *op;       /* -o */
    const char *json;     /* NULL, "-" (stdout, instead of the table) or a file */
    const char *topology; /* sim: the topology to predict */
    int nodes;            /* sim: nodes (0: the topology's own count) */
    unsigned seed;        /* sim: noise seed */
    double noise;         /* sim: relative run-to-run noise (sigma), default 0.02 */
};

/*
 * Parses topotune-bench's flags (argv[0] is the program name) into o, with
 * nccl-tests' defaults. Returns 0, 1 after --help, or BENCH_EXIT_USAGE after
 * printing an error that names the flag.
 */
int bench_parse_options(int argc, char **argv, struct bench_options *o);

/* `topotune-bench`: returns the process exit code. */
int bench_main(int argc, char **argv);

/* `topotune bench`: one run under a launcher; returns the exit code. */
int cmd_bench(int argc, char **argv);

/* `topotune sweep`: every configuration of a space, supervised; returns the exit code. */
int cmd_sweep(int argc, char **argv);

/* `topotune predict`: the model's prediction for a topology; returns the exit code. */
int cmd_predict(int argc, char **argv);

#endif
