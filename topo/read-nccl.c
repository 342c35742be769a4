/* SPDX-License-Identifier: MIT */
/*
 * Reads an NCCL topology file (NCCL_TOPO_FILE format, <system version="1">).
 * Nesting as NCCL's loader accepts it: system > cpu > (pci | nic); pci > (pci |
 * gpu | nic); gpu > nvlink; nic > net. Every attribute used is validated, and
 * the first bad one is reported with its element and line.
 */
#include "topo/internal.h"
#include "util/error.h"
#include "util/log.h"
#include "util/mem.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct nccl_reader {
    struct topo *t;
    const char *name;
    int failed;
    /* NVLink targets per GPU, resolved once every GPU is known. */
    struct pending_link {
        int gpu;
        char target[32];
        unsigned tclass;
        int count;
    } * links;
    int nlinks;
    int any_nvlink;
    char *cpuset; /* of the <cpu> being read */
};

static int bad_attr(struct nccl_reader *r, xmlNode *n, const char *attr, const char *value,
                    const char *want)
{
    char shown[64];
    if (!r->failed) /* the value as it may be printed: cut short, no terminal escapes */
        util_error("cannot read topology '%s': line %ld: <%s %s=\"%s\">: %s", r->name,
                   xmlGetLineNo(n), (const char *)n->name, attr,
                   topo_text_into(value, shown, sizeof(shown)), want);
    r->failed = 1;
    return -1;
}

/* Returns the attribute (caller xmlFree's it) or NULL when absent. */
static char *attr(xmlNode *n, const char *name)
{
    return (char *)xmlGetProp(n, (const xmlChar *)name);
}

static int is(xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && xmlStrcmp(n->name, (const xmlChar *)name) == 0;
}

/* Integer attribute in [min, max]; absent or "" gives *out = TOPO_UNKNOWN. */
static int int_attr(struct nccl_reader *r, xmlNode *n, const char *name, long min, long max,
                    int base, long *out)
{
    char *v = attr(n, name);
    *out = TOPO_UNKNOWN;
    int rc = 0;
    if (v && *v) {
        char *end;
        errno = 0;
        long x = strtol(v, &end, base);
        char want[80];
        if (base == 16)
            snprintf(want, sizeof(want), "expected a hex number up to 0x%lx", max);
        else
            snprintf(want, sizeof(want), "expected an integer from %ld to %ld", min, max);
        if (errno || *end || x < min || x > max)
            rc = bad_attr(r, n, name, v, want);
        else
            *out = x;
    }
    xmlFree(v);
    return rc;
}

/*
 * link_speed is free text in the wild: "16 GT/s", "32.0 GT/s PCIe", even
 * "32 GT/s PCIe/s" (AWS p5). A number then "GT/s" is required; the rest is ignored.
 */
static int parse_link_speed(struct nccl_reader *r, xmlNode *n, int *gen)
{
    char *v = attr(n, "link_speed");
    *gen = TOPO_UNKNOWN;
    int rc = 0;
    if (v && *v) {
        char *end;
        double gts = strtod(v, &end);
        while (*end == ' ')
            end++;
        if (end == v || strncmp(end, "GT/s", 4) != 0 || !(gts > 0) || gts > 1e6) /* nan, inf */
            rc = bad_attr(r, n, "link_speed", v, "expected a rate such as \"16.0 GT/s PCIe\"");
        else
            *gen = topo_pcie_gen_of(gts);
    }
    xmlFree(v);
    return rc;
}

