/* SPDX-License-Identifier: MIT */
/*
 * NCCL's topology file (NCCL_TOPO_FILE) from a topology: the PCIe tree NCCL cannot see inside a
 * virtual machine. NCCL's XML reader (src/graph/xml.cc) is no general XML parser: no declaration,
 * attributes separated by one space, values in double quotes with no escapes, names and values
 * under 256 characters, elements system > cpu > pci (> pci ...) > nic > net. The file holds what
 * NCCL fuses with what it detects: a <cpu> per NUMA node, one <pci> per PCIe switch (its upstream
 * port, with a virtual bus id as cloud providers write them: ffff:ff:DD.0), the GPUs and NICs by
 * their real bus ids, which NCCL matches with the devices it finds.
 */
#include "topo/internal.h"
#include "topo/topo.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct writer {
    const struct topo *t;
    struct util_buf *out;
    int switches; /* virtual bus ids handed out */
};

/* A device's link as gen and width (0: unknown): a GPU's as topo_gpu_pcie_link takes it, a
 * NIC's from the rate its source gives. */
struct link {
    int gen, width;
};

static struct link nic_link(const struct topo_nic *n)
{
    struct link l = {0, 0};
    topo_pcie_rate(n->pcie_gbs, &l.gen, &l.width);
    return l;
}

static struct link gpu_link(const struct topo_gpu *g)
{
    struct link l;
    topo_gpu_pcie_link(g, &l.gen, &l.width);
    return l;
}

/* The link's attributes in NCCL's spellings of the rates it knows (kvDictPciGen). Where the
 * source gives none, what NCCL itself assumes when sysfs cannot say: gen 3, 16 lanes (NCCL needs
 * both on every switch it keeps). */
static void link_attrs(struct util_buf *out, struct link l)
{
    static const char *const speeds[] = {"8.0 GT/s PCIe", "2.5 GT/s PCIe",  "5.0 GT/s PCIe",
                                         "8.0 GT/s PCIe", "16.0 GT/s PCIe", "32.0 GT/s PCIe",
                                         "64.0 GT/s PCIe"};
    util_buf_addf(out, " link_speed=\"%s\" link_width=\"%d\"", speeds[l.gen],
                  l.width ? l.width : 16);
}

static int gpu_at(const struct topo *t, int node)
{
    for (int i = 0; i < t->ngpus; i++)
        if (t->gpus[i].node == node)
            return i;
    return -1;
}

static int nic_at(const struct topo *t, int node)
{
    for (int i = 0; i < t->nnics; i++)
        if (t->nics[i].node == node)
            return i;
    return -1;
}

/*
 * 1 when node stands for a PCIe switch. A reader that keeps whole switches (NCCL's XML, specs)
 * gives each 3 bridges; hwloc gives every bridge (root port, a switch's upstream and downstream
 * ports) its own node, and a switch is where the tree forks: a bridge with several children
 * (downstream ports, or devices). A chain of single-child bridges is one PCIe link.
 */
static int is_switch(const struct topo *t, int node)
{
    if (t->nodes[node].kind != TOPO_PNODE_BRIDGE)
        return 0;
    int below = 0;
    char first[16] = "";
    for (int c = 0; c < t->nnodes; c++) {
        if (t->nodes[c].parent != node)
            continue;
        /* the functions of one device (a NIC's ports, dddd:bb:dd.f) are one device to NCCL */
        int g = gpu_at(t, c), n = g < 0 ? nic_at(t, c) : -1;
        const char *pci = g >= 0 ? t->gpus[g].pci : n >= 0 ? t->nics[n].pci : "";
        if (pci[0] && first[0] && !strncmp(pci, first, 10))
            continue;
        if (pci[0] && !first[0])
            snprintf(first, sizeof(first), "%s", pci);
        below++;
    }
    return t->nodes[node].bridges >= 3 || below > 1;
}

static int below(const struct topo *t, int node, int n)
{
    for (; n >= 0; n = t->nodes[n].parent)
        if (n == node)
            return 1;
    return 0;
}

/* Its rate in GB/s, -1 unknown (16 lanes where the width is not known). */
static double link_gbs(struct link l)
{
    return topo_pcie_link_gbs(l.gen, l.width ? l.width : 16);
}

/* The fastest link of a device below node, GPU or NIC: a switch takes its devices' rate. */
static struct link link_below(const struct topo *t, int node)
{
    struct link best = {0, 0};
    for (int i = 0; i < t->ngpus + t->nnics; i++) {
        int gpu = i < t->ngpus;
        const struct topo_gpu *g = gpu ? &t->gpus[i] : NULL;
        const struct topo_nic *n = gpu ? NULL : &t->nics[i - t->ngpus];
        struct link l = gpu ? gpu_link(g) : nic_link(n);
        if (below(t, node, gpu ? g->node : n->node) && link_gbs(l) > link_gbs(best))
            best = l;
    }
    return best;
}

