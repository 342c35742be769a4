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

/* The interfaces that are up, besides lo, by name: "eth0,ib0" (free it). */
char *doctor_up_interfaces(void);

/* 5b. InfiniBand and RoCE ports: active, and the RoCE v2 GID index NCCL needs. */
void doctor_check_rdma(json_t *checks);

/* 3b. A peer copy of a known pattern between every GPU pair, in a child under a deadline. */
void doctor_check_p2p_copy(json_t *checks, const struct topo *t, double timeout_s);

#endif
