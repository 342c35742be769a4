/* SPDX-License-Identifier: MIT */
/*
 * The topology of one node: CPUs, GPUs, NICs, NVLink and the PCIe paths between
 * them, from the live machine, a hwloc XML export or an NCCL topology XML.
 *
 * Unknown facts stay unknown: integers are TOPO_UNKNOWN (-1) and strings NULL,
 * written as JSON null. Nothing is guessed.
 */
#ifndef TOPO_TOPO_H
#define TOPO_TOPO_H

#include <jansson.h>
#include <stdio.h>

#define TOPO_UNKNOWN     (-1)
#define TOPO_MAX_DEVICES 1024 /* GPUs and NICs of one node; the matrix is its square */
#define TOPO_MAX_NVLINKS 64   /* NVLinks of one GPU, or joining a pair (real GPUs: up to 18) */

enum topo_source {
    TOPO_SOURCE_LIVE,
    TOPO_SOURCE_HWLOC_XML,
    TOPO_SOURCE_NCCL_XML,
    TOPO_SOURCE_SPEC, /* hardware specs: the reader arrives with the hardware catalog */
};

/* CXI: HPE Slingshot 11's Cassini NIC, which NCCL reaches like EFA through libfabric and the
 * aws-ofi-nccl plugin, not through verbs. */
enum topo_nic_kind {
    TOPO_NIC_UNKNOWN,
    TOPO_NIC_IB,
    TOPO_NIC_ROCE,
    TOPO_NIC_EFA,
    TOPO_NIC_ETH,
    TOPO_NIC_CXI,
    TOPO_NIC_NKINDS
};

struct topo_gpu {
    char *model;  /* "Tesla V100-SXM2-16GB", or NULL */
    char pci[16]; /* "0000:18:00.0", or "" when the source does not say */
    int numa;     /* NUMA node, or TOPO_UNKNOWN */
    char *cpuset; /* CPUs near the GPU as a list, "0-47", or NULL */
    long long memory_mib;
    int sm;                   /* compute capability x 10 */
    int pcie_gen, pcie_width; /* what its link can carry (live: the lesser of the GPU's and its
                                 port's maximum, as NCCL 2.29 reads it, not its rate at rest) */
    double pcie_gbs;          /* link bandwidth per direction as the source states it, or < 0 */
    int nvlinks;              /* active NVLinks of this GPU to GPUs and NVSwitches */
    int node;                 /* its place in the PCI tree (internal.h), or -1 */
};

struct topo_nic {
    char *name;   /* "mlx5_0" or the network interface when there is no RDMA device */
    char *netdev; /* "ib0", or NULL */
    enum topo_nic_kind kind;
    char pci[16];
    int pci_vendor, pci_device; /* the PCI ids where the source gives them, else -1 */
    double pcie_gbs;            /* its PCIe link per direction as the source states it, or < 0 */
    int numa;
    char *cpuset;
    int speed_gbps;
    char *state; /* "up", "down", or NULL */
    int node;
};

/* A PCI tree node; see internal.h for how the matrix uses it. */
struct topo_pnode {
    int kind;    /* enum topo_pnode_kind */
    int parent;  /* index, or -1 at the top */
    int bridges; /* PCIe bridges this node stands for (0 for non-bridges) */
    int numa;    /* for locality nodes: the NUMA node, or TOPO_UNKNOWN */
};

struct topo {
    char *host;
    enum topo_source source;
    char *source_path;

    struct {
        char *vendor, *model;
        int sockets, numa_nodes, cores, pus;
    } cpu;

    struct topo_gpu *gpus;
    int ngpus;
    struct topo_nic *nics;
    int nnics;
    int nvswitches;       /* TOPO_UNKNOWN when the source has NVLink but no switch count */
    int nvlink_known;     /* the source describes NVLink (or the GPUs have none) */
    int *nvlink;          /* ngpus x ngpus: NVLinks joining each pair */
    int unclassified_pci; /* NCCL XML: PCI leaves without a class (NCCL fills them in live) */
    int other_gpus;       /* GPUs of other vendors (AMD, Intel): NCCL drives none, left out */
    int nvlink_inferred;  /* NVLink from the GPU model and its switches, the source silent */
    int p2p_broken;    /* PCIe P2P between GPUs is known not to work (consumer GPUs, ACS redirect);
                          TOPO_UNKNOWN when nobody could tell */
    int too_many;      /* a reader met more than TOPO_MAX_DEVICES devices */
    int job_nodes;     /* nodes of this class in the job: 1, or what a spec says */
    int nvlink_domain; /* GPUs in one NVLink domain across nodes (GB200 NVL72: 72), or 0: the node
                        */

    char **matrix;          /* (ngpus+nnics)^2 nvidia-smi letters; NULL entries are unknown */
    const char *p2p_source; /* "cuda", "nvml", "spec" or "none" */
    char **p2p; /* ngpus x ngpus: "X", "OK", "NS", "DIS", or NULL when p2p_source is none */

