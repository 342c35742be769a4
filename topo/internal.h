/* SPDX-License-Identifier: MIT */
/* What the readers, probes and the matrix share inside topo/. */
#ifndef TOPO_INTERNAL_H
#define TOPO_INTERNAL_H

#include "topo/topo.h"

#include <hwloc.h>
#include <libxml/tree.h>

/*
 * The PCI tree the readers build. Locality nodes are NUMA-level attach points
 * (hwloc's non-I/O parents, NCCL's <cpu>); host bridges hang below them, PCIe
 * bridges below those, devices at the leaves. `bridges` counts the PCIe
 * bridges a node stands for: one per hwloc bridge object, three for an NCCL
 * <pci> switch (a path through a switch crosses a downstream port, the
 * upstream port and another downstream port). The matrix letters come from
 * the lowest common ancestor of two devices and the bridges crossed.
 */
enum topo_pnode_kind {
    TOPO_PNODE_LOCALITY,
    TOPO_PNODE_HOSTBRIDGE,
    TOPO_PNODE_BRIDGE,
    TOPO_PNODE_DEVICE
};

/* Adds a node and returns its index. */
int topo_add_pnode(struct topo *t, int kind, int parent, int bridges, int numa);
/* Appends a zeroed GPU or NIC with unknown fields; NULL past TOPO_MAX_DEVICES (too_many set). */
struct topo_gpu *topo_add_gpu(struct topo *t);
struct topo_nic *topo_add_nic(struct topo *t);

/* A PCIe generation's rate per lane and direction, GB/s (0 for a generation not 1 to 6). */
double topo_pcie_lane_gbs(int gen);
/* A link's rate per direction, GB/s, of gen and width; -1 where either is unknown. */
double topo_pcie_link_gbs(int gen, long width);
/* The generation and width of a link of gbs per direction, as hwloc states it (its
 * pci_link_speed): the widest of x16, x8, x4, x2, x1 whose lane rate is a generation's, within
 * 3%; 0 when none is (NCCL reads only their product, width x rate). */
int topo_pcie_rate(double gbs, int *gen, int *width);
/* The generation of a link of gts GT/s per lane (a sysfs or NCCL rate, "16.0 GT/s"); 0 for none. */
int topo_pcie_gen_of(double gts);
/* Allocates the ngpus x ngpus NVLink table, zeroed. */
void topo_alloc_nvlink(struct topo *t);

/*
 * Records NVLinks through an NVSwitch fabric: fabric[i] links of GPU i go to
 * switches, so every pair of fabric GPUs is joined by the smaller count, as
 * nvidia-smi shows (NV6 between any two DGX-2 GPUs). Also sets each GPU's
 * nvlinks total from direct links plus fabric links.
 */
void topo_set_nvlink_totals(struct topo *t, const int *fabric);
/* 1 when every GPU is a model known to have no NVLink at all. */
int topo_gpus_lack_nvlink(const struct topo *t);

/* nvidia-smi letter for a pair of nodes (never "X" or "NV#"), or NULL if unknown. */
const char *topo_path_letter(const struct topo *t, int a, int b);
/* Fills t->matrix from nodes and NVLink counts. */
int topo_compute_matrix(struct topo *t);
/* Fills class_key and class_id. */
int topo_compute_class(struct topo *t);

/* Readers: each fills t from its source and prints its own errors. */
int topo_read_hwloc(struct topo *t, hwloc_topology_t h, int live);
int topo_read_nccl_xml(struct topo *t, const char *name, xmlDoc *doc);
int topo_read_spec(struct topo *t, const char *name, json_t *spec);
int topo_read_json(struct topo *t, const char *name, json_t *doc);

/* Live probes, all reading under util_sysfs_root(). */
void topo_probe_system(struct topo *t);
void topo_probe_software(struct topo *t);
void topo_probe_nic(struct topo_nic *nic);
/* GPUs, NVLink and P2P from libcuda and libnvidia-ml when they load; 0 if absent. */
int topo_probe_nvidia(struct topo *t, hwloc_topology_t h);

/* GPU facts by model name or PCI device id. */
struct topo_gpu_info {
    const char *match;  /* a word of the model name: no letter or digit just before it, no
                         * digit just after ("A10" is not in "A100", nor "B200" in "GB200") */
    unsigned device_id; /* PCI device id, 0 if not listed */
    const char *name;   /* canonical name */
    int sm;
    int nvlinks;  /* NVLinks per GPU, 0 for PCIe cards without a bridge */
    int link_mbs; /* MB/s per link per direction, as hwloc reports NVLink bandwidth */
    int pcie_gen; /* the PCIe generation its host link is built for */
    int switched; /* made for NVSwitch boards and racks only (HGX B200 and B300, NVL72 trays):
                   * their switches are never on the host's PCI (HGX Blackwell's are reached
                   * through a ConnectX "IB bridge", not as PCI devices of their own) */
};
const struct topo_gpu_info *topo_gpu_info_by_name(const char *model);
const struct topo_gpu_info *topo_gpu_info_by_device(unsigned device_id);

/*
 * NVLink for a source that names the GPUs but not their links (an hwloc export made without
 * NVML, as AWS's are): when every GPU is one model of fixed NVLinks (SXM, not a bridged card) and
 * the file shows NVSwitches on PCI, or the model lives on NVSwitch racks only (GB200, GB300),
 * each GPU gets its model's links to the switches (nvlink_inferred). Call after the source's own
 * NVLink facts; a source that gave them is left as it is.
 */
void topo_infer_nvlink(struct topo *t);

/* Duplicates s (NULL stays NULL); aborts on out of memory like git's xstrdup. */
char *topo_strdup(const char *s);

/* The longest string a reader keeps from a file (host, model, NIC names ...), in bytes. */
#define TOPO_MAX_TEXT 255
/*
 * A copy of text read from a file or the system, as topo_text_into cleans it
 * into TOPO_MAX_TEXT bytes (NULL stays NULL); every string a reader keeps goes
 * through it, so no output echoes a terminal escape or grows with the input.
 * Aborts on out of memory like topo_strdup.
 */
char *topo_text(const char *s);

/* A model name (a CPU's) a reader kept (topo_text's copy), its runs of spaces made one and none
 * kept at either end, in place (NULL stays NULL):
 * hwloc 2 keeps the padding of the CPU's brand string ("AMD EPYC 7402 24-Core Processor" and 16
 * spaces), hwloc 1.11 cuts it, and the model is part of the node class. Every reader of a CPU
 * model goes through it, so one node's exports, its topology JSON and a spec are one class. */
char *topo_model_squeeze(char *s);

/*
 * What the topology schema allows (docs/schemas/topology.schema.json), 1 or 0:
 * a PCI bus id ("0000:18:00.0", at most 15 bytes); an RDMA device or network interface name
 * (letters, digits, _ . @ + -, at most 64 bytes, so it is safe in an
 * environment value or a generated script); a version string (letters,
 * digits, . + ~ _ -, at most 64 bytes).
 */
int topo_valid_busid(const char *s);
/* Whether a PCI vendor and device are HPE Slingshot 11's Cassini NIC (Cassini 1 under Cray's
 * vendor id 0x17db, device 0x0501; Cassini 2 under HPE's 0x1590, device 0x0371). */
int topo_is_cassini(long vendor, long device);
int topo_valid_ifname(const char *s);
int topo_valid_version(const char *s);

#endif
