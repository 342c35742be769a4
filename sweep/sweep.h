/* SPDX-License-Identifier: MIT */
/*
 * Sweeps: search spaces (schema topotune/space/1), the supervised runs of
 * topotune-bench under a launcher, their classification, and DIR/results.jsonl
 * (append-only, fsynced, resumable). gen and compare read spaces and results
 * through this header.
 */
#ifndef SWEEP_SWEEP_H
#define SWEEP_SWEEP_H

#include "launch/launch.h"
#include "topo/topo.h"
#include "util/buf.h"

#include <jansson.h>
#include <stddef.h>

/*
 * What a space may ask for. Configurations: the product of the vars lists
 * (after pruning and @interfaces) is counted before anything is built, and a
 * larger space is refused unless the caller raises max_configs (topotune sweep
 * --max-configs). The others bound the environment of a run, the work per
 * configuration and the sizes each run measures (from 1 byte to 64G, since
 * every rank holds two buffers of the largest).
 */
#define SWEEP_MAX_CONFIGS 100000
/* The most --max-configs may raise it to; SWEEP_MAX_META_BYTES bounds it further. */
#define SWEEP_MAX_CONFIGS_LIMIT 1000000
/*
 * The largest sweep.json a reader takes (gen, compare, --resume), and the part of it the
 * configurations may fill (the rest: topology, hosts, cures): a space whose configurations would
 * write more is refused before one is built, so memory stays proportional to what can run.
 */
#define SWEEP_MAX_META_BYTES    (64u << 20)
#define SWEEP_MAX_CONFIGS_BYTES (48u << 20)
#define SWEEP_MAX_VARS          64
#define SWEEP_MAX_FIXED         256
#define SWEEP_MAX_EXCLUDES      256
#define SWEEP_MAX_SIZES         1000
#define SWEEP_MAX_BYTES         (64ULL << 30)
/*
 * What a result line may say, for the sweep that writes it (from the benchmark's events) and
 * for every reader (sweep_result_check: gen, compare, --resume) alike: a value outside is never
 * recorded (the run is an error, stage results-invalid), so no reader refuses what a sweep wrote.
 */
#define SWEEP_MAX_BUSBW   1e9  /* GB/s, busbw and algbw */
#define SWEEP_MAX_TIME_US 1e15 /* per operation */
#define SWEEP_MAX_NODES   (1 << 20)
#define SWEEP_MAX_RANKS   (1 << 24)
/* The longest sweep directory name: its runs' files are named under it on launch lines of at
 * most 1023 bytes an argument (--json=DIR/logs/NAME.jsonl). */
#define SWEEP_MAX_DIR 900

/* A search space (schema topotune/space/1). */
struct sweep_space {
    json_t *doc;  /* the file as read */
    json_t *vars; /* after pruning: NAME -> [values] */
    char *path;   /* the file's name, for messages */
    const char *backend, *dtype, *op;
    size_t min_bytes, max_bytes, obj_min, obj_max;
    size_t max_configs; /* 0: SWEEP_MAX_CONFIGS; the caller may set it after loading */
    double factor, timeout_s, cv_max;
    int repeat, iters, warmup;
    int nsizes; /* sizes each run measures */
};

/* Names [A-Z_][A-Za-z0-9_]* (MCA names carry lowercase), values [A-Za-z0-9_.,:=^/+-]* (and @ for
 * space macros) of at most SWEEP_VALUE_MAX characters: nccl.conf's NAME=VALUE line then fits
 * NCCL's 4096-byte line buffer, whose rest NCCL would read as another line (another variable). */
#define SWEEP_VALUE_MAX 255
int sweep_valid_name(const char *s);
int sweep_valid_value(const char *s);
/*
 * Loads and validates; errors name the file, the entry and the fix. Variable
 * names go through util_env_refused (a space cannot set LD_PRELOAD, PATH, ...),
 * values through sweep_valid_value; sizes, factor and counts are range-checked.
 * 0 or UTIL_EINVAL; release s after 0 (a refused space is released already: compare's
 * --space returned at once and leaked it; releasing it again is harmless).
 */
