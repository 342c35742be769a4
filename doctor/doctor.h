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
 * environment; profile is a stored profile.json or NULL. Returns a new
 * reference: [{"name", "status", "evidence", "fix"}].
 */
json_t *doctor_run(const struct topo *t, const json_t *profile);

/* `topotune doctor`: returns the exit code (1 when a check fails). */
int cmd_doctor(int argc, char **argv);

#endif
