/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for NCCL COLL log text as `topotune workload --from-nccl-log` reads it:
 * interleaved, truncated and hostile lines (numbers past their range, unknown datatypes, ranks
 * and counts whose product overflows), and the document built from what parsed.
 */
#include "util/log.h"
#include "workload/workload.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        util_log_init("fuzz", UTIL_LOG_QUIET);
        ready = 1;
    }
    json_t *doc = workload_from_nccl_text((const char *)data, size);
    char *text = doc ? json_dumps(doc, 0) : NULL;
    free(text);
    json_decref(doc);
    return 0;
}