int sweep_space_load(struct sweep_space *s, const char *path);
/* The same from len bytes of data, named name in messages (the fuzz target's entry point). */
int sweep_space_load_buffer(struct sweep_space *s, const char *name, const char *data, size_t len);
void sweep_space_release(struct sweep_space *s);
/*
 * Drops variables whose `requires` feature t lacks, and NCCL variables the NCCL of t
 * (software.nccl, when known) does not read yet or no longer reads (util_env_nccl_since,
 * util_env_nccl_gone); expands @interfaces into
 * "=NAME" per interface of t whose name is a valid value (the others are left
 * out, with a warning); a value listed twice after expansion is kept once.
 * New reference: [{var, reason}].
 */
json_t *sweep_space_prune(struct sweep_space *s, const struct topo *t, int nodes);
/* After sweep_space_prune, drops a variable NCCL reads for none of collectives (names; all_reduce
 * without a workload) on nccl_nodes nodes (as NCCL counts them: an NVLink domain's hosts are
 * one, model_nccl_nodes): NCCL_PAT_ENABLE without all_gather or reduce_scatter,
 * NCCL_NVLS_CHUNKSIZE without a collective NVLS runs there (across nodes all_reduce alone,
 * unless the space sets NCCL_COLLNET_ENABLE), the point-to-point channel settings
 * (NCCL_NCHANNELS_PER_NET_PEER, NCCL_P2P_PER_CHANNEL_NET_BW) without alltoall or sendrecv.
 * Appends to pruned, as sweep_space_prune does. */
void sweep_space_prune_unused(struct sweep_space *s, const json_t *collectives, int nccl_nodes,
                              json_t *pruned);
/* After sweep_space_prune, what the version rules cannot drop, as warnings: a fixed variable the
 * NCCL of t does not read (set in every run, it changes nothing), and, when t names no NCCL
 * release, the swept variables only some releases read. For the nccl backend only (backend: the
 * sweep's, the space's or --backend). */
/* The NCCL variables every run inherits that s's "fixed" does not set, as a new object of
 * NAME: {"value": VALUE, "from": "environment" or the configuration file} (empty: none; sweep.json
 * keeps it as "inherited"). The defaults' run
 * measures them too: a shell's NCCL_ALGO=Ring made the baseline Ring's, unsaid. They are this
 * process's environment's, and for the nccl backend, whose NCCL runs here, what NCCL's
 * configuration files set (util_env_nccl: the sim predicts another machine's NCCL, the mpi
 * backend runs none: no variable of NCCL's for it). Those that name this node's devices
 * (util_env_per_node) and NCCL_DEBUG* are left out. */
json_t *sweep_space_inherited(const struct sweep_space *s, const char *backend);
/* inherited as NAME=VALUE words (a file's with it in parentheses), or NULL for none (or not an
 * object); the caller frees it. */
char *sweep_inherited_text(const json_t *inherited);
void sweep_space_version_warnings(const struct sweep_space *s, const struct topo *t,
                                  const char *backend);
/*
 * New reference: a configuration's whole environment, NAME -> string: the
 * space's fixed variables (numbers written in decimal), then config's "env".
 */
json_t *sweep_space_env(const struct sweep_space *s, const json_t *config);
/* The combinations of values of the (pruned) vars lists, before excludes: what configs would build.
 */
double sweep_space_count(const struct sweep_space *s);
/*
 * New reference: [{id, env}], the all-unset baseline first, excludes applied;
 * NULL, after an error naming the count and the override, when
 * sweep_space_count is above max_configs, or when the configurations would take
 * more than SWEEP_MAX_CONFIGS_BYTES of sweep.json (counted before any is built).
 */
json_t *sweep_space_configs(const struct sweep_space *s);
/* A configuration's id from its environment (NAME -> value): 12 hex digits, stable. */
void sweep_config_id(const json_t *env, char out[16]);
/*
 * The last gate before a child: every variable of every configuration's
 * environment (fixed included) passes util_env_refused and sweep_valid_value.
 * 0, or UTIL_EINVAL after an error naming the configuration and variable.
 */
int sweep_configs_check(const struct sweep_space *s, const json_t *configs);

/* DIR/results.jsonl is a JSON Lines journal, one run per line (util/jsonl.h): sweep --resume,
 * the directory's owner, repairs a torn last line; every other reader leaves it out. */

