/* SPDX-License-Identifier: MIT */
/*
 * The performance model behind the sim backend and `topotune predict`, in the
 * shape of NCCL's own (src/graph/tuning.cc; docs/model.md): per algorithm and
 * protocol a latency plus bytes over bandwidth, NCCL's enable rules and
 * constants, the minimum wins. Inputs come from a topology and the
 * configuration's environment; faults of the field are predicted, not hidden.
 * Everything it returns is a prediction and is labelled so by its callers.
 */
#ifndef MODEL_MODEL_H
#define MODEL_MODEL_H

#include "topo/topo.h"
#include "tuner/tuner.h"

#include <stddef.h>
#include <stdint.h>

/*
 * The collectives nccl-tests measures, in its names: NCCL's five functions, and alltoall and
 * sendrecv, which nccl-tests makes of grouped point-to-point calls (NCCL_ALGO and NCCL_PROTO
 * do not apply to those: the model calls their path "P2P").
 */
enum model_coll {
    MODEL_ALL_REDUCE,
    MODEL_ALL_GATHER,
    MODEL_REDUCE_SCATTER,
    MODEL_BROADCAST,
    MODEL_REDUCE,
    MODEL_ALLTOALL,
    MODEL_SENDRECV,
    MODEL_NCOLLS
};
/* "all_reduce", "all_gather", ...; NULL out of range. */
const char *model_coll_name(int coll);
/* A collective by nccl-tests' name, with or without its program's "_perf", or by NCCL's
 * (AllGather, allgather: case and underscores do not matter); -1 when unknown. */
int model_coll_parse(const char *name);
/* The space-separated names, for usage messages. */
const char *model_coll_names(void);
/* Whether the collective reduces (takes a reduction op) and whether it has a root rank. */
int model_coll_reduces(int coll);
int model_coll_rooted(int coll);
/* Whether nccl-tests' size column is a part per rank times the ranks (all_gather, reduce_scatter,
 * alltoall): such a size is cut in 16-byte-aligned parts, and below 16 bytes per rank it measures
 * nothing. */
int model_coll_parts(int coll);
/* The tuner table's function of the collective (enum tuner_coll); -1 for alltoall and sendrecv
 * (NCCL asks no tuner for sends and receives) and out of range. */
int model_coll_tuner(int coll);
/*
 * nccl-tests' bus bandwidth factor (NVIDIA/nccl-tests src/<name>.cu, its GetBw): with algbw =
 * the size column / time, busbw = algbw x this: 2(n-1)/n for all_reduce, (n-1)/n for
 * all_gather, reduce_scatter and alltoall, 1 for broadcast, reduce and sendrecv.
 */
double model_coll_bus_factor(int coll, int nranks);

/* The model's name and version, recorded with every prediction (the name made from the number). */
#define MODEL_VERSION_NUMBER  19
#define MODEL_VERSION_TEXT(n) "topotune-model/" #n
#define MODEL_VERSION_OF(n)   MODEL_VERSION_TEXT(n)
#define MODEL_VERSION         MODEL_VERSION_OF(MODEL_VERSION_NUMBER)
/* The first version whose parameters mean what this one's do: a calibration file fitted by a
 * version from it to this one is read as it is. Moves to MODEL_VERSION_NUMBER when a version
 * changes what a parameter means (v7 changed how broadcast and reduce run, v8 the bandwidth of
 * local peers through the network, v9 of GPUs behind one PCIe switch through host memory, v10
 * of an even NVLink mesh, none a parameter; v11 gave a ring's time its own share of the network,
 * ring_net_scale, where net_scale had priced it: a file before v11 fitted net_scale to both;
 * v12 splits one node's send/recv pair over NCCL's p2p channels, v13 ends the tree's size
 * correction at 512 MiB as NCCL does, v14 prices a tree of one GPU per node at NCCL's 0.85,
 * v15 a one-node chain of Volta or Ampere NVLink GPUs at a hop per rank, v16 a send/recv peer
 * across nodes on NCCL's channels per peer, v17 an export's GPU link rate below gen 4 as gen 3,
 * v18 as x16 of the generation its GPU model is built for, v19 a time's tree correction
 * between powers of two; none a parameter). */
