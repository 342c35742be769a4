/* SPDX-License-Identifier: MIT */
/* Reads a hwloc topology (live or from an XML export) into struct topo. */
#include "topo/internal.h"
#include "util/error.h"
#include "util/log.h"
#include "util/mem.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCI_VENDOR_NVIDIA 0x10de
#define PCI_VENDOR_AMAZON 0x1d0f

static int is_io(hwloc_obj_t o)
{
    return o->type == HWLOC_OBJ_BRIDGE || o->type == HWLOC_OBJ_PCI_DEVICE ||
           o->type == HWLOC_OBJ_OS_DEVICE;
}

/* The NUMA nodes of the topology being read that hold a GPU's memory, not the CPUs': hwloc 2.10
 * on keeps Grace's GPU-memory nodes (subtype GPUMemory, the Grace cores their cpuset), and an
 * hwloc 1.x export of POWER9 lists V100 memory as NUMA nodes without a core. They are neither
 * the node's NUMA count nor what a device is local to. (An empty cpuset says so in a 1.x export
 * of a machine with NVIDIA GPUs, or POWER9's from 252, only: a 2.x one restricted to some cores,
 * a job's cgroup, keeps DRAM nodes without a core, and a 1.x one of a machine without them,
 * Itanium's or KNL's, memory of its own.) Set while topo_read_hwloc runs. */
static hwloc_bitmap_t gpu_memory;

static int is_gpu_pci(hwloc_obj_t p);

static void find_gpu_memory(hwloc_topology_t h)
{
    const char *version = hwloc_obj_get_info_by_name(hwloc_get_root_obj(h), "hwlocVersion");
    int v1 = version && !strncmp(version, "1.", 2), nvidia = 0;
    for (hwloc_obj_t p = NULL; v1 && !nvidia && (p = hwloc_get_next_pcidev(h, p));)
        nvidia = is_gpu_pci(p);
    gpu_memory = hwloc_bitmap_alloc();
    /* POWER9 numbers its GPUs' memory from 252 (an export without I/O lists no GPU) */
    for (hwloc_obj_t n = NULL; (n = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_NUMANODE, n));)
        if ((n->subtype && !strcmp(n->subtype, "GPUMemory")) ||
            (v1 && (nvidia || n->os_index >= 252) &&
             (!n->cpuset || hwloc_bitmap_iszero(n->cpuset))))
            hwloc_bitmap_set(gpu_memory, n->os_index);
}

static int single_numa(hwloc_obj_t o)
{
    if (!o->nodeset)
        return TOPO_UNKNOWN;
    hwloc_bitmap_t cpu = hwloc_bitmap_dup(o->nodeset);
    if (gpu_memory)
        hwloc_bitmap_andnot(cpu, cpu, gpu_memory);
    int one = hwloc_bitmap_weight(cpu) == 1 ? hwloc_bitmap_first(cpu) : TOPO_UNKNOWN;
    hwloc_bitmap_free(cpu);
    return one;
}

/* The tree node of an object, made on first use and remembered in userdata. */
static int node_of(struct topo *t, hwloc_obj_t o)
{
    if (!o)
        return -1;
    if (o->userdata)
        return (int)(intptr_t)o->userdata - 1;
    int idx;
    if (!is_io(o)) {
        idx = topo_add_pnode(t, TOPO_PNODE_LOCALITY, -1, 0, single_numa(o));
    } else {
        int parent = node_of(t, o->parent);
        if (o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST)
            idx = topo_add_pnode(t, TOPO_PNODE_HOSTBRIDGE, parent, 0, TOPO_UNKNOWN);
        else if (o->type == HWLOC_OBJ_BRIDGE)
            idx = topo_add_pnode(t, TOPO_PNODE_BRIDGE, parent, 1, TOPO_UNKNOWN);
        else
            idx = topo_add_pnode(t, TOPO_PNODE_DEVICE, parent, 0, TOPO_UNKNOWN);
    }
    if (idx >= 0)
        o->userdata = (void *)(intptr_t)(idx + 1);
    return idx;
}