    struct {
        long long shm_bytes;     /* /dev/shm size, TOPO_UNKNOWN if unknown */
        long long memlock_bytes; /* -1 unlimited, -2 unknown */
        int ipc_lock;            /* this process holds CAP_IPC_LOCK (which memlock does not bind)
                                  * so that what it starts holds it too: root's effective set,
                                  * another user's ambient set; 1, 0, or TOPO_UNKNOWN */
        int container;           /* 1, 0, or TOPO_UNKNOWN */
        char *iommu;             /* IOMMU words of the kernel command line, or NULL */
        json_t *acs_bridges;     /* array of {bridge, control, redirect}, or NULL if unreadable */
    } system;

    struct {
        char *driver, *cuda, *nccl, *hwloc, *mpi, *kernel;
    } software;

    char *class_id;
    json_t *class_key;

    struct topo_pnode *nodes;
    int nnodes;
};

#define TOPO_MEMLOCK_UNKNOWN (-2)

/*
 * 1 for network interfaces whose traffic may never leave the host, going by
 * name: container bridges and veths (docker*, virbr*, veth*, br-*, cni*, flannel*).
 */
int topo_iface_is_virtual(const char *name);

/*
 * The GPUs of t this process can use: as many as CUDA_VISIBLE_DEVICES names when it is set (""
 * hides them all), at most t's when t has any; else all of t's. *limited (may be NULL) is 1 when
 * the variable is set. CUDA stops at an entry it cannot use; the entries are counted, not checked.
 */
int topo_visible_gpus(const struct topo *t, int *limited);

/* Compute processes on this machine's NVIDIA GPUs, as NVML counts them (those of every PID
 * namespace, a container's job included): a job is running. The GPUs that answer are counted;
 * -1 when none does (no driver, no GPU, a driver without the call). */
int topo_gpu_processes(void);

/* The clock event reasons of NVML (nvmlClocksEventReason*) a health check reads. */
#define TOPO_SLOWDOWN_HW         0x8ull  /* any hardware slowdown: clocks halved or worse */
#define TOPO_SLOWDOWN_SW_THERMAL 0x20ull /* the driver holds the temperature down */
#define TOPO_SLOWDOWN_HW_THERMAL 0x40ull /* the GPU too hot */
#define TOPO_SLOWDOWN_HW_POWER   0x80ull /* an external power brake (the chassis' supply) */

/* What NVML says of one NVIDIA GPU's health: not its topology, its state (one needing a reset or
 * a repair, or running slowed down). -1 where NVML does not say (a GPU without ECC or row
 * remapping, a driver without the call). */
#define TOPO_NVML_NO_PERMISSION     4 /* another job's GPU (the cgroup denies it): not ours */
#define TOPO_NVML_CORRUPTED_INFOROM 14
#define TOPO_NVML_GPU_IS_LOST       15 /* fallen off the bus (Xid 79) */
#define TOPO_NVML_RESET_REQUIRED    16
struct topo_gpu_health {
    int nvml_error; /* NVML's error for the GPU itself (its handle or PCI info), 0 when it answered
                     */
    char pci[16];
    int remap_pending;         /* rows remapped that take effect at the next reset */
    int remap_failed;          /* a row could not be remapped: the GPU needs repair */
    long long ecc_uncorrected; /* uncorrectable ECC errors since the driver loaded */
    long long slowdown;        /* the clock event reasons active now, a mask */
};

/* The health of this machine's NVIDIA GPUs, at most max into out; returns how many NVML lists,
 * or -1 when it does not answer (no driver, no GPU). */
int topo_gpu_health(struct topo_gpu_health *out, int max);

/* The PCIe link of the device at PCI address pci ("0000:03:00.0") as this host's sysfs says
 * (under TOPOTUNE_SYSFS_ROOT): its width and rate (GT/s) now, and the most it can train to, the
 * lesser of the device's maximum and its port's (a port that claims less than the link runs at
 * is emulated, a VM's: the device's alone then). 0 where sysfs does not say. Returns 0 when the
 * device's folder is there, else -1. */
struct topo_pci_link {
    int width_now, width_max;
    double gts_now, gts_max;
    int vendor, class_code; /* what is at the address (0x10de, 0x030200), -1 where unknown */
};
int topo_pci_link_read(const char *pci, struct topo_pci_link *l);

/* Empty topology; topo_release frees what loading added. */
void topo_init(struct topo *t);
void topo_release(struct topo *t);

/*
 * Maps the live machine (input NULL; $TOPOTUNE_TOPOLOGY, when set, names a file
 * that stands for its hardware) or a file: a hwloc XML export or an NCCL
 * topology XML, told apart by content. Computes the matrix and the node class.
 * Returns 0, or a negative UTIL_E* code after printing one line naming the file
 * and what is wrong (UTIL_EINVAL, UTIL_ENOENT, UTIL_ENOTSUP).
 */
