/* SPDX-License-Identifier: MIT */
/*
 * Sweeps: search spaces (schema topotune/space/1), the supervised runs of
 * topotune-bench under a launcher, their classification, and DIR/results.jsonl
 * (append-only, fsynced, resumable). gen and compare read spaces and results
 * through this header.
 */
#ifndef SWEEP_SWEEP_H
#define SWEEP_SWEEP_H

#include "topo/topo.h"

#include <jansson.h>
#include <stddef.h>

/* A search space (schema topotune/space/1). */
struct sweep_space {
    json_t *doc;  /* the file as read */
    json_t *vars; /* after pruning: NAME -> [values] */
    const char *backend, *dtype, *op;
    size_t min_bytes, max_bytes, obj_min, obj_max;
    double factor, timeout_s, cv_max;
    int repeat, iters, warmup;
};

/* Names [A-Z_][A-Za-z0-9_]* (MCA names carry lowercase), values [A-Za-z0-9_.,:=^/+-]* (and @ for
 * space macros). */
int sweep_valid_name(const char *s);
int sweep_valid_value(const char *s);
/* Loads and validates; errors name the file, the entry and the fix. 0 or UTIL_EINVAL. */
int sweep_space_load(struct sweep_space *s, const char *path);
void sweep_space_release(struct sweep_space *s);
/* Drops variables whose `requires` feature t lacks; expands @interfaces. New reference: [{var,
 * reason}]. */
json_t *sweep_space_prune(struct sweep_space *s, const struct topo *t, int nodes);
/*
 * New reference: a configuration's whole environment, NAME -> string: the
 * space's fixed variables (numbers written in decimal), then config's "env".
 */
json_t *sweep_space_env(const struct sweep_space *s, const json_t *config);
/* New reference: [{id, env}], the all-unset baseline first, excludes applied. */
json_t *sweep_space_configs(const struct sweep_space *s);

/* results.jsonl: the runs so far (a torn last line is cut away), or NULL on a read error. */
json_t *sweep_results_load(const char *path);
/* Appends one result line with fsync; on failure nothing of the line stays. 0 or UTIL_EIO. */
int sweep_results_append(const char *path, const json_t *result);

/* A sweep in progress; `topotune sweep` fills the first block. */
struct sweep {
    struct sweep_space space;
    const char *dir, *backend, *launcher, *hosts, *strategy, *topology, *bench;
    const char *class_id;
    /* --hosts: the hosts' mapping, their class's topology JSON, the subnet Open MPI's TCP uses */
    json_t *host_nodes;
    char *host_topology, *btl_subnet;
    char *tcp_env[3]; /* --hosts: Open MPI kept off container bridges (launch_tcp_env) */
    int nhosts;
    json_t *configs; /* [{id, env}] */
    int np, nodes, repeat;
    unsigned seed;
    double timeout_s;
    /* progress */
    json_t *results;
    int total, done, ran;
    double spent_s, best;
    char best_id[32];
};

/*
 * --hosts: maps the hosts through mpirun into host_nodes; they must be one node
 * class, whose topology is loaded into t; for the mpi backend, picks btl_subnet.
 * Returns 0, 2 (hosts of several classes) or 3 (mapping failed), after saying why.
 */
int sweep_map_hosts(struct sweep *sw, struct topo *t);

/* Measures every planned run not already in DIR/results.jsonl. 0, or UTIL_EIO (results unwritable).
 */
int sweep_run(struct sweep *sw);
/* Mean out-of-place busbw of a result over sizes in [min, max]; 0 when none. */
double sweep_objective(const json_t *result, size_t min, size_t max);
/* $TOPOTUNE_BENCH_PROGRAM, else topotune-bench next to this topotune (build or install directory),
 * else from PATH. Caller frees. */
char *sweep_bench_program(void);

#endif