static void format_busid(hwloc_obj_t pci, char out[16])
{
    snprintf(out, 16, "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain & 0xffffu,
             pci->attr->pcidev.bus, pci->attr->pcidev.dev, pci->attr->pcidev.func);
}

static void set_locality(hwloc_topology_t h, hwloc_obj_t o, int *numa, char **cpuset)
{
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(h, o);
    if (!anc)
        return;
    *numa = single_numa(anc);
    if (anc->cpuset && !hwloc_bitmap_iszero(anc->cpuset)) {
        char *s = NULL;
        if (hwloc_bitmap_list_asprintf(&s, anc->cpuset) >= 0)
            *cpuset = s;
    }
}

static const char *osdev_info(hwloc_obj_t pci, const char *key)
{
    for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
        const char *v = hwloc_obj_get_info_by_name(c, key);
        if (v)
            return v;
    }
    return NULL;
}

static int cmp_busid(const void *a, const void *b)
{
    hwloc_obj_t x = *(hwloc_obj_t const *)a, y = *(hwloc_obj_t const *)b;
    unsigned long long kx = ((unsigned long long)x->attr->pcidev.domain << 24) |
                            ((unsigned)x->attr->pcidev.bus << 16) |
                            ((unsigned)x->attr->pcidev.dev << 8) | x->attr->pcidev.func;
    unsigned long long ky = ((unsigned long long)y->attr->pcidev.domain << 24) |
                            ((unsigned)y->attr->pcidev.bus << 16) |
                            ((unsigned)y->attr->pcidev.dev << 8) | y->attr->pcidev.func;
    return kx < ky ? -1 : kx > ky;
}

static int is_gpu_pci(hwloc_obj_t p)
{
    unsigned cls = p->attr->pcidev.class_id;
    return p->attr->pcidev.vendor_id == PCI_VENDOR_NVIDIA && (cls == 0x0300 || cls == 0x0302);
}

#define PCI_VENDOR_AMD   0x1002
#define PCI_VENDOR_INTEL 0x8086

/* The device's link rate in GB/s as the export records it, or -1: none, or one no PCIe link
 * carries (past gen 6 x16: a damaged or forged export, never priced). */
static double link_gbs(hwloc_obj_t p)
{
    double v = p->attr->pcidev.linkspeed;
    return v > 0 && v <= 1.05 * topo_pcie_link_gbs(6, 16) ? v : -1;
}

/* AMD's Instinct cards that show as VGA (class 0x0300) in an export without a GPU stack of
 * AMD's (hwloc 1.11 on LLNL's Corona: MI50s, OS devices card*, renderD*, controlD* only): Vega 10
 * (MI25) and Vega 20 (MI50, MI60). By device id: integrated graphics (an AMD APU's, an Intel
 * CPU's) are VGA with a render node too, and no GPU a job runs on. */
static int is_instinct_vga(unsigned vendor, unsigned device)
{
    return vendor == PCI_VENDOR_AMD &&
           ((device >= 0x6860 && device <= 0x686f) || (device >= 0x66a0 && device <= 0x66af));
}

/* A GPU of another vendor: AMD's or Intel's compute classes (display other, 3D, processing
 * accelerator), AMD's Instinct cards of VGA class, or any device a GPU stack other than NVIDIA's
 * names (rsmi*, ze*, opencl*). A board's display controller (ASPEED's, class 0x0300, its OS
 * devices card*) and integrated graphics are none. */
static int is_other_gpu_pci(hwloc_obj_t p)
{
    unsigned v = p->attr->pcidev.vendor_id, cls = p->attr->pcidev.class_id;
    if (v == PCI_VENDOR_NVIDIA)
        return 0;
    /* AMD's Instinct cards are display (0x0380) or processing accelerators (0x1200); Intel's
     * data-center GPUs are display class, its 0x1200 devices FPGAs and other accelerators */
    if ((v == PCI_VENDOR_AMD || v == PCI_VENDOR_INTEL) && (cls == 0x0380 || cls == 0x0302))
        return 1;
    if (v == PCI_VENDOR_AMD && cls == 0x1200)
        return 1;
    if (cls == 0x0300 && is_instinct_vga(v, p->attr->pcidev.device_id))
        return 1;
    for (hwloc_obj_t c = p->io_first_child; c; c = c->next_sibling)
        if (c->type == HWLOC_OBJ_OS_DEVICE && c->name &&
            (!strncmp(c->name, "rsmi", 4) || !strncmp(c->name, "ze", 2) ||
             !strncmp(c->name, "opencl", 6)))
            return 1;
    return 0;
}