#define MODEL_PARAMS_SINCE 11

enum model_algo {
    MODEL_ALGO_TREE,
    MODEL_ALGO_RING,
    MODEL_ALGO_NVLS,
    MODEL_ALGO_NVLSTREE,
    MODEL_ALGO_PAT, /* all_gather and reduce_scatter with one GPU per node (NCCL 2.23 on) */
    MODEL_NALGOS
};
enum model_proto { MODEL_PROTO_LL, MODEL_PROTO_LL128, MODEL_PROTO_SIMPLE, MODEL_NPROTOS };

/*
 * Whether NCCL lets collective coll run algorithm algo by its rules per function
 * (src/graph/tuning.cc), whatever the hardware: Ring for NCCL's five functions, Tree for
 * all_reduce; NVLS on one node for all_reduce, all_gather and reduce_scatter, and across nodes
 * only with CollNet on; NVLSTree for all_reduce across nodes; PAT for all_gather and
 * reduce_scatter. nodes counts as NCCL counts them (model_nccl_nodes). alltoall and sendrecv,
 * made of sends and receives, run none.
 */
int model_coll_runs(int coll, int algo, int nodes, int collnet);
/* Whether nccl-tests makes the collective of grouped sends and receives (alltoall, sendrecv). */
int model_coll_p2p(int coll);

enum model_fault {
    MODEL_FAULT_NONE,
    MODEL_FAULT_HANG_INIT, /* P2P over a path where it is broken: init never returns */
    MODEL_FAULT_FAIL_INIT, /* a setting naming nothing present: init fails */
    MODEL_FAULT_FAIL_COLL, /* nothing usable left: the first collective fails */
    MODEL_FAULT_CRASH,     /* the SHM transport outgrows /dev/shm: SIGBUS at the first collective */
};

/*
 * The model's calibrated parameters: physical, shared by every system (no per-system factor).
 * model_init starts from model_params_default; a calibration file (schema
 * topotune/calibration/1, docs/model.md) replaces them.
 *  nvls_scale  NVSwitch multicast efficiency relative to NCCL's own (0.85 Hopper, 0.74
 *              Blackwell): 1 is NCCL's model
 *  fill_bytes  the Simple protocol's pipeline fill: a call of B bytes moves as if B + fill_bytes
 *              (busbw reaches half its peak at fill_bytes); 0 is NCCL's model
 *  net_scale   the fraction of the NICs' line rate a collective gets between nodes, and every
 *              algorithm in NCCL's choice of one (its tuning gives them the same network); 1 is
 *              NCCL's
 *  ring_net_scale  the same for the time of a ring or chain (NCCL's Ring: each channel streams
 *              through one NIC in large messages, where trees and NVLSTree split and merge);
 *              1 is NCCL's
 *  lat_scale   the base latency and the latency of each hop inside a node relative to NCCL's
 *              constants; 1 is NCCL's
 *  net_lat_scale  the latency of each hop between nodes relative to NCCL's; 1 is NCCL's
 *  efa_lat_us  what a hop between nodes costs on top over AWS EFA (libfabric's SRD through
 *              the aws-ofi-nccl plugin, where NCCL's constants describe InfiniBand verbs); 0
 *              is NCCL's
 *  p2p_scale   the fraction of a GPU's NVLink rate (NCCL's per link) that point-to-point
 *              transfers (alltoall, sendrecv) reach inside a node; NCCL has no such model (its
 *              send/recv are not tuned), 1 is the link rate; only alltoall and sendrecv over
 *              NVLink read it
 *  nvls_fill_bytes  NVLS's and NVLSTree's fill in place of fill_bytes, for 8 GPUs on 16
 *              channels at NCCL's 128 KiB chunk: they run an operation per channel and rank of the
 *              NVLink domain at once, in chunks NCCL shrinks to 64, 32 and 16 KiB as the bytes
 *              per operation fall, so their fill grows with the domain's ranks and shrinks with
 *              the chunk (0 is NCCL's model)
 */
struct model_params {
    double nvls_scale, fill_bytes, net_scale, lat_scale, net_lat_scale, efa_lat_us, p2p_scale,
        nvls_fill_bytes, ring_net_scale;
};
extern const struct model_params model_params_default;