static void add_gpu(struct nccl_reader *r, xmlNode *pci, xmlNode *gpu, int node, int numa,
                    long device, int gen, long width)
{
    struct topo_gpu *g = topo_add_gpu(r->t);
    if (!g)
        return;
    char *busid = attr(pci, "busid");
    snprintf(g->pci, sizeof(g->pci), "%s", busid ? busid : "");
    xmlFree(busid);
    const struct topo_gpu_info *gi = device > 0 ? topo_gpu_info_by_device((unsigned)device) : NULL;
    g->model = topo_strdup(gi ? gi->name : NULL);
    g->node = node;
    g->numa = numa;
    g->cpuset = topo_strdup(r->cpuset);
    g->pcie_gen = gen;
    g->pcie_width = width > 0 ? (int)width : TOPO_UNKNOWN;
    g->pcie_gbs = topo_pcie_link_gbs(gen, width);
    long sm = TOPO_UNKNOWN;
    if (gpu && int_attr(r, gpu, "sm", 10, 1000, 10, &sm) == 0 && sm > 0)
        g->sm = (int)sm;
    else if (gi)
        g->sm = gi->sm;
    for (xmlNode *c = gpu ? gpu->children : NULL; c; c = c->next) {
        if (!is(c, "nvlink"))
            continue;
        long count, tclass;
        char *target = attr(c, "target");
        if (int_attr(r, c, "count", 0, 64, 10, &count) ||
            int_attr(r, c, "tclass", 0, 0xffffff, 16, &tclass)) {
            xmlFree(target);
            return;
        }
        r->any_nvlink = 1;
        r->links = util_xrealloc(r->links, (size_t)(r->nlinks + 1) * sizeof(*r->links));
        struct pending_link *l = &r->links[r->nlinks++];
        l->gpu = r->t->ngpus - 1;
        snprintf(l->target, sizeof(l->target), "%s", target ? target : "");
        l->tclass = tclass < 0 ? 0 : (unsigned)tclass;
        l->count = count < 0 ? 0 : (int)count;
        xmlFree(target);
    }
}

/* InfiniBand adapters: class network/InfiniBand, or serial bus/InfiniBand (ConnectX-2/3). */
static int is_ib_class(long cls)
{
    return cls >= 0 && ((cls >> 8) == 0x0207 || (cls >> 8) == 0x0c06);
}

/* 1 for a verbs device's name (NCCL's IB transport names a port by it), as the drivers name
 * them: mlx4/mlx5 (NVIDIA), bnxt_re (Broadcom), irdma (Intel), erdma, ionic (AMD), qedr, hns
 * (Huawei), or rdma-core's udev rule does by the bus (rocep59s0f0). */
static int verbs_name(const char *name)
{
    static const char *const prefixes[] = {"mlx4_",  "mlx5_", "bnxt_re", "irdma", "erdma",
                                           "ionic_", "qedr",  "hns_",    "rocep"};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
            return 1;
    return 0;
}

static enum topo_nic_kind kind_of(long cls, long vendor, long device, const char *name)
{
    /* Amazon's devices: EFA's are 0xefa0-0xefa4 today (the Linux efa driver's efa_pci_tbl);
     * another one, ENA, is plain Ethernet. Without a device id, Amazon's vendor says EFA. */
    if (vendor == 0x1d0f && (device < 0 || (device & 0xfff0) == 0xefa0))
        return TOPO_NIC_EFA;
    if (topo_is_cassini(vendor, device))
        return TOPO_NIC_CXI;
    if (is_ib_class(cls))
        return TOPO_NIC_IB;
    if (name && strncmp(name, "mlx5", 4) == 0 && cls < 0)
        return TOPO_NIC_IB;
    if (name && strncmp(name, "cxi", 3) == 0 && cls < 0) /* libfabric's name for a Cassini */
        return TOPO_NIC_CXI;
    /* an Ethernet adapter whose port NCCL names by its verbs device (mlx5_0, bnxt_re0): RoCE;
     * NCCL's socket transport names the interface (eth0) instead */
    if (cls >= 0 && (cls >> 16) == 0x02 && name && verbs_name(name))
        return TOPO_NIC_ROCE;
    if (cls >= 0 && (cls >> 16) == 0x02)
        return TOPO_NIC_ETH;
    return name ? TOPO_NIC_ETH : TOPO_NIC_UNKNOWN;
}

/* ids: the PCI class, vendor and device */
static void add_nic(struct nccl_reader *r, const char *busid, xmlNode *net, const long ids[3],
                    int node, int numa)
{
    struct topo_nic *n = topo_add_nic(r->t);
    if (!n)
        return;
    snprintf(n->pci, sizeof(n->pci), "%s", busid ? busid : "");
    n->node = node;
    n->numa = numa;
    n->cpuset = topo_strdup(r->cpuset);
    if (net) {
        char *name = attr(net, "name");
        long speed;
        if (int_attr(r, net, "speed", 0, 100000000, 10, &speed) == 0 && speed > 0)
            n->speed_gbps = (int)(speed / 1000);
        n->name = topo_text(name);
        xmlFree(name);
    }
    n->kind = kind_of(ids[0], ids[1], ids[2], n->name);
    n->pci_vendor = (int)ids[1];
    n->pci_device = (int)ids[2];
}