static void indent(struct writer *w, int depth)
{
    for (int i = 0; i < depth; i++)
        util_buf_adds(w->out, "  ");
}

static void children(struct writer *w, int node, int depth);

/* A NIC's PCI ids, which say what the class cannot: an EFA device (Amazon's vendor id) or a
 * Slingshot Cassini is an Ethernet-class device to PCI. Where the source gave no ids (a topology
 * JSON), an EFA NIC still gets Amazon's vendor id, all that marks one; a Cassini's device id is
 * not invented, so such a NIC reads back as Ethernet. */
static void nic_ids(struct util_buf *out, const struct topo_nic *nic)
{
    int vendor = nic->pci_vendor, device = nic->pci_device; /* 16 bits, or -1: the readers' */
    if (vendor < 0 && nic->kind == TOPO_NIC_EFA)
        vendor = 0x1d0f;
    if (vendor >= 0)
        util_buf_addf(out, " vendor=\"0x%04x\"", vendor);
    if (vendor >= 0 && device >= 0)
        util_buf_addf(out, " device=\"0x%04x\"", device);
}

static void device(struct writer *w, int node, int depth)
{
    const struct topo *t = w->t;
    int g = gpu_at(t, node), n = g < 0 ? nic_at(t, node) : -1;
    if (g < 0 && n < 0)
        return;
    /* the ports of one NIC share its bus id: NCCL reads a device once */
    for (int i = 0; n > 0 && i < n; i++)
        if (!strcmp(t->nics[i].pci, t->nics[n].pci))
            return;
    struct link l = g >= 0 ? gpu_link(&t->gpus[g]) : nic_link(&t->nics[n]);
    const char *cls = g >= 0                           ? "0x030200"
                      : t->nics[n].kind == TOPO_NIC_IB ? "0x020700"
                                                       : "0x020000";
    indent(w, depth);
    util_buf_addf(w->out, "<pci busid=\"%s\" class=\"%s\"",
                  g >= 0 ? t->gpus[g].pci : t->nics[n].pci, cls);
    if (n >= 0)
        nic_ids(w->out, &t->nics[n]);
    link_attrs(w->out, l);
    util_buf_adds(w->out, "/>\n");
}

static void node_out(struct writer *w, int node, int depth)
{
    const struct topo *t = w->t;
    if (t->nodes[node].kind == TOPO_PNODE_DEVICE) {
        device(w, node, depth);
    } else if (is_switch(t, node)) {
        int k = w->switches++;
        indent(w, depth);
        util_buf_addf(w->out, "<pci busid=\"ffff:%02x:%02x.0\" class=\"0x060400\"", 0xff - k / 32,
                      k % 32);
        link_attrs(w->out, link_below(t, node));
        util_buf_adds(w->out, ">\n");
        children(w, node, depth + 1);
        indent(w, depth);
        util_buf_adds(w->out, "</pci>\n");
    } else { /* host bridges, root and downstream ports: NCCL's file has no such level */
        children(w, node, depth);
    }
}

static void children(struct writer *w, int node, int depth)
{
    for (int c = 0; c < w->t->nnodes; c++)
        if (w->t->nodes[c].parent == node)
            node_out(w, c, depth);
}

/* "0-3,8" as Linux's cpumap: 32-bit hex words, most significant first ("00000000,0000010f"). */
static void affinity(struct util_buf *out, const char *list)
{
    unsigned words[64] = {0};
    int top = 0;
    for (const char *p = list; p && *p;) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0 || a >= 64 * 32)
            return;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        if (b < a || b >= 64 * 32)
            return;
        for (long c = a; c <= b; c++)
            words[c / 32] |= 1u << (c % 32);
        top = (int)(b / 32) > top ? (int)(b / 32) : top;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return;
    }
    util_buf_adds(out, " affinity=\"");
    for (int i = top; i >= 0; i--)
        util_buf_addf(out, "%08x%s", words[i], i ? "," : "");
    util_buf_adds(out, "\"");
}

/* The CPUs in a list such as "0-3,8" (0 when it does not parse). */
static long cpus_in(const char *list)
{
    long n = 0;
    for (const char *p = list; p && *p;) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p)
            return 0;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        n += b >= a ? b - a + 1 : 0;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return 0;
    }
    return n;
}

/* The CPUs near the devices of a locality: the widest set its devices give (a device placed in
 * a part of the NUMA node, an L3 group, gives that part). */