struct model;
#define MODEL_NPARAMS 9
extern const char *const model_param_names[MODEL_NPARAMS]; /* as a calibration file names them */
/* Parameter k (0 .. MODEL_NPARAMS - 1, in model_param_names' order) of p. */
double *model_param(struct model_params *p, int k);

/* One measured busbw (GB/s) a fit explains: which of the models (a configuration, topology and
 * node count), at which size. */
struct model_point {
    int model;
    size_t bytes;
    double busbw;
};

/* How a fit settled parameter k. */
enum model_fit_kind {
    MODEL_FIT_DEFAULT,    /* the points do not determine it: its default, which fits as well */
    MODEL_FIT_DETERMINED, /* moving it by a tenth changes the error by 0.05 points or more */
    MODEL_FIT_BOUNDED,    /* flat where it was fitted, but its default fits worse: the points
                           * bound it (any value from lo to hi fits as well) and the fit keeps
                           * the value the descent found */
};

/* A fit's result: the parameters, how each was settled, and the errors of the fit and of the
 * defaults on the same points. */
struct model_fit {
    struct model_params params;
    enum model_fit_kind kind[MODEL_NPARAMS];
    /* MODEL_FIT_BOUNDED: the values that fit as well */
    double lo[MODEL_NPARAMS], hi[MODEL_NPARAMS];
    double error;         /* mean |relative error| (%) of params */
    double default_error; /* the same, of model_params_default */
    int points, sizes;    /* the points fitted, and how many sizes among them */
};

/* The most a parameter may move the fit's mean |error| (points of %) and still count as not
 * determined, and the most the fit's error may grow when undetermined parameters go back to their
 * defaults, all together. */
#define MODEL_FIT_TOLERANCE 0.05

/*
 * Fits the parameters to the points (model/fit.c): from the defaults, coordinate descent over a
 * fine grid of each parameter (within the ranges model_params_load takes), least mean |relative
 * error|. A parameter that moving by a tenth changes by under MODEL_FIT_TOLERANCE goes back to
 * its default only when the whole vector's error stays within MODEL_FIT_TOLERANCE of the
 * descent's and no worse than the defaults' (MODEL_FIT_DEFAULT); otherwise it is kept, and
 * MODEL_FIT_BOUNDED with the range that fits as well. So fit->error <= fit->default_error.
 * Changes models[*].params. 0, or -1 when no point can be predicted.
 */
int model_fit(struct model *models, const struct model_point *pts, int npts, struct model_fit *fit);
/* The most a fit's mean |error| may be (%) before model_fit_check calls it absurd. */
#define MODEL_FIT_ERROR_MAX 100.0
/* What a fit needs to settle parameters: this many points for each parameter it does not leave
 * at its default, and this many sizes (one size cannot tell latency, fill and bandwidth apart). */
#define MODEL_FIT_POINTS_PER_PARAM 3
#define MODEL_FIT_SIZES_MIN        3
/*
 * Whether a fit may be written as a calibration file: its errors finite, its mean |error| at most
 * MODEL_FIT_ERROR_MAX, no worse than the defaults', every parameter finite and within the range
 * model_params_load takes, and, when it settles any parameter, at least MODEL_FIT_SIZES_MIN sizes
 * and MODEL_FIT_POINTS_PER_PARAM points per parameter settled. 0, or -2 (too few points or
 * sizes) or -1 (anything else) with the reason in why (a sentence without the subject).
 */
int model_fit_check(const struct model_fit *fit, char *why, size_t len);
/* The range a calibration file may give parameter k (schema topotune/calibration/1). */
void model_param_range(int k, double *min, double *max);
/* The mean |relative error| (%) of p on the points (-1: none predicted); median and max when
 * not NULL. Changes models[*].params. */
double model_fit_error(struct model *models, const struct model_point *pts, int npts,
                       const struct model_params *p, double *median, double *max);

/* Reads a calibration file into p (untrusted: each parameter range-checked). 0, or -1 after an
 * error naming the file and the field. */
int model_params_load(struct model_params *p, const char *path);
/* p as a calibration file's "params" object (a new reference, or NULL without memory). */
struct json_t *model_params_json(const struct model_params *p);