/* A sweep in progress; `topotune sweep` fills the first block. */
struct sweep {
    struct sweep_space space;
    const char *dir, *backend, *launcher, *hosts, *strategy, *topology, *bench;
    const char
        *calibration; /* sim: the model's parameters for every run (absolute path), or NULL */
    json_t *calibration_params; /* its parameters, recorded in sweep.json; NULL: the defaults */
    const char *class_id;
    /* --hosts: the hosts' mapping, their class's topology JSON, the subnet Open MPI's TCP uses */
    json_t *host_nodes;
    char *host_topology, *btl_subnet;
    /* --hosts: Open MPI kept off container bridges and on IPv4 (launch_tcp_env) */
    char *tcp_env[LAUNCH_TCP_ENV_MAX + 1];
    int nhosts;
    json_t *configs; /* [{id, env}]; rebuilt with the cures when the defaults failed at init */
    /* --workload (topotune/workload/1), or NULL: each run is then one topotune-bench per
     * collective of the workload, and its objective the workload's (sweep_workload_view) */
    json_t *workload;
    json_t *views;          /* the workload views sweep_measure returned, owned here */
    const json_t *ref_view; /* the defaults' first ok view (in views): what the strategies hold
                               a workload run against, as gen does */
    json_t *cures; /* what sweep_run added because the defaults failed: [{vars, evidence}] */
    int no_cures;  /* --no-cures: the space as it is, even when the defaults fail */
    int np, nodes, repeat;
    int ranks; /* every run's ranks, as far as the sweep knows them (0: unknown) */
    unsigned seed;
    double timeout_s;
    /* progress */
    json_t *results;
    int total, done, ran;
    double spent_s, best;
    char best_id[32];
    char cut[64]; /* the run a signal cut (sweep_run returned UTIL_EINTR), else "" */
};

/*
 * --hosts: maps the hosts through mpirun into host_nodes; they must be one node
 * class, whose topology is loaded into t; for the mpi backend, picks btl_subnet.
 * Returns 0, UTIL_EINVAL (hosts of several classes) or UTIL_EENV (a host could not be mapped,
 * or the hosts share no subnet), after saying why.
 */
int sweep_map_hosts(struct sweep *sw, struct topo *t);

/*
 * Measures every planned run not already in DIR/results.jsonl. 0, UTIL_EINVAL
 * (a configuration sets a variable sweep_configs_check refuses: nothing ran),
 * or UTIL_EIO (results unwritable, or a run's events and log could not be
 * written: that run is not recorded, so --resume runs it again), or UTIL_EINTR:
 * a SIGINT, SIGTERM or SIGHUP came (util_child_interrupted names it); the run in
 * progress (sw->cut) was killed with its whole process group and waited for,
 * and is not recorded. Its children die with this process (util_child_supervise),
 * and DIR/sweep.pid names the group of the run in progress.
 */
int sweep_run(struct sweep *sw);

/*
 * The entry every run of the sweep of dir carries in its environment,
 * "TOPOTUNE_SWEEP_RUN=DEV:INODE" of the directory, into out: what a later sweep
 * of dir checks before it signals a process that DIR/sweep.pid names (a file
 * anyone may have written). Returns 0, or UTIL_EIO when dir cannot be stat'ed.
 */
int sweep_run_marker(const char *dir, char *out, size_t len);
/* Mean out-of-place busbw of a result over sizes in [min, max]; 0 when none. A workload view
 * (sweep_workload_view) carries its own objective, which this returns. */
double sweep_objective(const json_t *result, size_t min, size_t max);

/*
 * Workloads. A workload sweep measures each configuration with one topotune-bench run per
 * collective the workload weights (-C, its sizes from the smallest to the largest the
 * workload gives it, doubling), each recorded as its own results line with "collective".
 * A run's view joins the lines of one configuration, rep and rung: its outcome is the first
 * collective's that was not ok, and its objective the workload's effective algbw, in GB/s:
 * sum(weight) / sum(weight / algbw(collective, size)), which is the job's bytes over its time
 * when the weights are each (collective, size)'s share of the bytes (topotune workload's).
 */
/* The collectives a workload weights, in the order they first appear (a new array of names). */
json_t *sweep_workload_collectives(const json_t *workload);
/* The smallest and largest size the workload gives coll (0, 0: none). */
void sweep_workload_sizes(const json_t *workload, const char *coll, size_t *min, size_t *max);
/* The largest size of a run doubling from min whose size as run reaches *max (raised to it): the
 * run rounds each size down to whole units (unit: 4 for whole floats, 16 x ranks where every
 * rank gets a 16-byte part). Every size the workload weights then lies between two measured
 * ones, interpolated, not extrapolated from below (1000 B from 512 B read twice its time). Left
 * as it is past WORKLOAD_MAX_SIZE. */
