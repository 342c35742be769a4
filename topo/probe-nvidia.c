/* SPDX-License-Identifier: MIT */
/*
 * GPUs, NVLink and P2P from the CUDA driver API and NVML, both loaded with
 * dlopen so that topotune builds and runs without the CUDA toolkit. The few
 * functions used are declared here, as NCCL does; the struct layouts follow
 * nvml.h (bus id fields are read by offset, which every layout shares).
 */
#include "topo/internal.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/log.h"
#include "util/mem.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *nvml_device;

struct nvml_api {
    void *lib;
    int (*init)(void);
    int (*shutdown)(void);
    int (*count)(unsigned *);
    int (*handle)(unsigned, nvml_device *);
    int (*pci)(nvml_device, void *);
    int (*name)(nvml_device, char *, unsigned);
    int (*memory)(nvml_device, unsigned long long *);
    int (*cc)(nvml_device, int *, int *);
    int (*link_state)(nvml_device, unsigned, int *);
    int (*link_remote)(nvml_device, unsigned, void *);
    int (*p2p)(nvml_device, nvml_device, int, int *);
    int (*driver)(char *, unsigned);
    int (*processes)(nvml_device, unsigned *, void *);
    int (*remapped)(nvml_device, unsigned *, unsigned *, unsigned *, unsigned *);
    int (*ecc)(nvml_device, int, int, unsigned long long *);
    int (*events)(nvml_device, unsigned long long *);
};

struct cuda_api {
    void *lib;
    int (*init)(unsigned);
    int (*version)(int *);
    int (*count)(int *);
    int (*get)(int *, int);
    int (*attr)(int *, int, int);
    int (*peer)(int *, int, int);
};

#define CU_ATTR_PCI_BUS             33
#define CU_ATTR_PCI_DEVICE          34
#define CU_ATTR_PCI_DOMAIN          50
#define NVML_P2P_READ               0
#define NVML_P2P_OK                 0
#define NVML_P2P_DISABLED_BY_REGKEY 4
#define NVML_MAX_LINKS              18

/* nvmlPciInfo_t: busIdLegacy[16], then domain, bus, device; at most 68 bytes today. */
struct nvml_pci_raw {
    unsigned char bytes[256];
};

static void pci_from_nvml(const struct nvml_pci_raw *p, char out[16])
{
    unsigned v[3];
    memcpy(v, p->bytes + 16, sizeof(v));
    snprintf(out, 16, "%04x:%02x:%02x.0", v[0] & 0xffffu, v[1] & 0xffu, v[2] & 0xffu);
}

static void *sym(void *lib, const char *name)
{
    return lib ? dlsym(lib, name) : NULL;
}

static int load_nvml(struct nvml_api *n)
{
    memset(n, 0, sizeof(*n));
    n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    *(void **)&n->init = sym(n->lib, "nvmlInit_v2");
    *(void **)&n->shutdown = sym(n->lib, "nvmlShutdown");
    *(void **)&n->count = sym(n->lib, "nvmlDeviceGetCount_v2");
    *(void **)&n->handle = sym(n->lib, "nvmlDeviceGetHandleByIndex_v2");
    *(void **)&n->pci = sym(n->lib, "nvmlDeviceGetPciInfo_v3");
    *(void **)&n->name = sym(n->lib, "nvmlDeviceGetName");
    *(void **)&n->memory = sym(n->lib, "nvmlDeviceGetMemoryInfo");
    *(void **)&n->cc = sym(n->lib, "nvmlDeviceGetCudaComputeCapability");
    *(void **)&n->link_state = sym(n->lib, "nvmlDeviceGetNvLinkState");
    *(void **)&n->link_remote = sym(n->lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    *(void **)&n->p2p = sym(n->lib, "nvmlDeviceGetP2PStatus");
    *(void **)&n->driver = sym(n->lib, "nvmlSystemGetDriverVersion");
    static const char *const procs[] = {"nvmlDeviceGetComputeRunningProcesses_v3",
                                        "nvmlDeviceGetComputeRunningProcesses_v2",
                                        "nvmlDeviceGetComputeRunningProcesses"};
    for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]) && !n->processes; i++)
        *(void **)&n->processes = sym(n->lib, procs[i]);
    *(void **)&n->remapped = sym(n->lib, "nvmlDeviceGetRemappedRows");
    *(void **)&n->ecc = sym(n->lib, "nvmlDeviceGetTotalEccErrors");
    /* renamed in the 535 drivers; the old name stays beside it */
    *(void **)&n->events = sym(n->lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!n->events)
        *(void **)&n->events = sym(n->lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    if (!n->init || !n->count || !n->handle || !n->pci || n->init() != 0) {
        util_debug("NVML not available (libnvidia-ml.so.1 %s)",
                   n->lib ? "did not initialise" : "not found");
        if (n->lib)
            dlclose(n->lib);
        n->lib = NULL;
        return 0;
    }
    return 1;
}

