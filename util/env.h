/* SPDX-License-Identifier: MIT */
/* The environment: what a file may set (an allow-list) and what results may record (families). */
#ifndef UTIL_ENV_H
#define UTIL_ENV_H

#include <jansson.h>

/* 1 when name belongs to NCCL_*, CUDA_*, OMPI_*, UCX_*, FI_* or TORCH_*. */
int util_env_recordable(const char *name);

/*
 * The policy for every variable a file or a flag may set for a run or a profile
 * (a space, --env, a results line, a profile): NULL when name may be set, else
 * why not, in words for the error message (a static string). Allowed are the
 * exact names of an allow-list (util/env.c: the tuning variables NCCL, Open MPI,
 * UCX, libfabric, CUDA and PyTorch document, none that names a program, a
 * library, a path, a file, an address or a mail recipient), and the exact names
 * the operator lists in $TOPOTUNE_ALLOW_VARS (spaces or commas between them),
 * except those refused by name: LD_*, the shell's startup variables, and any
 * name with a whole word (between underscores) such as PLUGIN, PATH, FILE, DIR,
 * COMMAND or HOME. Nothing is allowed by family or refused by substring.
 * Distinct from util_env_recordable, which says what results may RECORD.
 */
const char *util_env_refused(const char *name);

/* Why value is no value NCCL reads as meant for variable name, or NULL: an NCCL variable set to
 * "" (NCCL takes it as unset), or one NCCL reads as an integer (NCCL_PARAM) set to anything but
 * a decimal integer (NCCL would read "1K" as 1 and "banana" as 0, silently). */
const char *util_env_value_refused(const char *name, const char *value);

/*
 * 1 when name's value differs from node to node on the same hardware (device and interface
 * names, GID indexes): NCCL_IB_HCA, NCCL_IB_GID_INDEX, NCCL_SOCKET_IFNAME, Open MPI's
 * OMPI_MCA_btl_tcp_if_include and OMPI_MCA_oob_tcp_if_include, UCX_NET_DEVICES. A profile's
 * value of one was measured on one node; each node resolves its own (topotune env --node).
 */
int util_env_per_node(const char *name);

/*
 * The NCCL release whose sources first read the variable name, as a version code (major x 10000
 * + minor x 100 + patch: 22304 for 2.23.4), from NVIDIA/nccl's history; 0 for one read since
 * 2.12 or earlier, or not NCCL's. NCCL ignores a variable it does not read, silently: a sweep
 * leaves out what the NCCL it runs has not (sweep_space_prune).
 */
int util_env_nccl_since(const char *name);
/* The first NCCL release whose sources no longer read the variable (23007 for 2.30.7), from the
 * same history; 0 while NCCL still reads it. */
int util_env_nccl_gone(const char *name);
/* "2.28.9" (or "2.28.9+cuda13.0") as a version code; 0 when text is not one. */
int util_env_nccl_version(const char *text);

/* New reference: an object of the recordable variables of this process, sorted by name. */
json_t *util_env_recorded(void);

/*
 * The value NCCL reads for variable name in a process started from this one: the environment's,
 * else that of the first of NCCL's configuration files that sets it ($NCCL_CONF_FILE when set
 * and not empty, else ~/.nccl.conf, the home directory $HOME or, without it, the user's, as NCCL
 * 2.30 and NCCL up to 2.29 find it; then /etc/nccl.conf), which NCCL loads into its own
 * environment at init without replacing what is set. Their lines are NAME=VALUE, read as NCCL
 * reads them: '#' at the start makes a comment, nothing is trimmed but the line's end. NULL when
 * nothing sets it. *from (when from is not NULL) is the file's path, or NULL for the
 * environment. A file that is not regular or is over 1 MiB is not read (a warning, once).
 * The values stay valid until $NCCL_CONF_FILE or $HOME changes.
 */
const char *util_env_nccl(const char *name, const char **from);

/* New reference: what NCCL's configuration files set (util_env_nccl) that this process's
 * environment does not, as an object of NAME: [VALUE, FILE]. */
json_t *util_env_nccl_files(void);

/* New reference: the NCCL variables a process started from this one hands NCCL, NCCL_CONF_FILE
 * left out (what its file sets is there instead): the environment's as NAME: VALUE and, with
 * files (NCCL runs here), what NCCL's configuration files set under it as NAME: [VALUE, FILE]. */
json_t *util_env_nccl_reaching(int files);

#endif