struct model {
    int nranks, nodes, ppn, sm, amd;
    int clique; /* nodes of one NVLink domain NCCL merges into one node (nodes, ppn count them) */
    struct model_params params; /* model_params_default unless the caller sets others */
    double intra_bw;            /* GB/s per GPU around the node's ring */
    double inter_bw;            /* GB/s per node over the network (multi-node) */
    double clique_net_bw;       /* GB/s of every NIC of a clique (inter_bw before its cap to
                                 * the channels' NICs): what point-to-point traffic spreads over */
    double nic_bw;              /* GB/s of the fastest NIC */
    double net_nic_bw;          /* GB/s of the fastest NIC the network runs on (RDMA) */
    int intra_nvlink;           /* the intra-node path is NVLink (else PCI or host memory) */
    double pair_bw;             /* NVLink GB/s between the least-linked pair of GPUs, as NCCL
                                 * counts a path (through switches a GPU's own links) */
    int p2p_channels;           /* NCCL's p2p channels on a node of NVLinks */
    int net_nics;               /* the RDMA NICs of a node (of a clique: all of its nodes') */
    int p2p_net_channels;       /* NCCL's channels per peer of a send/recv across nodes */
    size_t p2p_chunk;           /* NCCL's p2p chunk on such a node (P2P_NVL_CHUNKSIZE) */
    int intra_net;              /* P2P and SHM both off: even local peers go through the network */
    double shm_busy_bw;         /* through host memory, GB/s per GPU when every GPU sends at
                                 * once (alltoall: its switch's link shared by all its GPUs); 0
                                 * when the node's GPUs do not use host memory */
    double shm_chain_bw;        /* through host memory, a chain of the node's GPUs (its last
                                 * NVLink group, or GPU, sends nothing); 0 likewise */
    int gdr_below;              /* every GPU reaches an RDMA NIC below its own PCIe switch by
                                 * GPUDirect RDMA */
    int efa;                    /* the network is AWS EFA (its hops cost efa_lat_us more) */
    int channels;               /* search channels (NCCL's C) */
    int nics_unknown;           /* network NICs of no known speed (hwloc exports record none),
                                 * priced at 10 Gb/s: across nodes no reference either */
    int gpus_unknown;           /* GPUs whose compute capability no source gave (no model
                                 * name or PCI device the catalog knows): priced as Volta, so
                                 * no reference a validator or a survey may judge against */
    int chain_hops;             /* the hops a one-node broadcast or reduce pays in time (v15); 1
                                 * across nodes, whose chains count theirs in ring_time */
    double chan_scale;          /* NCCL_MAX_CTAS below the channels NCCL would use */
    double simple_eff;          /* NCCL_BUFFSIZE's effect on the Simple pipeline */
    double net_overhead;
    int enabled[MODEL_NALGOS][MODEL_NPROTOS]; /* all_reduce's; enabled_coll for every one */
    int enabled_coll[MODEL_NCOLLS][MODEL_NALGOS][MODEL_NPROTOS];
    int ll128_unsafe; /* LL128 forced where NCCL would not enable it: corrupts data */
    enum model_fault fault;
    char why[256]; /* the fault, in words */
    /* The table of topotune's tuner plugin when the configuration loads it (NULL: none). Not
     * owned. model_predict applies its row for a size as the plugin does: the row's algorithm
     * and protocol when enabled here, else NCCL's own choice; channel counts are not modelled. */
    const struct tuner_table *table;
};

/* Where the model reads the configuration's variables (getenv, or a --env list). */
typedef const char *(*model_env_fn)(const char *name, void *ctx);
/* An environment that sets nothing: NCCL's defaults (a health check's or a cluster's reference). */
const char *model_env_none(const char *name, void *ctx);

/*
 * Prepares the model for topology t on nodes nodes (0: the topology's own
 * count) under the environment env. Returns 0, or -1 when t has no GPU.
 */
int model_init(struct model *m, const struct topo *t, int nodes, model_env_fn env, void *ctx);

