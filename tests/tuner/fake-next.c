/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for the tuner NCCL would load without topotune's (aws-ofi-nccl's, say), for the
 * chain scenarios: named "fake-next", exporting ncclTunerPlugin_v2..v6 (or only _v2 when built
 * with FAKE_NEXT_V2_ONLY). Every call it gets picks ring/LL with 3 channels, and is counted per
 * interface version; fake_next_counts reads the counts. With FAKE_NEXT_FAIL set, every call
 * writes its pick all the same and returns an error, as a tuner failing halfway would.
 */
#include "tuner/nccl-tuner-abi.h"

#include <stdatomic.h>
#include <stdlib.h>

/* What a getCollInfo returns: an error under FAKE_NEXT_FAIL. */
static tuner_nccl_result coll_result(void)
{
    return getenv("FAKE_NEXT_FAIL") ? TUNER_NCCL_INTERNAL_ERROR : TUNER_NCCL_SUCCESS;
}

#define EXPORT __attribute__((visibility("default")))

static atomic_int inits[7], calls[7], destroys[7], last_collnet = -1, last_nvls = -1;
static int ctx_token;

/* The support flags the last v2 call got (-1 before any). */
EXPORT void fake_next_flags(int *collnet, int *nvls);
EXPORT void fake_next_flags(int *collnet, int *nvls)
{
    *collnet = atomic_load(&last_collnet);
    *nvls = atomic_load(&last_nvls);
}

EXPORT void fake_next_counts(int version, int *i, int *c, int *d);
EXPORT void fake_next_counts(int version, int *i, int *c, int *d)
{
    *i = atomic_load(&inits[version]);
    *c = atomic_load(&calls[version]);
    *d = atomic_load(&destroys[version]);
}

__attribute__((unused)) static void pick(float **table, int num_algo, int num_proto,
                                         int *n_channels)
{
    float *t = (float *)table;
    if (t && num_algo > 1 && num_proto > 0 && t[1 * num_proto + 0] >= 0.0f) {
        for (int i = 0; i < num_algo * num_proto; i++)
            if (t[i] == 0.0f)
                t[i] = 1e-6f;
        t[1 * num_proto + 0] = 0.0f;
    }
    if (n_channels)
        *n_channels = 3;
}

static tuner_nccl_result init_v2(size_t n_ranks, size_t n_nodes, tuner_nccl_logger log,
                                 void **context)
{
    (void)n_ranks, (void)n_nodes, (void)log;
    *context = &ctx_token;
    atomic_fetch_add(&inits[2], 1);
    return TUNER_NCCL_SUCCESS;
}

static tuner_nccl_result coll_v2(void *context, tuner_nccl_func coll, size_t n_bytes, int collnet,
                                 int nvls, int pipe, int *algorithm, int *protocol, int *n_channels)
{
    (void)coll, (void)n_bytes, (void)pipe;
    if (context != &ctx_token)
        abort();
    atomic_fetch_add(&calls[2], 1);
    atomic_store(&last_collnet, collnet);
    atomic_store(&last_nvls, nvls);
    *algorithm = 1;
    *protocol = 0;
    *n_channels = 3;
    return coll_result();
}

static tuner_nccl_result destroy_v2(void *context)
{
    if (context != &ctx_token)
        abort();
    atomic_fetch_add(&destroys[2], 1);
    return TUNER_NCCL_SUCCESS;
}

EXPORT struct tuner_nccl_v2 ncclTunerPlugin_v2 = {"fake-next", init_v2, coll_v2, destroy_v2};

#ifndef FAKE_NEXT_V2_ONLY
#define OLD_INIT(v)                                                                                \
    static tuner_nccl_result init_v##v(size_t n_ranks, size_t n_nodes, tuner_nccl_logger log,      \
                                       void **context)                                             \
    {                                                                                              \
        (void)n_ranks, (void)n_nodes, (void)log;                                                   \
        *context = &ctx_token;                                                                     \
        atomic_fetch_add(&inits[v], 1);                                                            \
        return TUNER_NCCL_SUCCESS;                                                                 \
    }
