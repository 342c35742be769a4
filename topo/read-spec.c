/* SPDX-License-Identifier: MIT */
/*
 * Hardware specs (schema topotune/spec/1): a node the user does not have,
 * described by catalog names, expanded to a full topology:
 *   {"schema": "topotune/spec/1", "gpu": "H100-SXM5-80GB", "count": 8,
 *    "fabric": "nvswitch", "nics": [{"model": "CX7-400G-IB", "count": 8, "per": "gpu"}],
 *    "cpu": {"vendor": "intel", "sockets": 2}, "nodes": 2}
 * GPUs are spread evenly over the sockets, two per PCIe switch. NIC counts are
 * per node: "per": "gpu" puts them on the switches of GPUs spread evenly (8
 * NICs for 8 GPUs: one beside each), "per": "node" on the sockets' host bridges.
 * fabric: nvswitch (every GPU's links into the switches), nvlink (GPU pairs
 * 2k, 2k+1 joined by all their links, as bridged PCIe cards), mesh (every pair
 * joined by links / (count - 1): GH200 nodes, 4-way bridged cards), or pcie.
 * nvlink_domain: GPUs sharing one NVLink fabric across nodes (GB200 NVL72: 72).
 * p2p: PCIe P2P as the driver reports it (ok, unsupported, broken).
 */
#include "topo/internal.h"
#include "util/error.h"
#include "util/json.h"
#include "util/log.h"
#include "util/mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct spec_reader {
    const char *name;
    int failed;
};

__attribute__((format(printf, 3, 4))) static int bad(struct spec_reader *r, const char *field,
                                                     const char *fmt, ...)
{
    if (!r->failed) {
        char msg[2048];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        util_error("cannot read spec '%s': field \"%s\": %s", r->name, field, msg);
    }
    r->failed = 1;
    return -1;
}

static int get_int(struct spec_reader *r, json_t *obj, const char *key, const char *field, int min,
                   int max, int dflt)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return dflt;
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
        char range[64];
        snprintf(range, sizeof(range), "%d to %d", min, max);
        bad(r, field, "must be an integer from %s", range);
        return dflt;
    }
    return (int)json_integer_value(v);
}

static int check_keys(struct spec_reader *r, json_t *obj, const char *const *allowed,
                      const char *where)
{
    const char *key = util_json_unknown_key(obj, allowed);
    if (key) {
        char field[128], shown[64];
        snprintf(field, sizeof(field), "%s%s", where, topo_text_into(key, shown, sizeof(shown)));
        return bad(r, field, "unknown field: remove it or check its spelling");
    }
    return 0;
}

static const char *cpu_vendor(struct spec_reader *r, json_t *cpu)
{
    const char *v = json_string_value(json_object_get(cpu, "vendor"));
    if (!json_object_get(cpu, "vendor") ||
        (v && (strcmp(v, "intel") == 0 || strcmp(v, "GenuineIntel") == 0)))
        return "GenuineIntel";
    if (v && (strcmp(v, "amd") == 0 || strcmp(v, "AuthenticAMD") == 0))
        return "AuthenticAMD";
    if (v && strcmp(v, "arm") == 0)
        return "ARM";
    bad(r, "cpu.vendor", "must be intel, amd or arm");
    return NULL;
}

