/* SPDX-License-Identifier: MIT */
/*
 * The collectives benchmark: `topotune-bench` (one process per rank, or -g GPUs
 * per process) and `topotune bench` (the same under a launcher). -C picks the
 * collective (all_reduce by default; every one nccl-tests has a program for, see
 * model_coll_names). Flags, timing, busbw and text output follow that nccl-tests
 * program (all_gather_perf...); --json writes the JSON Lines events of
 * docs/schemas/bench-event.schema.json.
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <jansson.h>
#include <stddef.h>

/* Exit codes, as nccl-tests'. */
enum bench_exit {
    BENCH_EXIT_OK = 0,
    BENCH_EXIT_INTERNAL = 1, /* host memory ran out (nccl-tests' testInternalError) */
    BENCH_EXIT_CUDA = 2,     /* CUDA error, no GPU visible included */
    BENCH_EXIT_COMM = 3,     /* NCCL (or MPI) error */
    BENCH_EXIT_TIMEOUT = 4,  /* a wait passed the -T deadline */
    BENCH_EXIT_USAGE = 6,    /* invalid usage: the message names the flag */
    BENCH_EXIT_WRONG = 7,    /* wrong results, or (nccl-tests' testNumResults too) the Avg bus
                              * bandwidth below 0.9 x NCCL_TESTS_MIN_BW */
};

struct bench_options {
    const char *backend;    /* "nccl", "mpi" or "sim" */
    const char *collective; /* -C: nccl-tests' name, "all_reduce" by default */
    int root;               /* -r: broadcast's and reduce's root rank (default 0) */
    size_t min_bytes, max_bytes, step_bytes;
    double step_factor; /* > 1: multiply; otherwise add step_bytes */
    int iters, warmup, check, ngpus;
    int average;             /* -a: 0 rank 0, 1 mean, 2 min, 3 max; -1: the backend's default */
    double timeout_s;        /* -T: 0 is off, as in nccl-tests */
    const char *dtype;       /* -d */
    const char *op;          /* -o */
    const char *json;        /* NULL, "-" (stdout, instead of the table) or a file */
    const char *topology;    /* sim: the topology to predict */
    int nodes;               /* sim: nodes (0: the topology's own count) */
    unsigned seed;           /* sim: noise seed */
    double noise;            /* sim: relative run-to-run noise (sigma), default 0.02 */
    const char *split;       /* --split: "node", or groups of hosts "h1,h2;h3,h4"; NULL: none */
    const char *calibration; /* sim: the model's parameters (topotune/calibration/1), or NULL */
    const char *metrics;     /* --metrics: Prometheus textfile of the run, or NULL */
    double min_bw; /* NCCL_TESTS_MIN_BW as nccl-tests reads it: the run fails (exit 7) when its
                    * Avg bus bandwidth is below 0.9 x min_bw; -1 when unset */
};

/* Data types and reduction operations (-d, -o). */
enum bench_op { BENCH_OP_SUM, BENCH_OP_PROD, BENCH_OP_MIN, BENCH_OP_MAX, BENCH_OP_AVG, BENCH_NOPS };

enum bench_dtype {
    BENCH_INT8,
    BENCH_UINT8,
    BENCH_INT32,
    BENCH_UINT32,
    BENCH_INT64,
    BENCH_UINT64,
    BENCH_HALF,
    BENCH_FLOAT,
    BENCH_DOUBLE,
    BENCH_BFLOAT16,
    BENCH_NDTYPES
};

/* Names of dtypes and ops as nccl-tests spells them; parse returns -1 for an unknown name. */
const char *bench_dtype_name(int dtype);
int bench_dtype_parse(const char *name);
const char *bench_op_name(int op);
int bench_op_parse(const char *name);

/*
 * Parses topotune-bench's flags (argv[0] is the program name) into o, with
 * nccl-tests' defaults. Returns 0, 1 after --help, or BENCH_EXIT_USAGE after
 * printing an error that names the flag.
 */
int bench_parse_options(int argc, char **argv, struct bench_options *o);

/* o set to nccl-tests' defaults, as bench_parse_options starts from. */
void bench_options_init(struct bench_options *o);

/* BENCH_MAX_BYTES: the largest size any flag takes (10^15 bytes). */
#define BENCH_MAX_BYTES 1000000000000000ULL
/* BENCH_MAX_SIZES: the most sizes one run measures (-b 8 -e 1G -i 1 would be 10^9 of them). */
#define BENCH_MAX_SIZES 10000

/*
 * A size as -b, -e and -i read it: bytes with an optional binary K, M or G
 * suffix ("8", "0.5K", "1G"), at most BENCH_MAX_BYTES. Returns 0, or -1 when s
 * is not such a size (out is then untouched). Prints nothing.
 */
int bench_parse_size(const char *s, size_t *out);

/*
 * The sizes a run with o measures: -b, then times -f (or plus -i) up to -e,
 * leaving out those too small for one element of -d. Returns how many, but
 * counts no further than limit, so a vast range costs at most limit steps:
 * 0 means the run would measure nothing.
 */
size_t bench_count_sizes(const struct bench_options *o, size_t limit);

/* `topotune-bench`: returns the process exit code. */
int bench_main(int argc, char **argv);

/* What topotune-bench (as nccl-tests) runs for the requested size of float elements of
 * collective coll (enum model_coll) on nranks ranks: its size column, and the count it calls the
 * collective with into *count (one rank's part for all_gather, reduce_scatter and alltoall). 0
 * when that count is 0: the size is too small, and is skipped. */
size_t bench_float_size(int coll, size_t size, int nranks, size_t *count);

/*
 * The sim backend's output without a run: the model m's predictions for the
 * sizes of o (doubling from -b to -e) written as the benchmark's JSON events
 * to stdout, every number marked predicted; env (NAME -> value) is the environment the model
 * was given, recorded instead of this process's. Returns the exit code
 * topotune-bench would have (a predicted fault or wrong result included).
 */
struct model;
int bench_predict_events(const struct bench_options *o, const struct model *m, const json_t *env);

#endif
