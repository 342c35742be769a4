/* SPDX-License-Identifier: MIT */
/*
 * A tuner that chains to another one itself, as a site's wrapper tuner might: its init opens the
 * library FAKE_CYCLE_NEXT names and runs that library's v6 init inside its own. Named there
 * after topotune's, it closes a cycle (topotune -> this -> topotune -> ...), for the chain
 * scenario: the loop must end, not overflow the stack.
 */
#include "tuner/nccl-tuner-abi.h"

#include <dlfcn.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

struct cycle_ctx {
    void *lib;
    const struct tuner_nccl_v6 *next;
    void *next_ctx;
};

static tuner_nccl_result init_v6(void **context, uint64_t id, size_t n_ranks, size_t n_nodes,
                                 tuner_nccl_logger log, struct tuner_nccl_nvl_domain_info *nvl,
                                 struct tuner_nccl_constants_v5 *k)
{
    struct cycle_ctx *c = calloc(1, sizeof(*c));
    const char *name = getenv("FAKE_CYCLE_NEXT");
    if (!c)
        return TUNER_NCCL_INTERNAL_ERROR;
    *context = c;
    if (name && (c->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) &&
        (c->next = dlsym(c->lib, "ncclTunerPlugin_v6")))
        return c->next->init(&c->next_ctx, id, n_ranks, n_nodes, log, nvl, k);
    return TUNER_NCCL_SUCCESS;
}

static tuner_nccl_result coll_v6(void *context, tuner_nccl_func coll, size_t n_bytes, int pipe,
                                 float **table, int num_algo, int num_proto, int reg,
                                 int *n_channels)
{
    struct cycle_ctx *c = context;
    if (c->next)
        return c->next->get_coll_info(c->next_ctx, coll, n_bytes, pipe, table, num_algo, num_proto,
                                      reg, n_channels);
    return TUNER_NCCL_SUCCESS;
}

static tuner_nccl_result finalize_v6(void *context)
{
    struct cycle_ctx *c = context;
    if (c->next)
        c->next->finalize(c->next_ctx);
    if (c->lib)
        dlclose(c->lib);
    free(c);
    return TUNER_NCCL_SUCCESS;
}

EXPORT struct tuner_nccl_v6 ncclTunerPlugin_v6 = {"fake-cycle", init_v6, coll_v6, finalize_v6,
                                                  NULL};