static void add_nic(struct topo *t, json_t *model, int node, int numa, int idx)
{
    struct topo_nic *n = topo_add_nic(t);
    if (!n)
        return;
    const char *kind = json_string_value(json_object_get(model, "kind"));
    char name[32], netdev[32];
    n->kind = strcmp(kind, "ib") == 0     ? TOPO_NIC_IB
              : strcmp(kind, "roce") == 0 ? TOPO_NIC_ROCE
              : strcmp(kind, "efa") == 0  ? TOPO_NIC_EFA
              : strcmp(kind, "cxi") == 0  ? TOPO_NIC_CXI
                                          : TOPO_NIC_ETH;
    snprintf(name, sizeof(name),
             n->kind == TOPO_NIC_EFA   ? "rdmap%d"
             : n->kind == TOPO_NIC_ETH ? "eth%d"
             : n->kind == TOPO_NIC_CXI ? "cxi%d"
                                       : "mlx5_%d",
             idx);
    snprintf(netdev, sizeof(netdev),
             n->kind == TOPO_NIC_IB    ? "ib%d"
             : n->kind == TOPO_NIC_CXI ? "hsn%d" /* HPE's driver names Slingshot ports hsn */
                                       : "eth%d",
             idx);
    n->name = topo_strdup(name);
    n->netdev = topo_strdup(netdev);
    n->speed_gbps = (int)json_integer_value(json_object_get(model, "speed_gbps"));
    n->state = topo_strdup("up");
    n->node = node;
    n->numa = numa;
}

static void add_gpu(struct topo *t, json_t *g, int node, int numa)
{
    struct topo_gpu *gpu = topo_add_gpu(t);
    if (!gpu)
        return;
    gpu->model = topo_strdup(json_string_value(json_object_get(g, "model")));
    gpu->sm = (int)json_integer_value(json_object_get(g, "sm"));
    gpu->memory_mib = json_integer_value(json_object_get(g, "memory_mib"));
    gpu->pcie_gen = (int)json_integer_value(json_object_get(g, "pcie_gen"));
    gpu->pcie_width = (int)json_integer_value(json_object_get(g, "pcie_width"));
    gpu->pcie_gbs = topo_pcie_link_gbs(gpu->pcie_gen, gpu->pcie_width);
    gpu->node = node;
    gpu->numa = numa;
}

struct nic_group {
    json_t *model;
    int count, per_gpu;
};

static int read_nics(struct spec_reader *r, json_t *spec, struct nic_group *groups, int max)
{
    json_t *list = json_object_get(spec, "nics");
    if (!list)
        return 0;
    if (!json_is_array(list))
        return bad(r, "nics", "must be a list of {\"model\", \"count\", \"per\"}"), 0;
    static const char *const keys[] = {"model", "count", "per", NULL};
    size_t i;
    json_t *e;
    int n = 0;
    json_array_foreach(list, i, e) {
        char field[64];
        snprintf(field, sizeof(field), "nics[%zu].", i);
        if (!json_is_object(e) || check_keys(r, e, keys, field) || n >= max)
            return bad(r, "nics", "entries must be objects with model, count, per"), 0;
        const char *model = json_string_value(json_object_get(e, "model"));
        const char *per = json_string_value(json_object_get(e, "per"));
        groups[n].model = topo_catalog_nic(model);
        snprintf(field, sizeof(field), "nics[%zu].model", i);
        if (!groups[n].model)
            return bad(r, field, "unknown NIC model: valid names: %s", topo_catalog_nic_names()), 0;
        snprintf(field, sizeof(field), "nics[%zu].count", i);
        groups[n].count = get_int(r, e, "count", field, 1, 64, 1);
        if (per && strcmp(per, "gpu") && strcmp(per, "node")) {
            snprintf(field, sizeof(field), "nics[%zu].per", i);
            return bad(r, field, "must be gpu or node"), 0;
        }
        groups[n].per_gpu = per && strcmp(per, "gpu") == 0;
        n++;
    }
    return n;
}

/* count NICs "per gpu" sit on the switches of GPUs spread evenly: NIC k beside GPU k x G / count.
 */
static int nics_beside(const struct nic_group *g, int gpu, int ngpus)
{
    int n = 0;
    for (int k = 0; g->per_gpu && k < g->count; k++)
        n += (int)((long)k * ngpus / g->count) == gpu;
    return n;
}