static int load_cuda(struct cuda_api *c)
{
    memset(c, 0, sizeof(*c));
    c->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    *(void **)&c->init = sym(c->lib, "cuInit");
    *(void **)&c->version = sym(c->lib, "cuDriverGetVersion");
    *(void **)&c->count = sym(c->lib, "cuDeviceGetCount");
    *(void **)&c->get = sym(c->lib, "cuDeviceGet");
    *(void **)&c->attr = sym(c->lib, "cuDeviceGetAttribute");
    *(void **)&c->peer = sym(c->lib, "cuDeviceCanAccessPeer");
    if (!c->init || !c->version) {
        util_debug("CUDA driver not available (libcuda.so.1 not found)");
        if (c->lib)
            dlclose(c->lib);
        c->lib = NULL;
        return 0;
    }
    return 1;
}

static int gpu_by_pci(const struct topo *t, const char *pci)
{
    for (int i = 0; i < t->ngpus; i++)
        if (strcasecmp(t->gpus[i].pci, pci) == 0)
            return i;
    return -1;
}

/* The PCI class of a bus id from sysfs, or 0 when it cannot be resolved (VMs hide NVSwitches). */
static unsigned pci_class(const char *pci)
{
    struct util_buf path = UTIL_BUF_INIT, val = UTIL_BUF_INIT;
    util_buf_addf(&path, "/sys/bus/pci/devices/%s/class", pci);
    unsigned cls = util_sysfs_read_line(path.data, &val) == 0
                       ? (unsigned)strtoul(util_buf_str(&val), NULL, 16)
                       : 0;
    util_buf_release(&path);
    util_buf_release(&val);
    return cls;
}

/* NVLink per link, as NCCL detects it: links grouped by remote bus id. */
static void nvml_links(struct topo *t, struct nvml_api *n, nvml_device *dev, int *fabric)
{
    char seen[64][16];
    int nseen = 0;
    for (int i = 0; i < t->ngpus; i++) {
        for (unsigned l = 0; dev[i] && n->link_state && n->link_remote && l < NVML_MAX_LINKS; l++) {
            int active = 0;
            struct nvml_pci_raw remote = {{0}};
            char pci[16];
            if (n->link_state(dev[i], l, &active) != 0 || !active ||
                n->link_remote(dev[i], l, &remote) != 0)
                continue;
            pci_from_nvml(&remote, pci);
            int peer = gpu_by_pci(t, pci);
            unsigned cls = pci_class(pci);
            if (peer >= 0 && peer != i)
                t->nvlink[i * t->ngpus + peer]++;
            else if (cls == 0x068000 || cls == 0) {
                fabric[i]++;
                int known = 0;
                for (int k = 0; k < nseen; k++)
                    known |= strcmp(seen[k], pci) == 0;
                if (!known && cls && nseen < 64)
                    snprintf(seen[nseen++], 16, "%s", pci);
                if (!cls)
                    fabric[t->ngpus] = 1; /* marks a hidden switch */
            }
        }
    }
    int hidden = fabric[t->ngpus]; /* links to bus ids the host cannot see: switches in a VM */
    fabric[t->ngpus] = 0;
    if (t->nvswitches == 0)
        t->nvswitches = nseen ? nseen : hidden ? TOPO_UNKNOWN : 0;
}

