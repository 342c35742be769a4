/* SPDX-License-Identifier: MIT */
/*
 * Live facts read from /sys and /proc (under util_sysfs_root(), so tests can
 * replay a captured tree): NIC speed and state, GPU PCIe links, PCIe ACS on
 * the bridges above GPUs, /dev/shm, memlock, container, IOMMU.
 */
#include "topo/internal.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/json.h"
#include "util/log.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

static int read_long(const char *path, long *out)
{
    struct util_buf b = UTIL_BUF_INIT;
    int rc = util_sysfs_read_line(path, &b);
    char *end;
    if (!rc) {
        *out = strtol(util_buf_str(&b), &end, 10);
        rc = end == util_buf_str(&b) ? -1 : 0;
    }
    util_buf_release(&b);
    return rc;
}

void topo_probe_nic(struct topo_nic *nic)
{
    struct util_buf path = UTIL_BUF_INIT, val = UTIL_BUF_INIT;
    if (nic->name && nic->kind != TOPO_NIC_ETH) {
        util_buf_addf(&path, "/sys/class/infiniband/%s/ports/1/rate", nic->name);
        if (util_sysfs_read_line(path.data, &val) == 0) /* "100 Gb/sec (4X EDR)" */
            nic->speed_gbps = atoi(util_buf_str(&val));
        util_buf_reset(&path);
        util_buf_addf(&path, "/sys/class/infiniband/%s/ports/1/state", nic->name);
        if (util_sysfs_read_line(path.data, &val) == 0) { /* "4: ACTIVE" */
            free(nic->state);
            nic->state = topo_strdup(strstr(util_buf_str(&val), "ACTIVE") ? "up" : "down");
        }
        util_buf_reset(&path);
        util_buf_addf(&path, "/sys/class/infiniband/%s/ports/1/link_layer", nic->name);
        if (nic->kind != TOPO_NIC_EFA && nic->kind != TOPO_NIC_CXI && /* their PCI ids decided */
            util_sysfs_read_line(path.data, &val) == 0)
            nic->kind = strcmp(util_buf_str(&val), "Ethernet") == 0 ? TOPO_NIC_ROCE : TOPO_NIC_IB;
    }
    const char *netdev = nic->netdev ? nic->netdev : nic->kind == TOPO_NIC_ETH ? nic->name : NULL;
    if (netdev) {
        long mbs;
        util_buf_reset(&path);
        util_buf_addf(&path, "/sys/class/net/%s/speed", netdev);
        if (nic->speed_gbps < 0 && read_long(path.data, &mbs) == 0 && mbs > 0)
            nic->speed_gbps = (int)(mbs / 1000);
        util_buf_reset(&path);
        util_buf_addf(&path, "/sys/class/net/%s/operstate", netdev);
        if (!nic->state && util_sysfs_read_line(path.data, &val) == 0)
            nic->state = topo_strdup(strcmp(util_buf_str(&val), "up") == 0 ? "up" : "down");
    }
    util_buf_release(&path);
    util_buf_release(&val);
}

/* A link's rate in GT/s, or its width, read from the device's folder (rel: "" or "/.." for the
 * port above it); 0 where sysfs does not say ("Unknown", a virtual device). */
static double link_value(const char *pci, const char *rel, const char *file)
{
    struct util_buf path = UTIL_BUF_INIT, val = UTIL_BUF_INIT;
    util_buf_addf(&path, "/sys/bus/pci/devices/%s%s/%s", pci, rel, file);
    double v = util_sysfs_read_line(path.data, &val) == 0 ? atof(util_buf_str(&val)) : 0;
    util_buf_release(&path);
    util_buf_release(&val);
    return v > 0 ? v : 0;
}

/* A hexadecimal file of the device's folder ("0x10de"), or -1. */
static long link_hex(const char *pci, const char *file)
{
    struct util_buf path = UTIL_BUF_INIT, val = UTIL_BUF_INIT;
    util_buf_addf(&path, "/sys/bus/pci/devices/%s/%s", pci, file);
    char *end = NULL;
    long v = util_sysfs_read_line(path.data, &val) == 0 ? strtol(util_buf_str(&val), &end, 16) : -1;
    if (!end || end == util_buf_str(&val) || v < 0 || v > 0xffffff)
        v = -1;
    util_buf_release(&path);
    util_buf_release(&val);
    return v;
}

/* The most a link can train to: the lesser of the device's and its port's maximum. A port that
 * claims less than the link runs at is emulated (older QEMU root ports say 2.5 GT/s x1 whatever
 * they carry): only the device's maximum counts then. *now: its value now. */
static double link_max(const char *pci, const char *what, double *now)
{
    char max[32], cur[32];
    snprintf(max, sizeof(max), "max_link_%s", what);
    snprintf(cur, sizeof(cur), "current_link_%s", what);
    double dev = link_value(pci, "", max), port = link_value(pci, "/..", max);
    *now = link_value(pci, "", cur);
    if (port > 0 && port < *now)
        port = 0;
    return dev > 0 && port > 0 ? fmin(dev, port) : dev;
}

