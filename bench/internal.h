/* SPDX-License-Identifier: MIT */
/* What the benchmark driver, its backends and its report share inside bench/. */
#ifndef BENCH_INTERNAL_H
#define BENCH_INTERNAL_H

#include "bench/bench.h"
#include "model/model.h"
#include "topo/topo.h"

#include <jansson.h>
#include <mpi.h>
#include <stdint.h>

size_t bench_dtype_size(int dtype);

/* The size after size in o's sequence (times -f, or plus -i), or SIZE_MAX past -e. */
size_t bench_next_size(const struct bench_options *o, size_t size);

/*
 * The reductions' correctness pattern: rank r's value at element i is a small integer chosen so
 * that the reduced result is exact in every dtype (bench_pattern_fits says up to how many ranks),
 * known without the other ranks' data; seed varies it between passes. The exact result there.
 * (bench_coll_fill and bench_coll_check apply it per collective.)
 */
double bench_value(size_t i, int op, int rank, int nranks, int seed);
double bench_expected(size_t i, int op, int nranks, int seed);

/*
 * How far a reduced element may lie from the exact result: 0, except for avg of a floating type,
 * which NCCL computes as a sum of each input times 1/nranks (its premultiplied average), each
 * product and partial sum rounded in the type: (nranks + 1) half units in the last place of the
 * results' range [2, 4).
 */
double bench_tolerance(int op, int dtype, int nranks);

/* 0 when the pattern's partial results stay exact in dtype at nranks (the reduction's sum reaches
 * 39 + nranks / 2; an integer avg's, which NCCL divides after, 3 x nranks) and a float average's
 * tolerance stays below 0.5: else UTIL_EINVAL with *why in words (int8 sums wrap past 127, half
 * loses integers past 2048, bfloat16 past 256; a bfloat16 average from 63 ranks). */
int bench_pattern_fits(int op, int dtype, int nranks, char *why, size_t len);
/* Element access through double, exact for the pattern's values. */
double bench_get(const void *buf, size_t i, int dtype);
void bench_set(void *buf, size_t i, int dtype, double v);

/*
 * Collectives (bench/coll.c). A size's element counts as nccl-tests' GetCollByteCount gives them
 * for count elements of elt bytes on nranks ranks: send and recv buffers, and the count the
 * collective is called with (param: one rank's part for all_gather, reduce_scatter, alltoall).
 */
struct bench_counts {
    size_t send, recv, param;
};
void bench_coll_counts(int coll, size_t count, size_t elt, int nranks, struct bench_counts *n);
/* The size column: the larger buffer, in bytes (0: too small for one part per rank). */
size_t bench_coll_size(const struct bench_counts *n, size_t elt);
/* Where iteration iter's buffers start, in bytes, within buffers of max_bytes: nccl-tests moves
 * them along at each iteration (common.cu, startColl: shift = bytes x (iter % (max / bytes))), so
 * that a size that fits in the GPU's cache is not timed from it. Iteration 0 (the check's) at 0;
 * shift + bench_coll_size is never beyond max_bytes. */
size_t bench_coll_shift(const struct bench_counts *n, size_t elt, size_t max_bytes, int iter);
struct bench_ctx;
/* Rank's input (n->send elements) for pass seed. */
void bench_coll_fill(const struct bench_ctx *c, void *buf, const struct bench_counts *n, int rank,
                     int seed);
/* Elements of rank's output (n->recv of them) that differ from the exact result; at a reduce's
 * non-root, from what was there before (its input in place, else the cleared buffer), as
 * nccl-tests checks. */
long long bench_coll_check(const struct bench_ctx *c, const void *buf, const struct bench_counts *n,
                           int rank, int seed, int in_place);

/* One size and placement, as a rank measured it. */
struct bench_result {
    double time_us; /* per operation, this rank (or process) */
    long long wrong;
    char algo[16], proto[16]; /* from NCCL's TUNING log, "" when unknown */
};

struct bench_ctx {
    const struct bench_options *opt;
    int coll, dtype, op; /* enum model_coll, bench_dtype, bench_op */
    int proc, nprocs;    /* MPI process */
    int rank, nranks;    /* first rank of this process; all ranks (nprocs x GPUs) */
    int local_proc;      /* index of this process among those on its host */
    int nodes;
    MPI_Comm comm;
    json_t *hosts;         /* array of host names, one per process */
    json_t *devices;       /* array of device description strings, this process */
    json_t *effective_env; /* what the library reports it applied, or NULL */
    const json_t *env;     /* the configuration's environment; NULL: this process's recordable */
    int predicted;         /* the sim backend: every number is a prediction */
    int mpi;               /* MPI is up (not for sim: its output must not depend on MPI's state) */
    /* --split: comm, proc, nprocs, rank, nranks and nodes are this process's group's; the world
     * is every process of the launch; process 0 of the world writes the output */
    MPI_Comm world;
    int world_proc, world_nprocs, world_nodes;
    int group;        /* this process's group, -1: its host is in none (it only waits) */
    int ngroups;      /* 0: no --split */
    int report_group; /* 1 + the group bench_report_size writes a line for; 0: none */
    void *state;      /* the backend's */
};

