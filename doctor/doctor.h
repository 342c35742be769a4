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

#endif