#define NEW_INIT(v)                                                                                \
    static tuner_nccl_result init_v##v(                                                            \
        void **context, uint64_t id, size_t n_ranks, size_t n_nodes, tuner_nccl_logger log,        \
        struct tuner_nccl_nvl_domain_info *nvl, struct tuner_nccl_constants_v5 *k)                 \
    {                                                                                              \
        (void)id, (void)n_ranks, (void)n_nodes, (void)log, (void)nvl, (void)k;                     \
        *context = &ctx_token;                                                                     \
        atomic_fetch_add(&inits[v], 1);                                                            \
        return TUNER_NCCL_SUCCESS;                                                                 \
    }
#define COLL(v)                                                                                    \
    static tuner_nccl_result coll_v##v(void *context, tuner_nccl_func coll, size_t n_bytes,        \
                                       int pipe, float **table, int num_algo, int num_proto,       \
                                       int reg, int *n_channels)                                   \
    {                                                                                              \
        (void)coll, (void)n_bytes, (void)pipe, (void)reg;                                          \
        if (context != &ctx_token)                                                                 \
            abort();                                                                               \
        atomic_fetch_add(&calls[v], 1);                                                            \
        pick(table, num_algo, num_proto, n_channels);                                              \
        return coll_result();                                                                      \
    }
#define DESTROY(v)                                                                                 \
    static tuner_nccl_result destroy_v##v(void *context)                                           \
    {                                                                                              \
        if (context != &ctx_token)                                                                 \
            abort();                                                                               \
        atomic_fetch_add(&destroys[v], 1);                                                         \
        return TUNER_NCCL_SUCCESS;                                                                 \
    }

static tuner_nccl_result coll_v3(void *context, tuner_nccl_func coll, size_t n_bytes, int pipe,
                                 float **table, int num_algo, int num_proto, int *n_channels)
{
    (void)coll, (void)n_bytes, (void)pipe;
    if (context != &ctx_token)
        abort();
    atomic_fetch_add(&calls[3], 1);
    pick(table, num_algo, num_proto, n_channels);
    return coll_result();
}

OLD_INIT(3)
OLD_INIT(4)
NEW_INIT(5)
NEW_INIT(6)
COLL(4)
COLL(5)
COLL(6)
DESTROY(3)
DESTROY(4)
DESTROY(5)
DESTROY(6)

EXPORT struct tuner_nccl_v3 ncclTunerPlugin_v3 = {"fake-next", init_v3, coll_v3, destroy_v3};
EXPORT struct tuner_nccl_v4 ncclTunerPlugin_v4 = {"fake-next", init_v4, coll_v4, destroy_v4};
EXPORT struct tuner_nccl_v5 ncclTunerPlugin_v5 = {"fake-next", init_v5, coll_v5, destroy_v5};
static atomic_int chunk_calls;
/* NCCL 2.30's chunk-size hook: counted, and a chunk size no NCCL computes. */
static tuner_nccl_result chunk_v6(void *context, tuner_nccl_func coll, size_t n_bytes, int algo,
                                  int proto, int n_channels, size_t *chunk_size)
{
    (void)coll, (void)n_bytes, (void)algo, (void)proto, (void)n_channels;
    if (context != &ctx_token)
        abort();
    atomic_fetch_add(&chunk_calls, 1);
    *chunk_size = 12345;
    return TUNER_NCCL_SUCCESS;
}
EXPORT int fake_next_chunk_calls(void);
EXPORT int fake_next_chunk_calls(void)
{
    return atomic_load(&chunk_calls);
}
EXPORT struct tuner_nccl_v6 ncclTunerPlugin_v6 = {"fake-next", init_v6, coll_v6, destroy_v6,
                                                  chunk_v6};
#endif
