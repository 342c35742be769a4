/* SPDX-License-Identifier: MIT */
/*
 * Characterizing a cluster: which nodes and links are not like the others. A survey maps every
 * node, then measures all_reduce busbw (one size) in launches of many small communicators at
 * once: each node alone, then rounds of disjoint node pairs (random perfect matchings, then
 * focused rounds on the suspects: a repeat of each slow pair, and each node below its class
 * with partners of the healthy population it has not met), then the whole cluster.
 *
 * Verdicts are drawn within a node class against a level the slow nodes cannot drag down,
 * however many they are (survey_level_of in internal.h): alone, of each node's busbw; in pairs,
 * of each node's capacity, fitted jointly over all pairs (a pair runs at its slower node's
 * speed: the capacity is the median of its pairs with partners no slower than itself). Each
 * verdict carries its evidence: node-unreachable (no answer to the map), node-differs (its class
 * lost a part, fewer GPUs, NICs or NVLinks, next to a class of its GPU model at least twice its
 * size, or differs from --expect), node-fails (fails alone), node-slow (slow alone, then slow
 * again in a measurement up to 8 times longer, or slow in pairs with its shortfall alone at
 * least half that in pairs: a CPU-starved host is the node, whatever its pairs say), link-fails
 * and link-slow (fine alone, but failing with two thirds of its partners, or slow with two
 * partners or more, one of them healthy: its NIC, cable or switch port), path-slow and path-fails
 * (a pair slow or failing on every measurement while both nodes are fine: a route between them;
 * such a pair is found only when measured, so --pairs all for small clusters), and
 * class-too-spread (a class whose values back no level: its nodes are not called healthy; or,
 * where the noise hides twice the tolerance, its nodes short of the tolerance but within the
 * noise), and class-below-expected (where the model predicts the class: its nodes together measure
 * alone below the band a healthy node gives, or in pairs both their level and their median pair
 * are below the band of two, the fabric and not a node; it excludes none). Every
 * verdict but a path and class-below-expected excludes its nodes. A launch that fails or hangs is
 * bisected into halves until the failing group is found; the halves' values (a lighter load) locate
 * it and stay out of the levels.
 *
 * Measurements come from a probe: real launches of topotune-bench --split under mpirun or srun
 * (survey/probe-launch.c), or a simulated cluster file (survey/probe-sim.c, the model's
 * predictions with injected faults). Every launch is appended to DIR/launches.jsonl (fsynced);
 * `--resume` replays the recorded ones, since the plan is a function of the seed and the numbers.
 */
#ifndef SURVEY_SURVEY_H
#define SURVEY_SURVEY_H

#include "util/buf.h"

#include <jansson.h>

/* What one launch measures: a node alone (b < 0) or a pair of nodes (indices into nodes). */
struct survey_group {
    int a, b;
};

struct survey;

/* Where numbers come from. Each call is one launch; busbw in GB/s per group. */
struct survey_probe {
    const char *name; /* "mpi", "nccl" or "sim" */
    int predicted;    /* every number is a prediction (sim) */
    int per_class;    /* a launch holds one class's groups (nccl: a rank per GPU of that class) */
    /*
     * Maps the nodes: fills each node's class_id, or leaves it NULL and sets its `why` when the
     * node did not answer within its deadline; may run doctor on the mapped nodes (s->doctor).
     * 0, or an error code that ends the survey (UTIL_EINTR: a signal came).
     */
    int (*map)(struct survey *s);
    /*
     * Measures every group at once, a communicator per group. 0 with busbw[i] for each group;
     * 1 when the launch failed or hung (no numbers; `why` says how, naming hosts when the
     * launcher did); or an error code that ends the survey (a signal came: UTIL_EINTR).
     */
    int (*groups)(struct survey *s, const struct survey_group *g, int n, double *busbw,
                  struct util_buf *why);
    /* The listed nodes as one communicator: 0 with *busbw, 1 failed, or an error code. */
    int (*whole)(struct survey *s, const int *nodes, int n, double *busbw, struct util_buf *why);
    /* busbw the model predicts for n nodes of class_id at the survey's size, or -1 (no model). */
    double (*predict)(struct survey *s, const char *class_id, int n);
    /* Seconds one launch of n groups would take (predicted for the sim; 0: measured). */
    double (*launch_s)(struct survey *s, int n);
    /* The timed operations of a launch and the most seconds they may take together (the
     * benchmark's -n and -T); 0: not bounded (the sim). */
    int iters;
    double timed_max_s;
    void (*release)(struct survey *s);
    void *ctx;
};

