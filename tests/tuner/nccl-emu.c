/* SPDX-License-Identifier: MIT */
/* NCCL's side of the tuner plugin interface, acted out for the tests (nccl-emu.h). */
#include "nccl-emu.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The releases whose loaders differ (src/misc/tuner.cc, then src/plugin/tuner.cc). */
const struct emu_gen emu_gens[] = {
    {"2.21.5", 2, 6}, {"2.22.3", 3, 6}, {"2.23.4", 3, 7}, {"2.24.3", 4, 7},
    {"2.27.7", 4, 7}, {"2.28.9", 5, 7}, {"2.29.7", 5, 7}, {"2.30.7", 6, 7},
};
const size_t emu_ngens = sizeof(emu_gens) / sizeof(emu_gens[0]);

int emu_nccl_version = 22809;
tuner_nccl_logger emu_logger = emu_log;

/* Exported from the harness (ENABLE_EXPORTS), where the plugin finds it as it finds libnccl's. */
int ncclGetVersion(int *version);
int ncclGetVersion(int *version)
{
    if (!version || emu_nccl_version <= 0)
        return 4; /* ncclInvalidArgument */
    *version = emu_nccl_version;
    return 0;
}

/* The name field every interface structure starts with. */
struct named {
    const char *name;
};

int emu_load(struct emu_plugin *p, const char *path, const struct emu_gen *gen)
{
    memset(p, 0, sizeof(*p));
    p->gen = gen;
    p->lib = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (!p->lib) {
        fprintf(stderr, "emu: NCCL %s cannot open %s: %s\n", gen->release, path, dlerror());
        return -1;
    }
    for (int v = gen->newest; v >= 2 && !p->sym; v--) {
        char name[32];
        snprintf(name, sizeof(name), "ncclTunerPlugin_v%d", v);
        p->sym = dlsym(p->lib, name);
        p->version = v;
    }
    const struct named *n = p->sym;
    if (!n || !n->name || strcmp(n->name, "topotune") != 0) {
        fprintf(stderr, "emu: NCCL %s: no ncclTunerPlugin_v%d..2 named topotune in %s\n",
                gen->release, gen->newest, path);
        emu_unload(p);
        return -1;
    }
    return 0;
}

void emu_unload(struct emu_plugin *p)
{
    if (p->lib)
        dlclose(p->lib);
    memset(p, 0, sizeof(*p));
}

/* v5/v6 constants with recognisable values, to check the plugin hands them back untouched. */
static void fill_constants(struct tuner_nccl_constants_v5 *k)
{
    double *d = (double *)k;
    for (size_t i = 0; i < sizeof(*k) / sizeof(double); i++)
        d[i] = 0.5 + (double)i;
}

/* init of v2, v3 and v4 (the same signature at the same place in each structure). */
static int init_v2_to_v4(const struct emu_plugin *p, size_t nodes, size_t ranks, void **ctx)
{
    switch (p->version) {
    case 2:
        return ((const struct tuner_nccl_v2 *)p->sym)->init(ranks, nodes, emu_logger, ctx);
    case 3:
        return ((const struct tuner_nccl_v3 *)p->sym)->init(ranks, nodes, emu_logger, ctx);
    default:
        return ((const struct tuner_nccl_v4 *)p->sym)->init(ranks, nodes, emu_logger, ctx);
    }
}