static const char *cpuset_of(const struct topo *t, int locality)
{
    const char *best = NULL;
    for (int i = 0; i < t->ngpus + t->nnics; i++) {
        int node = i < t->ngpus ? t->gpus[i].node : t->nics[i - t->ngpus].node;
        const char *set = i < t->ngpus ? t->gpus[i].cpuset : t->nics[i - t->ngpus].cpuset;
        for (int n = node; n >= 0; n = t->nodes[n].parent)
            if (n == locality && set && cpus_in(set) > cpus_in(best))
                best = set;
    }
    return best;
}

/*
 * The NUMA id NCCL is told for locality l. NCCL makes a CPU node per <cpu> element, never merging
 * two of one id, so localities of one NUMA node share one element (an AMD node places devices in
 * L3 groups of a NUMA node). A locality of no single NUMA node (a package holding two, as Intel's
 * SNC exports place a NIC) gets an id no NUMA node has: the matrix calls it SYS to every other
 * locality, and so will NCCL; an id counted on from the one before could be a real node's. Past
 * the machine's NUMA count too: a NUMA node without a device is no locality (a Dell R910's
 * groups of nodes {0, 2} and {1, 3} were written as nodes 0 and 1).
 */
static int numa_id(const struct topo *t, int l)
{
    if (t->nodes[l].numa >= 0)
        return t->nodes[l].numa;
    int top = t->cpu.numa_nodes - 1, k = 0;
    for (int i = 0; i < t->nnodes; i++)
        if (t->nodes[i].kind == TOPO_PNODE_LOCALITY) {
            top = t->nodes[i].numa > top ? t->nodes[i].numa : top;
            k += i < l && t->nodes[i].numa < 0;
        }
    return top + 1 + k;
}

/* 1 when a locality before l has its NUMA id: l's devices went into that one's element. */
static int numa_written(const struct topo *t, int l)
{
    for (int i = 0; i < l; i++)
        if (t->nodes[i].kind == TOPO_PNODE_LOCALITY && numa_id(t, i) == numa_id(t, l))
            return 1;
    return 0;
}

int topo_write_nccl_xml(const struct topo *t, struct util_buf *out)
{
    for (int i = 0; i < t->ngpus + t->nnics; i++) {
        const char *pci = i < t->ngpus ? t->gpus[i].pci : t->nics[i - t->ngpus].pci;
        if (!topo_valid_busid(pci))
            return util_error("%s %d has no PCI bus id, and NCCL matches the devices of a topology "
                              "file by bus id: map the node itself (topotune topo --nccl-xml on "
                              "it, or an hwloc export: lstopo --of xml)",
                              i < t->ngpus ? "GPU" : "NIC", i < t->ngpus ? i : i - t->ngpus),
                   UTIL_EINVAL;
    }
    /* a topology JSON keeps the devices, not the PCI tree they hang in: the file would hold no
     * device at all, and NCCL would take it for this node's whole topology */
    if (t->ngpus + t->nnics > 0 && t->nnodes == 0)
        return util_error("the input has no PCI tree (a topology JSON keeps the devices, not the "
                          "bridges they sit under), which NCCL's topology file is: give the "
                          "hwloc or NCCL XML it came from, or map the node itself"),
               UTIL_EINVAL;
    struct writer w = {t, out, 0};
    /* a comment ends at "--" for a strict XML reader: a class id holding one is not named */
    util_buf_addf(out, "<!-- NCCL_TOPO_FILE written by topotune for node class %s -->\n",
                  t->class_id && !strstr(t->class_id, "--") ? t->class_id : "unknown");
    util_buf_adds(out, "<system version=\"1\">\n");
    for (int l = 0; l < t->nnodes; l++) {
        if (t->nodes[l].kind != TOPO_PNODE_LOCALITY || numa_written(t, l))
            continue;
        int id = numa_id(t, l);
        const char *set = NULL; /* the widest of the id's localities */
        for (int m = l; m < t->nnodes; m++)
            if (t->nodes[m].kind == TOPO_PNODE_LOCALITY && numa_id(t, m) == id &&
                cpus_in(cpuset_of(t, m)) > cpus_in(set))
                set = cpuset_of(t, m);
        util_buf_addf(out, "  <cpu numaid=\"%d\"", id);
        affinity(out, set);
        const char *vendor = t->cpu.vendor;
        if (vendor && (!strcmp(vendor, "GenuineIntel") || !strcmp(vendor, "AuthenticAMD")))
            util_buf_addf(out, " arch=\"x86_64\" vendor=\"%s\"", vendor);
        util_buf_adds(out, ">\n");
        for (int m = l; m < t->nnodes; m++)
            if (t->nodes[m].kind == TOPO_PNODE_LOCALITY && numa_id(t, m) == id)
                children(&w, m, 2);
        util_buf_adds(out, "  </cpu>\n");
    }
    util_buf_adds(out, "</system>\n");
    return 0;
}