struct survey_node {
    char *host;       /* as the user (or the allocation) names it: what the launcher reaches */
    char *name;       /* as the node names itself (gethostname): what --split matches */
    char *class_id;   /* NULL: not mapped */
    char why[256];    /* why not mapped, or why it failed */
    double intra;     /* busbw alone, GB/s; -1: failed; 0: not measured */
    double intra_rep; /* the repeat of a suspect or of a reference beside it; 0: none */
    int verdict;      /* its node verdict: index into verdicts + 1, 0: none (links name two
                         hosts and exclude neither) */
    int on_path;      /* a path verdict names it (and excludes it not) */
    int *pair_index;  /* its pair measurements (indices into pairs) */
    int npairs, pairs_cap;
};

/* One pair measurement. */
struct survey_pair {
    int a, b;
    double busbw; /* -1: failed */
    int round;
    int focused;  /* measured in a focused round: 1 a slow pair's repeat, 2 a focus round's */
    int bisected; /* measured in a half of a failed launch, under lighter load: it locates the
                     failure, the statistics leave it out */
};

struct survey {
    /* set by the caller */
    struct survey_node *nodes;
    int nnodes;
    struct survey_probe probe;
    const char *dir; /* output directory (created by the caller) */
    const char *backend;
    size_t size; /* bytes per all_reduce */
    unsigned seed;
    int matchings;    /* random perfect matchings before the focused rounds (default 3) */
    int all_pairs;    /* --pairs all: every pair of a class, in n-1 rounds */
    double tolerance; /* least relative shortfall called slow (default 0.15) */
    int max_groups;   /* groups measured at once, at most (0: a whole round in one launch) */
    int resume;
    json_t *settings; /* the options the numbers depend on ({"ppn": 8, ...}), recorded with every
                         launch: --resume refuses a record made with others (owned: released) */
    json_t *expect;   /* --expect: {id, key} of the hardware every node should be, or NULL */
    /* set by the probe's map: class id -> the class's key (topology "class"."key") */
    json_t *class_keys;
    /* results */
    struct survey_pair *pairs;
    int npairs, pairs_cap;
    json_t *verdicts; /* [{kind, hosts, evidence, text}] */
    json_t *whole;    /* [{nodes, busbw, predicted_busbw, outcome}] */
    json_t *classes; /* class_id -> {nodes, alone_median, alone_spread, pair_median, pair_spread} */
    json_t *doctor;  /* {checks: across-node checks, nodes: {host: [failed check names]}}, or
                        NULL when not run (the sim) */
    int rounds;      /* launches made (or replayed) */
    int launches_failed;
    double wall_s; /* measured, or predicted for the sim */
    /* internal */
    json_t *recorded; /* launches.jsonl on --resume */
    int longer;       /* the launch being made times this many operations (0: as set), so that a
                         hiccup of the machine weighs less: the repeat of suspects alone */
    size_t replayed;
    unsigned long long rng;
};

/* --pairs all measures n(n-1)/2 pairs in n-1 launches: it takes at most this many nodes. */
#define SURVEY_ALL_PAIRS_MAX 512

/* Fills the defaults of the settable fields that are 0. */
void survey_defaults(struct survey *s);

/* 0, or UTIL_EINVAL after an error when --pairs all is asked of more than SURVEY_ALL_PAIRS_MAX
 * nodes (the allocation's, once mapped). */
int survey_check_all_pairs(const struct survey *s);

/*
 * The whole survey: map, nodes alone, pair rounds, focused rounds, verdicts, the whole cluster.
 * 0, UTIL_EINTR (a signal came: what was measured is kept), UTIL_EENV (the nodes could not be
 * mapped), or another error code.
 */
int survey_run(struct survey *s);

/*
 * DIR/survey.json (docs/schemas/survey.schema.json), DIR/healthy.hostfile (the nodes without a
 * verdict, one per line, for mpirun --hostfile and sbatch --nodelist), DIR/excluded.txt (host,
 * verdict, evidence), and the reports DIR/report.txt, report.md and report.html. 0 or UTIL_EIO.
 */
int survey_write(struct survey *s);

void survey_release(struct survey *s);

/* Probes. Each returns 0 or an error code after a message naming the file, field and fix. */

/*
 * A simulated cluster (schema topotune/sim-cluster/1): nodes of specs, injected faults (slow-node,
 * slow-link: a node's network link, slow-path: between two nodes, dead: no answer, hang: answers
 * the map but hangs in a collective) and noise. Fills s->nodes.
 */
int survey_probe_sim(struct survey *s, const char *cluster_file);

/* Real launches of topotune-bench --split (backend mpi or nccl) under mpirun (hosts) or srun. */
struct survey_launch {
    const char *launcher; /* "mpirun" or "srun" */
    const char *bench;    /* the topotune-bench program */
    int ppn;              /* ranks per node */
    int iters, warmup;
    double timeout_s; /* a launch's deadline */
};
int survey_probe_launch(struct survey *s, const struct survey_launch *l);

#endif
