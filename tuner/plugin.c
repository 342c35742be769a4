/* SPDX-License-Identifier: MIT */
/* The NCCL tuner plugin: the exported interface structures and the per-communicator decisions. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr, RTLD_DEFAULT, RTLD_NOLOAD */
#endif
#include "tuner/nccl-tuner-abi.h"
#include "tuner/tuner.h"

#include <dlfcn.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TUNER_EXPORT __attribute__((visibility("default")))

/* One communicator's state: written by init only, read by every call, freed by destroy. */
struct tuner_ctx {
    tuner_nccl_logger log;
    uint64_t nodes, ranks;
    int in_use;               /* the table loaded and fits this job */
    int v2_env_algos;         /* NCCL_ALGO or NCCL_PROTO set: v2 applies nothing */
    struct tuner_rule *rules; /* the rows for these nodes and ranks, grouped by collective */
    size_t first[TUNER_NUM_COLLS], count[TUNER_NUM_COLLS];
};

#define LOG(ctx, level, subsys, ...)                                                               \
    do {                                                                                           \
        if ((ctx)->log)                                                                            \
            (ctx)->log(level, subsys, __func__, __LINE__, __VA_ARGS__);                            \
    } while (0)
#define WARN(ctx, ...) LOG(ctx, TUNER_NCCL_LOG_WARN, TUNER_NCCL_SUBSYS_ALL, __VA_ARGS__)
#define INFO(ctx, ...)                                                                             \
    LOG(ctx, TUNER_NCCL_LOG_INFO, TUNER_NCCL_SUBSYS_INIT | TUNER_NCCL_SUBSYS_TUNING, __VA_ARGS__)
#define TUNING(ctx, ...) LOG(ctx, TUNER_NCCL_LOG_INFO, TUNER_NCCL_SUBSYS_TUNING, __VA_ARGS__)

/*
 * The version of the NCCL that loaded us, as a code, or 0 when it cannot be told. The logger
 * NCCL hands in lives in the NCCL library itself, so ncclGetVersion is looked up there first:
 * that works when NCCL was loaded RTLD_LOCAL (PyTorch) or is linked into a larger library.
 */
static unsigned nccl_version(tuner_nccl_logger log)
{
    typedef int (*get_version_fn)(int *);
    get_version_fn get = NULL;
    void *lib = NULL;
    Dl_info where;
    if (log && dladdr((void *)log, &where) && where.dli_fname && where.dli_fname[0])
        lib = dlopen(where.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (lib)
        get = (get_version_fn)dlsym(lib, "ncclGetVersion");
    if (!get)
        get = (get_version_fn)dlsym(RTLD_DEFAULT, "ncclGetVersion");
    int code = 0;
    if (!get || get(&code) != TUNER_NCCL_SUCCESS || code <= 0)
        code = 0;
    if (lib)
        dlclose(lib);
    return (unsigned)code;
}

/*
 * s as NCCL's log may show it: printable ASCII, every other byte '?'. The table's path, its class
 * and a loader error quote a file and the environment; an escape sequence of theirs must not
 * reach the terminal that shows NCCL's log, nor a newline a line of its own. (The plugin links
 * nothing of topotune's util/: this is the small local form of util_text_clean.)
 */
static const char *shown(const char *s, char *buf, size_t len)
{
    size_t i = 0;
    for (; s && s[i] && i + 1 < len; i++)
        buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    buf[i] = '\0';
    return buf;
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] ? v : NULL;
}

/* Does the table fit this job (class, NCCL version)? Warns once and returns 0 when not. */
static int table_fits_job(struct tuner_ctx *c, const struct tuner_table *t, const char *path)
{
    const char *want = env(TUNER_ENV_CLASS);
    char p[512], cls[160], w[160];
    if (want && t->class_id[0] && strcmp(want, t->class_id) != 0) {
        WARN(c,
             "topotune tuner: ignoring '%s': measured on class %s, this job is %s=%s; NCCL's "
             "defaults apply",
             shown(path, p, sizeof(p)), shown(t->class_id, cls, sizeof(cls)), TUNER_ENV_CLASS,
             shown(want, w, sizeof(w)));
        return 0;
    }
    path = shown(path, p, sizeof(p));
    if (!t->nccl_min && !t->nccl_max)
        return 1;
    unsigned have = nccl_version(c->log);
    char v[32], lo[32] = "any", hi[32] = "any";
    tuner_version_format(have, v, sizeof(v));
    if (t->nccl_min)
        tuner_version_format(t->nccl_min, lo, sizeof(lo));
    if (t->nccl_max)
        tuner_version_format(t->nccl_max, hi, sizeof(hi));
    if (!have) {
        INFO(c,
             "topotune tuner: NCCL's version is unknown (no ncclGetVersion): '%s' is for "
             "NCCL %s to %s, not checked",
             path, lo, hi);
        return 1;
    }
    if ((t->nccl_min && have < t->nccl_min) || (t->nccl_max && have > t->nccl_max)) {
        WARN(c,
             "topotune tuner: ignoring '%s': valid for NCCL %s to %s, this is NCCL %s; NCCL's "
             "defaults apply",
             path, lo, hi, v);
        return 0;
    }
    return 1;
}