static void probe_nvml(struct topo *t, struct nvml_api *n)
{
    unsigned count = 0;
    char buf[96];
    if (n->driver && n->driver(buf, sizeof(buf)) == 0)
        t->software.driver = topo_text(buf);
    if (n->count(&count) != 0 || count == 0)
        return;
    nvml_device *dev = util_xcalloc(t->ngpus + count + 1, sizeof(*dev));
    int *fabric = util_xcalloc(t->ngpus + count + 1, sizeof(int));
    int before = t->ngpus;
    for (unsigned k = 0; k < count; k++) {
        nvml_device d;
        struct nvml_pci_raw p = {{0}};
        char pci[16];
        if (n->handle(k, &d) != 0 || n->pci(d, &p) != 0)
            continue;
        pci_from_nvml(&p, pci);
        int i = gpu_by_pci(t, pci);
        if (i < 0) { /* hwloc filtered it: keep the GPU, without locality */
            struct topo_gpu *g = topo_add_gpu(t);
            if (!g)
                break;
            snprintf(g->pci, sizeof(g->pci), "%s", pci);
            i = t->ngpus - 1;
        }
        dev[i] = d;
        struct topo_gpu *g = &t->gpus[i];
        unsigned long long mem[3];
        int major, minor;
        if (n->name && n->name(d, buf, sizeof(buf)) == 0) {
            free(g->model);
            g->model = topo_text(buf);
        }
        if (n->memory && n->memory(d, mem) == 0)
            g->memory_mib = (long long)(mem[0] >> 20);
        if (n->cc && n->cc(d, &major, &minor) == 0)
            g->sm = major * 10 + minor;
    }
    if (n->link_state && n->link_remote) {
        topo_alloc_nvlink(t);
        nvml_links(t, n, dev, fabric);
        topo_set_nvlink_totals(t, fabric);
        t->nvlink_known = 1;
        t->nvlink_inferred = 0; /* the driver's links replace what the export's model implied */
    } else if (t->ngpus != before || !t->nvlink) {
        /* no link functions: what hwloc said (or inferred) stands, unless NVML found GPUs hwloc
         * had filtered, whose links nothing says: NVLink unknown, not zero */
        topo_alloc_nvlink(t);
        t->nvlink_known = t->nvlink_inferred = 0;
    }
    if (n->p2p) {
        t->p2p = util_xcalloc((size_t)t->ngpus * t->ngpus + 1, sizeof(char *));
        for (int i = 0; t->p2p && i < t->ngpus; i++)
            for (int j = 0; j < t->ngpus; j++) {
                int st = -1;
                if (i == j)
                    t->p2p[i * t->ngpus + j] = topo_strdup("X");
                else if (dev[i] && dev[j] && n->p2p(dev[i], dev[j], NVML_P2P_READ, &st) == 0)
                    t->p2p[i * t->ngpus + j] =
                        topo_strdup(st == NVML_P2P_OK                   ? "OK"
                                    : st == NVML_P2P_DISABLED_BY_REGKEY ? "DIS"
                                                                        : "NS");
            }
        if (t->p2p)
            t->p2p_source = "nvml";
    }
    free(dev);
    free(fabric);
}

/* cuDeviceCanAccessPeer per ordered pair; a pair NVML reports as not OK stays as NVML says. */
static void probe_cuda(struct topo *t, struct cuda_api *c)
{
    int v = 0, count = 0;
    char buf[32];
    if (c->init(0) != 0) {
        util_debug("cuInit failed: no usable GPU for the CUDA driver");
    }
    if (c->version(&v) == 0 && v > 0) {
        snprintf(buf, sizeof(buf), "%d.%d", v / 1000, (v % 1000) / 10);
        t->software.cuda = topo_text(buf);
    }
    if (!c->count || !c->get || !c->attr || !c->peer || c->count(&count) != 0 || count <= 0 ||
        t->ngpus == 0)
        return;
    int *map = util_xcalloc((size_t)count, sizeof(int)); /* CUDA ordinal -> topo GPU */
    for (int k = 0; k < count; k++) {
        int dev = 0, dom = 0, bus = 0, slot = 0;
        char pci[16];
        map[k] = -1;
        if (c->get(&dev, k) || c->attr(&dom, CU_ATTR_PCI_DOMAIN, dev) ||
            c->attr(&bus, CU_ATTR_PCI_BUS, dev) || c->attr(&slot, CU_ATTR_PCI_DEVICE, dev))
            continue;
        snprintf(pci, sizeof(pci), "%04x:%02x:%02x.0", dom & 0xffff, bus & 0xff, slot & 0xff);
        map[k] = gpu_by_pci(t, pci);
    }
    if (!t->p2p)
        t->p2p = util_xcalloc((size_t)t->ngpus * t->ngpus + 1, sizeof(char *));
    for (int a = 0; t->p2p && a < count; a++)
        for (int b = 0; b < count; b++) {
            int i = map[a], j = map[b], ok = 0, da = 0, db = 0;
            if (i < 0 || j < 0 || i == j)
                continue;
            char **cell = &t->p2p[i * t->ngpus + j];
            if (*cell && strcmp(*cell, "OK") != 0)
                continue;
            if (c->get(&da, a) || c->get(&db, b) || c->peer(&ok, da, db))
                continue;
            free(*cell);
            *cell = topo_strdup(ok ? "OK" : "NS");
        }
    for (int i = 0; t->p2p && i < t->ngpus; i++)
        if (!t->p2p[i * t->ngpus + i])
            t->p2p[i * t->ngpus + i] = topo_strdup("X");
    if (t->p2p)
        t->p2p_source = "cuda";
    free(map);
}

