/* SPDX-License-Identifier: MIT */
/*
 * What a profile's per-size tuner table adds (`topotune verify PROFILE`), for one collective at a
 * time (all_reduce by default; a workload profile's table has rows for others). For the
 * profile's class three configurations run: the reference (NCCL's defaults with the profile's
 * system variables: its cure), env-only (all of its variables) and env + the table applied by
 * topotune's tuner plugin; per size, the busbw of each and the gain of env + table over env-only
 * and over the reference. verify_predicted takes every number from the model and labels it
 * predicted (a configuration predicted to hang, fail or corrupt shows that instead of a busbw);
 * verify_measured runs topotune-bench. Both print a table on stdout, or one JSON document.
 * Errors follow util/error.h.
 */
#ifndef VERIFY_VERIFY_H
#define VERIFY_VERIFY_H

#include "topo/topo.h"

#include <jansson.h>
#include <stddef.h>

struct verify_opts {
    const char *profile;  /* as the user gave it: named in the output */
    const char *topology; /* predicted: the class's topology file or hardware spec */
    const char *backend;  /* "nccl": measured; NULL or "sim": predicted */
    const char *launcher; /* measured: direct, mpirun or srun */
    const char *hosts;    /* measured: the nodes, for mpirun, or NULL */
    const char *out;      /* measured: where runs and logs go (NULL: a new directory in /tmp) */
    int nodes;            /* predicted: nodes of the class (0: the topology's) */
    int coll;             /* enum model_coll: one NCCL asks its tuner for (verify_coll_refused) */
    int json;             /* one JSON document instead of the table */
    int np;               /* measured: ranks, one per GPU */
    int repeat;           /* measured: runs per configuration, interleaved and averaged */
    double timeout_s;     /* measured: the benchmark's deadline for one wait */
    size_t min_bytes, max_bytes; /* the sizes, growing 4 times */
};

/* Why collective coll (enum model_coll) cannot be verified, or NULL: alltoall and sendrecv are
 * NCCL's sends and receives, for which it asks no tuner, so a table has no row to apply. */
const char *verify_coll_refused(int coll);

/* PROFILE's profile.json (PROFILE: a profile directory or that file), and the path of the
 * tuner-table.txt beside it into table. NULL after an error naming the file. */
json_t *verify_load_profile(const char *profile, char *table, size_t len);

/* The model's comparison for topology t. Returns how many sizes env + table is predicted not
 * to run correctly at (said as an error when not 0), or UTIL_EINVAL after an error (a table
 * that does not load, a topology without a GPU). */
int verify_predicted(const struct verify_opts *o, const json_t *profile, const char *table,
                     const struct topo *t);

/*
 * The measured comparison: o->repeat rounds of the three configurations, interleaved so that
 * drift hits all three alike, each through o->launcher in an environment cleared of the shell's
 * NCCL_*. Returns 0; UTIL_ENOTSUP when the plugin is not installed beside this program;
 * UTIL_ENOENT without the table; UTIL_EINVAL when the profile sets a variable verify does not
 * set; UTIL_EENV when a run failed, the directory cannot be made or is another verify's, or
 * NCCL's log shows the table was not applied; UTIL_EINTR when a signal ended it.
 */
int verify_measured(const struct verify_opts *o, const json_t *profile, const char *table);

#endif
