/* SPDX-License-Identifier: MIT */
/*
 * Running topotune on every node of a job: Open MPI's mpirun starts
 * topotune-node once per host (--hosts h1,h2, or the hosts of the Slurm
 * allocation it runs in), each rank writes its node's report, rank 0 gathers
 * them over MPI and prints one JSON document. No launcher of our own.
 */
#ifndef CLUSTER_CLUSTER_H
#define CLUSTER_CLUSTER_H

#include <jansson.h>

/*
 * Runs `topotune-node WHAT ARGS...` on every host of hosts (comma-separated; NULL
 * inside a Slurm allocation: one per allocated node) under a deadline. Returns
 * a new reference: the array of node reports, one per host, each with "host"
 * and "rank"; or NULL after printing what failed (mpirun's own words, the host
 * it names) with the fix.
 */
json_t *cluster_gather(const char *hosts, const char *what, char *const *args, double timeout_s);

/*
 * Open MPI settings that keep its TCP traffic off container bridges and veths
 * (docker0 has the same 172.17.0.0/16 on every node and joins none of them):
 * OMPI_MCA_oob_tcp_if_exclude, and with btl also OMPI_MCA_btl_tcp_if_exclude,
 * each only when the user has set neither its include nor its exclude. The
 * names are docker0, virbr0 and this machine's own virtual interfaces. Appends
 * malloc'd NAME=VALUE strings to env (room for 2 more); returns how many.
 */
int cluster_tcp_env(char **env, int btl);

/* 1 when hosts is NULL and this process runs inside a Slurm allocation. */
int cluster_in_slurm(void);

/* The number of comma-separated names in hosts (0 for NULL or ""). */
int cluster_count_hosts(const char *hosts);

/*
 * Checks a command's --hosts LIST and --allocation flag: not both, a list with
 * names in it, an allocation only inside Slurm. Returns 0, or 2 (usage) after
 * an error naming the flag and the fix.
 */
int cluster_check_nodes(const char *hosts, int allocation);

#endif