int topo_pci_link_read(const char *pci, struct topo_pci_link *l)
{
    struct util_buf path = UTIL_BUF_INIT;
    memset(l, 0, sizeof(*l));
    util_buf_addf(&path, "%s/sys/bus/pci/devices/%s", util_sysfs_root(), pci);
    int there = pci[0] && !strchr(pci, '/') && access(path.data, F_OK) == 0;
    util_buf_release(&path);
    if (!there)
        return -1;
    l->vendor = (int)link_hex(pci, "vendor");
    l->class_code = (int)link_hex(pci, "class");
    double now;
    l->width_max = (int)link_max(pci, "width", &now);
    l->width_now = (int)now;
    l->gts_max = link_max(pci, "speed", &l->gts_now);
    return 0;
}

/* What the link can carry, as NCCL up to 2.29 reads it: its maximum (a GPU at rest trains its
 * link down to 2.5 GT/s: its current rate says nothing), else the current rate. */
static double link_rate(const char *pci, const char *what)
{
    double now, v = link_max(pci, what, &now);
    return v > 0 ? v : now;
}

static void probe_gpu_link(struct topo_gpu *g)
{
    double width = link_rate(g->pci, "width"), gts = link_rate(g->pci, "speed");
    if (width >= 1 && width <= 32)
        g->pcie_width = (int)width;
    if (gts > 0)
        g->pcie_gen = topo_pcie_gen_of(gts);
    double gbs = topo_pcie_link_gbs(g->pcie_gen, g->pcie_width);
    if (gts > 0 && gbs > 0) /* hwloc's rate is the current one */
        g->pcie_gbs = gbs;
}

#define PCI_EXT_CAP_START  0x100
#define PCI_EXT_CAP_ID_ACS 0x000d
#define PCI_ACS_RR         0x0004 /* P2P request redirect */
#define PCI_ACS_CR         0x0008 /* P2P completion redirect */

/*
 * The ACS control register of a bridge, from its config space, or -1 when the
 * extended space cannot be read (only root sees past the first 64 bytes), or
 * -2 when the bridge has no ACS capability.
 */
static int acs_control(const char *devdir)
{
    struct util_buf path = UTIL_BUF_INIT, cfg = UTIL_BUF_INIT;
    util_buf_addf(&path, "%s/config", devdir);
    int rc = util_file_read(path.data, 8192, &cfg);
    util_buf_release(&path);
    const unsigned char *c = (const unsigned char *)util_buf_str(&cfg);
    int result = -1;
    if (rc == 0 && cfg.len >= 0x104) {
        result = -2;
        unsigned off = PCI_EXT_CAP_START;
        for (int guard = 0; off >= PCI_EXT_CAP_START && off + 8 <= cfg.len && guard < 64; guard++) {
            unsigned hdr = c[off] | c[off + 1] << 8 | c[off + 2] << 16 | (unsigned)c[off + 3] << 24;
            if ((hdr & 0xffff) == PCI_EXT_CAP_ID_ACS) {
                result = c[off + 6] | c[off + 7] << 8;
                break;
            }
            off = (hdr >> 20) & 0xffc;
        }
    }
    util_buf_release(&cfg);
    return result;
}

static int looks_like_bdf(const char *s)
{
    unsigned d, b, dev, f;
    char tail;
    return strlen(s) == 12 && sscanf(s, "%x:%x:%x.%x%c", &d, &b, &dev, &f, &tail) == 4;
}

/* Every bridge between a GPU and its root port, with its ACS state. */
static void probe_acs(struct topo *t)
{
    json_t *list = json_array();
    struct util_buf path = UTIL_BUF_INIT;
    for (int i = 0; i < t->ngpus; i++) {
        util_buf_reset(&path);
        util_buf_addf(&path, "%s/sys/bus/pci/devices/%s", util_sysfs_root(), t->gpus[i].pci);
        char *real = realpath(path.data, NULL);
        if (!real)
            continue;
        for (char *slash = strrchr(real, '/'); slash; slash = strrchr(real, '/')) {
            *slash = '\0';
            const char *base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
            if (!looks_like_bdf(base))
                break;
            int ctrl = acs_control(real);
            if (ctrl == -2)
                continue;
            json_t *o = json_object();
            util_json_set(o, "bridge", json_string(base));
            util_json_set(o, "gpu", json_integer(i));
            util_json_set(o, "control", ctrl < 0 ? json_null() : json_integer(ctrl));
            util_json_set(o, "redirect",
                          ctrl < 0 ? json_null() : json_boolean(ctrl & (PCI_ACS_RR | PCI_ACS_CR)));
            json_array_append_new(list, o);
        }
        free(real);
    }
    util_buf_release(&path);
    t->system.acs_bridges = list;
}