struct bench_backend {
    const char *name;
    int default_average; /* -a when not given */
    /* NULL when the collective supports dtype and op here, else why not (for the usage error). */
    const char *(*unsupported)(int coll, int dtype, int op);
    /* After MPI is up: devices, communicators, buffers. Returns a bench_exit code. */
    int (*init)(struct bench_ctx *c);
    /* One size (c->coll's counts n): warm-up, a timed batch of -n operations, then -c check
     * passes. */
    int (*run)(struct bench_ctx *c, const struct bench_counts *n, int in_place,
               struct bench_result *r);
    void (*release)(struct bench_ctx *c);
    /* Adds the library versions it runs with to v (optional). */
    void (*versions)(json_t *v);
};

extern const struct bench_backend bench_backend_mpi;
extern const struct bench_backend bench_backend_nccl;
extern const struct bench_backend bench_backend_sim;

/*
 * Stages and deadlines. bench_stage names what the process does now ("init",
 * "warmup", "size:N", "check") and starts its -T deadline; a watchdog thread
 * ends the process with exit 4, naming the stage, when it passes (plus grace
 * for backends that abort on their own). bench_deadline_passed lets polling
 * backends give up first.
 */
void bench_stage(struct bench_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *bench_current_stage(void);
/* Disarms the watchdog once the results are out: teardown is not a stage. */
void bench_stage_done(void);
/* Starts the watchdog when -T is set; grace_s is added to each deadline. */
int bench_watchdog_start(const struct bench_ctx *c, double grace_s);
int bench_deadline_passed(void);

/* Test-only hooks, off unless their variables are set (see bench/hooks.c). */
/* Stalls for ever where the stage's hook names this rank: "init" (before the first exchange),
 * any other stage (its first timed size). */
void bench_hook_stall(const struct bench_ctx *c, const char *stage);
void bench_hook_corrupt(const struct bench_ctx *c, void *buf, size_t count);

/* A size's result once combined over ranks. */
struct bench_line {
    double time_us, algbw, busbw;
    long long wrong; /* -1: not checked (-c 0) */
    char algo[16], proto[16];
};

/*
 * Output, written by process 0 only: nccl-tests' text table on stdout (unless
 * JSON goes to stdout) and the JSON Lines events. Safe to call from the
 * watchdog thread. device_lines is the "# Using devices" block.
 */
int bench_report_open(const struct bench_ctx *c);
void bench_report_header(const struct bench_ctx *c, const char *device_lines, json_t *versions);
void bench_report_size(const struct bench_ctx *c, size_t bytes, size_t count,
                       const struct bench_line *out_of_place, const struct bench_line *in_place);
void bench_report_error(const struct bench_ctx *c, const char *stage, const char *message);
/* Footer and end event; returns code, or BENCH_EXIT_WRONG when a result was wrong. */
int bench_report_end(const struct bench_ctx *c, int code);

/*
 * --split (bench/split.c): the groups of hosts of spec ("node": each host alone) over the hosts of
 * every world process (c->hosts), as a new array of arrays of names, and this process's group in
 * *mine (-1: none). NULL after an error naming the host (one in two groups, one not in the
 * launch).
 */
json_t *bench_split_groups(const struct bench_ctx *c, const char *spec, int *mine);
/* Splits the world by group and makes c the group's (comm, proc, nprocs, rank, nranks, nodes). */
int bench_split_comm(struct bench_ctx *c);
/* One size's lines of every group to world process 0, which writes one size event per group,
 * each with the group's own bytes and count. Every world process calls it for every size, oop
 * and ip NULL where its group has no line (a size without a part for each of its ranks). */
void bench_split_report(struct bench_ctx *c, size_t bytes, size_t count,
                        const struct bench_line *oop, const struct bench_line *ip);
/* The "groups" event: the hosts of each group. */
void bench_report_groups(const struct bench_ctx *c, json_t *groups);

/* NCCL debug log: settings NCCL says it applied, and its algorithm/protocol per size. */
json_t *bench_nccl_log_env(const char *log_text);
/* NCCL_DEBUG_FILE's pattern expanded as NCCL (debug.cc) does: %h the host name up to its first
 * '.', its '%' and '/' made '-'; %p the pid; %% a '%'; any other %x kept; at most PATH_MAX
 * characters. A new string. */
char *bench_nccl_log_path(const char *pattern, const char *host, int pid);
/* The algorithm and protocol NCCL's TUNING line (2.24 and later, rank 0) gives the last call of
 * collective coll (enum model_coll; its line names NCCL's function: "AllGather") of bytes, which
 * NCCL counts as the call's count times the element size: one rank's part for AllGather and
 * ReduceScatter. 1 when found; alltoall and sendrecv, point-to-point calls, have no such line. */
int bench_nccl_log_choice(const char *log_text, int coll, size_t bytes, char algo[16],
                          char proto[16]);

#endif
