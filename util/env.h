/* SPDX-License-Identifier: MIT */
/* The environment that may be recorded: only variables of known tool families, never secrets. */
#ifndef UTIL_ENV_H
#define UTIL_ENV_H

#include <jansson.h>

/* 1 when name belongs to NCCL_*, CUDA_*, OMPI_*, UCX_*, FI_* or TORCH_*. */
int util_env_recordable(const char *name);

/*
 * The policy for every variable a file or a flag may set for a run or a profile
 * (a space, --env, a results line, a profile): NULL when name may be set, else
 * why not, in words for the error message (a static string). Allowed are names
 * [A-Z_][A-Za-z0-9_]* of at most 128 characters in the families the tool tunes:
 * NCCL_, CUDA_, UCX_, FI_, TORCH_NCCL_, TORCH_DISTRIBUTED_, and Open MPI's
 * OMPI_MCA_ of the btl, pml, mtl, coll, osc, oob_tcp, hwloc_base and rmaps_base
 * frameworks. Refused, whatever the family: what loads code or runs a command
 * (LD_*, *PRELOAD*, *PLUGIN*, *INJECTION*, *LIBRARY*, *AGENT*, *EXEC*), search
 * paths (*PATH*), and files written or read at a path (*FILE*, *DUMP*, *_DIR):
 * the tool sets NCCL_DEBUG_FILE itself.
 */
const char *util_env_refused(const char *name);

/* New reference: an object of the recordable variables of this process, sorted by name. */
json_t *util_env_recorded(void);

#endif
