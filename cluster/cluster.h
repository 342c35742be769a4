/* SPDX-License-Identifier: MIT */
/*
 * Running topotune on every node of a job: Open MPI's mpirun starts
 * topotune-node once per host (--hosts h1,h2, or the hosts of the Slurm
 * allocation it runs in), each rank prints its node's report, and mpirun's
 * tagged output brings every node's back. No launcher of our own.
 */
#ifndef CLUSTER_CLUSTER_H
#define CLUSTER_CLUSTER_H

#include <jansson.h>

/*
 * Runs `topotune-node WHAT ARGS...` on every host of hosts (comma-separated; NULL
 * inside a Slurm allocation: one per allocated node) under a deadline. Returns
 * a new reference: the array of node reports, one per rank (one rank a host),
 * each with "host" and "rank" ("clock" when every node reached the barrier).
 * A node that hung or ended before its report is {"host", "rank", "error",
 * "answered": false} (a node's own error report has no "answered"):
 * the error says what mpirun said (the others' reports are kept; "host" is
 * missing when neither the node nor the list can name it: its error lists the
 * listed hosts no report named). NULL, after
 * printing what failed (mpirun's own words, the host it names) with the fix,
 * when no report came back at all, mpirun could not start, or it started
 * fewer ranks than the Slurm allocation has nodes.
 */
json_t *cluster_gather(const char *hosts, const char *what, char *const *args, double timeout_s);

#endif