/* Keeps the rows for this communicator's nodes and ranks, grouped by collective, file order
 * kept within each group (the first match wins). Returns how many, or -1 out of memory. */
static long keep_rules(struct tuner_ctx *c, const struct tuner_table *t)
{
    size_t n = 0, at[TUNER_NUM_COLLS];
    for (size_t i = 0; i < t->nrules; i++)
        if (tuner_rule_fits(&t->rules[i], c->nodes, c->ranks))
            c->count[t->rules[i].coll]++, n++;
    if (n && !(c->rules = malloc(n * sizeof(*c->rules))))
        return -1;
    for (int k = 0; k < TUNER_NUM_COLLS; k++)
        c->first[k] = at[k] = k ? c->first[k - 1] + c->count[k - 1] : 0;
    for (size_t i = 0; i < t->nrules; i++)
        if (tuner_rule_fits(&t->rules[i], c->nodes, c->ranks))
            c->rules[at[t->rules[i].coll]++] = t->rules[i];
    return (long)n;
}

/* Loads and checks the table for one communicator. Every failure ends here with one WARN. */
static void load_table(struct tuner_ctx *c, uint64_t comm_id)
{
    const char *path = env(TUNER_ENV_TABLE);
    if (!path)
        path = env(TUNER_ENV_NCCL_TABLE);
    if (!path) {
        WARN(c,
             "topotune tuner: no table: set %s (or %s) to the profile's table; NCCL's "
             "defaults apply",
             TUNER_ENV_TABLE, TUNER_ENV_NCCL_TABLE);
        return;
    }
    struct tuner_table t = TUNER_TABLE_INIT;
    char err[256], p[512], e[256], cls[160];
    if (tuner_table_load(&t, path, err, sizeof(err)) != 0) {
        WARN(c, "topotune tuner: ignoring '%s': %s; NCCL's defaults apply",
             shown(path, p, sizeof(p)), shown(err, e, sizeof(e)));
        return;
    }
    long kept = table_fits_job(c, &t, path) ? keep_rules(c, &t) : -2;
    path = shown(path, p, sizeof(p));
    if (kept == -1)
        WARN(c, "topotune tuner: ignoring '%s': out of memory; NCCL's defaults apply", path);
    if (kept >= 0) {
        char comm[40] = ""; /* v5 and later pass the communicator's id */
        if (comm_id)
            snprintf(comm, sizeof(comm), "comm %#llx: ", (unsigned long long)comm_id);
        c->in_use = 1;
        INFO(c,
             "topotune tuner: %sloaded '%s': %zu rows, %ld for %llu nodes x %llu ranks (class %s)",
             comm, path, t.nrules, kept, (unsigned long long)c->nodes, (unsigned long long)c->ranks,
             t.class_id[0] ? shown(t.class_id, cls, sizeof(cls)) : "not given");
    }
    tuner_table_release(&t);
}

/* What every init does. Never fails towards NCCL: without memory the context is NULL and
 * every call leaves NCCL's choice. */
static void *ctx_new(size_t n_ranks, size_t n_nodes, uint64_t comm_id, tuner_nccl_logger log)
{
    struct tuner_ctx *c = calloc(1, sizeof(*c));
    if (!c) {
        if (log)
            log(TUNER_NCCL_LOG_WARN, TUNER_NCCL_SUBSYS_ALL, __func__, __LINE__,
                "topotune tuner: out of memory; NCCL's defaults apply");
        return NULL;
    }
    c->log = log;
    c->nodes = n_nodes;
    c->ranks = n_ranks;
    c->v2_env_algos = env("NCCL_ALGO") || env("NCCL_PROTO");
    load_table(c, comm_id);
    return c;
}