/* By class, or by hwloc's subtype: the DGX-2 export has one NVSwitch whose PCI ids read as zero. */
static int is_nvswitch_pci(hwloc_obj_t p)
{
    if (p->subtype && strcmp(p->subtype, "NVSwitch") == 0)
        return 1;
    return p->attr->pcidev.vendor_id == PCI_VENDOR_NVIDIA && p->attr->pcidev.class_id == 0x0680;
}

static void add_gpu_from_pci(struct topo *t, hwloc_topology_t h, hwloc_obj_t p)
{
    struct topo_gpu *g = topo_add_gpu(t);
    if (!g)
        return;
    format_busid(p, g->pci);
    const char *model = osdev_info(p, "GPUModel");
    const struct topo_gpu_info *gi = model ? topo_gpu_info_by_name(model) : NULL;
    /* the PCI device's name where the driver's says nothing we know (older drivers print a
     * bare "A40"), so that every later lookup by name finds the model */
    if (!gi && (gi = topo_gpu_info_by_device(p->attr->pcidev.device_id)))
        model = gi->name;
    if (!model)
        model = hwloc_obj_get_info_by_name(p, "PCIDevice");
    g->model = topo_text(model);
    const char *mem = osdev_info(p, "CUDAGlobalMemorySize"); /* KiB */
    long long kib = mem ? strtoll(mem, NULL, 10) : -1;
    if (kib >= 0 && kib / 1024 <= (1LL << 30)) /* up to a PiB: anything else is not a GPU's */
        g->memory_mib = kib / 1024;
    if (gi)
        g->sm = gi->sm;
    g->pcie_gbs = link_gbs(p);
    g->node = node_of(t, p);
    set_locality(h, p, &g->numa, &g->cpuset);
}

/* GPUs from OS devices when their PCI objects were filtered out (prefer nvml*, then cuda*). */
static void add_gpus_from_osdevs(struct topo *t, hwloc_topology_t h)
{
    static const char *prefixes[] = {"nvml", "cuda"};
    for (int k = 0; k < 2 && t->ngpus == 0; k++) {
        for (hwloc_obj_t o = NULL; (o = hwloc_get_next_osdev(h, o));) {
            if (!o->name || strncmp(o->name, prefixes[k], 4) != 0)
                continue;
            struct topo_gpu *g = topo_add_gpu(t);
            if (!g)
                return;
            const char *model = hwloc_obj_get_info_by_name(o, "GPUModel");
            g->model = topo_text(model);
            const struct topo_gpu_info *gi = topo_gpu_info_by_name(model);
            if (gi)
                g->sm = gi->sm;
            if (o->parent && o->parent->type == HWLOC_OBJ_PCI_DEVICE) {
                format_busid(o->parent, g->pci);
                g->node = node_of(t, o->parent);
            }
            set_locality(h, o, &g->numa, &g->cpuset);
        }
    }
}

/* InfiniBand adapters' PCI classes: network/InfiniBand, serial bus/InfiniBand (ConnectX-2/3). */
static int is_ib_class(unsigned cls)
{
    return cls == 0x0207 || cls == 0x0c06;
}

/* Bytes of a netdev's link-layer address: 20 for IPoIB (QP number and port GID), 6 for Ethernet. */
static int address_bytes(hwloc_obj_t netdev)
{
    const char *a = hwloc_obj_get_info_by_name(netdev, "Address");
    int n = a && *a ? 1 : 0;
    for (; a && *a; a++)
        n += *a == ':';
    return n;
}