#define NVML_INSUFFICIENT_SIZE 7

int topo_gpu_processes(void)
{
    struct nvml_api n;
    if (!load_nvml(&n))
        return -1;
    unsigned count = 0;
    int total = 0, answered = 0;
    if (!n.processes || n.count(&count))
        count = 0;
    /* a GPU that does not answer (off the bus, a MIG parent without the privilege, one the
     * cgroup denies) leaves the others' count: -1 only when none answers */
    for (unsigned i = 0; i < count; i++) {
        nvml_device dev;
        unsigned procs = 0; /* asked with no room: the count comes back with "too small" */
        int rc = n.handle(i, &dev) ? -1 : n.processes(dev, &procs, NULL);
        if (rc == 0 || rc == NVML_INSUFFICIENT_SIZE) {
            answered++;
            total += rc ? (int)procs : 0;
        }
    }
    total = answered ? total : -1;
    if (n.shutdown)
        n.shutdown();
    return total;
}

#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1
#define NVML_VOLATILE_ECC                  0

/* One GPU's health; each field -1 where the call fails (not supported there). */
static void gpu_health(const struct nvml_api *n, nvml_device dev, struct topo_gpu_health *h)
{
    struct nvml_pci_raw raw;
    unsigned corr = 0, unc = 0, pending = 0, failed = 0;
    unsigned long long ecc = 0, reasons = 0;
    memset(&raw, 0, sizeof(raw));
    if ((h->nvml_error = n->pci(dev, &raw)) == 0)
        pci_from_nvml(&raw, h->pci);
    else
        return; /* a GPU lost or reset-bound answers nothing more */
    int remap = n->remapped && n->remapped(dev, &corr, &unc, &pending, &failed) == 0;
    h->remap_pending = remap ? pending != 0 : -1;
    h->remap_failed = remap ? failed != 0 : -1;
    h->ecc_uncorrected =
        n->ecc && n->ecc(dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &ecc) == 0 &&
                ecc < (1ull << 62)
            ? (long long)ecc
            : -1;
    h->slowdown = n->events && n->events(dev, &reasons) == 0 && reasons < (1ull << 62)
                      ? (long long)reasons
                      : -1;
}

int topo_gpu_health(struct topo_gpu_health *out, int max)
{
    struct nvml_api n;
    if (!load_nvml(&n))
        return -1;
    unsigned count = 0;
    if (n.count(&count))
        count = 0;
    for (unsigned i = 0; i < count && (int)i < max; i++) {
        nvml_device dev;
        struct topo_gpu_health *h = &out[i];
        memset(h, 0, sizeof(*h));
        h->remap_pending = h->remap_failed = -1;
        h->ecc_uncorrected = h->slowdown = -1;
        if ((h->nvml_error = n.handle(i, &dev)) == 0) /* one that does not answer: its error */
            gpu_health(&n, dev, h);
    }
    if (n.shutdown)
        n.shutdown();
    return count > (unsigned)INT_MAX ? INT_MAX : (int)count;
}

int topo_probe_nvidia(struct topo *t, hwloc_topology_t h)
{
    (void)h;
    struct nvml_api n;
    struct cuda_api c;
    if (load_nvml(&n)) {
        probe_nvml(t, &n);
        if (n.shutdown)
            n.shutdown();
    }
    if (load_cuda(&c))
        probe_cuda(t, &c);
    /* Libraries stay loaded, as NCCL leaves them: unloading a driver library is not worth the risk.
     */
    return 0;
}
