/* SPDX-License-Identifier: MIT */
/*
 * What a profile was measured on, as the launch templates need it: the job's shape (nodes and
 * ranks of the runs) and the software that actually ran (an mpi sweep never ran NCCL).
 */
#include "gen/internal.h"

#include <string.h>

/* The first ok final run that says how many nodes and ranks it ran on, or NULL. */
static json_t *shaped_run(json_t *results)
{
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r) {
        const char *outcome = json_string_value(json_object_get(r, "outcome"));
        if (outcome && !strcmp(outcome, "ok") && json_is_true(json_object_get(r, "final")) &&
            json_integer_value(json_object_get(r, "nodes")) > 0 &&
            json_integer_value(json_object_get(r, "ranks")) > 0)
            return r;
    }
    return NULL;
}

void gen_measured(json_t *profile, json_t *results)
{
    json_t *summary = json_object_get(profile, "sweep"), *run = shaped_run(results);
    if (json_is_object(summary) && run) {
        json_object_set(summary, "nodes", json_object_get(run, "nodes"));
        json_object_set(summary, "ranks", json_object_get(run, "ranks"));
    }
    /* The versions are the machine's; NCCL's is evidence only where NCCL ran. The mpi backend
     * measured Open MPI (software.mpi names it): the installed libnccl had no part in it. */
    const char *backend = json_string_value(json_object_get(profile, "backend"));
    json_t *sw = json_object_get(profile, "software");
    if (backend && !strcmp(backend, "mpi") && json_is_object(sw)) {
        json_t *copy = json_deep_copy(sw);
        json_object_set_new(copy, "nccl", json_null());
        json_object_set_new(profile, "software", copy);
    }
}