/* A netdev of the device's first port: hwloc says which port when it knows. */
static int on_port1(hwloc_obj_t netdev)
{
    const char *port = hwloc_obj_get_info_by_name(netdev, "Port");
    return !port || strcmp(port, "1") == 0;
}

/*
 * 1 when port 1's GID 0 has the form RoCE gives it, fe80::/64 with an interface
 * id made from the port's MAC address (EUI-64: ff:fe in its middle); InfiniBand
 * puts the port GUID there. 0 when it has the other form, -1 when unknown.
 */
static int gid_from_mac(hwloc_obj_t ofdev)
{
    const char *gid = hwloc_obj_get_info_by_name(ofdev, "Port1GID0");
    unsigned g[8];
    char tail;
    if (!gid || sscanf(gid, "%x:%x:%x:%x:%x:%x:%x:%x%c", &g[0], &g[1], &g[2], &g[3], &g[4], &g[5],
                       &g[6], &g[7], &tail) != 8)
        return -1;
    return (g[5] & 0xff) == 0xff && (g[6] >> 8) == 0xfe;
}

/*
 * InfiniBand or RoCE from what the hardware says. A LID of 0 says nothing (no
 * subnet manager has run yet, or RoCE); an IPoIB netdev on the port or a LID a
 * subnet manager assigned says InfiniBand; an Ethernet netdev says RoCE; then
 * GID 0's form; last the PCI class. *netdev becomes the port's netdev that
 * matches, IPoIB first, when there is one.
 */
static enum topo_nic_kind rdma_kind(hwloc_obj_t pci, hwloc_obj_t ofdev, hwloc_obj_t *netdev)
{
    hwloc_obj_t ipoib = NULL, eth = NULL;
    for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
        if (c->type != HWLOC_OBJ_OS_DEVICE || c->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK ||
            !on_port1(c))
            continue;
        int bytes = address_bytes(c);
        if (!ipoib && bytes == 20)
            ipoib = c;
        else if (!eth && bytes == 6)
            eth = c;
    }
    if (ipoib || eth)
        *netdev = ipoib ? ipoib : eth;
    const char *lid = hwloc_obj_get_info_by_name(ofdev, "Port1LID");
    if (ipoib || (lid && strtoul(lid, NULL, 0) != 0)) /* RoCE ports never get a LID */
        return TOPO_NIC_IB;
    int roce_gid = gid_from_mac(ofdev);
    if (eth || roce_gid == 1)
        return TOPO_NIC_ROCE;
    if (roce_gid == 0)
        return TOPO_NIC_IB;
    return is_ib_class(pci->attr->pcidev.class_id) ? TOPO_NIC_IB : TOPO_NIC_UNKNOWN;
}

static enum topo_nic_kind nic_kind(hwloc_obj_t pci, hwloc_obj_t ofdev, hwloc_obj_t *netdev)
{
    if (pci->attr->pcidev.vendor_id == PCI_VENDOR_AMAZON)
        return ofdev ? TOPO_NIC_EFA : TOPO_NIC_ETH;
    if (topo_is_cassini(pci->attr->pcidev.vendor_id, pci->attr->pcidev.device_id))
        return TOPO_NIC_CXI;
    if (ofdev)
        return rdma_kind(pci, ofdev, netdev);
    if (is_ib_class(pci->attr->pcidev.class_id))
        return TOPO_NIC_IB;
    if (*netdev && (address_bytes(*netdev) == 20 ||
                    ((*netdev)->name && strncmp((*netdev)->name, "ib", 2) == 0)))
        return TOPO_NIC_IB;
    return TOPO_NIC_ETH;
}

/* RDMA devices the export gives without their PCI device (an export with PCI filtered out, or
 * edited) are no NICs here: the model prices the node without them. Said, once. */
static void warn_nics_unplaced(const struct topo *t, hwloc_topology_t h)
{
    int n = 0;
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_osdev(h, o));)
        n += o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS &&
             (!o->parent || o->parent->type != HWLOC_OBJ_PCI_DEVICE);
    if (n)
        util_warning("'%s': %d RDMA device(s) without a PCI device in the export are left out: "
                     "the NICs seen are %d (export with PCI devices: lstopo --of xml, hwloc 2 "
                     "keeps them by default)",
                     t->source_path ? t->source_path : "topology", n, t->nnics);
}

