/* SPDX-License-Identifier: MIT */
/* What gen/ shares internally: the emitters of a profile's files. */
#ifndef GEN_INTERNAL_H
#define GEN_INTERNAL_H

#include "gen/gen.h"
#include "util/buf.h"

/*
 * One output format: path inside the version directory, and a function that
 * renders the stored profile (profile.json's content, version and hash
 * included) into out. Returns 0, or -1 when something refuses to be emitted.
 */
struct gen_emitter {
    const char *path;
    int executable;
    int (*emit)(const json_t *profile, struct util_buf *out);
};

extern const struct gen_emitter gen_emit_env, gen_emit_conf, gen_emit_tuner, gen_emit_tuner_table,
    gen_emit_torchrun, gen_emit_sbatch, gen_emit_mpirun, gen_emit_pytorchjob, gen_emit_dockerfile,
    gen_emit_check_daemonset, gen_emit_survey_job;

/*
 * profile.json's "tuner" rows (gen/tuner-rows.c): per measured size, the algorithm/protocol of
 * the fastest configuration in candidates (an array of run arrays, one per stable configuration)
 * where it differs from the reference's (the runs of what applies without the table: the
 * profile's configuration) and beats its busbw there beyond the noise (cv_max x mean); adjacent
 * sizes merged, ranges ending at geometric midpoints; each row with its evidence, its numbers
 * labelled predicted when predicted. ref_name names the reference in the evidence; collective is
 * the rows' (the table's name: allreduce, allgather, reducescatter, broadcast, reduce). Returns
 * a new reference ([] when reference is NULL or empty).
 */
json_t *gen_tuner_rows(json_t *candidates, json_t *reference, double cv_max, const char *ref_name,
                       int predicted, const char *collective);

/*
 * Records in profile (gen/measured.c) what it was measured on: "sweep" gets the nodes and ranks
 * of the runs (the first ok run that reports them: sweep.json's np is not the sim's rank count),
 * and for an mpi sweep "software" says no NCCL version (NCCL never ran; "mpi" names Open MPI).
 */
void gen_measured(json_t *profile, json_t *results);

/* A bash function `shape_check HOSTS RANKS` (uses $profile_dir): a warning on stderr when
 * tuner-table.txt has rows and none fits a communicator of that shape, HOSTS counted as NCCL
 * counts nodes (shape's hosts per NVLink domain as one, as the rows are); nothing under
 * TOPOTUNE_SHAPE_CHECKED (sbatch.sh checked once for the whole job). */
void gen_shape_check(struct util_buf *out, const struct gen_shape *shape);

/* The /dev/shm the SHM transport needs for the profile's GPUs, in KiB (as the model estimates). */
long long gen_shm_need_kb(const json_t *profile);
/* The checks every launch script starts with: profile, one launcher, NCCL version, /dev/shm,
 * PyTorch's NCCL error handling under the names the installed PyTorch reads. */
void gen_shell_prelude(const json_t *profile, struct util_buf *out);

/* The shell lines that make $profile_dir absolute and the version's own folder where it ends in a
 * link (latest): NCCL's plugin reads the table at each communicator's init, and a later gen
 * moves latest (a job launched through it failed its next communicator's init on the new
 * table's digest); a relative TOPOTUNE_PROFILE followed a rank that changed its working folder.
 * The path stays logical (a physical one, every link of it resolved, may not exist on the other
 * nodes), and cd ignores CDPATH (which sent it to another folder of that name). */
#define GEN_SHELL_RESOLVE                                                                          \
    "if ! resolved=$(CDPATH='' cd -- \"$profile_dir\" 2>/dev/null && pwd); then\n"                 \
    "    echo \"$0: no profile at '$profile_dir': set TOPOTUNE_PROFILE to the profile directory "  \
    "(the one holding nccl.env)\" >&2\n"                                                           \
    "    exit 2\n"                                                                                 \
    "fi\n"                                                                                         \
    "for _ in 1 2 3 4 5 6 7 8; do\n"                                                               \
    "    [ -L \"$resolved\" ] || break\n"                                                          \
    "    target=$(readlink -- \"$resolved\")\n"                                                    \
    "    case $target in /*) resolved=$target ;; *) resolved=${resolved%/*}/$target ;; esac\n"     \
    "done\n"                                                                                       \
    "profile_dir=$resolved\n"

/* 1 when the profile sets a variable whose value differs from node to node (util_env_per_node):
 * the launch scripts resolve those on each node ($topotune_bin set, after the prelude). */
int gen_per_node(const json_t *profile);

/* A header of comment lines (prefix "# ") naming the profile, its validity and evidence. */
void gen_header(const json_t *profile, const char *what, struct util_buf *out);
/* Each variable of the profile as NAME=value, after checking names and values again. -1 if bad. */
int gen_each_var(const json_t *profile,
                 int (*fn)(const char *name, const char *value, const char *role, void *ctx),
                 void *ctx);

#endif