/* CAP_IPC_LOCK's bit in /proc/PID/status's CapEff (linux/capability.h). */
#define CAP_IPC_LOCK_BIT 14

/* Whether this process runs in the host's user namespace (uid_map the identity of every id): a
 * capability held in another (a rootless container's root) is none where the kernel pins memory,
 * which asks the host's namespace. */
static int host_user_namespace(void)
{
    struct util_buf b = UTIL_BUF_INIT;
    unsigned long inside, outside, count;
    int host = util_sysfs_read("/proc/self/uid_map", &b) == 0 &&
               sscanf(util_buf_str(&b), "%lu %lu %lu", &inside, &outside, &count) == 3 &&
               inside == 0 && outside == 0 && count == 4294967295ul;
    util_buf_release(&b);
    return host;
}

/* The memlock limit, and CAP_IPC_LOCK, which lifts it: the kernel lets memory registration (RDMA
 * pinning, ib_umem_get) exceed the limit for a process that holds it. Held so that what this
 * process starts holds it too: root's effective set (its programs get the bounding set back),
 * another user's ambient set (file capabilities of one program are not handed down); and in the
 * host's user namespace. */
static void probe_memlock(struct topo *t)
{
    struct util_buf b = UTIL_BUF_INIT;
    if (util_sysfs_read("/proc/self/limits", &b) == 0) {
        const char *line = strstr(util_buf_str(&b), "Max locked memory");
        char soft[32];
        if (line && sscanf(line + strlen("Max locked memory"), "%31s", soft) == 1)
            t->system.memlock_bytes = strcmp(soft, "unlimited") == 0 ? -1 : atoll(soft);
    }
    util_buf_reset(&b);
    if (util_sysfs_read("/proc/self/status", &b) == 0) {
        const char *set = geteuid() == 0 ? "\nCapEff:" : "\nCapAmb:";
        const char *line = strstr(util_buf_str(&b), set);
        unsigned long long caps;
        if (line && sscanf(line + strlen(set), "%llx", &caps) == 1)
            t->system.ipc_lock = (caps >> CAP_IPC_LOCK_BIT) & 1 && host_user_namespace();
    }
    util_buf_release(&b);
}

static int root_has(const char *path)
{
    struct util_buf p = UTIL_BUF_INIT;
    util_buf_addf(&p, "%s%s", util_sysfs_root(), path);
    int ok = access(p.data, F_OK) == 0;
    util_buf_release(&p);
    return ok;
}

static void probe_container(struct topo *t)
{
    struct util_buf b = UTIL_BUF_INIT;
    /* a Kubernetes pod on containerd under cgroup v2 has none of the files nor cgroup words
     * below, but its service account's secrets, and every pod its API server's address */
    t->system.container = root_has("/.dockerenv") || root_has("/run/.containerenv") ||
                          root_has("/var/run/secrets/kubernetes.io") ||
                          getenv("KUBERNETES_SERVICE_HOST");
    if (!t->system.container && util_sysfs_read("/proc/1/cgroup", &b) == 0) {
        const char *s = util_buf_str(&b);
        t->system.container = strstr(s, "docker") || strstr(s, "kubepods") ||
                              strstr(s, "containerd") || strstr(s, "lxc");
    }
    util_buf_release(&b);
}

/* The IOMMU words of the kernel command line ("intel_iommu=on iommu=pt"), or "default". */
static void probe_iommu(struct topo *t)
{
    struct util_buf b = UTIL_BUF_INIT, words = UTIL_BUF_INIT;
    if (util_sysfs_read_line("/proc/cmdline", &b) == 0) {
        char *save = NULL;
        for (char *w = strtok_r(b.data ? b.data : (char[]){0}, " ", &save); w;
             w = strtok_r(NULL, " ", &save))
            if (strstr(w, "iommu"))
                util_buf_addf(&words, "%s%s", words.len ? " " : "", w);
        t->system.iommu = topo_text(words.len ? words.data : "default");
    }
    util_buf_release(&b);
    util_buf_release(&words);
}

void topo_probe_system(struct topo *t)
{
    struct util_buf shm = UTIL_BUF_INIT;
    struct statvfs vfs;
    util_buf_addf(&shm, "%s/dev/shm", util_sysfs_root());
    if (statvfs(shm.data, &vfs) == 0)
        t->system.shm_bytes = (long long)vfs.f_blocks * (long long)vfs.f_frsize;
    util_buf_release(&shm);
    probe_memlock(t);
    probe_container(t);
    probe_iommu(t);
    for (int i = 0; i < t->ngpus; i++)
        if (t->gpus[i].pci[0])
            probe_gpu_link(&t->gpus[i]);
    probe_acs(t);
}