static const struct tuner_rule *find(const struct tuner_ctx *c, int coll, size_t bytes)
{
    if (coll < 0 || coll >= TUNER_NUM_COLLS)
        return NULL;
    for (size_t i = c->first[coll], end = i + c->count[coll]; i < end; i++)
        if (bytes >= c->rules[i].min_bytes && bytes <= c->rules[i].max_bytes)
            return &c->rules[i];
    return NULL;
}

/* The row for a call, or NULL with the miss logged. */
static const struct tuner_rule *row_for(const struct tuner_ctx *c, int coll, size_t bytes)
{
    const struct tuner_rule *r = c->in_use ? find(c, coll, bytes) : NULL;
    if (!r)
        TUNING(c, "topotune tuner: %s %zu bytes: %s, NCCL's choice", tuner_coll_name(coll), bytes,
               c->in_use ? "no row" : "no table in use");
    return r;
}

static void log_skip(const struct tuner_ctx *c, const struct tuner_rule *r, size_t bytes,
                     const char *why)
{
    TUNING(c, "topotune tuner: %s %zu bytes: line %u wants %s/%s, %s; NCCL's choice",
           tuner_coll_name(r->coll), bytes, r->line, tuner_algo_name(r->algo),
           tuner_proto_name(r->proto), why);
}

static void log_apply(const struct tuner_ctx *c, const struct tuner_rule *r, size_t bytes)
{
    TUNING(c, "topotune tuner: %s %zu bytes -> %s/%s, %s%u channels (line %u)",
           tuner_coll_name(r->coll), bytes, tuner_algo_name(r->algo), tuner_proto_name(r->proto),
           r->channels ? "" : "NCCL's ", (unsigned)r->channels, r->line);
}

/*
 * The cost-table decision (v3 to v6). `table` is NCCL's float[num_algo][num_proto], passed as
 * float**. The chosen entry becomes 0 so that it is the smallest; an entry NCCL set to exactly 0
 * would still win a tie if it came first, so such entries become the smallest positive float.
 */
static void decide(const struct tuner_ctx *c, int coll, size_t bytes, float **cost_table,
                   int num_algo, int num_proto, int *n_channels)
{
    const struct tuner_rule *r = c ? row_for(c, coll, bytes) : NULL;
    if (!r)
        return;
    float *t = (float *)cost_table;
    const char *why = NULL;
    if (!t || num_algo <= 0 || num_proto <= 0 || num_algo > 64 || num_proto > 64)
        why = "no usable cost table";
    else if (r->algo >= num_algo || r->proto >= num_proto)
        why = "not in this NCCL's cost table";
    else if (!(t[r->algo * num_proto + r->proto] >= 0.0f))
        why = "unavailable here";
    if (why) {
        log_skip(c, r, bytes, why);
        return;
    }
    int chosen = r->algo * num_proto + r->proto;
    for (int i = 0; i < num_algo * num_proto; i++)
        if (i != chosen && t[i] == 0.0f)
            t[i] = FLT_MIN;
    t[chosen] = 0.0f;
    if (r->channels && n_channels)
        *n_channels = r->channels;
    log_apply(c, r, bytes);
}

/*
 * Which rows v2 may apply. NCCL 2.21 takes a v2 plugin's algorithm and protocol without
 * checking them, and gives only two support flags, so only pairs it always builds are used
 * (its src/graph/tuning.cc and topoGetAlgoInfo in src/enqueue.cc at v2.21.5-1).
 */
static const char *v2_refusal(const struct tuner_ctx *c, const struct tuner_rule *r, int collnet,
                              int nvls)
{
    int allreduce = r->coll == TUNER_COLL_ALLREDUCE, simple = r->proto == TUNER_PROTO_SIMPLE;
    if (c->v2_env_algos)
        return "NCCL_ALGO or NCCL_PROTO is set (v2 cannot see what they exclude)";
    if (r->proto == TUNER_PROTO_LL128)
        return "LL128 is not applied through v2 (its availability is not passed)";
    switch (r->algo) {
    case TUNER_ALGO_RING:
        return NULL;
    case TUNER_ALGO_TREE:
        return allreduce ? NULL : "tree is for allreduce only";
    case TUNER_ALGO_NVLS:
        if (!simple || !nvls)
            return "NVLS needs Simple and NCCL's NVLS support";
        if (c->nodes == 1)
            return allreduce || r->coll == TUNER_COLL_ALLGATHER ||
                           r->coll == TUNER_COLL_REDUCESCATTER
                       ? NULL
                       : "NVLS does not do this collective";
        return allreduce && collnet ? NULL : "NVLS across nodes needs CollNet and allreduce";
    case TUNER_ALGO_NVLS_TREE:
        return simple && nvls && allreduce && c->nodes > 1
                   ? NULL
                   : "NVLS tree needs Simple, NVLS support, allreduce and several nodes";
    default:
        return "CollNet and PAT are not applied through v2";
    }
}