static void build(struct topo *t, json_t *g, int count, int sockets, const char *fabric,
                  struct nic_group *groups, int ngroups)
{
    int *hb = util_xcalloc((size_t)sockets, sizeof(int));
    for (int s = 0; s < sockets; s++)
        hb[s] = topo_add_pnode(t, TOPO_PNODE_HOSTBRIDGE,
                               topo_add_pnode(t, TOPO_PNODE_LOCALITY, -1, 0, s), 0, TOPO_UNKNOWN);
    int nicidx = 0, sw = -1;
    for (int i = 0; i < count; i++) {
        int s = (int)((long)i * sockets / count);
        if (i % 2 == 0 || (int)((long)(i - 1) * sockets / count) != s)
            sw = topo_add_pnode(t, TOPO_PNODE_BRIDGE, hb[s], 3, TOPO_UNKNOWN);
        add_gpu(t, g, topo_add_pnode(t, TOPO_PNODE_DEVICE, sw, 0, TOPO_UNKNOWN), s);
        for (int k = 0; k < ngroups; k++)
            for (int c = nics_beside(&groups[k], i, count); c > 0; c--)
                add_nic(t, groups[k].model,
                        topo_add_pnode(t, TOPO_PNODE_DEVICE, sw, 0, TOPO_UNKNOWN), s, nicidx++);
    }
    for (int k = 0; k < ngroups; k++)
        for (int c = 0; !groups[k].per_gpu && c < groups[k].count; c++)
            add_nic(t, groups[k].model,
                    topo_add_pnode(t, TOPO_PNODE_DEVICE, hb[c % sockets], 0, TOPO_UNKNOWN),
                    c % sockets, nicidx++);
    free(hb);
    topo_alloc_nvlink(t);
    int links = (int)json_integer_value(json_object_get(g, "nvlinks"));
    int *fabric_links = util_xcalloc((size_t)count + 1, sizeof(int));
    if (strcmp(fabric, "nvswitch") == 0) {
        for (int i = 0; i < count; i++)
            fabric_links[i] = links;
        int sw_count = (int)json_integer_value(json_object_get(g, "nvswitches"));
        t->nvswitches = sw_count > 0 ? sw_count : TOPO_UNKNOWN;
    } else if (strcmp(fabric, "nvlink") == 0) {
        for (int i = 0; i + 1 < count; i += 2)
            t->nvlink[i * count + i + 1] = t->nvlink[(i + 1) * count + i] = links;
    } else if (strcmp(fabric, "mesh") == 0 && count > 1) {
        for (int i = 0; i < count; i++) /* every pair joined by an equal share of the links */
            for (int j = 0; j < count; j++)
                t->nvlink[i * count + j] = i == j ? 0 : links / (count - 1);
    }
    topo_set_nvlink_totals(t, fabric_links);
    free(fabric_links);
    t->nvlink_known = 1;
}

/* PCIe P2P as the driver would report it (the table NCCL reads through NVML): ok, unsupported
 * (NS: NCCL keeps such pairs off P2P and goes through host memory) or broken (reported OK, but
 * transfers hang: ACS redirect, some consumer drivers). NVLink pairs are OK either way. */
static void set_p2p(struct topo *t, const char *p2p)
{
    int n = t->ngpus, none = strcmp(p2p, "unsupported") == 0;
    t->p2p = util_xcalloc((size_t)n * n + 1, sizeof(char *));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            t->p2p[i * n + j] = topo_strdup(i == j                 ? "X"
                                            : t->nvlink[i * n + j] ? "OK"
                                            : none                 ? "NS"
                                                                   : "OK");
    t->p2p_source = "spec";
    t->p2p_broken = strcmp(p2p, "broken") == 0;
}

