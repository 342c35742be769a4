/* SPDX-License-Identifier: MIT */
/*
 * NCCL's tuner plugin interface as this plugin implements it: our own declarations of the
 * structures NCCL looks up in a tuner library and of the functions they point to, written from
 * the layout NCCL's sources use (no NCCL header is included or copied; names are ours).
 *
 * Where each layout was established (github.com/NVIDIA/nccl, by tag and path):
 *   - v2: v2.21.5-1 src/include/nccl_tuner.h (the only version 2.21 resolves, src/misc/tuner.cc
 *     looks up "ncclTunerPlugin_v2" alone); unchanged in v2.30.7-1
 *     src/include/plugin/tuner/tuner_v2.h.
 *   - v3: v2.22.3-1 src/include/nccl_tuner.h and src/misc/tuner.cc (tries v3, then v2).
 *   - v4: v2.24.3-1 src/include/nccl_tuner.h and src/misc/tuner.cc (v4, v3, v2); from v2.26.2-1
 *     on the same layouts live in src/include/plugin/tuner/tuner_v{2,3,4}.h, loaded by
 *     src/plugin/tuner.cc and src/plugin/tuner/tuner_v{2,3,4}.cc.
 *   - v5: v2.28.3-1 src/include/plugin/tuner/tuner_v5.h and src/plugin/tuner.cc (v5, v4, v3,
 *     v2); identical (whitespace aside) in v2.28.9-1, v2.29.7-1 and v2.30.7-1.
 *   - v6: v2.30.3-1 src/include/plugin/tuner/tuner_v6.h and src/plugin/tuner.cc (v6, v5, v4,
 *     v3, v2); unchanged in v2.30.7-1. No 2.29 release has v6.
 *   - The cost table: src/enqueue.cc of every tag above declares a local
 *     float collCostTable[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS] and passes it cast to float**,
 *     so the float** is really the address of that contiguous row-major array: entry (a, p) is
 *     ((float *)table)[a * numProto + p]. Dereferencing it as an array of row pointers (what the
 *     example plugin did up to 2.29) reads the costs as pointers. numAlgo is 6 up to 2.22
 *     (no PAT) and 7 from v2.23.4-1; numProto is 3. Entries NCCL rules out hold -1.0
 *     (NCCL_ALGO_PROTO_IGNORE); topoGetAlgoInfo then takes the first strictly smallest entry
 *     that is >= 0, in algorithm-major order. *nChannels arrives as 0, meaning "NCCL's count".
 *   - Index values (src/include/nccl_common.h up to 2.25, src/include/plugin/nccl_tuner.h
 *     after): algorithms TREE 0, RING 1, COLLNET_DIRECT 2, COLLNET_CHAIN 3, NVLS 4, NVLS_TREE 5,
 *     PAT 6; protocols LL 0, LL128 1, SIMPLE 2; collectives (ncclFunc_t) Broadcast 0, Reduce 1,
 *     AllGather 2, ReduceScatter 3, AllReduce 4 (higher values are point-to-point and newer
 *     operations, never tuned by a table).
 *   - The logger (ncclDebugLogger_t) and its level and subsystem values: src/include/
 *     nccl_common.h, v2.21.5-1 to v2.30.7-1: WARN 2, INFO 3; INIT 0x1, TUNING 0x40; NCCL's own
 *     WARN() passes every subsystem bit (NCCL_ALL, ~0). ncclResult_t: src/nccl.h.in, success 0.
 *   - How NCCL calls the functions: src/init.cc (init after the topology search, before the
 *     model is built; destroy/finalize when the communicator is freed; an init error fails
 *     communicator creation) and src/enqueue.cc (getCollInfo per collective; an error fails
 *     the collective). So this plugin never returns an error.
 */
#ifndef TUNER_NCCL_TUNER_ABI_H
#define TUNER_NCCL_TUNER_ABI_H

#include <stddef.h>
#include <stdint.h>

/* ncclResult_t: an int-sized enum; only success is ever returned. */
typedef enum { TUNER_NCCL_SUCCESS = 0, TUNER_NCCL_INTERNAL_ERROR = 3 } tuner_nccl_result;

/* ncclDebugLogLevel and the ncclDebugLogSubSys bits this plugin logs under. */
typedef enum {
    TUNER_NCCL_LOG_NONE = 0,
    TUNER_NCCL_LOG_VERSION = 1,
    TUNER_NCCL_LOG_WARN = 2,
    TUNER_NCCL_LOG_INFO = 3,
    TUNER_NCCL_LOG_ABORT = 4,
    TUNER_NCCL_LOG_TRACE = 5,
} tuner_nccl_log_level;

#define TUNER_NCCL_SUBSYS_INIT   0x1UL
#define TUNER_NCCL_SUBSYS_TUNING 0x40UL
#define TUNER_NCCL_SUBSYS_ALL    (~0UL)

/* ncclDebugLogger_t: NCCL's own logging function; it filters by NCCL_DEBUG and
 * NCCL_DEBUG_SUBSYS before formatting. `where` is a function or file name. The format
 * attribute is ours (it changes no ABI) so that the compiler checks every call. */
