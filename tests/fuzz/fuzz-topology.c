/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the topology readers: format detection, the NCCL
 * topology XML reader (ours, over libxml2), hardware specs and topology JSON.
 * Inputs that reach hwloc's own XML importer are skipped: hwloc is fuzzed by
 * its maintainers, not here.
 */
#include "topo/topo.h"
#include "util/log.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    if (!quiet) {
        util_log_init("fuzz", UTIL_LOG_QUIET);
        quiet = 1;
    }
    if (memmem(data, size, "<topology", 9))
        return 0;
    struct topo t;
    topo_init(&t);
    topo_load_buffer(&t, "fuzz-input", (const char *)data, size);
    topo_release(&t);
    return 0;
}