int emu_comm_init(struct emu_comm *c, const struct emu_plugin *p, size_t nodes, size_t ranks)
{
    memset(c, 0, sizeof(*c));
    c->p = p;
    c->nodes = nodes;
    c->ranks = ranks;
    if (p->version <= 4)
        return init_v2_to_v4(p, nodes, ranks, &c->ctx);
    struct tuner_nccl_nvl_domain_info nvl = {(int)nodes, (int)(ranks / nodes),
                                             (int)(ranks / nodes)};
    struct tuner_nccl_constants_v5 k, before;
    fill_constants(&k);
    before = k;
    uint64_t id = 0x5eed0000u + (uint64_t)(uintptr_t)c;
    int rc = p->version == 5 ? ((const struct tuner_nccl_v5 *)p->sym)
                                   ->init(&c->ctx, id, ranks, nodes, emu_logger, &nvl, &k)
                             : ((const struct tuner_nccl_v6 *)p->sym)
                                   ->init(&c->ctx, id, ranks, nodes, emu_logger, &nvl, &k);
    if (rc == 0 && memcmp(&k, &before, sizeof(k)) != 0)
        return -1;
    return rc;
}

int emu_comm_destroy(struct emu_comm *c)
{
    int rc;
    switch (c->p->version) {
    case 2:
        rc = ((const struct tuner_nccl_v2 *)c->p->sym)->destroy(c->ctx);
        break;
    case 3:
        rc = ((const struct tuner_nccl_v3 *)c->p->sym)->destroy(c->ctx);
        break;
    case 4:
        rc = ((const struct tuner_nccl_v4 *)c->p->sym)->destroy(c->ctx);
        break;
    case 5:
        rc = ((const struct tuner_nccl_v5 *)c->p->sym)->finalize(c->ctx);
        break;
    default:
        rc = ((const struct tuner_nccl_v6 *)c->p->sym)->finalize(c->ctx);
        break;
    }
    c->ctx = NULL;
    return rc;
}

void emu_call(const struct emu_comm *c, struct emu_call *call)
{
    const struct emu_plugin *p = c->p;
    float **table = (float **)call->table; /* NCCL's cast of its 2-D array */
    switch (p->version) {
    case 2:
        call->rc = ((const struct tuner_nccl_v2 *)p->sym)
                       ->get_coll_info(c->ctx, call->coll, call->bytes, call->collnet, call->nvls,
                                       1, &call->algo, &call->proto, &call->n_channels);
        break;
    case 3:
        call->rc = ((const struct tuner_nccl_v3 *)p->sym)
                       ->get_coll_info(c->ctx, call->coll, call->bytes, 1, table, p->gen->num_algo,
                                       EMU_PROTOS, &call->n_channels);
        break;
    case 4:
        call->rc = ((const struct tuner_nccl_v4 *)p->sym)
                       ->get_coll_info(c->ctx, call->coll, call->bytes, 1, table, p->gen->num_algo,
                                       EMU_PROTOS, 0, &call->n_channels);
        break;
    case 5:
        call->rc = ((const struct tuner_nccl_v5 *)p->sym)
                       ->get_coll_info(c->ctx, call->coll, call->bytes, 1, table, p->gen->num_algo,
                                       EMU_PROTOS, 1, &call->n_channels);
        break;
    default:
        call->rc = ((const struct tuner_nccl_v6 *)p->sym)
                       ->get_coll_info(c->ctx, call->coll, call->bytes, 1, table, p->gen->num_algo,
                                       EMU_PROTOS, 1, &call->n_channels);
        break;
    }
}

/* Is (a, p) a pair NCCL builds for this collective on these nodes (see emu_costs)? */
static int available(int coll, size_t nodes, size_t ranks, int a, int p, int ll128)
{
    int allreduce = coll == 4, gather_scatter = coll == 2 || coll == 3;
    if (p == 1 && !ll128)
        return 0;
    switch (a) {
    case 0: /* tree */
        return allreduce;
    case 1: /* ring */
        return 1;
    case 4: /* NVLS: Simple, one node (no CollNet here) */
        return p == 2 && nodes == 1 && (allreduce || gather_scatter);
    case 5: /* NVLS tree: Simple, allreduce, several nodes */
        return p == 2 && nodes > 1 && allreduce;
    case 6: /* PAT: one rank per node, allgather and reducescatter */
        return gather_scatter && nodes == ranks && nodes > 1;
    default: /* CollNet: no CollNet plugin */
        return 0;
    }
}