int topo_load(struct topo *t, const char *input);

/*
 * The hardware of file (a topology or spec) on this machine: the host name and
 * system facts are this machine's; so are the software versions, unless the
 * file names an NCCL version (a spec of a node's image), which is then kept
 * with the rest of the file's software block. What $TOPOTUNE_TOPOLOGY does for
 * topo_load(t, NULL), and what `doctor --input` checks.
 */
int topo_load_as_this_node(struct topo *t, const char *file);

/* Same as topo_load for a file already in memory (the fuzz target's entry point). */
int topo_load_buffer(struct topo *t, const char *name, const char *data, size_t len);

/* New reference: the topology JSON (schema topotune/topology/1). */
json_t *topo_to_json(const struct topo *t);

/*
 * NCCL's topology file (NCCL_TOPO_FILE) of t, appended to out: a <cpu> per NUMA node, a <pci>
 * per PCIe switch (virtual bus ids, ffff:ff:DD.0), the GPUs and NICs by bus id, written as NCCL's
 * own reader takes it (topo/write-nccl.c says how). 0, or UTIL_EINVAL (said) when a device has
 * no bus id (a spec): NCCL matches a file's devices with the ones it finds by bus id.
 */
struct util_buf;
int topo_write_nccl_xml(const struct topo *t, struct util_buf *out);

/*
 * A GPU's PCIe link as gen and width: the source's (width 16 where it gives a gen alone), or
 * those its rate gives (an hwloc export states GB/s alone) from gen 3 x16 up: 1. Else 0, and an
 * estimate: below gen 3 x16 the export caught a GPU at rest (trained down to gen 1), and the
 * link is x16 of the generation its model is built for (the catalog's: 6 for Blackwell Ultra, 5
 * for Hopper and Blackwell, 4 for Ampere and Ada), what NCCL reads on the live node where the
 * slot carries it; where the source says nothing, gen 3 x16, NCCL's own assumption.
 */
int topo_gpu_pcie_link(const struct topo_gpu *g, int *gen, int *width);

/*
 * How GPUs a and b reach each other over PCIe, lettered as nvidia-smi would without their NVLinks
 * ("PIX", "PXB", "PHB", "NODE", "SYS"): from the PCI tree, else the matrix cell when it is not
 * an NVLink's; NULL where neither says (an NVLink pair of a topology JSON, which has no tree). What
 * a path between them takes when NCCL does not use their NVLinks (P2P disabled: host memory,
 * through the CPU).
 */
const char *topo_gpu_pci_path(const struct topo *t, int a, int b);

/* The human summary and the nvidia-smi style matrix, to out. */
void topo_print_summary(const struct topo *t, FILE *out);
void topo_print_matrix(const struct topo *t, FILE *out);

/*
 * The hardware catalog (profiles/hardware/, built into the program): the
 * entry for a GPU or NIC model name as a borrowed reference, or NULL. names
 * lists the valid names, comma-separated (static storage).
 */
json_t *topo_catalog_gpu(const char *name);
json_t *topo_catalog_nic(const char *name);
const char *topo_catalog_gpu_names(void);
const char *topo_catalog_nic_names(void);

/*
 * s made safe to print, in out (size bytes, at least 4): control characters
 * (C0, DEL, C1, so every terminal escape), bidirectional overrides and bytes
 * that are not UTF-8 become '?'; text that does not fit ends in "...". NULL
 * reads as "". Returns out.
 */
const char *topo_text_into(const char *s, char *out, size_t size);

/* Whether s is a node class id as topo writes them (docs/schemas/topology.schema.json, classId):
 * a lowercase slug, a dash, 8 hex digits, at most 200 characters. */
int topo_class_id_valid(const char *s);

/* "ib", "roce", "efa", "eth", "cxi" or "unknown". */
const char *topo_nic_kind_name(enum topo_nic_kind kind);

/* Whether NCCL moves data over this kind of NIC by RDMA (IB, RoCE, EFA, CXI), not sockets. */
int topo_nic_rdma(enum topo_nic_kind kind);

/* Whether NCCL reaches this kind through libfabric and the aws-ofi-nccl plugin (EFA, CXI), which
 * reads none of NCCL_IB_HCA, NCCL_IB_DISABLE and the other NCCL_IB_* variables. */
int topo_nic_libfabric(enum topo_nic_kind kind);

/* Whether NCCL drives this kind with its own IB transport (InfiniBand, RoCE): the RDMA NICs that
 * NCCL_IB_HCA selects and the NCCL_IB_* variables tune. */
int topo_nic_verbs(enum topo_nic_kind kind);

/* The NICs of t that NCCL reaches through libfabric. Where there are any, NCCL runs on its net
 * plugin and sees only theirs: InfiniBand or RoCE HCAs beside them carry none of its traffic (an
 * AWS p6's two ConnectX-7 manage its NVSwitches) and no NCCL_IB_* variable is read. */
int topo_libfabric_nics(const struct topo *t);

#endif