/*
 * Warns (util_warning, naming source) of what m prices that t's source does not state: GPUs of
 * no model the catalog knows (priced as Volta), across nodes NICs of no stated speed (10 Gb/s)
 * or no NIC at all (sockets over a 10 Gb/s port), NVLink not described between GPUs that may
 * have it (every pair over PCIe). Said once per call: predict and compare call it per input.
 */
void model_warn_assumed(const struct model *m, const struct topo *t, const char *source);

/* The nodes NCCL counts for hosts hosts of topology t: an NVLink domain's hosts are one (48
 * GB200 trays in racks of 18: 3). */
int model_nccl_nodes(const struct topo *t, int hosts);
/* The same from the counts alone: gpus per host, the NVLink domain's GPUs (as topo's
 * nvlink_domain: at most gpus means the host), hosts (below 1: one). */
int model_nccl_nodes_of(int gpus, int nvlink_domain, int hosts);
/* The machines the ranks run on, and the GPUs of each: nodes and ppn are NCCL's view, where an
 * NVLink domain's hosts are one node (clique); a launch, a health check, a metric count hosts.
 * 48 GB200 trays in racks of 18: 48 hosts of 4 GPUs, where NCCL sees 3 nodes. */
int model_hosts(const struct model *m);
int model_gpus_per_host(const struct model *m);

struct model_prediction {
    double time_us, algbw, busbw;
    const char *algo, *proto; /* NCCL's names: "RING", "SIMPLE"... */
    int wrong;                /* the chosen protocol corrupts data here */
    int tuned;                /* a row of m->table chose the pair */
};

/* The fastest enabled algorithm and protocol for bytes, as NCCL would pick them, or the pair a row
 * of m->table forces (when enabled). 0, or -1 if none. */
int model_predict(const struct model *m, size_t bytes, struct model_prediction *p);

/*
 * The same for collective coll (enum model_coll) at nccl-tests' size bytes (its size column:
 * every rank's part for all_gather, reduce_scatter and alltoall), with busbw by nccl-tests'
 * factor. NCCL's functions follow its tuning per function: the algorithms it enables for each
 * (Ring only for broadcast and reduce; Ring, NVLS on one node and PAT with one GPU per node for
 * all_gather and reduce_scatter), their step counts and latencies. alltoall and sendrecv are
 * point-to-point: every pair's bytes over its path (NVLink or PCIe inside a node, the NICs
 * between nodes), the slowest deciding. 0, or -1 when NCCL would have no algorithm for it here.
 */
int model_predict_coll(const struct model *m, int coll, size_t bytes, struct model_prediction *p);

/*
 * The model's measured error as a band around a prediction (docs/model.md, "Bands"): where the
 * published rows of the calibration fell relative to predictions made by fits that never saw
 * their source (bench/perf/calibrate-model.py, leave-one-source-out). A healthy system measures
 * between busbw x low and busbw x high for MODEL_BAND_RATE of those rows; sizes up to
 * MODEL_BAND_SMALL bytes, where latency decides, have their own band. rows: how many rows the
 * band was cut from.
 */
#define MODEL_BAND_RATE  0.90
#define MODEL_BAND_SMALL ((size_t)4 << 20)
struct model_band {
    double low, high;
    int rows;
};
struct model_band model_band_at(size_t bytes);
/* The band of collective coll (MODEL_ALL_REDUCE...): all_reduce's is model_band_at's; the others'
 * are cut the same way from their own published rows (bench/perf/calibrate-collectives.py), in two
 * groups of rows pooled: NCCL's chains (broadcast, reduce), whose small sizes the model knows
 * least, and the rest (all_gather, reduce_scatter, alltoall, sendrecv). Any other value (-1: a
 * collective the model does not know) gets both groups' envelope. */
struct model_band model_band_for(int coll, size_t bytes);
/* The band that holds both a and b (a mix of collectives or sizes). */
struct model_band model_band_wider(struct model_band a, struct model_band b);

/* A multiplicative noise factor exp(sigma x N(0,1)) from a xorshift state (reproducible). */
double model_noise(uint64_t *state, double sigma);

/* A predicted fault in words, as predict prints it: "hang at init", "error at init", ... */
const char *model_fault_words(enum model_fault f);

const char *model_algo_name(int algo);
const char *model_proto_name(int proto);

#endif
