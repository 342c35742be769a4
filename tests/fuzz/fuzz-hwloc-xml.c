/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for hwloc XML exports as topotune reads them: the libxml2
 * parse with its guards (DOCTYPE, entities, sizes, NUL bytes), the copy handed
 * to hwloc's importer, and the reader over what hwloc built (PCI tree, GPUs,
 * NIC kinds, NVLink distances, the node class). A DOCTYPE without a system id
 * once crashed inside hwloc's import, so hwloc is fuzzed here through our entry
 * point. Other inputs are fuzz-topology's.
 */
#include "topo/topo.h"
#include "util/log.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    if (!quiet) {
        util_log_init("fuzz", UTIL_LOG_QUIET);
        setenv("HWLOC_HIDE_ERRORS", "2", 1);
        quiet = 1;
    }
    if (!memmem(data, size, "<topology", 9))
        return 0;
    struct topo t;
    topo_init(&t);
    if (topo_load_buffer(&t, "fuzz-input", (const char *)data, size) == 0) {
        json_t *j = topo_to_json(&t); /* the writer over whatever was read */
        json_decref(j);
    }
    topo_release(&t);
    return 0;
}