static void add_nic_from_pci(struct topo *t, hwloc_topology_t h, hwloc_obj_t p)
{
    hwloc_obj_t of = NULL, net = NULL;
    for (hwloc_obj_t c = p->io_first_child; c; c = c->next_sibling) {
        if (c->type != HWLOC_OBJ_OS_DEVICE)
            continue;
        if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && !of)
            of = c;
        if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && !net)
            net = c;
    }
    if (!of && !net)
        return;
    struct topo_nic *n = topo_add_nic(t);
    if (!n)
        return;
    n->kind = nic_kind(p, of, &net);
    n->pci_vendor = p->attr->pcidev.vendor_id;
    n->pci_device = p->attr->pcidev.device_id;
    n->pcie_gbs = link_gbs(p);
    n->name = topo_text(of ? of->name : net->name);
    n->netdev = topo_text(net ? net->name : NULL);
    format_busid(p, n->pci);
    const char *state = of ? hwloc_obj_get_info_by_name(of, "Port1State") : NULL;
    if (state) /* ibv port states: 4 is ACTIVE */
        n->state = topo_strdup(strcmp(state, "4") == 0 ? "up" : "down");
    n->node = node_of(t, p);
    set_locality(h, p, &n->numa, &n->cpuset);
}

static int gpu_of_obj(const struct topo *t, hwloc_obj_t o)
{
    if (o && o->type == HWLOC_OBJ_OS_DEVICE)
        o = o->parent;
    if (!o || o->type != HWLOC_OBJ_PCI_DEVICE || !o->userdata)
        return -1;
    int node = (int)(intptr_t)o->userdata - 1;
    for (int i = 0; i < t->ngpus; i++)
        if (t->gpus[i].node == node)
            return i;
    return -1;
}

/*
 * hwloc's NVLinkBandwidth matrix holds MB/s between GPUs, NVSwitches and CPUs;
 * dividing by the GPU generation's per-link rate gives link counts.
 */
static void read_nvlink_distances(struct topo *t, hwloc_topology_t h)
{
    struct hwloc_distances_s *d = NULL;
    unsigned nr = 1;
    if (hwloc_distances_get_by_name(h, "NVLinkBandwidth", &nr, &d, 0) || nr == 0)
        return;
    int *fabric = util_xcalloc((size_t)t->ngpus + 1, sizeof(int));
    int ok = fabric != NULL, matched = 0;
    for (unsigned i = 0; ok && i < d->nbobjs; i++) {
        int gi = gpu_of_obj(t, d->objs[i]);
        const struct topo_gpu_info *info =
            gi >= 0 ? topo_gpu_info_by_name(t->gpus[gi].model) : NULL;
        if (gi < 0)
            continue;
        matched++;
        if (!info || info->link_mbs <= 0) {
            util_warning("NVLink bandwidth given for GPU%d (%s) but its per-link rate is unknown: "
                         "NVLink counts left unknown",
                         gi, t->gpus[gi].model ? t->gpus[gi].model : "?");
            ok = 0;
            break;
        }
        for (unsigned j = 0; j < d->nbobjs; j++) {
            hwloc_uint64_t bw = d->values[i * d->nbobjs + j];
            if (i == j || bw == 0)
                continue;
            double count = (double)bw / info->link_mbs;
            if (count > TOPO_MAX_NVLINKS) { /* also keeps the sums below from overflowing */
                util_warning(
                    "NVLink bandwidth %llu MB/s given for GPU%d is more than %d links of %s: "
                    "NVLink counts left unknown",
                    (unsigned long long)bw, gi, TOPO_MAX_NVLINKS, info->name);
                ok = 0;
                break;
            }
            int links = (int)lround(count);
            int gj = gpu_of_obj(t, d->objs[j]);
            if (gj >= 0)
                t->nvlink[gi * t->ngpus + gj] = links;
            else if (d->objs[j]->type == HWLOC_OBJ_PCI_DEVICE && is_nvswitch_pci(d->objs[j]))
                fabric[gi] += links;
        }
    }
    /* a matrix of objects none of which is a GPU here (GPUs known by OS devices without a PCI
     * parent, an edited export) says nothing of these GPUs: unknown, not "none" */
    if (ok && !matched && t->ngpus)
        util_warning("the export's NVLinkBandwidth matrix names none of its %d GPU(s): NVLink "
                     "left unknown",
                     t->ngpus);
    if (ok && (matched || !t->ngpus)) {
        topo_set_nvlink_totals(t, fabric);
        t->nvlink_known = 1;
    } else { /* nothing half-read */
        memset(t->nvlink, 0, (size_t)(t->ngpus ? t->ngpus * t->ngpus : 1) * sizeof(int));
    }
    free(fabric);
    hwloc_distances_release(h, d);
}

