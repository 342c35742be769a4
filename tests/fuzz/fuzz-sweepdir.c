/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for a sweep directory as gen reads it: the input's first
 * line is sweep.json, the rest results.jsonl. What passes the checks goes on
 * into gen's selection, which must then never crash on it.
 */
#include "gen/gen.h"
#include "sweep/sweep.h"
#include "util/jsonl.h"
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
    const char *text = (const char *)data, *nl = memchr(text, '\n', size);
    size_t head = nl ? (size_t)(nl - text) : size, good;
    json_t *meta = json_loadb(text, head, JSON_REJECT_DUPLICATES, NULL);
    json_t *runs = nl ? util_jsonl_parse("fuzz", nl + 1, size - head - 1, &good) : json_array();
    int ok = meta && runs && sweep_meta_check(meta, "fuzz") == 0;
    size_t i;
    json_t *r;
    json_array_foreach(runs, i, r)
        ok = ok && sweep_result_check(r, "fuzz", i + 1) == 0;
    if (ok) {
        json_t *sweeps = json_array();
        json_object_set_new(meta, "dir", json_string("fuzz"));
        json_array_append(sweeps, meta);
        json_decref(gen_select(sweeps, runs, json_string_value(json_object_get(meta, "class"))));
        json_decref(sweeps);
    }
    json_decref(meta);
    json_decref(runs);
    return 0;
}