/* --- The entry points, one set per interface version. ------------------------------------ */

static tuner_nccl_result init_v2(size_t n_ranks, size_t n_nodes, tuner_nccl_logger log,
                                 void **context)
{
    *context = ctx_new(n_ranks, n_nodes, 0, log);
    return TUNER_NCCL_SUCCESS;
}

static tuner_nccl_result init_v5(void **context, uint64_t comm_id, size_t n_ranks, size_t n_nodes,
                                 tuner_nccl_logger log, struct tuner_nccl_nvl_domain_info *nvl,
                                 struct tuner_nccl_constants_v5 *constants)
{
    (void)nvl;       /* the table is keyed by nodes and ranks only */
    (void)constants; /* NCCL's model constants are left as they are */
    *context = ctx_new(n_ranks, n_nodes, comm_id, log);
    return TUNER_NCCL_SUCCESS;
}

static tuner_nccl_result coll_info_v2(void *context, tuner_nccl_func coll, size_t n_bytes,
                                      int collnet_support, int nvls_support, int num_pipe_ops,
                                      int *algorithm, int *protocol, int *n_channels)
{
    const struct tuner_ctx *c = context;
    (void)num_pipe_ops;
    const struct tuner_rule *r = c ? row_for(c, coll, n_bytes) : NULL;
    if (!r)
        return TUNER_NCCL_SUCCESS;
    const char *why = v2_refusal(c, r, collnet_support == 1, nvls_support == 1);
    if (!why && (!algorithm || !protocol))
        why = "no algorithm/protocol outputs";
    if (why) {
        log_skip(c, r, n_bytes, why);
        return TUNER_NCCL_SUCCESS;
    }
    *algorithm = r->algo;
    *protocol = r->proto;
    if (r->channels && n_channels)
        *n_channels = r->channels;
    log_apply(c, r, n_bytes);
    return TUNER_NCCL_SUCCESS;
}

static tuner_nccl_result coll_info_v3(void *context, tuner_nccl_func coll, size_t n_bytes,
                                      int num_pipe_ops, float **cost_table, int num_algo,
                                      int num_proto, int *n_channels)
{
    (void)num_pipe_ops;
    decide(context, coll, n_bytes, cost_table, num_algo, num_proto, n_channels);
    return TUNER_NCCL_SUCCESS;
}

static tuner_nccl_result coll_info_v4(void *context, tuner_nccl_func coll, size_t n_bytes,
                                      int num_pipe_ops, float **cost_table, int num_algo,
                                      int num_proto, int reg_buff, int *n_channels)
{
    (void)num_pipe_ops;
    (void)reg_buff; /* the table does not depend on buffer registration */
    decide(context, coll, n_bytes, cost_table, num_algo, num_proto, n_channels);
    return TUNER_NCCL_SUCCESS;
}

static tuner_nccl_result destroy(void *context)
{
    struct tuner_ctx *c = context;
    if (c)
        free(c->rules);
    free(c);
    return TUNER_NCCL_SUCCESS;
}

/* Not const: NCCL holds them through non-const pointers (2.28 and 2.29 use v5 in place, 2.30
 * v6). */
TUNER_EXPORT struct tuner_nccl_v2 ncclTunerPlugin_v2 = {TUNER_PLUGIN_NAME, init_v2, coll_info_v2,
                                                        destroy};
TUNER_EXPORT struct tuner_nccl_v3 ncclTunerPlugin_v3 = {TUNER_PLUGIN_NAME, init_v2, coll_info_v3,
                                                        destroy};
TUNER_EXPORT struct tuner_nccl_v4 ncclTunerPlugin_v4 = {TUNER_PLUGIN_NAME, init_v2, coll_info_v4,
                                                        destroy};
TUNER_EXPORT struct tuner_nccl_v5 ncclTunerPlugin_v5 = {TUNER_PLUGIN_NAME, init_v5, coll_info_v4,
                                                        destroy};
TUNER_EXPORT struct tuner_nccl_v6 ncclTunerPlugin_v6 = {TUNER_PLUGIN_NAME, init_v5, coll_info_v4,
                                                        destroy, NULL};