static void read_cpu(struct topo *t, hwloc_topology_t h)
{
    t->cpu.sockets = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PACKAGE);
    t->cpu.numa_nodes = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE) -
                        (gpu_memory ? hwloc_bitmap_weight(gpu_memory) : 0);
    t->cpu.cores = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_CORE);
    t->cpu.pus = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PU);
    hwloc_obj_t pkg = hwloc_get_obj_by_type(h, HWLOC_OBJ_PACKAGE, 0);
    hwloc_obj_t root = hwloc_get_root_obj(h);
    const char *vendor = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUVendor") : NULL;
    const char *model = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
    if (!model)
        model = hwloc_obj_get_info_by_name(root, "CPUModel");
    if (!vendor && model && strncmp(model, "POWER", 5) == 0)
        vendor = "IBM";
    t->cpu.vendor = topo_text(vendor);
    t->cpu.model = topo_model_squeeze(topo_text(model));
}

/* Versions end up in generated scripts: kept only when they look like one (else unknown). */
static char *version_or_null(const char *v)
{
    return v && topo_valid_version(v) ? topo_strdup(v) : NULL;
}

int topo_read_hwloc(struct topo *t, hwloc_topology_t h, int live)
{
    find_gpu_memory(h);
    read_cpu(t, h);
    hwloc_obj_t root = hwloc_get_root_obj(h);
    if (!live) {
        t->host = topo_text(hwloc_obj_get_info_by_name(root, "HostName"));
        t->software.hwloc = version_or_null(hwloc_obj_get_info_by_name(root, "hwlocVersion"));
        t->software.kernel = version_or_null(hwloc_obj_get_info_by_name(root, "OSRelease"));
    }
    int npci = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PCI_DEVICE);
    hwloc_obj_t *pcis = util_xcalloc((size_t)npci + 1, sizeof(*pcis));
    int n = 0;
    for (hwloc_obj_t p = NULL; (p = hwloc_get_next_pcidev(h, p)) && n < npci;)
        pcis[n++] = p;
    qsort(pcis, (size_t)n, sizeof(*pcis), cmp_busid);
    for (int i = 0; i < n; i++) {
        if (is_gpu_pci(pcis[i]))
            add_gpu_from_pci(t, h, pcis[i]);
        else if (is_nvswitch_pci(pcis[i]))
            t->nvswitches++;
        else if (is_other_gpu_pci(pcis[i]))
            t->other_gpus++;
        else
            add_nic_from_pci(t, h, pcis[i]);
    }
    free(pcis);
    if (t->ngpus == 0)
        add_gpus_from_osdevs(t, h);
    warn_nics_unplaced(t, h);
    topo_alloc_nvlink(t);
    read_nvlink_distances(t, h);
    if (!t->nvlink_known && topo_gpus_lack_nvlink(t)) {
        t->nvlink_known = 1;
        topo_set_nvlink_totals(t, NULL);
    }
    topo_infer_nvlink(t);
    hwloc_bitmap_free(gpu_memory);
    gpu_memory = NULL;
    return 0;
}