/* <nic> groups the ports of one NIC: one topo NIC per <net> port. */
static void read_nic(struct nccl_reader *r, xmlNode *nic, const char *busid, const long ids[3],
                     int node, int numa)
{
    int ports = 0;
    for (xmlNode *c = nic ? nic->children : NULL; c && !r->failed; c = c->next)
        if (is(c, "net")) {
            add_nic(r, busid, c, ids, node, numa);
            ports++;
        }
    if (!ports)
        add_nic(r, busid, NULL, ids, node, numa);
}

static void read_pci(struct nccl_reader *r, xmlNode *pci, int parent, int numa);

static void read_pci_children(struct nccl_reader *r, xmlNode *pci, int node, int numa)
{
    for (xmlNode *c = pci->children; c && !r->failed; c = c->next)
        if (is(c, "pci"))
            read_pci(r, c, node, numa);
}

static xmlNode *child(xmlNode *n, const char *name)
{
    for (xmlNode *c = n->children; c; c = c->next)
        if (is(c, name))
            return c;
    return NULL;
}

static void read_pci(struct nccl_reader *r, xmlNode *pci, int parent, int numa)
{
    char *busid = attr(pci, "busid");
    long cls, vendor, device, width;
    int gen;
    if (busid && !topo_valid_busid(busid)) /* virtual ones (ffff:ff:01.0) too */
        bad_attr(r, pci, "busid", busid, "expected a PCI bus id such as 0000:17:00.0");
    if (!r->failed && !int_attr(r, pci, "class", 0, 0xffffff, 16, &cls) &&
        !int_attr(r, pci, "vendor", 0, 0xffff, 16, &vendor) &&
        !int_attr(r, pci, "device", 0, 0xffff, 16, &device) &&
        !int_attr(r, pci, "link_width", 0, 32, 10, &width) && !parse_link_speed(r, pci, &gen)) {
        xmlNode *gpu = child(pci, "gpu"), *nic = child(pci, "nic");
        int has_pci_child = child(pci, "pci") != NULL;
        /* another vendor's GPU or accelerator (RCCL's dumps of AMD's, class 0x0380 or 0x1200):
         * counted and said, as the hwloc reader does, never read as an NVIDIA GPU */
        int foreign = vendor >= 0 && vendor != 0x10de &&
                      (gpu || (cls >= 0 && ((cls >> 16) == 0x03 || (cls >> 16) == 0x12)));
        if (foreign) {
            r->t->other_gpus++;
        } else if (gpu || (cls >= 0 && (cls >> 16) == 0x03)) {
            add_gpu(r, pci, gpu, topo_add_pnode(r->t, TOPO_PNODE_DEVICE, parent, 0, TOPO_UNKNOWN),
                    numa, device, gen, width);
        } else if (nic || (cls >= 0 && (cls >> 16) == 0x02) || is_ib_class(cls)) {
            const long ids[3] = {cls, vendor, device};
            int first = r->t->nnics;
            read_nic(r, nic, busid, ids,
                     topo_add_pnode(r->t, TOPO_PNODE_DEVICE, parent, 0, TOPO_UNKNOWN), numa);
            for (int i = first; i < r->t->nnics; i++) /* its ports share the link */
                r->t->nics[i].pcie_gbs = topo_pcie_link_gbs(gen, width);
        } else if (cls == 0x068000) {
            r->t->nvswitches++;
        } else if (has_pci_child || (cls >= 0 && (cls >> 8) == 0x0604)) {
            read_pci_children(
                r, pci, topo_add_pnode(r->t, TOPO_PNODE_BRIDGE, parent, 3, TOPO_UNKNOWN), numa);
        } else {
            r->t->unclassified_pci++;
        }
    }
    xmlFree(busid);
}