typedef void (*tuner_nccl_logger)(tuner_nccl_log_level level, unsigned long subsys,
                                  const char *where, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* ncclFunc_t (passed by value as an int-sized enum). */
typedef int tuner_nccl_func;

/* The cost-table value of an algorithm/protocol pair NCCL will not use. */
#define TUNER_NCCL_ALGO_PROTO_IGNORE (-1.0f)

/* v5/v6 init: the NVLink domains of the communicator (three ints), read-only here. */
struct tuner_nccl_nvl_domain_info {
    int n_domains;
    int min_ranks_per_domain;
    int max_ranks_per_domain;
};

/* v5/v6 init: NCCL's model constants, which a plugin may rewrite before the model is built.
 * This plugin never touches them; the layout (all doubles, in this order) is declared so that
 * tests can hand in a realistic block and check it comes back unchanged. Dimensions:
 * 7 algorithms, 3 protocols, 3 hardware link kinds, 4 compute-capability rows, 3 node scales. */
struct tuner_nccl_constants_v5 {
    double base_latencies[7][3];
    double hw_latencies[3][7][3];
    double ll_max_bws[4][3];
    double per_ch_max_ring_ll128_bws[4][3];
    double per_ch_max_tree_ll128_bws[4][3];
    double per_ch_max_tree_bws[4][3];
    double per_ch_max_nvls_tree_bws[4][3];
};

/* v2 (NCCL 2.21; 2.22 to 2.30 still accept it): no cost table, NCCL takes the algorithm and
 * protocol the plugin writes (left at -1 = NCCL decides) without checking them. */
struct tuner_nccl_v2 {
    const char *name;
    tuner_nccl_result (*init)(size_t n_ranks, size_t n_nodes, tuner_nccl_logger log,
                              void **context);
    tuner_nccl_result (*get_coll_info)(void *context, tuner_nccl_func coll, size_t n_bytes,
                                       int collnet_support, int nvls_support, int num_pipe_ops,
                                       int *algorithm, int *protocol, int *n_channels);
    tuner_nccl_result (*destroy)(void *context);
};

/* v3 (NCCL 2.22, 2.23): the cost table replaces the algorithm/protocol outputs. */
struct tuner_nccl_v3 {
    const char *name;
    tuner_nccl_result (*init)(size_t n_ranks, size_t n_nodes, tuner_nccl_logger log,
                              void **context);
    tuner_nccl_result (*get_coll_info)(void *context, tuner_nccl_func coll, size_t n_bytes,
                                       int num_pipe_ops, float **cost_table, int num_algo,
                                       int num_proto, int *n_channels);
    tuner_nccl_result (*destroy)(void *context);
};

/* v4 (NCCL 2.24 to 2.27): v3 plus regBuff (user buffers registered) before n_channels. */
struct tuner_nccl_v4 {
    const char *name;
    tuner_nccl_result (*init)(size_t n_ranks, size_t n_nodes, tuner_nccl_logger log,
                              void **context);
    tuner_nccl_result (*get_coll_info)(void *context, tuner_nccl_func coll, size_t n_bytes,
                                       int num_pipe_ops, float **cost_table, int num_algo,
                                       int num_proto, int reg_buff, int *n_channels);
    tuner_nccl_result (*destroy)(void *context);
};

/* v5 (NCCL 2.28, 2.29): init takes the context first, the communicator id, the NVLink domain
 * info and the model constants; destroy is named finalize. getCollInfo as v4. */
struct tuner_nccl_v5 {
    const char *name;
    tuner_nccl_result (*init)(void **context, uint64_t comm_id, size_t n_ranks, size_t n_nodes,
                              tuner_nccl_logger log, struct tuner_nccl_nvl_domain_info *nvl,
                              struct tuner_nccl_constants_v5 *constants);
    tuner_nccl_result (*get_coll_info)(void *context, tuner_nccl_func coll, size_t n_bytes,
                                       int num_pipe_ops, float **cost_table, int num_algo,
                                       int num_proto, int reg_buff, int *n_channels);
    tuner_nccl_result (*finalize)(void *context);
};

/* v6 (NCCL 2.30): v5 plus an optional chunk-size hook at the end; NCCL skips it when NULL. */
struct tuner_nccl_v6 {
    const char *name;
    tuner_nccl_result (*init)(void **context, uint64_t comm_id, size_t n_ranks, size_t n_nodes,
                              tuner_nccl_logger log, struct tuner_nccl_nvl_domain_info *nvl,
                              struct tuner_nccl_constants_v5 *constants);
    tuner_nccl_result (*get_coll_info)(void *context, tuner_nccl_func coll, size_t n_bytes,
                                       int num_pipe_ops, float **cost_table, int num_algo,
                                       int num_proto, int reg_buff, int *n_channels);
    tuner_nccl_result (*finalize)(void *context);
    tuner_nccl_result (*get_chunk_size)(void *context, tuner_nccl_func coll, size_t n_bytes,
                                        int algorithm, int protocol, int n_channels,
                                        size_t *chunk_size);
};

/* The names NCCL resolves with dlsym, newest first: 2.30 tries v6 then v5..v2; 2.28 and 2.29
 * v5..v2; 2.24 to 2.27 v4..v2; 2.22 and 2.23 v3, v2; 2.21 v2 only. */
#define TUNER_NCCL_SYMBOL_V2 "ncclTunerPlugin_v2"
#define TUNER_NCCL_SYMBOL_V3 "ncclTunerPlugin_v3"
#define TUNER_NCCL_SYMBOL_V4 "ncclTunerPlugin_v4"
#define TUNER_NCCL_SYMBOL_V5 "ncclTunerPlugin_v5"
#define TUNER_NCCL_SYMBOL_V6 "ncclTunerPlugin_v6"

#endif
