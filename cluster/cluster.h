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

#endif