/*
 * NCCL writes affinity as Linux's cpumap ("00000000,00ffffff": 32-bit hex
 * words, most significant first); hwloc parses the same words with "0x".
 * Returns the bitmap (caller frees with hwloc_bitmap_free) or NULL if malformed.
 */
static hwloc_bitmap_t parse_affinity(const char *mask)
{
    char buf[1024];
    size_t o = 0;
    for (const char *w = mask; *w && o + 12 < sizeof(buf);) {
        size_t len = strcspn(w, ",");
        if (len == 0 || len > 8)
            return NULL;
        for (size_t k = 0; k < len; k++)
            if (!isxdigit((unsigned char)w[k]))
                return NULL;
        o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s0x%.*s", o ? "," : "", (int)len, w);
        w += len + (w[len] == ',');
    }
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set && (o == 0 || hwloc_bitmap_sscanf(set, buf) < 0)) {
        hwloc_bitmap_free(set);
        return NULL;
    }
    return set;
}

static void read_cpu(struct nccl_reader *r, xmlNode *cpu)
{
    long numa, family, model;
    if (int_attr(r, cpu, "numaid", 0, 4096, 10, &numa) ||
        int_attr(r, cpu, "familyid", 0, 4096, 10, &family) ||
        int_attr(r, cpu, "modelid", 0, 4096, 10, &model))
        return;
    struct topo *t = r->t;
    t->cpu.numa_nodes = (t->cpu.numa_nodes < 0 ? 0 : t->cpu.numa_nodes) + 1;
    char *vendor = attr(cpu, "vendor"), *aff = attr(cpu, "affinity");
    if (vendor && !t->cpu.vendor)
        t->cpu.vendor = topo_text(vendor);
    if (family >= 0 && model >= 0 && !t->cpu.model) {
        char buf[64];
        snprintf(buf, sizeof(buf), "family %ld model %ld", family, model);
        t->cpu.model = topo_strdup(buf);
    }
    hwloc_bitmap_t set = aff ? parse_affinity(aff) : NULL;
    if (aff && !set) {
        bad_attr(r, cpu, "affinity", aff, "expected a CPU mask such as \"00000000,00ffffff\"");
        xmlFree(vendor);
        xmlFree(aff);
        return;
    }
    char *cpuset = NULL;
    if (set) {
        t->cpu.pus = (t->cpu.pus < 0 ? 0 : t->cpu.pus) + hwloc_bitmap_weight(set);
        if (!hwloc_bitmap_iszero(set) && hwloc_bitmap_list_asprintf(&cpuset, set) < 0)
            cpuset = NULL;
        hwloc_bitmap_free(set);
    }
    r->cpuset = cpuset;
    xmlFree(vendor);
    xmlFree(aff);
    /* NCCL models a NUMA node as one CPU holding the root complex: one host bridge. */
    int loc = topo_add_pnode(t, TOPO_PNODE_LOCALITY, -1, 0, (int)numa);
    int hb = topo_add_pnode(t, TOPO_PNODE_HOSTBRIDGE, loc, 0, TOPO_UNKNOWN);
    for (xmlNode *c = cpu->children; c && !r->failed; c = c->next) {
        if (is(c, "pci"))
            read_pci(r, c, hb, (int)numa);
        else if (is(c, "nic")) { /* a NIC outside PCI: nothing known of it */
            const long ids[3] = {TOPO_UNKNOWN, TOPO_UNKNOWN, TOPO_UNKNOWN};
            read_nic(r, c, NULL, ids, hb, (int)numa);
        }
    }
    free(r->cpuset);
    r->cpuset = NULL;
}

static int gpu_by_busid(const struct topo *t, const char *busid)
{
    for (int i = 0; i < t->ngpus; i++)
        if (strcasecmp(t->gpus[i].pci, busid) == 0)
            return i;
    return -1;
}

/*
 * NVLink targets: a GPU of the file, an NVSwitch (class 0x068000, or a target
 * NCCL cannot resolve, which it assumes to be one), or a CPU (ignored, as
 * nvidia-smi's matrix does). A link to the GPU's own bus id is an edited-file
 * artefact (Azure NC A100 v4) and is ignored with a warning.
 */
