/* SPDX-License-Identifier: MIT */
/*
 * Preflight checks for the causes of most distributed-training hangs: each check
 * says pass, warn, fail or unknown (with why), the evidence, and the fix.
 */
#ifndef DOCTOR_DOCTOR_H
#define DOCTOR_DOCTOR_H

#include "topo/topo.h"

#include <jansson.h>

/*
 * Runs every check for topology t (the hardware) on this process's system and
 * environment; profile is a stored profile.json or NULL; copy_timeout_s bounds
 * the functional P2P test (0: a default that grows with the GPU count).
 * Returns a new reference: [{"name", "status", "evidence", "fix"}].
 */
json_t *doctor_run(const struct topo *t, const json_t *profile, double copy_timeout_s);

/* That default: the seconds the functional P2P test of t's GPUs gets (15 + n^2 / 2 for n GPUs:
 * a copy between every pair). Its child gets 2 s more to stop once told. */
double doctor_copy_timeout_s(const struct topo *t);

/*
 * One node's part of `doctor --hosts`: the facts compared across nodes (class,
 * software versions, interfaces, /dev/shm) and its own checks. New reference.
 */
json_t *doctor_node_report(const struct topo *t, const json_t *profile, double copy_timeout_s);

/*
 * Compares node reports (each with "host" and "clock", as topotune-node sends
 * them) and returns the across-node checks, naming the odd node out of each.
 */
json_t *doctor_compare_nodes(const json_t *nodes);

/*
 * The values of a profile that differ from node to node (device and interface names, GID
 * indexes), resolved on this node, so that one job script serves nodes whose names differ. The
 * names are util_env_per_node's; each the profile sets (all with every) gets this node's value:
 *   NCCL_IB_HCA: the profile's value when this node has every device and port it names (as NCCL
 *     matches them: by prefix, whole after '='; an exclusion list, "^...", always), else
 *     "=DEV:PORT,..." its active InfiniBand ports and RoCE ports that have a RoCE v2 IPv4 GID;
 *   NCCL_IB_GID_INDEX: that GID index, when all its RoCE ports agree;
 *   NCCL_SOCKET_IFNAME: the profile's value when an interface here with an address matches it
 *     (NCCL's syntax), else "=IF", the first such interface that is no bridge or veth.
 * Returns {NAME: value}, new; a name this node has nothing for is null there (to be unset: the
 * profile's value names another node's device), and why is a line of *notes (a new array).
 */
json_t *doctor_node_env(const json_t *profile, int every, json_t **notes);

#endif
