/* SPDX-License-Identifier: MIT */
/* What the tuner harness's scenario files share: checks, tables on disk, the expected rows. */
#ifndef TESTS_TUNER_HARNESS_H
#define TESTS_TUNER_HARNESS_H

#include "nccl-emu.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

extern const char *harness_plugin; /* path of libnccl-tuner-topotune.so */
extern atomic_int harness_failures;

void harness_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond))                                                                               \
            harness_fail(__FILE__, __LINE__, __VA_ARGS__);                                         \
    } while (0)

/* What NCCL passes as *nChannels is 0; the harness passes this instead, so that any write
 * the plugin makes shows. */
#define SENTINEL_CHANNELS (-7)

/* Writes `len` bytes to a new file in the scratch directory; returns its path (static storage
 * per name, removed at exit). */
const char *table_file(const char *name, const char *text, size_t len);
/* Sets (value) or unsets (NULL) an environment variable. */
void env_set(const char *name, const char *value);
/* The plugin's environment for the main table: table path, class, NCCL 2.28.9. */
void env_main_table(void);

/* A row of the main table as the test expects it to be read (the oracle). */
struct row {
    int coll;
    uint64_t lo, hi;
    unsigned nodes, ranks; /* 0 = any */
    int algo, proto, channels;
};
extern const char main_table[];
extern const struct row main_rows[];
extern const size_t main_nrows;
#define MAIN_CLASS "hgx-h100-test"

/* Every size the sweeps call with: 0, each power of two to 2^40 and its neighbours, SIZE_MAX. */
extern size_t sweep_sizes[];
extern size_t sweep_nsizes;

enum outcome { OUT_MISS, OUT_UNAVAILABLE, OUT_HIT };

/* One call checked against the oracle: a hit makes the row's pair NCCL's pick and sets the
 * channels only when the row gives them; a miss or an unavailable pair leaves the cost table
 * and *nChannels byte for byte as they were. v3 and later only. */
enum outcome check_call(const struct emu_comm *c, const struct row *rows, size_t nrows, int coll,
                        size_t bytes, int ll128);
/* check_call for every collective and sweep size; counts[] tallies the outcomes. */
void check_sweep(const struct emu_comm *c, const struct row *rows, size_t nrows, int ll128,
                 int counts[3]);

/* The plugin as every release from 2.21 loads it; each is loaded once per scenario. */
extern struct emu_plugin loaded[];

/* Scenarios in harness-tables.c: a table the plugin must refuse, one warning, NCCL's defaults. */
int scenario_mismatch(void);
int scenario_malformed(void);
/* Scenarios in harness-chain.c: the next tuner, the node's kind, the channel clamp. */
int scenario_chain(const char *next_path, const char *next_v2_path, const char *cycle_path);
int scenario_chain_unsupported(const char *next_path);
/* The application's own tuner (STATIC_PLUGIN) global before the plugin is loaded, as one linked
 * into the program with its symbols exported: the plugin must chain to it, not take it for
 * itself. main opens next_path RTLD_GLOBAL before loading the plugin. */
int scenario_chain_static(const char *next_path);
int scenario_node_kind(void);
int scenario_digest(void);
int scenario_channels(void);

/* Every release's init on a 1 x 8 communicator must warn exactly once (with `needle` in the
 * warning) and then leave every call untouched. */
void expect_defaults(const char *what, const char *needle);
/* ... and this one must apply the main table without a warning. */
void expect_applied(const char *what);

#endif