void emu_costs(int coll, size_t nodes, size_t ranks, size_t bytes, int num_algo, int ll128,
               float table[EMU_ALGOS][EMU_PROTOS])
{
    /* Base latencies per protocol (NCCL's defaults) and rough algorithm bandwidths in GB/s. */
    static const double base[EMU_ALGOS][EMU_PROTOS] = {
        {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0},      {0, 0, 0},
        {0, 0, 25.0},     {0, 0, 25.0},     {8.0, 8.0, 8.0}};
    static const double bw[EMU_ALGOS][EMU_PROTOS] = {{40, 120, 180}, {60, 250, 330}, {0, 0, 100},
                                                     {0, 0, 100},    {0, 0, 480},    {0, 0, 300},
                                                     {20, 60, 90}};
    double steps = (double)(ranks > 1 ? ranks - 1 : 1), net = nodes > 1 ? 5.0 * (double)nodes : 0;
    for (int a = 0; a < EMU_ALGOS; a++)
        for (int p = 0; p < EMU_PROTOS; p++) {
            if (!available(coll, nodes, ranks, a, p, ll128)) {
                table[a][p] = TUNER_NCCL_ALGO_PROTO_IGNORE;
                continue;
            }
            double lat = base[a][p] + (a == 1 ? 0.6 * steps : 1.0) + net;
            double scale = nodes > 1 ? 0.3 : 1.0;
            table[a][p] = (float)(lat + (double)bytes / (1e3 * bw[a][p] * scale));
        }
    for (int a = num_algo; a < EMU_ALGOS; a++) /* memory after a 6-algorithm table */
        for (int p = 0; p < EMU_PROTOS; p++)
            table[a][p] = 123.0f;
}

int emu_pick(const float table[EMU_ALGOS][EMU_PROTOS], int num_algo, int *algo, int *proto)
{
    float best = 3600000000.0f;
    *algo = *proto = -1;
    for (int a = 0; a < num_algo; a++)
        for (int p = 0; p < EMU_PROTOS; p++)
            if (table[a][p] >= 0.0f && table[a][p] < best)
                best = table[a][p], *algo = a, *proto = p;
    return *algo < 0 ? -1 : 0;
}

_Thread_local struct emu_logged emu_logged;

void emu_log(tuner_nccl_log_level level, unsigned long subsys, const char *where, int line,
             const char *fmt, ...)
{
    struct emu_logged *l = &emu_logged;
    (void)where;
    (void)line;
    if (level == TUNER_NCCL_LOG_WARN) {
        l->warn++;
        if (subsys != TUNER_NCCL_SUBSYS_ALL)
            l->bad_flags |= subsys;
    } else if (level == TUNER_NCCL_LOG_INFO && subsys == TUNER_NCCL_SUBSYS_TUNING) {
        l->tuning++;
    } else if (level == TUNER_NCCL_LOG_INFO && (subsys & TUNER_NCCL_SUBSYS_TUNING)) {
        l->info++;
    } else {
        l->other++;
        l->bad_flags |= subsys | 0x80000000UL;
    }
    if (l->n >= EMU_LOG_KEEP)
        return;
    char *out = l->line[l->n++];
    int used = snprintf(out, sizeof(l->line[0]), "%c: ",
                        level == TUNER_NCCL_LOG_WARN ? 'W'
                        : subsys == 0x40UL           ? 'T'
                                                     : 'I');
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out + used, sizeof(l->line[0]) - (size_t)used, fmt, ap);
    va_end(ap);
}

void emu_log_reset(void)
{
    memset(&emu_logged, 0, sizeof(emu_logged));
}

int emu_log_count(const char *needle)
{
    int n = 0;
    for (int i = 0; i < emu_logged.n; i++)
        n += strstr(emu_logged.line[i], needle) != NULL;
    return n;
}
