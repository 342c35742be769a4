/* SPDX-License-Identifier: MIT */
/* Shared by the check modules of doctor/. */
#ifndef DOCTOR_INTERNAL_H
#define DOCTOR_INTERNAL_H

#include "topo/topo.h"

#include <jansson.h>

/* Appends {"name", "status", "evidence", "fix"} (fix may be NULL) to checks. */
__attribute__((format(printf, 5, 6))) void doctor_add(json_t *checks, const char *name,
                                                      const char *status, const char *fix,
                                                      const char *fmt, ...);

/*
 * The interface NCCL's bootstrap takes (up, with an address, in getifaddrs' order) for spec, as
 * NCCL_SOCKET_IFNAME reads it ("^a,b": none of those; "=a,b": exactly those; "a,b": by
 * prefix), unless that is lo taken by an exclusion ("^docker": a job across nodes cannot start);
 * with spec NULL the data network's: an ib interface, else the first that is no container
 * bridge, veth or lo. Into out; 1 when found, else 0 and "".
 */
int doctor_data_interface(const char *spec, char *out, size_t len);

/* The interface NCCL's bootstrap takes for spec (NULL: NCCL's default order), lo included, into
 * out; 1 when found, else 0 and "". */
int doctor_nccl_interface(const char *spec, char *out, size_t len);

/* The names of the interfaces that are up here, lo included, in ifindex order: a new array. */
json_t *doctor_up_interface_names(void);

/* Whether NCCL_IB_HCA's value (NULL or "": unset, every port) takes port p of
 * doctor_rdma_ports, as NCCL reads it: "^" leaves out, "=" whole device names, an entry's ":port"
 * that port only. */
int doctor_hca_takes(const char *value, const json_t *p);

/* The interfaces a node's traffic can leave by (up, addressed, no lo, bridge or veth: those are
 * named at random per container), by name: "eth0,ib0" (free it). */
char *doctor_up_interfaces(void);

/*
 * The InfiniBand and RoCE ports of this node (sysfs under the root; not Slingshot's cxi devices,
 * which NCCL never uses), sorted by device and port:
 * [{dev, port, active, roce, gid: the RoCE v2 IPv4 GID index of an active RoCE port or -1, addr}].
 */
json_t *doctor_rdma_ports(void);

/*
 * With a profile that sets per-node values (util_env_per_node): "node-values", this shell's
 * values against this node's (doctor_node_env): a device, interface or GID index this node does
 * not have fails; a name this node has nothing for warns.
 */
void doctor_check_node_values(json_t *checks, const json_t *profile);

/* 5b. InfiniBand and RoCE ports: active, and the RoCE v2 GID index NCCL needs; a node whose NICs
 * NCCL reaches through libfabric (EFA, Slingshot) is said to be one. */
void doctor_check_rdma(json_t *checks, const struct topo *t);

/* 3b. A peer copy of a known pattern between every GPU pair, in a child under a deadline.
 * Returns 1 when the copy's process did not end after SIGKILL (left behind: what asks the
 * driver next may wait with it), else 0. */
int doctor_check_p2p_copy(json_t *checks, const struct topo *t, double timeout_s,
                          const char *p2p_off);
/* What keeps P2P off PCIe for the job, in words ("NCCL_P2P_DISABLE=1 (this environment)"): that
 * variable as NCCL reads it (strtol's 1: "01" and "0x1" too) or NCCL_P2P_LEVEL below PIX (LOC,
 * NVL, NVB, C2C or 0), here or in the profile the job runs with; NULL: nothing. The text lives
 * until the next call. */
const char *doctor_p2p_disabled_by(const json_t *profile);

#endif
