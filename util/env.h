/* SPDX-License-Identifier: MIT */
/* The environment that may be recorded: only variables of known tool families, never secrets. */
#ifndef UTIL_ENV_H
#define UTIL_ENV_H

#include <jansson.h>

/* 1 when name belongs to NCCL_*, CUDA_*, OMPI_*, UCX_*, FI_* or TORCH_*. */
int util_env_recordable(const char *name);

/* New reference: an object of the recordable variables of this process, sorted by name. */
json_t *util_env_recorded(void);

#endif