static void resolve_nvlinks(struct nccl_reader *r)
{
    struct topo *t = r->t;
    int *fabric = util_xcalloc((size_t)t->ngpus + 1, sizeof(int));
    char **switches = util_xcalloc((size_t)r->nlinks + 1, sizeof(char *));
    int nswitch = 0, sentinel = 0, warned = 0;
    char shown[40];
    for (int i = 0; i < r->nlinks; i++) {
        struct pending_link *l = &r->links[i];
        int peer = gpu_by_busid(t, l->target);
        if (peer == l->gpu) {
            if (!warned++)
                util_warning("'%s': NVLink from a GPU to its own bus id %s ignored", r->name,
                             topo_text_into(l->target, shown, sizeof(shown)));
        } else if (peer >= 0) {
            t->nvlink[l->gpu * t->ngpus + peer] = l->count;
        } else if (l->tclass == 0x068001) {
            continue; /* a CPU */
        } else if ((l->tclass >> 16) == 0x03) {
            continue; /* a GPU this file does not hold (a dump of some of a node's GPUs): NCCL
                       * ignores the link (topo.cc, ncclTopoAddNvLinks), and so does this */
        } else {
            fabric[l->gpu] += l->count;
            int seen = 0;
            for (int k = 0; k < nswitch; k++)
                seen |= strcasecmp(switches[k], l->target) == 0;
            if (strncmp(l->target, "fffffff", 7) == 0)
                sentinel = 1;
            else if (!seen)
                switches[nswitch++] = l->target;
        }
    }
    topo_set_nvlink_totals(t, fabric);
    t->nvswitches = sentinel ? TOPO_UNKNOWN : t->nvswitches + nswitch;
    free(fabric);
    free(switches);
}

/* 1 when a <cpu> before c names the host hash. */
static int seen_host(xmlNode *root, xmlNode *c, const char *hash)
{
    for (xmlNode *p = root->children; p && p != c; p = p->next) {
        char *h = is(p, "cpu") ? attr(p, "host_hash") : NULL;
        int same = h && !strcmp(h, hash);
        xmlFree(h);
        if (same)
            return 1;
    }
    return 0;
}

int topo_read_nccl_xml(struct topo *t, const char *name, xmlDoc *doc)
{
    struct nccl_reader r = {.t = t, .name = name};
    xmlNode *root = xmlDocGetRootElement(doc);
    char *version = attr(root, "version");
    if (!version || strcmp(version, "1") != 0)
        bad_attr(&r, root, "version", version ? version : "",
                 "NCCL reads topology files of version 1 only");
    xmlFree(version);
    char *sysname = attr(root, "name");
    t->host = topo_text(sysname);
    xmlFree(sysname);
    /* NCCL fuses the topologies of every host of an NVLink domain into one dump (GB200 NVL72:
     * each <cpu> names its host by host_hash): one node's is its first host's */
    char *first = NULL;
    int hosts = 0;
    for (xmlNode *c = root->children; c && !r.failed; c = c->next) {
        if (!is(c, "cpu"))
            continue;
        char *hash = attr(c, "host_hash");
        if (hash && !first) {
            first = hash, hosts = 1;
        } else if (hash && strcmp(hash, first)) {
            hosts += !seen_host(root, c, hash);
            xmlFree(hash);
            continue;
        } else if (hash) {
            xmlFree(hash);
        }
        read_cpu(&r, c);
    }
    char shown[40];
    if (hosts > 1 && !r.failed)
        util_info("'%s' holds %d hosts (an NVLink domain's fused dump): this node is its first, "
                  "host_hash %s",
                  name, hosts, topo_text_into(first, shown, sizeof(shown)));
    xmlFree(first);
    if (!r.failed) {
        topo_alloc_nvlink(t);
        if (r.any_nvlink) {
            resolve_nvlinks(&r);
            t->nvlink_known = 1;
        } else if (topo_gpus_lack_nvlink(t)) {
            topo_set_nvlink_totals(t, NULL);
            t->nvlink_known = 1;
        } else if (t->nvswitches == 0) {
            t->nvswitches = TOPO_UNKNOWN; /* NCCL detects NVLink live: the file is silent */
        }
    }
    free(r.links);
    return r.failed ? UTIL_EINVAL : 0;
}