int topo_read_spec(struct topo *t, const char *name, json_t *spec)
{
    struct spec_reader r = {.name = name};
    static const char *const keys[] = {"schema", "gpu",  "count",  "fabric", "nics",          "cpu",
                                       "nodes",  "name", "shm_mb", "p2p",    "nvlink_domain", NULL};
    static const char *const cpu_keys[] = {"vendor", "sockets", "model", NULL};
    if (check_keys(&r, spec, keys, ""))
        return UTIL_EINVAL;
    const char *gname = json_string_value(json_object_get(spec, "gpu"));
    json_t *g = topo_catalog_gpu(gname);
    if (!g)
        return bad(&r, "gpu", "unknown GPU model: valid names: %s", topo_catalog_gpu_names()),
               UTIL_EINVAL;
    int count = get_int(&r, spec, "count", "count", 1, 64, -1);
    if (count < 0 && !r.failed)
        bad(&r, "count", "is required: the number of GPUs per node, 1 to 64");
    json_t *cpu = json_object_get(spec, "cpu");
    if (cpu && (!json_is_object(cpu) || check_keys(&r, cpu, cpu_keys, "cpu.")))
        bad(&r, "cpu", "must be an object with vendor and sockets");
    int sockets = get_int(&r, cpu, "sockets", "cpu.sockets", 1, 8, 2);
    const char *vendor = r.failed ? NULL : cpu_vendor(&r, cpu);
    int nodes = get_int(&r, spec, "nodes", "nodes", 1, 4096, 1);
    int shm_mb = get_int(&r, spec, "shm_mb", "shm_mb", 1, 1 << 24, -1); /* a container's /dev/shm */
    const char *fabric = json_string_value(json_object_get(spec, "fabric"));
    int links = (int)json_integer_value(json_object_get(g, "nvlinks"));
    int switches = (int)json_integer_value(json_object_get(g, "nvswitches"));
    if (!fabric)
        fabric = switches > 0 ? "nvswitch" : "pcie";
    if (!r.failed && strcmp(fabric, "nvswitch") && strcmp(fabric, "nvlink") &&
        strcmp(fabric, "mesh") && strcmp(fabric, "pcie"))
        bad(&r, "fabric", "must be nvswitch, nvlink, mesh or pcie");
    if (!r.failed && !strcmp(fabric, "mesh") && count > 1 && links / (count - 1) < 1)
        bad(&r, "fabric", "mesh: %s has %d links, too few to join each of %d GPUs", gname, links,
            count);
    /* a multi-node NVLink domain (GB200/GB300 NVL72): GPUs of several nodes on one fabric */
    int domain = get_int(&r, spec, "nvlink_domain", "nvlink_domain", 1, 4096, 0);
    if (!r.failed && domain && (strcmp(fabric, "nvswitch") || domain % (count > 0 ? count : 1)))
        bad(&r, "nvlink_domain", "needs fabric nvswitch and a multiple of count (%d GPUs per node)",
            count);
    if (!r.failed && strcmp(fabric, "pcie") && links == 0)
        bad(&r, "fabric", "%s has no NVLink: use \"fabric\": \"pcie\"", gname);
    const char *p2p = json_string_value(json_object_get(spec, "p2p"));
    if (!p2p && !json_object_get(spec, "p2p"))
        p2p = json_is_true(json_object_get(g, "pcie_p2p")) ? "ok" : "unsupported";
    if (!r.failed &&
        (!p2p || (strcmp(p2p, "ok") && strcmp(p2p, "unsupported") && strcmp(p2p, "broken"))))
        bad(&r, "p2p",
            "must be ok, unsupported (the driver offers none) or broken (it offers P2P "
            "that hangs)");
    struct nic_group groups[16];
    int ngroups = r.failed ? 0 : read_nics(&r, spec, groups, 16);
    if (r.failed)
        return UTIL_EINVAL;
    if (sockets > count)
        sockets = count;
    t->source = TOPO_SOURCE_SPEC;
    t->host = topo_text(json_string_value(json_object_get(spec, "name")));
    t->cpu.vendor = topo_strdup(vendor);
    t->cpu.model = topo_model_squeeze(topo_text(json_string_value(json_object_get(cpu, "model"))));
    t->cpu.sockets = t->cpu.numa_nodes = sockets;
    t->job_nodes = nodes;
    t->nvlink_domain = domain > count ? domain : 0;
    t->system.shm_bytes = shm_mb > 0 ? (long long)shm_mb << 20 : TOPO_UNKNOWN;
    build(t, g, count, sockets, fabric, groups, ngroups);
    set_p2p(t, p2p);
    return 0;
}