void sweep_workload_grid(size_t min, size_t *max, size_t unit);
/*
 * What gen rejects: a (collective, size) of the workload that carries weight (all but the
 * lightest entries, which together take at most SWEEP_WORKLOAD_SHARE of the workload's time
 * under the reference runs: a size with a billionth of the bytes does not veto a
 * configuration) where the runs' mean time is longer than
 * the reference's beyond the noise: by more than margin (the space's cv_max) and by more than
 * util_family_sigmas(entries judged) standard errors of the difference of the two means (3 at
 * least), the run-to-run spread pooled over the entries and both sets (no spread without
 * repeats: the margin alone). 1 with *out the first such entry (borrowed), else 0.
 */
#define SWEEP_WORKLOAD_SHARE 0.01
struct sweep_slowdown {
    const json_t *entry;
    double base_us, time_us, bar; /* the means and the change (relative) held to */
};
struct sweep_times;
int sweep_workload_slows(const json_t *workload, const struct sweep_times *runs,
                         const struct sweep_times *base, double margin, struct sweep_slowdown *out);
/* Warns when the workload's calls came from communicators of another size than the sweep's
 * ranks and it weights all_gather, reduce_scatter or alltoall (whose sizes are a rank's part
 * times the ranks: the sweep runs parts of another size). */
void sweep_workload_ranks(const json_t *workload, int ranks);
/* The same for one run view against the reference view (the defaults'), as a strategy asks:
 * what gen rejects, so no strategy should keep it. */
int sweep_workload_slower(const json_t *workload, const json_t *view, const json_t *ref,
                          double margin);
/* The ok runs among views (workload views: {outcome, parts}), each collective's line read once
 * for many sizes: sweep_times_mean is the mean over them of each line's time (us) of its
 * out-of-place operation at size (log-log between the measured sizes around it, the nearest
 * measured size's beyond them; -1: none measured it),
 * at the cost of a bisection, where reading every line again for each of 100,000 entries and each
 * configuration took minutes. Free with sweep_times_free. */
struct sweep_times *sweep_times_of(const json_t *views);
double sweep_times_mean(const struct sweep_times *times, const char *coll, size_t size);
void sweep_times_free(struct sweep_times *times);
/* A view of parts (collective -> results line, borrowed): a new object {config_id, env, rep,
 * rung, final, outcome, stage, objective, wall_s, sizes (the all_reduce part's, or none),
 * parts}. */
json_t *sweep_workload_view(const json_t *workload, json_t *parts);
/* Every view of a workload sweep's results lines (a run missing a collective is left out), in
 * one pass; lines that carry a "sweep" name (gen's, when it reads several) join their own
 * sweep's lines only. */
json_t *sweep_workload_views(const json_t *workload, const json_t *results);
/* The run a results line belongs to, as text: its sweep (the "sweep" name gen adds, or none),
 * configuration, repetition and rung; a workload run's lines (one per collective) share it. */
void sweep_run_key(const json_t *line, char *key, size_t len);
/* Each run's outcome by its key (sweep_run_key), as a new object: a workload run is ok only
 * when every line of it is, else its first other outcome. Runs are counted so, not lines. */
json_t *sweep_run_outcomes(const json_t *lines);
/*
 * A sweep directory as gen and compare read it (untrusted): sweep.json and every
 * results line checked for the fields they use (sweep_meta_check,
 * sweep_result_check). Returns 0 with two new references, or an error code
 * after a message naming the file, the line and the field.
 */
int sweep_load_dir(const char *dir, json_t **meta, json_t **results);
/* 0, or UTIL_EINVAL after an error naming path (and line, for a result) and the field. */
int sweep_meta_check(const json_t *meta, const char *path);
int sweep_result_check(const json_t *result, const char *path, size_t line);

/* $TOPOTUNE_BENCH_PROGRAM, else topotune-bench next to this topotune (build or install directory),
 * else from PATH. Caller frees. */
char *sweep_bench_program(void);

#endif
