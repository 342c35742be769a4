/* SPDX-License-Identifier: MIT */
/*
 * NCCL's side of the tuner plugin interface, acted out for the tests: loading the library as
 * each NCCL release does (dlopen, then dlsym of the versioned names newest first), creating and
 * destroying communicators, and making one collective call the way each release makes it, with
 * a cost table of the shape and values NCCL's model produces.
 */
#ifndef TESTS_TUNER_NCCL_EMU_H
#define TESTS_TUNER_NCCL_EMU_H

#include "tuner/nccl-tuner-abi.h"

#include <stddef.h>
#include <stdint.h>

#define EMU_ALGOS  7
#define EMU_PROTOS 3

/* One NCCL release as the plugin sees it: the newest interface it resolves (it then tries the
 * older ones in turn) and the number of algorithms in its cost table (6 before PAT, 2.23). */
struct emu_gen {
    const char *release;
    int newest;
    int num_algo;
};

extern const struct emu_gen emu_gens[];
extern const size_t emu_ngens;

/* The plugin library as one release loaded it. */
struct emu_plugin {
    void *lib;
    const struct emu_gen *gen;
    int version;     /* the interface found: 2..6 */
    const void *sym; /* the structure behind ncclTunerPlugin_v<version> */
};

/* dlopen(path, RTLD_LAZY | RTLD_LOCAL) and dlsym of ncclTunerPlugin_v<gen->newest> down to _v2,
 * as src/plugin/tuner.cc does; then checks the name field. 0, or -1 with a message printed. */
int emu_load(struct emu_plugin *p, const char *path, const struct emu_gen *gen);
void emu_unload(struct emu_plugin *p);

/* One communicator holding the plugin's context. */
struct emu_comm {
    const struct emu_plugin *p;
    void *ctx;
    size_t nodes, ranks;
};

/* The plugin's init with NCCL's arguments for this release; returns what init returned. The
 * v5/v6 model constants handed in are checked to come back unchanged (-1 when not). */
int emu_comm_init(struct emu_comm *c, const struct emu_plugin *p, size_t nodes, size_t ranks);
/* The plugin's destroy (finalize); returns what it returned. */
int emu_comm_destroy(struct emu_comm *c);

/* One collective call. Before: `table` holds NCCL's costs (emu_costs), n_channels what NCCL
 * passes (0, or a sentinel), algo/proto -1, collnet/nvls the v2 support flags. After: what the
 * plugin left. `rc` is the plugin's return value. */
struct emu_call {
    int coll;
    size_t bytes;
    float table[EMU_ALGOS][EMU_PROTOS];
    int n_channels;
    int algo, proto;
    int collnet, nvls;
    int rc;
};
void emu_call(const struct emu_comm *c, struct emu_call *call);

/* NCCL-like predicted times (µs) for one call on H100-class nodes with NVSwitch and one NIC
 * per GPU: -1 for what NCCL rules out there (CollNet without a CollNet plugin, NVLS LL/LL128,
 * NVLS across nodes without CollNet, NVLS tree on one node, tree for non-allreduce, PAT with
 * several ranks per node). `ll128` 0 marks LL128 off, as NCCL does on PCIe-only machines.
 * Rows from `num_algo` on stand for the memory after a 6-algorithm table (NCCL up to 2.22):
 * they hold 123, which the plugin must neither take for a cost nor write. */
void emu_costs(int coll, size_t nodes, size_t ranks, size_t bytes, int num_algo, int ll128,
               float table[EMU_ALGOS][EMU_PROTOS]);

/* What topoGetAlgoInfo picks from a table: the first strictly smallest entry >= 0, in
 * algorithm-major order. 0, or -1 when nothing is available. */
int emu_pick(const float table[EMU_ALGOS][EMU_PROTOS], int num_algo, int *algo, int *proto);

/* The version ncclGetVersion reports to the plugin (this program exports ncclGetVersion, as
 * libnccl does); 0 makes it fail, as if no NCCL version could be found. */
extern int emu_nccl_version;

/* The logger emu_comm_init hands to the plugin: emu_log unless a scenario swaps it. */
extern tuner_nccl_logger emu_logger;

/* The logger handed to the plugin, as NCCL's ncclDebugLog with every level and subsystem on:
 * it records per thread what the plugin said. */
void emu_log(tuner_nccl_log_level level, unsigned long subsys, const char *where, int line,
             const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#define EMU_LOG_KEEP 64
struct emu_logged {
    int warn, info, tuning, other;
    unsigned long bad_flags; /* a TUNING-level line without the TUNING bit, a WARN without ALL */
    int n;
    char line[EMU_LOG_KEEP][512]; /* the first EMU_LOG_KEEP messages, "W: ..." or "I: ..." */
};
extern _Thread_local struct emu_logged emu_logged;
void emu_log_reset(void);
/* How many recorded messages contain `needle`. */
int emu_log_count(const char *needle);

#endif
