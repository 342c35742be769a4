/* SPDX-License-Identifier: MIT */
/*
 * Profiles: the fastest stable configuration per node class, chosen from sweep
 * results, written as versioned directories of what teams store with their
 * container images (docs/design.md).
 */
#ifndef GEN_GEN_H
#define GEN_GEN_H

#include <jansson.h>
#include <stddef.h>

/*
 * Chooses one class's profile from the results of sweeps of that class.
 * sweeps: array of sweep.json documents; results: array of result lines of
 * that class. Returns a new reference to the profile's content (schema
 * topotune/profile/1, without version, date or hash), or NULL with an error.
 */
json_t *gen_select(json_t *sweeps, json_t *results, const char *class_id);

/*
 * Stores content under root/<class>/v<N> when it differs from the latest
 * version (by content hash), updates `latest` and root/index.json. Every file
 * is written to a temporary name first; the version directory appears whole.
 * *version gets the version written or the unchanged latest; *created 1 when new.
 * Returns 0 or a negative UTIL_E* code.
 */
int gen_store(const char *root, json_t *content, int *version, int *created);

/* The largest version gen writes (v<N>, N from 1): a larger one in a store is planted. */
#define GEN_MAX_VERSION 1000000

/*
 * Adds DIR's sweep.json (with "dir" added) to sweeps and its result lines to
 * results, every field checked first (sweep_load_dir: a sweep directory is
 * untrusted). Returns 0, or -1 after an error naming the file, line and field.
 */
int gen_load_sweep(const char *dir, json_t *sweeps, json_t *results);

/* The job a profile was measured on, which a launch template starts unless told otherwise:
 * sweep.nodes and sweep.ranks. A profile written before gen recorded the nodes: its ranks
 * (sweep.ranks, else its tuner rows', else a prediction's nodes with a rank per GPU) over its
 * hardware's GPUs a node, else its tuner rows' nodes (NCCL's: an NVLink domain's trays are one),
 * else a prediction's; else one node, said by known 0. */
struct gen_shape {
    long long nodes, ranks; /* the measured communicator: machines, and ranks on all of them */
    long long ppn;          /* ranks per node (at least 1) */
    long long gpus;         /* GPUs per node to ask for: 0 for an mpi profile or GPU-less nodes */
    int known;              /* 0: the profile says nothing of its nodes (one is assumed) */
    long long domain_hosts; /* hosts per NVLink domain, which NCCL counts as one node (the
                             * per-size table's rows do): 1 but for multi-node NVLink racks */
};
void gen_shape(const json_t *profile, struct gen_shape *shape);

/*
 * A profile as a user names it: a profile directory (its profile.json, not followed if it is a
 * link) or that file (links followed), a FIFO or device refused, at most 64 MiB, checked by
 * gen_profile_check. The file read goes into path. NULL after an error naming the file.
 */
json_t *gen_profile_read(const char *arg, char *path, size_t len);

/*
 * A class directory's latest version as gen keeps it: CLASSDIR/latest, a link to v<N> beside it,
 * written into out as CLASSDIR/v<N>. Returns N; 0 when there is no latest; -1 after an error
 * naming it when it is anything else (a directory, a file, a link elsewhere: planted, its
 * profile is no version of the store's).
 */
int gen_latest_dir(const char *classdir, char *out, size_t len);
/* When path names a store's CLASS/latest (its last part "latest"), gen_latest_dir's judgement of
 * it, the class folder taken by name ("latest/.." resolves through the link): -1 after an error
 * naming a link, or a version folder that is one, planted there; else 0. */
int gen_latest_path_check(const char *path);

/*
 * What every reader of a profile relies on, each field of its type (the file may be damaged or
 * hostile): an object with a "class" of a node class id's characters, "version" a whole number
 * from 1 to 1000000 when present, "summary", "created" and "content_hash" text when present,
 * "variables" an array of objects each with a "name" of letters, digits and _ (not a digit
 * first), a text "value" and, when present, a text "role". 0, or -1 after an error naming the
 * file and the field.
 */
int gen_profile_check(const json_t *p, const char *path);

/* Where the tuner plugin is installed, next to this program (PREFIX/lib or PREFIX/lib64
 * libnccl-tuner-topotune.so, or the build tree's tuner/), into path; "" when not found. */
void gen_tuner_plugin_path(char *path, size_t len);

#endif
